-- lastmod you can trust (issue 34): per sitemap, what its last read's lastmod values look like,
-- counted while the read streamed (never by a scan of the stored URLs): entries read, those with a
-- lastmod, date-only values, dates in the future, values within an hour of the download (a file
-- that stamps its generation time), and the most common value with its count. One row per
-- sitemap, replaced by each read that parsed the file: bounded.
CREATE TABLE lastmod_trust (
-- @sqlite
    sitemap_id   INTEGER PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
    read_at      INTEGER NOT NULL,
    entries      INTEGER NOT NULL,
    with_lastmod INTEGER NOT NULL,
    date_only    INTEGER NOT NULL,
    future       INTEGER NOT NULL,
    near_read    INTEGER NOT NULL,
-- @postgres
    sitemap_id   BIGINT  PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
    read_at      BIGINT  NOT NULL,
    entries      BIGINT  NOT NULL,
    with_lastmod BIGINT  NOT NULL,
    date_only    BIGINT  NOT NULL,
    future       BIGINT  NOT NULL,
    near_read    BIGINT  NOT NULL,
-- @end
    top_value    TEXT,
-- @sqlite
    top_count    INTEGER NOT NULL
-- @postgres
    top_count    BIGINT  NOT NULL
-- @end
);
