//! The test site on 127.0.0.1 of every server test: path -> body (with an optional ETag, so
//! conditional requests get 304) that the test changes while it runs, and a count of the
//! requests per path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

/// Path -> (body, ETag).
type Pages = HashMap<String, (String, Option<String>)>;

#[derive(Clone, Default)]
pub struct SiteHost {
    pages: Arc<Mutex<Pages>>,
    hits: Arc<Mutex<HashMap<String, u32>>>,
    /// When each request per path arrived: intervals between fetches measured where they happen,
    /// not where a test polling on a busy machine notices them.
    times: Arc<Mutex<HashMap<String, Vec<std::time::Instant>>>>,
    /// While set, answers wait (a worker then holds its lease).
    pub hold: Arc<std::sync::atomic::AtomicBool>,
    pub origin: String,
}

impl SiteHost {
    pub async fn start() -> SiteHost {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site = SiteHost { origin: format!("http://{}", listener.local_addr().unwrap()), ..SiteHost::default() };
        let router = Router::new().fallback(serve).with_state(site.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        site
    }

    /// Serves `body` at `path`.
    pub fn put(&self, path: &str, body: &str) {
        self.put_etag(path, body, None);
    }

    /// Serves `body` at `path`, with an ETag when given.
    pub fn put_etag(&self, path: &str, body: &str, etag: Option<&str>) {
        self.pages.lock().unwrap().insert(path.to_owned(), (body.to_owned(), etag.map(str::to_owned)));
    }

    pub fn remove(&self, path: &str) {
        self.pages.lock().unwrap().remove(path);
    }

    /// Requests seen for `path`.
    pub fn hits(&self, path: &str) -> u32 {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    /// When each request for `path` arrived, oldest first.
    pub fn hit_times(&self, path: &str) -> Vec<std::time::Instant> {
        self.times.lock().unwrap().get(path).cloned().unwrap_or_default()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }
}

async fn serve(State(site): State<SiteHost>, uri: Uri, headers: HeaderMap) -> Response {
    *site.hits.lock().unwrap().entry(uri.path().to_owned()).or_default() += 1;
    site.times.lock().unwrap().entry(uri.path().to_owned()).or_default().push(std::time::Instant::now());
    while site.hold.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // A page put with its query (an OAI-PMH repository's pages) is served for that query only.
    let page = {
        let pages = site.pages.lock().unwrap();
        let with_query = uri.path_and_query().map(|p| p.as_str()).unwrap_or(uri.path());
        pages.get(with_query).or_else(|| pages.get(uri.path())).cloned()
    };
    let Some((body, etag)) = page else { return (StatusCode::NOT_FOUND, "not found").into_response() };
    let Some(etag) = etag else { return body.into_response() };
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    ([(header::ETAG, etag)], body).into_response()
}

/// A `<urlset>` of these URLs (each `(loc, lastmod)`).
pub fn urlset(urls: &[(&str, Option<&str>)]) -> String {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    for (loc, lastmod) in urls {
        xml.push_str(&format!("<url><loc>{loc}</loc>"));
        if let Some(l) = lastmod {
            xml.push_str(&format!("<lastmod>{l}</lastmod>"));
        }
        xml.push_str("</url>\n");
    }
    xml.push_str("</urlset>\n");
    xml
}

/// A `<sitemapindex>` of these children (each `(loc, lastmod)`).
pub fn index(children: &[(&str, Option<&str>)]) -> String {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    for (loc, lastmod) in children {
        xml.push_str(&format!("<sitemap><loc>{loc}</loc>"));
        if let Some(l) = lastmod {
            xml.push_str(&format!("<lastmod>{l}</lastmod>"));
        }
        xml.push_str("</sitemap>\n");
    }
    xml.push_str("</sitemapindex>\n");
    xml
}
