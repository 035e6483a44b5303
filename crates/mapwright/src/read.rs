//! `mapwright read`: stream the entries of one sitemap to standard output.

use crate::cli::ReadArgs;
use crate::output::{EntryWriter, print_finding};
use anyhow::Context;
use mapwright_core::{Finding, Limits, Loc, ReadOptions, Rule, Scope, Severity, SitemapReader};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::ExitCode;

pub fn run(mut args: ReadArgs) -> anyhow::Result<ExitCode> {
    let name = args.source.display().to_string();
    // An http(s) SOURCE is streamed (remote.rs); its scope is its URL after redirects.
    let remote =
        if crate::http::is_url(&name) { Some(crate::remote::Opener::new(args.max_bytes)?.open(&name)?) } else { None };
    if let (Some(r), None) = (&remote, &args.url) {
        args.url = Some(r.final_url.clone());
    }
    let scope = match &args.url {
        Some(u) => Some(Scope::of_sitemap(&Loc::parse(u).map_err(|e| anyhow::anyhow!("--url {u:?}: {e}"))?)),
        None => None,
    };
    let mut limits = Limits::default();
    if let Some(b) = args.max_bytes {
        limits.max_bytes = b;
    }
    let options = ReadOptions { limits };
    let input: Box<dyn io::BufRead + Send> = if let Some(r) = remote {
        Box::new(r)
    } else if name == "-" {
        Box::new(BufReader::with_capacity(64 * 1024, io::stdin()))
    } else {
        let f = File::open(&args.source).with_context(|| format!("cannot open {name}"))?;
        Box::new(BufReader::with_capacity(64 * 1024, f))
    };
    let stdout = io::stdout();
    let mut out = EntryWriter::new(BufWriter::with_capacity(64 * 1024, stdout.lock()), args.format);
    let stderr = io::stderr();
    let mut err = stderr.lock();
    let report = |f: &Finding, err: &mut io::StderrLock<'_>| -> io::Result<()> {
        if args.quiet || f.severity() == Severity::Info {
            return Ok(());
        }
        print_finding(err, &name, f)
    };
    let mut reader = match SitemapReader::new(input, options) {
        Ok(r) => r,
        Err(e) => {
            writeln!(err, "{name}: error: {e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let mut entries = 0u64;
    let code = loop {
        let next = reader.next_entry();
        for f in reader.drain_findings() {
            report(&f, &mut err)?;
        }
        match next {
            Ok(Some(entry)) => {
                if let Some(scope) = &scope {
                    if let Err(why) = scope.check(entry.loc()) {
                        if args.strict {
                            let pos = reader.entry_position();
                            let f = Finding::new(
                                Rule::LocOutOfScope,
                                Some(pos),
                                format!(
                                    "{} is on {} than the sitemap at {}: dropped",
                                    entry.loc(),
                                    why.describe(),
                                    args.url.as_deref().unwrap_or("")
                                ),
                            );
                            report(&f, &mut err)?;
                            continue;
                        }
                    }
                }
                entries += 1;
                out.write(&entry)?;
            }
            Ok(None) => break ExitCode::SUCCESS,
            Err(e) => {
                out.flush()?;
                writeln!(err, "{name}: error: {e}")?;
                break ExitCode::from(1);
            }
        }
    };
    out.flush()?;
    if reader.dropped_findings() > 0 && !args.quiet {
        writeln!(err, "{name}: {} more diagnostics not shown", reader.dropped_findings())?;
    }
    let _ = entries;
    Ok(code)
}
