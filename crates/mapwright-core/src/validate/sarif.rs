//! SARIF 2.1.0 output, so code-scanning tools show findings inline in a pull request: one
//! run, the whole catalogue as the tool's rules, one result per finding.

use super::{Report, explain};
use crate::rule::{Rule, Severity};
use serde_json::{Value, json};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A file name as a SARIF `uri` (a relative reference): path separators become `/`, and
/// characters that may not stand in a URI are percent-encoded.
fn uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    for b in file.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:@!$&'()*+,;=".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A rule's help text: what it checks, why, and the fix.
fn rule_help(rule: Rule) -> String {
    let e = explain(rule);
    format!("{}\n\nWhy: {}\n\nFix: {}", e.checks, e.why, e.fix)
}

/// The SARIF log of a report (the CLI's `validate --format sarif`, the Python package's
/// `Report.to_sarif()`).
pub fn sarif(report: &Report) -> Value {
    let index = |r: Rule| Rule::ALL.iter().position(|&x| x == r).unwrap_or(0);
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|&r| {
            json!({
                "id": r.as_str(),
                "shortDescription": {"text": r.summary()},
                "fullDescription": {"text": explain(r).checks},
                "help": {"text": rule_help(r)},
                "defaultConfiguration": {"level": level(r.severity())},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.rule.as_str(),
                "ruleIndex": index(f.rule),
                "level": level(f.severity),
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&f.file)},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }],
            });
            if let Some(loc) = &f.loc {
                result["properties"] = json!({"loc": loc});
            }
            result
        })
        .collect();
    let shown = report.not_shown.iter().map(|n| {
        (n.file.as_str(), format!("{} more `{}` not shown (counted in the properties' ruleCounts)", n.count, n.rule))
    });
    let notes: Vec<Value> = report
        .notes
        .iter()
        .map(|(file, note)| (file.as_str(), note.clone()))
        .chain(shown)
        .map(|(file, note)| {
            json!({
                "level": "note",
                "message": {"text": note},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(file)}}}],
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mapwright",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "invocations": [{"executionSuccessful": true, "toolExecutionNotifications": notes}],
            // Columns count bytes of UTF-8; for ASCII lines that is the same as code points.
            "columnKind": "unicodeCodePoints",
            "results": results,
            // Every finding counted per rule, including those past the per-rule cap.
            "properties": {"ruleCounts": report.summary.rules, "summary": report.summary},
        }],
    })
}
