//! E-mail alerts' store parts: a read that makes a sitemap's roll-up worse is told once (a
//! first verdict and an improvement never), the day's mail of each member is claimed once
//! across two stores on one database, owners are on and readers off by default, and an
//! unsubscribe token switches only its own member's alerts.

use mapwright_store::{DownloadRecord, Error, Role, Source, Store};

use crate::support::{T0, each_backend, each_backend_pair, user, verified_site};

const DAY: i64 = 86_400;

/// One read of sitemap `id` ending with `status`, as the scheduler records it.
async fn read(store: &dyn Store, id: i64, status: &str, at: i64) {
    let leased = store.lease_due_sitemaps("w", at, 10, 60).await.unwrap();
    assert!(leased.iter().any(|l| l.id == id), "sitemap {id} due at {at}");
    let record = DownloadRecord { downloaded_at: at, status: status.into(), ..DownloadRecord::default() };
    store.complete("w", id, &record, at).await.unwrap();
}

fn changes(worse: &[mapwright_store::Worsening]) -> Vec<(String, String)> {
    worse.iter().map(|w| (w.from.clone(), w.to.clone())).collect()
}

#[tokio::test]
async fn a_worse_read_is_told_once_and_a_first_read_or_a_better_one_never() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let s = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
        let pair = |a: &str, b: &str| vec![(a.to_owned(), b.to_owned())];

        // The first verdict, however bad, is no worsening: nothing was judged before.
        read(&*store, s, "errors", T0).await;
        assert!(store.alert_worsenings(s).await.unwrap().is_empty());
        read(&*store, s, "ok", T0 + 1).await;
        assert!(store.alert_worsenings(s).await.unwrap().is_empty(), "better is no alert");
        read(&*store, s, "warnings", T0 + 2).await;
        let worse = store.alert_worsenings(s).await.unwrap();
        assert_eq!(changes(&worse), pair("ok", "warnings"));
        assert_eq!(
            (worse[0].sitemap_id, worse[0].url.as_str(), worse[0].is_index),
            (s, "https://ann.example/s.xml", false)
        );
        assert!(store.alert_worsenings(s).await.unwrap().is_empty(), "told once");
        read(&*store, s, "failed", T0 + 3).await;
        assert_eq!(changes(&store.alert_worsenings(s).await.unwrap()), pair("warnings", "failed"));
        // A 304 keeps the verdict it stands for: no change.
        read(&*store, s, "unchanged", T0 + 4).await;
        assert!(store.alert_worsenings(s).await.unwrap().is_empty());

        // Pending (removed and added again) is outside the order: the next verdict is
        // compared with the one before it.
        read(&*store, s, "ok", T0 + 5).await;
        assert!(store.alert_worsenings(s).await.unwrap().is_empty());
        store.remove_sitemap(ann, s, T0 + 6).await.unwrap();
        assert!(store.alert_worsenings(s).await.unwrap().is_empty());
        store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0 + 7).await.unwrap();
        assert!(store.alert_worsenings(s).await.unwrap().is_empty());
        read(&*store, s, "errors", T0 + 8).await;
        assert_eq!(changes(&store.alert_worsenings(s).await.unwrap()), pair("ok", "errors"));
    })
    .await;
}

#[tokio::test]
async fn two_processes_tell_a_worsening_and_claim_a_days_mail_once() {
    each_backend_pair(|a, b| async move {
        let ann = user(&*a, "ann@example.com", false).await;
        let bob = user(&*a, "bob@example.com", false).await;
        let eve = user(&*a, "eve@example.com", false).await;
        let site = verified_site(&*a, ann, "https://ann.example").await;
        let (_, token) = a.create_invitation(ann, site, "bob@example.com", Role::Reader, T0, DAY).await.unwrap();
        a.accept_invitation(bob, &token, T0).await.unwrap();
        let s = a.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap().id;
        read(&*a, s, "ok", T0).await;
        assert!(a.alert_worsenings(s).await.unwrap().is_empty());
        read(&*a, s, "errors", T0 + 1).await;
        let (x, y) = tokio::join!(a.alert_worsenings(s), b.alert_worsenings(s));
        assert_eq!(x.unwrap().len() + y.unwrap().len(), 1, "one of the two tells it");

        // Owners are on by default, readers off; both at once claim Ann's mail once.
        assert_eq!(
            (a.alert_setting(ann, site).await.unwrap().enabled, a.alert_setting(bob, site).await.unwrap().enabled),
            (true, false)
        );
        let (x, y) =
            tokio::join!(a.claim_alert_recipients(site, T0 + 2, DAY), b.claim_alert_recipients(site, T0 + 2, DAY));
        let claimed: Vec<String> = x.unwrap().into_iter().chain(y.unwrap()).map(|r| r.email).collect();
        assert_eq!(claimed, ["ann@example.com"]);
        assert!(a.claim_alert_recipients(site, T0 + 3, DAY).await.unwrap().is_empty(), "one a day");

        // Bob turns them on: his day is his own.
        let setting = a.set_alerts(bob, site, true).await.unwrap();
        assert!(setting.enabled && setting.chosen);
        let bob_mail = a.claim_alert_recipients(site, T0 + 4, DAY).await.unwrap();
        assert_eq!(bob_mail.iter().map(|r| r.email.as_str()).collect::<Vec<_>>(), ["bob@example.com"]);
        let ann_mail = b.claim_alert_recipients(site, T0 + 2 + DAY, DAY).await.unwrap();
        assert_eq!(ann_mail.iter().map(|r| r.email.as_str()).collect::<Vec<_>>(), ["ann@example.com"]);
        let ann_token = ann_mail[0].token.clone();
        assert_eq!(ann_token.len(), 64);

        // Ann's link turns hers off, however often, and touches nothing else; a forged token
        // is unknown.
        for _ in 0..2 {
            let link = b.alert_link(&ann_token, Some(false)).await.unwrap().unwrap();
            assert_eq!(
                (link.site_id, link.origin.as_str(), link.email.as_str(), link.enabled),
                (site, "https://ann.example", "ann@example.com", false)
            );
        }
        let mut forged = ann_token.clone();
        forged.replace_range(..1, if forged.starts_with('0') { "1" } else { "0" });
        assert!(a.alert_link(&forged, Some(false)).await.unwrap().is_none());
        assert!(a.alert_link(&bob_mail[0].token, None).await.unwrap().unwrap().enabled, "Bob's alerts stay on");
        let next_day = a.claim_alert_recipients(site, T0 + 4 + DAY, DAY).await.unwrap();
        assert_eq!(next_day.iter().map(|r| r.email.as_str()).collect::<Vec<_>>(), ["bob@example.com"]);
        let setting = a.alert_setting(ann, site).await.unwrap();
        assert!(!setting.enabled && setting.chosen);
        // The link turns them back on too.
        assert!(a.alert_link(&ann_token, Some(true)).await.unwrap().unwrap().enabled);

        // A stranger's site is not found; an admin who is no member is mailed nothing.
        assert!(matches!(a.alert_setting(eve, site).await, Err(Error::NotFound { .. })));
        assert!(matches!(a.set_alerts(eve, site, true).await, Err(Error::NotFound { .. })));
        let admin = user(&*a, "root@example.com", true).await;
        assert!(!a.alert_setting(admin, site).await.unwrap().enabled);
        assert!(matches!(a.set_alerts(admin, site, true).await, Err(Error::Refused(_))));
    })
    .await;
}
