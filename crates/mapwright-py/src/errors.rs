//! The package's exceptions: one base, `SitemapError`, so `except mapwright.SitemapError`
//! catches every failure of a read; subclasses say which kind, and every one carries the
//! position the CLI prints (`line`, `column`, `offset`) and the catalogue rule it breaks.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    mapwright,
    SitemapError,
    PyException,
    "A sitemap could not be read, fetched or written; `rule`, `line`, `column` and `offset` say where."
);
create_exception!(mapwright, MalformedSitemapError, SitemapError, "Not well-formed XML that no repair can read past.");
create_exception!(
    mapwright,
    SitemapEncodingError,
    SitemapError,
    "Bytes that are not valid in the document's encoding."
);
create_exception!(
    mapwright,
    SitemapTooLargeError,
    SitemapError,
    "More uncompressed bytes than the limit (a gzip bomb stops here)."
);
create_exception!(mapwright, GzipError, SitemapError, "A gzip stream that does not decompress to its end.");
create_exception!(mapwright, NotASitemapError, SitemapError, "The document is no sitemap in any format.");
create_exception!(mapwright, FetchError, SitemapError, "An HTTP fetch failed (status, timeout, refused address).");
create_exception!(mapwright, WriteError, SitemapError, "A sitemap set could not be written.");
create_exception!(
    mapwright,
    NoUrlError,
    SitemapError,
    "Sitemaps were read but gave no URL: every URL was out of scope, every entry was skipped (a relative or invalid <loc>), or a site's sitemaps list none; the message says which."
);
create_exception!(
    mapwright,
    PartialSitemapError,
    SitemapError,
    "Some sitemaps were read and others not (an index's child failed, a file broke after some entries): `failed` lists them, `frame` holds what was read."
);

create_exception!(
    mapwright,
    PartialSitemapWarning,
    pyo3::exceptions::PyUserWarning,
    "With errors=\"warn\": some sitemaps could not be read; the result holds the others."
);

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SitemapError", py.get_type::<SitemapError>())?;
    m.add("MalformedSitemapError", py.get_type::<MalformedSitemapError>())?;
    m.add("SitemapEncodingError", py.get_type::<SitemapEncodingError>())?;
    m.add("SitemapTooLargeError", py.get_type::<SitemapTooLargeError>())?;
    m.add("GzipError", py.get_type::<GzipError>())?;
    m.add("NotASitemapError", py.get_type::<NotASitemapError>())?;
    m.add("FetchError", py.get_type::<FetchError>())?;
    m.add("WriteError", py.get_type::<WriteError>())?;
    m.add("NoUrlError", py.get_type::<NoUrlError>())?;
    m.add("PartialSitemapError", py.get_type::<PartialSitemapError>())?;
    m.add("PartialSitemapWarning", py.get_type::<PartialSitemapWarning>())?;
    Ok(())
}

/// Sets the attributes every `SitemapError` has (`None` where unknown): where in the
/// document (`rule`, `line`, `column`, `offset`) and which URL (`url`, for a remote source).
fn with_attrs(py: Python<'_>, err: PyErr, e: Option<&mapwright_core::Error>, url: Option<&str>) -> PyErr {
    let value = err.value(py);
    let pos = e.and_then(mapwright_core::Error::position);
    // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion.
    let _ = value.setattr("rule", e.and_then(|e| e.rule()).map(|r| r.as_str()));
    let _ = value.setattr("line", pos.map(|p| p.line));
    let _ = value.setattr("column", pos.map(|p| p.column));
    let _ = value.setattr("offset", pos.map(|p| p.offset));
    let _ = value.setattr("url", url);
    err
}

/// The exception class and message of a core error, as the CLI prints it (`line:column: ...`).
fn core_class(e: &mapwright_core::Error, msg: String) -> PyErr {
    use mapwright_core::Error as E;
    match e {
        E::Xml { .. } | E::TooDeep { .. } => MalformedSitemapError::new_err(msg),
        E::Encoding { .. } => SitemapEncodingError::new_err(msg),
        E::TooLarge { .. } => SitemapTooLargeError::new_err(msg),
        E::Gzip { .. } => GzipError::new_err(msg),
        E::NotSitemap { .. } | E::Empty { .. } => NotASitemapError::new_err(msg),
        // An OAI-PMH list of records that stopped (`rule`: oai-incomplete or oai-error): by why.
        E::Oai(stop) => {
            use mapwright_core::OaiFault as O;
            match &stop.fault {
                O::Fetch { .. } => FetchError::new_err(msg),
                O::Repository { code, .. } if code == "noRecordsMatch" => NoUrlError::new_err(msg),
                O::ByteLimit { .. } => SitemapTooLargeError::new_err(msg),
                O::NotRecords { .. } => NotASitemapError::new_err(msg),
                _ => SitemapError::new_err(msg),
            }
        }
        E::File { .. }
        | E::EntryTooLarge { .. }
        | E::UndeclaredExtension { .. }
        | E::TooManyParts { .. }
        | E::Config(_) => WriteError::new_err(msg),
        _ => SitemapError::new_err(msg),
    }
}

/// The exception for a core error of a local source (a path, bytes, a file object).
pub fn core_error(py: Python<'_>, e: &mapwright_core::Error) -> PyErr {
    with_attrs(py, core_class(e, e.to_string()), Some(e), None)
}

/// The exception for a core error of the document at `url`: the message starts with the URL.
pub fn core_error_at(py: Python<'_>, e: &mapwright_core::Error, url: &str) -> PyErr {
    with_attrs(py, core_class(e, format!("{url}: {e}")), Some(e), Some(url))
}

/// The exception for a fetch error, naming the URL: the core's own kinds when the body was bad
/// (not a sitemap, broken gzip, too large...), `SitemapTooLargeError` for a body over the limit
/// on the wire, else `FetchError` (an HTTP status, a refused connection, a timeout).
pub fn fetch_error(py: Python<'_>, e: &mapwright_fetch::Error) -> PyErr {
    use mapwright_fetch::Error as F;
    match e {
        F::Read { url, source } => core_error_at(py, source, url),
        F::TooLarge { url, .. } => with_attrs(py, SitemapTooLargeError::new_err(e.to_string()), None, Some(url)),
        F::InvalidUrl { url, .. }
        | F::Connect { url, .. }
        | F::Timeout { url, .. }
        | F::Redirect { url, .. }
        | F::Status { url, .. }
        | F::Encoding { url, .. }
        | F::Http { url, .. } => with_attrs(py, FetchError::new_err(e.to_string()), None, Some(url)),
        _ => with_attrs(py, FetchError::new_err(e.to_string()), None, None),
    }
}

/// A `SitemapError` of class `T` with a message and the URL it is about (bad arguments are
/// `ValueError`s instead, raised where they are found).
pub fn plain_at<T: pyo3::PyTypeInfo>(py: Python<'_>, msg: impl Into<String>, url: Option<&str>) -> PyErr {
    with_attrs(py, PyErr::from_type(py.get_type::<T>(), msg.into()), None, url)
}

/// A plain `SitemapError`.
pub fn plain(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    plain_at::<SitemapError>(py, msg, None)
}

/// How a partial result is reported: `errors="raise"` (the default) or `errors="warn"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnPartial {
    /// A `PartialSitemapError` listing the failures (carrying what was read).
    Raise,
    /// A `PartialSitemapWarning`, and the result as read.
    Warn,
    /// The data frames' and `discover_many`'s `errors="rows"`: no exception and no warning,
    /// each failure is a row (`sitemap`, `errors`), as advertools' `sitemap_to_df` gives it.
    /// The caller records the failures.
    Rows,
}

impl OnPartial {
    /// Parses the `errors=` argument.
    pub fn parse(s: &str) -> PyResult<OnPartial> {
        match s {
            "raise" => Ok(OnPartial::Raise),
            "warn" => Ok(OnPartial::Warn),
            "rows" => Ok(OnPartial::Rows),
            other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "errors must be 'raise', 'warn' or (data frames and discover_many only) 'rows', not {other:?}"
            ))),
        }
    }
}

/// Reports a partial result: `failed` lists `(source, why)`; `cause` is the first failure's
/// own exception when there is one. With `Raise`, the `PartialSitemapError` to raise (its
/// `failed` set, `frame` None until the frame builder fills it); with `Warn`, the warning is
/// issued and `Ok(())` returned (an error only if warnings are turned into errors).
pub fn partial(
    py: Python<'_>,
    on: OnPartial,
    what: &str,
    url: Option<&str>,
    failed: &[(String, String)],
    cause: Option<PyErr>,
) -> PyResult<()> {
    // The first few failures, each naming its source once (a fetch error's text starts with its URL).
    const SHOWN: usize = 3;
    let mut shown: Vec<String> = failed
        .iter()
        .take(SHOWN)
        .map(|(s, why)| if why.starts_with(s.as_str()) { why.clone() } else { format!("{s}: {why}") })
        .collect();
    if failed.len() > SHOWN {
        shown.push(format!("and {} more (see .failed)", failed.len() - SHOWN));
    }
    let msg = format!("{what}: {} could not be read: {}", plural(failed.len()), shown.join("; "));
    match on {
        OnPartial::Rows => Ok(()),
        OnPartial::Warn => {
            let category = py.get_type::<PartialSitemapWarning>();
            PyErr::warn(py, category.as_any(), &std::ffi::CString::new(msg).unwrap_or_default(), 1)
        }
        OnPartial::Raise => {
            let err = plain_at::<PartialSitemapError>(py, msg, url);
            let value = err.value(py);
            let _ = value.setattr("failed", failed.to_vec());
            let _ = value.setattr("frame", py.None());
            err.set_cause(py, cause);
            Err(err)
        }
    }
}

fn plural(n: usize) -> String {
    if n == 1 { "1 source".into() } else { format!("{n} sources") }
}
