//! Integration tests of mapwright-core: one test binary, one module per subject.

mod validate;
