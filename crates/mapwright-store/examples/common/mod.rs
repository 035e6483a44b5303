//! What the timing examples (`console_timing`, `upsert_timing`) share: each backend in turn, and
//! the user and site they time their queries on. A folder, not `examples/common.rs`, so that
//! cargo does not take it for an example of its own.

use std::future::Future;
use std::sync::Arc;

use mapwright_store::{Actor, PgStore, Site, SqliteStore, Store};

/// What an example's run returns.
pub type Res = Result<(), Box<dyn std::error::Error>>;

/// The time the examples' rows are written at.
pub const T0: i64 = 1_700_000_000;

/// Runs `bench` on SQLite in a temporary folder, then on PostgreSQL when the first argument
/// names a database (`postgres://.../db`), each time with a user of its own (the process id in
/// the address, so that runs on one database never collide) and its site
/// `https://bench.example`, created at [`T0`].
pub async fn on_each_backend<F, Fut>(bench: F) -> Res
where
    F: Fn(Arc<dyn Store>, Actor, Site) -> Fut,
    Fut: Future<Output = Res>,
{
    let dir = tempfile::tempdir()?;
    let mut stores: Vec<Arc<dyn Store>> = vec![Arc::new(SqliteStore::open_dir(dir.path()).await?)];
    if let Some(url) = std::env::args().nth(1) {
        stores.push(Arc::new(PgStore::open(&url).await?));
    }
    for store in stores {
        let user = store.create_user(&format!("bench-{}@example.com", std::process::id()), "h", false, T0).await?;
        let actor = Actor::from(&user);
        let site = store.create_site(actor, "https://bench.example", T0).await?;
        bench(store, actor, site).await?;
    }
    Ok(())
}
