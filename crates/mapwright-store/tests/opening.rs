//! Issue 14 items 2 and 13 in the store: the SQLite file's mode and its check at open (an empty
//! or damaged file is refused and left as it was), and e-mail addresses in one normal form,
//! migration 0007 included, on both backends.

use mapwright_store::{Error, SqliteStore, Store};

use crate::support::{T0, each_backend, each_backend_with_pool};

#[cfg(unix)]
#[tokio::test]
async fn the_sqlite_file_is_created_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_dir(dir.path()).await.unwrap();
    store.create_user("a@example.com", "h", false, T0).await.unwrap();
    for name in ["mapwright.db", "mapwright.db-wal", "mapwright.db-shm"] {
        let path = dir.path().join(name);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name} has mode {mode:o}");
    }
    Store::close(&store).await;
}

#[tokio::test]
async fn an_empty_database_file_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapwright.db");
    std::fs::write(&path, b"").unwrap();
    let Err(err) = SqliteStore::open_dir(dir.path()).await else { panic!("an empty file is refused") };
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("mapwright.db") && message.contains("empty"), "{message}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "the file was left as it was");
}

#[tokio::test]
async fn a_damaged_database_file_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapwright.db");
    // Not a database at all.
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let Err(err) = SqliteStore::open_dir(dir.path()).await else { panic!("a file of garbage is refused") };
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), vec![b'x'; 8192], "left as it was");

    // A real database whose pages were damaged after the header.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapwright.db");
    let store = SqliteStore::open_dir(dir.path()).await.unwrap();
    for n in 0..200 {
        store.create_user(&format!("user{n}@example.com"), &"h".repeat(200), false, T0).await.unwrap();
    }
    Store::close(&store).await;
    // Whatever the write-ahead log still holds would cover the damage: take it away first.
    for side in ["mapwright.db-wal", "mapwright.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(side));
    }
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4 * 4096, "{}", bytes.len());
    let (page, end) = (4096, bytes.len() - 4096);
    for b in &mut bytes[page..end] {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let Err(err) = SqliteStore::open_dir(dir.path()).await else { panic!("a damaged file is refused") };
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it was");
}

#[tokio::test]
async fn addresses_are_stored_and_found_in_one_normal_form() {
    each_backend(|store| async move {
        let user = store.create_user(" Ann@Example.COM. ", "h", false, T0).await.unwrap();
        assert_eq!(user.email, "ann@example.com");
        let err = store.create_user("ANN@example.com", "h", false, T0).await.unwrap_err();
        assert!(matches!(err, Error::Conflict(_)), "{err}");
        assert_eq!(store.user_credentials("ann@EXAMPLE.com").await.unwrap().unwrap().0.id, user.id);
        assert!(store.grant_admin("Ann@example.com").await.unwrap());
        assert!(store.user_credentials("ann@example.com").await.unwrap().unwrap().0.is_admin);
        assert!(matches!(store.create_user("not an address", "h", false, T0).await, Err(Error::InvalidEmail(_))));
        assert!(store.user_credentials("not an address").await.unwrap().is_none());
    })
    .await;
}

/// Rows as a version before 0007 could have left them, migrated by 0007: the oldest account of
/// each address keeps it in normal form, a newer one is renamed, nothing is lost. A macro, as
/// the two pools are of two types.
macro_rules! migration_0007_on {
    ($store:expr, $pool:expr) => {{
        let (store, pool) = ($store, $pool);
        // Back to the state before 0007.
        sqlx::query("DROP INDEX users_email_lower").execute(pool).await.unwrap();
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 7").execute(pool).await.unwrap();
        for email in ["Ann@Example.com", "ann@example.com", "bob@example.com.", " Cy@X.org", "dan@example.com"] {
            sqlx::query("INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ($1, 'h', false, 0)")
                .bind(email)
                .execute(pool)
                .await
                .unwrap();
        }
        store.migrate().await.unwrap();
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT id, email FROM users ORDER BY id").fetch_all(pool).await.unwrap();
        let emails: Vec<String> = rows.iter().map(|(_, e)| e.clone()).collect();
        let second = rows[1].0;
        let duplicate = format!("ann@example.com#duplicate-{second}");
        assert_eq!(emails, ["ann@example.com", &duplicate, "bob@example.com", "cy@x.org", "dan@example.com"]);
        assert_eq!(store.user_credentials("ANN@example.com").await.unwrap().unwrap().0.id, rows[0].0);
        assert_eq!(store.user_credentials("bob@example.com").await.unwrap().unwrap().0.id, rows[2].0);
        let again = sqlx::query(
            "INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ('DAN@example.com', 'h', false, 0)",
        )
        .execute(pool)
        .await;
        assert!(again.is_err(), "the index keeps two spellings of one address out, whatever writes the row");
    }};
}

#[tokio::test]
async fn migration_0007_normalises_existing_addresses_on_both_backends() {
    each_backend_with_pool!(migration_0007_on);
}
