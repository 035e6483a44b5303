//! A stand-in for the scheduler in the end-to-end test until it lands on this branch: leases
//! due sitemaps, reads them through the fetch layer, and stores the download, its findings and
//! its URLs, as the scheduler does.

use std::ops::ControlFlow;
use std::time::Duration;

use mapwright_core::{Entry, Finding, Position, ReadOptions};
use mapwright_fetch::{SitemapFetch, Visitor, read_remote};
use mapwright_server::AppState;
use mapwright_store::{DownloadRecord, FindingRecord, UrlRecord};
use tokio::task::JoinHandle;

#[derive(Default)]
struct Collect {
    urls: Vec<UrlRecord>,
    findings: Vec<FindingRecord>,
}

impl Visitor for Collect {
    fn entry(&mut self, entry: Entry, _: Position) -> ControlFlow<()> {
        if let Entry::Url(u) = entry {
            self.urls.push(UrlRecord { loc: u.loc.to_string(), lastmod: None, changefreq: None, priority: None });
        }
        ControlFlow::Continue(())
    }

    fn finding(&mut self, f: Finding) {
        self.findings.push(FindingRecord {
            rule: f.rule.as_str().to_owned(),
            severity: f.severity().as_str().to_owned(),
            line: f.position.map(|p| i64::from(p.line)),
            col: f.position.map(|p| i64::from(p.column)),
            loc: f.loc.clone(),
            message: f.message.clone(),
        });
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

pub fn spawn(state: AppState) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let leased = state.store.lease_due_sitemaps("e2e", now(), 10, 60).await.unwrap();
            for l in leased {
                let started = now();
                let outcome =
                    read_remote(&state.fetcher, &l.url, None, ReadOptions::default(), Collect::default()).await;
                let mut record = DownloadRecord { downloaded_at: now(), ..DownloadRecord::default() };
                let mut urls = Vec::new();
                match outcome {
                    Ok((SitemapFetch::Read(report), collect)) => {
                        record.http_status = Some(i64::from(report.meta.status));
                        record.url_count = collect.urls.len() as i64;
                        record.error = report.error.map(|e| e.to_string());
                        let errors = collect.findings.iter().any(|f| f.severity == "error");
                        let warnings = collect.findings.iter().any(|f| f.severity == "warning");
                        record.status = match (&record.error, errors, warnings) {
                            (Some(_), ..) => "failed",
                            (None, true, _) => "errors",
                            (None, false, true) => "warnings",
                            _ => "ok",
                        }
                        .into();
                        record.findings = collect.findings;
                        urls = collect.urls;
                    }
                    Ok((SitemapFetch::NotModified(_), _)) => record.status = "unchanged".into(),
                    Err(e) => {
                        record.status = "failed".into();
                        record.error = Some(e.to_string());
                    }
                }
                record.duration_ms = (now() - started) * 1000;
                state.store.upsert_urls(l.site_id, l.id, &urls, record.downloaded_at).await.unwrap();
                state.store.complete("e2e", l.id, &record, now() + 3600).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}
