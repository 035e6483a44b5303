-- What changed, said plainly (issue 34): a changed URL's diff row keeps what the sitemap said of
-- it before the read and what the read said (lastmod, changefreq, priority), read by the merge
-- before it rewrites the URL, so a diff shows old -> new even after later reads changed the URL
-- again. At most `MAX_DIFF_URLS` rows of each kind per diff, as before: bounded. `old_kept` tells
-- a kept "none" (the URL had no lastmod) from a row written before this migration (nothing kept).
-- @sqlite
ALTER TABLE read_diff_urls ADD COLUMN old_kept INTEGER NOT NULL DEFAULT 0;
-- @postgres
ALTER TABLE read_diff_urls ADD COLUMN old_kept BOOLEAN NOT NULL DEFAULT FALSE;
-- @end
ALTER TABLE read_diff_urls ADD COLUMN old_lastmod TEXT;
ALTER TABLE read_diff_urls ADD COLUMN old_changefreq TEXT;
-- @sqlite
ALTER TABLE read_diff_urls ADD COLUMN old_priority REAL;
-- @postgres
ALTER TABLE read_diff_urls ADD COLUMN old_priority DOUBLE PRECISION;
-- @end
ALTER TABLE read_diff_urls ADD COLUMN new_lastmod TEXT;
ALTER TABLE read_diff_urls ADD COLUMN new_changefreq TEXT;
-- @sqlite
ALTER TABLE read_diff_urls ADD COLUMN new_priority REAL;
-- @postgres
ALTER TABLE read_diff_urls ADD COLUMN new_priority DOUBLE PRECISION;
-- @end

-- The sitemap's first merged read: everything it lists is "added", which the console says in
-- one line instead of listing it.
-- @sqlite
ALTER TABLE read_diffs ADD COLUMN first_read INTEGER NOT NULL DEFAULT 0;
-- @postgres
ALTER TABLE read_diffs ADD COLUMN first_read BOOLEAN NOT NULL DEFAULT FALSE;
-- @end
