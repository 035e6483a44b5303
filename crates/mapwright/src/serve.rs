//! `mapwright serve`: resolves the settings, opens the store, runs the scheduler's workers
//! beside the axum app, and on a signal stops both: no new leases, jobs in flight get the
//! grace period, the rest are released.

mod accounts;
mod settings;
mod sole;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mapwright_server::{AppState, Limits, app, grant_admins, jobs, listen};

pub use settings::Settings;

/// Durations on the command line: `500ms`, `30s`, `5m`, `24h`, `7d`, or seconds.
fn duration_arg(text: &str) -> Result<Duration, String> {
    settings::parse_duration(text)
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every setting can also come from a MAPWRIGHT_* environment variable (shown with each flag) or \
a TOML file given by --config, with the flag's name in snake_case (workers = 8, poll_interval = \"2s\"). \
A flag wins over a variable, a variable over the file, the file over the default.\n\n\
Examples:\n  mapwright serve\n  mapwright serve --listen 0.0.0.0:8080 --data-dir /var/lib/mapwright\n  \
mapwright serve --database postgres://mapwright@db.internal/mapwright --secure-cookies --workers 8\n  \
mapwright serve --database postgres://mapwright@db.internal/mapwright --workers 0     (a web process)\n  \
mapwright serve --database postgres://mapwright@db.internal/mapwright --no-http       (a worker process)\n  \
MAPWRIGHT_WORKERS=2 mapwright serve --config /etc/mapwright/serve.toml\n\n\
Processes: on PostgreSQL any number of web processes (--workers 0) and worker processes (--no-http) \
share the work as one service (give the workers the same --jobs-per-user, --jobs-per-origin and \
--min-fetch-interval). On SQLite one process serves, web and workers in one: a second `serve` on the same \
file is refused.\n\n\
Logs go to standard error; set RUST_LOG (e.g. RUST_LOG=mapwright_server=debug) for more."
)]
pub struct ServeArgs {
    /// A TOML file of settings (see below).
    #[arg(long, global = true, env = "MAPWRIGHT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address and port to listen on (port 0 picks a free one; the address is logged)
    /// [default: 127.0.0.1:8080].
    #[arg(long, env = "MAPWRIGHT_LISTEN", value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// A PostgreSQL URL (postgres://...) or an SQLite one (sqlite://FILE); without it, an
    /// SQLite file in the data directory. Several servers may share one PostgreSQL database.
    #[arg(long, global = true, env = "MAPWRIGHT_DATABASE", value_name = "URL")]
    pub database: Option<String>,
    /// Where the SQLite database lives [default: $XDG_DATA_HOME/mapwright, or
    /// ~/.local/share/mapwright].
    #[arg(long, global = true, env = "MAPWRIGHT_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Mark session cookies Secure: use when clients reach the service over HTTPS.
    #[arg(long, env = "MAPWRIGHT_SECURE_COOKIES", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub secure_cookies: Option<bool>,
    /// Let outbound fetches (sitemaps, robots.txt, verification) reach loopback, private and
    /// link-local addresses. Off by default: users must not make the service fetch from its
    /// own network. For tests and for sites on the service's own network.
    #[arg(long, env = "MAPWRIGHT_ALLOW_PRIVATE_NETWORKS", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub allow_private_networks: Option<bool>,
    /// Fetch workers in this process; 0 makes a web process that fetches nothing, its jobs run
    /// by worker processes (--no-http) on the same PostgreSQL database [default: 4].
    #[arg(long, env = "MAPWRIGHT_WORKERS", value_name = "N")]
    pub workers: Option<usize>,
    /// Serve no HTTP: a worker process that only works in the background (downloads, the
    /// verification re-check, retention, the failing-URLs checks), beside web processes
    /// (--workers 0) on the same PostgreSQL database; any number of each may run. --listen and the web settings are then unused. On SQLite one
    /// process serves: use the default, web and workers in one.
    #[arg(long, env = "MAPWRIGHT_NO_HTTP", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub no_http: Option<bool>,
    /// How long a worker's lease on a sitemap holds; after it, a crashed worker's job runs
    /// again [default: 300].
    #[arg(long, env = "MAPWRIGHT_LEASE_SECONDS", value_name = "SECONDS")]
    pub lease_seconds: Option<i64>,
    /// How long an idle worker waits before looking for due sitemaps again; a ping or a
    /// resubmit wakes it at once [default: 1s].
    #[arg(long, env = "MAPWRIGHT_POLL_INTERVAL", value_name = "DURATION", value_parser = duration_arg)]
    pub poll_interval: Option<Duration>,
    /// How often each site's verification is checked again (lost when the proof is gone)
    /// [default: 24h].
    #[arg(long, env = "MAPWRIGHT_VERIFY_INTERVAL", value_name = "DURATION", value_parser = duration_arg)]
    pub verify_interval: Option<Duration>,
    /// On SIGTERM or Ctrl-C, how long downloads in flight may take to finish before their
    /// leases are given back [default: 10s].
    #[arg(long, env = "MAPWRIGHT_SHUTDOWN_GRACE", value_name = "DURATION", value_parser = duration_arg)]
    pub shutdown_grace: Option<Duration>,
    /// Print the settings in effect (as TOML) and exit.
    #[arg(long)]
    pub print_settings: bool,
    /// Pings accepted per minute, per client address and per sitemap URL [default: 60 per
    /// client, 6 per sitemap]; raise it for a load test from one address.
    #[arg(long, env = "MAPWRIGHT_PING_LIMIT_PER_MINUTE", value_name = "N")]
    pub ping_limit_per_minute: Option<u32>,
    /// Downloads of one origin in flight at once, in all processes sharing the database
    /// [default: 2].
    #[arg(long, env = "MAPWRIGHT_JOBS_PER_ORIGIN", value_name = "N")]
    pub jobs_per_origin: Option<i64>,
    /// Downloads of one user's sites in flight at once, in all processes; below --workers, so
    /// that one user's slow sites never hold every worker [default: 2, or workers - 1].
    #[arg(long, env = "MAPWRIGHT_JOBS_PER_USER", value_name = "N")]
    pub jobs_per_user: Option<i64>,
    /// The shortest time between two downloads of one sitemap, however often it is pinged or
    /// resubmitted [default: 60s].
    #[arg(long, env = "MAPWRIGHT_MIN_FETCH_INTERVAL", value_name = "DURATION", value_parser = duration_arg)]
    pub min_fetch_interval: Option<Duration>,
    /// URLs one site may hold (removed ones count until they expire); new URLs past it are not
    /// stored and the download says so [default: 1000000].
    #[arg(long, env = "MAPWRIGHT_URL_QUOTA", value_name = "N")]
    pub url_quota: Option<i64>,
    /// Downloads (with their findings) kept per sitemap [default: 50].
    #[arg(long, env = "MAPWRIGHT_KEEP_DOWNLOADS", value_name = "N")]
    pub keep_downloads: Option<i64>,
    /// How long ping records are kept [default: 7d].
    #[arg(long, env = "MAPWRIGHT_PING_RETENTION", value_name = "DURATION", value_parser = duration_arg)]
    pub ping_retention: Option<Duration>,
    /// How long URLs that left every sitemap are kept [default: 30d].
    #[arg(long, env = "MAPWRIGHT_REMOVED_URL_RETENTION", value_name = "DURATION", value_parser = duration_arg)]
    pub removed_url_retention: Option<Duration>,
    /// How long a site never verified, with no sitemap, is kept [default: 7d].
    #[arg(long, env = "MAPWRIGHT_UNVERIFIED_SITE_RETENTION", value_name = "DURATION", value_parser = duration_arg)]
    pub unverified_site_retention: Option<Duration>,
    /// A DNS server (ADDR:PORT) that looks up the TXT records of domain properties, instead of
    /// the name servers of /etc/resolv.conf; repeatable, comma-separated in the variable.
    #[arg(long = "dns-server", env = "MAPWRIGHT_DNS_SERVERS", value_name = "ADDR:PORT", value_delimiter = ',')]
    pub dns_servers: Vec<SocketAddr>,
    /// Make the existing account with this e-mail an admin, who sees and changes every user's
    /// sites; granted at start only, never by a sign-up (sign up first, then restart); repeatable,
    /// comma-separated in the variable.
    #[arg(long = "admin", env = "MAPWRIGHT_ADMINS", value_name = "EMAIL", value_delimiter = ',')]
    pub admins: Vec<String>,
    /// Sign-ups accepted per minute per client address [default: 10]; raise it for a load test
    /// from one address.
    #[arg(long, env = "MAPWRIGHT_SIGN_UP_LIMIT_PER_MINUTE", value_name = "N")]
    pub sign_up_limit_per_minute: Option<u32>,
    /// Connections open at once; at the cap a new one replaces the one idle the longest
    /// [default: 1024, lowered to fit the open-file limit].
    #[arg(long, env = "MAPWRIGHT_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Connections open at once from one client (an IPv4 address, an IPv6 /64); at it, the
    /// client's own connection idle the longest gives way. Behind a reverse proxy every
    /// connection comes from the proxy: raise it to --max-connections there [default: 64].
    #[arg(long, env = "MAPWRIGHT_MAX_CONNECTIONS_PER_CLIENT", value_name = "N")]
    pub max_connections_per_client: Option<usize>,
    /// Time a client has to send a request's headers, also the HTTP/1.1 keep-alive idle time
    /// and the longest pause inside a request body [default: 10s].
    #[arg(long, env = "MAPWRIGHT_HEADER_TIMEOUT", value_name = "DURATION", value_parser = duration_arg)]
    pub header_timeout: Option<Duration>,
    /// A connection with no request in flight for this long is closed [default: 60s].
    #[arg(long, env = "MAPWRIGHT_IDLE_TIMEOUT", value_name = "DURATION", value_parser = duration_arg)]
    pub idle_timeout: Option<Duration>,
    /// Time to read a request and make its response (408 after) [default: 120s].
    #[arg(long, env = "MAPWRIGHT_REQUEST_TIMEOUT", value_name = "DURATION", value_parser = duration_arg)]
    pub request_timeout: Option<Duration>,
    /// Who may make an account: `confirm`, anyone, through a link mailed to the address (a
    /// sign-up never tells whether an address has an account); `closed`, nobody but the
    /// operator (`serve user create`) [default: confirm].
    #[arg(long, env = "MAPWRIGHT_SIGN_UP", value_name = "MODE", value_parser = ["confirm", "closed"])]
    pub sign_up: Option<String>,
    /// The SMTP server that sends the sign-up links: smtp://USER:PASSWORD@HOST:PORT (user,
    /// password and port optional; ?tls=required for STARTTLS), or smtps://... for TLS from the
    /// start. Without it, each
    /// message is written as an .eml file to DATA_DIR/outbox, where the operator reads it.
    #[arg(long, env = "MAPWRIGHT_SMTP_URL", value_name = "URL")]
    pub smtp_url: Option<String>,
    /// The sender of the service's mail, an address or a name with the address in angle
    /// brackets; by default the address mapwright at localhost, named mapwright.
    #[arg(long, env = "MAPWRIGHT_MAIL_FROM", value_name = "MAILBOX")]
    pub mail_from: Option<String>,
    /// The address users reach the service at (its https address, behind a proxy), which links in
    /// mail start with [default: http:// and the listening address].
    #[arg(long, env = "MAPWRIGHT_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// Requests per second to one origin when checking a site's listed URLs (the failing-URL
    /// report), in all processes; robots.txt's Crawl-delay wins when slower [default: 5].
    #[arg(long, env = "MAPWRIGHT_CHECK_RATE", value_name = "PER_SECOND")]
    pub check_rate: Option<f64>,
    /// How long after a site's last full check of its URLs the next starts [default: 7d].
    #[arg(long, env = "MAPWRIGHT_CHECK_INTERVAL", value_name = "DURATION", value_parser = duration_arg)]
    pub check_interval: Option<Duration>,
    /// HTTP requests a second the service sends to one host, for every user and process
    /// together: sitemap reads, URL checks, verification, webhook deliveries [default: 10].
    #[arg(long, env = "MAPWRIGHT_OUTBOUND_HOST_RATE", value_name = "PER_SECOND")]
    pub outbound_host_rate: Option<u32>,
    /// HTTP requests a second to one resolved address, whatever the names that point at it
    /// [default: 20].
    #[arg(long, env = "MAPWRIGHT_OUTBOUND_ADDRESS_RATE", value_name = "PER_SECOND")]
    pub outbound_address_rate: Option<u32>,
    /// DNS look-ups a minute of one name (domain properties' TXT records) [default: 6].
    #[arg(long, env = "MAPWRIGHT_DNS_LOOKUPS_PER_MINUTE", value_name = "N")]
    pub dns_lookups_per_minute: Option<u32>,
    /// Mails an hour to one address, every kind together: invitations, alerts, account mail,
    /// webhook notices [default: 10].
    #[arg(long, env = "MAPWRIGHT_MAIL_PER_RECIPIENT_PER_HOUR", value_name = "N")]
    pub mail_per_recipient_per_hour: Option<u32>,
    /// The shortest time between two "Verify now" of one site or domain property; one host
    /// gets two per such time, every site with it together [default: 30s].
    #[arg(long, env = "MAPWRIGHT_VERIFY_NOW_INTERVAL", value_name = "DURATION", value_parser = duration_arg)]
    pub verify_now_interval: Option<Duration>,
    /// Who may read /metrics: `public`, `off`, or `token:SECRET` (sent by the scraper as
    /// `Authorization: Bearer SECRET`; give it through the variable or the file, where no
    /// process list shows it) [default: public].
    #[arg(long, env = "MAPWRIGHT_METRICS", value_name = "ACCESS")]
    pub metrics: Option<String>,
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
}

/// What `serve` does instead of serving: the operator's account commands, on the database of
/// the same settings (`--database`, `--data-dir`, `--config`).
#[derive(clap::Subcommand, Debug)]
pub enum ServeCommand {
    /// Accounts made by the operator: the password is read from standard input.
    #[command(subcommand)]
    User(UserCommand),
    /// Admin accounts, who see and change every user's sites.
    #[command(subcommand)]
    Admin(AdminCommand),
}

/// `serve user ...`.
#[derive(clap::Subcommand, Debug)]
pub enum UserCommand {
    /// Makes an account (no mail needed), its password read from standard input (asked for
    /// on a terminal, without echo).
    #[command(
        after_help = "Example:\n  printf '%s\\n' 'a long passphrase' | mapwright serve --data-dir /var/lib/mapwright user create ann@example.com"
    )]
    Create {
        /// The account's e-mail address.
        email: String,
        /// Make it an admin.
        #[arg(long)]
        admin: bool,
    },
    /// Sets a new password for an existing account (a user locked out, on a server that sends no
    /// mail), read from standard input like `create`'s; every session of the account ends.
    #[command(
        after_help = "Example:\n  printf '%s\\n' 'a new long passphrase' | mapwright serve --data-dir /var/lib/mapwright user password ann@example.com"
    )]
    Password {
        /// The account's e-mail address.
        email: String,
    },
}

/// `serve admin ...`.
#[derive(clap::Subcommand, Debug)]
pub enum AdminCommand {
    /// Makes an admin account, its password read from standard input; an account that exists
    /// already is made an admin (no password asked). The safe way to the first admin: a sign-up
    /// never makes one.
    Create {
        /// The account's e-mail address.
        email: String,
    },
}

impl ServeArgs {
    /// The settings in effect: flags and variables, then the file, then the defaults.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        let file = match &self.config {
            Some(path) => settings::read_file(path)?,
            None => settings::FileSettings::default(),
        };
        let given = settings::Given {
            listen: self.listen,
            database: self.database.clone(),
            data_dir: self.data_dir.clone(),
            secure_cookies: self.secure_cookies,
            allow_private_networks: self.allow_private_networks,
            no_http: self.no_http,
            workers: self.workers,
            lease_seconds: self.lease_seconds,
            poll_interval: self.poll_interval,
            verify_interval: self.verify_interval,
            shutdown_grace: self.shutdown_grace,
            ping_limit_per_minute: self.ping_limit_per_minute,
            admins: (!self.admins.is_empty()).then(|| self.admins.clone()),
            dns_servers: (!self.dns_servers.is_empty()).then(|| self.dns_servers.clone()),
            jobs_per_origin: self.jobs_per_origin,
            jobs_per_user: self.jobs_per_user,
            min_fetch_interval: self.min_fetch_interval,
            url_quota: self.url_quota,
            keep_downloads: self.keep_downloads,
            ping_retention: self.ping_retention,
            removed_url_retention: self.removed_url_retention,
            unverified_site_retention: self.unverified_site_retention,
            sign_up_limit_per_minute: self.sign_up_limit_per_minute,
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
            request_timeout: self.request_timeout,
            sign_up: self.sign_up.clone(),
            smtp_url: self.smtp_url.clone(),
            mail_from: self.mail_from.clone(),
            public_url: self.public_url.clone(),
            check_rate: self.check_rate,
            check_interval: self.check_interval,
            outbound_host_rate: self.outbound_host_rate,
            outbound_address_rate: self.outbound_address_rate,
            dns_lookups_per_minute: self.dns_lookups_per_minute,
            mail_per_recipient_per_hour: self.mail_per_recipient_per_hour,
            verify_now_interval: self.verify_now_interval,
            metrics: self.metrics.clone(),
        };
        settings::resolve(given, file, default_data_dir)
    }
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let settings = args.settings()?;
    if let Some(command) = &args.command {
        return accounts::run(command, &settings);
    }
    if args.print_settings {
        print!("{}", toml::to_string(&settings).context("cannot print the settings")?);
        return Ok(ExitCode::SUCCESS);
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    return_big_blocks_to_the_system();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(serve(settings))?;
    Ok(ExitCode::SUCCESS)
}

/// Fixes glibc's threshold above which an allocation gets its own mapping (returned to the
/// system when freed) at 1 MiB. Left alone, glibc raises the threshold to the size of each big
/// block freed, so after the first argon2 hashes (19 MiB each) every later one comes from a
/// heap that never shrinks: the attack bench's sign-up flood left the server at 381 MB
/// (peak and after) with it, 58 MB peak and 20 MB after without.
fn return_big_blocks_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any other thread
    // of the process starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let data_dir = &settings.data_dir;
    // One process per SQLite database: held until the process ends (see `sole`).
    let _sole = sole::claim(&settings)?;
    let store = mapwright_store::open(settings.database.as_deref(), data_dir).await.with_context(|| match &settings
        .database
    {
        Some(_) => "cannot open the database given by --database".to_owned(),
        None => format!("cannot open the database in {}", data_dir.display()),
    })?;
    let listener = match settings.no_http {
        true => None,
        false => Some(
            tokio::net::TcpListener::bind(settings.listen)
                .await
                .with_context(|| format!("cannot listen on {}", settings.listen))?,
        ),
    };
    let addr = listener.as_ref().map(|l| l.local_addr()).transpose()?;
    let mut state = AppState::new(store.clone(), settings.secure_cookies);
    state.checks = Arc::new(mapwright_server::jobs::checker::Jobs::new(checker_config(&settings)));
    if !settings.dns_servers.is_empty() {
        state = state.with_dns_servers(settings.dns_servers.clone());
    }
    if settings.allow_private_networks {
        tracing::warn!("outbound fetches may reach private networks (--allow-private-networks)");
        state = state.allow_private_networks();
    }
    for email in grant_admins(store.as_ref(), &settings.admins).await.context("cannot grant an admin")? {
        tracing::warn!(
            email,
            "--admin names no account: sign-up never makes an admin; make it with `mapwright serve admin create EMAIL`"
        );
    }
    let mut limits = Limits::default();
    if let Some(n) = settings.ping_limit_per_minute {
        limits.ping_per_client = limits.ping_per_client.with_limit(n);
        limits.ping_per_sitemap = limits.ping_per_sitemap.with_limit(n);
    }
    if let Some(n) = settings.sign_up_limit_per_minute {
        limits.sign_up_per_client = limits.sign_up_per_client.with_limit(n);
    }
    state.limits = Arc::new(limits);
    state = state.with_outbound_rates(outbound_rates(&settings.outbound));
    let metrics = mapwright_server::metrics::Access::parse(&settings.outbound.metrics)
        .context("metrics must be public, off or token:SECRET")?;
    state = state.with_metrics_access(metrics);
    // A worker process (no listener) mails the alerts of the reads it makes when it knows the
    // address the links start with (`--public-url`); it takes no sign-ups, serving no HTTP.
    if (addr.is_some() || settings.mail.public_url.is_some()) && settings.mail.sign_up == "confirm" {
        state = state.with_mail(mailer(&settings, addr)?);
    }
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let config = jobs::Config {
        workers: settings.workers,
        lease_seconds: settings.lease_seconds,
        poll_interval: settings.poll_interval,
        verify_interval: settings.verify_interval,
        grace: settings.shutdown_grace,
        per_origin: settings.sharing.jobs_per_origin,
        per_owner: settings.sharing.jobs_per_user,
        // Requests to one host from this process: the same bound as jobs of one origin.
        per_host: usize::try_from(settings.sharing.jobs_per_origin.max(1)).unwrap_or(usize::MAX),
        min_fetch_interval: settings.sharing.min_fetch_interval,
        url_quota: settings.sharing.url_quota,
        retention: Some(retention(&settings.sharing)),
        // The console's failing-URLs report runs in the background in every process; a run cut
        // short at shutdown writes what it did and is resumed there (by any process sharing the
        // database).
        checks: true,
        ..jobs::Config::default()
    };
    // A web process (`--workers 0`) runs no scheduler task but the checker: the worker processes
    // fetch, re-check verification and apply retention, and its submissions wake them through
    // the store.
    let background = jobs::spawn(state.clone(), config, shutdown.clone());
    let signals = ShutdownSignal::install();
    let server = match (listener, addr) {
        (Some(listener), Some(addr)) => {
            tracing::info!(%addr, backend = store.backend(), workers = settings.workers, "listening on http://{addr}");
            let limits = listen::Config {
                max_connections: listen::fit_to_file_limit(settings.max_connections),
                max_connections_per_client: settings.max_connections_per_client,
                header_timeout: settings.header_timeout,
                idle_timeout: settings.idle_timeout,
                request_timeout: settings.request_timeout,
            };
            let mut http_stop = shutdown.clone();
            let stopped = async move {
                let _ = http_stop.wait_for(|stopping| *stopping).await;
            };
            Some(tokio::spawn(listen::serve(listener, app(state), limits, stopped, settings.shutdown_grace)))
        }
        _ => {
            tracing::info!(backend = store.backend(), workers = settings.workers, "serving no HTTP: workers only");
            None
        }
    };
    signals.wait().await;
    let _ = stop.send(true);
    // The workers and the checker finish or release their jobs within the grace period; a
    // little more for the store's answers.
    if tokio::time::timeout(settings.shutdown_grace + Duration::from_secs(5), background).await.is_err() {
        tracing::warn!("background jobs did not stop in time");
    }
    if let Some(server) = server {
        server.await.context("the server task failed")?;
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// The service's mail (sign-up, invitations, alerts): SMTP when `--smtp-url` is set, else the outbox folder in the data
/// directory; links start with `--public-url`, else this server's listening address.
fn mailer(settings: &Settings, addr: Option<SocketAddr>) -> anyhow::Result<mapwright_server::mail::Mailer> {
    use mapwright_server::mail::Mailer;
    let mail = &settings.mail;
    let public_url = match (&mail.public_url, addr) {
        (Some(url), _) => url.clone(),
        (None, Some(addr)) => format!("http://{addr}"),
        (None, None) => anyhow::bail!("mail needs --public-url where no address is listened on"),
    };
    let mailer = match &mail.smtp_url {
        Some(url) => Mailer::smtp(url, &mail.mail_from, &public_url).context("cannot set up --smtp-url")?,
        None => {
            let outbox = settings.data_dir.join("outbox");
            let mailer =
                Mailer::outbox(&outbox, &mail.mail_from, &public_url).context("cannot set up the mail outbox")?;
            tracing::info!(
                outbox = %outbox.display(),
                "no --smtp-url: sign-up mail (the links that make accounts) is written to the outbox folder"
            );
            mailer
        }
    };
    Ok(mailer)
}

/// The outbound gate's budgets per target from the settings.
fn outbound_rates(outbound: &settings::Outbound) -> mapwright_server::outbound::Rates {
    let default = mapwright_server::outbound::Rates::default();
    let every = outbound.verify_now_interval;
    let verify = |limit: mapwright_server::SharedLimit, n: u32| limit.with_limit(n).with_window(every);
    mapwright_server::outbound::Rates {
        http_per_host: default.http_per_host.with_limit(outbound.outbound_host_rate),
        http_per_address: default.http_per_address.with_limit(outbound.outbound_address_rate),
        dns_per_name: default.dns_per_name.with_limit(outbound.dns_lookups_per_minute),
        mail_per_recipient: default.mail_per_recipient.with_limit(outbound.mail_per_recipient_per_hour),
        verify_per_site: verify(default.verify_per_site, 1),
        verify_per_host: verify(default.verify_per_host, 2),
        verify_per_domain: verify(default.verify_per_domain, 1),
        failed_proof_memory: default.failed_proof_memory,
    }
}

/// The failing-URL checker's pace and interval from the settings.
fn checker_config(settings: &Settings) -> mapwright_server::jobs::checker::CheckerConfig {
    let config =
        mapwright_server::jobs::checker::CheckerConfig { interval: settings.check_interval, ..Default::default() };
    config.with_rate(settings.check_rate)
}

/// The retention task's policy from the settings (run hourly, sessions deleted once expired).
fn retention(sharing: &settings::Sharing) -> jobs::retention::Config {
    let seconds = |d: Duration| d.as_secs().min(i64::MAX as u64) as i64;
    let default = jobs::retention::Config::default();
    let policy = mapwright_store::Retention {
        keep_downloads: sharing.keep_downloads,
        ping_max_age: seconds(sharing.ping_retention),
        removed_url_max_age: seconds(sharing.removed_url_retention),
        unverified_site_max_age: seconds(sharing.unverified_site_retention),
        ..default.policy
    };
    jobs::retention::Config { policy, ..default }
}

/// `$XDG_DATA_HOME/mapwright`, else `~/.local/share/mapwright`, else `./mapwright-data`.
fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("mapwright");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/share/mapwright"),
        None => PathBuf::from("mapwright-data"),
    }
}

/// Ctrl-C or SIGTERM: stop accepting, finish the requests in flight. The handlers are installed
/// when this is made, before the server says it listens: a signal sent as soon as it does is a
/// graceful stop, not the default action's kill (a supervisor's stop right after a start, or a
/// loaded machine's test, met that window).
struct ShutdownSignal {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignal {
    fn install() -> ShutdownSignal {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            ShutdownSignal {
                term: signal(SignalKind::terminate()).ok(),
                interrupt: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        ShutdownSignal {}
    }

    async fn wait(self) {
        #[cfg(unix)]
        {
            async fn next(signal: Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                _ = next(self.term) => {},
                _ = next(self.interrupt) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    }
}
