//! Embeds `migrations/NNNN_description.sql` in the library, as sqlx's `migrate!` would, without
//! sqlx's proc-macro crate (see `src/row.rs` for why). Each file holds both dialects; it is
//! rendered for each backend (`src/migrations/render.rs`) into `$OUT_DIR/migrations/<backend>/`,
//! and `$OUT_DIR/migrations.rs` gets one `(version, description, sql)` table per backend.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/migrations/render.rs"]
mod render;

use render::{Backend, render};

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dir = Path::new(&manifest).join("migrations");
    println!("cargo::rerun-if-changed={}", dir.display());
    println!("cargo::rerun-if-changed=src/migrations/render.rs");
    let files = migration_files(&dir);
    let mut code = String::new();
    for backend in Backend::ALL {
        let rendered = out.join("migrations").join(backend.name());
        std::fs::create_dir_all(&rendered).expect("OUT_DIR is writable");
        writeln!(code, "pub(crate) const {}: &[(i64, &str, &str)] = &[", backend.name().to_uppercase()).unwrap();
        for (version, description, path, source) in &files {
            let sql = render(source, backend).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if sql.is_empty() {
                continue; // a migration of the other backend only
            }
            let target = rendered.join(path.file_name().expect("a file"));
            std::fs::write(&target, sql).expect("OUT_DIR is writable");
            writeln!(code, "    ({version}, {description:?}, include_str!({:?})),", target.display()).unwrap();
        }
        code.push_str("];\n");
    }
    std::fs::write(out.join("migrations.rs"), code).expect("OUT_DIR is writable");
}

/// The migration files, `(version, description, path, text)` by version, each read once for
/// both renderings, named as sqlx reads a migrations folder: `NNNN_description.sql`, the
/// description with `_` read as a space.
fn migration_files(dir: &Path) -> Vec<(i64, String, PathBuf, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the migrations folder is readable") {
        let path = entry.expect("a readable folder entry").path();
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        let Some((version, rest)) = name.split_once('_') else { continue };
        let Some(description) = rest.strip_suffix(".sql") else { continue };
        let version: i64 =
            version.parse().unwrap_or_else(|_| panic!("migration {name}: the name must start with a number"));
        println!("cargo::rerun-if-changed={}", path.display());
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        files.push((version, description.replace('_', " "), path, source));
    }
    files.sort();
    for pair in files.windows(2) {
        assert!(pair[0].0 != pair[1].0, "two migrations numbered {}", pair[0].0);
    }
    files
}
