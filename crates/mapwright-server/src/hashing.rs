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
            jobs: start_threads(size),
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
                pool.run(|| {
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

        let lost = pool.run(|| -> u8 { panic!("a hash that panics") }).await;
        assert!(matches!(lost, Err(AppError::Internal(_))));
        for _ in 0..3 {
            assert_eq!(pool.run(|| 7).await.unwrap(), 7, "the threads survive a panicking job");
        }
    }
}
