//! `mapwright.validate`: the core's validator over one source (and, with `follow`, the
//! children an index lists, fetched over HTTP), run without the GIL.

use crate::convert::{PyFinding, json_to_py};
use crate::input::{self, Opened, fetch_blocking, runtime};
use mapwright_core::validate::{Config, Opened as Child, Report, Resolver, Validator, validate_tree};
use mapwright_core::{Limits, Loc, ReadOptions};
use mapwright_fetch::Fetcher;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io;

/// Fetches an index's children.
struct HttpResolver<'a> {
    rt: &'a tokio::runtime::Runtime,
    fetcher: Fetcher,
}

impl Resolver for HttpResolver<'_> {
    fn open(&mut self, url: &Loc) -> io::Result<Child<'_>> {
        match fetch_blocking(self.rt, &self.fetcher, url.as_str()) {
            Ok((body, _, _)) => Ok(Child::Source { name: url.to_string(), input: Box::new(body) }),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }
}

/// The result of `mapwright.validate`: `findings`, `summary`, `to_sarif()`, `to_json()`.
#[pyclass(frozen, name = "Report", module = "mapwright")]
pub struct PyReport {
    report: Report,
    /// Sources that could not be read at all (a child that failed to download), as
    /// `(name, why)`: a report with any is not `ok`.
    #[pyo3(get)]
    failed: Vec<(String, String)>,
}

#[pymethods]
impl PyReport {
    /// Every finding kept, file after file, in file order.
    #[getter]
    fn findings(&self) -> Vec<PyFinding> {
        self.report.findings.iter().map(PyFinding::from_report).collect()
    }

    /// The totals: `files`, `entries`, `errors`, `warnings`, `infos`.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.report.summary;
        let d = PyDict::new(py);
        d.set_item("files", s.files)?;
        d.set_item("entries", s.entries)?;
        d.set_item("errors", s.errors)?;
        d.set_item("warnings", s.warnings)?;
        d.set_item("infos", s.infos)?;
        Ok(d)
    }

    /// Remarks that are no finding (a child not followed), as `(file, message)`.
    #[getter]
    fn notes(&self) -> Vec<(String, String)> {
        self.report.notes.clone()
    }

    /// True when no error was found and every source could be read.
    #[getter]
    fn ok(&self) -> bool {
        !self.report.has_errors() && self.failed.is_empty()
    }

    /// The SARIF 2.1.0 log, as a dict ready for `json.dump`, as `mapwright validate --format sarif` writes it.
    fn to_sarif<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &mapwright_core::validate::sarif(&self.report))
    }

    /// The JSON document of RULES.md (`findings` plus `summary`), as `mapwright validate --format json` prints it.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.report).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn __repr__(&self) -> String {
        let s = &self.report.summary;
        format!(
            "<mapwright.Report files={} entries={} errors={} warnings={} infos={}>",
            s.files, s.entries, s.errors, s.warnings, s.infos
        )
    }
}

/// Validates a source; the Python layer decides `kind`.
#[pyfunction]
#[pyo3(signature = (kind, source, url=None, follow=false, max_bytes=None))]
pub fn validate_source(
    py: Python<'_>,
    kind: &str,
    source: &Bound<'_, PyAny>,
    url: Option<String>,
    follow: bool,
    max_bytes: Option<u64>,
) -> PyResult<PyReport> {
    let Opened { input, name, final_url, pager } = input::open(py, kind, source, max_bytes)?;
    let url = url.or(final_url);
    let sitemap_url = match &url {
        Some(u) => Some(Loc::parse(u).map_err(|e| PyValueError::new_err(format!("url {u:?}: {e}")))?),
        None => None,
    };
    let mut limits = Limits::default();
    if let Some(b) = max_bytes {
        limits.max_bytes = b;
    }
    let validator = Validator::new(Config { sitemap_url, read: ReadOptions { limits }, pager, ..Config::default() });
    let mut resolver = if follow {
        Some(HttpResolver { rt: runtime()?, fetcher: input::fetcher(py, max_bytes, None)? })
    } else {
        None
    };
    let (report, failed) = py.detach(move || {
        let mut report = Report::new();
        let failed =
            validate_tree(&validator, &name, input, resolver.as_mut().map(|r| r as &mut dyn Resolver), &mut report);
        (report, failed)
    });
    let failed = failed.into_iter().map(|(n, e)| (n, e.to_string())).collect();
    Ok(PyReport { report, failed })
}
