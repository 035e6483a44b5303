//! No user reads or changes another's data: for every route that takes an id, user B (a
//! member of no site of A's) gets 404 on user A's resource, and A's data is the same
//! afterwards. What a member who is only a reader may do is `members.rs`'.

use axum::http::StatusCode;
use mapwright_server::api::{Method, ROUTES};
use serde_json::{Value, json};

use super::{call, sitemap_with_download, user, verified_site};
use crate::support::{TestApp, each_backend};

/// Everything user A can read, to compare before and after B's attempts.
async fn snapshot(app: &TestApp, token: &str, site: i64, sitemap: i64, download: i64, hook: i64) -> Vec<String> {
    let mut out = Vec::new();
    for uri in [
        format!("/api/v1/sites/{site}"),
        format!("/api/v1/sites/{site}/sitemaps"),
        format!("/api/v1/sites/{site}/urls?include_removed=true"),
        format!("/api/v1/sites/{site}/frontier?since=0"),
        format!("/api/v1/sitemaps/{sitemap}"),
        format!("/api/v1/sitemaps/{sitemap}/downloads"),
        format!("/api/v1/downloads/{download}/findings"),
        format!("/api/v1/sitemaps/{sitemap}/diffs"),
        format!("/api/v1/downloads/{download}/diff"),
        format!("/api/v1/sitemaps/{sitemap}/lastmod"),
        format!("/api/v1/sitemaps/{sitemap}/child-changes"),
        format!("/api/v1/sites/{site}/members"),
        format!("/api/v1/sites/{site}/alerts"),
        format!("/api/v1/sites/{site}/webhooks"),
        format!("/api/v1/webhooks/{hook}"),
        format!("/api/v1/webhooks/{hook}/deliveries"),
        "/api/v1/tokens".to_owned(),
        "/api/v1/domains".to_owned(),
    ] {
        let (status, _, body) = call(app, "GET", &uri, Some(token), None).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        out.push(body);
    }
    out
}

#[tokio::test]
async fn another_users_resources_are_404_for_every_route_with_an_id() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (_, bob_token) = user(&app, "bob@example.com").await;
        let (site, web) = verified_site(&app, ann).await;
        let (sitemap, download) = sitemap_with_download(&app, ann, &site).await;
        let url = mapwright_store::UrlRecord {
            loc: format!("{}/a", site.origin),
            lastmod: None,
            changefreq: None,
            priority: None,
        };
        app.store.upsert_urls(site.id, sitemap.id, &[url], 30).await.unwrap();
        let ann_token_id = app.store.list_api_tokens(ann).await.unwrap()[0].id;
        let (invitation, _) = app
            .store
            .create_invitation(ann, site.id, "carol@example.com", mapwright_store::Role::Reader, 0, i64::MAX / 2)
            .await
            .unwrap();
        let membership = app.store.list_members(ann, site.id).await.unwrap()[0].id;
        let domain = app.store.create_domain(ann, "ann.example", 0).await.unwrap();
        let events = mapwright_store::WEBHOOK_EVENTS;
        let hook = app.store.create_webhook(ann, site.id, "https://hooks.example/in", "0123456789abcdef", &events, 0);
        let w = hook.await.unwrap().id;
        app.store.enqueue_webhook_event(site.id, "read.completed", "{}", None, 0).await.unwrap();
        let before = snapshot(&app, &ann_token, site.id, sitemap.id, download, w).await;

        let (s, m, d, t, i, b) = (site.id, sitemap.id, download, ann_token_id, invitation.id, membership);
        let p = domain.id;
        let sitemap_body = json!({ "url": format!("{}/other.xml", web.origin) });
        let table: Vec<(Method, &str, String, Option<Value>)> = vec![
            (Method::Get, "/api/v1/sites/{id}", format!("/api/v1/sites/{s}"), None),
            (Method::Delete, "/api/v1/sites/{id}", format!("/api/v1/sites/{s}"), None),
            (Method::Post, "/api/v1/sites/{id}/verify", format!("/api/v1/sites/{s}/verify"), None),
            (Method::Post, "/api/v1/sites/{id}/sitemaps", format!("/api/v1/sites/{s}/sitemaps"), Some(sitemap_body)),
            (Method::Get, "/api/v1/sites/{id}/sitemaps", format!("/api/v1/sites/{s}/sitemaps"), None),
            (Method::Get, "/api/v1/sites/{id}/urls", format!("/api/v1/sites/{s}/urls"), None),
            (Method::Get, "/api/v1/sites/{id}/urls.csv", format!("/api/v1/sites/{s}/urls.csv"), None),
            (Method::Get, "/api/v1/sites/{id}/urls.jsonl", format!("/api/v1/sites/{s}/urls.jsonl"), None),
            (Method::Get, "/api/v1/sites/{id}/frontier", format!("/api/v1/sites/{s}/frontier"), None),
            (Method::Get, "/api/v1/sites/{id}/url-check", format!("/api/v1/sites/{s}/url-check"), None),
            (Method::Post, "/api/v1/sites/{id}/url-check", format!("/api/v1/sites/{s}/url-check"), None),
            (Method::Get, "/api/v1/sites/{id}/failing-urls", format!("/api/v1/sites/{s}/failing-urls"), None),
            (Method::Get, "/api/v1/sites/{id}/failing-urls.csv", format!("/api/v1/sites/{s}/failing-urls.csv"), None),
            (
                Method::Get,
                "/api/v1/sites/{id}/failing-urls.jsonl",
                format!("/api/v1/sites/{s}/failing-urls.jsonl"),
                None,
            ),
            (Method::Get, "/api/v1/sites/{id}/check-changes", format!("/api/v1/sites/{s}/check-changes"), None),
            (Method::Get, "/api/v1/sitemaps/{id}", format!("/api/v1/sitemaps/{m}"), None),
            (Method::Delete, "/api/v1/sitemaps/{id}", format!("/api/v1/sitemaps/{m}"), None),
            (Method::Post, "/api/v1/sitemaps/{id}/resubmit", format!("/api/v1/sitemaps/{m}/resubmit"), None),
            (Method::Get, "/api/v1/sitemaps/{id}/downloads", format!("/api/v1/sitemaps/{m}/downloads"), None),
            (Method::Get, "/api/v1/downloads/{id}/findings", format!("/api/v1/downloads/{d}/findings"), None),
            (Method::Get, "/api/v1/sitemaps/{id}/diffs", format!("/api/v1/sitemaps/{m}/diffs"), None),
            (Method::Get, "/api/v1/downloads/{id}/diff", format!("/api/v1/downloads/{d}/diff"), None),
            (Method::Get, "/api/v1/downloads/{id}/diff.csv", format!("/api/v1/downloads/{d}/diff.csv"), None),
            (Method::Get, "/api/v1/downloads/{id}/diff.jsonl", format!("/api/v1/downloads/{d}/diff.jsonl"), None),
            (Method::Get, "/api/v1/sitemaps/{id}/lastmod", format!("/api/v1/sitemaps/{m}/lastmod"), None),
            (Method::Get, "/api/v1/sitemaps/{id}/child-changes", format!("/api/v1/sitemaps/{m}/child-changes"), None),
            (Method::Delete, "/api/v1/tokens/{id}", format!("/api/v1/tokens/{t}"), None),
            (Method::Get, "/api/v1/sites/{id}/members", format!("/api/v1/sites/{s}/members"), None),
            (Method::Get, "/api/v1/sites/{id}/overview", format!("/api/v1/sites/{s}/overview"), None),
            (
                Method::Post,
                "/api/v1/sites/{id}/invitations",
                format!("/api/v1/sites/{s}/invitations"),
                Some(json!({ "email": "bob@example.com", "role": "owner" })),
            ),
            (Method::Delete, "/api/v1/invitations/{id}", format!("/api/v1/invitations/{i}"), None),
            (Method::Delete, "/api/v1/members/{id}", format!("/api/v1/members/{b}"), None),
            (Method::Get, "/api/v1/sites/{id}/alerts", format!("/api/v1/sites/{s}/alerts"), None),
            (
                Method::Post,
                "/api/v1/sites/{id}/alerts",
                format!("/api/v1/sites/{s}/alerts"),
                Some(json!({ "enabled": false })),
            ),
            (Method::Get, "/api/v1/domains/{id}", format!("/api/v1/domains/{p}"), None),
            (Method::Delete, "/api/v1/domains/{id}", format!("/api/v1/domains/{p}"), None),
            (Method::Post, "/api/v1/domains/{id}/verify", format!("/api/v1/domains/{p}/verify"), None),
            (Method::Get, "/api/v1/sites/{id}/webhooks", format!("/api/v1/sites/{s}/webhooks"), None),
            (
                Method::Post,
                "/api/v1/sites/{id}/webhooks",
                format!("/api/v1/sites/{s}/webhooks"),
                Some(json!({ "url": "https://bob.example/hook" })),
            ),
            (Method::Get, "/api/v1/webhooks/{id}", format!("/api/v1/webhooks/{w}"), None),
            (Method::Delete, "/api/v1/webhooks/{id}", format!("/api/v1/webhooks/{w}"), None),
            (Method::Get, "/api/v1/webhooks/{id}/deliveries", format!("/api/v1/webhooks/{w}/deliveries"), None),
            (Method::Post, "/api/v1/webhooks/{id}/verify", format!("/api/v1/webhooks/{w}/verify"), None),
        ];

        // The table covers every documented route with an id.
        let mut covered: Vec<(Method, &str)> = table.iter().map(|(method, path, _, _)| (*method, *path)).collect();
        let mut with_id: Vec<(Method, &str)> =
            ROUTES.iter().copied().filter(|(_, path)| path.contains("{id}")).collect();
        covered.sort_by_key(|&(method, path)| (path, method.as_str()));
        with_id.sort_by_key(|&(method, path)| (path, method.as_str()));
        assert_eq!(covered, with_id);

        for (method, _, uri, body) in table {
            let method = method.as_str().to_ascii_uppercase();
            let (status, headers, text) = call(&app, &method, &uri, Some(&bob_token), body).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {uri}: {text}");
            let detail = super::assert_problem(status, &headers, &text);
            assert_eq!(detail, "not found", "{method} {uri}: the answer says nothing more");
        }
        let after = snapshot(&app, &ann_token, site.id, sitemap.id, download, w).await;
        assert_eq!(before, after);
        assert_eq!(app.store.site(ann, site.id).await.unwrap(), site, "not even last_checked_at moved");
        assert_eq!(app.store.domain(ann, domain.id).await.unwrap(), domain, "nor the domain property's");
    })
    .await;
}
