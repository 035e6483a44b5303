//! The fields of a `<url>` or `<sitemap>`: `loc`, `lastmod`, `changefreq`, `priority`, each read
//! leniently with a finding for every repair.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Loc,
    Lastmod,
    Changefreq,
    Priority,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Loc => "loc",
            Field::Lastmod => "lastmod",
            Field::Changefreq => "changefreq",
            Field::Priority => "priority",
        }
    }
}

/// A form of the same instant that passes the official XSD.
pub(super) fn xsd_suggestion(v: &crate::date::W3cDateTime) -> String {
    use crate::date::Precision;
    let mut s = *v;
    match v.precision {
        Precision::Year | Precision::Month => {
            s.precision = Precision::Day;
            s.tz = None;
        }
        Precision::Minute => s.precision = Precision::Second,
        _ => {}
    }
    if s.precision > Precision::Day && s.tz.is_none() {
        s.tz = Some(crate::date::Tz::Utc);
    }
    s.to_string()
}

/// A decimal from 0.0 to 1.0 written with a point; anything else says what to write.
pub(crate) fn parse_priority(s: &str) -> Result<f32, String> {
    let ok_chars = !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && s.bytes().filter(|&b| b == b'.').count() <= 1
        && s != ".";
    if ok_chars {
        if let Ok(v) = s.parse::<f32>() {
            if (0.0..=1.0).contains(&v) {
                return Ok(v);
            }
            return Err(format!("priority {s:?} is outside 0.0 to 1.0: dropped; use a value such as 0.5"));
        }
    }
    if s.contains(',') {
        let fixed = s.replace(',', ".");
        if fixed.parse::<f32>().is_ok_and(|v| (0.0..=1.0).contains(&v)) {
            return Err(format!("priority {s:?}: use a point as decimal separator: {fixed}"));
        }
    }
    Err(format!("priority {:?} is not a decimal number from 0.0 to 1.0: dropped", shorten(s)))
}

impl State {
    pub(super) fn field(&mut self, xr: &mut Reader<Tracked<'_>>, f: Field, _sink: &mut FindingSink<'_>) {
        let off = self.text_off;
        let seen = match f {
            Field::Loc => &mut self.build.loc_seen,
            Field::Lastmod => &mut self.build.lastmod_seen,
            Field::Changefreq => &mut self.build.changefreq_seen,
            Field::Priority => &mut self.build.priority_seen,
        };
        if std::mem::replace(seen, true) {
            let pos = XmlReader::pos_at(xr, self.origin, off);
            self.build.pending.push(Finding::new(
                Rule::LocDuplicateTag,
                Some(pos),
                format!("a second <{}> in one entry: the first is kept; remove this one", f.name()),
            ));
            return;
        }
        let raw_len = self.text.len();
        let value = trim(&self.text);
        let trimmed = value.len() != raw_len;
        match f {
            Field::Loc => self.loc(xr, off, trimmed),
            Field::Lastmod => match parse_lastmod(value) {
                LastmodParse::Exact(v) => {
                    if !v.passes_xsd() {
                        let pos = XmlReader::pos_at(xr, self.origin, off);
                        self.build.pending.push(Finding::new(
                            Rule::LastmodPrecision,
                            Some(pos),
                            format!(
                                "lastmod {value:?} is valid W3C Datetime but the official XSD rejects it: write {}",
                                xsd_suggestion(&v)
                            ),
                        ));
                    }
                    self.build.lastmod = Some(Lastmod::W3c(v));
                }
                LastmodParse::Repaired(v, why) => {
                    let pos = XmlReader::pos_at(xr, self.origin, off);
                    self.build.pending.push(Finding::new(
                        Rule::LastmodFormat,
                        Some(pos),
                        format!(
                            "lastmod {:?} is not W3C Datetime ({why}): read as {}; write {}",
                            shorten(value),
                            v.to_utc_string(),
                            xsd_suggestion(&v)
                        ),
                    ));
                    self.build.lastmod = Some(Lastmod::Text { text: value.into(), value: v });
                }
                LastmodParse::Invalid => {
                    let pos = XmlReader::pos_at(xr, self.origin, off);
                    self.build.pending.push(Finding::new(
                            Rule::LastmodFormat,
                            Some(pos),
                            format!("lastmod {:?} is not a W3C Datetime: dropped; write a date such as 2005-01-01 or 2005-01-01T12:00:00+00:00", shorten(value)),
                        ));
                }
            },
            Field::Changefreq => match ChangeFreq::parse(value) {
                Some(c) => self.build.changefreq = Some(c),
                None => {
                    let pos = XmlReader::pos_at(xr, self.origin, off);
                    let fixed = ChangeFreq::parse_ignore_case(value);
                    let msg = match fixed {
                        Some(c) => format!("changefreq {value:?}: values are lower case; write {c}"),
                        None => format!(
                            "changefreq {:?} is not one of always, hourly, daily, weekly, monthly, yearly, never: dropped",
                            shorten(value)
                        ),
                    };
                    self.build.pending.push(Finding::new(Rule::ChangefreqValue, Some(pos), msg));
                    self.build.changefreq = fixed;
                }
            },
            Field::Priority => match parse_priority(value) {
                Ok(p) => self.build.priority = Some(p),
                Err(msg) => {
                    let pos = XmlReader::pos_at(xr, self.origin, off);
                    self.build.pending.push(Finding::new(Rule::PriorityRange, Some(pos), msg));
                }
            },
        }
    }

    pub(super) fn loc(&mut self, xr: &mut Reader<Tracked<'_>>, off: u64, trimmed: bool) {
        let value = trim(&self.text);
        let push = |b: &mut Build, xr: &mut Reader<Tracked<'_>>, rule: Rule, msg: String| {
            let pos = XmlReader::pos_at(xr, self.origin, off);
            b.pending.push(Finding::new(rule, Some(pos), msg));
        };
        if value.is_empty() {
            push(&mut self.build, xr, Rule::LocMissing, "empty <loc>: the entry is skipped".into());
            return;
        }
        if value.len() > self.max_loc || self.text_cut {
            push(
                &mut self.build,
                xr,
                Rule::LocTooLong,
                format!("<loc> longer than {} bytes: the entry is skipped", self.max_loc),
            );
            return;
        }
        if self.text_entity {
            return; // the entity's finding says the entry is skipped
        }
        // A relative URL (`/page`, `../page`, `//host/page`) resolves against the URL the
        // document was served at, when it is known: the entry is kept under its absolute URL,
        // and the error says so (the protocol asks for absolute URLs).
        let resolved = match (Loc::parse_with_repairs(value), &self.atom.document) {
            (Err(LocError::NotAbsolute), Some(doc)) if value.starts_with(['/', '.']) => {
                match doc.join(value).ok().filter(|u| matches!(u.scheme(), "http" | "https")) {
                    Some(abs) => {
                        let msg = format!(
                            "<loc> {:?} is a relative URL: read as {abs} (resolved against the sitemap's own URL); \
                             the protocol requires absolute URLs, and search engines may skip this one",
                            shorten(value)
                        );
                        push(&mut self.build, xr, Rule::LocNotAbsolute, msg);
                        Loc::parse_with_repairs(abs.as_str())
                    }
                    None => Err(LocError::NotAbsolute),
                }
            }
            (parsed, _) => parsed,
        };
        match resolved {
            Ok((loc, repairs)) => {
                if trimmed {
                    push(
                        &mut self.build,
                        xr,
                        Rule::LocWhitespace,
                        "whitespace around the URL inside <loc>: it was trimmed".into(),
                    );
                }
                if repairs.escaped {
                    push(
                        &mut self.build,
                        xr,
                        Rule::LocNotEscaped,
                        format!("URL has characters that must be percent-encoded: write {}", loc.as_str()),
                    );
                }
                if loc.char_len() >= MAX_LOC_LEN {
                    push(
                        &mut self.build,
                        xr,
                        Rule::LocTooLong,
                        format!("URL of {} characters: the protocol allows fewer than 2,048", loc.char_len()),
                    );
                }
                self.build.loc = Some(loc);
            }
            Err(e) => {
                let rule = match e {
                    LocError::Empty => Rule::LocMissing,
                    LocError::NotAbsolute => Rule::LocNotAbsolute,
                    LocError::Scheme(_) => Rule::LocScheme,
                    LocError::Invalid(_) => Rule::LocInvalid,
                };
                let msg = format!("<loc> {:?}: {e}; the entry is skipped", shorten(value));
                push(&mut self.build, xr, rule, msg);
            }
        }
    }

    /// A URL written as bare text in `<url>`/`<sitemap>` without `<loc>` (seen in the wild).
    pub(super) fn bare_loc(&mut self, xr: &mut Reader<Tracked<'_>>, role: Role) {
        let text = trim(&self.build.bare);
        if text.is_empty() {
            return;
        }
        if let Some(name) = self.build.bare_entity.take() {
            let pos = XmlReader::pos_at(xr, self.origin, self.build.start_off);
            self.build.pending.push(Finding::new(
                Rule::XmlMalformed,
                Some(pos),
                format!(
                    "a URL written without <loc> holds the entity &{}; which XML does not define (never expanded): the entry is skipped",
                    shorten(&name)
                ),
            ));
            return;
        }
        if let Ok(loc) = Loc::parse(text) {
            let pos = XmlReader::pos_at(xr, self.origin, self.build.start_off);
            let what = if role == Role::Url { "url" } else { "sitemap" };
            self.build.pending.push(Finding::new(
                Rule::LocMissing,
                Some(pos),
                format!("<{what}> without <loc>: its text was read as the location; wrap the URL in <loc>"),
            ));
            self.build.loc_seen = true;
            self.build.loc = Some(loc);
        }
    }
}
