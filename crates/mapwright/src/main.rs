//! The `mapwright` command line: one module per command; only this crate prints or exits.

mod cli;
mod discover;
mod generate;
mod http;
mod output;
mod read;
mod remote;
mod serve;
mod submit;
mod validate;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc, not glibc's malloc: `discover --sites` allocates URLs on one thread and frees
/// them on another, which glibc served from ever more fragmented per-thread arenas (a sixth
/// of the CPU in malloc and free, peak memory growing with the run): see
/// bench/discover/RESULTS.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (15 in both the v2 and v3 headers it builds,
/// `libmimalloc-sys` names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// mimalloc's `mi_option_arena_reserve` (23 in the v3 header it builds), in KiB.
const MI_OPTION_ARENA_RESERVE: libmimalloc_sys::mi_option_t = 23;
/// The first arena's size: 64 MiB rather than 1 GiB. Each arena's bitmaps are set up when it is
/// reserved, and those of a 1 GiB arena are about 40 pages every process faults in, a tenth of
/// a one-URL `read`'s page faults. Later arenas grow (mimalloc doubles the size every eighth
/// one), so a server that needs gigabytes still reserves them in a few dozen steps.
const ARENA_RESERVE_KIB: std::ffi::c_long = 64 * 1024;

/// No transparent huge pages for this process. mimalloc asks for them (`madvise`) on its
/// arenas, and with the purge delay at 0 a page freed and used again is a fresh fault: the
/// kernel zeroed a whole 2 MiB page each time, 6% of the CPU of `discover --sites`, and the
/// huge pages held a quarter of its peak RSS (bench/discover/RESULTS.md).
fn no_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// The allocator's settings, made before the first allocation. Freed pages go back to the OS
/// at once rather than 10 ms later: with many threads each keeping its own, `discover --sites`
/// over 10,000 sites peaked at 366-370 MB with the delay and 264 MB without, at the same wall
/// time (bench/discover/RESULTS.md). And no huge pages, from the first: the Rust runtime
/// allocates before `main`, and in `main` the prctl came after mimalloc had touched its first
/// arena and its first page, two 2 MiB pages the kernel zeroed in every process (about 0.8 ms
/// of a 4.5 ms `read` of a one-URL file, the start-up every short command pays).
extern "C" fn before_main() {
    allocator_option(MI_OPTION_PURGE_DELAY, 0);
    allocator_option(MI_OPTION_ARENA_RESERVE, ARENA_RESERVE_KIB);
    no_huge_pages();
}

/// Sets one of mimalloc's integer options.
fn allocator_option(option: libmimalloc_sys::mi_option_t, value: std::ffi::c_long) {
    #[allow(unsafe_code)]
    // SAFETY: sets one integer option of the allocator; callable at any time, from any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(option, value)
    };
}

/// From here on nothing freed is given back to the OS: it goes with the process. Called once
/// a command's work is done (what is freed then, the command line, the allocator's own pages
/// at exit, were one `madvise` each with the purge delay at 0, 28 of them after a `read` of
/// 50,000 URLs, each a system call and a TLB flush for memory about to be unmapped anyway),
/// and before `read` and `validate` start, whose memory is bounded by construction (buffers
/// that circulate): their worker thread's pages were 17 `madvise`s when it ended, each flushing
/// the other CPU's TLB, while the reader waited to join it.
fn keep_freed_memory() {
    allocator_option(MI_OPTION_PURGE_DELAY, -1);
}

/// [`before_main`] as a constructor: the loader runs `.init_array` after libc's set-up and
/// before the Rust runtime's, whose allocations are mimalloc's first (the allocator is this
/// binary's global allocator only; it does not replace libc's `malloc`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[allow(unsafe_code)]
#[unsafe(link_section = ".init_array")]
static BEFORE_MAIN: extern "C" fn() = before_main;

fn main() -> ExitCode {
    // Where no constructor runs (other targets), the settings come first in `main`.
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    before_main();
    // `read` names itself first (there are no global options): its worker starts now, while
    // the rest of the command line is parsed and the file opened (`start_worker_early`).
    if std::env::args_os().nth(1).is_some_and(|a| a == "read") {
        mapwright_core::read::start_worker_early();
    }
    let cli = cli::Cli::parse();
    if matches!(cli.command, cli::Command::Read(_) | cli::Command::Validate(_)) {
        // One file (or one tree) read at a time, nothing else running while it waits.
        mapwright_core::read::nothing_else_runs();
        keep_freed_memory();
    }
    let result = match cli.command {
        cli::Command::Read(args) => read::run(args.0),
        cli::Command::Discover(args) => discover::run(args.0),
        cli::Command::Submit(args) => submit::run(args.0),
        cli::Command::Validate(args) => validate::run(args.0),
        cli::Command::Generate(args) => generate::run(*args.0),
        cli::Command::Serve(args) => serve::run(*args.0),
        cli::Command::Completions { shell } => {
            cli::completions(shell);
            Ok(ExitCode::SUCCESS)
        }
    };
    keep_freed_memory();
    match result {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mapwright: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
