//! Integration tests of the store; every test runs against SQLite and PostgreSQL.

mod accounts;
mod lease;
mod ownership;
mod support;
mod urls;
