-- The console's pictures of a site over time (SQLite): one row per run of the failing-URLs
-- checker, with the site's live URLs and failing URLs at that moment. Only adds a table.

CREATE TABLE site_snapshots (
    site_id      INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    taken_at     INTEGER NOT NULL,
    live_urls    INTEGER NOT NULL,
    failing_urls INTEGER NOT NULL,
    PRIMARY KEY (site_id, taken_at)
);
