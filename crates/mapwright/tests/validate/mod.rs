//! `mapwright validate` end to end: exit statuses, the three output formats, --follow,
//! --explain and --list-rules, memory on a 50 MiB stream, and the input read ahead.

mod ahead;
mod memory;
mod output;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mapwright"))
}

pub fn run(args: &[&str], dir: &Path) -> Output {
    bin().args(args).current_dir(dir).output().expect("run mapwright")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn urlset(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"{NS}\">\n{body}</urlset>\n")
}

pub fn index(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"{NS}\">\n{body}</sitemapindex>\n")
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// A file with one error, one warning and one info, on known lines.
pub fn mixed() -> String {
    urlset(
        "  <url>\n    <loc>https://example.com/a</loc>\n    <priority>0,8</priority>\n  </url>\n  <url><loc>https://example.com/a</loc></url>\n  <url><loc>https://example.com/b</loc><lastmod>2005-01</lastmod></url>\n",
    )
}
