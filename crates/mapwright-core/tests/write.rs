//! Writers: proptest round trips (write, read back, compare), the set writer's splitting under
//! any limits, and the official XSDs through xmllint.

use mapwright_core::read::read_all;
use mapwright_core::write::{
    IndexWriter, Namespaces, SetConfig, SetFormat, SitemapSetWriter, TextWriter, UrlsetWriter,
};
use mapwright_core::{
    Alternate, ChangeFreq, DataObject, Entry, Extensions, Geo, Image, Lastmod, Loc, News, PageMapAttribute,
    ReadOptions, SitemapEntry, UrlEntry, Video, VideoPrice, W3cDateTime,
};
use proptest::prelude::*;
use std::io::BufReader;
use std::path::Path;

/// Text a reader gives back unchanged: no control characters, no surrounding whitespace.
fn value() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9&<>\"'é日 ]{0,12}[a-zA-Z0-9&<>\"'é日]"
        .prop_map(|s| s.trim_start().to_string())
        .prop_filter("empty", |s| !s.is_empty())
}

fn opt_value() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(value())
}

fn loc() -> impl Strategy<Value = Loc> {
    (
        prop_oneof!["http", "https"],
        "[a-z]{1,8}\\.(com|org|de)",
        proptest::option::of(1u16..9000),
        "(/[a-zA-Z0-9éü日 %&=?.'-]{0,8}){0,4}",
    )
        .prop_filter_map("not a URL", |(s, h, port, path)| {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            Loc::parse(&format!("{s}://{h}{port}{path}")).ok()
        })
}

/// A `lastmod` of every precision the XSD accepts, valid W3C Datetime.
fn lastmod() -> impl Strategy<Value = Lastmod> {
    (1000u16..9999, 1u8..=12, 1u8..=28, 0u8..24, 0u8..60, 0u8..60, 0usize..=3, 1u32..=9, -840i16..=840).prop_map(
        |(y, mo, d, h, mi, s, form, digits, off)| {
            let date = format!("{y:04}-{mo:02}-{d:02}");
            let tz = if off == 0 {
                "Z".to_string()
            } else {
                format!(
                    "{}{:02}:{:02}",
                    if off < 0 { '-' } else { '+' },
                    off.unsigned_abs() / 60,
                    off.unsigned_abs() % 60
                )
            };
            let text = match form {
                0 => date,
                1 => format!("{date}T{h:02}:{mi:02}:{s:02}{tz}"),
                2 => format!("{date}T{h:02}:{mi:02}:{s:02}.{}{tz}", "7".repeat(digits as usize)),
                _ => format!("{date}T{h:02}:{mi:02}:{s:02}Z"),
            };
            Lastmod::W3c(W3cDateTime::parse(&text).expect("valid W3C Datetime"))
        },
    )
}

fn image() -> impl Strategy<Value = Image> {
    (value(), opt_value(), opt_value(), opt_value(), opt_value())
        .prop_map(|(loc, caption, title, geo_location, license)| Image { loc, caption, title, geo_location, license })
}

fn video() -> impl Strategy<Value = Video> {
    (
        (opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value()),
        (proptest::option::of(any::<u32>()), proptest::option::of(0.0f32..=5.0), proptest::option::of(any::<u64>())),
        (opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value()),
        (
            proptest::collection::vec((value(), opt_value(), opt_value(), opt_value()), 0..2),
            proptest::collection::vec(value(), 0..3),
        ),
        (opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value()),
    )
        // Alike on purpose: one field of `Video` a line, from the strategy's tuples (the two halves
        // pair by shape).
        .prop_map(|(a, b, c, (prices, tags), d)| Video {
            thumbnail_loc: a.0,
            title: a.1,
            description: a.2,
            content_loc: a.3,
            player_loc: a.4.clone(),
            player_loc_allow_embed: a.4.and(a.5),
            player_loc_autoplay: None,
            duration: b.0,
            expiration_date: a.6,
            rating: b.1,
            view_count: b.2,
            publication_date: c.0,
            family_friendly: c.1,
            restriction: c.2.clone(),
            restriction_relationship: c.2.and(c.3),
            platform: c.4.clone(),
            platform_relationship: c.4.and(c.5),
            prices: prices
                .into_iter()
                .map(|(value, currency, kind, resolution)| VideoPrice { value, currency, kind, resolution })
                .collect(),
            requires_subscription: d.0,
            uploader: d.1.clone(),
            uploader_info: d.1.and(d.2),
            live: d.3,
            tags,
            category: d.4,
            gallery_loc: d.5.clone(),
            gallery_title: d.5.and(d.6),
            id: d.7,
        })
}

fn news() -> impl Strategy<Value = News> {
    (value(), value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value(), opt_value()).prop_map(
        |(name, lang, publication_date, title, keywords, genres, stock_tickers, access)| News {
            publication_name: Some(name),
            language: Some(lang),
            publication_date,
            title,
            keywords,
            genres,
            stock_tickers,
            access,
        },
    )
}

fn entry(extensions: bool) -> impl Strategy<Value = UrlEntry> {
    let n = if extensions { 3 } else { 0 };
    (
        loc(),
        proptest::option::of(lastmod()),
        proptest::option::of(proptest::sample::select(ChangeFreq::ALL.to_vec())),
        proptest::option::of(0.0f32..=1.0),
        proptest::collection::vec(image(), 0..=n),
        proptest::collection::vec(video(), 0..=n.min(2)),
        if extensions { proptest::option::of(news()).boxed() } else { Just(None).boxed() },
        proptest::collection::vec((value(), value()), 0..=n),
        if extensions { proptest::option::of(opt_value()).boxed() } else { Just(None).boxed() },
        proptest::collection::vec(data_object(), 0..=n.min(2)),
    )
        .prop_map(|(loc, lastmod, changefreq, priority, images, videos, news, alts, geo, pagemap)| UrlEntry {
            loc,
            lastmod,
            changefreq,
            priority,
            // Always `Some`, empty or not: read back, an entry without extensions has `None`,
            // and the two must compare equal.
            extensions: Some(Box::new(Extensions {
                images,
                videos,
                news: news.map(Box::new),
                alternates: alts.into_iter().map(|(hreflang, href)| Alternate { hreflang, href }).collect(),
                geo: geo.map(|format| Box::new(Geo { format })),
                pagemap,
            })),
        })
}

fn data_object() -> impl Strategy<Value = DataObject> {
    (value(), opt_value(), proptest::collection::vec((value(), value()), 0..3)).prop_map(|(kind, id, attributes)| {
        DataObject {
            kind,
            id,
            attributes: attributes.into_iter().map(|(name, value)| PageMapAttribute { name, value }).collect(),
        }
    })
}

fn read_back(bytes: &[u8]) -> Vec<Entry> {
    let (entries, _findings, err) = read_all(bytes, ReadOptions::default());
    assert!(err.is_none(), "read error: {err:?}\n{}", String::from_utf8_lossy(bytes));
    entries
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn urlset_round_trip(entries in proptest::collection::vec(entry(true), 1..8)) {
        let mut w = UrlsetWriter::new(Vec::new(), Namespaces::of_all(&entries)).unwrap();
        for e in &entries {
            w.write(e).unwrap();
        }
        let out = w.finish().unwrap();
        let back = read_back(&out);
        let expected: Vec<Entry> = entries.into_iter().map(Entry::Url).collect();
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn index_round_trip(locs in proptest::collection::vec((loc(), proptest::option::of(lastmod())), 1..8)) {
        let mut w = IndexWriter::new(Vec::new()).unwrap();
        let entries: Vec<SitemapEntry> = locs.into_iter().map(|(loc, lastmod)| SitemapEntry { loc, lastmod }).collect();
        for e in &entries {
            w.write(e).unwrap();
        }
        let back = read_back(&w.finish().unwrap());
        prop_assert_eq!(back, entries.into_iter().map(Entry::Sitemap).collect::<Vec<_>>());
    }

    #[test]
    fn text_round_trip(entries in proptest::collection::vec(entry(false), 1..8)) {
        let mut w = TextWriter::new(Vec::new());
        for e in &entries {
            w.write(e).unwrap();
        }
        let back = read_back(&w.finish().unwrap());
        let locs: Vec<&Loc> = back.iter().map(Entry::loc).collect();
        prop_assert_eq!(locs, entries.iter().map(|e| &e.loc).collect::<Vec<_>>());
    }

    #[test]
    fn set_round_trip_under_any_limits(
        entries in proptest::collection::vec(entry(true), 0..60),
        max_urls in 1usize..20,
        max_bytes in 6_000u64..20_000,
        gzip in any::<bool>(),
        text in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = SetConfig::new(dir.path(), Loc::parse("https://example.com/maps/").unwrap());
        cfg.max_urls = max_urls;
        cfg.max_bytes = max_bytes;
        cfg.gzip = gzip.then_some(1);
        cfg.format = if text { SetFormat::Text } else { SetFormat::Xml };
        let mut w = SitemapSetWriter::new(cfg).unwrap();
        for e in &entries {
            w.write(e).unwrap();
        }
        let summary = w.finish().unwrap();
        prop_assert_eq!(summary.urls, entries.len() as u64);
        let back = read_set(dir.path(), &summary.entry_point, max_urls, max_bytes);
        if text {
            let locs: Vec<&Loc> = back.iter().map(|e| e.loc()).collect();
            prop_assert_eq!(locs, entries.iter().map(|e| &e.loc).collect::<Vec<_>>());
        } else {
            prop_assert_eq!(back, entries.into_iter().map(Entry::Url).collect::<Vec<_>>());
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        let mut expected = summary.files.clone();
        expected.sort();
        prop_assert_eq!(names, expected, "no temporary file may be left");
    }
}

/// Reads the set whose entry point is `entry` in `dir`, checking each part's limits.
fn read_set(dir: &Path, entry: &str, max_urls: usize, max_bytes: u64) -> Vec<Entry> {
    if entry.is_empty() {
        return Vec::new();
    }
    let top = read_file(&dir.join(entry), max_urls, max_bytes);
    if !matches!(top.first(), Some(Entry::Sitemap(_))) {
        return top;
    }
    let mut all = Vec::new();
    for child in top {
        let name = child.loc().as_str().rsplit('/').next().unwrap().to_string();
        assert!(child.loc().as_str().starts_with("https://example.com/maps/"), "{}", child.loc());
        all.extend(read_file(&dir.join(name), max_urls, max_bytes));
    }
    all
}

fn read_file(path: &Path, max_urls: usize, max_bytes: u64) -> Vec<Entry> {
    let f = std::fs::File::open(path).unwrap();
    let mut r = mapwright_core::SitemapReader::new(BufReader::new(f), ReadOptions::default()).unwrap();
    let mut out = Vec::new();
    while let Some(e) = r.next_entry().unwrap() {
        out.push(e);
    }
    // The limits bound the parts; the index obeys only the protocol's own.
    if matches!(out.first(), Some(Entry::Url(_))) {
        assert!(r.bytes_read() <= max_bytes, "{}: {} bytes > {max_bytes}", path.display(), r.bytes_read());
        assert!(out.len() <= max_urls, "{}: {} URLs > {max_urls}", path.display(), out.len());
    }
    out
}

/// Every form of value the writer must escape or normalise, checked against the exact bytes.
#[test]
fn escaping_and_lastmod_forms() {
    let mut e = UrlEntry::new(Loc::parse("https://example.com/a b/ü?x=1&y=<2>").unwrap());
    e.lastmod = Some(Lastmod::W3c(W3cDateTime::parse("2005-03").unwrap()));
    e.priority = Some(1.0);
    let mut w = UrlsetWriter::new(Vec::new(), Namespaces::NONE).unwrap();
    w.write(&e).unwrap();
    e.lastmod = Some(Lastmod::W3c(W3cDateTime::parse("2005-03-04T10:20+01:00").unwrap()));
    e.priority = Some(0.25);
    w.write(&e).unwrap();
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
         <url><loc>https://example.com/a%20b/%C3%BC?x=1&amp;y=%3C2%3E</loc><lastmod>2005-03-01</lastmod><priority>1.0</priority></url>\n\
         <url><loc>https://example.com/a%20b/%C3%BC?x=1&amp;y=%3C2%3E</loc><lastmod>2005-03-04T10:20:00+01:00</lastmod><priority>0.25</priority></url>\n\
         </urlset>\n"
    );
}

#[test]
fn undeclared_extension_is_refused() {
    let mut e = UrlEntry::new(Loc::parse("https://example.com/").unwrap());
    e.ext_mut().alternates.push(Alternate { hreflang: "de".into(), href: "https://example.com/de/".into() });
    let mut w = UrlsetWriter::new(Vec::new(), Namespaces::NONE).unwrap();
    assert!(matches!(w.write(&e), Err(mapwright_core::Error::UndeclaredExtension { .. })));
    let out = w.finish().unwrap();
    assert!(!String::from_utf8(out).unwrap().contains("xhtml"));
}

/// The schemas shared by the team: `../../../shared` from the crate in CI, `/work/shared` here.
fn schemas() -> std::path::PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/schemas");
    if p.exists() { p } else { Path::new("/work/shared/schemas").to_path_buf() }
}

pub fn xmllint(file: &Path, schema: &str) {
    let out = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schemas().join(schema))
        .arg(file)
        .output()
        .expect("xmllint runs (apt-get install libxml2-utils)");
    assert!(out.status.success(), "{} fails {schema}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
}

/// Plain entries with every lastmod form and odd characters, split into gzipped parts: every
/// file passes the official XSDs, and the index lists the parts with their lastmod.
#[test]
fn set_files_pass_the_official_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = SetConfig::new(dir.path(), Loc::parse("https://example.com/").unwrap());
    cfg.max_urls = 40;
    cfg.gzip = Some(6);
    let mut w = SitemapSetWriter::new(cfg).unwrap();
    let forms = [
        "2005",
        "2005-02",
        "2005-02-03",
        "2005-02-03T04:05Z",
        "2005-02-03T04:05:06+01:00",
        "2005-02-03T04:05:06.789-05:00",
    ];
    for i in 0..100 {
        let mut e = UrlEntry::new(Loc::parse(&format!("https://example.com/ü ber/{i}?a=1&b='<x>'")).unwrap());
        e.lastmod = Some(Lastmod::W3c(W3cDateTime::parse(forms[i % forms.len()]).unwrap()));
        e.changefreq = Some(ChangeFreq::ALL[i % 7]);
        e.priority = Some((i % 11) as f32 / 10.0);
        w.write(&e).unwrap();
    }
    let s = w.finish().unwrap();
    assert_eq!(unhashed(&s.files), ["sitemap-1.xml.gz", "sitemap-2.xml.gz", "sitemap-3.xml.gz", "sitemap.xml"]);
    for f in &s.files[..3] {
        xmllint(&dir.path().join(f), "sitemap.xsd");
    }
    xmllint(&dir.path().join("sitemap.xml"), "siteindex.xsd");
    let index = std::fs::read_to_string(dir.path().join("sitemap.xml")).unwrap();
    assert_eq!(index.matches("<lastmod>").count(), 3);
}

/// A smaller second run removes the parts the first left that its index no longer lists, and
/// touches nothing else in the folder.
#[test]
fn stale_parts_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), "x").unwrap();
    std::fs::write(dir.path().join("sitemap-news.xml"), "x").unwrap();
    let run = |n: usize| {
        let mut cfg = SetConfig::new(dir.path(), Loc::parse("https://example.com/").unwrap());
        cfg.max_urls = 10;
        let mut w = SitemapSetWriter::new(cfg).unwrap();
        for i in 0..n {
            w.write(&UrlEntry::new(Loc::parse(&format!("https://example.com/{i}")).unwrap())).unwrap();
        }
        w.finish().unwrap()
    };
    let first = run(35);
    assert_eq!(first.files.len(), 5);
    let second = run(15);
    // Part 1 holds the same URLs in both runs, so it keeps its name; part 2 changed.
    assert_eq!(second.files[0], first.files[0]);
    assert_eq!(unhashed(&second.removed), ["sitemap-2.xml", "sitemap-3.xml", "sitemap-4.xml"]);
    let third = run(5);
    assert_eq!(third.files, ["sitemap.xml"]);
    assert_eq!(third.removed, &second.files[..2]);
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["robots.txt", "sitemap-news.xml", "sitemap.xml"]);
}

#[test]
fn an_entry_larger_than_the_limit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = SetConfig::new(dir.path(), Loc::parse("https://example.com/").unwrap());
    cfg.max_bytes = 250;
    let mut w = SitemapSetWriter::new(cfg).unwrap();
    let long = format!("https://example.com/{}", "a".repeat(300));
    let err = w.write(&UrlEntry::new(Loc::parse(&long).unwrap())).unwrap_err();
    assert!(matches!(err, mapwright_core::Error::EntryTooLarge { limit: 250, .. }), "{err}");
    // Nothing changed: smaller entries still go in, and the set is whole.
    w.write(&UrlEntry::new(Loc::parse("https://example.com/short").unwrap())).unwrap();
    let s = w.finish().unwrap();
    assert_eq!((s.urls, s.files.len()), (1, 1));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    let mut w =
        SitemapSetWriter::new(SetConfig::new(dir.path().join("x"), Loc::parse("https://example.com/").unwrap()))
            .unwrap();
    w.write(&UrlEntry::new(Loc::parse("https://example.com/a").unwrap())).unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path().join("x")).unwrap().count(), 0, "an abandoned set leaves nothing");
}

/// An entry needing a namespace the open part did not declare starts a new part, which declares
/// it (and so do the parts after it); parts without extensions declare none. xmllint checks
/// that every prefix used is bound.
#[test]
fn namespaces_are_declared_from_the_part_that_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SitemapSetWriter::new(SetConfig::new(dir.path(), Loc::parse("https://example.com/").unwrap())).unwrap();
    for i in 0..5 {
        let mut e = UrlEntry::new(Loc::parse(&format!("https://example.com/{i}")).unwrap());
        if i == 2 {
            e.ext_mut().alternates.push(Alternate { hreflang: "de".into(), href: "https://example.com/de/".into() });
        }
        w.write(&e).unwrap();
    }
    let s = w.finish().unwrap();
    assert_eq!(unhashed(&s.files), ["sitemap-1.xml", "sitemap-2.xml", "sitemap.xml"]);
    let one = std::fs::read_to_string(dir.path().join(&s.files[0])).unwrap();
    let two = std::fs::read_to_string(dir.path().join(&s.files[1])).unwrap();
    assert!(!one.contains("xmlns:") && one.matches("<url>").count() == 2, "{one}");
    assert!(two.contains("xmlns:xhtml=\"http://www.w3.org/1999/xhtml\"") && !two.contains("xmlns:image"), "{two}");
    for f in &s.files[..2] {
        let out = std::process::Command::new("xmllint").arg("--noout").arg(dir.path().join(f)).output().unwrap();
        assert!(out.status.success(), "{f}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// With gzip (a worker thread), an error mid-way still leaves no temporary file behind.
#[test]
fn an_abandoned_gzip_set_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = SetConfig::new(dir.path(), Loc::parse("https://example.com/").unwrap());
    cfg.gzip = Some(6);
    cfg.max_bytes = 2_000;
    cfg.max_urls = 3;
    let mut w = SitemapSetWriter::new(cfg).unwrap();
    for i in 0..10 {
        w.write(&UrlEntry::new(Loc::parse(&format!("https://example.com/{i}")).unwrap())).unwrap();
    }
    let long = format!("https://example.com/{}", "a".repeat(3_000));
    assert!(matches!(
        w.write(&UrlEntry::new(Loc::parse(&long).unwrap())),
        Err(mapwright_core::Error::EntryTooLarge { .. })
    ));
    drop(w);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "{left:?}");
}

/// Part names without their content hash: `sitemap-2-<16 hex digits>.xml` -> `sitemap-2.xml`.
fn unhashed(names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|name| {
            let dot = name.find('.').unwrap_or(name.len());
            let (stem, ext) = name.split_at(dot);
            match stem.len().checked_sub(17).map(|i| stem.split_at(i)) {
                Some((base, hash)) if hash.starts_with('-') && hash[1..].bytes().all(|b| b.is_ascii_hexdigit()) => {
                    format!("{base}{ext}")
                }
                _ => name.clone(),
            }
        })
        .collect()
}

/// Symlinks planted in the folder, pointing outside it, at every name a run could write: the
/// temporary names earlier versions used (`.sitemap.<pid>-<n>.tmp`, the pid being known), the
/// parts' and the index's names (learnt from a run elsewhere). Some point at files, some
/// nowhere. The run replaces the links it meets; nothing outside the folder changes.
#[cfg(unix)]
#[test]
fn planted_symlinks_are_replaced_never_followed() {
    for gzip in [None, Some(1)] {
        let write_set = |dir: &Path| {
            let mut cfg = SetConfig::new(dir, Loc::parse("https://example.com/").unwrap());
            cfg.max_urls = 10;
            cfg.gzip = gzip;
            let mut w = SitemapSetWriter::new(cfg).unwrap();
            for i in 0..35 {
                w.write(&UrlEntry::new(Loc::parse(&format!("https://example.com/{i}")).unwrap())).unwrap();
            }
            w.finish().unwrap()
        };
        let scratch = tempfile::tempdir().unwrap();
        let names = write_set(scratch.path()).files;
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut planted: Vec<String> = (1..=60).map(|n| format!(".sitemap.{}-{n}.tmp", std::process::id())).collect();
        planted.extend((1..=6).flat_map(|n| [format!("sitemap-{n}.xml"), format!("sitemap-{n}.xml.gz")]));
        planted.extend(names.iter().cloned());
        for (k, name) in planted.iter().enumerate() {
            let target = outside.path().join(format!("victim-{k}"));
            if k % 2 == 0 {
                std::fs::write(&target, "precious").unwrap();
            }
            std::os::unix::fs::symlink(&target, dir.path().join(name)).unwrap();
        }
        let before = snapshot(outside.path());
        let summary = write_set(dir.path());
        assert_eq!(summary.files, names, "the same set is written");
        assert_eq!(snapshot(outside.path()), before, "nothing outside the folder changed (gzip {gzip:?})");
        for name in &summary.files {
            let meta = std::fs::symlink_metadata(dir.path().join(name)).unwrap();
            assert!(meta.file_type().is_file(), "{name} is a file of ours, not the planted link");
            if name != "sitemap.xml" {
                let (ours, scratch) = (dir.path().join(name), scratch.path().join(name));
                assert_eq!(std::fs::read(ours).unwrap(), std::fs::read(scratch).unwrap(), "{name}");
            }
        }
    }
}

/// Every file of a folder and its content.
#[cfg(unix)]
fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}
