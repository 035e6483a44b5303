//! The JSON API under `/api/v1`: sites, verification, sitemaps, downloads, findings, per-read
//! diffs and URLs (pages, CSV and JSONL exports), a sitemap's lastmod trust, the failing-URL report (its check run, "Check now", pages
//! and exports), the crawl frontier, a site's members and invitations, and e-mail alerts
//! (each member's choice per site, the unsubscribe link's token), domain
//! properties (DNS TXT verification), a site's webhooks with their logs, plus the IndexNow
//! receiver and the
//! OpenAPI file that documents all of them.
//!
//! Every handler takes the signed-in user (`CurrentUser`) first, so a request
//! without a session or token is 401 before anything else is looked at, and passes the
//! user's `Actor` to the store, so another user's resource is 404, never 403; a reader of a
//! site who tries an owner's action is 403.
//!
//! [`ROUTES`] is the one list of the routes `openapi.yaml` documents (health, ping, IndexNow,
//! accounts and this module's): [`router`] is built from it, and the tests compare it to the
//! paths of `openapi.yaml`. Every error of these routes is an RFC 9457 problem
//! (`application/problem+json`), bad input included: the handlers take the base's `extract`
//! extractors, not axum's, and a path under `/api/v1` that is no route is a problem 404, a
//! method a route does not take a problem 405 with `Allow`.

mod account;
mod alerts;
mod checks;
mod diffs;
mod domains;
mod lastmod;
mod members;
mod sitemaps;
mod sites;
mod urls;
mod webhooks;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{MethodRouter, any, delete, get, post};

use crate::AppState;

/// The OpenAPI 3.1 description of the service, served at `GET /api/v1/openapi.yaml`.
pub const OPENAPI_YAML: &str = include_str!("../../openapi.yaml");

/// An HTTP method of the route table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
    /// DELETE.
    Delete,
}

impl Method {
    /// The lower-case name, as OpenAPI's path items spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Delete => "delete",
        }
    }
}

/// The documented routes: (method, path). [`router`] serves exactly these.
pub const ROUTES: &[(Method, &str)] = &[
    (Method::Get, "/healthz"),
    (Method::Get, "/metrics"),
    (Method::Get, "/ping"),
    (Method::Post, "/api/v1/signup"),
    (Method::Post, "/api/v1/signup/confirm"),
    (Method::Post, "/api/v1/signin"),
    (Method::Post, "/api/v1/signout"),
    (Method::Get, "/api/v1/me"),
    (Method::Post, "/api/v1/password-reset"),
    (Method::Post, "/api/v1/password-reset/confirm"),
    (Method::Post, "/api/v1/me/password"),
    (Method::Post, "/api/v1/me/email"),
    (Method::Post, "/api/v1/email-change/confirm"),
    (Method::Get, "/api/v1/tokens"),
    (Method::Post, "/api/v1/tokens"),
    (Method::Delete, "/api/v1/tokens/{id}"),
    (Method::Get, "/api/v1/openapi.yaml"),
    (Method::Post, "/api/v1/sites"),
    (Method::Get, "/api/v1/sites"),
    (Method::Get, "/api/v1/sites/{id}"),
    (Method::Get, "/api/v1/sites/{id}/overview"),
    (Method::Delete, "/api/v1/sites/{id}"),
    (Method::Post, "/api/v1/sites/{id}/verify"),
    (Method::Post, "/api/v1/sites/{id}/sitemaps"),
    (Method::Get, "/api/v1/sites/{id}/sitemaps"),
    (Method::Get, "/api/v1/sites/{id}/urls"),
    (Method::Get, "/api/v1/sites/{id}/urls.csv"),
    (Method::Get, "/api/v1/sites/{id}/urls.jsonl"),
    (Method::Get, "/api/v1/sites/{id}/frontier"),
    (Method::Get, "/api/v1/sites/{id}/url-check"),
    (Method::Post, "/api/v1/sites/{id}/url-check"),
    (Method::Get, "/api/v1/sites/{id}/failing-urls"),
    (Method::Get, "/api/v1/sites/{id}/failing-urls.csv"),
    (Method::Get, "/api/v1/sites/{id}/failing-urls.jsonl"),
    (Method::Get, "/api/v1/sites/{id}/check-changes"),
    (Method::Get, "/api/v1/sitemaps/{id}"),
    (Method::Delete, "/api/v1/sitemaps/{id}"),
    (Method::Post, "/api/v1/sitemaps/{id}/resubmit"),
    (Method::Get, "/api/v1/sitemaps/{id}/downloads"),
    (Method::Get, "/api/v1/downloads/{id}/findings"),
    (Method::Get, "/api/v1/sitemaps/{id}/diffs"),
    (Method::Get, "/api/v1/downloads/{id}/diff"),
    (Method::Get, "/api/v1/downloads/{id}/diff.csv"),
    (Method::Get, "/api/v1/downloads/{id}/diff.jsonl"),
    (Method::Get, "/api/v1/sitemaps/{id}/lastmod"),
    (Method::Get, "/api/v1/sitemaps/{id}/child-changes"),
    (Method::Get, "/api/v1/sites/{id}/members"),
    (Method::Post, "/api/v1/sites/{id}/invitations"),
    (Method::Delete, "/api/v1/invitations/{id}"),
    (Method::Post, "/api/v1/invitations/accept"),
    (Method::Delete, "/api/v1/members/{id}"),
    (Method::Get, "/api/v1/sites/{id}/alerts"),
    (Method::Post, "/api/v1/sites/{id}/alerts"),
    (Method::Post, "/api/v1/alerts/unsubscribe"),
    (Method::Post, "/api/v1/domains"),
    (Method::Get, "/api/v1/domains"),
    (Method::Get, "/api/v1/domains/{id}"),
    (Method::Delete, "/api/v1/domains/{id}"),
    (Method::Post, "/api/v1/domains/{id}/verify"),
    (Method::Get, "/api/v1/sites/{id}/webhooks"),
    (Method::Post, "/api/v1/sites/{id}/webhooks"),
    (Method::Get, "/api/v1/webhooks/{id}"),
    (Method::Delete, "/api/v1/webhooks/{id}"),
    (Method::Post, "/api/v1/webhooks/{id}/verify"),
    (Method::Get, "/api/v1/webhooks/{id}/deliveries"),
    (Method::Get, "/indexnow"),
    (Method::Post, "/indexnow"),
];

/// The handlers of the documented routes served by the other faces (the ping, the IndexNow
/// receiver), which this face does not import: `lib.rs`, above both, gives them to [`router`].
pub type OtherFaces = fn(Method, &str) -> Option<MethodRouter<AppState>>;

/// The handler of one entry of [`ROUTES`]: this face's own, or one of `others`.
fn handler(method: Method, path: &str, others: OtherFaces) -> MethodRouter<AppState> {
    if let Some(handler) = others(method, path) {
        return handler;
    }
    match (method, path) {
        (Method::Get, "/healthz") => get(crate::health),
        (Method::Get, "/metrics") => get(crate::metrics::metrics),
        (Method::Post, "/api/v1/signup") => post(crate::auth::sign_up),
        (Method::Post, "/api/v1/signup/confirm") => post(crate::auth::confirm_sign_up),
        (Method::Post, "/api/v1/signin") => post(crate::auth::sign_in),
        (Method::Post, "/api/v1/signout") => post(crate::auth::sign_out),
        (Method::Get, "/api/v1/me") => get(crate::auth::me),
        (Method::Post, "/api/v1/password-reset") => post(account::request_reset),
        (Method::Post, "/api/v1/password-reset/confirm") => post(account::reset),
        (Method::Post, "/api/v1/me/password") => post(account::change_password),
        (Method::Post, "/api/v1/me/email") => post(account::request_email_change),
        (Method::Post, "/api/v1/email-change/confirm") => post(account::confirm_email_change),
        (Method::Get, "/api/v1/tokens") => get(crate::auth::list_tokens),
        (Method::Post, "/api/v1/tokens") => post(crate::auth::create_token),
        (Method::Delete, "/api/v1/tokens/{id}") => delete(crate::auth::revoke_token),
        (Method::Get, "/api/v1/openapi.yaml") => get(openapi),
        (Method::Post, "/api/v1/sites") => post(sites::create),
        (Method::Get, "/api/v1/sites") => get(sites::list),
        (Method::Get, "/api/v1/sites/{id}") => get(sites::show),
        (Method::Get, "/api/v1/sites/{id}/overview") => get(sites::overview),
        (Method::Delete, "/api/v1/sites/{id}") => delete(sites::remove),
        (Method::Post, "/api/v1/sites/{id}/verify") => post(sites::verify_now),
        (Method::Post, "/api/v1/sites/{id}/sitemaps") => post(sitemaps::add),
        (Method::Get, "/api/v1/sites/{id}/sitemaps") => get(sitemaps::list),
        (Method::Get, "/api/v1/sites/{id}/urls") => get(urls::page),
        (Method::Get, "/api/v1/sites/{id}/urls.csv") => get(urls::export_csv),
        (Method::Get, "/api/v1/sites/{id}/urls.jsonl") => get(urls::export_jsonl),
        (Method::Get, "/api/v1/sites/{id}/frontier") => get(urls::frontier),
        (Method::Get, "/api/v1/sites/{id}/url-check") => get(checks::url_check),
        (Method::Post, "/api/v1/sites/{id}/url-check") => post(checks::check_now),
        (Method::Get, "/api/v1/sites/{id}/failing-urls") => get(checks::page),
        (Method::Get, "/api/v1/sites/{id}/failing-urls.csv") => get(checks::export_csv),
        (Method::Get, "/api/v1/sites/{id}/failing-urls.jsonl") => get(checks::export_jsonl),
        (Method::Get, "/api/v1/sites/{id}/check-changes") => get(checks::changes),
        (Method::Get, "/api/v1/sitemaps/{id}") => get(sitemaps::show),
        (Method::Delete, "/api/v1/sitemaps/{id}") => delete(sitemaps::remove),
        (Method::Post, "/api/v1/sitemaps/{id}/resubmit") => post(sitemaps::resubmit),
        (Method::Get, "/api/v1/sitemaps/{id}/downloads") => get(sitemaps::downloads),
        (Method::Get, "/api/v1/downloads/{id}/findings") => get(sitemaps::findings),
        (Method::Get, "/api/v1/sitemaps/{id}/diffs") => get(diffs::list),
        (Method::Get, "/api/v1/downloads/{id}/diff") => get(diffs::show),
        (Method::Get, "/api/v1/downloads/{id}/diff.csv") => get(diffs::export_csv),
        (Method::Get, "/api/v1/downloads/{id}/diff.jsonl") => get(diffs::export_jsonl),
        (Method::Get, "/api/v1/sitemaps/{id}/lastmod") => get(lastmod::show),
        (Method::Get, "/api/v1/sitemaps/{id}/child-changes") => get(diffs::children),
        (Method::Get, "/api/v1/sites/{id}/members") => get(members::list),
        (Method::Post, "/api/v1/sites/{id}/invitations") => post(members::invite),
        (Method::Delete, "/api/v1/invitations/{id}") => delete(members::revoke),
        (Method::Post, "/api/v1/invitations/accept") => post(members::accept),
        (Method::Delete, "/api/v1/members/{id}") => delete(members::remove),
        (Method::Get, "/api/v1/sites/{id}/alerts") => get(alerts::show),
        (Method::Post, "/api/v1/sites/{id}/alerts") => post(alerts::set),
        (Method::Post, "/api/v1/alerts/unsubscribe") => post(alerts::unsubscribe),
        (Method::Post, "/api/v1/domains") => post(domains::create),
        (Method::Get, "/api/v1/domains") => get(domains::list),
        (Method::Get, "/api/v1/domains/{id}") => get(domains::show),
        (Method::Delete, "/api/v1/domains/{id}") => delete(domains::remove),
        (Method::Post, "/api/v1/domains/{id}/verify") => post(domains::verify_now),
        (Method::Get, "/api/v1/sites/{id}/webhooks") => get(webhooks::list),
        (Method::Post, "/api/v1/sites/{id}/webhooks") => post(webhooks::create),
        (Method::Get, "/api/v1/webhooks/{id}") => get(webhooks::show),
        (Method::Delete, "/api/v1/webhooks/{id}") => delete(webhooks::remove),
        (Method::Post, "/api/v1/webhooks/{id}/verify") => post(webhooks::verify),
        (Method::Get, "/api/v1/webhooks/{id}/deliveries") => get(webhooks::deliveries),
        _ => unreachable!("every entry of ROUTES has a handler: {method:?} {path}"),
    }
}

/// The routes of [`ROUTES`], ready to merge into the app, with problem answers for unknown
/// paths under `/api/v1` and for methods a route does not take; `others` serves the entries of
/// the other faces.
pub fn router(others: OtherFaces) -> Router<AppState> {
    ROUTES
        .iter()
        .fold(Router::new(), |router, &(method, path)| router.route(path, handler(method, path, others)))
        .route("/api/v1", any(crate::extract::no_such_route))
        .route("/api/v1/{*rest}", any(crate::extract::no_such_route))
        .method_not_allowed_fallback(crate::extract::no_such_method)
}

/// `GET /api/v1/openapi.yaml`.
async fn openapi() -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/yaml")], OPENAPI_YAML)
}
