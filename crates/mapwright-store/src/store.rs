//! The `Store` trait: every operation the service needs, independent of the backend.
//!
//! `#[async_trait]` rather than native `async fn` in traits: the server picks SQLite or
//! PostgreSQL at run time and holds an `Arc<dyn Store>`, and native async trait methods are
//! not object-safe. The cost, one boxed future per call, is nothing next to a database
//! round trip.
//!
//! Each method is written once, below: its documentation, its signature and, after `=>`, the
//! inherent method of each backend that does the work (stamped out per backend by the concern
//! macros that `sql.rs`'s `impl_store!` expands). `store_trait!` (`sql.rs`) declares the trait
//! from that list and implements it for both backends, each method a call of its inherent one:
//! an `#[async_trait]` impl must hold its methods written out (the attribute rewrites only
//! those, never what a macro inside the impl would expand to), so they cannot come from the
//! concern macros themselves. A long signature puts its `=> name` on the next line.
//!
//! Each entry's signature stands again on its `*_impl` in the concern module (a duplicate
//! finder pairs them, e.g. `store.rs ~ check_runs.rs`): the trait's side is the public contract
//! with its doc, the inherent side the body both backends share; deriving one from the other
//! would take a procedural macro, for no behaviour gained.

use crate::Result;
use crate::model::*;
use crate::{
    AlertLink, AlertRecipient, AlertSetting, AttemptRecord, Change, DiffUrl, DomainProperty, Enqueued, Invitation,
    InvitationInfo, LeasedDelivery, Member, PgStore, ReadDiff, Role, SitemapListing, SqliteStore, Webhook,
    WebhookAttempt, Worsening,
};

store_trait! {
    backends: [SqliteStore, PgStore],
    /// Storage of the sitemap service.
    ///
    /// Methods that take an [`Actor`] act on behalf of a user and see only the rows of the sites
    /// the user is a member of (all rows for an admin): another user's row is
    /// [`Error::NotFound`](crate::Error::NotFound). Changes are an owner's: a reader's attempt is
    /// [`Error::Forbidden`](crate::Error::Forbidden).
    /// Methods without one are for the service itself (scheduler, verifier, ping).
    pub trait Store {
        sync {
            /// "sqlite" or "postgres".
            fn backend(&self) -> &'static str => backend_name;
        }

        /// Applies pending migrations (done by `open`; running it again is a no-op).
        async fn migrate(&self) -> Result<()> => migrate_impl;

        /// Closes the pool, waiting for connections to return.
        async fn close(&self) => close_impl;

        // --- wake-ups across processes ---

        /// Tells the workers of every process sharing the database that work became due
        /// (PostgreSQL: `NOTIFY`); nothing on SQLite, where one process serves.
        async fn notify_due(&self) -> Result<()> => notify_due_now;

        /// A connection that hears [`Store::notify_due`] from any process; `None` on SQLite.
        async fn due_listener(&self) -> Result<Option<crate::DueListener>> => listen_due;

        // --- users, sessions, tokens ---

        /// Creates a user from an already computed argon2 hash; a taken e-mail is a `Conflict`.
        async fn create_user(&self, email: &str, password_hash: &str, is_admin: bool, now: Timestamp) -> Result<User>
            => create_user_impl;

        /// Makes the user with this e-mail an admin (`serve --admin`); false when no such user yet.
        async fn grant_admin(&self, email: &str) -> Result<bool> => grant_admin_impl;

        /// The user and stored password hash for an e-mail, to check a sign-in.
        async fn user_credentials(&self, email: &str) -> Result<Option<(User, String)>> => user_credentials_impl;

        // Alike on purpose: its inherent method in signups.rs repeats this signature (see the
        // header).
        /// Records a sign-up waiting for the confirmation of its address, valid `ttl_seconds`: one
        /// per address and requesting network (`from.network`), so a new request from the same
        /// network replaces its link and one from another network gets its own, leaving the
        /// others' links alone. An address that has an account is `Taken` and nothing is stored.
        /// Past [`MAX_PENDING_SIGNUPS_PER_CLIENT`](crate::MAX_PENDING_SIGNUPS_PER_CLIENT) pending
        /// ones of the client, [`MAX_PENDING_SIGNUPS_PER_NETWORK`](crate::MAX_PENDING_SIGNUPS_PER_NETWORK)
        /// of the network or [`MAX_PENDING_SIGNUPS`](crate::MAX_PENDING_SIGNUPS) in all,
        /// [`Error::Quota`](crate::Error::Quota).
        async fn request_signup(
            &self,
            email: &str,
            password_hash: &str,
            from: &Requester,
            now: Timestamp,
            ttl_seconds: i64,
        ) -> Result<SignupRequest> => request_signup_impl;

        /// The address and password hash of the pending sign-up whose link carries this token,
        /// while it has not expired.
        async fn pending_signup(&self, token: &str, now: Timestamp) -> Result<Option<(String, String)>>
            => pending_signup_impl;

        /// Makes the account of a pending sign-up (its link followed and its password checked by
        /// the caller) and forgets every pending sign-up of the address; `None` when the link is
        /// unknown, used or expired.
        async fn confirm_signup(&self, token: &str, now: Timestamp) -> Result<Option<User>> => confirm_signup_impl;

        /// Counts one event of the limit `scope` for `key` in a fixed window of `window_seconds`:
        /// `None` when it is within `limit`, else the seconds until the window ends (for
        /// Retry-After). Kept in the database, so that every server process on it shares the count.
        async fn count_event(
            &self,
            scope: &str,
            key: &str,
            limit: i64,
            window_seconds: i64,
            now: Timestamp,
        ) -> Result<Option<i64>> => count_event_impl;

        // Alike on purpose: its inherent method in outbound.rs repeats this signature (see the
        // header).
        /// [`Store::count_event`] for `events` events at once (at least one): a sender that
        /// reserves its turns at a target a batch at a time. `None` when they are all within
        /// `limit`, else the seconds until the window ends.
        async fn count_events(
            &self,
            scope: &str,
            key: &str,
            events: i64,
            limit: i64,
            window_seconds: i64,
            now: Timestamp,
        ) -> Result<Option<i64>> => count_events_impl;

        /// Writes the health probe's row in a write transaction and, on SQLite, checks the room
        /// left (the file system's free bytes, the page limit): `Ok` when the store can take writes
        /// now; a full disk or a broken connection is the error (`Error::Unhealthy` for no room),
        /// for `/healthz`.
        async fn health(&self, now: Timestamp) -> Result<()> => health_impl;

        /// A password-reset link for the account of `email`, valid `ttl_seconds`: the user and the
        /// link's secret token, or `None` when no account has the address (the caller answers both
        /// the same). An account keeps its [`MAX_ACCOUNT_LINKS`](crate::MAX_ACCOUNT_LINKS) newest
        /// links; expired ones go.
        async fn request_password_reset(
            &self,
            email: &str,
            now: Timestamp,
            ttl_seconds: i64,
        ) -> Result<Option<(User, String)>> => request_password_reset_impl;

        /// Uses a reset link once: the account gets the new password hash, every session of it
        /// ends and every reset link of it dies. `None` when the link is unknown, used or expired.
        async fn reset_password(&self, token: &str, password_hash: &str, now: Timestamp) -> Result<Option<User>>
            => reset_password_impl;

        /// Sets a user's password hash (a change on the account page, the operator's `serve user
        /// password`): every session of the account ends but `keep_session` (the caller's own, by
        /// its token), and its reset links die. `NotFound` for an unknown user.
        async fn set_password(&self, user_id: i64, password_hash: &str, keep_session: Option<&str>) -> Result<User>
            => set_password_impl;

        /// A link that moves the user's account to `new_email`, mailed there, valid `ttl_seconds`:
        /// `Pending` with its token, or `Taken` (nothing stored) when an account has the address.
        async fn request_email_change(
            &self,
            user_id: i64,
            new_email: &str,
            now: Timestamp,
            ttl_seconds: i64,
        ) -> Result<SignupRequest> => request_email_change_impl;

        /// The user and the new address of a change link that has not expired, to check the
        /// account's password before [`Store::confirm_email_change`].
        async fn pending_email_change(&self, token: &str, now: Timestamp) -> Result<Option<(User, String)>>
            => pending_email_change_impl;

        /// Uses a change link once: the account takes the new address (`Conflict` when an account
        /// took it meanwhile); its other links die. The user as it is now and the old address, or
        /// `None` when the link is unknown, used or expired.
        async fn confirm_email_change(&self, token: &str, now: Timestamp) -> Result<Option<(User, String)>>
            => confirm_email_change_impl;

        /// Starts a session for a user; returns the secret token for the cookie. A user keeps at
        /// most [`MAX_SESSIONS_PER_USER`](crate::MAX_SESSIONS_PER_USER): the oldest end first.
        async fn create_session(&self, user_id: i64, now: Timestamp, ttl_seconds: i64) -> Result<String>
            => create_session_impl;

        /// The user of a session token that has not expired.
        async fn session_user(&self, token: &str, now: Timestamp) -> Result<Option<User>> => session_user_impl;

        /// Ends a session (sign-out); an unknown token is not an error.
        async fn delete_session(&self, token: &str) -> Result<()> => delete_session_impl;

        /// Deletes expired sessions; returns how many.
        async fn delete_expired_sessions(&self, now: Timestamp) -> Result<u64> => delete_expired_sessions_impl;

        /// Creates an API token; returns it and its secret (shown once). Past
        /// [`MAX_API_TOKENS`](crate::MAX_API_TOKENS), [`Error::Quota`](crate::Error::Quota).
        async fn create_api_token(&self, actor: Actor, name: &str, now: Timestamp) -> Result<(ApiToken, String)>
            => create_api_token_impl;

        /// The actor's tokens (every token for an admin), newest first.
        async fn list_api_tokens(&self, actor: Actor) -> Result<Vec<ApiToken>> => list_api_tokens_impl;

        /// Revokes a token of the actor.
        async fn revoke_api_token(&self, actor: Actor, token_id: i64, now: Timestamp) -> Result<()>
            => revoke_api_token_impl;

        /// The user of a valid (not revoked) API token secret; records the use.
        async fn api_token_user(&self, secret: &str, now: Timestamp) -> Result<Option<User>> => api_token_user_impl;

        // --- sites ---

        /// Adds a site for the actor with a fresh verification token. A user may have at most
        /// [`MAX_UNVERIFIED_SITES`](crate::MAX_UNVERIFIED_SITES) sites not verified and
        /// [`MAX_SITES_PER_USER`](crate::MAX_SITES_PER_USER) in all: past either,
        /// [`Error::Quota`](crate::Error::Quota).
        async fn create_site(&self, actor: Actor, origin: &str, now: Timestamp) -> Result<Site> => create_site_impl;

        /// One site of the actor.
        async fn site(&self, actor: Actor, site_id: i64) -> Result<Site> => site_impl;

        /// The actor's sites (all for an admin), by id.
        async fn list_sites(&self, actor: Actor) -> Result<Vec<Site>> => list_sites_impl;

        /// Deletes a site with its sitemaps, downloads and URLs.
        async fn delete_site(&self, actor: Actor, site_id: i64) -> Result<()> => delete_site_impl;

        /// Records a verification check: `ok` keeps or sets `verified_at`, a failure clears it.
        async fn record_verification(&self, site_id: i64, ok: bool, now: Timestamp) -> Result<()>
            => record_verification_impl;

        /// Records a read of the site's robots.txt for the sitemaps it names, at `now`: `error`
        /// says why it could not be read (`None`: it was), so a page never says "names no
        /// sitemap" of a file that was not read.
        async fn record_robots_read(&self, site_id: i64, error: Option<&str>, now: Timestamp) -> Result<()>
            => record_robots_read_impl;

        /// The last read of the actor's site's robots.txt ([`Store::record_robots_read`]).
        async fn robots_read(&self, actor: Actor, site_id: i64) -> Result<crate::RobotsRead> => robots_read_impl;

        /// Claims up to `limit` sites whose verification was last checked before `before` (or
        /// never), oldest first: their `last_checked_at` becomes `now`, so that the re-check pass of
        /// another process sharing the database does not take them too (`SKIP LOCKED` on
        /// PostgreSQL); [`Store::record_verification`] then records the outcome. A pass cut short
        /// leaves its sites for the next period.
        async fn sites_to_verify(&self, before: Timestamp, now: Timestamp, limit: i64) -> Result<Vec<Site>>
            => sites_to_verify_impl;

        /// Verified sites with this origin (of any owner), for ping, robots.txt and IndexNow.
        async fn verified_sites_by_origin(&self, origin: &str) -> Result<Vec<Site>> => verified_sites_by_origin_impl;

        // --- sitemaps ---

        /// Adds a sitemap to a site of the actor, due now; adding it again brings its fetch
        /// forward, and restores a removed one (submitted now, pending until read again). A new one
        /// past [`MAX_SITEMAPS_PER_SITE`](crate::MAX_SITEMAPS_PER_SITE) is [`Error::Quota`](crate::Error::Quota).
        async fn add_sitemap(
            &self,
            actor: Actor,
            site_id: i64,
            url: &str,
            source: Source,
            now: Timestamp,
        ) -> Result<Sitemap> => add_sitemap_impl;

        /// The service adds a sitemap (robots.txt, index child) to a site, no user involved.
        async fn add_sitemap_for_site(
            &self,
            site_id: i64,
            url: &str,
            source: Source,
            parent_id: Option<i64>,
            now: Timestamp,
        ) -> Result<Sitemap> => add_sitemap_for_site_impl;

        /// One sitemap on a site of the actor.
        async fn sitemap(&self, actor: Actor, sitemap_id: i64) -> Result<Sitemap> => sitemap_impl;

        /// The sitemap with this URL on a site of the actor (removed or not), if any: adding one
        /// that exists says so instead of adding it twice.
        async fn sitemap_by_url(&self, actor: Actor, site_id: i64, url: &str) -> Result<Option<Sitemap>>
            => sitemap_by_url_impl;

        /// The sitemaps of a site of the actor, removed ones included, by id.
        async fn list_sitemaps(&self, actor: Actor, site_id: i64) -> Result<Vec<Sitemap>> => list_sitemaps_impl;

        /// Resubmit: due now, its `last_submitted_at` now; a removed one is restored (pending until
        /// read, `submitted_at` now). An index's live children, at any depth, are due now too, so
        /// the whole tree is read again (each with its validators: an unchanged child is a 304).
        async fn resubmit_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()>
            => resubmit_sitemap_impl;

        /// Removes a sitemap: no more fetches, and its URLs leave the site unless another
        /// sitemap lists them. An index's children go with it. A removed sitemap forgets its
        /// validators and verdict, so if it comes back it is read in full (never a 304 over the URLs
        /// it dropped), and the user's removal sticks while an index lists it.
        async fn remove_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()>
            => remove_sitemap_impl;

        /// Brings forward the fetch of the sitemaps with this URL on verified sites and records
        /// the ping; a ping that matches none is not recorded (a ping alone never adds a sitemap,
        /// nor a row).
        async fn record_ping(&self, sitemap_url: &str, client_addr: &str, now: Timestamp) -> Result<PingOutcome>
            => record_ping_impl;

        /// Pings from a client address since a time, for rate limiting.
        async fn pings_from_client_since(&self, client_addr: &str, since: Timestamp) -> Result<i64>
            => pings_from_client_since_impl;

        /// Pings naming a sitemap URL since a time, for rate limiting.
        async fn pings_for_sitemap_since(&self, sitemap_url: &str, since: Timestamp) -> Result<i64>
            => pings_for_sitemap_since_impl;

        // --- the fetch queue ---


        /// Leases like [`Store::lease_due_sitemaps`], shared fairly: a sitemap downloaded less than
        /// `policy.min_interval` ago is not due yet, no origin gets more than `policy.per_origin`
        /// leases in force nor an owner more than `policy.per_owner`, and owners take turns (the
        /// one with the fewest leases in force first, then the longest due).
        async fn lease_sitemaps(
            &self,
            worker: &str,
            now: Timestamp,
            limit: i64,
            lease_seconds: i64,
            policy: LeasePolicy,
        ) -> Result<Vec<LeasedSitemap>> => lease_sitemaps_impl;

        /// Stores a download and its findings, updates the sitemap's summary, sets its next fetch
        /// and ends the lease, in one transaction. `LeaseLost` when another worker took it over.
        /// An "unchanged" download (304) carries the status, counts and findings of the last read
        /// it stands for, and the sitemap keeps that verdict. The roll-ups of the sitemap and the
        /// indexes above it are brought up to date.
        /// NUL characters, which PostgreSQL refuses in text, are stored as U+FFFD on both backends.
        async fn complete(
            &self,
            worker: &str,
            sitemap_id: i64,
            download: &DownloadRecord,
            next_fetch_at: Timestamp,
        ) -> Result<i64> => complete_impl;

        /// Gives a lease back without a download (shutdown): the sitemap is due again at once.
        async fn release(&self, worker: &str, sitemap_id: i64) -> Result<()> => release_impl;

        /// Gives a lease back without a download, due again at `held.until`: a read the outbound
        /// gate held back is no read of the sitemap, so nothing is recorded of it (no download,
        /// no failure, no alert) but when and why ([`Sitemap::held_at`]), until the next read.
        async fn postpone(&self, worker: &str, sitemap_id: i64, held: &crate::HeldRead) -> Result<()> => postpone_impl;

        /// Releases every lease a worker holds (graceful shutdown); returns how many.
        async fn release_all(&self, worker: &str) -> Result<u64> => release_all_impl;

        /// How many sitemaps are due and not leased, for the queue-depth metric.
        async fn queue_depth(&self, now: Timestamp) -> Result<i64> => queue_depth_impl;

        /// The downloads of a sitemap of the actor, newest first.
        async fn list_downloads(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>>
            => list_downloads_impl;


        // --- scheduler ---

        /// A site by id, for the service itself (scheduler, verifier); no owner check.
        async fn site_by_id(&self, site_id: i64) -> Result<Site> => site_by_id_impl;

        /// A sitemap by id, for the service itself; no owner check.
        async fn sitemap_by_id(&self, sitemap_id: i64) -> Result<Sitemap> => sitemap_by_id_impl;

        /// The key of the bytes whose read the sitemap's stored URLs are, whole (set by
        /// [`Store::complete`] from [`DownloadRecord::whole_read`], cleared by every merge and with
        /// the stored set): while it stands, a download of bytes with this key would change nothing,
        /// and is recorded as unchanged without being read. `None` when the last read was not whole.
        async fn whole_read_key(&self, sitemap_id: i64) -> Result<Option<String>> => ingest_read_key;

        /// Records the console's summary and the schedule's state of a leased sitemap, before
        /// [`Store::complete`]. `LeaseLost` when `worker` no longer holds the lease.
        async fn record_fetch_summary(&self, worker: &str, sitemap_id: i64, summary: &FetchSummary) -> Result<()>
            => record_fetch_summary_impl;

        /// Brings a sitemap index's children in line with what it lists now: new children are added
        /// (due at once, `index_lastmod` kept), known ones whose index lastmod changed (or that come
        /// back after leaving) are brought forward, and children of this index that it no longer
        /// lists are marked removed (their URLs leave the site unless another sitemap lists them).
        /// Only children of this index are touched: a sitemap added otherwise (API, robots.txt) or
        /// listed by another index keeps its own parent and schedule, which is also what stops a
        /// self-listing or cyclic index from looping.
        async fn sync_index_children(
            &self,
            site_id: i64,
            parent_id: i64,
            children: &[IndexChild],
            now: Timestamp,
        ) -> Result<ChildSync> => sync_index_children_impl;

        // --- URLs ---


        // Alike on purpose: its inherent method in urls.rs repeats this signature (see the header).
        /// [`Store::upsert_urls`] within a quota: new URLs are added only while the site has fewer
        /// than `quota` URL rows (removed ones count: they take room too), the rest are counted as
        /// refused; known URLs are always updated. Written in transactions of at most
        /// 500 URLs, so other writers wait briefly. Concurrent jobs of one site may pass the quota
        /// by what they write at once. Text is stored without NUL characters (see
        /// [`Store::complete`]).
        async fn store_urls(
            &self,
            site_id: i64,
            sitemap_id: i64,
            urls: &[UrlRecord],
            now: Timestamp,
            quota: i64,
        ) -> Result<UrlWrite> => store_urls_impl;

        /// After a full read of a sitemap: unlinks the URLs it no longer lists (link stamped
        /// before `seen_since`) and marks removed, at `now`, the site's URLs no sitemap lists.
        /// Returns how many URLs were marked removed.
        async fn sweep_urls(&self, site_id: i64, sitemap_id: i64, seen_since: Timestamp, now: Timestamp) -> Result<u64>
            => sweep_urls_impl;

        /// Starts staging the URLs of a download of a sitemap leased to `worker`: staged URLs stay
        /// invisible until [`Store::merge_url_stage`], so a download that dies (store error, lost
        /// connection, deadline, killed process) leaves the previous URL set as it was. Discards the
        /// stages of earlier attempts on this sitemap, and every stage older than a day. Loads the
        /// sitemap's previous URL set (a key and a content hash per URL, at most the protocol's
        /// 50,000) into the stage, so that staging skips what did not change.
        /// `LeaseLost` when `worker` does not hold the lease.
        async fn begin_url_stage(&self, worker: &str, site_id: i64, sitemap_id: i64, now: Timestamp) -> Result<UrlStage>
            => ingest_begin;

        /// Stages a batch of URLs the sitemap lists, in reading order: only those new to the
        /// sitemap or whose lastmod, changefreq or priority changed since its previous read (one
        /// `COPY` or multi-row insert per batch; text is stored without NUL characters, see
        /// [`Store::complete`]).
        async fn stage_urls(&self, stage: &mut UrlStage, urls: &[UrlRecord]) -> Result<()> => ingest_stage;

        /// Makes the read's URLs the sitemap's, in one transaction, and discards the stage: new
        /// URLs are added (within the quota), known ones whose lastmod, changefreq or priority
        /// changed (or that come back from removal) are updated, unchanged ones are not written;
        /// links of the sitemap are added, and with `merge.sweep` those of the previous read it did
        /// not list are removed (their URLs marked removed when no other sitemap lists them); the
        /// roll-up URL counts of the sitemap and the indexes above move with them. A URL listed
        /// twice counts once, with its last entry. `LeaseLost` when `worker` no longer holds the
        /// lease, `StageLost` when a staged row is missing; either way nothing changes.
        async fn merge_url_stage(&self, worker: &str, stage: &UrlStage, merge: UrlMerge) -> Result<UrlWrite>
            => ingest_merge;

        /// Discards a stage without merging it (a download given up).
        async fn discard_url_stage(&self, stage: &UrlStage) -> Result<()> => ingest_discard;

        /// A page of a site's URLs, by id.
        async fn list_urls(&self, actor: Actor, site_id: i64, query: UrlQuery) -> Result<Page<UrlRow>>
            => list_urls_impl;

        /// The sitemap ids listing a URL of the actor.
        async fn url_sitemaps(&self, actor: Actor, url_id: i64) -> Result<Vec<i64>> => url_sitemaps_impl;

        /// The crawl frontier: live URLs of a site in visiting order: changed since `since`
        /// first (newest change first), then by priority (absent = 0.5) and changefreq.
        async fn frontier(&self, actor: Actor, site_id: i64, since: Timestamp, limit: i64) -> Result<Vec<UrlRow>>
            => frontier_impl;

        // --- api ---

        /// URLs pushed for a site (IndexNow): unknown ones are added, known ones (removed ones
        /// included) are marked live and changed at `now`, so they lead the crawl frontier.
        /// Lastmod, changefreq and priority are left as the sitemaps gave them. Pushed URLs link
        /// to no sitemap: the sitemaps stay the inventory of the site, so the next sweep after a
        /// read of one of its sitemaps marks removed those no sitemap lists. Within the site's
        /// `quota` of URL rows, as a read's merge and [`Store::store_urls`] are (one decision):
        /// known URLs are always marked, new ones added only while the site has room. Returns
        /// how many distinct URLs were written (`written`) and how many new ones the quota
        /// refused (`refused`); the other fields stay 0.
        async fn record_pushed_urls(&self, site_id: i64, urls: &[String], now: Timestamp, quota: i64) -> Result<UrlWrite>
            => record_pushed_urls_impl;

        // --- console ---

        /// A page of the actor's sitemaps that are not an index's children (removed ones included,
        /// so the table can offer to restore them), by id, with their site's origin: the console's
        /// table.
        async fn list_sitemap_summaries(&self, actor: Actor, after: i64, limit: i64) -> Result<Page<SitemapSummary>>
            => list_sitemap_summaries_impl;

        /// The children of these indexes (of sites of the actor), removed ones included, up to
        /// `per_parent` of each by id, summarised as the table's rows are.
        async fn list_child_summaries(
            &self,
            actor: Actor,
            parent_ids: &[i64],
            per_parent: i64,
        ) -> Result<Vec<SitemapSummary>> => list_child_summaries_impl;

        /// How the live descendants of each of these indexes (of sites of the actor) stand: one
        /// tally per index that has any, by index id.
        async fn tree_tallies(&self, actor: Actor, index_ids: &[i64]) -> Result<Vec<TreeTally>> => tree_tallies_impl;

        /// The reads (downloads other than "unchanged") of a sitemap of the actor and of its live
        /// descendants, newest first, at most `limit`: the history of an index's roll-up.
        async fn tree_reads(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>>
            => tree_reads_impl;

        /// Findings of the last reads of a site's live sitemaps (or of one sitemap's tree: the
        /// sitemap and, for an index, its live children at any depth), the first `per_rule` of
        /// each rule after `offset`, each with its rule's total; grouped by the caller.
        async fn finding_examples(&self, actor: Actor, query: &FindingQuery) -> Result<Vec<FindingExample>>
            => finding_examples_impl;

        /// A page of the live URLs a sitemap of the actor lists (an index: those its live children
        /// list, at any depth, each once), by id; `contains` (if not empty) keeps those whose URL
        /// contains it, ignoring ASCII case.
        async fn search_sitemap_urls(
            &self,
            actor: Actor,
            sitemap_id: i64,
            contains: &str,
            after: i64,
            limit: i64,
        ) -> Result<Page<UrlRow>> => search_sitemap_urls_impl;

        /// The downloads of a sitemap of the actor, newest first, each with what its read changed
        /// in the sitemap's URL list (see `diffs.rs`); at most `limit` (1 to 1,000).
        async fn list_read_diffs(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<ReadDiff>>
            => list_read_diffs_impl;

        /// An index's changes rolled up: what the latest read of each of its live children changed
        /// (totals over all of them, and the `limit` children that changed most, 1 to 1,000).
        async fn child_changes(&self, actor: Actor, index_id: i64, limit: i64) -> Result<crate::ChildChanges>
            => child_changes_impl;

        /// A download of the actor with what its read changed.
        async fn read_diff(&self, actor: Actor, download_id: i64) -> Result<ReadDiff> => read_diff_impl;

        /// One page of the URLs a download's read added, removed or changed (of one kind, or all),
        /// by URL id; at most [`MAX_DIFF_URLS`](crate::MAX_DIFF_URLS) of each kind are kept. A
        /// download without a diff (a 304, a failed fetch) lists none.
        async fn list_diff_urls(
            &self,
            actor: Actor,
            download_id: i64,
            change: Option<Change>,
            after: i64,
            limit: i64,
        ) -> Result<Page<DiffUrl>> => list_diff_urls_impl;

        /// A sitemap's lastmod measures (see `trust.rs`): its last read's counts and the URL
        /// checker's comparisons of the URLs it lists.
        async fn lastmod_trust(&self, actor: Actor, sitemap_id: i64) -> Result<crate::LastmodTrust>
            => lastmod_trust_impl;

        /// Findings `offset..offset+limit` of a download of the actor, in stored order.
        async fn list_findings_page(
            &self,
            actor: Actor,
            download_id: i64,
            offset: i64,
            limit: i64,
        ) -> Result<Vec<FindingRecord>> => list_findings_page_impl;

        /// Verified sites whose check run is due, up to `limit`: a run whose process's lease
        /// expired first (it resumes), then sites never checked, then the longest ago, then the
        /// sites whose reads added URLs since their last run ([`CheckTrigger::NewUrls`], when it
        /// ended [`NEW_URL_CHECK_GAP`](crate::NEW_URL_CHECK_GAP) before `now`). Due means as the
        /// trigger says; [`Store::claim_check_run`] decides for sure.
        async fn sites_due_for_check_run(
            &self,
            now: Timestamp,
            complete_before: Timestamp,
            failed_before: Timestamp,
            limit: i64,
        ) -> Result<Vec<i64>> => check_runs_due;

        /// Claims the site's check run for `owner` until `lease_until`, in one transaction that
        /// holds across processes: takes over a run whose lease expired (where it was), or starts
        /// one (counting the live URLs) if `trigger` allows, the site is verified and no other
        /// site of its origin is being checked. A refusal says why.
        async fn claim_check_run(
            &self,
            site_id: i64,
            owner: &str,
            trigger: &CheckTrigger,
            now: Timestamp,
            lease_until: Timestamp,
        ) -> Result<std::result::Result<CheckRun, CheckRefusal>> => check_runs_claim;

        /// Up to `limit` live URLs of a site with an id above `after_url_id`, by id: a run's next
        /// page (keyset pagination, so memory stays flat whatever the site's size).
        async fn urls_to_check(&self, site_id: i64, after_url_id: i64, limit: i64) -> Result<Vec<(i64, String)>>
            => check_runs_urls;

        // Alike on purpose: its inherent method in check_runs.rs repeats this signature (see the
        // header).
        /// Records a page of a run in one transaction: each URL's outcome (replacing its previous
        /// one), the run's progress up to `after_url_id`, and its lease renewed to `lease_until`.
        /// `false` (and nothing written) when `owner` no longer holds the run.
        async fn record_check_page(
            &self,
            site_id: i64,
            owner: &str,
            checks: &[UrlCheckRecord],
            after_url_id: i64,
            now: Timestamp,
            lease_until: Timestamp,
        ) -> Result<bool> => check_runs_record;

        /// Ends `owner`'s run: `done` (every URL checked) when `error` is `None`, else `failed`
        /// with it; returns the ended run, or `None` when `owner` no longer holds it.
        async fn finish_check_run(
            &self,
            site_id: i64,
            owner: &str,
            error: Option<&str>,
            now: Timestamp,
        ) -> Result<Option<CheckRun>> => check_runs_finish;

        /// Gives `owner`'s running runs back (their lease ends now) so that any process resumes
        /// them at once; at shutdown. Returns how many.
        async fn release_check_runs(&self, owner: &str, now: Timestamp) -> Result<u64> => check_runs_release;

        /// The current or last check run of a site of the actor, if it was ever checked.
        async fn check_run(&self, actor: Actor, site_id: i64) -> Result<Option<CheckRun>> => check_run_impl;

        /// Records URL outcomes outside a run (one row per URL, replacing its previous outcome).
        async fn record_url_checks(&self, site_id: i64, checks: &[UrlCheckRecord], now: Timestamp) -> Result<()>
            => record_url_checks_impl;

        // Alike on purpose: its inherent method in sitemaps.rs repeats this signature (see the
        // header).
        /// A page of the sitemaps of a site of the actor that are not removed, by id: all, or the
        /// children of one index (`parent_id`; with those the user removed, which the index still
        /// lists), or those of one source (robots.txt's).
        async fn page_sitemaps(
            &self,
            actor: Actor,
            site_id: i64,
            parent_id: Option<i64>,
            source: Option<Source>,
            after: i64,
            limit: i64,
        ) -> Result<Page<Sitemap>> => page_sitemaps_impl;

        /// A page of the live URLs of a site of the actor that failed their last check, by URL id;
        /// of one kind (see [`UrlFailure::kind`]), those that became failing since the check before
        /// ([`NEWLY_FAILING`](crate::NEWLY_FAILING)), or all.
        async fn list_url_failures(
            &self,
            actor: Actor,
            site_id: i64,
            kind: Option<&str>,
            after: i64,
            limit: i64,
        ) -> Result<Page<UrlFailure>> => list_url_failures_impl;

        /// What changed between the two last checks of the live URLs of a site of the actor: how
        /// many became failing and how many were fixed, and a page of the fixed ones by URL id (at
        /// most `limit`, 1 to 1,000). The newly failing are `list_url_failures` of the kind
        /// [`NEWLY_FAILING`](crate::NEWLY_FAILING).
        async fn check_changes(&self, actor: Actor, site_id: i64, after: i64, limit: i64) -> Result<crate::CheckChanges>
            => check_changes_impl;

        /// How many live URLs of a site of the actor failed their last check, per kind.
        async fn url_failure_kinds(&self, actor: Actor, site_id: i64) -> Result<Vec<FailureKindCount>>
            => url_failure_kinds_impl;

        /// Records the site's live and failing URLs now (after a checker run); keeps 400 days.
        async fn record_site_snapshot(&self, site_id: i64, now: Timestamp) -> Result<SiteSnapshot>
            => record_site_snapshot_impl;

        /// The last `limit` snapshots of a site of the actor, oldest first.
        async fn list_site_snapshots(&self, actor: Actor, site_id: i64, limit: i64) -> Result<Vec<SiteSnapshot>>
            => list_site_snapshots_impl;

        /// Sitemaps of the actor sorted and filtered (`listing.rs`): of one site, children
        /// included (`site_id`), or every sitemap of the actor's sites that is no index's child
        /// (`None`, the console's table); rows `offset..offset+limit`, and whether more follow.
        async fn list_sitemaps_by(
            &self,
            actor: Actor,
            site_id: Option<i64>,
            listing: &SitemapListing,
            offset: i64,
            limit: i64,
        ) -> Result<(Vec<SitemapSummary>, bool)> => list_sitemaps_by_impl;

        // --- members (several users per site) ---

        /// The actor's role on a site (an admin is an owner of every site).
        async fn site_role(&self, actor: Actor, site_id: i64) -> Result<Role> => site_role_impl;

        /// The actor's role on every site it may see, in one read: a list that needs the role of
        /// each row (which actions to offer, whether the token shows) asks this once, not
        /// [`Store::site_role`] per row.
        async fn site_roles(&self, actor: Actor) -> Result<crate::SiteRoles> => site_roles_impl;

        /// The site, if the actor may change it: an owner's (or an admin's); a reader gets
        /// [`Error::Forbidden`](crate::Error::Forbidden), a stranger `NotFound`.
        async fn site_as_owner(&self, actor: Actor, site_id: i64) -> Result<Site> => site_as_owner_impl;

        /// The members of a site of the actor, by membership id.
        async fn list_members(&self, actor: Actor, site_id: i64) -> Result<Vec<Member>> => list_members_impl;

        /// The invitations of a site of the actor that have not expired, by id.
        async fn list_invitations(&self, actor: Actor, site_id: i64, now: Timestamp) -> Result<Vec<Invitation>>
            => list_invitations_impl;

        /// An owner invites an address: returns the invitation and its link's token (stored
        /// hashed, valid `ttl_seconds`, single-use). Inviting an address again replaces its link.
        /// A member's address is [`Error::Conflict`](crate::Error::Conflict); past
        /// [`MAX_MEMBERS_PER_SITE`](crate::MAX_MEMBERS_PER_SITE) members and invitations,
        /// [`Error::Quota`](crate::Error::Quota).
        async fn create_invitation(
            &self,
            actor: Actor,
            site_id: i64,
            email: &str,
            role: Role,
            now: Timestamp,
            ttl_seconds: i64,
        ) -> Result<(Invitation, String)> => create_invitation_impl;

        /// An owner withdraws an invitation: its link stops working.
        async fn revoke_invitation(&self, actor: Actor, invitation_id: i64) -> Result<()> => revoke_invitation_impl;

        /// The invitation of a link's token, if it is valid now.
        async fn invitation_by_token(&self, token: &str, now: Timestamp) -> Result<Option<InvitationInfo>>
            => invitation_by_token_impl;

        /// Accepts an invitation for the actor, who must be signed in with the invited address
        /// (else [`Error::Forbidden`](crate::Error::Forbidden)); the token is used up. An unknown,
        /// used or expired token is `NotFound`. Returns the site.
        async fn accept_invitation(&self, actor: Actor, token: &str, now: Timestamp) -> Result<Site>
            => accept_invitation_impl;

        /// Removes a member: an owner removes anyone, any member may leave. The last owner stays
        /// ([`Error::Refused`](crate::Error::Refused)); when the user the site counts against
        /// leaves, it counts against another owner.
        async fn remove_member(&self, actor: Actor, member_id: i64) -> Result<()> => remove_member_impl;

        /// The site of a membership, for the service (no actor: the caller checks who asks), which
        /// re-judges a site's verification once a member whose domain property may have granted it
        /// is removed (`remove_member` marks such a site due).
        async fn site_of_member(&self, member_id: i64) -> Result<Option<i64>> => site_of_member_impl;

        // --- e-mail alerts (`alerts.rs`) ---

        /// The actor's e-mail alerts for a site of theirs (a stranger's site is `NotFound`).
        async fn alert_setting(&self, actor: Actor, site_id: i64) -> Result<AlertSetting> => alert_setting_impl;

        /// Turns the actor's alerts for a site on or off; any member may, a reader too (it is
        /// their own mail). An admin who is no member is [`Error::Refused`](crate::Error::Refused).
        async fn set_alerts(&self, actor: Actor, site_id: i64, enabled: bool) -> Result<AlertSetting>
            => set_alerts_impl;

        /// What an unsubscribe link's token stands for, after turning its alerts on or off when
        /// `enabled` is given (the same answer however often: idempotent); `None` for a token no
        /// mail carried. Needs no session: the token is the proof.
        async fn alert_link(&self, token: &str, enabled: Option<bool>) -> Result<Option<AlertLink>> => alert_link_impl;

        /// After a read of a sitemap: the sitemap and the indexes above it whose roll-up got worse
        /// than it was last judged (see `alerts.rs` for the order), each told once across processes.
        async fn alert_worsenings(&self, sitemap_id: i64) -> Result<Vec<Worsening>> => alert_worsenings_impl;

        /// The members of a site to mail an alert to now: alerts on, and no alert of this site
        /// mailed to them in the last `window_seconds`; their mail is claimed (one process, once a
        /// window), with each one's unsubscribe token.
        async fn claim_alert_recipients(
            &self,
            site_id: i64,
            now: Timestamp,
            window_seconds: i64,
        ) -> Result<Vec<AlertRecipient>> => claim_alert_recipients_impl;
        // --- domain properties (DNS TXT verification, `domains.rs`) ---

        /// Adds a domain property for the actor with a fresh token: the name in normal form (the
        /// server's to make). The actor's name claimed again is [`Error::Conflict`](crate::Error::Conflict);
        /// past [`MAX_DOMAINS_PER_USER`](crate::MAX_DOMAINS_PER_USER), [`Error::Quota`](crate::Error::Quota).
        async fn create_domain(&self, actor: Actor, domain: &str, now: Timestamp) -> Result<DomainProperty>
            => create_domain_impl;

        /// One domain property of the actor (any for an admin); another user's is `NotFound`.
        async fn domain(&self, actor: Actor, domain_id: i64) -> Result<DomainProperty> => domain_impl;

        /// The actor's domain properties (all for an admin), by id.
        async fn list_domains(&self, actor: Actor) -> Result<Vec<DomainProperty>> => list_domains_impl;

        /// Deletes a domain property of the actor.
        async fn delete_domain(&self, actor: Actor, domain_id: i64) -> Result<()> => delete_domain_impl;

        /// Records a TXT look-up: `ok` keeps or sets `verified_at`, a failure clears it.
        async fn record_domain_verification(&self, domain_id: i64, ok: bool, now: Timestamp) -> Result<()>
            => record_domain_verification_impl;

        /// Claims up to `limit` domain properties last looked up before `before` (or never), as
        /// [`Store::sites_to_verify`] claims sites.
        async fn domains_to_verify(&self, before: Timestamp, now: Timestamp, limit: i64) -> Result<Vec<DomainProperty>>
            => domains_to_verify_impl;

        /// The verified domain properties of the owners of a site (the ones that may cover it).
        async fn verified_domains_of_site_owners(&self, site_id: i64) -> Result<Vec<DomainProperty>>
            => verified_domains_of_site_owners_impl;

        /// The sites a user owns (the ones a property of that user may cover), by id.
        async fn sites_owned_by(&self, user_id: i64) -> Result<Vec<Site>> => sites_owned_by_impl;

        // --- webhooks ---

        // Alike on purpose: its inherent method in webhooks.rs repeats this signature (see the
        // header).
        /// An owner adds a webhook endpoint to a site (`events` from
        /// [`WEBHOOK_EVENTS`](crate::WEBHOOK_EVENTS), checked by the caller, as is the URL). Past
        /// [`MAX_WEBHOOKS_PER_SITE`](crate::MAX_WEBHOOKS_PER_SITE), or
        /// [`MAX_WEBHOOKS_PER_USER`](crate::MAX_WEBHOOKS_PER_USER) over the sites of the account the
        /// site counts against, [`Error::Quota`](crate::Error::Quota).
        async fn create_webhook(
            &self,
            actor: Actor,
            site_id: i64,
            url: &str,
            secret_value: &str,
            events: &[&str],
            now: Timestamp,
        ) -> Result<Webhook> => create_webhook_impl;

        /// The webhook endpoints of a site the actor is a member of, by id.
        async fn list_webhooks(&self, actor: Actor, site_id: i64) -> Result<Vec<Webhook>> => list_webhooks_impl;

        /// One endpoint of a site the actor is a member of.
        async fn webhook(&self, actor: Actor, webhook_id: i64) -> Result<Webhook> => webhook_impl;

        /// An owner deletes an endpoint, with its waiting deliveries and its log.
        async fn delete_webhook(&self, actor: Actor, webhook_id: i64) -> Result<()> => delete_webhook_impl;

        /// The newest attempts of an endpoint (at most `limit`, and at most
        /// [`ATTEMPTS_KEPT`](crate::ATTEMPTS_KEPT) are kept), newest first.
        async fn webhook_attempts(&self, actor: Actor, webhook_id: i64, limit: i64) -> Result<Vec<WebhookAttempt>>
            => webhook_attempts_impl;

        /// Queues a delivery of `event` (its data `payload`, JSON) for every endpoint of the site
        /// that asked for it (or only `only_webhook`), due now; an endpoint whose account has
        /// [`MAX_PENDING_DELIVERIES_PER_USER`](crate::MAX_PENDING_DELIVERIES_PER_USER) waiting gets
        /// none, and its log says so.
        async fn enqueue_webhook_event(
            &self,
            site_id: i64,
            event: &str,
            payload: &str,
            only_webhook: Option<i64>,
            now: Timestamp,
        ) -> Result<Enqueued> => enqueue_webhook_event_impl;

        /// Leases up to `limit` due deliveries for `worker` for `lease_seconds`, fairly: one in
        /// flight per endpoint (its oldest), none for an endpoint unverified, disabled or paused,
        /// and the accounts whose sites the endpoints are on take turns. A delivery whose lease
        /// expired is due again.
        async fn lease_webhook_deliveries(
            &self,
            worker: &str,
            now: Timestamp,
            lease_seconds: i64,
            limit: i64,
        ) -> Result<Vec<LeasedDelivery>> => lease_webhook_deliveries_impl;

        /// Records an attempt of a leased delivery in its endpoint's log: delivered or given up, the
        /// delivery leaves the queue; to be retried, it is due at `record.retry_at`. A failure also
        /// pauses the endpoint until then (after a delivery given up, for
        /// [`webhook_backoff`](crate::webhook_backoff)) and, at
        /// [`WEBHOOK_FAILURES_TO_DISABLE`](crate::WEBHOOK_FAILURES_TO_DISABLE) in a row, disables
        /// it (see [`Store::claim_disabled_webhooks`]); a success clears its failures. `false` (and
        /// nothing recorded) when `worker` no longer holds the lease.
        async fn finish_webhook_attempt(
            &self,
            worker: &str,
            delivery: &LeasedDelivery,
            record: &AttemptRecord,
        ) -> Result<bool> => finish_webhook_attempt_impl;

        /// Puts a leased delivery back without an attempt, due at `until` (the outbound gate
        /// refused it for now: its target host's budget is spent); nothing counts against the
        /// endpoint. `false` when `worker` no longer holds the lease.
        async fn postpone_webhook_delivery(&self, worker: &str, delivery_id: i64, until: Timestamp) -> Result<bool>
            => postpone_webhook_delivery_impl;

        /// The URL and signing key of an endpoint, for its verification handshake (the service's:
        /// the caller checked the actor may verify it).
        async fn webhook_target(&self, webhook_id: i64) -> Result<Option<(String, String)>> => webhook_target_impl;

        /// Records a verification handshake: answered, the endpoint is verified and starts afresh
        /// (failures cleared, enabled again); not answered, it receives nothing until it is.
        async fn record_webhook_handshake(&self, webhook_id: i64, ok: bool, now: Timestamp) -> Result<()>
            => record_webhook_handshake_impl;

        /// Endpoints disabled since their creator was last told, up to `limit`, claimed (stamped
        /// `now`) so that one process tells each creator once. A claim whose notice could not
        /// be sent is given back with [`Store::unclaim_disabled_webhook`]: the stamp stands
        /// for a notice sent.
        async fn claim_disabled_webhooks(&self, now: Timestamp, limit: i64) -> Result<Vec<crate::DisabledWebhook>>
            => claim_disabled_webhooks_impl;

        /// Gives back the claim made at `claimed_at` on a disabled endpoint's notice (not sent:
        /// held by the gate, or the mail failed): the next claim tells its creator.
        async fn unclaim_disabled_webhook(&self, webhook_id: i64, claimed_at: Timestamp) -> Result<()>
            => unclaim_disabled_webhook_impl;

        // --- retention ---

        /// Deletes what the retention policy no longer keeps (old downloads with their findings,
        /// old pings, expired sessions, URLs removed long ago, stale unverified sites), in
        /// transactions of at most `policy.batch` rows.
        async fn apply_retention(&self, policy: Retention, now: Timestamp) -> Result<RetentionReport>
            => apply_retention_impl;

        // --- the site overview (`overview.rs`) ---

        /// Records a check of the site's proof with the proof found: `verified_by` `file`, `meta`
        /// or `domain` (with the property's name in `domain`) verifies it, `None` unverifies it.
        /// [`Store::record_verification`] records a check without saying which proof it found.
        async fn record_proof(
            &self,
            site_id: i64,
            verified_by: Option<&str>,
            domain: Option<&str>,
            now: Timestamp,
        ) -> Result<()> => record_proof_impl;

        /// Which proof keeps a site of the actor verified, as its last check found it.
        async fn site_proof(&self, actor: Actor, site_id: i64) -> Result<crate::SiteProof> => site_proof_impl;

        /// A site's sitemaps counted by the status word each shows, with their errors, warnings
        /// and URLs: the overview's totals, in one read whatever the number of sitemaps.
        async fn site_totals(&self, actor: Actor, site_id: i64) -> Result<Vec<crate::WordTotal>> => site_totals_impl;

        // Alike on purpose: its inherent method in overview.rs repeats this signature (see the
        // header).
        /// Records an IndexNow submission received for a verified site (`refused`: why its URLs
        /// were not taken), keeping the site's newest [`crate::MAX_INDEXNOW_RECEIPTS`].
        async fn record_indexnow_receipt(
            &self,
            site_id: i64,
            received_at: Timestamp,
            url_count: i64,
            key_location: &str,
            refused: Option<&str>,
        ) -> Result<()> => record_indexnow_receipt_impl;

        /// The newest IndexNow submissions received for a site of the actor, newest first.
        async fn list_indexnow_receipts(&self, actor: Actor, site_id: i64, limit: i64) -> Result<Vec<crate::IndexNowReceipt>>
            => list_indexnow_receipts_impl;

        provided {
            /// Leases up to `limit` due sitemaps of verified sites to `worker` until
            /// `now + lease_seconds`, without caps ([`LeasePolicy::UNLIMITED`]). Due: not removed,
            /// `next_fetch_at <= now`, and no lease or an expired one. Two concurrent callers never get
            /// the same sitemap.
            async fn lease_due_sitemaps(
                &self,
                worker: &str,
                now: Timestamp,
                limit: i64,
                lease_seconds: i64,
            ) -> Result<Vec<LeasedSitemap>> {
                self.lease_sitemaps(worker, now, limit, lease_seconds, LeasePolicy::UNLIMITED).await
            }

            /// The findings of a download of the actor, in stored order (at most the 1,000 the
            /// scheduler stores per download).
            async fn list_findings(&self, actor: Actor, download_id: i64) -> Result<Vec<FindingRecord>> {
                self.list_findings_page(actor, download_id, 0, i64::MAX).await
            }

            /// Stores URLs a sitemap lists, once per site: new ones are added, known ones updated
            /// (a changed lastmod or a return from removal sets `changed_at`), and the sitemap's link
            /// to each is stamped `now`. A URL listed twice counts once, with its last entry. Returns how
            /// many distinct URLs were written. No quota: see [`Store::store_urls`].
            async fn upsert_urls(
                &self,
                site_id: i64,
                sitemap_id: i64,
                urls: &[UrlRecord],
                now: Timestamp,
            ) -> Result<u64> {
                Ok(self.store_urls(site_id, sitemap_id, urls, now, i64::MAX).await?.written)
            }
        }
    }
}
