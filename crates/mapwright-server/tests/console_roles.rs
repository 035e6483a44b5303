//! Issue 34 items 2 and 7 in the console: 403 and 404 pages keep the header of every other page
//! (Sign out included, and it works); the last owner of a site is offered no Leave and no
//! confirmation it would be refused after, while an owner among two is; the sign-up page of a
//! server that keeps its mail in an outbox points at no spam folder.

use axum::http::StatusCode;
use mapwright_store::Role;
use scraper::{Html, Selector};

use crate::console::{csrf_of, post_form, seed, text};
use crate::support::{Auth, each_backend, set_cookie};

/// The Sign out form's token in a page's header, if it has one.
fn sign_out_token(html: &str) -> Option<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(r#"header form[action="/signout"] input[name="csrf"]"#).unwrap();
    doc.select(&sel).next().and_then(|i| i.value().attr("value")).map(str::to_owned)
}

#[tokio::test]
async fn error_pages_keep_sign_out() {
    each_backend(false, |app| async move {
        let ann = seed(&app, "ann@example.com", "https://ann.example").await;
        let bob = seed(&app, "bob@example.com", "https://bob.example").await;
        // 404: no such page, and another user's sitemap.
        for uri in ["/no/such/page", &format!("/sitemaps/{}", bob.sitemap.id)] {
            let (status, _, html) = app.get(uri, Auth::Cookie(&ann.cookie)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
            assert_eq!(sign_out_token(&html).as_deref(), Some(ann.csrf.as_str()), "{uri}: {html}");
        }
        // 403: a reader's Resubmit, and a form without its token.
        let (_, link) = app
            .store
            .create_invitation(
                mapwright_store::Actor { user_id: ann.site.owner_id, is_admin: false },
                ann.site.id,
                "bob@example.com",
                Role::Reader,
                1,
                3600,
            )
            .await
            .unwrap();
        let bob_actor = mapwright_store::Actor { user_id: bob.site.owner_id, is_admin: false };
        app.store.accept_invitation(bob_actor, &link, 2).await.unwrap();
        let uri = format!("/sitemaps/{}/resubmit", ann.sitemap.id);
        let (status, _, html) = post_form(&app, &uri, &bob.cookie, &format!("csrf={}", bob.csrf), &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
        assert_eq!(sign_out_token(&html).as_deref(), Some(bob.csrf.as_str()), "{html}");
        let (status, _, html) = post_form(&app, &uri, &bob.cookie, "csrf=wrong", &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(sign_out_token(&html).as_deref(), Some(bob.csrf.as_str()), "{html}");
        // The header's Sign out works from there.
        let token = sign_out_token(&html).unwrap();
        let (status, headers, _) = post_form(&app, "/signout", &bob.cookie, &format!("csrf={token}"), &[]).await;
        assert_eq!((status, headers["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/signin"));
        assert_eq!(app.get("/", Auth::Cookie(&bob.cookie)).await.0, StatusCode::SEE_OTHER, "signed out");
        // Without a session, an error page offers signing in, no Sign out.
        let (_, _, html) = app.get("/no/such/page", Auth::None).await;
        assert!(sign_out_token(&html).is_none() && html.contains("href=\"/signin\""), "{html}");
    })
    .await;
}

#[tokio::test]
async fn the_last_owner_is_offered_no_leave() {
    each_backend(false, |app| async move {
        let ann = seed(&app, "ann@example.com", "https://ann.example").await;
        let members = format!("/sites/{}/members", ann.site.id);
        let (_, _, html) = app.get(&members, Auth::Cookie(&ann.cookie)).await;
        let leave = format!("/sites/{}/members/{}/remove", ann.site.id, ann.member_id);
        assert!(!html.contains(&leave), "no Leave for the only owner: {html}");
        assert!(text(&html).contains("You are its only owner"), "{html}");
        let (status, headers, _) = app.get(&leave, Auth::Cookie(&ann.cookie)).await;
        assert_eq!((status, headers["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, members.as_str()));
        let flash = set_cookie(&headers).0;
        let (_, _, html) = app.get(&members, Auth::Cookie(&format!("{}; {flash}", ann.cookie))).await;
        assert!(text(&html).contains("You are the only owner of this site"), "{html}");

        // With a second owner, Leave is offered and its confirmation shown.
        let carol = seed(&app, "carol@example.com", "https://carol.example").await;
        let ann_actor = mapwright_store::Actor { user_id: ann.site.owner_id, is_admin: false };
        let (_, link) = app
            .store
            .create_invitation(ann_actor, ann.site.id, "carol@example.com", Role::Owner, 1, 3600)
            .await
            .unwrap();
        let carol_actor = mapwright_store::Actor { user_id: carol.site.owner_id, is_admin: false };
        app.store.accept_invitation(carol_actor, &link, 2).await.unwrap();
        let (_, _, html) = app.get(&members, Auth::Cookie(&ann.cookie)).await;
        assert!(html.contains(&leave), "{html}");
        let (status, _, html) = app.get(&leave, Auth::Cookie(&ann.cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text(&html).contains("Leave https://ann.example?"), "{html}");
        let _ = csrf_of(&html);
    })
    .await;
}

#[tokio::test]
async fn a_server_with_an_outbox_points_at_no_spam_folder() {
    each_backend(false, |app| async move {
        let (_, headers, html) = app.get("/signup", Auth::None).await;
        let pre = set_cookie(&headers).0;
        let csrf = csrf_of(&html).unwrap();
        let body = format!("csrf={csrf}&email=dan%40example.com&password=long+enough+pw");
        let (status, _, sent) = post_form(&app, "/signup", &pre, &body, &[]).await;
        assert_eq!(status, StatusCode::OK);
        let words = text(&sent);
        assert!(words.contains("outbox folder") && !words.contains("spam folder"), "{words}");
    })
    .await;
}
