-- @sqlite
-- Failing-URL check runs (sqlite): one row per site, the run going or the last one. A run visits
-- @postgres
-- Failing-URL check runs (postgres): one row per site, the run going or the last one. A run visits
-- @end
-- every live URL of its site in URL id order; `after_url_id` is how far it got (URLs up to it
-- are checked and recorded in the same transaction), so a run cut short by a restart resumes
-- there. The run is claimed like a sitemap job: a lease with an expiry, renewed as the run
-- writes, so one run per site (and per origin) holds across processes and a dead process's
-- run is taken over once its lease ends. `site_url_checks` (when a site's last partial run
-- ended) gives way to `last_complete_at`.

CREATE TABLE check_runs (
-- @sqlite
    site_id          INTEGER PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
-- @postgres
    site_id          BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
-- @end
    state            TEXT    NOT NULL CHECK (state IN ('running', 'done', 'failed')),
-- @sqlite
    requested_by     INTEGER,
    started_at       INTEGER NOT NULL,
    finished_at      INTEGER,
    after_url_id     INTEGER NOT NULL DEFAULT 0,
    checked          INTEGER NOT NULL DEFAULT 0,
    failing          INTEGER NOT NULL DEFAULT 0,
    total            INTEGER NOT NULL DEFAULT 0,
-- @postgres
    requested_by     BIGINT,
    started_at       BIGINT NOT NULL,
    finished_at      BIGINT,
    after_url_id     BIGINT NOT NULL DEFAULT 0,
    checked          BIGINT NOT NULL DEFAULT 0,
    failing          BIGINT NOT NULL DEFAULT 0,
    total            BIGINT NOT NULL DEFAULT 0,
-- @end
    error            TEXT,
    lease_owner      TEXT,
-- @sqlite
    lease_expires_at INTEGER,
    last_complete_at INTEGER
-- @postgres
    lease_expires_at BIGINT,
    last_complete_at BIGINT
-- @end
);
CREATE INDEX check_runs_user ON check_runs(requested_by) WHERE state = 'running';

-- A run's pages (keyset by URL id within the site) and its count of live URLs.
CREATE INDEX urls_site_live_id ON urls(site_id, id) WHERE removed_at IS NULL;

DROP TABLE site_url_checks;
