//! `mapwright.read`: a reader thread parses (no GIL) and sends batches of entries through a
//! bounded channel; the Python iterator takes them one batch per release of the GIL.

use crate::convert::{PyEntry, PyFinding};
use crate::errors;
use crate::input::{self, Opened};
use mapwright_core::read::Input;
use mapwright_core::{Entry, Finding, Limits, Loc, ReadOptions, SitemapReader, Voucher};
use mapwright_fetch::StrictScope;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

/// Entries per batch: large enough that the channel costs nothing per entry, small enough that
/// the first entries arrive at once.
pub const BATCH: usize = 2048;
/// Batches in flight: memory is bounded by `BATCH * DEPTH` entries whatever the file's size.
const DEPTH: usize = 4;

/// Why a read stopped early.
pub enum Failure {
    Core(mapwright_core::Error),
    Fetch(mapwright_fetch::Error),
}

impl Failure {
    pub fn from_core(e: mapwright_core::Error) -> Self {
        // A body reader's fetch error (timeout, too many bytes on the wire) comes through as I/O.
        if let mapwright_core::Error::Io(io) = e {
            return match mapwright_fetch::body::take_fetch_error(io) {
                Ok(f) => Failure::Fetch(f),
                Err(io) => Failure::Core(mapwright_core::Error::Io(io)),
            };
        }
        Failure::Core(e)
    }

    /// The exception, naming `url` when the source is remote.
    pub fn to_py(&self, py: Python<'_>, url: Option<&str>) -> PyErr {
        match (self, url) {
            (Failure::Core(e), Some(u)) => errors::core_error_at(py, e, u),
            (Failure::Core(e), None) => errors::core_error(py, e),
            (Failure::Fetch(e), _) => errors::fetch_error(py, e),
        }
    }
}

/// What the reader thread sends.
pub enum Msg {
    Batch { entries: Vec<Entry>, findings: Vec<Finding> },
    End { error: Option<Failure>, dropped: u64, format: Option<&'static str> },
}

/// Reads `input` on a new thread into a bounded channel.
/// `url` is where the document is served (the base of an Atom feed's relative links).
pub fn spawn(input: Opened, options: ReadOptions, url: Option<String>, scope: Option<StrictScope>) -> Receiver<Msg> {
    let (tx, rx) = sync_channel(DEPTH);
    std::thread::Builder::new()
        .name("mapwright-read".into())
        .spawn(move || produce(input, options, url, scope, tx))
        .expect("spawning the reader thread");
    rx
}

fn produce(input: Opened, options: ReadOptions, url: Option<String>, scope: Option<StrictScope>, tx: SyncSender<Msg>) {
    let mut reader = match SitemapReader::paged(Input::owned(input.input), options, input.pager) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Msg::End { error: Some(Failure::from_core(e)), dropped: 0, format: None });
            return;
        }
    };
    if let Some(u) = &url {
        reader.set_document_url(u);
    }
    let mut entries = Vec::with_capacity(BATCH);
    let mut findings: Vec<Finding> = scope.as_ref().and_then(StrictScope::waiver).into_iter().collect();
    let error = loop {
        let next = reader.next_entry();
        reader.take_findings(|f| findings.push(f));
        match next {
            Ok(Some(entry)) => {
                // The strict scope drop, as the CLI's `read --strict` (mapwright-fetch's remote module).
                if let Some(f) = scope.as_ref().and_then(|s| s.drop(&entry, reader.entry_position())) {
                    findings.push(f);
                    continue;
                }
                entries.push(entry);
                if entries.len() == BATCH {
                    let batch = Msg::Batch {
                        entries: std::mem::replace(&mut entries, Vec::with_capacity(BATCH)),
                        findings: std::mem::take(&mut findings),
                    };
                    // The iterator was dropped: stop reading.
                    if tx.send(batch).is_err() {
                        return;
                    }
                }
            }
            Ok(None) => break None,
            Err(e) => break Some(Failure::from_core(e)),
        }
    };
    if !entries.is_empty() || !findings.is_empty() {
        let _ = tx.send(Msg::Batch { entries, findings });
    }
    let format = Some(reader.format().as_str());
    let _ = tx.send(Msg::End { error, dropped: reader.dropped_findings(), format });
}

/// The iterator `mapwright.read` returns: entries one at a time, and `findings` (the
/// diagnostics so far: every one once the iterator is exhausted).
#[pyclass(module = "mapwright")]
pub struct Reader {
    rx: Mutex<Option<Receiver<Msg>>>,
    buf: VecDeque<Entry>,
    findings: Vec<Finding>,
    error: Option<Failure>,
    /// Findings the core counted but did not keep (past its per-file cap).
    #[pyo3(get)]
    dropped_findings: u64,
    /// The format detected (`urlset`, `sitemapindex`, `text`, `rss`, `atom`...), once the end is reached.
    #[pyo3(get)]
    format: Option<&'static str>,
    /// The name findings use: the path, the URL, `<bytes>` or the file object's name.
    #[pyo3(get)]
    pub name: String,
    sitemap: Option<Arc<str>>,
    /// The URL of a remote source, named by its errors.
    pub url: Option<String>,
    /// Entries received, entries the reader skipped (no usable `loc`), entries the strict
    /// scope dropped: what "no entries read" says, as the CLI's `read` says it.
    counts: [u64; 3],
    /// The end was reported (an empty read raises once).
    ended: bool,
}

impl Reader {
    /// The next message, taken without the GIL; `None` once the channel is done.
    fn recv(&mut self, py: Python<'_>) -> Option<Msg> {
        let rx = self.rx.get_mut().ok()?.take()?;
        let (rx, msg) = py.detach(move || {
            let msg = rx.recv().ok();
            (rx, msg)
        });
        if msg.is_some() {
            *self.rx.get_mut().ok()? = Some(rx);
        }
        msg
    }

    /// Takes the next batch into the buffer; false at the end.
    pub fn fill(&mut self, py: Python<'_>) -> bool {
        match self.recv(py) {
            Some(Msg::Batch { entries, findings }) => {
                self.counts[0] += entries.len() as u64;
                for f in &findings {
                    match f.rule {
                        mapwright_core::Rule::LocOutOfScope => self.counts[2] += 1,
                        r if r.skips_entry() => self.counts[1] += 1,
                        _ => {}
                    }
                }
                self.buf.extend(entries);
                self.findings.extend(findings);
                true
            }
            Some(Msg::End { error, dropped, format }) => {
                self.error = error;
                self.dropped_findings = dropped;
                self.format = format;
                if let Ok(rx) = self.rx.get_mut() {
                    *rx = None;
                }
                false
            }
            None => false,
        }
    }

    /// Moves out the buffered entries (for the column builder, which takes whole batches).
    pub fn take_buffered(&mut self) -> VecDeque<Entry> {
        std::mem::take(&mut self.buf)
    }

    /// The error that ended the read as its exception, to raise once the entries before it
    /// are consumed.
    pub fn take_error(&mut self, py: Python<'_>) -> Option<PyErr> {
        self.error.take().map(|e| e.to_py(py, self.url.as_deref()))
    }

    pub fn sitemap(&self) -> Option<Arc<str>> {
        self.sitemap.clone()
    }

    /// Once the read ended without a fault: `NoUrlError` when it gave no entry, worded as the
    /// CLI's `read` words it (every entry out of scope, every entry skipped, or none listed),
    /// the first error finding named. Never an empty read in silence.
    pub fn nothing_read(&self, py: Python<'_>) -> Option<PyErr> {
        let [entries, skipped, dropped] = self.counts;
        if entries > 0 || self.rx.lock().map_or(true, |rx| rx.is_some()) {
            return None;
        }
        let why = if dropped > 0 {
            format!("all {dropped} entries are outside the scope of url= (strict=True dropped them)")
        } else if skipped > 0 {
            format!("all {skipped} entries were skipped (no usable <loc>; see the findings)")
        } else {
            format!("the {} lists no entry", self.format.unwrap_or("document"))
        };
        let mut msg = format!("{}: no entries read: {why}", self.name);
        if let Some(f) = self.findings.iter().find(|f| f.rule.severity() == mapwright_core::Severity::Error) {
            let line = f.position.map_or(String::new(), |p| format!("line {}: ", p.line));
            msg.push_str(&format!("; the first: {line}error[{}]: {}", f.rule.as_str(), f.message));
        }
        Some(errors::plain_at::<errors::NoUrlError>(py, msg, self.url.as_deref()))
    }
}

#[pymethods]
impl Reader {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<PyEntry>> {
        loop {
            if let Some(e) = self.buf.pop_front() {
                return Ok(Some(PyEntry::new(e, self.sitemap.clone())));
            }
            if let Some(err) = self.take_error(py) {
                return Err(err);
            }
            if !self.fill(py) && self.buf.is_empty() && self.error.is_none() {
                if !std::mem::replace(&mut self.ended, true) {
                    if let Some(err) = self.nothing_read(py) {
                        return Err(err);
                    }
                }
                return Ok(None);
            }
        }
    }

    /// The diagnostics found so far (all of them once the iterator is exhausted).
    #[getter]
    fn findings(&self) -> Vec<PyFinding> {
        self.findings.iter().map(|f| PyFinding::new(&self.name, f.clone())).collect()
    }

    fn __repr__(&self) -> String {
        format!("<mapwright.Reader of {:?}>", self.name)
    }
}

/// Opens a source and starts reading it; the Python layer decides `kind`.
#[pyfunction]
#[pyo3(signature = (kind, source, url=None, strict=false, max_bytes=None, timeout=None))]
pub fn open_reader(
    py: Python<'_>,
    kind: &str,
    source: &Bound<'_, PyAny>,
    url: Option<String>,
    strict: bool,
    max_bytes: Option<u64>,
    timeout: Option<f64>,
) -> PyResult<Reader> {
    let mut limits = Limits::default();
    if let Some(b) = max_bytes {
        limits.max_bytes = b;
    }
    let opened = input::open(py, kind, source, max_bytes, timeout)?;
    // A remote sitemap's scope is its URL after redirects, as for the CLI.
    let scope_url = url.or_else(|| opened.final_url.clone());
    if strict && scope_url.is_none() {
        return Err(PyValueError::new_err("strict=True needs url= (the URL the sitemap is served at) or a URL source"));
    }
    // Who vouches (PROTOCOL.md section 5): for a URL, its host's robots.txt when it names the
    // sitemap, as the CLI asks it; else nobody.
    let scope = match (&scope_url, strict) {
        (Some(u), true) => {
            let loc = Loc::parse(u).map_err(|e| PyValueError::new_err(format!("url {u:?}: {e}")))?;
            let voucher = match (&opened.opener, &opened.final_url) {
                (Some(o), Some(f)) => py.detach(|| o.voucher(&opened.name, f)),
                _ => Voucher::Nobody,
            };
            Some(StrictScope::new(loc, u.clone(), voucher))
        }
        (Some(u), false) => {
            Loc::parse(u).map_err(|e| PyValueError::new_err(format!("url {u:?}: {e}")))?;
            None
        }
        (None, _) => None,
    };
    let name = opened.name.clone();
    let remote_url = opened.opener.as_ref().map(|_| name.clone());
    let sitemap = scope_url.as_deref().map(Arc::from);
    let rx = spawn(opened, ReadOptions { limits }, scope_url.clone(), scope);
    Ok(Reader {
        rx: Mutex::new(Some(rx)),
        buf: VecDeque::new(),
        findings: Vec::new(),
        error: None,
        dropped_findings: 0,
        format: None,
        name,
        sitemap,
        url: remote_url,
        counts: [0; 3],
        ended: false,
    })
}
