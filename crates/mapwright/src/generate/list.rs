//! `mapwright generate list`: URLs from a file or standard input, one per line, CSV or JSONL.

use super::Pipeline;
use super::args::{InputFormat, ListArgs};
use super::config::Config;
use anyhow::Context;
use flate2::bufread::MultiGzDecoder;
use mapwright_core::date::{LastmodParse, parse_lastmod};
use mapwright_core::write::Namespaces;
use mapwright_core::{ChangeFreq, Lastmod, Loc, UrlEntry};
use serde::Deserialize;
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::process::ExitCode;

const BUF: usize = 256 * 1024;

pub fn run(a: ListArgs) -> anyhow::Result<ExitCode> {
    let cfg = Config::load(a.common.config.as_deref())?;
    let mut excludes = cfg.exclude.clone();
    excludes.extend(a.exclude.iter().cloned());
    let name = a.file.display().to_string();
    let raw: Box<dyn BufRead> = if name == "-" {
        Box::new(BufReader::with_capacity(BUF, io::stdin()))
    } else {
        Box::new(BufReader::with_capacity(BUF, File::open(&a.file).with_context(|| format!("cannot open {name}"))?))
    };
    let mut input = gunzip_if_needed(raw).with_context(|| format!("cannot read {name}"))?;
    let mut p = Pipeline::new(&a.common, &cfg, &excludes, Namespaces::NONE)?;
    let format = match a.input_format.or(cfg.list.input_format).unwrap_or(InputFormat::Auto) {
        InputFormat::Auto => detect(input.fill_buf().with_context(|| format!("cannot read {name}"))?),
        f => f,
    };
    let mut src = Source { p: &mut p, base: p_base_url(&a, &cfg)?, name: &name };
    match format {
        InputFormat::Csv => src.csv(input)?,
        InputFormat::Jsonl => src.jsonl(input)?,
        _ => src.lines(input)?,
    }
    p.finish()
}

fn p_base_url(a: &ListArgs, cfg: &Config) -> anyhow::Result<url::Url> {
    // The pipeline checked it already; here it is the URL relative paths are resolved against.
    let s = a.common.base_url.as_deref().or(cfg.base_url.as_deref()).unwrap_or("");
    let mut u = url::Url::parse(s.trim()).with_context(|| format!("--base-url {s:?}"))?;
    if !u.path().ends_with('/') {
        let p = format!("{}/", u.path());
        u.set_path(&p);
    }
    Ok(u)
}

fn gunzip_if_needed(mut r: Box<dyn BufRead>) -> io::Result<Box<dyn BufRead>> {
    if r.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(BufReader::with_capacity(BUF, MultiGzDecoder::new(r))))
    } else {
        Ok(r)
    }
}

/// JSONL when the first line opens an object; CSV when it is a header naming a `loc` column.
fn detect(head: &[u8]) -> InputFormat {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.starts_with('{') {
        InputFormat::Jsonl
    } else if first.contains(',') && first.split(',').any(|c| c.trim().trim_matches('"').eq_ignore_ascii_case("loc")) {
        InputFormat::Csv
    } else {
        InputFormat::Lines
    }
}

struct Source<'a> {
    p: &'a mut Pipeline,
    base: url::Url,
    name: &'a str,
}

#[derive(Deserialize)]
struct Row<'a> {
    #[serde(borrow)]
    loc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    lastmod: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    changefreq: Option<Cow<'a, str>>,
    #[serde(default)]
    priority: Option<serde_json::Value>,
}

impl Source<'_> {
    fn lines(&mut self, mut input: Box<dyn BufRead>) -> anyhow::Result<()> {
        let mut buf = Vec::with_capacity(4096);
        let mut line_no = 0u64;
        loop {
            buf.clear();
            let n = input.read_until(b'\n', &mut buf).with_context(|| format!("cannot read {}", self.name))?;
            if n == 0 {
                return Ok(());
            }
            line_no += 1;
            let Ok(text) = std::str::from_utf8(&buf) else {
                let name = self.name;
                self.p.leave_out("not UTF-8", || format!("{name}:{line_no}: not UTF-8: skipped"));
                continue;
            };
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            self.entry(line_no, text, None, None, None)?;
        }
    }

    /// CSV (RFC 4180): a header naming the columns, then records; quoted fields may hold
    /// commas, doubled quotes and line breaks. Lines without a quote, nearly all, are split
    /// on commas in place, without allocating.
    fn csv(&mut self, mut input: Box<dyn BufRead>) -> anyhow::Result<()> {
        let name = self.name;
        let mut line = Vec::with_capacity(4096);
        let mut line_no = 0u64;
        let mut cols: Option<[Option<usize>; 4]> = None;
        loop {
            line.clear();
            let n = input.read_until(b'\n', &mut line).with_context(|| format!("cannot read {name}"))?;
            if n == 0 {
                return Ok(());
            }
            line_no += 1;
            let first = line_no;
            // A quoted field left open continues on the next line.
            while line.iter().filter(|&&b| b == b'"').count() % 2 == 1 {
                let more = input.read_until(b'\n', &mut line).with_context(|| format!("cannot read {name}"))?;
                if more == 0 {
                    break;
                }
                line_no += 1;
            }
            let Ok(text) = std::str::from_utf8(&line) else {
                self.p.leave_out("not UTF-8", || format!("{name}:{first}: not UTF-8: skipped"));
                continue;
            };
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            let mut fields = Vec::with_capacity(8);
            split_csv(text, &mut fields);
            let Some([loc, lm, cf, pr]) = cols else {
                let col = |n: &str| fields.iter().position(|h| h.trim().eq_ignore_ascii_case(n));
                let loc = col("loc").with_context(|| format!("{name}:{first}: the CSV header has no `loc` column"))?;
                cols = Some([Some(loc), col("lastmod"), col("changefreq"), col("priority")]);
                continue;
            };
            let get = |i: Option<usize>| i.and_then(|i| fields.get(i)).map(|f| f.trim()).filter(|s| !s.is_empty());
            let Some(l) = get(loc) else {
                self.p.leave_out("no loc", || format!("{name}:{first}: empty loc: skipped"));
                continue;
            };
            self.entry(first, l, get(lm), get(cf), get(pr))?;
        }
    }

    fn jsonl(&mut self, mut input: Box<dyn BufRead>) -> anyhow::Result<()> {
        let mut buf = String::new();
        let mut line_no = 0u64;
        loop {
            buf.clear();
            let n = input.read_line(&mut buf).with_context(|| format!("cannot read {}", self.name))?;
            if n == 0 {
                return Ok(());
            }
            line_no += 1;
            if buf.trim().is_empty() {
                continue;
            }
            let name = self.name;
            let row: Row<'_> = match serde_json::from_str(&buf) {
                Ok(r) => r,
                Err(e) => {
                    self.p.leave_out("unreadable line", || format!("{name}:{line_no}: {e}: skipped"));
                    continue;
                }
            };
            let Some(loc) = row.loc.as_deref() else {
                self.p.leave_out("no loc", || format!("{name}:{line_no}: no \"loc\": skipped"));
                continue;
            };
            let pr = match &row.priority {
                Some(serde_json::Value::Number(n)) => Some(n.to_string()),
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                _ => None,
            };
            self.entry(line_no, loc, row.lastmod.as_deref(), row.changefreq.as_deref(), pr.as_deref())?;
        }
    }

    /// Resolves and checks one row, then offers it to the pipeline.
    fn entry(
        &mut self,
        line: u64,
        loc: &str,
        lastmod: Option<&str>,
        changefreq: Option<&str>,
        priority: Option<&str>,
    ) -> anyhow::Result<()> {
        let name = self.name;
        let loc = loc.trim();
        let parsed = if has_scheme(loc) {
            Loc::parse(loc)
        } else {
            self.base
                .join(loc)
                .map_err(|e| mapwright_core::LocError::Invalid(e.to_string()))
                .and_then(|u| Loc::from_url(&u))
        };
        let loc = match parsed {
            Ok(l) => l,
            Err(e) => {
                self.p.leave_out("invalid URL", || format!("{name}:{line}: {loc:?}: {e}: not written"));
                return Ok(());
            }
        };
        let mut e = UrlEntry::new(loc);
        if let Some(s) = lastmod {
            match parse_lastmod(s.trim()) {
                LastmodParse::Exact(v) => e.lastmod = Some(Lastmod::W3c(v)),
                LastmodParse::Repaired(v, _) => {
                    self.p.note("lastmod repaired to W3C Datetime");
                    e.lastmod = Some(Lastmod::Text { text: s.trim().into(), value: v });
                }
                LastmodParse::Invalid => self.p.note("invalid lastmod dropped"),
            }
        }
        if let Some(s) = changefreq {
            match ChangeFreq::parse_ignore_case(s.trim()) {
                Some(c) => e.changefreq = Some(c),
                None => self.p.note("invalid changefreq dropped"),
            }
        }
        if let Some(s) = priority {
            match s.trim().parse::<f32>() {
                Ok(v) if (0.0..=1.0).contains(&v) => e.priority = Some(v),
                _ => self.p.note("invalid priority dropped"),
            }
        }
        self.p.offer(e, || format!("{name}:{line}"))
    }
}

/// Splits one CSV record (quotes per RFC 4180) into `out`.
fn split_csv<'a>(line: &'a str, out: &mut Vec<Cow<'a, str>>) {
    if !line.contains('"') {
        out.extend(line.split(',').map(Cow::Borrowed));
        return;
    }
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(Cow::Owned(std::mem::take(&mut field))),
            c => field.push(c),
        }
    }
    out.push(Cow::Owned(field));
}

fn has_scheme(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() > 7 && b[..7].eq_ignore_ascii_case(b"http://"))
        || (b.len() > 8 && b[..8].eq_ignore_ascii_case(b"https://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records() {
        for (line, fields) in [
            ("a,b,,c", &["a", "b", "", "c"][..]),
            ("\"a,b\",\"say \"\"hi\"\"\",x", &["a,b", "say \"hi\"", "x"]),
            ("\"multi\nline\",2", &["multi\nline", "2"]),
            ("", &[""]),
        ] {
            let mut out = Vec::new();
            split_csv(line, &mut out);
            assert_eq!(out, fields, "{line:?}");
        }
    }

    #[test]
    fn detection() {
        for (head, f) in [
            ("{\"loc\":\"/a\"}\n", InputFormat::Jsonl),
            ("\n\nloc,lastmod\n/a,2020-01-01\n", InputFormat::Csv),
            ("\"Loc\",\"priority\"\n", InputFormat::Csv),
            ("https://e.com/a,b\n", InputFormat::Lines),
            ("/a\n/b\n", InputFormat::Lines),
        ] {
            assert_eq!(detect(head.as_bytes()), f, "{head:?}");
        }
    }
}
