//! The failing-URL report covers every URL (issue 20): one run visits every live URL of a site
//! of 1,200 on loopback, one request each, robots.txt once, at the configured rate per origin;
//! the site page's words before, during and after; a run cut short resumes where it was and
//! one run per site holds between two processes' checkers sharing the store.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use mapwright_server::jobs::checker::{CheckerConfig, Jobs, RunEnd, check_site};
use mapwright_store::{Actor, CheckRefusal, CheckTrigger, UrlRecord};

use crate::console::{post_form, seed, text};
use crate::support::{Auth, TestApp, each_backend, set_cookie};

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A site whose URL paths say how they answer: `/p/N` by `N % 100` (1: 404, 2: 410, 3: 500,
/// 4: a 301 to `/p/0`, 5: 200 with noindex in the HTML head, otherwise a page); `/private/N`
/// is disallowed by robots.txt; `/files/N.pdf` a PDF; `/a` and `/b` pages; the rest 404.
/// Every request is logged with its method and time of arrival.
#[derive(Clone, Default)]
struct CountingSite {
    log: Arc<Mutex<Vec<(Method, String, Instant)>>>,
}

impl CountingSite {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let router = axum::Router::new().fallback(answer).with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        origin
    }

    fn log(&self) -> Vec<(Method, String, Instant)> {
        self.log.lock().unwrap().clone()
    }
}

async fn answer(State(site): State<CountingSite>, method: Method, uri: Uri) -> Response {
    let path = uri.path().to_owned();
    site.log.lock().unwrap().push((method, path.clone(), Instant::now()));
    let page = |head: &str| {
        let body =
            format!("<!doctype html><html><head><title>t</title>{head}</head><body>{}</body></html>", "x".repeat(4000));
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
    };
    if path == "/robots.txt" {
        return "User-agent: *\nDisallow: /private/\n".into_response();
    }
    if path == "/a" || path == "/b" {
        return page("");
    }
    if path.starts_with("/files/") {
        return ([(header::CONTENT_TYPE, "application/pdf")], "%PDF-1.4").into_response();
    }
    let Some(n) = path.strip_prefix("/p/").and_then(|n| n.parse::<u32>().ok()) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    match n % 100 {
        1 => (StatusCode::NOT_FOUND, "gone").into_response(),
        2 => (StatusCode::GONE, "gone for good").into_response(),
        3 => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        4 => (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, "/p/0")]).into_response(),
        5 => page(r#"<meta name="robots" content="noindex">"#),
        _ => page(""),
    }
}

/// URLs of the site besides the three `seed` stores (`/a`, `/b`, `/missing`): 1,200 in all.
const EXTRA: u32 = 1197;

/// The path of the extra URL `n`: every hundred has one disallowed and one PDF.
fn path_of(n: u32) -> String {
    match n % 100 {
        6 => format!("/private/{n}"),
        7 => format!("/files/{n}.pdf"),
        _ => format!("/p/{n}"),
    }
}

/// Failing among the 1,200: per hundred extra URLs 404, 410, 500, redirect, noindex and
/// robots.txt (six), and the seeded `/missing`.
fn expected_failing() -> i64 {
    (0..EXTRA).filter(|n| (1..=6).contains(&(n % 100))).count() as i64 + 1
}

async fn store_urls(app: &TestApp, site_id: i64, sitemap_id: i64, origin: &str) {
    let urls: Vec<UrlRecord> = (0..EXTRA)
        .map(|n| UrlRecord { loc: format!("{origin}{}", path_of(n)), lastmod: None, changefreq: None, priority: None })
        .collect();
    app.store.upsert_urls(site_id, sitemap_id, &urls, now()).await.unwrap();
}

/// `GET` of the site's check state through the API, checked against `openapi.yaml`.
async fn api_state(app: &TestApp, uri: &str, cookie: &str) -> serde_json::Value {
    let (status, _, body) = app.get(uri, Auth::Cookie(cookie)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let value: serde_json::Value = serde_json::from_str(&body).unwrap();
    crate::api::assert_schema(&value, "UrlCheck");
    value
}

/// The most arrivals in any one-second window.
fn busiest_second(times: &[Instant]) -> usize {
    let mut times = times.to_vec();
    times.sort();
    let mut best = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end].duration_since(times[start]) >= Duration::from_secs(1) {
            start += 1;
        }
        best = best.max(end - start + 1);
    }
    best
}

#[tokio::test]
async fn one_run_checks_every_url_once_at_the_rate_and_the_page_says_where_it_stands() {
    each_backend(false, |mut app| async move {
        let web = CountingSite::default();
        let origin = web.start().await;
        let s = seed(&app, "ann@example.com", &origin).await;
        store_urls(&app, s.site.id, s.sitemap.id, &origin).await;
        let rate = 100.0;
        app.state.checks = Arc::new(Jobs::new(CheckerConfig::default().with_rate(rate)));
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        let auth = Auth::Cookie(&s.cookie);
        let site_page = format!("/sites/{}", s.site.id);

        // Never checked: the page says so, not "No failing URLs" (the seeded /missing outcome
        // came from no run).
        let (_, _, html) = app.get(&site_page, auth).await;
        let t = text(&html);
        assert!(t.contains("Not checked yet."), "{t}");
        assert!(!t.contains("No failing URLs"), "{t}");
        let api = format!("/api/v1/sites/{}/url-check", s.site.id);
        let state = api_state(&app, &api, &s.cookie).await;
        assert_eq!((state["state"].as_str(), state["partial"].as_bool()), (Some("never"), Some(true)), "{state}");

        // "Check now" starts the full run at once; while it goes the page shows how far it is
        // and that its failures are partial.
        let body = format!("csrf={}", s.csrf);
        let (status, headers, _) = post_form(&app, &format!("{site_page}/check"), &s.cookie, &body, &[]).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(set_cookie(&headers).0.contains("The+check+started"), "{:?}", set_cookie(&headers));
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut saw_running = false;
        loop {
            let run = app.store.check_run(actor, s.site.id).await.unwrap().unwrap();
            if !run.is_running() {
                break;
            }
            if run.checked > 0 && !saw_running {
                let (_, headers, html) = app.get(&site_page, auth).await;
                let t = text(&html);
                if t.contains("Checking: ") {
                    assert!(t.contains(" of 1,200 URLs checked"), "{t}");
                    assert!(t.contains("The failures below are partial"), "{t}");
                    assert!(t.contains("No check has covered every URL yet."), "{t}");
                    assert_eq!(headers.get("refresh").map(|v| v.to_str().unwrap()), Some("3"));
                    let state = api_state(&app, &api, &s.cookie).await;
                    assert_eq!(state["total"], 1200, "{state}");
                    assert!(state["partial"].as_bool().unwrap(), "{state}");
                    saw_running = true;
                }
            }
            assert!(Instant::now() < deadline, "the run did not finish: {run:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(saw_running, "the page never showed the run going");

        // Every URL was checked, each with one request; robots.txt once; the disallowed never.
        let run = app.store.check_run(actor, s.site.id).await.unwrap().unwrap();
        assert_eq!((run.state.as_str(), run.checked, run.total), ("done", 1200, 1200), "{run:?}");
        assert_eq!(run.failing, expected_failing());
        let log = web.log();
        assert_eq!(log.iter().filter(|(_, p, _)| p == "/robots.txt").count(), 1, "robots.txt once per run");
        assert!(!log.iter().any(|(_, p, _)| p.starts_with("/private/")), "a disallowed URL was requested");
        let mut paths: Vec<&str> = log.iter().map(|(_, p, _)| p.as_str()).filter(|p| *p != "/robots.txt").collect();
        let requests = paths.len();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(requests, paths.len(), "a URL was requested twice");
        let disallowed = (0..EXTRA).filter(|n| n % 100 == 6).count();
        assert_eq!(requests, 1200 - disallowed, "one request for each allowed URL");
        for (method, path, _) in &log {
            let want = if path.ends_with(".pdf") { Method::HEAD } else { Method::GET };
            assert_eq!(*method, want, "{path}");
        }
        // At most `rate` a second to the origin (a tenth more for the arrival's jitter), so
        // the run took at least as long as the rate allows.
        let times: Vec<Instant> = log.iter().map(|(_, _, t)| *t).collect();
        let busiest = busiest_second(&times);
        assert!(busiest <= (rate * 1.1) as usize + 1, "{busiest} requests in one second at {rate} a second");
        let first = times.iter().min().unwrap();
        let last = times.iter().max().unwrap();
        assert!(last.duration_since(*first) >= Duration::from_secs_f64((log.len() - 1) as f64 / rate * 0.9));

        // Each kind is in the report.
        let kinds = app.store.url_failure_kinds(actor, s.site.id).await.unwrap();
        let count = |k: &str| kinds.iter().find(|c| c.kind == k).map_or(0, |c| c.count);
        let per_hundred = (0..EXTRA).filter(|n| n % 100 == 1).count() as i64;
        assert_eq!(count("404"), per_hundred + 1, "{kinds:?}");
        for kind in ["410", "5xx", "redirect", "noindex", "robots"] {
            assert_eq!(count(kind), per_hundred, "{kind}: {kinds:?}");
        }

        // Done: when it ended, what it found, when the next is due; no more reloading.
        let (_, headers, html) = app.get(&site_page, auth).await;
        let t = text(&html);
        assert!(t.contains(&format!("1,200 URLs checked, {} failing.", expected_failing())), "{t}");
        assert!(t.contains("Last full check ended just now"), "{t}");
        assert!(t.contains("Next check: in 7 days."), "{t}");
        assert!(headers.get("refresh").is_none());
        let state = api_state(&app, &api, &s.cookie).await;
        assert_eq!(
            (state["state"].as_str(), state["checked"].as_i64(), state["partial"].as_bool()),
            (Some("done"), Some(1200), Some(false))
        );
        assert_eq!(state["next_run_at"].as_i64(), Some(run.last_complete_at.unwrap() + 7 * 86_400), "{state}");
        // Not due again before the interval, and "Check now" keeps its cooldown.
        let due = app.store.sites_due_for_check_run(now(), now() - 3600, now() - 3600, 10).await.unwrap();
        assert!(!due.contains(&s.site.id));
        let (_, headers, _) = post_form(&app, &format!("{site_page}/check"), &s.cookie, &body, &[]).await;
        assert!(set_cookie(&headers).0.contains("again+in"), "{:?}", set_cookie(&headers));

        // Issue 34: the sitemap removed since, its URLs leave the report; the run's count is
        // said as of its time, beside the report's, never above it as if one number.
        app.store.remove_sitemap(actor, s.sitemap.id, now()).await.unwrap();
        let (_, _, html) = app.get(&site_page, auth).await;
        let t = text(&html);
        let said = format!("{} failing then; 0 failing among the URLs the sitemaps list now.", expected_failing());
        assert!(t.contains(&said), "{t}");
    })
    .await;
}

#[tokio::test]
async fn a_run_cut_short_resumes_where_it_was_and_one_run_per_site_holds_across_processes() {
    each_backend(false, |mut app| async move {
        let web = CountingSite::default();
        let origin = web.start().await;
        let s = seed(&app, "ann@example.com", &origin).await;
        store_urls(&app, s.site.id, s.sitemap.id, &origin).await;
        let config = CheckerConfig { lease: Duration::from_secs(60), ..CheckerConfig::default().with_rate(1000.0) };
        app.state.checks = Arc::new(Jobs::new(config.clone()));
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        let store = &app.store;
        let t0 = now();
        let periodic = CheckTrigger::Periodic { complete_before: t0, failed_before: t0, per_owner: 2 };

        // Process A claims the run and checks 300 URLs, then dies (nothing released).
        let a = store.claim_check_run(s.site.id, "process-a", &periodic, t0, t0 + 60).await.unwrap().unwrap();
        assert_eq!((a.checked, a.total), (0, 1200));
        // Process B is refused while A's lease holds, whatever the trigger.
        let b = store.claim_check_run(s.site.id, "process-b", &periodic, t0, t0 + 60).await.unwrap();
        assert_eq!(b, Err(CheckRefusal::Running));
        let user = CheckTrigger::User { user_id: s.site.owner_id, per_user: 2, cooldown: 300 };
        assert_eq!(
            store.claim_check_run(s.site.id, "process-b", &user, t0, t0 + 60).await.unwrap(),
            Err(CheckRefusal::Running)
        );
        let first = store.urls_to_check(s.site.id, 0, 300).await.unwrap();
        assert_eq!(first.len(), 300);
        let records: Vec<_> = first
            .iter()
            .map(|(id, _)| mapwright_store::UrlCheckRecord {
                url_id: *id,
                status: None,
                rule: None,
                message: None,
                version: None,
            })
            .collect();
        let reached = first.last().unwrap().0;
        assert!(store.record_check_page(s.site.id, "process-a", &records, reached, t0, t0 + 60).await.unwrap());
        // B may not write into A's run.
        assert!(!store.record_check_page(s.site.id, "process-b", &records, reached, t0, t0 + 60).await.unwrap());

        // Not due before the lease ends; due (first of all) after.
        assert!(!store.sites_due_for_check_run(t0, t0, t0, 10).await.unwrap().contains(&s.site.id));
        assert_eq!(store.sites_due_for_check_run(t0 + 61, t0, t0, 10).await.unwrap().first(), Some(&s.site.id));

        // After the lease, this process takes the run over and checks the remaining 900 only.
        // (Its lease starts from the real clock: pretend A's ended by giving it back.)
        assert_eq!(store.release_check_runs("process-a", t0).await.unwrap(), 1);
        let end = check_site(&app.state, s.site.id).await.unwrap().unwrap();
        match end {
            RunEnd::Done { checked, .. } => assert_eq!(checked, 1200, "300 by A, 900 here"),
            other => panic!("{other:?}"),
        }
        let log = web.log();
        let asked: Vec<&str> = log.iter().map(|(_, p, _)| p.as_str()).filter(|p| *p != "/robots.txt").collect();
        let first_locs: std::collections::HashSet<String> =
            first.iter().map(|(_, loc)| loc.strip_prefix(&origin).unwrap().to_owned()).collect();
        assert!(!asked.iter().any(|p| first_locs.contains(*p)), "a URL checked before the restart was checked again");
        let remaining = store.urls_to_check(s.site.id, reached, 10_000).await.unwrap();
        assert_eq!(remaining.len(), 900);
        let disallowed_in_rest = remaining.iter().filter(|(_, loc)| loc.contains("/private/")).count();
        assert_eq!(asked.len(), 900 - disallowed_in_rest);
        let run = store.check_run(actor, s.site.id).await.unwrap().unwrap();
        assert_eq!((run.state.as_str(), run.checked), ("done", 1200));
        // A's late write changes nothing now.
        assert!(!store.record_check_page(s.site.id, "process-a", &records, reached, t0, t0 + 60).await.unwrap());
    })
    .await;
}

#[tokio::test]
async fn one_run_per_origin_and_a_users_runs_are_bounded_in_the_store() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let store = &app.store;
        let t = now();
        let ann = s.site.owner_id;
        let user = |per_user| CheckTrigger::User { user_id: ann, per_user, cooldown: 300 };
        // Bob verified the same origin: while Ann's run goes, his waits (one pace per origin).
        let bob = store.create_user("bob@example.com", "h", false, t).await.unwrap();
        let bobs = store.create_site(Actor::from(&bob), "https://ann.example", t).await.unwrap();
        store.record_verification(bobs.id, true, t).await.unwrap();
        store.claim_check_run(s.site.id, "p1", &user(1), t, t + 60).await.unwrap().unwrap();
        let periodic = CheckTrigger::Periodic { complete_before: t, failed_before: t, per_owner: 1 };
        assert_eq!(
            store.claim_check_run(bobs.id, "p2", &periodic, t, t + 60).await.unwrap(),
            Err(CheckRefusal::OriginBusy)
        );
        // Ann's second site: over her limit of one run at once, from any process.
        let other = store.create_site(Actor { user_id: ann, is_admin: false }, "https://two.example", t).await.unwrap();
        store.record_verification(other.id, true, t).await.unwrap();
        assert_eq!(
            store.claim_check_run(other.id, "p2", &user(1), t, t + 60).await.unwrap(),
            Err(CheckRefusal::UserLimit(1))
        );
        // Ann's run ends: Bob's may start, and Ann's site waits for the cooldown.
        assert!(store.finish_check_run(s.site.id, "p1", None, t).await.unwrap().is_some());
        assert!(store.claim_check_run(bobs.id, "p2", &periodic, t, t + 60).await.unwrap().is_ok());
        let again = store.claim_check_run(s.site.id, "p1", &user(1), t + 10, t + 70).await.unwrap();
        assert_eq!(again, Err(CheckRefusal::OriginBusy));
        store.finish_check_run(bobs.id, "p2", Some("test"), t + 10).await.unwrap();
        let again = store.claim_check_run(s.site.id, "p1", &user(1), t + 10, t + 70).await.unwrap();
        assert_eq!(again, Err(CheckRefusal::TooSoon(290)));
        // A periodic run is not due right after a complete one; a failed one is retried.
        assert_eq!(
            store.claim_check_run(s.site.id, "p1", &periodic, t + 10, t + 70).await.unwrap(),
            Err(CheckRefusal::NotDue)
        );
        let retry = CheckTrigger::Periodic { complete_before: t - 1, failed_before: t + 11, per_owner: 1 };
        assert!(store.claim_check_run(bobs.id, "p2", &retry, t + 20, t + 80).await.unwrap().is_ok());
        // One periodic run per owner here: Ann's second site waits while her first runs.
        let due = CheckTrigger::Periodic { complete_before: t + 100, failed_before: t + 100, per_owner: 1 };
        let third =
            store.create_site(Actor { user_id: ann, is_admin: false }, "https://three.example", t).await.unwrap();
        store.record_verification(third.id, true, t).await.unwrap();
        assert!(store.claim_check_run(other.id, "p3", &due, t + 30, t + 90).await.unwrap().is_ok());
        assert_eq!(
            store.claim_check_run(third.id, "p3", &due, t + 30, t + 90).await.unwrap(),
            Err(CheckRefusal::OwnerLimit(1))
        );
        // A user's "Check now" is not held by the periodic runs of her sites.
        assert!(store.claim_check_run(third.id, "p3", &user(1), t + 30, t + 90).await.unwrap().is_ok());
    })
    .await;
}

#[tokio::test]
async fn a_process_that_stops_gives_its_run_back_and_another_finishes_it() {
    each_backend(false, |app| async move {
        let web = CountingSite::default();
        let origin = web.start().await;
        let s = seed(&app, "ann@example.com", &origin).await;
        store_urls(&app, s.site.id, s.sitemap.id, &origin).await;
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        let config = CheckerConfig { poll: Duration::from_millis(50), ..CheckerConfig::default().with_rate(200.0) };
        let process = |app: &TestApp| {
            let mut state = app.state.clone();
            state.checks = Arc::new(Jobs::new(config.clone()));
            let (stop, stopped) = tokio::sync::watch::channel(false);
            let task = tokio::spawn(mapwright_server::jobs::checker::run(state, stopped));
            (stop, task)
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let run_now = || async { app.store.check_run(actor, s.site.id).await.unwrap() };

        // The first process's periodic checker starts the run; it stops a quarter of the way.
        let (stop, task) = process(&app);
        while run_now().await.is_none_or(|r| r.checked < 300) {
            assert!(Instant::now() < deadline, "the first process did not get going");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.send(true).unwrap();
        task.await.unwrap();
        let cut = run_now().await.unwrap();
        assert!(cut.is_running() && cut.checked < 1200, "{cut:?}");
        assert!(cut.lease_expires_at.unwrap() <= now(), "the run was given back at once: {cut:?}");
        let asked_first = web.log().len();

        // A second process takes it over at once and checks the rest only.
        let (stop, task) = process(&app);
        while run_now().await.unwrap().is_running() {
            assert!(Instant::now() < deadline, "the second process did not finish the run");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        stop.send(true).unwrap();
        task.await.unwrap();
        let run = run_now().await.unwrap();
        assert_eq!((run.state.as_str(), run.checked, run.started_at), ("done", 1200, cut.started_at), "{run:?}");
        assert_eq!(run.failing, expected_failing());
        let log = web.log();
        assert!(log.len() > asked_first);
        // robots.txt once per process's share; a URL twice only if it was in flight at the stop.
        assert_eq!(log.iter().filter(|(_, p, _)| p == "/robots.txt").count(), 2);
        let disallowed = (0..EXTRA).filter(|n| n % 100 == 6).count();
        let requests = log.iter().filter(|(_, p, _)| p != "/robots.txt").count();
        let in_flight = config.check.per_host * 2;
        assert!(
            requests >= 1200 - disallowed && requests <= 1200 - disallowed + in_flight,
            "{requests} requests for {} allowed URLs",
            1200 - disallowed
        );
    })
    .await;
}

/// Issue 33, finding 6: two users' sites on two origins of one host (two ports of 127.0.0.1),
/// checked at once: the host gets the check rate once, not once per origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_rate_holds_per_host_across_origins_and_users() {
    each_backend(false, |mut app| async move {
        let (one, two) = (CountingSite::default(), CountingSite::default());
        let (first, second) = (one.start().await, two.start().await);
        let ann = seed(&app, "ann@example.com", &first).await;
        let eve = seed(&app, "eve@example.com", &second).await;
        for (s, origin) in [(&ann, &first), (&eve, &second)] {
            let urls: Vec<UrlRecord> = (10..30)
                .map(|n| UrlRecord { loc: format!("{origin}/p/{n}"), lastmod: None, changefreq: None, priority: None })
                .collect();
            app.store.upsert_urls(s.site.id, s.sitemap.id, &urls, now()).await.unwrap();
        }
        app.state.checks = Arc::new(Jobs::new(CheckerConfig::default().with_rate(5.0)));
        let started = Instant::now();
        let (a, b) = tokio::join!(check_site(&app.state, ann.site.id), check_site(&app.state, eve.site.id));
        assert!(matches!(a.unwrap(), Ok(RunEnd::Done { .. })) && matches!(b.unwrap(), Ok(RunEnd::Done { .. })));
        let elapsed = started.elapsed();
        let checks = |site: &CountingSite| site.log().iter().filter(|(_, p, _)| p != "/robots.txt").count();
        let total = checks(&one) + checks(&two);
        assert_eq!(total, 46, "23 URLs of each site checked once");
        // 46 checks at 5 a second to one host take 8 s at least (a fixed window lets one
        // second's share through at its start); at 5 a second per origin they took 4.5 s.
        assert!(elapsed >= Duration::from_secs(7), "{total} checks of one host in {elapsed:?}");
    })
    .await;
}
