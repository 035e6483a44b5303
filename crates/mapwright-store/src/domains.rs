//! Domain properties (issue 23): a DNS name a user claims and proves with a TXT record, which
//! then covers every origin under it. Written once for both backends like the queries of
//! `sql.rs`, whose `impl_store!` expands [`domain_methods!`] into inherent methods (`*_impl`)
//! that `store.rs`'s `impl Store` calls.
//!
//! A property belongs to one user (no members: whoever else controls the name claims it too,
//! with a token of their own). It covers the sites its user *owns*, never another user's: which
//! names are under it, and the DNS check, are the server's (`mapwright_server::domains`).

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

/// Domain properties a user may have: each costs a DNS look-up per re-check period.
pub const MAX_DOMAINS_PER_USER: i64 = 50;

row! {
/// A DNS name (`example.com`) a user claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DomainProperty {
    /// Id.
    pub id: i64,
    /// The user who claims it.
    pub user_id: i64,
    /// The name in normal form: lower case, IDNA (punycode), no trailing dot.
    pub domain: String,
    /// The token of the TXT record `mapwright-site-verification=<token>`.
    pub verification_token: String,
    /// When it was added.
    pub created_at: Timestamp,
    /// When the record was first seen, while it stays published; `None` when unverified.
    pub verified_at: Option<Timestamp>,
    /// When the record was last looked up.
    pub last_checked_at: Option<Timestamp>,
}
}

/// The columns of [`DomainProperty`], bare (SQLite's `RETURNING` takes no table alias).
macro_rules! domain_cols {
    () => {
        "id, user_id, domain, verification_token, created_at, verified_at, last_checked_at"
    };
}

/// The `Store` methods of domain properties (see the module documentation).
macro_rules! domain_methods {
    ($ty:ty, lock = $lock:literal) => {
        impl $ty {
            pub(crate) async fn create_domain_impl(
                &self,
                actor: Actor,
                domain: &str,
                now: Timestamp,
            ) -> Result<$crate::DomainProperty> {
                let token = secret::new_verification_token();
                // The count and the insert in one statement: concurrent requests cannot pass
                // the cap together.
                let mut tx = self.begin_write().await?;
                let row: Option<$crate::DomainProperty> = sqlx::query_as(concat!(
                    "INSERT INTO domain_properties (user_id, domain, verification_token, created_at) \
                     SELECT $1, $2, $3, $4 WHERE (SELECT COUNT(*) FROM domain_properties WHERE user_id = $1) < $5 \
                     RETURNING ",
                    domain_cols!()
                ))
                .bind(actor.user_id)
                .bind(domain)
                .bind(&token)
                .bind(now)
                .bind($crate::MAX_DOMAINS_PER_USER)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| conflict(e, format!("domain property {domain}")))?;
                tx.commit().await?;
                row.ok_or_else(|| {
                    Error::Quota(format!(
                        "you have {} domain properties, the most an account may have: delete one before adding {domain}",
                        $crate::MAX_DOMAINS_PER_USER
                    ))
                })
            }

            pub(crate) async fn domain_impl(&self, actor: Actor, domain_id: i64) -> Result<$crate::DomainProperty> {
                sqlx::query_as(concat!(
                    "SELECT ", domain_cols!(), " FROM domain_properties WHERE id = $1 AND ($2 OR user_id = $3)"
                ))
                .bind(domain_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?
                .ok_or(Error::NotFound { what: "domain property", id: domain_id })
            }

            pub(crate) async fn list_domains_impl(&self, actor: Actor) -> Result<Vec<$crate::DomainProperty>> {
                Ok(sqlx::query_as(concat!(
                    "SELECT ", domain_cols!(), " FROM domain_properties WHERE ($1 OR user_id = $2) ORDER BY id"
                ))
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn delete_domain_impl(&self, actor: Actor, domain_id: i64) -> Result<()> {
                let done = sqlx::query("DELETE FROM domain_properties WHERE id = $1 AND ($2 OR user_id = $3)")
                    .bind(domain_id)
                    .bind(actor.is_admin)
                    .bind(actor.user_id)
                    .execute(&self.pool)
                    .await?;
                found(done.rows_affected(), "domain property", domain_id)
            }

            pub(crate) async fn record_domain_verification_impl(&self, domain_id: i64, ok: bool, now: Timestamp) -> Result<()> {
                // As a site's check (`record_check_impl`, which also keeps which proof it was):
                // `verified_at` kept (or set) on success, cleared on failure.
                let done = sqlx::query(
                    "UPDATE domain_properties SET last_checked_at = $1, \
                     verified_at = CASE WHEN $2 THEN COALESCE(verified_at, $1) ELSE NULL END WHERE id = $3",
                )
                .bind(now)
                .bind(ok)
                .bind(domain_id)
                .execute(&self.pool)
                .await?;
                found(done.rows_affected(), "domain property", domain_id)
            }

            pub(crate) async fn domains_to_verify_impl(
                &self,
                before: Timestamp,
                now: Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::DomainProperty>> {
                // As `sites_to_verify`: claimed by stamping `last_checked_at`.
                claim_due_checks!(self, $crate::DomainProperty, "domain_properties", $lock, (domain_cols!()), before, limit, now)
            }

            pub(crate) async fn verified_domains_of_site_owners_impl(&self, site_id: i64) -> Result<Vec<$crate::DomainProperty>> {
                Ok(sqlx::query_as(concat!(
                    "SELECT ", domain_cols!(), " FROM domain_properties WHERE verified_at IS NOT NULL AND user_id IN \
                     (SELECT user_id FROM site_members WHERE site_id = $1 AND role = 'owner') ORDER BY id"
                ))
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn sites_owned_by_impl(&self, user_id: i64) -> Result<Vec<Site>> {
                Ok(sqlx::query_as(concat!(
                    "SELECT ", site_cols!(), " FROM sites s WHERE s.id IN \
                     (SELECT site_id FROM site_members WHERE user_id = $1 AND role = 'owner') ORDER BY s.id"
                ))
                .bind(user_id)
                .fetch_all(&self.pool)
                .await?)
            }
        }
    };
}
