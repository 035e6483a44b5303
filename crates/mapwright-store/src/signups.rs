//! The queries of sign-ups, of the limits kept for every server process together, and of the
//! health probe: written once for both backends like those of `sql.rs`, whose `impl_store!`
//! expands [`signup_methods!`] into inherent methods (`*_impl`) that `store.rs`'s `impl Store` calls
//! (`async_trait` rewrites only the methods written in the impl itself).

/// The `Store` methods of sign-ups, shared limits and health (see the module documentation).
macro_rules! signup_methods {
    ($ty:ty) => {
        impl $ty {
        // Alike on purpose: store.rs's trait entry states this signature too, with the contract's
        // doc (store.rs's header says why it is written twice).
        pub(crate) async fn request_signup_impl(
            &self,
            email: &str,
            password_hash: &str,
            from: &Requester,
            now: Timestamp,
            ttl_seconds: i64,
        ) -> Result<SignupRequest> {
            let email = $crate::normalize_email(email)?;
            let mut tx = self.begin_write().await?;
            // The caps first: when one is reached, every address gets the same refusal, so even
            // then the answer tells no account apart. The requester's own row for this address
            // is not counted: asking again replaces it.
            let (all, network, client): (i64, i64, i64) = sqlx::query_as(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN network = $3 THEN 1 ELSE 0 END), 0), \
                 COALESCE(SUM(CASE WHEN client = $4 THEN 1 ELSE 0 END), 0) \
                 FROM signups WHERE expires_at > $1 AND NOT (email = $2 AND network = $3)",
            )
            .bind(now)
            .bind(&email)
            .bind(&from.network)
            .bind(&from.client)
            .fetch_one(&mut *tx)
            .await?;
            if client >= $crate::MAX_PENDING_SIGNUPS_PER_CLIENT || network >= $crate::MAX_PENDING_SIGNUPS_PER_NETWORK {
                return Err(Error::Quota(
                    "too many sign-ups from your network are waiting for their confirmation: confirm those, or try \
                     again tomorrow"
                        .into(),
                ));
            }
            if all >= $crate::MAX_PENDING_SIGNUPS {
                return Err(Error::Quota(
                    "too many sign-ups are waiting for their confirmation: try again in an hour".into(),
                ));
            }
            let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
                .bind(&email)
                .fetch_optional(&mut *tx)
                .await?;
            if taken.is_some() {
                return Ok(SignupRequest::Taken);
            }
            // One pending sign-up per address and network: a new request from the same network
            // replaces its link; one from elsewhere gets a link of its own and leaves the
            // others' alone, so a stranger can neither replace the owner's link nor keep the
            // owner from getting one.
            let token = secret::new_token();
            sqlx::query(
                "INSERT INTO signups (email, network, client, password_hash, token_hash, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (email, network) DO UPDATE SET client = excluded.client, \
                 password_hash = excluded.password_hash, token_hash = excluded.token_hash, \
                 created_at = excluded.created_at, expires_at = excluded.expires_at",
            )
            .bind(&email)
            .bind(&from.network)
            .bind(&from.client)
            .bind(password_hash)
            .bind(secret::token_hash(&token))
            .bind(now)
            .bind(now.saturating_add(ttl_seconds))
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(SignupRequest::Pending(token))
        }

        pub(crate) async fn pending_signup_impl(&self, token: &str, now: Timestamp) -> Result<Option<(String, String)>> {
            Ok(sqlx::query_as("SELECT email, password_hash FROM signups WHERE token_hash = $1 AND expires_at > $2")
                .bind(secret::token_hash(token))
                .bind(now)
                .fetch_optional(&self.pool)
                .await?)
        }

        pub(crate) async fn confirm_signup_impl(&self, token: &str, now: Timestamp) -> Result<Option<User>> {
            let mut tx = self.begin_write().await?;
            let row: Option<(String, String)> = sqlx::query_as(
                "DELETE FROM signups WHERE token_hash = $1 AND expires_at > $2 RETURNING email, password_hash",
            )
            .bind(secret::token_hash(token))
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            let Some((email, hash)) = row else { return Ok(None) };
            // The address has its account now: the links others asked for it are dead.
            sqlx::query("DELETE FROM signups WHERE email = $1").bind(&email).execute(&mut *tx).await?;
            // An account made meanwhile for the address (by the operator) wins; the link is used up.
            let id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(&email)
            .bind(&hash)
            .bind(false)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(id.map(|id| User { id, email, is_admin: false, created_at: now }))
        }

        pub(crate) async fn count_event_impl(
            &self,
            scope: &str,
            key: &str,
            limit: i64,
            window_seconds: i64,
            now: Timestamp,
        ) -> Result<Option<i64>> {
            // One event of the outbound gate's count of several (`outbound.rs`): one statement.
            self.count_events_impl(scope, key, 1, limit, window_seconds, now).await
        }

        pub(crate) async fn health_impl(&self, now: Timestamp) -> Result<()> {
            let mut tx = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO health_probe (id, written_at) VALUES (1, $1) \
                 ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at",
            )
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            self.room().await
        }
        }
    };
}
