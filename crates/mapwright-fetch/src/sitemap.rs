//! Fetching one remote sitemap and streaming its entries to a visitor, with the core reader
//! running on a blocking thread over the bounded body stream. An OAI-PMH repository is read
//! across its pages ([`crate::oai`]): the reader asks for each next page on that thread.

use crate::body::{BodyStats, take_fetch_error};
use crate::client::{Fetched, Meta, Response, Validators};
use crate::{Error, Fetcher};
use mapwright_core::{Entry, Finding, Format, Pager, Position, ReadOptions, SitemapReader};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Receives what a remote sitemap holds, on a blocking thread, as it is read.
pub trait Visitor: Send + 'static {
    /// One entry and where its `<loc>` starts; `Break` stops reading the file.
    fn entry(&mut self, entry: Entry, position: Position) -> ControlFlow<()>;
    /// A finding of the reader (repairs and rule violations).
    fn finding(&mut self, _finding: Finding) {}
    /// The file is done (read to its end, stopped, or failed); still on the blocking thread.
    fn end(&mut self) {}
}

/// How reading a fetched sitemap went.
#[derive(Debug)]
pub struct ReadReport {
    /// Headers and the final URL.
    pub meta: Meta,
    /// The detected format (`None` if the body was not a sitemap).
    pub format: Option<Format>,
    /// Entries given to the visitor.
    pub entries: u64,
    /// Bytes on the wire and their hash (of every page, for an OAI-PMH list of records).
    pub body: BodyStats,
    /// Uncompressed bytes the reader consumed.
    pub bytes_read: u64,
    /// Gzip layers removed (a .gz file sent with `Content-Encoding: gzip` has two).
    pub gzip_layers: usize,
    /// Findings the reader dropped past its limit.
    pub dropped_findings: u64,
    /// What stopped reading before the end, if anything: entries before it were visited.
    pub error: Option<Error>,
}

/// The outcome of fetching a sitemap.
#[derive(Debug)]
pub enum SitemapFetch {
    /// 304: unchanged since the validators given; nothing was read.
    NotModified(Meta),
    /// The body was read (maybe partly: see [`ReadReport::error`]).
    Read(ReadReport),
}

/// Fetches `url` and streams its entries to `visitor`; gives the visitor back with the outcome.
/// An `Err` means nothing was read (connection, status, redirects); a fault while reading
/// the body is in [`ReadReport::error`].
pub async fn read_remote<V: Visitor>(
    fetcher: &Fetcher,
    url: &str,
    validators: Option<&Validators>,
    options: ReadOptions,
    visitor: V,
) -> Result<(SitemapFetch, V), Error> {
    let resp = match fetcher.get(url, validators).await? {
        Fetched::NotModified(meta) => return Ok((SitemapFetch::NotModified(meta), visitor)),
        Fetched::Body(r) => r,
    };
    let (report, visitor) = read_response(resp, options, visitor).await?;
    Ok((SitemapFetch::Read(report), visitor))
}

/// Streams the body of a response already received (its final URL known) to `visitor`.
pub async fn read_response<V: Visitor>(
    resp: Response,
    options: ReadOptions,
    visitor: V,
) -> Result<(ReadReport, V), Error> {
    let pager = resp.pager();
    read_paged(resp, options, visitor, pager).await
}

/// [`read_response`] with the pager of its OAI-PMH pages given (discovery's, which its
/// deadline cancels).
pub(crate) async fn read_paged<V: Visitor>(
    resp: Response,
    options: ReadOptions,
    visitor: V,
    pager: Arc<crate::OaiPager>,
) -> Result<(ReadReport, V), Error> {
    let meta = resp.meta.clone();
    let body = resp.into_reader();
    let stats = body.stats_handle();
    // Should this future be dropped (a discovery past its deadline), the body stops and the
    // reader on its thread sees an error at once instead of waiting on the socket.
    let _stop = body.stopper();
    let final_url = meta.final_url.clone();
    let paged = pager.clone();
    let joined = tokio::task::spawn_blocking(move || read_with(body, options, Some(paged), visitor, &final_url)).await;
    let (mut report, visitor) =
        joined.map_err(|e| Error::Http { url: meta.final_url.clone(), message: e.to_string() })?;
    report.body = stats.lock().map(|s| s.clone()).unwrap_or_default();
    // An OAI-PMH list's bytes and hash are those of all its pages.
    pager.pages().add_to(&mut report.body);
    report.meta = meta;
    Ok((report, visitor))
}

/// Runs the core reader over a body, giving each entry and finding to `visitor`: on a blocking
/// thread over a streamed body, or on the async side over a small body already read whole
/// (then without a pager: an OAI-PMH answer's next pages would block).
pub(crate) fn read_with<V: Visitor>(
    body: impl std::io::BufRead + Send,
    options: ReadOptions,
    pager: Option<Arc<dyn Pager>>,
    mut visitor: V,
    url: &str,
) -> (ReadReport, V) {
    let mut report = ReadReport {
        meta: Meta {
            requested: String::new(),
            final_url: url.to_string(),
            status: 200,
            validators: Validators::default(),
            content_type: None,
            content_encoding: None,
            x_robots_tag: None,
        },
        format: None,
        entries: 0,
        body: BodyStats::default(),
        bytes_read: 0,
        gzip_layers: 0,
        dropped_findings: 0,
        error: None,
    };
    let mut reader = match SitemapReader::paged(body, options, pager) {
        Ok(r) => r,
        Err(e) => {
            report.error = Some(convert(url, e));
            visitor.end();
            return (report, visitor);
        }
    };
    // An Atom feed's relative links resolve against the URL it was served at.
    reader.set_document_url(url);
    report.format = Some(reader.format());
    loop {
        let next = reader.next_entry();
        reader.take_findings(|f| visitor.finding(f));
        match next {
            Ok(Some(entry)) => {
                report.entries += 1;
                if visitor.entry(entry, reader.entry_position()).is_break() {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                report.error = Some(convert(url, e));
                break;
            }
        }
    }
    visitor.end();
    report.bytes_read = reader.bytes_read();
    report.gzip_layers = reader.gzip_layers();
    report.dropped_findings = reader.dropped_findings();
    (report, visitor)
}

/// A reader error, unwrapping the fetch error (timeout, wire limit) an I/O error may carry.
pub(crate) fn convert(url: &str, e: mapwright_core::Error) -> Error {
    match e {
        mapwright_core::Error::Io(io) => match take_fetch_error(io) {
            Ok(fetch) => fetch,
            Err(io) => Error::Read { url: url.to_string(), source: mapwright_core::Error::Io(io) },
        },
        other => Error::Read { url: url.to_string(), source: other },
    }
}
