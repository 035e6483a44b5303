//! What changed, said plainly, in headless Chromium (the helpers of `e2e.rs`): an index whose
//! sitemap stamps every lastmod with its generation time, read twice by real reads of a site on
//! 127.0.0.1 and its pages checked twice; the child's "Can its lastmod be trusted?" and its
//! changes old -> new, the index's roll-up of its sitemaps' changes, and the site's URLs newly
//! failing and fixed. Every page is looked at at 1366x900 and at a phone's 390x844 (axe-core,
//! no sideways scroll, legible text, screenshots saved, each scrolled to the section).

use fantoccini::{Client, Locator};
use mapwright_server::jobs::checker::check_site;
use mapwright_store::Source;

use crate::e2e::{Console, until};
use crate::e2e_reads::{ann_site, drain};
use crate::sitehost::{index, urlset};

/// Brings the element `css` to the top of the window, so the screenshot shows it.
async fn scroll_to(c: &Client, css: &str) {
    c.execute(&format!("document.querySelector({css:?}).scrollIntoView();"), vec![]).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lastmod_trust_old_and_new_an_index_roll_up_and_check_changes_in_headless_chromium() {
    let console = Console::start(false, |_| {}).await;
    let (store, state) = (&console.store, &console.state);
    let (now, ann, site, web) = ann_site(&console).await;
    let d = mapwright_core::date::from_unix_seconds(now);
    let stamp = format!("{:04}-{:02}-{:02}T{:02}:{:02}:00Z", d.year, d.month, d.day, d.hour, d.minute);
    let locs: Vec<String> = (0..12).map(|i| web.url(&format!("/p{i}"))).collect();
    for i in 0..11 {
        web.put_etag(&format!("/p{i}"), "a page", Some("\"v1\""));
    }
    let child = web.url("/child.xml");
    web.put("/index.xml", &index(&[(&child, None)]));
    let listed: Vec<(&str, Option<&str>)> = locs.iter().map(|l| (l.as_str(), Some(stamp.as_str()))).collect();
    web.put_etag("/child.xml", &urlset(&listed), Some("\"c1\""));
    let sitemap = store.add_sitemap(ann, site.id, &web.url("/index.xml"), Source::Api, now).await.unwrap();
    // The index, then the child it names.
    drain(state).await;
    drain(state).await;
    check_site(state, site.id).await.unwrap().unwrap();
    // The second version: p0's lastmod moves on; p1 goes (failing since the check before), p11
    // comes (fixed).
    let mut second = listed.clone();
    second[0].1 = Some("2024-02-02T10:00:00Z");
    web.put_etag("/child.xml", &urlset(&second), Some("\"c2\""));
    web.remove("/p1");
    web.put_etag("/p11", "a page", Some("\"v1\""));
    store.resubmit_sitemap(ann, sitemap.id, now).await.unwrap();
    drain(state).await;
    check_site(state, site.id).await.unwrap().unwrap();
    let children = store.page_sitemaps(ann, site.id, Some(sitemap.id), None, 0, 10).await.unwrap().items;
    let child_id = children.iter().find(|s| s.url == child).expect("the index's child").id;

    let (site_id, index_id) = (site.id, sitemap.id);
    console
        .drive(move |tab| async move {
            let (c, base) = (&tab.c, &tab.base);
            tab.sign_in("ann@example.com").await;

            c.goto(&format!("{base}/sitemaps/{child_id}")).await.unwrap();
            until(c, "#lastmod-title", |t| t == "Can its lastmod be trusted?").await;
            let verdict = c.find(Locator::Css("#lastmod .badge")).await.unwrap().text().await.unwrap();
            assert_eq!(verdict, "Untrustworthy");
            scroll_to(c, "#lastmod").await;
            tab.look("sitemap-lastmod").await;
            let changed = c.find(Locator::Css("#changes-list ~ table .was")).await.unwrap().text().await.unwrap();
            assert!(changed.starts_with(&format!("lastmod {stamp} → 2024-02-02T10:00:00Z")), "{changed}");
            scroll_to(c, "#changes-list").await;
            tab.look("sitemap-changes-old-new").await;

            c.goto(&format!("{base}/sitemaps/{index_id}")).await.unwrap();
            until(c, "#changes", |t| t == "Changes in its sitemaps").await;
            let rows = c.find(Locator::Css("#changes ~ table td[data-label=Changes]")).await.unwrap();
            assert_eq!(rows.text().await.unwrap(), "+0 added, −0 removed, ~1 changed");
            scroll_to(c, "#changes").await;
            tab.look("index-changes").await;

            c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
            until(c, "#check-changes", |t| t == "Since the previous check: 1 newly failing, 1 fixed.").await;
            scroll_to(c, "#check-changes").await;
            tab.look("site-check-changes").await;
        })
        .await;
}
