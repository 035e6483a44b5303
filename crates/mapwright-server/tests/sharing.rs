//! Issue 14 with the real workers, on both backends: one hostile user (an index of 100
//! children that never answer, an endless sitemap, a ping storm) does not stall an honest
//! user, whose resubmit is fetched within seconds and whose writes all succeed; the minimum
//! interval between fetches; the per-fetch and per-site URL limits; poison data stored alike
//! on both backends; the verification re-check against hosts that never answer; retention.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use futures_util::StreamExt;
use mapwright_server::AppState;
use mapwright_server::jobs::{self, reads::run_job};
use mapwright_store::{Actor, Download, Site, Sitemap, Source, UrlQuery};

use crate::sitehost::{SiteHost, index, urlset};
use crate::support::{Auth, each_backend, poll_until, unix_now};

async fn verified_site(state: &AppState, email: &str, origin: &str) -> (Actor, Site) {
    let actor = match state.store.create_user(email, "h", false, 0).await {
        Ok(user) => Actor::from(&user),
        Err(_) => Actor::from(&state.store.user_credentials(email).await.unwrap().unwrap().0),
    };
    let site = state.store.create_site(actor, origin, 0).await.unwrap();
    state.store.record_verification(site.id, true, 0).await.unwrap();
    (actor, site)
}

async fn add(state: &AppState, actor: Actor, site: &Site, url: &str) -> Sitemap {
    state.store.add_sitemap(actor, site.id, url, Source::Api, unix_now()).await.unwrap()
}

async fn downloads(state: &AppState, actor: Actor, sitemap: &Sitemap) -> Vec<Download> {
    state.store.list_downloads(actor, sitemap.id, 100).await.unwrap()
}

/// The URL rows of a site, removed ones included.
async fn count_urls(state: &AppState, actor: Actor, site: &Site) -> usize {
    let (mut stored, mut after) = (0, 0);
    loop {
        let query = UrlQuery { after, limit: 10_000, include_removed: true };
        let page = state.store.list_urls(actor, site.id, query).await.unwrap();
        stored += page.items.len();
        match page.next_after {
            Some(next) => after = next,
            None => return stored,
        }
    }
}

/// Waits for a condition, checking every 50 ms, for at most `limit`.
async fn within<F, Fut>(limit: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    let found = poll_until(limit, || {
        let checked = check();
        async move { checked.await.then_some(()) }
    })
    .await;
    assert!(found.is_some(), "not within {limit:?}: {what}");
    start.elapsed()
}

/// The hostile user's host: `/index.xml` lists 100 children that accept the request and never
/// answer, `/endless.txt` is a text sitemap that never ends (the fetcher stops at its byte
/// limit), every request counted.
#[derive(Clone)]
struct Hostile {
    origin: String,
    stalled: Arc<AtomicU32>,
    endless: Arc<AtomicU32>,
}

impl Hostile {
    async fn start() -> Hostile {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let host = Hostile { origin, stalled: Arc::default(), endless: Arc::default() };
        let router = Router::new()
            .route("/index.xml", axum::routing::get(hostile_index))
            .route("/endless.txt", axum::routing::get(hostile_endless))
            .route("/stall/{n}", axum::routing::get(hostile_stall))
            .with_state(host.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        host
    }
}

async fn hostile_index(State(host): State<Hostile>) -> String {
    let children: Vec<String> = (0..100).map(|n| format!("{}/stall/{n}", host.origin)).collect();
    let listed: Vec<(&str, Option<&str>)> = children.iter().map(|c| (c.as_str(), None)).collect();
    index(&listed)
}

async fn hostile_stall(State(host): State<Hostile>, Path(_n): Path<u32>) -> String {
    host.stalled.fetch_add(1, Ordering::SeqCst);
    std::future::pending::<String>().await
}

async fn hostile_endless(State(host): State<Hostile>) -> Body {
    host.endless.fetch_add(1, Ordering::SeqCst);
    let origin = host.origin.clone();
    let chunks = futures_util::stream::iter(0_u64..).map(move |chunk| {
        let mut text = String::with_capacity(64 * 1024);
        for line in 0..2_000 {
            text.push_str(&format!("{origin}/e/{chunk}/{line}\n"));
        }
        Ok::<_, Infallible>(Bytes::from(text))
    });
    Body::from_stream(chunks)
}

/// The scheduler as a small server runs it: 4 workers, 2 jobs per origin and per user, a
/// one-second minimum interval (so the test need not wait a minute).
fn config() -> jobs::Config {
    jobs::Config {
        workers: 4,
        poll_interval: Duration::from_millis(100),
        grace: Duration::from_millis(100),
        recheck: false,
        min_fetch_interval: Duration::from_secs(1),
        ..jobs::Config::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hostile_user_does_not_stall_an_honest_one() {
    each_backend(false, |app| async move {
        let hostile = Hostile::start().await;
        let other = Hostile::start().await;
        let web = SiteHost::start().await;
        let (eve, eve_index_site) = verified_site(&app.state, "eve@example.com", &hostile.origin).await;
        let (_, eve_endless_site) = verified_site(&app.state, "eve@example.com", &other.origin).await;
        let (ann, ann_site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
        let (_, secret) = app.store.create_api_token(ann, "test", 0).await.unwrap();
        web.put("/s.xml", &urlset(&[(&web.url("/a"), None)]));
        add(&app.state, eve, &eve_index_site, &format!("{}/index.xml", hostile.origin)).await;
        let endless = add(&app.state, eve, &eve_endless_site, &format!("{}/endless.txt", other.origin)).await;
        let honest = add(&app.state, ann, &ann_site, &web.url("/s.xml")).await;

        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let handle = jobs::spawn(app.state.clone(), config(), shutdown);
        within(Duration::from_secs(20), "the stalled children and the endless sitemap are being fetched", || async {
            hostile.stalled.load(Ordering::SeqCst) >= 1 && other.endless.load(Ordering::SeqCst) >= 1
        })
        .await;
        within(Duration::from_secs(10), "the honest user's first download", || async {
            downloads(&app.state, ann, &honest).await.len() == 1
        })
        .await;

        // The ping storm: every hostile sitemap, as fast as the service answers.
        let storm = {
            let app_state = app.state.clone();
            let urls: Vec<String> = (0..100)
                .map(|n| format!("{}/stall/{n}", hostile.origin))
                .chain([format!("{}/endless.txt", other.origin)])
                .collect();
            tokio::spawn(async move {
                let mut sent = 0_u32;
                loop {
                    for url in &urls {
                        let request =
                            axum::http::Request::get(format!("/ping?sitemap={url}")).body(Body::empty()).unwrap();
                        let response = tower::ServiceExt::oneshot(mapwright_server::app(app_state.clone()), request)
                            .await
                            .unwrap();
                        assert!(matches!(response.status(), StatusCode::OK | StatusCode::TOO_MANY_REQUESTS));
                        sent += 1;
                    }
                    tokio::task::yield_now().await;
                    if sent > 1_000_000 {
                        return;
                    }
                }
            })
        };

        // The honest user resubmits after the minimum interval: fetched within a few seconds,
        // while the hostile index's children stall and the endless sitemap streams in.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let uri = format!("/api/v1/sitemaps/{}/resubmit", honest.id);
        let (status, _, body) = app.post_json(&uri, Auth::Bearer(&secret), serde_json::json!({})).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let took = within(Duration::from_secs(5), "the honest resubmit's download", || async {
            downloads(&app.state, ann, &honest).await.len() == 2
        })
        .await;
        eprintln!("{}: the honest resubmit was fetched in {took:?}", app.store.backend());

        // Every write of the honest user succeeds meanwhile.
        for n in 0..20 {
            let uri = format!("/api/v1/sites/{}/sitemaps", ann_site.id);
            let (status, _, body) = app
                .post_json(&uri, Auth::Bearer(&secret), serde_json::json!({"url": web.url(&format!("/more-{n}.xml"))}))
                .await;
            assert_eq!(status, StatusCode::CREATED, "write {n}: {body}");
            let (status, _, body) = app
                .post_json("/api/v1/tokens", Auth::Bearer(&secret), serde_json::json!({"name": format!("t{n}")}))
                .await;
            assert!(status.is_success(), "write {n}: {status} {body}");
        }

        // The hostile user never has more than two jobs at once: the stalled children never
        // end, so each request seen is one in flight.
        assert!(
            hostile.stalled.load(Ordering::SeqCst) <= 2,
            "{} stalled children",
            hostile.stalled.load(Ordering::SeqCst)
        );
        // The endless sitemap: stopped at the byte limit, a read that never reached its end,
        // so a failed read that stores none of its URLs (all or nothing; the 50,000-URL cap of
        // a whole read is a_fetch_stores_at_most_50000_urls_and_a_site_at_most_its_quota).
        let failed = poll_until(Duration::from_secs(60), || async {
            let d = app.store.list_downloads(eve, endless.id, 1).await.unwrap();
            d.first().filter(|d| d.status == "failed").cloned()
        })
        .await
        .expect("the endless sitemap's read ends, failed");
        assert_eq!(failed.url_count, 0);
        assert_eq!(count_urls(&app.state, eve, &eve_endless_site).await, 0, "nothing of a read cut short is stored");

        storm.abort();
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("the scheduler stops").unwrap();
    })
    .await;
}

#[tokio::test]
async fn pings_and_resubmits_do_not_fetch_sooner_than_the_minimum_interval() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (ann, site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
        let (_, secret) = app.store.create_api_token(ann, "test", 0).await.unwrap();
        web.put("/s.xml", &urlset(&[(&web.url("/a"), None)]));
        let sitemap = add(&app.state, ann, &site, &web.url("/s.xml")).await;
        let config = jobs::Config { min_fetch_interval: Duration::from_secs(3), ..config() };
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let handle = jobs::spawn(app.state.clone(), config, shutdown);
        within(Duration::from_secs(10), "the first download", || async { web.hits("/s.xml") == 1 }).await;

        // Resubmits and pings at once: each answered as before, none fetched sooner.
        for _ in 0..10 {
            let uri = format!("/api/v1/sitemaps/{}/resubmit", sitemap.id);
            let (status, _, _) = app.post_json(&uri, Auth::Bearer(&secret), serde_json::json!({})).await;
            assert_eq!(status, StatusCode::ACCEPTED);
        }
        for _ in 0..5 {
            let (status, _, _) = app.get(&format!("/ping?sitemap={}", web.url("/s.xml")), Auth::None).await;
            assert_eq!(status, StatusCode::OK);
        }
        within(Duration::from_secs(10), "the fetch after the interval", || async { web.hits("/s.xml") == 2 }).await;
        // Not fetched again within the interval, measured between the two requests as the site
        // saw them (the scheduler's times are whole seconds: 3 s may be a little over 2).
        let times = web.hit_times("/s.xml");
        let gap = times[1] - times[0];
        assert!(gap >= Duration::from_millis(1900), "fetched again {gap:?} after the first fetch");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(web.hits("/s.xml"), 2, "once for all the resubmits and pings");
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("the scheduler stops").unwrap();
    })
    .await;
}

/// Runs the due jobs one by one.
async fn drain(state: &AppState) {
    for _ in 0..20 {
        let jobs = state.store.lease_due_sitemaps("w", unix_now() + 5, 10, 60).await.unwrap();
        if jobs.is_empty() {
            return;
        }
        for job in &jobs {
            run_job(state, "w", job).await.unwrap();
        }
    }
}

#[tokio::test]
async fn a_fetch_stores_at_most_50000_urls_and_a_site_at_most_its_quota() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (ann, site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
        let lines: String = (0..50_001).map(|n| format!("{}/p{n}\n", web.origin)).collect();
        web.put("/big.txt", &lines);
        let big = add(&app.state, ann, &site, &web.url("/big.txt")).await;
        drain(&app.state).await;
        let d = &downloads(&app.state, ann, &big).await[0];
        assert_eq!(d.url_count, 50_001);
        let findings = app.store.list_findings(ann, d.id).await.unwrap();
        assert!(findings.iter().any(|f| f.rule == "too-many-urls"), "{findings:?}");
        assert_eq!(app.store.sitemap(ann, big.id).await.unwrap().url_count, Some(50_001));
        let stored = count_urls(&app.state, ann, &site).await;
        assert_eq!(stored, 50_000);

        // The site's quota: new URLs past it are refused and the download says so.
        app.state.scheduler.url_quota.store(50_010, Ordering::Relaxed);
        let more: Vec<String> = (0..20).map(|n| web.url(&format!("/q{n}"))).collect();
        let listed: Vec<(&str, Option<&str>)> = more.iter().map(|u| (u.as_str(), None)).collect();
        web.put("/more.xml", &urlset(&listed));
        let sm = add(&app.state, ann, &site, &web.url("/more.xml")).await;
        drain(&app.state).await;
        let d = &downloads(&app.state, ann, &sm).await[0];
        let findings = app.store.list_findings(ann, d.id).await.unwrap();
        let quota = findings.iter().find(|f| f.rule == "too-many-urls").expect("a quota finding");
        assert!(quota.message.contains("quota of 50010 URLs: 10 new URLs"), "{}", quota.message);
        assert_eq!(d.status, "errors");
    })
    .await;
}

/// What one backend stored for the poison files, to compare the backends.
type Outcome = Vec<(String, Option<String>, Vec<(String, String)>, Vec<String>)>;

#[tokio::test]
async fn poison_files_give_the_same_result_on_both_backends() {
    let outcomes = Arc::new(std::sync::Mutex::new(Vec::<Outcome>::new()));
    let sink = outcomes.clone();
    each_backend(false, move |app| {
        let sink = sink.clone();
        async move {
            let web = SiteHost::start().await;
            let (ann, site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
            let long = web.url(&format!("/{}", "a".repeat(3_000)));
            let files = [
                // A NUL byte inside a value the finding quotes.
                ("/nul.xml", urlset(&[(&web.url("/n"), Some("2024-01-01\u{0}x"))])),
                ("/nul.txt", format!("{}/t\u{0}u\n", web.origin)),
                // A <loc> past PostgreSQL's btree limit.
                ("/long.xml", urlset(&[(&long, None), (&web.url("/short"), None)])),
                // An index whose child URL is past it too.
                ("/index.xml", index(&[(&long, None), (&web.url("/nul.xml"), None)])),
            ];
            let mut sitemaps = Vec::new();
            for (path, body) in &files {
                web.put(path, body);
                sitemaps.push(add(&app.state, ann, &site, &web.url(path)).await);
            }
            drain(&app.state).await;
            let mut outcome = Outcome::new();
            for sm in &sitemaps {
                let d = downloads(&app.state, ann, sm).await;
                assert_eq!(d.len(), 1, "{}: one download, not retried", sm.url);
                assert!(d[0].status != "failed" || d[0].error.is_some(), "{}: {:?}", sm.url, d[0]);
                let findings = app.store.list_findings(ann, d[0].id).await.unwrap();
                assert!(findings.iter().all(|f| !f.message.contains('\0')));
                let rules = findings.into_iter().map(|f| (f.rule, f.message.replace(&web.origin, "ORIGIN"))).collect();
                let path = sm.url.replace(&web.origin, "");
                let q = UrlQuery { include_removed: true, ..UrlQuery::default() };
                let mut urls: Vec<String> = app
                    .store
                    .list_urls(ann, site.id, q)
                    .await
                    .unwrap()
                    .items
                    .into_iter()
                    .map(|u| u.loc.replace(&web.origin, "ORIGIN"))
                    .collect();
                urls.sort();
                outcome.push((path, Some(d[0].status.clone()), rules, urls));
            }
            let stored: Vec<String> = outcome.last().unwrap().3.clone();
            assert!(stored.iter().any(|u| u.len() > 3_000), "the long URL is stored: {stored:?}");
            let child = outcome[3].2.iter().find(|(rule, _)| rule == "loc-too-long");
            assert!(child.is_some(), "the long child is reported: {:?}", outcome[3]);
            assert_eq!(app.store.list_sitemaps(ann, site.id).await.unwrap().len(), 4, "the long child is not added");
            sink.lock().unwrap().push(outcome);
        }
    })
    .await;
    let outcomes = outcomes.lock().unwrap();
    if outcomes.len() == 2 {
        assert_eq!(outcomes[0], outcomes[1], "SQLite and PostgreSQL give the same result");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_proof_is_noticed_while_many_hosts_never_answer() {
    each_backend(false, |app| async move {
        // 20 sites on hosts that accept connections and never answer.
        let (mut silent, mut silent_sites) = (Vec::new(), Vec::new());
        for n in 0..20 {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let origin = format!("http://{}", listener.local_addr().unwrap());
            silent_sites.push(verified_site(&app.state, &format!("eve{n}@example.com"), &origin).await);
            silent.push(listener);
        }
        let web = SiteHost::start().await;
        let (ann, site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
        // Checked last: behind every silent host.
        app.store.record_verification(site.id, true, 1).await.unwrap();
        let config = jobs::Config {
            workers: 1,
            verify_interval: Duration::from_secs(1),
            verify_timeout: Duration::from_millis(500),
            verify_concurrency: 8,
            recheck: true,
            ..config()
        };
        // Every "host" here is 127.0.0.1, which the outbound gate counts as one host: its
        // budget would hold ann's check past its 500 ms, and a check that does not end in time
        // records no verdict. Hosts apart, each would have its own budget: so here.
        let default = mapwright_server::outbound::Rates::default();
        let state = app.state.clone().with_outbound_rates(mapwright_server::outbound::Rates {
            http_per_host: default.http_per_host.with_limit(100_000),
            http_per_address: default.http_per_address.with_limit(100_000),
            ..default
        });
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let handle = jobs::spawn(state, config, shutdown);
        let took = within(Duration::from_secs(10), "the removed proof noticed", || async {
            app.store.site(ann, site.id).await.unwrap().verified_at.is_none()
        })
        .await;
        eprintln!("{}: removed proof noticed in {took:?}", app.store.backend());
        // The silent hosts' checks ran out of time: no verdict, so each keeps its state (a
        // check that did not end proves nothing gone).
        for (eve, site) in &silent_sites {
            let site = app.store.site(*eve, site.id).await.unwrap();
            assert!(site.verified_at.is_some(), "{} lost its verification to a timeout", site.origin);
        }
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("the scheduler stops").unwrap();
        drop(silent);
    })
    .await;
}

#[tokio::test]
async fn the_retention_task_deletes_old_pings_and_downloads() {
    each_backend(false, |app| async move {
        let web = SiteHost::start().await;
        let (ann, site) = verified_site(&app.state, "ann@example.com", &web.origin).await;
        web.put_etag("/s.xml", &urlset(&[(&web.url("/a"), None)]), Some("\"v1\""));
        let sitemap = add(&app.state, ann, &site, &web.url("/s.xml")).await;
        for _ in 0..4 {
            app.store.resubmit_sitemap(ann, sitemap.id, unix_now()).await.unwrap();
            drain(&app.state).await;
        }
        assert_eq!(downloads(&app.state, ann, &sitemap).await.len(), 4);
        let old = unix_now() - 30 * 24 * 3600;
        app.store.record_ping(&web.url("/s.xml"), "192.0.2.1", old).await.unwrap();
        app.store.record_ping(&web.url("/s.xml"), "192.0.2.1", unix_now()).await.unwrap();

        let mut retention = jobs::retention::Config::default();
        retention.policy.keep_downloads = 2;
        let config = jobs::Config { workers: 1, retention: Some(retention), ..config() };
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let handle = jobs::spawn(app.state.clone(), config, shutdown);
        within(Duration::from_secs(10), "retention applied", || async {
            app.store.pings_for_sitemap_since(&web.url("/s.xml"), 0).await.unwrap() == 1
        })
        .await;
        let kept = downloads(&app.state, ann, &sitemap).await;
        // The two newest (unchanged) and the newest that read the file.
        let statuses: Vec<&str> = kept.iter().map(|d| d.status.as_str()).collect();
        assert_eq!(statuses, ["unchanged", "unchanged", "ok"]);
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(30), handle).await.expect("the scheduler stops").unwrap();
    })
    .await;
}
