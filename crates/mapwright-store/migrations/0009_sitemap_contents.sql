-- @sqlite
-- What the API's sitemap resource reports that a Search Console client expects (sqlite): the
-- @postgres
-- What the API's sitemap resource reports that a Search Console client expects (postgres): the
-- @end
-- format of the last read (urlset, sitemapindex, rss, atom, text), its URL entries by content
-- type (all, with images, with videos, with news), and when the sitemap was last submitted
-- (added, resubmitted or pinged; NULL: never since its first submission). Only adds columns.

ALTER TABLE sitemaps ADD COLUMN format TEXT;
-- @sqlite
ALTER TABLE sitemaps ADD COLUMN web_count INTEGER;
ALTER TABLE sitemaps ADD COLUMN image_count INTEGER;
ALTER TABLE sitemaps ADD COLUMN video_count INTEGER;
ALTER TABLE sitemaps ADD COLUMN news_count INTEGER;
ALTER TABLE sitemaps ADD COLUMN last_submitted_at INTEGER;
-- @postgres
ALTER TABLE sitemaps ADD COLUMN web_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN image_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN video_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN news_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN last_submitted_at BIGINT;
-- @end
