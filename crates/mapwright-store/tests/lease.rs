//! The fetch queue: leasing, completion, release, expiry, pings.

use std::collections::HashSet;
use std::sync::Arc;

use mapwright_store::{DownloadRecord, Error, FindingRecord, IndexChild, Source, Store};

use crate::support::{T0, each_backend, each_backend_pair, each_backend_with_pool, user, verified_site};

fn ok_download(at: i64) -> DownloadRecord {
    DownloadRecord { downloaded_at: at, status: "ok".into(), http_status: Some(200), ..Default::default() }
}

/// A verified site with `n` sitemaps due at T0; returns their ids.
async fn due_sitemaps(store: &dyn Store, n: usize) -> Vec<i64> {
    let ann = user(store, "ann@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    let mut ids = Vec::new();
    for i in 0..n {
        let url = format!("https://ann.example/sitemap-{i}.xml");
        ids.push(store.add_sitemap(ann, site, &url, Source::Api, T0).await.unwrap().id);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_leasers_never_share_a_sitemap() {
    each_backend(|store| async move {
        let all = due_sitemaps(&*store, 40).await;
        let leaser = |worker: &'static str, store: Arc<dyn Store>| {
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let batch = store.lease_due_sitemaps(worker, T0 + 1, 3, 300).await.unwrap();
                    if batch.is_empty() {
                        return got;
                    }
                    assert!(batch.iter().all(|l| l.lease_expires_at == T0 + 301));
                    got.extend(batch.into_iter().map(|l| l.id));
                    tokio::task::yield_now().await;
                }
            })
        };
        let (a, b, c) = (leaser("a", store.clone()), leaser("b", store.clone()), leaser("c", store.clone()));
        let (a, b, c) = (a.await.unwrap(), b.await.unwrap(), c.await.unwrap());
        let mut seen = HashSet::new();
        for id in a.iter().chain(&b).chain(&c) {
            assert!(seen.insert(*id), "sitemap {id} leased twice");
        }
        assert_eq!(seen, all.into_iter().collect::<HashSet<_>>());
        assert_eq!(store.queue_depth(T0 + 1).await.unwrap(), 0);
    })
    .await;
}

#[tokio::test]
async fn only_due_sitemaps_of_verified_sites_are_leased() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let unverified = store.create_site(ann, "https://new.example", T0).await.unwrap();
        store.add_sitemap(ann, unverified.id, "https://new.example/s.xml", Source::Api, T0).await.unwrap();
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let later = store.add_sitemap(ann, site, "https://ann.example/later.xml", Source::Api, T0 + 100).await.unwrap();
        let removed = store.add_sitemap(ann, site, "https://ann.example/gone.xml", Source::Api, T0).await.unwrap();
        store.remove_sitemap(ann, removed.id, T0).await.unwrap();

        assert_eq!(store.queue_depth(T0).await.unwrap(), 0);
        assert!(store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap().is_empty());
        assert_eq!(store.queue_depth(T0 + 100).await.unwrap(), 1);
        let leased = store.lease_due_sitemaps("w", T0 + 100, 10, 60).await.unwrap();
        assert_eq!(leased.iter().map(|l| l.id).collect::<Vec<_>>(), vec![later.id]);

        // Verification lost: its sitemaps stop being fetched.
        store.release("w", later.id).await.unwrap();
        store.record_verification(site, false, T0 + 100).await.unwrap();
        assert!(store.lease_due_sitemaps("w", T0 + 100, 10, 60).await.unwrap().is_empty());
        // A site verified after its sitemap was added: its sitemap is fetched from then on.
        store.record_verification(unverified.id, true, T0 + 100).await.unwrap();
        let leased = store.lease_due_sitemaps("w", T0 + 100, 10, 60).await.unwrap();
        assert_eq!(leased.len(), 1);
        assert_eq!(leased[0].site_id, unverified.id);
    })
    .await;
}

#[tokio::test]
async fn an_expired_lease_makes_the_sitemap_due_again() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 1).await;
        assert_eq!(store.lease_due_sitemaps("crashed", T0, 10, 60).await.unwrap().len(), 1);
        assert!(store.lease_due_sitemaps("other", T0 + 59, 10, 60).await.unwrap().is_empty());
        let again = store.lease_due_sitemaps("other", T0 + 60, 10, 60).await.unwrap();
        assert_eq!(again.iter().map(|l| l.id).collect::<Vec<_>>(), ids);

        // The first worker comes back too late: its result is refused, the new holder's taken.
        let err = store.complete("crashed", ids[0], &ok_download(T0 + 61), T0 + 1000).await.unwrap_err();
        assert!(matches!(err, Error::LeaseLost { .. }), "{err}");
        store.complete("other", ids[0], &ok_download(T0 + 62), T0 + 1000).await.unwrap();
        let ann = mapwright_store::Actor { user_id: 1, is_admin: true };
        assert_eq!(store.list_downloads(ann, ids[0], 10).await.unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn complete_stores_the_download_and_sets_the_next_fetch() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 1).await;
        let admin = mapwright_store::Actor { user_id: 1, is_admin: true };
        store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap();
        let finding = |rule: &str, severity: &str, line| FindingRecord {
            rule: rule.into(),
            severity: severity.into(),
            line: Some(line),
            col: Some(3),
            loc: Some("https://ann.example/x".into()),
            message: format!("{rule} here"),
        };
        let download = DownloadRecord {
            downloaded_at: T0 + 5,
            status: "errors".into(),
            http_status: Some(200),
            bytes: 1234,
            duration_ms: 56,
            url_count: 7,
            error: None,
            findings: vec![finding("loc-missing", "error", 4), finding("lastmod-format", "warning", 9)],
            etag: Some("\"v1\"".into()),
            last_modified: Some("Tue, 14 Nov 2023 22:13:20 GMT".into()),
            content_hash: Some("abc".into()),
            diff: None,
            lastmod: None,
            omitted_errors: 0,
            omitted_warnings: 0,
            whole_read: None,
            urls_seen: false,
        };
        let download_id = store.complete("w", ids[0], &download, T0 + 86400).await.unwrap();

        let sitemap = store.sitemap(admin, ids[0]).await.unwrap();
        assert_eq!(sitemap.next_fetch_at, T0 + 86400);
        assert_eq!(sitemap.last_downloaded_at, Some(T0 + 5));
        assert_eq!(sitemap.status.as_deref(), Some("errors"));
        assert_eq!(sitemap.etag.as_deref(), Some("\"v1\""));
        let stored = &store.list_downloads(admin, ids[0], 10).await.unwrap()[0];
        assert_eq!((stored.id, stored.bytes, stored.duration_ms, stored.url_count), (download_id, 1234, 56, 7));
        assert_eq!((stored.error_count, stored.warning_count), (1, 1));
        assert_eq!(store.list_findings(admin, download_id).await.unwrap(), download.findings);

        // Not due until the next fetch time; then due and leasable again.
        assert!(store.lease_due_sitemaps("w", T0 + 86399, 10, 60).await.unwrap().is_empty());
        assert_eq!(store.lease_due_sitemaps("w", T0 + 86400, 10, 60).await.unwrap().len(), 1);
        // Completing twice is refused: the lease ended with the first completion.
        store.complete("w", ids[0], &ok_download(T0 + 86401), T0 + 2 * 86400).await.unwrap();
        let err = store.complete("w", ids[0], &ok_download(T0 + 86402), T0).await.unwrap_err();
        assert!(matches!(err, Error::LeaseLost { .. }), "{err}");
    })
    .await;
}

/// Issue 32: a read's counts and verdict cover every finding, also those the worker did not
/// store; a report better than its counts ("warnings" with an error counted) is never stored.
#[tokio::test]
async fn the_counts_and_the_verdict_cover_the_findings_not_stored() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 2).await;
        let admin = mapwright_store::Actor { user_id: 1, is_admin: true };
        let warning = |line| FindingRecord {
            rule: "lastmod-format".into(),
            severity: "warning".into(),
            line: Some(line),
            col: Some(1),
            loc: None,
            message: "a warning".into(),
        };
        let kept: Vec<_> = (1..=1000).map(warning).collect();
        // 1,000 warnings stored, 200 more and the fatal error left out: reported as "warnings".
        let download = DownloadRecord {
            status: "warnings".into(),
            findings: kept.clone(),
            omitted_warnings: 200,
            omitted_errors: 1,
            ..ok_download(T0 + 5)
        };
        store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap();
        let id = store.complete("w", ids[0], &download, T0 + 86400).await.unwrap();
        let sitemap = store.sitemap(admin, ids[0]).await.unwrap();
        assert_eq!(sitemap.status.as_deref(), Some("errors"));
        assert_eq!((sitemap.errors, sitemap.warnings), (1, 1200));
        let stored = &store.list_downloads(admin, ids[0], 10).await.unwrap()[0];
        assert_eq!((stored.id, stored.status.as_str()), (id, "errors"));
        assert_eq!((stored.error_count, stored.warning_count), (1, 1200));
        assert_eq!(store.list_findings(admin, id).await.unwrap().len(), 1000, "the cap on stored rows stays");
        // "ok" with warnings counted is "warnings"; a failure stays a failure.
        let ok_with_warnings = DownloadRecord { findings: vec![warning(1)], ..ok_download(T0 + 6) };
        store.complete("w", ids[1], &ok_with_warnings, T0 + 86400).await.unwrap();
        assert_eq!(store.sitemap(admin, ids[1]).await.unwrap().status.as_deref(), Some("warnings"));
        // A 304 afterwards carries the whole counts of the read it stands for.
        store.lease_due_sitemaps("w", T0 + 86400, 10, 60).await.unwrap();
        let unchanged =
            DownloadRecord { status: "unchanged".into(), http_status: Some(304), ..ok_download(T0 + 86401) };
        store.complete("w", ids[0], &unchanged, T0 + 2 * 86400).await.unwrap();
        let again = &store.list_downloads(admin, ids[0], 10).await.unwrap()[0];
        assert_eq!((again.status.as_str(), again.error_count, again.warning_count), ("unchanged", 1, 1200));
        assert_eq!(store.sitemap(admin, ids[0]).await.unwrap().status.as_deref(), Some("errors"));
    })
    .await;
}

#[tokio::test]
async fn release_gives_the_job_back() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 3).await;
        assert_eq!(store.lease_due_sitemaps("w", T0, 2, 600).await.unwrap().len(), 2);
        let err = store.release("intruder", ids[0]).await.unwrap_err();
        assert!(matches!(err, Error::LeaseLost { .. }), "{err}");
        store.release("w", ids[0]).await.unwrap();
        assert_eq!(store.queue_depth(T0).await.unwrap(), 2);
        assert_eq!(store.release_all("w").await.unwrap(), 1);
        assert_eq!(store.queue_depth(T0).await.unwrap(), 3);
        assert_eq!(store.lease_due_sitemaps("v", T0, 10, 600).await.unwrap().len(), 3);
    })
    .await;
}

#[tokio::test]
async fn ping_and_resubmit_bring_the_fetch_forward() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 1).await;
        let admin = mapwright_store::Actor { user_id: 1, is_admin: true };
        store.lease_due_sitemaps("w", T0, 1, 60).await.unwrap();
        store.complete("w", ids[0], &ok_download(T0), T0 + 86400).await.unwrap();

        let url = "https://ann.example/sitemap-0.xml";
        assert_eq!(store.record_ping(url, "192.0.2.1", T0 + 10).await.unwrap().scheduled, 1);
        assert_eq!(store.sitemap(admin, ids[0]).await.unwrap().next_fetch_at, T0 + 10);
        // A ping for a sitemap nobody submitted schedules nothing and stores nothing.
        assert_eq!(store.record_ping("https://x.example/s.xml", "192.0.2.1", T0 + 11).await.unwrap().scheduled, 0);
        assert_eq!(store.pings_from_client_since("192.0.2.1", T0).await.unwrap(), 1);
        assert_eq!(store.pings_from_client_since("192.0.2.1", T0 + 11).await.unwrap(), 0);
        assert_eq!(store.pings_for_sitemap_since(url, T0).await.unwrap(), 1);

        store.lease_due_sitemaps("w", T0 + 10, 1, 60).await.unwrap();
        store.complete("w", ids[0], &ok_download(T0 + 10), T0 + 86400).await.unwrap();
        store.resubmit_sitemap(admin, ids[0], T0 + 20).await.unwrap();
        assert_eq!(store.queue_depth(T0 + 20).await.unwrap(), 1);
    })
    .await;
}

/// Issue 34: an index's Resubmit submits its whole tree, so every child's "Submitted"
/// (`last_submitted_at`) says it was resubmitted, as the flash does.
#[tokio::test]
async fn an_index_resubmit_submits_its_children_too() {
    each_backend(|store| async move {
        let ids = due_sitemaps(&*store, 1).await;
        let admin = mapwright_store::Actor { user_id: 1, is_admin: true };
        let index = store.sitemap(admin, ids[0]).await.unwrap();
        store.lease_due_sitemaps("w", T0, 1, 60).await.unwrap();
        let summary = mapwright_store::FetchSummary {
            kinds: Some("index".into()),
            url_count: Some(1),
            fetch_interval: 86_400,
            failures: 0,
            format: Some("sitemapindex".into()),
            contents: None,
        };
        store.record_fetch_summary("w", index.id, &summary).await.unwrap();
        store.complete("w", index.id, &ok_download(T0), T0 + 86_400).await.unwrap();
        let child = IndexChild { url: "https://ann.example/child.xml".into(), lastmod: None };
        store.sync_index_children(index.site_id, index.id, &[child], T0 + 1).await.unwrap();
        let children: Vec<_> =
            store.list_sitemaps(admin, index.site_id).await.unwrap().into_iter().filter(|s| s.id != index.id).collect();
        assert_eq!(children.len(), 1);
        assert!(children[0].last_submitted() < T0 + 500);

        store.resubmit_sitemap(admin, index.id, T0 + 500).await.unwrap();
        let child = store.sitemap(admin, children[0].id).await.unwrap();
        assert_eq!(child.last_submitted(), T0 + 500, "the child was resubmitted with its index");
        assert!(child.next_fetch_at <= T0 + 500, "and is due");
        assert_eq!(store.sitemap(admin, index.id).await.unwrap().last_submitted(), T0 + 500);
    })
    .await;
}

#[tokio::test]
async fn robots_and_index_children_are_added_by_the_service() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let index =
            store.add_sitemap_for_site(site, "https://ann.example/index.xml", Source::Robots, None, T0).await.unwrap();
        assert_eq!(index.source, "robots");
        let child = store
            .add_sitemap_for_site(site, "https://ann.example/a.xml", Source::Index, Some(index.id), T0)
            .await
            .unwrap();
        assert_eq!(child.parent_id, Some(index.id));
        // Adding again keeps one row; a user's removal sticks against robots.txt.
        store.remove_sitemap(ann, index.id, T0).await.unwrap();
        let again = store
            .add_sitemap_for_site(site, "https://ann.example/index.xml", Source::Robots, None, T0 + 1)
            .await
            .unwrap();
        assert_eq!(again.id, index.id);
        assert_eq!(again.removed_at, Some(T0));
        assert_eq!(store.list_sitemaps(ann, site).await.unwrap().len(), 2);
        let err =
            store.add_sitemap_for_site(9999, "https://x.example/s.xml", Source::Robots, None, T0).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { what: "site", .. }), "{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_database_share_the_work() {
    each_backend_pair(|one, two| async move {
        let all = due_sitemaps(&*one, 30).await;
        let worker = |name: &'static str, store: Arc<dyn Store>| {
            tokio::spawn(async move {
                let mut done = Vec::new();
                loop {
                    let batch = store.lease_due_sitemaps(name, T0, 2, 300).await.unwrap();
                    if batch.is_empty() {
                        return done;
                    }
                    for leased in batch {
                        store.complete(name, leased.id, &ok_download(T0), T0 + 86400).await.unwrap();
                        done.push(leased.id);
                    }
                }
            })
        };
        let (a, b) = (worker("one", one.clone()), worker("two", two.clone()));
        let (a, b) = (a.await.unwrap(), b.await.unwrap());
        let mut every: Vec<i64> = a.iter().chain(&b).copied().collect();
        every.sort_unstable();
        // Each sitemap fetched exactly once, by one of the two.
        assert_eq!(every, all);
        let admin = mapwright_store::Actor { user_id: 1, is_admin: true };
        for id in all {
            assert_eq!(two.list_downloads(admin, id, 10).await.unwrap().len(), 1);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_re_check_each_site_once() {
    each_backend_pair(|one, two| async move {
        let ann = user(&*one, "ann@example.com", false).await;
        let mut all = Vec::new();
        for n in 0..40 {
            all.push(verified_site(&*one, ann, &format!("https://s{n}.example")).await);
        }
        all.sort_unstable();
        let pass = |store: Arc<dyn Store>| {
            tokio::spawn(async move {
                let mut claimed = Vec::new();
                loop {
                    let sites = store.sites_to_verify(T0 + 100, T0 + 200, 3).await.unwrap();
                    if sites.is_empty() {
                        return claimed;
                    }
                    assert!(sites.iter().all(|s| s.last_checked_at == Some(T0 + 200)), "{sites:?}");
                    claimed.extend(sites.iter().map(|s| s.id));
                }
            })
        };
        let (a, b) = (pass(one.clone()), pass(two.clone()));
        let (a, b) = (a.await.unwrap(), b.await.unwrap());
        let mut every: Vec<i64> = a.iter().chain(&b).copied().collect();
        every.sort_unstable();
        assert_eq!(every, all, "each site claimed once, by one of the two");
        assert!(one.sites_to_verify(T0 + 100, T0 + 300, 100).await.unwrap().is_empty(), "none due until the period");
        assert_eq!(one.sites_to_verify(T0 + 201, T0 + 300, 100).await.unwrap().len(), 40, "all due after it");
    })
    .await;
}

/// A big index (20,000 children: on SQLite, seconds of writing) synchronised while another user
/// writes: every write of the other user succeeds, and none waits for the whole index, only for
/// a slice of it. Counted, not timed: the other user's sitemaps take ids between the children's
/// (on SQLite ids are given under the one write lock, so a write that waited for the whole index
/// would come after every child), and on PostgreSQL a trigger counts the children written by
/// each transaction (`txid_current`): at most the store's chunk (500). A macro, as the two pools
/// are of two types.
macro_rules! huge_index_synchronised_on {
    ($store:expr, $pool:expr) => {{
        let (store, pool): (&dyn Store, _) = ($store, $pool);
        let postgres = store.backend() == "postgres";
        if postgres {
            for statement in [
                "CREATE TABLE child_tx (tx BIGINT NOT NULL)",
                "CREATE FUNCTION log_child_tx() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 INSERT INTO child_tx VALUES (txid_current()); RETURN NEW; END $$",
                "CREATE TRIGGER child_tx AFTER INSERT ON sitemaps FOR EACH ROW WHEN (NEW.source = 'index') \
                 EXECUTE FUNCTION log_child_tx()",
            ] {
                sqlx::query(statement).execute(pool).await.unwrap();
            }
        }
        let ann = user(store, "ann@example.com", false).await;
        let site = verified_site(store, ann, "https://ann.example").await;
        let index = store.add_sitemap(ann, site, "https://ann.example/index.xml", Source::Api, T0).await.unwrap();
        let bob = user(store, "bob@example.com", false).await;
        let bobs = verified_site(store, bob, "https://bob.example").await;

        const CHILDREN: usize = 20_000;
        let children: Vec<IndexChild> = (0..CHILDREN)
            .map(|i| IndexChild { url: format!("https://ann.example/part-{i}.xml"), lastmod: None })
            .collect();
        let done = std::sync::atomic::AtomicBool::new(false);
        let syncing = async {
            let sync = store.sync_index_children(site, index.id, &children, T0 + 1).await;
            done.store(true, std::sync::atomic::Ordering::Release);
            sync
        };
        let writing = async {
            let mut writes = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                let url = format!("https://bob.example/s-{writes}.xml");
                store.add_sitemap(bob, bobs, &url, Source::Api, T0 + 1).await.unwrap();
                writes += 1;
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            writes
        };
        let (sync, writes) = tokio::join!(syncing, writing);
        let sync = sync.unwrap();
        assert_eq!((sync.added, sync.brought_forward, sync.removed), (CHILDREN as u64, 0, 0));
        assert!(writes > 1, "the other user wrote {writes} times during the synchronisation");
        let ids = |sitemaps: Vec<mapwright_store::Sitemap>, source: &str| -> Vec<i64> {
            sitemaps.into_iter().filter(|s| s.source == source).map(|s| s.id).collect()
        };
        let child_ids = ids(store.list_sitemaps(ann, site).await.unwrap(), "index");
        let (first, last) = (*child_ids.iter().min().unwrap(), *child_ids.iter().max().unwrap());
        let between = ids(store.list_sitemaps(bob, bobs).await.unwrap(), "api")
            .into_iter()
            .filter(|id| (first..last).contains(id))
            .count();
        eprintln!("{}: {between} of the other user's {writes} writes between the children", store.backend());
        assert!(between >= 1, "{}: every write of the other user waited for the whole index", store.backend());
        if postgres {
            let per_tx: Vec<i64> =
                sqlx::query_scalar("SELECT COUNT(*) FROM child_tx GROUP BY tx").fetch_all(pool).await.unwrap();
            assert_eq!(per_tx.iter().sum::<i64>(), CHILDREN as i64);
            assert!(per_tx.iter().all(|&n| n <= 500), "children per transaction: {per_tx:?}");
        }

        // Listing a subset again removes the rest, and a duplicate URL is one child.
        let mut kept: Vec<IndexChild> = children[..1_234].to_vec();
        kept.push(children[0].clone());
        let sync = store.sync_index_children(site, index.id, &kept, T0 + 2).await.unwrap();
        assert_eq!((sync.added, sync.removed), (0, CHILDREN as u64 - 1_234));
        let live = store.list_sitemaps(ann, site).await.unwrap().into_iter().filter(|s| s.removed_at.is_none()).count();
        assert_eq!(live, 1 + 1_234);
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_index_is_synchronised_in_short_transactions() {
    each_backend_with_pool!(huge_index_synchronised_on);
}

/// Each way a sitemap is added writes its site's owner and verified state in its row, where the
/// lease reads them (migration 0046; written by the `INSERT` itself since 0047, no trigger):
/// the API's, robots.txt's, an index's child, for a verified and an unverified site. The
/// triggers move them with the site: verified later, or the row given another site. A macro,
/// as the two pools are of two types.
macro_rules! owners_written_on {
    ($store:expr, $pool:expr) => {{
        let (store, pool): (&dyn Store, _) = ($store, $pool);
        let ann = user(store, "ann@example.com", false).await;
        let bob = user(store, "bob@example.com", false).await;
        let anns = verified_site(store, ann, "https://ann.example").await;
        let bobs = store.create_site(bob, "https://bob.example", T0).await.unwrap().id;
        for (actor, site, origin) in [(ann, anns, "https://ann.example"), (bob, bobs, "https://bob.example")] {
            let index = store.add_sitemap(actor, site, &format!("{origin}/api.xml"), Source::Api, T0).await.unwrap();
            store.add_sitemap_for_site(site, &format!("{origin}/robots.xml"), Source::Robots, None, T0).await.unwrap();
            let child = IndexChild { url: format!("{origin}/child.xml"), lastmod: None };
            assert_eq!(store.sync_index_children(site, index.id, &[child], T0).await.unwrap().added, 1);
            // Submitted again (the `ON CONFLICT` ways): one row still, as it was.
            store.add_sitemap(actor, site, &format!("{origin}/api.xml"), Source::Api, T0 + 1).await.unwrap();
            store
                .add_sitemap_for_site(site, &format!("{origin}/robots.xml"), Source::Robots, None, T0 + 1)
                .await
                .unwrap();
        }
        let rows = || async {
            let rows: Vec<(String, Option<i64>, bool)> =
                sqlx::query_as("SELECT url, owner_id, site_verified FROM sitemaps ORDER BY id")
                    .fetch_all(pool)
                    .await
                    .unwrap();
            rows
        };
        let (a, b) = (Some(ann.user_id), Some(bob.user_id));
        let want = |bob_verified: bool| -> Vec<(String, Option<i64>, bool)> {
            [("ann", a, true), ("bob", b, bob_verified)]
                .into_iter()
                .flat_map(|(who, owner, verified)| {
                    ["api", "robots", "child"]
                        .map(|name| (format!("https://{who}.example/{name}.xml"), owner, verified))
                })
                .collect()
        };
        assert_eq!(rows().await, want(false), "{}", store.backend());

        store.record_verification(bobs, true, T0 + 2).await.unwrap();
        assert_eq!(rows().await, want(true), "{}: the site verified later", store.backend());
        sqlx::query("UPDATE sitemaps SET site_id = $1 WHERE url = 'https://bob.example/child.xml'")
            .bind(anns)
            .execute(pool)
            .await
            .unwrap();
        let moved = rows().await.into_iter().find(|(url, _, _)| url.ends_with("bob.example/child.xml")).unwrap();
        assert_eq!(moved, ("https://bob.example/child.xml".into(), a, true), "{}: another site", store.backend());
    }};
}

#[tokio::test]
async fn every_way_of_adding_a_sitemap_gives_it_its_sites_owner_and_state() {
    each_backend_with_pool!(owners_written_on);
}
