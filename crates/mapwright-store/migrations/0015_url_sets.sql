-- A download's URLs are compared with the sitemap's previous read while they are read, not in
-- the merge: only what is new, changed or gone is staged, and staged as typed rows in bulk
-- @sqlite
-- (the JSON batches of migration 0012 go). Adds tables, and remakes the stages' ones.
-- @postgres
-- (`COPY`; the JSON batches of migration 0012 go). Only adds tables, and drops the old stage's
-- table.
-- @end
--
-- The staged rows of a download: kind 0 a URL the sitemap did not list, 1 one whose lastmod,
-- @sqlite
-- changefreq or priority changed (an unchanged URL is not staged at all). A WITHOUT ROWID table
-- keyed by (stage, seq): the stage's rows are one range, in reading order, and go in one range
-- delete. No foreign key: a stage's rows are deleted with the stage by the store (see
-- `ingest.rs`), and one check per staged row would cost as much as the row.
-- @postgres
-- changefreq or priority changed (an unchanged URL is not staged at all). UNLOGGED like the
-- stages (a crash empties it; the merge counts the rows and refuses a stage that lost some).
-- No foreign key: a stage's rows are deleted with the stage by the store (see `ingest.rs`),
-- and a referential check per staged row would cost as much as the row.
-- @end
--! SQLite's url_stages is made again as in 0012, with AUTOINCREMENT (a rebuild declares the
--! table whole); staged_urls is alike in shape to 0012's staged_url_batches.
DROP TABLE staged_url_batches;
-- @sqlite
-- Stages get ids never used before (AUTOINCREMENT): a dead attempt's stage must never be taken
-- for a later one that got its id back, and staged rows older than every stage left are known
-- by their stage's id. Stages live seconds: those in flight now are dropped (their merge fails
-- with StageLost and the download is read again).
DROP TABLE url_stages;
CREATE TABLE url_stages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sitemap_id INTEGER NOT NULL REFERENCES sitemaps(id) ON DELETE CASCADE,
    worker     TEXT    NOT NULL,
    started_at INTEGER NOT NULL
);
CREATE INDEX url_stages_sitemap ON url_stages(sitemap_id);
CREATE INDEX url_stages_started ON url_stages(started_at);
CREATE TABLE staged_urls (
    stage_id   INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    kind       INTEGER NOT NULL,
    loc        TEXT    NOT NULL,
    loc_hash   BLOB    NOT NULL,
-- @postgres
CREATE UNLOGGED TABLE staged_urls (
    stage_id   BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    kind       SMALLINT NOT NULL,
    loc        TEXT   NOT NULL,
    loc_hash   BYTEA  NOT NULL,
-- @end
    lastmod    TEXT,
    changefreq TEXT,
-- @sqlite
    priority   REAL,
    PRIMARY KEY (stage_id, seq)
) WITHOUT ROWID;
-- @postgres
    priority   DOUBLE PRECISION
);
CREATE INDEX staged_urls_stage ON staged_urls (stage_id, seq);
-- @end

-- The URL set of a sitemap's last merged read, compactly: for each URL its key (`loc_hash`,
-- 16 bytes) and a 64-bit hash of what the sitemap said of it (lastmod, changefreq, priority),
-- 24 bytes an entry, at most 50,000 entries (the protocol's limit, which the reader applies).
-- A download loads it once, to tell what changed while it reads. A cache of the sitemap's
-- links: whatever changes them outside a merge deletes the row, and a read without one
-- rebuilds it from `sitemap_urls` and `urls`.
CREATE TABLE sitemap_url_sets (
-- @sqlite
    sitemap_id INTEGER PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
    entries    INTEGER NOT NULL,
    body       BLOB    NOT NULL
);
-- @postgres
    sitemap_id BIGINT PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
    entries    BIGINT NOT NULL,
    body       BYTEA  NOT NULL
);
ALTER TABLE sitemap_url_sets ALTER COLUMN body SET STORAGE EXTERNAL;
-- @end
