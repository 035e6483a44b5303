//! Storage of the mapwright sitemap service: the [`Store`] trait and its SQLite and
//! PostgreSQL implementations on sqlx.
//!
//! This crate is the only one that knows SQL. The server holds an `Arc<dyn Store>` from
//! [`open`] and never sees which backend is behind it. Migrations live in `migrations/`, one
//! file per migration holding both dialects, and are applied when a store opens.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mapwright_store::Error> {
//! let store = mapwright_store::open(None, std::path::Path::new("/var/lib/mapwright")).await?;
//! let hash = mapwright_store::secret::hash_password("s3cret password")?;
//! let user = store.create_user("ann@example.com", &hash, false, 1_700_000_000).await?;
//! let site = store.create_site((&user).into(), "https://example.com", 1_700_000_000).await?;
//! println!("place mapwright-{}.html on {}", site.verification_token, site.origin);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

#[macro_use]
mod sql;
#[macro_use]
mod accounts;
#[macro_use]
mod alerts;
#[macro_use]
mod check_runs;
#[macro_use]
mod diffs;
#[macro_use]
mod domains;
#[macro_use]
mod leasing;
#[macro_use]
mod listing;
#[macro_use]
mod members;
#[macro_use]
mod recovery;
#[macro_use]
mod outbound;
#[macro_use]
mod overview;
#[macro_use]
mod retention;
#[macro_use]
mod signups;
#[macro_use]
mod sitemaps;
#[macro_use]
mod sites;
#[macro_use]
mod trust;
#[macro_use]
mod urls;
#[macro_use]
mod webhooks;
mod email;
mod error;
#[macro_use]
mod ingest;
mod migrations;
mod model;
mod postgres;
mod row;
pub mod secret;
mod sqlite;
mod store;
#[cfg(feature = "test-support")]
pub mod testing;
mod wake;

use std::path::Path;
use std::sync::Arc;

pub use alerts::{AlertLink, AlertRecipient, AlertSetting, Worsening, alert_rank};
pub use diffs::{Change, ChangeTotals, ChildChange, ChildChanges, DiffUrl, FieldChange, MAX_DIFF_URLS, ReadDiff};
pub use domains::{DomainProperty, MAX_DOMAINS_PER_USER};
pub use email::{InvalidEmail, normalize_email};
pub use error::{Error, Result};
pub use leasing::HeldRead;
pub use listing::{SitemapListing, SortKey, StatusFilter, TypeFilter};
pub use members::{
    INVITATION_WINDOW_SECONDS, Invitation, InvitationInfo, MAX_INVITATIONS_PER_ADDRESS, MAX_MEMBERS_PER_SITE,
    MAX_PENDING_INVITATIONS_PER_ADDRESS, Member, Role, SiteRoles,
};
pub use model::*;
pub use overview::{IndexNowReceipt, MAX_INDEXNOW_RECEIPTS, SiteProof, WordTotal};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;
pub use store::Store;
pub use trust::{LastmodTally, LastmodTrust, LastmodVisits};
pub use wake::{CHANNEL as WAKE_CHANNEL, DueListener, Heard};
pub use webhooks::{
    ATTEMPTS_KEPT, AttemptRecord, DisabledWebhook, Enqueued, LeasedDelivery, MAX_PENDING_DELIVERIES_PER_USER,
    MAX_WEBHOOKS_PER_SITE, MAX_WEBHOOKS_PER_USER, WEBHOOK_BACKOFF_MAX_SECONDS, WEBHOOK_BACKOFF_SECONDS, WEBHOOK_EVENTS,
    WEBHOOK_FAILURES_TO_DISABLE, Webhook, WebhookAttempt, webhook_backoff,
};

/// Sites a user may have that are not verified: each costs a verification check per re-check
/// period, so a stranger must not add them without end. Stale ones expire (see [`Retention`]).
pub const MAX_UNVERIFIED_SITES: i64 = 20;

/// Sites a user may have in all, verified or not: each may hold its URL quota and its
/// sitemaps, so what one account can make the service store and fetch is bounded.
pub const MAX_SITES_PER_USER: i64 = 100;

/// Sitemaps one site may have, submitted, named by robots.txt or listed by its indexes (removed
/// ones count until the site is deleted): room for a full index of the protocol's 50,000
/// sitemaps and more beside it, but nested indexes must not make the service fetch and store
/// without end. Children an index lists past it are not added, and the read says so.
pub const MAX_SITEMAPS_PER_SITE: i64 = 60_000;

/// API tokens a user may hold, revoked ones included until retention deletes them (a week
/// after their revocation): creating and revoking in a loop must not grow the table without end.
pub const MAX_API_TOKENS: i64 = 1_000;

/// Sessions kept per user: signing in once more ends the oldest past this many.
pub const MAX_SESSIONS_PER_USER: i64 = 100;

/// Recovery links (password reset, change of address) kept per account and purpose: asking
/// again ends the oldest past this many, so a stranger who asks for the owner's address in a
/// loop neither grows the table nor kills the link the owner asked for a minute ago.
pub const MAX_ACCOUNT_LINKS: i64 = 5;

/// Sign-ups waiting for confirmation, all addresses together (one row per address and
/// requesting network): past it, a sign-up is refused until some expire, so a flood of made-up
/// addresses cannot fill the table. The caps per network and per client below come first, so
/// filling this one takes 2,500 networks' worth of sign-ups, not one stranger's.
pub const MAX_PENDING_SIGNUPS: i64 = 100_000;

/// Sign-ups waiting for confirmation asked from one network (an IPv4 /24, an IPv6 /48), all
/// addresses together: what one stranger's network may hold of [`MAX_PENDING_SIGNUPS`].
pub const MAX_PENDING_SIGNUPS_PER_NETWORK: i64 = 40;

/// Sign-ups waiting for confirmation asked from one client (an IPv4 address, an IPv6 /64).
pub const MAX_PENDING_SIGNUPS_PER_CLIENT: i64 = 10;

/// The SQLite file the settings name (`sqlite://FILE`, or `mapwright.db` in `data_dir`), or
/// `None` for PostgreSQL and in-memory databases: `mapwright serve` locks it, since one
/// process serves an SQLite database.
pub fn sqlite_file(database: Option<&str>, data_dir: &Path) -> Result<Option<std::path::PathBuf>> {
    match database {
        None => Ok(Some(data_dir.join("mapwright.db"))),
        Some(url) if url.starts_with("sqlite:") => {
            let options = <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(url)?;
            let path = options.get_filename();
            let in_memory = path.as_os_str().is_empty() || path == Path::new(":memory:");
            Ok((!in_memory).then(|| path.to_owned()))
        }
        Some(_) => Ok(None),
    }
}

/// Opens the store the settings name, migrated and ready.
///
/// `database`: `postgres://...` or `postgresql://...` for PostgreSQL, `sqlite://...` for an
/// SQLite file elsewhere, `None` for `mapwright.db` in `data_dir` (created if missing).
pub async fn open(database: Option<&str>, data_dir: &Path) -> Result<Arc<dyn Store>> {
    match database {
        None => Ok(Arc::new(SqliteStore::open_dir(data_dir).await?)),
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Arc::new(PgStore::open(url).await?))
        }
        Some(url) if url.starts_with("sqlite:") => Ok(Arc::new(SqliteStore::open_url(url).await?)),
        Some(url) => Err(Error::UnsupportedUrl(url.to_owned())),
    }
}
