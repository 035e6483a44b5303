//! The queries of accounts: users, sessions and API tokens, written once for both backends
//! like those of `sql.rs`, whose `impl_store!` expands [`account_methods!`] into inherent methods
//! (`*_impl`) that `store.rs`'s `impl Store` calls (see `signups.rs`).

/// The `Store` methods of users, sessions and API tokens (see the module documentation).
macro_rules! account_methods {
    ($ty:ty) => {
        impl $ty {
            pub(crate) async fn create_user_impl(&self, email: &str, password_hash: &str, is_admin: bool, now: Timestamp) -> Result<User> {
                let email = &$crate::normalize_email(email)?;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
                )
                .bind(email)
                .bind(password_hash)
                .bind(is_admin)
                .bind(now)
                .fetch_one(&self.pool)
                .await
                .map_err(|e| conflict(e, format!("user {email}")))?;
                Ok(User { id, email: email.to_owned(), is_admin, created_at: now })
            }

            pub(crate) async fn grant_admin_impl(&self, email: &str) -> Result<bool> {
                let email = $crate::normalize_email(email)?;
                let done = sqlx::query("UPDATE users SET is_admin = $1 WHERE email = $2")
                    .bind(true)
                    .bind(email)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            pub(crate) async fn user_credentials_impl(&self, email: &str) -> Result<Option<(User, String)>> {
                let Ok(email) = $crate::normalize_email(email) else { return Ok(None) };
                let row: Option<(i64, String, bool, i64, String)> = sqlx::query_as(
                    "SELECT id, email, is_admin, created_at, password_hash FROM users WHERE email = $1",
                )
                .bind(email)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(id, email, is_admin, created_at, hash)| (User { id, email, is_admin, created_at }, hash)))
            }

            pub(crate) async fn create_session_impl(&self, user_id: i64, now: Timestamp, ttl_seconds: i64) -> Result<String> {
                let token = secret::new_token();
                let mut tx = self.begin_write().await?;
                sqlx::query("INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)")
                    .bind(user_id)
                    .bind(secret::token_hash(&token))
                    .bind(now)
                    .bind(now.saturating_add(ttl_seconds))
                    .execute(&mut *tx)
                    .await?;
                // The newest MAX_SESSIONS_PER_USER stay: the one at that rank and older ones go.
                sqlx::query(
                    "DELETE FROM sessions WHERE user_id = $1 AND id <= \
                     (SELECT id FROM sessions WHERE user_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
                )
                .bind(user_id)
                .bind($crate::MAX_SESSIONS_PER_USER)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(token)
            }

            pub(crate) async fn session_user_impl(&self, token: &str, now: Timestamp) -> Result<Option<User>> {
                Ok(sqlx::query_as(
                    "SELECT u.id, u.email, u.is_admin, u.created_at FROM sessions se JOIN users u ON u.id = se.user_id \
                     WHERE se.token_hash = $1 AND se.expires_at > $2",
                )
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&self.pool)
                .await?)
            }

            pub(crate) async fn delete_session_impl(&self, token: &str) -> Result<()> {
                sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
                    .bind(secret::token_hash(token))
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            pub(crate) async fn delete_expired_sessions_impl(&self, now: Timestamp) -> Result<u64> {
                let done = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(now).execute(&self.pool).await?;
                Ok(done.rows_affected())
            }

            pub(crate) async fn create_api_token_impl(&self, actor: Actor, name: &str, now: Timestamp) -> Result<(ApiToken, String)> {
                let token = secret::new_token();
                // The count and the insert in one statement, as for sites.
                let id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO api_tokens (user_id, name, token_hash, created_at) SELECT $1, $2, $3, $4 \
                     WHERE (SELECT COUNT(*) FROM api_tokens WHERE user_id = $1) < $5 RETURNING id",
                )
                .bind(actor.user_id)
                .bind(name)
                .bind(secret::token_hash(&token))
                .bind(now)
                .bind($crate::MAX_API_TOKENS)
                .fetch_optional(&self.pool)
                .await?;
                let id = id.ok_or_else(|| {
                    Error::Quota(format!(
                        "you hold {} API tokens (revoked ones count for a week after): revoke some you no longer use",
                        $crate::MAX_API_TOKENS
                    ))
                })?;
                let listed = ApiToken {
                    id,
                    user_id: actor.user_id,
                    name: name.to_owned(),
                    created_at: now,
                    last_used_at: None,
                    revoked_at: None,
                };
                Ok((listed, token))
            }

            pub(crate) async fn list_api_tokens_impl(&self, actor: Actor) -> Result<Vec<ApiToken>> {
                Ok(sqlx::query_as(
                    "SELECT id, user_id, name, created_at, last_used_at, revoked_at FROM api_tokens \
                     WHERE ($1 OR user_id = $2) ORDER BY id DESC",
                )
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .fetch_all(&self.pool)
                .await?)
            }

            pub(crate) async fn revoke_api_token_impl(&self, actor: Actor, token_id: i64, now: Timestamp) -> Result<()> {
                let done = sqlx::query(
                    "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 AND ($3 OR user_id = $4)",
                )
                .bind(now)
                .bind(token_id)
                .bind(actor.is_admin)
                .bind(actor.user_id)
                .execute(&self.pool)
                .await?;
                found(done.rows_affected(), "token", token_id)
            }

            pub(crate) async fn api_token_user_impl(&self, secret_value: &str, now: Timestamp) -> Result<Option<User>> {
                let hash = secret::token_hash(secret_value);
                let user: Option<User> = sqlx::query_as(
                    "SELECT u.id, u.email, u.is_admin, u.created_at FROM api_tokens t JOIN users u ON u.id = t.user_id \
                     WHERE t.token_hash = $1 AND t.revoked_at IS NULL",
                )
                .bind(&hash)
                .fetch_optional(&self.pool)
                .await?;
                if user.is_some() {
                    // At most one write a minute per token, so API traffic does not turn every
                    // read into a write.
                    sqlx::query(
                        "UPDATE api_tokens SET last_used_at = $1 WHERE token_hash = $2 \
                         AND (last_used_at IS NULL OR last_used_at <= $1 - 60)",
                    )
                    .bind(now)
                    .bind(&hash)
                    .execute(&self.pool)
                    .await?;
                }
                Ok(user)
            }
        }
    };
}
