//! Discovery over many sites at once: each site runs through [`Discovery::run_site`], the one
//! discovery engine, with its own robots.txt cache, deduplication set and per-host clocks, all
//! dropped when the site is done; at most `hosts_in_flight` sites run at a time, fed from a
//! bounded channel, so memory does not grow with the list. The HTTP client (its connection
//! pool and TLS set-up) is shared.
//!
//! A site listed again (the same origin: any URL of a site discovers the same sitemaps) is
//! not discovered again: it ends at once with [`Summary::duplicate`]. The sites seen are kept
//! as 64-bit hashes in two bounded generations (`SeenSites`), so memory stays bounded
//! whatever the list's length; a repeat further apart than that is discovered again.

use crate::discover::{DiscoverConfig, Discovery, Event, Prehashed, Summary};
use crate::{Error, Fetcher};
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// Sites remembered per generation of [`SeenSites`]: 900,000 hashes fill a table of 2^20
/// slots (about 9 MiB); with the previous generation, a repeat within 900,000 to 1,800,000
/// distinct sites of its first listing is caught, in at most about 19 MiB.
pub(crate) const SITES_REMEMBERED: usize = 900_000;

/// What a many-site discovery reports: the events of each site, tagged with it, then one
/// [`SiteEvent::Done`] per site, sent after every event of that site. `id` numbers the sites
/// in the order received; a site listed again gets only its `Done`, with
/// [`Summary::duplicate`].
#[derive(Debug)]
pub enum SiteEvent {
    /// An event of one site's discovery.
    Event {
        /// The site's number.
        id: u64,
        /// The site, as given to [`run_sites`].
        site: Arc<str>,
        /// The event.
        event: Event,
    },
    /// The site's discovery is over: nothing more of it follows.
    Done {
        /// The site's number.
        id: u64,
        /// The site.
        site: Arc<str>,
        /// Its totals, or why it could not start (an invalid URL).
        result: Result<Summary, Error>,
    },
}

/// Runs the discovery of every site received on `sites`, `hosts_in_flight` at a time, and
/// streams what they find to `events`. Returns when `sites` is closed and every site is done,
/// or early when `events` is closed (the reader stopped listening). Each site is bounded by
/// `config.site_deadline` (set one: see [`crate::DEFAULT_SITE_DEADLINE`]).
pub async fn run_sites(
    fetcher: Fetcher,
    config: DiscoverConfig,
    hosts_in_flight: usize,
    mut sites: mpsc::Receiver<Arc<str>>,
    events: mpsc::Sender<SiteEvent>,
) {
    let mut running = JoinSet::new();
    let limit = hosts_in_flight.max(1);
    let mut next_id = 0u64;
    let mut seen = SeenSites::new(SITES_REMEMBERED);
    loop {
        if running.len() < limit {
            tokio::select! {
                site = sites.recv() => match site {
                    Some(site) => {
                        let id = next_id;
                        next_id += 1;
                        if seen.insert(&site) {
                            running.spawn(one_site(fetcher.clone(), config.clone(), id, site, events.clone()));
                        } else {
                            let result = Ok(Summary { duplicate: true, ..Summary::default() });
                            if events.send(SiteEvent::Done { id, site, result }).await.is_err() {
                                return;
                            }
                        }
                        continue;
                    }
                    None => break,
                },
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        } else {
            running.join_next().await;
        }
        if events.is_closed() {
            return;
        }
    }
    while running.join_next().await.is_some() {}
}

/// One site: its own [`Discovery`] (so its robots.txt cache and dedup set go when it ends),
/// its events forwarded with the site's name, then `Done`.
async fn one_site(fetcher: Fetcher, config: DiscoverConfig, id: u64, site: Arc<str>, out: mpsc::Sender<SiteEvent>) {
    let (tx, mut rx) = mpsc::channel(4);
    let (finished, mut run_over) = oneshot::channel::<()>();
    let out_events = out.clone();
    let discovery = Discovery::new(fetcher, config);
    let run = async {
        let result = discovery.run_site(&site, tx).await;
        let _ = finished.send(());
        result
    };
    let tag = site.clone();
    let forward = async move {
        loop {
            // Every event of a run is queued by the time the run returns (its sends are
            // awaited); a reader a deadline left running may still hold a sender, and what it
            // would send no longer counts: forward what is queued, then stop.
            let event = tokio::select! {
                biased;
                event = rx.recv() => event,
                _ = &mut run_over => {
                    while let Ok(event) = rx.try_recv() {
                        if out_events.send(SiteEvent::Event { id, site: tag.clone(), event }).await.is_err() {
                            return;
                        }
                    }
                    return;
                }
            };
            let Some(event) = event else { return };
            if out_events.send(SiteEvent::Event { id, site: tag.clone(), event }).await.is_err() {
                return; // dropping `rx` stops the discovery
            }
        }
    };
    let (result, ()) = tokio::join!(run, forward);
    let _ = out.send(SiteEvent::Done { id, site, result }).await;
}

/// The sites a many-site run has seen, as xxh3-64 hashes of their origins, in two generations
/// of at most `per_generation` each: when the current one is full it becomes the previous one
/// (the older is dropped), so memory is bounded whatever the list's length.
pub(crate) struct SeenSites {
    current: HashSet<u64, BuildHasherDefault<Prehashed>>,
    previous: HashSet<u64, BuildHasherDefault<Prehashed>>,
    per_generation: usize,
}

impl SeenSites {
    /// An empty set that remembers between `per_generation` and twice that many sites.
    pub(crate) fn new(per_generation: usize) -> Self {
        SeenSites { current: HashSet::default(), previous: HashSet::default(), per_generation: per_generation.max(1) }
    }

    /// Whether `site` is new (and remembers it); false when its origin was seen.
    pub(crate) fn insert(&mut self, site: &str) -> bool {
        let h = xxhash_rust::xxh3::xxh3_64(site_key(site).as_bytes());
        if self.current.contains(&h) || self.previous.contains(&h) {
            return false;
        }
        if self.current.len() >= self.per_generation {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(h)
    }
}

/// What makes two lines of a list one site: the origin of an http(s) URL (discovery starts
/// from the origin's robots.txt whatever the path), else the line as written.
fn site_key(site: &str) -> std::borrow::Cow<'_, str> {
    match url::Url::parse(site.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u.origin().ascii_serialization().into(),
        _ => site.trim().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_its_origin() {
        let mut seen = SeenSites::new(10);
        assert!(seen.insert("https://example.com/"));
        assert!(!seen.insert("https://EXAMPLE.com:443/blog/"), "same origin");
        assert!(seen.insert("http://example.com/"), "another scheme is another origin");
        assert!(seen.insert("https://example.com:8443/"));
        assert!(seen.insert("not a url"));
        assert!(!seen.insert("  not a url "));
    }

    #[test]
    fn two_generations_bound_what_is_remembered() {
        let mut seen = SeenSites::new(3);
        for i in 0..3 {
            assert!(seen.insert(&format!("https://s{i}.example/")));
        }
        // The fourth starts a new generation: the first three are still the previous one.
        assert!(seen.insert("https://s3.example/"));
        assert!(!seen.insert("https://s0.example/"));
        for i in 4..6 {
            assert!(seen.insert(&format!("https://s{i}.example/")));
        }
        // The seventh starts another: s0..s2 are forgotten, s3..s5 remembered.
        assert!(seen.insert("https://s6.example/"));
        assert!(!seen.insert("https://s4.example/"));
        assert!(seen.insert("https://s1.example/"), "forgotten: discovered again");
        assert!(seen.current.len() + seen.previous.len() <= 6);
    }
}
