//! `--follow` for local files: the index's URL maps onto the index file's folder, so a child
//! at `<index folder URL>/a/b.xml` is the file `<index folder>/a/b.xml`.

use super::progress::Progress;
use mapwright_core::read::Input;
use mapwright_core::validate::{Opened, Resolver};
use mapwright_core::{Loc, Scope};
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

pub struct LocalResolver {
    /// The folder of the index file on disk.
    dir: PathBuf,
    /// The folder of the index's URL (`scheme://host[:port]/path/`).
    base: String,
    /// Children opened, with their paths, for showing source lines.
    opened: Vec<(String, PathBuf)>,
    progress: Progress,
}

impl LocalResolver {
    pub fn new(index_path: &Path, index_url: &Loc, progress: Progress) -> Self {
        let scope = Scope::of_sitemap(index_url);
        // An index in the current folder has the empty parent: children are then named bare.
        let dir = index_path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        LocalResolver { dir, base: format!("{}{}", scope.origin(), scope.folder()), opened: Vec::new(), progress }
    }

    /// The children opened, as (name in reports, path).
    pub fn opened(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.opened.iter().map(|(n, p)| (n.as_str(), p.as_path()))
    }

    /// The local path of `url`, when it is under the index's folder.
    fn path_of(&self, url: &Loc) -> Option<PathBuf> {
        let rest = url.as_str().strip_prefix(&self.base)?;
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        let mut path = self.dir.clone();
        for seg in rest.split('/') {
            let seg = percent_decode(seg)?;
            // `url` normalises dot segments away; a decoded one (%2E%2E) must not climb out.
            if seg.is_empty() || seg == "." || seg == ".." || seg.contains(['/', '\\', '\0']) {
                return None;
            }
            path.push(seg);
        }
        Some(path)
    }
}

impl Resolver for LocalResolver {
    fn open(&mut self, url: &Loc) -> io::Result<Opened<'_>> {
        let Some(path) = self.path_of(url) else {
            return Ok(Opened::Unreachable(format!(
                "it is not under {} (the folder of --url), so it has no local file; remote sitemaps are not fetched yet",
                self.base
            )));
        };
        let file =
            File::open(&path).map_err(|e| io::Error::new(e.kind(), format!("{} (for {url}): {e}", path.display())))?;
        let name = path.display().to_string();
        let len = file.metadata().ok().map(|m| m.len());
        let input = self.progress.track(&name, len, Box::new(BufReader::with_capacity(64 * 1024, file)));
        self.opened.push((name.clone(), path));
        Ok(Opened::Source { name, input: Input::owned(input), pager: None })
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(index_path: &str, index_url: &str, child: &str, expected: Option<&str>) {
        let r = LocalResolver::new(Path::new(index_path), &Loc::parse(index_url).unwrap(), Progress::new());
        assert_eq!(r.path_of(&Loc::parse(child).unwrap()), expected.map(PathBuf::from), "{child}");
    }

    #[test]
    fn maps_urls_under_the_index_folder() {
        let idx = "https://example.com/maps/index.xml";
        check("public/maps/index.xml", idx, "https://example.com/maps/a.xml", Some("public/maps/a.xml"));
        check("public/maps/index.xml", idx, "https://example.com/maps/sub/b.xml.gz", Some("public/maps/sub/b.xml.gz"));
        check("index.xml", idx, "https://example.com/maps/%C3%BC.xml", Some("ü.xml"));
        check("public/maps/index.xml", idx, "https://example.com/other/a.xml", None);
        check("public/maps/index.xml", idx, "https://www.example.com/maps/a.xml", None);
        check("public/maps/index.xml", idx, "https://example.com/maps/%2E%2E/secret", None);
        check("public/maps/index.xml", idx, "https://example.com/maps/", None);
    }
}
