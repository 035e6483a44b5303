//! The pages of a read's consequences in headless Chromium (the helpers of `e2e.rs`): the
//! sitemap page's "Changes by read" after two real reads of a site on 127.0.0.1 (the second
//! added, removed and changed URLs), one read's list of changes, and the site's webhooks (added
//! from the form, its secret shown once, its empty delivery log). Every page is looked at at
//! 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll, legible text, screenshots
//! saved).

use fantoccini::Locator;
use mapwright_server::AppState;
use mapwright_server::jobs::reads::run_job;
use mapwright_store::{Actor, Site, Source};

use crate::e2e::{Console, click, fill, until};
use crate::sitehost::{SiteHost, urlset};

/// Runs the jobs due (a little ahead of the clock), as a worker would.
pub(crate) async fn drain(state: &AppState) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    for job in state.store.lease_due_sitemaps("e2e", now + 5, 10, 60).await.unwrap() {
        run_job(state, "e2e", &job).await.unwrap();
    }
}

/// Ann (a user of the console), her verified site and its host on 127.0.0.1, made at the
/// clock's time (so that the pages say "just now", not "56 years ago"), with that time.
pub(crate) async fn ann_site(console: &Console) -> (i64, Actor, Site, SiteHost) {
    let web = SiteHost::start().await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let ann = console.user("ann@example.com", now).await;
    let site = console.store.create_site(ann, &web.origin, now).await.unwrap();
    console.store.record_verification(site.id, true, now).await.unwrap();
    (now, ann, site, web)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_by_read_and_webhooks_in_headless_chromium() {
    let console = Console::start(false, |_| {}).await;
    let (store, state) = (&console.store, &console.state);

    // Ann's site on 127.0.0.1, read twice: the second read changes a, keeps b, drops c, adds d.
    let (now, ann, site, web) = ann_site(&console).await;
    let (a, b, c, d) = (web.url("/a"), web.url("/b"), web.url("/c"), web.url("/d"));
    web.put_etag("/sitemap.xml", &urlset(&[(&a, Some("2024-01-01")), (&b, None), (&c, None)]), Some("\"v1\""));
    let sitemap = store.add_sitemap(ann, site.id, &web.url("/sitemap.xml"), Source::Api, now).await.unwrap();
    drain(state).await;
    web.put_etag("/sitemap.xml", &urlset(&[(&a, Some("2024-02-02")), (&b, None), (&d, None)]), Some("\"v2\""));
    store.resubmit_sitemap(ann, sitemap.id, now).await.unwrap();
    drain(state).await;

    let (site_id, sitemap_id) = (site.id, sitemap.id);
    console
        .drive(|tab| async move {
            let (c, base) = (&tab.c, &tab.base);
            tab.sign_in("ann@example.com").await;

            c.goto(&format!("{base}/sitemaps/{sitemap_id}")).await.unwrap();
            until(c, "#changes", |t| t == "Changes by read").await;
            let table = c.find(Locator::XPath("//h2[@id='changes']/following-sibling::table[1]")).await.unwrap();
            let text = table.text().await.unwrap();
            assert!(text.contains("1 added") && text.contains("1 removed") && text.contains("1 changed"), "{text}");
            tab.look("sitemap-changes").await;
            click(c, Locator::XPath("//h2[@id='changes']/following-sibling::table[1]//a")).await;
            until(c, "#changes-list", |t| t.starts_with("URLs changed by the read of")).await;
            tab.look("sitemap-changes-list").await;

            c.goto(&format!("{base}/sites/{site_id}/webhooks")).await.unwrap();
            until(c, "#no-webhooks", |t| t == "No webhook yet.").await;
            fill(c, "#webhook-url", "https://hooks.example/in").await;
            click(c, Locator::XPath("//button[text()='Add webhook']")).await;
            until(c, "#new-secret", |t| !t.is_empty()).await;
            tab.look("webhooks").await;
            click(c, Locator::Css("#webhooks a")).await;
            until(c, "#no-attempts", |t| t == "Nothing was sent yet.").await;
            tab.look("webhook-log").await;
        })
        .await;
}
