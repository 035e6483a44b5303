//! `discover --sites`: many sites, each on its own loopback address (127.0.0.2, 127.0.0.3,
//! ...), served by the test: rows tagged with their site, per-site summaries, a hanging host
//! among fast ones, shards, and a run resumed after `kill -9`.

use axum::Router;
use axum::routing::get;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// Loopback addresses handed out to the tests of this module, so parallel tests never share one.
static NEXT_ADDR: AtomicU8 = AtomicU8::new(2);

/// How a test site behaves.
#[derive(Clone, Copy)]
enum Kind {
    /// robots.txt -> an index -> two children (one gzipped), `urls` URLs each.
    Fast { urls: usize, delay_ms: u64 },
    /// Every path answers 404: nothing to discover.
    Empty,
    /// Accepts connections and never answers.
    Hanging,
    /// robots.txt -> an index -> a child of `urls` URLs and a child that trickles a byte every
    /// 50 ms forever (inside every request timeout but the whole-request one); with
    /// `robots: true`, robots.txt itself trickles.
    Trickle { urls: usize, robots: bool },
    /// robots.txt answers `status` after `delay_ms` (a delay past `--timeout` is a robots.txt
    /// that does not answer); `/sitemap.xml` (with `root`) lists 5 URLs, and
    /// `/sitemap_index.xml` a child in a folder whose 5 URLs are all out of its scope.
    Robots { status: u16, delay_ms: u64, root: bool },
}

fn router(base: &str, urls: usize, delay_ms: u64) -> Router {
    let robots = format!("User-agent: *\nDisallow:\nSitemap: {base}/index.xml\n");
    let index = format!(
        "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
         <sitemap><loc>{base}/a.xml</loc></sitemap><sitemap><loc>{base}/b.xml.gz</loc></sitemap></sitemapindex>"
    );
    let urlset = |part: &str| {
        let mut s = String::from("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">");
        for i in 0..urls {
            s.push_str(&format!("<url><loc>{base}/{part}/{i}</loc></url>"));
        }
        s + "</urlset>"
    };
    let a = urlset("a");
    let b = super::gzip(urlset("b").as_bytes());
    let wait = move || tokio::time::sleep(Duration::from_millis(delay_ms));
    Router::new()
        .route("/robots.txt", get(move || async move { robots }))
        .route("/index.xml", get(move || async move { index }))
        .route(
            "/a.xml",
            get(move || async move {
                wait().await;
                a
            }),
        )
        .route(
            "/b.xml.gz",
            get(move || async move {
                wait().await;
                b
            }),
        )
}

/// A [`Kind::Robots`] site.
fn robots_router(base: &str, status: u16, delay_ms: u64, root: bool) -> Router {
    let ns = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";
    let locs = |part: &str| (0..5).map(|i| format!("<url><loc>{base}/{part}/{i}</loc></url>")).collect::<String>();
    let root_set = format!("<urlset {ns}>{}</urlset>", locs("a"));
    let index = format!("<sitemapindex {ns}><sitemap><loc>{base}/deep/s.xml</loc></sitemap></sitemapindex>");
    let deep = format!("<urlset {ns}>{}</urlset>", locs("b"));
    let robots = move || async move {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        (axum::http::StatusCode::from_u16(status).unwrap(), "User-agent: *\nDisallow:\n")
    };
    let app = Router::new()
        .route("/robots.txt", get(robots))
        .route("/sitemap_index.xml", get(move || async move { index }))
        .route("/deep/s.xml", get(move || async move { deep }));
    if root { app.route("/sitemap.xml", get(move || async move { root_set })) } else { app }
}

/// Starts one site per kind, each on its own loopback address, and returns their base URLs.
fn serve_sites(kinds: &[Kind]) -> Vec<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let kinds = kinds.to_vec();
    let first = NEXT_ADDR.fetch_add(kinds.len() as u8, Ordering::Relaxed);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let mut bases = Vec::new();
            for (i, kind) in kinds.into_iter().enumerate() {
                let ip = format!("127.0.0.{}", first + i as u8);
                let listener = tokio::net::TcpListener::bind((ip.as_str(), 0)).await.unwrap();
                let base = format!("http://{ip}:{}", listener.local_addr().unwrap().port());
                match kind {
                    Kind::Fast { urls, delay_ms } => {
                        let app = router(&base, urls, delay_ms);
                        tokio::spawn(async move { axum::serve(listener, app).await });
                    }
                    Kind::Empty => {
                        tokio::spawn(async move { axum::serve(listener, Router::new()).await });
                    }
                    Kind::Robots { status, delay_ms, root } => {
                        let app = robots_router(&base, status, delay_ms, root);
                        tokio::spawn(async move { axum::serve(listener, app).await });
                    }
                    Kind::Trickle { urls, robots } => {
                        let base = base.clone();
                        tokio::spawn(async move {
                            while let Ok((socket, _)) = listener.accept().await {
                                tokio::spawn(trickle(socket, base.clone(), urls, robots));
                            }
                        });
                    }
                    Kind::Hanging => {
                        tokio::spawn(async move {
                            let mut held = Vec::new();
                            while let Ok((socket, _)) = listener.accept().await {
                                held.push(socket); // read nothing, answer nothing
                            }
                        });
                    }
                }
                bases.push(base);
            }
            tx.send(bases).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

/// A keep-alive HTTP/1.1 connection of a [`Kind::Trickle`] site.
async fn trickle(mut sock: tokio::net::TcpStream, base: String, urls: usize, slow_robots: bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let ns = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";
        let (body, slow) = match head.split(' ').nth(1).unwrap_or("") {
            "/robots.txt" => (format!("User-agent: *\nSitemap: {base}/index.xml\n"), slow_robots),
            "/index.xml" => (
                format!(
                    "<sitemapindex {ns}><sitemap><loc>{base}/a.xml</loc></sitemap>\
                     <sitemap><loc>{base}/slow.xml</loc></sitemap></sitemapindex>"
                ),
                false,
            ),
            "/a.xml" => {
                let locs: String = (0..urls).map(|i| format!("<url><loc>{base}/a/{i}</loc></url>")).collect();
                (format!("<urlset {ns}>{locs}</urlset>"), false)
            }
            "/slow.xml" => (format!("<urlset {ns}>"), true),
            _ => (String::new(), false),
        };
        let status = if body.is_empty() { "404 Not Found" } else { "200 OK" };
        // A slow body announces far more than it sends, then sends a space every 50 ms.
        let len = if slow { 100_000_000 } else { body.len() };
        let head = format!("HTTP/1.1 {status}\r\nContent-Length: {len}\r\n\r\n{body}");
        if sock.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        if slow {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if sock.write_all(b" ").await.is_err() {
                    return; // the client gave up
                }
            }
        }
    }
}

fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mapwright")).args(args).current_dir(dir).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn jsonl(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// (site, loc) of every row, in order.
fn rows(text: &str) -> Vec<(String, String)> {
    jsonl(text).iter().map(|v| (v["site"].as_str().unwrap().into(), v["loc"].as_str().unwrap().into())).collect()
}

/// The rows a fast site with `urls` URLs per child gives.
fn expected(base: &str, urls: usize) -> BTreeSet<(String, String)> {
    let site = format!("{base}/");
    let mut want = BTreeSet::new();
    for p in ["a", "b"] {
        for i in 0..urls {
            want.insert((site.clone(), format!("{base}/{p}/{i}")));
        }
    }
    want
}

#[test]
fn many_sites_with_a_hanging_and_an_empty_one() {
    let fast = Kind::Fast { urls: 30, delay_ms: 0 };
    // 3,000 rows of about 190 bytes: past the 256 KiB a site's rows are kept in memory.
    let big = Kind::Fast { urls: 1500, delay_ms: 0 };
    let kinds = [Kind::Hanging, fast, big, Kind::Empty, fast, fast, fast];
    let bases = serve_sites(&kinds);
    let dir = tempfile::tempdir().unwrap();
    // Listed first, the hanging host takes one of the two slots until its timeouts fire.
    let list = format!("# hosts\n\n{}\n", bases.join("\n   \n"));
    std::fs::write(dir.path().join("sites.txt"), list).unwrap();
    let (code, out, err) = run(
        &["discover", "--sites", "sites.txt", "--hosts-in-flight", "2", "--timeout", "1", "--summary", "summary.jsonl"],
        dir.path(),
    );
    assert_eq!(code, 1, "two sites failed: {err}");
    let got = rows(&out);
    let fast: Vec<(&String, usize)> = bases
        .iter()
        .zip(kinds)
        .filter_map(|(b, k)| match k {
            Kind::Fast { urls, .. } => Some((b, urls)),
            _ => None,
        })
        .collect();
    let want: BTreeSet<_> = fast.iter().flat_map(|(b, n)| expected(b, *n)).collect();
    assert!(out.len() > 512 * 1024, "the big site's rows alone are past what is kept in memory");
    assert_eq!(got.len(), want.len(), "no row doubled");
    assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), want);
    // A site's rows come together.
    let mut seen = Vec::new();
    for (site, _) in &got {
        if seen.last() != Some(site) {
            assert!(!seen.contains(site), "rows of {site} are not together");
            seen.push(site.clone());
        }
    }
    let summary = jsonl(&std::fs::read_to_string(dir.path().join("summary.jsonl")).unwrap());
    assert_eq!(summary.len(), 7);
    let by_site: BTreeMap<&str, &serde_json::Value> =
        summary.iter().map(|v| (v["site"].as_str().unwrap(), v)).collect();
    for (b, n) in &fast {
        let s = by_site[format!("{b}/").as_str()];
        assert_eq!((s["ok"].as_bool(), s["ended"].as_str()), (Some(true), Some("complete")), "{s}");
        assert_eq!((s["sitemaps"].as_u64(), s["urls"].as_u64()), (Some(3), Some(2 * *n as u64)), "{s}");
        assert_eq!(s["seeds_from"], "robots.txt");
        assert!(s["bytes"].as_u64().unwrap() > 0 && s["error"].is_null(), "{s}");
    }
    let empty = by_site[format!("{}/", bases[3]).as_str()];
    assert_eq!((empty["ok"].as_bool(), empty["ended"].as_str()), (Some(false), Some("no-sitemap")), "{empty}");
    assert!(empty["error"].as_str().unwrap().contains("no sitemap found"), "{empty}");
    let hanging = by_site[format!("{}/", bases[0]).as_str()];
    assert_eq!((hanging["ok"].as_bool(), hanging["urls"].as_u64()), (Some(false), Some(0)), "{hanging}");
    assert!(hanging["error"].as_str().unwrap().contains("timed out"), "{hanging}");
    // The fast sites did not wait for it: it is the last one done.
    assert_eq!(summary.last().unwrap()["site"].as_str(), Some(format!("{}/", bases[0]).as_str()), "{summary:?}");
}

#[test]
fn shards_partition_the_list() {
    let fast = Kind::Fast { urls: 3, delay_ms: 0 };
    let bases = serve_sites(&[fast; 8]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), bases.join("\n")).unwrap();
    let whole = |extra: &[&str]| {
        let mut args = vec!["discover", "--sites", "-", "--format", "csv", "-q"];
        args.extend_from_slice(extra);
        let out = crate::mapwright(&args, bases.join("\n").as_bytes(), dir.path());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("loc,lastmod,changefreq,priority,sitemap,site"));
        lines.map(str::to_string).collect::<Vec<_>>()
    };
    let all = whole(&[]);
    assert_eq!(all.len(), 8 * 6);
    let mut union = Vec::new();
    let mut sites_per_shard = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let part = whole(&["--shard", &shard]);
        sites_per_shard.push(part.iter().map(|l| l.rsplit(',').next().unwrap().to_string()).collect::<BTreeSet<_>>());
        union.extend(part);
    }
    union.sort();
    let mut all_sorted = all.clone();
    all_sorted.sort();
    assert_eq!(union, all_sorted, "the shards together are the whole, each row once");
    for (i, a) in sites_per_shard.iter().enumerate() {
        for b in &sites_per_shard[i + 1..] {
            assert!(a.is_disjoint(b), "{a:?} {b:?}");
        }
    }
    let (code, _, err) = run(&["discover", "--sites", "sites.txt", "--shard", "0/3"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("is not K/N"), "{err}");
}

#[test]
fn a_run_killed_with_sigkill_resumes_without_losing_or_doubling_rows() {
    // Slow children, one site at a time: the kill lands with some sites done and one running.
    let slow = Kind::Fast { urls: 200, delay_ms: 150 };
    let bases = serve_sites(&[slow; 6]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), bases.join("\n")).unwrap();
    let args = [
        "discover",
        "--sites",
        "sites.txt",
        "--hosts-in-flight",
        "1",
        "--out",
        "rows.jsonl",
        "--summary",
        "summary.jsonl",
        "--state",
        "run.db",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let summary = dir.path().join("summary.jsonl");
    let lines = || std::fs::read_to_string(&summary).map(|s| s.lines().count()).unwrap_or(0);
    while lines() < 2 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done_before = lines();
    assert!(done_before < 6, "the kill came too late to test anything");

    let (code, _, err) = run(&args, dir.path());
    assert_eq!(code, 0, "{err}");
    // A kill between a site's summary line and its record in the state redoes that one site.
    let skipped: u64 = err
        .split(" skipped as done by an earlier run")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(skipped >= 1 && skipped as usize <= done_before, "{skipped} of {done_before}: {err}");
    let got = rows(&std::fs::read_to_string(dir.path().join("rows.jsonl")).unwrap());
    let want: BTreeSet<_> = bases.iter().flat_map(|b| expected(b, 200)).collect();
    assert_eq!(got.len(), want.len(), "no row lost or doubled");
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want);
    let summary = jsonl(&std::fs::read_to_string(&summary).unwrap());
    let sites: BTreeSet<&str> = summary.iter().map(|v| v["site"].as_str().unwrap()).collect();
    assert_eq!((summary.len(), sites.len()), (6, 6), "one summary line per site");

    // Run again: every site is done, nothing is fetched, the outputs stay as they are.
    let before = std::fs::read(dir.path().join("rows.jsonl")).unwrap();
    let (code, _, err) = run(&args, dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("0 sites discovered (0 failed), 0 listed again (same origin: discovered once), 6 skipped"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.path().join("rows.jsonl")).unwrap(), before);
}

#[test]
fn state_with_sites_needs_an_output_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), "example.com\n").unwrap();
    let (code, _, err) = run(&["discover", "--sites", "sites.txt", "--state", "run.db"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("--state with --sites needs --out FILE"), "{err}");
}

#[test]
fn a_site_that_trickles_ends_at_its_deadline_and_keeps_what_it_found() {
    let fast = Kind::Fast { urls: 20, delay_ms: 0 };
    let kinds = [Kind::Trickle { urls: 40, robots: false }, Kind::Trickle { urls: 40, robots: true }, fast, fast];
    let bases = serve_sites(&kinds);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), bases.join("\n")).unwrap();
    // Bytes every 50 ms: no between-bytes timeout fires, and the whole-request one (60 s) is
    // far beyond the deadline, so only the deadline can end these sites as "deadline".
    let (code, out, err) = run(
        &[
            "discover",
            "--sites",
            "sites.txt",
            "--hosts-in-flight",
            "2",
            "--site-deadline",
            "2",
            "--timeout",
            "60",
            "--summary",
            "summary.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "the cut sites are failures: {err}");
    let summary = jsonl(&std::fs::read_to_string(dir.path().join("summary.jsonl")).unwrap());
    assert_eq!(summary.len(), 4, "{summary:?}");
    let by_site: BTreeMap<&str, &serde_json::Value> =
        summary.iter().map(|v| (v["site"].as_str().unwrap(), v)).collect();
    let got = rows(&out);
    let rows_of =
        |b: &str| got.iter().filter(|(s, _)| *s == format!("{b}/")).map(|(_, l)| l.clone()).collect::<Vec<_>>();

    // Cut in a child: the other child's URLs were sent before the deadline, and stand.
    let cut = by_site[format!("{}/", bases[0]).as_str()];
    assert_eq!((cut["ok"].as_bool(), cut["ended"].as_str()), (Some(false), Some("deadline")), "{cut}");
    assert!(cut["error"].as_str().unwrap().contains("site deadline"), "{cut}");
    let cut_rows = rows_of(&bases[0]);
    assert_eq!(cut["urls"].as_u64(), Some(cut_rows.len() as u64), "the summary counts the rows written: {cut}");
    assert_eq!(cut_rows.len(), 40, "{cut}");
    assert!(cut_rows.iter().all(|l| l.starts_with(&format!("{}/a/", bases[0]))), "{cut_rows:?}");

    // Cut while robots.txt trickles: nothing found, the same reason.
    let early = by_site[format!("{}/", bases[1]).as_str()];
    assert_eq!((early["ended"].as_str(), early["urls"].as_u64()), (Some("deadline"), Some(0)), "{early}");
    assert!(rows_of(&bases[1]).is_empty());

    for b in &bases[2..] {
        let s = by_site[format!("{b}/").as_str()];
        assert_eq!((s["ended"].as_str(), s["urls"].as_u64()), (Some("complete"), Some(40)), "{s}");
        assert_eq!(rows_of(b).len(), 40);
    }
}

#[test]
fn a_site_listed_again_is_discovered_once() {
    let fast = Kind::Fast { urls: 5, delay_ms: 0 };
    let bases = serve_sites(&[fast, fast]);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (&bases[0], &bases[1]);
    // The same origin three more times: repeated, another path, the scheme in capitals with a
    // trailing slash.
    let list = format!("{a}\n{b}\n{a}\n{a}/blog/post?x=1\n{}/\n", a.replace("http://", "HTTP://"));
    std::fs::write(dir.path().join("sites.txt"), list).unwrap();
    let (code, out, err) =
        run(&["discover", "--sites", "sites.txt", "--hosts-in-flight", "4", "--summary", "summary.jsonl"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 sites discovered (0 failed), 3 listed again"), "{err}");
    let got = rows(&out);
    let want: BTreeSet<_> = expected(a, 5).into_iter().chain(expected(b, 5)).collect();
    assert_eq!(got.len(), want.len(), "each site's rows once: {err}");
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want);
    let summary = jsonl(&std::fs::read_to_string(dir.path().join("summary.jsonl")).unwrap());
    assert_eq!(summary.len(), 5, "one line per line of the list: {summary:?}");
    let ended: Vec<(&str, &str)> =
        summary.iter().map(|v| (v["site"].as_str().unwrap(), v["ended"].as_str().unwrap())).collect();
    let dups: Vec<String> = ended.iter().filter(|(_, e)| *e == "duplicate").map(|(s, _)| s.to_string()).collect();
    assert_eq!(dups, [format!("{a}/"), format!("{a}/blog/post?x=1"), format!("{a}/")], "{ended:?}");
    let complete: BTreeSet<String> =
        ended.iter().filter(|(_, e)| *e == "complete").map(|(s, _)| s.to_string()).collect();
    assert_eq!(complete, [format!("{a}/"), format!("{b}/")].into_iter().collect(), "{ended:?}");
    for v in summary.iter().filter(|v| v["ended"] == "duplicate") {
        assert_eq!((v["ok"].as_bool(), v["urls"].as_u64()), (Some(true), Some(0)), "{v}");
    }
}

#[test]
fn a_robots_txt_that_does_not_answer_is_named_in_the_summary() {
    let kinds = [
        Kind::Robots { status: 200, delay_ms: 3_000, root: true },
        Kind::Robots { status: 503, delay_ms: 0, root: true },
        Kind::Robots { status: 404, delay_ms: 0, root: true },
        Kind::Robots { status: 404, delay_ms: 0, root: false },
    ];
    let bases = serve_sites(&kinds);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sites.txt"), bases.join("\n")).unwrap();
    let (code, out, err) = run(
        &["discover", "--sites", "sites.txt", "--timeout", "1", "--retries", "0", "--summary", "s.jsonl"],
        dir.path(),
    );
    assert_eq!(code, 1, "{err}");
    let summary = jsonl(&std::fs::read_to_string(dir.path().join("s.jsonl")).unwrap());
    let by_site: BTreeMap<&str, &serde_json::Value> =
        summary.iter().map(|v| (v["site"].as_str().unwrap(), v)).collect();
    let line = |i: usize| by_site[format!("{}/", bases[i]).as_str()];
    // Slower than --timeout, and 503: unreachable, so nothing fetched (RFC 9309).
    for (i, cause) in [(0, "timed out"), (1, "503")] {
        let s = line(i);
        assert_eq!(
            (s["ok"].as_bool(), s["ended"].as_str(), s["robots"].as_str()),
            (Some(false), Some("robots-unreachable"), Some("unreachable")),
            "{s}"
        );
        let error = s["error"].as_str().unwrap();
        assert!(error.contains(cause) && error.contains("complete disallow"), "{s}");
        assert_eq!((s["sitemaps"].as_u64(), s["urls"].as_u64()), (Some(0), Some(0)), "{s}");
    }
    // 404: no restriction, the usual paths read; said, with what it meant for scope.
    let s = line(2);
    assert_eq!(
        (s["ok"].as_bool(), s["ended"].as_str(), s["robots"].as_str()),
        (Some(true), Some("complete"), Some("unavailable")),
        "{s}"
    );
    assert_eq!((s["urls"].as_u64(), s["out_of_scope"].as_u64()), (Some(5), Some(5)), "{s}");
    assert!(s["robots_note"].as_str().unwrap().contains("HTTP 404"), "{s}");
    // 404 and every URL out of scope: a failure that says why, not only "no URL".
    let s = line(3);
    assert_eq!((s["ok"].as_bool(), s["ended"].as_str()), (Some(false), Some("no-urls")), "{s}");
    let error = s["error"].as_str().unwrap();
    assert!(error.contains("5 dropped as out of scope") && error.contains("HTTP 404"), "{s}");
    assert_eq!(rows(&out).len(), 5);
    assert!(err.contains("robots.txt is unreachable"), "{err}");

    // One site: the summary on standard error names it, and the exit status is 1.
    let (code, out, err) = run(&["discover", "--timeout", "1", "--retries", "0", &bases[1]], dir.path());
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("robots.txt is unreachable") && err.contains("503") && err.contains("complete disallow"),
        "{err}"
    );
    let (code, _, err) = run(&["discover", "--timeout", "1", &bases[2]], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("robots.txt answered HTTP 404 (unavailable: RFC 9309 reads that as no restriction)"), "{err}");
}
