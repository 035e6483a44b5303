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
    /// Check sitemaps against every rule of the catalogue; exit 0 (valid), 1 (errors), 2 (could not run).
    Validate(ValidateArgs),
    /// Run the sitemap service: the JSON API and the public ping, on SQLite or PostgreSQL.
    Serve(crate::serve::ServeArgs),
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

/// Output formats of `validate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidateFormat {
    /// Compiler-style lines with the offending source line, and a summary.
    Text,
    /// One JSON document: findings and summary (the shape of RULES.md).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 could not run.\n\nExamples:\n  mapwright validate public/sitemap.xml --url https://example.com/sitemap.xml\n  mapwright validate public/sitemap_index.xml --url https://example.com/sitemap_index.xml --follow\n  mapwright validate --format sarif dist/*.xml > mapwright.sarif\n  mapwright validate --explain loc-out-of-scope"
)]
pub struct ValidateArgs {
    /// Sitemap files (XML, index, text, RSS, Atom; gzipped or not), or - for standard input.
    #[arg(required_unless_present_any = ["list_rules", "explain"])]
    pub sources: Vec<PathBuf>,
    /// The URL a SOURCE is (or will be) served at: enables the scope rules. Give one per SOURCE, in order.
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ValidateFormat,
    /// Validate the children of an index too: local files found through --url (the index's URL maps onto its folder).
    #[arg(long)]
    pub follow: bool,
    /// Stop reading a file after this many uncompressed bytes (default: the protocol's 52,428,800).
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    /// Print the catalogue of rules and exit.
    #[arg(long, exclusive = true)]
    pub list_rules: bool,
    /// Print what RULE checks, why it matters and how to fix it, and exit.
    #[arg(long, value_name = "RULE", exclusive = true)]
    pub explain: Option<String>,
}

pub fn completions(shell: clap_complete::Shell) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "mapwright", &mut std::io::stdout());
}
