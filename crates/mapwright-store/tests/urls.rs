//! URLs once per site: upsert, links to sitemaps, removal, pages, the crawl frontier.

use mapwright_store::{Actor, Source, Store, UrlQuery, UrlRecord};

use crate::support::{T0, each_backend, user, verified_site};

fn url(loc: &str, lastmod: Option<&str>, changefreq: Option<&str>, priority: Option<f64>) -> UrlRecord {
    UrlRecord { loc: loc.into(), lastmod: lastmod.map(Into::into), changefreq: changefreq.map(Into::into), priority }
}

async fn site_with_two_sitemaps(store: &dyn Store) -> (Actor, i64, i64, i64) {
    let ann = user(store, "ann@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    let a = store.add_sitemap(ann, site, "https://ann.example/a.xml", Source::Api, T0).await.unwrap();
    let b = store.add_sitemap(ann, site, "https://ann.example/b.xml", Source::Api, T0).await.unwrap();
    (ann, site, a.id, b.id)
}

async fn all_urls(store: &dyn Store, actor: Actor, site: i64) -> Vec<mapwright_store::UrlRow> {
    let query = UrlQuery { include_removed: true, ..Default::default() };
    store.list_urls(actor, site, query).await.unwrap().items
}

#[tokio::test]
async fn a_url_is_stored_once_per_site_with_its_sitemaps() {
    each_backend(|store| async move {
        let (ann, site, a, b) = site_with_two_sitemaps(&*store).await;
        let shared = url("https://ann.example/p", Some("2024-01-01"), Some("daily"), Some(0.8));
        store
            .upsert_urls(site, a, &[shared.clone(), url("https://ann.example/q", None, None, None)], T0)
            .await
            .unwrap();
        store.upsert_urls(site, b, &[shared], T0).await.unwrap();

        let urls = all_urls(&*store, ann, site).await;
        assert_eq!(urls.len(), 2);
        let p = &urls[0];
        assert_eq!(p.loc, "https://ann.example/p");
        assert_eq!(p.lastmod.as_deref(), Some("2024-01-01"));
        assert_eq!(p.changefreq.as_deref(), Some("daily"));
        assert_eq!(p.priority, Some(0.8));
        assert_eq!((p.first_seen_at, p.last_seen_at, p.changed_at, p.removed_at), (T0, T0, T0, None));
        assert_eq!(store.url_sitemaps(ann, p.id).await.unwrap(), vec![a, b]);
        assert_eq!(store.url_sitemaps(ann, urls[1].id).await.unwrap(), vec![a]);
    })
    .await;
}

#[tokio::test]
async fn a_changed_lastmod_marks_the_url_changed() {
    each_backend(|store| async move {
        let (ann, site, a, _) = site_with_two_sitemaps(&*store).await;
        store.upsert_urls(site, a, &[url("https://ann.example/p", Some("2024-01-01"), None, None)], T0).await.unwrap();
        store
            .upsert_urls(site, a, &[url("https://ann.example/p", Some("2024-01-01"), None, None)], T0 + 10)
            .await
            .unwrap();
        let p = &all_urls(&*store, ann, site).await[0];
        assert_eq!((p.first_seen_at, p.last_seen_at, p.changed_at), (T0, T0 + 10, T0));
        store
            .upsert_urls(site, a, &[url("https://ann.example/p", Some("2024-02-01"), None, None)], T0 + 20)
            .await
            .unwrap();
        let p = &all_urls(&*store, ann, site).await[0];
        assert_eq!((p.first_seen_at, p.changed_at), (T0, T0 + 20));
        assert_eq!(p.lastmod.as_deref(), Some("2024-02-01"));
    })
    .await;
}

#[tokio::test]
async fn urls_gone_from_every_sitemap_are_marked_removed() {
    each_backend(|store| async move {
        let (ann, site, a, b) = site_with_two_sitemaps(&*store).await;
        let (p, q, r) = (
            url("https://ann.example/p", None, None, None),
            url("https://ann.example/q", None, None, None),
            url("https://ann.example/r", None, None, None),
        );
        store.upsert_urls(site, a, &[p.clone(), q.clone(), r.clone()], T0).await.unwrap();
        store.upsert_urls(site, b, std::slice::from_ref(&q), T0).await.unwrap();
        assert_eq!(store.sweep_urls(site, a, T0, T0).await.unwrap(), 0);

        // The next read of a lists only p: q stays (b lists it), r is removed.
        store.upsert_urls(site, a, std::slice::from_ref(&p), T0 + 100).await.unwrap();
        assert_eq!(store.sweep_urls(site, a, T0 + 100, T0 + 100).await.unwrap(), 1);
        let urls = all_urls(&*store, ann, site).await;
        let removed: Vec<_> = urls.iter().map(|u| (u.loc.as_str(), u.removed_at)).collect();
        assert_eq!(
            removed,
            vec![
                ("https://ann.example/p", None),
                ("https://ann.example/q", None),
                ("https://ann.example/r", Some(T0 + 100))
            ]
        );
        let live = store.list_urls(ann, site, UrlQuery::default()).await.unwrap().items;
        assert_eq!(live.len(), 2);

        // Removing sitemap b removes q; r coming back is live and changed again.
        store.remove_sitemap(ann, b, T0 + 200).await.unwrap();
        store.upsert_urls(site, a, &[p, r], T0 + 300).await.unwrap();
        let urls = all_urls(&*store, ann, site).await;
        assert_eq!(urls[1].removed_at, Some(T0 + 200));
        assert_eq!((urls[2].removed_at, urls[2].changed_at), (None, T0 + 300));
    })
    .await;
}

#[tokio::test]
async fn urls_page_by_id() {
    each_backend(|store| async move {
        let (ann, site, a, _) = site_with_two_sitemaps(&*store).await;
        let records: Vec<_> = (0..25).map(|i| url(&format!("https://ann.example/{i:02}"), None, None, None)).collect();
        store.upsert_urls(site, a, &records, T0).await.unwrap();
        let mut seen = Vec::new();
        let mut query = UrlQuery { limit: 10, ..Default::default() };
        let mut pages = 0;
        loop {
            let page = store.list_urls(ann, site, query).await.unwrap();
            pages += 1;
            assert!(page.items.len() <= 10);
            seen.extend(page.items.into_iter().map(|u| u.loc));
            match page.next_after {
                Some(after) => query.after = after,
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, records.into_iter().map(|r| r.loc).collect::<Vec<_>>());
        // An exact multiple of the page size ends without an empty extra page.
        let page = store.list_urls(ann, site, UrlQuery { limit: 25, ..Default::default() }).await.unwrap();
        assert_eq!((page.items.len(), page.next_after), (25, None));
    })
    .await;
}

#[tokio::test]
async fn the_frontier_puts_changed_urls_first_then_priority() {
    each_backend(|store| async move {
        let (ann, site, a, _) = site_with_two_sitemaps(&*store).await;
        let old = [
            url("https://ann.example/low", None, Some("daily"), Some(0.1)),
            url("https://ann.example/yearly", None, Some("yearly"), None),
            url("https://ann.example/hourly", None, Some("hourly"), None),
            url("https://ann.example/high", None, None, Some(0.9)),
        ];
        store.upsert_urls(site, a, &old, T0).await.unwrap();
        store.upsert_urls(site, a, &[url("https://ann.example/new", None, None, Some(0.0))], T0 + 50).await.unwrap();
        store.upsert_urls(site, a, &[url("https://ann.example/newer", None, None, Some(0.0))], T0 + 60).await.unwrap();
        let order: Vec<_> = store.frontier(ann, site, T0 + 50, 100).await.unwrap().into_iter().map(|u| u.loc).collect();
        let expected = ["newer", "new", "high", "hourly", "yearly", "low"].map(|p| format!("https://ann.example/{p}"));
        assert_eq!(order, expected);
        assert_eq!(store.frontier(ann, site, T0 + 50, 2).await.unwrap().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_url_listed_twice_keeps_its_last_entry_and_big_batches_work() {
    each_backend(|store| async move {
        let (ann, site, a, _) = site_with_two_sitemaps(&*store).await;
        let twice = [
            url("https://ann.example/p", Some("2024-01-01"), None, None),
            url("https://ann.example/q", None, None, None),
            url("https://ann.example/p", Some("2024-03-01"), None, None),
        ];
        assert_eq!(store.upsert_urls(site, a, &twice, T0).await.unwrap(), 2);
        let urls = all_urls(&*store, ann, site).await;
        assert_eq!(urls.len(), 2);
        let p = urls.iter().find(|u| u.loc == "https://ann.example/p").unwrap();
        assert_eq!(p.lastmod.as_deref(), Some("2024-03-01"));

        // More than one chunk per call.
        let many: Vec<_> = (0..1234).map(|i| url(&format!("https://ann.example/m{i}"), None, None, None)).collect();
        assert_eq!(store.upsert_urls(site, a, &many, T0 + 1).await.unwrap(), 1234);
        assert_eq!(store.sweep_urls(site, a, T0 + 1, T0 + 1).await.unwrap(), 2);
        let page = store.list_urls(ann, site, UrlQuery { limit: 10_000, ..Default::default() }).await.unwrap();
        assert_eq!(page.items.len(), 1234);
    })
    .await;
}
