//! One verdict on the same bytes: every error `validate` reports at a position, the reader
//! (`read`, `discover`, the service) reports too, with the same rule at the same position. Over
//! every real file of `shared/realworld` and every file of the conformance cases.

use crate::support::{read_bytes, shared_dir};
use mapwright_core::validate::{Config, Validator};
use mapwright_core::{Position, Rule, Severity};
use std::path::{Path, PathBuf};

/// Errors the validator adds from what it counts over a whole file, not from the bytes at a
/// position: the reader reads on by design (PROTOCOL.md: 50,000 entries is not a read limit).
const VALIDATOR_ONLY: &[Rule] = &[Rule::TooManyUrls];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The (rule, position) pairs of one verdict the other lacks, for one file.
fn missing_from_read(bytes: &[u8]) -> (Vec<(Rule, Position)>, usize) {
    let report = Validator::new(Config::default()).validate("f", bytes);
    let read = read_bytes(bytes);
    let mut said: Vec<(Rule, Option<Position>)> = read.findings.iter().map(|f| (f.rule, f.position)).collect();
    if let Some(e) = &read.error {
        if let Some(rule) = e.rule() {
            said.push((rule, e.position()));
        }
    }
    let mut errors = 0;
    let missing = report
        .findings
        .iter()
        .filter(|f| f.severity() == Severity::Error && !VALIDATOR_ONLY.contains(&f.rule))
        .filter_map(|f| Some((f.rule, f.position?)))
        .inspect(|_| errors += 1)
        .filter(|(rule, pos)| !said.contains(&(*rule, Some(*pos))))
        .collect();
    (missing, errors)
}

#[test]
fn read_reports_every_error_validate_reports() {
    let shared = shared_dir();
    let mut files = Vec::new();
    files_under(&shared.join("realworld/files"), &mut files);
    let real = files.len();
    for peer in ["crawler-commons", "ultimate-sitemap-parser", "sitemap.js", "rust-sitemap"] {
        files_under(&shared.join("conformance").join(peer).join("files"), &mut files);
    }
    assert_eq!(real, 41, "the real-world corpus has 41 files");
    assert!(files.len() > 200, "only {} files", files.len());
    let mut errors = 0;
    let mut differ = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let (missing, n) = missing_from_read(&bytes);
        errors += n;
        if !missing.is_empty() {
            differ.push(format!("{}: {missing:?}", path.display()));
        }
    }
    assert!(differ.is_empty(), "validate reports errors read does not:\n{}", differ.join("\n"));
    // The test compares something: the corpus holds faults validate finds at positions.
    assert!(errors >= 20, "only {errors} positioned errors in {} files", files.len());
}

fn declaration_faults(bytes: &[u8]) -> Vec<(u32, u32)> {
    let read = read_bytes(bytes);
    read.findings
        .iter()
        .filter(|f| f.rule == Rule::XmlMalformed && f.message.contains("XML declaration"))
        .map(|f| (f.position.unwrap().line, f.position.unwrap().column))
        .collect()
}

#[test]
fn declaration_must_come_first() {
    let body = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>https://a.example/</loc></url></urlset>";
    let case = |head: &str| declaration_faults(format!("{head}{body}").as_bytes());
    assert_eq!(case("<?xml version=\"1.0\"?>\n"), vec![]);
    assert_eq!(case("\u{feff}<?xml version=\"1.0\"?>"), vec![]);
    assert_eq!(case(""), vec![]);
    assert_eq!(case("<?xml-stylesheet href=\"a.xsl\"?>"), vec![]);
    assert_eq!(case("\n  <?xml version=\"1.0\"?>"), vec![(2, 3)]);
    assert_eq!(case("\u{feff} \t\r\n<?xml version=\"1.0\"?>"), vec![(2, 1)]);
    assert_eq!(case("<!-- generated -->\n<?xml version=\"1.0\"?>"), vec![(2, 1)]);
    // Inside gzip too: the reader sees the bytes after every layer.
    let gz = crate::support::gzip(format!("\n\n<?xml version=\"1.0\"?>{body}").as_bytes());
    assert_eq!(declaration_faults(&gz), vec![(3, 1)]);
    // And validate says exactly what read says.
    let bytes = format!("\n  <?xml version=\"1.0\"?>{body}");
    assert_eq!(missing_from_read(bytes.as_bytes()), (vec![], 1));
}
