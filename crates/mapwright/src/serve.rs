//! `mapwright serve`: opens the store, serves the axum app, shuts down cleanly on a signal.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mapwright_server::{AppState, Limits, RateLimiter, app};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  mapwright serve\n  mapwright serve --listen 0.0.0.0:8080 --data-dir /var/lib/mapwright\n  mapwright serve --database postgres://mapwright@db.internal/mapwright --secure-cookies\n\nLogs go to standard error; set RUST_LOG (e.g. RUST_LOG=mapwright_server=debug) for more."
)]
pub struct ServeArgs {
    /// Address and port to listen on (port 0 picks a free one; the address is logged).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// A PostgreSQL URL (postgres://...) or an SQLite one (sqlite://FILE); without it, an
    /// SQLite file in the data directory.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// Where the SQLite database lives [default: $XDG_DATA_HOME/mapwright, or
    /// ~/.local/share/mapwright].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Mark session cookies Secure: use when clients reach the service over HTTPS.
    #[arg(long)]
    pub secure_cookies: bool,
    /// Pings accepted per minute, per client address and per sitemap URL [default: 60 per
    /// client, 6 per sitemap]; raise it for a load test from one address.
    #[arg(long, value_name = "N")]
    pub ping_limit_per_minute: Option<u32>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let data_dir = args.data_dir.unwrap_or_else(default_data_dir);
    let store =
        mapwright_store::open(args.database.as_deref(), &data_dir).await.with_context(|| match &args.database {
            Some(_) => "cannot open the database given by --database".to_owned(),
            None => format!("cannot open the database in {}", data_dir.display()),
        })?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, backend = store.backend(), "listening on http://{addr}");
    let mut state = AppState::new(store.clone(), args.secure_cookies);
    if let Some(n) = args.ping_limit_per_minute {
        let minute = std::time::Duration::from_secs(60);
        let (per_client, per_sitemap) = (RateLimiter::new(n, minute), RateLimiter::new(n, minute));
        state.limits =
            Arc::new(Limits { ping_per_client: per_client, ping_per_sitemap: per_sitemap, ..Limits::default() });
    }
    // The console's failing-URLs report runs in the background; a run cut short at shutdown
    // is simply done again later (each URL's outcome is written in one transaction).
    let checker = mapwright_server::console::checker::spawn(state.clone(), Default::default(), std::future::pending());
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, service).with_graceful_shutdown(shutdown_signal()).await.context("the server failed")?;
    checker.abort();
    store.close().await;
    tracing::info!("stopped");
    Ok(())
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

/// Ctrl-C or SIGTERM: stop accepting, finish the requests in flight.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
