//! E-mail alerts on a sitemap's status getting worse (issue 23): each member's choice per site,
//! the unsubscribe link's token, the one-mail-a-day limit, and the last status judged per
//! sitemap. Written once for both backends like the queries of `sql.rs`, whose `impl_store!`
//! expands [`alert_methods!`] into inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls.
//!
//! The order of statuses, best first: `ok`, `warnings`, `errors`, `failed` (couldn't fetch). A
//! sitemap is judged on its roll-up (`rollup_status`: its own verdict, or for an index the worst
//! over its live tree); pending (no verdict yet, or a child not read yet) is outside the order:
//! it neither worsens nor resets what was last judged, so a first read never alerts and a
//! verdict after a pending spell is compared with the verdict before it.
//!
//! Everything that must hold across processes is one statement: the mark of a sitemap moves by
//! compare-and-set (two reads of one index's children at once tell its worsening once), and a
//! mail is claimed by an upsert that only succeeds when the member's last alert of the site is
//! a day old.

use serde::Serialize;

/// A member's e-mail alerts for one site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlertSetting {
    /// The site.
    pub site_id: i64,
    /// Whether alerts about this site are mailed to the caller.
    pub enabled: bool,
    /// Whether the caller chose; `false`: the role's default (on for owners, off for readers).
    pub chosen: bool,
}

/// What an unsubscribe link's token stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlertLink {
    /// The site.
    pub site_id: i64,
    /// Its origin.
    pub origin: String,
    /// The address the alerts go to.
    pub email: String,
    /// Whether they are on now.
    pub enabled: bool,
}

/// A sitemap whose roll-up got worse at a read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Worsening {
    /// The sitemap.
    pub sitemap_id: i64,
    /// Its URL.
    pub url: String,
    /// An index: `from` and `to` are its tree's roll-up.
    pub is_index: bool,
    /// Its own last verdict (an index's own read), `failed` when its own fetch failed.
    pub own_status: Option<String>,
    /// The status judged before (`ok`, `warnings`, `errors`, `failed`).
    pub from: String,
    /// The status now, worse than `from`.
    pub to: String,
    /// Errors of the roll-up now.
    pub errors: i64,
    /// Warnings of the roll-up now.
    pub warnings: i64,
    /// The HTTP status of its last fetch.
    pub http_status: Option<i64>,
}

/// A member to mail now, the day's mail claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRecipient {
    /// The user.
    pub user_id: i64,
    /// The address.
    pub email: String,
    /// The token of the unsubscribe link.
    pub token: String,
}

/// The rank of a status in the alerts' order (worst highest); `None`: pending, outside it.
pub fn alert_rank(status: Option<&str>) -> Option<u8> {
    match status? {
        "ok" | "unchanged" => Some(0),
        "warnings" => Some(1),
        "errors" => Some(2),
        "failed" => Some(3),
        _ => None,
    }
}

/// The role's default: owners get alerts unless they turn them off, readers once they turn
/// them on (a reader may be one of many people who only look).
pub(crate) fn default_enabled(role: Option<&str>) -> bool {
    role == Some("owner")
}

/// The `Store` methods of alerts (see the module documentation).
macro_rules! alert_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn alert_setting_impl(&self, actor: Actor, site_id: i64) -> Result<$crate::AlertSetting> {
                self.site_impl(actor, site_id).await?;
                let row: Option<(String, Option<bool>)> = sqlx::query_as(
                    "SELECT m.role, a.enabled FROM site_members m LEFT JOIN alert_settings a \
                     ON a.site_id = m.site_id AND a.user_id = m.user_id WHERE m.site_id = $1 AND m.user_id = $2",
                )
                .bind(site_id)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                // An admin who is no member sees the site but is mailed nothing.
                let (role, enabled) = match row {
                    Some((role, enabled)) => (Some(role), enabled),
                    None => (None, None),
                };
                let member = role.is_some();
                Ok($crate::AlertSetting {
                    site_id,
                    enabled: member && enabled.unwrap_or_else(|| $crate::alerts::default_enabled(role.as_deref())),
                    chosen: enabled.is_some(),
                })
            }

            pub(crate) async fn set_alerts_impl(&self, actor: Actor, site_id: i64, enabled: bool) -> Result<$crate::AlertSetting> {
                self.site_impl(actor, site_id).await?;
                let member: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM site_members WHERE site_id = $1 AND user_id = $2")
                        .bind(site_id)
                        .bind(actor.user_id)
                        .fetch_optional(&self.pool)
                        .await?;
                if member.is_none() {
                    return Err(Error::Refused("alerts go to the site's members: you are not one".into()));
                }
                sqlx::query(
                    "INSERT INTO alert_settings (site_id, user_id, enabled, token) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (site_id, user_id) DO UPDATE SET enabled = excluded.enabled",
                )
                .bind(site_id)
                .bind(actor.user_id)
                .bind(enabled)
                .bind(secret::new_token())
                .execute(&self.pool)
                .await?;
                self.alert_setting_impl(actor, site_id).await
            }

            pub(crate) async fn alert_link_impl(&self, token: &str, enabled: Option<bool>) -> Result<Option<$crate::AlertLink>> {
                if let Some(enabled) = enabled {
                    sqlx::query("UPDATE alert_settings SET enabled = $1 WHERE token = $2")
                        .bind(enabled)
                        .bind(token)
                        .execute(&self.pool)
                        .await?;
                }
                let row: Option<(i64, String, String, Option<bool>, Option<String>)> = sqlx::query_as(
                    "SELECT a.site_id, s.origin, u.email, a.enabled, m.role FROM alert_settings a \
                     JOIN sites s ON s.id = a.site_id JOIN users u ON u.id = a.user_id \
                     LEFT JOIN site_members m ON m.site_id = a.site_id AND m.user_id = a.user_id WHERE a.token = $1",
                )
                .bind(token)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(site_id, origin, email, enabled, role)| $crate::AlertLink {
                    site_id,
                    origin,
                    email,
                    enabled: role.is_some()
                        && enabled.unwrap_or_else(|| $crate::alerts::default_enabled(role.as_deref())),
                }))
            }

            pub(crate) async fn alert_worsenings_impl(&self, sitemap_id: i64) -> Result<Vec<$crate::Worsening>> {
                type Row = (String, Option<i64>, Option<String>, bool, Option<String>, Option<String>, i64, i64, Option<i64>, Option<i64>);
                let mut out = Vec::new();
                let mut next = Some(sitemap_id);
                let mut depth = 0;
                while let Some(id) = next.take() {
                    depth += 1;
                    if depth > $crate::sitemaps::MAX_ROLLUP_DEPTH {
                        break;
                    }
                    let row: Option<Row> = sqlx::query_as(
                        "SELECT url, parent_id, rollup_status, is_index, kinds, status, rollup_errors, rollup_warnings, \
                         http_status, removed_at FROM sitemaps WHERE id = $1",
                    )
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                    let Some((url, parent, rolled, is_index, kinds, own, errors, warnings, http_status, removed)) = row else {
                        break;
                    };
                    next = parent.filter(|p| *p != id);
                    let (Some(now_rank), Some(status), None) = ($crate::alerts::alert_rank(rolled.as_deref()), rolled, removed) else {
                        continue;
                    };
                    let mark: Option<String> = sqlx::query_scalar("SELECT status FROM alert_marks WHERE sitemap_id = $1")
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                    let Some(before) = mark else {
                        // A first verdict: nothing to compare with.
                        sqlx::query("INSERT INTO alert_marks (sitemap_id, status) VALUES ($1, $2) ON CONFLICT (sitemap_id) DO NOTHING")
                            .bind(id)
                            .bind(&status)
                            .execute(&self.pool)
                            .await?;
                        continue;
                    };
                    if before == status {
                        continue;
                    }
                    // Whoever moves the mark tells the change; another process that read the same
                    // mark moves nothing.
                    let moved = sqlx::query("UPDATE alert_marks SET status = $1 WHERE sitemap_id = $2 AND status = $3")
                        .bind(&status)
                        .bind(id)
                        .bind(&before)
                        .execute(&self.pool)
                        .await?
                        .rows_affected();
                    if moved == 1 && $crate::alerts::alert_rank(Some(&before)).is_some_and(|r| now_rank > r) {
                        out.push($crate::Worsening {
                            sitemap_id: id,
                            url,
                            is_index: is_index || kinds.as_deref() == Some("index"),
                            own_status: own,
                            from: before,
                            to: status,
                            errors,
                            warnings,
                            http_status,
                        });
                    }
                }
                Ok(out)
            }

            pub(crate) async fn claim_alert_recipients_impl(
                &self,
                site_id: i64,
                now: Timestamp,
                window_seconds: i64,
            ) -> Result<Vec<$crate::AlertRecipient>> {
                let members: Vec<(i64, String, String, Option<bool>, Option<i64>)> = sqlx::query_as(
                    "SELECT m.user_id, u.email, m.role, a.enabled, a.last_sent_at FROM site_members m \
                     JOIN users u ON u.id = m.user_id \
                     LEFT JOIN alert_settings a ON a.site_id = m.site_id AND a.user_id = m.user_id \
                     WHERE m.site_id = $1 ORDER BY m.id",
                )
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?;
                let since = now.saturating_sub(window_seconds);
                let mut out = Vec::new();
                for (user_id, email, role, enabled, last_sent_at) in members {
                    let default = $crate::alerts::default_enabled(Some(&role));
                    if !enabled.unwrap_or(default) || last_sent_at.is_some_and(|t| t > since) {
                        continue;
                    }
                    // The claim: only one process, and only once a day, moves `last_sent_at`.
                    let token: Option<String> = sqlx::query_scalar(
                        "INSERT INTO alert_settings (site_id, user_id, token, last_sent_at) VALUES ($1, $2, $3, $4) \
                         ON CONFLICT (site_id, user_id) DO UPDATE SET last_sent_at = excluded.last_sent_at \
                         WHERE (alert_settings.last_sent_at IS NULL OR alert_settings.last_sent_at <= $5) \
                         AND COALESCE(alert_settings.enabled, $6) RETURNING token",
                    )
                    .bind(site_id)
                    .bind(user_id)
                    .bind(secret::new_token())
                    .bind(now)
                    .bind(since)
                    .bind(default)
                    .fetch_optional(&self.pool)
                    .await?;
                    if let Some(token) = token {
                        out.push($crate::AlertRecipient { user_id, email, token });
                    }
                }
                Ok(out)
            }
        }
    };
}
