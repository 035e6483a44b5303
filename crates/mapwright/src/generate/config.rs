//! `mapwright.toml`: every flag of `generate`, plus per-pattern rules; flags override the file.
//!
//! ```toml
//! base_url = "https://example.com/"
//! out = "public"
//! gzip = true
//! exclude = ["/drafts/**"]
//! default_lastmod = "2024-01-01"
//!
//! [dir]
//! root = "public"
//! lastmod = "git"
//!
//! [rules]
//! "/blog/**" = { changefreq = "weekly", priority = 0.6 }
//! "/tmp/**" = { exclude = true }
//! ```

use super::args::{InputFormat, LastmodFrom, PartFormat};
use anyhow::{Context, bail};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use mapwright_core::date::{LastmodParse, now_utc, parse_lastmod};
use mapwright_core::{ChangeFreq, Lastmod, UrlEntry};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub base_url: Option<String>,
    pub out: Option<PathBuf>,
    pub sitemap_url: Option<String>,
    pub name: Option<String>,
    pub gzip: Option<bool>,
    pub gzip_level: Option<u32>,
    pub format: Option<PartFormat>,
    pub max_urls: Option<usize>,
    pub max_bytes: Option<u64>,
    pub default_lastmod: Option<String>,
    pub robots: Option<PathBuf>,
    /// URL-path globs to leave out (all sources).
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub list: ListConfig,
    #[serde(default)]
    pub dir: DirConfig,
    #[serde(default)]
    pub logs: LogsConfig,
    /// Pattern (URL path glob) -> what to set on matching entries.
    #[serde(default)]
    pub rules: toml::Table,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ListConfig {
    pub input_format: Option<InputFormat>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct DirConfig {
    pub root: Option<PathBuf>,
    #[serde(default)]
    pub include: Vec<String>,
    /// File globs (gitignore syntax).
    #[serde(default)]
    pub exclude: Vec<String>,
    pub clean_urls: Option<bool>,
    pub lastmod: Option<LastmodFrom>,
    pub alternates: Option<bool>,
    pub ignore_robots: Option<bool>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct LogsConfig {
    #[serde(default)]
    pub files: Vec<PathBuf>,
    pub strip_query: Option<bool>,
    pub priority_from_hits: Option<bool>,
    pub all_files: Option<bool>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    changefreq: Option<String>,
    priority: Option<f32>,
    lastmod: Option<String>,
    #[serde(default)]
    exclude: bool,
}

impl Config {
    /// Reads `path`, or `./mapwright.toml` when no path is given and that file exists.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Config> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None if Path::new("mapwright.toml").is_file() => PathBuf::from("mapwright.toml"),
            None => return Ok(Config::default()),
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let cfg: Config =
            toml::from_str(&text).with_context(|| format!("{}: invalid configuration", path.display()))?;
        Ok(cfg)
    }
}

/// One rule: what to fill in on matching entries, or drop them.
#[derive(Clone, Debug)]
struct Rule {
    changefreq: Option<ChangeFreq>,
    priority: Option<f32>,
    lastmod: Option<Lastmod>,
    exclude: bool,
}

/// Per-pattern rules and excludes, matched against the URL path (percent-encoded, no query).
/// Rules apply in file order and only fill in what an entry lacks: an entry's own values win,
/// and an earlier rule wins over a later one.
pub struct Rules {
    set: GlobSet,
    rules: Vec<Rule>,
    excludes: GlobSet,
    hits: Vec<usize>,
}

/// `*` stays inside one path segment, `**` crosses them: gitignore-like, on URL paths.
fn glob(p: &str) -> anyhow::Result<Glob> {
    GlobBuilder::new(p).literal_separator(true).build().with_context(|| format!("bad pattern {p:?}"))
}

impl Rules {
    pub fn new(table: &toml::Table, excludes: &[String]) -> anyhow::Result<Rules> {
        let mut sb = GlobSetBuilder::new();
        let mut rules = Vec::new();
        for (pattern, spec) in table {
            let spec: RuleSpec = spec
                .clone()
                .try_into()
                .with_context(|| format!("rule {pattern:?}: expected {{ changefreq, priority, lastmod, exclude }}"))?;
            let changefreq = match &spec.changefreq {
                Some(c) => Some(c.parse::<ChangeFreq>().map_err(|e| anyhow::anyhow!("rule {pattern:?}: {e}"))?),
                None => None,
            };
            if let Some(p) = spec.priority {
                if !(0.0..=1.0).contains(&p) {
                    bail!("rule {pattern:?}: priority {p} is not between 0.0 and 1.0");
                }
            }
            let lastmod = match &spec.lastmod {
                Some(l) => Some(parse_date(l).with_context(|| format!("rule {pattern:?}"))?),
                None => None,
            };
            sb.add(glob(pattern)?);
            rules.push(Rule { changefreq, priority: spec.priority, lastmod, exclude: spec.exclude });
        }
        let mut eb = GlobSetBuilder::new();
        for p in excludes {
            eb.add(glob(p)?);
        }
        Ok(Rules { set: sb.build()?, rules, excludes: eb.build()?, hits: Vec::new() })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.excludes.is_empty()
    }

    /// Applies the rules; `false` when the entry is to be left out.
    pub fn apply(&mut self, e: &mut UrlEntry) -> bool {
        let rest = e.loc.path_and_rest();
        let path = rest.split(['?', '#']).next().unwrap_or(rest);
        if self.excludes.is_match(path) {
            return false;
        }
        self.set.matches_into(path, &mut self.hits);
        for &i in &self.hits {
            let r = &self.rules[i];
            if r.exclude {
                return false;
            }
            if e.changefreq.is_none() {
                e.changefreq = r.changefreq;
            }
            if e.priority.is_none() {
                e.priority = r.priority;
            }
            if e.lastmod.is_none() {
                e.lastmod = r.lastmod.clone();
            }
        }
        true
    }
}

/// A date given in configuration or flags: W3C Datetime (repairs accepted) or `now`.
pub fn parse_date(s: &str) -> anyhow::Result<Lastmod> {
    if s.trim().eq_ignore_ascii_case("now") {
        return Ok(Lastmod::W3c(now_utc()));
    }
    match parse_lastmod(s.trim()) {
        LastmodParse::Exact(v) => Ok(Lastmod::W3c(v)),
        LastmodParse::Repaired(v, _) => Ok(Lastmod::Text { text: s.trim().into(), value: v }),
        LastmodParse::Invalid => bail!("{s:?} is not a date (use YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ, or `now`)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_core::Loc;

    fn entry(url: &str) -> UrlEntry {
        UrlEntry::new(Loc::parse(url).unwrap())
    }

    #[test]
    fn rules_fill_in_and_exclude() {
        let cfg: Config = toml::from_str(
            r#"
            exclude = ["/drafts/**"]
            [rules]
            "/blog/**" = { changefreq = "weekly", priority = 0.6 }
            "/blog/archive/*" = { priority = 0.1, lastmod = "2020-01-01" }
            "/tmp/**" = { exclude = true }
            "#,
        )
        .unwrap();
        let mut rules = Rules::new(&cfg.rules, &cfg.exclude).unwrap();
        let mut e = entry("https://e.com/blog/a/b?x=1");
        assert!(rules.apply(&mut e));
        assert_eq!((e.changefreq, e.priority), (Some(ChangeFreq::Weekly), Some(0.6)));
        let mut e = entry("https://e.com/blog/archive/x");
        e.priority = Some(0.9);
        assert!(rules.apply(&mut e));
        assert_eq!(e.priority, Some(0.9), "the entry's own value wins");
        assert_eq!(e.lastmod.unwrap().to_string(), "2020-01-01");
        assert!(!rules.apply(&mut entry("https://e.com/tmp/x")));
        assert!(!rules.apply(&mut entry("https://e.com/drafts/a/b")));
        let mut other = entry("https://e.com/about");
        assert!(rules.apply(&mut other));
        assert_eq!(other.changefreq, None);
    }

    #[test]
    fn bad_configs_say_why() {
        let bad = |s: &str| {
            let cfg: Config = toml::from_str(s).unwrap();
            format!("{:#}", Rules::new(&cfg.rules, &cfg.exclude).err().unwrap())
        };
        assert!(bad("[rules]\n\"/a\" = { changefreq = \"often\" }").contains("often"));
        assert!(bad("[rules]\n\"/a\" = { priority = 2.0 }").contains("priority"));
        assert!(bad("[rules]\n\"/a\" = { colour = 1 }").contains("colour"));
        assert!(toml::from_str::<Config>("gzipp = true").is_err());
    }
}
