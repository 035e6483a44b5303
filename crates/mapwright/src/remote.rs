//! Remote sources for `read` and `validate`: the fetch crate's [`Opener`] (its `remote`
//! module is the one home of opening, resolving and scope-dropping over HTTP, shared with the
//! Python package) on a runtime of the command's own, and the `--vouched` flag.

use crate::http::runtime;
use mapwright_core::{Loc, Voucher};
use mapwright_fetch::{Fetcher, Opener};
use std::sync::Arc;

/// One runtime and one HTTP client for every remote source of a command: default HTTP
/// settings, with `max_bytes` (if given) as the limit on the wire too, and the pause between
/// an OAI-PMH repository's pages.
pub fn opener(max_bytes: Option<u64>, oai: &crate::cli::OaiArgs) -> anyhow::Result<Opener> {
    let mut config = mapwright_fetch::Config::default();
    oai.pause(&mut config);
    if let Some(b) = max_bytes {
        config.max_bytes = b;
    }
    Ok(Opener::new(Arc::new(runtime()?), Fetcher::new(config)?))
}

/// The voucher `--vouched[=ORIGIN]` gives a sitemap served at `url`: bare, the robots.txt of
/// `url`'s own origin; with a value, that of ORIGIN (cross-submission). `None` when the flag
/// is absent.
pub fn vouched_arg(flag: Option<&str>, url: Option<&Loc>) -> anyhow::Result<Option<Voucher>> {
    let Some(flag) = flag else { return Ok(None) };
    let origin = if flag.trim().is_empty() {
        match url {
            Some(u) => u.origin_str().to_string(),
            None => {
                anyhow::bail!("--vouched needs --url (whose host's robots.txt names the sitemap), or --vouched=ORIGIN")
            }
        }
    } else {
        let loc = Loc::parse(flag.trim()).map_err(|e| anyhow::anyhow!("--vouched={flag:?}: {e}"))?;
        loc.origin_str().to_string()
    };
    Ok(Some(Voucher::Robots(origin)))
}
