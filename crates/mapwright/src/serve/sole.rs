//! One `mapwright serve` per SQLite database. Processes on one SQLite file would share the
//! queue (its write transactions serialise the lease), but nothing else: SQLite has no way to
//! wake another process's workers, and a second server on one file doubles the writers that
//! its single write lock already queues. So the server takes an exclusive lock on a file beside
//! the database and a second one is refused with a message that names PostgreSQL. The
//! operator's commands (`serve user create`, ...) take no lock and run beside the server.

use std::fs::File;
use std::path::PathBuf;

use anyhow::{Context, bail};

use super::Settings;

/// The lock, held as long as the value lives (the system releases it when the process ends,
/// however it ends, `kill -9` included).
#[derive(Debug)]
pub struct Sole {
    _file: File,
}

/// Locks `FILE.serve.lock` beside the SQLite database the settings name; `None` on PostgreSQL.
pub fn claim(settings: &Settings) -> anyhow::Result<Option<Sole>> {
    let Some(db) = mapwright_store::sqlite_file(settings.database.as_deref(), &settings.data_dir)? else {
        return Ok(None);
    };
    let mut name = db.file_name().map(|n| n.to_owned()).unwrap_or_else(|| "mapwright.db".into());
    name.push(".serve.lock");
    let path: PathBuf = db.with_file_name(name);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut open = std::fs::OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let file = open.open(&path).with_context(|| format!("cannot open the lock file {}", path.display()))?;
    match try_lock(&file) {
        Ok(true) => Ok(Some(Sole { _file: file })),
        Ok(false) => bail!(
            "another `mapwright serve` is running on the SQLite database {}: one process serves an SQLite \
             database (its workers and web in one). To run several processes (web with --workers 0, workers \
             with --no-http), use PostgreSQL: --database postgres://...",
            db.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// An exclusive `flock` without waiting: `false` when another process holds it. (`File::try_lock`
/// is younger than the workspace's minimum Rust.)
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    match rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Elsewhere no lock is taken: one server per SQLite file is then the operator's rule.
#[cfg(not(unix))]
fn try_lock(_: &File) -> std::io::Result<bool> {
    Ok(true)
}
