//! Any bytes as a site's robots.txt through `Robots::parse_at` (the parse the server runs on
//! every verified site's file): never a panic, every `Sitemap:` kept is an absolute URL, no
//! duplicate, and matching a path never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;
#[allow(dead_code)]
#[path = "../../crates/mapwright-fetch/src/robots/parse.rs"]
mod parse;
use parse::Robots;

fuzz_target!(|input: (&str, &[u8])| {
    let (path, body) = input;
    let robots = Robots::parse_at("mapwright/0.1", body, "https://example.com/robots.txt");
    let mut seen = std::collections::HashSet::new();
    for s in &robots.sitemaps {
        let url = url::Url::parse(s).expect("a kept sitemap URL is absolute");
        assert!(seen.insert(url.to_string()), "duplicate sitemap {s}");
        assert!(robots.lists_sitemap(s));
    }
    if let Some(d) = robots.crawl_delay {
        assert!(d.as_secs() <= 3600, "crawl delay {d:?}");
    }
    let _ = robots.allowed(&format!("https://example.com/{path}"));
    let _ = robots.allowed(path);
});
