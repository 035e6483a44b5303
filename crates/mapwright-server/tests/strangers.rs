//! Issue 24 through the router: what one stranger can do to everyone else's sign-up and
//! sign-in, each attack first, then that it fails: caps per network, mail per network and
//! address, links a stranger cannot replace, unmailable addresses refused before they count,
//! sign-in's own hashing budget during a sign-up flood, and `/healthz` telling a store that
//! cannot write.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request, StatusCode};
use mapwright_server::AppState;
use mapwright_store::{Requester, SqliteStore, Store};
use serde_json::{Value, json};

use crate::support::{Auth, TestApp};

/// `POST uri` with a JSON body from the client address `client` (IPv4 or IPv6; `hardening.rs`
/// uses it too).
pub(crate) async fn post_from(app: &TestApp, client: &str, uri: &str, body: Value) -> (StatusCode, HeaderMap, String) {
    let addr: SocketAddr = match client.parse::<std::net::IpAddr>().unwrap() {
        std::net::IpAddr::V4(v4) => SocketAddr::from((v4, 40000)),
        std::net::IpAddr::V6(v6) => SocketAddr::from((v6, 40000)),
    };
    let request = Request::post(uri)
        .header("content-type", "application/json")
        .extension(ConnectInfo(addr))
        .body(Body::from(body.to_string()))
        .unwrap();
    app.send(request).await
}

fn credentials(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password})
}

/// The attack of item 3: a stranger asks again and again for the owner's address. Before,
/// three asks used the address's mail for the hour, and each further one replaced the pending
/// link silently: the owner was told "check your inbox" and got nothing. Now the stranger uses
/// up only the stranger's own share; the owner, from another network, gets a link, and the
/// stranger's later asks neither replace it nor stop it working.
#[tokio::test]
async fn a_stranger_cannot_use_up_an_addresses_mail_nor_replace_its_link() {
    let app = TestApp::new(false).await;
    let victim = "victim@example.com";
    for n in 0..5 {
        let (status, _, text) =
            post_from(&app, "198.51.100.7", "/api/v1/signup", credentials(victim, "strangers pass")).await;
        assert_eq!(status, StatusCode::ACCEPTED, "ask {n}: {text}");
    }
    assert_eq!(app.wait_for_mails(3).await.len(), 3, "the stranger's share: three messages");
    let (status, _, _) =
        post_from(&app, "203.0.113.5", "/api/v1/signup", credentials(victim, "owners passphrase")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let owners = app.wait_for_mails(4).await.pop().unwrap();
    assert_eq!(owners.to, victim);
    let token = owners.link_token().unwrap();
    for _ in 0..3 {
        post_from(&app, "198.51.100.8", "/api/v1/signup", credentials(victim, "strangers pass")).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(app.mails().len(), 4, "the stranger's network had its share: nothing more was sent");
    let body = json!({"token": token, "password": "owners passphrase"});
    let (status, _, text) = app.post_json("/api/v1/signup/confirm", Auth::None, body).await;
    assert_eq!(status, StatusCode::CREATED, "the owner's link still works: {text}");
}

/// Item 2: addresses no mail can reach are refused before anything is stored or counted.
#[tokio::test]
async fn unmailable_addresses_are_refused_before_they_count() {
    let app = TestApp::new(false).await;
    for email in [
        "a<b>@example.com",
        "a,b@example.com",
        "a..b@example.com",
        ".a@example.com",
        "a.@example.com",
        "a\"b@example.com",
        "a(b)@example.com",
        "a;b@example.com",
    ] {
        let (status, _, text) =
            post_from(&app, "198.51.100.7", "/api/v1/signup", credentials(email, "a long passphrase")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{email}: {text}");
    }
    // Nothing was counted against the client either: its ten sign-ups a minute are whole.
    for n in 0..10 {
        let email = format!("a.b+{n}@example.com");
        let (status, _, text) =
            post_from(&app, "198.51.100.7", "/api/v1/signup", credentials(&email, "a long passphrase")).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{email}: {text}");
    }
    assert_eq!(app.wait_for_mails(10).await.len(), 10);
}

/// Item 2: one network (here an IPv6 /48, fifty /64s: fifty "clients") cannot fill what every
/// newcomer needs: its mail and pending sign-ups are capped as one, and another network's
/// newcomer is served.
#[tokio::test]
async fn one_network_cannot_fill_the_sign_ups_of_everyone() {
    let app = TestApp::new(false).await;
    for n in 0..50 {
        let client = format!("2001:db8:1:{n:x}::1");
        let (status, _, text) = post_from(
            &app,
            &client,
            "/api/v1/signup",
            credentials(&format!("flood{n}@example.com"), "a long passphrase"),
        )
        .await;
        assert!(matches!(status, StatusCode::ACCEPTED | StatusCode::UNPROCESSABLE_ENTITY), "{n}: {status} {text}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let flooded = app.wait_for_mails(30).await.len();
    assert_eq!(flooded, 30, "one network's mail: 30 an hour");
    let (status, _, text) =
        post_from(&app, "2001:db8:2::1", "/api/v1/signup", credentials("newcomer@example.com", "a long passphrase"))
            .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    let mails = app.wait_for_mails(31).await;
    assert!(mails.iter().any(|m| m.to == "newcomer@example.com"), "another network is served");
}

/// Item 6: while hundreds of addresses flood sign-up (each within its own limit, so only the
/// hashing pool stands in their way), an honest user's sign-ins pass: sign-ups hold at most
/// half the hashing turns and wait in their own queue. Before, four tries in five were 429.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sign_in_passes_during_a_distributed_sign_up_flood() {
    let app = Arc::new(TestApp::new(false).await);
    app.sign_up("honest@example.com", "an honest passphrase").await;
    let mut flood = Vec::new();
    for n in 0..300u32 {
        let app = app.clone();
        flood.push(tokio::spawn(async move {
            let client = format!("10.{}.{}.1", n / 200, n % 200);
            post_from(&app, &client, "/api/v1/signup", credentials(&format!("f{n}@example.com"), "a long passphrase"))
                .await
                .0
        }));
    }
    let mut refused_sign_ups = 0;
    let mut signed_in = 0;
    for _ in 0..5 {
        let body = credentials("honest@example.com", "an honest passphrase");
        let (status, _, text) = post_from(&app, "192.0.2.10", "/api/v1/signin", body).await;
        assert_eq!(status, StatusCode::OK, "sign-in during the flood: {text}");
        signed_in += 1;
    }
    for task in flood {
        if task.await.unwrap() == StatusCode::TOO_MANY_REQUESTS {
            refused_sign_ups += 1;
        }
    }
    assert_eq!(signed_in, 5);
    assert!(refused_sign_ups > 0, "the flood did press on the pool (else this test proves nothing)");
}

/// Item 1: `/healthz` reports whether the store takes a write, not only whether it answers: a
/// full store is 503, and once there is room again, 200.
#[tokio::test]
async fn healthz_tells_a_store_that_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open_with_page_limit(dir.path(), 400).await.unwrap());
    let healthz = |store: Arc<dyn Store>| async move {
        let app = TestApp::with_state(store.clone(), AppState::new(store, false), tempfile::tempdir().unwrap());
        app.get("/healthz", Auth::None).await.0
    };
    assert_eq!(healthz(store.clone()).await, StatusCode::OK);
    let big = "h".repeat(64 * 1024);
    let mut n = 0;
    loop {
        let from = Requester { client: format!("c{n}"), network: format!("n{n}") };
        if store.request_signup(&format!("u{n}@example.com"), &big, &from, 0, 3600).await.is_err() {
            break;
        }
        n += 1;
        assert!(n < 1000, "the page limit never filled");
    }
    assert_eq!(healthz(store.clone()).await, StatusCode::SERVICE_UNAVAILABLE, "full");
    let url = format!("sqlite://{}", dir.path().join("mapwright.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("DELETE FROM signups").execute(&pool).await.unwrap();
    pool.close().await;
    assert_eq!(healthz(store).await, StatusCode::OK, "room again");
}
