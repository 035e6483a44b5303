//! Streaming readers for every sitemap format, behind one [`SitemapReader`].
//!
//! Detection is on content only: gzip magic bytes (decompressed while streaming, then
//! detected again), then the XML root element, else plain text.

mod ahead;
mod gunzip;
mod input;
mod members;
mod place;
mod text;
mod xml;

pub use gunzip::{read_buffered, start_worker_early};
pub use input::Input;
pub use place::nothing_else_runs;

/// The bytes of a gzip stream (every member, each checked), inflated on the caller's thread by
/// the reader's own decoder: for a caller that reads a sitemap's bytes again (the CLI's source
/// excerpts) and must see exactly what the reader saw. Its faults are `io::Error`s whose
/// message says what is wrong with the stream.
pub fn gunzip<R: BufRead + Send>(input: R) -> impl std::io::Read + Send {
    members::Members::checked(input)
}

use crate::error::{Error, OaiFault, OaiStop};
use crate::model::{Entry, Format};
use crate::rule::{Finding, Position};
use std::io::BufRead;
use std::sync::Arc;

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
    /// Pages of an OAI-PMH list of records asked for at most: a repository whose resumption
    /// tokens never end (each new, so no loop is seen) is stopped there with
    /// [`Error::Oai`]. Default 1,000 (with the byte limit summed over pages, 50 KiB a page).
    pub max_pages: u32,
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
            max_pages: 1_000,
        }
    }
}

/// How to read.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Limits on hostile input.
    pub limits: Limits,
}

/// The next page a paged source is asked for: an OAI-PMH repository's records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageRequest {
    /// The first page of the records, in Dublin Core: what a bare base URL (answering
    /// `badVerb`) or another verb's answer leads to.
    ListRecords,
    /// The page a `resumptionToken` names.
    Resume(String),
}

impl PageRequest {
    /// The query to send to the repository's base URL: `verb=ListRecords&metadataPrefix=oai_dc`,
    /// or the token as the only other argument (OAI-PMH 2.0, section 3.5).
    pub fn query(&self) -> String {
        match self {
            PageRequest::ListRecords => "verb=ListRecords&metadataPrefix=oai_dc".to_string(),
            PageRequest::Resume(token) => {
                let token: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
                format!("verb=ListRecords&resumptionToken={token}")
            }
        }
    }
}

/// Opens the next page of a paged source (an OAI-PMH repository) for the reader. The core
/// does no I/O: whoever opened the first page over HTTP supplies this (mapwright-fetch does);
/// a reader without one reads the page it was given and ends with [`Error::Oai`]
/// ([`OaiFault::NoPager`]) when the list goes on.
pub trait Pager: Send + Sync {
    /// The body of the answer to `request`, as the first page's body was given; an `Err`
    /// ends the list with [`Error::Oai`] ([`OaiFault::Fetch`]) that
    /// carries its message.
    fn open(&self, request: &PageRequest) -> std::io::Result<Box<dyn BufRead + Send>>;

    /// Whether the URL of the first answer asked a verb of its own (`?verb=...`): a `badVerb`
    /// or `badArgument` answer is then the repository refusing that very request, named as
    /// such, and not a bare base URL's answer that leads to the records. Default false.
    fn asked_a_verb(&self) -> bool {
        false
    }
}

impl std::fmt::Debug for dyn Pager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pager")
    }
}

/// A streaming reader over any sitemap format: entries come one at a time, memory does not
/// grow with their number.
///
/// An OAI-PMH answer is read across its pages through the [`Pager`] given to
/// [`SitemapReader::paged`]: the limits apply to all pages together (bytes summed, pages
/// counted), positions are within the page, and a finding on a page after the first answer
/// says which page. A list that stops before its end, for whatever reason, ends the read with
/// [`Error::Oai`] after the records of the pages before.
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
    paging: Paging,
}

/// Where an OAI-PMH list of records stands.
struct Paging {
    pager: Option<Arc<dyn Pager>>,
    /// Answers read, the one given included (1 while it is read).
    answers: u32,
    /// The number of the page being read in the list of records, from 1. The answer given is
    /// page 1; when it holds no records (a bare base URL's `badVerb`), the first page asked for
    /// is page 1 again.
    page: u32,
    /// The request of the page being read; `None` for the answer given.
    request: Option<PageRequest>,
    /// Uncompressed bytes of the pages before it.
    bytes_before: u64,
    /// 64-bit hashes of the tokens followed: a token seen again (a cycle) ends the list.
    tokens: std::collections::HashSet<u64>,
}

enum Inner<'a> {
    Xml(Box<xml::XmlReader<'a>>),
    Text(Box<text::TextReader<'a>>),
}

impl<'a> SitemapReader<'a> {
    /// Detects the format (reading up to the root element) and prepares to stream entries.
    pub fn new(input: impl Into<Input<'a>>, options: ReadOptions) -> Result<Self, Error> {
        Self::paged(input, options, None)
    }

    /// Like [`SitemapReader::new`], with the way to the next pages of an OAI-PMH answer (the
    /// caller that fetched `input` gives it; other formats never use it). An input the reader
    /// owns ([`Input::owned`]) is read on a thread of its own when there is work to overlap.
    pub fn paged(
        input: impl Into<Input<'a>>,
        options: ReadOptions,
        pager: Option<Arc<dyn Pager>>,
    ) -> Result<Self, Error> {
        let limits = options.limits;
        let mut findings = Vec::new();
        let prepared = input::prepare(
            input.into(),
            &limits,
            &mut findings,
            Some(xml::scan_ahead(limits.max_loc_bytes, limits.max_value_bytes)),
        )?;
        let inner = if prepared.looks_like_xml {
            Inner::Xml(Box::new(xml::XmlReader::new(prepared, &limits, &mut findings)?))
        } else {
            Inner::Text(Box::new(text::TextReader::new(prepared, &limits)))
        };
        let paging = Paging { pager, answers: 1, page: 1, request: None, bytes_before: 0, tokens: Default::default() };
        Ok(SitemapReader { inner, findings, dropped_findings: 0, limits, done: false, paging })
    }

    /// Tells the reader the URL the document was served at (after redirects): an Atom feed's
    /// relative links resolve against it (and against their `xml:base`), as feed readers do,
    /// and so does a urlset's or index's relative `<loc>` (`/page`, `../page`, `//host/page`;
    /// kept with a `loc-not-absolute` error rather than dropped, as it is without a URL).
    /// Entries read before the call are not changed; a text sitemap ignores it.
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
        // The usual step, an entry of an XML read that is not an OAI-PMH list (whose end of
        // page leads on to the next page in the same call), returned as the XML reader built
        // it, without looking at it (looked at, it was copied once more: ~200 bytes an entry).
        // A step that gave no entry is seen at the next call, which then does what the
        // general way did right after it: the read is over.
        if !self.done && self.paging.answers <= 1 {
            if let Inner::Xml(x) = &mut self.inner {
                if x.format() != Format::OaiPmh {
                    if x.stopped() {
                        self.done = true;
                        return Ok(None);
                    }
                    let mut sink = FindingSink {
                        out: &mut self.findings,
                        dropped: &mut self.dropped_findings,
                        max: self.limits.max_findings,
                    };
                    return x.next_entry(&mut sink);
                }
            }
        }
        self.next_entry_general()
    }

    /// [`SitemapReader::next_entry`], every case. Never inlined: its stack frame (kilobytes,
    /// probed page by page on every call) would otherwise be set up for the usual step too.
    #[inline(never)]
    fn next_entry_general(&mut self) -> Result<Option<Entry>, Error> {
        loop {
            if self.done {
                return Ok(None);
            }
            let before = self.findings.len();
            let mut sink = FindingSink {
                out: &mut self.findings,
                dropped: &mut self.dropped_findings,
                max: self.limits.max_findings,
            };
            let r = match &mut self.inner {
                Inner::Xml(x) => x.next_entry(&mut sink),
                Inner::Text(t) => t.next_entry(&mut sink),
            };
            if !matches!(r, Ok(Some(_))) {
                self.done = true;
            }
            self.label_page(before);
            if matches!(r, Ok(None)) && self.format() == Format::OaiPmh && self.next_page()? {
                continue;
            }
            return r;
        }
    }

    /// Says which page the findings from `from` on come from, past the answer given.
    fn label_page(&mut self, from: usize) {
        if self.paging.answers > 1 {
            let page = self.paging.page;
            for f in self.findings.iter_mut().skip(from) {
                f.message = format!("OAI-PMH page {page}: {}", f.message);
            }
        }
    }

    /// At the end of an OAI-PMH page: opens the next one through the pager, if the page names
    /// one (`true`). `Ok(false)` is the end of the list; an `Err` says why the list stops
    /// before its end.
    fn next_page(&mut self) -> Result<bool, Error> {
        let Inner::Xml(x) = &mut self.inner else { return Ok(false) };
        let first = self.paging.answers == 1;
        // A bare base URL answers badVerb (or badArgument): only then does an error lead on.
        let bare = first && !self.paging.pager.as_ref().is_some_and(|p| p.asked_a_verb());
        let end = x.oai_end(first, bare);
        let used = self.paging.bytes_before + x.bytes_read();
        let (request, what) = match end {
            xml::PageEnd::Done => return Ok(false),
            xml::PageEnd::Stop(fault, position) => {
                let request = self.paging.request.as_ref().map(PageRequest::query);
                return Err(Error::Oai(Box::new(OaiStop { page: self.paging.page, request, fault, position })));
            }
            xml::PageEnd::Next(request, what) => (request, what),
        };
        // The records asked for after an answer that held none are the list's first page.
        let page = if first && request == PageRequest::ListRecords { 1 } else { self.paging.page + 1 };
        let stop =
            |fault| Error::Oai(Box::new(OaiStop { page, request: Some(request.query()), fault, position: None }));
        let next = self.open_page(page, &request, what, used).map_err(stop)?;
        self.inner = Inner::Xml(Box::new(next));
        self.paging.answers += 1;
        self.paging.page = page;
        self.paging.request = Some(request);
        self.paging.bytes_before = used;
        self.done = false;
        Ok(true)
    }

    /// Opens and starts page `page`, asked for with `request`; the fault that stops the list
    /// otherwise. `what` is what the answer before holds, said when the input cannot ask.
    fn open_page(
        &mut self,
        page: u32,
        request: &PageRequest,
        what: String,
        used: u64,
    ) -> Result<xml::XmlReader<'a>, OaiFault> {
        let Some(pager) = self.paging.pager.clone() else {
            return Err(OaiFault::NoPager { answer: what });
        };
        if let PageRequest::Resume(t) = request {
            if !self.paging.tokens.insert(xxhash_rust::xxh3::xxh3_64(t.as_bytes())) {
                return Err(OaiFault::TokenRepeats { token: text::shorten(t) });
            }
        }
        if used >= self.limits.max_bytes {
            return Err(OaiFault::ByteLimit { used, limit: self.limits.max_bytes });
        }
        if page > self.limits.max_pages {
            return Err(OaiFault::PageLimit { limit: self.limits.max_pages });
        }
        let input = pager.open(request).map_err(|e| OaiFault::Fetch { message: e.to_string() })?;
        let mut limits = self.limits.clone();
        limits.max_bytes -= used;
        let mut first = Vec::new();
        let read = input::prepare(input::Input::Borrowed(input), &limits, &mut first, None).and_then(|p| {
            if p.looks_like_xml {
                xml::XmlReader::new(p, &limits, &mut first)
            } else {
                Err(Error::NotSitemap {
                    position: Position { line: 1, column: 1, offset: 0 },
                    reason: "not XML".into(),
                })
            }
        });
        let found = match read {
            Ok(x) if x.format() == Format::OaiPmh => {
                for mut f in first {
                    f.message = format!("OAI-PMH page {page}: {}", f.message);
                    self.push(f);
                }
                return Ok(x);
            }
            Ok(x) => format!("a {} document", x.format()),
            Err(e) => e.to_string(),
        };
        Err(OaiFault::NotRecords { found })
    }

    fn push(&mut self, f: Finding) {
        FindingSink { out: &mut self.findings, dropped: &mut self.dropped_findings, max: self.limits.max_findings }
            .push(f);
    }

    /// Where the last entry returned starts (its `<loc>`, or its line for text).
    pub fn entry_position(&self) -> Position {
        match &self.inner {
            Inner::Xml(x) => x.entry_position(),
            Inner::Text(t) => t.entry_position(),
        }
    }

    /// Uncompressed bytes consumed so far (over every page of an OAI-PMH answer).
    pub fn bytes_read(&self) -> u64 {
        self.paging.bytes_before
            + match &self.inner {
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

    /// Entries the XML reader's fast path read without the field code.
    #[cfg(test)]
    pub(crate) fn clean_entries(&self) -> u64 {
        match &self.inner {
            Inner::Xml(x) => x.clean_entries(),
            Inner::Text(_) => 0,
        }
    }

    /// Entries the worker read ahead that the XML reader took (`ahead.rs`).
    #[cfg(test)]
    pub(crate) fn made_taken(&self) -> u64 {
        match &self.inner {
            Inner::Xml(x) => x.made_taken(),
            Inner::Text(_) => 0,
        }
    }

    /// Takes the findings collected since the last call. When there are none, no `Drain` is
    /// made and dropped (26 instructions, 1.6 % of a `read` of s50k.xml when called after every
    /// entry); a loop that takes them after every entry calls [`take_findings`] instead.
    ///
    /// [`take_findings`]: SitemapReader::take_findings
    pub fn drain_findings(&mut self) -> impl Iterator<Item = Finding> + '_ {
        (!self.findings.is_empty()).then(|| self.findings.drain(..)).into_iter().flatten()
    }

    /// Hands `each` the findings collected since the last call, in order. For loops that take
    /// them after every entry: most entries have none, and this is then one comparison inlined
    /// in the loop. Through [`drain_findings`], the fat-LTO build (`dist`) left the drop of the
    /// empty iterator out of line, 42 instructions an entry (2-3 % of a `read` or a `validate`
    /// of s50k.xml).
    ///
    /// [`drain_findings`]: SitemapReader::drain_findings
    #[inline(always)]
    pub fn take_findings(&mut self, each: impl FnMut(Finding)) {
        if !self.findings.is_empty() {
            self.findings.drain(..).for_each(each);
        }
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
