//! Several users per site: an owner invites by address, the invitee accepts with the link's
//! token (signed in as that address), a reader sees everything and changes nothing, members
//! are removed but never the last owner, and the caps hold.

use mapwright_store::{Error, MAX_MEMBERS_PER_SITE, Retention, Role, Source, UrlQuery};

use crate::support::{T0, each_backend, user, verified_site};

const DAY: i64 = 86_400;

#[tokio::test]
async fn an_invited_reader_sees_the_site_and_changes_nothing() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let eve = user(&*store, "eve@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let sitemap = store.add_sitemap(ann, site, "https://ann.example/s.xml", Source::Api, T0).await.unwrap();
        assert_eq!(store.site_role(ann, site).await.unwrap(), Role::Owner);
        assert!(matches!(store.site_role(bob, site).await, Err(Error::NotFound { .. })));

        // Bob is invited (the address in another case); Eve cannot use his link, nor can a reader invite.
        let (invitation, token) =
            store.create_invitation(ann, site, "Bob@Example.com", Role::Reader, T0, DAY).await.unwrap();
        assert_eq!(invitation.email, "bob@example.com");
        assert_eq!(store.list_invitations(ann, site, T0).await.unwrap(), vec![invitation.clone()]);
        let info = store.invitation_by_token(&token, T0).await.unwrap().unwrap();
        assert_eq!(
            (info.origin.as_str(), info.inviter_email.as_str(), info.role.as_str()),
            ("https://ann.example", "ann@example.com", "reader")
        );
        assert!(matches!(store.accept_invitation(eve, &token, T0).await, Err(Error::Forbidden(_))));
        assert!(matches!(
            store.create_invitation(bob, site, "eve@example.com", Role::Reader, T0, DAY).await,
            Err(Error::NotFound { .. })
        ));
        assert_eq!(store.accept_invitation(bob, &token, T0 + 1).await.unwrap().id, site);
        // Single use.
        assert!(store.invitation_by_token(&token, T0 + 2).await.unwrap().is_none());
        assert!(matches!(store.accept_invitation(bob, &token, T0 + 2).await, Err(Error::NotFound { .. })));
        assert!(store.list_invitations(ann, site, T0).await.unwrap().is_empty());

        // Bob reads everything of the site.
        assert_eq!(store.site_role(bob, site).await.unwrap(), Role::Reader);
        assert_eq!(store.list_sites(bob).await.unwrap().iter().map(|s| s.id).collect::<Vec<_>>(), vec![site]);
        assert_eq!(store.sitemap(bob, sitemap.id).await.unwrap().id, sitemap.id);
        assert_eq!(store.list_sitemaps(bob, site).await.unwrap().len(), 1);
        store.list_urls(bob, site, UrlQuery::default()).await.unwrap();
        assert_eq!(store.list_sitemap_summaries(bob, 0, 10).await.unwrap().items.len(), 1);
        // The roles of a list, in one read: each member's own, an admin owner of all, a stranger none.
        assert_eq!(store.site_roles(bob).await.unwrap().of(site), Role::Reader);
        assert_eq!(store.site_roles(ann).await.unwrap().of(site), Role::Owner);
        let root = user(&*store, "root@example.com", true).await;
        assert_eq!(store.site_roles(root).await.unwrap().of(site), Role::Owner);
        assert_eq!(store.list_sitemap_summaries(root, 0, 10).await.unwrap().items.len(), 1);
        assert!(store.list_sites(eve).await.unwrap().is_empty());
        assert!(store.list_sitemap_summaries(eve, 0, 10).await.unwrap().items.is_empty());
        let members = store.list_members(bob, site).await.unwrap();
        assert_eq!(
            members.iter().map(|m| (m.email.as_str(), m.role.as_str())).collect::<Vec<_>>(),
            vec![("ann@example.com", "owner"), ("bob@example.com", "reader")]
        );

        // ...and changes nothing.
        let forbidden = |r: Result<(), Error>| assert!(matches!(r, Err(Error::Forbidden(_))), "{r:?}");
        forbidden(store.add_sitemap(bob, site, "https://ann.example/t.xml", Source::Api, T0).await.map(|_| ()));
        forbidden(store.resubmit_sitemap(bob, sitemap.id, T0).await);
        forbidden(store.remove_sitemap(bob, sitemap.id, T0).await);
        forbidden(store.delete_site(bob, site).await);
        forbidden(store.site_as_owner(bob, site).await.map(|_| ()));
        forbidden(store.create_invitation(bob, site, "eve@example.com", Role::Reader, T0, DAY).await.map(|_| ()));
        forbidden(store.remove_member(bob, members[0].id).await);
        assert!(store.sitemap(ann, sitemap.id).await.unwrap().removed_at.is_none());
        assert_eq!(store.list_sitemaps(ann, site).await.unwrap().len(), 1);

        // Eve, no member, still sees nothing.
        assert!(matches!(store.list_members(eve, site).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.sitemap(eve, sitemap.id).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.remove_member(eve, members[1].id).await, Err(Error::NotFound { .. })));

        // Bob may leave by himself; then he sees nothing again.
        store.remove_member(bob, members[1].id).await.unwrap();
        assert!(matches!(store.site(bob, site).await, Err(Error::NotFound { .. })));
    })
    .await;
}

#[tokio::test]
async fn the_last_owner_stays_and_the_site_passes_to_another_owner() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        let anns = store.list_members(ann, site).await.unwrap()[0].clone();
        assert!(matches!(store.remove_member(ann, anns.id).await, Err(Error::Refused(_))));

        let (_, token) = store.create_invitation(ann, site, "bob@example.com", Role::Owner, T0, DAY).await.unwrap();
        store.accept_invitation(bob, &token, T0).await.unwrap();
        assert_eq!(store.site_role(bob, site).await.unwrap(), Role::Owner);
        // An owner removes the other owner (here: Bob removes Ann, who added the site).
        store.remove_member(bob, anns.id).await.unwrap();
        assert_eq!(store.site(bob, site).await.unwrap().owner_id, bob.user_id, "the site counts against Bob now");
        assert!(matches!(store.site(ann, site).await, Err(Error::NotFound { .. })));
        let bobs = store.list_members(bob, site).await.unwrap()[0].clone();
        assert!(matches!(store.remove_member(bob, bobs.id).await, Err(Error::Refused(_))));
        // A member's address cannot be invited again.
        assert!(matches!(
            store.create_invitation(bob, site, "bob@example.com", Role::Reader, T0, DAY).await,
            Err(Error::Conflict(_))
        ));
        store.delete_site(bob, site).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn invitations_expire_are_replaced_revoked_and_capped() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;

        let (_, old) = store.create_invitation(ann, site, "bob@example.com", Role::Reader, T0, DAY).await.unwrap();
        // Expired.
        assert!(matches!(store.accept_invitation(bob, &old, T0 + DAY).await, Err(Error::NotFound { .. })));
        // Invited again: the new link replaces the old one.
        let (again, new) =
            store.create_invitation(ann, site, "bob@example.com", Role::Owner, T0 + 10, DAY).await.unwrap();
        assert!(matches!(store.accept_invitation(bob, &old, T0 + 11).await, Err(Error::NotFound { .. })));
        store.revoke_invitation(ann, again.id).await.unwrap();
        assert!(matches!(store.accept_invitation(bob, &new, T0 + 12).await, Err(Error::NotFound { .. })));
        assert!(matches!(store.revoke_invitation(bob, again.id).await, Err(Error::NotFound { .. })));

        // Members and invitations together stay within the cap.
        for n in 1..MAX_MEMBERS_PER_SITE {
            store.create_invitation(ann, site, &format!("u{n}@example.com"), Role::Reader, T0, DAY).await.unwrap();
        }
        assert!(matches!(
            store.create_invitation(ann, site, "one-more@example.com", Role::Reader, T0, DAY).await,
            Err(Error::Quota(_))
        ));
        // Inviting a pending address again replaces its invitation, within the cap.
        store.create_invitation(ann, site, "u1@example.com", Role::Owner, T0, DAY).await.unwrap();
        assert!(matches!(
            store.create_invitation(ann, site, "not an address", Role::Reader, T0, DAY).await,
            Err(Error::InvalidEmail(_))
        ));
    })
    .await;
}

#[tokio::test]
async fn retention_sweeps_expired_invitations_and_keeps_live_ones() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://ann.example").await;
        store.create_invitation(ann, site, "old@example.com", Role::Reader, T0, DAY).await.unwrap();
        // (Made before the first expires: an invitation sweeps the site's expired ones.)
        let (live, _) =
            store.create_invitation(ann, site, "new@example.com", Role::Reader, T0 + 10, 2 * DAY).await.unwrap();
        let policy = Retention {
            keep_downloads: 50,
            ping_max_age: 7 * DAY,
            removed_url_max_age: 30 * DAY,
            unverified_site_max_age: 7 * DAY,
            batch: 500,
        };
        // A day and a second after the first: the first link expired, the second has not.
        let report = store.apply_retention(policy, T0 + DAY + 1).await.unwrap();
        assert_eq!(report.invitations, 1);
        assert_eq!(
            store.list_invitations(ann, site, T0).await.unwrap(),
            vec![live],
            "the expired row is gone, not only hidden"
        );
        assert_eq!(store.apply_retention(policy, T0 + DAY + 2).await.unwrap().invitations, 0);
    })
    .await;
}
