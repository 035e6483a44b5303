//! Webhooks: endpoints seen by members and changed by owners only, capped per site and per
//! account; deliveries queued per event for the endpoints that asked for it, leased by one
//! process at a time (two stores on one database), retried or given up, logged and trimmed;
//! deliveries waiting capped per account.

use mapwright_store::{
    ATTEMPTS_KEPT, AttemptRecord, Error, MAX_PENDING_DELIVERIES_PER_USER, MAX_WEBHOOKS_PER_SITE, Role,
};

use crate::support::{T0, each_backend, each_backend_pair, user, verified_site};

const BOTH: &[&str] = &["read.completed", "status.worsened"];

/// Adds an endpoint that has answered its verification handshake.
async fn hook(
    store: &dyn mapwright_store::Store,
    actor: mapwright_store::Actor,
    site: i64,
    url: &str,
    secret: &str,
    events: &[&str],
) -> mapwright_store::Webhook {
    let hook = store.create_webhook(actor, site, url, secret, events, T0).await.unwrap();
    store.record_webhook_handshake(hook.id, true, T0).await.unwrap();
    store.webhook(actor, hook.id).await.unwrap()
}

#[tokio::test]
async fn owners_add_and_delete_members_see_strangers_get_not_found() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let eve = user(&*store, "eve@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let hook =
            store.create_webhook(ann, site, "https://hooks.example/a", "s3cret-s3cret-s3cret", BOTH, T0).await.unwrap();
        assert_eq!(hook.event_list(), BOTH);
        assert_eq!(store.list_webhooks(ann, site).await.unwrap(), vec![hook.clone()]);

        // A stranger: not found, whatever the call.
        assert!(matches!(store.list_webhooks(eve, site).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.webhook(eve, hook.id).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.webhook_attempts(eve, hook.id, 10).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.delete_webhook(eve, hook.id).await, Err(Error::NotFound { .. })));
        assert!(matches!(
            store.create_webhook(eve, site, "https://e.example/", "x", BOTH, T0).await,
            Err(Error::NotFound { .. })
        ));

        // A reader sees and changes nothing.
        let (_, token) = store.create_invitation(ann, site, "bob@example.com", Role::Reader, T0, 3600).await.unwrap();
        store.accept_invitation(bob, &token, T0).await.unwrap();
        assert_eq!(store.webhook(bob, hook.id).await.unwrap(), hook);
        assert!(matches!(store.delete_webhook(bob, hook.id).await, Err(Error::Forbidden(_))));
        assert!(matches!(
            store.create_webhook(bob, site, "https://b.example/", "x", BOTH, T0).await,
            Err(Error::Forbidden(_))
        ));

        store.delete_webhook(ann, hook.id).await.unwrap();
        assert!(matches!(store.webhook(ann, hook.id).await, Err(Error::NotFound { .. })));
        // Ids are never reused.
        let again = store.create_webhook(ann, site, "https://hooks.example/a", "k", BOTH, T0).await.unwrap();
        assert!(again.id > hook.id);
    })
    .await;
}

#[tokio::test]
async fn endpoints_are_capped_per_site() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        for n in 0..MAX_WEBHOOKS_PER_SITE {
            store.create_webhook(ann, site, &format!("https://h.example/{n}"), "k", BOTH, T0).await.unwrap();
        }
        let over = store.create_webhook(ann, site, "https://h.example/over", "k", BOTH, T0).await;
        assert!(matches!(over, Err(Error::Quota(_))), "{over:?}");
    })
    .await;
}

#[tokio::test]
async fn events_queue_for_the_endpoints_that_asked_and_an_attempt_is_retried_then_logged() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let other = verified_site(&*store, ann, "https://other.example").await;
        let all = hook(&*store, ann, site, "https://h.example/all", "k1", BOTH).await;
        let worse = hook(&*store, ann, site, "https://h.example/w", "k2", &["status.worsened"]).await;
        hook(&*store, ann, other, "https://h.example/o", "k3", BOTH).await;

        let queued = store.enqueue_webhook_event(site, "read.completed", r#"{"n":1}"#, None, T0).await.unwrap();
        assert_eq!((queued.queued, queued.dropped), (1, 0), "only the endpoint of this site that asked");
        // Not due before its time.
        assert!(store.lease_webhook_deliveries("w1", T0 - 1, 60, 10).await.unwrap().is_empty());
        let leased = store.lease_webhook_deliveries("w1", T0, 60, 10).await.unwrap();
        assert_eq!(leased.len(), 1);
        let d = &leased[0];
        assert_eq!((d.webhook_id, d.url.as_str(), d.secret.as_str()), (all.id, "https://h.example/all", "k1"));
        assert_eq!((d.event.as_str(), d.payload.as_str(), d.attempts), ("read.completed", r#"{"n":1}"#, 0));
        // Leased: nobody else gets it until the lease expires.
        assert!(store.lease_webhook_deliveries("w2", T0 + 1, 60, 10).await.unwrap().is_empty());

        let failed = AttemptRecord {
            at: T0,
            status_code: Some(500),
            error: Some("HTTP 500".into()),
            duration_ms: 3,
            retry_at: Some(T0 + 30),
        };
        assert!(!store.finish_webhook_attempt("w2", d, &failed).await.unwrap(), "only the holder records");
        assert!(store.finish_webhook_attempt("w1", d, &failed).await.unwrap());
        assert!(store.lease_webhook_deliveries("w1", T0 + 29, 60, 10).await.unwrap().is_empty(), "backing off");
        let again = store.lease_webhook_deliveries("w1", T0 + 30, 60, 10).await.unwrap();
        assert_eq!((again[0].id, again[0].attempts), (d.id, 1));
        let ok = AttemptRecord { at: T0 + 30, status_code: Some(204), error: None, duration_ms: 2, retry_at: None };
        assert!(store.finish_webhook_attempt("w1", &again[0], &ok).await.unwrap());
        assert!(store.lease_webhook_deliveries("w1", T0 + 999, 60, 10).await.unwrap().is_empty(), "delivered: gone");

        let log = store.webhook_attempts(ann, all.id, 50).await.unwrap();
        let rows: Vec<(i64, i64, Option<i64>, &str)> =
            log.iter().map(|a| (a.delivery_id, a.attempt, a.status_code, a.outcome.as_str())).collect();
        assert_eq!(rows, [(d.id, 2, Some(204), "delivered"), (d.id, 1, Some(500), "retrying")], "newest first");
        assert!(store.webhook_attempts(ann, worse.id, 50).await.unwrap().is_empty());

        // Given up: out of the queue, logged as failed.
        store.enqueue_webhook_event(site, "status.worsened", "{}", None, T0).await.unwrap();
        let two = store.lease_webhook_deliveries("w1", T0, 60, 10).await.unwrap();
        assert_eq!(two.len(), 2, "both endpoints asked for status.worsened");
        let give_up = AttemptRecord { retry_at: None, ..failed };
        for d in &two {
            store.finish_webhook_attempt("w1", d, &give_up).await.unwrap();
        }
        assert!(store.lease_webhook_deliveries("w1", T0 + 99_999, 60, 10).await.unwrap().is_empty());
        assert_eq!(store.webhook_attempts(ann, worse.id, 50).await.unwrap()[0].outcome, "failed");
    })
    .await;
}

#[tokio::test]
async fn a_lease_of_a_process_that_died_expires_and_two_processes_never_share_a_delivery() {
    each_backend_pair(|a, b| async move {
        let ann = user(&*a, "ann@example.com", false).await;
        let site = verified_site(&*a, ann, "https://ann.example").await;
        // Twenty endpoints on two sites, a delivery each (an endpoint has one in flight at most).
        let second = verified_site(&*a, ann, "https://ann2.example").await;
        for n in 0..20 {
            let on = if n % 2 == 0 { site } else { second };
            hook(&*a, ann, on, &format!("https://h.example/{n}"), "k", BOTH).await;
        }
        for on in [site, second] {
            a.enqueue_webhook_event(on, "read.completed", "{}", None, T0).await.unwrap();
        }
        let (x, y) =
            tokio::join!(a.lease_webhook_deliveries("pa", T0, 60, 15), b.lease_webhook_deliveries("pb", T0, 60, 15));
        let (x, y) = (x.unwrap(), y.unwrap());
        let mut ids: Vec<i64> = x.iter().chain(&y).map(|d| d.id).collect();
        let all = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all, "no delivery leased twice");
        assert!(all >= 15, "the two leased {all} of 20 between them");
        // The processes holding them died: after the lease, another takes them all.
        let later = b.lease_webhook_deliveries("pb", T0 + 61, 60, 50).await.unwrap();
        assert_eq!(later.len(), 20);
    })
    .await;
}

#[tokio::test]
async fn deliveries_waiting_are_capped_per_account_and_the_log_is_trimmed() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let hook = hook(&*store, ann, site, "https://h.example/", "k", BOTH).await;
        let mut queued = 0;
        let mut dropped = 0;
        for _ in 0..MAX_PENDING_DELIVERIES_PER_USER + 3 {
            let e = store.enqueue_webhook_event(site, "read.completed", "{}", None, T0).await.unwrap();
            queued += e.queued;
            dropped += e.dropped;
        }
        assert_eq!((queued, dropped), (MAX_PENDING_DELIVERIES_PER_USER as u64, 3));
        let log = store.webhook_attempts(ann, hook.id, 100).await.unwrap();
        assert_eq!(log.len(), 3);
        assert!(log.iter().all(|a| a.outcome == "dropped" && a.error.as_deref().unwrap().contains("waiting")));

        // Attempts past the newest ATTEMPTS_KEPT are deleted (one in flight at a time, in order).
        let mut last = 0;
        for _ in 0..ATTEMPTS_KEPT + 10 {
            let leased = store.lease_webhook_deliveries("w", T0, 60, 10).await.unwrap();
            assert_eq!(leased.len(), 1, "one delivery of an endpoint in flight at a time");
            assert!(leased[0].id > last, "oldest first");
            last = leased[0].id;
            let ok = AttemptRecord { at: T0, status_code: Some(200), error: None, duration_ms: 1, retry_at: None };
            store.finish_webhook_attempt("w", &leased[0], &ok).await.unwrap();
        }
        let log = store.webhook_attempts(ann, hook.id, 1000).await.unwrap();
        assert_eq!(log.len() as i64, ATTEMPTS_KEPT);
        assert!(log.iter().all(|a| a.outcome == "delivered"));
    })
    .await;
}
