//! Feeds as sitemaps: RSS 2.0 and 1.0 items, Atom 1.0 and 0.3 entries.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FeedField {
    /// RSS `<link>` text.
    Link,
    /// RSS `pubDate`, RDF `dc:date`, Atom `updated`/`modified`.
    Date,
    /// RSS `<guid>`: the item's URL when it has no `<link>`.
    Guid,
}

/// A feed date: RFC 822 (RSS) or W3C/RFC 3339 (Atom, Dublin Core), kept as written.
pub(super) fn feed_date(t: &str) -> Option<Lastmod> {
    match parse_lastmod(t) {
        LastmodParse::Exact(v) => Some(Lastmod::W3c(v)),
        LastmodParse::Repaired(v, _) => Some(Lastmod::Text { text: t.into(), value: v }),
        LastmodParse::Invalid => parse_rfc822(t).map(|v| Lastmod::Text { text: t.into(), value: v }),
    }
}

/// The bases an Atom feed's relative links resolve against (RFC 4287 section 3.2, XML Base):
/// the `xml:base` of the link, of its entry and of the feed, in turn against the URL the
/// document was served at.
#[derive(Debug, Default)]
pub(super) struct AtomBase {
    /// Where the document was served (given by the caller, after redirects).
    pub(super) document: Option<url::Url>,
    /// The root `<feed>`'s `xml:base`.
    pub(super) feed: Option<String>,
    /// The current `<entry>`'s `xml:base`.
    pub(super) entry: Option<String>,
}

impl AtomBase {
    /// `href` made absolute against the bases in scope, `link` the link's own `xml:base`. An
    /// absolute `href` is kept as written; a relative one no base makes absolute is kept too
    /// (and reported as not absolute).
    fn resolve(&self, href: String, link: Option<&str>) -> String {
        let href_t = href.trim();
        if href_t.is_empty() || !matches!(url::Url::parse(href_t), Err(url::ParseError::RelativeUrlWithoutBase)) {
            return href;
        }
        let mut base: Option<url::Url> = self.document.clone();
        for b in [self.feed.as_deref(), self.entry.as_deref(), link].into_iter().flatten() {
            let b = b.trim();
            base = match &base {
                Some(cur) => cur.join(b).ok(),
                None => url::Url::parse(b).ok(),
            };
        }
        match base.and_then(|b| b.join(href_t).ok()) {
            Some(u) if matches!(u.scheme(), "http" | "https") => u.to_string(),
            _ => href,
        }
    }
}

impl XmlReader<'_> {
    /// The URL the document was served at: the base of an Atom feed's relative links.
    pub(crate) fn set_document_url(&mut self, url: &str) {
        self.st.atom.document = url::Url::parse(url).ok();
    }
}

impl State {
    pub(super) fn atom_link(&mut self, e: &BytesStart<'_>, off: u64) {
        let [rel, href, base] = attributes(e, ["rel", "href", "xml:base"]);
        let Some(href) = href else { return };
        let href = self.atom.resolve(href, base.as_deref());
        match rel.as_deref().map(str::trim) {
            None if self.build.link_norel.is_none() => {
                self.build.link_norel = Some(href);
                self.build.loc_off = off;
            }
            Some(r) if r.eq_ignore_ascii_case("alternate") && self.build.link_alt.is_none() => {
                self.build.link_alt = Some(href);
                if self.build.link_norel.is_none() {
                    self.build.loc_off = off;
                }
            }
            _ => {}
        }
    }

    pub(super) fn finish_feed_entry(&mut self, xr: &mut Reader<Tracked<'_>>, sink: &mut FindingSink<'_>) -> Step {
        // An RSS item without <link> is found by its <guid> when that is a URL (isPermaLink or not).
        let guid = self.build.guid.take().filter(|g| g.starts_with("http://") || g.starts_with("https://"));
        let link = self.build.link_norel.take().or_else(|| self.build.link_alt.take()).or(guid);
        let Some(link) = link else {
            self.flush_pending(None, sink);
            return Step::Continue;
        };
        let pos = XmlReader::pos_at(xr, self.origin, self.build.loc_off);
        match Loc::parse(link.trim()) {
            Ok(loc) => {
                self.entry_pos = pos;
                self.flush_pending(Some(loc.as_str()), sink);
                let mut u = UrlEntry::new(loc);
                u.lastmod = self.build.lastmod.take();
                Step::Entry(Entry::Url(u))
            }
            Err(e) => {
                let rule = match e {
                    LocError::NotAbsolute => Rule::LocNotAbsolute,
                    LocError::Scheme(_) => Rule::LocScheme,
                    LocError::Empty => Rule::LocMissing,
                    LocError::Invalid(_) => Rule::LocInvalid,
                };
                self.build.pending.push(Finding::new(
                    rule,
                    Some(pos),
                    format!("feed link {:?}: {e}; skipped", shorten(&link)),
                ));
                self.flush_pending(None, sink);
                Step::Continue
            }
        }
    }

    /// The role of an element of a feed (RSS 2.0 and 1.0, Atom 1.0 and 0.3).
    pub(super) fn feed_child(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        parent: Role,
        prefix: &str,
        local: &str,
        e: &BytesStart<'_>,
        off: u64,
    ) -> Role {
        match (self.format, parent) {
            (Format::Rss, Role::Root) => match local {
                "channel" => Role::Channel,
                "item" => self.begin_entry(xr, off, Role::Item),
                _ => Role::Skip,
            },
            (Format::Rss, Role::Channel) if local == "item" => self.begin_entry(xr, off, Role::Item),
            (Format::Rss, Role::Item) => match (prefix, local) {
                ("", "link") => {
                    self.build.loc_off = off;
                    self.begin_text(off);
                    Role::FeedField(FeedField::Link)
                }
                ("", "guid") => {
                    self.begin_text(off);
                    Role::FeedField(FeedField::Guid)
                }
                ("", "pubDate") | ("dc", "date") => {
                    self.begin_text(off);
                    Role::FeedField(FeedField::Date)
                }
                _ => Role::Skip,
            },
            (Format::Atom, Role::Root) if local == "entry" => {
                let [base] = attributes(e, ["xml:base"]);
                self.atom.entry = base;
                self.begin_entry(xr, off, Role::AtomEntry)
            }
            (Format::Atom, Role::AtomEntry) => match local {
                "link" => {
                    self.atom_link(e, off);
                    Role::Skip
                }
                "updated" | "modified" => {
                    self.begin_text(off);
                    Role::FeedField(FeedField::Date)
                }
                _ => Role::Skip,
            },
            _ => Role::Skip,
        }
    }

    /// Ends a feed item's link, guid or date.
    pub(super) fn feed_field_end(&mut self, f: FeedField) {
        match f {
            FeedField::Link => {
                let t = self.take_text();
                if self.build.link_norel.is_none() && !t.is_empty() {
                    self.build.link_norel = Some(t);
                }
            }
            FeedField::Date => {
                let t = self.take_text();
                if self.build.lastmod.is_none() {
                    self.build.lastmod = feed_date(&t);
                }
            }
            FeedField::Guid => {
                let t = self.take_text();
                if self.build.guid.is_none() && !t.is_empty() {
                    self.build.guid = Some(t);
                }
            }
        }
    }
}
