-- @postgres
-- The console's URL search (a sitemap's URLs containing a text, in any case) finds its rows
-- through a trigram index instead of reading every URL of the sitemap: on 100,000 URLs that
-- is the difference between a few milliseconds and a few hundred. pg_trgm ships with
-- PostgreSQL (contrib) and is a trusted extension since PostgreSQL 13 (a database owner may
-- create it). Where it cannot be created, the search still works, by reading the URLs.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE INDEX IF NOT EXISTS urls_loc_trgm ON urls USING gin (lower(loc) gin_trgm_ops);
EXCEPTION WHEN insufficient_privilege OR undefined_file OR undefined_object OR feature_not_supported THEN
    RAISE NOTICE 'pg_trgm is not available (%): the URL search reads the URLs of a sitemap', SQLERRM;
END
$$;
-- @end
