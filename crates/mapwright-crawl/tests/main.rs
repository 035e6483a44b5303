//! Integration tests of mapwright-crawl: the web-root walker, the access-log reader and the site crawler.

mod crawl;
mod logs;
mod walk;

use std::path::{Path, PathBuf};

pub fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(p)
}

/// Copies a fixture folder into a temporary one (so tests can change it or make it a repo).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
