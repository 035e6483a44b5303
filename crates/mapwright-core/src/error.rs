//! The one error type of the core: what stops a read (I/O, a breached limit, fatal XML).
//!
//! Everything a reader can recover from is a [`crate::Finding`] instead.

use crate::rule::{Position, Rule};
use std::io;
use std::path::PathBuf;

/// Why reading a sitemap stopped before its end, or writing one failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// More uncompressed bytes than the limit; nothing after the limit was read.
    #[error("{position}: more than {limit} bytes uncompressed (the protocol's limit is 52,428,800); stopped reading")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
        /// Where reading stopped.
        position: Position,
    },
    /// Not well-formed XML that no repair can read past.
    #[error("{position}: malformed XML: {message}")]
    Xml {
        /// Where the fault is.
        position: Position,
        /// What is wrong.
        message: String,
    },
    /// Bytes that are not valid in the document's encoding.
    #[error("{position}: invalid encoding: {message}")]
    Encoding {
        /// Where the fault is.
        position: Position,
        /// What is wrong.
        message: String,
    },
    /// A gzip stream that does not decompress to its end.
    #[error("corrupt gzip stream after {offset} uncompressed bytes: {message}")]
    Gzip {
        /// Uncompressed bytes produced before the fault.
        offset: u64,
        /// What the decompressor said.
        message: String,
    },
    /// The document is not a sitemap in any format (an HTML page, an unknown root element).
    #[error("{position}: not a sitemap: {reason}")]
    NotSitemap {
        /// Where the deciding element starts.
        position: Position,
        /// What was found instead.
        reason: String,
    },
    /// Nothing to read: zero bytes, or only white space (after gzip layers are removed). An
    /// error, not an empty sitemap: a consumer must say so rather than report no entries.
    #[error("{}: there is no sitemap to read (is the file or the response body empty?)", if *.bytes == 0 { "the input is empty (0 bytes)".to_string() } else { format!("the input holds only white space ({} bytes)", .bytes) })]
    Empty {
        /// Bytes of white space read (after decompression).
        bytes: u64,
    },
    /// Elements nested deeper than the limit.
    #[error("{position}: elements nested deeper than {limit} levels; stopped reading")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// Where the limit was passed.
        position: Position,
    },
    /// A file of a sitemap set could not be created, written, renamed or removed.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// One entry alone is larger than the byte limit of a file.
    #[error("the entry for {loc} takes {size} bytes: no file under the limit of {limit} bytes can hold it")]
    EntryTooLarge {
        /// The entry's URL.
        loc: String,
        /// Its size in bytes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// An entry uses an extension whose namespace was not declared when its `<urlset>` began.
    #[error("{loc}: uses an extension whose namespace the <urlset> does not declare")]
    UndeclaredExtension {
        /// The entry's URL.
        loc: String,
    },
    /// More parts than an index may list.
    #[error("more than {limit} files: one index cannot list them all")]
    TooManyParts {
        /// The limit.
        limit: usize,
    },
    /// A writer's configuration cannot work (a bad file name, a base URL that cannot be joined).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An OAI-PMH list of records that stops before its end: a page that could not be asked
    /// for or read, or a repository's error answer. The records of the pages before
    /// [`OaiStop::page`] were given; a reader of a repository must report its read as partial
    /// (or failed, when the page is 1), never as the whole list.
    #[error("{0}")]
    Oai(Box<OaiStop>),
}

/// Where and why an OAI-PMH list of records stopped ([`Error::Oai`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", oai_message(self.page, self.request.as_deref(), &self.fault))]
pub struct OaiStop {
    /// The page of the list that was not read, from 1 (the answer of a bare base URL, which
    /// holds no records, is not counted).
    pub page: u32,
    /// The query that page was (or would have been) asked with; `None` for the answer to the
    /// URL given.
    pub request: Option<String>,
    /// Why the list stops there.
    pub fault: OaiFault,
    /// Where in that page's answer, for a repository's `<error>`.
    pub position: Option<Position>,
}

/// Why an OAI-PMH list of records stops before its end ([`Error::Oai`]), typed so that every
/// caller (the CLI's exit status, discovery's summary, the Python package's exception, the
/// service's read status) can tell a repository's answer from a fault of the way to it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OaiFault {
    /// The repository answered with an OAI-PMH error: `code` is one of OAI-PMH 2.0's
    /// (`badArgument`, `badResumptionToken`, `badVerb`, `cannotDisseminateFormat`,
    /// `idDoesNotExist`, `noRecordsMatch`, `noMetadataFormats`, `noSetHierarchy`) or whatever
    /// the repository wrote.
    Repository {
        /// The `code` attribute.
        code: String,
        /// The element's text.
        message: String,
    },
    /// The page could not be fetched (an HTTP status, a time limit, the network).
    Fetch {
        /// What the HTTP layer said.
        message: String,
    },
    /// The answer is no OAI-PMH list of records (another document, another verb's answer).
    NotRecords {
        /// What it is.
        found: String,
    },
    /// The page's resumption token was followed before: the repository loops.
    TokenRepeats {
        /// The token.
        token: String,
    },
    /// The list goes on past [`Limits::max_pages`](crate::Limits::max_pages) pages.
    PageLimit {
        /// The limit.
        limit: u32,
    },
    /// The pages before it used up [`Limits::max_bytes`](crate::Limits::max_bytes).
    ByteLimit {
        /// Uncompressed bytes read over the pages before.
        used: u64,
        /// The limit.
        limit: u64,
    },
    /// The input (a file, standard input, bytes) cannot ask the repository for a page.
    NoPager {
        /// What the answer read holds instead of the rest of the list.
        answer: String,
    },
}

impl OaiFault {
    /// The repository's error code, for [`OaiFault::Repository`].
    pub fn code(&self) -> Option<&str> {
        match self {
            OaiFault::Repository { code, .. } => Some(code),
            _ => None,
        }
    }
}

impl std::fmt::Display for OaiFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OaiFault::Repository { code, message } => {
                let said = if message.is_empty() { String::new() } else { format!(": {message}") };
                let meaning = match code.as_str() {
                    "noRecordsMatch" => "it lists no records in Dublin Core (metadataPrefix=oai_dc)",
                    "badResumptionToken" => "it refuses the resumption token (invalid or expired)",
                    "badVerb" => "the request's verb is missing, illegal or repeated",
                    "badArgument" => "the request has an illegal, missing or repeated argument",
                    "cannotDisseminateFormat" => "it offers no records in the metadata format asked for (oai_dc)",
                    "idDoesNotExist" => "the identifier asked for is unknown to it",
                    "noMetadataFormats" => "it offers no metadata format for the item",
                    "noSetHierarchy" => "it does not support sets",
                    _ => "an error code OAI-PMH 2.0 does not define",
                };
                write!(f, "the repository answers the OAI-PMH error {code} ({meaning}){said}")
            }
            OaiFault::Fetch { message } => write!(f, "could not be fetched: {message}"),
            OaiFault::NotRecords { found } => write!(f, "is not an OAI-PMH list of records ({found})"),
            OaiFault::TokenRepeats { token } => write!(
                f,
                "its resumption token {token:?} was followed before (the repository loops): not asked for again"
            ),
            OaiFault::PageLimit { limit } => {
                write!(f, "not asked for: the list goes on past {limit} pages, the page limit")
            }
            OaiFault::ByteLimit { used, limit } => write!(
                f,
                "not asked for: the pages before it hold {used} bytes, the limit of one sitemap is {limit} bytes"
            ),
            OaiFault::NoPager { answer } => write!(
                f,
                "{answer}, and this input cannot ask the repository for more: read the repository's base URL over http(s)"
            ),
        }
    }
}

/// The message of [`Error::Oai`]: the page, its request, why, and what was read before it.
fn oai_message(page: u32, request: Option<&str>, fault: &OaiFault) -> String {
    let asked = request.map(|q| format!(" ({q})")).unwrap_or_default();
    let before = match page {
        0 | 1 => "no records read".to_string(),
        2 => "the list is incomplete: only the records of page 1 were read".to_string(),
        n => format!("the list is incomplete: only the records of pages 1 to {} were read", n - 1),
    };
    format!("OAI-PMH page {page}{asked}: {fault}; {before}")
}

impl Error {
    /// The catalogue rule this error breaks, for validators and status reports.
    pub fn rule(&self) -> Option<Rule> {
        Some(match self {
            Error::Io(_)
            | Error::File { .. }
            | Error::EntryTooLarge { .. }
            | Error::UndeclaredExtension { .. }
            | Error::TooManyParts { .. }
            | Error::Config(_) => return None,
            Error::Oai(stop) if matches!(stop.fault, OaiFault::Repository { .. }) => Rule::OaiError,
            Error::Oai(_) => Rule::OaiIncomplete,
            Error::TooLarge { .. } => Rule::TooLarge,
            Error::Xml { .. } | Error::TooDeep { .. } => Rule::XmlMalformed,
            Error::Encoding { .. } => Rule::Encoding,
            Error::Gzip { .. } => Rule::GzipCorrupt,
            Error::NotSitemap { .. } => Rule::UnknownRoot,
            Error::Empty { .. } => Rule::EmptyFile,
        })
    }

    /// Where in the document the error is, when known.
    pub fn position(&self) -> Option<Position> {
        match self {
            Error::TooLarge { position, .. }
            | Error::Xml { position, .. }
            | Error::Encoding { position, .. }
            | Error::NotSitemap { position, .. }
            | Error::TooDeep { position, .. } => Some(*position),
            Error::Oai(stop) => stop.position,
            _ => None,
        }
    }
}
