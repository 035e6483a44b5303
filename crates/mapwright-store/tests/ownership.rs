//! A user sees and changes only their own sites, sitemaps, downloads and URLs; an admin all.

use mapwright_store::{Actor, DownloadRecord, Error, Source, Store, UrlQuery, UrlRecord};

use crate::support::{T0, each_backend, user, verified_site};

fn not_found<T: std::fmt::Debug>(result: Result<T, Error>) {
    match result {
        Err(Error::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// Ann's site with a sitemap, one download and one URL; returns (site, sitemap, download, url).
async fn anns_data(store: &dyn Store, ann: Actor) -> (i64, i64, i64, i64) {
    let site = verified_site(store, ann, "https://ann.example").await;
    let sitemap = store.add_sitemap(ann, site, "https://ann.example/sitemap.xml", Source::Api, T0).await.unwrap();
    let leased = store.lease_due_sitemaps("w", T0, 10, 60).await.unwrap();
    assert_eq!(leased.len(), 1);
    let download = store
        .complete(
            "w",
            sitemap.id,
            &DownloadRecord { downloaded_at: T0, status: "ok".into(), ..Default::default() },
            T0 + 86400,
        )
        .await
        .unwrap();
    let url = UrlRecord { loc: "https://ann.example/a".into(), lastmod: None, changefreq: None, priority: None };
    store.upsert_urls(site, sitemap.id, &[url], T0).await.unwrap();
    let page = store.list_urls(ann, site, UrlQuery::default()).await.unwrap();
    (site, sitemap.id, download, page.items[0].id)
}

#[tokio::test]
async fn a_user_never_reads_another_users_data() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let (site, sitemap, download, url) = anns_data(&*store, ann).await;
        let bobs_site = verified_site(&*store, bob, "https://bob.example").await;

        assert_eq!(store.list_sites(bob).await.unwrap().iter().map(|s| s.id).collect::<Vec<_>>(), vec![bobs_site]);
        not_found(store.site(bob, site).await);
        not_found(store.list_sitemaps(bob, site).await);
        not_found(store.sitemap(bob, sitemap).await);
        not_found(store.list_downloads(bob, sitemap, 10).await);
        not_found(store.list_findings(bob, download).await);
        not_found(store.list_urls(bob, site, UrlQuery::default()).await);
        not_found(store.url_sitemaps(bob, url).await);
        not_found(store.frontier(bob, site, 0, 10).await);

        // Ann sees all of it.
        assert_eq!(store.site(ann, site).await.unwrap().owner_id, ann.user_id);
        assert_eq!(store.list_downloads(ann, sitemap, 10).await.unwrap()[0].id, download);
        assert_eq!(store.url_sitemaps(ann, url).await.unwrap(), vec![sitemap]);
    })
    .await;
}

#[tokio::test]
async fn a_user_never_changes_another_users_data() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let (site, sitemap, _, _) = anns_data(&*store, ann).await;

        not_found(store.add_sitemap(bob, site, "https://ann.example/evil.xml", Source::Api, T0).await);
        not_found(store.resubmit_sitemap(bob, sitemap, T0 + 5).await);
        not_found(store.remove_sitemap(bob, sitemap, T0 + 5).await);
        not_found(store.delete_site(bob, site).await);

        // Nothing changed.
        let sitemaps = store.list_sitemaps(ann, site).await.unwrap();
        assert_eq!(sitemaps.len(), 1);
        assert_eq!(sitemaps[0].next_fetch_at, T0 + 86400);
        assert_eq!(sitemaps[0].removed_at, None);
        assert_eq!(store.list_urls(ann, site, UrlQuery::default()).await.unwrap().items.len(), 1);

        // Bob may add the same origin as a site of his own (unverified until he proves it).
        let bobs = store.create_site(bob, "https://ann.example", T0).await.unwrap();
        assert_ne!(bobs.id, site);
        assert_eq!(bobs.verified_at, None);
        let err = store.create_site(bob, "https://ann.example", T0).await.unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");
    })
    .await;
}

#[tokio::test]
async fn an_admin_sees_and_changes_everything() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let root = user(&*store, "root@example.com", true).await;
        let (site, sitemap, download, _) = anns_data(&*store, ann).await;
        assert_eq!(store.list_sites(root).await.unwrap().len(), 1);
        assert_eq!(store.sitemap(root, sitemap).await.unwrap().site_id, site);
        assert!(store.list_findings(root, download).await.unwrap().is_empty());
        store.resubmit_sitemap(root, sitemap, T0 + 7).await.unwrap();
        assert_eq!(store.sitemap(ann, sitemap).await.unwrap().next_fetch_at, T0 + 7);
        store.delete_site(root, site).await.unwrap();
        assert!(store.list_sites(ann).await.unwrap().is_empty());
    })
    .await;
}
