-- Webhooks (issue 23): a site's endpoints, the deliveries waiting to be sent (a job queue that
-- every serve process shares: a lease like the fetch queue's), and the log of attempts.
-- AUTOINCREMENT: an endpoint's id is in URLs and a delivery's id is what a receiver dedupes
-- on, so neither is ever reused.
CREATE TABLE webhooks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id    INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    url        TEXT    NOT NULL,
    -- The HMAC key: kept as given, since signing needs it (shown once, at creation).
    secret     TEXT    NOT NULL,
    -- Comma-separated event names.
    events     TEXT    NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_site ON webhooks(site_id);

-- A delivery waiting for its next attempt; deleted once delivered or given up (the attempts
-- stay in the log).
CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id       INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event            TEXT    NOT NULL,
    payload          TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_expires_at INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id);

-- One row per attempt (and per delivery dropped at the cap), the newest few per endpoint kept.
CREATE TABLE webhook_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id  INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    delivery_id INTEGER NOT NULL,
    event       TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'failed', 'dropped'))
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts(webhook_id, id);
