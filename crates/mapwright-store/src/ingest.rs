//! The write path of a download's URLs: staged while the download runs, merged at its end.
//!
//! A download's URLs are never written to the live tables while it runs. Each batch the reader
//! hands over is one row of `staged_url_batches` (the batch as a JSON array: one short insert
//! per 2,000 URLs, whatever the backend). When the read completes, [`impl_ingest!`]'s merge
//! expands the stage in SQL (`json_each` on SQLite, `json_array_elements` on PostgreSQL) into a
//! temporary table of the transaction, keeps the last entry of a URL listed twice, and brings
//! `urls` and `sitemap_urls` in line with set-based statements, in one transaction:
//!
//! - new URLs are inserted (within the site's quota, in reading order),
//! - known URLs are rewritten only when their lastmod, changefreq or priority changed or they
//!   come back from removal (change detection is a `WHERE` of the merge, not a row per URL),
//! - links of the sitemap are added for what it lists now, and after a complete read those it
//!   no longer lists are removed, their URLs marked removed when no other sitemap lists them.
//!
//! So a reader sees the previous URL set until the merge commits, and the new one after: a
//! download that dies (store error, lost connection, deadline, `kill -9`) leaves stage rows
//! only, discarded at the next attempt on the sitemap. A refetch of the same bytes merges
//! nothing (see [`UrlMerge::same_content`](crate::UrlMerge::same_content)).

/// The inherent methods behind the `Store` trait's staging methods, for one backend.
///
/// `create`: the statements that make an empty temporary table `merge_urls` (loc_hash, seq, loc,
/// lastmod, changefreq, priority, url_id, state) for this transaction. `expand`: the statement
/// that fills it from stage `$1`, one row per distinct URL, its last entry. `resolved`: what
/// runs once each row knows its URL row (an index on `url_id`, statistics for PostgreSQL's
/// planner). `new_urls`: how the URLs the merge adds are linked to the sitemap, `rowid` or
/// `returning` (see `insert_new!`). `drop`: what removes it at the end (nothing where the
/// commit drops it).
macro_rules! impl_ingest {
    (
        $store:ty,
        create = [$($create:literal),* $(,)?],
        expand = $expand:literal,
        resolved = [$($resolved:literal),* $(,)?],
        new_urls = $new_urls:ident,
        drop = [$($drop:literal),* $(,)?]
    ) => {
        impl $store {
            pub(crate) async fn ingest_begin(
                &self,
                worker: &str,
                site_id: i64,
                sitemap_id: i64,
                now: Timestamp,
            ) -> Result<UrlStage> {
                let mut tx = self.begin_write().await?;
                let held = sqlx::query(
                    "UPDATE sitemaps SET lease_owner = lease_owner WHERE id = $1 AND lease_owner = $2 AND site_id = $3",
                )
                .bind(sitemap_id)
                .bind(worker)
                .bind(site_id)
                .execute(&mut *tx)
                .await?;
                if held.rows_affected() == 0 {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                }
                // Earlier attempts on this sitemap are dead (the lease is ours), and no stage
                // outlives a day: what a killed process staged is bounded.
                sqlx::query("DELETE FROM url_stages WHERE sitemap_id = $1 OR started_at < $2")
                    .bind(sitemap_id)
                    .bind(now.saturating_sub($crate::ingest::STAGE_MAX_AGE))
                    .execute(&mut *tx)
                    .await?;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO url_stages (sitemap_id, worker, started_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(sitemap_id)
                .bind(worker)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(UrlStage { id, site_id, sitemap_id, batches: 0 })
            }

            pub(crate) async fn ingest_stage(&self, stage: &mut UrlStage, urls: &[UrlRecord]) -> Result<()> {
                if urls.is_empty() {
                    return Ok(());
                }
                let body = $crate::ingest::batch_json(urls);
                sqlx::query("INSERT INTO staged_url_batches (stage_id, seq, body) VALUES ($1, $2, $3)")
                    .bind(stage.id)
                    .bind(stage.batches)
                    .bind(body)
                    .execute(&self.pool)
                    .await?;
                stage.batches += 1;
                Ok(())
            }

            pub(crate) async fn ingest_discard(&self, stage: &UrlStage) -> Result<()> {
                sqlx::query("DELETE FROM url_stages WHERE id = $1").bind(stage.id).execute(&self.pool).await?;
                Ok(())
            }

            pub(crate) async fn ingest_merge(&self, worker: &str, stage: &UrlStage, merge: UrlMerge) -> Result<UrlWrite> {
                let (site_id, sitemap_id, now) = (stage.site_id, stage.sitemap_id, merge.now);
                let mut tx = self.begin_write().await?;
                // The lease, and the sitemap's row locked until the commit.
                let last: Option<(Option<i64>, i64)> = sqlx::query_as(
                    "UPDATE sitemaps SET lease_owner = lease_owner WHERE id = $1 AND lease_owner = $2 AND site_id = $3 \
                     RETURNING urls_read_at, urls_refused",
                )
                .bind(sitemap_id)
                .bind(worker)
                .bind(site_id)
                .fetch_optional(&mut *tx)
                .await?;
                let Some((read_at, last_refused)) = last else {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                };
                let (owner, batches): (Option<i64>, i64) = sqlx::query_as(
                    "SELECT (SELECT sitemap_id FROM url_stages WHERE id = $1), \
                     (SELECT COUNT(*) FROM staged_url_batches WHERE stage_id = $1)",
                )
                .bind(stage.id)
                .fetch_one(&mut *tx)
                .await?;
                if owner != Some(sitemap_id) || batches != stage.batches {
                    return Err(Error::StageLost { sitemap_id, stage_id: stage.id });
                }
                let mut write = UrlWrite::default();
                if !(merge.same_content && read_at.is_some() && last_refused == 0) {
                    $(sqlx::query($create).execute(&mut *tx).await?;)*
                    sqlx::query($expand).bind(stage.id).execute(&mut *tx).await?;
                    write = $crate::ingest::merge_rows!(tx, site_id, sitemap_id, merge, [$($resolved),*], $new_urls);
                    $(sqlx::query($drop).execute(&mut *tx).await?;)*
                }
                // The same bytes as the last merged read: no URL row is written, the read only
                // stamps the sitemap (the URLs' "last seen").
                sqlx::query("UPDATE sitemaps SET urls_read_at = $1, urls_refused = $2 WHERE id = $3")
                    .bind(now)
                    .bind(if write == UrlWrite::default() { last_refused } else { write.refused as i64 })
                    .bind(sitemap_id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM url_stages WHERE id = $1").bind(stage.id).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(write)
            }
        }
    };
}

/// The set-based merge of the filled `merge_urls` into the live tables, in the caller's
/// transaction `$tx`; evaluates to the [`UrlWrite`](crate::UrlWrite). The same SQL on both
/// backends, each statement driven by the stage's rows (a correlated subquery or a CROSS JOIN
/// with the stage first), never by the site's URLs: a merge costs what the sitemap holds,
/// whatever the size of the site.
macro_rules! merge_rows {
    ($tx:ident, $site_id:expr, $sitemap_id:expr, $merge:expr, [$($resolved:literal),*], $new_urls:ident) => {{
        let (site_id, sitemap_id, merge): (i64, i64, UrlMerge) = ($site_id, $sitemap_id, $merge);
        let now = merge.now;
        // Each staged URL's row, and what changed: 2 its lastmod (or it comes back from
        // removal: `changed_at` moves), 1 only its changefreq or priority, 0 nothing.
        sqlx::query(
            "UPDATE merge_urls SET (url_id, state) = (SELECT u.id, CASE WHEN u.removed_at IS NOT NULL \
             OR u.lastmod IS DISTINCT FROM merge_urls.lastmod THEN 2 WHEN u.changefreq IS DISTINCT FROM \
             merge_urls.changefreq OR u.priority IS DISTINCT FROM merge_urls.priority THEN 1 ELSE 0 END \
             FROM urls u WHERE u.site_id = $1 AND u.loc_hash = merge_urls.loc_hash)",
        )
        .bind(site_id)
        .execute(&mut *$tx)
        .await?;
        $(sqlx::query($resolved).execute(&mut *$tx).await?;)*
        let (total, fresh): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COUNT(*) - COUNT(url_id) FROM merge_urls").fetch_one(&mut *$tx).await?;
        // Known URLs are rewritten only when what the sitemap says of them changed.
        sqlx::query(
            "UPDATE urls SET (lastmod, changefreq, priority, changed_at) = (SELECT m.lastmod, m.changefreq, \
             m.priority, CASE WHEN m.state = 2 THEN $1 ELSE urls.changed_at END FROM merge_urls m \
             WHERE m.url_id = urls.id), last_seen_at = $1, removed_at = NULL \
             WHERE site_id = $2 AND id IN (SELECT url_id FROM merge_urls WHERE state > 0)",
        )
        .bind(now)
        .bind(site_id)
        .execute(&mut *$tx)
        .await?;
        if merge.sweep {
            // What the sitemap no longer lists (only known URLs were linked before): its URL is
            // removed unless another sitemap lists it, marked before the links go.
            sqlx::query(
                "UPDATE urls SET removed_at = $1 WHERE removed_at IS NULL AND id IN (SELECT l.url_id \
                 FROM sitemap_urls l WHERE l.sitemap_id = $2 \
                 AND NOT EXISTS (SELECT 1 FROM merge_urls m WHERE m.url_id = l.url_id)) \
                 AND NOT EXISTS (SELECT 1 FROM sitemap_urls o WHERE o.url_id = urls.id AND o.sitemap_id <> $2) \
                 AND site_id = $3",
            )
            .bind(now)
            .bind(sitemap_id)
            .bind(site_id)
            .execute(&mut *$tx)
            .await?;
            sqlx::query(
                "DELETE FROM sitemap_urls WHERE sitemap_id = $1 \
                 AND NOT EXISTS (SELECT 1 FROM merge_urls m WHERE m.url_id = sitemap_urls.url_id)",
            )
            .bind(sitemap_id)
            .execute(&mut *$tx)
            .await?;
            // Pushed URLs link to no sitemap: the first sweep after a push removes those no
            // sitemap lists (the whole site is read only then, not at every merge).
            let pushed: bool = sqlx::query_scalar("SELECT pushed_unswept FROM sites WHERE id = $1")
                .bind(site_id)
                .fetch_one(&mut *$tx)
                .await?;
            if pushed {
                mark_orphans_removed!(&mut *$tx, site_id, now);
                sqlx::query("UPDATE sites SET pushed_unswept = FALSE WHERE id = $1")
                    .bind(site_id)
                    .execute(&mut *$tx)
                    .await?;
            }
        }
        // New URLs, within the quota, in reading order, each linked to the sitemap (after the
        // sweep, which knows the sitemap's links by the rows the stage resolved).
        let mut refused = 0_i64;
        if fresh > 0 {
            let room = if merge.quota == i64::MAX {
                fresh
            } else {
                let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1")
                    .bind(site_id)
                    .fetch_one(&mut *$tx)
                    .await?;
                merge.quota.saturating_sub(rows).clamp(0, fresh)
            };
            refused = fresh - room;
            if room > 0 {
                $crate::ingest::insert_new!($new_urls, $tx, site_id, sitemap_id, now, room);
            }
        }
        // Links of known URLs this sitemap did not list before.
        sqlx::query(
            "INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $1, m.url_id, $2 FROM merge_urls m \
             WHERE m.url_id IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM sitemap_urls l WHERE l.sitemap_id = $1 AND l.url_id = m.url_id)",
        )
        .bind(sitemap_id)
        .bind(now)
        .execute(&mut *$tx)
        .await?;
        UrlWrite { written: (total - refused) as u64, refused: refused as u64 }
    }};
}

pub(crate) use merge_rows;

/// The insert of the merge's new URLs (`url_id IS NULL` in `merge_urls`, the first `$room` in
/// reading order) and of their links to the sitemap, without looking each one up again:
///
/// - `rowid` (SQLite): the merge holds the database's one write lock, so the rows it inserts are
///   exactly those with an id above the largest before it (SQLite gives a new row the largest
///   rowid plus one): their links are one range scan.
/// - `returning` (PostgreSQL): the insert returns its ids to the link insert in one statement. A
///   URL another job of the site inserted meanwhile (`ON CONFLICT DO NOTHING`) returns nothing:
///   when fewer rows came back than were inserted, those rows find their id again and are
///   linked with the known ones.
macro_rules! insert_new {
    (rowid, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $room:expr) => {{
        let before: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM urls").fetch_one(&mut *$tx).await?;
        sqlx::query(concat!(
            "INSERT INTO urls (site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, last_seen_at, \
             changed_at) ",
            new_rows!(),
            " ON CONFLICT DO NOTHING"
        ))
        .bind($site_id)
        .bind($now)
        .bind($room)
        .execute(&mut *$tx)
        .await?;
        sqlx::query(
            "INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $1, id, $2 FROM urls WHERE id > $3",
        )
        .bind($sitemap_id)
        .bind($now)
        .bind(before)
        .execute(&mut *$tx)
        .await?;
    }};
    (returning, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $room:expr) => {{
        let linked = sqlx::query(concat!(
            "WITH added AS (INSERT INTO urls (site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, \
             last_seen_at, changed_at) ",
            new_rows!(),
            " ON CONFLICT DO NOTHING RETURNING id) \
             INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $4, id, $2 FROM added"
        ))
        .bind($site_id)
        .bind($now)
        .bind($room)
        .bind($sitemap_id)
        .execute(&mut *$tx)
        .await?
        .rows_affected();
        if (linked as i64) < $room {
            sqlx::query(
                "UPDATE merge_urls SET url_id = (SELECT u.id FROM urls u WHERE u.site_id = $1 \
                 AND u.loc_hash = merge_urls.loc_hash) WHERE url_id IS NULL",
            )
            .bind($site_id)
            .execute(&mut *$tx)
            .await?;
        }
    }};
}

pub(crate) use insert_new;

/// The rows of the new URLs: `$1` the site, `$2` the time, `$3` how many.
macro_rules! new_rows {
    () => {
        "SELECT $1, loc, loc_hash, lastmod, changefreq, priority, $2, $2, $2 FROM merge_urls \
         WHERE url_id IS NULL ORDER BY seq LIMIT $3"
    };
}

/// Stages older than this are discarded by any new stage: a download never runs so long (its
/// deadline is within its lease), so such a stage belongs to a dead attempt.
pub(crate) const STAGE_MAX_AGE: i64 = 24 * 3600;

/// A batch as staged: `[[loc, loc_hash hex, lastmod, changefreq, priority], ...]`, text without
/// NUL (see [`clean`](crate::sql::clean)); a priority that is not a finite number is null.
pub(crate) fn batch_json(urls: &[crate::UrlRecord]) -> String {
    use crate::sql::{clean, loc_hash};
    type Row<'a> = (
        std::borrow::Cow<'a, str>,
        String,
        Option<std::borrow::Cow<'a, str>>,
        Option<std::borrow::Cow<'a, str>>,
        Option<f64>,
    );
    let rows: Vec<Row<'_>> = urls
        .iter()
        .map(|u| {
            let loc = clean(&u.loc);
            let hash = hex::encode(loc_hash(&loc));
            (
                loc,
                hash,
                u.lastmod.as_deref().map(clean),
                u.changefreq.as_deref().map(clean),
                u.priority.filter(|p| p.is_finite()),
            )
        })
        .collect();
    serde_json::to_string(&rows).expect("strings, finite numbers and nulls always serialise")
}
