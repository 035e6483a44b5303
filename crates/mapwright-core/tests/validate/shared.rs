//! Finding `shared/` (the team's specs and fixtures): beside the clone in CI, two levels up
//! from a worktree here.

use std::path::PathBuf;

/// The `shared/` folder; panics with a clear message when it cannot be found.
pub fn dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut tried = Vec::new();
    if let Ok(p) = std::env::var("MAPWRIGHT_SHARED") {
        tried.push(PathBuf::from(p));
    }
    tried.push(manifest.join("../../../shared"));
    tried.push(manifest.join("../../../../shared"));
    for p in &tried {
        if p.join("RULES.md").is_file() {
            return p.clone();
        }
    }
    panic!("shared/ not found (RULES.md looked for in {tried:?}); set MAPWRIGHT_SHARED to its path");
}
