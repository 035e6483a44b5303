-- Unchanged costs nothing (issue 36): the key of the bytes whose read the sitemap's stored URL
-- set is, whole. The merge of every read clears it, and `complete` sets it after a read that
-- was complete (no fatal error, nothing refused); a set removed takes its key with it. While it
-- stands, a download of the same bytes is recorded as unchanged without being parsed or
-- staged, as a 304 is.
ALTER TABLE sitemap_url_sets ADD COLUMN read_key TEXT;
