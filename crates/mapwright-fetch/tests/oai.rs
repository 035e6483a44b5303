//! An OAI-PMH repository over HTTP: its base URL read like a sitemap's, across its pages, with
//! the answers of `mapwright-core/tests/data/oai` served on 127.0.0.1.

use crate::discover::{discover_with, test_config};
use crate::server::{Route, Server, fixed};
use mapwright_core::{Entry, Finding, Format, Limits, Position, ReadOptions, Rule};
use mapwright_fetch::{Config, DiscoverConfig, Discovery, Fetcher, SitemapFetch, Visitor, read_remote};
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
    let f = Fetcher::new(cfg).unwrap();
    let (out, c) =
        read_remote(&f, url, None, ReadOptions { limits: Limits::default() }, Collect::default()).await.unwrap();
    let SitemapFetch::Read(r) = out else { panic!("not asked conditionally") };
    (c, r.error, r.format, r.bytes_read)
}

fn rules(c: &Collect) -> Vec<Rule> {
    c.findings.iter().map(|f| f.rule).collect()
}

#[tokio::test]
async fn a_base_url_is_read_across_its_pages() {
    let s = repository(&Server::start().await);
    // The repository is busy once: 503 with Retry-After, then the page.
    let busy = Route::Flaky {
        fails: Arc::new(Mutex::new(1)),
        status: 503,
        retry_after: Some(1),
        then: Box::new(fixed(200, "text/xml", page("listrecords-2.xml", &s.base()))),
    };
    s.route(SECOND, busy);
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
async fn errors_of_the_repository_are_findings() {
    let s = repository(&Server::start().await);
    // noRecordsMatch: an empty result, with an error.
    s.route(FIRST, fixed(200, "text/xml", page("norecordsmatch.xml", &s.base())));
    let (c, error, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert!(error.is_none() && c.urls.is_empty());
    assert_eq!(rules(&c), vec![Rule::OaiError]);
    // An expired token: the records before it, and an error.
    let s = repository(&Server::start().await);
    s.route(SECOND, fixed(200, "text/xml", page("badresumptiontoken.xml", &s.base())));
    let (c, _, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 1);
    assert!(c.findings.iter().any(|f| f.rule == Rule::OaiError && f.message.contains("badResumptionToken")));
    // A page that fails for good (500 after the retries): the list stops, and says why.
    let s = repository(&Server::start().await);
    s.route(THIRD, fixed(500, "text/plain", "boom"));
    let (c, _, _, _) = read(test_config(), &s.url("/oai2")).await;
    assert_eq!(c.urls.len(), 4);
    let f = c.findings.iter().find(|f| f.rule == Rule::OaiIncomplete).expect("oai-incomplete");
    assert!(f.message.contains("HTTP status 500"), "{}", f.message);
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
    assert!(error.is_none(), "{error:?}");
    assert_eq!(c.urls.len(), 1);
    let f = c.findings.iter().find(|f| f.rule == Rule::OaiIncomplete).expect("oai-incomplete");
    assert!(f.message.contains("timed out (OAI-PMH pages, limit 2s)"), "{}", f.message);
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
