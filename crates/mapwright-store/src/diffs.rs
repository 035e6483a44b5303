//! Per-read diffs (issue 23): what each merged read of a sitemap changed in its URL list, the
//! URLs added, removed and changed since the previous read, kept per download.
//!
//! The merge knows them already ([`ingest`](crate::ingest) stages only new and changed URLs,
//! and the removed ones are the previous set's keys the read did not list), so [`record_diff!`]
//! writes them in the merge's own transaction: a read that fails before its merge commits
//! stores no diff, and one whose merge committed always has one. A diff is compact: one row of
//! counts (exact) and, per URL, its id and the kind of change (never a copy of the URL), at
//! most [`MAX_DIFF_URLS`] of each kind; a read that changed more lists the first ones and says
//! how many it changed in all. A changed URL's row keeps its lastmod, changefreq and priority
//! before and by the read (migration 0060), so a diff says old -> new ([`DiffUrl::fields`])
//! however the URL changed since; a sitemap's first read is marked (`first_read`), so it is
//! said in one line. An index's page rolls up its children's latest reads ([`ChildChanges`]). A removed URL keeps its row (`removed_at` set), and retention
//! deletes no URL row a diff names, so a diff names its removed URLs for as long as it is kept.
//!
//! The diff is linked to its download by `complete` ([`link_diff!`]), right after the merge;
//! diffs go with their downloads (retention keeps the newest downloads of each sitemap), and one
//! whose download never came (the worker died in between) is deleted after a day.
//! [`diff_methods!`] stamps out the reading side for each backend, like the macros of `sql.rs`.

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

/// URLs of each kind (added, changed, removed) a diff lists: enough to read what a daily read
/// changed, while a read that rewrote a whole 50,000-URL sitemap stores 3,000 ids, not the
/// sitemap. The counts are exact whatever the cap.
pub const MAX_DIFF_URLS: i64 = 1_000;

/// Unlinked diffs older than this are deleted by retention: a download is stored within
/// seconds of its merge, so such a diff belongs to a worker that died in between.
pub(crate) const ORPHAN_DIFF_MAX_AGE: i64 = 24 * 3600;

/// How a URL changed in a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The sitemap did not list it before and lists it now.
    Added,
    /// Listed before and now, with another lastmod, changefreq or priority.
    Changed,
    /// Listed before, no longer (after a complete read).
    Removed,
}

impl Change {
    /// Every kind, in the order the console shows them.
    pub const ALL: [Change; 3] = [Change::Added, Change::Removed, Change::Changed];

    /// The name the API and the console use.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Changed => "changed",
            Change::Removed => "removed",
        }
    }

    /// The kind of a name, as [`Change::as_str`] spells it.
    pub fn parse(name: &str) -> Option<Change> {
        Change::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The stored code (`read_diff_urls.kind`).
    pub(crate) fn code(self) -> i16 {
        match self {
            Change::Added => 0,
            Change::Changed => 1,
            Change::Removed => 2,
        }
    }
}

row! {
/// A download of a sitemap with what its read changed in the sitemap's URL list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadDiff {
    /// The download.
    pub download_id: i64,
    /// Its sitemap.
    pub sitemap_id: i64,
    /// When the download finished.
    pub downloaded_at: Timestamp,
    /// The download's status ("ok", "warnings", "errors", "failed", "unchanged").
    pub status: String,
    /// Its HTTP status, if a response came.
    pub http_status: Option<i64>,
    /// Whether the read was merged, so that a diff was stored: false for a download that read
    /// nothing (a 304, a failed fetch) and for those stored before diffs were.
    pub recorded: bool,
    /// URLs added (exact).
    pub added: i64,
    /// URLs removed (exact).
    pub removed: i64,
    /// URLs whose lastmod, changefreq or priority changed (exact).
    pub changed: i64,
    /// Added URLs listed (at most [`MAX_DIFF_URLS`]).
    pub added_listed: i64,
    /// Removed URLs listed.
    pub removed_listed: i64,
    /// Changed URLs listed.
    pub changed_listed: i64,
    /// The sitemap's first merged read: every URL it lists is added (the console says so in one
    /// line instead of listing them).
    pub first_read: bool,
}
}

impl ReadDiff {
    /// Whether the read changed nothing in the URL list.
    pub fn is_empty(&self) -> bool {
        self.added == 0 && self.removed == 0 && self.changed == 0
    }

    /// Whether some changed URLs are not listed (the read changed more than the cap).
    pub fn truncated(&self) -> bool {
        self.added > self.added_listed || self.removed > self.removed_listed || self.changed > self.changed_listed
    }

    /// The count of one kind, and how many of it are listed.
    pub fn count(&self, change: Change) -> (i64, i64) {
        match change {
            Change::Added => (self.added, self.added_listed),
            Change::Changed => (self.changed, self.changed_listed),
            Change::Removed => (self.removed, self.removed_listed),
        }
    }
}

/// A changed URL's id, then its lastmod, changefreq and priority before the read (as the merge
/// read them before its rewrite) and as the read gave them.
pub(crate) type Before =
    (i64, Option<String>, Option<String>, Option<f64>, Option<String>, Option<String>, Option<f64>);

row! {
/// A URL a diff lists: how it changed, the URL as it is stored now (a removed URL with its
/// `removed_at`), and for a changed URL what it said before the read ([`DiffUrl::fields`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffUrl {
    /// The URL's id (as in the site's URL list).
    pub url_id: i64,
    /// "added", "changed" or "removed" ([`Change`]).
    pub change: String,
    /// The URL.
    pub loc: String,
    /// Its lastmod now.
    pub lastmod: Option<String>,
    /// Its changefreq now.
    pub changefreq: Option<String>,
    /// Its priority now.
    pub priority: Option<f64>,
    /// When no sitemap of the site listed it any more, if none does.
    pub removed_at: Option<Timestamp>,
    /// Whether its values before and by the read were kept (a changed URL of a read merged
    /// since migration 0060); the `old_*` and `new_*` fields mean nothing otherwise.
    #[serde(skip)]
    pub old_kept: bool,
    /// Its lastmod before the read.
    #[serde(skip)]
    pub old_lastmod: Option<String>,
    /// Its changefreq before the read.
    #[serde(skip)]
    pub old_changefreq: Option<String>,
    /// Its priority before the read.
    #[serde(skip)]
    pub old_priority: Option<f64>,
    /// Its lastmod as the read gave it (later reads may have changed it again).
    #[serde(skip)]
    pub new_lastmod: Option<String>,
    /// Its changefreq as the read gave it.
    #[serde(skip)]
    pub new_changefreq: Option<String>,
    /// Its priority as the read gave it.
    #[serde(skip)]
    pub new_priority: Option<f64>,
}
}

/// One field of a changed URL, old -> new (before the read, by the read), as every face shows
/// it (`None`: not given).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// "lastmod", "changefreq" or "priority".
    pub field: &'static str,
    /// What the sitemap said before the read.
    pub old: Option<String>,
    /// What it says now.
    pub new: Option<String>,
}

impl DiffUrl {
    /// The fields that changed, old -> new, in the order lastmod, changefreq, priority: the
    /// one decision of what a changed URL's diff says, for the API, its exports and the
    /// console. Empty for an added or removed URL and when the old values were not kept.
    pub fn fields(&self) -> Vec<FieldChange> {
        if !self.old_kept || self.change != Change::Changed.as_str() {
            return Vec::new();
        }
        let priority = |p: Option<f64>| p.map(|p| p.to_string());
        [
            ("lastmod", self.old_lastmod.clone(), self.new_lastmod.clone()),
            ("changefreq", self.old_changefreq.clone(), self.new_changefreq.clone()),
            ("priority", priority(self.old_priority), priority(self.new_priority)),
        ]
        .into_iter()
        .filter(|(_, old, new)| old != new)
        .map(|(field, old, new)| FieldChange { field, old, new })
        .collect()
    }
}

row! {
/// What an index's child changed at its latest read: the roll-up of an index's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChildChange {
    /// The child sitemap.
    pub sitemap_id: i64,
    /// Its URL.
    pub url: String,
    /// Its latest download.
    pub download_id: i64,
    /// When that download finished.
    pub downloaded_at: Timestamp,
    /// Its status ("unchanged" for a 304, which changed nothing).
    pub status: String,
    /// URLs added by that read.
    pub added: i64,
    /// URLs removed.
    pub removed: i64,
    /// URLs changed.
    pub changed: i64,
    /// That read was the child's first.
    pub first_read: bool,
}
}

row! {
/// The sums of [`ChildChange`] over every live child of an index that was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChangeTotals {
    /// Live children with a download.
    pub children: i64,
    /// Of them, those whose latest read changed something.
    pub changed_children: i64,
    /// URLs added in all.
    pub added: i64,
    /// URLs removed in all.
    pub removed: i64,
    /// URLs changed in all.
    pub changed: i64,
}
}

/// An index's changes rolled up: the totals, and the children whose latest read changed most.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChildChanges {
    /// Over every child.
    pub totals: ChangeTotals,
    /// The children that changed, most changes first, at most the limit asked for.
    pub items: Vec<ChildChange>,
}

/// The latest read of each live child of the index `$1` (of the site `$2`), as a `latest`
/// table: one index probe per child (downloads by sitemap and time), at most the protocol's
/// 50,000.
macro_rules! latest_children {
    () => {
        "WITH latest AS (SELECT c.id AS sitemap_id, c.url, d.id AS download_id, d.downloaded_at, d.status, \
         COALESCE(r.added, 0) AS added, COALESCE(r.removed, 0) AS removed, COALESCE(r.changed, 0) AS changed, \
         COALESCE(r.first_read, FALSE) AS first_read FROM sitemaps c JOIN downloads d ON d.id = \
         (SELECT d2.id FROM downloads d2 WHERE d2.sitemap_id = c.id ORDER BY d2.downloaded_at DESC, d2.id DESC LIMIT 1) \
         LEFT JOIN read_diffs r ON r.download_id = d.id \
         WHERE c.site_id = $2 AND c.parent_id = $1 AND c.id <> $1 AND c.removed_at IS NULL) "
    };
}

pub(crate) use latest_children;

/// Records the diff of a merge in its transaction `$tx`; evaluates to the diff's id. `$write`
/// is the merge's [`UrlWrite`](crate::UrlWrite) (the counts), `$gone` its plan's keys of the
/// removed URLs, `$added` the ids of the new rows when the merge copied them in, `$before` the
/// changed URLs with their values before and by the read (the merge read them before its
/// rewrite), `$first` whether this is the sitemap's first merged read. Otherwise the added URLs
/// are the stage's rows of kind 0 (superseded rows are gone by now), in reading order; a new URL
/// the quota refused has no row and is not listed. Each list is one statement driven by the
/// stage's rows or the given keys, through `urls(site_id, loc_hash)`: the cost is what changed,
/// capped, never the sitemap.
macro_rules! record_diff {
    (
        $tx:ident, $stage_id:expr, $site_id:expr, $sitemap_id:expr, $now:expr, $write:expr, $gone:expr, $added:expr,
        $before:expr, $first:expr
    ) => {{
        let (stage_id, site_id, sitemap_id, now): (i64, i64, i64, i64) = ($stage_id, $site_id, $sitemap_id, $now);
        let write: &$crate::UrlWrite = $write;
        let gone: &[[u8; 16]] = $gone;
        // The ids of the new URL rows, in reading order, when the merge copied them in itself
        // (their rows are not in `staged_urls`).
        let added_ids: Option<&[i64]> = $added;
        // The changed URLs the merge listed, with what they said before it rewrote them.
        let before: &[$crate::diffs::Before] = $before;
        let first_read: bool = $first;
        let cap = $crate::diffs::MAX_DIFF_URLS;
        let (added, changed, removed) = (write.added as i64, write.changed as i64, write.removed as i64);
        let diff: i64 = sqlx::query_scalar(
            "INSERT INTO read_diffs (sitemap_id, read_at, added, removed, changed, added_listed, removed_listed, \
             changed_listed, first_read) VALUES ($1, $2, $3, $4, $5, 0, 0, 0, $6) RETURNING id",
        )
        .bind(sitemap_id)
        .bind(now)
        .bind(added)
        .bind(removed)
        .bind(changed)
        .bind(first_read)
        .fetch_one(&mut *$tx)
        .await?;
        let mut listed = [0_i64; 3];
        if let Some(ids) = added_ids {
            let ids = &ids[..ids.len().min(cap as usize)];
            for chunk in ids.chunks($crate::sql::CHILD_CHUNK) {
                let mut insert = sqlx::QueryBuilder::new("INSERT INTO read_diff_urls (diff_id, url_id, kind) ");
                insert.push_values(chunk, |mut b, id| {
                    b.push_bind(diff).push_bind(*id).push_bind($crate::Change::Added.code());
                });
                insert.push(" ON CONFLICT DO NOTHING");
                listed[0] += insert.build().execute(&mut *$tx).await?.rows_affected() as i64;
            }
        } else if added > 0 {
            // Every staged row has its URL row unless the quota refused some: then the first
            // rows with one are listed, else the first rows are taken before the join (which
            // PostgreSQL otherwise runs for all 50,000 rows of a first read, then sorts:
            // 0.8 s a child).
            let sql = if write.refused == 0 {
                "INSERT INTO read_diff_urls (diff_id, url_id, kind) SELECT $1, u.id, s.kind FROM \
                 (SELECT loc_hash, kind, seq FROM staged_urls WHERE stage_id = $3 AND kind = $4 ORDER BY seq LIMIT $5) s \
                 JOIN urls u ON u.site_id = $2 AND u.loc_hash = s.loc_hash ON CONFLICT DO NOTHING"
            } else {
                "INSERT INTO read_diff_urls (diff_id, url_id, kind) SELECT $1, u.id, s.kind FROM staged_urls s \
                 JOIN urls u ON u.site_id = $2 AND u.loc_hash = s.loc_hash WHERE s.stage_id = $3 AND s.kind = $4 \
                 ORDER BY s.seq LIMIT $5 ON CONFLICT DO NOTHING"
            };
            listed[0] = sqlx::query(sql)
                .bind(diff)
                .bind(site_id)
                .bind(stage_id)
                .bind($crate::Change::Added.code())
                .bind(cap)
                .execute(&mut *$tx)
                .await?
                .rows_affected() as i64;
        }
        // The changed URLs, each with what it said before the read (the merge read it before
        // its rewrite).
        for chunk in before.chunks($crate::sql::CHILD_CHUNK) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO read_diff_urls (diff_id, url_id, kind, old_kept, old_lastmod, old_changefreq, old_priority, \
                 new_lastmod, new_changefreq, new_priority) ",
            );
            insert.push_values(chunk, |mut b, (id, lastmod, changefreq, priority, new_lastmod, new_changefreq, new_priority)| {
                b.push_bind(diff)
                    .push_bind(*id)
                    .push_bind($crate::Change::Changed.code())
                    .push_bind(true)
                    .push_bind(lastmod)
                    .push_bind(changefreq)
                    .push_bind(*priority)
                    .push_bind(new_lastmod)
                    .push_bind(new_changefreq)
                    .push_bind(*new_priority);
            });
            insert.push(" ON CONFLICT DO NOTHING");
            listed[2] += insert.build().execute(&mut *$tx).await?.rows_affected() as i64;
        }
        if removed > 0 {
            let keys = &gone[..gone.len().min(cap as usize)];
            for chunk in keys.chunks($crate::sql::CHILD_CHUNK) {
                let mut insert = sqlx::QueryBuilder::new("INSERT INTO read_diff_urls (diff_id, url_id, kind) SELECT ");
                insert.push_bind(diff).push(", u.id, ").push_bind($crate::Change::Removed.code());
                insert.push(" FROM urls u WHERE u.site_id = ").push_bind(site_id).push(" AND u.loc_hash IN (");
                let mut keys = insert.separated(", ");
                for key in chunk {
                    keys.push_bind(key.as_slice());
                }
                insert.push(") ON CONFLICT DO NOTHING");
                listed[1] += insert.build().execute(&mut *$tx).await?.rows_affected() as i64;
            }
        }
        if listed != [0; 3] {
            sqlx::query(
                "UPDATE read_diffs SET added_listed = $1, removed_listed = $2, changed_listed = $3 WHERE id = $4",
            )
            .bind(listed[0])
            .bind(listed[1])
            .bind(listed[2])
            .bind(diff)
            .execute(&mut *$tx)
            .await?;
        }
        diff
    }};
}

pub(crate) use record_diff;

/// Links the diff of a download's merge (`$diff`, an `Option<i64>`) to the download, in
/// `complete`'s transaction `$tx`. Only an unlinked diff of the same sitemap is taken.
macro_rules! link_diff {
    ($tx:ident, $diff:expr, $download_id:expr, $sitemap_id:expr) => {{
        if let Some(diff) = $diff {
            sqlx::query(
                "UPDATE read_diffs SET download_id = $1 WHERE id = $2 AND sitemap_id = $3 AND download_id IS NULL",
            )
            .bind($download_id)
            .bind(diff)
            .bind($sitemap_id)
            .execute(&mut *$tx)
            .await?;
        }
    }};
}

pub(crate) use link_diff;

/// The columns of a [`ReadDiff`] from `downloads d LEFT JOIN read_diffs r`.
macro_rules! read_diff_cols {
    () => {
        "d.id AS download_id, d.sitemap_id, d.downloaded_at, d.status, d.http_status, r.id IS NOT NULL AS recorded, \
         COALESCE(r.added, 0) AS added, COALESCE(r.removed, 0) AS removed, COALESCE(r.changed, 0) AS changed, \
         COALESCE(r.added_listed, 0) AS added_listed, COALESCE(r.removed_listed, 0) AS removed_listed, \
         COALESCE(r.changed_listed, 0) AS changed_listed, COALESCE(r.first_read, FALSE) AS first_read"
    };
}

pub(crate) use read_diff_cols;

/// The `Store` methods that read diffs (see the module documentation), for one backend.
macro_rules! diff_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn list_read_diffs_impl(
                &self,
                actor: Actor,
                sitemap_id: i64,
                limit: i64,
            ) -> Result<Vec<$crate::ReadDiff>> {
                self.sitemap_impl(actor, sitemap_id).await?;
                Ok(sqlx::query_as(concat!(
                    "SELECT ",
                    $crate::diffs::read_diff_cols!(),
                    " FROM downloads d LEFT JOIN read_diffs r ON r.download_id = d.id WHERE d.sitemap_id = $1 \
                     ORDER BY d.downloaded_at DESC, d.id DESC LIMIT $2"
                ))
                .bind(sitemap_id)
                .bind(limit.clamp(1, 1000))
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn child_changes_impl(
                &self,
                actor: Actor,
                index_id: i64,
                limit: i64,
            ) -> Result<$crate::ChildChanges> {
                let index = self.sitemap_impl(actor, index_id).await?;
                let totals = sqlx::query_as(concat!(
                    $crate::diffs::latest_children!(),
                    "SELECT COUNT(*) AS children, \
                     CAST(COALESCE(SUM(CASE WHEN added + removed + changed > 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS changed_children, \
                     CAST(COALESCE(SUM(added), 0) AS BIGINT) AS added, CAST(COALESCE(SUM(removed), 0) AS BIGINT) AS removed, \
                     CAST(COALESCE(SUM(changed), 0) AS BIGINT) AS changed FROM latest"
                ))
                .bind(index_id)
                .bind(index.site_id)
                .fetch_one(&self.pool)
                .await?;
                let items = sqlx::query_as(concat!(
                    $crate::diffs::latest_children!(),
                    "SELECT sitemap_id, url, download_id, downloaded_at, status, added, removed, changed, first_read \
                     FROM latest WHERE added + removed + changed > 0 ORDER BY added + removed + changed DESC, sitemap_id LIMIT $3"
                ))
                .bind(index_id)
                .bind(index.site_id)
                .bind(limit.clamp(1, 1000))
                .fetch_all(&self.pool)
                .await?;
                Ok($crate::ChildChanges { totals, items })
            }

            pub(crate) async fn read_diff_impl(&self, actor: Actor, download_id: i64) -> Result<$crate::ReadDiff> {
                sqlx::query_as(concat!(
                    "SELECT ",
                    $crate::diffs::read_diff_cols!(),
                    " FROM downloads d JOIN sitemaps sm ON sm.id = d.sitemap_id JOIN sites s ON s.id = sm.site_id \
                     LEFT JOIN read_diffs r ON r.download_id = d.id WHERE d.id = $1 AND ",
                    owned!("$2", "$3")
                ))
                .bind(download_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?
                .ok_or(Error::NotFound { what: "download", id: download_id })
            }

            pub(crate) async fn list_diff_urls_impl(
                &self,
                actor: Actor,
                download_id: i64,
                change: Option<$crate::Change>,
                after: i64,
                limit: i64,
            ) -> Result<Page<$crate::DiffUrl>> {
                let found: Option<(Option<i64>, i64)> = sqlx::query_as(concat!(
                    "SELECT r.id, sm.site_id FROM downloads d JOIN sitemaps sm ON sm.id = d.sitemap_id \
                     JOIN sites s ON s.id = sm.site_id LEFT JOIN read_diffs r ON r.download_id = d.id \
                     WHERE d.id = $1 AND ",
                    owned!("$2", "$3")
                ))
                .bind(download_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                let Some((diff, site_id)) = found else {
                    return Err(Error::NotFound { what: "download", id: download_id });
                };
                let Some(diff) = diff else {
                    return Ok(Page { items: Vec::new(), next_after: None });
                };
                let limit = limit.clamp(1, 10_000);
                let items = sqlx::query_as(
                    "SELECT r.url_id, CASE r.kind WHEN 0 THEN 'added' WHEN 1 THEN 'changed' ELSE 'removed' END AS change, \
                     u.loc, u.lastmod, u.changefreq, u.priority, u.removed_at, r.old_kept, r.old_lastmod, \
                     r.old_changefreq, r.old_priority, r.new_lastmod, r.new_changefreq, r.new_priority FROM read_diff_urls r \
                     JOIN urls u ON u.id = r.url_id WHERE r.diff_id = $1 AND u.site_id = $2 AND ($3 OR r.kind = $4) \
                     AND r.url_id > $5 ORDER BY r.url_id LIMIT $6",
                )
                .bind(diff)
                .bind(site_id)
                .bind(change.is_none())
                .bind(change.map_or(0, $crate::Change::code))
                .bind(after.max(0))
                .bind(limit + 1)
                .fetch_all(&self.pool)
                .await?;
                Ok(Page::from_one_extra(items, limit, |u: &$crate::DiffUrl| u.url_id))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_names_round_trip() {
        for change in Change::ALL {
            assert_eq!(Change::parse(change.as_str()), Some(change));
            assert_eq!(serde_json::to_value(change).unwrap(), change.as_str());
        }
        assert_eq!(Change::parse("gone"), None);
        let codes: Vec<i16> = Change::ALL.into_iter().map(Change::code).collect();
        assert_eq!(codes, [0, 2, 1]);
    }
}
