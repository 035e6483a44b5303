//! `mapwright generate crawl` run as a user runs it, against a site served on 127.0.0.1:0:
//! the sitemap and the report of a small site, and a crawl stopped by Ctrl-C, then killed,
//! then completed from its `--state`.

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mapwright_core::ReadOptions;
use mapwright_core::read::read_all;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Hits = Arc<Mutex<BTreeMap<String, u32>>>;

/// Pages `/p0`..`/p{n-1}` in a tree, plus a few special pages; every request counted.
fn answer(path: &str, n: u32) -> Response {
    let html = |b: String| ([("content-type", "text/html")], b).into_response();
    match path {
        "/robots.txt" => "User-agent: *\nDisallow: /admin/\n".into_response(),
        "/" => html(
            "<html><head><link rel=alternate hreflang=de href=/de/></head><body>\
             <img src=/logo.png><a href=/p0>p0</a> <a href=/admin/>admin</a> <a href=/gone>gone</a> \
             <a href=/hidden>hidden</a> <a href=/copy>copy</a></body></html>"
                .into(),
        ),
        "/de/" => html("<a href=/>en</a>".into()),
        "/hidden" => html("<meta name=robots content=noindex><a href=/p1>p1</a>".into()),
        "/copy" => html("<link rel=canonical href=/p0>".into()),
        _ => match path.strip_prefix("/p").and_then(|i| i.parse::<u32>().ok()).filter(|i| *i < n) {
            Some(i) => {
                let links: String = [2 * i + 1, 2 * i + 2]
                    .iter()
                    .filter(|c| **c < n)
                    .map(|c| format!("<a href=\"/p{c}\">p{c}</a>"))
                    .collect();
                html(format!("<html><body>{links} <a href=\"/\">home</a></body></html>"))
            }
            None => (StatusCode::NOT_FOUND, "not found").into_response(),
        },
    }
}

/// Starts the site on its own runtime thread; returns its base URL and the request counts.
fn serve(n: u32, delay: Duration) -> (String, Hits) {
    let hits: Hits = Arc::default();
    let h = hits.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port())).unwrap();
            let app = axum::Router::new().fallback(move |req: Request| {
                let h = h.clone();
                async move {
                    let path = req.uri().path().to_string();
                    *h.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
                    tokio::time::sleep(delay).await;
                    answer(&path, n)
                }
            });
            axum::serve(listener, app).await.unwrap();
        });
    });
    (rx.recv().unwrap(), hits)
}

fn locs(dir: &Path) -> BTreeSet<String> {
    let f = std::fs::File::open(dir.join("sitemap.xml")).unwrap();
    let (entries, _, err) = read_all(std::io::BufReader::new(f), ReadOptions::default());
    assert!(err.is_none(), "{err:?}");
    entries.iter().map(|e| e.loc().to_string()).collect()
}

#[test]
fn crawl_writes_the_sitemap_and_the_report() {
    let (base, _) = serve(4, Duration::ZERO);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let report = tmp.path().join("report.json");
    let o = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["generate", "crawl", &format!("{base}/"), "--out"])
        .arg(&out)
        .args(["--images", "--alternates", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{base}/sitemap.xml\n"));
    let want: BTreeSet<String> =
        ["/", "/de/", "/p0", "/p1", "/p2", "/p3"].iter().map(|p| format!("{base}{p}")).collect();
    assert_eq!(locs(&out), want);
    let xml = std::fs::read_to_string(out.join("sitemap.xml")).unwrap();
    assert!(xml.contains(&format!("<image:loc>{base}/logo.png</image:loc>")), "{xml}");
    assert!(xml.contains(&format!("hreflang=\"de\" href=\"{base}/de/\"")), "{xml}");

    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["pages_fetched"], 9, "{r}");
    assert_eq!(r["listed"], 6);
    assert_eq!(r["stopped"], serde_json::Value::Null);
    let left = &r["left_out"];
    assert_eq!(left["robots"], serde_json::json!([{ "url": format!("{base}/admin/") }]));
    assert_eq!(left["noindex"], serde_json::json!([{ "url": format!("{base}/hidden") }]));
    assert_eq!(
        left["canonical"],
        serde_json::json!([{ "url": format!("{base}/copy"), "detail": format!("{base}/p0") }])
    );
    assert_eq!(left["status"], serde_json::json!([{ "url": format!("{base}/gone"), "detail": "status 404" }]));
    assert_eq!(
        r["broken"],
        serde_json::json!([{ "url": format!("{base}/gone"), "status": 404, "error": "status 404",
            "linked_from": [format!("{base}/")], "linking_pages": 1 }])
    );
    assert!(stderr.contains("broken links: 1"), "{stderr}");
}

fn state_lines(dir: &Path) -> Vec<String> {
    let s = std::fs::read_to_string(dir.join("crawl.jsonl")).unwrap_or_default();
    s.lines()
        .skip(1)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["url"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Starts a crawl, waits until its state holds `pages` pages, then sends `signal`.
fn crawl_until(base: &str, tmp: &Path, pages: usize, signal: &str) -> std::process::ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["generate", "crawl", &format!("{base}/"), "--quiet", "--concurrency", "2", "--out"])
        .arg(tmp.join("out"))
        .arg("--state")
        .arg(tmp.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while state_lines(&tmp.join("state")).len() < pages {
        assert!(Instant::now() < deadline, "the crawl made no progress");
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ok = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
    child.wait().unwrap()
}

#[test]
fn ctrl_c_then_a_crash_then_the_crawl_completes_from_its_state() {
    // Slow pages, so the crawl is still running when it is stopped.
    let (base, hits) = serve(60, Duration::from_millis(40));
    let tmp = tempfile::tempdir().unwrap();

    let status = crawl_until(&base, tmp.path(), 10, "-INT");
    assert_eq!(status.code(), Some(130), "Ctrl-C exits with 130");
    assert!(!tmp.path().join("out/sitemap.xml").exists(), "no partial sitemap");
    let after_int = state_lines(&tmp.path().join("state")).len();

    let status = crawl_until(&base, tmp.path(), after_int + 10, "-KILL");
    assert_eq!(status.code(), None, "killed");
    let finished: Vec<String> = state_lines(&tmp.path().join("state"));
    assert!(finished.len() >= after_int + 10);
    let hits_before = hits.lock().unwrap().clone();

    let o = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["generate", "crawl", &format!("{base}/"), "--quiet", "--out"])
        .arg(tmp.path().join("out"))
        .arg("--state")
        .arg(tmp.path().join("state"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut want: BTreeSet<String> = (0..60).map(|i| format!("{base}/p{i}")).collect();
    want.insert(format!("{base}/"));
    want.insert(format!("{base}/de/"));
    assert_eq!(locs(&tmp.path().join("out")), want);
    // A page finished before an interruption is never fetched again (one aborted in flight
    // is); the state is gone.
    let hits = hits.lock().unwrap().clone();
    for (i, url) in finished.iter().enumerate() {
        let path = url.strip_prefix(&base).unwrap();
        let want = if i < after_int { Some(&1) } else { hits_before.get(path) };
        assert_eq!(hits.get(path), want, "{path} fetched again: {hits:?}");
    }
    assert!(!tmp.path().join("state/crawl.jsonl").exists());
}
