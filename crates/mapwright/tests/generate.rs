//! `mapwright generate`: the 120,001-URL split, list formats, scope, config rules, dir, logs,
//! `--robots` idempotence, the atomic-write guarantee and a run killed mid-write.

use super::{crawl_data, mapwright, ok, xmllint};
use mapwright_core::read::read_all;
use mapwright_core::{Entry, ReadOptions};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Reads a set back: the entry point, and each part it lists (as local files of the same name).
fn read_set(dir: &Path, entry: &str) -> Vec<Entry> {
    let (top, _, err) =
        read_all(std::io::BufReader::new(std::fs::File::open(dir.join(entry)).unwrap()), ReadOptions::default());
    assert!(err.is_none(), "{entry}: {err:?}");
    let mut all = Vec::new();
    for e in top {
        match e {
            Entry::Sitemap(s) => {
                let name = s.loc.as_str().rsplit('/').next().unwrap().to_string();
                let f = std::fs::File::open(dir.join(&name)).unwrap();
                let (part, _, err) = read_all(std::io::BufReader::new(f), ReadOptions::default());
                assert!(err.is_none(), "{name}: {err:?}");
                all.extend(part);
            }
            url => all.push(url),
        }
    }
    all
}

/// File names with the parts' content hash cut out: `sitemap-2-<16 hex digits>.xml` ->
/// `sitemap-2.xml`; other names as they are.
fn parts(names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|name| {
            let (stem, ext) = name.split_at(name.find('.').unwrap_or(name.len()));
            match stem.rsplit_once('-') {
                Some((base, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    format!("{base}{ext}")
                }
                _ => name.clone(),
            }
        })
        .collect()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

#[test]
fn splits_120001_urls_into_three_parts_and_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let input: String = (0..120_001).map(|i| format!("https://example.com/p/{i}?a=1&b=é\n")).collect();
    let (stdout, stderr) = ok(
        &["generate", "list", "-", "--base-url", "https://example.com/", "--out", "out"],
        input.as_bytes(),
        dir.path(),
    );
    assert_eq!(stdout, "https://example.com/sitemap.xml\n");
    assert!(stderr.contains("120,001 URLs"), "{stderr}");
    let out = dir.path().join("out");
    let first = files(&out);
    assert_eq!(parts(&first), ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml", "sitemap.xml"]);
    for part in &first[..3] {
        xmllint(&out.join(part), "sitemap.xsd");
    }
    xmllint(&out.join("sitemap.xml"), "siteindex.xsd");
    let back = read_set(&out, "sitemap.xml");
    assert_eq!(back.len(), 120_001);
    for (i, e) in back.iter().enumerate() {
        assert_eq!(e.loc().as_str(), format!("https://example.com/p/{i}?a=1&b=%C3%A9"));
    }
    // gzipped, the same URLs, and the plain parts of the first run are removed as stale.
    let (_, stderr) = ok(
        &[
            "generate",
            "list",
            "-",
            "--base-url",
            "https://example.com/",
            "--out",
            "out",
            "--gzip",
            "--max-urls",
            "40000",
        ],
        input.as_bytes(),
        dir.path(),
    );
    assert!(stderr.contains(&format!("removed parts of an earlier run: {}", first[..3].join(", "))), "{stderr}");
    let second = files(&out);
    assert_eq!(
        parts(&second),
        ["sitemap-1.xml.gz", "sitemap-2.xml.gz", "sitemap-3.xml.gz", "sitemap-4.xml.gz", "sitemap.xml"]
    );
    xmllint(&out.join(&second[3]), "sitemap.xsd");
    assert_eq!(read_set(&out, "sitemap.xml").len(), 120_001);
}

#[test]
fn csv_and_jsonl_lists_with_relative_paths_and_scope() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "loc,lastmod,changefreq,priority,title\na,2024-05-06,daily,0.8,\"A, the page\"\n\"/docs/b?x=1&y=2\",2024-05-06 10:00:00,WEEKLY,2,\nhttps://example.com/other/c,,,,\n../../d,,,,\n";
    let (stdout, stderr) = ok(
        &["generate", "list", "pages.csv", "--base-url", "https://example.com/docs", "--out", "o1"],
        b"",
        &write(dir.path(), "pages.csv", csv),
    );
    assert_eq!(stdout, "https://example.com/docs/sitemap.xml\n");
    assert!(
        stderr.contains(
            "pages.csv:4: https://example.com/other/c is outside --base-url https://example.com/docs/ (a path outside"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("pages.csv:5: https://example.com/d is outside"), "{stderr}");
    assert!(stderr.contains("left out: 2 outside --base-url"), "{stderr}");
    assert!(stderr.contains("1 invalid priority dropped, 1 lastmod repaired"), "{stderr}");
    let xml = std::fs::read_to_string(dir.path().join("o1/sitemap.xml")).unwrap();
    assert!(xml.contains("<url><loc>https://example.com/docs/a</loc><lastmod>2024-05-06</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>"), "{xml}");
    assert!(xml.contains("<url><loc>https://example.com/docs/b?x=1&amp;y=2</loc><lastmod>2024-05-06T10:00:00Z</lastmod><changefreq>weekly</changefreq></url>"), "{xml}");
    xmllint(&dir.path().join("o1/sitemap.xml"), "sitemap.xsd");

    let jsonl = "{\"loc\":\"x\",\"priority\":0.3,\"lastmod\":\"2023-01-02T03:04:05+02:00\"}\n\n{\"loc\":\"https://example.com/docs/y\"}\nnot json\n";
    write(dir.path(), "pages.jsonl", jsonl);
    let (_, stderr) = ok(
        &[
            "generate",
            "list",
            "pages.jsonl",
            "--base-url",
            "https://example.com/docs/",
            "--out",
            "o2",
            "--format",
            "text",
        ],
        b"",
        dir.path(),
    );
    assert!(stderr.contains("pages.jsonl:4:"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("o2/sitemap.txt")).unwrap(),
        "https://example.com/docs/x\nhttps://example.com/docs/y\n"
    );
}

fn write(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    std::fs::write(dir.join(name), content).unwrap();
    dir.to_path_buf()
}

#[test]
fn config_file_rules_and_flags_that_override_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "mapwright.toml",
        r#"
base_url = "https://example.com/"
out = "from-config"
default_lastmod = "2020-02-02"
exclude = ["/drafts/**"]

[rules]
"/blog/**" = { changefreq = "weekly", priority = 0.6 }
"/tmp/*" = { exclude = true }
"#,
    );
    let list = "/blog/a\n/blog/2024/b\n/drafts/x/y\n/tmp/z\n/about\n";
    ok(&["generate", "list", "-"], list.as_bytes(), dir.path());
    let xml = std::fs::read_to_string(dir.path().join("from-config/sitemap.xml")).unwrap();
    assert!(xml.contains("<loc>https://example.com/blog/2024/b</loc><lastmod>2020-02-02</lastmod><changefreq>weekly</changefreq><priority>0.6</priority>"), "{xml}");
    assert!(xml.contains("<loc>https://example.com/about</loc><lastmod>2020-02-02</lastmod></url>"), "{xml}");
    assert!(!xml.contains("drafts") && !xml.contains("tmp"), "{xml}");
    // Flags win over the file.
    ok(
        &["generate", "list", "-", "--out", "from-flag", "--default-lastmod", "2021-01-01"],
        list.as_bytes(),
        dir.path(),
    );
    let xml = std::fs::read_to_string(dir.path().join("from-flag/sitemap.xml")).unwrap();
    assert!(xml.contains("<lastmod>2021-01-01</lastmod>") && !xml.contains("2020-02-02"), "{xml}");
    // A mistake in the file is a clear error.
    write(dir.path(), "bad.toml", "[rules]\n\"/a\" = { changefreq = \"often\" }\n");
    let out = mapwright(
        &["generate", "list", "-", "--config", "bad.toml", "--base-url", "https://e.com/", "--out", "x"],
        b"/a\n",
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"often\" is not one of"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn dir_web_root_into_itself_with_robots() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("public");
    copy_dir(&crawl_data("site"), &root);
    let robots_before = std::fs::read(root.join("robots.txt")).unwrap();
    let args = [
        "generate",
        "dir",
        "public",
        "--base-url",
        "https://example.com/",
        "--out",
        "public",
        "--robots",
        "public/robots.txt",
        "--alternates",
        "--exclude",
        "drafts/",
    ];
    let (_, stderr) = ok(&args, b"", dir.path());
    assert!(stderr.contains("left out: 1 canonical elsewhere, 1 disallowed by robots.txt, 1 noindex"), "{stderr}");
    assert!(stderr.contains("now announces https://example.com/sitemap.xml"), "{stderr}");
    let xml = std::fs::read_to_string(root.join("sitemap.xml")).unwrap();
    assert_eq!(xml.matches("<url>").count(), 5, "{xml}");
    assert!(
        xml.contains("xmlns:xhtml=")
            && xml.contains("<loc>https://example.com/%C3%BCber/gr%C3%B6%C3%9Fe%20&amp;%20preise.html</loc>"),
        "{xml}"
    );
    let robots = std::fs::read(root.join("robots.txt")).unwrap();
    assert_eq!(&robots[..robots_before.len()], &robots_before[..], "every other byte stays");
    assert_eq!(&robots[robots_before.len()..], b"Sitemap: https://example.com/sitemap.xml\n");
    // Run again: the same sitemap, robots.txt untouched (the sitemap file is no page of its own).
    let (_, stderr) = ok(&args, b"", dir.path());
    assert!(stderr.contains("already announces"), "{stderr}");
    assert_eq!(std::fs::read(root.join("robots.txt")).unwrap(), robots);
    assert_eq!(std::fs::read_to_string(root.join("sitemap.xml")).unwrap().matches("<url>").count(), 5);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn logs_plain_and_gzipped() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("combined.log.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, &std::fs::read(crawl_data("access-combined.log")).unwrap()).unwrap();
    enc.finish().unwrap();
    let common = crawl_data("access-common.log");
    let args = [
        "generate",
        "logs",
        common.to_str().unwrap(),
        gz.to_str().unwrap(),
        "--base-url",
        "https://example.com/",
        "--out",
        "o",
        "--strip-query",
        "--priority-from-hits",
    ];
    let (_, stderr) = ok(&args, b"", dir.path());
    assert!(stderr.contains("2 not a 2xx answer (log lines)"), "{stderr}");
    let xml = std::fs::read_to_string(dir.path().join("o/sitemap.xml")).unwrap();
    let locs: Vec<&str> =
        xml.lines().filter_map(|l| l.strip_prefix("<url><loc>")).map(|l| &l[..l.find('<').unwrap()]).collect();
    assert_eq!(
        locs,
        [
            "https://example.com/about.html",
            "https://example.com/blog/",
            "https://example.com/",
            "https://example.com/%C3%BCber/"
        ]
    );
    assert!(xml.contains("<loc>https://example.com/about.html</loc><priority>1.0</priority>"), "{xml}");
    assert!(xml.contains("<loc>https://example.com/</loc><priority>0.1</priority>"), "{xml}");
    xmllint(&dir.path().join("o/sitemap.xml"), "sitemap.xsd");
}

#[test]
fn nothing_to_write_is_an_error_not_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = mapwright(
        &["generate", "list", "-", "--base-url", "https://example.com/", "--out", "o"],
        b"https://other.com/\n",
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no URL to write"));
    assert_eq!(files(&dir.path().join("o")), Vec::<String>::new());
}

/// A reader polling the folder while sets are written and rewritten never sees a partial file:
/// every file with a final name parses to its end, and an index lists only parts that exist.
#[test]
fn readers_never_see_partial_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let (out, done) = (out.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checked = 0u64;
            while !done.load(Ordering::Relaxed) {
                for name in files(&out) {
                    if name.starts_with('.') {
                        continue; // temporary files are nobody's to read
                    }
                    let Ok(bytes) = std::fs::read(out.join(&name)) else { continue }; // replaced meanwhile
                    let (entries, _, err) = read_all(&bytes[..], ReadOptions::default());
                    assert!(err.is_none(), "{name} read while being written: {err:?}");
                    assert!(!entries.is_empty(), "{name} is empty");
                    if !name.ends_with(".gz") {
                        let end: &[u8] = if name == "sitemap.xml" && bytes.windows(9).any(|w| w == b"<sitemap>") {
                            b"</sitemapindex>\n"
                        } else {
                            b"</urlset>\n"
                        };
                        assert!(bytes.ends_with(end), "{name} ends early");
                    }
                    checked += 1;
                }
            }
            checked
        })
    };
    let input: String = (0..150_000).map(|i| format!("https://example.com/page-{i}\n")).collect();
    for args in [&["--max-urls", "2000"][..], &["--max-urls", "3000", "--gzip"][..], &["--max-urls", "1500"][..]] {
        let mut a = vec!["generate", "list", "-", "--base-url", "https://example.com/", "--out", "out"];
        a.extend_from_slice(args);
        ok(&a, input.as_bytes(), dir.path());
    }
    done.store(true, Ordering::Relaxed);
    let checked = poller.join().expect("the polling reader found no partial file");
    assert!(checked > 50, "the poller read only {checked} files: the test proved nothing");
    assert_eq!(read_set(&out, "sitemap.xml").len(), 150_000);
}

#[test]
fn an_entry_too_large_for_max_bytes_is_left_out_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let list = format!("/short\n/{}\n", "x".repeat(1_500));
    let args = ["generate", "list", "-", "--base-url", "https://example.com/", "--out", "o", "--max-bytes", "1024"];
    let (_, stderr) = ok(&args, list.as_bytes(), dir.path());
    assert!(stderr.contains("more than a file may hold (1024): not written"), "{stderr}");
    assert!(stderr.contains("left out: 1 larger than --max-bytes"), "{stderr}");
    let xml = std::fs::read_to_string(dir.path().join("o/sitemap.xml")).unwrap();
    assert_eq!(xml.matches("<url>").count(), 1);
}

/// `generate` killed with SIGKILL at several points while it replaces a set: each time the set
/// in place is the previous one, whole (the index unchanged, every part it lists there with
/// the bytes the first run wrote). A later run completes, and removes the killed runs'
/// temporary files and parts.
#[cfg(unix)]
#[test]
fn a_run_killed_mid_write_leaves_the_previous_set_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = ["generate", "list", "urls.txt", "--base-url", "https://example.com/", "--out", "out"];
    let old: String = (0..20_000).map(|i| format!("https://example.com/old/{i}\n")).collect();
    write(dir.path(), "urls.txt", &old);
    ok(&[&args[..], &["--max-urls", "1000"]].concat(), b"", dir.path());
    let before: Vec<(String, Vec<u8>)> =
        files(&out).into_iter().map(|f| (f.clone(), std::fs::read(out.join(f)).unwrap())).collect();
    assert_eq!(before.len(), 21);

    let new: String = (0..400_000).map(|i| format!("https://example.com/new/{i}\n")).collect();
    write(dir.path(), "urls.txt", &new);
    for new_files in [1, 2, 4, 12, 40] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .args(args)
            .args(["--max-urls", "1000"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let known = files(&out);
        let started = std::time::Instant::now();
        while files(&out).iter().filter(|f| !known.contains(f)).count() < new_files {
            assert!(started.elapsed().as_secs() < 60, "no progress");
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended before the kill: the test proves nothing");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        for (name, bytes) in &before {
            assert_eq!(&std::fs::read(out.join(name)).unwrap(), bytes, "{name} after a kill at {new_files} new files");
        }
        assert_eq!(read_set(&out, "sitemap.xml").len(), 20_000);
        assert!(files(&out).len() > before.len(), "the killed run had written something");
    }
    let (_, stderr) = ok(&[&args[..], &["--max-urls", "1000"]].concat(), b"", dir.path());
    assert!(stderr.contains("400,000 URLs"), "{stderr}");
    let after = files(&out);
    assert_eq!(after.len(), 401, "400 parts and the index, no temporary file or stray part: {after:?}");
    assert!(after.iter().all(|f| !f.starts_with('.')));
    assert_eq!(read_set(&out, "sitemap.xml").len(), 400_000);
}
