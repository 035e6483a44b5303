-- @sqlite
-- The scheduler's per-sitemap state (sqlite): what the console's table shows (the kinds of
-- @postgres
-- The scheduler's per-sitemap state (postgres): what the console's table shows (the kinds of
-- @end
-- entries, the URL count of the last read) and the adaptive schedule (the current period and
-- the failures in a row). Only adds columns, so it is independent of the other migrations.

ALTER TABLE sitemaps ADD COLUMN kinds TEXT;
-- @sqlite
ALTER TABLE sitemaps ADD COLUMN url_count INTEGER;
ALTER TABLE sitemaps ADD COLUMN fetch_interval INTEGER;
ALTER TABLE sitemaps ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
-- @postgres
ALTER TABLE sitemaps ADD COLUMN url_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN fetch_interval BIGINT;
ALTER TABLE sitemaps ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
-- @end
