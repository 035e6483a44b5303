//! Sign-up, sign-in, sign-out, sessions and API tokens through the JSON API.

use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::support::{Auth, TestApp, each_backend, poll_until, set_cookie};

async fn sign_up(app: &TestApp, email: &str) -> String {
    app.sign_up(email, "a long passphrase").await
}

/// `POST /api/v1/signin` with these credentials.
async fn sign_in(app: &TestApp, email: &str, password: &str) -> (StatusCode, HeaderMap, String) {
    app.post_json("/api/v1/signin", Auth::None, json!({"email": email, "password": password})).await
}

/// `POST /api/v1/signup/confirm`: the mailed link's token and a password.
async fn confirm(app: &TestApp, token: &str, password: &str) -> (StatusCode, HeaderMap, String) {
    app.post_json("/api/v1/signup/confirm", Auth::None, json!({"token": token, "password": password})).await
}

#[tokio::test]
async fn sign_up_mails_a_link_whose_confirmation_sets_a_session_cookie() {
    each_backend(false, |app| async move {
        let (status, headers, body) = app
            .post_json(
                "/api/v1/signup",
                Auth::None,
                json!({"email": "Ann@Example.com", "password": "a long passphrase"}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert!(headers.get("set-cookie").is_none(), "no session before the address is confirmed");
        // No account yet: signing in fails as for any unknown address.
        let (status, _, _) = sign_in(&app, "ann@example.com", "a long passphrase").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(app.store.user_credentials("ann@example.com").await.unwrap().is_none());

        let mail = app.wait_for_mails(1).await.remove(0);
        assert_eq!(mail.to, "ann@example.com");
        assert_eq!(mail.subject, "Confirm your mapwright account");
        assert!(mail.body.contains("http://console.test/signup/confirm?token="), "{}", mail.body);
        let token = mail.link_token().unwrap();
        assert_eq!(token.len(), 64);

        // The link alone is not enough: the password of the sign-up is.
        let (status, _, body) = confirm(&app, &token, "not the password").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, headers, body) = confirm(&app, &token, "a long passphrase").await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let user: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(user["email"], "ann@example.com");
        assert_eq!(user["is_admin"], false);
        let (cookie, full) = set_cookie(&headers);
        assert!(cookie.starts_with("mapwright_session=") && cookie.len() > 60, "{full}");
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=2592000"] {
            assert!(full.contains(attribute), "{attribute} missing from {full}");
        }
        assert!(!full.contains("Secure"), "{full}");
        // The password is stored as an argon2 hash, never as written.
        let (_, hash) = app.store.user_credentials("ann@example.com").await.unwrap().unwrap();
        assert!(hash.starts_with("$argon2id$") && !hash.contains("passphrase"));

        let (status, _, body) = app.get("/api/v1/me", Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["email"], "ann@example.com");

        // A link is used once.
        let (status, _, body) = confirm(&app, &token, "a long passphrase").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("not valid"), "{body}");
    })
    .await;
}

#[tokio::test]
async fn secure_cookies_behind_tls() {
    each_backend(true, |app| async move {
        // The session cookie is Secure (the confirmation sets it through the same code).
        app.sign_up("a@example.com", "a long passphrase").await;
        let (_, headers, _) = sign_in(&app, "a@example.com", "a long passphrase").await;
        let cookie_line = set_cookie(&headers).1;
        assert!(cookie_line.ends_with("; Secure"), "{cookie_line}");
    })
    .await;
}

#[tokio::test]
async fn sign_up_refuses_bad_input_and_says_nothing_of_taken_addresses() {
    each_backend(false, |app| async move {
        sign_up(&app, "ann@example.com").await;
        let taken = app
            .post_json(
                "/api/v1/signup",
                Auth::None,
                json!({"email": "ANN@example.com ", "password": "another passphrase"}),
            )
            .await;
        let free = app
            .post_json(
                "/api/v1/signup",
                Auth::None,
                json!({"email": "bob@example.com", "password": "another passphrase"}),
            )
            .await;
        assert_eq!(taken.0, StatusCode::ACCEPTED);
        assert_eq!((taken.0, &taken.2), (free.0, &free.2), "a taken and a free address get the same answer");
        let names = |h: &axum::http::HeaderMap| {
            let mut n: Vec<_> = h.keys().map(|k| k.as_str().to_owned()).collect();
            n.sort();
            n
        };
        assert_eq!(names(&taken.1), names(&free.1));
        // The stranger's password opened nothing, and the owner's still works.
        let (status, _, _) = sign_in(&app, "ann@example.com", "another passphrase").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _, _) = sign_in(&app, "ann@example.com", "a long passphrase").await;
        assert_eq!(status, StatusCode::OK);
        // Only the mail differs, and only the owner of each address reads it.
        let mails = app.wait_for_mails(3).await;
        let to_ann = mails.iter().rfind(|m| m.to == "ann@example.com").unwrap();
        assert_eq!(to_ann.subject, "You already have a mapwright account");
        assert!(to_ann.link_token().is_none() && to_ann.body.contains("http://console.test/signin"), "{to_ann:?}");
        let to_bob = mails.iter().find(|m| m.to == "bob@example.com").unwrap();
        assert!(to_bob.link_token().is_some());

        let cases = [
            (json!({"email": "not-an-address", "password": "a long passphrase"}), StatusCode::BAD_REQUEST),
            (json!({"email": "bob@example.com", "password": "short"}), StatusCode::BAD_REQUEST),
            (json!({"email": "bob@example.com"}), StatusCode::UNPROCESSABLE_ENTITY),
        ];
        for (body, expected) in cases {
            let (status, _, text) = app.post_json("/api/v1/signup", Auth::None, body.clone()).await;
            assert_eq!(status, expected, "{body} -> {text}");
        }
    })
    .await;
}

/// A stranger asks first for the owner's address with a password of their own: the owner's
/// later sign-up replaces the stranger's (one link per address, the newest), and the owner's
/// password, not the stranger's, is what confirms; the stranger's old link is dead.
#[tokio::test]
async fn a_strangers_earlier_sign_up_cannot_take_the_owners_account() {
    each_backend(false, |app| async move {
        let ask = |password: &'static str| {
            let app = &app;
            async move {
                let body = json!({"email": "ann@example.com", "password": password});
                assert_eq!(app.post_json("/api/v1/signup", Auth::None, body).await.0, StatusCode::ACCEPTED);
            }
        };
        ask("the strangers password").await;
        let strangers = app.wait_for_mails(1).await.remove(0).link_token().unwrap();
        ask("the owners passphrase").await;
        let owners = app.wait_for_mails(2).await.remove(1).link_token().unwrap();
        assert_ne!(strangers, owners);
        for (token, password) in [(&strangers, "the strangers password"), (&owners, "the strangers password")] {
            assert_eq!(confirm(&app, token, password).await.0, StatusCode::BAD_REQUEST);
        }
        assert_eq!(confirm(&app, &owners, "the owners passphrase").await.0, StatusCode::CREATED);
    })
    .await;
}

/// Nobody floods an inbox through sign-up: three messages an hour per address, then the
/// answer stays the same and no mail goes.
#[tokio::test]
async fn sign_up_mail_is_limited_per_address() {
    let app = TestApp::new(false).await;
    for n in 0..6 {
        let body = json!({"email": "victim@example.com", "password": "a long passphrase"});
        let (status, _, text) = app.post_json("/api/v1/signup", Auth::None, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "request {n}: {text}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(app.wait_for_mails(3).await.len(), 3);
}

/// Without a mailer the server takes no sign-ups: accounts come from its operator.
#[tokio::test]
async fn a_server_without_mail_takes_no_sign_ups() {
    let mut app = TestApp::new(false).await;
    app.state.mail = None;
    let body = json!({"email": "ann@example.com", "password": "a long passphrase"});
    let (status, _, text) = app.post_json("/api/v1/signup", Auth::None, body).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("serve user create"), "{text}");
}

#[tokio::test]
async fn sign_in_and_sign_out() {
    each_backend(false, |app| async move {
        let first = sign_up(&app, "ann@example.com").await;
        for (email, password) in [("ann@example.com", "wrong passphrase"), ("nobody@example.com", "a long passphrase")]
        {
            let (status, headers, body) = sign_in(&app, email, password).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert_eq!(crate::api::assert_problem(status, &headers, &body), "wrong e-mail or password");
            assert!(headers.get("set-cookie").is_none());
        }
        let (status, headers, _) = sign_in(&app, "ANN@example.com", "a long passphrase").await;
        assert_eq!(status, StatusCode::OK);
        let second = set_cookie(&headers).0;
        assert_ne!(first, second);

        let (status, headers, _) = app.post_json("/api/v1/signout", Auth::Cookie(&second), json!({})).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert!(set_cookie(&headers).1.contains("Max-Age=0"));
        assert_eq!(app.get("/api/v1/me", Auth::Cookie(&second)).await.0, StatusCode::UNAUTHORIZED);
        // The other session lives on.
        assert_eq!(app.get("/api/v1/me", Auth::Cookie(&first)).await.0, StatusCode::OK);
    })
    .await;
}

#[tokio::test]
async fn the_api_needs_a_session_or_a_token() {
    each_backend(false, |app| async move {
        for auth in [Auth::None, Auth::Cookie("mapwright_session=forged"), Auth::Bearer("forged")] {
            let (status, headers, body) = app.get("/api/v1/me", auth).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert!(crate::api::assert_problem(status, &headers, &body).starts_with("sign in first"), "{body}");
            assert_eq!(app.get("/api/v1/tokens", auth).await.0, StatusCode::UNAUTHORIZED);
        }
    })
    .await;
}

#[tokio::test]
async fn api_tokens_authenticate_until_revoked() {
    each_backend(false, |app| async move {
        let ann = sign_up(&app, "ann@example.com").await;
        let bob = sign_up(&app, "bob@example.com").await;
        let (status, _, body) = app.post_json("/api/v1/tokens", Auth::Cookie(&ann), json!({"name": "crawler"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let created: Value = serde_json::from_str(&body).unwrap();
        let secret = created["secret"].as_str().unwrap().to_owned();
        let id = created["id"].as_i64().unwrap();

        let (status, _, body) = app.get("/api/v1/me", Auth::Bearer(&secret)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["email"], "ann@example.com");
        let (_, _, listed) = app.get("/api/v1/tokens", Auth::Bearer(&secret)).await;
        let listed: Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(listed[0]["name"], "crawler");
        assert!(listed[0].get("secret").is_none(), "{listed}");
        let (_, _, bobs) = app.get("/api/v1/tokens", Auth::Cookie(&bob)).await;
        assert_eq!(bobs, "[]");

        let revoke = |auth| {
            let request = axum::http::Request::delete(format!("/api/v1/tokens/{id}"));
            let request = match auth {
                Auth::Cookie(c) => request.header("cookie", c),
                _ => request,
            };
            request.body(axum::body::Body::empty()).unwrap()
        };
        assert_eq!(app.send(revoke(Auth::Cookie(&bob))).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::OK);
        assert_eq!(app.send(revoke(Auth::Cookie(&ann))).await.0, StatusCode::NO_CONTENT);
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::UNAUTHORIZED);

        let (status, _, _) = app.post_json("/api/v1/tokens", Auth::Cookie(&ann), json!({"name": " "})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    })
    .await;
}

#[tokio::test]
async fn sign_in_is_rate_limited_per_address() {
    let app = TestApp::new(false).await;
    sign_up(&app, "ann@example.com").await;
    let wrong = json!({"email": "ann@example.com", "password": "guess guess guess"});
    for _ in 0..5 {
        assert_eq!(app.post_json("/api/v1/signin", Auth::None, wrong.clone()).await.0, StatusCode::UNAUTHORIZED);
    }
    let right = json!({"email": "ann@example.com", "password": "a long passphrase"});
    let (status, headers, _) = app.post_json("/api/v1/signin", Auth::None, right).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(headers.contains_key("retry-after"));
}

#[tokio::test]
async fn an_admin_sees_and_changes_every_users_sites() {
    each_backend(false, |app| async move {
        let ann = sign_up(&app, "ann@example.com").await;
        let bob = sign_up(&app, "bob@example.com").await;
        let root = sign_up(&app, "root@example.com").await;
        // `serve --admin` grants the role at start, to an account that exists then.
        let missing =
            mapwright_server::grant_admins(app.store.as_ref(), &["Root@Example.com".to_owned()]).await.unwrap();
        assert!(missing.is_empty());
        let (status, _, body) = app.get("/api/v1/me", Auth::Cookie(&root)).await;
        assert_eq!(
            (status, serde_json::from_str::<Value>(&body).unwrap()["is_admin"].clone()),
            (StatusCode::OK, json!(true))
        );

        let (status, _, body) =
            app.post_json("/api/v1/sites", Auth::Cookie(&ann), json!({"origin": "https://ann.example"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let id = serde_json::from_str::<Value>(&body).unwrap()["id"].as_i64().unwrap();
        let uri = format!("/api/v1/sites/{id}");
        assert_eq!(app.get(&uri, Auth::Cookie(&bob)).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&uri, Auth::Cookie(&root)).await.0, StatusCode::OK);
        let (_, _, body) = app.get("/api/v1/sites", Auth::Cookie(&root)).await;
        assert!(body.contains("https://ann.example"), "{body}");
        let (_, _, body) = app.get("/api/v1/sites", Auth::Cookie(&bob)).await;
        assert!(!body.contains("https://ann.example"), "{body}");

        // An existing account becomes an admin when granted (serve --admin at start).
        assert!(app.store.grant_admin("bob@example.com").await.unwrap());
        assert!(!app.store.grant_admin("nobody@example.com").await.unwrap());
        assert_eq!(app.get(&uri, Auth::Cookie(&bob)).await.0, StatusCode::OK);
    })
    .await;
}

/// Strangers' sign-ups must not fill the disk: outbox messages past two days go when the next
/// one is written.
#[tokio::test]
async fn old_outbox_messages_are_deleted() {
    let app = TestApp::new(false).await;
    let outbox = app.outbox_dir();
    let old = outbox.join("old.eml");
    let file = std::fs::File::create(&old).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 24 * 3600)).unwrap();
    drop(file);
    let recent = outbox.join("recent.eml");
    std::fs::write(&recent, "To: a@example.com\r\n\r\nhello").unwrap();
    let body = json!({"email": "ann@example.com", "password": "a long passphrase"});
    assert_eq!(app.post_json("/api/v1/signup", Auth::None, body).await.0, StatusCode::ACCEPTED);
    // The new message is written after the pruning: once it is there, the old one is gone.
    let came = || async { app.mails().iter().any(|m| m.to == "ann@example.com").then_some(()) };
    assert!(poll_until(Duration::from_secs(5), came).await.is_some(), "the sign-up's mail came");
    assert!(!old.exists(), "a message older than two days is gone");
    assert!(recent.exists(), "a recent one stays");
}

/// An outbox message holds a link that makes an account for whoever reads it first: only the
/// service's user may read it (lettre's file transport wrote 0644 inside the 0700 folder).
#[cfg(unix)]
#[tokio::test]
async fn outbox_messages_are_private_to_the_service() {
    use std::os::unix::fs::PermissionsExt;
    let app = TestApp::new(false).await;
    let body = json!({"email": "ann@example.com", "password": "a long passphrase"});
    assert_eq!(app.post_json("/api/v1/signup", Auth::None, body).await.0, StatusCode::ACCEPTED);
    app.wait_for_mails(1).await;
    let files: Vec<_> = std::fs::read_dir(app.outbox_dir()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}: {mode:o}", files[0].display());
}
