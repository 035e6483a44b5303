//! Sites: add, list, show (with the verification instructions, for owners), the overview (the
//! proof in force, totals, members, webhooks, IndexNow submissions), delete, and "Verify now".

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use std::collections::BTreeMap;

use mapwright_store::{Actor, IndexNowReceipt, Invitation, Member, Role, Site, StatusFilter, Timestamp};
use serde::{Deserialize, Serialize};

use crate::auth::CurrentUser;
use crate::extract::{Id, JsonBody};
use crate::service::sites::Proof;
use crate::verify::{self, Verification};
use crate::{AppError, AppState, now};

/// `POST /api/v1/sites` body.
#[derive(Deserialize)]
pub(crate) struct NewSite {
    origin: String,
}

/// A site as the API shows it: the stored row and, for its owners, how to prove ownership.
/// A reader sees whether the site is verified and when, never the token nor the instructions
/// built on it: proving ownership is an owner's task, and a token known to fewer people is
/// one fewer secret to lose (the console's site page draws the same line).
#[derive(Serialize)]
pub(crate) struct SiteView {
    id: i64,
    owner_id: i64,
    origin: String,
    /// `null` for a reader.
    verification_token: Option<String>,
    created_at: Timestamp,
    verified_at: Option<Timestamp>,
    last_checked_at: Option<Timestamp>,
    /// `null` for a reader.
    verification: Option<Instructions>,
}

/// The two ways to verify a site, spelled out for its token.
#[derive(Serialize)]
struct Instructions {
    /// The file to place at the site's root, containing the token.
    file_name: String,
    /// Where the service looks for it.
    file_url: String,
    /// The tag to put in the home page's head instead.
    meta_tag: String,
}

impl SiteView {
    /// The site as `role` may see it: an owner (or an admin) gets the token and the
    /// instructions, a reader neither.
    pub(crate) fn new(site: Site, role: Role) -> Self {
        let Site { id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at } = site;
        let (verification_token, verification) = match role {
            Role::Owner => {
                let file_name = verify::file_name(&verification_token);
                let verification = Instructions {
                    file_url: format!("{origin}/{file_name}"),
                    file_name,
                    meta_tag: verify::meta_tag(&verification_token),
                };
                (Some(verification_token), Some(verification))
            }
            Role::Reader => (None, None),
        };
        SiteView { id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at, verification }
    }

    /// The site as the actor may see it (one look-up of the actor's role).
    pub(crate) async fn of(state: &AppState, actor: Actor, site: Site) -> Result<Self, AppError> {
        let role = state.store.site_role(actor, site.id).await?;
        Ok(SiteView::new(site, role))
    }
}

/// The longest origin accepted: scheme, a 253-byte host and a port fit well within it.
const MAX_ORIGIN: usize = 300;

/// `scheme://host[:port]` in normal form (lower-case host, punycode, default port dropped),
/// or why the text is not an http(s) origin.
pub(crate) fn parse_origin(text: &str) -> Result<String, AppError> {
    let text = text.trim();
    if text.len() > MAX_ORIGIN {
        return Err(AppError::BadRequest(format!("the origin is longer than {MAX_ORIGIN} bytes")));
    }
    let url = url::Url::parse(text).map_err(|e| {
        AppError::BadRequest(format!("the origin is not an absolute URL ({e}): give scheme://host[:port]"))
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(AppError::BadRequest("the origin must be an http or https URL with a host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AppError::BadRequest("the origin must not carry a user name or password".into()));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(AppError::BadRequest(
            "the origin is scheme://host[:port] only, without a path, query or fragment".into(),
        ));
    }
    Ok(url.origin().ascii_serialization())
}

/// `POST /api/v1/sites` `{"origin"}`: 201 with the site and its verification instructions
/// (verified already when a verified domain property of the user covers it); 409 when the user
/// already has it.
pub(crate) async fn create(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    JsonBody(body): JsonBody<NewSite>,
) -> Result<(StatusCode, Json<SiteView>), AppError> {
    let origin = parse_origin(&body.origin)?;
    let site = state.store.create_site(Actor::from(&user), &origin, now()).await?;
    // Verified at once when a domain property of the user covers it.
    let site = crate::service::sites::after_site_added(&state, site).await?;
    // Who adds a site owns it.
    Ok((StatusCode::CREATED, Json(SiteView::new(site, Role::Owner))))
}

/// `GET /api/v1/sites`: the user's sites (every site for an admin).
pub(crate) async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Json<Vec<SiteView>>, AppError> {
    let actor = Actor::from(&user);
    // The roles in one read, not one per site (100 sites took 102 statements).
    let roles = state.store.site_roles(actor).await?;
    let sites = state.store.list_sites(actor).await?;
    Ok(Json(
        sites
            .into_iter()
            .map(|site| {
                let role = roles.of(site.id);
                SiteView::new(site, role)
            })
            .collect(),
    ))
}

/// `GET /api/v1/sites/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<SiteView>, AppError> {
    let actor = Actor::from(&user);
    let site = state.store.site(actor, id).await?;
    Ok(Json(SiteView::of(&state, actor, site).await?))
}

/// `GET /api/v1/sites/{id}/overview`: what the console's site page shows beside its sitemaps
/// (which `GET /api/v1/sites/{id}/sitemaps` lists, each with its `source` and `status_word`).
#[derive(Serialize)]
pub(crate) struct OverviewView {
    site: SiteView,
    /// The caller's role.
    role: Role,
    proof: Proof,
    totals: Totals,
    members: Vec<Member>,
    invitations: Vec<Invitation>,
    webhooks: Vec<WebhookSummary>,
    /// The newest IndexNow submissions received for the site (the service keeps 100).
    indexnow: Vec<IndexNowReceipt>,
}

/// A site's sitemaps counted: every status word, removed ones apart.
#[derive(Serialize, Default)]
struct Totals {
    /// Sitemaps not removed, an index's children each counted.
    sitemaps: i64,
    /// Their errors, each sitemap's own once.
    errors: i64,
    /// Their warnings.
    warnings: i64,
    /// URLs their last reads stored (a URL two sitemaps list counts twice).
    urls: i64,
    /// Sitemaps by the word each shows (`status_word`), every word present.
    by_status: BTreeMap<&'static str, i64>,
}

/// A webhook endpoint as the overview lists it: where events go and whether they do.
#[derive(Serialize)]
struct WebhookSummary {
    id: i64,
    url: String,
    events: String,
    /// `active`, `paused`, `unverified` or `disabled`.
    state: &'static str,
}

/// The totals of a site from its counts per word.
fn totals(words: &[mapwright_store::WordTotal]) -> Totals {
    let mut totals =
        Totals { by_status: StatusFilter::ALL.iter().map(|f| (f.as_str(), 0)).collect(), ..Totals::default() };
    for w in words {
        if let Some(count) = totals.by_status.get_mut(w.word.as_str()) {
            *count += w.sitemaps;
        }
        if w.word != "removed" {
            totals.sitemaps += w.sitemaps;
        }
        totals.errors += w.errors;
        totals.warnings += w.warnings;
        totals.urls += w.urls;
    }
    totals
}

/// `GET /api/v1/sites/{id}/overview`: the proof that keeps the site verified, its sitemaps
/// counted, its members and invitations, its webhooks and the IndexNow submissions received.
pub(crate) async fn overview(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<OverviewView>, AppError> {
    let o = crate::service::sites::overview(&state, Actor::from(&user), id).await?;
    let now = now();
    Ok(Json(OverviewView {
        totals: totals(&o.totals),
        site: SiteView::new(o.site, o.role),
        role: o.role,
        proof: o.proof,
        members: o.members,
        invitations: o.invitations,
        webhooks: o
            .webhooks
            .into_iter()
            .map(|w| WebhookSummary { state: w.state(now), id: w.id, url: w.url, events: w.events })
            .collect(),
        indexnow: o.indexnow,
    }))
}

/// `DELETE /api/v1/sites/{id}`: the site goes with its sitemaps, downloads and URLs.
pub(crate) async fn remove(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<StatusCode, AppError> {
    state.store.delete_site(Actor::from(&user), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

// Alike on purpose: api/domains.rs's `VerifyResult` and `verify_now` have this shape (a site is
// verified by a file, a property by DNS): each its own types and service call.
/// "Verify now" result: what was found, and the site as it stands afterwards.
#[derive(Serialize)]
pub(crate) struct VerifyResult {
    verification: Verification,
    site: SiteView,
}

/// `POST /api/v1/sites/{id}/verify`: checks the file and the meta tag now and records the
/// result (a failure unverifies a verified site, as the periodic re-check would).
pub(crate) async fn verify_now(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Id(id): Id,
) -> Result<Json<VerifyResult>, AppError> {
    let actor = Actor::from(&user);
    let site = state.store.site_as_owner(actor, id).await?;
    let verification = crate::service::sites::verify_now(&state, &site).await?;
    let site = state.store.site(actor, id).await?;
    Ok(Json(VerifyResult { verification, site: SiteView::new(site, Role::Owner) }))
}

#[cfg(test)]
mod tests {
    use super::parse_origin;

    #[test]
    fn origins() {
        for (input, expected) in [
            ("https://Example.COM", "https://example.com"),
            (" https://example.com/ ", "https://example.com"),
            ("http://example.com:80", "http://example.com"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
            ("https://bücher.example", "https://xn--bcher-kva.example"),
        ] {
            assert_eq!(parse_origin(input).unwrap(), expected, "{input}");
        }
        for bad in ["", "example.com", "ftp://example.com", "https://example.com/blog", "https://a@example.com"] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        assert!(parse_origin("https://example.com/?q").is_err());
        assert!(parse_origin(&format!("https://{}.com", "a".repeat(400))).is_err());
    }
}
