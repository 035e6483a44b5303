//! Who vouches for a sitemap decides which URLs it may list (PROTOCOL.md section 5), and
//! `discover`, `read` and `validate` give one sitemap one verdict. Two sites on 127.0.0.1
//! (two ports: two origins) served by the test.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::process::Command;

const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";

fn urlset(locs: &[String]) -> String {
    let urls: String = locs.iter().map(|l| format!("<url><loc>{l}</loc></url>")).collect();
    format!("<urlset xmlns=\"{NS}\">{urls}</urlset>")
}

fn index(locs: &[String]) -> String {
    let s: String = locs.iter().map(|l| format!("<sitemap><loc>{l}</loc></sitemap>")).collect();
    format!("<sitemapindex xmlns=\"{NS}\">{s}</sitemapindex>")
}

/// Site A, the common layout of the report: robots.txt names /sitemap_index.xml, whose children
/// under /sitemaps/ list /page/N (and one of them is an index one level deeper); robots.txt
/// also names a sitemap hosted on B that lists A's pages (cross-submission).
fn site_a(a: &str, b: &str) -> Router {
    let robots = format!("User-agent: *\nAllow: /\nSitemap: {a}/sitemap_index.xml\nSitemap: {b}/for-a.xml\n");
    let idx = index(&[
        format!("{a}/sitemaps/pages-1.xml"),
        format!("{a}/sitemaps/pages-2.xml"),
        format!("{a}/sitemaps/deeper/index.xml"),
    ]);
    let p1 = urlset(&[format!("{a}/page/1"), format!("{a}/page/2")]);
    let p2 = urlset(&[format!("{a}/page/3"), format!("{a}/page/4")]);
    let deeper = index(&[format!("{a}/sitemaps/deeper/pages-3.xml")]);
    let p3 = urlset(&[format!("{a}/page/5")]);
    let bare = urlset(&[format!("{a}/bare/1"), format!("{a}/page/6")]);
    Router::new()
        .route("/robots.txt", get(move || async move { robots }))
        .route("/sitemap_index.xml", get(move || async move { idx }))
        .route("/sitemaps/pages-1.xml", get(move || async move { p1 }))
        .route("/sitemaps/pages-2.xml", get(move || async move { p2 }))
        .route("/sitemaps/deeper/index.xml", get(move || async move { deeper }))
        .route("/sitemaps/deeper/pages-3.xml", get(move || async move { p3 }))
        .route("/bare/sitemap.xml", get(move || async move { bare }))
}

/// Site B: no robots.txt; hosts a sitemap that A's robots.txt names, listing A's pages and one
/// of its own.
fn site_b(a: &str, b: &str) -> Router {
    let for_a = urlset(&[format!("{a}/page/7"), format!("{b}/own/1")]);
    Router::new()
        .route("/robots.txt", get(|| async { StatusCode::NOT_FOUND }))
        .route("/for-a.xml", get(move || async move { for_a }))
}

/// Starts both sites; returns their base URLs.
fn serve() -> (String, String) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let la = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let lb = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let a = format!("http://127.0.0.1:{}", la.local_addr().unwrap().port());
            let b = format!("http://127.0.0.1:{}", lb.local_addr().unwrap().port());
            tx.send((a.clone(), b.clone())).unwrap();
            let sa = axum::serve(la, site_a(&a, &b)).into_future();
            let sb = axum::serve(lb, site_b(&a, &b)).into_future();
            let _ = tokio::join!(sa, sb);
        });
    });
    rx.recv().unwrap()
}

fn mapwright(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn lines(out: &str) -> BTreeSet<String> {
    out.lines().map(str::to_string).collect()
}

fn set(items: &[String]) -> BTreeSet<String> {
    items.iter().cloned().collect()
}

/// The URLs of the `loc-out-of-scope` findings of `validate --format json`'s report, in order.
fn out_of_scope(report: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(report).unwrap();
    let findings = doc["findings"].as_array().unwrap().iter();
    findings.filter(|f| f["rule"] == "loc-out-of-scope").map(|f| f["loc"].as_str().unwrap().to_string()).collect()
}

/// The layout of the report (discover printed 0 URLs): every URL of the subfolder children is
/// kept, at any depth, and the waiver is said once per sitemap, not once per URL.
#[test]
fn discover_keeps_every_url_of_a_robots_txt_index_with_children_in_a_subfolder() {
    let (a, b) = serve();
    let (code, out, err) = mapwright(&["discover", "--format", "text", &a]);
    assert_eq!(code, 0, "{err}");
    let want: Vec<String> = (1..=5).map(|n| format!("{a}/page/{n}")).chain([format!("{a}/page/7")]).collect();
    assert_eq!(lines(&out), set(&want), "{err}");
    // pages-1, pages-2, deeper/index, deeper/pages-3 are outside the root folder: one note each.
    assert_eq!(err.matches("info[scope-vouched]").count(), 5, "{err}");
    assert!(err.contains(&format!("{a}/robots.txt names this sitemap (or an index above it)")), "{err}");
    // B's own URL in the sitemap A's robots.txt names: A vouches for A's URLs only.
    assert!(err.contains(&format!("{b}/own/1 is out of the scope")), "{err}");
    assert!(err.contains("6 URLs; dropped: 0 duplicates, 1 out of scope"), "{err}");
}

#[test]
fn a_bare_sitemap_nobody_vouches_for_keeps_its_folder_everywhere() {
    let (a, _) = serve();
    let bare = format!("{a}/bare/sitemap.xml");
    // discover: the bare seed is not named in robots.txt: /page/6 is outside /bare/.
    let (_, out, err) = mapwright(&["discover", "--format", "text", "--sitemap", &bare]);
    assert_eq!(lines(&out), set(&[format!("{a}/bare/1")]), "{err}");
    assert!(!err.contains("scope-vouched"), "{err}");
    // read --strict: the same verdict.
    let (code, out, err) = mapwright(&["read", "--format", "text", "--strict", &bare]);
    assert_eq!((code, lines(&out)), (0, set(&[format!("{a}/bare/1")])), "{err}");
    assert_eq!(err.matches("[loc-out-of-scope]").count(), 1, "{err}");
    // validate: the same verdict.
    let (code, out, err) = mapwright(&["validate", "--format", "json", &bare]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out_of_scope(&out), [format!("{a}/page/6")]);
}

/// A sitemap whose every URL is out of its scope gives nothing: `discover` of one site fails with
/// the reason, as `discover --sites` writes `no-urls` and the Python package raises, and does not
/// exit 0 over an empty list.
#[test]
fn discover_fails_when_every_url_is_out_of_scope_and_says_why() {
    let (a, _) = serve();
    // /sitemaps/pages-1.xml, named by no robots.txt, covers /sitemaps/ only; it lists /page/1, /page/2.
    let seed = format!("{a}/sitemaps/pages-1.xml");
    let (code, out, err) = mapwright(&["discover", "--format", "text", "--sitemap", &seed]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("error: the sitemaps list no URL in their scope: 2 dropped as out of scope"), "{err}");
    // --quiet keeps the exit status.
    let (code, _, err) = mapwright(&["discover", "--quiet", "--format", "text", "--sitemap", &seed]);
    assert_eq!((code, err.as_str()), (1, ""));
}

/// `validate --follow` and `read` give the index's children the verdict `discover` gives them.
#[test]
fn validate_follow_and_read_agree_with_discover() {
    let (a, _) = serve();
    let idx = format!("{a}/sitemap_index.xml");
    let (code, out, err) = mapwright(&["validate", "--format", "json", "--follow", &idx]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let rules: Vec<(&str, &str)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["file"].as_str().unwrap()))
        .collect();
    assert!(!rules.iter().any(|(r, _)| *r == "loc-out-of-scope"), "{rules:?}");
    // The two children outside the root folder say once each why their URLs are in scope.
    let vouched: BTreeSet<&str> = rules.iter().filter(|(r, _)| *r == "scope-vouched").map(|(_, f)| *f).collect();
    let pages1 = format!("{a}/sitemaps/pages-1.xml");
    let pages2 = format!("{a}/sitemaps/pages-2.xml");
    assert!(vouched.contains(pages1.as_str()) && vouched.contains(pages2.as_str()), "{rules:?}");
    assert_eq!(code, 0, "warnings and infos only: {out}");
    assert_eq!(doc["summary"]["entries"], 3 + 2 + 2 + 1, "the index, its three children: {out}");
    // A child read alone is a bare URL (its host's robots.txt does not name it)...
    let (code, _, err) = mapwright(&["read", "--format", "text", "--strict", &pages1]);
    assert_eq!(code, 1, "nobody vouches: both URLs are outside /sitemaps/: {err}");
    // ...unless the user says it was reached through robots.txt.
    let (code, out, err) = mapwright(&["read", "--format", "text", "--strict", "--vouched", &pages1]);
    assert_eq!((code, lines(&out)), (0, set(&[format!("{a}/page/1"), format!("{a}/page/2")])), "{err}");
}

/// A sitemap hosted on B and named in A's robots.txt may list A's URLs, and only A's.
#[test]
fn cross_submission_is_limited_to_the_host_that_vouches() {
    let (a, b) = serve();
    let for_a = format!("{b}/for-a.xml");
    let vouched = format!("--vouched={a}");
    let (code, out, err) = mapwright(&["read", "--format", "text", "--strict", &vouched, &for_a]);
    assert_eq!((code, lines(&out)), (0, set(&[format!("{a}/page/7")])), "{err}");
    assert!(err.contains(&format!("{b}/own/1 is out of the scope")), "{err}");
    let (code, out, _) = mapwright(&["validate", "--format", "json", &vouched, &for_a]);
    assert_eq!(code, 1);
    assert_eq!(out_of_scope(&out), [format!("{b}/own/1")]);
    // discover from A (robots.txt names it): the same verdict (see the first test), and from
    // the bare URL, A's robots.txt is found through the URL it lists (cross-submission).
    let (_, out, err) = mapwright(&["discover", "--format", "text", "--sitemap", &for_a]);
    assert!(lines(&out).contains(&format!("{a}/page/7")), "{err}");
}
