//! Every row a stranger's account can make the service store is bounded (issue 14): sign-ups
//! waiting for their link (one per address, all of them capped), sessions, API tokens, sites,
//! and the sitemaps of a site however deep its indexes nest.

use mapwright_store::{
    Error, IndexChild, MAX_API_TOKENS, MAX_PENDING_SIGNUPS, MAX_PENDING_SIGNUPS_PER_CLIENT,
    MAX_PENDING_SIGNUPS_PER_NETWORK, MAX_SESSIONS_PER_USER, MAX_SITEMAPS_PER_SITE, MAX_SITES_PER_USER, Requester,
    Retention, SignupRequest, Source, SqliteStore, Store,
};

use crate::support::{T0, each_backend, each_backend_pair, user, verified_site};

fn policy() -> Retention {
    let day = 24 * 3600;
    Retention {
        keep_downloads: 50,
        ping_max_age: 7 * day,
        removed_url_max_age: 30 * day,
        unverified_site_max_age: 7 * day,
        batch: 500,
    }
}

/// A requester: client `n` of network `net`.
fn from(net: &str, n: u32) -> Requester {
    Requester { client: format!("{net}.{n}"), network: net.to_owned() }
}

fn pending(request: SignupRequest) -> String {
    match request {
        SignupRequest::Pending(token) => token,
        SignupRequest::Taken => panic!("the address is free"),
    }
}

#[tokio::test]
async fn a_sign_up_waits_for_its_link_and_makes_the_account_once() {
    each_backend(|store| async move {
        let first =
            pending(store.request_signup("Ann@Example.com", "hash-1", &from("10.0.0", 1), T0, 3600).await.unwrap());
        assert_eq!(store.pending_signup(&first, T0).await.unwrap(), Some(("ann@example.com".into(), "hash-1".into())));
        assert!(store.user_credentials("ann@example.com").await.unwrap().is_none(), "no account before the link");
        // A new request from the same network replaces the old link and password.
        let second =
            pending(store.request_signup("ann@example.com", "hash-2", &from("10.0.0", 2), T0 + 1, 3600).await.unwrap());
        assert_ne!(first, second);
        assert_eq!(store.pending_signup(&first, T0 + 1).await.unwrap(), None);
        assert_eq!(store.confirm_signup(&first, T0 + 1).await.unwrap(), None);
        assert_eq!(store.pending_signup(&second, T0 + 1).await.unwrap().unwrap().1, "hash-2");
        // Expired: gone for good.
        assert_eq!(store.pending_signup(&second, T0 + 3601).await.unwrap(), None);
        let user = store.confirm_signup(&second, T0 + 2).await.unwrap().expect("the account");
        assert_eq!((user.email.as_str(), user.is_admin), ("ann@example.com", false));
        assert_eq!(store.user_credentials("ann@example.com").await.unwrap().unwrap().1, "hash-2");
        assert_eq!(store.confirm_signup(&second, T0 + 3).await.unwrap(), None, "a link makes one account");
        // A taken address stores nothing.
        assert_eq!(
            store.request_signup("ANN@example.com", "hash-3", &from("10.0.0", 1), T0 + 4, 3600).await.unwrap(),
            SignupRequest::Taken
        );
        assert_eq!(store.user_credentials("ann@example.com").await.unwrap().unwrap().1, "hash-2");

        // Retention deletes sign-ups whose link expired.
        let stale = pending(store.request_signup("bob@example.com", "h", &from("10.0.0", 1), T0, 60).await.unwrap());
        let report = store.apply_retention(policy(), T0 + 61).await.unwrap();
        assert_eq!(report.signups, 1);
        assert_eq!(store.pending_signup(&stale, T0).await.unwrap(), None);
    })
    .await;
}

#[tokio::test]
async fn pending_sign_ups_are_capped_for_every_address_alike() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_dir(dir.path()).await.unwrap();
    store.create_user("taken@example.com", "h", false, T0).await.unwrap();
    // Fill the table to the cap directly, as a flood of made-up addresses would.
    let pool =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("mapwright.db").display())).await.unwrap();
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) \
         INSERT INTO signups (email, network, client, password_hash, token_hash, created_at, expires_at) \
         SELECT 'flood' || i || '@example.com', 'net' || i, 'client' || i, 'h', 'token' || i, $2, $3 FROM n",
    )
    .bind(MAX_PENDING_SIGNUPS)
    .bind(T0)
    .bind(T0 + 3600)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    // Refused alike for a free and a taken address: even a full table tells no account apart.
    for email in ["free@example.com", "taken@example.com"] {
        assert!(
            matches!(store.request_signup(email, "h", &from("10.0.0", 1), T0 + 1, 3600).await, Err(Error::Quota(_))),
            "{email}"
        );
    }
    // Once they expire, there is room again.
    let request = store.request_signup("free@example.com", "h", &from("10.0.0", 1), T0 + 3600, 3600).await.unwrap();
    assert!(matches!(request, SignupRequest::Pending(_)));
}

/// Issue 24: a stranger asking again and again for someone's address replaces only the
/// stranger's own link: the owner, from another network, gets a link of their own that the
/// stranger's later requests leave alone, and the owner's confirmation ends the stranger's.
#[tokio::test]
async fn a_strangers_requests_never_replace_the_owners_link() {
    each_backend(|store| async move {
        let stranger = from("198.51.100", 7);
        let first = pending(store.request_signup("ann@example.com", "strangers", &stranger, T0, 3600).await.unwrap());
        let owners = pending(
            store.request_signup("ann@example.com", "owners", &from("203.0.113", 1), T0 + 1, 3600).await.unwrap(),
        );
        for n in 0..5 {
            pending(store.request_signup("ann@example.com", "strangers", &stranger, T0 + 2 + n, 3600).await.unwrap());
        }
        assert_eq!(store.pending_signup(&first, T0 + 10).await.unwrap(), None, "the stranger replaced only their own");
        assert_eq!(
            store.pending_signup(&owners, T0 + 10).await.unwrap(),
            Some(("ann@example.com".into(), "owners".into())),
            "the owner's link holds"
        );
        let user = store.confirm_signup(&owners, T0 + 11).await.unwrap().expect("the owner's account");
        assert_eq!(user.email, "ann@example.com");
        let report = store.apply_retention(policy(), T0 + 3601).await.unwrap();
        assert_eq!(report.signups, 0, "the stranger's row went with the confirmation, not later with retention");
    })
    .await;
}

/// Issue 24: the pending sign-ups one client and one network may hold are capped below the
/// total, so one stranger cannot fill what every newcomer needs; another network is served.
#[tokio::test]
async fn pending_sign_ups_are_capped_per_client_and_per_network() {
    each_backend(|store| async move {
        let client = from("198.51.100", 1);
        for n in 0..MAX_PENDING_SIGNUPS_PER_CLIENT {
            pending(store.request_signup(&format!("a{n}@example.com"), "h", &client, T0, 3600).await.unwrap());
        }
        let refused = store.request_signup("one-more@example.com", "h", &client, T0, 3600).await;
        assert!(matches!(refused, Err(Error::Quota(_))), "{refused:?}");
        // Asking again for an address it holds replaces, so it is not refused.
        pending(store.request_signup("a0@example.com", "h", &client, T0 + 1, 3600).await.unwrap());
        // Other clients of the network, up to the network's cap.
        let mut n = 1;
        let mut held = MAX_PENDING_SIGNUPS_PER_CLIENT;
        while held < MAX_PENDING_SIGNUPS_PER_NETWORK {
            n += 1;
            let email = format!("b{held}@example.com");
            pending(store.request_signup(&email, "h", &from("198.51.100", n), T0, 3600).await.unwrap());
            held += 1;
        }
        let refused = store.request_signup("c@example.com", "h", &from("198.51.100", 99), T0, 3600).await;
        assert!(matches!(refused, Err(Error::Quota(_))), "the network is full: {refused:?}");
        pending(store.request_signup("c@example.com", "h", &from("203.0.113", 1), T0, 3600).await.unwrap());
        // Expired rows count no more.
        pending(store.request_signup("d@example.com", "h", &client, T0 + 3600, 3600).await.unwrap());
    })
    .await;
}

/// Issue 24 (and 20 item 4): a limit kept in the store holds for every process on it: two
/// handles on one database share the count; a window restarts when it has ended; retention
/// deletes old windows.
#[tokio::test]
async fn shared_limits_count_across_handles_and_windows() {
    each_backend_pair(|a, b| async move {
        assert_eq!(a.count_event("test", "k", 2, 60, T0).await.unwrap(), None);
        assert_eq!(b.count_event("test", "k", 2, 60, T0 + 10).await.unwrap(), None, "the other process");
        assert_eq!(a.count_event("test", "k", 2, 60, T0 + 20).await.unwrap(), Some(40), "over: 40 s left");
        assert_eq!(b.count_event("test", "k", 2, 60, T0 + 20).await.unwrap(), Some(40), "over in both");
        assert_eq!(a.count_event("test", "other", 2, 60, T0 + 20).await.unwrap(), None, "per key");
        assert_eq!(a.count_event("other", "k", 2, 60, T0 + 20).await.unwrap(), None, "per scope");
        assert_eq!(b.count_event("test", "k", 2, 60, T0 + 60).await.unwrap(), None, "a new window");
        let report = a.apply_retention(policy(), T0 + 2 * 24 * 3600).await.unwrap();
        assert_eq!(report.limits, 3);
        a.health(T0).await.unwrap();
        b.health(T0 + 1).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn sessions_tokens_and_sites_per_user_are_capped() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        // Sessions: the newest are kept, the oldest end.
        let mut sessions = Vec::new();
        for n in 0..MAX_SESSIONS_PER_USER + 2 {
            sessions.push(store.create_session(ann.user_id, T0 + n, 3600).await.unwrap());
        }
        assert!(store.session_user(&sessions[0], T0 + 200).await.unwrap().is_none(), "the oldest ended");
        assert!(store.session_user(&sessions[1], T0 + 200).await.unwrap().is_none());
        assert!(store.session_user(&sessions[2], T0 + 200).await.unwrap().is_some());
        assert!(store.session_user(sessions.last().unwrap(), T0 + 200).await.unwrap().is_some());

        // Tokens: revoked ones count until retention deletes them a week later.
        let mut first = None;
        for n in 0..MAX_API_TOKENS {
            let (token, _) = store.create_api_token(ann, &format!("t{n}"), T0).await.unwrap();
            first.get_or_insert(token.id);
        }
        assert!(matches!(store.create_api_token(ann, "one more", T0).await, Err(Error::Quota(_))));
        store.revoke_api_token(ann, first.unwrap(), T0).await.unwrap();
        assert!(matches!(store.create_api_token(ann, "one more", T0 + 1).await, Err(Error::Quota(_))));
        let report = store.apply_retention(policy(), T0 + 8 * 24 * 3600).await.unwrap();
        assert_eq!(report.tokens, 1);
        store.create_api_token(ann, "one more", T0 + 8 * 24 * 3600).await.unwrap();
        let bob = user(&*store, "bob@example.com", false).await;
        store.create_api_token(bob, "bob's", T0).await.expect("another user's cap is their own");

        // Sites: verified ones count too.
        for n in 0..MAX_SITES_PER_USER {
            verified_site(&*store, ann, &format!("https://s{n}.example")).await;
        }
        match store.create_site(ann, "https://one-more.example", T0).await {
            Err(Error::Quota(why)) => assert!(why.contains(&MAX_SITES_PER_USER.to_string()), "{why}"),
            other => panic!("{other:?}"),
        }
        store.create_site(bob, "https://one-more.example", T0).await.expect("bob's own cap");
    })
    .await;
}

#[tokio::test]
async fn a_sites_sitemaps_are_capped_however_its_indexes_nest() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let site = verified_site(&*store, ann, "https://big.example").await;
        let index = store.add_sitemap(ann, site, "https://big.example/index.xml", Source::Api, T0).await.unwrap().id;
        let children: Vec<IndexChild> = (0..MAX_SITEMAPS_PER_SITE + 50)
            .map(|n| IndexChild { url: format!("https://big.example/c{n}.xml"), lastmod: None })
            .collect();
        let sync = store.sync_index_children(site, index, &children, T0).await.unwrap();
        assert_eq!(sync.added as i64, MAX_SITEMAPS_PER_SITE - 1, "the index itself counts");
        assert_eq!(sync.refused, 51);
        // Synced again, nothing new gets in, and what is there stays.
        let again = store.sync_index_children(site, index, &children, T0 + 1).await.unwrap();
        assert_eq!((again.added, again.refused, again.removed), (0, 51, 0));
        match store.add_sitemap(ann, site, "https://big.example/another.xml", Source::Api, T0).await {
            Err(Error::Quota(why)) => assert!(why.contains("another.xml"), "{why}"),
            other => panic!("{other:?}"),
        }
        let robots =
            store.add_sitemap_for_site(site, "https://big.example/robots-named.xml", Source::Robots, None, T0).await;
        assert!(matches!(robots, Err(Error::Quota(_))), "{robots:?}");
        // A known one may always be submitted again.
        store.add_sitemap(ann, site, "https://big.example/c0.xml", Source::Api, T0 + 2).await.unwrap();
    })
    .await;
}
