//! [`SitemapSetWriter`]: a stream of entries into `sitemap.xml`, or into parts
//! `sitemap-1-HASH.xml`, `sitemap-2-HASH.xml`, ... and their index `sitemap.xml`, never past
//! the protocol's limits.
//!
//! This is the core's one piece of file-system code (the issue asks for the splitter in the
//! core), written for a folder that others may write to and for a run that may be killed:
//!
//! - Every file is first written to a temporary file created exclusively (`O_EXCL`, by the
//!   tempfile crate) under an unpredictable name in the folder, so nothing is ever written
//!   through a symlink planted there; it is renamed into place when complete, and a rename
//!   replaces a planted symlink rather than following it.
//! - A part's name carries a hash of its content (`HASH`: xxh3-64 of its uncompressed bytes,
//!   16 hex digits), so a part that changes gets a new name: the parts of a run are placed
//!   first and the index renamed over the old one last, and until that rename the old index
//!   lists only files of the old set, which are still there. A run killed at any point leaves
//!   the previous set whole; an unchanged part keeps its name (and its URL, for caches).
//! - Once the new index is in place, parts it does not list (an earlier run's, or a killed
//!   run's) and temporary files older than this run are removed; nothing else is touched.

use super::gz::GzWorker;
use super::{Namespaces, text, xml};
use crate::date::{Lastmod, now_utc};
use crate::error::Error;
use crate::loc::Loc;
use crate::model::{SitemapEntry, UrlEntry};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use xxhash_rust::xxh3::Xxh3;

/// The kind of files a set is made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SetFormat {
    /// `<urlset>` XML (`.xml`).
    #[default]
    Xml,
    /// One URL per line (`.txt`); the index, when one is needed, is still XML.
    Text,
}

/// Where and how a set is written. Build it with [`SetConfig::new`] and change fields.
#[derive(Clone, Debug)]
pub struct SetConfig {
    /// The output folder (created if missing).
    pub dir: PathBuf,
    /// The URL the folder is served at (its last `/` ends the folder): the index lists the parts
    /// under it.
    pub base: Loc,
    /// The entry point's stem: `sitemap` gives `sitemap.xml` and parts `sitemap-N.xml`.
    pub name: String,
    /// XML or text parts.
    pub format: SetFormat,
    /// gzip the parts at this level (0-9); `None` writes them plain. With gzip the index is
    /// always written, so `NAME.xml` stays the one URL to announce.
    pub gzip: Option<u32>,
    /// Most URLs in one part (default and maximum: the protocol's 50,000).
    pub max_urls: usize,
    /// Most uncompressed bytes in one part (default and maximum: 52,428,800).
    pub max_bytes: u64,
    /// Extension namespaces every part declares; any other an entry needs is declared from the
    /// part where it first appears on (an entry needing one the open part lacks starts a new part).
    pub namespaces: Namespaces,
}

impl SetConfig {
    /// Protocol limits, plain XML, entry point `sitemap.xml`.
    pub fn new(dir: impl Into<PathBuf>, base: Loc) -> Self {
        SetConfig {
            dir: dir.into(),
            base,
            name: "sitemap".into(),
            format: SetFormat::Xml,
            gzip: None,
            max_urls: crate::MAX_URLS,
            max_bytes: crate::MAX_BYTES,
            namespaces: Namespaces::NONE,
        }
    }

    fn ext(&self) -> &'static str {
        match (self.format, self.gzip.is_some()) {
            (SetFormat::Xml, false) => ".xml",
            (SetFormat::Xml, true) => ".xml.gz",
            (SetFormat::Text, false) => ".txt",
            (SetFormat::Text, true) => ".txt.gz",
        }
    }
}

/// What a finished set consists of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetSummary {
    /// The file to announce (`sitemap.xml`), in `dir`; empty when nothing was written.
    pub entry_point: String,
    /// Every file written, parts first, the entry point last.
    pub files: Vec<String>,
    /// URLs written.
    pub urls: u64,
    /// Uncompressed bytes written, all files.
    pub bytes: u64,
    /// Bytes on disk, all files.
    pub disk_bytes: u64,
    /// Stale parts of an earlier run that were removed.
    pub removed: Vec<String>,
}

/// Where the open part's bytes go: a buffered file, or the gzip worker.
enum Sink {
    Plain(BufWriter<File>),
    Gz,
}

struct Part {
    sink: Sink,
    tmp: PathBuf,
    /// Of the uncompressed bytes: the part's name is derived from it.
    hash: Xxh3,
    urls: usize,
    bytes: u64,
    ns: Namespaces,
}

/// Writes a stream of [`UrlEntry`] into a folder as a sitemap set (see the module docs).
pub struct SitemapSetWriter {
    cfg: SetConfig,
    open: Option<Part>,
    /// Finished parts: (final name, when finished). The first stays under its temporary name
    /// until a second part shows that an index is needed.
    done: Vec<(String, Lastmod, PathBuf)>,
    buf: Vec<u8>,
    seen: Namespaces,
    urls: u64,
    bytes: u64,
    gz: Option<GzWorker>,
    /// Every temporary file made, removed on drop if still there (after an error).
    tmps: Vec<PathBuf>,
    /// When the writer was made: temporary files older than this are a killed run's.
    started: SystemTime,
}

/// The most parts one index may list.
const MAX_PARTS: usize = 50_000;

impl SitemapSetWriter {
    /// Checks the configuration and creates the folder; nothing is written until the first entry.
    pub fn new(mut cfg: SetConfig) -> Result<Self, Error> {
        cfg.max_urls = cfg.max_urls.clamp(1, crate::MAX_URLS);
        cfg.max_bytes = cfg.max_bytes.min(crate::MAX_BYTES);
        if cfg.name.is_empty() || cfg.name.contains(['/', '\\']) {
            return Err(Error::Config(format!("{:?} is not a file name stem", cfg.name)));
        }
        fs::create_dir_all(&cfg.dir).map_err(|e| file_err(&cfg.dir, e))?;
        Ok(SitemapSetWriter {
            cfg,
            open: None,
            done: Vec::new(),
            buf: Vec::with_capacity(4096),
            seen: Namespaces::NONE,
            urls: 0,
            bytes: 0,
            gz: None,
            tmps: Vec::new(),
            started: SystemTime::now(),
        })
    }

    /// URLs written so far.
    pub fn urls(&self) -> u64 {
        self.urls
    }

    /// Parts finished so far.
    pub fn parts(&self) -> usize {
        self.done.len()
    }

    fn end(&self) -> &'static [u8] {
        match self.cfg.format {
            SetFormat::Xml => xml::URLSET_END,
            SetFormat::Text => b"",
        }
    }

    /// Writes one entry, starting a new part first when it would not fit in the open one. An
    /// entry too large for any part is refused with [`Error::EntryTooLarge`] and nothing
    /// changes: the set can go on.
    pub fn write(&mut self, e: &UrlEntry) -> Result<(), Error> {
        self.buf.clear();
        match self.cfg.format {
            SetFormat::Xml => xml::url(&mut self.buf, e),
            SetFormat::Text => text::line(&mut self.buf, e),
        }
        let len = self.buf.len() as u64;
        let end = self.end().len() as u64;
        let xml = self.cfg.format == SetFormat::Xml;
        let fits = match &self.open {
            Some(p) => {
                p.urls < self.cfg.max_urls && p.bytes + len + end <= self.cfg.max_bytes && (!xml || p.ns.covers(e))
            }
            None => false,
        };
        if !fits {
            // Refused before anything changes, so the caller may skip it and go on.
            let seen = if xml { self.seen.union(Namespaces::of(e)) } else { self.seen };
            let head = if xml {
                let mut h = Vec::with_capacity(512);
                xml::urlset_start(&mut h, self.cfg.namespaces.union(seen));
                h.len() as u64
            } else {
                0
            };
            if head + len + end > self.cfg.max_bytes {
                return Err(Error::EntryTooLarge { loc: e.loc.to_string(), size: len, limit: self.cfg.max_bytes });
            }
            self.seen = seen;
            self.close_part()?;
            self.open_part()?;
        }
        let p = self.open.as_mut().expect("a part is open");
        p.hash.update(&self.buf);
        match &mut p.sink {
            Sink::Plain(w) => w.write_all(&self.buf).map_err(|err| file_err(&p.tmp, err))?,
            Sink::Gz => self.gz.as_mut().expect("gzip worker").write(&self.buf)?,
        }
        p.urls += 1;
        p.bytes += len;
        self.urls += 1;
        Ok(())
    }

    fn open_part(&mut self) -> Result<(), Error> {
        if self.done.len() >= MAX_PARTS {
            return Err(Error::TooManyParts { limit: MAX_PARTS });
        }
        let (f, tmp) = self.temp_file()?;
        let ns = self.cfg.namespaces.union(self.seen);
        let mut head = Vec::new();
        if self.cfg.format == SetFormat::Xml {
            xml::urlset_start(&mut head, ns);
        }
        let mut hash = Xxh3::new();
        hash.update(&head);
        let sink = match self.cfg.gzip {
            None => {
                let mut w = BufWriter::with_capacity(128 * 1024, f);
                w.write_all(&head).map_err(|e| file_err(&tmp, e))?;
                Sink::Plain(w)
            }
            Some(level) => {
                if self.gz.is_none() {
                    self.gz = Some(GzWorker::new(level)?);
                }
                let gz = self.gz.as_mut().expect("gzip worker");
                gz.start(f, tmp.clone())?;
                gz.write(&head)?;
                Sink::Gz
            }
        };
        self.open = Some(Part { sink, tmp, hash, urls: 0, bytes: head.len() as u64, ns });
        Ok(())
    }

    /// A new empty file in the folder, created exclusively under an unpredictable name
    /// `.NAME.<random>.tmp`: never an existing file, never through a symlink.
    fn temp_file(&mut self) -> Result<(File, PathBuf), Error> {
        let (file, path) = tempfile::Builder::new()
            .prefix(&format!(".{}.", self.cfg.name))
            .suffix(".tmp")
            .rand_bytes(12)
            .tempfile_in(&self.cfg.dir)
            .map_err(|e| file_err(&self.cfg.dir, e))?
            .into_parts();
        // Removed by this writer itself: on drop when still there, else renamed into place.
        let path = path.keep().map_err(|e| file_err(&self.cfg.dir, e.error))?;
        self.tmps.push(path.clone());
        Ok((file, path))
    }

    /// Closes the open part; from the second part on, renames both into place as `NAME-N`.
    fn close_part(&mut self) -> Result<(), Error> {
        let Some(mut p) = self.open.take() else { return Ok(()) };
        let end = self.end();
        p.hash.update(end);
        match p.sink {
            Sink::Plain(mut w) => {
                w.write_all(end).and_then(|()| w.flush()).map_err(|e| file_err(&p.tmp, e))?;
            }
            Sink::Gz => {
                let gz = self.gz.as_mut().expect("gzip worker");
                gz.write(end)?;
                gz.end()?;
            }
        }
        self.bytes += p.bytes + end.len() as u64;
        let name = format!("{}-{}-{:016x}{}", self.cfg.name, self.done.len() + 1, p.hash.digest(), self.cfg.ext());
        self.done.push((name, Lastmod::W3c(now_utc()), p.tmp));
        // The first part waits: if it stays alone it becomes the entry point itself.
        if self.done.len() == 2 || self.cfg.gzip.is_some() {
            for i in 0..self.done.len() {
                self.place(i)?;
            }
        } else if self.done.len() > 2 {
            self.place(self.done.len() - 1)?;
        }
        Ok(())
    }

    /// Renames part `i` from its temporary name to its final one (once).
    fn place(&mut self, i: usize) -> Result<(), Error> {
        let (name, _, tmp) = &mut self.done[i];
        if tmp.as_os_str().is_empty() {
            return Ok(());
        }
        let to = self.cfg.dir.join(&*name);
        let from = std::mem::take(tmp);
        match &mut self.gz {
            // Renamed by the worker once the part's last byte is written.
            Some(gz) => gz.rename(from, to)?,
            None => fs::rename(&from, &to).map_err(|e| file_err(&to, e))?,
        }
        Ok(())
    }

    /// Closes the last part, writes the index when there is more than one part (or gzip), removes
    /// stale parts, and says what was written. Without any entry nothing is written.
    pub fn finish(mut self) -> Result<SetSummary, Error> {
        self.close_part()?;
        let mut summary = SetSummary { urls: self.urls, ..SetSummary::default() };
        if self.done.is_empty() {
            return Ok(summary);
        }
        let dir = self.cfg.dir.clone();
        if self.done.len() == 1 && self.cfg.gzip.is_none() {
            let single = match self.cfg.format {
                SetFormat::Xml => format!("{}.xml", self.cfg.name),
                SetFormat::Text => format!("{}.txt", self.cfg.name),
            };
            let tmp = std::mem::take(&mut self.done[0].2);
            fs::rename(&tmp, dir.join(&single)).map_err(|e| file_err(&dir.join(&single), e))?;
            summary.files.push(single.clone());
            summary.entry_point = single;
            summary.bytes = self.bytes;
        } else {
            for i in 0..self.done.len() {
                self.place(i)?;
            }
            if let Some(gz) = &mut self.gz {
                gz.join()?;
            }
            let mut index = Vec::with_capacity(128 * (self.done.len() + 2));
            xml::index_start(&mut index);
            let base = self.cfg.base.to_url();
            for (name, lastmod, _) in &self.done {
                let url = base.join(name).map_err(|e| Error::Config(format!("{name}: {e}")))?;
                let loc = Loc::from_url(&url).map_err(|e| Error::Config(format!("{url}: {e}")))?;
                xml::sitemap(&mut index, &SitemapEntry { loc, lastmod: Some(lastmod.clone()) });
                summary.files.push(name.clone());
            }
            index.extend_from_slice(xml::INDEX_END);
            let entry = format!("{}.xml", self.cfg.name);
            let (mut file, tmp) = self.temp_file()?;
            file.write_all(&index).and_then(|()| file.flush()).map_err(|e| file_err(&tmp, e))?;
            drop(file);
            fs::rename(&tmp, dir.join(&entry)).map_err(|e| file_err(&dir.join(&entry), e))?;
            summary.bytes = self.bytes + index.len() as u64;
            summary.files.push(entry.clone());
            summary.entry_point = entry;
        }
        summary.removed = self.remove_stale(&summary.files)?;
        summary.disk_bytes = summary.files.iter().filter_map(|f| fs::metadata(dir.join(f)).ok()).map(|m| m.len()).sum();
        Ok(summary)
    }

    /// Removes parts ([`is_part_name`]) not in `keep`, and temporary files `.NAME.*.tmp` last
    /// changed before this writer was made (a killed run's: a run going on at the same time
    /// in the same folder would keep changing its own). Says which parts went.
    fn remove_stale(&self, keep: &[String]) -> Result<Vec<String>, Error> {
        let mut removed = Vec::new();
        let rd = fs::read_dir(&self.cfg.dir).map_err(|e| file_err(&self.cfg.dir, e))?;
        for entry in rd.flatten() {
            let Ok(name) = entry.file_name().into_string() else { continue };
            let path = entry.path();
            if is_part_name(&name, &self.cfg.name) && !keep.contains(&name) {
                fs::remove_file(&path).map_err(|e| file_err(&path, e))?;
                removed.push(name);
            } else if is_temp_name(&name, &self.cfg.name) && !self.tmps.contains(&path) {
                // symlink_metadata: a planted link's own time, never its target's.
                let old = fs::symlink_metadata(&path).and_then(|m| m.modified()).is_ok_and(|t| t < self.started);
                if old {
                    fs::remove_file(&path).map_err(|e| file_err(&path, e))?;
                }
            }
        }
        removed.sort();
        Ok(removed)
    }
}

impl Drop for SitemapSetWriter {
    /// A set abandoned half-way (an error, a panic) leaves no temporary files behind.
    fn drop(&mut self) {
        self.open = None;
        if let Some(mut gz) = self.gz.take() {
            let _ = gz.join();
        }
        for tmp in &self.tmps {
            // Renamed ones are gone already; this removes only what an error left.
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Whether `name` is a part of the set `stem`: `STEM-<digits>-<16 hex digits>` (or, as
/// earlier versions named them, `STEM-<digits>`) then `.xml`, `.txt`, `.xml.gz` or `.txt.gz`.
pub fn is_part_name(name: &str, stem: &str) -> bool {
    let Some(rest) = name.strip_prefix(stem).and_then(|r| r.strip_prefix('-')) else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let mut rest = &rest[digits..];
    if let Some(hash) = rest.strip_prefix('-') {
        let hex = hash.bytes().take_while(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')).count();
        if hex != 16 {
            return false;
        }
        rest = &hash[16..];
    }
    matches!(rest, ".xml" | ".txt" | ".xml.gz" | ".txt.gz")
}

/// Whether `name` is one of the set's temporary files: `.STEM.<anything>.tmp`.
fn is_temp_name(name: &str, stem: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|r| r.strip_prefix(stem))
        .and_then(|r| r.strip_prefix('.'))
        .is_some_and(|r| r.len() > ".tmp".len() && r.ends_with(".tmp"))
}

fn file_err(path: &Path, source: io::Error) -> Error {
    Error::File { path: path.to_path_buf(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names() {
        for (name, yes) in [
            ("sitemap-1.xml", true),
            ("sitemap-12.xml.gz", true),
            ("sitemap-2-0123456789abcdef.xml", true),
            ("sitemap-2-0123456789abcdef.txt.gz", true),
            ("sitemap-2-0123456789ABCDEF.xml", false),
            ("sitemap-2-0123456789abcde.xml", false),
            ("sitemap-2-0123456789abcdef0.xml", false),
            ("sitemap-2-.xml", false),
            ("sitemap-3.txt", true),
            ("sitemap.xml", false),
            ("sitemap-.xml", false),
            ("sitemap-1a.xml", false),
            ("sitemap-1.xml.bak", false),
            ("other-1.xml", false),
        ] {
            assert_eq!(is_part_name(name, "sitemap"), yes, "{name}");
        }
        for (name, yes) in [
            (".sitemap.Ab3xZ9qQ0pLm.tmp", true),
            (".sitemap.1234-5.tmp", true),
            (".sitemap..tmp", false),
            (".sitemap.tmp", false),
            ("sitemap.x.tmp", false),
            (".sitemaps.x.tmp", false),
            (".sitemap.x.tmp.bak", false),
        ] {
            assert_eq!(is_temp_name(name, "sitemap"), yes, "{name}");
        }
    }
}
