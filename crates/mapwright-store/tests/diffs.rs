//! Per-read diffs: what each merged read changed in a sitemap's URL list, recorded in the merge's
//! transaction and linked to its download, on both backends.

use mapwright_store::{
    Actor, Change, DiffUrl, DownloadRecord, Error, MAX_DIFF_URLS, ReadDiff, Retention, Source, Store, UrlMerge,
    UrlRecord, UrlWrite,
};

use crate::support::{T0, each_backend, user, verified_site};

const DAY: i64 = 24 * 3600;

fn url(path: &str, lastmod: &str) -> UrlRecord {
    UrlRecord {
        loc: format!("https://ann.example/{path}"),
        lastmod: Some(lastmod.into()),
        changefreq: None,
        priority: None,
    }
}

/// A verified site of ann with one sitemap (due at T0).
async fn sitemap(store: &dyn Store) -> (Actor, i64, i64) {
    let ann = user(store, "ann@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    let sitemap = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap();
    (ann, site, sitemap.id)
}

/// Leases the sitemap to `w` at `now` (it must be due).
async fn lease(store: &dyn Store, sitemap: i64, now: i64) {
    let leased = store.lease_due_sitemaps("w", now, 10, 60).await.unwrap();
    assert_eq!(leased.iter().map(|l| l.id).collect::<Vec<_>>(), vec![sitemap], "due at {now}");
}

/// Stages and merges `urls` as the read of `w` at `now` (complete: swept).
async fn merge(store: &dyn Store, site: i64, sitemap: i64, urls: &[UrlRecord], now: i64) -> UrlWrite {
    let mut stage = store.begin_url_stage("w", site, sitemap, now).await.unwrap();
    for chunk in urls.chunks(400) {
        store.stage_urls(&mut stage, chunk).await.unwrap();
    }
    let how = UrlMerge { sweep: true, same_content: false, quota: i64::MAX, now };
    store.merge_url_stage("w", &stage, how).await.unwrap()
}

/// Stores the download of `w`'s job, linked to the merge's diff; due again a second later.
async fn complete(store: &dyn Store, sitemap: i64, status: &str, diff: Option<i64>, now: i64) -> i64 {
    let record = DownloadRecord {
        downloaded_at: now,
        status: status.into(),
        http_status: Some(if status == "unchanged" { 304 } else { 200 }),
        diff,
        ..DownloadRecord::default()
    };
    store.complete("w", sitemap, &record, now + 1).await.unwrap()
}

/// A whole job: lease, read, merge, download; returns the merge's counts and the download.
async fn read(store: &dyn Store, site: i64, sitemap: i64, urls: &[UrlRecord], now: i64) -> (UrlWrite, i64) {
    lease(store, sitemap, now).await;
    let write = merge(store, site, sitemap, urls, now).await;
    assert!(write.diff.is_some(), "a merge records its diff");
    let download = complete(store, sitemap, "ok", write.diff, now).await;
    (write, download)
}

/// Every URL of a download's diff, in pages of 2 (paging included).
async fn listed(store: &dyn Store, actor: Actor, download: i64, change: Option<Change>) -> Vec<DiffUrl> {
    let (mut all, mut after) = (Vec::new(), 0);
    loop {
        let page = store.list_diff_urls(actor, download, change, after, 2).await.unwrap();
        all.extend(page.items);
        match page.next_after {
            Some(next) => after = next,
            None => return all,
        }
    }
}

/// (change, path) of each listed URL, sorted.
fn changes(urls: &[DiffUrl]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        urls.iter().map(|u| (u.change.clone(), u.loc.trim_start_matches("https://ann.example/").to_owned())).collect();
    out.sort();
    out
}

fn counts(d: &ReadDiff) -> (bool, i64, i64, i64) {
    (d.recorded, d.added, d.removed, d.changed)
}

/// What retention deletes `days` days after T0, keeping `keep` downloads per sitemap and
/// removed URLs one second.
fn retention(keep: i64) -> Retention {
    Retention {
        keep_downloads: keep,
        ping_max_age: 1,
        removed_url_max_age: 1,
        unverified_site_max_age: DAY,
        batch: 100,
    }
}

#[tokio::test]
async fn a_read_that_adds_lists_its_new_urls() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        let first = [url("a", "2024-01-01"), url("b", "2024-01-01"), url("c", "2024-01-01")];
        let (write, download) = read(&*store, site, sm, &first, T0 + 1).await;
        assert_eq!((write.added, write.removed, write.changed), (3, 0, 0));
        let diff = store.read_diff(ann, download).await.unwrap();
        assert_eq!(counts(&diff), (true, 3, 0, 0));
        assert_eq!((diff.added_listed, diff.truncated(), diff.download_id, diff.sitemap_id), (3, false, download, sm));
        let urls = listed(&*store, ann, download, None).await;
        assert_eq!(
            changes(&urls),
            [("added".into(), "a".into()), ("added".into(), "b".into()), ("added".into(), "c".into())]
        );
        assert!(urls.windows(2).all(|w| w[0].url_id < w[1].url_id), "by URL id");
        assert_eq!(urls[0].lastmod.as_deref(), Some("2024-01-01"));
        assert_eq!(store.list_read_diffs(ann, sm, 10).await.unwrap(), vec![diff]);
    })
    .await;
}

#[tokio::test]
async fn a_read_that_removes_names_the_removed_urls_until_its_diff_goes() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        let first = [url("a", "2024-01-01"), url("b", "2024-01-01"), url("c", "2024-01-01")];
        let (_, first_download) = read(&*store, site, sm, &first, T0 + 1).await;
        // a changed, b the same, c left, d new.
        let second = [url("a", "2024-02-02"), url("b", "2024-01-01"), url("d", "2024-02-02")];
        let (write, download) = read(&*store, site, sm, &second, T0 + 20).await;
        assert_eq!((write.added, write.removed, write.changed), (1, 1, 1));
        let diff = store.read_diff(ann, download).await.unwrap();
        assert_eq!(counts(&diff), (true, 1, 1, 1));
        let urls = listed(&*store, ann, download, None).await;
        assert_eq!(
            changes(&urls),
            [("added".into(), "d".into()), ("changed".into(), "a".into()), ("removed".into(), "c".into())]
        );
        let removed = listed(&*store, ann, download, Some(Change::Removed)).await;
        assert_eq!((removed.len(), removed[0].removed_at), (1, Some(T0 + 20)), "named, with its removal");
        let changed = listed(&*store, ann, download, Some(Change::Changed)).await;
        assert_eq!(changed[0].lastmod.as_deref(), Some("2024-02-02"), "as it is now");
        // Newest first.
        let reads: Vec<i64> = store.list_read_diffs(ann, sm, 10).await.unwrap().iter().map(|d| d.download_id).collect();
        assert_eq!(reads, [download, first_download]);

        // Removed URLs long gone stay while a diff names them...
        let report = store.apply_retention(retention(100), T0 + 10 * DAY).await.unwrap();
        assert_eq!((report.urls, report.downloads), (0, 0));
        assert_eq!(
            changes(&listed(&*store, ann, download, Some(Change::Removed)).await),
            [("removed".into(), "c".into())]
        );
        // ...and go with it: a third read keeps the newest download only.
        read(&*store, site, sm, &second, T0 + 40).await;
        let report = store.apply_retention(retention(1), T0 + 10 * DAY).await.unwrap();
        assert_eq!((report.downloads, report.urls, report.diffs), (2, 1, 0));
        assert!(matches!(store.read_diff(ann, download).await, Err(Error::NotFound { .. })));
        let left = store.list_read_diffs(ann, sm, 10).await.unwrap();
        assert_eq!(left.iter().map(counts).collect::<Vec<_>>(), [(true, 0, 0, 0)], "the same URLs: no change");
    })
    .await;
}

#[tokio::test]
async fn a_failed_read_leaves_no_diff() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        read(&*store, site, sm, &[url("a", "2024-01-01")], T0 + 1).await;
        // w stages a new version and loses its lease before the merge: nothing is recorded.
        lease(&*store, sm, T0 + 10).await;
        let mut stage = store.begin_url_stage("w", site, sm, T0 + 10).await.unwrap();
        store.stage_urls(&mut stage, &[url("b", "2024-01-01")]).await.unwrap();
        let taken = store.lease_due_sitemaps("w2", T0 + 100, 10, 60).await.unwrap();
        assert_eq!(taken.len(), 1, "the lease expired");
        let how = UrlMerge { sweep: true, same_content: false, quota: i64::MAX, now: T0 + 100 };
        let late = store.merge_url_stage("w", &stage, how).await;
        assert!(matches!(late, Err(Error::LeaseLost { .. })), "{late:?}");
        // w2's fetch fails: a download without a read, and no diff.
        let failed = DownloadRecord { downloaded_at: T0 + 101, status: "failed".into(), ..DownloadRecord::default() };
        let download = store.complete("w2", sm, &failed, T0 + 200).await.unwrap();
        assert_eq!(counts(&store.read_diff(ann, download).await.unwrap()), (false, 0, 0, 0));
        assert!(store.list_diff_urls(ann, download, None, 0, 10).await.unwrap().items.is_empty());
        // No diff was left behind either: retention finds no unlinked one.
        let report = store.apply_retention(retention(100), T0 + 10 * DAY).await.unwrap();
        assert_eq!(report.diffs, 0);

        // Whereas a merge whose download never came leaves one, deleted after a day.
        lease(&*store, sm, T0 + 300).await;
        let orphan = merge(&*store, site, sm, &[url("c", "2024-01-01")], T0 + 300).await;
        assert_eq!(orphan.added, 1);
        assert_eq!(store.apply_retention(retention(100), T0 + 300 + DAY / 2).await.unwrap().diffs, 0);
        assert_eq!(store.apply_retention(retention(100), T0 + 300 + 2 * DAY).await.unwrap().diffs, 1);
    })
    .await;
}

#[tokio::test]
async fn a_304_records_no_change() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        read(&*store, site, sm, &[url("a", "2024-01-01"), url("b", "2024-01-01")], T0 + 1).await;
        lease(&*store, sm, T0 + 10).await;
        let download = complete(&*store, sm, "unchanged", None, T0 + 10).await;
        let diff = store.read_diff(ann, download).await.unwrap();
        assert_eq!((diff.status.as_str(), diff.http_status, counts(&diff)), ("unchanged", Some(304), (false, 0, 0, 0)));
        assert!(diff.is_empty());
        assert!(listed(&*store, ann, download, None).await.is_empty());
        // A refetch of the same bytes is merged as such: a diff with nothing in it.
        lease(&*store, sm, T0 + 20).await;
        let mut stage = store.begin_url_stage("w", site, sm, T0 + 20).await.unwrap();
        store.stage_urls(&mut stage, &[url("a", "2024-01-01"), url("b", "2024-01-01")]).await.unwrap();
        let how = UrlMerge { sweep: true, same_content: true, quota: i64::MAX, now: T0 + 20 };
        let write = store.merge_url_stage("w", &stage, how).await.unwrap();
        let download = complete(&*store, sm, "ok", write.diff, T0 + 20).await;
        assert_eq!(counts(&store.read_diff(ann, download).await.unwrap()), (true, 0, 0, 0));
    })
    .await;
}

#[tokio::test]
async fn a_read_that_changes_more_than_the_cap_lists_the_first_and_counts_all() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        let n = MAX_DIFF_URLS as usize + 5;
        let urls: Vec<UrlRecord> = (0..n).map(|i| url(&format!("p{i}"), "2024-01-01")).collect();
        let (_, download) = read(&*store, site, sm, &urls, T0 + 1).await;
        let diff = store.read_diff(ann, download).await.unwrap();
        assert_eq!((diff.added, diff.added_listed, diff.truncated()), (n as i64, MAX_DIFF_URLS, true));
        let page = store.list_diff_urls(ann, download, Some(Change::Added), 0, 10_000).await.unwrap();
        assert_eq!((page.items.len(), page.next_after), (MAX_DIFF_URLS as usize, None));
        assert_eq!(page.items[0].loc, "https://ann.example/p0", "the first in reading order");
        // Every URL removed: the removals are capped the same way.
        let (_, download) = read(&*store, site, sm, &[url("q", "2024-01-01")], T0 + 10).await;
        let diff = store.read_diff(ann, download).await.unwrap();
        assert_eq!((diff.added, diff.removed, diff.removed_listed), (1, n as i64, MAX_DIFF_URLS));
    })
    .await;
}

#[tokio::test]
async fn a_stranger_sees_no_diff_and_a_reader_does() {
    each_backend(|store| async move {
        let (ann, site, sm) = sitemap(&*store).await;
        let (_, download) = read(&*store, site, sm, &[url("a", "2024-01-01")], T0 + 1).await;
        let bob = user(&*store, "bob@example.com", false).await;
        assert!(matches!(store.read_diff(bob, download).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.list_read_diffs(bob, sm, 10).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.list_diff_urls(bob, download, None, 0, 10).await, Err(Error::NotFound { .. })));
        let (_, token) = store
            .create_invitation(ann, site, "bob@example.com", mapwright_store::Role::Reader, T0, DAY)
            .await
            .unwrap();
        store.accept_invitation(bob, &token, T0 + 1).await.unwrap();
        assert_eq!(store.read_diff(bob, download).await.unwrap().added, 1);
        assert_eq!(listed(&*store, bob, download, None).await.len(), 1);
    })
    .await;
}
