//! The console end to end in headless Chromium (Debian's `chromium` and `chromium-driver`,
//! driven over WebDriver by fantoccini): sign up, verify a test site served on 127.0.0.1, add
//! its sitemaps, wait for the download, read the table, a sitemap's findings, the failing-URLs
//! report, Resubmit and Remove; screenshots of the table and of a sitemap page are saved, and
//! axe-core checks the main pages for serious or critical accessibility violations.
//!
//! Missing Chromium, ChromeDriver or axe-core fail the test with the command that installs them:
//! it never skips.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use mapwright_server::{AppState, app, scheduler};
use serde_json::json;

use crate::verify::TestSite;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL: &str = "apt-get install -y chromium chromium-driver (as .ci/run does)";

/// ChromeDriver on a free port, stopped when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver() -> Driver {
    for path in [CHROMIUM, CHROMEDRIVER] {
        assert!(Path::new(path).exists(), "{path} is missing: install it with `{INSTALL}`");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}; install it with `{INSTALL}`"));
    let driver = Driver { child, url: format!("http://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not listen on port {port} within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver
}

async fn browser(driver: &Driver, profile: &Path) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ];
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let caps = json!({ "goog:chromeOptions": { "binary": CHROMIUM, "args": args } });
    let serde_json::Value::Object(caps) = caps else { unreachable!() };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|e| panic!("cannot start headless Chromium through chromedriver: {e}"))
}

/// The axe-core script from `tests/e2e/node_modules` (`npm ci` there installs it).
fn axe_source() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; install axe-core with `cd crates/mapwright-server/tests/e2e && npm ci` (as .ci/run does)",
            path.display()
        )
    })
}

/// Runs axe-core on the current page; fails on any serious or critical violation.
async fn axe(c: &Client, axe: &str, page: &str) {
    let bad = axe_violations(c, axe, page).await;
    assert!(bad.is_empty(), "accessibility violations on the {page} page: {bad:#?}");
}

/// The serious and critical violations axe-core finds on the current page.
async fn axe_violations(c: &Client, axe: &str, page: &str) -> Vec<serde_json::Value> {
    c.execute(
        "const s = document.createElement('script'); s.text = arguments[0]; document.head.appendChild(s);",
        vec![json!(axe)],
    )
    .await
    .unwrap();
    let script = "const done = arguments[arguments.length - 1];
        axe.run(document, { resultTypes: ['violations'] })
          .then(r => done({ ok: true, bad: r.violations
            .filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', ')) }))
          .catch(e => done({ ok: false, bad: ['axe failed: ' + e] }));";
    let result = c.execute_async(script, vec![]).await.unwrap();
    assert_eq!(result["ok"], json!(true), "axe-core did not run on {page}: {result}");
    result["bad"].as_array().unwrap().clone()
}

/// Waits until `check` holds on a freshly loaded `url`, polling every half second.
async fn poll_page(c: &Client, url: &str, what: &str, check: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        c.goto(url).await.unwrap();
        let html = c.source().await.unwrap();
        if check(&html) {
            return html;
        }
        assert!(Instant::now() < deadline, "waited 90 s for {what} on {url}; last page: {html}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// An element, waited for up to 60 s (pages load slowly on a busy machine).
async fn find(c: &Client, locator: Locator<'_>) -> fantoccini::elements::Element {
    match c.wait().at_most(Duration::from_secs(60)).for_element(locator).await {
        Ok(element) => element,
        Err(e) => panic!("no element {locator:?} on {:?}: {e}", c.current_url().await.ok()),
    }
}

async fn text(c: &Client, css: &str) -> String {
    find(c, Locator::Css(css)).await.text().await.unwrap()
}

/// The text of `css` once it satisfies `ready` (a click's navigation ends later than the click).
async fn until(c: &Client, css: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(element) = c.find(Locator::Css(css)).await {
            if let Ok(text) = element.text().await {
                if ready(&text) {
                    return text;
                }
            }
        }
        if Instant::now() > deadline {
            panic!(
                "waited 60 s for {css} on {:?}: {}",
                c.current_url().await.ok(),
                c.source().await.unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn click(c: &Client, locator: Locator<'_>) {
    find(c, locator).await.click().await.unwrap();
}

async fn fill(c: &Client, css: &str, value: &str) {
    let field = find(c, Locator::Css(css)).await;
    field.clear().await.unwrap();
    field.send_keys(value).await.unwrap();
}

fn save_png(name: &str, png: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, png).unwrap();
    let written = std::fs::read(&path).unwrap();
    assert!(written.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", path.display());
    assert!(written.len() > 10_000, "{} has only {} bytes", path.display(), written.len());
    path
}

fn sitemap_xml(origin: &str, paths: &[&str]) -> String {
    let urls: String = paths.iter().map(|p| format!("<url><loc>{origin}{p}</loc></url>")).collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>"#
    )
}

/// The table row of a sitemap URL.
fn row(url: &str) -> String {
    format!("//tr[td/a[normalize-space(text())='{url}']]")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_headless_chromium() {
    let axe_js = axe_source();
    let driver = start_driver();
    let profile = tempfile::tempdir().unwrap();

    // The test site: a good sitemap (one URL answers 404) and a broken one.
    let site = TestSite::start().await;
    let o = site.origin.clone();
    for page in ["/", "/a", "/b"] {
        site.put(page, "<!doctype html><title>page</title>");
    }
    site.put("/sitemap.xml", &sitemap_xml(&o, &["/a", "/b", "/missing"]));
    let broken = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{o}/a</loc></url>
<url><loc>/relative-page</loc></url>
</urlset>"#
    );
    site.put("/broken.xml", &broken);

    // The console on a real listener, with the scheduler's workers downloading in the background.
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(None, dir.path()).await.unwrap();
    let state = AppState::new(store.clone(), false).allow_private_networks();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let service = app(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let config = scheduler::Config { poll_interval: std::time::Duration::from_millis(200), ..Default::default() };
    let background = scheduler::spawn(state.clone(), config, shutdown);

    let c = browser(&driver, profile.path()).await;
    // The browser is closed even when a step fails, so no Chromium outlives the test.
    let session = c.clone();
    let outcome = tokio::spawn(async move { drive(&session, &base, &site, &axe_js).await }).await;
    let _ = c.close().await;
    let _ = stop.send(true);
    let _ = background.await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn drive(c: &Client, base: &str, site: &TestSite, axe_js: &str) {
    let o = &site.origin;
    let good = format!("{o}/sitemap.xml");
    let broken = format!("{o}/broken.xml");

    // The accessibility check can fail: an unlabelled field is a critical violation.
    c.goto("data:text/html,<!doctype html><html lang=en><title>t</title><main><input type=text></main></html>")
        .await
        .unwrap();
    let bad = axe_violations(c, axe_js, "control").await;
    assert!(bad.iter().any(|v| v.as_str().unwrap().contains("label")), "axe-core missed an unlabelled field: {bad:?}");

    // Sign up (and check the sign-in page on the way).
    c.goto(&format!("{base}/")).await.unwrap();
    assert!(c.current_url().await.unwrap().path() == "/signin", "an anonymous visit goes to sign-in");
    axe(c, axe_js, "sign-in").await;
    click(c, Locator::LinkText("No account yet? Sign up")).await;
    fill(c, "#email", "owner@example.com").await;
    fill(c, "#password", "a long enough password").await;
    click(c, Locator::Css("main form button[type=submit]")).await;
    until(c, "h1", |t| t == "My sitemaps").await;

    // Adding the sitemap of an unverified site adds the site and says to verify it.
    c.goto(&format!("{base}/sitemaps/add")).await.unwrap();
    fill(c, "#url", &good).await;
    click(c, Locator::Css("main form button[type=submit]")).await;
    until(c, "#add-error", |t| t.contains("is not verified yet")).await;
    click(c, Locator::Css("#add-error a")).await;
    until(c, "h2", |t| t == "Verification").await;
    let token = text(c, "dl.facts dd code").await;
    site.put(&format!("/mapwright-{token}.html"), &token);
    click(c, Locator::XPath("//button[text()='Verify now']")).await;
    until(c, ".flash", |t| t.starts_with("Verified:")).await;
    axe(c, axe_js, "site").await;

    // Add both sitemaps; wait for their downloads.
    for url in [&good, &broken] {
        c.goto(&format!("{base}/sitemaps/add")).await.unwrap();
        fill(c, "#url", url).await;
        click(c, Locator::Css("main form button[type=submit]")).await;
        until(c, ".flash", |t| t.starts_with("Added")).await;
    }
    poll_page(c, &format!("{base}/"), "both downloads", |html| !html.contains("Pending")).await;
    let good_row = c.find(Locator::XPath(&row(&good))).await.unwrap().text().await.unwrap();
    assert!(good_row.contains("OK") && good_row.contains(" 3 "), "status OK and 3 URLs: {good_row}");
    assert!(good_row.contains("web") && good_row.contains("just now"), "{good_row}");
    let broken_row = c.find(Locator::XPath(&row(&broken))).await.unwrap().text().await.unwrap();
    assert!(broken_row.contains("error"), "the broken sitemap has errors: {broken_row}");
    axe(c, axe_js, "sitemaps table").await;
    let table_png = save_png("table.png", &c.screenshot().await.unwrap());
    // On a phone's width the page does not scroll sideways: only the table's own box does.
    c.set_window_size(390, 844).await.unwrap();
    let overflow = c.execute("return document.documentElement.scrollWidth - window.innerWidth;", vec![]).await.unwrap();
    assert!(overflow.as_i64().unwrap() <= 0, "the page is wider than a phone's screen by {overflow} px");
    axe(c, axe_js, "sitemaps table on a phone").await;
    save_png("table-phone.png", &c.screenshot().await.unwrap());
    c.set_window_size(1280, 900).await.unwrap();

    // The broken sitemap's page names the rule, with line and column and its explanation.
    click(c, Locator::LinkText(&broken)).await;
    until(c, "h1", |t| t == broken).await;
    let findings = text(c, "#findings + .scroll").await;
    assert!(findings.contains("loc-not-absolute") && findings.contains("3:"), "{findings}");
    assert!(c.source().await.unwrap().contains("About loc-not-absolute"));
    axe(c, axe_js, "sitemap").await;
    let sitemap_png = save_png("sitemap.png", &c.screenshot().await.unwrap());

    // The failing-URLs report of the site shows the 404.
    click(c, Locator::Css(".crumbs a[href^='/sites/']")).await;
    until(c, "h2", |t| t == "Verification").await;
    click(c, Locator::XPath("//button[text()='Check now']")).await;
    until(c, ".flash", |t| t.starts_with("Checked")).await;
    let report = text(c, "#failing ~ .scroll").await;
    assert!(report.contains(&format!("{o}/missing")) && report.contains("404"), "{report}");
    assert!(report.contains(&good), "the report names the sitemap listing the URL: {report}");

    // Account page, and a token.
    c.goto(&format!("{base}/account")).await.unwrap();
    fill(c, "#token-name", "ci").await;
    click(c, Locator::XPath("//button[text()='Create token']")).await;
    until(c, "code.secret", |t| t.len() == 64).await;
    axe(c, axe_js, "account").await;

    // Resubmit, then Remove with its confirmation.
    c.goto(&format!("{base}/")).await.unwrap();
    click(c, Locator::XPath(&format!("{}//button[text()='Resubmit']", row(&good)))).await;
    until(c, ".flash", |t| t.starts_with("Resubmitted")).await;
    click(c, Locator::XPath(&format!("{}//a[text()='Remove']", row(&good)))).await;
    until(c, "h1", |t| t == "Remove this sitemap?").await;
    click(c, Locator::XPath("//button[text()='Remove sitemap']")).await;
    until(c, ".flash", |t| t.starts_with("Removed")).await;
    assert!(c.find(Locator::XPath(&row(&good))).await.is_err(), "the removed sitemap left the table");
    assert!(c.find(Locator::XPath(&row(&broken))).await.is_ok());

    eprintln!("screenshots: {} {}", table_png.display(), sitemap_png.display());
}
