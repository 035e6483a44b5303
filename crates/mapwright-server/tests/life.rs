//! The service's sitemap life cycle and index roll-up (issue 12 items 4 and 5) and the
//! scheduler's scope (item 1), through the API (and the console where the issue names it), on
//! both backends, against sites on 127.0.0.1. Jobs run one by one through `run_job`.

use axum::http::StatusCode;
use mapwright_server::AppState;
use mapwright_server::jobs::recheck::after_verified;
use mapwright_store::{Actor, Site, Source, UrlQuery};
use scraper::{Html, Selector};
use serde_json::{Value, json};

use crate::api::{call, call_json, owner_site};
use crate::console::{csrf_of, post_form};
use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{Auth, TestApp, each_backend, unix_now};

const WORKER: &str = "life-worker";

/// Runs every due job (a little ahead of the clock) until none is left; returns how many ran.
async fn drain(state: &AppState) -> usize {
    crate::support::drain_jobs(state, WORKER, 50).await
}

/// The site's live URLs, sorted.
async fn live_urls(app: &TestApp, actor: Actor, site: &Site) -> Vec<String> {
    let query = UrlQuery { limit: 10_000, ..UrlQuery::default() };
    let mut urls: Vec<String> =
        app.store.list_urls(actor, site.id, query).await.unwrap().items.into_iter().map(|u| u.loc).collect();
    urls.sort();
    urls
}

fn sorted(urls: &[String]) -> Vec<String> {
    let mut urls = urls.to_vec();
    urls.sort();
    urls
}

/// `POST /api/v1/sites/{id}/sitemaps`, answering `expected`.
async fn add(app: &TestApp, token: &str, site: &Site, url: &str, expected: StatusCode) -> Value {
    let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
    call_json(app, "POST", &uri, token, Some(json!({ "url": url })), expected, "Sitemap").await
}

/// `GET /api/v1/sitemaps/{id}`.
async fn shown(app: &TestApp, token: &str, id: &Value) -> Value {
    call_json(app, "GET", &format!("/api/v1/sitemaps/{id}"), token, None, StatusCode::OK, "SitemapStatus").await
}

/// `GET /api/v1/sites/{id}/sitemaps`, the one with this URL.
async fn listed(app: &TestApp, token: &str, site: &Site, url: &str) -> Value {
    let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
    let list = call_json(app, "GET", &uri, token, None, StatusCode::OK, "[Sitemap]").await;
    list.as_array().unwrap().iter().find(|s| s["url"] == url).unwrap_or_else(|| panic!("{url} in {list:#}")).clone()
}

async fn resubmit(app: &TestApp, token: &str, id: &Value) {
    let uri = format!("/api/v1/sitemaps/{id}/resubmit");
    call_json(app, "POST", &uri, token, None, StatusCode::ACCEPTED, "Sitemap").await;
}

async fn remove(app: &TestApp, token: &str, id: &Value) {
    let (status, _, text) = call(app, "DELETE", &format!("/api/v1/sitemaps/{id}"), Some(token), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{text}");
}

/// The findings of a download, as the API gives them.
async fn findings(app: &TestApp, token: &str, download_id: &Value) -> Value {
    let uri = format!("/api/v1/downloads/{download_id}/findings");
    call_json(app, "GET", &uri, token, None, StatusCode::OK, "[Finding]").await
}

fn rules(findings: &Value) -> Vec<&str> {
    findings.as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect()
}

/// The roll-up fields of a sitemap resource.
fn rollup(s: &Value) -> (Value, Value, Value, Value) {
    (s["is_index"].clone(), s["rollup_status"].clone(), s["rollup_urls"].clone(), s["rollup_errors"].clone())
}

/// A console session cookie for the user.
async fn session(app: &TestApp, actor: Actor) -> String {
    let token = app.store.create_session(actor.user_id, unix_now(), 3600).await.unwrap();
    format!("mapwright_session={token}")
}

fn entries(urls: &[String]) -> String {
    urlset(&urls.iter().map(|u| (u.as_str(), None)).collect::<Vec<_>>())
}

/// An index `/index.xml` of two children on `web`, `/c1.xml` listing `/a` and `/c2.xml` listing
/// `/b`, each with `lastmod` in the index, added to the site and read (the index and both
/// children). Returns the URLs `[a, b, c1, c2]` and the index's id.
async fn index_of_two(
    app: &TestApp,
    token: &str,
    site: &Site,
    web: &SiteHost,
    lastmod: Option<&str>,
) -> ([String; 4], Value) {
    let (a, b) = (web.url("/a"), web.url("/b"));
    web.put("/c1.xml", &entries(std::slice::from_ref(&a)));
    web.put("/c2.xml", &entries(std::slice::from_ref(&b)));
    let (c1, c2, idx) = (web.url("/c1.xml"), web.url("/c2.xml"), web.url("/index.xml"));
    web.put("/index.xml", &index(&[(&c1, lastmod), (&c2, lastmod)]));
    let id = add(app, token, site, &idx, StatusCode::CREATED).await["id"].clone();
    assert_eq!(drain(&app.state).await, 3);
    ([a, b, c1, c2], id)
}

#[tokio::test]
async fn a_robots_index_with_children_in_a_subfolder_stores_every_url() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let pages: Vec<String> = (0..300).map(|n| web.url(&format!("/page/{n}"))).collect();
        web.put("/sitemaps/a.xml", &entries(&pages[..150]));
        web.put("/sitemaps/b.xml", &entries(&pages[150..]));
        let (a, b, idx) = (web.url("/sitemaps/a.xml"), web.url("/sitemaps/b.xml"), web.url("/sitemap_index.xml"));
        web.put("/sitemap_index.xml", &index(&[(&a, None), (&b, None)]));
        web.put("/robots.txt", &format!("User-agent: *\nDisallow:\nSitemap: {idx}\n"));

        assert_eq!(after_verified(&app.state, &site).await.unwrap(), 1);
        assert_eq!(drain(&app.state).await, 3, "the index and its two children");
        assert_eq!(live_urls(&app, actor, &site).await, sorted(&pages), "every URL is stored");

        let parent = listed(&app, &token, &site, &idx).await;
        assert_eq!(rollup(&parent), (json!(true), json!("ok"), json!(300), json!(0)));
        for child in [&a, &b] {
            let child = shown(&app, &token, &listed(&app, &token, &site, child).await["id"]).await;
            assert_eq!(rollup(&child), (json!(false), json!("ok"), json!(150), json!(0)), "{child:#}");
            assert_eq!((&child["status"], &child["errors"]), (&json!("ok"), &json!(0)));
            let found = findings(&app, &token, &child["last_download"]["id"]).await;
            assert!(!rules(&found).contains(&"loc-out-of-scope"), "{found:#}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_cross_submitted_sitemap_stays_limited_to_the_site_that_names_it() {
    each_backend(false, |app| async move {
        let (actor, token, site, a) = owner_site(&app, "ann@example.com").await;
        let b = SiteHost::start().await;
        let (idx, part) = (b.url("/feeds/a-index.xml"), b.url("/feeds/deep/part.xml"));
        b.put("/feeds/a-index.xml", &index(&[(&part, None)]));
        let listed_urls = [a.url("/x"), a.url("/deep/y"), b.url("/feeds/deep/z")];
        b.put("/feeds/deep/part.xml", &entries(&listed_urls));
        a.put("/robots.txt", &format!("User-agent: *\nDisallow:\nSitemap: {idx}\n"));

        let added = add(&app, &token, &site, &idx, StatusCode::CREATED).await;
        assert_eq!(drain(&app.state).await, 2, "the index on B and its child");
        assert_eq!(live_urls(&app, actor, &site).await, sorted(&listed_urls[..2]), "A's URLs, any folder; not B's");
        let child = shown(&app, &token, &listed(&app, &token, &site, &part).await["id"]).await;
        assert_eq!(
            (&child["status"], &child["errors"], &child["rollup_urls"]),
            (&json!("errors"), &json!(1), &json!(2))
        );
        let found = findings(&app, &token, &child["last_download"]["id"]).await;
        let out: Vec<&Value> = found.as_array().unwrap().iter().filter(|f| f["rule"] == "loc-out-of-scope").collect();
        assert_eq!(out.len(), 1, "{found:#}");
        assert_eq!(out[0]["loc"], listed_urls[2]);

        // A's robots.txt stops naming it: nobody vouches, so nothing is read from B.
        a.put("/robots.txt", "User-agent: *\nDisallow:\n");
        resubmit(&app, &token, &added["id"]).await;
        assert_eq!(drain(&app.state).await, 2, "the index and its child, Resubmit reading the tree");
        assert_eq!(b.hits("/feeds/a-index.xml"), 1, "not fetched without a voucher");
        assert_eq!(b.hits("/feeds/deep/part.xml"), 1, "nor its child");
        let parent = shown(&app, &token, &added["id"]).await;
        assert_eq!((&parent["status"], &parent["rollup_status"]), (&json!("failed"), &json!("failed")));
        let error = parent["last_download"]["error"].as_str().unwrap();
        assert!(error.contains("robots.txt does not name it"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn remove_then_re_add_or_resubmit_brings_the_urls_back_despite_etags() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let urls = [web.url("/a"), web.url("/b"), web.url("/c")];
        web.put_etag("/s.xml", &entries(&urls), Some("\"v1\""));
        let url = web.url("/s.xml");
        let added = add(&app, &token, &site, &url, StatusCode::CREATED).await;
        let id = added["id"].clone();
        drain(&app.state).await;
        assert_eq!(live_urls(&app, actor, &site).await, urls);

        // Resubmitting a live sitemap: the server answers 304 and nothing is lost.
        resubmit(&app, &token, &id).await;
        drain(&app.state).await;
        let s = shown(&app, &token, &id).await;
        assert_eq!(
            (&s["last_download"]["status"], &s["last_download"]["http_status"]),
            (&json!("unchanged"), &json!(304))
        );
        assert_eq!((&s["status"], &s["rollup_urls"]), (&json!("ok"), &json!(3)));
        assert_eq!(live_urls(&app, actor, &site).await, urls);

        // Removed: its URLs leave, and it shows no stale status or count.
        remove(&app, &token, &id).await;
        assert!(live_urls(&app, actor, &site).await.is_empty());
        let s = shown(&app, &token, &id).await;
        assert!(s["removed_at"].is_i64());
        assert_eq!((&s["status"], &s["rollup_status"], &s["rollup_urls"]), (&Value::Null, &Value::Null, &json!(0)));

        // Re-added: 200 with the same row, read in full (no 304 over URLs it no longer has).
        let again = add(&app, &token, &site, &url, StatusCode::OK).await;
        assert_eq!((&again["id"], &again["removed_at"]), (&id, &Value::Null));
        drain(&app.state).await;
        assert_eq!(web.hits("/s.xml"), 3);
        let s = shown(&app, &token, &id).await;
        assert_eq!(s["last_download"]["http_status"], 200);
        assert_eq!((&s["status"], &s["rollup_status"], &s["rollup_urls"]), (&json!("ok"), &json!("ok"), &json!(3)));
        assert_eq!(live_urls(&app, actor, &site).await, urls);

        // Removed again, then Resubmit (the console's Restore): the same.
        remove(&app, &token, &id).await;
        resubmit(&app, &token, &id).await;
        assert_eq!(shown(&app, &token, &id).await["rollup_status"], "pending", "pending until read");
        drain(&app.state).await;
        assert_eq!(web.hits("/s.xml"), 4);
        let s = shown(&app, &token, &id).await;
        assert_eq!((&s["last_download"]["http_status"], &s["rollup_urls"]), (&json!(200), &json!(3)));
        assert_eq!(live_urls(&app, actor, &site).await, urls);
    })
    .await;
}

#[tokio::test]
async fn a_304_carries_the_verdict_of_the_content_it_stands_for() {
    each_backend(false, |app| async move {
        let (_, token, site, web) = owner_site(&app, "ann@example.com").await;
        let urls = [web.url("/a"), "http://elsewhere.example/b".into(), "http://elsewhere.example/c".into()];
        web.put_etag("/s.xml", &entries(&urls), Some("\"v1\""));
        let id = add(&app, &token, &site, &web.url("/s.xml"), StatusCode::CREATED).await["id"].clone();
        drain(&app.state).await;
        let first = shown(&app, &token, &id).await;
        let errors = first["errors"].as_i64().unwrap();
        assert!(errors >= 2, "{first:#}");
        assert_eq!((&first["status"], &first["last_download"]["error_count"]), (&json!("errors"), &json!(errors)));
        let first_findings = findings(&app, &token, &first["last_download"]["id"]).await;

        resubmit(&app, &token, &id).await;
        drain(&app.state).await;
        let after = shown(&app, &token, &id).await;
        let d = &after["last_download"];
        assert_eq!((&d["status"], &d["http_status"]), (&json!("unchanged"), &json!(304)));
        assert_eq!((&d["error_count"], &d["warning_count"]), (&json!(errors), &first["warnings"]));
        assert_eq!(d["url_count"], first["last_download"]["url_count"]);
        assert_ne!(d["id"], first["last_download"]["id"]);
        assert_eq!(findings(&app, &token, &d["id"]).await, first_findings, "the 304's findings are the content's");
        assert_eq!(
            (&after["status"], &after["errors"], &after["rollup_errors"]),
            (&json!("errors"), &json!(errors), &json!(errors))
        );

        let uri = format!("/api/v1/sitemaps/{id}/downloads");
        let history = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Download]").await;
        let counts: Vec<(&Value, &Value)> =
            history.as_array().unwrap().iter().map(|d| (&d["status"], &d["error_count"])).collect();
        assert_eq!(counts, [(&json!("unchanged"), &json!(errors)), (&json!("errors"), &json!(errors))]);
    })
    .await;
}

#[tokio::test]
async fn an_index_rolls_up_its_failing_children() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let [a, b, c, d] = ["/a", "/b", "/c", "/d"].map(|p| web.url(p));
        web.put("/c1.xml", &entries(&[a.clone(), b.clone()]));
        web.put("/c2.xml", &entries(&[b.clone(), c.clone(), "http://elsewhere.example/x".into()]));
        let children = ["/c1.xml", "/c2.xml", "/c3.xml"].map(|p| web.url(p));
        web.put("/index.xml", &index(&children.iter().map(|c| (c.as_str(), None)).collect::<Vec<_>>()));
        let idx = web.url("/index.xml");
        let id = add(&app, &token, &site, &idx, StatusCode::CREATED).await["id"].clone();
        assert_eq!(drain(&app.state).await, 4);

        let c2 = listed(&app, &token, &site, &children[1]).await;
        let c2_errors = c2["errors"].as_i64().unwrap();
        assert!(c2_errors >= 1);
        assert_eq!(listed(&app, &token, &site, &children[2]).await["status"], "failed", "c3 is a 404");
        let parent = shown(&app, &token, &id).await;
        assert_eq!((&parent["status"], &parent["errors"]), (&json!("ok"), &json!(0)), "its own read is fine");
        assert_eq!(rollup(&parent), (json!(true), json!("failed"), json!(3), json!(c2_errors)), "a, b, c once each");

        // The failing child is fixed: the worst left is c2's errors; d is a fourth URL.
        web.put("/c3.xml", &entries(std::slice::from_ref(&d)));
        resubmit(&app, &token, &listed(&app, &token, &site, &children[2]).await["id"]).await;
        assert_eq!(drain(&app.state).await, 1);
        let parent = shown(&app, &token, &id).await;
        assert_eq!(rollup(&parent), (json!(true), json!("errors"), json!(4), json!(c2_errors)));

        // The "My sitemaps" table shows the roll-up: the children's errors and distinct URLs.
        let cookie = session(&app, actor).await;
        let (status, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let doc = Html::parse_document(&html);
        let rows = Selector::parse("tr").unwrap();
        let row = doc.select(&rows).find(|r| r.html().contains(&idx)).expect("the index's row");
        let text: String = row.text().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&format!("{c2_errors} error")), "{text}");
        assert!(!text.contains("OK"), "{text}");
        let num = Selector::parse("td.num").unwrap();
        assert_eq!(row.select(&num).next().unwrap().text().collect::<String>().trim(), "4", "{text}");
    })
    .await;
}

#[tokio::test]
async fn adding_a_sitemap_that_exists_says_so() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let url = web.url("/sitemap.xml");
        let first = add(&app, &token, &site, &url, StatusCode::CREATED).await;
        let again = add(&app, &token, &site, &url, StatusCode::OK).await;
        assert_eq!((&again["id"], &again["submitted_at"]), (&first["id"], &first["submitted_at"]));
        let uri = format!("/api/v1/sites/{}/sitemaps", site.id);
        let list = call_json(&app, "GET", &uri, &token, None, StatusCode::OK, "[Sitemap]").await;
        assert_eq!(list.as_array().unwrap().len(), 1);

        // The console says "already submitted".
        let cookie = session(&app, actor).await;
        let (_, _, html) = app.get("/sitemaps/add", Auth::Cookie(&cookie)).await;
        let csrf = csrf_of(&html).unwrap();
        let form_url: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
        let body = format!("csrf={csrf}&url={form_url}&site={}", site.id);
        let (status, headers, _) = post_form(&app, "/sitemaps/add", &cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let flash = headers.get("set-cookie").unwrap().to_str().unwrap().split(';').next().unwrap().to_owned();
        let (_, _, page) = app.get("/", Auth::Cookie(&format!("{cookie}; {flash}"))).await;
        assert!(page.contains("is already submitted"), "{page}");
        assert!(!page.contains("Added "), "{page}");
    })
    .await;
}

#[tokio::test]
async fn resubmit_moves_the_last_submission_time() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let old = app.store.add_sitemap(actor, site.id, &web.url("/s.xml"), Source::Api, 1000).await.unwrap();
        assert_eq!(old.submitted_at, 1000);
        let before = unix_now();
        resubmit(&app, &token, &json!(old.id)).await;
        let s = shown(&app, &token, &json!(old.id)).await;
        // One meaning each: submitted_at when it became the site's, last_submitted_at the last time.
        assert_eq!(s["submitted_at"], 1000, "{s:#}");
        assert!(s["last_submitted_at"].as_i64().unwrap() >= before, "{s:#}");
    })
    .await;
}

#[tokio::test]
async fn a_child_the_user_removed_stays_removed_while_its_index_lists_it() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let ([a, b, c1, c2], id) = index_of_two(&app, &token, &site, &web, Some("2024-01-01")).await;
        let child = listed(&app, &token, &site, &c2).await["id"].clone();
        remove(&app, &token, &child).await;
        assert_eq!(live_urls(&app, actor, &site).await, std::slice::from_ref(&a));
        assert_eq!(shown(&app, &token, &id).await["rollup_urls"], 1, "the index counts its live children");

        // The index changes c2's lastmod: c2 would be due again, but the user removed it.
        web.put("/index.xml", &index(&[(&c1, Some("2024-01-01")), (&c2, Some("2024-02-01"))]));
        resubmit(&app, &token, &id).await;
        assert_eq!(drain(&app.state).await, 2, "the index and its live child c1, not c2");
        assert_eq!(web.hits("/c2.xml"), 1);
        assert!(listed(&app, &token, &site, &c2).await["removed_at"].is_i64());
        assert_eq!(live_urls(&app, actor, &site).await, std::slice::from_ref(&a));

        // The index's page shows it as removed.
        let cookie = session(&app, actor).await;
        let (status, _, html) = app.get(&format!("/sitemaps/{id}"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let doc = Html::parse_document(&html);
        let rows = Selector::parse("tr").unwrap();
        let item =
            doc.select(&rows).find(|tr| tr.text().collect::<String>().contains(&c2)).expect("c2 on the index's page");
        assert!(item.text().collect::<String>().contains("Removed"), "{}", item.html());

        // Restore (Resubmit) brings it back.
        resubmit(&app, &token, &child).await;
        assert_eq!(drain(&app.state).await, 1);
        assert_eq!(live_urls(&app, actor, &site).await, [a, b]);
        assert_eq!(shown(&app, &token, &id).await["rollup_urls"], 2);
    })
    .await;
}

/// A child its index dropped, restored by its owner, is the owner's own from then on: said to be
/// submitted, no longer a child, so the index's next read (which still does not list it) leaves
/// it alone instead of removing it again.
#[tokio::test]
async fn a_child_its_index_dropped_restored_by_its_owner_stays() {
    each_backend(false, |app| async move {
        let (actor, token, site, web) = owner_site(&app, "ann@example.com").await;
        let ([a, b, c1, c2], id) = index_of_two(&app, &token, &site, &web, None).await;
        let child = listed(&app, &token, &site, &c2).await;
        assert_eq!((&child["source"], &child["parent_id"]), (&json!("index"), &id));

        // The index drops c2: removed by it, not by the owner. (Resubmitting the index makes
        // its children due too; the lease of c2, removed by the index's read, is lost.)
        web.put("/index.xml", &index(&[(&c1, None)]));
        resubmit(&app, &token, &id).await;
        drain_dropping(&app.state).await;
        assert!(listed(&app, &token, &site, &c2).await["removed_at"].is_i64());

        // Restored: the owner's own, read again, and still there after the index's next read.
        resubmit(&app, &token, &child["id"]).await;
        let back = listed(&app, &token, &site, &c2).await;
        assert_eq!(
            (&back["source"], &back["parent_id"], &back["removed_at"]),
            (&json!("api"), &json!(null), &json!(null))
        );
        resubmit(&app, &token, &id).await;
        drain_dropping(&app.state).await;
        let after = listed(&app, &token, &site, &c2).await;
        assert_eq!(after["removed_at"], json!(null), "{after:#}");
        assert_eq!(live_urls(&app, actor, &site).await, [a, b]);
    })
    .await;
}

/// Runs every due job, as [`drain`], where an index's read may remove a child leased with it:
/// that child's job ends with its lease lost, and only so.
async fn drain_dropping(state: &AppState) {
    for _ in 0..50 {
        let jobs = state.store.lease_due_sitemaps(WORKER, unix_now() + 5, 10, 60).await.unwrap();
        if jobs.is_empty() {
            return;
        }
        for job in &jobs {
            if let Err(e) = mapwright_server::jobs::reads::run_job(state, WORKER, job).await {
                assert!(format!("{e:?}").contains("LeaseLost"), "{e:?}");
            }
        }
    }
    panic!("jobs keep coming: a loop");
}
