-- The scheduler's per-sitemap state (postgres): what the console's table shows (the kinds of
-- entries, the URL count of the last read) and the adaptive schedule (the current period and
-- the failures in a row). Only adds columns, so it is independent of the other migrations.

ALTER TABLE sitemaps ADD COLUMN kinds TEXT;
ALTER TABLE sitemaps ADD COLUMN url_count BIGINT;
ALTER TABLE sitemaps ADD COLUMN fetch_interval BIGINT;
ALTER TABLE sitemaps ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
