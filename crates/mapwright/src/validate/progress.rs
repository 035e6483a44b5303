//! A progress bar on standard error while files are read (hidden when standard error is not a
//! terminal): bytes read of the current file, its name, and how many files so far.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, BufRead, Read};

/// One bar for the whole run, moved from file to file.
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        Progress { bar }
    }

    /// Wraps the input of the next file; `len` is its size on disk when known.
    pub fn track<'a>(
        &self,
        name: &str,
        len: Option<u64>,
        input: Box<dyn BufRead + Send + 'a>,
    ) -> Box<dyn BufRead + Send + 'a> {
        let style = match len {
            Some(_) => {
                ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
            }
            None => ProgressStyle::with_template("{spinner} {prefix} {bytes} {bytes_per_sec}"),
        };
        if let Ok(style) = style {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_prefix(name.to_string());
        self.bar.set_position(0);
        match len {
            Some(l) => self.bar.set_length(l),
            None => self.bar.unset_length(),
        }
        Box::new(Counting { inner: input, bar: self.bar.clone() })
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

struct Counting<R> {
    inner: R,
    bar: ProgressBar,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.bar.inc(n as u64);
        self.inner.consume(n);
    }
}
