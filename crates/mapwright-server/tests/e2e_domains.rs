//! Domain properties in headless Chromium (the helpers of `e2e.rs`), against a DNS server of
//! the test's own on 127.0.0.1: the owner adds `garden.test` on the Domains page, reads the
//! TXT record on the property's page, is told why "Verify now" fails before the record is
//! published, then sees the property and the site under it verified. Every page is looked at
//! at 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll, legible text, screenshots).

use std::net::SocketAddr;

use fantoccini::Locator;
use mapwright_server::{AppState, app};
use mapwright_store::Actor;

use crate::dns::DnsServer;
use crate::e2e::{axe_source, browser, click, fill, look, start_driver, until};

const PASSWORD: &str = "a long enough password";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_properties_in_headless_chromium() {
    let axe_js = axe_source();
    let driver = start_driver();
    let profile = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dns = DnsServer::start().await;
    let store = mapwright_store::open(None, dir.path()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mut state = AppState::new(store.clone(), false).allow_private_networks();
    state.dns = dns.config();
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });

    let hash = mapwright_store::secret::hash_password(PASSWORD).unwrap();
    let ann = Actor::from(&store.create_user("ann@example.com", &hash, false, 0).await.unwrap());
    let site = store.create_site(ann, "https://www.garden.test", 0).await.unwrap();

    let c = browser(&driver, profile.path()).await;
    let session = c.clone();
    let (base2, store2) = (base.clone(), store.clone());
    let dns = std::sync::Arc::new(dns);
    let dns2 = dns.clone();
    let outcome = tokio::spawn(async move {
        let (c, base, store, dns) = (&session, &base2, &store2, &dns2);
        c.goto(&format!("{base}/signin")).await.unwrap();
        fill(c, "#email", "ann@example.com").await;
        fill(c, "#password", PASSWORD).await;
        click(c, Locator::Css("main form button[type=submit]")).await;
        until(c, "h1", |t| t == "My sitemaps").await;

        click(c, Locator::Css("header nav a[href='/domains']")).await;
        until(c, "h1", |t| t == "Domain properties").await;
        c.set_window_size(1366, 900).await.unwrap();
        look(c, &axe_js, "domains-empty").await;
        fill(c, "#domain", "Garden.test").await;
        click(c, Locator::Css("main form[action='/domains'] button[type=submit]")).await;
        until(c, "h1", |t| t == "garden.test").await;
        let property = store.list_domains(ann).await.unwrap().pop().unwrap();
        let value = format!("mapwright-site-verification={}", property.verification_token);
        until(c, "#record", |t| t.contains(&value)).await;
        until(c, "#covered-sites", |t| t.contains("https://www.garden.test") && t.contains("Not verified")).await;

        click(c, Locator::Css("main form[action$='/verify'] button")).await;
        until(c, "#flash-error", |t| t.contains("garden.test does not exist in DNS (NXDOMAIN)")).await;
        look(c, &axe_js, "domain-refused").await;

        dns.publish("garden.test", &["v=spf1 -all", &value]);
        click(c, Locator::Css("main form[action$='/verify'] button")).await;
        until(c, "main", |t| t.contains(&format!("Verified: garden.test has the TXT record {value}."))).await;
        until(c, "#covered-sites", |t| t.contains("Verified") && !t.contains("Not verified")).await;
        look(c, &axe_js, "domain-verified").await;
        c.goto(&format!("{base}/domains")).await.unwrap();
        until(c, "#domains", |t| t.contains("garden.test") && t.contains("Verified")).await;
        look(c, &axe_js, "domains-list").await;
    })
    .await;
    let _ = c.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
    assert!(store.site_by_id(site.id).await.unwrap().verified_at.is_some());
}
