//! The migrations of both backends: one file per migration in `migrations/`, holding both
//! dialects, rendered for each backend (`migrations/render.rs`) and embedded by `build.rs`.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AssertSqlSafe, SqlSafeStr};

#[cfg(test)]
mod render;

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrator of one backend's table, as `sqlx::migrate!` would build it from a folder of the
/// rendered files: its checksums are those `migrations/applied.txt` records (a test checks),
/// so databases that earlier builds migrated stay valid.
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
    use sqlx::migrate::MigrateError;
    use sqlx::{Database, Pool};

    use super::*;

    /// One line of `migrations/applied.txt`: version, backend, checksum (hex), description.
    type Applied = (i64, String, String, String);

    fn applied() -> Vec<Applied> {
        include_str!("../migrations/applied.txt")
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .map(|line| {
                let mut words = line.splitn(3, ' ');
                let mut word = || words.next().unwrap_or_else(|| panic!("applied.txt: {line:?} is cut short"));
                let version = word().parse().unwrap_or_else(|_| panic!("applied.txt: {line:?} has no version"));
                let backend = word().to_owned();
                let (checksum, description) =
                    word().trim_start().split_once(' ').unwrap_or_else(|| panic!("applied.txt: {line:?}"));
                (version, backend, checksum.to_owned(), description.to_owned())
            })
            .collect()
    }

    fn rendered() -> Vec<Applied> {
        let mut all = Vec::new();
        for (backend, table) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            for m in migrator(table).iter() {
                all.push((m.version, backend.to_owned(), hex::encode(&m.checksum), m.description.to_string()));
            }
        }
        all.sort_by_key(|a| (a.0, a.1 != "sqlite"));
        all
    }

    /// A database records each applied migration's checksum and refuses to open when one
    /// changed ("migration was previously applied but has been modified"), so the rendered
    /// migrations must be exactly those recorded: none changed, none gone, none new and
    /// unrecorded (a new one's lines are added to the list, README.md says how).
    #[test]
    fn the_rendered_migrations_are_the_applied_list() {
        let (list, rendered) = (applied(), rendered());
        let line = |(version, backend, checksum, description): &Applied| {
            format!("{version:04} {backend:<8} {checksum} {description}")
        };
        let missing: Vec<String> = list.iter().filter(|a| !rendered.contains(a)).map(line).collect();
        let unlisted: Vec<String> = rendered.iter().filter(|r| !list.contains(r)).map(line).collect();
        assert!(
            missing.is_empty() && unlisted.is_empty(),
            "the rendered migrations differ from migrations/applied.txt.\n\
             Recorded but not rendered so (an applied migration was edited or removed: undo it):\n{}\n\
             Rendered but not recorded (a new migration: add these lines once it is final):\n{}",
            missing.join("\n"),
            unlisted.join("\n"),
        );
        assert_eq!(rendered, list, "applied.txt is in order of version, then sqlite before postgres");
        for backend in ["sqlite", "postgres"] {
            assert!(list.iter().any(|a| a.1 == backend), "no {backend} migration recorded");
        }
    }

    /// The migrator of what `applied.txt` records for `backend`: the versions and descriptions
    /// with the recorded checksums, `flip` (a version) with one bit of its checksum changed.
    fn recorded(backend: &str, flip: Option<i64>) -> Migrator {
        let migrations = applied()
            .into_iter()
            .filter(|a| a.1 == backend)
            .map(|(version, _, checksum, description)| {
                let mut m = Migration::new(
                    version,
                    Cow::Owned(description),
                    MigrationType::Simple,
                    AssertSqlSafe("").into_sql_str(),
                    false,
                );
                let mut checksum = hex::decode(checksum).expect("a hex checksum");
                if flip == Some(version) {
                    checksum[0] ^= 1;
                }
                m.checksum = Cow::Owned(checksum);
                m
            })
            .collect();
        Migrator::with_migrations(migrations)
    }

    /// Gives `pool` the ledger an earlier build left after migrating it (sqlx's own
    /// `_sqlx_migrations` rows, written by `Migrator::skip` with the recorded checksums), then
    /// migrates it with this build, as opening it would.
    async fn reopen<DB: Database>(
        pool: &Pool<DB>,
        backend: &str,
        table: &'static [(i64, &'static str, &'static str)],
        flip: Option<i64>,
    ) -> Result<(), MigrateError>
    where
        DB::Connection: sqlx::migrate::Migrate,
    {
        recorded(backend, flip).skip(pool, None).await.expect("the ledger is written");
        migrator(table).run(pool).await
    }

    /// Opening succeeds with the recorded ledger and fails at the version whose checksum flipped.
    fn judge(backend: &str, opened: Result<(), MigrateError>, flip: Option<i64>) {
        match flip {
            None => opened.unwrap_or_else(|e| panic!("{backend}: the recorded ledger does not open: {e}")),
            Some(v) => {
                assert!(matches!(opened, Err(MigrateError::VersionMismatch(m)) if m == v), "{backend}: {opened:?}")
            }
        }
    }

    /// A database an earlier build migrated opens with this one, on both backends: sqlx's
    /// own check of the ledger (the check that would refuse to open it) passes, and fails
    /// when one recorded checksum differs by a bit, so the check is real.
    #[tokio::test]
    async fn a_database_an_earlier_build_migrated_opens() {
        let last = applied().last().expect("a recorded migration").0;
        for flip in [None, Some(1), Some(last)] {
            let sqlite = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(1)
                .connect("sqlite::memory:")
                .await
                .expect("an in-memory SQLite database");
            judge("sqlite", reopen(&sqlite, "sqlite", SQLITE, flip).await, flip);
            let Some(db) = crate::testing::PgDatabase::create("migrations_ledger").await else { continue };
            let pg = sqlx::PgPool::connect(&db.url).await.expect("the test database");
            let opened = reopen(&pg, "postgres", POSTGRES, flip).await;
            pg.close().await;
            judge("postgres", opened, flip);
        }
    }
}
