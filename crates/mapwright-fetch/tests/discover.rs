//! Discovery end to end: robots.txt, fallbacks, indexes of every format, failures, scope.

use crate::server::{Route, Server, fixed, gz, index, urlset};
use mapwright_fetch::{Config, DiscoverConfig, Discovery, Event, Fetcher, RobotsAnswer, SiteSummary, Summary};
use std::collections::BTreeSet;
use std::time::Duration;

/// What a discovery produced.
pub struct Run {
    pub urls: BTreeSet<String>,
    /// (url, sitemap) pairs, to check the `sitemap` of each URL.
    pub pairs: BTreeSet<(String, String)>,
    pub summary: Summary,
    /// Notices and finding messages, as `rule: message` or `notice: message`.
    pub notes: Vec<String>,
}

pub fn test_config() -> Config {
    Config {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
        read_timeout: Duration::from_secs(2),
        retries: 1,
        backoff: Duration::from_millis(10),
        ..Config::default()
    }
}

pub async fn discover_with(d: Discovery, site: Option<&str>, seeds: Vec<String>) -> Run {
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let collect = tokio::spawn(async move {
        let (mut urls, mut pairs, mut notes) = (BTreeSet::new(), BTreeSet::new(), Vec::new());
        while let Some(ev) = rx.recv().await {
            match ev {
                Event::Urls { sitemap, urls: batch } => {
                    for u in batch {
                        assert!(urls.insert(u.loc.to_string()), "{} output twice", u.loc);
                        pairs.insert((u.loc.to_string(), sitemap.to_string()));
                    }
                }
                Event::Finding { finding, .. } => notes.push(format!("{}: {}", finding.rule, finding.message)),
                Event::Notice { message, .. } => notes.push(format!("notice: {message}")),
                Event::Sitemap(_) => {}
            }
        }
        (urls, pairs, notes)
    });
    let summary = match site {
        Some(s) => d.run_site(s, tx).await.unwrap(),
        None => d.run_sitemaps(seeds, tx).await.unwrap(),
    };
    let (urls, pairs, notes) = collect.await.unwrap();
    Run { urls, pairs, summary, notes }
}

pub async fn discover(site: &str) -> Run {
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default());
    discover_with(d, Some(site), Vec::new()).await
}

fn urls(s: &Server, prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| s.url(&format!("/{prefix}/{i}"))).collect()
}

fn set(v: &[Vec<String>]) -> BTreeSet<String> {
    v.iter().flatten().cloned().collect()
}

#[tokio::test]
async fn robots_with_several_sitemap_lines_in_any_case() {
    let s = Server::start().await;
    let (a, b) = (urls(&s, "a", 3), urls(&s, "b", 2));
    let robots = format!(
        "# hello\nSitemap: {}\nUser-agent: *\nDisallow: /private\n\nsITEMAP:{}\n",
        s.url("/a.xml"),
        s.url("/b.txt")
    );
    s.page("/robots.txt", "text/plain", robots);
    s.page("/a.xml", "application/xml", urlset(&a));
    s.page("/b.txt", "text/plain", b.join("\n"));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a.clone(), b]));
    assert_eq!(run.summary.seeds_from, "robots.txt");
    assert_eq!(run.summary.fetched, 2);
    assert!(run.pairs.contains(&(a[0].clone(), s.url("/a.xml"))));
    // No fallback path was tried.
    assert_eq!(s.take_paths(), vec!["/a.xml", "/b.txt", "/robots.txt"]);
}

#[tokio::test]
async fn no_robots_txt_falls_back_to_the_usual_paths() {
    let s = Server::start().await;
    let (a, b) = (urls(&s, "a", 2), urls(&s, "b", 2));
    s.page("/sitemap.xml", "application/xml", urlset(&a));
    s.page("/sitemap.txt", "text/plain", format!("{}\n{}\n", b.join("\n"), a[0]));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a, b]));
    assert_eq!(run.summary.seeds_from, "usual paths");
    assert_eq!(run.summary.fetched, 2);
    assert!(run.summary.failed.is_empty(), "missing usual paths are no failure: {:?}", run.summary.failed);
    assert_eq!(run.summary.duplicates, 1);
}

#[tokio::test]
async fn robots_txt_that_is_html_falls_back() {
    let s = Server::start().await;
    let a = urls(&s, "a", 2);
    let html = format!("<!DOCTYPE html><html><body>Sitemap: {}</body></html>", s.url("/hidden.xml"));
    s.page("/robots.txt", "text/html", html);
    s.page("/sitemap_index.xml", "application/xml", index(&[(s.url("/s1.xml"), None)]));
    s.page("/s1.xml", "application/xml", urlset(&a));
    s.page("/hidden.xml", "application/xml", urlset(&urls(&s, "hidden", 1)));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a]));
    assert_eq!(run.summary.seeds_from, "usual paths");
    assert!(run.notes.contains(&"notice: robots.txt is an HTML page, not a robots.txt".to_string()), "{:?}", run.notes);
}

#[tokio::test]
async fn a_robots_txt_that_does_not_answer_is_named_and_disallows_the_site() {
    // 503 (after its retry), 429, and slower than the time limit: unreachable (RFC 9309).
    for (route, cause) in [
        (fixed(503, "text/plain", "busy"), "503"),
        (fixed(429, "text/plain", "slow down"), "429"),
        (Route::Drip { every: Duration::from_millis(300), n: 100 }, "timed out"),
    ] {
        let s = Server::start().await;
        s.route("/robots.txt", route);
        s.page("/sitemap.xml", "application/xml", urlset(&urls(&s, "a", 2)));
        let cfg = Config { timeout: Duration::from_secs(1), ..test_config() };
        let d = Discovery::new(Fetcher::new(cfg).unwrap(), DiscoverConfig::default());
        let run = discover_with(d, Some(&s.base()), Vec::new()).await;
        assert!(run.urls.is_empty(), "{cause}");
        let Some(RobotsAnswer::Unreachable { cause: why }) = &run.summary.robots else {
            panic!("{cause}: {:?}", run.summary.robots)
        };
        assert!(why.contains(cause), "{cause}: {why}");
        assert!(s.take_log().iter().all(|r| r.path == "/robots.txt"), "nothing else of the site is fetched");
        assert!(run.notes.iter().any(|n| n.contains("complete disallow")), "{:?}", run.notes);
        let result = Ok(run.summary);
        let line = SiteSummary::of("site", &result, false);
        assert_eq!((line.ok, line.ended, line.robots), (false, "robots-unreachable", Some("unreachable")));
        let error = line.error.unwrap();
        assert!(error.contains(cause) && error.contains("RFC 9309"), "{error}");
    }
}

#[tokio::test]
async fn a_robots_txt_not_found_is_no_restriction_and_said() {
    let s = Server::start().await;
    let a = urls(&s, "a", 2);
    s.route("/robots.txt", fixed(404, "text/plain", "not here"));
    s.page("/sitemap.xml", "application/xml", urlset(&a));
    // A sitemap in a folder lists URLs above it: out of its scope, nobody vouching for it.
    s.route("/sitemap_index.xml", fixed(200, "application/xml", index(&[(s.url("/deep/s.xml"), None)])));
    s.page("/deep/s.xml", "application/xml", urlset(&urls(&s, "b", 3)));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a]));
    assert_eq!(run.summary.robots, Some(RobotsAnswer::Unavailable { status: 404 }));
    assert_eq!(run.summary.out_of_scope, 3);
    let result = Ok(run.summary);
    let line = SiteSummary::of("site", &result, false);
    assert_eq!((line.ok, line.ended, line.robots), (true, "complete", Some("unavailable")));
    let note = line.robots_note.unwrap();
    assert!(note.contains("HTTP 404") && note.contains("no restriction") && note.contains("folder"), "{note}");
    // Every URL out of scope: the site fails, and the summary says why nothing vouched.
    let s = Server::start().await;
    s.route("/sitemap_index.xml", fixed(200, "application/xml", index(&[(s.url("/deep/s.xml"), None)])));
    s.page("/deep/s.xml", "application/xml", urlset(&urls(&s, "b", 3)));
    let result = Ok(discover(&s.base()).await.summary);
    let line = SiteSummary::of("site", &result, false);
    assert_eq!((line.ok, line.ended), (false, "no-urls"));
    let error = line.error.unwrap();
    assert!(error.contains("3 dropped as out of scope") && error.contains("HTTP 404"), "{error}");
}

#[tokio::test]
async fn huge_robots_txt_is_read_up_to_its_limit() {
    let s = Server::start().await;
    let (a, b) = (urls(&s, "a", 2), urls(&s, "b", 2));
    let mut robots = format!("Sitemap: {}\n", s.url("/a.xml"));
    while robots.len() < 600 * 1024 {
        robots.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    robots.push_str(&format!("Sitemap: {}\n", s.url("/b.xml")));
    s.page("/robots.txt", "text/plain", robots);
    s.page("/a.xml", "application/xml", urlset(&a));
    s.page("/b.xml", "application/xml", urlset(&b));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a]));
    assert!(run.notes.iter().any(|n| n.contains("robots.txt is larger than 524288 bytes")), "{:?}", run.notes);
}

#[tokio::test]
async fn index_of_gzip_text_rss_and_atom_children() {
    let s = Server::start().await;
    let (g, t, r, a) = (urls(&s, "gz", 3), urls(&s, "txt", 2), urls(&s, "rss", 2), urls(&s, "atom", 2));
    let rss = format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>{}</channel></rss>",
        r.iter()
            .map(|u| format!("<item><link>{u}</link><pubDate>Mon, 02 Jan 2006 15:04:05 GMT</pubDate></item>"))
            .collect::<String>()
    );
    let atom = format!(
        "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>t</title>{}</feed>",
        a.iter()
            .map(|u| format!("<entry><link href=\"{u}\"/><updated>2024-01-02T03:04:05Z</updated></entry>"))
            .collect::<String>()
    );
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/index.xml")));
    let children = ["/gz.xml.gz", "/t.txt", "/feed.rss", "/feed.atom"].map(|p| (s.url(p), Some("2024-01-01")));
    s.page("/index.xml", "application/xml", index(&children));
    s.page("/gz.xml.gz", "application/gzip", gz(urlset(&g).as_bytes()));
    s.page("/t.txt", "text/plain", t.join("\r\n"));
    s.page("/feed.rss", "application/rss+xml", rss);
    s.page("/feed.atom", "application/atom+xml", atom);
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[g, t, r, a.clone()]));
    assert_eq!(run.summary.fetched, 5);
    assert!(run.pairs.contains(&(a[1].clone(), s.url("/feed.atom"))));
}

#[tokio::test]
async fn index_listing_itself_is_a_cycle_fetched_once() {
    let s = Server::start().await;
    let a = urls(&s, "a", 2);
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/index.xml")));
    s.page("/index.xml", "application/xml", index(&[(s.url("/index.xml"), None), (s.url("/sub.xml"), None)]));
    // sub is an index too, listing its ancestor and a leaf.
    s.page("/sub.xml", "application/xml", index(&[(s.url("/index.xml"), None), (s.url("/a.xml"), None)]));
    s.page("/a.xml", "application/xml", urlset(&a));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a]));
    let cycles = run.notes.iter().filter(|n| n.contains("(a cycle)")).count();
    assert_eq!(cycles, 2, "{:?}", run.notes);
    assert_eq!(s.take_paths(), vec!["/a.xml", "/index.xml", "/robots.txt", "/sub.xml"]);
}

#[tokio::test]
async fn failing_children_are_reported_and_the_rest_is_read() {
    let s = Server::start().await;
    let a = urls(&s, "a", 2);
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/index.xml")));
    let kids = ["/a.xml", "/missing.xml", "/broken.xml", "/html.xml", "/wrong-type.xml"].map(|p| (s.url(p), None));
    s.page("/index.xml", "application/xml", index(&kids));
    s.page("/a.xml", "application/xml", urlset(&a));
    s.route("/broken.xml", fixed(500, "text/plain", "oops"));
    s.page(
        "/html.xml",
        "text/html",
        "<!DOCTYPE html>\n<html><head><title>Error</title></head><body>Sorry</body></html>",
    );
    let w = urls(&s, "w", 2);
    s.page("/wrong-type.xml", "image/png", urlset(&w));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a, w]));
    let mut failed: Vec<(String, String)> = run.summary.failed.clone();
    failed.sort();
    let reasons: Vec<(String, String)> =
        failed.into_iter().map(|(u, r)| (u.replace(&s.base(), ""), r.replace(&s.base(), ""))).collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert_eq!(reasons[0], ("/broken.xml".into(), "/broken.xml: HTTP status 500".into()));
    assert_eq!(reasons[1].0, "/html.xml");
    assert!(reasons[1].1.starts_with("/html.xml: 2:1: not a sitemap: "), "{:?}", reasons[1]);
    assert_eq!(reasons[2], ("/missing.xml".into(), "/missing.xml: HTTP status 404".into()));
    // The 500 was retried once (retries: 1), the 404 was not.
    let log: Vec<String> = s.take_log().into_iter().map(|r| r.path).collect();
    assert_eq!(log.iter().filter(|p| *p == "/broken.xml").count(), 2);
    assert_eq!(log.iter().filter(|p| *p == "/missing.xml").count(), 1);
}

#[tokio::test]
async fn double_compression_gz_file_sent_with_content_encoding_gzip() {
    let s = Server::start().await;
    let a = urls(&s, "a", 5);
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/s.xml.gz")));
    s.route(
        "/s.xml.gz",
        Route::Fixed {
            status: 200,
            headers: vec![("content-type", "application/gzip".into()), ("content-encoding", "gzip".into())],
            body: gz(&gz(urlset(&a).as_bytes())).into(),
            etag: None,
        },
    );
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[a]));
    assert!(run.summary.failed.is_empty(), "{:?}", run.summary.failed);
    let seen = s.take_log().into_iter().find(|r| r.path == "/s.xml.gz").unwrap();
    assert_eq!(seen.headers.get("accept-encoding").unwrap(), "gzip");
}

#[tokio::test]
async fn out_of_scope_urls_are_dropped_and_duplicates_removed() {
    let s = Server::start().await;
    let inside = urls(&s, "blog/x", 2);
    let mut listed = inside.clone();
    listed.push(s.url("/shop/1")); // outside /blog/
    listed.push(inside[0].clone()); // duplicate
    s.page("/blog/sitemap.xml", "application/xml", urlset(&listed));
    // Given directly: no robots.txt vouches for the sitemap, so its folder is its scope.
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default());
    let run = discover_with(d, None, vec![s.url("/blog/sitemap.xml")]).await;
    assert_eq!(run.urls, set(&[inside]));
    assert_eq!(run.summary.out_of_scope, 1);
    assert_eq!(run.summary.duplicates, 1);
    let msg = format!(
        "loc-out-of-scope: {} is out of the scope of the sitemap at {} (a path outside the sitemap's folder): dropped",
        s.url("/shop/1"),
        s.url("/blog/sitemap.xml")
    );
    assert!(run.notes.contains(&msg), "{:?}", run.notes);
}

#[tokio::test]
async fn sitemap_on_another_host_without_cross_submission_is_dropped() {
    let s = Server::start().await;
    // Discover localhost; its sitemap lists 127.0.0.1 URLs; 127.0.0.1 has no robots.txt.
    let listed = urls(&s, "p", 3);
    let sitemap = format!("{}/sm.xml", s.other_host());
    s.route("localhost/robots.txt", fixed(200, "text/plain", format!("Sitemap: {sitemap}\n")));
    s.page("/sm.xml", "application/xml", urlset(&listed));
    let run = discover(&s.other_host()).await;
    assert_eq!(run.urls, BTreeSet::new());
    assert_eq!(run.summary.out_of_scope, 3);
    assert_eq!(run.summary.cross_submitted, 0);
    assert!(
        run.notes.iter().all(|n| n.starts_with("loc-out-of-scope: ") && n.contains("another host")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn sitemap_on_another_host_with_cross_submission_is_kept() {
    let s = Server::start().await;
    let listed = urls(&s, "p", 3);
    let sitemap = format!("{}/sm.xml", s.other_host());
    // 127.0.0.1 vouches for the sitemap on localhost.
    s.route("127.0.0.1/robots.txt", fixed(200, "text/plain", format!("Sitemap: {sitemap}\n")));
    s.route("localhost/robots.txt", fixed(404, "text/plain", "none"));
    s.page("/sm.xml", "application/xml", urlset(&listed));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[listed]));
    // Named in 127.0.0.1's robots.txt: vouched for as a whole (one waiver), not URL by URL.
    assert_eq!((run.summary.vouched, run.summary.cross_submitted), (1, 0));
    assert_eq!(run.summary.out_of_scope, 0);
    // robots.txt of 127.0.0.1 was fetched once, though three URLs needed it.
    let robots = s.take_log().into_iter().filter(|r| r.path == "/robots.txt").count();
    assert_eq!(robots, 1);
}

#[tokio::test]
async fn depth_limit() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/i0.xml")));
    s.page("/i0.xml", "application/xml", index(&[(s.url("/i1.xml"), None), (s.url("/a.xml"), None)]));
    s.page("/i1.xml", "application/xml", index(&[(s.url("/i2.xml"), None)]));
    s.page("/i2.xml", "application/xml", index(&[(s.url("/b.xml"), None)]));
    s.page("/a.xml", "application/xml", urlset(&urls(&s, "a", 10)));
    s.page("/b.xml", "application/xml", urlset(&urls(&s, "b", 10)));
    let cfg = DiscoverConfig { max_depth: 2, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with(d, Some(&s.base()), Vec::new()).await;
    assert_eq!(run.urls, set(&[urls(&s, "a", 10)]));
    assert_eq!(run.notes, vec![format!("notice: {} is nested deeper than 2 indexes: not followed", s.url("/b.xml"))]);
    assert_eq!(run.summary.not_followed, 1);
}

#[tokio::test]
async fn url_and_sitemap_count_limits() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/i0.xml")));
    s.page("/i0.xml", "application/xml", index(&[(s.url("/a.xml"), None), (s.url("/b.xml"), None)]));
    s.page("/a.xml", "application/xml", urlset(&urls(&s, "a", 10)));
    s.page("/b.xml", "application/xml", urlset(&urls(&s, "b", 10)));
    let cfg = DiscoverConfig { max_urls: 4, batch: 2, max_sitemaps: 2, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with(d, Some(&s.base()), Vec::new()).await;
    assert_eq!(run.urls, set(&[urls(&s, "a", 4)]));
    assert_eq!(run.summary.urls, 4);
    assert_eq!(run.summary.over_sitemap_limit, 1);
    let mut notes = run.notes.clone();
    notes.sort();
    assert_eq!(
        notes,
        vec![
            format!("notice: more than 2 sitemaps: {} not followed", s.url("/b.xml")),
            "notice: more than 4 URLs: the rest is dropped".to_string(),
        ]
    );
}

/// Regression (audit: a robots.txt naming 50 sitemaps was fetched whole under
/// `--max-sitemaps 5`: the cap was applied to index children only): the cap counts the
/// starting sitemaps too, and each one not fetched is reported.
#[tokio::test]
async fn the_sitemap_cap_counts_the_starting_sitemaps() {
    let s = Server::start().await;
    let named: String = (0..50).map(|i| format!("Sitemap: {}\n", s.url(&format!("/s{i}.xml")))).collect();
    s.page("/robots.txt", "text/plain", named);
    for i in 0..50 {
        s.page(&format!("/s{i}.xml"), "application/xml", urlset(&urls(&s, &format!("s{i}"), 1)));
    }
    let cfg = DiscoverConfig { max_sitemaps: 5, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with(d, Some(&s.base()), Vec::new()).await;
    let fetched: Vec<String> = s.take_paths().into_iter().filter(|p| p != "/robots.txt").collect();
    assert_eq!(fetched.len(), 5, "{fetched:?}");
    assert_eq!((run.summary.fetched, run.summary.over_sitemap_limit, run.urls.len()), (5, 45, 5));
    let not_fetched = run.notes.iter().filter(|n| n.starts_with("notice: more than 5 sitemaps:")).count();
    assert_eq!(not_fetched, 45, "{:?}", run.notes);
    let result = Ok(run.summary);
    let verdict = mapwright_fetch::SiteSummary::of("site", &result, false);
    assert_eq!(verdict.ended, "sitemap-limit");
}

/// The children of an index read elsewhere (the Python package's frames of a local index
/// file) meet the rules a fetched index's children meet: the cap, and with scope the
/// `index-cross-site` rule against the index's URL.
#[tokio::test]
async fn an_index_s_children_read_elsewhere_meet_the_same_cap_and_scope() {
    let s = Server::start().await;
    for c in ["a", "b", "c"] {
        s.page(&format!("/{c}.xml"), "application/xml", urlset(&urls(&s, c, 1)));
    }
    let children = vec![s.url("/a.xml"), format!("{}/b.xml", s.other_host()), s.url("/c.xml")];
    let cfg = DiscoverConfig { max_sitemaps: 1, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let summary = d.run_children(Some(&s.url("/index.xml")), children.clone(), tx).await.unwrap();
    let mut rules = Vec::new();
    while let Some(ev) = rx.recv().await {
        if let mapwright_fetch::Event::Finding { finding, .. } = ev {
            rules.push(finding.rule);
        }
    }
    assert_eq!(rules, vec![mapwright_core::Rule::IndexCrossSite]);
    assert_eq!((summary.fetched, summary.over_sitemap_limit, summary.urls), (1, 1, 1));
    // Without scope every child is followed, on any host, still under the cap.
    let cfg = DiscoverConfig { max_sitemaps: 2, scope: false, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with_children(d, &s.url("/index.xml"), children).await;
    assert_eq!((run.fetched, run.over_sitemap_limit), (2, 1));
}

async fn discover_with_children(d: Discovery, index: &str, children: Vec<String>) -> mapwright_fetch::Summary {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let summary = d.run_children(Some(index), children, tx).await.unwrap();
    drain.await.unwrap();
    summary
}

#[tokio::test]
async fn robots_crawl_delay_spaces_the_requests_to_its_host() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", format!("User-agent: *\nCrawl-delay: 0.2\nSitemap: {}\n", s.url("/i.xml")));
    let children: Vec<(String, Option<&str>)> =
        ["a", "b", "c"].iter().map(|c| (s.url(&format!("/{c}.xml")), None)).collect();
    s.page("/i.xml", "application/xml", index(&children));
    for c in ["a", "b", "c"] {
        s.page(&format!("/{c}.xml"), "application/xml", urlset(&urls(&s, c, 2)));
    }
    // Four requests in flight are allowed, but the delay spaces them one by one.
    let run = discover(&s.base()).await;
    assert_eq!(run.summary.urls, 6);
    let mut times: Vec<_> = s.take_log().into_iter().filter(|r| r.path != "/robots.txt").map(|r| r.at).collect();
    times.sort();
    assert_eq!(times.len(), 4);
    for w in times.windows(2) {
        // 0.2 s apart when sent; a little less may separate their arrivals.
        assert!(w[1] - w[0] >= Duration::from_millis(150), "{:?} apart", w[1] - w[0]);
    }
}

#[tokio::test]
async fn sitemaps_only_reads_leaves_no_further_than_their_first_entry() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/i.xml")));
    s.page("/i.xml", "application/xml", index(&[(s.url("/a.xml"), None)]));
    s.page("/a.xml", "application/xml", urlset(&urls(&s, "a", 10)));
    let cfg = DiscoverConfig { sitemaps_only: true, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with(d, Some(&s.base()), Vec::new()).await;
    assert!(run.urls.is_empty());
    assert_eq!(run.summary.fetched, 2);
    let mut listed: Vec<String> = run.summary.sitemaps.iter().map(|(u, _)| u.clone()).collect();
    listed.sort();
    assert_eq!(listed, vec![s.url("/a.xml"), s.url("/i.xml")]);
}

#[tokio::test]
async fn scope_can_be_turned_off_like_most_libraries_do() {
    let s = Server::start().await;
    let listed = vec![s.url("/blog/1"), "https://www.example.com/elsewhere".to_string()];
    s.page("/blog/sitemap.xml", "application/xml", urlset(&listed));
    let cfg = DiscoverConfig { scope: false, ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), cfg);
    let run = discover_with(d, None, vec![s.url("/blog/sitemap.xml")]).await;
    assert_eq!(run.urls, listed.into_iter().collect());
    assert_eq!(run.summary.out_of_scope, 0);
    // No robots.txt was asked for: scope is not judged, so nothing needs vouching.
    assert_eq!(s.take_paths(), vec!["/blog/sitemap.xml"]);
}

/// The layout of issue 12: robots.txt names an index at the root whose children under
/// /sitemaps/ list /page/N. robots.txt vouches for the children too (any depth): every URL is
/// kept, with one waiver per child; the same child given bare keeps its folder rule.
#[tokio::test]
async fn a_robots_txt_index_vouches_for_children_in_a_subfolder() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/sitemap_index.xml")));
    s.page("/sitemap_index.xml", "application/xml", index(&[(s.url("/sitemaps/a.xml"), None)]));
    s.page("/sitemaps/a.xml", "application/xml", urlset(&urls(&s, "page", 3)));
    let run = discover(&s.base()).await;
    assert_eq!(run.urls, set(&[urls(&s, "page", 3)]), "{:?}", run.notes);
    assert_eq!((run.summary.out_of_scope, run.summary.vouched), (0, 1));
    assert_eq!(run.notes.iter().filter(|n| n.starts_with("scope-vouched: ")).count(), 1, "{:?}", run.notes);
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default());
    let run = discover_with(d, None, vec![s.url("/sitemaps/a.xml")]).await;
    assert!(run.urls.is_empty());
    assert_eq!((run.summary.out_of_scope, run.summary.vouched), (3, 0));
}

/// A reader waiting on another host's robots.txt (cross-submission) when its runtime shuts
/// down (the CLI ending early: its output closed) ends without a panic ("A Tokio 1.x context
/// was found, but it is being shutdown", as `Handle::block_on` on the reader's thread gave).
#[test]
fn a_reader_waiting_on_robots_txt_ends_without_a_panic_when_the_runtime_goes() {
    let panics = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = panics.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        previous(info);
    }));
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let s = Server::start().await;
        // An entry on another host: its robots.txt is asked, and it trickles.
        let elsewhere = format!("{}/x", s.other_host());
        s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", s.url("/s.xml")));
        s.page("/s.xml", "application/xml", urlset(&[s.url("/a"), elsewhere]));
        s.route("localhost/robots.txt", Route::Drip { every: Duration::from_millis(200), n: 100 });
        let cfg = Config { read_timeout: Duration::from_secs(30), ..test_config() };
        let d = Discovery::new(Fetcher::new(cfg).unwrap(), DiscoverConfig::default());
        let (tx, _rx) = tokio::sync::mpsc::channel(16);
        let base = s.base();
        tokio::spawn(async move { d.run_site(&base, tx).await });
        tokio::time::sleep(Duration::from_millis(800)).await;
    });
    drop(rt);
    assert_eq!(panics.load(std::sync::atomic::Ordering::SeqCst), 0, "a thread panicked");
}
