//! The argument grammar of every command (clap derive), with examples in the help.

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

/// Sitemaps end to end: read, validate, generate, discover and serve them.
#[derive(Parser, Debug)]
#[command(name = "mapwright", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Examples:\n  mapwright read sitemap.xml.gz\n  mapwright read --format csv - < sitemap.xml\n  mapwright completions bash > /etc/bash_completion.d/mapwright"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read a sitemap in any format (XML, index, text, RSS, Atom, gzip) and print its entries.
    Read(ReadArgs),
    /// Generate a sitemap set from a list of URLs, a static web root or access logs.
    Generate(Box<crate::generate::GenerateArgs>),
    /// Print shell completions.
    #[command(after_help = "Example:\n  mapwright completions zsh > ~/.zfunc/_mapwright")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Output formats of `read`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryFormat {
    /// One JSON object per entry.
    Jsonl,
    /// A header line, then the scalar columns.
    Csv,
    /// One loc per line.
    Text,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  mapwright read sitemap.xml\n  mapwright read --format text sitemap.xml.gz | wc -l\n  curl -s https://example.com/sitemap.xml | mapwright read - --url https://example.com/sitemap.xml --strict"
)]
pub struct ReadArgs {
    /// A file path, or - for standard input. Format and compression are detected from content.
    pub source: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: EntryFormat,
    /// Where the file was served from; scope (PROTOCOL.md section 5) is judged against it.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Drop URLs outside the scope of --url, each with a diagnostic, as search engines do.
    #[arg(long, requires = "url")]
    pub strict: bool,
    /// Stop after this many uncompressed bytes (default: the protocol's 52,428,800).
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    /// Do not print diagnostics.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn completions(shell: clap_complete::Shell) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "mapwright", &mut std::io::stdout());
}
