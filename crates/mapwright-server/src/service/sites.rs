//! Sites, what the JSON API and the console share: "Verify now" is the re-check job's own path
//! ([`crate::jobs::recheck::verify_now`]), so a site is verified the same way by a click and by
//! the periodic re-check; a site just added follows its owner's domain properties
//! ([`crate::service::domains::after_site_added`]).

pub use crate::jobs::recheck::verify_now;
pub use crate::service::domains::after_site_added;
