//! The validation rule catalogue of `../shared/RULES.md`: names are a public interface.

use std::fmt;

/// How bad a finding is; the order is from least to most severe so `max()` gives the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never fails a run.
    Info,
    /// Legal but harmful or suspicious.
    Warning,
    /// The file breaks the protocol: a consumer may reject the file or drop the entry.
    Error,
}

impl Severity {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($( $variant:ident = $name:literal, $sev:ident, $summary:literal; )*) => {
        /// One rule of the catalogue. Scripts match on [`Rule::as_str`], so a name never changes meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $( #[doc = concat!("`", $name, "`: see [`Rule::summary`] and the catalogue.")] $variant, )*
        }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The stable kebab-case name (`loc-missing`).
            pub fn as_str(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }

            /// The severity the catalogue fixes for this rule.
            pub fn severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$sev, )* }
            }

            /// One line: when the rule fires (the catalogue's "when" column).
            pub fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }

            /// Looks a rule up by its public name.
            pub fn from_name(name: &str) -> Option<Rule> {
                match name { $( $name => Some(Rule::$variant), )* _ => None }
            }
        }
    };
}

rules! {
    XmlMalformed = "xml-malformed", Error, "not well-formed XML (line and column of the first fault)";
    Encoding = "encoding", Error, "not UTF-8: invalid bytes, or an XML declaration naming another encoding";
    UnknownRoot = "unknown-root", Error, "neither urlset, sitemapindex, rss, feed, nor a plain-text URL list";
    Namespace = "namespace", Error, "root lacks the sitemap namespace or has a wrong one";
    LegacyNamespace = "legacy-namespace", Warning, "Google 0.84 namespace: still read, but outdated";
    LocMissing = "loc-missing", Error, "a <url> or <sitemap> with no <loc>, or an empty one";
    LocDuplicateTag = "loc-duplicate-tag", Error, "two <loc> (or two lastmod, ...) in one entry";
    LocNotAbsolute = "loc-not-absolute", Error, "relative URL, or no scheme";
    LocScheme = "loc-scheme", Error, "scheme other than http or https";
    LocTooLong = "loc-too-long", Error, "2,048 characters or more";
    LocInvalid = "loc-invalid", Error, "not a parseable URL (bad host, spaces, control characters)";
    LocNotEscaped = "loc-not-escaped", Warning, "characters that should be percent-encoded (non-ASCII, space)";
    LocWhitespace = "loc-whitespace", Warning, "whitespace around the URL inside <loc> (it is trimmed)";
    LocOutOfScope = "loc-out-of-scope", Error, "other scheme, host or port than the sitemap's, or a path outside the sitemap's folder";
    LastmodFormat = "lastmod-format", Error, "not W3C Datetime";
    LastmodPrecision = "lastmod-precision", Info, "a W3C Datetime form that the official XSD rejects (year only, year-month, minutes without seconds)";
    LastmodFuture = "lastmod-future", Warning, "later than now (with a small clock-skew allowance)";
    ChangefreqValue = "changefreq-value", Error, "not one of the seven values (case matters)";
    PriorityRange = "priority-range", Error, "not a decimal number from 0.0 to 1.0 (0,8 included)";
    PriorityUniform = "priority-uniform", Warning, "every URL (of more than a handful) has the same priority";
    UnknownElement = "unknown-element", Warning, "an element in the sitemap namespace that the schema does not know";
    TooManyUrls = "too-many-urls", Error, "more than 50,000 entries in one file";
    TooLarge = "too-large", Error, "more than 52,428,800 bytes uncompressed";
    DuplicateUrl = "duplicate-url", Warning, "the same loc listed more than once";
    EmptySitemap = "empty-sitemap", Warning, "no entries at all";
    IndexNested = "index-nested", Warning, "an index lists another index (engines such as Google refuse this)";
    IndexCrossSite = "index-cross-site", Error, "an index lists a sitemap on another site";
    TextInvalidLine = "text-invalid-line", Error, "a line of a text sitemap that is not one absolute URL";
    GzipCorrupt = "gzip-corrupt", Error, "a gzip stream that does not decompress to the end";
    Bom = "bom", Info, "a UTF-8 byte order mark before the XML declaration";
    RobotsDisallowed = "robots-disallowed", Warning, "a listed URL that the site's robots.txt disallows (with live checks)";
    UrlStatus = "url-status", Warning, "a listed URL answers 404/410/5xx, or redirects (with live checks)";
    UrlNoindex = "url-noindex", Warning, "a listed URL carries noindex (meta robots or X-Robots-Tag; with live checks)";
    EmptyFile = "empty-file", Error, "no content at all (zero bytes, or only white space, after decompression)";
    ScopeVouched = "scope-vouched", Info, "robots.txt or a verified owner vouches for the sitemap: it may list any URL of that origin, not only its folder";
    OaiError = "oai-error", Error, "an OAI-PMH repository answers an error (noRecordsMatch: no records; badResumptionToken, cannotDisseminateFormat, ...)";
    OaiIncomplete = "oai-incomplete", Error, "an OAI-PMH list of records not read to its end: a page could not be fetched or read, a resumption token repeats, a limit was reached";
    OaiNoUrl = "oai-no-url", Warning, "an OAI-PMH record without an http(s) dc:identifier (only a DOI, a handle, an oai: identifier): skipped";
    OaiDeleted = "oai-deleted", Info, "an OAI-PMH record marked status=\"deleted\": skipped";
    NoUsableUrl = "no-usable-url", Error, "entries are listed but every one was skipped, none for an error (each OAI-PMH record without an http(s) dc:identifier): the file gives no URL";
}

impl Rule {
    /// Whether a finding of this rule means the reader skipped an entry (it had no usable
    /// `loc`): a file whose entries all drew one reads no entry, and these findings say why.
    pub fn skips_entry(self) -> bool {
        matches!(
            self,
            Rule::LocMissing
                | Rule::LocNotAbsolute
                | Rule::LocScheme
                | Rule::LocInvalid
                | Rule::LocTooLong
                | Rule::TextInvalidLine
                | Rule::OaiNoUrl
        )
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A place in a file: 1-based line and column (column counted in bytes), plus the byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in bytes from the start of the line.
    pub column: u32,
    /// 0-based byte offset in the uncompressed, UTF-8 input.
    pub offset: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One diagnostic: a rule broken (or a repair made) at a place, about an entry.
///
/// Findings are data, not errors: reading goes on after most of them.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    /// The rule; its severity is [`Rule::severity`].
    pub rule: Rule,
    /// Where the offending element starts; `None` when the finding is about the file as a whole.
    pub position: Option<Position>,
    /// The entry's `loc`, where there is one.
    pub loc: Option<String>,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl Finding {
    /// A finding at a position, about no particular entry.
    pub fn new(rule: Rule, position: Option<Position>, message: impl Into<String>) -> Self {
        Finding { rule, position, loc: None, message: message.into() }
    }

    /// The severity fixed by the catalogue for this finding's rule.
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }

    /// Attaches the entry's `loc`.
    pub fn with_loc(mut self, loc: impl Into<String>) -> Self {
        self.loc = Some(loc.into());
        self
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.position {
            write!(f, "{p}: ")?;
        }
        write!(f, "{}[{}]: {}", self.severity(), self.rule, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &r in Rule::ALL {
            assert_eq!(Rule::from_name(r.as_str()), Some(r));
        }
        assert_eq!(Rule::ALL.len(), 40);
        assert_eq!(Rule::from_name("nope"), None);
    }
}
