//! Sources of bytes: a path, `bytes`, a binary file object, or an http(s) URL opened by
//! mapwright-fetch's `remote` module (the CLI's too); and what the HTTP side of the process
//! shares: one tokio runtime and its HTTP clients.

use crate::errors;
use mapwright_fetch::{Fetcher, Opener};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::sync::{Arc, Mutex};

/// Read buffer of files and file objects.
const BUF: usize = 64 * 1024;

/// What the HTTP side of the process shares: one runtime (two workers are plenty for I/O, and
/// one runtime means one thread pool however many readers are open) and one [`Fetcher`] per
/// set of options (its connection pool, TLS set-up and DNS answers kept from call to call:
/// building a client cost about 8 ms, more than reading a small sitemap), each made when first
/// asked for. Made again in a forked child (`pid`): the parent's worker threads do not exist
/// there and its pooled connections are the parent's sockets; what the parent made is leaked
/// in the child, never dropped (dropping a runtime would wait for threads that are gone).
struct Shared {
    pid: u32,
    rt: Arc<tokio::runtime::Runtime>,
    fetchers: HashMap<FetcherKey, Fetcher>,
}

/// The options a [`Fetcher`] is built with: `max_bytes`, the timeout (its bits), and whether it
/// serves many sites (`discover_many`: idle connections closed after 2 s, as the CLI's `--sites`).
type FetcherKey = (Option<u64>, Option<u64>, bool);

/// Fetchers kept at most: options are few in practice; past this the cache starts again.
const MAX_FETCHERS: usize = 16;

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

/// The process's shared HTTP state, made (again, after a fork) when needed; `f` runs under its lock.
fn shared<T>(f: impl FnOnce(&mut Shared) -> PyResult<T>) -> PyResult<T> {
    // A panic while the lock was held left plain data: the state is still usable.
    let mut guard = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if guard.as_ref().is_none_or(|s| s.pid != pid) {
        if let Some(inherited) = guard.take() {
            std::mem::forget(inherited);
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("mapwright-io")
            .enable_all()
            .build()
            .map_err(|e| PyErr::from(io::Error::other(format!("cannot start the HTTP runtime: {e}"))))?;
        *guard = Some(Shared { pid, rt: Arc::new(rt), fetchers: HashMap::new() });
    }
    match guard.as_mut() {
        Some(s) => f(s),
        None => unreachable!("set above"),
    }
}

/// The runtime of every HTTP fetch and discovery of the process.
pub fn runtime() -> PyResult<Arc<tokio::runtime::Runtime>> {
    shared(|s| Ok(s.rt.clone()))
}

/// The process's HTTP client with the fetch crate's defaults and these options (`max_bytes`
/// also limits the bytes received), shared by every call that asks for the same.
pub fn fetcher(py: Python<'_>, max_bytes: Option<u64>, timeout: Option<f64>) -> PyResult<Fetcher> {
    shared_fetcher(py, max_bytes, timeout, false)
}

/// [`fetcher`] for many sites at once (`discover_many`): idle connections are closed after
/// 2 s, as the CLI's `discover --sites` does, since a site done is not asked again.
pub fn sites_fetcher(py: Python<'_>, max_bytes: Option<u64>, timeout: Option<f64>) -> PyResult<Fetcher> {
    shared_fetcher(py, max_bytes, timeout, true)
}

fn shared_fetcher(py: Python<'_>, max_bytes: Option<u64>, timeout: Option<f64>, many: bool) -> PyResult<Fetcher> {
    // The CLI's rule (the fetch crate's `seconds`): finite, positive, at most a day.
    let limit = match timeout {
        Some(t) => {
            Some(mapwright_fetch::config::seconds("timeout", t).map_err(|e| PyValueError::new_err(e.to_string()))?)
        }
        None => None,
    };
    let key = (max_bytes, timeout.map(f64::to_bits), many);
    shared(|s| {
        if let Some(f) = s.fetchers.get(&key) {
            return Ok(f.clone());
        }
        let mut config = mapwright_fetch::Config::default();
        if let Some(b) = max_bytes {
            config.max_bytes = b;
        }
        if let Some(t) = limit {
            config.timeout = t;
        }
        if many {
            config.pool_idle_timeout = std::time::Duration::from_secs(2);
        }
        let f = Fetcher::new(config).map_err(|e| errors::fetch_error(py, &e))?;
        if s.fetchers.len() >= MAX_FETCHERS {
            s.fetchers.clear();
        }
        s.fetchers.insert(key, f.clone());
        Ok(f)
    })
}

/// Remote sources opened, resolved and vouched for as the CLI does, on the package's runtime;
/// `timeout` bounds each request (seconds; the fetch crate's default, 120 s, when `None`).
pub fn opener(py: Python<'_>, max_bytes: Option<u64>, timeout: Option<f64>) -> PyResult<Opener> {
    Ok(Opener::new(runtime()?, fetcher(py, max_bytes, timeout)?))
}

/// A source opened on the caller's thread (so a missing file or an HTTP error status raises
/// from the call itself), ready to be read on another.
pub struct Opened {
    /// The bytes.
    pub input: Box<dyn BufRead + Send>,
    /// The name findings and reports use: the path, the URL, or `<bytes>` / `<file>`.
    pub name: String,
    /// The URL after redirects, for a remote source: its scope.
    pub final_url: Option<String>,
    /// What opened a remote source (for its children, and who vouches for it).
    pub opener: Option<Opener>,
    /// For a remote source, the next pages should it be an OAI-PMH answer.
    pub pager: Option<Arc<dyn mapwright_core::Pager>>,
}

/// Opens `source` of the kind the Python layer determined: `path`, `url`, `bytes` or `file`.
pub fn open(
    py: Python<'_>,
    kind: &str,
    source: &Bound<'_, PyAny>,
    max_bytes: Option<u64>,
    timeout: Option<f64>,
) -> PyResult<Opened> {
    match kind {
        "path" => {
            let path: std::path::PathBuf = source.extract()?;
            let file = File::open(&path)
                .map_err(|e| PyErr::from(io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display()))))?;
            let name = path.display().to_string();
            Ok(Opened {
                input: Box::new(BufReader::with_capacity(BUF, file)),
                name,
                final_url: None,
                opener: None,
                pager: None,
            })
        }
        "bytes" => {
            // bytes, bytearray and memoryview: one copy, so the reader thread owns its input.
            let data: Vec<u8> = match source.cast::<PyBytes>() {
                Ok(b) => b.as_bytes().to_vec(),
                Err(_) => py
                    .import("builtins")?
                    .getattr("bytes")?
                    .call1((source,))?
                    .cast_into::<PyBytes>()?
                    .as_bytes()
                    .to_vec(),
            };
            Ok(Opened {
                input: Box::new(Cursor::new(data)),
                name: "<bytes>".into(),
                final_url: None,
                opener: None,
                pager: None,
            })
        }
        "file" => {
            let name = source
                .getattr("name")
                .ok()
                .and_then(|n| n.extract::<String>().ok())
                .unwrap_or_else(|| "<file>".to_string());
            let reader = PyFileReader { file: source.clone().unbind() };
            Ok(Opened {
                input: Box::new(BufReader::with_capacity(BUF, reader)),
                name,
                final_url: None,
                opener: None,
                pager: None,
            })
        }
        "url" => {
            let url: String = source.extract()?;
            let opener = opener(py, max_bytes, timeout)?;
            let body = py.detach(|| opener.open(&url)).map_err(|e| errors::fetch_error(py, &e))?;
            let final_url = Some(body.final_url.clone());
            let pager = Some(body.pager.clone());
            Ok(Opened { input: Box::new(body), name: url, final_url, opener: Some(opener), pager })
        }
        other => Err(PyTypeError::new_err(format!("unknown source kind {other:?}"))),
    }
}

/// A Python binary file object as a `Read`: each read takes the GIL for one `read(n)` call.
struct PyFileReader {
    file: Py<PyAny>,
}

impl Read for PyFileReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let chunk =
                self.file.call_method1(py, "read", (buf.len(),)).map_err(|e| io::Error::other(e.to_string()))?;
            let chunk = chunk.bind(py);
            let bytes = chunk.cast::<PyBytes>().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the file object's read() did not return bytes: open it in binary mode ('rb')",
                )
            })?;
            let data = bytes.as_bytes();
            if data.len() > buf.len() {
                return Err(io::Error::other("the file object's read(n) returned more than n bytes"));
            }
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }
}
