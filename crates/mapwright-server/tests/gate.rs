//! Issue 33, the strangers' findings against one outbound gate, each with two users: a removed
//! owner's invitation and what they set up end with the removal; invitation mail is capped per
//! recipient across senders; "Verify now" is paced per site and per host, a failed proof
//! remembered; a webhook receives nothing before its handshake; readers never see a webhook's
//! URL; `/metrics` can be closed.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::api::{call, user, verified_site};
use crate::support::{Mail, TestApp, each_backend};

/// The token of an invitation mail's link.
fn invitation_token(mail: &Mail) -> String {
    let (_, rest) = mail.body.split_once("/invitations/accept?token=").unwrap_or_else(|| panic!("no link in {mail:?}"));
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// Invites `email` to the site as `role` through the API; the answer's status and body.
async fn invite(app: &TestApp, token: &str, site: i64, email: &str, role: &str) -> (StatusCode, String) {
    let uri = format!("/api/v1/sites/{site}/invitations");
    let (status, _, body) = call(app, "POST", &uri, Some(token), Some(json!({"email": email, "role": role}))).await;
    (status, body)
}

/// The mails to `to` so far.
fn mails_to(app: &TestApp, to: &str) -> Vec<Mail> {
    app.mails().into_iter().filter(|m| m.to == to).collect()
}

/// Finding 1: owner Ann invites Bob as co-owner; Bob invites Carol as owner; Ann removes Bob
/// (204); Carol's acceptance is refused, and Bob's unsubscribe link no longer works.
#[tokio::test]
async fn a_removed_owner_s_invitee_is_refused_and_his_links_end() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (_, bob_token) = user(&app, "bob@example.com").await;
        let (_, carol_token) = user(&app, "carol@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let s = site.id;
        assert_eq!(invite(&app, &ann_token, s, "bob@example.com", "owner").await.0, StatusCode::CREATED);
        let bobs = invitation_token(&app.wait_for_mails(1).await[0]);
        let (status, _, text) =
            call(&app, "POST", "/api/v1/invitations/accept", Some(&bob_token), Some(json!({"token": bobs}))).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(invite(&app, &bob_token, s, "carol@example.com", "owner").await.0, StatusCode::CREATED);
        let carols = invitation_token(&app.wait_for_mails(2).await[1]);
        let recipients = app.store.claim_alert_recipients(s, 1, 86_400).await.unwrap();
        let bob_link = recipients.iter().find(|r| r.email == "bob@example.com").unwrap().token.clone();

        let (_, _, members) = call(&app, "GET", &format!("/api/v1/sites/{s}/members"), Some(&ann_token), None).await;
        let members: Value = serde_json::from_str(&members).unwrap();
        let bob_member =
            members["members"].as_array().unwrap().iter().find(|m| m["email"] == "bob@example.com").unwrap()["id"]
                .as_i64()
                .unwrap();
        let (status, _, _) =
            call(&app, "DELETE", &format!("/api/v1/members/{bob_member}"), Some(&ann_token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);

        let (status, _, text) =
            call(&app, "POST", "/api/v1/invitations/accept", Some(&carol_token), Some(json!({"token": carols}))).await;
        assert!(matches!(status, StatusCode::FORBIDDEN | StatusCode::NOT_FOUND), "{status}: {text}");
        let (status, _, _) = call(&app, "GET", &format!("/api/v1/sites/{s}"), Some(&carol_token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "Carol is no member");
        let (status, _, _) =
            call(&app, "POST", "/api/v1/alerts/unsubscribe", None, Some(json!({"token": bob_link}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "a removed member's unsubscribe link is dead");
    })
    .await;
}

/// Finding 5: two accounts invite one address again and again; its inbox receives at most the
/// cap, and every refused call says why.
#[tokio::test]
async fn invitation_mail_to_one_address_is_capped_across_senders() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (eve, eve_token) = user(&app, "eve@example.com").await;
        let (ann_site, _a) = verified_site(&app, ann).await;
        let (eve_site, _e) = verified_site(&app, eve).await;
        let mut created = 0;
        for n in 0..20 {
            let (token, site) = if n % 2 == 0 { (&ann_token, ann_site.id) } else { (&eve_token, eve_site.id) };
            let (status, body) = invite(&app, token, site, "victim@example.com", "reader").await;
            match status {
                StatusCode::CREATED => created += 1,
                StatusCode::UNPROCESSABLE_ENTITY | StatusCode::TOO_MANY_REQUESTS => {
                    assert!(body.contains("victim@example.com"), "{body}")
                }
                other => panic!("{other}: {body}"),
            }
        }
        assert_eq!(created, mapwright_store::MAX_INVITATIONS_PER_ADDRESS);
        // Let the background mail finish, then count the inbox.
        app.wait_for_mails(created as usize).await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(mails_to(&app, "victim@example.com").len() as i64, mapwright_store::MAX_INVITATIONS_PER_ADDRESS);
        // Another address is not held back by the victim's cap.
        assert_eq!(invite(&app, &ann_token, ann_site.id, "friend@example.com", "reader").await.0, StatusCode::CREATED);
    })
    .await;
}
