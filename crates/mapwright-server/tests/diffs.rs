//! Per-read diffs (issue 23) as a site owner meets them: reads of a sitemap on a site on
//! 127.0.0.1 run by the scheduler's `run_job`, then what each changed through the API (JSON
//! validated against `openapi.yaml`, CSV, JSON Lines) and on the console's sitemap page, for an
//! owner, a reader and a stranger, on both backends.

use axum::http::StatusCode;
use mapwright_server::AppState;
use mapwright_server::jobs::reads::run_job;
use mapwright_store::Role;
use serde_json::Value;

use crate::api::{assert_problem, call, call_json, user};
use crate::console::text;
use crate::sitehost::{SiteHost, urlset};
use crate::support::{Auth, TestApp, each_backend, unix_now};

const WORKER: &str = "diff-worker";

/// Runs the due jobs (a little ahead of the clock); returns how many ran.
pub async fn drain(state: &AppState) -> usize {
    let jobs = state.store.lease_due_sitemaps(WORKER, unix_now() + 5, 10, 60).await.unwrap();
    for job in &jobs {
        run_job(state, WORKER, job).await.unwrap();
    }
    jobs.len()
}

/// `POST /api/v1/sitemaps/{id}/resubmit` as `token`, then one drain: the sitemap read again.
pub async fn resubmit(app: &TestApp, token: &str, id: i64) {
    let uri = format!("/api/v1/sitemaps/{id}/resubmit");
    call_json(app, "POST", &uri, token, None, StatusCode::ACCEPTED, "Sitemap").await;
    assert_eq!(drain(&app.state).await, 1);
}

/// `GET uri` as JSON of the schema, answering 200.
async fn get_json(app: &TestApp, token: &str, uri: &str, schema: &str) -> Value {
    call_json(app, "GET", uri, token, None, StatusCode::OK, schema).await
}

/// (change, path) of each item of a diff page, sorted.
fn changes(page: &Value, origin: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let path = u["loc"].as_str().unwrap().trim_start_matches(origin).to_owned();
            (u["change"].as_str().unwrap().to_owned(), path)
        })
        .collect();
    out.sort();
    out
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[tokio::test]
async fn each_read_shows_what_it_changed_in_the_api_and_on_the_sitemap_page() {
    each_backend(false, |app| async move {
        let (ann, token) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let site = app.store.create_site(ann, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let (a, b, c, d) = (web.url("/a"), web.url("/b"), web.url("/c"), web.url("/d"));
        web.put_etag("/sitemap.xml", &urlset(&[(&a, Some("2024-01-01")), (&b, None), (&c, None)]), Some("\"v1\""));
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let body = serde_json::json!({ "url": web.url("/sitemap.xml") });
        let sitemap = call_json(&app, "POST", &uri, &token, Some(body), StatusCode::CREATED, "Sitemap").await;
        let id = sitemap["id"].as_i64().unwrap();
        assert_eq!(drain(&app.state).await, 1);

        // The second version: a changed, b the same, c gone, d new.
        web.put_etag("/sitemap.xml", &urlset(&[(&a, Some("2024-02-02")), (&b, None), (&d, None)]), Some("\"v2\""));
        resubmit(&app, &token, id).await;
        // The same file again: a 304, which reads nothing.
        resubmit(&app, &token, id).await;

        let reads = get_json(&app, &token, &format!("/api/v1/sitemaps/{id}/diffs"), "[ReadDiff]").await;
        let reads = reads.as_array().unwrap();
        let summary: Vec<(&str, bool, i64, i64, i64)> = reads
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_i64().unwrap();
                (
                    r["status"].as_str().unwrap(),
                    r["recorded"].as_bool().unwrap(),
                    n("added"),
                    n("removed"),
                    n("changed"),
                )
            })
            .collect();
        assert_eq!(summary, [("unchanged", false, 0, 0, 0), ("ok", true, 1, 1, 1), ("ok", true, 3, 0, 0)]);
        let firsts: Vec<bool> = reads.iter().map(|r| r["first_read"].as_bool().unwrap()).collect();
        assert_eq!(firsts, [false, false, true], "only the sitemap's first merged read is one");
        let second = reads[1]["download_id"].as_i64().unwrap();
        let first = reads[2]["download_id"].as_i64().unwrap();

        let page = get_json(&app, &token, &format!("/api/v1/downloads/{second}/diff"), "DiffPage").await;
        assert_eq!(changes(&page, &web.origin), pairs(&[("added", "/d"), ("changed", "/a"), ("removed", "/c")]));
        // The changed URL says old -> new, field by field; the others have no fields.
        let old_new = serde_json::json!([{ "field": "lastmod", "old": "2024-01-01", "new": "2024-02-02" }]);
        for item in page["items"].as_array().unwrap() {
            let want = if item["change"] == "changed" { old_new.clone() } else { serde_json::json!([]) };
            assert_eq!(item["fields"], want, "{item}");
        }
        assert_eq!((page["read"]["truncated"].as_bool(), page["next_after"].clone()), (Some(false), Value::Null));
        let removed =
            get_json(&app, &token, &format!("/api/v1/downloads/{second}/diff?change=removed"), "DiffPage").await;
        assert_eq!(changes(&removed, &web.origin), pairs(&[("removed", "/c")]));
        assert!(removed["items"][0]["removed_at"].is_i64(), "still named, with its removal");
        // Paging by URL id.
        let one = get_json(&app, &token, &format!("/api/v1/downloads/{first}/diff?limit=2"), "DiffPage").await;
        let next = one["next_after"].as_i64().expect("a second page");
        let rest = get_json(&app, &token, &format!("/api/v1/downloads/{first}/diff?after={next}"), "DiffPage").await;
        assert_eq!((one["items"].as_array().unwrap().len(), rest["items"].as_array().unwrap().len()), (2, 1));
        let (status, headers, problem) =
            call(&app, "GET", &format!("/api/v1/downloads/{second}/diff?change=gone"), Some(&token), None).await;
        assert!(assert_problem(status, &headers, &problem).contains("change"), "{problem}");
        assert_eq!(status, StatusCode::BAD_REQUEST);

        // The exports: the same URLs.
        let (status, headers, csv) =
            call(&app, "GET", &format!("/api/v1/downloads/{second}/diff.csv"), Some(&token), None).await;
        assert_eq!((status, headers["content-type"].to_str().unwrap()), (StatusCode::OK, "text/csv; charset=utf-8"));
        let mut rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.remove(0), "change,url,lastmod,changefreq,priority,removed_at,url_id,changes");
        rows.sort();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].starts_with(&format!("added,{d},,")), "{csv}");
        assert!(rows[1].starts_with(&format!("changed,{a},2024-02-02,")), "{csv}");
        assert!(rows[1].ends_with(",lastmod 2024-01-01 → 2024-02-02"), "{csv}");
        assert!(rows[0].ends_with(','), "an added URL changed no field: {csv}");
        assert!(rows[2].starts_with(&format!("removed,{c},,,,20")), "an ISO time: {csv}");
        let (status, _, jsonl) =
            call(&app, "GET", &format!("/api/v1/downloads/{second}/diff.jsonl?change=added"), Some(&token), None).await;
        assert_eq!(status, StatusCode::OK);
        let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 1);
        crate::api::assert_schema(&lines[0], "DiffUrl");
        assert_eq!(lines[0]["loc"], d);
        let (_, _, jsonl) =
            call(&app, "GET", &format!("/api/v1/downloads/{second}/diff.jsonl?change=changed"), Some(&token), None)
                .await;
        let line: Value = serde_json::from_str(jsonl.trim()).unwrap();
        assert_eq!(line["fields"], old_new, "the export says what the API says");
        // A 304's diff is empty.
        let unchanged = reads[0]["download_id"].as_i64().unwrap();
        let page = get_json(&app, &token, &format!("/api/v1/downloads/{unchanged}/diff"), "DiffPage").await;
        assert_eq!(page["items"], serde_json::json!([]));

        // The console: the reads with their counts, the newest read's changes listed.
        let cookie =
            format!("mapwright_session={}", app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap());
        let (status, _, html) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let shown = text(&html);
        assert!(shown.contains("Changes by read"), "{shown}");
        assert!(shown.contains("+1 added, −1 removed, ~1 changed"), "{shown}");
        // The first read is one collapsed line, not a list of everything it added.
        assert!(shown.contains("First read: 3 URLs added"), "{shown}");
        assert!(shown.contains("Changed: lastmod 2024-01-01 → 2024-02-02"), "old -> new: {shown}");
        let listed =
            &shown[shown.find("URLs changed by the read").expect("a list")..shown.find("Download history").unwrap()];
        assert!(!listed.contains(b.as_str()), "the first read's URLs are not listed unasked: {listed}");
        assert!(shown.contains("No change (the file was not modified)"), "{shown}");
        for url in [&a, &c, &d] {
            assert!(shown.contains(url.as_str()), "{url} listed: {shown}");
        }
        assert!(html.contains(&format!("/api/v1/downloads/{second}/diff.csv")));
        // Another read, one kind, one page.
        let uri = format!("/sitemaps/{id}?read={first}&change=added&changes_after=0");
        let (status, _, html) = app.get(&uri, Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let shown = text(&html);
        assert!(shown.contains(b.as_str()) && shown.contains("Added (3)"), "{shown}");
        let uri = format!("/sitemaps/{id}?read={second}&change=removed");
        let (_, _, html) = app.get(&uri, Auth::Cookie(&cookie)).await;
        let list = text(&html);
        let list =
            &list[list.find("URLs changed by the read").expect("the list")..list.find("Download history").unwrap()];
        assert!(list.contains(c.as_str()) && list.contains("removed from the site"), "{list}");
        assert!(!list.contains(d.as_str()), "only the removed: {list}");

        // A later read changes /a again: the second read's diff still says what that read
        // changed (its old and new values were kept), while the URL's lastmod now moved on.
        web.put_etag("/sitemap.xml", &urlset(&[(&a, Some("2024-03-03")), (&b, None), (&d, None)]), Some("\"v3\""));
        resubmit(&app, &token, id).await;
        let again =
            get_json(&app, &token, &format!("/api/v1/downloads/{second}/diff?change=changed"), "DiffPage").await;
        assert_eq!(
            (&again["items"][0]["fields"], &again["items"][0]["lastmod"]),
            (&old_new, &Value::from("2024-03-03"))
        );

        // A reader sees the same; a stranger gets 404, as for every route of another's site.
        let (bob, bob_token) = user(&app, "bob@example.com").await;
        let uri = format!("/api/v1/downloads/{second}/diff");
        let (status, _, _) = call(&app, "GET", &uri, Some(&bob_token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, invite) =
            app.store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, 0, i64::MAX / 2).await.unwrap();
        app.store.accept_invitation(bob, &invite, 1).await.unwrap();
        let seen = get_json(&app, &bob_token, &uri, "DiffPage").await;
        assert_eq!(changes(&seen, &web.origin), pairs(&[("added", "/d"), ("changed", "/a"), ("removed", "/c")]));
        let bob_cookie =
            format!("mapwright_session={}", app.store.create_session(bob.user_id, unix_now(), 3600).await.unwrap());
        let (status, _, html) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&bob_cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("+1 added, −1 removed, ~1 changed"));
    })
    .await;
}
