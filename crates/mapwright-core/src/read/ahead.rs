//! Entries read ahead by the worker thread (`gunzip.rs`) while it has nothing else to do, for
//! the parser to take instead of reading them itself: the second core's idle time turned into
//! parsing.
//!
//! The worker fills buffers (inflating, or copying a plain file out of the page cache) faster
//! than the parser reads them: a plain file's copy is about a tenth of its parse, a `.xml.gz`'s
//! inflate about two thirds. While the parser will not need it yet ([`Busy`]), the worker runs
//! the XML fast path's scan for the usual `<url>` (the very function the parser would call,
//! `xml::fast`'s `usual_at`) over the buffer it just filled, from the first `</url>` in it,
//! entry after entry, and sends what it made with the buffer ([`Made`]).
//!
//! The parser takes a made entry only where it would have called that function itself: at the
//! same stream offset, after an end tag, in a urlset's root, seeing the same bytes up to the
//! same end. The scan is a function of those bytes alone (what it caches, the last origin and
//! the layout of the last entry, changes its speed, not its result), so the entry and its
//! newlines are what the parser would have computed; everything around it (its position, the
//! byte limit, findings, the entry count) is the parser's own work as before. A made entry at an
//! offset the parser never stands at (the first `</url>` was in a comment, the entries before
//! were not usual) is dropped unused. So the worker's guess can be wrong without the read
//! being different, only slower; the worker stops guessing when a whole buffer's entries went
//! unused (`gunzip.rs`: `stop_ahead`), or when it made none in two buffers running.
//!
//! A leaf: the worker's module and the input layer carry these without knowing XML, and the
//! XML reader makes and takes them.

use crate::date::W3cDateTime;
use crate::loc::Loc;
use crate::model::ChangeFreq;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Newlines a scan saw in bytes starting at some stream offset: how many, and where the line
/// after the last one starts (an index into those bytes; meaningless while `n` is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lines {
    pub n: u32,
    pub start: usize,
}

/// A usual entry the worker read: where it starts (`at`, an index into the bytes the buffer
/// brought, then a stream offset once the parser holds the buffer), the scan's spans and
/// newlines counted from there, and its values.
#[derive(Debug)]
pub(crate) struct Made {
    pub at: u64,
    pub url: usize,
    pub end: usize,
    pub loc_tag: usize,
    pub loc_lines: Lines,
    pub lines: Lines,
    pub loc: Loc,
    pub lastmod: Option<W3cDateTime>,
    pub changefreq: Option<ChangeFreq>,
    pub priority: Option<f32>,
}

/// Entries read ahead in one buffer, at most this many: a queue holds at most 120 KiB of
/// entries (120 bytes each) and their `loc`s, and there is one a buffer in circulation plus
/// two spare (`gunzip.rs`), so reading ahead adds at most about 1 MiB to a read's 830 KiB of
/// buffers (a buffer of 128 KiB holds about 640 entries of the benchmark's corpus).
pub(crate) const MAX_MADE: usize = 1024;

/// Reads usual entries ahead in a buffer's bytes (those it brought, from its room's end), into
/// the queue given (empty), while the reader is [`Busy`].
pub(crate) type Scan = Box<dyn FnMut(&[u8], &mut VecDeque<Made>, Busy<'_>) + Send>;

/// Whether the reader will not need the buffer being read ahead before the worker can look
/// again (every few entries): the worker reads ahead only then, so that the reader never waits
/// for it. Two measures, by what the worker does besides:
/// - it inflates (`asking` is `None`): the reader has a buffer waiting, taken or not. The next
///   inflate is as urgent as the reader's parse, so the worker reads ahead only while it is
///   ahead of the reader.
/// - it copies a plain input (`asking` is `Some`): the reader has not asked for a buffer. The
///   copy is a tenth of the parse, so the worker is ahead as a rule and would otherwise wait
///   for buffers to fill; it keeps the one it filled, reading ahead in it, until the reader
///   asks for it.
///
/// Test builds are always busy, so that every threaded read in a test reads ahead (the entries
/// are the same either way).
#[derive(Clone, Copy)]
pub(crate) struct Busy<'a> {
    pub queued: &'a AtomicUsize,
    pub asking: Option<&'a AtomicBool>,
}

impl Busy<'_> {
    #[inline]
    pub(crate) fn now(self) -> bool {
        cfg!(test)
            || match self.asking {
                Some(asking) => !asking.load(Ordering::Acquire),
                None => self.queued.load(Ordering::Acquire) > 0,
            }
    }
}

/// How to make a read's [`Scan`] (from its `loc` and value byte limits), made only when a
/// worker starts: most reads (small files, borrowed plain input) have none.
#[derive(Clone, Copy)]
pub(crate) struct MakeScan {
    pub make: fn(usize, usize) -> Scan,
    pub max_loc: usize,
    pub max_value: usize,
}

impl MakeScan {
    pub(crate) fn make(self) -> Scan {
        (self.make)(self.max_loc, self.max_value)
    }
}

#[cfg(test)]
mod tests {
    use crate::read::Input;
    use crate::read::gunzip::tests::{gzip, read_through};
    use crate::{Entry, Position, ReadOptions, Rule, SitemapReader};

    /// A urlset of `n` entries, most of them usual (what the worker reads ahead) in two layouts,
    /// among entries and markup that must stop it or send it astray: an image (not usual), a
    /// date the scan refuses (a finding), a `loc` in CDATA holding `</url>`, a comment holding
    /// `</url>` (a place the parser never stands after an entry), and an entry written on one
    /// line.
    fn document(n: usize) -> Vec<u8> {
        let mut doc = String::from(concat!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
            "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" ",
            "xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n"
        ));
        for i in 0..n {
            let loc = format!("https://example.com/{}/page-{i}?a=1&amp;b={}", i % 37, i * 7919 % 1000);
            let lastmod = if i % 41 == 0 { "2024-13-45" } else { "2024-05-06T07:08:09+02:00" };
            match i % 1000 {
                _ if i % 97 == 0 => doc.push_str(&format!(
                    "<url>\n  <loc>{loc}</loc>\n  <image:image><image:loc>{loc}.png</image:loc></image:image>\n</url>\n"
                )),
                _ if i % 301 == 0 => {
                    doc.push_str(&format!("<url>\n  <loc><![CDATA[https://example.com/c{i}?</url>]]></loc>\n</url>\n"))
                }
                _ if i % 211 == 0 => doc.push_str(&format!("<!-- moved: </url> <url><loc>{loc}</loc></url> -->\n")),
                _ if i % 157 == 0 => doc.push_str(&format!("<url><loc>{loc}</loc><priority>0.3</priority></url>\n")),
                k if k < 500 => doc.push_str(&format!(
                    "<url>\n  <loc>{loc}</loc>\n  <lastmod>{lastmod}</lastmod>\n  <changefreq>daily</changefreq>\n  <priority>0.{}</priority>\n</url>\n",
                    i % 10
                )),
                _ => doc.push_str(&format!(
                    "  <url>\n    <loc>{loc}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </url>\n"
                )),
            }
        }
        doc.push_str("</urlset>\n");
        doc.into_bytes()
    }

    /// Entries, findings (rule and position), the error as text, and the entries read ahead
    /// that were taken.
    type Read = (Vec<Entry>, Vec<(Rule, Option<Position>)>, Option<String>, u64);

    fn read(input: Input<'_>, options: ReadOptions, fast: bool) -> Read {
        let mut reader = match SitemapReader::new(input, options) {
            Ok(r) => r,
            Err(e) => return (Vec::new(), Vec::new(), Some(e.to_string()), 0),
        };
        reader.set_fast_path(fast);
        let (entries, findings, error) = read_through(&mut reader);
        (entries, findings, error, reader.made_taken())
    }

    /// [`super::MAX_MADE`]'s memory bound counts 120 bytes an entry read ahead.
    #[test]
    fn an_entry_read_ahead_takes_120_bytes_at_most() {
        assert!(std::mem::size_of::<super::Made>() <= 120, "{}", std::mem::size_of::<super::Made>());
    }

    /// Reads on the worker thread (an owned plain input, a gzip input owned or borrowed) take
    /// entries it read ahead, and read what the parser reads alone (a borrowed plain input,
    /// which has no worker): the same entries, the same findings at the same positions, the
    /// same error, whatever the byte limit (one cutting a buffer the worker read ahead in
    /// included). With the fast path off, no entry read ahead is taken and nothing changes.
    #[test]
    fn entries_read_ahead_are_the_parser_s_own() {
        let doc = document(12_000);
        assert!(doc.len() > 10 * crate::read::gunzip::OUT_CHUNK, "many buffers: {} bytes", doc.len());
        let gz = gzip(&doc);
        for max_bytes in [ReadOptions::default().limits.max_bytes, 700_001] {
            let mut options = ReadOptions::default();
            options.limits.max_bytes = max_bytes;
            let alone = read(Input::from(&doc[..]), options.clone(), true);
            assert_eq!(alone.3, 0, "a borrowed plain input has no worker");
            assert!(alone.0.len() > 4_000, "{} entries", alone.0.len());
            assert!(alone.1.iter().any(|f| f.0 == Rule::LastmodFormat), "findings along the way");
            assert_eq!(alone.2.is_some(), max_bytes == 700_001, "{:?}", alone.2);
            let cases = [
                ("owned plain", Input::owned(Box::new(std::io::Cursor::new(doc.clone())))),
                ("owned gzip", Input::owned(Box::new(std::io::Cursor::new(gz.clone())))),
                ("borrowed gzip", Input::from(&gz[..])),
            ];
            for (name, input) in cases {
                let (entries, findings, error, taken) = read(input, options.clone(), true);
                assert!(taken > 1_000, "{name}: {taken} entries read ahead and taken");
                assert!(taken < entries.len() as u64, "{name}: the parser read some itself");
                assert_eq!(entries, alone.0, "{name} ({max_bytes})");
                assert_eq!(findings, alone.1, "{name} ({max_bytes})");
                assert_eq!(error, alone.2, "{name} ({max_bytes})");
            }
            let slow = read(Input::owned(Box::new(std::io::Cursor::new(doc.clone()))), options, false);
            assert_eq!(slow.3, 0, "the event loop takes no entry read ahead");
            assert_eq!((slow.0, slow.1, slow.2), (alone.0, alone.1, alone.2));
        }
    }
}
