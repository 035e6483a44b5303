-- Several users per site (issue 23): every user who may see a site is a member with a role,
-- `owner` (everything) or `reader` (reads only). The user who added a site is its first owner;
-- `sites.owner_id` stays the account the site counts against (quotas, the fetch queue's turns)
-- and passes to another owner if that user leaves. AUTOINCREMENT: ids are never reused.
CREATE TABLE site_members (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id  INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role     TEXT    NOT NULL CHECK (role IN ('owner', 'reader')),
    added_at INTEGER NOT NULL,
    UNIQUE (site_id, user_id)
);
CREATE INDEX site_members_user ON site_members(user_id, site_id);
INSERT INTO site_members (site_id, user_id, role, added_at) SELECT id, owner_id, 'owner', created_at FROM sites;

-- An owner's invitation of an address: the link's token hashed, single-use (deleted when
-- accepted), valid until `expires_at`; one per site and address.
CREATE TABLE site_invitations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id    INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    email      TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('owner', 'reader')),
    token_hash TEXT    NOT NULL UNIQUE,
    invited_by INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    UNIQUE (site_id, email)
);
