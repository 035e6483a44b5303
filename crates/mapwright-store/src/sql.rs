//! The `Store` implementation, written once for both backends, and what its queries share.
//!
//! SQLite and PostgreSQL take the same SQL: `$N` placeholders (sqlx's SQLite driver
//! maps `$N` to the N-th argument), `ON CONFLICT ... DO UPDATE`, `RETURNING`, `IS DISTINCT
//! FROM`, and the same column types (times and ids are 64-bit integers). A macro, not generic
//! code over `sqlx::Database`, stamps the implementation out for each concrete pool type:
//! the generic version needs a dozen higher-ranked trait bounds per method for no gain. What
//! differs (how a write transaction begins, the lease query, the migrations) is passed in.
//!
//! [`impl_store!`] writes the `impl Store` (`#[async_trait]` rewrites only the methods written
//! in the impl itself), whose methods call inherent ones (`*_impl`) that each concern's macro
//! stamps out beside it: `accounts.rs` (users, sessions, API tokens), `signups.rs` (sign-ups,
//! shared limits, health), `recovery.rs` (password resets, changes of password and address), `sites.rs`, `sitemaps.rs` (sitemaps, downloads, roll-ups, the
//! console's summaries), `leasing.rs` (the fetch queue), `urls.rs`, `ingest.rs` (a download's
//! staged URLs), `check_runs.rs` (check runs, recorded checks, failure reports), `members.rs` (members
//! and invitations), `alerts.rs` (e-mail alerts), `diffs.rs` (per-read diffs), `domains.rs` (domain properties), `webhooks.rs` (webhook endpoints, deliveries, attempts) and `retention.rs`. What several concerns use stays here: `owned!`, `member_of!`, `owner_of!`, `mark_orphans_removed!`,
//! [`Pacer`], the hashing and cleaning of URLs, the chunk sizes.

/// The condition "the acting user may see site `s`": `$a` is the admin flag, `$u` the id; a
/// member of any role sees the site (`members.rs`; index `site_members_user`).
macro_rules! owned {
    ($a:literal, $u:literal) => {
        concat!("(", $a, " OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ", $u, "))")
    };
}

/// The condition "site id `$site` is one of user `$u`'s" for a list, without the admin's `OR`: a list
/// driven by it reads the user's memberships (`site_members_user`) and then their sites, where
/// `owned!`'s `$a OR ...`, whose flag the planner cannot know, scans every site or sitemap of
/// the service and tests each (36 ms for "My sitemaps" at 10^4 sites). An admin's list has no
/// condition at all; `owned!` stays for the checks of one row, which it does not slow.
macro_rules! member_of {
    ($site:literal, $u:literal) => {
        concat!($site, " IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ", $u, ")")
    };
}

/// The condition "the acting user may change site `s`": an admin or an owner of it.
macro_rules! owner_of {
    ($a:literal, $u:literal) => {
        concat!(
            "(",
            $a,
            " OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ",
            $u,
            " AND m.role = 'owner'))"
        )
    };
}

/// Implements [`crate::Store`] for a type with a `pool` field and `begin_write` and `pacer`
/// methods; `lock` is the lease query's row lock, `loc_lower` the URL search's lower-cased `loc`.
macro_rules! impl_store {
    (
        $ty:ty,
        backend = $name:literal,
        migrations = $migrations:ident,
        lock = $lock:literal,
        loc_lower = $loc_lower:literal
    ) => {
        account_methods!($ty);
        signup_methods!($ty);
        recovery_methods!($ty);
        site_methods!($ty, lock = $lock);
        sitemap_methods!($ty);
        lease_methods!($ty, lock = $lock, backend = $name);
        url_methods!($ty, loc_lower = $loc_lower);
        url_check_methods!($ty);
        retention_methods!($ty);
        member_methods!($ty);
        domain_methods!($ty, lock = $lock);
        listing_methods!($ty);
        alert_methods!($ty);
        diff_methods!($ty);
        webhook_methods!($ty);
        outbound_methods!($ty);

        #[async_trait::async_trait]
        impl $crate::Store for $ty {
            fn backend(&self) -> &'static str {
                $name
            }

            async fn migrate(&self) -> $crate::Result<()> {
                $crate::migrations::migrator($crate::migrations::$migrations).run(&self.pool).await?;
                // URLs stored before migration 0006 on SQLite get their hash here (PostgreSQL's
                // migration computes it in SQL); a no-op afterwards.
                loop {
                    let rows: Vec<(i64, String)> =
                        sqlx::query_as("SELECT id, loc FROM urls WHERE loc_hash IS NULL LIMIT 1000")
                            .fetch_all(&self.pool)
                            .await?;
                    if rows.is_empty() {
                        return Ok(());
                    }
                    let mut tx = self.begin_write().await?;
                    for (id, loc) in &rows {
                        sqlx::query("UPDATE urls SET loc_hash = $1 WHERE id = $2")
                            .bind(loc_hash(loc))
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    }
                    tx.commit().await?;
                }
            }

            async fn close(&self) {
                self.close_more().await;
                self.pool.close().await;
            }

            async fn notify_due(&self) -> Result<()> {
                self.notify_due_now().await
            }

            async fn due_listener(&self) -> Result<Option<$crate::DueListener>> {
                self.listen_due().await
            }

            async fn create_user(
                &self,
                email: &str,
                password_hash: &str,
                is_admin: bool,
                now: Timestamp,
            ) -> Result<User> {
                self.create_user_impl(email, password_hash, is_admin, now).await
            }

            async fn grant_admin(&self, email: &str) -> Result<bool> {
                self.grant_admin_impl(email).await
            }

            async fn user_credentials(&self, email: &str) -> Result<Option<(User, String)>> {
                self.user_credentials_impl(email).await
            }

            async fn request_signup(
                &self,
                email: &str,
                password_hash: &str,
                from: &Requester,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<SignupRequest> {
                self.request_signup_impl(email, password_hash, from, now, ttl_seconds).await
            }

            async fn pending_signup(&self, token: &str, now: Timestamp) -> Result<Option<(String, String)>> {
                self.pending_signup_impl(token, now).await
            }

            async fn confirm_signup(&self, token: &str, now: Timestamp) -> Result<Option<User>> {
                self.confirm_signup_impl(token, now).await
            }

            async fn count_event(
                &self,
                scope: &str,
                key: &str,
                limit: i64,
                window_seconds: i64,
                now: Timestamp,
            ) -> Result<Option<i64>> {
                self.count_event_impl(scope, key, limit, window_seconds, now).await
            }

            async fn count_events(
                &self,
                scope: &str,
                key: &str,
                events: i64,
                limit: i64,
                window_seconds: i64,
                now: Timestamp,
            ) -> Result<Option<i64>> {
                self.count_events_impl(scope, key, events, limit, window_seconds, now).await
            }

            async fn health(&self, now: Timestamp) -> Result<()> {
                self.health_impl(now).await
            }

            async fn request_password_reset(
                &self,
                email: &str,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<Option<(User, String)>> {
                self.request_password_reset_impl(email, now, ttl_seconds).await
            }

            async fn reset_password(&self, token: &str, password_hash: &str, now: Timestamp) -> Result<Option<User>> {
                self.reset_password_impl(token, password_hash, now).await
            }

            async fn set_password(
                &self,
                user_id: i64,
                password_hash: &str,
                keep_session: Option<&str>,
            ) -> Result<User> {
                self.set_password_impl(user_id, password_hash, keep_session).await
            }

            async fn request_email_change(
                &self,
                user_id: i64,
                new_email: &str,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<SignupRequest> {
                self.request_email_change_impl(user_id, new_email, now, ttl_seconds).await
            }

            async fn pending_email_change(&self, token: &str, now: Timestamp) -> Result<Option<(User, String)>> {
                self.pending_email_change_impl(token, now).await
            }

            async fn confirm_email_change(&self, token: &str, now: Timestamp) -> Result<Option<(User, String)>> {
                self.confirm_email_change_impl(token, now).await
            }

            async fn create_session(&self, user_id: i64, now: Timestamp, ttl_seconds: i64) -> Result<String> {
                self.create_session_impl(user_id, now, ttl_seconds).await
            }

            async fn session_user(&self, token: &str, now: Timestamp) -> Result<Option<User>> {
                self.session_user_impl(token, now).await
            }

            async fn delete_session(&self, token: &str) -> Result<()> {
                self.delete_session_impl(token).await
            }

            async fn delete_expired_sessions(&self, now: Timestamp) -> Result<u64> {
                self.delete_expired_sessions_impl(now).await
            }

            async fn create_api_token(&self, actor: Actor, name: &str, now: Timestamp) -> Result<(ApiToken, String)> {
                self.create_api_token_impl(actor, name, now).await
            }

            async fn list_api_tokens(&self, actor: Actor) -> Result<Vec<ApiToken>> {
                self.list_api_tokens_impl(actor).await
            }

            async fn revoke_api_token(&self, actor: Actor, token_id: i64, now: Timestamp) -> Result<()> {
                self.revoke_api_token_impl(actor, token_id, now).await
            }

            async fn api_token_user(&self, secret_value: &str, now: Timestamp) -> Result<Option<User>> {
                self.api_token_user_impl(secret_value, now).await
            }

            async fn create_site(&self, actor: Actor, origin: &str, now: Timestamp) -> Result<Site> {
                self.create_site_impl(actor, origin, now).await
            }

            async fn site(&self, actor: Actor, site_id: i64) -> Result<Site> {
                self.site_impl(actor, site_id).await
            }

            async fn list_sites(&self, actor: Actor) -> Result<Vec<Site>> {
                self.list_sites_impl(actor).await
            }

            async fn delete_site(&self, actor: Actor, site_id: i64) -> Result<()> {
                self.delete_site_impl(actor, site_id).await
            }

            async fn record_verification(&self, site_id: i64, ok: bool, now: Timestamp) -> Result<()> {
                self.record_verification_impl(site_id, ok, now).await
            }

            async fn sites_to_verify(&self, before: Timestamp, now: Timestamp, limit: i64) -> Result<Vec<Site>> {
                self.sites_to_verify_impl(before, now, limit).await
            }

            async fn verified_sites_by_origin(&self, origin: &str) -> Result<Vec<Site>> {
                self.verified_sites_by_origin_impl(origin).await
            }

            async fn add_sitemap(
                &self,
                actor: Actor,
                site_id: i64,
                url: &str,
                source: Source,
                now: Timestamp,
            ) -> Result<Sitemap> {
                self.add_sitemap_impl(actor, site_id, url, source, now).await
            }

            async fn sitemap_by_url(&self, actor: Actor, site_id: i64, url: &str) -> Result<Option<Sitemap>> {
                self.sitemap_by_url_impl(actor, site_id, url).await
            }

            async fn add_sitemap_for_site(
                &self,
                site_id: i64,
                url: &str,
                source: Source,
                parent_id: Option<i64>,
                now: Timestamp,
            ) -> Result<Sitemap> {
                self.add_sitemap_for_site_impl(site_id, url, source, parent_id, now).await
            }

            async fn sitemap(&self, actor: Actor, sitemap_id: i64) -> Result<Sitemap> {
                self.sitemap_impl(actor, sitemap_id).await
            }

            async fn list_sitemaps(&self, actor: Actor, site_id: i64) -> Result<Vec<Sitemap>> {
                self.list_sitemaps_impl(actor, site_id).await
            }

            async fn resubmit_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()> {
                self.resubmit_sitemap_impl(actor, sitemap_id, now).await
            }

            async fn remove_sitemap(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()> {
                self.remove_sitemap_impl(actor, sitemap_id, now).await
            }

            async fn record_ping(&self, sitemap_url: &str, client_addr: &str, now: Timestamp) -> Result<PingOutcome> {
                self.record_ping_impl(sitemap_url, client_addr, now).await
            }

            async fn pings_from_client_since(&self, client_addr: &str, since: Timestamp) -> Result<i64> {
                self.pings_from_client_since_impl(client_addr, since).await
            }

            async fn pings_for_sitemap_since(&self, sitemap_url: &str, since: Timestamp) -> Result<i64> {
                self.pings_for_sitemap_since_impl(sitemap_url, since).await
            }

            async fn lease_sitemaps(
                &self,
                worker: &str,
                now: Timestamp,
                limit: i64,
                lease_seconds: i64,
                policy: LeasePolicy,
            ) -> Result<Vec<LeasedSitemap>> {
                self.lease_sitemaps_impl(worker, now, limit, lease_seconds, policy).await
            }

            async fn complete(
                &self,
                worker: &str,
                sitemap_id: i64,
                d: &DownloadRecord,
                next_fetch_at: Timestamp,
            ) -> Result<i64> {
                self.complete_impl(worker, sitemap_id, d, next_fetch_at).await
            }

            async fn release(&self, worker: &str, sitemap_id: i64) -> Result<()> {
                self.release_impl(worker, sitemap_id).await
            }

            async fn release_all(&self, worker: &str) -> Result<u64> {
                self.release_all_impl(worker).await
            }

            async fn queue_depth(&self, now: Timestamp) -> Result<i64> {
                self.queue_depth_impl(now).await
            }

            async fn list_downloads(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>> {
                self.list_downloads_impl(actor, sitemap_id, limit).await
            }

            // --- scheduler ---

            async fn site_by_id(&self, site_id: i64) -> Result<Site> {
                self.site_by_id_impl(site_id).await
            }

            async fn sitemap_by_id(&self, sitemap_id: i64) -> Result<Sitemap> {
                self.sitemap_by_id_impl(sitemap_id).await
            }

            async fn whole_read_key(&self, sitemap_id: i64) -> Result<Option<String>> {
                self.ingest_read_key(sitemap_id).await
            }

            async fn record_fetch_summary(&self, worker: &str, sitemap_id: i64, summary: &FetchSummary) -> Result<()> {
                self.record_fetch_summary_impl(worker, sitemap_id, summary).await
            }

            async fn sync_index_children(
                &self,
                site_id: i64,
                parent_id: i64,
                children: &[IndexChild],
                now: Timestamp,
            ) -> Result<ChildSync> {
                self.sync_index_children_impl(site_id, parent_id, children, now).await
            }

            async fn store_urls(
                &self,
                site_id: i64,
                sitemap_id: i64,
                urls: &[UrlRecord],
                now: Timestamp,
                quota: i64,
            ) -> Result<UrlWrite> {
                self.store_urls_impl(site_id, sitemap_id, urls, now, quota).await
            }

            async fn sweep_urls(
                &self,
                site_id: i64,
                sitemap_id: i64,
                seen_since: Timestamp,
                now: Timestamp,
            ) -> Result<u64> {
                self.sweep_urls_impl(site_id, sitemap_id, seen_since, now).await
            }

            // The staged write path: `crate::ingest`.
            async fn begin_url_stage(
                &self,
                worker: &str,
                site_id: i64,
                sitemap_id: i64,
                now: Timestamp,
            ) -> Result<UrlStage> {
                self.ingest_begin(worker, site_id, sitemap_id, now).await
            }

            async fn stage_urls(&self, stage: &mut UrlStage, urls: &[UrlRecord]) -> Result<()> {
                self.ingest_stage(stage, urls).await
            }

            async fn merge_url_stage(&self, worker: &str, stage: &UrlStage, merge: UrlMerge) -> Result<UrlWrite> {
                self.ingest_merge(worker, stage, merge).await
            }

            async fn discard_url_stage(&self, stage: &UrlStage) -> Result<()> {
                self.ingest_discard(stage).await
            }

            async fn list_urls(&self, actor: Actor, site_id: i64, query: UrlQuery) -> Result<Page<UrlRow>> {
                self.list_urls_impl(actor, site_id, query).await
            }

            async fn url_sitemaps(&self, actor: Actor, url_id: i64) -> Result<Vec<i64>> {
                self.url_sitemaps_impl(actor, url_id).await
            }

            async fn frontier(&self, actor: Actor, site_id: i64, since: Timestamp, limit: i64) -> Result<Vec<UrlRow>> {
                self.frontier_impl(actor, site_id, since, limit).await
            }

            // --- api ---

            async fn record_pushed_urls(&self, site_id: i64, urls: &[String], now: Timestamp) -> Result<u64> {
                self.record_pushed_urls_impl(site_id, urls, now).await
            }

            // --- console ---

            async fn list_sitemap_summaries(
                &self,
                actor: Actor,
                after: i64,
                limit: i64,
            ) -> Result<Page<SitemapSummary>> {
                self.list_sitemap_summaries_impl(actor, after, limit).await
            }

            async fn list_child_summaries(
                &self,
                actor: Actor,
                parent_ids: &[i64],
                per_parent: i64,
            ) -> Result<Vec<SitemapSummary>> {
                self.list_child_summaries_impl(actor, parent_ids, per_parent).await
            }

            async fn tree_tallies(&self, actor: Actor, index_ids: &[i64]) -> Result<Vec<TreeTally>> {
                self.tree_tallies_impl(actor, index_ids).await
            }

            async fn tree_reads(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>> {
                self.tree_reads_impl(actor, sitemap_id, limit).await
            }

            async fn finding_examples(&self, actor: Actor, q: &FindingQuery) -> Result<Vec<FindingExample>> {
                self.finding_examples_impl(actor, q).await
            }

            async fn search_sitemap_urls(
                &self,
                actor: Actor,
                sitemap_id: i64,
                contains: &str,
                after: i64,
                limit: i64,
            ) -> Result<Page<UrlRow>> {
                self.search_sitemap_urls_impl(actor, sitemap_id, contains, after, limit).await
            }

            async fn list_read_diffs(
                &self,
                actor: Actor,
                sitemap_id: i64,
                limit: i64,
            ) -> Result<Vec<$crate::ReadDiff>> {
                self.list_read_diffs_impl(actor, sitemap_id, limit).await
            }

            async fn read_diff(&self, actor: Actor, download_id: i64) -> Result<$crate::ReadDiff> {
                self.read_diff_impl(actor, download_id).await
            }

            async fn list_diff_urls(
                &self,
                actor: Actor,
                download_id: i64,
                change: Option<$crate::Change>,
                after: i64,
                limit: i64,
            ) -> Result<Page<$crate::DiffUrl>> {
                self.list_diff_urls_impl(actor, download_id, change, after, limit).await
            }

            async fn list_findings_page(
                &self,
                actor: Actor,
                download_id: i64,
                offset: i64,
                limit: i64,
            ) -> Result<Vec<FindingRecord>> {
                self.list_findings_page_impl(actor, download_id, offset, limit).await
            }

            async fn sites_due_for_check_run(
                &self,
                now: Timestamp,
                complete_before: Timestamp,
                failed_before: Timestamp,
                limit: i64,
            ) -> Result<Vec<i64>> {
                self.check_runs_due(now, complete_before, failed_before, limit).await
            }

            async fn claim_check_run(
                &self,
                site_id: i64,
                owner: &str,
                trigger: &CheckTrigger,
                now: Timestamp,
                lease_until: Timestamp,
            ) -> Result<std::result::Result<CheckRun, CheckRefusal>> {
                self.check_runs_claim(site_id, owner, trigger, now, lease_until).await
            }

            async fn urls_to_check(&self, site_id: i64, after_url_id: i64, limit: i64) -> Result<Vec<(i64, String)>> {
                self.check_runs_urls(site_id, after_url_id, limit).await
            }

            async fn record_check_page(
                &self,
                site_id: i64,
                owner: &str,
                checks: &[UrlCheckRecord],
                after_url_id: i64,
                now: Timestamp,
                lease_until: Timestamp,
            ) -> Result<bool> {
                self.check_runs_record(site_id, owner, checks, after_url_id, now, lease_until).await
            }

            async fn finish_check_run(
                &self,
                site_id: i64,
                owner: &str,
                error: Option<&str>,
                now: Timestamp,
            ) -> Result<Option<CheckRun>> {
                self.check_runs_finish(site_id, owner, error, now).await
            }

            async fn release_check_runs(&self, owner: &str, now: Timestamp) -> Result<u64> {
                self.check_runs_release(owner, now).await
            }

            async fn check_run(&self, actor: Actor, site_id: i64) -> Result<Option<CheckRun>> {
                self.site(actor, site_id).await?;
                self.check_runs_get(site_id).await
            }

            async fn record_url_checks(&self, site_id: i64, checks: &[UrlCheckRecord], now: Timestamp) -> Result<()> {
                self.record_url_checks_impl(site_id, checks, now).await
            }

            async fn page_sitemaps(
                &self,
                actor: Actor,
                site_id: i64,
                parent_id: Option<i64>,
                source: Option<Source>,
                after: i64,
                limit: i64,
            ) -> Result<Page<Sitemap>> {
                self.page_sitemaps_impl(actor, site_id, parent_id, source, after, limit).await
            }

            async fn list_url_failures(
                &self,
                actor: Actor,
                site_id: i64,
                kind: Option<&str>,
                after: i64,
                limit: i64,
            ) -> Result<Page<UrlFailure>> {
                self.list_url_failures_impl(actor, site_id, kind, after, limit).await
            }

            // --- retention ---

            async fn apply_retention(&self, policy: Retention, now: Timestamp) -> Result<RetentionReport> {
                self.apply_retention_impl(policy, now).await
            }

            async fn url_failure_kinds(&self, actor: Actor, site_id: i64) -> Result<Vec<FailureKindCount>> {
                self.url_failure_kinds_impl(actor, site_id).await
            }

            async fn record_site_snapshot(&self, site_id: i64, now: Timestamp) -> Result<SiteSnapshot> {
                self.record_site_snapshot_impl(site_id, now).await
            }

            async fn list_site_snapshots(&self, actor: Actor, site_id: i64, limit: i64) -> Result<Vec<SiteSnapshot>> {
                self.list_site_snapshots_impl(actor, site_id, limit).await
            }

            async fn list_sitemaps_by(
                &self,
                actor: Actor,
                site_id: Option<i64>,
                listing: &$crate::SitemapListing,
                offset: i64,
                limit: i64,
            ) -> Result<(Vec<SitemapSummary>, bool)> {
                self.list_sitemaps_by_impl(actor, site_id, listing, offset, limit).await
            }

            async fn site_role(&self, actor: Actor, site_id: i64) -> Result<$crate::Role> {
                self.site_role_impl(actor, site_id).await
            }

            async fn site_roles(&self, actor: Actor) -> Result<$crate::SiteRoles> {
                self.site_roles_impl(actor).await
            }

            async fn site_as_owner(&self, actor: Actor, site_id: i64) -> Result<Site> {
                self.site_as_owner_impl(actor, site_id).await
            }

            async fn list_members(&self, actor: Actor, site_id: i64) -> Result<Vec<$crate::Member>> {
                self.list_members_impl(actor, site_id).await
            }

            async fn list_invitations(
                &self,
                actor: Actor,
                site_id: i64,
                now: Timestamp,
            ) -> Result<Vec<$crate::Invitation>> {
                self.list_invitations_impl(actor, site_id, now).await
            }

            async fn create_invitation(
                &self,
                actor: Actor,
                site_id: i64,
                email: &str,
                role: $crate::Role,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<($crate::Invitation, String)> {
                self.create_invitation_impl(actor, site_id, email, role, now, ttl_seconds).await
            }

            async fn revoke_invitation(&self, actor: Actor, invitation_id: i64) -> Result<()> {
                self.revoke_invitation_impl(actor, invitation_id).await
            }

            async fn invitation_by_token(&self, token: &str, now: Timestamp) -> Result<Option<$crate::InvitationInfo>> {
                self.invitation_by_token_impl(token, now).await
            }

            async fn accept_invitation(&self, actor: Actor, token: &str, now: Timestamp) -> Result<Site> {
                self.accept_invitation_impl(actor, token, now).await
            }

            async fn remove_member(&self, actor: Actor, member_id: i64) -> Result<()> {
                self.remove_member_impl(actor, member_id).await
            }

            async fn site_of_member(&self, member_id: i64) -> Result<Option<i64>> {
                self.site_of_member_impl(member_id).await
            }

            // --- alerts: `crate::alerts` ---

            async fn alert_setting(&self, actor: Actor, site_id: i64) -> Result<$crate::AlertSetting> {
                self.alert_setting_impl(actor, site_id).await
            }

            async fn set_alerts(&self, actor: Actor, site_id: i64, enabled: bool) -> Result<$crate::AlertSetting> {
                self.set_alerts_impl(actor, site_id, enabled).await
            }

            async fn alert_link(&self, token: &str, enabled: Option<bool>) -> Result<Option<$crate::AlertLink>> {
                self.alert_link_impl(token, enabled).await
            }

            async fn alert_worsenings(&self, sitemap_id: i64) -> Result<Vec<$crate::Worsening>> {
                self.alert_worsenings_impl(sitemap_id).await
            }

            async fn claim_alert_recipients(
                &self,
                site_id: i64,
                now: Timestamp,
                window_seconds: i64,
            ) -> Result<Vec<$crate::AlertRecipient>> {
                self.claim_alert_recipients_impl(site_id, now, window_seconds).await
            }

            async fn create_domain(
                &self,
                actor: Actor,
                domain: &str,
                now: Timestamp,
            ) -> Result<$crate::DomainProperty> {
                self.create_domain_impl(actor, domain, now).await
            }

            async fn domain(&self, actor: Actor, domain_id: i64) -> Result<$crate::DomainProperty> {
                self.domain_impl(actor, domain_id).await
            }

            async fn list_domains(&self, actor: Actor) -> Result<Vec<$crate::DomainProperty>> {
                self.list_domains_impl(actor).await
            }

            async fn delete_domain(&self, actor: Actor, domain_id: i64) -> Result<()> {
                self.delete_domain_impl(actor, domain_id).await
            }

            async fn record_domain_verification(&self, domain_id: i64, ok: bool, now: Timestamp) -> Result<()> {
                self.record_domain_verification_impl(domain_id, ok, now).await
            }

            async fn domains_to_verify(
                &self,
                before: Timestamp,
                now: Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::DomainProperty>> {
                self.domains_to_verify_impl(before, now, limit).await
            }

            async fn verified_domains_of_site_owners(&self, site_id: i64) -> Result<Vec<$crate::DomainProperty>> {
                self.verified_domains_of_site_owners_impl(site_id).await
            }

            async fn sites_owned_by(&self, user_id: i64) -> Result<Vec<Site>> {
                self.sites_owned_by_impl(user_id).await
            }

            // --- webhooks ---

            async fn create_webhook(
                &self,
                actor: Actor,
                site_id: i64,
                url: &str,
                secret_value: &str,
                events: &[&str],
                now: Timestamp,
            ) -> Result<$crate::Webhook> {
                self.create_webhook_impl(actor, site_id, url, secret_value, events, now).await
            }

            async fn list_webhooks(&self, actor: Actor, site_id: i64) -> Result<Vec<$crate::Webhook>> {
                self.list_webhooks_impl(actor, site_id).await
            }

            async fn webhook(&self, actor: Actor, webhook_id: i64) -> Result<$crate::Webhook> {
                self.webhook_impl(actor, webhook_id).await
            }

            async fn delete_webhook(&self, actor: Actor, webhook_id: i64) -> Result<()> {
                self.delete_webhook_impl(actor, webhook_id).await
            }

            async fn webhook_attempts(
                &self,
                actor: Actor,
                webhook_id: i64,
                limit: i64,
            ) -> Result<Vec<$crate::WebhookAttempt>> {
                self.webhook_attempts_impl(actor, webhook_id, limit).await
            }

            async fn enqueue_webhook_event(
                &self,
                site_id: i64,
                event: &str,
                payload: &str,
                only_webhook: Option<i64>,
                now: Timestamp,
            ) -> Result<$crate::Enqueued> {
                self.enqueue_webhook_event_impl(site_id, event, payload, only_webhook, now).await
            }

            async fn lease_webhook_deliveries(
                &self,
                worker: &str,
                now: Timestamp,
                lease_seconds: i64,
                limit: i64,
            ) -> Result<Vec<$crate::LeasedDelivery>> {
                self.lease_webhook_deliveries_impl(worker, now, lease_seconds, limit).await
            }

            async fn finish_webhook_attempt(
                &self,
                worker: &str,
                delivery: &$crate::LeasedDelivery,
                record: &$crate::AttemptRecord,
            ) -> Result<bool> {
                self.finish_webhook_attempt_impl(worker, delivery, record).await
            }

            async fn postpone_webhook_delivery(
                &self,
                worker: &str,
                delivery_id: i64,
                until: Timestamp,
            ) -> Result<bool> {
                self.postpone_webhook_delivery_impl(worker, delivery_id, until).await
            }

            async fn webhook_target(&self, webhook_id: i64) -> Result<Option<(String, String)>> {
                self.webhook_target_impl(webhook_id).await
            }

            async fn record_webhook_handshake(&self, webhook_id: i64, ok: bool, now: Timestamp) -> Result<()> {
                self.record_webhook_handshake_impl(webhook_id, ok, now).await
            }

            async fn claim_disabled_webhooks(
                &self,
                now: Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::DisabledWebhook>> {
                self.claim_disabled_webhooks_impl(now, limit).await
            }
        }
    };
}

/// Marks removed, at `$now`, the live URLs of a site that no sitemap lists; evaluates to the
/// count. A macro so it runs on either backend's transaction.
macro_rules! mark_orphans_removed {
    ($tx:expr, $site_id:expr, $now:expr) => {
        sqlx::query(
            "UPDATE urls SET removed_at = $1 WHERE site_id = $2 AND removed_at IS NULL \
             AND NOT EXISTS (SELECT 1 FROM sitemap_urls su WHERE su.url_id = urls.id)",
        )
        .bind($now)
        .bind($site_id)
        .execute($tx)
        .await?
        .rows_affected()
    };
}

/// The key of a URL within its site: the first 16 bytes of the SHA-256 of its text. A btree on
/// the text itself refuses keys over 2,704 bytes on PostgreSQL; 128 bits make a collision
/// among even billions of URLs vanishingly unlikely.
pub(crate) fn loc_hash(loc: &str) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(loc.as_bytes())[..16].to_vec()
}

/// Text as stored: NUL, which PostgreSQL refuses in text, becomes U+FFFD (on both backends,
/// so that both store the same thing).
pub(crate) fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// URLs per multi-row upsert: 8 parameters each stays far below both backends' limits
/// (32,766 on SQLite, 65,535 on PostgreSQL).
pub(crate) const URL_CHUNK: usize = 500;

/// Paces a long write made of many short transactions (a big sitemap's URLs, a huge index's
/// children, retention's deletions) on SQLite, whose one write lock other writers wait for by
/// polling (its busy handler retries every 100 ms at most): a writer that begins its next
/// transaction the instant it committed the last would win every time and starve them until
/// their busy timeout fails. After [`WRITE_SLICE`] of back-to-back transactions it pauses for
/// [`WRITE_GAP`], longer than that poll, so a waiting writer gets in within a slice and a gap.
/// PostgreSQL locks rows, not the database: its pacer never pauses.
pub(crate) struct Pacer {
    enabled: bool,
    since: std::time::Instant,
}

/// How long a long SQLite write holds the lock, transaction after transaction, before a pause.
pub(crate) const WRITE_SLICE: std::time::Duration = std::time::Duration::from_millis(250);

/// The pause: longer than SQLite's longest busy-handler sleep (100 ms).
pub(crate) const WRITE_GAP: std::time::Duration = std::time::Duration::from_millis(120);

impl Pacer {
    pub(crate) fn new(enabled: bool) -> Self {
        Pacer { enabled, since: std::time::Instant::now() }
    }

    /// Before each transaction of the long write.
    pub(crate) async fn between(&mut self) {
        if self.enabled && self.since.elapsed() >= WRITE_SLICE {
            tokio::time::sleep(WRITE_GAP).await;
            self.since = std::time::Instant::now();
        }
    }
}

/// Pushes `(id, id, ...)` as bound parameters: the IN list of a statement built with
/// `QueryBuilder` (the same on both backends, which share no array type).
pub(crate) fn push_id_list<DB>(query: &mut sqlx::QueryBuilder<DB>, ids: &[i64])
where
    DB: sqlx::Database,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    query.push("(");
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    query.push(")");
}

/// Index children synchronised per transaction (two statements each): a few milliseconds of
/// SQLite's write lock, so a 50,000-child index never makes other writers wait for long.
pub(crate) const CHILD_CHUNK: usize = 500;

/// Escapes `%`, `_` and the backslash for a `LIKE ... ESCAPE` pattern whose escape is the backslash.
pub(crate) fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Turns "no row changed" into `NotFound`.
pub(crate) fn found(rows: u64, what: &'static str, id: i64) -> crate::Result<()> {
    if rows == 0 { Err(crate::Error::NotFound { what, id }) } else { Ok(()) }
}
