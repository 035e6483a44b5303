//! URL normalisation and scope for the crawler: one spelling per page, so a page reached by
//! ten different links is fetched once.
//!
//! `url::Url` does most of it (scheme and host case, default ports, dot segments, IDNA,
//! non-ASCII percent-encoded as UTF-8); on top we remove the fragment, an empty query and the
//! query parameters matching `--strip-query`, upper-case the hex of percent escapes and decode
//! escapes of unreserved characters (RFC 3986 section 6.2.2), which `url` leaves as written.

use globset::{Glob, GlobSet, GlobSetBuilder};
use url::Url;

use crate::Error;

/// Which URLs the crawl may fetch and list: one origin, a path prefix, patterns.
#[derive(Debug)]
pub struct Scope {
    origin: String,
    prefix: String,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    strip_query: Option<GlobSet>,
}

/// Why a URL is not crawled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfScope {
    /// Another scheme, host or port, or outside the path prefix.
    Outside,
    /// Not matched by `--include`, or matched by `--exclude`.
    Excluded,
}

fn globs(patterns: &[String], what: &str) -> Result<Option<GlobSet>, Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = Glob::new(p).map_err(|e| Error::Glob { pattern: format!("{what} {p}"), message: e.to_string() })?;
        b.add(g);
    }
    b.build().map(Some).map_err(|e| Error::Glob { pattern: what.to_string(), message: e.to_string() })
}

impl Scope {
    /// The scope of `base` (a folder URL: everything under its path), with `include`/`exclude`
    /// globs over path and query (`/blog/**`, `/search?*`; `*` also matches `/`) and
    /// `strip_query` globs over query parameter names (`utm_*`).
    pub fn new(base: &Url, include: &[String], exclude: &[String], strip_query: &[String]) -> Result<Scope, Error> {
        let path = base.path();
        let prefix = match path.rfind('/') {
            Some(i) => path[..=i].to_string(),
            None => "/".to_string(),
        };
        Ok(Scope {
            origin: base.origin().ascii_serialization(),
            prefix,
            include: globs(include, "--include")?,
            exclude: globs(exclude, "--exclude")?,
            strip_query: globs(strip_query, "--strip-query")?,
        })
    }

    /// Resolves `href` against `base` and normalises it; `None` for what is not an http(s) URL
    /// (`mailto:`, `javascript:`, garbage).
    pub fn normalise_link(&self, base: &Url, href: &str) -> Option<Url> {
        let href = href.trim();
        // A fragment-only link points back at the page itself.
        if href.is_empty() || href.starts_with('#') {
            return None;
        }
        let u = base.join(href).ok()?;
        self.normalise(u)
    }

    /// Normalises an absolute URL (see the module comment); `None` unless http(s) with a host.
    pub fn normalise(&self, mut u: Url) -> Option<Url> {
        if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
            return None;
        }
        u.set_fragment(None);
        if !u.username().is_empty() || u.password().is_some() {
            let _ = u.set_username("");
            let _ = u.set_password(None);
        }
        let path = fix_escapes(u.path());
        if path != u.path() {
            u.set_path(&path);
        }
        if let Some(q) = u.query() {
            let q = fix_escapes(q);
            let q = match &self.strip_query {
                Some(set) => q
                    .split('&')
                    .filter(|kv| {
                        let name = kv.split('=').next().unwrap_or("");
                        !kv.is_empty() && !set.is_match(name)
                    })
                    .collect::<Vec<_>>()
                    .join("&"),
                None => q,
            };
            u.set_query(if q.is_empty() { None } else { Some(&q) });
        }
        Some(u)
    }

    /// Whether the crawl may fetch `u` (already normalised).
    pub fn check(&self, u: &Url) -> Result<(), OutOfScope> {
        if u.origin().ascii_serialization() != self.origin || !u.path().starts_with(&self.prefix) {
            return Err(OutOfScope::Outside);
        }
        if self.include.is_some() || self.exclude.is_some() {
            let target = match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_string(),
            };
            if self.include.as_ref().is_some_and(|s| !s.is_match(&target))
                || self.exclude.as_ref().is_some_and(|s| s.is_match(&target))
            {
                return Err(OutOfScope::Excluded);
            }
        }
        Ok(())
    }
}

/// Upper-cases percent-escape hex and decodes escapes of unreserved characters.
fn fix_escapes(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit() {
            let v = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(0);
            if v.is_ascii_alphanumeric() || b"-._~".contains(&v) {
                out.push(v as char);
            } else {
                out.push('%');
                out.push(b[i + 1].to_ascii_uppercase() as char);
                out.push(b[i + 2].to_ascii_uppercase() as char);
            }
            i += 3;
        } else {
            let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        let base = Url::parse("http://example.com/site/").unwrap();
        Scope::new(&base, &[], &["/site/private/**".into()], &["utm_*".into(), "ref".into()]).unwrap()
    }

    #[test]
    fn normalises() {
        let s = scope();
        let base = Url::parse("http://example.com/site/a/b.html").unwrap();
        let n = |h: &str| s.normalise_link(&base, h).map(|u| u.to_string());
        assert_eq!(n("../c/./d.html#top").as_deref(), Some("http://example.com/site/c/d.html"));
        assert_eq!(
            n("HTTP://EXAMPLE.com:80/site/%7euser/%2f%c3%a9").as_deref(),
            Some("http://example.com/site/~user/%2F%C3%A9")
        );
        assert_eq!(n("x?utm_source=a&id=2&ref=z").as_deref(), Some("http://example.com/site/a/x?id=2"));
        assert_eq!(n("x?utm_source=a").as_deref(), Some("http://example.com/site/a/x"));
        assert_eq!(n("/größe").as_deref(), Some("http://example.com/gr%C3%B6%C3%9Fe"));
        assert_eq!(n("mailto:a@b.c"), None);
        assert_eq!(n("javascript:void(0)"), None);
    }

    #[test]
    fn scopes() {
        let s = scope();
        let u = |x: &str| Url::parse(x).unwrap();
        assert_eq!(s.check(&u("http://example.com/site/x")), Ok(()));
        assert_eq!(s.check(&u("http://example.com/other")), Err(OutOfScope::Outside));
        assert_eq!(s.check(&u("https://example.com/site/x")), Err(OutOfScope::Outside));
        assert_eq!(s.check(&u("http://example.com:81/site/x")), Err(OutOfScope::Outside));
        assert_eq!(s.check(&u("http://example.com/site/private/x")), Err(OutOfScope::Excluded));
    }
}
