-- The web console's failing-URLs report (SQLite): the outcome of the last live check of each
-- URL (a failure has a rule), and when each site's URLs were last checked. Only adds tables.

CREATE TABLE url_checks (
    url_id     INTEGER PRIMARY KEY REFERENCES urls(id) ON DELETE CASCADE,
    site_id    INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    checked_at INTEGER NOT NULL,
    status     INTEGER,
    rule       TEXT,
    message    TEXT
);
CREATE INDEX url_checks_site ON url_checks(site_id, url_id) WHERE rule IS NOT NULL;

CREATE TABLE site_url_checks (
    site_id    INTEGER PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    checked_at INTEGER NOT NULL
);
