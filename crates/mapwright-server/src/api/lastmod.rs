//! A sitemap's lastmod trust as the API gives it, the console's equal: the verdict word and its
//! reasons (decided once, `trust::verdict`), the last read's counts with their shares, and the
//! URL checker's comparisons of the pages' versions with their lastmod.

use axum::Json;
use axum::extract::State;
use mapwright_store::{Actor, LastmodTally, LastmodVisits};
use serde::Serialize;

use crate::auth::CurrentUser;
use crate::extract::Id;
use crate::trust::{share, verdict};
use crate::{AppError, AppState};

/// The `LastmodTrust` schema.
#[derive(Serialize)]
pub(crate) struct TrustView {
    sitemap_id: i64,
    /// `unknown`, `missing`, `untrusted`, `doubtful`, `coarse` or `trusted`.
    verdict: &'static str,
    /// The console's word for it.
    word: &'static str,
    /// Why, one sentence a finding.
    reasons: Vec<String>,
    /// The last read's counts (`null` before a read parsed the file).
    read: Option<LastmodTally>,
    /// Each count as a share of what it counts among (`null` when that is none).
    shares: Shares,
    visits: LastmodVisits,
}

/// Shares (0 to 1) of the counts: of the values with a lastmod, but `with_lastmod` (of the
/// entries) and the checker's two (of the URLs compared).
#[derive(Serialize)]
struct Shares {
    with_lastmod: Option<f64>,
    date_only: Option<f64>,
    future: Option<f64>,
    near_read: Option<f64>,
    top: Option<f64>,
    lastmod_alone: Option<f64>,
    content_alone: Option<f64>,
}

/// `GET /api/v1/sitemaps/{id}/lastmod`.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<TrustView>, AppError> {
    let trust = state.store.lastmod_trust(Actor::from(&user), id).await?;
    let v = verdict(&trust);
    let t = trust.tally.clone().unwrap_or_default();
    let w = t.with_lastmod;
    let (compared, visits) = (trust.visits.compared, trust.visits);
    Ok(Json(TrustView {
        sitemap_id: id,
        verdict: v.trust.key(),
        word: v.trust.word(),
        reasons: v.reasons,
        shares: Shares {
            with_lastmod: share(w, t.entries),
            date_only: share(t.date_only, w),
            future: share(t.future, w),
            near_read: share(t.near_read, w),
            top: share(t.top_count, w),
            lastmod_alone: share(visits.lastmod_alone, compared),
            content_alone: share(visits.content_alone, compared),
        },
        read: trust.tally,
        visits,
    }))
}
