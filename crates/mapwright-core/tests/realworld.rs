//! The 41 real files of `shared/realworld` (Hugo, Jekyll, Gatsby, WordPress, ...): we read what
//! an independent parser (lxml) read, as the manifest records.

use crate::support::{read_bytes, shared_dir};
use mapwright_core::{Entry, Loc, Rule};
use serde_json::Value;

#[test]
fn every_real_file() {
    let dir = shared_dir().join("realworld");
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let mut checked = 0;
    for m in &manifest {
        let kind = m["kind"].as_str().unwrap();
        let file = m["file"].as_str().unwrap();
        if kind == "robots" {
            continue; // robots.txt files: mapwright-fetch reads them.
        }
        let bytes = std::fs::read(dir.join("files").join(file)).unwrap();
        let r = read_bytes(&bytes);
        let locs: Vec<&str> = if kind == "sitemapindex" { r.sitemaps() } else { r.urls() };
        let expected = m["url_count"].as_u64().unwrap() as usize;
        let first3: Vec<String> = m["locs_first3"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let s = v.as_str().unwrap().trim();
                Loc::parse(s).map(|l| l.as_str().to_string()).unwrap_or_else(|_| s.to_string())
            })
            .collect();
        if kind == "other" {
            // Not a sitemap: must not panic; what is read is what lines are URLs.
            assert!(locs.len() <= expected, "{file}: {} > {expected}", locs.len());
            checked += 1;
            continue;
        }
        // lxml counted every <loc>; we skip the entries whose <loc> is not a usable URL, each
        // with a finding that says so.
        let skipped = r
            .findings
            .iter()
            .filter(|f| matches!(f.rule, Rule::LocInvalid | Rule::LocNotAbsolute | Rule::LocScheme))
            .count();
        assert!(
            r.error.is_none() || m["notes"].as_str().unwrap_or("").contains("well-formed"),
            "{file}: {:?}",
            r.error
        );
        assert_eq!(
            locs.len() + skipped,
            expected,
            "{file}: {:?} {:?}",
            r.error.as_ref().map(|e| e.to_string()),
            r.findings
        );
        let usable: Vec<&String> = first3.iter().filter(|l| Loc::parse(l).is_ok()).collect();
        let got: Vec<&str> = locs.iter().copied().take(usable.len()).collect();
        assert_eq!(got, usable.iter().map(|s| s.as_str()).collect::<Vec<_>>(), "{file}");
        // As written: the text lxml read (entities decoded), trimmed, never rewritten.
        let as_written: Vec<&str> = m["locs_first3"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().trim())
            .filter(|s| Loc::parse(s).is_ok())
            .collect();
        let got: Vec<&str> = r
            .entries
            .iter()
            .filter(|e| (kind == "sitemapindex") == matches!(e, Entry::Sitemap(_)))
            .map(|e| e.loc().written())
            .take(as_written.len())
            .collect();
        assert_eq!(got, as_written, "{file}: loc as written");
        checked += 1;
    }
    assert_eq!(checked, 36);
}
