//! A response body as a blocking `BufRead` with bounded memory: a task pulls chunks off the
//! connection into a small channel, the synchronous reader of the core pulls them out.
//!
//! Backpressure is the channel: when the reader is slow the task stops reading the socket,
//! so a fast or hostile server never makes us hold more than a few chunks.

use crate::{Config, Error};
use bytes::Bytes;
use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Chunks in flight between the connection and the reader.
const CHANNEL_CHUNKS: usize = 8;

/// What the body task learned once the body ended (cleanly or not).
#[derive(Clone, Debug, Default)]
pub struct BodyStats {
    /// Bytes received on the wire (after transfer decoding, before gzip removal).
    pub bytes: u64,
    /// xxh3-64 of those bytes, to notice a changed file that lacks validators.
    pub hash: u64,
    /// Whether the whole body arrived.
    pub complete: bool,
}

/// A blocking reader over a streamed response body. Errors of the HTTP layer (timeouts, the
/// wire limit) come out as `io::Error`s wrapping an [`Error`]: see [`take_fetch_error`].
pub struct BodyReader {
    rx: mpsc::Receiver<Result<Bytes, Error>>,
    cur: Bytes,
    stats: Arc<Mutex<BodyStats>>,
    failed: bool,
    /// The task that feeds the channel: stopped when the reader goes (no more socket reads
    /// for nobody), or from outside ([`BodyReader::stopper`]).
    task: AbortHandle,
    url: String,
}

impl Drop for BodyReader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Stops a body's task when dropped: the reader then sees an error (never a clean end), so a
/// reader blocked on a body whose caller gave up (a discovery or a job past its deadline) ends
/// at once.
pub struct StopOnDrop(Option<AbortHandle>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

impl StopOnDrop {
    /// Lets the body go on: dropping the guard then stops nothing (its caller no longer
    /// needs to stop it, and another reader may still be reading it).
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl BodyReader {
    /// Statistics of the body; final once the reader has returned end of file or an error.
    pub fn stats(&self) -> BodyStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// A shared handle on the statistics, readable after the reader is moved away.
    pub fn stats_handle(&self) -> Arc<Mutex<BodyStats>> {
        self.stats.clone()
    }

    /// A guard that stops the body when dropped, for a caller that hands the reader to
    /// another thread and may give up before that thread is done.
    pub fn stopper(&self) -> StopOnDrop {
        StopOnDrop(Some(self.task.clone()))
    }
}

/// `Read` for readers whose `BufRead` does the work ([`mapwright_core::read::read_buffered`]).
macro_rules! read_through_fill_buf {
    ($($reader:ty),*) => {$(
        impl Read for $reader {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                mapwright_core::read::read_buffered(self, buf)
            }
        }
    )*};
}

read_through_fill_buf!(BodyReader, ReceivedReader);

impl BufRead for BodyReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.cur.is_empty() && !self.failed {
            match self.rx.blocking_recv() {
                Some(Ok(b)) => self.cur = b,
                Some(Err(e)) => {
                    self.failed = true;
                    return Err(io::Error::other(e));
                }
                // The task records a complete body before it ends; ended without that, it was
                // stopped: what arrived is a cut body, not the whole one.
                None if !self.stats.lock().is_ok_and(|s| s.complete) => {
                    self.failed = true;
                    let message = "the transfer was stopped before the end of the body".to_string();
                    return Err(io::Error::other(Error::Http { url: self.url.clone(), message }));
                }
                None => break,
            }
        }
        Ok(&self.cur)
    }

    fn consume(&mut self, amt: usize) {
        let _ = self.cur.split_to(amt.min(self.cur.len()));
    }
}

impl BodyReader {
    /// The whole body, received before a byte of it is parsed: its [`BodyStats`] (the hash of
    /// the bytes as they came) are then known first, so a caller that stored the hash of a body
    /// it read before can skip reading the same bytes again. Call it on a blocking thread (as
    /// any read of a `BodyReader`). The first `memory` bytes stay in memory and the rest goes to
    /// an unnamed temporary file (removed when the file is closed), so memory stays bounded
    /// whatever the body's size within the wire limit. An error of the transfer (a timeout, the
    /// wire limit) ends the receiving and is kept for the reader, after the bytes before it;
    /// the `Err` of this call is the temporary file's only.
    pub fn receive(mut self, memory: usize) -> io::Result<Received> {
        let mut head = Vec::new();
        let mut file: Option<std::fs::File> = None;
        let error = loop {
            let chunk = match self.fill_buf() {
                Ok([]) => break None,
                Ok(chunk) => chunk,
                Err(e) => break Some(e),
            };
            let n = chunk.len();
            let room = memory.saturating_sub(head.len()).min(n);
            head.extend_from_slice(&chunk[..room]);
            if room < n {
                let spill = match &mut file {
                    Some(f) => f,
                    None => file.insert(tempfile::tempfile()?),
                };
                io::Write::write_all(spill, &chunk[room..])?;
            }
            self.consume(n);
        };
        if let Some(f) = &mut file {
            io::Seek::rewind(f)?;
        }
        Ok(Received { stats: self.stats(), head: head.into(), file, error })
    }
}

/// A body received whole ([`BodyReader::receive`]): its statistics, then its bytes for a reader.
pub struct Received {
    /// What the body task recorded: bytes, hash, and whether the whole body arrived.
    pub stats: BodyStats,
    head: Bytes,
    file: Option<std::fs::File>,
    error: Option<io::Error>,
}

impl Received {
    /// A blocking reader giving the bytes received, then the transfer's error if one cut it
    /// short (once, as the [`BodyReader`] gave it: [`take_fetch_error`] finds the fetch error).
    pub fn into_reader(self) -> ReceivedReader {
        ReceivedReader { head: self.head, file: self.file.map(io::BufReader::new), error: self.error }
    }
}

/// The reader of a body held whole: a [`Received`] one (its head in memory, the rest in a
/// temporary file) or a [`WholeBody`] (all in memory, no file).
pub struct ReceivedReader {
    head: Bytes,
    file: Option<io::BufReader<std::fs::File>>,
    error: Option<io::Error>,
}

impl BufRead for ReceivedReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.head.is_empty() {
            let more = match &mut self.file {
                Some(file) => !file.fill_buf()?.is_empty(),
                None => false,
            };
            if !more {
                self.file = None;
                if let Some(e) = self.error.take() {
                    return Err(e);
                }
            } else if let Some(file) = &mut self.file {
                return file.fill_buf();
            }
        }
        Ok(&self.head)
    }

    fn consume(&mut self, amt: usize) {
        if !self.head.is_empty() {
            let _ = self.head.split_to(amt.min(self.head.len()));
        } else if let Some(file) = &mut self.file {
            file.consume(amt);
        }
    }
}

/// A body read whole on the async side ([`crate::Response::read_whole`]): what a small
/// sitemap's body is, so that it can be parsed without a task feeding a blocking reader.
pub struct WholeBody {
    /// The bytes received (all of them when `stats.complete`).
    pub bytes: Bytes,
    /// What the body task of [`BodyReader`] would have recorded.
    pub stats: BodyStats,
    /// What cut the transfer short (a timeout, the wire limit, an unsupported encoding).
    pub error: Option<Error>,
}

impl WholeBody {
    /// A blocking reader giving the bytes, then the error (as a [`BodyReader`] would: an
    /// `io::Error` wrapping the fetch error, once).
    pub fn into_reader(self) -> ReceivedReader {
        ReceivedReader { head: self.bytes, file: None, error: self.error.map(io::Error::other) }
    }
}

/// The fetch error inside an I/O error from a [`BodyReader`], if that is what it is.
pub fn take_fetch_error(e: std::io::Error) -> Result<Error, std::io::Error> {
    if e.get_ref().is_some_and(|i| i.is::<Error>()) {
        let inner = e.into_inner().expect("checked above");
        return Ok(*inner.downcast::<Error>().expect("checked above"));
    }
    Err(e)
}

/// Starts the task that moves `resp`'s body into a channel and returns the reading end.
pub(crate) fn spawn(mut resp: reqwest::Response, url: String, config: Arc<Config>) -> BodyReader {
    let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
    let stats = Arc::new(Mutex::new(BodyStats::default()));
    let task_stats = stats.clone();
    let encoding =
        resp.headers().get(reqwest::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).map(str::to_string);
    let task_url = url.clone();
    let task = tokio::spawn(async move {
        let url = task_url;
        if let Some(enc) =
            encoding.filter(|e| !matches!(e.trim().to_ascii_lowercase().as_str(), "gzip" | "x-gzip" | "identity" | ""))
        {
            let _ = tx.send(Err(Error::Encoding { url, encoding: enc })).await;
            return;
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut total = 0u64;
        let complete = loop {
            let chunk = match tokio::time::timeout(config.read_timeout, resp.chunk()).await {
                Err(_) => Err(Error::Timeout { url: url.clone(), what: "between bytes", limit: config.read_timeout }),
                Ok(Err(e)) => Err(Error::from_reqwest(&url, &e, &config)),
                Ok(Ok(c)) => Ok(c),
            };
            let chunk = match chunk {
                Ok(Some(c)) => c,
                Ok(None) => break true,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    break false;
                }
            };
            total += chunk.len() as u64;
            if total > config.max_bytes {
                let _ = tx.send(Err(Error::TooLarge { url: url.clone(), limit: config.max_bytes })).await;
                break false;
            }
            hasher.update(&chunk);
            if tx.send(Ok(chunk)).await.is_err() {
                break false; // the reader stopped: stop reading the socket too
            }
        };
        if let Ok(mut s) = task_stats.lock() {
            *s = BodyStats { bytes: total, hash: hasher.digest(), complete };
        }
    });
    BodyReader { rx, cur: Bytes::new(), stats, failed: false, task: task.abort_handle(), url }
}
