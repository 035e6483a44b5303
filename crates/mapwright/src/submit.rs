//! `mapwright submit`: announce a sitemap by ping, or its URLs by IndexNow.

use crate::cli::SubmitArgs;
use crate::http::runtime;
use anyhow::Context;
use mapwright_core::date::{LastmodParse, parse_lastmod};
use mapwright_fetch::submit::{IndexNowKey, indexnow, ping};
use mapwright_fetch::{DiscoverConfig, Discovery, Event, Fetcher};
use std::process::ExitCode;

pub fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(run_async(args))
}

async fn run_async(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let fetcher = Fetcher::new(args.http.config()?)?;
    let mut ok = true;
    if let Some(endpoint) = &args.ping {
        let status = ping(&fetcher, endpoint, &args.sitemap).await?;
        let meaning = if (200..300).contains(&status) { "received (not a verdict on validity)" } else { "refused" };
        println!("ping {endpoint}: HTTP {status}: {meaning}");
        ok &= (200..300).contains(&status);
    }
    if let Some(endpoint) = &args.indexnow {
        let key = IndexNowKey {
            key: args.key.clone().context("--indexnow needs --key")?,
            key_location: args.key_location.clone(),
        };
        let since = match &args.since {
            Some(s) => match parse_lastmod(s.trim()) {
                LastmodParse::Exact(d) | LastmodParse::Repaired(d, _) => Some(d.unix_seconds()),
                LastmodParse::Invalid => {
                    anyhow::bail!("--since {s:?} is not a date (write 2024-05-01 or 2024-05-01T12:00:00Z)")
                }
            },
            None => None,
        };
        let urls = collect_urls(&fetcher, &args.sitemap, since).await?;
        if urls.is_empty() {
            eprintln!("mapwright: no URL to submit{}", if since.is_some() { " (none newer than --since)" } else { "" });
            return Ok(ExitCode::SUCCESS);
        }
        for b in indexnow(&fetcher, endpoint, &key, &urls).await? {
            let meaning = match b.status {
                200 | 202 => "accepted",
                400 => "bad request",
                403 => "key not valid (key file not found or not matching)",
                422 => "URLs do not belong to the host or the key does not match",
                429 => "too many requests",
                _ => "unexpected answer",
            };
            println!("indexnow {endpoint}: {} URLs of {}: HTTP {}: {meaning}", b.urls, b.host, b.status);
            ok &= matches!(b.status, 200 | 202);
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Every URL of the sitemap (following an index), only those with a lastmod at or after `since`.
async fn collect_urls(fetcher: &Fetcher, sitemap: &str, since: Option<i64>) -> anyhow::Result<Vec<String>> {
    let d = Discovery::new(fetcher.clone(), DiscoverConfig::default());
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let seeds = vec![sitemap.to_string()];
    let worker = tokio::spawn(async move { d.run_sitemaps(seeds, tx).await });
    let mut urls = Vec::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            Event::Urls { urls: batch, .. } => {
                for u in batch {
                    let newer = match (since, &u.lastmod) {
                        (None, _) => true,
                        (Some(t), Some(l)) => l.value().unix_seconds() >= t,
                        (Some(_), None) => false,
                    };
                    if newer {
                        urls.push(u.loc.to_string());
                    }
                }
            }
            Event::Sitemap(s) => {
                if let mapwright_fetch::Outcome::Failed(e) = &s.outcome {
                    anyhow::bail!("{e}");
                }
            }
            _ => {}
        }
    }
    worker.await??;
    Ok(urls)
}
