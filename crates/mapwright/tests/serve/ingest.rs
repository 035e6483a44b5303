//! A read is all or nothing: `kill -9` of `mapwright serve` in the middle of a big sitemap's
//! download (its URLs half staged) leaves the URL set of the previous read exactly as it was,
//! row by row, on SQLite and on PostgreSQL; the next process reads the sitemap whole.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use mapwright_store::testing::{all_url_rows, url_set};
use mapwright_store::{Actor, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::process::{Server, unix_now};

// Alike on purpose: named numbers, one a line (mapwright-server's console/svg.rs's constants pair
// with these by shape alone).
/// The first version of the sitemap: 1,000 URLs.
const FIRST: usize = 1_000;
/// The second: 50,000 URLs, of which the stalled answer sends 30,000 and then holds.
const SECOND: usize = 50_000;
const SENT_BEFORE_STALL: usize = 30_000;

/// What `/big.xml` answers.
const FIRST_VERSION: u8 = 0;
const STALLED: u8 = 1;
const SECOND_VERSION: u8 = 2;

/// A site on 127.0.0.1 whose `/big.xml` is the first version, the second one stalled after
/// 30,000 URLs (the connection held open), or the second one whole.
#[derive(Clone)]
struct BigSite {
    origin: String,
    mode: Arc<AtomicU8>,
    stalled: Arc<AtomicBool>,
}

impl BigSite {
    async fn start() -> BigSite {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = BigSite {
            origin: format!("http://{}", listener.local_addr().unwrap()),
            mode: Arc::new(AtomicU8::new(FIRST_VERSION)),
            stalled: Arc::new(AtomicBool::new(false)),
        };
        let serving = site.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serving.clone().answer(stream));
            }
        });
        site
    }

    async fn answer(self, mut stream: tokio::net::TcpStream) {
        let mut request = Vec::new();
        let mut buf = [0_u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let head = String::from_utf8_lossy(&request);
        if !head.starts_with("GET /big.xml ") {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
            return;
        }
        let mode = self.mode.load(Ordering::SeqCst);
        let _ =
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nConnection: close\r\n\r\n").await;
        let mut body =
            String::from("<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
        let (prefix, count) = match mode {
            FIRST_VERSION => ("a", FIRST),
            STALLED => ("b", SENT_BEFORE_STALL),
            _ => ("b", SECOND),
        };
        for i in 0..count {
            body.push_str(&format!(
                "<url><loc>{}/{prefix}{i}</loc><lastmod>2024-0{}-01</lastmod></url>\n",
                self.origin,
                1 + mode
            ));
            if body.len() > 64 * 1024 {
                if stream.write_all(body.as_bytes()).await.is_err() {
                    return;
                }
                body.clear();
            }
        }
        if mode == STALLED {
            let _ = stream.write_all(body.as_bytes()).await;
            let _ = stream.flush().await;
            self.stalled.store(true, Ordering::SeqCst);
            // Held open until the reader is killed.
            let _ = stream.read(&mut buf).await;
            return;
        }
        body.push_str("</urlset>\n");
        let _ = stream.write_all(body.as_bytes()).await;
    }
}

/// Waits (up to `secs`) until the sitemap has `n` downloads.
async fn wait_downloads(store: &dyn Store, actor: Actor, sitemap: i64, n: usize, secs: u64, server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while store.list_downloads(actor, sitemap, 10).await.unwrap().len() < n {
        assert!(Instant::now() < deadline, "no download {n} within {secs} s: {}", server.log_text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn sigkill_mid_ingest(database: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = mapwright_store::open(database, &data).await.unwrap();
    let site = BigSite::start().await;
    let now = unix_now();
    let user = store.create_user("ops@example.com", "h", false, now).await.unwrap();
    let actor = Actor::from(&user);
    let record = store.create_site(actor, &site.origin, now).await.unwrap();
    store.record_verification(record.id, true, now).await.unwrap();
    let url = format!("{}/big.xml", site.origin);
    let sitemap = store.add_sitemap(actor, record.id, &url, mapwright_store::Source::Api, now).await.unwrap();

    let data_arg = data.to_str().unwrap().to_owned();
    let mut args = vec![
        "--allow-private-networks",
        "--workers",
        "2",
        "--poll-interval",
        "100ms",
        "--min-fetch-interval",
        "1s",
        "--data-dir",
        &data_arg,
    ];
    if let Some(url) = database {
        args.extend(["--database", url]);
    }
    // The killed process's lease expires 6 s after it took the job; its deadline (90 % of the
    // lease) comes after the kill. The next one has time to read and merge 50,000 URLs.
    let first_args = [&args[..], &["--lease-seconds", "6"]].concat();
    let second_args = [&args[..], &["--lease-seconds", "120"]].concat();
    let first = Server::start(&first_args, &dir.path().join("first.log"));
    wait_downloads(&*store, actor, sitemap.id, 1, 60, &first).await;
    let before = url_set(&*store, actor, record.id).await.unwrap();
    assert_eq!(before.len(), FIRST, "the first version read whole");

    // The second version: the worker reads 30,000 URLs (15 batches staged), then the answer
    // holds; the process is killed without warning in the middle of the download.
    site.mode.store(STALLED, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    store.resubmit_sitemap(actor, sitemap.id, unix_now()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !site.stalled.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the second version was never fetched: {}", first.log_text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Time to parse and stage what arrived.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(store.list_downloads(actor, sitemap.id, 10).await.unwrap().len(), 1, "still downloading");
    drop(first);

    let after_kill = url_set(&*store, actor, record.id).await.unwrap();
    assert_eq!(after_kill.len(), before.len(), "no URL of the killed download is visible");
    assert!(after_kill == before, "the URL set of the previous read, row by row");

    // The next process reads the second version whole once the killed lease expires.
    site.mode.store(SECOND_VERSION, Ordering::SeqCst);
    let second = Server::start(&second_args, &dir.path().join("second.log"));
    wait_downloads(&*store, actor, sitemap.id, 2, 120, &second).await;
    let downloads = store.list_downloads(actor, sitemap.id, 10).await.unwrap();
    assert_eq!(downloads[0].status, "ok", "{downloads:?}: {}", second.log_text());
    let after = all_url_rows(&*store, actor, record.id).await.unwrap();
    let live = after.iter().filter(|r| r.removed_at.is_none()).count();
    assert_eq!((after.len(), live), (FIRST + SECOND, SECOND), "{}", second.log_text());
    assert!(second.terminate(), "the second server stops cleanly");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_ingest_leaves_the_previous_urls_on_sqlite() {
    sigkill_mid_ingest(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_ingest_leaves_the_previous_urls_on_postgres() {
    let Some(pg) = mapwright_store::testing::PgDatabase::create("mapwright_test_serve").await else { return };
    sigkill_mid_ingest(Some(&pg.url)).await;
}
