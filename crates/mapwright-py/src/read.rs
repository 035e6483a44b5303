//! `mapwright.read`: a reader thread parses (no GIL) and sends batches of entries through a
//! bounded channel; the Python iterator takes them one batch per release of the GIL.

use crate::convert::{PyEntry, PyFinding};
use crate::errors;
use crate::input::{self, Opened};
use mapwright_core::{Entry, Finding, Limits, Loc, ReadOptions, Rule, Scope, SitemapReader};
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

    pub fn to_py(&self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Core(e) => errors::core_error(py, e),
            Failure::Fetch(e) => errors::fetch_error(py, e),
        }
    }
}

/// What the reader thread sends.
pub enum Msg {
    Batch { entries: Vec<Entry>, findings: Vec<Finding> },
    End { error: Option<Failure>, dropped: u64, format: Option<&'static str> },
}

/// Reads `input` on a new thread into a bounded channel.
pub fn spawn(input: Opened, options: ReadOptions, scope: Option<(Scope, String)>, strict: bool) -> Receiver<Msg> {
    let (tx, rx) = sync_channel(DEPTH);
    std::thread::Builder::new()
        .name("mapwright-read".into())
        .spawn(move || produce(input, options, scope, strict, tx))
        .expect("spawning the reader thread");
    rx
}

fn produce(input: Opened, options: ReadOptions, scope: Option<(Scope, String)>, strict: bool, tx: SyncSender<Msg>) {
    let mut reader = match SitemapReader::paged(input.input, options, input.pager) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Msg::End { error: Some(Failure::from_core(e)), dropped: 0, format: None });
            return;
        }
    };
    let mut entries = Vec::with_capacity(BATCH);
    let mut findings = Vec::new();
    let error = loop {
        let next = reader.next_entry();
        findings.extend(reader.drain_findings());
        match next {
            Ok(Some(entry)) => {
                if let (Some((scope, url)), true) = (&scope, strict)
                    && let Err(why) = scope.check(entry.loc())
                {
                    let f = Finding::new(
                        Rule::LocOutOfScope,
                        Some(reader.entry_position()),
                        format!("{} is on {} than the sitemap at {url}: dropped", entry.loc(), why.describe()),
                    );
                    findings.push(f.with_loc(entry.loc().as_str()));
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
    name: String,
    sitemap: Option<Arc<str>>,
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

    /// The error that ended the read, to raise once the entries before it are consumed.
    pub fn take_error(&mut self) -> Option<Failure> {
        self.error.take()
    }

    pub fn sitemap(&self) -> Option<Arc<str>> {
        self.sitemap.clone()
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
            if let Some(err) = self.error.take() {
                return Err(err.to_py(py));
            }
            if !self.fill(py) && self.buf.is_empty() && self.error.is_none() {
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
#[pyo3(signature = (kind, source, url=None, strict=false, max_bytes=None))]
pub fn open_reader(
    py: Python<'_>,
    kind: &str,
    source: &Bound<'_, PyAny>,
    url: Option<String>,
    strict: bool,
    max_bytes: Option<u64>,
) -> PyResult<Reader> {
    let mut limits = Limits::default();
    if let Some(b) = max_bytes {
        limits.max_bytes = b;
    }
    let opened = input::open(py, kind, source, max_bytes)?;
    // A remote sitemap's scope is its URL after redirects, as for the CLI.
    let scope_url = url.or_else(|| opened.final_url.clone());
    if strict && scope_url.is_none() {
        return Err(PyValueError::new_err("strict=True needs url= (the URL the sitemap is served at) or a URL source"));
    }
    let scope = match &scope_url {
        Some(u) => {
            let loc = Loc::parse(u).map_err(|e| PyValueError::new_err(format!("url {u:?}: {e}")))?;
            Some((Scope::of_sitemap(&loc), u.clone()))
        }
        None => None,
    };
    let name = opened.name.clone();
    let sitemap = scope_url.as_deref().map(Arc::from);
    let rx = spawn(opened, ReadOptions { limits }, scope, strict);
    Ok(Reader {
        rx: Mutex::new(Some(rx)),
        buf: VecDeque::new(),
        findings: Vec::new(),
        error: None,
        dropped_findings: 0,
        format: None,
        name,
        sitemap,
    })
}
