//! The `Store` implementation, written once for both backends, and what its queries share.
//!
//! SQLite and PostgreSQL take the same SQL: `$N` placeholders (sqlx's SQLite driver
//! maps `$N` to the N-th argument), `ON CONFLICT ... DO UPDATE`, `RETURNING`, `IS DISTINCT
//! FROM`, and the same column types (times and ids are 64-bit integers). A macro, not generic
//! code over `sqlx::Database`, stamps the implementation out for each concrete pool type:
//! the generic version needs a dozen higher-ranked trait bounds per method for no gain. What
//! differs (how a write transaction begins, the lease query, the migrations) is passed in.
//!
//! `store.rs` writes each method of the trait once, with the inherent method (`*_impl`) its
//! `impl Store` calls for each backend; [`impl_store!`] stamps those out per backend through
//! each concern's macro beside it: `accounts.rs` (users, sessions, API tokens), `signups.rs` (sign-ups,
//! shared limits, health), `recovery.rs` (password resets, changes of password and address), `sites.rs`, `sitemaps.rs` (sitemaps, downloads, roll-ups, the
//! console's summaries), `leasing.rs` (the fetch queue), `urls.rs`, `ingest.rs` (a download's
//! staged URLs), `check_runs.rs` (check runs, recorded checks, failure reports), `members.rs` (members
//! and invitations), `alerts.rs` (e-mail alerts), `diffs.rs` (per-read diffs), `domains.rs` (domain properties), `webhooks.rs` (webhook endpoints, deliveries, attempts) and `retention.rs`. What several concerns use stays here: `owned!`, `visible_site!`, `member_of!`, `owner_of!`, `mark_orphans_removed!`,
//! [`Pacer`], the hashing and cleaning of URLs, the chunk sizes.

/// The condition "the acting user may see site `s`": `$a` is the admin flag, `$u` the id; a
/// member of any role sees the site (`members.rs`; index `site_members_user`).
macro_rules! owned {
    ($a:literal, $u:literal) => {
        concat!("(", $a, " OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ", $u, "))")
    };
}

/// The columns `$cols` (of `sites s`) of site `$site_id` when `$actor` may see it (`owned!`), else
/// [`Error::NotFound`](crate::Error::NotFound): the look-up of one site for reading, said once
/// for every reader of a site's row.
macro_rules! visible_site {
    ($store:ident, $cols:expr, $actor:expr, $site_id:expr) => {{
        let (actor, site_id): ($crate::Actor, i64) = ($actor, $site_id);
        sqlx::query_as(concat!("SELECT ", $cols, " FROM sites s WHERE s.id = $1 AND ", owned!("$2", "$3")))
            .bind(site_id)
            .bind(actor.is_admin)
            .bind(actor.user_id)
            .fetch_optional(&$store.pool)
            .await?
            .ok_or($crate::Error::NotFound { what: "site", id: site_id })
    }};
}

/// The condition "site id `$site` is one of user `$u`'s" for a list, without the admin's `OR`: a list
/// driven by it reads the user's memberships (`site_members_user`) and then their sites, where
/// `owned!`'s `$a OR ...`, whose flag the planner cannot know, scans every site or sitemap of
/// the service and tests each (36 ms for "My sitemaps" at 10^4 sites). An admin's list has no
/// condition at all; `owned!` stays for the checks of one row, which it does not slow.
macro_rules! member_of {
    ($site:literal, $u:literal) => {
        concat!($site, " IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ", $u, ")")
    };
}

/// The condition "the acting user may change site `s`": an admin or an owner of it.
macro_rules! owner_of {
    ($a:literal, $u:literal) => {
        concat!(
            "(",
            $a,
            " OR s.id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ",
            $u,
            " AND m.role = 'owner'))"
        )
    };
}

/// Claims up to `$limit` rows of `$table` due for a verification re-check (never checked, or
/// last before `$before`) by stamping `last_checked_at = $now`, and returns them by id,
/// `RETURNING` the columns `$cols` (bare: SQLite takes no table alias there). The subquery names
/// the table `sm` for the lease query's row lock (`$lock` locks `sm`); the outer level repeats
/// the due test for a row PostgreSQL re-reads after another pass's claim, as the lease query
/// does. One statement for sites and domain properties, which are re-checked alike.
macro_rules! claim_due_checks {
    ($store:expr, $row:ty, $table:literal, $lock:literal, ($($cols:tt)*), $before:expr, $limit:expr, $now:expr) => {{
        let mut tx = $store.begin_write().await?;
        let mut rows: Vec<$row> = sqlx::query_as(concat!(
            "UPDATE ",
            $table,
            " SET last_checked_at = $3 WHERE id IN (SELECT sm.id FROM ",
            $table,
            " sm WHERE sm.last_checked_at IS NULL OR sm.last_checked_at < $1 \
             ORDER BY COALESCE(sm.last_checked_at, 0), sm.id LIMIT $2 ",
            $lock,
            ") AND (last_checked_at IS NULL OR last_checked_at < $1) RETURNING ",
            $($cols)*
        ))
        .bind($before)
        .bind($limit)
        .bind($now)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.sort_by_key(|r| r.id);
        Ok(rows)
    }};
}

/// Stamps out the inherent methods that [`crate::Store`]'s impl calls (`store.rs`) for a type with
/// a `pool` field and `begin_write` and `pacer` methods; `lock` is the lease query's row lock,
/// `loc_lower` the URL search's lower-cased `loc`.
macro_rules! impl_store {
    (
        $ty:ty,
        backend = $name:literal,
        migrations = $migrations:ident,
        lock = $lock:literal,
        loc_lower = $loc_lower:literal
    ) => {
        account_methods!($ty);
        signup_methods!($ty);
        recovery_methods!($ty);
        site_methods!($ty, lock = $lock);
        sitemap_methods!($ty);
        lease_methods!($ty, lock = $lock, backend = $name);
        url_methods!($ty, loc_lower = $loc_lower);
        url_check_methods!($ty);
        retention_methods!($ty);
        member_methods!($ty);
        domain_methods!($ty, lock = $lock);
        listing_methods!($ty);
        alert_methods!($ty);
        diff_methods!($ty);
        trust_methods!($ty);
        webhook_methods!($ty);
        outbound_methods!($ty);
        overview_methods!($ty);

        impl $ty {
            /// The backend's name ([`Store::backend`](crate::Store::backend)).
            pub(crate) fn backend_name(&self) -> &'static str {
                $name
            }

            /// Applies pending migrations ([`Store::migrate`](crate::Store::migrate)).
            pub(crate) async fn migrate_impl(&self) -> Result<()> {
                $crate::migrations::migrator($crate::migrations::$migrations).run(&self.pool).await?;
                // URLs stored before migration 0006 on SQLite get their hash here (PostgreSQL's
                // migration computes it in SQL); a no-op afterwards.
                loop {
                    let rows: Vec<(i64, String)> =
                        sqlx::query_as("SELECT id, loc FROM urls WHERE loc_hash IS NULL LIMIT 1000")
                            .fetch_all(&self.pool)
                            .await?;
                    if rows.is_empty() {
                        return Ok(());
                    }
                    let mut tx = self.begin_write().await?;
                    for (id, loc) in &rows {
                        sqlx::query("UPDATE urls SET loc_hash = $1 WHERE id = $2")
                            .bind(loc_hash(loc))
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                    }
                    tx.commit().await?;
                }
            }

            /// Closes the pool after the backend's own tasks ([`Store::close`](crate::Store::close)).
            pub(crate) async fn close_impl(&self) {
                self.close_more().await;
                self.pool.close().await;
            }
        }
    };
}

/// Declares the [`crate::Store`] trait and implements it for each backend named in `backends`.
///
/// Used once, in `store.rs`, which holds the list of methods and says why. The list holds a
/// `sync { ... }` section of plain methods, then the async methods, then a `provided { ... }`
/// section of methods with a default body (written in the trait as they stand, never
/// overridden). Each listed method ends in `=> name`: the backend's inherent method it calls
/// with the same arguments. The impls are written by `@impl`, once per backend, from the
/// methods passed on bare (a macro cannot repeat them inside the repetition of backends).
macro_rules! store_trait {
    (
        backends: $backends:tt,
        $(#[$doc:meta])*
        pub trait Store {
            sync {
                $($(#[$smeta:meta])*
                fn $sname:ident(&self $(, $sarg:ident: $sty:ty)* $(,)?) -> $sret:ty => $starget:ident;)*
            }
            $($(#[$meta:meta])*
            async fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? => $target:ident;)*
            provided { $($provided:tt)* }
        }
    ) => {
        $(#[$doc])*
        #[async_trait::async_trait]
        pub trait Store: Send + Sync + 'static {
            $($(#[$smeta])* fn $sname(&self $(, $sarg: $sty)*) -> $sret;)*
            $($(#[$meta])* async fn $name(&self $(, $arg: $ty)*) $(-> $ret)?;)*
            $($provided)*
        }
        store_trait!(@impls $backends
            { $(fn $sname($($sarg: $sty),*) -> $sret => $starget;)* }
            { $(fn $name($($arg: $ty),*) $(-> $ret)? => $target;)* }
        );
    };
    (@impls [$($backend:ident),+] $sync_list:tt $async_list:tt) => {
        $(store_trait!(@impl $backend $sync_list $async_list);)+
    };
    (
        @impl $backend:ident
        { $(fn $sname:ident($($sarg:ident: $sty:ty),*) -> $sret:ty => $starget:ident;)* }
        { $(fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? => $target:ident;)* }
    ) => {
        #[async_trait::async_trait]
        impl $crate::Store for $backend {
            $(fn $sname(&self $(, $sarg: $sty)*) -> $sret {
                self.$starget($($sarg),*)
            })*
            $(async fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                self.$target($($arg),*).await
            })*
        }
    };
}

/// Marks removed, at `$now`, the live URLs of a site that no sitemap lists; evaluates to the
/// count. A macro so it runs on either backend's transaction.
macro_rules! mark_orphans_removed {
    ($tx:expr, $site_id:expr, $now:expr) => {
        sqlx::query(
            "UPDATE urls SET removed_at = $1 WHERE site_id = $2 AND removed_at IS NULL \
             AND NOT EXISTS (SELECT 1 FROM sitemap_urls su WHERE su.url_id = urls.id)",
        )
        .bind($now)
        .bind($site_id)
        .execute($tx)
        .await?
        .rows_affected()
    };
}

/// The key of a URL within its site: the first 16 bytes of the SHA-256 of its text. A btree on
/// the text itself refuses keys over 2,704 bytes on PostgreSQL; 128 bits make a collision
/// among even billions of URLs vanishingly unlikely.
pub(crate) fn loc_hash(loc: &str) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(loc.as_bytes())[..16].to_vec()
}

/// Text as stored: NUL, which PostgreSQL refuses in text, becomes U+FFFD (on both backends,
/// so that both store the same thing).
pub(crate) fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// How many of `fresh` new URL rows a site holding `rows` URL rows may add under `quota`
/// (removed rows count: they take room too). The one quota decision of every URL write: a
/// read's merge (`ingest.rs`), [`Store::store_urls`](crate::Store::store_urls) and pushed URLs
/// ([`Store::record_pushed_urls`](crate::Store::record_pushed_urls)), so none of them lets a
/// site grow past what the others allow.
pub(crate) fn quota_room(quota: i64, rows: i64, fresh: i64) -> i64 {
    quota.saturating_sub(rows).clamp(0, fresh.max(0))
}

/// Of the URLs `$chunk` (indexes into the caller's list; `$hash(i)` the key of URL `i`), those
/// a write to site `$site_id` in `$tx` takes under `$quota`: every URL the site has, and new
/// ones in the order given while [`quota_room`] lets them in. `$rows` (an `Option<i64>`) caches
/// the site's row count across chunks of one write. Evaluates to `(taken, refused)`.
macro_rules! take_within_quota {
    ($tx:ident, $site_id:expr, $quota:expr, $rows:ident, $chunk:expr, $hash:expr) => {{
        let chunk: &[usize] = $chunk;
        let hash = $hash;
        let mut take: Vec<usize> = chunk.to_vec();
        let mut refused = 0_u64;
        if $quota < i64::MAX {
            let mut known = sqlx::QueryBuilder::new("SELECT loc_hash FROM urls WHERE site_id = ");
            known.push_bind($site_id).push(" AND loc_hash IN (");
            let mut list = known.separated(", ");
            for i in chunk {
                list.push_bind(hash(*i));
            }
            list.push_unseparated(")");
            let known: std::collections::HashSet<Vec<u8>> =
                known.build_query_scalar().fetch_all(&mut *$tx).await?.into_iter().collect();
            let fresh = chunk.iter().filter(|i| !known.contains(hash(**i))).count() as i64;
            if fresh > 0 {
                let count = match $rows {
                    Some(n) => n,
                    None => {
                        sqlx::query_scalar("SELECT COUNT(*) FROM urls WHERE site_id = $1")
                            .bind($site_id)
                            .fetch_one(&mut *$tx)
                            .await?
                    }
                };
                let room = $crate::sql::quota_room($quota, count, fresh);
                let mut left = room;
                take.retain(|i| {
                    known.contains(hash(*i)) || {
                        left -= 1;
                        left >= 0
                    }
                });
                refused = (fresh - room) as u64;
                $rows = Some(count + room);
            }
        }
        (take, refused)
    }};
}

pub(crate) use take_within_quota;

/// URLs per multi-row upsert: 8 parameters each stays far below both backends' limits
/// (32,766 on SQLite, 65,535 on PostgreSQL).
pub(crate) const URL_CHUNK: usize = 500;

/// Paces a long write made of many short transactions (a big sitemap's URLs, a huge index's
/// children, retention's deletions) on SQLite, whose one write lock other writers wait for by
/// polling (its busy handler retries every 100 ms at most): a writer that begins its next
/// transaction the instant it committed the last would win every time and starve them until
/// their busy timeout fails. After [`WRITE_SLICE`] of back-to-back transactions it pauses for
/// [`WRITE_GAP`], longer than that poll, so a waiting writer gets in within a slice and a gap.
/// PostgreSQL locks rows, not the database: its pacer never pauses.
pub(crate) struct Pacer {
    enabled: bool,
    since: std::time::Instant,
}

/// How long a long SQLite write holds the lock, transaction after transaction, before a pause.
pub(crate) const WRITE_SLICE: std::time::Duration = std::time::Duration::from_millis(250);

/// The pause: longer than SQLite's longest busy-handler sleep (100 ms).
pub(crate) const WRITE_GAP: std::time::Duration = std::time::Duration::from_millis(120);

impl Pacer {
    pub(crate) fn new(enabled: bool) -> Self {
        Pacer { enabled, since: std::time::Instant::now() }
    }

    /// Before each transaction of the long write.
    pub(crate) async fn between(&mut self) {
        if self.enabled && self.since.elapsed() >= WRITE_SLICE {
            tokio::time::sleep(WRITE_GAP).await;
            self.since = std::time::Instant::now();
        }
    }
}

/// Pushes `(id, id, ...)` as bound parameters: the IN list of a statement built with
/// `QueryBuilder` (the same on both backends, which share no array type).
pub(crate) fn push_id_list<DB>(query: &mut sqlx::QueryBuilder<DB>, ids: &[i64])
where
    DB: sqlx::Database,
    for<'t> i64: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    query.push("(");
    let mut list = query.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    query.push(")");
}

/// Index children synchronised per transaction (two statements each): a few milliseconds of
/// SQLite's write lock, so a 50,000-child index never makes other writers wait for long.
pub(crate) const CHILD_CHUNK: usize = 500;

/// Escapes `%`, `_` and the backslash for a `LIKE ... ESCAPE` pattern whose escape is the backslash.
pub(crate) fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Turns "no row changed" into `NotFound`.
pub(crate) fn found(rows: u64, what: &'static str, id: i64) -> crate::Result<()> {
    if rows == 0 { Err(crate::Error::NotFound { what, id }) } else { Ok(()) }
}
