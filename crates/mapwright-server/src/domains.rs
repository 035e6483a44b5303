//! Domain properties (issue 23), Search Console's "domain property": a user claims a DNS name
//! (`example.com`), publishes the TXT record `mapwright-site-verification=<token>` at it, and
//! once the record is found the property covers every origin under the name (http and https,
//! any port, the name itself and every subdomain) for the sites that user owns: such a site is
//! verified without a file or meta tag of its own, and one added later is verified as it is
//! added, so its sitemaps can be submitted at once.
//!
//! Whoever publishes DNS records for a name controls every host under it, which is why the
//! one record is proof for all of them; and why it proves nothing for another user: a
//! property covers only the sites its own user owns (a stranger's claim of the same name, or
//! of a parent, changes nothing for anyone else). The record is looked up again on the same
//! schedule as the sites' proofs; when it is gone, the property is unverified and the sites it
//! covered are checked again at once (a site with a file or meta tag of its own stays
//! verified).
//!
//! The API (`api/domains.rs`) and the console (`console/domains.rs`) share this module; the
//! DNS look-up is [`dns`].

pub mod dns;

use std::time::Duration;

use futures_util::StreamExt;
use mapwright_store::{Actor, DomainProperty, Site};
use serde::Serialize;
use tokio::sync::watch;

use crate::{AppError, AppState, now};

/// The longest name DNS allows.
const MAX_DOMAIN: usize = 253;

/// The whole look-up (every server, every attempt) must end within this.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(15);

/// Properties re-checked per pass.
const PASS: i64 = 100;

/// Covered sites verified (or checked again) at once after a property changes.
const SITE_CONCURRENCY: usize = 4;

/// The result of one look-up, as the API and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DomainCheck {
    /// Whether the property is verified now.
    pub verified: bool,
    /// What was found, in a sentence the owner can act on.
    pub detail: String,
}

/// A DNS name as typed (`Example.COM.`, `bücher.example`) in normal form (`example.com`,
/// `xn--bcher-kva.example`), or why it is not one: a scheme, path, port or address is refused
/// with the words that say what to give instead.
pub fn parse_domain(text: &str) -> Result<String, AppError> {
    let bad = |why: &str| AppError::BadRequest(format!("{why}: give a domain name such as example.com"));
    let text = text.trim();
    let text = text.strip_suffix('.').unwrap_or(text);
    if text.is_empty() {
        return Err(bad("the domain is empty"));
    }
    if text.contains(['/', ':', '@', '?', '#']) || text.contains(char::is_whitespace) {
        return Err(bad("the domain is a name only, without scheme, path, port or spaces"));
    }
    let host = url::Host::parse(text).map_err(|_| bad("the domain is not a valid name"))?;
    let url::Host::Domain(name) = host else {
        return Err(bad("an IP address is not a domain"));
    };
    if name.len() > MAX_DOMAIN {
        return Err(bad("the domain is longer than 253 characters"));
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return Err(bad("a domain property needs a name with a dot"));
    }
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !labels.iter().all(label_ok) {
        return Err(bad("the domain is not a valid name (letters, digits and hyphens, 63 at most between dots)"));
    }
    Ok(name)
}

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

/// Adds a property for the actor: the name in normal form, a fresh token. Nothing is looked
/// up yet: the owner publishes the record first.
pub async fn add(state: &AppState, actor: Actor, text: &str) -> Result<DomainProperty, AppError> {
    let domain = parse_domain(text)?;
    Ok(state.store.create_domain(actor, &domain, now()).await?)
}

/// Looks the record up and records the outcome; then the sites it covers follow it (see
/// `follow`). The API's and console's "Verify now" and the periodic re-check go through here.
pub async fn verify(state: &AppState, property: &DomainProperty) -> Result<DomainCheck, AppError> {
    let answer = tokio::time::timeout(LOOKUP_TIMEOUT, dns::txt_records(&state.dns, &property.domain))
        .await
        .unwrap_or(dns::TxtAnswer::Timeout);
    let refusal = dns::refusal(&property.domain, &property.verification_token, &answer);
    let verified = refusal.is_none();
    state.store.record_domain_verification(property.id, verified, now()).await?;
    if property.verified_at.is_some() && !verified {
        tracing::info!(domain = %property.domain, "domain property verification lost");
    }
    follow(state, property.user_id, &property.domain, verified).await?;
    let detail = refusal.unwrap_or_else(|| {
        format!("{} has the TXT record {}", property.domain, dns::record_value(&property.verification_token))
    });
    Ok(DomainCheck { verified, detail })
}

/// Deletes a property of the actor; the sites it covered are checked again at once.
pub async fn delete(state: &AppState, actor: Actor, domain_id: i64) -> Result<(), AppError> {
    let property = state.store.domain(actor, domain_id).await?;
    state.store.delete_domain(actor, domain_id).await?;
    follow(state, property.user_id, &property.domain, false).await
}

/// The sites of the property's user under its name, by id (covered while it is verified).
pub async fn sites_under(state: &AppState, property: &DomainProperty) -> Result<Vec<Site>, AppError> {
    let sites = state.store.sites_owned_by(property.user_id).await?;
    Ok(sites.into_iter().filter(|s| covers(&property.domain, &s.origin)).collect())
}

/// The user's sites under `domain` whose state disagrees with the property's: unverified ones
/// when it is verified (now covered), verified ones when it is not (their proof may have been
/// this property), each verified again through the one path of sites, which looks for a
/// covering property first, then for the site's own file or meta tag.
async fn follow(state: &AppState, user_id: i64, domain: &str, verified: bool) -> Result<(), AppError> {
    let sites = state.store.sites_owned_by(user_id).await?;
    let stale = sites.into_iter().filter(|s| covers(domain, &s.origin) && s.verified_at.is_some() != verified);
    futures_util::stream::iter(stale)
        .for_each_concurrent(SITE_CONCURRENCY, |site| async move {
            if let Err(e) = crate::scheduler::verify_now(state, &site).await {
                tracing::warn!(site = %site.origin, error = %e, "verification after a domain property changed");
            }
        })
        .await;
    Ok(())
}

/// A site just added: verified at once (with its robots.txt sitemaps added) when a verified
/// property of its owner covers it. Returns the site as it stands.
pub async fn after_site_added(state: &AppState, site: Site) -> Result<Site, AppError> {
    if covering_domain(state, &site).await?.is_none() {
        return Ok(site);
    }
    crate::scheduler::verify_now(state, &site).await?;
    Ok(state.store.site_by_id(site.id).await?)
}

/// One pass of the periodic re-check: up to a hundred properties not looked up for
/// `interval_seconds`, claimed so that another process's pass takes others. Returns how many.
pub async fn recheck_once(state: &AppState, interval_seconds: i64) -> Result<usize, AppError> {
    let now = now();
    let properties = state.store.domains_to_verify(now - interval_seconds, now, PASS).await?;
    let checked = properties.len();
    futures_util::stream::iter(properties)
        .for_each_concurrent(SITE_CONCURRENCY, |property| async move {
            if let Err(e) = verify(state, &property).await {
                tracing::warn!(domain = %property.domain, error = %e, "domain property re-check");
            }
        })
        .await;
    Ok(checked)
}

/// The re-check task of domain properties, beside the sites' (`scheduler::recheck`): a pass,
/// then a pause (shorter while there is a backlog).
pub(crate) async fn run_rechecks(state: AppState, interval: Duration, poll: Duration, shutdown: watch::Receiver<bool>) {
    let seconds = interval.as_secs().max(1) as i64;
    let idle = interval.min(Duration::from_secs(60));
    while !*shutdown.borrow() {
        let pause = match recheck_once(&state, seconds).await {
            Ok(n) if n as i64 == PASS => poll,
            Ok(_) => idle,
            Err(e) => {
                tracing::warn!(error = %e, "domain property re-check");
                idle
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = crate::scheduler::stopping(shutdown.clone()) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_in_normal_form() {
        for (input, expected) in [
            ("example.com", "example.com"),
            (" Example.COM. ", "example.com"),
            ("www.example.co.uk", "www.example.co.uk"),
            ("bücher.example", "xn--bcher-kva.example"),
            ("_dmarc.example.com", "_dmarc.example.com"),
        ] {
            assert_eq!(parse_domain(input).unwrap(), expected, "{input}");
        }
        for bad in [
            "",
            ".",
            "com",
            "localhost",
            "https://example.com",
            "example.com/path",
            "example.com:8080",
            "127.0.0.1",
            "[::1]",
            "a b.com",
            "-a.com",
            "a..com",
            &format!("{}.com", "a".repeat(64)),
        ] {
            assert!(matches!(parse_domain(bad), Err(AppError::BadRequest(_))), "{bad}");
        }
    }

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
