-- The first schema of the mapwright service (SQLite). Times are Unix seconds (INTEGER),
-- booleans are 0/1, ids are INTEGER PRIMARY KEY (rowid aliases).

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    is_admin      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);

CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_expires ON sessions(expires_at);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    token_hash   TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE sites (
    id                 INTEGER PRIMARY KEY,
    owner_id           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    origin             TEXT    NOT NULL,
    verification_token TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    verified_at        INTEGER,
    last_checked_at    INTEGER,
    UNIQUE (owner_id, origin)
);
CREATE INDEX sites_origin ON sites(origin);

CREATE TABLE sitemaps (
    id                 INTEGER PRIMARY KEY,
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
    lease_expires_at   INTEGER,
    UNIQUE (site_id, url)
);
CREATE INDEX sitemaps_due ON sitemaps(next_fetch_at) WHERE removed_at IS NULL;
CREATE INDEX sitemaps_url ON sitemaps(url);

CREATE TABLE downloads (
    id            INTEGER PRIMARY KEY,
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
CREATE INDEX downloads_sitemap ON downloads(sitemap_id, downloaded_at);

CREATE TABLE findings (
    id          INTEGER PRIMARY KEY,
    download_id INTEGER NOT NULL REFERENCES downloads(id) ON DELETE CASCADE,
    rule        TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    line        INTEGER,
    col         INTEGER,
    loc         TEXT,
    message     TEXT    NOT NULL
);
CREATE INDEX findings_download ON findings(download_id);

CREATE TABLE urls (
    id            INTEGER PRIMARY KEY,
    site_id       INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    loc           TEXT    NOT NULL,
    lastmod       TEXT,
    changefreq    TEXT,
    priority      REAL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL,
    changed_at    INTEGER NOT NULL,
    removed_at    INTEGER,
    UNIQUE (site_id, loc)
);

CREATE TABLE sitemap_urls (
    sitemap_id   INTEGER NOT NULL REFERENCES sitemaps(id) ON DELETE CASCADE,
    url_id       INTEGER NOT NULL REFERENCES urls(id) ON DELETE CASCADE,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (sitemap_id, url_id)
);
CREATE INDEX sitemap_urls_url ON sitemap_urls(url_id);

CREATE TABLE pings (
    id          INTEGER PRIMARY KEY,
    sitemap_url TEXT    NOT NULL,
    client_addr TEXT    NOT NULL,
    received_at INTEGER NOT NULL,
    matched     INTEGER NOT NULL
);
CREATE INDEX pings_client ON pings(client_addr, received_at);
CREATE INDEX pings_sitemap ON pings(sitemap_url, received_at);
