//! Integration tests of the `mapwright` binary, run as a user would: one test binary, one
//! module per command.

mod crawl;
mod fetch;
mod generate;
mod read;
mod scope;
mod serve;
mod validate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Starts `mapwright ARGS` in `cwd` with its standard streams piped.
pub fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The folder in `/proc` of the reader's worker thread (`mapwright-gunzip`: it inflates, or
/// reads ahead) of the process `pid`, once it is there; `what` names it in the failure after
/// 20 seconds without it.
#[cfg(target_os = "linux")]
pub fn worker_thread(pid: u32, what: &str) -> PathBuf {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let found = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("mapwright-gunz")));
        if let Some(t) = found {
            return t.path();
        }
        assert!(std::time::Instant::now() < deadline, "no {what} seen");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Runs `mapwright ARGS` with `stdin` and returns its output.
pub fn mapwright(args: &[&str], stdin: &[u8], cwd: &Path) -> Output {
    let mut child = spawn(args, cwd);
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// Like [`mapwright`], asserting success.
pub fn ok(args: &[&str], stdin: &[u8], cwd: &Path) -> (String, String) {
    let out = mapwright(args, stdin, cwd);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mapwright {args:?} failed: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// The team's shared folder: `../../../shared` from the crate in CI, `/work/shared` here.
pub fn shared() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if p.join("schemas").exists() { p } else { PathBuf::from("/work/shared") }
}

pub fn crawl_data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mapwright-crawl/tests/data").join(p)
}

/// Asserts that `file` passes `xmllint --schema` with the official XSD `schema`.
pub fn xmllint(file: &Path, schema: &str) {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(shared().join("schemas").join(schema))
        .arg(file)
        .output()
        .expect("xmllint runs (apt-get install libxml2-utils)");
    assert!(out.status.success(), "{} fails {schema}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
}
