//! What a submitted sitemap URL must be (../shared/PROTOCOL.md section 5): shared by the
//! submission use case (`service::submission`) and the re-check job, which adds the sitemaps a
//! site's robots.txt names.

use crate::AppError;

/// The longest sitemap URL accepted: the protocol's limit on a `<loc>`.
const MAX_URL_LEN: usize = 2048;

/// An absolute http(s) URL of reasonable length, without credentials, in normal form.
pub fn parse_sitemap_url(text: &str) -> Result<url::Url, AppError> {
    let text = text.trim();
    if text.len() > MAX_URL_LEN {
        return Err(AppError::BadRequest(format!("the sitemap URL is longer than {MAX_URL_LEN} bytes")));
    }
    let url = url::Url::parse(text)
        .map_err(|e| AppError::BadRequest(format!("the sitemap URL is not an absolute URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(AppError::BadRequest("the sitemap URL must be an http or https URL".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AppError::BadRequest("the sitemap URL must not carry a user name or password".into()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sitemap_urls() {
        assert_eq!(parse_sitemap_url(" https://Example.com/s.xml ").unwrap().as_str(), "https://example.com/s.xml");
        for bad in ["", "/sitemap.xml", "ftp://example.com/s.xml", "https://u:p@example.com/s.xml", "mailto:a@b"] {
            assert!(matches!(parse_sitemap_url(bad), Err(AppError::BadRequest(_))), "{bad}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(matches!(parse_sitemap_url(&long), Err(AppError::BadRequest(_))));
    }
}
