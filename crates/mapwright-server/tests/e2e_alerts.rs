//! E-mail alerts in headless Chromium (the helpers of `e2e.rs`): a worsening mails Ann (the
//! link read from the outbox); its page, opened without signing in, changes nothing until its
//! button is pressed; then Ann, signed in, turns alerts back on from the site's page. Every
//! page is looked at at 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll,
//! legible text, screenshots saved).

use std::net::SocketAddr;

use fantoccini::Locator;
use mapwright_server::{AppState, app};
use mapwright_store::{Actor, DownloadRecord, Source};

use crate::e2e::{axe_source, browser, click, fill, look, start_driver, until};

const PASSWORD: &str = "a long enough password";

async fn look_wide(c: &fantoccini::Client, axe_js: &str, name: &str) {
    c.set_window_size(1366, 900).await.unwrap();
    look(c, axe_js, name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unsubscribe_link_and_the_site_pages_setting_in_headless_chromium() {
    let axe_js = axe_source();
    let driver = start_driver();
    let profile = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(None, dir.path()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let outbox = dir.path().join("outbox");
    let mailer = mapwright_server::mail::Mailer::outbox(&outbox, "mapwright <mapwright@localhost>", &base).unwrap();
    let state = AppState::new(store.clone(), false).allow_private_networks().with_mail(mailer);
    let service = app(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });

    // Ann's sitemap read twice as the workers would: Success, then Couldn't fetch.
    let hash = mapwright_store::secret::hash_password(PASSWORD).unwrap();
    let ann = Actor::from(&store.create_user("ann@example.com", &hash, false, 0).await.unwrap());
    let site = store.create_site(ann, "https://shop.example", 0).await.unwrap();
    store.record_verification(site.id, true, 0).await.unwrap();
    let sitemap = store.add_sitemap(ann, site.id, "https://shop.example/products.xml", Source::Api, 0).await.unwrap();
    for (at, status, http) in [(1, "ok", 200), (2, "failed", 503)] {
        let leased = store.lease_due_sitemaps("w", at, 10, 60).await.unwrap();
        assert_eq!(leased.len(), 1);
        let record =
            DownloadRecord { downloaded_at: at, status: status.into(), http_status: Some(http), ..Default::default() };
        store.complete("w", sitemap.id, &record, at).await.unwrap();
        mapwright_server::alerts::after_read(&state, sitemap.id).await;
    }
    let mut link = None;
    for _ in 0..100 {
        link = crate::support::read_outbox(&outbox).pop().and_then(|m| {
            assert!(m.body.contains("now: Couldn't fetch (HTTP 503)"), "{}", m.body);
            let (_, rest) = m.body.split_once(&format!("{base}/alerts/unsubscribe?token="))?;
            Some(rest.chars().take_while(char::is_ascii_hexdigit).collect::<String>())
        });
        if link.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let token = link.expect("an alert mail with its link in the outbox");

    let c = browser(&driver, profile.path()).await;
    let session = c.clone();
    let (site_id, base2) = (site.id, base.clone());
    let outcome = tokio::spawn(async move {
        let c = &session;
        let base = &base2;
        c.goto(&format!("{base}/alerts/unsubscribe?token={token}")).await.unwrap();
        until(c, "#alerts-state", |t| t.contains("to ann@example.com are on")).await;
        look_wide(c, &axe_js, "alerts-link").await;
        click(c, Locator::Css("main form[action='/alerts/unsubscribe'] button")).await;
        until(c, "#alerts-done", |t| t.contains("no more alert mail about this site to ann@example.com")).await;
        look_wide(c, &axe_js, "alerts-unsubscribed").await;

        c.goto(&format!("{base}/signin")).await.unwrap();
        fill(c, "#email", "ann@example.com").await;
        fill(c, "#password", PASSWORD).await;
        click(c, Locator::Css("main form button[type=submit]")).await;
        until(c, "h1", |t| t == "My sitemaps").await;
        c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
        until(c, "#alerts-state", |t| t.starts_with("Off:")).await;
        click(c, Locator::XPath("//button[text()='Turn alerts on']")).await;
        until(c, ".flash", |t| t == "E-mail alerts are on for this site.").await;
        until(c, "#alerts-state", |t| t.starts_with("On:")).await;
        look_wide(c, &axe_js, "site-alerts-on").await;
    })
    .await;
    let _ = c.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
