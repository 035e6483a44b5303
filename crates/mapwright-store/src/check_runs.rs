//! The failing-URL check runs' queries (issue 20) and those of the checks they record and report,
//! written once for both backends like `sql.rs`, as inherent methods that the `Store`
//! implementation calls.
//!
//! A run is claimed in one write transaction that first locks one row standing for the site's
//! origin (its lowest-id site row: `UPDATE ... SET origin = origin`), so that two processes
//! claiming runs of one origin on PostgreSQL take turns, as SQLite's single writer makes them
//! anyway; a new run also locks the row of the user it counts against (who pressed "Check
//! now", or the site's owner for a periodic run), so that count holds across processes. Locks
//! are taken in that order (origin, then user), never the reverse.

/// The columns of [`crate::CheckRun`].
macro_rules! check_run_cols {
    () => {
        "site_id, state, requested_by, started_at, finished_at, after_url_id, checked, failing, total, error, \
         lease_owner, lease_expires_at, last_complete_at, new_only"
    };
}

/// Upserts URL check outcomes in the transaction `$tx`, in chunks. Each row keeps what the
/// visit before it said (migration 0062): whether it failed (`prev_failing`), and how the page's
/// version and the URL's lastmod (`lastmod_seen`, read from the URL's row now) moved since
/// (`version_pair`, see `trust.rs`).
macro_rules! insert_url_checks {
    ($tx:ident, $site_id:expr, $checks:expr, $now:expr) => {
        for chunk in $checks.chunks($crate::sql::URL_CHUNK) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO url_checks (url_id, site_id, checked_at, status, rule, message, version, lastmod_seen) ",
            );
            insert.push_values(chunk, |mut row, c| {
                row.push_bind(c.url_id)
                    .push_bind($site_id)
                    .push_bind($now)
                    .push_bind(c.status)
                    .push_bind(&c.rule)
                    .push_bind(&c.message)
                    .push_bind(c.version.as_deref().map(clean))
                    .push("(SELECT u.lastmod FROM urls u WHERE u.id = ")
                    .push_bind_unseparated(c.url_id)
                    .push_unseparated(")");
            });
            insert.push(
                " ON CONFLICT (url_id) DO UPDATE SET checked_at = excluded.checked_at, status = excluded.status, \
                 rule = excluded.rule, message = excluded.message, prev_failing = (url_checks.rule IS NOT NULL), \
                 version_pair = CASE WHEN url_checks.version IS NULL OR excluded.version IS NULL THEN NULL \
                 WHEN (url_checks.version = excluded.version) = (url_checks.lastmod_seen IS NOT DISTINCT FROM \
                 excluded.lastmod_seen) THEN 0 WHEN url_checks.version = excluded.version THEN 1 ELSE 2 END, \
                 version = excluded.version, lastmod_seen = excluded.lastmod_seen",
            );
            insert.build().execute(&mut *$tx).await?;
        }
    };
}

/// The newest read diff's id (0 without one): where a run's look for new URLs stands
/// (`check_runs.new_seen_diff`, migration 0063).
macro_rules! newest_diff {
    () => {
        "(SELECT COALESCE(MAX(id), 0) FROM read_diffs)"
    };
}

/// In a claim's transaction `$tx`: the count of the owner's periodic and new-URL runs going
/// when it is `$per_owner` or more (the owner's row locked first, so the count holds across
/// processes), else `None`.
macro_rules! check_runs_owner_busy {
    ($tx:ident, $owner_id:expr, $now:expr, $per_owner:expr) => {{
        sqlx::query("UPDATE users SET is_admin = is_admin WHERE id = $1").bind($owner_id).execute(&mut *$tx).await?;
        let running: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM check_runs r JOIN sites s ON s.id = r.site_id WHERE s.owner_id = $1 \
             AND r.requested_by IS NULL AND r.state = 'running' AND r.lease_expires_at > $2",
        )
        .bind($owner_id)
        .bind($now)
        .fetch_one(&mut *$tx)
        .await?;
        (running >= $per_owner).then_some(running)
    }};
}

/// The check-run methods of a store type with a `pool` and `begin_write`.
macro_rules! impl_check_runs {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn check_runs_due(
                &self,
                now: Timestamp,
                complete_before: Timestamp,
                failed_before: Timestamp,
                limit: i64,
            ) -> Result<Vec<i64>> {
                // Last, the sites whose last run is done and ended `NEW_URL_CHECK_GAP` ago, where a
                // read diff newer than that run's start (or the last look for new URLs) added
                // URLs: a run of those (`CheckTrigger::NewUrls`) may be due; the claim counts them.
                Ok(sqlx::query_scalar(
                    "SELECT s.id FROM sites s LEFT JOIN check_runs r ON r.site_id = s.id \
                     WHERE s.verified_at IS NOT NULL AND (r.site_id IS NULL \
                     OR (r.state = 'running' AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= $1)) \
                     OR (r.state <> 'running' AND COALESCE(r.last_complete_at, 0) < $2 \
                         AND (r.state = 'done' OR r.finished_at < $3)) \
                     OR (r.state = 'done' AND r.finished_at <= $5 AND EXISTS (SELECT 1 FROM sitemaps sm \
                         JOIN read_diffs d ON d.sitemap_id = sm.id WHERE sm.site_id = s.id AND d.added > 0 \
                         AND d.id > COALESCE(r.new_seen_diff, 0)))) \
                     ORDER BY CASE WHEN r.state = 'running' THEN 0 WHEN r.site_id IS NULL THEN 1 \
                     WHEN COALESCE(r.last_complete_at, 0) < $2 THEN 2 ELSE 3 END, \
                     COALESCE(r.last_complete_at, 0), s.id LIMIT $4",
                )
                .bind(now)
                .bind(complete_before)
                .bind(failed_before)
                .bind(limit.max(0))
                .bind(now - $crate::NEW_URL_CHECK_GAP)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn check_runs_claim(
                &self,
                site_id: i64,
                owner: &str,
                trigger: &CheckTrigger,
                now: Timestamp,
                lease_until: Timestamp,
            ) -> Result<std::result::Result<CheckRun, CheckRefusal>> {
                let mut tx = self.begin_write().await?;
                let site: Option<(String, Option<i64>, i64)> =
                    sqlx::query_as("SELECT origin, verified_at, owner_id FROM sites WHERE id = $1")
                        .bind(site_id)
                        .fetch_optional(&mut *tx)
                        .await?;
                let Some((origin, verified_at, owner_id)) = site else {
                    return Err(Error::NotFound { what: "site", id: site_id });
                };
                sqlx::query(
                    "UPDATE sites SET origin = origin WHERE id = (SELECT MIN(id) FROM sites WHERE origin = $1)",
                )
                .bind(&origin)
                .execute(&mut *tx)
                .await?;
                let run: Option<CheckRun> =
                    sqlx::query_as(concat!("SELECT ", check_run_cols!(), " FROM check_runs WHERE site_id = $1"))
                        .bind(site_id)
                        .fetch_optional(&mut *tx)
                        .await?;
                let in_force = |r: &CheckRun| r.is_running() && r.lease_expires_at.is_some_and(|t| t > now);
                if run.as_ref().is_some_and(in_force) {
                    return Ok(Err(CheckRefusal::Running));
                }
                if verified_at.is_none() {
                    return Ok(Err(CheckRefusal::NotDue));
                }
                let busy: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM check_runs r JOIN sites s ON s.id = r.site_id WHERE s.origin = $1 \
                     AND r.site_id <> $2 AND r.state = 'running' AND r.lease_expires_at > $3",
                )
                .bind(&origin)
                .bind(site_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                if busy > 0 {
                    return Ok(Err(CheckRefusal::OriginBusy));
                }
                if let (CheckTrigger::NewUrls { finished_before, per_owner }, false) =
                    (trigger, run.as_ref().is_some_and(CheckRun::is_running))
                {
                    // The URLs past the last done run, if it ended long enough ago.
                    let Some(last) = run.filter(|r| r.state == "done" && r.finished_at.is_some_and(|at| at < *finished_before))
                    else {
                        return Ok(Err(CheckRefusal::NotDue));
                    };
                    let fresh: i64 = sqlx::query_scalar(
                        "SELECT COUNT(*) FROM urls WHERE site_id = $1 AND removed_at IS NULL AND id > $2",
                    )
                    .bind(site_id)
                    .bind(last.after_url_id)
                    .fetch_one(&mut *tx)
                    .await?;
                    if fresh == 0 {
                        // Looked: the reads since added no URL past the last run.
                        sqlx::query(concat!("UPDATE check_runs SET new_seen_diff = ", newest_diff!(), " WHERE site_id = $1"))
                            .bind(site_id)
                            .execute(&mut *tx)
                            .await?;
                        tx.commit().await?;
                        return Ok(Err(CheckRefusal::NotDue));
                    }
                    if let Some(running) = check_runs_owner_busy!(tx, owner_id, now, *per_owner) {
                        return Ok(Err(CheckRefusal::OwnerLimit(running)));
                    }
                    let started: CheckRun = sqlx::query_as(concat!(
                        "UPDATE check_runs SET state = 'running', requested_by = NULL, started_at = $2, finished_at = NULL, \
                         checked = 0, failing = 0, total = $3, error = NULL, lease_owner = $4, lease_expires_at = $5, \
                         new_only = TRUE, new_seen_diff = ", newest_diff!(), " WHERE site_id = $1 RETURNING ",
                        check_run_cols!()
                    ))
                    .bind(site_id)
                    .bind(now)
                    .bind(fresh)
                    .bind(owner)
                    .bind(lease_until)
                    .fetch_one(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    return Ok(Ok(started));
                }
                if run.as_ref().is_some_and(CheckRun::is_running) {
                    // A run whose process died or stopped: taken over where it was.
                    let resumed: CheckRun = sqlx::query_as(concat!(
                        "UPDATE check_runs SET lease_owner = $2, lease_expires_at = $3 WHERE site_id = $1 RETURNING ",
                        check_run_cols!()
                    ))
                    .bind(site_id)
                    .bind(owner)
                    .bind(lease_until)
                    .fetch_one(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    return Ok(Ok(resumed));
                }
                let requested_by = match trigger {
                    CheckTrigger::Periodic { complete_before, failed_before, per_owner } => {
                        let due = run.as_ref().is_none_or(|r| {
                            r.last_complete_at.unwrap_or(0) < *complete_before
                                && (r.state == "done" || r.finished_at.unwrap_or(0) < *failed_before)
                        });
                        if !due {
                            return Ok(Err(CheckRefusal::NotDue));
                        }
                        if let Some(running) = check_runs_owner_busy!(tx, owner_id, now, *per_owner) {
                            return Ok(Err(CheckRefusal::OwnerLimit(running)));
                        }
                        None
                    }
                    // Handled above: a new-URL run of a site whose run is going is that run.
                    CheckTrigger::NewUrls { .. } => return Ok(Err(CheckRefusal::Running)),
                    CheckTrigger::User { user_id, per_user, cooldown } => {
                        if let Some(wait) = run
                            .as_ref()
                            .and_then(|r| r.finished_at)
                            .map(|at| at + cooldown - now)
                            .filter(|wait| *wait > 0)
                        {
                            return Ok(Err(CheckRefusal::TooSoon(wait)));
                        }
                        sqlx::query("UPDATE users SET is_admin = is_admin WHERE id = $1")
                            .bind(user_id)
                            .execute(&mut *tx)
                            .await?;
                        let running: i64 = sqlx::query_scalar(
                            "SELECT COUNT(*) FROM check_runs WHERE requested_by = $1 AND state = 'running' \
                             AND lease_expires_at > $2",
                        )
                        .bind(user_id)
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await?;
                        if running >= *per_user {
                            return Ok(Err(CheckRefusal::UserLimit(running)));
                        }
                        Some(*user_id)
                    }
                };
                let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1 AND removed_at IS NULL")
                    .bind(site_id)
                    .fetch_one(&mut *tx)
                    .await?;
                let started: CheckRun = sqlx::query_as(concat!(
                    "INSERT INTO check_runs (site_id, state, requested_by, started_at, after_url_id, checked, failing, \
                     total, lease_owner, lease_expires_at, new_seen_diff) VALUES ($1, 'running', $2, $3, 0, 0, 0, $4, $5, $6, ",
                    newest_diff!(),
                    ") \
                     ON CONFLICT (site_id) DO UPDATE SET state = 'running', requested_by = excluded.requested_by, \
                     started_at = excluded.started_at, finished_at = NULL, after_url_id = 0, checked = 0, failing = 0, \
                     total = excluded.total, error = NULL, lease_owner = excluded.lease_owner, \
                     lease_expires_at = excluded.lease_expires_at, new_only = FALSE, new_seen_diff = excluded.new_seen_diff \
                     RETURNING ",
                    check_run_cols!()
                ))
                .bind(site_id)
                .bind(requested_by)
                .bind(now)
                .bind(total)
                .bind(owner)
                .bind(lease_until)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(Ok(started))
            }

            pub(crate) async fn check_runs_urls(
                &self,
                site_id: i64,
                after_url_id: i64,
                limit: i64,
            ) -> Result<Vec<(i64, String)>> {
                Ok(sqlx::query_as(
                    "SELECT id, loc FROM urls WHERE site_id = $1 AND removed_at IS NULL AND id > $2 ORDER BY id LIMIT $3",
                )
                .bind(site_id)
                .bind(after_url_id)
                .bind(limit.clamp(1, 10_000))
                .fetch_all(&self.pool)
                .await?)
            }

            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
            pub(crate) async fn check_runs_record(
                &self,
                site_id: i64,
                owner: &str,
                checks: &[UrlCheckRecord],
                after_url_id: i64,
                now: Timestamp,
                lease_until: Timestamp,
            ) -> Result<bool> {
                let failing = checks.iter().filter(|c| c.rule.is_some()).count() as i64;
                let mut tx = self.begin_bulk().await?;
                let held = sqlx::query(
                    "UPDATE check_runs SET after_url_id = $3, checked = checked + $4, failing = failing + $5, \
                     lease_expires_at = $6 WHERE site_id = $1 AND lease_owner = $2 AND state = 'running'",
                )
                .bind(site_id)
                .bind(owner)
                .bind(after_url_id)
                .bind(checks.len() as i64)
                .bind(failing)
                .bind(lease_until)
                .execute(&mut *tx)
                .await?;
                if held.rows_affected() == 0 {
                    return Ok(false);
                }
                insert_url_checks!(tx, site_id, checks, now);
                tx.commit().await?;
                Ok(true)
            }

            pub(crate) async fn check_runs_finish(
                &self,
                site_id: i64,
                owner: &str,
                error: Option<&str>,
                now: Timestamp,
            ) -> Result<Option<CheckRun>> {
                let state = if error.is_none() { "done" } else { "failed" };
                Ok(sqlx::query_as(concat!(
                    "UPDATE check_runs SET state = $3, error = $4, finished_at = $5, lease_owner = NULL, \
                     lease_expires_at = NULL, \
                     last_complete_at = CASE WHEN $3 = 'done' AND NOT new_only THEN $5 ELSE last_complete_at END \
                     WHERE site_id = $1 AND lease_owner = $2 AND state = 'running' RETURNING ",
                    check_run_cols!()
                ))
                .bind(site_id)
                .bind(owner)
                .bind(state)
                .bind(error)
                .bind(now)
                .fetch_optional(&self.pool)
                .await?)
            }

            pub(crate) async fn check_runs_release(&self, owner: &str, now: Timestamp) -> Result<u64> {
                let done = sqlx::query(
                    "UPDATE check_runs SET lease_expires_at = $2 WHERE lease_owner = $1 AND state = 'running'",
                )
                .bind(owner)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }

            /// The current or last check run of a site of the actor
            /// ([`Store::check_run`](crate::Store::check_run)).
            pub(crate) async fn check_run_impl(&self, actor: Actor, site_id: i64) -> Result<Option<CheckRun>> {
                self.site_impl(actor, site_id).await?;
                Ok(sqlx::query_as(concat!("SELECT ", check_run_cols!(), " FROM check_runs WHERE site_id = $1"))
                    .bind(site_id)
                    .fetch_optional(&self.pool)
                    .await?)
            }
        }
    };
}

/// The `Store` methods of recorded URL checks and the console's failure reports: what a check run
/// writes (through [`insert_url_checks!`]) and what its results look like to the user.
macro_rules! url_check_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn record_url_checks_impl(&self, site_id: i64, checks: &[UrlCheckRecord], now: Timestamp) -> Result<()> {
                let mut tx = self.begin_bulk().await?;
                insert_url_checks!(tx, site_id, checks, now);
                tx.commit().await?;
                Ok(())
            }

            pub(crate) async fn list_url_failures_impl(
                &self,
                actor: Actor,
                site_id: i64,
                kind: Option<&str>,
                after: i64,
                limit: i64,
            ) -> Result<Page<UrlFailure>> {
                self.site(actor, site_id).await?;
                let limit = limit.clamp(1, 1000);
                let items: Vec<UrlFailure> = sqlx::query_as(concat!(
                    "SELECT c.url_id, u.loc, c.status, c.rule, c.message, c.checked_at, ", failure_kind!(), " AS kind, \
                     COALESCE(", newly_failing!(), ", FALSE) AS newly_failing, \
                     (SELECT MIN(su.sitemap_id) FROM sitemap_urls su WHERE su.url_id = c.url_id) AS sitemap_id, \
                     (SELECT sm.url FROM sitemaps sm WHERE sm.id = \
                      (SELECT MIN(su.sitemap_id) FROM sitemap_urls su WHERE su.url_id = c.url_id)) AS sitemap_url \
                     FROM url_checks c JOIN urls u ON u.id = c.url_id \
                     WHERE c.site_id = $1 AND c.rule IS NOT NULL AND u.removed_at IS NULL AND c.url_id > $2 \
                     AND ($4 OR ", failure_kind!(), " = $5 OR ($5 = 'new' AND ", newly_failing!(), ")) ORDER BY c.url_id LIMIT $3"
                ))
                .bind(site_id)
                .bind(after)
                .bind(limit + 1)
                .bind(kind.is_none())
                .bind(kind.unwrap_or(""))
                .fetch_all(&self.pool)
                .await?;
                Ok(Page::from_one_extra(items, limit, |f| f.url_id))
            }

            pub(crate) async fn check_changes_impl(
                &self,
                actor: Actor,
                site_id: i64,
                after: i64,
                limit: i64,
            ) -> Result<$crate::CheckChanges> {
                self.site(actor, site_id).await?;
                let (newly_failing, fixed): (i64, i64) = sqlx::query_as(concat!(
                    "SELECT (SELECT COUNT(*) FROM url_checks c JOIN urls u ON u.id = c.url_id WHERE c.site_id = $1 \
                     AND c.rule IS NOT NULL AND ", newly_failing!(), " AND u.removed_at IS NULL), \
                     (SELECT COUNT(*) FROM url_checks c JOIN urls u ON u.id = c.url_id WHERE c.site_id = $1 \
                     AND ", fixed!(), " AND u.removed_at IS NULL)"
                ))
                .bind(site_id)
                .fetch_one(&self.pool)
                .await?;
                let limit = limit.clamp(1, 1000);
                let items: Vec<$crate::UrlFixed> = sqlx::query_as(concat!(
                    "SELECT c.url_id, u.loc, c.checked_at FROM url_checks c JOIN urls u ON u.id = c.url_id \
                     WHERE c.site_id = $1 AND ", fixed!(), " AND u.removed_at IS NULL \
                     AND c.url_id > $2 ORDER BY c.url_id LIMIT $3"
                ))
                .bind(site_id)
                .bind(after.max(0))
                .bind(limit + 1)
                .fetch_all(&self.pool)
                .await?;
                let fixed_urls = Page::from_one_extra(items, limit, |f: &$crate::UrlFixed| f.url_id);
                Ok($crate::CheckChanges { newly_failing, fixed, fixed_urls })
            }

            pub(crate) async fn url_failure_kinds_impl(&self, actor: Actor, site_id: i64) -> Result<Vec<FailureKindCount>> {
                self.site(actor, site_id).await?;
                Ok(sqlx::query_as(concat!(
                    "SELECT x.kind, COUNT(*) AS count FROM (SELECT ", failure_kind!(), " AS kind \
                     FROM url_checks c JOIN urls u ON u.id = c.url_id \
                     WHERE c.site_id = $1 AND c.rule IS NOT NULL AND u.removed_at IS NULL) x GROUP BY x.kind ORDER BY x.kind"
                ))
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?)
            }
        }
    };
}

/// Whether a failing URL check `c` passed the check before it: failing since the previous
/// check (`UrlFailure::newly_failing`, the kind filter `new`, `CheckChanges::newly_failing`).
macro_rules! newly_failing {
    () => {
        "c.prev_failing = FALSE"
    };
}

/// Whether a URL check `c` passed after the check before it failed: fixed (`CheckChanges`;
/// the partial index `url_checks_fixed`, migration 0062).
macro_rules! fixed {
    () => {
        "c.rule IS NULL AND c.prev_failing = TRUE"
    };
}

/// The kind of a failing URL check `c` in the console's report (see `UrlFailure::kind`).
macro_rules! failure_kind {
    () => {
        "CASE WHEN c.rule = 'robots-disallowed' THEN 'robots' WHEN c.rule = 'url-noindex' THEN 'noindex' \
         WHEN c.message LIKE '% redirects to %' THEN 'redirect' WHEN c.status = 404 THEN '404' \
         WHEN c.status = 410 THEN '410' WHEN c.status >= 500 THEN '5xx' ELSE 'other' END"
    };
}
