//! Unit tests of the stage's map and row encoding.

use super::*;
use crate::UrlRecord;
use crate::sql::loc_hash;

fn url(loc: &str, lastmod: &str) -> UrlRecord {
    UrlRecord { loc: loc.into(), lastmod: Some(lastmod.into()), changefreq: None, priority: Some(0.5) }
}

#[test]
fn only_what_changed_is_staged_and_the_last_entry_counts() {
    let mut first = Known::default();
    let batch = [url("https://a.example/1", "x"), url("https://a.example/2", "x")];
    let rows = first.classify(&batch);
    assert_eq!(rows.iter().map(|r| r.kind).collect::<Vec<_>>(), [0, 0]);
    let plan = first.plan(true);
    assert_eq!((plan.new, plan.distinct, plan.set.0), (2, 2, 2));

    let mut next = Known::from_set(&plan.set.1).expect("a stored set reads back");
    // 1 unchanged, 2 changed then listed again as before, 3 new; nothing more.
    let batch = [
        url("https://a.example/1", "x"),
        url("https://a.example/2", "y"),
        url("https://a.example/3", "x"),
        url("https://a.example/2", "x"),
    ];
    let rows = next.classify(&batch);
    assert_eq!(rows.iter().map(|r| (r.seq, r.kind)).collect::<Vec<_>>(), [(0, 1), (1, 0), (2, 1)]);
    assert_eq!(next.superseded, [0], "the first row of 2 is replaced by its last entry");
    let plan = next.plan(true);
    assert_eq!((plan.new, plan.changed_rows, plan.changed, plan.distinct), (1, 1, 0, 3));
    assert!(plan.gone.is_empty());

    let mut third = Known::from_set(&plan.set.1).unwrap();
    let batch = [url("https://a.example/3", "x")];
    assert!(third.classify(&batch).is_empty(), "the same: nothing staged");
    let plan = third.plan(true);
    assert_eq!((plan.gone.len(), plan.set.0), (2, 1), "1 and 2 are gone");
    assert_eq!(third.plan(false).set.0, 3, "a partial read removes nothing");
}

#[test]
fn a_removed_row_is_staged_to_come_back() {
    let hash = loc_hash("https://a.example/1");
    let mut known = Known::from_rows(vec![(hash, Some("x".into()), None, Some(0.5), true)]);
    let batch = [url("https://a.example/1", "x")];
    assert_eq!(known.classify(&batch).len(), 1);
    assert!(Known::from_set(&[0; 23]).is_none(), "not a set: rebuilt");
}

#[test]
fn copy_lines_escape_text() {
    let mut known = Known::default();
    let u = UrlRecord {
        loc: "https://a.example/a\\b".into(),
        lastmod: Some("a\tb\n".into()),
        changefreq: None,
        priority: None,
    };
    let rows = known.classify(std::slice::from_ref(&u));
    let mut line = String::new();
    copy_line(&mut line, 7, &rows[0]);
    let hash = hex::encode(loc_hash("https://a.example/a\\b"));
    assert_eq!(line, format!("7\t0\t0\thttps://a.example/a\\\\b\t\\\\x{hash}\ta\\tb\\n\t\\N\t\\N\n"));
}

#[test]
fn the_content_hash_is_the_streamed_one() {
    let long = "x".repeat(300);
    for lastmod in [None, Some(""), Some("2024-01-01T10:00:00+00:00"), Some(long.as_str())] {
        for changefreq in [None, Some("daily")] {
            for priority in [None, Some(0.5), Some(1.0)] {
                assert_eq!(
                    content_hash(lastmod, changefreq, priority),
                    content_hash_streamed(lastmod, changefreq, priority)
                );
            }
        }
    }
}

#[test]
fn a_read_in_another_order_or_with_a_url_inserted_matches_by_key() {
    let urls: Vec<_> = (0..20).map(|i| url(&format!("https://a.example/{i}"), "x")).collect();
    let mut first = Known::default();
    assert_eq!(first.classify(&urls).len(), 20);
    let plan = first.plan(true);
    // The stored set is in reading order: the same list matches entry by entry.
    let mut same = Known::from_set(&plan.set.1).unwrap();
    assert!(same.classify(&urls).is_empty());
    assert!(same.index.is_none(), "no look-up was needed");
    assert_eq!(same.plan(true).set.1, plan.set.1);
    // Reversed, with a new URL in the middle and one changed: found by key all the same.
    let mut other: Vec<_> = urls.iter().rev().cloned().collect();
    other.insert(10, url("https://a.example/new", "x"));
    other[3].lastmod = Some("y".into());
    let mut next = Known::from_set(&plan.set.1).unwrap();
    let rows = next.classify(&other);
    assert_eq!(rows.iter().map(|r| r.kind).collect::<Vec<_>>(), [1, 0]);
    let plan = next.plan(true);
    assert_eq!((plan.new, plan.changed, plan.distinct, plan.gone.len()), (1, 1, 21, 0));
    // The next set follows this read's order.
    let mut again = Known::from_set(&plan.set.1).unwrap();
    assert!(again.classify(&other).is_empty());
    assert!(again.index.is_none());
}
