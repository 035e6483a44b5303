//! Crash safety: SIGKILL while workers hold leases; after a restart every submitted sitemap is
//! there and downloaded, the killed jobs included. And two processes on one PostgreSQL
//! database share the work: every due sitemap is fetched exactly once.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::process::{Server, Site, submit, unix_now, wait_downloaded};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_while_leased_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = mapwright_store::open(None, &data).await.unwrap();
    let site = Site::start().await;
    site.hold.store(true, Ordering::SeqCst);
    let (actor, sitemaps) = submit(store.as_ref(), &site, 12).await;

    // Workers lease four at a time: twelve sitemaps keep three workers busy, each on its
    // first job, held open by the site. Leases of 10 s outlive the checks below. The caps per
    // origin and per user (2 by default) are raised so that one test site can fill them.
    let args = [
        "--allow-private-networks",
        "--workers",
        "4",
        "--jobs-per-origin",
        "4",
        "--jobs-per-user",
        "3",
        "--poll-interval",
        "100ms",
    ];
    let data_arg = data.to_str().unwrap();
    let first_args = [&args[..], &["--data-dir", data_arg, "--lease-seconds", "10"]].concat();
    let first = Server::start(&first_args, &dir.path().join("first.log"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while site.in_flight.load(Ordering::SeqCst) < 3 {
        assert!(Instant::now() < deadline, "workers never fetched: {}", first.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Requests are in flight: their leases (and the rest of each batch) are held. Kill
    // without warning.
    drop(first);
    let held: Vec<String> = site.paths_hit().into_keys().collect();
    assert!(held.len() >= 3, "{held:?}");
    let depth = store.queue_depth(unix_now()).await.unwrap();
    assert!(depth < 12, "the killed process's leases are still in the table: {depth} due");
    for s in &sitemaps {
        let downloads = store.list_downloads(actor, s.id, 10).await.unwrap();
        assert!(downloads.is_empty(), "nothing was downloaded before the kill: {downloads:?}");
    }

    site.hold.store(false, Ordering::SeqCst);
    let second_args = [&args[..], &["--data-dir", data_arg, "--lease-seconds", "2"]].concat();
    let second = Server::start(&second_args, &dir.path().join("second.log"));
    let counts = wait_downloaded(store.as_ref(), actor, &sitemaps, 120).await;
    assert!(counts.iter().all(|&c| c >= 1), "{counts:?}");
    let listed = store.list_sitemaps(actor, sitemaps[0].site_id).await.unwrap();
    assert_eq!(listed.len(), 12, "nothing submitted was lost");
    assert!(listed.iter().all(|s| s.status.as_deref() == Some("ok")), "{listed:?}");
    for path in &held {
        assert!(site.hits(path) >= 2, "{path}: the killed job ran again");
    }
    assert!(second.terminate(), "the restarted server stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_postgres_fetch_each_sitemap_once() {
    let Some(pg) = mapwright_store::testing::PgDatabase::create("mapwright_test_serve").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(Some(&pg.url), dir.path()).await.unwrap();
    let site = Site::start().await;
    let (actor, sitemaps) = submit(store.as_ref(), &site, 40).await;

    let args = ["--allow-private-networks", "--workers", "4", "--poll-interval", "100ms", "--database", &pg.url];
    let a = Server::start(&args, &dir.path().join("a.log"));
    let b = Server::start(&args, &dir.path().join("b.log"));
    let counts = wait_downloaded(store.as_ref(), actor, &sitemaps, 120).await;
    assert!(counts.iter().all(|&c| c == 1), "each sitemap downloaded once: {counts:?}");
    for n in 0..40 {
        assert_eq!(site.hits(&format!("/s{n}.xml")), 1, "/s{n}.xml requested exactly once");
    }
    let fetched = |log: String| log.matches("fetched").count();
    let (by_a, by_b) = (fetched(a.log_text()), fetched(b.log_text()));
    assert_eq!(by_a + by_b, 40, "a: {by_a}, b: {by_b}");
    assert!(a.terminate() && b.terminate(), "both stop cleanly");
    store.close().await;
}
