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
use crate::{Error, Result, Store};

/// A store in an SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// The database file (empty in memory): the health probe looks at its file system's room.
    path: std::path::PathBuf,
    /// The WAL's checkpoints, off every writer's path (none in memory).
    checkpoints: Option<std::sync::Arc<Checkpointer>>,
}

/// Checkpoints of the WAL on a connection of their own, in the background: a writer's commit
/// only appends its pages to the WAL, and copying them into the database file (with its two
/// `fsync`s) happens here, after each merge and every [`CHECKPOINT_TICK`], so neither the
/// ingest that wrote the pages nor another user's next small write waits for it. SQLite's own
/// checkpoint at commit stays as a backstop, past [`WAL_BACKSTOP_PAGES`] (it ran at 1,000
/// pages, i.e. in the commit of nearly every merge of 50,000 URLs: up to half a second each,
/// bench/serve/RESULTS.md). `PASSIVE`: it never waits for a reader or a writer, and copies
/// what no reader still needs.
#[derive(Debug)]
struct Checkpointer {
    wake: std::sync::Arc<tokio::sync::Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How often the checkpointer runs without being woken (other writes than merges).
const CHECKPOINT_TICK: Duration = Duration::from_secs(2);

/// WAL pages past which a commit checkpoints by itself (SQLite's default is 1,000).
const WAL_BACKSTOP_PAGES: &str = "16384";

impl Checkpointer {
    fn start(options: SqliteConnectOptions) -> Checkpointer {
        let wake = std::sync::Arc::new(tokio::sync::Notify::new());
        let woken = wake.clone();
        let task = tokio::spawn(async move {
            use sqlx::ConnectOptions as _;
            let mut conn: Option<sqlx::SqliteConnection> = None;
            loop {
                let _ = tokio::time::timeout(CHECKPOINT_TICK, woken.notified()).await;
                if conn.is_none() {
                    conn = options.connect().await.ok();
                }
                let Some(c) = conn.as_mut() else { continue };
                // A failed checkpoint is tried again at the next wake-up, on a new connection
                // (the backstop covers the WAL meanwhile).
                if sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&mut *c).await.is_err() {
                    conn = None;
                }
            }
        });
        Checkpointer { wake, task }
    }
}

impl SqliteStore {
    /// Opens (creating if needed) `mapwright.db` in `data_dir` and migrates it.
    pub async fn open_dir(data_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::DataDir { path: data_dir.to_owned(), source })?;
        Self::open_with(SqliteConnectOptions::new().filename(data_dir.join("mapwright.db"))).await
    }

    /// Opens (creating if needed) `mapwright.db` in `data_dir` limited to `pages` pages of the
    /// database file: past it SQLite answers SQLITE_FULL, as on a full disk. For the tests of
    /// recovery from a full disk where no small file system can be mounted.
    pub async fn open_with_page_limit(data_dir: &Path, pages: u64) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::DataDir { path: data_dir.to_owned(), source })?;
        let options = SqliteConnectOptions::new()
            .filename(data_dir.join("mapwright.db"))
            .pragma("max_page_count", pages.to_string());
        Self::open_with(options).await
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
        // writer wait for the first rather than fail. Reads go through a memory map of the file
        // (the OS's page cache, shared by every connection) and each connection keeps 16 MB of
        // pages instead of SQLite's 2 MB: the indexes of a site of a million URLs are tens of
        // megabytes, and a merge's lookups into them otherwise re-read pages from the file.
        let options = options
            .pragma("mmap_size", "268435456")
            .pragma("cache_size", "-16384")
            .pragma("wal_autocheckpoint", WAL_BACKSTOP_PAGES)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .after_release(|conn, _| Box::pin(fit_for_reuse(conn)))
            .connect_with(options)
            .await;
        let pool = match pool {
            Ok(pool) => pool,
            Err(e) if on_disk && corrupt_file(&e) => {
                return Err(Error::Corrupt { path, detail: e.to_string() });
            }
            Err(e) => return Err(e.into()),
        };
        if on_disk {
            quick_check(&pool, &path).await?;
        }
        let checkpoints =
            on_disk.then(|| std::sync::Arc::new(Checkpointer::start(pool.connect_options().as_ref().clone())));
        let store = SqliteStore { pool, path: if on_disk { path } else { Default::default() }, checkpoints };
        // sqlx's SQLite migrator takes no lock (PostgreSQL's takes an advisory one), so two
        // processes opening a new file at once raced: the loser's migration transaction failed
        // ("table already exists", "duplicate column name") and, when its failed statement had
        // taken the write lock, its connection could keep it and stall every other writer for the
        // busy timeout (seen with two stores opened at once in the tests). They now migrate one
        // after the other under an exclusive lock of `FILE.migrate.lock` beside the file; trying
        // again stays for a file whose lock cannot be shared (a network file system).
        let _migrating = if on_disk { Some(lock_migrations(&store.path).await?) } else { None };
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

    /// A write transaction that moves many rows: the same as [`SqliteStore::begin_write`]
    /// (PostgreSQL plans these differently, see `PgStore::begin_bulk`).
    async fn begin_bulk(&self) -> Result<Transaction<'static, Sqlite>> {
        self.begin_write().await
    }

    /// Whether the store has room to write more than a page or two, for the health probe (whose
    /// own one-row write still fits in the room a failed transaction left in the WAL file while
    /// every real write fails): the file system of the database holds [`MIN_FREE_BYTES`] and
    /// SQLite's page limit (`max_page_count`) leaves [`MIN_FREE_PAGES`] pages.
    async fn room(&self) -> Result<()> {
        let (limit, used, free): (i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT max_page_count FROM pragma_max_page_count), (SELECT page_count FROM pragma_page_count), \
             (SELECT freelist_count FROM pragma_freelist_count)",
        )
        .fetch_one(&self.pool)
        .await?;
        if limit.saturating_sub(used).saturating_add(free) < MIN_FREE_PAGES {
            return Err(Error::Unhealthy(format!("the database holds {used} pages of its limit of {limit}")));
        }
        #[cfg(unix)]
        if let Some(dir) = self.path.parent().filter(|_| !self.path.as_os_str().is_empty()) {
            let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            let stat = rustix::fs::statvfs(dir).map_err(|e| Error::Unhealthy(format!("{}: {e}", dir.display())))?;
            let available = stat.f_bavail.saturating_mul(stat.f_frsize);
            if available < MIN_FREE_BYTES {
                return Err(Error::Unhealthy(format!(
                    "the file system of {} has {available} bytes free",
                    dir.display()
                )));
            }
        }
        Ok(())
    }

    /// Nothing to tell: one process serves an SQLite database (`mapwright serve` refuses a
    /// second), and its workers are woken in memory.
    pub(crate) async fn notify_due_now(&self) -> Result<()> {
        Ok(())
    }

    /// No listener: see [`SqliteStore::notify_due_now`].
    pub(crate) async fn listen_due(&self) -> Result<Option<crate::DueListener>> {
        Ok(None)
    }

    /// Wakes the checkpointer (after a merge: the WAL holds its pages).
    fn wal_written(&self) {
        if let Some(c) = &self.checkpoints {
            c.wake.notify_one();
        }
    }

    /// Stops the checkpointer (its connection closes with it).
    async fn close_more(&self) {
        if let Some(c) = &self.checkpoints {
            c.task.abort();
        }
    }

    /// Long writes pause now and then for other writers (see [`Pacer`]).
    fn pacer(&self) -> Pacer {
        Pacer::new(true)
    }
}

/// The least room on the database's file system that the health probe calls healthy.
const MIN_FREE_BYTES: u64 = 1 << 20;

/// The least room under SQLite's page limit that the health probe calls healthy.
const MIN_FREE_PAGES: i64 = 64;

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

/// Whether a connection given back to the pool may serve again: not when it is still inside a
/// transaction. A statement that fails with SQLITE_FULL or SQLITE_IOERR (a full disk) can make
/// SQLite roll the transaction back by itself; the rollback sqlx then sends when the
/// `Transaction` drops fails ("no transaction is active") and sqlx keeps counting the
/// transaction as open, so every later `BEGIN IMMEDIATE` on that connection failed with
/// "attempted to call begin_with at non-zero transaction depth", long after the disk had room
/// again, until a restart. Such a connection is closed instead (the pool opens a fresh one).
/// The ping first: it runs after the rollback that the dropped transaction queued.
async fn fit_for_reuse(conn: &mut sqlx::SqliteConnection) -> std::result::Result<bool, sqlx::Error> {
    use sqlx::Connection as _;
    conn.ping().await?;
    Ok(!conn.is_in_transaction())
}

/// Waits for and takes the exclusive lock of `FILE.migrate.lock` beside the database (released
/// when the returned file is dropped); a file system without locks is not waited for.
async fn lock_migrations(db: &Path) -> Result<std::fs::File> {
    let mut name = db.file_name().map(|n| n.to_owned()).unwrap_or_else(|| "mapwright.db".into());
    name.push(".migrate.lock");
    let path = db.with_file_name(name);
    let mut open = std::fs::OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let file = open.open(&path).map_err(|source| Error::DataDir { path: path.clone(), source })?;
    let file = tokio::task::spawn_blocking(move || {
        // Without locks (some network file systems) the openers race as before, and retry.
        #[cfg(unix)]
        let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive);
        file
    })
    .await
    .map_err(|e| Error::DataDir { path, source: std::io::Error::other(e) })?;
    Ok(file)
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

impl_check_runs!(SqliteStore);

impl_store!(
    SqliteStore,
    backend = "sqlite",
    migrations = SQLITE,
    lock = "",
    // SQLite's LIKE ignores ASCII case already (as its LOWER only folds ASCII): no LOWER per row.
    loc_lower = "u.loc"
);

impl_ingest!(
    SqliteStore,
    // A temporary table lives in the connection's own temp store: filling it never touches
    // the database file. The index on url_id, made once the rows know their URL, serves the
    // sweep and the updates.
    create = [
        "DROP TABLE IF EXISTS temp.merge_urls",
        "CREATE TEMP TABLE merge_urls (loc_hash BLOB PRIMARY KEY, seq INTEGER NOT NULL, kind INTEGER NOT NULL, \
         loc TEXT NOT NULL, lastmod TEXT, changefreq TEXT, priority REAL, url_id INTEGER, state INTEGER)",
    ],
    resolved = ["CREATE INDEX temp.merge_urls_url ON merge_urls(url_id)"],
    new_urls = rowid,
    stage = values,
    pin = "+",
    drop = ["DROP TABLE temp.merge_urls"],
    // The stage is a temporary table of the stage's own connection: no lock, no WAL.
    conn = own
);
