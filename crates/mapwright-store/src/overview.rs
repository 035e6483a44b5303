//! What a site's overview needs beyond its rows (issue 34, items 3 and 10, migration 0055):
//! which proof keeps it verified (`sites.verified_by`, `sites.verified_domain`), its sitemaps
//! counted by the word each shows, and the IndexNow submissions received for it
//! (`indexnow_receipts`, the newest [`MAX_INDEXNOW_RECEIPTS`] per site). Written once for both
//! backends like those of `sql.rs`, whose `impl_store!` expands [`overview_methods!`].

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

/// IndexNow submissions kept per site: anyone may send them, so each write trims the site's
/// to its newest this many (a stranger's flood replaces older rows, never adds to them).
pub const MAX_INDEXNOW_RECEIPTS: i64 = 100;

row! {
/// Which proof keeps a site verified, as its last successful check found it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SiteProof {
    /// `file`, `meta` or `domain`; `None` while the site is not verified, or verified before
    /// mapwright kept which proof it was (until its next check).
    pub verified_by: Option<String>,
    /// The name of the domain property, when `verified_by` is `domain`.
    pub verified_domain: Option<String>,
}
}

row! {
/// A site's sitemaps that show one status word (the name of its filter, see
/// [`StatusFilter`](crate::StatusFilter)), with what they hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WordTotal {
    /// `success`, `errors`, `warnings`, `failed`, `pending`, `paused` or `removed`.
    pub word: String,
    /// Sitemaps showing it, an index's children each counted.
    pub sitemaps: i64,
    /// Errors of their last reads, each sitemap's own (not rolled up: counted once).
    pub errors: i64,
    /// Warnings of their last reads, each sitemap's own.
    pub warnings: i64,
    /// URLs their last reads stored, of the sitemaps that are no index (a URL two sitemaps
    /// list counts twice); 0 for removed ones.
    pub urls: i64,
}
}

row! {
/// One IndexNow submission received for a verified site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexNowReceipt {
    /// Id.
    pub id: i64,
    /// The site whose URLs it named.
    pub site_id: i64,
    /// When it came.
    pub received_at: Timestamp,
    /// URLs of this site it named.
    pub url_count: i64,
    /// The key file it asked the service to check.
    pub key_location: String,
    /// Whether its URLs were taken.
    pub accepted: bool,
    /// Why it was refused.
    pub reason: Option<String>,
}
}

/// The `Store` methods of the site overview (see the module documentation).
macro_rules! overview_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn record_proof_impl(
                &self,
                site_id: i64,
                verified_by: Option<&str>,
                domain: Option<&str>,
                now: Timestamp,
            ) -> Result<()> {
                self.record_check_impl(site_id, verified_by.is_some(), verified_by, domain, now).await
            }

            /// One check of a site's proof: `ok` verifies it (since the first success) with the
            /// proof `verified_by` found, or keeps the proof recorded before when it says none;
            /// a failure unverifies it and forgets the proof.
            pub(crate) async fn record_check_impl(
                &self,
                site_id: i64,
                ok: bool,
                verified_by: Option<&str>,
                domain: Option<&str>,
                now: Timestamp,
            ) -> Result<()> {
                let done = sqlx::query(
                    "UPDATE sites SET last_checked_at = $1, \
                     verified_at = CASE WHEN $2 THEN COALESCE(verified_at, $1) ELSE NULL END, \
                     verified_by = CASE WHEN NOT $2 THEN NULL WHEN $3 IS NULL THEN verified_by ELSE $3 END, \
                     verified_domain = CASE WHEN NOT $2 THEN NULL WHEN $3 IS NULL THEN verified_domain ELSE $4 END \
                     WHERE id = $5",
                )
                .bind(now)
                .bind(ok)
                .bind(verified_by)
                .bind(domain)
                .bind(site_id)
                .execute(&self.pool)
                .await?;
                found(done.rows_affected(), "site", site_id)
            }

            pub(crate) async fn site_proof_impl(&self, actor: Actor, site_id: i64) -> Result<$crate::SiteProof> {
                visible_site!(self, "s.verified_by, s.verified_domain", actor, site_id)
            }

            pub(crate) async fn site_totals_impl(&self, actor: Actor, site_id: i64) -> Result<Vec<$crate::WordTotal>> {
                self.site_impl(actor, site_id).await?;
                let mut query = sqlx::QueryBuilder::new("SELECT ");
                query
                    .push($crate::listing::STATUS_WORD_SQL)
                    .push(
                        " AS word, COUNT(*) AS sitemaps, \
                         CAST(COALESCE(SUM(CASE WHEN sm.removed_at IS NULL THEN sm.errors ELSE 0 END), 0) AS BIGINT) AS errors, \
                         CAST(COALESCE(SUM(CASE WHEN sm.removed_at IS NULL THEN sm.warnings ELSE 0 END), 0) AS BIGINT) AS warnings, \
                         CAST(COALESCE(SUM(CASE WHEN sm.removed_at IS NULL AND NOT sm.is_index THEN sm.rollup_urls ELSE 0 END), 0) \
                         AS BIGINT) AS urls FROM sitemaps sm WHERE sm.site_id = ",
                    )
                    .push_bind(site_id)
                    .push(" GROUP BY 1 ORDER BY 1");
                Ok(query.build_query_as().fetch_all(&self.pool).await?)
            }

            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
            pub(crate) async fn record_indexnow_receipt_impl(
                &self,
                site_id: i64,
                received_at: Timestamp,
                url_count: i64,
                key_location: &str,
                refused: Option<&str>,
            ) -> Result<()> {
                let mut tx = self.begin_write().await?;
                sqlx::query(
                    "INSERT INTO indexnow_receipts (site_id, received_at, url_count, key_location, accepted, reason) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(site_id)
                .bind(received_at)
                .bind(url_count)
                .bind(clean(key_location).as_ref())
                .bind(refused.is_none())
                .bind(refused.map(clean).as_deref())
                .execute(&mut *tx)
                .await
                .map_err(|e| match &e {
                    sqlx::Error::Database(db) if db.is_foreign_key_violation() => Error::NotFound { what: "site", id: site_id },
                    _ => Error::Database(e),
                })?;
                sqlx::query(
                    "DELETE FROM indexnow_receipts WHERE site_id = $1 AND id < (SELECT MIN(id) FROM \
                     (SELECT id FROM indexnow_receipts WHERE site_id = $1 ORDER BY id DESC LIMIT $2) newest)",
                )
                .bind(site_id)
                .bind($crate::MAX_INDEXNOW_RECEIPTS)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            pub(crate) async fn list_indexnow_receipts_impl(
                &self,
                actor: Actor,
                site_id: i64,
                limit: i64,
            ) -> Result<Vec<$crate::IndexNowReceipt>> {
                self.site_impl(actor, site_id).await?;
                Ok(sqlx::query_as(
                    "SELECT id, site_id, received_at, url_count, key_location, accepted, reason FROM indexnow_receipts \
                     WHERE site_id = $1 ORDER BY id DESC LIMIT $2",
                )
                .bind(site_id)
                .bind(limit.clamp(1, $crate::MAX_INDEXNOW_RECEIPTS))
                .fetch_all(&self.pool)
                .await?)
            }
        }
    };
}
