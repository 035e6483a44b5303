//! The rows the store reads and writes, as plain Rust values.
//!
//! Times are Unix seconds (`i64`) in both backends, so one set of queries and one set of types
//! serves SQLite and PostgreSQL alike; ids are `i64`.

use serde::Serialize;

use crate::row::row;

/// Unix seconds.
pub type Timestamp = i64;

/// Who acts: every operation on user data takes one, and the queries filter on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// The acting user's id.
    pub user_id: i64,
    /// An admin sees and changes every user's sites.
    pub is_admin: bool,
}

impl From<&User> for Actor {
    fn from(user: &User) -> Self {
        Actor { user_id: user.id, is_admin: user.is_admin }
    }
}

row! {
/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// Id.
    pub id: i64,
    /// Sign-in name.
    pub email: String,
    /// Sees all sites.
    pub is_admin: bool,
    /// When it signed up.
    pub created_at: Timestamp,
}
}

row! {
/// An API token as listed (the secret itself is shown only once, at creation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiToken {
    /// Id.
    pub id: i64,
    /// The owner.
    pub user_id: i64,
    /// A label the user chose.
    pub name: String,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last successful use, if any.
    pub last_used_at: Option<Timestamp>,
    /// When it was revoked; a revoked token authenticates nobody.
    pub revoked_at: Option<Timestamp>,
}
}

row! {
/// A site: an origin (`https://example.com`) that a user claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    /// Id.
    pub id: i64,
    /// The user who added it.
    pub owner_id: i64,
    /// Scheme, host and port, without a trailing slash.
    pub origin: String,
    /// The token to place in `mapwright-<token>.html` or the meta tag.
    pub verification_token: String,
    /// When it was added.
    pub created_at: Timestamp,
    /// When the proof was first seen, while it stays in place; `None` when unverified.
    pub verified_at: Option<Timestamp>,
    /// When verification was last checked.
    pub last_checked_at: Option<Timestamp>,
}
}

/// The last read of a site's robots.txt for its sitemaps ([`Store::robots_read`](crate::Store::robots_read)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RobotsRead {
    /// When it was last read or tried; `None`: never.
    pub at: Option<Timestamp>,
    /// Why it could not be read then; `None`: it was read.
    pub error: Option<String>,
}

/// How a sitemap came to be known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Added through the JSON API.
    Api,
    /// Named by a public ping.
    Ping,
    /// Named in the site's robots.txt.
    Robots,
    /// Came with an IndexNow submission.
    Indexnow,
    /// A child of a sitemap index.
    Index,
}

impl Source {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Api => "api",
            Source::Ping => "ping",
            Source::Robots => "robots",
            Source::Indexnow => "indexnow",
            Source::Index => "index",
        }
    }

    /// The source of a stored name; an unknown name (a newer schema) reads as `Api`.
    pub fn from_name(name: &str) -> Source {
        match name {
            "ping" => Source::Ping,
            "robots" => Source::Robots,
            "indexnow" => Source::Indexnow,
            "index" => Source::Index,
            _ => Source::Api,
        }
    }
}

row! {
// Alike on purpose: the field lists of the rows below (`DownloadRecord`, `Download`, ...) repeat
// this one's shape, one documented field a line; the comment above `DownloadRecord` says why the
// write side has types of its own.
/// A sitemap of a site, with the summary of its last download.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sitemap {
    /// Id.
    pub id: i64,
    /// The site it belongs to.
    pub site_id: i64,
    /// Its URL.
    pub url: String,
    /// How it came (see [`Source`]); kept as text in the row.
    pub source: String,
    /// The index that lists it, for children.
    pub parent_id: Option<i64>,
    /// When it was first submitted (added, or named by robots.txt, an index, a ping), or
    /// restored after a removal: when it became one of the site's sitemaps this time.
    pub submitted_at: Timestamp,
    /// When the scheduler should fetch it next.
    pub next_fetch_at: Timestamp,
    /// When it was last downloaded.
    pub last_downloaded_at: Option<Timestamp>,
    /// "ok", "warnings", "errors" or "failed" for the last download.
    pub status: Option<String>,
    /// HTTP status of the last download.
    pub http_status: Option<i64>,
    /// ETag of the last download, for a conditional request.
    pub etag: Option<String>,
    /// Last-Modified of the last download, for a conditional request.
    pub last_modified: Option<String>,
    /// A hash of the last content, to notice unchanged bytes without validators.
    pub content_hash: Option<String>,
    /// The `<lastmod>` the parent index gave it, to skip unchanged children.
    pub index_lastmod: Option<String>,
    /// When it was removed (by the user, or gone from its index).
    pub removed_at: Option<Timestamp>,
    /// The kinds of entries of the last read, comma-separated from "web", "image", "video",
    /// "news", "hreflang", after the format when it is "rss", "atom", "text" or "oai-pmh" ("index" for a
    /// sitemap index); `None` before the first read.
    pub kinds: Option<String>,
    /// Entries of the last complete or partial read (304s keep the previous count).
    pub url_count: Option<i64>,
    /// The scheduler's current period between fetches, in seconds (adapts to change).
    pub fetch_interval: Option<i64>,
    /// Failed fetches in a row (0 after a success); the scheduler backs off on them.
    pub failures: i64,
    /// The last read found a `<sitemapindex>`: its URLs are its children's.
    pub is_index: bool,
    /// Findings of severity error of the last read of the content (a 304 stands for that
    /// content, so it keeps them).
    pub errors: i64,
    /// Findings of severity warning of the last read of the content (kept by a 304).
    pub warnings: i64,
    /// The worst of its own status and its live children's roll-ups (failed, errors,
    /// warnings, pending, ok), so an index never says "ok" over failing children; for a
    /// sitemap that is not an index, its own status. `None` while pending or removed.
    pub rollup_status: Option<String>,
    /// Its own errors plus those of its live children (an index's children, at any depth).
    pub rollup_errors: i64,
    /// Its own warnings plus those of its live children.
    pub rollup_warnings: i64,
    /// The URLs it stores: an index's the distinct URLs of its live children (at any depth),
    /// any other sitemap's own; 0 when removed (its URLs left with it).
    pub rollup_urls: i64,
    /// The format of the last read, in the core's names (`urlset`, `sitemapindex`, `rss`,
    /// `atom`, `text`): what the API calls its type. `None` before a read that recognised one.
    pub format: Option<String>,
    /// URL entries of the last read, in the sitemap's scope (see [`ContentCounts::web`]).
    pub web_count: Option<i64>,
    /// Of those, entries with at least one image.
    pub image_count: Option<i64>,
    /// Of those, entries with at least one video.
    pub video_count: Option<i64>,
    /// Of those, entries with news.
    pub news_count: Option<i64>,
    /// When it was last submitted (added again, resubmitted or pinged); `None`: not since
    /// `submitted_at`. Read it through [`Sitemap::last_submitted`].
    pub last_submitted_at: Option<Timestamp>,
    /// Whether its site is verified now: a sitemap of a site that is not (it lost its proof,
    /// or never had one) is not read, whatever its `next_fetch_at` says.
    pub site_verified: bool,
    /// When its last attempt was held back by the service's outbound gate (no read was made);
    /// `None` once a read is recorded after it.
    pub held_at: Option<Timestamp>,
    /// The gate's words for that hold, shown to its user: why it was not read.
    pub held_reason: Option<String>,
}
}

impl Sitemap {
    /// The last submission, Search Console's `lastSubmitted`: the latest of `submitted_at` and
    /// `last_submitted_at`. The API's `last_submitted_at` and the console's "Submitted" both
    /// show this one time, so the two never disagree.
    pub fn last_submitted(&self) -> Timestamp {
        self.last_submitted_at.unwrap_or(self.submitted_at).max(self.submitted_at)
    }
}

row! {
/// A sitemap a worker holds a lease on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeasedSitemap {
    /// The sitemap id.
    pub id: i64,
    /// Its site.
    pub site_id: i64,
    /// Its URL.
    pub url: String,
    /// The index it is a child of, if any.
    pub parent_id: Option<i64>,
    /// For a conditional request.
    pub etag: Option<String>,
    /// For a conditional request.
    pub last_modified: Option<String>,
    /// The previous content hash.
    pub content_hash: Option<String>,
    /// Until when the lease holds; after it the sitemap is due again.
    pub lease_expires_at: Timestamp,
}
}

row! {
/// One finding of a download, as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingRecord {
    /// Rule name of RULES.md (`loc-missing`, ...).
    pub rule: String,
    /// "error", "warning" or "info".
    pub severity: String,
    /// 1-based line.
    pub line: Option<i64>,
    /// 1-based column in bytes.
    pub col: Option<i64>,
    /// The URL the finding is about.
    pub loc: Option<String>,
    /// Human-readable message.
    pub message: String,
}
}

// Alike on purpose: the write side (`DownloadRecord`, `UrlRecord`, `FetchSummary`) repeats fields of the rows read
// back (`Download`, `UrlRow`, `Sitemap`): a read row has ids, times and roll-ups the writer
// does not give, and each derives `FromRow` from its own query's columns; one type for both
// would give every write fields it must leave empty.
/// What a worker reports about one download, to [`Store::complete`](crate::Store::complete).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DownloadRecord {
    /// When the download finished.
    pub downloaded_at: Timestamp,
    /// "ok", "warnings", "errors", "failed" or "unchanged".
    pub status: String,
    /// The HTTP status, if a response came.
    pub http_status: Option<i64>,
    /// Bytes received.
    pub bytes: i64,
    /// Wall time.
    pub duration_ms: i64,
    /// Entries read.
    pub url_count: i64,
    /// A fatal error's message (network, limit, not a sitemap), if any.
    pub error: Option<String>,
    /// The findings stored; their severities, plus the omitted counts below, give the error
    /// and warning counts.
    pub findings: Vec<FindingRecord>,
    /// Error findings of the read that are not in `findings` (the worker stores a bounded
    /// number): the counts and the verdict cover every finding, stored or not, so a read whose
    /// one fatal error came after its first 1,000 warnings is never called "warnings".
    pub omitted_errors: i64,
    /// Warning findings of the read that are not in `findings` (see `omitted_errors`).
    pub omitted_warnings: i64,
    /// New ETag (`None` keeps none).
    pub etag: Option<String>,
    /// New Last-Modified.
    pub last_modified: Option<String>,
    /// New content hash.
    pub content_hash: Option<String>,
    /// The diff the read's merge recorded ([`UrlWrite::diff`]), linked to this download.
    pub diff: Option<i64>,
    /// What the read's lastmod values look like, when it parsed the file: replaces the
    /// sitemap's stored tally (see [`LastmodTrust`](crate::LastmodTrust)).
    pub lastmod: Option<crate::LastmodTally>,
    /// After a read whose merge made the sitemap's URLs exactly what its bytes list (complete,
    /// not failed, nothing refused): the key of those bytes, kept with the URL set, so that a
    /// later download of the same bytes is recorded as unchanged without being read
    /// ([`Store::whole_read_key`](crate::Store::whole_read_key)). `None` leaves the key as the
    /// merge left it (cleared: every merge clears it) or, without a merge, as it was.
    pub whole_read: Option<String>,
    /// The download's bytes were those of the last whole read, so every URL of the sitemap was
    /// seen now (their `last_seen_at`) though none was read again.
    pub urls_seen: bool,
}

row! {
/// A stored download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Download {
    /// Id.
    pub id: i64,
    /// The sitemap.
    pub sitemap_id: i64,
    /// When.
    pub downloaded_at: Timestamp,
    /// Summary status.
    pub status: String,
    /// HTTP status.
    pub http_status: Option<i64>,
    /// Bytes received.
    pub bytes: i64,
    /// Wall time.
    pub duration_ms: i64,
    /// Entries read.
    pub url_count: i64,
    /// Findings of severity error.
    pub error_count: i64,
    /// Findings of severity warning.
    pub warning_count: i64,
    /// Fatal error message.
    pub error: Option<String>,
}
}

/// One URL entry as a sitemap gives it, for [`Store::upsert_urls`](crate::Store::upsert_urls).
#[derive(Debug, Clone, PartialEq)]
pub struct UrlRecord {
    /// The URL.
    pub loc: String,
    /// `<lastmod>` as written.
    pub lastmod: Option<String>,
    /// `<changefreq>`.
    pub changefreq: Option<String>,
    /// `<priority>`.
    pub priority: Option<f64>,
}

row! {
/// A URL of a site, as stored once per site.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UrlRow {
    /// Id; pages are ordered by it.
    pub id: i64,
    /// The site.
    pub site_id: i64,
    /// The URL.
    pub loc: String,
    /// Last `<lastmod>` seen.
    pub lastmod: Option<String>,
    /// Last `<changefreq>` seen.
    pub changefreq: Option<String>,
    /// Last `<priority>` seen.
    pub priority: Option<f64>,
    /// First time any sitemap listed it.
    pub first_seen_at: Timestamp,
    /// Last time a sitemap listed it.
    pub last_seen_at: Timestamp,
    /// When it appeared, reappeared, or its lastmod changed.
    pub changed_at: Timestamp,
    /// When it vanished from every sitemap of the site.
    pub removed_at: Option<Timestamp>,
}
}

/// One page of a list, keyed by id (stable under inserts, unlike OFFSET).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    /// The items, in id order.
    pub items: Vec<T>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next_after: Option<i64>,
}

impl<T> Page<T> {
    /// A page from a query that asked for `limit + 1` rows: the extra row only says that
    /// another page follows, whose `after` is the id of this page's last item.
    pub(crate) fn from_one_extra(mut items: Vec<T>, limit: i64, id: impl Fn(&T) -> i64) -> Page<T> {
        let more = items.len() as i64 > limit;
        items.truncate(limit as usize);
        let next_after = if more { items.last().map(id) } else { None };
        Page { items, next_after }
    }
}

/// Which URLs a page of [`Store::list_urls`](crate::Store::list_urls) includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlQuery {
    /// Only URLs with an id above this.
    pub after: i64,
    /// At most this many (clamped to 1..=10,000).
    pub limit: i64,
    /// Include URLs marked removed.
    pub include_removed: bool,
}

impl Default for UrlQuery {
    fn default() -> Self {
        UrlQuery { after: 0, limit: 1000, include_removed: false }
    }
}

/// What a ping did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingOutcome {
    /// How many sitemaps of verified sites had their next fetch brought forward.
    pub scheduled: u64,
}

/// What a worker records about a sitemap besides the download itself, before
/// [`Store::complete`](crate::Store::complete): the console's summary and the schedule's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchSummary {
    /// See [`Sitemap::kinds`]; `None` keeps the stored value (a 304 or a failure).
    pub kinds: Option<String>,
    /// See [`Sitemap::url_count`]; `None` keeps the stored value.
    pub url_count: Option<i64>,
    /// See [`Sitemap::fetch_interval`].
    pub fetch_interval: i64,
    /// See [`Sitemap::failures`].
    pub failures: i64,
    /// See [`Sitemap::format`]; `None` keeps the stored value.
    pub format: Option<String>,
    /// The entries of the read by content type; `None` keeps the stored counts.
    pub contents: Option<ContentCounts>,
}

/// The URL entries of one read by content type, as Search Console counts a sitemap's contents:
/// a Search Console client finds here what it reads from `contents[].submitted`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ContentCounts {
    /// Every URL entry in the sitemap's scope (web pages).
    pub web: i64,
    /// Entries with at least one `<image:image>`.
    pub image: i64,
    /// Entries with at least one `<video:video>`.
    pub video: i64,
    /// Entries with `<news:news>`.
    pub news: i64,
}

/// A child of a sitemap index as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexChild {
    /// The child's URL.
    pub url: String,
    /// Its `<lastmod>` in the index, as written.
    pub lastmod: Option<String>,
}

/// What [`Store::sync_index_children`](crate::Store::sync_index_children) changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChildSync {
    /// Children seen for the first time (due at once).
    pub added: u64,
    /// New children not added: the site holds [`MAX_SITEMAPS_PER_SITE`](crate::MAX_SITEMAPS_PER_SITE).
    pub refused: u64,
    /// Known children whose index lastmod changed, or that came back (due at once).
    pub brought_forward: u64,
    /// Children that left the index (marked removed).
    pub removed: u64,
}

// --- console ---

/// A row of the console's "My sitemaps" table: the sitemap and its site's origin. Its numbers
/// (URLs, errors, warnings) are the sitemap's own stored fields, kept by the store at every
/// read (a 304 keeps those of the read it stands for): one source for them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SitemapSummary {
    /// The sitemap (its columns in the same row).
    #[serde(flatten)]
    pub sitemap: Sitemap,
    /// Its site's origin.
    pub origin: String,
}

impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for SitemapSummary
where
    Sitemap: sqlx::FromRow<'r, R>,
    &'r str: sqlx::ColumnIndex<R>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    fn from_row(row: &'r R) -> Result<Self, sqlx::Error> {
        Ok(Self { sitemap: Sitemap::from_row(row)?, origin: row.try_get("origin")? })
    }
}

row! {
/// How an index's live descendants (at any depth) stand, as the console's roll-up words name
/// them ("1 of 4 sitemaps couldn't be fetched; 7 errors in 1 sitemap").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TreeTally {
    /// The index.
    pub index_id: i64,
    /// Its live descendants.
    pub sitemaps: i64,
    /// Of those, whose last fetch failed.
    pub failed: i64,
    /// Of those, not read yet.
    pub pending: i64,
    /// Of those, with errors in the read that stands.
    pub with_errors: i64,
    /// Of those, with warnings in the read that stands.
    pub with_warnings: i64,
    /// Their URL entries by content type, summed (see [`ContentCounts`]): an index's
    /// `contents`, as Search Console sums its children's.
    pub web: i64,
    /// Entries with images, summed.
    pub image: i64,
    /// Entries with videos, summed.
    pub video: i64,
    /// Entries with news, summed.
    pub news: i64,
}
}

/// The outcome of one live check of a listed URL, as the failing-URLs checker reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlCheckRecord {
    /// The URL's id (from [`Store::urls_to_check`](crate::Store::urls_to_check)).
    pub url_id: i64,
    /// The HTTP status seen, when the failure is a status.
    pub status: Option<i64>,
    /// The rule broken (`url-status`, `url-noindex`, `robots-disallowed`); `None` when fine.
    pub rule: Option<String>,
    /// What was found, for the report.
    pub message: Option<String>,
    /// The version the page's server named (its ETag, else its Last-Modified), when the visit
    /// got an answer that names one: compared with the visit before against the URL's lastmod
    /// (see [`LastmodVisits`](crate::LastmodVisits)).
    pub version: Option<String>,
}

row! {
/// A site's failing-URL check run: the one going, or the last one (one row per site). A run
/// visits every live URL of the site in id order; what it checked is recorded as it goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRun {
    /// The site.
    pub site_id: i64,
    /// `running`, `done` (it reached the last URL) or `failed` (it stopped: see `error`).
    pub state: String,
    /// The user who pressed "Check now", or `None` for a periodic run.
    pub requested_by: Option<i64>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended, if it did.
    pub finished_at: Option<Timestamp>,
    /// URLs with an id up to this one are checked (the resume point).
    pub after_url_id: i64,
    /// URLs checked so far.
    pub checked: i64,
    /// Of those, how many failed.
    pub failing: i64,
    /// Live URLs of the site when the run started (URLs added since are checked too).
    pub total: i64,
    /// Why a failed run stopped.
    pub error: Option<String>,
    /// The process running it (while `running`).
    pub lease_owner: Option<String>,
    /// Until when that process holds it; past it, another takes the run over where it was.
    pub lease_expires_at: Option<Timestamp>,
    /// When the last run that checked every URL ended, if one did.
    pub last_complete_at: Option<Timestamp>,
    /// A run of the URLs added since the last run only ([`CheckTrigger::NewUrls`]): it never
    /// counts as a complete run.
    pub new_only: bool,
}
}

/// The least time between the end of a site's last run and a run of its new URLs: the URLs a
/// read adds are checked within minutes, together, never one run per read.
pub const NEW_URL_CHECK_GAP: i64 = 600;

impl CheckRun {
    /// Whether the run is going (or was, in a process whose lease has not expired yet).
    pub fn is_running(&self) -> bool {
        self.state == "running"
    }
}

/// Who asks [`Store::claim_check_run`](crate::Store::claim_check_run) for a run, and under which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckTrigger {
    /// The periodic run: only when the last complete run ended before `complete_before`
    /// (or a failed one before `failed_before`), or none ever did, and while the site's owner
    /// has fewer than `per_owner` periodic runs going (across processes), so that one user's
    /// big sites never hold every slot of the checkers.
    Periodic {
        /// Due when the last complete run ended before this.
        complete_before: Timestamp,
        /// A failed run is tried again when it ended before this.
        failed_before: Timestamp,
        /// Periodic runs of one owner's sites going at once.
        per_owner: i64,
    },
    /// "Check now" by a user: at most `per_user` of the user's runs at once (across
    /// processes), and not within `cooldown` seconds of the site's last run.
    User {
        /// The user.
        user_id: i64,
        /// Runs the user may have going at once.
        per_user: i64,
        /// Seconds after a run ends before "Check now" may start another.
        cooldown: i64,
    },
    /// A run of the URLs added since the site's last run, which must be done and have ended
    /// before `finished_before` (see [`NEW_URL_CHECK_GAP`]); counted with the periodic runs
    /// against the owner's `per_owner`.
    NewUrls {
        /// Due when the last run ended before this.
        finished_before: Timestamp,
        /// Periodic and new-URL runs of one owner's sites going at once.
        per_owner: i64,
    },
}

/// Why [`Store::claim_check_run`](crate::Store::claim_check_run) gave no run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckRefusal {
    /// A run of the site is going (here or in another process).
    #[error("a check of this site is running already")]
    Running,
    /// Another site of the same origin is being checked: one run per origin keeps the pace.
    #[error("the URLs of this origin are being checked for another site: try again when that run ends")]
    OriginBusy,
    /// The user has as many runs going as allowed.
    #[error("you have {0} checks running already: wait for one to finish")]
    UserLimit(i64),
    /// The site's owner has as many periodic runs going as allowed.
    #[error("the owner's sites have {0} periodic checks running already")]
    OwnerLimit(i64),
    /// The last run ended too recently for "Check now".
    #[error("this site was checked moments ago: you can check it again in {0} seconds")]
    TooSoon(i64),
    /// A periodic run is not due (or the site is not verified).
    #[error("the site is not due for a check")]
    NotDue,
}

row! {
/// A listed URL that failed its last live check, with one sitemap that lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UrlFailure {
    /// The URL's id; pages are ordered by it.
    pub url_id: i64,
    /// The URL.
    pub loc: String,
    /// The HTTP status seen, if the failure is one.
    pub status: Option<i64>,
    /// The rule broken.
    pub rule: String,
    /// What was found.
    pub message: Option<String>,
    /// When it was checked.
    pub checked_at: Timestamp,
    /// Its kind in the report: `404`, `410`, `5xx`, `redirect`, `noindex`, `robots` or `other`
    /// (unreachable, another status).
    pub kind: String,
    /// A sitemap listing it (the lowest id), if one still does.
    pub sitemap_id: Option<i64>,
    /// That sitemap's URL.
    pub sitemap_url: Option<String>,
    /// It passed the check before this one: it became failing since the previous check.
    pub newly_failing: bool,
}
}

/// The kind filter of [`Store::list_url_failures`](crate::Store::list_url_failures) that lists
/// the URLs that became failing since the previous check, whatever their kind.
pub const NEWLY_FAILING: &str = "new";

row! {
/// A live URL that passed its last check after failing the one before: fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UrlFixed {
    /// The URL's id; pages are ordered by it.
    pub url_id: i64,
    /// The URL.
    pub loc: String,
    /// When it was checked and found fine.
    pub checked_at: Timestamp,
}
}

/// What changed between a site's two last checks of each URL, for
/// [`Store::check_changes`](crate::Store::check_changes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckChanges {
    /// Live URLs failing now that passed the check before.
    pub newly_failing: i64,
    /// Live URLs passing now that failed the check before.
    pub fixed: i64,
    /// A page of the fixed ones.
    pub fixed_urls: Page<UrlFixed>,
}

// --- fairness, quotas, retention ---

/// How [`Store::lease_sitemaps`](crate::Store::lease_sitemaps) shares the workers among sites
/// and users, so that one user's slow or endless sites cannot hold every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeasePolicy {
    /// Leases in force at once per origin (every site of that origin, every process): the
    /// politeness bound towards one host, and the bound on what one slow site can hold.
    pub per_origin: i64,
    /// Leases in force at once per owner. Due sitemaps are taken round-robin across owners,
    /// those with the fewest leases in force first.
    pub per_owner: i64,
    /// Seconds that must pass after a download before the same sitemap is fetched again,
    /// however often it is pinged or resubmitted.
    pub min_interval: i64,
}

impl LeasePolicy {
    /// No caps and no interval: any due sitemap, oldest due first.
    pub const UNLIMITED: LeasePolicy = LeasePolicy { per_origin: i64::MAX, per_owner: i64::MAX, min_interval: 0 };
}

/// What [`Store::store_urls`](crate::Store::store_urls), a merge or
/// [`Store::record_pushed_urls`](crate::Store::record_pushed_urls) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlWrite {
    /// Distinct URLs of the read now stored and listed by the sitemap (added, updated or
    /// unchanged); 0 for a read merged as the same content as the last.
    pub written: u64,
    /// New URLs not added because the site reached its quota of URL rows.
    pub refused: u64,
    /// Of the merge: URLs the sitemap did not list before and lists now.
    pub added: u64,
    /// Of the merge: URLs it listed before whose lastmod, changefreq or priority changed.
    pub changed: u64,
    /// Of the merge: URLs it listed before and no longer lists (after a complete read).
    pub removed: u64,
    /// Of the merge: the diff it recorded (`diffs.rs`), for the download's
    /// [`DownloadRecord::diff`].
    pub diff: Option<i64>,
}

/// The staging of one download's URLs (see [`Store::begin_url_stage`](crate::Store::begin_url_stage)):
/// nothing staged is visible until [`Store::merge_url_stage`](crate::Store::merge_url_stage), so a
/// download that dies half way leaves the previous URL set whole. It carries the sitemap's
/// previous URL set (a key and a content hash per URL, at most the protocol's 50,000 entries),
/// so that an unchanged URL is never staged.
#[derive(Clone)]
pub struct UrlStage {
    /// The stage's row.
    pub id: i64,
    /// The site of the sitemap.
    pub site_id: i64,
    /// The sitemap being read.
    pub sitemap_id: i64,
    /// Rows written to the stage so far: the merge refuses a stage that lost one (an
    /// UNLOGGED table emptied by a crash of PostgreSQL), so a partial read never passes for a
    /// whole one.
    pub rows: i64,
    /// The previous set and what this read said so far.
    pub(crate) known: crate::ingest::Known,
    /// SQLite: the stage's own connection, whose temporary table holds its rows (see
    /// `crate::ingest`); `None` on PostgreSQL, whose stage holds its rows on the client.
    pub(crate) own: Option<crate::ingest::OwnConn>,
}

impl UrlStage {
    /// Rows staged so far, written or still waiting in the stage for a full chunk: the URLs
    /// of the read that are new to the sitemap or changed.
    pub fn staged(&self) -> i64 {
        self.rows + self.known.pending.len() as i64 + self.known.spill.as_ref().map_or(0, |s| s.rows)
    }
}

impl std::fmt::Debug for UrlStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlStage")
            .field("id", &self.id)
            .field("site_id", &self.site_id)
            .field("sitemap_id", &self.sitemap_id)
            .field("rows", &self.rows)
            .field("known", &self.known)
            .finish()
    }
}

/// How [`Store::merge_url_stage`](crate::Store::merge_url_stage) merges a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlMerge {
    /// The read was complete: the sitemap's URLs it no longer lists are unlinked (and marked
    /// removed when no other sitemap lists them). False to merge without sweeping (the service
    /// merges no read that stopped at a fatal error: it discards its stage).
    pub sweep: bool,
    /// The body's key equals the one of the last whole read ([`DownloadRecord::whole_read`]):
    /// when nothing was refused by the quota, the stage is discarded and no URL row is written
    /// (the stage of such a read is empty anyway, but for URLs another sitemap rewrote
    /// meanwhile). Never after a read that failed or stopped short since: its partial merge
    /// cleared the key, so the URLs it left are read again.
    pub same_content: bool,
    /// New URLs are added only while the site holds fewer URL rows than this (removed ones
    /// count); the rest are counted as refused.
    pub quota: i64,
    /// The time of the read: `changed_at` of what changed, `removed_at` of what left.
    pub now: Timestamp,
}

/// What [`Store::apply_retention`](crate::Store::apply_retention) keeps; ages are in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Downloads kept per sitemap, the newest (with their findings); the newest download that
    /// read the file is kept too, since the console's counts come from it.
    pub keep_downloads: i64,
    /// Pings older than this are deleted.
    pub ping_max_age: i64,
    /// URLs removed (listed by no sitemap) longer ago than this are deleted.
    pub removed_url_max_age: i64,
    /// Sites never verified, with no sitemap, created longer ago than this are deleted.
    pub unverified_site_max_age: i64,
    /// Rows deleted per transaction, so that other writers wait briefly.
    pub batch: i64,
}

/// Who asks for a sign-up, as the caps on pending sign-ups count them: the client (an IPv4
/// address, an IPv6 /64) and its network (an IPv4 /24, an IPv6 /48). Strangers share the caps
/// per network, so one of them cannot fill what everyone needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requester {
    /// The client's key.
    pub client: String,
    /// The client's network's key.
    pub network: String,
}

/// What a sign-up request did ([`Store::request_signup`](crate::Store::request_signup)). The
/// caller answers both the same way, so that sign-up reveals no account; only the mail differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignupRequest {
    /// No account has the address: a pending sign-up with this secret token (for the link).
    Pending(String),
    /// An account has the address already: nothing was stored.
    Taken,
}

/// Rows [`Store::apply_retention`](crate::Store::apply_retention) deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// Downloads (their findings went with them).
    pub downloads: u64,
    /// Pings.
    pub pings: u64,
    /// Expired sessions.
    pub sessions: u64,
    /// Removed URLs.
    pub urls: u64,
    /// Stale unverified sites.
    pub sites: u64,
    /// Sign-ups never confirmed, past their link's expiry.
    pub signups: u64,
    /// API tokens revoked more than a week ago.
    pub tokens: u64,
    /// Site invitations past their link's expiry.
    pub invitations: u64,
    /// Windows of shared limits ([`Store::count_event`](crate::Store::count_event)) that ended a day ago.
    pub limits: u64,
    /// Per-read diffs whose download never came (the worker died after the merge); the others
    /// go with their download.
    pub diffs: u64,
}

/// Which findings [`Store::finding_examples`](crate::Store::finding_examples) returns: those of
/// the last download that read each live sitemap of a site (or of one sitemap), numbered per
/// rule in stored order, rows `offset+1..=offset+per_rule` of each rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindingQuery {
    /// The site.
    pub site_id: i64,
    /// Only this sitemap of the site.
    pub sitemap_id: Option<i64>,
    /// Only this rule.
    pub rule: Option<String>,
    /// Only this severity ("error", "warning", "info").
    pub severity: Option<String>,
    /// Rows of each rule skipped.
    pub offset: i64,
    /// Rows of each rule returned (clamped to 1..=1,000).
    pub per_rule: i64,
}

row! {
/// A finding with its rule's total and the sitemap it comes from: the console groups findings by
/// rule and shows the first few of each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingExample {
    /// Rule name of RULES.md.
    pub rule: String,
    /// "error", "warning" or "info".
    pub severity: String,
    /// 1-based line.
    pub line: Option<i64>,
    /// 1-based column in bytes.
    pub col: Option<i64>,
    /// The URL the finding is about.
    pub loc: Option<String>,
    /// Human-readable message.
    pub message: String,
    /// How many findings of this rule the query's downloads hold.
    pub rule_count: i64,
    /// The sitemap whose download it is.
    pub sitemap_id: i64,
    /// That sitemap's URL.
    pub sitemap_url: String,
}
}

row! {
/// The failing URLs of one kind (see [`UrlFailure::kind`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureKindCount {
    /// The kind.
    pub kind: String,
    /// Failing live URLs of that kind.
    pub count: i64,
}
}

row! {
/// A site's numbers at one run of the failing-URLs checker, for the console's picture over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SiteSnapshot {
    /// When.
    pub taken_at: Timestamp,
    /// Live URLs of the site.
    pub live_urls: i64,
    /// Of those, how many failed their last check.
    pub failing_urls: i64,
}
}
