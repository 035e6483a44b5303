//! `GET /ping?sitemap=URL`: the public ping of the 2005 protocol (PROTOCOL.md section 8).
//!
//! A 200 proves nothing (the protocol's answer to every well-formed ping): it only brings
//! forward the next fetch of a sitemap already known on a verified site, and only such a ping
//! is recorded. It never adds a sitemap. Limited per client (/64), per network (/48, as
//! sign-up) and per sitemap URL.

use axum::extract::State;

use crate::extract::{ClientNet, Params};
use crate::{AppError, AppState, now};

/// The longest sitemap URL a ping may name (the protocol's limit on a `<loc>`).
const MAX_URL: usize = 2048;

pub(crate) async fn ping(
    State(state): State<AppState>,
    ClientNet(from): ClientNet,
    params: Params,
) -> Result<String, AppError> {
    let client = &from.client;
    state.limits.ping_per_client.check(&*state.store, client).await?;
    state.limits.ping_per_network.check(&*state.store, &from.network).await?;
    let sitemap = parse_sitemap(params.text("sitemap")?)?;
    state.limits.ping_per_sitemap.check(&*state.store, sitemap.as_str()).await?;
    if state.store.record_ping(sitemap.as_str(), client, now()).await?.scheduled > 0 {
        state.wake_workers();
    }
    Ok(format!("Sitemap notification received: {sitemap}\n"))
}

/// The `sitemap` parameter as an absolute http(s) URL, or why not.
fn parse_sitemap(value: Option<&str>) -> Result<url::Url, AppError> {
    let value = match value.map(str::trim) {
        None | Some("") => return Err(AppError::BadRequest("missing the sitemap parameter: /ping?sitemap=URL".into())),
        Some(v) => v,
    };
    if value.len() > MAX_URL {
        return Err(AppError::BadRequest(format!("the sitemap URL is longer than {MAX_URL} characters")));
    }
    let url = url::Url::parse(value)
        .map_err(|e| AppError::BadRequest(format!("the sitemap parameter is not an absolute URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(AppError::BadRequest("the sitemap URL must be an http or https URL with a host".into()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::parse_sitemap;

    fn check(input: Option<&str>, expected: Option<&str>) {
        let got = parse_sitemap(input).ok().map(|u| u.to_string());
        assert_eq!(got.as_deref(), expected, "{input:?}");
    }

    #[test]
    fn sitemap_parameter() {
        check(Some("https://example.com/sitemap.xml"), Some("https://example.com/sitemap.xml"));
        check(Some("http://EXAMPLE.com"), Some("http://example.com/"));
        check(None, None);
        check(Some(""), None);
        check(Some("/sitemap.xml"), None);
        check(Some("ftp://example.com/s.xml"), None);
        check(Some("file:///etc/passwd"), None);
        check(Some("https://"), None);
        check(Some(&format!("https://example.com/{}", "a".repeat(3000))), None);
    }
}
