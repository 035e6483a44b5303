//! Sorting and filtering the "My sitemaps" table without JavaScript: a GET form (status, type,
//! only with errors, sort key and order) whose query string the table reads back, and offset
//! pages that keep it. The parameters mean what the API's do (`crate::listing`).

use mapwright_store::{SitemapListing, SortKey, StatusFilter, TypeFilter};
use maud::{Markup, html};
use serde::Deserialize;

use super::PAGE;

/// The table's query parameters of a listing (unknown values are left out).
#[derive(Deserialize, Default)]
pub(crate) struct ListingParams {
    #[serde(default)]
    status: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    errors: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    order: String,
    /// Rows skipped (a sorted list is paged by offset).
    #[serde(default)]
    pub offset: i64,
}

impl ListingParams {
    /// The listing asked for.
    pub(crate) fn listing(&self) -> SitemapListing {
        let get = |name: &str| {
            Ok(Some(match name {
                "status" => self.status.as_str(),
                "type" => self.kind.as_str(),
                "errors" => self.errors.as_str(),
                "sort" => self.sort.as_str(),
                _ => self.order.as_str(),
            }))
        };
        crate::listing::parse(get, false).unwrap_or_default()
    }
}

/// A filter's name in the form: the word of the rows it lists ([`crate::status::filter_word`]).
fn status_name(s: StatusFilter) -> &'static str {
    crate::status::filter_word(s)
}

fn type_name(t: TypeFilter) -> &'static str {
    match t {
        TypeFilter::Sitemap => "Sitemap",
        TypeFilter::SitemapIndex => "Sitemap index",
        TypeFilter::Rss => "RSS",
        TypeFilter::Atom => "Atom",
        TypeFilter::Text => "Text",
        TypeFilter::OaiPmh => "OAI-PMH",
    }
}

fn sort_name(k: SortKey) -> &'static str {
    match k {
        SortKey::Added => "Order added",
        SortKey::Url => "Sitemap URL",
        SortKey::LastRead => "Last read",
        SortKey::Status => "Status",
        SortKey::Errors => "Errors",
        SortKey::Urls => "URLs",
    }
}

/// The filter and sort form above the table (GET: the choice is in the address, so it can be
/// bookmarked and works without script).
pub(crate) fn form(listing: &SitemapListing) -> Markup {
    html! {
        form method="get" action="/" class="filters" id="table-filters" aria-label="Sort and filter the table" {
            span class="field" {
                label for="f-status" { "Status" }
                select id="f-status" name="status" {
                    option value="" selected[listing.status.is_none()] { "Any" }
                    @for s in StatusFilter::ALL { option value=(s.as_str()) selected[listing.status == Some(s)] { (status_name(s)) } }
                }
            }
            span class="field" {
                label for="f-type" { "Type" }
                select id="f-type" name="type" {
                    option value="" selected[listing.kind.is_none()] { "Any" }
                    @for t in TypeFilter::ALL { option value=(t.as_str()) selected[listing.kind == Some(t)] { (type_name(t)) } }
                }
            }
            span class="field" {
                input type="checkbox" id="f-errors" name="errors" value="true" checked[listing.with_errors];
                label for="f-errors" { "Only with errors" }
            }
            span class="field" {
                label for="f-sort" { "Sort by" }
                select id="f-sort" name="sort" {
                    @for k in SortKey::ALL { option value=(k.as_str()) selected[listing.sort == k] { (sort_name(k)) } }
                }
            }
            span class="field" {
                label for="f-order" { "Order" }
                select id="f-order" name="order" {
                    option value="asc" selected[!listing.desc] { "Ascending" }
                    option value="desc" selected[listing.desc] { "Descending" }
                }
            }
            button type="submit" class="secondary" { "Show" }
            @if !listing.is_plain() { a href="/" { "Clear" } }
        }
    }
}

/// "Previous page" and "Next page" of a sorted list, keeping its parameters.
pub(crate) fn pager(listing: &SitemapListing, offset: i64, more: bool) -> Markup {
    let query = crate::listing::query(listing);
    let at = |o: i64| if o > 0 { format!("/?{query}&offset={o}") } else { format!("/?{query}") };
    html! {
        @if offset > 0 || more {
            nav class="pager" aria-label="Pages" {
                @if offset > 0 { a href=(at((offset - PAGE).max(0))) { "Previous page" } }
                @if more { a href=(at(offset + PAGE)) { "Next page" } }
            }
        }
    }
}
