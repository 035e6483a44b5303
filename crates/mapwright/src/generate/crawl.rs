//! `mapwright generate crawl`: wires flags to mapwright-crawl's [`Crawler`], its entries into
//! the [`Pipeline`], a progress bar on a terminal, Ctrl-C, and the `--report` file.
//!
//! Ctrl-C never writes a sitemap: a partial crawl would replace a complete sitemap with a
//! part of it. It stops the requests, keeps the `--state` (every finished page), prints what
//! was done and exits with 130; the next run with the same `--state` continues. A crawl that
//! ends (completely or at a limit) removes its state after writing the sitemap, so the next
//! run starts afresh.

use super::Pipeline;
use super::args::CrawlArgs;
use super::config::Config;
use anyhow::Context;
use indicatif::ProgressStyle;
use mapwright_core::write::Namespaces;
use mapwright_crawl::crawl::{Stop, state};
use mapwright_crawl::{CrawlConfig, CrawlReport, Crawler};
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub fn run(mut a: CrawlArgs) -> anyhow::Result<ExitCode> {
    let cfg_file = Config::load(a.common.config.as_deref())?;
    let start = url::Url::parse(a.start_url.trim()).with_context(|| format!("START_URL {:?}", a.start_url))?;
    anyhow::ensure!(
        matches!(start.scheme(), "http" | "https"),
        "START_URL {:?}: not an http or https URL",
        a.start_url
    );
    if a.common.base_url.is_none() && cfg_file.base_url.is_none() {
        // The scope defaults to the start URL's folder.
        let mut folder = start.clone();
        folder.set_query(None);
        folder.set_fragment(None);
        let path = folder.path().to_string();
        folder.set_path(&path[..path.rfind('/').map_or(0, |i| i + 1)]);
        a.common.base_url = Some(folder.to_string());
    }
    anyhow::ensure!(a.concurrency >= 1, "--concurrency must be at least 1");
    if let Some(r) = a.rate {
        anyhow::ensure!(r.is_finite() && r > 0.0, "--rate must be a positive number of requests per second");
    }
    let ns = Namespaces { image: a.images, xhtml: a.alternates, ..Namespaces::NONE };
    let mut p = Pipeline::new(&a.common, &cfg_file, &cfg_file.exclude, ns)?;
    let mut cc = CrawlConfig::new(start.as_str());
    cc.base = Some(p.base().to_string());
    cc.include = a.include.clone();
    cc.exclude = a.exclude.clone();
    cc.strip_query = a.strip_query.clone();
    cc.concurrency = a.concurrency;
    cc.rate = a.rate;
    cc.max_depth = a.max_depth;
    cc.max_pages = a.max_pages;
    cc.max_time = match a.max_time {
        // `try_`: a number past what a Duration holds (1e30) is refused below, not a panic.
        Some(s) if s >= 0.0 && Duration::try_from_secs_f64(s).is_ok() => Some(Duration::from_secs_f64(s)),
        Some(_) => anyhow::bail!("--max-time must be a number of seconds"),
        None => None,
    };
    cc.max_page_bytes = a.max_page_size;
    cc.include_types = a.include_types.clone();
    cc.images = a.images;
    cc.alternates = a.alternates;
    cc.ignore_robots = a.ignore_robots;
    cc.state = a.state.clone();
    let fetcher = mapwright_fetch::Fetcher::new(a.http.config()?)?;
    let crawler = Crawler::new(cc, fetcher);
    let stop = crawler.stop_handle();
    let bar = p.progress_bar().cloned();
    if let Some(pb) = &bar {
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
    }
    let rt = crate::http::runtime()?;
    let started = Instant::now();
    let result = rt.block_on(async {
        let s = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                s.stop();
            }
        });
        let sink = |e: mapwright_core::UrlEntry| {
            let place = e.loc.to_string();
            p.offer(e, || place).map_err(|e| std::io::Error::other(format!("{e:#}")))
        };
        let progress = |pr: &mapwright_crawl::Progress| {
            if let Some(pb) = bar.as_ref().filter(|_| pr.done % 8 == 0) {
                let rate = pr.done as f64 / started.elapsed().as_secs_f64().max(1e-3);
                pb.set_message(format!(
                    "{} pages done, {} queued, {rate:.1} pages/s, {} listed, {} errors",
                    pr.done, pr.queued, pr.listed, pr.errors
                ));
            }
        };
        crawler.run(sink, progress).await
    });
    let report = result?;
    write_report(&a, &report)?;
    if !a.common.quiet {
        if let Some(pb) = &bar {
            pb.suspend(|| eprint!("{}", report.summary()));
        } else {
            eprint!("{}", report.summary());
        }
    }
    if report.stopped == Some(Stop::Interrupted) {
        let resume = match &a.state {
            Some(dir) => format!("run again with --state {} to continue", dir.display()),
            None => "use --state DIR to make a crawl resumable".to_string(),
        };
        eprintln!("mapwright: interrupted: no sitemap written; {resume}");
        return Ok(ExitCode::from(130));
    }
    let code = p.finish()?;
    if let Some(dir) = &a.state {
        state::clear(dir)?;
    }
    Ok(code)
}

/// `--report FILE`: JSON when the name ends in `.json`, else the readable summary.
fn write_report(a: &CrawlArgs, report: &CrawlReport) -> anyhow::Result<()> {
    let Some(path) = &a.report else { return Ok(()) };
    let text = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        let mut s = serde_json::to_string_pretty(report)?;
        s.push('\n');
        s
    } else {
        report.summary()
    };
    std::fs::write(path, text).with_context(|| format!("cannot write the report to {}", path.display()))
}
