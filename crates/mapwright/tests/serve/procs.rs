//! Many processes, one service (issue 20, item 4): web processes (`--workers 0`) and worker
//! processes (`--no-http`) of the real binary on one PostgreSQL database. A sitemap is never
//! fetched by two processes at once, a worker killed with SIGKILL mid-download leaves its job to
//! another once the lease expires, the per-user cap and the owners' turns hold across
//! processes, and a submission to a web process wakes a worker process at once. On SQLite one
//! process serves: a second is refused.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use mapwright_store::{Actor, Sitemap, Source, Store};

use super::process::{Server, unix_now};

/// Starts `mapwright serve ARGS` with the scheduler's debug lines (which worker leased what),
/// and waits until its log shows `ready`.
fn start(args: &[&str], log: &Path, ready: &str) -> Server {
    Server::spawn(
        args,
        log,
        "info,mapwright_server::jobs::reads=debug,mapwright_server::jobs::recheck=debug,mapwright_server::jobs::retention=debug",
        ready,
    )
}

/// A site whose every `/NAME.xml` is a sitemap of one URL, answered after `delay_ms`, or held
/// while its name is in `held`. It counts requests per path, in flight per path and for the
/// whole origin (and the most of each seen at once), and appends every sitemap request's URL
/// to `arrivals`, which sites may share to see the order across origins.
#[derive(Clone)]
struct Site {
    origin: String,
    delay_ms: Arc<AtomicU64>,
    held: Arc<Mutex<Vec<String>>>,
    holding: Arc<AtomicBool>,
    hits: Arc<Mutex<HashMap<String, u32>>>,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
    most_in_flight: Arc<Mutex<HashMap<String, usize>>>,
    origin_in_flight: Arc<AtomicUsize>,
    origin_most: Arc<AtomicUsize>,
    arrivals: Arc<Mutex<Vec<String>>>,
}

impl Site {
    async fn start(arrivals: Arc<Mutex<Vec<String>>>) -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = Site {
            origin: format!("http://{}", listener.local_addr().unwrap()),
            delay_ms: Arc::default(),
            held: Arc::default(),
            holding: Arc::default(),
            hits: Arc::default(),
            in_flight: Arc::default(),
            most_in_flight: Arc::default(),
            origin_in_flight: Arc::default(),
            origin_most: Arc::default(),
            arrivals,
        };
        let router = Router::new().fallback(answer).with_state(site.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        site
    }

    fn url(&self, name: &str) -> String {
        format!("{}/{name}.xml", self.origin)
    }

    fn hits(&self, name: &str) -> u32 {
        self.hits.lock().unwrap().get(&format!("/{name}.xml")).copied().unwrap_or(0)
    }

    fn in_flight(&self, name: &str) -> usize {
        self.in_flight.lock().unwrap().get(&format!("/{name}.xml")).copied().unwrap_or(0)
    }
}

/// Counts a request in flight until dropped: a request whose client went away (the killed
/// worker's) is counted out when the server drops its handler, or when it answers.
struct InFlight {
    site: Site,
    path: String,
}

impl InFlight {
    fn new(site: &Site, path: &str) -> InFlight {
        let mut in_flight = site.in_flight.lock().unwrap();
        let now = in_flight.entry(path.to_owned()).or_default();
        *now += 1;
        let mut most = site.most_in_flight.lock().unwrap();
        let seen = most.entry(path.to_owned()).or_default();
        *seen = (*seen).max(*now);
        let origin_now = site.origin_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        site.origin_most.fetch_max(origin_now, Ordering::SeqCst);
        InFlight { site: site.clone(), path: path.to_owned() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.site.in_flight.lock().unwrap().entry(self.path.clone()).or_default() -= 1;
        self.site.origin_in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn answer(State(site): State<Site>, uri: Uri) -> (StatusCode, String) {
    let path = uri.path().to_owned();
    let Some(name) = path.strip_prefix('/').and_then(|p| p.strip_suffix(".xml")).map(str::to_owned) else {
        return (StatusCode::NOT_FOUND, "not found".into());
    };
    *site.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    site.arrivals.lock().unwrap().push(format!("{}{path}", site.origin));
    let _counted = InFlight::new(&site, &path);
    while site.holding.load(Ordering::SeqCst) && site.held.lock().unwrap().contains(&name) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(site.delay_ms.load(Ordering::SeqCst))).await;
    let body = format!(
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{}/{name}</loc></url></urlset>",
        site.origin
    );
    (StatusCode::OK, body)
}

/// A user with a verified site on `site`'s origin.
async fn owner(store: &dyn Store, email: &str, site: &Site) -> (Actor, i64) {
    let now = unix_now();
    let user = store.create_user(email, "h", false, now).await.unwrap();
    let actor = Actor::from(&user);
    let record = store.create_site(actor, &site.origin, now).await.unwrap();
    store.record_verification(record.id, true, now).await.unwrap();
    (actor, record.id)
}

async fn add(store: &dyn Store, (actor, site_id): (Actor, i64), url: &str) -> Sitemap {
    store.add_sitemap(actor, site_id, url, Source::Api, unix_now()).await.unwrap()
}

/// Waits (up to `secs`) until the sitemap has `n` downloads; returns their statuses.
async fn downloads(store: &dyn Store, actor: Actor, sitemap: &Sitemap, n: usize, secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let got = store.list_downloads(actor, sitemap.id, 100).await.unwrap();
        if got.len() >= n {
            return got.into_iter().map(|d| d.status).collect();
        }
        assert!(Instant::now() < deadline, "{}: {} downloads, not {n}", sitemap.url, got.len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The pid in a worker tag (`HOST-PID-START-NANOS`, the host may hold dashes).
fn pid_of(tag: &str) -> u32 {
    let mut parts = tag.rsplitn(4, '-');
    let (_nanos, _start) = (parts.next(), parts.next());
    parts.next().and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no pid in {tag:?}"))
}

/// The tag of the worker whose log says it leased `url`.
fn leased_by(log: &str, url: &str) -> Option<String> {
    log.lines().filter(|l| l.contains(" leased") && l.contains(url)).find_map(|l| {
        let (_, rest) = l.split_once("worker=")?;
        Some(rest.split_whitespace().next()?.trim_matches('"').to_owned())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_web_two_workers_share_the_queue_survive_a_kill_and_stay_fair() {
    let Some(pg) = mapwright_store::testing::PgDatabase::create("mapwright_test_procs").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(Some(&pg.url), dir.path()).await.unwrap();
    let arrivals: Arc<Mutex<Vec<String>>> = Arc::default();
    let (site_a, site_b) = (Site::start(arrivals.clone()).await, Site::start(arrivals.clone()).await);
    // User A's twelve slow sitemaps, then user B's one, all due now: first come, first served
    // would fetch B's last.
    site_a.delay_ms.store(400, Ordering::SeqCst);
    let a = owner(store.as_ref(), "a@example.com", &site_a).await;
    let b = owner(store.as_ref(), "b@example.com", &site_b).await;
    let mut a_maps = Vec::new();
    for n in 0..12 {
        a_maps.push(add(store.as_ref(), a, &site_a.url(&format!("a{n}"))).await);
    }
    let b_map = add(store.as_ref(), b, &site_b.url("b0")).await;

    // Two worker processes of three workers each: six slots, but a user holds two leases at
    // most in all processes together (jobs per origin is above it, so the user's cap binds):
    // while one process holds A's two, the other, polling every 200 ms with free slots, must
    // be refused A's jobs. Counted per process, A would have had up to six in flight. Leases
    // of 4 s: a killed worker's job is due again soon.
    let worker_args = [
        "--no-http",
        "--database",
        &pg.url,
        "--allow-private-networks",
        "--workers",
        "3",
        "--jobs-per-user",
        "2",
        "--jobs-per-origin",
        "4",
        "--lease-seconds",
        "4",
        "--poll-interval",
        "200ms",
    ];
    let web_args = ["--listen", "127.0.0.1:0", "--database", &pg.url, "--workers", "0"];
    let web = start(&web_args, &dir.path().join("web.log"), "listening on http://");
    let w1 = start(&worker_args, &dir.path().join("w1.log"), "serving no HTTP");
    let w2 = start(&worker_args, &dir.path().join("w2.log"), "serving no HTTP");
    assert!(!web.log_text().contains("listening for wake-ups"), "a web process runs no workers");

    for sitemap in a_maps.iter() {
        assert_eq!(downloads(store.as_ref(), a.0, sitemap, 1, 120).await, ["ok"], "{}", sitemap.url);
    }
    assert_eq!(downloads(store.as_ref(), b.0, &b_map, 1, 120).await, ["ok"]);
    for n in 0..12 {
        assert_eq!(site_a.hits(&format!("a{n}")), 1, "a{n} fetched once");
    }
    assert_eq!(site_b.hits("b0"), 1);
    let order = arrivals.lock().unwrap().clone();
    let b_turn = order.iter().position(|u| *u == b_map.url).unwrap();
    assert!(b_turn <= 3, "B's one sitemap waited behind A's many: request {b_turn} of {order:?}");
    let a_most = site_a.origin_most.load(Ordering::SeqCst);
    assert!(a_most <= 2, "user A had {a_most} downloads in flight at once across processes, past its cap of 2");
    let fetched = |s: &Server| s.log_text().matches(" fetched").count();
    // A job's log line follows its record (after the read's alerts and webhooks).
    let deadline = Instant::now() + Duration::from_secs(30);
    while fetched(&w1) + fetched(&w2) < 13 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(fetched(&w1) + fetched(&w2), 13, "w1: {}, w2: {}", w1.log_text(), w2.log_text());
    assert_eq!(fetched(&web), 0, "the web process fetched: {}", web.log_text());

    // A download held open by the site; the worker holding it is killed without warning.
    site_b.held.lock().unwrap().push("victim".into());
    site_b.holding.store(true, Ordering::SeqCst);
    let victim = add(store.as_ref(), b, &site_b.url("victim")).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while site_b.in_flight("victim") == 0 {
        assert!(Instant::now() < deadline, "no worker fetched the victim");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let holder = [&w1, &w2].iter().find_map(|w| leased_by(&w.log_text(), &victim.url)).expect("a worker leased it");
    let (mut doomed, survivor) = if pid_of(&holder) == w1.child.id() { (w1, w2) } else { (w2, w1) };
    assert_eq!(pid_of(&holder), doomed.child.id(), "the victim's lease names a worker process");
    doomed.child.kill().unwrap(); // SIGKILL
    doomed.child.wait().unwrap();
    site_b.holding.store(false, Ordering::SeqCst);
    assert!(store.list_downloads(b.0, victim.id, 10).await.unwrap().is_empty(), "the killed download recorded nothing");
    // The lease expires after 4 s; the survivor's poll finds the job due again.
    assert_eq!(downloads(store.as_ref(), b.0, &victim, 1, 60).await, ["ok"]);
    assert_eq!(site_b.hits("victim"), 2, "fetched by the killed worker, then by the survivor");
    // Its log line comes once the job returns (after the record, the read's alerts and webhooks).
    let logged = || survivor.log_text().lines().any(|l| l.contains(" fetched") && l.contains(&victim.url));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !logged() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(logged(), "{}", survivor.log_text());

    // No sitemap was ever fetched by two processes at once.
    for site in [&site_a, &site_b] {
        for (path, most) in site.most_in_flight.lock().unwrap().iter() {
            assert_eq!(*most, 1, "{}{path} was fetched {most} times at once", site.origin);
        }
    }
    let health = super::http(&web.addr, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(survivor.terminate() && web.terminate(), "the others stop cleanly");
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_to_a_web_process_wakes_a_worker_process_at_once() {
    let Some(pg) = mapwright_store::testing::PgDatabase::create("mapwright_test_procs").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(Some(&pg.url), dir.path()).await.unwrap();
    let site = Site::start(Arc::default()).await;
    let user = owner(store.as_ref(), "w@example.com", &site).await;
    let sitemap = add(store.as_ref(), user, &site.url("w")).await;

    // The worker looks for work once at start and then only when woken: it polls once an hour.
    let worker_args = [
        "--no-http",
        "--database",
        &pg.url,
        "--allow-private-networks",
        "--poll-interval",
        "1h",
        "--min-fetch-interval",
        "0",
    ];
    let worker = start(&worker_args, &dir.path().join("worker.log"), "listening for wake-ups");
    let web_args = ["--listen", "127.0.0.1:0", "--database", &pg.url, "--workers", "0"];
    let web = start(&web_args, &dir.path().join("web.log"), "listening on http://");
    assert_eq!(downloads(store.as_ref(), user.0, &sitemap, 1, 60).await, ["ok"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !worker.log_text().contains(" fetched") {
        assert!(Instant::now() < deadline, "{}", worker.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The ping brings the sitemap's next fetch forward in the web process, which has no
    // workers: only the wake-up through PostgreSQL gets the worker to it before its next poll.
    let ping = super::http(
        &web.addr,
        &format!("GET /ping?sitemap={} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", sitemap.url),
    );
    assert!(ping.starts_with("HTTP/1.1 200"), "{ping}");
    assert_eq!(downloads(store.as_ref(), user.0, &sitemap, 2, 60).await.len(), 2);
    assert_eq!(site.hits("w"), 2);
    assert!(!web.log_text().contains(" fetched"), "the web process fetched: {}", web.log_text());
    assert!(worker.terminate() && web.terminate());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_one_sqlite_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_arg = data.to_str().unwrap();
    let first = start(&["--listen", "127.0.0.1:0", "--data-dir", data_arg], &dir.path().join("first.log"), "listening");
    let second = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["serve", "--no-http", "--data-dir", data_arg])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second server started: {stderr}");
    assert!(stderr.contains("one process serves an SQLite database") && stderr.contains("PostgreSQL"), "{stderr}");
    // The operator's commands still run beside the server.
    let made = super::super::mapwright(
        &["serve", "--data-dir", data_arg, "user", "create", "op@example.com"],
        b"a long passphrase\n",
        dir.path(),
    );
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert!(first.terminate());
    // Once the first has stopped, a server starts again.
    let again = start(&["--listen", "127.0.0.1:0", "--data-dir", data_arg], &dir.path().join("again.log"), "listening");
    assert!(again.terminate());
}
