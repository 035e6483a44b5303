//! The DNS half of a domain property's proof: the TXT records at the domain, looked up through
//! hickory's resolver, and what they say about the token.
//!
//! A resolver is built for each look-up, so nothing is cached between checks: a record just
//! published (or just removed) is what the next "Verify now" sees, as far as the name servers
//! themselves see it. The name servers are the system's (`/etc/resolv.conf`) unless the
//! operator names others (`serve --dns-server`), which is also how the tests point the service
//! at a DNS server of their own on loopback.

use std::net::SocketAddr;
use std::time::Duration;

use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::{ResolveError, Resolver, TokioResolver};

/// What a TXT record must say: this prefix, then the property's token.
pub const RECORD_PREFIX: &str = "mapwright-site-verification=";

/// The TXT record's value for a token.
pub fn record_value(token: &str) -> String {
    format!("{RECORD_PREFIX}{token}")
}

/// Where the service asks.
#[derive(Debug, Clone)]
pub struct DnsConfig {
    /// The name servers asked (UDP, then TCP for a truncated answer); empty: the system's.
    pub servers: Vec<SocketAddr>,
    /// The wait for one server's answer (each server is tried twice).
    pub timeout: Duration,
}

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig { servers: Vec::new(), timeout: Duration::from_secs(3) }
    }
}

/// What a look-up of the TXT records at a name found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxtAnswer {
    /// The records' texts (a record of several strings joined, as RFC 7208 reads them).
    Records(Vec<String>),
    /// The name does not exist (NXDOMAIN).
    NoSuchName,
    /// The name exists and has no TXT record.
    NoRecords,
    /// No name server answered in time.
    Timeout,
    /// Anything else (refused, server failure, no name servers configured), in words.
    Failed(String),
}

/// The TXT records at `domain` (a name in normal form, without the trailing dot).
pub async fn txt_records(config: &DnsConfig, domain: &str) -> TxtAnswer {
    let resolver = match resolver(config) {
        Ok(resolver) => resolver,
        Err(e) => {
            tracing::warn!(error = %e, "the DNS configuration cannot be read");
            return TxtAnswer::Failed("the service's DNS configuration cannot be read".into());
        }
    };
    // Fully qualified: the search domains of resolv.conf are never appended.
    match resolver.txt_lookup(format!("{domain}.")).await {
        Ok(lookup) => TxtAnswer::Records(
            lookup
                .iter()
                .map(|txt| txt.txt_data().iter().map(|part| String::from_utf8_lossy(part)).collect::<String>())
                .collect(),
        ),
        Err(e) => classify(&e),
    }
}

/// A look-up's error as the owner can act on it.
fn classify(error: &ResolveError) -> TxtAnswer {
    if error.is_nx_domain() {
        return TxtAnswer::NoSuchName;
    }
    if error.is_no_records_found() {
        return TxtAnswer::NoRecords;
    }
    let timeout = error.proto().is_some_and(|p| matches!(p.kind(), hickory_resolver::proto::ProtoErrorKind::Timeout));
    if timeout {
        return TxtAnswer::Timeout;
    }
    tracing::debug!(%error, "TXT look-up failed");
    TxtAnswer::Failed(error.to_string())
}

/// A resolver without cache or hosts file, on the configured or the system's name servers.
fn resolver(config: &DnsConfig) -> Result<TokioResolver, ResolveError> {
    let mut builder = if config.servers.is_empty() {
        TokioResolver::builder_tokio()?
    } else {
        let mut servers = ResolverConfig::new();
        for &addr in &config.servers {
            servers.add_name_server(NameServerConfig::new(addr, Protocol::Udp));
            servers.add_name_server(NameServerConfig::new(addr, Protocol::Tcp));
        }
        Resolver::builder_with_config(servers, TokioConnectionProvider::default())
    };
    let options: &mut ResolverOpts = builder.options_mut();
    options.timeout = config.timeout;
    options.attempts = 2;
    options.cache_size = 0;
    options.use_hosts_file = ResolveHosts::Never;
    // Room for the many TXT records a domain often has (SPF, other services' tokens).
    options.edns0 = true;
    Ok(builder.build())
}

/// Whether the records hold the token: a record is the prefix (in any case) and the token,
/// blank space around it aside.
pub fn holds_token(records: &[String], token: &str) -> bool {
    !token.is_empty() && records.iter().any(|r| value_token(r) == Some(token))
}

/// The token of one of our records, or `None` for another service's.
fn value_token(record: &str) -> Option<&str> {
    let record = record.trim();
    let head = record.get(..RECORD_PREFIX.len())?;
    head.eq_ignore_ascii_case(RECORD_PREFIX).then(|| record[RECORD_PREFIX.len()..].trim())
}

/// The sentence that says why `answer` does not verify `domain` for `token`, or `None` when
/// it does.
pub fn refusal(domain: &str, token: &str, answer: &TxtAnswer) -> Option<String> {
    Some(match answer {
        TxtAnswer::Records(records) if holds_token(records, token) => return None,
        TxtAnswer::Records(records) => {
            let ours: Vec<&str> = records.iter().filter_map(|r| value_token(r)).collect();
            if ours.is_empty() {
                format!(
                    "{domain} has {} TXT record{}, none of them {RECORD_PREFIX}…: publish {}",
                    records.len(),
                    if records.len() == 1 { "" } else { "s" },
                    record_value(token)
                )
            } else {
                format!(
                    "{domain} has a {RECORD_PREFIX} record with another token ({}): this property's is {token}",
                    ours.join(", ")
                )
            }
        }
        TxtAnswer::NoRecords => format!("{domain} has no TXT record: publish {}", record_value(token)),
        TxtAnswer::NoSuchName => format!("{domain} does not exist in DNS (NXDOMAIN)"),
        TxtAnswer::Timeout => format!("no DNS server answered for {domain} in time; try again later"),
        TxtAnswer::Failed(why) => format!("the DNS look-up of {domain} failed: {why}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(texts: &[&str]) -> TxtAnswer {
        TxtAnswer::Records(texts.iter().map(|t| t.to_string()).collect())
    }

    #[test]
    fn the_record_holds_the_token() {
        for (texts, expected) in [
            (&["mapwright-site-verification=ab12"][..], true),
            (&["v=spf1 -all", " mapwright-site-verification=ab12 "], true),
            (&["MAPWRIGHT-SITE-VERIFICATION=ab12"], true),
            (&["mapwright-site-verification=ab123"], false),
            (&["mapwright-site-verification="], false),
            (&["ab12"], false),
            (&["google-site-verification=ab12"], false),
            (&[], false),
        ] {
            assert_eq!(
                holds_token(&texts.iter().map(|t| t.to_string()).collect::<Vec<_>>(), "ab12"),
                expected,
                "{texts:?}"
            );
        }
        assert!(!holds_token(&["mapwright-site-verification=".into()], ""));
    }

    #[test]
    fn refusals_say_why() {
        let check = |answer: TxtAnswer, expected: Option<&str>| {
            assert_eq!(refusal("example.com", "ab12", &answer).as_deref(), expected, "{answer:?}");
        };
        check(records(&["mapwright-site-verification=ab12"]), None);
        check(
            records(&["mapwright-site-verification=zz99"]),
            Some(
                "example.com has a mapwright-site-verification= record with another token (zz99): this property's is ab12",
            ),
        );
        check(
            records(&["v=spf1 -all"]),
            Some(
                "example.com has 1 TXT record, none of them mapwright-site-verification=…: publish mapwright-site-verification=ab12",
            ),
        );
        check(TxtAnswer::NoRecords, Some("example.com has no TXT record: publish mapwright-site-verification=ab12"));
        check(TxtAnswer::NoSuchName, Some("example.com does not exist in DNS (NXDOMAIN)"));
        check(TxtAnswer::Timeout, Some("no DNS server answered for example.com in time; try again later"));
    }
}
