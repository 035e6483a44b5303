//! Runs one test body against every backend: SQLite in a temporary directory, and PostgreSQL
//! in a database created for the test and dropped afterwards (even when the test fails).

use std::future::Future;
use std::sync::Arc;

use mapwright_store::testing::PgDatabase;
use mapwright_store::{Actor, PgStore, SqliteStore, Store};

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

    if let Some(db) = PgDatabase::create("mapwright_test").await {
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

    if let Some(db) = PgDatabase::create("mapwright_test").await {
        // Both migrate at once: the migrator's advisory lock lets one apply, the other wait.
        let (a, b) = tokio::join!(PgStore::open(&db.url), PgStore::open(&db.url));
        let (a, b) = (a.expect("open PostgreSQL"), b.expect("open PostgreSQL twice"));
        body(Arc::new(a.clone()), Arc::new(b.clone())).await;
        Store::close(&a).await;
        Store::close(&b).await;
    }
}

/// Runs `$body!(&store, &pool)` on a fresh SQLite store, then on a fresh PostgreSQL store, each
/// with a raw pool of its own on the same database, for what the `Store` trait has no method for
/// (rows written as an older version left them, a column read directly). A macro: the two
/// pools' types differ, and so do the statements a body runs on them.
macro_rules! each_backend_with_pool {
    ($body:ident) => {{
        let dir = tempfile::tempdir().unwrap();
        let store = mapwright_store::SqliteStore::open_dir(dir.path()).await.unwrap();
        let url = format!("sqlite://{}", dir.path().join("mapwright.db").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        $body!(&store, &pool);
        pool.close().await;
        mapwright_store::Store::close(&store).await;

        if let Some(db) = mapwright_store::testing::PgDatabase::create("mapwright_test").await {
            let store = mapwright_store::PgStore::open(&db.url).await.unwrap();
            let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
            $body!(&store, &pool);
            pool.close().await;
            mapwright_store::Store::close(&store).await;
        }
    }};
}

pub(crate) use each_backend_with_pool;
