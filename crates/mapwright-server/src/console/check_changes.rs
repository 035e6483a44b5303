//! The site page's changes between two checks of its URLs (issue 34): the URLs that became
//! failing since the previous check, marked in the failing list and offered as a filter, and
//! those that were fixed. The API's `check-changes` and `failing-urls?kind=new` say the same.

use mapwright_store::{CheckChanges, NEWLY_FAILING, UrlFailure};
use maud::{Markup, html};

use super::format::{thousands, time, url};

/// The mark of a URL failing since the previous check, in the failing list.
pub(crate) fn new_mark(f: &UrlFailure) -> Markup {
    html! { @if f.newly_failing { " " span class="badge bad" title="It passed the check before this one" { "New" } } }
}

/// "New since the previous check (N)" as a filter of the failing list, and the fixed URLs.
pub(crate) fn section(site_id: i64, changes: &CheckChanges, selected: Option<&str>, now: i64) -> Markup {
    let fixed = &changes.fixed_urls.items;
    html! {
        @if changes.newly_failing > 0 || changes.fixed > 0 {
            p id="check-changes" {
                "Since the previous check: "
                @if changes.newly_failing > 0 {
                    a href=(format!("/sites/{site_id}?kind={NEWLY_FAILING}#failing"))
                        aria-current=[(selected == Some(NEWLY_FAILING)).then_some("true")] {
                        (thousands(changes.newly_failing)) " newly failing"
                    }
                } @else { "none newly failing" }
                ", " (thousands(changes.fixed)) " fixed."
            }
        }
        @if !fixed.is_empty() {
            details id="fixed" {
                summary { "Fixed since the previous check (" (thousands(changes.fixed)) ")" }
                ul {
                    @for f in fixed { li { span class="url" { (url(&f.loc)) } " · fine " (time(f.checked_at, now)) } }
                }
                @if changes.fixed > fixed.len() as i64 {
                    p class="hint" { "The first " (fixed.len()) " are listed; the API's check-changes pages through all of them." }
                }
            }
        }
    }
}
