//! One positive and one negative case per rule, through one table-driven helper.

use super::*;
use std::collections::BTreeSet;
use std::io::Write;

/// 2026-01-01T00:00:00Z: "now" for every test, so `lastmod-future` does not depend on the date.
const NOW: i64 = 1_767_225_600;
const NS: &str = crate::NS_SITEMAP;

fn config() -> Config {
    Config { now: Some(NOW), ..Config::default() }
}

fn urlset(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"{NS}\">\n{body}\n</urlset>\n")
}

fn url(loc: &str) -> String {
    format!("<url><loc>{loc}</loc></url>")
}

fn index(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"{NS}\">\n{body}\n</sitemapindex>\n")
}

/// Validates `input` with `config` and asserts the set of rules that fired is exactly `expected`.
fn check_with(config: Config, input: impl AsRef<[u8]>, expected: &[&str]) -> FileReport {
    let report = Validator::new(config).validate("t.xml", input.as_ref());
    let got: BTreeSet<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    let want: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(got, want, "findings: {:#?}", report.findings);
    assert!(report.io_error.is_none());
    report
}

fn check(input: impl AsRef<[u8]>, expected: &[&str]) -> FileReport {
    check_with(config(), input, expected)
}

fn scoped(url: &str) -> Config {
    Config { sitemap_url: Some(Loc::parse(url).unwrap()), ..config() }
}

#[test]
fn valid_files_have_no_findings() {
    check(urlset(&url("https://example.com/")), &[]);
    check(
        urlset(
            "<url><loc>https://example.com/a</loc><lastmod>2005-01-01</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>",
        ),
        &[],
    );
    check(index("<sitemap><loc>https://example.com/s1.xml</loc></sitemap>"), &[]);
    check("https://example.com/a\nhttps://example.com/b\n", &[]);
}

#[test]
fn xml_malformed() {
    // Repaired (an unescaped '&'), and fatal (a mismatched end tag).
    check(urlset(&url("https://example.com/?a=1&b=2")), &["xml-malformed"]);
    let r = check(urlset("<url><loc>https://example.com/</loc></uri>"), &["xml-malformed"]);
    assert!(r.findings[0].position.is_some(), "a fatal fault has a position");
    check(urlset(&url("https://example.com/?a=1&amp;b=2")), &[]);
}

#[test]
fn encoding() {
    let mut bad = urlset(&url("https://example.com/x")).into_bytes();
    let at = bad.windows(2).position(|w| w == b"/x").unwrap() + 1;
    bad[at] = 0xff;
    let r = Validator::new(config()).validate("t.xml", &bad[..]);
    assert!(r.findings.iter().any(|f| f.rule == Rule::Encoding), "{:#?}", r.findings);
    check(urlset(&url("https://example.com/%C3%BC")), &[]);
}

#[test]
fn unknown_root() {
    check("<html><body>Not found</body></html>", &["unknown-root"]);
    check(format!("<feedset xmlns=\"{NS}\"/>"), &["unknown-root"]);
    // A lone <url> or <sitemap> root is read as one entry, with the finding.
    let r = check(format!("<url xmlns=\"{NS}\"><loc>https://example.com/</loc></url>"), &["unknown-root"]);
    assert_eq!(r.entries, 1);
    let r = check(format!("<sitemap xmlns=\"{NS}\"><loc>https://example.com/s.xml</loc></sitemap>"), &["unknown-root"]);
    assert_eq!((r.entries, r.format), (1, Some(Format::SitemapIndex)));
    check(urlset(&url("https://example.com/")), &[]);
}

#[test]
fn namespace() {
    check("<urlset><url><loc>https://example.com/</loc></url></urlset>", &["namespace"]);
    // In an unknown namespace, its elements are read as sitemap elements (as lenient
    // consumers read them), with one finding.
    let r = check(
        "<urlset xmlns=\"http://example.com/ns\"><url><loc>https://example.com/</loc></url><url><loc>https://example.com/b</loc></url></urlset>",
        &["namespace"],
    );
    assert_eq!((r.entries, r.findings.len()), (2, 1));
}

#[test]
fn legacy_namespace() {
    let old = format!("<urlset xmlns=\"{}\">{}</urlset>", crate::NS_GOOGLE_084, url("https://example.com/"));
    check(old, &["legacy-namespace"]);
}

#[test]
fn loc_missing() {
    let ok = url("https://example.com/");
    check(urlset(&format!("{ok}<url><lastmod>2005-01-01</lastmod></url>")), &["loc-missing"]);
    check(urlset(&format!("{ok}<url><loc>  </loc></url>")), &["loc-missing"]);
    check(urlset(&ok), &[]);
}

#[test]
fn loc_duplicate_tag() {
    check(
        urlset("<url><loc>https://example.com/a</loc><loc>https://example.com/b</loc></url>"),
        &["loc-duplicate-tag"],
    );
    check(
        urlset("<url><loc>https://example.com/a</loc><priority>0.1</priority><priority>0.2</priority></url>"),
        &["loc-duplicate-tag"],
    );
}

#[test]
fn loc_not_absolute() {
    let ok = url("https://example.com/");
    check(urlset(&format!("{ok}{}", url("/page"))), &["loc-not-absolute"]);
    check(urlset(&format!("{ok}{}", url("example.com/page"))), &["loc-not-absolute"]);
}

#[test]
fn loc_scheme() {
    let ok = url("https://example.com/");
    check(urlset(&format!("{ok}{}", url("ftp://example.com/file"))), &["loc-scheme"]);
    check(urlset(&format!("{ok}{}", url("http://example.com/file"))), &[]);
}

#[test]
fn loc_too_long() {
    let long = format!("https://example.com/{}", "a".repeat(2100));
    check(urlset(&url(&long)), &["loc-too-long"]);
    let fits = format!("https://example.com/{}", "a".repeat(2000));
    check(urlset(&url(&fits)), &[]);
}

#[test]
fn loc_invalid() {
    let ok = url("https://example.com/");
    check(urlset(&format!("{ok}{}", url("https://exa[mple.com/"))), &["loc-invalid"]);
}

#[test]
fn loc_not_escaped() {
    check(urlset(&url("https://example.com/über")), &["loc-not-escaped"]);
    check(urlset(&url("https://example.com/%C3%BCber")), &[]);
}

#[test]
fn loc_whitespace() {
    check(urlset("<url><loc>\n  https://example.com/\n</loc></url>"), &["loc-whitespace"]);
    check("https://example.com/a\n  https://example.com/b\n", &["loc-whitespace"]);
}

#[test]
fn loc_out_of_scope() {
    let body = urlset(
        &[
            url("http://example.com/catalog/a"),
            url("http://example.com/images/b"),
            url("https://example.com/catalog/c"),
            url("http://www.example.com/catalog/d"),
        ]
        .concat(),
    );
    let r = check_with(scoped("http://example.com/catalog/sitemap.xml"), &body, &["loc-out-of-scope"]);
    let out: Vec<_> = r.findings.iter().filter_map(|f| f.loc.as_deref()).collect();
    assert_eq!(
        out,
        ["http://example.com/images/b", "https://example.com/catalog/c", "http://www.example.com/catalog/d"]
    );
    assert_eq!(r.findings[0].position.unwrap().line, 3, "points at the entry, not at the file");
    // Without the sitemap's URL, scope is not checked.
    check(&body, &[]);
    // A sitemap at the root covers the whole host.
    check_with(scoped("http://example.com/sitemap.xml"), urlset(&url("http://example.com/a/b/c")), &[]);
}

#[test]
fn lastmod_format() {
    check(urlset("<url><loc>https://example.com/</loc><lastmod>yesterday</lastmod></url>"), &["lastmod-format"]);
    check(
        urlset("<url><loc>https://example.com/</loc><lastmod>2005-01-01 10:00:00</lastmod></url>"),
        &["lastmod-format"],
    );
    check(urlset("<url><loc>https://example.com/</loc><lastmod>2005-01-01T10:00:00+01:00</lastmod></url>"), &[]);
}

#[test]
fn lastmod_precision() {
    check(urlset("<url><loc>https://example.com/</loc><lastmod>2005-01</lastmod></url>"), &["lastmod-precision"]);
    check(
        urlset("<url><loc>https://example.com/</loc><lastmod>2005-01-01T10:00Z</lastmod></url>"),
        &["lastmod-precision"],
    );
}

#[test]
fn lastmod_future() {
    let lm = |d: &str| urlset(&format!("<url><loc>https://example.com/</loc><lastmod>{d}</lastmod></url>"));
    check(lm("2026-06-01"), &["lastmod-future"]);
    check(lm("2026-01-01T02:00:00Z"), &["lastmod-future"]);
    // Within the allowances: ten minutes of clock skew, and today's date somewhere east.
    check(lm("2026-01-01T00:10:00Z"), &[]);
    check(lm("2026-01-01"), &[]);
    check(lm("2025-12-31T23:00:00-05:00"), &["lastmod-future"]);
    check(
        index("<sitemap><loc>https://example.com/s.xml</loc><lastmod>2030-01-01</lastmod></sitemap>"),
        &["lastmod-future"],
    );
}

#[test]
fn changefreq_value() {
    check(urlset("<url><loc>https://example.com/</loc><changefreq>Daily</changefreq></url>"), &["changefreq-value"]);
    check(urlset("<url><loc>https://example.com/</loc><changefreq>daily</changefreq></url>"), &[]);
}

#[test]
fn priority_range() {
    let p = |v: &str| urlset(&format!("<url><loc>https://example.com/</loc><priority>{v}</priority></url>"));
    let r = check(p("0,8"), &["priority-range"]);
    assert!(r.findings[0].message.contains("0.8"), "says what to write: {}", r.findings[0].message);
    check(p("1.5"), &["priority-range"]);
    check(p("high"), &["priority-range"]);
    check(p("0.8"), &[]);
    check(p("1"), &[]);
}

#[test]
fn priority_uniform() {
    let many = |n: usize, last: &str| {
        let mut body = String::new();
        for i in 0..n {
            let p = if i + 1 == n { last } else { "1.0" };
            body += &format!("<url><loc>https://example.com/{i}</loc><priority>{p}</priority></url>\n");
        }
        urlset(&body)
    };
    check(many(6, "1.0"), &["priority-uniform"]);
    check(many(6, "0.5"), &[]);
    check(many(5, "1.0"), &[] /* a handful is normal */);
}

#[test]
fn unknown_element() {
    check(
        urlset("<url><loc>https://example.com/</loc><lastmodified>2005-01-01</lastmodified></url>"),
        &["unknown-element"],
    );
    // Extensions in their own namespace are not unknown.
    check(
        format!(
            "<urlset xmlns=\"{NS}\" xmlns:image=\"{}\"><url><loc>https://example.com/</loc><image:image><image:loc>https://example.com/i.png</image:loc></image:image></url></urlset>",
            crate::NS_IMAGE
        ),
        &[],
    );
}

#[test]
fn too_many_urls() {
    let body: String = (0..4).map(|i| url(&format!("https://example.com/{i}"))).collect();
    let r = check_with(Config { max_entries: 3, ..config() }, urlset(&body), &["too-many-urls"]);
    assert_eq!(r.findings.len(), 1, "reported once");
    assert_eq!(r.entries, 4, "reading goes on");
    check_with(Config { max_entries: 4, ..config() }, urlset(&body), &[]);
}

#[test]
fn too_many_urls_at_the_protocol_limit() {
    let mut text = String::new();
    for i in 0..=crate::MAX_URLS {
        text += &format!("https://example.com/{i}\n");
    }
    let r = check(&text, &["too-many-urls"]);
    assert_eq!(r.findings[0].position.unwrap().line, 50_001);
    text.truncate(text.trim_end().rfind('\n').unwrap() + 1);
    check(&text, &[]);
}

#[test]
fn too_large() {
    let body: String = (0..100).map(|i| url(&format!("https://example.com/{i}"))).collect();
    let mut c = config();
    c.read.limits.max_bytes = 1000;
    check_with(c, urlset(&body), &["too-large"]);
    check(urlset(&body), &[]);
}

#[test]
fn duplicate_url() {
    let r = check(
        urlset(
            &[url("https://example.com/a"), url("https://example.com/b"), url("https://EXAMPLE.com:443/a")].concat(),
        ),
        &["duplicate-url"],
    );
    assert!(r.findings[0].message.contains("line 3"), "{}", r.findings[0].message);
    check(urlset(&[url("https://example.com/a"), url("https://example.com/a/")].concat()), &[]);
}

#[test]
fn duplicate_set_stops_growing_at_the_entry_limit() {
    let c = || Config { max_entries: 3, ..config() };
    let urls =
        |locs: &[&str]| urlset(&locs.iter().map(|l| url(&format!("https://example.com/{l}"))).collect::<String>());
    // Remembered entries are still found after the limit...
    check_with(c(), urls(&["a", "b", "c", "a"]), &["too-many-urls", "duplicate-url"]);
    // ...but entries past it are not remembered (consumers ignore them anyway).
    check_with(c(), urls(&["a", "b", "c", "d", "d"]), &["too-many-urls"]);
}

#[test]
fn empty_sitemap() {
    check(format!("<urlset xmlns=\"{NS}\"></urlset>"), &["empty-sitemap"]);
    check(format!("<sitemapindex xmlns=\"{NS}\"/>"), &["empty-sitemap"]);
    check(format!("<urlset xmlns=\"{NS}\"><urlset></urlset></urlset>"), &["empty-sitemap", "unknown-element"]);
    // Entries that were all skipped: their own findings say why, the file is not "empty".
    check(urlset(&url("ftp://example.com/a")), &["loc-scheme"]);
}

#[test]
fn empty_file() {
    for input in [&b""[..], b"\n \t\n", b"\xef\xbb\xbf"] {
        let r = check(input, &["empty-file"]);
        assert_eq!((r.entries, r.format), (0, None));
    }
    // A gzip stream of nothing is an empty file too.
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default()).finish().unwrap();
    check(&gz, &["empty-file"]);
}

/// The scope follows who vouches; the waiver is said once per sitemap, not once per URL, also
/// when the caller passes the scope itself (the service's `scope_override`).
#[test]
fn scope_vouched() {
    let body = urlset(&(1..=3).map(|i| url(&format!("https://example.com/page/{i}"))).collect::<String>());
    let sm = "https://example.com/sitemaps/a.xml";
    check_with(scoped(sm), &body, &["loc-out-of-scope"]);
    let robots = Voucher::Robots("https://example.com".into());
    let r = check_with(Config { voucher: robots.clone(), ..scoped(sm) }, &body, &["scope-vouched"]);
    assert_eq!(r.findings.len(), 1);
    assert!(r.findings[0].message.starts_with("https://example.com/robots.txt names this sitemap"), "{:?}", r.findings);
    let over = Scope::vouched(&Loc::parse(sm).unwrap(), &Voucher::Owner("https://example.com".into()));
    let r = check_with(Config { scope_override: Some(over), ..scoped(sm) }, &body, &["scope-vouched"]);
    assert_eq!(r.findings.len(), 1);
    // Cross-submission: hosted elsewhere, vouched for by example.com: example.com's URLs only.
    let elsewhere = "https://maps.example.net/x/s.xml";
    let mixed = urlset(&(url("https://example.com/a") + &url("https://maps.example.net/x/b")));
    let r = check_with(Config { voucher: robots, ..scoped(elsewhere) }, &mixed, &["scope-vouched", "loc-out-of-scope"]);
    assert_eq!(r.findings[1].loc.as_deref(), Some("https://maps.example.net/x/b"));
    // A root sitemap vouched for by its own robots.txt waives nothing: no finding.
    let root = Config { voucher: Voucher::Robots("https://example.com".into()), ..scoped("https://example.com/s.xml") };
    check_with(root, &body, &[]);
}

#[test]
fn index_cross_site() {
    let body = index(
        "<sitemap><loc>https://example.com/s1.xml</loc></sitemap><sitemap><loc>https://other.example/s2.xml</loc></sitemap>",
    );
    let r = check_with(scoped("https://example.com/sitemap_index.xml"), &body, &["index-cross-site"]);
    assert_eq!(r.findings[0].loc.as_deref(), Some("https://other.example/s2.xml"));
    check(&body, &[]);
}

#[test]
fn text_invalid_line() {
    check("https://example.com/a\nthis is not a url\n", &["text-invalid-line"]);
    check("https://example.com/a\n/relative\n", &["text-invalid-line"]);
}

#[test]
fn gzip_corrupt() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(urlset(&url("https://example.com/")).as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    check(&gz, &[]);
    check(&gz[..gz.len() - 12], &["gzip-corrupt"]);
}

#[test]
fn bom() {
    check(format!("\u{feff}{}", urlset(&url("https://example.com/"))), &["bom"]);
}

#[test]
fn live_rules_are_never_raised_offline_but_reports_take_them() {
    let r = check(urlset(&url("https://example.com/")), &[]);
    let mut report = Report::new();
    report.add(&r);
    let f = Finding::new(Rule::UrlStatus, None, "404").with_loc("https://example.com/");
    report.push("t.xml", f);
    report.push("t.xml", Finding::new(Rule::RobotsDisallowed, None, "disallowed"));
    report.push("t.xml", Finding::new(Rule::UrlNoindex, None, "noindex"));
    assert_eq!(report.summary.warnings, 3);
    assert_eq!(report.findings[0].line, 1, "a whole-file finding is reported at 1:1");
}

#[test]
fn summary_counts_what_the_finding_cap_drops() {
    let mut body = url("https://example.com/a").repeat(25);
    body += &(0..30).map(|i| url(&format!("/rel{i}"))).collect::<String>();
    let r =
        Validator::new(Config { max_findings_per_rule: 10, ..config() }).validate("t.xml", urlset(&body).as_bytes());
    assert_eq!(r.findings.len(), 20, "10 of each rule");
    assert_eq!(r.count(Severity::Error), 30);
    assert_eq!(r.omitted(), 20 + 14, "30 loc-not-absolute and 24 duplicate-url, 10 of each kept");
    assert_eq!(r.omitted_by_rule(), [(Rule::LocNotAbsolute, 20), (Rule::DuplicateUrl, 14)]);
    let mut report = Report::new();
    report.add(&r);
    assert_eq!(report.summary.rules, BTreeMap::from([(Rule::LocNotAbsolute, 30), (Rule::DuplicateUrl, 24)]));
    assert_eq!(report.not_shown.len(), 2);
    // Errors first in the report, whatever their place in the file.
    assert_eq!(report.findings[0].severity, Severity::Error);
}

#[test]
fn every_rule_is_explained() {
    for &rule in Rule::ALL {
        let e = explain(rule);
        assert!(e.why.len() > 20 && e.fix.len() > 10, "{rule}");
    }
}

#[test]
fn strip_position_keeps_messages_without_one() {
    assert_eq!(strip_position("3:14: malformed XML: x"), "malformed XML: x");
    assert_eq!(strip_position("corrupt gzip: a:b"), "corrupt gzip: a:b");
}

/// A resolver over an in-memory map, standing in for files or HTTP.
struct MapResolver(Vec<(&'static str, String)>);

impl Resolver for MapResolver {
    fn open(&mut self, url: &Loc) -> std::io::Result<Opened<'_>> {
        match self.0.iter().find(|(u, _)| *u == url.as_str()) {
            Some((u, body)) => Ok(Opened::Source { name: u.to_string(), input: body.as_bytes().into(), pager: None }),
            None if url.as_str().contains("missing") => Err(std::io::ErrorKind::NotFound.into()),
            None => Ok(Opened::Unreachable("remote".into())),
        }
    }
}

#[test]
fn index_nested_and_follow() {
    let top = index(
        "<sitemap><loc>https://example.com/a.xml</loc></sitemap>\n<sitemap><loc>https://example.com/nested.xml</loc></sitemap>\n<sitemap><loc>https://example.com/far.xml</loc></sitemap>",
    );
    let mut resolver = MapResolver(vec![
        ("https://example.com/a.xml", urlset(&[url("https://example.com/p1"), url("https://example.com/p1")].concat())),
        ("https://example.com/nested.xml", index("<sitemap><loc>https://example.com/a.xml</loc></sitemap>")),
    ]);
    let v = Validator::new(scoped("https://example.com/index.xml"));
    let mut report = Report::new();
    let failed = validate_tree(&v, "index.xml", top.as_bytes(), Some(&mut resolver), &mut report);
    assert!(failed.is_empty());
    let rules: Vec<(&str, &str)> = report.findings.iter().map(|f| (f.file.as_str(), f.rule.as_str())).collect();
    assert_eq!(rules, [("https://example.com/a.xml", "duplicate-url"), ("index.xml", "index-nested")]);
    let nested = &report.findings[1];
    assert_eq!((nested.line, nested.loc.as_deref()), (4, Some("https://example.com/nested.xml")));
    assert_eq!(report.summary.files, 3);
    assert_eq!(report.notes.len(), 1, "far.xml could not be reached: {:?}", report.notes);

    // Not nested: an index of plain sitemaps.
    let mut report = Report::new();
    let top = index("<sitemap><loc>https://example.com/a.xml</loc></sitemap>");
    validate_tree(&v, "index.xml", top.as_bytes(), Some(&mut resolver), &mut report);
    assert!(!report.findings.iter().any(|f| f.rule == Rule::IndexNested));

    // A listed child that cannot be read is a failure of the run, not a finding.
    let top = index("<sitemap><loc>https://example.com/missing.xml</loc></sitemap>");
    let failed = validate_tree(&v, "index.xml", top.as_bytes(), Some(&mut resolver), &mut Report::new());
    assert_eq!(failed.len(), 1);
}

#[test]
fn loc_hash_spreads_near_identical_urls() {
    let mut seen = std::collections::HashSet::new();
    for i in 0..1_000_000 {
        assert!(seen.insert(loc_hash(&format!("https://example.com/p/{i}"))), "collision at {i}");
    }
    // Lengths are mixed in: zero padding does not make a shorter text collide with a longer one.
    assert_ne!(loc_hash("https://example.com/a"), loc_hash("https://example.com/a\0"));
    // Every output bit depends on the input: one changed byte flips about half of them.
    let flips = (loc_hash("https://example.com/abc") ^ loc_hash("https://example.com/abd")).count_ones();
    assert!((16..=48).contains(&flips), "{flips}");
}

/// A file the validator owns is read ahead (plain) or inflated (gzip) on a thread of its own:
/// the report is the one a borrowed input gives, findings far past the first buffers included,
/// with the same positions; under a byte limit too.
#[test]
fn an_owned_input_gives_the_report_a_borrowed_one_does() {
    let body: String = (0..8_000)
        .map(|i| match i % 1_000 {
            // A finding now and then, all through the file.
            999 => url("https://example.com/a b"),
            500 => format!("<url><loc>https://example.com/p/{i}</loc><priority>2.0</priority></url>"),
            _ => format!("<url><loc>https://example.com/p/{i}</loc><lastmod>2024-01-02</lastmod></url>\n"),
        })
        .collect();
    let plain = urlset(&body);
    assert!(plain.len() > 400_000, "past what is read inline: {} bytes", plain.len());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(plain.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let shape = |r: &FileReport| {
        let findings: Vec<_> = r.findings.iter().map(|f| (f.rule, f.position, f.message.clone())).collect();
        (findings, r.entries, r.counts, r.format, r.io_error.as_ref().map(|e| e.to_string()))
    };
    for (name, doc) in [("plain", plain.as_bytes().to_vec()), ("gzip", gz)] {
        for max_bytes in [None, Some(200_000)] {
            let mut config = config();
            if let Some(m) = max_bytes {
                config.read.limits.max_bytes = m;
            }
            let v = Validator::new(config);
            let borrowed = v.validate("t.xml", &doc[..]);
            let owned = v.validate("t.xml", Input::owned(Box::new(std::io::Cursor::new(doc.clone()))));
            assert!(borrowed.entries > 0, "{name}: nothing read");
            let late = |f: &Finding| f.position.is_some_and(|p| p.line > 7_000);
            assert_eq!(borrowed.findings.iter().any(late), max_bytes.is_none(), "{name}: a finding late in the file");
            assert_eq!(shape(&owned), shape(&borrowed), "{name}, at most {max_bytes:?} bytes");
        }
    }
}
