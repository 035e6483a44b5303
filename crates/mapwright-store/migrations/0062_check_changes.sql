-- What changed between two visits of the URL checker (issue 34), kept in the one row per URL of
-- `url_checks` (bounded as before):
-- - `prev_failing`: whether the visit before this one failed (NULL: no visit before), so a URL
--   that became failing since the previous check, or was fixed, is told apart;
-- - `version`: the version the page's server named at this visit (its ETag, else its
--   Last-Modified; NULL when it named none or the visit failed), `lastmod_seen` the URL's lastmod
--   in the site's sitemaps at that time, and `version_pair` how the two moved since the visit
--   before (NULL: not comparable, 0: both or neither, 1: the lastmod alone, 2: the page alone):
--   the checker's measure of whether a sitemap's lastmod follows its pages.
--! Alike in shape to 0009's columns of sitemaps (ADD COLUMN in both dialects): other columns.
-- @sqlite
ALTER TABLE url_checks ADD COLUMN prev_failing INTEGER;
-- @postgres
ALTER TABLE url_checks ADD COLUMN prev_failing BOOLEAN;
-- @end
ALTER TABLE url_checks ADD COLUMN version TEXT;
ALTER TABLE url_checks ADD COLUMN lastmod_seen TEXT;
-- @sqlite
ALTER TABLE url_checks ADD COLUMN version_pair INTEGER;
-- @postgres
ALTER TABLE url_checks ADD COLUMN version_pair SMALLINT;
-- @end

-- The fixed URLs of a site (fine now, failing at the visit before), listed by id.
-- @sqlite
CREATE INDEX url_checks_fixed ON url_checks(site_id, url_id) WHERE rule IS NULL AND prev_failing = TRUE;
-- @postgres
CREATE INDEX url_checks_fixed ON url_checks(site_id, url_id) WHERE rule IS NULL AND prev_failing;
-- @end
