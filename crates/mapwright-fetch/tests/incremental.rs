//! Incremental mode: conditional requests, index-lastmod skips, and added/removed URLs.

use crate::discover::test_config;
use crate::server::{Route, Server, index, urlset};
use mapwright_fetch::{Change, DiscoverConfig, Discovery, Event, Fetcher, State};
use std::collections::BTreeSet;

fn child(s: &Server, path: &str, etag: &str, urls: &[String]) {
    let r = Route::Fixed {
        status: 200,
        headers: vec![("content-type", "application/xml".into())],
        body: urlset(urls).into(),
        etag: Some(etag.into()),
    };
    s.route(path, r);
}

fn idx(s: &Server, etag: &str, lastmods: [&str; 3]) {
    let kids: Vec<(String, Option<&str>)> =
        ["/c1.xml", "/c2.xml", "/c3.xml"].iter().zip(lastmods).map(|(p, l)| (s.url(p), Some(l))).collect();
    let r = Route::Fixed {
        status: 200,
        headers: vec![("content-type", "application/xml".into())],
        body: index(&kids).into(),
        etag: Some(etag.into()),
    };
    s.route("/index.xml", r);
}

/// One run with state, as `mapwright discover --state --changes` does it: the changes, sorted.
async fn run(s: &Server, state: &State) -> Vec<(Change, String)> {
    state.begin_run().await.unwrap();
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default()).with_state(state.clone());
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let st = state.clone();
    let consumer = tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            if let Event::Urls { sitemap, urls } = ev {
                st.stage(&sitemap, &urls).await.unwrap();
            }
        }
    });
    let summary = d.run_site(&s.base(), tx).await.unwrap();
    consumer.await.unwrap();
    let mut changes = Vec::new();
    state.finish_run(&summary.sitemaps, |c, loc, _| changes.push((c, loc.to_string()))).await.unwrap();
    changes.sort_by(|a, b| a.1.cmp(&b.1));
    changes
}

#[tokio::test]
async fn second_run_is_conditional_and_only_changed_children_are_fetched() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let state = State::open(&dir.path().join("state.db")).await.unwrap();
    let u = |p: &str| s.url(p);
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", u("/index.xml")));
    idx(&s, "\"i1\"", ["2024-01-01", "2024-01-01", "2024-01-01"]);
    child(&s, "/c1.xml", "\"a1\"", &[u("/1"), u("/2")]);
    child(&s, "/c2.xml", "\"b1\"", &[u("/3"), u("/4")]);
    child(&s, "/c3.xml", "\"c1\"", &[u("/5")]);

    // First run: everything is new.
    let first = run(&s, &state).await;
    let all: BTreeSet<String> = ["/1", "/2", "/3", "/4", "/5"].iter().map(|p| u(p)).collect();
    assert!(first.iter().all(|(c, _)| *c == Change::Added));
    assert_eq!(first.iter().map(|(_, l)| l.clone()).collect::<BTreeSet<_>>(), all);
    assert_eq!(s.take_paths(), vec!["/c1.xml", "/c2.xml", "/c3.xml", "/index.xml", "/robots.txt"]);

    // Second run, nothing changed: the index answers 304 to a conditional request, the
    // children are skipped on their unchanged lastmod, and there are no changes.
    let second = run(&s, &state).await;
    assert_eq!(second, vec![]);
    let log = s.take_log();
    let sitemaps: Vec<_> = log.iter().filter(|r| r.path != "/robots.txt").collect();
    assert_eq!(sitemaps.len(), 1, "{:?}", log.iter().map(|r| &r.path).collect::<Vec<_>>());
    assert_eq!(sitemaps[0].path, "/index.xml");
    assert_eq!(sitemaps[0].headers["if-none-match"], "\"i1\"");

    // c2 changes (and the index says so): only the index and c2 are fetched.
    idx(&s, "\"i2\"", ["2024-01-01", "2024-02-02", "2024-01-01"]);
    child(&s, "/c2.xml", "\"b2\"", &[u("/3"), u("/6")]);
    let third = run(&s, &state).await;
    assert_eq!(third, vec![(Change::Removed, u("/4")), (Change::Added, u("/6"))]);
    let log = s.take_log();
    let paths: Vec<&str> = log.iter().map(|r| r.path.as_str()).filter(|p| *p != "/robots.txt").collect();
    assert_eq!(paths.iter().copied().collect::<BTreeSet<_>>(), BTreeSet::from(["/index.xml", "/c2.xml"]));
    let c2 = log.iter().find(|r| r.path == "/c2.xml").unwrap();
    assert_eq!(c2.headers["if-none-match"], "\"b1\"");

    // A child whose content is unchanged answers 304 when its lastmod moves anyway.
    idx(&s, "\"i3\"", ["2024-03-03", "2024-02-02", "2024-01-01"]);
    let fourth = run(&s, &state).await;
    assert_eq!(fourth, vec![]);
    let paths = s.take_paths();
    assert_eq!(paths, vec!["/c1.xml", "/index.xml", "/robots.txt"]);

    // c3 disappears from the index: its URL is removed.
    let kids = [(u("/c1.xml"), Some("2024-03-03")), (u("/c2.xml"), Some("2024-02-02"))];
    s.route(
        "/index.xml",
        Route::Fixed { status: 200, headers: vec![], body: index(&kids).into(), etag: Some("\"i4\"".into()) },
    );
    let fifth = run(&s, &state).await;
    assert_eq!(fifth, vec![(Change::Removed, u("/5"))]);
}

/// An OAI-PMH answer holding `records` (URLs) and, when given, a resumption token.
fn oai_page(records: &[String], token: Option<&str>) -> String {
    let recs: String = records
        .iter()
        .enumerate()
        .map(|(i, u)| {
            format!(
                "<record><header><identifier>oai:x:{i}</identifier><datestamp>2020-01-01</datestamp></header>\
                 <metadata><oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
                 xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:identifier>{u}</dc:identifier></oai_dc:dc>\
                 </metadata></record>"
            )
        })
        .collect();
    let token = token.map(|t| format!("<resumptionToken>{t}</resumptionToken>")).unwrap_or_default();
    format!(
        "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><responseDate>2020-01-01T00:00:00Z\
         </responseDate><request>x</request><ListRecords>{recs}{token}</ListRecords></OAI-PMH>"
    )
}

/// Regression (audit: `discover --state --changes` over an OAI-PMH repository whose page 2
/// answered badResumptionToken printed its items of page 2 as removed, then as added again):
/// a sitemap read part-way leaves its stored URLs as they were, and what it read that was new
/// is not added either; the next complete read says what changed.
#[tokio::test]
async fn a_sitemap_read_part_way_leaves_its_stored_urls_unchanged() {
    let s = Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let state = State::open(&dir.path().join("state.db")).await.unwrap();
    let u = |p: &str| s.url(p);
    let first = "/oai?verb=ListRecords&metadataPrefix=oai_dc";
    let second = "/oai?verb=ListRecords&resumptionToken=A";
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", u(first)));
    s.page(first, "text/xml", oai_page(&[u("/item/1"), u("/item/2")], Some("A")));
    s.page(second, "text/xml", oai_page(&[u("/item/3"), u("/item/4")], None));
    s.page("/c.xml", "application/xml", urlset(&[u("/1"), u("/2")]));

    let all: BTreeSet<String> = ["/item/1", "/item/2", "/item/3", "/item/4"].iter().map(|p| u(p)).collect();
    let run1 = run(&s, &state).await;
    assert_eq!(run1.iter().map(|(_, l)| l.clone()).collect::<BTreeSet<_>>(), all);

    // Page 2 is refused: the read fails part-way, with a new item on page 1.
    s.page(first, "text/xml", oai_page(&[u("/item/1"), u("/item/5")], Some("A")));
    s.page(second, "text/xml", oai_error("badResumptionToken"));
    assert_eq!(run(&s, &state).await, vec![], "a partial read changed the stored set");

    // Complete again, as in run 1: nothing changed since the last complete read.
    s.page(first, "text/xml", oai_page(&[u("/item/1"), u("/item/2")], Some("A")));
    s.page(second, "text/xml", oai_page(&[u("/item/3"), u("/item/4")], None));
    assert_eq!(run(&s, &state).await, vec![]);

    // A urlset cut by a truncation after its second entry: the same.
    s.page("/robots.txt", "text/plain", format!("Sitemap: {}\n", u("/c.xml")));
    assert_eq!(run(&s, &state).await, vec![(Change::Added, u("/1")), (Change::Added, u("/2"))]);
    let cut = urlset(&[u("/1"), u("/7")]).replace("</urlset>", "<url><lo");
    s.page("/c.xml", "application/xml", cut);
    assert_eq!(run(&s, &state).await, vec![], "a truncated read changed the stored set");
}

fn oai_error(code: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><responseDate>2020-01-01T00:00:00Z\
         </responseDate><request>x</request><error code=\"{code}\">no</error></OAI-PMH>"
    )
}
