//! URLs as written (issue 22 item 3): a sitemap fetched by the service stores each URL as the
//! file wrote it (entities decoded, white space trimmed), and the API and the console show it
//! so; two spellings of one URL in one file stay one row. On both backends, against a site on
//! 127.0.0.1, the job run through `run_job`.

use axum::http::StatusCode;
use mapwright_server::jobs::reads::run_job;
use mapwright_store::{Source, UrlQuery};

use crate::api::{call_json, user};
use crate::console::text;
use crate::sitehost::SiteHost;
use crate::support::{Auth, each_backend};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn stored_urls_are_shown_as_the_sitemap_wrote_them() {
    each_backend(false, |app| async move {
        let (actor, token) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let site = app.store.create_site(actor, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let site = app.store.site(actor, site.id).await.unwrap();
        let host = web.origin.strip_prefix("http://").unwrap();
        // (as written in the file, as XML text): an upper-case scheme, a bare origin, escapes in
        // lower case, a character left unescaped, an entity; the last two spell URLs listed before.
        let written = [
            format!("HTTP://{host}/Page/One"),
            format!("http://{host}"),
            format!("http://{host}/caf%c3%a9?q=%7e"),
            format!("http://{host}/a b"),
            format!("http://{host}/x?a=1&b=2"),
        ];
        let again = [format!("http://{host}/Page/One"), format!("http://{host}/")];
        let body: String = written
            .iter()
            .chain(&again)
            .map(|u| format!("<url><loc>\n  {}  \n</loc></url>", u.replace('&', "&amp;")))
            .collect();
        web.put(
            "/sitemap.xml",
            &format!(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>"#),
        );
        let sitemap = web.url("/sitemap.xml");
        let added = app.store.add_sitemap(actor, site.id, &sitemap, Source::Api, now()).await.unwrap();
        let jobs = app.store.lease_due_sitemaps("w", now() + 5, 10, 60).await.unwrap();
        assert_eq!(jobs.len(), 1);
        run_job(&app.state, "w", &jobs[0]).await.unwrap();

        let mut stored: Vec<String> = app
            .store
            .list_urls(actor, site.id, UrlQuery { limit: 100, ..UrlQuery::default() })
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|u| u.loc)
            .collect();
        stored.sort();
        let mut want = written.to_vec();
        want.sort();
        assert_eq!(stored, want, "as written, one row per URL (the first spelling)");

        let page = call_json(
            &app,
            "GET",
            &format!("/api/v1/sites/{}/urls?limit=100", site.id),
            &token,
            None,
            StatusCode::OK,
            "UrlPage",
        )
        .await;
        let mut api: Vec<&str> = page["items"].as_array().unwrap().iter().map(|u| u["loc"].as_str().unwrap()).collect();
        api.sort();
        assert_eq!(api, want);

        let cookie =
            format!("mapwright_session={}", app.store.create_session(actor.user_id, now(), 3600).await.unwrap());
        let (status, _, html) = app.get(&format!("/sitemaps/{}", added.id), Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let shown = text(&html);
        for u in &written {
            assert!(shown.contains(u.as_str()), "{u} in the console: {shown}");
        }
        assert!(!shown.contains(&format!("http://{host}/page/One")) && !shown.contains("caf%C3%A9"), "{shown}");
    })
    .await;
}
