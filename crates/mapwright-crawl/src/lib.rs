//! mapwright-crawl: sources of sitemap entries: a static web root ([`walk`]), web-server
//! access logs ([`logs`]) and a live site, crawled over HTTP ([`crawl`]).
//!
//! Everything here yields [`mapwright_core::UrlEntry`] values (or says why a page was left
//! out); writing them is the core's [`mapwright_core::SitemapSetWriter`]'s job.
#![deny(missing_docs)]

pub mod crawl;
pub mod error;
pub mod git;
pub mod html;
pub mod logs;
pub mod robots;
pub mod walk;

pub use crawl::{CrawlConfig, CrawlReport, Crawler, Progress, StopHandle};
pub use error::Error;
pub use logs::{LogConfig, LogSummary, read_logs};
pub use walk::{LastmodSource, Skip, WalkConfig, WalkItem, Walker};

/// Percent-encodes one path segment: non-ASCII bytes as UTF-8 `%XX`, and every ASCII byte
/// a URL path cannot hold literally (space, `?`, `#`, `%`, quotes, brackets...).
pub fn encode_segment(out: &mut String, seg: &str) {
    encode_segment_bytes(out, seg.as_bytes());
}

/// [`encode_segment`] over raw bytes: a file name that is not UTF-8 is encoded byte for byte,
/// which is the URL a web server serving that file answers to.
pub fn encode_segment_bytes(out: &mut String, seg: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in seg {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
}
