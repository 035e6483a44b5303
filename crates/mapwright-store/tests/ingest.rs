//! The staged write path of a download's URLs: what a merge writes, and that a download which
//! dies at any point (abandoned stage, lost lease, cancelled merge, cut connection) leaves the
//! previous URL set exactly as it was, row by row.

use std::sync::Arc;

use mapwright_store::testing::{PgDatabase, all_url_rows, url_set};
use mapwright_store::{Actor, Error, PgStore, Source, Store, UrlMerge, UrlRecord, UrlRow};

use crate::support::{T0, each_backend, user, verified_site};

fn url(loc: &str, lastmod: Option<&str>) -> UrlRecord {
    UrlRecord { loc: loc.into(), lastmod: lastmod.map(Into::into), changefreq: None, priority: None }
}

/// `n` URLs `https://ann.example/<prefix><i>` with a lastmod.
fn many(prefix: &str, n: usize, lastmod: &str) -> Vec<UrlRecord> {
    (0..n).map(|i| url(&format!("https://ann.example/{prefix}{i}"), Some(lastmod))).collect()
}

fn merge(sweep: bool, now: i64) -> UrlMerge {
    UrlMerge { sweep, same_content: false, quota: i64::MAX, now }
}

/// A verified site of ann with one sitemap, leased to `w1` at T0 for 60 s.
async fn leased_sitemap(store: &dyn Store) -> (Actor, i64, i64) {
    let ann = user(store, "ann@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    let sitemap = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap();
    let leased = store.lease_due_sitemaps("w1", T0, 10, 60).await.unwrap();
    assert_eq!(leased.len(), 1);
    (ann, site, sitemap.id)
}

/// Stages `urls` in batches of `batch` and merges them.
async fn read(
    store: &dyn Store,
    worker: &str,
    site: i64,
    sitemap: i64,
    urls: &[UrlRecord],
    batch: usize,
    how: UrlMerge,
) -> mapwright_store::UrlWrite {
    let mut stage = store.begin_url_stage(worker, site, sitemap, how.now).await.unwrap();
    for chunk in urls.chunks(batch) {
        store.stage_urls(&mut stage, chunk).await.unwrap();
    }
    store.merge_url_stage(worker, &stage, how).await.unwrap()
}

#[tokio::test]
async fn a_merge_writes_what_changed_and_sweeps_what_left() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        let other = store.add_sitemap(ann, site, "https://ann.example/o.xml", Source::Api, T0).await.unwrap().id;
        store.upsert_urls(site, other, &[url("https://ann.example/shared", None)], T0).await.unwrap();
        let first = [
            url("https://ann.example/a", Some("2024-01-01")),
            url("https://ann.example/b", Some("2024-01-01")),
            url("https://ann.example/c", Some("2024-01-01")),
            url("https://ann.example/shared", None),
            // Listed twice: the last entry counts.
            url("https://ann.example/a", Some("2024-02-02")),
        ];
        let write = read(&*store, "w1", site, sm, &first, 2, merge(true, T0 + 1)).await;
        assert_eq!((write.written, write.refused), (4, 0));
        let rows = url_set(&*store, ann, site).await.unwrap();
        let by_loc = |rows: &[(UrlRow, Vec<i64>)], loc: &str| {
            rows.iter().find(|(r, _)| r.loc == format!("https://ann.example/{loc}")).cloned().unwrap()
        };
        let (a, links) = by_loc(&rows, "a");
        assert_eq!((a.lastmod.as_deref(), a.first_seen_at, a.changed_at), (Some("2024-02-02"), T0 + 1, T0 + 1));
        assert_eq!(links, vec![sm]);
        assert_eq!(by_loc(&rows, "shared").1, vec![sm, other]);

        // The next read: a's lastmod changed, b unchanged, c left, d new, shared left this
        // sitemap but another lists it.
        let second = [
            url("https://ann.example/a", Some("2024-03-03")),
            url("https://ann.example/b", Some("2024-01-01")),
            url("https://ann.example/d", None),
        ];
        read(&*store, "w1", site, sm, &second, 2, merge(true, T0 + 20)).await;
        let rows = url_set(&*store, ann, site).await.unwrap();
        let (a, _) = by_loc(&rows, "a");
        assert_eq!((a.lastmod.as_deref(), a.changed_at, a.last_seen_at), (Some("2024-03-03"), T0 + 20, T0 + 20));
        let (b, links) = by_loc(&rows, "b");
        assert_eq!((b.changed_at, b.last_seen_at, b.removed_at), (T0 + 1, T0 + 20, None), "b not rewritten, seen now");
        assert_eq!(links, vec![sm]);
        let (c, links) = by_loc(&rows, "c");
        assert_eq!((c.removed_at, links), (Some(T0 + 20), vec![]));
        assert_eq!(by_loc(&rows, "d").0.first_seen_at, T0 + 20);
        let (shared, links) = by_loc(&rows, "shared");
        assert_eq!((shared.removed_at, links), (None, vec![other]), "another sitemap still lists it");

        // A read cut by a fatal error of the reader merges what it read and sweeps nothing.
        read(&*store, "w1", site, sm, &[url("https://ann.example/c", Some("x"))], 2, merge(false, T0 + 30)).await;
        let rows = url_set(&*store, ann, site).await.unwrap();
        let (c, links) = by_loc(&rows, "c");
        assert_eq!((c.removed_at, c.changed_at, links), (None, T0 + 30, vec![sm]), "back from removal");
        assert_eq!(by_loc(&rows, "d").1, vec![sm], "not swept");
    })
    .await;
}

#[tokio::test]
async fn a_merge_adds_new_urls_within_the_quota_in_reading_order() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        let urls = many("p", 5, "2024-01-01");
        let how = UrlMerge { quota: 3, ..merge(true, T0 + 1) };
        let write = read(&*store, "w1", site, sm, &urls, 2, how).await;
        assert_eq!((write.written, write.refused), (3, 2));
        let locs: Vec<String> = url_set(&*store, ann, site).await.unwrap().into_iter().map(|(r, _)| r.loc).collect();
        assert_eq!(locs, ["p0", "p1", "p2"].map(|p| format!("https://ann.example/{p}")));
    })
    .await;
}

#[tokio::test]
async fn a_refetch_of_the_same_bytes_writes_no_url_row() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        read(&*store, "w1", site, sm, &many("p", 10, "2024-01-01"), 4, merge(true, T0 + 1)).await;
        let before = url_set(&*store, ann, site).await.unwrap();
        // Said to be the same content: the stage is not merged (what it holds here differs, so a
        // merge would show).
        let same = UrlMerge { same_content: true, ..merge(true, T0 + 50) };
        let write = read(&*store, "w1", site, sm, &many("q", 3, "2025-01-01"), 4, same).await;
        assert_eq!((write.written, write.refused), (0, 0));
        let after = url_set(&*store, ann, site).await.unwrap();
        assert_eq!(after.len(), before.len());
        for ((old, old_links), (new, new_links)) in before.iter().zip(&after) {
            assert_eq!(old_links, new_links);
            assert_eq!(new.last_seen_at, T0 + 50, "the read is the URLs' last sighting");
            assert_eq!(UrlRow { last_seen_at: old.last_seen_at, ..new.clone() }, *old, "no URL row rewritten");
        }

        // After a read the quota cut short, the same bytes are merged: room may have been made.
        let how = UrlMerge { quota: 12, ..merge(true, T0 + 60) };
        assert_eq!(read(&*store, "w1", site, sm, &many("r", 5, "x"), 4, how).await.refused, 3);
        let how = UrlMerge { same_content: true, quota: 100, ..merge(true, T0 + 70) };
        assert_eq!(read(&*store, "w1", site, sm, &many("r", 5, "x"), 4, how).await.written, 5);
        assert_eq!(
            url_set(&*store, ann, site).await.unwrap().iter().filter(|(r, _)| r.removed_at.is_none()).count(),
            5
        );
    })
    .await;
}

#[tokio::test]
async fn a_download_that_dies_leaves_the_previous_urls_whole() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        read(&*store, "w1", site, sm, &many("p", 300, "2024-01-01"), 100, merge(true, T0 + 1)).await;
        let before = url_set(&*store, ann, site).await.unwrap();
        assert_eq!(before.len(), 300);

        // w1 stages a new version (other URLs, other lastmods) and dies before the merge.
        let mut dead = store.begin_url_stage("w1", site, sm, T0 + 10).await.unwrap();
        store.stage_urls(&mut dead, &many("q", 200, "2025-01-01")).await.unwrap();
        store.stage_urls(&mut dead, &many("p", 100, "2025-01-01")).await.unwrap();
        assert_eq!(url_set(&*store, ann, site).await.unwrap(), before, "nothing staged is visible");

        // Its lease expires and w2 takes the job: the dead attempt's stage is discarded, and
        // w1, should it wake up, can merge nothing.
        let leased = store.lease_due_sitemaps("w2", T0 + 100, 10, 60).await.unwrap();
        assert_eq!(leased.iter().map(|l| l.id).collect::<Vec<_>>(), vec![sm]);
        let mut live = store.begin_url_stage("w2", site, sm, T0 + 100).await.unwrap();
        let late = store.merge_url_stage("w1", &dead, merge(true, T0 + 100)).await;
        assert!(matches!(late, Err(Error::LeaseLost { .. })), "{late:?}");
        let stolen = store.merge_url_stage("w2", &dead, merge(true, T0 + 100)).await;
        assert!(matches!(stolen, Err(Error::StageLost { .. })), "{stolen:?}");
        assert_eq!(url_set(&*store, ann, site).await.unwrap(), before);

        // A stage that lost a batch (as an UNLOGGED table after a crash of PostgreSQL) is refused.
        store.stage_urls(&mut live, &many("r", 10, "2025-01-01")).await.unwrap();
        let mut short = live.clone();
        short.rows += 1;
        let refused = store.merge_url_stage("w2", &short, merge(true, T0 + 100)).await;
        assert!(matches!(refused, Err(Error::StageLost { .. })), "{refused:?}");
        assert_eq!(url_set(&*store, ann, site).await.unwrap(), before);

        // The attempt that completes replaces the set at once.
        store.merge_url_stage("w2", &live, merge(true, T0 + 100)).await.unwrap();
        let after = url_set(&*store, ann, site).await.unwrap();
        assert_eq!(after.iter().filter(|(r, _)| r.removed_at.is_none()).count(), 10);
        assert_eq!(after.iter().filter(|(r, _)| r.removed_at == Some(T0 + 100)).count(), 300);
    })
    .await;
}

#[tokio::test]
async fn a_merge_cancelled_midway_changes_nothing_or_everything() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        read(&*store, "w1", site, sm, &many("p", 2_000, "2024-01-01"), 1_000, merge(true, T0 + 1)).await;
        let before = url_set(&*store, ann, site).await.unwrap();
        let mut stage = store.begin_url_stage("w1", site, sm, T0 + 10).await.unwrap();
        for chunk in many("q", 20_000, "2025-01-01").chunks(2_000) {
            store.stage_urls(&mut stage, chunk).await.unwrap();
        }
        // The merge's task is dropped mid-transaction, as a deadline or a shutdown drops a job.
        let task = {
            let store = store.clone();
            tokio::spawn(async move { store.merge_url_stage("w1", &stage, merge(true, T0 + 10)).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        task.abort();
        let finished = task.await.is_ok();
        let after = url_set(&*store, ann, site).await.unwrap();
        eprintln!(
            "{}: merge cancelled at 30 ms, returned: {finished}, set replaced: {}",
            store.backend(),
            after != before
        );
        if after == before {
            assert!(!finished, "a merge that returned is committed");
        } else {
            let live = after.iter().filter(|(r, _)| r.removed_at.is_none()).count();
            assert_eq!((after.len(), live), (22_000, 20_000), "all of the new set or none of it");
        }
    })
    .await;
}

/// A TCP proxy on loopback in front of PostgreSQL whose connections can be cut at once, as a
/// network failure would (the connections reset, new ones refused).
struct Proxy {
    url: String,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Proxy {
    async fn start(target_url: &str) -> Proxy {
        let mut url = url::Url::parse(target_url).unwrap();
        let target = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        url.set_port(Some(listener.local_addr().unwrap().port())).unwrap();
        url.set_host(Some("127.0.0.1")).unwrap();
        let (cut, watch) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let mut stop = watch.clone();
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = stop.changed() => return,
                };
                let Ok((mut client, _)) = accepted else { return };
                let target = target.clone();
                let mut stop = watch.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = stop.changed() => {}
                    }
                });
            }
        });
        Proxy { url: url.to_string(), cut }
    }

    fn cut(&self) {
        self.cut.send_replace(true);
    }
}

#[tokio::test]
async fn a_connection_cut_mid_ingest_leaves_the_previous_urls() {
    let Some(db) = PgDatabase::create("mapwright_test").await else { return };
    let direct: Arc<dyn Store> = Arc::new(PgStore::open(&db.url).await.unwrap());
    for cut_in_merge in [false, true] {
        let proxy = Proxy::start(&db.url).await;
        let worker: Arc<dyn Store> = Arc::new(PgStore::open(&proxy.url).await.unwrap());
        let email = format!("ann{cut_in_merge}@example.com");
        let ann = user(&*direct, &email, false).await;
        let site = verified_site(&*direct, ann, &format!("https://ann{cut_in_merge}.example")).await;
        let sm = direct.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
        assert_eq!(worker.lease_due_sitemaps("w1", T0, 10, 60).await.unwrap().len(), 1);
        read(&*worker, "w1", site, sm, &many("p", 1_000, "2024-01-01"), 500, merge(true, T0 + 1)).await;
        let before = url_set(&*direct, ann, site).await.unwrap();
        assert_eq!(before.len(), 1_000);

        let mut stage = worker.begin_url_stage("w1", site, sm, T0 + 10).await.unwrap();
        for chunk in many("q", 30_000, "2025-01-01").chunks(2_000) {
            worker.stage_urls(&mut stage, chunk).await.unwrap();
        }
        let merged = if cut_in_merge {
            let task = {
                let worker = worker.clone();
                tokio::spawn(async move { worker.merge_url_stage("w1", &stage, merge(true, T0 + 10)).await })
            };
            tokio::time::sleep(std::time::Duration::from_millis(40)).await;
            proxy.cut();
            task.await.unwrap().is_ok()
        } else {
            proxy.cut();
            // The stage holds its rows on the client until the merge (nothing of it is in the
            // database), so staging goes on; the merge cannot.
            worker.stage_urls(&mut stage, &many("r", 2_000, "x")).await.unwrap();
            let merged = worker.merge_url_stage("w1", &stage, merge(true, T0 + 10)).await;
            assert!(merged.is_err(), "{merged:?}");
            false
        };
        // PostgreSQL rolls back the cut connection's transaction: seen from another connection
        // the set is the previous one, whole, unless the merge had committed (its answer may be
        // lost in the cut, so a failed call may still have committed: then it is all there).
        let after = url_set(&*direct, ann, site).await.unwrap();
        eprintln!("cut in the merge: {cut_in_merge}, returned Ok: {merged}, set replaced: {}", after != before);
        if after == before {
            assert!(!merged, "a merge that returned is committed");
        } else {
            assert!(cut_in_merge, "nothing merged when cut before the merge");
            let live = after.iter().filter(|(r, _)| r.removed_at.is_none()).count();
            assert_eq!((after.len(), live), (31_000, 30_000), "all of the new set or none of it");
        }
        worker.close().await;
    }
    direct.close().await;
}

#[tokio::test]
async fn two_sitemaps_of_a_site_merging_the_same_urls_at_once_link_them_both() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let a = store.add_sitemap(ann, site, "https://ann.example/a.xml", Source::Api, T0).await.unwrap().id;
        let b = store.add_sitemap(ann, site, "https://ann.example/b.xml", Source::Api, T0).await.unwrap().id;
        assert_eq!(store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap().len(), 2);
        let urls = many("p", 3_000, "2024-01-01");
        let mut stages = Vec::new();
        for sitemap in [a, b] {
            let mut stage = store.begin_url_stage("w", site, sitemap, T0 + 1).await.unwrap();
            for chunk in urls.chunks(1_000) {
                store.stage_urls(&mut stage, chunk).await.unwrap();
            }
            stages.push(stage);
        }
        // On PostgreSQL the second insert waits for the first's commit, then finds its rows.
        let (x, y) = tokio::join!(
            store.merge_url_stage("w", &stages[0], merge(true, T0 + 1)),
            store.merge_url_stage("w", &stages[1], merge(true, T0 + 1))
        );
        assert_eq!((x.unwrap().written, y.unwrap().written), (3_000, 3_000));
        let set = url_set(&*store, ann, site).await.unwrap();
        assert_eq!(set.len(), 3_000);
        assert!(set.iter().all(|(r, links)| *links == vec![a, b] && r.removed_at.is_none()));
    })
    .await;
}

#[tokio::test]
async fn a_read_past_the_stages_memory_merges_every_row_in_reading_order() {
    // PostgreSQL holds a stage's rows on the client and spills them to a file past 4,000: a
    // read of 9,000 crosses it twice. Its new URLs are copied straight into `urls`, unless one
    // is the site's already: then the copy is rolled back and the rows merged as before.
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        let mut first = many("p", 9_000, "2024-01-01");
        // Listed twice, across the spill: the last entry counts.
        first.push(url("https://ann.example/p10", Some("2024-02-02")));
        let write = read(&*store, "w1", site, sm, &first, 1_000, merge(true, T0 + 1)).await;
        assert_eq!((write.written, write.added, write.refused), (9_000, 9_000, 0));
        let rows = all_url_rows(&*store, ann, site).await.unwrap();
        assert_eq!(rows.len(), 9_000);
        // In reading order, p10 where its last entry stands.
        let expected = (0..9_000).filter(|i| *i != 10).chain([10]).map(|i| format!("https://ann.example/p{i}"));
        let misplaced = rows.iter().zip(expected).filter(|(r, loc)| r.loc != *loc).count();
        assert_eq!(misplaced, 0, "ids in reading order");
        assert!(rows.iter().all(|r| r.first_seen_at == T0 + 1 && r.removed_at.is_none()));
        assert_eq!(rows[8_999].lastmod.as_deref(), Some("2024-02-02"));
        for r in [&rows[0], &rows[4_500], &rows[8_999]] {
            assert_eq!(store.url_sitemaps(ann, r.id).await.unwrap(), vec![sm]);
        }
        assert_eq!(store.sitemap_by_id(sm).await.unwrap().rollup_urls, 9_000);

        // A second sitemap whose last URL the site has already (the first lists it).
        let other = store.add_sitemap(ann, site, "https://ann.example/o.xml", Source::Api, T0).await.unwrap().id;
        assert_eq!(store.lease_due_sitemaps("w1", T0, 10, 60).await.unwrap().len(), 1);
        let mut second = many("q", 9_000, "2024-01-01");
        second.push(url("https://ann.example/p8999", Some("2024-01-01")));
        let write = read(&*store, "w1", site, other, &second, 1_000, merge(true, T0 + 2)).await;
        assert_eq!((write.written, write.added, write.refused), (9_001, 9_001, 0));
        let rows = all_url_rows(&*store, ann, site).await.unwrap();
        assert_eq!(rows.len(), 18_000);
        let shared = rows.iter().find(|r| r.loc == "https://ann.example/p8999").unwrap();
        assert_eq!(store.url_sitemaps(ann, shared.id).await.unwrap(), vec![sm, other]);
        for r in [&rows[9_000], &rows[17_999]] {
            assert!(r.loc.contains("/q"));
            assert_eq!(store.url_sitemaps(ann, r.id).await.unwrap(), vec![other]);
        }
        assert_eq!(store.sitemap_by_id(other).await.unwrap().rollup_urls, 9_001);
    })
    .await;
}

/// The raw rows of the site's URLs (every column a merge may write) and their links.
async fn raw_rows(store: &dyn Store, actor: Actor, site: i64) -> Vec<(UrlRow, Vec<i64>)> {
    url_set(store, actor, site).await.unwrap()
}

#[tokio::test]
async fn a_read_of_the_same_urls_stages_nothing_and_writes_no_url_row() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        let urls = many("p", 1_000, "2024-01-01");
        read(&*store, "w1", site, sm, &urls, 300, merge(true, T0 + 1)).await;
        let before = raw_rows(&*store, ann, site).await;
        // Not said to be the same content (another body, the same URLs): the map tells.
        let mut stage = store.begin_url_stage("w1", site, sm, T0 + 50).await.unwrap();
        for chunk in urls.chunks(300) {
            store.stage_urls(&mut stage, chunk).await.unwrap();
        }
        assert_eq!(stage.staged(), 0, "an unchanged URL is not staged");
        let write = store.merge_url_stage("w1", &stage, merge(true, T0 + 50)).await.unwrap();
        assert_eq!((write.written, write.added, write.changed, write.removed), (1_000, 0, 0, 0));
        let after = raw_rows(&*store, ann, site).await;
        assert_eq!(after.len(), before.len());
        for ((old, old_links), (new, new_links)) in before.iter().zip(&after) {
            assert_eq!(old_links, new_links);
            assert_eq!(new.last_seen_at, T0 + 50, "the read is the URLs' last sighting");
            assert_eq!(UrlRow { last_seen_at: old.last_seen_at, ..new.clone() }, *old, "no URL row rewritten");
        }
        assert_eq!(store.sitemap_by_id(sm).await.unwrap().rollup_urls, 1_000);
    })
    .await;
}

#[tokio::test]
async fn a_read_with_one_percent_changed_writes_only_those_rows() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        read(&*store, "w1", site, sm, &many("p", 1_000, "2024-01-01"), 250, merge(true, T0 + 1)).await;
        let before = raw_rows(&*store, ann, site).await;
        let mut next = many("p", 1_000, "2024-01-01");
        for i in (7..1_000).step_by(100) {
            next[i].lastmod = Some("2025-05-05".into());
        }
        // A changefreq alone is a change too, without moving changed_at.
        next[3].changefreq = Some("daily".into());
        let mut stage = store.begin_url_stage("w1", site, sm, T0 + 50).await.unwrap();
        for chunk in next.chunks(250) {
            store.stage_urls(&mut stage, chunk).await.unwrap();
        }
        assert_eq!(stage.staged(), 11, "only the changed URLs are staged");
        let write = store.merge_url_stage("w1", &stage, merge(true, T0 + 50)).await.unwrap();
        assert_eq!((write.added, write.changed, write.removed), (0, 11, 0));
        let after = raw_rows(&*store, ann, site).await;
        assert_eq!(after.len(), before.len());
        for (i, ((old, _), (new, links))) in before.iter().zip(&after).enumerate() {
            assert_eq!(links, &vec![sm]);
            let i = new.loc.trim_start_matches("https://ann.example/p").parse::<usize>().unwrap_or(i);
            if i % 100 == 7 {
                assert_eq!((new.lastmod.as_deref(), new.changed_at), (Some("2025-05-05"), T0 + 50), "{}", new.loc);
            } else if i == 3 {
                assert_eq!((new.changefreq.as_deref(), new.changed_at), (Some("daily"), old.changed_at));
            } else {
                assert_eq!(UrlRow { last_seen_at: old.last_seen_at, ..new.clone() }, *old, "{} untouched", new.loc);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn urls_a_read_no_longer_lists_are_removed_and_counted() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        read(&*store, "w1", site, sm, &many("p", 500, "2024-01-01"), 200, merge(true, T0 + 1)).await;
        // 100 gone, 400 unchanged, 50 new.
        let mut next = many("p", 500, "2024-01-01").split_off(100);
        next.extend(many("q", 50, "2024-01-01"));
        let write = read(&*store, "w1", site, sm, &next, 200, merge(true, T0 + 20)).await;
        assert_eq!((write.written, write.added, write.changed, write.removed), (450, 50, 0, 100));
        let rows = url_set(&*store, ann, site).await.unwrap();
        let removed: Vec<&UrlRow> = rows.iter().filter(|(r, _)| r.removed_at.is_some()).map(|(r, _)| r).collect();
        assert_eq!(removed.len(), 100);
        assert!(removed.iter().all(|r| r.removed_at == Some(T0 + 20)));
        assert!(rows.iter().all(|(r, links)| links.is_empty() == r.removed_at.is_some()));
        assert_eq!(store.sitemap_by_id(sm).await.unwrap().rollup_urls, 450);
        // The same read again: the stored set knows the removals already.
        let write = read(&*store, "w1", site, sm, &next, 200, merge(true, T0 + 30)).await;
        assert_eq!((write.added, write.changed, write.removed), (0, 0, 0));
        // Written beside the staged path (the direct upsert): the stored set is dropped and the
        // next read rebuilds it from the links.
        store.upsert_urls(site, sm, &many("z", 3, "x"), T0 + 40).await.unwrap();
        let write = read(&*store, "w1", site, sm, &next, 200, merge(true, T0 + 50)).await;
        assert_eq!((write.added, write.changed, write.removed), (0, 0, 3));
        assert_eq!(store.sitemap_by_id(sm).await.unwrap().rollup_urls, 450);
    })
    .await;
}

#[tokio::test]
async fn an_index_rolls_up_its_childrens_distinct_urls_as_they_merge() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let index = store.add_sitemap(ann, site, "https://ann.example/i.xml", Source::Api, T0).await.unwrap().id;
        assert_eq!(store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap().len(), 1);
        let summary = mapwright_store::FetchSummary {
            kinds: Some("index".into()),
            url_count: Some(2),
            fetch_interval: 3600,
            failures: 0,
            format: Some("sitemapindex".into()),
            contents: None,
        };
        store.record_fetch_summary("w", index, &summary).await.unwrap();
        let mut children = Vec::new();
        for c in ["a", "b"] {
            let url = format!("https://ann.example/{c}.xml");
            children.push(store.add_sitemap_for_site(site, &url, Source::Index, Some(index), T0).await.unwrap().id);
        }
        let done = mapwright_store::DownloadRecord { downloaded_at: T0, status: "ok".into(), ..Default::default() };
        store.complete("w", index, &done, T0 + 10_000).await.unwrap();
        assert_eq!(store.lease_due_sitemaps("w", T0 + 1, 10, 60).await.unwrap().len(), 2);
        let (a, b) = (children[0], children[1]);
        let rollup = |id| {
            let store = store.clone();
            async move { store.sitemap_by_id(id).await.unwrap().rollup_urls }
        };
        // a: p0..p9, b: p5..p14: 15 distinct.
        let p = many("p", 15, "2024-01-01");
        read(&*store, "w", site, a, &p[..10], 4, merge(true, T0 + 2)).await;
        assert_eq!(rollup(index).await, 10);
        read(&*store, "w", site, b, &p[5..], 4, merge(true, T0 + 3)).await;
        assert_eq!((rollup(a).await, rollup(b).await, rollup(index).await), (10, 10, 15));
        // a drops p0..p2 (none of b's) and p5 (b lists it too): 12 distinct.
        let next: Vec<UrlRecord> = p[3..10].iter().filter(|u| !u.loc.ends_with("/p5")).cloned().collect();
        read(&*store, "w", site, a, &next, 4, merge(true, T0 + 4)).await;
        assert_eq!((rollup(a).await, rollup(index).await), (6, 12));
        // b adds a fresh URL: one more, by the delta alone.
        let mut more = p[5..].to_vec();
        more.push(url("https://ann.example/new", None));
        read(&*store, "w", site, b, &more, 4, merge(true, T0 + 5)).await;
        assert_eq!((rollup(b).await, rollup(index).await), (11, 13));
        // A download's completion keeps what the merges counted.
        let done = mapwright_store::DownloadRecord { downloaded_at: T0 + 5, status: "ok".into(), ..Default::default() };
        store.complete("w", b, &done, T0 + 10_000).await.unwrap();
        assert_eq!((rollup(b).await, rollup(index).await), (11, 13));
        // A resubmit of the live tree changes no URL set: the counts stand (not recounted).
        store.resubmit_sitemap(ann, index, T0 + 6).await.unwrap();
        assert_eq!((rollup(a).await, rollup(b).await, rollup(index).await), (6, 11, 13));
        store.resubmit_sitemap(ann, b, T0 + 7).await.unwrap();
        assert_eq!((rollup(b).await, rollup(index).await), (11, 13));
        // Removed, b counts nothing; resubmitted, it is back in the tree (its URLs forgotten
        // with the removal) and counts again from its next read.
        store.remove_sitemap(ann, b, T0 + 8).await.unwrap();
        assert_eq!((rollup(b).await, rollup(index).await), (0, 6));
        store.resubmit_sitemap(ann, b, T0 + 9).await.unwrap();
        assert_eq!((rollup(b).await, rollup(index).await), (0, 6));
        let leased = store.lease_due_sitemaps("w", T0 + 10, 10, 60).await.unwrap();
        assert!(leased.iter().any(|l| l.id == b), "b is due again");
        read(&*store, "w", site, b, &more, 4, merge(true, T0 + 11)).await;
        assert_eq!((rollup(b).await, rollup(index).await), (11, 13));
        // Added again while live (the index, a child): nothing moves.
        for url in ["https://ann.example/i.xml", "https://ann.example/b.xml"] {
            let again = store.add_sitemap(ann, site, url, Source::Api, T0 + 12).await.unwrap();
            assert!(again.id == index || again.id == b);
        }
        assert_eq!((rollup(a).await, rollup(b).await, rollup(index).await), (6, 11, 13));
    })
    .await;
}

#[tokio::test]
async fn the_key_of_a_whole_read_stands_until_the_next_merge_or_the_set_goes() {
    each_backend(|store| async move {
        let (ann, site, sm) = leased_sitemap(&*store).await;
        let key = |store: Arc<dyn Store>| async move { store.whole_read_key(sm).await.unwrap() };
        let whole = |at: i64, key: Option<&str>| mapwright_store::DownloadRecord {
            downloaded_at: at,
            status: "ok".into(),
            whole_read: key.map(str::to_owned),
            ..Default::default()
        };
        assert_eq!(key(store.clone()).await, None, "never read");
        let urls = many("p", 5, "2024-01-01");
        read(&*store, "w1", site, sm, &urls, 2, merge(true, T0 + 1)).await;
        store.complete("w1", sm, &whole(T0 + 1, Some("k1")), T0 + 2).await.unwrap();
        assert_eq!(key(store.clone()).await.as_deref(), Some("k1"));

        // A download that records no key (a 304, a failed fetch) leaves it.
        store.lease_due_sitemaps("w1", T0 + 2, 10, 60).await.unwrap();
        let not_modified = mapwright_store::DownloadRecord { status: "unchanged".into(), ..whole(T0 + 2, None) };
        store.complete("w1", sm, &not_modified, T0 + 3).await.unwrap();
        assert_eq!(key(store.clone()).await.as_deref(), Some("k1"));

        // A merge clears it at once: a job that dies before its `complete` leaves no key.
        store.lease_due_sitemaps("w1", T0 + 3, 10, 60).await.unwrap();
        read(&*store, "w1", site, sm, &urls[..2], 2, merge(false, T0 + 3)).await;
        assert_eq!(key(store.clone()).await, None, "merged, not completed");
        store.complete("w1", sm, &whole(T0 + 3, None), T0 + 4).await.unwrap();
        assert_eq!(key(store.clone()).await, None, "a read that was not whole keys nothing");

        // Keyed again, then the sitemap removed: its set goes, and the key with it.
        store.lease_due_sitemaps("w1", T0 + 4, 10, 60).await.unwrap();
        read(&*store, "w1", site, sm, &urls, 2, merge(true, T0 + 4)).await;
        store.complete("w1", sm, &whole(T0 + 4, Some("k2")), T0 + 5).await.unwrap();
        assert_eq!(key(store.clone()).await.as_deref(), Some("k2"));
        store.remove_sitemap(ann, sm, T0 + 5).await.unwrap();
        assert_eq!(key(store.clone()).await, None, "removed");
    })
    .await;
}
