-- The lease query by owner (issue 20, 10^4 sites): each sitemap carries its site's owner and
-- whether the site is verified, so that the query finds the owners with due work from one
-- index read without the table (`sitemaps_due_owner`) and then reads only the first due
-- sitemaps of the few owners whose turn it is (`sitemaps_owner_due`), instead of ranking every
-- @sqlite
-- due sitemap of the service at each lease (linear in the due set). Kept by triggers, so no
-- writer of `sitemaps` or `sites` can forget them: a new sitemap takes its site's owner and
-- state, a site that changes owner (its last owner leaves) or is verified or loses its
-- verification moves its sitemaps with it.
ALTER TABLE sitemaps ADD COLUMN owner_id INTEGER;
ALTER TABLE sitemaps ADD COLUMN site_verified INTEGER NOT NULL DEFAULT 0;
UPDATE sitemaps SET owner_id = (SELECT owner_id FROM sites WHERE sites.id = sitemaps.site_id),
    site_verified = (SELECT verified_at IS NOT NULL FROM sites WHERE sites.id = sitemaps.site_id);

CREATE TRIGGER sitemaps_take_site AFTER INSERT ON sitemaps
BEGIN
    -- No site: the foreign key refuses the row at the statement's end (and says why).
    UPDATE sitemaps SET owner_id = (SELECT owner_id FROM sites WHERE id = NEW.site_id),
        site_verified = COALESCE((SELECT verified_at IS NOT NULL FROM sites WHERE id = NEW.site_id), 0)
    WHERE id = NEW.id;
END;
CREATE TRIGGER sitemaps_site_moved AFTER UPDATE OF site_id ON sitemaps
BEGIN
    -- No site: the foreign key refuses the row at the statement's end (and says why).
    UPDATE sitemaps SET owner_id = (SELECT owner_id FROM sites WHERE id = NEW.site_id),
        site_verified = COALESCE((SELECT verified_at IS NOT NULL FROM sites WHERE id = NEW.site_id), 0)
    WHERE id = NEW.id;
END;
CREATE TRIGGER sites_move_sitemaps AFTER UPDATE OF owner_id, verified_at ON sites
WHEN OLD.owner_id IS NOT NEW.owner_id OR (OLD.verified_at IS NULL) <> (NEW.verified_at IS NULL)
BEGIN
    UPDATE sitemaps SET owner_id = NEW.owner_id, site_verified = NEW.verified_at IS NOT NULL WHERE site_id = NEW.id;
END;

-- The owners with due work, oldest first: read from the index alone.
-- @postgres
-- due sitemap of the service at each lease (130 ms with 30,000 due, linear in the due set).
-- Kept by triggers, so no writer of `sitemaps` or `sites` can forget them: a new sitemap takes
-- its site's owner and state, a site that changes owner (its last owner leaves) or is verified
-- or loses its verification moves its sitemaps with it.
ALTER TABLE sitemaps ADD COLUMN owner_id BIGINT;
ALTER TABLE sitemaps ADD COLUMN site_verified BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE sitemaps sm SET owner_id = s.owner_id, site_verified = s.verified_at IS NOT NULL FROM sites s WHERE s.id = sm.site_id;

CREATE FUNCTION sitemaps_take_site() RETURNS trigger AS $$
BEGIN
    -- No site: the foreign key refuses the row (and says why); the owner stays NULL until then.
    SELECT owner_id, verified_at IS NOT NULL INTO NEW.owner_id, NEW.site_verified FROM sites WHERE id = NEW.site_id;
    NEW.site_verified := COALESCE(NEW.site_verified, FALSE);
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER sitemaps_take_site BEFORE INSERT OR UPDATE OF site_id ON sitemaps
    FOR EACH ROW EXECUTE FUNCTION sitemaps_take_site();

CREATE FUNCTION sites_move_sitemaps() RETURNS trigger AS $$
BEGIN
    UPDATE sitemaps SET owner_id = NEW.owner_id, site_verified = NEW.verified_at IS NOT NULL WHERE site_id = NEW.id;
    RETURN NULL;
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER sites_move_sitemaps AFTER UPDATE OF owner_id, verified_at ON sites
    FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id OR (OLD.verified_at IS NULL) <> (NEW.verified_at IS NULL))
    EXECUTE FUNCTION sites_move_sitemaps();

-- The owners with due work, oldest first: an index-only scan of the due part.
-- @end
CREATE INDEX sitemaps_due_owner ON sitemaps(next_fetch_at, owner_id) WHERE removed_at IS NULL AND site_verified;
-- One owner's due sitemaps in lease order.
CREATE INDEX sitemaps_owner_due ON sitemaps(owner_id, next_fetch_at, id) WHERE removed_at IS NULL AND site_verified;
