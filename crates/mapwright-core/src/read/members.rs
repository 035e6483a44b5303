//! The gzip format (RFC 1952) around flate2's raw inflate: each member's header read and
//! checked, its deflate stream inflated, its trailer (CRC-32 and length) read, one member after
//! another.
//!
//! Written here rather than taken from flate2's `MultiGzDecoder` for one reason: that decoder
//! computes the CRC-32 of what it inflates on the thread that inflates, and on the `.gz` read's
//! worker (`gunzip.rs`) that thread is the read's critical path whenever the parser keeps up
//! (the CRC is a tenth of its time on an AMD EPYC VM, a twentieth on an Intel Xeon one). Here
//! the checksum is left to the caller: the worker computes it, but for a buffer the parser's
//! thread is already waiting for, which that thread computes as it takes it
//! ([`MemberCheck`]); the buffers' checksums are combined. The inflate itself, and the CRC-32,
//! are flate2's (zlib-rs).
//!
//! A decoder made with [`Members::checked`] checks its members itself, for the paths that
//! inflate on the caller's thread (small files, inner layers, no thread to be had).
//!
//! Faults are `GzipFault`s, with the uncompressed offset where they were found: a header that
//! is not gzip's, a stream that ends early, inflate's own errors, a trailer that does not match.

use flate2::{Crc, Decompress, FlushDecompress, Status};
use std::io::{self, BufRead, Read};

/// Marker payload of an `io::Error` raised by a gzip layer: what its message says, and how
/// many uncompressed bytes came before it.
#[derive(Debug)]
pub(crate) struct GzipFault {
    pub produced: u64,
    pub message: String,
}
impl std::fmt::Display for GzipFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for GzipFault {}

/// Header flags (RFC 1952, 2.3.1).
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xE0;

/// A member's trailer: the CRC-32 and the length (modulo 2^32) of its uncompressed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trailer {
    pub crc: u32,
    pub len: u32,
}

/// What one call of [`Members::inflate`] gave: `n` bytes, and the trailer of the member they
/// end, if they end one. No bytes and no trailer: the end of the stream.
#[derive(Debug)]
pub(crate) struct Inflated {
    pub n: usize,
    pub trailer: Option<Trailer>,
}

/// Where a decoder is in its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before a member's header (the first, or one after a trailer).
    Header,
    Body,
    End,
}

/// The members of a gzip stream, inflated (see the module's documentation).
pub(crate) struct Members<R> {
    input: R,
    inflate: Decompress,
    at: At,
    /// Uncompressed bytes given so far, in all members: where a fault is.
    produced: u64,
    /// Members read so far (a stream has at least one).
    members: u64,
    /// The running checksum of a decoder that checks its members itself.
    check: Option<MemberCheck>,
    /// The message of the fault returned, once one was: every later call returns it again,
    /// never a quiet end.
    failed: Option<String>,
}

impl<R: BufRead> Members<R> {
    /// A decoder that leaves each member's checksum to its caller ([`Inflated::trailer`]).
    pub(crate) fn unchecked(input: R) -> Self {
        Members {
            input,
            inflate: Decompress::new(false),
            at: At::Header,
            produced: 0,
            members: 0,
            check: None,
            failed: None,
        }
    }

    /// A decoder that checks each member's trailer itself: a `Read` of the stream's bytes.
    pub(crate) fn checked(input: R) -> Self {
        Members { check: Some(MemberCheck::default()), ..Members::unchecked(input) }
    }

    /// The next inflated bytes, into `out`: at most the rest of one member, so a member's
    /// trailer comes with the call that gives its last bytes.
    pub(crate) fn inflate(&mut self, out: &mut [u8]) -> io::Result<Inflated> {
        if let Some(message) = &self.failed {
            return Err(self.fault(message.clone()));
        }
        self.next(out).inspect_err(|e| self.failed = Some(e.to_string()))
    }

    fn next(&mut self, out: &mut [u8]) -> io::Result<Inflated> {
        loop {
            match self.at {
                At::End => return Ok(Inflated { n: 0, trailer: None }),
                At::Header => {
                    // After a member, the end of the input is the stream's end.
                    if self.members > 0 && avail(&mut self.input, self.produced)?.is_empty() {
                        self.at = At::End;
                        continue;
                    }
                    self.header()?;
                    self.members += 1;
                    self.inflate.reset(false);
                    self.at = At::Body;
                }
                At::Body => {
                    if out.is_empty() {
                        return Ok(Inflated { n: 0, trailer: None });
                    }
                    let (n, ended) = self.body(out)?;
                    self.produced += n as u64;
                    let trailer = if ended {
                        let trailer = self.trailer()?;
                        self.at = At::Header;
                        Some(trailer)
                    } else {
                        None
                    };
                    if let Some(check) = &mut self.check {
                        check.take(&out[..n], None, trailer, self.produced)?;
                    }
                    if n > 0 || trailer.is_some() {
                        return Ok(Inflated { n, trailer });
                    }
                }
            }
        }
    }

    /// Inflated bytes of the member into `out` (at least one, or the member's end), and
    /// whether the member's deflate stream ended.
    fn body(&mut self, out: &mut [u8]) -> io::Result<(usize, bool)> {
        loop {
            let input = avail(&mut self.input, self.produced)?;
            let eof = input.is_empty();
            let (in_before, out_before) = (self.inflate.total_in(), self.inflate.total_out());
            let flush = if eof { FlushDecompress::Finish } else { FlushDecompress::None };
            let status = self.inflate.decompress(input, out, flush);
            let consumed = (self.inflate.total_in() - in_before) as usize;
            let n = (self.inflate.total_out() - out_before) as usize;
            self.input.consume(consumed);
            match status {
                Ok(Status::StreamEnd) => return Ok((n, true)),
                Ok(_) if n > 0 => return Ok((n, false)),
                Ok(_) if eof => return Err(self.fault(TRUNCATED)),
                Ok(_) => {}
                Err(e) => return Err(self.fault(format!("corrupt deflate stream: {e}"))),
            }
        }
    }

    /// Reads a member's header (RFC 1952, 2.3): the magic bytes, the method (deflate), no
    /// reserved flag, and the optional fields skipped (their CRC-16 checked when there is one).
    /// A name or a comment is skipped, not kept: memory stays constant however long they are.
    fn header(&mut self) -> io::Result<()> {
        // Bytes that cannot start a member are not one cut short.
        let start = avail(&mut self.input, self.produced)?;
        if start.first().is_some_and(|&b| b != 0x1f) || start.get(1).is_some_and(|&b| b != 0x8b) {
            return Err(self.fault(BAD_HEADER));
        }
        let mut fixed = [0u8; 10];
        self.exact(&mut fixed)?;
        if fixed[0] != 0x1f || fixed[1] != 0x8b || fixed[2] != 8 || fixed[3] & FRESERVED != 0 {
            return Err(self.fault(BAD_HEADER));
        }
        let flags = fixed[3];
        let mut crc = (flags & FHCRC != 0).then(Crc::new);
        let feed = |crc: &mut Option<Crc>, bytes: &[u8]| {
            if let Some(c) = crc {
                c.update(bytes);
            }
        };
        feed(&mut crc, &fixed);
        if flags & FEXTRA != 0 {
            let mut len = [0u8; 2];
            self.exact(&mut len)?;
            feed(&mut crc, &len);
            let mut left = usize::from(u16::from_le_bytes(len));
            while left > 0 {
                let avail = more(&mut self.input, self.produced)?;
                let k = avail.len().min(left);
                feed(&mut crc, &avail[..k]);
                self.input.consume(k);
                left -= k;
            }
        }
        for field in [FNAME, FCOMMENT] {
            if flags & field != 0 {
                self.skip_to_nul(&mut crc)?;
            }
        }
        if let Some(crc) = crc {
            let mut sum = [0u8; 2];
            self.exact(&mut sum)?;
            if u16::from_le_bytes(sum) != crc.sum() as u16 {
                return Err(self.fault(BAD_HEADER));
            }
        }
        Ok(())
    }

    /// Skips a zero-terminated field, its bytes (and the zero) fed to the header's CRC. One
    /// longer than [`MAX_FIELD`] is a fault: a stream that never gets past its header would
    /// otherwise be read to its end for nothing.
    fn skip_to_nul(&mut self, crc: &mut Option<Crc>) -> io::Result<()> {
        let mut seen = 0;
        loop {
            let avail = more(&mut self.input, self.produced)?;
            let (k, done) = match memchr::memchr(0, avail) {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            seen += k - usize::from(done);
            if seen > MAX_FIELD {
                return Err(self.fault(FIELD_TOO_LONG));
            }
            if let Some(c) = crc {
                c.update(&avail[..k]);
            }
            self.input.consume(k);
            if done {
                return Ok(());
            }
        }
    }

    /// A member's trailer, after its deflate stream.
    fn trailer(&mut self) -> io::Result<Trailer> {
        let mut t = [0u8; 8];
        self.exact(&mut t)?;
        let [c0, c1, c2, c3, l0, l1, l2, l3] = t;
        Ok(Trailer { crc: u32::from_le_bytes([c0, c1, c2, c3]), len: u32::from_le_bytes([l0, l1, l2, l3]) })
    }

    /// Fills `out` from the input, or the stream ends early.
    fn exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        let mut got = 0;
        while got < out.len() {
            let avail = more(&mut self.input, self.produced)?;
            let k = avail.len().min(out.len() - got);
            out[got..got + k].copy_from_slice(&avail[..k]);
            self.input.consume(k);
            got += k;
        }
        Ok(())
    }

    fn fault(&self, message: impl Into<String>) -> io::Error {
        fault_at(self.produced, message)
    }
}

impl<R: BufRead> Read for Members<R> {
    /// The stream's bytes; only for a decoder that checks its members itself.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        debug_assert!(self.check.is_some(), "an unchecked decoder is read through `inflate`");
        loop {
            let got = self.inflate(out)?;
            if got.n > 0 || got.trailer.is_none() || out.is_empty() {
                return Ok(got.n);
            }
        }
    }
}

/// The input's next bytes (none at its end). Its own faults become the layer's, `produced`
/// bytes in, as flate2's decoder reported them before this one.
fn avail<R: BufRead>(input: &mut R, produced: u64) -> io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fault_at(produced, e.to_string())),
        }
    }
    input.fill_buf()
}

/// The input's next bytes inside a member: some, or the stream ends early.
fn more<R: BufRead>(input: &mut R, produced: u64) -> io::Result<&[u8]> {
    match avail(input, produced)? {
        [] => Err(fault_at(produced, TRUNCATED)),
        bytes => Ok(bytes),
    }
}

/// The longest name or comment a header may hold, as flate2's decoder allowed.
const MAX_FIELD: usize = 65_535;
/// The message of a name or a comment longer than that.
const FIELD_TOO_LONG: &str = "gzip header field too long";
/// The message of a stream that ends inside a member.
const TRUNCATED: &str = "the gzip stream ends early (truncated file)";
/// The message of a member whose header is not gzip's.
const BAD_HEADER: &str = "invalid gzip header";

/// A fault of the gzip layer, `produced` uncompressed bytes in.
fn fault_at(produced: u64, message: impl Into<String>) -> io::Error {
    io::Error::other(GzipFault { produced, message: message.into() })
}

/// The running checksum of a member, taken a buffer at a time, in order: each buffer's CRC-32
/// computed here, or given when another thread computed it, and combined.
#[derive(Default)]
pub(crate) struct MemberCheck {
    crc: Crc,
}

impl MemberCheck {
    /// Takes the next bytes of the member (`done`: their checksum, when it is already
    /// computed), and, when they end it, checks its trailer: a fault at `produced` (the
    /// uncompressed offset of the member's end) when it does not match.
    pub(crate) fn take(
        &mut self,
        bytes: &[u8],
        done: Option<Crc>,
        trailer: Option<Trailer>,
        produced: u64,
    ) -> io::Result<()> {
        match done {
            Some(c) => self.crc.combine(&c),
            None => self.crc.update(bytes),
        }
        if let Some(t) = trailer {
            let (crc, len) = (self.crc.sum(), self.crc.amount());
            self.crc.reset();
            if t.crc != crc {
                return Err(fault_at(produced, "corrupt gzip stream does not have a matching checksum"));
            }
            if t.len != len {
                return Err(fault_at(produced, "corrupt gzip stream does not have a matching length"));
            }
        }
        Ok(())
    }
}

/// The CRC-32 of `bytes`, to send along with them.
pub(crate) fn crc_of(bytes: &[u8]) -> Crc {
    let mut c = Crc::new();
    c.update(bytes);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, GzBuilder};
    use proptest::prelude::*;
    use std::io::Write;

    fn gz(data: &[u8], builder: GzBuilder) -> Vec<u8> {
        let mut e = builder.write(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Everything a checked decoder reads, or its fault's message and offset.
    fn read_checked(bytes: &[u8]) -> Result<Vec<u8>, (String, u64)> {
        let mut out = Vec::new();
        Members::checked(bytes).read_to_end(&mut out).map_err(|e| {
            let g = e.get_ref().and_then(|i| i.downcast_ref::<GzipFault>()).expect("a gzip fault");
            (g.message.clone(), g.produced)
        })?;
        Ok(out)
    }

    /// Every member's bytes and trailer through an unchecked decoder, `chunk` bytes at a time,
    /// checked by a [`MemberCheck`] that computes each buffer's CRC itself or takes it given
    /// (alternately), as the reader does with the worker's buffers.
    fn read_split(bytes: &[u8], chunk: usize) -> Result<Vec<u8>, String> {
        let mut members = Members::unchecked(bytes);
        let mut check = MemberCheck::default();
        let (mut out, mut buf, mut i) = (Vec::new(), vec![0; chunk], 0);
        loop {
            let got = members.inflate(&mut buf).map_err(|e| e.to_string())?;
            if got.n == 0 && got.trailer.is_none() {
                return Ok(out);
            }
            let part = &buf[..got.n];
            i += 1;
            let done = (i % 2 == 0).then(|| crc_of(part));
            out.extend_from_slice(part);
            check.take(part, done, got.trailer, out.len() as u64).map_err(|e| e.to_string())?;
        }
    }

    #[test]
    fn a_header_s_optional_fields_are_skipped() {
        let data = b"<urlset>some bytes</urlset>".repeat(50);
        let builder = GzBuilder::new().filename("sitemap.xml").comment("made by hand").extra(vec![7; 300]).mtime(1);
        assert_eq!(read_checked(&gz(&data, builder)).unwrap(), data);
        // FHCRC (no encoder here writes it): the header's CRC-16 is checked.
        let plain = gz(&data, GzBuilder::new().filename("a"));
        let end = 10 + 2;
        let mut with = plain[..end].to_vec();
        with[3] |= FHCRC;
        let sum = crc_of(&with).sum() as u16;
        with.extend_from_slice(&sum.to_le_bytes());
        with.extend_from_slice(&plain[end..]);
        assert_eq!(read_checked(&with).unwrap(), data);
        with[end] ^= 1;
        assert_eq!(read_checked(&with).unwrap_err(), (BAD_HEADER.to_string(), 0));
    }

    #[test]
    fn a_fault_stays_a_fault_when_asked_again() {
        let data = b"0123456789".repeat(1000);
        let mut bad = gz(&data, GzBuilder::new());
        let n = bad.len();
        bad[n - 8] ^= 1;
        let mut members = Members::checked(&bad[..]);
        let mut out = Vec::new();
        let first = members.read_to_end(&mut out).unwrap_err().to_string();
        assert!(first.contains("checksum"), "{first}");
        for _ in 0..2 {
            let again = members.read(&mut [0; 64]).unwrap_err().to_string();
            assert_eq!(again, first);
        }
    }

    #[test]
    fn a_name_past_the_longest_a_header_holds_is_a_fault() {
        let data = b"<urlset/>";
        let at_most = "n".repeat(MAX_FIELD);
        assert_eq!(read_checked(&gz(data, GzBuilder::new().filename(at_most.as_str()))).unwrap(), data);
        let longer = format!("{at_most}n");
        let err = read_checked(&gz(data, GzBuilder::new().comment(longer.as_str()))).unwrap_err();
        assert_eq!(err, (FIELD_TOO_LONG.to_string(), 0));
        // Never terminated: the fault comes at the limit, not at the input's end.
        let mut endless = gz(data, GzBuilder::new().filename("x"));
        endless.truncate(10);
        endless.extend(std::iter::repeat_n(b'n', 4 * MAX_FIELD));
        assert_eq!(read_checked(&endless).unwrap_err(), (FIELD_TOO_LONG.to_string(), 0));
    }

    #[test]
    fn members_follow_one_another_and_garbage_after_them_is_a_fault() {
        let (a, b) = (b"first member ".repeat(100), b"second".repeat(3000));
        let mut two = gz(&a, GzBuilder::new());
        two.extend_from_slice(&gz(&b, GzBuilder::new().filename("b")));
        two.extend_from_slice(&gz(b"", GzBuilder::new()));
        let whole = [a.clone(), b.clone()].concat();
        assert_eq!(read_checked(&two).unwrap(), whole);
        for chunk in [1, 7, 4096] {
            assert_eq!(read_split(&two, chunk).unwrap(), whole, "{chunk} bytes at a time");
        }
        let mut garbage = two.clone();
        garbage.extend_from_slice(b"\0\0\0\0");
        assert_eq!(read_checked(&garbage).unwrap_err(), (BAD_HEADER.to_string(), whole.len() as u64));
        assert_eq!(read_checked(b"\x1f\x8b\x09\0\0\0\0\0\0\0").unwrap_err(), (BAD_HEADER.to_string(), 0));
    }

    #[test]
    fn a_stream_cut_anywhere_is_a_fault_not_an_end() {
        let data = b"<url><loc>https://example.com/</loc></url>".repeat(200);
        let whole = gz(&data, GzBuilder::new().filename("x").comment("y"));
        for cut in 0..whole.len() {
            let err = read_checked(&whole[..cut]).expect_err("a fault");
            assert!(err.0 == TRUNCATED || (cut < 2 && err.0 == BAD_HEADER), "cut at {cut}: {err:?}");
        }
    }

    #[test]
    fn a_trailer_that_does_not_match_is_a_fault_at_the_member_s_end() {
        let data = b"0123456789".repeat(10_000);
        let good = gz(&data, GzBuilder::new());
        let n = good.len();
        for (at, message) in [(n - 8, "checksum"), (n - 1, "length")] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            let (got, offset) = read_checked(&bad).unwrap_err();
            assert!(got.contains(message), "{got}");
            assert_eq!(offset, data.len() as u64);
            for chunk in [1000, 65536] {
                let err = read_split(&bad, chunk).unwrap_err();
                assert!(err.contains(message), "{err}");
            }
        }
        let mut body = good.clone();
        body[20] ^= 0xff;
        assert!(read_checked(&body).is_err(), "a damaged deflate stream");
    }

    proptest! {
        /// Any bytes, split into any members, come back as they were, whichever thread
        /// computes which buffer's checksum.
        #[test]
        fn members_round_trip(data in proptest::collection::vec(any::<u8>(), 0..20_000), cuts in proptest::collection::vec(0usize..20_000, 0..4), chunk in 1usize..9000) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.push(0);
            cuts.push(data.len());
            cuts.sort_unstable();
            let stream: Vec<u8> = cuts.windows(2).flat_map(|w| gz(&data[w[0]..w[1]], GzBuilder::new())).collect();
            prop_assert_eq!(read_checked(&stream).unwrap(), data.clone());
            prop_assert_eq!(read_split(&stream, chunk).unwrap(), data);
        }
    }
}
