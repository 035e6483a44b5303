//! `mapwright discover --sites FILE`: many sites through the one discovery engine
//! (`mapwright_fetch::run_sites`, which runs `Discovery::run_site` per site). The list is
//! streamed (sharded, done sites skipped); each site's rows are kept in its own buffer (spilled
//! to an unnamed temporary file past `SPILL_AT`) and written out together when the site is
//! done, followed by its summary line; with `--state` the site is then recorded with the
//! outputs' lengths, so a resumed run cuts off whatever a kill left half-written.

use super::{report_sitemap, say};
use crate::cli::{DiscoverArgs, EntryFormat};
use crate::output::{Out, csv_header, print_finding};
use indicatif::{ProgressBar, ProgressStyle};
use mapwright_core::{Rule, Severity};
use mapwright_fetch::rows::Columns;
use mapwright_fetch::{Event, Fetcher, SiteEvent, SiteSummary, State, run_sites, site_of};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufWriter, IsTerminal, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Bytes of a site's rows kept in memory before they go to a temporary file: 64 sites in
/// flight hold at most 16 MiB.
const SPILL_AT: usize = 256 * 1024;

/// The outputs' buffer: a site's rows larger than this go to the file in one write, uncopied.
const OUT_BUFFER: usize = 64 * 1024;

/// Longest line of the list; a longer one is an error, not an unbounded read.
const MAX_LINE: u64 = 8 * 1024;

/// How long a connection stays open unused: a site that is done is not asked again, and
/// thousands of idle connections would each hold a file descriptor.
const POOL_IDLE: Duration = Duration::from_secs(2);

pub async fn run(args: DiscoverArgs, list: PathBuf) -> anyhow::Result<ExitCode> {
    raise_open_files_limit();
    let mut http = args.http.config()?;
    args.oai.pause(&mut http);
    http.pool_idle_timeout = POOL_IDLE;
    let fetcher = Fetcher::new(http)?;
    let config = super::discover_config(&args);
    let state = match &args.state {
        Some(path) => Some(State::open(path).await?),
        None => None,
    };
    let mark = match &state {
        Some(st) => st.sites_mark().await?,
        None => Default::default(),
    };
    if state.is_some() && args.out.is_none() {
        anyhow::bail!(
            "--state with --sites needs --out FILE: a resumed run cuts the rows of a site a kill left half-written off that file"
        );
    }
    // Parquet rows go to their own writer as they come (a row group at a time), never through
    // the per-site buffers: a site's rows are tagged with it, and --state is refused with it.
    let mut parquet = match (&args.out, args.format) {
        (Some(path), EntryFormat::Parquet) => {
            Some(crate::output::parquet_out(path, Columns::SITES.normalized(args.normalized))?)
        }
        _ => None,
    };
    let rows_path = if parquet.is_some() { None } else { args.out.as_deref() };
    let mut out = Output::open(rows_path, mark.out_len, "--out")?;
    let mut summary_out = match &args.summary {
        Some(p) => Some(Output::open(Some(p), mark.summary_len, "--summary")?),
        None => None,
    };
    if mark.done == 0 && args.format == EntryFormat::Csv {
        writeln!(out.w, "{}", csv_header(args.sitemaps_only, true))?;
    }

    let progress = (!args.quiet && io::stderr().is_terminal()).then(|| progress_bar(&list, args.shard));
    let (site_tx, site_rx) = mpsc::channel(args.hosts_in_flight.max(1));
    // Sites skipped as done by an earlier run, counted by the feeder.
    let fed_skipped = Arc::new(AtomicU64::new(0));
    let feeder = {
        let (list, shard, state, skipped) = (list.clone(), args.shard, state.clone(), fed_skipped.clone());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || feed(&list, shard, state.as_ref(), &handle, &skipped, &site_tx))
    };
    let (ev_tx, mut ev_rx) = mpsc::channel(64);
    let runner = tokio::spawn(run_sites(fetcher, config, args.hosts_in_flight, site_rx, ev_tx));

    let began = Instant::now();
    let mut buffers: HashMap<u64, Out<SiteBuf>> = HashMap::new();
    // Row buffers of sites done, kept for the next ones: no regrowth, no fresh pages.
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let (mut done, mut failed, mut urls, mut duplicates) = (0u64, 0u64, 0u64, 0u64);
    let mut write_err: Option<anyhow::Error> = None;
    while let Some(ev) = ev_rx.recv().await {
        let r: anyhow::Result<()> = match ev {
            SiteEvent::Event { id, site, event } => {
                let buf = buffers.entry(id).or_insert_with(|| {
                    let mem = spare.pop().unwrap_or_else(|| Vec::with_capacity(SPILL_AT));
                    Out::new(SiteBuf { mem, spill: None }, args.format, true).normalized(args.normalized)
                });
                match event {
                    Event::Urls { sitemap, urls: batch } => {
                        urls += batch.len() as u64;
                        if args.sitemaps_only {
                            Ok(())
                        } else if let Some(pq) = parquet.as_mut() {
                            batch.iter().try_for_each(|u| pq.push_url(u, &sitemap, &site)).map_err(Into::into)
                        } else {
                            buf.urls(&batch, &sitemap, Some(&site)).map_err(Into::into)
                        }
                    }
                    Event::Sitemap(s) => {
                        if !args.quiet {
                            report_sitemap(&s, progress.as_ref());
                        }
                        if args.sitemaps_only { buf.sitemap(&s, Some(&site)).map_err(Into::into) } else { Ok(()) }
                    }
                    Event::Finding { sitemap, finding } => {
                        if !args.quiet && (finding.severity() != Severity::Info || finding.rule == Rule::ScopeVouched) {
                            let mut v = Vec::new();
                            print_finding(&mut v, &sitemap, &finding)?;
                            say(progress.as_ref(), String::from_utf8_lossy(&v).trim_end());
                        }
                        Ok(())
                    }
                    Event::Notice { sitemap, message } => {
                        if !args.quiet {
                            say(
                                progress.as_ref(),
                                &format!("{}: note: {message}", sitemap.as_deref().unwrap_or(&site)),
                            );
                        }
                        Ok(())
                    }
                }
            }
            SiteEvent::Done { id, site, result } => {
                let rows = buffers.remove(&id).map(|o| o.w).unwrap_or_default();
                let line = SiteSummary::of(&site, &result, args.sitemaps_only);
                done += 1;
                duplicates += u64::from(line.ended == "duplicate");
                failed += u64::from(!line.ok);
                if !args.quiet && !line.ok {
                    say(progress.as_ref(), &format!("{site}: failed: {}", line.error.as_deref().unwrap_or("")));
                }
                match finish_site(&mut out, summary_out.as_mut(), rows, &line, state.as_ref(), &site).await {
                    Ok(Some(mem)) if spare.len() < args.hosts_in_flight => {
                        spare.push(mem);
                        Ok(())
                    }
                    other => other.map(drop),
                }
            }
        };
        if let Err(e) = r {
            write_err = Some(e);
            break; // dropping the receiver stops every discovery
        }
        if let Some(bar) = &progress {
            let secs = began.elapsed().as_secs_f64().max(1e-3);
            bar.set_position(fed_skipped.load(Ordering::Relaxed) + done);
            bar.set_message(format!("{urls} URLs, {:.0} URLs/s", urls as f64 / secs));
        }
    }
    drop(ev_rx);
    runner.await?;
    let fed = feeder.await?;
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    if let Some(e) = write_err {
        return Err(e);
    }
    // A list of blank lines and comments only: no site was discovered, and "0 sites
    // discovered" with exit 0 would pass for a done run.
    if fed? == 0 {
        anyhow::bail!("the list {} names no site (only blank lines and comments)", list.display());
    }
    if let Some(pq) = parquet {
        pq.finish()?;
    }
    out.w.flush()?;
    let earlier_failed = mark.failed;
    if !args.quiet {
        eprintln!(
            "mapwright: {} sites discovered ({failed} failed), {duplicates} listed again (same origin: discovered once), {} skipped as done by an earlier run ({earlier_failed} of them failed); {urls} URLs in {:.2} s",
            done - duplicates,
            fed_skipped.load(Ordering::Relaxed),
            began.elapsed().as_secs_f64()
        );
    }
    Ok(if failed + earlier_failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Writes a finished site: its rows, then its summary line, each flushed; then records it.
/// Gives back the rows' memory buffer, emptied, when it was not spilled.
async fn finish_site(
    out: &mut Output,
    summary: Option<&mut Output>,
    rows: SiteBuf,
    line: &SiteSummary<'_>,
    state: Option<&State>,
    site: &str,
) -> anyhow::Result<Option<Vec<u8>>> {
    let mem = rows.copy_to(out)?;
    out.w.flush()?;
    let summary_len = match summary {
        Some(s) => {
            serde_json::to_writer(&mut *s, line)?;
            s.write_all(b"\n")?;
            s.w.flush()?;
            s.len
        }
        None => 0,
    };
    if let Some(st) = state {
        st.record_site(site, line.ok, out.len, summary_len).await?;
    }
    Ok(mem)
}

/// Reads the list line by line (on a blocking thread), normalises each site, keeps the
/// shard's, skips those a previous run recorded done, and sends the rest. Returns how many
/// lines named a site (before the shard and the state): none is an error of the caller's.
fn feed(
    list: &Path,
    shard: Option<(u64, u64)>,
    state: Option<&State>,
    rt: &tokio::runtime::Handle,
    skipped: &AtomicU64,
    sites: &mpsc::Sender<Arc<str>>,
) -> anyhow::Result<u64> {
    let mut reader = open_list(list)?;
    let mut line = Vec::new();
    let (mut number, mut named) = (0u64, 0u64);
    loop {
        line.clear();
        number += 1;
        let n = (&mut reader).take(MAX_LINE + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(named);
        }
        if line.len() as u64 > MAX_LINE && !line.ends_with(b"\n") {
            anyhow::bail!("{}:{number}: a line longer than {MAX_LINE} bytes is no site", list.display());
        }
        let Some(site) = site_of(&String::from_utf8_lossy(&line)) else { continue };
        named += 1;
        if !in_shard(&site, shard) {
            continue;
        }
        if let Some(st) = state {
            if rt.block_on(st.site_done(&site))? {
                skipped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        }
        if sites.blocking_send(site.into()).is_err() {
            return Ok(named); // the run stopped (output closed)
        }
    }
}

fn open_list(list: &Path) -> anyhow::Result<Box<dyn BufRead + Send>> {
    if list.as_os_str() == "-" {
        return Ok(Box::new(io::BufReader::new(io::stdin())));
    }
    let f = File::open(list).map_err(|e| anyhow::anyhow!("cannot open the list {}: {e}", list.display()))?;
    Ok(Box::new(io::BufReader::new(f)))
}

/// Whether `site` falls in shard K of N: its xxh3-64 modulo N is K - 1.
fn in_shard(site: &str, shard: Option<(u64, u64)>) -> bool {
    shard.is_none_or(|(k, n)| xxhash_rust::xxh3::xxh3_64(site.as_bytes()) % n == k - 1)
}

/// A bar of sites done out of the list's (when the list is a file it is counted first),
/// with the URL rate.
fn progress_bar(list: &Path, shard: Option<(u64, u64)>) -> ProgressBar {
    let total = (list.as_os_str() != "-")
        .then(|| open_list(list).ok())
        .flatten()
        .map(|r| r.lines().map_while(Result::ok).filter_map(|l| site_of(&l)).filter(|s| in_shard(s, shard)).count());
    let bar = match total {
        Some(n) => {
            let bar = ProgressBar::new(n as u64);
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} sites {msg}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            bar
        }
        None => {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {pos} sites {msg}").expect("template"));
            bar
        }
    };
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// An output (a file, or standard output) that knows its length, so the state can record it.
struct Output {
    w: BufWriter<Box<dyn Write + Send>>,
    len: u64,
}

impl Output {
    /// Opens `path` (standard output when `None`). With `resume_at` > 0 (a run recorded sites
    /// already) the file is cut back to that length, which it must have at least; else it is
    /// created empty.
    fn open(path: Option<&Path>, resume_at: u64, flag: &str) -> anyhow::Result<Output> {
        let Some(path) = path else {
            return Ok(Output { w: BufWriter::with_capacity(OUT_BUFFER, Box::new(io::stdout())), len: 0 });
        };
        let file = if resume_at > 0 {
            let mut f = File::options().read(true).write(true).open(path).map_err(|e| {
                anyhow::anyhow!("{flag} {}: cannot reopen the output of the run to resume: {e}", path.display())
            })?;
            let len = f.metadata()?.len();
            if len < resume_at {
                anyhow::bail!(
                    "{flag} {} has {len} bytes but the state recorded {resume_at}: not the output of the run to resume",
                    path.display()
                );
            }
            f.set_len(resume_at)?;
            f.seek(SeekFrom::End(0))?;
            f
        } else {
            File::create(path).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))?
        };
        Ok(Output { w: BufWriter::with_capacity(OUT_BUFFER, Box::new(file)), len: resume_at })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.w.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// One site's rows while it runs: in memory up to [`SPILL_AT`] bytes, then in an unnamed
/// temporary file (gone with the process, even after `kill -9`).
#[derive(Default)]
struct SiteBuf {
    mem: Vec<u8>,
    spill: Option<BufWriter<File>>,
}

impl Write for SiteBuf {
    /// The JSON and CSV writers make many small writes per row: while in memory, each is one
    /// append.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.spill.is_none() && self.mem.len() + buf.len() <= SPILL_AT {
            self.mem.extend_from_slice(buf);
            return Ok(());
        }
        self.write(buf).map(drop)
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.spill.is_none() && self.mem.len() + buf.len() > SPILL_AT {
            let mut f = BufWriter::with_capacity(64 * 1024, tempfile::tempfile()?);
            f.write_all(&self.mem)?;
            self.mem = Vec::new();
            self.spill = Some(f);
        }
        match &mut self.spill {
            Some(f) => f.write(buf),
            None => {
                self.mem.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SiteBuf {
    /// Writes the rows to `out`; gives back the memory buffer, emptied, if it held them.
    fn copy_to(self, out: &mut impl Write) -> io::Result<Option<Vec<u8>>> {
        match self.spill {
            Some(f) => {
                let mut f = f.into_inner().map_err(|e| e.into_error())?;
                f.seek(SeekFrom::Start(0))?;
                io::copy(&mut f, out)?;
                Ok(None)
            }
            None => {
                let mut mem = self.mem;
                out.write_all(&mem)?;
                mem.clear();
                Ok(Some(mem))
            }
        }
    }
}

/// Many hosts at once means many sockets: the soft limit on open files is raised to the hard
/// one (often 1,024 against 500,000 or more).
fn raise_open_files_limit() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: getrlimit and setrlimit read and write a local struct through a valid pointer.
    unsafe {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
