-- E-mail alerts on a sitemap's status getting worse (issue 23). One row per member of a site
-- who chose (`enabled`; NULL: the role's default, on for owners, off for readers) or was
-- mailed: `token` is the unsubscribe link's (random, 256 bits; kept as it is, not hashed, so
-- every mail carries the same working link: it can only switch this member's alerts for this
-- site), `last_sent_at` the last alert mail, which holds the limit of one a day across
-- processes.
CREATE TABLE alert_settings (
-- @sqlite
    site_id      INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    enabled      INTEGER,
-- @postgres
    site_id      BIGINT  NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    user_id      BIGINT  NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    enabled      BOOLEAN,
-- @end
    token        TEXT    NOT NULL UNIQUE,
-- @sqlite
    last_sent_at INTEGER,
-- @postgres
    last_sent_at BIGINT,
-- @end
    PRIMARY KEY (site_id, user_id)
);

-- The last status each sitemap's alerts were judged on (its roll-up: its own status, or an
-- index's over its tree): a read compares with it, so a worsening is told once, whichever
-- process made the read. Filled from the current verdicts, so an upgrade sends nothing old.
CREATE TABLE alert_marks (
-- @sqlite
    sitemap_id INTEGER PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
-- @postgres
    sitemap_id BIGINT  PRIMARY KEY REFERENCES sitemaps(id) ON DELETE CASCADE,
-- @end
    status     TEXT    NOT NULL
);
INSERT INTO alert_marks (sitemap_id, status)
    SELECT id, rollup_status FROM sitemaps
    WHERE removed_at IS NULL AND rollup_status IN ('ok', 'warnings', 'errors', 'failed');
