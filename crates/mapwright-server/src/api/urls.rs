//! A site's URLs: pages by id, CSV and JSONL exports streamed page by page, and the crawl
//! frontier.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, Page, Store, UrlQuery, UrlRow};
use serde::Serialize;

use crate::auth::CurrentUser;
use crate::extract::{Id, Params};
use crate::format::utc;
use crate::{AppError, AppState, now};

/// The most URLs one page of `GET /api/v1/sites/{id}/urls` or of the frontier holds.
const MAX_PAGE: i64 = 10_000;

/// `?after=` (0 and up) and `?include_removed=` (true or false) of a URL page or export.
fn after_and_removed(params: &Params) -> Result<(i64, bool), AppError> {
    Ok((params.int("after", 0, i64::MAX)?.unwrap_or(0), params.boolean("include_removed")?.unwrap_or(false)))
}

/// URLs per store round trip of an export: big enough that a million URLs take a thousand
/// queries, small enough that a page's rows stay a few hundred kilobytes.
const EXPORT_PAGE: i64 = 1000;

/// `GET /api/v1/sites/{id}/urls`: one page, 1,000 URLs by default (at most 10,000); pass
/// `next_after` as `after` for the next.
pub(crate) async fn page(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Json<Page<UrlRow>>, AppError> {
    let (after, include_removed) = after_and_removed(&params)?;
    let limit = params.int("limit", 1, MAX_PAGE)?.unwrap_or(1000);
    let query = UrlQuery { after, limit, include_removed };
    Ok(Json(state.store.list_urls(Actor::from(&user), site_id, query).await?))
}

/// An export's file format.
#[derive(Clone, Copy)]
enum Format {
    Csv,
    Jsonl,
}

impl Format {
    fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            Format::Jsonl => "application/jsonl; charset=utf-8",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }

    /// One page as bytes; the CSV header row comes with the first.
    fn encode(self, rows: &[UrlRow], first: bool) -> Result<Vec<u8>, std::io::Error> {
        match self {
            Format::Csv => {
                let mut writer = csv::Writer::from_writer(Vec::new());
                // No header for no rows: an empty site's export is an empty file.
                if first && !rows.is_empty() {
                    writer.write_record(CSV_COLUMNS).map_err(std::io::Error::other)?;
                }
                for row in rows {
                    writer.write_record(csv_record(row)).map_err(std::io::Error::other)?;
                }
                writer.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
            }
            Format::Jsonl => {
                let mut out = Vec::new();
                for row in rows {
                    serde_json::to_writer(&mut out, row)?;
                    out.push(b'\n');
                }
                Ok(out)
            }
        }
    }
}

/// The CSV export's columns: those of `UrlRow`, in its order.
const CSV_COLUMNS: [&str; 10] = [
    "id",
    "site_id",
    "loc",
    "lastmod",
    "changefreq",
    "priority",
    "first_seen_at",
    "last_seen_at",
    "changed_at",
    "removed_at",
];

/// One URL as a CSV row. Times are ISO 8601 UTC (`2026-11-21T08:41:29Z`), as in the console's
/// failing-URL export, so that a spreadsheet shows dates rather than Unix seconds; the JSON
/// forms keep the API's Unix seconds.
fn csv_record(row: &UrlRow) -> [String; 10] {
    [
        row.id.to_string(),
        row.site_id.to_string(),
        row.loc.clone(),
        row.lastmod.clone().unwrap_or_default(),
        row.changefreq.clone().unwrap_or_default(),
        row.priority.map(|p| p.to_string()).unwrap_or_default(),
        utc(row.first_seen_at),
        utc(row.last_seen_at),
        utc(row.changed_at),
        row.removed_at.map(utc).unwrap_or_default(),
    ]
}

/// `GET /api/v1/sites/{id}/urls.csv`: every URL (removed ones with `include_removed=true`),
/// one row each, with a header row.
pub(crate) async fn export_csv(
    state: State<AppState>,
    user: CurrentUser,
    site_id: Id,
    params: Params,
) -> Result<Response, AppError> {
    export(state, user, site_id, params, Format::Csv).await
}

/// `GET /api/v1/sites/{id}/urls.jsonl`: every URL as one JSON object per line.
pub(crate) async fn export_jsonl(
    state: State<AppState>,
    user: CurrentUser,
    site_id: Id,
    params: Params,
) -> Result<Response, AppError> {
    export(state, user, site_id, params, Format::Jsonl).await
}

/// Where an export stands between pages.
struct Cursor {
    store: Arc<dyn Store>,
    actor: Actor,
    site_id: i64,
    include_removed: bool,
    /// The page fetched ahead (the first one, before the response starts, so that a missing
    /// site is a 404 rather than a broken stream).
    ready: Option<Page<UrlRow>>,
    after: Option<i64>,
    first: bool,
    format: Format,
}

impl Cursor {
    /// The next chunk of the body, or `None` at the end. Memory holds one page at a time
    /// whatever the site's size.
    async fn next(mut self) -> Option<(Result<Vec<u8>, std::io::Error>, Cursor)> {
        let page = match self.ready.take() {
            Some(page) => page,
            None => {
                let after = self.after?;
                let query = UrlQuery { after, limit: EXPORT_PAGE, include_removed: self.include_removed };
                match self.store.list_urls(self.actor, self.site_id, query).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::error!(error = %e, site = self.site_id, "export stopped");
                        self.after = None;
                        return Some((Err(std::io::Error::other(e)), self));
                    }
                }
            }
        };
        let chunk = self.format.encode(&page.items, self.first);
        self.first = false;
        self.after = page.next_after;
        Some((chunk, self))
    }
}

async fn export(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
    format: Format,
) -> Result<Response, AppError> {
    let actor = Actor::from(&user);
    let (after, include_removed) = after_and_removed(&params)?;
    let query = UrlQuery { after, limit: EXPORT_PAGE, include_removed };
    let first = state.store.list_urls(actor, site_id, query).await?;
    let cursor = Cursor {
        store: state.store.clone(),
        actor,
        site_id,
        include_removed,
        ready: Some(first),
        after: None,
        first: true,
        format,
    };
    let stream = futures_util::stream::unfold(cursor, Cursor::next);
    let disposition = format!("attachment; filename=\"site-{site_id}-urls.{}\"", format.extension());
    Ok((
        [(CONTENT_TYPE, format.content_type().to_owned()), (CONTENT_DISPOSITION, disposition)],
        Body::from_stream(stream),
    )
        .into_response())
}

/// The frontier as the API answers it.
#[derive(Serialize)]
pub(crate) struct Frontier {
    /// URLs changed at or after this time came first.
    since: i64,
    items: Vec<UrlRow>,
}

/// How far back "changed" reaches when the crawler does not say (`since`): one day.
const DEFAULT_SINCE: i64 = 24 * 3600;

/// `GET /api/v1/sites/{id}/frontier?since=&limit=`: live URLs in visiting order: new and
/// changed since `since` (default: the last 24 hours) first, newest change first; then by
/// priority and changefreq. 1,000 by default, at most 10,000.
pub(crate) async fn frontier(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Json<Frontier>, AppError> {
    let since = params.int("since", 0, i64::MAX)?.unwrap_or_else(|| now() - DEFAULT_SINCE);
    let limit = params.int("limit", 1, MAX_PAGE)?.unwrap_or(1000);
    let items = state.store.frontier(Actor::from(&user), site_id, since, limit).await?;
    Ok(Json(Frontier { since, items }))
}
