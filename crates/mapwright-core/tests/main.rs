//! Integration tests of mapwright-core.

mod write;
