//! The migrations of both backends, embedded at build time by `build.rs`.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AssertSqlSafe, SqlSafeStr};

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrator of one backend's table, equal to what `sqlx::migrate!` builds from the same
/// folder (same versions, descriptions and checksums), so databases it migrated stay valid.
pub(crate) fn migrator(table: &'static [(i64, &'static str, &'static str)]) -> Migrator {
    Migrator::with_migrations(
        table
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    AssertSqlSafe(sql).into_sql_str(),
                    sql.starts_with("-- no-transaction"),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A database migrated by an earlier build (sqlx's `migrate!`, which resolves the folder
    /// with the same code as `Migrator::new`) must find every checksum unchanged, or opening it
    /// fails with "migration was previously applied but has been modified".
    #[tokio::test]
    async fn the_embedded_tables_equal_the_folders_as_sqlx_reads_them() {
        for (folder, table) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(folder);
            let from_folder = Migrator::new(path).await.expect("the folder resolves");
            let embedded = migrator(table);
            let key = |m: &Migration| {
                (m.version, m.description.to_string(), m.checksum.to_vec(), m.no_tx, m.sql.as_str().to_owned())
            };
            let want: Vec<_> = from_folder.iter().map(key).collect();
            let got: Vec<_> = embedded.iter().map(key).collect();
            assert!(!want.is_empty(), "{folder}: no migration found");
            assert_eq!(got, want, "{folder}");
        }
    }
}
