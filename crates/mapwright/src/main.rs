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

fn main() -> ExitCode {
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
