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

/// The repository at `/oai2`, on its own runtime thread; its base URL.
fn repository() -> String {
    super::serve_app(|base| {
        let b = base.to_owned();
        let answer = move |RawQuery(q): RawQuery| {
            let name = match q.as_deref() {
                None => "badverb.xml",
                Some("verb=ListRecords&metadataPrefix=oai_dc") => "listrecords-1.xml",
                Some("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100") => "listrecords-2.xml",
                Some("verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200") => "listrecords-3.xml",
                Some(_) => "badresumptiontoken.xml",
            };
            let body = page(name, &b);
            async move { ([("content-type", "text/xml;charset=UTF-8")], body) }
        };
        Router::new().route("/oai2", get(answer))
    })
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
