-- A URL checked soon after it appears (issue 34): besides the periodic run over every live URL
-- of a site, a short run over the URLs added since the last run (those past its `after_url_id`,
-- ids being given in increasing order), claimed like any run (one per site and origin, the
-- owner's limit of runs, the same pace and outbound budget), at most one per site every few
-- minutes. `new_only` marks such a run: it checks no old URL, so it never counts as the site's
-- complete run (`last_complete_at` stays, and the periodic run is due as before).
-- `new_seen_diff`: the newest read diff (`read_diffs.id`, given in increasing order) when the
-- site's last run started or its new URLs were last looked for. A site is due for such a run
-- when a read diff after it added URLs to one of its sitemaps, so the scheduler's look never
-- scans the URL tables; the claim counts the URLs past the resume point, and a look that
-- finds none moves `new_seen_diff` on.
-- @sqlite
ALTER TABLE check_runs ADD COLUMN new_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE check_runs ADD COLUMN new_seen_diff INTEGER;
-- @postgres
ALTER TABLE check_runs ADD COLUMN new_only BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE check_runs ADD COLUMN new_seen_diff BIGINT;
-- @end
