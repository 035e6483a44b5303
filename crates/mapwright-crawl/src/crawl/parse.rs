//! Link extraction from HTML with lol_html, fed chunk by chunk as the body arrives.
//!
//! lol_html over html5ever's tokenizer, by measurement (`benches/html.rs`, criterion, one run
//! on the shared 2-core machine under load, a 48 KiB page with 400 links fed in 16 KiB
//! chunks): lol_html 340 us a page (138 MiB/s), html5ever's tokenizer alone 522 us (90 MiB/s),
//! before any tree is built. lol_html is also streaming by design (it keeps
//! only the current token, under a memory limit we set), so a page's memory is bounded
//! whatever its size.

use lol_html::send::{HtmlRewriter, Settings};
use lol_html::{MemorySettings, element};
use std::sync::Mutex;

/// An attribute's value with character references decoded (lol_html gives it as written).
fn attr(el: &lol_html::send::Element<'_, '_>, name: &str) -> Option<String> {
    el.get_attribute(name).map(|v| crate::html::decode_entities(&v))
}

/// Links and an image per page are capped: a page is not a sitemap.
pub const MAX_LINKS: usize = 10_000;
/// Google reads at most 1,000 images per URL.
pub const MAX_IMAGES: usize = 1_000;

/// What a page says, as written (hrefs not yet resolved).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// `<a href>` and `<area href>`, in document order.
    pub links: Vec<String>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// The first `<link rel="canonical" href>`.
    pub canonical: Option<String>,
    /// `<link rel="alternate" hreflang href>`: (hreflang, href).
    pub alternates: Vec<(String, String)>,
    /// `<img src>`, when asked for.
    pub images: Vec<String>,
    /// `<meta name="robots">` says noindex (or none).
    pub noindex: bool,
    /// `<meta name="robots">` says nofollow (or none).
    pub nofollow: bool,
    /// `<meta property="article:modified_time" content>`.
    pub modified_time: Option<String>,
}

/// Applies robots directives (`noindex, nofollow`, `none`) to `found`; `agent` filters
/// `X-Robots-Tag: agent: directives` forms (other agents' directives are ignored).
pub fn apply_robots(found: &mut Found, directives: &str, agent: Option<&str>) {
    for part in directives.split(',') {
        let mut d = part.trim().to_ascii_lowercase();
        if let Some((who, rest)) = d.split_once(':') {
            let known =
                matches!(who.trim(), "unavailable_after" | "max-snippet" | "max-image-preview" | "max-video-preview");
            if !known {
                if agent.is_none_or(|a| !who.trim().eq_ignore_ascii_case(a)) {
                    continue;
                }
                d = rest.trim().to_string();
            }
        }
        for t in d.split_ascii_whitespace() {
            match t {
                "noindex" => found.noindex = true,
                "nofollow" => found.nofollow = true,
                "none" => {
                    found.noindex = true;
                    found.nofollow = true;
                }
                _ => {}
            }
        }
    }
}

fn push_capped(v: &mut Vec<String>, s: String, cap: usize) {
    if v.len() < cap {
        v.push(s);
    }
}

/// A streaming extractor: [`Extractor::write`] chunks, then [`Extractor::finish`].
pub struct Extractor<'a> {
    rewriter: HtmlRewriter<'a, fn(&[u8])>,
}

fn discard(_: &[u8]) {}

impl<'a> Extractor<'a> {
    /// An extractor filling `found`; `images` also collects `<img src>`.
    pub fn new(found: &'a Mutex<Found>, images: bool) -> Extractor<'a> {
        let f = found;
        let lock = move || f.lock().unwrap_or_else(|p| p.into_inner());
        let mut settings = Settings::new_send()
            .with_strict(false)
            .with_memory_settings(MemorySettings::new().with_max_allowed_memory_usage(4 << 20))
            .append_element_content_handler(element!("a[href], area[href]", move |el| {
                if let Some(h) = attr(el, "href") {
                    push_capped(&mut lock().links, h, MAX_LINKS);
                }
                Ok(())
            }))
            .append_element_content_handler(element!("base[href]", move |el| {
                let mut g = lock();
                if g.base.is_none() {
                    g.base = attr(el, "href");
                }
                Ok(())
            }))
            .append_element_content_handler(element!("link[href][rel]", move |el| {
                let rel = attr(el, "rel").unwrap_or_default().to_ascii_lowercase();
                let Some(href) = attr(el, "href") else { return Ok(()) };
                let mut g = lock();
                let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                if rels.contains(&"canonical") && g.canonical.is_none() {
                    g.canonical = Some(href);
                } else if rels.contains(&"alternate") {
                    if let Some(lang) = attr(el, "hreflang").filter(|l| !l.trim().is_empty()) {
                        if g.alternates.len() < MAX_LINKS {
                            g.alternates.push((lang.trim().to_string(), href));
                        }
                    }
                }
                Ok(())
            }))
            .append_element_content_handler(element!("meta[content]", move |el| {
                let content = attr(el, "content").unwrap_or_default();
                if attr(el, "name").is_some_and(|n| n.trim().eq_ignore_ascii_case("robots")) {
                    apply_robots(&mut lock(), &content, None);
                } else if attr(el, "property").is_some_and(|p| p.trim() == "article:modified_time") {
                    lock().modified_time.get_or_insert(content);
                }
                Ok(())
            }));
        if images {
            settings = settings.append_element_content_handler(element!("img[src]", move |el| {
                if let Some(s) = attr(el, "src") {
                    push_capped(&mut lock().images, s, MAX_IMAGES);
                }
                Ok(())
            }));
        }
        Extractor { rewriter: HtmlRewriter::new(settings, discard as fn(&[u8])) }
    }

    /// Feeds the next bytes of the page. An error means the page cannot be parsed further
    /// (lol_html's memory limit); what was found so far stays.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.rewriter.write(chunk).map_err(|e| e.to_string())
    }

    /// Ends the document.
    pub fn finish(self) -> Result<(), String> {
        self.rewriter.end().map_err(|e| e.to_string())
    }
}

/// Extracts from a whole page (tests and benchmarks; the crawler streams).
pub fn extract(html: &[u8], images: bool) -> Found {
    let found = Mutex::new(Found::default());
    {
        let mut x = Extractor::new(&found, images);
        for chunk in html.chunks(16 * 1024) {
            if x.write(chunk).is_err() {
                break;
            }
        }
        let _ = x.finish();
    }
    found.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts() {
        let html = br#"<html><head><base href="/b/"><link rel=canonical href="/c"><link rel="alternate" hreflang="de" href="/de/?a=1&amp;b=2">
<meta name="ROBOTS" content="noindex"><meta property="article:modified_time" content="2024-05-01T10:00:00Z"></head>
<body><a href="x">x</a><!-- <a href="no"> --><script>var a='<a href="no2">'</script><area href="/y"><img src="i.png"><a>none</a></body>"#;
        let f = extract(html, true);
        assert_eq!(f.links, ["x", "/y"]);
        assert_eq!(f.base.as_deref(), Some("/b/"));
        assert_eq!(f.canonical.as_deref(), Some("/c"));
        assert_eq!(f.alternates, [("de".to_string(), "/de/?a=1&b=2".to_string())]);
        assert_eq!(f.images, ["i.png"]);
        assert!(f.noindex && !f.nofollow);
        assert_eq!(f.modified_time.as_deref(), Some("2024-05-01T10:00:00Z"));
    }

    #[test]
    fn robots_directives() {
        let mut f = Found::default();
        apply_robots(&mut f, "googlebot: noindex", Some("mapwright"));
        assert!(!f.noindex);
        apply_robots(&mut f, "mapwright: nofollow, unavailable_after: 2030-01-01", Some("mapwright"));
        assert!(f.nofollow && !f.noindex);
        apply_robots(&mut f, "none", None);
        assert!(f.noindex);
    }
}
