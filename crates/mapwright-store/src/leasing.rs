//! The fetch queue's queries: leasing due sitemaps fairly, releasing them, the queue's depth;
//! written once for both backends like those of `sql.rs`, whose `impl_store!` expands
//! [`lease_methods!`] into inherent methods (`*_impl`) that its `impl Store` calls (see
//! `signups.rs`).

/// The `Store` methods of the fetch queue; `lock` is the lease query's row lock (see [`lease_sql!`]).
macro_rules! lease_methods {
    ($ty:ty, lock = $lock:literal) => {
        impl $ty {
            pub(crate) async fn lease_sitemaps_impl(
                &self,
                worker: &str,
                now: Timestamp,
                limit: i64,
                lease_seconds: i64,
                policy: LeasePolicy,
            ) -> Result<Vec<LeasedSitemap>> {
                let mut tx = self.begin_write().await?;
                let mut leased: Vec<LeasedSitemap> = sqlx::query_as(lease_sql!($lock))
                    .bind(worker)
                    .bind(now.saturating_add(lease_seconds))
                    .bind(now)
                    .bind(limit)
                    .bind(policy.per_origin.max(1))
                    .bind(policy.per_owner.max(1))
                    .bind(policy.min_interval.max(0))
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                leased.sort_by_key(|l| l.id);
                Ok(leased)
            }

            pub(crate) async fn release_impl(&self, worker: &str, sitemap_id: i64) -> Result<()> {
                let done = sqlx::query(
                    "UPDATE sitemaps SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2",
                )
                .bind(sitemap_id)
                .bind(worker)
                .execute(&self.pool)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                }
                Ok(())
            }

            pub(crate) async fn release_all_impl(&self, worker: &str) -> Result<u64> {
                let done = sqlx::query("UPDATE sitemaps SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1")
                    .bind(worker)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            pub(crate) async fn queue_depth_impl(&self, now: Timestamp) -> Result<i64> {
                // $3 is the only placeholder due_where! uses; $1 and $2 are bound to dummies
                // on PostgreSQL's demand that every placeholder up to the highest be typed.
                Ok(sqlx::query_scalar(concat!(
                    "SELECT COUNT(*) FROM sitemaps sm JOIN sites s ON s.id = sm.site_id WHERE $1 = $2 AND ",
                    due_where!()
                ))
                .bind(0_i64)
                .bind(0_i64)
                .bind(now)
                .fetch_one(&self.pool)
                .await?)
            }
        }
    };
}
