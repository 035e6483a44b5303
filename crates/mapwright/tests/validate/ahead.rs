//! `validate` reads its input ahead on a thread of its own (the reader owns it), as `read`
//! does: seen as the worker thread of the process while the input is still coming, and the
//! report is whole once it has come.

use super::{NS, stdout};
use std::io::Write;

#[cfg(target_os = "linux")]
#[test]
fn validate_reads_its_input_ahead_on_a_thread_of_its_own() {
    let head = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"{NS}\">\n");
    let entries = |from: usize, to: usize| -> String {
        (from..to).map(|i| format!("<url><loc>https://example.com/page/{i}</loc></url>\n")).collect()
    };
    // Past the first buffers, which are read where the reader is.
    let first = format!("{head}{}", entries(0, 20_000));
    assert!(first.len() > 512 * 1024, "{} bytes", first.len());
    let rest = format!(
        "{}<url><loc>https://example.com/last</loc><priority>2.0</priority></url>\n</urlset>\n",
        entries(20_000, 24_000)
    );
    let mut child = crate::spawn(&["validate", "--format", "json", "-"], std::path::Path::new("."));
    let mut input = child.stdin.take().unwrap();
    input.write_all(first.as_bytes()).unwrap();
    input.flush().unwrap();
    crate::worker_thread(child.id(), "read-ahead worker while the input is still coming");
    input.write_all(rest.as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["summary"]["entries"], 24_001, "{json}");
    let lines: Vec<u64> = json["findings"].as_array().unwrap().iter().filter_map(|f| f["line"].as_u64()).collect();
    assert!(lines.contains(&24_003), "the finding on the last entry's line: {json}");
    assert_eq!(out.status.code(), Some(1), "an error was found");
}
