//! The binary's relative relocations packed (`-z pack-relative-relocs`, DT_RELR): the loader
//! applied 68,108 of them, listed in 1.6 MB of `.rela.dyn`, at every start, about 0.9 M cycles
//! of a one-URL `read`; packed, the list is 19 KB and the loader's time halves (about 0.5 ms a
//! process, bench/read/HISTORY.md). Only where the C library the binary is built against reads
//! DT_RELR (glibc 2.36 and later): an older loader would leave the packed relocations
//! unapplied. A cross build, another C library or an unknown version links as before.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else { return };
    if glibc_reads_relr(&String::from_utf8_lossy(&out.stdout)) {
        println!("cargo:rustc-link-arg-bin=mapwright=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether `getconf GNU_LIBC_VERSION`'s answer ("glibc 2.36") names a glibc that reads DT_RELR.
fn glibc_reads_relr(answer: &str) -> bool {
    let Some(version) = answer.trim().strip_prefix("glibc ") else { return false };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    matches!((parts.next(), parts.next()), (Some(Some(major)), Some(Some(minor))) if (major, minor) >= (2, 36))
}
