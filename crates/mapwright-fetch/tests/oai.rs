//! An OAI-PMH repository over HTTP: its base URL read like a sitemap's, across its pages, with
//! the answers of `mapwright-core/tests/data/oai` served on 127.0.0.1.

use crate::discover::{discover_with, test_config};
use crate::server::{Route, Server, fixed};
use mapwright_core::{Entry, Finding, Format, Limits, OaiFault, Position, ReadOptions, Rule};
use mapwright_fetch::{Config, DiscoverConfig, Discovery, Fetcher, ReadReport, SitemapFetch, Visitor, read_remote};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FIRST: &str = "/oai2?verb=ListRecords&metadataPrefix=oai_dc";
const SECOND: &str = "/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100";
const THIRD: &str = "/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200";

fn page(name: &str, base: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mapwright-core/tests/data/oai").join(name);
    std::fs::read_to_string(path).unwrap().replace("{{BASE}}", base)
}

/// A repository at `/oai2`: the bare base URL answers badVerb; three pages of records.
fn repository(s: &Server) -> Server {
    let xml = "text/xml;charset=UTF-8";
    s.route("/oai2", fixed(200, xml, page("badverb.xml", &s.base())));
    s.route(FIRST, fixed(200, xml, page("listrecords-1.xml", &s.base())));
    s.route(SECOND, fixed(200, xml, page("listrecords-2.xml", &s.base())));
    s.route(THIRD, fixed(200, xml, page("listrecords-3.xml", &s.base())));
    s.clone()
}

/// The repository is busy once at `path`: 503 with Retry-After, then the page `name`.
fn busy_once(s: &Server, path: &str, name: &str) {
    let then = Box::new(fixed(200, "text/xml", page(name, &s.base())));
    s.route(path, Route::Flaky { fails: Arc::new(Mutex::new(1)), status: 503, retry_after: Some(1), then });
}

#[derive(Default)]
struct Collect {
    urls: Vec<String>,
    findings: Vec<Finding>,
}

impl Visitor for Collect {
    fn entry(&mut self, entry: Entry, _: Position) -> ControlFlow<()> {
        self.urls.push(entry.loc().to_string());
        ControlFlow::Continue(())
    }
    fn finding(&mut self, f: Finding) {
        self.findings.push(f);
    }
}

async fn read(cfg: Config, url: &str) -> (Collect, Option<mapwright_fetch::Error>, Option<Format>, u64) {
    let (c, r) = read_report(cfg, Limits::default(), url).await;
    (c, r.error, r.format, r.bytes_read)
}

async fn read_report(cfg: Config, limits: Limits, url: &str) -> (Collect, ReadReport) {
    let f = Fetcher::new(cfg).unwrap();
    let (out, c) = read_remote(&f, url, None, ReadOptions { limits }, Collect::default()).await.unwrap();
    let SitemapFetch::Read(r) = out else { panic!("not asked conditionally") };
    (c, r)
}

/// The OAI-PMH fault that ended a read: its page and message.
fn stop(error: &Option<mapwright_fetch::Error>) -> (u32, &OaiFault, String) {
    match error {
        Some(mapwright_fetch::Error::Read { source: mapwright_core::Error::Oai(stop), .. }) => {
            (stop.page, &stop.fault, stop.to_string())
        }
        other => panic!("not ended by an OAI-PMH fault: {other:?}"),
    }
}

fn rules(c: &Collect) -> Vec<Rule> {
    c.findings.iter().map(|f| f.rule).collect()
}

#[tokio::test]
async fn a_base_url_is_read_across_its_pages() {
    let s = repository(&Server::start().await);
    busy_once(&s, SECOND, "listrecords-2.xml");
    let (c, error, format, bytes) = read(test_config(), &s.url("/oai2")).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(format, Some(Format::OaiPmh));
    let b = s.base();
    assert_eq!(
        c.urls,
        vec![
            format!("{b}/handle/1234/101"),
            "http://mirror.example.org/papers/104.pdf".to_string(),
            format!("{b}/handle/1234/105"),
            format!("{b}/handle/1234/106"),
            format!("{b}/handle/1234/107"),
        ]
    );
    assert_eq!(rules(&c), vec![Rule::OaiNoUrl, Rule::OaiDeleted, Rule::LastmodFormat, Rule::LocWhitespace]);
    // Each token sent with verb=ListRecords as the only other argument, in order.
    let asked: Vec<String> = s.take_log().into_iter().map(|r| r.path).collect();
    assert_eq!(asked, vec!["/oai2", FIRST, SECOND, SECOND, THIRD]);
    let total: usize = ["badverb.xml", "listrecords-1.xml", "listrecords-2.xml", "listrecords-3.xml"]
        .iter()
        .map(|n| page(n, &b).len())
        .sum();
    assert_eq!(bytes, total as u64);
}

#[tokio::test]
async fn errors_of_the_repository_end_the_read_with_their_code_and_page() {
    let s = repository(&Server::start().await);
    // noRecordsMatch: no records, and a failed read that names the code.
    s.route(FIRST, fixed(200, "text/xml", page("norecordsmatch.xml", &s.base())));
    let (c, error, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert!(c.urls.is_empty());
    let (n, fault, _) = stop(&error);
    assert_eq!((n, fault.code()), (1, Some("noRecordsMatch")));
    assert_eq!(error.as_ref().unwrap().reason(), "oai-pmh noRecordsMatch");
    // An expired token: the records before it, and the page refused.
    let s = repository(&Server::start().await);
    s.route(SECOND, fixed(200, "text/xml", page("badresumptiontoken.xml", &s.base())));
    let (c, error, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 1);
    let (n, fault, message) = stop(&error);
    assert_eq!((n, fault.code()), (2, Some("badResumptionToken")), "{message}");
    // The second page of records fails for good (500 after the retries): it is page 2, named.
    let s = repository(&Server::start().await);
    s.route(SECOND, fixed(500, "text/plain", "boom"));
    let (c, error, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 1);
    let (n, fault, message) = stop(&error);
    assert!(n == 2 && matches!(fault, OaiFault::Fetch { .. }), "{message}");
    assert_eq!(error.as_ref().unwrap().reason(), "oai-pmh page 2 not read");
    assert!(
        message.starts_with(
            "OAI-PMH page 2 (verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100): could not be fetched"
        ) && message.contains("HTTP status 500")
            && message.contains("only the records of page 1"),
        "{message}"
    );
    assert!(c.findings.iter().all(|f| f.rule != Rule::OaiIncomplete), "said once, as the error");
}

#[tokio::test]
async fn a_url_that_asks_a_verb_gets_its_own_answer() {
    let s = repository(&Server::start().await);
    // ListRecords without a metadataPrefix: badArgument, named, and the records are not read
    // in its stead.
    let bad = "/oai2?verb=ListRecords";
    s.route(bad, fixed(200, "text/xml", page("badverb.xml", &s.base()).replace("badVerb", "badArgument")));
    let (c, error, _, _) = read(test_config(), &s.url(bad)).await;
    assert!(c.urls.is_empty());
    let (n, fault, message) = stop(&error);
    assert_eq!((n, fault.code()), (1, Some("badArgument")), "{message}");
    assert_eq!(s.take_log().len(), 1);
    // Identify leads to the records.
    let identify = format!(
        "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><request verb=\"Identify\">{}/oai2</request>\
         <Identify><repositoryName>R</repositoryName></Identify></OAI-PMH>",
        s.base()
    );
    s.route("/oai2?verb=Identify", fixed(200, "text/xml", identify));
    let (c, error, _, _) = read(test_config(), &s.url("/oai2?verb=Identify")).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(c.urls.len(), 5);
}

#[tokio::test]
async fn every_page_is_counted_in_the_bytes_and_the_hash() {
    let s = repository(&Server::start().await);
    let (_, whole) = read_report(test_config(), Limits::default(), &s.url("/oai2")).await;
    assert!(whole.error.is_none(), "{:?}", whole.error);
    let b = s.base();
    let total: usize = ["badverb.xml", "listrecords-1.xml", "listrecords-2.xml", "listrecords-3.xml"]
        .iter()
        .map(|n| page(n, &b).len())
        .sum();
    assert_eq!(whole.body.bytes, total as u64, "the bytes of every page on the wire");
    // A record removed from the last page: the base URL's answer is the same, the hash is not.
    let third = page("listrecords-3.xml", &b);
    let cut = third.find("<record>").unwrap();
    let end = third[cut..].find("</record>").unwrap() + cut + "</record>".len();
    s.route(THIRD, fixed(200, "text/xml", format!("{}{}", &third[..cut], &third[end..])));
    let (c, fewer) = read_report(test_config(), Limits::default(), &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 4);
    assert_ne!(fewer.body.hash, whole.body.hash);
    assert!(fewer.body.bytes < whole.body.bytes);
}

#[tokio::test]
async fn an_endless_chain_stops_at_the_page_limit_with_a_pause_between_pages() {
    let s = Server::start().await;
    let xml = "text/xml";
    s.route("/oai2", fixed(200, xml, page("badverb.xml", &s.base())));
    // Every page names a new token (no loop to see): t1 -> t2 -> ... -> t40.
    let chain = |n: u32| {
        format!(
            "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><ListRecords><record><header>\
             <identifier>oai:x:{n}</identifier><datestamp>2024-01-01</datestamp></header><metadata>\
             <dc xmlns=\"http://purl.org/dc/elements/1.1/\"><identifier>{b}/r/{n}</identifier></dc></metadata>\
             </record><resumptionToken>t{next}</resumptionToken></ListRecords></OAI-PMH>",
            b = s.base(),
            next = n + 1
        )
    };
    s.route(FIRST, fixed(200, xml, chain(1)));
    for n in 2..40 {
        s.route(&format!("/oai2?verb=ListRecords&resumptionToken=t{n}"), fixed(200, xml, chain(n)));
    }
    let pause = Duration::from_millis(60);
    let cfg = Config { oai_page_pause: pause, ..test_config() };
    let (c, r) = read_report(cfg, Limits { max_pages: 5, ..Limits::default() }, &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 5);
    let (n, fault, message) = stop(&r.error);
    assert_eq!((n, fault), (6, &OaiFault::PageLimit { limit: 5 }), "{message}");
    assert!(message.contains("past 5 pages, the page limit"), "{message}");
    let log = s.take_log();
    assert_eq!(log.len(), 6, "the base URL and five pages, not one more");
    for pair in log.windows(2) {
        assert!(pair[1].at - pair[0].at >= pause, "pages asked for {:?} apart", pair[1].at - pair[0].at);
    }
    assert_eq!(Config::default().oai_page_pause, Duration::from_millis(200));
}

#[tokio::test]
async fn the_pages_together_get_the_time_of_one_sitemap() {
    let s = repository(&Server::start().await);
    // The second page asks for a wait longer than what is left of the time limit.
    let slow = Route::Flaky {
        fails: Arc::new(Mutex::new(1)),
        status: 503,
        retry_after: Some(5),
        then: Box::new(fixed(200, "text/xml", page("listrecords-2.xml", &s.base()))),
    };
    s.route(SECOND, slow);
    let cfg = Config { timeout: Duration::from_secs(2), max_retry_after: Duration::from_secs(60), ..test_config() };
    let (c, error, _, _) = read(cfg, &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 1);
    let (n, _, message) = stop(&error);
    assert!(n == 2 && message.contains("timed out (OAI-PMH pages, limit 2s)"), "{message}");
}

#[tokio::test]
async fn discovery_reads_a_repository_given_as_a_sitemap() {
    let s = repository(&Server::start().await);
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default());
    let run = discover_with(d, None, vec![s.url("/oai2")]).await;
    let b = s.base();
    // The URL on another host is out of the repository's scope: dropped, as from any sitemap.
    let expected: std::collections::BTreeSet<String> =
        [101, 105, 106, 107].iter().map(|n| format!("{b}/handle/1234/{n}")).collect();
    assert_eq!(run.urls, expected, "{:?}", run.notes);
}

/// A gate that lets `allow` requests through, records every URL asked, and holds the rest.
pub(crate) struct CountingGate {
    pub(crate) asked: Mutex<Vec<String>>,
    pub(crate) allow: usize,
}

impl mapwright_fetch::Gate for CountingGate {
    fn ask<'a>(&'a self, url: &'a str) -> std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>> {
        Box::pin(async move {
            let mut asked = self.asked.lock().unwrap();
            asked.push(url.to_owned());
            if asked.len() <= self.allow { Ok(()) } else { Err("the host's budget is spent".to_owned()) }
        })
    }
}

/// A service counts its requests per target at the fetcher's gate: every request the library
/// sends on its own (each OAI-PMH page, a retry, a site's robots.txt) asks it, not only the
/// document asked for; a request it holds is never sent, and the read says why.
#[tokio::test]
async fn every_request_asks_the_gate_and_a_held_one_is_not_sent() {
    let s = repository(&Server::start().await);
    busy_once(&s, SECOND, "listrecords-2.xml");
    let gate = Arc::new(CountingGate { asked: Mutex::new(Vec::new()), allow: usize::MAX });
    let fetcher = Fetcher::new(test_config()).unwrap().with_gate(gate.clone());
    let (out, c) =
        read_remote(&fetcher, &s.url("/oai2"), None, ReadOptions::default(), Collect::default()).await.unwrap();
    let SitemapFetch::Read(r) = out else { panic!("not asked conditionally") };
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(c.urls.len(), 5);
    // Each request sent was asked for first, the retry of the busy page included.
    let sent: Vec<String> = s.take_log().into_iter().map(|r| s.url(&r.path)).collect();
    assert_eq!(*gate.asked.lock().unwrap(), sent);
    assert_eq!(sent.len(), 5);

    // Two requests allowed: the base URL's answer and the first page; the second page is held.
    let gate = Arc::new(CountingGate { asked: Mutex::new(Vec::new()), allow: 2 });
    let fetcher = Fetcher::new(test_config()).unwrap().with_gate(gate.clone());
    let (out, c) =
        read_remote(&fetcher, &s.url("/oai2"), None, ReadOptions::default(), Collect::default()).await.unwrap();
    let SitemapFetch::Read(r) = out else { panic!("not asked conditionally") };
    let (page, _, message) = stop(&r.error);
    assert_eq!(page, 2, "{message}");
    assert!(message.contains("not requested now: the host's budget is spent"), "{message}");
    assert_eq!(c.urls.len(), 1, "the first page's records are read");
    assert_eq!(s.take_log().len(), 2, "the held request was not sent");

    // A site's robots.txt asks the gate too: held, nothing of the site is fetched.
    let gate = Arc::new(CountingGate { asked: Mutex::new(Vec::new()), allow: 0 });
    let fetcher = Fetcher::new(test_config()).unwrap().with_gate(gate.clone());
    let run = discover_with(Discovery::new(fetcher, DiscoverConfig::default()), Some(&s.base()), Vec::new()).await;
    assert!(run.urls.is_empty());
    assert_eq!(*gate.asked.lock().unwrap(), vec![s.url("/robots.txt")]);
    assert!(s.take_log().is_empty(), "nothing sent");
}

/// Regression (audit: `discover --site-deadline` over a repository whose page 2 was slow ran
/// on past the deadline, then panicked at exit, "A Tokio 1.x context was found, but it is
/// being shutdown", in `OaiPager::open`): past the deadline the pager asks for no page, the
/// one under way is dropped, and the reader's blocking thread ends at once, so the runtime
/// shuts down promptly and the summary says the deadline cut the site.
#[test]
fn the_site_deadline_stops_the_paging_of_a_repository() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let began = std::time::Instant::now();
    let summary = rt.block_on(async {
        let s = repository(&Server::start().await);
        let slow = Route::Flaky {
            fails: Arc::new(Mutex::new(3)),
            status: 503,
            retry_after: Some(20),
            then: Box::new(fixed(200, "text/xml", page("listrecords-2.xml", &s.base()))),
        };
        s.route(SECOND, slow);
        let cfg =
            Config { timeout: Duration::from_secs(60), max_retry_after: Duration::from_secs(60), ..test_config() };
        let config = DiscoverConfig { site_deadline: Some(Duration::from_secs(1)), ..DiscoverConfig::default() };
        let d = Discovery::new(Fetcher::new(cfg).unwrap(), config);
        discover_with(d, None, vec![s.url("/oai2")]).await.summary
    });
    assert!(summary.deadline, "{summary:?}");
    // Dropping the runtime waits for its blocking threads: the reader's must be done.
    drop(rt);
    assert!(began.elapsed() < Duration::from_secs(6), "the reader paged on for {:?}", began.elapsed());
}

/// Regression (audit: `--timeout 1e19` panicked in `OaiPager::new`, "overflow when adding
/// duration to instant"): a library caller's time limits past what the clock holds are no
/// limits, not panics, for the pages and for a discovery's deadline.
#[tokio::test]
async fn time_limits_past_the_clock_are_no_limits() {
    let s = repository(&Server::start().await);
    let cfg = Config { timeout: Duration::from_secs(10_000_000_000_000_000_000), ..test_config() };
    let config = DiscoverConfig { site_deadline: Some(Duration::MAX), ..DiscoverConfig::default() };
    let d = Discovery::new(Fetcher::new(cfg).unwrap(), config);
    let run = discover_with(d, None, vec![s.url("/oai2")]).await;
    assert_eq!(run.urls.len(), 4, "{:?}", run.notes);
    assert!(!run.summary.deadline);
}

/// Regression (audit: the pages of a repository ignored robots.txt's Crawl-delay: only the
/// first request of a sitemap waited for the host's turn): every page keeps the delay.
#[tokio::test]
async fn every_page_keeps_the_host_s_crawl_delay() {
    let s = repository(&Server::start().await);
    s.page("/robots.txt", "text/plain", format!("User-agent: *\nCrawl-delay: 0.6\nSitemap: {}\n", s.url("/oai2")));
    let d = Discovery::new(Fetcher::new(test_config()).unwrap(), DiscoverConfig::default());
    let run = discover_with(d, Some(&s.base()), Vec::new()).await;
    assert_eq!(run.urls.len(), 4, "{:?}", run.notes);
    let asked: Vec<_> = s.take_log().into_iter().filter(|r| r.path.starts_with("/oai2")).collect();
    assert_eq!(asked.len(), 4, "{:?}", asked.iter().map(|r| &r.path).collect::<Vec<_>>());
    for pair in asked.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(550), "{} then {} only {gap:?} apart", pair[0].path, pair[1].path);
    }
}
