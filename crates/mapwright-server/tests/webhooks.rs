//! Webhooks as an owner meets them, on both backends: added through the API, a read of a
//! sitemap delivered to a receiver on 127.0.0.1 that checks the HMAC signature as the README
//! tells, a failing receiver (500, then 200) given the same delivery again after the backoff by
//! the running sender, "status worsened" sent only when a read is worse, the log through the
//! API, a reader's and bad input's refusals, a private address refused when private networks
//! are not allowed, and the console's pages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use mapwright_server::AppState;
use mapwright_server::jobs::reads::run_job;
use mapwright_server::jobs::webhooks::{self, Config};
use mapwright_store::{Actor, Role, Site, Sitemap, Source};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::api::{assert_problem, call, call_json, user};
use crate::console::{csrf_of, post_form, text};
use crate::sitehost::{SiteHost, urlset};
use crate::support::{Auth, TestApp, each_backend, poll_until, unix_now};

/// One request a receiver got.
#[derive(Clone, Debug)]
struct Got {
    headers: HeaderMap,
    body: Bytes,
    at: Instant,
}

/// A webhook receiver on 127.0.0.1: answers the verification handshake with its challenge
/// (unless told not to), records every other request and answers the next status of its
/// script (200 when the script is empty).
#[derive(Clone, Default)]
pub(crate) struct Receiver {
    got: Arc<Mutex<Vec<Got>>>,
    /// The handshakes received (their bodies).
    handshakes: Arc<Mutex<Vec<Value>>>,
    /// Answer handshakes with 200 and no challenge: a URL that never asked for events.
    refuse_handshakes: Arc<std::sync::atomic::AtomicBool>,
    script: Arc<Mutex<VecDeque<u16>>>,
    pub(crate) url: String,
    port: u16,
}

impl Receiver {
    /// A receiver that does not echo handshakes: whatever stands at a URL a user typed.
    pub(crate) async fn unwilling() -> Receiver {
        let receiver = Receiver::start(&[]).await;
        receiver.refuse_handshakes.store(true, std::sync::atomic::Ordering::SeqCst);
        receiver
    }

    /// The handshakes received so far.
    pub(crate) fn handshakes(&self) -> Vec<Value> {
        self.handshakes.lock().unwrap().clone()
    }

    /// Deliveries received so far (handshakes aside).
    pub(crate) fn deliveries(&self) -> usize {
        self.got.lock().unwrap().len()
    }

    pub(crate) async fn start(script: &[u16]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let receiver = Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            port,
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
            ..Receiver::default()
        };
        let router = Router::new().fallback(receive).with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        receiver
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    async fn wait_for(&self, n: usize) -> Vec<Got> {
        poll_until(Duration::from_secs(10), || async { Some(self.got()).filter(|got| got.len() >= n) })
            .await
            .unwrap_or_else(|| panic!("expected {n} deliveries, the receiver got {:?}", self.got()))
    }
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if json["type"] == "verification" {
        receiver.handshakes.lock().unwrap().push(json.clone());
        if receiver.refuse_handshakes.load(std::sync::atomic::Ordering::SeqCst) {
            return (StatusCode::OK, "ok".into());
        }
        return (StatusCode::OK, json!({ "challenge": json["challenge"] }).to_string());
    }
    receiver.got.lock().unwrap().push(Got { headers, body, at: Instant::now() });
    let status = receiver.script.lock().unwrap().pop_front().unwrap_or(200);
    (StatusCode::from_u16(status).unwrap(), String::new())
}

/// What a receiver does with a delivery, as the README says: the HMAC-SHA256 of the raw body
/// keyed by the secret, compared in constant time with the header's hex; then the JSON.
fn verified(secret: &str, got: &Got) -> Value {
    let header = got.headers["mapwright-signature"].to_str().unwrap();
    let hex_mac = header.strip_prefix("sha256=").expect("sha256=<hex>");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&got.body);
    mac.verify_slice(&hex::decode(hex_mac).unwrap()).expect("the signature is the body's HMAC");
    let body: Value = serde_json::from_slice(&got.body).unwrap();
    assert_eq!(got.headers["content-type"], "application/json");
    assert_eq!(got.headers["mapwright-delivery"].to_str().unwrap(), body["id"].to_string());
    assert_eq!(got.headers["mapwright-timestamp"].to_str().unwrap(), body["created_at"].to_string());
    assert_eq!(got.headers["mapwright-event"].to_str().unwrap(), body["event"].as_str().unwrap());
    body
}

/// A verified site on a test site of its own, with one sitemap of two URLs; and the actor.
pub(crate) async fn site_with_sitemap(app: &TestApp, email: &str) -> (Actor, String, Site, Sitemap, SiteHost) {
    let (actor, token) = user(app, email).await;
    let web = SiteHost::start().await;
    let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
    app.store.record_verification(site.id, true, 0).await.unwrap();
    web.put("/sitemap.xml", &urlset(&[(&web.url("/a"), None), (&web.url("/b"), None)]));
    let sitemap = app.store.add_sitemap(actor, site.id, &web.url("/sitemap.xml"), Source::Api, unix_now()).await;
    (actor, token, site, sitemap.unwrap(), web)
}

/// Reads every due sitemap, as the scheduler's workers would.
pub(crate) async fn read_due(state: &AppState) {
    let jobs = state.store.lease_due_sitemaps("reader", unix_now() + 5, 10, 60).await.unwrap();
    assert!(!jobs.is_empty(), "a sitemap is due");
    for job in &jobs {
        run_job(state, "reader", job).await.unwrap();
    }
}

/// Adds a webhook through the API; returns its id and secret.
async fn add_webhook(app: &TestApp, token: &str, site: i64, body: Value) -> (i64, String) {
    let uri = format!("/api/v1/sites/{site}/webhooks");
    let created = call_json(app, "POST", &uri, token, Some(body), StatusCode::CREATED, "NewWebhook").await;
    (created["id"].as_i64().unwrap(), created["secret"].as_str().unwrap().to_owned())
}

/// The webhook's delivery log through the API (`GET /api/v1/webhooks/{id}/deliveries`).
async fn deliveries(app: &TestApp, token: &str, hook: i64) -> Value {
    let uri = format!("/api/v1/webhooks/{hook}/deliveries");
    call_json(app, "GET", &uri, token, None, StatusCode::OK, "[WebhookAttempt]").await
}

#[tokio::test]
async fn a_read_is_delivered_signed_and_the_receiver_checks_the_signature() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[]).await;
        let (ann, token, site, sitemap, web) = site_with_sitemap(&app, "ann@example.com").await;
        let (hook, secret) = add_webhook(&app, &token, site.id, json!({ "url": receiver.url })).await;
        assert_eq!(secret.len(), 64, "the service made a secret");
        let list = call_json(
            &app,
            "GET",
            &format!("/api/v1/sites/{}/webhooks", site.id),
            &token,
            None,
            StatusCode::OK,
            "[Webhook]",
        )
        .await;
        assert_eq!(list[0]["events"], json!(["read.completed", "status.worsened"]), "none asked: all");
        assert!(!list.to_string().contains(&secret), "the secret is shown once only");

        read_due(&app.state).await;
        let config = Config::default();
        assert_eq!(
            webhooks::deliver_due(&app.state, &config, "sender", unix_now()).await,
            1,
            "a first read worsens nothing"
        );
        let got = receiver.got();
        assert_eq!(got.len(), 1);
        let body = verified(&secret, &got[0]);
        assert_eq!(body["event"], "read.completed");
        let data = &body["data"];
        assert_eq!(data["site"], json!({ "id": site.id, "origin": web.origin }));
        assert_eq!(data["sitemap"]["url"], sitemap.url);
        assert_eq!(data["sitemap"]["id"], sitemap.id);
        assert_eq!((data["read"]["status"].as_str(), data["read"]["url_count"].as_i64()), (Some("ok"), Some(2)));
        assert_eq!(data["read"]["previous_status"], Value::Null);
        assert_eq!(data["read"]["http_status"], 200);

        // A wrong secret does not verify.
        let mut mac = Hmac::<Sha256>::new_from_slice(b"not the secret").unwrap();
        mac.update(&got[0].body);
        let header = got[0].headers["mapwright-signature"].to_str().unwrap();
        assert!(mac.verify_slice(&hex::decode(&header[7..]).unwrap()).is_err());

        let log = deliveries(&app, &token, hook).await;
        assert_eq!(log.as_array().unwrap().len(), 1);
        assert_eq!((log[0]["outcome"].as_str(), log[0]["status_code"].as_i64()), (Some("delivered"), Some(200)));
        assert_eq!(log[0]["delivery_id"], body["id"]);

        // Deleted: nothing more is sent.
        let (status, _, _) = call(&app, "DELETE", &format!("/api/v1/webhooks/{hook}"), Some(&token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        web.put("/sitemap.xml", "<urlset");
        app.store.resubmit_sitemap(ann, sitemap.id, unix_now()).await.unwrap();
        read_due(&app.state).await;
        assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", unix_now() + 5).await, 0);
        assert_eq!(receiver.got().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_failing_receiver_gets_the_delivery_again_after_the_backoff() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[500]).await;
        let (_, token, site, _, _) = site_with_sitemap(&app, "ann@example.com").await;
        let (hook, secret) =
            add_webhook(&app, &token, site.id, json!({ "url": receiver.url, "events": ["read.completed"] })).await;
        // The sender as `serve` runs it, with a short backoff.
        let config =
            Config { backoff: Duration::from_secs(2), poll_interval: Duration::from_millis(100), ..Config::default() };
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let sender = tokio::spawn(webhooks::run(app.state.clone(), config, shutdown));

        read_due(&app.state).await;
        let got = receiver.wait_for(2).await;
        let (first, second) = (verified(&secret, &got[0]), verified(&secret, &got[1]));
        assert_eq!(first, second, "the same delivery, the same bytes");
        assert_eq!(got[0].body, got[1].body);
        let waited = got[1].at - got[0].at;
        // The store's clock counts seconds: a backoff of 2 s waits more than 1 s.
        assert!(waited > Duration::from_secs(1), "retried after {waited:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(receiver.got().len(), 2, "delivered: not sent again");

        let log = deliveries(&app, &token, hook).await;
        let rows: Vec<(i64, Option<i64>, &str)> = log
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["attempt"].as_i64().unwrap(), a["status_code"].as_i64(), a["outcome"].as_str().unwrap()))
            .collect();
        assert_eq!(rows, [(2, Some(200), "delivered"), (1, Some(500), "retrying")]);
        assert_eq!(log[1]["error"], "the receiver answered HTTP 500");
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(15), sender).await.expect("the sender stops").unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_delivery_is_given_up_after_its_attempts() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[503, 503, 503]).await;
        let (_, token, site, _, _) = site_with_sitemap(&app, "ann@example.com").await;
        let (hook, _) = add_webhook(&app, &token, site.id, json!({ "url": receiver.url })).await;
        read_due(&app.state).await;
        let config = Config { backoff: Duration::from_secs(60), max_attempts: 3, ..Config::default() };
        let mut at = unix_now();
        for wait in [0, 60, 120] {
            at += wait;
            assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", at).await, 1, "due after {wait} s");
            assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", at + wait.max(60) - 1).await, 0);
        }
        assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", at + 100_000).await, 0, "given up");
        let log = deliveries(&app, &token, hook).await;
        let outcomes: Vec<&str> = log.as_array().unwrap().iter().map(|a| a["outcome"].as_str().unwrap()).collect();
        assert_eq!(outcomes, ["failed", "retrying", "retrying"]);
    })
    .await;
}

#[tokio::test]
async fn status_worsened_is_sent_only_when_a_read_is_worse_than_the_one_before() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[]).await;
        let (ann, token, site, sitemap, web) = site_with_sitemap(&app, "ann@example.com").await;
        let (_, secret) =
            add_webhook(&app, &token, site.id, json!({ "url": receiver.url, "events": ["status.worsened"] })).await;
        let config = Config::default();
        read_due(&app.state).await;
        assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", unix_now()).await, 0, "ok: nothing worse");

        web.remove("/sitemap.xml");
        app.store.resubmit_sitemap(ann, sitemap.id, unix_now()).await.unwrap();
        read_due(&app.state).await;
        assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", unix_now()).await, 1);
        let body = verified(&secret, &receiver.got()[0]);
        assert_eq!(body["event"], "status.worsened");
        assert_eq!(
            (body["data"]["read"]["previous_status"].as_str(), body["data"]["read"]["status"].as_str()),
            (Some("ok"), Some("failed"))
        );
        assert_eq!(body["data"]["read"]["http_status"], 404);

        // Failing again is not worse.
        app.store.resubmit_sitemap(ann, sitemap.id, unix_now()).await.unwrap();
        read_due(&app.state).await;
        assert_eq!(webhooks::deliver_due(&app.state, &config, "sender", unix_now()).await, 0);
    })
    .await;
}

#[tokio::test]
async fn readers_strangers_and_bad_input_are_refused() {
    each_backend(false, |app| async move {
        let (ann, token, site, _, _) = site_with_sitemap(&app, "ann@example.com").await;
        let (bob, bob_token) = user(&app, "bob@example.com").await;
        let (_, invite) =
            app.store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, unix_now(), 3600).await.unwrap();
        app.store.accept_invitation(bob, &invite, unix_now()).await.unwrap();
        let uri = format!("/api/v1/sites/{}/webhooks", site.id);
        let good = json!({ "url": "https://hooks.example/in" });

        let (status, headers, text) = call(&app, "POST", &uri, Some(&bob_token), Some(good.clone())).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "a reader: {text}");
        assert_problem(status, &headers, &text);
        let (hook, _) = add_webhook(&app, &token, site.id, good.clone()).await;
        call_json(&app, "GET", &uri, &bob_token, None, StatusCode::OK, "[Webhook]").await;
        let (status, _, _) = call(&app, "DELETE", &format!("/api/v1/webhooks/{hook}"), Some(&bob_token), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);

        for (body, words) in [
            (json!({ "url": "ftp://hooks.example/" }), "scheme"),
            (json!({ "url": "not a url" }), "cannot be used"),
            (json!({ "url": "https://hooks.example/", "events": ["read.started"] }), "unknown event"),
            (json!({ "url": "https://hooks.example/", "secret": "short" }), "16 to 256"),
        ] {
            let (status, headers, text) = call(&app, "POST", &uri, Some(&token), Some(body.clone())).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {text}");
            let detail = assert_problem(status, &headers, &text);
            assert!(detail.contains(words), "{body}: {detail}");
        }
        // A secret of the owner's own is taken, and used as given.
        let (_, secret) = add_webhook(
            &app,
            &token,
            site.id,
            json!({ "url": "https://hooks.example/2", "secret": "my own secret, 24 chars" }),
        )
        .await;
        assert_eq!(secret, "my own secret, 24 chars");

        // The cap of endpoints per site.
        for n in 2..mapwright_store::MAX_WEBHOOKS_PER_SITE {
            add_webhook(&app, &token, site.id, json!({ "url": format!("https://hooks.example/{n}") })).await;
        }
        let (status, headers, text) = call(&app, "POST", &uri, Some(&token), Some(good)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(assert_problem(status, &headers, &text).contains("the most a site may have"));
    })
    .await;
}

/// A service that refuses private networks, as `serve` does unless told otherwise.
async fn strict_app() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(None, dir.path()).await.unwrap();
    let state = AppState::new(store.clone(), false);
    TestApp::with_state(store, state, dir)
}

#[tokio::test]
async fn a_private_address_is_refused_unless_private_networks_are_allowed() {
    let app = strict_app().await;
    let receiver = Receiver::start(&[]).await;
    let (ann, token) = user(&app, "ann@example.com").await;
    let site = app.store.create_site(ann, "https://ann.example", 0).await.unwrap();
    let uri = format!("/api/v1/sites/{}/webhooks", site.id);

    // An IP literal is refused when it is added.
    for url in [
        receiver.url.clone(),
        "http://10.1.2.3/hook".into(),
        "http://[::1]/hook".into(),
        "http://169.254.169.254/".into(),
    ] {
        let (status, headers, text) = call(&app, "POST", &uri, Some(&token), Some(json!({ "url": url }))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{url}: {text}");
        assert!(assert_problem(status, &headers, &text).contains("private or loopback"), "{url}: {text}");
    }
    // A name is checked when it is resolved, at each attempt: localhost is loopback.
    let by_name = format!("http://localhost:{}/hook", receiver.port);
    let (hook, _) = add_webhook(&app, &token, site.id, json!({ "url": by_name })).await;
    // Its handshake was refused too; say the name pointed elsewhere then and was answered.
    assert!(receiver.handshakes().is_empty());
    app.store.record_webhook_handshake(hook, true, unix_now()).await.unwrap();
    let queued = app.store.enqueue_webhook_event(site.id, "read.completed", "{}", None, unix_now()).await.unwrap();
    assert_eq!(queued.queued, 1);
    assert_eq!(webhooks::deliver_due(&app.state, &Config::default(), "sender", unix_now()).await, 1);
    assert!(receiver.got().is_empty(), "nothing reached the receiver");
    let log = deliveries(&app, &token, hook).await;
    assert_eq!(log[0]["status_code"], Value::Null);
    assert_eq!(log[0]["outcome"], "retrying");
    let error = log[0]["error"].as_str().unwrap();
    assert!(error.starts_with("refused: the address is private, loopback or link-local"), "{error}");

    // The same service allowing private networks delivers.
    let allowing = TestApp::new(false).await;
    let (ann, token) = user(&allowing, "ann@example.com").await;
    let site = allowing.store.create_site(ann, "https://ann.example", 0).await.unwrap();
    add_webhook(&allowing, &token, site.id, json!({ "url": by_name })).await;
    allowing.store.enqueue_webhook_event(site.id, "read.completed", "{}", None, unix_now()).await.unwrap();
    assert_eq!(webhooks::deliver_due(&allowing.state, &Config::default(), "sender", unix_now()).await, 1);
    assert_eq!(receiver.got().len(), 1);
}

#[tokio::test]
async fn the_console_adds_a_webhook_shows_its_secret_once_and_its_log() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[]).await;
        let (ann, _, site, _, _) = site_with_sitemap(&app, "ann@example.com").await;
        let session = app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let page = format!("/sites/{}/webhooks", site.id);
        let (status, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK, "{html}");
        assert!(text(&html).contains("No webhook yet."));
        let csrf = csrf_of(&html).unwrap();
        let (_, _, site_page) = app.get(&format!("/sites/{}", site.id), Auth::Cookie(&cookie)).await;
        assert!(site_page.contains(&format!(r#"href="{page}""#)), "the site page links to its webhooks");

        // No event chosen: refused, with the reason.
        let url = receiver.url.replace(':', "%3A").replace('/', "%2F");
        let (status, headers, _) = post_form(&app, &page, &cookie, &format!("csrf={csrf}&url={url}"), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let flash =
            headers.get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect::<Vec<_>>().join(";");
        let (_, _, html) =
            app.get(&page, Auth::Cookie(&format!("{cookie}; {}", flash.split(';').next().unwrap()))).await;
        assert!(text(&html).contains("choose at least one event"), "{html}");

        let body = format!("csrf={csrf}&url={url}&read_completed=on");
        let (status, headers, _) = post_form(&app, &page, &cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let cookies: Vec<String> = headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
            .collect();
        let secret_cookie =
            cookies.iter().find(|c| c.starts_with("mapwright_new_webhook=")).expect("the secret rides a cookie");
        let secret = secret_cookie.split_once('=').unwrap().1.to_owned();
        let (_, headers, html) = app.get(&page, Auth::Cookie(&format!("{cookie}; {}", cookies.join("; ")))).await;
        assert!(text(&html).contains(&secret), "shown once: {html}");
        assert!(
            headers.get_all("set-cookie").iter().any(|v| v.to_str().unwrap().starts_with("mapwright_new_webhook=;")),
            "then cleared"
        );
        let (_, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert!(!html.contains(&secret), "and not again");
        assert!(text(&html).contains("every read"));

        read_due(&app.state).await;
        webhooks::deliver_due(&app.state, &Config::default(), "sender", unix_now()).await;
        verified(&secret, &receiver.got()[0]);
        let hook = app.store.list_webhooks(ann, site.id).await.unwrap()[0].id;
        let (status, _, html) = app.get(&format!("{page}/{hook}"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let words = text(&html);
        assert!(words.contains("HTTP 200") && words.contains("Delivered"), "{words}");

        // Delete after the confirmation.
        let (status, _, html) = app.get(&format!("{page}/{hook}/delete"), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("Delete this webhook?"));
        let (status, _, _) =
            post_form(&app, &format!("{page}/{hook}/delete"), &cookie, &format!("csrf={csrf}"), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(app.store.list_webhooks(ann, site.id).await.unwrap().is_empty());
    })
    .await;
}
