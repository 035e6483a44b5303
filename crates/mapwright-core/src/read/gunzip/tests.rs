//! The threaded gzip layer's tests, and the helpers other modules' tests share (`gzip`,
//! `read_through`).

use crate::ReadOptions;
use crate::read::read_all;
use std::io::Write;

/// A urlset of `n` entries with pseudo-random paths (so its gzip is far past [`super::SMALL`]
/// and inflates on the worker), every seventh `loc` longer than [`super::HEAD`] (a kept run
/// the reader copies), and findings with positions all along (bad dates, long `loc`s).
fn document(n: usize) -> Vec<u8> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut doc = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for i in 0..n {
        let len = if i % 7 == 3 { super::HEAD + 1000 } else { 40 + i % 60 };
        let path: String = (0..len)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                char::from(b'a' + (seed >> 59) as u8 % 26)
            })
            .collect();
        let lastmod = if i % 5 == 0 { "2024-13-45" } else { "2024-01-02" };
        doc.push_str(&format!(
            "  <url>\n    <loc>https://example.com/{path}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </url>\n"
        ));
    }
    doc.push_str("</urlset>\n");
    doc.into_bytes()
}

/// `doc` gzipped (fast: the tests' documents are large).
pub(in crate::read) fn gzip(doc: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(doc).unwrap();
    e.finish().unwrap()
}

#[test]
fn the_worker_reads_what_a_plain_read_does() {
    let plain = document(6000);
    let gz = gzip(&plain);
    assert!(gz.len() > 4 * super::SMALL, "the worker inflates it: {} bytes", gz.len());
    let (entries, findings, error) = read_all(&plain[..], ReadOptions::default());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(entries.len(), 6000);
    assert!(findings.len() > 1000, "findings with positions: {}", findings.len());
    let (gz_entries, gz_findings, gz_error) = read_all(&gz[..], ReadOptions::default());
    assert!(gz_error.is_none(), "{gz_error:?}");
    assert_eq!(gz_entries, entries);
    let at = |f: &[crate::Finding]| f.iter().map(|f| (f.rule, f.position)).collect::<Vec<_>>();
    assert_eq!(at(&gz_findings), at(&findings));
}

/// A worker started early serves the next threaded read on the thread that started it,
/// not another thread's, and the reads' entries are those of a read without it.
#[test]
fn a_worker_started_early_serves_its_own_thread_s_next_read() {
    let plain = document(6000);
    let gz = gzip(&plain);
    let (entries, _, _) = read_all(&plain[..], ReadOptions::default());
    let parked = || super::EARLY.lock().expect("not poisoned").is_some();
    std::thread::spawn(move || {
        super::start_worker_early();
        assert!(parked(), "started");
        let gz2 = gz.clone();
        let elsewhere = std::thread::spawn(move || read_all(&gz2[..], ReadOptions::default()));
        let (other, _, error) = elsewhere.join().expect("no panic");
        assert!(error.is_none(), "{error:?}");
        assert_eq!(other.len(), 6000);
        assert!(parked(), "another thread's read does not take it");
        let (mine, _, error) = read_all(&gz[..], ReadOptions::default());
        assert!(error.is_none(), "{error:?}");
        assert!(!parked(), "this thread's read took it");
        (other, mine)
    })
    .join()
    .map(|(other, mine)| {
        assert_eq!(other, entries);
        assert_eq!(mine, entries);
    })
    .expect("no panic");
}

/// A threaded read, plain or gzip, pins the caller's thread to one CPU at most while it
/// lives (`place.rs`) and gives it its CPUs back when it ends, its entries those of the
/// read with no thread.
#[cfg(target_os = "linux")]
#[test]
fn a_threaded_read_gives_the_caller_its_cpus_back() {
    use crate::read::Input;
    use crate::read::place::tests::mine;
    let plain = document(6000);
    let (entries, _, _) = read_all(&plain[..], ReadOptions::default());
    assert_eq!(entries.len(), 6000);
    let before = mine();
    for bytes in [plain.clone(), gzip(&plain)] {
        let input = Input::owned(Box::new(std::io::Cursor::new(bytes)));
        let mut reader = crate::SitemapReader::paged(input, ReadOptions::default(), None).expect("a urlset");
        let first = reader.next_entry().expect("an entry").expect("an entry");
        let during = mine();
        assert!(during == before || during.len() == 1, "{before:?} -> {during:?}");
        let (rest, _, error) = read_through(&mut reader);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(first, entries[0]);
        assert_eq!(rest, entries[1..]);
        assert_eq!(mine(), during, "still placed until the read ends");
        drop(reader);
        assert_eq!(mine(), before, "the CPUs came back");
    }
}

/// A stream whose trailer does not match its bytes (the CRC-32, the length) is a fault
/// at its end, whether the input is the reader's own or borrowed, inflated on the
/// worker or here (a small stream): nothing tells a damaged file from a good one else.
#[test]
fn a_trailer_that_does_not_match_is_a_fault() {
    use crate::read::Input;
    for n in [6000, 20] {
        let plain = document(n);
        let good = gzip(&plain);
        for at in [good.len() - 8, good.len() - 4] {
            let mut gz = good.clone();
            gz[at] ^= 0x5a;
            let owned = Input::owned(Box::new(std::io::Cursor::new(gz.clone())));
            for input in [owned, Input::from(&gz[..])] {
                let (entries, _, error) = drain(crate::SitemapReader::paged(input, ReadOptions::default(), None));
                let error = error.expect("a fault");
                assert!(error.contains("gzip"), "{n} entries, byte {at}: {error}");
                assert!(entries.len() <= n, "{n} entries, byte {at}: {} read", entries.len());
            }
        }
    }
}

/// A stream of several members, each past one buffer, inflated on the worker: the members'
/// ends fall inside buffers, whose checksums are computed on either thread, and the read is
/// the plain one's; a damaged checksum in the first member is a fault at its end.
#[test]
fn members_inflated_on_the_worker_read_as_one_stream() {
    let plain = document(6000);
    let (a, b) = plain.split_at(plain.len() / 3 + 17);
    let (b, c) = b.split_at(b.len() / 2 + 5);
    let first = gzip(a);
    let stream = [first.clone(), gzip(b), gzip(&[]), gzip(c)].concat();
    assert!(first.len() > 4 * super::SMALL, "inflated on the worker: {} bytes", first.len());
    let (entries, _, error) = read_all(&plain[..], ReadOptions::default());
    assert!(error.is_none(), "{error:?}");
    let (got, _, error) = read_all(&stream[..], ReadOptions::default());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(got, entries);
    let mut bad = stream.clone();
    bad[first.len() - 8] ^= 1;
    let (got, _, error) = read_all(&bad[..], ReadOptions::default());
    let error = error.expect("a fault").to_string();
    assert!(error.contains(&format!("after {} uncompressed bytes", a.len())), "{error}");
    assert!(error.contains("checksum"), "{error}");
    assert!(got.len() < entries.len() / 3 + 1, "{} entries read", got.len());
}

/// Entries, findings (rule and position) and the error, as text, of a reader.
pub(in crate::read) type Read = (Vec<crate::Entry>, Vec<(crate::Rule, Option<crate::Position>)>, Option<String>);

fn drain(reader: Result<crate::SitemapReader<'_>, crate::Error>) -> Read {
    match reader {
        Ok(mut r) => read_through(&mut r),
        Err(e) => (Vec::new(), Vec::new(), Some(e.to_string())),
    }
}

/// What [`drain`] gives of a reader made, which the caller keeps (to ask it more after).
pub(in crate::read) fn read_through(reader: &mut crate::SitemapReader<'_>) -> Read {
    let mut entries = Vec::new();
    let error = loop {
        match reader.next_entry() {
            Ok(Some(e)) => entries.push(e),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    (entries, reader.drain_findings().map(|f| (f.rule, f.position)).collect(), error)
}

/// An input that fails once `at` bytes are read.
struct Failing {
    data: std::io::Cursor<Vec<u8>>,
    at: u64,
}

impl std::io::Read for Failing {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let left = self.at.saturating_sub(self.data.position());
        if left == 0 {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = out.len().min(left as usize);
        self.data.read(&mut out[..n])
    }
}

/// An owned input (`Input::owned`), read ahead on the worker when it is large, reads what
/// the same bytes borrowed do: the same entries, findings at the same positions, the byte
/// limit and an input's fault at the same place, and a small, a text and a transcoded
/// (UTF-16, so not read ahead) input alike.
#[test]
fn an_owned_input_reads_what_a_borrowed_one_does() {
    use std::io::BufReader;
    let big = document(6000);
    assert!(big.len() > 8 * super::OUT_CHUNK, "read ahead on the worker: {} bytes", big.len());
    let text: Vec<u8> = (0..40_000).flat_map(|i| format!("https://example.com/page/{i}\n").into_bytes()).collect();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(String::from_utf8(document(400)).unwrap().encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let big_gz = gzip(&big);
    assert!(big_gz.len() > 4 * super::SMALL, "inflated on the worker: {} bytes", big_gz.len());
    let cases = [
        ("big", big.clone()),
        ("small", document(3)),
        ("text", text),
        ("utf-16", utf16),
        ("gzip", big_gz.clone()),
        ("small gzip", gzip(&document(3))),
        ("gzip in gzip", gzip(&big_gz)),
    ];
    for (name, doc) in cases {
        for max_bytes in [ReadOptions::default().limits.max_bytes, 300_000, 1_000] {
            let mut options = ReadOptions::default();
            options.limits.max_bytes = max_bytes;
            let borrowed = drain(crate::SitemapReader::new(BufReader::new(&doc[..]), options.clone()));
            let input = Box::new(BufReader::new(std::io::Cursor::new(doc.clone())));
            let owned = drain(crate::SitemapReader::new(crate::read::Input::owned(input), options));
            assert!(!borrowed.0.is_empty() || borrowed.2.is_some(), "{name}: nothing read");
            assert_eq!(
                (owned.0.len(), owned.1.len(), &owned.2),
                (borrowed.0.len(), borrowed.1.len(), &borrowed.2),
                "{name}, at most {max_bytes} bytes"
            );
            assert_eq!(owned, borrowed, "{name}, at most {max_bytes} bytes");
        }
    }
    for (doc, at) in [(&big, 100), (&big, 200_000), (&big, 700_000), (&big_gz, 100), (&big_gz, 150_000)] {
        let failing = || BufReader::new(Failing { data: std::io::Cursor::new(doc.clone()), at });
        let borrowed = drain(crate::SitemapReader::new(failing(), ReadOptions::default()));
        let owned =
            drain(crate::SitemapReader::new(crate::read::Input::owned(Box::new(failing())), ReadOptions::default()));
        assert!(borrowed.2.as_deref().is_some_and(|e| e.contains("the disk went away")), "{:?}", borrowed.2);
        assert_eq!(owned, borrowed, "a fault after {at} bytes of {} bytes", doc.len());
    }
}
