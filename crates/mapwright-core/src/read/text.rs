//! Plain-text sitemaps: one absolute URL per line (also Yahoo's 2005 `urllist.txt`).

use crate::error::Error;
use crate::loc::Loc;
use crate::model::{Entry, UrlEntry};
use crate::read::input::{Prepared, Tracked, map_io};
use crate::read::{FindingSink, Limits};
use crate::rule::{Finding, Position, Rule};
use std::io::BufRead;

/// Non-blank lines read without a single URL before the file is judged not a sitemap.
const MAX_LEADING_GARBAGE: u32 = 32;

pub(crate) struct TextReader<'a> {
    r: Tracked<'a>,
    line: Vec<u8>,
    max_line: usize,
    gzip_layers: usize,
    entry_pos: Position,
    urls: u64,
    bad_lines: u32,
}

impl<'a> TextReader<'a> {
    pub(crate) fn new(p: Prepared<'a>, limits: &Limits) -> Self {
        TextReader {
            r: p.reader,
            line: Vec::with_capacity(256),
            max_line: limits.max_loc_bytes,
            gzip_layers: p.gzip_layers,
            entry_pos: Position::default(),
            urls: 0,
            bad_lines: 0,
        }
    }

    pub(crate) fn gzip_layers(&self) -> usize {
        self.gzip_layers
    }

    pub(crate) fn entry_position(&self) -> Position {
        self.entry_pos
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.r.offset()
    }

    /// Reads one line into `self.line` (without the newline), at most `max_line` bytes kept;
    /// returns false at the end of input.
    fn read_line(&mut self) -> Result<(bool, bool), Error> {
        self.line.clear();
        let mut too_long = false;
        loop {
            let pos = self.r.position();
            let buf = self.r.fill_buf().map_err(|e| map_io(e, pos))?;
            if buf.is_empty() {
                return Ok((!self.line.is_empty() || too_long, too_long));
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            let room = self.max_line.saturating_sub(self.line.len());
            if chunk.len() > room {
                too_long = true;
            }
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = done.unwrap_or(buf.len());
            self.r.consume(used);
            if done.is_some() {
                return Ok((true, too_long));
            }
        }
    }

    pub(crate) fn next_entry(&mut self, sink: &mut FindingSink<'_>) -> Result<Option<Entry>, Error> {
        loop {
            let start = self.r.offset();
            self.r.keep_from(start);
            let (more, too_long) = self.read_line()?;
            if !more {
                if self.urls == 0 && self.bad_lines > 0 {
                    return Err(Error::NotSitemap {
                        position: Position { line: 1, column: 1, offset: 0 },
                        reason: "not XML, and no line is an absolute URL".into(),
                    });
                }
                return Ok(None);
            }
            let pos = self.r.position_at(start);
            if too_long {
                sink.push(Finding::new(
                    Rule::LocTooLong,
                    Some(pos),
                    format!("line longer than {} bytes: skipped", self.max_line),
                ));
                continue;
            }
            let text = match std::str::from_utf8(&self.line) {
                Ok(t) => t,
                Err(e) => {
                    sink.push(Finding::new(
                        Rule::Encoding,
                        Some(pos),
                        format!(
                            "invalid UTF-8 at byte {} of the line: line skipped; save the file as UTF-8",
                            e.valid_up_to() + 1
                        ),
                    ));
                    self.bad_line()?;
                    continue;
                }
            };
            let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
            if trimmed.is_empty() {
                continue;
            }
            if trimmed.contains(char::is_whitespace) {
                sink.push(Finding::new(
                    Rule::TextInvalidLine,
                    Some(pos),
                    format!(
                        "{:?} is not one URL: a text sitemap has exactly one absolute URL per line",
                        shorten(trimmed)
                    ),
                ));
                self.bad_line()?;
                continue;
            }
            match Loc::parse_with_repairs(trimmed) {
                Ok((loc, repairs)) => {
                    let lead = text.len() - text.trim_start().len();
                    self.entry_pos =
                        Position { column: pos.column + lead as u32, offset: pos.offset + lead as u64, ..pos };
                    if trimmed.len() != text.trim_end_matches('\r').len() {
                        sink.push(
                            Finding::new(
                                Rule::LocWhitespace,
                                Some(self.entry_pos),
                                "whitespace around the URL: it was trimmed",
                            )
                            .with_loc(loc.as_str()),
                        );
                    }
                    if repairs.escaped {
                        sink.push(
                            Finding::new(
                                Rule::LocNotEscaped,
                                Some(self.entry_pos),
                                format!("URL has characters that must be percent-encoded: write {}", loc.as_str()),
                            )
                            .with_loc(loc.as_str()),
                        );
                    }
                    self.urls += 1;
                    return Ok(Some(Entry::Url(UrlEntry::new(loc))));
                }
                Err(e) => {
                    sink.push(Finding::new(
                        Rule::TextInvalidLine,
                        Some(pos),
                        format!("{:?}: {e}; a text sitemap has one absolute http(s) URL per line", shorten(trimmed)),
                    ));
                    self.bad_line()?;
                }
            }
        }
    }

    fn bad_line(&mut self) -> Result<(), Error> {
        self.bad_lines += 1;
        if self.urls == 0 && self.bad_lines >= MAX_LEADING_GARBAGE {
            return Err(Error::NotSitemap {
                position: Position { line: 1, column: 1, offset: 0 },
                reason: format!("not XML, and none of the first {MAX_LEADING_GARBAGE} lines is an absolute URL"),
            });
        }
        Ok(())
    }
}

/// A value cut for messages.
pub(crate) fn shorten(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(77).collect();
        t.push_str("...");
        t
    }
}
