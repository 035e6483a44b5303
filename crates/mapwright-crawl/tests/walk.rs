//! `walk`: URLs of files, noindex, canonical, robots.txt, excludes, non-ASCII names, alternates
//! and git lastmod.

use super::{copy_dir, data};
use mapwright_core::{Loc, Precision, UrlEntry};
use mapwright_crawl::{LastmodSource, Skip, WalkConfig, WalkItem, Walker};
use std::process::Command;

fn walk(cfg: WalkConfig) -> (Vec<UrlEntry>, Vec<(String, Skip)>) {
    let mut pages = Vec::new();
    let mut skipped = Vec::new();
    for item in Walker::new(cfg).unwrap() {
        match item.unwrap() {
            WalkItem::Page(e) => pages.push(*e),
            WalkItem::Skipped { url, skip, .. } => skipped.push((url.unwrap_or_default(), skip)),
        }
    }
    (pages, skipped)
}

fn base() -> Loc {
    Loc::parse("https://example.com/").unwrap()
}

fn locs(pages: &[UrlEntry]) -> Vec<&str> {
    pages.iter().map(|e| e.loc.as_str()).collect()
}

#[test]
fn pages_and_what_is_left_out() {
    let (pages, skipped) = walk(WalkConfig::new(data("site"), base()));
    assert_eq!(
        locs(&pages),
        [
            "https://example.com/about.html",
            "https://example.com/blog/first-post/",
            "https://example.com/drafts/wip.html",
            "https://example.com/",
            "https://example.com/%C3%BCber/gr%C3%B6%C3%9Fe%20&%20preise.html",
            "https://example.com/%C3%BCber/",
        ]
    );
    assert_eq!(
        skipped,
        [
            (
                "https://example.com/blog/old.html".to_string(),
                Skip::Canonical("https://example.com/blog/first-post/".into())
            ),
            ("https://example.com/blog/tag-page.html".to_string(), Skip::Noindex),
            ("https://example.com/private.html".to_string(), Skip::Robots),
        ]
    );
    assert!(pages.iter().all(|p| p.ext().alternates.is_empty()), "alternates only when asked");
    assert!(pages.iter().all(|p| p.lastmod.as_ref().is_some_and(|l| l.value().precision == Precision::Second)));
}

#[test]
fn excludes_includes_clean_urls_and_a_sub_folder_base() {
    let mut cfg = WalkConfig::new(data("site"), Loc::parse("https://example.com/docs").unwrap());
    cfg.exclude = vec!["drafts/".into(), "über/".into()];
    cfg.clean_urls = true;
    cfg.honour_robots = false;
    let (pages, skipped) = walk(cfg);
    assert_eq!(locs(&pages), ["https://example.com/docs/about", "https://example.com/docs/private"]);
    // Served under /docs/, the pages whose canonical links name the site root point elsewhere.
    let canonical: Vec<&str> = skipped.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(
        canonical,
        [
            "https://example.com/docs/blog/first-post/",
            "https://example.com/docs/blog/old",
            "https://example.com/docs/blog/tag-page",
            "https://example.com/docs/",
        ]
    );
    let mut cfg = WalkConfig::new(data("site"), base());
    cfg.include = vec!["*.css".into()];
    let (pages, _) = walk(cfg);
    assert_eq!(locs(&pages), ["https://example.com/assets/site.css"]);
}

#[test]
fn hreflang_alternates_are_resolved() {
    let mut cfg = WalkConfig::new(data("site"), base());
    cfg.alternates = true;
    cfg.lastmod = LastmodSource::None;
    let (pages, _) = walk(cfg);
    let home = pages.iter().find(|p| p.loc.as_str() == "https://example.com/").unwrap();
    let alts: Vec<(&str, &str)> =
        home.ext().alternates.iter().map(|a| (a.hreflang.as_str(), a.href.as_str())).collect();
    assert_eq!(alts, [("de", "https://example.com/%C3%BCber/"), ("x-default", "https://example.com/")]);
    assert!(home.lastmod.is_none());
}

#[test]
fn git_lastmod_comes_from_one_log_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("public");
    copy_dir(&data("site"), &root);
    let git = |args: &[&str], date: &str| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"], "2020-01-02T03:04:05Z");
    git(&["add", "."], "2020-01-02T03:04:05Z");
    git(&["commit", "-q", "-m", "one"], "2020-01-02T03:04:05Z");
    std::fs::write(root.join("about.html"), "<html><head></head></html>").unwrap();
    git(&["commit", "-q", "-a", "-m", "two"], "2021-06-07T08:09:10Z");
    std::fs::write(root.join("new.html"), "<html></html>").unwrap();
    let mut cfg = WalkConfig::new(&root, base());
    cfg.lastmod = LastmodSource::Git;
    let (pages, _) = walk(cfg);
    let lastmod = |u: &str| pages.iter().find(|p| p.loc.as_str() == u).unwrap().lastmod.as_ref().unwrap().to_string();
    assert_eq!(lastmod("https://example.com/about.html"), "2021-06-07T08:09:10Z");
    assert_eq!(lastmod("https://example.com/"), "2020-01-02T03:04:05Z");
    assert_eq!(lastmod("https://example.com/%C3%BCber/gr%C3%B6%C3%9Fe%20&%20preise.html"), "2020-01-02T03:04:05Z");
    // Not in git: its modification time, which is now, not 2020.
    assert!(lastmod("https://example.com/new.html").as_str() > "2025");
}

#[test]
fn a_missing_root_is_an_error() {
    let err = Walker::new(WalkConfig::new(data("no-such-folder"), base())).err().unwrap();
    assert!(err.to_string().contains("no-such-folder"), "{err}");
}

/// A file name that is not UTF-8 (Latin-1 `café.html`) is encoded byte for byte, as a web
/// server would serve it, not as U+FFFD.
#[cfg(unix)]
#[test]
fn non_utf8_file_names_keep_their_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.html")), "<html></html>").unwrap();
    let (pages, _) = walk(WalkConfig::new(dir.path(), base()));
    assert_eq!(locs(&pages), ["https://example.com/caf%E9.html"]);
}
