//! Namespaces resolved by hand from the `xmlns` declarations seen (a short stack), rather than
//! with quick-xml's `NsReader`: almost every element of a sitemap has no attribute, and
//! skipping the resolver's work on those is a measurable share of the loop.

use super::*;

/// What a namespace URI is, for the elements we interpret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ns {
    Sitemap,
    Image,
    Video,
    News,
    Xhtml,
    Geo,
    PageMap,
    Other,
}

fn ns_kind(uri: &str) -> Ns {
    match uri {
        NS_SITEMAP | NS_GOOGLE_084 => Ns::Sitemap,
        NS_IMAGE => Ns::Image,
        NS_VIDEO => Ns::Video,
        NS_NEWS => Ns::News,
        NS_XHTML => Ns::Xhtml,
        NS_GEO => Ns::Geo,
        NS_PAGEMAP => Ns::PageMap,
        // Lenient: the other spellings of the sitemap namespace seen on the web.
        u if u.contains("sitemaps.org/schemas/sitemap") || u.contains("google.com/schemas/sitemap/") => Ns::Sitemap,
        u if u.contains("schemas/sitemap-image") => Ns::Image,
        u if u.contains("schemas/sitemap-video") => Ns::Video,
        u if u.contains("schemas/sitemap-news") => Ns::News,
        u if u.contains("sitemap-pagemap") => Ns::PageMap,
        u if u.contains("geo/schemas/sitemap") => Ns::Geo,
        _ => Ns::Other,
    }
}

/// A conventional prefix used without a declaration (lenient).
fn guess_prefix(prefix: &str) -> Ns {
    match prefix {
        "image" => Ns::Image,
        "video" => Ns::Video,
        "news" => Ns::News,
        "xhtml" => Ns::Xhtml,
        "geo" => Ns::Geo,
        _ => Ns::Other,
    }
}

/// `xmlns` bindings in scope: (depth, prefix, kind).
#[derive(Default)]
pub(super) struct NsStack {
    pub(super) bindings: Vec<(usize, Box<str>, Ns)>,
}

impl NsStack {
    pub(super) fn resolve(&self, prefix: &str) -> Ns {
        match self.bindings.iter().rev().find(|(_, p, _)| &**p == prefix) {
            Some((_, _, k)) => *k,
            None if prefix.is_empty() => Ns::Sitemap,
            None => guess_prefix(prefix),
        }
    }

    /// Records the `xmlns` declarations of a start tag at `depth`.
    pub(super) fn push(&mut self, e: &BytesStart<'_>, depth: usize) {
        let raw = e.attributes_raw();
        if raw.is_empty() || memchr::memmem::find(raw.as_bytes(), b"xmlns").is_none() {
            return;
        }
        for a in e.attributes().with_checks(false).flatten() {
            let key = a.key.0;
            let prefix = if key == "xmlns" {
                ""
            } else if let Some(p) = key.strip_prefix("xmlns:") {
                p
            } else {
                continue;
            };
            self.bindings.push((depth, prefix.into(), ns_kind(a.value.trim())));
        }
    }

    pub(super) fn pop(&mut self, depth: usize) {
        while self.bindings.last().is_some_and(|(d, _, _)| *d > depth) {
            self.bindings.pop();
        }
    }
}

#[inline]
pub(super) fn split_name(name: &str) -> (&str, &str) {
    // Names are a few bytes long: a plain loop beats a searcher's set-up.
    match name.bytes().position(|b| b == b':') {
        Some(i) => (&name[..i], &name[i + 1..]),
        None => ("", name),
    }
}
