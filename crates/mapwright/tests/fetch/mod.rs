//! `discover`, remote `read` and `submit` run as a user runs them, against a site served on
//! 127.0.0.1:0 by the test.

mod oai;
mod parquet;
mod sites;
mod written;

use axum::Router;
use axum::http::{StatusCode, Uri};
use axum::routing::get;
use std::collections::BTreeSet;
use std::process::Command;

/// A site: robots.txt naming an index of two children (one gzipped), plus a ping endpoint.
fn site(base: &str) -> Router {
    let robots = format!("User-agent: *\nDisallow:\nSitemap: {base}/index.xml\n");
    let index = format!(
        "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
         <sitemap><loc>{base}/a.xml</loc></sitemap><sitemap><loc>{base}/b.xml.gz</loc></sitemap></sitemapindex>"
    );
    let a = format!(
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{base}/1</loc><lastmod>2024-01-01</lastmod></url>\
         <url><loc>{base}/2</loc></url><url><loc>http://elsewhere.invalid/x</loc></url></urlset>"
    );
    let b = gzip(format!("{base}/3\n{base}/1\n").as_bytes());
    Router::new()
        .route("/robots.txt", get(move || async move { robots }))
        .route("/index.xml", get(move || async move { index }))
        .route("/a.xml", get(move || async move { a }))
        .route("/b.xml.gz", get(move || async move { b }))
        .route(
            "/1",
            get(|| async {
                (
                    [("content-type", "text/html")],
                    "<html><head><meta name=\"robots\" content=\"noindex\"></head></html>",
                )
            }),
        )
        .route(
            "/ping",
            get(|uri: Uri| async move {
                if uri.query().is_some_and(|q| q.starts_with("sitemap=http%3A%2F%2F127.0.0.1")) {
                    StatusCode::OK
                } else {
                    StatusCode::BAD_REQUEST
                }
            }),
        )
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Starts the site on its own runtime thread and returns its base URL.
fn serve() -> String {
    serve_app(site)
}

/// Serves the router `app` makes for its base URL on 127.0.0.1:0, on a runtime thread of its
/// own, and returns the base URL: every test site of these modules starts so.
pub(super) fn serve_app(app: impl FnOnce(&str) -> Router + Send + 'static) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
            let app = app(&base);
            tx.send(base).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

fn mapwright(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn discover_lists_each_url_once_with_its_sitemap() {
    let base = serve();
    let (code, out, err) = mapwright(&["discover", &base]);
    assert_eq!(code, 0, "{err}");
    let got: BTreeSet<(String, String)> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["loc"].as_str().unwrap().replace(&base, ""), v["sitemap"].as_str().unwrap().replace(&base, ""))
        })
        .collect();
    // /1 is listed by both children: kept once, with whichever sitemap gave it first.
    let locs: BTreeSet<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(locs, BTreeSet::from(["/1", "/2", "/3"]));
    assert!(got.contains(&("/2".into(), "/a.xml".into())) && got.contains(&("/3".into(), "/b.xml.gz".into())));
    assert!(err.contains("loc-out-of-scope"), "{err}");
    assert!(
        err.contains(
            "sitemaps from robots.txt: 3 fetched, 0 not modified, 0 skipped (index lastmod unchanged), 0 failed"
        ),
        "{err}"
    );
    assert!(err.contains("3 URLs; dropped: 1 duplicates, 1 out of scope"), "{err}");
}

#[test]
fn discover_text_csv_and_sitemaps_only() {
    let base = serve();
    let (_, out, _) = mapwright(&["discover", "--format", "text", "-q", &base]);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, vec![format!("{base}/1"), format!("{base}/2"), format!("{base}/3")]);
    let (_, out, _) = mapwright(&["discover", "--format", "csv", "-q", &base]);
    assert_eq!(out.lines().next(), Some("loc,lastmod,changefreq,priority,sitemap"));
    assert!(out.contains(&format!("{base}/2,,,,{base}/a.xml\n")), "{out}");
    let (code, out, _) = mapwright(&["discover", "--sitemaps-only", "--format", "text", "-q", &base]);
    assert_eq!(code, 0);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, vec![format!("{base}/a.xml"), format!("{base}/b.xml.gz"), format!("{base}/index.xml")]);
}

#[test]
fn discover_changes_with_state() {
    let base = serve();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let db = db.to_str().unwrap();
    let (code, out, err) = mapwright(&["discover", "--state", db, "--changes", "--format", "text", "-q", &base]);
    assert_eq!(code, 0, "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, vec![format!("+ {base}/1"), format!("+ {base}/2"), format!("+ {base}/3")]);
    let (code, out, _) = mapwright(&["discover", "--state", db, "--changes", "-q", &base]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn read_accepts_a_url_and_judges_scope_on_it() {
    let base = serve();
    let (code, out, err) = mapwright(&["read", "--format", "text", &format!("{base}/b.xml.gz")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{base}/3\n{base}/1\n"));
    let (code, _, err) = mapwright(&["read", &format!("{base}/missing.xml")]);
    assert_eq!(code, 2);
    assert!(err.contains("/missing.xml: HTTP status 404"), "{err}");
}

#[test]
fn submit_ping_reports_the_status() {
    let base = serve();
    let (code, out, _) = mapwright(&["submit", &format!("{base}/index.xml"), "--ping", &format!("{base}/ping")]);
    assert_eq!(code, 0);
    assert_eq!(out, format!("ping {base}/ping: HTTP 200: received (not a verdict on validity)\n"));
}

/// (rule, file, loc) of each finding of a `validate --format json` run, paths relative to `base`.
fn findings(out: &str, base: &str) -> Vec<(String, String, String)> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").replace(base, "");
            (s("rule"), s("file"), s("loc"))
        })
        .collect()
}

#[test]
fn validate_fetches_a_url_and_checks_the_listed_urls_live() {
    let base = serve();
    let (code, out, err) = mapwright(&["validate", "--format", "json", "--check-urls", &format!("{base}/b.xml.gz")]);
    assert_eq!(code, 0, "warnings only: {out}{err}");
    assert_eq!(
        findings(&out, &base),
        vec![
            ("url-status".to_string(), "/b.xml.gz".to_string(), "/3".to_string()),
            ("url-noindex".into(), "/b.xml.gz".into(), "/1".into()),
        ]
    );
}

#[test]
fn validate_follows_a_remote_index_and_judges_scope_on_its_url() {
    let base = serve();
    let (code, out, err) = mapwright(&["validate", "--format", "json", "--follow", &format!("{base}/index.xml")]);
    assert_eq!(code, 1, "a.xml lists a URL of another host: {out}{err}");
    let f = findings(&out, &base);
    assert!(f.contains(&("loc-out-of-scope".into(), "/a.xml".into(), "http://elsewhere.invalid/x".into())), "{f:?}");
}

/// Regression (audit: `submit --indexnow` sent the URLs before a fault and exited 0; a sitemap
/// whose every URL was out of scope gave "no URL to submit" and exit 0): a sitemap read
/// part-way sends nothing and fails, and no URL at all fails with its reason.
#[test]
fn submit_indexnow_is_all_or_nothing() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let posts = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = posts.clone();
    let base = serve_app(move |base| {
        let cut = format!(
            "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{base}/1</loc></url><url><lo"
        );
        let out = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                   <url><loc>http://elsewhere.invalid/x</loc></url></urlset>";
        Router::new()
            .route("/cut.xml", get(move || async move { cut }))
            .route("/out.xml", get(move || async move { out }))
            .route(
                "/indexnow",
                axum::routing::post(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    StatusCode::OK
                }),
            )
    });
    let submit = |sitemap: &str| {
        let endpoint = format!("{base}/indexnow");
        mapwright(&["submit", &format!("{base}{sitemap}"), "--indexnow", &endpoint, "--key", "0123456789abcdef"])
    };
    let (code, out, err) = submit("/cut.xml");
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("read part-way: nothing submitted"), "{err}");
    let (code, out, err) = submit("/out.xml");
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("no URL to submit") && err.contains("1 dropped as out of scope"), "{err}");
    assert_eq!(posts.load(Ordering::SeqCst), 0, "something was submitted");
}

/// Regression (audit: `--timeout 1e30` panicked converting it, `--timeout 1e19` at the first
/// OAI-PMH page, "overflow when adding duration to instant"): a time limit out of range is a
/// clear error (exit 2) from the commands that take one.
#[test]
fn time_limits_out_of_range_are_refused_not_panics() {
    let base = serve();
    let index = format!("{base}/index.xml");
    let ping = format!("{base}/ping");
    let limits = [("--timeout", "1e30"), ("--timeout", "1e19"), ("--connect-timeout", "inf"), ("--read-timeout", "0")];
    for (flag, value) in limits {
        for command in [vec!["discover", base.as_str()], vec!["submit", index.as_str(), "--ping", ping.as_str()]] {
            let mut args = command.clone();
            args.extend([flag, value]);
            let (code, _, err) = mapwright(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains(&format!("{flag} must be a positive number of seconds, at most 86400")),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

/// Regression (audit: a site whose robots.txt names nothing and where no usual path answers
/// exited 1 with a summary of zeros only; `--sites` with a list of comments and blank lines
/// exited 0 with "0 sites discovered"): each says why.
#[test]
fn discover_says_why_nothing_was_found() {
    let base = serve_app(|_| Router::new().route("/robots.txt", get(|| async { "User-agent: *\nDisallow:\n" })));
    let (code, _, err) = mapwright(&["discover", &base]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error: no sitemap found: robots.txt names none and no usual path answered"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("sites.txt");
    std::fs::write(&list, "# my sites\n\n   \n# none yet\n").unwrap();
    let (code, _, err) = mapwright(&["discover", "--sites", list.to_str().unwrap(), "-q"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("names no site (only blank lines and comments)"), "{err}");
}
