//! The parse of a robots.txt, pure (texting_robots, url, std): the fuzz target `robots`
//! compiles this very file, without the fetch crate's HTTP stack.

use std::time::Duration;

/// A parsed robots.txt, for one user agent.
#[derive(Debug, Default)]
pub struct Robots {
    /// `Sitemap:` URLs, in file order (any case, anywhere in the file).
    pub sitemaps: Vec<String>,
    /// Crawl-delay for our agent.
    pub crawl_delay: Option<Duration>,
    /// Why there are no rules, when the file was missing or unusable.
    pub note: Option<String>,
    /// The file was longer than the bytes read (`MAX_ROBOTS_BYTES`) and was cut.
    pub truncated: bool,
    /// How the server answered for it, as RFC 9309 sorts the answers.
    pub answer: RobotsAnswer,
    pub(crate) robot: Option<texting_robots::Robot>,
}

/// How a robots.txt request was answered, sorted as RFC 9309 (section 2.3.1) sorts answers,
/// because each means something else for what may be read: a discovery says which it was
/// (its summary, the `--summary` lines, the Python package's results), never only "no URL".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RobotsAnswer {
    /// Fetched (2xx) and read: its rules and `Sitemap:` lines apply.
    #[default]
    Read,
    /// A 4xx status but 429 ("unavailable"): no rules, so no restriction (RFC 9309 2.3.1.3),
    /// and no `Sitemap:` line.
    Unavailable {
        /// The status.
        status: u16,
    },
    /// A 5xx or 429 status, a timeout or a network failure ("unreachable"): RFC 9309
    /// (2.3.1.4) says to assume a complete disallow.
    Unreachable {
        /// What failed (the status, the time limit, the network error).
        cause: String,
    },
}

impl RobotsAnswer {
    /// `read`, `unavailable` or `unreachable`: the word of summaries.
    pub fn as_str(&self) -> &'static str {
        match self {
            RobotsAnswer::Read => "read",
            RobotsAnswer::Unavailable { .. } => "unavailable",
            RobotsAnswer::Unreachable { .. } => "unreachable",
        }
    }

    /// What the answer was and what it means for a discovery, in a sentence.
    pub fn describe(&self) -> String {
        match self {
            RobotsAnswer::Read => "robots.txt was read".to_string(),
            RobotsAnswer::Unavailable { status } => format!(
                "robots.txt answered HTTP {status} (unavailable: RFC 9309 reads that as no restriction); it names no \
                 sitemap, so the usual paths were tried, and nothing vouches for the sitemaps found there (each covers \
                 only its folder)"
            ),
            RobotsAnswer::Unreachable { cause } => format!(
                "robots.txt is unreachable ({cause}): RFC 9309 reads that as a complete disallow, so no sitemap of the \
                 site was fetched"
            ),
        }
    }
}

impl Robots {
    /// Parses robots.txt text for `agent`. An HTML page (a soft 404) has no rules and no
    /// sitemaps: everything is allowed.
    pub fn parse(agent: &str, body: &[u8]) -> Robots {
        let head = String::from_utf8_lossy(&body[..body.len().min(512)]).trim_start().to_ascii_lowercase();
        if head.starts_with("<!doctype") || head.starts_with("<html") || head.starts_with("<?xml") {
            return Robots { note: Some("robots.txt is an HTML page, not a robots.txt".into()), ..Robots::default() };
        }
        // The agent token is the product name (before the `/`), as robots.txt groups name it.
        let token = agent.split(['/', ' ']).next().unwrap_or(agent);
        match texting_robots::Robot::new(token, body) {
            Ok(r) => Robots {
                sitemaps: r.sitemaps.clone(),
                crawl_delay: r
                    .delay
                    .filter(|d| d.is_finite() && *d >= 0.0)
                    .map(|d| Duration::from_secs_f32(d.min(3600.0))),
                note: None,
                truncated: false,
                answer: RobotsAnswer::Read,
                robot: Some(r),
            },
            Err(e) => Robots { note: Some(format!("robots.txt unreadable: {e}")), ..Robots::default() },
        }
    }

    /// Like [`Robots::parse`], for the robots.txt at `robots_url`: relative `Sitemap:` URLs are
    /// resolved against it, duplicates removed (first kept), and Google's tolerated misspelling
    /// `Site-map:` read too.
    pub fn parse_at(agent: &str, body: &[u8], robots_url: &str) -> Robots {
        let mut r = Robots::parse(agent, body);
        if r.robot.is_none() {
            return r;
        }
        let text = String::from_utf8_lossy(body);
        for line in text.lines() {
            let line = line.trim_start_matches('\u{feff}').trim();
            // `get`: the 9th byte may fall inside a character (found by the fuzz target).
            if line.get(..9).is_some_and(|p| p.eq_ignore_ascii_case("site-map:")) {
                r.sitemaps.push(line[9..].trim().to_string());
            }
        }
        let base = url::Url::parse(robots_url).ok();
        let mut seen = std::collections::HashSet::new();
        r.sitemaps = std::mem::take(&mut r.sitemaps)
            .into_iter()
            .filter_map(|s| {
                let s = s.trim();
                let absolute = match url::Url::parse(s) {
                    Ok(_) => s.to_string(),
                    Err(url::ParseError::RelativeUrlWithoutBase) => base.as_ref()?.join(s).ok()?.to_string(),
                    Err(_) => return None,
                };
                seen.insert(normalise(&absolute)).then_some(absolute)
            })
            .collect();
        r
    }

    /// Whether our agent may fetch `url` (always true without rules).
    pub fn allowed(&self, url: &str) -> bool {
        self.robot.as_ref().is_none_or(|r| r.allowed(url))
    }

    /// Whether a `Sitemap:` line names `sitemap_url` (compared after URL normalisation).
    pub fn lists_sitemap(&self, sitemap_url: &str) -> bool {
        let want = normalise(sitemap_url);
        self.sitemaps.iter().any(|s| normalise(s) == want)
    }
}

fn normalise(u: &str) -> String {
    url::Url::parse(u.trim()).map(|u| u.to_string()).unwrap_or_else(|_| u.trim().to_string())
}
