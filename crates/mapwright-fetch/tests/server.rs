//! A scriptable HTTP server for the tests: routes are set per path, every request is logged.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a path answers.
#[derive(Clone)]
pub enum Route {
    /// A fixed answer; with an ETag, a matching If-None-Match gets 304.
    Fixed { status: u16, headers: Vec<(&'static str, String)>, body: Bytes, etag: Option<String> },
    /// 200, then `n` bytes one at a time, `every` apart.
    Drip { every: Duration, n: usize },
    /// 200 and an endless stream of `<url>`-looking bytes.
    Endless,
    /// A redirect (302) to a URL.
    Redirect(String),
    /// `fails` answers with a status (and Retry-After seconds) before the real one.
    Flaky { fails: Arc<Mutex<usize>>, status: u16, retry_after: Option<u64>, then: Box<Route> },
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// A running test server.
#[derive(Clone)]
pub struct Server {
    pub port: u16,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Starts a server on 127.0.0.1:0 on the current runtime.
    pub async fn start() -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = Server { port, routes: Arc::default(), log: Arc::default() };
        let s = server.clone();
        let app = axum::Router::new().fallback(move |req: Request| {
            let s = s.clone();
            async move { s.answer(req).await }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        server
    }

    /// `http://127.0.0.1:PORT`
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://localhost:PORT`: the same server as another host.
    pub fn other_host(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    pub fn route(&self, path: &str, r: Route) {
        self.routes.lock().unwrap().insert(path.to_string(), r);
    }

    /// 200 with a body and a Content-Type.
    pub fn page(&self, path: &str, content_type: &str, body: impl Into<Bytes>) {
        self.route(path, fixed(200, content_type, body));
    }

    /// Requests seen so far, and forget them.
    pub fn take_log(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// Paths requested (in order), and forget them.
    pub fn take_paths(&self) -> Vec<String> {
        let mut v: Vec<String> = self.take_log().into_iter().map(|s| s.path).collect();
        v.sort();
        v
    }

    async fn answer(&self, req: Request) -> Response {
        let (parts, body) = req.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
        let req = Request::from_parts(parts, Body::empty());
        let host = req.headers().get("host").and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
        let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
        self.log.lock().unwrap().push(Seen {
            method: req.method().to_string(),
            path: path.clone(),
            headers: req.headers().clone(),
            body,
            at: std::time::Instant::now(),
        });
        // Routes may be host-specific: "localhost/robots.txt" wins over "/robots.txt" on localhost.
        let host_name = host.split(':').next().unwrap_or("");
        let route = {
            let routes = self.routes.lock().unwrap();
            routes.get(&format!("{host_name}{path}")).or_else(|| routes.get(&path)).cloned()
        };
        match route {
            Some(r) => respond(r, req.headers()),
            None => Response::builder().status(404).body(Body::from("not found")).unwrap(),
        }
    }
}

fn respond(route: Route, req: &HeaderMap) -> Response {
    match route {
        Route::Fixed { status, headers, body, etag } => {
            let mut b = Response::builder().status(status);
            if let Some(e) = &etag {
                if req.get("if-none-match").and_then(|v| v.to_str().ok()) == Some(e.as_str()) {
                    return Response::builder().status(304).header("etag", e).body(Body::empty()).unwrap();
                }
                b = b.header("etag", e);
            }
            for (k, v) in headers {
                b = b.header(k, HeaderValue::from_str(&v).unwrap());
            }
            b.body(Body::from(body)).unwrap()
        }
        Route::Drip { every, n } => {
            let stream = futures_stream(move |i| {
                if i >= n {
                    return None;
                }
                Some((every, Bytes::from_static(b"<")))
            });
            Response::builder().status(200).header("content-type", "application/xml").body(stream).unwrap()
        }
        Route::Endless => {
            let chunk = Bytes::from("<url><loc>http://127.0.0.1/x</loc></url>\n".repeat(1600));
            let head = Bytes::from_static(
                b"<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
            );
            let stream =
                futures_stream(move |i| Some((Duration::ZERO, if i == 0 { head.clone() } else { chunk.clone() })));
            Response::builder().status(200).header("content-type", "application/xml").body(stream).unwrap()
        }
        Route::Redirect(to) => Response::builder().status(302).header("location", to).body(Body::empty()).unwrap(),
        Route::Flaky { fails, status, retry_after, then } => {
            let mut left = fails.lock().unwrap();
            if *left > 0 {
                *left -= 1;
                let mut b = Response::builder().status(StatusCode::from_u16(status).unwrap());
                if let Some(s) = retry_after {
                    b = b.header("retry-after", s.to_string());
                }
                return b.body(Body::from("busy")).unwrap();
            }
            drop(left);
            respond(*then, req)
        }
    }
}

/// A body made of chunks, each sent after its delay.
fn futures_stream(mut next: impl FnMut(usize) -> Option<(Duration, Bytes)> + Send + 'static) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::spawn(async move {
        let mut i = 0;
        while let Some((delay, chunk)) = next(i) {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if tx.send(Ok(chunk)).await.is_err() {
                return;
            }
            i += 1;
        }
    });
    Body::from_stream(ReceiverStream(rx))
}

struct ReceiverStream(tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl futures_util::Stream for ReceiverStream {
    type Item = Result<Bytes, std::io::Error>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// A fixed answer.
pub fn fixed(status: u16, content_type: &str, body: impl Into<Bytes>) -> Route {
    Route::Fixed { status, headers: vec![("content-type", content_type.to_string())], body: body.into(), etag: None }
}

/// gzip of `data`.
pub fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A `<urlset>` of these URLs.
pub fn urlset(urls: &[String]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for u in urls {
        s.push_str(&format!("<url><loc>{u}</loc></url>\n"));
    }
    s.push_str("</urlset>\n");
    s
}

/// A `<sitemapindex>` of these (loc, lastmod) children.
pub fn index(children: &[(String, Option<&str>)]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (loc, lastmod) in children {
        s.push_str(&format!("<sitemap><loc>{loc}</loc>"));
        if let Some(l) = lastmod {
            s.push_str(&format!("<lastmod>{l}</lastmod>"));
        }
        s.push_str("</sitemap>\n");
    }
    s.push_str("</sitemapindex>\n");
    s
}
