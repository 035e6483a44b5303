//! The rows of `read` and `discover` as Arrow record batches: one schema and one builder for
//! the CLI's Parquet (`--format parquet`, written by [`ParquetRows`]) and the Python
//! package's `discover_many` batches, so the two can never disagree.
//!
//! The columns are those of the JSON Lines rows, in their order: `kind` (for `read`), `loc`,
//! `lastmod` (the W3C Datetime as written, precision and zone kept, as in JSON), `changefreq`,
//! `priority`, the extensions as nested columns (`images`, `videos`, `alternates`, `pagemap`:
//! lists of structs whose fields are the JSON object's keys; `news`, `geo`: structs), then `sitemap` and
//! `site` (for `discover`). A value missing from the JSON row is null; a list the JSON row
//! leaves out because it is empty is an empty list (a `read` row of an index's sitemap has
//! null lists: it has no such field).

use arrow_array::builder::{Float32Builder, StringBuilder};
use arrow_array::{ArrayRef, Float32Array, ListArray, RecordBatch, StringArray, StructArray, UInt32Array, UInt64Array};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};
use mapwright_core::{Alternate, DataObject, Entry, Geo, Image, News, PageMapAttribute, UrlEntry, Video, VideoPrice};
use std::fmt::Write as _;
use std::sync::Arc;

#[cfg(feature = "parquet")]
mod write;
#[cfg(feature = "parquet")]
pub use write::{ParquetRows, RowsError};

/// Rows held before a batch is cut: Spark's and DuckDB's batches are of this order, and a
/// batch this size is a few megabytes of text.
pub const BATCH_ROWS: usize = 16 * 1024;

/// Bytes of text held before a batch is cut, whatever its rows: an Arrow string column
/// indexes its bytes with 32-bit offsets, and memory stays flat with rows of many images.
const BATCH_BYTES: usize = 32 * 1024 * 1024;

/// Which columns a row has besides the entry's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    /// `kind` first, `url` or `sitemap`: the rows of `read`, which lists an index's sitemaps.
    pub kind: bool,
    /// `sitemap` after the entry: the sitemap a discovered URL came from.
    pub sitemap: bool,
    /// `site` last: the site a URL was discovered for (`discover --sites`, `discover_many`).
    pub site: bool,
    /// `loc` in its normal form (`--normalized`) rather than as the file wrote it.
    pub normalized_loc: bool,
    /// `errors` after all: rows of failures as well ([`RowBuilder::push_error`], the Python
    /// package's `discover_many(errors="rows")`, advertools' manner), whose `loc` and
    /// `sitemap` may be null.
    pub errors: bool,
}

impl Columns {
    /// The rows of `read`.
    pub const READ: Columns = Columns { kind: true, sitemap: false, site: false, normalized_loc: false, errors: false };
    /// The rows of `discover` of one site or of given sitemaps.
    pub const DISCOVER: Columns =
        Columns { kind: false, sitemap: true, site: false, normalized_loc: false, errors: false };
    /// The rows of `discover --sites` and of the Python package's `discover_many`.
    pub const SITES: Columns = Columns { kind: false, sitemap: true, site: true, normalized_loc: false, errors: false };

    /// The same columns with `loc` in its normal form when `normalized` (the CLI's
    /// `--normalized`), as the file wrote it otherwise.
    pub const fn normalized(self, normalized: bool) -> Columns {
        Columns { normalized_loc: normalized, ..self }
    }

    /// The same columns with `errors` when `errors`.
    pub const fn with_errors(self, errors: bool) -> Columns {
        Columns { errors, ..self }
    }
}

fn text(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

fn required(name: &str) -> Field {
    Field::new(name, DataType::Utf8, false)
}

/// A list of `item` values (the item itself never null).
fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(item, false)))
}

fn image_fields() -> Fields {
    Fields::from(vec![required("loc"), text("caption"), text("title"), text("geo_location"), text("license")])
}

fn price_fields() -> Fields {
    Fields::from(vec![required("value"), text("currency"), text("type"), text("resolution")])
}

fn video_fields() -> Fields {
    Fields::from(vec![
        text("thumbnail_loc"),
        text("title"),
        text("description"),
        text("content_loc"),
        text("player_loc"),
        text("player_loc_allow_embed"),
        text("player_loc_autoplay"),
        Field::new("duration", DataType::UInt32, true),
        text("expiration_date"),
        Field::new("rating", DataType::Float32, true),
        Field::new("view_count", DataType::UInt64, true),
        text("publication_date"),
        text("family_friendly"),
        text("restriction"),
        text("restriction_relationship"),
        text("platform"),
        text("platform_relationship"),
        Field::new("prices", list_of(DataType::Struct(price_fields())), false),
        text("requires_subscription"),
        text("uploader"),
        text("uploader_info"),
        text("live"),
        Field::new("tags", list_of(DataType::Utf8), false),
        text("category"),
        text("gallery_loc"),
        text("gallery_title"),
        text("id"),
    ])
}

fn news_fields() -> Fields {
    Fields::from(vec![
        text("publication_name"),
        text("language"),
        text("publication_date"),
        text("title"),
        text("keywords"),
        text("genres"),
        text("stock_tickers"),
        text("access"),
    ])
}

fn alternate_fields() -> Fields {
    Fields::from(vec![required("hreflang"), required("href")])
}

fn geo_fields() -> Fields {
    Fields::from(vec![text("format")])
}

fn attribute_fields() -> Fields {
    Fields::from(vec![required("name"), required("value")])
}

fn data_object_fields() -> Fields {
    Fields::from(vec![
        required("type"),
        text("id"),
        Field::new("attributes", list_of(DataType::Struct(attribute_fields())), false),
    ])
}

/// The Arrow schema of rows with these columns.
pub fn schema(columns: Columns) -> SchemaRef {
    let mut fields = Vec::with_capacity(14);
    if columns.kind {
        fields.push(required("kind"));
    }
    // Rows of failures have no URL, and may have no sitemap.
    let (loc, sitemap) =
        if columns.errors { (text("loc"), text("sitemap")) } else { (required("loc"), required("sitemap")) };
    fields.extend([
        loc,
        text("lastmod"),
        text("changefreq"),
        Field::new("priority", DataType::Float32, true),
        Field::new("images", list_of(DataType::Struct(image_fields())), true),
        Field::new("videos", list_of(DataType::Struct(video_fields())), true),
        Field::new("news", DataType::Struct(news_fields()), true),
        Field::new("alternates", list_of(DataType::Struct(alternate_fields())), true),
        Field::new("geo", DataType::Struct(geo_fields()), true),
        Field::new("pagemap", list_of(DataType::Struct(data_object_fields())), true),
    ]);
    if columns.sitemap {
        fields.push(sitemap);
    }
    if columns.site {
        fields.push(required("site"));
    }
    if columns.errors {
        fields.push(text("errors"));
    }
    Arc::new(Schema::new(fields))
}

/// A list column whose items are kept as values until the batch is cut: the extensions are
/// rare, and a row without any costs one offset.
struct ListCol<T> {
    items: Vec<T>,
    /// `offsets[i]..offsets[i + 1]` are row i's items.
    offsets: Vec<i32>,
    /// Row i has the list at all (a `read` row of a sitemap has none).
    valid: Vec<bool>,
}

impl<T: Clone> ListCol<T> {
    fn new() -> Self {
        ListCol { items: Vec::new(), offsets: vec![0], valid: Vec::new() }
    }

    fn push(&mut self, items: Option<&[T]>) {
        if let Some(items) = items {
            self.items.extend_from_slice(items);
        }
        self.offsets.push(self.items.len() as i32);
        self.valid.push(items.is_some());
    }

    /// The list array of the rows pushed, its items built by `values`; the column is emptied.
    fn finish(
        &mut self,
        fields: Fields,
        values: impl FnOnce(&[T]) -> Result<Vec<ArrayRef>, ArrowError>,
    ) -> Result<ArrayRef, ArrowError> {
        let items = std::mem::take(&mut self.items);
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let valid = std::mem::take(&mut self.valid);
        let structs = StructArray::try_new(fields.clone(), values(items.as_slice())?, None)?;
        let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
        let field = Arc::new(Field::new_list_field(DataType::Struct(fields), false));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        Ok(Arc::new(ListArray::try_new(field, offsets, Arc::new(structs), nulls)?))
    }
}

/// A text column of optional values taken from items.
fn strs<'a, T>(items: &'a [T], f: impl Fn(&'a T) -> Option<&'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter(items.iter().map(f)))
}

/// A text column of values every item has.
fn strs_required<'a, T>(items: &'a [T], f: impl Fn(&'a T) -> &'a str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(items.iter().map(f)))
}

fn image_values(v: &[Image]) -> Result<Vec<ArrayRef>, ArrowError> {
    Ok(vec![
        strs_required(v, |i| &i.loc),
        strs(v, |i| i.caption.as_deref()),
        strs(v, |i| i.title.as_deref()),
        strs(v, |i| i.geo_location.as_deref()),
        strs(v, |i| i.license.as_deref()),
    ])
}

fn alternate_values(v: &[Alternate]) -> Result<Vec<ArrayRef>, ArrowError> {
    Ok(vec![strs_required(v, |a| &a.hreflang), strs_required(v, |a| &a.href)])
}

fn price_values(v: &[&VideoPrice]) -> Result<Vec<ArrayRef>, ArrowError> {
    Ok(vec![
        strs_required(v, |p| &p.value),
        strs(v, |p| p.currency.as_deref()),
        strs(v, |p| p.kind.as_deref()),
        strs(v, |p| p.resolution.as_deref()),
    ])
}

/// The struct items of the `videos` lists (with their own nested `prices` and `tags`).
fn video_values(v: &[Video]) -> Result<Vec<ArrayRef>, ArrowError> {
    let mut prices = ListCol::<&VideoPrice>::new();
    let mut tag_offsets = vec![0i32];
    let mut tags: Vec<&str> = Vec::new();
    for video in v {
        prices.push(Some(video.prices.iter().collect::<Vec<_>>().as_slice()));
        tags.extend(video.tags.iter().map(String::as_str));
        tag_offsets.push(tags.len() as i32);
    }
    let prices = prices.finish(price_fields(), price_values)?;
    let tags = Arc::new(ListArray::try_new(
        Arc::new(Field::new_list_field(DataType::Utf8, false)),
        OffsetBuffer::new(ScalarBuffer::from(tag_offsets)),
        Arc::new(StringArray::from_iter_values(tags)),
        None,
    )?);
    Ok(vec![
        strs(v, |x| x.thumbnail_loc.as_deref()),
        strs(v, |x| x.title.as_deref()),
        strs(v, |x| x.description.as_deref()),
        strs(v, |x| x.content_loc.as_deref()),
        strs(v, |x| x.player_loc.as_deref()),
        strs(v, |x| x.player_loc_allow_embed.as_deref()),
        strs(v, |x| x.player_loc_autoplay.as_deref()),
        Arc::new(UInt32Array::from_iter(v.iter().map(|x| x.duration))),
        strs(v, |x| x.expiration_date.as_deref()),
        Arc::new(Float32Array::from_iter(v.iter().map(|x| x.rating))),
        Arc::new(UInt64Array::from_iter(v.iter().map(|x| x.view_count))),
        strs(v, |x| x.publication_date.as_deref()),
        strs(v, |x| x.family_friendly.as_deref()),
        strs(v, |x| x.restriction.as_deref()),
        strs(v, |x| x.restriction_relationship.as_deref()),
        strs(v, |x| x.platform.as_deref()),
        strs(v, |x| x.platform_relationship.as_deref()),
        prices,
        strs(v, |x| x.requires_subscription.as_deref()),
        strs(v, |x| x.uploader.as_deref()),
        strs(v, |x| x.uploader_info.as_deref()),
        strs(v, |x| x.live.as_deref()),
        tags,
        strs(v, |x| x.category.as_deref()),
        strs(v, |x| x.gallery_loc.as_deref()),
        strs(v, |x| x.gallery_title.as_deref()),
        strs(v, |x| x.id.as_deref()),
    ])
}

fn news_values(v: &[Option<News>]) -> Vec<ArrayRef> {
    let f = |get: fn(&News) -> Option<&str>| -> ArrayRef { strs(v, move |n| n.as_ref().and_then(get)) };
    vec![
        f(|n| n.publication_name.as_deref()),
        f(|n| n.language.as_deref()),
        f(|n| n.publication_date.as_deref()),
        f(|n| n.title.as_deref()),
        f(|n| n.keywords.as_deref()),
        f(|n| n.genres.as_deref()),
        f(|n| n.stock_tickers.as_deref()),
        f(|n| n.access.as_deref()),
    ]
}

fn attribute_values(v: &[&PageMapAttribute]) -> Result<Vec<ArrayRef>, ArrowError> {
    Ok(vec![strs_required(v, |a| &a.name), strs_required(v, |a| &a.value)])
}

/// The struct items of the `pagemap` lists (with their own nested `attributes`).
fn data_object_values(v: &[DataObject]) -> Result<Vec<ArrayRef>, ArrowError> {
    let mut attributes = ListCol::<&PageMapAttribute>::new();
    for o in v {
        attributes.push(Some(o.attributes.iter().collect::<Vec<_>>().as_slice()));
    }
    Ok(vec![
        strs_required(v, |o| &o.kind),
        strs(v, |o| o.id.as_deref()),
        attributes.finish(attribute_fields(), attribute_values)?,
    ])
}

/// A struct column of optional values (`news`, `geo`): null where a row has none.
fn struct_column<T>(fields: Fields, v: &[Option<T>], values: Vec<ArrayRef>) -> Result<ArrayRef, ArrowError> {
    let nulls =
        v.iter().any(Option::is_none).then(|| NullBuffer::from(v.iter().map(Option::is_some).collect::<Vec<bool>>()));
    Ok(Arc::new(StructArray::try_new(fields, values, nulls)?))
}

/// Rows pushed one at a time and cut into [`RecordBatch`]es of the [`schema`] of its columns.
pub struct RowBuilder {
    columns: Columns,
    schema: SchemaRef,
    rows: usize,
    /// Bytes of text pushed since the last cut (an estimate that counts the URLs).
    bytes: usize,
    kind: StringBuilder,
    loc: StringBuilder,
    lastmod: StringBuilder,
    changefreq: StringBuilder,
    priority: Float32Builder,
    // Alike on purpose: one column per part of an entry, in the order of the reader's fields
    // (mapwright-core's read/xml/mod.rs).
    images: ListCol<Image>,
    videos: ListCol<Video>,
    news: Vec<Option<News>>,
    alternates: ListCol<Alternate>,
    geo: Vec<Option<Geo>>,
    pagemap: ListCol<DataObject>,
    sitemap: StringBuilder,
    site: StringBuilder,
    errors: StringBuilder,
}

impl RowBuilder {
    /// An empty builder of rows with these columns.
    pub fn new(columns: Columns) -> Self {
        RowBuilder {
            columns,
            schema: schema(columns),
            rows: 0,
            bytes: 0,
            kind: StringBuilder::new(),
            loc: StringBuilder::new(),
            lastmod: StringBuilder::new(),
            changefreq: StringBuilder::new(),
            priority: Float32Builder::new(),
            images: ListCol::new(),
            videos: ListCol::new(),
            news: Vec::new(),
            alternates: ListCol::new(),
            geo: Vec::new(),
            pagemap: ListCol::new(),
            sitemap: StringBuilder::new(),
            site: StringBuilder::new(),
            errors: StringBuilder::new(),
        }
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows pushed since the last batch was cut.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// No row pushed since the last batch was cut.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Enough rows (or bytes) are held for a batch: cut it now to keep memory flat.
    pub fn is_full(&self) -> bool {
        self.rows >= BATCH_ROWS || self.bytes >= BATCH_BYTES
    }

    fn common(&mut self, loc: &mapwright_core::Loc, lastmod: Option<&mapwright_core::Lastmod>) {
        let loc = if self.columns.normalized_loc { loc.as_str() } else { loc.written() };
        self.rows += 1;
        self.bytes += loc.len() + 64;
        self.loc.append_value(loc);
        match lastmod {
            Some(l) => {
                // Written into the column's buffer: no String per row.
                let _ = write!(self.lastmod, "{l}");
                self.lastmod.append_value("");
            }
            None => self.lastmod.append_null(),
        }
    }

    fn url_fields(&mut self, u: &UrlEntry) {
        self.common(&u.loc, u.lastmod.as_ref());
        self.changefreq.append_option(u.changefreq.map(|c| c.as_str()));
        self.priority.append_option(u.priority);
        let x = u.ext();
        self.images.push(Some(x.images.as_slice()));
        self.videos.push(Some(x.videos.as_slice()));
        self.news.push(x.news.as_deref().cloned());
        self.alternates.push(Some(x.alternates.as_slice()));
        self.geo.push(x.geo.as_deref().cloned());
        self.pagemap.push(Some(x.pagemap.as_slice()));
        if !x.is_empty() {
            // Rough, but proportional: the extensions are text.
            let objects: usize = x.pagemap.iter().map(|o| 1 + o.attributes.len()).sum();
            self.bytes += 256 * (x.images.len() + 4 * x.videos.len() + x.alternates.len() + objects);
        }
    }

    /// A discovered URL, found in `sitemap` for `site` (each used only when its column is there).
    pub fn push_url(&mut self, u: &UrlEntry, sitemap: &str, site: &str) {
        self.push_kind("url");
        self.url_fields(u);
        if self.columns.sitemap {
            self.bytes += sitemap.len();
        }
        if self.columns.site {
            self.bytes += site.len();
        }
        self.row_end(Some(sitemap), site, None);
    }

    /// A failure as a row (with the `errors` column only): the sitemap that failed (`None`
    /// when the site failed as a whole), the site, and why; every other value null.
    pub fn push_error(&mut self, sitemap: Option<&str>, site: &str, why: &str) {
        if !self.columns.errors {
            return;
        }
        self.push_kind("error");
        self.rows += 1;
        self.bytes += why.len() + 64;
        self.loc.append_null();
        self.lastmod.append_null();
        self.no_url_fields();
        self.row_end(sitemap, site, Some(why));
    }

    /// An entry as `read` gives it: a URL, or a sitemap an index lists (its lastmod only).
    pub fn push_entry(&mut self, e: &Entry) {
        match e {
            Entry::Url(u) => self.push_url(u, "", ""),
            Entry::Sitemap(s) => {
                self.push_kind("sitemap");
                self.common(&s.loc, s.lastmod.as_ref());
                self.no_url_fields();
                self.row_end(Some(""), "", None);
            }
        }
    }

    /// The row's `kind`, when that column is asked for.
    fn push_kind(&mut self, kind: &str) {
        if self.columns.kind {
            self.kind.append_value(kind);
        }
    }

    /// Nulls for the columns only a URL fills (`changefreq` to `pagemap`), for a row that is
    /// an index's sitemap or a failure.
    fn no_url_fields(&mut self) {
        self.changefreq.append_null();
        self.priority.append_null();
        self.images.push(None);
        self.videos.push(None);
        self.news.push(None);
        self.alternates.push(None);
        self.geo.push(None);
        self.pagemap.push(None);
    }

    /// The row's last columns, each when asked for: its sitemap, its site and its error.
    fn row_end(&mut self, sitemap: Option<&str>, site: &str, error: Option<&str>) {
        if self.columns.sitemap {
            self.sitemap.append_option(sitemap);
        }
        if self.columns.site {
            self.site.append_value(site);
        }
        if self.columns.errors {
            self.errors.append_option(error);
        }
    }

    /// The rows pushed since the last cut, as one batch; the builder starts empty again.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(14);
        if self.columns.kind {
            columns.push(Arc::new(self.kind.finish()));
        }
        columns.push(Arc::new(self.loc.finish()));
        columns.push(Arc::new(self.lastmod.finish()));
        columns.push(Arc::new(self.changefreq.finish()));
        columns.push(Arc::new(self.priority.finish()));
        columns.push(self.images.finish(image_fields(), image_values)?);
        columns.push(self.videos.finish(video_fields(), video_values)?);
        let news = std::mem::take(&mut self.news);
        columns.push(struct_column(news_fields(), &news, news_values(&news))?);
        columns.push(self.alternates.finish(alternate_fields(), alternate_values)?);
        let geo = std::mem::take(&mut self.geo);
        let format = strs(&geo, |g| g.as_ref().and_then(|g| g.format.as_deref()));
        columns.push(struct_column(geo_fields(), &geo, vec![format])?);
        columns.push(self.pagemap.finish(data_object_fields(), data_object_values)?);
        if self.columns.sitemap {
            columns.push(Arc::new(self.sitemap.finish()));
        }
        if self.columns.site {
            columns.push(Arc::new(self.site.finish()));
        }
        if self.columns.errors {
            columns.push(Arc::new(self.errors.finish()));
        }
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(self.schema.clone(), columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use mapwright_core::{ReadOptions, SitemapReader};

    fn entries(xml: &str) -> Vec<Entry> {
        let mut r = SitemapReader::new(xml.as_bytes(), ReadOptions::default()).unwrap();
        let mut out = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            out.push(e);
        }
        out
    }

    /// Every column of a row with every extension, and a plain row after it: the nested
    /// offsets line up and a batch starts empty after a cut.
    #[test]
    fn a_row_with_every_extension_and_one_without() {
        let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
            xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
            xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
            xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
            xmlns:xhtml="http://www.w3.org/1999/xhtml"
            xmlns:geo="http://www.google.com/geo/schemas/sitemap/1.0">
          <url><loc>https://e.com/a</loc><lastmod>2024-05-01T10:20:30.5+02:00</lastmod><priority>0.8</priority>
            <image:image><image:loc>https://e.com/1.jpg</image:loc><image:title>One</image:title></image:image>
            <image:image><image:loc>https://e.com/2.jpg</image:loc></image:image>
            <video:video><video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc><video:title>V</video:title>
              <video:description>D</video:description><video:content_loc>https://e.com/v.mp4</video:content_loc>
              <video:duration>60</video:duration><video:price currency="EUR">1.50</video:price>
              <video:tag>a</video:tag><video:tag>b</video:tag></video:video>
            <news:news><news:publication><news:name>P</news:name><news:language>en</news:language></news:publication>
              <news:publication_date>2024-05-01</news:publication_date><news:title>T</news:title></news:news>
            <xhtml:link rel="alternate" hreflang="de" href="https://e.com/de/a"/>
            <geo:geo><geo:format>kml</geo:format></geo:geo>
            <PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0">
              <DataObject type="document" id="d1"><Attribute name="title">T</Attribute>
                <Attribute name="rating" value="4"/></DataObject></PageMap>
          </url>
          <url><loc>https://e.com/b</loc></url>
        </urlset>"#;
        let mut b = RowBuilder::new(Columns::SITES);
        for e in entries(xml) {
            let Entry::Url(u) = e else { panic!("a URL") };
            b.push_url(&u, "https://e.com/s.xml", "https://e.com/");
        }
        let batch = b.finish().unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert!(b.is_empty());
        let images = batch.column_by_name("images").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(images.value_offsets(), &[0, 2, 2]);
        let videos = batch.column_by_name("videos").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(videos.value_length(0), 1);
        let video = videos.value(0);
        let video = video.as_any().downcast_ref::<StructArray>().unwrap();
        let tags = video.column_by_name("tags").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(tags.value_length(0), 2);
        let news = batch.column_by_name("news").unwrap();
        assert!(news.is_valid(0) && news.is_null(1));
        let lastmod = batch.column_by_name("lastmod").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(lastmod.value(0), "2024-05-01T10:20:30.5+02:00");
        assert!(lastmod.is_null(1));
        let geo = batch.column_by_name("geo").unwrap().as_any().downcast_ref::<StructArray>().unwrap();
        assert!(geo.is_valid(0) && geo.is_null(1));
        let format = geo.column_by_name("format").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(format.value(0), "kml");
        let pagemap = batch.column_by_name("pagemap").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(pagemap.value_offsets(), &[0, 1, 1]);
        let object = pagemap.value(0);
        let object = object.as_any().downcast_ref::<StructArray>().unwrap();
        let kind = object.column_by_name("type").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(kind.value(0), "document");
        let attributes = object.column_by_name("attributes").unwrap().as_any().downcast_ref::<ListArray>().unwrap();
        let attributes = attributes.value(0);
        let attributes = attributes.as_any().downcast_ref::<StructArray>().unwrap();
        let values = attributes.column_by_name("value").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((values.value(0), values.value(1)), ("T", "4"));
        assert_eq!(
            batch.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(),
            [
                "loc",
                "lastmod",
                "changefreq",
                "priority",
                "images",
                "videos",
                "news",
                "alternates",
                "geo",
                "pagemap",
                "sitemap",
                "site"
            ]
        );
    }

    /// Rows of failures (`errors`): null `loc`, the sitemap when known, the cause; the rows of
    /// URLs beside them have a null `errors`. Without the column nothing is pushed.
    #[test]
    fn rows_of_failures() {
        let mut b = RowBuilder::new(Columns::SITES.with_errors(true));
        for e in entries(
            r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.com/a</loc></url></urlset>"#,
        ) {
            let Entry::Url(u) = e else { panic!("a URL") };
            b.push_url(&u, "https://e.com/s.xml", "https://e.com/");
        }
        b.push_error(Some("https://e.com/gone.xml"), "https://e.com/", "404");
        b.push_error(None, "https://f.com/", "no sitemap found");
        let batch = b.finish().unwrap();
        let col = |n: &str| batch.column_by_name(n).unwrap().as_any().downcast_ref::<StringArray>().unwrap().clone();
        let (loc, sitemap, errors) = (col("loc"), col("sitemap"), col("errors"));
        assert_eq!(batch.num_rows(), 3);
        assert!(loc.is_valid(0) && loc.is_null(1) && loc.is_null(2));
        assert_eq!(sitemap.value(1), "https://e.com/gone.xml");
        assert!(sitemap.is_null(2));
        assert!(errors.is_null(0));
        assert_eq!((errors.value(1), errors.value(2)), ("404", "no sitemap found"));
        let mut plain = RowBuilder::new(Columns::SITES);
        plain.push_error(None, "https://f.com/", "no sitemap found");
        assert!(plain.is_empty());
        assert!(plain.schema().field_with_name("errors").is_err());
    }

    /// `read`'s rows: an index's sitemaps have a kind and null lists.
    #[test]
    fn read_rows_of_an_index() {
        let xml = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <sitemap><loc>https://e.com/1.xml</loc><lastmod>2024</lastmod></sitemap></sitemapindex>"#;
        let mut b = RowBuilder::new(Columns::READ);
        for e in entries(xml) {
            b.push_entry(&e);
        }
        let batch = b.finish().unwrap();
        assert_eq!(batch.schema().field(0).name(), "kind");
        assert!(batch.column_by_name("images").unwrap().is_null(0));
        assert!(batch.column_by_name("sitemap").is_none());
    }
}
