//! The peers' robots.txt cases of `shared/conformance` (the core replays the sitemap files):
//! every `Sitemap:` URL the peer's test expects, through the parser discovery uses.

use crate::server::{Server, fixed};
use mapwright_fetch::Fetcher;
use mapwright_fetch::robots::{self, Robots};
use serde_json::Value;
use std::path::PathBuf;

/// Robots cases where we deliberately differ, with the reason.
const DIFFERENCES: &[(&str, &str)] = &[(
    "crawler-commons#57",
    "a bare URL line with no `Sitemap:` directive is counted by crawler-commons (PEER-SPECIFIC \
     leniency); neither Google's parser nor the robots.txt standard reads it, so we do not.",
)];

/// `shared/` beside the clone (CI), or one level further up (a work tree in a folder of them).
fn shared() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let beside = manifest.join("../../../shared");
    let p = if beside.join("conformance").exists() { beside } else { manifest.join("../../../../shared") };
    assert!(p.join("conformance").exists(), "shared/ not found at {}", p.display());
    p
}

fn normalise(u: &str) -> String {
    url::Url::parse(u.trim()).map(|u| u.to_string()).unwrap_or_else(|_| u.trim().to_string())
}

#[test]
fn robots_cases() {
    let mut passed = 0;
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    for peer in ["crawler-commons", "ultimate-sitemap-parser"] {
        let dir = shared().join("conformance").join(peer);
        let cases: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        for (i, case) in cases.iter().enumerate() {
            let id = format!("{peer}#{i}");
            if case["kind"] != "robots" || case["file"].is_null() {
                continue;
            }
            let body = std::fs::read(dir.join(case["file"].as_str().unwrap())).unwrap();
            let served = case["served_at"].as_str().unwrap_or("");
            let robots_url =
                if served.ends_with("robots.txt") { served.to_string() } else { format!("{served}/robots.txt") };
            let got: Vec<String> =
                Robots::parse_at("mapwright", &body, &robots_url).sitemaps.iter().map(|s| normalise(s)).collect();
            let expect = &case["expect"];
            let mut why = None;
            if let Some(n) = expect["sitemap_count"].as_u64() {
                if got.len() as u64 != n {
                    why = Some(format!("{} sitemaps ({got:?}), expected {n}", got.len()));
                }
            }
            for s in expect["sitemaps"].as_array().into_iter().flatten() {
                let want = normalise(s["loc"].as_str().unwrap());
                if !got.contains(&want) {
                    why = Some(format!("{want} missing from {got:?}"));
                }
            }
            let differs = DIFFERENCES.iter().any(|(d, _)| *d == id);
            match (why, differs) {
                (None, false) => passed += 1,
                (None, true) => stale.push(id),
                (Some(_), true) => {}
                (Some(w), false) => failures.push(format!("{id}: {w}")),
            }
        }
    }
    eprintln!("robots conformance: {passed} passed, {} deliberate differences", DIFFERENCES.len());
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(stale.is_empty(), "listed as differences but now pass: {stale:?}");
    assert_eq!(passed, 21, "every robots case with a file, minus the listed difference");
}

/// ultimate-sitemap-parser#18: robots.txt answers 404 with an HTML body: no sitemaps, no rules.
#[tokio::test]
async fn robots_404_means_no_sitemaps() {
    let s = Server::start().await;
    s.route("/robots.txt", fixed(404, "text/html", "<h1>404 Not Found!</h1>"));
    let f = Fetcher::new(crate::discover::test_config()).unwrap();
    let r = robots::fetch(&f, &s.url("/")).await.unwrap();
    assert!(r.sitemaps.is_empty());
    assert!(r.allowed(&s.url("/anything")));
}

/// A peer's mocked site, served on 127.0.0.1 with its host name rewritten to ours.
async fn serve_site(folder: &str) -> Server {
    let s = Server::start().await;
    let dir = shared().join("conformance/ultimate-sitemap-parser/files").join(folder);
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text =
            std::fs::read_to_string(&path).unwrap().replace("http://test_ultimate-sitemap-parser.com", &s.base());
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let ctype = if name.ends_with(".txt") { "text/plain" } else { "application/xml" };
        s.route(&format!("/{name}"), fixed(200, ctype, text));
    }
    s
}

/// ultimate-sitemap-parser#6 and #46, the whole-site crawls: USP counts pages with duplicates
/// and robots.txt as a sitemap node; we output distinct URLs and count sitemap files.
#[tokio::test]
async fn whole_site_crawls() {
    // basic_site: robots.txt names a urlset and (as `Site-map:`) an index of an index; one child
    // answers 404. USP: 6 pages (about, contact, news/foo, news/bar twice, news/baz), 7 sitemap
    // nodes (robots.txt, 3 urlsets, 2 indexes, 1 invalid).
    let s = serve_site("basic_site").await;
    let run = crate::discover::discover(&s.base()).await;
    let pages: Vec<&str> = run.urls.iter().map(|u| u.strip_prefix(&s.base()).unwrap()).collect();
    assert_eq!(pages, ["/about.html", "/contact.html", "/news/bar.html", "/news/baz.html", "/news/foo.html"]);
    assert_eq!(run.summary.duplicates, 1, "news/bar is listed twice");
    assert_eq!(run.summary.sitemaps.len(), 6, "{:?}", run.summary.sitemaps);
    assert_eq!(run.summary.failed.len(), 1, "the missing child: {:?}", run.summary.failed);
    // feeds: robots.txt names an RSS 2.0, an Atom 0.3 and an Atom 1.0 feed of 2 items each.
    let s = serve_site("feeds").await;
    let run = crate::discover::discover(&s.base()).await;
    assert_eq!(run.urls.len() as u64 + run.summary.duplicates, 6, "{:?}", run.urls);
    assert_eq!(run.summary.sitemaps.len(), 3);
    assert!(run.summary.failed.is_empty());
}
