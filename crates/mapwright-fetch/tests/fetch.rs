//! The HTTP layer alone: timeouts, limits while bytes arrive, bombs, redirects, retries, headers.

use crate::discover::test_config;
use crate::server::{Route, Server, fixed, gz, urlset};
use mapwright_core::{Entry, Limits, Position, ReadOptions};
use mapwright_fetch::{Config, Error, Fetched, Fetcher, SitemapFetch, Visitor, read_remote};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Count(u64);

impl Visitor for Count {
    fn entry(&mut self, _: Entry, _: Position) -> ControlFlow<()> {
        self.0 += 1;
        ControlFlow::Continue(())
    }
}

async fn read(cfg: Config, url: &str, limits: Limits) -> Result<(u64, Option<Error>), Error> {
    let f = Fetcher::new(cfg).unwrap();
    let (out, count) = read_remote(&f, url, None, ReadOptions { limits }, Count::default()).await?;
    match out {
        SitemapFetch::Read(r) => Ok((count.0, r.error)),
        SitemapFetch::NotModified(_) => panic!("not asked conditionally"),
    }
}

#[tokio::test]
async fn slow_drip_times_out_between_bytes() {
    let s = Server::start().await;
    s.route("/drip.xml", Route::Drip { every: Duration::from_secs(2), n: 100 });
    let cfg = Config { read_timeout: Duration::from_millis(300), ..test_config() };
    let t = Instant::now();
    let (n, err) = read(cfg, &s.url("/drip.xml"), Limits::default()).await.unwrap();
    assert_eq!(n, 0);
    match err {
        Some(Error::Timeout { what: "between bytes", limit, url }) => {
            assert_eq!(limit, Duration::from_millis(300));
            assert_eq!(url, s.url("/drip.xml"));
        }
        other => panic!("expected a between-bytes timeout, got {other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());
}

#[tokio::test]
async fn whole_request_timeout() {
    let s = Server::start().await;
    // Bytes come every 100 ms (no between-bytes timeout) but the whole takes 10 s.
    s.route("/drip.xml", Route::Drip { every: Duration::from_millis(100), n: 100 });
    let cfg = Config { timeout: Duration::from_millis(700), ..test_config() };
    let t = Instant::now();
    let (_, err) = read(cfg, &s.url("/drip.xml"), Limits::default()).await.unwrap();
    assert!(matches!(err, Some(Error::Timeout { what: "request" | "between bytes", .. })), "{err:?}");
    assert!(t.elapsed() < Duration::from_secs(4), "took {:?}", t.elapsed());
}

#[tokio::test]
async fn endless_body_stops_at_the_limit() {
    let s = Server::start().await;
    s.route("/endless.xml", Route::Endless);
    let cfg = Config { max_bytes: 2 << 20, ..test_config() };
    let limits = Limits { max_bytes: 2 << 20, ..Limits::default() };
    let (n, err) = read(cfg, &s.url("/endless.xml"), limits).await.unwrap();
    match err {
        Some(Error::TooLarge { limit, url }) => {
            assert_eq!(limit, 2 << 20);
            assert_eq!(url, s.url("/endless.xml"));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // The entries before the limit were read: 2 MiB of 41-byte entries, less the chunk
    // (1,600 entries) that crossed the limit, which is not handed to the reader.
    assert!((48_000..51_200).contains(&n), "{n} entries");
}

#[tokio::test]
async fn gzip_bomb_stops_at_the_uncompressed_limit() {
    let s = Server::start().await;
    // 64 MiB of padding (a comment per KiB, so no run of text is suspiciously long) after a
    // valid start, as 64 gzip members of 1 MiB each (a multi-member stream is legal gzip;
    // building it this way keeps the test fast in debug builds).
    let pad: Vec<u8> = format!("<!---->{}", " ".repeat(1017)).into_bytes().repeat(1024);
    let mut first = b"<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://127.0.0.1/a</loc></url>".to_vec();
    first.extend_from_slice(&pad[first.len()..]);
    let mut bomb = gz(&first);
    let member = gz(&pad);
    for _ in 1..64 {
        bomb.extend_from_slice(&member);
    }
    assert!(bomb.len() < 1 << 20, "the bomb is small: {}", bomb.len());
    s.page("/bomb.xml.gz", "application/gzip", bomb);
    let (n, err) =
        read(test_config(), &s.url("/bomb.xml.gz"), Limits { max_bytes: 8 << 20, ..Limits::default() }).await.unwrap();
    assert_eq!(n, 1);
    match err {
        Some(Error::Read { source: mapwright_core::Error::TooLarge { limit, .. }, .. }) => assert_eq!(limit, 8 << 20),
        other => panic!("expected the core's TooLarge, got {other:?}"),
    }
}

#[tokio::test]
async fn redirect_loop_and_too_many_redirects() {
    let s = Server::start().await;
    s.route("/a", Route::Redirect(s.url("/b")));
    s.route("/b", Route::Redirect(s.url("/a")));
    for i in 0..5 {
        s.route(&format!("/r{i}"), Route::Redirect(s.url(&format!("/r{}", i + 1))));
    }
    let f = Fetcher::new(Config { max_redirects: 3, ..test_config() }).unwrap();
    match f.get(&s.url("/a"), None).await {
        Err(Error::Redirect { url, reason }) => {
            assert_eq!(url, s.url("/a"));
            assert_eq!(reason, "redirect loop");
        }
        other => panic!("expected a redirect loop, got {:?}", other.err()),
    }
    match f.get(&s.url("/r0"), None).await {
        Err(Error::Redirect { reason, .. }) => assert_eq!(reason, "more than 3 redirects"),
        other => panic!("expected too many redirects, got {:?}", other.err()),
    }
}

/// Each redirect hop asks the fetcher's gate for its own target before it is sent, so a
/// redirect cannot aim a service's requests at a host past that host's budget; a held hop is
/// not sent and the fetch says why.
#[tokio::test]
async fn each_redirect_hop_asks_the_gate_for_its_own_target() {
    let s = Server::start().await;
    let other = s.other_host();
    s.route("/old.xml", Route::Redirect(format!("{other}/moved.xml")));
    s.page("/moved.xml", "application/xml", urlset(&[s.url("/1")]));
    let gate = Arc::new(crate::oai::CountingGate { asked: Default::default(), allow: usize::MAX });
    let f = Fetcher::new(test_config()).unwrap().with_gate(gate.clone());
    let Ok(Fetched::Body(_)) = f.get(&s.url("/old.xml"), None).await else { panic!("not fetched") };
    assert_eq!(*gate.asked.lock().unwrap(), vec![s.url("/old.xml"), format!("{other}/moved.xml")]);
    assert_eq!(s.take_paths(), vec!["/moved.xml", "/old.xml"], "both hops sent (sorted)");

    let gate = Arc::new(crate::oai::CountingGate { asked: Default::default(), allow: 1 });
    let f = Fetcher::new(test_config()).unwrap().with_gate(gate.clone());
    match f.get(&s.url("/old.xml"), None).await {
        Err(Error::Held { url, reason }) => {
            assert_eq!(url, format!("{other}/moved.xml"));
            assert_eq!(reason, "the host's budget is spent");
        }
        other => panic!("expected the hop held, got {:?}", other.err()),
    }
    assert_eq!(s.take_paths(), vec!["/old.xml"], "the held hop is not sent");
}

#[tokio::test]
async fn redirect_records_the_final_url() {
    let s = Server::start().await;
    s.route("/old.xml", Route::Redirect(s.url("/new/sitemap.xml")));
    s.page("/new/sitemap.xml", "application/xml", urlset(&[s.url("/new/1")]));
    let f = Fetcher::new(test_config()).unwrap();
    match f.get(&s.url("/old.xml"), None).await.unwrap() {
        Fetched::Body(r) => {
            assert_eq!(r.meta.final_url, s.url("/new/sitemap.xml"));
            assert_eq!(r.meta.requested, s.url("/old.xml"));
        }
        Fetched::NotModified(_) => panic!("not conditional"),
    }
}

#[tokio::test]
async fn retries_429_and_503_honouring_retry_after() {
    let s = Server::start().await;
    let then = Box::new(fixed(200, "application/xml", urlset(&[s.url("/1")])));
    s.route(
        "/busy.xml",
        Route::Flaky { fails: Arc::new(Mutex::new(1)), status: 503, retry_after: Some(1), then: then.clone() },
    );
    s.route("/slow.xml", Route::Flaky { fails: Arc::new(Mutex::new(1)), status: 429, retry_after: Some(3600), then });
    let f = Fetcher::new(test_config()).unwrap();
    let t = Instant::now();
    assert!(matches!(f.get(&s.url("/busy.xml"), None).await, Ok(Fetched::Body(_))));
    assert!(t.elapsed() >= Duration::from_millis(950), "Retry-After: 1 was honoured: {:?}", t.elapsed());
    // A Retry-After longer than max_retry_after gives up at once with the status.
    match f.get(&s.url("/slow.xml"), None).await {
        Err(Error::Status { status, .. }) => assert_eq!(status, 429),
        other => panic!("expected status 429, got {:?}", other.err()),
    }
    let paths: Vec<String> = s.take_log().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, vec!["/busy.xml", "/busy.xml", "/slow.xml"]);
}

#[tokio::test]
async fn user_agent_is_clear_and_configurable() {
    let s = Server::start().await;
    s.page("/s.xml", "application/xml", urlset(&[s.url("/1")]));
    let f = Fetcher::new(test_config()).unwrap();
    f.get(&s.url("/s.xml"), None).await.unwrap();
    let f = Fetcher::new(Config { user_agent: "examplebot/2.0".into(), ..test_config() }).unwrap();
    f.get(&s.url("/s.xml"), None).await.unwrap();
    let agents: Vec<String> =
        s.take_log().iter().map(|r| r.headers["user-agent"].to_str().unwrap().to_string()).collect();
    assert_eq!(
        agents,
        vec![
            format!("mapwright/{} (+https://github.com/mapwright/mapwright)", env!("CARGO_PKG_VERSION")),
            "examplebot/2.0".into()
        ]
    );
}

#[tokio::test]
async fn private_networks_can_be_refused() {
    let s = Server::start().await;
    s.page("/s.xml", "application/xml", urlset(&[s.url("/1")]));
    let f = Fetcher::new(Config { allow_private_networks: false, ..test_config() }).unwrap();
    match f.get(&s.url("/s.xml"), None).await {
        Err(Error::InvalidUrl { reason, .. }) => assert!(reason.contains("private"), "{reason}"),
        other => panic!("expected a refusal, got {:?}", other.err()),
    }
    // A name that resolves to loopback is refused after resolution.
    match f.get(&format!("{}/s.xml", s.other_host()), None).await {
        Err(Error::Connect { message, .. }) => assert!(message.contains("private or loopback"), "{message}"),
        other => panic!("expected a refusal, got {:?}", other.err()),
    }
    assert!(s.take_log().is_empty());
}

#[tokio::test]
async fn unsupported_content_encoding_is_an_error() {
    let s = Server::start().await;
    s.route(
        "/br.xml",
        Route::Fixed { status: 200, headers: vec![("content-encoding", "br".into())], body: "xx".into(), etag: None },
    );
    let (_, err) = read(test_config(), &s.url("/br.xml"), Limits::default()).await.unwrap();
    assert!(matches!(err, Some(Error::Encoding { ref encoding, .. }) if encoding == "br"), "{err:?}");
}

/// The body of a GET of `url`, received whole on a blocking thread with `memory` bytes in memory.
async fn receive(cfg: Config, url: &str, memory: usize) -> mapwright_fetch::Received {
    let f = Fetcher::new(cfg).unwrap();
    let Ok(Fetched::Body(response)) = f.get(url, None).await else { panic!("a body") };
    let body = response.into_reader();
    tokio::task::spawn_blocking(move || body.receive(memory)).await.unwrap().unwrap()
}

/// Everything a received body's reader gives, and the error it ends with.
fn drain(received: mapwright_fetch::Received) -> (Vec<u8>, Option<Error>) {
    use std::io::Read;
    let mut reader = received.into_reader();
    let mut out = Vec::new();
    let error = reader.read_to_end(&mut out).err().map(|e| mapwright_fetch::body::take_fetch_error(e).unwrap());
    (out, error)
}

#[tokio::test]
async fn a_received_body_is_hashed_before_it_is_read_and_spills_past_its_memory() {
    let s = Server::start().await;
    let body: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
    s.route("/big.bin", fixed(200, "application/octet-stream", body.clone()));
    // Half in memory, half in the temporary file; and all in memory: the same bytes and hash.
    for memory in [body.len() / 2, body.len() * 2] {
        let received = receive(test_config(), &s.url("/big.bin"), memory).await;
        let stats = received.stats.clone();
        assert!(stats.complete);
        assert_eq!((stats.bytes, stats.hash), (body.len() as u64, xxhash_rust::xxh3::xxh3_64(&body)));
        let (got, error) = drain(received);
        assert!(error.is_none(), "{error:?}");
        assert!(got == body, "{memory}: the bytes as they came, in order");
    }
}

#[tokio::test]
async fn a_received_body_cut_short_gives_its_bytes_then_the_error() {
    let s = Server::start().await;
    s.route("/endless.xml", Route::Endless);
    let cfg = Config { max_bytes: 1 << 20, ..test_config() };
    let received = receive(cfg, &s.url("/endless.xml"), 64 << 10).await;
    assert!(!received.stats.complete);
    let (got, error) = drain(received);
    assert!(matches!(error, Some(Error::TooLarge { limit, .. }) if limit == 1 << 20), "{error:?}");
    // Past the memory, up to the chunk that crossed the limit, which is not kept.
    assert!(got.len() > 64 << 10 && got.len() <= 1 << 20, "{} bytes", got.len());
    assert!(got.starts_with(b"<?xml"), "the body from its start");
}
