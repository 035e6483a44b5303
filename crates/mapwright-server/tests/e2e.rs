//! The console end to end in headless Chromium (Debian's `chromium` and `chromium-driver`,
//! driven over WebDriver by fantoccini): sign up, verify a test site served on 127.0.0.1 (the
//! typed sitemap kept through it, the robots.txt index added), wait for the downloads, read the
//! table (types, an index with a failing child rolled up, a Resubmit per child), the index's
//! page with its tree, a sitemap with a few hundred
//! findings grouped by rule, the background "Check now" and the failing-URLs report, a token,
//! Remove (then Removed with Restore), an error page and deleting a site. Every page is looked
//! at at desktop width and at a phone's 390 px: axe-core finds no serious or critical
//! violation, the phone page never scrolls sideways, and both screenshots are saved.
//!
//! Missing Chromium, ChromeDriver or axe-core fail the test with the command that installs them:
//! it never skips.
//!
//! The set-up every browser test shares lives here once: [`Console`] (ChromeDriver, axe-core,
//! a store, the app on a real listener, an outbox mailer when asked) and its `drive`, which
//! runs a test's steps on a [`Tab`] (signing in, looking at a page) and always closes Chromium.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use mapwright_server::{AppState, app, jobs};
use serde_json::json;

use crate::support::{poll_until, read_outbox, unpaced};
use crate::verify::TestSite;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL: &str = "apt-get install -y chromium chromium-driver (as .ci/run does)";

/// ChromeDriver on a free port, stopped when dropped.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_driver() -> Driver {
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

pub(crate) async fn browser(driver: &Driver, profile: &Path) -> Client {
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
        "--window-size=1366,900",
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

/// The password of every account a browser test puts in the store.
pub(crate) const PASSWORD: &str = "a long enough password";

/// What every browser test stands on, set up in one place: ChromeDriver, axe-core's script, a
/// store in a folder of its own, and the console serving it on a real listener (with a mailer
/// writing to an outbox folder when asked). Dropped, ChromeDriver stops and the folders go.
pub(crate) struct Console {
    pub(crate) state: AppState,
    pub(crate) store: std::sync::Arc<dyn mapwright_store::Store>,
    /// `http://127.0.0.1:PORT`, the console's address.
    pub(crate) base: String,
    /// Where the mailer writes (read it with `support::read_outbox`), when there is one.
    pub(crate) outbox: PathBuf,
    axe_js: String,
    driver: Driver,
    profile: tempfile::TempDir,
    _dir: tempfile::TempDir,
}

/// What a test's steps drive: the browser, the console's address and axe-core's script.
pub(crate) struct Tab {
    pub(crate) c: Client,
    pub(crate) base: String,
    pub(crate) axe_js: String,
}

impl Console {
    /// Starts it all; `mail` gives the app an outbox mailer, `configure` changes the state
    /// before the app serves it.
    pub(crate) async fn start(mail: bool, configure: impl FnOnce(&mut AppState)) -> Console {
        let axe_js = axe_source();
        let driver = start_driver();
        let profile = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = mapwright_store::open(None, dir.path()).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let outbox = dir.path().join("outbox");
        // The journeys verify, set the proof up and verify again at once, as a person does
        // while reading the instructions: "Verify now" unpaced (its pacing has tests of its own).
        let mut state = unpaced(AppState::new(store.clone(), false).allow_private_networks());
        if mail {
            let from = "mapwright <mapwright@localhost>";
            state = state.with_mail(mapwright_server::mail::Mailer::outbox(&outbox, from, &base).unwrap());
        }
        configure(&mut state);
        let service = app(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, service).await.unwrap() });
        Console { state, store, base, outbox, axe_js, driver, profile, _dir: dir }
    }

    /// A user with [`PASSWORD`], made in the store at `now`.
    pub(crate) async fn user(&self, email: &str, now: i64) -> mapwright_store::Actor {
        let hash = mapwright_store::secret::hash_password(PASSWORD).unwrap();
        mapwright_store::Actor::from(&self.store.create_user(email, &hash, false, now).await.unwrap())
    }

    /// Runs `steps` in a fresh headless Chromium on a task of their own, closes the browser
    /// even when a step fails (so no Chromium outlives the test), then fails as the step did.
    pub(crate) async fn drive<F, Fut>(&self, steps: F)
    where
        F: FnOnce(Tab) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let c = browser(&self.driver, self.profile.path()).await;
        let tab = Tab { c: c.clone(), base: self.base.clone(), axe_js: self.axe_js.clone() };
        let outcome = tokio::spawn(steps(tab)).await;
        let _ = c.close().await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}

impl Tab {
    /// Signs in through the form as `email` (with [`PASSWORD`]) and waits for the table.
    pub(crate) async fn sign_in(&self, email: &str) {
        let c = &self.c;
        c.goto(&format!("{}/signin", self.base)).await.unwrap();
        fill(c, "#email", email).await;
        fill(c, "#password", PASSWORD).await;
        click(c, Locator::Css("main form button[type=submit]")).await;
        until(c, "h1", |t| t == "My sitemaps").await;
    }

    /// [`look`] at the page as it is.
    pub(crate) async fn look(&self, name: &str) {
        look(&self.c, &self.axe_js, name).await;
    }

    /// [`look`] at 1366x900 first (then at the phone's width, as `look` does).
    pub(crate) async fn look_wide(&self, name: &str) {
        self.c.set_window_size(1366, 900).await.unwrap();
        self.look(name).await;
    }
}

/// The axe-core script from `tests/e2e/node_modules` (`npm ci` there installs it).
pub(crate) fn axe_source() -> String {
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
    // Evaluated by WebDriver itself, not through a <script> element: the console's
    // Content-Security-Policy allows no script, and a test must not need it to.
    c.execute(
        &format!(
            "{axe}\n;if (typeof window.axe === 'undefined' && typeof axe !== 'undefined') {{ window.axe = axe; }}"
        ),
        vec![],
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
pub(crate) async fn find(c: &Client, locator: Locator<'_>) -> fantoccini::elements::Element {
    match c.wait().at_most(Duration::from_secs(60)).for_element(locator).await {
        Ok(element) => element,
        Err(e) => panic!("no element {locator:?} on {:?}: {e}", c.current_url().await.ok()),
    }
}

async fn text(c: &Client, css: &str) -> String {
    find(c, Locator::Css(css)).await.text().await.unwrap()
}

/// The text of `css` once it satisfies `ready` (a click's navigation ends later than the click).
pub(crate) async fn until(c: &Client, css: &str, ready: impl Fn(&str) -> bool) -> String {
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

pub(crate) async fn click(c: &Client, locator: Locator<'_>) {
    find(c, locator).await.click().await.unwrap();
}

pub(crate) async fn fill(c: &Client, css: &str, value: &str) {
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

/// A sitemap with a few hundred findings of five rules (errors and warnings).
fn broken_xml(o: &str) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for i in 0..120 {
        xml.push_str(&format!("<url><loc>/relative-page-{i}</loc></url>\n"));
    }
    for i in 0..80 {
        xml.push_str(&format!("<url><loc>{o}/d{i}</loc><lastmod>yesterday</lastmod></url>\n"));
    }
    for i in 0..60 {
        xml.push_str(&format!("<url><loc>{o}/c{i}</loc><changefreq>sometimes</changefreq></url>\n"));
    }
    for i in 0..40 {
        xml.push_str(&format!("<url><loc>{o}/p{i}</loc><priority>1.5</priority></url>\n"));
    }
    for i in 0..30 {
        xml.push_str(&format!("<url><loc>{o}/f{i}</loc><lastmod>2999-01-01</lastmod></url>\n"));
    }
    xml.push_str("</urlset>\n");
    xml
}

/// The table row of a sitemap URL (the first cell's first link is the sitemap's page).
fn row(url: &str) -> String {
    format!("//tr[td[1]/a[1][normalize-space(.)='{url}']]")
}

/// What makes a page hard to read at the window's width, found by measuring it: a card's cell
/// whose label (its `::before`) is taller than the cell, so it runs into the next one; a
/// chart's text under 10.5 px on the screen once the picture is scaled; chart text that
/// leaves its picture.
const LEGIBILITY_JS: &str = r#"
const out = [];
for (const td of document.querySelectorAll('table.cards > tbody > tr > td[data-label]')) {
  const before = getComputedStyle(td, '::before');
  if (before.content === 'none' || getComputedStyle(td).display === 'table-cell') continue;
  const label = parseFloat(before.height) + parseFloat(getComputedStyle(td).paddingTop);
  if (label > td.getBoundingClientRect().height + 0.5) out.push('label runs out of its cell: ' + td.dataset.label);
}
for (const svg of document.querySelectorAll('.chart svg')) {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll('text')) {
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < 10.5) out.push('chart text of ' + px.toFixed(1) + ' px: ' + t.textContent);
    const r = t.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1) out.push('chart text leaves its picture: ' + t.textContent);
  }
}
return out;
"#;

async fn illegible(c: &Client) -> Vec<serde_json::Value> {
    let found = c.execute(LEGIBILITY_JS, vec![]).await.unwrap();
    found.as_array().cloned().unwrap_or_default()
}

/// Every page is looked at twice: at desktop width and at a phone's 390 px. Each time axe-core
/// must find nothing serious, and on the phone the page must not scroll sideways. Both
/// screenshots are saved.
pub(crate) async fn look(c: &Client, axe_js: &str, name: &str) {
    axe(c, axe_js, name).await;
    let bad = illegible(c).await;
    assert!(bad.is_empty(), "the {name} page is hard to read: {bad:?}");
    save_png(&format!("{name}.png"), &c.screenshot().await.unwrap());
    // The page's HTML beside its pictures, to look at a whole page (a screenshot shows the
    // window only) with `chromium --headless --screenshot` at any size.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-screenshots");
    std::fs::write(dir.join(format!("{name}.html")), c.source().await.unwrap()).unwrap();
    c.set_window_size(390, 844).await.unwrap();
    let widths = c
        .execute(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth, window.innerWidth];",
            vec![],
        )
        .await
        .unwrap();
    let (scroll, client) = (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap());
    assert!(widths[2].as_i64().unwrap() <= 400, "the window did not shrink to a phone's width: {widths}");
    assert!(scroll <= client, "the {name} page scrolls sideways on a phone: {scroll} px wide in {client} px");
    axe(c, axe_js, &format!("{name} on a phone")).await;
    let bad = illegible(c).await;
    assert!(bad.is_empty(), "the {name} page is hard to read on a phone: {bad:?}");
    save_png(&format!("{name}-phone.png"), &c.screenshot().await.unwrap());
    c.set_window_size(1366, 900).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_headless_chromium() {
    // The test site: robots.txt names an index whose second child fails; a good sitemap (one
    // URL answers 404), one with a few hundred findings, an RSS feed.
    let site = TestSite::start().await;
    let o = site.origin.clone();
    for page in ["/", "/a", "/b", "/c1/x", "/c1/y"] {
        site.put(page, "<!doctype html><title>page</title>");
    }
    site.put("/robots.txt", &format!("User-agent: *\nSitemap: {o}/index.xml\n"));
    site.put("/index.xml", &crate::sitehost::index(&[(&format!("{o}/c1.xml"), None), (&format!("{o}/c2.xml"), None)]));
    site.put(
        "/c1.xml",
        &format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>{o}/c1/x</loc><image:image><image:loc>{o}/x.png</image:loc></image:image>
<xhtml:link rel="alternate" hreflang="de" href="{o}/c1/y"/></url>
<url><loc>{o}/c1/y</loc></url>
</urlset>"#
        ),
    );
    site.put("/sitemap.xml", &sitemap_xml(&o, &["/a", "/b", "/missing"]));
    site.put("/broken.xml", &broken_xml(&o));
    site.put(
        "/feed.rss",
        &format!(
            r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>{o}/</link><description>d</description>
<item><title>a</title><link>{o}/a</link></item><item><title>b</title><link>{o}/b</link></item></channel></rss>"#
        ),
    );

    // The console on a real listener, with the scheduler's workers downloading in the background.
    // Sign-up mail goes to an outbox folder, where the test reads the link as an operator would.
    let console = Console::start(true, |_| {}).await;
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let config = jobs::Config { poll_interval: std::time::Duration::from_millis(200), ..Default::default() };
    let background = jobs::spawn(console.state.clone(), config, shutdown);
    let outbox = console.outbox.clone();
    console.drive(|tab| async move { walk_through(&tab.c, &tab.base, &site, &tab.axe_js, &outbox).await }).await;
    let _ = stop.send(true);
    let _ = background.await;
}

async fn walk_through(c: &Client, base: &str, site: &TestSite, axe_js: &str, outbox: &Path) {
    let o = &site.origin;
    let good = format!("{o}/sitemap.xml");
    let broken = format!("{o}/broken.xml");
    let index = format!("{o}/index.xml");
    let feed = format!("{o}/feed.rss");

    // The accessibility check can fail: an unlabelled field is a critical violation.
    c.goto("data:text/html,<!doctype html><html lang=en><title>t</title><main><input type=text></main></html>")
        .await
        .unwrap();
    let bad = axe_violations(c, axe_js, "control").await;
    assert!(bad.iter().any(|v| v.as_str().unwrap().contains("label")), "axe-core missed an unlabelled field: {bad:?}");
    // So can the legibility check: a label that runs into the next cell, text 6 px high.
    let cramped = "data:text/html,<!doctype html><html lang=en><title>t</title><style>\
        td{display:block;position:relative;padding-left:7.5rem;min-height:2rem}\
        td::before{content:attr(data-label);position:absolute;left:0;width:7rem}</style>\
        <table class=cards><tbody><tr><td data-label='A label far too long for its column'>x</td></tr></tbody></table>\
        <figure class=chart><svg viewBox='0 0 600 100' style='width:300px'><text x=0 y=50 font-size=12>tiny</text></svg></figure>";
    c.goto(cramped).await.unwrap();
    let bad = illegible(c).await;
    assert!(bad.len() == 2, "the legibility check missed a cramped label or tiny text: {bad:?}");
    // So can the sideways-scroll check: a page wider than a phone.
    c.goto("data:text/html,<!doctype html><html lang=en><title>t</title><main><div style='width:800px'>wide</div></main></html>")
        .await
        .unwrap();
    c.set_window_size(390, 844).await.unwrap();
    let wide = c
        .execute("return document.documentElement.scrollWidth > document.documentElement.clientWidth;", vec![])
        .await
        .unwrap();
    assert_eq!(wide, json!(true), "the sideways-scroll check cannot fail");
    c.set_window_size(1366, 900).await.unwrap();

    // Sign up (and check the sign-in page on the way).
    c.goto(&format!("{base}/")).await.unwrap();
    assert!(c.current_url().await.unwrap().path() == "/signin", "an anonymous visit goes to sign-in");
    look(c, axe_js, "signin").await;
    click(c, Locator::LinkText("No account yet? Sign up")).await;
    fill(c, "#email", "owner@example.com").await;
    fill(c, "#password", "a long enough password").await;
    click(c, Locator::Css("main form button[type=submit]")).await;
    until(c, "h1", |t| t == "Check your inbox").await;
    look(c, axe_js, "signup-sent").await;
    // The mailed link opens the confirmation form; the same password makes the account.
    let link = poll_until(Duration::from_secs(5), || async { read_outbox(outbox).pop().and_then(|m| m.link_token()) })
        .await
        .expect("a sign-up mail with its link in the outbox");
    c.goto(&format!("{base}/signup/confirm?token={link}")).await.unwrap();
    until(c, "h1", |t| t == "Confirm your account").await;
    look(c, axe_js, "signup-confirm").await;
    fill(c, "#password", "a long enough password").await;
    click(c, Locator::Css("main form button[type=submit]")).await;
    until(c, "h1", |t| t == "My sitemaps").await;
    look(c, axe_js, "table-empty").await;

    // Adding the sitemap of an unverified site adds the site and says to verify it; the typed
    // sitemap is kept through verification.
    c.goto(&format!("{base}/sitemaps/add")).await.unwrap();
    fill(c, "#url", &good).await;
    click(c, Locator::Css("main form button[type=submit]")).await;
    until(c, ".flash", |t| t.ends_with("is not verified yet.")).await;
    assert!(c.find_all(Locator::Css(".error")).await.unwrap().is_empty(), "no red box for the first step");
    until(c, "#pending-add", |t| t.ends_with("is added as soon as the site is verified.")).await;
    look(c, axe_js, "add-verify-first").await;
    // Without the proof: an error in plain words.
    click(c, Locator::XPath("//button[text()='Verify now']")).await;
    until(c, "#flash-error", |t| t.starts_with("Not verified: ")).await;
    look(c, axe_js, "verify-failed").await;
    let token = text(c, "dl.facts dd code").await;
    site.put(&format!("/mapwright-{token}.html"), &token);
    click(c, Locator::XPath("//button[text()='Verify now']")).await;
    let verified = until(c, ".flash", |t| t.starts_with("Verified:")).await;
    assert!(verified.contains(&format!("Added from its robots.txt: {index}")), "{verified}");
    assert!(verified.contains(&format!("Added {good}")), "the typed sitemap survived verification: {verified}");

    // Add the others; wait for every download (the index's children too).
    for url in [&broken, &feed] {
        c.goto(&format!("{base}/sitemaps/add")).await.unwrap();
        fill(c, "#url", url).await;
        click(c, Locator::Css("main form button[type=submit]")).await;
        until(c, ".flash", |t| t.starts_with("Added")).await;
    }
    // A status badge, not the table's filter form (whose status list offers "Pending").
    poll_page(c, &format!("{base}/"), "every download", |html| {
        !html.contains(">Pending</span>") && html.contains("c2.xml")
    })
    .await;
    let row_text = |url: String| async move { c.find(Locator::XPath(&row(&url))).await.unwrap().text().await.unwrap() };
    let good_row = row_text(good.clone()).await;
    assert!(good_row.contains("Success") && good_row.contains(" 3 ") && good_row.contains("Sitemap"), "{good_row}");
    let broken_row = row_text(broken.clone()).await;
    assert!(broken_row.contains("Has errors") && broken_row.contains("300 errors"), "{broken_row}");
    let index_row = row_text(index.clone()).await;
    // The index itself loaded: the row says where the trouble is, not "Couldn't fetch".
    assert!(index_row.contains("Sitemap index") && index_row.contains("Has errors"), "rolled up: {index_row}");
    assert!(
        index_row.contains("1 of 2 sitemaps it lists couldn't be fetched") && !index_row.contains("Couldn't fetch"),
        "{index_row}"
    );
    assert!(index_row.contains(" 2 "), "the children's URLs: {index_row}");
    assert!(row_text(feed.clone()).await.contains("RSS"));
    // The index's children are collapsed beneath it.
    assert!(!c.find(Locator::XPath(&row(&format!("{o}/c2.xml")))).await.unwrap().is_displayed().await.unwrap());
    click(c, Locator::Css("tr.children summary")).await;
    let child = row_text(format!("{o}/c1.xml")).await;
    assert!(child.contains("image") && child.contains("hreflang") && child.contains("Success"), "{child}");
    // Every child row has its own Resubmit.
    for c_url in [format!("{o}/c1.xml"), format!("{o}/c2.xml")] {
        let label = format!("Resubmit {c_url}");
        assert!(c.find(Locator::Css(&format!("tr.children button[aria-label='{label}']"))).await.is_ok(), "{label}");
    }
    look(c, axe_js, "table").await;

    // The broken sitemap's page: a few hundred findings as five groups, worst first.
    click(c, Locator::XPath(&format!("{}/td[1]/a[1]", row(&broken)))).await;
    until(c, "h1", |t| t == broken).await;
    let groups = c.find_all(Locator::Css("section.group h3")).await.unwrap();
    assert!(groups.len() >= 5, "five rules at least, {} groups", groups.len());
    let first = groups[0].text().await.unwrap();
    assert!(first.contains("loc-not-absolute") && first.contains("120 findings"), "{first}");
    let examples = c.find_all(Locator::Css("ul.examples li")).await.unwrap().len();
    assert!(examples <= 3 * groups.len(), "a few examples per rule, not {examples} rows");
    let findings = text(c, "#findings ~ section.group").await;
    assert!(findings.contains("3:") && findings.contains("How to fix"), "{findings}");
    look(c, axe_js, "sitemap").await;
    click(c, Locator::LinkText("All 120 findings of loc-not-absolute")).await;
    until(c, "h1", |t| t.contains("loc-not-absolute")).await;
    assert_eq!(c.find_all(Locator::Css("tbody tr")).await.unwrap().len(), 100);
    look(c, axe_js, "findings-of-a-rule").await;

    // The index's page, rolled up, with its children.
    c.goto(&format!("{base}/")).await.unwrap();
    click(c, Locator::XPath(&format!("{}/td[1]/a[1]", row(&index)))).await;
    until(c, "#children", |t| t == "Sitemaps in this index").await;
    // Its tree: the roll-up above, the file's own read apart, the URLs of its sitemaps, the
    // picture of the roll-up; nothing below contradicts the top.
    let facts = text(c, "dl.facts").await;
    assert!(facts.contains("Has errors") && facts.contains("2 in 2 sitemaps of the index"), "{facts}");
    let own = text(c, "#this-file").await;
    assert!(own.contains("Success") && own.contains("Sitemaps it lists"), "{own}");
    let urls = text(c, "#urls ~ table").await;
    assert!(urls.contains(&format!("{o}/c1/x")) && urls.contains(&format!("{o}/c1/y")), "{urls}");
    // An SVG <desc> is not rendered, so WebDriver's text is empty: its content is read.
    let desc = c.execute("return document.getElementById('urls-chart-desc').textContent;", vec![]).await.unwrap();
    assert!(desc.as_str().unwrap_or("").starts_with("2 URL entries in the index's sitemaps"), "{desc}");
    let page = text(c, "main").await;
    assert!(!page.contains("No URLs"), "{page}");
    look(c, axe_js, "index").await;
    click(c, Locator::Css(&format!("#children ~ table button[aria-label='Resubmit {o}/c2.xml']"))).await;
    until(c, ".flash", |t| t.starts_with(&format!("Resubmitted {o}/c2.xml"))).await;

    // The site: findings across its sitemaps, Check now in the background, the report by kind.
    c.goto(&format!("{base}/")).await.unwrap();
    click(c, Locator::XPath(&format!("{}/td[2]/a", row(&good)))).await;
    until(c, "h2", |t| t == "Verification").await;
    click(c, Locator::XPath("//button[text()='Check now']")).await;
    until(c, ".flash, #flash-error", |t| t.starts_with("The check started")).await;
    let mut site_url = c.current_url().await.unwrap();
    site_url.set_fragment(None);
    poll_page(c, site_url.as_str(), "the check's result", |html| html.contains("id=\"check-result\"")).await;
    let report = text(c, "#failing ~ table").await;
    assert!(report.contains(&format!("{o}/missing")) && report.contains("404"), "{report}");
    assert!(report.contains(&good), "the report names the sitemap listing the URL: {report}");
    assert!(text(c, "nav.kinds").await.contains("404 Not found ("));
    look(c, axe_js, "site").await;

    // Account page: a token, shown once after a redirect; revoking asks first.
    c.goto(&format!("{base}/account")).await.unwrap();
    fill(c, "#token-name", "ci").await;
    click(c, Locator::XPath("//button[text()='Create token']")).await;
    until(c, "code.secret", |t| t.len() == 64).await;
    assert_eq!(c.current_url().await.unwrap().path(), "/account");
    look(c, axe_js, "account").await;
    c.refresh().await.unwrap();
    assert!(c.find(Locator::Css("code.secret")).await.is_err(), "a reload shows the secret no more");
    click(c, Locator::XPath("//a[text()='Revoke']")).await;
    until(c, "h1", |t| t == "Revoke this token?").await;
    look(c, axe_js, "revoke").await;
    click(c, Locator::XPath("//button[text()='Revoke token']")).await;
    until(c, ".flash", |t| t.contains("revoked")).await;

    // Resubmit, then Remove with its confirmation: the row says Removed and offers Restore.
    c.goto(&format!("{base}/")).await.unwrap();
    click(c, Locator::XPath(&format!("{}//button[text()='Resubmit']", row(&good)))).await;
    until(c, ".flash", |t| t.starts_with("Resubmitted")).await;
    click(c, Locator::XPath(&format!("{}//a[text()='Remove']", row(&good)))).await;
    until(c, "h1", |t| t == "Remove this sitemap?").await;
    look(c, axe_js, "remove").await;
    click(c, Locator::XPath("//button[text()='Remove sitemap']")).await;
    until(c, ".flash", |t| t.starts_with("Removed")).await;
    let removed = row_text(good.clone()).await;
    assert!(removed.contains("Removed") && removed.contains("Restore"), "{removed}");
    look(c, axe_js, "table-removed").await;

    // Errors are pages with the navigation; deleting a site asks first.
    c.goto(&format!("{base}/no/such/page")).await.unwrap();
    until(c, "h1", |t| t == "Page not found").await;
    assert!(c.find(Locator::Css("header nav a[href='/account']")).await.is_ok());
    look(c, axe_js, "not-found").await;
    c.goto(&format!("{base}/")).await.unwrap();
    click(c, Locator::XPath(&format!("{}/td[2]/a", row(&broken)))).await;
    click(c, Locator::LinkText("Delete site")).await;
    until(c, "h1", |t| t == "Delete this site?").await;
    look(c, axe_js, "delete-site").await;

    eprintln!("screenshots in {}", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-screenshots").display());
}
