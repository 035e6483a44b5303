//! OAI-PMH answers (`tests/data/oai/`, as DSpace and EPrints repositories write them): one page
//! read alone, and a whole list across its pages through a pager, as mapwright-fetch pages it.

use crate::support::read_bytes;
use mapwright_core::validate::{Config, Validator};
use mapwright_core::{
    Entry, Error, Finding, Format, Limits, OaiFault, PageRequest, Pager, ReadOptions, Rule, SitemapReader,
};
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
    /// The first answer came from a URL that asked a verb.
    verb: bool,
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

    fn asked_a_verb(&self) -> bool {
        self.verb
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

    /// The error that stopped the list: its page, request, fault and message.
    fn stop(&self) -> (u32, Option<&str>, &OaiFault, String) {
        match &self.error {
            Some(Error::Oai(stop)) => (stop.page, stop.request.as_deref(), &stop.fault, stop.to_string()),
            other => panic!("not stopped by an OAI-PMH fault: {other:?}"),
        }
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
    // The first http(s) dc:identifier, after a DOI; the header's datestamp as lastmod.
    let urls = r.urls();
    assert_eq!(urls, vec!["http://repo.example/handle/1234/101"]);
    let Entry::Url(u) = &r.entries[0] else { panic!() };
    assert_eq!(u.lastmod.as_ref().unwrap().to_string(), "2024-03-05T14:22:09Z");
    assert_eq!(r.rules(), vec![Rule::OaiNoUrl, Rule::OaiDeleted]);
    let no_url = &r.findings[0];
    assert!(no_url.message.contains("oai:repo.example:1234/102"), "{}", no_url.message);
    assert!(no_url.message.contains("10.5555/delta.2024.102, urn:nbn:de:0000-2024102, ISBN 978-3-16-148410-0"));
    assert_eq!(no_url.position.unwrap().line, 31);
    assert!(r.findings[1].message.contains("oai:repo.example:1234/103"));
    // A file cannot ask for the next page: the read fails there, saying so, with the token.
    let Some(e @ Error::Oai(stop)) = &r.error else { panic!("{:?}", r.error) };
    assert!(stop.page == 2 && matches!(stop.fault, OaiFault::NoPager { .. }), "{stop:?}");
    let message = e.to_string();
    assert!(message.contains("\"oai_dc////100\"") && message.contains("only the records of page 1"), "{message}");
    assert_eq!(e.rule(), Some(Rule::OaiIncomplete));
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
    // Pages are numbered in the list of records: the base URL's answer holds none.
    let date = h.finding(Rule::LastmodFormat);
    assert!(date.message.starts_with("OAI-PMH page 2: "), "{}", date.message);
    assert_eq!(date.position.unwrap().line, 21);
    assert!(h.finding(Rule::OaiNoUrl).message.starts_with("OAI-PMH page 1: "));
    let total: usize = ["badverb.xml", "listrecords-1.xml", "listrecords-2.xml", "listrecords-3.xml"]
        .iter()
        .map(|n| page(n).len())
        .sum();
    assert_eq!(h.bytes, total as u64);
}

#[test]
fn no_records_match_is_a_failed_read_that_names_the_code() {
    let r = read_bytes(&page("norecordsmatch.xml"));
    assert!(r.entries.is_empty() && r.findings.is_empty(), "{:?}", r.findings);
    let Some(e @ Error::Oai(stop)) = &r.error else { panic!("{:?}", r.error) };
    assert_eq!((stop.page, stop.request.as_deref(), stop.fault.code()), (1, None, Some("noRecordsMatch")));
    assert_eq!(stop.position.unwrap().line, 5);
    assert!(e.to_string().contains("noRecordsMatch") && e.to_string().contains("no records read"), "{e}");
    // The same through a pager: nothing more is asked, and the page is the list's first.
    let table = Table::default().answer("verb=ListRecords&metadataPrefix=oai_dc", page("norecordsmatch.xml"));
    let h = harvest(&page("badverb.xml"), table, Limits::default());
    assert_eq!((h.urls.len(), h.asked.len()), (0, 1));
    let (n, request, fault, _) = h.stop();
    assert_eq!((n, request, fault.code()), (1, Some("verb=ListRecords&metadataPrefix=oai_dc"), Some("noRecordsMatch")));
    // And the validator fails it, with the code.
    let report = Validator::new(Config::default()).validate("oai", &page("norecordsmatch.xml")[..]);
    let f = report.findings.iter().find(|f| f.rule == Rule::OaiError).expect("oai-error");
    assert!(f.message.contains("noRecordsMatch"), "{}", f.message);
}

/// An OAI-PMH error answer with `code`.
fn error_answer(code: &str) -> Vec<u8> {
    format!(
        "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\">\
         <responseDate>2026-11-20T10:16:00Z</responseDate><request>{BASE}/oai2</request>\
         <error code=\"{code}\">said by the repository</error></OAI-PMH>"
    )
    .into_bytes()
}

// Alike on purpose: crates/mapwright/tests/fetch/oai.rs lists the same codes: each test spells
// OAI-PMH 2.0's list itself, so a code the implementation drops fails the reader's test and the
// CLI's.
#[test]
fn every_error_code_of_the_protocol_is_named() {
    let codes = [
        "badArgument",
        "badResumptionToken",
        "badVerb",
        "cannotDisseminateFormat",
        "idDoesNotExist",
        "noRecordsMatch",
        "noMetadataFormats",
        "noSetHierarchy",
        "someLocalCode",
    ];
    let first = "verb=ListRecords&metadataPrefix=oai_dc";
    let second = "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100";
    for code in codes {
        // As the first page of records, after the base URL's badVerb.
        let h = harvest(&page("badverb.xml"), Table::default().answer(first, error_answer(code)), Limits::default());
        let (n, _, fault, message) = h.stop();
        assert_eq!((n, fault.code()), (1, Some(code)), "{message}");
        assert!(message.contains(code) && message.contains("said by the repository"), "{message}");
        // As the second page: the first page's record was given, and the page is named.
        let h =
            harvest(&page("listrecords-1.xml"), Table::default().answer(second, error_answer(code)), Limits::default());
        assert_eq!(h.urls.len(), 1);
        let (n, request, fault, message) = h.stop();
        assert_eq!((n, request, fault.code()), (2, Some(second), Some(code)), "{message}");
        assert!(message.contains("only the records of page 1"), "{message}");
        // As the answer given, the codes a bare base URL does not answer stop the read at once.
        if !matches!(code, "badVerb" | "badArgument") {
            let r = read_bytes(&error_answer(code));
            let Some(Error::Oai(stop)) = &r.error else { panic!("{code}: {:?}", r.error) };
            assert_eq!((stop.page, stop.fault.code()), (1, Some(code)));
        }
    }
    // badVerb and badArgument to a URL that asked a verb: that request refused, named; the
    // records are not asked for instead.
    for code in ["badVerb", "badArgument"] {
        let table = Table { verb: true, ..Table::repository() };
        let h = harvest(&error_answer(code), table, Limits::default());
        assert!(h.asked.is_empty() && h.urls.is_empty(), "{:?}", h.asked);
        let (n, request, fault, _) = h.stop();
        assert_eq!((n, request, fault.code()), (1, None, Some(code)));
    }
    // badVerb and badArgument given alone (a file): the code is named, and why nothing came.
    for code in ["badVerb", "badArgument"] {
        let r = read_bytes(&error_answer(code));
        let e = r.error.as_ref().expect("an error").to_string();
        assert!(e.contains(code) && e.contains("cannot ask the repository"), "{e}");
    }
}

/// A `GetRecord` answer: one record, read with its http(s) identifier; nothing more asked.
const GET_RECORD: &str = "<?xml version=\"1.0\"?>\
<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><responseDate>2026-11-20T10:16:00Z</responseDate>\
<request verb=\"GetRecord\" identifier=\"oai:repo.example:1\" metadataPrefix=\"oai_dc\">http://repo.example/oai2</request>\
<GetRecord><record><header><identifier>oai:repo.example:1</identifier><datestamp>2024-02-01</datestamp></header>\
<metadata><oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\
<dc:title>One</dc:title><dc:identifier>doi:10.1/x</dc:identifier><dc:identifier>https://repo.example/item/1</dc:identifier>\
</oai_dc:dc></metadata></record></GetRecord></OAI-PMH>";

#[test]
fn a_get_record_answer_is_read() {
    let r = read_bytes(GET_RECORD.as_bytes());
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.urls(), vec!["https://repo.example/item/1"]);
    let h = harvest(GET_RECORD.as_bytes(), Table::default(), Limits::default());
    assert!(h.error.is_none() && h.asked.is_empty(), "{:?} {:?}", h.error, h.asked);
    assert_eq!(h.urls, vec![("https://repo.example/item/1".to_string(), Some("2024-02-01".to_string()))]);
}

#[test]
fn identify_and_list_identifiers_lead_to_the_records() {
    let identify = format!(
        "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><responseDate>2026-11-20T10:16:00Z</responseDate>\
         <request verb=\"Identify\">{BASE}/oai2</request><Identify><repositoryName>R</repositoryName>\
         <baseURL>{BASE}/oai2</baseURL><protocolVersion>2.0</protocolVersion></Identify></OAI-PMH>"
    );
    let identifiers = format!(
        "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><responseDate>2026-11-20T10:16:00Z</responseDate>\
         <request verb=\"ListIdentifiers\">{BASE}/oai2</request><ListIdentifiers><header>\
         <identifier>oai:repo.example:9</identifier><datestamp>2024-01-01</datestamp></header>\
         <resumptionToken>ids-2</resumptionToken></ListIdentifiers></OAI-PMH>"
    );
    for (name, answer) in [("Identify", &identify), ("ListIdentifiers", &identifiers)] {
        // Given alone: named, with why nothing was read.
        let r = read_bytes(answer.as_bytes());
        let e = r.error.as_ref().expect("an error").to_string();
        assert!(e.contains(&format!("<{name}>")) && e.contains("without records"), "{e}");
        // Through a pager: the records are asked for, and read across their pages.
        let h = harvest(answer.as_bytes(), Table::repository(), Limits::default());
        assert!(h.error.is_none(), "{name}: {:?}", h.error);
        assert_eq!(h.urls.len(), 5, "{name}");
        assert_eq!(h.asked[0], "verb=ListRecords&metadataPrefix=oai_dc");
    }
    // Where records were asked for, another verb's answer stops the list and is named.
    let table =
        Table::default().answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", identify.into_bytes());
    let h = harvest(&page("listrecords-1.xml"), table, Limits::default());
    let (n, _, fault, _) = h.stop();
    assert_eq!((n, fault), (2, &OaiFault::NotRecords { found: "a <Identify> answer".into() }));
}

#[test]
fn faults_of_later_pages_end_the_read_with_the_page_named() {
    let first = page("listrecords-1.xml");
    let next = "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100";
    let cases: Vec<(Table, &str, usize, u32)> = vec![
        (Table::default().fail(next, "connection reset"), "could not be fetched: connection reset", 1, 2),
        // The same page again (its record read twice): its token repeats.
        (Table::default().answer(next, first.clone()), "was followed before", 2, 3),
        // A cycle of two tokens: 100 -> 200 -> 100.
        (
            Table::repository().answer("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", first.clone()),
            "was followed before",
            5,
            4,
        ),
        (
            Table::default().answer(next, b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>".to_vec()),
            "not an OAI-PMH list of records (a urlset document)",
            1,
            2,
        ),
        (Table::default().answer(next, b"<html><body>Service Unavailable</body></html>".to_vec()), "HTML page", 1, 2),
    ];
    for (table, says, n, stopped_at) in cases {
        let h = harvest(&first, table, Limits::default());
        assert_eq!(h.urls.len(), n, "{says}");
        let (page, _, _, message) = h.stop();
        assert_eq!(page, stopped_at, "{says}: {message}");
        assert!(message.contains(says) && message.starts_with(&format!("OAI-PMH page {page} (")), "{says}: {message}");
        assert!(!h.rules().contains(&Rule::OaiIncomplete), "said once, as the error");
    }
}

/// A repository whose every page names a new next page.
struct Endless(Mutex<u32>);

impl Pager for Endless {
    fn open(&self, request: &PageRequest) -> std::io::Result<Box<dyn BufRead + Send>> {
        let mut n = self.0.lock().unwrap();
        *n += 1;
        let _ = request;
        let body = format!(
            "<OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\"><ListRecords><record><header>\
             <identifier>oai:x:{n}</identifier><datestamp>2024-01-01</datestamp></header><metadata>\
             <dc xmlns=\"http://purl.org/dc/elements/1.1/\"><identifier>http://repo.example/{n}</identifier></dc>\
             </metadata></record><resumptionToken>t{n}</resumptionToken></ListRecords></OAI-PMH>"
        );
        Ok(Box::new(std::io::Cursor::new(body.into_bytes())))
    }
}

#[test]
fn an_endless_chain_of_tokens_stops_at_the_page_limit() {
    let pager = Arc::new(Endless(Mutex::new(0)));
    let limits = Limits { max_pages: 7, ..Limits::default() };
    let first = page("badverb.xml");
    let mut reader = SitemapReader::paged(&first[..], ReadOptions { limits }, Some(pager.clone())).unwrap();
    let mut urls = 0;
    let error = loop {
        match reader.next_entry() {
            Ok(Some(_)) => urls += 1,
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    assert_eq!((urls, *pager.0.lock().unwrap()), (7, 7), "7 pages asked for and read, no more");
    let Some(e @ Error::Oai(stop)) = &error else { panic!("{error:?}") };
    assert_eq!((stop.page, &stop.fault), (8, &OaiFault::PageLimit { limit: 7 }));
    assert!(e.to_string().contains("past 7 pages, the page limit"), "{e}");
    assert_eq!(Limits::default().max_pages, 1_000);
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
    let (n, _, fault, _) = h.stop();
    assert!(n == 2 && matches!(fault, OaiFault::ByteLimit { .. }), "{fault:?}");
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

/// Regression (audit: `validate` called a repository whose records have no http(s)
/// dc:identifier "valid: 1 file, 0 entries", exit 0, while `read` and `discover` fail on it):
/// a file whose every entry was skipped, none for an error, gets `no-usable-url` (an error);
/// one URL among them is enough, and a text file of invalid lines stays as it was.
#[test]
fn a_repository_with_no_usable_url_is_not_valid() {
    let record = |id: &str| {
        format!(
            "<record><header><identifier>oai:x:{id}</identifier><datestamp>2020-01-01</datestamp></header><metadata>\
             <oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
             xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:identifier>{id}</dc:identifier></oai_dc:dc></metadata></record>"
        )
    };
    let answer = |records: &str| {
        format!(
            "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\">\
             <responseDate>2026-11-20T10:16:00Z</responseDate><request>{BASE}/oai2</request>\
             <ListRecords>{records}</ListRecords></OAI-PMH>"
        )
    };
    let rules = |body: &str| {
        let report = Validator::new(Config::default()).validate("oai", body.as_bytes());
        let mut rules: Vec<Rule> = report.findings.iter().map(|f| f.rule).collect();
        rules.sort();
        rules.dedup();
        (rules, report.count(mapwright_core::Severity::Error))
    };
    let none = answer(&[record("urn:x:1"), record("doi:10.1/2")].concat());
    let (mut found, errors) = rules(&none);
    found.sort_by_key(|r| r.as_str());
    assert_eq!(found, vec![Rule::NoUsableUrl, Rule::OaiNoUrl]);
    assert_eq!(errors, 1);
    let one = answer(&[record("urn:x:1"), record(&format!("{BASE}/item/2"))].concat());
    assert_eq!(rules(&one), (vec![Rule::OaiNoUrl], 0));
    let (text, _) = rules("not a url\nnor this\n");
    assert!(!text.contains(&Rule::NoUsableUrl) && text.contains(&Rule::TextInvalidLine), "{text:?}");
}
