//! The PostgreSQL backend, for deployments where several server processes share one database.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use crate::error::conflict;
use crate::model::*;
use crate::secret;
use crate::sql::{CHILD_CHUNK, Pacer, URL_CHUNK, clean, found, like_escape, loc_hash};
use crate::{Error, Result, Store};

/// How long an operation waits for a pooled connection (or a new one) before failing with
/// an error for which [`crate::Error::is_unavailable`] holds.
pub const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// The `BEGIN` of a bulk transaction (see [`PgStore::begin_bulk`]), one round trip.
pub(crate) const BULK_BEGIN: &str = "BEGIN; SET LOCAL plan_cache_mode = auto";

/// A store in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to a `postgres://` URL and migrates the database.
    ///
    /// Several processes may open the same database at once: sqlx's migrator takes an
    /// advisory lock, so only one applies a migration.
    pub async fn open(url: &str) -> Result<Self> {
        // A request waits at most a few seconds for a connection: while the database is down
        // the service answers 503 with Retry-After quickly rather than hanging for sqlx's
        // default 30 s.
        //
        // Every statement is planned for its parameters (`plan_cache_mode`): sites differ by
        // orders of magnitude (ten URLs or a million), and the generic plan PostgreSQL would
        // otherwise settle on after five runs of a prepared statement is the wrong one for one
        // of them (the URL search read 100,000 rows instead of its trigram index's eleven).
        let options = PgConnectOptions::from_str(url)?.options([("plan_cache_mode", "force_custom_plan")]);
        let pool =
            PgPoolOptions::new().max_connections(16).acquire_timeout(ACQUIRE_TIMEOUT).connect_with(options).await?;
        let store = PgStore { pool };
        crate::Store::migrate(&store).await?;
        Ok(store)
    }

    /// Every statement of a transaction runs under READ COMMITTED; the lease query's
    /// `FOR UPDATE SKIP LOCKED` is what keeps two leasers apart.
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }

    /// A write transaction that moves many rows under foreign keys (a merge's copies, a batch of
    /// URLs, checks or index children, deletes that cascade), planned the default way
    /// (`plan_cache_mode = auto` for this transaction alone). The connections plan every
    /// statement for its parameters (see [`PgStore::open`]), and that applies to the statements
    /// PostgreSQL runs for each row a foreign key checks or a cascade deletes: planned again for
    /// every row, they made `COPY urls` and `COPY sitemap_urls` take about twice as long as the
    /// same rows copied under the default (bench/serve/RESULTS.md). These transactions' own
    /// statements are driven by ids, keys and the stage's rows, so a generic plan is the same
    /// plan. One round trip: the setting goes with the `BEGIN`.
    async fn begin_bulk(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin_with(BULK_BEGIN).await?)
    }

    /// The health probe's write is the test of room on PostgreSQL: the server's disk is not
    /// this process's to look at.
    async fn room(&self) -> Result<()> {
        Ok(())
    }

    /// `NOTIFY` on the wake-up channel: delivered to every listening connection when the
    /// statement commits (at once: it runs alone).
    pub(crate) async fn notify_due_now(&self) -> Result<()> {
        sqlx::query("SELECT pg_notify($1, '')").bind(crate::WAKE_CHANNEL).execute(&self.pool).await?;
        Ok(())
    }

    /// A listener on its own pooled connection.
    pub(crate) async fn listen_due(&self) -> Result<Option<crate::DueListener>> {
        Ok(Some(crate::DueListener::listen(&self.pool).await?))
    }

    /// Nothing to wake: PostgreSQL checkpoints by itself, off the writers' path.
    fn wal_written(&self) {}

    /// Nothing more than the pool to close.
    async fn close_more(&self) {}

    /// Row locks leave other writers alone: long writes never pause (see [`Pacer`]).
    fn pacer(&self) -> Pacer {
        Pacer::new(false)
    }
}

impl_check_runs!(PgStore);

impl_store!(
    PgStore,
    backend = "postgres",
    migrations = POSTGRES,
    lock = "FOR UPDATE OF sm SKIP LOCKED",
    // The expression of the trigram index of migration 0010 (the URL search uses it).
    loc_lower = "LOWER(u.loc)"
);

impl_ingest!(
    PgStore,
    // Dropped at the commit (or the rollback): nothing is left in the pooled session.
    create = ["CREATE TEMP TABLE merge_urls (loc_hash BYTEA NOT NULL, seq BIGINT NOT NULL, kind INTEGER NOT NULL, \
         loc TEXT NOT NULL, lastmod TEXT, changefreq TEXT, priority DOUBLE PRECISION, url_id BIGINT, state INTEGER) \
         ON COMMIT DROP",],
    // A temporary table has no statistics until analysed: without them the planner takes it
    // for a small table and joins it to the site's URLs by nested loops.
    resolved = ["CREATE INDEX ON merge_urls (url_id)", "ANALYZE merge_urls"],
    new_urls = returning,
    stage = held,
    pin = "",
    drop = [],
    conn = pool
);

#[cfg(all(test, feature = "test-support"))]
mod tests {
    use super::*;

    async fn mode(conn: &mut sqlx::PgConnection) -> String {
        sqlx::query_scalar("SHOW plan_cache_mode").fetch_one(conn).await.expect("SHOW")
    }

    /// A bulk transaction plans the default way, and only itself: the setting is `LOCAL`, so the
    /// connection goes back to the pool planning per parameters for the pages' reads, whether
    /// the transaction committed or rolled back.
    #[tokio::test]
    async fn bulk_transactions_plan_the_default_way_and_only_themselves() {
        let Some(db) = crate::testing::PgDatabase::create("bulk_plans").await else { return };
        let store = PgStore::open(&db.url).await.expect("open");
        let mut write = store.begin_write().await.unwrap();
        assert_eq!(mode(&mut write).await, "force_custom_plan");
        write.rollback().await.unwrap();
        for commit in [true, false] {
            let mut bulk = store.begin_bulk().await.unwrap();
            assert_eq!(mode(&mut bulk).await, "auto");
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *bulk).await.unwrap();
            if commit {
                bulk.commit().await.unwrap()
            } else {
                bulk.rollback().await.unwrap()
            }
            // That connection, once the pool has it back (it is returned by a task of its own),
            // checked out with every other the pool holds.
            for _ in 0..200 {
                if store.pool.num_idle() == store.pool.size() as usize {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            let mut held = Vec::new();
            for _ in 0..store.pool.size() {
                held.push(store.pool.acquire().await.unwrap());
            }
            let mut seen = false;
            for conn in &mut held {
                let this: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut **conn).await.unwrap();
                seen |= this == pid;
                assert_eq!(mode(conn).await, "force_custom_plan", "after a bulk transaction (commit: {commit})");
            }
            assert!(seen, "the bulk transaction's connection is back in the pool (commit: {commit})");
        }
        store.pool.close().await;
    }
}
