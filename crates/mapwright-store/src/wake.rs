//! Wake-ups across processes: a process that makes a sitemap due (a submission, a ping, a
//! resubmit) tells the workers of every process sharing the database, so that one in another
//! process picks the job up at once instead of at its next poll.
//!
//! On PostgreSQL this is `NOTIFY` on one channel and a `LISTEN`ing connection per worker
//! process ([`DueListener`]); a notification carries nothing (the lease query finds the work),
//! and one lost while the listener reconnects costs a poll interval, never a job. On SQLite
//! one process serves (see `mapwright serve`), so there is nothing to tell.

use sqlx::postgres::PgListener;

use crate::Result;

/// The PostgreSQL channel the wake-ups go through.
pub const CHANNEL: &str = "mapwright_due";

/// What a [`DueListener`] heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// Another process (or this one) made work due.
    Due,
    /// The connection was lost and made again: notifications sent meanwhile are gone, so the
    /// caller looks for work as if woken.
    Reconnected,
}

/// A connection listening for wake-ups (PostgreSQL only).
pub struct DueListener {
    listener: PgListener,
}

impl std::fmt::Debug for DueListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DueListener").field("channel", &CHANNEL).finish()
    }
}

impl DueListener {
    /// Listens on [`CHANNEL`] over a connection of `pool` (held as long as the listener).
    pub(crate) async fn listen(pool: &sqlx::PgPool) -> Result<Self> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(CHANNEL).await?;
        Ok(DueListener { listener })
    }

    /// Waits for the next wake-up. An error (the database unreachable, the pool closed at
    /// shutdown) is returned as it is; the next call tries to connect again.
    pub async fn recv(&mut self) -> Result<Heard> {
        Ok(match self.listener.try_recv().await? {
            Some(_) => Heard::Due,
            None => Heard::Reconnected,
        })
    }
}
