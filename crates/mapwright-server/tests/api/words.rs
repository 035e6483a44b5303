//! One word for one state (issue 32 item 7, issue 34 items 2 and 4-7): every filter lists
//! exactly the rows that show its word, in the API (`status_word`) and the console's table; a
//! sitemap of a site that lost its verification is paused everywhere (no "Success", no "Next
//! read: just now", Resubmit saying it waits); an index says how many of the sitemaps it lists
//! failed without counting itself; a reader is offered no owner's action on any sitemap page.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use mapwright_store::{Actor, DownloadRecord, FetchSummary, FindingRecord, IndexChild, Role, Site, Source};
use scraper::{Html, Selector};

use super::{call_json, user, verified_site};
use crate::console::text;
use crate::support::{Auth, TestApp, each_backend};

/// Stores a read of sitemap `id`: its status, one finding of `severity` when given, and `index`
/// for an index file.
async fn read(app: &TestApp, id: i64, status: &str, severity: Option<&str>, index: bool) {
    let worker = format!("w{id}");
    let leased = app.store.lease_due_sitemaps(&worker, 4_000_000_000, 100, 60).await.unwrap();
    assert!(leased.iter().any(|l| l.id == id), "sitemap {id} is due");
    for other in leased.iter().filter(|l| l.id != id) {
        app.store.release(&worker, other.id).await.unwrap();
    }
    let summary = FetchSummary {
        kinds: Some(if index { "index" } else { "web" }.into()),
        url_count: Some(1),
        fetch_interval: 86_400,
        failures: 0,
        format: Some(if index { "sitemapindex" } else { "urlset" }.into()),
        contents: None,
    };
    app.store.record_fetch_summary(&worker, id, &summary).await.unwrap();
    let findings = severity
        .map(|s| FindingRecord {
            rule: "loc-missing".into(),
            severity: s.into(),
            line: Some(1),
            col: Some(1),
            loc: None,
            message: "a finding".into(),
        })
        .into_iter()
        .collect();
    let download = DownloadRecord {
        downloaded_at: 100,
        status: status.into(),
        http_status: Some(if status == "failed" { 404 } else { 200 }),
        findings,
        ..Default::default()
    };
    app.store.complete(&worker, id, &download, 4_100_000_000).await.unwrap();
}

async fn add(app: &TestApp, actor: Actor, site: &Site, name: &str) -> i64 {
    app.store.add_sitemap(actor, site.id, &format!("{}/{name}", site.origin), Source::Api, 0).await.unwrap().id
}

/// An index read fine whose one child is in the state `child` (`None`: not read yet).
async fn index_with_child(app: &TestApp, actor: Actor, site: &Site, name: &str, child: Option<&str>) -> i64 {
    let index = add(app, actor, site, name).await;
    read(app, index, "ok", None, true).await;
    let url = format!("{}/{name}-child.xml", site.origin);
    app.store
        .sync_index_children(site.id, index, &[IndexChild { url: url.clone(), lastmod: None }], 100)
        .await
        .unwrap();
    if let Some(status) = child {
        let id = app.store.sitemap_by_url(actor, site.id, &url).await.unwrap().unwrap().id;
        read(app, id, status, None, false).await;
    }
    index
}

/// The top-level rows of the console's table: sitemap URL's last segment -> word shown.
fn table_words(html: &str) -> BTreeMap<String, String> {
    let doc = Html::parse_document(html);
    let rows = Selector::parse("table.sitemaps > tbody > tr:not(.children)").unwrap();
    let name = Selector::parse("td[data-label=\"Sitemap\"] > a:first-child").unwrap();
    let badge = Selector::parse("td[data-label=\"Status\"] .badge").unwrap();
    doc.select(&rows)
        .map(|row| {
            let url: String = row.select(&name).next().unwrap().text().collect();
            let word: String = row.select(&badge).next().unwrap().text().collect();
            (url.rsplit('/').next().unwrap().to_owned(), word)
        })
        .collect()
}

const WORDS: [(&str, &str); 7] = [
    ("success", "Success"),
    ("errors", "Has errors"),
    ("warnings", "Has warnings"),
    ("failed", "Couldn't fetch"),
    ("pending", "Pending"),
    ("paused", "Paused"),
    ("removed", "Removed"),
];

#[tokio::test]
async fn every_filter_lists_exactly_the_rows_that_show_its_word() {
    each_backend(false, |app| async move {
        let (ann, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        for (name, status, severity) in [
            ("ok.xml", Some("ok"), None),
            ("warn.xml", Some("warnings"), Some("warning")),
            ("err.xml", Some("errors"), Some("error")),
            // A verdict stored with no finding counted (an older version's) is still its word.
            ("bare-errors.xml", Some("errors"), None),
            ("failed.xml", Some("failed"), None),
            ("new.xml", None, None),
        ] {
            let id = add(&app, ann, &site, name).await;
            if let Some(status) = status {
                read(&app, id, status, severity, false).await;
            }
        }
        let gone = add(&app, ann, &site, "gone.xml").await;
        app.store.remove_sitemap(ann, gone, 5).await.unwrap();
        index_with_child(&app, ann, &site, "failing-child", Some("failed")).await;
        index_with_child(&app, ann, &site, "waiting-child", None).await;
        // A second site that loses its verification after a good read.
        let (lost, _web2) = verified_site(&app, ann).await;
        let paused = add(&app, ann, &lost, "paused.xml").await;
        read(&app, paused, "ok", None, false).await;
        app.store.record_verification(lost.id, false, 200).await.unwrap();

        let want: BTreeMap<&str, &str> = [
            ("ok.xml", "success"),
            ("warn.xml", "warnings"),
            ("err.xml", "errors"),
            ("bare-errors.xml", "errors"),
            ("failed.xml", "failed"),
            ("new.xml", "pending"),
            ("gone.xml", "removed"),
            ("failing-child", "errors"),
            ("waiting-child", "pending"),
            ("paused.xml", "paused"),
        ]
        .into();

        // The API: each row's word, and each filter lists exactly the rows of its word.
        let mut words = BTreeMap::new();
        for s in [&site, &lost] {
            let base = format!("/api/v1/sites/{}/sitemaps", s.id);
            let all = call_json(&app, "GET", &base, &token, None, StatusCode::OK, "[Sitemap]").await;
            for row in all.as_array().unwrap().iter().filter(|r| r["parent_id"].is_null()) {
                let name = row["url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
                words.insert(name, (row["id"].as_i64().unwrap(), row["status_word"].as_str().unwrap().to_owned()));
            }
            for (filter, _) in WORDS {
                let listed = call_json(
                    &app,
                    "GET",
                    &format!("{base}?status={filter}"),
                    &token,
                    None,
                    StatusCode::OK,
                    "[Sitemap]",
                )
                .await;
                for row in listed.as_array().unwrap() {
                    assert_eq!(row["status_word"], filter, "{filter} lists {row}");
                }
                let all_of_word = all.as_array().unwrap().iter().filter(|r| r["status_word"] == filter).count();
                assert_eq!(listed.as_array().unwrap().len(), all_of_word, "{filter} on {base}");
            }
        }
        let got: BTreeMap<&str, &str> = words.iter().map(|(k, (_, w))| (k.as_str(), w.as_str())).collect();
        assert_eq!(got, want);
        let paused_row = call_json(
            &app,
            "GET",
            &format!("/api/v1/sitemaps/{paused}"),
            &token,
            None,
            StatusCode::OK,
            "SitemapStatus",
        )
        .await;
        assert_eq!(
            (paused_row["status_word"].as_str(), paused_row["pending"].as_bool()),
            (Some("paused"), Some(false))
        );

        // The console's table: the word each row shows is its filter's, and each filter lists
        // exactly those rows.
        let user = app.store.user_credentials("ann@example.com").await.unwrap().unwrap().0;
        let session = app.store.create_session(user.id, 0, i64::MAX / 4).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let (_, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
        let shown = table_words(&html);
        for (name, key) in &want {
            let word = WORDS.iter().find(|(k, _)| k == key).unwrap().1;
            assert_eq!(shown.get(*name).map(String::as_str), Some(word), "{name} in {shown:?}");
        }
        for (filter, word) in WORDS {
            let (_, _, html) = app.get(&format!("/?status={filter}"), Auth::Cookie(&cookie)).await;
            let listed = table_words(&html);
            let expected: Vec<&str> = want.iter().filter(|(_, k)| **k == filter).map(|(n, _)| *n).collect();
            assert_eq!(listed.keys().map(String::as_str).collect::<Vec<_>>(), expected, "/?status={filter}");
            assert!(listed.values().all(|w| w == word), "{filter}: {listed:?}");
        }

        // The paused sitemap's page: paused, no next read "just now", Resubmit says it waits.
        let (_, _, html) = app.get(&format!("/sitemaps/{paused}"), Auth::Cookie(&cookie)).await;
        let page = text(&html);
        assert!(page.contains("StatusPaused its site is not verified"), "{page}");
        assert!(page.contains("Next read") && page.contains("paused: when the site is verified again"), "{page}");
        assert!(!page.contains("just now"), "{page}");
        assert!(page.contains("Resubmit (waits for verification)"), "{page}");

        // The index whose child failed counts the sitemaps it lists, not itself.
        let (index_id, _) = words["failing-child"];
        let (_, _, html) = app.get(&format!("/sitemaps/{index_id}"), Auth::Cookie(&cookie)).await;
        let page = text(&html);
        assert!(page.contains("1 of 1 sitemap it lists couldn't be fetched"), "{page}");
        assert!(page.contains("in 1 sitemap of the index"), "{page}");
    })
    .await;
}

#[tokio::test]
async fn a_reader_is_offered_no_owners_action_on_sitemap_pages() {
    each_backend(false, |app| async move {
        let (ann, _) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let index = index_with_child(&app, ann, &site, "tree", Some("ok")).await;
        let plain = add(&app, ann, &site, "plain.xml").await;
        let bob = app.store.create_user("bob@example.com", "h", false, 0).await.unwrap();
        let (_, link) = app.store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, 1, 3600).await.unwrap();
        app.store.accept_invitation(Actor::from(&bob), &link, 2).await.unwrap();
        let cookie_of = |user_id| {
            let app = &app;
            async move { format!("mapwright_session={}", app.store.create_session(user_id, 0, i64::MAX / 4).await.unwrap()) }
        };
        let owner = cookie_of(ann.user_id).await;
        let reader = cookie_of(bob.id).await;
        for id in [index, plain] {
            let uri = format!("/sitemaps/{id}");
            let (status, _, html) = app.get(&uri, Auth::Cookie(&owner)).await;
            assert_eq!(status, StatusCode::OK);
            assert!(html.contains(&format!("action=\"/sitemaps/{id}/resubmit\"")), "the owner's Resubmit: {uri}");
            assert!(html.contains(&format!("href=\"/sitemaps/{id}/remove\"")), "the owner's Remove: {uri}");
            let (status, _, html) = app.get(&uri, Auth::Cookie(&reader)).await;
            assert_eq!(status, StatusCode::OK, "a reader reads the page");
            assert!(!html.contains("/resubmit\""), "no Resubmit for a reader on {uri}: {html}");
            assert!(!html.contains("/remove\""), "no Remove for a reader on {uri}");
            assert!(text(&html).contains("only its owners can resubmit or remove"), "{uri}");
        }
    })
    .await;
}
