//! `mapwright generate`: sitemap sets from a list, a web root, access logs or a crawl. The sources
//! produce entries; one [`Pipeline`] checks scope, applies rules and writes them through the
//! core's set writer, then reports what was written and what was left out and why.

pub mod args;
mod config;
mod crawl;
mod list;
mod robots;
mod sources;

pub use args::GenerateArgs;

use anyhow::Context;
use args::{Common, PartFormat, Source};
use config::{Config, Rules, parse_date};
use indicatif::{ProgressBar, ProgressStyle};
use mapwright_core::write::{Namespaces, SetConfig, SetFormat, SetSummary, SitemapSetWriter};
use mapwright_core::{Lastmod, Loc, Scope, UrlEntry};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub fn run(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    match args.source {
        Source::List(a) => list::run(a),
        Source::Dir(a) => sources::run_dir(a),
        Source::Logs(a) => sources::run_logs(a),
        Source::Crawl(a) => crawl::run(*a),
    }
}

/// Per-URL messages shown before they are only counted.
const SHOWN: usize = 20;

/// Scope check, rules, default lastmod and the set writer, with counts for the summary.
pub struct Pipeline {
    writer: SitemapSetWriter,
    base: Loc,
    scope: Scope,
    rules: Rules,
    default_lastmod: Option<Lastmod>,
    left_out: BTreeMap<String, u64>,
    notes: BTreeMap<String, u64>,
    shown: usize,
    quiet: bool,
    progress: Option<ProgressBar>,
    started: Instant,
    out: PathBuf,
    sitemap_base: Loc,
    robots: Option<PathBuf>,
}

/// A URL given on the command line or in the config, made a folder URL (ending in `/`).
fn folder_url(s: &str, what: &str) -> anyhow::Result<Loc> {
    let loc = Loc::parse(s.trim()).map_err(|e| anyhow::anyhow!("{what} {s:?}: {e}"))?;
    if loc.as_str().contains(['?', '#']) {
        anyhow::bail!("{what} {s:?}: a folder URL cannot have a query or fragment");
    }
    if loc.as_str().ends_with('/') {
        return Ok(loc);
    }
    Loc::parse(&format!("{loc}/")).map_err(|e| anyhow::anyhow!("{what} {s:?}: {e}"))
}

impl Pipeline {
    /// Merges flags over the config file and opens the set writer (nothing is written yet).
    pub fn new(c: &Common, cfg: &Config, url_excludes: &[String], ns: Namespaces) -> anyhow::Result<Self> {
        let base_s = c.base_url.as_deref().or(cfg.base_url.as_deref()).context(
            "--base-url is required (or base_url in mapwright.toml): the site's URL, e.g. https://example.com/",
        )?;
        let base = folder_url(base_s, "--base-url")?;
        let out =
            c.out.clone().or_else(|| cfg.out.clone()).context("--out DIR is required (or out in mapwright.toml)")?;
        let sitemap_base = match c.sitemap_url.as_deref().or(cfg.sitemap_url.as_deref()) {
            Some(s) => folder_url(s, "--sitemap-url")?,
            None => base.clone(),
        };
        let mut set = SetConfig::new(&out, sitemap_base.clone());
        if let Some(n) = c.name.clone().or_else(|| cfg.name.clone()) {
            set.name = n;
        }
        if c.gzip || cfg.gzip.unwrap_or(false) {
            set.gzip = Some(c.gzip_level.or(cfg.gzip_level).unwrap_or(6).min(9));
        }
        if c.format.or(cfg.format) == Some(PartFormat::Text) {
            set.format = SetFormat::Text;
        }
        let max_urls = c.max_urls.or(cfg.max_urls);
        if let Some(n) = max_urls {
            anyhow::ensure!((1..=50_000).contains(&n), "--max-urls {n}: must be between 1 and 50000");
            set.max_urls = n;
        }
        if let Some(b) = c.max_bytes.or(cfg.max_bytes) {
            anyhow::ensure!((1024..=52_428_800).contains(&b), "--max-bytes {b}: must be between 1024 and 52428800");
            set.max_bytes = b;
        }
        set.namespaces = ns;
        let default_lastmod = match c.default_lastmod.as_deref().or(cfg.default_lastmod.as_deref()) {
            Some(d) => Some(parse_date(d).context("--default-lastmod")?),
            None => None,
        };
        let rules = Rules::new(&cfg.rules, url_excludes)?;
        let quiet = c.quiet;
        let progress = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} {human_pos} URLs written ({per_sec}, {elapsed}) {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            pb.enable_steady_tick(Duration::from_millis(120));
            pb
        });
        let scope = Scope::of_sitemap(&base);
        let mut p = Pipeline {
            writer: SitemapSetWriter::new(set).with_context(|| format!("cannot write to {}", out.display()))?,
            base,
            scope,
            rules,
            default_lastmod,
            left_out: BTreeMap::new(),
            notes: BTreeMap::new(),
            shown: 0,
            quiet,
            progress,
            started: Instant::now(),
            out,
            sitemap_base,
            robots: c.robots.clone().or_else(|| cfg.robots.clone()),
        };
        if !Scope::of_sitemap(&p.sitemap_base).contains(&p.base) {
            let msg = format!(
                "warning: sitemaps served under {} may only list URLs under it (PROTOCOL section 5), not {}; \
                 search engines accept that only through a Sitemap: line in the site's robots.txt",
                p.sitemap_base, p.base
            );
            p.message(msg);
        }
        Ok(p)
    }

    /// The progress bar, on a terminal (a source with its own counts sets its message).
    pub fn progress_bar(&self) -> Option<&ProgressBar> {
        self.progress.as_ref()
    }

    /// The site's URL (relative inputs are resolved against it).
    pub fn base(&self) -> &Loc {
        &self.base
    }

    fn message(&mut self, msg: String) {
        if self.quiet {
            return;
        }
        match &self.progress {
            Some(pb) => pb.suspend(|| eprintln!("mapwright: {msg}")),
            None => eprintln!("mapwright: {msg}"),
        }
    }

    /// Counts an entry left out, and shows the first few messages.
    pub fn leave_out(&mut self, reason: &str, msg: impl FnOnce() -> String) {
        *self.left_out.entry(reason.to_string()).or_insert(0) += 1;
        self.shown += 1;
        if self.shown <= SHOWN {
            let m = msg();
            self.message(m);
        } else if self.shown == SHOWN + 1 {
            self.message("more URLs left out: only counted from here on (see the summary)".into());
        }
    }

    /// Counts `n` things left out in bulk (no per-item message).
    pub fn count_left_out(&mut self, reason: &str, n: u64) {
        *self.left_out.entry(reason.to_string()).or_insert(0) += n;
    }

    /// Counts something noteworthy that did not stop an entry (a repaired date).
    pub fn note(&mut self, what: &str) {
        *self.notes.entry(what.to_string()).or_insert(0) += 1;
    }

    /// Checks scope and rules and writes the entry; `place` says where it came from, for messages.
    pub fn offer(&mut self, mut e: UrlEntry, place: impl FnOnce() -> String) -> anyhow::Result<()> {
        if let Err(why) = self.scope.check(&e.loc) {
            let base = &self.base;
            let msg = format!("{}: {} is outside --base-url {base} ({}): not written", place(), e.loc, why.describe());
            self.leave_out("outside --base-url", || msg);
            return Ok(());
        }
        if !self.rules.is_empty() && !self.rules.apply(&mut e) {
            *self.left_out.entry("excluded by a pattern".into()).or_insert(0) += 1;
            return Ok(());
        }
        if e.lastmod.is_none() {
            e.lastmod.clone_from(&self.default_lastmod);
        }
        match self.writer.write(&e) {
            Ok(()) => {}
            Err(mapwright_core::Error::EntryTooLarge { size, limit, .. }) => {
                let msg = format!(
                    "{}: {} takes {size} bytes, more than a file may hold ({limit}): not written",
                    place(),
                    e.loc
                );
                self.leave_out("larger than --max-bytes", || msg);
                return Ok(());
            }
            Err(err) => return Err(err).context("writing the sitemap files"),
        }
        if let Some(pb) = &self.progress {
            if self.writer.urls() % 4096 == 0 {
                pb.set_position(self.writer.urls());
            }
        }
        Ok(())
    }

    /// Closes the set, updates robots.txt, prints the summary and the URL to announce.
    pub fn finish(self) -> anyhow::Result<ExitCode> {
        let Pipeline { writer, left_out, notes, quiet, progress, started, out, sitemap_base, robots, .. } = self;
        let summary = writer.finish().context("finishing the sitemap files")?;
        if let Some(pb) = &progress {
            pb.finish_and_clear();
        }
        let elapsed = started.elapsed();
        if summary.files.is_empty() {
            eprintln!("mapwright: no URL to write: nothing written{}", left_out_text(&left_out));
            return Ok(ExitCode::from(1));
        }
        let entry_url = sitemap_base
            .to_url()
            .join(&summary.entry_point)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| summary.entry_point.clone());
        let robots_change = match &robots {
            Some(path) => Some((path, robots::update_file(path, &entry_url)?)),
            None => None,
        };
        if !quiet {
            print_summary(&summary, &out, &entry_url, elapsed, &left_out, &notes);
            if let Some((path, change)) = robots_change {
                let what = match change {
                    robots::Change::Unchanged => "already announces",
                    robots::Change::Updated => "updated to announce",
                    robots::Change::Added => "now announces",
                };
                eprintln!("  {} {what} {entry_url}", path.display());
            }
        }
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{entry_url}")?;
        Ok(ExitCode::SUCCESS)
    }
}

fn left_out_text(left_out: &BTreeMap<String, u64>) -> String {
    if left_out.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = left_out.iter().map(|(k, v)| format!("{} {k}", thousands(*v))).collect();
    format!("; left out: {}", parts.join(", "))
}

fn print_summary(
    s: &SetSummary,
    out: &std::path::Path,
    entry_url: &str,
    elapsed: Duration,
    left_out: &BTreeMap<String, u64>,
    notes: &BTreeMap<String, u64>,
) {
    let secs = elapsed.as_secs_f64();
    eprintln!(
        "mapwright: wrote {} file{} to {} in {secs:.2} s: {} URLs ({}/s), {} ({} on disk)",
        s.files.len(),
        if s.files.len() == 1 { "" } else { "s" },
        out.display(),
        thousands(s.urls),
        thousands((s.urls as f64 / secs.max(1e-9)) as u64),
        bytes(s.bytes),
        bytes(s.disk_bytes),
    );
    eprintln!("  entry point: {} = {entry_url}", out.join(&s.entry_point).display());
    let lo = left_out_text(left_out);
    if let Some(rest) = lo.strip_prefix("; ") {
        eprintln!("  {rest}");
    }
    if !notes.is_empty() {
        let parts: Vec<String> = notes.iter().map(|(k, v)| format!("{} {k}", thousands(*v))).collect();
        eprintln!("  notes: {}", parts.join(", "));
    }
    if !s.removed.is_empty() {
        eprintln!("  removed parts of an earlier run: {}", s.removed.join(", "));
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}
