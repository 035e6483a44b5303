//! mapwright-fetch: the consumer side of sitemaps over HTTP. Fetching with timeouts, retries
//! and limits applied while bytes arrive; robots.txt; discovery of every URL of a site;
//! live URL checks; incremental state; and submitting a sitemap (ping, IndexNow).
//!
//! Everything is async on tokio; the synchronous core reader runs on blocking threads over
//! a bounded channel of body chunks ([`body`]), so memory does not grow with file size.
#![deny(missing_docs)]

pub mod body;
pub mod check;
pub mod client;
pub mod config;
pub mod discover;
pub mod error;
pub mod oai;
pub mod remote;
pub mod robots;
#[cfg(feature = "arrow")]
pub mod rows;
pub mod site_list;
pub mod sitemap;
pub mod sites;
pub mod state;
pub mod submit;
pub mod webhook;

pub use body::{BodyReader, Received};
pub use client::{Fetched, Fetcher, Gate, Meta, Response, Validators};
pub use config::{Config, DEFAULT_USER_AGENT};
pub use discover::{DEFAULT_SITE_DEADLINE, DiscoverConfig, Discovery, Event, Outcome, SitemapStatus, Summary};
pub use error::Error;
pub use oai::{OaiPager, PagesStats};
pub use remote::{Opener, Remote, RemoteResolver, StrictScope};
pub use robots::{Robots, RobotsAnswer, RobotsCache};
pub use site_list::{SiteSummary, site_of};
pub use sitemap::{ReadReport, SitemapFetch, Visitor, read_remote, read_response};
pub use sites::{SiteEvent, run_sites};
pub use state::{Change, SitemapState, SitesMark, State};
