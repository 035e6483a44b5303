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
    Read(Deferred<ReadArgs>),
    /// Find a site's sitemaps (robots.txt, usual paths, indexes) and list every URL they give.
    Discover(Deferred<DiscoverArgs>),
    /// Announce a sitemap: ping an endpoint, or post its URLs by IndexNow.
    Submit(Deferred<SubmitArgs>),
    /// Check sitemaps against every rule of the catalogue; exit 0 (valid), 1 (errors), 2 (could not run).
    Validate(Deferred<ValidateArgs>),
    /// Generate a sitemap set from a list of URLs, a static web root or access logs.
    Generate(Deferred<Box<crate::generate::GenerateArgs>>),
    /// Run the sitemap service: the JSON API and the public ping, on SQLite or PostgreSQL.
    Serve(Deferred<Box<crate::serve::ServeArgs>>),
    /// Print shell completions.
    #[command(after_help = "Example:\n  mapwright completions zsh > ~/.zfunc/_mapwright")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// A command's arguments, added to its `clap::Command` only when that command is the one run
/// (or its help, or the completions, asks for them): building every command's arguments was
/// about a fifth of the page faults of a short `read` (110 of 603), each command paying for
/// all the others'. clap applies the deferred part wherever it builds a command (parsing into
/// it, help, suggestions, completions), so the grammar is the same.
#[derive(Debug)]
pub struct Deferred<T>(pub T);

/// Set by [`completions`]: every command's arguments added when its `clap::Command` is made.
static EAGER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl<T: clap::Args> clap::Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        defer(cmd, |cmd| keep_about(cmd, T::augment_args))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        defer(cmd, |cmd| keep_about(cmd, T::augment_args_for_update))
    }
}

fn defer(cmd: clap::Command, augment: fn(clap::Command) -> clap::Command) -> clap::Command {
    if EAGER.load(std::sync::atomic::Ordering::Relaxed) { augment(cmd) } else { cmd.defer(augment) }
}

/// `augment` applied after the command's own description, which it must not replace: built
/// eagerly, the arguments came first and the variant's doc comment after, so a flattened
/// group's doc comment (`OaiArgs`') never became the command's `about`.
fn keep_about(cmd: clap::Command, augment: fn(clap::Command) -> clap::Command) -> clap::Command {
    use clap::builder::Resettable;
    let text = |s: Option<&clap::builder::StyledStr>| s.cloned().map_or(Resettable::Reset, Resettable::Value);
    let (about, long_about) = (text(cmd.get_about()), text(cmd.get_long_about()));
    augment(cmd).about(about).long_about(long_about)
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }
    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
    fn update_from_arg_matches_mut(&mut self, matches: &mut clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
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
    /// Apache Parquet, written to --out FILE: the jsonl columns (the extensions as nested
    /// lists), row group by row group as the rows come, so memory stays flat.
    Parquet,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 entries read, 1 a fault in the file or no entry at all (standard error says why), \
2 bad arguments or a source that cannot be opened.\n\n\
Examples:\n  mapwright read sitemap.xml\n  mapwright read --format text sitemap.xml.gz | wc -l\n  \
curl -s https://example.com/sitemap.xml | mapwright read - --url https://example.com/sitemap.xml --strict\n  \
mapwright read sitemaps/pages.xml --url https://example.com/sitemaps/pages.xml --strict --vouched   # named in robots.txt\n  \
mapwright read --format parquet --out entries.parquet sitemap.xml.gz"
)]
pub struct ReadArgs {
    /// A file path, an http(s) URL, or - for standard input. Format and compression are
    /// detected from content.
    pub source: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: EntryFormat,
    /// Write the entries to FILE instead of standard output (needed by --format parquet).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Where the file was served from (for an http(s) SOURCE: its URL after redirects). The
    /// URLs a sitemap may list are judged against it: same scheme, host and port, and a path
    /// under the sitemap's folder, unless a robots.txt vouches for it (see --vouched).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Drop URLs outside the scope of --url (of the SOURCE URL when it is one), each with a
    /// diagnostic, as search engines do.
    #[arg(long)]
    pub strict: bool,
    /// This sitemap is named by a `Sitemap:` line of its host's robots.txt (or reached through
    /// an index named there), so it may list any URL of that host, whatever its folder.
    /// `--vouched=ORIGIN` names another host whose robots.txt names it (cross-submission): it
    /// may then list URLs of ORIGIN only. For an http(s) SOURCE the host's robots.txt is
    /// looked up when this is not given.
    #[arg(long, value_name = "ORIGIN", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub vouched: Option<String>,
    /// Stop after this many uncompressed bytes (default: the protocol's 52,428,800).
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    /// Print each `loc` in its normal form (scheme and host lower-cased, default port dropped,
    /// `/` added to a bare origin, dot segments resolved, escapes as `url` writes them)
    /// instead of as the file wrote it: the form deduplication and scope compare.
    #[arg(long)]
    pub normalized: bool,
    /// Do not print diagnostics.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub oai: OaiArgs,
}

/// How the list of records of an OAI-PMH repository (its base URL, read wherever a sitemap URL
/// is) is paged: bounded, so a resumption token that never ends cannot hold a run.
#[derive(clap::Args, Debug, Clone)]
pub struct OaiArgs {
    /// Pages of an OAI-PMH list of records asked for at most; a list that goes on past them
    /// is a failed read, which says so.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub oai_max_pages: u32,
    /// Seconds waited before asking an OAI-PMH repository for each further page.
    #[arg(long, value_name = "SECS", default_value_t = 0.2, value_parser = seconds)]
    pub oai_pause: f64,
}

impl OaiArgs {
    /// Sets the page limit on a reader's limits.
    pub fn limit(&self, limits: &mut mapwright_core::Limits) {
        limits.max_pages = self.oai_max_pages;
    }

    /// Sets the pause on an HTTP configuration.
    pub fn pause(&self, config: &mut mapwright_fetch::Config) {
        config.oai_page_pause = std::time::Duration::try_from_secs_f64(self.oai_pause).unwrap_or(config.timeout);
    }
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Output: one line per distinct URL (jsonl has a `sitemap` field: the sitemap it came from; with --sites, a \
`site` field too); a summary on standard error. Exit status 1 when a sitemap failed or none was found (with --sites: when \
a site failed); 2 when the run could not start (with --sites: a list that names no site).\n\n\
Examples:\n  mapwright discover https://example.com/ > urls.jsonl\n  mapwright discover --format text example.com | wc -l\n  \
mapwright discover --sitemaps-only https://example.com/\n  \
mapwright discover --sitemap https://example.com/sitemap_index.xml\n  \
mapwright discover --state site.db --changes https://example.com/   # added/removed since the last run\n  \
mapwright discover --sites hosts.txt --out urls.jsonl --summary sites.jsonl --state run.db --shard 1/4\n  \
mapwright discover --sites hosts.txt --format parquet --out urls.parquet --summary sites.jsonl"
)]
pub struct DiscoverArgs {
    /// The site: any URL of it (its origin's robots.txt is read first). `https://` is assumed
    /// when no scheme is given.
    #[arg(value_name = "SITE_URL", value_parser = site_url, required_unless_present_any = ["sitemap", "sites"])]
    pub site: Option<String>,
    /// Start from this sitemap (or index) instead of robots.txt; repeat for several.
    #[arg(long, value_name = "URL", conflicts_with = "site")]
    pub sitemap: Vec<String>,
    /// Discover every site listed in FILE (- for standard input): one site per line (any URL
    /// of it, `https://` assumed), blank lines and lines starting with # skipped. The list is
    /// read as it goes; each row gets a `site` column; a site's rows come out together, once
    /// it is done.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["site", "sitemap", "changes"])]
    pub sites: Option<PathBuf>,
    /// With --sites: sites discovered at the same time (each keeps --concurrency and its
    /// robots.txt Crawl-delay).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "sites")]
    pub hosts_in_flight: usize,
    /// With --sites: one JSON line per site in FILE (sitemaps, URLs, errors, bytes, time, why
    /// it ended). A site that yields no URL is a failure there, and makes the exit status 1.
    #[arg(long, value_name = "FILE", requires = "sites")]
    pub summary: Option<PathBuf>,
    /// With --sites: keep only the sites whose hash (xxh3-64 of the site URL as normalised)
    /// falls in shard K of N (K from 1 to N), so N machines split one list without talking.
    #[arg(long, value_name = "K/N", value_parser = shard, requires = "sites")]
    pub shard: Option<(u64, u64)>,
    /// Seconds one site's discovery may take, robots.txt included: past it the site stops,
    /// the URLs found before stay, and its summary line says `"ended": "deadline"` (a host
    /// that trickles bytes just inside every request timeout would otherwise hold its slot
    /// for hours). 0 for no limit. Default: 600 with --sites, no limit for one site.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub site_deadline: Option<f64>,
    /// Write the rows to FILE instead of standard output (needed by --format parquet, and by
    /// --state with --sites). Parquet rows of --sites come as sites give them (sort by `site`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: EntryFormat,
    /// List the sitemaps found (with their status) instead of URLs.
    #[arg(long)]
    pub sitemaps_only: bool,
    /// Requests in flight per host.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    /// Deepest index nesting followed.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_depth: usize,
    /// Sitemaps fetched at most.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_sitemaps: usize,
    /// Distinct URLs output at most.
    #[arg(long, value_name = "N", default_value_t = 50_000_000)]
    pub max_urls: u64,
    /// Drop every out-of-scope URL, even when its host's robots.txt names the sitemap.
    #[arg(long)]
    pub no_cross_submission: bool,
    /// Keep URLs outside their sitemap's scope (other host, scheme, port or folder), as most
    /// sitemap libraries do; by default they are dropped, as search engines drop them. A
    /// sitemap named in a host's robots.txt, or reached through an index named there, may
    /// list any URL of that host; one nobody vouches for, only URLs under its own folder.
    #[arg(long)]
    pub no_scope: bool,
    /// Incremental mode: remember ETag, Last-Modified, index lastmod and the URL set in this
    /// SQLite file; the next run fetches only what changed. With --sites: record each site
    /// once its rows are written, so a killed run, started again with the same arguments,
    /// goes on with the sites not done (the outputs are cut back to the last site recorded).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// With --state: print only the URLs added or removed since the last run.
    #[arg(long, requires = "state")]
    pub changes: bool,
    /// Print each `loc` in its normal form (scheme and host lower-cased, default port dropped,
    /// `/` added to a bare origin, dot segments resolved, escapes as `url` writes them)
    /// instead of as the file wrote it: the form deduplication and scope compare.
    #[arg(long)]
    pub normalized: bool,
    /// No diagnostics, progress or summary on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub http: crate::http::HttpArgs,
    #[command(flatten)]
    pub oai: OaiArgs,
}

/// A number of seconds, 0 or more.
fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds (0 or more)")),
    }
}

/// `K/N`, 1 <= K <= N.
fn shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{s:?} is not K/N with 1 <= K <= N (e.g. 2/4)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (u64, u64) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if k == 0 || k > n { Err(bad()) } else { Ok((k, n)) }
}

pub fn site_url(s: &str) -> Result<String, String> {
    let s = s.trim();
    let full = if crate::http::is_url(s) { s.to_string() } else { format!("https://{s}") };
    url::Url::parse(&full).map(|_| full).map_err(|e| format!("{s:?} is not a site URL: {e}"))
}

/// Output formats of `validate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidateFormat {
    /// Compiler-style lines with the offending source line, and a summary.
    Text,
    /// One JSON document: findings, per-rule counts and a summary (described in docs/RULES.md).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

#[derive(clap::Args, Debug)]
#[command(
    group(clap::ArgGroup::new("how").required(true).multiple(true).args(["ping", "indexnow"])),
    after_help = "Examples:\n  mapwright submit https://example.com/sitemap.xml --ping https://www.bing.com/ping\n  \
mapwright submit https://example.com/sitemap.xml --indexnow https://api.indexnow.org/indexnow --key 0123456789abcdef --since 2024-05-01"
)]
pub struct SubmitArgs {
    /// The sitemap's URL.
    #[arg(value_name = "SITEMAP_URL")]
    pub sitemap: String,
    /// Send `ENDPOINT?sitemap=<URL-encoded sitemap URL>`; a 200 means received, not valid.
    #[arg(long, value_name = "ENDPOINT")]
    pub ping: Option<String>,
    /// POST the sitemap's URLs to this IndexNow endpoint, in batches of 10,000 per host.
    #[arg(long, value_name = "ENDPOINT", requires = "key")]
    pub indexnow: Option<String>,
    /// The IndexNow key (the site serves it at /KEY.txt, or at --key-location).
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Where the key file is, when not at /KEY.txt.
    #[arg(long, value_name = "URL")]
    pub key_location: Option<String>,
    /// Only URLs whose lastmod is at or after this date (W3C Datetime).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    #[command(flatten)]
    pub http: crate::http::HttpArgs,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 could not run.\n\nExamples:\n  mapwright validate public/sitemap.xml --url https://example.com/sitemap.xml\n  mapwright validate public/sitemap_index.xml --url https://example.com/sitemap_index.xml --follow\n  mapwright validate --format sarif dist/*.xml > mapwright.sarif\n  mapwright validate https://example.com/sitemap_index.xml --follow --check-urls\n  mapwright validate --explain loc-out-of-scope"
)]
pub struct ValidateArgs {
    /// Sitemap files (XML, index, text, RSS, Atom; gzipped or not), http(s) URLs (scope is then
    /// judged on the URL after redirects), or - for standard input.
    #[arg(required_unless_present_any = ["list_rules", "explain"])]
    pub sources: Vec<PathBuf>,
    /// The URL a SOURCE is (or will be) served at: enables the scope rules. Give one per SOURCE, in order.
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,
    /// Every SOURCE is named by a `Sitemap:` line of its host's robots.txt, so it (and, with
    /// --follow, every child of it) may list any URL of that host, whatever its folder.
    /// `--vouched=ORIGIN`: the robots.txt of ORIGIN names it (cross-submission), so it may list
    /// URLs of ORIGIN only. For a URL SOURCE its host's robots.txt is looked up when this is not given.
    #[arg(long, value_name = "ORIGIN", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub vouched: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ValidateFormat,
    /// Validate the children of an index too: local files found through --url (the index's URL maps onto its folder),
    /// or fetched when SOURCE is a URL.
    #[arg(long)]
    pub follow: bool,
    /// Check every listed URL live (HEAD, else GET; politely per host): url-status, url-noindex, robots-disallowed.
    #[arg(long)]
    pub check_urls: bool,
    /// Stop reading a file after this many uncompressed bytes (default: the protocol's 52,428,800).
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    #[command(flatten)]
    pub oai: OaiArgs,
    /// Print the catalogue of rules and exit.
    #[arg(long, exclusive = true)]
    pub list_rules: bool,
    /// Print what RULE checks, why it matters and how to fix it, and exit.
    #[arg(long, value_name = "RULE", exclusive = true)]
    pub explain: Option<String>,
}

pub fn completions(shell: clap_complete::Shell) {
    // The completions cover `help COMMAND SUBCOMMAND` too, a tree clap copies from each
    // command's subcommands when it builds the top one, before it builds them: so here every
    // command's arguments and subcommands are added at once.
    EAGER.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "mapwright", &mut std::io::stdout());
}

#[cfg(test)]
mod tests {
    /// clap's own checks of the whole grammar, every deferred command's arguments built.
    #[test]
    fn the_grammar_passes_clap_s_checks() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }

    /// Each command's description is its variant's doc comment once its deferred arguments are
    /// built, not a flattened group's.
    #[test]
    fn building_a_command_keeps_its_description() {
        let mut cmd = <super::Cli as clap::CommandFactory>::command();
        let before: Vec<_> =
            cmd.get_subcommands().map(|c| (c.get_name().to_string(), c.get_about().map(|a| a.to_string()))).collect();
        cmd.build();
        // Building adds clap's own `help` command; the others keep their descriptions.
        let after: Vec<_> = cmd
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .map(|c| (c.get_name().to_string(), c.get_about().map(|a| a.to_string())))
            .collect();
        assert_eq!(before, after);
        assert!(before.iter().all(|(_, about)| about.is_some()), "{before:?}");
        let read = cmd.find_subcommand("read").expect("read");
        assert!(read.get_arguments().any(|a| a.get_id() == "oai_max_pages"), "read's arguments were built");
    }
}
