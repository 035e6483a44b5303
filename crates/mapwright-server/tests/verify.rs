//! Site verification (file and meta tag, lost when the proof goes) and which sitemaps a user
//! may add (own origin once verified, other hosts through robots.txt), against sites served
//! on 127.0.0.1.

use mapwright_server::submission::add_sitemap;
use mapwright_server::verify::{Method, verify_site};
use mapwright_server::{AppError, AppState};
use mapwright_store::Actor;

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

        web.put(&file, &format!("mapwright-site-verification: {}\n", site.verification_token));
        let v = verify_site(&app.state, &site).await.unwrap();
        assert_eq!((v.verified, v.method), (true, Some(Method::File)));
        assert!(app.store.site(actor, site.id).await.unwrap().verified_at.is_some());

        web.remove(&file);
        assert!(!verify_site(&app.state, &site).await.unwrap().verified);
        assert_eq!(app.store.site(actor, site.id).await.unwrap().verified_at, None);
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
        assert!(v.detail.contains("private"), "{}", v.detail);
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
