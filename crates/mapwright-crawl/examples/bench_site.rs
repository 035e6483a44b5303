//! A generated site for the crawl benchmark (`bench/crawl/`): N pages of about 5 KiB made on
//! the fly by axum on 127.0.0.1, so both crawlers see the same site without 100,000 files.
//!
//! Page 0 is `/`, page i is `/page/i.html`; each links to its ten children (a tree: every page
//! is reachable), ten pseudo-random "related" pages, the home page and six sections.
//! Usage: `cargo run --release -p mapwright-crawl --example bench_site -- PORT PAGES`.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use std::fmt::Write;
use std::sync::Arc;

fn url(i: u64) -> String {
    if i == 0 { "/".to_string() } else { format!("/page/{i}.html") }
}

fn page(i: u64, n: u64) -> String {
    let mut s = String::with_capacity(6000);
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Page {i}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"description\" content=\"Page {i} of the benchmark site\">\
         <link rel=\"canonical\" href=\"{}\"><link rel=\"stylesheet\" href=\"/site.css\">\
         <script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments)}}</script>\
         </head><body><header><nav><a href=\"/\">Home</a>",
        url(i)
    );
    for sct in 1..=6 {
        let _ = write!(s, " <a class=\"nav\" href=\"{}\">Section {sct}</a>", url(sct));
    }
    s.push_str("</nav></header><main><article><h1>A page</h1>");
    for p in 0..6 {
        s.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.");
        let r = (i * 7919 + p * 104_729) % n;
        let _ = write!(s, " See <a href=\"{}\">related page {r}</a>.</p>", url(r));
    }
    s.push_str("<ul class=\"children\">");
    for c in (i * 10 + 1)..=(i * 10 + 10) {
        if c < n {
            let _ = write!(s, "<li><a href=\"{}\">Child {c}</a></li>", url(c));
        }
    }
    s.push_str("</ul><aside><h2>Related</h2><ul>");
    for k in 6..10 {
        let r = (i * 7919 + k * 104_729) % n;
        let _ = write!(s, "<li><a href=\"{}\">Related {r}</a></li>", url(r));
    }
    s.push_str("</ul></aside></article></main><footer><p>&copy; 2026 Benchmark site</p></footer></body></html>");
    s
}

async fn home(State(n): State<Arc<u64>>) -> axum::response::Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page(0, *n)).into_response()
}

async fn serve(State(n): State<Arc<u64>>, Path(p): Path<String>) -> axum::response::Response {
    let i = p.strip_suffix(".html").and_then(|x| x.parse::<u64>().ok()).filter(|i| *i > 0 && *i < *n);
    match i {
        Some(i) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page(i, *n)).into_response(),
        None => (axum::http::StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().and_then(|a| a.parse().ok()).unwrap_or(8099);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let app = axum::Router::new()
        .route("/", axum::routing::get(home))
        .route("/page/{p}", axum::routing::get(serve))
        .route("/robots.txt", axum::routing::get(|| async { "User-agent: *\nAllow: /\n" }))
        .with_state(Arc::new(n));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
    eprintln!("bench_site: {n} pages on http://127.0.0.1:{port}/");
    axum::serve(listener, app).await.expect("serve");
}
