//! A sitemap index and its tree, through the API and the console on both backends: Resubmit of
//! an index reads the whole tree again (an unchanged child is a 304), every child has its own
//! Resubmit, the index's page shows its tree with the file's own numbers apart, and the roll-up
//! says where the trouble is (`rollup_status` "pending" while a child waits).

use axum::http::StatusCode;
use mapwright_server::jobs::reads::run_job;
use mapwright_store::Actor;
use scraper::{Html, Selector};
use serde_json::{Value, json};

use crate::api::{call, call_json};
use crate::console::{csrf_of, post_form, text};
use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{Auth, TestApp, each_backend};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Runs due fetches until none is due; returns how many ran.
async fn drain(app: &TestApp, rounds: usize) -> usize {
    let mut ran = 0;
    for _ in 0..rounds {
        let jobs = app.store.lease_due_sitemaps("tree", now() + 5, 10, 60).await.unwrap();
        if jobs.is_empty() {
            break;
        }
        for job in &jobs {
            run_job(&app.state, "tree", job).await.unwrap();
            ran += 1;
        }
    }
    ran
}

/// The texts of the elements `selector` picks.
fn texts(html: &str, selector: &str) -> Vec<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(selector).unwrap();
    doc.select(&sel)
        .map(|e| e.text().collect::<Vec<_>>().join("").split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[tokio::test]
async fn an_index_is_read_shown_and_resubmitted_as_a_tree() {
    each_backend(false, |app| async move {
        let t0 = now();
        let user = app.store.create_user("ann@example.com", "h", false, t0).await.unwrap();
        let actor = Actor::from(&user);
        let (_, token) = app.store.create_api_token(actor, "t", t0).await.unwrap();
        let session = app.store.create_session(user.id, t0, 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let web = SiteHost::start().await;
        let site = app.store.create_site(actor, &web.origin, t0).await.unwrap();
        app.store.record_verification(site.id, true, t0).await.unwrap();
        let o = web.origin.clone();
        let (a1, a2, b1) = (format!("{o}/a1"), format!("{o}/a2"), format!("{o}/b1"));
        web.put_etag("/a.xml", &urlset(&[(&a1, None), (&a2, None)]), Some("\"a1\""));
        // b lists a URL on another host: an error of b, not of the index.
        web.put_etag("/b.xml", &urlset(&[(&b1, None), ("https://elsewhere.example/x", None)]), Some("\"b1\""));
        let children = [web.url("/a.xml"), web.url("/b.xml"), web.url("/gone.xml")];
        let listed: Vec<(&str, Option<&str>)> = children.iter().map(|c| (c.as_str(), None)).collect();
        web.put_etag("/index.xml", &index(&listed), Some("\"i1\""));

        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let added = call_json(
            &app,
            "POST",
            &uri,
            &token,
            Some(json!({ "url": web.url("/index.xml") })),
            StatusCode::CREATED,
            "Sitemap",
        )
        .await;
        let index_id = added["id"].as_i64().unwrap();
        assert_eq!(added["rollup_status"], "pending", "never read: pending, not null");

        // The index alone is read: its children wait, and the roll-up says so.
        assert_eq!(drain(&app, 1).await, 1);
        let show = |id: i64| {
            let (app, token) = (&app, &token);
            async move {
                call_json(app, "GET", &format!("/api/v1/sitemaps/{id}"), token, None, StatusCode::OK, "SitemapStatus")
                    .await
            }
        };
        let shown = show(index_id).await;
        assert_eq!((&shown["status"], &shown["rollup_status"]), (&json!("ok"), &json!("pending")), "{shown:#}");
        let (_, _, table) = app.get("/", Auth::Cookie(&cookie)).await;
        let row = texts(&table, "table.sitemaps > tbody > tr:first-child td[data-label=Status]");
        assert_eq!(row, ["Pending 3 of 3 sitemaps it lists not read yet"], "{table}");

        // The children are read: a is clean, b has an error, gone.xml is a 404.
        assert_eq!(drain(&app, 5).await, 3);
        let shown = show(index_id).await;
        assert_eq!(shown["status"], "ok", "the index itself was read");
        assert_eq!(shown["rollup_status"], "failed");
        let rollup_errors = shown["rollup_errors"].as_i64().unwrap();
        assert!(rollup_errors >= 1, "{shown:#}");
        assert_eq!(shown["rollup_urls"], 3);
        assert_eq!(shown["contents"]["web"], 3, "an index's contents sum its tree: {shown:#}");
        let (_, _, table) = app.get("/", Auth::Cookie(&cookie)).await;
        let row = texts(&table, "table.sitemaps > tbody > tr:first-child td[data-label=Status]");
        let errors = if rollup_errors == 1 { "1 error".to_owned() } else { format!("{rollup_errors} errors") };
        assert_eq!(row.len(), 1);
        assert!(
            row[0].starts_with(&format!(
                "Has errors 1 of 3 sitemaps it lists couldn't be fetched; {errors} in 1 sitemap"
            )),
            "the index loaded: not \"Couldn't fetch\": {row:?}"
        );
        // Every child row has its own Resubmit, named for its row.
        let labels: Vec<String> = {
            let doc = Html::parse_document(&table);
            let sel = Selector::parse("tr.children button[aria-label]").unwrap();
            doc.select(&sel).map(|b| b.value().attr("aria-label").unwrap().to_owned()).collect()
        };
        for child in &children {
            assert!(labels.contains(&format!("Resubmit {child}")), "{labels:?}");
        }

        // The index's page shows its tree, with the file's own numbers apart, and says nothing
        // that contradicts its top.
        let (status, _, page) = app.get(&format!("/sitemaps/{index_id}"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let words = text(&page);
        assert!(!words.contains("No URLs") && !words.contains("No findings"), "{words}");
        let facts = texts(&page, "dl.facts dd");
        assert!(facts.contains(&"3 in 3 sitemaps of the index".to_owned()), "{facts:?}");
        let own = texts(&page, "#this-file dd");
        assert_eq!(own, ["Success", "3"], "the index file's own read, and the sitemaps it lists");
        let urls = texts(&page, "#urls ~ table td[data-label=URL]");
        assert_eq!(urls, [a1.clone(), a2.clone(), b1.clone()], "the URLs of the tree");
        let headings = texts(&page, "h2");
        assert!(
            headings.contains(&"Findings of the last reads of this index and its sitemaps".to_owned()),
            "{headings:?}"
        );
        let named = texts(&page, "#findings ~ section.group li a");
        assert!(named.iter().any(|n| n == &children[1]), "each finding names its sitemap: {named:?}");
        let chart = texts(&page, "#urls-chart-desc");
        // Entries as read: b's URL on another host is an entry, not a URL of the site.
        assert!(chart.iter().any(|c| c.starts_with("4 URL entries in the index's sitemaps")), "{chart:?}");
        let statuses = texts(&page, "#downloads ~ table td[data-label=Status]");
        assert_eq!(statuses, ["Success"], "the downloads' status in words");
        // The index rolls up its children's changes: each child's latest read (gone.xml failed:
        // read, nothing changed), a's and b's first reads listed, most changes first.
        let uri_changes = format!("/api/v1/sitemaps/{index_id}/child-changes");
        let rolled = call_json(&app, "GET", &uri_changes, &token, None, StatusCode::OK, "ChildChanges").await;
        let totals = &rolled["totals"];
        assert_eq!(totals, &json!({ "children": 3, "changed_children": 2, "added": 3, "removed": 0, "changed": 0 }));
        let items: Vec<(&str, i64, bool)> = rolled["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["url"].as_str().unwrap(), c["added"].as_i64().unwrap(), c["first_read"].as_bool().unwrap()))
            .collect();
        assert_eq!(items, [(children[0].as_str(), 2, true), (children[1].as_str(), 1, true)]);
        let rollup = texts(&page, "#changes ~ p");
        assert!(
            rollup.iter().any(|p| p == "The latest reads of 2 of its 3 sitemaps changed their URL lists: +3 added, −0 removed, ~0 changed."),
            "{rollup:?}"
        );
        let rows = texts(&page, "#changes ~ table td[data-label=Changes]");
        assert_eq!(rows, ["First read: 2 URLs added", "First read: 1 URL added"]);

        // b is fixed. Resubmit of the index reads the whole tree: the unchanged ones are 304s.
        web.put_etag("/b.xml", &urlset(&[(&b1, None)]), Some("\"b2\""));
        let hits_before = (web.hits("/a.xml"), web.hits("/b.xml"), web.hits("/index.xml"));
        let answer = call_json(
            &app,
            "POST",
            &format!("/api/v1/sitemaps/{index_id}/resubmit"),
            &token,
            None,
            StatusCode::ACCEPTED,
            "Sitemap",
        )
        .await;
        assert_eq!(answer["pending"], true);
        assert_eq!(drain(&app, 5).await, 4, "the index and its three children");
        assert_eq!(
            (web.hits("/a.xml"), web.hits("/b.xml"), web.hits("/index.xml")),
            (hits_before.0 + 1, hits_before.1 + 1, hits_before.2 + 1)
        );
        let sitemaps = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Sitemap]").await;
        let by_url =
            |url: &str| -> Value { sitemaps.as_array().unwrap().iter().find(|s| s["url"] == url).unwrap().clone() };
        let (a, b) = (by_url(&children[0]), by_url(&children[1]));
        let last = |id: &Value| {
            let (app, token) = (&app, &token);
            let uri = format!("/api/v1/sitemaps/{id}/downloads?limit=1");
            async move { call_json(app, "GET", &uri, token, None, StatusCode::OK, "[Download]").await[0].clone() }
        };
        assert_eq!(
            (last(&a["id"]).await["status"].clone(), last(&a["id"]).await["http_status"].clone()),
            (json!("unchanged"), json!(304))
        );
        assert_eq!(last(&b["id"]).await["status"], "ok", "the fixed child was read again at once");
        assert_eq!(last(&json!(index_id)).await["http_status"], 304);
        // b's read listed the same URLs, a's was a 304: the latest reads changed nothing.
        let rolled = call_json(&app, "GET", &uri_changes, &token, None, StatusCode::OK, "ChildChanges").await;
        assert_eq!((&rolled["totals"]["changed_children"], &rolled["items"]), (&json!(0), &json!([])));
        let (_, _, page) = app.get(&format!("/sitemaps/{index_id}"), Auth::Cookie(&cookie)).await;
        assert!(text(&page).contains("No change in the latest reads of its 3 sitemaps."), "{}", text(&page));
        let shown = show(index_id).await;
        assert_eq!((&shown["rollup_status"], &shown["rollup_errors"]), (&json!("failed"), &json!(0)), "{shown:#}");

        // A child is resubmitted on its own, through the API and the console.
        let uri_a = format!("/api/v1/sitemaps/{}/resubmit", a["id"]);
        let answer = call_json(&app, "POST", &uri_a, &token, None, StatusCode::ACCEPTED, "Sitemap").await;
        assert_eq!((&answer["pending"], &answer["parent_id"]), (&json!(true), &json!(index_id)));
        assert_eq!(drain(&app, 2).await, 1, "the child alone");
        let (_, _, table) = app.get("/", Auth::Cookie(&cookie)).await;
        let csrf = csrf_of(&table).unwrap();
        let (status, headers, _) =
            post_form(&app, &format!("/sitemaps/{}/resubmit", b["id"]), &cookie, &format!("csrf={csrf}"), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(headers.contains_key("location"));
        assert_eq!(drain(&app, 2).await, 1, "the child alone");
        let (status, _, _) = call(&app, "GET", &format!("/api/v1/sitemaps/{}", b["id"]), Some(&token), None).await;
        assert_eq!(status, StatusCode::OK);
    })
    .await;
}
