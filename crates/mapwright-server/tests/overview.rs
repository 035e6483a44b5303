//! The site overview (issue 34, items 3 and 10) on both backends: the site's page and
//! `GET /api/v1/sites/{id}/overview` say the same things (the proof that keeps it verified,
//! its sitemaps with how each came and their totals, its members and invitations, its webhooks,
//! the IndexNow submissions received) to an owner, to a reader (without what only owners may
//! see or do) and nothing to a stranger; the delete confirmation names who loses access; a
//! sitemap submitted again after its removal is the owner's own.

use axum::http::StatusCode;
use mapwright_store::{Actor, Role, Source};
use scraper::{Html, Selector};
use serde_json::Value;

use crate::api::assert_schema;
use crate::console::{Seeded, seed, text};
use crate::support::{Auth, TestApp, each_backend, unix_now as now};

/// The visible text of each element `css` selects.
fn texts(html: &str, css: &str) -> Vec<String> {
    let doc = Html::parse_document(html);
    doc.select(&Selector::parse(css).unwrap()).map(|e| e.text().collect::<String>()).collect()
}

/// Ann's seeded site (one submitted sitemap, read with an error; an invitation; a webhook),
/// plus a sitemap named by robots.txt and one listed by the first, Bob as a reader of it, the
/// file as the proof in force and two IndexNow submissions (one refused). Returns Bob's cookie.
async fn ann_and_bob(app: &TestApp) -> (Seeded, String) {
    let ann = seed(app, "ann@example.com", "https://ann.example").await;
    let owner = Actor { user_id: ann.site.owner_id, is_admin: false };
    let (id, now) = (ann.site.id, now());
    let bob = app.store.create_user("bob@example.com", "h", false, now).await.unwrap();
    let (_, link) = app.store.create_invitation(owner, id, "bob@example.com", Role::Reader, now, 3600).await.unwrap();
    app.store.accept_invitation(Actor::from(&bob), &link, now).await.unwrap();
    let bob_cookie = format!("mapwright_session={}", app.store.create_session(bob.id, now, 3600).await.unwrap());
    let store = &app.store;
    store.add_sitemap_for_site(id, "https://ann.example/named.xml", Source::Robots, None, now).await.unwrap();
    store
        .add_sitemap_for_site(id, "https://ann.example/child.xml", Source::Index, Some(ann.sitemap.id), now)
        .await
        .unwrap();
    store.record_proof(id, Some("file"), None, now).await.unwrap();
    let key_file = "https://ann.example/0123abcd-key.txt";
    store.record_indexnow_receipt(id, now - 60, 3, key_file, None).await.unwrap();
    let refused = format!("the key is not valid: {key_file} does not hold the key");
    store.record_indexnow_receipt(id, now - 30, 1, key_file, Some(refused.as_str())).await.unwrap();
    (ann, bob_cookie)
}

#[tokio::test]
async fn the_site_page_is_an_overview_for_owners_and_readers_and_nothing_for_strangers() {
    each_backend(false, |app| async move {
        let (ann, bob) = ann_and_bob(&app).await;
        let carol = seed(&app, "carol@example.com", "https://carol.example").await;
        let owner = Actor { user_id: ann.site.owner_id, is_admin: false };
        let id = ann.site.id;
        let path = format!("/sites/{id}");
        let (status, _, owner_html) = app.get(&path, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK, "{owner_html}");
        let (status, _, reader_html) = app.get(&path, Auth::Cookie(&bob)).await;
        assert_eq!(status, StatusCode::OK, "{reader_html}");

        for html in [&owner_html, &reader_html] {
            // Every sitemap, with how it came; the child links to the index that lists it.
            let rows = texts(html, "#site-sitemaps tbody tr");
            assert_eq!(rows.len(), 3, "{rows:?}");
            for (file, how) in [("sitemap.xml", "Submitted"), ("named.xml", "robots.txt"), ("child.xml", "In an index")]
            {
                let row = rows.iter().find(|r| r.contains(file)).unwrap_or_else(|| panic!("{file}: {rows:?}"));
                assert!(row.contains(how), "{file} came as {how}: {row}");
            }
            let parent = format!("#site-sitemaps a[href='/sitemaps/{}']", ann.sitemap.id);
            assert!(texts(html, &parent).contains(&"In an index".to_owned()), "{html}");
            let totals = texts(html, "#totals").concat();
            assert!(
                totals.contains("3 sitemaps") && totals.contains("1 Has errors") && totals.contains("2 Pending"),
                "{totals}"
            );
            let errors = app.store.sitemap(owner, ann.sitemap.id).await.unwrap().errors;
            let said = format!("{errors} error{} and 0 warnings", if errors == 1 { "" } else { "s" });
            assert!(totals.contains(&said), "{said}: {totals}");
            // Who may see it, with their roles; the invitation waiting.
            let members = texts(html, "#member-list li");
            assert_eq!(members, ["ann@example.com · owner", "bob@example.com · reader"]);
            assert!(texts(html, "#invitations-waiting").concat().contains("guest-ann@example.com (reader)"));
            // The IndexNow submissions, newest first, the refusal with its reason.
            let receipts = texts(html, "#indexnow-receipts tbody tr");
            assert_eq!(receipts.len(), 2, "{receipts:?}");
            assert!(receipts[0].contains("Refused") && receipts[0].contains("does not hold the key"), "{receipts:?}");
            assert!(receipts[1].contains("Accepted"), "{receipts:?}");
            assert_eq!(texts(html, "#indexnow-receipts td[data-label='URLs']"), ["1", "3"]);
            assert!(texts(html, "#proof-in-force").concat().contains("verification file"), "{html}");
        }
        // What only owners see or may do.
        let owner_page = text(&owner_html);
        let reader_page = text(&reader_html);
        for owners_only in ["Invite or remove members", "Delete site", "Verify now", &ann.site.verification_token] {
            assert!(owner_page.contains(owners_only), "{owners_only} for the owner");
            assert!(!reader_page.contains(owners_only), "{owners_only} shown to a reader");
        }
        assert!(reader_page.contains("The members page"));

        // A stranger: nothing, on the page, its confirmation and the API.
        for uri in [path.clone(), format!("{path}/delete"), format!("/api/v1/sites/{id}/overview")] {
            assert_eq!(app.get(&uri, Auth::Cookie(&carol.cookie)).await.0, StatusCode::NOT_FOUND, "{uri}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_domain_property_is_named_as_the_proof_and_the_api_says_the_same() {
    each_backend(false, |app| async move {
        let (ann, bob) = ann_and_bob(&app).await;
        let owner = Actor { user_id: ann.site.owner_id, is_admin: false };
        let id = ann.site.id;
        let domain = app.store.create_domain(owner, "ann.example", now()).await.unwrap();
        app.store.record_domain_verification(domain.id, true, now()).await.unwrap();
        app.store.record_proof(id, Some("domain"), Some("ann.example"), now()).await.unwrap();

        // The owner whose property it is gets a link to it, and the file and tag folded away.
        let html = app.get(&format!("/sites/{id}"), Auth::Cookie(&ann.cookie)).await.2;
        let link = format!("#proof-in-force a[href='/domains/{}']", domain.id);
        assert_eq!(texts(&html, &link), ["ann.example"], "{html}");
        assert_eq!(texts(&html, "#other-proofs summary").len(), 1, "{html}");
        // A reader gets its name and whose it is, no link to a property that is not theirs.
        let html = app.get(&format!("/sites/{id}"), Auth::Cookie(&bob)).await.2;
        let proof = texts(&html, "#proof-in-force").concat();
        assert!(proof.contains("ann.example") && proof.contains("of ann@example.com"), "{proof}");
        assert!(texts(&html, "#proof-in-force a").is_empty(), "{html}");

        // The API: the same facts, in the documented shape, for both.
        let uri = format!("/api/v1/sites/{id}/overview");
        let (status, _, body) = app.get(&uri, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let mine: Value = serde_json::from_str(&body).unwrap();
        assert_schema(&mine, "SiteOverview");
        let (status, _, body) = app.get(&uri, Auth::Cookie(&bob)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let read: Value = serde_json::from_str(&body).unwrap();
        assert_schema(&read, "SiteOverview");
        for v in [&mine, &read] {
            assert_eq!(v["proof"]["method"], "domain");
            assert_eq!(v["proof"]["domain"], "ann.example");
            assert_eq!(v["proof"]["domain_owner"], "ann@example.com");
        }
        assert_eq!(mine["proof"]["domain_id"].as_i64(), Some(domain.id), "the owner's own property");
        assert_eq!(read["proof"]["domain_id"], Value::Null, "not the reader's");
        assert_eq!((mine["role"].as_str(), read["role"].as_str()), (Some("owner"), Some("reader")));
        let seeded = app.store.sitemap(owner, ann.sitemap.id).await.unwrap();
        for v in [&mine, &read] {
            let t = &v["totals"];
            assert_eq!((t["sitemaps"].as_i64(), t["errors"].as_i64()), (Some(3), Some(seeded.errors)), "{t}");
            assert_eq!(t["urls"].as_i64(), Some(seeded.rollup_urls), "only the one read stored URLs: {t}");
            assert_eq!((t["by_status"]["errors"].as_i64(), t["by_status"]["pending"].as_i64()), (Some(1), Some(2)));
            assert_eq!(v["members"].as_array().unwrap().len(), 2);
            assert_eq!(v["invitations"][0]["email"], "guest-ann@example.com");
            let accepted: Vec<bool> = v["indexnow"].as_array().unwrap().iter().map(|r| r["accepted"] == true).collect();
            assert_eq!(accepted, [false, true], "newest first");
        }
        // A webhook's URL may be a secret: a reader sees where it goes, not all of it.
        assert_eq!(mine["webhooks"][0]["url"], "https://hooks.example/in");
        let masked = read["webhooks"][0]["url"].as_str().unwrap();
        assert!(masked.starts_with("https://hooks.example") && masked != "https://hooks.example/in", "{masked}");
    })
    .await;
}

#[tokio::test]
async fn the_delete_confirmation_names_who_loses_access() {
    each_backend(false, |app| async move {
        let (ann, bob) = ann_and_bob(&app).await;
        let uri = format!("/sites/{}/delete", ann.site.id);
        let (status, _, html) = app.get(&uri, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK, "{html}");
        assert_eq!(texts(&html, "#members-losing li"), ["bob@example.com · reader"], "not Ann herself");
        assert_eq!(texts(&html, "#invitations-losing li"), ["guest-ann@example.com · reader"]);
        assert!(texts(&html, "#webhooks-losing li").concat().contains("https://hooks.example/in"), "{html}");
        assert!(texts(&html, "#alerts-losing").concat().contains("alert mail"), "{html}");
        // A reader is offered no deletion, and its confirmation is refused.
        assert_eq!(app.get(&uri, Auth::Cookie(&bob)).await.0, StatusCode::FORBIDDEN);
        // A site of one member says so.
        let carol = seed(&app, "carol@example.com", "https://carol.example").await;
        let owner = Actor { user_id: carol.site.owner_id, is_admin: false };
        app.store.revoke_invitation(owner, carol.invitation_id).await.unwrap();
        let html = app.get(&format!("/sites/{}/delete", carol.site.id), Auth::Cookie(&carol.cookie)).await.2;
        assert!(texts(&html, "#no-other-members").concat().contains("only member"), "{html}");
        assert!(texts(&html, "#invitations-losing").is_empty(), "{html}");
    })
    .await;
}

#[tokio::test]
async fn a_sitemap_submitted_again_after_its_removal_is_the_owners_own() {
    each_backend(false, |app| async move {
        let ann = seed(&app, "ann@example.com", "https://ann.example").await;
        let owner = Actor { user_id: ann.site.owner_id, is_admin: false };
        let (id, now) = (ann.site.id, now());
        let child_url = "https://ann.example/child.xml";
        let child =
            app.store.add_sitemap_for_site(id, child_url, Source::Index, Some(ann.sitemap.id), now).await.unwrap();
        let named = "https://ann.example/named.xml";
        let named = app.store.add_sitemap_for_site(id, named, Source::Robots, None, now).await.unwrap();
        // Submitting a live one changes nothing of how it came.
        let again = app.store.add_sitemap(owner, id, &named.url, Source::Api, now).await.unwrap();
        assert_eq!(again.source, "robots");
        // A child removed, then submitted by its owner: no index's child any more (its index
        // would remove it again at its next read), and said to be submitted.
        app.store.remove_sitemap(owner, child.id, now).await.unwrap();
        let back = app.store.add_sitemap(owner, id, child_url, Source::Api, now + 1).await.unwrap();
        assert_eq!((back.id, back.source.as_str(), back.parent_id, back.removed_at), (child.id, "api", None, None));
        // The table and the API say how each came.
        let html = app.get("/", Auth::Cookie(&ann.cookie)).await.2;
        for (url, how) in [(child_url, "Submitted"), (named.url.as_str(), "robots.txt")] {
            let row = texts(&html, "table.sitemaps tbody tr").into_iter().find(|r| r.contains(url)).unwrap();
            assert!(row.contains(how), "{url}: {row}");
        }
        let body = app.get(&format!("/api/v1/sites/{id}/sitemaps"), Auth::Cookie(&ann.cookie)).await.2;
        let listed: Value = serde_json::from_str(&body).unwrap();
        let source = |id: i64| listed.as_array().unwrap().iter().find(|s| s["id"] == id).unwrap()["source"].clone();
        assert_eq!((source(child.id), source(named.id)), (Value::from("api"), Value::from("robots")));
    })
    .await;
}
