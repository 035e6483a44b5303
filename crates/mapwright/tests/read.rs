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
    assert!(String::from_utf8_lossy(&o.stdout).contains("mapwright"));
}
