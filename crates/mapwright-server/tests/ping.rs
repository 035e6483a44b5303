//! `/healthz` and the public ping.

use std::net::SocketAddr;

use axum::http::StatusCode;
use mapwright_server::app;
use mapwright_store::{Actor, DownloadRecord, Source};

use crate::support::{Auth, TestApp, each_backend};

#[tokio::test]
async fn health() {
    each_backend(false, |app| async move {
        let (status, _, body) = app.get("/healthz", Auth::None).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
    })
    .await;
}

#[tokio::test]
async fn a_well_formed_ping_is_answered_and_recorded_only_for_a_known_sitemap() {
    each_backend(false, |app| async move {
        // Nobody's sitemap: the protocol's answer, and no row stored.
        let (status, headers, body) =
            app.get("/ping?sitemap=https%3A%2F%2Fexample.com%2Fsitemap.xml", Auth::None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/plain"));
        assert!(body.contains("https://example.com/sitemap.xml"));
        assert_eq!(app.store.pings_for_sitemap_since("https://example.com/sitemap.xml", 0).await.unwrap(), 0);
        // A sitemap of a verified site: the same answer, recorded.
        let user = app.store.create_user("ann@example.com", "h", false, 0).await.unwrap();
        let actor = Actor::from(&user);
        let site = app.store.create_site(actor, "https://example.com", 0).await.unwrap();
        app.store.record_verification(site.id, true, 0).await.unwrap();
        app.store.add_sitemap(actor, site.id, "https://example.com/sitemap.xml", Source::Api, 0).await.unwrap();
        let (status, _, again) = app.get("/ping?sitemap=https%3A%2F%2Fexample.com%2Fsitemap.xml", Auth::None).await;
        assert_eq!((status, &again), (StatusCode::OK, &body));
        assert_eq!(app.store.pings_for_sitemap_since("https://example.com/sitemap.xml", 0).await.unwrap(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_malformed_ping_is_400_with_a_problem() {
    each_backend(false, |app| async move {
        for (query, message) in [
            ("/ping", "missing the sitemap parameter"),
            ("/ping?sitemap=", "missing the sitemap parameter"),
            ("/ping?other=1", "missing the sitemap parameter"),
            ("/ping?sitemap=/sitemap.xml", "not an absolute URL"),
            ("/ping?sitemap=ftp://example.com/s.xml", "must be an http or https URL"),
            ("/ping?sitemap=mailto:a@example.com", "must be an http or https URL"),
        ] {
            let (status, headers, body) = app.get(query, Auth::None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
            let detail = crate::api::assert_problem(status, &headers, &body);
            assert!(detail.contains(message), "{query}: {body}");
        }
        assert_eq!(app.store.pings_from_client_since("unknown", 0).await.unwrap(), 0);
    })
    .await;
}

#[tokio::test]
async fn a_ping_brings_a_known_sitemap_forward() {
    each_backend(false, |app| async move {
        let store = &app.store;
        let user = store.create_user("ann@example.com", "h", false, 0).await.unwrap();
        let actor = Actor::from(&user);
        let site = store.create_site(actor, "https://ann.example", 0).await.unwrap();
        store.record_verification(site.id, true, 0).await.unwrap();
        let sitemap =
            store.add_sitemap(actor, site.id, "https://ann.example/sitemap.xml", Source::Api, 0).await.unwrap();
        store.lease_due_sitemaps("w", 0, 1, 60).await.unwrap();
        let far = 4_000_000_000;
        store
            .complete("w", sitemap.id, &DownloadRecord { status: "ok".into(), ..Default::default() }, far)
            .await
            .unwrap();

        let (status, _, _) = app.get("/ping?sitemap=https://ann.example/sitemap.xml", Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(store.sitemap(actor, sitemap.id).await.unwrap().next_fetch_at < far);
    })
    .await;
}

#[tokio::test]
async fn a_real_listener_records_the_client_address() {
    let test = TestApp::new(false).await;
    // A ping is recorded only when it names a known sitemap of a verified site.
    let user = test.store.create_user("ann@example.com", "h", false, 0).await.unwrap();
    let actor = Actor::from(&user);
    let site = test.store.create_site(actor, "http://example.com", 0).await.unwrap();
    test.store.record_verification(site.id, true, 0).await.unwrap();
    test.store.add_sitemap(actor, site.id, "http://example.com/s.xml", Source::Api, 0).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = app(test.state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, service).await });

    // A minimal HTTP/1.1 client: the test needs no HTTP crate for one request.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = "GET /ping?sitemap=http://example.com/s.xml HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(test.store.pings_from_client_since("127.0.0.1", 0).await.unwrap(), 1);
    server.abort();
}

#[tokio::test]
async fn pings_are_rate_limited_per_client_and_per_sitemap() {
    let app = TestApp::new(false).await;
    let ping = |n: usize| format!("/ping?sitemap=https://example.com/s{n}.xml");
    for _ in 0..6 {
        assert_eq!(app.get(&ping(0), Auth::None).await.0, StatusCode::OK);
    }
    let (status, headers, body) = app.get(&ping(0), Auth::None).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    assert!(crate::api::assert_problem(status, &headers, &body).starts_with("too many requests"), "{body}");
    // Another sitemap passes until the client's own limit (60 a minute) is spent.
    for n in 1..=53 {
        assert_eq!(app.get(&ping(n), Auth::None).await.0, StatusCode::OK, "ping {n}");
    }
    assert_eq!(app.get(&ping(99), Auth::None).await.0, StatusCode::TOO_MANY_REQUESTS);
    // Pings that name no known sitemap are not recorded at all.
    assert_eq!(app.store.pings_from_client_since("unknown", 0).await.unwrap(), 0);
}

/// Pings are capped per network (a /48 holds 65,536 clients of their own) as sign-up is.
#[tokio::test]
async fn pings_are_capped_per_network() {
    let mut app = TestApp::new(false).await;
    let minute = std::time::Duration::from_secs(60);
    app.state.limits = std::sync::Arc::new(mapwright_server::Limits {
        ping_per_network: mapwright_server::SharedLimit::new("ping per network", 3, minute),
        ..Default::default()
    });
    let ping = |n: usize| format!("/ping?sitemap=https://example.com/s{n}.xml");
    for n in 0..3 {
        assert_eq!(app.get(&ping(n), Auth::None).await.0, StatusCode::OK, "ping {n}");
    }
    let (status, headers, body) = app.get(&ping(3), Auth::None).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(headers.contains_key("retry-after"));
}
