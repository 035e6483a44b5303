//! Domain properties through the API, against a DNS server the test runs on 127.0.0.1: the
//! published token verifies and the property covers every origin under the name (a site added
//! later is verified as it is added, and takes sitemaps at once); a wrong token, no TXT record,
//! a name that does not exist and a server that does not answer are refused with the reason;
//! a lost record unverifies the property and the sites that stood on it; a stranger's claim of
//! the same name covers none of another user's sites.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{assert_problem, call, call_json, user};
use crate::dns::DnsServer;
use crate::support::{TestApp, each_backend};

/// The app asking `dns` for TXT records.
fn with_dns(mut app: TestApp, dns: &DnsServer) -> TestApp {
    app.state.dns = dns.config();
    app
}

/// `each_backend` with the app asking `dns` for TXT records.
async fn each_backend_with_dns<F, Fut>(dns: &DnsServer, body: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    each_backend(false, |app| body(with_dns(app, dns))).await;
}

async fn add_domain(app: &TestApp, token: &str, name: &str) -> Value {
    let uri = "/api/v1/domains";
    call_json(app, "POST", uri, token, Some(json!({ "domain": name })), StatusCode::CREATED, "DomainProperty").await
}

async fn verify(app: &TestApp, token: &str, id: &Value) -> Value {
    let uri = format!("/api/v1/domains/{id}/verify");
    call_json(app, "POST", &uri, token, None, StatusCode::OK, "DomainVerifyResult").await
}

async fn add_site(app: &TestApp, token: &str, origin: &str) -> Value {
    call_json(app, "POST", "/api/v1/sites", token, Some(json!({ "origin": origin })), StatusCode::CREATED, "Site").await
}

async fn site(app: &TestApp, token: &str, id: &Value) -> Value {
    call_json(app, "GET", &format!("/api/v1/sites/{id}"), token, None, StatusCode::OK, "Site").await
}

#[tokio::test]
async fn the_published_token_verifies_and_the_property_covers_every_origin_under_it() {
    let dns = &DnsServer::start().await;
    each_backend_with_dns(dns, |app| async move {
        let (_, ann) = user(&app, "ann@example.com").await;
        let www = add_site(&app, &ann, "https://www.shop.test").await;
        let elsewhere = add_site(&app, &ann, "https://notshop.test").await;
        assert!(www["verified_at"].is_null());

        let property = add_domain(&app, &ann, " Shop.TEST. ").await;
        assert_eq!(property["domain"], "shop.test");
        assert_eq!(property["record"]["name"], "shop.test");
        let value = property["record"]["value"].as_str().unwrap().to_owned();
        assert_eq!(value, format!("mapwright-site-verification={}", property["verification_token"].as_str().unwrap()));
        assert_eq!(
            property["sites"],
            json!([{ "id": www["id"], "origin": "https://www.shop.test", "verified": false }])
        );

        dns.publish("shop.test", &["v=spf1 -all", &value]);
        let result = verify(&app, &ann, &property["id"]).await;
        assert_eq!(result["verification"]["verified"], true, "{result}");
        assert_eq!(result["verification"]["detail"], format!("shop.test has the TXT record {value}"));
        assert!(result["domain"]["verified_at"].is_i64());
        assert_eq!(result["domain"]["sites"][0]["verified"], true, "the site under it is verified with it");
        assert!(site(&app, &ann, &www["id"]).await["verified_at"].is_i64());
        assert!(
            site(&app, &ann, &elsewhere["id"]).await["verified_at"].is_null(),
            "notshop.test is not under shop.test"
        );

        // The site's own "Verify now" names the property as its proof.
        let uri = format!("/api/v1/sites/{}/verify", www["id"]);
        let again = call_json(&app, "POST", &uri, &ann, None, StatusCode::OK, "VerifyResult").await;
        assert_eq!(again["verification"]["method"], "domain", "{again}");

        // Any scheme, port and depth under the name: verified as it is added, sitemaps at once.
        let blog = add_site(&app, &ann, "http://deep.blog.shop.test:8080").await;
        assert!(blog["verified_at"].is_i64(), "{blog}");
        let uri = format!("/api/v1/sites/{}/sitemaps", blog["id"]);
        let body = json!({ "url": "http://deep.blog.shop.test:8080/sitemap.xml" });
        call_json(&app, "POST", &uri, &ann, Some(body), StatusCode::CREATED, "Sitemap").await;
        let listed = call_json(&app, "GET", "/api/v1/domains", &ann, None, StatusCode::OK, "[DomainProperty]").await;
        assert_eq!(listed[0]["sites"].as_array().unwrap().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_wrong_token_no_record_and_nxdomain_are_refused_with_the_reason() {
    let dns = DnsServer::start().await;
    let mut app = with_dns(TestApp::new(false).await, &dns);
    app.state = crate::support::unpaced(app.state.clone());
    let (_, ann) = user(&app, "ann@example.com").await;
    let wrong = add_domain(&app, &ann, "wrong.test").await;
    let bare = add_domain(&app, &ann, "bare.test").await;
    let missing = add_domain(&app, &ann, "missing.test").await;
    dns.publish("wrong.test", &["mapwright-site-verification=0123456789abcdef"]);
    dns.publish("bare.test", &[]);

    let detail = |v: &Value| v["verification"]["detail"].as_str().unwrap().to_owned();
    let result = verify(&app, &ann, &wrong["id"]).await;
    assert_eq!(result["verification"]["verified"], false);
    assert_eq!(
        detail(&result),
        format!(
            "wrong.test has a mapwright-site-verification= record with another token (0123456789abcdef): this property's is {}",
            wrong["verification_token"].as_str().unwrap()
        )
    );
    let result = verify(&app, &ann, &bare["id"]).await;
    assert_eq!(result["verification"]["verified"], false);
    assert_eq!(
        detail(&result),
        format!("bare.test has no TXT record: publish {}", bare["record"]["value"].as_str().unwrap())
    );
    let result = verify(&app, &ann, &missing["id"]).await;
    assert_eq!(detail(&result), "missing.test does not exist in DNS (NXDOMAIN)");
    assert!(result["domain"]["verified_at"].is_null());
    assert!(result["domain"]["last_checked_at"].is_i64());

    // A server that does not answer: the wait is bounded and says so.
    dns.set_silent(true);
    let started = std::time::Instant::now();
    let result = verify(&app, &ann, &missing["id"]).await;
    assert_eq!(detail(&result), "no DNS server answered for missing.test in time; try again later");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(dns.queries() >= 4);
}

#[tokio::test]
async fn a_lost_record_unverifies_the_property_and_the_sites_that_stood_on_it() {
    let dns = DnsServer::start().await;
    let mut app = with_dns(TestApp::new(false).await, &dns);
    app.state = crate::support::unpaced(app.state.clone());
    let (_, ann) = user(&app, "ann@example.com").await;
    let property = add_domain(&app, &ann, "gone.test").await;
    dns.publish("gone.test", &[property["record"]["value"].as_str().unwrap()]);
    assert_eq!(verify(&app, &ann, &property["id"]).await["verification"]["verified"], true);
    let covered = add_site(&app, &ann, "https://gone.test").await;
    assert!(covered["verified_at"].is_i64());

    // The periodic re-check finds the record gone: the property and its site lose verification.
    dns.remove("gone.test");
    let checked = mapwright_server::jobs::recheck::domains::recheck_once(&app.state, -60).await.unwrap();
    assert_eq!(checked, 1);
    let uri = format!("/api/v1/domains/{}", property["id"]);
    let now = call_json(&app, "GET", &uri, &ann, None, StatusCode::OK, "DomainProperty").await;
    assert!(now["verified_at"].is_null(), "{now}");
    assert!(site(&app, &ann, &covered["id"]).await["verified_at"].is_null());

    // Published again and verified, then deleted: the site goes with it once more.
    dns.publish("gone.test", &[property["record"]["value"].as_str().unwrap()]);
    verify(&app, &ann, &property["id"]).await;
    assert!(site(&app, &ann, &covered["id"]).await["verified_at"].is_i64());
    let (status, _, _) = call(&app, "DELETE", &uri, Some(&ann), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(site(&app, &ann, &covered["id"]).await["verified_at"].is_null());
    let (status, headers, text) = call(&app, "GET", &uri, Some(&ann), None).await;
    assert_problem(status, &headers, &text);
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_strangers_claim_covers_none_of_another_users_sites() {
    let dns = &DnsServer::start().await;
    each_backend_with_dns(dns, |app| async move {
        let (_, ann) = user(&app, "ann@example.com").await;
        let (_, eve) = user(&app, "eve@example.com").await;
        let anns_site = add_site(&app, &ann, "https://www.victim.test").await;
        let anns_claim = add_domain(&app, &ann, "victim.test").await;
        // Eve controls the name's DNS for a while and publishes her own token.
        let eves_claim = add_domain(&app, &eve, "victim.test").await;
        assert_ne!(eves_claim["verification_token"], anns_claim["verification_token"]);
        dns.publish("victim.test", &[eves_claim["record"]["value"].as_str().unwrap()]);
        let result = verify(&app, &eve, &eves_claim["id"]).await;
        assert_eq!(result["verification"]["verified"], true);
        assert_eq!(result["domain"]["sites"], json!([]), "Ann's site is not among Eve's");
        assert!(site(&app, &ann, &anns_site["id"]).await["verified_at"].is_null(), "Eve's proof is not Ann's");
        let uri = format!("/api/v1/sites/{}/verify", anns_site["id"]);
        let own = call_json(&app, "POST", &uri, &ann, None, StatusCode::OK, "VerifyResult").await;
        assert_eq!(own["verification"]["verified"], false, "{own}");
        let result = verify(&app, &ann, &anns_claim["id"]).await;
        assert_eq!(result["verification"]["verified"], false, "Ann's token is not published");

        // Eve's own site of that origin is hers; Ann's stays unverified, and Eve sees nothing of Ann's.
        let eves_site = add_site(&app, &eve, "https://www.victim.test").await;
        assert!(eves_site["verified_at"].is_i64());
        assert!(site(&app, &ann, &anns_site["id"]).await["verified_at"].is_null());
        let (status, _, _) = call(&app, "GET", &format!("/api/v1/sites/{}", anns_site["id"]), Some(&eve), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn bad_names_and_repeated_claims_are_refused() {
    let app = TestApp::new(false).await;
    let (_, ann) = user(&app, "ann@example.com").await;
    for bad in ["https://example.com", "example.com/x", "example.com:53", "127.0.0.1", "localhost", ""] {
        let (status, headers, text) =
            call(&app, "POST", "/api/v1/domains", Some(&ann), Some(json!({ "domain": bad }))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {text}");
        assert!(assert_problem(status, &headers, &text).contains("give a domain name such as example.com"), "{text}");
    }
    add_domain(&app, &ann, "example.com").await;
    let (status, headers, text) =
        call(&app, "POST", "/api/v1/domains", Some(&ann), Some(json!({ "domain": "EXAMPLE.com." }))).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_problem(status, &headers, &text);
    let (status, _, _) = call(&app, "GET", "/api/v1/domains", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
