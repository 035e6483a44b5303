//! `mapwright read`: stream the entries of one sitemap to standard output.

use crate::cli::{EntryFormat, ReadArgs};
use crate::output::{EntryWriter, NEEDS_OUT, parquet_out, print_finding};
use anyhow::Context;
use mapwright_core::read::Input;
use mapwright_core::{Finding, Limits, Loc, ReadOptions, Rule, Severity, SitemapReader, Voucher};
use mapwright_fetch::StrictScope;
use mapwright_fetch::rows::{Columns, ParquetRows};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::ExitCode;

/// Where the entries go: a text format (to standard output or --out), or a Parquet file.
enum Sink {
    Text(EntryWriter<BufWriter<Box<dyn Write>>>),
    Parquet(Box<ParquetRows<BufWriter<File>>>),
}

impl Sink {
    fn open(args: &ReadArgs) -> anyhow::Result<Sink> {
        match (&args.out, args.format) {
            (None, EntryFormat::Parquet) => anyhow::bail!(NEEDS_OUT),
            (Some(path), EntryFormat::Parquet) => {
                Ok(Sink::Parquet(Box::new(parquet_out(path, Columns::READ.normalized(args.normalized))?)))
            }
            (path, format) => {
                let w: Box<dyn Write> = match path {
                    Some(p) => Box::new(File::create(p).with_context(|| format!("--out {}", p.display()))?),
                    None => Box::new(io::stdout().lock()),
                };
                Ok(Sink::Text(EntryWriter::new(BufWriter::with_capacity(64 * 1024, w), format, args.normalized)))
            }
        }
    }

    fn write(&mut self, e: &mapwright_core::Entry) -> anyhow::Result<()> {
        match self {
            Sink::Text(w) => Ok(w.write(e)?),
            Sink::Parquet(p) => Ok(p.push_entry(e)?),
        }
    }

    /// Flushes a text output; ends a Parquet file (its footer written).
    fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Text(mut w) => Ok(w.flush()?),
            Sink::Parquet(p) => p.finish().map(drop).map_err(Into::into),
        }
    }
}

pub fn run(mut args: ReadArgs) -> anyhow::Result<ExitCode> {
    if args.format == EntryFormat::Parquet && args.out.is_none() {
        anyhow::bail!(NEEDS_OUT);
    }
    let name = args.source.display().to_string();
    // An http(s) SOURCE is streamed (remote.rs); its scope is its URL after redirects.
    let opener =
        if crate::http::is_url(&name) { Some(crate::remote::opener(args.max_bytes, &args.oai)?) } else { None };
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
    args.oai.limit(&mut limits);
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
    let mut out = Sink::open(&args)?;
    let stderr = io::stderr();
    let mut err = stderr.lock();
    let report = |f: &Finding, err: &mut io::StderrLock<'_>| -> io::Result<()> {
        if args.quiet || (f.severity() == Severity::Info && f.rule != Rule::ScopeVouched) {
            return Ok(());
        }
        print_finding(err, &name, f)
    };
    let mut reader = match SitemapReader::paged(Input::owned(input), options, pager) {
        Ok(r) => r,
        Err(e) => {
            out.finish()?;
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
        let mut reported = Ok(());
        reader.take_findings(|f| {
            skipped += u64::from(f.rule.skips_entry());
            if reported.is_ok() {
                reported = report(&f, &mut err);
            }
        });
        reported?;
        // Looked at where the reader returned it: moved out, the entry (~200 bytes) was copied
        // once more.
        match &next {
            Ok(Some(entry)) => {
                if let Some(f) = scope.as_ref().and_then(|s| s.drop(entry, reader.entry_position())) {
                    dropped += 1;
                    report(&f, &mut err)?;
                    continue;
                }
                entries += 1;
                out.write(entry)?;
            }
            Ok(None) => break ExitCode::SUCCESS,
            Err(e) => {
                writeln!(err, "{name}: error: {e}")?;
                break ExitCode::from(1);
            }
        }
    };
    // The entries before a fault are kept (a Parquet file is ended properly with them).
    out.finish()?;
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
