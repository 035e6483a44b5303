//! `mapwright generate dir` and `generate logs`: thin drivers over mapwright-crawl's walker
//! and log reader.

use super::Pipeline;
use super::args::{DirArgs, LastmodFrom, LogsArgs};
use super::config::Config;
use anyhow::Context;
use mapwright_core::UrlEntry;
use mapwright_core::write::Namespaces;
use mapwright_crawl::logs::priority_from_hits;
use mapwright_crawl::{LastmodSource, LogConfig, WalkConfig, WalkItem, Walker, read_logs};
use std::process::ExitCode;

pub fn run_dir(a: DirArgs) -> anyhow::Result<ExitCode> {
    let cfg = Config::load(a.common.config.as_deref())?;
    let d = &cfg.dir;
    let root = a
        .root
        .clone()
        .or_else(|| d.root.clone())
        .context("the web root is required (or root in [dir] of mapwright.toml)")?;
    let alternates = a.alternates || d.alternates.unwrap_or(false);
    let ns = if alternates { Namespaces { xhtml: true, ..Namespaces::NONE } } else { Namespaces::NONE };
    let mut p = Pipeline::new(&a.common, &cfg, &cfg.exclude, ns)?;
    let mut wc = WalkConfig::new(&root, p.base().clone());
    wc.include = if a.include.is_empty() { d.include.clone() } else { a.include.clone() };
    wc.exclude = d.exclude.iter().chain(&a.exclude).cloned().collect();
    wc.clean_urls = a.clean_urls || d.clean_urls.unwrap_or(false);
    wc.lastmod = match a.lastmod.or(d.lastmod).unwrap_or(LastmodFrom::Mtime) {
        LastmodFrom::Mtime => LastmodSource::Mtime,
        LastmodFrom::Git => LastmodSource::Git,
        LastmodFrom::None => LastmodSource::None,
    };
    wc.alternates = alternates;
    wc.honour_robots = !(a.ignore_robots || d.ignore_robots.unwrap_or(false));
    for item in Walker::new(wc)? {
        match item? {
            WalkItem::Page(e) => {
                let place = e.loc.to_string();
                p.offer(*e, || place)?;
            }
            WalkItem::Skipped { path, url, skip } => {
                let shown = url.unwrap_or_else(|| path.display().to_string());
                let detail = match &skip {
                    mapwright_crawl::Skip::Canonical(c) => format!(" (canonical: {c})"),
                    mapwright_crawl::Skip::BadUrl(why) | mapwright_crawl::Skip::Unreadable(why) => format!(" ({why})"),
                    _ => String::new(),
                };
                let reason = skip.reason();
                p.leave_out(reason, || format!("{}: {shown}: {reason}{detail}: left out", path.display()));
            }
        }
    }
    p.finish()
}

pub fn run_logs(a: LogsArgs) -> anyhow::Result<ExitCode> {
    let cfg = Config::load(a.common.config.as_deref())?;
    let files = if a.logs.is_empty() { cfg.logs.files.clone() } else { a.logs.clone() };
    anyhow::ensure!(!files.is_empty(), "no access log given (or files in [logs] of mapwright.toml)");
    let mut excludes = cfg.exclude.clone();
    excludes.extend(a.exclude.iter().cloned());
    let mut p = Pipeline::new(&a.common, &cfg, &excludes, Namespaces::NONE)?;
    let lc = LogConfig {
        base: p.base().clone(),
        strip_query: a.strip_query || cfg.logs.strip_query.unwrap_or(false),
        all_files: a.all_files || cfg.logs.all_files.unwrap_or(false),
    };
    let by_hits = a.priority_from_hits || cfg.logs.priority_from_hits.unwrap_or(false);
    let summary = read_logs(&files, &lc)?;
    for (reason, n) in &summary.skipped {
        p.count_left_out(&format!("{reason} (log lines)"), *n);
    }
    let max = summary.pages.first().map_or(0, |(_, n)| *n);
    for (loc, hits) in summary.pages {
        let mut e = UrlEntry::new(loc);
        if by_hits {
            e.priority = Some(priority_from_hits(hits, max));
        }
        let place = format!("{} ({hits} hits)", e.loc);
        p.offer(e, || place)?;
    }
    p.finish()
}
