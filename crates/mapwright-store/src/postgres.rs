//! The PostgreSQL backend, for deployments where several server processes share one database.

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use crate::error::conflict;
use crate::model::*;
use crate::secret;
use crate::sql::{URL_CHUNK, clean, found, like_escape, loc_hash};
use crate::{Error, Result};

/// How long an operation waits for a pooled connection (or a new one) before failing with
/// an error for which [`crate::Error::is_unavailable`] holds.
pub const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// A store in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to a `postgres://` URL and migrates the database.
    ///
    /// Several processes may open the same database at once: sqlx's migrator takes an
    /// advisory lock, so only one applies a migration.
    pub async fn open(url: &str) -> Result<Self> {
        // A request waits at most a few seconds for a connection: while the database is down
        // the service answers 503 with Retry-After quickly rather than hanging for sqlx's
        // default 30 s.
        let pool = PgPoolOptions::new().max_connections(16).acquire_timeout(ACQUIRE_TIMEOUT).connect(url).await?;
        let store = PgStore { pool };
        crate::Store::migrate(&store).await?;
        Ok(store)
    }

    /// Every statement of a transaction runs under READ COMMITTED; the lease query's
    /// `FOR UPDATE SKIP LOCKED` is what keeps two leasers apart.
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }
}

impl_store!(PgStore, backend = "postgres", migrations = "migrations/postgres", lock = "FOR UPDATE OF sm SKIP LOCKED");
