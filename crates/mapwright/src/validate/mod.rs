//! `mapwright validate`: check sitemaps against every rule of the catalogue and report the
//! findings as compiler-style text, the JSON document of RULES.md, or SARIF 2.1.0.
//!
//! The checks live in `mapwright_core::validate`; this module opens the sources, maps index
//! children onto local files for `--follow`, and formats.

mod progress;
mod resolve;
mod text;

use crate::cli::{ValidateArgs, ValidateFormat};
use anyhow::bail;
use mapwright_core::read::Input;
use mapwright_core::validate::{self, Config, Report, Resolver, Validator, validate_tree};
use mapwright_core::{Limits, Loc, ReadOptions, Rule, Voucher};
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

    fn is_remote(&self) -> bool {
        self.path.to_str().is_some_and(crate::http::is_url)
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
    args.oai.limit(&mut limits);
    let mut report = Report::new();
    let mut failed: Vec<(String, io::Error)> = Vec::new();
    let mut texts = text::SourceLines::default();
    let progress = progress::Progress::new();
    let need_http = args.check_urls || sources.iter().any(Source::is_remote);
    let opener = if need_http { Some(crate::remote::opener(args.max_bytes, &args.oai)?) } else { None };
    for src in &sources {
        let name = src.name();
        // A URL SOURCE is fetched (remote.rs); its scope is --url if given, else its final URL.
        let mut sitemap_url = src.url.clone();
        let mut final_url = None;
        let mut pager = None;
        let remote_input = match (&opener, src.is_remote()) {
            (Some(o), true) => match o.open(&name) {
                Ok(r) => {
                    sitemap_url = sitemap_url.or_else(|| Loc::parse(&r.final_url).ok());
                    final_url = Some(r.final_url.clone());
                    pager = Some(r.pager.clone());
                    Some(progress.track(&name, None, Box::new(r)))
                }
                Err(e) => {
                    failed.push((name, io::Error::other(e.to_string())));
                    continue;
                }
            },
            _ => None,
        };
        // Who vouches (PROTOCOL.md section 5): --vouched, else for a URL its host's robots.txt
        // (asked as `discover` asks it), else nobody. --follow gives it to the children.
        let vouched = crate::remote::vouched_arg(args.vouched.as_deref(), sitemap_url.as_ref())?;
        let voucher = match (vouched, &opener, &final_url) {
            (Some(v), _, _) => v,
            (None, Some(o), Some(f)) => o.voucher(&name, f),
            _ => Voucher::Nobody,
        };
        let config = Config {
            sitemap_url: sitemap_url.clone(),
            voucher,
            read: ReadOptions { limits: limits.clone() },
            pager,
            ..Config::default()
        };
        let validator = Validator::new(config);
        let input = match remote_input.map_or_else(|| src.open(&progress), Ok) {
            Ok(i) => i,
            Err(e) => {
                failed.push((name, e));
                continue;
            }
        };
        if sitemap_url.is_none() {
            report.note(&name, "scope not checked (loc-out-of-scope, index-cross-site): give --url with the URL this file is served at");
        }
        let mut remote_resolver = match (&opener, src.is_remote() && args.follow) {
            (Some(o), true) => Some(mapwright_fetch::RemoteResolver::new(o.clone())),
            _ => None,
        };
        let mut resolver = match (&src.url, src.is_stdin(), args.follow && !src.is_remote()) {
            (Some(url), false, true) => Some(resolve::LocalResolver::new(&src.path, url, progress.clone())),
            (_, _, true) => {
                report.note(&name, "--follow needs --url and a file path (not -) to find the children of an index");
                None
            }
            _ => None,
        };
        let r = match (resolver.as_mut(), remote_resolver.as_mut()) {
            (Some(l), _) => Some(l as &mut dyn Resolver),
            (None, Some(r)) => Some(r as &mut dyn Resolver),
            _ => None,
        };
        failed.extend(validate_tree(&validator, &name, Input::owned(input), r, &mut report));
        if !src.is_stdin() && !src.is_remote() {
            texts.register(&name, &src.path);
        }
        // Files validated for this SOURCE (itself and the children followed), for --check-urls.
        let mut checked = vec![name.clone()];
        if let Some(resolver) = resolver {
            for (child, path) in resolver.opened() {
                texts.register(child, path);
                checked.push(child.to_string());
            }
        }
        if let Some(r) = remote_resolver {
            checked.extend(r.opened);
        }
        if let (Some(o), true) = (&opener, args.check_urls && !src.is_stdin()) {
            for file in checked {
                let findings = if crate::http::is_url(&file) {
                    o.check_urls_of(&file, &limits).map_err(anyhow::Error::msg)
                } else {
                    File::open(&file)
                        .map_err(anyhow::Error::from)
                        .and_then(|f| Ok(mapwright_fetch::remote::listed_urls(BufReader::new(f), &limits)?))
                        .map(|urls| o.check(urls))
                };
                match findings {
                    Ok(fs) => fs.into_iter().for_each(|f| report.push(&file, f)),
                    Err(e) => report.note(&file, format!("URLs not checked: {e:#}")),
                }
            }
        } else if args.check_urls {
            report.note(&name, "--check-urls needs a file or a URL (standard input is read once)");
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
            serde_json::to_writer_pretty(&mut out, &validate::sarif(&report))?;
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
