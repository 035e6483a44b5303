//! Prepares raw bytes for a format reader: gzip layers removed while streaming, a byte order
//! mark and leading blank space skipped, a non-UTF-8 declaration transcoded, and every byte
//! counted against the size limit and for line/column positions.

use crate::error::Error;
use crate::read::Limits;
use crate::read::ahead::{Lines, Made, MakeScan};
use crate::read::gunzip::{Filled, HEAD, OUT_CHUNK, Source, read_buffered};
use crate::read::members::{GzipFault, Members};
use crate::rule::{Finding, Position, Rule};
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::Mutex;

/// The size of a reader's buffer: that of the inflate worker's, since the two change places
/// (`Tracked` takes the worker's buffers and gives its own back).
const BUF: usize = OUT_CHUNK;

/// Read buffers of [`BUF`] bytes given back by readers that are done, for the next ones. A
/// many-site discovery opens thousands of small sitemaps a second, each with one buffer per
/// gzip layer plus its own: allocating and zeroing 128 KiB each time, and faulting the pages
/// in again after the allocator gave them back, showed in its profile (memset, page faults).
/// At most [`SPARE_BUFFERS`] are kept (8 MiB), so idle memory stays bounded.
static SPARE: Mutex<Vec<Box<[u8]>>> = Mutex::new(Vec::new());
const SPARE_BUFFERS: usize = 64;

/// A buffer of [`BUF`] bytes: a spare one (its old bytes are never handed out: only what a
/// read writes, up to `filled`, is), else a new one.
fn take_buffer() -> Box<[u8]> {
    SPARE.lock().ok().and_then(|mut s| s.pop()).unwrap_or_else(|| vec![0; BUF].into_boxed_slice())
}

/// How far behind the read point positions may still be asked for (bytes kept on refill).
const KEEP_MAX: usize = 1 << 20;

/// Marker payload of the `io::Error` raised when the byte limit is passed.
#[derive(Debug)]
pub(crate) struct LimitReached(pub u64);
impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "more than {} bytes uncompressed", self.0)
    }
}
impl std::error::Error for LimitReached {}

/// Marker payload of the `io::Error` raised when XML goes on too long without a `<`.
#[derive(Debug)]
pub(crate) struct RunTooLong(pub usize);
impl std::fmt::Display for RunTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "more than {} bytes of XML without a '<'", self.0)
    }
}
impl std::error::Error for RunTooLong {}

/// Maps an I/O error from the prepared stream to the core error it stands for.
pub(crate) fn map_io(e: io::Error, position: Position) -> Error {
    if let Some(inner) = e.get_ref() {
        if let Some(LimitReached(limit)) = inner.downcast_ref::<LimitReached>() {
            return Error::TooLarge { limit: *limit, position };
        }
        if let Some(g) = inner.downcast_ref::<GzipFault>() {
            return Error::Gzip { offset: g.produced, message: g.message.clone() };
        }
        if let Some(RunTooLong(n)) = inner.downcast_ref::<RunTooLong>() {
            return Error::Xml {
                position,
                message: format!(
                    "more than {n} bytes of text or markup without a '<': stopped reading (a padded or hostile file?)"
                ),
            };
        }
    }
    if e.kind() == io::ErrorKind::InvalidData {
        return Error::Encoding { position, message: e.to_string() };
    }
    Error::Io(e)
}

/// Transcodes a legacy encoding to UTF-8 while streaming.
struct Transcode<'a> {
    inner: Box<dyn BufRead + Send + 'a>,
    decoder: encoding_rs::Decoder,
    eof: bool,
    /// The decoder has flushed its last bytes: it must not be called again.
    finished: bool,
}

impl Read for Transcode<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.len() < 4 {
            return Err(io::Error::other("transcoding needs a buffer of at least 4 bytes"));
        }
        loop {
            if self.eof {
                if self.finished {
                    return Ok(0);
                }
                let (result, _, written, _) = self.decoder.decode_to_utf8(&[], out, true);
                self.finished = result == encoding_rs::CoderResult::InputEmpty;
                return Ok(written);
            }
            let input = self.inner.fill_buf()?;
            if input.is_empty() {
                self.eof = true;
                continue;
            }
            let (_, read, written, _) = self.decoder.decode_to_utf8(input, out, false);
            self.inner.consume(read);
            if written > 0 {
                return Ok(written);
            }
        }
    }
}

/// The prepared stream: a buffered reader that enforces the byte limit and knows, for any
/// recent offset, its line and column.
pub(crate) struct Tracked<'a> {
    inner: Source<'a>,
    buf: Box<[u8]>,
    /// Where the bytes start in `buf` (0 but in a buffer taken from the inflate worker): the
    /// indices below (`pos`, `filled`, `end`) count from here.
    head: usize,
    /// Offset (in the stream) of `buf[head]`.
    base: u64,
    pos: usize,
    filled: usize,
    /// Newlines are counted up to here (a stream offset); `line` is the line there.
    counted: u64,
    line: u32,
    line_start: u64,
    /// Bytes from this stream offset on are kept on refill, so positions there can be computed.
    keep_from: u64,
    max: u64,
    eof: bool,
    /// Whether lines are counted at all (not for inner gzip layers).
    track: bool,
    /// With XML: the longest run allowed without a `<`, and where the last `<` was.
    max_run: Option<usize>,
    last_lt: u64,
    /// `buf[..end]` may be handed out (the byte limit applied), so the common `fill_buf` is a
    /// comparison and a slice: the parser calls it several times per event.
    end: usize,
    /// The entries the worker read ahead in the bytes its buffer brought (`ahead.rs`), at
    /// stream offsets; the stream offset where those bytes end (an entry is taken only while
    /// the parser sees them end there too); whether one was taken.
    made: VecDeque<Made>,
    made_end: u64,
    made_used: bool,
    /// Entries read ahead that the parser took (to test that reads go that way).
    #[cfg(test)]
    pub(crate) made_taken: u64,
}

impl<'a> Tracked<'a> {
    fn new(inner: Box<dyn Read + Send + 'a>, max: u64, track: bool) -> Self {
        Self::from_source(Source::Read(inner), max, track)
    }

    fn from_source(inner: Source<'a>, max: u64, track: bool) -> Self {
        Tracked {
            inner,
            buf: take_buffer(),
            head: 0,
            base: 0,
            pos: 0,
            filled: 0,
            counted: 0,
            line: 1,
            line_start: 0,
            keep_from: if track { 0 } else { u64::MAX },
            max,
            eof: false,
            track,
            max_run: None,
            last_lt: 0,
            end: 0,
            made: VecDeque::new(),
            made_end: 0,
            made_used: false,
            #[cfg(test)]
            made_taken: 0,
        }
    }

    /// The entry the worker read ahead at the read point (`ahead.rs`), if it read one there
    /// seeing the bytes the parser sees, up to the same end; those it read before the read
    /// point are dropped (the parser went another way).
    #[inline]
    pub(crate) fn take_made(&mut self) -> Option<Made> {
        let first = self.made.front()?;
        let here = self.offset();
        if first.at > here || self.base + self.end as u64 != self.made_end {
            return None;
        }
        while self.made.front().is_some_and(|m| m.at <= here) {
            let m = self.made.pop_front()?;
            if m.at == here {
                self.made_used = true;
                #[cfg(test)]
                {
                    self.made_taken += 1;
                }
                return Some(m);
            }
        }
        None
    }

    /// This (untracked) reader, nothing read from it yet, now counting lines from its start.
    fn tracking(mut self) -> Self {
        debug_assert!(!self.track && self.offset() == 0);
        self.track = true;
        self.keep_from = 0;
        self
    }

    /// Stream offset of the next unread byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Limits runs of bytes without a `<` (for XML: it bounds the parser's event buffer).
    pub(crate) fn limit_runs(&mut self, max: usize) {
        self.max_run = Some(max);
        self.last_lt = self.offset();
    }

    /// Allows positions to be asked for from `offset` on; earlier bytes may be dropped.
    pub(crate) fn keep_from(&mut self, offset: u64) {
        self.keep_from = offset.max(self.keep_from);
    }

    /// Line and column of a stream offset at or after the last [`Tracked::keep_from`].
    pub(crate) fn position_at(&mut self, offset: u64) -> Position {
        let lo = self.base;
        let hi = self.base + self.filled as u64;
        let offset = offset.clamp(lo.min(self.counted), hi);
        if offset >= self.counted {
            let from = (self.counted.max(lo) - lo) as usize;
            let to = (offset - lo) as usize;
            // Borrows `buf` alone: `line` moves while the chunk is read.
            let chunk = &self.buf[self.head + from..self.head + to];
            let n = bytecount::count(chunk, b'\n');
            if n > 0 {
                self.line += n as u32;
                let last = memchr::memrchr(b'\n', chunk).unwrap_or(0);
                self.line_start = lo + (from + last) as u64 + 1;
            }
            self.counted = offset;
            return Position { line: self.line, column: (offset - self.line_start) as u32 + 1, offset };
        }
        // Behind the counted point: count back, within what the buffer still holds.
        let from = (offset.max(lo) - lo) as usize;
        let to = (self.counted - lo) as usize;
        let back = self.span(from, to);
        let n = bytecount::count(back, b'\n') as u32;
        if n == 0 {
            return Position { line: self.line, column: (offset.saturating_sub(self.line_start)) as u32 + 1, offset };
        }
        let column = match memchr::memrchr(b'\n', self.span(0, from)) {
            Some(nl) => (from - nl) as u32,
            None => (offset - lo) as u32 + 1,
        };
        Position { line: self.line - n, column, offset }
    }

    /// The position of `from + at.0`, from the newlines a scan of the bytes from `from` saw
    /// (`at.1` before that point, `end.1` up to `end.0`), with lines counted on to `from +
    /// end.0`: what [`Tracked::position_at`] then [`Tracked::position_at`] of the end would
    /// give, without counting again. `None` (nothing changed) unless lines are counted exactly
    /// up to `from`. Inlined: it runs for each entry of the fast path, a few instructions that
    /// a call and its `Option<Position>` through memory would double.
    #[inline(always)]
    pub(crate) fn scanned_lines(&mut self, from: u64, at: (usize, Lines), end: (usize, Lines)) -> Option<Position> {
        if !self.track || self.counted != from {
            return None;
        }
        let line_start = |l: Lines, before: u64| if l.n > 0 { from + l.start as u64 } else { before };
        let offset = from + at.0 as u64;
        let column = (offset - line_start(at.1, self.line_start)) as u32 + 1;
        let pos = Position { line: self.line + at.1.n, column, offset };
        self.line += end.1.n;
        self.line_start = line_start(end.1, self.line_start);
        self.counted = from + end.0 as u64;
        Some(pos)
    }

    /// The bytes already buffered and allowed (the byte limit applied), without reading more:
    /// a reader that looks ahead here never sees an I/O error or a limit it would have to report.
    #[inline]
    pub(crate) fn buffered(&self) -> &[u8] {
        if self.pos < self.end { self.span(self.pos, self.end) } else { &[] }
    }

    /// Line and column of the next unread byte.
    pub(crate) fn position(&mut self) -> Position {
        let off = self.offset();
        self.position_at(off)
    }

    /// Counts newlines up to the read point so that `base` can move past them.
    fn count_to(&mut self, offset: u64) {
        if self.track && offset > self.counted {
            self.position_at(offset);
        }
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        // A buffer that grew (a long run kept for positions) goes back to the allocator.
        if self.buf.len() == BUF {
            if let Ok(mut spare) = SPARE.lock() {
                if spare.len() < SPARE_BUFFERS {
                    spare.push(std::mem::take(&mut self.buf));
                }
            }
        }
    }
}

impl Read for Tracked<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, out)
    }
}

impl BufRead for Tracked<'_> {
    #[inline]
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos < self.end {
            return Ok(self.span(self.pos, self.end));
        }
        self.refill()
    }

    #[inline]
    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.filled);
    }
}

impl Tracked<'_> {
    /// Reads more when everything handed out is consumed; applies the limits.
    fn refill(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled && !self.eof {
            // Keep what positions may still be asked for; count and drop the rest.
            let read_point = self.offset();
            let mut keep = self.keep_from.max(self.base).min(read_point);
            if read_point - keep > KEEP_MAX as u64 {
                keep = read_point;
            }
            self.count_to(keep);
            let keep_at = (keep - self.base) as usize;
            self.end = 0;
            let n = match self.inner {
                Source::Read(_) => self.read_more(keep_at)?,
                Source::Swap(_) => self.swap_more(keep_at)?,
            };
            if n == 0 {
                self.eof = true;
            }
            if let Some(max) = self.max_run {
                let new = self.span(self.filled, self.filled + n);
                match memchr::memrchr(b'<', new) {
                    Some(i) => self.last_lt = self.base + (self.filled + i) as u64,
                    None if (self.base + (self.filled + n) as u64).saturating_sub(self.last_lt) > max as u64 => {
                        self.filled += n;
                        return Err(io::Error::other(RunTooLong(max)));
                    }
                    None => {}
                }
            }
            self.filled += n;
        }
        let start = self.offset();
        if start >= self.max && self.pos < self.filled {
            return Err(io::Error::other(LimitReached(self.max)));
        }
        let allowed = ((self.max - start) as usize).min(self.filled - self.pos);
        self.end = self.pos + allowed;
        Ok(self.span(self.pos, self.end))
    }

    /// The bytes from `from` to `to`, counted from where they start in the buffer (`head`).
    #[inline(always)]
    fn span(&self, from: usize, to: usize) -> &[u8] {
        &self.buf[self.head + from..self.head + to]
    }

    /// Drops the bytes before `keep_at` and moves the rest to the buffer's start, with room
    /// after them for at least `room` bytes (a bigger buffer if need be).
    fn compact(&mut self, keep_at: usize, room: usize) {
        let (head, filled) = (self.head, self.filled);
        self.buf.copy_within(head + keep_at..head + filled, 0);
        self.head = 0;
        self.base += keep_at as u64;
        self.filled -= keep_at;
        self.pos -= keep_at;
        if self.buf.len() - self.filled < room {
            let mut bigger = vec![0; (self.buf.len() * 2).max(self.filled + room)].into_boxed_slice();
            bigger[..self.filled].copy_from_slice(&self.buf[..self.filled]);
            self.buf = bigger;
        }
    }

    /// Keeps the bytes from `keep_at` on and reads more after them from a reader: how many.
    fn read_more(&mut self, keep_at: usize) -> io::Result<usize> {
        self.compact(keep_at, 4096);
        let Source::Read(inner) = &mut self.inner else { unreachable!("read_more of a reader") };
        loop {
            match inner.read(&mut self.buf[self.filled..]) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Keeps the bytes from `keep_at` on and takes the inflate worker's next buffer: how many
    /// bytes came. The kept bytes, a few hundred as a rule, go into the room at the new
    /// buffer's front, and this buffer goes back to the worker; a longer run kept is the one
    /// case where the new bytes are copied (into this buffer, after the kept ones).
    fn swap_more(&mut self, keep_at: usize) -> io::Result<usize> {
        let Source::Swap(worker) = &mut self.inner else { unreachable!("swap_more of the worker") };
        // Where the new bytes start in the stream: after those held.
        let first = self.base + self.filled as u64;
        // The last buffer's entries read ahead: when none was taken, the parser is not reading
        // that way, and the worker stops reading ahead.
        let spent = std::mem::take(&mut self.made);
        let used = std::mem::take(&mut self.made_used);
        if !spent.is_empty() && !used {
            worker.stop_ahead();
        }
        worker.give_back_made(spent);
        let Filled { buf: mut new, len: n, mut made } = match worker.next_filled() {
            Ok(Some(next)) => next,
            // The end or a fault: nothing came, the kept bytes stay.
            end => {
                self.compact(keep_at, 0);
                return end.map(|_| 0);
            }
        };
        if !made.is_empty() {
            // (Taken only by the XML reader's own: an inner layer's, whose bytes are
            // transcoded before they are parsed, are spent unused, and reading ahead stops.)
            for m in &mut made {
                m.at += first;
            }
            self.made = made;
            self.made_end = first + n as u64;
        }
        let kept = self.filled - keep_at;
        let tail = self.head + keep_at..self.head + self.filled;
        if kept <= HEAD {
            new[HEAD - kept..HEAD].copy_from_slice(&self.buf[tail]);
            let old = std::mem::replace(&mut self.buf, new);
            worker.give_back(old);
            self.head = HEAD - kept;
            self.base += keep_at as u64;
            self.filled = kept;
            self.pos -= keep_at;
        } else {
            self.compact(keep_at, n);
            self.buf[self.filled..self.filled + n].copy_from_slice(&new[HEAD..HEAD + n]);
            let Source::Swap(worker) = &mut self.inner else { unreachable!("swap_more of the worker") };
            worker.give_back(new);
        }
        Ok(n)
    }
}

/// The input a reader is given ([`SitemapReader::paged`](crate::SitemapReader::paged), a
/// [`Validator`](crate::Validator)'s runs): borrowed, which the reader reads on the caller's
/// thread, or its own ([`Input::owned`]), which it may hand to a thread of its own: a plain
/// input past its first 128 KiB is then read ahead there, and a gzip input read and inflated
/// there, overlapped with parsing (on a 10 MB file the copy out of the page cache alone was
/// about a sixth of the read on the parsing thread). Any `BufRead` converts into the borrowed
/// kind, so a caller that lends its input passes it as it is.
pub enum Input<'a> {
    /// Read where the reader is (it may borrow the caller's data).
    Borrowed(Box<dyn BufRead + Send + 'a>),
    /// The reader's own, which it may read on a thread of its own.
    Owned(Box<dyn BufRead + Send>),
}

impl Input<'_> {
    /// An input the reader owns: what a caller that only passes its input on gives (the CLI's
    /// `read` and `validate`, the Python package).
    pub fn owned(input: Box<dyn BufRead + Send>) -> Self {
        Input::Owned(input)
    }
}

impl<'a, R: BufRead + Send + 'a> From<R> for Input<'a> {
    fn from(input: R) -> Self {
        Input::Borrowed(Box::new(input))
    }
}

/// The input while gzip layers are peeled: as given, or the last layer's (limited) reader.
enum Stream<'a> {
    Raw(Box<dyn BufRead + Send + 'a>),
    Owned(Box<dyn BufRead + Send>),
    Gz(Tracked<'a>),
}

impl<'a> Stream<'a> {
    fn as_buf_read(&mut self) -> &mut (dyn BufRead + Send + 'a) {
        match self {
            Stream::Raw(r) => r.as_mut(),
            Stream::Owned(r) => r.as_mut(),
            Stream::Gz(t) => t,
        }
    }

    fn boxed(self) -> Box<dyn BufRead + Send + 'a> {
        match self {
            Stream::Raw(r) => r,
            Stream::Owned(r) => r,
            Stream::Gz(t) => Box::new(t),
        }
    }
}

/// A stream ready for a format reader.
pub(crate) struct Prepared<'a> {
    pub reader: Tracked<'a>,
    pub looks_like_xml: bool,
    pub gzip_layers: usize,
}

fn peek<'b>(r: &'b mut (dyn BufRead + Send + '_), produced: impl Fn() -> u64) -> Result<&'b [u8], Error> {
    r.fill_buf().map_err(|e| map_io(e, Position { line: 1, column: 1, offset: produced() }))
}

/// Removes gzip layers, skips a BOM and leading white space, transcodes a declared legacy
/// encoding, and says whether the content looks like XML.
/// `ahead` reads entries ahead on the worker thread, when there is one (`ahead.rs`).
pub(crate) fn prepare<'a>(
    input: Input<'a>,
    limits: &Limits,
    findings: &mut Vec<Finding>,
    mut ahead: Option<MakeScan>,
) -> Result<Prepared<'a>, Error> {
    let mut stream = match input {
        Input::Borrowed(r) => Stream::Raw(r),
        Input::Owned(r) => Stream::Owned(r),
    };
    let mut layers = 0;
    loop {
        let head = peek(stream.as_buf_read(), || 0)?;
        if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
            if layers == limits.max_gzip_layers {
                return Err(Error::NotSitemap {
                    position: Position { line: 1, column: 1, offset: 0 },
                    reason: format!("more than {} nested gzip layers", limits.max_gzip_layers),
                });
            }
            layers += 1;
            // The limit applies to each layer's output too, so a bomb inside a bomb stops early.
            // The outer layer inflates on a thread of its own (`gunzip.rs`); inner ones, rare,
            // here.
            let gz = match stream {
                outer @ (Stream::Raw(_) | Stream::Owned(_)) => {
                    crate::read::gunzip::outer_layer(outer.boxed(), ahead.take())
                }
                inner => Source::Read(Box::new(Members::checked(inner.boxed()))),
            };
            stream = Stream::Gz(Tracked::from_source(gz, limits.max_bytes, false));
            continue;
        }
        break;
    }
    let r = stream.as_buf_read();
    // Byte order marks.
    let head = peek(&mut *r, || 0)?;
    let mut encoding: Option<&'static encoding_rs::Encoding> = None;
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        r.consume(3);
        findings.push(Finding::new(
            Rule::Bom,
            Some(Position { line: 1, column: 1, offset: 0 }),
            "UTF-8 byte order mark before the content: harmless, but some consumers choke on it; save the file without BOM",
        ));
    } else if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        let enc = if head[0] == 0xFF { encoding_rs::UTF_16LE } else { encoding_rs::UTF_16BE };
        r.consume(2);
        findings.push(Finding::new(
            Rule::Encoding,
            Some(Position { line: 1, column: 1, offset: 0 }),
            format!("the file is {}, not UTF-8: read after transcoding; save it as UTF-8", enc.name()),
        ));
        encoding = Some(enc);
    } else if let Some(enc) = declared_encoding(head) {
        findings.push(Finding::new(
            Rule::Encoding,
            Some(Position { line: 1, column: 1, offset: 0 }),
            format!(
                "the XML declaration names encoding {:?}: sitemaps must be UTF-8; read after transcoding, save it as UTF-8 and declare encoding=\"UTF-8\"",
                enc.name()
            ),
        ));
        encoding = Some(enc);
    }
    let mut reader = match (encoding, stream) {
        // The last gzip layer's reader, nothing consumed from it (no BOM), becomes the
        // tracking one: its buffer already holds the first bytes, which another reader would
        // copy, and it counts the same offsets against the same limit.
        (None, Stream::Gz(t)) if t.offset() == 0 => t.tracking(),
        // An owned input that is not gzip: read on a thread of its own when it is large.
        (None, Stream::Owned(raw)) => {
            Tracked::from_source(crate::read::gunzip::read_ahead(raw, ahead.take()), limits.max_bytes, true)
        }
        (Some(enc), stream) => {
            let source = Transcode {
                inner: stream.boxed(),
                decoder: enc.new_decoder_without_bom_handling(),
                eof: false,
                finished: false,
            };
            Tracked::new(Box::new(source), limits.max_bytes, true)
        }
        (None, stream) => Tracked::new(Box::new(stream.boxed()), limits.max_bytes, true),
    };
    // Skip leading white space (blank lines before the XML declaration are common).
    let looks_like_xml = loop {
        let pos_err = |e| map_io(e, Position { line: 1, column: 1, offset: 0 });
        let buf = reader.fill_buf().map_err(pos_err)?;
        if buf.is_empty() {
            return Err(Error::Empty { bytes: reader.offset() });
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let xml = buf[i] == b'<';
                reader.consume(i);
                break xml;
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    let off = reader.offset();
    reader.keep_from(off);
    if looks_like_xml {
        reader.limit_runs(limits.max_token_bytes);
    }
    Ok(Prepared { reader, looks_like_xml, gzip_layers: layers })
}

/// The encoding an XML declaration at the head of the buffer names, when it is not UTF-8
/// (or ASCII, a subset).
fn declared_encoding(head: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = &head[start..];
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = memchr::memmem::find(head, b"?>")?;
    let decl = &head[..end];
    let at = memchr::memmem::find(decl, b"encoding")?;
    let rest = &decl[at + 8..];
    let q = rest.iter().position(|&b| b == b'"' || b == b'\'')?;
    let quote = rest[q];
    let value = &rest[q + 1..];
    let close = value.iter().position(|&b| b == quote)?;
    let label = &value[..close];
    let lower = label.to_ascii_lowercase();
    if matches!(lower.as_slice(), b"utf-8" | b"utf8" | b"us-ascii" | b"ascii") {
        return None;
    }
    let enc = encoding_rs::Encoding::for_label(label)?;
    (enc != encoding_rs::UTF_8).then_some(enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_lines() {
        let data = b"ab\ncd\n\nefg".to_vec();
        let mut t = Tracked::new(Box::new(io::Cursor::new(data)), 1000, true);
        let n = t.fill_buf().unwrap().len();
        t.consume(n);
        assert_eq!(t.position_at(0), Position { line: 1, column: 1, offset: 0 });
        assert_eq!(t.position_at(4), Position { line: 2, column: 2, offset: 4 });
        assert_eq!(t.position_at(8), Position { line: 4, column: 2, offset: 8 });
        // Behind the counted point.
        assert_eq!(t.position_at(3), Position { line: 2, column: 1, offset: 3 });
        assert_eq!(t.position_at(1), Position { line: 1, column: 2, offset: 1 });
    }

    #[test]
    fn limit_stops_reading() {
        let mut t = Tracked::new(Box::new(io::Cursor::new(vec![b'a'; 100])), 10, true);
        let got = t.fill_buf().unwrap().len();
        assert_eq!(got, 10);
        t.consume(10);
        let err = t.fill_buf().unwrap_err();
        assert!(err.get_ref().unwrap().downcast_ref::<LimitReached>().is_some());
    }

    #[test]
    fn exact_limit_is_fine() {
        let mut t = Tracked::new(Box::new(io::Cursor::new(vec![b'a'; 10])), 10, true);
        let mut v = Vec::new();
        t.read_to_end(&mut v).unwrap();
        assert_eq!(v.len(), 10);
    }

    #[test]
    fn declared_encodings() {
        assert_eq!(declared_encoding(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), None);
        assert_eq!(
            declared_encoding(b"<?xml version='1.0' encoding='ISO-8859-1'?><urlset>"),
            Some(encoding_rs::WINDOWS_1252)
        );
        assert_eq!(declared_encoding(b"<urlset>"), None);
    }
}
