//! Sorting and filtering of sitemap lists (issue 23): the console's "My sitemaps" table and the
//! API's list of a site's sitemaps ask the same question, `SitemapListing`, answered by one
//! query ([`listing_methods!`], written once for both backends like those of `sql.rs`).
//!
//! The status is the word the row shows ([`STATUS_WORD_SQL`]: for an index its tree's, for a
//! site not verified "paused"), the type the format the reader recognised, "last read" the last
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
    /// Not read while its site is not verified (lost or never had its proof).
    Paused,
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
    pub const ALL: [StatusFilter; 7] = [
        StatusFilter::Success,
        StatusFilter::Errors,
        StatusFilter::Warnings,
        StatusFilter::Failed,
        StatusFilter::Pending,
        StatusFilter::Paused,
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
            StatusFilter::Paused => "paused",
        }
    }

    /// The filter of a query string's name.
    pub fn parse(name: &str) -> Option<StatusFilter> {
        StatusFilter::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The SQL condition on `sm` (no parameters: the values are ours): the row's word, as
    /// [`STATUS_WORD_SQL`] decides it, is this filter's.
    fn sql(self) -> String {
        format!("({STATUS_WORD_SQL}) = '{}'", self.as_str())
    }
}

/// The status word a row of `sitemaps sm` shows, as a filter's name: the one decision the
/// console's words and the API's `status_word` take (`mapwright-server`'s `status::word_key`
/// is this expression in Rust, and a test of the server holds the two to the same answer on
/// every kind of row), so a filter lists exactly the rows that show its word. In order:
/// removed; paused (the site is not verified: nothing is read); pending (never read); failed
/// (its own fetch); errors or warnings (its own or, for an index, its tree's, a child that could
/// not be fetched counting as an error of the tree); pending (a child not read yet); success.
pub(crate) const STATUS_WORD_SQL: &str = "CASE WHEN sm.removed_at IS NOT NULL THEN 'removed' \
     WHEN NOT sm.site_verified THEN 'paused' \
     WHEN sm.status IS NULL OR sm.status = 'pending' THEN 'pending' \
     WHEN sm.status = 'failed' THEN 'failed' \
     WHEN sm.errors > 0 OR sm.rollup_errors > 0 OR sm.status = 'errors' OR sm.rollup_status IN ('errors', 'failed') \
     THEN 'errors' \
     WHEN sm.warnings > 0 OR sm.rollup_warnings > 0 OR sm.status = 'warnings' OR sm.rollup_status = 'warnings' \
     THEN 'warnings' \
     WHEN sm.rollup_status IS NULL OR sm.rollup_status = 'pending' THEN 'pending' \
     ELSE 'success' END";

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
    /// The status sorts by the word shown ([`STATUS_WORD_SQL`]), best first.
    fn sql(self) -> String {
        match self {
            SortKey::Added => "sm.id".into(),
            SortKey::Url => "sm.url".into(),
            SortKey::LastRead => "COALESCE(sm.last_downloaded_at, -1)".into(),
            SortKey::Status => format!(
                "CASE ({STATUS_WORD_SQL}) WHEN 'removed' THEN -1 WHEN 'success' THEN 0 WHEN 'warnings' THEN 2 \
                 WHEN 'errors' THEN 3 WHEN 'failed' THEN 4 ELSE 1 END"
            ),
            SortKey::Errors => "sm.rollup_errors".into(),
            SortKey::Urls => "sm.rollup_urls".into(),
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
