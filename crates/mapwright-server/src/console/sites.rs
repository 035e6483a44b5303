//! A site's page (the seed's "Verify" screen): how to prove ownership, "Verify now", the
//! sitemaps its robots.txt names, and the failing-URLs report with "Check now".

use axum::extract::{Path, Query, State};
use mapwright_store::{Site, Source, UrlFailure};
use maud::{Markup, html};
use serde::Deserialize;

use super::checker::{CheckerConfig, check_site};
use super::csrf::CsrfForm;
use super::format::{thousands, time, time_or};
use super::{PAGE, PageResult, Session, button_form, page, pager, redirect_with};
use crate::verify::{file_name, meta_tag};
use crate::{AppState, now};

/// `?failures_after=URL_ID`.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    #[serde(default)]
    failures_after: i64,
    #[serde(default)]
    robots_after: i64,
}

/// `GET /sites/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
) -> PageResult {
    let actor = session.actor();
    let site = state.store.site(actor, id).await?;
    let robots = state.store.page_sitemaps(actor, id, None, Some(Source::Robots), p.robots_after, PAGE).await?;
    let failures = state.store.list_url_failures(actor, id, p.failures_after, PAGE).await?;
    let last_check = state.store.last_url_check(actor, id).await?;
    let now = now();
    let body = html! {
        p class="crumbs" { a href="/" { "My sitemaps" } }
        h1 { (site.origin) }
        (verification(&site, &session.csrf, now))
        h2 { "Sitemaps in robots.txt" }
        @if robots.items.is_empty() && p.robots_after == 0 {
            p { "None found in " code { (site.origin) "/robots.txt" } " yet." }
        } @else {
            ul { @for s in &robots.items { li { a class="url" href=(format!("/sitemaps/{}", s.id)) { (s.url) } } } }
            (pager(&format!("/sites/{id}"), "robots_after", p.robots_after, robots.next_after))
        }
        h2 id="failing" { "Failing URLs" }
        p {
            "Listed URLs are checked in the background (HTTP status, noindex, robots.txt). Last check: "
            (time_or(last_check, now, "never")) "."
        }
        @if site.verified_at.is_some() {
            (button_form(&format!("/sites/{id}/check"), &session.csrf, "Check now", "secondary"))
        }
        (failures_table(&failures.items, now))
        (pager(&format!("/sites/{id}"), "failures_after", p.failures_after, failures.next_after))
    };
    Ok(page(&session, &site.origin, body))
}

fn verification(site: &Site, csrf: &str, now: i64) -> Markup {
    let file = file_name(&site.verification_token);
    html! {
        h2 { "Verification" }
        @if let Some(at) = site.verified_at {
            p { span class="badge ok" { "Verified" } " since " (time(at, now)) ". Keep the proof in place: it is checked again regularly." }
        } @else {
            p { span class="badge bad" { "Not verified" } " Prove that you control this site in one of two ways, then press Verify now." }
        }
        @if let Some(at) = site.last_checked_at { p class="hint" { "Last checked " (time(at, now)) "." } }
        dl class="facts" {
            dt { "Token" } dd { code { (site.verification_token) } }
            dt { "File" } dd { "Serve " code class="url" { (site.origin) "/" (file) } " with the token as its content." }
            dt { "Or meta tag" } dd { "Put " code { (meta_tag(&site.verification_token)) } " in the " code { "<head>" } " of " code { (site.origin) "/" } "." }
        }
        (button_form(&format!("/sites/{}/verify", site.id), csrf, "Verify now", "primary"))
    }
}

fn failures_table(failures: &[UrlFailure], now: i64) -> Markup {
    html! {
        @if failures.is_empty() {
            p { "No failing URLs." }
        } @else {
            div class="scroll" tabindex="0" role="region" aria-label="Table, scrolls sideways on narrow screens" { table {
                caption class="visually-hidden" { "Failing URLs" }
                thead { tr { th scope="col" { "URL" } th scope="col" { "Status" } th scope="col" { "Seen" } th scope="col" { "Listed in" } } }
                tbody {
                    @for f in failures {
                        tr {
                            td class="url" { (f.loc) }
                            td {
                                @if let Some(s) = f.status { strong { (s) } " " }
                                code { (f.rule) }
                                @if let Some(m) = &f.message { br; span class="muted" { (m) } }
                            }
                            td { (time(f.checked_at, now)) }
                            td class="url" {
                                @match (f.sitemap_id, &f.sitemap_url) {
                                    (Some(id), Some(url)) => a href=(format!("/sitemaps/{id}")) { (url) },
                                    _ => "–",
                                }
                            }
                        }
                    }
                }
            } }
        }
    }
}

/// `POST /sites/{id}/verify`: checks the proof now and shows the result.
pub(crate) async fn verify_now(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let site = state.store.site(session.actor(), id).await?;
    let outcome = crate::scheduler::verify_now(&state, &site).await?;
    let message = if outcome.verified {
        format!("Verified: {}.", outcome.detail)
    } else {
        format!("Not verified. {}", outcome.detail)
    };
    Ok(redirect_with(&format!("/sites/{id}"), &message, &state))
}

/// `POST /sites/{id}/check`: runs the failing-URLs check of the site now.
pub(crate) async fn check_now(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    CsrfForm(_): CsrfForm<serde::de::IgnoredAny>,
) -> PageResult {
    let site = state.store.site(session.actor(), id).await?;
    if site.verified_at.is_none() {
        return Ok(redirect_with(&format!("/sites/{id}"), "Verify the site before checking its URLs.", &state));
    }
    let summary = check_site(&state, id, &CheckerConfig::default()).await?;
    let message =
        format!("Checked {} URLs: {} failing.", thousands(summary.checked as i64), thousands(summary.failing as i64));
    Ok(redirect_with(&format!("/sites/{id}#failing"), &message, &state))
}
