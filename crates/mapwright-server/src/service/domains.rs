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
//! DNS look-up is the base's [`crate::domains::dns`], the look-up of a property and its
//! periodic re-check the re-check job's ([`crate::jobs::recheck::domains`]).

use mapwright_store::{Actor, DomainProperty, Site};

pub use crate::domains::{covering_domain, covers};
pub use crate::jobs::recheck::domains::{DomainCheck, verify};
use crate::outbound::Held;
use crate::{AppError, AppState, now};

/// The longest name DNS allows.
const MAX_DOMAIN: usize = 253;

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

/// Adds a property for the actor: the name in normal form, a fresh token. Nothing is looked
/// up yet: the owner publishes the record first.
pub async fn add(state: &AppState, actor: Actor, text: &str) -> Result<DomainProperty, AppError> {
    let domain = parse_domain(text)?;
    Ok(state.store.create_domain(actor, &domain, now()).await?)
}

/// Deletes a property of the actor; the sites it covered are checked again at once.
pub async fn delete(state: &AppState, actor: Actor, domain_id: i64) -> Result<(), AppError> {
    let property = state.store.domain(actor, domain_id).await?;
    state.store.delete_domain(actor, domain_id).await?;
    crate::jobs::recheck::domains::follow(state, property.user_id, &property.domain, false).await
}

/// The sites of the property's user under its name, by id (covered while it is verified).
pub async fn sites_under(state: &AppState, property: &DomainProperty) -> Result<Vec<Site>, AppError> {
    let sites = state.store.sites_owned_by(property.user_id).await?;
    Ok(sites.into_iter().filter(|s| covers(&property.domain, &s.origin)).collect())
}

/// A site just added: verified at once (with its robots.txt sitemaps added) when a verified
/// property of its owner covers it. Returns the site as it stands.
pub async fn after_site_added(state: &AppState, site: Site) -> Result<Site, AppError> {
    if covering_domain(state, &site).await?.is_none() {
        return Ok(site);
    }
    crate::jobs::recheck::verify_now(state, &site).await?;
    Ok(state.store.site_by_id(site.id).await?)
}

/// "Verify now" of a domain property as its user asks it (API and console): paced per
/// property, a failed look-up remembered for a while (`Rates::failed_proof_memory`), each name's look-ups
/// bounded for every user together (the gate, in [`verify`]). Paced, nothing is looked up
/// and the answer says so (`held`).
pub async fn verify_now(state: &AppState, property: &DomainProperty) -> Result<DomainCheck, AppError> {
    let now = now();
    let memory = state.gate.rates().failed_proof_memory.as_secs() as i64;
    if property.verified_at.is_none()
        && let Some(at) = property.last_checked_at
        && (0..memory).contains(&(now - at))
    {
        let wait = (memory - (now - at)) as u64;
        return Ok(DomainCheck {
            verified: false,
            detail: format!(
                "not looked up again: the look-up {} s ago found no record; the service looks again in {wait} s",
                now - at
            ),
            held: Some(wait),
        });
    }
    let rates = *state.gate.rates();
    if let Err(Held { retry_after, .. }) =
        state.gate.pace(&rates.verify_per_domain, &property.id.to_string(), &property.domain).await
    {
        return Ok(DomainCheck {
            verified: property.verified_at.is_some(),
            detail: format!(
                "not looked up now: \"Verify now\" of {} is paced; try again in {retry_after} s",
                property.domain
            ),
            held: Some(retry_after),
        });
    }
    verify(state, property).await
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
}
