//! `mapwright serve` end to end: starts on a free port with an SQLite data directory,
//! answers /healthz, /ping and sign-up (the accounts: `accounts.rs`), and stops cleanly on SIGTERM.

mod accounts;
mod crash;
mod ingest;
mod limits;
mod process;
mod procs;
mod settings;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

/// One HTTP/1.1 request over a fresh connection; returns the whole response.
fn http(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn serve_answers_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(log.read_line(&mut line).unwrap() > 0, "serve exited before listening");
        if let Some((_, rest)) = line.split_once("listening on http://") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    assert!(dir.path().join("mapwright.db").exists());

    let health = http(&addr, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(health.starts_with("HTTP/1.1 200") && health.ends_with("ok\n"), "{health}");
    let bad = http(&addr, "GET /ping HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    let body = r#"{"email":"ann@example.com","password":"a long passphrase"}"#;
    let signup = http(
        &addr,
        &format!(
            "POST /api/v1/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(signup.starts_with("HTTP/1.1 202"), "{signup}");
    assert!(!signup.contains("Set-Cookie") && !signup.contains("set-cookie"), "no session before the link: {signup}");

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    log.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}
