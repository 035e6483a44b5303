//! Sitemaps of a site: add (verified site or robots.txt cross-submission), list, show with
//! the last download, Resubmit, Remove, the download history and a download's findings.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mapwright_store::{Actor, Download, FindingRecord, Sitemap};
use serde::{Deserialize, Serialize};

use crate::auth::CurrentUser;
use crate::submission;
use crate::{AppError, AppState, now};

/// `POST /api/v1/sites/{id}/sitemaps` body.
#[derive(Deserialize)]
pub(crate) struct NewSitemap {
    url: String,
}

/// A sitemap with the summary of its last download, if any.
#[derive(Serialize)]
pub(crate) struct SitemapView {
    #[serde(flatten)]
    sitemap: Sitemap,
    last_download: Option<Download>,
}

/// `POST /api/v1/sites/{id}/sitemaps` `{"url"}`: 201 with the sitemap, due at once; 200 with
/// the row when it was there already (a removed one is restored, due at once).
pub(crate) async fn add(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(site_id): Path<i64>,
    Json(body): Json<NewSitemap>,
) -> Result<(StatusCode, Json<Sitemap>), AppError> {
    let added = submission::add_sitemap(&state, Actor::from(&user), site_id, &body.url).await?;
    let status = if matches!(added, submission::Added::New(_)) { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(Sitemap::clone(&added))))
}

/// `GET /api/v1/sites/{id}/sitemaps`: removed ones included (their `removed_at` is set).
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(site_id): Path<i64>,
) -> Result<Json<Vec<Sitemap>>, AppError> {
    Ok(Json(state.store.list_sitemaps(Actor::from(&user), site_id).await?))
}

/// `GET /api/v1/sitemaps/{id}`: the sitemap and its last download.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<i64>,
) -> Result<Json<SitemapView>, AppError> {
    let actor = Actor::from(&user);
    let sitemap = state.store.sitemap(actor, id).await?;
    let last_download = state.store.list_downloads(actor, id, 1).await?.into_iter().next();
    Ok(Json(SitemapView { sitemap, last_download }))
}

/// `POST /api/v1/sitemaps/{id}/resubmit`: 202, fetched again as soon as a worker is free (a
/// removed sitemap is restored).
pub(crate) async fn resubmit(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<i64>,
) -> Result<(StatusCode, Json<Sitemap>), AppError> {
    let actor = Actor::from(&user);
    crate::submission::resubmit(&state, actor, id).await?;
    Ok((StatusCode::ACCEPTED, Json(state.store.sitemap(actor, id).await?)))
}

/// `DELETE /api/v1/sitemaps/{id}`: Remove. No more fetches; its URLs leave the site unless
/// another sitemap lists them. The history stays.
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<i64>,
) -> Result<StatusCode, AppError> {
    state.store.remove_sitemap(Actor::from(&user), id, now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `?limit=` of the download history.
#[derive(Deserialize)]
pub(crate) struct HistoryQuery {
    limit: Option<i64>,
}

/// `GET /api/v1/sitemaps/{id}/downloads?limit=`: newest first, 50 by default, at most 1,000.
pub(crate) async fn downloads(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<i64>,
    Query(query): Query<HistoryQuery>,
) -> Result<Json<Vec<Download>>, AppError> {
    let limit = query.limit.unwrap_or(50).clamp(1, 1000);
    Ok(Json(state.store.list_downloads(Actor::from(&user), id, limit).await?))
}

/// `GET /api/v1/downloads/{id}/findings`: rule, severity, position and message of each.
pub(crate) async fn findings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<i64>,
) -> Result<Json<Vec<FindingRecord>>, AppError> {
    Ok(Json(state.store.list_findings(Actor::from(&user), id).await?))
}
