//! Account recovery (issue 34 item 1) through the API and the console, on both backends: a
//! reset link mailed to the address (the same answer for every address, used once, expired
//! refused, every session ended and every API token revoked, sign-in with the new password), a change of password (the
//! caller's session kept, the others ended), a change of address confirmed by a link to the new
//! address, and the sign-up's rate limits.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use mapwright_server::{Limits, SharedLimit};
use serde_json::{Value, json};

use crate::console::{csrf_of, post_form, text};
use crate::support::{Auth, Mail, TestApp, each_backend, set_cookie};

const PASSWORD: &str = "a long passphrase";

/// The token of the link to `path` in a mail.
fn token_in(mail: &Mail, path: &str) -> String {
    let (_, rest) = mail.body.split_once(&format!("{path}?token=")).unwrap_or_else(|| panic!("no {path} in {mail:?}"));
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// The newest mail to `to` with this subject, waiting for it (mail goes in the background).
async fn mail_to(app: &TestApp, to: &str, subject: &str) -> Mail {
    let found = crate::support::poll_until(Duration::from_secs(5), || async {
        app.mails().into_iter().rev().find(|m| m.to == to && m.subject == subject)
    })
    .await;
    found.unwrap_or_else(|| panic!("no mail {subject:?} to {to}: {:?}", app.mails()))
}

async fn signin(app: &TestApp, email: &str, password: &str) -> StatusCode {
    app.post_json("/api/v1/signin", Auth::None, json!({"email": email, "password": password})).await.0
}

async fn me(app: &TestApp, cookie: &str) -> StatusCode {
    app.get("/api/v1/me", Auth::Cookie(cookie)).await.0
}

#[tokio::test]
async fn a_reset_link_is_mailed_used_once_ends_every_session_and_expires() {
    each_backend(false, |app| async move {
        let first = app.sign_up("ann@example.com", PASSWORD).await;
        let (_, headers, _) = app
            .post_json("/api/v1/signin", Auth::None, json!({"email": "ann@example.com", "password": PASSWORD}))
            .await;
        let second = set_cookie(&headers).0;
        // An API token made with the password: a reset means someone else may have had it.
        let (status, _, body) = app.post_json("/api/v1/tokens", Auth::Cookie(&first), json!({"name": "crawler"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let secret = serde_json::from_str::<Value>(&body).unwrap()["secret"].as_str().unwrap().to_owned();
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::OK);
        let mails_before = app.mails().len();

        // The same answer for an account's address and for any other.
        let known = app.post_json("/api/v1/password-reset", Auth::None, json!({"email": "ANN@example.com"})).await;
        let unknown = app.post_json("/api/v1/password-reset", Auth::None, json!({"email": "zed@example.com"})).await;
        assert_eq!(known.0, StatusCode::ACCEPTED, "{}", known.2);
        assert_eq!((known.0, &known.2), (unknown.0, &unknown.2));
        let names = |h: &axum::http::HeaderMap| {
            let mut n: Vec<_> = h.keys().map(|k| k.as_str().to_owned()).collect();
            n.sort();
            n
        };
        assert_eq!(names(&known.1), names(&unknown.1));
        let bad = app.post_json("/api/v1/password-reset", Auth::None, json!({"email": "not an address"})).await;
        assert_eq!(bad.0, StatusCode::BAD_REQUEST, "{}", bad.2);

        let mail = mail_to(&app, "ann@example.com", "Reset your mapwright password").await;
        assert!(mail.body.contains("http://console.test/password/reset?token="), "{}", mail.body);
        assert!(mail.body.contains("revokes every API token"), "the mail says what the link ends: {}", mail.body);
        let token = token_in(&mail, "/password/reset");
        assert_eq!(token.len(), 64);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(app.mails().iter().all(|m| m.to != "zed@example.com"), "no mail to an address without an account");
        assert_eq!(app.mails().len(), mails_before + 1);

        let confirm = |token: String, password: &'static str| {
            let app = &app;
            async move {
                app.post_json(
                    "/api/v1/password-reset/confirm",
                    Auth::None,
                    json!({"token": token, "password": password}),
                )
                .await
            }
        };
        let (status, _, body) = confirm(token.clone(), "short").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(me(&app, &first).await, StatusCode::OK, "a refused reset changes nothing");
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::OK, "nor the token");
        let (status, headers, body) = confirm(token.clone(), "the new passphrase").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(headers.get("set-cookie").is_none(), "the new password signs in, not the link");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["email"], "ann@example.com");
        assert_eq!(me(&app, &first).await, StatusCode::UNAUTHORIZED, "every session ended");
        assert_eq!(me(&app, &second).await, StatusCode::UNAUTHORIZED, "every session ended");
        assert_eq!(
            app.get("/api/v1/me", Auth::Bearer(&secret)).await.0,
            StatusCode::UNAUTHORIZED,
            "every token revoked"
        );
        let (status, _, body) = confirm(token, "yet another passphrase").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "used once: {body}");
        assert!(body.contains("not valid"), "{body}");
        assert_eq!(signin(&app, "ann@example.com", PASSWORD).await, StatusCode::UNAUTHORIZED);
        assert_eq!(signin(&app, "ann@example.com", "the new passphrase").await, StatusCode::OK);
        mail_to(&app, "ann@example.com", "Your mapwright password was changed").await;

        // A link of more than an hour ago is refused.
        let two_hours_ago = now() - 7200;
        let (_, old) = app.store.request_password_reset("ann@example.com", two_hours_ago, 3600).await.unwrap().unwrap();
        let (status, _, body) = confirm(old, "an expired passphrase").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(signin(&app, "ann@example.com", "the new passphrase").await, StatusCode::OK);
    })
    .await;
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn a_password_change_keeps_the_callers_session_only() {
    each_backend(false, |app| async move {
        let mine = app.sign_up("ann@example.com", PASSWORD).await;
        let (_, headers, _) = app
            .post_json("/api/v1/signin", Auth::None, json!({"email": "ann@example.com", "password": PASSWORD}))
            .await;
        let other = set_cookie(&headers).0;
        let change = |current: &'static str, password: &'static str| {
            let (app, mine) = (&app, mine.clone());
            async move {
                let body = json!({"current_password": current, "password": password});
                app.post_json("/api/v1/me/password", Auth::Cookie(&mine), body).await
            }
        };
        let (status, _, body) = change("not the password", "the new passphrase").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("current password"), "{body}");
        let (status, _, body) = change(PASSWORD, "short").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(me(&app, &other).await, StatusCode::OK, "nothing changed yet");
        let (status, _, body) = change(PASSWORD, "the new passphrase").await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        assert_eq!(me(&app, &mine).await, StatusCode::OK, "the caller's session stays");
        assert_eq!(me(&app, &other).await, StatusCode::UNAUTHORIZED, "the others end");
        assert_eq!(signin(&app, "ann@example.com", "the new passphrase").await, StatusCode::OK);
        let anonymous =
            app.post_json("/api/v1/me/password", Auth::None, json!({"current_password": "x", "password": "y"})).await;
        assert_eq!(anonymous.0, StatusCode::UNAUTHORIZED);
    })
    .await;
}

#[tokio::test]
async fn an_address_change_is_confirmed_by_a_link_to_the_new_address() {
    each_backend(false, |app| async move {
        let ann = app.sign_up("ann@example.com", PASSWORD).await;
        app.sign_up("bob@example.com", PASSWORD).await;
        let ask = |email: &'static str, password: &'static str| {
            let (app, ann) = (&app, ann.clone());
            async move {
                app.post_json("/api/v1/me/email", Auth::Cookie(&ann), json!({"email": email, "password": password}))
                    .await
            }
        };
        let (status, _, body) = ask("ann.new@example.com", "not the password").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let free = ask("Ann.New@example.com", PASSWORD).await;
        let taken = ask("bob@example.com", PASSWORD).await;
        assert_eq!(free.0, StatusCode::ACCEPTED, "{}", free.2);
        assert_eq!((free.0, &free.2), (taken.0, &taken.2), "a taken address is not told apart");
        mail_to(&app, "bob@example.com", "Your address was given for another mapwright account").await;
        let mail = mail_to(&app, "ann.new@example.com", "Confirm your new mapwright address").await;
        let token = token_in(&mail, "/account/email/confirm");

        let confirm = |password: &'static str| {
            let (app, token) = (&app, token.clone());
            async move {
                app.post_json("/api/v1/email-change/confirm", Auth::None, json!({"token": token, "password": password}))
                    .await
            }
        };
        let (status, _, body) = confirm("not the password").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "the link alone is not enough: {body}");
        let (status, _, body) = confirm(PASSWORD).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["email"], "ann.new@example.com");
        assert_eq!(confirm(PASSWORD).await.0, StatusCode::BAD_REQUEST, "used once");
        let (_, _, body) = app.get("/api/v1/me", Auth::Cookie(&ann)).await;
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["email"], "ann.new@example.com");
        assert_eq!(signin(&app, "ann.new@example.com", PASSWORD).await, StatusCode::OK);
        assert_eq!(signin(&app, "ann@example.com", PASSWORD).await, StatusCode::UNAUTHORIZED);
        let note = mail_to(&app, "ann@example.com", "Your mapwright address was changed").await;
        assert!(note.body.contains("ann.new@example.com"), "{}", note.body);
    })
    .await;
}

/// A reset link and a change-of-address link are mail to an inbox like sign-up's: they ask
/// the outbound gate, whose budget per recipient holds across users and processes. An inbox
/// that had its share gets nothing more, and the answer is the same.
#[tokio::test]
async fn reset_and_address_mail_ask_the_per_recipient_gate() {
    each_backend(false, |app| async move {
        let ann = app.sign_up("ann@example.com", PASSWORD).await;
        // Others (any user, any process) have used up both inboxes' share of the service's mail.
        for inbox in ["ann@example.com", "ann.new@example.com"] {
            while app.state.gate.ask(mapwright_server::outbound::Target::Mail(inbox)).await.is_ok() {}
        }
        let before = app.mails().len();
        let reset = app.post_json("/api/v1/password-reset", Auth::None, json!({"email": "ann@example.com"})).await;
        assert_eq!(reset.0, StatusCode::ACCEPTED, "the same answer: {}", reset.2);
        let body = json!({"email": "ann.new@example.com", "password": PASSWORD});
        let change = app.post_json("/api/v1/me/email", Auth::Cookie(&ann), body).await;
        assert_eq!(change.0, StatusCode::ACCEPTED, "the same answer: {}", change.2);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(app.mails().len(), before, "nothing mailed past the gate: {:?}", &app.mails()[before..]);
    })
    .await;
}

#[tokio::test]
async fn reset_requests_count_toward_the_sign_up_limits() {
    each_backend(false, |app| async move {
        let mut app = app;
        app.sign_up("ann@example.com", PASSWORD).await;
        let minute = Duration::from_secs(60);
        app.state.limits = Arc::new(Limits {
            // The sign-up above counted one of each already: one home for both.
            sign_up_per_client: SharedLimit::new("sign-up per client", 3, minute),
            mail_per_network_address: SharedLimit::new("sign-up mail per network and address", 2, minute),
            ..Limits::default()
        });
        let ask = || app.post_json("/api/v1/password-reset", Auth::None, json!({"email": "ann@example.com"}));
        assert_eq!(ask().await.0, StatusCode::ACCEPTED);
        // Past the mail's share: the same answer, nothing sent.
        assert_eq!(ask().await.0, StatusCode::ACCEPTED);
        let (status, headers, _) = ask().await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert!(headers.contains_key("retry-after"));
        mail_to(&app, "ann@example.com", "Reset your mapwright password").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let resets = app.mails().iter().filter(|m| m.subject == "Reset your mapwright password").count();
        assert_eq!(resets, 1);
    })
    .await;
}

#[tokio::test]
async fn the_console_resets_changes_the_password_and_the_address() {
    each_backend(false, |app| async move {
        let session = app.sign_up("cat@example.com", PASSWORD).await;
        // The sign-in page leads to the reset.
        let (_, _, html) = app.get("/signin", Auth::None).await;
        assert!(html.contains("href=\"/password/forgot\""), "{html}");
        let (status, headers, html) = app.get("/password/forgot", Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        let pre = set_cookie(&headers).0;
        let csrf = csrf_of(&html).unwrap();
        let (status, _, sent) =
            post_form(&app, "/password/forgot", &pre, &format!("csrf={csrf}&email=cat%40example.com"), &[]).await;
        assert_eq!(status, StatusCode::OK, "{sent}");
        let (_, _, other) =
            post_form(&app, "/password/forgot", &pre, &format!("csrf={csrf}&email=nobody%40example.com"), &[]).await;
        assert_eq!(sent, other, "the same page for every address");
        let words = text(&sent);
        assert!(words.contains("If an account has this address") && words.contains("outbox folder"), "{words}");
        assert!(!words.contains("spam folder"), "a server that keeps its mail in an outbox sends none: {words}");

        let token =
            token_in(&mail_to(&app, "cat@example.com", "Reset your mapwright password").await, "/password/reset");
        let (status, headers, html) = app.get(&format!("/password/reset?token={token}"), Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains(&format!("value=\"{token}\"")), "{html}");
        let pre = set_cookie(&headers).0;
        let csrf = csrf_of(&html).unwrap();
        let body = format!("csrf={csrf}&token={token}&password=the+new+passphrase");
        let (status, _, done) = post_form(&app, "/password/reset", &pre, &body, &[]).await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert!(text(&done).contains("every session of the account was signed out"), "{done}");
        assert!(text(&done).contains("every API token of it revoked"), "{done}");
        assert_eq!(app.get("/account", Auth::Cookie(&session)).await.0, StatusCode::SEE_OTHER, "the session ended");
        let (status, _, again) = post_form(&app, "/password/reset", &pre, &body, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(text(&again).contains("not valid"), "{again}");

        // Signed in again: the account page offers both changes.
        let (_, headers, _) = app
            .post_json(
                "/api/v1/signin",
                Auth::None,
                json!({"email": "cat@example.com", "password": "the new passphrase"}),
            )
            .await;
        let session = set_cookie(&headers).0;
        let (_, _, html) = app.get("/account", Auth::Cookie(&session)).await;
        for action in ["/account/password", "/account/email"] {
            assert!(html.contains(&format!("action=\"{action}\"")), "{action} missing: {html}");
        }
        let csrf = csrf_of(&html).unwrap();
        let wrong = format!("csrf={csrf}&current_password=wrong+passphrase&password=a+third+passphrase");
        let (status, headers, _) = post_form(&app, "/account/password", &session, &wrong, &[]).await;
        assert_eq!((status, headers["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/account"));
        let right = format!("csrf={csrf}&current_password=the+new+passphrase&password=a+third+passphrase");
        post_form(&app, "/account/password", &session, &right, &[]).await;
        assert_eq!(app.get("/account", Auth::Cookie(&session)).await.0, StatusCode::OK, "the caller stays in");
        assert_eq!(signin(&app, "cat@example.com", "a third passphrase").await, StatusCode::OK);

        let move_to = format!("csrf={csrf}&email=kit%40example.com&password=a+third+passphrase");
        let (status, _, _) = post_form(&app, "/account/email", &session, &move_to, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let token = token_in(
            &mail_to(&app, "kit@example.com", "Confirm your new mapwright address").await,
            "/account/email/confirm",
        );
        // Opened signed in: the form carries the session's token.
        let (status, _, html) = app.get(&format!("/account/email/confirm?token={token}"), Auth::Cookie(&session)).await;
        assert_eq!(status, StatusCode::OK);
        let csrf = csrf_of(&html).unwrap();
        let body = format!("csrf={csrf}&token={token}&password=a+third+passphrase");
        let (status, _, done) = post_form(&app, "/account/email/confirm", &session, &body, &[]).await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert!(text(&done).contains("kit@example.com"), "{done}");
        let (_, _, html) = app.get("/account", Auth::Cookie(&session)).await;
        assert!(text(&html).contains("Signed in as kit@example.com"), "{html}");
    })
    .await;
}
