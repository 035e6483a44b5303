//! Runs one test body against every backend: SQLite in a temporary directory, and PostgreSQL
//! in a database created for the test and dropped afterwards (even when the test fails).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mapwright_store::{Actor, PgStore, SqliteStore, Store};
use sqlx::Connection;

/// The server the machine runs; `MAPWRIGHT_TEST_PG` overrides it.
fn admin_url() -> String {
    std::env::var("MAPWRIGHT_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A PostgreSQL database that lives as long as this value.
pub struct PgDatabase {
    name: String,
    /// The URL of the new database.
    pub url: String,
}

impl PgDatabase {
    /// Creates `mapwright_test_<pid>_<n>_<random>`; `None` when PostgreSQL is unreachable
    /// (a failure under CI=true).
    pub async fn create() -> Option<PgDatabase> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let admin = admin_url();
        let mut conn = match sqlx::PgConnection::connect(&admin).await {
            Ok(conn) => conn,
            Err(e) => {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "PostgreSQL at {admin} is unreachable under CI=true: {e}"
                );
                eprintln!("note: PostgreSQL at {admin} is unreachable ({e}); testing SQLite only");
                return None;
            }
        };
        let name = format!(
            "mapwright_test_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            &mapwright_store::secret::new_verification_token()[..8]
        );
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("CREATE DATABASE");
        let base = admin.rsplit_once('/').map(|(b, _)| b.to_owned()).unwrap_or(admin.clone());
        Some(PgDatabase { url: format!("{base}/{name}"), name })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, maybe while unwinding: use a thread with a
        // runtime of its own. WITH (FORCE) ends connections a failed test left open.
        let name = self.name.clone();
        let admin = admin_url();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

/// Runs `body` on a fresh SQLite store, then on a fresh PostgreSQL store.
pub async fn each_backend<F, Fut>(body: F)
where
    F: Fn(Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let sqlite: Arc<dyn Store> = Arc::new(SqliteStore::open_dir(dir.path()).await.expect("open SQLite"));
    body(sqlite.clone()).await;
    sqlite.close().await;

    if let Some(db) = PgDatabase::create().await {
        let pg: Arc<dyn Store> = Arc::new(PgStore::open(&db.url).await.expect("open PostgreSQL"));
        body(pg.clone()).await;
        pg.close().await;
    }
}

/// A fixed clock: tests pass times explicitly.
pub const T0: i64 = 1_700_000_000;

/// Creates a user (cheap stand-in hash: argon2 is tested in the unit tests).
pub async fn user(store: &dyn Store, email: &str, admin: bool) -> Actor {
    let user = store.create_user(email, "$argon2id$test", admin, T0).await.unwrap();
    Actor::from(&user)
}

/// Creates a verified site for the actor.
pub async fn verified_site(store: &dyn Store, actor: Actor, origin: &str) -> i64 {
    let site = store.create_site(actor, origin, T0).await.unwrap();
    store.record_verification(site.id, true, T0).await.unwrap();
    site.id
}

/// Runs `body` on two stores opened at once on one database, as two server processes would
/// (two pools, two sets of connections): SQLite on one file, then PostgreSQL.
pub async fn each_backend_pair<F, Fut>(body: F)
where
    F: Fn(Arc<dyn Store>, Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = tokio::join!(SqliteStore::open_dir(dir.path()), SqliteStore::open_dir(dir.path()));
    body(Arc::new(a.expect("open SQLite")), Arc::new(b.expect("open SQLite twice"))).await;

    if let Some(db) = PgDatabase::create().await {
        // Both migrate at once: the migrator's advisory lock lets one apply, the other wait.
        let (a, b) = tokio::join!(PgStore::open(&db.url), PgStore::open(&db.url));
        let (a, b) = (a.expect("open PostgreSQL"), b.expect("open PostgreSQL twice"));
        body(Arc::new(a.clone()), Arc::new(b.clone())).await;
        Store::close(&a).await;
        Store::close(&b).await;
    }
}
