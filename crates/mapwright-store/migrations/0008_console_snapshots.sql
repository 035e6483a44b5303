-- @sqlite
-- The console's pictures of a site over time (SQLite): one row per run of the failing-URLs
-- @postgres
-- The console's pictures of a site over time (PostgreSQL): one row per run of the failing-URLs
-- @end
-- checker, with the site's live URLs and failing URLs at that moment. Only adds a table.

CREATE TABLE site_snapshots (
-- @sqlite
    site_id      INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    taken_at     INTEGER NOT NULL,
    live_urls    INTEGER NOT NULL,
    failing_urls INTEGER NOT NULL,
-- @postgres
    site_id      BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    taken_at     BIGINT NOT NULL,
    live_urls    BIGINT NOT NULL,
    failing_urls BIGINT NOT NULL,
-- @end
    PRIMARY KEY (site_id, taken_at)
);
