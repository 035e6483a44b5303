//! Several users per site and the sorted, filtered table, in headless Chromium (the helpers of
//! `e2e.rs`): an owner invites through the members page (the link read from the outbox), sorts
//! and filters the table with its GET form; the invited reader signs in, accepts on the link's
//! page and sees the site without the owners' buttons. Every page is looked at at 1366x900
//! and at a phone's 390x844 (axe-core, no sideways scroll, legible text, screenshots saved).

use std::time::Duration;

use fantoccini::Locator;
use mapwright_store::Source;

use crate::e2e::{Console, click, fill, until};
use crate::support::{poll_until, read_outbox};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_and_the_sorted_table_in_headless_chromium() {
    let console = Console::start(true, |_| {}).await;
    let store = &console.store;

    // Ann's verified site with three sitemaps (stored as the workers would), Bob's account.
    // Stamped with the clock (made a minute ago, read since), so that the pages say "1 minute
    // ago", not "56 years ago".
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let made = now - 60;
    let ann = console.user("ann@example.com", made).await;
    console.user("bob@example.com", made).await;
    let site = store.create_site(ann, "https://shop.example", made).await.unwrap();
    store.record_verification(site.id, true, made).await.unwrap();
    for name in ["products.xml", "news.xml", "blog.xml"] {
        store.add_sitemap(ann, site.id, &format!("https://shop.example/{name}"), Source::Api, made).await.unwrap();
    }
    let leased = store.lease_due_sitemaps("w", now, 10, 600).await.unwrap();
    assert_eq!(leased.len(), 3);
    for s in &leased {
        let url = store.sitemap_by_id(s.id).await.unwrap().url;
        let (status, at) = match url.rsplit('/').next().unwrap() {
            "products.xml" => ("ok", now - 3),
            "news.xml" => ("errors", now - 2),
            _ => ("failed", now - 1),
        };
        let download = mapwright_store::DownloadRecord {
            downloaded_at: at,
            status: status.into(),
            http_status: Some(if status == "failed" { 404 } else { 200 }),
            url_count: 10,
            ..Default::default()
        };
        store.complete("w", s.id, &download, now + 86_400).await.unwrap();
    }

    let (site_id, outbox) = (site.id, console.outbox.clone());
    console
        .drive(|tab| async move {
            let (c, base) = (&tab.c, &tab.base);
            tab.sign_in("ann@example.com").await;
            // The table, filtered and sorted through its form.
            c.goto(&format!("{base}/")).await.unwrap();
            // news.xml's read was judged "errors" with no finding counted: its word is that verdict.
            until(c, "table.sitemaps tbody", |t| t.contains("news.xml") && t.contains("Has errors")).await;
            c.find(Locator::Css("#f-status")).await.unwrap().select_by_value("failed").await.unwrap();
            click(c, Locator::Css("#table-filters button[type=submit]")).await;
            until(c, "table.sitemaps tbody", |t| t.contains("blog.xml") && !t.contains("products.xml")).await;
            tab.look_wide("table-filtered").await;
            c.goto(&format!("{base}/?sort=status&order=desc")).await.unwrap();
            until(c, "table.sitemaps tbody tr:first-child", |t| t.contains("blog.xml")).await;
            tab.look_wide("table-sorted").await;

            // Ann invites Bob as a reader.
            c.goto(&format!("{base}/sites/{site_id}")).await.unwrap();
            click(c, Locator::Css("#members-link")).await;
            until(c, "h1", |t| t == "Members").await;
            fill(c, "#invite-email", "bob@example.com").await;
            click(c, Locator::Css("main form[action$='/invitations'] button[type=submit]")).await;
            until(c, "main", |t| t.contains("Invitation mailed to bob@example.com.")).await;
            tab.look_wide("members-owner").await;
            let token = poll_until(Duration::from_secs(5), || async {
                let mail = read_outbox(&outbox).pop()?;
                let (_, rest) = mail.body.split_once("/invitations/accept?token=")?;
                Some(rest.chars().take_while(char::is_ascii_hexdigit).collect::<String>())
            })
            .await
            .expect("an invitation mail with its link in the outbox");
            click(c, Locator::Css("header form button")).await;
            until(c, "h1", |t| t == "Sign in").await;

            // The link before signing in, then Bob accepts it.
            c.goto(&format!("{base}/invitations/accept?token={token}")).await.unwrap();
            until(c, "#invitation", |t| t.contains("ann@example.com invites bob@example.com")).await;
            tab.look_wide("invitation-visitor").await;
            tab.sign_in("bob@example.com").await;
            c.goto(&format!("{base}/invitations/accept?token={token}")).await.unwrap();
            until(c, "main", |t| t.contains("Accept invitation")).await;
            tab.look_wide("invitation").await;
            click(c, Locator::Css("main form[action='/invitations/accept'] button")).await;
            until(c, "main", |t| t.contains("You are now a member of https://shop.example.")).await;
            let main = until(c, "main", |t| t.contains("you are a reader of this site")).await;
            for button in ["Verify now", "Check now", "Delete site"] {
                assert!(!main.contains(button), "{button} shown to a reader");
            }
            tab.look_wide("site-reader").await;
            click(c, Locator::Css("#members-link")).await;
            until(c, "#my-role", |t| t == "a reader").await;
            tab.look_wide("members-reader").await;
        })
        .await;
}
