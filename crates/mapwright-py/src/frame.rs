//! The columns of `to_pandas` / `to_polars`, built here from whole batches: numbers and dates
//! as packed buffers (one `bytes` per column, read by numpy without a copy per row), `loc` as
//! an Arrow string column's two buffers (offsets and UTF-8 bytes, which pyarrow wraps without
//! a copy; pandas and polars take the array as it is) or, without pyarrow, a list of `str`,
//! repeated text (`sitemap`, `changefreq`) as category codes. No Python object is made per
//! entry when pyarrow is there, and the reader keeps parsing while a batch is converted.

use crate::convert::{PyEntry, priority_f64};
use crate::discover::Discovery;
use crate::errors::{self, OnPartial};
use crate::read::Reader;
use mapwright_core::{ChangeFreq, Entry, Lastmod};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::HashMap;
use std::sync::Arc;

/// Missing `lastmod` (numpy's NaT).
const NAT: i64 = i64::MIN;

/// Nanoseconds since the epoch (UTC; a time without a zone is read as UTC), or NaT when out
/// of the range of `datetime64[ns]` (years 1678 to 2261).
fn lastmod_ns(l: &Lastmod) -> i64 {
    let v = l.value();
    let secs = v.unix_seconds();
    if !(-9_223_372_036..9_223_372_035).contains(&secs) {
        return NAT;
    }
    secs * 1_000_000_000 + i64::from(v.nanos)
}

/// A column of numbers as the bytes numpy's `frombuffer` (or pyarrow's buffers) read: native
/// byte order, one copy.
fn ne_bytes<T: Copy, const N: usize>(values: &[T], to: fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to(v));
    }
    out
}

/// A text column whose values are lists joined by `@@` (advertools' separator for several values).
/// Most sitemaps have no image and no alternate: `values` stays empty (and the column is left
/// out) until a first value comes, rather than holding a `None` per row, 24 bytes each, in five
/// columns thrown away at the end.
struct Multi {
    values: Vec<Option<String>>,
    /// Rows pushed, values or not.
    rows: usize,
    /// A value came: `values` holds one per row from then on.
    any: bool,
}

impl Multi {
    fn new() -> Self {
        Multi { values: Vec::new(), rows: 0, any: false }
    }

    fn push<'a>(&mut self, parts: impl Iterator<Item = Option<&'a str>>) {
        let mut out: Option<String> = None;
        for (n, p) in parts.enumerate() {
            let s = out.get_or_insert_with(String::new);
            if n > 0 {
                s.push_str("@@");
            }
            s.push_str(p.unwrap_or(""));
        }
        // A list of only missing values (no image has a caption) is missing.
        if out.as_deref().is_some_and(|s| s.chars().all(|c| c == '@')) {
            out = None;
        }
        if out.is_some() && !self.any {
            self.any = true;
            self.values.resize(self.rows, None);
        }
        if self.any {
            self.values.push(out);
        }
        self.rows += 1;
    }
}

/// The `loc` column: an Arrow `large_string` array's offsets and bytes, or a list of `str`.
enum Text<'py> {
    Arrow { offsets: Vec<i64>, data: Vec<u8> },
    List(Bound<'py, PyList>),
}

impl Text<'_> {
    fn push(&mut self, s: &str) -> PyResult<()> {
        match self {
            Text::Arrow { offsets, data } => {
                data.extend_from_slice(s.as_bytes());
                offsets.push(data.len() as i64);
                Ok(())
            }
            Text::List(list) => list.append(s),
        }
    }
}

struct Builder<'py> {
    py: Python<'py>,
    rows: usize,
    loc: Text<'py>,
    lastmod: Vec<i64>,
    changefreq: Vec<i8>,
    priority: Vec<f64>,
    sitemap: Vec<i32>,
    sitemaps: Vec<Arc<str>>,
    sitemap_codes: HashMap<Arc<str>, i32>,
    /// The sitemap of the previous row and its code: rows come in runs of one sitemap sharing
    /// one `Arc`, so a pointer comparison spares hashing the URL again for every row.
    last_sitemap: Option<(Arc<str>, i32)>,
    kind_sitemap: usize,
    image_loc: Multi,
    image_title: Multi,
    image_caption: Multi,
    alternate_hreflang: Multi,
    alternate_href: Multi,
}

impl<'py> Builder<'py> {
    fn new(py: Python<'py>, arrow: bool) -> Self {
        Builder {
            py,
            rows: 0,
            loc: if arrow { Text::Arrow { offsets: vec![0], data: Vec::new() } } else { Text::List(PyList::empty(py)) },
            lastmod: Vec::new(),
            changefreq: Vec::new(),
            priority: Vec::new(),
            sitemap: Vec::new(),
            sitemaps: Vec::new(),
            sitemap_codes: HashMap::new(),
            last_sitemap: None,
            kind_sitemap: 0,
            image_loc: Multi::new(),
            image_title: Multi::new(),
            image_caption: Multi::new(),
            alternate_hreflang: Multi::new(),
            alternate_href: Multi::new(),
        }
    }

    fn push(&mut self, e: &Entry, sitemap: Option<&Arc<str>>) -> PyResult<()> {
        self.rows += 1;
        self.loc.push(e.loc().as_str())?;
        self.lastmod.push(e.lastmod().map_or(NAT, lastmod_ns));
        let code = match sitemap {
            None => -1,
            Some(s) => match &self.last_sitemap {
                Some((last, c)) if Arc::ptr_eq(last, s) => *c,
                _ => {
                    let c = match self.sitemap_codes.get(s) {
                        Some(&c) => c,
                        None => {
                            let c = self.sitemaps.len() as i32;
                            self.sitemaps.push(s.clone());
                            self.sitemap_codes.insert(s.clone(), c);
                            c
                        }
                    };
                    self.last_sitemap = Some((s.clone(), c));
                    c
                }
            },
        };
        self.sitemap.push(code);
        match e {
            Entry::Url(u) => {
                self.changefreq
                    .push(u.changefreq.map_or(-1, |c| ChangeFreq::ALL.iter().position(|&x| x == c).unwrap_or(0) as i8));
                self.priority.push(u.priority.map_or(f64::NAN, priority_f64));
                self.image_loc.push(u.images.iter().map(|i| Some(i.loc.as_str())));
                self.image_title.push(u.images.iter().map(|i| i.title.as_deref()));
                self.image_caption.push(u.images.iter().map(|i| i.caption.as_deref()));
                self.alternate_hreflang.push(u.alternates.iter().map(|a| Some(a.hreflang.as_str())));
                self.alternate_href.push(u.alternates.iter().map(|a| Some(a.href.as_str())));
            }
            Entry::Sitemap(_) => {
                self.kind_sitemap += 1;
                self.changefreq.push(-1);
                self.priority.push(f64::NAN);
                for m in [
                    &mut self.image_loc,
                    &mut self.image_title,
                    &mut self.image_caption,
                    &mut self.alternate_hreflang,
                    &mut self.alternate_href,
                ] {
                    m.push(std::iter::empty());
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let packed = |bytes: &[u8]| PyBytes::new(py, bytes);
        let d = PyDict::new(py);
        d.set_item("rows", self.rows)?;
        match self.loc {
            Text::Arrow { offsets, data } => {
                d.set_item("loc_offsets", packed(&ne_bytes(&offsets, i64::to_ne_bytes)))?;
                d.set_item("loc_data", packed(&data))?;
            }
            Text::List(list) => d.set_item("loc", list)?,
        }
        d.set_item("lastmod", packed(&ne_bytes(&self.lastmod, i64::to_ne_bytes)))?;
        d.set_item("changefreq", packed(&self.changefreq.iter().map(|&c| c as u8).collect::<Vec<u8>>()))?;
        d.set_item("changefreq_categories", ChangeFreq::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>())?;
        d.set_item("priority", packed(&ne_bytes(&self.priority, f64::to_ne_bytes)))?;
        d.set_item("sitemap", packed(&ne_bytes(&self.sitemap, i32::to_ne_bytes)))?;
        d.set_item("sitemap_categories", self.sitemaps.iter().map(|s| &**s).collect::<Vec<_>>())?;
        d.set_item("index_rows", self.kind_sitemap)?;
        let extra = PyDict::new(py);
        for (name, col) in [
            ("image_loc", self.image_loc),
            ("image_title", self.image_title),
            ("image_caption", self.image_caption),
            ("alternate_hreflang", self.alternate_hreflang),
            ("alternate_href", self.alternate_href),
        ] {
            if col.any {
                extra.set_item(name, col.values)?;
            }
        }
        d.set_item("text", extra)?;
        Ok(d)
    }
}

/// The columns of every entry `source` yields: a `Reader`, a `Discovery`, or any iterable of
/// `Entry`. With `arrow`, `loc` comes as `loc_offsets` (int64) and `loc_data` (UTF-8) for
/// pyarrow, else as a list of `str`.
///
/// A source that gave nothing readable raises its own error. A partial result (a file that
/// broke after some entries; a discovery some of whose sitemaps failed, which raises
/// `PartialSitemapError` itself) raises a `PartialSitemapError` whose `_columns` holds the
/// columns read, for the Python layer to make its `frame`; with `errors="warn"` it warns and
/// returns them (a `Discovery` follows its own `errors`).
#[pyfunction]
#[pyo3(signature = (source, arrow=false, errors="raise"))]
pub fn columns<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    arrow: bool,
    errors: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let on_partial = OnPartial::parse(errors)?;
    let mut b = Builder::new(py, arrow);
    if let Ok(reader) = source.cast::<Reader>() {
        let mut r = reader.borrow_mut();
        let sitemap = r.sitemap();
        loop {
            for e in r.take_buffered() {
                b.push(&e, sitemap.as_ref())?;
            }
            // The end comes with no entries: the buffer is empty when `fill` says so.
            if !r.fill(py) {
                if let Some(err) = r.take_error(py) {
                    if b.rows == 0 {
                        return Err(err);
                    }
                    let text = err.value(py).to_string();
                    let cause = text.strip_prefix(&format!("{}: ", r.name)).unwrap_or(&text);
                    let failed = [(r.name.clone(), format!("stopped after {} entries: {cause}", b.rows))];
                    let url = r.url.clone();
                    if let Err(partial) = errors::partial(py, on_partial, &r.name, url.as_deref(), &failed, Some(err)) {
                        return Err(with_columns(py, partial, b));
                    }
                }
                break;
            }
        }
    } else if let Ok(disc) = source.cast::<Discovery>() {
        let mut d = disc.borrow_mut();
        loop {
            for (s, u) in d.take_buffered() {
                b.push(&Entry::Url(u), Some(&s))?;
            }
            match d.fill(py) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) if e.is_instance_of::<errors::PartialSitemapError>(py) => return Err(with_columns(py, e, b)),
                Err(e) => return Err(e),
            }
        }
    } else {
        for item in source.try_iter()? {
            let item = item?;
            let entry = item.cast::<PyEntry>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "to_pandas takes a source or an iterable of mapwright.Entry, got an item of type {}",
                    item.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                ))
            })?;
            let e = entry.get();
            b.push(&e.inner, e.sitemap.as_ref())?;
        }
    }
    b.finish()
}

/// `err` with the columns read so far as its `_columns` attribute.
fn with_columns(py: Python<'_>, err: PyErr, b: Builder<'_>) -> PyErr {
    match b.finish() {
        Ok(cols) => {
            let _ = err.value(py).setattr("_columns", cols);
            err
        }
        Err(e) => e,
    }
}
