//! Integration tests of mapwright-fetch: every one against a server the test starts on 127.0.0.1:0.

mod server;

mod check;
mod conformance;
mod discover;
mod fetch;
mod incremental;
mod oai;
mod remote;
mod submit;
