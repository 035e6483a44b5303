//! SQLite's one writer, taken in turns by this process's writes, short ones before long ones.
//!
//! SQLite lets one transaction write at a time. Left to itself, a writer that finds the lock
//! taken sleeps in SQLite's busy handler (1, 2, 5, 10 ... 100 ms) and tries again, so it starts
//! up to tens of milliseconds after the lock came free, and whoever retries first wins. Through
//! `serve`, that made a sitemap's first ingest a lock-step (bench/serve/RESULTS.md, issue 36):
//! the small writes that end one read and start the next (the read's record, the next lease,
//! the outbound gate's counters, the next stage) queued behind another read's merge of 50,000
//! URLs, so that read did not parse while the merge wrote, and one core idled through every
//! merge.
//!
//! So the SQLite store's writes take a turn here before they touch the database (one process
//! serves an SQLite file): a small write ([`WriteTurns::small`]: every write transaction, and
//! the outbound gate's count, which every request makes, as one statement on a task of its own,
//! [`WriteTurns::alone`]) queues in arrival order and starts as soon as the one before it ends;
//! a long write (a merge of many staged rows, [`WriteTurns::long`]) waits for the small writes
//! to pause first, that is until none is waiting or writing and no turn has ended for
//! [`QUIET`], for at most [`MAX_YIELD`]. The writes of a read that ends and of the next one
//! that starts come a few milliseconds apart, so they get in between two merges, and the next
//! read parses while the next merge writes. Long writes queue one at a time ahead of the lock,
//! so a long write waiting never holds the lock's queue against small ones.
//!
//! A turn is held by a future: one its task stops polling (a stream of store calls, while the
//! task awaits another write) would hold every writer. The outbound gate's count runs on a
//! task of its own for that reason (the URL checker's requests are such a stream), and no wait
//! for a turn lasts past [`MAX_WAIT`]: then the write goes to SQLite without one, as before
//! there were turns. PostgreSQL, whose writers lock rows, not the database, takes no turns.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, Notify, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

/// How long the small writes must have paused before a long write takes the lock.
pub(crate) const QUIET: Duration = Duration::from_millis(5);

/// The longest a long write waits for the small writes to pause: a stream of small writes
/// (many users at once) delays each merge by this at most, and never stops one.
pub(crate) const MAX_YIELD: Duration = Duration::from_millis(60);

/// The longest a write waits for its turn before it goes to SQLite without one (see
/// [`WriteTurns::take_lock`]): longer than any merge takes on a machine that is not stalled.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(2);

/// Rows of a merge from which it yields to small writes first: a smaller one is over about as
/// soon as a small write would be.
pub(crate) const LONG_ROWS: i64 = 2_000;

/// The turns of one SQLite database within this process (shared by the clones of its store).
#[derive(Debug)]
pub(crate) struct WriteTurns {
    /// One permit: the database's write lock, as this process hands it out (first come,
    /// first served).
    lock: Arc<Semaphore>,
    /// Long writes queue here, one at a time ahead of `lock`.
    long: Arc<Mutex<()>>,
    /// Small writes waiting for `lock`.
    waiting: AtomicUsize,
    /// When a turn last ended, in microseconds since `epoch`: the writes of a read that ends
    /// (its merge, then its record) come one after another, and so do the next read's.
    last_end: AtomicU64,
    epoch: Instant,
    /// Told whenever a turn ends.
    ended: Notify,
    /// Writes that went without a turn ([`MAX_WAIT`]).
    overruns: AtomicU64,
}

impl Default for WriteTurns {
    fn default() -> Self {
        WriteTurns {
            lock: Arc::new(Semaphore::new(1)),
            long: Arc::new(Mutex::new(())),
            waiting: AtomicUsize::new(0),
            last_end: AtomicU64::new(0),
            epoch: Instant::now(),
            ended: Notify::new(),
            overruns: AtomicU64::new(0),
        }
    }
}

/// A turn at the write lock, held until dropped (after the write's commit or rollback).
#[derive(Debug)]
pub(crate) struct Turn {
    turns: Arc<WriteTurns>,
    _lock: Option<OwnedSemaphorePermit>,
    /// A long write's place at the head of the long writes' queue, kept to its end.
    _long: Option<OwnedMutexGuard<()>>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.turns.last_end.store(self.turns.micros(), Ordering::Release);
        self.turns.ended.notify_waiters();
    }
}

impl WriteTurns {
    fn micros(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// A small write's turn: the next free one, in arrival order.
    pub(crate) async fn small(self: &Arc<Self>) -> Turn {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let lock = self.take_lock().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        Turn { turns: self.clone(), _lock: lock, _long: None }
    }

    /// The lock, or none after [`MAX_WAIT`]: a turn held by a future that its task stopped
    /// polling (a stream of store calls, one of them inside a transaction, while the task
    /// awaits another write) would otherwise hold every writer forever. Past the wait the
    /// write goes to SQLite without a turn, as it did before there were turns: it waits in the
    /// busy handler, and fails after the busy timeout if the lock never comes free.
    async fn take_lock(&self) -> Option<OwnedSemaphorePermit> {
        match tokio::time::timeout(MAX_WAIT, self.lock.clone().acquire_owned()).await {
            Ok(permit) => Some(permit.expect("the write lock is never closed")),
            Err(_) => {
                self.overruns.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Writes that went without a turn after [`MAX_WAIT`] (for the tests).
    #[cfg(test)]
    pub(crate) fn overruns(&self) -> u64 {
        self.overruns.load(Ordering::Relaxed)
    }

    /// Runs one statement in a small write's turn on a task of its own, so that the turn ends
    /// when the statement does, whether or not the caller's future is still being polled.
    pub(crate) async fn alone<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl std::future::Future<Output = T> + Send + 'static,
    ) -> T {
        let turn = self.small().await;
        let task = tokio::spawn(async move {
            let out = write.await;
            drop(turn);
            out
        });
        match task.await {
            Ok(out) => out,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// A long write's turn (a merge of `rows` staged rows): behind the long writes before it,
    /// and, from [`LONG_ROWS`] rows, once the small writes have paused ([`QUIET`]) or after
    /// [`MAX_YIELD`].
    pub(crate) async fn long(self: &Arc<Self>, rows: i64) -> Turn {
        let long = tokio::time::timeout(MAX_WAIT, self.long.clone().lock_owned()).await.ok();
        if rows >= LONG_ROWS {
            let deadline = Instant::now() + MAX_YIELD;
            loop {
                let ended = self.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                let now = Instant::now();
                let since = Duration::from_micros(self.micros().saturating_sub(self.last_end.load(Ordering::Acquire)));
                let busy = self.waiting.load(Ordering::Acquire) > 0 || self.lock.available_permits() == 0;
                if now >= deadline || (!busy && since >= QUIET) {
                    break;
                }
                let pause = if busy { deadline - now } else { (QUIET - since).min(deadline - now) };
                let _ = tokio::time::timeout(pause, ended).await;
            }
        }
        let lock = self.take_lock().await;
        Turn { turns: self.clone(), _lock: lock, _long: long }
    }
}

/// A write transaction and the turn it writes in (none on PostgreSQL), used as the
/// transaction's connection; the turn ends when it is dropped, after its commit or rollback.
pub(crate) struct WriteTx<DB: sqlx::Database> {
    tx: sqlx::Transaction<'static, DB>,
    _turn: Option<Turn>,
}

impl<DB: sqlx::Database> WriteTx<DB> {
    pub(crate) fn new(tx: sqlx::Transaction<'static, DB>, turn: Option<Turn>) -> Self {
        WriteTx { tx, _turn: turn }
    }

    pub(crate) async fn commit(self) -> std::result::Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) async fn rollback(self) -> std::result::Result<(), sqlx::Error> {
        self.tx.rollback().await
    }
}

impl<DB: sqlx::Database> std::ops::Deref for WriteTx<DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        &self.tx
    }
}

impl<DB: sqlx::Database> std::ops::DerefMut for WriteTx<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        &mut self.tx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long write waits while small writes come one after another, and takes the lock
    /// between two of them only once they pause; a small write that comes while a long one
    /// waits goes first.
    #[tokio::test]
    async fn small_writes_go_before_a_waiting_long_one() {
        let turns = Arc::new(WriteTurns::default());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let first = turns.small().await;
        let long = {
            let (turns, order) = (turns.clone(), order.clone());
            tokio::spawn(async move {
                let _turn = turns.long(LONG_ROWS).await;
                order.lock().unwrap().push("long");
            })
        };
        tokio::task::yield_now().await;
        // Three small writes, each queued while the one before still holds the lock.
        let mut smalls = Vec::new();
        for name in ["a", "b", "c"] {
            let (turns, order) = (turns.clone(), order.clone());
            smalls.push(tokio::spawn(async move {
                let _turn = turns.small().await;
                order.lock().unwrap().push(name);
            }));
            tokio::task::yield_now().await;
        }
        drop(first);
        for s in smalls {
            s.await.unwrap();
        }
        long.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["a", "b", "c", "long"]);
    }

    /// A short merge does not yield: it queues as a small write would, ahead of one that came
    /// after it.
    #[tokio::test]
    async fn a_short_merge_does_not_yield() {
        let turns = Arc::new(WriteTurns::default());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let first = turns.small().await;
        let short = {
            let (turns, order) = (turns.clone(), order.clone());
            tokio::spawn(async move {
                let _turn = turns.long(LONG_ROWS - 1).await;
                order.lock().unwrap().push("short merge");
            })
        };
        tokio::task::yield_now().await;
        let small = {
            let (turns, order) = (turns.clone(), order.clone());
            tokio::spawn(async move {
                let _turn = turns.small().await;
                order.lock().unwrap().push("small");
            })
        };
        tokio::task::yield_now().await;
        drop(first);
        short.await.unwrap();
        small.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["short merge", "small"]);
    }

    /// Small writes that never pause delay a long write by `MAX_YIELD` at most.
    #[tokio::test]
    async fn a_long_write_yields_for_a_bounded_time() {
        let turns = Arc::new(WriteTurns::default());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stream = {
            let (turns, stop) = (turns.clone(), stop.clone());
            tokio::spawn(async move {
                let mut n = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    let _turn = turns.small().await;
                    n += 1;
                    tokio::task::yield_now().await;
                }
                n
            })
        };
        tokio::task::yield_now().await;
        let long = turns.long(LONG_ROWS).await;
        stop.store(true, Ordering::Relaxed);
        drop(long);
        let n = stream.await.unwrap();
        // The long write got in although the small writes never paused.
        assert!(n > 0);
    }

    /// A statement in its turn ends whether or not its caller still polls it: a task that
    /// started one (a stream of requests, each counted by the outbound gate) and then awaits
    /// another write does not wait on itself (it did, forever, before the statement had a task
    /// of its own: the URL checker's runs stopped).
    #[tokio::test]
    async fn a_write_left_unpolled_does_not_hold_the_next() {
        use crate::Store as _;
        let dir = tempfile::tempdir().unwrap();
        let store = crate::SqliteStore::open_dir(dir.path()).await.unwrap();
        let mut counted = Box::pin(store.count_events("test", "host", 1, 10, 60, 1_000));
        // Polled once (its turn is free, so it takes it and starts), then left alone.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(counted.as_mut().poll(&mut cx).is_pending());
        assert_eq!(store.turns.lock.available_permits(), 0, "the count holds its turn");
        store.health(1_000).await.unwrap();
        assert_eq!(store.turns.overruns(), 0, "the second write had to go without its turn");
        assert_eq!(counted.await.unwrap(), None);
    }
}
