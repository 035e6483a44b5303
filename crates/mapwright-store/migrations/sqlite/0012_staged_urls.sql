-- The URLs of a download under way are staged, not written to the live tables: they become
-- visible at once, in one short merge transaction, when the download completes, and a download
-- that dies (store error, lost connection, deadline, a killed process) leaves the previous URL
-- set as it was. Only adds tables and columns.
--
-- One stage per download attempt; its URLs arrive in batches, each one row holding the batch
-- as a JSON array (one row per 2,000 URLs: staging costs one short insert per batch, and the
-- merge expands the batches with json_each in SQL). Stages of dead attempts are discarded at
-- the next attempt on the sitemap, and any stage older than a day at any attempt.
CREATE TABLE url_stages (
    id         INTEGER PRIMARY KEY,
    sitemap_id INTEGER NOT NULL REFERENCES sitemaps(id) ON DELETE CASCADE,
    worker     TEXT    NOT NULL,
    started_at INTEGER NOT NULL
);
CREATE INDEX url_stages_sitemap ON url_stages(sitemap_id);
CREATE INDEX url_stages_started ON url_stages(started_at);

CREATE TABLE staged_url_batches (
    stage_id INTEGER NOT NULL REFERENCES url_stages(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    body     TEXT    NOT NULL,
    PRIMARY KEY (stage_id, seq)
);

-- When the sitemap's URLs were last merged: a URL's "last seen" is the latest of these over the
-- sitemaps that list it (an unchanged URL row is not rewritten at every read).
ALTER TABLE sitemaps ADD COLUMN urls_read_at INTEGER;
-- URLs of the sitemap's last merge refused by the site's quota: a refetch of the same bytes
-- skips the merge only when nothing was refused (room may have been made since).
ALTER TABLE sitemaps ADD COLUMN urls_refused INTEGER NOT NULL DEFAULT 0;
-- URLs were pushed (IndexNow) since the last sweep: the next merge that sweeps marks removed
-- those no sitemap lists, as a sweep over the whole site did before.
ALTER TABLE sites ADD COLUMN pushed_unswept INTEGER NOT NULL DEFAULT 0;
