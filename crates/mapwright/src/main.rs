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

/// No transparent huge pages for this process. mimalloc asks for them (`madvise`) on its
/// arenas, and with the purge delay at 0 a page freed and used again is a fresh fault: the
/// kernel zeroed a whole 2 MiB page each time, 6% of the CPU of `discover --sites`, and the
/// huge pages held a quarter of its peak RSS (bench/discover/RESULTS.md). The setting is checked
/// at each fault, so arenas mapped before `main` are covered too.
fn no_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    // Freed pages go back to the OS at once rather than 10 ms later: with many threads each
    // keeping its own, `discover --sites` over 10,000 sites peaked at 366-370 MB with the
    // delay and 264 MB without, at the same wall time (bench/discover/RESULTS.md).
    #[allow(unsafe_code)]
    // SAFETY: sets one integer option of the allocator; callable at any time, from any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0)
    };
    no_huge_pages();
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Read(args) => read::run(args),
        cli::Command::Discover(args) => discover::run(args),
        cli::Command::Submit(args) => submit::run(args),
        cli::Command::Validate(args) => validate::run(args),
        cli::Command::Generate(args) => generate::run(*args),
        cli::Command::Serve(args) => serve::run(*args),
        cli::Command::Completions { shell } => {
            cli::completions(shell);
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mapwright: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
