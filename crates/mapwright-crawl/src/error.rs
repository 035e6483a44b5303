//! The one error type of mapwright-crawl.

use std::io;
use std::path::PathBuf;

/// Why a walk or a log read could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// An include or exclude pattern is not a valid glob.
    #[error("bad pattern {pattern:?}: {message}")]
    Glob {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// `git log` could not be run or failed.
    #[error("git log in {}: {message}", path.display())]
    Git {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The web root's folder walk failed.
    #[error("walking {}: {message}", path.display())]
    Walk {
        /// The root.
        path: PathBuf,
        /// What the walker said.
        message: String,
    },
    /// The start URL or the scope URL is not an absolute http(s) URL.
    #[error("{url:?}: {message}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The crawl state could not be read or written.
    #[error("crawl state {}: {message}", path.display())]
    State {
        /// The state file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The consumer of the crawl's entries failed (writing the sitemap).
    #[error("writing an entry: {0}")]
    Sink(#[source] io::Error),
}
