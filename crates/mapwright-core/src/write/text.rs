//! Plain-text sitemaps: one URL per line, UTF-8, nothing else.

use crate::error::Error;
use crate::model::UrlEntry;
use std::io::Write;

/// Appends one line: the URL as [`crate::Loc`] holds it (normalised, percent-encoded, so it
/// never contains a line break) and `\n`.
pub fn line(out: &mut Vec<u8>, e: &UrlEntry) {
    out.extend_from_slice(e.loc.as_str().as_bytes());
    out.push(b'\n');
}

/// Writes a text sitemap one entry at a time; everything but the `loc` is dropped, as the
/// format has room for nothing else.
pub struct TextWriter<W: Write> {
    out: W,
    urls: u64,
}

impl<W: Write> TextWriter<W> {
    /// A writer over `out`.
    pub fn new(out: W) -> Self {
        TextWriter { out, urls: 0 }
    }

    /// Writes one line.
    pub fn write(&mut self, e: &UrlEntry) -> Result<(), Error> {
        self.out.write_all(e.loc.as_str().as_bytes())?;
        self.out.write_all(b"\n")?;
        self.urls += 1;
        Ok(())
    }

    /// Lines written so far.
    pub fn urls(&self) -> u64 {
        self.urls
    }

    /// Flushes and gives the output back.
    pub fn finish(mut self) -> Result<W, Error> {
        self.out.flush()?;
        Ok(self.out)
    }
}
