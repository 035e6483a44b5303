//! XML sitemaps: `<urlset>` (with the image, video, news, geo, PageMap and hreflang extensions) and
//! `<sitemapindex>`, one entry at a time into any [`Write`].

use super::Namespaces;
use super::escape::{self, digits};
use crate::date::{Lastmod, Precision, Tz, W3cDateTime};
use crate::error::Error;
use crate::model::{DataObject, Image, News, SitemapEntry, UrlEntry, Video};
use crate::{NS_GEO, NS_IMAGE, NS_NEWS, NS_PAGEMAP, NS_SITEMAP, NS_VIDEO, NS_XHTML};
use std::io::Write;

/// The XML declaration every file starts with.
const DECL: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
/// Closes a `<urlset>`.
pub const URLSET_END: &[u8] = b"</urlset>\n";
/// Closes a `<sitemapindex>`.
pub const INDEX_END: &[u8] = b"</sitemapindex>\n";

/// Appends the declaration and the `<urlset>` start tag declaring exactly `ns`.
pub fn urlset_start(out: &mut Vec<u8>, ns: Namespaces) {
    out.extend_from_slice(DECL);
    out.extend_from_slice(b"<urlset xmlns=\"");
    out.extend_from_slice(NS_SITEMAP.as_bytes());
    out.push(b'"');
    for (on, prefix, uri) in [
        (ns.image, "image", NS_IMAGE),
        (ns.video, "video", NS_VIDEO),
        (ns.news, "news", NS_NEWS),
        (ns.xhtml, "xhtml", NS_XHTML),
        (ns.geo, "geo", NS_GEO),
    ] {
        if on {
            out.extend_from_slice(b" xmlns:");
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(b"=\"");
            out.extend_from_slice(uri.as_bytes());
            out.push(b'"');
        }
    }
    out.extend_from_slice(b">\n");
}

/// Appends the declaration and the `<sitemapindex>` start tag.
pub fn index_start(out: &mut Vec<u8>) {
    out.extend_from_slice(DECL);
    out.extend_from_slice(b"<sitemapindex xmlns=\"");
    out.extend_from_slice(NS_SITEMAP.as_bytes());
    out.extend_from_slice(b"\">\n");
}

/// Appends a `lastmod` value in a form the official XSD accepts: a year or month is widened to
/// its first day, a time to the minute gets `:00` seconds, a leap second is written as 59, a
/// time without a zone gets `Z` (how readers take it), and
/// a [`Lastmod::Text`] is written from its typed value.
pub fn lastmod(out: &mut Vec<u8>, l: &Lastmod) {
    w3c(out, l.value());
}

fn w3c(out: &mut Vec<u8>, v: &W3cDateTime) {
    digits(out, u32::from(v.year.max(1)), 4);
    out.push(b'-');
    let (month, day) = match v.precision {
        Precision::Year => (1, 1),
        Precision::Month => (v.month, 1),
        _ => (v.month, v.day),
    };
    digits(out, u32::from(month), 2);
    out.push(b'-');
    digits(out, u32::from(day), 2);
    if v.precision <= Precision::Day {
        return;
    }
    out.push(b'T');
    digits(out, u32::from(v.hour), 2);
    out.push(b':');
    digits(out, u32::from(v.minute), 2);
    out.push(b':');
    digits(out, u32::from(v.second.min(59)), 2);
    if v.precision == Precision::Fraction {
        let n = u32::from(v.frac_digits.clamp(1, 9));
        out.push(b'.');
        digits(out, v.nanos / 10u32.pow(9 - n), n as usize);
    }
    match v.tz {
        Some(Tz::Utc) => out.push(b'Z'),
        Some(Tz::Offset(m)) => {
            out.push(if m < 0 { b'-' } else { b'+' });
            let m = u32::from(m.unsigned_abs());
            digits(out, m / 60, 2);
            out.push(b':');
            digits(out, m % 60, 2);
        }
        // W3C Datetime requires a zone with a time; a zone-less reading counts as UTC.
        None => out.push(b'Z'),
    }
}

#[inline]
fn element(out: &mut Vec<u8>, name: &[u8], value: &str) {
    out.push(b'<');
    out.extend_from_slice(name);
    out.push(b'>');
    escape::text(out, value);
    out.extend_from_slice(b"</");
    out.extend_from_slice(name);
    out.push(b'>');
}

fn opt(out: &mut Vec<u8>, name: &[u8], value: &Option<String>) {
    if let Some(v) = value {
        element(out, name, v);
    }
}

/// Appends one `<url>` element and a newline. The caller makes sure the namespaces of its
/// extensions are declared ([`Namespaces::of`]).
pub fn url(out: &mut Vec<u8>, e: &UrlEntry) {
    out.extend_from_slice(b"<url><loc>");
    escape::loc(out, e.loc.as_str());
    out.extend_from_slice(b"</loc>");
    if let Some(l) = &e.lastmod {
        out.extend_from_slice(b"<lastmod>");
        lastmod(out, l);
        out.extend_from_slice(b"</lastmod>");
    }
    if let Some(c) = e.changefreq {
        out.extend_from_slice(b"<changefreq>");
        out.extend_from_slice(c.as_str().as_bytes());
        out.extend_from_slice(b"</changefreq>");
    }
    if let Some(p) = e.priority.filter(|p| !p.is_nan()) {
        out.extend_from_slice(b"<priority>");
        escape::decimal(out, p.clamp(0.0, 1.0));
        out.extend_from_slice(b"</priority>");
    }
    let x = e.ext();
    for i in &x.images {
        image(out, i);
    }
    for v in &x.videos {
        video(out, v);
    }
    if let Some(n) = &x.news {
        news(out, n);
    }
    for a in &x.alternates {
        out.extend_from_slice(b"<xhtml:link rel=\"alternate\" hreflang=\"");
        escape::attr(out, &a.hreflang);
        out.extend_from_slice(b"\" href=\"");
        escape::attr(out, &a.href);
        out.extend_from_slice(b"\"/>");
    }
    if let Some(g) = &x.geo {
        out.extend_from_slice(b"<geo:geo>");
        opt(out, b"geo:format", &g.format);
        out.extend_from_slice(b"</geo:geo>");
    }
    if !x.pagemap.is_empty() {
        pagemap(out, &x.pagemap);
    }
    out.extend_from_slice(b"</url>\n");
}

/// A `<PageMap>` declaring its own (default) namespace, so the root needs no declaration.
fn pagemap(out: &mut Vec<u8>, objects: &[DataObject]) {
    out.extend_from_slice(b"<PageMap xmlns=\"");
    out.extend_from_slice(NS_PAGEMAP.as_bytes());
    out.extend_from_slice(b"\">");
    for o in objects {
        out.extend_from_slice(b"<DataObject type=\"");
        escape::attr(out, &o.kind);
        if let Some(id) = &o.id {
            out.extend_from_slice(b"\" id=\"");
            escape::attr(out, id);
        }
        out.extend_from_slice(b"\">");
        for a in &o.attributes {
            out.extend_from_slice(b"<Attribute name=\"");
            escape::attr(out, &a.name);
            out.extend_from_slice(b"\">");
            escape::text(out, &a.value);
            out.extend_from_slice(b"</Attribute>");
        }
        out.extend_from_slice(b"</DataObject>");
    }
    out.extend_from_slice(b"</PageMap>");
}

// Alike on purpose: each extension's encoder (image, video, news, ...) has this shape, one call per
// element in the order its schema fixes; a table of names would hide that order and cost a branch
// per field.
fn image(out: &mut Vec<u8>, i: &Image) {
    out.extend_from_slice(b"<image:image>");
    element(out, b"image:loc", &i.loc);
    opt(out, b"image:caption", &i.caption);
    opt(out, b"image:geo_location", &i.geo_location);
    opt(out, b"image:title", &i.title);
    opt(out, b"image:license", &i.license);
    out.extend_from_slice(b"</image:image>");
}

/// An element with optional attributes: `(name, value)` pairs, written only when set.
fn with_attrs(out: &mut Vec<u8>, name: &[u8], value: &str, attrs: &[(&[u8], &Option<String>)]) {
    out.push(b'<');
    out.extend_from_slice(name);
    for (k, v) in attrs {
        if let Some(v) = v {
            out.push(b' ');
            out.extend_from_slice(k);
            out.extend_from_slice(b"=\"");
            escape::attr(out, v);
            out.push(b'"');
        }
    }
    out.push(b'>');
    escape::text(out, value);
    out.extend_from_slice(b"</");
    out.extend_from_slice(name);
    out.push(b'>');
}

// Alike on purpose: shaped as `image` above (see there).
/// Fields in the order of Google's video schema.
fn video(out: &mut Vec<u8>, v: &Video) {
    out.extend_from_slice(b"<video:video>");
    opt(out, b"video:thumbnail_loc", &v.thumbnail_loc);
    opt(out, b"video:title", &v.title);
    opt(out, b"video:description", &v.description);
    opt(out, b"video:content_loc", &v.content_loc);
    if let Some(p) = &v.player_loc {
        let attrs: [(&[u8], _); 2] =
            [(b"allow_embed", &v.player_loc_allow_embed), (b"autoplay", &v.player_loc_autoplay)];
        with_attrs(out, b"video:player_loc", p, &attrs);
    }
    if let Some(d) = v.duration {
        out.extend_from_slice(b"<video:duration>");
        escape::uint(out, u64::from(d));
        out.extend_from_slice(b"</video:duration>");
    }
    opt(out, b"video:expiration_date", &v.expiration_date);
    if let Some(r) = v.rating.filter(|r| r.is_finite()) {
        out.extend_from_slice(b"<video:rating>");
        escape::decimal(out, r.clamp(0.0, 5.0));
        out.extend_from_slice(b"</video:rating>");
    }
    if let Some(c) = v.view_count {
        out.extend_from_slice(b"<video:view_count>");
        escape::uint(out, c);
        out.extend_from_slice(b"</video:view_count>");
    }
    opt(out, b"video:publication_date", &v.publication_date);
    for t in &v.tags {
        element(out, b"video:tag", t);
    }
    opt(out, b"video:category", &v.category);
    opt(out, b"video:family_friendly", &v.family_friendly);
    if let Some(r) = &v.restriction {
        with_attrs(out, b"video:restriction", r, &[(b"relationship", &v.restriction_relationship)]);
    }
    if let Some(g) = &v.gallery_loc {
        with_attrs(out, b"video:gallery_loc", g, &[(b"title", &v.gallery_title)]);
    }
    for p in &v.prices {
        let attrs: [(&[u8], _); 3] = [(b"currency", &p.currency), (b"type", &p.kind), (b"resolution", &p.resolution)];
        with_attrs(out, b"video:price", &p.value, &attrs);
    }
    opt(out, b"video:requires_subscription", &v.requires_subscription);
    if let Some(u) = &v.uploader {
        with_attrs(out, b"video:uploader", u, &[(b"info", &v.uploader_info)]);
    }
    if let Some(p) = &v.platform {
        with_attrs(out, b"video:platform", p, &[(b"relationship", &v.platform_relationship)]);
    }
    opt(out, b"video:live", &v.live);
    opt(out, b"video:id", &v.id);
    out.extend_from_slice(b"</video:video>");
}

fn news(out: &mut Vec<u8>, n: &News) {
    out.extend_from_slice(b"<news:news>");
    if n.publication_name.is_some() || n.language.is_some() {
        out.extend_from_slice(b"<news:publication>");
        opt(out, b"news:name", &n.publication_name);
        opt(out, b"news:language", &n.language);
        out.extend_from_slice(b"</news:publication>");
    }
    opt(out, b"news:access", &n.access);
    opt(out, b"news:genres", &n.genres);
    opt(out, b"news:publication_date", &n.publication_date);
    opt(out, b"news:title", &n.title);
    opt(out, b"news:keywords", &n.keywords);
    opt(out, b"news:stock_tickers", &n.stock_tickers);
    out.extend_from_slice(b"</news:news>");
}

/// Appends one `<sitemap>` element of an index and a newline.
pub fn sitemap(out: &mut Vec<u8>, e: &SitemapEntry) {
    out.extend_from_slice(b"<sitemap><loc>");
    escape::loc(out, e.loc.as_str());
    out.extend_from_slice(b"</loc>");
    if let Some(l) = &e.lastmod {
        out.extend_from_slice(b"<lastmod>");
        lastmod(out, l);
        out.extend_from_slice(b"</lastmod>");
    }
    out.extend_from_slice(b"</sitemap>\n");
}

/// Writes a `<urlset>` one entry at a time.
///
/// The namespaces are declared in the root element, before the first entry is known, so the
/// caller says which extensions it will use; an entry needing another one is refused with
/// [`Error::UndeclaredExtension`] rather than written as XML no parser would accept.
pub struct UrlsetWriter<W: Write> {
    out: W,
    ns: Namespaces,
    buf: Vec<u8>,
    urls: u64,
    bytes: u64,
}

impl<W: Write> UrlsetWriter<W> {
    /// Writes the declaration and the root element declaring `ns`.
    pub fn new(mut out: W, ns: Namespaces) -> Result<Self, Error> {
        let mut buf = Vec::with_capacity(1024);
        urlset_start(&mut buf, ns);
        out.write_all(&buf)?;
        Ok(UrlsetWriter { out, ns, urls: 0, bytes: buf.len() as u64, buf })
    }

    /// Writes one `<url>`.
    pub fn write(&mut self, e: &UrlEntry) -> Result<(), Error> {
        if !self.ns.covers(e) {
            return Err(Error::UndeclaredExtension { loc: e.loc.to_string() });
        }
        self.buf.clear();
        url(&mut self.buf, e);
        self.out.write_all(&self.buf)?;
        self.urls += 1;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// Entries written so far.
    pub fn urls(&self) -> u64 {
        self.urls
    }

    /// Bytes written so far, without the closing tag.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Closes the root element, flushes, and gives the output back.
    pub fn finish(mut self) -> Result<W, Error> {
        self.out.write_all(URLSET_END)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes a `<sitemapindex>` one entry at a time.
pub struct IndexWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    count: u64,
}

impl<W: Write> IndexWriter<W> {
    /// Writes the declaration and the root element.
    pub fn new(mut out: W) -> Result<Self, Error> {
        let mut buf = Vec::with_capacity(256);
        index_start(&mut buf);
        out.write_all(&buf)?;
        Ok(IndexWriter { out, buf, count: 0 })
    }

    /// Writes one `<sitemap>`.
    pub fn write(&mut self, e: &SitemapEntry) -> Result<(), Error> {
        self.buf.clear();
        sitemap(&mut self.buf, e);
        self.out.write_all(&self.buf)?;
        self.count += 1;
        Ok(())
    }

    /// Entries written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Closes the root element, flushes, and gives the output back.
    pub fn finish(mut self) -> Result<W, Error> {
        self.out.write_all(INDEX_END)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
