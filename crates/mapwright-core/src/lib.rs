//! mapwright-core: read, write and validate sitemaps in every format, streaming and safe.
//!
//! The core does no network and no directory walking: readers take any [`std::io::BufRead`],
//! writers any [`std::io::Write`]. Start with [`SitemapReader`].
#![deny(missing_docs)]

pub mod date;
pub mod error;
pub mod loc;
pub mod model;
pub mod read;
pub mod rule;
pub mod scope;
#[cfg(target_arch = "x86_64")]
mod simd;
pub mod validate;
mod word;
pub mod write;

pub use date::{DateText, Lastmod, Precision, Tz, W3cDateTime};
pub use error::{Error, OaiFault, OaiStop};
pub use loc::{Loc, LocError};
pub use model::{
    Alternate, ChangeFreq, DataObject, Entry, Extensions, Format, Geo, Image, News, PageMapAttribute, SitemapEntry,
    UrlEntry, Video, VideoPrice,
};
pub use read::{Limits, PageRequest, Pager, ReadOptions, SitemapReader};
pub use rule::{Finding, Position, Rule, Severity};
pub use scope::{Scope, Voucher};
pub use validate::{Report, Validator};
pub use write::{Namespaces, SetConfig, SetFormat, SetSummary, SitemapSetWriter};

/// The protocol's limit on entries in one file (read on past it: it is reported, not enforced).
pub const MAX_URLS: usize = 50_000;
/// The protocol's limit on a file's uncompressed size, in bytes.
pub const MAX_BYTES: u64 = 52_428_800;
/// `loc` must be shorter than this many characters.
pub const MAX_LOC_LEN: usize = 2_048;

/// The namespace of the current protocol (0.9).
pub const NS_SITEMAP: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
/// Google's legacy 0.84 namespace.
pub const NS_GOOGLE_084: &str = "http://www.google.com/schemas/sitemap/0.84";
/// Google's image extension.
pub const NS_IMAGE: &str = "http://www.google.com/schemas/sitemap-image/1.1";
/// Google's video extension.
pub const NS_VIDEO: &str = "http://www.google.com/schemas/sitemap-video/1.1";
/// Google's news extension.
pub const NS_NEWS: &str = "http://www.google.com/schemas/sitemap-news/0.9";
/// XHTML, for hreflang `xhtml:link`.
pub const NS_XHTML: &str = "http://www.w3.org/1999/xhtml";
/// Google's geo extension (`geo:geo`, `geo:format`).
pub const NS_GEO: &str = "http://www.google.com/geo/schemas/sitemap/1.0";
/// Google's PageMap (`<PageMap>`, `<DataObject>`, `<Attribute>`), declared on the `PageMap`.
pub const NS_PAGEMAP: &str = "http://www.google.com/schemas/sitemap-pagemap/1.0";
/// OAI-PMH 2.0: an answer's root `<OAI-PMH>` is in it.
pub const NS_OAI_PMH: &str = "http://www.openarchives.org/OAI/2.0/";
