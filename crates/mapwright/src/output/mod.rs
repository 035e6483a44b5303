//! The CLI's output formats, for `read` and `discover` alike: entries (`read`: JSON Lines, CSV,
//! text, through [`EntryWriter`]), `discover`'s rows ([`rows`]), Parquet files (through
//! `mapwright_fetch::rows::ParquetRows`, opened by [`parquet_out`]), and diagnostics to
//! standard error ([`print_finding`]). The commands call this module, never each other.

mod rows;

use crate::cli::EntryFormat;
use mapwright_core::{Entry, Finding};
use mapwright_fetch::rows::{Columns, ParquetRows};
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub(crate) use rows::{Out, csv_header};

/// The refusal of `--format parquet` without `--out`.
pub(crate) const NEEDS_OUT: &str =
    "--format parquet needs --out FILE (a Parquet file ends with its footer: it is no stream)";

/// A Parquet file of rows with these columns at `path`, created empty.
pub(crate) fn parquet_out(path: &Path, columns: Columns) -> anyhow::Result<ParquetRows<BufWriter<File>>> {
    let f = File::create(path).map_err(|e| anyhow::anyhow!("--out {}: {e}", path.display()))?;
    Ok(ParquetRows::new(BufWriter::with_capacity(256 * 1024, f), columns)?)
}

/// The error of a text writer given the Parquet format, which goes through `ParquetRows`
/// (the callers route it there: this is never written).
pub(crate) fn not_text() -> io::Error {
    io::Error::other("Parquet rows are written by mapwright_fetch::rows::ParquetRows, not as text")
}

/// Whether an error chain ends in a broken pipe (`mapwright read big.xml | head`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    kind: &'static str,
    loc: &'a str,
    lastmod: Option<String>,
    changefreq: Option<&'static str>,
    priority: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    images: Option<&'a [mapwright_core::Image]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    videos: Option<&'a [mapwright_core::Video]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    news: Option<Option<&'a mapwright_core::News>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    alternates: Option<&'a [mapwright_core::Alternate]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    geo: Option<&'a mapwright_core::Geo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pagemap: Option<&'a [mapwright_core::DataObject]>,
}

/// Writes entries in one of the formats; the CSV header goes out before the first entry.
pub struct EntryWriter<W: Write> {
    out: W,
    format: EntryFormat,
    header_done: bool,
    /// `loc` in its normal form (`--normalized`) rather than as written.
    normalized: bool,
}

/// A `loc` as printed: as the file wrote it, or (`--normalized`) in its normal form.
pub fn shown(loc: &mapwright_core::Loc, normalized: bool) -> &str {
    if normalized { loc.as_str() } else { loc.written() }
}

impl<W: Write> EntryWriter<W> {
    pub fn new(out: W, format: EntryFormat, normalized: bool) -> Self {
        EntryWriter { out, format, header_done: false, normalized }
    }

    pub fn write(&mut self, e: &Entry) -> io::Result<()> {
        match self.format {
            // Two plain writes into the buffer: `writeln!`'s formatting machinery cost more than
            // the rest of the line's way out (`read --format text` is the reader's benchmark).
            EntryFormat::Text => {
                self.out.write_all(shown(e.loc(), self.normalized).as_bytes())?;
                self.out.write_all(b"\n")
            }
            EntryFormat::Csv => {
                if !self.header_done {
                    self.header_done = true;
                    writeln!(self.out, "kind,loc,lastmod,changefreq,priority")?;
                }
                let (kind, cf, pr) = match e {
                    Entry::Url(u) => ("url", u.changefreq.map(|c| c.as_str()), u.priority),
                    Entry::Sitemap(_) => ("sitemap", None, None),
                };
                write!(self.out, "{kind},")?;
                write_csv_field(&mut self.out, shown(e.loc(), self.normalized))?;
                write!(self.out, ",")?;
                if let Some(l) = e.lastmod() {
                    write_csv_field(&mut self.out, &l.to_string())?;
                }
                write!(self.out, ",{},", cf.unwrap_or(""))?;
                if let Some(p) = pr {
                    write!(self.out, "{p}")?;
                }
                writeln!(self.out)
            }
            EntryFormat::Jsonl => {
                let j = match e {
                    Entry::Url(u) => {
                        let x = u.ext();
                        JsonEntry {
                            kind: "url",
                            loc: shown(&u.loc, self.normalized),
                            lastmod: u.lastmod.as_ref().map(|l| l.to_string()),
                            changefreq: u.changefreq.map(|c| c.as_str()),
                            priority: u.priority,
                            images: Some(&x.images),
                            videos: Some(&x.videos),
                            news: Some(x.news.as_deref()),
                            alternates: Some(&x.alternates),
                            geo: x.geo.as_deref(),
                            pagemap: Some(x.pagemap.as_slice()).filter(|p| !p.is_empty()),
                        }
                    }
                    Entry::Sitemap(s) => JsonEntry {
                        kind: "sitemap",
                        loc: shown(&s.loc, self.normalized),
                        lastmod: s.lastmod.as_ref().map(|l| l.to_string()),
                        changefreq: None,
                        priority: None,
                        images: None,
                        videos: None,
                        news: None,
                        alternates: None,
                        geo: None,
                        pagemap: None,
                    },
                };
                serde_json::to_writer(&mut self.out, &j)?;
                writeln!(self.out)
            }
            EntryFormat::Parquet => Err(not_text()),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn write_csv_field(out: &mut impl Write, s: &str) -> io::Result<()> {
    if s.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", s.replace('"', "\"\""))
    } else {
        out.write_all(s.as_bytes())
    }
}

/// One diagnostic line: `file:line:column: severity[rule]: message`.
pub fn print_finding(err: &mut impl Write, file: &str, f: &Finding) -> io::Result<()> {
    match f.position {
        Some(p) => writeln!(err, "{file}:{}:{}: {}[{}]: {}", p.line, p.column, f.severity(), f.rule, f.message),
        None => writeln!(err, "{file}: {}[{}]: {}", f.severity(), f.rule, f.message),
    }
}
