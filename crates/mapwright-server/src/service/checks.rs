//! A site's failing-URL report, what the JSON API and the console share: the exports of its
//! failing URLs (the API's CSV and JSON Lines files; the console's download is the CSV one, so
//! both give the same file), and the URL checker's handle (starting a run, the next run's time).

use std::sync::Arc;

use axum::body::Body;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use mapwright_store::{Actor, Page, Store, UrlFailure};

use crate::format::utc;
pub use crate::jobs::checker::{Jobs, next_run_at};
use crate::{AppError, AppState};

/// Failing URLs per store round trip of an export.
const EXPORT_PAGE: i64 = 1000;

/// An export's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// One row per URL with a header row; times in ISO 8601 UTC.
    Csv,
    /// One JSON object per line, as the page's items; times in Unix seconds.
    Jsonl,
}

/// The CSV export's columns.
const CSV_COLUMNS: [&str; 7] = ["url", "kind", "status", "rule", "found", "checked_at", "sitemap"];

impl Format {
    fn encode(self, page: &Page<UrlFailure>, first: bool) -> Result<Vec<u8>, std::io::Error> {
        match self {
            Format::Csv => {
                let mut w = csv::Writer::from_writer(Vec::new());
                if first {
                    w.write_record(CSV_COLUMNS).map_err(std::io::Error::other)?;
                }
                for f in &page.items {
                    w.write_record([
                        f.loc.as_str(),
                        f.kind.as_str(),
                        &f.status.map(|s| s.to_string()).unwrap_or_default(),
                        f.rule.as_str(),
                        f.message.as_deref().unwrap_or(""),
                        &utc(f.checked_at),
                        f.sitemap_url.as_deref().unwrap_or(""),
                    ])
                    .map_err(std::io::Error::other)?;
                }
                w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
            }
            Format::Jsonl => {
                let mut out = Vec::new();
                for f in &page.items {
                    serde_json::to_writer(&mut out, f)?;
                    out.push(b'\n');
                }
                Ok(out)
            }
        }
    }
}

/// Every failing URL of a site (of one kind, or all), streamed a page at a time: memory holds
/// one page whatever the site's size. The first page is read before the answer starts, so a
/// missing site is a 404, not a broken stream.
pub(crate) async fn export(
    state: &AppState,
    actor: Actor,
    site_id: i64,
    kind: Option<&'static str>,
    format: Format,
) -> Result<Response, AppError> {
    let first = state.store.list_url_failures(actor, site_id, kind, 0, EXPORT_PAGE).await?;
    let store: Arc<dyn Store> = state.store.clone();
    let cursor = (store, Some(first), None::<i64>, true);
    let stream = futures_util::stream::unfold(cursor, move |(store, ready, after, first)| async move {
        let page = match ready {
            Some(page) => page,
            None => match store.list_url_failures(actor, site_id, kind, after?, EXPORT_PAGE).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::error!(error = %e, site = site_id, "failing-URL export stopped");
                    return Some((Err(std::io::Error::other(e)), (store, None, None, false)));
                }
            },
        };
        let chunk = format.encode(&page, first);
        Some((chunk, (store, None, page.next_after, false)))
    });
    let (content_type, extension) = match format {
        Format::Csv => ("text/csv; charset=utf-8", "csv"),
        Format::Jsonl => ("application/jsonl; charset=utf-8", "jsonl"),
    };
    let disposition = format!("attachment; filename=\"site-{site_id}-failing-urls.{extension}\"");
    Ok(([(CONTENT_TYPE, content_type.to_owned()), (CONTENT_DISPOSITION, disposition)], Body::from_stream(stream))
        .into_response())
}

/// Every failing URL of a site as the CSV export of the API: the console's download is this
/// file too.
pub(crate) async fn failing_export(state: &AppState, actor: Actor, site_id: i64) -> Result<Response, AppError> {
    export(state, actor, site_id, None, Format::Csv).await
}
