-- Domain properties (issue 23): a user claims a DNS name (`example.com`) and proves it with a
-- TXT record `mapwright-site-verification=<token>` at that name. Once verified it covers every
-- origin under it (http and https, any port, the name and its subdomains) for the sites that
-- user owns. One claim per user and name: two users may both claim a name, only the one whose
-- token is published verifies. AUTOINCREMENT: ids are never reused.
CREATE TABLE domain_properties (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id            INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    domain             TEXT    NOT NULL,
    verification_token TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    verified_at        INTEGER,
    last_checked_at    INTEGER,
    UNIQUE (user_id, domain)
);
CREATE INDEX domain_properties_checked ON domain_properties(last_checked_at);
