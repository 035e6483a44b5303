//! `mapwright.discover_many`: many sites through the fetch crate's `run_sites`, the engine of
//! the CLI's `discover --sites`, their URLs as `pyarrow.RecordBatch`es of the fetch crate's
//! `rows` schema (the columns of the CLI's Parquet). Rows are built into Arrow buffers without
//! the GIL, and handed to pyarrow through the Arrow C data interface (the PyCapsule protocol):
//! no copy and no Python object per row, so one call per partition of a distributed engine
//! (Dask, Spark's `mapInArrow`) keeps its worker's other threads running.

use crate::discover::config;
use crate::errors::{self, OnPartial};
use crate::input::{self, runtime};
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, to_ffi};
use arrow_array::{Array, StructArray};
use mapwright_fetch::rows::{Columns, RowBuilder};
use mapwright_fetch::{Event, SiteEvent, SiteSummary, run_sites, site_of};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CString;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// What is known of the sites done.
#[derive(Default)]
struct Tally {
    /// Each site's summary (the CLI's `--summary` line), as JSON.
    summaries: Vec<String>,
    /// `(site, why)` of the sites that failed, as the CLI's summary judges them.
    failed: Vec<(String, String)>,
    /// Rows built.
    rows: u64,
}

/// The iterator `mapwright.discover_many` returns: `pyarrow.RecordBatch`es of URL rows (`loc`,
/// `lastmod`, `changefreq`, `priority`, `images`, `videos`, `news`, `alternates`, `geo`,
/// `pagemap`, `sitemap`, `site`, and with `errors="rows"` `errors`, the rows of failures);
/// `summaries` holds one dict per site done.
#[pyclass(module = "mapwright")]
pub struct SiteBatches {
    rx: Option<mpsc::Receiver<SiteEvent>>,
    job: Option<tokio::task::JoinHandle<()>>,
    rows: RowBuilder,
    tally: Tally,
    on_partial: OnPartial,
    finished: bool,
}

/// Takes events (without the GIL) until a batch is full (false) or every site is done (true).
fn pump(rx: &mut mpsc::Receiver<SiteEvent>, rows: &mut RowBuilder, tally: &mut Tally) -> bool {
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
                if !s.ok {
                    let why = s.error.clone().unwrap_or_else(|| format!("the discovery ended: {}", s.ended));
                    // With errors="rows" (else a no-op): a row per sitemap that failed, or one
                    // for the site when it failed as a whole (no sitemap, the deadline).
                    match result.as_ref().map(|r| r.failed.as_slice()) {
                        Ok(failed) if !failed.is_empty() => {
                            failed.iter().for_each(|(sitemap, w)| rows.push_error(Some(sitemap.as_str()), &site, w));
                        }
                        _ => rows.push_error(None, &site, &why),
                    }
                    tally.failed.push((site.to_string(), why));
                }
                // A summary is plain data: serialising it cannot fail.
                tally.summaries.push(serde_json::to_string(&s).unwrap_or_default());
            }
        }
    }
}

impl SiteBatches {
    /// Every site is done: waits for the engine, then raises (or warns) for the sites that
    /// failed, as the package's failure model says.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(job) = self.job.take() {
            let rt = runtime()?;
            if let Err(e) = py.detach(|| rt.block_on(job)) {
                return Err(errors::plain(py, format!("the discovery stopped: {e}")));
            }
        }
        let failed = &self.tally.failed;
        if failed.is_empty() {
            return Ok(());
        }
        if self.tally.rows == 0 {
            // Nothing readable: never an empty result over a failure, whatever `errors=`.
            let (site, why) = &failed[0];
            let msg = format!(
                "no site gave a URL: {} of {} failed; the first, {site}: {why}",
                failed.len(),
                self.tally.summaries.len()
            );
            let err = errors::plain_at::<errors::FetchError>(py, msg, Some(site.as_str()));
            let _ = err.value(py).setattr("failed", failed.clone());
            return Err(err);
        }
        errors::partial(py, self.on_partial, "discover_many", None, failed, None)
    }
}

impl Drop for SiteBatches {
    fn drop(&mut self) {
        // An iterator dropped early stops its discovery.
        if let Some(job) = self.job.take() {
            job.abort();
        }
    }
}

#[pymethods]
impl SiteBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.finished {
            return Ok(None);
        }
        let ended = match self.rx.as_mut() {
            Some(rx) => {
                let (rows, tally) = (&mut self.rows, &mut self.tally);
                py.detach(|| pump(rx, rows, tally))
            }
            None => true,
        };
        if ended {
            self.rx = None;
        }
        if !self.rows.is_empty() {
            let batch = self.rows.finish().map_err(|e| errors::plain(py, format!("cannot build the rows: {e}")))?;
            return to_pyarrow(py, StructArray::from(batch)).map(Some);
        }
        self.finished = true;
        self.finish(py)?;
        Ok(None)
    }

    /// One dict per site done, the CLI's `--summary` line: `site`, `ok`, `ended`
    /// (`complete`, `no-sitemap`, `no-urls`, ...), `error`, `sitemaps`, `urls`, `bytes`,
    /// `seconds`, `failures`...
    #[getter]
    fn summaries<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let json = py.import("json")?;
        self.tally.summaries.iter().map(|s| json.call_method1("loads", (s,))).collect()
    }

    /// The batches' schema as a `pyarrow.Schema` (for an empty partition's table:
    /// `pa.Table.from_batches(batches, schema=batches.schema)`).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let schema = FFI_ArrowSchema::try_from(self.rows.schema().as_ref())
            .map_err(|e| errors::plain(py, format!("cannot export the schema: {e}")))?;
        let export = Bound::new(py, ArrowExport::new(schema, None))?;
        py.import("pyarrow")?.call_method1("schema", (export,))
    }

    /// Rows yielded so far (and built for the next batch).
    #[getter]
    fn rows(&self) -> u64 {
        self.tally.rows
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
#[pyo3(signature = (sites, hosts_in_flight=64, per_host=None, max_depth=None, max_sitemaps=None, max_urls=None, max_bytes=None, scope=true, cross_submission=true, timeout=None, errors="raise"))]
#[allow(clippy::too_many_arguments)]
pub fn start_discover_many(
    py: Python<'_>,
    sites: Vec<String>,
    hosts_in_flight: usize,
    per_host: Option<usize>,
    max_depth: Option<usize>,
    max_sitemaps: Option<usize>,
    max_urls: Option<u64>,
    max_bytes: Option<u64>,
    scope: bool,
    cross_submission: bool,
    timeout: Option<f64>,
    errors: &str,
) -> PyResult<SiteBatches> {
    let on_partial = OnPartial::parse(errors)?;
    // Each site bounded in time as the CLI's --sites is by default: a host that trickles bytes
    // never holds a partition's slot for hours.
    let config = mapwright_fetch::DiscoverConfig {
        site_deadline: Some(mapwright_fetch::DEFAULT_SITE_DEADLINE),
        ..config(per_host, max_depth, max_sitemaps, max_urls, max_bytes, scope, cross_submission)
    };
    let fetcher = input::sites_fetcher(py, max_bytes, timeout)?;
    let sites: Vec<Arc<str>> = sites.iter().map(String::as_str).filter_map(site_of).map(Arc::from).collect();
    let in_flight = hosts_in_flight.max(1);
    let (site_tx, site_rx) = mpsc::channel(in_flight);
    // A few batches of events in flight: the consumer's pace is the discovery's.
    let (tx, rx) = mpsc::channel(64);
    let job = runtime()?.spawn(async move {
        let feed = async move {
            for s in sites {
                if site_tx.send(s).await.is_err() {
                    return; // the run stopped
                }
            }
        };
        tokio::join!(feed, run_sites(fetcher, config, in_flight, site_rx, tx));
    });
    Ok(SiteBatches {
        rx: Some(rx),
        job: Some(job),
        rows: RowBuilder::new(Columns::SITES.with_errors(on_partial == OnPartial::Rows)),
        tally: Tally::default(),
        on_partial,
        finished: false,
    })
}
