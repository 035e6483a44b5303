//! Issue 33, what the store holds of the one outbound gate: a removed member's invitations,
//! webhooks, alert link and domain-granted verification end with the membership; an invitation
//! whose sender may no longer invite is refused; a site handed to another owner respects that
//! owner's caps; invitations are capped per invited address across senders and processes;
//! webhook endpoints receive events only after their handshake, back off and are disabled
//! alone, and the accounts take turns in the delivery queue.

use mapwright_store::{
    AttemptRecord, Error, MAX_INVITATIONS_PER_ADDRESS, MAX_PENDING_INVITATIONS_PER_ADDRESS, MAX_SITES_PER_USER, Role,
    Store, WEBHOOK_FAILURES_TO_DISABLE, webhook_backoff,
};

use crate::support::{T0, each_backend, each_backend_pair, user, verified_site};

const DAY: i64 = 86_400;
const WEEK: i64 = 7 * DAY;
const BOTH: &[&str] = &["read.completed", "status.worsened"];

/// Makes `who` (whose address is `email`) a member of the site with `role`, invited by `by`.
async fn join(
    store: &dyn Store,
    by: mapwright_store::Actor,
    who: (mapwright_store::Actor, &str),
    site: i64,
    role: Role,
) {
    let (who, email) = who;
    let (_, token) = store.create_invitation(by, site, email, role, T0, WEEK).await.unwrap();
    store.accept_invitation(who, &token, T0).await.unwrap();
}

/// The membership id of `who` on the site.
/// Ann's verified site https://ann.example, with Bob as a second owner: (ann, bob, site).
async fn co_owned(store: &dyn Store) -> (mapwright_store::Actor, mapwright_store::Actor, i64) {
    let ann = user(store, "ann@example.com", false).await;
    let bob = user(store, "bob@example.com", false).await;
    let site = verified_site(store, ann, "https://ann.example").await;
    join(store, ann, (bob, "bob@example.com"), site, Role::Owner).await;
    (ann, bob, site)
}

async fn membership(store: &dyn Store, owner: mapwright_store::Actor, who: mapwright_store::Actor, site: i64) -> i64 {
    let members = store.list_members(owner, site).await.unwrap();
    members.into_iter().find(|m| m.user_id == who.user_id).unwrap().id
}

/// Finding 1: owner Ann invites Bob as co-owner, Bob invites Carol as owner, Ann removes Bob;
/// Carol's invitation was Bob's to give, and goes with him.
#[tokio::test]
async fn a_removed_owner_s_invitation_cannot_be_accepted() {
    each_backend(|store| async move {
        let (ann, bob, site) = co_owned(&*store).await;
        let carol = user(&*store, "carol@example.com", false).await;
        let (_, carols) = store.create_invitation(bob, site, "carol@example.com", Role::Owner, T0, WEEK).await.unwrap();
        // Ann's own invitation of another address stays.
        let (dans, _) = store.create_invitation(ann, site, "dan@example.com", Role::Reader, T0, WEEK).await.unwrap();

        store.remove_member(ann, membership(&*store, ann, bob, site).await).await.unwrap();
        assert!(store.invitation_by_token(&carols, T0 + 1).await.unwrap().is_none(), "withdrawn with its sender");
        let accepted = store.accept_invitation(carol, &carols, T0 + 1).await;
        assert!(matches!(accepted, Err(Error::NotFound { .. } | Error::Forbidden(_))), "{accepted:?}");
        assert!(matches!(store.site(carol, site).await, Err(Error::NotFound { .. })), "Carol is no member");
        assert_eq!(store.list_invitations(ann, site, T0 + 1).await.unwrap(), vec![dans]);
    })
    .await;
}

/// An owner who leaves by himself takes his pending invitations with him: their links are
/// refused.
#[tokio::test]
async fn an_owner_who_leaves_takes_his_invitations_with_him() {
    each_backend(|store| async move {
        let (ann, bob, site) = co_owned(&*store).await;
        let carol = user(&*store, "carol@example.com", false).await;
        let (_, token) = store.create_invitation(bob, site, "carol@example.com", Role::Reader, T0, WEEK).await.unwrap();
        store.remove_member(bob, membership(&*store, ann, bob, site).await).await.unwrap();
        assert!(store.accept_invitation(carol, &token, T0 + 1).await.is_err());
        assert!(store.list_invitations(ann, site, T0 + 1).await.unwrap().is_empty());
    })
    .await;
}

/// Removing a member ends everything that member set up or holds for the site, at once.
#[tokio::test]
async fn removing_a_member_ends_their_webhooks_alert_link_and_domain_grant() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let site = verified_site(&*store, ann, "https://www.ann.example").await;
        let other = verified_site(&*store, ann, "https://other.example").await;
        join(&*store, ann, (bob, "bob@example.com"), site, Role::Owner).await;
        join(&*store, ann, (bob, "bob@example.com"), other, Role::Owner).await;
        let anns = store.create_webhook(ann, site, "https://a.example/h", "k", BOTH, T0).await.unwrap();
        let bobs = store.create_webhook(bob, site, "https://b.example/h", "k", BOTH, T0).await.unwrap();
        let bobs_other = store.create_webhook(bob, other, "https://b.example/o", "k", BOTH, T0).await.unwrap();
        for h in [&anns, &bobs, &bobs_other] {
            store.record_webhook_handshake(h.id, true, T0).await.unwrap();
        }
        let domain = store.create_domain(bob, "ann.example", T0).await.unwrap();
        store.record_domain_verification(domain.id, true, T0).await.unwrap();
        let recipients = store.claim_alert_recipients(site, T0, DAY).await.unwrap();
        let bobs_link = recipients.iter().find(|r| r.user_id == bob.user_id).unwrap().token.clone();
        assert!(store.alert_link(&bobs_link, None).await.unwrap().unwrap().enabled);
        assert!(store.site_by_id(site).await.unwrap().last_checked_at.is_some());

        store.remove_member(ann, membership(&*store, ann, bob, site).await).await.unwrap();

        let left: Vec<i64> = store.list_webhooks(ann, site).await.unwrap().iter().map(|w| w.id).collect();
        assert_eq!(left, vec![anns.id], "Bob's webhook on the site is gone");
        assert_eq!(store.list_webhooks(ann, other).await.unwrap().len(), 1, "his webhook of the other site stays");
        let queued = store.enqueue_webhook_event(site, "read.completed", "{}", None, T0 + 1).await.unwrap();
        assert_eq!(queued.queued, 1, "only Ann's endpoint receives the site's events");
        assert!(store.alert_link(&bobs_link, Some(true)).await.unwrap().is_none(), "his unsubscribe link is dead");
        assert!(store.alert_link(&bobs_link, None).await.unwrap().is_none());
        let site_now = store.site_by_id(site).await.unwrap();
        assert_eq!(site_now.last_checked_at, None, "verification through his domain is judged again at once");
        assert!(site_now.verified_at.is_some(), "until the service re-judges it");
    })
    .await;
}

/// A site passes to the next owner only within that owner's caps.
#[tokio::test]
async fn a_site_handed_to_another_owner_respects_that_owner_s_cap() {
    each_backend(|store| async move {
        let (ann, bob, site) = co_owned(&*store).await;
        let mut bobs = Vec::new();
        for n in 0..MAX_SITES_PER_USER {
            bobs.push(verified_site(&*store, bob, &format!("https://b{n}.example")).await);
        }
        let anns = membership(&*store, ann, ann, site).await;
        let refused = store.remove_member(ann, anns).await;
        assert!(matches!(refused, Err(Error::Quota(_))), "{refused:?}");
        assert_eq!(store.site(ann, site).await.unwrap().owner_id, ann.user_id, "nothing changed");
        store.delete_site(bob, bobs[0]).await.unwrap();
        store.remove_member(ann, anns).await.unwrap();
        assert_eq!(store.site(bob, site).await.unwrap().owner_id, bob.user_id);
    })
    .await;
}

/// Finding 5: two senders (two processes) re-inviting one address: the address receives at
/// most the cap a day, and holds at most the cap of pending invitations.
#[tokio::test]
async fn invitations_are_capped_per_address_across_senders_and_processes() {
    each_backend_pair(|a, b| async move {
        let ann = user(&*a, "ann@example.com", false).await;
        let eve = user(&*b, "eve@example.com", false).await;
        let ann_site = verified_site(&*a, ann, "https://ann.example").await;
        let eve_site = verified_site(&*b, eve, "https://eve.example").await;
        let mut sent = 0;
        for n in 0..20 {
            let (store, actor, site) = if n % 2 == 0 { (&a, ann, ann_site) } else { (&b, eve, eve_site) };
            match store.create_invitation(actor, site, "victim@example.com", Role::Reader, T0 + n, WEEK).await {
                Ok(_) => sent += 1,
                Err(Error::Quota(why)) => assert!(why.contains("victim@example.com"), "{why}"),
                Err(e) => panic!("{e:?}"),
            }
        }
        assert_eq!(sent, MAX_INVITATIONS_PER_ADDRESS, "across both senders and both processes");
        // Another address is not affected.
        a.create_invitation(ann, ann_site, "friend@example.com", Role::Reader, T0, WEEK).await.unwrap();

        // Pending invitations of one address on many sites, a day's cap at a time.
        let mut sites = Vec::new();
        for n in 0..MAX_PENDING_INVITATIONS_PER_ADDRESS + 1 {
            sites.push(verified_site(&*a, ann, &format!("https://s{n}.example")).await);
        }
        let mut day = 1;
        let mut pending = 0;
        for &site in &sites[..MAX_PENDING_INVITATIONS_PER_ADDRESS as usize] {
            let at = T0 + day * DAY + 1;
            match a.create_invitation(ann, site, "many@example.com", Role::Reader, at, 30 * DAY).await {
                Ok(_) => pending += 1,
                Err(e) => panic!("{e:?}"),
            }
            if pending % MAX_INVITATIONS_PER_ADDRESS == 0 {
                day += 1;
            }
        }
        let over = a
            .create_invitation(
                ann,
                *sites.last().unwrap(),
                "many@example.com",
                Role::Reader,
                T0 + (day + 1) * DAY,
                WEEK,
            )
            .await;
        assert!(matches!(&over, Err(Error::Quota(why)) if why.contains("waiting")), "{over:?}");
    })
    .await;
}

/// Finding 3: an endpoint receives nothing before it has answered its handshake, and its log
/// says why; answered, it receives.
#[tokio::test]
async fn an_endpoint_receives_events_only_after_its_handshake() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let hook = store.create_webhook(ann, site, "https://victim.example/", "k", BOTH, T0).await.unwrap();
        assert_eq!(hook.state(T0), "unverified");
        let queued = store.enqueue_webhook_event(site, "read.completed", "{}", None, T0).await.unwrap();
        assert_eq!((queued.queued, queued.dropped), (0, 1));
        let log = store.webhook_attempts(ann, hook.id, 10).await.unwrap();
        assert!(log[0].error.as_deref().unwrap().contains("handshake"), "{log:?}");
        assert!(store.lease_webhook_deliveries("w", T0 + 1, 60, 10).await.unwrap().is_empty());

        store.record_webhook_handshake(hook.id, false, T0).await.unwrap();
        assert_eq!(store.webhook(ann, hook.id).await.unwrap().state(T0), "unverified");
        assert_eq!(store.webhook_target(hook.id).await.unwrap(), Some(("https://victim.example/".into(), "k".into())));
        store.record_webhook_handshake(hook.id, true, T0).await.unwrap();
        assert_eq!(store.webhook(ann, hook.id).await.unwrap().state(T0), "active");
        store.enqueue_webhook_event(site, "read.completed", "{}", None, T0).await.unwrap();
        assert_eq!(store.lease_webhook_deliveries("w", T0 + 1, 60, 10).await.unwrap().len(), 1);
    })
    .await;
}

/// Finding 4: one account's many endpoints (dead or busy) hold the queue; another account's
/// delivery is leased in the first round all the same.
#[tokio::test]
async fn accounts_take_turns_in_the_delivery_queue() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let mut anns = Vec::new();
        for s in 0..3 {
            let site = verified_site(&*store, ann, &format!("https://ann{s}.example")).await;
            for n in 0..10 {
                let h = store.create_webhook(ann, site, &format!("https://dead.example/{s}/{n}"), "k", BOTH, T0).await;
                store.record_webhook_handshake(h.unwrap().id, true, T0).await.unwrap();
            }
            for _ in 0..5 {
                store.enqueue_webhook_event(site, "read.completed", "{}", None, T0).await.unwrap();
            }
            anns.push(site);
        }
        let bobs = verified_site(&*store, bob, "https://bob.example").await;
        let h = store.create_webhook(bob, bobs, "https://bob.example/h", "k", BOTH, T0).await.unwrap();
        store.record_webhook_handshake(h.id, true, T0).await.unwrap();
        // Bob's event comes last, later than all of Ann's.
        store.enqueue_webhook_event(bobs, "read.completed", "{}", None, T0 + 5).await.unwrap();

        let first = store.lease_webhook_deliveries("w", T0 + 10, 60, 4).await.unwrap();
        assert_eq!(first.len(), 4);
        assert!(first.iter().any(|d| d.webhook_id == h.id), "Bob's delivery is in the first round");
        let mut endpoints: Vec<i64> = first.iter().map(|d| d.webhook_id).collect();
        endpoints.dedup();
        assert_eq!(endpoints.len(), 4, "one delivery per endpoint in flight");
    })
    .await;
}

/// A dead endpoint backs off alone, is disabled after failing long enough (its queue dropped,
/// its creator told once across processes), and comes back through its handshake.
#[tokio::test]
async fn a_dead_endpoint_backs_off_alone_and_is_disabled_with_its_creator_told() {
    each_backend_pair(|a, b| async move {
        let ann = user(&*a, "ann@example.com", false).await;
        let site = verified_site(&*a, ann, "https://ann.example").await;
        let dead = a.create_webhook(ann, site, "https://dead.example/", "k", BOTH, T0).await.unwrap();
        let live = a.create_webhook(ann, site, "https://live.example/", "k", BOTH, T0).await.unwrap();
        for h in [&dead, &live] {
            a.record_webhook_handshake(h.id, true, T0).await.unwrap();
        }
        let mut now = T0;
        for failures in 1..=WEBHOOK_FAILURES_TO_DISABLE {
            a.enqueue_webhook_event(site, "read.completed", "{}", None, now).await.unwrap();
            let leased = a.lease_webhook_deliveries("w", now, 60, 10).await.unwrap();
            let d = leased.iter().find(|d| d.webhook_id == dead.id).expect("the dead endpoint's turn");
            let fail = AttemptRecord {
                at: now,
                status_code: None,
                error: Some("could not connect".into()),
                duration_ms: 10_000,
                retry_at: Some(now + webhook_backoff(failures)),
            };
            a.finish_webhook_attempt("w", d, &fail).await.unwrap();
            for d in leased.iter().filter(|d| d.webhook_id == live.id) {
                let ok = AttemptRecord { at: now, status_code: Some(200), error: None, duration_ms: 1, retry_at: None };
                a.finish_webhook_attempt("w", d, &ok).await.unwrap();
            }
            if failures < WEBHOOK_FAILURES_TO_DISABLE {
                let paused = a.webhook(ann, dead.id).await.unwrap();
                assert_eq!((paused.failures, paused.state(now + 1)), (failures, "paused"));
                // Paused: the live endpoint still gets its deliveries, the dead one none.
                a.enqueue_webhook_event(site, "read.completed", "{}", None, now + 1).await.unwrap();
                let during = a.lease_webhook_deliveries("w", now + 1, 60, 10).await.unwrap();
                assert_eq!(during.iter().map(|d| d.webhook_id).collect::<Vec<_>>(), vec![live.id]);
                let ok =
                    AttemptRecord { at: now + 1, status_code: Some(200), error: None, duration_ms: 1, retry_at: None };
                a.finish_webhook_attempt("w", &during[0], &ok).await.unwrap();
                now += webhook_backoff(failures);
            }
        }
        let disabled = a.webhook(ann, dead.id).await.unwrap();
        assert_eq!(disabled.state(now), "disabled");
        assert!(disabled.disabled_reason.as_deref().unwrap().contains("verify"));
        assert_eq!(a.webhook(ann, live.id).await.unwrap().state(now), "active");
        let queued = a.enqueue_webhook_event(site, "read.completed", "{}", None, now + 1).await.unwrap();
        assert_eq!((queued.queued, queued.dropped), (1, 1), "nothing queued for the disabled endpoint, and said");
        assert!(
            a.lease_webhook_deliveries("w", now + 99_999, 60, 10)
                .await
                .unwrap()
                .iter()
                .all(|d| d.webhook_id == live.id)
        );

        let (x, y) = tokio::join!(a.claim_disabled_webhooks(now, 10), b.claim_disabled_webhooks(now, 10));
        let told: Vec<_> = x.unwrap().into_iter().chain(y.unwrap()).collect();
        assert_eq!(told.len(), 1, "told once: {told:?}");
        assert_eq!((told[0].id, told[0].email.as_str()), (dead.id, "ann@example.com"));
        assert!(a.claim_disabled_webhooks(now + 1, 10).await.unwrap().is_empty());

        // Verified again: it starts afresh.
        a.record_webhook_handshake(dead.id, true, now).await.unwrap();
        let back = a.webhook(ann, dead.id).await.unwrap();
        assert_eq!((back.failures, back.state(now)), (0, "active"));
    })
    .await;
}

/// A delivery the gate refuses for now goes back to the queue without counting as a failure.
#[tokio::test]
async fn a_postponed_delivery_waits_without_a_failure() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let h = store.create_webhook(ann, site, "https://h.example/", "k", BOTH, T0).await.unwrap();
        store.record_webhook_handshake(h.id, true, T0).await.unwrap();
        store.enqueue_webhook_event(site, "read.completed", "{}", None, T0).await.unwrap();
        let d = store.lease_webhook_deliveries("w", T0, 60, 10).await.unwrap().remove(0);
        assert!(!store.postpone_webhook_delivery("other", d.id, T0 + 5).await.unwrap(), "only the holder");
        assert!(store.postpone_webhook_delivery("w", d.id, T0 + 5).await.unwrap());
        assert!(store.lease_webhook_deliveries("w", T0 + 4, 60, 10).await.unwrap().is_empty());
        let again = store.lease_webhook_deliveries("w", T0 + 5, 60, 10).await.unwrap();
        assert_eq!((again[0].id, again[0].attempts), (d.id, 0));
        assert_eq!(store.webhook(ann, h.id).await.unwrap().failures, 0);
        assert!(store.webhook_attempts(ann, h.id, 10).await.unwrap().is_empty());
    })
    .await;
}
