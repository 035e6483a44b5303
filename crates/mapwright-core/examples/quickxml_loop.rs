//! A bare quick-xml loop over a sitemap, the limit `mapwright read` is measured against
//! (`bench/read/bench.sh`): the loop of the shared benchmark's `quickxml_count`, here so the
//! bench builds everything it needs from this repository, with the reader's own quick-xml and
//! release profile. Events over one reused buffer, `<loc>` counted directly inside `<url>` (so
//! `image:loc` is not), names compared as `&str` (quick-xml checks their UTF-8 itself), text
//! never unescaped; a sitemap index's child `<loc>`s are read from the local files of the same
//! name. A file starting with the gzip magic bytes is inflated on the fly. Prints
//! `urls=N sitemaps=N xml_bytes=N`.

use quick_xml::Reader;
use quick_xml::events::Event;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

const READ_BUF: usize = 64 * 1024;

#[derive(Default)]
struct Counts {
    urls: u64,
    sitemaps: u64,
    bytes_in: u64,
}

/// `path`, buffered, inflated when it starts with `1f 8b`.
fn open_input(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    let mut f = BufReader::with_capacity(READ_BUF, File::open(path)?);
    let magic = f.fill_buf()?;
    if magic.len() >= 2 && magic[0] == 0x1f && magic[1] == 0x8b {
        Ok(Box::new(BufReader::with_capacity(READ_BUF, flate2::bufread::MultiGzDecoder::new(f))))
    } else {
        Ok(Box::new(f))
    }
}

/// The local file for a child sitemap URL listed in the index at `index`.
fn child_path(index: &Path, loc: &str) -> PathBuf {
    let no_query = loc.split(['?', '#']).next().unwrap_or(loc);
    let name = no_query.rsplit('/').next().unwrap_or(no_query);
    index.parent().unwrap_or(Path::new(".")).join(name)
}

fn read(path: &Path, c: &mut Counts) {
    let input = open_input(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = Reader::from_reader(input);
    let mut buf = Vec::with_capacity(4096);
    let mut in_url = false;
    let mut in_sitemap = false;
    let mut in_sitemap_loc = false;
    let mut children = Vec::new();
    loop {
        match r.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.name().0 {
                "url" => in_url = true,
                "loc" if in_url => c.urls += 1,
                "sitemap" => in_sitemap = true,
                "loc" if in_sitemap => in_sitemap_loc = true,
                _ => {}
            },
            Ok(Event::End(e)) => match e.name().0 {
                "url" => in_url = false,
                "sitemap" => {
                    in_sitemap = false;
                    c.sitemaps += 1
                }
                "loc" => in_sitemap_loc = false,
                _ => {}
            },
            Ok(Event::Text(t)) if in_sitemap_loc => {
                children.push(child_path(path, t.trim()));
            }
            Ok(Event::Eof) => break,
            Err(e) => panic!("{}: {e} at {}", path.display(), r.error_position()),
            _ => {}
        }
        buf.clear();
    }
    c.bytes_in += r.buffer_position();
    for child in children {
        read(&child, c);
    }
}

fn main() {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: quickxml_loop FILE (urlset or sitemapindex, plain or gzip)");
        std::process::exit(2);
    };
    let mut c = Counts::default();
    read(&path, &mut c);
    println!("urls={} sitemaps={} xml_bytes={}", c.urls, c.sitemaps, c.bytes_in);
}
