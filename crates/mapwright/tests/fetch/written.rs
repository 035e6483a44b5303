//! URLs as written (issue 22 item 3): `read` (a file and a URL) and `discover` print each `loc`
//! as the sitemap wrote it (entities decoded, white space trimmed), `--normalized` in its
//! normal form; deduplication is by the normal form (the first spelling is kept).

use axum::Router;
use axum::routing::get;
use std::path::Path;

// Alike on purpose: crates/mapwright-py/tests/test_written.py holds the same cases for the Python
// package (see there).
/// (as written, normal form): an upper-case scheme and host with the default port, a bare
/// origin with white space around it and its default port, escapes in lower case and an
/// unreserved one, a space left unescaped, an entity, and a second spelling of the first.
pub const CASES: [(&str, &str); 6] = [
    ("HTTPS://Example.COM:443/A", "https://example.com/A"),
    ("http://example.com:80", "http://example.com/"),
    ("https://example.com/caf%c3%a9?q=%7E", "https://example.com/caf%c3%a9?q=%7E"),
    ("https://example.com/a b", "https://example.com/a%20b"),
    ("https://example.com/x?a=1&b=2", "https://example.com/x?a=1&b=2"),
    ("https://example.com/A", "https://example.com/A"),
];

/// The sitemap of [`CASES`], `&` written as an entity and white space around each URL.
pub fn sitemap() -> String {
    let body: String =
        CASES.iter().map(|(w, _)| format!("<url><loc>\n   {}\t</loc></url>\n", w.replace('&', "&amp;"))).collect();
    format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{body}</urlset>\n")
}

fn locs(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["loc"].as_str().unwrap().to_owned())
        .collect()
}

fn written() -> Vec<String> {
    CASES.iter().map(|(w, _)| w.to_string()).collect()
}

fn normal() -> Vec<String> {
    CASES.iter().map(|(_, n)| n.to_string()).collect()
}

fn serve_sitemap() -> String {
    super::serve_app(|_| Router::new().route("/sitemap.xml", get(|| async { sitemap() })))
}

#[test]
fn read_of_a_file_prints_urls_as_written_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.xml");
    std::fs::write(&f, sitemap()).unwrap();
    let f = f.to_str().unwrap();
    let (out, _) = crate::ok(&["read", f], b"", Path::new("."));
    assert_eq!(locs(&out), written());
    let (out, _) = crate::ok(&["read", "--normalized", f], b"", Path::new("."));
    assert_eq!(locs(&out), normal());
    let (out, _) = crate::ok(&["read", "--format", "text", "-q", f], b"", Path::new("."));
    assert_eq!(out.lines().collect::<Vec<_>>(), written());
    let (out, _) = crate::ok(&["read", "--format", "csv", "-q", f], b"", Path::new("."));
    let csv_locs: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(csv_locs, written());
}

#[test]
fn read_and_discover_of_a_url_print_urls_as_written_deduplicated_by_the_normal_form() {
    let base = serve_sitemap();
    let url = format!("{base}/sitemap.xml");
    let (out, _) = crate::ok(&["read", "-q", &url], b"", Path::new("."));
    assert_eq!(locs(&out), written());
    // Every URL is on another host than the sitemap: --no-scope keeps them. The sixth is the
    // first's second spelling: a duplicate.
    let (out, err) = crate::ok(&["discover", "--no-scope", "--sitemap", &url], b"", Path::new("."));
    assert_eq!(locs(&out), written()[..5].to_vec(), "{err}");
    assert!(err.contains("dropped: 1 duplicates"), "{err}");
    let (out, _) = crate::ok(&["discover", "-q", "--no-scope", "--normalized", "--sitemap", &url], b"", Path::new("."));
    assert_eq!(locs(&out), normal()[..5].to_vec());
    let (out, _) =
        crate::ok(&["discover", "-q", "--no-scope", "--format", "csv", "--sitemap", &url], b"", Path::new("."));
    let csv_locs: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(csv_locs, written()[..5].to_vec());
}
