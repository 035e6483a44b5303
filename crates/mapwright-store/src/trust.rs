//! lastmod you can trust (issue 34, item 9): per sitemap, what its lastmod values look like and
//! whether they move with the pages. Engines use `<lastmod>` only when it is consistently
//! accurate; this is what a site owner needs to see to make it so.
//!
//! Two sources, both bounded:
//! - the read: [`LastmodTally`], counted by the worker while the file streams (never by a scan
//!   of the stored URLs) and stored with the download by `complete` ([`save_tally!`]), one row
//!   per sitemap (`lastmod_trust`, migration 0061), replaced by each read that parsed the file;
//! - the checker's visits: [`LastmodVisits`], from the one row per URL of `url_checks`
//!   (migration 0062): each visit keeps the version the page's server named (its ETag, else
//!   its Last-Modified) and the URL's lastmod at that time, and the upsert compares them with
//!   the visit before (`version_pair`: both moved or neither, lastmod alone, content alone).
//!
//! The verdict in words is the server's (`trust.rs` there): the store only counts.

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

row! {
/// What one read's lastmod values look like (the counts of the sitemap's last read that parsed
/// the file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LastmodTally {
    /// When the read was made (its `now` for "future" and "near the read").
    pub read_at: Timestamp,
    /// URL entries read.
    pub entries: i64,
    /// Of them, those with a lastmod.
    pub with_lastmod: i64,
    /// lastmod values with a date and no time (`2024-05-01`): a change within a day is invisible.
    pub date_only: i64,
    /// lastmod values after the read's time (past the validator's allowance for clocks and zones).
    pub future: i64,
    /// lastmod values with a time within an hour of the read: a file that stamps the time it
    /// was generated, not when its pages changed.
    pub near_read: i64,
    /// The most common lastmod value (the same instant), as written the first time.
    pub top_value: Option<String>,
    /// How many entries carry it.
    pub top_count: i64,
}
}

row! {
/// What the URL checker saw of a sitemap's URLs over its last two visits of each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LastmodVisits {
    /// URLs whose last two visits both named a version (ETag or Last-Modified), so they compare.
    pub compared: i64,
    /// Of them, those whose lastmod changed while the page's version did not.
    pub lastmod_alone: i64,
    /// Those whose page changed while the lastmod did not.
    pub content_alone: i64,
}
}

/// A sitemap's lastmod measures, for [`Store::lastmod_trust`](crate::Store::lastmod_trust).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LastmodTrust {
    /// The last read's counts; `None` before a read parsed the file.
    pub tally: Option<LastmodTally>,
    /// The checker's comparisons of the URLs the sitemap lists now.
    pub visits: LastmodVisits,
}

/// Stores a read's tally (`$tally`, an `Option<&LastmodTally>`) for the sitemap, in
/// `complete`'s transaction `$tx`, replacing the previous read's.
macro_rules! save_tally {
    ($tx:ident, $sitemap_id:expr, $tally:expr) => {{
        let tally: Option<&$crate::LastmodTally> = $tally;
        if let Some(t) = tally {
            sqlx::query(
                "INSERT INTO lastmod_trust (sitemap_id, read_at, entries, with_lastmod, date_only, future, near_read, \
                 top_value, top_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (sitemap_id) DO UPDATE SET \
                 read_at = excluded.read_at, entries = excluded.entries, with_lastmod = excluded.with_lastmod, \
                 date_only = excluded.date_only, future = excluded.future, near_read = excluded.near_read, \
                 top_value = excluded.top_value, top_count = excluded.top_count",
            )
            .bind($sitemap_id)
            .bind(t.read_at)
            .bind(t.entries)
            .bind(t.with_lastmod)
            .bind(t.date_only)
            .bind(t.future)
            .bind(t.near_read)
            .bind(t.top_value.as_deref().map(clean))
            .bind(t.top_count)
            .execute(&mut *$tx)
            .await?;
        }
    }};
}

pub(crate) use save_tally;

/// The `Store` methods that read lastmod measures, for one backend.
macro_rules! trust_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn lastmod_trust_impl(
                &self,
                actor: Actor,
                sitemap_id: i64,
            ) -> Result<$crate::LastmodTrust> {
                self.sitemap_impl(actor, sitemap_id).await?;
                let tally = sqlx::query_as(
                    "SELECT read_at, entries, with_lastmod, date_only, future, near_read, top_value, top_count \
                     FROM lastmod_trust WHERE sitemap_id = $1",
                )
                .bind(sitemap_id)
                .fetch_optional(&self.pool)
                .await?;
                // The URLs the sitemap lists now, each by its one check row: at most the
                // protocol's 50,000 lookups by key.
                let visits = sqlx::query_as(
                    "SELECT COUNT(c.version_pair) AS compared, \
                     COALESCE(SUM(CASE WHEN c.version_pair = 1 THEN 1 ELSE 0 END), 0) AS lastmod_alone, \
                     COALESCE(SUM(CASE WHEN c.version_pair = 2 THEN 1 ELSE 0 END), 0) AS content_alone \
                     FROM sitemap_urls su JOIN url_checks c ON c.url_id = su.url_id WHERE su.sitemap_id = $1",
                )
                .bind(sitemap_id)
                .fetch_one(&self.pool)
                .await?;
                Ok($crate::LastmodTrust { tally, visits })
            }
        }
    };
}
