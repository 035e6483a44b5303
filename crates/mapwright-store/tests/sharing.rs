//! Issue 14 in the store: fair leasing (caps per origin and owner, owners in turn, the minimum
//! interval), URL quotas, long URLs and NUL characters stored the same on both backends, the
//! limit on unverified sites, and retention.

use mapwright_store::{
    DownloadRecord, Error, FindingRecord, LeasePolicy, MAX_UNVERIFIED_SITES, Retention, Role, Source, Store, UrlQuery,
    UrlRecord,
};

use crate::support::{T0, each_backend, user, verified_site};

fn url(loc: &str) -> UrlRecord {
    UrlRecord { loc: loc.into(), lastmod: None, changefreq: None, priority: None }
}

fn download(at: i64, status: &str) -> DownloadRecord {
    DownloadRecord { downloaded_at: at, status: status.into(), http_status: Some(200), ..Default::default() }
}

/// `n` sitemaps due at `at` on a verified site of `origin`; returns their ids.
async fn due(store: &dyn Store, actor: mapwright_store::Actor, origin: &str, n: usize, at: i64) -> Vec<i64> {
    let site = verified_site(store, actor, origin).await;
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(store.add_sitemap(actor, site, &format!("{origin}/s{i}.xml"), Source::Api, at).await.unwrap().id);
    }
    ids
}

#[tokio::test]
async fn leases_are_capped_per_origin_and_owner_and_owners_take_turns() {
    each_backend(|store| async move {
        let eve = user(&*store, "eve@example.com", false).await;
        let ann = user(&*store, "ann@example.com", false).await;
        // Eve's sitemaps are all due long before Ann's one.
        let slow = due(&*store, eve, "https://slow.example", 10, T0).await;
        let endless = due(&*store, eve, "https://endless.example", 10, T0).await;
        let ann_ids = due(&*store, ann, "https://ann.example", 1, T0 + 50).await;
        let policy = LeasePolicy { per_origin: 2, per_owner: 3, min_interval: 0 };

        // Two slots: Eve's oldest, then Ann's (her turn comes before Eve's second).
        let first = store.lease_sitemaps("w", T0 + 100, 2, 300, policy).await.unwrap();
        let ids: Vec<i64> = first.iter().map(|l| l.id).collect();
        assert_eq!(ids, vec![slow[0], ann_ids[0]], "round-robin across owners");

        // As much as possible: Eve gets two more (3 in all), never 3 of one origin.
        let rest = store.lease_sitemaps("w", T0 + 100, 50, 300, policy).await.unwrap();
        let ids: Vec<i64> = rest.iter().map(|l| l.id).collect();
        assert_eq!(ids, vec![slow[1], endless[0]]);
        assert!(store.lease_sitemaps("w2", T0 + 100, 50, 300, policy).await.unwrap().is_empty(), "caps in force");

        // A lease given back frees a place for the same owner.
        store.release("w", slow[0]).await.unwrap();
        let again = store.lease_sitemaps("w2", T0 + 100, 50, 300, policy).await.unwrap();
        assert_eq!(again.iter().map(|l| l.id).collect::<Vec<_>>(), vec![slow[0]]);

        // Expired leases do not count.
        let later = store.lease_sitemaps("w3", T0 + 500, 50, 300, policy).await.unwrap();
        assert_eq!(later.len(), 3 + 1, "after expiry: Eve 3 (2 per origin), Ann 1");

        // Without caps, all that are due.
        let all = store.lease_due_sitemaps("w4", T0 + 1000, 100, 300).await.unwrap();
        assert_eq!(all.len(), 21);
    })
    .await;
}

#[tokio::test]
async fn a_backlog_on_one_origin_holds_back_neither_its_owners_other_sites_nor_other_owners() {
    each_backend(|store| async move {
        let eve = user(&*store, "eve@example.com", false).await;
        let ann = user(&*store, "ann@example.com", false).await;
        // 300 of Eve's sitemaps on one origin, all due before her other site's and Ann's: the
        // lease reads Eve's in pages and passes the ones the origin's cap leaves out.
        let big = due(&*store, eve, "https://big.example", 300, T0).await;
        let other = due(&*store, eve, "https://other.example", 1, T0 + 10).await;
        let anns = due(&*store, ann, "https://ann.example", 1, T0 + 20).await;
        let policy = LeasePolicy { per_origin: 2, per_owner: 3, min_interval: 0 };
        let got = store.lease_sitemaps("w", T0 + 100, 10, 300, policy).await.unwrap();
        let mut ids: Vec<i64> = got.iter().map(|l| l.id).collect();
        ids.sort_unstable();
        let mut want = vec![big[0], big[1], other[0], anns[0]];
        want.sort_unstable();
        assert_eq!(ids, want, "two of the big origin, Eve's other site, Ann's");

        // One slot: the owner with nothing running comes first, however long Eve's queue.
        store.release_all("w").await.unwrap();
        let first = store.lease_sitemaps("w", T0 + 100, 1, 300, policy).await.unwrap();
        assert_eq!(first.iter().map(|l| l.id).collect::<Vec<_>>(), vec![big[0]], "the longest waiting owner first");
        let next = store.lease_sitemaps("w", T0 + 100, 1, 300, policy).await.unwrap();
        assert_eq!(next.iter().map(|l| l.id).collect::<Vec<_>>(), vec![anns[0]], "then Ann's first turn");
    })
    .await;
}

#[tokio::test]
async fn a_site_passed_to_another_owner_counts_against_that_owner() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let shared = due(&*store, ann, "https://shared.example", 2, T0).await;
        let bobs = due(&*store, bob, "https://bob.example", 2, T0 + 10).await;
        let (_, token) = store
            .create_invitation(ann, shared_site(&*store, ann).await, "bob@example.com", Role::Owner, T0, 86_400)
            .await
            .unwrap();
        store.accept_invitation(bob, &token, T0).await.unwrap();
        let site = shared_site(&*store, ann).await;
        let anns = store.list_members(ann, site).await.unwrap().into_iter().find(|m| m.user_id == ann.user_id).unwrap();
        store.remove_member(bob, anns.id).await.unwrap();
        // Bob owns four due sitemaps now: one a lease, one at a time, round-robin within his cap.
        let policy = LeasePolicy { per_origin: 2, per_owner: 2, min_interval: 0 };
        let got = store.lease_sitemaps("w", T0 + 100, 10, 300, policy).await.unwrap();
        assert_eq!(got.len(), 2, "Bob's cap covers the site he took over");
        assert!(got.iter().all(|l| shared.contains(&l.id) || bobs.contains(&l.id)));
        assert!(store.lease_sitemaps("w", T0 + 100, 10, 300, policy).await.unwrap().is_empty(), "Ann has nothing left");
    })
    .await;
}

/// The one site of `actor` (the shared site, in the test above).
async fn shared_site(store: &dyn Store, actor: mapwright_store::Actor) -> i64 {
    store.list_sites(actor).await.unwrap()[0].id
}

#[tokio::test]
async fn a_sitemap_is_not_fetched_again_within_the_minimum_interval() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let ids = due(&*store, ann, "https://ann.example", 1, T0).await;
        let policy = LeasePolicy { min_interval: 60, ..LeasePolicy::UNLIMITED };
        let leased = store.lease_sitemaps("w", T0, 10, 300, policy).await.unwrap();
        assert_eq!(leased.len(), 1, "never downloaded: due at once");
        store.complete("w", ids[0], &download(T0 + 1, "ok"), T0 + 86400).await.unwrap();

        // Resubmitted and pinged at once: due, but not leased before the interval has passed.
        store.resubmit_sitemap(ann, ids[0], T0 + 2).await.unwrap();
        assert_eq!(store.record_ping("https://ann.example/s0.xml", "192.0.2.1", T0 + 3).await.unwrap().scheduled, 1);
        assert!(store.lease_sitemaps("w", T0 + 30, 10, 300, policy).await.unwrap().is_empty());
        assert!(store.lease_sitemaps("w", T0 + 60, 10, 300, policy).await.unwrap().is_empty());
        assert_eq!(store.lease_sitemaps("w", T0 + 61, 10, 300, policy).await.unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_site_quota_refuses_new_urls_and_keeps_updating_known_ones() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let sm = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
        let batch: Vec<UrlRecord> = (0..5).map(|i| url(&format!("https://ann.example/{i}"))).collect();
        let write = store.store_urls(site, sm, &batch, T0, 3).await.unwrap();
        assert_eq!((write.written, write.refused), (3, 2));
        // Known ones are updated, new ones still refused.
        let mut again = batch.clone();
        again[0].lastmod = Some("2024-01-01".into());
        let write = store.store_urls(site, sm, &again, T0 + 1, 3).await.unwrap();
        assert_eq!((write.written, write.refused), (3, 2));
        let rows = store.list_urls(ann, site, UrlQuery::default()).await.unwrap().items;
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].lastmod.as_deref(), Some("2024-01-01"));
        // More chunks than one transaction holds: the count carries over.
        let many: Vec<UrlRecord> = (0..1_200).map(|i| url(&format!("https://ann.example/m{i}"))).collect();
        let write = store.store_urls(site, sm, &many, T0 + 2, 1_000).await.unwrap();
        assert_eq!((write.written, write.refused), (997, 203));
    })
    .await;
}

/// What the store keeps of hostile data, to compare the backends.
type Kept = (Vec<String>, Vec<FindingRecord>, Option<String>);

#[tokio::test]
async fn long_urls_and_nul_characters_are_stored_alike_on_both_backends() {
    let results = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Kept>::new()));
    let sink = results.clone();
    each_backend(move |store| {
        let sink = sink.clone();
        async move {
            let ann = user(&*store, "ann@example.com", false).await;
            let site = verified_site(&*store, ann, "https://ann.example").await;
            let sm = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
            // Past PostgreSQL's btree limit of 2,704 bytes, up to the reader's 64 KiB.
            let long = format!("https://ann.example/{}", "a".repeat(3_000));
            let longer = format!("https://ann.example/{}", "b".repeat(60_000));
            let nul = "https://ann.example/x\0y".to_owned();
            let batch = vec![url(&long), url(&longer), url(&nul), url(&long)];
            assert_eq!(store.upsert_urls(site, sm, &batch, T0).await.unwrap(), 3);
            assert_eq!(store.upsert_urls(site, sm, &batch, T0 + 1).await.unwrap(), 3, "unique by hash: updated");
            store.record_pushed_urls(site, std::slice::from_ref(&longer), T0 + 2, i64::MAX).await.unwrap();

            store.lease_due_sitemaps("w", T0, 1, 300).await.unwrap();
            let finding = FindingRecord {
                rule: "changefreq-invalid".into(),
                severity: "warning".into(),
                line: Some(1),
                col: Some(2),
                loc: Some(nul.clone()),
                message: "bad value \"\0\"".into(),
            };
            let record =
                DownloadRecord { findings: vec![finding], error: Some("cut\0".into()), ..download(T0 + 3, "errors") };
            let id = store.complete("w", sm, &record, T0 + 86400).await.unwrap();

            let query = UrlQuery { include_removed: true, ..UrlQuery::default() };
            let locs: Vec<String> =
                store.list_urls(ann, site, query).await.unwrap().items.into_iter().map(|u| u.loc).collect();
            assert_eq!(locs.len(), 3);
            assert!(locs.contains(&longer) && locs.contains(&long));
            assert!(locs.contains(&"https://ann.example/x\u{FFFD}y".to_owned()), "NUL stored as U+FFFD");
            let findings = store.list_findings(ann, id).await.unwrap();
            assert_eq!(findings[0].message, "bad value \"\u{FFFD}\"");
            let error = store.list_downloads(ann, sm, 1).await.unwrap()[0].error.clone();
            assert_eq!(error.as_deref(), Some("cut\u{FFFD}"));
            sink.lock().unwrap().push((locs, findings, error));
        }
    })
    .await;
    let results = results.lock().unwrap();
    if results.len() == 2 {
        assert_eq!(results[0], results[1], "SQLite and PostgreSQL keep the same");
    }
}

#[tokio::test]
async fn unverified_sites_per_user_are_limited() {
    each_backend(|store| async move {
        let eve = user(&*store, "eve@example.com", false).await;
        let mut first = None;
        for i in 0..MAX_UNVERIFIED_SITES {
            let site = store.create_site(eve, &format!("https://s{i}.example"), T0).await.unwrap();
            first.get_or_insert(site.id);
        }
        let err = store.create_site(eve, "https://one-more.example", T0).await.unwrap_err();
        assert!(matches!(err, Error::Quota(_)), "{err}");
        // Another user is not affected; a verified site frees a place.
        let ann = user(&*store, "ann@example.com", false).await;
        store.create_site(ann, "https://ann.example", T0).await.unwrap();
        store.record_verification(first.unwrap(), true, T0).await.unwrap();
        store.create_site(eve, "https://one-more.example", T0).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn retention_deletes_what_the_policy_does_not_keep() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let sm = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
        // 6 downloads: a read with findings, then 5 unchanged.
        let finding = FindingRecord {
            rule: "loc-missing".into(),
            severity: "error".into(),
            line: None,
            col: None,
            loc: None,
            message: "m".into(),
        };
        let mut ids = Vec::new();
        for i in 0..6 {
            store.lease_due_sitemaps("w", T0 + 10 * i, 1, 5).await.unwrap();
            let mut record = download(T0 + 10 * i, if i == 0 { "errors" } else { "unchanged" });
            if i == 0 {
                record.findings = vec![finding.clone(); 3];
            }
            ids.push(store.complete("w", sm, &record, T0 + 10 * i + 1).await.unwrap());
        }
        // Pings, sessions, URLs, sites of various ages.
        store.record_ping("https://ann.example/s.xml", "192.0.2.1", T0).await.unwrap();
        store.record_ping("https://ann.example/s.xml", "192.0.2.1", T0 + 900).await.unwrap();
        let old_session = store.create_session(ann.user_id, T0, 10).await.unwrap();
        let live_session = store.create_session(ann.user_id, T0, 10_000).await.unwrap();
        store.upsert_urls(site, sm, &[url("https://ann.example/a"), url("https://ann.example/b")], T0).await.unwrap();
        store.upsert_urls(site, sm, &[url("https://ann.example/a")], T0 + 1).await.unwrap();
        store.sweep_urls(site, sm, T0 + 1, T0 + 1).await.unwrap();
        let stale = store.create_site(ann, "https://stale.example", T0).await.unwrap();
        let fresh = store.create_site(ann, "https://fresh.example", T0 + 900).await.unwrap();

        let policy = Retention {
            keep_downloads: 2,
            ping_max_age: 500,
            removed_url_max_age: 500,
            unverified_site_max_age: 500,
            batch: 2,
        };
        let report = store.apply_retention(policy, T0 + 1000).await.unwrap();
        assert_eq!((report.downloads, report.pings, report.sessions, report.urls, report.sites), (3, 1, 1, 1, 1));

        // The two newest stay, and the newest that read the file, with its findings.
        let kept: Vec<i64> = store.list_downloads(ann, sm, 100).await.unwrap().iter().map(|d| d.id).collect();
        assert_eq!(kept, vec![ids[5], ids[4], ids[0]]);
        assert_eq!(store.list_findings(ann, ids[0]).await.unwrap().len(), 3);
        assert_eq!(store.pings_for_sitemap_since("https://ann.example/s.xml", 0).await.unwrap(), 1);
        assert!(store.session_user(&old_session, T0).await.unwrap().is_none(), "expired: deleted");
        assert!(store.session_user(&live_session, T0 + 1000).await.unwrap().is_some());
        let query = UrlQuery { include_removed: true, ..UrlQuery::default() };
        let locs: Vec<String> =
            store.list_urls(ann, site, query).await.unwrap().items.into_iter().map(|u| u.loc).collect();
        assert_eq!(locs, ["https://ann.example/a"]);
        assert!(matches!(store.site(ann, stale.id).await, Err(Error::NotFound { .. })));
        store.site(ann, fresh.id).await.unwrap();
        store.site(ann, site).await.unwrap();

        let again = store.apply_retention(policy, T0 + 1000).await.unwrap();
        assert_eq!(again, Default::default(), "nothing more to delete");
    })
    .await;
}
