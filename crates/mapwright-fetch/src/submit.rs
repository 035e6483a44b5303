//! Announcing a sitemap: the classic ping (`ENDPOINT?sitemap=URL`) and IndexNow (POSTing
//! URL lists in batches, one batch per host, per the IndexNow protocol).

use crate::{DiscoverConfig, Discovery, Error, Event, Fetcher, Outcome, SiteSummary};
use serde::Serialize;

/// URLs per IndexNow request: the protocol's maximum.
pub const INDEXNOW_BATCH: usize = 10_000;

/// Sends `endpoint?sitemap=<sitemap_url URL-encoded>` and returns the HTTP status: a 200
/// means the ping was received, not that the sitemap is valid.
pub async fn ping(fetcher: &Fetcher, endpoint: &str, sitemap_url: &str) -> Result<u16, Error> {
    let mut url = fetcher.check_url(endpoint)?;
    url.query_pairs_mut().append_pair("sitemap", sitemap_url);
    let resp = fetcher
        .client()
        .get(url.clone())
        .send()
        .await
        .map_err(|e| Error::from_reqwest(url.as_str(), &e, fetcher.config()))?;
    Ok(resp.status().as_u16())
}

/// The key of an IndexNow submission.
#[derive(Clone, Debug)]
pub struct IndexNowKey {
    /// The key (8 to 128 characters of `[a-zA-Z0-9-]`).
    pub key: String,
    /// Where the key file is, when not at `https://host/KEY.txt`.
    pub key_location: Option<String>,
}

/// The answer to one IndexNow request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchResult {
    /// The host of the batch.
    pub host: String,
    /// URLs in it.
    pub urls: usize,
    /// The HTTP status (200 and 202 mean accepted; 400, 403, 422 and 429 mean refused).
    pub status: u16,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    host: &'a str,
    key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_location: Option<&'a str>,
    url_list: &'a [String],
}

/// Checks the key's form, as IndexNow requires it.
pub fn check_key(key: &str) -> Result<(), String> {
    if !(8..=128).contains(&key.len()) || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("IndexNow key {key:?} must be 8 to 128 characters of a-z, A-Z, 0-9 and -"));
    }
    Ok(())
}

/// POSTs `urls` to `endpoint` as JSON, grouped by host (a request may only name one) and in
/// batches of at most [`INDEXNOW_BATCH`]; returns each batch's status.
pub async fn indexnow(
    fetcher: &Fetcher,
    endpoint: &str,
    key: &IndexNowKey,
    urls: &[String],
) -> Result<Vec<BatchResult>, Error> {
    let endpoint = fetcher.check_url(endpoint)?;
    check_key(&key.key).map_err(|reason| Error::InvalidUrl { url: endpoint.to_string(), reason })?;
    let mut by_host: Vec<(String, Vec<String>)> = Vec::new();
    for u in urls {
        let host = url::Url::parse(u).ok().and_then(|p| p.host_str().map(str::to_string)).unwrap_or_default();
        match by_host.iter_mut().find(|(h, _)| *h == host) {
            Some((_, v)) => v.push(u.clone()),
            None => by_host.push((host, vec![u.clone()])),
        }
    }
    let mut out = Vec::new();
    for (host, list) in &by_host {
        for chunk in list.chunks(INDEXNOW_BATCH) {
            let body = Body { host, key: &key.key, key_location: key.key_location.as_deref(), url_list: chunk };
            let json = serde_json::to_vec(&body)
                .map_err(|e| Error::Http { url: endpoint.to_string(), message: e.to_string() })?;
            let resp = fetcher
                .client()
                .post(endpoint.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json; charset=utf-8")
                .body(json)
                .send()
                .await
                .map_err(|e| Error::from_reqwest(endpoint.as_str(), &e, fetcher.config()))?;
            out.push(BatchResult { host: host.clone(), urls: chunk.len(), status: resp.status().as_u16() });
        }
    }
    Ok(out)
}

/// Every URL `sitemap` gives (following an index, scope judged as discovery judges it), only
/// those with a lastmod at or after `since` (Unix seconds) when it is given: what `submit
/// --indexnow` sends. All or nothing: a sitemap that could not be read, even part-way, is an
/// error ([`Error::Incomplete`] for a fault after some entries), since an IndexNow list cut
/// short would be taken for the whole; sitemaps that give no URL at all are
/// [`Error::NoUrl`], with the reason discovery gives (none listed, all out of scope). An
/// empty list is returned only when URLs were found but none is as new as `since`.
pub async fn urls_to_submit(fetcher: &Fetcher, sitemap: &str, since: Option<i64>) -> Result<Vec<String>, Error> {
    let d = Discovery::new(fetcher.clone(), DiscoverConfig::default());
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let seeds = vec![sitemap.to_string()];
    let worker = tokio::spawn(async move { d.run_sitemaps(seeds, tx).await });
    let mut urls = Vec::new();
    let mut failed = None;
    while let Some(ev) = rx.recv().await {
        match ev {
            Event::Urls { urls: batch, .. } => {
                urls.extend(
                    batch
                        .into_iter()
                        .filter(|u| match (since, &u.lastmod) {
                            (None, _) => true,
                            (Some(t), Some(l)) => l.value().unix_seconds() >= t,
                            (Some(_), None) => false,
                        })
                        .map(|u| u.loc.to_string()),
                );
            }
            Event::Sitemap(s) => {
                let url = s.url.to_string();
                failed = match (s.outcome, s.error) {
                    (Outcome::Failed(e), _) => Some(e),
                    (_, Some(e)) => Some(Error::Incomplete { url, source: Box::new(e) }),
                    _ => continue,
                };
                break;
            }
            _ => {}
        }
    }
    if let Some(e) = failed {
        // The rest is not needed: stop fetching it.
        worker.abort();
        return Err(e);
    }
    let summary = worker.await.map_err(|e| Error::Http { url: sitemap.to_string(), message: e.to_string() })??;
    if summary.urls == 0 {
        let result = Ok(summary);
        let verdict = SiteSummary::of(sitemap, &result, false);
        let reason = verdict.error.unwrap_or_else(|| "the sitemaps list no URL".to_string());
        return Err(Error::NoUrl { url: sitemap.to_string(), reason });
    }
    Ok(urls)
}
