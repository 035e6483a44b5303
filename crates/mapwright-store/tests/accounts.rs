//! Migrations, users, sessions and API tokens.

use mapwright_store::{Error, secret};

use crate::support::{T0, each_backend, user};

#[tokio::test]
async fn migrations_apply_twice_and_reopen() {
    // SQLite: reopening the same directory applies nothing new and keeps the data.
    let dir = tempfile::tempdir().unwrap();
    let store = mapwright_store::open(None, dir.path()).await.unwrap();
    assert_eq!(store.backend(), "sqlite");
    store.create_user("a@example.com", "h", false, T0).await.unwrap();
    store.migrate().await.unwrap();
    store.close().await;
    let again = mapwright_store::open(None, dir.path()).await.unwrap();
    assert!(again.user_credentials("a@example.com").await.unwrap().is_some());
    again.close().await;

    each_backend(|store| async move {
        store.migrate().await.unwrap();
        store.migrate().await.unwrap();
        store.create_user("b@example.com", "h", false, T0).await.unwrap();
        store.migrate().await.unwrap();
        assert!(store.user_credentials("b@example.com").await.unwrap().is_some());
    })
    .await;
}

#[tokio::test]
async fn open_refuses_an_unknown_url() {
    let dir = tempfile::tempdir().unwrap();
    let err = mapwright_store::open(Some("mysql://x"), dir.path()).await.err().unwrap();
    assert!(matches!(err, Error::UnsupportedUrl(_)), "{err}");
}

#[tokio::test]
async fn user_sign_up_and_sign_in() {
    each_backend(|store| async move {
        let hash = secret::hash_password("a long passphrase").unwrap();
        let ann = store.create_user("ann@example.com", &hash, false, T0).await.unwrap();
        assert!(!ann.is_admin);
        let err = store.create_user("ann@example.com", &hash, false, T0).await.unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");

        let (found, stored) = store.user_credentials("ann@example.com").await.unwrap().unwrap();
        assert_eq!(found, ann);
        assert!(secret::verify_password("a long passphrase", &stored));
        assert!(!secret::verify_password("wrong", &stored));
        assert!(store.user_credentials("nobody@example.com").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn session_lifecycle() {
    each_backend(|store| async move {
        let ann = store.create_user("ann@example.com", "h", false, T0).await.unwrap();
        let token = store.create_session(ann.id, T0, 3600).await.unwrap();
        assert_eq!(store.session_user(&token, T0 + 10).await.unwrap(), Some(ann.clone()));
        // Expired at exactly created + ttl.
        assert_eq!(store.session_user(&token, T0 + 3600).await.unwrap(), None);
        assert_eq!(store.session_user("not-a-token", T0).await.unwrap(), None);

        let other = store.create_session(ann.id, T0, 3600).await.unwrap();
        assert_ne!(token, other);
        store.delete_session(&other).await.unwrap();
        assert_eq!(store.session_user(&other, T0 + 1).await.unwrap(), None);
        // The first is still valid until it expires; the sweep removes only expired ones.
        assert_eq!(store.delete_expired_sessions(T0 + 10).await.unwrap(), 0);
        assert_eq!(store.delete_expired_sessions(T0 + 3600).await.unwrap(), 1);
        assert_eq!(store.session_user(&token, T0 + 10).await.unwrap(), None);
    })
    .await;
}

#[tokio::test]
async fn api_token_lifecycle() {
    each_backend(|store| async move {
        let ann = user(&*store, "ann@example.com", false).await;
        let bob = user(&*store, "bob@example.com", false).await;
        let (listed, secret_value) = store.create_api_token(ann, "ci", T0).await.unwrap();
        assert_eq!(listed.name, "ci");
        assert_eq!(secret_value.len(), 64);

        let who = store.api_token_user(&secret_value, T0 + 100).await.unwrap().unwrap();
        assert_eq!(who.id, ann.user_id);
        let tokens = store.list_api_tokens(ann).await.unwrap();
        assert_eq!(tokens.len(), 1);
        assert_eq!(tokens[0].last_used_at, Some(T0 + 100));
        assert!(store.list_api_tokens(bob).await.unwrap().is_empty());

        // Bob cannot revoke Ann's token; Ann can.
        let err = store.revoke_api_token(bob, listed.id, T0).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { what: "token", .. }), "{err}");
        assert!(store.api_token_user(&secret_value, T0 + 200).await.unwrap().is_some());
        store.revoke_api_token(ann, listed.id, T0 + 300).await.unwrap();
        assert!(store.api_token_user(&secret_value, T0 + 400).await.unwrap().is_none());
        assert_eq!(store.list_api_tokens(ann).await.unwrap()[0].revoked_at, Some(T0 + 300));
    })
    .await;
}
