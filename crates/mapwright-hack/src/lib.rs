//! The workspace-hack crate of cargo-hakari: no code, only dependencies with the workspace's features (see its Cargo.toml).
