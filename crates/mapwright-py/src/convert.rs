//! The Python faces of the core's values: `Entry` (attributes built when asked for, so
//! iterating costs one small object per entry) and `Finding`.

use mapwright_core::date::{Precision, Tz};
use mapwright_core::{Entry, Finding, Lastmod};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::sync::Arc;

/// One entry of a sitemap: a page (`kind == "url"`) or, in an index, a child sitemap
/// (`kind == "sitemap"`).
#[pyclass(frozen, name = "Entry", module = "mapwright")]
pub struct PyEntry {
    pub inner: Entry,
    /// The sitemap it came from, where known (discovery, or `read(url=...)`).
    pub sitemap: Option<Arc<str>>,
}

impl PyEntry {
    pub fn new(inner: Entry, sitemap: Option<Arc<str>>) -> Self {
        PyEntry { inner, sitemap }
    }
}

/// A `priority` as the shortest decimal that reads back as the same `f32` (0.8, not
/// 0.800000011920929), as the CLI's JSON prints it.
///
/// Formatting and parsing again cost about 900 instructions, once per row of `to_pandas`;
/// almost every priority has one or two decimals, answered here by arithmetic. When `k/10`
/// (or `k/100`) read as an `f32` is `p` (the `f32` division of exact integers is correctly
/// rounded, as parsing "0.k" is), that decimal round-trips, and it is the shortest (and only
/// such) one, since `f32` steps below 1 are far finer than 0.01; `k as f64 / 10.0` is then
/// the correctly rounded `f64` of it, which is what parsing its text gives. Anything else
/// goes the long way.
pub fn priority_f64(p: f32) -> f64 {
    if (0.0..=1.0).contains(&p) {
        for d in [10.0f32, 100.0] {
            let k = (p * d).round();
            if k / d == p {
                return f64::from(k) / f64::from(d);
            }
        }
    }
    p.to_string().parse().unwrap_or(p as f64)
}

/// A `serde_json` value as the equal Python value.
pub fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(json_to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// An extension value as the CLI's JSON gives it: through the JSON text, so an `f32` such as a
/// video's rating is its shortest decimal (4.2), not the widened `f64` (4.199999809265137).
fn serde_to_py<'py, T: serde::Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    let err = |e: serde_json::Error| pyo3::exceptions::PyValueError::new_err(e.to_string());
    let value: serde_json::Value = serde_json::from_str(&serde_json::to_string(v).map_err(err)?).map_err(err)?;
    json_to_py(py, &value)
}

/// A `lastmod` as Python sees it: a `date` for a day, a timezone-aware `datetime` for a time
/// (a time written without a zone is read as UTC, as search engines do), the text as written
/// for a year or a month alone (no `date` is that vague) or a value Python cannot hold.
pub fn lastmod_to_py<'py>(py: Python<'py>, l: &Lastmod) -> PyResult<Bound<'py, PyAny>> {
    let v = l.value();
    let text = || Ok(PyString::new(py, &l.to_string()).into_any());
    let dt = py.import("datetime")?;
    let built = match v.precision {
        Precision::Year | Precision::Month => return text(),
        Precision::Day => dt.getattr("date")?.call1((v.year, v.month, v.day)),
        Precision::Minute | Precision::Second | Precision::Fraction => {
            let tz_mod = dt.getattr("timezone")?;
            let tz = match v.tz {
                None | Some(Tz::Utc) => tz_mod.getattr("utc")?,
                Some(Tz::Offset(m)) => tz_mod.call1((dt.getattr("timedelta")?.call1((0, i32::from(m) * 60))?,))?,
            };
            dt.getattr("datetime")?.call1((
                v.year,
                v.month,
                v.day,
                v.hour,
                v.minute,
                v.second.min(59),
                v.nanos / 1000,
                tz,
            ))
        }
    };
    match built {
        Ok(b) => Ok(b),
        // Year 0, a 31st of February that the lenient reader let through: keep the text.
        Err(_) => text(),
    }
}

#[pymethods]
impl PyEntry {
    /// `"url"` for a page, `"sitemap"` for an index's child.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            Entry::Url(_) => "url",
            Entry::Sitemap(_) => "sitemap",
        }
    }

    /// The URL as the file wrote it (entities decoded, surrounding white space trimmed), so
    /// joins with data keyed by the URL as written find it.
    #[getter]
    fn loc(&self) -> &str {
        self.inner.loc().written()
    }

    /// The URL in its normal form (`url`'s serialization: scheme and host lower-cased, default
    /// port dropped, `/` after a bare origin, dot segments resolved): what scope and
    /// deduplication compare.
    #[getter]
    fn loc_normalized(&self) -> &str {
        self.inner.loc().as_str()
    }

    /// `datetime` (timezone-aware) or `date` when the value is one, else the text; `None` when absent.
    #[getter]
    fn lastmod<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.lastmod().map(|l| lastmod_to_py(py, l)).transpose()
    }

    /// The `lastmod` text as written (as the CLI's JSON gives it).
    #[getter]
    fn lastmod_text(&self) -> Option<String> {
        self.inner.lastmod().map(|l| l.to_string())
    }

    /// One of `always`, `hourly`, `daily`, `weekly`, `monthly`, `yearly`, `never`, or `None`.
    #[getter]
    fn changefreq(&self) -> Option<&'static str> {
        match &self.inner {
            Entry::Url(u) => u.changefreq.map(|c| c.as_str()),
            Entry::Sitemap(_) => None,
        }
    }

    /// 0.0 to 1.0, or `None`.
    #[getter]
    fn priority(&self) -> Option<f64> {
        match &self.inner {
            Entry::Url(u) => u.priority.map(priority_f64),
            Entry::Sitemap(_) => None,
        }
    }

    /// Image extension entries, as dicts (`loc`, `caption`, `title`, `geo_location`, `license`).
    #[getter]
    fn images<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().images),
            Entry::Sitemap(_) => Ok(PyList::empty(py).into_any()),
        }
    }

    /// Video extension entries, as dicts named as the CLI's JSON names them.
    #[getter]
    fn videos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().videos),
            Entry::Sitemap(_) => Ok(PyList::empty(py).into_any()),
        }
    }

    /// The news extension, as a dict, or `None`.
    #[getter]
    fn news<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().news),
            Entry::Sitemap(_) => Ok(py.None().into_bound(py)),
        }
    }

    /// hreflang alternates, as dicts `{"hreflang": ..., "href": ...}`.
    #[getter]
    fn alternates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().alternates),
            Entry::Sitemap(_) => Ok(PyList::empty(py).into_any()),
        }
    }

    /// Google's geo extension, as a dict (`format`), or `None`.
    #[getter]
    fn geo<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().geo),
            Entry::Sitemap(_) => Ok(py.None().into_bound(py)),
        }
    }

    /// PageMap data objects, as dicts (`type`, `id`, `attributes`: a list of `{"name", "value"}`).
    #[getter]
    fn pagemap<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Entry::Url(u) => serde_to_py(py, &u.ext().pagemap),
            Entry::Sitemap(_) => Ok(PyList::empty(py).into_any()),
        }
    }

    /// The sitemap this entry came from, when known (`discover`, or `read` of a URL).
    #[getter]
    fn sitemap(&self) -> Option<&str> {
        self.sitemap.as_deref()
    }

    /// The entry as a dict with the keys of the CLI's `read --format jsonl` (`lastmod` as text).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", self.kind())?;
        d.set_item("loc", self.loc())?;
        d.set_item("lastmod", self.lastmod_text())?;
        d.set_item("changefreq", self.changefreq())?;
        d.set_item("priority", self.priority())?;
        if let Entry::Url(u) = &self.inner {
            d.set_item("images", self.images(py)?)?;
            d.set_item("videos", self.videos(py)?)?;
            d.set_item("news", self.news(py)?)?;
            d.set_item("alternates", self.alternates(py)?)?;
            // As the CLI's row: only when there.
            if u.ext().geo.is_some() {
                d.set_item("geo", self.geo(py)?)?;
            }
            if !u.ext().pagemap.is_empty() {
                d.set_item("pagemap", self.pagemap(py)?)?;
            }
        }
        Ok(d)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyEntry>().is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __repr__(&self) -> String {
        let mut s = format!("Entry(kind='{}', loc='{}'", self.kind(), self.loc());
        if let Some(l) = self.lastmod_text() {
            s.push_str(&format!(", lastmod='{l}'"));
        }
        if let Some(c) = self.changefreq() {
            s.push_str(&format!(", changefreq='{c}'"));
        }
        if let Some(p) = self.priority() {
            s.push_str(&format!(", priority={p}"));
        }
        s.push(')');
        s
    }
}

/// One diagnostic: a rule broken, or a repair made, at a place.
#[pyclass(frozen, name = "Finding", module = "mapwright")]
pub struct PyFinding {
    /// The catalogue's rule name (`docs/RULES.md`).
    #[pyo3(get)]
    rule: &'static str,
    /// `error`, `warning` or `info`.
    #[pyo3(get)]
    severity: &'static str,
    /// 1-based line, or `None` for a finding about the whole file.
    #[pyo3(get)]
    line: Option<u32>,
    /// 1-based column in bytes, or `None`.
    #[pyo3(get)]
    column: Option<u32>,
    /// 0-based byte offset in the uncompressed input, or `None`.
    #[pyo3(get)]
    offset: Option<u64>,
    /// The entry's `loc`, if the finding is about one.
    #[pyo3(get)]
    loc: Option<String>,
    /// What is wrong and what to write instead.
    #[pyo3(get)]
    message: String,
    /// The file (path, URL or `<bytes>`) the finding is in.
    #[pyo3(get)]
    file: String,
}

impl PyFinding {
    pub fn new(file: &str, f: Finding) -> Self {
        PyFinding {
            rule: f.rule.as_str(),
            severity: f.severity().as_str(),
            line: f.position.map(|p| p.line),
            column: f.position.map(|p| p.column),
            offset: f.position.map(|p| p.offset),
            loc: f.loc,
            message: f.message,
            file: file.to_string(),
        }
    }

    pub fn from_report(f: &mapwright_core::validate::ReportFinding) -> Self {
        PyFinding {
            rule: f.rule.as_str(),
            severity: f.severity.as_str(),
            line: f.positioned.then_some(f.line),
            column: f.positioned.then_some(f.column),
            offset: None,
            loc: f.loc.clone(),
            message: f.message.clone(),
            file: f.file.clone(),
        }
    }
}

#[pymethods]
impl PyFinding {
    /// As the CLI prints it: `file:line:column: severity[rule]: message`.
    fn __str__(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}[{}]: {}", self.file, self.severity, self.rule, self.message),
            _ => format!("{}: {}[{}]: {}", self.file, self.severity, self.rule, self.message),
        }
    }

    fn __repr__(&self) -> String {
        let num = |n: Option<u32>| n.map_or_else(|| "None".to_string(), |n| n.to_string());
        format!(
            "Finding(rule='{}', severity='{}', line={}, column={}, message={:?})",
            self.rule,
            self.severity,
            num(self.line),
            num(self.column),
            self.message
        )
    }
}
