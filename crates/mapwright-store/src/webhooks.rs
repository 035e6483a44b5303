//! Webhooks (issue 23): a site's endpoints, their deliveries as a job queue every serve process
//! shares, and the log of attempts. Written once for both backends like the queries of
//! `sql.rs`, whose `impl_store!` expands [`webhook_methods!`] into inherent methods (`*_impl`)
//! that its `impl Store` calls.
//!
//! Seeing a site's endpoints and their log is a member's, adding and deleting them an owner's
//! (`site_as_owner`), as for everything else of a site. What a stranger can make the service
//! spend is bounded per user, the account a site counts against (`sites.owner_id`): endpoints
//! per site and per user, and deliveries waiting per user (past it an event is dropped for that
//! endpoint, and the log says so). The queue: a delivery is due at `next_attempt_at`; a lease
//! (`lease_owner`, `lease_expires_at`) keeps two processes from sending it at once, and an
//! expired lease (a process that died) makes it due again. A delivery leaves the queue when it
//! is delivered or given up; its attempts stay in `webhook_attempts`, the newest
//! [`ATTEMPTS_KEPT`] per endpoint.

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

/// Endpoints one site may have.
pub const MAX_WEBHOOKS_PER_SITE: i64 = 10;

/// Endpoints on all the sites one user's account holds: each may make the service send a
/// request per read of every sitemap of its site.
pub const MAX_WEBHOOKS_PER_USER: i64 = 50;

/// Deliveries waiting (for their first attempt or a retry) over all the endpoints of one user's
/// sites: an endpoint that never answers must not grow the queue without end.
pub const MAX_PENDING_DELIVERIES_PER_USER: i64 = 1_000;

/// Attempts kept in the log of one endpoint.
pub const ATTEMPTS_KEPT: i64 = 50;

/// The events an endpoint may ask for.
pub const WEBHOOK_EVENTS: [&str; 2] = ["read.completed", "status.worsened"];

row! {
/// A webhook endpoint as listed (its secret is shown only once, when it is made).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Webhook {
    /// Id.
    pub id: i64,
    /// The site whose events it receives.
    pub site_id: i64,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The events, comma-separated (see [`WEBHOOK_EVENTS`]).
    pub events: String,
    /// The member who added it.
    pub created_by: i64,
    /// When it was added.
    pub created_at: Timestamp,
}
}

impl Webhook {
    /// The events as a list.
    pub fn event_list(&self) -> Vec<&str> {
        self.events.split(',').filter(|e| !e.is_empty()).collect()
    }
}

row! {
/// One attempt to deliver (or a delivery dropped at the cap), as the log shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebhookAttempt {
    /// Id.
    pub id: i64,
    /// The endpoint.
    pub webhook_id: i64,
    /// The delivery (the id the receiver sees); one delivery may take several attempts.
    pub delivery_id: i64,
    /// The event delivered.
    pub event: String,
    /// 1 for the first attempt of the delivery.
    pub attempt: i64,
    /// When it was made.
    pub at: Timestamp,
    /// The receiver's HTTP status, if it answered.
    pub status_code: Option<i64>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: i64,
    /// `delivered`, `retrying` (another attempt is due), `failed` (given up) or `dropped`.
    pub outcome: String,
}
}

row! {
/// A delivery leased for an attempt: everything the sender needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeasedDelivery {
    /// The delivery's id.
    pub id: i64,
    /// The endpoint.
    pub webhook_id: i64,
    /// Where to POST.
    pub url: String,
    /// The HMAC key.
    pub secret: String,
    /// The event.
    pub event: String,
    /// The event's data, JSON.
    pub payload: String,
    /// When the event happened.
    pub created_at: Timestamp,
    /// Attempts made before this one.
    pub attempts: i64,
}
}

/// The outcome of one attempt, to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// When it was made.
    pub at: Timestamp,
    /// The receiver's HTTP status, if it answered.
    pub status_code: Option<i64>,
    /// Why it failed; `None`: delivered.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: i64,
    /// When to try again, for a failure that is to be retried; `None` with an error: given up.
    pub retry_at: Option<Timestamp>,
}

/// What an event queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Enqueued {
    /// Deliveries queued.
    pub queued: u64,
    /// Deliveries dropped, their user at [`MAX_PENDING_DELIVERIES_PER_USER`].
    pub dropped: u64,
}

/// The `Store` methods of webhooks (see the module documentation).
macro_rules! webhook_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn create_webhook_impl(
                &self,
                actor: Actor,
                site_id: i64,
                url: &str,
                secret_value: &str,
                events: &[&str],
                now: Timestamp,
            ) -> Result<$crate::Webhook> {
                let site = self.site_as_owner_impl(actor, site_id).await?;
                let mut tx = self.begin_write().await?;
                // The site's row first: two additions at once (two processes) count each other.
                sqlx::query("UPDATE sites SET owner_id = owner_id WHERE id = $1").bind(site_id).execute(&mut *tx).await?;
                let (on_site, on_user): (i64, i64) = sqlx::query_as(
                    "SELECT (SELECT COUNT(*) FROM webhooks WHERE site_id = $1), \
                     (SELECT COUNT(*) FROM webhooks w JOIN sites s ON s.id = w.site_id WHERE s.owner_id = $2)",
                )
                .bind(site_id)
                .bind(site.owner_id)
                .fetch_one(&mut *tx)
                .await?;
                if on_site >= $crate::MAX_WEBHOOKS_PER_SITE {
                    return Err(Error::Quota(format!(
                        "this site has {} webhooks, the most a site may have: delete one first",
                        $crate::MAX_WEBHOOKS_PER_SITE
                    )));
                }
                if on_user >= $crate::MAX_WEBHOOKS_PER_USER {
                    return Err(Error::Quota(format!(
                        "the sites of this account have {} webhooks, the most an account may have: delete one first",
                        $crate::MAX_WEBHOOKS_PER_USER
                    )));
                }
                let webhook: $crate::Webhook = sqlx::query_as(
                    "INSERT INTO webhooks (site_id, url, secret, events, created_by, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, site_id, url, events, created_by, created_at",
                )
                .bind(site_id)
                .bind(url)
                .bind(secret_value)
                .bind(events.join(","))
                .bind(actor.user_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(webhook)
            }

            pub(crate) async fn list_webhooks_impl(&self, actor: Actor, site_id: i64) -> Result<Vec<$crate::Webhook>> {
                self.site_impl(actor, site_id).await?;
                Ok(sqlx::query_as(
                    "SELECT id, site_id, url, events, created_by, created_at FROM webhooks WHERE site_id = $1 ORDER BY id",
                )
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn webhook_impl(&self, actor: Actor, webhook_id: i64) -> Result<$crate::Webhook> {
                let webhook: Option<$crate::Webhook> = sqlx::query_as(concat!(
                    "SELECT w.id, w.site_id, w.url, w.events, w.created_by, w.created_at FROM webhooks w \
                     JOIN sites s ON s.id = w.site_id WHERE w.id = $1 AND ",
                    owned!("$2", "$3")
                ))
                .bind(webhook_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                webhook.ok_or(Error::NotFound { what: "webhook", id: webhook_id })
            }

            pub(crate) async fn delete_webhook_impl(&self, actor: Actor, webhook_id: i64) -> Result<()> {
                let webhook = self.webhook_impl(actor, webhook_id).await?;
                self.site_as_owner_impl(actor, webhook.site_id).await?;
                let done = sqlx::query("DELETE FROM webhooks WHERE id = $1").bind(webhook_id).execute(&self.pool).await?;
                found(done.rows_affected(), "webhook", webhook_id)
            }

            pub(crate) async fn webhook_attempts_impl(
                &self,
                actor: Actor,
                webhook_id: i64,
                limit: i64,
            ) -> Result<Vec<$crate::WebhookAttempt>> {
                self.webhook_impl(actor, webhook_id).await?;
                Ok(sqlx::query_as(
                    "SELECT id, webhook_id, delivery_id, event, attempt, at, status_code, error, duration_ms, outcome \
                     FROM webhook_attempts WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2",
                )
                .bind(webhook_id)
                .bind(limit.clamp(1, $crate::webhooks::ATTEMPTS_KEPT))
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn enqueue_webhook_event_impl(
                &self,
                site_id: i64,
                event: &str,
                payload: &str,
                only_webhook: Option<i64>,
                now: Timestamp,
            ) -> Result<$crate::Enqueued> {
                // The endpoints of the site that asked for the event, each with whether its
                // user has room in the queue (a comma-separated list, matched whole).
                let targets: Vec<(i64, i64)> = sqlx::query_as(
                    "SELECT w.id, (SELECT COUNT(*) FROM webhook_deliveries d JOIN webhooks w2 ON w2.id = d.webhook_id \
                     JOIN sites s2 ON s2.id = w2.site_id WHERE s2.owner_id = s.owner_id) \
                     FROM webhooks w JOIN sites s ON s.id = w.site_id \
                     WHERE w.site_id = $1 AND (',' || w.events || ',') LIKE $2 AND ($3 IS NULL OR w.id = $3) ORDER BY w.id",
                )
                .bind(site_id)
                .bind(format!("%,{event},%"))
                .bind(only_webhook)
                .fetch_all(&self.pool)
                .await?;
                let mut out = $crate::Enqueued::default();
                for (webhook_id, pending) in targets {
                    if pending + out.queued as i64 >= $crate::MAX_PENDING_DELIVERIES_PER_USER {
                        let why = format!(
                            "dropped: {} deliveries of this account's webhooks are waiting, the most the queue holds",
                            $crate::MAX_PENDING_DELIVERIES_PER_USER
                        );
                        self.log_webhook_attempt(webhook_id, 0, event, 0, now, None, Some(&why), 0, "dropped").await?;
                        out.dropped += 1;
                        continue;
                    }
                    sqlx::query(
                        "INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) \
                         VALUES ($1, $2, $3, $4, $4)",
                    )
                    .bind(webhook_id)
                    .bind(event)
                    .bind(payload)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    out.queued += 1;
                }
                Ok(out)
            }

            pub(crate) async fn lease_webhook_deliveries_impl(
                &self,
                worker: &str,
                now: Timestamp,
                lease_seconds: i64,
                limit: i64,
            ) -> Result<Vec<$crate::LeasedDelivery>> {
                // The lease condition stands in the UPDATE too: on PostgreSQL two processes may
                // pick the same ids, and the second's UPDATE, after waiting for the first's row
                // lock, re-reads the row and finds the lease taken, so nothing is sent twice.
                let ids: Vec<i64> = sqlx::query_scalar(
                    "UPDATE webhook_deliveries SET lease_owner = $1, lease_expires_at = $2 \
                     WHERE id IN (SELECT id FROM webhook_deliveries WHERE next_attempt_at <= $3 \
                     AND (lease_expires_at IS NULL OR lease_expires_at <= $3) ORDER BY next_attempt_at, id LIMIT $4) \
                     AND (lease_expires_at IS NULL OR lease_expires_at <= $3) RETURNING id",
                )
                .bind(worker)
                .bind(now + lease_seconds)
                .bind(now)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    let delivery: Option<$crate::LeasedDelivery> = sqlx::query_as(
                        "SELECT d.id, d.webhook_id, w.url, w.secret, d.event, d.payload, d.created_at, d.attempts \
                         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1 AND d.lease_owner = $2",
                    )
                    .bind(id)
                    .bind(worker)
                    .fetch_optional(&self.pool)
                    .await?;
                    out.extend(delivery);
                }
                Ok(out)
            }

            pub(crate) async fn finish_webhook_attempt_impl(
                &self,
                worker: &str,
                delivery: &$crate::LeasedDelivery,
                record: &$crate::AttemptRecord,
            ) -> Result<bool> {
                let attempt = delivery.attempts + 1;
                let (outcome, kept) = match (&record.error, record.retry_at) {
                    (None, _) => ("delivered", false),
                    (Some(_), Some(_)) => ("retrying", true),
                    (Some(_), None) => ("failed", false),
                };
                // Only the lease's holder records: a process whose lease expired meanwhile lost
                // the delivery to another, which records its own attempt.
                let done = if kept {
                    sqlx::query(
                        "UPDATE webhook_deliveries SET attempts = $1, next_attempt_at = $2, lease_owner = NULL, \
                         lease_expires_at = NULL WHERE id = $3 AND lease_owner = $4",
                    )
                    .bind(attempt)
                    .bind(record.retry_at.unwrap_or(record.at))
                    .bind(delivery.id)
                    .bind(worker)
                    .execute(&self.pool)
                    .await?
                } else {
                    sqlx::query("DELETE FROM webhook_deliveries WHERE id = $1 AND lease_owner = $2")
                        .bind(delivery.id)
                        .bind(worker)
                        .execute(&self.pool)
                        .await?
                };
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                self.log_webhook_attempt(
                    delivery.webhook_id,
                    delivery.id,
                    &delivery.event,
                    attempt,
                    record.at,
                    record.status_code,
                    record.error.as_deref(),
                    record.duration_ms,
                    outcome,
                )
                .await?;
                Ok(true)
            }

            /// Adds a row to an endpoint's log and trims it to the newest [`ATTEMPTS_KEPT`].
            #[allow(clippy::too_many_arguments)]
            async fn log_webhook_attempt(
                &self,
                webhook_id: i64,
                delivery_id: i64,
                event: &str,
                attempt: i64,
                at: Timestamp,
                status_code: Option<i64>,
                error: Option<&str>,
                duration_ms: i64,
                outcome: &str,
            ) -> Result<()> {
                sqlx::query(
                    "INSERT INTO webhook_attempts (webhook_id, delivery_id, event, attempt, at, status_code, error, \
                     duration_ms, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(webhook_id)
                .bind(delivery_id)
                .bind(event)
                .bind(attempt)
                .bind(at)
                .bind(status_code)
                .bind(error.map(|e| clean(e).chars().take(500).collect::<String>()))
                .bind(duration_ms)
                .bind(outcome)
                .execute(&self.pool)
                .await?;
                sqlx::query(
                    "DELETE FROM webhook_attempts WHERE webhook_id = $1 AND id < (SELECT MIN(id) FROM \
                     (SELECT id FROM webhook_attempts WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2) newest)",
                )
                .bind(webhook_id)
                .bind($crate::webhooks::ATTEMPTS_KEPT)
                .execute(&self.pool)
                .await?;
                Ok(())
            }
        }
    };
}
