-- The console's pictures of a site over time (PostgreSQL): one row per run of the failing-URLs
-- checker, with the site's live URLs and failing URLs at that moment. Only adds a table.

CREATE TABLE site_snapshots (
    site_id      BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    taken_at     BIGINT NOT NULL,
    live_urls    BIGINT NOT NULL,
    failing_urls BIGINT NOT NULL,
    PRIMARY KEY (site_id, taken_at)
);
