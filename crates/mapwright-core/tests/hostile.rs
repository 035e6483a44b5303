//! Hostile input: each case ends quickly, with a clear diagnostic, in bounded memory.

use crate::support::{gzip, peak_heap, read_bytes, read_with, urlset};
use mapwright_core::{Error, Limits, ReadOptions, Rule};
use std::io::Write;
use std::time::{Duration, Instant};

/// What one read may hold at its peak when a single XML event is as large as the limits allow:
/// the parser's event buffer (up to `max_token_bytes`, 4 MiB, in a vector that grows by doubling),
/// one value being captured (`max_value_bytes`, 1 MiB) and the line-tracking buffer. It does not
/// depend on the input's size.
const HEAP_BOUND: usize = 20 << 20;
/// The heap of a read of ordinary entries, however many: a constant.
const STREAM_BOUND: usize = 2 << 20;

#[test]
fn external_entity_is_never_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "http://www.example.com/do-not-visit-here").unwrap();
    let doc = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file://{}\">]>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
         <url><loc>http://www.example.com/visit-here</loc></url>\n<url><loc>&xxe;</loc></url>\n</urlset>",
        secret.display()
    );
    let r = read_bytes(doc.as_bytes());
    assert_eq!(r.urls(), ["http://www.example.com/visit-here"]);
    assert!(r.findings.iter().all(|f| !f.message.contains("do-not-visit")), "{:?}", r.findings);
    let unexpanded = r.findings.iter().find(|f| f.rule == Rule::XmlMalformed).expect("reference reported");
    assert!(unexpanded.message.contains("&xxe;"), "{}", unexpanded.message);
}

#[test]
fn an_entity_never_expanded_inside_a_url_skips_the_entry_with_a_finding() {
    // `https://a.example/&xxe;` is not the URL the author meant (the entity would have
    // supplied part of it): the entry is skipped, never listed under a URL with `&xxe;` in it
    // or with the reference silently dropped (a URL written without <loc> too).
    let doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file:///etc/passwd\"><!ENTITY tail \"x\">]>\n\
               <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
               <url><loc>https://a.example/&xxe;</loc></url>\n\
               <url><loc>https://a.example/page?a=1&amp;b=&tail;</loc></url>\n\
               <url>https://a.example/bare/&xxe;</url>\n\
               <url><loc>https://a.example/ok?a=1&amp;b=2</loc></url>\n</urlset>";
    let r = read_bytes(doc.as_bytes());
    assert_eq!(r.urls(), ["https://a.example/ok?a=1&b=2"], "{:?}", r.findings);
    let said: Vec<_> = r.findings.iter().filter(|f| f.rule == Rule::XmlMalformed).collect();
    assert_eq!(said.len(), 3, "{:?}", r.findings);
    assert!(said.iter().all(|f| f.message.contains("skipped")), "{said:?}");
    assert_eq!([said[0].position.unwrap().line, said[1].position.unwrap().line], [4, 5]);
}

#[test]
fn entity_bomb_is_not_expanded() {
    let mut doc = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    for i in 1..10 {
        let prev = if i == 1 { "lol".to_string() } else { format!("lol{}", i - 1) };
        doc.push_str(&format!("<!ENTITY lol{i} \"{}\">\n", format!("&{prev};").repeat(10)));
    }
    doc.push_str("]>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.com/&lol9;</loc></url></urlset>");
    let start = Instant::now();
    let (r, peak) = peak_heap(|| read_bytes(doc.as_bytes()));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(peak < HEAP_BOUND, "peak heap {peak}");
    assert!(r.has(Rule::XmlMalformed));
    // Never expanded (not 10^9 "lol"s), and no URL is made of the literal reference either:
    // the entry is skipped, and the finding says so.
    assert!(r.urls().is_empty(), "{:?}", r.urls());
    assert!(
        r.findings.iter().any(|f| f.message.contains("&lol9;") && f.message.contains("skipped")),
        "{:?}",
        r.findings
    );
}

/// A gzip stream that inflates to `size` bytes: a urlset of `<url>` elements, far past the limit.
fn element_bomb(size: usize) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">").unwrap();
    let chunk = "<url><loc>http://a.com/</loc></url>".repeat(30_000);
    let mut n = 0;
    while n < size {
        e.write_all(chunk.as_bytes()).unwrap();
        n += chunk.len();
    }
    e.write_all(b"</urlset>").unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_bomb_stops_at_the_byte_limit() {
    let bomb = element_bomb(300 << 20);
    assert!(bomb.len() < 8 << 20, "the bomb itself is small: {}", bomb.len());
    let start = Instant::now();
    let (r, peak) = peak_heap(|| {
        let mut reader = mapwright_core::SitemapReader::new(&bomb[..], ReadOptions::default()).unwrap();
        let mut n = 0u64;
        let err = loop {
            match reader.next_entry() {
                Ok(Some(_)) => n += 1,
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
            reader.drain_findings().for_each(drop);
        };
        (n, err, reader.bytes_read())
    });
    let (entries, err, bytes) = r;
    assert!(matches!(err, Some(Error::TooLarge { limit: 52_428_800, .. })), "{err:?}");
    assert_eq!(err.unwrap().rule(), Some(Rule::TooLarge));
    assert!(bytes <= 52_428_800);
    assert!(entries > 1_000_000, "entries before the limit are read: {entries}");
    assert!(peak < STREAM_BOUND, "peak heap {peak}");
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn padding_without_markup_stops_early() {
    // 300 MB of spaces inside the root: one XML text event the parser would buffer whole.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">").unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..300 {
        e.write_all(&spaces).unwrap();
    }
    e.write_all(b"</urlset>").unwrap();
    let bomb = e.finish().unwrap();
    let (r, peak) = peak_heap(|| read_bytes(&bomb));
    let err = r.error.expect("stopped");
    assert!(err.to_string().contains("without a '<'"), "{err}");
    assert!(peak < HEAP_BOUND, "peak heap {peak}");
}

#[test]
fn nested_gzip_bomb_is_limited_per_layer() {
    let inner = element_bomb(100 << 20);
    let outer = gzip(&inner);
    let r = read_bytes(&outer);
    assert!(matches!(r.error, Some(Error::TooLarge { .. })), "{:?}", r.error);
}

#[test]
fn too_many_gzip_layers() {
    let mut data = urlset("<url><loc>http://a.com/</loc></url>").into_bytes();
    for _ in 0..5 {
        data = gzip(&data);
    }
    let r = read_bytes(&data);
    let e = r.error.expect("refused");
    assert!(e.to_string().contains("gzip layers"), "{e}");
}

#[test]
fn corrupt_and_truncated_gzip() {
    let good = gzip(urlset(&"<url><loc>http://a.com/</loc></url>\n".repeat(2000)).as_bytes());
    let cut = &good[..good.len() / 2];
    let r = read_bytes(cut);
    assert!(!r.entries.is_empty(), "entries before the cut are kept");
    let e = r.error.expect("truncated gzip is an error");
    assert_eq!(e.rule(), Some(Rule::GzipCorrupt), "{e}");
    let mut bad = good.clone();
    for b in bad.iter_mut().skip(40).take(64) {
        *b ^= 0x5A;
    }
    let r = read_bytes(&bad);
    assert_eq!(r.error.expect("corrupt").rule(), Some(Rule::GzipCorrupt));
}

#[test]
fn deep_nesting_is_refused() {
    let mut doc = String::from("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url>");
    doc.push_str(&"<x>".repeat(10_000));
    let r = read_bytes(doc.as_bytes());
    assert!(matches!(r.error, Some(Error::TooDeep { limit: 64, .. })), "{:?}", r.error);
}

#[test]
fn huge_values_are_cut_not_buffered() {
    let body =
        format!("<url><loc>http://a.com/{}</loc></url><url><loc>http://a.com/ok</loc></url>", "a".repeat(3 << 20));
    let (r, peak) = peak_heap(|| read_bytes(urlset(&body).as_bytes()));
    assert_eq!(r.urls(), ["http://a.com/ok"]);
    assert!(r.has(Rule::LocTooLong));
    assert!(peak < HEAP_BOUND, "peak heap {peak}");
}

#[test]
fn hostile_urls_are_refused_per_entry() {
    let body = [
        "<url><loc>http://a.com/\u{0}x</loc></url>",
        "<url><loc>http://[::1/</loc></url>",
        "<url><loc>http://a.com:99999/</loc></url>",
        "<url><loc>file:///etc/passwd</loc></url>",
        "<url><loc>http://ok.com/</loc></url>",
    ]
    .concat();
    let r = read_bytes(urlset(&body).as_bytes());
    assert_eq!(r.urls(), ["http://ok.com/"]);
}

#[test]
fn limits_are_settable() {
    let doc = urlset(&"<url><loc>http://a.com/</loc></url>\n".repeat(1000));
    let options = ReadOptions { limits: Limits { max_bytes: 1000, ..Limits::default() } };
    let r = read_with(doc.as_bytes(), options);
    assert!(matches!(r.error, Some(Error::TooLarge { limit: 1000, .. })));
    assert!(!r.entries.is_empty());
}

#[test]
fn findings_are_bounded() {
    let doc = urlset(&"<url><loc>http://a.com/</loc><priority>9</priority></url>\n".repeat(30_000));
    let options = ReadOptions { limits: Limits { max_findings: 100, ..Limits::default() } };
    let mut reader = mapwright_core::SitemapReader::new(doc.as_bytes(), options).unwrap();
    while reader.next_entry().unwrap().is_some() {}
    assert_eq!(reader.findings().len(), 100);
    assert_eq!(reader.dropped_findings(), 29_900);
}

/// Found by the fuzzer: a UTF-16 file ending in half a code unit made the transcoder call a
/// finished decoder (a panic in encoding_rs).
#[test]
fn utf16_ending_in_half_a_code_unit() {
    let mut bytes = vec![0xFF, 0xFE];
    for u in "<urlset><url><loc>http://a.com/</loc></url></urlset>".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    bytes.push(b'x');
    let r = read_bytes(&bytes);
    assert_eq!(r.urls(), ["http://a.com/"]);
    assert!(r.has(Rule::Encoding));
}
