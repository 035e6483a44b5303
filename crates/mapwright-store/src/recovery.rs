//! The queries of account recovery (issue 34): password-reset links, changes of password and
//! of address, written once for both backends like those of `sql.rs`, whose `impl_store!`
//! expands [`recovery_methods!`] into inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls
//! (see `signups.rs`). The links live in `account_links` (migration 0065), stored as the
//! SHA-256 of their token, each used once.

/// A new link of `$purpose` for `$user_id` in transaction `$tx`, its token the value: the
/// account's expired links of that purpose go, and only the newest
/// [`MAX_ACCOUNT_LINKS`](crate::MAX_ACCOUNT_LINKS) stay, so a stranger asking again and again
/// neither grows the table nor kills the owner's link of a minute ago.
macro_rules! new_account_link {
    ($tx:ident, $user_id:expr, $purpose:literal, $new_email:expr, $now:expr, $ttl:expr) => {{
        let token = secret::new_token();
        sqlx::query("DELETE FROM account_links WHERE user_id = $1 AND purpose = $2 AND expires_at <= $3")
            .bind($user_id)
            .bind($purpose)
            .bind($now)
            .execute(&mut *$tx)
            .await?;
        sqlx::query(
            "INSERT INTO account_links (user_id, purpose, new_email, token_hash, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind($user_id)
        .bind($purpose)
        .bind($new_email)
        .bind(secret::token_hash(&token))
        .bind($now)
        .bind($now.saturating_add($ttl))
        .execute(&mut *$tx)
        .await?;
        sqlx::query(
            "DELETE FROM account_links WHERE user_id = $1 AND purpose = $2 AND id <= \
             (SELECT id FROM account_links WHERE user_id = $1 AND purpose = $2 ORDER BY id DESC LIMIT 1 OFFSET $3)",
        )
        .bind($user_id)
        .bind($purpose)
        .bind($crate::MAX_ACCOUNT_LINKS)
        .execute(&mut *$tx)
        .await?;
        token
    }};
}

/// In transaction `$tx`: the account's new password hash, every session of it ended but
/// `$keep` (the caller's, by its token), every reset link gone, so what the old password
/// opened is closed; the value is the `User`.
macro_rules! replace_password {
    ($tx:ident, $user_id:expr, $hash:expr, $keep:expr) => {{
        let user: Option<User> = sqlx::query_as(
            "UPDATE users SET password_hash = $1 WHERE id = $2 RETURNING id, email, is_admin, created_at",
        )
        .bind($hash)
        .bind($user_id)
        .fetch_optional(&mut *$tx)
        .await?;
        let user = user.ok_or(Error::NotFound { what: "user", id: $user_id })?;
        let keep: Option<&str> = $keep;
        sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2")
            .bind($user_id)
            .bind(keep.map(secret::token_hash).unwrap_or_default())
            .execute(&mut *$tx)
            .await?;
        sqlx::query("DELETE FROM account_links WHERE user_id = $1 AND purpose = 'reset'")
            .bind($user_id)
            .execute(&mut *$tx)
            .await?;
        user
    }};
}

/// The `Store` methods of account recovery (see the module documentation).
macro_rules! recovery_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn request_password_reset_impl(
                &self,
                email: &str,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<Option<(User, String)>> {
                let Ok(email) = $crate::normalize_email(email) else { return Ok(None) };
                let mut tx = self.begin_write().await?;
                let user: Option<User> =
                    sqlx::query_as("SELECT id, email, is_admin, created_at FROM users WHERE email = $1")
                        .bind(&email)
                        .fetch_optional(&mut *tx)
                        .await?;
                let Some(user) = user else { return Ok(None) };
                let token = new_account_link!(tx, user.id, "reset", None::<&str>, now, ttl_seconds);
                tx.commit().await?;
                Ok(Some((user, token)))
            }

            pub(crate) async fn reset_password_impl(
                &self,
                token: &str,
                password_hash: &str,
                now: Timestamp,
            ) -> Result<Option<User>> {
                let mut tx = self.begin_write().await?;
                let user_id: Option<i64> = sqlx::query_scalar(
                    "DELETE FROM account_links WHERE token_hash = $1 AND purpose = 'reset' AND expires_at > $2 \
                     RETURNING user_id",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(user_id) = user_id else { return Ok(None) };
                let user = replace_password!(tx, user_id, password_hash, None);
                // A reset is "I forgot it, or someone may have it": whoever had the password
                // may have made API tokens with it, so they end with the sessions.
                sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL")
                    .bind(now)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Some(user))
            }

            pub(crate) async fn set_password_impl(
                &self,
                user_id: i64,
                password_hash: &str,
                keep_session: Option<&str>,
            ) -> Result<User> {
                let mut tx = self.begin_write().await?;
                let user = replace_password!(tx, user_id, password_hash, keep_session);
                tx.commit().await?;
                Ok(user)
            }

            pub(crate) async fn request_email_change_impl(
                &self,
                user_id: i64,
                new_email: &str,
                now: Timestamp,
                ttl_seconds: i64,
            ) -> Result<SignupRequest> {
                let new_email = $crate::normalize_email(new_email)?;
                let mut tx = self.begin_write().await?;
                let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
                    .bind(&new_email)
                    .fetch_optional(&mut *tx)
                    .await?;
                if taken.is_some() {
                    return Ok(SignupRequest::Taken);
                }
                let token = new_account_link!(tx, user_id, "email", Some(new_email.as_str()), now, ttl_seconds);
                tx.commit().await?;
                Ok(SignupRequest::Pending(token))
            }

            pub(crate) async fn pending_email_change_impl(
                &self,
                token: &str,
                now: Timestamp,
            ) -> Result<Option<(User, String)>> {
                let row: Option<(i64, String, bool, i64, String)> = sqlx::query_as(
                    "SELECT u.id, u.email, u.is_admin, u.created_at, l.new_email FROM account_links l \
                     JOIN users u ON u.id = l.user_id \
                     WHERE l.token_hash = $1 AND l.purpose = 'email' AND l.expires_at > $2",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(id, email, is_admin, created_at, new_email)| {
                    (User { id, email, is_admin, created_at }, new_email)
                }))
            }

            pub(crate) async fn confirm_email_change_impl(
                &self,
                token: &str,
                now: Timestamp,
            ) -> Result<Option<(User, String)>> {
                let mut tx = self.begin_write().await?;
                let row: Option<(i64, String)> = sqlx::query_as(
                    "DELETE FROM account_links WHERE token_hash = $1 AND purpose = 'email' AND expires_at > $2 \
                     RETURNING user_id, new_email",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?;
                let Some((user_id, new_email)) = row else { return Ok(None) };
                let old: Option<String> = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
                    .bind(user_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some(old) = old else { return Ok(None) };
                // An account made meanwhile with the address wins: a Conflict, the link used up
                // only if the caller commits nothing (the transaction is dropped).
                let user: User = sqlx::query_as(
                    "UPDATE users SET email = $1 WHERE id = $2 RETURNING id, email, is_admin, created_at",
                )
                .bind(&new_email)
                .bind(user_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| conflict(e, format!("user {new_email}")))?;
                // The address moved: its other change links and the reset links mailed to the old
                // address are dead, and a pending sign-up of the new address can make no account.
                sqlx::query("DELETE FROM account_links WHERE user_id = $1").bind(user_id).execute(&mut *tx).await?;
                sqlx::query("DELETE FROM signups WHERE email = $1").bind(&new_email).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some((user, old)))
            }
        }
    };
}
