//! Password hashing in a bounded pool.
//!
//! Every argon2 hash or check takes 19 MiB and tens of milliseconds of CPU by design; run
//! without a bound, 400 concurrent sign-ups took the process to 7.9 GB. Here at most `size`
//! run at once (one per core by default: more would only share the cores), a few more wait
//! briefly for a turn, and the rest are answered at once with 429 and Retry-After, so memory
//! stays at `size` times 19 MiB whatever arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::AppError;

/// The pool (see the module documentation).
#[derive(Debug)]
pub struct HashPool {
    permits: Arc<Semaphore>,
    size: usize,
    /// Requests waiting for a turn now, and how many may.
    waiting: AtomicUsize,
    max_waiting: usize,
    /// How long a waiting request waits before it is answered 429.
    max_wait: Duration,
    /// Hashes running now, and the most that ever ran at once.
    running: Arc<(AtomicUsize, AtomicUsize)>,
}

impl HashPool {
    /// `size` hashes at once (at least one), `4 * size` waiting up to 2 s.
    pub fn new(size: usize) -> Self {
        let size = size.max(1);
        HashPool {
            permits: Arc::new(Semaphore::new(size)),
            size,
            waiting: AtomicUsize::new(0),
            max_waiting: 4 * size,
            max_wait: Duration::from_secs(2),
            running: Arc::default(),
        }
    }

    /// One hash at a time per core of this machine.
    pub fn for_this_machine() -> Self {
        HashPool::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    /// How many hashes may run at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The most hashes that ran at once so far (for tests and the bench).
    pub fn peak(&self) -> usize {
        self.running.1.load(Ordering::Relaxed)
    }

    /// Runs `f` (a hash or a check) on a blocking thread when a turn is free; 429 with
    /// Retry-After when the pool and its short queue are full, or the turn does not come
    /// within the wait.
    pub(crate) async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, AppError> {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return Err(AppError::TooManyRequests(1));
                }
                let turn = tokio::time::timeout(self.max_wait, self.permits.clone().acquire_owned()).await;
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                match turn {
                    Ok(Ok(permit)) => permit,
                    _ => return Err(AppError::TooManyRequests(1)),
                }
            }
        };
        // The permit moves into the blocking task: a request given up half-way (the client
        // left) still holds its turn until its hash is done.
        let running = self.running.clone();
        let task = tokio::task::spawn_blocking(move || {
            let now = running.0.fetch_add(1, Ordering::AcqRel) + 1;
            running.1.fetch_max(now, Ordering::AcqRel);
            let result = f();
            running.0.fetch_sub(1, Ordering::AcqRel);
            drop(permit);
            result
        });
        task.await.map_err(|e| AppError::Internal(Box::new(e)))
    }
}
