//! Integration tests of the store; every test runs against SQLite and PostgreSQL.

mod accounts;
mod caps;
mod lease;
mod opening;
mod ownership;
mod pushed;
mod shape;
mod sharing;
mod support;
mod urls;
