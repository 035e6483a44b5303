//! Incremental state in SQLite (through sqlx, the stack the server shares): per sitemap its
//! validators, index lastmod and content hash; and the URL set of the last run, so a run can
//! say which URLs were added or removed (PROTOCOL.md section 8).

use crate::Error;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Row, Sqlite, Transaction};
use std::path::Path;
use std::str::FromStr;

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS fetch_sitemap (url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT, \
     index_lastmod TEXT, content_hash INTEGER, parent TEXT, updated_at INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fetch_url (hash INTEGER PRIMARY KEY, loc TEXT NOT NULL, sitemap TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS fetch_url_by_sitemap ON fetch_url(sitemap)",
    "CREATE TABLE IF NOT EXISTS fetch_url_stage (hash INTEGER PRIMARY KEY, loc TEXT NOT NULL, sitemap TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fetch_run_sitemap (url TEXT PRIMARY KEY, was_read INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS fetch_site_done (site TEXT PRIMARY KEY, ok INTEGER NOT NULL, \
     out_len INTEGER NOT NULL, summary_len INTEGER NOT NULL, done_at INTEGER NOT NULL)",
];

/// What is remembered of one sitemap between runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SitemapState {
    /// The last `ETag`.
    pub etag: Option<String>,
    /// The last `Last-Modified`.
    pub last_modified: Option<String>,
    /// The `lastmod` the parent index gave it.
    pub index_lastmod: Option<String>,
    /// xxh3-64 of the bytes received.
    pub content_hash: Option<u64>,
    /// The index that listed it, if any.
    pub parent: Option<String>,
}

/// Whether a URL appeared or disappeared since the last run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Listed now, not last time.
    Added,
    /// Listed last time, not now.
    Removed,
}

/// The state database. Cheap to clone (a pool of one connection: SQLite has one writer).
#[derive(Clone)]
pub struct State {
    pool: SqlitePool,
    path: String,
}

impl State {
    /// Opens (creating if needed) the database at `path`.
    pub async fn open(path: &Path) -> Result<State, Error> {
        let name = path.display().to_string();
        let err = |e: sqlx::Error| Error::State { path: name.clone(), message: e.to_string() };
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{name}"))
            .map_err(err)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new().max_connections(1).connect_with(opts).await.map_err(err)?;
        for stmt in SCHEMA {
            sqlx::query(*stmt).execute(&pool).await.map_err(err)?;
        }
        Ok(State { pool, path: name })
    }

    fn err(&self, e: sqlx::Error) -> Error {
        Error::State { path: self.path.clone(), message: e.to_string() }
    }

    /// What was remembered of `url`.
    pub async fn sitemap(&self, url: &str) -> Result<Option<SitemapState>, Error> {
        let row = sqlx::query(
            "SELECT etag, last_modified, index_lastmod, content_hash, parent FROM fetch_sitemap WHERE url = ?",
        )
        .bind(url)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.map(|r| SitemapState {
            etag: r.get(0),
            last_modified: r.get(1),
            index_lastmod: r.get(2),
            content_hash: r.get::<Option<i64>, _>(3).map(|h| h as u64),
            parent: r.get(4),
        }))
    }

    /// Remembers `url`.
    pub async fn put_sitemap(&self, url: &str, s: &SitemapState) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO fetch_sitemap (url, etag, last_modified, index_lastmod, content_hash, parent, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, unixepoch()) ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, \
             last_modified = excluded.last_modified, index_lastmod = excluded.index_lastmod, \
             content_hash = excluded.content_hash, parent = excluded.parent, updated_at = excluded.updated_at",
        )
        .bind(url)
        .bind(&s.etag)
        .bind(&s.last_modified)
        .bind(&s.index_lastmod)
        .bind(s.content_hash.map(|h| h as i64))
        .bind(&s.parent)
        .execute(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The children `parent` listed when it was last read, with their index lastmod: what an
    /// index that answers 304 still lists.
    pub async fn children(&self, parent: &str) -> Result<Vec<(String, Option<String>)>, Error> {
        let rows = sqlx::query("SELECT url, index_lastmod FROM fetch_sitemap WHERE parent = ? ORDER BY url")
            .bind(parent)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Starts recording this run's URLs (clears what an interrupted run left).
    pub async fn begin_run(&self) -> Result<(), Error> {
        for q in ["DELETE FROM fetch_url_stage", "DELETE FROM fetch_run_sitemap"] {
            sqlx::query(q).execute(&self.pool).await.map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Records URLs read this run from `sitemap` (already deduplicated).
    pub async fn stage(&self, sitemap: &str, urls: &[mapwright_core::UrlEntry]) -> Result<(), Error> {
        let mut tx: Transaction<'_, Sqlite> = self.pool.begin().await.map_err(|e| self.err(e))?;
        // Compared by the normal form's hash, kept as written (what `--changes` prints).
        for loc in urls.iter().map(|u| &u.loc) {
            sqlx::query("INSERT OR IGNORE INTO fetch_url_stage (hash, loc, sitemap) VALUES (?, ?, ?)")
                .bind(url_hash(loc.as_str()))
                .bind(loc.written())
                .bind(sitemap)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Ends the run: reports each URL added or removed since the last run to `each`, then
    /// makes this run's set the reference. `sitemaps` lists every sitemap seen this run and
    /// whether it was read to its end: URLs of a sitemap read are replaced by what it lists
    /// now; URLs of sitemaps seen but not read (304, skipped, failed, even part-way) are kept,
    /// and the URLs a part-way read staged that the state did not hold are not added (a read
    /// is all or nothing: the next complete read says what changed); URLs of a sitemap that
    /// its index, read this run, no longer lists are removed.
    pub async fn finish_run(
        &self,
        sitemaps: &[(String, bool)],
        mut each: impl FnMut(Change, &str, &str),
    ) -> Result<(), Error> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        for (url, read) in sitemaps {
            sqlx::query("INSERT OR REPLACE INTO fetch_run_sitemap (url, was_read) VALUES (?, ?)")
                .bind(url)
                .bind(*read as i64)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        // A sitemap read part-way changes nothing: drop what it staged that is not stored
        // already (what is stored stays staged, so no other sitemap's copy looks removed).
        sqlx::query(
            "DELETE FROM fetch_url_stage WHERE sitemap IN (SELECT url FROM fetch_run_sitemap WHERE was_read = 0) \
             AND hash NOT IN (SELECT hash FROM fetch_url)",
        )
        .execute(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
        const REPLACED: &str = "(sitemap IN (SELECT url FROM fetch_run_sitemap WHERE was_read = 1) \
             OR (sitemap NOT IN (SELECT url FROM fetch_run_sitemap) AND sitemap IN (SELECT url FROM fetch_sitemap \
             WHERE parent IN (SELECT url FROM fetch_run_sitemap WHERE was_read = 1))))";
        let removed = format!(
            "SELECT loc, sitemap FROM fetch_url WHERE {REPLACED} AND hash NOT IN (SELECT hash FROM fetch_url_stage) ORDER BY loc"
        );
        for r in sqlx::query(sqlx::AssertSqlSafe(removed)).fetch_all(&mut *tx).await.map_err(|e| self.err(e))? {
            each(Change::Removed, r.get(0), r.get(1));
        }
        let added =
            "SELECT loc, sitemap FROM fetch_url_stage WHERE hash NOT IN (SELECT hash FROM fetch_url) ORDER BY loc";
        for r in sqlx::query(added).fetch_all(&mut *tx).await.map_err(|e| self.err(e))? {
            each(Change::Added, r.get(0), r.get(1));
        }
        for q in [
            format!("DELETE FROM fetch_url WHERE {REPLACED}"),
            "INSERT OR REPLACE INTO fetch_url (hash, loc, sitemap) SELECT hash, loc, sitemap FROM fetch_url_stage"
                .into(),
            "DELETE FROM fetch_url_stage".into(),
            "DELETE FROM fetch_run_sitemap".into(),
        ] {
            sqlx::query(sqlx::AssertSqlSafe(q)).execute(&mut *tx).await.map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }
}

/// Where a many-site run stands: what the output files held after the last site recorded done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SitesMark {
    /// Sites recorded done.
    pub done: u64,
    /// Of those, sites that failed.
    pub failed: u64,
    /// Bytes of the row output after the last one.
    pub out_len: u64,
    /// Bytes of the summary output after the last one.
    pub summary_len: u64,
}

/// A many-site run (`discover --sites --state`): a site is recorded done once its rows and its
/// summary line are written and flushed, with the lengths of both outputs then, so a run
/// killed at any point resumes by cutting the outputs back to the last record and
/// discovering only the sites not recorded.
impl State {
    /// Whether `site` was recorded done.
    pub async fn site_done(&self, site: &str) -> Result<bool, Error> {
        let row = sqlx::query("SELECT 1 FROM fetch_site_done WHERE site = ?")
            .bind(site)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(row.is_some())
    }

    /// Records `site` done, `ok` or failed, with the lengths of the two outputs now.
    pub async fn record_site(&self, site: &str, ok: bool, out_len: u64, summary_len: u64) -> Result<(), Error> {
        sqlx::query(
            "INSERT OR REPLACE INTO fetch_site_done (site, ok, out_len, summary_len, done_at) \
             VALUES (?, ?, ?, ?, unixepoch())",
        )
        .bind(site)
        .bind(ok as i64)
        .bind(out_len as i64)
        .bind(summary_len as i64)
        .execute(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The sites recorded so far and the output lengths after the last one (zeros when none).
    pub async fn sites_mark(&self) -> Result<SitesMark, Error> {
        let r = sqlx::query(
            "SELECT COUNT(*), COALESCE(SUM(ok = 0), 0), COALESCE(MAX(out_len), 0), COALESCE(MAX(summary_len), 0) \
             FROM fetch_site_done",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        let n = |i: usize| r.get::<i64, _>(i) as u64;
        Ok(SitesMark { done: n(0), failed: n(1), out_len: n(2), summary_len: n(3) })
    }
}

/// The key of a URL in the state: xxh3-64 of its text, as SQLite's signed integer.
fn url_hash(loc: &str) -> i64 {
    xxhash_rust::xxh3::xxh3_64(loc.as_bytes()) as i64
}
