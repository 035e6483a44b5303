//! The argument grammar of `mapwright generate` (clap derive); every option can also live in
//! `mapwright.toml` (see `config.rs`), and a flag given overrides the file.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    mapwright generate list urls.txt --base-url https://example.com/ --out public\n  \
    (cd public && find . -name '*.html') | mapwright generate list - --base-url https://example.com/ --out public --gzip\n  \
    mapwright generate dir public --base-url https://example.com/ --out public --robots public/robots.txt\n  \
    mapwright generate dir site --base-url https://example.com/ --out site --lastmod git --clean-urls --alternates\n  \
    mapwright generate logs /var/log/nginx/access.log* --base-url https://example.com/ --out www --strip-query\n\n\
    Output: OUT/sitemap.xml, or OUT/sitemap-1-HASH.xml, sitemap-2-HASH.xml... and their index OUT/sitemap.xml when one \
    file would pass 50,000 URLs or 52,428,800 bytes. The URL to announce is printed on standard output.")]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub source: Source,
}

#[derive(clap::Subcommand, Debug)]
pub enum Source {
    /// URLs from a list: one per line, CSV or JSONL with loc, lastmod, changefreq, priority.
    #[command(after_help = "Examples:\n  \
        mapwright generate list urls.txt --base-url https://example.com/ --out public\n  \
        mapwright generate list pages.csv --base-url https://example.com/ --out public --gzip\n  \
        printf '/a\\n/b\\n' | mapwright generate list - --base-url https://example.com/ --out public")]
    List(ListArgs),
    /// Pages of a static web root (the output of Hugo, Jekyll, Zola, mkdocs, a Next export...).
    #[command(after_help = "Examples:\n  \
        mapwright generate dir public --base-url https://example.com/ --out public\n  \
        mapwright generate dir _site --base-url https://example.com/ --out _site --exclude 'drafts/' --lastmod git")]
    Dir(DirArgs),
    /// Pages requested in access logs (Common or Combined Log Format, plain or gzipped).
    #[command(after_help = "Example:\n  \
        mapwright generate logs access.log access.log.1.gz --base-url https://example.com/ --out www --strip-query --priority-from-hits")]
    Logs(LogsArgs),
    /// Pages of a live site, found by crawling its links from START_URL.
    #[command(after_help = "Examples:\n  \
        mapwright generate crawl https://example.com/ --out public --report crawl-report.json\n  \
        mapwright generate crawl https://example.com/docs/ --out docs --strip-query 'utm_*' --exclude '/docs/search*' --rate 5\n  \
        mapwright generate crawl https://staging.example.com/ --base-url https://staging.example.com/ --out out --state .crawl-state\n\n\
        Scope: the start URL's scheme, host, port and folder (or --base-url's). Only 2xx HTML pages are \
        listed: noindex pages are followed but not listed, a page naming another URL as canonical is \
        replaced by it, redirects are followed and their target listed. With --state DIR an interrupted \
        crawl (Ctrl-C, a crash) continues where it stopped on the next run; Ctrl-C then exits with code 130 \
        without writing a partial sitemap.")]
    Crawl(Box<CrawlArgs>),
}

/// Options every source shares.
#[derive(clap::Args, Debug, Default)]
pub struct Common {
    /// The site's URL: relative paths are resolved against it, and URLs outside it
    /// (another scheme, host, port, or a path outside its folder) are refused.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Output folder for the sitemap files.
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Configuration file [default: ./mapwright.toml when it exists].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the output folder is served, when not at --base-url (the index lists parts under it).
    #[arg(long, value_name = "URL")]
    pub sitemap_url: Option<String>,
    /// File name stem of the entry point [default: sitemap].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// gzip the parts (the index sitemap.xml stays plain and is always written).
    #[arg(long)]
    pub gzip: bool,
    /// gzip level, 0 to 9 [default: 6].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=9))]
    pub gzip_level: Option<u32>,
    /// Part format [default: xml].
    #[arg(long, value_enum)]
    pub format: Option<PartFormat>,
    /// Most URLs per file [default and maximum: 50000].
    #[arg(long, value_name = "N")]
    pub max_urls: Option<usize>,
    /// Most uncompressed bytes per file [default and maximum: 52428800].
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    /// lastmod for entries without one: a W3C date or `now`.
    #[arg(long, value_name = "DATE")]
    pub default_lastmod: Option<String>,
    /// Add or update the `Sitemap:` line of this robots.txt (created if missing).
    #[arg(long, value_name = "PATH")]
    pub robots: Option<PathBuf>,
    /// No progress bar, no summary, no per-URL messages (errors are still shown).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartFormat {
    /// XML `<urlset>` files.
    Xml,
    /// Plain text, one URL per line (the index is still XML).
    Text,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Detect from content: `{` starts JSONL, a header with a `loc` column starts CSV, else lines.
    Auto,
    /// One URL or path per line (`#` starts a comment line).
    Lines,
    /// CSV with a header: loc, lastmod, changefreq, priority (others ignored).
    Csv,
    /// One JSON object per line with the same keys.
    Jsonl,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// The list, or - for standard input (gzip is detected).
    pub file: PathBuf,
    #[command(flatten)]
    pub common: Common,
    /// Input format [default: auto].
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormat>,
    /// Leave out URLs whose path matches this glob (`/drafts/**`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LastmodFrom {
    /// The file's modification time.
    Mtime,
    /// The last git commit touching the file (one `git log` for the whole tree).
    Git,
    /// No lastmod.
    None,
}

#[derive(clap::Args, Debug)]
pub struct DirArgs {
    /// The web root [or `root` in the config file].
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
    /// Files to list (gitignore syntax, repeatable) [default: *.html, *.htm].
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Files or folders to leave out (gitignore syntax, repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Drop `.html` from URLs (`about.html` is served as `/about`).
    #[arg(long)]
    pub clean_urls: bool,
    /// Where lastmod comes from [default: mtime].
    #[arg(long, value_enum)]
    pub lastmod: Option<LastmodFrom>,
    /// Add the hreflang alternates the pages declare (`<link rel="alternate" hreflang>`).
    #[arg(long)]
    pub alternates: bool,
    /// List pages even when the root's robots.txt disallows them.
    #[arg(long)]
    pub ignore_robots: bool,
}

#[derive(clap::Args, Debug)]
pub struct LogsArgs {
    /// Access logs (Common or Combined Log Format; gzip is detected) [or `logs` in the config file].
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub common: Common,
    /// Drop query strings (`/a?utm_source=x` counts as `/a`).
    #[arg(long)]
    pub strip_query: bool,
    /// Priority from request counts: 1.0 for the most requested page, down to 0.1.
    #[arg(long)]
    pub priority_from_hits: bool,
    /// Keep stylesheets, scripts, images and other files that are not pages.
    #[arg(long)]
    pub all_files: bool,
    /// Leave out URLs whose path matches this glob (`/admin/**`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct CrawlArgs {
    /// Where the crawl starts (an http or https URL).
    pub start_url: String,
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub http: crate::http::HttpArgs,
    /// Only crawl URLs whose path (and query) match this glob (`/blog/**`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Do not crawl URLs whose path (and query) match this glob (`/search*`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Remove query parameters whose name matches this glob (`utm_*`, `sessionid`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub strip_query: Vec<String>,
    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,
    /// Most requests per second to the site (robots.txt Crawl-delay may slow it further).
    #[arg(long, value_name = "PER_SEC")]
    pub rate: Option<f64>,
    /// Follow links at most this deep (the start page is 0).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,
    /// Request at most this many pages.
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,
    /// Start no request after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub max_time: Option<f64>,
    /// Read at most this many bytes of a page (after gzip removal).
    #[arg(long, value_name = "BYTES", default_value_t = 10 << 20)]
    pub max_page_size: u64,
    /// Also list documents of these media types (`application/pdf`, `image/*`); repeatable.
    #[arg(long, value_name = "TYPE")]
    pub include_types: Vec<String>,
    /// Add the images the pages show (`<img src>`) as image extension entries.
    #[arg(long)]
    pub images: bool,
    /// Add the hreflang alternates the pages declare (`<link rel="alternate" hreflang>`).
    #[arg(long)]
    pub alternates: bool,
    /// Fetch what robots.txt disallows (only for a site of your own).
    #[arg(long)]
    pub ignore_robots: bool,
    /// Folder keeping the crawl's progress, so an interrupted crawl continues on the next run.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Write the crawl report here: JSON if the name ends in .json, else a readable summary.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}
