//! Serves N sites, each on its own loopback address (127.10.X.Y:PORT, one listener each), for
//! the many-site discovery benchmark. Each site: `/robots.txt` names `/sitemap_index.xml`,
//! which lists `/sitemap-1.xml.gz` and `/sitemap-2.xml.gz`, each a gzipped urlset of URLS
//! URLs of that site (with a lastmod). The gzipped children are made before "ready" is
//! printed, so compression is not part of what is timed.
//!
//! usage: discover-bench-server HOSTS PORT [URLS=500] [SITES_FILE]
//! HTTP/1.1 with keep-alive, GET only; anything else is a 404.

use std::io::Write;
use std::net::Ipv4Addr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The address of host `i`: 127.10.0.1 ... 127.10.0.250, 127.10.1.1 ...
pub fn addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 10, (i / 250) as u8, (i % 250 + 1) as u8)
}

struct Site {
    robots: Vec<u8>,
    index: Vec<u8>,
    children: [Vec<u8>; 2],
}

fn site(base: &str, urls: usize) -> Site {
    let robots = format!("User-agent: *\nAllow: /\nSitemap: {base}/sitemap_index.xml\n").into_bytes();
    let index = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
         <sitemap><loc>{base}/sitemap-1.xml.gz</loc></sitemap>\n<sitemap><loc>{base}/sitemap-2.xml.gz</loc></sitemap>\n</sitemapindex>\n"
    )
    .into_bytes();
    let child = |n: usize| {
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for i in 0..urls {
            xml.push_str(&format!(
                "<url><loc>{base}/section-{n}/page-{i}.html</loc><lastmod>2024-{:02}-{:02}</lastmod></url>\n",
                i % 12 + 1,
                i % 28 + 1
            ));
        }
        xml.push_str("</urlset>\n");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(xml.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    Site { robots, index, children: [child(1), child(2)] }
}

async fn serve(mut sock: TcpStream, site: Arc<Site>) {
    let _ = sock.set_nodelay(true);
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            if buf.len() > 64 * 1024 {
                return;
            }
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let path = head.split(' ').nth(1).unwrap_or("");
        let close = head.to_ascii_lowercase().contains("\r\nconnection: close");
        let (status, ctype, body): (&str, &str, &[u8]) = match path {
            "/robots.txt" => ("200 OK", "text/plain", &site.robots),
            "/sitemap_index.xml" => ("200 OK", "application/xml", &site.index),
            "/sitemap-1.xml.gz" => ("200 OK", "application/x-gzip", &site.children[0]),
            "/sitemap-2.xml.gz" => ("200 OK", "application/x-gzip", &site.children[1]),
            _ => ("404 Not Found", "text/plain", b"not found"),
        };
        let header = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{}\r\n",
            body.len(),
            if close { "Connection: close\r\n" } else { "" }
        );
        if sock.write_all(header.as_bytes()).await.is_err() || sock.write_all(body).await.is_err() || close {
            return;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let hosts: usize = args.get(1).and_then(|s| s.parse().ok()).expect("usage: HOSTS PORT [URLS] [SITES_FILE]");
    let port: u16 = args.get(2).and_then(|s| s.parse().ok()).expect("PORT");
    let urls: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let bases: Vec<String> = (0..hosts).map(|i| format!("http://{}:{port}", addr(i))).collect();
    if let Some(f) = args.get(4) {
        std::fs::write(f, bases.iter().map(|b| format!("{b}/\n")).collect::<String>()).unwrap();
    }
    let sites: Vec<Arc<Site>> = bases.iter().map(|b| Arc::new(site(b, urls))).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        for (i, site) in sites.into_iter().enumerate() {
            let listener = TcpListener::bind((addr(i), port)).await.unwrap_or_else(|e| panic!("bind {}: {e}", addr(i)));
            tokio::spawn(async move {
                loop {
                    match listener.accept().await {
                        Ok((sock, _)) => {
                            tokio::spawn(serve(sock, site.clone()));
                        }
                        // Out of descriptors (a client holding many idle connections): keep
                        // the listener, or every later connection to this site is refused.
                        Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                    }
                }
            });
        }
        println!("ready {hosts} hosts on port {port}");
        std::future::pending::<()>().await;
    });
}
