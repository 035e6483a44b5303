-- @sqlite
-- no-transaction
-- Ids are never reused (issue 23): without AUTOINCREMENT, SQLite gives a new row the largest id
-- plus one, so after the newest site (sitemap, download, user, token) is deleted the next one
-- takes its id, and an old bookmark or export link opens another object. AUTOINCREMENT needs
-- the tables rebuilt (SQLite's twelve steps): foreign keys off outside the transaction, each
-- table copied into one declared with AUTOINCREMENT, the old one dropped and the new one
-- renamed, its indexes made again, the keys checked, then foreign keys on. sqlite_sequence
-- starts at each table's largest id, so ids deleted before this migration are not reused
-- either when they were below it. PostgreSQL's identity columns never reuse a value.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
--! Each `*_new` table restates its table as 0001 and later migrations left it, with
--! AUTOINCREMENT: SQLite's rebuild declares a table whole, and both texts are history.
CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    is_admin      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
INSERT INTO users_new (id, email, password_hash, is_admin, created_at) SELECT id, email, password_hash, is_admin, created_at FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));
CREATE TABLE api_tokens_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    token_hash   TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
INSERT INTO api_tokens_new (id, user_id, name, token_hash, created_at, last_used_at, revoked_at) SELECT id, user_id, name, token_hash, created_at, last_used_at, revoked_at FROM api_tokens;
DROP TABLE api_tokens;
ALTER TABLE api_tokens_new RENAME TO api_tokens;
CREATE INDEX api_tokens_user ON api_tokens(user_id);
CREATE TABLE sites_new (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    origin             TEXT    NOT NULL,
    verification_token TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    verified_at        INTEGER,
    last_checked_at    INTEGER, pushed_unswept INTEGER NOT NULL DEFAULT 0,
    UNIQUE (owner_id, origin)
);
INSERT INTO sites_new (id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at, pushed_unswept) SELECT id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at, pushed_unswept FROM sites;
DROP TABLE sites;
ALTER TABLE sites_new RENAME TO sites;
CREATE INDEX sites_origin ON sites(origin);
CREATE INDEX sites_unverified ON sites(owner_id) WHERE verified_at IS NULL;
CREATE TABLE sitemaps_new (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id            INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    url                TEXT    NOT NULL,
    source             TEXT    NOT NULL CHECK (source IN ('api', 'ping', 'robots', 'indexnow', 'index')),
    parent_id          INTEGER REFERENCES sitemaps(id) ON DELETE SET NULL,
    submitted_at       INTEGER NOT NULL,
    next_fetch_at      INTEGER NOT NULL,
    last_downloaded_at INTEGER,
    status             TEXT,
    http_status        INTEGER,
    etag               TEXT,
    last_modified      TEXT,
    content_hash       TEXT,
    index_lastmod      TEXT,
    removed_at         INTEGER,
    lease_owner        TEXT,
    lease_expires_at   INTEGER, kinds TEXT, url_count INTEGER, fetch_interval INTEGER, failures INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0, warnings INTEGER NOT NULL DEFAULT 0, removed_by_user INTEGER NOT NULL DEFAULT 0, is_index INTEGER NOT NULL DEFAULT 0, rollup_status TEXT, rollup_errors INTEGER NOT NULL DEFAULT 0, rollup_warnings INTEGER NOT NULL DEFAULT 0, rollup_urls INTEGER NOT NULL DEFAULT 0, format TEXT, web_count INTEGER, image_count INTEGER, video_count INTEGER, news_count INTEGER, last_submitted_at INTEGER, urls_read_at INTEGER, urls_refused INTEGER NOT NULL DEFAULT 0,
    UNIQUE (site_id, url)
);
INSERT INTO sitemaps_new (id, site_id, url, source, parent_id, submitted_at, next_fetch_at, last_downloaded_at, status, http_status, etag, last_modified, content_hash, index_lastmod, removed_at, lease_owner, lease_expires_at, kinds, url_count, fetch_interval, failures, errors, warnings, removed_by_user, is_index, rollup_status, rollup_errors, rollup_warnings, rollup_urls, format, web_count, image_count, video_count, news_count, last_submitted_at, urls_read_at, urls_refused) SELECT id, site_id, url, source, parent_id, submitted_at, next_fetch_at, last_downloaded_at, status, http_status, etag, last_modified, content_hash, index_lastmod, removed_at, lease_owner, lease_expires_at, kinds, url_count, fetch_interval, failures, errors, warnings, removed_by_user, is_index, rollup_status, rollup_errors, rollup_warnings, rollup_urls, format, web_count, image_count, video_count, news_count, last_submitted_at, urls_read_at, urls_refused FROM sitemaps;
DROP TABLE sitemaps;
ALTER TABLE sitemaps_new RENAME TO sitemaps;
CREATE INDEX sitemaps_due ON sitemaps(next_fetch_at) WHERE removed_at IS NULL;
CREATE INDEX sitemaps_url ON sitemaps(url);
CREATE INDEX sitemaps_parent ON sitemaps(parent_id);
CREATE INDEX sitemaps_leased ON sitemaps(lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE TABLE downloads_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    sitemap_id    INTEGER NOT NULL REFERENCES sitemaps(id) ON DELETE CASCADE,
    downloaded_at INTEGER NOT NULL,
    status        TEXT    NOT NULL,
    http_status   INTEGER,
    bytes         INTEGER NOT NULL,
    duration_ms   INTEGER NOT NULL,
    url_count     INTEGER NOT NULL,
    error_count   INTEGER NOT NULL,
    warning_count INTEGER NOT NULL,
    error         TEXT
);
INSERT INTO downloads_new (id, sitemap_id, downloaded_at, status, http_status, bytes, duration_ms, url_count, error_count, warning_count, error) SELECT id, sitemap_id, downloaded_at, status, http_status, bytes, duration_ms, url_count, error_count, warning_count, error FROM downloads;
DROP TABLE downloads;
ALTER TABLE downloads_new RENAME TO downloads;
CREATE INDEX downloads_sitemap ON downloads(sitemap_id, downloaded_at);
-- Every reference still names a row (the copy kept every id): a violation fails the CHECK, and
-- the migration with it, before the commit.
CREATE TEMP TABLE fk_violations (n INTEGER CHECK (n = 0));
INSERT INTO fk_violations SELECT COUNT(*) FROM pragma_foreign_key_check;
DROP TABLE fk_violations;
COMMIT;
PRAGMA foreign_keys = ON;
-- @end
