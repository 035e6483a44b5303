-- Issue 34: account recovery. The links mailed for an account (a password reset to its address,
-- a change of address to the new one): single use, short-lived, stored as the SHA-256 of their
-- token like sessions. `new_email` is the address a change moves the account to (NULL for a
-- reset). A user keeps a few of each purpose; the account's deletion takes them along.
CREATE TABLE account_links (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    purpose    TEXT    NOT NULL CHECK (purpose IN ('reset', 'email')),
    new_email  TEXT,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX account_links_user ON account_links(user_id, purpose);
