//! What the service's outbound gate needs beyond [`crate::Store::count_event`]: a count of several
//! events at once in the same fixed windows (table `rate_windows`), so that a job sending many
//! requests to one target (the URL checker at hundreds a second) reserves its turns a batch at
//! a time instead of writing once per request. Written once for both backends like the queries
//! of `sql.rs`, whose `impl_store!` expands [`outbound_methods!`].

/// The `Store` methods of the outbound gate (see the module documentation).
macro_rules! outbound_methods {
    ($ty:ty) => {
        impl $ty {
            // Alike on purpose: store.rs's trait entry states this signature too, with the
            // contract's doc (store.rs's header says why it is written twice).
            pub(crate) async fn count_events_impl(
                &self,
                scope: &str,
                key: &str,
                events: i64,
                limit: i64,
                window_seconds: i64,
                now: Timestamp,
            ) -> Result<Option<i64>> {
                // One statement: the window restarts when it has ended, else the events are
                // counted in it (both right-hand sides read the row as it was).
                let events = events.max(1);
                let (start, hits): (i64, i64) = sqlx::query_as(
                    "INSERT INTO rate_windows (scope, key, window_start, hits) VALUES ($1, $2, $3, $5) \
                     ON CONFLICT (scope, key) DO UPDATE SET \
                     hits = CASE WHEN rate_windows.window_start <= $3 - $4 THEN $5 ELSE rate_windows.hits + $5 END, \
                     window_start = CASE WHEN rate_windows.window_start <= $3 - $4 THEN $3 \
                     ELSE rate_windows.window_start END \
                     RETURNING window_start, hits",
                )
                .bind(scope)
                .bind(key)
                .bind(now)
                .bind(window_seconds.max(1))
                .bind(events)
                .fetch_one(&self.pool)
                .await?;
                Ok((hits > limit).then(|| (start.saturating_add(window_seconds) - now).max(1)))
            }
        }
    };
}
