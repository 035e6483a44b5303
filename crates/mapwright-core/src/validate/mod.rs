//! The validator: one streaming pass over a [`SitemapReader`] that forwards the reader's
//! findings and adds the cross-entry and contextual rules of the catalogue.
//!
//! The reader already reports every per-element rule while it reads (`loc-*`, `lastmod-format`,
//! `priority-range`, ...). What only a whole file or its context can tell is added here: scope
//! (`loc-out-of-scope`, `index-cross-site`), time (`lastmod-future`), counts (`too-many-urls`,
//! `empty-sitemap`, `priority-uniform`), repeats (`duplicate-url`), and the fatal errors of the
//! reader turned into findings. Live rules (robots.txt, HTTP status) belong to the fetch crate:
//! it appends its findings to a [`Report`] with [`Report::push`].

mod explain;
mod follow;
mod report;
mod sarif;

pub use explain::{Explanation, explain};
pub use follow::{Child, Opened, Resolver, validate_tree};
pub use report::{NotShown, Report, ReportFinding, Summary};
pub use sarif::sarif;

use crate::error::Error;
use crate::loc::Loc;
use crate::model::{Entry, Format};
use crate::read::{Input, Pager, ReadOptions, SitemapReader};
use crate::rule::{Finding, Position, Rule, Severity};
use crate::scope::{OutOfScope, Scope, Voucher};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// Findings kept per rule and file by default: enough to fix a pattern, few enough to read.
pub const MAX_FINDINGS_PER_RULE: usize = 100;

/// What the validator needs to know beyond the file itself. The defaults suit a local file
/// whose URL is unknown.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the file is (or will be) served. Enables `loc-out-of-scope` and
    /// `index-cross-site`; without it scope is not checked. Default `None`.
    pub sitemap_url: Option<Loc>,
    /// Who vouches for the sitemap (PROTOCOL.md section 5): with `sitemap_url`, the scope
    /// checked is [`Scope::vouched`]`(sitemap_url, voucher)`. `--follow` gives an index's
    /// voucher to its children. Default [`Voucher::Nobody`]: the folder rule binds.
    pub voucher: Voucher,
    /// The scope to check instead of the one `sitemap_url` and `voucher` give, for a caller
    /// that decided it already (the service passes [`Scope::vouched`] of the site it knows).
    /// Default `None`.
    pub scope_override: Option<Scope>,
    /// "Now" as seconds since the Unix epoch, for `lastmod-future`; `None` reads the system
    /// clock once when the [`Validator`] is made. Injectable so tests do not depend on the date.
    pub now: Option<i64>,
    /// How far in the future a `lastmod` with a time may be before it is flagged, for clocks
    /// that disagree a little. Default 900 seconds. Values without a zone (date forms) get
    /// 14 more hours: the earliest zone on Earth is UTC+14.
    pub clock_skew_secs: i64,
    /// `priority-uniform` fires only when a file has more URLs than this, all with the same
    /// priority: two or three equal values are normal. Default 5.
    pub uniform_priority_min: u64,
    /// Entries allowed in one file. Default the protocol's 50,000.
    pub max_entries: u64,
    /// Findings kept per rule and file (the first ones, in file order); further ones are
    /// counted per rule but not kept, so memory stays bounded on a file where every line is
    /// wrong, and thousands of one warning can never hide an error of another rule.
    /// Default 100.
    pub max_findings_per_rule: usize,
    /// Index children remembered for `--follow`. Default 50,000 (the protocol's limit).
    pub max_children: usize,
    /// Read options (limits on hostile input).
    pub read: ReadOptions,
    /// The way to the next pages of an OAI-PMH answer, for a file fetched over HTTP (see
    /// [`SitemapReader::paged`]). Default `None`: one page is read.
    pub pager: Option<std::sync::Arc<dyn Pager>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sitemap_url: None,
            voucher: Voucher::Nobody,
            scope_override: None,
            now: None,
            clock_skew_secs: 900,
            uniform_priority_min: 5,
            max_entries: crate::MAX_URLS as u64,
            max_findings_per_rule: MAX_FINDINGS_PER_RULE,
            max_children: crate::MAX_URLS,
            read: ReadOptions::default(),
            pager: None,
        }
    }
}

/// What one file's validation found.
#[derive(Debug, Default)]
pub struct FileReport {
    /// The name the file is reported under (a path, `-`, or a URL).
    pub file: String,
    /// The detected format; `None` when the file could not be recognised at all.
    pub format: Option<Format>,
    /// Entries read (valid ones; skipped entries are findings, not entries).
    pub entries: u64,
    /// The findings kept, in file order (at most [`Config::max_findings_per_rule`] per rule).
    pub findings: Vec<Finding>,
    /// Findings per severity, including those not kept: `[infos, warnings, errors]`.
    pub counts: [u64; 3],
    /// Findings per rule, including those not kept.
    pub rule_counts: BTreeMap<Rule, u64>,
    /// The children an index lists, with where each `<loc>` is, for `--follow`.
    pub children: Vec<Child>,
    /// An I/O failure that stopped the read: the validator could not do its job on this file.
    pub io_error: Option<std::io::Error>,
}

impl FileReport {
    /// Findings counted with this severity (kept or not).
    pub fn count(&self, s: Severity) -> u64 {
        self.counts[s as usize]
    }

    /// Findings counted but not kept, because of [`Config::max_findings_per_rule`].
    pub fn omitted(&self) -> u64 {
        self.counts.iter().sum::<u64>() - self.findings.len() as u64
    }

    /// Per rule, the findings counted but not kept (rules with none left out are absent).
    pub fn omitted_by_rule(&self) -> Vec<(Rule, u64)> {
        self.rule_counts
            .iter()
            .map(|(&r, &n)| (r, n - self.findings.iter().filter(|f| f.rule == r).count() as u64))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Whether any error-severity finding was counted.
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }
}

/// Validates sitemaps with one [`Config`]. Cheap to make; holds no per-file state.
#[derive(Clone, Debug)]
pub struct Validator {
    config: Config,
    now: i64,
}

impl Validator {
    /// A validator; reads the clock now unless [`Config::now`] is set.
    pub fn new(config: Config) -> Self {
        let now = config.now.unwrap_or_else(|| crate::date::now_utc().unix_seconds());
        Validator { config, now }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Validates one file, keeping up to [`Config::max_findings_per_rule`] findings of each rule.
    /// An input given as the reader's own ([`Input::owned`]) is read ahead on a thread of its own.
    pub fn validate<'a>(&self, file: impl Into<String>, input: impl Into<Input<'a>>) -> FileReport {
        let mut report = FileReport { file: file.into(), ..FileReport::default() };
        let max = self.config.max_findings_per_rule as u64;
        let mut kept = Vec::new();
        let mut counts = [0u64; 3];
        let mut rule_counts = BTreeMap::new();
        let outcome = self.run(input, &mut |f: Finding| {
            counts[f.severity() as usize] += 1;
            let n = rule_counts.entry(f.rule).or_insert(0u64);
            *n += 1;
            if *n <= max {
                kept.push(f);
            }
        });
        report.findings = kept;
        report.counts = counts;
        report.rule_counts = rule_counts;
        report.format = outcome.format;
        report.entries = outcome.entries;
        report.children = outcome.children;
        report.io_error = outcome.io_error;
        report
    }

    /// Validates one file, handing every finding to `sink` as soon as it is known (in file
    /// order, except the whole-file findings that can only come at the end).
    pub fn run<'a>(&self, input: impl Into<Input<'a>>, sink: &mut dyn FnMut(Finding)) -> Outcome {
        self.run_with_entries(input, sink, &mut |_| {})
    }

    /// Like [`Validator::run`], and hands every entry read to `entries` too: the service stores
    /// a sitemap's URLs in the same streaming pass that validates it.
    pub fn run_with_entries<'a>(
        &self,
        input: impl Into<Input<'a>>,
        sink: &mut dyn FnMut(Finding),
        entries: &mut dyn FnMut(&Entry),
    ) -> Outcome {
        let mut pass = Pass::new(self);
        let skipped = std::cell::Cell::new(0u64);
        let skipped_for_errors = std::cell::Cell::new(0u64);
        let mut sink = |f: Finding| {
            if f.rule.skips_entry() {
                skipped.set(skipped.get() + 1);
                if f.severity() == Severity::Error {
                    skipped_for_errors.set(skipped_for_errors.get() + 1);
                }
            }
            sink(f)
        };
        let mut reader = match SitemapReader::paged(input, self.config.read.clone(), self.config.pager.clone()) {
            Ok(r) => r,
            Err(e) => {
                pass.fatal(e, &mut sink);
                return pass.outcome;
            }
        };
        if let Some(u) = &self.config.sitemap_url {
            reader.set_document_url(u.as_str());
        }
        pass.outcome.format = Some(reader.format());
        pass.vouched(&mut sink);
        reader.take_findings(&mut sink);
        loop {
            let next = reader.next_entry();
            // Taken after every entry, so the reader's own finding limit is never reached and
            // every finding is counted.
            reader.take_findings(&mut sink);
            // Looked at where the reader returned it (moved out, it was copied once more).
            match next {
                Ok(Some(ref entry)) => {
                    pass.entry(entry, reader.entry_position(), &mut sink);
                    entries(entry);
                }
                Ok(None) => break,
                Err(e) => {
                    pass.fatal(e, &mut sink);
                    return pass.outcome;
                }
            }
        }
        pass.skipped = skipped.get();
        pass.skipped_for_errors = skipped_for_errors.get();
        pass.finish(&mut sink);
        pass.outcome
    }
}

/// What a streaming run learned besides its findings.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The detected format, `None` if detection failed.
    pub format: Option<Format>,
    /// Entries read.
    pub entries: u64,
    /// The children of an index.
    pub children: Vec<Child>,
    /// An I/O failure that stopped the read.
    pub io_error: Option<std::io::Error>,
    /// The rule of the fatal error that stopped the read before the file's end (truncated or
    /// malformed XML, a breached limit, corrupt gzip, an OAI-PMH list cut short), whose finding
    /// was sent; `None` when the read reached the end (or stopped on `io_error`). The entries
    /// read before it are not the whole file: a consumer that takes a file all or nothing (the
    /// service's reads, as the CLI's exit status and the Python package's exception) looks here,
    /// not at the rule of a finding, since some rules (`xml-malformed`) are also recoverable.
    pub stopped: Option<Rule>,
}

/// A hasher that passes an already-hashed `u64` through: the duplicate set's keys are hashes.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The 64-bit hash a `loc` is remembered by: sixteen bytes at a time through a folded
/// 64x64->128-bit multiply (the core step of wyhash), which mixes every input bit into every
/// output bit at a fraction of a keyed SipHash's cost. A collision only ever means one false
/// `duplicate-url` warning; with at most 50,000 entries remembered its chance is about 1e-10.
fn loc_hash(loc: &str) -> u64 {
    const S: [u64; 4] = [0xa076_1d64_78bd_642f, 0xe703_7ed1_a0b4_28db, 0x8ebc_6af0_9c88_c6e3, 0x5899_65cc_7537_4cc3];
    fn mum(a: u64, b: u64) -> u64 {
        let r = u128::from(a) * u128::from(b);
        (r as u64) ^ ((r >> 64) as u64)
    }
    fn word(b: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    }
    let bytes = loc.as_bytes();
    let len = bytes.len() as u64;
    let mut h = S[0] ^ len;
    for c in bytes.chunks(16) {
        let (a, b) = c.split_at(c.len().min(8));
        h = mum(word(a) ^ S[1], word(b) ^ h);
    }
    mum(h ^ S[2], len ^ S[3])
}

/// The state of one pass over one file.
struct Pass<'v> {
    v: &'v Validator,
    scope: Option<Scope>,
    /// The origin of the sitemap's own URL, where an index's children may be too.
    own_origin: Option<String>,
    /// Hash of each `loc` seen, with the line of its first occurrence.
    seen: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
    first_entry: Option<Position>,
    urls: u64,
    priorities: u64,
    same_priority: Option<f32>,
    priority_varies: bool,
    too_many_reported: bool,
    /// Entries the reader skipped with a finding (no usable `loc`).
    skipped: u64,
    /// Of those, the ones skipped with an error-severity finding.
    skipped_for_errors: u64,
    outcome: Outcome,
}

impl<'v> Pass<'v> {
    fn new(v: &'v Validator) -> Self {
        let c = &v.config;
        let scope = c.scope_override.clone().or_else(|| c.sitemap_url.as_ref().map(|u| Scope::vouched(u, &c.voucher)));
        Pass {
            v,
            scope,
            own_origin: c.sitemap_url.as_ref().map(|u| u.origin_str().to_string()),
            seen: HashMap::default(),
            first_entry: None,
            urls: 0,
            priorities: 0,
            same_priority: None,
            priority_varies: false,
            too_many_reported: false,
            skipped: 0,
            skipped_for_errors: 0,
            outcome: Outcome::default(),
        }
    }

    /// Says once, before any entry, that the folder rule is waived for this sitemap.
    fn vouched(&self, sink: &mut dyn FnMut(Finding)) {
        let c = &self.v.config;
        if let (Some(scope), Some(url)) = (&self.scope, &c.sitemap_url) {
            if let Some(f) = scope.waiver(url, &c.voucher) {
                sink(f);
            }
        }
    }

    fn entry(&mut self, entry: &Entry, pos: Position, sink: &mut dyn FnMut(Finding)) {
        let c = &self.v.config;
        self.outcome.entries += 1;
        self.first_entry.get_or_insert(pos);
        let loc = entry.loc();
        if self.outcome.entries > c.max_entries && !self.too_many_reported {
            self.too_many_reported = true;
            let what = if matches!(entry, Entry::Sitemap(_)) { "child sitemaps" } else { "URLs" };
            sink(Finding::new(
                Rule::TooManyUrls,
                Some(pos),
                format!(
                    "more than {} {what} in one file (this is entry {}): consumers ignore the rest; split the file and list the parts in a sitemap index",
                    c.max_entries, self.outcome.entries
                ),
            ).with_loc(loc.as_str()));
        }
        self.duplicate(loc, pos, sink);
        match entry {
            Entry::Url(u) => {
                self.scope(loc, pos, sink);
                self.urls += 1;
                match (u.priority, self.same_priority) {
                    (Some(p), None) if self.priorities == 0 => self.same_priority = Some(p),
                    (Some(p), Some(q)) if p != q => self.priority_varies = true,
                    _ => {}
                }
                if u.priority.is_some() {
                    self.priorities += 1;
                }
                self.future(u.lastmod.as_ref(), loc, pos, sink);
            }
            Entry::Sitemap(s) => {
                self.cross_site(loc, pos, sink);
                self.future(s.lastmod.as_ref(), loc, pos, sink);
                if self.outcome.children.len() < c.max_children {
                    self.outcome.children.push(Child { loc: loc.clone(), position: pos });
                }
            }
        }
    }

    fn duplicate(&mut self, loc: &Loc, pos: Position, sink: &mut dyn FnMut(Finding)) {
        // Only the first `max_entries` are remembered: consumers ignore what comes after the
        // limit (too-many-urls), and so memory stays bounded whatever the file holds.
        let remember = self.outcome.entries <= self.v.config.max_entries;
        match self.seen.entry(loc_hash(loc.as_str())) {
            std::collections::hash_map::Entry::Vacant(v) => {
                if remember {
                    v.insert(pos.line);
                }
            }
            std::collections::hash_map::Entry::Occupied(o) => sink(
                Finding::new(
                    Rule::DuplicateUrl,
                    Some(pos),
                    format!(
                        "{} is already listed on line {}: consumers count it once; remove this entry (or merge the two)",
                        loc,
                        o.get()
                    ),
                )
                .with_loc(loc.as_str()),
            ),
        }
    }

    fn scope(&self, loc: &Loc, pos: Position, sink: &mut dyn FnMut(Finding)) {
        let Some(scope) = &self.scope else { return };
        if let Err(why) = scope.check(loc) {
            let allowed = format!("{}{}", scope.origin(), scope.folder());
            let what = match why {
                OutOfScope::Scheme => "uses another scheme than the sitemap",
                OutOfScope::Host => "is on another host than the sitemap",
                OutOfScope::Port => "is on another port than the sitemap",
                OutOfScope::Path => "is outside the sitemap's folder",
            };
            let p = loc.path_and_rest();
            let folder = &p[..p.rfind('/').map_or(1, |i| i + 1)];
            let hint = match why {
                OutOfScope::Path => format!(
                    "move the sitemap up to a folder that contains this URL, or list it in a sitemap under {}{folder}",
                    loc.origin_str()
                ),
                _ => format!("list it in a sitemap served from {}", loc.origin_str()),
            };
            sink(
                Finding::new(
                    Rule::LocOutOfScope,
                    Some(pos),
                    format!(
                        "{loc} {what}: a sitemap may only list URLs under {allowed}, so consumers drop this one; {hint}"
                    ),
                )
                .with_loc(loc.as_str()),
            );
        }
    }

    fn cross_site(&self, loc: &Loc, pos: Position, sink: &mut dyn FnMut(Finding)) {
        let Some(scope) = &self.scope else { return };
        // The index's own site, or the origin that vouches for it (and so for its children).
        if !scope.same_site(loc) && self.own_origin.as_deref() != Some(loc.origin_str()) {
            sink(
                Finding::new(
                    Rule::IndexCrossSite,
                    Some(pos),
                    format!(
                        "child sitemap {loc} is not on the index's site {}: an index may only list sitemaps of its own site; host that sitemap under {} or submit it separately",
                        scope.origin(),
                        scope.origin()
                    ),
                )
                .with_loc(loc.as_str()),
            );
        }
    }

    fn future(&self, lastmod: Option<&crate::date::Lastmod>, loc: &Loc, pos: Position, sink: &mut dyn FnMut(Finding)) {
        let Some(l) = lastmod else { return };
        let v = l.value();
        let mut allowance = self.v.config.clock_skew_secs;
        if v.tz.is_none() {
            allowance += 14 * 3600;
        }
        if v.unix_seconds() > self.v.now + allowance {
            sink(
                Finding::new(
                    Rule::LastmodFuture,
                    Some(pos),
                    format!(
                        "lastmod {l} is in the future (now is {}): consumers distrust such dates; write when the page really changed",
                        crate::date::from_unix_seconds(self.v.now)
                    ),
                )
                .with_loc(loc.as_str()),
            );
        }
    }

    fn fatal(&mut self, e: Error, sink: &mut dyn FnMut(Finding)) {
        self.outcome.stopped = e.rule();
        match e.rule() {
            Some(rule) => {
                let fix = match rule {
                    Rule::TooLarge => "; split the file into sitemaps of at most 50 MiB listed in an index",
                    Rule::EmptyFile => {
                        "; publish the sitemap again (was the upload complete?), or remove the file and its Sitemap: line"
                    }
                    Rule::XmlMalformed => "; nothing after this point was read",
                    Rule::GzipCorrupt => "; compress the file again (gzip -9 sitemap.xml)",
                    Rule::UnknownRoot => {
                        "; a sitemap's root is <urlset> or <sitemapindex> (or an RSS/Atom feed, or one URL per line)"
                    }
                    _ => "",
                };
                let message = strip_position(&e.to_string());
                sink(Finding::new(rule, e.position(), format!("{message}{fix}")));
            }
            None => {
                if let Error::Io(io) = e {
                    self.outcome.io_error = Some(io);
                }
            }
        }
    }

    fn finish(&mut self, sink: &mut dyn FnMut(Finding)) {
        let c = &self.v.config;
        // A file whose entries were all skipped is not "empty": its loc findings say why.
        if self.outcome.entries == 0 && self.skipped == 0 {
            sink(Finding::new(
                Rule::EmptySitemap,
                None,
                "no entries at all: consumers ignore an empty sitemap (and the XSD rejects one); list at least one URL or do not publish the file",
            ));
        }
        // Every entry skipped, none for an error (OAI-PMH records without an http(s) URL, each
        // a warning): the file gives nothing, and `read` and `discover` fail on it, so it is
        // not valid either. Skips that are errors already make it invalid.
        if self.outcome.entries == 0 && self.skipped > 0 && self.skipped_for_errors == 0 {
            sink(Finding::new(
                Rule::NoUsableUrl,
                None,
                format!(
                    "none of the {} entries listed gives a usable URL (each was skipped: see its finding), so consumers get nothing from this file; give each entry an http(s) URL",
                    self.skipped
                ),
            ));
        }
        if self.urls > c.uniform_priority_min && self.priorities == self.urls && !self.priority_varies {
            if let Some(p) = self.same_priority {
                sink(Finding::new(
                    Rule::PriorityUniform,
                    self.first_entry,
                    format!(
                        "all {} URLs have priority {p}: priority only ranks a site's URLs against each other, so one value for all says nothing; vary it, or drop <priority>",
                        self.urls
                    ),
                ));
            }
        }
    }
}

/// Error messages start with `line:column: `; findings carry the position apart.
fn strip_position(s: &str) -> String {
    let mut parts = s.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), Some(rest))
            if a.bytes().all(|c| c.is_ascii_digit()) && !a.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) =>
        {
            rest.trim_start().to_string()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests;
