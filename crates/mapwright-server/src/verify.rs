//! Site ownership, the seed's "Verify": the service gives a token, and the site proves it holds
//! it with a file `SITE/mapwright-<token>.html` whose content is the token, or with a
//! `<meta name="mapwright-site-verification" content="<token>">` in its home page's head.
//!
//! [`verify_site`] checks both and records the result; the API's "Verify now", the console's
//! button and the periodic re-check all go through it, so verification is lost the first time
//! the proof is found gone.

use mapwright_fetch::{Error as FetchError, Fetched, Fetcher};
use mapwright_store::Site;
use serde::Serialize;

use crate::{AppError, AppState, now};

mod head;
pub use head::{META_NAME, head_has_meta, head_verification_contents};

/// Bytes of the verification file read: the token fits many times over.
const FILE_LIMIT: usize = 64 * 1024;

/// Bytes of the home page read for the meta tag: the head comes first, and a page whose head
/// is past 1 MiB is not worth more.
const PAGE_LIMIT: usize = 1024 * 1024;

/// How long a check waits for its turn at the gate before it is held.
const GATE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// How a site proved ownership.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The file `mapwright-<token>.html` at the site's root.
    File,
    /// The meta tag on the home page.
    Meta,
    /// A verified domain property of one of the site's owners covers it (`domains`).
    Domain,
}

impl Method {
    /// The stored and serialised name (`sites.verified_by`, the API's `method`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::File => "file",
            Method::Meta => "meta",
            Method::Domain => "domain",
        }
    }
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
    /// Not checked now: "Verify now" is paced per site and per host, and a failed proof is
    /// remembered for a while (the outbound gate); the seconds until it may be asked again.
    /// `verified` is then the site's state as it stands.
    pub held: Option<u64>,
}

/// The file name a site must serve for its token.
pub fn file_name(token: &str) -> String {
    format!("mapwright-{token}.html")
}

/// The meta tag a site may put in its home page's head instead.
pub fn meta_tag(token: &str) -> String {
    format!(r#"<meta name="{META_NAME}" content="{token}">"#)
}

/// Checks for a verified domain property of an owner that covers the site (no request: the
/// property's own re-check looks its record up), then the file, then the meta tag, and records
/// the outcome on the site: success keeps or sets `verified_at`, failure clears it. A check
/// the outbound gate held (before it, or any of its requests) records nothing: `held` says so.
pub async fn verify_site(state: &AppState, site: &Site) -> Result<Verification, AppError> {
    if let Some(domain) = crate::domains::covering_domain(state, site).await? {
        state.store.record_proof(site.id, Some(Method::Domain.as_str()), Some(domain.as_str()), now()).await?;
        return Ok(Verification {
            verified: true,
            method: Some(Method::Domain),
            detail: format!("the domain property {domain} covers {}: its DNS TXT record is in place", site.origin),
            held: None,
        });
    }
    // The proof's requests go to the site's origin, which may be anyone's: through the gate.
    // Held, nothing is recorded: the site keeps its state until a check can be made. (The
    // fetcher asks the gate again for each of its GETs: a check counts twice or thrice against
    // its host's budget, under the Verify now pace of a few a minute.)
    if let Err(held) = state.gate.wait(crate::outbound::Target::Http(&site.origin), GATE_PATIENCE).await {
        return Ok(Verification {
            verified: site.verified_at.is_some(),
            method: None,
            detail: format!("not checked now: {held}"),
            held: Some(held.retry_after),
        });
    }
    let outcome = check(&state.fetcher, &site.origin, &site.verification_token).await;
    if outcome.held.is_some() {
        // A request the gate held found nothing either way: no verdict, the site as it stands.
        return Ok(Verification { verified: site.verified_at.is_some(), ..outcome });
    }
    state.store.record_proof(site.id, outcome.method.map(Method::as_str), None, now()).await?;
    Ok(outcome)
}

/// Looks for the proof without recording anything.
///
/// The file must hold exactly the token (blank space and a byte-order mark around it aside):
/// a site whose "not found" page answers 200 and echoes the path holds the token among other
/// text, and must not count as proof. The meta tag counts only in the home page's `<head>`
/// as a browser builds it (see [`head_verification_contents`]): a comment, a script, a title
/// or the body that merely contains the tag's text is no proof either.
///
/// What went wrong is told as "could not fetch" or the HTTP status, nothing more: a user
/// chooses the origin, so connection refused, timeout or TLS failure told apart would make
/// the service a port scanner of whatever it can reach. The cause is logged for the operator.
pub async fn check(fetcher: &Fetcher, origin: &str, token: &str) -> Verification {
    let file_url = format!("{origin}/{}", file_name(token));
    let file = match body(fetcher, &file_url, FILE_LIMIT).await {
        Ok(bytes) if file_holds_token(&bytes, token) => {
            return Verification {
                verified: true,
                method: Some(Method::File),
                detail: format!("{file_url} holds the token"),
                held: None,
            };
        }
        Ok(_) => Ok(format!("{file_url} does not hold exactly the token")),
        Err(e) => Err(unread(&file_url, &e)),
    };
    let home = format!("{origin}/");
    let meta = match body(fetcher, &home, PAGE_LIMIT).await {
        Ok(bytes) if head_has_meta(&bytes, token) => {
            return Verification {
                verified: true,
                method: Some(Method::Meta),
                detail: format!("{home} has the {META_NAME} meta tag in its head"),
                held: None,
            };
        }
        Ok(_) => Ok(format!("{home} has no {META_NAME} meta tag with the token in its head")),
        Err(e) => Err(unread(&home, &e)),
    };
    if let Some(reason) = [&file, &meta].into_iter().find_map(|r| r.as_ref().err().and_then(Unread::held)) {
        // A proof not looked at is no proof missing: no verdict.
        return Verification {
            verified: false,
            method: None,
            detail: format!("not checked now: {reason}; try again later"),
            held: Some(HELD_RETRY),
        };
    }
    let (file, meta) = (file.unwrap_or_else(|e| e.said), meta.unwrap_or_else(|e| e.said));
    Verification { verified: false, method: None, detail: format!("not verified: {file}; {meta}"), held: None }
}

/// The seconds a check some request of which the gate held says to wait.
const HELD_RETRY: u64 = 60;

/// A proof that could not be looked at: what the answer says, and the gate's words when the
/// outbound gate held the request (then nothing was asked of the site).
struct Unread {
    said: String,
    held: Option<String>,
}

impl Unread {
    fn held(&self) -> Option<&str> {
        self.held.as_deref()
    }
}

/// A failed fetch: its sentence ([`fetch_failure`]), and whether the gate held it.
fn unread(url: &str, refused: &Refused) -> Unread {
    let held = match refused {
        Refused::Fetch(FetchError::Held { reason, .. }) => Some(format!("{url} was not requested now: {reason}")),
        _ => None,
    };
    Unread { said: fetch_failure(url, refused), held }
}

/// The one sentence a failed fetch becomes: its HTTP status, "could not fetch", or the other
/// site it redirects to (whose origin the site itself named).
fn fetch_failure(url: &str, refused: &Refused) -> String {
    match refused {
        Refused::Fetch(error) => {
            tracing::debug!(url, %error, "verification fetch failed");
            match error {
                FetchError::Status { status, .. } => format!("{url} answered HTTP {status}"),
                _ => format!("could not fetch {url}"),
            }
        }
        Refused::OtherSite(to) => {
            format!("{url} redirects to another site ({to}): the proof must be served by the site itself")
        }
    }
}

/// Why a proof fetched from `url` does not count, or its body: a redirect is followed only
/// within the site (or from `http` to `https` on the same host and default port); a proof
/// served by another origin the site redirects to proves nothing about the site (an open
/// redirect, or a parked name redirecting everywhere, would otherwise verify it).
async fn body(fetcher: &Fetcher, url: &str, limit: usize) -> Result<Vec<u8>, Refused> {
    let response = match fetcher.get(url, None).await.map_err(Refused::Fetch)? {
        Fetched::Body(response) => response,
        Fetched::NotModified(_) => return Ok(Vec::new()),
    };
    if !same_site(url, &response.meta.final_url) {
        let to =
            url::Url::parse(&response.meta.final_url).map(|u| u.origin().ascii_serialization()).unwrap_or_default();
        return Err(Refused::OtherSite(to));
    }
    Ok(response.bytes_up_to(limit).await.map_err(Refused::Fetch)?.0)
}

/// Why a fetched proof does not count.
enum Refused {
    /// The fetch failed.
    Fetch(FetchError),
    /// A redirect led to this other origin.
    OtherSite(String),
}

/// Whether `final_url` (after redirects) is on the site of `requested`: the same origin, or
/// the `https` origin of the same host when `requested` is `http` (a site moving its visitors
/// to TLS keeps its name, and only its owner holds that name's certificate).
fn same_site(requested: &str, final_url: &str) -> bool {
    let (Ok(a), Ok(b)) = (url::Url::parse(requested), url::Url::parse(final_url)) else { return false };
    if a.origin() == b.origin() {
        return true;
    }
    a.scheme() == "http" && b.scheme() == "https" && a.host() == b.host() && a.port().is_none() && b.port().is_none()
}

/// Whether a verification file's body is the token and nothing else, around it blank space
/// and a UTF-8 byte-order mark at most.
pub fn file_holds_token(body: &[u8], token: &str) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    !token.is_empty() && body.trim_ascii() == token.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(html: &str, expected: bool) {
        assert_eq!(head_has_meta(html.as_bytes(), "tok123"), expected, "{html}");
    }

    const TAG: &str = r#"<meta name="mapwright-site-verification" content="tok123">"#;

    #[test]
    fn meta_tag_forms_in_the_head() {
        check(&format!("<head>{TAG}</head>"), true);
        check(r#"<META CONTENT='tok123' NAME='Mapwright-Site-Verification' />"#, true);
        check(r#"<!doctype html><meta name=mapwright-site-verification content=tok123>"#, true);
        check(r#"<meta charset="utf-8"><meta name="mapwright-site-verification" content=" tok123 ">"#, true);
        check(r#"<html><head><title>t</title><meta name="mapwright-site-verification" content="&#116;ok123">"#, true);
        // After </head> but before the body, the standard still puts a meta in the head.
        check(&format!("<html><head></head>{TAG}<body></body>"), true);
        check(r#"<meta name="mapwright-site-verification" content="tok1234">"#, false);
        check(r#"<meta name="other" content="tok123">"#, false);
        check(r#"<meta name="mapwright-site-verification" content="tok123"#, false);
        check("", false);
    }

    /// Text that only looks like the tag, or a tag outside the head, is no proof: what a site
    /// echoes back of its visitors' input lands in the body, a title, a comment or a script.
    #[test]
    fn the_tag_counts_only_as_a_child_of_the_head() {
        check(r#"<p>mapwright-site-verification tok123</p>"#, false);
        check(&format!("<html><head></head><body>{TAG}</body>"), false);
        check(&format!("<head><title>Search: {TAG}</title></head>"), false);
        check(&format!("<head><!-- {TAG} --></head>"), false);
        check(&format!("<head><script>var q = '{TAG}';</script></head>"), false);
        check(&format!("<head><style>/* {TAG} */</style></head>"), false);
        check(&format!("<head><noscript>{TAG}</noscript></head>"), false);
        check(&format!("<head><template>{TAG}</template></head>"), false);
        check(&format!("<head><textarea>{TAG}</textarea></head>"), false);
        // Text or a <p> ends the head: what follows is in the body.
        check(&format!("<head><p>echo: {TAG}</p></head>"), false);
        check(&format!("Not found: /x {TAG}"), false);
        check(&format!("<html><body><p>hi</p></body></html><head>{TAG}</head>"), false);
        check(&format!("<table><tr>{TAG}</tr></table>"), false);
        check(&format!("<svg><desc>{TAG}</desc></svg>"), false);
    }

    #[test]
    fn contents_are_read_up_to_the_body_only() {
        let page =
            format!("<head>{TAG}<meta name=MAPWRIGHT-SITE-VERIFICATION content=b></head><body>{}", "x".repeat(1 << 20));
        assert_eq!(head_verification_contents(page.as_bytes()), ["tok123", "b"]);
        assert!(head_verification_contents(&[0xff, 0xfe, 0, b'<']).is_empty());
    }

    #[test]
    fn the_file_holds_exactly_the_token() {
        assert!(file_holds_token(b"tok123", "tok123"));
        assert!(file_holds_token(b"\xEF\xBB\xBF tok123\r\n", "tok123"));
        assert!(!file_holds_token(b"tok1234", "tok123"));
        assert!(!file_holds_token(b"mapwright-site-verification: tok123", "tok123"));
        assert!(!file_holds_token(b"<p>No page at /mapwright-tok123.html</p>", "tok123"));
        assert!(!file_holds_token(b"", ""));
    }

    #[test]
    fn redirects_stay_on_the_site() {
        assert!(same_site("https://a.example/x", "https://a.example/y"));
        assert!(same_site("http://a.example/x", "https://a.example/x"), "moving to TLS");
        assert!(!same_site("https://a.example/x", "http://a.example/x"), "never away from TLS");
        assert!(!same_site("http://a.example/x", "https://b.example/x"));
        assert!(!same_site("http://a.example/x", "http://www.a.example/x"));
        assert!(!same_site("http://a.example:8080/x", "https://a.example/x"));
        assert!(!same_site("http://127.0.0.1:1/x", "http://127.0.0.1:2/x"));
    }

    #[test]
    fn file_and_tag_names() {
        assert_eq!(file_name("ab12"), "mapwright-ab12.html");
        assert_eq!(meta_tag("ab12"), r#"<meta name="mapwright-site-verification" content="ab12">"#);
    }
}
