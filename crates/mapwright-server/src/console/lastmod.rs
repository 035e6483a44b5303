//! The sitemap page's "Can its lastmod be trusted?" (issue 34): the verdict word and its reasons
//! (`trust::verdict`, the API's too) and the measures behind them, counts with their shares.

use mapwright_store::{Actor, LastmodTrust};
use maud::{Markup, html};

use super::format::{thousands, time};
use crate::trust::{Trust, share, verdict};
use crate::{AppError, AppState};

/// The colour of a verdict's badge (the status badges' classes).
fn colour(trust: Trust) -> &'static str {
    match trust {
        Trust::Untrusted => "bad",
        Trust::Doubtful | Trust::Missing => "warn",
        Trust::Trusted | Trust::Coarse => "ok",
        Trust::Unknown => "pending",
    }
}

/// "12 of 400 (3.0 %)", or "–" when there is nothing to count among.
fn of(n: i64, among: i64) -> String {
    match share(n, among) {
        Some(s) => format!("{} of {} ({:.1} %)", thousands(n), thousands(among), s * 100.0),
        None => "–".into(),
    }
}

/// The section of the sitemap page with id `sitemap_id`.
pub(crate) async fn section(state: &AppState, actor: Actor, sitemap_id: i64, now: i64) -> Result<Markup, AppError> {
    let trust = state.store.lastmod_trust(actor, sitemap_id).await?;
    Ok(render(&trust, now))
}

/// The section for these measures.
fn render(trust: &LastmodTrust, now: i64) -> Markup {
    let v = verdict(trust);
    let visits = trust.visits;
    html! {
        section id="lastmod" aria-labelledby="lastmod-title" {
            h2 id="lastmod-title" { "Can its lastmod be trusted?" }
            p class="hint" {
                "Search engines use lastmod only when it is consistently accurate: values that are the file's "
                "generation time, in the future, or that move apart from the pages make them ignore it."
            }
            p { span class=(format!("badge {}", colour(v.trust))) { (v.trust.word()) } }
            ul class="reasons" { @for r in &v.reasons { li { (r) } } }
            @if let Some(t) = &trust.tally {
                @let w = t.with_lastmod;
                p class="hint" { "Measured on the read of " (time(t.read_at, now)) " and on the URL checker's visits." }
                table class="cards" {
                    caption class="visually-hidden" { "lastmod measures" }
                    thead { tr { th scope="col" { "Measure" } th scope="col" { "How many" } } }
                    tbody {
                        tr { td data-label="Measure" { "With a lastmod" } td data-label="How many" { (of(w, t.entries)) } }
                        tr { td data-label="Measure" { "Within an hour of the download" } td data-label="How many" { (of(t.near_read, w)) } }
                        tr {
                            td data-label="Measure" {
                                "The most common value" @if let Some(top) = &t.top_value { " (" code { (top) } ")" }
                            }
                            td data-label="How many" { (of(t.top_count, w)) }
                        }
                        tr { td data-label="Measure" { "In the future" } td data-label="How many" { (of(t.future, w)) } }
                        tr { td data-label="Measure" { "Date only" } td data-label="How many" { (of(t.date_only, w)) } }
                        tr {
                            td data-label="Measure" { "lastmod changed, page the same (URLs checked twice)" }
                            td data-label="How many" { (of(visits.lastmod_alone, visits.compared)) }
                        }
                        tr {
                            td data-label="Measure" { "Page changed, lastmod the same (URLs checked twice)" }
                            td data-label="How many" { (of(visits.content_alone, visits.compared)) }
                        }
                    }
                }
                @if visits.compared == 0 {
                    p class="hint" {
                        "The checker compares a page's version (its ETag or Last-Modified) between two visits: "
                        "no URL of this sitemap has two such visits yet."
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use mapwright_store::{LastmodTally, LastmodVisits};

    use super::*;

    #[test]
    fn shares_in_words() {
        assert_eq!(of(3, 200), "3 of 200 (1.5 %)");
        assert_eq!(of(0, 0), "–");
        let tally = LastmodTally { read_at: 0, entries: 4, with_lastmod: 4, top_count: 1, ..LastmodTally::default() };
        let visits = LastmodVisits::default();
        let html = render(&LastmodTrust { tally: Some(tally), visits }, 0).into_string();
        assert!(html.contains("Trustworthy") && html.contains("no URL of this sitemap has two such visits"), "{html}");
    }
}
