//! The web console through the router, on both backends: pages and their content, 404 for
//! another user's ids on every route that takes one, CSRF on every form and every POST, the
//! sign-up/sign-in forms, the add-sitemap messages, and the failing-URLs checker.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use mapwright_server::jobs::checker::{RunEnd, check_site};
use mapwright_store::{
    Actor, DownloadRecord, FindingRecord, Site, Sitemap, Source, UrlCheckRecord, UrlQuery, UrlRecord,
};
use scraper::{Html, Selector};

use crate::support::{Auth, TestApp, each_backend, set_cookie};
use crate::verify::TestSite;

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A signed-in user with a verified site, a downloaded sitemap with a finding, URLs, a
/// failing URL and an API token.
pub struct Seeded {
    pub cookie: String,
    pub csrf: String,
    pub site: Site,
    pub sitemap: Sitemap,
    pub token_id: i64,
    /// An invitation of the site, waiting.
    pub invitation_id: i64,
    /// The user's own membership of the site.
    pub member_id: i64,
    /// A webhook of the site.
    pub webhook_id: i64,
}

pub async fn seed(app: &TestApp, email: &str, origin: &str) -> Seeded {
    let store = &app.store;
    let now = now();
    let user = store.create_user(email, "h", false, now).await.unwrap();
    let actor = Actor::from(&user);
    let session = store.create_session(user.id, now, 3600).await.unwrap();
    let site = store.create_site(actor, origin, now).await.unwrap();
    store.record_verification(site.id, true, now).await.unwrap();
    let sitemap = store.add_sitemap(actor, site.id, &format!("{origin}/sitemap.xml"), Source::Api, now).await.unwrap();
    let leased = store.lease_due_sitemaps("seed", now, 100, 60).await.unwrap();
    assert!(leased.iter().any(|l| l.id == sitemap.id));
    let finding = FindingRecord {
        rule: "loc-not-absolute".into(),
        severity: "error".into(),
        line: Some(3),
        col: Some(5),
        loc: Some("/relative".into()),
        message: "the URL /relative is not absolute".into(),
    };
    let download = DownloadRecord {
        downloaded_at: now - 4 * 3600,
        status: "errors".into(),
        http_status: Some(200),
        bytes: 123_456,
        url_count: 1234,
        findings: vec![finding],
        ..DownloadRecord::default()
    };
    // URLs first, as the scheduler stores them, then the download (which counts them).
    let urls: Vec<UrlRecord> = ["a", "b", "missing"]
        .iter()
        .map(|p| UrlRecord { loc: format!("{origin}/{p}"), lastmod: None, changefreq: None, priority: Some(0.8) })
        .collect();
    store.upsert_urls(site.id, sitemap.id, &urls, now).await.unwrap();
    store.complete("seed", sitemap.id, &download, now + 86_400).await.unwrap();
    let rows = store.list_urls(actor, site.id, UrlQuery::default()).await.unwrap().items;
    let missing = rows.iter().find(|u| u.loc.ends_with("/missing")).unwrap().id;
    let check = UrlCheckRecord {
        url_id: missing,
        status: Some(404),
        rule: Some("url-status".into()),
        message: Some(format!("{origin}/missing answers 404")),
        version: None,
    };
    store.record_url_checks(site.id, &[check], now).await.unwrap();
    let (token, _) = store.create_api_token(actor, "ci", now).await.unwrap();
    let guest = format!("guest-{email}");
    let role = mapwright_store::Role::Reader;
    let (invitation, _) = store.create_invitation(actor, site.id, &guest, role, now, 86_400).await.unwrap();
    let member_id = store.list_members(actor, site.id).await.unwrap()[0].id;
    let events = mapwright_store::WEBHOOK_EVENTS;
    let webhook =
        store.create_webhook(actor, site.id, "https://hooks.example/in", "a-secret-of-16-chars", &events, now);
    let webhook_id = webhook.await.unwrap().id;
    let cookie = format!("mapwright_session={session}");
    let (status, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    let csrf = csrf_of(&html).expect("the table page has a form with a CSRF token");
    let sitemap = store.sitemap(actor, sitemap.id).await.unwrap();
    Seeded { cookie, csrf, site, sitemap, token_id: token.id, invitation_id: invitation.id, member_id, webhook_id }
}

/// The CSRF token of the first post form of a page.
pub fn csrf_of(html: &str) -> Option<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(r#"form[method="post"] input[name="csrf"]"#).unwrap();
    doc.select(&sel).next().and_then(|i| i.value().attr("value")).map(str::to_owned)
}

pub async fn post_form(
    app: &TestApp,
    uri: &str,
    cookie: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, String) {
    let mut request = Request::post(uri).header("content-type", "application/x-www-form-urlencoded");
    if !cookie.is_empty() {
        request = request.header("cookie", cookie);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    app.send(request.body(Body::from(body.to_owned())).unwrap()).await
}

/// The visible text of a page (URLs carry `<wbr>` break points in the HTML).
pub fn text(html: &str) -> String {
    Html::parse_document(html).root_element().text().collect::<Vec<_>>().join("")
}

fn location(headers: &HeaderMap) -> &str {
    headers.get("location").map(|v| v.to_str().unwrap()).unwrap_or("")
}

#[tokio::test]
async fn pages_show_the_table_the_sitemap_the_site_and_the_account() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let child = "https://ann.example/child-1.xml";
        app.store.add_sitemap_for_site(s.site.id, child, Source::Index, Some(s.sitemap.id), now()).await.unwrap();
        let robots = "https://ann.example/from-robots.xml";
        app.store.add_sitemap_for_site(s.site.id, robots, Source::Robots, None, now()).await.unwrap();
        let auth = Auth::Cookie(&s.cookie);
        let (status, headers, html) = app.get("/", auth).await;
        let page = text(&html);
        assert!(page.contains(robots) && !page.contains(child), "the table lists top-level sitemaps: {page}");
        assert_eq!(status, StatusCode::OK);
        assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
        // The URLs the sitemap stores (the seed stores 3), not the 1,234 entries its download read.
        assert!(html.contains(r#"data-label="URLs" class="num">3<"#), "the table shows the stored URLs: {html}");
        for expected in
            ["https://ann.example/sitemap.xml", "Has errors", "1 error", "4 hours ago", "Resubmit", "Remove"]
        {
            assert!(page.contains(expected), "table lacks {expected:?}: {page}");
        }
        assert!(html.contains("<time datetime=\""), "{html}");

        let (status, _, html) = app.get(&format!("/sitemaps/{}", s.sitemap.id), auth).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("/api/v1/sites/"), "links to the exports: {html}");
        let html = text(&html);
        for expected in [
            "Sitemaps in this index",
            child,
            "loc-not-absolute",
            "3:5",
            "the URL /relative is not absolute",
            "How to fix: ",
            "123,456",
            "https://ann.example/missing",
        ] {
            assert!(html.contains(expected), "sitemap page lacks {expected:?}: {html}");
        }
        let (_, _, html) = app.get(&format!("/sitemaps/{}?q=MISS", s.sitemap.id), auth).await;
        let html = text(&html);
        assert!(html.contains("https://ann.example/missing") && !html.contains("https://ann.example/a0"), "{html}");
        let (_, _, html) = app.get(&format!("/sitemaps/{}?q=%25", s.sitemap.id), auth).await;
        assert!(html.contains("No URL matches."), "a % is searched literally: {html}");

        let (status, _, html) = app.get(&format!("/sites/{}", s.site.id), auth).await;
        assert_eq!(status, StatusCode::OK);
        let html = text(&html);
        for expected in [
            robots,
            s.site.verification_token.as_str(),
            "mapwright-",
            "mapwright-site-verification",
            "Verify now",
            "https://ann.example/missing",
            "404",
            "404 Not found",
            "https://ann.example/sitemap.xml",
            "Check now",
        ] {
            assert!(html.contains(expected), "site page lacks {expected:?}: {html}");
        }

        let (status, _, html) = app.get("/account", auth).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("ann@example.com") && html.contains(">ci<"), "{html}");

        let (status, _, css) = app.get("/static/style.css", Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(css.contains(":focus-visible"));
    })
    .await;
}

#[tokio::test]
async fn pages_without_a_session_redirect_to_sign_in() {
    let app = TestApp::new(false).await;
    for uri in ["/", "/sitemaps", "/sitemaps/add", "/sitemaps/1", "/sitemaps/1/remove", "/sites/1", "/account"] {
        let (status, headers, _) = app.get(uri, Auth::None).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{uri}");
        assert_eq!(location(&headers), "/signin", "{uri}");
        let (status, headers, _) = app.get(uri, Auth::Cookie("mapwright_session=forged")).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, "/signin"), "{uri}");
    }
}

/// The seeded user's own Leave page: as the site's only owner, it is sent back (no page).
fn is_leave(uri: &str) -> bool {
    uri.contains("/members/") && uri.ends_with("/remove")
}

/// Every GET page and POST action that takes an id, with the id it takes from a seeded user.
fn routes_with_ids(s: &Seeded) -> (Vec<String>, Vec<String>) {
    let (sm, site, tok, inv, member) = (s.sitemap.id, s.site.id, s.token_id, s.invitation_id, s.member_id);
    let hook = s.webhook_id;
    let gets = vec![
        format!("/sitemaps/{sm}"),
        format!("/sitemaps/{sm}/remove"),
        format!("/sitemaps/{sm}/findings?rule=loc-not-absolute"),
        format!("/sites/{site}"),
        format!("/sites/{site}/findings?rule=loc-not-absolute"),
        format!("/sites/{site}/failing.csv"),
        format!("/sites/{site}/delete"),
        format!("/account/tokens/{tok}/revoke"),
        format!("/sites/{site}/members"),
        format!("/sites/{site}/members/{member}/remove"),
        format!("/sites/{site}/webhooks"),
        format!("/sites/{site}/webhooks/{hook}"),
        format!("/sites/{site}/webhooks/{hook}/delete"),
    ];
    let posts = vec![
        format!("/sitemaps/{sm}/resubmit"),
        format!("/sitemaps/{sm}/remove"),
        format!("/sites/{site}/verify"),
        format!("/sites/{site}/check"),
        format!("/account/tokens/{tok}/revoke"),
        format!("/sites/{site}/invitations"),
        format!("/sites/{site}/invitations/{inv}/withdraw"),
        format!("/sites/{site}/members/{member}/remove"),
        format!("/sites/{site}/webhooks"),
        format!("/sites/{site}/webhooks/{hook}/delete"),
        format!("/sites/{site}/delete"),
    ];
    (gets, posts)
}

#[tokio::test]
async fn another_users_ids_are_not_found_on_every_page_and_action() {
    each_backend(false, |app| async move {
        let ann = seed(&app, "ann@example.com", "https://ann.example").await;
        let bob = seed(&app, "bob@example.com", "https://bob.example").await;
        let (gets, posts) = routes_with_ids(&ann);
        for uri in &gets {
            let (status, _, html) = app.get(uri, Auth::Cookie(&bob.cookie)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "GET {uri} as another user: {html}");
            assert!(!html.contains("ann.example"), "GET {uri} leaks: {html}");
        }
        for uri in &posts {
            let body = format!("csrf={}", bob.csrf);
            let (status, _, html) = post_form(&app, uri, &bob.cookie, &body, &[]).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "POST {uri} as another user: {html}");
        }
        // Adding a sitemap to another user's site through the form's site field.
        let body = format!("csrf={}&url=https%3A%2F%2Fann.example%2Fs.xml&site={}", bob.csrf, ann.site.id);
        let (status, _, _) = post_form(&app, "/sitemaps/add", &bob.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        // Nothing changed for the owner: the sitemap is still listed and the token alive.
        let (_, _, html) = app.get("/", Auth::Cookie(&ann.cookie)).await;
        assert!(html.contains("https://ann.example/sitemap.xml"));
        let (_, _, html) = app.get("/account", Auth::Cookie(&ann.cookie)).await;
        assert!(html.contains(">ci<"));
        // The same ids work for their owner.
        for uri in &gets {
            // The only owner's Leave page sends it back to the members (issue 34: no
            // confirmation it would be refused after).
            let expected = if is_leave(uri) { StatusCode::SEE_OTHER } else { StatusCode::OK };
            assert_eq!(app.get(uri, Auth::Cookie(&ann.cookie)).await.0, expected, "GET {uri} as the owner");
        }
    })
    .await;
}

#[tokio::test]
async fn every_post_refuses_a_missing_or_wrong_csrf_token() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let (_, mut posts) = routes_with_ids(&s);
        posts.extend(
            [
                "/sitemaps/add",
                "/account/tokens",
                "/signout",
                "/signin",
                "/signup",
                "/password/forgot",
                "/password/reset",
                "/account/password",
                "/account/email",
                "/account/email/confirm",
            ]
            .map(String::from),
        );
        let wrong = "0".repeat(64);
        for uri in &posts {
            let fields = "url=https%3A%2F%2Fann.example%2Fx.xml&name=t&email=ann%40example.com&password=0123456789ab";
            for body in [fields.to_owned(), format!("{fields}&csrf={wrong}"), format!("{fields}&csrf=")] {
                let (status, _, _) = post_form(&app, uri, &s.cookie, &body, &[]).await;
                assert_eq!(status, StatusCode::FORBIDDEN, "POST {uri} with {body}");
            }
            // The right token from another site's page is refused too.
            let body = format!("{fields}&csrf={}", s.csrf);
            let cross = [("origin", "https://evil.example"), ("host", "console.example")];
            assert_eq!(post_form(&app, uri, &s.cookie, &body, &cross).await.0, StatusCode::FORBIDDEN, "{uri}");
            let cross = [("sec-fetch-site", "cross-site")];
            assert_eq!(post_form(&app, uri, &s.cookie, &body, &cross).await.0, StatusCode::FORBIDDEN, "{uri}");
        }
        // Still there: none of the refused posts acted.
        let (_, _, html) = app.get("/", Auth::Cookie(&s.cookie)).await;
        assert!(html.contains("https://ann.example/sitemap.xml") && !html.contains("x.xml"), "{html}");
        // The right token from the same origin acts.
        let same = [("origin", "http://console.example"), ("host", "console.example")];
        let uri = format!("/sitemaps/{}/resubmit", s.sitemap.id);
        let (status, _, _) = post_form(&app, &uri, &s.cookie, &format!("csrf={}", s.csrf), &same).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
    })
    .await;
}

#[tokio::test]
async fn every_form_rendered_carries_the_csrf_field() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let (gets, _) = routes_with_ids(&s);
        let mut pages = vec!["/".to_owned(), "/sitemaps".into(), "/sitemaps/add".into(), "/account".into()];
        pages.extend(gets);
        let forms = Selector::parse("form").unwrap();
        let hidden = Selector::parse(r#"input[type="hidden"][name="csrf"]"#).unwrap();
        let mut post_forms = 0;
        for uri in pages.iter().filter(|uri| !is_leave(uri)) {
            let (status, _, html) = app.get(uri, Auth::Cookie(&s.cookie)).await;
            assert_eq!(status, StatusCode::OK, "{uri}");
            let doc = Html::parse_document(&html);
            for form in doc.select(&forms) {
                if !form.value().attr("method").is_some_and(|m| m.eq_ignore_ascii_case("post")) {
                    continue;
                }
                post_forms += 1;
                let token = form.select(&hidden).next().and_then(|i| i.value().attr("value"));
                assert_eq!(token, Some(s.csrf.as_str()), "a post form of {uri} lacks the token: {}", form.html());
            }
        }
        assert!(post_forms >= 10, "only {post_forms} post forms seen");
        for uri in ["/signin", "/signup"] {
            let (status, headers, html) = app.get(uri, Auth::None).await;
            assert_eq!(status, StatusCode::OK);
            let (cookie, _) = set_cookie(&headers);
            let value = cookie.strip_prefix("mapwright_csrf=").expect("a pre-session cookie");
            assert_eq!(csrf_of(&html).as_deref(), Some(value), "{uri}");
        }
    })
    .await;
}

#[tokio::test]
async fn sign_up_sign_out_and_sign_in_through_the_forms() {
    each_backend(false, |app| async move {
        let (_, headers, html) = app.get("/signup", Auth::None).await;
        let (pre, _) = set_cookie(&headers);
        let token = csrf_of(&html).unwrap();
        let body = format!("csrf={token}&email=cat%40example.com&password=short");
        let (status, _, html) = post_form(&app, "/signup", &pre, &body, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(html.contains("at least 10 characters") && html.contains("cat@example.com"), "{html}");
        let body = format!("csrf={token}&email=cat%40example.com&password=long+enough+pw");
        let (status, headers, sent) = post_form(&app, "/signup", &pre, &body, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(headers.get("set-cookie").is_none(), "no session before the address is confirmed");
        assert!(sent.contains("Check your inbox") && sent.contains("outbox folder"), "{sent}");
        // The mailed link opens a form (opening it makes nothing: mail scanners open links).
        let link = app.wait_for_mails(1).await.remove(0).link_token().unwrap();
        let (status, headers, html) = app.get(&format!("/signup/confirm?token={link}"), Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(app.store.user_credentials("cat@example.com").await.unwrap().is_none());
        let (confirm_pre, _) = set_cookie(&headers);
        let csrf = csrf_of(&html).unwrap();
        assert!(html.contains(&format!("value=\"{link}\"")), "the token rides in the form: {html}");
        let wrong = format!("csrf={csrf}&token={link}&password=another+password");
        let (status, _, html) = post_form(&app, "/signup/confirm", &confirm_pre, &wrong, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(html.contains("not the password given when signing up"), "{html}");
        let right = format!("csrf={csrf}&token={link}&password=long+enough+pw");
        let (status, headers, _) = post_form(&app, "/signup/confirm", &confirm_pre, &right, &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, "/"));
        let (session, full) = set_cookie(&headers);
        assert!(full.contains("HttpOnly") && full.contains("SameSite=Lax"), "{full}");
        let (status, _, html) = app.get("/", Auth::Cookie(&session)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("cat@example.com") && html.contains("No sitemaps yet"), "{html}");
        // Signing up again with a taken address answers as for any other.
        let (status, _, again) = post_form(&app, "/signup", &pre, &body, &[]).await;
        assert_eq!((status, &again), (StatusCode::OK, &sent));

        let csrf = csrf_of(&html).unwrap();
        let (status, headers, _) = post_form(&app, "/signout", &session, &format!("csrf={csrf}"), &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, "/signin"));
        assert_eq!(app.get("/", Auth::Cookie(&session)).await.0, StatusCode::SEE_OTHER, "the session ended");

        let wrong = format!("csrf={token}&email=cat%40example.com&password=not+the+password");
        let (status, _, html) = post_form(&app, "/signin", &pre, &wrong, &[]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(html.contains("wrong e-mail or password"), "{html}");
        let right = format!("csrf={token}&email=CAT%40example.com&password=long+enough+pw");
        let (status, headers, _) = post_form(&app, "/signin", &pre, &right, &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, "/"));
    })
    .await;
}

#[tokio::test]
async fn the_add_form_explains_refusals_and_links_to_verification() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let test_site = TestSite::start().await;
        let url: String =
            url::form_urlencoded::byte_serialize(format!("{}/sitemap.xml", test_site.origin).as_bytes()).collect();
        let body = format!("csrf={}&url={url}&site=", s.csrf);
        // A sitemap of a site not verified yet: no error, straight to the site's verification
        // with one instruction, the sitemap kept for after it.
        let (status, headers, _) = post_form(&app, "/sitemaps/add", &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let verify = location(&headers).to_owned();
        assert!(verify.starts_with("/sites/") && verify.contains(&format!("add={url}")), "{verify}");
        let flash = crate::support::set_cookie(&headers).0;
        let (_, _, html) = app.get(&verify, Auth::Cookie(&format!("{}; {flash}", s.cookie))).await;
        let doc = Html::parse_document(&html);
        let errors = Selector::parse(".error, #flash-error").unwrap();
        assert_eq!(doc.select(&errors).count(), 0, "no red box for the normal first step: {html}");
        let news: String = doc.select(&Selector::parse(".flash").unwrap()).flat_map(|e| e.text()).collect();
        assert_eq!(news, format!("{} is not verified yet.", test_site.origin));
        let t: String = doc.select(&Selector::parse("main").unwrap()).flat_map(|e| e.text()).collect();
        assert_eq!(t.matches("press Verify now").count(), 1, "one instruction: {t}");
        let pending: String = doc.select(&Selector::parse("#pending-add").unwrap()).flat_map(|e| e.text()).collect();
        assert!(pending.ends_with("is added as soon as the site is verified."), "{pending}");
        assert!(!html.contains("add the sitemap again") && !html.contains("before adding sitemaps"), "{html}");

        let (status, _, html) =
            post_form(&app, "/sitemaps/add", &s.cookie, &format!("csrf={}&url=ftp%3A%2F%2Fx", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(html.contains("must be an http or https URL"), "{html}");

        // Verify by file, then the same form succeeds.
        let verify = verify.split('?').next().unwrap().to_owned();
        let (_, _, page) = app.get(&verify, Auth::Cookie(&s.cookie)).await;
        let token = page.split("mapwright-").nth(1).and_then(|t| t.split(".html").next()).unwrap().to_owned();
        test_site.put(&format!("/mapwright-{token}.html"), &token);
        let (status, headers, _) =
            post_form(&app, &format!("{verify}/verify"), &s.cookie, &format!("csrf={}", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let flash = headers.get("set-cookie").unwrap().to_str().unwrap().split(';').next().unwrap().to_owned();
        let (_, headers, page) = app.get(&verify, Auth::Cookie(&format!("{}; {flash}", s.cookie))).await;
        assert!(page.contains("Verified: ") && page.contains("holds the token"), "{page}");
        assert!(headers.get("set-cookie").unwrap().to_str().unwrap().contains("Max-Age=0"), "the message shows once");
        let (status, headers, _) = post_form(&app, "/sitemaps/add", &s.cookie, &body, &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, "/"));
        let (_, _, html) = app.get("/", Auth::Cookie(&s.cookie)).await;
        assert!(
            html.contains(&format!("{}/sitemap.xml", test_site.origin)) && html.contains(">Pending</span>"),
            "{html}"
        );
    })
    .await;
}

#[tokio::test]
async fn resubmit_and_remove_with_confirmation() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let id = s.sitemap.id;
        let body = format!("csrf={}", s.csrf);
        let (status, _, _) = post_form(&app, &format!("/sitemaps/{id}/resubmit"), &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        assert!(app.store.sitemap(actor, id).await.unwrap().next_fetch_at <= now(), "due again");
        let (status, _, html) = app.get(&format!("/sitemaps/{id}/remove"), Auth::Cookie(&s.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("Remove this sitemap?") && html.contains("Cancel"), "{html}");
        assert!(app.store.sitemap(actor, id).await.unwrap().removed_at.is_none(), "the confirm page changes nothing");
        let (status, _, _) = post_form(&app, &format!("/sitemaps/{id}/remove"), &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(app.store.sitemap(actor, id).await.unwrap().removed_at.is_some());
        let (_, _, html) = app.get("/", Auth::Cookie(&s.cookie)).await;
        let doc = Html::parse_document(&html);
        let row = doc
            .select(&Selector::parse("tr.removed").unwrap())
            .next()
            .expect("a removed row")
            .text()
            .collect::<String>();
        assert!(
            row.contains("https://ann.example/sitemap.xml") && row.contains("Removed") && row.contains("Restore"),
            "{row}"
        );
    })
    .await;
}

#[tokio::test]
async fn tokens_are_created_shown_once_and_revoked() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let body = format!("csrf={}&name=deploy", s.csrf);
        let (status, headers, _) = post_form(&app, "/account/tokens", &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let cookies: Vec<&str> =
            headers.get_all("set-cookie").iter().map(|v| v.to_str().unwrap().split(';').next().unwrap()).collect();
        let (_, _, html) = app.get("/account", Auth::Cookie(&format!("{}; {}", s.cookie, cookies.join("; ")))).await;
        let doc = Html::parse_document(&html);
        let secret = doc.select(&Selector::parse("code.secret").unwrap()).next().unwrap().text().collect::<String>();
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::OK);
        let (_, _, html) = app.get("/account", Auth::Cookie(&s.cookie)).await;
        assert!(html.contains(">deploy<") && !html.contains(&secret), "the secret is shown only once");
        let (status, _, _) =
            post_form(&app, "/account/tokens", &s.cookie, &format!("csrf={}&name=", s.csrf), &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let ids = app.store.list_api_tokens(Actor { user_id: s.site.owner_id, is_admin: false }).await.unwrap();
        let deploy = ids.iter().find(|t| t.name == "deploy").unwrap().id;
        let revoke = format!("/account/tokens/{deploy}/revoke");
        assert_eq!(
            post_form(&app, &revoke, &s.cookie, &format!("csrf={}", s.csrf), &[]).await.0,
            StatusCode::SEE_OTHER
        );
        assert_eq!(app.get("/api/v1/me", Auth::Bearer(&secret)).await.0, StatusCode::UNAUTHORIZED);
    })
    .await;
}

#[tokio::test]
async fn lists_are_paged() {
    let app = TestApp::new(false).await;
    let s = seed(&app, "ann@example.com", "https://ann.example").await;
    let actor = Actor { user_id: s.site.owner_id, is_admin: false };
    for i in 0..60 {
        app.store
            .add_sitemap(actor, s.site.id, &format!("https://ann.example/s{i:02}.xml"), Source::Api, now())
            .await
            .unwrap();
    }
    let (_, _, first) = app.get("/", Auth::Cookie(&s.cookie)).await;
    assert!(first.contains("s00.xml") && !first.contains("s59.xml"), "page 1 holds 50 rows");
    let doc = Html::parse_document(&first);
    let next = doc.select(&Selector::parse(".pager a").unwrap()).find(|a| a.text().any(|t| t == "Next page")).unwrap();
    let (_, _, second) = app.get(next.value().attr("href").unwrap(), Auth::Cookie(&s.cookie)).await;
    assert!(second.contains("s59.xml") && !second.contains("s00.xml"), "{second}");
    for i in 0..55 {
        app.store.create_api_token(actor, &format!("token-{i:02}"), now()).await.unwrap();
    }
    let (_, _, account) = app.get("/account", Auth::Cookie(&s.cookie)).await;
    assert!(account.contains("token-54") && !account.contains(">ci<"), "newest first, 50 a page");
    assert!(account.contains("/account?tokens=50"), "{account}");
    let (_, _, older) = app.get("/account?tokens=50", Auth::Cookie(&s.cookie)).await;
    assert!(older.contains(">ci<") && older.contains("token-00") && !older.contains("token-54"), "{older}");
    let urls: Vec<UrlRecord> = (0..120)
        .map(|i| UrlRecord {
            loc: format!("https://ann.example/p{i:03}"),
            lastmod: None,
            changefreq: None,
            priority: None,
        })
        .collect();
    app.store.upsert_urls(s.site.id, s.sitemap.id, &urls, now()).await.unwrap();
    let (_, _, page) = app.get(&format!("/sitemaps/{}?q=/p", s.sitemap.id), Auth::Cookie(&s.cookie)).await;
    let shown = text(&page);
    assert!(shown.contains("/p000") && shown.contains("/p049") && !shown.contains("/p050"), "50 URLs a page");
    assert!(page.contains("q=%2Fp&amp;urls_after="), "the next link keeps the search: {page}");
}

#[tokio::test]
async fn the_checker_reports_failing_urls_with_their_sitemap() {
    each_backend(false, |app| async move {
        let site = TestSite::start().await;
        site.put("/ok", "fine");
        site.put("/robots.txt", "User-agent: *\nDisallow: /private\n");
        let s = seed(&app, "ann@example.com", &site.origin).await;
        let urls: Vec<UrlRecord> = ["ok", "gone", "private/x"]
            .iter()
            .map(|p| UrlRecord { loc: format!("{}/{p}", site.origin), lastmod: None, changefreq: None, priority: None })
            .collect();
        app.store.upsert_urls(s.site.id, s.sitemap.id, &urls, now()).await.unwrap();
        let end = check_site(&app.state, s.site.id).await.unwrap().unwrap();
        // The seeded a, b and missing answer 404 as well as gone; private is disallowed.
        assert_eq!(end, RunEnd::Done { checked: 6, failing: 5 });
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        let failures = app.store.list_url_failures(actor, s.site.id, None, 0, 50).await.unwrap().items;
        let gone = failures.iter().find(|f| f.loc.ends_with("/gone")).unwrap();
        assert_eq!((gone.status, gone.rule.as_str()), (Some(404), "url-status"));
        assert_eq!(gone.sitemap_url.as_deref(), Some(s.sitemap.url.as_str()));
        let private = failures.iter().find(|f| f.loc.ends_with("/private/x")).unwrap();
        assert_eq!(private.rule, "robots-disallowed");
        assert!(!failures.iter().any(|f| f.loc.ends_with("/ok")));
        // A fixed URL leaves the report on the next run.
        site.put("/gone", "back");
        let end = check_site(&app.state, s.site.id).await.unwrap().unwrap();
        assert_eq!(end, RunEnd::Done { checked: 6, failing: 4 });
        let failures = app.store.list_url_failures(actor, s.site.id, None, 0, 50).await.unwrap().items;
        assert!(!failures.iter().any(|f| f.loc.ends_with("/gone")), "{failures:?}");
        assert_eq!(failures.len(), 4);
        // Due again once the interval after the last full run passed, not before.
        let run = app.store.check_run(actor, s.site.id).await.unwrap().unwrap();
        assert_eq!((run.state.as_str(), run.checked, run.total), ("done", 6, 6));
        let ended = run.last_complete_at.unwrap();
        let due = app.store.sites_due_for_check_run(now(), ended - 60, ended - 60, 10).await.unwrap();
        assert!(!due.contains(&s.site.id), "just checked");
        let due = app.store.sites_due_for_check_run(now(), ended + 1, ended + 1, 10).await.unwrap();
        assert!(due.contains(&s.site.id), "due once the interval passed");
    })
    .await;
}
