//! Integration tests of the store; every test runs against SQLite and PostgreSQL.

mod accounts;
mod lease;
mod opening;
mod ownership;
mod pushed;
mod support;
mod urls;
