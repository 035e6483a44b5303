-- The web console's failing-URLs report (PostgreSQL): the outcome of the last live check of
-- each URL (a failure has a rule), and when each site's URLs were last checked. Only adds tables.

CREATE TABLE url_checks (
    url_id     BIGINT PRIMARY KEY REFERENCES urls(id) ON DELETE CASCADE,
    site_id    BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    checked_at BIGINT NOT NULL,
    status     BIGINT,
    rule       TEXT,
    message    TEXT
);
CREATE INDEX url_checks_site ON url_checks(site_id, url_id) WHERE rule IS NOT NULL;

CREATE TABLE site_url_checks (
    site_id    BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    checked_at BIGINT NOT NULL
);
