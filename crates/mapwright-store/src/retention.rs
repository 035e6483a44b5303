//! Retention: what the service deletes as it ages (see [`Retention`](crate::Retention)), in
//! short transactions; written once for both backends like the queries of `sql.rs`, whose
//! `impl_store!` expands [`retention_methods!`] into an inherent method that `store.rs`'s `impl Store`
//! calls (see `signups.rs`).

/// The `Store` method of retention (see the module documentation).
macro_rules! retention_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn apply_retention_impl(&self, policy: Retention, now: Timestamp) -> Result<RetentionReport> {
                let batch = policy.batch.max(1);
                Ok(RetentionReport {
                    // The newest `keep` of each sitemap stay, and its newest that read the file
                    // (the console's counts); findings go with their download (ON DELETE CASCADE).
                    downloads: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM downloads WHERE id IN (SELECT r.id FROM (SELECT id, status, \
                         ROW_NUMBER() OVER (PARTITION BY sitemap_id ORDER BY downloaded_at DESC, id DESC) AS n, \
                         ROW_NUMBER() OVER (PARTITION BY sitemap_id, status = 'unchanged' \
                         ORDER BY downloaded_at DESC, id DESC) AS m FROM downloads) r \
                         WHERE r.n > $1 AND NOT (r.status <> 'unchanged' AND r.m = 1) LIMIT $2)",
                        policy.keep_downloads.max(1)
                    ),
                    pings: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM pings WHERE id IN (SELECT id FROM pings WHERE received_at < $1 LIMIT $2)",
                        now.saturating_sub(policy.ping_max_age)
                    ),
                    sessions: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= $1 LIMIT $2)",
                        now
                    ),
                    // A URL a kept diff names stays (removed) until its diff goes: the diff names it.
                    urls: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM urls WHERE id IN (SELECT id FROM urls WHERE removed_at < $1 \
                         AND NOT EXISTS (SELECT 1 FROM read_diff_urls r WHERE r.url_id = urls.id) LIMIT $2)",
                        now.saturating_sub(policy.removed_url_max_age)
                    ),
                    // A site that lost its proof keeps its sitemaps and history: only sites that
                    // never got a sitemap expire.
                    sites: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM sites WHERE id IN (SELECT s.id FROM sites s WHERE s.verified_at IS NULL \
                         AND s.created_at < $1 AND NOT EXISTS (SELECT 1 FROM sitemaps sm WHERE sm.site_id = s.id) LIMIT $2)",
                        now.saturating_sub(policy.unverified_site_max_age)
                    ),
                    signups: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM signups WHERE token_hash IN (SELECT token_hash FROM signups WHERE expires_at <= $1 LIMIT $2)",
                        now
                    ),
                    limits: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM rate_windows WHERE (scope, key) IN (SELECT scope, key FROM rate_windows WHERE window_start < $1 LIMIT $2)",
                        now.saturating_sub($crate::retention::RATE_WINDOW_MAX_AGE)
                    ),
                    // An invitation's link no longer works once it expired (`invitation_by_token`
                    // checks the time); the row goes with the next run, not with the site's next
                    // invitation only.
                    invitations: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM site_invitations WHERE id IN (SELECT id FROM site_invitations WHERE expires_at <= $1 LIMIT $2)",
                        now
                    ),
                    diffs: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM read_diffs WHERE id IN (SELECT id FROM read_diffs WHERE download_id IS NULL \
                         AND read_at < $1 LIMIT $2)",
                        now.saturating_sub($crate::diffs::ORPHAN_DIFF_MAX_AGE)
                    ),
                    tokens: delete_in_batches!(
                        self,
                        batch,
                        "DELETE FROM api_tokens WHERE id IN (SELECT id FROM api_tokens WHERE revoked_at < $1 LIMIT $2)",
                        now.saturating_sub($crate::retention::REVOKED_TOKEN_MAX_AGE)
                    ),
                })
            }
        }
    };
}

/// Runs a `DELETE ... WHERE id IN (SELECT ... LIMIT $2)` with `$1` = `$arg` in transactions
/// of `$batch` rows until fewer are left; evaluates to the rows deleted.
macro_rules! delete_in_batches {
    ($self:expr, $batch:expr, $sql:literal, $arg:expr) => {{
        let mut total = 0_u64;
        let mut pacer = $self.pacer();
        loop {
            pacer.between().await;
            let mut tx = $self.begin_bulk().await?;
            let done = sqlx::query($sql).bind($arg).bind($batch).execute(&mut *tx).await?.rows_affected();
            tx.commit().await?;
            total += done;
            if done < $batch as u64 {
                break total;
            }
        }
    }};
}

/// How long a revoked API token's row is kept (it counts towards
/// [`MAX_API_TOKENS`](crate::MAX_API_TOKENS) until then): a week.
pub(crate) const REVOKED_TOKEN_MAX_AGE: i64 = 7 * 24 * 3600;

/// A shared limit's window that started longer ago than this is deleted: every window of the
/// service's limits is an hour at most.
pub(crate) const RATE_WINDOW_MAX_AGE: i64 = 24 * 3600;
