//! OAI-PMH 2.0 answers, read as Google Sitemaps read a repository: `ListRecords` with
//! `metadataPrefix=oai_dc`, each record's first http(s) `dc:identifier` as the URL and its
//! header's `datestamp` as lastmod, deleted records skipped. One answer is one page; what the
//! page says about the next one (its `resumptionToken`, or the `badVerb` a bare base URL
//! answers) goes to [`SitemapReader`](crate::SitemapReader), which asks the caller's
//! [`Pager`](crate::Pager) for it.

use super::*;
use crate::read::PageRequest;

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
    /// A `<ListRecords>` was seen.
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
            (Role::Root, "ListRecords") => {
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

    /// The page has ended: its errors as findings, and the next page to ask for. The answer
    /// to a bare base URL (`badVerb`), or to another verb, asks for the records once.
    pub(super) fn oai_end(&mut self, first: bool, sink: &mut FindingSink<'_>) -> Option<PageRequest> {
        let page = std::mem::take(&mut self.oai);
        let harmless = |code: &str| matches!(code, "badVerb" | "badArgument");
        if first && !page.list && page.errors.iter().all(|(c, _, _)| harmless(c)) {
            return Some(PageRequest::ListRecords);
        }
        for (code, message, pos) in &page.errors {
            let said = if message.is_empty() { String::new() } else { format!(" ({message})") };
            let text = match code.as_str() {
                "noRecordsMatch" => format!(
                    "the repository answers noRecordsMatch{said}: it lists no records in Dublin Core (metadataPrefix=oai_dc), so no URL"
                ),
                "badResumptionToken" => format!(
                    "the repository refuses the resumption token (badResumptionToken{said}): the records after this page were not read"
                ),
                other => format!(
                    "the repository answers the OAI-PMH error {other:?}{said}: no records read from this answer"
                ),
            };
            sink.push(Finding::new(Rule::OaiError, Some(*pos), text));
        }
        if !page.list && page.errors.is_empty() {
            let what = page.other_verb.map_or_else(|| "no <ListRecords>".to_string(), |v| format!("<{v}>"));
            sink.push(Finding::new(
                Rule::OaiIncomplete,
                None,
                format!("the answer to ListRecords holds {what} instead of records: nothing read from it"),
            ));
        }
        match page.token {
            Some(t) if page.list && !t.is_empty() => Some(PageRequest::Resume(t)),
            _ => None,
        }
    }
}
