//! Integration tests of the store; every test runs against SQLite and PostgreSQL.

mod accounts;
mod alerts;
mod caps;
mod check_runs;
mod diffs;
mod disk;
mod domains;
mod gate;
mod ingest;
mod lease;
mod members;
mod opening;
mod ownership;
mod pushed;
mod recovery;
mod shape;
mod sharing;
mod support;
mod urls;
mod webhooks;
