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

fn main() -> ExitCode {
    // Freed pages go back to the OS at once rather than 10 ms later: with many threads each
    // keeping its own, `discover --sites` over 10,000 sites peaked at 366-370 MB with the
    // delay and 264 MB without, at the same wall time (bench/discover/RESULTS.md).
    #[allow(unsafe_code)]
    // SAFETY: sets one integer option of the allocator; callable at any time, from any thread.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0)
    };
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
