//! The use cases both faces call (the JSON API and the console): sites and "Verify now",
//! sitemaps and their submission, members and invitations, the failing-URL report and its
//! exports, alert settings and the unsubscribe link, webhook settings, domain properties.
//!
//! A face calls these, never another face; this layer may call a job's public handle (starting
//! a check run, verifying a site now) and the base, never a face.

pub mod alerts;
pub mod checks;
pub mod domains;
pub mod members;
pub mod sites;
pub mod submission;
pub mod webhooks;
