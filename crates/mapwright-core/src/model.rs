//! The entry model: what a sitemap lists, whatever format it came in.

use crate::date::Lastmod;
use crate::loc::Loc;
use serde::Serialize;
use std::fmt;

/// How often a page changes: a hint, never a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeFreq {
    /// Changes on every access.
    Always,
    /// Hourly.
    Hourly,
    /// Daily.
    Daily,
    /// Weekly.
    Weekly,
    /// Monthly.
    Monthly,
    /// Yearly.
    Yearly,
    /// Archived.
    Never,
}

impl ChangeFreq {
    /// All seven values, in protocol order.
    pub const ALL: [ChangeFreq; 7] = [
        ChangeFreq::Always,
        ChangeFreq::Hourly,
        ChangeFreq::Daily,
        ChangeFreq::Weekly,
        ChangeFreq::Monthly,
        ChangeFreq::Yearly,
        ChangeFreq::Never,
    ];

    /// The protocol's lower-case word.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeFreq::Always => "always",
            ChangeFreq::Hourly => "hourly",
            ChangeFreq::Daily => "daily",
            ChangeFreq::Weekly => "weekly",
            ChangeFreq::Monthly => "monthly",
            ChangeFreq::Yearly => "yearly",
            ChangeFreq::Never => "never",
        }
    }

    /// Exactly one of the seven words (case matters, as the schema says).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// [`ChangeFreq::parse`] on bytes, by length and first letter first (the reader's hot path).
    pub(crate) fn parse_bytes(b: &[u8]) -> Option<Self> {
        let c = match (b.len(), b.first()?) {
            (6, b'a') => ChangeFreq::Always,
            (6, b'h') => ChangeFreq::Hourly,
            (5, b'd') => ChangeFreq::Daily,
            (6, b'w') => ChangeFreq::Weekly,
            (7, b'm') => ChangeFreq::Monthly,
            (6, b'y') => ChangeFreq::Yearly,
            (5, b'n') => ChangeFreq::Never,
            _ => return None,
        };
        (c.as_str().as_bytes() == b).then_some(c)
    }

    /// One of the seven words at the start of `b` followed by a `<` (the reader's hot path, in
    /// the XML: the `<` ends the text), and the word's length. The word and its `<` (at most
    /// eight bytes) are compared in one machine word.
    #[inline(always)]
    pub(crate) fn scan_xml(b: &[u8]) -> Option<(Self, usize)> {
        let c = match *b.first()? {
            b'a' => ChangeFreq::Always,
            b'h' => ChangeFreq::Hourly,
            b'd' => ChangeFreq::Daily,
            b'w' => ChangeFreq::Weekly,
            b'm' => ChangeFreq::Monthly,
            b'y' => ChangeFreq::Yearly,
            b'n' => ChangeFreq::Never,
            _ => return None,
        };
        let w = crate::word::word(b, 0)?;
        let n = c.as_str().len();
        let mask = u64::MAX >> (8 * (7 - n));
        (w & mask == XML_WORDS[c as usize]).then_some((c, n))
    }

    /// The word in any case (`DAILY`): what a lenient reader accepts with a finding.
    pub fn parse_ignore_case(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for ChangeFreq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ChangeFreq {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s)
            .ok_or_else(|| format!("{s:?} is not one of always, hourly, daily, weekly, monthly, yearly, never"))
    }
}

/// Each [`ChangeFreq`] word and the `<` after it, as the little-endian machine word
/// [`ChangeFreq::scan_xml`] compares.
const XML_WORDS: [u64; 7] = {
    let mut out = [0u64; 7];
    let mut i = 0;
    while i < 7 {
        let w = ChangeFreq::ALL[i].as_str().as_bytes();
        let mut v = (b'<' as u64) << (8 * w.len());
        let mut k = 0;
        while k < w.len() {
            v |= (w[k] as u64) << (8 * k);
            k += 1;
        }
        out[i] = v;
        i += 1;
    }
    out
};

/// An `image:image` of Google's image extension.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Image {
    /// `image:loc`
    pub loc: String,
    /// `image:caption`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// `image:title`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `image:geo_location`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo_location: Option<String>,
    /// `image:license`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

/// A `video:video` of Google's video extension: every field of its schema, text as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Video {
    /// `video:thumbnail_loc` (required by the schema)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thumbnail_loc: Option<String>,
    /// `video:title` (required)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `video:description` (required)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `video:content_loc`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_loc: Option<String>,
    /// `video:player_loc`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_loc: Option<String>,
    /// `video:player_loc@allow_embed` (`yes`/`no`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_loc_allow_embed: Option<String>,
    /// `video:player_loc@autoplay`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_loc_autoplay: Option<String>,
    /// `video:duration`, seconds (1 to 28,800)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<u32>,
    /// `video:expiration_date`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration_date: Option<String>,
    /// `video:rating`, 0.0 to 5.0
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<f32>,
    /// `video:view_count`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view_count: Option<u64>,
    /// `video:publication_date`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publication_date: Option<String>,
    /// `video:family_friendly` (`yes`/`no`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family_friendly: Option<String>,
    /// `video:restriction` (space-separated country codes)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restriction: Option<String>,
    /// `video:restriction@relationship` (`allow`/`deny`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restriction_relationship: Option<String>,
    /// `video:platform` (`web mobile tv`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// `video:platform@relationship`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_relationship: Option<String>,
    /// `video:price` elements
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prices: Vec<VideoPrice>,
    /// `video:requires_subscription` (`yes`/`no`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_subscription: Option<String>,
    /// `video:uploader`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uploader: Option<String>,
    /// `video:uploader@info`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uploader_info: Option<String>,
    /// `video:live` (`yes`/`no`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
    /// `video:tag` elements (up to 32)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// `video:category`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// `video:gallery_loc`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gallery_loc: Option<String>,
    /// `video:gallery_loc@title`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gallery_title: Option<String>,
    /// `video:id` (not in Google's current schema, but written by sitemap.js and others)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// One `video:price`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct VideoPrice {
    /// The amount, as written.
    pub value: String,
    /// `currency` attribute (ISO 4217).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// `type` attribute (`rent`/`own`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `resolution` attribute (`hd`/`sd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
}

/// A `news:news` of Google's news extension.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct News {
    /// `news:publication/news:name`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publication_name: Option<String>,
    /// `news:publication/news:language`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// `news:publication_date`, as written
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publication_date: Option<String>,
    /// `news:title`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `news:keywords`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keywords: Option<String>,
    /// `news:genres`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub genres: Option<String>,
    /// `news:stock_tickers`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock_tickers: Option<String>,
    /// `news:access`
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
}

/// A `geo:geo` of Google's geo extension (namespace [`crate::NS_GEO`]): the page is a
/// geographic file (KML, GeoRSS) rather than a web page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Geo {
    /// `geo:format`: `kml`, `kmz` or `georss`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

/// A `DataObject` of a Google PageMap (`<PageMap xmlns="`[`crate::NS_PAGEMAP`]`">`): structured
/// data about the page, typed, with named attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct DataObject {
    /// The `type` attribute (`document`, `thumbnail`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// The `id` attribute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its `Attribute` elements, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<PageMapAttribute>,
}

/// One `<Attribute name="..">value</Attribute>` of a PageMap `DataObject` (the value as the
/// element's text, or its `value` attribute when it has no text).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct PageMapAttribute {
    /// The `name` attribute.
    pub name: String,
    /// The value.
    pub value: String,
}

/// An hreflang alternate: `<xhtml:link rel="alternate" hreflang=".." href="..">`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Alternate {
    /// Language (and region) code, or `x-default`.
    pub hreflang: String,
    /// The alternate page's URL.
    pub href: String,
}

/// A page listed by a sitemap (`<url>`, a text line, a feed item).
///
/// Its extensions sit behind one pointer, [`UrlEntry::ext`]: nearly every entry has none, and
/// the entry is moved, queued and dropped once per URL on every read. Held inline, their six
/// fields made it 192 bytes (three out-of-line `Vec` drops an entry); behind one `Option<Box>`
/// it is 88.
#[derive(Clone, Debug)]
pub struct UrlEntry {
    /// The page.
    pub loc: Loc,
    /// Last modification of the page.
    pub lastmod: Option<Lastmod>,
    /// How often it changes.
    pub changefreq: Option<ChangeFreq>,
    /// Relative priority, 0.0 to 1.0.
    pub priority: Option<f32>,
    /// The extensions, `None` when there are none (read them with [`UrlEntry::ext`], add
    /// with [`UrlEntry::ext_mut`]). `Some` with every field empty is allowed and means the
    /// same: equality and [`UrlEntry::has_extensions`] look at the contents.
    pub extensions: Option<Box<Extensions>>,
}

/// The extension elements of a `<url>` (image, video, news, hreflang alternates, geo,
/// PageMap): the part of an entry most sitemaps never use (see [`UrlEntry`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    /// Image extension entries.
    pub images: Vec<Image>,
    /// Video extension entries.
    pub videos: Vec<Video>,
    /// News extension entry.
    pub news: Option<Box<News>>,
    /// hreflang alternates.
    pub alternates: Vec<Alternate>,
    /// Geo extension entry.
    pub geo: Option<Box<Geo>>,
    /// PageMap data objects.
    pub pagemap: Vec<DataObject>,
}

impl Extensions {
    /// No extension: what [`UrlEntry::ext`] shows for an entry without any.
    pub const NONE: Extensions = Extensions {
        images: Vec::new(),
        videos: Vec::new(),
        news: None,
        alternates: Vec::new(),
        geo: None,
        pagemap: Vec::new(),
    };

    /// Whether any extension is present.
    pub fn is_empty(&self) -> bool {
        self.images.is_empty()
            && self.videos.is_empty()
            && self.news.is_none()
            && self.alternates.is_empty()
            && self.geo.is_none()
            && self.pagemap.is_empty()
    }
}

/// What [`UrlEntry::ext`] borrows for an entry without extensions.
static NO_EXTENSIONS: Extensions = Extensions::NONE;

impl UrlEntry {
    /// An entry with only a location.
    pub fn new(loc: Loc) -> Self {
        UrlEntry { loc, lastmod: None, changefreq: None, priority: None, extensions: None }
    }

    /// The entry's extensions, empty ones when it has none.
    pub fn ext(&self) -> &Extensions {
        self.extensions.as_deref().unwrap_or(&NO_EXTENSIONS)
    }

    /// The entry's extensions to add to (made empty on first use).
    pub fn ext_mut(&mut self) -> &mut Extensions {
        self.extensions.get_or_insert_with(Box::default)
    }

    /// Whether any extension (image, video, news, alternates, geo, PageMap) is present.
    pub fn has_extensions(&self) -> bool {
        self.extensions.as_deref().is_some_and(|e| !e.is_empty())
    }
}

impl PartialEq for UrlEntry {
    fn eq(&self, other: &Self) -> bool {
        self.loc == other.loc
            && self.lastmod == other.lastmod
            && self.changefreq == other.changefreq
            && self.priority == other.priority
            && self.ext() == other.ext()
    }
}

/// A child sitemap listed by an index (`<sitemap>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SitemapEntry {
    /// The child sitemap's URL.
    pub loc: Loc,
    /// Last modification of the child *file*.
    pub lastmod: Option<Lastmod>,
}

/// One item a reader yields.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// A page.
    Url(UrlEntry),
    /// A child sitemap of an index.
    Sitemap(SitemapEntry),
}

impl Entry {
    /// The entry's location.
    pub fn loc(&self) -> &Loc {
        match self {
            Entry::Url(u) => &u.loc,
            Entry::Sitemap(s) => &s.loc,
        }
    }

    /// The entry's lastmod.
    pub fn lastmod(&self) -> Option<&Lastmod> {
        match self {
            Entry::Url(u) => u.lastmod.as_ref(),
            Entry::Sitemap(s) => s.lastmod.as_ref(),
        }
    }
}

/// What a document turned out to be (detected on content, never on name or Content-Type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `<urlset>`
    Urlset,
    /// `<sitemapindex>`
    #[serde(rename = "sitemapindex")]
    SitemapIndex,
    /// One URL per line.
    Text,
    /// RSS 2.0 (or RSS 1.0/RDF) feed.
    Rss,
    /// Atom 1.0 or 0.3 feed.
    Atom,
    /// An OAI-PMH repository's answer (`ListRecords` pages): each record's http(s)
    /// `dc:identifier` is a URL, as Google Sitemaps read repositories.
    #[serde(rename = "oai-pmh")]
    OaiPmh,
}

impl Format {
    /// Lower-case name (`urlset`, `sitemapindex`, `text`, `rss`, `atom`, `oai-pmh`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Urlset => "urlset",
            Format::SitemapIndex => "sitemapindex",
            Format::Text => "text",
            Format::Rss => "rss",
            Format::Atom => "atom",
            Format::OaiPmh => "oai-pmh",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_small_and_its_extensions_are_behind_one_pointer() {
        // Moved and dropped once per URL on every read: the reason `extensions` is boxed.
        assert!(std::mem::size_of::<UrlEntry>() <= 88, "{}", std::mem::size_of::<UrlEntry>());
        assert!(std::mem::size_of::<Entry>() <= 88, "{}", std::mem::size_of::<Entry>());
    }

    #[test]
    fn empty_extensions_are_no_extensions() {
        let loc = Loc::parse("https://example.com/a").unwrap();
        let none = UrlEntry::new(loc.clone());
        let mut empty = UrlEntry::new(loc.clone());
        empty.ext_mut();
        assert!(empty.extensions.is_some());
        assert!(!empty.has_extensions() && !none.has_extensions());
        assert_eq!(empty, none);
        assert_eq!(none.ext(), &Extensions::NONE);

        let mut with = UrlEntry::new(loc);
        with.ext_mut().alternates.push(Alternate { hreflang: "de".into(), href: "https://example.com/de".into() });
        assert!(with.has_extensions());
        assert_ne!(with, none);
        assert_ne!(none, with);
        with.ext_mut().alternates.clear();
        assert_eq!(with, none);
        with.ext_mut().geo = Some(Box::default());
        assert!(with.has_extensions());
        assert_ne!(with, none);
    }
}
