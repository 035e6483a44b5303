//! `mapwright submit`: announce a sitemap by ping, or its URLs by IndexNow.

use crate::cli::SubmitArgs;
use crate::http::runtime;
use anyhow::Context;
use mapwright_core::date::{LastmodParse, parse_lastmod};
use mapwright_fetch::Fetcher;
use mapwright_fetch::submit::{IndexNowKey, indexnow, ping, urls_to_submit};
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
        // All or nothing, and never an empty success: the fetch crate says why there is none.
        let urls = urls_to_submit(&fetcher, &args.sitemap, since).await?;
        if urls.is_empty() {
            // URLs were found, none as new as --since: nothing to do is the right answer.
            eprintln!("mapwright: no URL to submit (none newer than --since)");
            return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
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
