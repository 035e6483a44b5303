//! E-mail alerts (issue 23), as a member meets them: a read that makes a sitemap (or an
//! index's tree) worse mails each subscribed member once (the mail read from the test's
//! outbox), a second worsening the same day and a better read mail nothing, a reader gets them
//! once subscribed, the mail's link turns them off without signing in (and only with its own
//! token), as does a mail client's one-click POST to its `List-Unsubscribe` header (RFC 8058,
//! read off a mail the test's SMTP receiver got), and the console's site page turns them back
//! on. Both backends; jobs run one by one through `run_job` against a site on 127.0.0.1.

use std::time::Duration;

use axum::http::StatusCode;
use mapwright_server::AppState;
use mapwright_store::{Actor, Role, Site, Sitemap, Source};
use serde_json::{Value, json};

use crate::api::{call, call_json, owner_site, user};
use crate::console::{csrf_of, post_form, text};
use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{Auth, Mail, TestApp, each_backend, poll_until, unix_now};

const WORKER: &str = "alerts-worker";

/// Runs every due job (a little ahead of the clock) until none is left.
async fn drain(state: &AppState) {
    crate::support::drain_jobs(state, WORKER, 20).await;
}

/// The alert mails of the outbox so far (sign-up and invitation mail left out).
fn alerts(app: &TestApp) -> Vec<Mail> {
    app.mails().into_iter().filter(|m| m.subject.contains("got worse")).collect()
}

/// Waits for `n` alert mails (they go in the background), then a little more, and returns
/// them: a test that expects none past `n` sees a late one.
async fn settle(app: &TestApp, n: usize) -> Vec<Mail> {
    poll_until(Duration::from_secs(5), || async { (alerts(app).len() >= n).then_some(()) }).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mails = alerts(app);
    assert_eq!(mails.len(), n, "{mails:#?}");
    mails
}

/// The unsubscribe token of an alert mail.
fn token_of(mail: &Mail) -> String {
    let (_, rest) = mail.body.split_once("http://console.test/alerts/unsubscribe?token=").expect("an unsubscribe link");
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// An owner's site (see [`owner_site`]) with one sitemap, `/s.xml` listing one page, added and
/// read once: a first read is no worsening, so nothing is mailed yet.
async fn owner_sitemap(app: &TestApp, email: &str) -> (Actor, String, Site, SiteHost, Sitemap) {
    let (actor, token, site, web) = owner_site(app, email).await;
    web.put("/s.xml", &one_page(&web));
    let sitemap = app.store.add_sitemap(actor, site.id, &web.url("/s.xml"), Source::Api, unix_now()).await.unwrap();
    drain(&app.state).await;
    (actor, token, site, web, sitemap)
}

/// The sitemap of [`owner_sitemap`]: one page of the site.
fn one_page(web: &SiteHost) -> String {
    urlset(&[(&web.url("/1"), None)])
}

/// A reader of the site (invited and accepted), with an API token.
async fn reader(app: &TestApp, owner: Actor, site: &Site, email: &str) -> (Actor, String) {
    let (actor, token) = user(app, email).await;
    let (_, link) = app.store.create_invitation(owner, site.id, email, Role::Reader, 0, i64::MAX / 4).await.unwrap();
    app.store.accept_invitation(actor, &link, 1).await.unwrap();
    (actor, token)
}

async fn resubmit(app: &TestApp, token: &str, id: i64) {
    let (status, _, body) = call(app, "POST", &format!("/api/v1/sitemaps/{id}/resubmit"), Some(token), None).await;
    assert!(status.is_success(), "{status} {body}");
}

/// The sitemap `/s.xml` gets better (one page, read), then worse again (gone, read): the
/// worsening an alert is about, once more.
async fn better_then_worse(app: &TestApp, web: &SiteHost, token: &str, id: i64) {
    web.put("/s.xml", &one_page(web));
    resubmit(app, token, id).await;
    drain(&app.state).await;
    web.remove("/s.xml");
    resubmit(app, token, id).await;
    drain(&app.state).await;
}

async fn alerts_of(app: &TestApp, token: &str, site: i64) -> Value {
    call_json(app, "GET", &format!("/api/v1/sites/{site}/alerts"), token, None, StatusCode::OK, "AlertSetting").await
}

#[tokio::test]
async fn a_worse_read_mails_each_subscribed_member_once_a_day() {
    each_backend(false, |app| async move {
        let (ann, ann_token, site, web, sitemap) = owner_sitemap(&app, "ann@example.com").await;
        let (_, bob_token) = reader(&app, ann, &site, "bob@example.com").await;
        let url = &sitemap.url;
        settle(&app, 0).await;
        assert_eq!(
            alerts_of(&app, &ann_token, site.id).await,
            json!({"site_id": site.id, "enabled": true, "chosen": false})
        );
        assert_eq!(
            alerts_of(&app, &bob_token, site.id).await,
            json!({"site_id": site.id, "enabled": false, "chosen": false})
        );

        // Success -> Couldn't fetch: one mail, to the owner (the reader has not subscribed).
        web.remove("/s.xml");
        resubmit(&app, &ann_token, sitemap.id).await;
        drain(&app.state).await;
        let mails = settle(&app, 1).await;
        let mail = &mails[0];
        assert_eq!(mail.to, "ann@example.com");
        assert_eq!(mail.subject, format!("Couldn't fetch: a sitemap of {} got worse", site.origin));
        assert!(
            mail.body.contains(&format!(
                "  {url}\n  was: Success\n  now: Couldn't fetch (HTTP 404)\n  http://console.test/sitemaps/{}\n",
                sitemap.id
            )),
            "{}",
            mail.body
        );
        let ann_link = token_of(mail);

        // Better is no news; worse again the same day is not mailed again.
        better_then_worse(&app, &web, &ann_token, sitemap.id).await;
        settle(&app, 1).await;

        // The reader subscribes by the API; the next worsening reaches him (his day is his own)
        // and not Ann, whose mail of the day went.
        let on = call_json(
            &app,
            "POST",
            &format!("/api/v1/sites/{}/alerts", site.id),
            &bob_token,
            Some(json!({"enabled": true})),
            StatusCode::OK,
            "AlertSetting",
        )
        .await;
        assert_eq!(on, json!({"site_id": site.id, "enabled": true, "chosen": true}));
        better_then_worse(&app, &web, &ann_token, sitemap.id).await;
        let mails = settle(&app, 2).await;
        assert_eq!(mails[1].to, "bob@example.com");
        let bob_link = token_of(&mails[1]);
        assert_ne!(bob_link, ann_link);

        // Ann's link turns her alerts off, without a session, as often as it is sent; the
        // store then claims no mail of hers even on the next day, while Bob's stay on.
        for _ in 0..2 {
            let off = call_json(
                &app,
                "POST",
                "/api/v1/alerts/unsubscribe",
                "",
                Some(json!({"token": ann_link})),
                StatusCode::OK,
                "AlertLink",
            )
            .await;
            assert_eq!(
                off,
                json!({"site_id": site.id, "origin": site.origin, "email": "ann@example.com", "enabled": false})
            );
        }
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], false);
        let tomorrow = app.store.claim_alert_recipients(site.id, unix_now() + 2 * 86_400, 86_400).await.unwrap();
        assert_eq!(tomorrow.iter().map(|r| r.email.as_str()).collect::<Vec<_>>(), ["bob@example.com"]);
    })
    .await;
}

#[tokio::test]
async fn an_index_whose_child_fails_is_one_mail_naming_both() {
    each_backend(false, |app| async move {
        let (ann, ann_token, site, web) = owner_site(&app, "ann@example.com").await;
        let (a, b) = (web.url("/a.xml"), web.url("/b.xml"));
        web.put("/index.xml", &index(&[(&a, None), (&b, None)]));
        web.put("/a.xml", &urlset(&[(&web.url("/1"), None)]));
        web.put("/b.xml", &urlset(&[(&web.url("/2"), None)]));
        let root = web.url("/index.xml");
        let sitemap = app.store.add_sitemap(ann, site.id, &root, Source::Api, unix_now()).await.unwrap();
        drain(&app.state).await;
        settle(&app, 0).await;

        web.remove("/b.xml");
        resubmit(&app, &ann_token, sitemap.id).await;
        drain(&app.state).await;
        let mail = settle(&app, 1).await.remove(0);
        assert!(mail.body.starts_with(&format!("Sitemaps of {} got worse", site.origin)), "{}", mail.body);
        assert!(mail.body.contains(&format!("  {b}\n  was: Success\n  now: Couldn't fetch (HTTP 404)\n")), "{}", mail.body);
        assert!(
            mail.body.contains(&format!(
                "  {root} (a sitemap index: its status covers every sitemap it lists)\n  was: Success\n  now: Couldn't fetch (a sitemap it lists couldn't be fetched)\n  http://console.test/sitemaps/{}\n",
                sitemap.id
            )),
            "{}",
            mail.body
        );
    })
    .await;
}

#[tokio::test]
async fn only_the_mails_own_token_unsubscribes_and_the_console_turns_alerts_back_on() {
    each_backend(false, |app| async move {
        let (ann, ann_token, site, web, sitemap) = owner_sitemap(&app, "ann@example.com").await;
        let (_, mallory_token) = user(&app, "mallory@example.com").await;
        web.remove("/s.xml");
        resubmit(&app, &ann_token, sitemap.id).await;
        drain(&app.state).await;
        let link = token_of(&settle(&app, 1).await[0]);

        // Forged tokens: made up, one digit changed, not hex, empty; signed in as a stranger or
        // not at all. Each is 404 and Ann's alerts stay on.
        let mut changed = link.clone();
        changed.replace_range(..1, if link.starts_with('0') { "1" } else { "0" });
        for forged in ["0".repeat(64), changed, "z".repeat(64), String::new(), format!("{link}0")] {
            for auth in [Some(mallory_token.as_str()), None] {
                let body = Some(json!({"token": forged}));
                let (status, headers, text) = call(&app, "POST", "/api/v1/alerts/unsubscribe", auth, body).await;
                assert_eq!(status, StatusCode::NOT_FOUND, "{forged}: {text}");
                crate::api::assert_problem(status, &headers, &text);
            }
            let (status, _, _) = app.get(&format!("/alerts/unsubscribe?token={forged}"), Auth::None).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
            let (status, _, _) = post_form(&app, "/alerts/unsubscribe", "", &format!("token={forged}"), &[]).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
        }
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], true);

        // The mail's link: the page changes nothing until its button is pressed.
        let (status, _, html) = app.get(&format!("/alerts/unsubscribe?token={link}"), Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("to ann@example.com are on"), "{html}");
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], true, "a GET changes nothing");
        for _ in 0..2 {
            let (status, _, html) = post_form(&app, "/alerts/unsubscribe", "", &format!("token={link}"), &[]).await;
            assert_eq!(status, StatusCode::OK);
            assert!(text(&html).contains("Done: no more alert mail about this site to ann@example.com."), "{html}");
        }
        assert_eq!(
            alerts_of(&app, &ann_token, site.id).await,
            json!({"site_id": site.id, "enabled": false, "chosen": true})
        );

        // Signed in, the site page says so and turns them back on.
        let session = app.store.create_session(ann.user_id, unix_now(), 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let page = format!("/sites/{}", site.id);
        let (_, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert!(text(&html).contains("Off: you get no mail when a sitemap of this site gets worse."), "{html}");
        let csrf = csrf_of(&html).unwrap();
        let (status, _, _) =
            post_form(&app, &format!("/sites/{}/alerts", site.id), &cookie, &format!("csrf={csrf}&enabled=on"), &[])
                .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let (_, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert!(text(&html).contains("On: you get a mail when a sitemap of this site gets worse"), "{html}");
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], true);
        // A stranger's toggle of Ann's site is a 404 page.
        let mallory = app.store.create_user("mal2@example.com", "h", false, unix_now()).await.unwrap();
        let session = app.store.create_session(mallory.id, unix_now(), 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let (_, _, html) = app.get("/account", Auth::Cookie(&cookie)).await;
        let csrf = csrf_of(&html).unwrap();
        let (status, _, _) =
            post_form(&app, &format!("/sites/{}/alerts", site.id), &cookie, &format!("csrf={csrf}"), &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], true);
    })
    .await;
}

#[tokio::test]
async fn the_list_unsubscribe_header_takes_a_one_click_post_without_signing_in() {
    each_backend(false, |app| async move {
        let mut app = app;
        let (_, ann_token, site, web, sitemap) = owner_sitemap(&app, "ann@example.com").await;
        // The worsening's mail goes through SMTP, as a real server sends it.
        let smtp = crate::smtp::SmtpReceiver::start().await;
        let from = "mapwright <mapwright@localhost>";
        let mailer = mapwright_server::mail::Mailer::smtp(&smtp.url, from, "http://console.test").unwrap();
        app.state = app.state.clone().with_mail(mailer);
        web.remove("/s.xml");
        resubmit(&app, &ann_token, sitemap.id).await;
        drain(&app.state).await;
        let mail = smtp.wait_for(1).await.pop().unwrap();
        assert!(mail.header("Subject").is_some_and(|s| s.contains("got worse")), "{mail:?}");

        // The header holds the body's link, and says it takes the one-click POST.
        let header = mail.header("List-Unsubscribe").unwrap_or_else(|| panic!("no List-Unsubscribe in {mail:?}"));
        let link = header.strip_prefix('<').and_then(|h| h.strip_suffix('>')).expect("<URL>");
        assert!(link.starts_with("http://console.test/alerts/unsubscribe?token="), "{link}");
        assert!(mail.body.contains(&format!("open {link}\n")), "the body's link differs: {}", mail.body);
        assert_eq!(mail.header("List-Unsubscribe-Post"), Some("List-Unsubscribe=One-Click"));
        let uri = link.strip_prefix("http://console.test").unwrap();

        // The link POSTed without the one-click body is the page's form without a token: 404.
        let (status, _, _) = post_form(&app, uri, "", "", &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(alerts_of(&app, &ann_token, site.id).await["enabled"], true);

        // As a mail provider's server sends it: no cookie, urlencoded; then as its web client on
        // another site would, in multipart/form-data (the RFC's first choice). Each turns them off.
        let boundary = "b0undary";
        let multipart = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--{boundary}--\r\n"
        );
        let multipart_type = format!("multipart/form-data; boundary={boundary}");
        let urlencoded = ("application/x-www-form-urlencoded", None);
        for (body, (content_type, fetch_site)) in [
            ("List-Unsubscribe=One-Click".to_owned(), urlencoded),
            (multipart, (multipart_type.as_str(), Some("cross-site"))),
        ] {
            let token = link.split_once("token=").unwrap().1;
            let on = json!({"token": token, "enabled": true});
            let (status, _, answer) = call(&app, "POST", "/api/v1/alerts/unsubscribe", None, Some(on)).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            let mut request = axum::http::Request::post(uri).header("content-type", content_type);
            if let Some(fetch_site) = fetch_site {
                request = request.header("sec-fetch-site", fetch_site);
            }
            let (status, _, html) = app.send(request.body(axum::body::Body::from(body)).unwrap()).await;
            assert_eq!(status, StatusCode::OK, "{html}");
            assert!(text(&html).contains("Done: no more alert mail about this site to ann@example.com."), "{html}");
            assert_eq!(
                alerts_of(&app, &ann_token, site.id).await,
                json!({"site_id": site.id, "enabled": false, "chosen": true})
            );
        }
    })
    .await;
}
