//! Issue 33, the strangers' findings against one outbound gate, each with two users: a removed
//! owner's invitation and what they set up end with the removal; invitation mail is capped per
//! recipient across senders; "Verify now" is paced per site and per host, a failed proof
//! remembered; a webhook receives nothing before its handshake; readers never see a webhook's
//! URL; `/metrics` can be closed.

use axum::http::StatusCode;
use mapwright_server::AppState;
use mapwright_server::metrics::Access;
use mapwright_store::{Actor, Site, Sitemap, Source};
use serde_json::{Value, json};

use crate::api::{call, call_json, user, verified_site};
use crate::dns::DnsServer;
use crate::scheduler::oai_page;
use crate::sitehost::SiteHost;
use crate::support::{Auth, Mail, TestApp, each_backend, unix_now};
use crate::webhooks::{Receiver, read_due, site_with_sitemap};

/// The token of an invitation mail's link.
fn invitation_token(mail: &Mail) -> String {
    let (_, rest) = mail.body.split_once("/invitations/accept?token=").unwrap_or_else(|| panic!("no link in {mail:?}"));
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// Invites `email` to the site as `role` through the API; the answer's status and body.
async fn invite(app: &TestApp, token: &str, site: i64, email: &str, role: &str) -> (StatusCode, String) {
    let uri = format!("/api/v1/sites/{site}/invitations");
    let (status, _, body) = call(app, "POST", &uri, Some(token), Some(json!({"email": email, "role": role}))).await;
    (status, body)
}

/// The mails to `to` so far.
fn mails_to(app: &TestApp, to: &str) -> Vec<Mail> {
    app.mails().into_iter().filter(|m| m.to == to).collect()
}

/// Finding 1: owner Ann invites Bob as co-owner; Bob invites Carol as owner; Ann removes Bob
/// (204); Carol's acceptance is refused, and Bob's unsubscribe link no longer works.
#[tokio::test]
async fn a_removed_owner_s_invitee_is_refused_and_his_links_end() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (_, bob_token) = user(&app, "bob@example.com").await;
        let (_, carol_token) = user(&app, "carol@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let s = site.id;
        assert_eq!(invite(&app, &ann_token, s, "bob@example.com", "owner").await.0, StatusCode::CREATED);
        let bobs = invitation_token(&app.wait_for_mails(1).await[0]);
        let (status, _, text) =
            call(&app, "POST", "/api/v1/invitations/accept", Some(&bob_token), Some(json!({"token": bobs}))).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(invite(&app, &bob_token, s, "carol@example.com", "owner").await.0, StatusCode::CREATED);
        let carols = invitation_token(&app.wait_for_mails(2).await[1]);
        let recipients = app.store.claim_alert_recipients(s, 1, 86_400).await.unwrap();
        let bob_link = recipients.iter().find(|r| r.email == "bob@example.com").unwrap().token.clone();

        let (_, _, members) = call(&app, "GET", &format!("/api/v1/sites/{s}/members"), Some(&ann_token), None).await;
        let members: Value = serde_json::from_str(&members).unwrap();
        let bob_member =
            members["members"].as_array().unwrap().iter().find(|m| m["email"] == "bob@example.com").unwrap()["id"]
                .as_i64()
                .unwrap();
        let (status, _, _) =
            call(&app, "DELETE", &format!("/api/v1/members/{bob_member}"), Some(&ann_token), None).await;
        assert_eq!(status, StatusCode::NO_CONTENT);

        let (status, _, text) =
            call(&app, "POST", "/api/v1/invitations/accept", Some(&carol_token), Some(json!({"token": carols}))).await;
        assert!(matches!(status, StatusCode::FORBIDDEN | StatusCode::NOT_FOUND), "{status}: {text}");
        let (status, _, _) = call(&app, "GET", &format!("/api/v1/sites/{s}"), Some(&carol_token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "Carol is no member");
        let (status, _, _) =
            call(&app, "POST", "/api/v1/alerts/unsubscribe", None, Some(json!({"token": bob_link}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "a removed member's unsubscribe link is dead");
    })
    .await;
}

/// Finding 5: two accounts invite one address again and again; its inbox receives at most the
/// cap, and every refused call says why.
#[tokio::test]
async fn invitation_mail_to_one_address_is_capped_across_senders() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (eve, eve_token) = user(&app, "eve@example.com").await;
        let (ann_site, _a) = verified_site(&app, ann).await;
        let (eve_site, _e) = verified_site(&app, eve).await;
        let mut created = 0;
        for n in 0..20 {
            let (token, site) = if n % 2 == 0 { (&ann_token, ann_site.id) } else { (&eve_token, eve_site.id) };
            let (status, body) = invite(&app, token, site, "victim@example.com", "reader").await;
            match status {
                StatusCode::CREATED => created += 1,
                StatusCode::UNPROCESSABLE_ENTITY | StatusCode::TOO_MANY_REQUESTS => {
                    assert!(body.contains("victim@example.com"), "{body}")
                }
                other => panic!("{other}: {body}"),
            }
        }
        assert_eq!(created, mapwright_store::MAX_INVITATIONS_PER_ADDRESS);
        // Let the background mail finish, then count the inbox.
        app.wait_for_mails(created as usize).await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(mails_to(&app, "victim@example.com").len() as i64, mapwright_store::MAX_INVITATIONS_PER_ADDRESS);
        // Another address is not held back by the victim's cap.
        assert_eq!(invite(&app, &ann_token, ann_site.id, "friend@example.com", "reader").await.0, StatusCode::CREATED);
    })
    .await;
}

/// Finding 2: two users press "Verify now" fifty times each on sites of one origin (which may
/// be anyone's); the origin gets a handful of requests, and every answer says it was held.
#[tokio::test]
async fn verify_now_is_paced_per_site_and_per_host() {
    each_backend(false, |app| async move {
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (eve, eve_token) = user(&app, "eve@example.com").await;
        let web = SiteHost::start().await;
        let anns = app.store.create_site(ann, &web.origin, 0).await.unwrap();
        let eves = app.store.create_site(eve, &web.origin, 0).await.unwrap();
        let mut held = 0;
        for _ in 0..50 {
            for (token, site) in [(&ann_token, anns.id), (&eve_token, eves.id)] {
                let uri = format!("/api/v1/sites/{site}/verify");
                let (status, _, text) = call(&app, "POST", &uri, Some(token), None).await;
                assert_eq!(status, StatusCode::OK, "{text}");
                let answer: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(answer["verification"]["verified"], false);
                if answer["verification"]["held"].as_u64().is_some() {
                    held += 1;
                    assert!(answer["verification"]["detail"].as_str().unwrap().starts_with("not checked"), "{text}");
                }
            }
        }
        let requests = web.hits("/")
            + web.hits(&format!("/mapwright-{}.html", anns.verification_token))
            + web.hits(&format!("/mapwright-{}.html", eves.verification_token));
        assert!(requests <= 4, "{requests} requests reached the origin (200 before the gate)");
        assert!(held >= 98, "{held} of 100 answers said they were held");
    })
    .await;
}

/// Finding 2, domains: two users press "Verify now" fifty times each on properties of one
/// name; the name's servers get a couple of queries.
#[tokio::test]
async fn a_domain_s_verify_now_is_paced_and_its_lookups_bounded_per_name() {
    each_backend(false, |mut app| async move {
        let dns = DnsServer::start().await;
        app.state.dns = dns.config();
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (eve, eve_token) = user(&app, "eve@example.com").await;
        let anns = app.store.create_domain(ann, "victim.example", 0).await.unwrap();
        let eves = app.store.create_domain(eve, "victim.example", 0).await.unwrap();
        for _ in 0..50 {
            for (token, id) in [(&ann_token, anns.id), (&eve_token, eves.id)] {
                let (status, _, text) =
                    call(&app, "POST", &format!("/api/v1/domains/{id}/verify"), Some(token), None).await;
                assert_eq!(status, StatusCode::OK, "{text}");
            }
        }
        assert!(dns.queries() <= 4, "{} DNS queries (100 before the gate)", dns.queries());
    })
    .await;
}

/// Finding 3: a URL that never asked for events (it does not echo the handshake's challenge)
/// receives the handshake and nothing else, and the owner reads why; one that answers receives.
#[tokio::test]
async fn a_webhook_receives_nothing_before_its_handshake() {
    each_backend(false, |app| async move {
        let unwilling = Receiver::unwilling().await;
        let willing = Receiver::start(&[]).await;
        let (_, token, site, _, _web) = site_with_sitemap(&app, "ann@example.com").await;
        let uri = format!("/api/v1/sites/{}/webhooks", site.id);
        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(json!({"url": unwilling.url}))).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let created: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (created["state"].as_str(), created["handshake"]["verified"].as_bool()),
            (Some("unverified"), Some(false))
        );
        let (_, _, text) = call(&app, "POST", &uri, Some(&token), Some(json!({"url": willing.url}))).await;
        let created: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(created["state"], "active", "{text}");

        read_due(&app.state).await;
        let soon = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + 5;
        mapwright_server::jobs::webhooks::deliver_due(&app.state, &Default::default(), "sender", soon).await;
        assert_eq!(unwilling.handshakes().len(), 1);
        assert_eq!(unwilling.deliveries(), 0, "nothing but the handshake reached the unwilling URL");
        assert_eq!(willing.deliveries(), 1);
    })
    .await;
}

/// Finding 6: a reader never sees a webhook's URL (a chat service's hook URL is its secret),
/// only its origin; the owner does.
#[tokio::test]
async fn readers_see_a_webhook_s_url_masked() {
    each_backend(false, |app| async move {
        let receiver = Receiver::start(&[]).await;
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (_, bob_token) = user(&app, "bob@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let secret_url = format!("{}/services/T000/B000/s3cr3t", receiver.url);
        let uri = format!("/api/v1/sites/{}/webhooks", site.id);
        let (status, _, text) = call(&app, "POST", &uri, Some(&ann_token), Some(json!({"url": secret_url}))).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        assert_eq!(invite(&app, &ann_token, site.id, "bob@example.com", "reader").await.0, StatusCode::CREATED);
        let token = invitation_token(&app.wait_for_mails(1).await[0]);
        let (status, _, _) =
            call(&app, "POST", "/api/v1/invitations/accept", Some(&bob_token), Some(json!({"token": token}))).await;
        assert_eq!(status, StatusCode::OK);

        let (_, _, owners) = call(&app, "GET", &uri, Some(&ann_token), None).await;
        assert!(owners.contains("s3cr3t"), "the owner sees the URL: {owners}");
        let (_, _, readers) = call(&app, "GET", &uri, Some(&bob_token), None).await;
        assert!(!readers.contains("s3cr3t") && !readers.contains("services"), "{readers}");
        let list: Value = serde_json::from_str(&readers).unwrap();
        let origin = receiver.url.trim_end_matches("/hook");
        assert_eq!(list[0]["url"], format!("{origin}/…"));
    })
    .await;
}

/// Finding 6: `/metrics` can be closed, or opened to a scraper's token only.
#[tokio::test]
async fn metrics_can_be_closed_or_put_behind_a_token() {
    let app = TestApp::new(false).await;
    let (status, _, _) = call(&app, "GET", "/metrics", None, None).await;
    assert_eq!(status, StatusCode::OK, "public by default");
    let off = AppState::new(app.store.clone(), false).with_metrics_access(Access::Off);
    let (status, _, _) = send(off, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let token =
        AppState::new(app.store.clone(), false).with_metrics_access(Access::Token("scraper-secret-0123".into()));
    assert_eq!(send(token.clone(), None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(send(token.clone(), Some("Bearer wrong")).await.0, StatusCode::UNAUTHORIZED);
    let (status, _, body) = send(token, Some("Bearer scraper-secret-0123")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("mapwright_"), "{body}");
}

/// `GET /metrics` on a service of this state, with an Authorization header if given.
async fn send(state: AppState, authorization: Option<&str>) -> (StatusCode, axum::http::HeaderMap, String) {
    use tower::ServiceExt;
    let mut request = axum::http::Request::builder().uri("/metrics");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response =
        mapwright_server::app(state).oneshot(request.body(axum::body::Body::empty()).unwrap()).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = http_body_util::BodyExt::collect(body).await.unwrap().to_bytes();
    (parts.status, parts.headers, String::from_utf8_lossy(&bytes).into_owned())
}

/// Finding 2 across processes: two server processes on one PostgreSQL database, two users
/// pressing "Verify now" on sites of one origin, each through another process: the pace is
/// one for both.
#[tokio::test]
async fn verify_now_is_paced_across_processes() {
    each_backend(false, |app| async move {
        let Some(other) = app.second_process().await else { return };
        let (ann, ann_token) = user(&app, "ann@example.com").await;
        let (eve, eve_token) = user(&app, "eve@example.com").await;
        let web = SiteHost::start().await;
        let anns = app.store.create_site(ann, &web.origin, 0).await.unwrap();
        let eves = app.store.create_site(eve, &web.origin, 0).await.unwrap();
        for _ in 0..25 {
            for (process, token, site) in [(&app, &ann_token, anns.id), (&other, &eve_token, eves.id)] {
                let uri = format!("/api/v1/sites/{site}/verify");
                let (status, _, text) = call(process, "POST", &uri, Some(token), None).await;
                assert_eq!(status, StatusCode::OK, "{text}");
            }
        }
        let requests = web.hits("/")
            + web.hits(&format!("/mapwright-{}.html", anns.verification_token))
            + web.hits(&format!("/mapwright-{}.html", eves.verification_token));
        assert!(requests <= 4, "{requests} requests reached the origin through two processes");
        // Invitation mail too: two senders, each through another process.
        let (ann_site, _a) = verified_site(&app, ann).await;
        let (eve_site, _e) = verified_site(&other, eve).await;
        let mut created = 0;
        for n in 0..12 {
            let (process, token, site) =
                if n % 2 == 0 { (&app, &ann_token, ann_site.id) } else { (&other, &eve_token, eve_site.id) };
            if invite(process, token, site, "victim@example.com", "reader").await.0 == StatusCode::CREATED {
                created += 1;
            }
        }
        assert_eq!(created, mapwright_store::MAX_INVITATIONS_PER_ADDRESS);
    })
    .await;
}

/// The gate with room for `per_host` requests to a host an hour: past them a request is held
/// at once (its wait is longer than any patience).
fn host_budget(state: AppState, per_host: u32) -> AppState {
    let default = mapwright_server::outbound::Rates::default();
    let hour = std::time::Duration::from_secs(3600);
    let rates = mapwright_server::outbound::Rates {
        // A scope of its own: the counts of reads made with the default budget stay apart.
        http_per_host: mapwright_server::SharedLimit::new("out http per host, tested", per_host, hour),
        ..default
    };
    state.with_outbound_rates(rates)
}

/// A check one of whose requests the gate held looked at nothing: the site keeps its state
/// (a held request is no proof gone), and the answer says it was not checked.
#[tokio::test]
async fn a_check_the_gate_held_part_way_records_no_verdict() {
    each_backend(false, |app| async move {
        // Room for the check's turn and its first request (the file, gone: 404); the home
        // page's request is held.
        let state = host_budget(app.state.clone(), 2);
        let (ann, _) = user(&app, "ann@example.com").await;
        let web = SiteHost::start().await;
        let site = app.store.create_site(ann, &web.origin, 0).await.unwrap();
        app.store.record_verification(site.id, true, 0).await.unwrap();
        let site = app.store.site(ann, site.id).await.unwrap();
        let outcome = mapwright_server::jobs::recheck::verify_now(&state, &site).await.unwrap();
        assert!(outcome.held.is_some(), "{outcome:?}");
        assert!(outcome.verified && outcome.detail.starts_with("not checked now"), "{outcome:?}");
        assert!(app.store.site(ann, site.id).await.unwrap().verified_at.is_some(), "still verified");
    })
    .await;
}

/// A read the gate held back asked nothing of the site: no download is recorded (no failure,
/// so no alert mail and no status.worsened event), and the sitemap is due again later.
#[tokio::test]
async fn a_read_the_gate_held_is_postponed_not_recorded_as_failed() {
    each_backend(false, |app| async move {
        let state = host_budget(app.state.clone(), 1);
        let (owner, _, _, sitemap, web) = site_with_sitemap(&app, "ann@example.com").await;
        // Another request had the host's budget for the hour.
        state.gate.ask(mapwright_server::outbound::Target::Http(&web.origin)).await.unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let jobs = state.store.lease_due_sitemaps("reader", now + 5, 10, 60).await.unwrap();
        assert_eq!(jobs.len(), 1);
        let done = mapwright_server::jobs::reads::run_job(&state, "reader", &jobs[0]).await.unwrap();
        assert_eq!(done.status, "held");
        assert!(state.store.list_downloads(owner, sitemap.id, 10).await.unwrap().is_empty(), "no download recorded");
        let after = state.store.sitemap(owner, sitemap.id).await.unwrap();
        assert_eq!(after.failures, 0);
        assert!(after.next_fetch_at > now + 5, "due again later, not at once");
        assert!(
            state.store.lease_due_sitemaps("reader", now + 5, 10, 60).await.unwrap().is_empty(),
            "lease given back"
        );
    })
    .await;
}

/// "Verify" of a webhook sends a request to a URL the user chose: paced per user.
#[tokio::test]
async fn webhook_handshakes_are_paced_per_user() {
    each_backend(false, |app| async move {
        let mut app = app;
        let minute = std::time::Duration::from_secs(60);
        app.state.limits = std::sync::Arc::new(mapwright_server::Limits {
            webhook_handshakes_per_user: mapwright_server::SharedLimit::new("webhook handshakes per user", 2, minute),
            ..Default::default()
        });
        let receiver = Receiver::start(&[]).await;
        let (_, token, site, _, _web) = site_with_sitemap(&app, "ann@example.com").await;
        let uri = format!("/api/v1/sites/{}/webhooks", site.id);
        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(json!({"url": receiver.url}))).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let id = serde_json::from_str::<Value>(&text).unwrap()["id"].as_i64().unwrap();
        let verify = format!("/api/v1/webhooks/{id}/verify");
        assert_eq!(call(&app, "POST", &verify, Some(&token), None).await.0, StatusCode::OK);
        let (status, headers, text) = call(&app, "POST", &verify, Some(&token), None).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
        assert!(headers.contains_key("retry-after"));
        assert_eq!(receiver.handshakes().len(), 2, "the refused one sent nothing");
    })
    .await;
}

/// An invitation is never left without its mail: with every place among the messages on their
/// way taken, inviting answers 503 with Retry-After and stores no invitation.
#[tokio::test]
async fn an_invitation_whose_mail_has_no_room_is_refused_and_not_stored() {
    each_backend(false, |app| async move {
        let (ann, token) = user(&app, "ann@example.com").await;
        let (site, _web) = verified_site(&app, ann).await;
        let mailer = app.state.mail.clone().expect("the tests' outbox");
        // Others' messages hold every place (sending, say, to a slow mail server).
        let mut held = Vec::new();
        while let Ok(slot) = mailer.reserve() {
            held.push(slot);
        }
        let uri = format!("/api/v1/sites/{}/invitations", site.id);
        let body = json!({"email": "bob@example.com", "role": "reader"});
        let (status, headers, text) = call(&app, "POST", &uri, Some(&token), Some(body.clone())).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
        assert!(headers.contains_key("retry-after"));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        assert!(app.store.list_invitations(ann, site.id, now).await.unwrap().is_empty(), "nothing stored");
        // Room again: the same invitation is made and mailed.
        drop(held);
        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        let mail = crate::support::poll_until(std::time::Duration::from_secs(5), || async {
            app.mails().into_iter().find(|m| m.to == "bob@example.com")
        })
        .await;
        assert!(mail.is_some(), "the invitation's mail");
    })
    .await;
}

/// The notice of an endpoint disabled after failing is marked told only once it is sent: one
/// the gate held is told at a later turn, not lost.
#[tokio::test]
async fn a_disabled_webhook_s_notice_held_by_the_gate_is_sent_later() {
    each_backend(false, |app| async move {
        use mapwright_server::jobs::webhooks::{Config, deliver_due, tell_disabled};
        let receiver = Receiver::start(&[503; 40]).await;
        let (_, token, site, _, _web) = site_with_sitemap(&app, "ann@example.com").await;
        let uri = format!("/api/v1/sites/{}/webhooks", site.id);
        let (status, _, text) = call(&app, "POST", &uri, Some(&token), Some(json!({"url": receiver.url}))).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
        read_due(&app.state).await;
        // Failures in a row until the endpoint is disabled.
        let config = Config { max_attempts: 100, ..Config::default() };
        let mut at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let hooks = format!("/api/v1/sites/{}/webhooks", site.id);
        for _ in 0..200 {
            let (_, _, text) = call(&app, "GET", &hooks, Some(&token), None).await;
            if text.contains("\"disabled\"") {
                break;
            }
            at += 1_000_000;
            if deliver_due(&app.state, &config, "sender", at).await == 0 {
                // The host's budget at the gate (real time): a moment.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        let (_, _, text) = call(&app, "GET", &hooks, Some(&token), None).await;
        assert!(text.contains("\"disabled\""), "{text}");
        // The creator's inbox had its share of the service's mail: the notice is held.
        while app.state.gate.ask(mapwright_server::outbound::Target::Mail("ann@example.com")).await.is_ok() {}
        tell_disabled(&app.state).await;
        let notices = || app.mails().into_iter().filter(|m| m.subject == "A webhook of yours was disabled").count();
        assert_eq!(notices(), 0);
        // Room again (a fresh budget): the next turn tells.
        let default = mapwright_server::outbound::Rates::default();
        let rates = mapwright_server::outbound::Rates {
            mail_per_recipient: mapwright_server::SharedLimit::new(
                "out mail per recipient, later",
                10,
                std::time::Duration::from_secs(3600),
            ),
            ..default
        };
        let state = app.state.clone().with_outbound_rates(rates);
        tell_disabled(&state).await;
        assert_eq!(notices(), 1, "told once it could be sent");
        tell_disabled(&state).await;
        assert_eq!(notices(), 1, "and only once");
    })
    .await;
}

/// Leases the one due sitemap and reads it with `state`; the job's outcome status.
async fn read_once(state: &AppState) -> String {
    let jobs = state.store.lease_due_sitemaps("reader", unix_now() + 5, 10, 60).await.unwrap();
    assert_eq!(jobs.len(), 1, "one sitemap due");
    mapwright_server::jobs::reads::run_job(state, "reader", &jobs[0]).await.unwrap().status
}

/// What a held read must leave of the sitemap: the downloads it had, no failure counted, the
/// lease given back and the sitemap due again later, not at once.
async fn assert_postponed(state: &AppState, owner: Actor, sitemap: &Sitemap, downloads: usize) {
    let recorded = state.store.list_downloads(owner, sitemap.id, 10).await.unwrap();
    assert_eq!(recorded.len(), downloads, "no download recorded: {recorded:?}");
    let after = state.store.sitemap(owner, sitemap.id).await.unwrap();
    assert_eq!(after.failures, 0, "no failure counted");
    assert!(after.next_fetch_at > unix_now() + 5, "due again later, not at once");
    assert!(state.store.lease_due_sitemaps("reader", unix_now() + 5, 10, 60).await.unwrap().is_empty());
}

/// A verified site of `email` on a new host.
async fn owned_site(app: &TestApp, email: &str) -> (Actor, Site, SiteHost) {
    let (owner, _) = user(app, email).await;
    let web = SiteHost::start().await;
    let site = app.store.create_site(owner, &web.origin, 0).await.unwrap();
    app.store.record_verification(site.id, true, 0).await.unwrap();
    (owner, site, web)
}

/// An OAI-PMH list whose second page the gate held was read in part only: nothing of that
/// read is recorded or merged (no failed download, no failure, so no alert or webhook event),
/// the URLs of the last good read stay, and the sitemap is postponed.
#[tokio::test]
async fn a_read_whose_second_oai_pmh_page_the_gate_held_is_postponed_and_keeps_nothing() {
    each_backend(false, |app| async move {
        let (owner, site, web) = owned_site(&app, "ann@example.com").await;
        let o = web.origin.clone();
        web.put("/oai2", &oai_page("badverb.xml", &o));
        web.put("/oai2?verb=ListRecords&metadataPrefix=oai_dc", &oai_page("listrecords-1.xml", &o));
        web.put("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F100", &oai_page("listrecords-2.xml", &o));
        web.put("/oai2?verb=ListRecords&resumptionToken=oai_dc%2F%2F%2F%2F200", &oai_page("listrecords-3.xml", &o));
        let sitemap = app.store.add_sitemap(owner, site.id, &web.url("/oai2"), Source::Api, unix_now()).await.unwrap();
        assert_eq!(read_once(&app.state).await, "errors", "a good read first");
        let urls = app.store.sitemap(owner, sitemap.id).await.unwrap().url_count;
        assert_eq!(web.hits("/oai2"), 4);

        // Room for the base URL and the first page of records; the second page is held.
        let state = host_budget(app.state.clone(), 2);
        app.store.resubmit_sitemap(owner, sitemap.id, unix_now()).await.unwrap();
        assert_eq!(read_once(&state).await, "held");
        assert_eq!(web.hits("/oai2"), 6, "the base URL and page 1 asked, page 2 not");
        assert_postponed(&state, owner, &sitemap, 1).await;
        assert_eq!(app.store.sitemap(owner, sitemap.id).await.unwrap().url_count, urls, "the last good read's URLs");
        assert!(app.mails().is_empty(), "no alert mail");
    })
    .await;
}

/// A redirect hop the gate held: the read is postponed, not failed.
#[tokio::test]
async fn a_read_whose_redirect_the_gate_held_is_postponed() {
    each_backend(false, |app| async move {
        let (owner, _, web) = owned_site(&app, "ann@example.com").await;
        web.put("/new.xml", &crate::sitehost::urlset(&[(&web.url("/a"), None)]));
        // The site's sitemap URL answers with a redirect, from a server of its own on the same host.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let old = format!("http://{}/old.xml", listener.local_addr().unwrap());
        let target = web.url("/new.xml");
        let redirect = axum::Router::new()
            .route("/old.xml", axum::routing::get(move || async move { axum::response::Redirect::permanent(&target) }));
        tokio::spawn(async move { axum::serve(listener, redirect).await.unwrap() });
        let redirecting = app.store.create_site(owner, old.trim_end_matches("/old.xml"), 0).await.unwrap();
        app.store.record_verification(redirecting.id, true, 0).await.unwrap();
        let sitemap = app.store.add_sitemap(owner, redirecting.id, &old, Source::Api, unix_now()).await.unwrap();
        // Room for the first request only: the hop to /new.xml is held.
        let state = host_budget(app.state.clone(), 1);
        assert_eq!(read_once(&state).await, "held");
        assert_eq!(web.hits("/new.xml"), 0, "the hop was not sent");
        assert_postponed(&state, owner, &sitemap, 0).await;
    })
    .await;
}

/// A sitemap on another host is read only when the site's robots.txt names it: a robots.txt
/// the gate held vouches for nothing either way, so the read is postponed, not failed as
/// unvouched.
#[tokio::test]
async fn a_read_whose_robots_txt_the_gate_held_is_postponed() {
    each_backend(false, |app| async move {
        let (owner, site, web) = owned_site(&app, "ann@example.com").await;
        let elsewhere = SiteHost::start().await;
        elsewhere.put("/sitemap.xml", &crate::sitehost::urlset(&[(&web.url("/a"), None)]));
        web.put("/robots.txt", &format!("Sitemap: {}\n", elsewhere.url("/sitemap.xml")));
        let url = elsewhere.url("/sitemap.xml");
        let sitemap = app.store.add_sitemap(owner, site.id, &url, Source::Robots, unix_now()).await.unwrap();
        // Another request had the host's budget for the hour: robots.txt is held.
        let state = host_budget(app.state.clone(), 1);
        state.gate.ask(mapwright_server::outbound::Target::Http(&web.origin)).await.unwrap();
        assert_eq!(read_once(&state).await, "held");
        assert_eq!((web.hits("/robots.txt"), elsewhere.hits("/sitemap.xml")), (0, 0), "nothing sent");
        assert_postponed(&state, owner, &sitemap, 0).await;
    })
    .await;
}

/// A held read records no download, so the sitemap itself says when and why its last try was
/// held (the API's `held_at` and `held_reason`, the console's "Next read"), until a read is
/// recorded after it.
#[tokio::test]
async fn a_held_read_is_said_on_the_sitemap_until_the_next_read() {
    each_backend(false, |app| async move {
        let (owner, token, _, sitemap, web) = site_with_sitemap(&app, "ann@example.com").await;
        let session = app.store.create_session(owner.user_id, unix_now(), 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let state = host_budget(app.state.clone(), 1);
        state.gate.ask(mapwright_server::outbound::Target::Http(&web.origin)).await.unwrap();
        assert_eq!(read_once(&state).await, "held");

        let api = format!("/api/v1/sitemaps/{}", sitemap.id);
        let shown = call_json(&app, "GET", &api, &token, None, StatusCode::OK, "SitemapStatus").await;
        assert!(shown["held_at"].as_i64().is_some_and(|at| at <= unix_now()), "{shown}");
        let reason = shown["held_reason"].as_str().unwrap_or_default().to_owned();
        assert!(reason.starts_with("held back: the service sends at most so much to 127.0.0.1"), "{shown}");
        let listed = call_json(
            &app,
            "GET",
            &format!("/api/v1/sites/{}/sitemaps", sitemap.site_id),
            &token,
            None,
            StatusCode::OK,
            "[Sitemap]",
        )
        .await;
        assert_eq!(listed[0]["held_reason"], reason.as_str(), "{listed}");
        let page = format!("/sitemaps/{}", sitemap.id);
        let (status, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert_eq!(status, StatusCode::OK);
        let said = held_back(&html).unwrap_or_else(|| panic!("no held-back note: {html}"));
        assert!(said.starts_with(&reason) && said.contains("; next try in"), "{said}");

        // Room at the gate again: a real read is recorded, and the hold is no longer said.
        app.store.resubmit_sitemap(owner, sitemap.id, unix_now()).await.unwrap();
        let status = read_once(&app.state).await;
        assert!(status != "held" && status != "failed", "{status}");
        let shown = call_json(&app, "GET", &api, &token, None, StatusCode::OK, "SitemapStatus").await;
        assert_eq!((&shown["held_at"], &shown["held_reason"]), (&Value::Null, &Value::Null), "{shown}");
        let (_, _, html) = app.get(&page, Auth::Cookie(&cookie)).await;
        assert_eq!(held_back(&html), None);
        assert!(!html.contains("held back"), "{html}");
    })
    .await;
}

/// The text of the sitemap page's held-back note, if any.
fn held_back(html: &str) -> Option<String> {
    let doc = scraper::Html::parse_document(html);
    let note = scraper::Selector::parse("#held-back").unwrap();
    doc.select(&note).next().map(|n| n.text().collect())
}
