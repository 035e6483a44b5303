//! Embeds `migrations/{sqlite,postgres}/NNNN_description.sql` in the library, as sqlx's
//! `migrate!` would, without sqlx's proc-macro crate (see `src/row.rs` for why): writes
//! `$OUT_DIR/migrations.rs`, one `(version, description, sql)` table per backend.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut code = String::new();
    for backend in ["sqlite", "postgres"] {
        let dir = Path::new(&manifest).join("migrations").join(backend);
        println!("cargo::rerun-if-changed={}", dir.display());
        let mut files: Vec<(i64, String, String)> = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("the migrations folder is readable") {
            let path = entry.expect("a readable folder entry").path();
            let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
            let Some((version, rest)) = name.split_once('_') else { continue };
            let Some(description) = rest.strip_suffix(".sql") else { continue };
            let version: i64 =
                version.parse().unwrap_or_else(|_| panic!("migration {name}: the name must start with a number"));
            println!("cargo::rerun-if-changed={}", path.display());
            files.push((version, description.replace('_', " "), path.display().to_string()));
        }
        files.sort();
        for pair in files.windows(2) {
            assert!(pair[0].0 != pair[1].0, "two {backend} migrations numbered {}", pair[0].0);
        }
        writeln!(code, "pub(crate) const {}: &[(i64, &str, &str)] = &[", backend.to_uppercase()).unwrap();
        for (version, description, path) in files {
            writeln!(code, "    ({version}, {description:?}, include_str!({path:?})),").unwrap();
        }
        code.push_str("];\n");
    }
    std::fs::write(Path::new(&out).join("migrations.rs"), code).expect("OUT_DIR is writable");
}
