//! The Python package `mapwright`: the core's streaming reader, validator and set writer, and
//! the fetch crate's discovery, as a CPython extension module (abi3, one wheel for 3.9+).
//!
//! The Python layer (`python/mapwright/__init__.py`) dispatches on the type of a source and
//! builds data frames; everything that touches bytes runs here, without the GIL: a reader
//! thread (or, for HTTP, the fetch crate's tasks) fills a bounded channel with batches of
//! entries, and the Python iterator takes one batch per release of the GIL, so memory stays
//! flat however long the file.

mod convert;
mod discover;
mod errors;
mod frame;
mod input;
mod many;
mod read;
mod run;
mod validate;
mod write;

use pyo3::prelude::*;

/// The extension module, `mapwright._mapwright`; the public names are re-exported by the
/// package's `__init__.py`.
#[pymodule]
fn _mapwright(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<convert::PyEntry>()?;
    m.add_class::<convert::PyFinding>()?;
    m.add_class::<read::Reader>()?;
    m.add_class::<discover::Discovery>()?;
    m.add_class::<many::SiteBatches>()?;
    m.add_class::<validate::PyReport>()?;
    m.add_function(wrap_pyfunction!(read::open_reader, m)?)?;
    m.add_function(wrap_pyfunction!(discover::start_discovery, m)?)?;
    m.add_function(wrap_pyfunction!(many::start_discover_many, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate_source, m)?)?;
    m.add_function(wrap_pyfunction!(write::write_set, m)?)?;
    m.add_function(wrap_pyfunction!(frame::columns, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
