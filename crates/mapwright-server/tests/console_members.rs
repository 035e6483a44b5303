//! Several users per site in the console: the members page, the invite form (the link read
//! from the outbox), the invitation's page and "Accept", a reader's site page without the
//! owners' buttons or the verification token, and 403 pages for their actions, removing a
//! member after a confirmation, and the last owner kept.

use axum::http::StatusCode;
use scraper::{Html, Selector};

use crate::console::{csrf_of, post_form, seed, text};
use crate::support::{Auth, TestApp, each_backend};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A signed-in user without sites: (cookie, csrf of a page's form).
async fn signed_in(app: &TestApp, email: &str) -> (String, String) {
    let user = app.store.create_user(email, "h", false, now()).await.unwrap();
    let session = app.store.create_session(user.id, now(), 3600).await.unwrap();
    let cookie = format!("mapwright_session={session}");
    let (_, _, html) = app.get("/account", Auth::Cookie(&cookie)).await;
    (cookie.clone(), csrf_of(&html).expect("the account page has a form"))
}

fn count(html: &str, css: &str) -> usize {
    Html::parse_document(html).select(&Selector::parse(css).unwrap()).count()
}

fn location(headers: &axum::http::HeaderMap) -> String {
    headers.get("location").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

#[tokio::test]
async fn an_owner_invites_by_the_form_and_the_reader_accepts_by_the_link() {
    each_backend(false, |app| async move {
        let ann = seed(&app, "ann@example.com", "https://ann.example").await;
        let (bob, bob_csrf) = signed_in(&app, "bob@example.com").await;
        let (eve, _) = signed_in(&app, "eve@example.com").await;
        let site = ann.site.id;
        let members = format!("/sites/{site}/members");

        let (status, _, html) = app.get(&members, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("You are an owner of this site."), "{html}");
        assert_eq!(count(&html, "#members tbody tr"), 1);
        assert_eq!(count(&html, r#"form[action$="/invitations"] input[type="email"]"#), 1, "the invite form");
        let (_, _, page) = app.get(&format!("/sites/{site}"), Auth::Cookie(&ann.cookie)).await;
        assert_eq!(count(&page, "#members-link"), 1);

        // Invite Bob; the page says so and the mail holds the link.
        let before = app.mails().len();
        let body = format!("csrf={}&email=bob%40example.com&role=reader", ann.csrf);
        let (status, headers, _) =
            post_form(&app, &format!("/sites/{site}/invitations"), &ann.cookie, &body, &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, members.clone()));
        let mail = app.wait_for_mails(before + 1).await.pop().unwrap();
        assert_eq!(mail.to, "bob@example.com");
        let (_, rest) = mail.body.split_once("http://console.test/invitations/accept?token=").unwrap();
        let token: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        let link = format!("/invitations/accept?token={token}");

        // The link's page: a visitor is asked to sign in, Eve is told she is the wrong user,
        // Bob gets the button.
        let (status, _, html) = app.get(&link, Auth::None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            text(&html)
                .contains("ann@example.com invites bob@example.com to the site https://ann.example as a reader."),
            "{html}"
        );
        assert_eq!(count(&html, "form"), 0);
        let (_, _, html) = app.get(&link, Auth::Cookie(&eve)).await;
        assert!(text(&html).contains("You are signed in as eve@example.com"), "{html}");
        assert_eq!(count(&html, r#"form[action="/invitations/accept"]"#), 0);
        let (_, _, html) = app.get(&link, Auth::Cookie(&bob)).await;
        assert_eq!(count(&html, r#"form[action="/invitations/accept"] button"#), 1, "{html}");
        let body = format!("csrf={bob_csrf}&token={token}");
        let (status, headers, _) = post_form(&app, "/invitations/accept", &bob, &body, &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, format!("/sites/{site}")));
        let (status, _, html) = app.get(&link, Auth::Cookie(&bob)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "used once: {html}");
        assert!(text(&html).contains("Invitation not valid"));

        // Bob sees the site and its sitemap, without the owners' buttons.
        let (status, _, html) = app.get(&format!("/sites/{site}"), Auth::Cookie(&bob)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("you are a reader of this site"), "{html}");
        for button in ["Verify now", "Check now", "Delete site"] {
            assert!(!text(&html).contains(button), "{button} shown to a reader");
        }
        // The verified state, never the token nor the file or meta tag that carry it; the
        // owner keeps them, verified or not.
        let token = ann.site.verification_token.as_str();
        assert!(text(&html).contains("Verified since"), "{html}");
        assert!(!html.contains(token), "the token shown to a reader: {html}");
        assert_eq!(count(&html, "#proof, #domain-hint"), 0, "{html}");
        assert!(page.contains(token) && count(&page, "#proof") == 1, "the owner's page lost the token: {page}");
        app.store.record_verification(site, false, now()).await.unwrap();
        let (_, _, html) = app.get(&format!("/sites/{site}"), Auth::Cookie(&bob)).await;
        assert!(text(&html).contains("Not verified"), "{html}");
        assert!(!html.contains(token) && !html.contains("mapwright-site-verification"), "{html}");
        let (_, _, page) = app.get(&format!("/sites/{site}"), Auth::Cookie(&ann.cookie)).await;
        assert!(page.contains(&format!("mapwright-{token}.html")), "the owner's file instructions: {page}");
        app.store.record_verification(site, true, now()).await.unwrap();
        let (_, _, table) = app.get("/", Auth::Cookie(&bob)).await;
        assert!(table.contains("https://ann.example/sitemap.xml"), "{table}");
        // Nor in the table: no Resubmit or Remove on a reader's rows, which say why.
        assert_eq!(count(&table, r#"form[action$="/resubmit"]"#), 0, "Resubmit offered to a reader: {table}");
        assert_eq!(count(&table, r#"a[href$="/remove"]"#), 0, "Remove offered to a reader: {table}");
        assert!(text(&table).contains("Read only"), "{table}");
        let (_, _, own_table) = app.get("/", Auth::Cookie(&ann.cookie)).await;
        assert_eq!(count(&own_table, r#"form[action$="/resubmit"]"#), 1, "the owner keeps her Resubmit: {own_table}");
        let (status, _, _) = app.get(&format!("/sitemaps/{}", ann.sitemap.id), Auth::Cookie(&bob)).await;
        assert_eq!(status, StatusCode::OK);
        let (_, _, html) = app.get(&members, Auth::Cookie(&bob)).await;
        assert!(text(&html).contains("You are a reader of this site."));
        assert_eq!(count(&html, r#"form[action$="/invitations"]"#), 0, "no invite form for a reader");
        assert_eq!(count(&html, "#members tbody tr"), 2);

        // Every owner's action is a 403 page for him, and nothing changes.
        let sm = ann.sitemap.id;
        for uri in [format!("/sites/{site}/delete"), format!("/sitemaps/{sm}/remove")] {
            let (status, _, html) = app.get(&uri, Auth::Cookie(&bob)).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "GET {uri}: {html}");
            assert!(text(&html).contains("only its owners may change it"), "{html}");
        }
        for uri in [
            format!("/sites/{site}/verify"),
            format!("/sites/{site}/check"),
            format!("/sites/{site}/delete"),
            format!("/sitemaps/{sm}/resubmit"),
            format!("/sitemaps/{sm}/remove"),
            format!("/sites/{site}/invitations/{}/withdraw", ann.invitation_id),
            format!("/sites/{site}/members/{}/remove", ann.member_id),
        ] {
            let (status, _, html) = post_form(&app, &uri, &bob, &format!("csrf={bob_csrf}"), &[]).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "POST {uri}: {html}");
        }
        let body = format!("csrf={bob_csrf}&email=eve%40example.com");
        let (status, _, _) = post_form(&app, &format!("/sites/{site}/invitations"), &bob, &body, &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let body = format!("csrf={bob_csrf}&url=https%3A%2F%2Fann.example%2Fnew.xml&site={site}");
        let (status, _, _) = post_form(&app, "/sitemaps/add", &bob, &body, &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let sitemaps =
            app.store.list_sitemaps(mapwright_store::Actor { user_id: 1, is_admin: true }, site).await.unwrap();
        assert_eq!(sitemaps.len(), 1);
        assert!(sitemaps[0].removed_at.is_none());

        // The last owner stays; Ann removes Bob after a confirmation.
        let own = format!("/sites/{site}/members/{}/remove", ann.member_id);
        let (status, headers, _) = post_form(&app, &own, &ann.cookie, &format!("csrf={}", ann.csrf), &[]).await;
        assert_eq!((status, location(&headers)), (StatusCode::SEE_OTHER, members.clone()));
        let (_, _, html) = app.get(&members, Auth::Cookie(&format!("{}; {}", ann.cookie, flash(&headers)))).await;
        assert!(text(&html).contains("the last owner of a site cannot be removed"), "{html}");
        let bobs =
            app.store.list_members(mapwright_store::Actor { user_id: 1, is_admin: true }, site).await.unwrap()[1].id;
        let remove = format!("/sites/{site}/members/{bobs}/remove");
        let (status, _, html) = app.get(&remove, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("Remove bob@example.com from https://ann.example?"), "{html}");
        let (status, _, _) = post_form(&app, &remove, &ann.cookie, &format!("csrf={}", ann.csrf), &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(app.get(&format!("/sites/{site}"), Auth::Cookie(&bob)).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

/// The flash cookie a redirect set (`name=value`).
fn flash(headers: &axum::http::HeaderMap) -> String {
    let cookie = headers.get("set-cookie").unwrap().to_str().unwrap();
    cookie.split(';').next().unwrap().to_owned()
}
