//! Helpers shared by the integration tests.

use mapwright_core::read::read_all;
use mapwright_core::{Entry, Error, Finding, ReadOptions, Rule};
use std::path::PathBuf;

/// `shared/` of the project: next to the repository clone (CI), or one level further up (a
/// work tree in a folder of work trees), as `validate/shared.rs` looks for it.
pub fn shared_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let beside = manifest.join("../../../shared");
    let dir = if beside.join("PROTOCOL.md").exists() { beside } else { manifest.join("../../../../shared") };
    assert!(
        dir.join("PROTOCOL.md").exists(),
        "shared/ not found at {}: the tests need it beside the clone",
        dir.display()
    );
    dir
}

/// Everything a read gave.
pub struct Read {
    pub entries: Vec<Entry>,
    pub findings: Vec<Finding>,
    pub error: Option<Error>,
}

impl Read {
    pub fn urls(&self) -> Vec<&str> {
        self.entries.iter().filter_map(|e| if let Entry::Url(u) = e { Some(u.loc.as_str()) } else { None }).collect()
    }

    pub fn sitemaps(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| if let Entry::Sitemap(s) = e { Some(s.loc.as_str()) } else { None })
            .collect()
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.findings.iter().map(|f| f.rule).collect()
    }

    pub fn has(&self, rule: Rule) -> bool {
        self.findings.iter().any(|f| f.rule == rule)
    }
}

pub fn read_bytes(bytes: &[u8]) -> Read {
    read_with(bytes, ReadOptions::default())
}

pub fn read_with(bytes: &[u8], options: ReadOptions) -> Read {
    let (entries, findings, error) = read_all(bytes, options);
    Read { entries, findings, error }
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A urlset around the given `<url>` bodies.
pub fn urlset(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{body}\n</urlset>\n"
    )
}

/// Counts heap bytes per thread, so a test can measure the peak of what it allocates while
/// other tests run on other threads.
pub struct PeakAlloc;

thread_local! {
    static CURRENT: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
    static PEAK: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

fn account(delta: isize) {
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now);
            }
        });
    });
}

// The only unsafe code of the project: a global allocator must implement an unsafe trait.
// It forwards every call unchanged to the system allocator.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        account(layout.size() as isize);
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        account(-(layout.size() as isize));
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        account(new_size as isize - layout.size() as isize);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result with the peak of heap bytes this thread held above the
/// level at the start.
pub fn peak_heap<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = CURRENT.with(|c| c.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(|p| p.get());
    (r, (peak - base).max(0) as usize)
}
