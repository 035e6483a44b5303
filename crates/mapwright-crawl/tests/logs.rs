//! `logs`: Common and Combined Log Format, gzipped logs, host and status filters.

use super::data;
use flate2::Compression;
use flate2::write::GzEncoder;
use mapwright_core::Loc;
use mapwright_crawl::{LogConfig, read_logs};
use std::io::Write;

fn cfg(strip_query: bool) -> LogConfig {
    LogConfig { base: Loc::parse("https://example.com/").unwrap(), strip_query, all_files: false }
}

fn pages(s: &mapwright_crawl::LogSummary) -> Vec<(&str, u64)> {
    s.pages.iter().map(|(l, n)| (l.as_str(), *n)).collect()
}

#[test]
fn common_log_format() {
    let s = read_logs(&[data("access-common.log")], &cfg(false)).unwrap();
    assert_eq!(pages(&s), [("https://example.com/about.html", 2), ("https://example.com/", 1)]);
    assert_eq!(s.lines, 8);
    let skipped: Vec<(&str, u64)> = s.skipped.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(
        skipped,
        [("not a 2xx answer", 1), ("not a GET request", 2), ("not a log line", 1), ("not a page (asset)", 1)]
    );
}

#[test]
fn combined_log_format_plain_and_gzipped() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("access.log.1.gz");
    let mut enc = GzEncoder::new(std::fs::File::create(&gz).unwrap(), Compression::default());
    enc.write_all(&std::fs::read(data("access-combined.log")).unwrap()).unwrap();
    enc.finish().unwrap();
    let with_query = read_logs(&[data("access-combined.log")], &cfg(false)).unwrap();
    assert_eq!(
        pages(&with_query),
        [
            ("https://example.com/%C3%BCber/", 1),
            ("https://example.com/blog/", 1),
            ("https://example.com/blog/?utm_source=x", 1),
        ]
    );
    assert_eq!(with_query.skipped.get("another host"), Some(&1));
    let stripped = read_logs(std::slice::from_ref(&gz), &cfg(true)).unwrap();
    assert_eq!(pages(&stripped), [("https://example.com/blog/", 2), ("https://example.com/%C3%BCber/", 1)]);
    let both = read_logs(&[gz, data("access-common.log")], &cfg(true)).unwrap();
    assert_eq!(both.pages.len(), 4);
    assert_eq!(both.lines, 13);
}

#[test]
fn a_missing_log_is_an_error_naming_it() {
    let err = read_logs(&[data("nope.log")], &cfg(false)).unwrap_err();
    assert!(err.to_string().contains("nope.log"), "{err}");
}
