//! The XML formats: `urlset` and `sitemapindex` (0.9, Google 0.84, no namespace), RSS 2.0,
//! RSS 1.0 (RDF), Atom 1.0 and 0.3, OAI-PMH 2.0, on one quick-xml pull loop. Namespaces are
//! resolved by hand (`ns.rs`).

use crate::date::{Lastmod, LastmodParse, parse_lastmod, parse_rfc822};
use crate::error::Error;
use crate::loc::{Loc, LocError};
use crate::model::{
    Alternate, ChangeFreq, DataObject, Entry, Extensions, Format, Image, News, PageMapAttribute, SitemapEntry,
    UrlEntry, Video, VideoPrice,
};
use crate::read::input::{Prepared, Tracked, map_io};
use crate::read::text::shorten;
use crate::read::{FindingSink, Limits};
use crate::rule::{Finding, Position, Rule};
use crate::{MAX_LOC_LEN, NS_GEO, NS_GOOGLE_084, NS_IMAGE, NS_NEWS, NS_PAGEMAP, NS_SITEMAP, NS_VIDEO, NS_XHTML};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

mod ext;
mod fast;
mod feed;
mod fields;
mod ns;
mod oai;
mod root;

use ext::{ImageField, NewsField, VideoField};
pub(crate) use fast::scan_ahead;
use feed::FeedField;
use fields::Field;
use ns::{Ns, NsStack, split_name};
use oai::OaiField;
pub(crate) use oai::PageEnd;
use root::declaration_misplaced;

/// The values (entities decoded) of the named attributes of a start tag, in the given order.
fn attributes<const N: usize>(e: &BytesStart<'_>, names: [&str; N]) -> [Option<String>; N] {
    let mut out = [const { None }; N];
    for a in e.attributes().with_checks(false).flatten() {
        if let Some(i) = names.iter().position(|n| *n == a.key.0) {
            let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0).map(|c| c.into_owned());
            out[i] = Some(v.unwrap_or_else(|_| a.value.to_string()));
        }
    }
    out
}

/// `str::trim` with an ASCII fast path (Unicode white space only looked for at non-ASCII ends).
#[inline]
fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(a), Some(b)) if *a >= 0x80 || *b >= 0x80 => t.trim(),
        _ => t,
    }
}

/// What an open element means; one per open element, so end tags need no name comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Root,
    /// RSS `<channel>`.
    Channel,
    Url,
    Sitemap,
    Item,
    AtomEntry,
    Field(Field),
    Image,
    ImageField(ImageField),
    Video,
    VideoField(VideoField),
    News,
    NewsPublication,
    NewsField(NewsField),
    /// `geo:geo`, its `geo:format`; `PageMap`, a `DataObject`, an `Attribute`.
    Geo,
    GeoFormat,
    PageMap,
    DataObject,
    PageMapAttribute,
    FeedField(FeedField),
    /// OAI-PMH `<ListRecords>`, `<record>`, its `<header>`, its `<metadata>` (any depth).
    OaiList,
    OaiRecord,
    OaiHeader,
    OaiMetadata,
    OaiField(OaiField),
    /// Markup inside a value (`<loc><url>...</url></loc>`): its text joins the value.
    Nested,
    /// Ignored, with everything inside it.
    Skip,
}

impl Role {
    fn captures(self) -> bool {
        matches!(
            self,
            Role::Field(_)
                | Role::ImageField(_)
                | Role::VideoField(_)
                | Role::NewsField(_)
                | Role::GeoFormat
                | Role::PageMapAttribute
                | Role::FeedField(_)
                | Role::OaiField(_)
                | Role::Nested
        )
    }
}

/// The entry being assembled.
#[derive(Default)]
struct Build {
    loc: Option<Loc>,
    loc_seen: bool,
    loc_off: u64,
    lastmod: Option<Lastmod>,
    lastmod_seen: bool,
    changefreq: Option<ChangeFreq>,
    changefreq_seen: bool,
    priority: Option<f32>,
    priority_seen: bool,
    /// The entry's extensions as they are read (given to it only when there are any).
    ext: Extensions,
    /// Atom links: without rel, and rel="alternate".
    link_norel: Option<String>,
    link_alt: Option<String>,
    /// RSS `<guid>` text.
    guid: Option<String>,
    /// Text directly inside `<url>`/`<sitemap>` (a URL written without `<loc>`).
    bare: String,
    /// That text held an entity no XML defines (a DTD's, possibly an external one): not a URL.
    bare_entity: Option<String>,
    start_off: u64,
    /// Findings about this entry, given its `loc` when it ends.
    pending: Vec<Finding>,
}

pub(crate) struct XmlReader<'a> {
    xr: Reader<Tracked<'a>>,
    buf: Vec<u8>,
    st: State,
}

struct State {
    format: Format,
    namespace: String,
    root_name: String,
    gzip_layers: usize,
    /// Stream offset where quick-xml's offset 0 is.
    origin: u64,
    ns: NsStack,
    roles: Vec<Role>,
    text: String,
    text_cut: bool,
    /// The captured text holds an entity no XML defines (declared in a DTD, maybe external:
    /// never expanded), kept as written: a `<loc>` holding one is no URL.
    text_entity: bool,
    text_off: u64,
    build: Build,
    image: Image,
    video: Video,
    news: News,
    entry_pos: Position,
    max_depth: usize,
    max_loc: usize,
    max_value: usize,
    root_closed: bool,
    /// An error held back while the entry salvaged before it is returned.
    deferred: Option<Error>,
    /// quick-xml stands just after an end tag (or the root's start tag), waiting for text:
    /// where `fast.rs` may take over. Cleared when looked at.
    after_tag: bool,
    /// Whether `fast.rs` is used (off only to test it against the event loop).
    fast: bool,
    /// The last call of `next_entry` gave no entry (the end, an error): what the caller learns
    /// without looking at the result (see `SitemapReader::next_entry`).
    stopped: bool,
    /// The last step was an entry of `fast.rs`, and no event has been read since: what
    /// `fast_ready` looks at (the roles, the namespaces, the format) is as it was then.
    fast_streak: bool,
    /// Entries read on the fast path without the field code (to test which reads take it).
    #[cfg(test)]
    clean_entries: u64,
    /// Atom's bases for relative links (`xml:base`, the document's URL).
    atom: feed::AtomBase,
    /// `fast.rs`'s copy of the entry it reads.
    scratch: String,
    /// `fast.rs`'s scan of the entry it reads, and the origin of the last `loc` it read.
    scanned: fast::Scanned,
    last_origin: crate::loc::LastOrigin,
    /// Entries left to the event loop before `fast.rs` tries again, and how many it waits after
    /// its next miss (doubling while it misses: a file whose entries all carry extensions
    /// does not pay for a scan that fails on each).
    fast_wait: u8,
    fast_backoff: u8,
    /// What an OAI-PMH page says besides its records.
    oai: oai::Page,
}

enum Step {
    Continue,
    Entry(Entry),
    End,
}

impl<'a> XmlReader<'a> {
    pub(crate) fn new(p: Prepared<'a>, limits: &Limits, findings: &mut Vec<Finding>) -> Result<Self, Error> {
        let origin = p.reader.offset();
        let mut xr = Reader::from_reader(p.reader);
        let cfg = xr.config_mut();
        cfg.allow_dangling_amp = true;
        cfg.check_end_names = true;
        cfg.check_comments = false;
        cfg.expand_empty_elements = false;
        let mut me = XmlReader {
            xr,
            buf: Vec::with_capacity(4096),
            st: State {
                format: Format::Urlset,
                namespace: String::new(),
                root_name: String::new(),
                gzip_layers: p.gzip_layers,
                origin,
                ns: NsStack::default(),
                roles: Vec::with_capacity(16),
                text: String::with_capacity(256),
                text_cut: false,
                text_entity: false,
                text_off: 0,
                build: Build::default(),
                image: Image::default(),
                video: Video::default(),
                news: News::default(),
                entry_pos: Position::default(),
                max_depth: limits.max_depth,
                max_loc: limits.max_loc_bytes,
                max_value: limits.max_value_bytes,
                root_closed: false,
                deferred: None,
                after_tag: false,
                stopped: false,
                fast_streak: false,
                fast: true,
                #[cfg(test)]
                clean_entries: 0,
                scratch: String::with_capacity(1024),
                scanned: Default::default(),
                last_origin: Default::default(),
                atom: feed::AtomBase::default(),
                fast_wait: 0,
                fast_backoff: 0,
                oai: oai::Page::default(),
            },
        };
        me.read_root(findings)?;
        Ok(me)
    }

    pub(crate) fn format(&self) -> Format {
        self.st.format
    }

    pub(crate) fn namespace(&self) -> &str {
        &self.st.namespace
    }

    pub(crate) fn gzip_layers(&self) -> usize {
        self.st.gzip_layers
    }

    pub(crate) fn entry_position(&self) -> Position {
        self.st.entry_pos
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.st.origin + self.xr.buffer_position()
    }

    /// At the end of an OAI-PMH page: what it means for the list (the next page, its end, or
    /// why it stops).
    pub(crate) fn oai_end(&mut self, first: bool, bare: bool) -> PageEnd {
        self.st.oai_end(first, bare)
    }

    /// Turns the fast path off, to test it against the event loop.
    #[cfg(test)]
    pub(crate) fn set_fast_path(&mut self, on: bool) {
        self.st.fast = on;
        self.st.fast_streak = false;
    }

    /// Entries read on the fast path without the field code.
    #[cfg(test)]
    pub(crate) fn clean_entries(&self) -> u64 {
        self.st.clean_entries
    }

    /// Entries the worker read ahead that were taken (`read/ahead.rs`).
    #[cfg(test)]
    pub(crate) fn made_taken(&self) -> u64 {
        self.xr.get_ref().made_taken
    }

    fn pos_at(xr: &mut Reader<Tracked<'a>>, origin: u64, off: u64) -> Position {
        xr.get_mut().position_at(origin + off)
    }

    fn map_err(xr: &mut Reader<Tracked<'a>>, origin: u64, e: quick_xml::Error) -> Error {
        let mut pos = Self::pos_at(xr, origin, xr.error_position());
        // The byte limit is reached at the limit's own offset, whatever the buffers' bounds
        // (quick-xml's position is the start of what it was reading, which depends on them).
        if let quick_xml::Error::Io(io) = &e {
            if let Some(l) = io.get_ref().and_then(|i| i.downcast_ref::<crate::read::input::LimitReached>()) {
                pos = xr.get_mut().position_at(l.0);
            }
        }
        match e {
            quick_xml::Error::Io(io) => {
                let io = std::sync::Arc::try_unwrap(io).unwrap_or_else(|arc| {
                    // Rebuild a comparable error; the markers are looked up through `get_ref`.
                    if let Some(inner) = arc.get_ref() {
                        if let Some(l) = inner.downcast_ref::<crate::read::input::LimitReached>() {
                            return std::io::Error::other(crate::read::input::LimitReached(l.0));
                        }
                        if let Some(g) = inner.downcast_ref::<crate::read::members::GzipFault>() {
                            return std::io::Error::other(crate::read::members::GzipFault {
                                produced: g.produced,
                                message: g.message.clone(),
                            });
                        }
                    }
                    std::io::Error::new(arc.kind(), arc.to_string())
                });
                map_io(io, pos)
            }
            quick_xml::Error::Encoding(e) => {
                Error::Encoding { position: pos, message: format!("{e}; the file must be UTF-8") }
            }
            other => Error::Xml { position: pos, message: other.to_string() },
        }
    }

    /// Whether the last call of [`XmlReader::next_entry`] gave no entry.
    pub(crate) fn stopped(&self) -> bool {
        self.st.stopped
    }

    /// The next entry, `Ok(None)` at the end. Every way out that gives an entry clears
    /// `stopped`, set on the way in.
    pub(crate) fn next_entry(&mut self, sink: &mut FindingSink<'_>) -> Result<Option<Entry>, Error> {
        self.st.stopped = true;
        if let Some(e) = self.st.deferred.take() {
            return Err(e);
        }
        loop {
            let XmlReader { xr, buf, st } = self;
            // Looked at once per entry: after an end tag (or the root's start tag).
            if std::mem::take(&mut st.after_tag) && (st.fast_streak || st.fast_ready()) {
                if st.fast_wait > 0 {
                    st.fast_wait -= 1;
                } else if let Some((loc, c)) = st.fast_usual(xr) {
                    st.after_tag = true;
                    st.fast_streak = true;
                    st.stopped = false;
                    return Ok(Some(st.take_clean(xr, loc, c)));
                } else if let Some(entry) = st.fast_entry(xr, sink) {
                    st.after_tag = true;
                    st.fast_streak = entry.is_some();
                    if entry.is_some() {
                        st.stopped = false;
                        return Ok(entry);
                    }
                    continue;
                }
            }
            st.fast_streak = false;
            buf.clear();
            let off = xr.buffer_position();
            let ev = match xr.read_event_into(buf) {
                Ok(ev) => ev,
                Err(e) => {
                    let err = Self::map_err(xr, st.origin, e);
                    // A fault in markup: a value captured up to it is complete.
                    return st.salvage(xr, err, true, sink);
                }
            };
            let step = match ev {
                Event::Start(e) => st.start(xr, &e, off, false, sink)?,
                Event::Empty(e) => {
                    let first = st.start(xr, &e, off, true, sink)?;
                    let second = st.end(xr, off, sink);
                    if matches!(first, Step::Entry(_)) { first } else { second }
                }
                Event::End(_) => {
                    st.after_tag = true;
                    st.end(xr, off, sink)
                }
                Event::Text(t) => {
                    if st.capturing() {
                        if memchr::memchr(b'&', t.as_bytes()).is_some() {
                            let pos = Self::pos_at(xr, st.origin, off);
                            st.build.pending.push(Finding::new(
                                Rule::XmlMalformed,
                                Some(pos),
                                "unescaped '&' in a value: kept as '&'; write &amp;",
                            ));
                        }
                        st.append(&t);
                    } else if matches!(st.roles.last(), Some(Role::Url | Role::Sitemap)) && !t.trim_ascii().is_empty() {
                        st.bare_text(&t);
                    }
                    Step::Continue
                }
                Event::CData(t) => {
                    if st.capturing() {
                        st.append(&t);
                    }
                    Step::Continue
                }
                Event::GeneralRef(r) => {
                    if st.capturing() {
                        st.entity(xr, &r, off);
                    } else if matches!(st.roles.last(), Some(Role::Url | Role::Sitemap)) {
                        // Part of a URL written without <loc>: predefined and numeric references only.
                        let name: &str = &r;
                        if let Some(t) = quick_xml::escape::resolve_xml_entity(name) {
                            st.bare_text(t);
                        } else if let Ok(Some(c)) = r.resolve_char_ref() {
                            st.bare_text(c.encode_utf8(&mut [0u8; 4]));
                        } else if st.build.bare_entity.is_none() {
                            // Never expanded: the text is no URL (dropping the reference would
                            // give another URL than the one written).
                            st.build.bare_entity = Some(name.to_string());
                        }
                    }
                    Step::Continue
                }
                Event::Eof => {
                    if !st.roles.is_empty() {
                        let pos = xr.get_mut().position();
                        let err = Error::Xml {
                            position: pos,
                            message: format!(
                                "unexpected end of file inside <{}>: the file is truncated or not closed",
                                st.root_name
                            ),
                        };
                        // Cut inside a value: that value may be incomplete, so it is not used.
                        return st.salvage(xr, err, false, sink);
                    }
                    Step::End
                }
                Event::Decl(_) => {
                    sink.push(declaration_misplaced(Self::pos_at(xr, st.origin, off), "the root element's start tag"));
                    Step::Continue
                }
                Event::Comment(_) | Event::PI(_) | Event::DocType(_) => Step::Continue,
            };
            match step {
                Step::Continue => {}
                Step::Entry(e) => {
                    st.stopped = false;
                    return Ok(Some(e));
                }
                Step::End => return Ok(None),
            }
        }
    }
}

impl State {
    /// At a fault: returns the entry in progress when its `<loc>` is complete (the error
    /// follows on the next call), else the error. `value_complete` says whether a value
    /// being captured ended at the fault (a fault in markup) rather than being cut (end of file).
    fn salvage(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        err: Error,
        value_complete: bool,
        sink: &mut FindingSink<'_>,
    ) -> Result<Option<Entry>, Error> {
        let Some(at) = self.roles.iter().rposition(|r| matches!(r, Role::Url | Role::Sitemap)) else {
            return Err(err);
        };
        let role = self.roles[at];
        if value_complete && self.roles.last() == Some(&Role::Field(Field::Loc)) {
            self.field(xr, Field::Loc, sink);
        }
        if self.build.loc.is_none() {
            return Err(err);
        }
        self.roles.truncate(at);
        match self.finish_entry(xr, role, 0, sink) {
            Step::Entry(e) => {
                self.deferred = Some(err);
                self.stopped = false;
                Ok(Some(e))
            }
            _ => Err(err),
        }
    }

    fn bare_text(&mut self, t: &str) {
        if self.build.bare.len() + t.len() <= self.max_loc {
            self.build.bare.push_str(t);
        }
    }

    fn capturing(&self) -> bool {
        self.roles.last().is_some_and(|r| r.captures())
    }

    fn append(&mut self, s: &str) {
        if self.text.len() + s.len() > self.max_value {
            let room = self.max_value.saturating_sub(self.text.len());
            let mut cut = room;
            while cut > 0 && !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&s[..cut]);
            self.text_cut = true;
        } else {
            self.text.push_str(s);
        }
    }

    fn entity(&mut self, xr: &mut Reader<Tracked<'_>>, r: &quick_xml::events::BytesRef<'_>, off: u64) {
        let name: &str = r;
        if let Some(s) = quick_xml::escape::resolve_xml_entity(name) {
            self.append(s);
            return;
        }
        if let Ok(Some(c)) = r.resolve_char_ref() {
            let mut tmp = [0u8; 4];
            self.append(c.encode_utf8(&mut tmp));
            return;
        }
        let pos = XmlReader::pos_at(xr, self.origin, off);
        if let Some(s) = quick_xml::escape::resolve_html5_entity(name) {
            self.append(s);
            self.build.pending.push(Finding::new(
                Rule::XmlMalformed,
                Some(pos),
                format!("HTML entity &{name}; is not defined in XML: decoded; write the character itself (UTF-8) or a numeric reference"),
            ));
        } else {
            // Never expanded (no DTD processing): kept as written.
            self.append("&");
            self.append(name);
            self.append(";");
            self.text_entity = true;
            // In a <loc> the URL itself is unknown: `loc` skips the entry.
            if self.roles.last() == Some(&Role::Field(Field::Loc)) {
                self.build.pending.push(Finding::new(
                    Rule::XmlMalformed,
                    Some(pos),
                    format!(
                        "undefined entity &{}; in a <loc> (declared in a DTD, perhaps an external one: never expanded): \
                         the URL is unknown, the entry is skipped",
                        shorten(name)
                    ),
                ));
                return;
            }
            self.build.pending.push(Finding::new(
                Rule::XmlMalformed,
                Some(pos),
                format!(
                    "undefined entity &{}; kept as written (entities declared in a DTD are never expanded)",
                    shorten(name)
                ),
            ));
        }
    }

    fn warn_unknown(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        off: u64,
        name: &str,
        parent: &str,
        sink: &mut FindingSink<'_>,
    ) {
        let pos = XmlReader::pos_at(xr, self.origin, off);
        let f = Finding::new(
            Rule::UnknownElement,
            Some(pos),
            format!("<{}> is not an element of the sitemap schema inside <{parent}>: ignored", shorten(name)),
        );
        if self.roles.iter().any(|r| matches!(r, Role::Url | Role::Sitemap)) {
            self.build.pending.push(f);
        } else {
            sink.push(f);
        }
    }

    fn start(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        e: &BytesStart<'_>,
        off: u64,
        empty: bool,
        sink: &mut FindingSink<'_>,
    ) -> Result<Step, Error> {
        let depth = self.roles.len() + 1;
        if depth > self.max_depth {
            return Err(Error::TooDeep { limit: self.max_depth, position: XmlReader::pos_at(xr, self.origin, off) });
        }
        let parent = match self.roles.last() {
            Some(r) => *r,
            None => {
                // A second root element (seen in the wild): read it too, with a finding.
                let pos = XmlReader::pos_at(xr, self.origin, off);
                let name = e.name().0;
                let format = match split_name(name).1 {
                    "urlset" => Some(Format::Urlset),
                    "sitemapindex" => Some(Format::SitemapIndex),
                    _ => None,
                };
                sink.push(Finding::new(
                    Rule::XmlMalformed,
                    Some(pos),
                    match format {
                        Some(_) => {
                            format!("a second root element <{}>: read too; keep one root per file", shorten(name))
                        }
                        None => format!("a second root element <{}>: ignored", shorten(name)),
                    },
                ));
                self.ns.push(e, depth);
                match format {
                    Some(f) if matches!(self.format, Format::Urlset | Format::SitemapIndex) => {
                        self.format = f;
                        self.roles.push(Role::Root);
                    }
                    _ => self.roles.push(Role::Skip),
                }
                return Ok(Step::Continue);
            }
        };
        if parent == Role::Skip {
            self.roles.push(Role::Skip);
            return Ok(Step::Continue);
        }
        if parent.captures() {
            // Markup inside a value: its text joins the value (seen: <loc><url>..</url></loc>).
            let pos = XmlReader::pos_at(xr, self.origin, off);
            self.build.pending.push(Finding::new(
                Rule::UnknownElement,
                Some(pos),
                format!(
                    "<{}> inside a value: its text was read as part of the value; remove the markup",
                    shorten(e.name().0)
                ),
            ));
            self.roles.push(Role::Nested);
            return Ok(Step::Continue);
        }
        self.ns.push(e, depth);
        let name = e.name().0;
        let (prefix, local) = split_name(name);
        let ns = self.ns.resolve(prefix);
        let role = match (self.format, parent) {
            (Format::Urlset, Role::Root) => match (ns, local) {
                (Ns::Sitemap, "url") => self.begin_entry(xr, off, Role::Url),
                (Ns::Sitemap, "urlset" | "sitemapindex") => self.nested_root(xr, off, name, sink),
                (Ns::Sitemap, _) => {
                    self.warn_unknown(xr, off, name, "urlset", sink);
                    Role::Skip
                }
                _ => Role::Skip,
            },
            (Format::SitemapIndex, Role::Root) => match (ns, local) {
                (Ns::Sitemap, "sitemap") => self.begin_entry(xr, off, Role::Sitemap),
                (Ns::Sitemap, "urlset" | "sitemapindex") => self.nested_root(xr, off, name, sink),
                (Ns::Sitemap, _) => {
                    self.warn_unknown(xr, off, name, "sitemapindex", sink);
                    Role::Skip
                }
                _ => Role::Skip,
            },
            (Format::Urlset | Format::SitemapIndex, Role::Url | Role::Sitemap) => {
                let field = match local {
                    "loc" => Some(Field::Loc),
                    "lastmod" => Some(Field::Lastmod),
                    "changefreq" if parent == Role::Url => Some(Field::Changefreq),
                    "priority" if parent == Role::Url => Some(Field::Priority),
                    _ => None,
                };
                match (ns, field) {
                    (Ns::Sitemap, Some(Field::Loc)) if self.build.loc_seen => {
                        // A second <loc> closes the entry and opens another, as crawler-commons
                        // does: in an index, each is a child sitemap worth fetching.
                        let step = self.finish_entry(xr, parent, off, sink);
                        self.begin_entry(xr, off, parent);
                        let pos = XmlReader::pos_at(xr, self.origin, off);
                        self.build.pending.push(Finding::new(
                            Rule::LocDuplicateTag,
                            Some(pos),
                            "a second <loc> in one entry: read as the start of another entry; give each URL its own element",
                        ));
                        self.build.loc_seen = false;
                        self.build.loc_off = off;
                        self.begin_text(off);
                        self.roles.push(Role::Field(Field::Loc));
                        return Ok(step);
                    }
                    (Ns::Sitemap, Some(f)) => {
                        if f == Field::Loc {
                            self.build.loc_off = off;
                        }
                        self.begin_text(off);
                        Role::Field(f)
                    }
                    (Ns::Sitemap, None) => {
                        self.warn_unknown(xr, off, name, if parent == Role::Url { "url" } else { "sitemap" }, sink);
                        Role::Skip
                    }
                    (Ns::Image, _) if parent == Role::Url && local == "image" => {
                        self.image = Image::default();
                        Role::Image
                    }
                    (Ns::Video, _) if parent == Role::Url && local == "video" => {
                        self.video = Video::default();
                        Role::Video
                    }
                    (Ns::News, _) if parent == Role::Url && local == "news" => {
                        self.news = News::default();
                        Role::News
                    }
                    (Ns::Xhtml, _) if parent == Role::Url && local == "link" => {
                        self.alternate(e);
                        Role::Skip
                    }
                    (Ns::Geo | Ns::PageMap, _) if parent == Role::Url => self.extension_start(ns, local),
                    _ => Role::Skip,
                }
            }
            (
                _,
                Role::Image
                | Role::Video
                | Role::News
                | Role::NewsPublication
                | Role::Geo
                | Role::PageMap
                | Role::DataObject,
            ) => self.extension_child(parent, ns, local, e, off),
            // Feeds: names are matched without regard to namespace (feeds mix many).
            (Format::Rss | Format::Atom, _) => self.feed_child(xr, parent, prefix, local, e, off),
            (Format::OaiPmh, _) => self.oai_child(xr, parent, local, e, off),
            _ => Role::Skip,
        };
        self.roles.push(role);
        let _ = empty;
        Ok(Step::Continue)
    }

    /// A `<urlset>` or `<sitemapindex>` inside the root (seen on large sites): its entries are
    /// read too, as lenient consumers read them, with a finding.
    fn nested_root(&mut self, xr: &mut Reader<Tracked<'_>>, off: u64, name: &str, sink: &mut FindingSink<'_>) -> Role {
        let pos = XmlReader::pos_at(xr, self.origin, off);
        let outer = if self.format == Format::Urlset { "urlset" } else { "sitemapindex" };
        sink.push(Finding::new(
            Rule::UnknownElement,
            Some(pos),
            format!(
                "<{}> nested inside <{outer}>: its entries were read too (strict consumers skip them); list every entry directly in the root",
                shorten(name)
            ),
        ));
        // The file keeps one format: entries of the other kind inside are reported one by one.
        Role::Root
    }

    fn begin_entry(&mut self, xr: &mut Reader<Tracked<'_>>, off: u64, role: Role) -> Role {
        xr.get_mut().keep_from(self.origin + off);
        let b = &mut self.build;
        b.loc = None;
        b.loc_seen = false;
        b.loc_off = off;
        b.lastmod = None;
        b.lastmod_seen = false;
        b.changefreq = None;
        b.changefreq_seen = false;
        b.priority = None;
        b.priority_seen = false;
        b.link_norel = None;
        b.link_alt = None;
        b.guid = None;
        b.bare.clear();
        b.start_off = off;
        b.pending.clear();
        role
    }

    fn begin_text(&mut self, off: u64) {
        self.text.clear();
        self.text_cut = false;
        self.text_entity = false;
        self.text_off = off;
    }

    /// The captured text, trimmed, moved out of the buffer.
    fn take_text(&mut self) -> String {
        let t = trim(&self.text);
        if t.len() == self.text.len() { std::mem::take(&mut self.text) } else { t.to_string() }
    }

    fn end(&mut self, xr: &mut Reader<Tracked<'_>>, off: u64, sink: &mut FindingSink<'_>) -> Step {
        let Some(role) = self.roles.pop() else {
            return Step::Continue;
        };
        let depth = self.roles.len();
        self.ns.pop(depth);
        match role {
            Role::Root => {
                self.root_closed = true;
                Step::Continue
            }
            Role::Field(f) => {
                self.field(xr, f, sink);
                Step::Continue
            }
            Role::ImageField(_)
            | Role::Image
            | Role::VideoField(_)
            | Role::Video
            | Role::NewsField(_)
            | Role::News
            | Role::GeoFormat
            | Role::PageMapAttribute => {
                self.extension_end(role);
                Step::Continue
            }
            Role::FeedField(f) => {
                self.feed_field_end(f);
                Step::Continue
            }
            Role::Url | Role::Sitemap => self.finish_entry(xr, role, off, sink),
            Role::Item | Role::AtomEntry => self.finish_feed_entry(xr, sink),
            Role::OaiField(f) => {
                self.oai_field_end(xr, f, sink);
                Step::Continue
            }
            Role::OaiRecord => self.finish_oai_record(xr, sink),
            Role::OaiList | Role::OaiHeader | Role::OaiMetadata => Step::Continue,
            Role::Channel | Role::NewsPublication | Role::Geo | Role::PageMap | Role::DataObject => Step::Continue,
            Role::Nested | Role::Skip => Step::Continue,
        }
    }

    fn flush_pending(&mut self, loc: Option<&str>, sink: &mut FindingSink<'_>) {
        for mut f in self.build.pending.drain(..) {
            if f.loc.is_none() {
                f.loc = loc.map(str::to_string);
            }
            sink.push(f);
        }
    }

    fn finish_entry(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        role: Role,
        _off: u64,
        sink: &mut FindingSink<'_>,
    ) -> Step {
        if self.build.loc.is_none() && !self.build.loc_seen {
            self.bare_loc(xr, role);
        }
        let Some(loc) = self.build.loc.take() else {
            if !self.build.loc_seen {
                let pos = XmlReader::pos_at(xr, self.origin, self.build.start_off);
                let what = if role == Role::Url { "url" } else { "sitemap" };
                self.build.pending.push(Finding::new(
                    Rule::LocMissing,
                    Some(pos),
                    format!("<{what}> without <loc>: the entry is skipped"),
                ));
            }
            self.flush_pending(None, sink);
            return Step::Continue;
        };
        self.entry_pos = XmlReader::pos_at(xr, self.origin, self.build.loc_off);
        self.flush_pending(Some(loc.as_str()), sink);
        let b = &mut self.build;
        let entry = if role == Role::Url {
            Entry::Url(UrlEntry {
                loc,
                lastmod: b.lastmod.take(),
                changefreq: b.changefreq.take(),
                priority: b.priority.take(),
                extensions: (!b.ext.is_empty()).then(|| Box::new(std::mem::take(&mut b.ext))),
            })
        } else {
            b.ext = Extensions::NONE;
            Entry::Sitemap(SitemapEntry { loc, lastmod: b.lastmod.take() })
        };
        Step::Entry(entry)
    }
}
