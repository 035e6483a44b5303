//! Discovery over many sites at once: each site runs through [`Discovery::run_site`], the one
//! discovery engine, with its own robots.txt cache, deduplication set and per-host clocks, all
//! dropped when the site is done; at most `hosts_in_flight` sites run at a time, fed from a
//! bounded channel, so memory does not grow with the list. The HTTP client (its connection
//! pool and TLS set-up) is shared.

use crate::discover::{DiscoverConfig, Discovery, Event, Summary};
use crate::{Error, Fetcher};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What a many-site discovery reports: the events of each site, tagged with it, then one
/// [`SiteEvent::Done`] per site, sent after every event of that site. `id` numbers the sites
/// in the order received, so a site listed twice is two runs that never mix.
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
/// or early when `events` is closed (the reader stopped listening).
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
    loop {
        if running.len() < limit {
            tokio::select! {
                site = sites.recv() => match site {
                    Some(site) => {
                        running.spawn(one_site(fetcher.clone(), config.clone(), next_id, site, events.clone()));
                        next_id += 1;
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
    let out_events = out.clone();
    let discovery = Discovery::new(fetcher, config);
    let run = discovery.run_site(&site, tx);
    let tag = site.clone();
    let forward = async move {
        while let Some(event) = rx.recv().await {
            if out_events.send(SiteEvent::Event { id, site: tag.clone(), event }).await.is_err() {
                return; // dropping `rx` stops the discovery
            }
        }
    };
    let (result, ()) = tokio::join!(run, forward);
    let _ = out.send(SiteEvent::Done { id, site, result }).await;
}
