//! Issue 14 item 7 on a real listener (`listen::serve` on 127.0.0.1:0): slow headers are cut
//! off, idle connections closed, the connection cap taken over from idle connections so that
//! `/healthz` keeps answering under slowloris and a flood of idle connections, and request
//! bodies limited in size and in time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mapwright_server::listen::{self, Config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::TestApp;

/// The app on a real listener with `config`; returns its address.
async fn start(config: Config) -> (SocketAddr, TestApp) {
    let app = TestApp::new(false).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = mapwright_server::app(app.state.clone());
    tokio::spawn(listen::serve(listener, router, config, std::future::pending(), Duration::from_secs(1)));
    (addr, app)
}

/// One request on a fresh connection; the status and how long the answer took.
async fn request(addr: SocketAddr, text: &str) -> (u16, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The server may answer and close before the whole request is written.
    let _ = stream.write_all(text.as_bytes()).await;
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stream.read(&mut buf).await {
            response.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(read.is_ok(), "no answer in 10 s to {:?}", &text[..text.len().min(200)]);
    let head = String::from_utf8_lossy(&response);
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, started.elapsed())
}

const HEALTH: &str = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

/// Whether the server closed `stream` (EOF or reset) within `within`.
async fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 512];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

fn small(max_connections: usize) -> Config {
    Config {
        max_connections,
        // One client (127.0.0.1) here: its cap is the server's, tested on its own below.
        max_connections_per_client: max_connections,
        header_timeout: Duration::from_millis(700),
        idle_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(3),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_under_slowloris_and_slow_headers_are_cut_off() {
    let (addr, _app) = start(small(100)).await;
    // 300 connections that send headers a line at a time and never finish: three times the cap.
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n").await.unwrap();
        slow.push(stream);
    }
    let trickle = tokio::spawn(async move {
        for round in 0..20 {
            for stream in &mut slow {
                let _ = stream.write_all(format!("X-Slow-{round}: 1\r\n").as_bytes()).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        slow
    });
    for _ in 0..10 {
        let (status, took) = request(addr, HEALTH).await;
        assert_eq!(status, 200);
        assert!(took < Duration::from_secs(1), "/healthz took {took:?} under slowloris");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut slow = trickle.await.unwrap();
    // After the header timeout every slow connection has been closed by the server.
    let mut open = 0;
    for stream in &mut slow {
        if !closed_by_server(stream, Duration::from_secs(2)).await {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} slowloris connections still open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_under_a_flood_of_idle_connections_and_idle_ones_close() {
    let (addr, _app) = start(small(64)).await;
    let mut idle = Vec::new();
    for n in 0..1000 {
        idle.push(TcpStream::connect(addr).await.unwrap());
        if n % 100 == 0 {
            let (status, took) = request(addr, HEALTH).await;
            assert_eq!(status, 200, "after {n} idle connections");
            assert!(took < Duration::from_secs(1), "/healthz took {took:?} with {n} idle connections");
        }
    }
    // Only the cap's worth are held; the rest were taken over and closed at once.
    let mut closed = 0;
    for stream in &mut idle[..900] {
        if closed_by_server(stream, Duration::from_millis(20)).await {
            closed += 1;
        }
    }
    assert!(closed >= 900 - 64, "only {closed} of the first 900 idle connections closed");
    // A keep-alive connection with no request for longer than the timeouts is closed.
    let mut keep = TcpStream::connect(addr).await.unwrap();
    keep.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 256];
    assert!(keep.read(&mut buf).await.unwrap() > 0);
    assert!(closed_by_server(&mut keep, Duration::from_secs(3)).await, "the idle keep-alive connection stays open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_are_limited_in_size_and_in_time() {
    let (addr, _app) = start(small(100)).await;
    let big = format!("{{\"email\":\"{}\"}}", "x".repeat(100 * 1024));
    let text = format!(
        "POST /api/v1/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{big}",
        big.len()
    );
    assert_eq!(request(addr, &text).await.0, 413, "a body over the limit");
    // A body that stops half-way is answered 408 once the body pauses too long.
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /api/v1/signup HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\":")
        .await
        .unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    assert!(read.is_ok(), "a stalled body holds the request forever");
    let head = String::from_utf8_lossy(&response);
    assert!(head.starts_with("HTTP/1.1 408") || head.starts_with("HTTP/1.1 400"), "{head}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A connection from `source` (another loopback address: another client) to `addr`.
async fn connect_from(source: &str, addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// One client opening connection after connection takes the places of its own connections,
/// never another client's: the other client's keep-alive connection still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_the_places_of_another_clients_connections() {
    let config = Config { max_connections_per_client: 4, idle_timeout: Duration::from_secs(30), ..small(20) };
    let (addr, _app) = start(Config { header_timeout: Duration::from_secs(30), ..config }).await;
    let mut other = connect_from("127.0.0.2", addr).await;
    let mut flood = Vec::new();
    for _ in 0..200 {
        flood.push(connect_from("127.0.0.1", addr).await);
    }
    // The flood's oldest connections were closed to make room for its newer ones...
    assert!(closed_by_server(&mut flood[0], Duration::from_secs(3)).await, "the flood's first connection is open");
    assert!(!closed_by_server(&mut flood[199], Duration::from_millis(300)).await, "its newest is open");
    // ...and the other client's connection was never touched.
    other.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), other.read_to_string(&mut answer)).await.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
