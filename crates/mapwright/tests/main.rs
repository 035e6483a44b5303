//! Integration tests of the `mapwright` binary.

mod fetch;
