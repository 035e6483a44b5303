-- @sqlite
-- Fairness, quotas, poison jobs and retention (SQLite). Only adds a column and indexes, so it
-- is independent of the other migrations.
-- @postgres
-- Fairness, quotas, poison jobs and retention (PostgreSQL).
-- @end
--
-- @sqlite
-- URLs are unique per site by a 16-byte SHA-256 prefix of their text (`loc_hash`, written by
-- the store; rows from before are hashed when the store opens), the same key as on
-- PostgreSQL, where a btree on the text refuses URLs over 2,704 bytes. SQLite cannot drop the
-- table's old UNIQUE (site_id, loc) without rebuilding it; it stays, equivalent and harmless.
ALTER TABLE urls ADD COLUMN loc_hash BLOB;
-- @postgres
-- URLs are unique per site by a 16-byte SHA-256 prefix of their text (`loc_hash`), not by a
-- btree on the text, which refuses a key over 2,704 bytes ("index row size exceeds btree
-- maximum") and so made any sitemap listing a long URL fail forever.
ALTER TABLE urls ADD COLUMN loc_hash BYTEA;
UPDATE urls SET loc_hash = substring(sha256(convert_to(loc, 'UTF8')) from 1 for 16);
ALTER TABLE urls DROP CONSTRAINT urls_site_id_loc_key;
-- @end
CREATE UNIQUE INDEX urls_site_loc_hash ON urls(site_id, loc_hash);
-- Retention: URLs removed long ago.
CREATE INDEX urls_removed ON urls(removed_at) WHERE removed_at IS NOT NULL;
-- The lease query counts the leases in force per origin and per owner.
CREATE INDEX sitemaps_leased ON sitemaps(lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- The limit on unverified sites per user, and their expiry.
CREATE INDEX sites_unverified ON sites(owner_id) WHERE verified_at IS NULL;
-- Retention: pings by age.
CREATE INDEX pings_received ON pings(received_at);
