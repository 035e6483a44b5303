//! The `User-agent: *` rules of a robots.txt (RFC 9309): which paths a generic crawler may
//! fetch, so a generator leaves out what the site itself keeps crawlers from.

/// The `Allow`/`Disallow` rules of the `*` group(s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// (allow, pattern): `*` matches any run of characters, a final `$` anchors the end.
    rules: Vec<(bool, String)>,
}

impl Rules {
    /// Parses robots.txt text; groups for other agents are ignored.
    pub fn parse(text: &str) -> Self {
        let mut rules = Vec::new();
        let mut in_star = false;
        let mut agents_done = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else { continue };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" => {
                    if agents_done {
                        in_star = false;
                        agents_done = false;
                    }
                    in_star |= value == "*";
                }
                "allow" | "disallow" => {
                    agents_done = true;
                    if in_star && !value.is_empty() {
                        rules.push((key == "allow", value.to_string()));
                    }
                }
                _ => {}
            }
        }
        Rules { rules }
    }

    /// Whether `path` (with its query) may be crawled: the longest matching rule decides, and
    /// `Allow` wins a tie.
    pub fn allowed(&self, path: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (allow, pat) in &self.rules {
            if matches(pat.as_bytes(), path.as_bytes()) {
                let len = pat.len();
                best = match best {
                    Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                    _ => Some((len, *allow)),
                };
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// Prefix match with `*` wildcards and an optional final `$`.
fn matches(pat: &[u8], path: &[u8]) -> bool {
    let (pat, anchored) = match pat.strip_suffix(b"$") {
        Some(p) => (p, true),
        None => (pat, false),
    };
    fn go(p: &[u8], s: &[u8], anchored: bool) -> bool {
        match p.split_first() {
            None => !anchored || s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..], anchored)),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..], anchored),
        }
    }
    go(pat, path, anchored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_group() {
        let r = Rules::parse(
            "User-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\nAllow: /private/ok\n",
        );
        for (path, ok) in [
            ("/", true),
            ("/private/x", false),
            ("/private/ok.html", true),
            ("/a/b.pdf", false),
            ("/a/b.pdf?x", true),
            ("/public", true),
        ] {
            assert_eq!(r.allowed(path), ok, "{path}");
        }
        assert!(Rules::parse("User-agent: *\nDisallow:\n").allowed("/x"));
        assert!(!Rules::parse("user-agent: a\nuser-agent: *\ndisallow: /\n").allowed("/x"));
    }
}
