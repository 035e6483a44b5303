//! Several users per site through the API: an owner invites by address, the link is mailed
//! (read here from the outbox), the invitee accepts it signed in as that address, a reader
//! reads every route of the site (never its verification token) and is 403 on every owner's
//! action, members are removed but never the last owner, and the limits hold.

use std::sync::Arc;

use axum::http::StatusCode;
use mapwright_server::Limits;
use serde_json::{Value, json};

use super::{assert_problem, call, call_json, sitemap_with_download, user, verified_site};
use crate::support::{Mail, TestApp, each_backend};

/// The token of an invitation mail's link.
fn invitation_token(mail: &Mail) -> String {
    let (_, rest) = mail.body.split_once("/invitations/accept?token=").unwrap_or_else(|| panic!("no link in {mail:?}"));
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// Accepts an invitation through the API as the user of `bearer`; the site it opens.
async fn accept(app: &TestApp, bearer: &str, token: &str) -> Value {
    let body = Some(json!({ "token": token }));
    call_json(app, "POST", "/api/v1/invitations/accept", bearer, body, StatusCode::OK, "Site").await
}

// Alike on purpose: the arguments of api/mod.rs's `call_json` (a request and the status it must
// answer); this one checks a problem document, that one a schema.
/// Sends a request that must answer a problem of `expected`; returns its detail.
async fn refused(
    app: &TestApp,
    method: &str,
    uri: &str,
    token: &str,
    body: Option<Value>,
    expected: StatusCode,
) -> String {
    let (status, headers, text) = call(app, method, uri, Some(token), body).await;
    assert_eq!(status, expected, "{method} {uri}: {text}");
    assert_problem(status, &headers, &text)
}

#[tokio::test]
async fn an_owner_invites_a_reader_who_reads_everything_and_changes_nothing() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (_, bob_token) = user(&app, "bob@example.com").await;
        let (_, eve_token) = user(&app, "eve@example.com").await;
        let (site, web) = verified_site(&app, ann).await;
        let (sitemap, download) = sitemap_with_download(&app, ann, &site).await;
        let (s, m, d) = (site.id, sitemap.id, download);
        refused(&app, "GET", &format!("/api/v1/sites/{s}/members"), &bob_token, None, StatusCode::NOT_FOUND).await;

        let invitation = call_json(
            &app,
            "POST",
            &format!("/api/v1/sites/{s}/invitations"),
            &ann_token,
            Some(json!({"email": " Bob@Example.com ", "role": "reader"})),
            StatusCode::CREATED,
            "Invitation",
        )
        .await;
        assert_eq!(invitation["email"], "bob@example.com");
        assert!(!invitation.to_string().contains("token"), "the answer never carries the link");
        let mail = app.wait_for_mails(1).await.pop().unwrap();
        assert_eq!(mail.to, "bob@example.com");
        assert!(mail.body.contains(&site.origin) && mail.body.contains("ann@example.com"), "{mail:?}");
        assert!(mail.body.contains("http://console.test/invitations/accept?token="), "{mail:?}");
        let token = invitation_token(&mail);

        // Only Bob may use it, once.
        let detail = refused(
            &app,
            "POST",
            "/api/v1/invitations/accept",
            &eve_token,
            Some(json!({"token": token})),
            StatusCode::FORBIDDEN,
        )
        .await;
        assert!(detail.contains("bob@example.com"), "{detail}");
        let accepted = accept(&app, &bob_token, &token).await;
        assert_eq!(accepted["id"], s);
        // A reader sees the verified state, never the token nor the instructions built on it.
        let secret = site.verification_token.as_str();
        assert!(accepted["verification_token"].is_null() && accepted["verification"].is_null(), "{accepted}");
        assert!(accepted["verified_at"].is_i64(), "{accepted}");
        assert!(!accepted.to_string().contains(secret), "{accepted}");
        refused(
            &app,
            "POST",
            "/api/v1/invitations/accept",
            &bob_token,
            Some(json!({"token": token})),
            StatusCode::NOT_FOUND,
        )
        .await;

        // Bob reads every route of the site.
        for uri in [
            format!("/api/v1/sites/{s}"),
            format!("/api/v1/sites/{s}/sitemaps"),
            format!("/api/v1/sites/{s}/urls"),
            format!("/api/v1/sites/{s}/urls.csv"),
            format!("/api/v1/sites/{s}/urls.jsonl"),
            format!("/api/v1/sites/{s}/frontier?since=0"),
            format!("/api/v1/sites/{s}/url-check"),
            format!("/api/v1/sites/{s}/failing-urls"),
            format!("/api/v1/sites/{s}/failing-urls.csv"),
            format!("/api/v1/sites/{s}/failing-urls.jsonl"),
            format!("/api/v1/sitemaps/{m}"),
            format!("/api/v1/sitemaps/{m}/downloads"),
            format!("/api/v1/downloads/{d}/findings"),
        ] {
            let (status, _, text) = call(&app, "GET", &uri, Some(&bob_token), None).await;
            assert_eq!(status, StatusCode::OK, "{uri}: {text}");
            assert!(!text.contains(secret), "{uri} gave a reader the token: {text}");
        }
        let sites = call_json(&app, "GET", "/api/v1/sites", &bob_token, None, StatusCode::OK, "[Site]").await;
        assert_eq!(sites.as_array().unwrap().len(), 1);
        assert!(sites[0]["verification"].is_null() && !sites.to_string().contains(secret), "{sites}");
        let shown =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}"), &bob_token, None, StatusCode::OK, "Site").await;
        assert!(shown["verification_token"].is_null() && shown["verification"].is_null(), "{shown}");
        // The owner keeps both.
        let owners =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}"), &ann_token, None, StatusCode::OK, "Site").await;
        assert_eq!(owners["verification_token"], secret);
        assert_eq!(owners["verification"]["file_name"], format!("mapwright-{secret}.html"));
        let owners = call_json(&app, "GET", "/api/v1/sites", &ann_token, None, StatusCode::OK, "[Site]").await;
        assert_eq!(owners[0]["verification_token"], secret);
        let members =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}/members"), &bob_token, None, StatusCode::OK, "Members")
                .await;
        assert_eq!(members["role"], "reader");
        let roles: Vec<(&str, &str)> = members["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["email"].as_str().unwrap(), m["role"].as_str().unwrap()))
            .collect();
        assert_eq!(roles, vec![("ann@example.com", "owner"), ("bob@example.com", "reader")]);
        let anns_membership = members["members"][0]["id"].as_i64().unwrap();
        let bobs_membership = members["members"][1]["id"].as_i64().unwrap();

        // ...and is 403 on every owner's action; Ann's data stays as it was.
        let carol = call_json(
            &app,
            "POST",
            &format!("/api/v1/sites/{s}/invitations"),
            &ann_token,
            Some(json!({"email": "carol@example.com"})),
            StatusCode::CREATED,
            "Invitation",
        )
        .await;
        assert_eq!(carol["role"], "reader", "reader is the default role");
        let before = call(&app, "GET", &format!("/api/v1/sites/{s}/sitemaps"), Some(&ann_token), None).await.2;
        let other = json!({ "url": format!("{}/other.xml", web.origin) });
        let again = json!({ "url": sitemap.url });
        for (method, uri, body) in [
            ("DELETE", format!("/api/v1/sites/{s}"), None),
            ("POST", format!("/api/v1/sites/{s}/verify"), None),
            ("POST", format!("/api/v1/sites/{s}/sitemaps"), Some(other)),
            ("POST", format!("/api/v1/sites/{s}/sitemaps"), Some(again)),
            ("DELETE", format!("/api/v1/sitemaps/{m}"), None),
            ("POST", format!("/api/v1/sitemaps/{m}/resubmit"), None),
            ("POST", format!("/api/v1/sites/{s}/url-check"), None),
            ("POST", format!("/api/v1/sites/{s}/invitations"), Some(json!({"email": "eve@example.com"}))),
            ("DELETE", format!("/api/v1/invitations/{}", carol["id"]), None),
            ("DELETE", format!("/api/v1/members/{anns_membership}"), None),
        ] {
            let detail = refused(&app, method, &uri, &bob_token, body, StatusCode::FORBIDDEN).await;
            assert!(detail.contains("reader"), "{method} {uri}: {detail}");
        }
        let after = call(&app, "GET", &format!("/api/v1/sites/{s}/sitemaps"), Some(&ann_token), None).await.2;
        assert_eq!(before, after);
        assert_eq!(app.store.site(ann, s).await.unwrap(), site, "not even last_checked_at moved");
        let members =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}/members"), &ann_token, None, StatusCode::OK, "Members")
                .await;
        assert_eq!(members["role"], "owner");
        assert_eq!(members["members"].as_array().unwrap().len(), 2);
        assert_eq!(members["invitations"].as_array().unwrap().len(), 1, "Carol's invitation is still there");
        assert_eq!(app.mails().len(), 2, "Bob's attempt mailed nobody");

        // Bad requests, a member's address, the last owner.
        let invite = format!("/api/v1/sites/{s}/invitations");
        refused(&app, "POST", &invite, &ann_token, Some(json!({"email": "not an address"})), StatusCode::BAD_REQUEST)
            .await;
        refused(
            &app,
            "POST",
            &invite,
            &ann_token,
            Some(json!({"email": "x@example.com", "role": "admin"})),
            StatusCode::BAD_REQUEST,
        )
        .await;
        refused(&app, "POST", &invite, &ann_token, Some(json!({"email": "bob@example.com"})), StatusCode::CONFLICT)
            .await;
        let detail = refused(
            &app,
            "DELETE",
            &format!("/api/v1/members/{anns_membership}"),
            &ann_token,
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await;
        assert!(detail.contains("last owner"), "{detail}");

        // Ann withdraws Carol's invitation and removes Bob, who then sees nothing.
        let (status, _, text) =
            call(&app, "DELETE", &format!("/api/v1/invitations/{}", carol["id"]), Some(&ann_token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{text}");
        let (status, _, text) =
            call(&app, "DELETE", &format!("/api/v1/members/{bobs_membership}"), Some(&ann_token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{text}");
        refused(&app, "GET", &format!("/api/v1/sites/{s}"), &bob_token, None, StatusCode::NOT_FOUND).await;
        refused(&app, "GET", &format!("/api/v1/sitemaps/{m}"), &bob_token, None, StatusCode::NOT_FOUND).await;
    })
    .await;
}

#[tokio::test]
async fn a_second_owner_can_do_everything_and_the_first_can_leave() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (bob, bob_token) = user(&app, "bob@example.com").await;
        let (site, web) = verified_site(&app, ann).await;
        let s = site.id;
        let body = json!({"email": "bob@example.com", "role": "owner"});
        call_json(
            &app,
            "POST",
            &format!("/api/v1/sites/{s}/invitations"),
            &ann_token,
            Some(body),
            StatusCode::CREATED,
            "Invitation",
        )
        .await;
        let token = invitation_token(&app.wait_for_mails(1).await.pop().unwrap());
        accept(&app, &bob_token, &token).await;

        let url = json!({ "url": format!("{}/bob.xml", web.origin) });
        call_json(
            &app,
            "POST",
            &format!("/api/v1/sites/{s}/sitemaps"),
            &bob_token,
            Some(url),
            StatusCode::CREATED,
            "Sitemap",
        )
        .await;
        let members =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}/members"), &bob_token, None, StatusCode::OK, "Members")
                .await;
        assert_eq!(members["role"], "owner");
        // Ann leaves: the site now counts against Bob.
        let anns = members["members"][0]["id"].as_i64().unwrap();
        let (status, _, text) = call(&app, "DELETE", &format!("/api/v1/members/{anns}"), Some(&ann_token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{text}");
        let shown =
            call_json(&app, "GET", &format!("/api/v1/sites/{s}"), &bob_token, None, StatusCode::OK, "Site").await;
        assert_eq!(shown["owner_id"], bob.user_id);
        refused(&app, "GET", &format!("/api/v1/sites/{s}"), &ann_token, None, StatusCode::NOT_FOUND).await;
    })
    .await;
}

#[tokio::test]
async fn invitations_are_limited_per_user_and_a_day() {
    let mut app = TestApp::new(false).await;
    app.state.limits = Arc::new(Limits {
        invitations_per_user: Limits::default().invitations_per_user.with_limit(2),
        ..Limits::default()
    });
    let (ann, ann_token) = user(&app, "ann@example.com").await;
    let (site, _web) = verified_site(&app, ann).await;
    let uri = format!("/api/v1/sites/{}/invitations", site.id);
    for n in 0..2 {
        let body = json!({ "email": format!("u{n}@example.com") });
        call_json(&app, "POST", &uri, &ann_token, Some(body), StatusCode::CREATED, "Invitation").await;
    }
    let (status, headers, text) =
        call(&app, "POST", &uri, Some(&ann_token), Some(json!({"email": "u3@example.com"}))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 3600, "a day's window: {wait}");
    assert_eq!(app.wait_for_mails(2).await.len(), 2);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(app.mails().len(), 2, "the refused invitation mailed nobody");
}
