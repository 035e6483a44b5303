//! The settings of `mapwright serve`, from flags, `MAPWRIGHT_*` variables and a TOML file, in
//! that order of precedence, over the defaults. Clap reads flags and variables (a flag wins);
//! what neither gave comes from the file (`--config`), then the default.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

/// Every setting, resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    pub listen: SocketAddr,
    pub database: Option<String>,
    pub data_dir: PathBuf,
    pub secure_cookies: bool,
    pub allow_private_networks: bool,
    /// Serve no HTTP: a worker process (`--no-http`) beside web processes on one PostgreSQL.
    pub no_http: bool,
    /// Fetch workers in this process; 0 for a web process whose jobs run in worker processes.
    pub workers: usize,
    pub lease_seconds: i64,
    #[serde(serialize_with = "as_text")]
    pub poll_interval: Duration,
    #[serde(serialize_with = "as_text")]
    pub verify_interval: Duration,
    #[serde(serialize_with = "as_text")]
    pub shutdown_grace: Duration,
    /// Pings accepted per minute per client and per sitemap; `None` keeps the defaults.
    pub ping_limit_per_minute: Option<u32>,
    /// E-mail addresses of the admin accounts.
    pub admins: Vec<String>,
    /// The DNS servers of domain properties' TXT look-ups; empty: the system's.
    pub dns_servers: Vec<SocketAddr>,
    /// Sign-ups accepted per minute per client address; `None` keeps the default (10).
    pub sign_up_limit_per_minute: Option<u32>,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    #[serde(serialize_with = "as_text")]
    pub header_timeout: Duration,
    #[serde(serialize_with = "as_text")]
    pub idle_timeout: Duration,
    #[serde(serialize_with = "as_text")]
    pub request_timeout: Duration,
    /// Requests per second to one origin by the failing-URL checker.
    pub check_rate: f64,
    /// How long after a site's last full URL check the next starts.
    #[serde(serialize_with = "as_text")]
    pub check_interval: Duration,
    /// Fairness, quotas and retention (issue 14).
    #[serde(flatten)]
    pub sharing: Sharing,
    /// Sign-up and its mail.
    #[serde(flatten)]
    pub mail: Mail,
    /// What the service may send to one target, for every user together (issue 33).
    #[serde(flatten)]
    pub outbound: Outbound,
}

/// The outbound gate's budgets per target (`mapwright_server::outbound`), and who may read
/// `/metrics`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outbound {
    /// HTTP requests a second to one host (reads, checks, verification, webhooks together).
    pub outbound_host_rate: u32,
    /// HTTP requests a second to one resolved address, whatever the names pointing at it.
    pub outbound_address_rate: u32,
    /// DNS look-ups a minute of one name (domain properties).
    pub dns_lookups_per_minute: u32,
    /// Mails an hour to one address, every kind together.
    pub mail_per_recipient_per_hour: u32,
    /// The shortest time between two "Verify now" of one site (and of one domain property);
    /// a host gets two per such time, every site with it together.
    #[serde(serialize_with = "as_text")]
    pub verify_now_interval: Duration,
    /// `/metrics`: `public`, `off`, or `token:SECRET` (a scraper sends
    /// `Authorization: Bearer SECRET`).
    #[serde(serialize_with = "metrics_hidden")]
    pub metrics: String,
}

/// How strangers become users: sign-up confirmed by a mailed link, or accounts made by the
/// operator only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mail {
    /// `confirm` (the default): anyone may sign up, the account is made by following the link
    /// mailed to the address; `closed`: no sign-up (`serve user create` makes the accounts).
    pub sign_up: String,
    /// The SMTP server's URL; without it, mail is written to `DATA_DIR/outbox`.
    #[serde(serialize_with = "without_password")]
    pub smtp_url: Option<String>,
    /// The sender of the service's mail.
    pub mail_from: String,
    /// The address users reach the service at, which links in mail start with; `None`: the
    /// listening address.
    pub public_url: Option<String>,
}

/// How the service is shared among users: fairness of the workers, quotas, retention.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sharing {
    /// Jobs of one origin in flight at once.
    pub jobs_per_origin: i64,
    /// Jobs of one user in flight at once; below `workers`.
    pub jobs_per_user: i64,
    /// The shortest time between two fetches of one sitemap.
    #[serde(serialize_with = "as_text")]
    pub min_fetch_interval: Duration,
    /// URL rows one site may hold.
    pub url_quota: i64,
    /// Downloads (with their findings) kept per sitemap.
    pub keep_downloads: i64,
    /// How long pings are kept.
    #[serde(serialize_with = "as_text")]
    pub ping_retention: Duration,
    /// How long URLs that left every sitemap are kept.
    #[serde(serialize_with = "as_text")]
    pub removed_url_retention: Duration,
    /// How long a site that was never verified (and has no sitemap) is kept.
    #[serde(serialize_with = "as_text")]
    pub unverified_site_retention: Duration,
}

/// One layer of the settings, every key optional: the file's ([`FileSettings`], durations as
/// written) or the flags' and variables' ([`Given`], durations parsed). One struct for both, so
/// a new setting is one line here (the two layers used to repeat every key).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct Layer<D> {
    pub listen: Option<SocketAddr>,
    pub database: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub secure_cookies: Option<bool>,
    pub allow_private_networks: Option<bool>,
    pub no_http: Option<bool>,
    pub workers: Option<usize>,
    pub lease_seconds: Option<i64>,
    pub poll_interval: Option<D>,
    pub verify_interval: Option<D>,
    pub shutdown_grace: Option<D>,
    pub ping_limit_per_minute: Option<u32>,
    pub admins: Option<Vec<String>>,
    pub dns_servers: Option<Vec<SocketAddr>>,
    pub jobs_per_origin: Option<i64>,
    pub jobs_per_user: Option<i64>,
    pub min_fetch_interval: Option<D>,
    pub url_quota: Option<i64>,
    pub keep_downloads: Option<i64>,
    pub ping_retention: Option<D>,
    pub removed_url_retention: Option<D>,
    pub unverified_site_retention: Option<D>,
    pub sign_up_limit_per_minute: Option<u32>,
    pub max_connections: Option<usize>,
    pub max_connections_per_client: Option<usize>,
    pub header_timeout: Option<D>,
    pub idle_timeout: Option<D>,
    pub request_timeout: Option<D>,
    pub sign_up: Option<String>,
    pub smtp_url: Option<String>,
    pub mail_from: Option<String>,
    pub public_url: Option<String>,
    pub check_rate: Option<f64>,
    pub check_interval: Option<D>,
    pub outbound_host_rate: Option<u32>,
    pub outbound_address_rate: Option<u32>,
    pub dns_lookups_per_minute: Option<u32>,
    pub mail_per_recipient_per_hour: Option<u32>,
    pub verify_now_interval: Option<D>,
    pub metrics: Option<String>,
}

/// The settings file: the same names as the flags, with `_` for `-`.
pub type FileSettings = Layer<DurationValue>;

/// What the flags and variables gave (clap's half of the precedence).
pub type Given = Layer<Duration>;

/// A duration in a TOML file: seconds as a number, or text with a unit (`500ms`, `30s`,
/// `5m`, `24h`, `7d`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DurationValue {
    Seconds(u64),
    Text(String),
}

/// Zero seconds; only for [`Layer`]'s `Default` (a key not given is `None`, never this).
impl Default for DurationValue {
    fn default() -> Self {
        DurationValue::Seconds(0)
    }
}

impl DurationValue {
    fn get(&self, key: &str) -> anyhow::Result<Duration> {
        match self {
            DurationValue::Seconds(s) => Ok(Duration::from_secs(*s)),
            DurationValue::Text(t) => parse_duration(t).map_err(|e| anyhow::anyhow!("{key}: {e}")),
        }
    }
}

/// Reads the TOML file, saying which file and line is wrong.
pub fn read_file(path: &Path) -> anyhow::Result<FileSettings> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("{} is not a valid settings file", path.display()))
}

/// Flags and variables over the file over the defaults.
pub fn resolve(
    given: Given,
    file: FileSettings,
    default_data_dir: impl FnOnce() -> PathBuf,
) -> anyhow::Result<Settings> {
    let duration =
        |g: Option<Duration>, f: &Option<DurationValue>, key: &str, default: u64| -> anyhow::Result<Duration> {
            match (g, f) {
                (Some(d), _) => Ok(d),
                (None, Some(v)) => v.get(key),
                (None, None) => Ok(Duration::from_secs(default)),
            }
        };
    let settings = Settings {
        listen: given.listen.or(file.listen).unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
        database: given.database.or(file.database),
        data_dir: given.data_dir.or(file.data_dir).unwrap_or_else(default_data_dir),
        secure_cookies: given.secure_cookies.or(file.secure_cookies).unwrap_or(false),
        allow_private_networks: given.allow_private_networks.or(file.allow_private_networks).unwrap_or(false),
        no_http: given.no_http.or(file.no_http).unwrap_or(false),
        workers: given.workers.or(file.workers).unwrap_or(4),
        lease_seconds: given.lease_seconds.or(file.lease_seconds).unwrap_or(300),
        poll_interval: duration(given.poll_interval, &file.poll_interval, "poll_interval", 1)?,
        verify_interval: duration(given.verify_interval, &file.verify_interval, "verify_interval", 24 * 3600)?,
        shutdown_grace: duration(given.shutdown_grace, &file.shutdown_grace, "shutdown_grace", 10)?,
        ping_limit_per_minute: given.ping_limit_per_minute.or(file.ping_limit_per_minute),
        admins: given.admins.or(file.admins).unwrap_or_default(),
        dns_servers: given.dns_servers.or(file.dns_servers).unwrap_or_default(),
        sharing: Sharing {
            jobs_per_origin: given.jobs_per_origin.or(file.jobs_per_origin).unwrap_or(2),
            // One below the workers (at most 2) unless given.
            jobs_per_user: given
                .jobs_per_user
                .or(file.jobs_per_user)
                .unwrap_or_else(|| (given.workers.or(file.workers).unwrap_or(4) as i64 - 1).clamp(1, 2)),
            min_fetch_interval: duration(given.min_fetch_interval, &file.min_fetch_interval, "min_fetch_interval", 60)?,
            url_quota: given.url_quota.or(file.url_quota).unwrap_or(1_000_000),
            keep_downloads: given.keep_downloads.or(file.keep_downloads).unwrap_or(50),
            ping_retention: duration(given.ping_retention, &file.ping_retention, "ping_retention", 7 * DAY)?,
            removed_url_retention: duration(
                given.removed_url_retention,
                &file.removed_url_retention,
                "removed_url_retention",
                30 * DAY,
            )?,
            unverified_site_retention: duration(
                given.unverified_site_retention,
                &file.unverified_site_retention,
                "unverified_site_retention",
                7 * DAY,
            )?,
        },
        sign_up_limit_per_minute: given.sign_up_limit_per_minute.or(file.sign_up_limit_per_minute),
        max_connections: given.max_connections.or(file.max_connections).unwrap_or(1024),
        max_connections_per_client: given.max_connections_per_client.or(file.max_connections_per_client).unwrap_or(64),
        header_timeout: duration(given.header_timeout, &file.header_timeout, "header_timeout", 10)?,
        idle_timeout: duration(given.idle_timeout, &file.idle_timeout, "idle_timeout", 60)?,
        request_timeout: duration(given.request_timeout, &file.request_timeout, "request_timeout", 120)?,
        check_rate: given.check_rate.or(file.check_rate).unwrap_or(5.0),
        check_interval: duration(given.check_interval, &file.check_interval, "check_interval", 7 * DAY)?,
        mail: Mail {
            sign_up: given.sign_up.or(file.sign_up).unwrap_or_else(|| "confirm".into()),
            smtp_url: given.smtp_url.or(file.smtp_url).filter(|u| !u.is_empty()),
            mail_from: given.mail_from.or(file.mail_from).unwrap_or_else(|| "mapwright <mapwright@localhost>".into()),
            public_url: given.public_url.or(file.public_url).filter(|u| !u.is_empty()),
        },
        outbound: Outbound {
            outbound_host_rate: given.outbound_host_rate.or(file.outbound_host_rate).unwrap_or(10),
            outbound_address_rate: given.outbound_address_rate.or(file.outbound_address_rate).unwrap_or(20),
            dns_lookups_per_minute: given.dns_lookups_per_minute.or(file.dns_lookups_per_minute).unwrap_or(6),
            mail_per_recipient_per_hour: given
                .mail_per_recipient_per_hour
                .or(file.mail_per_recipient_per_hour)
                .unwrap_or(10),
            verify_now_interval: duration(
                given.verify_now_interval,
                &file.verify_now_interval,
                "verify_now_interval",
                30,
            )?,
            metrics: given.metrics.or(file.metrics).unwrap_or_else(|| "public".into()),
        },
    };
    let outbound = &settings.outbound;
    if outbound.outbound_host_rate == 0
        || outbound.outbound_address_rate == 0
        || outbound.dns_lookups_per_minute == 0
        || outbound.mail_per_recipient_per_hour == 0
    {
        bail!(
            "outbound_host_rate, outbound_address_rate, dns_lookups_per_minute and mail_per_recipient_per_hour must be \
             at least 1"
        );
    }
    if outbound.verify_now_interval < Duration::from_secs(1) {
        bail!("verify_now_interval must be at least a second");
    }
    let metrics = outbound.metrics.as_str();
    if !(metrics == "public" || metrics == "off" || metrics.strip_prefix("token:").is_some_and(|t| t.len() >= 16)) {
        bail!("metrics must be public, off or token:SECRET with a secret of 16 characters or more");
    }
    if !matches!(settings.mail.sign_up.as_str(), "confirm" | "closed") {
        bail!("sign_up must be confirm or closed, not {:?}", settings.mail.sign_up);
    }
    if let Some(public) = &settings.mail.public_url
        && !(public.starts_with("http://") || public.starts_with("https://"))
    {
        bail!("public_url must start with http:// or https://, not {public:?}");
    }
    let sharing = &settings.sharing;
    if sharing.jobs_per_origin < 1 || sharing.jobs_per_user < 1 || sharing.keep_downloads < 1 || sharing.url_quota < 1 {
        bail!("jobs_per_origin, jobs_per_user, keep_downloads and url_quota must be at least 1");
    }
    if settings.workers > 1 && sharing.jobs_per_user >= settings.workers as i64 {
        bail!(
            "jobs_per_user ({}) must be below workers ({}): one user's slow sites must not hold every worker",
            sharing.jobs_per_user,
            settings.workers
        );
    }
    if settings.workers > 256 {
        bail!("workers must be between 0 and 256, not {}", settings.workers);
    }
    if settings.no_http && settings.workers == 0 {
        bail!("no_http with workers = 0 leaves the process nothing to do: give it workers, or let it serve HTTP");
    }
    if settings.ping_limit_per_minute == Some(0) {
        bail!("ping_limit_per_minute must be at least 1");
    }
    let mut admins = Vec::new();
    for email in &settings.admins {
        match mapwright_store::normalize_email(email) {
            Ok(normal) => admins.push(normal),
            Err(e) => bail!("admin {email:?}: {e}"),
        }
    }
    let mut settings = Settings { admins, ..settings };
    settings.admins.dedup();
    if settings.sign_up_limit_per_minute == Some(0) {
        bail!("sign_up_limit_per_minute must be at least 1");
    }
    if settings.max_connections == 0 || settings.max_connections_per_client == 0 {
        bail!("max_connections and max_connections_per_client must be at least 1");
    }
    if settings.header_timeout.is_zero() || settings.idle_timeout.is_zero() || settings.request_timeout.is_zero() {
        bail!("header_timeout, idle_timeout and request_timeout must be more than zero");
    }
    if settings.lease_seconds < 1 {
        bail!("lease_seconds must be at least 1, not {}", settings.lease_seconds);
    }
    if settings.poll_interval.is_zero() || settings.verify_interval.is_zero() {
        bail!("poll_interval and verify_interval must be more than zero");
    }
    if !(settings.check_rate.is_finite() && settings.check_rate > 0.0 && settings.check_rate <= 1000.0) {
        bail!("check_rate must be more than 0 and at most 1000 requests a second, not {}", settings.check_rate);
    }
    if settings.check_interval < Duration::from_secs(60) {
        bail!("check_interval must be at least a minute");
    }
    Ok(settings)
}

/// Seconds in a day, for the defaults.
const DAY: u64 = 24 * 3600;

/// `500ms`, `30s`, `5m`, `24h`, `7d`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("{text:?} is not a duration such as 30s, 5m, 24h"))?;
    let seconds = match unit.trim() {
        "ms" => return Ok(Duration::from_millis(n)),
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => return Err(format!("{other:?} is not a unit of ms, s, m, h, d")),
    };
    n.checked_mul(seconds).map(Duration::from_secs).ok_or_else(|| format!("{text:?} is too long"))
}

/// An SMTP URL with its password, if any, hidden (`--print-settings` must not show it).
fn without_password<S: serde::Serializer>(url: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match url {
        None => s.serialize_none(),
        Some(url) => match url::Url::parse(url) {
            Ok(mut parsed) if parsed.password().is_some() => {
                let _ = parsed.set_password(Some("hidden"));
                s.serialize_str(parsed.as_str())
            }
            _ => s.serialize_str(url),
        },
    }
}

/// `metrics` with its token, if any, hidden (`--print-settings` must not show it).
fn metrics_hidden<S: serde::Serializer>(metrics: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if metrics.starts_with("token:") { "token:hidden" } else { metrics })
}

/// A duration as the shortest text `parse_duration` reads back.
fn as_text<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    let text = if d.subsec_millis() != 0 || d.as_secs() == 0 {
        format!("{}ms", d.as_millis())
    } else {
        let secs = d.as_secs();
        match secs {
            _ if secs % 86_400 == 0 => format!("{}d", secs / 86_400),
            _ if secs % 3600 == 0 => format!("{}h", secs / 3600),
            _ if secs % 60 == 0 => format!("{}m", secs / 60),
            _ => format!("{secs}s"),
        }
    };
    s.serialize_str(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert!(parse_duration("5 weeks").is_err());
        assert!(parse_duration("h").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }

    #[test]
    fn flags_and_variables_over_the_file_over_the_defaults() {
        let file: FileSettings = toml::from_str(
            "workers = 2\nlease_seconds = 60\npoll_interval = \"250ms\"\nverify_interval = 3600\nsecure_cookies = true\n",
        )
        .unwrap();
        let given = Given { workers: Some(8), secure_cookies: Some(false), ..Given::default() };
        let s = resolve(given, file, || PathBuf::from("/data")).unwrap();
        assert_eq!(s.workers, 8, "given wins over the file");
        assert!(!s.secure_cookies, "an explicit false wins too");
        assert_eq!(s.lease_seconds, 60, "the file wins over the default");
        assert_eq!(s.poll_interval, Duration::from_millis(250));
        assert_eq!(s.verify_interval, Duration::from_secs(3600));
        assert_eq!(s.shutdown_grace, Duration::from_secs(10), "the default");
        assert_eq!(s.data_dir, PathBuf::from("/data"));
        assert_eq!(s.listen.to_string(), "127.0.0.1:8080");
        assert!(!s.allow_private_networks);
    }

    #[test]
    fn sharing_settings() {
        let s = resolve(Given::default(), FileSettings::default(), PathBuf::new).unwrap();
        let want = Sharing {
            jobs_per_origin: 2,
            jobs_per_user: 2,
            min_fetch_interval: Duration::from_secs(60),
            url_quota: 1_000_000,
            keep_downloads: 50,
            ping_retention: Duration::from_secs(7 * DAY),
            removed_url_retention: Duration::from_secs(30 * DAY),
            unverified_site_retention: Duration::from_secs(7 * DAY),
        };
        assert_eq!(s.sharing, want, "the defaults");
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("min_fetch_interval = \"1m\"") && text.contains("url_quota = 1000000"), "{text}");

        let file: FileSettings = toml::from_str(
            "workers = 2\nmin_fetch_interval = \"5m\"\nurl_quota = 10\nkeep_downloads = 3\nping_retention = \"1d\"\n",
        )
        .unwrap();
        let s = resolve(Given::default(), file, PathBuf::new).unwrap();
        assert_eq!(s.sharing.jobs_per_user, 1, "one below two workers");
        assert_eq!(s.sharing.min_fetch_interval, Duration::from_secs(300));
        assert_eq!((s.sharing.url_quota, s.sharing.keep_downloads), (10, 3));
        assert_eq!(s.sharing.ping_retention, Duration::from_secs(DAY));

        let hog = Given { workers: Some(4), jobs_per_user: Some(4), ..Given::default() };
        let err = resolve(hog, FileSettings::default(), PathBuf::new).unwrap_err().to_string();
        assert!(err.contains("jobs_per_user"), "{err}");
        let zero = Given { url_quota: Some(0), ..Given::default() };
        assert!(resolve(zero, FileSettings::default(), PathBuf::new).is_err());
    }

    #[test]
    fn check_rate_and_interval() {
        let s = resolve(Given::default(), FileSettings::default(), PathBuf::new).unwrap();
        assert_eq!((s.check_rate, s.check_interval), (5.0, Duration::from_secs(7 * DAY)), "the defaults");
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("check_rate = 5.0") && text.contains("check_interval = \"7d\""), "{text}");
        let file: FileSettings = toml::from_str("check_rate = 0.5\ncheck_interval = \"1d\"\n").unwrap();
        let given = Given { check_rate: Some(20.0), ..Given::default() };
        let s = resolve(given, file, PathBuf::new).unwrap();
        assert_eq!((s.check_rate, s.check_interval), (20.0, Duration::from_secs(DAY)));
        for bad in [0.0, -1.0, f64::NAN, 1e9] {
            let given = Given { check_rate: Some(bad), ..Given::default() };
            let err = resolve(given, FileSettings::default(), PathBuf::new).unwrap_err().to_string();
            assert!(err.contains("check_rate"), "{bad}: {err}");
        }
        let given = Given { check_interval: Some(Duration::from_secs(1)), ..Given::default() };
        assert!(resolve(given, FileSettings::default(), PathBuf::new).is_err());
    }

    #[test]
    fn outbound_budgets_and_metrics() {
        let s = resolve(Given::default(), FileSettings::default(), PathBuf::new).unwrap();
        let want = Outbound {
            outbound_host_rate: 10,
            outbound_address_rate: 20,
            dns_lookups_per_minute: 6,
            mail_per_recipient_per_hour: 10,
            verify_now_interval: Duration::from_secs(30),
            metrics: "public".into(),
        };
        assert_eq!(s.outbound, want, "the defaults");
        let file: FileSettings =
            toml::from_str("outbound_host_rate = 2\nverify_now_interval = \"2m\"\nmetrics = \"off\"\n").unwrap();
        let given =
            Given { outbound_host_rate: Some(3), metrics: Some("token:0123456789abcdef".into()), ..Given::default() };
        let s = resolve(given, file, PathBuf::new).unwrap();
        assert_eq!(s.outbound.outbound_host_rate, 3, "given wins");
        assert_eq!(s.outbound.verify_now_interval, Duration::from_secs(120));
        assert_eq!(s.outbound.metrics, "token:0123456789abcdef");
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("metrics = \"token:hidden\"") && !text.contains("0123456789abcdef"), "{text}");
        for bad in [
            Given { outbound_host_rate: Some(0), ..Given::default() },
            Given { mail_per_recipient_per_hour: Some(0), ..Given::default() },
            Given { verify_now_interval: Some(Duration::ZERO), ..Given::default() },
            Given { metrics: Some("open".into()), ..Given::default() },
            Given { metrics: Some("token:short".into()), ..Given::default() },
        ] {
            assert!(resolve(bad.clone(), FileSettings::default(), PathBuf::new).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_files_and_values_are_refused() {
        assert!(toml::from_str::<FileSettings>("wokers = 2").is_err(), "unknown keys are an error");
        let file: FileSettings = toml::from_str("poll_interval = \"soon\"").unwrap();
        let err = resolve(Given::default(), file, PathBuf::new).unwrap_err().to_string();
        assert!(err.contains("poll_interval"), "{err}");
        let many = Given { workers: Some(257), ..Given::default() };
        assert!(resolve(many, FileSettings::default(), PathBuf::new).is_err());
        let idle = Given { workers: Some(0), no_http: Some(true), ..Given::default() };
        let err = resolve(idle, FileSettings::default(), PathBuf::new).unwrap_err().to_string();
        assert!(err.contains("nothing to do"), "{err}");
    }

    #[test]
    fn web_and_worker_roles() {
        let web = Given { workers: Some(0), ..Given::default() };
        let s = resolve(web, FileSettings::default(), PathBuf::new).unwrap();
        assert_eq!((s.workers, s.no_http), (0, false), "a web process leases nothing");
        let file: FileSettings = toml::from_str("no_http = true\nworkers = 8\n").unwrap();
        let s = resolve(Given::default(), file, PathBuf::new).unwrap();
        assert_eq!((s.workers, s.no_http), (8, true), "a worker process from the file");
        assert!(toml::to_string(&s).unwrap().contains("no_http = true"));
    }
}
