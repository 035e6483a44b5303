//! Webhooks (issue 23): a site's endpoints, their deliveries as a job queue every serve process
//! shares, and the log of attempts. Written once for both backends like the queries of
//! `sql.rs`, whose `impl_store!` expands [`webhook_methods!`] into inherent methods (`*_impl`)
//! that `store.rs`'s `impl Store` calls.
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

/// Failed attempts in a row after which an endpoint is disabled (its waiting deliveries
/// dropped, its creator told) until an owner verifies it again: with the sender's default
/// back-off (30 s doubling, 8 attempts a delivery) a few hours of failures, more when the
/// events are rare.
pub const WEBHOOK_FAILURES_TO_DISABLE: i64 = 15;

/// The pause of an endpoint after its first failure in a row; each further failure doubles it.
pub const WEBHOOK_BACKOFF_SECONDS: i64 = 30;

/// The longest pause of a failing endpoint.
pub const WEBHOOK_BACKOFF_MAX_SECONDS: i64 = 6 * 3_600;

/// How long an endpoint that failed `failures` times in a row pauses (nothing else waits on it:
/// a paused endpoint's deliveries are simply not leased, others' are).
pub fn webhook_backoff(failures: i64) -> i64 {
    if failures <= 0 {
        return 0;
    }
    let doublings = (failures - 1).min(20) as u32;
    WEBHOOK_BACKOFF_SECONDS.saturating_mul(1 << doublings).min(WEBHOOK_BACKOFF_MAX_SECONDS)
}

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
    /// When it answered its verification handshake; `None`: it receives nothing yet.
    pub verified_at: Option<Timestamp>,
    /// Failed attempts in a row.
    pub failures: i64,
    /// While failing, nothing is sent to it before this.
    pub paused_until: Option<Timestamp>,
    /// When it was disabled after [`WEBHOOK_FAILURES_TO_DISABLE`] failures in a row; an owner
    /// verifies it again to resume.
    pub disabled_at: Option<Timestamp>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
}
}

/// The columns of [`Webhook`], for a query whose endpoints table is `w`.
macro_rules! webhook_cols {
    () => {
        "w.id, w.site_id, w.url, w.events, w.created_by, w.created_at, w.verified_at, w.failures, w.paused_until, \
         w.disabled_at, w.disabled_reason"
    };
}

impl Webhook {
    /// What the endpoint's state is, in one word both faces show: `unverified` (it has not
    /// answered its handshake), `disabled`, `paused` (backing off after failures, at `now`) or
    /// `active`.
    pub fn state(&self, now: Timestamp) -> &'static str {
        if self.disabled_at.is_some() {
            "disabled"
        } else if self.verified_at.is_none() {
            "unverified"
        } else if self.paused_until.is_some_and(|t| t > now) {
            "paused"
        } else {
            "active"
        }
    }
}

row! {
/// An endpoint disabled after failing, whose creator is to be told ([`crate::Store::claim_disabled_webhooks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledWebhook {
    /// The endpoint.
    pub id: i64,
    /// Its site.
    pub site_id: i64,
    /// The site's origin.
    pub origin: String,
    /// Where deliveries were POSTed (to the creator, who chose it).
    pub url: String,
    /// The address of the member who added it.
    pub email: String,
    /// Why it was disabled.
    pub reason: String,
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
            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
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
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, site_id, url, events, created_by, created_at, verified_at, \
                     failures, paused_until, disabled_at, disabled_reason",
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
                Ok(sqlx::query_as(concat!(
                    "SELECT ", webhook_cols!(), " FROM webhooks w WHERE w.site_id = $1 ORDER BY w.id"
                ))
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn webhook_impl(&self, actor: Actor, webhook_id: i64) -> Result<$crate::Webhook> {
                let webhook: Option<$crate::Webhook> = sqlx::query_as(concat!(
                    "SELECT ", webhook_cols!(), " FROM webhooks w JOIN sites s ON s.id = w.site_id WHERE w.id = $1 AND ",
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
                let targets: Vec<(i64, i64, bool, bool)> = sqlx::query_as(
                    "SELECT w.id, (SELECT COUNT(*) FROM webhook_deliveries d JOIN webhooks w2 ON w2.id = d.webhook_id \
                     JOIN sites s2 ON s2.id = w2.site_id WHERE s2.owner_id = s.owner_id), \
                     w.verified_at IS NOT NULL, w.disabled_at IS NOT NULL \
                     FROM webhooks w JOIN sites s ON s.id = w.site_id \
                     WHERE w.site_id = $1 AND (',' || w.events || ',') LIKE $2 AND ($3 IS NULL OR w.id = $3) ORDER BY w.id",
                )
                .bind(site_id)
                .bind(format!("%,{event},%"))
                .bind(only_webhook)
                .fetch_all(&self.pool)
                .await?;
                let mut out = $crate::Enqueued::default();
                for (webhook_id, pending, verified, disabled) in targets {
                    // Only an endpoint that asked for the events receives them: one that has not
                    // answered its handshake, or was disabled, gets nothing, and its log says why.
                    let refused = if disabled {
                        Some("dropped: the endpoint is disabled after failing: verify it again to resume")
                    } else if !verified {
                        Some("dropped: the endpoint has not answered its verification handshake")
                    } else {
                        None
                    };
                    if let Some(why) = refused {
                        self.log_webhook_attempt(webhook_id, 0, event, 0, now, None, Some(why), 0, "dropped").await?;
                        out.dropped += 1;
                        continue;
                    }
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
                // Fair: an endpoint has one delivery in flight at most (its oldest, so it
                // receives them in order), a paused, disabled or unverified endpoint none, and
                // the users whose sites the endpoints are on take turns (each user's first due
                // endpoint, then each one's second...): one user's endpoints, dead or busy,
                // cannot hold back another's deliveries.
                // Alike on purpose: as `claim_disabled_webhooks_impl`, a claim by an UPDATE that
                // returns the ids, then each claimed row read; other tables, other conditions.
                let ids: Vec<i64> = sqlx::query_scalar(
                    "UPDATE webhook_deliveries SET lease_owner = $1, lease_expires_at = $2 \
                     WHERE id IN (SELECT c.id FROM (SELECT d.id, d.next_attempt_at, ROW_NUMBER() OVER \
                     (PARTITION BY s.owner_id ORDER BY d.next_attempt_at, d.id) AS turn \
                     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN sites s ON s.id = w.site_id \
                     WHERE d.next_attempt_at <= $3 AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $3) \
                     AND w.verified_at IS NOT NULL AND w.disabled_at IS NULL \
                     AND (w.paused_until IS NULL OR w.paused_until <= $3) \
                     AND d.id = (SELECT MIN(o.id) FROM webhook_deliveries o WHERE o.webhook_id = d.webhook_id) \
                     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries f WHERE f.webhook_id = d.webhook_id \
                     AND f.lease_expires_at > $3)) c ORDER BY c.turn, c.next_attempt_at, c.id LIMIT $4) \
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
                self.endpoint_outcome(delivery.webhook_id, &delivery.event, record.error.is_none(), record.at, record.retry_at)
                    .await?;
                Ok(true)
            }

            /// Counts an attempt's outcome on its endpoint: a success clears the failures, a
            /// failure pauses the endpoint alone until the delivery's retry (the sender's
            /// back-off; [`webhook_backoff`] after a delivery given up) and, at
            /// [`WEBHOOK_FAILURES_TO_DISABLE`] in a row, disables it and drops what waits for it.
            async fn endpoint_outcome(
                &self,
                webhook_id: i64,
                event: &str,
                ok: bool,
                at: Timestamp,
                retry_at: Option<Timestamp>,
            ) -> Result<()> {
                if ok {
                    sqlx::query("UPDATE webhooks SET failures = 0, paused_until = NULL WHERE id = $1")
                        .bind(webhook_id)
                        .execute(&self.pool)
                        .await?;
                    return Ok(());
                }
                let failures: Option<i64> =
                    sqlx::query_scalar("UPDATE webhooks SET failures = failures + 1 WHERE id = $1 RETURNING failures")
                        .bind(webhook_id)
                        .fetch_optional(&self.pool)
                        .await?;
                let Some(failures) = failures else { return Ok(()) };
                if failures < $crate::webhooks::WEBHOOK_FAILURES_TO_DISABLE {
                    sqlx::query("UPDATE webhooks SET paused_until = $1 WHERE id = $2")
                        .bind(retry_at.unwrap_or(at + $crate::webhooks::webhook_backoff(failures)))
                        .bind(webhook_id)
                        .execute(&self.pool)
                        .await?;
                    return Ok(());
                }
                let why = format!("disabled after {failures} failed attempts in a row: verify the endpoint again to resume");
                let done = sqlx::query(
                    "UPDATE webhooks SET disabled_at = $1, disabled_reason = $2, disabled_told_at = NULL, \
                     paused_until = NULL WHERE id = $3 AND disabled_at IS NULL",
                )
                .bind(at)
                .bind(&why)
                .bind(webhook_id)
                .execute(&self.pool)
                .await?;
                if done.rows_affected() > 0 {
                    sqlx::query("DELETE FROM webhook_deliveries WHERE webhook_id = $1")
                        .bind(webhook_id)
                        .execute(&self.pool)
                        .await?;
                    self.log_webhook_attempt(webhook_id, 0, event, 0, at, None, Some(&why), 0, "dropped").await?;
                }
                Ok(())
            }

            pub(crate) async fn webhook_target_impl(&self, webhook_id: i64) -> Result<Option<(String, String)>> {
                Ok(sqlx::query_as("SELECT url, secret FROM webhooks WHERE id = $1")
                    .bind(webhook_id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            pub(crate) async fn record_webhook_handshake_impl(
                &self,
                webhook_id: i64,
                ok: bool,
                now: Timestamp,
            ) -> Result<()> {
                // Answered: verified, and a disabled or paused endpoint starts afresh. Not
                // answered: unverified until it does (nothing is queued for it meanwhile).
                let done = if ok {
                    sqlx::query(
                        "UPDATE webhooks SET verified_at = $1, failures = 0, paused_until = NULL, disabled_at = NULL, \
                         disabled_reason = NULL, disabled_told_at = NULL WHERE id = $2",
                    )
                    .bind(now)
                    .bind(webhook_id)
                    .execute(&self.pool)
                    .await?
                } else {
                    sqlx::query("UPDATE webhooks SET verified_at = NULL WHERE id = $1")
                        .bind(webhook_id)
                        .execute(&self.pool)
                        .await?
                };
                found(done.rows_affected(), "webhook", webhook_id)
            }

            pub(crate) async fn postpone_webhook_delivery_impl(
                &self,
                worker: &str,
                delivery_id: i64,
                until: Timestamp,
            ) -> Result<bool> {
                let done = sqlx::query(
                    "UPDATE webhook_deliveries SET next_attempt_at = $1, lease_owner = NULL, lease_expires_at = NULL \
                     WHERE id = $2 AND lease_owner = $3",
                )
                .bind(until)
                .bind(delivery_id)
                .bind(worker)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            pub(crate) async fn claim_disabled_webhooks_impl(
                &self,
                now: Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::DisabledWebhook>> {
                // Claimed by stamping, so that one process tells each creator once.
                // Alike on purpose: claimed as the deliveries are (see
                // `lease_webhook_deliveries_impl`).
                let ids: Vec<i64> = sqlx::query_scalar(
                    "UPDATE webhooks SET disabled_told_at = $1 WHERE id IN (SELECT id FROM webhooks \
                     WHERE disabled_at IS NOT NULL AND disabled_told_at IS NULL ORDER BY id LIMIT $2) \
                     AND disabled_told_at IS NULL RETURNING id",
                )
                .bind(now)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    let row: Option<$crate::DisabledWebhook> = sqlx::query_as(
                        "SELECT w.id, w.site_id, s.origin, w.url, u.email, COALESCE(w.disabled_reason, '') AS reason \
                         FROM webhooks w JOIN sites s ON s.id = w.site_id JOIN users u ON u.id = w.created_by WHERE w.id = $1",
                    )
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    out.extend(row);
                }
                Ok(out)
            }

            pub(crate) async fn unclaim_disabled_webhook_impl(&self, webhook_id: i64, claimed_at: Timestamp) -> Result<()> {
                sqlx::query("UPDATE webhooks SET disabled_told_at = NULL WHERE id = $1 AND disabled_told_at = $2")
                    .bind(webhook_id)
                    .bind(claimed_at)
                    .execute(&self.pool)
                    .await?;
                Ok(())
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
