//! The report of a validation run over one or more files, serialisable exactly as the JSON
//! document of RULES.md (`findings` plus `summary`).

use super::FileReport;
use crate::rule::{Finding, Rule, Severity};

/// One finding with the file it belongs to, as the JSON output lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReportFinding {
    /// The rule's public name.
    pub rule: Rule,
    /// The rule's severity.
    pub severity: Severity,
    /// The file (path, `-` or URL) the finding is in.
    pub file: String,
    /// 1-based line; 1 when the finding is about the whole file.
    pub line: u32,
    /// 1-based column (in bytes); 1 when the finding is about the whole file.
    pub column: u32,
    /// The entry's `loc`; `None` (JSON `null`) when the finding is about the file as a whole.
    pub loc: Option<String>,
    /// What is wrong and what to write instead.
    pub message: String,
    /// Whether the finding has a place in the file (`false`: about the file as a whole, shown
    /// at 1:1); not part of the JSON document.
    #[serde(skip)]
    pub positioned: bool,
}

impl ReportFinding {
    /// A report line from a finding of `file`.
    pub fn new(file: &str, f: Finding) -> Self {
        let (line, column) = f.position.map_or((1, 1), |p| (p.line.max(1), p.column.max(1)));
        ReportFinding {
            rule: f.rule,
            severity: f.rule.severity(),
            file: file.to_string(),
            line,
            column,
            loc: f.loc,
            message: f.message,
            positioned: f.position.is_some(),
        }
    }
}

/// Totals over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files validated.
    pub files: u64,
    /// Entries read in all files.
    pub entries: u64,
    /// Error findings (counted even where [`super::Config::max_findings`] dropped them).
    pub errors: u64,
    /// Warning findings.
    pub warnings: u64,
    /// Info findings.
    pub infos: u64,
}

/// A whole run: the findings of every file, and the totals. Live checks (robots.txt, HTTP
/// status) add theirs with [`Report::push`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// Every finding kept, file after file, in file order within a file.
    pub findings: Vec<ReportFinding>,
    /// The totals.
    pub summary: Summary,
    /// Remarks about the run that are not findings (scope not checked, a child not followed);
    /// not part of the JSON document of RULES.md.
    #[serde(skip)]
    pub notes: Vec<(String, String)>,
    /// Findings counted but not kept, per file.
    #[serde(skip)]
    pub omitted: Vec<(String, u64)>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Report::default()
    }

    /// Adds one validated file (its I/O error, if any, stays with the caller).
    pub fn add(&mut self, file: &FileReport) {
        self.summary.files += 1;
        self.summary.entries += file.entries;
        self.summary.infos += file.count(Severity::Info);
        self.summary.warnings += file.count(Severity::Warning);
        self.summary.errors += file.count(Severity::Error);
        let start = self.findings.len();
        self.findings.extend(file.findings.iter().cloned().map(|f| ReportFinding::new(&file.file, f)));
        // In file order, as a compiler lists them (the whole-file findings come at 1:1).
        self.findings[start..].sort_by_key(|f| (f.line, f.column));
        if file.omitted() > 0 {
            self.omitted.push((file.file.clone(), file.omitted()));
        }
    }

    /// Adds one finding about `file` (for checks made outside the validator, such as live ones).
    pub fn push(&mut self, file: &str, f: Finding) {
        match f.severity() {
            Severity::Info => self.summary.infos += 1,
            Severity::Warning => self.summary.warnings += 1,
            Severity::Error => self.summary.errors += 1,
        }
        self.findings.push(ReportFinding::new(file, f));
    }

    /// Adds a remark about `file` that is not a finding.
    pub fn note(&mut self, file: &str, message: impl Into<String>) {
        self.notes.push((file.to_string(), message.into()));
    }

    /// Whether any error was found: the run's exit status is then 1.
    pub fn has_errors(&self) -> bool {
        self.summary.errors > 0
    }
}
