//! `mapwright read`: stream the entries of one sitemap to standard output.

use crate::cli::ReadArgs;
use crate::output::{EntryWriter, print_finding};
use anyhow::Context;
use mapwright_core::{Finding, Limits, Loc, ReadOptions, Rule, Severity, SitemapReader, Voucher};
use mapwright_fetch::StrictScope;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::ExitCode;

pub fn run(mut args: ReadArgs) -> anyhow::Result<ExitCode> {
    let name = args.source.display().to_string();
    // An http(s) SOURCE is streamed (remote.rs); its scope is its URL after redirects.
    let opener = if crate::http::is_url(&name) { Some(crate::remote::opener(args.max_bytes)?) } else { None };
    let remote = match &opener {
        Some(o) => Some(o.open(&name)?),
        None => None,
    };
    if let (Some(r), None) = (&remote, &args.url) {
        args.url = Some(r.final_url.clone());
    }
    let url = match &args.url {
        Some(u) => Some(Loc::parse(u).map_err(|e| anyhow::anyhow!("--url {u:?}: {e}"))?),
        None if args.strict => {
            anyhow::bail!("--strict needs --url (where the file was served from) or an http(s) SOURCE")
        }
        None => None,
    };
    // Who vouches decides the scope (PROTOCOL.md section 5), as in `discover` and `validate`.
    let voucher = match (crate::remote::vouched_arg(args.vouched.as_deref(), url.as_ref())?, &opener, &remote) {
        (Some(v), _, _) => v,
        (None, Some(o), Some(r)) if args.strict => o.voucher(&name, &r.final_url),
        _ => Voucher::Nobody,
    };
    let scope = match (&url, args.strict) {
        (Some(u), true) => Some(StrictScope::new(u.clone(), args.url.clone().unwrap_or_default(), voucher)),
        _ => None,
    };
    let mut limits = Limits::default();
    if let Some(b) = args.max_bytes {
        limits.max_bytes = b;
    }
    let options = ReadOptions { limits };
    // An OAI-PMH answer is read across its pages (the same client asks for each).
    let pager = remote.as_ref().map(|r| r.pager.clone());
    let input: Box<dyn io::BufRead + Send> = if let Some(r) = remote {
        Box::new(r)
    } else if name == "-" {
        Box::new(BufReader::with_capacity(64 * 1024, io::stdin()))
    } else {
        let f = File::open(&args.source).with_context(|| format!("cannot open {name}"))?;
        Box::new(BufReader::with_capacity(64 * 1024, f))
    };
    let stdout = io::stdout();
    let mut out = EntryWriter::new(BufWriter::with_capacity(64 * 1024, stdout.lock()), args.format, args.normalized);
    let stderr = io::stderr();
    let mut err = stderr.lock();
    let report = |f: &Finding, err: &mut io::StderrLock<'_>| -> io::Result<()> {
        if args.quiet || (f.severity() == Severity::Info && f.rule != Rule::ScopeVouched) {
            return Ok(());
        }
        print_finding(err, &name, f)
    };
    let mut reader = match SitemapReader::paged(input, options, pager) {
        Ok(r) => r,
        Err(e) => {
            writeln!(err, "{name}: error: {e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    // An Atom feed's relative links resolve against the URL it is served at.
    if let Some(u) = &args.url {
        reader.set_document_url(u);
    }
    if let Some(f) = scope.as_ref().and_then(StrictScope::waiver) {
        report(&f, &mut err)?;
    }
    let (mut entries, mut skipped, mut dropped) = (0u64, 0u64, 0u64);
    let code = loop {
        let next = reader.next_entry();
        for f in reader.drain_findings() {
            skipped += u64::from(f.rule.skips_entry());
            report(&f, &mut err)?;
        }
        match next {
            Ok(Some(entry)) => {
                if let Some(f) = scope.as_ref().and_then(|s| s.drop(&entry, reader.entry_position())) {
                    dropped += 1;
                    report(&f, &mut err)?;
                    continue;
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
    if entries == 0 && code == ExitCode::SUCCESS {
        // Never an empty read in silence: the input held something, and no entry came of it.
        let why = if dropped > 0 {
            format!("all {dropped} entries are outside the scope of --url (--strict dropped them)")
        } else if skipped > 0 {
            format!("all {skipped} entries were skipped (no usable <loc>; see the diagnostics)")
        } else {
            format!("the {} lists no entry", reader.format().as_str())
        };
        writeln!(err, "{name}: error: no entries read: {why}")?;
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}
