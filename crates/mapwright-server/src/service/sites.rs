//! Sites, what the JSON API and the console share: "Verify now" is the re-check job's own path
//! ([`crate::jobs::recheck::verify_now`]), so a site is verified the same way by a click and by
//! the periodic re-check; a site just added follows its owner's domain properties
//! ([`crate::service::domains::after_site_added`]); a site's overview ([`overview`]) is what its
//! console page and the API's `GET /api/v1/sites/{id}/overview` show.

use mapwright_store::{Actor, IndexNowReceipt, Invitation, Member, Role, Site, Webhook, WordTotal};
use serde::Serialize;

use crate::outbound::{Held, host_of, masked_url};
pub use crate::service::domains::after_site_added;
use crate::verify::Verification;
use crate::{AppError, AppState, now};

/// "Verify now" as an owner asks it (API and console): paced per site and per host of its
/// origin (every user's sites with that origin together, since the origin may be anyone's),
/// a failed proof remembered for a while (`Rates::failed_proof_memory`); then the re-check job's own path.
/// Paced or remembered, nothing is fetched and the answer says so (`held`).
pub async fn verify_now(state: &AppState, site: &Site) -> Result<Verification, AppError> {
    let now = now();
    let memory = state.gate.rates().failed_proof_memory.as_secs() as i64;
    if site.verified_at.is_none()
        && let Some(at) = site.last_checked_at
        && (0..memory).contains(&(now - at))
    {
        let wait = (memory - (now - at)) as u64;
        return Ok(Verification {
            verified: false,
            method: None,
            detail: format!(
                "not checked again: the check {} s ago found no proof; the service checks again in {wait} s",
                now - at
            ),
            held: Some(wait),
        });
    }
    let rates = *state.gate.rates();
    let paced = match state.gate.pace(&rates.verify_per_site, &site.id.to_string(), &site.origin).await {
        Ok(()) => match host_of(&site.origin) {
            Some((host, _)) => state.gate.pace(&rates.verify_per_host, &host, &host).await,
            None => Ok(()),
        },
        Err(held) => Err(held),
    };
    if let Err(held) = paced {
        return Ok(held_verification(site, &held));
    }
    crate::jobs::recheck::verify_now(state, site).await
}

/// The answer of a "Verify now" the gate paced: the site's state as it stands.
fn held_verification(site: &Site, held: &Held) -> Verification {
    Verification {
        verified: site.verified_at.is_some(),
        method: None,
        detail: format!(
            "not checked now: \"Verify now\" of {} is paced, for every user together; try again in {} s",
            held.target, held.retry_after
        ),
        held: Some(held.retry_after),
    }
}

/// Which proof keeps a site verified, as the overview says it: the method its last check found
/// and, for a domain property, the property's name, whose it is (one of the site's owners), and
/// its id when it is the viewer's own (so the console links to it).
#[derive(Debug, Clone, Serialize)]
pub struct Proof {
    /// `file`, `meta` or `domain`; `null` when the site is not verified, or was verified before
    /// mapwright kept which proof (its next check says).
    pub method: Option<String>,
    /// The domain property's name, when `method` is `domain`.
    pub domain: Option<String>,
    /// The address of the owner whose property it is.
    pub domain_owner: Option<String>,
    /// The property's id, only when it is the viewer's own.
    pub domain_id: Option<i64>,
}

/// A site's overview, what its console page and `GET /api/v1/sites/{id}/overview` both show:
/// the proof, the sitemaps counted by status word, who may see the site (members, invitations),
/// the webhooks its events go to, and the IndexNow submissions received for it.
pub struct Overview {
    /// The site.
    pub site: Site,
    /// The viewer's role.
    pub role: Role,
    /// Which proof keeps it verified.
    pub proof: Proof,
    /// Its sitemaps counted by the word each shows.
    pub totals: Vec<WordTotal>,
    /// Its members.
    pub members: Vec<Member>,
    /// Its invitations not accepted yet.
    pub invitations: Vec<Invitation>,
    /// Its webhook endpoints (to a reader, each URL masked but its origin).
    pub webhooks: Vec<Webhook>,
    /// The newest IndexNow submissions received for it.
    pub indexnow: Vec<IndexNowReceipt>,
}

/// IndexNow submissions an overview shows.
pub const INDEXNOW_SHOWN: i64 = 20;

/// The overview of a site the actor may see (a stranger's is `NotFound`).
pub async fn overview(state: &AppState, actor: Actor, site_id: i64) -> Result<Overview, AppError> {
    let site = state.store.site(actor, site_id).await?;
    let role = state.store.site_role(actor, site_id).await?;
    let stored = state.store.site_proof(actor, site_id).await?;
    let members = state.store.list_members(actor, site_id).await?;
    let mut proof = Proof { method: None, domain: None, domain_owner: None, domain_id: None };
    if site.verified_at.is_some() {
        proof.method = stored.verified_by;
        if let Some(name) = stored.verified_domain.filter(|_| proof.method.as_deref() == Some("domain")) {
            let properties = state.store.verified_domains_of_site_owners(site_id).await?;
            if let Some(property) = properties.iter().find(|p| p.domain == name) {
                proof.domain_owner = members.iter().find(|m| m.user_id == property.user_id).map(|m| m.email.clone());
                proof.domain_id = (property.user_id == actor.user_id).then_some(property.id);
            }
            proof.domain = Some(name);
        }
    }
    Ok(Overview {
        totals: state.store.site_totals(actor, site_id).await?,
        invitations: state.store.list_invitations(actor, site_id, now()).await?,
        webhooks: state
            .store
            .list_webhooks(actor, site_id)
            .await?
            .into_iter()
            // A chat hook's URL is its secret: a reader sees only where it goes.
            .map(|w| if role == Role::Owner { w } else { Webhook { url: masked_url(&w.url), ..w } })
            .collect(),
        indexnow: state.store.list_indexnow_receipts(actor, site_id, INDEXNOW_SHOWN).await?,
        site,
        role,
        proof,
        members,
    })
}
