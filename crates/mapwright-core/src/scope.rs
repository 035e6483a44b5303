//! Where a sitemap may live and which URLs it may list (PROTOCOL.md section 5).

use crate::loc::Loc;
use crate::rule::{Finding, Rule};

/// The URLs a sitemap at a given URL may list: same scheme, host and port, and a path under
/// the sitemap's folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    /// `scheme://host[:port]`, normalised.
    origin: String,
    /// The folder, ending in `/`.
    folder: String,
}

/// Why a URL is out of a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfScope {
    /// Other scheme (`http` vs `https`).
    Scheme,
    /// Other host (`www.` and the bare domain are different sites).
    Host,
    /// Other port.
    Port,
    /// Path outside the sitemap's folder.
    Path,
}

impl OutOfScope {
    /// A short phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            OutOfScope::Scheme => "another scheme",
            OutOfScope::Host => "another host",
            OutOfScope::Port => "another port",
            OutOfScope::Path => "a path outside the sitemap's folder",
        }
    }
}

/// Who vouches for a sitemap: the one input, besides its URL, that decides which URLs it may
/// list (PROTOCOL.md section 5). `read --strict`, `discover`, `validate` and the service's
/// scheduler all pass their knowledge through this, so one sitemap gets one verdict everywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Voucher {
    /// Nobody: a bare sitemap URL given to a consumer. The folder rule binds.
    Nobody,
    /// The robots.txt of this origin (`scheme://host[:port]`, normalised as
    /// [`Loc::origin_str`]) names the sitemap, or names an index through which the sitemap was
    /// reached (at any depth). Whoever writes robots.txt controls the whole host, so the sitemap
    /// may list any URL of that origin, wherever the file itself is hosted (cross-submission).
    Robots(String),
    /// A site owner who proved control of this origin (the console's verification) vouches
    /// for every sitemap of it: any URL of that origin.
    Owner(String),
}

impl Voucher {
    /// The origin vouched for, if any.
    pub fn origin(&self) -> Option<&str> {
        match self {
            Voucher::Nobody => None,
            Voucher::Robots(o) | Voucher::Owner(o) => Some(o),
        }
    }
}

impl Scope {
    /// The scope of the sitemap at `sitemap_url` given who vouches for it: the one decision
    /// of section 5. Nobody: the sitemap's folder on its own origin. Robots or Owner of origin
    /// O: every URL of O.
    pub fn vouched(sitemap_url: &Loc, voucher: &Voucher) -> Self {
        match voucher.origin() {
            None => Scope::of_sitemap(sitemap_url),
            Some(origin) => Scope { origin: origin.trim_end_matches('/').to_string(), folder: "/".to_string() },
        }
    }

    /// Whether `vouched` gives the sitemap at `sitemap_url` more than its folder rule would
    /// (another origin, or a wider folder): worth one info finding per sitemap.
    pub fn widens(&self, sitemap_url: &Loc) -> bool {
        let own = Scope::of_sitemap(sitemap_url);
        self.origin != own.origin || self.folder != own.folder
    }

    /// The `scope-vouched` finding to report once for the sitemap at `sitemap_url` when this
    /// scope widens its own (the folder rule is waived), saying who vouches: `voucher` when
    /// it is the one this scope came from. `None` when nothing is waived.
    pub fn waiver(&self, sitemap_url: &Loc, voucher: &Voucher) -> Option<Finding> {
        if !self.widens(sitemap_url) {
            return None;
        }
        let own = Scope::of_sitemap(sitemap_url);
        let described = voucher.origin().is_some_and(|o| o.trim_end_matches('/') == self.origin) && self.folder == "/";
        let who = match voucher {
            Voucher::Robots(o) if described => format!("{o}/robots.txt names this sitemap (or an index above it)"),
            Voucher::Owner(o) if described => format!("the verified owner of {o} vouches for this sitemap"),
            _ => "someone vouches for this sitemap".to_string(),
        };
        Some(Finding::new(
            Rule::ScopeVouched,
            None,
            format!(
                "{who}: it may list any URL under {}{}, not only those under its folder {}{}",
                self.origin, self.folder, own.origin, own.folder
            ),
        ))
    }

    /// The scope of a sitemap served at `sitemap_url`.
    pub fn of_sitemap(sitemap_url: &Loc) -> Self {
        let rest = sitemap_url.path_and_rest();
        let path = rest.split(['?', '#']).next().unwrap_or("/");
        let folder = match path.rfind('/') {
            Some(i) => &path[..=i],
            None => "/",
        };
        Scope { origin: sitemap_url.origin_str().to_string(), folder: folder.to_string() }
    }

    /// The scope of a whole site (a sitemap at the root): every URL of that origin.
    pub fn of_site(url: &Loc) -> Self {
        Scope { origin: url.origin_str().to_string(), folder: "/".to_string() }
    }

    /// `scheme://host[:port]` of the scope.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The folder (ends with `/`).
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// `Ok` when `url` is in scope, otherwise which part differs.
    pub fn check(&self, url: &Loc) -> Result<(), OutOfScope> {
        let origin = url.origin_str();
        if origin != self.origin {
            let (s1, h1) = split_origin(origin);
            let (s2, h2) = split_origin(&self.origin);
            if s1 != s2 {
                return Err(OutOfScope::Scheme);
            }
            let (host1, port1) = split_port(h1);
            let (host2, port2) = split_port(h2);
            if host1 != host2 {
                return Err(OutOfScope::Host);
            }
            if port1 != port2 {
                return Err(OutOfScope::Port);
            }
        }
        if url.path_and_rest().starts_with(&self.folder) { Ok(()) } else { Err(OutOfScope::Path) }
    }

    /// Whether `url` is in scope.
    pub fn contains(&self, url: &Loc) -> bool {
        self.check(url).is_ok()
    }

    /// Whether `url` is on the same site (scheme, host, port), whatever its path.
    pub fn same_site(&self, url: &Loc) -> bool {
        url.origin_str() == self.origin
    }
}

fn split_origin(o: &str) -> (&str, &str) {
    o.split_once("://").unwrap_or(("", o))
}

fn split_port(h: &str) -> (&str, &str) {
    // IPv6 literals keep their colons inside brackets.
    match h.rfind(':') {
        Some(i) if !h[i..].contains(']') => (&h[..i], &h[i + 1..]),
        _ => (h, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vouching() {
        let sm = Loc::parse("http://example.com/sitemaps/a.xml").unwrap();
        let page = Loc::parse("http://example.com/page/1").unwrap();
        let nobody = Scope::vouched(&sm, &Voucher::Nobody);
        assert_eq!(nobody.check(&page), Err(OutOfScope::Path));
        assert!(!nobody.widens(&sm));
        for v in [Voucher::Robots("http://example.com".into()), Voucher::Owner("http://example.com".into())] {
            let s = Scope::vouched(&sm, &v);
            assert_eq!(s.check(&page), Ok(()));
            assert_eq!(s.check(&Loc::parse("https://example.com/page/1").unwrap()), Err(OutOfScope::Scheme));
            assert!(s.widens(&sm));
        }
        // Cross-submission: hosted on B, vouched for by A's robots.txt: A's URLs only.
        let on_b = Loc::parse("http://b.example/s.xml").unwrap();
        let s = Scope::vouched(&on_b, &Voucher::Robots("http://a.example".into()));
        assert_eq!(s.check(&Loc::parse("http://a.example/x").unwrap()), Ok(()));
        assert_eq!(s.check(&Loc::parse("http://b.example/x").unwrap()), Err(OutOfScope::Host));
        let w = Scope::vouched(&sm, &Voucher::Robots("http://example.com".into()))
            .waiver(&sm, &Voucher::Robots("http://example.com".into()));
        assert_eq!(w.map(|f| f.message), Some("http://example.com/robots.txt names this sitemap (or an index above it): it may list any URL under http://example.com/, not only those under its folder http://example.com/sitemaps/".to_string()));
        assert_eq!(nobody.waiver(&sm, &Voucher::Nobody), None);
        // A root sitemap vouched for by its own robots.txt is not widened.
        let root = Loc::parse("http://example.com/sitemap.xml").unwrap();
        assert!(!Scope::vouched(&root, &Voucher::Robots("http://example.com".into())).widens(&root));
    }

    fn check(sitemap: &str, url: &str, expected: Result<(), OutOfScope>) {
        let scope = Scope::of_sitemap(&Loc::parse(sitemap).unwrap());
        assert_eq!(scope.check(&Loc::parse(url).unwrap()), expected, "{sitemap} vs {url}");
    }

    #[test]
    fn protocol_examples() {
        let s = "http://example.com/catalog/sitemap.xml";
        check(s, "http://example.com/catalog/show?item=23", Ok(()));
        check(s, "http://example.com/catalog/", Ok(()));
        check(s, "http://example.com/images/", Err(OutOfScope::Path));
        check(s, "https://example.com/catalog/a", Err(OutOfScope::Scheme));
        check(s, "http://www.example.com/catalog/a", Err(OutOfScope::Host));
        check(s, "http://example.com:100/catalog/a", Err(OutOfScope::Port));
        check("http://example.com:100/sitemap.xml", "http://example.com:100/x", Ok(()));
        check("http://example.com:100/sitemap.xml", "http://example.com/x", Err(OutOfScope::Port));
        check("http://example.com/sitemap.xml", "http://example.com/", Ok(()));
        check("http://example.com/sitemap.xml", "http://example.com:80/a", Ok(()));
        check("http://example.com/catalog/sitemap.xml", "http://example.com/catalogue/x", Err(OutOfScope::Path));
    }
}
