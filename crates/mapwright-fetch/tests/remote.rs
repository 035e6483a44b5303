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
