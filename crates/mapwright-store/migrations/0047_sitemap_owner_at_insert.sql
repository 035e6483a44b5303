-- A new sitemap's owner and verified state (migration 0046) are written by the `INSERT INTO
-- sitemaps` statements themselves (`site_state!` in sitemaps.rs), not by a trigger: the insert
-- @sqlite
-- trigger ran one more UPDATE per inserted row, which rewrote the row and both partial indexes
-- (an index of 50,000 children: 50,000 more statements). Every writer of a new sitemap must
-- now give them. The triggers that move a sitemap with its site (`sitemaps_site_moved`,
-- `sites_move_sitemaps`) stay.
DROP TRIGGER sitemaps_take_site;
-- @postgres
-- trigger ran one more query per inserted row (an index of 50,000 children: 50,000 more).
-- Every writer of a new sitemap must now give them. The trigger stays for a change of
-- `site_id` (as on SQLite, `sitemaps_site_moved`), and `sites_move_sitemaps` for a site that
-- changes owner or verified state.
DROP TRIGGER sitemaps_take_site ON sitemaps;
CREATE TRIGGER sitemaps_site_moved BEFORE UPDATE OF site_id ON sitemaps
    FOR EACH ROW EXECUTE FUNCTION sitemaps_take_site();
-- @end
