//! The `mapwright` command line: one module per command; only this crate prints or exits.

mod cli;
mod output;
mod read;
mod serve;
mod validate;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Read(args) => read::run(args),
        cli::Command::Validate(args) => validate::run(args),
        cli::Command::Serve(args) => serve::run(args),
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
