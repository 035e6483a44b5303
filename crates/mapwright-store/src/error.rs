//! The one error type of the store.

/// What can go wrong in a store operation.
///
/// "Not found" covers both a row that does not exist and one the acting user may not see, so
/// that an answer never tells a user whether another user's site exists.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database failed or refused the statement.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed while opening the store.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The row does not exist or belongs to another user.
    #[error("{what} {id} not found")]
    NotFound {
        /// The kind of row: "site", "sitemap", "token", ...
        what: &'static str,
        /// Its id.
        id: i64,
    },
    /// The health probe's write failed earlier (its answer is reused for a moment): why.
    #[error("the store cannot write: {0}")]
    Unhealthy(String),
    /// A unique value is taken (an e-mail address, a site already added).
    #[error("{0} already exists")]
    Conflict(String),
    /// The worker no longer holds the lease it tries to complete or release.
    #[error("the lease on sitemap {sitemap_id} is not held by worker {worker}")]
    LeaseLost {
        /// The sitemap.
        sitemap_id: i64,
        /// The worker that thought it held the lease.
        worker: String,
    },
    /// The URLs staged for a download are not all there (another attempt on the sitemap began,
    /// or PostgreSQL restarted and emptied its UNLOGGED staging tables): the merge is refused, so a
    /// partial read never replaces the URL set, and the download is read again.
    #[error("the staged URLs of sitemap {sitemap_id} are incomplete (stage {stage_id}): read it again")]
    StageLost {
        /// The sitemap.
        sitemap_id: i64,
        /// The stage.
        stage_id: i64,
    },
    /// The temporary file of a download's staged URLs failed (a full or unwritable temporary
    /// folder): the download is read again.
    #[error("the staged URLs' temporary file failed: {0}")]
    Spill(std::io::Error),
    /// The acting user sees the row but their role does not allow the change (a reader of a
    /// site); the message says so.
    #[error("{0}")]
    Forbidden(String),
    /// A rule of the service refuses the change (the last owner of a site leaving); the
    /// message says which and what to do instead.
    #[error("{0}")]
    Refused(String),
    /// A per-user limit of the service is reached (unverified sites); the message says which.
    #[error("{0}")]
    Quota(String),
    /// The database URL names no supported backend.
    #[error("unsupported database URL {0:?}: use postgres://..., sqlite://... or a data directory")]
    UnsupportedUrl(String),
    /// The data directory cannot be created.
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An e-mail address with no normal form ([`crate::normalize_email`]).
    #[error(transparent)]
    InvalidEmail(#[from] crate::InvalidEmail),
    /// The SQLite file is not a sound database (empty, damaged, or another kind of file); it
    /// is left as it is, never replaced.
    #[error(
        "{path} is not a sound mapwright database ({detail}); it was left untouched: restore it from a backup, or move it away to start with an empty database"
    )]
    Corrupt {
        /// The file.
        path: std::path::PathBuf,
        /// What the check found.
        detail: String,
    },
    /// Hashing a password failed (never for valid input; kept to avoid a panic).
    #[error("password hashing failed: {0}")]
    Password(String),
}

impl Error {
    /// Whether the database is unreachable or overloaded rather than refusing the statement:
    /// the caller answers "try again shortly" (503 with Retry-After), not an internal error.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Error::Database(e) => matches!(
                e,
                sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_)
            ),
            _ => false,
        }
    }
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Maps a unique-constraint violation to [`Error::Conflict`], anything else to `Database`.
pub(crate) fn conflict(err: sqlx::Error, what: impl Into<String>) -> Error {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => Error::Conflict(what.into()),
        _ => Error::Database(err),
    }
}
