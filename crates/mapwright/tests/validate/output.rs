//! Output formats, exit statuses and options of `mapwright validate`.

use super::*;
use serde_json::Value;

#[test]
fn exit_status_is_0_1_or_2() {
    let dir = tempfile::tempdir().unwrap();
    let ok = urlset("<url><loc>https://example.com/</loc></url>\n<url><loc>https://example.com/</loc></url>\n");
    write(dir.path(), "ok.xml", &ok);
    write(dir.path(), "bad.xml", &mixed());
    assert_eq!(run(&["validate", "ok.xml"], dir.path()).status.code(), Some(0), "warnings alone pass");
    assert_eq!(run(&["validate", "bad.xml"], dir.path()).status.code(), Some(1));
    assert_eq!(run(&["validate", "ok.xml", "bad.xml"], dir.path()).status.code(), Some(1));
    let missing = run(&["validate", "ok.xml", "missing.xml"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("missing.xml"));
    assert_eq!(run(&["validate", "--format", "yaml", "ok.xml"], dir.path()).status.code(), Some(2));
    let mismatch = run(&["validate", "ok.xml", "bad.xml", "--url", "https://example.com/s.xml"], dir.path());
    assert_eq!(mismatch.status.code(), Some(2), "one --url for two sources");
    assert_eq!(run(&["validate", "ok.xml", "--url", "not a url"], dir.path()).status.code(), Some(2));
}

#[test]
fn text_output_is_compiler_style_with_the_source_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.xml", &mixed());
    let o = run(&["validate", "s.xml"], dir.path());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l.starts_with("s.xml:5:5: error[priority-range]: priority \"0,8\": use a point as decimal separator: 0.8")
        })
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(lines[at + 1], "5 |     <priority>0,8</priority>");
    assert_eq!(lines[at + 2], "  |     ^");
    assert!(
        out.contains("s.xml:7:8: warning[duplicate-url]: https://example.com/a is already listed on line 4"),
        "{out}"
    );
    assert!(out.contains("s.xml:8:40: info[lastmod-precision]"), "{out}");
    assert!(out.contains("s.xml: note: scope not checked"), "without --url one line says so: {out}");
    assert_eq!(
        lines.last().copied(),
        Some(
            "invalid: 1 file, 3 entries: 1 error, 1 warning, 1 info (priority-range 1, duplicate-url 1, lastmod-precision 1)"
        )
    );
    assert!(!out.contains('\u{1b}'), "no colour when not on a terminal");
}

#[test]
fn json_output_is_the_document_of_rules_md() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.xml", &mixed());
    let o = run(&["validate", "--format", "json", "s.xml"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&doc), ["findings", "summary"]);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3);
    for f in findings {
        let mut k = keys(f);
        k.sort();
        assert_eq!(k, ["column", "file", "line", "loc", "message", "rule", "severity"]);
    }
    assert_eq!(
        findings[0],
        serde_json::json!({"rule": "priority-range", "severity": "error", "file": "s.xml", "line": 5, "column": 5,
            "loc": "https://example.com/a", "message": "priority \"0,8\": use a point as decimal separator: 0.8"})
    );
    assert_eq!(
        doc["summary"],
        serde_json::json!({"files": 1, "entries": 3, "errors": 1, "warnings": 1, "infos": 1,
            "rules": {"priority-range": 1, "lastmod-precision": 1, "duplicate-url": 1}})
    );
    // A whole-file finding has a null loc.
    write(dir.path(), "empty.xml", &urlset(""));
    let o = run(&["validate", "--format", "json", "empty.xml"], dir.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["findings"][0]["rule"], "empty-sitemap");
    assert!(doc["findings"][0]["loc"].is_null());
    assert_eq!(o.status.code(), Some(0), "empty-sitemap is a warning");
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.xml", &mixed());
    write(dir.path(), "sub dir/ü.xml", &urlset("<url><loc>/relative</loc></url>\n"));
    let o = run(&["validate", "--format", "sarif", "s.xml", "sub dir/ü.xml"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::draft4::options().should_validate_formats(true).build(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "not valid SARIF 2.1.0:\n{}", errors.join("\n"));
    // And the schema does reject what is not SARIF, so the check above means something.
    assert!(!validator.is_valid(&serde_json::json!({"version": "2.1.0", "runs": [{"results": []}]})));
    let run0 = &log["runs"][0];
    assert_eq!(run0["tool"]["driver"]["rules"].as_array().unwrap().len(), mapwright_core::Rule::ALL.len());
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["ruleId"], "priority-range");
    assert_eq!(results[0]["level"], "error");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 5, "startColumn": 5})
    );
    let levels: Vec<&str> = results.iter().map(|r| r["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["error", "warning", "note", "error"]);
    assert_eq!(results[3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "sub%20dir/%C3%BC.xml");
}

#[test]
fn scope_needs_the_url() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.xml",
        &urlset("<url><loc>https://example.com/blog/a</loc></url>\n<url><loc>https://example.com/shop/b</loc></url>\n"),
    );
    let o = run(&["validate", "s.xml"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let o = run(&["validate", "s.xml", "--url", "https://example.com/blog/sitemap.xml"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("s.xml:4:6: error[loc-out-of-scope]: https://example.com/shop/b is outside the sitemap's folder"),
        "{out}"
    );
    assert!(!out.contains("scope not checked"), "{out}");
}

#[test]
fn stdin_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, mixed().as_bytes()).unwrap();
    std::fs::write(dir.path().join("s.xml.gz"), gz.finish().unwrap()).unwrap();
    let out = stdout(&run(&["validate", "s.xml.gz"], dir.path()));
    assert!(out.contains("5 |     <priority>0,8</priority>"), "source lines of a gzipped file: {out}");
    let mut child = bin()
        .args(["validate", "-", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), mixed().as_bytes()).unwrap();
    drop(child.stdin.take());
    let o = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["findings"][0]["file"], "-");
    assert_eq!(doc["summary"]["errors"], 1);
}

#[test]
fn follow_validates_local_children_through_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "public/maps/index.xml",
        &index(
            "<sitemap><loc>https://example.com/maps/a.xml</loc></sitemap>\n<sitemap><loc>https://example.com/maps/sub/nested.xml</loc></sitemap>\n<sitemap><loc>https://cdn.example.net/c.xml</loc></sitemap>\n",
        ),
    );
    write(
        root,
        "public/maps/a.xml",
        &urlset(
            "<url><loc>https://example.com/maps/p</loc><changefreq>often</changefreq></url>\n<url><loc>https://example.com/other</loc></url>\n",
        ),
    );
    write(root, "public/maps/sub/nested.xml", &index("<sitemap><loc>https://example.com/maps/a.xml</loc></sitemap>\n"));
    let o = run(
        &[
            "validate",
            "--format",
            "json",
            "--follow",
            "public/maps/index.xml",
            "--url",
            "https://example.com/maps/index.xml",
        ],
        root,
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<(String, String, u64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let child = Path::new("public/maps").join("a.xml").display().to_string();
    assert_eq!(
        got,
        [
            ("public/maps/index.xml".to_string(), "index-cross-site".to_string(), 5),
            (child.clone(), "changefreq-value".to_string(), 3),
            (child.clone(), "loc-out-of-scope".to_string(), 4),
            ("public/maps/index.xml".to_string(), "index-nested".to_string(), 4),
        ],
        "{doc:#}"
    );
    assert_eq!(doc["summary"]["files"], 3);
    assert_eq!(o.status.code(), Some(1));
    // Without --follow, only the index.
    let o = run(
        &["validate", "--format", "json", "public/maps/index.xml", "--url", "https://example.com/maps/index.xml"],
        root,
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["summary"]["files"], 1);
    // A listed child that is missing on disk: the run could not do its job.
    std::fs::remove_file(root.join("public/maps/a.xml")).unwrap();
    let o =
        run(&["validate", "--follow", "public/maps/index.xml", "--url", "https://example.com/maps/index.xml"], root);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a.xml"));
}

#[test]
fn list_rules_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["validate", "--list-rules"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for r in mapwright_core::Rule::ALL {
        assert!(out.lines().any(|l| l.starts_with(r.as_str()) && l.contains(r.severity().as_str())), "{r}");
    }
    let o = run(&["validate", "--explain", "loc-out-of-scope"], dir.path());
    let out = stdout(&o);
    assert!(out.starts_with("loc-out-of-scope (error)"), "{out}");
    assert!(out.contains("What it checks") && out.contains("Why it matters") && out.contains("How to fix it"));
    let o = run(&["validate", "--explain", "priority"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean priority-range, priority-uniform"));
}

/// Thousands of one warning never hide an error: each rule keeps its first 100 findings,
/// errors come first, and every count is in the summary (issue 12: 10,000 `duplicate-url`
/// warnings used to fill the report while `too-large` and `too-many-urls` were not shown).
#[test]
fn a_flood_of_warnings_cannot_hide_the_errors() {
    let dir = tempfile::tempdir().unwrap();
    let body = "<url><loc>https://example.com/same</loc></url>\n".repeat(60_000);
    write(dir.path(), "s.xml", &urlset(&body));
    let args = ["validate", "--format", "json", "--max-bytes", "2500000", "s.xml"];
    let o = run(&args, dir.path());
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let rules: Vec<&str> = findings.iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(rules[..2], ["too-many-urls", "too-large"], "the errors first");
    assert_eq!(rules.iter().filter(|r| **r == "duplicate-url").count(), 100);
    let dups = doc["summary"]["rules"]["duplicate-url"].as_u64().unwrap();
    assert!(dups > 50_000, "{dups}");
    assert_eq!(doc["summary"]["rules"]["too-many-urls"], 1);
    assert_eq!(doc["summary"]["rules"]["too-large"], 1);
    assert_eq!(doc["summary"]["errors"], 2);
    assert_eq!(doc["not_shown"], serde_json::json!([{"file": "s.xml", "rule": "duplicate-url", "count": dups - 100}]));
    // SARIF carries the counts too; the text summary names the rules and what was left out.
    let o = run(&["validate", "--format", "sarif", "--max-bytes", "2500000", "s.xml"], dir.path());
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(log["runs"][0]["properties"]["ruleCounts"]["duplicate-url"], dups);
    let o = run(&["validate", "--max-bytes", "2500000", "s.xml"], dir.path());
    let out = stdout(&o);
    assert!(out.contains(&format!("s.xml: note: {} more `duplicate-url` not shown", dups - 100)), "{out}");
    assert!(out.trim_end().ends_with(&format!("(too-many-urls 1, too-large 1, duplicate-url {dups})")), "{out}");
}

/// A local index named in robots.txt (`--vouched`): `--follow` gives its voucher to the
/// children under /sitemaps/, whose URLs elsewhere on the host are then in scope.
#[test]
fn follow_gives_the_index_voucher_to_local_children() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "sitemap_index.xml",
        &index("<sitemap><loc>https://example.com/sitemaps/a.xml</loc></sitemap>\n"),
    );
    write(dir.path(), "sitemaps/a.xml", &urlset("<url><loc>https://example.com/page/1</loc></url>\n"));
    let args = ["validate", "--format", "json", "--follow", "--url", "https://example.com/sitemap_index.xml"];
    let rules = |extra: &[&str]| -> Vec<(String, String)> {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        a.push("sitemap_index.xml");
        let o = run(&a, dir.path());
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["rule"].as_str().unwrap().to_string(), f["file"].as_str().unwrap().replace('\\', "/")))
            .collect()
    };
    assert_eq!(rules(&[]), [("loc-out-of-scope".to_string(), "sitemaps/a.xml".to_string())]);
    assert_eq!(rules(&["--vouched"]), [("scope-vouched".to_string(), "sitemaps/a.xml".to_string())]);
}

/// Regression (audit: "valid: 1 file, 0 entries", exit 0, for an OAI-PMH answer none of whose
/// records has an http(s) dc:identifier, which `read` fails on): not valid, exit 1, as `read`.
#[test]
fn a_repository_with_no_usable_url_fails_validate_as_it_fails_read() {
    let dir = tempfile::tempdir().unwrap();
    let record = |id: &str| {
        format!(
            "<record><header><identifier>oai:x:{id}</identifier><datestamp>2020-01-01</datestamp></header><metadata>\
             <oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
             xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:identifier>urn:x:{id}</dc:identifier></oai_dc:dc></metadata></record>"
        )
    };
    let oai = format!(
        "<?xml version=\"1.0\"?><OAI-PMH xmlns=\"http://www.openarchives.org/OAI/2.0/\">\
         <responseDate>2026-11-20T10:16:00Z</responseDate><request>https://repo.example/oai</request>\
         <ListRecords>{}{}</ListRecords></OAI-PMH>",
        record("1"),
        record("2")
    );
    write(dir.path(), "oai.xml", &oai);
    let o = run(&["validate", "oai.xml"], dir.path());
    let out = format!("{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("no-usable-url"), "{out}");
    assert_eq!(run(&["read", "oai.xml"], dir.path()).status.code(), Some(1), "read fails on it too");
}
