-- @sqlite
-- The sitemap life cycle and index roll-up (sqlite), issue 12 items 4 and 5.
-- @postgres
-- The sitemap life cycle and index roll-up (postgres), issue 12 items 4 and 5.
-- @end
-- errors/warnings: the counts of the last read of content (a 304 keeps them, as it stands for
-- that content). removed_by_user: a child the user removed stays removed while its index lists
-- it. is_index and rollup_*: the worst status, summed counts and distinct URLs of an index and
-- its live children (for any other sitemap its own), kept by the store after every change.
-- Only adds columns and an index, so it is independent of the other migrations.

-- @sqlite
ALTER TABLE sitemaps ADD COLUMN errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN warnings INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN removed_by_user INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN is_index INTEGER NOT NULL DEFAULT 0;
-- @postgres
ALTER TABLE sitemaps ADD COLUMN errors BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN warnings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN removed_by_user BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sitemaps ADD COLUMN is_index BOOLEAN NOT NULL DEFAULT FALSE;
-- @end
--! The roll-up columns below are alike in shape to the counts above: other columns.
ALTER TABLE sitemaps ADD COLUMN rollup_status TEXT;
-- @sqlite
ALTER TABLE sitemaps ADD COLUMN rollup_errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN rollup_warnings INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN rollup_urls INTEGER NOT NULL DEFAULT 0;
-- @postgres
ALTER TABLE sitemaps ADD COLUMN rollup_errors BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN rollup_warnings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sitemaps ADD COLUMN rollup_urls BIGINT NOT NULL DEFAULT 0;
-- @end
CREATE INDEX sitemaps_parent ON sitemaps(parent_id);

-- Existing rows: the counts and verdict of their last read of content, their own URLs.
UPDATE sitemaps SET
    errors = COALESCE((SELECT d.error_count FROM downloads d WHERE d.sitemap_id = sitemaps.id
        AND d.status <> 'unchanged' ORDER BY d.downloaded_at DESC, d.id DESC LIMIT 1), 0),
    warnings = COALESCE((SELECT d.warning_count FROM downloads d WHERE d.sitemap_id = sitemaps.id
        AND d.status <> 'unchanged' ORDER BY d.downloaded_at DESC, d.id DESC LIMIT 1), 0),
    status = CASE WHEN status = 'unchanged' THEN (SELECT d.status FROM downloads d
        WHERE d.sitemap_id = sitemaps.id AND d.status <> 'unchanged'
        ORDER BY d.downloaded_at DESC, d.id DESC LIMIT 1) ELSE status END,
-- @sqlite
    is_index = CASE WHEN kinds = 'index' THEN 1 ELSE 0 END,
-- @postgres
    is_index = CASE WHEN kinds = 'index' THEN TRUE ELSE FALSE END,
-- @end
    rollup_urls = (SELECT COUNT(*) FROM sitemap_urls su WHERE su.sitemap_id = sitemaps.id);
UPDATE sitemaps SET rollup_status = status, rollup_errors = errors, rollup_warnings = warnings
    WHERE removed_at IS NULL;
