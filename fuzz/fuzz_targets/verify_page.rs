//! Any bytes as a site's home page through the verification meta reader: never a panic; what
//! it finds it also accepts; and nothing after a `<body>` that opens the document can be in
//! the head.
#![no_main]

use libfuzzer_sys::fuzz_target;
#[allow(dead_code)]
#[path = "../../crates/mapwright-server/src/verify/head.rs"]
mod head;
use head::{head_has_meta, head_verification_contents};

fuzz_target!(|html: &[u8]| {
    for content in head_verification_contents(html) {
        let token = content.trim();
        assert!(token.is_empty() || head_has_meta(html, token), "{token:?} found but not accepted");
    }
    let mut late = b"<body>".to_vec();
    late.extend_from_slice(html);
    assert!(head_verification_contents(&late).is_empty(), "a tag after <body> was read as in the head");
});
