-- Sign-ups waiting for the confirmation of their address. The account is made only once the
-- link mailed to the address is followed (with the password given at sign-up), so sign-up
-- answers the same for a taken address and a free one: it reveals no account. One row per
-- address; a new request replaces the old link; expired rows go with the retention task.
CREATE TABLE signups (
    email         TEXT    PRIMARY KEY,
    password_hash TEXT    NOT NULL,
    token_hash    TEXT    NOT NULL UNIQUE,
-- @sqlite
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
-- @postgres
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
-- @end
);
CREATE INDEX signups_expires ON signups(expires_at);

-- A user's sessions are capped (the oldest go first): counted per user.
CREATE INDEX sessions_user ON sessions(user_id, id);
