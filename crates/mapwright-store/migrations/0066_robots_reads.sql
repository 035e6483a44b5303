-- The last read of a verified site's robots.txt for the sitemaps it names: when, and why it
-- could not be read (NULL: read). So the site's page says "could not be read, and why" instead
-- of "names no sitemap" when the file was never read.
-- @sqlite
ALTER TABLE sites ADD COLUMN robots_read_at INTEGER;
-- @postgres
ALTER TABLE sites ADD COLUMN robots_read_at BIGINT;
-- @end
ALTER TABLE sites ADD COLUMN robots_error TEXT;
