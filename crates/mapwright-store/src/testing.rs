//! Test support for the crates that test the store: a PostgreSQL database per test, created on
//! the machine's server and dropped afterwards, even when the test fails; and every URL row of
//! a site, which the store's tests and the CLI's `serve` tests compare after a read.

use crate::secret::new_verification_token;
use crate::{Actor, Store, UrlQuery, UrlRow};
use sqlx::Connection;
use std::sync::atomic::{AtomicU32, Ordering};

/// The server the machine runs (trust auth); `MAPWRIGHT_TEST_PG` overrides it.
fn admin_url() -> String {
    std::env::var("MAPWRIGHT_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A PostgreSQL database that lives as long as this value (dropped `WITH (FORCE)`).
pub struct PgDatabase {
    name: String,
    /// The URL of the new database.
    pub url: String,
}

impl PgDatabase {
    /// Creates `<prefix>_<pid>_<n>_<random>`; `None` when PostgreSQL is unreachable, which
    /// panics under `CI=true` so that a CI run without PostgreSQL fails.
    pub async fn create(prefix: &str) -> Option<PgDatabase> {
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
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("{prefix}_{}_{n}_{}", std::process::id(), &new_verification_token()[..8]);
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
        let (name, admin) = (self.name.clone(), admin_url());
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

/// Every URL row of the actor's site, removed ones included, in id order: as many pages of
/// [`Store::list_urls`] as it takes.
pub async fn all_url_rows(store: &dyn Store, actor: Actor, site_id: i64) -> crate::Result<Vec<UrlRow>> {
    let (mut all, mut after) = (Vec::new(), 0);
    loop {
        let page = store.list_urls(actor, site_id, UrlQuery { after, limit: 10_000, include_removed: true }).await?;
        all.extend(page.items);
        match page.next_after {
            Some(next) => after = next,
            None => return Ok(all),
        }
    }
}

/// [`all_url_rows`], each with the sitemaps that list it ([`Store::url_sitemaps`]): what a reader
/// can see. One query per row: for the sets a test compares row by row.
pub async fn url_set(store: &dyn Store, actor: Actor, site_id: i64) -> crate::Result<Vec<(UrlRow, Vec<i64>)>> {
    let mut all = Vec::new();
    for row in all_url_rows(store, actor, site_id).await? {
        let links = store.url_sitemaps(actor, row.id).await?;
        all.push((row, links));
    }
    Ok(all)
}
