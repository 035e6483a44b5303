//! A `mapwright serve` process (log in a file, address read from it) and a test site on
//! 127.0.0.1 whose sitemap answers can be held open, so workers hold their leases.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::Uri;

pub struct Server {
    pub child: Child,
    pub addr: String,
    pub log: PathBuf,
}

impl Server {
    /// Starts `mapwright serve --listen 127.0.0.1:0 ARGS`, logging to `log`, and waits until it
    /// listens.
    pub fn start(args: &[&str], log: &Path) -> Server {
        let args: Vec<&str> = ["--listen", "127.0.0.1:0"].into_iter().chain(args.iter().copied()).collect();
        Server::spawn(&args, log, "info", "listening on http://")
    }

    /// Starts `mapwright serve ARGS` with `RUST_LOG=rust_log`, logging to `log`, and waits until
    /// its log shows `ready` (the address is read from the log when it listens at all).
    pub fn spawn(args: &[&str], log: &Path, rust_log: &str, ready: &str) -> Server {
        let file = std::fs::File::create(log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
            .arg("serve")
            .args(args)
            .env("RUST_LOG", rust_log)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap();
        let mut server = Server { child, addr: String::new(), log: log.to_owned() };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = server.log_text();
            if text.contains(ready) {
                if let Some((_, rest)) = text.split_once("listening on http://") {
                    server.addr = rest.split_whitespace().next().unwrap().to_owned();
                }
                return server;
            }
            assert!(server.child.try_wait().unwrap().is_none(), "serve exited: {text}");
            assert!(Instant::now() < deadline, "serve did not start: {text}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then waits; returns whether it exited successfully.
    pub fn terminate(mut self) -> bool {
        let sent = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        self.child.wait().unwrap().success()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A site serving `/s<N>.xml` (one URL each); answers are held while `hold` is set.
#[derive(Clone, Default)]
pub struct Site {
    pub origin: String,
    pub hold: Arc<AtomicBool>,
    pub in_flight: Arc<AtomicUsize>,
    hits: Arc<Mutex<HashMap<String, u32>>>,
}

impl Site {
    pub async fn start() -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = Site { origin: format!("http://{}", listener.local_addr().unwrap()), ..Site::default() };
        let router = Router::new().fallback(answer).with_state(site.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        site
    }

    pub fn hits(&self, path: &str) -> u32 {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    pub fn paths_hit(&self) -> HashMap<String, u32> {
        self.hits.lock().unwrap().clone()
    }
}

async fn answer(State(site): State<Site>, uri: Uri) -> (axum::http::StatusCode, String) {
    let path = uri.path().to_owned();
    *site.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    site.in_flight.fetch_add(1, Ordering::SeqCst);
    while site.hold.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    site.in_flight.fetch_sub(1, Ordering::SeqCst);
    match path.strip_prefix("/s").and_then(|p| p.strip_suffix(".xml")) {
        Some(n) => (
            axum::http::StatusCode::OK,
            format!(
                "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{}/page{n}</loc></url></urlset>",
                site.origin
            ),
        ),
        None => (axum::http::StatusCode::NOT_FOUND, "not found".into()),
    }
}

/// A verified site of a new user with `count` sitemaps `/s<N>.xml`, all due now.
pub async fn submit(
    store: &dyn mapwright_store::Store,
    site: &Site,
    count: usize,
) -> (mapwright_store::Actor, Vec<mapwright_store::Sitemap>) {
    let now = unix_now();
    let user = store.create_user("ops@example.com", "h", false, now).await.unwrap();
    let actor = mapwright_store::Actor::from(&user);
    let record = store.create_site(actor, &site.origin, now).await.unwrap();
    store.record_verification(record.id, true, now).await.unwrap();
    let mut sitemaps = Vec::new();
    for n in 0..count {
        let url = format!("{}/s{n}.xml", site.origin);
        sitemaps.push(store.add_sitemap(actor, record.id, &url, mapwright_store::Source::Api, now).await.unwrap());
    }
    (actor, sitemaps)
}

/// Waits (up to `secs`) until every sitemap has at least one download; returns their counts.
pub async fn wait_downloaded(
    store: &dyn mapwright_store::Store,
    actor: mapwright_store::Actor,
    sitemaps: &[mapwright_store::Sitemap],
    secs: u64,
) -> Vec<usize> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let mut counts = Vec::new();
        for s in sitemaps {
            counts.push(store.list_downloads(actor, s.id, 100).await.unwrap().len());
        }
        if counts.iter().all(|&c| c > 0) {
            return counts;
        }
        assert!(Instant::now() < deadline, "not all downloaded: {counts:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}
