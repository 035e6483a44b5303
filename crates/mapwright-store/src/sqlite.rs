//! The SQLite backend: one file in the data directory, WAL mode, the zero-set-up default.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

use crate::error::conflict;
use crate::model::*;
use crate::secret;
use crate::sql::{URL_CHUNK, clean, found, like_escape, loc_hash};
use crate::{Error, Result};

/// A store in an SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if needed) `mapwright.db` in `data_dir` and migrates it.
    pub async fn open_dir(data_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::DataDir { path: data_dir.to_owned(), source })?;
        Self::open_with(SqliteConnectOptions::new().filename(data_dir.join("mapwright.db"))).await
    }

    /// Opens an `sqlite://` URL (`sqlite://path/to/file.db`) and migrates it.
    pub async fn open_url(url: &str) -> Result<Self> {
        Self::open_with(SqliteConnectOptions::from_str(url)?).await
    }

    async fn open_with(options: SqliteConnectOptions) -> Result<Self> {
        // WAL lets readers run beside the one writer; NORMAL sync is durable at every
        // checkpoint and safe against corruption in WAL mode. The busy timeout makes a second
        // writer wait for the first rather than fail.
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new().max_connections(8).connect_with(options).await?;
        let store = SqliteStore { pool };
        // sqlx's SQLite migrator takes no lock (PostgreSQL's takes an advisory one), so two
        // processes opening a new file at once race: the loser's migration transaction fails
        // ("table already exists") and rolls back whole. Trying again then finds it applied.
        let mut attempt = 0;
        loop {
            match crate::Store::migrate(&store).await {
                Ok(()) => return Ok(store),
                Err(_) if attempt < 5 => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A write transaction that takes the write lock at once (`BEGIN IMMEDIATE`): a deferred
    /// transaction that reads first and writes later can fail with SQLITE_BUSY when another
    /// writer got in between, which the busy timeout does not cover.
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

impl_store!(SqliteStore, backend = "sqlite", migrations = "migrations/sqlite", lock = "");
