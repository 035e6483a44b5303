//! `mapwright.write`: the core's set writer (split under the limits, gzip, atomic renames,
//! index last) fed from a Python iterable of `Entry` objects or dicts.

use crate::convert::PyEntry;
use crate::errors;
use mapwright_core::date::lastmod_from_text;
use mapwright_core::{
    Alternate, ChangeFreq, Entry, Image, Loc, Namespaces, SetConfig, SetFormat, SitemapSetWriter, UrlEntry,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

fn value_error(n: u64, msg: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("entry {n}: {msg}"))
}

/// Optional text of a dict key (`None` and absent are the same).
fn opt_str(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
        _ => Ok(None),
    }
}

/// A `UrlEntry` from a dict: `loc` (required), `lastmod` (text, `date` or `datetime`),
/// `changefreq`, `priority`, `images` (URLs or dicts), `alternates` (dicts or pairs).
fn from_dict(n: u64, d: &Bound<'_, PyDict>) -> PyResult<UrlEntry> {
    let loc: String = opt_str(d, "loc")?.ok_or_else(|| value_error(n, "no 'loc'"))?;
    let loc = Loc::parse(loc.trim()).map_err(|e| value_error(n, format!("loc {loc:?}: {e}")))?;
    let mut u = UrlEntry::new(loc);
    if let Some(v) = d.get_item("lastmod")?.filter(|v| !v.is_none()) {
        let text: String =
            if v.is_instance_of::<PyString>() { v.extract()? } else { v.call_method0("isoformat")?.extract()? };
        u.lastmod = Some(
            lastmod_from_text(text.trim()).ok_or_else(|| value_error(n, format!("lastmod {text:?} is not a date")))?,
        );
    }
    if let Some(c) = opt_str(d, "changefreq")? {
        u.changefreq = Some(ChangeFreq::parse(&c).ok_or_else(|| {
            value_error(
                n,
                format!("changefreq {c:?} is not one of always, hourly, daily, weekly, monthly, yearly, never"),
            )
        })?);
    }
    if let Some(p) = d.get_item("priority")?.filter(|v| !v.is_none()) {
        let p: f64 = p.extract()?;
        if !(0.0..=1.0).contains(&p) {
            return Err(value_error(n, format!("priority {p} is not between 0.0 and 1.0")));
        }
        u.priority = Some(p as f32);
    }
    if let Some(images) = d.get_item("images")?.filter(|v| !v.is_none()) {
        for img in images.try_iter()? {
            let img = img?;
            u.ext_mut().images.push(if let Ok(s) = img.extract::<String>() {
                Image { loc: s, ..Image::default() }
            } else {
                let img = img.cast::<PyDict>().map_err(|_| value_error(n, "an image is a URL or a dict"))?;
                Image {
                    loc: opt_str(img, "loc")?.ok_or_else(|| value_error(n, "an image has no 'loc'"))?,
                    caption: opt_str(img, "caption")?,
                    title: opt_str(img, "title")?,
                    geo_location: opt_str(img, "geo_location")?,
                    license: opt_str(img, "license")?,
                }
            });
        }
    }
    if let Some(alts) = d.get_item("alternates")?.filter(|v| !v.is_none()) {
        for a in alts.try_iter()? {
            let a = a?;
            u.ext_mut().alternates.push(if let Ok((hreflang, href)) = a.extract::<(String, String)>() {
                Alternate { hreflang, href }
            } else {
                let a = a
                    .cast::<PyDict>()
                    .map_err(|_| value_error(n, "an alternate is a dict or a (hreflang, href) pair"))?;
                Alternate {
                    hreflang: opt_str(a, "hreflang")?
                        .ok_or_else(|| value_error(n, "an alternate has no 'hreflang'"))?,
                    href: opt_str(a, "href")?.ok_or_else(|| value_error(n, "an alternate has no 'href'"))?,
                }
            });
        }
    }
    for key in ["videos", "news"] {
        if d.get_item(key)?.is_some_and(|v| !v.is_none() && v.len().unwrap_or(1) > 0) {
            return Err(value_error(
                n,
                format!("{key} from a dict are not supported: pass mapwright.Entry objects (from read)"),
            ));
        }
    }
    Ok(u)
}

/// Writes `entries` as a sitemap set; returns the writer's summary as a dict.
#[pyfunction]
#[pyo3(signature = (entries, out_dir, base_url, gzip=false, name="sitemap".to_string(), format="xml", max_urls=None, max_bytes=None, extensions=None))]
#[allow(clippy::too_many_arguments)]
pub fn write_set<'py>(
    py: Python<'py>,
    entries: &Bound<'py, PyAny>,
    out_dir: std::path::PathBuf,
    base_url: String,
    gzip: bool,
    name: String,
    format: &str,
    max_urls: Option<usize>,
    max_bytes: Option<u64>,
    extensions: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let base = Loc::parse(&base_url).map_err(|e| PyValueError::new_err(format!("base_url {base_url:?}: {e}")))?;
    let mut cfg = SetConfig::new(out_dir, base);
    cfg.name = name;
    cfg.format = match format {
        "xml" => SetFormat::Xml,
        "text" => SetFormat::Text,
        other => return Err(PyValueError::new_err(format!("format must be 'xml' or 'text', not {other:?}"))),
    };
    cfg.gzip = gzip.then_some(6);
    if let Some(m) = max_urls {
        cfg.max_urls = m;
    }
    if let Some(b) = max_bytes {
        cfg.max_bytes = b;
    }
    // The writer starts a new part when an entry needs a namespace the open one did not
    // declare; entries stream in, so by default every extension is declared up front.
    cfg.namespaces = match extensions {
        None => Namespaces::ALL,
        Some(list) => {
            let mut ns = Namespaces::NONE;
            for e in list {
                match e.as_str() {
                    "image" => ns.image = true,
                    "video" => ns.video = true,
                    "news" => ns.news = true,
                    "xhtml" => ns.xhtml = true,
                    "geo" => ns.geo = true,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "unknown extension {other:?}: image, video, news, xhtml or geo"
                        )));
                    }
                }
            }
            ns
        }
    };
    let mut writer = SitemapSetWriter::new(cfg).map_err(|e| errors::core_error(py, &e))?;
    let mut n = 0u64;
    for item in entries.try_iter()? {
        let item = item?;
        n += 1;
        let entry = if let Ok(e) = item.cast::<PyEntry>() {
            match &e.get().inner {
                Entry::Url(u) => u.clone(),
                Entry::Sitemap(_) => {
                    return Err(value_error(n, "a child sitemap of an index: the writer makes the index itself"));
                }
            }
        } else if let Ok(d) = item.cast::<PyDict>() {
            from_dict(n, d)?
        } else {
            return Err(PyTypeError::new_err(format!(
                "entry {n}: a mapwright.Entry or a dict, not {}",
                item.get_type()
            )));
        };
        writer.write(&entry).map_err(|e| errors::core_error(py, &e))?;
    }
    let summary = py.detach(move || writer.finish()).map_err(|e| errors::core_error(py, &e))?;
    // Alike on purpose: the summary dict is built as discover.rs's and validate.rs's are: each binding returns
    // the fields of its own Rust summary; a generic builder would need the field names anyway.
    let d = PyDict::new(py);
    d.set_item("entry_point", summary.entry_point)?;
    d.set_item("files", summary.files)?;
    d.set_item("urls", summary.urls)?;
    d.set_item("bytes", summary.bytes)?;
    d.set_item("disk_bytes", summary.disk_bytes)?;
    d.set_item("removed", summary.removed)?;
    Ok(d)
}
