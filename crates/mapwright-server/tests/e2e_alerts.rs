//! E-mail alerts in headless Chromium (the helpers of `e2e.rs`): a worsening mails Ann (the
//! link read from the outbox); its page, opened without signing in, changes nothing until its
//! button is pressed; then Ann, signed in, turns alerts back on from the site's page. Every
//! page is looked at at 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll,
//! legible text, screenshots saved).

use std::time::Duration;

use fantoccini::Locator;
use mapwright_store::{DownloadRecord, Source};

use crate::e2e::{Console, click, until};
use crate::support::{poll_until, read_outbox};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unsubscribe_link_and_the_site_pages_setting_in_headless_chromium() {
    let console = Console::start(true, |_| {}).await;
    let (store, state, base, outbox) = (&console.store, &console.state, &console.base, &console.outbox);

    // Ann's sitemap read twice as the workers would: Success, then Couldn't fetch.
    let ann = console.user("ann@example.com", 0).await;
    let site = store.create_site(ann, "https://shop.example", 0).await.unwrap();
    store.record_verification(site.id, true, 0).await.unwrap();
    let sitemap = store.add_sitemap(ann, site.id, "https://shop.example/products.xml", Source::Api, 0).await.unwrap();
    for (at, status, http) in [(1, "ok", 200), (2, "failed", 503)] {
        let leased = store.lease_due_sitemaps("w", at, 10, 60).await.unwrap();
        assert_eq!(leased.len(), 1);
        let record =
            DownloadRecord { downloaded_at: at, status: status.into(), http_status: Some(http), ..Default::default() };
        store.complete("w", sitemap.id, &record, at).await.unwrap();
        mapwright_server::jobs::alerts::after_read(state, sitemap.id).await;
    }
    let token = poll_until(Duration::from_secs(5), || async {
        let mail = read_outbox(outbox).pop()?;
        assert!(mail.body.contains("now: Couldn't fetch (HTTP 503)"), "{}", mail.body);
        let (_, rest) = mail.body.split_once(&format!("{base}/alerts/unsubscribe?token="))?;
        Some(rest.chars().take_while(char::is_ascii_hexdigit).collect::<String>())
    })
    .await
    .expect("an alert mail with its link in the outbox");

    let site_id = site.id;
    console
        .drive(|tab| async move {
            let (c, base) = (&tab.c, &tab.base);
            c.goto(&format!("{base}/alerts/unsubscribe?token={token}")).await.unwrap();
            until(c, "#alerts-state", |t| t.contains("to ann@example.com are on")).await;
            tab.look_wide("alerts-link").await;
            click(c, Locator::Css("main form[action='/alerts/unsubscribe'] button")).await;
            until(c, "#alerts-done", |t| t.contains("no more alert mail about this site to ann@example.com")).await;
            tab.look_wide("alerts-unsubscribed").await;

            tab.sign_in("ann@example.com").await;
            c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
            until(c, "#alerts-state", |t| t.starts_with("Off:")).await;
            click(c, Locator::XPath("//button[text()='Turn alerts on']")).await;
            until(c, ".flash", |t| t == "E-mail alerts are on for this site.").await;
            until(c, "#alerts-state", |t| t.starts_with("On:")).await;
            tab.look_wide("site-alerts-on").await;
        })
        .await;
}
