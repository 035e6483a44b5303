//! The site overview in headless Chromium (the helpers of `e2e.rs`): the owner's site page
//! (the domain property that keeps it verified, linked; every sitemap with how it came; the
//! totals; members; IndexNow submissions), the delete confirmation naming who loses access,
//! and the same page for a reader without the owners' buttons. Every page is looked at at
//! 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll, legible text, screenshots).

use fantoccini::Locator;
use mapwright_store::{DownloadRecord, Role, Source};

use crate::e2e::{Console, click, until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_site_overview_in_headless_chromium() {
    let console = Console::start(false, |_| {}).await;
    let store = &console.store;
    // Stamped with the clock, so the pages say "1 minute ago".
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let made = now - 60;
    let ann = console.user("ann@example.com", made).await;
    let bob = console.user("bob@example.com", made).await;
    let site = store.create_site(ann, "https://shop.example", made).await.unwrap();
    let domain = store.create_domain(ann, "shop.example", made).await.unwrap();
    store.record_domain_verification(domain.id, true, made).await.unwrap();
    store.record_proof(site.id, Some("domain"), Some("shop.example"), made).await.unwrap();
    let index = store.add_sitemap(ann, site.id, "https://shop.example/sitemap.xml", Source::Api, made).await.unwrap();
    store.add_sitemap_for_site(site.id, "https://shop.example/news.xml", Source::Robots, None, made).await.unwrap();
    store
        .add_sitemap_for_site(site.id, "https://shop.example/products.xml", Source::Index, Some(index.id), made)
        .await
        .unwrap();
    for s in store.lease_due_sitemaps("w", now, 10, 600).await.unwrap() {
        let failed = s.url.ends_with("news.xml");
        let download = DownloadRecord {
            downloaded_at: now - 30,
            status: if failed { "failed" } else { "ok" }.into(),
            http_status: Some(if failed { 404 } else { 200 }),
            url_count: 10,
            ..Default::default()
        };
        store.complete("w", s.id, &download, now + 86_400).await.unwrap();
    }
    let (_, link) = store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, made, 3600).await.unwrap();
    store.accept_invitation(bob, &link, made).await.unwrap();
    store.create_invitation(ann, site.id, "carol@example.com", Role::Owner, made, 86_400).await.unwrap();
    let key_file = "https://shop.example/0123abcd-key.txt";
    store.record_indexnow_receipt(site.id, now - 50, 12, key_file, None).await.unwrap();
    let refused = format!("the key is not valid: {key_file} does not hold the key");
    store.record_indexnow_receipt(site.id, now - 20, 1, key_file, Some(refused.as_str())).await.unwrap();

    let (site_id, domain_id) = (site.id, domain.id);
    console
        .drive(|tab| async move {
            let (c, base) = (&tab.c, &tab.base);
            tab.sign_in("ann@example.com").await;
            c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
            let proof = until(c, "#proof-in-force", |t| t.contains("shop.example")).await;
            assert!(proof.contains("domain property"), "{proof}");
            c.find(Locator::Css(&format!("#proof-in-force a[href='/domains/{domain_id}']"))).await.unwrap();
            let rows = until(c, "#site-sitemaps tbody", |t| t.contains("products.xml")).await;
            for how in ["Submitted", "robots.txt", "In an index", "Couldn't fetch"] {
                assert!(rows.contains(how), "{how}: {rows}");
            }
            until(c, "#totals", |t| t.contains("3 sitemaps")).await;
            until(c, "#member-list", |t| t.contains("bob@example.com · reader")).await;
            until(c, "#indexnow-receipts", |t| t.contains("Refused") && t.contains("Accepted")).await;
            tab.look_wide("site-overview-owner").await;

            click(c, Locator::Css("main a[href$='/delete']")).await;
            until(c, "h1", |t| t == "Delete this site?").await;
            until(c, "#members-losing", |t| t.contains("bob@example.com")).await;
            until(c, "#invitations-losing", |t| t.contains("carol@example.com")).await;
            tab.look_wide("site-delete-confirm").await;
            click(c, Locator::Css("header form button")).await;
            until(c, "h1", |t| t == "Sign in").await;

            tab.sign_in("bob@example.com").await;
            c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
            let proof = until(c, "#proof-in-force", |t| t.contains("shop.example")).await;
            assert!(proof.contains("of ann@example.com"), "{proof}");
            let main = until(c, "main", |t| t.contains("you are a reader of this site")).await;
            for owners_only in ["Verify now", "Delete site", "Invite or remove members", "Check now"] {
                assert!(!main.contains(owners_only), "{owners_only} shown to a reader");
            }
            assert!(main.contains("products.xml") && main.contains("In an index"), "{main}");
            tab.look_wide("site-overview-reader").await;
        })
        .await;
}
