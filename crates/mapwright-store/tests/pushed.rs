//! URLs pushed for a site (IndexNow): added or marked changed, lastmod and priority kept,
//! removed ones revived, and left to the next sweep when no sitemap lists them.

use mapwright_store::{Source, UrlQuery, UrlRecord};

use crate::support::{T0, each_backend, user, verified_site};

#[tokio::test]
async fn pushed_urls_are_added_or_marked_changed() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let sitemap = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap();
        let listed = |loc: &str| UrlRecord {
            loc: format!("https://ann.example/{loc}"),
            lastmod: Some("2024-01-01".into()),
            changefreq: Some("daily".into()),
            priority: Some(0.3),
        };
        store.upsert_urls(site, sitemap.id, &[listed("known"), listed("gone")], T0).await.unwrap();
        store.upsert_urls(site, sitemap.id, &[listed("known")], T0 + 1).await.unwrap();
        assert_eq!(store.sweep_urls(site, sitemap.id, T0 + 1, T0 + 1).await.unwrap(), 1);

        let mut pushed: Vec<String> = (0..1200).map(|i| format!("https://ann.example/new{i}")).collect();
        pushed.extend(["known", "gone", "known"].map(|p| format!("https://ann.example/{p}")));
        assert_eq!(store.record_pushed_urls(site, &pushed, T0 + 50, i64::MAX).await.unwrap().written, 1202);

        let query = UrlQuery { limit: 10_000, include_removed: true, ..Default::default() };
        let urls = store.list_urls(ann, site, query).await.unwrap().items;
        assert_eq!(urls.len(), 1202);
        assert!(urls.iter().all(|u| u.changed_at == T0 + 50 && u.removed_at.is_none()));
        let known = urls.iter().find(|u| u.loc.ends_with("/known")).unwrap();
        assert_eq!(
            (known.lastmod.as_deref(), known.priority, known.first_seen_at),
            (Some("2024-01-01"), Some(0.3), T0)
        );
        let new = urls.iter().find(|u| u.loc.ends_with("/new7")).unwrap();
        assert_eq!((new.lastmod.as_deref(), new.priority, new.first_seen_at), (None, None, T0 + 50));
        let frontier = store.frontier(ann, site, T0 + 50, 3).await.unwrap();
        assert!(frontier.iter().all(|u| u.changed_at == T0 + 50));

        // The next read of the sitemap lists only "known": the pushed rest is swept.
        store.upsert_urls(site, sitemap.id, &[listed("known")], T0 + 100).await.unwrap();
        assert_eq!(store.sweep_urls(site, sitemap.id, T0 + 100, T0 + 100).await.unwrap(), 1201);
        let live = store.list_urls(ann, site, UrlQuery::default()).await.unwrap().items;
        assert_eq!(live.len(), 1);
        assert_eq!(store.record_pushed_urls(site, &[], T0, i64::MAX).await.unwrap().written, 0);
    })
    .await;
}

/// A push is held to the site's URL quota as a read's merge is: known URLs are always marked,
/// new ones only while the site has room, and the rest are counted as refused, not stored.
#[tokio::test]
async fn pushed_urls_stay_within_the_sites_quota() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let sitemap = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap();
        let known: Vec<UrlRecord> = (0..3)
            .map(|i| UrlRecord {
                loc: format!("https://ann.example/k{i}"),
                lastmod: None,
                changefreq: None,
                priority: None,
            })
            .collect();
        store.upsert_urls(site, sitemap.id, &known, T0).await.unwrap();

        // Quota 5, 3 rows held: of 700 new URLs (past one chunk) 2 fit; the known ones pass.
        let mut pushed: Vec<String> = (0..700).map(|i| format!("https://ann.example/new{i}")).collect();
        pushed.push("https://ann.example/k1".into());
        let write = store.record_pushed_urls(site, &pushed, T0 + 10, 5).await.unwrap();
        assert_eq!((write.written, write.refused), (3, 698));
        let query = UrlQuery { limit: 10_000, include_removed: true, ..Default::default() };
        let urls = store.list_urls(ann, site, query).await.unwrap().items;
        assert_eq!(urls.len(), 5, "never past the quota");
        let k1 = urls.iter().find(|u| u.loc.ends_with("/k1")).unwrap();
        assert_eq!(k1.changed_at, T0 + 10, "a known URL is marked changed");

        // Full: nothing new is stored, and a push of only new URLs writes nothing at all.
        let write = store.record_pushed_urls(site, &["https://ann.example/late".into()], T0 + 20, 5).await.unwrap();
        assert_eq!((write.written, write.refused), (0, 1));
        assert_eq!(store.list_urls(ann, site, UrlQuery::default()).await.unwrap().items.len(), 5);
    })
    .await;
}
