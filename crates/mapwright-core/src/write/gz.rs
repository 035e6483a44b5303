//! gzip on a second thread: the set writer encodes entries while a worker compresses and
//! writes the parts, so a gzipped set costs about what the slower of the two costs, not their
//! sum. Chunks travel through a bounded channel and are recycled, so memory stays flat.
//!
//! The worker also performs the renames of finished parts, in order after their last byte,
//! so a part appears under its final name only when complete.

use crate::error::Error;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Bytes handed to the worker at a time.
const CHUNK: usize = 1 << 20;
/// Chunks in flight at most (memory: about `(QUEUE + 2) * CHUNK`).
const QUEUE: usize = 4;

enum Msg {
    Start(File, PathBuf),
    Data(Vec<u8>),
    End,
    Rename(PathBuf, PathBuf),
}

/// The encoder's side of the worker.
pub(crate) struct GzWorker {
    tx: Option<SyncSender<Msg>>,
    free: Receiver<Vec<u8>>,
    handle: Option<JoinHandle<Result<(), Error>>>,
    chunk: Vec<u8>,
}

fn file_err(path: &std::path::Path, source: io::Error) -> Error {
    Error::File { path: path.to_path_buf(), source }
}

impl GzWorker {
    /// Starts the worker thread, compressing at `level`.
    pub(crate) fn new(level: u32) -> Result<Self, Error> {
        let (tx, rx) = sync_channel::<Msg>(QUEUE);
        let (free_tx, free) = sync_channel::<Vec<u8>>(QUEUE + 2);
        let handle = std::thread::Builder::new()
            .name("mapwright-gzip".into())
            .spawn(move || run(rx, free_tx, Compression::new(level.min(9))))
            .map_err(Error::Io)?;
        Ok(GzWorker { tx: Some(tx), free, handle: Some(handle), chunk: Vec::with_capacity(CHUNK) })
    }

    fn send(&mut self, m: Msg) -> Result<(), Error> {
        let sent = self.tx.as_ref().map(|tx| tx.send(m).is_ok()).unwrap_or(false);
        if sent {
            Ok(())
        } else {
            Err(self.join().err().unwrap_or_else(|| Error::Config("gzip worker stopped".into())))
        }
    }

    /// Begins a part in `file`, already created (exclusively) at `tmp`.
    pub(crate) fn start(&mut self, file: File, tmp: PathBuf) -> Result<(), Error> {
        self.send(Msg::Start(file, tmp))
    }

    /// Appends bytes to the current part.
    #[inline]
    pub(crate) fn write(&mut self, b: &[u8]) -> Result<(), Error> {
        self.chunk.extend_from_slice(b);
        if self.chunk.len() >= CHUNK { self.flush_chunk() } else { Ok(()) }
    }

    fn flush_chunk(&mut self) -> Result<(), Error> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let next = self.free.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.chunk, next);
        self.send(Msg::Data(full))
    }

    /// Ends the current part (its gzip trailer is written by the worker).
    pub(crate) fn end(&mut self) -> Result<(), Error> {
        self.flush_chunk()?;
        self.send(Msg::End)
    }

    /// Renames a finished part, after everything sent before.
    pub(crate) fn rename(&mut self, from: PathBuf, to: PathBuf) -> Result<(), Error> {
        self.send(Msg::Rename(from, to))
    }

    /// Waits until everything sent is done; the first error the worker met, if any.
    pub(crate) fn join(&mut self) -> Result<(), Error> {
        self.tx = None;
        match self.handle.take() {
            Some(h) => h.join().unwrap_or_else(|_| Err(Error::Config("gzip worker panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for GzWorker {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

fn run(rx: Receiver<Msg>, free: SyncSender<Vec<u8>>, level: Compression) -> Result<(), Error> {
    let mut current: Option<(GzEncoder<File>, PathBuf)> = None;
    for msg in rx {
        match msg {
            Msg::Start(f, tmp) => current = Some((GzEncoder::new(f, level), tmp)),
            Msg::Data(mut v) => {
                if let Some((enc, tmp)) = &mut current {
                    enc.write_all(&v).map_err(|e| file_err(tmp, e))?;
                }
                v.clear();
                let _ = free.try_send(v);
            }
            Msg::End => {
                if let Some((enc, tmp)) = current.take() {
                    enc.finish().map_err(|e| file_err(&tmp, e))?;
                }
            }
            Msg::Rename(from, to) => fs::rename(&from, &to).map_err(|e| file_err(&to, e))?,
        }
    }
    Ok(())
}
