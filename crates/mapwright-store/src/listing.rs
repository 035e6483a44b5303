//! Sorting and filtering of sitemap lists (issue 23): the console's "My sitemaps" table and the
//! API's list of a site's sitemaps ask the same question, `SitemapListing`, answered by one
//! query ([`listing_methods!`], written once for both backends like those of `sql.rs`).
//!
//! The status is the roll-up's (what the table shows: for an index the worst of its own read
//! and its children's), the type the format the reader recognised, "last read" the last
//! download's time (never read sorts as the oldest), "errors" the rolled-up error count.

use serde::Serialize;

/// A status to filter on, as the console and the API name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    /// Read without errors or warnings (a 304 standing for such a read included).
    Success,
    /// Errors in the file or, for an index, in a child.
    Errors,
    /// Warnings and no errors.
    Warnings,
    /// Could not be fetched.
    Failed,
    /// Not read yet (or a child is not).
    Pending,
    /// Removed by the user.
    Removed,
}

/// A type to filter on: the format the last read recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeFilter {
    /// `<urlset>`.
    Sitemap,
    /// `<sitemapindex>`.
    SitemapIndex,
    /// RSS or RDF.
    Rss,
    /// Atom.
    Atom,
    /// One URL a line.
    Text,
    /// An OAI-PMH repository.
    OaiPmh,
}

/// What a list is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// The order sitemaps were added in (the default).
    #[default]
    Added,
    /// The sitemap's URL.
    Url,
    /// The last download (never read first, ascending).
    LastRead,
    /// The rolled-up status, best first ascending (ok, pending, warnings, errors, failed).
    Status,
    /// Rolled-up errors.
    Errors,
    /// URLs stored.
    Urls,
}

/// One sorted and filtered view of a list of sitemaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SitemapListing {
    /// Only sitemaps with this status.
    pub status: Option<StatusFilter>,
    /// Only sitemaps of this type.
    pub kind: Option<TypeFilter>,
    /// Only sitemaps with at least one error (rolled up).
    pub with_errors: bool,
    /// The sort key; ties in the order sitemaps were added.
    pub sort: SortKey,
    /// Descending.
    pub desc: bool,
}

impl StatusFilter {
    /// Every filter, in the order a form offers them.
    pub const ALL: [StatusFilter; 6] = [
        StatusFilter::Success,
        StatusFilter::Errors,
        StatusFilter::Warnings,
        StatusFilter::Failed,
        StatusFilter::Pending,
        StatusFilter::Removed,
    ];

    /// The name in query strings.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Success => "success",
            StatusFilter::Errors => "errors",
            StatusFilter::Warnings => "warnings",
            StatusFilter::Failed => "failed",
            StatusFilter::Pending => "pending",
            StatusFilter::Removed => "removed",
        }
    }

    /// The filter of a query string's name.
    pub fn parse(name: &str) -> Option<StatusFilter> {
        StatusFilter::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The SQL condition on `sm` (no parameters: the values are ours).
    fn sql(self) -> &'static str {
        match self {
            StatusFilter::Success => "sm.removed_at IS NULL AND sm.rollup_status IN ('ok', 'unchanged')",
            StatusFilter::Errors => "sm.removed_at IS NULL AND sm.rollup_status = 'errors'",
            StatusFilter::Warnings => "sm.removed_at IS NULL AND sm.rollup_status = 'warnings'",
            StatusFilter::Failed => "sm.removed_at IS NULL AND sm.rollup_status = 'failed'",
            StatusFilter::Pending => {
                "sm.removed_at IS NULL AND (sm.rollup_status IS NULL OR sm.rollup_status = 'pending')"
            }
            StatusFilter::Removed => "sm.removed_at IS NOT NULL",
        }
    }
}

impl TypeFilter {
    /// Every filter, in the order a form offers them.
    pub const ALL: [TypeFilter; 6] = [
        TypeFilter::Sitemap,
        TypeFilter::SitemapIndex,
        TypeFilter::Rss,
        TypeFilter::Atom,
        TypeFilter::Text,
        TypeFilter::OaiPmh,
    ];

    /// The name in query strings (the API's `type` values).
    pub fn as_str(self) -> &'static str {
        match self {
            TypeFilter::Sitemap => "sitemap",
            TypeFilter::SitemapIndex => "sitemap_index",
            TypeFilter::Rss => "rss",
            TypeFilter::Atom => "atom",
            TypeFilter::Text => "text",
            TypeFilter::OaiPmh => "oai_pmh",
        }
    }

    /// The filter of a query string's name.
    pub fn parse(name: &str) -> Option<TypeFilter> {
        TypeFilter::ALL.into_iter().find(|f| f.as_str() == name)
    }

    fn sql(self) -> &'static str {
        match self {
            TypeFilter::Sitemap => "sm.format = 'urlset'",
            TypeFilter::SitemapIndex => "sm.format = 'sitemapindex'",
            TypeFilter::Rss => "sm.format IN ('rss', 'rdf')",
            TypeFilter::Atom => "sm.format = 'atom'",
            TypeFilter::Text => "sm.format = 'text'",
            TypeFilter::OaiPmh => "sm.format = 'oai-pmh'",
        }
    }
}

impl SortKey {
    /// Every key, in the order a table's columns show them.
    pub const ALL: [SortKey; 6] =
        [SortKey::Added, SortKey::Url, SortKey::LastRead, SortKey::Status, SortKey::Errors, SortKey::Urls];

    /// The name in query strings.
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Added => "added",
            SortKey::Url => "url",
            SortKey::LastRead => "last_read",
            SortKey::Status => "status",
            SortKey::Errors => "errors",
            SortKey::Urls => "urls",
        }
    }

    /// The key of a query string's name.
    pub fn parse(name: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The SQL expression sorted on (NULLs made explicit: the backends order them apart).
    fn sql(self) -> &'static str {
        match self {
            SortKey::Added => "sm.id",
            SortKey::Url => "sm.url",
            SortKey::LastRead => "COALESCE(sm.last_downloaded_at, -1)",
            SortKey::Status => {
                "CASE WHEN sm.removed_at IS NOT NULL THEN -1 WHEN sm.rollup_status IN ('ok', 'unchanged') THEN 0 \
                 WHEN sm.rollup_status = 'warnings' THEN 2 WHEN sm.rollup_status = 'errors' THEN 3 \
                 WHEN sm.rollup_status = 'failed' THEN 4 ELSE 1 END"
            }
            SortKey::Errors => "sm.rollup_errors",
            SortKey::Urls => "sm.rollup_urls",
        }
    }
}

impl SitemapListing {
    /// Whether this is the plain list (no filter, in the order added).
    pub fn is_plain(&self) -> bool {
        *self == SitemapListing::default()
    }

    /// Appends ` AND ...` for each filter and the `ORDER BY` to a query on `sitemaps sm`.
    pub(crate) fn push_sql<DB: sqlx::Database>(&self, query: &mut sqlx::QueryBuilder<DB>) {
        if let Some(status) = self.status {
            query.push(" AND ").push(status.sql());
        }
        if let Some(kind) = self.kind {
            query.push(" AND ").push(kind.sql());
        }
        if self.with_errors {
            query.push(" AND sm.removed_at IS NULL AND sm.rollup_errors > 0");
        }
        let dir = if self.desc { " DESC" } else { " ASC" };
        query.push(" ORDER BY ").push(self.sort.sql()).push(dir).push(", sm.id").push(dir);
    }
}

/// The `Store` methods of sorted and filtered lists (see the module documentation).
macro_rules! listing_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn list_sitemaps_by_impl(
                &self,
                actor: Actor,
                site_id: Option<i64>,
                listing: &$crate::SitemapListing,
                offset: i64,
                limit: i64,
            ) -> Result<(Vec<SitemapSummary>, bool)> {
                let limit = limit.clamp(1, $crate::MAX_SITEMAPS_PER_SITE);
                let mut query = sqlx::QueryBuilder::new(summary_select!());
                query.push("WHERE ");
                match site_id {
                    // A site's sitemaps, children included (the API's list).
                    Some(site) => {
                        self.site_impl(actor, site).await?;
                        query.push("sm.site_id = ").push_bind(site);
                    }
                    // The table's rows: every sitemap of the user's sites that is no child.
                    // Driven by the user's memberships, not a scan of the service (`member_of!`).
                    None if actor.is_admin => {
                        query.push("sm.parent_id IS NULL");
                    }
                    None => {
                        query
                            .push("sm.parent_id IS NULL AND sm.site_id IN (SELECT m.site_id FROM site_members m WHERE m.user_id = ")
                            .push_bind(actor.user_id)
                            .push(")");
                    }
                }
                listing.push_sql(&mut query);
                query.push(" LIMIT ").push_bind(limit + 1).push(" OFFSET ").push_bind(offset.max(0));
                let mut items: Vec<SitemapSummary> = query.build_query_as().fetch_all(&self.pool).await?;
                let more = items.len() as i64 > limit;
                items.truncate(limit as usize);
                Ok((items, more))
            }
        }
    };
}
