//! Accounts of `mapwright serve` as a process (issue 14 items 2 and 13): a sign-up is
//! confirmed by a mailed link (to the outbox folder by default, or through SMTP), and the
//! operator makes accounts and the first admin with `serve user create` / `serve admin create`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::http;
use super::process::Server;

fn post_json(addr: &str, path: &str, body: &str) -> String {
    http(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The confirmation link's token in the newest `.eml` of `DATA/outbox` sent to `to`.
fn outbox_token(data: &Path, to: &str, public: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut files: Vec<_> = std::fs::read_dir(data.join("outbox"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        for file in files.iter().rev() {
            let text = std::fs::read_to_string(file).unwrap();
            if text.contains(&format!("To: {to}")) {
                let link = format!("{public}/signup/confirm?token=");
                let (_, rest) = text.split_once(&link).unwrap_or_else(|| panic!("no {link} in {text}"));
                return rest.chars().take_while(char::is_ascii_hexdigit).collect();
            }
        }
        assert!(Instant::now() < deadline, "no mail to {to} in the outbox");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Follows the link mailed to `to` (read from the outbox) with the sign-up's password; returns
/// the confirmation's answer.
pub fn confirm_from_outbox(addr: &str, data: &Path, to: &str, password: &str) -> String {
    let token = outbox_token(data, to, &format!("http://{addr}"));
    let answer =
        post_json(addr, "/api/v1/signup/confirm", &format!(r#"{{"token":"{token}","password":"{password}"}}"#));
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("HttpOnly; SameSite=Lax"), "{answer}");
    answer
}

#[test]
fn sign_up_mail_goes_to_the_outbox_by_default_and_its_link_makes_the_account() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&["--data-dir", data.to_str().unwrap()], &dir.path().join("serve.log"));
    assert!(server.log_text().contains("outbox"), "the operator is told where the mail goes");
    let ask = r#"{"email":"ann@example.com","password":"a long passphrase"}"#;
    let first = post_json(&server.addr, "/api/v1/signup", ask);
    assert!(first.starts_with("HTTP/1.1 202"), "{first}");
    confirm_from_outbox(&server.addr, &data, "ann@example.com", "a long passphrase");
    let signin = post_json(&server.addr, "/api/v1/signin", ask);
    assert!(signin.starts_with("HTTP/1.1 200"), "{signin}");
    // The outbox holds secrets: only the service's user may read it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("outbox")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "outbox mode {mode:o}");
    }
    assert!(server.terminate());
}

/// A one-message SMTP server on 127.0.0.1: answers the dialogue, keeps what it was told.
fn smtp_sink() -> (u16, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let mut said = String::new();
        writer.write_all(b"220 sink ESMTP\r\n").unwrap();
        let mut in_data = false;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            said.push_str(&line);
            if in_data {
                if line == ".\r\n" {
                    in_data = false;
                    writer.write_all(b"250 queued\r\n").unwrap();
                }
                continue;
            }
            let verb = line.get(..4).unwrap_or_default().to_ascii_uppercase();
            let answer: &[u8] = match verb.as_str() {
                "EHLO" => b"250-sink\r\n250 8BITMIME\r\n",
                "DATA" => {
                    in_data = true;
                    b"354 go on\r\n"
                }
                "QUIT" => {
                    writer.write_all(b"221 bye\r\n").unwrap();
                    break;
                }
                _ => b"250 ok\r\n",
            };
            writer.write_all(answer).unwrap();
        }
        said
    });
    (port, handle)
}

#[test]
fn sign_up_mail_goes_through_smtp_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (port, sink) = smtp_sink();
    let smtp = format!("smtp://127.0.0.1:{port}");
    let args = [
        "--data-dir",
        data.to_str().unwrap(),
        "--smtp-url",
        &smtp,
        "--mail-from",
        "Sitemaps <sitemaps@example.org>",
        "--public-url",
        "https://sitemaps.example.org/",
    ];
    let server = Server::start(&args, &dir.path().join("serve.log"));
    let ask = r#"{"email":"ann@example.com","password":"a long passphrase"}"#;
    assert!(post_json(&server.addr, "/api/v1/signup", ask).starts_with("HTTP/1.1 202"));
    let said = sink.join().unwrap();
    assert!(said.contains("MAIL FROM:<sitemaps@example.org>"), "{said}");
    assert!(said.contains("RCPT TO:<ann@example.com>"), "{said}");
    assert!(
        said.contains("https://sitemaps.example.org/signup/confirm?token="),
        "links start with --public-url: {said}"
    );
    assert!(!data.join("outbox").exists(), "nothing in an outbox when SMTP is set");
    assert!(server.terminate());
}

/// Runs `mapwright serve --data-dir DATA ARGS` with `stdin` as standard input.
fn serve_command(data: &Path, args: &[&str], stdin: &str) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mapwright"))
        .arg("serve")
        .args(args)
        .args(["--data-dir", data.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn the_operator_makes_accounts_and_the_first_admin() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (ok, text) = serve_command(&data, &["user", "create", "Ann@Example.com"], "a long passphrase\n");
    assert!(ok && text.contains("made the account ann@example.com"), "{text}");
    let (ok, text) = serve_command(&data, &["user", "create", "ann@example.com"], "another passphrase\n");
    assert!(!ok && text.contains("has an account already"), "{text}");
    let (ok, text) = serve_command(&data, &["user", "create", "bob@example.com"], "short\n");
    assert!(!ok && text.contains("at least 10 characters"), "{text}");
    let (ok, text) = serve_command(&data, &["admin", "create", "boss@example.com"], "the boss passphrase\n");
    assert!(ok && text.contains("made the admin account boss@example.com"), "{text}");
    // An existing account is made an admin without a password.
    let (ok, text) = serve_command(&data, &["admin", "create", "ann@example.com"], "");
    assert!(ok && text.contains("is an admin now"), "{text}");

    let server =
        Server::start(&["--data-dir", data.to_str().unwrap(), "--sign-up", "closed"], &dir.path().join("serve.log"));
    let boss =
        post_json(&server.addr, "/api/v1/signin", r#"{"email":"boss@example.com","password":"the boss passphrase"}"#);
    assert!(boss.starts_with("HTTP/1.1 200") && boss.contains("\"is_admin\":true"), "{boss}");
    let closed =
        post_json(&server.addr, "/api/v1/signup", r#"{"email":"eve@example.com","password":"a long passphrase"}"#);
    assert!(closed.starts_with("HTTP/1.1 403") && closed.contains("serve user create"), "{closed}");
    assert!(server.terminate());
}

/// Issue 34: a locked-out user on a server that sends no mail gets a new password from the
/// operator (`serve user password`); the old password and the old sessions stop working.
#[test]
fn the_operator_sets_a_new_password() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (ok, text) = serve_command(&data, &["user", "password", "nobody@example.com"], "a long passphrase\n");
    assert!(!ok && text.contains("has no account"), "{text}");
    let (ok, text) = serve_command(&data, &["user", "create", "ann@example.com"], "the old passphrase\n");
    assert!(ok, "{text}");
    let (ok, text) = serve_command(&data, &["user", "password", "ann@example.com"], "short\n");
    assert!(!ok && text.contains("at least 10 characters"), "{text}");

    let args = ["--data-dir", data.to_str().unwrap(), "--sign-up", "closed"];
    let server = Server::start(&args, &dir.path().join("serve.log"));
    let old = r#"{"email":"ann@example.com","password":"the old passphrase"}"#;
    let signed_in = post_json(&server.addr, "/api/v1/signin", old);
    assert!(signed_in.starts_with("HTTP/1.1 200"), "{signed_in}");
    let cookie = signed_in.lines().find_map(|l| l.strip_prefix("set-cookie: ")).unwrap().split(';').next().unwrap();
    // No mail here: a reset request says whom to ask.
    let reset = post_json(&server.addr, "/api/v1/password-reset", r#"{"email":"ann@example.com"}"#);
    assert!(reset.starts_with("HTTP/1.1 403") && reset.contains("serve user password"), "{reset}");

    let (ok, text) = serve_command(&data, &["user", "password", "Ann@Example.com"], "the new passphrase\n");
    assert!(ok && text.contains("set a new password for ann@example.com"), "{text}");
    let me = http(
        &server.addr,
        &format!("GET /api/v1/me HTTP/1.1\r\nHost: t\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"),
    );
    assert!(me.starts_with("HTTP/1.1 401"), "the old session ended: {me}");
    assert!(post_json(&server.addr, "/api/v1/signin", old).starts_with("HTTP/1.1 401"));
    let new = r#"{"email":"ann@example.com","password":"the new passphrase"}"#;
    assert!(post_json(&server.addr, "/api/v1/signin", new).starts_with("HTTP/1.1 200"));
    assert!(server.terminate());
}
