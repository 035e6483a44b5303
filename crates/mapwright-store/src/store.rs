//! The `Store` trait: every operation the service needs, independent of the backend.
//!
//! `#[async_trait]` rather than native `async fn` in traits: the server picks SQLite or
//! PostgreSQL at run time and holds an `Arc<dyn Store>`, and native async trait methods are
//! not object-safe. The cost, one boxed future per call, is nothing next to a database
//! round trip.

use async_trait::async_trait;

use crate::Result;
use crate::model::*;

/// Storage of the sitemap service.
///
/// Methods that take an [`Actor`] act on behalf of a user and see only that user's rows
/// (all rows for an admin): another user's row is [`Error::NotFound`](crate::Error::NotFound).
/// Methods without one are for the service itself (scheduler, verifier, ping).
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// "sqlite" or "postgres".
    fn backend(&self) -> &'static str;

    /// Applies pending migrations (done by `open`; running it again is a no-op).
    async fn migrate(&self) -> Result<()>;

    /// Closes the pool, waiting for connections to return.
    async fn close(&self);

    // --- wake-ups across processes ---

    /// Tells the workers of every process sharing the database that work became due
    /// (PostgreSQL: `NOTIFY`); nothing on SQLite, where one process serves.
    async fn notify_due(&self) -> Result<()>;

    /// A connection that hears [`Store::notify_due`] from any process; `None` on SQLite.
    async fn due_listener(&self) -> Result<Option<crate::DueListener>>;

    // --- users, sessions, tokens ---

    /// Creates a user from an already computed argon2 hash; a taken e-mail is a `Conflict`.
    async fn create_user(&self, email: &str, password_hash: &str, is_admin: bool, now: Timestamp) -> Result<User>;

    /// Makes the user with this e-mail an admin (`serve --admin`); false when no such user yet.
    async fn grant_admin(&self, email: &str) -> Result<bool>;

    /// The user and stored password hash for an e-mail, to check a sign-in.
    async fn user_credentials(&self, email: &str) -> Result<Option<(User, String)>>;

    /// Records a sign-up waiting for the confirmation of its address, valid `ttl_seconds`; a
    /// new request for the same address replaces the old one (and its link). An address that
    /// has an account is `Taken` and nothing is stored. Past
    /// [`MAX_PENDING_SIGNUPS`](crate::MAX_PENDING_SIGNUPS) pending ones, [`Error::Quota`](crate::Error::Quota).
    async fn request_signup(
        &self,
        email: &str,
        password_hash: &str,
        now: Timestamp,
        ttl_seconds: i64,
    ) -> Result<SignupRequest>;

    /// The address and password hash of the pending sign-up whose link carries this token,
    /// while it has not expired.
    async fn pending_signup(&self, token: &str, now: Timestamp) -> Result<Option<(String, String)>>;

    /// Makes the account of a pending sign-up (its link followed and its password checked by
    /// the caller) and forgets the sign-up; `None` when the link is unknown, used or expired.
    async fn confirm_signup(&self, token: &str, now: Timestamp) -> Result<Option<User>>;

    /// Starts a session for a user; returns the secret token for the cookie. A user keeps at
    /// most [`MAX_SESSIONS_PER_USER`](crate::MAX_SESSIONS_PER_USER): the oldest end first.
    async fn create_session(&self, user_id: i64, now: Timestamp, ttl_seconds: i64) -> Result<String>;

    /// The user of a session token that has not expired.
    async fn session_user(&self, token: &str, now: Timestamp) -> Result<Option<User>>;

    /// Ends a session (sign-out); an unknown token is not an error.
    async fn delete_session(&self, token: &str) -> Result<()>;

    /// Deletes expired sessions; returns how many.
    async fn delete_expired_sessions(&self, now: Timestamp) -> Result<u64>;

    /// Creates an API token; returns it and its secret (shown once). Past
    /// [`MAX_API_TOKENS`](crate::MAX_API_TOKENS), [`Error::Quota`](crate::Error::Quota).
    async fn create_api_token(&self, actor: Actor, name: &str, now: Timestamp) -> Result<(ApiToken, String)>;

    /// The actor's tokens (every token for an admin), newest first.
    async fn list_api_tokens(&self, actor: Actor) -> Result<Vec<ApiToken>>;

    /// Revokes a token of the actor.
    async fn revoke_api_token(&self, actor: Actor, token_id: i64, now: Timestamp) -> Result<()>;

    /// The user of a valid (not revoked) API token secret; records the use.
    async fn api_token_user(&self, secret: &str, now: Timestamp) -> Result<Option<User>>;

    // --- sites ---

    /// Adds a site for the actor with a fresh verification token. A user may have at most
    /// [`MAX_UNVERIFIED_SITES`](crate::MAX_UNVERIFIED_SITES) sites not verified and
    /// [`MAX_SITES_PER_USER`](crate::MAX_SITES_PER_USER) in all: past either,
    /// [`Error::Quota`](crate::Error::Quota).
    async fn create_site(&self, actor: Actor, origin: &str, now: Timestamp) -> Result<Site>;

    /// One site of the actor.
    async fn site(&self, actor: Actor, site_id: i64) -> Result<Site>;

    /// The actor's sites (all for an admin), by id.
    async fn list_sites(&self, actor: Actor) -> Result<Vec<Site>>;

    /// Deletes a site with its sitemaps, downloads and URLs.
    async fn delete_site(&self, actor: Actor, site_id: i64) -> Result<()>;

    /// Records a verification check: `ok` keeps or sets `verified_at`, a failure clears it.
    async fn record_verification(&self, site_id: i64, ok: bool, now: Timestamp) -> Result<()>;

    /// Claims up to `limit` sites whose verification was last checked before `before` (or
    /// never), oldest first: their `last_checked_at` becomes `now`, so that the re-check pass of
    /// another process sharing the database does not take them too (`SKIP LOCKED` on
    /// PostgreSQL); [`Store::record_verification`] then records the outcome. A pass cut short
    /// leaves its sites for the next period.
    async fn sites_to_verify(&self, before: Timestamp, now: Timestamp, limit: i64) -> Result<Vec<Site>>;

    /// Verified sites with this origin (of any owner), for ping, robots.txt and IndexNow.
    async fn verified_sites_by_origin(&self, origin: &str) -> Result<Vec<Site>>;

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
    ) -> Result<Sitemap>;

    /// The service adds a sitemap (robots.txt, index child) to a site, no user involved.
    async fn add_sitemap_for_site(
        &self,
        site_id: i64,
        url: &str,
        source: Source,
        parent_id: Option<i64>,
        now: Timestamp,
    ) -> Result<Sitemap>;

    /// One sitemap on a site of the actor.
    async fn sitemap(&self, actor: Actor, sitemap_id: i64) -> Result<Sitemap>;

    /// The sitemap with this URL on a site of the actor (removed or not), if any: adding one
    /// that exists says so instead of adding it twice.
    async fn sitemap_by_url(&self, actor: Actor, site_id: i64, url: &str) -> Result<Option<Sitemap>>;

    /// The sitemaps of a site of the actor, removed ones included, by id.
    async fn list_sitemaps(&self, actor: Actor, site_id: i64) -> Result<Vec<Sitemap>>;

    /// Resubmit: due now and submitted now; a removed one is restored (pending until read).
    async fn resubmit_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()>;

    /// Removes a sitemap: no more fetches, and its URLs leave the site unless another
    /// sitemap lists them. An index's children go with it. A removed sitemap forgets its
    /// validators and verdict, so if it comes back it is read in full (never a 304 over the URLs
    /// it dropped), and the user's removal sticks while an index lists it.
    async fn remove_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()>;

    /// Records a public ping and brings forward the fetch of the sitemaps with this URL on
    /// verified sites (a ping alone never adds a sitemap).
    async fn record_ping(&self, sitemap_url: &str, client_addr: &str, now: Timestamp) -> Result<PingOutcome>;

    /// Pings from a client address since a time, for rate limiting.
    async fn pings_from_client_since(&self, client_addr: &str, since: Timestamp) -> Result<i64>;

    /// Pings naming a sitemap URL since a time, for rate limiting.
    async fn pings_for_sitemap_since(&self, sitemap_url: &str, since: Timestamp) -> Result<i64>;

    // --- the fetch queue ---

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
    ) -> Result<Vec<LeasedSitemap>>;

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
    ) -> Result<i64>;

    /// Gives a lease back without a download (shutdown): the sitemap is due again at once.
    async fn release(&self, worker: &str, sitemap_id: i64) -> Result<()>;

    /// Releases every lease a worker holds (graceful shutdown); returns how many.
    async fn release_all(&self, worker: &str) -> Result<u64>;

    /// How many sitemaps are due and not leased, for the queue-depth metric.
    async fn queue_depth(&self, now: Timestamp) -> Result<i64>;

    /// The downloads of a sitemap of the actor, newest first.
    async fn list_downloads(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>>;

    /// The findings of a download of the actor, in stored order (at most the 1,000 the
    /// scheduler stores per download).
    async fn list_findings(&self, actor: Actor, download_id: i64) -> Result<Vec<FindingRecord>> {
        self.list_findings_page(actor, download_id, 0, i64::MAX).await
    }

    // --- scheduler ---

    /// A site by id, for the service itself (scheduler, verifier); no owner check.
    async fn site_by_id(&self, site_id: i64) -> Result<Site>;

    /// A sitemap by id, for the service itself; no owner check.
    async fn sitemap_by_id(&self, sitemap_id: i64) -> Result<Sitemap>;

    /// Records the console's summary and the schedule's state of a leased sitemap, before
    /// [`Store::complete`]. `LeaseLost` when `worker` no longer holds the lease.
    async fn record_fetch_summary(&self, worker: &str, sitemap_id: i64, summary: &FetchSummary) -> Result<()>;

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
    ) -> Result<ChildSync>;

    // --- URLs ---

    /// Stores URLs a sitemap lists, once per site: new ones are added, known ones updated
    /// (a changed lastmod or a return from removal sets `changed_at`), and the sitemap's link
    /// to each is stamped `now`. A URL listed twice counts once, with its last entry. Returns how
    /// many distinct URLs were written. No quota: see [`Store::store_urls`].
    async fn upsert_urls(&self, site_id: i64, sitemap_id: i64, urls: &[UrlRecord], now: Timestamp) -> Result<u64> {
        Ok(self.store_urls(site_id, sitemap_id, urls, now, i64::MAX).await?.written)
    }

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
    ) -> Result<UrlWrite>;

    /// After a full read of a sitemap: unlinks the URLs it no longer lists (link stamped
    /// before `seen_since`) and marks removed, at `now`, the site's URLs no sitemap lists.
    /// Returns how many URLs were marked removed.
    async fn sweep_urls(&self, site_id: i64, sitemap_id: i64, seen_since: Timestamp, now: Timestamp) -> Result<u64>;

    /// A page of a site's URLs, by id.
    async fn list_urls(&self, actor: Actor, site_id: i64, query: UrlQuery) -> Result<Page<UrlRow>>;

    /// The sitemap ids listing a URL of the actor.
    async fn url_sitemaps(&self, actor: Actor, url_id: i64) -> Result<Vec<i64>>;

    /// The crawl frontier: live URLs of a site in visiting order: changed since `since`
    /// first (newest change first), then by priority (absent = 0.5) and changefreq.
    async fn frontier(&self, actor: Actor, site_id: i64, since: Timestamp, limit: i64) -> Result<Vec<UrlRow>>;

    // --- api ---

    /// URLs pushed for a site (IndexNow): unknown ones are added, known ones (removed ones
    /// included) are marked live and changed at `now`, so they lead the crawl frontier.
    /// Lastmod, changefreq and priority are left as the sitemaps gave them. Pushed URLs link
    /// to no sitemap: the sitemaps stay the inventory of the site, so the next sweep after a
    /// read of one of its sitemaps marks removed those no sitemap lists. Returns how many
    /// distinct URLs were written.
    async fn record_pushed_urls(&self, site_id: i64, urls: &[String], now: Timestamp) -> Result<u64>;

    // --- console ---

    /// A page of the actor's sitemaps that are not an index's children (removed ones included,
    /// so the table can offer to restore them), by id, with their site's origin and the counts
    /// of their last download that read the file: the console's table.
    async fn list_sitemap_summaries(&self, actor: Actor, after: i64, limit: i64) -> Result<Page<SitemapSummary>>;

    /// The children of these indexes (of sites of the actor), removed ones included, up to
    /// `per_parent` of each by id, summarised as the table's rows are.
    async fn list_child_summaries(
        &self,
        actor: Actor,
        parent_ids: &[i64],
        per_parent: i64,
    ) -> Result<Vec<SitemapSummary>>;

    /// Findings of the last reads of a site's live sitemaps (or of one sitemap), the first
    /// `per_rule` of each rule after `offset`, each with its rule's total; grouped by the caller.
    async fn finding_examples(&self, actor: Actor, query: &FindingQuery) -> Result<Vec<FindingExample>>;

    /// A page of the live URLs a sitemap of the actor lists, by id; `contains` (if not empty)
    /// keeps those whose URL contains it, ignoring ASCII case.
    async fn search_sitemap_urls(
        &self,
        actor: Actor,
        sitemap_id: i64,
        contains: &str,
        after: i64,
        limit: i64,
    ) -> Result<Page<UrlRow>>;

    /// Findings `offset..offset+limit` of a download of the actor, in stored order.
    async fn list_findings_page(
        &self,
        actor: Actor,
        download_id: i64,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<FindingRecord>>;

    /// Verified sites whose URLs were last checked before `before` (or never), oldest first.
    async fn sites_due_for_url_check(&self, before: Timestamp, limit: i64) -> Result<Vec<Site>>;

    /// Up to `limit` live URLs of a site to check: never checked first, then the longest ago,
    /// so successive runs over a big site rotate through all of it.
    async fn urls_to_check(&self, site_id: i64, limit: i64) -> Result<Vec<(i64, String)>>;

    /// Records the outcome of a check run of a site: one row per URL checked (replacing its
    /// previous outcome), and the run's time.
    async fn record_url_checks(&self, site_id: i64, checks: &[UrlCheckRecord], now: Timestamp) -> Result<()>;

    /// When the URLs of a site of the actor were last checked.
    async fn last_url_check(&self, actor: Actor, site_id: i64) -> Result<Option<Timestamp>>;

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
    ) -> Result<Page<Sitemap>>;

    /// A page of the live URLs of a site of the actor that failed their last check, by URL id;
    /// of one kind (see [`UrlFailure::kind`]) or all.
    async fn list_url_failures(
        &self,
        actor: Actor,
        site_id: i64,
        kind: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Page<UrlFailure>>;

    /// How many live URLs of a site of the actor failed their last check, per kind.
    async fn url_failure_kinds(&self, actor: Actor, site_id: i64) -> Result<Vec<FailureKindCount>>;

    /// Records the site's live and failing URLs now (after a checker run); keeps 400 days.
    async fn record_site_snapshot(&self, site_id: i64, now: Timestamp) -> Result<SiteSnapshot>;

    /// The last `limit` snapshots of a site of the actor, oldest first.
    async fn list_site_snapshots(&self, actor: Actor, site_id: i64, limit: i64) -> Result<Vec<SiteSnapshot>>;

    // --- retention ---

    /// Deletes what the retention policy no longer keeps (old downloads with their findings,
    /// old pings, expired sessions, URLs removed long ago, stale unverified sites), in
    /// transactions of at most `policy.batch` rows.
    async fn apply_retention(&self, policy: Retention, now: Timestamp) -> Result<RetentionReport>;
}
