//! Domain properties: one claim per user and name, a stranger's is not found, the cap holds,
//! a look-up's outcome is recorded, re-check passes claim properties, and the properties that
//! may cover a site are its owners' verified ones only.

use mapwright_store::{Error, MAX_DOMAINS_PER_USER, Role};

use crate::support::{T0, each_backend, user};

#[tokio::test]
async fn a_users_domain_properties() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let admin = user(&*store, "root@example.com", true).await;
        let d = store.create_domain(ann, "example.com", T0).await.unwrap();
        assert_eq!(
            (d.user_id, d.domain.as_str(), d.verified_at, d.last_checked_at),
            (ann.user_id, "example.com", None, None)
        );
        assert_eq!(d.verification_token.len(), 32);
        assert!(matches!(store.create_domain(ann, "example.com", T0).await, Err(Error::Conflict(_))));
        // Another user claims the same name with a token of their own.
        let b = store.create_domain(bob, "example.com", T0).await.unwrap();
        assert_ne!(b.verification_token, d.verification_token);

        assert_eq!(store.domain(ann, d.id).await.unwrap(), d);
        assert!(matches!(store.domain(bob, d.id).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.delete_domain(bob, d.id).await, Err(Error::NotFound { .. })));
        assert_eq!(store.list_domains(ann).await.unwrap(), vec![d.clone()]);
        assert_eq!(store.list_domains(admin).await.unwrap().len(), 2);

        store.record_domain_verification(d.id, true, T0 + 5).await.unwrap();
        store.record_domain_verification(d.id, true, T0 + 9).await.unwrap();
        let seen = store.domain(ann, d.id).await.unwrap();
        assert_eq!((seen.verified_at, seen.last_checked_at), (Some(T0 + 5), Some(T0 + 9)), "first seen kept");
        store.record_domain_verification(d.id, false, T0 + 10).await.unwrap();
        assert_eq!(store.domain(ann, d.id).await.unwrap().verified_at, None);

        store.delete_domain(ann, d.id).await.unwrap();
        assert!(matches!(store.domain(ann, d.id).await, Err(Error::NotFound { .. })));
        // Ids are never reused.
        let again = store.create_domain(ann, "example.com", T0).await.unwrap();
        assert!(again.id > b.id);
    })
    .await;
}

#[tokio::test]
async fn a_user_has_at_most_the_cap_of_properties() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        for i in 0..MAX_DOMAINS_PER_USER {
            store.create_domain(ann, &format!("d{i}.example"), T0).await.unwrap();
        }
        assert!(matches!(store.create_domain(ann, "one-more.example", T0).await, Err(Error::Quota(_))));
    })
    .await;
}

#[tokio::test]
async fn passes_claim_properties_not_looked_up_lately() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let a = store.create_domain(ann, "a.example", T0).await.unwrap();
        let b = store.create_domain(ann, "b.example", T0).await.unwrap();
        store.record_domain_verification(b.id, true, T0 + 100).await.unwrap();
        let due = store.domains_to_verify(T0 + 50, T0 + 200, 10).await.unwrap();
        assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), vec![a.id], "b was looked up after the cut");
        // Claimed: a second pass at once takes nothing.
        assert!(store.domains_to_verify(T0 + 50, T0 + 200, 10).await.unwrap().is_empty());
        let due = store.domains_to_verify(T0 + 1000, T0 + 1000, 1).await.unwrap();
        assert_eq!(due.len(), 1, "the limit holds");
    })
    .await;
}

#[tokio::test]
async fn only_the_owners_verified_properties_may_cover_a_site() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let eve = user(&*store, "eve@example.com", false).await;
        let site = store.create_site(ann, "https://www.example.com", T0).await.unwrap();
        let other = store.create_site(bob, "https://bob.example.com", T0).await.unwrap();
        let ann_d = store.create_domain(ann, "example.com", T0).await.unwrap();
        let eve_d = store.create_domain(eve, "example.com", T0).await.unwrap();
        store.record_domain_verification(eve_d.id, true, T0).await.unwrap();
        assert!(store.verified_domains_of_site_owners(site.id).await.unwrap().is_empty(), "Eve's claim is not Ann's");
        store.record_domain_verification(ann_d.id, true, T0).await.unwrap();
        let covering = store.verified_domains_of_site_owners(site.id).await.unwrap();
        assert_eq!(covering.iter().map(|d| d.id).collect::<Vec<_>>(), vec![ann_d.id]);

        // A reader's property does not cover the site; an owner's does.
        let bob_d = store.create_domain(bob, "www.example.com", T0).await.unwrap();
        store.record_domain_verification(bob_d.id, true, T0).await.unwrap();
        let (_, token) =
            store.create_invitation(ann, site.id, "bob@example.com", Role::Reader, T0, 86_400).await.unwrap();
        store.accept_invitation(bob, &token, T0).await.unwrap();
        assert_eq!(store.verified_domains_of_site_owners(site.id).await.unwrap().len(), 1);
        let carol = user(&*store, "carol@example.com", false).await;
        let carol_d = store.create_domain(carol, "www.example.com", T0).await.unwrap();
        store.record_domain_verification(carol_d.id, true, T0).await.unwrap();
        let (_, token) =
            store.create_invitation(ann, site.id, "carol@example.com", Role::Owner, T0, 86_400).await.unwrap();
        store.accept_invitation(carol, &token, T0).await.unwrap();
        let covering = store.verified_domains_of_site_owners(site.id).await.unwrap();
        assert_eq!(covering.iter().map(|d| d.id).collect::<Vec<_>>(), vec![ann_d.id, carol_d.id]);

        assert_eq!(
            store.sites_owned_by(ann.user_id).await.unwrap().iter().map(|s| s.id).collect::<Vec<_>>(),
            vec![site.id]
        );
        assert_eq!(
            store.sites_owned_by(carol.user_id).await.unwrap().iter().map(|s| s.id).collect::<Vec<_>>(),
            vec![site.id]
        );
        assert_eq!(
            store.sites_owned_by(bob.user_id).await.unwrap().iter().map(|s| s.id).collect::<Vec<_>>(),
            vec![other.id],
            "a reader owns nothing of Ann's"
        );
        assert!(store.sites_owned_by(eve.user_id).await.unwrap().is_empty());
    })
    .await;
}
