//! The queries of sitemaps and their downloads: submitting, listing and removing sitemaps, pings,
//! an index's children, a download's record and findings, the console's summaries; written once
//! for both backends like those of `sql.rs`, whose `impl_store!` expands [`sitemap_methods!`] into
//! inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls (see `signups.rs`).

/// The `Store` methods of sitemaps and downloads (see the module documentation).
macro_rules! sitemap_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn add_sitemap_impl(&self, actor: Actor, site_id: i64, url: &str, source: Source, now: Timestamp) -> Result<Sitemap> {
                self.site_as_owner_impl(actor, site_id).await?;
                let mut tx = self.begin_write().await?;
                sitemap_room!(tx, site_id, url)?;
                // A removed one comes back submitted now (and pending: removal forgot its verdict),
                // and as the user's own: submitted, no index's child any more (an index that lost
                // it would remove it again at its next read). A live one keeps how it came.
                // New or back, its `submitted_at` is now and the tree's URLs are counted; a live one
                // added again changed no URL set, and its tree is not recounted (see
                // `resubmit_sitemap_impl`).
                let (id, counts): (i64, bool) = sqlx::query_as(concat!(
                    "INSERT INTO sitemaps (site_id, url, source, submitted_at, next_fetch_at, last_submitted_at, \
                     owner_id, site_verified) VALUES ($1, $2, $3, $4, $4, $4, ", site_state!("$1"), ") \
                     ON CONFLICT (site_id, url) DO UPDATE SET \
                     source = CASE WHEN sitemaps.removed_at IS NULL THEN sitemaps.source ELSE excluded.source END, \
                     parent_id = CASE WHEN sitemaps.removed_at IS NULL THEN sitemaps.parent_id ELSE NULL END, \
                     removed_at = NULL, removed_by_user = excluded.removed_by_user, \
                     last_submitted_at = excluded.last_submitted_at, \
                     submitted_at = CASE WHEN sitemaps.removed_at IS NULL THEN sitemaps.submitted_at \
                     ELSE excluded.submitted_at END, \
                     next_fetch_at = CASE WHEN sitemaps.next_fetch_at < excluded.next_fetch_at \
                     THEN sitemaps.next_fetch_at ELSE excluded.next_fetch_at END RETURNING id, submitted_at = $4",
                ))
                .bind(site_id)
                .bind(url)
                .bind(source.as_str())
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                refresh_rollups!(tx, id, recount = counts);
                tx.commit().await?;
                self.sitemap(actor, id).await
            }

            pub(crate) async fn sitemap_by_url_impl(&self, actor: Actor, site_id: i64, url: &str) -> Result<Option<Sitemap>> {
                self.site(actor, site_id).await?;
                Ok(sqlx::query_as(concat!("SELECT ", sitemap_cols!(), " FROM sitemaps sm WHERE sm.site_id = $1 AND sm.url = $2"))
                    .bind(site_id)
                    .bind(url)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            pub(crate) async fn add_sitemap_for_site_impl(
                &self,
                site_id: i64,
                url: &str,
                source: Source,
                parent_id: Option<i64>,
                now: Timestamp,
            ) -> Result<Sitemap> {
                let mut tx = self.begin_write().await?;
                sitemap_room!(tx, site_id, url)?;
                // A sitemap the user removed stays removed even if robots.txt still names it.
                let id: i64 = sqlx::query_scalar(concat!(
                    "INSERT INTO sitemaps (site_id, url, source, parent_id, submitted_at, next_fetch_at, owner_id, site_verified) \
                     VALUES ($1, $2, $3, $4, $5, $5, ", site_state!("$1"), ") \
                     ON CONFLICT (site_id, url) DO UPDATE SET parent_id = COALESCE(excluded.parent_id, sitemaps.parent_id) \
                     RETURNING id",
                ))
                .bind(site_id)
                .bind(url)
                .bind(source.as_str())
                .bind(parent_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| match &e {
                    sqlx::Error::Database(db) if db.is_foreign_key_violation() => Error::NotFound { what: "site", id: site_id },
                    _ => Error::Database(e),
                })?;
                tx.commit().await?;
                Ok(sqlx::query_as(concat!("SELECT ", sitemap_cols!(), " FROM sitemaps sm WHERE sm.id = $1"))
                    .bind(id)
                    .fetch_one(&self.pool)
                    .await?)
            }

            pub(crate) async fn sitemap_impl(&self, actor: Actor, sitemap_id: i64) -> Result<Sitemap> {
                sqlx::query_as(concat!(
                    "SELECT ", sitemap_cols!(), " FROM sitemaps sm JOIN sites s ON s.id = sm.site_id \
                     WHERE sm.id = $1 AND ", owned!("$2", "$3")
                ))
                .bind(sitemap_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?
                .ok_or(Error::NotFound { what: "sitemap", id: sitemap_id })
            }

            pub(crate) async fn list_sitemaps_impl(&self, actor: Actor, site_id: i64) -> Result<Vec<Sitemap>> {
                self.site(actor, site_id).await?;
                Ok(sqlx::query_as(concat!("SELECT ", sitemap_cols!(), " FROM sitemaps sm WHERE sm.site_id = $1 ORDER BY sm.id"))
                    .bind(site_id)
                    .fetch_all(&self.pool)
                    .await?)
            }

            pub(crate) async fn resubmit_sitemap_impl(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()> {
                let sitemap = self.sitemap(actor, sitemap_id).await?;
                self.site_as_owner_impl(actor, sitemap.site_id).await?;
                let mut tx = self.begin_write().await?;
                // Submitted now (`last_submitted_at`); `submitted_at` moves only when a removed
                // one comes back, as when it is added again. A child its index dropped comes back
                // as the owner's own (submitted, no parent), or that index's next read would
                // remove it again; one the owner removed comes back into its index's tree.
                // Its URL counts move only when it comes back (a removed sitemap's count nothing):
                // `submitted_at` is then now, which the same statement returns. Any other
                // resubmit leaves every URL set as it was, and the recount over the whole tree
                // (a distinct count of an index's every URL, 500,000 rows a tenth of a second
                // on SQLite, holding its one write lock) is not made.
                let row: Option<(bool, bool)> = sqlx::query_as(concat!(
                    "UPDATE sitemaps SET next_fetch_at = $1, last_submitted_at = $1, \
                     source = CASE WHEN removed_at IS NOT NULL AND NOT removed_by_user AND source = 'index' \
                     THEN 'api' ELSE source END, \
                     parent_id = CASE WHEN removed_at IS NOT NULL AND NOT removed_by_user AND source = 'index' \
                     THEN NULL ELSE parent_id END, \
                     submitted_at = CASE WHEN removed_at IS NULL THEN submitted_at ELSE $1 END, removed_at = NULL, \
                     removed_by_user = $5 WHERE id = $2 AND site_id IN (SELECT s.id FROM sites s WHERE ", owner_of!("$3", "$4"), ") \
                     RETURNING is_index, submitted_at = $1",
                ))
                .bind(now)
                .bind(sitemap_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .bind(false)
                .fetch_optional(&mut *tx)
                .await?;
                let Some((is_index, back)) = row else {
                    return Err(Error::NotFound { what: "sitemap", id: sitemap_id });
                };
                // An index is resubmitted with its whole tree: every live child at any depth is
                // due now too and submitted now (its `last_submitted_at`, the console's
                // "Submitted", says so, as the flash does). Each keeps its validators, so an
                // unchanged child costs a 304.
                if is_index {
                    sqlx::query(
                    "WITH RECURSIVE d(id) AS (SELECT id FROM sitemaps WHERE parent_id = $1 AND id <> $1 \
                     AND source = 'index' AND removed_at IS NULL UNION SELECT c.id FROM sitemaps c JOIN d ON c.parent_id = d.id \
                     WHERE c.source = 'index' AND c.removed_at IS NULL) \
                     UPDATE sitemaps SET next_fetch_at = CASE WHEN next_fetch_at > $2 THEN $2 ELSE next_fetch_at END, \
                     last_submitted_at = $2 WHERE id IN (SELECT id FROM d)",
                )
                .bind(sitemap_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                }
                refresh_rollups!(tx, sitemap_id, recount = back);
                tx.commit().await?;
                Ok(())
            }

            pub(crate) async fn remove_sitemap_impl(&self, actor: Actor, sitemap_id: i64, now: Timestamp) -> Result<()> {
                let sitemap = self.sitemap(actor, sitemap_id).await?;
                self.site_as_owner_impl(actor, sitemap.site_id).await?;
                let mut tx = self.begin_bulk().await?;
                // The user's removal: an index that still lists it does not bring it back.
                sqlx::query("UPDATE sitemaps SET removed_by_user = $1 WHERE id = $2")
                    .bind(true)
                    .bind(sitemap_id)
                    .execute(&mut *tx)
                    .await?;
                forget_removed!(tx, [sitemap_id], now);
                mark_orphans_removed!(&mut *tx, sitemap.site_id, now);
                refresh_rollups!(tx, sitemap_id);
                tx.commit().await?;
                Ok(())
            }

            pub(crate) async fn record_ping_impl(&self, sitemap_url: &str, client_addr: &str, now: Timestamp) -> Result<PingOutcome> {
                let mut tx = self.begin_write().await?;
                let done = sqlx::query(
                    "UPDATE sitemaps SET next_fetch_at = CASE WHEN next_fetch_at > $1 THEN $1 ELSE next_fetch_at END, \
                     last_submitted_at = $1 WHERE url = $2 AND removed_at IS NULL \
                     AND site_id IN (SELECT id FROM sites WHERE verified_at IS NOT NULL)",
                )
                .bind(now)
                .bind(sitemap_url)
                .execute(&mut *tx)
                .await?;
                let scheduled = done.rows_affected();
                // A ping that names no sitemap of a verified site stores nothing: strangers'
                // pings for made-up URLs must not fill the database.
                if scheduled > 0 {
                    sqlx::query("INSERT INTO pings (sitemap_url, client_addr, received_at, matched) VALUES ($1, $2, $3, $4)")
                        .bind(sitemap_url)
                        .bind(client_addr)
                        .bind(now)
                        .bind(scheduled as i64)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(PingOutcome { scheduled })
            }

            pub(crate) async fn pings_from_client_since_impl(&self, client_addr: &str, since: Timestamp) -> Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM pings WHERE client_addr = $1 AND received_at >= $2")
                    .bind(client_addr)
                    .bind(since)
                    .fetch_one(&self.pool)
                    .await?)
            }

            pub(crate) async fn pings_for_sitemap_since_impl(&self, sitemap_url: &str, since: Timestamp) -> Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM pings WHERE sitemap_url = $1 AND received_at >= $2")
                    .bind(sitemap_url)
                    .bind(since)
                    .fetch_one(&self.pool)
                    .await?)
            }

            pub(crate) async fn sitemap_by_id_impl(&self, sitemap_id: i64) -> Result<Sitemap> {
                sqlx::query_as(concat!("SELECT ", sitemap_cols!(), " FROM sitemaps sm WHERE sm.id = $1"))
                    .bind(sitemap_id)
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or(Error::NotFound { what: "sitemap", id: sitemap_id })
            }

            pub(crate) async fn sync_index_children_impl(
                &self,
                site_id: i64,
                parent_id: i64,
                children: &[IndexChild],
                now: Timestamp,
            ) -> Result<ChildSync> {
                let mut sync = ChildSync::default();
                let mut listed = std::collections::HashSet::with_capacity(children.len());
                // Room left under the site's sitemap cap, counted once: nested indexes must
                // not make the site's sitemaps (and their fetches) grow without end.
                let held: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM sitemaps WHERE site_id = $1").bind(site_id).fetch_one(&self.pool).await?;
                let mut room = $crate::MAX_SITEMAPS_PER_SITE.saturating_sub(held).max(0);
                // An index may list 50,000 children: they are added in transactions of
                // CHILD_CHUNK, so that on SQLite another user's write waits for one chunk, not
                // for the whole index. Each chunk is whole on its own; the removal of what the
                // index no longer lists comes last, once every listed child is there.
                let mut pacer = self.pacer();
                for chunk in children.chunks(CHILD_CHUNK) {
                    pacer.between().await;
                    let mut tx = self.begin_bulk().await?;
                    // The site's owner and state for the new children (see `site_state!`), read
                    // once a chunk rather than by a subquery in each child's INSERT. No site:
                    // NULL, and the foreign key refuses the first new child.
                    let (owner, verified): (Option<i64>, bool) =
                        sqlx::query_as("SELECT owner_id, verified_at IS NOT NULL FROM sites WHERE id = $1")
                            .bind(site_id)
                            .fetch_optional(&mut *tx)
                            .await?
                            .unwrap_or((None, false));
                    for child in chunk {
                        if !listed.insert(child.url.as_str()) {
                            continue;
                        }
                        type Known = (i64, Option<i64>, String, Option<String>, Option<i64>, bool);
                        let known: Option<Known> = sqlx::query_as(
                            "SELECT id, parent_id, source, index_lastmod, removed_at, removed_by_user FROM sitemaps \
                             WHERE site_id = $1 AND url = $2",
                        )
                        .bind(site_id)
                        .bind(&child.url)
                        .fetch_optional(&mut *tx)
                        .await?;
                        match known {
                            None if room == 0 => sync.refused += 1,
                            None => {
                                room -= 1;
                                sqlx::query(
                                    "INSERT INTO sitemaps (site_id, url, source, parent_id, submitted_at, next_fetch_at, index_lastmod, \
                                     owner_id, site_verified) VALUES ($1, $2, 'index', $3, $4, $4, $5, $6, $7)",
                                )
                                .bind(site_id)
                                .bind(&child.url)
                                .bind(parent_id)
                                .bind(now)
                                .bind(&child.lastmod)
                                .bind(owner)
                                .bind(verified)
                                .execute(&mut *tx)
                                .await?;
                                sync.added += 1;
                            }
                            // A child the user removed stays removed while the index lists it.
                            Some((_, _, _, _, _, true)) => {}
                            Some((id, parent, source, lastmod, removed, false)) => {
                                let ours = id != parent_id && source == "index" && parent.is_none_or(|p| p == parent_id);
                                if ours && (removed.is_some() || lastmod != child.lastmod) {
                                    sqlx::query(
                                        "UPDATE sitemaps SET index_lastmod = $1, parent_id = $2, removed_at = NULL, \
                                         next_fetch_at = CASE WHEN next_fetch_at > $3 THEN $3 ELSE next_fetch_at END WHERE id = $4",
                                    )
                                    .bind(&child.lastmod)
                                    .bind(parent_id)
                                    .bind(now)
                                    .bind(id)
                                    .execute(&mut *tx)
                                    .await?;
                                    sync.brought_forward += 1;
                                }
                            }
                        }
                    }
                    tx.commit().await?;
                }
                let mut tx = self.begin_bulk().await?;
                let live: Vec<(i64, String)> = sqlx::query_as(
                    "SELECT id, url FROM sitemaps WHERE parent_id = $1 AND source = 'index' AND removed_at IS NULL",
                )
                .bind(parent_id)
                .fetch_all(&mut *tx)
                .await?;
                let left: Vec<i64> =
                    live.into_iter().filter(|(_, url)| !listed.contains(url.as_str())).map(|(id, _)| id).collect();
                sync.removed = left.len() as u64;
                forget_removed!(tx, left, now);
                if sync.removed > 0 {
                    mark_orphans_removed!(&mut *tx, site_id, now);
                    // The children that left took their links: the index's URLs are recounted.
                    refresh_rollups!(tx, parent_id);
                } else if sync.added > 0 {
                    // A new child is not read yet: the tree's roll-up says so at once (it is
                    // what the words and the filters read), whenever the index's read is stored.
                    refresh_rollups!(tx, parent_id, keep_urls);
                }
                tx.commit().await?;
                Ok(sync)
            }

            pub(crate) async fn list_sitemap_summaries_impl(&self, actor: Actor, after: i64, limit: i64) -> Result<Page<SitemapSummary>> {
                let limit = limit.clamp(1, 1000);
                let query = if actor.is_admin {
                    sqlx::query_as(concat!(summary_select!(), "WHERE sm.parent_id IS NULL AND sm.id > $1 ORDER BY sm.id LIMIT $2"))
                        .bind(after)
                        .bind(limit + 1)
                } else {
                    sqlx::query_as(concat!(
                        summary_select!(),
                        "WHERE sm.parent_id IS NULL AND sm.id > $1 AND ", member_of!("sm.site_id", "$2"),
                        " ORDER BY sm.id LIMIT $3"
                    ))
                    .bind(after)
                    .bind(actor.user_id)
                    .bind(limit + 1)
                };
                let items: Vec<SitemapSummary> = query.fetch_all(&self.pool).await?;
                Ok(Page::from_one_extra(items, limit, |i| i.sitemap.id))
            }

            pub(crate) async fn list_child_summaries_impl(
                &self,
                actor: Actor,
                parent_ids: &[i64],
                per_parent: i64,
            ) -> Result<Vec<SitemapSummary>> {
                if parent_ids.is_empty() {
                    return Ok(Vec::new());
                }
                let mut query = sqlx::QueryBuilder::new(concat!(
                    "SELECT * FROM (SELECT ", sitemap_cols!(), ", s.origin, \
                     ROW_NUMBER() OVER (PARTITION BY sm.parent_id ORDER BY sm.id) AS child_number \
                     FROM sitemaps sm JOIN sites s ON s.id = sm.site_id WHERE ("
                ));
                query
                    .push_bind(actor.is_admin)
                    .push(" OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ")
                    .push_bind(actor.user_id)
                    .push(")) AND sm.parent_id IN ");
                $crate::sql::push_id_list(&mut query, parent_ids);
                query.push(") x WHERE x.child_number <= ").push_bind(per_parent.clamp(1, 10_000)).push(" ORDER BY x.parent_id, x.id");
                Ok(query.build_query_as().fetch_all(&self.pool).await?)
            }

            pub(crate) async fn tree_tallies_impl(&self, actor: Actor, index_ids: &[i64]) -> Result<Vec<TreeTally>> {
                if index_ids.is_empty() {
                    return Ok(Vec::new());
                }
                // The live descendants of each index, at any depth, as `refresh_rollups!` sums
                // them (UNION ends a cycle, though `parent_id` makes none).
                let mut query = sqlx::QueryBuilder::new(
                    "WITH RECURSIVE t(root, id) AS (SELECT parent_id, id FROM sitemaps WHERE removed_at IS NULL \
                     AND id <> parent_id AND parent_id IN ",
                );
                $crate::sql::push_id_list(&mut query, index_ids);
                query.push(
                    " UNION SELECT t.root, c.id FROM sitemaps c JOIN t ON c.parent_id = t.id WHERE c.removed_at IS NULL) \
                     SELECT t.root AS index_id, CAST(COUNT(*) AS BIGINT) AS sitemaps, \
                     CAST(SUM(CASE WHEN sm.status = 'failed' THEN 1 ELSE 0 END) AS BIGINT) AS failed, \
                     CAST(SUM(CASE WHEN sm.status IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS pending, \
                     CAST(SUM(CASE WHEN sm.errors > 0 THEN 1 ELSE 0 END) AS BIGINT) AS with_errors, \
                     CAST(SUM(CASE WHEN sm.warnings > 0 THEN 1 ELSE 0 END) AS BIGINT) AS with_warnings, \
                     CAST(COALESCE(SUM(sm.web_count), 0) AS BIGINT) AS web, CAST(COALESCE(SUM(sm.image_count), 0) AS BIGINT) AS image, \
                     CAST(COALESCE(SUM(sm.video_count), 0) AS BIGINT) AS video, CAST(COALESCE(SUM(sm.news_count), 0) AS BIGINT) AS news \
                     FROM t JOIN sitemaps sm ON sm.id = t.id JOIN sites s ON s.id = sm.site_id WHERE (",
                );
                // Any member of the site reads its tree (readers too), as every other read.
                query
                    .push_bind(actor.is_admin)
                    .push(" OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ")
                    .push_bind(actor.user_id)
                    .push(")) GROUP BY t.root ORDER BY t.root");
                Ok(query.build_query_as().fetch_all(&self.pool).await?)
            }

            pub(crate) async fn tree_reads_impl(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>> {
                let sitemap = self.sitemap(actor, sitemap_id).await?;
                Ok(sqlx::query_as(
                    "WITH RECURSIVE tree(id) AS (SELECT CAST($1 AS BIGINT) UNION SELECT c.id FROM sitemaps c \
                     JOIN tree t ON c.parent_id = t.id WHERE c.removed_at IS NULL AND c.site_id = $2) \
                     SELECT d.id, d.sitemap_id, d.downloaded_at, d.status, d.http_status, d.bytes, d.duration_ms, \
                     d.url_count, d.error_count, d.warning_count, d.error FROM downloads d \
                     WHERE d.sitemap_id IN (SELECT id FROM tree) AND d.status <> 'unchanged' \
                     ORDER BY d.downloaded_at DESC, d.id DESC LIMIT $3",
                )
                .bind(sitemap_id)
                .bind(sitemap.site_id)
                .bind(limit.clamp(1, 100_000))
                .fetch_all(&self.pool)
                .await?)
            }

            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
            pub(crate) async fn page_sitemaps_impl(
                &self,
                actor: Actor,
                site_id: i64,
                parent_id: Option<i64>,
                source: Option<Source>,
                after: i64,
                limit: i64,
            ) -> Result<Page<Sitemap>> {
                self.site(actor, site_id).await?;
                let limit = limit.clamp(1, 1000);
                let items: Vec<Sitemap> = sqlx::query_as(concat!(
                    "SELECT ", sitemap_cols!(), " FROM sitemaps sm WHERE sm.site_id = $1 \
                     AND (sm.removed_at IS NULL OR (NOT $2 AND sm.removed_by_user)) AND ($2 OR sm.parent_id = $3) AND ($4 OR sm.source = $5) AND sm.id > $6 ORDER BY sm.id LIMIT $7"
                ))
                .bind(site_id)
                .bind(parent_id.is_none())
                .bind(parent_id.unwrap_or(0))
                .bind(source.is_none())
                .bind(source.map_or("", Source::as_str))
                .bind(after)
                .bind(limit + 1)
                .fetch_all(&self.pool)
                .await?;
                Ok(Page::from_one_extra(items, limit, |s| s.id))
            }

            pub(crate) async fn complete_impl(&self, worker: &str, sitemap_id: i64, d: &DownloadRecord, next_fetch_at: Timestamp) -> Result<i64> {
                let (mut errors, mut warnings) = $crate::sitemaps::finding_counts(d);
                let mut url_count = d.url_count;
                let mut tx = self.begin_write().await?;
                // A 304 stands for the content of the last read: it carries that read's verdict,
                // counts and findings, and the sitemap keeps them (its status stays a verdict).
                // Without such a read (none stored), it carries nothing and changes nothing.
                let mut verdict = Some($crate::sitemaps::verdict(&d.status, errors, warnings));
                let mut stands_for = None;
                if d.status == "unchanged" {
                    verdict = None;
                    let read: Option<(i64, String, i64, i64, i64)> = sqlx::query_as(
                        "SELECT id, status, error_count, warning_count, url_count FROM downloads \
                         WHERE sitemap_id = $1 AND status IN ('ok', 'warnings', 'errors') \
                         ORDER BY downloaded_at DESC, id DESC LIMIT 1",
                    )
                    .bind(sitemap_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if let Some((id, status, e, w, n)) = read {
                        (verdict, stands_for, errors, warnings, url_count) = (Some(status), Some(id), e, w, n);
                    }
                }
                let keep_counts = d.status == "unchanged" && stands_for.is_none();
                let done = sqlx::query(
                    "UPDATE sitemaps SET lease_owner = NULL, lease_expires_at = NULL, next_fetch_at = $1, \
                     last_downloaded_at = $2, status = COALESCE($3, status), http_status = $4, etag = $5, last_modified = $6, \
                     content_hash = $7, errors = CASE WHEN $10 THEN errors ELSE $11 END, \
                     warnings = CASE WHEN $10 THEN warnings ELSE $12 END, \
                     urls_read_at = CASE WHEN $13 THEN $2 ELSE urls_read_at END, held_at = NULL, held_reason = NULL \
                     WHERE id = $8 AND lease_owner = $9",
                )
                .bind(next_fetch_at)
                .bind(d.downloaded_at)
                .bind(&verdict)
                .bind(d.http_status)
                .bind(&d.etag)
                .bind(&d.last_modified)
                .bind(&d.content_hash)
                .bind(sitemap_id)
                .bind(worker)
                .bind(keep_counts)
                .bind(errors)
                .bind(warnings)
                .bind(d.urls_seen)
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                }
                let download_id: i64 = sqlx::query_scalar(
                    "INSERT INTO downloads (sitemap_id, downloaded_at, status, http_status, bytes, duration_ms, url_count, \
                     error_count, warning_count, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                )
                .bind(sitemap_id)
                .bind(d.downloaded_at)
                .bind($crate::sitemaps::verdict(&d.status, errors, warnings))
                .bind(d.http_status)
                .bind(d.bytes)
                .bind(d.duration_ms)
                .bind(url_count)
                .bind(errors)
                .bind(warnings)
                .bind(d.error.as_deref().map(clean))
                .fetch_one(&mut *tx)
                .await?;
                for f in &d.findings {
                    sqlx::query(
                        "INSERT INTO findings (download_id, rule, severity, line, col, loc, message) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(download_id)
                    .bind(clean(&f.rule))
                    .bind(clean(&f.severity))
                    .bind(f.line)
                    .bind(f.col)
                    .bind(f.loc.as_deref().map(clean))
                    .bind(clean(&f.message))
                    .execute(&mut *tx)
                    .await?;
                }
                $crate::diffs::link_diff!(tx, d.diff, download_id, sitemap_id);
                $crate::trust::save_tally!(tx, sitemap_id, d.lastmod.as_ref());
                if let Some(read) = stands_for {
                    sqlx::query(
                        "INSERT INTO findings (download_id, rule, severity, line, col, loc, message) \
                         SELECT $1, rule, severity, line, col, loc, message FROM findings WHERE download_id = $2 ORDER BY id",
                    )
                    .bind(download_id)
                    .bind(read)
                    .execute(&mut *tx)
                    .await?;
                }
                // The URL set the read's merge left is the whole of these bytes' (see
                // `DownloadRecord::whole_read`): set with the download it stands for.
                if let Some(key) = &d.whole_read {
                    sqlx::query("UPDATE sitemap_url_sets SET read_key = $1 WHERE sitemap_id = $2")
                        .bind(key)
                        .bind(sitemap_id)
                        .execute(&mut *tx)
                        .await?;
                }
                // Its links did not change here (a merge moves the URL counts): no recount.
                refresh_rollups!(tx, sitemap_id, keep_urls);
                tx.commit().await?;
                Ok(download_id)
            }

            pub(crate) async fn list_downloads_impl(&self, actor: Actor, sitemap_id: i64, limit: i64) -> Result<Vec<Download>> {
                self.sitemap(actor, sitemap_id).await?;
                Ok(sqlx::query_as(
                    "SELECT id, sitemap_id, downloaded_at, status, http_status, bytes, duration_ms, url_count, error_count, \
                     warning_count, error FROM downloads WHERE sitemap_id = $1 ORDER BY downloaded_at DESC, id DESC LIMIT $2",
                )
                .bind(sitemap_id)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn record_fetch_summary_impl(&self, worker: &str, sitemap_id: i64, summary: &FetchSummary) -> Result<()> {
                let done = sqlx::query(
                    "UPDATE sitemaps SET kinds = COALESCE($1, kinds), url_count = COALESCE($2, url_count), \
                     fetch_interval = $3, failures = $4, format = COALESCE($7, format), \
                     web_count = COALESCE($8, web_count), image_count = COALESCE($9, image_count), \
                     video_count = COALESCE($10, video_count), news_count = COALESCE($11, news_count) \
                     WHERE id = $5 AND lease_owner = $6",
                )
                .bind(&summary.kinds)
                .bind(summary.url_count)
                .bind(summary.fetch_interval)
                .bind(summary.failures)
                .bind(sitemap_id)
                .bind(worker)
                .bind(&summary.format)
                .bind(summary.contents.map(|c| c.web))
                .bind(summary.contents.map(|c| c.image))
                .bind(summary.contents.map(|c| c.video))
                .bind(summary.contents.map(|c| c.news))
                .execute(&self.pool)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                }
                Ok(())
            }

            pub(crate) async fn finding_examples_impl(&self, actor: Actor, q: &FindingQuery) -> Result<Vec<FindingExample>> {
                self.site(actor, q.site_id).await?;
                let per_rule = q.per_rule.clamp(1, 1000);
                let offset = q.offset.max(0);
                // One sitemap's findings are those of its tree: an index's own and its live
                // children's at any depth (a sitemap that is no index is its own tree).
                Ok(sqlx::query_as(
                    "WITH RECURSIVE tree(id) AS (SELECT CAST($3 AS BIGINT) UNION SELECT c.id FROM sitemaps c \
                     JOIN tree t ON c.parent_id = t.id WHERE c.removed_at IS NULL AND c.site_id = $1), \
                     latest AS (SELECT sm.id AS sid, sm.url AS surl, \
                     (SELECT d.id FROM downloads d WHERE d.sitemap_id = sm.id AND d.status <> 'unchanged' \
                      ORDER BY d.downloaded_at DESC, d.id DESC LIMIT 1) AS did \
                     FROM sitemaps sm WHERE sm.site_id = $1 AND ($2 OR sm.id IN (SELECT id FROM tree)) \
                     AND (sm.removed_at IS NULL OR sm.id = $3)) \
                     SELECT x.rule, x.severity, x.line, x.col, x.loc, x.message, x.rule_count, x.sitemap_id, x.sitemap_url FROM \
                     (SELECT f.rule, f.severity, f.line, f.col, f.loc, f.message, l.sid AS sitemap_id, l.surl AS sitemap_url, \
                      ROW_NUMBER() OVER (PARTITION BY f.rule ORDER BY f.id) AS rn, \
                      COUNT(*) OVER (PARTITION BY f.rule) AS rule_count \
                      FROM findings f JOIN latest l ON f.download_id = l.did \
                      WHERE ($4 OR f.rule = $5) AND ($6 OR f.severity = $7)) x \
                     WHERE x.rn > $8 AND x.rn <= $9 ORDER BY x.rule, x.rn",
                )
                .bind(q.site_id)
                .bind(q.sitemap_id.is_none())
                .bind(q.sitemap_id.unwrap_or(0))
                .bind(q.rule.is_none())
                .bind(q.rule.as_deref().unwrap_or(""))
                .bind(q.severity.is_none())
                .bind(q.severity.as_deref().unwrap_or(""))
                .bind(offset)
                .bind(offset + per_rule)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn list_findings_page_impl(
                &self,
                actor: Actor,
                download_id: i64,
                offset: i64,
                limit: i64,
            ) -> Result<Vec<FindingRecord>> {
                let visible: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT d.id FROM downloads d JOIN sitemaps sm ON sm.id = d.sitemap_id JOIN sites s ON s.id = sm.site_id \
                     WHERE d.id = $1 AND ", owned!("$2", "$3")
                ))
                .bind(download_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                if visible.is_none() {
                    return Err(Error::NotFound { what: "download", id: download_id });
                }
                Ok(sqlx::query_as(
                    "SELECT rule, severity, line, col, loc, message FROM findings WHERE download_id = $1 \
                     ORDER BY id LIMIT $2 OFFSET $3",
                )
                .bind(download_id)
                .bind(limit.clamp(1, 10_000))
                .bind(offset.max(0))
                .fetch_all(&self.pool)
                .await?)
            }
        }
    };
}

/// The values of a new sitemap's `owner_id` and `site_verified`: its site's owner and verified
/// state (migration 0046), read in the `INSERT` itself. Every `INSERT INTO sitemaps` writes
/// them (`sync_index_children` reads them once a chunk instead): no trigger does since
/// migration 0047. No site: the owner is NULL and the foreign key refuses the row, as before.
macro_rules! site_state {
    ($site:literal) => {
        concat!(
            "(SELECT owner_id FROM sites WHERE id = ",
            $site,
            "), COALESCE((SELECT verified_at IS NOT NULL FROM sites WHERE id = ",
            $site,
            "), FALSE)"
        )
    };
}

/// The columns of [`crate::Sitemap`].
macro_rules! sitemap_cols {
    () => {
        "sm.id, sm.site_id, sm.url, sm.source, sm.parent_id, sm.submitted_at, sm.next_fetch_at, \
         sm.last_downloaded_at, sm.status, sm.http_status, sm.etag, sm.last_modified, \
         sm.content_hash, sm.index_lastmod, sm.removed_at, sm.kinds, sm.url_count, sm.fetch_interval, sm.failures, \
         sm.is_index, sm.errors, sm.warnings, sm.rollup_status, sm.rollup_errors, sm.rollup_warnings, sm.rollup_urls, \
         sm.format, sm.web_count, sm.image_count, sm.video_count, sm.news_count, sm.last_submitted_at, \
         sm.site_verified, sm.held_at, sm.held_reason"
    };
}

/// The console's summary of a sitemap: its row and its site's origin.
macro_rules! summary_select {
    () => {
        concat!("SELECT ", sitemap_cols!(), ", s.origin FROM sitemaps sm JOIN sites s ON s.id = sm.site_id ")
    };
}

/// `Err(Quota)` when the site holds [`MAX_SITEMAPS_PER_SITE`](crate::MAX_SITEMAPS_PER_SITE)
/// sitemaps and `url` is not one of them (a known one may always come back), read in the
/// transaction `$tx` that adds it.
macro_rules! sitemap_room {
    ($tx:ident, $site_id:expr, $url:expr) => {{
        let known: Option<i64> = sqlx::query_scalar("SELECT id FROM sitemaps WHERE site_id = $1 AND url = $2")
            .bind($site_id)
            .bind($url)
            .fetch_optional(&mut *$tx)
            .await?;
        let held: i64 = if known.is_some() {
            0
        } else {
            sqlx::query_scalar("SELECT COUNT(*) FROM sitemaps WHERE site_id = $1")
                .bind($site_id)
                .fetch_one(&mut *$tx)
                .await?
        };
        if held >= $crate::MAX_SITEMAPS_PER_SITE {
            Err(Error::Quota(format!(
                "the site has {} sitemaps, the most a site may have: remove some before adding {}",
                $crate::MAX_SITEMAPS_PER_SITE,
                $url
            )))
        } else {
            Ok(())
        }
    }};
}

/// The rank of a roll-up status in SQL, worst highest: failed 4, errors 3, warnings 2, pending
/// (NULL) 1, ok 0. Kept equal to [`status_rank`].
macro_rules! rank_sql {
    () => {
        "CASE rollup_status WHEN 'failed' THEN 4 WHEN 'errors' THEN 3 WHEN 'warnings' THEN 2 \
         WHEN 'ok' THEN 0 WHEN 'unchanged' THEN 0 ELSE 1 END"
    };
}

/// Recomputes, in the caller's transaction `$tx` (an identifier), the roll-up of a sitemap and
/// of every index above it: the parent chain, at most [`MAX_ROLLUP_DEPTH`] long (which also
/// ends a cycle, though `parent_id` makes none). Call it after any change of a sitemap's
/// status, counts, links, children or removal. With `keep_urls` the URL counts are kept as
/// they are (a merge moved them already: `ingest.rs`) unless the sitemap turned from an index
/// into a list of URLs or back; only the status and the finding counts are recomputed, so a
/// download's `complete` costs no count over the index's URLs.
macro_rules! refresh_rollups {
    ($tx:ident, $sitemap_id:expr) => {
        refresh_rollups!($tx, $sitemap_id, recount = true)
    };
    ($tx:ident, $sitemap_id:expr, keep_urls) => {
        refresh_rollups!($tx, $sitemap_id, recount = false)
    };
    ($tx:ident, $sitemap_id:expr, recount = $recount:expr) => {{
        let recount: bool = $recount;
        let mut next: Option<i64> = Some($sitemap_id);
        let mut depth = 0;
        while let Some(id) = next.take() {
            depth += 1;
            if depth > $crate::sitemaps::MAX_ROLLUP_DEPTH {
                break;
            }
            type Row = (Option<String>, Option<String>, i64, i64, Option<i64>, Option<i64>, bool, i64);
            // Read with the row locked until the commit (an UPDATE that changes nothing): two
            // children completing at once on PostgreSQL each wrote the index's roll-up they had
            // read before the other's commit, and one child's URLs were lost from its count.
            let row: Option<Row> = sqlx::query_as(
                "UPDATE sitemaps SET rollup_urls = rollup_urls WHERE id = $1 \
                 RETURNING kinds, status, errors, warnings, removed_at, parent_id, is_index, rollup_urls",
            )
            .bind(id)
            .fetch_optional(&mut *$tx)
            .await?;
            let Some((kinds, status, errors, warnings, removed_at, parent_id, was_index, kept_urls)) = row else {
                break;
            };
            let is_index = kinds.as_deref() == Some("index");
            let count_urls = recount || was_index != is_index;
            let (rollup_status, rollup_errors, rollup_warnings, rollup_urls) = if removed_at.is_some() {
                (None, 0, 0, 0)
            } else if is_index {
                let (worst, errs, warns): (i64, i64, i64) = sqlx::query_as(concat!(
                    "SELECT CAST(COALESCE(MAX(",
                    rank_sql!(),
                    "), 0) AS BIGINT), CAST(COALESCE(SUM(rollup_errors), 0) AS BIGINT), \
                     CAST(COALESCE(SUM(rollup_warnings), 0) AS BIGINT) \
                     FROM sitemaps WHERE parent_id = $1 AND id <> $1 AND removed_at IS NULL"
                ))
                .bind(id)
                .fetch_one(&mut *$tx)
                .await?;
                // Distinct over every live descendant: a URL two children list counts once.
                let urls: i64 = if !count_urls {
                    kept_urls
                } else {
                    sqlx::query_scalar(
                        "WITH RECURSIVE d(id) AS (SELECT id FROM sitemaps WHERE parent_id = $1 AND id <> $1 \
                     AND removed_at IS NULL UNION SELECT c.id FROM sitemaps c JOIN d ON c.parent_id = d.id \
                     WHERE c.removed_at IS NULL) \
                     SELECT CAST(COUNT(DISTINCT su.url_id) AS BIGINT) FROM sitemap_urls su \
                     WHERE su.sitemap_id IN (SELECT id FROM d)",
                    )
                    .bind(id)
                    .fetch_one(&mut *$tx)
                    .await?
                };
                ($crate::sitemaps::worse(status, worst), errors + errs, warnings + warns, urls)
            } else {
                let urls: i64 = if !count_urls {
                    kept_urls
                } else {
                    sqlx::query_scalar("SELECT CAST(COUNT(*) AS BIGINT) FROM sitemap_urls WHERE sitemap_id = $1")
                        .bind(id)
                        .fetch_one(&mut *$tx)
                        .await?
                };
                (status, errors, warnings, urls)
            };
            sqlx::query(
                "UPDATE sitemaps SET is_index = $1, rollup_status = $2, rollup_errors = $3, rollup_warnings = $4, \
                 rollup_urls = $5 WHERE id = $6",
            )
            .bind(is_index)
            .bind(rollup_status)
            .bind(rollup_errors)
            .bind(rollup_warnings)
            .bind(rollup_urls)
            .bind(id)
            .execute(&mut *$tx)
            .await?;
            next = parent_id.filter(|p| *p != id);
        }
    }};
}

/// Marks removed, in the caller's transaction, the live index children (at any depth) of a
/// sitemap being removed, and forgets every removed one's links, validators and verdict: a
/// sitemap that comes back is read in full (a 304 would otherwise stand for URLs it no longer
/// holds) and is pending until then. `$ids` are the sitemaps removed by the caller.
macro_rules! forget_removed {
    ($tx:ident, $ids:expr, $now:expr) => {{
        // In chunks with IN lists, not three statements per sitemap: an index that drops
        // 20,000 children is a few dozen statements (it was a minute on PostgreSQL).
        let ids: Vec<i64> = $ids.into_iter().collect();
        for chunk in ids.chunks($crate::sql::CHILD_CHUNK) {
            let mut query = sqlx::QueryBuilder::new(
                "WITH RECURSIVE d(id) AS (SELECT id FROM sitemaps WHERE source = 'index' \
                 AND removed_at IS NULL AND parent_id IN ",
            );
            $crate::sql::push_id_list(&mut query, chunk);
            query.push(
                " UNION SELECT c.id FROM sitemaps c JOIN d ON c.parent_id = d.id \
                 WHERE c.source = 'index' AND c.removed_at IS NULL) SELECT id FROM d",
            );
            let descendants: Vec<i64> = query.build_query_scalar().fetch_all(&mut *$tx).await?;
            let gone: Vec<i64> = chunk.iter().copied().chain(descendants).collect();
            for part in gone.chunks($crate::sql::CHILD_CHUNK) {
                let mut update = sqlx::QueryBuilder::new("UPDATE sitemaps SET removed_at = COALESCE(removed_at, ");
                update.push_bind($now).push(
                    "), lease_owner = NULL, lease_expires_at = NULL, etag = NULL, last_modified = NULL, \
                     content_hash = NULL, status = NULL, http_status = NULL, errors = 0, warnings = 0, \
                     url_count = NULL WHERE id IN ",
                );
                $crate::sql::push_id_list(&mut update, part);
                update.build().execute(&mut *$tx).await?;
                let mut delete = sqlx::QueryBuilder::new("DELETE FROM sitemap_urls WHERE sitemap_id IN ");
                $crate::sql::push_id_list(&mut delete, part);
                delete.build().execute(&mut *$tx).await?;
                // The stored URL set of their last read goes with the links it stood for.
                let mut sets = sqlx::QueryBuilder::new("DELETE FROM sitemap_url_sets WHERE sitemap_id IN ");
                $crate::sql::push_id_list(&mut sets, part);
                sets.build().execute(&mut *$tx).await?;
            }
        }
    }};
}

/// Roll-up chains longer than this stop (indexes of indexes are already beyond the protocol).
pub(crate) const MAX_ROLLUP_DEPTH: usize = 16;

/// The rank of a status for the roll-up, worst highest (see `rank_sql!`).
pub(crate) fn status_rank(status: Option<&str>) -> i64 {
    match status {
        Some("failed") => 4,
        Some("errors") => 3,
        Some("warnings") => 2,
        None => 1,
        Some(_) => 0,
    }
}

/// An index's roll-up status: its own, unless a child's rank `worst` is worse (a pending child
/// makes an otherwise clean index pending: its verdict is not known yet).
/// A download's error and warning counts: its stored findings and those it says it left out.
pub(crate) fn finding_counts(d: &crate::DownloadRecord) -> (i64, i64) {
    let stored = |severity: &str| d.findings.iter().filter(|f| f.severity == severity).count() as i64;
    (
        stored("error").saturating_add(d.omitted_errors.max(0)),
        stored("warning").saturating_add(d.omitted_warnings.max(0)),
    )
}

/// The verdict a read's counts allow: a read is never stored as better than its findings say
/// ("ok" or "warnings" with an error counted is "errors", "ok" with a warning "warnings"),
/// whatever the worker reported; "failed" and "unchanged" stay as they are.
pub(crate) fn verdict(status: &str, errors: i64, warnings: i64) -> String {
    match status {
        "ok" | "warnings" if errors > 0 => "errors".into(),
        "ok" if warnings > 0 => "warnings".into(),
        other => other.to_owned(),
    }
}

pub(crate) fn worse(own: Option<String>, worst: i64) -> Option<String> {
    if status_rank(own.as_deref()) >= worst {
        return own;
    }
    match worst {
        4 => Some("failed".into()),
        3 => Some("errors".into()),
        2 => Some("warnings".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_rolls_up_to_the_worst() {
        let ok = || Some("ok".to_owned());
        assert_eq!(worse(ok(), 0), ok());
        assert_eq!(worse(ok(), 1), None, "a pending child: not known yet");
        assert_eq!(worse(ok(), 3).as_deref(), Some("errors"));
        assert_eq!(worse(Some("failed".into()), 3).as_deref(), Some("failed"), "its own failure stays");
        assert_eq!(worse(Some("warnings".into()), 4).as_deref(), Some("failed"));
        assert_eq!(worse(None, 0), None, "the index itself pending");
        for (status, rank) in [("failed", 4), ("errors", 3), ("warnings", 2), ("ok", 0), ("unchanged", 0)] {
            assert_eq!(status_rank(Some(status)), rank, "{status}, as rank_sql! ranks it");
        }
    }
}
