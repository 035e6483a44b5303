//! Test support for crates that test against PostgreSQL: a database per test, created on the
//! machine's server and dropped afterwards, even when the test fails.

use crate::secret::new_verification_token;
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
