//! Domain properties (`crate::domains`): add, list, show (with the TXT record to publish and
//! the sites the property covers), delete, and "Verify now".

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use mapwright_store::{Actor, DomainProperty};
use serde::{Deserialize, Serialize};

use crate::auth::CurrentUser;
use crate::domains::dns;
use crate::extract::{Id, JsonBody};
use crate::service::domains::{self, DomainCheck};
use crate::{AppError, AppState};

/// `POST /api/v1/domains` body.
#[derive(Deserialize)]
pub(crate) struct NewDomain {
    domain: String,
}

/// A property as the API shows it: the stored row, the record to publish and the user's sites
/// under the name.
#[derive(Serialize)]
pub(crate) struct DomainView {
    #[serde(flatten)]
    property: DomainProperty,
    record: Record,
    sites: Vec<CoveredSite>,
}

/// The TXT record that proves the property.
#[derive(Serialize)]
struct Record {
    /// Always `TXT`.
    r#type: &'static str,
    /// Where to publish it: the domain itself.
    name: String,
    /// Its value.
    value: String,
}

/// One of the user's sites under the name (covered while the property is verified).
#[derive(Serialize)]
struct CoveredSite {
    id: i64,
    origin: String,
    verified: bool,
}

async fn view(state: &AppState, property: DomainProperty) -> Result<DomainView, AppError> {
    let sites = domains::sites_under(state, &property)
        .await?
        .into_iter()
        .map(|s| CoveredSite { id: s.id, origin: s.origin, verified: s.verified_at.is_some() })
        .collect();
    let record =
        Record { r#type: "TXT", name: property.domain.clone(), value: dns::record_value(&property.verification_token) };
    Ok(DomainView { property, record, sites })
}

/// `POST /api/v1/domains` `{"domain"}`: 201 with the property and the record to publish; 409
/// when the user has it already.
pub(crate) async fn create(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    JsonBody(body): JsonBody<NewDomain>,
) -> Result<(StatusCode, Json<DomainView>), AppError> {
    let property = domains::add(&state, Actor::from(&user), &body.domain).await?;
    Ok((StatusCode::CREATED, Json(view(&state, property).await?)))
}

/// `GET /api/v1/domains`: the user's properties (every user's for an admin).
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Json<Vec<DomainView>>, AppError> {
    let mut views = Vec::new();
    for property in state.store.list_domains(Actor::from(&user)).await? {
        views.push(view(&state, property).await?);
    }
    Ok(Json(views))
}

/// `GET /api/v1/domains/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<DomainView>, AppError> {
    let property = state.store.domain(Actor::from(&user), id).await?;
    Ok(Json(view(&state, property).await?))
}

/// `DELETE /api/v1/domains/{id}`: the sites it covered are checked again at once.
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    domains::delete(&state, Actor::from(&user), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

// Alike on purpose: `VerifyResult` and `verify_now` have the shape of `api/sites.rs`'s (a site is verified by a
// file, a property by DNS): each its own types and service call; only the axum handler's
// frame is alike.
/// "Verify now" result: what the look-up found, and the property as it stands afterwards.
#[derive(Serialize)]
pub(crate) struct VerifyResult {
    verification: DomainCheck,
    domain: DomainView,
}

/// `POST /api/v1/domains/{id}/verify`: looks the TXT record up now and records the result (a
/// failure unverifies a verified property, as the periodic re-check would).
pub(crate) async fn verify_now(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<VerifyResult>, AppError> {
    let actor = Actor::from(&user);
    let property = state.store.domain(actor, id).await?;
    let verification = domains::verify_now(&state, &property).await?;
    let property = state.store.domain(actor, id).await?;
    Ok(Json(VerifyResult { verification, domain: view(&state, property).await? }))
}
