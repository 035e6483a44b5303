-- A download's URLs are compared with the sitemap's previous read while they are read, not in
-- the merge: only what is new, changed or gone is staged, and staged as typed rows in bulk
-- (`COPY`; the JSON batches of migration 0012 go). Only adds tables, and drops the old stage's
-- table.
--
-- The staged rows of a download: kind 0 a URL the sitemap did not list, 1 one whose lastmod,
-- changefreq or priority changed (an unchanged URL is not staged at all). UNLOGGED like the
-- stages (a crash empties it; the merge counts the rows and refuses a stage that lost some).
-- No foreign key: a stage's rows are deleted with the stage by the store (see `ingest.rs`),
-- and a referential check per staged row would cost as much as the row.
DROP TABLE staged_url_batches;
CREATE UNLOGGED TABLE staged_urls (
    stage_id   BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    kind       SMALLINT NOT NULL,
    loc        TEXT   NOT NULL,
    loc_hash   BYTEA  NOT NULL,
    lastmod    TEXT,
    changefreq TEXT,
    priority   DOUBLE PRECISION
);
CREATE INDEX staged_urls_stage ON staged_urls (stage_id, seq);

-- The URL set of a sitemap's last merged read, compactly: for each URL its key (`loc_hash`,
-- 16 bytes) and a 64-bit hash of what the sitemap said of it (lastmod, changefreq, priority),
-- 24 bytes an entry, at most 50,000 entries (the protocol's limit, which the reader applies).
-- A download loads it once, to tell what changed while it reads. A cache of the sitemap's
-- links: whatever changes them outside a merge deletes the row, and a read without one
-- rebuilds it from `sitemap_urls` and `urls`.
CREATE TABLE sitemap_url_sets (
    sitemap_id BIGINT PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
    entries    BIGINT NOT NULL,
    body       BYTEA  NOT NULL
);
ALTER TABLE sitemap_url_sets ALTER COLUMN body SET STORAGE EXTERNAL;
