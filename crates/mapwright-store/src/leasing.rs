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

/// Due and unleased: the WHERE clause shared by the lease query and the queue depth.
macro_rules! due_where {
    () => {
        "sm.removed_at IS NULL AND s.verified_at IS NOT NULL AND sm.next_fetch_at <= $3 \
         AND (sm.lease_expires_at IS NULL OR sm.lease_expires_at <= $3)"
    };
}

/// The fair lease query; `$lock` is empty on SQLite (the write transaction serialises
/// leasers) and `FOR UPDATE OF sm SKIP LOCKED` on PostgreSQL.
///
/// `$1` worker, `$2` lease end, `$3` now, `$4` limit, `$5` per origin, `$6` per owner, `$7`
/// the minimum interval. From the inside out: the due sitemaps downloaded at least `$7` ago,
/// ranked within their origin; those that fit beside the origin's leases in force; ranked
/// within their owner, plus the owner's leases in force, which is the owner's turn; those whose
/// turn fits under `$6`, in turn order (round-robin across owners), oldest due first. The
/// window functions sit in a subquery because PostgreSQL refuses them beside `FOR UPDATE`;
/// the outer level repeats the due test so that a row another leaser took meanwhile is not
/// taken again when PostgreSQL re-reads it after the lock. The ranked candidates are a
/// `MATERIALIZED` CTE, computed once: as a plain subquery joined to `sitemaps`, PostgreSQL
/// (estimating one due row on statistics older than a burst of new sitemaps, e.g. the children
/// of a thousand new indexes) ran it as the inner side of a nested loop and recomputed both
/// window functions for every due row, 1.5 s per lease with 800 due (bench/serve/RESULTS.md).
macro_rules! lease_sql {
    ($lock:literal) => {
        concat!(
            "UPDATE sitemaps SET lease_owner = $1, lease_expires_at = $2 WHERE id IN (",
            "WITH c AS MATERIALIZED (SELECT * FROM (",
            "SELECT o.id, o.next_fetch_at, ",
            "ROW_NUMBER() OVER (PARTITION BY o.owner_id ORDER BY o.next_fetch_at, o.id) + COALESCE(ob.n, 0) AS turn ",
            "FROM (SELECT sm.id, sm.next_fetch_at, s.owner_id, s.origin, ",
            "ROW_NUMBER() OVER (PARTITION BY s.origin ORDER BY sm.next_fetch_at, sm.id) AS origin_rank ",
            "FROM sitemaps sm JOIN sites s ON s.id = sm.site_id WHERE ",
            due_where!(),
            " AND (sm.last_downloaded_at IS NULL OR sm.last_downloaded_at <= $3 - $7)) o ",
            "LEFT JOIN (SELECT ls.origin, COUNT(*) AS n FROM sitemaps l JOIN sites ls ON ls.id = l.site_id ",
            "WHERE l.lease_expires_at > $3 GROUP BY ls.origin) gb ON gb.origin = o.origin ",
            "LEFT JOIN (SELECT ls.owner_id, COUNT(*) AS n FROM sitemaps l JOIN sites ls ON ls.id = l.site_id ",
            "WHERE l.lease_expires_at > $3 GROUP BY ls.owner_id) ob ON ob.owner_id = o.owner_id ",
            "WHERE o.origin_rank + COALESCE(gb.n, 0) <= $5) t WHERE t.turn <= $6) ",
            "SELECT sm.id FROM sitemaps sm JOIN c ON c.id = sm.id ",
            "WHERE sm.removed_at IS NULL AND sm.next_fetch_at <= $3 ",
            "AND (sm.lease_expires_at IS NULL OR sm.lease_expires_at <= $3) ",
            "ORDER BY c.turn, c.next_fetch_at, c.id LIMIT $4 ",
            $lock,
            ") RETURNING id, site_id, url, parent_id, etag, last_modified, content_hash, lease_expires_at"
        )
    };
}
