//! Any bytes as an IndexNow POST body through the receiver's parse and checks (everything it
//! does before the store and the key-file fetch): never a panic, and what passes keeps the
//! protocol's promises.
#![no_main]

use libfuzzer_sys::fuzz_target;
#[allow(dead_code)]
#[path = "../../crates/mapwright-server/src/indexnow/check.rs"]
mod check;
use check::{MAX_URLS, Submission};

fuzz_target!(|body: &[u8]| {
    let Ok(checked) = Submission::from_json(body).and_then(Submission::check) else { return };
    assert!((1..=MAX_URLS).contains(&checked.urls.len()));
    assert!((8..=128).contains(&checked.key.len()));
    assert!(checked.key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    for url in &checked.urls {
        assert!(matches!(url.scheme(), "http" | "https"));
        let host = url.host_str().expect("a host");
        assert!(checked.host == host || checked.host.starts_with(&format!("{host}:")), "{url} off {}", checked.host);
    }
    let file = url::Url::parse(&checked.key_file).expect("the key file is a URL");
    assert!(matches!(file.scheme(), "http" | "https"));
});
