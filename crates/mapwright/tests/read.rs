//! `mapwright read` end to end: output formats, exit statuses, scope with --strict, stdin,
//! broken pipes.

use crate::validate::{bin, run, stdout, urlset, write};
use std::io::Write;
use std::process::Stdio;

#[test]
fn jsonl_has_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.xml",
        &urlset(
            "<url><loc>https://a.com/x?a=1&amp;b=2</loc><lastmod>2005-01-01</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n",
        ),
    );
    let o = run(&["read", f.to_str().unwrap()], dir.path());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["kind"], "url");
    assert_eq!(v["loc"], "https://a.com/x?a=1&b=2");
    assert_eq!(v["lastmod"], "2005-01-01");
    assert_eq!(v["changefreq"], "daily");
    assert_eq!(v["priority"], 0.5);
    assert_eq!(v["images"], serde_json::json!([]));
    assert_eq!(v["videos"], serde_json::json!([]));
    assert_eq!(v["news"], serde_json::Value::Null);
    assert_eq!(v["alternates"], serde_json::json!([]));
}

/// Google's geo extension and PageMap in the JSON row (left out when absent, as above).
#[test]
fn jsonl_has_geo_and_pagemap() {
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:geo="http://www.google.com/geo/schemas/sitemap/1.0">
<url><loc>https://a.com/m.kml</loc><geo:geo><geo:format>kml</geo:format></geo:geo>
<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0"><DataObject type="document" id="d"><Attribute name="title">T</Attribute></DataObject></PageMap></url>
</urlset>"#;
    let f = write(dir.path(), "s.xml", xml);
    let o = run(&["read", f.to_str().unwrap()], dir.path());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["geo"], serde_json::json!({"format": "kml"}));
    assert_eq!(
        v["pagemap"],
        serde_json::json!([{"type": "document", "id": "d", "attributes": [{"name": "title", "value": "T"}]}])
    );
}

#[test]
fn csv_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.xml",
        &urlset(
            "<url><loc>https://a.com/a,b</loc><priority>0.3</priority></url>\n<url><loc>https://a.com/c</loc></url>\n",
        ),
    );
    let o = run(&["read", "--format", "csv", f.to_str().unwrap()], dir.path());
    assert_eq!(
        stdout(&o),
        "kind,loc,lastmod,changefreq,priority\nurl,\"https://a.com/a,b\",,,0.3\nurl,https://a.com/c,,,\n"
    );
    let o = run(&["read", "--format", "text", f.to_str().unwrap()], dir.path());
    assert_eq!(stdout(&o), "https://a.com/a,b\nhttps://a.com/c\n");
}

#[test]
fn index_entries_are_sitemaps() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "i.xml",
        &crate::validate::index(
            "<sitemap><loc>https://a.com/s1.xml</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>\n",
        ),
    );
    let o = run(&["read", f.to_str().unwrap()], dir.path());
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["kind"], "sitemap");
    assert_eq!(v["lastmod"], "2004-10-01T18:23:17+00:00");
    assert!(v.get("images").is_none());
}

#[test]
fn exit_statuses() {
    let dir = tempfile::tempdir().unwrap();
    // 1: stopped early, but what came before is printed; the error says where.
    let cut = write(dir.path(), "cut.xml", "<urlset><url><loc>https://a.com/1</loc></url><url><loc>https://a.com/2");
    let o = run(&["read", "--format", "text", cut.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "https://a.com/1\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.xml: error: 1:"), "{err}");
    // 1: nothing readable as a sitemap.
    let html = write(dir.path(), "e.html", "<!DOCTYPE html><html><body>Oops</body></html>");
    assert_eq!(run(&["read", html.to_str().unwrap()], dir.path()).status.code(), Some(1));
    // 2: bad arguments, a missing file.
    assert_eq!(run(&["read", "--format", "yaml", "x"], dir.path()).status.code(), Some(2));
    assert_eq!(run(&["read", "missing.xml"], dir.path()).status.code(), Some(2));
    assert_eq!(run(&["read", "--strict", "x.xml"], dir.path()).status.code(), Some(2));
}

#[test]
fn diagnostics_name_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let f =
        write(dir.path(), "s.xml", &urlset("<url>\n  <loc>https://a.com/</loc>\n  <priority>0,8</priority>\n</url>\n"));
    let o = run(&["read", f.to_str().unwrap()], dir.path());
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s.xml:5:3: error[priority-range]: priority \"0,8\": use a point as decimal separator: 0.8"),
        "{err}"
    );
    let quiet = run(&["read", "-q", f.to_str().unwrap()], dir.path());
    assert!(quiet.stderr.is_empty());
}

#[test]
fn strict_scope_drops_with_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.xml",
        &urlset(
            "<url><loc>https://a.com/shop/1</loc></url>\n<url><loc>https://a.com/blog/2</loc></url>\n<url><loc>http://a.com/shop/3</loc></url>\n",
        ),
    );
    let args = ["read", "--format", "text", "--url", "https://a.com/shop/sitemap.xml", f.to_str().unwrap()];
    let lenient = run(&args, dir.path());
    assert_eq!(stdout(&lenient).lines().count(), 3, "without --strict nothing is dropped");
    let mut strict_args = args.to_vec();
    strict_args.push("--strict");
    let o = run(&strict_args, dir.path());
    assert_eq!(stdout(&o), "https://a.com/shop/1\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("[loc-out-of-scope]").count(), 2, "{err}");
}

#[test]
fn stdin_and_gzip() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"https://a.com/1\nhttps://a.com/2\n").unwrap();
    let bytes = gz.finish().unwrap();
    let mut child =
        bin().args(["read", "--format", "text", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "https://a.com/1\nhttps://a.com/2\n");
}

#[test]
fn broken_pipe_is_success() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..200_000).map(|i| format!("https://a.com/{i}\n")).collect();
    let f = write(dir.path(), "big.txt", &body);
    let mut child = bin()
        .args(["read", "--format", "text", f.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out); // like `| head`
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "exit {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
}

#[test]
fn completions() {
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success());
    let script = String::from_utf8_lossy(&o.stdout);
    assert!(script.contains("mapwright"));
    // Each command's arguments are added to the grammar only when asked for (`cli::Deferred`):
    // the completions still offer every command's own flags, down to generate's sources'.
    for flag in [
        "--max-bytes",
        "--oai-max-pages",
        "--hosts-in-flight",
        "--indexnow",
        "--list-rules",
        "--data-dir",
        "--base-url",
    ] {
        assert!(script.contains(flag), "the bash completions lack {flag}");
    }
    // `mapwright help generate <TAB>`: clap copies that tree from the built commands.
    assert!(script.contains("help__subcmd__generate__subcmd__crawl"), "no completion of `help generate crawl`");
}

/// Every command's arguments reach its help, `help COMMAND`, and the suggestions of a
/// mistyped flag, though the grammar adds them only to the command that runs (`cli::Deferred`).
#[test]
fn every_command_s_arguments_reach_its_help_and_its_errors() {
    let top = bin().arg("--help").output().unwrap();
    assert!(top.status.success());
    let top = String::from_utf8_lossy(&top.stdout);
    for (command, flag) in [
        ("read", "--max-bytes"),
        ("discover", "--hosts-in-flight"),
        ("submit", "--indexnow"),
        ("validate", "--list-rules"),
        ("generate", "crawl"),
        ("serve", "--data-dir"),
    ] {
        assert!(top.contains(command), "`mapwright --help` does not list {command}");
        // The command's description (its line of the top-level help) heads its own help.
        let about = top.lines().find_map(|l| l.trim_start().strip_prefix(command)).map(str::trim).unwrap();
        for args in [vec![command, "--help"], vec!["help", command]] {
            let o = bin().args(&args).output().unwrap();
            let help = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success() && help.contains(flag), "`mapwright {}` lacks {flag}:\n{help}", args.join(" "));
            assert!(help.starts_with(about), "`mapwright {}` does not start with {about:?}:\n{help}", args.join(" "));
        }
    }
    let read = bin().args(["read", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&read.stdout).contains("Exit status: 0 entries read"), "read's own after-help");
    let o = bin().args(["read", "--formt", "text", "s.xml"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--format"), "no suggestion for a mistyped flag: {err}");
    let crawl = bin().args(["generate", "crawl", "--help"]).output().unwrap();
    assert!(crawl.status.success() && String::from_utf8_lossy(&crawl.stdout).contains("--base-url"));
}

/// (stdout lines, stderr, exit code) of `read --format text` on `text`.
fn read_text(text: &str) -> (Vec<String>, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "s.xml", text);
    let o = run(&["read", "--format", "text", f.to_str().unwrap()], dir.path());
    (stdout(&o).lines().map(str::to_string).collect(), String::from_utf8_lossy(&o.stderr).into_owned(), o.status.code())
}

use crate::validate::NS;

/// Each leniency case gives the entries a lenient lxml parse gives (`etree.XMLParser(recover=True)`,
/// then `//*[local-name()='url' or local-name()='sitemap']/*[local-name()='loc']`; the expected
/// lists below are its output), with a finding that says what was repaired.
#[test]
fn lenient_reads_match_lxml_and_say_so() {
    let cases: [(&str, String, &[&str], &str); 5] = [
        (
            "nested urlset (a large government site, ultimate-sitemap-parser #86)",
            format!(
                "<urlset xmlns=\"{NS}\"><url><loc>https://a.com/1</loc></url><urlset><url><loc>https://a.com/2</loc></url></urlset><url><loc>https://a.com/3</loc></url></urlset>"
            ),
            &["https://a.com/1", "https://a.com/2", "https://a.com/3"],
            "warning[unknown-element]: <urlset> nested inside <urlset>",
        ),
        (
            "nested sitemapindex",
            format!(
                "<sitemapindex xmlns=\"{NS}\"><sitemapindex><sitemap><loc>https://a.com/s1.xml</loc></sitemap></sitemapindex><sitemap><loc>https://a.com/s2.xml</loc></sitemap></sitemapindex>"
            ),
            &["https://a.com/s1.xml", "https://a.com/s2.xml"],
            "warning[unknown-element]: <sitemapindex> nested inside <sitemapindex>",
        ),
        (
            "unknown default namespace",
            "<urlset xmlns=\"http://example.org/something-else\"><url><loc>https://a.com/1</loc></url><url><loc>https://a.com/2</loc></url></urlset>".to_string(),
            &["https://a.com/1", "https://a.com/2"],
            "error[namespace]: wrong namespace \"http://example.org/something-else\" on <urlset>: its elements were read as sitemap elements",
        ),
        (
            "lone url root",
            format!("<url xmlns=\"{NS}\"><loc>https://a.com/1</loc><lastmod>2024-01-01</lastmod></url>"),
            &["https://a.com/1"],
            "error[unknown-root]: the root element is a lone <url>: read as a urlset of one entry",
        ),
        (
            "lone sitemap root",
            format!("<sitemap xmlns=\"{NS}\"><loc>https://a.com/s.xml</loc></sitemap>"),
            &["https://a.com/s.xml"],
            "error[unknown-root]: the root element is a lone <sitemap>: read as a sitemap index of one entry",
        ),
    ];
    for (what, text, want, finding) in cases {
        let (got, err, code) = read_text(&text);
        assert_eq!(got, want, "{what}: {err}");
        assert_eq!(code, Some(0), "{what}: {err}");
        assert_eq!(err.matches(finding).count(), 1, "{what}: one finding {finding:?} in {err}");
    }
}

#[test]
fn an_empty_read_always_says_why_and_fails() {
    // Zero bytes, and only white space: an error of its own, exit 1.
    for text in ["", " \n\t\n"] {
        let (got, err, code) = read_text(text);
        assert!(got.is_empty());
        assert_eq!(code, Some(1), "{text:?}: {err}");
        assert!(err.contains("s.xml: error: the input"), "{text:?}: {err}");
        assert!(err.contains("there is no sitemap to read"), "{err}");
    }
    // A urlset without entries.
    let (got, err, code) = read_text(&format!("<urlset xmlns=\"{NS}\"></urlset>"));
    assert!(got.is_empty());
    assert_eq!(code, Some(1));
    assert!(err.contains("s.xml: error: no entries read: the urlset lists no entry"), "{err}");
    // Every entry skipped: the skips are the reason.
    let (_, err, code) = read_text(&urlset("<url><loc>/relative</loc></url><url><lastmod>2024-01-01</lastmod></url>"));
    assert_eq!(code, Some(1));
    assert!(err.contains("no entries read: all 2 entries were skipped"), "{err}");
    // Every URL dropped by --strict.
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "s.xml", &urlset("<url><loc>https://a.com/blog/1</loc></url>"));
    let o = run(&["read", "--strict", "--url", "https://a.com/shop/sitemap.xml", f.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no entries read: all 1 entries are outside the scope of --url"), "{err}");
}

/// A local file named in its host's robots.txt: `--vouched` waives the folder rule, once, with
/// `scope-vouched`; `--vouched=ORIGIN` (cross-submission) allows that origin only.
#[test]
fn strict_scope_follows_who_vouches() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.xml",
        &urlset(
            "<url><loc>https://a.com/page/1</loc></url><url><loc>https://a.com/page/2</loc></url><url><loc>https://b.com/page/3</loc></url>",
        ),
    );
    let path = f.to_str().unwrap();
    let base = ["read", "--format", "text", "--strict", "--url", "https://a.com/sitemaps/s.xml", path];
    let o = run(&base, dir.path());
    assert_eq!(o.status.code(), Some(1), "nobody vouches: the folder rule binds");
    let mut vouched = base.to_vec();
    vouched.push("--vouched");
    let o = run(&vouched, dir.path());
    assert_eq!(stdout(&o), "https://a.com/page/1\nhttps://a.com/page/2\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("info[scope-vouched]").count(), 1, "{err}");
    assert_eq!(err.matches("[loc-out-of-scope]").count(), 1, "{err}");
    // Hosted on b.com, named in a.com's robots.txt: a.com's URLs only.
    let cross =
        ["read", "--format", "text", "--strict", "--url", "https://b.com/maps/s.xml", "--vouched=https://a.com", path];
    let o = run(&cross, dir.path());
    assert_eq!(stdout(&o), "https://a.com/page/1\nhttps://a.com/page/2\n");
    // `--vouched` is an option with an optional value: it never takes the SOURCE as its value.
    let o = run(&["read", "--vouched", path, "--url", "https://a.com/sitemaps/s.xml", "--strict"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

/// No transparent huge page from the first allocation on: the allocator's settings are made
/// before the Rust runtime allocates (a constructor), not in `main`, where mimalloc had already
/// touched its first arena and page, two 2 MiB pages the kernel zeroed in every process. Seen
/// on a process blocked reading its standard input, after its start-up. Where the kernel gives
/// no huge pages at all (`never`), there is nothing to see and the check says so.
#[cfg(target_os = "linux")]
#[test]
fn no_huge_page_is_taken_at_start_up() {
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if mode.is_empty() || mode.contains("[never]") {
        eprintln!("transparent huge pages are off on this machine ({mode:?}): nothing to check");
        return;
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["read", "-", "--format", "text"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let proc = format!("/proc/{}", child.id());
    // Blocked in its read of the pipe: its start-up is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(format!("{proc}/wchan")).is_ok_and(|w| w.contains("pipe")) {
        assert!(std::time::Instant::now() < deadline, "mapwright read - never waited for its input");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let rollup = std::fs::read_to_string(format!("{proc}/smaps_rollup")).unwrap();
    drop(child.stdin.take());
    let _ = child.wait();
    let huge = rollup.lines().find(|l| l.starts_with("AnonHugePages:")).unwrap_or("AnonHugePages: (none)");
    assert!(huge.split_whitespace().nth(1) == Some("0"), "huge pages at start-up: {huge}");
}

/// A `.gz` large enough to inflate on the worker thread: its worker runs on another CPU than
/// the reader's (`read/gunzip.rs`), where the process may use two or more. Seen on a read
/// blocked writing to a full pipe, its worker waiting for a buffer back.
#[cfg(target_os = "linux")]
#[test]
fn the_inflate_worker_runs_off_the_reader_s_cpu() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    // Paths that compress poorly, so the compressed file is past the size inflated inline.
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut body = String::new();
    for i in 0..60_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        body.push_str(&format!("<url><loc>https://example.com/{i}/{seed:x}</loc></url>\n"));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(urlset(&body).as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    assert!(gz.len() > 256 * 1024, "{} bytes compressed", gz.len());
    let path = dir.path().join("big.xml.gz");
    std::fs::write(&path, gz).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["read", "--format", "text"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let proc = format!("/proc/{}", child.id());
    let cpus = |status: &str| -> usize {
        let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_owned();
        list.split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                None => 1,
            })
            .sum()
    };
    let worker = crate::worker_thread(child.id(), "inflate worker");
    let reader = cpus(&std::fs::read_to_string(format!("{proc}/status")).unwrap());
    // The worker sets its CPUs first thing; its status is read after a moment.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let of_worker = cpus(&std::fs::read_to_string(worker.join("status")).unwrap());
    drop(child.stdout.take());
    let _ = child.wait();
    if reader < 2 {
        assert_eq!(of_worker, reader, "one CPU: the worker is left where the scheduler puts it");
    } else {
        assert_eq!(of_worker, reader - 1, "the worker may run on every CPU but the reader's");
    }
}

/// The binary's relative relocations are packed (DT_RELR, `build.rs`) where the C library reads
/// them: the loader's part of every start-up halves. Looked up in the binary's dynamic section.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_packs_its_relative_relocations() {
    let out = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output().unwrap();
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let version: Vec<u32> = answer.trim_start_matches("glibc ").split('.').filter_map(|p| p.parse().ok()).collect();
    if version.as_slice() < [2, 36].as_slice() {
        eprintln!("{answer}: no DT_RELR before glibc 2.36, the binary is linked as before");
        return;
    }
    let elf = std::fs::read(env!("CARGO_BIN_EXE_mapwright")).unwrap();
    const DT_RELR: u64 = 0x24;
    assert!(dynamic_tags(&elf).contains(&DT_RELR), "no DT_RELR in the binary, on {answer}");
}

/// The tags of an ELF64 little-endian file's dynamic section (PT_DYNAMIC).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn dynamic_tags(elf: &[u8]) -> Vec<u64> {
    let word = |at: usize, n: usize| elf[at..at + n].iter().rev().fold(0_u64, |v, b| v << 8 | u64::from(*b));
    assert_eq!((&elf[..4], elf[4], elf[5]), (&b"\x7fELF"[..], 2, 1), "not an ELF64 little-endian file");
    let (phoff, phentsize, phnum) = (word(0x20, 8) as usize, word(0x36, 2) as usize, word(0x38, 2) as usize);
    for ph in (0..phnum).map(|i| phoff + i * phentsize) {
        if word(ph, 4) == 2 {
            let (off, size) = (word(ph + 8, 8) as usize, word(ph + 32, 8) as usize);
            return (off..off + size).step_by(16).map(|entry| word(entry, 8)).collect();
        }
    }
    Vec::new()
}
