//! Issue 14 items 1, 2, 8 (sign-in) and 13 through the router: sign-up limits and the bounded
//! hashing pool, one normal form of e-mail addresses and no admin from a sign-up, sign-in
//! limits a stranger cannot turn against the owner, security headers, the CSRF token once
//! signed in, blank passwords, and 503 with Retry-After while PostgreSQL is down.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use mapwright_server::hashing::HashPool;
use mapwright_server::{AppState, Limits, grant_admins};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::console::{csrf_of, post_form};
use crate::strangers::post_from;
use crate::support::{Auth, TestApp, each_backend};

fn mapwright_server_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn credentials(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password})
}

#[tokio::test]
async fn sign_up_is_limited_per_client() {
    let app = TestApp::new(false).await;
    for n in 0..10 {
        let body = credentials(&format!("u{n}@example.com"), "a long passphrase");
        let (status, _, text) = post_from(&app, "203.0.113.9", "/api/v1/signup", body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    }
    let (status, headers, _) =
        post_from(&app, "203.0.113.9", "/api/v1/signup", credentials("u10@example.com", "a long passphrase")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "the 11th sign-up in a minute from one address");
    assert!(headers.contains_key("retry-after"));
    let mails = app.wait_for_mails(10).await;
    assert!(!mails.iter().any(|m| m.to == "u10@example.com"), "nothing was sent for the refused one");
    let (status, _, _) =
        post_from(&app, "198.51.100.7", "/api/v1/signup", credentials("v@example.com", "a long passphrase")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "another address is not limited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn password_hashing_is_bounded_and_the_excess_is_answered_at_once() {
    let mut app = TestApp::new(false).await;
    let pool = Arc::new(HashPool::new(1));
    app.state.hashing = pool.clone();
    app.state.limits = Arc::new(Limits {
        sign_up_per_client: Limits::default().sign_up_per_client.with_limit(10_000),
        ..Limits::default()
    });
    let app = Arc::new(app);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for n in 0..60 {
        let app = app.clone();
        tasks.push(tokio::spawn(async move {
            let body = credentials(&format!("flood{n}@example.com"), "a long passphrase");
            let t = Instant::now();
            // From many networks, as a distributed flood comes: only the pool stands in its way
            // (one client's pending sign-ups are capped at ten).
            let (status, headers, _) = post_from(&app, &format!("198.18.{n}.9"), "/api/v1/signup", body).await;
            (status, headers.contains_key("retry-after"), t.elapsed())
        }));
    }
    let (mut created, mut refused) = (0, 0);
    for task in tasks {
        let (status, retry_after, took) = task.await.unwrap();
        match status {
            StatusCode::ACCEPTED => created += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(retry_after, "a refusal says when to retry");
                refused += 1;
                assert!(took < Duration::from_secs(3), "refused without waiting long: {took:?}");
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(pool.peak(), 1, "never more than the pool's size of hashes at once");
    assert!(created >= 1 && refused >= 40, "created {created}, refused {refused}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[tokio::test]
async fn addresses_have_one_normal_form_and_sign_up_never_makes_an_admin() {
    each_backend(false, |app| async move {
        // The operator names an admin whose account does not exist yet...
        let missing = grant_admins(app.store.as_ref(), &["boss@example.com".to_owned()]).await.unwrap();
        assert_eq!(missing, ["boss@example.com"]);
        // ...and someone signs up with that address in another spelling first (its owner, who
        // gets the link: only the address's owner can finish a sign-up).
        let cookie = app.sign_up(" Boss@Example.COM. ", "a long passphrase").await;
        let me: Value = serde_json::from_str(&app.get("/api/v1/me", Auth::Cookie(&cookie)).await.2).unwrap();
        assert_eq!(me["email"], "boss@example.com");
        assert_eq!(me["is_admin"], false, "an anonymous sign-up is never an admin");
        for spelling in ["boss@example.com", "BOSS@EXAMPLE.COM", "boss@Example.com."] {
            let (status, _, body) =
                app.post_json("/api/v1/signup", Auth::None, credentials(spelling, "another passphrase")).await;
            assert_eq!(status, StatusCode::ACCEPTED, "{spelling}: {body}");
        }
        // One account per address: the other spellings got the owner's "you have an account"
        // note (two of them: three mails an hour per address, the link was the first).
        let mails = app.wait_for_mails(3).await;
        assert!(mails[1..].iter().all(|m| m.to == "boss@example.com" && m.link_token().is_none()), "{mails:?}");
        let (status, _, _) =
            app.post_json("/api/v1/signin", Auth::None, credentials("BOSS@example.COM", "a long passphrase")).await;
        assert_eq!(status, StatusCode::OK, "sign-in in any spelling");
        // Granted at the next start, to the account that exists then.
        assert!(grant_admins(app.store.as_ref(), &["Boss@Example.com".to_owned()]).await.unwrap().is_empty());
        assert_eq!(
            serde_json::from_str::<Value>(&app.get("/api/v1/me", Auth::Cookie(&cookie)).await.2).unwrap()["is_admin"],
            true
        );
    })
    .await;
}

#[tokio::test]
async fn a_strangers_failed_sign_ins_do_not_lock_the_owner_out() {
    each_backend(false, |app| async move {
        app.sign_up("ann@example.com", "a long passphrase").await;
        let wrong = credentials("ann@example.com", "guess guess guess");
        let mut statuses = Vec::new();
        let mut retry_after = None;
        // A guess that is answered (401) after the first five must come after the wait the last
        // 429 announced: on a loaded machine 30 attempts can outlast a short wait.
        let mut waits_until: Option<Instant> = None;
        for _ in 0..30 {
            let sent = Instant::now();
            let (status, headers, _) = post_from(&app, "203.0.113.9", "/api/v1/signin", wrong.clone()).await;
            statuses.push(status.as_u16());
            if status == StatusCode::TOO_MANY_REQUESTS {
                retry_after = headers.get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
                let wait = Duration::from_secs(retry_after.unwrap_or(0));
                waits_until = waits_until.max(Some(sent + wait.saturating_sub(Duration::from_secs(1))));
            } else if statuses.len() > 5 {
                let until = waits_until.expect("a 429 came before any later answer");
                assert!(sent >= until, "a guess was answered before the announced wait ended: {statuses:?}");
            }
        }
        assert_eq!(&statuses[..6], [401, 401, 401, 401, 401, 429], "five free failures, then a wait: {statuses:?}");
        assert!(statuses[5..].iter().filter(|&&s| s == 429).count() >= 20, "then the stranger waits: {statuses:?}");
        assert!(retry_after.is_some_and(|s| (1..=60).contains(&s)), "a wait, not a lock: {retry_after:?}");
        // The owner, from their own address, signs in at once.
        let started = Instant::now();
        let right = credentials("ann@example.com", "a long passphrase");
        let (status, _, body) = post_from(&app, "198.51.100.7", "/api/v1/signin", right.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(started.elapsed() < Duration::from_secs(3));
        // The stranger's address with the right password waits too: the key is the pair.
        assert_eq!(post_from(&app, "203.0.113.9", "/api/v1/signin", right).await.0, StatusCode::TOO_MANY_REQUESTS);
    })
    .await;
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let app = TestApp::new(false).await;
    for uri in ["/", "/signin", "/healthz", "/api/v1/me", "/static/style.css", "/no/such/page", "/ping"] {
        let (_, headers, _) = app.get(uri, Auth::None).await;
        let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        let csp = header("content-security-policy");
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{uri}: {csp:?}");
        assert!(!csp.contains("unsafe-inline") && !csp.contains("script-src"), "{uri}: no script allowed: {csp}");
        assert_eq!(header("x-content-type-options"), "nosniff", "{uri}");
        assert!(!header("referrer-policy").is_empty(), "{uri}");
    }
}

#[tokio::test]
async fn a_planted_csrf_cookie_is_not_accepted_once_signed_in() {
    each_backend(false, |app| async move {
        let session = app.sign_up("ann@example.com", "a long passphrase").await;
        let planted = "ab".repeat(32);
        let cookies = format!("{session}; mapwright_csrf={planted}");
        let (status, _, _) =
            post_form(&app, "/account/tokens", &cookies, &format!("name=stolen&csrf={planted}"), &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "the planted double-submit pair opens no signed-in form");
        let (_, _, tokens) = app.get("/api/v1/tokens", Auth::Cookie(&session)).await;
        assert_eq!(tokens, "[]");
        // The session's own token works, with or without the planted cookie.
        let (_, _, page) = app.get("/account", Auth::Cookie(&session)).await;
        let csrf = csrf_of(&page).unwrap();
        let (status, _, _) = post_form(&app, "/account/tokens", &cookies, &format!("name=mine&csrf={csrf}"), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "created, then redirected (post-redirect-get)");
        // With an expired session, the sign-in form (double submit) still works.
        let stale = format!("mapwright_session={}; mapwright_csrf={planted}", "0".repeat(64));
        let body = format!("csrf={planted}&email=ann%40example.com&password=a+long+passphrase");
        assert_eq!(post_form(&app, "/signin", &stale, &body, &[]).await.0, StatusCode::SEE_OTHER);
    })
    .await;
}

#[tokio::test]
async fn a_password_needs_more_than_blank_space() {
    let app = TestApp::new(false).await;
    for blank in
        ["            ", "\t\t\t\t\t\t\t\t\t\t\t", "\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}"]
    {
        let (status, _, body) =
            app.post_json("/api/v1/signup", Auth::None, credentials("ann@example.com", blank)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{blank:?}: {body}");
    }
    let (status, _, _) =
        app.post_json("/api/v1/signup", Auth::None, credentials("ann@example.com", "  spaced  out  ")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "blank space inside a password is fine");
}

/// A TCP proxy to PostgreSQL that the test can take down: the listener closes (new connections
/// are refused) and every proxied connection is cut; or hang: every connection, open or new,
/// stays open and nothing more passes (a server that accepts and never answers).
struct PgProxy {
    port: u16,
    down: tokio::sync::watch::Sender<bool>,
    hang: tokio::sync::watch::Sender<bool>,
}

impl PgProxy {
    async fn start(target: SocketAddr) -> PgProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (down, watch) = tokio::sync::watch::channel(false);
        let (hang, hung) = tokio::sync::watch::channel(false);
        let mut stop = watch.clone();
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = tokio::select! {
                    accepted = listener.accept() => accepted.unwrap(),
                    _ = stop.wait_for(|d| *d) => return,
                };
                let mut cut = watch.clone();
                let mut freeze = hung.clone();
                tokio::spawn(async move {
                    let frozen_at_start = *freeze.borrow();
                    if frozen_at_start {
                        // Accepted, and never answered.
                        let _ = cut.wait_for(|d| *d).await.map(|_| ());
                        drop(inbound);
                        return;
                    }
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else { return };
                    let frozen = tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => false,
                        _ = cut.wait_for(|d| *d) => false,
                        // Frozen: both ends stay open, nothing passes any more.
                        _ = freeze.wait_for(|h| *h) => true,
                    };
                    if frozen {
                        let _ = cut.wait_for(|d| *d).await.map(|_| ());
                    }
                });
            }
        });
        PgProxy { port, down, hang }
    }
}

/// A service on a PostgreSQL database of its own reached through a [`PgProxy`], with a user
/// signed in: the database (dropped with it), the proxy, the app and the session cookie.
async fn behind_proxy(name: &str) -> Option<(mapwright_store::testing::PgDatabase, PgProxy, TestApp, String)> {
    let pg = mapwright_store::testing::PgDatabase::create(name).await?;
    let url = url::Url::parse(&pg.url).unwrap();
    let target: SocketAddr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432)).parse().unwrap();
    let proxy = PgProxy::start(target).await;
    let mut via = url.clone();
    via.set_port(Some(proxy.port)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(Some(via.as_str()), dir.path()).await.unwrap();
    let state = AppState::new(store.clone(), false);
    let user = store.create_user("ann@example.com", "h", false, 0).await.unwrap();
    let token = store.create_session(user.id, mapwright_server_now(), 3600).await.unwrap();
    Some((pg, proxy, TestApp::with_state(store, state, dir), format!("mapwright_session={token}")))
}

/// `GET uri` answers 503 with Retry-After within seconds (the database is out of reach).
async fn assert_quick_503(app: &TestApp, uri: &str, session: &str) {
    let started = Instant::now();
    let (status, headers, body) = app.get(uri, Auth::Cookie(session)).await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}: {body}");
    assert!(headers.contains_key("retry-after"), "{uri}");
    assert!(took < Duration::from_secs(6), "{uri} answered after {took:?}");
}

/// A PostgreSQL that accepts connections and never answers (a hung server, a half-open
/// network): the pooled connections' check and new connections' start-up are both bounded
/// by the acquire timeout, so the API answers 503 with Retry-After within seconds, again and
/// again, and recovers once the database answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_hangs_the_api_answers_503_with_retry_after_quickly() {
    let Some((pg, proxy, app, session)) = behind_proxy("mapwright_test_hang").await else { return };
    let app = Arc::new(app);
    // Several pooled connections, all of which will hang.
    let warm: Vec<_> = (0..4)
        .map(|_| {
            let (app, session) = (app.clone(), session.clone());
            tokio::spawn(async move { app.get("/api/v1/sites", Auth::Cookie(&session)).await.0 })
        })
        .collect();
    for task in warm {
        assert_eq!(task.await.unwrap(), StatusCode::OK);
    }

    proxy.hang.send(true).unwrap();
    for uri in ["/api/v1/me", "/api/v1/sites", "/healthz", "/api/v1/sites"] {
        assert_quick_503(&app, uri, &session).await;
    }
    proxy.hang.send(false).unwrap();
    let started = Instant::now();
    loop {
        let (status, _, _) = app.get("/api/v1/sites", Auth::Cookie(&session)).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no recovery: {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    proxy.down.send(true).unwrap();
    drop(pg);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_is_down_the_api_answers_503_with_retry_after_quickly() {
    let Some((pg, proxy, app, session)) = behind_proxy("mapwright_test_down").await else { return };
    assert_eq!(app.get("/api/v1/me", Auth::Cookie(&session)).await.0, StatusCode::OK);

    proxy.down.send(true).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    for uri in ["/api/v1/me", "/api/v1/sites", "/healthz"] {
        for _ in 0..2 {
            assert_quick_503(&app, uri, &session).await;
        }
    }
    drop(pg);
}
