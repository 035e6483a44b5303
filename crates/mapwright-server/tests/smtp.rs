//! A test SMTP receiver on 127.0.0.1: enough of RFC 5321 for lettre without TLS or
//! authentication (a greeting, EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT), keeping each message
//! as the bytes that came after DATA, so a test reads the header fields a mail server would get.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::support::poll_until;

/// The receiver; it stops with the test's runtime.
pub struct SmtpReceiver {
    /// `smtp://127.0.0.1:PORT`, for `Mailer::smtp`.
    pub url: String,
    messages: Arc<Mutex<Vec<String>>>,
}

/// One message as received: its header fields (folded lines joined) and its body.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    /// The value of the first header field `name` (any case), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl SmtpReceiver {
    pub async fn start() -> SmtpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("smtp://{}", listener.local_addr().unwrap());
        let messages = Arc::new(Mutex::new(Vec::new()));
        let kept = messages.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, kept.clone()));
            }
        });
        SmtpReceiver { url, messages }
    }

    /// The messages received so far, oldest first.
    pub fn messages(&self) -> Vec<Received> {
        self.messages.lock().unwrap().iter().map(|m| parse(m)).collect()
    }

    /// Waits (up to 5 s: mail goes in the background) until `n` messages came.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        poll_until(Duration::from_secs(5), || async { Some(self.messages()).filter(|got| got.len() >= n) })
            .await
            .unwrap_or_else(|| panic!("expected {n} messages, the receiver has {:?}", self.messages()))
    }
}

async fn session(stream: tokio::net::TcpStream, messages: Arc<Mutex<Vec<String>>>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    write.write_all(b"220 receiver.test ESMTP\r\n").await.unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line.split(' ').next().unwrap_or("").to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" | "HELO" => b"250-receiver.test\r\n250 8BITMIME\r\n",
            "DATA" => {
                write.write_all(b"354 go on\r\n").await.unwrap();
                let mut message = String::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line == "." {
                        break;
                    }
                    // Dot-stuffing undone (RFC 5321, 4.5.2).
                    message.push_str(line.strip_prefix('.').filter(|_| line.starts_with("..")).unwrap_or(&line));
                    message.push('\n');
                }
                messages.lock().unwrap().push(message);
                b"250 kept\r\n"
            }
            "QUIT" => {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            }
            _ => b"250 ok\r\n",
        };
        if write.write_all(reply).await.is_err() {
            return;
        }
    }
}

fn parse(message: &str) -> Received {
    let (head, body) = message.split_once("\n\n").unwrap_or((message, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in head.lines() {
        match headers.last_mut() {
            // A folded line continues the field before it.
            Some((_, value)) if line.starts_with([' ', '\t']) => value.push_str(line),
            _ => {
                let (name, value) = line.split_once(':').unwrap_or((line, ""));
                headers.push((name.to_owned(), value.trim_start().to_owned()));
            }
        }
    }
    Received { headers, body: body.to_owned() }
}
