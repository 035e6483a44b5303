//! Sitemaps of a site: add (verified site or robots.txt cross-submission), list, show with
//! the last download, Resubmit, Remove, the download history and a download's findings.

use axum::Json;
use axum::extract::State;
use axum::http::header::LINK;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, ContentCounts, Download, FindingRecord, Sitemap, TreeTally};
use serde::{Deserialize, Serialize};

use crate::auth::CurrentUser;
use crate::extract::{Id, JsonBody, Params};
use crate::service::submission;
use crate::{AppError, AppState, now};

/// `POST /api/v1/sites/{id}/sitemaps` body.
#[derive(Deserialize)]
pub(crate) struct NewSitemap {
    url: String,
}

/// A sitemap as the API shows it: the stored row's public fields, and what a Search Console
/// API client reads of a sitemap (`isPending`, `isSitemapsIndex`, `type`, `errors`,
/// `warnings`, `lastSubmitted`, `lastDownloaded`, `contents`), in our own names.
#[derive(Serialize)]
pub(crate) struct SitemapView {
    id: i64,
    site_id: i64,
    url: String,
    source: String,
    parent_id: Option<i64>,
    /// When it became one of the site's sitemaps: first submitted, or restored after a removal.
    submitted_at: i64,
    /// Its last submission (added again, resubmitted or pinged; `submitted_at` if never since):
    /// Search Console's `lastSubmitted`, and the console's "Submitted".
    last_submitted_at: i64,
    next_fetch_at: i64,
    last_downloaded_at: Option<i64>,
    status: Option<String>,
    http_status: Option<i64>,
    etag: Option<String>,
    last_modified: Option<String>,
    content_hash: Option<String>,
    index_lastmod: Option<String>,
    removed_at: Option<i64>,
    url_count: Option<i64>,
    fetch_interval: Option<i64>,
    failures: i64,
    /// When its last attempt was held back by the service's outbound gate (nothing was asked of
    /// the site, nothing recorded): why "next read" moved on without a read. `null` once a
    /// read is recorded after it.
    held_at: Option<i64>,
    /// The gate's words for that hold.
    held_reason: Option<String>,
    /// Waiting for a fetch: never read yet, or due now (resubmitted, pinged, or its time came);
    /// never while its site is not verified (nothing is read then: `status_word` is `paused`).
    pending: bool,
    /// The word the console shows for it, as the name of the `status` filter that lists it:
    /// `success`, `errors`, `warnings`, `failed`, `pending`, `paused` or `removed` (for an index,
    /// its tree's; decided in one place for the console, the filters and this field).
    status_word: &'static str,
    is_index: bool,
    /// From the content of the last read: `sitemap`, `sitemap_index`, `rss`, `atom`, `text`.
    r#type: Option<&'static str>,
    /// Findings of severity error of the last read (a 304 keeps those of the read before).
    errors: Option<i64>,
    /// Findings of severity warning of the last read.
    warnings: Option<i64>,
    /// The worst of its own status and, for an index, its live children's: `failed`, `errors`,
    /// `warnings`, `pending` (it or a child is not read yet) or `ok`; `null` only when removed.
    rollup_status: Option<String>,
    /// Its errors plus, for an index, its children's.
    rollup_errors: i64,
    /// Its warnings plus, for an index, its children's.
    rollup_warnings: i64,
    /// URLs stored: for an index, the distinct URLs of its children.
    rollup_urls: i64,
    /// URL entries of the last read by content type; for an index, its live children's (at any
    /// depth) summed, as Search Console sums them.
    contents: Option<ContentCounts>,
}

/// A sitemap with its last download, if any (`GET /api/v1/sitemaps/{id}`).
#[derive(Serialize)]
pub(crate) struct SitemapStatus {
    #[serde(flatten)]
    sitemap: SitemapView,
    last_download: Option<Download>,
}

/// The API's name of a format the core recognised.
fn type_name(format: &str) -> Option<&'static str> {
    match format {
        "urlset" => Some("sitemap"),
        "sitemapindex" => Some("sitemap_index"),
        "rss" => Some("rss"),
        "atom" => Some("atom"),
        "text" => Some("text"),
        "oai-pmh" => Some("oai_pmh"),
        _ => None,
    }
}

/// The API's view of a stored sitemap; `tree` is the tally of an index's descendants.
fn view(sitemap: Sitemap, tree: Option<&TreeTally>) -> SitemapView {
    // Counts of the last read, once there was one (a 304 keeps those of the read it stands for).
    let read = sitemap.status.is_some();
    let contents = match tree {
        Some(t) if sitemap.is_index => Some(ContentCounts { web: t.web, image: t.image, video: t.video, news: t.news }),
        _ => sitemap.web_count.map(|web| ContentCounts {
            web,
            image: sitemap.image_count.unwrap_or(0),
            video: sitemap.video_count.unwrap_or(0),
            news: sitemap.news_count.unwrap_or(0),
        }),
    };
    let pending = sitemap.removed_at.is_none()
        && sitemap.site_verified
        && (sitemap.last_downloaded_at.is_none() || sitemap.next_fetch_at <= now());
    let status_word = crate::status::word_key(&sitemap).as_str();
    let last_submitted_at = sitemap.last_submitted();
    // The store keeps no verdict while it or a child waits for a read: the API says so.
    let rollup_status = match sitemap.rollup_status {
        _ if sitemap.removed_at.is_some() => None,
        Some(status) => Some(status),
        None => Some("pending".to_owned()),
    };
    SitemapView {
        pending,
        status_word,
        is_index: sitemap.is_index,
        r#type: sitemap.format.as_deref().and_then(type_name),
        errors: read.then_some(sitemap.errors),
        warnings: read.then_some(sitemap.warnings),
        rollup_status,
        rollup_errors: sitemap.rollup_errors,
        rollup_warnings: sitemap.rollup_warnings,
        rollup_urls: sitemap.rollup_urls,
        contents,
        last_submitted_at,
        id: sitemap.id,
        site_id: sitemap.site_id,
        url: sitemap.url,
        source: sitemap.source,
        parent_id: sitemap.parent_id,
        submitted_at: sitemap.submitted_at,
        next_fetch_at: sitemap.next_fetch_at,
        last_downloaded_at: sitemap.last_downloaded_at,
        status: sitemap.status,
        http_status: sitemap.http_status,
        etag: sitemap.etag,
        last_modified: sitemap.last_modified,
        content_hash: sitemap.content_hash,
        index_lastmod: sitemap.index_lastmod,
        removed_at: sitemap.removed_at,
        url_count: sitemap.url_count,
        fetch_interval: sitemap.fetch_interval,
        failures: sitemap.failures,
        held_at: sitemap.held_at,
        held_reason: sitemap.held_reason,
    }
}

/// The views of these sitemaps, with the tallies of the indexes among them.
async fn views(state: &AppState, actor: Actor, sitemaps: Vec<Sitemap>) -> Result<Vec<SitemapView>, AppError> {
    let indexes: Vec<i64> = sitemaps.iter().filter(|s| s.is_index && s.removed_at.is_none()).map(|s| s.id).collect();
    // By index id: each sitemap finds its tally at once (a scan per sitemap was quadratic).
    let mut tallies = std::collections::HashMap::with_capacity(indexes.len());
    for chunk in indexes.chunks(500) {
        tallies.extend(state.store.tree_tallies(actor, chunk).await?.into_iter().map(|t| (t.index_id, t)));
    }
    Ok(sitemaps
        .into_iter()
        .map(|s| {
            // An index with no live child yet sums nothing.
            let tally = tallies.get(&s.id).copied().unwrap_or_default();
            view(s, Some(&tally))
        })
        .collect())
}

/// One sitemap's view.
async fn view_one(state: &AppState, actor: Actor, sitemap: Sitemap) -> Result<SitemapView, AppError> {
    let tally = match sitemap.is_index && sitemap.removed_at.is_none() {
        true => Some(state.store.tree_tallies(actor, &[sitemap.id]).await?.into_iter().next().unwrap_or_default()),
        false => None,
    };
    Ok(view(sitemap, tally.as_ref()))
}

/// `POST /api/v1/sites/{id}/sitemaps` `{"url"}`: 201 with the sitemap, due at once; 200 with
/// the row when it was there already (a removed one is restored, due at once).
pub(crate) async fn add(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    JsonBody(body): JsonBody<NewSitemap>,
) -> Result<(StatusCode, Json<SitemapView>), AppError> {
    let actor = Actor::from(&user);
    let added = submission::add_sitemap(&state, actor, site_id, &body.url).await?;
    let status = if matches!(added, submission::Added::New(_)) { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(view_one(&state, actor, Sitemap::clone(&added)).await?)))
}

/// Sitemaps per page of `GET /api/v1/sites/{id}/sitemaps`, at most and by default.
const SITEMAP_PAGE: i64 = 1000;

/// `GET /api/v1/sites/{id}/sitemaps`: removed ones included (their `removed_at` is set), a
/// page at a time: `limit` (1 to 1,000, the default) rows from `offset`; when more follow, a
/// `Link` header (`rel="next"`) gives the next page's address.
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Response, AppError> {
    let actor = Actor::from(&user);
    // `status`, `type`, `errors`, `sort`, `order`: see `crate::listing`.
    let listing = crate::listing::parse(|name| params.text(name), true)?;
    let offset = params.int("offset", 0, i64::MAX)?.unwrap_or(0);
    let limit = params.int("limit", 1, SITEMAP_PAGE)?.unwrap_or(SITEMAP_PAGE);
    let (rows, more) = state.store.list_sitemaps_by(actor, Some(site_id), &listing, offset, limit).await?;
    let sitemaps = rows.into_iter().map(|row| row.sitemap).collect();
    let mut response = Json(views(&state, actor, sitemaps).await?).into_response();
    if more {
        let mut next = url::form_urlencoded::Serializer::new(String::new());
        for name in ["status", "type", "errors", "sort", "order"] {
            if let Some(value) = params.text(name)? {
                next.append_pair(name, value);
            }
        }
        next.append_pair("offset", &offset.saturating_add(limit).to_string()).append_pair("limit", &limit.to_string());
        let link = format!("</api/v1/sites/{site_id}/sitemaps?{}>; rel=\"next\"", next.finish());
        if let Ok(value) = HeaderValue::from_str(&link) {
            response.headers_mut().insert(LINK, value);
        }
    }
    Ok(response)
}

/// `GET /api/v1/sitemaps/{id}`: the sitemap and its last download.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<SitemapStatus>, AppError> {
    let actor = Actor::from(&user);
    let sitemap = state.store.sitemap(actor, id).await?;
    let last_download = state.store.list_downloads(actor, id, 1).await?.into_iter().next();
    Ok(Json(SitemapStatus { sitemap: view_one(&state, actor, sitemap).await?, last_download }))
}

/// `POST /api/v1/sitemaps/{id}/resubmit`: 202, fetched again as soon as a worker is free (a
/// removed sitemap is restored); an index with its whole tree (an unchanged child costs a 304).
/// A child of an index is resubmitted on its own the same way.
pub(crate) async fn resubmit(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<(StatusCode, Json<SitemapView>), AppError> {
    let actor = Actor::from(&user);
    crate::service::submission::resubmit(&state, actor, id).await?;
    let sitemap = state.store.sitemap(actor, id).await?;
    Ok((StatusCode::ACCEPTED, Json(view_one(&state, actor, sitemap).await?)))
}

/// `DELETE /api/v1/sitemaps/{id}`: Remove. No more fetches; its URLs leave the site unless
/// another sitemap lists them. The history stays.
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    state.store.remove_sitemap(Actor::from(&user), id, now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/sitemaps/{id}/downloads?limit=`: newest first, 50 by default, at most 1,000.
pub(crate) async fn downloads(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Json<Vec<Download>>, AppError> {
    let limit = params.int("limit", 1, 1000)?.unwrap_or(50);
    Ok(Json(state.store.list_downloads(Actor::from(&user), id, limit).await?))
}

/// `GET /api/v1/downloads/{id}/findings`: rule, severity, position and message of each.
pub(crate) async fn findings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<Vec<FindingRecord>>, AppError> {
    Ok(Json(state.store.list_findings(Actor::from(&user), id).await?))
}
