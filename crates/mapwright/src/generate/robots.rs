//! `--robots PATH`: add or update the `Sitemap:` line for the generated entry point, leaving
//! every other byte of the file as it was, and doing nothing when the line is already there.

use anyhow::Context;
use std::path::Path;

/// What [`update`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// The line was already there.
    Unchanged,
    /// A line for the same host and path with another URL (another scheme) was rewritten.
    Updated,
    /// The line was appended.
    Added,
}

/// The new content for a robots.txt, or `None` when it already announces `url`.
///
/// A `Sitemap:` line (key in any case) naming `url` exactly means nothing to do; one naming the
/// same host and path under another scheme is rewritten in place; otherwise a line is appended,
/// after a line break if the file does not end with one, in the file's own line-ending style.
pub fn update(content: &[u8], url: &str) -> (Option<Vec<u8>>, Change) {
    let same_place = |other: &str| strip_scheme(other).eq_ignore_ascii_case(strip_scheme(url));
    let mut pos = 0;
    for line in content.split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim_start();
        if trimmed.len() >= 8 && trimmed[..8].eq_ignore_ascii_case("sitemap:") {
            let value = trimmed[8..].split('#').next().unwrap_or("").trim();
            if value == url {
                return (None, Change::Unchanged);
            }
            if same_place(value) {
                let start =
                    pos + (text.len() - trimmed.len()) + 8 + (trimmed[8..].len() - trimmed[8..].trim_start().len());
                let mut out = content[..start].to_vec();
                out.extend_from_slice(url.as_bytes());
                out.extend_from_slice(&content[start + value.len()..]);
                return (Some(out), Change::Updated);
            }
        }
        pos += line.len();
    }
    let eol: &[u8] = if memchr_crlf(content) { b"\r\n" } else { b"\n" };
    let mut out = content.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(b"Sitemap: ");
    out.extend_from_slice(url.as_bytes());
    out.extend_from_slice(eol);
    (Some(out), Change::Added)
}

fn memchr_crlf(b: &[u8]) -> bool {
    b.windows(2).any(|w| w == b"\r\n")
}

fn strip_scheme(u: &str) -> &str {
    u.split_once("://").map_or(u, |(_, r)| r)
}

/// Applies [`update`] to the file at `path` (created if missing), atomically.
pub fn update_file(path: &Path, url: &str) -> anyhow::Result<Change> {
    let content = match std::fs::read(path) {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let (new, change) = update(&content, url);
    if let Some(new) = new {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tmp = dir.join(format!(".robots.txt.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &new).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(before: &str, after: &str, change: Change) {
        let url = "https://example.com/sitemap.xml";
        let (out, c) = update(before.as_bytes(), url);
        assert_eq!(c, change, "{before:?}");
        let out = out.map(|o| String::from_utf8(o).unwrap()).unwrap_or_else(|| before.to_string());
        assert_eq!(out, after, "{before:?}");
        // Idempotent: a second run changes nothing.
        assert_eq!(update(out.as_bytes(), url), (None, Change::Unchanged));
    }

    #[test]
    fn lines() {
        let url = "Sitemap: https://example.com/sitemap.xml";
        check("", &format!("{url}\n"), Change::Added);
        check("User-agent: *\nDisallow:", &format!("User-agent: *\nDisallow:\n{url}\n"), Change::Added);
        check(
            "User-agent: *\r\nDisallow: /x\r\n",
            &format!("User-agent: *\r\nDisallow: /x\r\n{url}\r\n"),
            Change::Added,
        );
        check(&format!("# hi\n{url}\nUser-agent: *\n"), &format!("# hi\n{url}\nUser-agent: *\n"), Change::Unchanged);
        check(
            "sitemap:   http://example.com/sitemap.xml  # old\nUser-agent: *\n",
            "sitemap:   https://example.com/sitemap.xml  # old\nUser-agent: *\n",
            Change::Updated,
        );
        check(
            "Sitemap: https://example.com/news.xml\n",
            &format!("Sitemap: https://example.com/news.xml\n{url}\n"),
            Change::Added,
        );
    }
}
