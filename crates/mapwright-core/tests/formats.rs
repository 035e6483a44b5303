//! Every format the reader detects, and every lenient repair it makes (each with its finding).

use crate::support::{gzip, read_bytes, urlset};
use mapwright_core::{ChangeFreq, Entry, Error, Finding, Format, ReadOptions, Rule, SitemapReader};

fn format_of(bytes: &[u8]) -> Format {
    SitemapReader::new(bytes, ReadOptions::default()).expect("detects").format()
}

fn url(e: &Entry) -> &mapwright_core::UrlEntry {
    match e {
        Entry::Url(u) => u,
        Entry::Sitemap(s) => panic!("expected a url entry, got sitemap {}", s.loc),
    }
}

#[test]
fn urlset_with_every_field() {
    let r = read_bytes(
        urlset(
            "<url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2005-01-01T10:20:30+02:00</lastmod>\
             <changefreq>weekly</changefreq><priority>0.8</priority></url>",
        )
        .as_bytes(),
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(r.error.is_none());
    let u = url(&r.entries[0]);
    assert_eq!(u.loc.as_str(), "https://example.com/a?x=1&y=2");
    assert_eq!(u.lastmod.as_ref().unwrap().to_string(), "2005-01-01T10:20:30+02:00");
    assert_eq!(u.lastmod.as_ref().unwrap().value().to_utc_string(), "2005-01-01T08:20:30.000Z");
    assert_eq!(u.changefreq, Some(ChangeFreq::Weekly));
    assert_eq!(u.priority, Some(0.8));
}

#[test]
fn detection_is_on_content() {
    let xml = urlset("<url><loc>https://example.com/</loc></url>");
    assert_eq!(format_of(xml.as_bytes()), Format::Urlset);
    assert_eq!(format_of(&gzip(xml.as_bytes())), Format::Urlset);
    assert_eq!(format_of(&gzip(&gzip(xml.as_bytes()))), Format::Urlset);
    assert_eq!(
        format_of(b"<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"></sitemapindex>"),
        Format::SitemapIndex
    );
    assert_eq!(format_of(b"<rss version=\"2.0\"><channel></channel></rss>"), Format::Rss);
    assert_eq!(format_of(b"<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"/>"), Format::Rss);
    assert_eq!(format_of(b"<feed xmlns=\"http://www.w3.org/2005/Atom\"></feed>"), Format::Atom);
    assert_eq!(format_of(b"<feed version=\"0.3\" xmlns=\"http://purl.org/atom/ns#\"></feed>"), Format::Atom);
    assert_eq!(format_of(b"https://example.com/a\nhttps://example.com/b\n"), Format::Text);
    assert_eq!(format_of(&gzip(b"https://example.com/a\n")), Format::Text);
}

#[test]
fn gzip_layers_are_counted() {
    let xml = urlset("<url><loc>https://example.com/</loc></url>");
    let twice = gzip(&gzip(xml.as_bytes()));
    let mut r = SitemapReader::new(&twice[..], ReadOptions::default()).unwrap();
    assert_eq!(r.gzip_layers(), 2);
    assert_eq!(r.next_entry().unwrap().unwrap().loc().as_str(), "https://example.com/");
}

#[test]
fn index_entries() {
    let r = read_bytes(
        b"<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
          <sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>\
          <sitemap><loc>https://example.com/s2.xml</loc></sitemap></sitemapindex>",
    );
    assert_eq!(r.sitemaps(), ["https://example.com/s1.xml.gz", "https://example.com/s2.xml"]);
    assert_eq!(r.entries[0].lastmod().unwrap().to_string(), "2004-10-01T18:23:17+00:00");
    assert!(r.findings.is_empty());
}

#[test]
fn namespaces_legacy_missing_prefixed() {
    let legacy = read_bytes(
        b"<urlset xmlns=\"http://www.google.com/schemas/sitemap/0.84\"><url><loc>http://a.com/</loc></url></urlset>",
    );
    assert_eq!(legacy.urls(), ["http://a.com/"]);
    assert_eq!(legacy.rules(), [Rule::LegacyNamespace]);
    let none = read_bytes(b"<urlset><url><loc>http://a.com/</loc></url></urlset>");
    assert_eq!(none.urls(), ["http://a.com/"]);
    assert_eq!(none.rules(), [Rule::Namespace]);
    let prefixed = read_bytes(
        b"<s:urlset xmlns:s=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><s:url><s:loc>http://a.com/</s:loc></s:url></s:urlset>",
    );
    assert_eq!(prefixed.urls(), ["http://a.com/"]);
    assert!(prefixed.findings.is_empty(), "{:?}", prefixed.findings);
}

#[test]
fn text_sitemap_lines() {
    let r =
        read_bytes(b"\xEF\xBB\xBFhttps://example.com/a\r\n\r\n  https://example.com/b  \nnot a url\nftp://x.com/\n");
    assert_eq!(r.urls(), ["https://example.com/a", "https://example.com/b"]);
    assert_eq!(r.rules(), [Rule::Bom, Rule::LocWhitespace, Rule::TextInvalidLine, Rule::TextInvalidLine]);
    let pos = r.findings[2].position.unwrap();
    assert_eq!((pos.line, pos.column), (4, 1));
}

#[test]
fn text_that_is_no_sitemap() {
    let r = read_bytes(b"{\"error\": \"not found\"}\n");
    assert!(matches!(r.error, Some(Error::NotSitemap { .. })), "{:?}", r.error.map(|e| e.to_string()));
    assert!(r.entries.is_empty());
}

#[test]
fn rss_items() {
    let r = read_bytes(
        b"\n<!-- c --><rss version=\"2.0\"><channel><link>not a url</link><item><link>https://example.com/1</link>\
          <pubDate>Sun, 06 Sep 2009 16:20:00 +0000</pubDate></item><item><guid isPermaLink=\"false\">https://example.com/2</guid></item>\
          <item><title>no link</title></item></channel></rss>",
    );
    assert_eq!(r.urls(), ["https://example.com/1", "https://example.com/2"]);
    assert_eq!(url(&r.entries[0]).lastmod.as_ref().unwrap().value().to_utc_string(), "2009-09-06T16:20:00.000Z");
}

/// The pubDate variants of crawler-commons' xmlRss_pubDate.xml (see conformance: crawler-commons#40).
#[test]
fn rss_pub_date_variants() {
    let path = crate::support::shared_dir().join("conformance/crawler-commons/files/rss/xmlRss_pubDate.xml");
    let r = read_bytes(&std::fs::read(path).unwrap());
    let dates: Vec<Option<String>> = r.entries.iter().map(|e| e.lastmod().map(|l| l.value().to_utc_string())).collect();
    assert_eq!(
        dates,
        [
            Some("2017-01-05T12:34:51.000Z".to_string()),
            Some("2017-01-05T12:34:52.000Z".to_string()),
            Some("2017-01-05T12:34:53.000Z".to_string()),
            Some("2017-01-05T12:34:54.000Z".to_string()),
            None,
            None,
            None
        ]
    );
}

#[test]
fn atom_links() {
    let r = read_bytes(
        b"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><link rel=\"alternate\" href=\"https://example.com/alt\"/>\
          <link href=\"https://example.com/plain\"/><updated>2003-12-13T18:30:02Z</updated></entry>\
          <entry><link rel=\"self\" href=\"https://example.com/self\"/></entry></feed>",
    );
    assert_eq!(r.urls(), ["https://example.com/plain"]);
    assert_eq!(r.entries[0].lastmod().unwrap().to_string(), "2003-12-13T18:30:02Z");
    let old = read_bytes(
        b"<feed version=\"0.3\" xmlns=\"http://purl.org/atom/ns#\"><entry><link rel=\"alternate\" type=\"text/html\" \
          href=\"https://example.com/x\"/><modified>2005-07-31T12:29:29Z</modified></entry></feed>",
    );
    assert_eq!(old.urls(), ["https://example.com/x"]);
    assert!(old.entries[0].lastmod().is_some());
}

#[test]
fn atom_relative_links_resolve_against_xml_base_and_the_document_url() {
    // xml:base on the feed, on an entry (relative to the feed's), on a link (relative to both).
    let r = read_bytes(
        b"<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:base=\"https://example.com/blog/\">\
          <entry><link href=\"post-1\"/></entry>\
          <entry xml:base=\"2024/\"><link href=\"post-2?a=1&amp;b=2\"/></entry>\
          <entry xml:base=\"/news/\"><link xml:base=\"https://other.example/x/\" href=\"../y\"/></entry>\
          <entry><link href=\"https://example.org/Absolute/\"/></entry></feed>",
    );
    assert!(r.error.is_none() && r.findings.is_empty(), "{:?} {:?}", r.error, r.findings);
    assert_eq!(
        r.urls(),
        [
            "https://example.com/blog/post-1",
            "https://example.com/blog/2024/post-2?a=1&b=2",
            "https://other.example/y",
            "https://example.org/Absolute/",
        ]
    );
    // No xml:base: the URL the feed was served at is the base, once the caller gives it.
    let feed = b"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><link rel=\"alternate\" href=\"/a/b\"/></entry>\
                 <entry xml:base=\"sub/\"><link href=\"c\"/></entry></feed>";
    let mut reader = SitemapReader::new(&feed[..], ReadOptions::default()).expect("detects");
    reader.set_document_url("https://example.com/feeds/atom.xml");
    let mut got = Vec::new();
    while let Some(e) = reader.next_entry().expect("reads") {
        got.push(e.loc().to_string());
    }
    assert_eq!(got, ["https://example.com/a/b", "https://example.com/feeds/sub/c"]);
    assert_eq!(reader.drain_findings().count(), 0);
    // Without any base, a relative link stays what it is: not absolute, skipped with a finding.
    let alone = read_bytes(b"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><link href=\"/a\"/></entry></feed>");
    assert!(alone.urls().is_empty());
    assert_eq!(alone.findings.iter().map(|f| f.rule).collect::<Vec<_>>(), [Rule::LocNotAbsolute]);
}

#[test]
fn a_relative_loc_resolves_against_the_documents_url_when_there_is_one() {
    // Site-relative <loc>s (as some generators write them): read from a URL, each is that
    // site's URL, kept with a loc-not-absolute error; an index's children too. Without the
    // document's URL they are skipped, each with the same rule.
    let doc = b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                <url><loc>/a</loc></url><url><loc>../up/b?x=1</loc></url><url><loc>//cdn.example/c</loc></url>\
                <url><loc>page-without-slash</loc></url><url><loc>https://example.com/abs</loc></url></urlset>";
    let mut reader = SitemapReader::new(&doc[..], ReadOptions::default()).expect("detects");
    reader.set_document_url("https://example.com/maps/sitemap.xml");
    let mut got = Vec::new();
    while let Some(e) = reader.next_entry().expect("reads") {
        got.push(e.loc().to_string());
    }
    assert_eq!(
        got,
        ["https://example.com/a", "https://example.com/up/b?x=1", "https://cdn.example/c", "https://example.com/abs"]
    );
    let findings: Vec<Finding> = reader.drain_findings().collect();
    assert_eq!(findings.iter().map(|f| f.rule).collect::<Vec<_>>(), [Rule::LocNotAbsolute; 4], "{findings:?}");
    assert!(findings[0].message.contains("read as https://example.com/a"), "{}", findings[0].message);
    assert!(findings[3].message.contains("skipped"), "{}", findings[3].message);

    let index = b"<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                  <sitemap><loc>/s1.xml</loc></sitemap></sitemapindex>";
    let mut reader = SitemapReader::new(&index[..], ReadOptions::default()).expect("detects");
    reader.set_document_url("http://example.com/sitemap_index.xml");
    let child = reader.next_entry().expect("reads").expect("a child");
    assert!(matches!(child, Entry::Sitemap(_)));
    assert_eq!(child.loc().as_str(), "http://example.com/s1.xml");

    let alone = read_bytes(doc);
    assert_eq!(alone.urls(), ["https://example.com/abs"]);
    assert_eq!(alone.findings.iter().filter(|f| f.rule == Rule::LocNotAbsolute).count(), 4);
}

#[test]
fn extensions() {
    let r = read_bytes(
        br#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
            xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
            xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:foo="urn:foo">
          <url><loc>https://example.com/</loc>
            <image:image><image:loc>https://example.com/i.jpg</image:loc><image:title>T</image:title><image:license>https://example.com/l</image:license></image:image>
            <video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc><video:title>V</video:title>
              <video:description><![CDATA[a <b> & c]]></video:description><video:player_loc allow_embed="yes" autoplay="ap=1">https://example.com/p</video:player_loc>
              <video:duration>600</video:duration><video:price currency="EUR" type="rent">1.99</video:price>
              <video:tag>a</video:tag><video:tag>b</video:tag><video:restriction relationship="allow">IE GB</video:restriction></video:video>
            <news:news><news:publication><news:name>P</news:name><news:language>en</news:language></news:publication>
              <news:publication_date>2008-12-23</news:publication_date><news:title>N</news:title></news:news>
            <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>
            <xhtml:link rel="amphtml" href="https://example.com/amp"/>
            <foo:bar><foo:baz>ignored</foo:baz></foo:bar>
          </url></urlset>"#,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let u = url(&r.entries[0]);
    assert_eq!(u.ext().images.len(), 1);
    assert_eq!(u.ext().images[0].title.as_deref(), Some("T"));
    assert_eq!(u.ext().images[0].license.as_deref(), Some("https://example.com/l"));
    let v = &u.ext().videos[0];
    assert_eq!(v.description.as_deref(), Some("a <b> & c"));
    assert_eq!(v.player_loc_allow_embed.as_deref(), Some("yes"));
    assert_eq!(v.player_loc_autoplay.as_deref(), Some("ap=1"));
    assert_eq!(v.duration, Some(600));
    assert_eq!(v.prices[0].value, "1.99");
    assert_eq!(v.prices[0].currency.as_deref(), Some("EUR"));
    assert_eq!(v.prices[0].kind.as_deref(), Some("rent"));
    assert_eq!(v.tags, ["a", "b"]);
    assert_eq!(v.restriction.as_deref(), Some("IE GB"));
    assert_eq!(v.restriction_relationship.as_deref(), Some("allow"));
    let n = u.ext().news.as_deref().unwrap();
    assert_eq!(
        (n.publication_name.as_deref(), n.language.as_deref(), n.title.as_deref()),
        (Some("P"), Some("en"), Some("N"))
    );
    assert_eq!(u.ext().alternates.len(), 1);
    assert_eq!(u.ext().alternates[0].hreflang, "de");
}

/// Google's geo extension and PageMap: every data object with its type, id and attributes (a
/// value as text, or as the `value` attribute), indented or not; a `geo:` prefix used without
/// its declaration is taken as the geo namespace; elements of neither namespace are skipped.
#[test]
fn geo_and_pagemap() {
    let r = read_bytes(
        br#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:geo="http://www.google.com/geo/schemas/sitemap/1.0">
          <url><loc>https://example.com/a.kml</loc>
            <geo:geo>
              <geo:format> kml </geo:format>
            </geo:geo>
          </url>
          <url><loc>https://example.com/p</loc><PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0"><DataObject type="document" id="d1"><Attribute name="title">Dragon &amp; Co</Attribute><Attribute name="rating" value="4.5"/></DataObject><DataObject type="thumbnail"><Attribute name="src" value="ignored">https://example.com/t.png</Attribute><Other>x</Other></DataObject></PageMap></url>
        </urlset>"#,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(url(&r.entries[0]).ext().geo.as_deref().and_then(|g| g.format.as_deref()), Some("kml"));
    assert!(url(&r.entries[0]).ext().pagemap.is_empty());
    let u = url(&r.entries[1]);
    assert!(u.ext().geo.is_none() && u.has_extensions());
    let objects: Vec<_> = u
        .ext()
        .pagemap
        .iter()
        .map(|o| {
            let attributes: Vec<_> = o.attributes.iter().map(|a| (a.name.as_str(), a.value.as_str())).collect();
            (o.kind.as_str(), o.id.as_deref(), attributes)
        })
        .collect();
    assert_eq!(
        objects,
        [
            ("document", Some("d1"), vec![("title", "Dragon & Co"), ("rating", "4.5")]),
            ("thumbnail", None, vec![("src", "https://example.com/t.png")]),
        ]
    );
    let undeclared = read_bytes(
        br#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/g</loc><geo:geo><geo:format>georss</geo:format></geo:geo></url></urlset>"#,
    );
    assert_eq!(url(&undeclared.entries[0]).ext().geo.as_deref().and_then(|g| g.format.as_deref()), Some("georss"));
}

/// Each repair: the entry is still read, and a finding names the rule at the right place.
#[test]
fn lenient_repairs() {
    let check = |body: &str, rules: &[Rule], urls: &[&str]| {
        let r = read_bytes(urlset(body).as_bytes());
        assert_eq!(r.rules(), rules, "{body}: {:?}", r.findings);
        assert_eq!(r.urls(), urls, "{body}");
        assert!(r.error.is_none(), "{body}: {:?}", r.error.map(|e| e.to_string()));
    };
    check("<url><loc>http://a.com/?a=1&b=2</loc></url>", &[Rule::XmlMalformed], &["http://a.com/?a=1&b=2"]);
    check(
        "<url><loc>http://a.com/x&nbsp;y</loc></url>",
        &[Rule::XmlMalformed, Rule::LocNotEscaped],
        &["http://a.com/x%C2%A0y"],
    );
    check(
        "<url><loc>http://a.com/&Ouml;</loc></url>",
        &[Rule::XmlMalformed, Rule::LocNotEscaped],
        &["http://a.com/%C3%96"],
    );
    check("<url><loc><![CDATA[http://a.com/?a=1&b=2]]></loc></url>", &[], &["http://a.com/?a=1&b=2"]);
    check("<url><loc>http://a.com/&#241;</loc></url>", &[Rule::LocNotEscaped], &["http://a.com/%C3%B1"]);
    check("<url><loc>\n  http://a.com/\n</loc></url>", &[Rule::LocWhitespace], &["http://a.com/"]);
    check(
        "<url><loc>http://a.com/</loc><lastmod>2005-01-01 10:00:00</lastmod></url>",
        &[Rule::LastmodFormat],
        &["http://a.com/"],
    );
    check("<url><loc>http://a.com/</loc><lastmod>2005</lastmod></url>", &[Rule::LastmodPrecision], &["http://a.com/"]);
    check("<url><loc>http://a.com/</loc><lastmod>soon</lastmod></url>", &[Rule::LastmodFormat], &["http://a.com/"]);
    check(
        "<url><loc>http://a.com/</loc><changefreq>Daily</changefreq></url>",
        &[Rule::ChangefreqValue],
        &["http://a.com/"],
    );
    check("<url><loc>http://a.com/</loc><priority>0,8</priority></url>", &[Rule::PriorityRange], &["http://a.com/"]);
    check("<url><loc>http://a.com/</loc><priority>1.5</priority></url>", &[Rule::PriorityRange], &["http://a.com/"]);
    check(
        "<url><loc>http://a.com/</loc><lastmod>2005</lastmod><lastmod>2006</lastmod></url>",
        &[Rule::LastmodPrecision, Rule::LocDuplicateTag],
        &["http://a.com/"],
    );
    check("<url><lastmod>2005-01-01</lastmod></url>", &[Rule::LocMissing], &[]);
    check("<url><loc></loc></url>", &[Rule::LocMissing], &[]);
    check("<url><loc>/relative</loc></url>", &[Rule::LocNotAbsolute], &[]);
    check("<url><loc>javascript:alert(1)</loc></url>", &[Rule::LocScheme], &[]);
    check("<url><loc>http://exa mple.com/</loc></url>", &[Rule::LocInvalid], &[]);
    check("<url><loc>http://a.com/</loc><foo>1</foo></url>", &[Rule::UnknownElement], &["http://a.com/"]);
    check("<url><loc><u>http://a.com/</u></loc></url>", &[Rule::UnknownElement], &["http://a.com/"]);
    check("<url>http://a.com/bare</url>", &[Rule::LocMissing], &["http://a.com/bare"]);
    check(
        "<url><loc>http://a.com/1</loc><loc>http://a.com/2</loc></url>",
        &[Rule::LocDuplicateTag],
        &["http://a.com/1", "http://a.com/2"],
    );
    let long = format!("<url><loc>http://a.com/{}</loc></url>", "a".repeat(2100));
    check(&long, &[Rule::LocTooLong], &[&format!("http://a.com/{}", "a".repeat(2100))]);
}

#[test]
fn repaired_lastmod_keeps_its_text() {
    let r = read_bytes(
        urlset("<url><loc>http://a.com/</loc><lastmod>Tue, 10 Jun 2003 04:00:00 GMT</lastmod></url>").as_bytes(),
    );
    let l = url(&r.entries[0]).lastmod.as_ref().unwrap();
    assert!(!l.is_w3c());
    assert_eq!(l.to_string(), "Tue, 10 Jun 2003 04:00:00 GMT");
    assert_eq!(l.value().to_utc_string(), "2003-06-10T04:00:00.000Z");
}

#[test]
fn bom_and_blank_lines_before_declaration() {
    let mut bytes = b"\xEF\xBB\xBF\n\n   ".to_vec();
    bytes.extend_from_slice(urlset("<url><loc>http://a.com/</loc></url>").as_bytes());
    let r = read_bytes(&bytes);
    assert_eq!(r.urls(), ["http://a.com/"]);
    // Read, and said: a strict XML parser refuses a declaration after blank space (as validate says).
    assert_eq!(r.rules(), [Rule::Bom, Rule::XmlMalformed]);
}

#[test]
fn positions_are_exact() {
    let r = read_bytes(
        b"<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n  <url>\n    <loc>http://a.com/</loc>\n    <priority>2</priority>\n  </url>\n</urlset>\n",
    );
    let f = &r.findings[0];
    assert_eq!(f.rule, Rule::PriorityRange);
    let p = f.position.unwrap();
    assert_eq!((p.line, p.column), (5, 5));
    assert_eq!(f.loc.as_deref(), Some("http://a.com/"));
}

#[test]
fn truncated_file_keeps_what_came_before() {
    let full =
        urlset("<url><loc>http://a.com/1</loc></url>\n<url><loc>http://a.com/2</loc></url>\n<url><loc>http://a.com/3");
    let cut = &full.as_bytes()[..full.find("/3").unwrap() + 2];
    let r = read_bytes(cut);
    assert_eq!(r.urls(), ["http://a.com/1", "http://a.com/2"]);
    let e = r.error.expect("an error says where the file stops");
    assert!(matches!(e, Error::Xml { .. }));
    assert_eq!(e.position().unwrap().line, 5);
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn truncated_in_end_tag_keeps_the_complete_loc() {
    let r = read_bytes(b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.com/</lo");
    assert_eq!(r.urls(), ["http://a.com/"]);
    assert!(r.error.is_some());
}

#[test]
fn second_root_is_read() {
    let r = read_bytes(
        b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.com/</loc></url></urlset>\n\
          <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><sitemap><loc>http://a.com/s.xml</loc></sitemap></sitemapindex>",
    );
    assert_eq!(r.urls(), ["http://a.com/"]);
    assert_eq!(r.sitemaps(), ["http://a.com/s.xml"]);
    assert_eq!(r.rules(), [Rule::XmlMalformed]);
}

#[test]
fn html_error_page_is_not_a_sitemap() {
    let r = read_bytes(b"<!DOCTYPE html>\n<html><head><title>404</title></head><body>Not found</body></html>");
    let e = r.error.expect("refused");
    assert_eq!(e.rule(), Some(Rule::UnknownRoot));
    assert!(e.to_string().contains("HTML"), "{e}");
}

#[test]
fn other_encoding_is_transcoded_and_reported() {
    let mut bytes = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.com/".to_vec();
    bytes.push(0xFC); // u-umlaut in Latin-1
    bytes.extend_from_slice(b"ber</loc></url></urlset>");
    let r = read_bytes(&bytes);
    assert_eq!(r.urls(), ["http://a.com/%C3%BCber"]);
    assert_eq!(r.rules(), [Rule::Encoding, Rule::LocNotEscaped]);
}

#[test]
fn invalid_utf8_stops_with_encoding_error() {
    let mut bytes = urlset("<url><loc>http://a.com/1</loc></url><url><loc>http://a.com/").into_bytes();
    let at = bytes.len();
    bytes.truncate(at - "\n</urlset>\n".len());
    bytes.extend_from_slice(b"\xFF\xFE</loc></url></urlset>");
    let r = read_bytes(&bytes);
    assert_eq!(r.urls(), ["http://a.com/1"]);
    assert_eq!(r.error.expect("stops").rule(), Some(Rule::Encoding));
}

#[test]
fn utf16_is_transcoded() {
    let text = urlset("<url><loc>http://a.com/</loc></url>").replace("UTF-8", "UTF-16");
    let mut bytes = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    let r = read_bytes(&bytes);
    assert_eq!(r.urls(), ["http://a.com/"]);
    assert!(r.has(Rule::Encoding));
}

#[test]
fn fifty_thousand_is_not_a_read_limit() {
    let mut body = String::new();
    for i in 0..50_010 {
        body.push_str(&format!("<url><loc>http://a.com/{i}</loc></url>\n"));
    }
    let r = read_bytes(urlset(&body).as_bytes());
    assert_eq!(r.entries.len(), 50_010);
    assert!(r.error.is_none());
}
