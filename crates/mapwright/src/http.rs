//! Options shared by the commands that go on the network, and the runtime they run on.

/// HTTP settings of `discover`, `submit` and remote `read`.
#[derive(clap::Args, Debug, Clone)]
pub struct HttpArgs {
    /// User-Agent sent, and matched against robots.txt groups.
    #[arg(long, value_name = "UA", default_value = mapwright_fetch::DEFAULT_USER_AGENT)]
    pub user_agent: String,
    /// Seconds allowed for a whole request, body included.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub timeout: f64,
    /// Seconds allowed to connect.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Seconds allowed between two reads of a body (a server that drips).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub read_timeout: f64,
    /// Extra attempts after a 429 or 5xx answer (Retry-After is honoured).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,
    /// Refuse hosts that resolve to loopback, private or link-local addresses.
    #[arg(long)]
    pub deny_private_networks: bool,
}

impl HttpArgs {
    /// The fetch configuration these options describe.
    pub fn config(&self) -> anyhow::Result<mapwright_fetch::Config> {
        use mapwright_fetch::config::seconds;
        Ok(mapwright_fetch::Config {
            user_agent: self.user_agent.clone(),
            timeout: seconds("--timeout", self.timeout)?,
            connect_timeout: seconds("--connect-timeout", self.connect_timeout)?,
            read_timeout: seconds("--read-timeout", self.read_timeout)?,
            retries: self.retries,
            allow_private_networks: !self.deny_private_networks,
            ..mapwright_fetch::Config::default()
        })
    }
}

/// A multi-threaded runtime: the body tasks must run while the caller blocks on reading.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Whether SOURCE names an http(s) URL rather than a file (one test for the CLI and the
/// Python package: the fetch crate's).
pub use mapwright_fetch::remote::is_url;
