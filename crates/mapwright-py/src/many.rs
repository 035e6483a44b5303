//! `mapwright.discover_many`: many sites through the fetch crate's `run_sites`, the engine of
//! the CLI's `discover --sites`, their URLs as Arrow record batches of the fetch crate's `rows`
//! schema (the columns of the CLI's Parquet). Rows are built into Arrow buffers without the GIL
//! and handed over through the Arrow PyCapsule interface: as `pyarrow.RecordBatch`es one at a
//! time (iterating), or as one Arrow C stream (`__arrow_c_stream__`) that pyarrow, polars and
//! DuckDB read directly, without a copy and without a Python object per row; so one call per
//! partition of a distributed engine (Dask, Spark's `mapInArrow`) keeps its worker's other
//! threads running.

use crate::errors::{self, OnPartial};
use crate::run::{self, Job, Options};
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, to_ffi};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, SchemaRef};
use mapwright_fetch::rows::{Columns, RowBuilder};
use mapwright_fetch::{Event, SiteEvent, SiteSummary, run_sites, site_of};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// What is known of the sites done.
#[derive(Default)]
struct Tally {
    /// Each site's summary (the CLI's `--summary` line), as JSON.
    summaries: Vec<String>,
    /// `(site, why)` of the sites that failed, as the CLI's summary judges them.
    failed: Vec<(String, String)>,
    /// Of those, the sites whose sitemaps were read but gave no URL (`no-urls`).
    no_urls: usize,
    /// Rows built.
    rows: u64,
}

/// How the run ended, once every site is done: judged without Python, so the Arrow stream (read
/// on any thread, perhaps without the GIL) and the iterator say the same.
enum End {
    /// Every site succeeded, or (`errors="rows"`) each failure is a row.
    Ok,
    /// No site gave a URL: `NoUrlError` when every failed site was read but listed none, else
    /// `FetchError`.
    Nothing { message: String, no_urls: bool, first: String },
    /// Some sites failed: `PartialSitemapError`, or a warning with `errors="warn"`.
    Partial,
}

/// The run and what it built so far; shared by the iterator and any Arrow stream handed out.
struct Pump {
    rx: Option<mpsc::Receiver<SiteEvent>>,
    job: Job<()>,
    rows: RowBuilder,
    tally: Tally,
    on_partial: OnPartial,
    /// The end was judged (and reported once).
    ended: bool,
}

impl Pump {
    /// Takes events until a batch is full (false) or every site is done (true).
    fn pump(&mut self) -> bool {
        let Some(rx) = self.rx.as_mut() else { return true };
        let done = Self::pump_into(rx, &mut self.rows, &mut self.tally);
        if done {
            self.rx = None;
        }
        done
    }

    fn pump_into(rx: &mut mpsc::Receiver<SiteEvent>, rows: &mut RowBuilder, tally: &mut Tally) -> bool {
        loop {
            match rx.blocking_recv() {
                None => return true,
                Some(SiteEvent::Event { site, event: Event::Urls { sitemap, urls }, .. }) => {
                    for u in &urls {
                        rows.push_url(u, &sitemap, &site);
                    }
                    tally.rows += urls.len() as u64;
                    if rows.is_full() {
                        return false;
                    }
                }
                // Findings and notices are the CLI's diagnostics; the summaries count what matters.
                Some(SiteEvent::Event { .. }) => {}
                Some(SiteEvent::Done { site, result, .. }) => {
                    let s = SiteSummary::of(&site, &result, false);
                    if let Some(why) = run::site_failure(&s) {
                        // With errors="rows" (else a no-op): a row per sitemap that failed, or
                        // one for the site when it failed as a whole (no sitemap, no URL, the
                        // deadline).
                        match result.as_ref().map(|r| r.failed.as_slice()) {
                            Ok(failed) if !failed.is_empty() => {
                                failed
                                    .iter()
                                    .for_each(|(sitemap, w)| rows.push_error(Some(sitemap.as_str()), &site, w));
                            }
                            _ => rows.push_error(None, &site, &why),
                        }
                        if run::no_urls(&s) && result.as_ref().is_ok_and(|r| r.failed.is_empty()) {
                            tally.no_urls += 1;
                            let summary = result.as_ref().ok();
                            tally.failed.push((site.to_string(), run::no_url_message(&site, &s, summary)));
                        } else {
                            tally.failed.push((site.to_string(), why));
                        }
                    }
                    // A summary is plain data: serialising it cannot fail.
                    tally.summaries.push(serde_json::to_string(&s).unwrap_or_default());
                }
            }
        }
    }

    /// The next batch, or `None` once every site is done (then the run is waited for).
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, String> {
        let done = self.pump();
        if !self.rows.is_empty() {
            return self.rows.finish().map(Some).map_err(|e| format!("cannot build the rows: {e}"));
        }
        if done {
            self.job.wait_blocking()?;
        }
        Ok(None)
    }

    /// The verdict on the run, once (`None` when it was given already).
    fn end(&mut self) -> Option<End> {
        if std::mem::replace(&mut self.ended, true) {
            return None;
        }
        let failed = &self.tally.failed;
        if failed.is_empty() || self.on_partial == OnPartial::Rows {
            // With errors="rows" every failure is a row, even when no site gave a URL: a
            // partition whose sites all failed is rows saying why, not a failed task.
            return Some(End::Ok);
        }
        if self.tally.rows == 0 {
            let (site, why) = &failed[0];
            let message = format!(
                "no site gave a URL: {} of {} failed; the first, {}",
                failed.len(),
                self.tally.summaries.len(),
                if why.starts_with(site.as_str()) { why.clone() } else { format!("{site}: {why}") }
            );
            return Some(End::Nothing { message, no_urls: self.tally.no_urls == failed.len(), first: site.clone() });
        }
        Some(End::Partial)
    }
}

/// The iterator `mapwright.discover_many` returns: `pyarrow.RecordBatch`es of URL rows (`loc`,
/// `lastmod`, `changefreq`, `priority`, `images`, `videos`, `news`, `alternates`, `geo`,
/// `pagemap`, `sitemap`, `site`, and with `errors="rows"` `errors`, the rows of failures), or
/// one Arrow C stream of them (`__arrow_c_stream__`: `pa.table(it)`, `pl.DataFrame(it)`,
/// DuckDB's `FROM it`); `summaries` holds one dict per site done.
#[pyclass(module = "mapwright")]
pub struct SiteBatches {
    pump: Arc<Mutex<Pump>>,
    schema: SchemaRef,
}

impl SiteBatches {
    fn lock(&self) -> MutexGuard<'_, Pump> {
        // A panic while the lock was held left plain data: still usable.
        self.pump.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Raises (or warns) for the sites that failed, as the package's failure model says.
    fn report(&self, py: Python<'_>, end: End) -> PyResult<()> {
        match end {
            End::Ok => Ok(()),
            End::Nothing { message, no_urls, first } => {
                let err = if no_urls {
                    errors::plain_at::<errors::NoUrlError>(py, message, Some(first.as_str()))
                } else {
                    errors::plain_at::<errors::FetchError>(py, message, Some(first.as_str()))
                };
                let _ = err.value(py).setattr("failed", self.lock().tally.failed.clone());
                Err(err)
            }
            End::Partial => {
                let (on, failed) = {
                    let p = self.lock();
                    (p.on_partial, p.tally.failed.clone())
                };
                errors::partial(py, on, "discover_many", None, &failed, None)
            }
        }
    }
}

#[pymethods]
impl SiteBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let pump = self.pump.clone();
        let (next, end) = py.detach(move || {
            let mut p = pump.lock().unwrap_or_else(|e| e.into_inner());
            match p.next_batch() {
                Ok(Some(b)) => (Ok(Some(b)), None),
                Ok(None) => (Ok(None), p.end()),
                Err(e) => (Err(e), None),
            }
        });
        match next.map_err(|e| errors::plain(py, e))? {
            Some(batch) => to_pyarrow(py, StructArray::from(batch)).map(Some),
            None => {
                if let Some(end) = end {
                    self.report(py, end)?;
                }
                Ok(None)
            }
        }
    }

    /// The Arrow PyCapsule stream interface: the batches not yet taken, as one
    /// `ArrowArrayStream` read without the GIL and without a copy (`pa.table(it)`,
    /// `pa.RecordBatchReader.from_stream(it)`, `pl.DataFrame(it)`, DuckDB's `FROM it`). The
    /// batches are taken once, whichever way (a stream asked for again continues where the
    /// last left off). At the end, a failure the iterator would raise is the stream's error
    /// (the engine raises it with this package's message); `errors="warn"` warns.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The rows have one schema; a consumer that wants another casts.
        let _ = requested_schema;
        let stream = Stream { pump: self.pump.clone(), schema: self.schema.clone() };
        let ffi = FFI_ArrowArrayStream::new(Box::new(stream));
        PyCapsule::new(py, ffi, Some(CString::from(c"arrow_array_stream")))
    }

    /// One dict per site done, the CLI's `--summary` line: `site`, `ok`, `ended`
    /// (`complete`, `no-sitemap`, `no-urls`, ...), `error`, `sitemaps`, `urls`, `bytes`,
    /// `seconds`, `failures`...
    #[getter]
    fn summaries<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let json = py.import("json")?;
        let lines = self.lock().tally.summaries.clone();
        lines.iter().map(|s| json.call_method1("loads", (s,))).collect()
    }

    /// `(site, why)` of the sites that failed so far, as the CLI's summary judges them.
    #[getter]
    fn failed(&self) -> Vec<(String, String)> {
        self.lock().tally.failed.clone()
    }

    /// The batches' schema as a `pyarrow.Schema` (for an empty partition's table:
    /// `pa.Table.from_batches(batches, schema=batches.schema)`).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| errors::plain(py, format!("cannot export the schema: {e}")))?;
        let export = Bound::new(py, ArrowExport::new(schema, None))?;
        py.import("pyarrow")?.call_method1("schema", (export,))
    }

    /// Rows yielded so far (and built for the next batch).
    #[getter]
    fn rows(&self) -> u64 {
        self.lock().tally.rows
    }
}

/// The batches as an Arrow C stream: each `get_next` pumps the shared run (on the consumer's
/// thread, without the GIL).
struct Stream {
    pump: Arc<Mutex<Pump>>,
    schema: SchemaRef,
}

impl Iterator for Stream {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut p = self.pump.lock().unwrap_or_else(|e| e.into_inner());
        match p.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Err(e) => Some(Err(ArrowError::ExternalError(e.into()))),
            Ok(None) => match p.end()? {
                End::Ok => None,
                End::Nothing { message, .. } => Some(Err(ArrowError::ExternalError(message.into()))),
                End::Partial if p.on_partial == OnPartial::Warn => {
                    let failed = p.tally.failed.clone();
                    drop(p);
                    // The warning is Python's: taken with the GIL (the consumer may hold it on
                    // this thread; taking it again there is allowed).
                    Python::attach(|py| {
                        if let Err(e) = errors::partial(py, OnPartial::Warn, "discover_many", None, &failed, None) {
                            e.restore(py); // a warning turned into an error: Python's to raise
                        }
                    });
                    None
                }
                End::Partial => {
                    let failed = &p.tally.failed;
                    let shown: Vec<String> = failed.iter().take(3).map(|(s, w)| format!("{s}: {w}")).collect();
                    let msg = format!(
                        "discover_many: {} sites could not be read: {}{}",
                        failed.len(),
                        shown.join("; "),
                        if failed.len() > 3 { "; ..." } else { "" }
                    );
                    Some(Err(ArrowError::ExternalError(msg.into())))
                }
            },
        }
    }
}

impl RecordBatchReader for Stream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// One batch (or a schema) on its way to pyarrow: `pyarrow.record_batch` calls
/// `__arrow_c_array__` (`pyarrow.schema`, `__arrow_c_schema__`) and moves the structs out of
/// the capsules (a capsule not consumed releases its own).
#[pyclass(module = "mapwright")]
struct ArrowExport {
    // A Mutex: the schema struct is `Send` but not `Sync`, which a Python object must be.
    schema: Mutex<Option<FFI_ArrowSchema>>,
    array: Option<FFI_ArrowArray>,
}

impl ArrowExport {
    fn new(schema: FFI_ArrowSchema, array: Option<FFI_ArrowArray>) -> Self {
        ArrowExport { schema: Mutex::new(Some(schema)), array }
    }

    fn take_schema(&mut self) -> Option<FFI_ArrowSchema> {
        self.schema.get_mut().ok().and_then(Option::take)
    }
}

#[pymethods]
impl ArrowExport {
    /// The Arrow PyCapsule interface of a schema, once.
    fn __arrow_c_schema__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let Some(schema) = self.take_schema() else {
            return Err(errors::plain(py, "this schema was handed over already"));
        };
        PyCapsule::new(py, schema, Some(CString::from(c"arrow_schema")))
    }

    /// The Arrow PyCapsule interface: the schema and the array, once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        // The rows have one schema; a consumer that wants another casts.
        let _ = requested_schema;
        let (Some(schema), Some(array)) = (self.take_schema(), self.array.take()) else {
            return Err(errors::plain(py, "this batch was handed over already"));
        };
        Ok((
            PyCapsule::new(py, schema, Some(CString::from(c"arrow_schema")))?,
            PyCapsule::new(py, array, Some(CString::from(c"arrow_array")))?,
        ))
    }
}

/// A batch (as the struct array of its columns) as a `pyarrow.RecordBatch`, without a copy.
fn to_pyarrow<'py>(py: Python<'py>, rows: StructArray) -> PyResult<Bound<'py, PyAny>> {
    let (array, schema) =
        to_ffi(&rows.to_data()).map_err(|e| errors::plain(py, format!("cannot export the rows: {e}")))?;
    let export = Bound::new(py, ArrowExport::new(schema, Some(array)))?;
    py.import("pyarrow")?.call_method1("record_batch", (export,))
}

/// Starts the discovery of `sites` (lines of a list: blank and `#` lines skipped, `https://`
/// assumed, as `discover --sites` reads them), `hosts_in_flight` at a time.
#[pyfunction]
pub fn start_discover_many(
    py: Python<'_>,
    sites: Vec<String>,
    hosts_in_flight: usize,
    options: Options,
) -> PyResult<SiteBatches> {
    let on_partial = options.on_partial()?;
    // Each site bounded in time as the CLI's --sites is by default: a host that trickles bytes
    // never holds a partition's slot for hours.
    let config = mapwright_fetch::DiscoverConfig {
        site_deadline: Some(mapwright_fetch::DEFAULT_SITE_DEADLINE),
        ..options.config()
    };
    let fetcher = options.fetcher(py, true)?;
    let sites: Vec<Arc<str>> = sites.iter().map(String::as_str).filter_map(site_of).map(Arc::from).collect();
    let in_flight = hosts_in_flight.max(1);
    let (site_tx, site_rx) = mpsc::channel(in_flight);
    // A few batches of events in flight: the consumer's pace is the discovery's.
    let (tx, rx) = mpsc::channel(64);
    let job = Job::spawn(async move {
        let feed = async move {
            for s in sites {
                if site_tx.send(s).await.is_err() {
                    return; // the run stopped
                }
            }
        };
        tokio::join!(feed, run_sites(fetcher, config, in_flight, site_rx, tx));
    })?;
    let rows = RowBuilder::new(Columns::SITES.with_errors(on_partial == OnPartial::Rows));
    let schema = rows.schema();
    let pump = Pump { rx: Some(rx), job, rows, tally: Tally::default(), on_partial, ended: false };
    Ok(SiteBatches { pump: Arc::new(Mutex::new(pump)), schema })
}
