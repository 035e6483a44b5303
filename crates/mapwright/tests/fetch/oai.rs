//! An OAI-PMH repository's base URL given to `read`, `validate` and `discover --sitemap` as a
//! sitemap URL: its records read across their pages (the answers of
//! `mapwright-core/tests/data/oai`, served on 127.0.0.1).

use super::{findings, mapwright};
use axum::Router;
use axum::extract::RawQuery;
use axum::routing::get;

fn page(name: &str, base: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mapwright-core/tests/data/oai").join(name);
    std::fs::read_to_string(path).unwrap().replace("{{BASE}}", base)
}

/// How the test repository misbehaves.
#[derive(Clone, Copy)]
enum Hostile {
    /// Answers as a repository should.
    None,
    /// The second page of records answers 500.
    FailSecondPage,
    /// The second page's token is refused (badResumptionToken).
    BadToken,
    /// The second page is the first one again: its token repeats.
    RepeatToken,
    /// Every page names a new token, forever.
    Endless,
    /// The list of records is answered with this error code.
    Error(&'static str),
}

/// The answer of the repository to a query: status and body.
fn answer(hostile: Hostile, base: &str, query: Option<&str>) -> (u16, String) {
    const SECOND: &str = "verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100";
    let name = match (query, hostile) {
        (None, _) => "badverb.xml",
        (Some("verb=ListRecords&metadataPrefix=oai_dc"), Hostile::Error(code)) => {
            let body = page("norecordsmatch.xml", base).replace("noRecordsMatch", code);
            return (200, body);
        }
        (Some("verb=ListRecords&metadataPrefix=oai_dc"), _) => "listrecords-1.xml",
        (Some(SECOND), Hostile::FailSecondPage) => return (500, "Internal Server Error".into()),
        (Some(SECOND), Hostile::BadToken) => "badresumptiontoken.xml",
        (Some(SECOND), Hostile::RepeatToken) => "listrecords-1.xml",
        (Some(q), Hostile::Endless) if q.starts_with("verb=ListRecords&resumptionToken=") => {
            let n: u64 = q.rsplit(['-', 'F']).next().and_then(|t| t.parse().ok()).unwrap_or(100) + 1;
            let body = page("listrecords-2.xml", base)
                .replace("oai_dc////200", &format!("endless-{n}"))
                .replace("/1234/10", &format!("/1234/{n}-"));
            return (200, body);
        }
        (Some(SECOND), _) => "listrecords-2.xml",
        (Some("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200"), _) => "listrecords-3.xml",
        (Some(_), _) => "badresumptiontoken.xml",
    };
    (200, page(name, base))
}

/// The repository at `/oai2`, on its own runtime thread; its base URL.
fn repository() -> String {
    hostile_repository(Hostile::None)
}

/// A repository that misbehaves as told.
fn hostile_repository(hostile: Hostile) -> String {
    super::serve_app(move |base| {
        let b = base.to_owned();
        let answer = move |RawQuery(q): RawQuery| {
            let (status, body) = answer(hostile, &b, q.as_deref());
            let status = axum::http::StatusCode::from_u16(status).unwrap();
            async move { (status, [("content-type", "text/xml;charset=UTF-8")], body) }
        };
        Router::new().route("/oai2", get(answer))
    })
}

/// `read` of a hostile repository with fast paging: exit status, rows, standard error.
fn read_hostile(hostile: Hostile) -> (i32, usize, String) {
    let base = hostile_repository(hostile);
    let url = format!("{base}/oai2");
    let (code, out, err) = mapwright(&["read", "--format", "text", "--oai-pause", "0", "--oai-max-pages", "6", &url]);
    (code, out.lines().count(), err)
}

#[test]
fn a_list_cut_short_is_a_failed_read_that_names_the_page() {
    let cases: [(Hostile, usize, &[&str]); 4] = [
        (Hostile::FailSecondPage, 1, &["OAI-PMH page 2 (", "HTTP status 500", "only the records of page 1"]),
        (Hostile::BadToken, 1, &["OAI-PMH page 2 (", "badResumptionToken"]),
        // The first page again, then its token a second time.
        (Hostile::RepeatToken, 2, &["OAI-PMH page 3 (", "was followed before"]),
        // One record on page 1, three on each page after it.
        (Hostile::Endless, 1 + 5 * 3, &["OAI-PMH page 7 (", "past 6 pages, the page limit"]),
    ];
    for (hostile, rows, says) in cases {
        let started = std::time::Instant::now();
        let (code, got, err) = read_hostile(hostile);
        assert_eq!(code, 1, "a partial list is a failed read: {err}");
        assert_eq!(got, rows, "the records before the fault are given: {err}");
        for s in says {
            assert!(err.contains(s), "{s:?} in {err}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
}

// Alike on purpose: crates/mapwright-core/tests/oai.rs lists the same codes: each test spells
// OAI-PMH 2.0's list itself, so a code the implementation drops fails the reader's test and the
// CLI's.
#[test]
fn every_error_code_of_the_repository_is_named() {
    for code in [
        "badArgument",
        "badResumptionToken",
        "badVerb",
        "cannotDisseminateFormat",
        "idDoesNotExist",
        "noRecordsMatch",
        "noMetadataFormats",
        "noSetHierarchy",
    ] {
        let (status, rows, err) = read_hostile(Hostile::Error(code));
        assert_eq!((status, rows), (1, 0), "{code}: {err}");
        assert!(err.contains(&format!("the OAI-PMH error {code} (")) && err.contains("OAI-PMH page 1 ("), "{err}");
    }
}

#[test]
fn discover_and_validate_fail_a_list_cut_short() {
    let base = hostile_repository(Hostile::FailSecondPage);
    let url = format!("{base}/oai2");
    let (code, out, err) = mapwright(&["discover", "--format", "text", "--oai-pause", "0", "--sitemap", &url]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(err.contains("1 failed") && err.contains("OAI-PMH page 2 (") && err.contains("HTTP status 500"), "{err}");
    let (code, out, err) = mapwright(&["validate", "--format", "json", "--oai-pause", "0", &url]);
    assert_eq!(code, 1, "{out}{err}");
    let rules: Vec<String> = findings(&out, &base).into_iter().map(|(rule, _, _)| rule).collect();
    assert!(rules.contains(&"oai-incomplete".to_string()), "{out}");
}

#[test]
fn read_takes_a_repository_base_url() {
    let base = repository();
    let (code, out, err) = mapwright(&["read", "--format", "text", &format!("{base}/oai2")]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<String> =
        ["/handle/1234/101", "mirror", "/handle/1234/105", "/handle/1234/106", "/handle/1234/107"]
            .iter()
            .map(|p| {
                if *p == "mirror" {
                    "http://mirror.example.org/papers/104.pdf".to_string()
                } else {
                    format!("{base}{p}")
                }
            })
            .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    assert!(err.contains("oai-no-url") && err.contains("lastmod-format"), "{err}");
    // --strict judges scope on the base URL: the record on another host is dropped.
    let (code, out, err) = mapwright(&["read", "--strict", "--format", "text", &format!("{base}/oai2")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(err.contains("loc-out-of-scope") && err.contains("mirror.example.org"), "{err}");
}

#[test]
fn validate_judges_every_page() {
    let base = repository();
    let (code, out, err) = mapwright(&["validate", "--format", "json", &format!("{base}/oai2")]);
    assert_eq!(code, 1, "errors: a broken datestamp, a URL out of scope: {out}{err}");
    let mut rules: Vec<String> = findings(&out, &base).into_iter().map(|(rule, _, _)| rule).collect();
    rules.sort();
    assert_eq!(
        rules,
        vec!["lastmod-format", "loc-out-of-scope", "loc-whitespace", "oai-deleted", "oai-no-url"],
        "{out}"
    );
}

#[test]
fn discover_takes_a_repository_as_a_sitemap() {
    let base = repository();
    let (code, out, err) = mapwright(&["discover", "--format", "text", "--sitemap", &format!("{base}/oai2")]);
    assert_eq!(code, 0, "{err}");
    let mut got: Vec<&str> = out.lines().collect();
    got.sort();
    let expected: Vec<String> = [101, 105, 106, 107].iter().map(|n| format!("{base}/handle/1234/{n}")).collect();
    assert_eq!(got, expected, "{err}");
}
