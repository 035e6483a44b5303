//! Account recovery (issue 34): reset links, changes of password and of address.

use mapwright_store::{Error, SignupRequest, Store};

use crate::support::{T0, each_backend, user};

const HOUR: i64 = 3600;

/// The number of sessions of `user_id` still valid among `tokens`.
async fn live(store: &dyn Store, tokens: &[String]) -> usize {
    let mut n = 0;
    for t in tokens {
        n += usize::from(store.session_user(t, T0).await.unwrap().is_some());
    }
    n
}

#[tokio::test]
async fn a_reset_link_works_once_ends_every_session_and_expires() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let sessions = vec![
            store.create_session(ann.user_id, T0, HOUR).await.unwrap(),
            store.create_session(ann.user_id, T0, HOUR).await.unwrap(),
        ];
        assert!(store.request_password_reset("nobody@example.com", T0, HOUR).await.unwrap().is_none());
        assert!(store.request_password_reset("not an address", T0, HOUR).await.unwrap().is_none());
        let (found, token) = store.request_password_reset(" ANN@example.com", T0, HOUR).await.unwrap().unwrap();
        assert_eq!(found.id, ann.user_id);
        // A second request keeps the first link alive: a stranger's request kills no link.
        let (_, second) = store.request_password_reset("ann@example.com", T0, HOUR).await.unwrap().unwrap();
        assert_ne!(token, second);

        let used = store.reset_password(&token, "new hash", T0 + 10).await.unwrap().unwrap();
        assert_eq!(used.email, "ann@example.com");
        assert_eq!(store.user_credentials("ann@example.com").await.unwrap().unwrap().1, "new hash");
        assert_eq!(live(&*store, &sessions).await, 0, "every session ended");
        assert!(store.reset_password(&token, "again", T0 + 11).await.unwrap().is_none(), "used once");
        assert!(store.reset_password(&second, "again", T0 + 11).await.unwrap().is_none(), "the others died with it");
        assert_eq!(store.user_credentials("ann@example.com").await.unwrap().unwrap().1, "new hash");

        let (_, late) = store.request_password_reset("ann@example.com", T0, HOUR).await.unwrap().unwrap();
        assert!(store.reset_password(&late, "late", T0 + HOUR).await.unwrap().is_none(), "expired");
        assert!(store.reset_password("", "x", T0).await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn reset_links_are_few_per_account() {
    each_backend(|store| async move {
        user(&*store, "ann@example.com", false).await;
        let mut tokens = Vec::new();
        for _ in 0..mapwright_store::MAX_ACCOUNT_LINKS + 2 {
            tokens.push(store.request_password_reset("ann@example.com", T0, HOUR).await.unwrap().unwrap().1);
        }
        // The oldest two are gone, the newest works.
        assert!(store.reset_password(&tokens[0], "h", T0 + 1).await.unwrap().is_none());
        assert!(store.reset_password(&tokens[1], "h", T0 + 1).await.unwrap().is_none());
        assert!(store.reset_password(tokens.last().unwrap(), "h", T0 + 1).await.unwrap().is_some());
    })
    .await;
}

#[tokio::test]
async fn a_password_change_keeps_only_the_callers_session() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let mine = store.create_session(ann.user_id, T0, HOUR).await.unwrap();
        let other = store.create_session(ann.user_id, T0, HOUR).await.unwrap();
        let (_, link) = store.request_password_reset("ann@example.com", T0, HOUR).await.unwrap().unwrap();
        store.set_password(ann.user_id, "changed", Some(&mine)).await.unwrap();
        assert!(store.session_user(&mine, T0).await.unwrap().is_some());
        assert!(store.session_user(&other, T0).await.unwrap().is_none());
        assert!(store.reset_password(&link, "h", T0 + 1).await.unwrap().is_none(), "a reset link dies");
        // The operator's reset keeps none.
        store.set_password(ann.user_id, "by the operator", None).await.unwrap();
        assert!(store.session_user(&mine, T0).await.unwrap().is_none());
        let err = store.set_password(9_999, "h", None).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
    })
    .await;
}

#[tokio::test]
async fn an_address_change_takes_the_new_addresses_link() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        user(&*store, "bob@example.com", false).await;
        let taken = store.request_email_change(ann.user_id, "BOB@example.com", T0, HOUR).await.unwrap();
        assert_eq!(taken, SignupRequest::Taken);
        let SignupRequest::Pending(token) =
            store.request_email_change(ann.user_id, "Ann.New@Example.com", T0, HOUR).await.unwrap()
        else {
            panic!("a free address gets a link")
        };
        let (who, to) = store.pending_email_change(&token, T0 + 1).await.unwrap().unwrap();
        assert_eq!((who.id, who.email.as_str(), to.as_str()), (ann.user_id, "ann@example.com", "ann.new@example.com"));
        assert!(store.pending_email_change(&token, T0 + HOUR).await.unwrap().is_none(), "expired");

        let (moved, old) = store.confirm_email_change(&token, T0 + 2).await.unwrap().unwrap();
        assert_eq!((moved.email.as_str(), old.as_str()), ("ann.new@example.com", "ann@example.com"));
        assert!(store.user_credentials("ann@example.com").await.unwrap().is_none());
        assert_eq!(store.user_credentials("ann.new@example.com").await.unwrap().unwrap().0.id, ann.user_id);
        assert!(store.confirm_email_change(&token, T0 + 3).await.unwrap().is_none(), "used once");

        // An account made meanwhile with the address wins.
        let SignupRequest::Pending(token) =
            store.request_email_change(ann.user_id, "carol@example.com", T0, HOUR).await.unwrap()
        else {
            panic!("a free address gets a link")
        };
        user(&*store, "carol@example.com", false).await;
        let err = store.confirm_email_change(&token, T0 + 4).await.unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");
        assert!(store.request_email_change(ann.user_id, "no address", T0, HOUR).await.is_err());
    })
    .await;
}
