//! Domain properties, the part below the faces and jobs: which origins a property covers, the
//! covering property of a site (what site verification asks first), and the DNS look-up
//! ([`dns`]). The use cases are `service::domains`, the re-check `jobs::recheck::domains`.

pub mod dns;

use mapwright_store::Site;

use crate::{AppError, AppState};

/// Whether the property `domain` covers `origin`: its host is the name or under it, whatever
/// the scheme and port. An address or a host that merely ends in the same letters
/// (`notexample.com`) is not.
pub fn covers(domain: &str, origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else { return false };
    let Some(url::Host::Domain(host)) = url.host() else { return false };
    host == domain || host.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.'))
}

/// The name of the verified property of one of the site's owners that covers it, if any.
pub async fn covering_domain(state: &AppState, site: &Site) -> Result<Option<String>, AppError> {
    let properties = state.store.verified_domains_of_site_owners(site.id).await?;
    Ok(properties.into_iter().find(|d| covers(&d.domain, &site.origin)).map(|d| d.domain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_property_covers() {
        for (origin, expected) in [
            ("https://example.com", true),
            ("http://example.com", true),
            ("http://example.com:8080", true),
            ("https://www.example.com", true),
            ("https://a.b.example.com", true),
            ("https://notexample.com", false),
            ("https://example.com.evil.test", false),
            ("https://example.org", false),
            ("http://127.0.0.1", false),
            ("not a url", false),
        ] {
            assert_eq!(covers("example.com", origin), expected, "{origin}");
        }
        assert!(!covers("www.example.com", "https://example.com"), "a subdomain's property does not cover its parent");
    }
}
