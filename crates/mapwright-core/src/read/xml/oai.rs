//! OAI-PMH 2.0 answers, read as Google Sitemaps read a repository: `ListRecords` with
//! `metadataPrefix=oai_dc` (or one `GetRecord`), each record's first http(s) `dc:identifier`
//! as the URL and its header's `datestamp` as lastmod, deleted records skipped. One answer is
//! one page; what the page says about the next one (its `resumptionToken`, the `badVerb` a
//! bare base URL answers, another verb's answer) goes to [`SitemapReader`](crate::SitemapReader)
//! as a [`PageEnd`], and it asks the caller's [`Pager`](crate::Pager) for that page. Every
//! other answer (a repository's error code, another verb where records were asked for) ends
//! the list with [`Error::Oai`](crate::Error::Oai), which names it.

use super::*;
use crate::error::OaiFault;
use crate::read::PageRequest;

/// What the end of one OAI-PMH answer means for the list of records.
#[derive(Debug)]
pub(crate) enum PageEnd {
    /// The list ends here, whole.
    Done,
    /// The page to ask for next, and what this answer holds (said when the input cannot ask).
    Next(PageRequest, String),
    /// The list stops here: why, and where in the answer.
    Stop(OaiFault, Option<Position>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OaiField {
    /// The header's `<identifier>` (`oai:...`): named in findings, never a URL.
    Identifier,
    Datestamp,
    /// A `dc:identifier` of the metadata.
    DcIdentifier,
    Token,
    Error,
}

/// Errors, and identifiers that are not URLs, kept per page and per record (more are counted).
const MAX_KEPT: usize = 8;

/// What one page says besides its records.
#[derive(Default)]
pub(super) struct Page {
    /// A `<ListRecords>` or `<GetRecord>` was seen.
    list: bool,
    /// The answer of another verb (`Identify`, `ListSets`, ...).
    other_verb: Option<String>,
    /// `<error code>`: code, message, where.
    errors: Vec<(String, String, Position)>,
    error_code: String,
    token: Option<String>,
    /// The record being read: deleted, its header identifier, its `dc:identifier` values that
    /// are not http(s) URLs.
    deleted: bool,
    id: String,
    others: Vec<String>,
}

fn is_http(s: &str) -> bool {
    let head = s.as_bytes().get(..8).unwrap_or(s.as_bytes());
    head.len() >= 7 && (head[..7].eq_ignore_ascii_case(b"http://") || head.eq_ignore_ascii_case(b"https://"))
}

impl State {
    /// The role of an element of an OAI-PMH answer (names matched without their prefix).
    pub(super) fn oai_child(
        &mut self,
        xr: &mut Reader<Tracked<'_>>,
        parent: Role,
        local: &str,
        e: &BytesStart<'_>,
        off: u64,
    ) -> Role {
        let capture = |st: &mut State, f: OaiField| {
            st.begin_text(off);
            Role::OaiField(f)
        };
        match (parent, local) {
            (Role::Root, "ListRecords" | "GetRecord") => {
                self.oai.list = true;
                Role::OaiList
            }
            (Role::Root, "error") => {
                let [code] = attributes(e, ["code"]);
                self.oai.error_code = code.map(|c| shorten(c.trim())).unwrap_or_default();
                capture(self, OaiField::Error)
            }
            (Role::Root, "responseDate" | "request") => Role::Skip,
            (Role::Root, verb) => {
                self.oai.other_verb.get_or_insert_with(|| shorten(verb));
                Role::Skip
            }
            (Role::OaiList, "record") => {
                self.oai.deleted = false;
                self.oai.id.clear();
                self.oai.others.clear();
                self.begin_entry(xr, off, Role::OaiRecord)
            }
            (Role::OaiList, "resumptionToken") => capture(self, OaiField::Token),
            (Role::OaiRecord, "header") => {
                let [status] = attributes(e, ["status"]);
                self.oai.deleted = status.is_some_and(|s| s.trim() == "deleted");
                Role::OaiHeader
            }
            (Role::OaiRecord, "metadata") => Role::OaiMetadata,
            (Role::OaiHeader, "identifier") => capture(self, OaiField::Identifier),
            (Role::OaiHeader, "datestamp") => capture(self, OaiField::Datestamp),
            (Role::OaiMetadata, "identifier") => capture(self, OaiField::DcIdentifier),
            // `oai_dc:dc` and whatever wraps the Dublin Core elements.
            (Role::OaiMetadata, _) => Role::OaiMetadata,
            _ => Role::Skip,
        }
    }

    /// Ends a field of an OAI-PMH answer.
    pub(super) fn oai_field_end(&mut self, xr: &mut Reader<Tracked<'_>>, f: OaiField, sink: &mut FindingSink<'_>) {
        match f {
            OaiField::Identifier => self.oai.id = shorten(trim(&self.text)),
            // A datestamp is a W3C Datetime (day or second precision): read as <lastmod> is.
            OaiField::Datestamp => self.field(xr, Field::Lastmod, sink),
            OaiField::DcIdentifier => {
                if self.build.loc.is_some() {
                    return; // the first http(s) identifier is the URL
                }
                let raw_len = self.text.len();
                let value = trim(&self.text);
                if value.is_empty() {
                    return;
                }
                if is_http(value) {
                    let kept = self.build.pending.len();
                    self.build.loc_seen = true;
                    self.loc(xr, self.text_off, value.len() != raw_len);
                    if self.build.loc.is_some() {
                        self.build.loc_off = self.text_off;
                        return;
                    }
                    // Not usable: another identifier may be; the record's finding lists it.
                    self.build.pending.truncate(kept);
                }
                if self.oai.others.len() < MAX_KEPT {
                    let v = shorten(trim(&self.text));
                    self.oai.others.push(v);
                }
            }
            OaiField::Token => self.oai.token = Some(trim(&self.text).to_string()),
            OaiField::Error => {
                if self.oai.errors.len() < MAX_KEPT {
                    let pos = XmlReader::pos_at(xr, self.origin, self.text_off);
                    let message = shorten(trim(&self.text));
                    let code = std::mem::take(&mut self.oai.error_code);
                    self.oai.errors.push((code, message, pos));
                }
            }
        }
    }

    /// A record ends: its URL as an entry, or a finding that says why it has none.
    pub(super) fn finish_oai_record(&mut self, xr: &mut Reader<Tracked<'_>>, sink: &mut FindingSink<'_>) -> Step {
        let pos = XmlReader::pos_at(xr, self.origin, self.build.start_off);
        let id = if self.oai.id.is_empty() { String::new() } else { format!(" {}", self.oai.id) };
        if self.oai.deleted {
            self.build.loc = None;
            self.build.pending.clear();
            sink.push(Finding::new(
                Rule::OaiDeleted,
                Some(pos),
                format!("record{id} is deleted (status=\"deleted\"): skipped"),
            ));
            return Step::Continue;
        }
        let Some(loc) = self.build.loc.take() else {
            let found = if self.oai.others.is_empty() {
                "it has no dc:identifier".to_string()
            } else {
                format!("its dc:identifier values are {}", self.oai.others.join(", "))
            };
            self.build.pending.push(Finding::new(
                Rule::OaiNoUrl,
                Some(pos),
                format!(
                    "record{id} has no http(s) URL ({found}): skipped; give the record's landing page as a dc:identifier"
                ),
            ));
            self.flush_pending(None, sink);
            return Step::Continue;
        };
        self.entry_pos = XmlReader::pos_at(xr, self.origin, self.build.loc_off);
        self.flush_pending(Some(loc.as_str()), sink);
        let mut u = UrlEntry::new(loc);
        u.lastmod = self.build.lastmod.take();
        Step::Entry(Entry::Url(u))
    }

    /// The page has ended: what it means for the list. The answer to the URL given, when it
    /// holds no records (`Identify`, `ListIdentifiers`, `ListSets`, `ListMetadataFormats`, or
    /// the `badVerb` or `badArgument` of a `bare` base URL, one that asked no verb), asks for
    /// the records once; any other error answer, or an answer without records where records
    /// were asked for, stops the list and names what it was.
    pub(super) fn oai_end(&mut self, first: bool, bare: bool) -> PageEnd {
        let page = std::mem::take(&mut self.oai);
        let harmless = |code: &str| bare && matches!(code, "badVerb" | "badArgument");
        if first && !page.list && page.errors.iter().all(|(c, _, _)| harmless(c)) {
            let what = match (page.errors.first(), &page.other_verb) {
                (Some((code, message, _)), _) => {
                    let said = if message.is_empty() { String::new() } else { format!(": {message}") };
                    format!(
                        "an OAI-PMH answer without records (the error {code}{said}, as a repository's base URL answers)"
                    )
                }
                (None, Some(verb)) => format!("an OAI-PMH <{verb}> answer, without records"),
                (None, None) => "an OAI-PMH answer without records".to_string(),
            };
            return PageEnd::Next(PageRequest::ListRecords, what);
        }
        if let Some((code, message, pos)) = page.errors.into_iter().next() {
            return PageEnd::Stop(OaiFault::Repository { code, message }, Some(pos));
        }
        if !page.list {
            let found = page.other_verb.map_or_else(|| "no <ListRecords>".to_string(), |v| format!("a <{v}> answer"));
            return PageEnd::Stop(OaiFault::NotRecords { found }, None);
        }
        match page.token {
            Some(t) if !t.is_empty() => {
                let what = format!("the list of records goes on (resumptionToken {:?})", shorten(&t));
                PageEnd::Next(PageRequest::Resume(t), what)
            }
            _ => PageEnd::Done,
        }
    }
}
