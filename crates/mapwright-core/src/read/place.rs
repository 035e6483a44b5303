//! Where a threaded read's two threads run (`gunzip.rs`): each on CPUs of its own, when the
//! read is the process's only threaded one.
//!
//! Why: each time one thread wakes the other (a buffer ready, a buffer given back), Linux may
//! move the woken one to the waker's CPU, and on a virtual machine, whose idle CPU looks busy
//! to it, it often does. s50k.xml.gz (10 MB inflated) then read in 12-16 ms instead of 8-9 in
//! half of 16 runs, the two threads taking turns on one CPU (`perf sched timehist`), the
//! reader waiting 3-5 ms for the worker in all. With the worker kept off the reader's CPU, 16
//! runs out of 16 read in 8.1-9.1 ms (medians 8.5-9.0 ms against 12.0-12.7), the reader
//! waiting at most 0.6 ms.
//!
//! The worker alone kept off the reader's first CPU was not enough: the reader, woken, may
//! move onto the worker's CPU, and stays there. s50k.xml.gz then read in 16-17 ms instead of
//! 11 in most of 14 runs in a shell loop, and a plain file in 14-15 ms instead of 9-10 in half
//! (2026-11-29, bench/read/RESULTS.md). So the reader is pinned too, to the CPU it is on, for
//! the read's duration: the caller's thread gets its CPUs back when the read ends.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Whether a placed reader may spin while it waits ([`nothing_else_runs`]).
static SPIN: AtomicBool = AtomicBool::new(false);

/// Tells the reader that nothing else in this process needs a CPU while a read waits for its
/// worker: a command that reads one file, as the CLI's `read` and `validate`. A read that is
/// the process's only threaded one then spins briefly before it sleeps waiting for a buffer
/// (`gunzip.rs`: `SPIN`; s50k.xml.gz read in 9.34 ms spinning, 9.71 sleeping). Elsewhere (the
/// service storing what it reads, a discovery fetching, a Python program converting entries)
/// the CPU spun would be another thread's, so a reader sleeps unless told.
pub fn nothing_else_runs() {
    SPIN.store(true, Ordering::Relaxed);
}

/// Threaded reads in flight in this process: the threads are placed only when their read is
/// the only one. With many reads at once (`discover --sites`, the service), there are more
/// threads than CPUs, and the scheduler's balancing is left free.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A threaded read, counted in [`IN_FLIGHT`] while this lives, and its threads' placement.
/// Planned on the reader's thread ([`Placement::plan`]): while the read is the process's only
/// threaded one, the reader is to be pinned to the CPU it is on and the worker gets every
/// other CPU the reader may use ([`Placement::worker`]); else nothing is placed. The worker is
/// spawned before the reader is pinned ([`Placement::pin_reader`]). Best effort: where a call
/// fails, the scheduler places the threads as before. The reader's CPUs are restored on drop,
/// on whichever thread drops it (the reader may have been moved to another).
pub(crate) struct Placement {
    #[cfg(target_os = "linux")]
    placed: Option<Placed>,
}

/// A planned placement's CPUs.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy)]
struct Placed {
    /// The reader's thread and its CPUs before it was pinned, given back on drop.
    reader: rustix::thread::Pid,
    before: rustix::thread::CpuSet,
    /// The one CPU the reader is pinned to, and the worker's.
    mine: rustix::thread::CpuSet,
    worker: rustix::thread::CpuSet,
    /// Whether the reader was pinned: only then are its CPUs given back.
    pinned: bool,
}

impl Placement {
    /// The placement of a read about to start its worker, nothing moved yet. The worker is
    /// spawned next, then the reader pinned: a thread inherits its creator's CPUs, and one
    /// spawned after the reader was pinned started on the reader's CPU, waited there for the
    /// reader to sleep (about 0.3 ms of each `.gz` read's start, `perf sched timehist`, an
    /// AMD EPYC VM) and only then moved to its own.
    pub(crate) fn plan() -> Self {
        let alone = IN_FLIGHT.fetch_add(1, Ordering::Relaxed) == 0;
        #[cfg(target_os = "linux")]
        {
            use rustix::thread::{CpuSet, gettid, sched_getaffinity, sched_getcpu};
            let none = Placement { placed: None };
            if !alone {
                return none;
            }
            let Ok(before) = sched_getaffinity(None) else { return none };
            let here = sched_getcpu();
            let Some(worker) = away(here, before) else { return none };
            let mut mine = CpuSet::new();
            mine.set(here);
            Placement { placed: Some(Placed { reader: gettid(), before, mine, worker, pinned: false }) }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = alone;
            Placement {}
        }
    }

    /// Pins the reader, the calling thread, to its CPU of the plan. If that fails, the reader
    /// is not placed (it neither spins nor has CPUs to get back); a worker already started
    /// still keeps off the reader's CPU.
    pub(crate) fn pin_reader(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(p) = &mut self.placed {
            if rustix::thread::sched_setaffinity(None, &p.mine).is_ok() {
                p.pinned = true;
            } else {
                self.placed = None;
            }
        }
    }

    /// Whether the reader may spin while it waits: the reader and the worker are on CPUs of
    /// their own, and nothing else in the process runs ([`nothing_else_runs`]).
    pub(crate) fn may_spin(&self) -> bool {
        self.placed() && SPIN.load(Ordering::Relaxed)
    }

    /// Whether the reader and the worker are on CPUs of their own.
    pub(crate) fn placed(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.placed.is_some_and(|p| p.pinned);
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Places the calling thread, the worker, on its CPUs.
    pub(crate) fn worker(&self) -> impl FnOnce() + Send + 'static {
        #[cfg(target_os = "linux")]
        let cpus = self.placed.map(|p| p.worker);
        move || {
            #[cfg(target_os = "linux")]
            if let Some(cpus) = cpus {
                let _ = rustix::thread::sched_setaffinity(None, &cpus);
            }
        }
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(p) = self.placed.take().filter(|p| p.pinned) {
            let _ = rustix::thread::sched_setaffinity(Some(p.reader), &p.before);
        }
        IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `allowed` without `here`, when `here` is in it and others are.
#[cfg(target_os = "linux")]
fn away(here: usize, mut allowed: rustix::thread::CpuSet) -> Option<rustix::thread::CpuSet> {
    if here >= rustix::thread::CpuSet::MAX_CPU || !allowed.is_set(here) || allowed.count() < 2 {
        return None;
    }
    allowed.unset(here);
    Some(allowed)
}

#[cfg(all(test, target_os = "linux"))]
pub(super) mod tests {
    use rustix::thread::{CpuSet, sched_getaffinity};

    /// The CPUs of a set, in order.
    pub(in crate::read) fn cpus(s: &CpuSet) -> Vec<usize> {
        (0..CpuSet::MAX_CPU).filter(|&c| s.is_set(c)).collect()
    }

    /// The calling thread's CPUs.
    pub(in crate::read) fn mine() -> Vec<usize> {
        cpus(&sched_getaffinity(None).expect("sched_getaffinity"))
    }

    /// The worker's CPUs: the reader's allowed ones but its own, or none chosen when that
    /// leaves nothing (one CPU) or the reader's CPU is not among them.
    #[test]
    fn the_worker_s_cpus_leave_out_the_reader_s() {
        let set = |cpus: &[usize]| {
            let mut s = CpuSet::new();
            for &c in cpus {
                s.set(c);
            }
            s
        };
        let list = |s: Option<CpuSet>| s.map(|s| cpus(&s));
        assert_eq!(list(super::away(1, set(&[0, 1, 2]))), Some(vec![0, 2]));
        assert_eq!(list(super::away(0, set(&[0, 1]))), Some(vec![1]));
        assert_eq!(list(super::away(0, set(&[0]))), None);
        assert_eq!(list(super::away(3, set(&[0, 1]))), None);
        assert_eq!(list(super::away(CpuSet::MAX_CPU, set(&[0, 1]))), None);
    }

    /// A placed reader keeps its CPUs when planned, is pinned to one CPU while the read lives,
    /// and its thread gets its CPUs back when the read ends, even when it ends on another
    /// thread (a reader moved away).
    #[test]
    fn the_reader_s_cpus_come_back_wherever_the_read_ends() {
        use std::sync::mpsc::channel;
        let (give, take) = channel();
        let (dropped, wait) = channel::<()>();
        let reader = std::thread::spawn(move || {
            let before = mine();
            let mut placement = super::Placement::plan();
            // Nothing moves until the reader is pinned: a worker spawned in between inherits
            // the reader's CPUs, not its one.
            assert_eq!(mine(), before, "planned, not pinned");
            placement.pin_reader();
            let during = mine();
            give.send(placement).expect("the test's thread waits");
            wait.recv().expect("the test's thread drops it");
            (before, during, mine())
        });
        let placement = take.recv().expect("the reader's thread sends it");
        let placed = placement.placed();
        drop(placement);
        dropped.send(()).expect("the reader's thread waits");
        let (before, during, after) = reader.join().expect("no panic");
        if placed {
            assert_eq!(during.len(), 1, "pinned while the read lives: {during:?}");
            assert!(before.len() > 1 && before.contains(&during[0]), "{before:?} -> {during:?}");
        } else {
            assert_eq!(during, before);
        }
        assert_eq!(after, before, "the CPUs came back");
    }
}
