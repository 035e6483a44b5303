//! `mapwright.validate`: the core's validator over one source (and, with `follow`, the
//! children an index lists, fetched over HTTP), run without the GIL.

use crate::convert::{PyFinding, json_to_py};
use crate::input::{self, Opened};
use mapwright_core::read::Input;
use mapwright_core::validate::{Config, Report, Resolver, Validator, validate_tree};
use mapwright_core::{Limits, Loc, ReadOptions, Voucher};
use mapwright_fetch::RemoteResolver;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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
        // Alike on purpose: discover.rs and write.rs build their summaries so (see write.rs).
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
#[pyo3(signature = (kind, source, url=None, follow=false, max_bytes=None, timeout=None))]
pub fn validate_source(
    py: Python<'_>,
    kind: &str,
    source: &Bound<'_, PyAny>,
    url: Option<String>,
    follow: bool,
    max_bytes: Option<u64>,
    timeout: Option<f64>,
) -> PyResult<PyReport> {
    let Opened { input, name, final_url, opener, pager } = input::open(py, kind, source, max_bytes, timeout)?;
    let url = url.or(final_url.clone());
    let sitemap_url = match &url {
        Some(u) => Some(Loc::parse(u).map_err(|e| PyValueError::new_err(format!("url {u:?}: {e}")))?),
        None => None,
    };
    let mut limits = Limits::default();
    if let Some(b) = max_bytes {
        limits.max_bytes = b;
    }
    // Who vouches (PROTOCOL.md section 5): for a URL, its host's robots.txt when it names the
    // sitemap (asked as the CLI and discovery ask it), else nobody.
    let voucher = match (&opener, &final_url) {
        (Some(o), Some(f)) => py.detach(|| o.voucher(&name, f)),
        _ => Voucher::Nobody,
    };
    let validator =
        Validator::new(Config { sitemap_url, voucher, read: ReadOptions { limits }, pager, ..Config::default() });
    // An index's children are fetched (over HTTP, whatever the index's own source).
    let mut resolver = match (follow, opener) {
        (false, _) => None,
        (true, Some(o)) => Some(RemoteResolver::new(o)),
        (true, None) => Some(RemoteResolver::new(input::opener(py, max_bytes, timeout)?)),
    };
    let (report, failed) = py.detach(move || {
        let mut report = Report::new();
        let failed = validate_tree(
            &validator,
            &name,
            Input::owned(input),
            resolver.as_mut().map(|r| r as &mut dyn Resolver),
            &mut report,
        );
        (report, failed)
    });
    let failed = failed.into_iter().map(|(n, e)| (n, e.to_string())).collect();
    Ok(PyReport { report, failed })
}
