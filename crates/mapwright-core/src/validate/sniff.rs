//! A look at the first bytes of a file, for the one well-formedness fault the reader lets
//! pass: an XML declaration that is not at the very start (after whitespace or a comment),
//! which every strict XML parser rejects.

use crate::rule::{Finding, Position, Rule};
use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

/// Bytes of the head kept.
const HEAD: usize = 4096;

/// Passes bytes through and copies the first [`HEAD`] of them.
pub(super) struct Sniff<R> {
    inner: R,
    head: Arc<Mutex<Vec<u8>>>,
    seen: usize,
}

impl<R: BufRead> Sniff<R> {
    pub(super) fn new(inner: R, head: Arc<Mutex<Vec<u8>>>) -> Self {
        Sniff { inner, head, seen: 0 }
    }
}

impl<R: BufRead> Read for Sniff<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Sniff<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.seen < HEAD {
            if let Ok(buf) = self.inner.fill_buf() {
                let take = n.min(HEAD - self.seen).min(buf.len());
                if let Ok(mut head) = self.head.lock() {
                    head.extend_from_slice(&buf[..take]);
                }
            }
            self.seen = self.seen.saturating_add(n);
        }
        self.inner.consume(n);
    }
}

/// `xml-malformed` when an XML declaration (`<?xml ` ...) follows anything but a byte order mark.
pub(super) fn declaration_not_first(head: &[u8]) -> Option<Finding> {
    if head.starts_with(&[0x1f, 0x8b]) {
        return None; // gzip: the head is compressed
    }
    let bom = if head.starts_with(&[0xef, 0xbb, 0xbf]) { 3 } else { 0 };
    let at = head.windows(6).position(|w| w.starts_with(b"<?xml") && w[5].is_ascii_whitespace())?;
    if at == bom {
        return None;
    }
    let before = &head[bom..at];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count() as u32;
    let column = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count() as u32;
    let what = if before.iter().all(u8::is_ascii_whitespace) { "whitespace" } else { "other content" };
    Some(Finding::new(
        Rule::XmlMalformed,
        Some(Position { line, column, offset: at as u64 }),
        format!(
            "the XML declaration comes after {what}: it must be the very first thing in the file; remove what precedes <?xml"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(head: &[u8], expected: Option<(u32, u32)>) {
        let got = declaration_not_first(head).map(|f| (f.position.unwrap().line, f.position.unwrap().column));
        assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(head));
    }

    #[test]
    fn declaration_must_come_first() {
        check(b"<?xml version=\"1.0\"?>\n<urlset/>", None);
        check(b"\xef\xbb\xbf<?xml version=\"1.0\"?>", None);
        check(b"<urlset/>", None);
        check(b"\n  <?xml version=\"1.0\"?>", Some((2, 3)));
        check(b"\xef\xbb\xbf \t\r\n<?xml version=\"1.0\"?>", Some((2, 1)));
        check(b"<!-- generated -->\n<?xml version=\"1.0\"?>", Some((2, 1)));
        check(b"<?xml-stylesheet href=\"a.xsl\"?><urlset/>", None);
    }
}
