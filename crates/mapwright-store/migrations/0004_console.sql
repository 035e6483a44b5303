-- @sqlite
-- The web console's failing-URLs report (SQLite): the outcome of the last live check of each
-- URL (a failure has a rule), and when each site's URLs were last checked. Only adds tables.
-- @postgres
-- The web console's failing-URLs report (PostgreSQL): the outcome of the last live check of
-- each URL (a failure has a rule), and when each site's URLs were last checked. Only adds tables.
-- @end

CREATE TABLE url_checks (
-- @sqlite
    url_id     INTEGER PRIMARY KEY REFERENCES urls(id) ON DELETE CASCADE,
    site_id    INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    checked_at INTEGER NOT NULL,
    status     INTEGER,
-- @postgres
    url_id     BIGINT PRIMARY KEY REFERENCES urls(id) ON DELETE CASCADE,
    site_id    BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    checked_at BIGINT NOT NULL,
    status     BIGINT,
-- @end
    rule       TEXT,
    message    TEXT
);
CREATE INDEX url_checks_site ON url_checks(site_id, url_id) WHERE rule IS NOT NULL;

CREATE TABLE site_url_checks (
-- @sqlite
    site_id    INTEGER PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    checked_at INTEGER NOT NULL
-- @postgres
    site_id    BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    checked_at BIGINT NOT NULL
-- @end
);
