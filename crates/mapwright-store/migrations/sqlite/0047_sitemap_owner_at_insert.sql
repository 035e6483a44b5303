-- A new sitemap's owner and verified state (migration 0046) are written by the `INSERT INTO
-- sitemaps` statements themselves (`site_state!` in sitemaps.rs), not by a trigger: the insert
-- trigger ran one more UPDATE per inserted row, which rewrote the row and both partial indexes
-- (an index of 50,000 children: 50,000 more statements). Every writer of a new sitemap must
-- now give them. The triggers that move a sitemap with its site (`sitemaps_site_moved`,
-- `sites_move_sitemaps`) stay.
DROP TRIGGER sitemaps_take_site;
