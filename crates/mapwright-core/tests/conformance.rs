//! Replays every case of `shared/conformance/*/expected.json` (the peers' own test
//! expectations, stored as data) against our reader.
//!
//! Each case passes, or it is listed in [`DIFFERENCES`] with the reason we deliberately
//! differ. A listed case that starts passing fails the test too, so the table stays true.

use crate::support::{Read, read_with, shared_dir};
use mapwright_core::{Entry, Lastmod, Loc, ReadOptions, Scope, UrlEntry};
use serde_json::Value;
use std::collections::BTreeMap;

/// Cases where we deliberately differ from what the peer's test asserts, with the reason.
/// Keys are `peer#index` (index in that peer's expected.json).
const DIFFERENCES: &[(&str, &str)] = &[
    // --- Whole-document rejection: we read leniently and report findings instead. ---
    (
        "crawler-commons#1",
        "DOCTYPE present: crawler-commons refuses the document by default. We never process a DTD \
         (no entity is expanded, no external entity resolved), so there is nothing to fear from it: \
         we read the literal URL and skip the one made of the unexpanded reference.",
    ),
    (
        "crawler-commons#5",
        "strictNamespace refuses http://www.google.com/schemas/sitemap/0.9. The protocol says a \
         reader reads leniently; we read it and report rule `namespace` (the validator fails it).",
    ),
    (
        "crawler-commons#10",
        "PEER-SPECIFIC URL filter (BasicURLNormalizer) adds http:// to a scheme-less line; without it \
         such a line is not an absolute URL, so we skip it with `text-invalid-line`.",
    ),
    ("crawler-commons#18", "as crawler-commons#10, for a scheme-less <loc> (`loc-not-absolute`)."),
    (
        "ultimate-sitemap-parser#37",
        "billion laughs: USP refuses any DOCTYPE. We never expand entities (the references stay \
         literal and each is reported as `xml-malformed`), so the file reads in constant memory; \
         its literal URL is kept.",
    ),
    (
        "sitemap.js#3",
        "sitemap.js ErrorLevel.THROW rejects a file with an unknown element. Unknown elements are \
         skipped without error by the issue's rule; we report `unknown-element` (a warning).",
    ),
    (
        "sitemap.js#51",
        "THROW on an index child whose lastmod is not a date. We drop only the bad field \
         (`lastmod-format`), as the issue requires of a lenient reader.",
    ),
    (
        "sitemap.js#55",
        "a peer option maxEntries=2 makes sitemap.js refuse 3 entries; we have no such option: \
         50,000 is reported by the validator (`too-many-urls`), never a read limit.",
    ),
    (
        "sitemap.js#61",
        "sitemap.js refuses an index of 50,001 entries. The issue: '50,000 entries is not a read \
         limit (read on, and report it)'; the validator reports `too-many-urls`.",
    ),
    (
        "sitemap.js#10",
        "schema validity by xmllint (an element out of the XSD's order): the reader is lenient \
         about order; schema agreement is the validator's oracle test, not the reader's.",
    ),
    // --- Entries a peer keeps that we skip, or the reverse. ---
    (
        "crawler-commons#44",
        "video prices: crawler-commons fills in the schema default type=\"own\" and turns the text \
         \"1,99\" into no price; we keep attribute values and texts as written (a writer then \
         round-trips them). Every other video field of the three entries matches.",
    ),
    (
        "crawler-commons#40",
        "the feed's own date (the RSS channel's pubDate) is not modelled: we read entries. Every \
         item date of this file is checked in formats::rss_pub_date_variants instead.",
    ),
    (
        "ultimate-sitemap-parser#1",
        "USP maps an invalid <changefreq> to 'always' (its documented quirk). We drop only the bad \
         field, as the issue requires, and report `changefreq-value`.",
    ),
    (
        "ultimate-sitemap-parser#22",
        "truncated inside the news extension of the last <url>, after its complete <loc>: USP drops \
         that entry, we keep it (as crawler-commons with allowPartial does, see crawler-commons#41 \
         and #43) and then report where the file is cut.",
    ),
    (
        "ultimate-sitemap-parser#43",
        "USP turns an RSS item's title and date into a news story; a feed item is a page to us (its \
         link and date), not a Google News entry.",
    ),
    ("ultimate-sitemap-parser#44", "as ultimate-sitemap-parser#43, for Atom 0.3."),
    ("ultimate-sitemap-parser#45", "as ultimate-sitemap-parser#43, for Atom 1.0."),
    (
        "sitemap.js#48",
        "sitemap.js drops an index child whose <loc> has 2,120 characters; the URL is still usable, \
         so a lenient reader keeps it and reports `loc-too-long` (an error the validator fails).",
    ),
    // --- Extensions we do not model. ---
    (
        "crawler-commons#45",
        "video:tvshow and video:content_segment_loc (a crawler-commons extra, not in Google's \
         current video schema) are not modelled; the other video fields match.",
    ),
    (
        "crawler-commons#52",
        "PageMap (Google's retired pagemap extension) is not modelled: unknown extensions are \
         skipped without error, as the issue says.",
    ),
    (
        "sitemap.js#26",
        "sitemap.js models <xhtml:link rel=\"amphtml\"> as ampLink; we keep only rel=\"alternate\" \
         hreflang links (the only ones search engines read in sitemaps).",
    ),
    ("sitemap.js#0", "as sitemap.js#26: ampLink (rel=\"amphtml\") is not modelled; every other field matches."),
    ("sitemap.js#1", "as sitemap.js#0, with CDATA values."),
    ("sitemap.js#2", "as sitemap.js#0, with an unknown element besides (skipped)."),
];

fn peers() -> Vec<(String, Vec<Value>)> {
    let dir = shared_dir().join("conformance");
    let mut out = Vec::new();
    for peer in ["crawler-commons", "ultimate-sitemap-parser", "sitemap.js", "rust-sitemap"] {
        let text = std::fs::read_to_string(dir.join(peer).join("expected.json")).expect("expected.json");
        let cases: Vec<Value> = serde_json::from_str(&text).expect("valid JSON");
        out.push((peer.to_string(), cases));
    }
    out
}

/// Kinds replayed elsewhere: robots.txt discovery and whole-site crawls need HTTP
/// (`crates/mapwright-fetch/tests/conformance.rs` replays all 25 of them).
fn handled_elsewhere(case: &Value) -> bool {
    matches!(case["kind"].as_str(), Some("robots" | "site")) || case["file"].is_null()
}

#[test]
fn every_peer_case() {
    let differences: BTreeMap<&str, &str> = DIFFERENCES.iter().copied().collect();
    let (mut passed, mut differ, mut elsewhere) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    for (peer, cases) in peers() {
        for (i, case) in cases.iter().enumerate() {
            let id = format!("{peer}#{i}");
            if handled_elsewhere(case) {
                elsewhere += 1;
                continue;
            }
            let result = run_case(&peer, case);
            match (result, differences.get(id.as_str())) {
                (Ok(()), None) => passed += 1,
                (Err(_), Some(_)) => differ += 1,
                (Ok(()), Some(_)) => stale.push(id),
                (Err(why), None) => failures.push(format!("{id} ({}): {why}", case["file"])),
            }
        }
    }
    eprintln!("conformance: {passed} passed, {differ} deliberate differences, {elsewhere} replayed by mapwright-fetch");
    assert!(failures.is_empty(), "{} case(s) fail:\n{}", failures.len(), failures.join("\n"));
    assert!(stale.is_empty(), "listed as differences but now pass (remove them from DIFFERENCES): {stale:?}");
    for id in differences.keys() {
        assert!(id.contains('#'), "bad key {id}");
    }
    assert!(passed >= 140, "only {passed} cases passed");
}

fn run_case(peer: &str, case: &Value) -> Result<(), String> {
    let path = shared_dir().join("conformance").join(peer).join(case["file"].as_str().unwrap());
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let read = read_with(&bytes, ReadOptions::default());
    let expect = &case["expect"];
    let strict = case["mode"] == "strict";
    let served = case["served_at"].as_str().and_then(|u| Loc::parse(u).ok());
    // A peer's strict mode drops out-of-scope URLs, as our `read --strict` does.
    let scope = served.as_ref().filter(|_| strict && peer == "crawler-commons").map(Scope::of_sitemap);
    let urls: Vec<&UrlEntry> = read
        .entries
        .iter()
        .filter_map(|e| if let Entry::Url(u) = e { Some(u) } else { None })
        .filter(|u| scope.as_ref().is_none_or(|s| s.contains(&u.loc)))
        .collect();
    let sitemaps: Vec<_> =
        read.entries.iter().filter_map(|e| if let Entry::Sitemap(s) = e { Some(s) } else { None }).collect();

    let ok = expect["ok"].as_bool().unwrap_or(true);
    if !ok {
        return reject_verdict(&read);
    }
    if let Some(e) = &read.error {
        // A lenient peer keeps what came before a fault; we do too, and still report the fault.
        if !is_partial_ok(case) {
            return Err(format!("unexpected error: {e}"));
        }
    }
    if let Some(n) = expect["url_count"].as_u64() {
        if urls.len() as u64 != n {
            return Err(format!("url_count {} != {n}", urls.len()));
        }
    }
    if let Some(n) = expect["sitemap_count"].as_u64() {
        if case["kind"] != "urlset" && sitemaps.len() as u64 != n {
            return Err(format!("sitemap_count {} != {n}", sitemaps.len()));
        }
    }
    if let Some(list) = expect["urls"].as_array() {
        let mut from = 0;
        for exp in list {
            let loc = exp["loc"].as_str();
            let idx = match loc {
                Some(l) => urls[from..]
                    .iter()
                    .position(|u| same_url(u.loc.as_str(), l))
                    .map(|i| i + from)
                    .ok_or_else(|| format!("url {l:?} not found after index {from}"))?,
                None => from,
            };
            let got = urls.get(idx).ok_or("fewer urls than expected")?;
            check_url(peer, got, exp, served.as_ref())?;
            from = idx + 1;
        }
    }
    if let Some(list) = expect["sitemaps"].as_array() {
        for (i, exp) in list.iter().enumerate() {
            let got = match exp["loc"].as_str() {
                Some(l) => sitemaps
                    .iter()
                    .find(|s| same_url(s.loc.as_str(), l))
                    .ok_or_else(|| format!("sitemap {l:?} not found"))?,
                None => sitemaps.get(i).ok_or("fewer sitemaps than expected")?,
            };
            if let Some(lm) = exp.get("lastmod") {
                check_lastmod(peer, got.lastmod.as_ref(), lm)?;
            }
        }
    }
    if !expect["feed_lastmod"].is_null() {
        return Err("the feed's own date (channel pubDate) is not modelled".into());
    }
    Ok(())
}

/// What "the peer rejects the document" means for a lenient reader: a fatal error, or nothing read.
fn reject_verdict(read: &Read) -> Result<(), String> {
    if read.error.is_some() || read.entries.is_empty() {
        Ok(())
    } else {
        Err(format!("peer rejects the document; we read {} entries without a fatal error", read.entries.len()))
    }
}

fn is_partial_ok(case: &Value) -> bool {
    case["peer_options"]["allowPartial"].as_bool() == Some(true)
        || case["mode"] == "lenient"
        || case["expect"]["notes"].as_str().is_some_and(|n| n.contains("trunc"))
}

/// Peers print URLs as found; ours are normalised by `url` (host case, empty path, escapes).
fn same_url(ours: &str, theirs: &str) -> bool {
    if ours == theirs {
        return true;
    }
    match Loc::parse(theirs.trim()) {
        Ok(l) => l.as_str() == ours,
        Err(_) => false,
    }
}

fn check_url(peer: &str, got: &UrlEntry, exp: &Value, served: Option<&Loc>) -> Result<(), String> {
    let obj = exp.as_object().ok_or("url not an object")?;
    for (k, v) in obj {
        match k.as_str() {
            "loc" => {}
            "lastmod" => check_lastmod(peer, got.lastmod.as_ref(), v)?,
            "lastmod_present" => {
                if v.as_bool() != Some(got.lastmod.is_some()) {
                    return Err(format!("lastmod presence {:?} for {}", got.lastmod, got.loc));
                }
            }
            "changefreq" => {
                let ours = got.changefreq.map(|c| c.as_str().to_string());
                let theirs = v.as_str().map(str::to_lowercase);
                if ours != theirs {
                    return Err(format!("changefreq {ours:?} != {theirs:?} for {}", got.loc));
                }
            }
            "priority" => {
                let ok = match (got.priority, v.as_f64()) {
                    (None, None) => true,
                    (Some(a), Some(b)) => (f64::from(a) - b).abs() < 1e-6,
                    // Peers that fall back to the default 0.5 for a missing/invalid priority.
                    (None, Some(b)) => (b - 0.5).abs() < 1e-6 && peer != "crawler-commons",
                    _ => false,
                };
                if !ok {
                    return Err(format!("priority {:?} != {v} for {}", got.priority, got.loc));
                }
            }
            "valid" => {
                let in_scope = served.map(|s| Scope::of_sitemap(s).contains(&got.loc)).unwrap_or(true);
                if v.as_bool() != Some(in_scope) {
                    return Err(format!("valid/in-scope {in_scope} != {v} for {}", got.loc));
                }
            }
            "images" => compare_list(v, &serde_json::to_value(&got.ext().images).unwrap(), image_key)?,
            "videos" => compare_list(v, &serde_json::to_value(&got.ext().videos).unwrap(), video_key)?,
            "links" => compare_list(v, &serde_json::to_value(&got.ext().alternates).unwrap(), link_key)?,
            "news" => {
                let ours = serde_json::to_value(&got.ext().news).unwrap();
                match (v.is_null(), ours.is_null()) {
                    (true, true) => {}
                    (true, false) | (false, true) => return Err(format!("news {ours} vs {v}")),
                    _ => compare_object(v, &ours, news_key)?,
                }
            }
            other => return Err(format!("field {other:?} not modelled")),
        }
    }
    Ok(())
}

fn check_lastmod(peer: &str, got: Option<&Lastmod>, exp: &Value) -> Result<(), String> {
    match (got, exp.as_str()) {
        (None, None) => Ok(()),
        (Some(l), Some(e)) => {
            if l.to_string() == e {
                return Ok(());
            }
            // Compare as instants (date-only means midnight UTC for crawler-commons and rust-sitemap).
            let theirs = mapwright_core::date::parse_lastmod(e);
            let t = match theirs {
                mapwright_core::date::LastmodParse::Exact(v) | mapwright_core::date::LastmodParse::Repaired(v, _) => v,
                mapwright_core::date::LastmodParse::Invalid => {
                    return Err(format!("{peer}: expected lastmod {e:?} unreadable"));
                }
            };
            if t.unix_seconds() == l.value().unix_seconds() && t.nanos / 1_000_000 == l.value().nanos / 1_000_000 {
                Ok(())
            } else {
                Err(format!("lastmod {l} != {e}"))
            }
        }
        (g, e) => Err(format!("lastmod {g:?} != {e:?}")),
    }
}

/// Each expected element (in order) has its keys equal in ours at the same index.
fn compare_list(exp: &Value, ours: &Value, key: fn(&str) -> Option<&'static str>) -> Result<(), String> {
    let ours = ours.as_array().cloned().unwrap_or_default();
    let exp = match exp {
        Value::Null => return if ours.is_empty() { Ok(()) } else { Err(format!("expected none, got {ours:?}")) },
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    if exp.len() != ours.len() {
        return Err(format!("{} items expected, {} read", exp.len(), ours.len()));
    }
    for (e, o) in exp.iter().zip(&ours) {
        compare_object(e, o, key)?;
    }
    Ok(())
}

fn compare_object(exp: &Value, ours: &Value, key: fn(&str) -> Option<&'static str>) -> Result<(), String> {
    let Some(map) = exp.as_object() else { return Err(format!("expected object, got {exp}")) };
    for (k, v) in map {
        if k == "valid" || k == "rel" {
            continue;
        }
        if k == "publication" {
            // sitemap.js nests the publication: {name, language}.
            compare_object(v, ours, |k| match k {
                "name" => Some("publication_name"),
                "language" => Some("language"),
                _ => None,
            })?;
            continue;
        }
        if k == "prices" {
            compare_list(v, &lookup(ours, "prices"), price_key)?;
            continue;
        }
        if k == "restriction_allow" {
            // crawler-commons splits <video:restriction relationship="allow"> into a list.
            let got = lookup(ours, "restriction");
            let rel = lookup(ours, "restriction_relationship");
            let list: Vec<Value> =
                got.as_str().unwrap_or("").split_whitespace().map(|c| Value::String(c.to_string())).collect();
            if rel != "allow" || !loosely_equal(v, &Value::Array(list)) {
                return Err(format!("restriction_allow: expected {v}, read {got} ({rel})"));
            }
            continue;
        }
        let ours_key = key(k).ok_or_else(|| format!("field {k:?} not modelled"))?;
        let got = lookup(ours, ours_key);
        if k.contains("date") && same_instant(v, &got) {
            continue;
        }
        if !loosely_equal(v, &got) {
            return Err(format!("{k}: expected {v}, read {got}"));
        }
    }
    Ok(())
}

/// Two date texts naming the same instant (a date-only value is midnight UTC).
fn same_instant(a: &Value, b: &Value) -> bool {
    let parse = |v: &Value| v.as_str().and_then(mapwright_core::W3cDateTime::parse).map(|d| d.unix_seconds());
    matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
}

fn price_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "currency" => "currency",
        "price" => "value",
        "type" => "type",
        "resolution" => "resolution",
        _ => return None,
    })
}

fn lookup(v: &Value, path: &str) -> Value {
    let mut cur = v.clone();
    for part in path.split('.') {
        cur = match part.parse::<usize>() {
            Ok(i) => cur.get(i).cloned().unwrap_or(Value::Null),
            Err(_) => cur.get(part).cloned().unwrap_or(Value::Null),
        };
    }
    cur
}

/// Peers type values differently (`yes` vs `true`, `"12"` vs `12`, arrays vs one string).
fn loosely_equal(exp: &Value, got: &Value) -> bool {
    let norm = |v: &Value| -> Vec<String> {
        match v {
            Value::Null => vec![],
            Value::Bool(true) => vec!["yes".into()],
            Value::Bool(false) => vec!["no".into()],
            Value::Number(n) => vec![n.as_f64().map(|f| format!("{f}")).unwrap_or_default()],
            Value::String(s) if s.trim().is_empty() => vec![],
            Value::String(s) => {
                let t = s.trim();
                match t.parse::<f64>() {
                    Ok(f) if !t.is_empty() && !t.contains(char::is_alphabetic) => vec![format!("{f}")],
                    // Peers collapse runs of white space inside long texts; we keep the text as written.
                    _ => vec![t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase_if_flag()],
                }
            }
            Value::Array(a) => a.iter().flat_map(norm_one).collect(),
            Value::Object(_) => vec![v.to_string()],
        }
    };
    fn norm_one(v: &Value) -> Vec<String> {
        match v {
            Value::String(s) => vec![s.trim().to_string()],
            other => vec![other.to_string()],
        }
    }
    // A list expected where the file has one comma-separated text (news:genres).
    if let (Value::Array(_), Value::String(g)) = (exp, got) {
        let parts: Vec<Value> = g.split(',').map(|p| Value::String(p.trim().to_string())).collect();
        return norm(exp) == norm(&Value::Array(parts));
    }
    norm(exp) == norm(got)
}

trait LowerFlag {
    fn to_lowercase_if_flag(&self) -> String;
}
impl LowerFlag for str {
    fn to_lowercase_if_flag(&self) -> String {
        match self.to_ascii_lowercase().as_str() {
            "yes" | "true" => "yes".into(),
            "no" | "false" => "no".into(),
            _ => self.to_string(),
        }
    }
}

fn image_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "loc" => "loc",
        "caption" => "caption",
        "title" => "title",
        "geo_location" => "geo_location",
        "license" => "license",
        _ => return None,
    })
}

fn link_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "href" => "href",
        "hreflang" => "hreflang",
        _ => return None,
    })
}

fn news_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "name" | "publication_name" => "publication_name",
        "language" | "publication_language" => "language",
        "publication_date" | "publish_date" => "publication_date",
        "title" => "title",
        "keywords" => "keywords",
        "genres" => "genres",
        "stock_tickers" => "stock_tickers",
        "access" => "access",
        _ => return None,
    })
}

fn video_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "thumbnail_loc" => "thumbnail_loc",
        "title" => "title",
        "description" => "description",
        "content_loc" => "content_loc",
        "player_loc" => "player_loc",
        "player_loc:allow_embed" => "player_loc_allow_embed",
        "player_loc:autoplay" => "player_loc_autoplay",
        "duration" => "duration",
        "expiration_date" => "expiration_date",
        "rating" => "rating",
        "view_count" => "view_count",
        "publication_date" => "publication_date",
        "family_friendly" => "family_friendly",
        "restriction" => "restriction",
        "restriction:relationship" => "restriction_relationship",
        "platform" => "platform",
        "platform:relationship" => "platform_relationship",
        "price" => "prices.0.value",
        "price:currency" => "prices.0.currency",
        "price:type" => "prices.0.type",
        "price:resolution" => "prices.0.resolution",
        "requires_subscription" => "requires_subscription",
        "uploader" => "uploader",
        "uploader:info" | "uploader_info" => "uploader_info",
        "live" => "live",
        "tag" | "tags" => "tags",
        "category" => "category",
        "gallery_loc" => "gallery_loc",
        "gallery_loc:title" | "gallery_title" => "gallery_title",
        "id" => "id",
        _ => return None,
    })
}
