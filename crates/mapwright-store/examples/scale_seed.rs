//! Bench binary of `bench/serve/scale.sh` (issue 20, item 5: 10^4 sites): the database side
//! of the benchmark, on SQLite or PostgreSQL. Not a test and not run in CI.
//!
//! - `prepare DB N S PORT`: N verified sites (ids 1..=N, site h+1 on `http://127.10.X.Y:PORT`,
//!   the address `bench/discover/server` gives host h), owned 100 a user (user 1, the bench's
//!   account, made before by `serve user create`, owns the last 100 sites, whose rows have the
//!   highest ids, so a page that scans in id order pays the most; users 2.. are inserted),
//!   each with a complete check run dated now (so the service's checker stays idle while the
//!   ingest is timed); the first S sites get their sitemap index (due now), which the service
//!   then fetches from the fixture server.
//! - `clone DB N S PORT`: after the service has ingested the S sites, sites S+1..=N are made
//!   copies of them: site `t + k*S` is site `t` with its origin replaced, every row the service
//!   wrote for it (sitemaps, downloads, findings, URLs with their `loc_hash` recomputed, links)
//!   copied with its ids shifted by `k` times the table's highest id; the columns are read from
//!   the database, so a column another migration adds is copied too. Then every live URL of
//!   every site gets a check outcome as a check run records it (one in 20 a 404), each site's
//!   check run its counts and a snapshot. On PostgreSQL the URL tables' secondary indexes are
//!   dropped before the copy and made again after it, and foreign keys are not checked during it
//!   (`session_replication_role = replica`): a bulk load's usual shape, the end state the same.
//! - `lease DB WORKERS PER_ORIGIN PER_OWNER MIN_INTERVAL`: every sitemap made due, then the
//!   store's own `lease_sitemaps` (through the `Store` API) timed 20 times, each lease released
//!   after; the sitemaps are then scheduled a day ahead again.
//!
//! DB is a `postgres://` URL or a SQLite data directory (its `mapwright.db`).

use std::time::{Duration, Instant};

use mapwright_store::LeasePolicy;
use sha2::{Digest, Sha256};
use sqlx::{Connection, PgConnection, SqliteConnection};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One connection to the bench's database, either backend.
enum Db {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
}

impl Db {
    async fn open(db: &str) -> Res<Db> {
        if db.starts_with("postgres") {
            let mut c = PgConnection::connect(db).await?;
            sqlx::raw_sql("SET maintenance_work_mem = '512MB'").execute(&mut c).await?;
            Ok(Db::Pg(c))
        } else {
            let url = format!("sqlite://{}/mapwright.db", db.trim_end_matches('/'));
            let mut c = SqliteConnection::connect(&url).await?;
            sqlx::raw_sql("PRAGMA busy_timeout = 60000; PRAGMA cache_size = -262144").execute(&mut c).await?;
            Ok(Db::Sqlite(c))
        }
    }

    fn pg(&self) -> bool {
        matches!(self, Db::Pg(_))
    }

    async fn exec(&mut self, sql: &str) -> Res<u64> {
        Ok(match self {
            Db::Sqlite(c) => sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned())).execute(c).await?.rows_affected(),
            Db::Pg(c) => sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned())).execute(c).await?.rows_affected(),
        })
    }

    async fn int(&mut self, sql: &str) -> Res<i64> {
        Ok(match self {
            Db::Sqlite(c) => {
                sqlx::query_scalar::<_, Option<i64>>(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(c).await?
            }
            Db::Pg(c) => sqlx::query_scalar::<_, Option<i64>>(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(c).await?,
        }
        .unwrap_or(0))
    }

    async fn strings(&mut self, sql: &str) -> Res<Vec<(String, String)>> {
        Ok(match self {
            Db::Sqlite(c) => sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned())).fetch_all(c).await?,
            Db::Pg(c) => sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned())).fetch_all(c).await?,
        })
    }

    /// The table's columns, in order.
    async fn columns(&mut self, table: &str) -> Res<Vec<String>> {
        let rows = match self {
            Db::Sqlite(_) => {
                self.strings(&format!("SELECT name, type FROM pragma_table_info('{table}') ORDER BY cid")).await?
            }
            Db::Pg(_) => {
                self.strings(&format!(
                    "SELECT column_name::text, data_type::text FROM information_schema.columns \
                     WHERE table_name = '{table}' AND table_schema = current_schema() ORDER BY ordinal_position"
                ))
                .await?
            }
        };
        Ok(rows.into_iter().map(|(name, _)| name).collect())
    }
}

/// `WITH RECURSIVE` rows `g(n)` for n in `from..=to`, the same text on both backends.
fn series(from: i64, to: i64) -> String {
    format!("WITH RECURSIVE g(n) AS (SELECT {from} UNION ALL SELECT n + 1 FROM g WHERE n < {to}) ")
}

/// The origin of host `h` (0-based) in SQL, as `bench/discover/server` serves it.
fn origin_sql(h: &str, port: u16) -> String {
    format!("('http://127.10.' || (({h}) / 250) || '.' || (({h}) % 250 + 1) || ':{port}')")
}

/// `INSERT INTO table (every column) SELECT ... FROM table x ...`: each column copied from `x`
/// unless `set` gives its expression.
async fn copy_sql(db: &mut Db, table: &str, set: &[(&str, String)], from: &str) -> Res<String> {
    let cols = db.columns(table).await?;
    let values: Vec<String> = cols
        .iter()
        .map(|c| set.iter().find(|(name, _)| name == c).map_or_else(|| format!("x.{c}"), |(_, e)| e.clone()))
        .collect();
    Ok(format!("INSERT INTO {table} ({}) SELECT {} {from}", cols.join(", "), values.join(", ")))
}

fn loc_hash(loc: &str) -> Vec<u8> {
    Sha256::digest(loc.as_bytes())[..16].to_vec()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

async fn prepare(db: &mut Db, sites: i64, templates: i64, port: u16) -> Res<()> {
    let now = now();
    let users = (sites - 1) / 100 + 1;
    db.exec("BEGIN").await?;
    if users > 1 {
        db.exec(&format!(
            "{}INSERT INTO users (id, email, password_hash, is_admin, created_at) \
             SELECT n, 'scale-' || n || '@example.com', 'no-sign-in', FALSE, {now} FROM g",
            series(2, users)
        ))
        .await?;
    }
    let origin = origin_sql("n", port);
    db.exec(&format!(
        "{}INSERT INTO sites (id, owner_id, origin, verification_token, created_at, verified_at, last_checked_at) \
         SELECT n + 1, ({sites} - 1 - n) / 100 + 1, {origin}, 'scale-token-' || n, {now}, {now}, {now} FROM g",
        series(0, sites - 1)
    ))
    .await?;
    // Who may see a site is its members (migration 0025): the owner is its first.
    db.exec("INSERT INTO site_members (site_id, user_id, role, added_at) SELECT id, owner_id, 'owner', created_at FROM sites")
        .await?;
    // A new sitemap carries its site's owner and verified state (migrations 0046 and 0047).
    db.exec(&format!(
        "{}INSERT INTO sitemaps (site_id, url, source, submitted_at, next_fetch_at, owner_id, site_verified) \
         SELECT s.id, s.origin || '/sitemap_index.xml', 'robots', {now}, {now}, s.owner_id, s.verified_at IS NOT NULL \
         FROM g JOIN sites s ON s.id = g.n + 1",
        series(0, templates - 1)
    ))
    .await?;
    db.exec(&format!(
        "INSERT INTO check_runs (site_id, state, started_at, finished_at, last_complete_at) \
         SELECT id, 'done', {now}, {now}, {now} FROM sites"
    ))
    .await?;
    db.exec("COMMIT").await?;
    if db.pg() {
        for table in ["users", "sites", "sitemaps"] {
            db.exec(&format!("SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))"))
                .await?;
        }
    }
    println!("prepared {sites} sites of {users} users, {templates} with a sitemap index due");
    Ok(())
}

async fn clone(db: &mut Db, sites: i64, templates: i64, port: u16) -> Res<()> {
    let started = Instant::now();
    let copies = sites / templates - 1;
    let (sm_off, dl_off, f_off, url_off) = (
        db.int("SELECT MAX(id) FROM sitemaps").await?,
        db.int("SELECT MAX(id) FROM downloads").await?,
        db.int("SELECT MAX(id) FROM findings").await?,
        db.int("SELECT MAX(id) FROM urls").await?,
    );
    let mut dropped = Vec::new();
    if db.pg() {
        db.exec("SET session_replication_role = replica").await?;
        dropped = db
            .strings(
                "SELECT i.indexname::text, i.indexdef::text FROM pg_indexes i WHERE i.schemaname = current_schema() \
                 AND i.tablename IN ('urls', 'sitemap_urls', 'url_checks') \
                 AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)",
            )
            .await?;
        for (name, _) in &dropped {
            db.exec(&format!("DROP INDEX {name}")).await?;
        }
    } else {
        db.exec("PRAGMA synchronous = OFF").await?;
    }
    // The copy `k` of template site `t` is site `t + k*S`; its host is `t - 1 + k*S`.
    let new_origin = origin_sql(&format!("x.site_id - 1 + g.n * {templates}"), port);
    let new_site = |column: &str| format!("(SELECT {column} FROM sites WHERE id = x.site_id + g.n * {templates})");
    let k = series(1, copies);
    let t = |what: &str| format!("{what} <= {templates}");
    db.exec("BEGIN").await?;
    let sql = copy_sql(
        db,
        "sitemaps",
        &[
            ("id", format!("x.id + g.n * {sm_off}")),
            ("site_id", format!("x.site_id + g.n * {templates}")),
            ("url", format!("replace(x.url, s.origin, {new_origin})")),
            ("parent_id", format!("x.parent_id + g.n * {sm_off}")),
            // The copy's site's owner and state, not its template's (no trigger writes them).
            ("owner_id", new_site("owner_id")),
            ("site_verified", new_site("verified_at IS NOT NULL")),
        ],
        &format!("FROM sitemaps x JOIN sites s ON s.id = x.site_id CROSS JOIN g WHERE {}", t("x.site_id")),
    )
    .await?;
    if copies > 0 {
        db.exec(&format!("{k}{sql}")).await?;
    }
    let sql = copy_sql(
        db,
        "downloads",
        &[("id", format!("x.id + g.n * {dl_off}")), ("sitemap_id", format!("x.sitemap_id + g.n * {sm_off}"))],
        &format!("FROM downloads x CROSS JOIN g WHERE x.sitemap_id <= {sm_off}"),
    )
    .await?;
    if copies > 0 {
        db.exec(&format!("{k}{sql}")).await?;
    }
    let sql = copy_sql(
        db,
        "findings",
        &[("id", format!("x.id + g.n * {f_off}")), ("download_id", format!("x.download_id + g.n * {dl_off}"))],
        &format!("FROM findings x CROSS JOIN g WHERE x.download_id <= {dl_off}"),
    )
    .await?;
    if copies > 0 {
        db.exec(&format!("{k}{sql}")).await?;
    }
    db.exec("COMMIT").await?;
    println!("sitemaps, downloads, findings copied: {:.1?}", started.elapsed());

    // URLs: one template site at a time, all its copies, in chunks of a transaction each.
    let url_cols = db.columns("urls").await?;
    let mut urls = 0_u64;
    for g in 1..=copies {
        db.exec("BEGIN").await?;
        if db.pg() {
            let origin = origin_sql(&format!("x.site_id - 1 + {g} * {templates}"), port);
            let new_loc = format!("replace(x.loc, s.origin, {origin})");
            let sql = copy_sql(
                db,
                "urls",
                &[
                    ("id", format!("x.id + {g} * {url_off}")),
                    ("site_id", format!("x.site_id + {g} * {templates}")),
                    ("loc", new_loc.clone()),
                    ("loc_hash", format!("substring(sha256(convert_to({new_loc}, 'UTF8')) from 1 for 16)")),
                ],
                &format!("FROM urls x JOIN sites s ON s.id = x.site_id WHERE {}", t("x.site_id")),
            )
            .await?;
            urls += db.exec(&sql).await?;
        } else {
            urls += clone_sqlite_urls(db, &url_cols, g, templates, url_off, port).await?;
        }
        db.exec(&format!(
            "INSERT INTO sitemap_urls (sitemap_id, url_id, last_seen_at) \
             SELECT x.sitemap_id + {g} * {sm_off}, x.url_id + {g} * {url_off}, x.last_seen_at FROM sitemap_urls x \
             WHERE x.sitemap_id <= {sm_off}"
        ))
        .await?;
        db.exec("COMMIT").await?;
        if g % 5 == 0 || g == copies {
            println!("copy {g} of {copies}: {urls} URLs, {:.1?}", started.elapsed());
        }
    }

    // Every live URL checked as a check run records it: a pass has no status, rule or message.
    let now = now();
    db.exec("BEGIN").await?;
    db.exec(&format!(
        "INSERT INTO url_checks (url_id, site_id, checked_at, status, rule, message) \
         SELECT id, site_id, {now}, CASE WHEN id % 20 = 0 THEN 404 END, CASE WHEN id % 20 = 0 THEN 'url-status' END, \
         CASE WHEN id % 20 = 0 THEN loc || ' answers 404' END FROM urls WHERE removed_at IS NULL"
    ))
    .await?;
    db.exec("COMMIT").await?;
    if db.pg() {
        db.exec("SET session_replication_role = origin").await?;
        for (name, def) in &dropped {
            let t0 = Instant::now();
            db.exec(def).await?;
            println!("index {name} made again: {:.1?}", t0.elapsed());
        }
        for table in ["sitemaps", "downloads", "findings", "urls"] {
            db.exec(&format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), GREATEST((SELECT MAX(id) FROM {table}), 1))"
            ))
            .await?;
        }
    }
    db.exec("BEGIN").await?;
    db.exec(&format!(
        "UPDATE check_runs SET total = (SELECT COUNT(*) FROM urls u WHERE u.site_id = check_runs.site_id \
         AND u.removed_at IS NULL), failing = (SELECT COUNT(*) FROM url_checks c WHERE c.site_id = check_runs.site_id \
         AND c.rule IS NOT NULL), started_at = {now}, finished_at = {now}, last_complete_at = {now}"
    ))
    .await?;
    db.exec("UPDATE check_runs SET checked = total").await?;
    db.exec(&format!(
        "INSERT INTO site_snapshots (site_id, taken_at, live_urls, failing_urls) SELECT site_id, {now}, total, failing FROM check_runs"
    ))
    .await?;
    db.exec("COMMIT").await?;
    println!("URL checks recorded: {:.1?}", started.elapsed());

    if db.pg() {
        db.exec("VACUUM ANALYZE").await?;
    } else {
        db.exec("PRAGMA synchronous = NORMAL").await?;
    }
    let total = db.int("SELECT COUNT(*) FROM urls").await?;
    println!("cloned: {copies} copies of {templates} sites, {total} URL rows in all, {:.1?}", started.elapsed());
    Ok(())
}

/// SQLite has no SHA-256 in SQL: the copy `g`'s new `loc` and `loc_hash` are made here and
/// joined to the template rows (VALUES columns are `column1..3` on SQLite).
async fn clone_sqlite_urls(db: &mut Db, cols: &[String], g: i64, templates: i64, url_off: i64, port: u16) -> Res<u64> {
    let Db::Sqlite(c) = db else { unreachable!("SQLite only") };
    let rows: Vec<(i64, i64, String, String)> = sqlx::query_as(
        "SELECT x.id, x.site_id, x.loc, s.origin FROM urls x JOIN sites s ON s.id = x.site_id WHERE x.site_id <= $1 ORDER BY x.id",
    )
    .bind(templates)
    .fetch_all(&mut *c)
    .await?;
    let values: Vec<String> = cols
        .iter()
        .map(|col| match col.as_str() {
            "id" => format!("x.id + {g} * {url_off}"),
            "site_id" => format!("x.site_id + {g} * {templates}"),
            "loc" => "v.column2".to_owned(),
            "loc_hash" => "v.column3".to_owned(),
            other => format!("x.{other}"),
        })
        .collect();
    let mut written = 0;
    for chunk in rows.chunks(2000) {
        let mut q = sqlx::QueryBuilder::new(format!(
            "INSERT INTO urls ({}) SELECT {} FROM urls x JOIN (",
            cols.join(", "),
            values.join(", ")
        ));
        q.push_values(chunk, |mut row, (id, site_id, loc, origin)| {
            let h = site_id - 1 + g * templates;
            let new = format!("http://127.10.{}.{}:{port}", h / 250, h % 250 + 1);
            let loc = loc.replacen(origin.as_str(), &new, 1);
            let hash = loc_hash(&loc);
            row.push_bind(*id).push_bind(loc).push_bind(hash);
        });
        q.push(") v ON v.column1 = x.id ORDER BY x.id");
        written += q.build().execute(&mut *c).await?.rows_affected();
    }
    Ok(written)
}

async fn lease(db: &str, workers: i64, policy: LeasePolicy) -> Res<()> {
    let dir = std::path::PathBuf::from(if db.starts_with("postgres") { "." } else { db });
    let database = db.starts_with("postgres").then_some(db);
    let store = mapwright_store::open(database, &dir).await?;
    let mut raw = Db::open(db).await?;
    // A week ahead: every sitemap due (the scheduler's first interval is a day, the longest a
    // week), every download older than the minimum interval; nothing rewritten to get there.
    let now = now() + 8 * 86_400;
    let due =
        raw.int(&format!("SELECT COUNT(*) FROM sitemaps WHERE removed_at IS NULL AND next_fetch_at <= {now}")).await?;
    let mut times = Vec::new();
    let mut leased = 0;
    for _ in 0..20 {
        let t0 = Instant::now();
        let got = store.lease_sitemaps("scale-bench", now, workers, 60, policy).await?;
        times.push(t0.elapsed());
        leased = got.len();
        store.release_all("scale-bench").await?;
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "lease_sitemaps with {due} sitemaps due over {} sites: {leased} leased per call; p50 {:.1} ms, max {:.1} ms (20 calls)",
        raw.int("SELECT COUNT(DISTINCT site_id) FROM sitemaps").await?,
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1]),
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> Res<i64> { Ok(args.get(i).ok_or("missing argument")?.parse()?) };
    let usage =
        "usage: scale_seed prepare|clone DB SITES TEMPLATES PORT | lease DB WORKERS PER_ORIGIN PER_OWNER MIN_INTERVAL";
    let (Some(what), Some(db)) = (args.first(), args.get(1)) else { return Err(usage.into()) };
    match what.as_str() {
        "prepare" => prepare(&mut Db::open(db).await?, arg(2)?, arg(3)?, arg(4)? as u16).await,
        "clone" => {
            let (sites, templates) = (arg(2)?, arg(3)?);
            if sites % templates != 0 || sites < templates {
                return Err("SITES must be a multiple of TEMPLATES".into());
            }
            clone(&mut Db::open(db).await?, sites, templates, arg(4)? as u16).await
        }
        "lease" => {
            let policy = LeasePolicy { per_origin: arg(3)?, per_owner: arg(4)?, min_interval: arg(5)? };
            lease(db, arg(2)?, policy).await
        }
        _ => Err(usage.into()),
    }
}
