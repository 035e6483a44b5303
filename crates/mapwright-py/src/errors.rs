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
    Ok(())
}

/// Sets the attributes every `SitemapError` has (`None` where unknown).
fn with_position(py: Python<'_>, err: PyErr, e: &mapwright_core::Error) -> PyErr {
    let value = err.value(py);
    let pos = e.position();
    // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion.
    let _ = value.setattr("rule", e.rule().map(|r| r.as_str()));
    let _ = value.setattr("line", pos.map(|p| p.line));
    let _ = value.setattr("column", pos.map(|p| p.column));
    let _ = value.setattr("offset", pos.map(|p| p.offset));
    err
}

/// The exception for a core error, with its message as the CLI prints it (`line:column: ...`).
pub fn core_error(py: Python<'_>, e: &mapwright_core::Error) -> PyErr {
    use mapwright_core::Error as E;
    let msg = e.to_string();
    let err = match e {
        E::Xml { .. } | E::TooDeep { .. } => MalformedSitemapError::new_err(msg),
        E::Encoding { .. } => SitemapEncodingError::new_err(msg),
        E::TooLarge { .. } => SitemapTooLargeError::new_err(msg),
        E::Gzip { .. } => GzipError::new_err(msg),
        E::NotSitemap { .. } => NotASitemapError::new_err(msg),
        E::File { .. }
        | E::EntryTooLarge { .. }
        | E::UndeclaredExtension { .. }
        | E::TooManyParts { .. }
        | E::Config(_) => WriteError::new_err(msg),
        _ => SitemapError::new_err(msg),
    };
    with_position(py, err, e)
}

/// The exception for a fetch error: the core's own kinds when the body was bad, else `FetchError`.
pub fn fetch_error(py: Python<'_>, e: &mapwright_fetch::Error) -> PyErr {
    if let mapwright_fetch::Error::Read { source, .. } = e {
        return core_error(py, source);
    }
    let err = FetchError::new_err(e.to_string());
    let value = err.value(py);
    for name in ["rule", "line", "column", "offset"] {
        let _ = value.setattr(name, py.None());
    }
    err
}

/// A plain `SitemapError` (bad arguments are `ValueError`s instead, raised where they are found).
pub fn plain(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    let err = SitemapError::new_err(msg.into());
    let value = err.value(py);
    for name in ["rule", "line", "column", "offset"] {
        let _ = value.setattr(name, py.None());
    }
    err
}
