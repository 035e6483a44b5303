//! Writers for everything the readers read: `<urlset>` with its extensions, `<sitemapindex>`,
//! text, and [`SitemapSetWriter`], which splits a stream of entries into files under the limits.
//!
//! Every value is escaped; URLs are written as [`crate::Loc`] holds them (already normalised and
//! percent-encoded), dates only in forms the official XSD accepts, priorities with a point, and
//! extension namespaces only when used. Entries are built in a reused buffer without `format!`
//! or allocation, so escaping and checks cost little next to the bytes themselves.

mod escape;
mod gz;
pub mod set;
pub mod text;
pub mod xml;

pub use set::{SetConfig, SetFormat, SetSummary, SitemapSetWriter};
pub use text::TextWriter;
pub use xml::{IndexWriter, UrlsetWriter};

use crate::model::UrlEntry;

/// Which extension namespaces a `<urlset>` declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Namespaces {
    /// Google's image extension (`image:`).
    pub image: bool,
    /// Google's video extension (`video:`).
    pub video: bool,
    /// Google's news extension (`news:`).
    pub news: bool,
    /// XHTML, for hreflang alternates (`xhtml:link`).
    pub xhtml: bool,
    /// Google's geo extension (`geo:`). A PageMap needs none: it declares its own namespace.
    pub geo: bool,
}

impl Namespaces {
    /// No extension.
    pub const NONE: Namespaces = Namespaces { image: false, video: false, news: false, xhtml: false, geo: false };
    /// Every extension.
    pub const ALL: Namespaces = Namespaces { image: true, video: true, news: true, xhtml: true, geo: true };

    /// The namespaces `e` needs.
    pub fn of(e: &UrlEntry) -> Self {
        let x = e.ext();
        Namespaces {
            image: !x.images.is_empty(),
            video: !x.videos.is_empty(),
            news: x.news.is_some(),
            xhtml: !x.alternates.is_empty(),
            geo: x.geo.is_some(),
        }
    }

    /// Both sets together.
    pub fn union(self, o: Namespaces) -> Self {
        Namespaces {
            image: self.image || o.image,
            video: self.video || o.video,
            news: self.news || o.news,
            xhtml: self.xhtml || o.xhtml,
            geo: self.geo || o.geo,
        }
    }

    /// Whether every namespace `e` needs is in this set.
    #[inline]
    pub fn covers(self, e: &UrlEntry) -> bool {
        if !e.has_extensions() {
            return true;
        }
        self.union(Namespaces::of(e)) == self
    }

    /// The namespaces all of `entries` need: what to declare when they are all at hand.
    pub fn of_all<'a>(entries: impl IntoIterator<Item = &'a UrlEntry>) -> Self {
        entries.into_iter().fold(Namespaces::NONE, |ns, e| ns.union(Namespaces::of(e)))
    }
}
