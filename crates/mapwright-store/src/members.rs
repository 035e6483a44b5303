//! Several users per site (issue 23): the members of a site with their roles, and the
//! invitations an owner sends. Written once for both backends like the queries of `sql.rs`,
//! whose `impl_store!` expands [`member_methods!`] into inherent methods (`*_impl`) that `store.rs`'s
//! `impl Store` calls.
//!
//! Who may see a site is its membership (`owned!` in `sql.rs`: an admin, or a member of any
//! role); who may change it or make the service spend for it is an owner (`site_as_owner`).
//! A reader who tries is [`Error::Forbidden`](crate::Error::Forbidden), a stranger
//! [`Error::NotFound`](crate::Error::NotFound) as before, so ids still leak nothing to strangers.

use serde::Serialize;

use crate::model::Timestamp;
use crate::row::row;

/// Members a site may have, pending invitations included: an owner cannot make the service
/// keep (and mail) without end.
pub const MAX_MEMBERS_PER_SITE: i64 = 50;

/// Invitations pending for one address over every site and sender: each is a mail in one
/// inbox, so strangers together must not fill it (issue 33, finding 5).
pub const MAX_PENDING_INVITATIONS_PER_ADDRESS: i64 = 10;

/// Invitations one address may be sent in [`INVITATION_WINDOW_SECONDS`], whoever sends them:
/// inviting an address again replaces its pending invitation and mails it again, so the cap on
/// pending ones alone would let re-invitations mail it without end.
pub const MAX_INVITATIONS_PER_ADDRESS: i64 = 5;

/// The window of [`MAX_INVITATIONS_PER_ADDRESS`]: a day.
pub const INVITATION_WINDOW_SECONDS: i64 = 86_400;

/// What a member may do on a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Everything: submit, resubmit, remove, verify, check, invite, remove members, delete.
    Owner,
    /// Sees everything of the site and changes nothing.
    Reader,
}

impl Role {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Reader => "reader",
        }
    }

    /// The role of a stored or typed name.
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "owner" => Some(Role::Owner),
            "reader" => Some(Role::Reader),
            _ => None,
        }
    }
}

/// An actor's roles on its sites, read once for a list ([`crate::Store::site_roles`]).
#[derive(Debug, Clone, Default)]
pub struct SiteRoles {
    pub(crate) admin: bool,
    pub(crate) roles: std::collections::HashMap<i64, Role>,
}

impl SiteRoles {
    /// The actor's role on a site of its list: an admin owns every site; a site the actor is
    /// no member of (it is not in the actor's lists) gets the role that may change nothing.
    pub fn of(&self, site_id: i64) -> Role {
        if self.admin { Role::Owner } else { self.roles.get(&site_id).copied().unwrap_or(Role::Reader) }
    }
}

row! {
/// A user's membership of a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    /// Id (of the membership, not of the user).
    pub id: i64,
    /// The site.
    pub site_id: i64,
    /// The user.
    pub user_id: i64,
    /// The user's address.
    pub email: String,
    /// `owner` or `reader` ([`Role`]).
    pub role: String,
    /// When the user joined (the site's creation for its first owner).
    pub added_at: Timestamp,
}
}

row! {
/// An invitation not accepted yet (its token is only in the mail).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invitation {
    /// Id.
    pub id: i64,
    /// The site.
    pub site_id: i64,
    /// The invited address, in normal form.
    pub email: String,
    /// `owner` or `reader` ([`Role`]).
    pub role: String,
    /// The owner who sent it.
    pub invited_by: i64,
    /// When it was sent.
    pub created_at: Timestamp,
    /// After this the link is refused.
    pub expires_at: Timestamp,
}
}

row! {
/// What the page of an invitation's link shows before it is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvitationInfo {
    /// Id.
    pub id: i64,
    /// The site.
    pub site_id: i64,
    /// The site's origin.
    pub origin: String,
    /// The invited address: only a user signed in with it may accept.
    pub email: String,
    /// `owner` or `reader`.
    pub role: String,
    /// The address of the owner who sent it.
    pub inviter_email: String,
    /// After this the link is refused.
    pub expires_at: Timestamp,
}
}

/// The `Store` methods of members and invitations (see the module documentation).
macro_rules! member_methods {
    ($ty:ty) => {
        impl $ty {
            // Alike on purpose: as `remove_member_impl`, a look-up under `owned!` binding an id,
            // the admin flag and the user; each its own row.
            pub(crate) async fn site_role_impl(&self, actor: Actor, site_id: i64) -> Result<$crate::Role> {
                let role: Option<Option<String>> = sqlx::query_scalar(concat!(
                    "SELECT m.role FROM sites s LEFT JOIN site_members m ON m.site_id = s.id AND m.user_id = $3 \
                     WHERE s.id = $1 AND ", owned!("$2", "$3")
                ))
                .bind(site_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                match role {
                    None => Err(Error::NotFound { what: "site", id: site_id }),
                    // An admin changes every site.
                    Some(_) if actor.is_admin => Ok($crate::Role::Owner),
                    Some(role) => Ok(role.as_deref().and_then($crate::Role::parse).unwrap_or($crate::Role::Reader)),
                }
            }

            pub(crate) async fn site_roles_impl(&self, actor: Actor) -> Result<$crate::SiteRoles> {
                if actor.is_admin {
                    return Ok($crate::SiteRoles { admin: true, roles: Default::default() });
                }
                let rows: Vec<(i64, String)> = sqlx::query_as("SELECT site_id, role FROM site_members WHERE user_id = $1")
                    .bind(actor.user_id)
                    .fetch_all(&self.pool)
                    .await?;
                let roles = rows
                    .into_iter()
                    .map(|(site, role)| (site, $crate::Role::parse(&role).unwrap_or($crate::Role::Reader)))
                    .collect();
                Ok($crate::SiteRoles { admin: false, roles })
            }

            pub(crate) async fn site_as_owner_impl(&self, actor: Actor, site_id: i64) -> Result<Site> {
                match self.site_role_impl(actor, site_id).await? {
                    $crate::Role::Owner => self.site_impl(actor, site_id).await,
                    $crate::Role::Reader => Err(Error::Forbidden(
                        "you are a reader of this site: only its owners may change it".into(),
                    )),
                }
            }

            pub(crate) async fn list_members_impl(&self, actor: Actor, site_id: i64) -> Result<Vec<$crate::Member>> {
                self.site_impl(actor, site_id).await?;
                Ok(sqlx::query_as(
                    "SELECT m.id, m.site_id, m.user_id, u.email, m.role, m.added_at FROM site_members m \
                     JOIN users u ON u.id = m.user_id WHERE m.site_id = $1 ORDER BY m.id",
                )
                .bind(site_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn list_invitations_impl(&self, actor: Actor, site_id: i64, now: Timestamp) -> Result<Vec<$crate::Invitation>> {
                self.site_impl(actor, site_id).await?;
                Ok(sqlx::query_as(
                    "SELECT id, site_id, email, role, invited_by, created_at, expires_at FROM site_invitations \
                     WHERE site_id = $1 AND expires_at > $2 ORDER BY id",
                )
                .bind(site_id)
                .bind(now)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn create_invitation_impl(
                &self,
                actor: Actor,
                site_id: i64,
                email: &str,
                role: $crate::Role,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<($crate::Invitation, String)> {
                self.site_as_owner_impl(actor, site_id).await?;
                let email = $crate::normalize_email(email)?;
                let token = secret::new_token();
                // Every sender's invitations to the address count alike, across processes (the
                // shared window counter), before the transaction: SQLite has one writer.
                if let Some(wait) = self
                    .count_event_impl(
                        "invitations-to",
                        &email,
                        $crate::members::MAX_INVITATIONS_PER_ADDRESS,
                        $crate::members::INVITATION_WINDOW_SECONDS,
                        now,
                    )
                    .await?
                {
                    return Err(Error::Quota(format!(
                        "{email} was sent {} invitations in the last day, the most an address may receive: \
                         try again in {} hours",
                        $crate::members::MAX_INVITATIONS_PER_ADDRESS,
                        (wait + 3_599) / 3_600
                    )));
                }
                let mut tx = self.begin_write().await?;
                sqlx::query("DELETE FROM site_invitations WHERE site_id = $1 AND expires_at <= $2")
                    .bind(site_id)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                let member: Option<i64> = sqlx::query_scalar(
                    "SELECT m.id FROM site_members m JOIN users u ON u.id = m.user_id WHERE m.site_id = $1 AND u.email = $2",
                )
                .bind(site_id)
                .bind(&email)
                .fetch_optional(&mut *tx)
                .await?;
                if member.is_some() {
                    return Err(Error::Conflict(format!("a member with the address {email}")));
                }
                // Members and pending invitations (another address's) together stay within the cap.
                let taken: i64 = sqlx::query_scalar(
                    "SELECT (SELECT COUNT(*) FROM site_members WHERE site_id = $1) \
                     + (SELECT COUNT(*) FROM site_invitations WHERE site_id = $1 AND email <> $2)",
                )
                .bind(site_id)
                .bind(&email)
                .fetch_one(&mut *tx)
                .await?;
                if taken >= $crate::MAX_MEMBERS_PER_SITE {
                    return Err(Error::Quota(format!(
                        "this site has {} members and invitations, the most a site may have: remove one first",
                        $crate::MAX_MEMBERS_PER_SITE
                    )));
                }
                // Pending invitations of the address on other sites, whoever sent them.
                let elsewhere: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM site_invitations WHERE email = $1 AND site_id <> $2 AND expires_at > $3",
                )
                .bind(&email)
                .bind(site_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                if elsewhere >= $crate::members::MAX_PENDING_INVITATIONS_PER_ADDRESS {
                    return Err(Error::Quota(format!(
                        "{email} has {} invitations waiting, the most an address may have: it must accept or \
                         let some expire first",
                        $crate::members::MAX_PENDING_INVITATIONS_PER_ADDRESS
                    )));
                }
                // Inviting an address again replaces its link (the old one stops working).
                let invitation: $crate::Invitation = sqlx::query_as(
                    "INSERT INTO site_invitations (site_id, email, role, token_hash, invited_by, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (site_id, email) DO UPDATE SET role = excluded.role, token_hash = excluded.token_hash, \
                     invited_by = excluded.invited_by, created_at = excluded.created_at, expires_at = excluded.expires_at \
                     RETURNING id, site_id, email, role, invited_by, created_at, expires_at",
                )
                .bind(site_id)
                .bind(&email)
                .bind(role.as_str())
                .bind(secret::token_hash(&token))
                .bind(actor.user_id)
                .bind(now)
                .bind(now + ttl_seconds)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok((invitation, token))
            }

            pub(crate) async fn revoke_invitation_impl(&self, actor: Actor, invitation_id: i64) -> Result<()> {
                let site_id: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT i.site_id FROM site_invitations i JOIN sites s ON s.id = i.site_id WHERE i.id = $1 AND ",
                    owned!("$2", "$3")
                ))
                .bind(invitation_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                let site_id = site_id.ok_or(Error::NotFound { what: "invitation", id: invitation_id })?;
                self.site_as_owner_impl(actor, site_id).await?;
                let done = sqlx::query("DELETE FROM site_invitations WHERE id = $1")
                    .bind(invitation_id)
                    .execute(&self.pool)
                    .await?;
                found(done.rows_affected(), "invitation", invitation_id)
            }

            pub(crate) async fn invitation_by_token_impl(&self, token: &str, now: Timestamp) -> Result<Option<$crate::InvitationInfo>> {
                Ok(sqlx::query_as(
                    "SELECT i.id, i.site_id, s.origin, i.email, i.role, u.email AS inviter_email, i.expires_at \
                     FROM site_invitations i JOIN sites s ON s.id = i.site_id JOIN users u ON u.id = i.invited_by \
                     WHERE i.token_hash = $1 AND i.expires_at > $2 AND (u.is_admin OR EXISTS (SELECT 1 \
                     FROM site_members m WHERE m.site_id = i.site_id AND m.user_id = i.invited_by AND m.role = 'owner'))",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&self.pool)
                .await?)
            }

            pub(crate) async fn accept_invitation_impl(&self, actor: Actor, token: &str, now: Timestamp) -> Result<Site> {
                let mut tx = self.begin_write().await?;
                let invitation: Option<(i64, i64, String, String, bool)> = sqlx::query_as(
                    "SELECT i.id, i.site_id, i.email, i.role, (u.is_admin OR EXISTS (SELECT 1 FROM site_members m \
                     WHERE m.site_id = i.site_id AND m.user_id = i.invited_by AND m.role = 'owner')) \
                     FROM site_invitations i JOIN users u ON u.id = i.invited_by \
                     WHERE i.token_hash = $1 AND i.expires_at > $2",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?;
                let Some((id, site_id, email, role, inviter_may)) = invitation else {
                    return Err(Error::NotFound { what: "invitation", id: 0 });
                };
                // Whoever sent it must still be allowed to invite: a removed owner's invitation is
                // withdrawn with the removal, and this holds even for one a concurrent removal missed.
                if !inviter_may {
                    sqlx::query("DELETE FROM site_invitations WHERE id = $1").bind(id).execute(&mut *tx).await?;
                    tx.commit().await?;
                    return Err(Error::Forbidden(
                        "this invitation was withdrawn: whoever sent it is no longer an owner of the site".into(),
                    ));
                }
                let user_email: Option<String> = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
                    .bind(actor.user_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                if user_email.as_deref() != Some(email.as_str()) {
                    return Err(Error::Forbidden(format!(
                        "this invitation is for {email}: sign in with that address to accept it"
                    )));
                }
                // Single use: the link works once. An owner invited as a reader stays an owner.
                sqlx::query("DELETE FROM site_invitations WHERE id = $1").bind(id).execute(&mut *tx).await?;
                sqlx::query(
                    "INSERT INTO site_members (site_id, user_id, role, added_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (site_id, user_id) DO UPDATE SET role = CASE WHEN excluded.role = 'owner' \
                     THEN 'owner' ELSE site_members.role END",
                )
                .bind(site_id)
                .bind(actor.user_id)
                .bind(role)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                self.site_impl(actor, site_id).await
            }

            pub(crate) async fn site_of_member_impl(&self, member_id: i64) -> Result<Option<i64>> {
                Ok(sqlx::query_scalar("SELECT site_id FROM site_members WHERE id = $1")
                    .bind(member_id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            // Alike on purpose: its look-up has the shape of `site_role_impl`'s (see there).
            pub(crate) async fn remove_member_impl(&self, actor: Actor, member_id: i64) -> Result<()> {
                let member: Option<(i64, i64, String)> = sqlx::query_as(concat!(
                    "SELECT m.site_id, m.user_id, m.role FROM site_members m JOIN sites s ON s.id = m.site_id \
                     WHERE m.id = $1 AND ", owned!("$2", "$3")
                ))
                .bind(member_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_optional(&self.pool)
                .await?;
                let (site_id, user_id, _) = member.ok_or(Error::NotFound { what: "member", id: member_id })?;
                // Anyone may leave; removing someone else is an owner's.
                if user_id != actor.user_id {
                    self.site_as_owner_impl(actor, site_id).await?;
                }
                let mut tx = self.begin_write().await?;
                // The site's row first, so that two removals of owners of one site (PostgreSQL,
                // two processes) cannot both see the other owner still there.
                sqlx::query("UPDATE sites SET owner_id = owner_id WHERE id = $1").bind(site_id).execute(&mut *tx).await?;
                let role: Option<String> = sqlx::query_scalar("SELECT role FROM site_members WHERE id = $1")
                    .bind(member_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                let role = role.ok_or(Error::NotFound { what: "member", id: member_id })?;
                let other_owners: Vec<i64> = sqlx::query_scalar(
                    "SELECT user_id FROM site_members WHERE site_id = $1 AND role = 'owner' AND id <> $2 ORDER BY id",
                )
                .bind(site_id)
                .bind(member_id)
                .fetch_all(&mut *tx)
                .await?;
                if role == "owner" && other_owners.is_empty() {
                    return Err(Error::Refused(
                        "the last owner of a site cannot be removed: invite another owner first, or delete the site".into(),
                    ));
                }
                // The site counts against another owner when the one it counted against leaves:
                // the first with room for it under the caps of `create_site`.
                let (counted_against, verified): (i64, bool) =
                    sqlx::query_as("SELECT owner_id, verified_at IS NOT NULL FROM sites WHERE id = $1")
                        .bind(site_id)
                        .fetch_one(&mut *tx)
                        .await?;
                let mut next_owner = None;
                if counted_against == user_id {
                    for &candidate in &other_owners {
                        let (all, unverified): (i64, i64) = sqlx::query_as(
                            "SELECT COUNT(*), COUNT(*) - COUNT(verified_at) FROM sites WHERE owner_id = $1",
                        )
                        .bind(candidate)
                        .fetch_one(&mut *tx)
                        .await?;
                        if all < $crate::MAX_SITES_PER_USER && (verified || unverified < $crate::MAX_UNVERIFIED_SITES) {
                            next_owner = Some(candidate);
                            break;
                        }
                    }
                    if next_owner.is_none() {
                        return Err(Error::Quota(
                            "no other owner of this site has room for it under the caps of sites per account: \
                             one of them must delete a site first"
                                .into(),
                        ));
                    }
                }
                sqlx::query("DELETE FROM site_members WHERE id = $1").bind(member_id).execute(&mut *tx).await?;
                // Everything the member set up or holds for the site ends with the membership:
                // the invitations they sent, the webhooks they added (their deliveries go with
                // them), their alert setting and its unsubscribe link.
                sqlx::query("DELETE FROM site_invitations WHERE site_id = $1 AND invited_by = $2")
                    .bind(site_id)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM webhooks WHERE site_id = $1 AND created_by = $2")
                    .bind(site_id)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM alert_settings WHERE site_id = $1 AND user_id = $2")
                    .bind(site_id)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                // A verification may have been granted through the member's domain property:
                // the site is due for its re-check at once (the service re-judges it right
                // after the removal; this covers a process that stops in between).
                if verified {
                    sqlx::query("UPDATE sites SET last_checked_at = NULL WHERE id = $1 AND EXISTS \
                                 (SELECT 1 FROM domain_properties WHERE user_id = $2 AND verified_at IS NOT NULL)")
                        .bind(site_id)
                        .bind(user_id)
                        .execute(&mut *tx)
                        .await?;
                }
                if let Some(next) = next_owner {
                    sqlx::query("UPDATE sites SET owner_id = $1 WHERE id = $2 AND owner_id = $3")
                        .bind(next)
                        .bind(site_id)
                        .bind(user_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| match conflict(e, "") {
                            Error::Conflict(_) => Error::Refused(
                                "the next owner has a site of this origin already: remove that site or this member's \
                                 ownership in another order"
                                    .into(),
                            ),
                            other => other,
                        })?;
                }
                tx.commit().await?;
                Ok(())
            }
        }
    };
}
