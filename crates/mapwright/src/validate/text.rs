//! Compiler-style text output: `file:line:column: severity[rule]: message`, the offending
//! source line under it with a caret, colour on a terminal, and a summary line.
//!
//! Source lines are not kept while validating: afterwards, each local file that has findings
//! is read once more and only a window of bytes around each finding is kept, so memory stays
//! small even for a 50 MiB file on one line.

use anstyle::{AnsiColor, Style};
use mapwright_core::validate::{Report, ReportFinding, explain as explain_rule};
use mapwright_core::{Rule, Severity};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Findings per file shown with their source line; further ones are shown without.
const MAX_EXCERPTS: usize = 500;
/// Bytes kept before and after a finding's column.
const BEFORE: u64 = 80;
const AFTER: u64 = 120;

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const BLUE: Style = AnsiColor::Blue.on_default().bold();

fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Error => AnsiColor::Red.on_default().bold(),
        Severity::Warning => AnsiColor::Yellow.on_default().bold(),
        Severity::Info => AnsiColor::Cyan.on_default().bold(),
    }
}

/// The local files whose lines may be shown, by the name findings carry.
#[derive(Default)]
pub struct SourceLines {
    paths: HashMap<String, PathBuf>,
}

impl SourceLines {
    pub fn register(&mut self, name: &str, path: &Path) {
        self.paths.insert(name.to_string(), path.to_path_buf());
    }

    /// The source line of each finding (by index in `findings`) of one file, as far as known.
    fn excerpts(&self, file: &str, findings: &[(usize, &ReportFinding)]) -> HashMap<usize, Excerpt> {
        let Some(path) = self.paths.get(file) else { return HashMap::new() };
        let mut windows: Vec<Window> = findings
            .iter()
            .filter(|(_, f)| f.positioned)
            .take(MAX_EXCERPTS)
            .map(|&(i, f)| Window {
                index: i,
                line: u64::from(f.line),
                column: u64::from(f.column),
                offset: 0,
                line_start: 0,
                start: 0,
                end: 0,
                bytes: Vec::new(),
            })
            .collect();
        windows.sort_by_key(|w| (w.line, w.column));
        if fill(path, &mut windows).is_err() {
            return HashMap::new();
        }
        windows.into_iter().filter(|w| w.end > 0).map(|w| (w.index, w.excerpt())).collect()
    }
}

/// The bytes around one finding. Lines and columns are exact in the reader's findings, so the
/// window is found by counting lines (byte offsets would shift with a byte order mark).
struct Window {
    index: usize,
    line: u64,
    column: u64,
    /// Stream offsets, known once the line's start has been seen (`end == 0` before).
    offset: u64,
    line_start: u64,
    start: u64,
    end: u64,
    bytes: Vec<u8>,
}

struct Excerpt {
    text: String,
    caret: usize,
}

impl Window {
    fn resolve(&mut self, line_start: u64) {
        self.line_start = line_start;
        self.offset = line_start + self.column - 1;
        self.start = line_start.max(self.offset.saturating_sub(BEFORE));
        self.end = self.offset + AFTER;
    }

    fn excerpt(&self) -> Excerpt {
        let rel = ((self.offset - self.start) as usize).min(self.bytes.len());
        let (before, after) = self.bytes.split_at(rel);
        let (lead, from) = match before.iter().rposition(|&c| c == b'\n') {
            Some(i) => ("", i + 1),
            None if self.start > self.line_start => ("…", 0),
            None => ("", 0),
        };
        let to = after.iter().position(|&b| b == b'\n').map_or(self.bytes.len(), |i| rel + i);
        let cut = to == self.bytes.len() && self.bytes.len() as u64 == self.end - self.start;
        let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(['\t', '\r', '\u{feff}'], " ");
        let head = format!("{lead}{}", clean(&self.bytes[from..rel]));
        let tail = clean(&self.bytes[rel..to]);
        Excerpt {
            caret: head.chars().count(),
            text: format!("{head}{}{}", tail.trim_end(), if cut { "…" } else { "" }),
        }
    }
}

/// Reads `path` once (through gzip if it is gzipped) and copies the bytes of every window;
/// `windows` must be sorted by line.
fn fill(path: &Path, windows: &mut [Window]) -> io::Result<()> {
    if windows.is_empty() {
        return Ok(());
    }
    let mut file = BufReader::new(File::open(path)?);
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    let head = io::Cursor::new(magic[..n].to_vec()).chain(file);
    let mut input: Box<dyn Read> =
        if magic == [0x1f, 0x8b] { Box::new(mapwright_core::read::gunzip(head)) } else { Box::new(head) };
    let mut buf = vec![0u8; 64 * 1024];
    let (mut at, mut line) = (0u64, 1u64);
    let mut next = 0; // first window whose line has not started yet
    let mut active: Vec<usize> = Vec::new();
    while next < windows.len() && windows[next].line == 1 {
        windows[next].resolve(0);
        active.push(next);
        next += 1;
    }
    loop {
        if next == windows.len() && active.is_empty() {
            return Ok(());
        }
        let n = input.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let chunk = &buf[..n];
        if at == 0 && declares_other_encoding(chunk) {
            // Lines of the transcoded text need not match these bytes.
            return Err(io::Error::other("not UTF-8"));
        }
        if next < windows.len() {
            for (i, _) in chunk.iter().enumerate().filter(|(_, b)| **b == b'\n') {
                line += 1;
                while next < windows.len() && windows[next].line <= line {
                    if windows[next].line == line {
                        windows[next].resolve(at + i as u64 + 1);
                        active.push(next);
                    }
                    next += 1;
                }
                if next == windows.len() {
                    break;
                }
            }
        }
        let end = at + n as u64;
        for &w in &active {
            let w = &mut windows[w];
            let (a, b) = (w.start.max(at), w.end.min(end));
            if a < b {
                w.bytes.extend_from_slice(&chunk[(a - at) as usize..(b - at) as usize]);
            }
        }
        active.retain(|&w| windows[w].end > end);
        at = end;
    }
}

fn declares_other_encoding(head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&head[..head.len().min(200)]).to_ascii_lowercase();
    let Some(decl) = head.strip_prefix("<?xml").and_then(|d| d.split("?>").next()) else { return false };
    match decl.split_once("encoding") {
        Some((_, rest)) => !rest.contains("utf-8") && !rest.contains("utf8"),
        None => false,
    }
}

/// Writes every finding, the notes and the summary line.
pub fn write(out: &mut impl Write, report: &Report, lines: &mut SourceLines, unread: usize) -> io::Result<()> {
    // Findings of one file together, in the order files came.
    let mut order: Vec<&str> = Vec::new();
    let mut by_file: HashMap<&str, Vec<(usize, &ReportFinding)>> = HashMap::new();
    for (i, f) in report.findings.iter().enumerate() {
        if !by_file.contains_key(f.file.as_str()) {
            order.push(&f.file);
        }
        by_file.entry(&f.file).or_default().push((i, f));
    }
    for file in &order {
        let findings = &by_file[file];
        let excerpts = lines.excerpts(file, findings);
        for (i, f) in findings {
            finding(out, f, excerpts.get(i))?;
        }
    }
    for (file, note) in &report.notes {
        writeln!(out, "{BOLD}{file}{BOLD:#}: {BLUE}note{BLUE:#}: {note}")?;
    }
    for n in &report.not_shown {
        writeln!(
            out,
            "{BOLD}{}{BOLD:#}: {BLUE}note{BLUE:#}: {} more `{}` not shown (the first {} are; all are counted in the summary)",
            n.file,
            n.count,
            n.rule,
            mapwright_core::validate::MAX_FINDINGS_PER_RULE
        )?;
    }
    summary(out, report, unread)
}

fn finding(out: &mut impl Write, f: &ReportFinding, excerpt: Option<&Excerpt>) -> io::Result<()> {
    let s = severity_style(f.severity);
    writeln!(
        out,
        "{BOLD}{}:{}:{}{BOLD:#}: {s}{}[{}]{s:#}: {}",
        f.file, f.line, f.column, f.severity, f.rule, f.message
    )?;
    if let Some(e) = excerpt {
        let num = f.line.to_string();
        let pad = " ".repeat(num.len());
        writeln!(out, "{BLUE}{num} |{BLUE:#} {}", e.text)?;
        writeln!(out, "{BLUE}{pad} |{BLUE:#} {}{s}^{s:#}", " ".repeat(e.caret))?;
    }
    Ok(())
}

fn summary(out: &mut impl Write, report: &Report, unread: usize) -> io::Result<()> {
    let s = &report.summary;
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let verdict = if unread > 0 {
        let st = severity_style(Severity::Error);
        format!("{st}incomplete ({} could not be read){st:#}", plural(unread as u64, "input"))
    } else if s.errors > 0 {
        let st = severity_style(Severity::Error);
        format!("{st}invalid{st:#}")
    } else {
        let st = AnsiColor::Green.on_default().bold();
        format!("{st}valid{st:#}")
    };
    // The rules that fired, errors first, then by count.
    let mut rules: Vec<(Rule, u64)> = s.rules.iter().map(|(&r, &n)| (r, n)).collect();
    rules.sort_by_key(|&(r, n)| (std::cmp::Reverse(r.severity()), std::cmp::Reverse(n)));
    let fired = if rules.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = rules.iter().map(|(r, n)| format!("{r} {n}")).collect();
        format!(" ({})", list.join(", "))
    };
    writeln!(
        out,
        "{verdict}: {}, {}: {}, {}, {}{fired}",
        plural(s.files, "file"),
        plural(s.entries, "entry").replace("entrys", "entries"),
        plural(s.errors, "error"),
        plural(s.warnings, "warning"),
        plural(s.infos, "info"),
    )
}

/// `--list-rules`: the catalogue, one rule a line.
pub fn list_rules(out: &mut impl Write) -> io::Result<()> {
    for &r in Rule::ALL {
        let s = severity_style(r.severity());
        writeln!(out, "{BOLD}{:<20}{BOLD:#} {s}{:<8}{s:#} {}", r.as_str(), r.severity().as_str(), r.summary())?;
    }
    writeln!(out, "{DIM}mapwright validate --explain RULE tells more about one rule{DIM:#}")
}

/// `--explain RULE`.
pub fn explain(out: &mut impl Write, rule: Rule) -> io::Result<()> {
    let e = explain_rule(rule);
    let s = severity_style(rule.severity());
    writeln!(out, "{BOLD}{rule}{BOLD:#} ({s}{}{s:#})", rule.severity())?;
    writeln!(out)?;
    writeln!(out, "{BOLD}What it checks{BOLD:#}\n  {}\n", e.checks)?;
    writeln!(out, "{BOLD}Why it matters{BOLD:#}\n  {}\n", e.why)?;
    writeln!(out, "{BOLD}How to fix it{BOLD:#}\n  {}", e.fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The excerpts of `findings` (line, column) in a file holding `text`.
    fn check(text: &str, findings: &[(u32, u32)], expected: &[(&str, usize)]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.xml");
        std::fs::write(&path, text).unwrap();
        let mut lines = SourceLines::default();
        lines.register("s.xml", &path);
        let fs: Vec<ReportFinding> = findings
            .iter()
            .map(|&(line, column)| ReportFinding {
                rule: Rule::PriorityRange,
                severity: Severity::Error,
                file: "s.xml".into(),
                line,
                column,
                loc: None,
                message: String::new(),
                positioned: true,
            })
            .collect();
        let refs: Vec<(usize, &ReportFinding)> = fs.iter().enumerate().collect();
        let got = lines.excerpts("s.xml", &refs);
        for (i, (text, caret)) in expected.iter().enumerate() {
            let e = &got[&i];
            assert_eq!((e.text.as_str(), e.caret), (*text, *caret), "finding {i}");
        }
    }

    #[test]
    fn excerpts_show_the_line_and_where_in_it() {
        check("a\n\tbc\r\nd", &[(2, 2), (3, 1), (1, 1)], &[(" bc", 1), ("d", 0), ("a", 0)]);
        // A long line is cut around the column, with ellipses.
        let long = format!("{}<x>{}", "a".repeat(5000), "b".repeat(5000));
        let want = format!("…{}<x>{}…", "a".repeat(80), "b".repeat(117));
        check(&long, &[(1, 5001)], &[(&want, 81)]);
        // Findings beyond the last line are left out, not invented.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.xml");
        std::fs::write(&path, "one line").unwrap();
        let mut lines = SourceLines::default();
        lines.register("t.xml", &path);
        let f = ReportFinding {
            rule: Rule::Bom,
            severity: Severity::Info,
            file: "t.xml".into(),
            line: 9,
            column: 1,
            loc: None,
            message: String::new(),
            positioned: true,
        };
        assert!(lines.excerpts("t.xml", &[(0, &f)]).is_empty());
    }
}
