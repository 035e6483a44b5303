//! The `remote` module, the one home of opening a URL for synchronous callers (the CLI's
//! `read`/`validate`, the Python package): used from a thread outside the runtime, as they do.

use crate::discover::test_config;
use crate::server::{Server, index, urlset};
use mapwright_core::validate::{Config as ValidateConfig, Report, Validator, validate_tree};
use mapwright_core::{Entry, Loc, Position, Rule, UrlEntry, Voucher};
use mapwright_fetch::remote::is_url;
use mapwright_fetch::{Error, Fetcher, Opener, RemoteResolver, StrictScope};
use std::io::Read;
use std::sync::Arc;

fn opener() -> (Opener, Server) {
    let rt = Arc::new(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
    let server = rt.block_on(Server::start());
    (Opener::new(rt, Fetcher::new(test_config()).unwrap()), server)
}

fn url_entry(u: &str) -> Entry {
    Entry::Url(UrlEntry::new(Loc::parse(u).unwrap()))
}

#[test]
fn open_streams_a_body_and_an_error_status_is_an_error() {
    let (o, s) = opener();
    s.page("/s.xml", "application/xml", urlset(&[s.url("/a")]));
    let mut r = o.open(&s.url("/s.xml")).expect("opens");
    assert_eq!(r.final_url, s.url("/s.xml"));
    let mut body = String::new();
    r.read_to_string(&mut body).unwrap();
    assert!(body.contains(&s.url("/a")), "{body}");
    match o.open(&s.url("/missing.xml")) {
        Err(Error::Status { status: 404, url }) => assert_eq!(url, s.url("/missing.xml")),
        Err(e) => panic!("expected a 404, got {e}"),
        Ok(_) => panic!("expected a 404, got a body"),
    }
    assert!(is_url("HTTPS://example.com/") && is_url("http://x") && !is_url("http.xml") && !is_url("/tmp/s.xml"));
}

#[test]
fn the_resolver_fetches_an_index_children_and_reports_the_ones_it_cannot() {
    let (o, s) = opener();
    s.page("/index.xml", "application/xml", index(&[(s.url("/a.xml"), None), (s.url("/gone.xml"), None)]));
    s.page("/a.xml", "application/xml", urlset(&[s.url("/1"), s.url("/2")]));
    let validator = Validator::new(ValidateConfig {
        sitemap_url: Some(Loc::parse(&s.url("/index.xml")).unwrap()),
        ..ValidateConfig::default()
    });
    let mut resolver = RemoteResolver::new(o.clone());
    let mut report = Report::new();
    let input = o.open(&s.url("/index.xml")).unwrap();
    let failed = validate_tree(&validator, &s.url("/index.xml"), input, Some(&mut resolver), &mut report);
    assert_eq!(resolver.opened, [s.url("/a.xml")]);
    assert_eq!(failed.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), [s.url("/gone.xml")]);
    assert!(failed[0].1.to_string().contains("404"), "{}", failed[0].1);
    // The index and its one readable child were validated.
    assert_eq!(report.summary.files, 2);
}

#[test]
fn strict_scope_drops_what_the_folder_rule_forbids_unless_robots_txt_vouches() {
    let (o, s) = opener();
    let sitemap = s.url("/blog/sitemap.xml");
    s.page("/blog/sitemap.xml", "application/xml", urlset(&[s.url("/blog/a")]));
    // Nobody vouches: the folder rule binds.
    let voucher = o.voucher(&sitemap, &sitemap);
    assert_eq!(voucher, Voucher::Nobody);
    let scope = StrictScope::new(Loc::parse(&sitemap).unwrap(), sitemap.clone(), voucher);
    assert!(scope.waiver().is_none());
    let pos = Position { line: 3, column: 5, offset: 40 };
    assert!(scope.drop(&url_entry(&s.url("/blog/a")), pos).is_none());
    let f = scope.drop(&url_entry(&s.url("/shop/b")), pos).expect("dropped");
    assert_eq!(f.rule, Rule::LocOutOfScope);
    assert_eq!(f.position, Some(pos));
    assert_eq!(f.loc.as_deref(), Some(s.url("/shop/b").as_str()));
    assert!(f.message.contains(&format!("out of the scope of the sitemap at {sitemap}")), "{}", f.message);
    // Its host's robots.txt names it: the whole host is its scope, said once by the waiver.
    s.page("/robots.txt", "text/plain", format!("Sitemap: {sitemap}\n"));
    // (A new opener: the first one's robots.txt cache remembers the 404.)
    let o2 = Opener::new(o.runtime().clone(), o.fetcher().clone());
    let voucher = o2.voucher(&sitemap, &sitemap);
    assert_eq!(voucher, Voucher::Robots(s.base()));
    let scope = StrictScope::new(Loc::parse(&sitemap).unwrap(), sitemap.clone(), voucher);
    assert_eq!(scope.waiver().map(|f| f.rule), Some(Rule::ScopeVouched));
    assert!(scope.drop(&url_entry(&s.url("/shop/b")), pos).is_none());
    assert!(scope.drop(&url_entry("https://elsewhere.example/x"), pos).is_some());
}

/// Regression (audit: `validate --follow` gave an index's children the index's own OAI-PMH
/// pager, so page 2 of a child repository was asked of the index's URL): each child pages on
/// its own repository.
#[test]
fn each_child_of_an_index_pages_on_its_own_repository() {
    let (o, s) = opener();
    let first = "/oai?verb=ListRecords&metadataPrefix=oai_dc";
    s.page("/index.xml", "application/xml", index(&[(s.url(first), None)]));
    let page = |loc: &str, token: &str| {
        format!(
            "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\">\
             <responseDate>2020-01-01T00:00:00Z</responseDate><request>x</request><ListRecords><record><header>\
             <identifier>oai:x:{token}</identifier><datestamp>2020-01-01</datestamp></header><metadata>\
             <oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
             xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:identifier>{loc}</dc:identifier></oai_dc:dc>\
             </metadata></record><resumptionToken>{token}</resumptionToken></ListRecords></OAI-PMH>"
        )
    };
    s.page(first, "text/xml", page(&s.url("/item/1"), "A"));
    s.page("/oai?verb=ListRecords&resumptionToken=A", "text/xml", page(&s.url("/item/2"), ""));
    let index_url = s.url("/index.xml");
    let input = o.open(&index_url).unwrap();
    let validator = Validator::new(ValidateConfig {
        sitemap_url: Some(Loc::parse(&index_url).unwrap()),
        // What the CLI and the Python package give the index: its own pager.
        pager: Some(input.pager.clone()),
        ..ValidateConfig::default()
    });
    let mut resolver = RemoteResolver::new(o.clone());
    let mut report = Report::new();
    let failed = validate_tree(&validator, &index_url, input, Some(&mut resolver), &mut report);
    assert!(failed.is_empty(), "{failed:?}");
    let asked: Vec<String> = s.take_paths();
    assert!(asked.contains(&"/oai?verb=ListRecords&resumptionToken=A".to_string()), "{asked:?}");
    assert!(!asked.iter().any(|p| p.starts_with("/index.xml?")), "page 2 asked of the index: {asked:?}");
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    assert!(!rules.iter().any(|r| r.starts_with("oai-")), "{rules:?}");
    assert_eq!(report.summary.entries, 3, "{rules:?}");
}
