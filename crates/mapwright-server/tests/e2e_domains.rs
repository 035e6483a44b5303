//! Domain properties in headless Chromium (the helpers of `e2e.rs`), against a DNS server of
//! the test's own on 127.0.0.1: the owner adds `garden.test` on the Domains page, reads the
//! TXT record on the property's page, is told why "Verify now" fails before the record is
//! published, then sees the property and the site under it verified. Every page is looked at
//! at 1366x900 and at a phone's 390x844 (axe-core, no sideways scroll, legible text, screenshots).

use fantoccini::Locator;

use crate::dns::DnsServer;
use crate::e2e::{Console, click, fill, until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_properties_in_headless_chromium() {
    let dns = DnsServer::start().await;
    let console = Console::start(false, |state| state.dns = dns.config()).await;
    let store = &console.store;
    let ann = console.user("ann@example.com", 0).await;
    let site = store.create_site(ann, "https://www.garden.test", 0).await.unwrap();

    let store2 = store.clone();
    let dns = std::sync::Arc::new(dns);
    let dns2 = dns.clone();
    console
        .drive(|tab| async move {
            let (c, base, store, dns) = (&tab.c, &tab.base, &store2, &dns2);
            tab.sign_in("ann@example.com").await;

            click(c, Locator::Css("header nav a[href='/domains']")).await;
            until(c, "h1", |t| t == "Domain properties").await;
            c.set_window_size(1366, 900).await.unwrap();
            tab.look("domains-empty").await;
            fill(c, "#domain", "Garden.test").await;
            click(c, Locator::Css("main form[action='/domains'] button[type=submit]")).await;
            until(c, "h1", |t| t == "garden.test").await;
            let property = store.list_domains(ann).await.unwrap().pop().unwrap();
            let value = format!("mapwright-site-verification={}", property.verification_token);
            until(c, "#record", |t| t.contains(&value)).await;
            until(c, "#covered-sites", |t| t.contains("https://www.garden.test") && t.contains("Not verified")).await;

            click(c, Locator::Css("main form[action$='/verify'] button")).await;
            until(c, "#flash-error", |t| t.contains("garden.test does not exist in DNS (NXDOMAIN)")).await;
            tab.look("domain-refused").await;

            dns.publish("garden.test", &["v=spf1 -all", &value]);
            click(c, Locator::Css("main form[action$='/verify'] button")).await;
            until(c, "main", |t| t.contains(&format!("Verified: garden.test has the TXT record {value}."))).await;
            until(c, "#covered-sites", |t| t.contains("Verified") && !t.contains("Not verified")).await;
            tab.look("domain-verified").await;
            c.goto(&format!("{base}/domains")).await.unwrap();
            until(c, "#domains", |t| t.contains("garden.test") && t.contains("Verified")).await;
            tab.look("domains-list").await;
        })
        .await;
    assert!(store.site_by_id(site.id).await.unwrap().verified_at.is_some());
}
