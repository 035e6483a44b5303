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
            _ => None,
        }
    }
}
