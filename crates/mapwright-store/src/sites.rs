//! The queries of sites: adding, listing, deleting, verifying and their snapshots, written once for
//! both backends like those of `sql.rs`, whose `impl_store!` expands [`site_methods!`] into inherent
//! methods (`*_impl`) that `store.rs`'s `impl Store` calls (see `signups.rs`).

/// The `Store` methods of sites; `lock` is the row lock of the query of sites to verify (see
/// `impl_store!`).
macro_rules! site_methods {
    ($ty:ty, lock = $lock:literal) => {
        impl $ty {
            pub(crate) async fn create_site_impl(&self, actor: Actor, origin: &str, now: Timestamp) -> Result<Site> {
                let token = secret::new_verification_token();
                // The count and the insert in one statement: concurrent requests cannot pass
                // the limit together.
                let mut tx = self.begin_write().await?;
                let id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO sites (owner_id, origin, verification_token, created_at) SELECT $1, $2, $3, $4 \
                     WHERE (SELECT COUNT(*) FROM sites WHERE owner_id = $1 AND verified_at IS NULL) < $5 \
                     AND (SELECT COUNT(*) FROM sites WHERE owner_id = $1) < $6 RETURNING id",
                )
                .bind(actor.user_id)
                .bind(origin)
                .bind(&token)
                .bind(now)
                .bind($crate::MAX_UNVERIFIED_SITES)
                .bind($crate::MAX_SITES_PER_USER)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| conflict(e, format!("site {origin}")))?;
                if let Some(id) = id {
                    // Its first member: the user who added it, as owner (`members.rs`).
                    sqlx::query(
                        "INSERT INTO site_members (site_id, user_id, role, added_at) VALUES ($1, $2, 'owner', $3)",
                    )
                    .bind(id)
                    .bind(actor.user_id)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                let Some(id) = id else {
                    let unverified = self.list_sites(actor).await?.iter().filter(|s| s.verified_at.is_none()).count();
                    return Err(Error::Quota(if unverified as i64 >= $crate::MAX_UNVERIFIED_SITES {
                        format!(
                            "you have {} sites that are not verified: verify or delete one before adding {origin}",
                            $crate::MAX_UNVERIFIED_SITES
                        )
                    } else {
                        format!(
                            "you have {} sites, the most an account may have: delete one before adding {origin}",
                            $crate::MAX_SITES_PER_USER
                        )
                    }));
                };
                Ok(Site {
                    id,
                    owner_id: actor.user_id,
                    origin: origin.to_owned(),
                    verification_token: token,
                    created_at: now,
                    verified_at: None,
                    last_checked_at: None,
                })
            }

            pub(crate) async fn site_impl(&self, actor: Actor, site_id: i64) -> Result<Site> {
                visible_site!(self, site_cols!(), actor, site_id)
            }

            pub(crate) async fn list_sites_impl(&self, actor: Actor) -> Result<Vec<Site>> {
                let query = if actor.is_admin {
                    sqlx::query_as(concat!("SELECT ", site_cols!(), " FROM sites s ORDER BY s.id"))
                } else {
                    sqlx::query_as(concat!(
                        "SELECT ",
                        site_cols!(),
                        " FROM sites s WHERE ",
                        member_of!("s.id", "$1"),
                        " ORDER BY s.id"
                    ))
                    .bind(actor.user_id)
                };
                Ok(query.fetch_all(&self.pool).await?)
            }

            pub(crate) async fn delete_site_impl(&self, actor: Actor, site_id: i64) -> Result<()> {
                self.site_as_owner_impl(actor, site_id).await?;
                // The site's URLs, links, checks and history go with it (ON DELETE CASCADE): a
                // bulk transaction, each cascaded row's statement planned once.
                let mut tx = self.begin_bulk().await?;
                let done = sqlx::query(concat!(
                    "DELETE FROM sites WHERE id IN (SELECT s.id FROM sites s WHERE s.id = $1 AND ",
                    owner_of!("$2", "$3"),
                    ")"
                ))
                .bind(site_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                found(done.rows_affected(), "site", site_id)
            }

            pub(crate) async fn record_verification_impl(&self, site_id: i64, ok: bool, now: Timestamp) -> Result<()> {
                // A success that does not say which proof keeps the proof recorded before.
                self.record_check_impl(site_id, ok, None, None, now).await
            }

            pub(crate) async fn record_robots_read_impl(
                &self,
                site_id: i64,
                error: Option<&str>,
                now: Timestamp,
            ) -> Result<()> {
                sqlx::query("UPDATE sites SET robots_read_at = $1, robots_error = $2 WHERE id = $3")
                    .bind(now)
                    .bind(error.map(clean))
                    .bind(site_id)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            pub(crate) async fn robots_read_impl(&self, actor: Actor, site_id: i64) -> Result<$crate::RobotsRead> {
                let (at, error): (Option<Timestamp>, Option<String>) =
                    visible_site!(self, "s.robots_read_at, s.robots_error", actor, site_id)?;
                Ok($crate::RobotsRead { at, error })
            }

            pub(crate) async fn sites_to_verify_impl(
                &self,
                before: Timestamp,
                now: Timestamp,
                limit: i64,
            ) -> Result<Vec<Site>> {
                claim_due_checks!(
                    self,
                    Site,
                    "sites",
                    $lock,
                    ("id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at"),
                    before,
                    limit,
                    now
                )
            }

            pub(crate) async fn verified_sites_by_origin_impl(&self, origin: &str) -> Result<Vec<Site>> {
                Ok(sqlx::query_as(concat!(
                    "SELECT ",
                    site_cols!(),
                    " FROM sites s WHERE s.origin = $1 AND s.verified_at IS NOT NULL ORDER BY s.id"
                ))
                .bind(origin)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn site_by_id_impl(&self, site_id: i64) -> Result<Site> {
                sqlx::query_as(concat!("SELECT ", site_cols!(), " FROM sites s WHERE s.id = $1"))
                    .bind(site_id)
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or(Error::NotFound { what: "site", id: site_id })
            }

            pub(crate) async fn record_site_snapshot_impl(&self, site_id: i64, now: Timestamp) -> Result<SiteSnapshot> {
                let mut tx = self.begin_write().await?;
                let snapshot: SiteSnapshot = sqlx::query_as(
                    "INSERT INTO site_snapshots (site_id, taken_at, live_urls, failing_urls) VALUES ($1, $2, \
                     (SELECT COUNT(*) FROM urls WHERE site_id = $1 AND removed_at IS NULL), \
                     (SELECT COUNT(*) FROM url_checks c JOIN urls u ON u.id = c.url_id \
                      WHERE c.site_id = $1 AND c.rule IS NOT NULL AND u.removed_at IS NULL)) \
                     ON CONFLICT (site_id, taken_at) DO UPDATE SET live_urls = excluded.live_urls, \
                     failing_urls = excluded.failing_urls RETURNING taken_at, live_urls, failing_urls",
                )
                .bind(site_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM site_snapshots WHERE site_id = $1 AND taken_at < $2")
                    .bind(site_id)
                    .bind(now - 400 * 86_400)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(snapshot)
            }

            pub(crate) async fn list_site_snapshots_impl(
                &self,
                actor: Actor,
                site_id: i64,
                limit: i64,
            ) -> Result<Vec<SiteSnapshot>> {
                self.site(actor, site_id).await?;
                let mut rows: Vec<SiteSnapshot> = sqlx::query_as(
                    "SELECT taken_at, live_urls, failing_urls FROM site_snapshots WHERE site_id = $1 \
                     ORDER BY taken_at DESC LIMIT $2",
                )
                .bind(site_id)
                .bind(limit.clamp(1, 10_000))
                .fetch_all(&self.pool)
                .await?;
                rows.reverse();
                Ok(rows)
            }
        }
    };
}

/// The columns of [`crate::Site`].
macro_rules! site_cols {
    () => {
        "s.id, s.owner_id, s.origin, s.verification_token, s.created_at, s.verified_at, s.last_checked_at"
    };
}
