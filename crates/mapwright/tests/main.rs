//! Integration tests of the `mapwright` binary: one test binary, one module per command.

mod serve;
mod validate;
