//! The SQLite backend: one file in the data directory, WAL mode, the zero-set-up default.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

use crate::error::conflict;
use crate::model::*;
use crate::secret;
use crate::sql::{CHILD_CHUNK, Pacer, URL_CHUNK, clean, found, like_escape, loc_hash};
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
        let path = options.get_filename().to_owned();
        let on_disk = !path.as_os_str().is_empty() && path != Path::new(":memory:");
        if on_disk {
            prepare_file(&path).await?;
        }
        // WAL lets readers run beside the one writer; NORMAL sync is durable at every
        // checkpoint and safe against corruption in WAL mode. The busy timeout makes a second
        // writer wait for the first rather than fail.
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = match SqlitePoolOptions::new().max_connections(8).connect_with(options).await {
            Ok(pool) => pool,
            Err(e) if on_disk && corrupt_file(&e) => {
                return Err(Error::Corrupt { path, detail: e.to_string() });
            }
            Err(e) => return Err(e.into()),
        };
        if on_disk {
            quick_check(&pool, &path).await?;
        }
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

    /// Nothing to tell: one process serves an SQLite database (`mapwright serve` refuses a
    /// second), and its workers are woken in memory.
    async fn notify_due_now(&self) -> Result<()> {
        Ok(())
    }

    /// No listener: see [`SqliteStore::notify_due_now`].
    async fn listen_due(&self) -> Result<Option<crate::DueListener>> {
        Ok(None)
    }

    /// Long writes pause now and then for other writers (see [`Pacer`]).
    fn pacer(&self) -> Pacer {
        Pacer::new(true)
    }
}

/// Creates a missing database file readable by its owner only (0600: it holds password hashes
/// and every user's sites; SQLite gives its `-wal` and `-shm` files the same mode), and refuses
/// an existing file of zero bytes, which SQLite would silently take for a new database.
async fn prepare_file(path: &Path) -> Result<()> {
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
    match create.open(path) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(Error::DataDir { path: path.to_owned(), source }),
    }
    // Another process opening a new directory at the same moment created the file an instant
    // ago and is about to write its header: give it two seconds before calling the file empty.
    for _ in 0..40 {
        let len = std::fs::metadata(path).map_err(|source| Error::DataDir { path: path.to_owned(), source })?.len();
        if len > 0 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(Error::Corrupt { path: path.to_owned(), detail: "the file is empty (0 bytes)".into() })
}

/// A connection refused because the file is not an SQLite database or is damaged
/// (SQLITE_NOTADB, SQLITE_CORRUPT).
fn corrupt_file(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => {
            matches!(db.code().as_deref(), Some("26" | "11"))
                || db.message().contains("not a database")
                || db.message().contains("malformed")
        }
        _ => false,
    }
}

/// `PRAGMA quick_check` before anything is written: a damaged file is refused with what the
/// check found, never repaired or replaced.
async fn quick_check(pool: &SqlitePool, path: &Path) -> Result<()> {
    let found: Vec<String> = match sqlx::query_scalar("PRAGMA quick_check(5)").fetch_all(pool).await {
        Ok(rows) => rows,
        Err(e) => return Err(Error::Corrupt { path: path.to_owned(), detail: e.to_string() }),
    };
    if found.len() == 1 && found[0] == "ok" {
        return Ok(());
    }
    Err(Error::Corrupt { path: path.to_owned(), detail: found.join("; ") })
}

impl_store!(
    SqliteStore,
    backend = "sqlite",
    migrations = SQLITE,
    lock = "",
    // SQLite's LIKE ignores ASCII case already (as its LOWER only folds ASCII): no LOWER per row.
    loc_lower = "u.loc"
);
