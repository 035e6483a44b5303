//! The report of a validation run over one or more files, serialisable exactly as the JSON
//! document of RULES.md (`findings` plus `summary`).

use super::FileReport;
use crate::rule::{Finding, Rule, Severity};
use std::collections::{BTreeMap, HashMap};

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
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files validated.
    pub files: u64,
    /// Entries read in all files.
    pub entries: u64,
    /// Error findings (counted even where [`super::Config::max_findings_per_rule`] dropped them).
    pub errors: u64,
    /// Warning findings.
    pub warnings: u64,
    /// Info findings.
    pub infos: u64,
    /// Findings per rule that fired (kept or not), in catalogue order.
    pub rules: BTreeMap<Rule, u64>,
}

/// Findings of one rule in one file that were counted but not kept (past
/// [`super::Config::max_findings_per_rule`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NotShown {
    /// The file.
    pub file: String,
    /// The rule.
    pub rule: Rule,
    /// How many were left out.
    pub count: u64,
}

/// A whole run: the findings of every file, and the totals. Live checks (robots.txt, HTTP
/// status) add theirs with [`Report::push`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// Every finding kept, file after file; within a file errors first, then warnings, then
    /// infos, each in file order. At most [`super::Config::max_findings_per_rule`] per rule
    /// and file, so no flood of one rule hides another.
    pub findings: Vec<ReportFinding>,
    /// The totals.
    pub summary: Summary,
    /// Per file and rule, the findings counted but not kept (absent from the JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_shown: Vec<NotShown>,
    /// Remarks about the run that are not findings (scope not checked, a child not followed);
    /// not part of the JSON document of RULES.md.
    #[serde(skip)]
    pub notes: Vec<(String, String)>,
    /// Findings kept per (file, rule) by [`Report::push`], for its cap.
    #[serde(skip)]
    pushed: HashMap<(String, Rule), usize>,
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
        for (&rule, &n) in &file.rule_counts {
            *self.summary.rules.entry(rule).or_insert(0) += n;
        }
        let start = self.findings.len();
        self.findings.extend(file.findings.iter().cloned().map(|f| ReportFinding::new(&file.file, f)));
        // Errors first, then in file order, as a compiler lists them (the whole-file findings
        // come at 1:1): whoever reads only the top of the list sees the errors.
        self.findings[start..].sort_by_key(|f| (std::cmp::Reverse(f.severity), f.line, f.column));
        for (rule, count) in file.omitted_by_rule() {
            self.not_shown.push(NotShown { file: file.file.clone(), rule, count });
        }
    }

    /// Adds one finding about `file` (for checks made outside the validator, such as live ones).
    /// Like the validator, it keeps the first [`super::MAX_FINDINGS_PER_RULE`] findings of
    /// each rule and file and counts the rest in [`Report::not_shown`].
    pub fn push(&mut self, file: &str, f: Finding) {
        match f.severity() {
            Severity::Info => self.summary.infos += 1,
            Severity::Warning => self.summary.warnings += 1,
            Severity::Error => self.summary.errors += 1,
        }
        *self.summary.rules.entry(f.rule).or_insert(0) += 1;
        let kept = self.pushed.entry((file.to_string(), f.rule)).or_insert(0);
        if *kept < super::MAX_FINDINGS_PER_RULE {
            *kept += 1;
            self.findings.push(ReportFinding::new(file, f));
            return;
        }
        match self.not_shown.iter_mut().find(|n| n.file == file && n.rule == f.rule) {
            Some(n) => n.count += 1,
            None => self.not_shown.push(NotShown { file: file.to_string(), rule: f.rule, count: 1 }),
        }
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
