//! OAI-PMH answers (`tests/data/oai/`, as DSpace and EPrints repositories write them): one page
//! read alone, and a whole list across its pages through a pager, as mapwright-fetch pages it.

use crate::support::read_bytes;
use mapwright_core::validate::{Config, Validator};
use mapwright_core::{Entry, Error, Finding, Format, Limits, PageRequest, Pager, ReadOptions, Rule, SitemapReader};
use std::collections::HashMap;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

const BASE: &str = "http://repo.example";

fn page(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oai").join(name);
    std::fs::read_to_string(&path).unwrap().replace("{{BASE}}", BASE).into_bytes()
}

/// Answers requests from a table, and logs them.
#[derive(Default)]
struct Table {
    answers: HashMap<String, Result<Vec<u8>, String>>,
    asked: Mutex<Vec<String>>,
}

impl Table {
    fn answer(mut self, query: &str, body: Vec<u8>) -> Self {
        self.answers.insert(query.to_string(), Ok(body));
        self
    }

    fn fail(mut self, query: &str, why: &str) -> Self {
        self.answers.insert(query.to_string(), Err(why.to_string()));
        self
    }

    /// The whole list: the bare base URL's answer, then three pages.
    fn repository() -> Self {
        Table::default()
            .answer("verb=ListRecords&metadataPrefix=oai_dc", page("listrecords-1.xml"))
            .answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", page("listrecords-2.xml"))
            .answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", page("listrecords-3.xml"))
    }
}

impl Pager for Table {
    fn open(&self, request: &PageRequest) -> std::io::Result<Box<dyn BufRead + Send>> {
        let q = request.query();
        self.asked.lock().unwrap().push(q.clone());
        match self.answers.get(&q) {
            Some(Ok(body)) => Ok(Box::new(std::io::Cursor::new(body.clone()))),
            Some(Err(why)) => Err(std::io::Error::other(why.clone())),
            None => Err(std::io::Error::other(format!("no answer for {q}"))),
        }
    }
}

struct Harvest {
    urls: Vec<(String, Option<String>)>,
    findings: Vec<Finding>,
    error: Option<Error>,
    asked: Vec<String>,
    bytes: u64,
}

impl Harvest {
    fn rules(&self) -> Vec<Rule> {
        self.findings.iter().map(|f| f.rule).collect()
    }

    fn finding(&self, rule: Rule) -> &Finding {
        self.findings.iter().find(|f| f.rule == rule).unwrap_or_else(|| panic!("no {rule}: {:?}", self.findings))
    }
}

fn harvest(first: &[u8], table: Table, limits: Limits) -> Harvest {
    let table = Arc::new(table);
    let mut reader = SitemapReader::paged(first, ReadOptions { limits }, Some(table.clone())).unwrap();
    assert_eq!(reader.format(), Format::OaiPmh);
    let mut urls = Vec::new();
    let error = loop {
        match reader.next_entry() {
            Ok(Some(Entry::Url(u))) => urls.push((u.loc.to_string(), u.lastmod.map(|l| l.to_string()))),
            Ok(Some(other)) => panic!("{other:?}"),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let findings = reader.drain_findings().collect();
    let asked = table.asked.lock().unwrap().clone();
    Harvest { urls, findings, error, asked, bytes: reader.bytes_read() }
}

#[test]
fn one_page_alone() {
    let r = read_bytes(&page("listrecords-1.xml"));
    assert!(r.error.is_none(), "{:?}", r.error);
    // The first http(s) dc:identifier, after a DOI; the header's datestamp as lastmod.
    let urls = r.urls();
    assert_eq!(urls, vec!["http://repo.example/handle/1234/101"]);
    let Entry::Url(u) = &r.entries[0] else { panic!() };
    assert_eq!(u.lastmod.as_ref().unwrap().to_string(), "2024-03-05T14:22:09Z");
    assert_eq!(r.rules(), vec![Rule::OaiNoUrl, Rule::OaiDeleted, Rule::OaiIncomplete]);
    let no_url = &r.findings[0];
    assert!(no_url.message.contains("oai:repo.example:1234/102"), "{}", no_url.message);
    assert!(no_url.message.contains("10.5555/delta.2024.102, urn:nbn:de:0000-2024102, ISBN 978-3-16-148410-0"));
    assert_eq!(no_url.position.unwrap().line, 31);
    assert!(r.findings[1].message.contains("oai:repo.example:1234/103"));
    // A file cannot ask for the next page: said, with the token.
    assert!(r.findings[2].message.contains("\"oai_dc////100\""), "{}", r.findings[2].message);
    assert_eq!(r.findings[2].rule.severity(), mapwright_core::Severity::Error);
}

#[test]
fn a_whole_list_from_the_base_url() {
    let h = harvest(&page("badverb.xml"), Table::repository(), Limits::default());
    assert!(h.error.is_none(), "{:?}", h.error);
    assert_eq!(
        h.asked,
        vec![
            "verb=ListRecords&metadataPrefix=oai_dc",
            "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100",
            "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200",
        ]
    );
    let got: Vec<(&str, Option<&str>)> = h.urls.iter().map(|(u, l)| (u.as_str(), l.as_deref())).collect();
    assert_eq!(
        got,
        vec![
            ("http://repo.example/handle/1234/101", Some("2024-03-05T14:22:09Z")),
            // Another host: read here; scope is the caller's (read --strict, discover, validate).
            ("http://mirror.example.org/papers/104.pdf", Some("2024-05-12T09:30:00Z")),
            ("http://repo.example/handle/1234/105", None),
            ("http://repo.example/handle/1234/106", Some("2024-06-01T00:00:00Z")),
            ("http://repo.example/handle/1234/107", Some("2024-07-19T16:45:12Z")),
        ]
    );
    // badVerb of the bare base URL is no fault; the repairs of later pages say their page.
    assert_eq!(h.rules(), vec![Rule::OaiNoUrl, Rule::OaiDeleted, Rule::LastmodFormat, Rule::LocWhitespace]);
    let date = h.finding(Rule::LastmodFormat);
    assert!(date.message.starts_with("OAI-PMH page 3: "), "{}", date.message);
    assert_eq!(date.position.unwrap().line, 21);
    assert!(h.finding(Rule::OaiNoUrl).message.starts_with("OAI-PMH page 2: "));
    let total: usize = ["badverb.xml", "listrecords-1.xml", "listrecords-2.xml", "listrecords-3.xml"]
        .iter()
        .map(|n| page(n).len())
        .sum();
    assert_eq!(h.bytes, total as u64);
}

#[test]
fn no_records_match_is_an_empty_result_with_an_error() {
    let r = read_bytes(&page("norecordsmatch.xml"));
    assert!(r.entries.is_empty() && r.error.is_none());
    assert_eq!(r.rules(), vec![Rule::OaiError]);
    assert!(r.findings[0].message.contains("noRecordsMatch"));
    assert_eq!(r.findings[0].position.unwrap().line, 5);
    // The same through a pager: nothing more is asked.
    let table = Table::default().answer("verb=ListRecords&metadataPrefix=oai_dc", page("norecordsmatch.xml"));
    let h = harvest(&page("badverb.xml"), table, Limits::default());
    assert_eq!((h.urls.len(), h.rules(), h.asked.len()), (0, vec![Rule::OaiError], 1));
    // And the validator fails it.
    let report = Validator::new(Config::default()).validate("oai", &page("norecordsmatch.xml")[..]);
    assert!(report.findings.iter().any(|f| f.rule == Rule::OaiError), "{:?}", report.findings);
}

#[test]
fn a_refused_token_stops_the_list_with_an_error() {
    let table = Table::default()
        .answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", page("badresumptiontoken.xml"));
    let h = harvest(&page("listrecords-1.xml"), table, Limits::default());
    assert_eq!(h.urls.len(), 1);
    let f = h.finding(Rule::OaiError);
    assert!(f.message.contains("badResumptionToken") && f.message.starts_with("OAI-PMH page 2: "), "{}", f.message);
}

#[test]
fn faults_of_later_pages_end_the_list_with_oai_incomplete() {
    let first = page("listrecords-1.xml");
    let next = "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100";
    let cases: Vec<(Table, &str, usize)> = vec![
        (Table::default().fail(next, "connection reset"), "could not be fetched: connection reset", 1),
        // The same page again (its record read twice): its token repeats.
        (Table::default().answer(next, first.clone()), "repeats", 2),
        // A cycle of two tokens: 100 -> 200 -> 100.
        (
            Table::repository().answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", first.clone()),
            "repeats",
            5,
        ),
        (
            Table::default().answer(next, b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>".to_vec()),
            "not an OAI-PMH answer (a urlset document)",
            1,
        ),
        (Table::default().answer(next, b"<html><body>Service Unavailable</body></html>".to_vec()), "HTML page", 1),
    ];
    for (table, says, n) in cases {
        let h = harvest(&first, table, Limits::default());
        assert_eq!(h.urls.len(), n, "{says}");
        let f = h.finding(Rule::OaiIncomplete);
        assert!(f.message.contains(says), "{says}: {}", f.message);
    }
}

#[test]
fn the_byte_limit_applies_to_all_pages_together() {
    let first = page("listrecords-1.xml");
    let limits = Limits { max_bytes: first.len() as u64 + 500, ..Limits::default() };
    let h = harvest(&first, Table::repository(), limits.clone());
    assert!(matches!(h.error, Some(Error::TooLarge { .. })), "{:?}", h.error);
    // Exactly used up by the first page: the next one is not even asked for.
    let limits = Limits { max_bytes: first.len() as u64, ..Limits::default() };
    let h = harvest(&first, Table::repository(), limits);
    assert!(h.asked.is_empty(), "{:?}", h.asked);
    assert!(h.finding(Rule::OaiIncomplete).message.contains("limit"));
}

#[test]
fn detected_by_root_and_namespace() {
    let wrong = b"<OAI-PMH xmlns=\"http://example.com/not-oai\"><ListRecords/></OAI-PMH>";
    let r = read_bytes(wrong);
    assert!(matches!(r.error, Some(Error::NotSitemap { .. })), "{:?}", r.error);
    assert_eq!(
        PageRequest::Resume("a b&c=d/é".into()).query(),
        "verb=ListRecords&resumptionToken=a+b%26c%3Dd%2F%C3%A9"
    );
}
