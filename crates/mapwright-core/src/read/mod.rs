//! Streaming readers for every sitemap format, behind one [`SitemapReader`].
//!
//! Detection is on content only: gzip magic bytes (decompressed while streaming, then
//! detected again), then the XML root element, else plain text.

mod input;
mod text;
mod xml;

use crate::error::Error;
use crate::model::{Entry, Format};
use crate::rule::{Finding, Position};
use std::io::BufRead;

/// Limits that protect a reader from hostile input. The defaults are the protocol's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Uncompressed bytes read before stopping with [`Error::TooLarge`]. Default 52,428,800.
    pub max_bytes: u64,
    /// Longest `loc` text kept, in bytes; longer ones are skipped with a finding. Default 65,536
    /// (the protocol's 2,048 is a validation rule, `loc-too-long`, not a read limit).
    pub max_loc_bytes: usize,
    /// Longest text value of any element, in bytes; longer values are cut. Default 1 MiB.
    pub max_value_bytes: usize,
    /// Deepest element nesting. Default 64.
    pub max_depth: usize,
    /// Longest run of XML without a `<` (one text, comment or tag), in bytes; past it reading
    /// stops. It bounds the memory of one XML event, which the parser buffers whole. Default 4 MiB.
    pub max_token_bytes: usize,
    /// Gzip layers decompressed (a gzip stream inside a gzip stream). Default 3.
    pub max_gzip_layers: usize,
    /// Findings kept before further ones are counted but dropped. Default 10,000.
    pub max_findings: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: crate::MAX_BYTES,
            max_loc_bytes: 65_536,
            max_value_bytes: 1 << 20,
            max_depth: 64,
            max_token_bytes: 4 << 20,
            max_gzip_layers: 3,
            max_findings: 10_000,
        }
    }
}

/// How to read.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Limits on hostile input.
    pub limits: Limits,
}

/// A streaming reader over any sitemap format: entries come one at a time, memory does not
/// grow with their number.
///
/// Repairs and rule violations are collected as [`Finding`]s that the caller drains with
/// [`SitemapReader::drain_findings`]; only a fault nothing can read past is an [`Error`],
/// after which the reader yields nothing more.
pub struct SitemapReader<'a> {
    inner: Inner<'a>,
    findings: Vec<Finding>,
    dropped_findings: u64,
    limits: Limits,
    done: bool,
}

enum Inner<'a> {
    Xml(Box<xml::XmlReader<'a>>),
    Text(text::TextReader<'a>),
}

impl<'a> SitemapReader<'a> {
    /// Detects the format (reading up to the root element) and prepares to stream entries.
    pub fn new(input: impl BufRead + Send + 'a, options: ReadOptions) -> Result<Self, Error> {
        let limits = options.limits;
        let mut findings = Vec::new();
        let prepared = input::prepare(Box::new(input), &limits, &mut findings)?;
        let inner = if prepared.looks_like_xml {
            Inner::Xml(Box::new(xml::XmlReader::new(prepared, &limits, &mut findings)?))
        } else {
            Inner::Text(text::TextReader::new(prepared, &limits))
        };
        Ok(SitemapReader { inner, findings, dropped_findings: 0, limits, done: false })
    }

    /// Tells the reader the URL the document was served at (after redirects): an Atom feed's
    /// relative links resolve against it (and against their `xml:base`), as feed readers do.
    /// Entries read before the call are not changed; other formats ignore it.
    pub fn set_document_url(&mut self, url: &str) {
        if let Inner::Xml(x) = &mut self.inner {
            x.set_document_url(url);
        }
    }

    /// The detected format.
    pub fn format(&self) -> Format {
        match &self.inner {
            Inner::Xml(x) => x.format(),
            Inner::Text(_) => Format::Text,
        }
    }

    /// The root element's namespace URI, for XML formats (empty when it has none).
    pub fn namespace(&self) -> Option<&str> {
        match &self.inner {
            Inner::Xml(x) => Some(x.namespace()),
            Inner::Text(_) => None,
        }
    }

    /// How many gzip layers were removed (0 for a plain file).
    pub fn gzip_layers(&self) -> usize {
        match &self.inner {
            Inner::Xml(x) => x.gzip_layers(),
            Inner::Text(t) => t.gzip_layers(),
        }
    }

    /// The next entry, `Ok(None)` at the end; after an `Err` the reader is finished.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, Error> {
        if self.done {
            return Ok(None);
        }
        let mut sink =
            FindingSink { out: &mut self.findings, dropped: &mut self.dropped_findings, max: self.limits.max_findings };
        let r = match &mut self.inner {
            Inner::Xml(x) => x.next_entry(&mut sink),
            Inner::Text(t) => t.next_entry(&mut sink),
        };
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        r
    }

    /// Where the last entry returned starts (its `<loc>`, or its line for text).
    pub fn entry_position(&self) -> Position {
        match &self.inner {
            Inner::Xml(x) => x.entry_position(),
            Inner::Text(t) => t.entry_position(),
        }
    }

    /// Uncompressed bytes consumed so far.
    pub fn bytes_read(&self) -> u64 {
        match &self.inner {
            Inner::Xml(x) => x.bytes_read(),
            Inner::Text(t) => t.bytes_read(),
        }
    }

    /// Turns the XML reader's fast path off or on, to test it against the event loop.
    #[cfg(test)]
    pub(crate) fn set_fast_path(&mut self, on: bool) {
        if let Inner::Xml(x) = &mut self.inner {
            x.set_fast_path(on);
        }
    }

    /// Takes the findings collected since the last call.
    pub fn drain_findings(&mut self) -> std::vec::Drain<'_, Finding> {
        self.findings.drain(..)
    }

    /// Findings collected and not yet drained.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Findings dropped because more than [`Limits::max_findings`] were pending.
    pub fn dropped_findings(&self) -> u64 {
        self.dropped_findings
    }
}

impl Iterator for SitemapReader<'_> {
    type Item = Result<Entry, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// Where format readers put findings, bounded by [`Limits::max_findings`].
pub(crate) struct FindingSink<'s> {
    out: &'s mut Vec<Finding>,
    dropped: &'s mut u64,
    max: usize,
}

impl FindingSink<'_> {
    pub(crate) fn push(&mut self, f: Finding) {
        if self.out.len() < self.max {
            self.out.push(f);
        } else {
            *self.dropped += 1;
        }
    }
}

/// Reads a whole document into memory: entries, findings, and the error that stopped it, if any.
/// For tests and small inputs; streaming callers use [`SitemapReader`] directly.
pub fn read_all(input: impl BufRead + Send, options: ReadOptions) -> (Vec<Entry>, Vec<Finding>, Option<Error>) {
    let mut reader = match SitemapReader::new(input, options) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Vec::new(), Some(e)),
    };
    let mut entries = Vec::new();
    let mut error = None;
    loop {
        match reader.next_entry() {
            Ok(Some(e)) => entries.push(e),
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let findings = reader.drain_findings().collect();
    (entries, findings, error)
}
