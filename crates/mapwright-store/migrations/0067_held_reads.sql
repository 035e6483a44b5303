-- The last attempt to read a sitemap that the outbound gate held back: when, and the gate's
-- words. A held read records no download, so without these the sitemap's page could say only
-- "next read in a minute", never why. The next real read clears both.
-- @sqlite
ALTER TABLE sitemaps ADD COLUMN held_at INTEGER;
-- @postgres
ALTER TABLE sitemaps ADD COLUMN held_at BIGINT;
-- @end
ALTER TABLE sitemaps ADD COLUMN held_reason TEXT;
