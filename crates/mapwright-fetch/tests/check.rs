//! Live URL checks: url-status, url-noindex, robots-disallowed.

use crate::discover::test_config;
use crate::server::{Route, Server, fixed};
use mapwright_core::{Position, Rule};
use mapwright_fetch::Fetcher;
use mapwright_fetch::check::{CheckConfig, UrlToCheck, check_urls};

#[tokio::test]
async fn each_kind_of_bad_url_is_reported_once_with_its_rule() {
    let s = Server::start().await;
    s.page("/robots.txt", "text/plain", "User-agent: *\nDisallow: /private/\n");
    s.page("/ok", "text/html", "<html><head><meta name=\"robots\" content=\"index, follow\"></head></html>");
    s.page("/plain.pdf", "application/pdf", "%PDF");
    s.route("/gone", fixed(404, "text/html", "<html>gone</html>"));
    s.route("/down", fixed(503, "text/plain", "down"));
    s.route("/moved", Route::Redirect(s.url("/ok")));
    s.route(
        "/hidden-header",
        Route::Fixed {
            status: 200,
            headers: vec![("x-robots-tag", "googlebot: noindex".into())],
            body: "x".into(),
            etag: None,
        },
    );
    s.page(
        "/hidden-meta",
        "text/html; charset=utf-8",
        "<!DOCTYPE html><html><head><META name='robots' content='NOINDEX,follow'></head></html>",
    );
    s.page("/private/page", "text/html", "<html></html>");
    let paths = ["/ok", "/plain.pdf", "/gone", "/down", "/moved", "/hidden-header", "/hidden-meta", "/private/page"];
    let urls: Vec<UrlToCheck> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| UrlToCheck {
            loc: s.url(p),
            position: Some(Position { line: i as u32 + 1, column: 1, offset: 0 }),
        })
        .collect();
    let f = Fetcher::new(test_config()).unwrap();
    let findings = check_urls(&f, urls, &CheckConfig::default()).await;
    let got: Vec<(Rule, String, u32, String)> = findings
        .iter()
        .map(|f| {
            (
                f.rule,
                f.loc.clone().unwrap().replace(&s.base(), ""),
                f.position.unwrap().line,
                f.message.replace(&s.base(), ""),
            )
        })
        .collect();
    let want = vec![
        (Rule::UrlStatus, "/gone".to_string(), 3, "/gone answers 404".to_string()),
        (Rule::UrlStatus, "/down".into(), 4, "/down answers 503".into()),
        (Rule::UrlStatus, "/moved".into(), 5, "/moved redirects to /ok (answers 302)".into()),
        (Rule::UrlNoindex, "/hidden-header".into(), 6, "/hidden-header sends X-Robots-Tag: googlebot: noindex".into()),
        (
            Rule::UrlNoindex,
            "/hidden-meta".into(),
            7,
            "/hidden-meta has <meta name=\"robots\" content=\"noindex,follow\">".into(),
        ),
        (Rule::RobotsDisallowed, "/private/page".into(), 8, "/private/page is disallowed by its robots.txt".into()),
    ];
    assert_eq!(got, want);
    let log = s.take_log();
    // Politeness: the disallowed page was never requested; robots.txt once; the PDF by HEAD only.
    assert!(!log.iter().any(|r| r.path == "/private/page"));
    assert_eq!(log.iter().filter(|r| r.path == "/robots.txt").count(), 1);
    let pdf: Vec<&str> = log.iter().filter(|r| r.path == "/plain.pdf").map(|r| r.method.as_str()).collect();
    assert_eq!(pdf, vec!["HEAD"]);
    // One request per URL: a GET for pages (read up to the end of the head), redirects not followed.
    for p in paths.iter().filter(|p| !p.starts_with("/private") && **p != "/plain.pdf") {
        let asked: Vec<&str> = log.iter().filter(|r| r.path == *p).map(|r| r.method.as_str()).collect();
        assert_eq!(asked, vec!["GET"], "{p}");
    }
    assert_eq!(log.iter().filter(|r| r.path == "/ok").count(), 1, "the redirect's target is not requested");
}
