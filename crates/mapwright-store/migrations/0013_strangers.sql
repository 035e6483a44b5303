-- Issue 24: caps strangers share are kept per network, limits hold across processes, and the
-- health check writes.
--
-- A pending sign-up is one per address *and requesting network* (IPv4 /24, IPv6 /48), with
-- the client (IPv4 address, IPv6 /64) that asked: a stranger's requests for someone's address
-- replace only the stranger's own link, never the owner's, and the caps on pending sign-ups are
-- counted per client and per network as well as in all. Rows from before this migration have
-- an empty network and client.
-- @sqlite
CREATE TABLE signups_by_network (
    email         TEXT    NOT NULL,
    network       TEXT    NOT NULL,
    client        TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    token_hash    TEXT    NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    PRIMARY KEY (email, network)
);
INSERT INTO signups_by_network (email, network, client, password_hash, token_hash, created_at, expires_at)
    SELECT email, '', '', password_hash, token_hash, created_at, expires_at FROM signups;
DROP TABLE signups;
ALTER TABLE signups_by_network RENAME TO signups;
CREATE INDEX signups_expires ON signups(expires_at);
-- @postgres
ALTER TABLE signups ADD COLUMN network TEXT NOT NULL DEFAULT '';
ALTER TABLE signups ADD COLUMN client TEXT NOT NULL DEFAULT '';
ALTER TABLE signups DROP CONSTRAINT signups_pkey;
ALTER TABLE signups ADD PRIMARY KEY (email, network);
-- @end
CREATE INDEX signups_network ON signups(network, expires_at);
CREATE INDEX signups_client ON signups(client, expires_at);

-- Fixed-window limits that must hold across server processes (sign-up and sign-in attempts,
-- sign-up mail, pings): one row per limit and key, its window's start and the events in it.
CREATE TABLE rate_windows (
-- @sqlite
    scope        TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    window_start INTEGER NOT NULL,
    hits         INTEGER NOT NULL,
-- @postgres
    scope        TEXT   NOT NULL,
    key          TEXT   NOT NULL,
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
-- @end
    PRIMARY KEY (scope, key)
);
CREATE INDEX rate_windows_start ON rate_windows(window_start);

-- The health check's write probe: one row, rewritten by every probe.
CREATE TABLE health_probe (
-- @sqlite
    id         INTEGER PRIMARY KEY,
    written_at INTEGER NOT NULL
-- @postgres
    id         BIGINT PRIMARY KEY,
    written_at BIGINT NOT NULL
-- @end
);
