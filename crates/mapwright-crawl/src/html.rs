//! A small scanner of an HTML page's `<head>`: robots `noindex`, the canonical link and hreflang
//! alternates, which is all a sitemap generator needs from a page.
//!
//! Hand-written rather than lol_html or html5ever: it reads `<meta>` and `<link>` start tags
//! up to `<body>` (skipping comments, scripts and styles) and decodes the few entities URLs
//! carry, in a few hundred nanoseconds per page and with no dependency. It sits behind one
//! function, [`scan_head`], so the crawler can swap in a full parser chosen by measurement.

/// What a page's head says about indexing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadInfo {
    /// `<meta name="robots" content="noindex">` (or `none`).
    pub noindex: bool,
    /// `<link rel="canonical" href>`, as written.
    pub canonical: Option<String>,
    /// `<link rel="alternate" hreflang href>`: (hreflang, href as written).
    pub alternates: Vec<(String, String)>,
}

/// Scans the head of an HTML document (bytes; invalid UTF-8 is read lossily).
pub fn scan_head(html: &[u8]) -> HeadInfo {
    let mut info = HeadInfo::default();
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &html[i..]) {
        i += off + 1;
        let rest = &html[i..];
        if rest.starts_with(b"!--") {
            i += find(rest, b"-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        let name_len = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'/').count();
        let name = rest[..name_len].to_ascii_lowercase();
        match name.as_slice() {
            b"body" | b"/head" => break,
            b"script" | b"style" | b"noscript" | b"template" | b"title" => {
                let mut close = b"</".to_vec();
                close.extend_from_slice(&name);
                i += find_ci(rest, &close).unwrap_or(rest.len());
            }
            b"meta" | b"link" => {
                let end = tag_end(rest);
                let attrs = parse_attrs(&rest[name_len..end]);
                let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                if name == b"meta" {
                    let robots = get("name").is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"));
                    if robots {
                        let content = get("content").unwrap_or("").to_ascii_lowercase();
                        if content.split([',', ' ']).any(|t| t == "noindex" || t == "none") {
                            info.noindex = true;
                        }
                    }
                } else {
                    let rel = get("rel").unwrap_or("").to_ascii_lowercase();
                    let href = get("href").map(str::trim).filter(|h| !h.is_empty());
                    let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                    if let Some(href) = href {
                        if rels.contains(&"canonical") && info.canonical.is_none() {
                            info.canonical = Some(href.to_string());
                        } else if rels.contains(&"alternate") {
                            if let Some(lang) = get("hreflang").map(str::trim).filter(|l| !l.is_empty()) {
                                info.alternates.push((lang.to_string(), href.to_string()));
                            }
                        }
                    }
                }
                i += end;
            }
            _ => {}
        }
    }
    info
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, n)
}

fn find_ci(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
}

/// Where the start tag ends (the `>` outside quotes), relative to `rest`.
fn tag_end(rest: &[u8]) -> usize {
    let mut quote = 0u8;
    for (i, &b) in rest.iter().enumerate() {
        match b {
            b'"' | b'\'' if quote == 0 => quote = b,
            b if b == quote => quote = 0,
            b'>' if quote == 0 => return i,
            _ => {}
        }
    }
    rest.len()
}

/// Attributes of a start tag (after its name): lower-case names, entity-decoded values.
fn parse_attrs(s: &[u8]) -> Vec<(String, String)> {
    let s = String::from_utf8_lossy(s);
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'/' | b'>') {
            i += 1;
        }
        if start == i {
            i += 1;
            continue;
        }
        let name = s[start..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                let ve = b[vs..].iter().position(|&c| c == q).map_or(b.len(), |p| vs + p);
                value = decode_entities(&s[vs..ve]);
                i = (ve + 1).min(b.len());
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = decode_entities(&s[vs..i]);
            }
        }
        out.push((name, value));
    }
    out
}

/// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references; others stay.
/// (Also the crawler's: lol_html gives attribute values as written.)
pub(crate) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let ent = &rest[1..e];
            let c = match ent {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => ent.strip_prefix('#').and_then(|n| {
                    let v = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok(),
                        None => n.parse().ok(),
                    };
                    v.and_then(char::from_u32)
                }),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(html: &str, noindex: bool, canonical: Option<&str>, alternates: &[(&str, &str)]) {
        let got = scan_head(html.as_bytes());
        assert_eq!(got.noindex, noindex, "{html}");
        assert_eq!(got.canonical.as_deref(), canonical, "{html}");
        let alts: Vec<(&str, &str)> = got.alternates.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(alts, alternates, "{html}");
    }

    #[test]
    fn heads() {
        check("<html><head><meta name=\"robots\" content=\"noindex, follow\"></head>", true, None, &[]);
        check("<HEAD><META NAME=ROBOTS CONTENT=NONE>", true, None, &[]);
        check("<meta name='robots' content='index,follow'>", false, None, &[]);
        check("<meta name=\"googlebot\" content=\"noindex\">", false, None, &[]);
        check("<!-- <meta name=robots content=noindex> --><link rel=canonical href=/a>", false, Some("/a"), &[]);
        check("<script>var s='<meta name=robots content=noindex>'</script>", false, None, &[]);
        check("<body><meta name=robots content=noindex>", false, None, &[]);
        check(
            "<link rel=\"alternate\" hreflang=\"de\" href=\"/de/?a=1&amp;b=2\"/><link rel=alternate type=application/rss+xml href=/feed>",
            false,
            None,
            &[("de", "/de/?a=1&b=2")],
        );
        check(
            "<link href=\"https://e.com/x\" rel=\"canonical\"><link rel=canonical href=/y>",
            false,
            Some("https://e.com/x"),
            &[],
        );
        check("<title>a <link rel=canonical href=/t></title>", false, None, &[]);
    }
}
