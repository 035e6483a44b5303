//! The write path of a download's URLs: compared with the sitemap's previous read while they
//! are read, what changed staged, merged at the end.
//!
//! [`Store::begin_url_stage`](crate::Store::begin_url_stage) loads the sitemap's previous URL set
//! as a compact map ([`Known`]: the URL's key, `loc_hash`, to a 64-bit hash of what the sitemap
//! said of it), from the one row of `sitemap_url_sets` its last merge wrote (migration 0015), or
//! rebuilt from the live tables when there is none. It holds at most the protocol's 50,000 URLs
//! of a sitemap (the reader stores no more), about 2 MB, whatever the site. While the body is
//! read, each URL is looked up in it: an unchanged URL is not staged at all, a new or changed one
//! is staged as a typed row (SQLite: one multi-row insert per batch into a temporary table
//! `staged_urls` of the stage's own connection, [`OwnConn`]; PostgreSQL: held on the client, in
//! memory up to 4,000 rows and then in an unnamed temporary file, `ingest/held.rs`, so nothing
//! is written to the database before the merge; the row, its hash and its `COPY` lines are
//! `ingest/rows.rs`). When the read completes, the URLs of the map it
//! did not list are the removals, and [`impl_ingest!`]'s merge brings `urls` and `sitemap_urls`
//! in line in one transaction:
//!
//! - new URLs are inserted straight from the stage (within the site's quota, in reading order)
//!   and linked without a second lookup (PostgreSQL: two `COPY`s, into `urls` with ids taken
//!   from its sequence and into `sitemap_urls`, under a savepoint: a URL the site already has
//!   rolls them back, and the held rows are then staged into `staged_urls` and merged by the
//!   statements below, as SQLite's are),
//! - changed URLs are rewritten (only what the stage holds: the merge never reads the
//!   unchanged ones),
//! - after a complete read, the links of removed URLs are deleted, their URLs marked removed
//!   when no other sitemap lists them,
//! - the roll-up counts of the sitemap and the indexes above it move by what changed,
//! - the map of this read replaces the previous one,
//! - what changed is recorded as the read's diff (`diffs.rs`).
//!
//! So a refetch of the same bytes stages nothing and writes no URL row, and one with 1 % of
//! its URLs changed stages and writes 1 %. A reader sees the previous URL set until the merge
//! commits, and the new one after: a download that dies (store error, lost connection,
//! deadline, `kill -9`) leaves stage rows only, discarded at the next attempt on the sitemap.

/// The inherent methods behind the `Store` trait's staging methods, for one backend.
///
/// `create`: the statements that make an empty temporary table `merge_urls` (loc_hash, seq,
/// kind, loc, lastmod, changefreq, priority, url_id, state) for this transaction. `resolved`:
/// what runs once each of its rows knows its URL row (an index on `url_id`, statistics for
/// PostgreSQL's planner). `new_urls`: how the URLs the merge adds are linked to the sitemap,
/// `rowid` or `returning` (see `insert_new!`). `stage`: how rows are staged, `copy` or
/// `values` (see `stage_rows!`). `pin`: what goes before `site_id` in a statement on `urls`
/// driven by ids (`+` on SQLite, whose planner, without statistics, would otherwise walk the
/// site's index instead of looking the ids up; nothing on PostgreSQL, where the condition also
/// routes a distributed table). `drop`: what removes the temporary table at the end (nothing
/// where the commit drops it). `conn`: where the stage lives, `pool` (a table every connection
/// sees) or `own` (a temporary table of the stage's own connection, see [`with_stage_conn!`]).
macro_rules! impl_ingest {
    (
        $store:ty,
        create = [$($create:literal),* $(,)?],
        resolved = [$($resolved:literal),* $(,)?],
        new_urls = $new_urls:ident,
        stage = $stage:ident,
        pin = $pin:literal,
        drop = [$($drop:literal),* $(,)?],
        conn = $conn:ident
    ) => {
        impl $store {
            // Alike on purpose: its lease check and its stage's insert bind the same sitemap and
            // worker, each to its own statement.
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
                // outlives a day: what a killed process staged is bounded. Staged rows have no
                // foreign key: they go with their stage here, and rows older than every stage
                // left (a stage whose sitemap was deleted) go too.
                let dead: Vec<i64> = sqlx::query_scalar("SELECT id FROM url_stages WHERE sitemap_id = $1 OR started_at < $2")
                    .bind(sitemap_id)
                    .bind(now.saturating_sub($crate::ingest::STAGE_MAX_AGE))
                    .fetch_all(&mut *tx)
                    .await?;
                for chunk in dead.chunks($crate::sql::CHILD_CHUNK) {
                    let mut rows = sqlx::QueryBuilder::new("DELETE FROM staged_urls WHERE stage_id IN ");
                    $crate::sql::push_id_list(&mut rows, chunk);
                    rows.build().execute(&mut *tx).await?;
                    let mut stages = sqlx::QueryBuilder::new("DELETE FROM url_stages WHERE id IN ");
                    $crate::sql::push_id_list(&mut stages, chunk);
                    stages.build().execute(&mut *tx).await?;
                }
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO url_stages (sitemap_id, worker, started_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(sitemap_id)
                .bind(worker)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM staged_urls WHERE stage_id < (SELECT MIN(id) FROM url_stages)")
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                // The previous read's set: the row its merge wrote, or the live links.
                let body: Option<Vec<u8>> = sqlx::query_scalar("SELECT body FROM sitemap_url_sets WHERE sitemap_id = $1")
                    .bind(sitemap_id)
                    .fetch_optional(&self.pool)
                    .await?;
                // A sitemap without links (a first read) has nothing to rebuild: the join below
                // is not even planned (PostgreSQL, estimating the rows from other sitemaps'
                // links, would hash the site's URLs for none).
                let set = body.as_deref().and_then($crate::ingest::Known::from_set);
                let linked = set.is_none()
                    && sqlx::query_scalar::<_, bool>("SELECT EXISTS (SELECT 1 FROM sitemap_urls WHERE sitemap_id = $1)")
                        .bind(sitemap_id)
                        .fetch_one(&self.pool)
                        .await?;
                let known = match set {
                    Some(known) => known,
                    None if !linked => $crate::ingest::Known::default(),
                    None => {
                        let rows: Vec<$crate::ingest::LiveRow> = sqlx::query_as(
                            "SELECT u.loc_hash, u.lastmod, u.changefreq, u.priority, u.removed_at IS NOT NULL \
                             FROM sitemap_urls l JOIN urls u ON u.id = l.url_id WHERE l.sitemap_id = $1 AND u.site_id = $2",
                        )
                        .bind(sitemap_id)
                        .bind(site_id)
                        .fetch_all(&self.pool)
                        .await?;
                        $crate::ingest::Known::from_rows(rows)
                    }
                };
                let own = $crate::ingest::own_conn!($conn, self);
                Ok(UrlStage { id, site_id, sitemap_id, rows: 0, known, own })
            }

            pub(crate) async fn ingest_read_key(&self, sitemap_id: i64) -> Result<Option<String>> {
                let key: Option<Option<String>> =
                    sqlx::query_scalar("SELECT read_key FROM sitemap_url_sets WHERE sitemap_id = $1")
                        .bind(sitemap_id)
                        .fetch_optional(&self.pool)
                        .await?;
                Ok(key.flatten())
            }

            pub(crate) async fn ingest_stage(&self, stage: &mut UrlStage, urls: &[UrlRecord]) -> Result<()> {
                // Rows wait in the stage until a chunk is full (the merge writes the rest), so a
                // read that changed little costs one statement, not one per batch.
                let rows = stage.known.classify(urls);
                stage.known.pending.extend(rows.into_iter().map($crate::ingest::StagedRow::into_owned));
                $crate::ingest::keep_rows!($stage, $conn, self, stage);
                Ok(())
            }

            pub(crate) async fn ingest_discard(&self, stage: &UrlStage) -> Result<()> {
                $crate::ingest::with_stage_conn!($conn, self, stage, conn => {
                    sqlx::query("DELETE FROM staged_urls WHERE stage_id = $1").bind(stage.id).execute(&mut *conn).await?;
                });
                sqlx::query("DELETE FROM url_stages WHERE id = $1").bind(stage.id).execute(&self.pool).await?;
                Ok(())
            }

            pub(crate) async fn ingest_merge(&self, worker: &str, stage: &UrlStage, merge: UrlMerge) -> Result<UrlWrite> {
                let (site_id, sitemap_id, now) = (stage.site_id, stage.sitemap_id, merge.now);
                let plan = stage.known.plan(merge.sweep);
                $crate::ingest::with_stage_conn!($conn, self, stage, conn => {
                    $crate::ingest::guard_merge!($conn, conn);
                    let mut tx = $crate::ingest::begin_merge!($conn, self, conn);
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
                    let (owner, rows): (Option<i64>, i64) = sqlx::query_as(
                        "SELECT (SELECT sitemap_id FROM url_stages WHERE id = $1), \
                         (SELECT COUNT(*) FROM staged_urls WHERE stage_id = $1)",
                    )
                    .bind(stage.id)
                    .fetch_one(&mut *tx)
                    .await?;
                    if owner != Some(sitemap_id) || rows != stage.rows {
                        return Err(Error::StageLost { sitemap_id, stage_id: stage.id });
                    }
                    // Whatever this read turns out to be, the set is no longer that of the last
                    // whole read: `complete` keys it again after a whole one.
                    sqlx::query("UPDATE sitemap_url_sets SET read_key = NULL WHERE sitemap_id = $1")
                        .bind(sitemap_id)
                        .execute(&mut *tx)
                        .await?;
                    let mut write = UrlWrite::default();
                    let mut refused = last_refused;
                    let mut fresh: Option<Vec<i64>> = None;
                    let mut before = Vec::new();
                    if merge.same_content && read_at.is_some() && last_refused == 0 {
                        // The same bytes as the last merged read: no URL row is written, the read
                        // only stamps the sitemap (the URLs' "last seen").
                        if !stage.known.cached {
                            $crate::ingest::save_set!(tx, sitemap_id, stage.known.previous_set());
                        }
                    } else {
                        // The rows still waiting in the stage (PostgreSQL: all of them, the new URLs
                        // copied straight into `urls`).
                        fresh = $crate::ingest::write_pending!($stage, tx, stage, site_id, sitemap_id, &plan, &merge);
                        (write, before) = $crate::ingest::merge_rows!(
                            tx, stage.id, site_id, sitemap_id, merge, plan, &stage.known.superseded,
                            fresh.as_ref().map(|ids| ids.len() as i64),
                            [$($create),*], [$($resolved),*], $new_urls, $pin, [$($drop),*]
                        );
                        refused = write.refused as i64;
                        if write.refused > 0 {
                            // Which URLs the quota refused is known to the database only: the next
                            // read rebuilds the set from the links.
                            sqlx::query("DELETE FROM sitemap_url_sets WHERE sitemap_id = $1").bind(sitemap_id).execute(&mut *tx).await?;
                        } else if plan.staged > 0 || !plan.gone.is_empty() || !stage.known.cached {
                            $crate::ingest::save_set!(tx, sitemap_id, plan.set);
                        }
                    }
                    // What the read changed, in this transaction: no merge, no diff.
                    write.diff = Some($crate::diffs::record_diff!(
                        tx, stage.id, site_id, sitemap_id, now, &write, &plan.gone, fresh.as_deref(), &before, read_at.is_none()
                    ));
                    sqlx::query("UPDATE sitemaps SET urls_read_at = $1, urls_refused = $2 WHERE id = $3")
                        .bind(now)
                        .bind(refused)
                        .bind(sitemap_id)
                        .execute(&mut *tx)
                        .await?;
                    // The stage's rows: on SQLite a temporary table, dropped, not deleted row by row.
                    $crate::ingest::drop_staged!($conn, tx, stage.id);
                    sqlx::query("DELETE FROM url_stages WHERE id = $1").bind(stage.id).execute(&mut *tx).await?;
                    tx.commit().await?;
                    $crate::ingest::merge_done!($conn, conn);
                    self.wal_written();
                    Ok(write)
                })
            }
        }
    };
}

/// The stage's own connection (SQLite): a connection of its own, outside the pool, opened with
/// the pool's options, whose temporary table `staged_urls` (it hides the main table of that
/// name for this connection alone) holds the stage's rows. Writing them takes no lock of the
/// database and writes nothing to its file or WAL, so staging never stands in another writer's
/// way, and the rows go with the connection (a failed or killed download leaves nothing to
/// delete). The merge runs on it, so its `INSERT ... SELECT` reads them.
pub(crate) type OwnConn = std::sync::Arc<tokio::sync::Mutex<sqlx::SqliteConnection>>;

/// Opens the stage's own connection (`own`) or none (`pool`).
macro_rules! own_conn {
    (pool, $store:expr) => {
        None
    };
    (own, $store:expr) => {{
        use sqlx::ConnectOptions as _;
        let mut conn = $store.pool.connect_options().connect().await?;
        sqlx::query(
            "CREATE TEMP TABLE staged_urls (stage_id INTEGER NOT NULL, seq INTEGER NOT NULL, kind INTEGER NOT NULL, \
             loc TEXT NOT NULL, loc_hash BLOB NOT NULL, lastmod TEXT, changefreq TEXT, priority REAL, \
             PRIMARY KEY (stage_id, seq)) WITHOUT ROWID",
        )
        .execute(&mut conn)
        .await?;
        Some(std::sync::Arc::new(tokio::sync::Mutex::new(conn)))
    }};
}

pub(crate) use own_conn;

/// Runs `$body` with `$conn` bound to a connection that sees the stage's rows: one of the pool
/// (`pool`), or the stage's own, locked (`own`; a stage without one is lost).
macro_rules! with_stage_conn {
    (pool, $store:expr, $stage:expr, $c:ident => $body:block) => {{
        #[allow(unused_mut)]
        let mut $c = $store.pool.acquire().await?;
        $body
    }};
    (own, $store:expr, $stage:expr, $c:ident => $body:block) => {{
        let own = $stage.own.clone().ok_or(Error::StageLost { sitemap_id: $stage.sitemap_id, stage_id: $stage.id })?;
        let mut $c = own.lock().await;
        $body
    }};
}

pub(crate) use with_stage_conn;

/// The merge's write transaction: a bulk one (`pool`, PostgreSQL, see `PgStore::begin_bulk`) on
/// the connection [`guard_merge!`] guards, or on the stage's connection with the write lock
/// taken at once (`own`, SQLite's `BEGIN IMMEDIATE`).
macro_rules! begin_merge {
    (pool, $store:expr, $conn:ident) => {{ sqlx::Connection::begin_with(&mut *$conn, $crate::postgres::BULK_BEGIN).await? }};
    (own, $store:expr, $conn:ident) => {{ sqlx::Connection::begin_with(&mut *$conn, "BEGIN IMMEDIATE").await? }};
}

pub(crate) use begin_merge;

/// `pool` (PostgreSQL): the merge's pooled connection is closed, not given back to the pool,
/// unless the merge reached its end ([`merge_done!`]). A merge whose caller stopped waiting (a
/// deadline, a shutdown: its future dropped) may stop inside a `COPY`, and sqlx's `PgCopyIn`,
/// dropped, sends `CopyFail` without counting the answer it will get: the connection is then
/// one answer behind the server, and the next request given it read the answer of a statement
/// it did not send (seen in `ingest::a_merge_cancelled_midway_changes_nothing_or_everything`: a
/// URL another request had just listed reported not found). `own` (SQLite): nothing.
macro_rules! guard_merge {
    (pool, $conn:ident) => {
        let mut $conn = $crate::ingest::MergeConn { conn: $conn, done: false };
    };
    (own, $conn:ident) => {};
}

pub(crate) use guard_merge;

/// The merge committed: its connection goes back to the pool (see [`guard_merge!`]).
macro_rules! merge_done {
    (pool, $conn:ident) => {
        $conn.done = true;
    };
    (own, $conn:ident) => {};
}

pub(crate) use merge_done;

/// A merge's pooled connection, closed when dropped before the merge's end (see [`guard_merge!`]).
pub(crate) struct MergeConn<DB: sqlx::Database> {
    pub(crate) conn: sqlx::pool::PoolConnection<DB>,
    pub(crate) done: bool,
}

impl<DB: sqlx::Database> std::ops::Deref for MergeConn<DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        &self.conn
    }
}

impl<DB: sqlx::Database> std::ops::DerefMut for MergeConn<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        &mut self.conn
    }
}

impl<DB: sqlx::Database> Drop for MergeConn<DB> {
    fn drop(&mut self) {
        if !self.done {
            self.conn.close_on_drop();
        }
    }
}

/// Deletes the merged stage's rows (`pool`), or drops the temporary table that holds them
/// (`own`), which writes nothing to the database.
macro_rules! drop_staged {
    (pool, $tx:ident, $stage_id:expr) => {{
        sqlx::query("DELETE FROM staged_urls WHERE stage_id = $1").bind($stage_id).execute(&mut *$tx).await?;
    }};
    (own, $tx:ident, $stage_id:expr) => {{
        sqlx::query("DROP TABLE temp.staged_urls").execute(&mut *$tx).await?;
    }};
}

pub(crate) use drop_staged;

/// Writes a sitemap's URL set (the bytes of [`Known::encode`]) in the caller's transaction.
macro_rules! save_set {
    ($tx:ident, $sitemap_id:expr, $set:expr) => {{
        let (entries, body): (i64, Vec<u8>) = $set;
        sqlx::query(
            "INSERT INTO sitemap_url_sets (sitemap_id, entries, body) VALUES ($1, $2, $3) \
             ON CONFLICT (sitemap_id) DO UPDATE SET entries = excluded.entries, body = excluded.body",
        )
        .bind($sitemap_id)
        .bind(entries)
        .bind(body)
        .execute(&mut *$tx)
        .await?;
    }};
}

pub(crate) use save_set;

/// Keeps the classified rows waiting in `$stage.known.pending`: `values` (SQLite) writes each full
/// chunk to the stage's temporary table; `held` (PostgreSQL) writes nothing to the database and
/// spills the rows to the stage's file past [`held::STAGE_MEMORY`].
macro_rules! keep_rows {
    (values, $conn:ident, $store:expr, $stage:ident) => {{
        while $stage.known.pending.len() >= $crate::ingest::STAGE_CHUNK {
            let chunk: Vec<_> = $stage.known.pending.drain(..$crate::ingest::STAGE_CHUNK).collect();
            $crate::ingest::with_stage_conn!($conn, $store, $stage, conn => {
                $crate::ingest::stage_rows!(values, &mut *conn, $stage.id, &chunk);
            });
            $stage.rows += chunk.len() as i64;
        }
    }};
    (held, $conn:ident, $store:expr, $stage:ident) => {{
        if $stage.known.pending.len() >= $crate::ingest::held::STAGE_MEMORY {
            let known = &mut $stage.known;
            $crate::ingest::held::Spill::append(&mut known.spill, &known.pending).map_err(Error::Spill)?;
            known.pending.clear();
        }
    }};
}

pub(crate) use keep_rows;

/// Writes the rows the stage still holds, in the merge's transaction; evaluates to the ids of
/// the new URL rows copied straight into `urls` (`held`), or `None` when the merge's statements
/// insert them from `staged_urls`.
///
/// - `values` (SQLite): the last chunk goes to the stage's temporary table.
/// - `held` (PostgreSQL): the new URLs (kind 0) are copied into `urls` and linked with two
///   `COPY`s (ids taken from the sequence first) when the quota lets them all in; the other rows
///   go to `staged_urls` (`COPY`) for the merge's statements. A URL the site already has (another
///   sitemap lists it, or another job of the site inserted it meanwhile) breaks the copy on the
///   unique key `(site_id, loc_hash)`: it is rolled back to a savepoint and every row is staged,
///   to be merged as before (`INSERT ... ON CONFLICT`, then row by row).
macro_rules! write_pending {
    (values, $tx:ident, $stage:expr, $site_id:expr, $sitemap_id:expr, $plan:expr, $merge:expr) => {{
        for chunk in $stage.known.pending.chunks($crate::ingest::STAGE_CHUNK) {
            $crate::ingest::stage_rows!(values, &mut *$tx, $stage.id, chunk);
        }
        None
    }};
    (held, $tx:ident, $stage:expr, $site_id:expr, $sitemap_id:expr, $plan:expr, $merge:expr) => {{
        let stage: &UrlStage = $stage;
        let (plan, merge): (&$crate::ingest::Plan, &UrlMerge) = ($plan, $merge);
        let superseded: std::collections::HashSet<i64> = stage.known.superseded.iter().copied().collect();
        let mut all_fit = merge.quota == i64::MAX;
        if !all_fit && plan.new > 0 {
            let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1")
                .bind($site_id)
                .fetch_one(&mut *$tx)
                .await?;
            all_fit = $crate::sql::quota_room(merge.quota, rows, plan.new) == plan.new;
        }
        let mut fresh = None;
        if all_fit && plan.new > 0 {
            sqlx::query("SAVEPOINT fresh_urls").execute(&mut *$tx).await?;
            match $crate::ingest::held::copy_fresh(
                &mut *$tx,
                stage,
                &superseded,
                $site_id,
                $sitemap_id,
                merge.now,
                plan.new,
            )
            .await
            {
                Ok(ids) => {
                    sqlx::query("RELEASE SAVEPOINT fresh_urls").execute(&mut *$tx).await?;
                    fresh = Some(ids);
                }
                Err(e) if $crate::ingest::held::is_unique_violation(&e) => {
                    sqlx::query("ROLLBACK TO SAVEPOINT fresh_urls").execute(&mut *$tx).await?;
                }
                Err(e) => return Err(e),
            }
        }
        let skip_new = fresh.is_some();
        let mut rows = $crate::ingest::held::HeldRows::new(stage.known.spill.as_ref(), &stage.known.pending)
            .map_err(Error::Spill)?;
        let mut chunk = Vec::with_capacity($crate::ingest::STAGE_CHUNK);
        loop {
            let row = rows.next_row().map_err(Error::Spill)?;
            let last = row.is_none();
            if let Some(row) = row {
                if !(skip_new && row.kind == 0) && !superseded.contains(&row.seq) {
                    chunk.push(row);
                }
            }
            if chunk.len() >= $crate::ingest::STAGE_CHUNK || (last && !chunk.is_empty()) {
                $crate::ingest::stage_rows!(copy, &mut *$tx, stage.id, &chunk);
                chunk.clear();
            }
            if last {
                break;
            }
        }
        fresh
    }};
}

pub(crate) use write_pending;

/// Stages rows: `copy` (PostgreSQL: one `COPY ... FROM STDIN` in text format) or `values`
/// (one multi-row `INSERT`, [`STAGE_CHUNK`] rows of 8 parameters, under SQLite's 32,766).
macro_rules! stage_rows {
    (copy, $conn:expr, $stage_id:expr, $rows:expr) => {{
        let mut text = String::with_capacity($rows.len() * 160);
        for row in $rows {
            $crate::ingest::copy_line(&mut text, $stage_id, row);
        }
        let conn: &mut sqlx::PgConnection = $conn;
        let mut copy = conn
            .copy_in_raw(
                "COPY staged_urls (stage_id, seq, kind, loc, loc_hash, lastmod, changefreq, priority) FROM STDIN",
            )
            .await?;
        // A copy left open breaks its connection for the next user: aborted on failure.
        let sent = copy.send(text.into_bytes()).await.map(|_| ());
        match sent {
            Ok(()) => {
                copy.finish().await?;
            }
            Err(e) => {
                let _ = copy.abort("staging failed").await;
                return Err(e.into());
            }
        }
    }};
    (values, $conn:expr, $stage_id:expr, $rows:expr) => {{
        let mut insert = sqlx::QueryBuilder::new(
            "INSERT INTO staged_urls (stage_id, seq, kind, loc, loc_hash, lastmod, changefreq, priority) ",
        );
        insert.push_values($rows, |mut b, row: &$crate::ingest::StagedRow<'_>| {
            b.push_bind($stage_id)
                .push_bind(row.seq)
                .push_bind(i64::from(row.kind))
                .push_bind(row.loc.as_ref())
                .push_bind(row.loc_hash.as_slice())
                .push_bind(row.lastmod.as_deref())
                .push_bind(row.changefreq.as_deref())
                .push_bind(row.priority);
        });
        let conn: &mut sqlx::SqliteConnection = $conn;
        insert.build().execute(conn).await?;
    }};
}

pub(crate) use stage_rows;

/// The set-based merge of a stage into the live tables, in the caller's transaction `$tx`;
/// evaluates to the [`UrlWrite`](crate::UrlWrite) and what the first changed URLs said before
/// (for the diff). The same SQL on both backends. New URLs go
/// straight from `staged_urls` into `urls` when the quota lets them all in; changed and removed
/// URLs (and new ones met by a URL already in the site, or cut by the quota) go through the
/// temporary table `merge_urls`, where each statement is driven by its rows (a correlated
/// subquery or an `IN` on ids), never by the site's URLs: a merge costs what changed, whatever
/// the size of the site.
macro_rules! merge_rows {
    (
        $tx:ident, $stage_id:expr, $site_id:expr, $sitemap_id:expr, $merge:expr, $plan:expr, $superseded:expr,
        $fresh:expr, [$($create:literal),*], [$($resolved:literal),*], $new_urls:ident, $pin:literal, [$($drop:literal),*]
    ) => {{
        let (stage_id, site_id, sitemap_id, merge): (i64, i64, i64, UrlMerge) = ($stage_id, $site_id, $sitemap_id, $merge);
        let plan: &$crate::ingest::Plan = &$plan;
        let superseded: &[i64] = $superseded;
        // New URL rows the held stage copied in already (PostgreSQL), all of the plan's new ones.
        let copied: Option<i64> = $fresh;
        let now = merge.now;
        // Rows a later entry of the same URL replaced: the last entry of a URL counts.
        for chunk in superseded.chunks($crate::sql::CHILD_CHUNK) {
            let mut delete = sqlx::QueryBuilder::new("DELETE FROM staged_urls WHERE stage_id = ");
            delete.push_bind(stage_id).push(" AND seq IN ");
            $crate::sql::push_id_list(&mut delete, chunk);
            delete.build().execute(&mut *$tx).await?;
        }
        // The site's rows, counted only when a quota may bind.
        let mut site_rows: Option<i64> = None;
        if copied.is_none() && plan.new > 0 && merge.quota < i64::MAX {
            site_rows = Some(
                sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1").bind(site_id).fetch_one(&mut *$tx).await?,
            );
        }
        let all_fit = site_rows.is_none_or(|rows| $crate::sql::quota_room(merge.quota, rows, plan.new) == plan.new);
        // Fresh URL rows inserted (listed by no other sitemap), links added to known URLs.
        let (mut fresh_rows, mut known_linked, mut removed) = (0_i64, 0_i64, 0_i64);
        if let Some(copied) = copied {
            fresh_rows = copied;
        } else if all_fit && plan.new > 0 {
            fresh_rows =
                $crate::ingest::insert_with_links!($new_urls, staged_new_rows, $tx, site_id, sitemap_id, now, stage_id);
        }
        // New URLs not inserted: a URL the site had already (listed by another sitemap, or
        // removed), or the quota: they are merged row by row below.
        let slow_new = plan.new > 0 && fresh_rows < plan.new;
        let mut refused = 0_i64;
        let mut before: Vec<$crate::diffs::Before> = Vec::new();
        if plan.changed_rows > 0 || !plan.gone.is_empty() || slow_new {
            $(sqlx::query($create).execute(&mut *$tx).await?;)*
            sqlx::query(
                "INSERT INTO merge_urls (loc_hash, seq, kind, loc, lastmod, changefreq, priority) \
                 SELECT loc_hash, seq, kind, loc, lastmod, changefreq, priority FROM staged_urls \
                 WHERE stage_id = $1 AND kind >= $2",
            )
            .bind(stage_id)
            .bind(if slow_new { 0_i64 } else { 1_i64 })
            .execute(&mut *$tx)
            .await?;
            for (n, chunk) in plan.gone.chunks($crate::ingest::STAGE_CHUNK / 4).enumerate() {
                let mut gone = sqlx::QueryBuilder::new("INSERT INTO merge_urls (loc_hash, seq, kind, loc) ");
                gone.push_values(chunk.iter().enumerate(), |mut b, (i, hash): (usize, &[u8; 16])| {
                    b.push_bind(hash.as_slice())
                        .push_bind(-1 - (n * $crate::ingest::STAGE_CHUNK / 4 + i) as i64)
                        .push_bind(2_i64)
                        .push_bind("");
                });
                gone.build().execute(&mut *$tx).await?;
            }
            // Each row's URL, and what changed: 2 its lastmod (or it comes back from removal:
            // `changed_at` moves), 1 only its changefreq or priority, 0 nothing.
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
            if plan.changed_rows > 0 {
                // What the changed URLs said before this read and what it says, for the diff's
                // "old -> new": the first rows of the cap in reading order, before the rewrite.
                before = sqlx::query_as(
                    "SELECT m.url_id, u.lastmod, u.changefreq, u.priority, m.lastmod, m.changefreq, m.priority \
                     FROM merge_urls m JOIN urls u ON u.id = m.url_id \
                     WHERE m.kind = 1 ORDER BY m.seq LIMIT $1",
                )
                .bind($crate::diffs::MAX_DIFF_URLS)
                .fetch_all(&mut *$tx)
                .await?;
            }
            // Known URLs are rewritten only when what the sitemap says of them changed.
            sqlx::query(concat!(
                "UPDATE urls SET (lastmod, changefreq, priority, changed_at) = (SELECT m.lastmod, m.changefreq, \
                 m.priority, CASE WHEN m.state = 2 THEN $1 ELSE urls.changed_at END FROM merge_urls m \
                 WHERE m.url_id = urls.id), last_seen_at = $1 \
                 WHERE id IN (SELECT url_id FROM merge_urls WHERE state > 0 AND kind < 2) AND ",
                $pin,
                "site_id = $2"
            ))
            .bind(now)
            .bind(site_id)
            .execute(&mut *$tx)
            .await?;
            // URLs back from removal (state 2), apart: `removed_at` in the statement above would
            // rewrite the entries of the indexes it conditions (SQLite maintains an index
            // whenever a column it names is set, even to the same value), for every changed URL.
            sqlx::query(concat!(
                "UPDATE urls SET removed_at = NULL WHERE id IN (SELECT url_id FROM merge_urls WHERE state = 2 \
                 AND kind < 2) AND removed_at IS NOT NULL AND ",
                $pin,
                "site_id = $1"
            ))
            .bind(site_id)
            .execute(&mut *$tx)
            .await?;
            if !plan.gone.is_empty() {
                // What the sitemap no longer lists: its URL is removed unless another sitemap
                // lists it, marked before the links go.
                sqlx::query(concat!(
                    "UPDATE urls SET removed_at = $1 WHERE id IN (SELECT url_id FROM merge_urls WHERE kind = 2) \
                     AND removed_at IS NULL AND ",
                    $pin,
                    "site_id = $3 AND NOT EXISTS (SELECT 1 FROM sitemap_urls o WHERE o.url_id = urls.id \
                     AND o.sitemap_id <> $2)"
                ))
                .bind(now)
                .bind(sitemap_id)
                .bind(site_id)
                .execute(&mut *$tx)
                .await?;
                removed = sqlx::query(
                    "DELETE FROM sitemap_urls WHERE sitemap_id = $1 \
                     AND url_id IN (SELECT url_id FROM merge_urls WHERE kind = 2)",
                )
                .bind(sitemap_id)
                .execute(&mut *$tx)
                .await?
                .rows_affected() as i64;
            }
            if slow_new {
                let (fresh,): (i64,) =
                    sqlx::query_as("SELECT COUNT(*) FROM merge_urls WHERE kind < 2 AND url_id IS NULL")
                        .fetch_one(&mut *$tx)
                        .await?;
                if fresh > 0 {
                    let room = match site_rows {
                        None => fresh,
                        Some(_) => {
                            let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1")
                                .bind(site_id)
                                .fetch_one(&mut *$tx)
                                .await?;
                            $crate::sql::quota_room(merge.quota, rows, fresh)
                        }
                    };
                    refused = fresh - room;
                    if room > 0 {
                        fresh_rows += $crate::ingest::insert_new!($new_urls, $tx, site_id, sitemap_id, now, room);
                    }
                }
            }
            // Links of known URLs this sitemap did not list before.
            known_linked = sqlx::query(
                "INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $1, m.url_id, $2 FROM merge_urls m \
                 WHERE m.url_id IS NOT NULL AND m.kind < 2 \
                 AND NOT EXISTS (SELECT 1 FROM sitemap_urls l WHERE l.sitemap_id = $1 AND l.url_id = m.url_id)",
            )
            .bind(sitemap_id)
            .bind(now)
            .execute(&mut *$tx)
            .await?
            .rows_affected() as i64;
            $(sqlx::query($drop).execute(&mut *$tx).await?;)*
        }
        if merge.sweep {
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
        // The roll-ups move by what changed: a fresh URL row is listed by no other sitemap, so
        // it adds one to every index above; a link to a URL the site had, or a removed one, may
        // be another child's too, and then the indexes above are recounted.
        if known_linked > 0 || removed > 0 {
            $crate::ingest::lock_chain!($tx, sitemap_id);
            refresh_rollups!($tx, sitemap_id);
        } else if fresh_rows > 0 {
            $crate::ingest::add_to_chain!($tx, sitemap_id, fresh_rows);
        }
        let write = UrlWrite {
            written: (plan.distinct - refused).max(0) as u64,
            refused: refused as u64,
            added: (fresh_rows + known_linked) as u64,
            changed: plan.changed as u64,
            removed: removed as u64,
            diff: None,
        };
        (write, before)
    }};
}

pub(crate) use merge_rows;

/// Locks the rows of a sitemap and the indexes above it (bottom up, the order every writer of
/// roll-ups takes), so that a recount sees every merge committed before it and none commits a
/// delta under it.
macro_rules! lock_chain {
    ($tx:ident, $sitemap_id:expr) => {{
        let mut next = Some($sitemap_id);
        let mut depth = 0;
        while let Some(id) = next.take() {
            depth += 1;
            if depth > $crate::sitemaps::MAX_ROLLUP_DEPTH {
                break;
            }
            let parent: Option<Option<i64>> =
                sqlx::query_scalar("UPDATE sitemaps SET rollup_urls = rollup_urls WHERE id = $1 RETURNING parent_id")
                    .bind(id)
                    .fetch_optional(&mut *$tx)
                    .await?;
            next = parent.flatten().filter(|p| *p != id);
        }
    }};
}

pub(crate) use lock_chain;

/// Adds `$n` to the URL roll-up of a sitemap and of every index above it.
macro_rules! add_to_chain {
    ($tx:ident, $sitemap_id:expr, $n:expr) => {{
        let mut next = Some($sitemap_id);
        let mut depth = 0;
        while let Some(id) = next.take() {
            depth += 1;
            if depth > $crate::sitemaps::MAX_ROLLUP_DEPTH {
                break;
            }
            let parent: Option<Option<i64>> = sqlx::query_scalar(
                "UPDATE sitemaps SET rollup_urls = rollup_urls + $1 WHERE id = $2 AND removed_at IS NULL RETURNING parent_id",
            )
            .bind($n)
            .bind(id)
            .fetch_optional(&mut *$tx)
            .await?;
            next = parent.flatten().filter(|p| *p != id);
        }
    }};
}

pub(crate) use add_to_chain;

/// The insert of new URL rows and of their links to the sitemap, without looking each one up:
/// `$rows` names the macro of the rows' `SELECT` (`$1` the site, `$2` the time, `$3` the given
/// `$third` value: [`staged_new_rows!`], a stage's new URLs in reading order, or [`new_rows!`]);
/// evaluates to the rows inserted (a URL the site already holds is skipped by `ON CONFLICT` and
/// merged afterwards):
///
/// - `rowid` (SQLite): the merge holds the database's one write lock, so the rows it inserts are
///   exactly those with an id above the largest before it (SQLite gives a new row the largest
///   rowid plus one): their links are one range scan.
/// - `returning` (PostgreSQL): the insert returns its ids to the link insert in one statement.
macro_rules! insert_with_links {
    (rowid, $rows:ident, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $third:expr) => {{
        let before: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM urls").fetch_one(&mut *$tx).await?;
        let inserted = sqlx::query(concat!(
            "INSERT INTO urls (site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, last_seen_at, \
             changed_at) ",
            $rows!(),
            " ON CONFLICT DO NOTHING"
        ))
        .bind($site_id)
        .bind($now)
        .bind($third)
        .execute(&mut *$tx)
        .await?
        .rows_affected() as i64;
        // The rowid range alone (SQLite only: it names no site, which SQLite would take for
        // a walk of the site's index).
        sqlx::query(
            "INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $1, id, $2 FROM urls WHERE id > $3",
        )
        .bind($sitemap_id)
        .bind($now)
        .bind(before)
        .execute(&mut *$tx)
        .await?;
        inserted
    }};
    (returning, $rows:ident, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $third:expr) => {{
        sqlx::query(concat!(
            "WITH added AS (INSERT INTO urls (site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, \
             last_seen_at, changed_at) ",
            $rows!(),
            " ON CONFLICT DO NOTHING RETURNING id) \
             INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) SELECT $4, id, $2 FROM added"
        ))
        .bind($site_id)
        .bind($now)
        .bind($third)
        .bind($sitemap_id)
        .execute(&mut *$tx)
        .await?
        .rows_affected() as i64
    }};
}

pub(crate) use insert_with_links;

/// The staged new URLs as rows of `urls`: `$1` the site, `$2` the time, `$3` the stage.
macro_rules! staged_new_rows {
    () => {
        "SELECT $1, loc, loc_hash, lastmod, changefreq, priority, $2, $2, $2 FROM staged_urls \
         WHERE stage_id = $3 AND kind = 0 ORDER BY seq"
    };
}

/// The insert of the new URLs of `merge_urls` (`url_id IS NULL`, the first `$room` in reading
/// order) and of their links to the sitemap ([`insert_with_links!`]); evaluates to the rows
/// inserted. On PostgreSQL a URL another job of the site inserted meanwhile (`ON CONFLICT DO
/// NOTHING`) returns nothing: when fewer rows came back than were inserted, those rows find
/// their id again and are linked with the known ones.
macro_rules! insert_new {
    (rowid, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $room:expr) => {{ $crate::ingest::insert_with_links!(rowid, new_rows, $tx, $site_id, $sitemap_id, $now, $room) }};
    (returning, $tx:ident, $site_id:expr, $sitemap_id:expr, $now:expr, $room:expr) => {{
        let linked = $crate::ingest::insert_with_links!(returning, new_rows, $tx, $site_id, $sitemap_id, $now, $room);
        if linked < $room {
            sqlx::query(
                "UPDATE merge_urls SET url_id = (SELECT u.id FROM urls u WHERE u.site_id = $1 \
                 AND u.loc_hash = merge_urls.loc_hash) WHERE url_id IS NULL",
            )
            .bind($site_id)
            .execute(&mut *$tx)
            .await?;
        }
        linked
    }};
}

pub(crate) use insert_new;

/// The rows of the new URLs of `merge_urls`: `$1` the site, `$2` the time, `$3` how many.
macro_rules! new_rows {
    () => {
        "SELECT $1, loc, loc_hash, lastmod, changefreq, priority, $2, $2, $2 FROM merge_urls \
         WHERE url_id IS NULL AND kind < 2 ORDER BY seq LIMIT $3"
    };
}

/// Stages older than this are discarded by any new stage: a download never runs so long (its
/// deadline is within its lease), so such a stage belongs to a dead attempt.
pub(crate) const STAGE_MAX_AGE: i64 = 24 * 3600;

/// Rows per staging statement: 8 parameters a row stays under SQLite's 32,766.
pub(crate) const STAGE_CHUNK: usize = 2_000;

pub(crate) use known::{Known, LiveRow, Plan};
#[cfg(test)]
pub(crate) use rows::content_hash_streamed;
pub(crate) use rows::{StagedRow, content_hash, copy_line, copy_url_line};

pub(crate) mod held;
mod known;
mod rows;
#[cfg(test)]
mod tests;
