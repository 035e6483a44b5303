-- One outbound gate (issue 33). A webhook endpoint receives events only once it has echoed the
-- challenge of a verification handshake (`verified_at`); failed attempts in a row
-- (`failures`) pause it alone (`paused_until`, a back-off that grows) and, past a limit,
-- disable it (`disabled_at`, why in `disabled_reason`) until its owner verifies it again;
-- `disabled_told_at` is when its creator was mailed about it. Endpoints added before this
-- migration have not answered a handshake: they receive nothing until they do.
--! Alike in shape to 0002's columns of sitemaps (INTEGER or BIGINT times and counts): other
--! columns of another table.
-- @sqlite
ALTER TABLE webhooks ADD COLUMN verified_at INTEGER;
ALTER TABLE webhooks ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN paused_until INTEGER;
ALTER TABLE webhooks ADD COLUMN disabled_at INTEGER;
-- @postgres
ALTER TABLE webhooks ADD COLUMN verified_at BIGINT;
ALTER TABLE webhooks ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN paused_until BIGINT;
ALTER TABLE webhooks ADD COLUMN disabled_at BIGINT;
-- @end
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT;
-- @sqlite
ALTER TABLE webhooks ADD COLUMN disabled_told_at INTEGER;
-- @postgres
ALTER TABLE webhooks ADD COLUMN disabled_told_at BIGINT;
-- @end
CREATE INDEX webhooks_created_by ON webhooks(created_by, site_id);

-- Invitations are capped per invited address across every site and sender, and withdrawn with
-- their sender's membership.
CREATE INDEX site_invitations_email ON site_invitations(email);
CREATE INDEX site_invitations_sender ON site_invitations(invited_by, site_id);
