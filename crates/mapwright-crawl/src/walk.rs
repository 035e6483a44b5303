//! Walking a static web root (the output folder of Hugo, Jekyll, Zola, mkdocs, a Next
//! export...) into sitemap entries: which files are pages, what their URLs are, and which
//! pages ask to stay out (noindex, a canonical elsewhere, robots.txt).

use crate::error::Error;
use crate::html::scan_head;
use crate::robots::Rules;
use crate::{encode_segment_bytes, git};
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, WalkBuilder};
use mapwright_core::date::from_unix_seconds;
use mapwright_core::{Alternate, Lastmod, Loc, UrlEntry};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Where a page's `lastmod` comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LastmodSource {
    /// The file's modification time.
    #[default]
    Mtime,
    /// The last commit touching the file (files git does not know fall back to mtime).
    Git,
    /// No `lastmod`.
    None,
}

/// How to walk a web root.
#[derive(Clone, Debug)]
pub struct WalkConfig {
    /// The web root.
    pub root: PathBuf,
    /// The URL the root is served at (a folder: a missing final `/` is added).
    pub base: Loc,
    /// Files to list (gitignore-syntax globs relative to the root); empty means `*.html`, `*.htm`.
    pub include: Vec<String>,
    /// Files and folders to leave out (gitignore syntax).
    pub exclude: Vec<String>,
    /// Drop `.html` from page URLs (`about.html` is served as `/about`).
    pub clean_urls: bool,
    /// Where `lastmod` comes from.
    pub lastmod: LastmodSource,
    /// Add the hreflang alternates the pages declare.
    pub alternates: bool,
    /// Leave out what the root's own robots.txt disallows for `*`.
    pub honour_robots: bool,
}

impl WalkConfig {
    /// Defaults: HTML files, mtime, robots.txt honoured, no alternates.
    pub fn new(root: impl Into<PathBuf>, base: Loc) -> Self {
        WalkConfig {
            root: root.into(),
            base,
            include: Vec::new(),
            exclude: Vec::new(),
            clean_urls: false,
            lastmod: LastmodSource::Mtime,
            alternates: false,
            honour_robots: true,
        }
    }
}

/// Why a page was left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// `<meta name="robots" content="noindex">`.
    Noindex,
    /// The canonical link names another URL (given).
    Canonical(String),
    /// The root's robots.txt disallows the path.
    Robots,
    /// No valid URL could be made of the file name (why).
    BadUrl(String),
    /// The file could not be read (why).
    Unreadable(String),
}

impl Skip {
    /// A short reason for summaries (`noindex`, `canonical elsewhere`...).
    pub fn reason(&self) -> &'static str {
        match self {
            Skip::Noindex => "noindex",
            Skip::Canonical(_) => "canonical elsewhere",
            Skip::Robots => "disallowed by robots.txt",
            Skip::BadUrl(_) => "no valid URL",
            Skip::Unreadable(_) => "unreadable",
        }
    }
}

/// One file the walk looked at.
#[derive(Clone, Debug, PartialEq)]
pub enum WalkItem {
    /// A page for the sitemap.
    Page(Box<UrlEntry>),
    /// A page left out.
    Skipped {
        /// The file.
        path: PathBuf,
        /// Its URL, when one could be made.
        url: Option<String>,
        /// Why.
        skip: Skip,
    },
}

/// An iterator over the pages of a web root, in file-name order.
pub struct Walker {
    cfg: WalkConfig,
    base: String,
    walk: ignore::Walk,
    robots: Rules,
    git: HashMap<String, i64>,
    buf: Vec<u8>,
}

/// Bytes of a page read for its head: heads end long before this.
const HEAD_BYTES: u64 = 1 << 20;

impl Walker {
    /// Checks the patterns, reads robots.txt and (for `--lastmod git`) the git history.
    pub fn new(cfg: WalkConfig) -> Result<Self, Error> {
        if !cfg.root.is_dir() {
            let source = std::io::Error::new(std::io::ErrorKind::NotFound, "not a folder");
            return Err(Error::Io { path: cfg.root.clone(), source });
        }
        let mut ob = OverrideBuilder::new(&cfg.root);
        let defaults = ["*.html".to_string(), "*.htm".to_string()];
        let include = if cfg.include.is_empty() { &defaults[..] } else { &cfg.include[..] };
        let glob_err = |p: &str, e: ignore::Error| Error::Glob { pattern: p.to_string(), message: e.to_string() };
        for p in include {
            ob.add(p).map_err(|e| glob_err(p, e))?;
        }
        for p in &cfg.exclude {
            let neg = format!("!{}", p.trim_start_matches('!'));
            ob.add(&neg).map_err(|e| glob_err(p, e))?;
        }
        let overrides = ob.build().map_err(|e| glob_err("", e))?;
        let walk = WalkBuilder::new(&cfg.root)
            .standard_filters(false)
            .hidden(true)
            .overrides(overrides)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        let robots = match std::fs::read_to_string(cfg.root.join("robots.txt")) {
            Ok(t) if cfg.honour_robots => Rules::parse(&t),
            _ => Rules::default(),
        };
        let git = match cfg.lastmod {
            LastmodSource::Git => git::last_commit_times(&cfg.root)?,
            _ => HashMap::new(),
        };
        let mut base = cfg.base.as_str().split(['?', '#']).next().unwrap_or("").to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(Walker { cfg, base, walk, robots, git, buf: Vec::with_capacity(64 * 1024) })
    }

    /// The URL of the page in file `path` (relative path segments percent-encoded).
    fn url_of(&self, path: &Path) -> Result<String, String> {
        let rel = path.strip_prefix(&self.cfg.root).map_err(|e| e.to_string())?;
        let parts: Vec<&std::ffi::OsStr> = rel.components().map(|c| c.as_os_str()).collect();
        let mut url = self.base.clone();
        let last = parts.len().saturating_sub(1);
        for (i, seg) in parts.iter().enumerate() {
            let bytes = os_bytes(seg);
            if i == last {
                let lower = bytes.to_ascii_lowercase();
                if lower == b"index.html" || lower == b"index.htm" {
                    break;
                }
                let shown = match lower.iter().rposition(|&b| b == b'.') {
                    Some(dot) if self.cfg.clean_urls && matches!(&lower[dot + 1..], b"html" | b"htm") => &bytes[..dot],
                    _ => &bytes[..],
                };
                encode_segment_bytes(&mut url, shown);
            } else {
                encode_segment_bytes(&mut url, &bytes);
                url.push('/');
            }
        }
        Ok(url)
    }

    fn page(&mut self, entry: DirEntry) -> WalkItem {
        let path = entry.path().to_path_buf();
        let skipped = |url: Option<String>, skip| WalkItem::Skipped { path: entry.path().to_path_buf(), url, skip };
        let url = match self.url_of(&path) {
            Ok(u) => u,
            Err(why) => return skipped(None, Skip::BadUrl(why)),
        };
        let loc = match Loc::parse(&url) {
            Ok(l) => l,
            Err(e) => return skipped(Some(url), Skip::BadUrl(e.to_string())),
        };
        if !self.robots.is_empty() && !self.robots.allowed(loc.path_and_rest()) {
            return skipped(Some(url), Skip::Robots);
        }
        self.buf.clear();
        let read = std::fs::File::open(&path).and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut self.buf));
        if let Err(e) = read {
            return skipped(Some(url), Skip::Unreadable(e.to_string()));
        }
        let head = scan_head(&self.buf);
        if head.noindex {
            return skipped(Some(url), Skip::Noindex);
        }
        let page_url = loc.to_url();
        if let Some(c) = &head.canonical {
            if let Some(canon) = page_url.join(c).ok().and_then(|u| Loc::from_url(&u).ok()) {
                if !same_page(&canon, &loc) {
                    return skipped(Some(url), Skip::Canonical(canon.to_string()));
                }
            }
        }
        let mut e = UrlEntry::new(loc);
        e.lastmod = self.lastmod(&entry);
        if self.cfg.alternates {
            for (lang, href) in head.alternates {
                if let Some(h) = page_url.join(&href).ok().and_then(|u| Loc::from_url(&u).ok()) {
                    e.ext_mut().alternates.push(Alternate { hreflang: lang, href: h.to_string() });
                }
            }
        }
        WalkItem::Page(Box::new(e))
    }

    fn lastmod(&self, entry: &DirEntry) -> Option<Lastmod> {
        let secs = match self.cfg.lastmod {
            LastmodSource::None => return None,
            LastmodSource::Git => git::key(&self.cfg.root, entry.path()).and_then(|k| self.git.get(&k).copied()),
            LastmodSource::Mtime => None,
        };
        let secs = secs.or_else(|| {
            let m = entry.metadata().ok()?.modified().ok()?;
            Some(m.duration_since(UNIX_EPOCH).ok()?.as_secs() as i64)
        })?;
        Some(Lastmod::W3c(from_unix_seconds(secs)))
    }
}

/// Whether a canonical URL names the page itself: equal, or equal but for `index.html` or `.html`.
fn same_page(canon: &Loc, page: &Loc) -> bool {
    let strip = |s: &str| -> String {
        let s = s.split('#').next().unwrap_or(s);
        let s = s.strip_suffix("index.html").or_else(|| s.strip_suffix("index.htm")).unwrap_or(s);
        let s = s.strip_suffix(".html").or_else(|| s.strip_suffix(".htm")).unwrap_or(s);
        s.to_string()
    };
    canon == page || strip(canon.as_str()) == strip(page.as_str())
}

/// A file name's bytes: exact on Unix, UTF-8 (lossy) elsewhere.
fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        std::borrow::Cow::Borrowed(std::os::unix::ffi::OsStrExt::as_bytes(s))
    }
    #[cfg(not(unix))]
    {
        match s.to_string_lossy() {
            std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(b.as_bytes()),
            std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(o.into_bytes()),
        }
    }
}

impl Iterator for Walker {
    type Item = Result<WalkItem, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.walk.next()? {
                Ok(e) => e,
                Err(e) => return Some(Err(Error::Walk { path: self.cfg.root.clone(), message: e.to_string() })),
            };
            if entry.file_type().is_some_and(|t| t.is_file()) {
                return Some(Ok(self.page(entry)));
            }
        }
    }
}
