//! The columns of `to_pandas` / `to_polars`, built here from whole batches: numbers and dates
//! as packed buffers (one `bytes` per column, read by numpy without a copy per row), `loc` as
//! an Arrow string column's two buffers (offsets and UTF-8 bytes, which pyarrow wraps without
//! a copy; pandas and polars take the array as it is) or, without pyarrow, a list of `str`,
//! repeated text (`sitemap`, `changefreq`) as category codes. No Python object is made per
//! entry when pyarrow is there, and the reader keeps parsing while a batch is converted.
//!
//! The columns are advertools' `sitemap_to_df`'s (README, "Switching from advertools"): its
//! names, one row per URL of each sitemap (a URL listed twice in one file once, in two files
//! twice), `loc` as the file wrote it.

use crate::convert::{PyEntry, priority_f64};
use crate::discover::{Discovery, SitemapMeta};
use crate::errors::{self, OnPartial};
use crate::read::Reader;
use mapwright_core::{ChangeFreq, Entry, Image, Lastmod, News, UrlEntry, Video};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
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

/// A text column, left out of the frame while no row has a value: most sitemaps have no
/// image, video, news or alternate, so `values` stays empty until a first value comes rather
/// than holding a `None` per row, 24 bytes each, in thirty columns thrown away at the end.
struct TextCol {
    name: &'static str,
    values: Vec<Option<String>>,
    /// Rows pushed, values or not.
    rows: usize,
    /// A value came: `values` holds one per row from then on.
    any: bool,
}

impl TextCol {
    fn new(name: &'static str) -> Self {
        TextCol { name, values: Vec::new(), rows: 0, any: false }
    }

    fn push(&mut self, v: Option<String>) {
        if v.is_some() && !self.any {
            self.any = true;
            self.values.resize(self.rows, None);
        }
        if self.any {
            self.values.push(v);
        }
        self.rows += 1;
    }

    /// Several values joined by `@@` (advertools' separator for several values); a list of
    /// only missing values (no image has a caption) is missing.
    fn push_joined<'a>(&mut self, parts: impl Iterator<Item = Option<&'a str>>) {
        let mut out: Option<String> = None;
        let mut some = false;
        for (n, p) in parts.enumerate() {
            let s = out.get_or_insert_with(String::new);
            if n > 0 {
                s.push_str("@@");
            }
            some |= p.is_some();
            s.push_str(p.unwrap_or(""));
        }
        self.push(out.filter(|_| some));
    }
}

/// The text columns of a row, in the frame's order: the extensions' fields named as
/// advertools' `sitemap_to_df` names them (`image_*`, `video_*`, `publication_*`,
/// `news_*`; its flattening of the XML keeps the last value of a repeated element: see
/// `push_text`; `geo_format`; a PageMap's `DataObject_Attribute`, the value of the entry's
/// last `Attribute`), then what we keep beyond it: every image (`image_*_all`, joined by `@@`,
/// when an entry has several), the hreflang alternates (advertools reads no attribute) and the
/// whole PageMap (`pagemap`: its data objects as the JSON of the CLI's rows).
const TEXT_COLUMNS: [&str; 44] = [
    "image_loc",
    "image_title",
    "image_caption",
    "image_geo_location",
    "image_license",
    "video_thumbnail_loc",
    "video_title",
    "video_description",
    "video_content_loc",
    "video_player_loc",
    "video_duration",
    "video_expiration_date",
    "video_rating",
    "video_view_count",
    "video_publication_date",
    "video_family_friendly",
    "video_restriction",
    "video_platform",
    "video_price",
    "video_requires_subscription",
    "video_uploader",
    "video_live",
    "video_tag",
    "video_category",
    "video_gallery_loc",
    "video_id",
    "publication_name",
    "publication_language",
    "news_publication_date",
    "news_title",
    "news_keywords",
    "news_genres",
    "news_stock_tickers",
    "news_access",
    "geo_format",
    "DataObject_Attribute",
    "image_loc_all",
    "image_title_all",
    "image_caption_all",
    "image_geo_location_all",
    "image_license_all",
    "alternate_hreflang",
    "alternate_href",
    "pagemap",
];

/// Index of the first `*_all` column in [`TEXT_COLUMNS`].
const ALL_IMAGES: usize = 36;

/// The values of [`TEXT_COLUMNS`] for one entry, pushed in order. advertools flattens an
/// entry's XML into one dict, each element overwriting the value of the one before it of the
/// same name: a field of the images (of the videos) is the last image's (video's) that has
/// it, a repeated `video:tag` or `video:price` the last one.
fn push_text(cols: &mut [TextCol], u: &UrlEntry) {
    let x = u.ext();
    {
        let mut c = cols.iter_mut();
        let mut next = |v: Option<String>| c.next().expect("one column per value").push(v);
        let image = |f: fn(&Image) -> Option<&String>| x.images.iter().rev().find_map(f).cloned();
        next(image(|i| Some(&i.loc)));
        next(image(|i| i.title.as_ref()));
        next(image(|i| i.caption.as_ref()));
        next(image(|i| i.geo_location.as_ref()));
        next(image(|i| i.license.as_ref()));
        let video = |f: fn(&Video) -> Option<&String>| x.videos.iter().rev().find_map(f).cloned();
        let number = |f: fn(&Video) -> Option<String>| x.videos.iter().rev().find_map(f);
        next(video(|v| v.thumbnail_loc.as_ref()));
        next(video(|v| v.title.as_ref()));
        next(video(|v| v.description.as_ref()));
        next(video(|v| v.content_loc.as_ref()));
        next(video(|v| v.player_loc.as_ref()));
        next(number(|v| v.duration.map(|d| d.to_string())));
        next(video(|v| v.expiration_date.as_ref()));
        next(number(|v| v.rating.map(|r| r.to_string())));
        next(number(|v| v.view_count.map(|n| n.to_string())));
        next(video(|v| v.publication_date.as_ref()));
        next(video(|v| v.family_friendly.as_ref()));
        next(video(|v| v.restriction.as_ref()));
        next(video(|v| v.platform.as_ref()));
        next(video(|v| v.prices.last().map(|p| &p.value)));
        next(video(|v| v.requires_subscription.as_ref()));
        next(video(|v| v.uploader.as_ref()));
        next(video(|v| v.live.as_ref()));
        next(video(|v| v.tags.last()));
        next(video(|v| v.category.as_ref()));
        next(video(|v| v.gallery_loc.as_ref()));
        next(video(|v| v.id.as_ref()));
        let n = x.news.as_deref();
        let news = |f: fn(&News) -> Option<&String>| n.and_then(f).cloned();
        next(news(|n| n.publication_name.as_ref()));
        next(news(|n| n.language.as_ref()));
        next(news(|n| n.publication_date.as_ref()));
        next(news(|n| n.title.as_ref()));
        next(news(|n| n.keywords.as_ref()));
        next(news(|n| n.genres.as_ref()));
        next(news(|n| n.stock_tickers.as_ref()));
        next(news(|n| n.access.as_ref()));
        next(x.geo.as_ref().and_then(|g| g.format.clone()));
        next(x.pagemap.iter().rev().find_map(|o| o.attributes.last()).map(|a| a.value.clone()));
    }
    let rest = &mut cols[ALL_IMAGES..];
    let several = x.images.len() > 1;
    let all = |f: fn(&Image) -> Option<&str>| x.images.iter().map(f).collect::<Vec<_>>();
    for (col, values) in rest.iter_mut().zip([
        all(|i| Some(i.loc.as_str())),
        all(|i| i.title.as_deref()),
        all(|i| i.caption.as_deref()),
        all(|i| i.geo_location.as_deref()),
        all(|i| i.license.as_deref()),
    ]) {
        if several { col.push_joined(values.into_iter()) } else { col.push(None) }
    }
    rest[5].push_joined(x.alternates.iter().map(|a| Some(a.hreflang.as_str())));
    rest[6].push_joined(x.alternates.iter().map(|a| Some(a.href.as_str())));
    // Plain data: its JSON cannot fail.
    rest[7].push((!x.pagemap.is_empty()).then(|| serde_json::to_string(&x.pagemap).unwrap_or_default()));
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

/// What is known of a sitemap, by its URL (a discovery's [`SitemapMeta`]).
type MetaOf<'a> = &'a dyn Fn(&str) -> Option<SitemapMeta>;

struct Builder<'py> {
    py: Python<'py>,
    rows: usize,
    loc: Text<'py>,
    /// `loc` in its normal form rather than as written.
    normalized: bool,
    /// Drop an entry whose URL (its normal form) came already: the hashes seen. `None` keeps
    /// every entry (a discovery dedupes itself; an iterable of entries is taken as given).
    seen: Option<HashSet<u64>>,
    hasher: std::hash::RandomState,
    duplicates: u64,
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
    text: Vec<TextCol>,
    /// Failures as rows (`errors="rows"`): `(sitemap, why)`.
    errors: Vec<(String, String)>,
}

impl<'py> Builder<'py> {
    fn new(py: Python<'py>, arrow: bool, normalized: bool, dedupe: bool) -> Self {
        Builder {
            py,
            rows: 0,
            loc: if arrow { Text::Arrow { offsets: vec![0], data: Vec::new() } } else { Text::List(PyList::empty(py)) },
            normalized,
            seen: dedupe.then(HashSet::new),
            hasher: std::hash::RandomState::new(),
            duplicates: 0,
            lastmod: Vec::new(),
            changefreq: Vec::new(),
            priority: Vec::new(),
            sitemap: Vec::new(),
            sitemaps: Vec::new(),
            sitemap_codes: HashMap::new(),
            last_sitemap: None,
            kind_sitemap: 0,
            text: TEXT_COLUMNS.iter().map(|&n| TextCol::new(n)).collect(),
            errors: Vec::new(),
        }
    }

    fn push(&mut self, e: &Entry, sitemap: Option<&Arc<str>>) -> PyResult<()> {
        if let Some(seen) = &mut self.seen {
            // Within one file a URL listed twice is one row (the first), as advertools gives it.
            if !seen.insert(self.hasher.hash_one(e.loc().as_str())) {
                self.duplicates += 1;
                return Ok(());
            }
        }
        self.rows += 1;
        self.loc.push(if self.normalized { e.loc().as_str() } else { e.loc().written() })?;
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
                if u.has_extensions() {
                    push_text(&mut self.text, u);
                } else {
                    self.text.iter_mut().for_each(|c| c.push(None));
                }
            }
            Entry::Sitemap(_) => {
                self.kind_sitemap += 1;
                self.changefreq.push(-1);
                self.priority.push(f64::NAN);
                self.text.iter_mut().for_each(|c| c.push(None));
            }
        }
        Ok(())
    }

    /// The columns; `meta` gives, for a discovery, what is known of each sitemap (advertools'
    /// `etag`, `sitemap_last_modified`, `sitemap_size_mb`, `download_date`, one value per
    /// sitemap code for the Python layer to spread over the rows).
    fn finish(self, meta: Option<MetaOf<'_>>) -> PyResult<Bound<'py, PyDict>> {
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
        d.set_item("duplicates", self.duplicates)?;
        let extra = PyDict::new(py);
        for col in self.text {
            if col.any {
                extra.set_item(col.name, col.values)?;
            }
        }
        d.set_item("text", extra)?;
        if let Some(meta) = meta {
            let m: Vec<SitemapMeta> = self.sitemaps.iter().map(|s| meta(s).unwrap_or_default()).collect();
            let per = PyDict::new(py);
            per.set_item("etag", m.iter().map(|m| m.etag.clone()).collect::<Vec<_>>())?;
            per.set_item("last_modified", m.iter().map(|m| m.last_modified.clone()).collect::<Vec<_>>())?;
            per.set_item("size_mb", m.iter().map(|m| m.size as f64 / 1024.0 / 1024.0).collect::<Vec<_>>())?;
            per.set_item("download_date", m.iter().map(|m| m.downloaded_ns).collect::<Vec<_>>())?;
            d.set_item("sitemap_meta", per)?;
        }
        d.set_item("errors", self.errors)?;
        Ok(d)
    }
}

/// The columns of every entry `source` yields: a `Reader`, a `Discovery`, or any iterable of
/// `Entry`. With `arrow`, `loc` comes as `loc_offsets` (int64) and `loc_data` (UTF-8) for
/// pyarrow, else as a list of `str`; `loc` is the URL as written, or its normal form with
/// `normalized`. A `Reader`'s entries are deduplicated by their URL's normal form (one file:
/// duplicates dropped, as advertools drops them); a `Discovery` dedupes as it was told
/// (`dedupe="sitemap"` for the frames); an iterable of entries is taken as it is.
///
/// An index's children (a `Reader` of an index file, or entries of kind `sitemap`) are never
/// rows: they are fetched and read as a URL source's are, with `follow` (the options of a
/// discovery: `max_bytes`, `scope`, `timeout`...), their rows under each child.
///
/// A source that gave nothing readable raises its own error; one read to its end whose every
/// entry was skipped (a relative `<loc>` without the document's URL, an invalid one...) raises
/// `NoUrlError`. A partial result (a file that broke after some entries; a discovery some of
/// whose sitemaps failed, which raises `PartialSitemapError` itself) raises a
/// `PartialSitemapError` whose `_columns` holds the columns read, for the Python layer to make
/// its `frame`; with `errors="warn"` it warns and returns them; with `errors="rows"` each
/// failure is in `errors` as `(sitemap, why)` for the Python layer to add as rows (a
/// `Discovery` follows its own `errors`).
#[pyfunction]
#[pyo3(signature = (source, arrow=false, errors="raise", normalized=false, follow=None))]
pub fn columns<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    arrow: bool,
    errors: &str,
    normalized: bool,
    follow: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let on_partial = OnPartial::parse(errors)?;
    if let Ok(reader) = source.cast::<Reader>() {
        let mut b = Builder::new(py, arrow, normalized, true);
        let mut children = Vec::new();
        let mut r = reader.borrow_mut();
        let sitemap = r.sitemap();
        loop {
            for e in r.take_buffered() {
                match e {
                    Entry::Sitemap(_) => children.push(e.loc().as_str().to_string()),
                    Entry::Url(_) => b.push(&e, sitemap.as_ref())?,
                }
            }
            // The end comes with no entries: the buffer is empty when `fill` says so.
            if !r.fill(py) {
                if let Some(err) = r.take_error(py) {
                    if b.rows == 0 && children.is_empty() {
                        return Err(err);
                    }
                    let text = err.value(py).to_string();
                    let cause = text.strip_prefix(&format!("{}: ", r.name)).unwrap_or(&text);
                    let read = b.rows + children.len();
                    let failed = [(r.name.clone(), format!("stopped after {read} entries: {cause}"))];
                    let url = r.url.clone();
                    if let Err(partial) = errors::partial(py, on_partial, &r.name, url.as_deref(), &failed, Some(err)) {
                        return Err(with_columns(py, partial, b, None));
                    }
                    if on_partial == OnPartial::Rows {
                        b.errors.extend(failed);
                    }
                }
                break;
            }
        }
        if children.is_empty() {
            if let Some(err) = r.nothing_read(py) {
                return Err(err);
            }
        }
        // The index's URL: the one given (`url=`) or the remote source's after redirects.
        let (name, url) = (r.name.clone(), sitemap.as_deref().map(str::to_string));
        drop(r);
        follow_children(py, b, children, &name, url, follow.as_ref())
    } else if let Ok(disc) = source.cast::<Discovery>() {
        let b = Builder::new(py, arrow, normalized, false);
        let mut d = disc.borrow_mut();
        drain(py, b, &mut d)
    } else {
        let mut b = Builder::new(py, arrow, normalized, false);
        let mut children = Vec::new();
        for item in source.try_iter()? {
            let item = item?;
            let entry = item.cast::<PyEntry>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "to_pandas takes a source or an iterable of mapwright.Entry, got an item of type {}",
                    item.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                ))
            })?;
            let e = entry.get();
            match &e.inner {
                Entry::Sitemap(_) => children.push(e.inner.loc().as_str().to_string()),
                Entry::Url(_) => b.push(&e.inner, e.sitemap.as_ref())?,
            }
        }
        follow_children(py, b, children, "<entries>", None, follow.as_ref())
    }
}

/// The columns of `b` and of the index's `children`, fetched and read as a URL source's
/// children are (`follow`: the discovery's options; the same cap on sitemaps, and with `scope`
/// the same `index-cross-site` rule against the index's URL `index`, when known); just `b`'s
/// when there is no child.
fn follow_children<'py>(
    py: Python<'py>,
    b: Builder<'py>,
    children: Vec<String>,
    name: &str,
    index: Option<String>,
    follow: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut children = children.into_iter();
    let Some(first) = children.next() else { return b.finish(None) };
    let Some(options) = follow else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{name} is a sitemap index: its children are read with follow= (the discovery's options)"
        )));
    };
    let mut d = crate::discover::start_discovery(
        py,
        first,
        options.extract()?,
        "children",
        "sitemap",
        children.collect(),
        Some(name.to_string()),
        index,
    )?;
    drain(py, b, &mut d)
}

/// `b` and the rows of every URL the discovery `d` gives, with its sitemaps' columns.
fn drain<'py>(py: Python<'py>, mut b: Builder<'py>, d: &mut Discovery) -> PyResult<Bound<'py, PyDict>> {
    loop {
        for (s, u) in d.take_buffered() {
            b.push(&Entry::Url(u), Some(&s))?;
        }
        match d.fill(py) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.is_instance_of::<errors::PartialSitemapError>(py) => {
                let meta = |s: &str| d.sitemap_meta(s).cloned();
                return Err(with_columns(py, e, b, Some(&meta)));
            }
            Err(e) => return Err(e),
        }
    }
    b.errors.append(&mut d.failed_rows);
    let meta = |s: &str| d.sitemap_meta(s).cloned();
    b.finish(Some(&meta))
}

/// `err` with the columns read so far as its `_columns` attribute.
fn with_columns(py: Python<'_>, err: PyErr, b: Builder<'_>, meta: Option<MetaOf<'_>>) -> PyErr {
    match b.finish(meta) {
        Ok(cols) => {
            let _ = err.value(py).setattr("_columns", cols);
            err
        }
        Err(e) => e,
    }
}
