//! Any string through `Loc::parse`: never a panic, and the result is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mapwright_core::Loc;

fuzz_target!(|s: &str| {
    if let Ok(loc) = Loc::parse(s) {
        let again = Loc::parse(loc.as_str()).expect("a normalised URL parses");
        assert_eq!(again.as_str(), loc.as_str());
        assert_eq!(url::Url::parse(loc.as_str()).expect("url agrees").as_str(), loc.as_str());
    }
});
