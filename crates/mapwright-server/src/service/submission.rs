//! Which sitemaps a user may add to a site (../shared/PROTOCOL.md section 5): one on the
//! site's own origin once the site is verified, or one on another host that the site's
//! robots.txt names in a `Sitemap:` line (cross-submission). The JSON API and the console's
//! form share [`add_sitemap`], so both refuse the same things with the same words.

use mapwright_store::{Actor, Site, Sitemap, Source};

pub use crate::sitemap_url::parse_sitemap_url;
use crate::{AppError, AppState, now};

/// What adding a sitemap did: the API answers 201 for a new one and 200 otherwise, the console
/// says which.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// A new sitemap, due at once.
    New(Sitemap),
    /// It was there already, not removed: nothing changed.
    AlreadySubmitted(Sitemap),
    /// It had been removed: restored, submitted now and due at once.
    Restored(Sitemap),
}

/// The sitemap, as it is now, whichever way it was added.
impl std::ops::Deref for Added {
    type Target = Sitemap;

    fn deref(&self) -> &Sitemap {
        match self {
            Added::New(s) | Added::AlreadySubmitted(s) | Added::Restored(s) => s,
        }
    }
}

/// Adds `url` to the actor's site `site_id` (due at once), or says why not: not an absolute
/// http(s) URL (400), the site not verified (422), or another host that the site's
/// robots.txt does not name (422). Another user's site is 404, a reader's 403. A sitemap
/// already there is left as it is; a removed one is restored.
pub async fn add_sitemap(state: &AppState, actor: Actor, site_id: i64, url: &str) -> Result<Added, AppError> {
    let site = state.store.site_as_owner(actor, site_id).await?;
    let url = parse_sitemap_url(url)?;
    if site.verified_at.is_none() {
        return Err(AppError::Rejected(format!(
            "{} is not verified yet: verify the site before adding sitemaps",
            site.origin
        )));
    }
    if url.origin().ascii_serialization() != site.origin {
        check_cross_submission(state, &site, url.as_str()).await?;
    }
    let existing = state.store.sitemap_by_url(actor, site.id, url.as_str()).await?;
    if let Some(sitemap) = existing.as_ref().filter(|s| s.removed_at.is_none()) {
        return Ok(Added::AlreadySubmitted(sitemap.clone()));
    }
    let sitemap = state.store.add_sitemap(actor, site.id, url.as_str(), Source::Api, now()).await?;
    state.wake_workers();
    Ok(if existing.is_some() { Added::Restored(sitemap) } else { Added::New(sitemap) })
}

/// Resubmit: the actor's sitemap is due now (a removed one is restored) and idle workers are
/// woken, so the download starts at once. The API's and the console's Resubmit both end here.
pub async fn resubmit(state: &AppState, actor: Actor, sitemap_id: i64) -> Result<(), AppError> {
    state.store.resubmit_sitemap(actor, sitemap_id, now()).await?;
    state.wake_workers();
    Ok(())
}

/// The site's robots.txt must name the sitemap in a `Sitemap:` line.
async fn check_cross_submission(state: &AppState, site: &Site, url: &str) -> Result<(), AppError> {
    let refused = |why: String| {
        AppError::Rejected(format!(
            "{url} is not on {origin}; a sitemap on another host is accepted only when \
             {origin}/robots.txt names it in a Sitemap: line ({why})",
            origin = site.origin
        ))
    };
    match mapwright_fetch::robots::fetch(&state.fetcher, &site.origin).await {
        Ok(robots) if robots.lists_sitemap(url) => Ok(()),
        Ok(_) => Err(refused("it does not".into())),
        Err(e) => Err(refused(format!("it could not be read: {e}"))),
    }
}
