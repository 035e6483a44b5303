//! A site's page (the seed's "Verify" screen): the verified state and the proof that keeps it,
//! and for owners how to prove ownership and "Verify now" (with the sitemap typed into "Add"
//! kept through the detour); the overview (`overview.rs`: its sitemaps with how each came and
//! their totals, its members, the IndexNow submissions received); the sitemaps its robots.txt
//! names, its findings across all its sitemaps, pictures of its URLs, the failing-URLs report by
//! kind (CSV too) with "Check now" as a background run, and deleting the site (saying who loses
//! access).

use axum::extract::{Path, Query, State};
use axum::http::HeaderValue;
use mapwright_store::{Actor, CheckRun, FailureKindCount, FindingQuery, Site, Source, Store, UrlFailure};
use maud::{Markup, html};
use serde::Deserialize;

use super::csrf::CsrfForm;
use super::format::{thousands, time, time_or, url};
use super::{
    PAGE, PageResult, Session, button_form, csrf_field, findings, page, pager, redirect_error, redirect_with, svg,
};
use crate::service::checks::{Jobs, next_run_at};
use crate::service::sites::Proof;
use crate::verify::{file_name, meta_tag};
use crate::{AppError, AppState, now};

/// `?failures_after=URL_ID&kind=&robots_after=&severity=&add=URL&sitemaps=OFFSET`.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    /// Offset in the overview's list of sitemaps.
    #[serde(default)]
    sitemaps: i64,
    #[serde(default)]
    failures_after: i64,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    robots_after: i64,
    #[serde(default)]
    severity: String,
    /// A sitemap URL to add once the site is verified (from the "Add" form).
    #[serde(default)]
    add: String,
}

/// The failing-URL kinds in the report's order, with their names.
const KINDS: [(&str, &str); 7] = [
    ("404", "404 Not found"),
    ("410", "410 Gone"),
    ("5xx", "5xx Server error"),
    ("redirect", "Redirect"),
    ("noindex", "noindex"),
    ("robots", "Blocked by robots.txt"),
    ("other", "Unreachable or other status"),
];

fn kind_name(kind: &str) -> &str {
    KINDS.iter().find(|(k, _)| *k == kind).map_or(kind, |(_, name)| name)
}

/// Snapshots drawn in the picture of live URLs.
const SNAPSHOTS: i64 = 90;

// Alike on purpose: axum's extractors of a page of one site (state, session, id, query), as
// `verify_now` below and console/sitemap_page.rs's `show`; each renders its own page.
/// `GET /sites/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
) -> PageResult {
    let actor = session.actor();
    let overview = crate::service::sites::overview(&state, actor, id).await?;
    let site = &overview.site;
    // A reader sees the page without the owners' buttons (the store refuses them anyway).
    let owner = overview.role == mapwright_store::Role::Owner;
    let robots = state.store.page_sitemaps(actor, id, None, Some(Source::Robots), p.robots_after, PAGE).await?;
    let robots_read = state.store.robots_read(actor, id).await?;
    let kind = KINDS.iter().map(|(k, _)| *k).chain([mapwright_store::NEWLY_FAILING]).find(|k| *k == p.kind.trim());
    let failures = state.store.list_url_failures(actor, id, kind, p.failures_after, PAGE).await?;
    let kinds = state.store.url_failure_kinds(actor, id).await?;
    let check_changes = state.store.check_changes(actor, id, 0, PAGE).await?;
    let snapshots = state.store.list_site_snapshots(actor, id, SNAPSHOTS).await?;
    let filter = findings::severity(p.severity.trim());
    let query = FindingQuery {
        site_id: id,
        severity: filter.map(str::to_owned),
        per_rule: findings::EXAMPLES,
        ..FindingQuery::default()
    };
    let examples = state.store.finding_examples(actor, &query).await?;
    let run = state.store.check_run(actor, id).await?;
    let running = run.as_ref().is_some_and(CheckRun::is_running);
    let now = now();
    let next = next_run_at(run.as_ref(), &state.checks.config, now);
    let alerts = super::alerts::section(&state, &session, id).await?;
    let sitemaps = super::overview::sitemaps(&state, actor, &overview, p.sitemaps, now).await?;
    let base = format!("/sites/{id}");
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } }
        h1 class="url" { (url(&site.origin)) }
        p { a id="members-link" href=(format!("/sites/{id}/members")) { "Members" } " · " a id="webhooks-link" href=(format!("/sites/{id}/webhooks")) { "Webhooks" } @if !owner { " · you are a reader of this site" } }
        (verification(site, &overview.proof, &session.csrf, p.add.trim(), now, owner))
        (sitemaps)
        (super::overview::people(&overview))
        (alerts)
        (super::overview::indexnow(&overview.indexnow, now))
        h2 { "Sitemaps in robots.txt" }
        @if robots.items.is_empty() && p.robots_after == 0 {
            @let robots_url = format!("{}/robots.txt", site.origin);
            @if site.verified_at.is_none() {
                p id="robots-unread" { code class="url" { (url(&robots_url)) } " is read once the site is verified; the sitemaps it names are added then." }
            } @else if let Some(why) = &robots_read.error {
                p id="robots-unreadable" { code class="url" { (url(&robots_url)) } " could not be read when last tried: " (why) ". The sitemaps it names are added once it is read." }
            } @else {
                p id="robots-none" { code class="url" { (url(&robots_url)) } " named no sitemap when it was last read." }
            }
        } @else {
            ul { @for s in &robots.items { li { a class="url" href=(format!("/sitemaps/{}", s.id)) { (url(&s.url)) } } } }
            (pager(&base, "robots_after", p.robots_after, robots.next_after))
        }
        (findings::section(&base, &examples, filter, findings::Across::Site))
        (live_urls(&snapshots))
        h2 id="failing" { "Failing URLs" }
        p {
            "Every listed URL is checked in the background (HTTP status, redirects, noindex, robots.txt), "
            "one request per URL at a polite pace, in full runs."
        }
        (check_status(run.as_ref(), next, site.verified_at.is_some(), kinds.iter().map(|k| k.count).sum(), now))
        @if owner && site.verified_at.is_some() && !running {
            (button_form(&format!("/sites/{id}/check"), &session.csrf, "Check now", "secondary", None))
        }
        (kinds_section(id, &kinds, kind))
        (super::check_changes::section(id, &check_changes, kind, now))
        (failures_table(&failures.items, run.as_ref(), now))
        @let failing_base = match kind { Some(k) => format!("{base}?kind={k}"), None => base.clone() };
        (pager(&failing_base, "failures_after", p.failures_after, failures.next_after))
        @if owner {
            h2 { "Delete this site" }
            p { "Deleting the site removes its sitemaps, URLs and reports from mapwright. The site itself is not touched." }
            a class="button danger" href=(format!("/sites/{id}/delete")) { "Delete site" }
        }
    };
    let mut response = page(&session, &overview.site.origin, body);
    if running {
        // The page reloads itself while the check runs (a header: no script, no meta refresh).
        response.headers_mut().insert("refresh", HeaderValue::from_static("3"));
    }
    Ok(response)
}

/// The verified state for every member; the token, the file and the meta tag that carry it,
/// the domain hint and "Verify now" for owners only (a reader proves nothing, and the token
/// stays with those who place it, as in the API's site object).
fn verification(site: &Site, kept_by: &Proof, csrf: &str, add: &str, now: i64, owner: bool) -> Markup {
    html! {
        h2 { "Verification" }
        @if let Some(at) = site.verified_at {
            p { span class="badge ok" { "Verified" } " since " (time(at, now)) "."
                @if owner { " Keep the proof in place: it is checked again regularly." } }
            (super::overview::proof_in_force(&site.origin, kept_by, owner))
        } @else if owner {
            p { span class="badge bad" { "Not verified" } " Prove that you control this site in one of two ways, then press Verify now." }
        } @else {
            p { span class="badge bad" { "Not verified" } " One of its owners proves that they control it." }
        }
        @if let Some(at) = site.last_checked_at { p class="hint" { "Last checked " (time(at, now)) "." } }
        @if owner && kept_by.method.as_deref() == Some("domain") {
            // The property keeps it: the file and the tag are a way to keep it without one.
            details id="other-proofs" {
                summary { "Prove it without the property: a file or a meta tag" }
                (proof(site))
            }
        } @else if owner {
            (proof(site))
            @if site.verified_at.is_none() {
                p class="hint" id="domain-hint" { "Or prove a whole domain at once with a DNS TXT record: " a href="/domains" { "add a domain property" } "." }
            }
        }
        @if !add.is_empty() && site.verified_at.is_none() {
            p id="pending-add" { span class="url" { (url(add)) } " is added as soon as the site is verified." }
        }
        @if owner {
            form method="post" action=(format!("/sites/{}/verify", site.id)) class="inline" {
                (csrf_field(csrf))
                @if !add.is_empty() { input type="hidden" name="add" value=(add); }
                button type="submit" class="primary" { "Verify now" }
            }
        }
    }
}

/// The token and the two places it may go: an owner's part of the page.
fn proof(site: &Site) -> Markup {
    let file = file_name(&site.verification_token);
    html! {
        dl class="facts" id="proof" {
            dt { "Token" } dd { code { (site.verification_token) } }
            dt { "File" } dd { "Serve " code class="url" { (url(&format!("{}/{file}", site.origin))) } " with the token as its content." }
            dt { "Or meta tag" } dd { "Put " code { (meta_tag(&site.verification_token)) } " in the " code { "<head>" } " of " code class="url" { (url(&site.origin)) "/" } "." }
        }
    }
}

/// The picture of live URLs over the checker's runs.
fn live_urls(snapshots: &[mapwright_store::SiteSnapshot]) -> Markup {
    let Some(last) = snapshots.last() else { return html! {} };
    let first = snapshots[0];
    let summary = format!(
        "{} live URLs and {} failing at the last check; {} and {} at the first of the {} checks shown.",
        thousands(last.live_urls),
        thousands(last.failing_urls),
        thousands(first.live_urls),
        thousands(first.failing_urls),
        snapshots.len()
    );
    let live = snapshots.iter().map(|s| (s.taken_at, s.live_urls)).collect();
    let failing = snapshots.iter().map(|s| (s.taken_at, s.failing_urls)).collect();
    html! {
        h2 id="over-time" { "URLs over time" }
        (svg::line_chart("live-chart", "Live and failing URLs at each check", &summary, &[
            svg::Series { label: "Live URLs", class: "line-a", points: live },
            svg::Series { label: "Failing URLs", class: "line-bad", points: failing },
        ]))
    }
}

/// What the failing-URL report stands on: never checked, the run going (how far, and that its
/// failures are partial), or the last run's end; when the last complete run ended and when the
/// next is due. `failing_now` is the report's own count (the failing URLs of the sitemaps as they
/// are now): a run's count is of its time, and a sitemap removed since takes its URLs out of the
/// report, so the two are said apart, never one above the other as if they were one number.
fn check_status(run: Option<&CheckRun>, next: Option<i64>, verified: bool, failing_now: i64, now: i64) -> Markup {
    let last_complete = run.and_then(|r| r.last_complete_at);
    html! {
        div id="check-status" {
            @match run {
                None => {
                    p id="check-never" {
                        strong { "Not checked yet." }
                        " No URL of this site has been checked, so no failure is known. "
                        @if verified { "The first check starts shortly." } @else { "Checks start once the site is verified." }
                    }
                }
                Some(r) if r.is_running() => {
                    div class="flash" role="status" id="check-progress" {
                        @if r.new_only { "Checking the URLs added since the last check: " } @else { "Checking: " }
                        (thousands(r.checked)) " of " (thousands(r.total.max(r.checked))) " URLs checked, started "
                        (time(r.started_at, now)) ". This page reloads until it is done."
                    }
                    p id="check-partial" {
                        "The failures below are partial: " (thousands(r.failing)) " found so far in this run; "
                        "URLs it has not reached yet show what an earlier run found, if any."
                    }
                }
                Some(r) if r.state == "done" && r.new_only => {
                    p id="check-result" {
                        "The last check, of the URLs added since the check before, ended "
                        (time(r.finished_at.unwrap_or(r.started_at), now)) ": " (thousands(r.checked)) " URLs checked, "
                        (thousands(r.failing)) " failing."
                    }
                }
                Some(r) if r.state == "done" => {
                    p id="check-result" {
                        "Last full check ended " (time(r.finished_at.unwrap_or(r.started_at), now)) ": "
                        (thousands(r.checked)) " URLs checked, " (thousands(r.failing)) " failing"
                        @if failing_now != r.failing {
                            " then; " (thousands(failing_now)) " failing among the URLs the sitemaps list now."
                        } @else { "." }
                    }
                }
                Some(r) => {
                    p class="error" id="check-result" {
                        "The last check stopped " (time_or(r.finished_at, now, "")) " after " (thousands(r.checked)) " of "
                        (thousands(r.total.max(r.checked))) " URLs: " (r.error.as_deref().unwrap_or("unknown error")) "."
                    }
                }
            }
            @if run.is_some() {
                p id="check-schedule" {
                    @match last_complete {
                        Some(at) if run.is_none_or(|r| r.state != "done" || r.new_only) => { "The last full check ended " (time(at, now)) ". " }
                        Some(_) => {}
                        None => { "No check has covered every URL yet. " }
                    }
                    @match next {
                        Some(at) if verified && at > now => { "Next check: " (time(at, now)) "." }
                        Some(_) if verified => { "Next check: shortly." }
                        _ => {}
                    }
                }
            }
        }
    }
}

fn kinds_section(id: i64, kinds: &[FailureKindCount], selected: Option<&str>) -> Markup {
    let total: i64 = kinds.iter().map(|k| k.count).sum();
    let ordered: Vec<(String, i64)> = KINDS
        .iter()
        .filter_map(|(k, name)| kinds.iter().find(|c| c.kind == *k).map(|c| ((*name).to_owned(), c.count)))
        .collect();
    html! {
        @if total > 0 {
            @let summary = format!("{} failing URLs: {}.", thousands(total),
                ordered.iter().map(|(n, c)| format!("{} {n}", thousands(*c))).collect::<Vec<_>>().join(", "));
            (svg::bar_chart("kinds-chart", "Failing URLs by kind", &summary, &ordered))
            nav class="kinds" aria-label="Failing URLs by kind" {
                a href=(format!("/sites/{id}#failing")) aria-current=[selected.is_none().then_some("true")] { "All (" (thousands(total)) ")" }
                @for (k, name) in KINDS {
                    @if let Some(c) = kinds.iter().find(|c| c.kind == k) {
                        a href=(format!("/sites/{id}?kind={k}#failing")) aria-current=[(selected == Some(k)).then_some("true")] {
                            (name) " (" (thousands(c.count)) ")"
                        }
                    }
                }
                a href=(format!("/sites/{id}/failing.csv")) { "Download as CSV" }
            }
        }
    }
}

/// "301 → target" for a redirect; for the rest the status with its name once ("404 Not
/// found", "503 Server error") and what the check saw beyond it, without the URL again.
fn what(f: &UrlFailure) -> Markup {
    let target =
        f.message.as_deref().and_then(|m| m.split(" redirects to ").nth(1)).map(|t| t.split(" (").next().unwrap_or(t));
    let name = kind_name(&f.kind);
    let status = f.status.map(|s| s.to_string());
    let label = match (&status, f.kind.as_str()) {
        (Some(s), _) if name.starts_with(s.as_str()) => name.to_owned(),
        (Some(s), "5xx") => format!("{s} Server error"),
        (Some(s), _) => format!("{s} {name}"),
        (None, _) => name.to_owned(),
    };
    // The check's message names the URL first ("https://... answers 503"): the row shows it.
    let seen = f.message.as_deref().map(|m| m.strip_prefix(f.loc.as_str()).unwrap_or(m).trim());
    let plain = status.as_ref().map(|s| format!("answers {s}"));
    let seen = seen.filter(|m| !m.is_empty() && Some(*m) != plain.as_deref());
    html! {
        @match (f.kind.as_str(), target) {
            ("redirect", Some(target)) => {
                strong { (status.as_ref().filter(|s| s.starts_with('3')).map_or("3xx", |s| s.as_str())) }
                " → " span class="url" { (url(target)) }
            }
            _ => {
                strong { (label) }
                @if let Some(m) = seen { br; span class="muted" { (m) } }
            }
        }
    }
}

fn failures_table(failures: &[UrlFailure], run: Option<&CheckRun>, now: i64) -> Markup {
    html! {
        @if failures.is_empty() {
            @match run {
                None => p { "No failure known: no URL was checked yet." },
                Some(r) if r.is_running() && r.last_complete_at.is_none() => p { "No failing URL found so far." },
                Some(_) => p { "No failing URLs." },
            }
        } @else {
            table class="cards" id="failing-urls" {
                caption class="visually-hidden" { "Failing URLs" }
                thead { tr { th scope="col" { "URL" } th scope="col" { "What was found" } th scope="col" { "Seen" } th scope="col" { "Listed in" } } }
                tbody {
                    @for f in failures {
                        tr {
                            td data-label="URL" class="url" { (url(&f.loc)) (super::check_changes::new_mark(f)) }
                            td data-label="What was found" { (what(f)) }
                            td data-label="Seen" { (time(f.checked_at, now)) }
                            td data-label="Listed in" class="url" {
                                @match (f.sitemap_id, &f.sitemap_url) {
                                    (Some(id), Some(u)) => a href=(format!("/sitemaps/{id}")) { (url(u)) },
                                    _ => "–",
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /sites/{id}/failing.csv`: every failing URL with its kind, status, what was found and
/// a sitemap listing it, streamed a page at a time: the API's export
/// (`/api/v1/sites/{id}/failing-urls.csv`), so both give the same file.
pub(crate) async fn failing_csv(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    Ok(crate::service::checks::failing_export(&state, session.actor(), id).await?)
}

// Alike on purpose: console/domains.rs's add form and handler have this frame (a form, axum's
// extractors, one use case); each page keeps its markup and form beside its handler. `show` above
// has the same extractors.
/// The verify form: `add` is the sitemap kept from the "Add" form.
#[derive(Deserialize, Default)]
pub(crate) struct VerifyForm {
    #[serde(default)]
    add: String,
}

/// `POST /sites/{id}/verify`: checks the proof now; when verified, says which robots.txt
/// sitemaps were added and adds the sitemap kept from "Add"; when not, says what was fetched
/// and what was found, as an error.
pub(crate) async fn verify_now(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<VerifyForm>,
) -> PageResult {
    let actor = session.actor();
    let site = state.store.site_as_owner(actor, id).await?;
    let before = robots_sitemaps(state.store.as_ref(), actor, id).await?;
    let outcome = crate::service::sites::verify_now(&state, &site).await?;
    let add = form.add.trim();
    if outcome.held.is_some() {
        return Ok(redirect_error(&format!("/sites/{id}"), &format!("Not checked: {}.", outcome.detail), &state));
    }
    if !outcome.verified {
        let back = if add.is_empty() {
            format!("/sites/{id}")
        } else {
            format!("/sites/{id}?add={}", url::form_urlencoded::byte_serialize(add.as_bytes()).collect::<String>())
        };
        let why = outcome.detail.strip_prefix("not verified: ").unwrap_or(&outcome.detail);
        return Ok(redirect_error(&back, &format!("Not verified: {why}."), &state));
    }
    let after = robots_sitemaps(state.store.as_ref(), actor, id).await?;
    let new: Vec<&str> = after.iter().filter(|u| !before.contains(u)).map(String::as_str).collect();
    let mut message = format!("Verified: {}.", outcome.detail);
    let robots_read = state.store.robots_read(actor, id).await?;
    match new.len() {
        // Not read: it says nothing of the sitemaps it names.
        0 if robots_read.error.is_some() => {
            message.push_str(&format!(" {}.", robots_read.error.as_deref().unwrap_or_default()));
        }
        0 if after.is_empty() => message.push_str(" The site's robots.txt names no sitemap."),
        0 => message.push_str(" The sitemaps its robots.txt names were added before."),
        _ => message.push_str(&format!(" Added from its robots.txt: {}.", new.join(", "))),
    }
    if !add.is_empty() {
        match crate::service::submission::add_sitemap(&state, actor, id, add).await {
            Ok(sitemap) => message.push_str(&format!(" Added {}: it will be downloaded shortly.", sitemap.url)),
            Err(e @ (AppError::BadRequest(_) | AppError::Rejected(_))) => {
                message.push_str(&format!(" {add} was not added: {e}"));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(redirect_with(&format!("/sites/{id}"), &message, &state))
}

/// The URLs of the site's sitemaps named by robots.txt (a site names a handful).
async fn robots_sitemaps(store: &dyn Store, actor: Actor, site_id: i64) -> Result<Vec<String>, AppError> {
    let page = store.page_sitemaps(actor, site_id, None, Some(Source::Robots), 0, 1000).await?;
    Ok(page.items.into_iter().map(|s| s.url).collect())
}

/// `POST /sites/{id}/check`: starts the failing-URLs check of the site in the background and
/// returns at once; the site page shows its progress.
pub(crate) async fn check_now(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let site = state.store.site_as_owner(session.actor(), id).await?;
    let back = format!("/sites/{id}#failing");
    if site.verified_at.is_none() {
        return Ok(redirect_error(&back, "Verify the site before checking its URLs.", &state));
    }
    match Jobs::start(&state, id, session.user.id).await? {
        Ok(()) => Ok(redirect_with(&back, "The check started: this page shows its progress.", &state)),
        Err(refusal) => Ok(redirect_error(&back, &format!("Not started: {refusal}."), &state)),
    }
}

/// `GET /sites/{id}/delete`: the confirmation step.
pub(crate) async fn delete_confirm(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> PageResult {
    let site = state.store.site_as_owner(session.actor(), id).await?;
    let overview = crate::service::sites::overview(&state, session.actor(), id).await?;
    let body = html! {
        h1 { "Delete this site?" }
        p class="url" { (url(&site.origin)) }
        p { "Its sitemaps, their downloads and findings, its URLs and its reports are deleted from mapwright. "
            "To come back you would add and verify the site again." }
        (super::overview::who_loses_access(&overview, session.user.id))
        div class="row" {
            form method="post" action=(format!("/sites/{id}/delete")) class="inline" {
                (csrf_field(&session.csrf))
                button type="submit" class="danger" { "Delete site" }
            }
            a class="button secondary" href=(format!("/sites/{id}")) { "Cancel" }
        }
    };
    Ok(page(&session, &format!("Delete {}", site.origin), body))
}

/// `POST /sites/{id}/delete`.
pub(crate) async fn delete(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let site = state.store.site_as_owner(session.actor(), id).await?;
    state.store.delete_site(session.actor(), id).await?;
    Ok(redirect_with("/", &format!("Deleted {} and everything mapwright knew of it.", site.origin), &state))
}
