//! The crawler against a site served on 127.0.0.1:0 by axum: robots.txt, noindex in meta and
//! header, canonical, redirects and a redirect loop, 404s, cycles, relative links and base
//! href, non-ASCII paths, query-string duplicates, a crawler trap, and resumption.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use mapwright_crawl::crawl::report::Stop;
use mapwright_crawl::crawl::{BrokenLink, LeftOut};
use mapwright_crawl::{CrawlConfig, CrawlReport, Crawler};
use mapwright_fetch::Fetcher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

#[derive(Clone)]
enum Route {
    Html(String),
    Typed(&'static str, &'static str),
    Headers(Vec<(&'static str, &'static str)>, String),
    Redirect(&'static str),
    Gzip(Vec<u8>),
}

/// A site: routes by path and query as requested, requests counted per path and query.
#[derive(Clone, Default)]
struct Site {
    routes: Arc<Mutex<HashMap<String, Route>>>,
    hits: Arc<Mutex<BTreeMap<String, u32>>>,
    port: u16,
}

impl Site {
    async fn start(routes: Vec<(&str, Route)>) -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut site = Site { port: listener.local_addr().unwrap().port(), ..Site::default() };
        site.routes = Arc::new(Mutex::new(routes.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
        let s = site.clone();
        let app = axum::Router::new().fallback(move |req: Request| {
            let s = s.clone();
            async move { s.answer(&req) }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        site
    }

    fn url(&self, p: &str) -> String {
        format!("http://127.0.0.1:{}{p}", self.port)
    }

    fn answer(&self, req: &Request) -> Response {
        let key = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
        *self.hits.lock().unwrap().entry(key.clone()).or_insert(0) += 1;
        if let Some(m) = key.strip_prefix("/cal?m=") {
            // The endless calendar: every month links to the next and the previous one.
            let m: i64 = m.parse().unwrap_or(0);
            let body = format!("<a href=\"?m={}\">next</a> <a href=\"/cal?m={}\">prev</a>", m + 1, m - 1);
            return html(body);
        }
        let route = self.routes.lock().unwrap().get(&key).cloned();
        match route {
            Some(Route::Html(b)) => html(b),
            Some(Route::Typed(t, b)) => {
                let mut r = Response::new(Body::from(b));
                r.headers_mut().insert("content-type", HeaderValue::from_static(t));
                r
            }
            Some(Route::Headers(h, b)) => {
                let mut r = html(b);
                for (k, v) in h {
                    r.headers_mut().insert(k, HeaderValue::from_static(v));
                }
                r
            }
            Some(Route::Gzip(b)) => {
                let mut r = Response::new(Body::from(b));
                r.headers_mut().insert("content-type", HeaderValue::from_static("text/html"));
                r.headers_mut().insert("content-encoding", HeaderValue::from_static("gzip"));
                r
            }
            Some(Route::Redirect(to)) => {
                let mut r = Response::new(Body::empty());
                *r.status_mut() = StatusCode::FOUND;
                r.headers_mut().insert("location", HeaderValue::from_static(to));
                r
            }
            None => {
                let mut r = Response::new(Body::from("<h1>not found</h1>"));
                *r.status_mut() = StatusCode::NOT_FOUND;
                r
            }
        }
    }

    fn hits(&self) -> BTreeMap<String, u32> {
        self.hits.lock().unwrap().clone()
    }
}

fn html(body: String) -> Response {
    let mut r = Response::new(Body::from(body));
    r.headers_mut().insert("content-type", HeaderValue::from_static("text/html; charset=utf-8"));
    r
}

fn page(links: &[&str]) -> Route {
    let a: String = links.iter().map(|l| format!("<a href=\"{l}\">x</a>\n")).collect();
    Route::Html(format!("<!doctype html><html><head><title>t</title></head><body>{a}</body></html>"))
}

fn head(head: &str, links: &[&str]) -> Route {
    let a: String = links.iter().map(|l| format!("<a href=\"{l}\">x</a>")).collect();
    Route::Html(format!("<html><head>{head}</head><body>{a}</body></html>"))
}

/// The site most tests crawl.
fn site_routes() -> Vec<(&'static str, Route)> {
    vec![
        ("/robots.txt", Route::Typed("text/plain", "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.001\n")),
        (
            "/",
            page(&[
                "/about",
                "about#team",
                "blog/",
                "/private/secret",
                "/missing",
                "/old",
                "/loop1",
                "/noindex-meta",
                "/noindex-header",
                "/nofollow",
                "/dup",
                "/page?utm_source=news",
                "/page?id=1&utm_medium=mail",
                "/page?id=1",
                "/%c3%bcber/gr%C3%B6%C3%9Fe",
                "/file.pdf",
                "mailto:someone@example.com",
                "https://elsewhere.example/",
                "/index.html/../",
            ]),
        ),
        ("/about", page(&["/", "./blog/", "/missing"])),
        ("/blog/", head("<base href=\"/blog/posts/\">", &["one", "../", "../../about"])),
        (
            "/blog/posts/one",
            head("<meta property=\"article:modified_time\" content=\"2024-05-01T10:00:00Z\">", &["/blog/"]),
        ),
        ("/old", Route::Redirect("/new")),
        ("/new", Route::Headers(vec![("last-modified", "Tue, 15 Nov 1994 08:12:31 GMT")], "<a href=/>home</a>".into())),
        ("/loop1", Route::Redirect("/loop2")),
        ("/loop2", Route::Redirect("/loop1")),
        ("/noindex-meta", head("<meta name=\"robots\" content=\"noindex\">", &["/from-noindex"])),
        ("/from-noindex", page(&[])),
        ("/noindex-header", Route::Headers(vec![("x-robots-tag", "noindex")], "<p>hidden</p>".into())),
        ("/nofollow", head("<meta name=robots content=nofollow>", &["/not-followed"])),
        ("/not-followed", page(&[])),
        ("/dup", head("<link rel=\"canonical\" href=\"/canonical-target\">", &[])),
        ("/canonical-target", head("<link rel=canonical href=\"/canonical-target#x\">", &[])),
        ("/page", page(&[])),
        ("/page?id=1", page(&[])),
        ("/%C3%BCber/gr%C3%B6%C3%9Fe", page(&["../%C3%BCber/gr%c3%b6%c3%9fe?"])),
        ("/file.pdf", Route::Typed("application/pdf", "%PDF-1.4")),
        ("/private/secret", page(&[])),
    ]
}

fn fetcher() -> Fetcher {
    let c = mapwright_fetch::Config { retries: 0, ..Default::default() };
    Fetcher::new(c).unwrap()
}

/// Runs a crawl; returns the listed URLs (with lastmod) and the report (time zeroed).
async fn crawl(cfg: CrawlConfig) -> (BTreeMap<String, Option<String>>, CrawlReport) {
    let mut listed = BTreeMap::new();
    let mut report = Crawler::new(cfg, fetcher())
        .run(
            |e| {
                let prev = listed.insert(e.loc.to_string(), e.lastmod.map(|l| l.to_string()));
                assert!(prev.is_none(), "listed twice: {}", e.loc);
                Ok(())
            },
            |_| {},
        )
        .await
        .unwrap();
    report.seconds = 0.0;
    (listed, report)
}

#[tokio::test]
async fn crawls_the_site() {
    let site = Site::start(site_routes()).await;
    let mut cfg = CrawlConfig::new(site.url("/"));
    cfg.strip_query = vec!["utm_*".into()];
    let (listed, report) = crawl(cfg).await;
    let u = |p: &str| site.url(p);
    let expect: BTreeMap<String, Option<String>> = [
        ("/", None),
        ("/about", None),
        ("/blog/", None),
        ("/blog/posts/one", Some("2024-05-01T10:00:00Z")),
        ("/new", Some("Tue, 15 Nov 1994 08:12:31 GMT")),
        ("/from-noindex", None),
        ("/nofollow", None),
        ("/canonical-target", None),
        ("/page", None),
        ("/page?id=1", None),
        ("/%C3%BCber/gr%C3%B6%C3%9Fe", None),
    ]
    .into_iter()
    .map(|(p, l)| (u(p), l.map(String::from)))
    .collect();
    assert_eq!(listed, expect);

    let d = |s: &str| Some(s.to_string());
    let lo = |url: &str, detail: Option<String>| LeftOut { url: u(url), detail };
    let mut left_out = BTreeMap::new();
    left_out.insert("canonical", vec![lo("/dup", d(&u("/canonical-target")))]);
    left_out.insert("noindex", vec![lo("/noindex-header", None), lo("/noindex-meta", None)]);
    left_out.insert("not html", vec![lo("/file.pdf", d("application/pdf"))]);
    left_out.insert("redirect", vec![lo("/old", d(&u("/new")))]);
    left_out.insert("robots", vec![lo("/private/secret", None)]);
    left_out.insert("status", vec![lo("/loop1", d("redirect loop")), lo("/missing", d("status 404"))]);
    let broken = vec![
        BrokenLink {
            url: u("/loop1"),
            status: None,
            error: "redirect loop".into(),
            linked_from: vec![u("/")],
            linking_pages: 1,
        },
        BrokenLink {
            url: u("/missing"),
            status: Some(404),
            error: "status 404".into(),
            linked_from: vec![u("/"), u("/about")],
            linking_pages: 2,
        },
    ];
    let want = CrawlReport {
        start: u("/"),
        pages_fetched: 17,
        resumed: 0,
        listed: 11,
        left_out,
        broken,
        truncated: vec![],
        stopped: None,
        seconds: 0.0,
    };
    assert_eq!(report, want, "{}", report.summary());

    // Politeness and deduplication, seen from the server: robots.txt once, every page once,
    // nothing disallowed, nothing behind nofollow.
    let hits = site.hits();
    assert!(hits.values().all(|n| *n == 1), "{hits:?}");
    for never in ["/private/secret", "/not-followed", "/page?utm_source=news", "/page?id=1&utm_medium=mail"] {
        assert!(!hits.contains_key(never), "{never} fetched: {hits:?}");
    }
    assert_eq!(hits.get("/robots.txt"), Some(&1));
}

#[tokio::test]
async fn include_types_lists_other_documents() {
    let site = Site::start(site_routes()).await;
    let mut cfg = CrawlConfig::new(site.url("/"));
    cfg.include_types = vec!["application/*".into()];
    cfg.exclude = vec!["/blog/**".into(), "/page*".into()];
    let (listed, report) = crawl(cfg).await;
    assert!(listed.contains_key(&site.url("/file.pdf")));
    assert!(!listed.contains_key(&site.url("/blog/")));
    assert_eq!(report.left_out_urls("not html"), Vec::<&str>::new());
    let excluded = report.left_out_urls("excluded");
    let want = [
        site.url("/blog/"),
        site.url("/page?id=1"),
        site.url("/page?id=1&utm_medium=mail"),
        site.url("/page?utm_source=news"),
    ];
    assert_eq!(excluded, want.iter().map(String::as_str).collect::<Vec<_>>());
    // With no --strip-query the three query forms are three URLs, and none was fetched.
    assert!(!site.hits().keys().any(|k| k.starts_with("/page") || k.starts_with("/blog")));
}

#[tokio::test]
async fn a_crawler_trap_is_stopped_by_the_limits() {
    let site = Site::start(vec![]).await;
    let mut cfg = CrawlConfig::new(site.url("/cal?m=0"));
    cfg.max_depth = Some(2);
    let (listed, report) = crawl(cfg).await;
    let cal = |m: i64| site.url(&format!("/cal?m={m}"));
    let want: BTreeSet<String> = (-2..=2).map(cal).collect();
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(report.left_out_urls("depth limit"), [cal(-3), cal(3)].iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(report.stopped, None);

    let mut cfg = CrawlConfig::new(site.url("/cal?m=0"));
    cfg.max_pages = Some(5);
    cfg.concurrency = 1;
    let (listed, report) = crawl(cfg).await;
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(report.pages_fetched, 5);
    assert_eq!(report.stopped, Some(Stop::PageLimit));
    assert_eq!(report.left_out_urls("page limit"), [cal(-3), cal(3)].iter().map(String::as_str).collect::<Vec<_>>());
}

/// A site of 40 pages in a tree with cross links.
fn tree_routes() -> Vec<(String, Route)> {
    (0..40)
        .map(|i| {
            let links: Vec<String> =
                [2 * i + 1, 2 * i + 2, i / 3].iter().filter(|c| **c < 40).map(|c| format!("/p{c}")).collect();
            let refs: Vec<&str> = links.iter().map(String::as_str).collect();
            (format!("/p{i}"), page(&refs))
        })
        .collect()
}

#[tokio::test]
async fn an_interrupted_crawl_resumes_without_refetching() {
    let routes = tree_routes();
    let owned: Vec<(&str, Route)> = routes.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let full_site = Site::start(owned.clone()).await;
    let (full, full_report) = crawl(CrawlConfig::new(full_site.url("/p0"))).await;
    assert_eq!(full.len(), 40);
    let rel = |m: &BTreeMap<String, Option<String>>, s: &Site| {
        m.keys().map(|k| k.replace(&s.url(""), "")).collect::<BTreeSet<_>>()
    };

    let site = Site::start(owned).await;
    let dir = tempfile::tempdir().unwrap();
    // First run: stopped by the page limit after 12 pages.
    let mut cfg = CrawlConfig::new(site.url("/p0"));
    cfg.state = Some(dir.path().to_path_buf());
    cfg.max_pages = Some(12);
    let (first, r1) = crawl(cfg).await;
    assert_eq!((first.len(), r1.stopped), (12, Some(Stop::PageLimit)));

    // Second run: stopped from outside after 8 more pages (a Ctrl-C), then a torn line as a
    // crash mid-write would leave.
    let mut cfg = CrawlConfig::new(site.url("/p0"));
    cfg.state = Some(dir.path().to_path_buf());
    cfg.concurrency = 1;
    let crawler = Crawler::new(cfg.clone(), fetcher());
    let stop = crawler.stop_handle();
    let mut second = 0;
    let r2 = crawler
        .run(
            |_| {
                second += 1;
                Ok(())
            },
            |p| {
                if p.done == 20 {
                    stop.stop();
                }
            },
        )
        .await
        .unwrap();
    assert_eq!((r2.stopped, r2.resumed, r2.pages_fetched, second), (Some(Stop::Interrupted), 12, 20, 20));
    let log = dir.path().join(mapwright_crawl::crawl::state::LOG_NAME);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(b"{\"url\":\"http://127.0.0.1/p3")
        })
        .unwrap();

    // Third run: completes; every page listed once, none fetched twice over the three runs.
    cfg.concurrency = 8;
    let (third, r3) = crawl(cfg).await;
    assert_eq!(rel(&third, &site), rel(&full, &full_site));
    assert_eq!((r3.resumed, r3.pages_fetched, r3.stopped), (20, 40, None));
    let hits = site.hits();
    assert!(hits.iter().all(|(k, n)| *n == 1 || k == "/robots.txt"), "{hits:?}");
    assert_eq!(hits.len(), 41, "{hits:?}");
    assert_eq!((r3.listed, r3.left_out.len(), r3.broken.len()), (full_report.listed, 0, 0));
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn gzipped_pages_are_read_and_long_pages_cut_at_the_size_limit() {
    // 64 KiB of text between two links: with a 16 KiB limit only the first link is seen.
    let filler = "<p>".to_string() + &"lorem ipsum ".repeat(64 * 1024 / 12) + "</p>";
    let long = format!("<a href=/near>near</a>{filler}<a href=/far>far</a>");
    let site = Site::start(vec![
        ("/", Route::Gzip(gzip(b"<html><body><a href=/long>long</a> <a href=/plain>plain</a></body></html>"))),
        ("/long", Route::Gzip(gzip(long.as_bytes()))),
        ("/plain", Route::Html(long.clone())),
        ("/near", page(&[])),
        ("/far", page(&[])),
    ])
    .await;
    let mut cfg = CrawlConfig::new(site.url("/"));
    cfg.max_page_bytes = 16 * 1024;
    let (listed, report) = crawl(cfg).await;
    let want: BTreeSet<String> = ["/", "/long", "/plain", "/near"].iter().map(|p| site.url(p)).collect();
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(report.truncated, vec![site.url("/long"), site.url("/plain")]);
    assert!(!site.hits().contains_key("/far"));

    // Without the limit the far link is found in both, gzipped or not.
    let (listed, report) = crawl(CrawlConfig::new(site.url("/"))).await;
    assert!(listed.contains_key(&site.url("/far")));
    assert!(report.truncated.is_empty());
}
