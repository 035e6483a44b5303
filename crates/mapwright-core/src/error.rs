//! The one error type of the core: what stops a read (I/O, a breached limit, fatal XML).
//!
//! Everything a reader can recover from is a [`crate::Finding`] instead.

use crate::rule::{Position, Rule};
use std::io;

/// Why reading a sitemap stopped before its end.
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
    /// Elements nested deeper than the limit.
    #[error("{position}: elements nested deeper than {limit} levels; stopped reading")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// Where the limit was passed.
        position: Position,
    },
}

impl Error {
    /// The catalogue rule this error breaks, for validators and status reports.
    pub fn rule(&self) -> Option<Rule> {
        Some(match self {
            Error::Io(_) => return None,
            Error::TooLarge { .. } => Rule::TooLarge,
            Error::Xml { .. } | Error::TooDeep { .. } => Rule::XmlMalformed,
            Error::Encoding { .. } => Rule::Encoding,
            Error::Gzip { .. } => Rule::GzipCorrupt,
            Error::NotSitemap { .. } => Rule::UnknownRoot,
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
            Error::Io(_) | Error::Gzip { .. } => None,
        }
    }
}
