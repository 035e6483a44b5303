//! Integration tests of mapwright-core: conformance with peer parsers, real-world files,
//! every format and repair, hostile input.

mod conformance;
mod formats;
mod hostile;
mod realworld;
mod support;

#[global_allocator]
static ALLOC: support::PeakAlloc = support::PeakAlloc;
