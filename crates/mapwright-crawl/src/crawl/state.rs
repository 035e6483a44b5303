//! The resumable state of a crawl: an append-only JSON Lines log in the `--state` folder.
//!
//! The first line names the crawl (start URL and scope); then one line per page finished,
//! holding the page's whole [`Fetch`] result, written with one `write` call as soon as the
//! page is done. A SIGKILL loses nothing the kernel has (the file is fsynced every
//! [`SYNC_EVERY`] pages and at the end, for power loss); a torn last line is ignored. On
//! resume the lines are replayed through the same code that handled them live, so the
//! frontier, the listed URLs and the report come back exactly, and no finished page is
//! fetched again. A JSONL file over SQLite: the access is a pure append and one sequential
//! read, and the file stays readable with `jq`.

use super::page::Fetch;
use crate::Error;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// Pages between two fsyncs.
pub const SYNC_EVERY: usize = 256;

/// The log's file name in the state folder.
pub const LOG_NAME: &str = "crawl.jsonl";

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Header {
    mapwright_crawl: u32,
    start: String,
    scope: String,
}

/// One finished page.
#[derive(Serialize, Deserialize, Debug)]
pub struct Record {
    /// The URL requested (normalised).
    pub url: String,
    /// Its depth.
    pub depth: u32,
    /// What the fetch gave.
    pub fetch: Fetch,
}

/// The open log.
pub struct StateLog {
    file: File,
    path: PathBuf,
    unsynced: usize,
    line: Vec<u8>,
}

fn err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::State { path: path.to_path_buf(), message: e.to_string() }
}

impl StateLog {
    /// Opens (or creates) the log in `dir` for the crawl of `start` within `scope`, and
    /// returns the pages an earlier run finished. A log of another crawl is refused.
    pub fn open(dir: &Path, start: &str, scope: &str) -> Result<(StateLog, Vec<Record>), Error> {
        std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
        let path = dir.join(LOG_NAME);
        let header = Header { mapwright_crawl: 1, start: start.to_string(), scope: scope.to_string() };
        let mut records = Vec::new();
        let mut valid_len = 0u64;
        if path.exists() {
            let f = File::open(&path).map_err(|e| err(&path, e))?;
            let mut lines = BufReader::new(f).split(b'\n');
            if let Some(first) = lines.next() {
                let first = first.map_err(|e| err(&path, e))?;
                let old: Header = serde_json::from_slice(&first)
                    .map_err(|e| err(&path, format!("not a mapwright crawl state (line 1: {e})")))?;
                if old != header {
                    return Err(err(
                        &path,
                        format!(
                            "the state is of a crawl of {} (scope {}): remove it or use another --state",
                            old.start, old.scope
                        ),
                    ));
                }
                valid_len = first.len() as u64 + 1;
                for line in lines {
                    let line = line.map_err(|e| err(&path, e))?;
                    match serde_json::from_slice::<Record>(&line) {
                        Ok(r) => {
                            records.push(r);
                            valid_len += line.len() as u64 + 1;
                        }
                        // Only the last line can be torn (a crash mid-write); drop it.
                        Err(_) => break,
                    }
                }
            }
        }
        let mut file = OpenOptions::new().create(true).append(true).open(&path).map_err(|e| err(&path, e))?;
        if valid_len == 0 {
            file.set_len(0).map_err(|e| err(&path, e))?;
            let mut line = serde_json::to_vec(&header).map_err(|e| err(&path, e))?;
            line.push(b'\n');
            file.write_all(&line).map_err(|e| err(&path, e))?;
        } else {
            // Cut a torn tail so the next append starts on a line of its own.
            file.set_len(valid_len).map_err(|e| err(&path, e))?;
        }
        Ok((StateLog { file, path, unsynced: 0, line: Vec::new() }, records))
    }

    /// Appends one finished page (one `write` call: a crash leaves whole lines or a torn last one).
    pub fn append(&mut self, url: &str, depth: u32, fetch: &Fetch) -> Result<(), Error> {
        #[derive(Serialize)]
        struct RecordRef<'a> {
            url: &'a str,
            depth: u32,
            fetch: &'a Fetch,
        }
        self.line.clear();
        serde_json::to_writer(&mut self.line, &RecordRef { url, depth, fetch }).map_err(|e| err(&self.path, e))?;
        self.line.push(b'\n');
        self.file.write_all(&self.line).map_err(|e| err(&self.path, e))?;
        self.unsynced += 1;
        if self.unsynced >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    /// Flushes to disk.
    pub fn sync(&mut self) -> Result<(), Error> {
        self.unsynced = 0;
        self.file.sync_data().map_err(|e| err(&self.path, e))
    }
}

/// Removes the state of a finished crawl, so the next run starts afresh.
pub fn clear(dir: &Path) -> Result<(), Error> {
    let path = dir.join(LOG_NAME);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(err(&path, e)),
    }
}
