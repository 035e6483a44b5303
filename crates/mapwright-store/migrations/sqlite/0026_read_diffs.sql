-- Per-read diffs (issue 23): what each merged read of a sitemap changed in its URL list, written
-- by the merge in its own transaction (a read that fails before its merge commits stores none).
--
-- One row per merge: the counts of URLs added, removed and changed (exact), how many of each
-- are listed (at most 1,000 of each kind: a read that changed more says so), and the download
-- it belongs to, set when the download is stored (`complete`, right after the merge); a diff
-- whose download never came (the worker died between the two) is deleted by retention.
CREATE TABLE read_diffs (
    id             INTEGER PRIMARY KEY,
    sitemap_id     INTEGER NOT NULL REFERENCES sitemaps(id) ON DELETE CASCADE,
    download_id    INTEGER REFERENCES downloads(id) ON DELETE CASCADE,
    read_at        INTEGER NOT NULL,
    added          INTEGER NOT NULL,
    removed        INTEGER NOT NULL,
    changed        INTEGER NOT NULL,
    added_listed   INTEGER NOT NULL,
    removed_listed INTEGER NOT NULL,
    changed_listed INTEGER NOT NULL
);
CREATE UNIQUE INDEX read_diffs_download ON read_diffs(download_id);
CREATE INDEX read_diffs_sitemap ON read_diffs(sitemap_id, read_at);

-- The URLs a diff lists, by id, never a copy of the URL: kind 0 added, 1 changed, 2 removed. A
-- removed URL keeps its row (`removed_at` set) and retention keeps a URL row as long as a diff
-- names it, so a removed URL is still named by the diffs that list it.
CREATE TABLE read_diff_urls (
    diff_id INTEGER NOT NULL REFERENCES read_diffs(id) ON DELETE CASCADE,
    url_id  INTEGER NOT NULL REFERENCES urls(id) ON DELETE CASCADE,
    kind    INTEGER NOT NULL,
    PRIMARY KEY (diff_id, url_id)
) WITHOUT ROWID;
CREATE INDEX read_diff_urls_url ON read_diff_urls(url_id);
