//! Integration tests of mapwright-core (one test binary, one module per subject): conformance
//! with peer parsers, real-world files, every format and repair, hostile input, validation,
//! writing.

mod conformance;
mod formats;
mod hostile;
mod oai;
mod realworld;
mod support;
mod validate;
mod verdict;
mod write;

#[global_allocator]
static ALLOC: support::PeakAlloc = support::PeakAlloc;
