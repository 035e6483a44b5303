//! A site's overview on its page (issue 34, items 3 and 10): which proof keeps it verified, its
//! sitemaps with their status, URLs, last read and how each came, their totals, its members and
//! invitations, the IndexNow submissions received, and on the delete confirmation who loses
//! access. The facts are [`crate::service::sites::overview`]'s, which the API shows too.

use mapwright_store::{
    Actor, IndexNowReceipt, Role, SitemapListing, SitemapSummary, StatusFilter, TreeTally, WordTotal,
};
use maud::{Markup, html};

use super::format::{thousands, time, time_or, url};
use super::{PAGE, offset_pager};
use crate::service::sites::{Overview, Proof};
use crate::status;
use crate::{AppError, AppState};

/// "Kept by ...": the proof the last check found, in words a reader may see too (the file's
/// name carries the token, so only owners are shown it).
pub(crate) fn proof_in_force(origin: &str, proof: &Proof, owner: bool) -> Markup {
    html! {
        p id="proof-in-force" {
            @match proof.method.as_deref() {
                Some("file") => {
                    "Kept verified by the verification file at the site's root"
                    @if owner { " (" a href="#proof" { "below" } ")" }
                    "."
                }
                Some("meta") => { "Kept verified by the meta tag in the head of " span class="url" { (url(origin)) "/" } "." }
                Some("domain") => {
                    "Kept verified by the domain property "
                    @match (proof.domain.as_deref(), proof.domain_id) {
                        (Some(name), Some(id)) => { a href=(format!("/domains/{id}")) { (name) } }
                        (Some(name), None) => { strong { (name) } }
                        _ => { "of an owner" }
                    }
                    " (a DNS TXT record)"
                    @if let Some(email) = proof.domain_owner.as_deref().filter(|_| proof.domain_id.is_none()) {
                        " of " (email)
                    }
                    "."
                }
                _ => { "Which proof keeps it verified is recorded at its next check." }
            }
        }
    }
}

/// The site's sitemaps, every one (an index's children too), a page at a time, with the totals
/// of all of them above.
pub(crate) async fn sitemaps(
    state: &AppState,
    actor: Actor,
    o: &Overview,
    offset: i64,
    now: i64,
) -> Result<Markup, AppError> {
    let id = o.site.id;
    let offset = offset.max(0);
    let (rows, more) = state.store.list_sitemaps_by(actor, Some(id), &SitemapListing::default(), offset, PAGE).await?;
    let indexes: Vec<i64> = rows.iter().filter(|r| status::is_index(r)).map(|r| r.sitemap.id).collect();
    let tallies = state.store.tree_tallies(actor, &indexes).await?;
    Ok(html! {
        h2 id="sitemaps" { "Sitemaps" }
        (totals(&o.totals))
        @if rows.is_empty() && offset == 0 {
            p id="no-sitemaps" {
                "No sitemap yet."
                @if o.role == Role::Owner { " " a href="/sitemaps/add" { "Add a sitemap" } "." }
            }
        } @else {
            table class="cards" id="site-sitemaps" {
                caption class="visually-hidden" { "Sitemaps of " (o.site.origin) }
                thead { tr {
                    th scope="col" { "Sitemap" } th scope="col" { "How it came" } th scope="col" { "Status" }
                    th scope="col" class="num" { "URLs" } th scope="col" { "Last read" }
                } }
                tbody { @for row in &rows { (row_of(row, tallies.iter().find(|t| t.index_id == row.sitemap.id), now)) } }
            }
            (offset_pager(&format!("/sites/{id}"), "sitemaps", offset as usize, more))
        }
    })
}

fn row_of(row: &SitemapSummary, tally: Option<&TreeTally>, now: i64) -> Markup {
    let sm = &row.sitemap;
    let shown = if status::is_index(row) { status::rolled_up(row, tally) } else { status::own(row) };
    let how = status::source_words(&sm.source).1;
    html! {
        tr class=[sm.removed_at.map(|_| "removed")] {
            td data-label="Sitemap" class="url" { a href=(format!("/sitemaps/{}", sm.id)) { (url(&sm.url)) } }
            td data-label="How it came" {
                @match sm.parent_id.filter(|_| sm.source == "index") {
                    Some(parent) => a href=(format!("/sitemaps/{parent}")) title="The index that lists it" { (how) },
                    None => { (how) }
                }
            }
            td data-label="Status" { (super::sitemaps::badge(&shown)) }
            td data-label="URLs" class="num" { (shown.urls.map(thousands).unwrap_or_else(|| "–".into())) }
            td data-label="Last read" { (time_or(sm.last_downloaded_at, now, "not yet")) }
        }
    }
}

/// "4 sitemaps: 2 Success, 1 Has errors, 1 Pending; 3 errors and 1 warning; 1,234 URLs stored."
fn totals(words: &[WordTotal]) -> Markup {
    let live: i64 = words.iter().filter(|w| w.word != "removed").map(|w| w.sitemaps).sum();
    let errors: i64 = words.iter().map(|w| w.errors).sum();
    let warnings: i64 = words.iter().map(|w| w.warnings).sum();
    let urls: i64 = words.iter().map(|w| w.urls).sum();
    let parts: Vec<String> = StatusFilter::ALL
        .iter()
        .filter_map(|f| {
            let n = words.iter().find(|w| w.word == f.as_str())?.sitemaps;
            (n > 0).then(|| format!("{} {}", thousands(n), status::filter_word(*f)))
        })
        .collect();
    html! {
        @if !words.is_empty() {
            p id="totals" {
                strong { (thousands(live)) " sitemap" @if live != 1 { "s" } } ": " (parts.join(", ")) ". "
                (thousands(errors)) " error" @if errors != 1 { "s" } " and " (thousands(warnings)) " warning"
                @if warnings != 1 { "s" } " in their last reads; " (thousands(urls)) " URLs stored "
                span class="muted" { "(a URL two sitemaps list counts twice)" } "."
            }
        }
    }
}

/// Who may see the site: its members with their roles, and the invitations waiting.
pub(crate) fn people(o: &Overview) -> Markup {
    let id = o.site.id;
    html! {
        h2 id="people" { "Members" }
        ul id="member-list" {
            @for m in &o.members {
                li { (m.email) " · " (role_word(&m.role)) }
            }
        }
        @if !o.invitations.is_empty() {
            p id="invitations-waiting" {
                (thousands(o.invitations.len() as i64)) " invitation" @if o.invitations.len() != 1 { "s" } " waiting: "
                (o.invitations.iter().map(|i| format!("{} ({})", i.email, role_word(&i.role))).collect::<Vec<_>>().join(", ")) "."
            }
        }
        p {
            a href=(format!("/sites/{id}/members")) {
                @if o.role == Role::Owner { "Invite or remove members" } @else { "The members page" }
            }
        }
    }
}

fn role_word(role: &str) -> &'static str {
    match Role::parse(role) {
        Some(Role::Owner) => "owner",
        _ => "reader",
    }
}

/// The IndexNow submissions received for the site, newest first.
pub(crate) fn indexnow(receipts: &[IndexNowReceipt], now: i64) -> Markup {
    html! {
        h2 id="indexnow" { "IndexNow submissions" }
        @if receipts.is_empty() {
            p id="indexnow-none" {
                "No IndexNow submission has been received for this site. Its URLs may be pushed to "
                code { "/indexnow" } " as to a search engine; each is checked against its key file."
            }
        } @else {
            table class="cards" id="indexnow-receipts" {
                caption class="visually-hidden" { "IndexNow submissions received" }
                thead { tr {
                    th scope="col" { "Received" } th scope="col" class="num" { "URLs" } th scope="col" { "Key file" }
                    th scope="col" { "Result" }
                } }
                tbody {
                    @for r in receipts {
                        tr {
                            td data-label="Received" { (time(r.received_at, now)) }
                            td data-label="URLs" class="num" { (thousands(r.url_count)) }
                            td data-label="Key file" class="url" { (url(&r.key_location)) }
                            td data-label="Result" {
                                @if r.accepted { span class="badge ok" { "Accepted" } }
                                @else {
                                    span class="badge bad" { "Refused" }
                                    @if let Some(why) = &r.reason { " " span class="detail" { (why) } }
                                }
                            }
                        }
                    }
                }
            }
            p class="hint" { "The newest " (mapwright_store::MAX_INDEXNOW_RECEIPTS) " submissions are kept." }
        }
    }
}

/// What deleting the site ends for others: the members who lose access, the invitations
/// withdrawn, the webhooks that receive nothing more, the alert mail that stops.
pub(crate) fn who_loses_access(o: &Overview, me: i64) -> Markup {
    let others: Vec<_> = o.members.iter().filter(|m| m.user_id != me).collect();
    html! {
        section id="loses-access" aria-labelledby="loses-access-title" {
            h2 id="loses-access-title" { "Who loses access" }
            @if others.is_empty() {
                p id="no-other-members" { "No one else: you are its only member." }
            } @else {
                p { "These members no longer see the site:" }
                ul id="members-losing" { @for m in &others { li { (m.email) " · " (role_word(&m.role)) } } }
            }
            @if !o.invitations.is_empty() {
                p { "These invitations are withdrawn:" }
                ul id="invitations-losing" { @for i in &o.invitations { li { (i.email) " · " (role_word(&i.role)) } } }
            }
            @if !o.webhooks.is_empty() {
                p { "These webhooks receive no more events:" }
                ul id="webhooks-losing" { @for w in &o.webhooks { li class="url" { (url(&w.url)) } } }
            }
            p id="alerts-losing" { "No member receives alert mail about this site any more." }
        }
    }
}
