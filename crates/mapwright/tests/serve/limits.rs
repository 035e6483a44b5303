//! `mapwright serve` with the connection settings (issue 14 item 7), as a process: idle and
//! slow connections beyond the cap do not keep `/healthz` out, and `--admin` naming no account
//! is a warning at start, never a grant at a later sign-up (item 2).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::http;
use super::process::Server;

#[test]
fn healthz_answers_past_the_connection_cap_and_admin_is_never_granted_by_sign_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let args = [
        "--data-dir",
        data.to_str().unwrap(),
        "--max-connections",
        "20",
        "--header-timeout",
        "1s",
        "--admin",
        "Boss@Example.com",
    ];
    let server = Server::start(&args, &dir.path().join("serve.log"));
    let log = server.log_text();
    assert!(log.contains("boss@example.com") && log.contains("sign-up never makes an admin"), "{log}");

    // 200 idle connections and 50 that never finish their headers: ten times the cap.
    let mut held = Vec::new();
    for n in 0..250 {
        let mut stream = TcpStream::connect(&server.addr).unwrap();
        if n % 5 == 0 {
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: ").unwrap();
        }
        held.push(stream);
    }
    let started = Instant::now();
    let health = http(&server.addr, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    // The oldest were closed by the server to make room.
    let mut first = held.remove(0);
    first.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = [0u8; 64];
    assert!(matches!(first.read(&mut buf), Ok(0) | Err(_)), "the first idle connection is still open");

    let body = r#"{"email":"boss@example.com","password":"a long passphrase"}"#;
    let signup = http(
        &server.addr,
        &format!(
            "POST /api/v1/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(signup.starts_with("HTTP/1.1 202"), "{signup}");
    let confirmed = super::accounts::confirm_from_outbox(&server.addr, &data, "boss@example.com", "a long passphrase");
    assert!(confirmed.contains("\"is_admin\":false"), "a sign-up after start is never an admin: {confirmed}");
    assert!(server.terminate(), "stops cleanly with connections held open");
    drop(held);
}
