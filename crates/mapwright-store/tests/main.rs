//! Integration tests of the store; every test runs against SQLite and PostgreSQL.

mod accounts;
mod caps;
mod check_runs;
mod disk;
mod ingest;
mod lease;
mod members;
mod opening;
mod ownership;
mod pushed;
mod shape;
mod sharing;
mod support;
mod urls;
mod webhooks;
