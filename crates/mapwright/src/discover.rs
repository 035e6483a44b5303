//! `mapwright discover`: every URL of a site's sitemaps, deduplicated and in scope, streamed
//! to standard output with the sitemap each came from; a summary on standard error.

use crate::cli::{DiscoverArgs, EntryFormat};
use crate::http::runtime;
use crate::output::{Out, parquet_out, print_finding};
use indicatif::{ProgressBar, ProgressStyle};
use mapwright_core::{Rule, Severity};
use mapwright_fetch::rows::Columns;
use mapwright_fetch::{DiscoverConfig, Discovery, Event, Fetcher, Outcome, SitemapStatus, State, Summary};
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

mod sites;

pub fn run(args: DiscoverArgs) -> anyhow::Result<ExitCode> {
    if args.format == EntryFormat::Parquet {
        check_parquet(&args)?;
    }
    let rt = runtime()?;
    match args.sites.clone() {
        Some(list) => rt.block_on(sites::run(args, list)),
        None => rt.block_on(run_async(args)),
    }
}

/// What `--format parquet` needs and cannot do, said before anything runs.
fn check_parquet(args: &DiscoverArgs) -> anyhow::Result<()> {
    if args.out.is_none() {
        anyhow::bail!(crate::output::NEEDS_OUT);
    }
    if args.sitemaps_only || args.changes {
        anyhow::bail!("--format parquet holds URL rows: use jsonl or csv with --sitemaps-only and --changes");
    }
    if args.sites.is_some() && args.state.is_some() {
        anyhow::bail!(
            "--state with --sites resumes by cutting the output back to the last site done, which a Parquet file (its footer at the end) cannot be: use jsonl, or split the list with --shard"
        );
    }
    Ok(())
}

/// The discovery settings the options describe, for one site or many.
fn discover_config(args: &DiscoverArgs) -> DiscoverConfig {
    let mut read = mapwright_core::ReadOptions::default();
    args.oai.limit(&mut read.limits);
    DiscoverConfig {
        read,
        per_host: args.concurrency.max(1),
        max_depth: args.max_depth,
        max_sitemaps: args.max_sitemaps,
        max_urls: args.max_urls,
        sitemaps_only: args.sitemaps_only,
        scope: !args.no_scope,
        cross_submission: !args.no_cross_submission,
        site_deadline: match args.site_deadline {
            // Past what a Duration holds is no limit either.
            Some(secs) if secs > 0.0 => Duration::try_from_secs_f64(secs).ok(),
            Some(_) => None,
            None => args.sites.is_some().then_some(mapwright_fetch::DEFAULT_SITE_DEADLINE),
        },
        ..DiscoverConfig::default()
    }
}

async fn run_async(args: DiscoverArgs) -> anyhow::Result<ExitCode> {
    let mut http = args.http.config()?;
    args.oai.pause(&mut http);
    let fetcher = Fetcher::new(http)?;
    let config = discover_config(&args);
    let mut discovery = Discovery::new(fetcher, config);
    let state = match &args.state {
        Some(path) => {
            let st = State::open(path).await?;
            st.begin_run().await?;
            discovery = discovery.with_state(st.clone());
            Some(st)
        }
        None => None,
    };
    // A few batches in flight: memory stays flat, the writer paces the discovery.
    let (tx, mut rx) = tokio::sync::mpsc::channel(8);
    let (site, seeds) = (args.site.clone(), args.sitemap.clone());
    let worker = tokio::spawn(async move {
        match site {
            Some(site) => discovery.run_site(&site, tx).await,
            None => discovery.run_sitemaps(seeds, tx).await,
        }
    });
    let origin = args.site.clone().unwrap_or_else(|| args.sitemap.join(" "));

    let progress = (!args.quiet && io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let mut parquet = match (&args.out, args.format) {
        (Some(path), EntryFormat::Parquet) => Some(parquet_out(path, Columns::DISCOVER.normalized(args.normalized))?),
        _ => None,
    };
    let sink: Box<dyn Write> = match (&args.out, &parquet) {
        (Some(path), None) => {
            Box::new(File::create(path).map_err(|e| anyhow::anyhow!("--out {}: {e}", path.display()))?)
        }
        _ => Box::new(io::stdout().lock()),
    };
    let mut out = Out::new(BufWriter::with_capacity(256 * 1024, sink), args.format, false).normalized(args.normalized);
    let (mut sitemaps, mut urls) = (0u64, 0u64);
    let mut write_err: Option<io::Error> = None;
    while let Some(ev) = rx.recv().await {
        if write_err.is_some() {
            break; // dropping the receiver stops the discovery
        }
        let r = match ev {
            Event::Urls { sitemap, urls: batch } => {
                urls += batch.len() as u64;
                if let Some(st) = &state {
                    st.stage(&sitemap, &batch).await?;
                }
                if args.changes || args.sitemaps_only {
                    Ok(())
                } else if let Some(pq) = parquet.as_mut() {
                    batch.iter().try_for_each(|u| pq.push_url(u, &sitemap, "")).map_err(io::Error::other)
                } else {
                    out.urls(&batch, &sitemap, None)
                }
            }
            Event::Sitemap(s) => {
                sitemaps += 1;
                if !args.quiet {
                    report_sitemap(&s, progress.as_ref());
                }
                if args.sitemaps_only { out.sitemap(&s, None) } else { Ok(()) }
            }
            Event::Finding { sitemap, finding } => {
                // Infos are noise here, but for the one that says why a folder rule was waived.
                if !args.quiet && (finding.severity() != Severity::Info || finding.rule == Rule::ScopeVouched) {
                    let line = {
                        let mut v = Vec::new();
                        print_finding(&mut v, &sitemap, &finding)?;
                        String::from_utf8_lossy(&v).trim_end().to_string()
                    };
                    say(progress.as_ref(), &line);
                }
                Ok(())
            }
            Event::Notice { sitemap, message } => {
                if !args.quiet {
                    match sitemap {
                        Some(s) => say(progress.as_ref(), &format!("{s}: note: {message}")),
                        None => say(progress.as_ref(), &format!("{origin}: note: {message}")),
                    }
                }
                Ok(())
            }
        };
        if let Err(e) = r {
            write_err = Some(e);
        }
        if let Some(bar) = &progress {
            bar.set_message(format!("{sitemaps} sitemaps, {urls} URLs"));
        }
    }
    drop(rx);
    let summary = worker.await??;
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    if let Some(e) = write_err {
        return Err(e.into());
    }
    if let Some(st) = &state {
        let mut res = Ok(());
        st.finish_run(&summary.sitemaps, |c, loc, sitemap| {
            if args.changes && res.is_ok() {
                res = out.change(c, loc, sitemap);
            }
        })
        .await?;
        res?;
    }
    if let Some(pq) = parquet {
        pq.finish()?;
    }
    out.w.flush()?;
    if !args.quiet {
        print_summary(&summary);
    }
    let nothing = summary.fetched + summary.not_modified + summary.skipped == 0;
    // Sitemaps read that list no URL in scope are no success either: the verdict `--sites`
    // writes (`no-urls`) and the Python package raises, said with its reason. Not for a run
    // whose sitemaps came unchanged from `--state` (their URLs were given by an earlier run).
    let fresh = summary.not_modified + summary.skipped == 0;
    let failed = !summary.failed.is_empty() || nothing || summary.deadline;
    let result = Ok(summary);
    let verdict = mapwright_fetch::SiteSummary::of(&origin, &result, args.sitemaps_only);
    let no_urls = fresh && verdict.ended == "no-urls";
    if no_urls && !args.quiet {
        eprintln!("mapwright: error: {}", verdict.error.as_deref().unwrap_or("the sitemaps list no URL"));
    }
    // No sitemap read: say why, as `--sites` does ("no sitemap found: robots.txt names none
    // and no usual path answered", or the first failure), not a summary of zeros alone.
    if verdict.ended == "no-sitemap" && !args.quiet {
        eprintln!("mapwright: error: {}", verdict.error.as_deref().unwrap_or("no sitemap found"));
    }
    Ok(if failed || no_urls { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A line on standard error that does not break the progress bar.
pub(crate) fn say(bar: Option<&ProgressBar>, line: &str) {
    match bar {
        Some(b) => b.println(line),
        None => eprintln!("{line}"),
    }
}

pub(crate) fn report_sitemap(s: &SitemapStatus, bar: Option<&ProgressBar>) {
    match &s.outcome {
        Outcome::Failed(e) => say(bar, &format!("{}: error: {e}", s.url)),
        _ => {
            if let Some(e) = &s.error {
                say(bar, &format!("{}: error: {e} (the entries before it are kept)", s.url));
            }
        }
    }
}

fn print_summary(s: &Summary) {
    let secs = s.elapsed.as_secs_f64();
    let rate = if secs > 0.0 { s.urls as f64 / secs } else { 0.0 };
    eprintln!(
        "mapwright: sitemaps from {}: {} fetched, {} not modified, {} skipped (index lastmod unchanged), {} failed, {} not followed",
        s.seeds_from,
        s.fetched,
        s.not_modified,
        s.skipped,
        s.failed.len(),
        s.not_followed
    );
    eprintln!(
        "mapwright: {} URLs; dropped: {} duplicates, {} out of scope, {} over the URL limit; {} kept by cross-submission; {} sitemaps vouched for by robots.txt",
        s.urls, s.duplicates, s.out_of_scope, s.over_limit, s.cross_submitted, s.vouched
    );
    eprintln!("mapwright: {:.1} MB received in {secs:.2} s ({rate:.0} URLs/s)", s.bytes as f64 / 1e6);
    for (url, why) in &s.failed {
        eprintln!("mapwright: failed: {url}: {why}");
    }
    if s.deadline {
        eprintln!("mapwright: stopped at --site-deadline: the site is not discovered whole");
    }
    if let Some(robots) = s.robots.as_ref().filter(|a| **a != mapwright_fetch::RobotsAnswer::Read) {
        eprintln!("mapwright: {}", robots.describe());
    }
}
