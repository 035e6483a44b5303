-- The site overview (issue 34, items 3 and 10). Which proof keeps a verified site verified:
-- `verified_by` is `file`, `meta` or `domain` (the name of the domain property in
-- `verified_domain`), written by every check that finds the proof and cleared when it is lost;
-- NULL on a site verified before this migration until its next check.
ALTER TABLE sites ADD COLUMN verified_by TEXT;
ALTER TABLE sites ADD COLUMN verified_domain TEXT;

-- The IndexNow submissions received for a verified site: when, how many URLs, the key file
-- asked, accepted or refused and why. A stranger can send them, so each site keeps its newest
-- few only (trimmed at every write, `MAX_INDEXNOW_RECEIPTS`).
CREATE TABLE indexnow_receipts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    received_at INTEGER NOT NULL,
    url_count INTEGER NOT NULL,
    key_location TEXT NOT NULL,
    accepted BOOLEAN NOT NULL,
    reason TEXT
);
CREATE INDEX indexnow_receipts_site ON indexnow_receipts(site_id, id);
