//! A site's failing-URL report as the API gives it, equal to the console's: where its check run
//! stands, "Check now", the failing URLs a page at a time and as CSV or JSON Lines exports. The
//! console's CSV download is the service's `export` too, so both give the same file.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use mapwright_store::{Actor, CheckChanges, CheckRefusal, NEWLY_FAILING, Page, UrlFailure};
use serde::Serialize;

use crate::auth::CurrentUser;
use crate::extract::{Id, Params};
use crate::service::checks::{Format, Jobs, export};
use crate::{AppError, AppState, now};

/// The kinds of failing URLs (see [`UrlFailure::kind`]), in the report's order.
pub(crate) const KINDS: [&str; 7] = ["404", "410", "5xx", "redirect", "noindex", "robots", "other"];

/// The most failing URLs one page holds.
const MAX_PAGE: i64 = 10_000;

/// Where the failing-URL report of a site stands: its check run going or last, the last full
/// run, the next; what the console's site page says, as data.
#[derive(Serialize)]
pub(crate) struct UrlCheckView {
    /// `never` (no run yet), `running`, `done` or `failed`.
    state: &'static str,
    started_at: Option<i64>,
    finished_at: Option<i64>,
    /// URLs checked by the run so far (all of them when done).
    checked: i64,
    /// Live URLs when the run started.
    total: i64,
    /// Failing URLs the run found so far.
    failing: i64,
    /// Whether the failing-URL report is partial: a run is going, or none ever covered every URL.
    partial: bool,
    /// Why a failed run stopped.
    error: Option<String>,
    /// When the last run that checked every URL ended.
    last_complete_at: Option<i64>,
    /// When the next periodic run is due (`null` while one runs or the site is not verified).
    next_run_at: Option<i64>,
    /// The run checks only the URLs added since the run before (a site's new URLs, soon).
    new_urls_only: bool,
}

/// The view of a site's check run as it stands.
async fn url_check_view(state: &AppState, actor: Actor, id: i64) -> Result<UrlCheckView, AppError> {
    let site = state.store.site(actor, id).await?;
    let run = state.store.check_run(actor, id).await?;
    let now = now();
    let next_run_at = crate::service::checks::next_run_at(run.as_ref(), &state.checks.config, now)
        .filter(|_| site.verified_at.is_some())
        .map(|at| at.max(now));
    Ok(match run {
        None => UrlCheckView {
            state: "never",
            started_at: None,
            finished_at: None,
            checked: 0,
            total: 0,
            failing: 0,
            partial: true,
            error: None,
            last_complete_at: None,
            next_run_at,
            new_urls_only: false,
        },
        Some(r) => UrlCheckView {
            state: match r.state.as_str() {
                "running" => "running",
                "done" => "done",
                _ => "failed",
            },
            partial: r.is_running() || r.last_complete_at.is_none(),
            started_at: Some(r.started_at),
            finished_at: r.finished_at,
            checked: r.checked,
            total: r.total.max(r.checked),
            failing: r.failing,
            error: r.error,
            last_complete_at: r.last_complete_at,
            next_run_at,
            new_urls_only: r.new_only,
        },
    })
}

/// `GET /api/v1/sites/{id}/url-check`.
pub(crate) async fn url_check(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<UrlCheckView>, AppError> {
    Ok(Json(url_check_view(&state, Actor::from(&user), id).await?))
}

/// Seconds a client is told to wait when it has as many checks going as allowed.
const USER_LIMIT_RETRY: u64 = 60;

/// `POST /api/v1/sites/{id}/url-check`: "Check now", as the console's button. 202 with the run
/// started; 422 when the site is not verified; 409 while a check of the site (or of another
/// site of its origin) runs; 429 with `Retry-After` when the user has as many checks going as
/// allowed or the last run ended moments ago.
pub(crate) async fn check_now(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<(StatusCode, Json<UrlCheckView>), AppError> {
    let actor = Actor::from(&user);
    let site = state.store.site_as_owner(actor, id).await?;
    if site.verified_at.is_none() {
        return Err(AppError::Rejected(format!(
            "{} is not verified yet: verify the site before checking its URLs",
            site.origin
        )));
    }
    match Jobs::start(&state, id, user.id).await? {
        Ok(()) => Ok((StatusCode::ACCEPTED, Json(url_check_view(&state, actor, id).await?))),
        Err(refusal) => Err(refused(refusal)),
    }
}

/// The answer to a refused "Check now".
pub(crate) fn refused(refusal: CheckRefusal) -> AppError {
    match refusal {
        CheckRefusal::TooSoon(seconds) => AppError::TooManyRequests(u64::try_from(seconds.max(1)).unwrap_or(1)),
        CheckRefusal::UserLimit(_) => AppError::TooManyRequests(USER_LIMIT_RETRY),
        other => AppError::Busy(other.to_string()),
    }
}

/// `?kind=`: one of [`KINDS`], `new` (those failing since the check before), or all.
fn kind(params: &Params) -> Result<Option<&'static str>, AppError> {
    match params.text("kind")? {
        None | Some("") => Ok(None),
        Some(k) => KINDS.iter().chain([&NEWLY_FAILING]).copied().find(|known| *known == k).map(Some).ok_or_else(|| {
            AppError::BadRequest(format!(
                "the parameter kind must be one of {}, {NEWLY_FAILING}, not {k:?}",
                KINDS.join(", ")
            ))
        }),
    }
}

/// `GET /api/v1/sites/{id}/check-changes?after=&limit=`: what changed between the two last
/// checks of the site's URLs: how many became failing (listed by `failing-urls?kind=new`) and
/// how many were fixed, with a page of the fixed ones by URL id (100 by default, at most 1,000).
pub(crate) async fn changes(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Json<CheckChanges>, AppError> {
    let after = params.int("after", 0, i64::MAX)?.unwrap_or(0);
    let limit = params.int("limit", 1, 1000)?.unwrap_or(100);
    Ok(Json(state.store.check_changes(Actor::from(&user), site_id, after, limit).await?))
}

/// `GET /api/v1/sites/{id}/failing-urls?kind=&after=&limit=`: one page of the live URLs that
/// failed their last check, by URL id (1,000 by default, at most 10,000); pass `next_after` as
/// `after` for the next.
pub(crate) async fn page(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Json<Page<UrlFailure>>, AppError> {
    let kind = kind(&params)?;
    let after = params.int("after", 0, i64::MAX)?.unwrap_or(0);
    let limit = params.int("limit", 1, MAX_PAGE)?.unwrap_or(1000);
    Ok(Json(state.store.list_url_failures(Actor::from(&user), site_id, kind, after, limit).await?))
}

/// `GET /api/v1/sites/{id}/failing-urls.csv?kind=`.
pub(crate) async fn export_csv(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Response, AppError> {
    export(&state, Actor::from(&user), site_id, kind(&params)?, Format::Csv).await
}

/// `GET /api/v1/sites/{id}/failing-urls.jsonl?kind=`.
pub(crate) async fn export_jsonl(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(site_id): Id,
    params: Params,
) -> Result<Response, AppError> {
    export(&state, Actor::from(&user), site_id, kind(&params)?, Format::Jsonl).await
}
