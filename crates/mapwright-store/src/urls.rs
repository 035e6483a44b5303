//! The queries of URLs: a read's URLs written and swept, pushed URLs, the URL lists, searches and
//! frontier; written once for both backends like those of `sql.rs`, whose `impl_store!` expands
//! [`url_methods!`] into inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls (see `signups.rs`).
//! The staged write path of a download's URLs is `ingest.rs`.

/// The `Store` methods of URLs; `loc_lower` is the URL search's lower-cased `loc` (see `impl_store!`).
macro_rules! url_methods {
    ($ty:ty, loc_lower = $loc_lower:literal) => {
        impl $ty {
            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
            pub(crate) async fn store_urls_impl(
                &self,
                site_id: i64,
                sitemap_id: i64,
                urls: &[UrlRecord],
                now: Timestamp,
                quota: i64,
            ) -> Result<UrlWrite> {
                // One multi-row statement per chunk instead of two round trips per URL (ten
                // times faster on PostgreSQL), one transaction per chunk so that other writers
                // wait briefly. A statement may not touch a row twice, so a URL listed twice
                // keeps its last entry.
                let keyed: Vec<(std::borrow::Cow<'_, str>, Vec<u8>)> = urls
                    .iter()
                    .map(|u| {
                        let loc = clean(&u.loc);
                        let hash = loc_hash(&loc);
                        (loc, hash)
                    })
                    .collect();
                let mut last = std::collections::HashMap::with_capacity(urls.len());
                for (i, (_, hash)) in keyed.iter().enumerate() {
                    last.insert(hash.as_slice(), i);
                }
                let unique: Vec<usize> = (0..urls.len()).filter(|i| last[keyed[*i].1.as_slice()] == *i).collect();
                let mut write = UrlWrite::default();
                // The site's URL rows, counted once, when the first new URL meets a quota.
                let mut rows: Option<i64> = None;
                let mut pacer = self.pacer();
                for chunk in unique.chunks(URL_CHUNK) {
                    pacer.between().await;
                    let mut tx = self.begin_bulk().await?;
                    let (take, refused) = $crate::sql::take_within_quota!(tx, site_id, quota, rows, chunk, |i: usize| {
                        keyed[i].1.as_slice()
                    });
                    write.refused += refused;
                    if !take.is_empty() {
                        let mut insert = sqlx::QueryBuilder::new(
                            "INSERT INTO urls (site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, \
                             last_seen_at, changed_at) ",
                        );
                        insert.push_values(&take, |mut row, i| {
                            let (url, (loc, hash)) = (&urls[*i], &keyed[*i]);
                            row.push_bind(site_id)
                                .push_bind(loc.as_ref())
                                .push_bind(hash.as_slice())
                                .push_bind(&url.lastmod)
                                .push_bind(&url.changefreq)
                                .push_bind(url.priority)
                                .push_bind(now)
                                .push_bind(now)
                                .push_bind(now);
                        });
                        insert.push(
                            " ON CONFLICT (site_id, loc_hash) DO UPDATE SET \
                             changed_at = CASE WHEN urls.removed_at IS NOT NULL OR urls.lastmod IS DISTINCT FROM excluded.lastmod \
                             THEN excluded.changed_at ELSE urls.changed_at END, \
                             lastmod = excluded.lastmod, changefreq = excluded.changefreq, priority = excluded.priority, \
                             last_seen_at = excluded.last_seen_at, removed_at = NULL RETURNING id",
                        );
                        let ids: Vec<i64> = insert.build_query_scalar().fetch_all(&mut *tx).await?;
                        let mut link = sqlx::QueryBuilder::new("INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) ");
                        link.push_values(&ids, |mut row, id| {
                            row.push_bind(sitemap_id).push_bind(*id).push_bind(now);
                        });
                        link.push(" ON CONFLICT (sitemap_id, url_id) DO UPDATE SET last_seen_at = excluded.last_seen_at");
                        link.build().execute(&mut *tx).await?;
                    }
                    tx.commit().await?;
                    write.written += take.len() as u64;
                }
                // Written beside the staged path: the sitemap's stored URL set no longer stands
                // for its links, and its roll-ups are recounted.
                let mut tx = self.begin_write().await?;
                sqlx::query("DELETE FROM sitemap_url_sets WHERE sitemap_id = $1").bind(sitemap_id).execute(&mut *tx).await?;
                refresh_rollups!(tx, sitemap_id);
                tx.commit().await?;
                Ok(write)
            }

            pub(crate) async fn sweep_urls_impl(&self, site_id: i64, sitemap_id: i64, seen_since: Timestamp, now: Timestamp) -> Result<u64> {
                let mut tx = self.begin_bulk().await?;
                sqlx::query("DELETE FROM sitemap_urls WHERE sitemap_id = $1 AND last_seen_at < $2")
                    .bind(sitemap_id)
                    .bind(seen_since)
                    .execute(&mut *tx)
                    .await?;
                let removed = mark_orphans_removed!(&mut *tx, site_id, now);
                sqlx::query("DELETE FROM sitemap_url_sets WHERE sitemap_id = $1").bind(sitemap_id).execute(&mut *tx).await?;
                refresh_rollups!(tx, sitemap_id);
                tx.commit().await?;
                Ok(removed)
            }

            pub(crate) async fn list_urls_impl(&self, actor: Actor, site_id: i64, query: UrlQuery) -> Result<Page<UrlRow>> {
                self.site(actor, site_id).await?;
                let limit = query.limit.clamp(1, 10_000);
                let items: Vec<UrlRow> = sqlx::query_as(concat!(
                    "SELECT ", url_cols!(), " FROM urls u WHERE u.site_id = $1 AND u.id > $2 \
                     AND ($3 OR u.removed_at IS NULL) ORDER BY u.id LIMIT $4"
                ))
                .bind(site_id)
                .bind(query.after)
                .bind(query.include_removed)
                .bind(limit + 1)
                .fetch_all(&self.pool)
                .await?;
                Ok(Page::from_one_extra(items, limit, |u| u.id))
            }

            pub(crate) async fn url_sitemaps_impl(&self, actor: Actor, url_id: i64) -> Result<Vec<i64>> {
                let visible: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT u.id FROM urls u JOIN sites s ON s.id = u.site_id WHERE u.id = $1 AND ", owned!("$2", "$3")
                ))
                .bind(url_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                if visible.is_none() {
                    return Err(Error::NotFound { what: "url", id: url_id });
                }
                Ok(sqlx::query_scalar("SELECT sitemap_id FROM sitemap_urls WHERE url_id = $1 ORDER BY sitemap_id")
                    .bind(url_id)
                    .fetch_all(&self.pool)
                    .await?)
            }

            pub(crate) async fn frontier_impl(&self, actor: Actor, site_id: i64, since: Timestamp, limit: i64) -> Result<Vec<UrlRow>> {
                self.site(actor, site_id).await?;
                Ok(sqlx::query_as(concat!(
                    "SELECT ", url_cols!(), " FROM urls u WHERE u.site_id = $1 AND u.removed_at IS NULL ORDER BY \
                     CASE WHEN u.changed_at >= $2 THEN 0 ELSE 1 END, \
                     CASE WHEN u.changed_at >= $2 THEN u.changed_at ELSE 0 END DESC, \
                     COALESCE(u.priority, 0.5) DESC, \
                     CASE u.changefreq WHEN 'always' THEN 0 WHEN 'hourly' THEN 1 WHEN 'daily' THEN 2 \
                     WHEN 'weekly' THEN 3 WHEN 'monthly' THEN 4 WHEN 'yearly' THEN 6 WHEN 'never' THEN 7 ELSE 5 END, \
                     u.id LIMIT $3"
                ))
                .bind(site_id)
                .bind(since)
                .bind(limit.clamp(1, 10_000))
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn record_pushed_urls_impl(
                &self,
                site_id: i64,
                urls: &[String],
                now: Timestamp,
                quota: i64,
            ) -> Result<UrlWrite> {
                let mut unique: Vec<(std::borrow::Cow<'_, str>, Vec<u8>)> = urls
                    .iter()
                    .map(|u| {
                        let loc = clean(u);
                        let hash = loc_hash(&loc);
                        (loc, hash)
                    })
                    .collect();
                // In key order, so concurrent pushes lock rows in one order (no deadlock); the
                // quota takes new URLs in that order too.
                unique.sort_unstable_by(|a, b| a.1.cmp(&b.1));
                unique.dedup_by(|a, b| a.1 == b.1);
                let order: Vec<usize> = (0..unique.len()).collect();
                let mut write = UrlWrite::default();
                let mut rows: Option<i64> = None;
                let mut tx = self.begin_bulk().await?;
                for chunk in order.chunks(URL_CHUNK) {
                    let (take, refused) = $crate::sql::take_within_quota!(tx, site_id, quota, rows, chunk, |i: usize| {
                        unique[i].1.as_slice()
                    });
                    write.refused += refused;
                    write.written += take.len() as u64;
                    if take.is_empty() {
                        continue;
                    }
                    let mut insert = sqlx::QueryBuilder::new(
                        "INSERT INTO urls (site_id, loc, loc_hash, first_seen_at, last_seen_at, changed_at) ",
                    );
                    insert.push_values(&take, |mut row, i| {
                        let (loc, hash) = &unique[*i];
                        row.push_bind(site_id)
                            .push_bind(loc.as_ref())
                            .push_bind(hash.as_slice())
                            .push_bind(now)
                            .push_bind(now)
                            .push_bind(now);
                    });
                    insert.push(
                        " ON CONFLICT (site_id, loc_hash) DO UPDATE SET changed_at = excluded.changed_at, removed_at = NULL",
                    );
                    insert.build().execute(&mut *tx).await?;
                }
                if write.written > 0 {
                    sqlx::query("UPDATE sites SET pushed_unswept = TRUE WHERE id = $1").bind(site_id).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(write)
            }

            pub(crate) async fn search_sitemap_urls_impl(
                &self,
                actor: Actor,
                sitemap_id: i64,
                contains: &str,
                after: i64,
                limit: i64,
            ) -> Result<Page<UrlRow>> {
                let sitemap = self.sitemap(actor, sitemap_id).await?;
                let site_id = sitemap.site_id;
                let limit = limit.clamp(1, 10_000);
                if sitemap.is_index {
                    // An index's URLs are its tree's: the site's live URLs in id order that a
                    // live descendant lists (each once, however many list it), as its roll-up
                    // counts them.
                    let pattern = format!("%{}%", like_escape(&contains.to_ascii_lowercase()));
                    let items: Vec<UrlRow> = sqlx::query_as(concat!(
                        "WITH RECURSIVE tree(id) AS (SELECT id FROM sitemaps WHERE parent_id = $1 AND id <> $1 \
                         AND removed_at IS NULL UNION SELECT c.id FROM sitemaps c JOIN tree t ON c.parent_id = t.id \
                         WHERE c.removed_at IS NULL) \
                         SELECT ", url_cols!(), " FROM urls u WHERE u.site_id = $4 AND u.id > $2 AND u.removed_at IS NULL \
                         AND ($5 OR ", $loc_lower, " LIKE $6 ESCAPE '\\') \
                         AND EXISTS (SELECT 1 FROM sitemap_urls su WHERE su.url_id = u.id AND su.sitemap_id IN (SELECT id FROM tree)) \
                         ORDER BY u.id LIMIT $3"
                    ))
                    .bind(sitemap_id)
                    .bind(after)
                    .bind(limit + 1)
                    .bind(site_id)
                    .bind(contains.is_empty())
                    .bind(pattern)
                    .fetch_all(&self.pool)
                    .await?;
                    return Ok(Page::from_one_extra(items, limit, |u| u.id));
                }
                // Two statements, not one with `($n OR ...)`: a prepared statement's generic plan
                // could not use PostgreSQL's trigram index (migration 0010) through the OR. Both
                // name the site, as every statement on a URL table does (ARCHITECTURE.md, "Past
                // one PostgreSQL": with the URL tables split by site, each goes to one shard).
                let items: Vec<UrlRow> = if contains.is_empty() {
                    // Driven by the link table's key (sitemap, url) in URL order, so a page costs
                    // its rows, not a scan of the site's URLs (PostgreSQL otherwise walks `urls`).
                    sqlx::query_as(concat!(
                        "SELECT ", url_cols!(), " FROM sitemap_urls su JOIN urls u ON u.id = su.url_id \
                         WHERE su.sitemap_id = $1 AND su.url_id > $2 AND u.removed_at IS NULL AND u.site_id = $4 \
                         ORDER BY su.url_id LIMIT $3"
                    ))
                    .bind(sitemap_id)
                    .bind(after)
                    .bind(limit + 1)
                    .bind(site_id)
                    .fetch_all(&self.pool)
                    .await?
                } else {
                    let pattern = format!("%{}%", like_escape(&contains.to_ascii_lowercase()));
                    sqlx::query_as(concat!(
                        "SELECT ", url_cols!(), " FROM sitemap_urls su JOIN urls u ON u.id = su.url_id \
                         WHERE su.sitemap_id = $1 AND su.url_id > $2 AND u.removed_at IS NULL \
                         AND u.site_id = $5 AND ", $loc_lower, " LIKE $3 ESCAPE '\\' ORDER BY su.url_id LIMIT $4"
                    ))
                    .bind(sitemap_id)
                    .bind(after)
                    .bind(pattern)
                    .bind(limit + 1)
                    .bind(site_id)
                    .fetch_all(&self.pool)
                    .await?
                };
                Ok(Page::from_one_extra(items, limit, |u| u.id))
            }
        }
    };
}

/// The columns of [`crate::UrlRow`]. A merge rewrites only the URL rows that changed, so
/// "last seen" is the latest merge of a sitemap that lists the URL, or the row's own stamp.
macro_rules! url_cols {
    () => {
        "u.id, u.site_id, u.loc, u.lastmod, u.changefreq, u.priority, u.first_seen_at, \
         COALESCE((SELECT MAX(lsm.urls_read_at) FROM sitemap_urls lsu JOIN sitemaps lsm ON lsm.id = lsu.sitemap_id \
         WHERE lsu.url_id = u.id AND lsm.urls_read_at > u.last_seen_at), u.last_seen_at) AS last_seen_at, \
         u.changed_at, u.removed_at"
    };
}
