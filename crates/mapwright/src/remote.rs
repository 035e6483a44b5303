//! `read` with an http(s) SOURCE: the body streamed through mapwright-fetch (limits, timeouts,
//! gzip in any layer) into the same reader loop as a local file.

use crate::http::runtime;
use mapwright_fetch::{BodyReader, Fetched, Fetcher};
use std::io::{self, BufRead, Read};

/// A remote body as a `BufRead`, keeping alive the runtime whose task feeds it.
pub struct Remote {
    reader: BodyReader,
    /// The URL after redirects: the scope of the sitemap.
    pub final_url: String,
    _runtime: tokio::runtime::Runtime,
}

impl Read for Remote {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl BufRead for Remote {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.reader.consume(amt)
    }
}

/// Opens `url` (default HTTP settings, `max_bytes` on the wire too).
pub fn open(url: &str, max_bytes: Option<u64>) -> anyhow::Result<Remote> {
    let rt = runtime()?;
    let mut config = mapwright_fetch::Config::default();
    if let Some(b) = max_bytes {
        config.max_bytes = b;
    }
    let fetcher = Fetcher::new(config)?;
    let resp = match rt.block_on(fetcher.get(url, None))? {
        Fetched::Body(r) => r,
        Fetched::NotModified(_) => anyhow::bail!("{url}: 304 Not Modified to an unconditional request"),
    };
    let final_url = resp.meta.final_url.clone();
    let reader = {
        let _guard = rt.enter();
        resp.into_reader()
    };
    Ok(Remote { reader, final_url, _runtime: rt })
}
