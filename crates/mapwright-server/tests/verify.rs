//! Site verification (file and meta tag, lost when the proof goes) and which sitemaps a user
//! may add (own origin once verified, other hosts through robots.txt), against sites served
//! on 127.0.0.1.

use mapwright_server::service::submission::add_sitemap;
use mapwright_server::verify::{Method, verify_site};
use mapwright_server::{AppError, AppState};
use mapwright_store::Actor;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

use crate::support::each_backend;

/// The test site of the server tests (see `sitehost.rs`).
pub use crate::sitehost::SiteHost as TestSite;

async fn user_site(state: &AppState, email: &str, origin: &str) -> (Actor, mapwright_store::Site) {
    let user = state.store.create_user(email, "h", false, 0).await.unwrap();
    let actor = Actor::from(&user);
    let site = state.store.create_site(actor, origin, 0).await.unwrap();
    (actor, site)
}

#[tokio::test]
async fn a_file_verifies_and_its_removal_unverifies() {
    each_backend(false, |app| async move {
        let web = TestSite::start().await;
        let (actor, site) = user_site(&app.state, "ann@example.com", &web.origin).await;
        let file = format!("/mapwright-{}.html", site.verification_token);

        let v = verify_site(&app.state, &site).await.unwrap();
        assert!(!v.verified);
        assert!(v.detail.contains("404"), "{}", v.detail);
        assert_eq!(app.store.site(actor, site.id).await.unwrap().verified_at, None);

        web.put(&file, "something else");
        assert!(!verify_site(&app.state, &site).await.unwrap().verified);

        // The token among other text is no proof (an echoing page holds it too).
        web.put(&file, &format!("mapwright-site-verification: {}\n", site.verification_token));
        assert!(!verify_site(&app.state, &site).await.unwrap().verified);

        web.put(&file, &format!("{}\n", site.verification_token));
        let v = verify_site(&app.state, &site).await.unwrap();
        assert_eq!((v.verified, v.method), (true, Some(Method::File)));
        assert!(app.store.site(actor, site.id).await.unwrap().verified_at.is_some());
        // The overview's "kept verified by": the proof the check found.
        let proof = app.store.site_proof(actor, site.id).await.unwrap();
        assert_eq!((proof.verified_by.as_deref(), proof.verified_domain), (Some("file"), None));

        web.remove(&file);
        assert!(!verify_site(&app.state, &site).await.unwrap().verified);
        assert_eq!(app.store.site(actor, site.id).await.unwrap().verified_at, None);
        assert_eq!(app.store.site_proof(actor, site.id).await.unwrap(), Default::default(), "no proof in force");
    })
    .await;
}

#[tokio::test]
async fn a_meta_tag_verifies() {
    each_backend(false, |app| async move {
        let web = TestSite::start().await;
        let (actor, site) = user_site(&app.state, "ann@example.com", &web.origin).await;
        let tag = mapwright_server::verify::meta_tag(&site.verification_token);
        web.put("/", &format!("<!doctype html><html><head><title>Home</title>{tag}</head><body></body></html>"));
        let v = verify_site(&app.state, &site).await.unwrap();
        assert_eq!((v.verified, v.method), (true, Some(Method::Meta)));
        assert!(app.store.site(actor, site.id).await.unwrap().verified_at.is_some());
        let proof = app.store.site_proof(actor, site.id).await.unwrap();
        assert_eq!(proof.verified_by.as_deref(), Some("meta"));
        // A check that found no proof, the re-check's timeout among them, clears it.
        app.store.record_verification(site.id, false, 1).await.unwrap();
        assert_eq!(app.store.site_proof(actor, site.id).await.unwrap().verified_by, None);
    })
    .await;
}

/// A site whose every path answers 200 with a page that shows the path asked for (`echo` 1; 2:
/// the body is the file name and nothing else; 0: 404), and, on its home page, the last
/// comment a visitor left, unescaped: both hold the token for anyone who asks, and neither is
/// proof.
#[derive(Clone, Default)]
struct EchoingSite {
    comment: Arc<Mutex<String>>,
    head: Arc<Mutex<String>>,
    echo: Arc<AtomicU8>,
}

impl EchoingSite {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let router = axum::Router::new().fallback(echo).with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        origin
    }
}

async fn echo(axum::extract::State(site): axum::extract::State<EchoingSite>, uri: axum::http::Uri) -> Response {
    let path = uri.path();
    let name = path.trim_start_matches('/');
    if path == "/" {
        let comment = site.comment.lock().unwrap().clone();
        let head = site.head.lock().unwrap().clone();
        return Html(format!(
            "<!doctype html><html><head><title>Home</title>{head}</head>\
             <body><h1>Welcome</h1><p>Latest comment: {comment}</p></body></html>"
        ))
        .into_response();
    }
    match site.echo.load(Ordering::SeqCst) {
        0 => (StatusCode::NOT_FOUND, "not found").into_response(),
        1 => Html(format!(
            "<!doctype html><html><head><title>Not found: {name}</title></head>\
             <body><p>No page at {path}</p></body></html>"
        ))
        .into_response(),
        _ => name.to_owned().into_response(),
    }
}

#[tokio::test]
async fn an_echoing_page_verifies_nobody() {
    each_backend(false, |app| async move {
        let web = EchoingSite::default();
        let origin = web.start().await;
        let (actor, site) = user_site(&app.state, "mallory@example.com", &origin).await;
        let tag = mapwright_server::verify::meta_tag(&site.verification_token);
        let home = format!("{origin}/");
        // Each case alone verified the site before: the file's echoed, the tag's in the body.
        for (echo, comment) in [
            (1, String::new()),
            (2, String::new()),
            (0, tag.clone()),
            (0, format!("<title>{tag}</title>")),
            (0, format!("<!-- {tag} -->")),
            (0, format!("<script>let q = '{tag}';</script>")),
        ] {
            *web.comment.lock().unwrap() = comment.clone();
            web.echo.store(echo, Ordering::SeqCst);
            let v = verify_site(&app.state, &site).await.unwrap();
            assert!(!v.verified, "{echo} {comment:?}: {v:?}");
            let file = if echo == 0 { "answered HTTP 404" } else { "does not hold exactly the token" };
            assert!(v.detail.contains(file), "{}", v.detail);
            assert!(v.detail.contains(&format!("{home} has no mapwright-site-verification meta")), "{}", v.detail);
            assert_eq!(app.store.site(actor, site.id).await.unwrap().verified_at, None);
        }
        // The same page with the tag in its head is proof: the check above could succeed.
        *web.head.lock().unwrap() = tag;
        let v = verify_site(&app.state, &site).await.unwrap();
        assert_eq!((v.verified, v.method), (true, Some(Method::Meta)), "{v:?}");
    })
    .await;
}

#[tokio::test]
async fn the_default_fetcher_refuses_loopback_sites() {
    each_backend(false, |app| async move {
        let web = TestSite::start().await;
        let (_, site) = user_site(&app.state, "ann@example.com", &web.origin).await;
        web.put(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token);
        let strict = AppState::new(app.store.clone(), false);
        let v = verify_site(&strict, &site).await.unwrap();
        assert!(!v.verified);
        // Refused before any connection, and told like any other failure.
        let file = format!("{}/mapwright-{}.html", web.origin, site.verification_token);
        assert!(v.detail.contains(&format!("could not fetch {file}")), "{}", v.detail);
    })
    .await;
}

#[tokio::test]
async fn sitemaps_are_admitted_on_a_verified_site_or_through_robots_txt() {
    each_backend(false, |app| async move {
        let web = TestSite::start().await;
        let other = TestSite::start().await;
        let (actor, site) = user_site(&app.state, "ann@example.com", &web.origin).await;
        let own = format!("{}/sitemap.xml", web.origin);
        let foreign = format!("{}/sitemaps/ann.xml", other.origin);

        let refused = add_sitemap(&app.state, actor, site.id, &own).await.unwrap_err();
        assert!(matches!(&refused, AppError::Rejected(m) if m.contains("not verified")), "{refused:?}");

        web.put(&format!("/mapwright-{}.html", site.verification_token), &site.verification_token);
        assert!(verify_site(&app.state, &site).await.unwrap().verified);
        let added = add_sitemap(&app.state, actor, site.id, &own).await.unwrap();
        assert_eq!((added.url.as_str(), added.site_id), (own.as_str(), site.id));

        let refused = add_sitemap(&app.state, actor, site.id, &foreign).await.unwrap_err();
        assert!(matches!(&refused, AppError::Rejected(m) if m.contains("robots.txt")), "{refused:?}");
        web.put("/robots.txt", &format!("User-agent: *\nDisallow:\nSitemap: {foreign}\n"));
        let added = add_sitemap(&app.state, actor, site.id, &foreign).await.unwrap();
        assert_eq!(added.url, foreign);

        let bad = add_sitemap(&app.state, actor, site.id, "/sitemap.xml").await.unwrap_err();
        assert!(matches!(bad, AppError::BadRequest(_)), "{bad:?}");

        let (mallory, _) = user_site(&app.state, "mallory@example.com", "https://mallory.example").await;
        let hidden = add_sitemap(&app.state, mallory, site.id, &own).await.unwrap_err();
        assert!(matches!(hidden, AppError::NotFound), "{hidden:?}");
        let listed: Vec<String> =
            app.store.list_sitemaps(actor, site.id).await.unwrap().into_iter().map(|s| s.url).collect();
        assert_eq!(listed, [own, foreign]);
    })
    .await;
}

/// Connection refused, a server that never answers, one that answers something other than
/// HTTP, a TLS failure and a refused private address all read "could not fetch": a user
/// chooses the origin, and a detail that told them apart would scan ports for them. A status
/// is told.
#[tokio::test]
async fn fetch_failures_read_the_same_whatever_their_cause() {
    use mapwright_server::verify::check;
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;

    let config = mapwright_fetch::Config {
        connect_timeout: Duration::from_millis(500),
        timeout: Duration::from_secs(1),
        read_timeout: Duration::from_millis(500),
        retries: 0,
        allow_private_networks: true,
        ..mapwright_fetch::Config::default()
    };
    let fetcher = mapwright_fetch::Fetcher::new(config.clone()).unwrap();
    let strict =
        mapwright_fetch::Fetcher::new(mapwright_fetch::Config { allow_private_networks: false, ..config }).unwrap();

    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_origin = format!("http://{}", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let garbage = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let garbage_origin = format!("http://{}", garbage.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = garbage.accept().await {
            let _ = socket.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").await;
        }
    });
    let web = TestSite::start().await;
    let tls = web.origin.replace("http://", "https://");

    let token = "tok12345";
    let expected = format!("not verified: could not fetch ORIGIN/mapwright-{token}.html; could not fetch ORIGIN/");
    for (origin, fetcher) in [
        (&closed, &fetcher),
        (&silent_origin, &fetcher),
        (&garbage_origin, &fetcher),
        (&tls, &fetcher),
        (&web.origin, &strict),
    ] {
        let v = check(fetcher, origin, token).await;
        assert!(!v.verified);
        assert_eq!(v.detail.replace(origin.as_str(), "ORIGIN"), expected, "{origin}");
    }
    web.put("/", "<p>home</p>");
    let v = check(&fetcher, &web.origin, token).await;
    let o = &web.origin;
    assert_eq!(
        v.detail,
        format!(
            "not verified: {o}/mapwright-{token}.html answered HTTP 404; \
             {o}/ has no mapwright-site-verification meta tag with the token in its head"
        )
    );
}

/// Issue 24 item 4: a site that redirects every path to another origin is not verified by the
/// proof that other origin holds (its file or its home page's tag): whoever can make a site
/// redirect (an open redirect, a parked domain) does not own the target.
#[tokio::test]
async fn a_proof_on_another_origin_a_site_redirects_to_is_no_proof() {
    each_backend(false, |app| async move {
        let target = TestSite::start().await;
        let redirecting = redirect_everything_to(&target.origin).await;
        let (actor, site) = user_site(&app.state, "ann@example.com", &redirecting).await;
        let token = &site.verification_token;
        target.put(&format!("/mapwright-{token}.html"), token);
        let tag = mapwright_server::verify::meta_tag(token);
        target.put("/", &format!("<html><head>{tag}</head><body></body></html>"));
        let v = verify_site(&app.state, &site).await.unwrap();
        assert!(!v.verified, "{v:?}");
        assert!(v.detail.contains("redirects to another site"), "{}", v.detail);
        assert_eq!(app.store.site(actor, site.id).await.unwrap().verified_at, None);
        assert!(target.hits(&format!("/mapwright-{token}.html")) <= 1);

        // The same proof on the site itself verifies it (and a redirect within the site is
        // followed): the refusal is the other origin, not the redirect.
        let (_, own) = user_site(&app.state, "bob@example.com", &target.origin).await;
        target.put(&format!("/mapwright-{}.html", own.verification_token), &own.verification_token);
        assert!(verify_site(&app.state, &own).await.unwrap().verified);
    })
    .await;
}

/// A site on 127.0.0.1 that answers every path with a 301 to the same path on `origin`.
async fn redirect_everything_to(origin: &str) -> String {
    let origin = origin.to_owned();
    let router = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let to = format!("{origin}{}", uri.path());
        async move { (StatusCode::MOVED_PERMANENTLY, [(axum::http::header::LOCATION, to)]).into_response() }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}
