//! Per-read diffs as the API gives them, the console's equal: the reads of a sitemap with what
//! each changed in its URL list, and the URLs one read added, removed or changed, a page at a
//! time and as CSV or JSON Lines. A diff lists at most `MAX_DIFF_URLS` URLs of each kind (the
//! counts are exact), so an export is one store query, not a stream.

use axum::Json;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, Change, ChildChanges, DiffUrl, FieldChange, MAX_DIFF_URLS, ReadDiff};
use serde::Serialize;

use crate::auth::CurrentUser;
use crate::extract::{Id, Params};
use crate::format::utc;
use crate::{AppError, AppState};

/// The most changed URLs one page holds.
const MAX_PAGE: i64 = 10_000;

/// A download with what its read changed (the `ReadDiff` schema).
#[derive(Serialize)]
pub(crate) struct ReadView {
    download_id: i64,
    sitemap_id: i64,
    downloaded_at: i64,
    status: String,
    http_status: Option<i64>,
    /// The read was merged and its diff stored (false for a 304, a failed fetch, and
    /// downloads stored before diffs were).
    recorded: bool,
    added: i64,
    removed: i64,
    changed: i64,
    /// How many of each are listed (at most `MAX_DIFF_URLS`).
    listed: Counts,
    /// Some changed URLs are not listed.
    truncated: bool,
    /// The sitemap's first merged read: every URL it lists is added.
    first_read: bool,
}

#[derive(Serialize)]
struct Counts {
    added: i64,
    removed: i64,
    changed: i64,
}

impl From<ReadDiff> for ReadView {
    fn from(r: ReadDiff) -> ReadView {
        ReadView {
            truncated: r.truncated(),
            first_read: r.first_read,
            listed: Counts { added: r.added_listed, removed: r.removed_listed, changed: r.changed_listed },
            download_id: r.download_id,
            sitemap_id: r.sitemap_id,
            downloaded_at: r.downloaded_at,
            status: r.status,
            http_status: r.http_status,
            recorded: r.recorded,
            added: r.added,
            removed: r.removed,
            changed: r.changed,
        }
    }
}

/// A URL a diff lists, with the fields a changed one changed, old -> new (the `DiffUrl`
/// schema; the JSON Lines export's line).
#[derive(Serialize)]
pub(crate) struct DiffUrlView {
    #[serde(flatten)]
    url: DiffUrl,
    /// What changed, field by field (`DiffUrl::fields`).
    fields: Vec<FieldChange>,
}

impl From<DiffUrl> for DiffUrlView {
    fn from(url: DiffUrl) -> DiffUrlView {
        DiffUrlView { fields: url.fields(), url }
    }
}

/// One read's diff and a page of its URLs (the `DiffPage` schema).
#[derive(Serialize)]
pub(crate) struct DiffPage {
    read: ReadView,
    items: Vec<DiffUrlView>,
    next_after: Option<i64>,
}

/// `GET /api/v1/sitemaps/{id}/diffs?limit=`: the sitemap's downloads, newest first (50 by
/// default, at most 1,000), each with what its read changed.
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Json<Vec<ReadView>>, AppError> {
    let limit = params.int("limit", 1, 1000)?.unwrap_or(50);
    let reads = state.store.list_read_diffs(Actor::from(&user), id, limit).await?;
    Ok(Json(reads.into_iter().map(ReadView::from).collect()))
}

/// `GET /api/v1/sitemaps/{id}/child-changes?limit=`: an index's changes rolled up, what the
/// latest read of each live child changed: totals over all of them and the children that
/// changed most (50 by default, at most 1,000). A sitemap that lists URLs has no children: 0.
pub(crate) async fn children(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Json<ChildChanges>, AppError> {
    let limit = params.int("limit", 1, 1000)?.unwrap_or(50);
    Ok(Json(state.store.child_changes(Actor::from(&user), id, limit).await?))
}

/// `?change=`: one kind of change, or all (absent or empty).
fn change(params: &Params) -> Result<Option<Change>, AppError> {
    match params.text("change")? {
        None | Some("") => Ok(None),
        Some(name) => Change::parse(name).map(Some).ok_or_else(|| {
            AppError::BadRequest(format!("the parameter change must be added, removed or changed, not {name:?}"))
        }),
    }
}

/// `GET /api/v1/downloads/{id}/diff?change=&after=&limit=`: what the download's read changed,
/// and one page of the URLs, by URL id (1,000 by default, at most 10,000); pass `next_after`
/// as `after` for the next.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Json<DiffPage>, AppError> {
    let change = change(&params)?;
    let after = params.int("after", 0, i64::MAX)?.unwrap_or(0);
    let limit = params.int("limit", 1, MAX_PAGE)?.unwrap_or(1000);
    let actor = Actor::from(&user);
    let read = state.store.read_diff(actor, id).await?;
    let page = state.store.list_diff_urls(actor, id, change, after, limit).await?;
    let items = page.items.into_iter().map(DiffUrlView::from).collect();
    Ok(Json(DiffPage { read: read.into(), items, next_after: page.next_after }))
}

/// `GET /api/v1/downloads/{id}/diff.csv?change=`.
pub(crate) async fn export_csv(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Response, AppError> {
    export(&state, Actor::from(&user), id, change(&params)?, Format::Csv).await
}

/// `GET /api/v1/downloads/{id}/diff.jsonl?change=`.
pub(crate) async fn export_jsonl(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
    params: Params,
) -> Result<Response, AppError> {
    export(&state, Actor::from(&user), id, change(&params)?, Format::Jsonl).await
}

/// An export's file format.
#[derive(Clone, Copy)]
enum Format {
    /// A header row, then one row per URL; times in ISO 8601 UTC.
    Csv,
    /// One `DiffUrl` per line; times in Unix seconds.
    Jsonl,
}

/// The CSV export's columns: `changes` is what a changed URL's read changed, old → new
/// ("lastmod 2024-01-01 → 2024-02-02; priority 0.5 → 0.8", `format::field_changes`).
const CSV_COLUMNS: [&str; 8] =
    ["change", "url", "lastmod", "changefreq", "priority", "removed_at", "url_id", "changes"];

/// Every URL a read's diff lists (of one kind, or all), by URL id.
async fn export(
    state: &AppState,
    actor: Actor,
    id: i64,
    change: Option<Change>,
    format: Format,
) -> Result<Response, AppError> {
    let page = state.store.list_diff_urls(actor, id, change, 0, 3 * MAX_DIFF_URLS).await?;
    let body = match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let io = |e: csv::Error| AppError::Internal(Box::new(e));
            w.write_record(CSV_COLUMNS).map_err(io)?;
            for u in &page.items {
                w.write_record([
                    u.change.as_str(),
                    u.loc.as_str(),
                    u.lastmod.as_deref().unwrap_or(""),
                    u.changefreq.as_deref().unwrap_or(""),
                    &u.priority.map(|p| p.to_string()).unwrap_or_default(),
                    &u.removed_at.map(utc).unwrap_or_default(),
                    &u.url_id.to_string(),
                    &crate::format::field_changes(&u.fields()),
                ])
                .map_err(io)?;
            }
            w.into_inner().map_err(|e| AppError::Internal(Box::new(e.into_error())))?
        }
        Format::Jsonl => {
            let mut out = Vec::new();
            for u in &page.items {
                let line = DiffUrlView::from(u.clone());
                serde_json::to_writer(&mut out, &line).map_err(|e| AppError::Internal(Box::new(e)))?;
                out.push(b'\n');
            }
            out
        }
    };
    let (content_type, extension) = match format {
        Format::Csv => ("text/csv; charset=utf-8", "csv"),
        Format::Jsonl => ("application/jsonl; charset=utf-8", "jsonl"),
    };
    let disposition = format!("attachment; filename=\"download-{id}-diff.{extension}\"");
    Ok(([(CONTENT_TYPE, content_type.to_owned()), (CONTENT_DISPOSITION, disposition)], body).into_response())
}
