//! `lastmod` from git history: one `git log` pass over the whole tree, not one per file.

use crate::error::Error;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The time (Unix seconds) of the newest commit touching each file under `root`, keyed by the
/// path relative to `root` (`/`-separated).
pub fn last_commit_times(root: &Path) -> Result<HashMap<String, i64>, Error> {
    let err = |message: String| Error::Git { path: root.to_path_buf(), message };
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off", "log", "--format=%x00%ct", "--name-only", "--no-renames", "--relative"])
        .arg("--")
        .arg(".")
        .output()
        .map_err(|e| err(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    Ok(parse_log(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `git log --format=%x00%ct --name-only` output: newest commit first, so the first
/// time seen for a path is its last change.
pub fn parse_log(text: &str) -> HashMap<String, i64> {
    let mut times = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(ts) = line.strip_prefix('\0') {
            current = ts.trim().parse::<i64>().ok();
        } else if !line.is_empty() {
            if let Some(t) = current {
                times.entry(line.to_string()).or_insert(t);
            }
        }
    }
    times
}

/// `path` relative to `root`, `/`-separated, as git prints it.
pub fn key(root: &Path, path: &Path) -> Option<String> {
    let rel: PathBuf = path.strip_prefix(root).ok()?.to_path_buf();
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn newest_first_wins() {
        let t = super::parse_log("\u{0}300\n\na.html\n\n\u{0}200\n\na.html\nb/ü.html\n");
        assert_eq!(t.get("a.html"), Some(&300));
        assert_eq!(t.get("b/ü.html"), Some(&200));
        assert_eq!(t.len(), 2);
    }
}
