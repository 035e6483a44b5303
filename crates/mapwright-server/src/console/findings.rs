//! Findings as answers: grouped by rule, worst first, each group with its severity, its count,
//! what the rule checks and how to fix it (the core's `explain`), its first examples with
//! line:col and URL, and a link to all of them, paged. The sitemap page shows the groups of its
//! last read; the site page the same across all its sitemaps. A severity filter narrows both.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use mapwright_core::Rule;
use mapwright_core::validate::explain;
use mapwright_store::{FindingExample, FindingQuery};
use maud::{Markup, html};
use serde::Deserialize;

use super::format::{thousands, url};
use super::{PageResult, Session, page};
use crate::AppState;

/// Examples shown per rule in the groups.
pub(crate) const EXAMPLES: i64 = 3;

/// Findings per page of one rule's list.
const PER_PAGE: i64 = 100;

/// `?rule=&offset=`.
#[derive(Deserialize, Default)]
pub(crate) struct Params {
    #[serde(default)]
    rule: String,
    #[serde(default)]
    offset: i64,
}

/// The severity a filter names, if it names one.
pub(crate) fn severity(value: &str) -> Option<&'static str> {
    ["error", "warning", "info"].into_iter().find(|s| *s == value)
}

fn rank(severity: &str) -> u8 {
    match severity {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    }
}

/// The badge class of a severity.
pub(crate) fn severity_class(severity: &str) -> &'static str {
    match severity {
        "error" => "bad",
        "warning" => "warn",
        _ => "pending",
    }
}

/// `line:col`, the line alone, or a dash.
pub(crate) fn position(line: Option<i64>, col: Option<i64>) -> String {
    match (line, col) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => l.to_string(),
        _ => "–".into(),
    }
}

/// One rule's group.
struct Group<'a> {
    rule: &'a str,
    severity: &'a str,
    count: i64,
    examples: Vec<&'a FindingExample>,
}

fn groups(examples: &[FindingExample]) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for e in examples {
        match out.last_mut() {
            Some(g) if g.rule == e.rule => g.examples.push(e),
            _ => out.push(Group { rule: &e.rule, severity: &e.severity, count: e.rule_count, examples: vec![e] }),
        }
    }
    out.sort_by(|a, b| rank(a.severity).cmp(&rank(b.severity)).then(b.count.cmp(&a.count)).then(a.rule.cmp(b.rule)));
    out
}

/// Whose findings a section shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Across {
    /// One sitemap's last read.
    One,
    /// An index's tree: its own last read and its live children's (each example named).
    Tree,
    /// Every sitemap of a site (each example named).
    Site,
}

/// The findings section of a sitemap page (`base` = `/sitemaps/ID`) or a site page
/// (`/sites/ID`); across more than one sitemap each example names its sitemap.
pub(crate) fn section(base: &str, examples: &[FindingExample], filter: Option<&str>, scope: Across) -> Markup {
    let groups = groups(examples);
    let total: i64 = groups.iter().map(|g| g.count).sum();
    let across = scope != Across::One;
    let heading = match scope {
        Across::One => "Findings of the last read",
        Across::Tree => "Findings of the last reads of this index and its sitemaps",
        Across::Site => "Findings across the site's sitemaps",
    };
    html! {
        h2 id="findings" { (heading) }
        form method="get" action=(format!("{base}#findings")) class="row" {
            label for="severity" { "Show" }
            select id="severity" name="severity" {
                option value="" selected[filter.is_none()] { "All severities" }
                option value="error" selected[filter == Some("error")] { "Errors" }
                option value="warning" selected[filter == Some("warning")] { "Warnings" }
                option value="info" selected[filter == Some("info")] { "Notes" }
            }
            button type="submit" class="secondary" { "Filter" }
        }
        @if groups.is_empty() {
            p { @if filter.is_some() { "No findings of this severity." } @else { "No findings." } }
        } @else {
            p { (thousands(total)) " finding" @if total != 1 { "s" } " of " (groups.len()) " rule" @if groups.len() != 1 { "s" } ", worst first." }
            @for g in &groups {
                section class="group" aria-labelledby=(format!("rule-{}", g.rule)) {
                    h3 id=(format!("rule-{}", g.rule)) {
                        code class="rule" { (g.rule) }
                        " "
                        span class=(format!("badge {}", severity_class(g.severity))) { (g.severity) }
                        " "
                        span class="count" { (thousands(g.count)) " " @if g.count == 1 { "finding" } @else { "findings" } }
                    }
                    @if let Some(rule) = Rule::from_name(g.rule) { (explanation(rule)) }
                    ul class="examples" {
                        @for e in &g.examples {
                            li {
                                span class="pos" { (position(e.line, e.col)) }
                                " " (e.message)
                                @if let Some(loc) = &e.loc { " " span class="url muted" { (url(loc)) } }
                                @if across { " in " a class="url" href=(format!("/sitemaps/{}", e.sitemap_id)) { (url(&e.sitemap_url)) } }
                            }
                        }
                    }
                    @if g.count > g.examples.len() as i64 {
                        p { a href=(format!("{base}/findings?rule={}", g.rule)) { "All " (thousands(g.count)) " findings of " (g.rule) } }
                    }
                }
            }
        }
    }
}

/// What a rule checks, why, and how to fix it, for a site owner in the console: the core's
/// `explain` without its advice about the command line's flags, and without "How to fix" when
/// there is nothing to fix. `scope-vouched`, a note on every sitemap that robots.txt names, is
/// said in one sentence.
fn explanation(rule: Rule) -> Markup {
    if rule == Rule::ScopeVouched {
        return html! {
            p { "Nothing to fix: the site's robots.txt names this sitemap (directly or through an index), or you "
                "verified the site, so it may list any URL of the site, not only those under its own folder." }
        };
    }
    let x = explain(rule);
    let fix = without_flags(x.fix);
    html! {
        p { (without_flags(x.checks)) " " (without_flags(x.why)) }
        @if !fix.is_empty() && !fix.starts_with("Nothing to fix") { p { strong { "How to fix: " } (fix) } }
    }
}

/// `text` without the command line's flags: a parenthesis that names one ("(--url)", "(known
/// with --follow)") goes, and so does a sentence that quotes one (`` `--vouched` ``).
fn without_flags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(" (") {
        let Some(close) = rest[open..].find(')').map(|c| open + c) else { break };
        out.push_str(&rest[..open]);
        if !rest[open..close].contains("--") {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    let sentences: Vec<&str> = out.split_inclusive(". ").filter(|s| !s.contains("`--")).collect();
    sentences.concat().trim().to_owned()
}

/// `GET /sitemaps/{id}/findings?rule=`: every finding of one rule in the sitemap's last read.
pub(crate) async fn of_sitemap(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
) -> PageResult {
    let sitemap = state.store.sitemap(session.actor(), id).await?;
    // An index's findings are its tree's: each row names its sitemap.
    list(&state, &session, sitemap.site_id, Some(id), &sitemap.url, sitemap.is_index, p).await
}

/// `GET /sites/{id}/findings?rule=`: every finding of one rule across the site's sitemaps.
pub(crate) async fn of_site(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Query(p): Query<Params>,
) -> PageResult {
    let site = state.store.site(session.actor(), id).await?;
    list(&state, &session, id, None, &site.origin, true, p).await
}

async fn list(
    state: &AppState,
    session: &Session,
    site_id: i64,
    sitemap_id: Option<i64>,
    name: &str,
    named: bool,
    p: Params,
) -> PageResult {
    let base = match sitemap_id {
        Some(id) => format!("/sitemaps/{id}"),
        None => format!("/sites/{site_id}"),
    };
    let Some(rule) = Rule::from_name(p.rule.trim()) else {
        return Ok(Redirect::to(&format!("{base}#findings")).into_response());
    };
    let offset = p.offset.max(0);
    let query = FindingQuery {
        site_id,
        sitemap_id,
        rule: Some(rule.as_str().to_owned()),
        severity: None,
        offset,
        per_rule: PER_PAGE + 1,
    };
    let rows = state.store.finding_examples(session.actor(), &query).await?;
    let more = rows.len() as i64 > PER_PAGE;
    let count = rows.first().map_or(0, |r| r.rule_count);
    let body = html! {
        p class="crumbs" { a href=(base) { (url(name)) } }
        h1 { "Findings of " code class="rule" { (rule.as_str()) } }
        (explanation(rule))
        @if rows.is_empty() {
            p { "No findings of this rule." }
        } @else {
            p { (thousands(count)) " findings; " (thousands(offset + 1)) " to " (thousands(offset + rows.len().min(PER_PAGE as usize) as i64)) " below." }
            table class="cards" {
                caption class="visually-hidden" { "Findings of " (rule.as_str()) }
                thead { tr {
                    th scope="col" { "Line:col" } th scope="col" { "Finding" } th scope="col" { "URL" }
                    @if named { th scope="col" { "Sitemap" } }
                } }
                tbody {
                    @for e in rows.iter().take(PER_PAGE as usize) {
                        tr {
                            td data-label="Line:col" class="num" { (position(e.line, e.col)) }
                            td data-label="Finding" { (e.message) }
                            td data-label="URL" class="url" { (e.loc.as_deref().map(url).unwrap_or_else(|| html! { "–" })) }
                            @if named {
                                td data-label="Sitemap" class="url" { a href=(format!("/sitemaps/{}", e.sitemap_id)) { (url(&e.sitemap_url)) } }
                            }
                        }
                    }
                }
            }
            nav class="pager" aria-label="Pages of findings" {
                @if offset > 0 { a href=(format!("{base}/findings?rule={}&offset={}", rule.as_str(), (offset - PER_PAGE).max(0))) { "Previous page" } }
                @if more { a href=(format!("{base}/findings?rule={}&offset={}", rule.as_str(), offset + PER_PAGE)) { "Next page" } }
            }
        }
    };
    Ok(page(session, &format!("Findings of {} in {name}", rule.as_str()), body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explanations_give_no_command_line_advice() {
        assert_eq!(
            without_flags("With the URL known (--url), every <loc> (PROTOCOL.md 5) is."),
            "With the URL known, every <loc> (PROTOCOL.md 5) is."
        );
        for &rule in Rule::ALL {
            let shown = explanation(rule).into_string();
            for flag in ["(--", "`--", "--url", "--follow", "--vouched", "--explain"] {
                assert!(!shown.contains(flag), "{}: {shown}", rule.as_str());
            }
        }
        let vouched = explanation(Rule::ScopeVouched).into_string();
        assert!(vouched.len() < 300 && !vouched.contains("How to fix"), "{vouched}");
    }
}
