//! Domain properties in the console: the list and its add form, the property's page with the
//! TXT record to publish, "Verify now" with the reason of a refusal and the news of a success
//! (the site under the name verified with it, and a sitemap of a new origin under it added at
//! once from "Add a sitemap"), a stranger's property a 404 page, and deleting after a confirm page.

use axum::http::{HeaderMap, StatusCode};

use crate::console::{csrf_of, post_form, seed, text};
use crate::dns::DnsServer;
use crate::support::{Auth, TestApp, each_backend};

fn location(headers: &HeaderMap) -> String {
    headers.get("location").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

/// The page a redirect leads to, with its one-time message (the flash cookie sent back).
async fn follow(app: &TestApp, cookie: &str, headers: &HeaderMap) -> String {
    let flash = crate::support::set_cookie(headers).0;
    let (status, _, html) = app.get(&location(headers), Auth::Cookie(&format!("{cookie}; {flash}"))).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    text(&html)
}

#[tokio::test]
async fn an_owner_adds_verifies_and_deletes_a_domain_property() {
    let dns = DnsServer::start().await;
    each_backend(false, |mut app| {
        app.state.dns = dns.config();
        app.state = crate::support::unpaced(app.state.clone());
        let dns = &dns;
        async move {
            let ann = seed(&app, "ann@example.com", "https://www.garden.test").await;
            let (status, _, html) = app.get("/domains", Auth::Cookie(&ann.cookie)).await;
            assert_eq!(status, StatusCode::OK);
            assert!(text(&html).contains("No domain property yet."), "{html}");
            let csrf = csrf_of(&html).unwrap();

            let (status, headers, _) =
                post_form(&app, "/domains", &ann.cookie, &format!("csrf={csrf}&domain=https%3A%2F%2Fgarden.test"), &[])
                    .await;
            assert_eq!((status, location(&headers).as_str()), (StatusCode::SEE_OTHER, "/domains"));
            assert!(follow(&app, &ann.cookie, &headers).await.contains("Not added: the domain is a name only"));

            let (status, headers, _) =
                post_form(&app, "/domains", &ann.cookie, &format!("csrf={csrf}&domain=Garden.test"), &[]).await;
            assert_eq!(status, StatusCode::SEE_OTHER);
            let page = location(&headers);
            assert!(page.starts_with("/domains/"), "{page}");
            let actor = mapwright_store::Actor { user_id: ann.site.owner_id, is_admin: false };
            let property = app.store.list_domains(actor).await.unwrap().pop().unwrap();
            let value = format!("mapwright-site-verification={}", property.verification_token);
            let shown = follow(&app, &ann.cookie, &headers).await;
            assert!(shown.contains("Added garden.test."), "{shown}");
            assert!(shown.contains(&value) && shown.contains("Not verified"), "{shown}");
            assert!(shown.contains("https://www.garden.test"), "the seeded site is under it: {shown}");

            // Not published yet: the reason; published: verified, with the site.
            dns.remove("garden.test");
            let (_, headers, _) =
                post_form(&app, &format!("{page}/verify"), &ann.cookie, &format!("csrf={csrf}"), &[]).await;
            assert_eq!(location(&headers), page);
            assert!(
                follow(&app, &ann.cookie, &headers)
                    .await
                    .contains("Not verified: garden.test does not exist in DNS (NXDOMAIN).")
            );
            dns.publish("garden.test", &[&value]);
            let (_, headers, _) =
                post_form(&app, &format!("{page}/verify"), &ann.cookie, &format!("csrf={csrf}"), &[]).await;
            let shown = follow(&app, &ann.cookie, &headers).await;
            assert!(shown.contains(&format!("Verified: garden.test has the TXT record {value}.")), "{shown}");

            // "Add a sitemap" of a new origin under it: the site is made verified and the sitemap added.
            let body = format!("csrf={csrf}&url=https%3A%2F%2Fshop.garden.test%2Fsitemap.xml&site=");
            let (status, headers, html) = post_form(&app, "/sitemaps/add", &ann.cookie, &body, &[]).await;
            assert_eq!((status, location(&headers).as_str()), (StatusCode::SEE_OTHER, "/"), "{html}");
            let said = follow(&app, &ann.cookie, &headers).await;
            assert!(said.contains("Added https://shop.garden.test/sitemap.xml"), "{said}");
            assert!(!said.contains("already submitted"), "{said}");
            let sites = app.store.list_sites(actor).await.unwrap();
            let shop = sites.iter().find(|s| s.origin == "https://shop.garden.test").unwrap();
            assert!(shop.verified_at.is_some());
            assert_eq!(app.store.list_sitemaps(actor, shop.id).await.unwrap().len(), 1);

            // A stranger gets a 404 page.
            let bob = seed(&app, "bob@example.com", "https://bob.test").await;
            let (status, _, _) = app.get(&page, Auth::Cookie(&bob.cookie)).await;
            assert_eq!(status, StatusCode::NOT_FOUND);

            // Delete after the confirm page.
            let (status, _, html) = app.get(&format!("{page}/delete"), Auth::Cookie(&ann.cookie)).await;
            assert_eq!(status, StatusCode::OK);
            assert!(text(&html).contains("Delete the domain property garden.test?"));
            let (_, headers, _) =
                post_form(&app, &format!("{page}/delete"), &ann.cookie, &format!("csrf={csrf}"), &[]).await;
            assert!(follow(&app, &ann.cookie, &headers).await.contains("Deleted the domain property garden.test."));
            let shop = app.store.site(actor, shop.id).await.unwrap();
            assert!(shop.verified_at.is_none(), "it stood on the property alone");
        }
    })
    .await;
}
