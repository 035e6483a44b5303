//! Sorting and filtering the sitemaps of a site (`status`, `type`, `errors`, `sort`, `order`):
//! the API's list route and the console's table, which ask the store the same question.

use axum::http::StatusCode;
use mapwright_store::{Actor, DownloadRecord, FetchSummary, FindingRecord, Site, Source};
use scraper::{Html, Selector};

use super::{assert_problem, call, call_json, user, verified_site};
use crate::support::{Auth, TestApp, each_backend};

/// Adds `name` to the site and, unless `status` is `None`, stores a read of it: its status,
/// `errors` error findings, the format recognised, the time.
async fn sitemap(
    app: &TestApp,
    actor: Actor,
    site: &Site,
    name: &str,
    read: Option<(&str, usize, Option<&str>, i64)>,
) -> i64 {
    let url = format!("{}/{name}", site.origin);
    let sitemap = app.store.add_sitemap(actor, site.id, &url, Source::Api, 0).await.unwrap();
    let Some((status, errors, format, at)) = read else { return sitemap.id };
    let worker = format!("w{}", sitemap.id);
    let leased = app.store.lease_due_sitemaps(&worker, 10, 100, 60).await.unwrap();
    for other in leased.iter().filter(|l| l.id != sitemap.id) {
        app.store.release(&worker, other.id).await.unwrap();
    }
    let summary = FetchSummary {
        kinds: format.map(|_| "web".to_owned()),
        url_count: Some(1),
        fetch_interval: 86_400,
        failures: 0,
        format: format.map(str::to_owned),
        contents: None,
    };
    app.store.record_fetch_summary(&worker, sitemap.id, &summary).await.unwrap();
    let finding = FindingRecord {
        rule: "loc-missing".into(),
        severity: "error".into(),
        line: Some(1),
        col: Some(1),
        loc: None,
        message: "no loc".into(),
    };
    let download = DownloadRecord {
        downloaded_at: at,
        status: status.into(),
        http_status: Some(if status == "failed" { 404 } else { 200 }),
        url_count: 1,
        findings: vec![finding; errors],
        ..Default::default()
    };
    app.store.complete(&worker, sitemap.id, &download, 4_000_000_000).await.unwrap();
    sitemap.id
}

#[tokio::test]
async fn the_list_route_and_the_table_sort_and_filter_alike() {
    each_backend(false, |app| async move {
        let (ann, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let a = sitemap(&app, ann, &site, "a.xml", Some(("ok", 0, Some("urlset"), 100))).await;
        let b = sitemap(&app, ann, &site, "b.xml", Some(("errors", 2, Some("rss"), 300))).await;
        let c = sitemap(&app, ann, &site, "c.xml", Some(("failed", 0, None, 200))).await;
        let d = sitemap(&app, ann, &site, "d.xml", None).await;
        let e = sitemap(&app, ann, &site, "e.xml", None).await;
        app.store.remove_sitemap(ann, e, 5).await.unwrap();

        let ids = |value: serde_json::Value| -> Vec<i64> {
            value.as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect()
        };
        let base = format!("/api/v1/sites/{}/sitemaps", site.id);
        for (query, expected) in [
            ("", vec![a, b, c, d, e]),
            ("?status=success", vec![a]),
            ("?status=errors", vec![b]),
            ("?status=failed", vec![c]),
            ("?status=pending", vec![d]),
            ("?status=removed", vec![e]),
            ("?type=rss", vec![b]),
            ("?type=sitemap", vec![a]),
            ("?errors=true", vec![b]),
            ("?errors=false&sort=added&order=desc", vec![e, d, c, b, a]),
            ("?sort=status&order=desc", vec![c, b, d, a, e]),
            ("?sort=status", vec![e, a, d, b, c]),
            ("?sort=errors&order=desc&status=errors", vec![b]),
            ("?sort=url&order=desc", vec![e, d, c, b, a]),
        ] {
            let got =
                call_json(&app, "GET", &format!("{base}{query}"), &token, None, StatusCode::OK, "[Sitemap]").await;
            assert_eq!(ids(got), expected, "{query}");
        }
        let by_read = ids(call_json(
            &app,
            "GET",
            &format!("{base}?sort=last_read&order=desc"),
            &token,
            None,
            StatusCode::OK,
            "[Sitemap]",
        )
        .await);
        assert_eq!(by_read[..3], [b, c, a], "the last read first; never read last");
        for bad in
            ["?status=bogus", "?type=xml", "?sort=id", "?order=up", "?errors=yes", "?status=errors&status=failed"]
        {
            let (status, headers, text) = call(&app, "GET", &format!("{base}{bad}"), Some(&token), None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {text}");
            assert_problem(status, &headers, &text);
        }

        // The console's table: the same filters through its GET form's parameters.
        let user = app.store.user_credentials("ann@example.com").await.unwrap().unwrap().0;
        let session = app.store.create_session(user.id, 0, i64::MAX / 4).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let rows = |html: &str| -> Vec<String> {
            let doc = Html::parse_document(html);
            let sel =
                Selector::parse("table.sitemaps > tbody > tr > td[data-label=\"Sitemap\"] > a:first-child").unwrap();
            doc.select(&sel).map(|a| a.text().collect::<String>().rsplit('/').next().unwrap().to_owned()).collect()
        };
        let (status, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(rows(&html), ["a.xml", "b.xml", "c.xml", "d.xml", "e.xml"]);
        let form = Selector::parse(r#"form#table-filters[method="get"] select[name="status"]"#).unwrap();
        assert_eq!(Html::parse_document(&html).select(&form).count(), 1, "the filter form");
        let (_, _, html) = app.get("/?status=errors", Auth::Cookie(&cookie)).await;
        assert_eq!(rows(&html), ["b.xml"]);
        let selected = Selector::parse(r#"select[name="status"] option[selected]"#).unwrap();
        let doc = Html::parse_document(&html);
        assert_eq!(
            doc.select(&selected).next().unwrap().value().attr("value"),
            Some("errors"),
            "the form shows the choice"
        );
        let (_, _, html) = app.get("/?sort=status&order=desc&type=&errors=", Auth::Cookie(&cookie)).await;
        assert_eq!(rows(&html), ["c.xml", "b.xml", "d.xml", "a.xml", "e.xml"]);
        let (_, _, html) = app.get("/?type=atom", Auth::Cookie(&cookie)).await;
        assert!(
            Html::parse_document(&html).select(&Selector::parse("#none-match").unwrap()).next().is_some(),
            "{html}"
        );
        // A value a user typed into the address is left out, not an error page.
        let (status, _, html) = app.get("/?status=bogus&sort=nonsense", Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(rows(&html).len(), 5);
    })
    .await;
}

/// A site's sitemaps come a page at a time (at most 1,000): `limit` rows from `offset`, and a
/// `Link` header with the next page's address while more follow, the filters and order kept.
#[tokio::test]
async fn a_sites_sitemaps_are_paged() {
    each_backend(false, |app| async move {
        let (ann, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let mut all = Vec::new();
        for n in 0..5 {
            all.push(sitemap(&app, ann, &site, &format!("s{n}.xml"), None).await);
        }
        let ids = |text: &str| -> Vec<i64> {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            value.as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect()
        };
        let mut uri = format!("/api/v1/sites/{}/sitemaps?order=desc&limit=2", site.id);
        let (mut seen, mut pages) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            let (status, headers, text) = call(&app, "GET", &uri, Some(&token), None).await;
            assert_eq!(status, StatusCode::OK, "{text}");
            pages.push(ids(&text).len());
            seen.extend(ids(&text));
            let Some(link) = headers.get("link") else { break };
            let link = link.to_str().unwrap();
            assert!(link.ends_with("rel=\"next\"") && link.contains("order=desc"), "{link}");
            uri = link[1..link.find('>').unwrap()].to_owned();
        }
        all.reverse();
        assert_eq!(pages, [2, 2, 1], "pages of the limit asked");
        assert_eq!(seen, all, "every sitemap once, in the order asked");
        let (status, _, text) =
            call(&app, "GET", &format!("/api/v1/sites/{}/sitemaps?limit=1001", site.id), Some(&token), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    })
    .await;
}
