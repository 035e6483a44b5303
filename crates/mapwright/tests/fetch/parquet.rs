//! `--format parquet --out FILE` of `read`, `discover` and `discover --sites`, read back with
//! the parquet crate: every row equal to the JSON Lines row (extensions included, compared as
//! JSON), row groups written as they fill, and the combinations refused with a reason.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use axum::Router;
use axum::routing::get;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};
use std::fs::File;
use std::path::Path;
use std::process::Command;

/// A `<url>` with every extension, `i` making it distinct.
fn rich_url(base: &str, i: usize) -> String {
    format!(
        "<url><loc>{base}/rich/{i}</loc><lastmod>2024-05-0{d}T10:20:30.5+02:00</lastmod><changefreq>weekly</changefreq><priority>0.8</priority>\
         <image:image><image:loc>{base}/{i}.jpg</image:loc><image:caption>A &amp; B</image:caption></image:image>\
         <image:image><image:loc>{base}/{i}b.jpg</image:loc></image:image>\
         <video:video><video:thumbnail_loc>{base}/t.jpg</video:thumbnail_loc><video:title>V{i}</video:title>\
         <video:description>D</video:description><video:content_loc>{base}/v.mp4</video:content_loc>\
         <video:duration>60</video:duration><video:rating>4.2</video:rating><video:view_count>12345</video:view_count>\
         <video:price currency=\"EUR\" type=\"rent\">1.50</video:price><video:tag>a</video:tag><video:tag>b</video:tag></video:video>\
         <news:news><news:publication><news:name>P</news:name><news:language>en</news:language></news:publication>\
         <news:publication_date>2024-05-01</news:publication_date><news:title>T {i}</news:title></news:news>\
         <xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"{base}/de/rich/{i}\"/></url>",
        d = 1 + i % 9
    )
}

/// A urlset of `rich` entries with every extension and `plain` bare ones.
fn urlset(base: &str, rich: usize, plain: usize) -> String {
    let mut s = String::from(
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" \
         xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\" \
         xmlns:video=\"http://www.google.com/schemas/sitemap-video/1.1\" \
         xmlns:news=\"http://www.google.com/schemas/sitemap-news/0.9\" \
         xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">",
    );
    for i in 0..rich {
        s.push_str(&rich_url(base, i));
    }
    for i in 0..plain {
        s.push_str(&format!("<url><loc>{base}/p/{i}</loc></url>"));
    }
    s + "</urlset>"
}

/// Starts a site (robots.txt -> an index -> a rich child and a gzipped plain one) on
/// 127.0.0.1 and returns its base URL.
fn serve(plain: usize) -> String {
    super::serve_app(move |base| {
        let robots = format!("User-agent: *\nSitemap: {base}/index.xml\n");
        let index = format!(
            "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <sitemap><loc>{base}/rich.xml</loc></sitemap><sitemap><loc>{base}/plain.xml.gz</loc></sitemap></sitemapindex>"
        );
        let rich = urlset(base, 20, 0);
        let plain = super::gzip(urlset(base, 0, plain).as_bytes());
        Router::new()
            .route("/robots.txt", get(move || async move { robots }))
            .route("/index.xml", get(move || async move { index }))
            .route("/rich.xml", get(move || async move { rich }))
            .route("/plain.xml.gz", get(move || async move { plain }))
    })
}

fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright")).args(args).current_dir(dir).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// A value of an Arrow column as the JSON the JSONL row holds (null when missing).
fn json_of(col: &dyn Array, i: usize) -> Value {
    use arrow_schema::DataType;
    if col.is_null(i) {
        return Value::Null;
    }
    match col.data_type() {
        DataType::Utf8 => Value::String(col.as_string::<i32>().value(i).to_string()),
        // As serde_json writes an f32: its shortest form, read back as JSON reads it.
        DataType::Float32 => serde_json::from_str(&col.as_primitive::<Float32Type>().value(i).to_string()).unwrap(),
        DataType::UInt32 => Value::from(col.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Value::from(col.as_primitive::<UInt64Type>().value(i)),
        DataType::List(_) => {
            let items = col.as_list::<i32>().value(i);
            Value::Array((0..items.len()).map(|j| json_of(items.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = col.as_struct();
            let mut m = Map::new();
            for (f, c) in fields.iter().zip(s.columns()) {
                m.insert(f.name().clone(), json_of(c.as_ref(), i));
            }
            Value::Object(m)
        }
        other => panic!("no column of type {other} is written"),
    }
}

/// JSON with the missing and the empty made alike: nulls and empty lists dropped from objects.
fn plain(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty)))
                .map(|(k, v)| (k, plain(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(plain).collect()),
        v => v,
    }
}

/// The rows of a Parquet file as JSON objects, and its row groups.
fn parquet_rows(path: &Path) -> (Vec<Value>, usize, Vec<String>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let groups = builder.metadata().num_row_groups();
    let names = builder.schema().fields().iter().map(|f| f.name().clone()).collect();
    let mut rows = Vec::new();
    for batch in builder.build().unwrap() {
        let batch: RecordBatch = batch.unwrap();
        for i in 0..batch.num_rows() {
            let mut m = Map::new();
            for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
                m.insert(f.name().clone(), json_of(c.as_ref(), i));
            }
            rows.push(plain(Value::Object(m)));
        }
    }
    (rows, groups, names)
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines().map(|l| plain(serde_json::from_str(l).unwrap())).collect()
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|v| (v["site"].as_str().map(String::from), v["loc"].as_str().unwrap().to_string()));
    rows
}

#[test]
fn read_parquet_is_the_jsonl_row_for_row() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.xml"), urlset("https://e.com", 30, 30)).unwrap();
    let index = "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
        <sitemap><loc>https://e.com/1.xml</loc><lastmod>2024-05</lastmod></sitemap>\
        <sitemap><loc>https://e.com/2.xml</loc></sitemap></sitemapindex>";
    std::fs::write(dir.path().join("i.xml"), index).unwrap();
    for file in ["s.xml", "i.xml"] {
        let (code, json, err) = run(&["read", file], dir.path());
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = run(&["read", file, "--format", "parquet", "--out", "e.parquet"], dir.path());
        assert_eq!((code, out.as_str()), (0, ""), "{err}");
        let (rows, groups, names) = parquet_rows(&dir.path().join("e.parquet"));
        assert_eq!(names[..2], ["kind", "loc"]);
        assert_eq!(groups, 1);
        let want = jsonl(&json);
        assert_eq!(rows.len(), want.len());
        for (got, want) in rows.iter().zip(&want) {
            assert_eq!(got, want);
        }
    }
}

#[test]
fn discover_parquet_is_the_jsonl_row_for_row() {
    let base = serve(50);
    let dir = tempfile::tempdir().unwrap();
    let (code, json, err) = run(&["discover", &base, "-q"], dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["discover", &base, "-q", "--format", "parquet", "--out", "u.parquet"], dir.path());
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (rows, _, names) = parquet_rows(&dir.path().join("u.parquet"));
    assert_eq!(names.last().map(String::as_str), Some("sitemap"), "no site column for one site");
    let want = jsonl(&json);
    assert_eq!(want.len(), 70);
    assert!(want.iter().any(|r| r["videos"][0]["tags"] == serde_json::json!(["a", "b"])), "{:?}", want[0]);
    // Children are read concurrently: the order of their rows may differ from one run to the next.
    assert_eq!(sorted(rows), sorted(want));
}

/// Two sites, one with 150,000 URLs: more than one row group (written while the rows come),
/// and every row of both sites, tagged with its site, as the JSONL gives them.
#[test]
fn discover_sites_parquet_streams_row_groups() {
    let (big, small) = (serve(150_000), serve(5));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), format!("{big}\n# a comment\n{small}\n")).unwrap();
    let (code, json, err) = run(&["discover", "--sites", "sites.txt", "-q"], dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(
        &[
            "discover",
            "--sites",
            "sites.txt",
            "-q",
            "--format",
            "parquet",
            "--out",
            "u.parquet",
            "--summary",
            "s.jsonl",
        ],
        dir.path(),
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (rows, groups, names) = parquet_rows(&dir.path().join("u.parquet"));
    assert_eq!(names[names.len() - 2..], ["sitemap", "site"]);
    assert!(groups >= 2, "{groups} row group(s) for {} rows", rows.len());
    let want = jsonl(&json);
    assert_eq!(want.len(), 150_020 + 25);
    assert_eq!(sorted(rows), sorted(want));
    let summary = std::fs::read_to_string(dir.path().join("s.jsonl")).unwrap();
    assert_eq!(summary.lines().count(), 2, "{summary}");
}

#[test]
fn parquet_refusals_say_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.xml"), urlset("https://e.com", 0, 2)).unwrap();
    std::fs::write(dir.path().join("sites.txt"), "https://e.com/\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["read", "s.xml", "--format", "parquet"], "needs --out FILE"),
        (&["discover", "https://e.com/", "--format", "parquet"], "needs --out FILE"),
        (&["discover", "https://e.com/", "--format", "parquet", "--out", "x", "--sitemaps-only"], "URL rows"),
        (
            &["discover", "--sites", "sites.txt", "--format", "parquet", "--out", "x", "--state", "st.db"],
            "--state with --sites",
        ),
    ];
    for (args, words) in cases {
        let (code, _, err) = run(args, dir.path());
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(words), "{args:?}: {err}");
    }
    assert!(!dir.path().join("x").exists(), "nothing written before the refusal");
}

/// A file that breaks after some entries: the Parquet holds those before the fault, like the
/// JSONL, and the exit status says the read failed.
#[test]
fn read_parquet_of_a_truncated_file_keeps_the_entries_before_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let full = urlset("https://e.com", 0, 10);
    std::fs::write(dir.path().join("t.xml"), &full[..full.len() / 2]).unwrap();
    let (code, json, _) = run(&["read", "t.xml", "-q"], dir.path());
    assert_eq!(code, 1);
    let (code, _, _) = run(&["read", "t.xml", "-q", "--format", "parquet", "--out", "t.parquet"], dir.path());
    assert_eq!(code, 1);
    let (rows, _, _) = parquet_rows(&dir.path().join("t.parquet"));
    assert!(!rows.is_empty());
    assert_eq!(rows, jsonl(&json));
}
