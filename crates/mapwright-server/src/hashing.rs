//! Password hashing in a bounded pool.
//!
//! Every argon2 hash or check takes 19 MiB and tens of milliseconds of CPU by design; run
//! without a bound, 400 concurrent sign-ups took the process to 7.9 GB. Here at most `size`
//! run at once (one per core by default: more would only share the cores), a few more wait
//! briefly for a turn, and the rest are answered at once with 429 and Retry-After, so memory
//! stays at `size` times 19 MiB whatever arrives.
//!
//! The hashes run on `size` threads of the pool's own, not on tokio's blocking threads: the
//! allocator keeps a freed 19 MiB buffer in the arena of the thread that used it, and tokio's
//! blocking pool grows to hundreds of threads under a flood, so 491 sign-ups spread over its
//! threads left the process at 628 MB. On the pool's threads memory stays at `size` buffers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::AppError;

/// Whose turn a hash takes (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Hashing a new password (sign-up): at most half the turns.
    SignUp,
    /// Checking a password (sign-in, a sign-up's confirmation): any turn sign-ups leave.
    SignIn,
}

/// The pool (see the module documentation).
#[derive(Debug)]
pub struct HashPool {
    permits: Arc<Semaphore>,
    /// The turns sign-up hashes may hold at once, taken before one of `permits`.
    sign_up: Arc<Semaphore>,
    size: usize,
    /// Requests waiting for a turn now, per budget (sign-up, sign-in), and how many may.
    waiting: [AtomicUsize; 2],
    max_waiting: usize,
    /// How long a waiting request waits before it is answered 429.
    max_wait: Duration,
    /// Hashes running now, and the most that ever ran at once.
    running: Arc<(AtomicUsize, AtomicUsize)>,
    /// The pool's threads take their work here; they end when the pool is dropped.
    jobs: mpsc::Sender<Job>,
}

type Job = Box<dyn FnOnce() + Send>;

/// Starts `size` hashing threads sharing one queue.
fn start_threads(size: usize) -> mpsc::Sender<Job> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for n in 0..size {
        let rx = rx.clone();
        let spawned = std::thread::Builder::new().name(format!("mapwright-hash-{n}")).spawn(move || {
            loop {
                // The lock is held only to take a job, never while running it.
                let job = match rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                match job {
                    // A job that panics loses its answer (its caller gets an error), never
                    // the thread.
                    Ok(job) => {
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                    Err(_) => return, // the pool is gone
                }
            }
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start a password-hashing thread");
        }
    }
    tx
}

impl HashPool {
    /// `size` hashes at once (at least one), sign-ups at most half of them (at least one),
    /// `4 * size` of each budget waiting up to 2 s.
    pub fn new(size: usize) -> Self {
        let size = size.max(1);
        HashPool {
            permits: Arc::new(Semaphore::new(size)),
            sign_up: Arc::new(Semaphore::new((size / 2).max(1))),
            size,
            waiting: [AtomicUsize::new(0), AtomicUsize::new(0)],
            max_waiting: 4 * size,
            max_wait: Duration::from_secs(2),
            running: Arc::default(),
            jobs: start_threads(size),
        }
    }

    /// One hash at a time per core of this machine.
    pub fn for_this_machine() -> Self {
        HashPool::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    /// A permit of `semaphore` now, or after waiting (counted in `waiting`, bounded) until
    /// `deadline`; else 429.
    async fn turn(
        &self,
        semaphore: &Arc<Semaphore>,
        waiting: &AtomicUsize,
        deadline: tokio::time::Instant,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, AppError> {
        if let Ok(permit) = semaphore.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(AppError::TooManyRequests(1));
        }
        let turn = tokio::time::timeout_at(deadline, semaphore.clone().acquire_owned()).await;
        waiting.fetch_sub(1, Ordering::AcqRel);
        match turn {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(AppError::TooManyRequests(1)),
        }
    }

    /// How many hashes may run at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The most hashes that ran at once so far (for tests and the bench).
    pub fn peak(&self) -> usize {
        self.running.1.load(Ordering::Relaxed)
    }

    /// Runs `f` (a hash or a check) of `budget` on one of the pool's threads when a turn is
    /// free; 429 with Retry-After when the pool and the budget's short queue are full, or the
    /// turn does not come within the wait.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        budget: Budget,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let waiting = &self.waiting[usize::from(budget == Budget::SignIn)];
        let deadline = tokio::time::Instant::now() + self.max_wait;
        let gate = match budget {
            Budget::SignUp => Some(self.turn(&self.sign_up, waiting, deadline).await?),
            Budget::SignIn => None,
        };
        let permit = self.turn(&self.permits, waiting, deadline).await?;
        let permit = (permit, gate);
        // The permit moves into the job: a request given up half-way (the client left) still
        // holds its turn until its hash is done.
        let running = self.running.clone();
        let (done, result) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let now = running.0.fetch_add(1, Ordering::AcqRel) + 1;
            running.1.fetch_max(now, Ordering::AcqRel);
            let value = f();
            running.0.fetch_sub(1, Ordering::AcqRel);
            drop(permit);
            let _ = done.send(value);
        });
        self.jobs.send(job).map_err(|_| AppError::Internal("the password-hashing threads are gone".into()))?;
        result.await.map_err(|_| AppError::Internal("a password hash was lost (its thread panicked)".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn hashes_run_on_the_pools_own_threads_only() {
        // Whatever the number of requests, the work lands on `size` threads (so the allocator
        // keeps at most `size` hash buffers), and a job that panics costs no thread.
        let pool = Arc::new(HashPool::new(2));
        let mut tasks = Vec::new();
        for _ in 0..40 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                pool.run(Budget::SignIn, || {
                    std::thread::sleep(Duration::from_millis(2));
                    std::thread::current().name().unwrap_or("").to_string()
                })
                .await
            }));
        }
        let mut threads = std::collections::HashSet::new();
        let mut refused = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(name) => {
                    threads.insert(name);
                }
                Err(AppError::TooManyRequests(_)) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert!(threads.iter().all(|n| n.starts_with("mapwright-hash-")), "{threads:?}");
        assert!(!threads.is_empty() && threads.len() <= 2, "{threads:?}");
        assert!(refused < 40);
        assert!(pool.peak() <= 2);

        let lost = pool.run(Budget::SignUp, || -> u8 { panic!("a hash that panics") }).await;
        assert!(matches!(lost, Err(AppError::Internal(_))));
        for _ in 0..3 {
            assert_eq!(pool.run(Budget::SignUp, || 7).await.unwrap(), 7, "the threads survive a panicking job");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sign_ups_never_hold_the_turns_of_sign_ins() {
        // Issue 24 item 6: sign-up hashes hold at most half the turns; a flood of them waits in
        // its own queue (or is refused) while a sign-in takes the turn they leave.
        let pool = Arc::new(HashPool::new(2));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let mut flood = Vec::new();
        for _ in 0..30 {
            let (pool, held) = (pool.clone(), held.clone());
            flood.push(tokio::spawn(async move {
                pool.run(Budget::SignUp, move || {
                    let _ = held.lock().unwrap().recv();
                })
                .await
            }));
        }
        // The flood fills the sign-up turn and queue; give it the time to get there.
        while pool.running.0.load(Ordering::Acquire) == 0 {
            tokio::task::yield_now().await;
        }
        for _ in 0..5 {
            assert_eq!(pool.run(Budget::SignIn, || 1).await.unwrap(), 1, "a sign-in gets the turn sign-ups leave");
        }
        assert_eq!(pool.running.0.load(Ordering::Acquire), 1, "one sign-up hash at a time of two turns");
        for _ in 0..30 {
            let _ = release.send(());
        }
        let mut refused = 0;
        for task in flood {
            if task.await.unwrap().is_err() {
                refused += 1;
            }
        }
        assert!(refused >= 20, "past its queue the flood is refused at once: {refused}");
    }
}
