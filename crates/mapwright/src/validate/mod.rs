//! `mapwright validate`: check sitemaps against every rule of the catalogue and report the
//! findings as compiler-style text, the JSON document of RULES.md, or SARIF 2.1.0.
//!
//! The checks live in `mapwright_core::validate`; this module opens the sources, maps index
//! children onto local files for `--follow`, and formats.

mod progress;
mod resolve;
mod sarif;
mod text;

use crate::cli::{ValidateArgs, ValidateFormat};
use anyhow::bail;
use mapwright_core::validate::{self, Config, Report, Resolver, Validator, validate_tree};
use mapwright_core::{Limits, Loc, ReadOptions, Rule};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// One source to validate, with the URL it is served at, if known.
struct Source {
    path: PathBuf,
    url: Option<Loc>,
}

impl Source {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn is_stdin(&self) -> bool {
        self.path.as_os_str() == "-"
    }

    fn open(&self, progress: &progress::Progress) -> io::Result<Box<dyn BufRead + Send>> {
        Ok(if self.is_stdin() {
            progress.track("-", None, Box::new(BufReader::with_capacity(64 * 1024, io::stdin())))
        } else {
            let file = File::open(&self.path)?;
            let len = file.metadata().ok().map(|m| m.len());
            progress.track(&self.name(), len, Box::new(BufReader::with_capacity(64 * 1024, file)))
        })
    }
}

pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    if args.list_rules {
        text::list_rules(&mut anstream::stdout().lock())?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.explain {
        let Some(rule) = Rule::from_name(name) else {
            let near: Vec<&str> = Rule::ALL
                .iter()
                .map(|r| r.as_str())
                .filter(|r| r.contains(name.as_str()) || name.contains(*r))
                .collect();
            bail!(
                "no rule named {name:?}{}; `mapwright validate --list-rules` prints them all",
                if near.is_empty() { String::new() } else { format!(" (did you mean {}?)", near.join(", ")) }
            );
        };
        text::explain(&mut anstream::stdout().lock(), rule)?;
        return Ok(ExitCode::SUCCESS);
    }
    let sources = sources(&args)?;
    let mut limits = Limits::default();
    if let Some(b) = args.max_bytes {
        limits.max_bytes = b;
    }
    let mut report = Report::new();
    let mut failed: Vec<(String, io::Error)> = Vec::new();
    let mut texts = text::SourceLines::default();
    let progress = progress::Progress::new();
    for src in &sources {
        let name = src.name();
        let config =
            Config { sitemap_url: src.url.clone(), read: ReadOptions { limits: limits.clone() }, ..Config::default() };
        let validator = Validator::new(config);
        let input = match src.open(&progress) {
            Ok(i) => i,
            Err(e) => {
                failed.push((name, e));
                continue;
            }
        };
        if src.url.is_none() {
            report.note(&name, "scope not checked (loc-out-of-scope, index-cross-site): give --url with the URL this file is served at");
        }
        let mut resolver = match (&src.url, src.is_stdin(), args.follow) {
            (Some(url), false, true) => Some(resolve::LocalResolver::new(&src.path, url, progress.clone())),
            (_, _, true) => {
                report.note(&name, "--follow needs --url and a file path (not -) to find the children of an index");
                None
            }
            _ => None,
        };
        let r = resolver.as_mut().map(|r| r as &mut dyn Resolver);
        failed.extend(validate_tree(&validator, &name, input, r, &mut report));
        if !src.is_stdin() {
            texts.register(&name, &src.path);
        }
        if let Some(resolver) = resolver {
            for (child, path) in resolver.opened() {
                texts.register(child, path);
            }
        }
    }
    progress.finish();
    let stdout = anstream::stdout();
    let mut out = stdout.lock();
    match args.format {
        ValidateFormat::Text => text::write(&mut out, &report, &mut texts, failed.len())?,
        ValidateFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        ValidateFormat::Sarif => {
            serde_json::to_writer_pretty(&mut out, &sarif::log(&report))?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    if !failed.is_empty() {
        let mut err = anstream::stderr().lock();
        for (name, e) in &failed {
            writeln!(err, "mapwright: error: cannot read {name}: {e}")?;
        }
        return Ok(ExitCode::from(2));
    }
    Ok(if report.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Pairs each SOURCE with its `--url` (in order); a mismatch is a usage error.
fn sources(args: &ValidateArgs) -> anyhow::Result<Vec<Source>> {
    if args.sources.is_empty() {
        bail!("no SOURCE given: name a sitemap file, or - for standard input");
    }
    if !args.url.is_empty() && args.url.len() != args.sources.len() {
        bail!(
            "{} --url for {} SOURCE: give one --url per SOURCE, in the same order, or none",
            args.url.len(),
            args.sources.len()
        );
    }
    if let Some(remote) =
        args.sources.iter().find(|p| p.to_str().is_some_and(|s| s.starts_with("http://") || s.starts_with("https://")))
    {
        bail!(
            "{} is a URL: remote sitemaps are not fetched yet; download it and validate the file, or pipe it: curl -s URL | mapwright validate - --url URL",
            remote.display()
        );
    }
    let mut out = Vec::new();
    for (i, path) in args.sources.iter().enumerate() {
        let url = match args.url.get(i) {
            Some(u) => Some(Loc::parse(u).map_err(|e| anyhow::anyhow!("--url {u:?}: {e}"))?),
            None => None,
        };
        out.push(Source { path: path.clone(), url });
    }
    if out.iter().filter(|s| s.is_stdin()).count() > 1 {
        bail!("standard input (-) can be read only once");
    }
    Ok(out)
}

/// The catalogue rule names with their severities, for `--list-rules` and SARIF.
pub(crate) fn rule_help(rule: Rule) -> String {
    let e = validate::explain(rule);
    format!("{}\n\nWhy: {}\n\nFix: {}", e.checks, e.why, e.fix)
}
