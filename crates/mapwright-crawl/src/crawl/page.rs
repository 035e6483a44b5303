//! One page fetched: the request (after the politeness wait), the body streamed through gzip
//! removal into the HTML extractor under the page-size limit, and what the page says,
//! resolved and normalised. The result is plain data ([`Fetch`]) that the state log keeps,
//! so a resumed crawl replays it exactly as if it had just arrived.

use super::parse::{Extractor, Found, apply_robots};
use super::url::{OutOfScope, Scope};
use mapwright_fetch::{Error as FetchError, Fetched, Fetcher};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::Mutex;
use url::Url;

/// What fetching one URL gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Fetch {
    /// No page: an HTTP status that is not 2xx, a redirect loop, a timeout...
    Failed {
        /// The HTTP status, when there was one.
        status: Option<u16>,
        /// A short reason (`status 404`, `redirect loop`, `timeout (connect)`).
        error: String,
    },
    /// A 2xx answer.
    Page(Box<Page>),
}

/// A 2xx answer, resolved: every URL absolute and normalised.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The URL after redirects, normalised.
    pub final_url: String,
    /// The media type (`text/html`), lower case, without parameters.
    pub content_type: Option<String>,
    /// Whether the body was read as HTML.
    pub html: bool,
    /// `article:modified_time`, else `Last-Modified`, as written.
    pub lastmod: Option<String>,
    /// noindex from `<meta name="robots">` or `X-Robots-Tag`.
    pub noindex: bool,
    /// nofollow from the same.
    pub nofollow: bool,
    /// The canonical URL, when the page names one.
    pub canonical: Option<String>,
    /// Links within the origin and path prefix (excluded ones too: the report names them).
    pub links: Vec<String>,
    /// hreflang alternates: (hreflang, absolute URL).
    pub alternates: Vec<(String, String)>,
    /// Image URLs, absolute.
    pub images: Vec<String>,
    /// The body was longer than the page-size limit; the rest was not read.
    pub truncated: bool,
}

/// What a page fetch needs to know, shared by all fetch tasks.
pub struct PageContext {
    /// The HTTP client.
    pub fetcher: Fetcher,
    /// Scope and normalisation.
    pub scope: Scope,
    /// Collect `<img src>`.
    pub images: bool,
    /// Most bytes of a page read (after gzip removal).
    pub max_page_bytes: u64,
    /// The robots.txt product token of our user agent, for `X-Robots-Tag: agent: ...`.
    pub agent_token: String,
}

/// Fetches and reads `url`.
pub async fn fetch(ctx: &PageContext, url: &str) -> Fetch {
    let resp = match ctx.fetcher.get(url, None).await {
        Ok(Fetched::Body(r)) => r,
        Ok(Fetched::NotModified(m)) => return Fetch::Failed { status: Some(m.status), error: "status 304".into() },
        Err(FetchError::Status { status, .. }) => {
            return Fetch::Failed { status: Some(status), error: format!("status {status}") };
        }
        Err(e) => return Fetch::Failed { status: None, error: e.reason() },
    };
    let meta = resp.meta.clone();
    let final_url = Url::parse(&meta.final_url).ok().and_then(|u| ctx.scope.normalise(u));
    let Some(final_url) = final_url else {
        return Fetch::Failed { status: None, error: format!("redirected to {}", meta.final_url) };
    };
    let content_type =
        meta.content_type.as_deref().map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    let html = content_type.as_deref().is_none_or(|c| c == "text/html" || c == "application/xhtml+xml");
    let mut page = Page { final_url: final_url.to_string(), content_type, html, ..Page::default() };
    let mut found = Found::default();
    if let Some(tag) = &meta.x_robots_tag {
        apply_robots(&mut found, tag, Some(&ctx.agent_token));
    }
    // A page in another origin (redirected out) is not read: it is not ours to list or follow.
    let ours = ctx.scope.check(&final_url) != Err(OutOfScope::Outside);
    if html && ours {
        let gzip = meta.content_encoding.as_deref().is_some_and(|e| e.trim().eq_ignore_ascii_case("gzip"));
        match read_html(resp, gzip, ctx, found).await {
            Ok((f, truncated)) => {
                found = f;
                page.truncated = truncated;
            }
            Err(e) => return Fetch::Failed { status: Some(meta.status), error: e },
        }
    }
    let last_modified = meta.validators.last_modified.clone();
    resolve(&mut page, found, &final_url, &ctx.scope);
    if page.lastmod.is_none() {
        page.lastmod = last_modified;
    }
    Fetch::Page(Box::new(page))
}

/// Feeds the extractor, stopping at the page-size limit.
struct Feed<'a> {
    x: Extractor<'a>,
    n: u64,
    limit: u64,
    full: bool,
}

impl Write for Feed<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.limit.saturating_sub(self.n);
        let take = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if take < buf.len() {
            self.full = true;
        }
        if take > 0 {
            self.x.write(&buf[..take]).map_err(std::io::Error::other)?;
            self.n += take as u64;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[allow(clippy::large_enum_variant)] // one per page fetch, on its task's stack: no gain in boxing
enum Sink<'a> {
    Plain(Feed<'a>),
    Gzip(flate2::write::GzDecoder<Feed<'a>>),
}

impl<'a> Sink<'a> {
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Plain(f) => f.write_all(b),
            Sink::Gzip(g) => g.write_all(b),
        }
    }

    fn full(&self) -> bool {
        match self {
            Sink::Plain(f) => f.full,
            Sink::Gzip(g) => g.get_ref().full,
        }
    }

    /// Ends the document (a cut gzip stream is not an error: what arrived was parsed).
    fn finish(self) {
        let feed = match self {
            Sink::Plain(f) => Some(f),
            Sink::Gzip(mut g) => {
                let _ = g.try_finish();
                g.finish().ok()
            }
        };
        if let Some(f) = feed {
            let _ = f.x.finish();
        }
    }
}

/// Streams the body into the extractor: chunk by chunk, gzip removed on the way, so memory
/// stays one chunk plus lol_html's bounded buffer whatever the page's size.
async fn read_html(
    mut resp: mapwright_fetch::Response,
    gzip: bool,
    ctx: &PageContext,
    start: Found,
) -> Result<(Found, bool), String> {
    let found = Mutex::new(start);
    let truncated = {
        let feed = Feed { x: Extractor::new(&found, ctx.images), n: 0, limit: ctx.max_page_bytes, full: false };
        let mut sink = if gzip { Sink::Gzip(flate2::write::GzDecoder::new(feed)) } else { Sink::Plain(feed) };
        loop {
            let chunk = match resp.next_chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => return Err(e.reason()),
            };
            sink.write_all(&chunk).map_err(|e| format!("unreadable HTML: {e}"))?;
            if sink.full() {
                break;
            }
        }
        let full = sink.full();
        sink.finish();
        full
    };
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok((found, truncated))
}

/// Resolves what the page says against its base (`<base href>` respected) and normalises.
fn resolve(page: &mut Page, found: Found, url: &Url, scope: &Scope) {
    let base = found.base.as_deref().and_then(|b| url.join(b.trim()).ok()).unwrap_or_else(|| url.clone());
    page.noindex = found.noindex;
    page.nofollow = found.nofollow;
    page.lastmod = found.modified_time.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    page.canonical = found.canonical.as_deref().and_then(|c| scope.normalise_link(&base, c)).map(String::from);
    let mut seen = std::collections::HashSet::new();
    for href in &found.links {
        if let Some(u) = scope.normalise_link(&base, href) {
            if scope.check(&u) != Err(OutOfScope::Outside) && seen.insert(u.to_string()) {
                page.links.push(u.into());
            }
        }
    }
    for (lang, href) in found.alternates {
        if let Some(u) = scope.normalise_link(&base, &href) {
            let s = u.to_string();
            if scope.check(&u) != Err(OutOfScope::Outside) && seen.insert(s.clone()) {
                page.links.push(s.clone());
            }
            page.alternates.push((lang, s));
        }
    }
    for src in found.images {
        if let Ok(u) = base.join(src.trim()) {
            if matches!(u.scheme(), "http" | "https") {
                page.images.push(u.into());
            }
        }
    }
}
