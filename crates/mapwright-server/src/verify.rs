//! Site ownership, the seed's "Verify": the service gives a token, and the site proves it holds
//! it with a file `SITE/mapwright-<token>.html` that contains the token, or with a
//! `<meta name="mapwright-site-verification" content="<token>">` on its home page.
//!
//! [`verify_site`] checks both and records the result; the API's "Verify now", the console's
//! button and the periodic re-check all go through it, so verification is lost the first time
//! the proof is found gone.

use mapwright_fetch::{Error as FetchError, Fetched, Fetcher};
use mapwright_store::Site;
use serde::Serialize;

use crate::{AppError, AppState, now};

/// The meta tag's `name`.
pub const META_NAME: &str = "mapwright-site-verification";

/// Bytes of the verification file read: the token fits many times over.
const FILE_LIMIT: usize = 64 * 1024;

/// Bytes of the home page read for the meta tag: the head comes first, and a page whose head
/// is past 1 MiB is not worth more.
const PAGE_LIMIT: usize = 1024 * 1024;

/// How a site proved ownership.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The file `mapwright-<token>.html` at the site's root.
    File,
    /// The meta tag on the home page.
    Meta,
}

/// The result of one verification check, as the API and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Whether the site is verified now.
    pub verified: bool,
    /// Which proof was found, when verified.
    pub method: Option<Method>,
    /// What was found, in a sentence the owner can act on.
    pub detail: String,
}

/// The file name a site must serve for its token.
pub fn file_name(token: &str) -> String {
    format!("mapwright-{token}.html")
}

/// The meta tag a site may put in its home page's head instead.
pub fn meta_tag(token: &str) -> String {
    format!(r#"<meta name="{META_NAME}" content="{token}">"#)
}

/// Checks the file, then the meta tag, and records the outcome on the site: success keeps or
/// sets `verified_at`, failure clears it.
pub async fn verify_site(state: &AppState, site: &Site) -> Result<Verification, AppError> {
    let outcome = check(&state.fetcher, &site.origin, &site.verification_token).await;
    state.store.record_verification(site.id, outcome.verified, now()).await?;
    Ok(outcome)
}

/// Looks for the proof without recording anything.
pub async fn check(fetcher: &Fetcher, origin: &str, token: &str) -> Verification {
    let file_url = format!("{origin}/{}", file_name(token));
    let file = match body(fetcher, &file_url, FILE_LIMIT).await {
        Ok(bytes) if contains(&bytes, token.as_bytes()) => {
            return Verification {
                verified: true,
                method: Some(Method::File),
                detail: format!("{file_url} contains the token"),
            };
        }
        Ok(_) => format!("{file_url} does not contain the token"),
        Err(e) => e.to_string(),
    };
    let home = format!("{origin}/");
    let meta = match body(fetcher, &home, PAGE_LIMIT).await {
        Ok(bytes) if has_meta(&bytes, token) => {
            return Verification {
                verified: true,
                method: Some(Method::Meta),
                detail: format!("{home} has the {META_NAME} meta tag"),
            };
        }
        Ok(_) => format!("{home} has no {META_NAME} meta tag with the token"),
        Err(e) => e.to_string(),
    };
    Verification { verified: false, method: None, detail: format!("not verified: {file}; {meta}") }
}

async fn body(fetcher: &Fetcher, url: &str, limit: usize) -> Result<Vec<u8>, FetchError> {
    match fetcher.get(url, None).await? {
        Fetched::Body(response) => Ok(response.bytes_up_to(limit).await?.0),
        Fetched::NotModified(_) => Ok(Vec::new()),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether some `<meta>` tag has `name="mapwright-site-verification"` and `content` equal to
/// the token (attribute names and the name's value case-insensitive, any quoting).
fn has_meta(html: &[u8], token: &str) -> bool {
    let text = String::from_utf8_lossy(html);
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<meta") {
        let start = from + at + 5;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let attrs = attributes(&text[start..end]);
        let get = |name: &str| attrs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
        if get("name").is_some_and(|n| n.eq_ignore_ascii_case(META_NAME)) && get("content") == Some(token) {
            return true;
        }
        from = end;
    }
    false
}

/// The attributes of a start tag's inside: `a="x" b='y' c=z d`.
fn attributes(tag: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = tag.trim_start_matches('/');
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            return out;
        }
        let name_end = rest.find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '/').unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = rest[name_end..].trim_start();
        let Some(after_eq) = rest.strip_prefix('=') else {
            out.push((name, ""));
            continue;
        };
        rest = after_eq.trim_start();
        let (value, next) = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => match rest[1..].find(q) {
                Some(e) => (&rest[1..1 + e], &rest[2 + e..]),
                None => (&rest[1..], ""),
            },
            _ => {
                let e = rest.find(|c: char| c.is_ascii_whitespace()).unwrap_or(rest.len());
                (&rest[..e], &rest[e..])
            }
        };
        out.push((name, value));
        rest = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(html: &str, expected: bool) {
        assert_eq!(has_meta(html.as_bytes(), "tok123"), expected, "{html}");
    }

    #[test]
    fn meta_tag_forms() {
        check(r#"<head><meta name="mapwright-site-verification" content="tok123"></head>"#, true);
        check(r#"<META CONTENT='tok123' NAME='Mapwright-Site-Verification' />"#, true);
        check(r#"<meta name=mapwright-site-verification content=tok123>"#, true);
        check(r#"<meta charset="utf-8"><meta name="mapwright-site-verification" content=" tok123 ">"#, true);
        check(r#"<meta name="mapwright-site-verification" content="tok1234">"#, false);
        check(r#"<meta name="other" content="tok123">"#, false);
        check(r#"<meta name="mapwright-site-verification" content="tok123"#, true);
        check(r#"<p>mapwright-site-verification tok123</p>"#, false);
        check("", false);
    }

    #[test]
    fn file_and_tag_names() {
        assert_eq!(file_name("ab12"), "mapwright-ab12.html");
        assert_eq!(meta_tag("ab12"), r#"<meta name="mapwright-site-verification" content="ab12">"#);
    }
}
