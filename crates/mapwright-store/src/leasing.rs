//! The fetch queue's queries: leasing due sitemaps fairly, releasing them, the queue's depth;
//! written once for both backends like those of `sql.rs`, whose `impl_store!` expands
//! [`lease_methods!`] into inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls (see
//! `signups.rs`).

/// The `Store` methods of the fetch queue; `lock` is the lease's row lock (`FOR UPDATE ... SKIP LOCKED` on
/// PostgreSQL, nothing on SQLite, whose write transaction serialises leasers; see [`Turns`]).
macro_rules! lease_methods {
    ($ty:ty, lock = $lock:literal, backend = $backend:literal) => {
        impl $ty {
            pub(crate) async fn lease_sitemaps_impl(
                &self,
                worker: &str,
                now: Timestamp,
                limit: i64,
                lease_seconds: i64,
                policy: crate::LeasePolicy,
            ) -> Result<Vec<LeasedSitemap>> {
                if limit <= 0 {
                    return Ok(Vec::new());
                }
                let mut tx = self.begin_write().await?;
                // One leaser at a time (PostgreSQL: SQLite's write transaction serialises them
                // already). The lease reads the counts and the candidates in several statements,
                // each of which sees what committed before it: without this, a lease committed by
                // another process between them could be missing from the counts and present in
                // the candidates, and an owner or origin would pass its cap (seen: an owner with
                // 3 downloads under a cap of 2, two worker processes). A lease takes a few ms.
                if $backend == "postgres" {
                    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind($crate::leasing::LEASE_LOCK).execute(&mut *tx).await?;
                }
                // The leases in force, by owner and by origin (every process's).
                let held: Vec<(i64, String)> = sqlx::query_as(
                    "SELECT sm.owner_id, s.origin FROM sitemaps sm JOIN sites s ON s.id = sm.site_id \
                     WHERE sm.lease_expires_at > $1",
                )
                .bind(now)
                .fetch_all(&mut *tx)
                .await?;
                let mut turns = $crate::leasing::Turns::new(policy, limit, &held);
                // The owners with due work, the longest waiting first, a batch at a time until
                // enough owners have had their first turn (see `Turns`).
                let batch = (4 * limit).saturating_add(held.len() as i64).clamp(16, 1_000);
                let mut after: Option<(i64, i64)> = None;
                'owners: loop {
                    let owners: Vec<(i64, i64)> = sqlx::query_as(
                        "SELECT owner_id, MIN(next_fetch_at) AS due FROM sitemaps \
                         WHERE removed_at IS NULL AND site_verified AND next_fetch_at <= $1 \
                         GROUP BY owner_id HAVING (MIN(next_fetch_at), owner_id) > ($2, $3) \
                         ORDER BY due, owner_id LIMIT $4",
                    )
                    .bind(now)
                    .bind(after.map_or(i64::MIN, |a| a.0))
                    .bind(after.map_or(i64::MIN, |a| a.1))
                    .bind(batch)
                    .fetch_all(&mut *tx)
                    .await?;
                    for &(owner, due) in &owners {
                        after = Some((due, owner));
                        let mut from = (i64::MIN, i64::MIN);
                        while let Some(want) = turns.wants(owner) {
                            // The owner's due sitemaps in lease order, a page at a time (a page
                            // may end on origins whose caps are full).
                            let page: Vec<(i64, i64, String)> = sqlx::query_as(
                                "SELECT sm.id, sm.next_fetch_at, s.origin FROM sitemaps sm JOIN sites s ON s.id = sm.site_id \
                                 WHERE sm.owner_id = $1 AND sm.removed_at IS NULL AND sm.site_verified \
                                 AND sm.next_fetch_at <= $2 AND (sm.next_fetch_at, sm.id) > ($3, $4) \
                                 AND (sm.lease_expires_at IS NULL OR sm.lease_expires_at <= $2) \
                                 AND (sm.last_downloaded_at IS NULL OR sm.last_downloaded_at <= $2 - $5) \
                                 ORDER BY sm.next_fetch_at, sm.id LIMIT $6",
                            )
                            .bind(owner)
                            .bind(now)
                            .bind(from.0)
                            .bind(from.1)
                            .bind(policy.min_interval.max(0))
                            .bind(want)
                            .fetch_all(&mut *tx)
                            .await?;
                            for (id, next_fetch_at, origin) in &page {
                                from = (*next_fetch_at, *id);
                                turns.offer(owner, *id, *next_fetch_at, origin);
                            }
                            if (page.len() as i64) < want {
                                break;
                            }
                        }
                        if turns.enough() {
                            break 'owners;
                        }
                    }
                    if (owners.len() as i64) < batch {
                        break;
                    }
                }
                let picked = turns.picked();
                if picked.is_empty() {
                    tx.commit().await?;
                    return Ok(Vec::new());
                }
                // Taken in turn order, as long as still due and unleased; on PostgreSQL a row
                // another process is leasing is skipped, and the next candidate taken instead.
                let mut update = sqlx::QueryBuilder::new("UPDATE sitemaps SET lease_owner = ");
                update.push_bind(worker).push(", lease_expires_at = ").push_bind(now.saturating_add(lease_seconds));
                update.push(" WHERE id IN (SELECT sm.id FROM sitemaps sm WHERE sm.id IN ");
                $crate::sql::push_id_list(&mut update, &picked);
                update.push(" AND sm.removed_at IS NULL AND sm.next_fetch_at <= ").push_bind(now);
                update.push(" AND (sm.lease_expires_at IS NULL OR sm.lease_expires_at <= ").push_bind(now);
                update.push(") ORDER BY CASE sm.id");
                for (position, id) in picked.iter().enumerate() {
                    update.push(" WHEN ").push_bind(*id).push(" THEN ").push_bind(position as i64);
                }
                update.push(" END LIMIT ").push_bind(limit).push(" ");
                update.push($lock);
                update.push(") RETURNING id, site_id, url, parent_id, etag, last_modified, content_hash, lease_expires_at");
                let mut leased: Vec<LeasedSitemap> = update.build_query_as().fetch_all(&mut *tx).await?;
                tx.commit().await?;
                leased.sort_by_key(|l| l.id);
                Ok(leased)
            }

            pub(crate) async fn release_impl(&self, worker: &str, sitemap_id: i64) -> Result<()> {
                self.give_back(worker, sitemap_id, None).await
            }

            pub(crate) async fn postpone_impl(&self, worker: &str, sitemap_id: i64, held: &$crate::HeldRead) -> Result<()> {
                self.give_back(worker, sitemap_id, Some(held)).await
            }

            /// The lease given back without a download; a held read also moves the sitemap's
            /// next read and says when and why it was held (the next `complete` clears that).
            async fn give_back(&self, worker: &str, sitemap_id: i64, held: Option<&$crate::HeldRead>) -> Result<()> {
                let done = sqlx::query(
                    "UPDATE sitemaps SET lease_owner = NULL, lease_expires_at = NULL, \
                     next_fetch_at = COALESCE($3, next_fetch_at), held_at = COALESCE($4, held_at), \
                     held_reason = COALESCE($5, held_reason) WHERE id = $1 AND lease_owner = $2",
                )
                .bind(sitemap_id)
                .bind(worker)
                .bind(held.map(|h| h.until))
                .bind(held.map(|h| h.at))
                .bind(held.map(|h| $crate::sql::clean(&h.reason).into_owned()))
                .execute(&self.pool)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(Error::LeaseLost { sitemap_id, worker: worker.to_owned() });
                }
                Ok(())
            }

            pub(crate) async fn release_all_impl(&self, worker: &str) -> Result<u64> {
                let done = sqlx::query("UPDATE sitemaps SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1")
                    .bind(worker)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            pub(crate) async fn queue_depth_impl(&self, now: Timestamp) -> Result<i64> {
                // $3 is the only placeholder due_where! uses; $1 and $2 are bound to dummies
                // on PostgreSQL's demand that every placeholder up to the highest be typed.
                Ok(sqlx::query_scalar(concat!(
                    "SELECT COUNT(*) FROM sitemaps sm JOIN sites s ON s.id = sm.site_id WHERE $1 = $2 AND ",
                    due_where!()
                ))
                .bind(0_i64)
                .bind(0_i64)
                .bind(now)
                .fetch_one(&self.pool)
                .await?)
            }
        }
    };
}

/// Due and unleased: the WHERE clause shared by the lease query and the queue depth.
macro_rules! due_where {
    () => {
        "sm.removed_at IS NULL AND s.verified_at IS NOT NULL AND sm.next_fetch_at <= $3 \
         AND (sm.lease_expires_at IS NULL OR sm.lease_expires_at <= $3)"
    };
}

/// The key of the advisory lock PostgreSQL's leasers take in turn ("mapwrite" in ASCII; sqlx's
/// migrator derives its own key from the database's name).
pub(crate) const LEASE_LOCK: i64 = 0x6d61_7077_7269_7465;

/// Who takes which due sitemap in one lease: the fairness rules of [`LeasePolicy`] applied to
/// the sitemaps offered, owner by owner, in the order the lease query finds them.
///
/// The owners come longest waiting first (the oldest due sitemap of each, from
/// `sitemaps_due_owner`), each one's due sitemaps oldest first (`sitemaps_owner_due`). A
/// sitemap is taken when its origin has fewer than `per_origin` leases in force or taken in this
/// lease, and its owner fewer than `per_owner`; its turn is its owner's count with it. The lease
/// takes the taken sitemaps by turn (round-robin across owners: every owner's first before
/// anyone's second), then oldest due first. Owners are read until `limit` sitemaps have turn 1
/// or none is left: an owner further down the list could only add turn-1 sitemaps due later
/// than those, so a lease reads a few owners and a few sitemaps each, not every due sitemap of
/// the service (bench/serve/RESULTS.md).
pub(crate) struct Turns {
    policy: crate::LeasePolicy,
    limit: i64,
    by_owner: std::collections::HashMap<i64, i64>,
    by_origin: std::collections::HashMap<String, i64>,
    /// Taken in this lease, per owner (at most `limit` each).
    now_by_owner: std::collections::HashMap<i64, i64>,
    taken: Vec<(i64, i64, i64)>,
    first_turns: i64,
}

impl Turns {
    /// Starts from the leases in force: `(owner, origin)` of each.
    pub(crate) fn new(policy: crate::LeasePolicy, limit: i64, held: &[(i64, String)]) -> Turns {
        let mut by_owner = std::collections::HashMap::new();
        let mut by_origin = std::collections::HashMap::new();
        for (owner, origin) in held {
            *by_owner.entry(*owner).or_insert(0) += 1;
            *by_origin.entry(origin.clone()).or_insert(0_i64) += 1;
        }
        Turns {
            policy,
            limit,
            by_owner,
            by_origin,
            now_by_owner: std::collections::HashMap::new(),
            taken: Vec::new(),
            first_turns: 0,
        }
    }

    /// How many more of `owner`'s sitemaps to read (a page), or `None` when it can take no more.
    pub(crate) fn wants(&self, owner: i64) -> Option<i64> {
        let room = self.room(owner);
        (room > 0).then(|| room.saturating_add(4).min(256))
    }

    /// A due sitemap of `owner`, in the owner's lease order: taken if the caps allow.
    pub(crate) fn offer(&mut self, owner: i64, id: i64, next_fetch_at: i64, origin: &str) {
        let at_origin = self.by_origin.get(origin).copied().unwrap_or(0);
        if self.room(owner) <= 0 || at_origin >= self.policy.per_origin.max(1) {
            return;
        }
        let turn = self.by_owner.get(&owner).copied().unwrap_or(0) + 1;
        self.by_owner.insert(owner, turn);
        *self.now_by_owner.entry(owner).or_insert(0) += 1;
        *self.by_origin.entry(origin.to_owned()).or_insert(0) += 1;
        self.first_turns += i64::from(turn == 1);
        self.taken.push((turn, next_fetch_at, id));
    }

    /// What `owner` may still take: under its cap, and no more than the lease wants.
    fn room(&self, owner: i64) -> i64 {
        let has = self.by_owner.get(&owner).copied().unwrap_or(0);
        let now = self.now_by_owner.get(&owner).copied().unwrap_or(0);
        self.policy.per_owner.max(1).saturating_sub(has).min(self.limit - now)
    }

    /// `limit` sitemaps have turn 1: no owner further down can come before them.
    pub(crate) fn enough(&self) -> bool {
        self.first_turns >= self.limit
    }

    /// The sitemaps taken, in lease order (turn, oldest due, id), at most twice `limit` (the
    /// rest stand in for rows another process is leasing at the same moment).
    pub(crate) fn picked(mut self) -> Vec<i64> {
        self.taken.sort_unstable();
        let keep = usize::try_from(self.limit.saturating_mul(2)).unwrap_or(usize::MAX);
        self.taken.into_iter().take(keep).map(|(_, _, id)| id).collect()
    }
}

/// A read of a sitemap the outbound gate held back ([`Store::postpone`](crate::Store::postpone)):
/// no read at all, so no download records it; the sitemap keeps when and why instead, so its
/// user learns why it was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRead {
    /// When the gate held it.
    pub at: crate::Timestamp,
    /// The gate's words.
    pub reason: String,
    /// When the sitemap is due again.
    pub until: crate::Timestamp,
}
