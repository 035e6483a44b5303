//! The outer gzip layer inflated on a second thread, overlapped with parsing: inflating a
//! sitemap costs about a third of reading it, and on a machine with a second core that third
//! need not wait for the parser (nor the parser for it).
//!
//! An input that may borrow cannot move to another thread, so it stays on the caller's:
//! this thread reads the compressed bytes into recycled buffers and hands them to the worker,
//! which inflates into other recycled buffers and hands those back. The reader that tracks
//! positions (`Tracked`) takes an inflated buffer as its own, without copying its bytes: it
//! copies only the few bytes it keeps from its previous buffer (the start of an entry cut by
//! the buffer's end) into the room left free at the new one's front ([`HEAD`]), and gives the
//! previous buffer back to the worker. Copying every inflated byte out of the worker's buffers
//! was a tenth of a `.xml.gz` read's instructions, all of it on the parser's thread, the one
//! that decides the read's time. Every buffer is allocated up front and circulates, so memory
//! is a constant (about 1 MiB) whatever the file; the worker runs ahead of the parser by at
//! most [`OUT_BUFS`] buffers, and the byte limit still applies where the bytes enter the
//! parser (`Tracked`). A small file (its compressed bytes all read within [`SMALL`]) is
//! inflated here, with no thread: a discovery that opens thousands of small sitemaps a second
//! does not start a thread for each.
//!
//! When it is the only such read in the process, the reader and the worker run on CPUs of
//! their own (`place.rs`), and the reader spins a little before it sleeps waiting for a buffer
//! ([`SPIN`]).
//!
//! The worker also reads the usual entries of the buffer it just filled, which the parser then
//! takes instead of reading them (`ahead.rs`): the worker's spare time turned into parsing. An
//! inflating worker does so while the reader has a buffer waiting; one that copies a plain
//! input keeps its buffer, reading ahead in it, until the reader asks for it, and fills the
//! next one first. Their queues travel with the buffers and are bounded as they are
//! (`MAX_MADE` entries a queue).
//!
//! One channel carries everything the worker says (an inflated buffer, a compressed buffer
//! it is done with, the end, a fault), so this thread waits on one thing only and neither side
//! can wait for the other in a circle; that channel holds every buffer in circulation, so the
//! worker never blocks on it.
//!
//! The compressed bytes are read on this thread, whether the input is borrowed or the
//! reader's own, and sent to the worker: the inflate is the `.gz` read's critical path, and
//! this thread has time to spare (s50k.xml.gz read in 9.74 against 9.98 ms with the worker
//! reading them itself, medians of 31 alternating runs). An owned input that is not gzip goes
//! to the worker whole, which reads the bytes as they are into the buffers ([`read_ahead`]),
//! so that the copy out of the page cache overlaps with parsing too.
//!
//! The worker inflates each gzip member without its checksum (`members.rs`): it computes a
//! buffer's CRC-32 itself, unless this thread is waiting for that buffer or waited for the last
//! one, which then computes it as it takes the buffer, in time it would have spent waiting;
//! this thread checks each member's trailer as it ends ([`MemberCheck`]). So the checksum lands
//! on whichever thread has the time, as reading ahead does.
//!
//! The input layer (`input.rs`) calls this module and nothing here calls back into it.

use crate::read::ahead::{Busy, MAX_MADE, Made, MakeScan, Scan};
use crate::read::members::{MemberCheck, Members, Trailer, crc_of};
use crate::read::place::Placement;
use flate2::Crc;
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvError, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

/// `Read::read` of a reader whose `BufRead` does the work: a copy out of `fill_buf`, so the bytes
/// and errors of `read` and of `fill_buf` are the same by construction. Public for the other
/// crates' buffered readers (mapwright-fetch's bodies), so that this rule is written once.
pub fn read_buffered(r: &mut impl BufRead, out: &mut [u8]) -> io::Result<usize> {
    let avail = r.fill_buf()?;
    let n = avail.len().min(out.len());
    out[..n].copy_from_slice(&avail[..n]);
    r.consume(n);
    Ok(n)
}

/// Compressed bytes read at a time.
const IN_CHUNK: usize = 64 * 1024;
/// Compressed buffers in circulation.
const IN_BUFS: usize = 3;
/// The size of an inflated buffer, and of `Tracked`'s own (`input.rs` takes it from here), so
/// either serves as the other.
pub(crate) const OUT_CHUNK: usize = 128 * 1024;
/// Room left free at the front of an inflated buffer (the worker inflates after it), for the
/// bytes the reader keeps from its previous buffer: the start of an entry, a few hundred bytes.
/// Longer kept runs are copied the ordinary way.
pub(crate) const HEAD: usize = 8 * 1024;
/// Inflated buffers in circulation: how far the worker may run ahead.
const OUT_BUFS: usize = 4;
/// Spent inflated buffers go back to the worker this many at a time (or all of them when this
/// thread is about to wait for one). The worker, once ahead, waits for buffers; woken for each
/// one it was woken about 85 times in a 10 MB read, and each wake-up is a new choice of its
/// CPU, which put it on the parser's often enough to serialise them: three at a time, the read
/// of s50k.xml.gz took 11.8 ms instead of 12.7 (`examples/read_text.rs`, medians of 3 x 31
/// alternating runs, load 1.1; 4 at a time was the same, 5, the worker woken only when this
/// thread waits, 13.7).
const GIVE_BACK: usize = 3;
/// A gzip stream whose compressed bytes end within this many is inflated on this thread.
const SMALL: usize = 64 * 1024;
/// How long the reader spins waiting for a buffer before it sleeps: a worker that keeps its
/// buffer until asked (`ahead.rs`: [`Busy`]) looks every few entries (about 3 us) and copies a
/// buffer in about 20, an inflating one fills a buffer in about 80, where a wake-up from sleep
/// costs tens of microseconds on a virtual machine (s50k.xml.gz read in 9.34 ms spinning,
/// 9.71 sleeping, medians of 31 alternating runs). Only while the read is the process's one
/// threaded read, its threads on CPUs of their own, and nothing else in the process needs a
/// CPU (`place.rs`): else the CPU spun is another thread's, or the worker's.
const SPIN: Duration = Duration::from_micros(100);

/// What the reader and its worker tell each other about reading ahead ([`Busy`]).
#[derive(Default)]
struct Pace {
    /// The worker copies a plain input: it keeps the buffer it filled, reading ahead in it,
    /// until the reader asks for it, and it gets spent buffers back at once. Else it inflates
    /// a gzip stream, whose checksums travel with its buffers.
    keep: bool,
    /// Buffers the worker sent that the reader has not taken yet.
    queued: AtomicUsize,
    /// The reader waits for the next buffer: a worker that keeps its buffer until then hands
    /// it over, and one that inflates leaves the buffer's checksum to the reader.
    asking: AtomicBool,
    /// The reader waited for the last buffer it took: it has time to spare, and an inflating
    /// worker leaves it the next buffer's checksum too (cleared as the worker reads it).
    waited: AtomicBool,
}

/// What this thread sends the worker.
enum In {
    /// Compressed bytes.
    Data(Vec<u8>),
    /// The compressed input failed: the decoder sees the error where it would have.
    Fault(io::Error),
}

/// What the worker sends this thread.
enum Out {
    /// Inflated bytes, and of a gzip stream's bytes, their CRC-32 when the worker computed it
    /// and the trailer of the member they end.
    Data(Filled, Option<Crc>, Option<Trailer>),
    /// A compressed buffer consumed: fill it again.
    Spent(Vec<u8>),
    /// The gzip stream ended.
    End,
    /// The gzip stream failed (already a `GzipFault` from [`Members`]).
    Fault(io::Error),
}

/// The worker's side of the compressed bytes: a `BufRead` over the buffers it is sent.
struct Feed {
    rx: Receiver<In>,
    back: SyncSender<Out>,
    cur: Vec<u8>,
    pos: usize,
    /// The compressed input ended (its sender is gone after its last buffer).
    ended: bool,
}

impl Read for Feed {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, out)
    }
}

impl BufRead for Feed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.cur.len() && !self.ended {
            let spent = std::mem::take(&mut self.cur);
            if spent.capacity() > 0 {
                // Never blocks: the channel holds every buffer in circulation.
                let _ = self.back.send(Out::Spent(spent));
            }
            self.pos = 0;
            match self.rx.recv() {
                Ok(In::Data(b)) => self.cur = b,
                Ok(In::Fault(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                // No more input: the end of the compressed bytes.
                Err(_) => self.ended = true,
            }
        }
        Ok(&self.cur[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.cur.len());
    }
}

/// The worker's side of reading ahead (`ahead.rs`).
struct AheadWork {
    scan: Scan,
    /// Whether the reader still wants entries read ahead (cleared by [`Threaded::stop_ahead`]
    /// when a buffer's all went unused: it is not reading that way).
    wanted: Arc<AtomicBool>,
    /// Queues of made entries the reader is done with, to fill again.
    spent: Receiver<VecDeque<Made>>,
    /// Buffers read ahead in a row without an entry made.
    dry: u8,
}

impl AheadWork {
    /// The usual entries of `bytes` (a buffer just filled), read while the reader is busy
    /// ([`Busy`]), still wants them, and they were found lately.
    fn read(&mut self, bytes: &[u8], pace: &Pace) -> VecDeque<Made> {
        let busy = Busy { queued: &pace.queued, asking: pace.keep.then_some(&pace.asking) };
        if self.dry >= 2 || !busy.now() || !self.wanted.load(Ordering::Relaxed) {
            return VecDeque::new();
        }
        let mut made = self.spent.try_recv().unwrap_or_default();
        made.clear();
        (self.scan)(bytes, &mut made, busy);
        debug_assert!(made.len() <= MAX_MADE);
        self.dry = if made.is_empty() { self.dry + 1 } else { 0 };
        made
    }
}

/// What the worker fills its buffers from.
enum Src {
    /// An owned input that is not gzip, copied as it is.
    Plain(Box<dyn Read + Send>),
    /// The compressed bytes this thread sends it, inflated, each member's checksum left to
    /// the worker's loop or to this thread.
    Gzip(Box<Members<Feed>>),
}

/// A buffer the worker filled (from [`HEAD`] to `filled`), and how its filling stopped.
struct Fill {
    buf: Box<[u8]>,
    filled: usize,
    fault: Option<io::Error>,
    /// The stream ended within it.
    ended: bool,
    /// A gzip member ended with it (the buffer stops there): its trailer.
    trailer: Option<Trailer>,
}

impl Fill {
    /// `buf` filled from `src`, as far as it goes, or to the end of a gzip member.
    fn from(src: &mut Src, mut buf: Box<[u8]>) -> Fill {
        let mut filled = HEAD;
        let mut trailer = None;
        let fault = loop {
            if filled == buf.len() {
                break None;
            }
            let got = match src {
                Src::Plain(r) => r.read(&mut buf[filled..]).map(|n| (n, None)),
                Src::Gzip(m) => m.inflate(&mut buf[filled..]).map(|i| (i.n, i.trailer)),
            };
            match got {
                Ok((0, None)) => break None,
                Ok((n, None)) => filled += n,
                Ok((n, ended)) => {
                    filled += n;
                    trailer = ended;
                    break None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Some(e),
            }
        };
        let ended = filled < buf.len() && trailer.is_none();
        Fill { buf, filled, fault, ended, trailer }
    }
}

/// Whether the worker computes the CRC-32 of the gzip bytes it just inflated (the `nth` buffer):
/// not when this thread is waiting for them or waited for the last ones, as it then has the
/// time; it computes it itself, and the worker goes on to the next buffer that much sooner.
/// Waiting now alone left the reader idle between buffers while the worker summed 63 to 72 of
/// a 10 MB read's 84 (bench/read/RESULTS.md). Test builds alternate, so that both ways are
/// taken in every threaded test.
fn worker_sums(pace: &Pace, nth: usize) -> bool {
    let spare = pace.waited.swap(false, Ordering::AcqRel) || pace.asking.load(Ordering::Acquire);
    if cfg!(test) { nth % 2 == 0 } else { !spare }
}

/// Fills the buffers it is given (from [`HEAD`] on) from `src` (inflating, or reading an owned
/// input) until the stream ends, fails, or this thread is gone; reads entries ahead in them
/// when it has time (`ahead`, paced by `pace`). A worker that keeps its buffer until the
/// reader asks for it ([`Busy`]) fills the next one first, when one is free, so that the one
/// after the buffer asked for is ready too when the reader asks again.
fn work(mut src: Src, free: Receiver<Box<[u8]>>, back: SyncSender<Out>, pace: Arc<Pace>, mut ahead: Option<AheadWork>) {
    let keep = pace.keep && ahead.is_some();
    let gzip = !pace.keep;
    let mut ready: Option<Fill> = None;
    for nth in 0.. {
        let fill = match ready.take() {
            Some(f) => f,
            None => match free.recv() {
                Ok(buf) => Fill::from(&mut src, buf),
                Err(_) => return,
            },
        };
        if keep && fill.fault.is_none() && !fill.ended {
            ready = free.try_recv().ok().map(|buf| Fill::from(&mut src, buf));
        }
        let Fill { buf, filled, fault, ended, trailer } = fill;
        if filled > HEAD || trailer.is_some() {
            let crc = (gzip && worker_sums(&pace, nth)).then(|| crc_of(&buf[HEAD..filled]));
            let made = ahead.as_mut().map(|a| a.read(&buf[HEAD..filled], &pace)).unwrap_or_default();
            pace.queued.fetch_add(1, Ordering::Release);
            if back.send(Out::Data(Filled { buf, len: filled - HEAD, made }, crc, trailer)).is_err() {
                return;
            }
        }
        match fault {
            Some(e) => {
                let _ = back.send(Out::Fault(e));
                return;
            }
            None if ended => {
                let _ = back.send(Out::End);
                return;
            }
            None => {}
        }
    }
}

/// The outer gzip layer, inflated on a worker thread: its buffers are taken whole
/// ([`Threaded::next_filled`]) and given back ([`Threaded::give_back`]).
pub(crate) struct Threaded<'a> {
    /// The compressed input, read here and sent to the worker; `None` once it has ended or
    /// failed, or from the start when the worker copies a plain input itself.
    input: Option<Box<dyn BufRead + Send + 'a>>,
    to_worker: Option<SyncSender<In>>,
    free: Option<SyncSender<Box<[u8]>>>,
    from_worker: Receiver<Out>,
    /// Spent inflated buffers held back, up to [`GIVE_BACK`].
    spare: Vec<Box<[u8]>>,
    /// The worker said the end or a fault: nothing more comes.
    finished: bool,
    fault: Option<io::Error>,
    handle: Option<JoinHandle<()>>,
    /// Reading ahead (`ahead.rs`): its pace, whether the reader wants entries read ahead, and
    /// where spent queues of them go back.
    pace: Arc<Pace>,
    wanted: Option<Arc<AtomicBool>>,
    spent: SyncSender<VecDeque<Made>>,
    /// Counted, and the reader's CPUs kept, until the worker is joined (`Drop`, which runs
    /// before the fields' drops).
    placement: Placement,
    /// A gzip stream's running checksum, and its inflated bytes taken so far.
    check: Option<MemberCheck>,
    produced: u64,
}

impl Threaded<'_> {
    /// Fills `buf` with the next compressed bytes and sends it; at the input's end, closes
    /// the worker's input instead. The bytes are read into `buf` itself: a buffered input
    /// whose buffer is empty (a file's, after the bytes read ahead) reads them straight in,
    /// not through its own buffer and a copy on this thread.
    fn feed(&mut self, mut buf: Vec<u8>) {
        let Some(input) = self.input.as_mut() else {
            return;
        };
        // A no-op but after a short read: the buffer comes back as long as it was sent.
        buf.resize(IN_CHUNK, 0);
        let msg = loop {
            match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => {
                    buf.truncate(n);
                    break Some(In::Data(buf));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Some(In::Fault(e)),
            }
        };
        match msg {
            Some(In::Data(b)) => {
                if let Some(tx) = &self.to_worker {
                    let _ = tx.send(In::Data(b));
                }
            }
            Some(fault) => {
                self.input = None;
                if let Some(tx) = self.to_worker.take() {
                    let _ = tx.send(fault);
                }
            }
            None => {
                self.input = None;
                self.to_worker = None;
            }
        }
    }
}

/// A buffer the worker filled: the bytes it holds from [`HEAD`] on, and the entries read ahead
/// in them.
pub(crate) struct Filled {
    pub buf: Box<[u8]>,
    pub len: usize,
    pub made: VecDeque<Made>,
}

impl Threaded<'_> {
    /// The next buffer of inflated bytes, how many it holds from [`HEAD`] on, and the entries
    /// read ahead in them; `None` at the end. The buffer is the caller's until it gives it
    /// back: every buffer must come back (or one of [`OUT_CHUNK`] bytes in its place), or the
    /// worker runs out of them.
    pub(crate) fn next_filled(&mut self) -> io::Result<Option<Filled>> {
        loop {
            if self.finished {
                return match self.fault.take() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
            let msg = match self.from_worker.try_recv() {
                Ok(m) => Ok(m),
                Err(_) => {
                    // About to wait: the worker gets every buffer held back first.
                    self.flush_spare();
                    self.wait()
                }
            };
            match msg {
                Ok(Out::Data(filled, crc, trailer)) => {
                    self.pace.queued.fetch_sub(1, Ordering::Release);
                    if let Some(check) = &mut self.check {
                        self.produced += filled.len as u64;
                        let bytes = &filled.buf[HEAD..HEAD + filled.len];
                        if let Err(e) = check.take(bytes, crc, trailer, self.produced) {
                            self.finished = true;
                            return Err(e);
                        }
                    }
                    if filled.len > 0 {
                        return Ok(Some(filled));
                    }
                    // An empty gzip member's trailer alone.
                    self.give_back(filled.buf);
                }
                Ok(Out::Spent(b)) => self.feed(b),
                Ok(Out::End) => self.finished = true,
                Ok(Out::Fault(e)) => {
                    self.finished = true;
                    self.fault = Some(e);
                }
                Err(_) => {
                    self.finished = true;
                    self.fault = Some(io::Error::other("the gzip worker stopped"));
                }
            }
        }
    }

    /// The worker's next message, waited for. The worker is told ([`Pace::asking`]: one that
    /// keeps its buffer until asked hands it over, [`Busy`]; one that inflates leaves the next
    /// buffer's checksum to this thread), and, while this is the process's one threaded read,
    /// this thread spins for up to [`SPIN`] before it sleeps.
    fn wait(&mut self) -> Result<Out, RecvError> {
        self.pace.asking.store(true, Ordering::Release);
        let spun = if self.placement.may_spin() { self.spin() } else { None };
        let msg = spun.map_or_else(|| self.from_worker.recv(), Ok);
        self.pace.asking.store(false, Ordering::Release);
        if matches!(msg, Ok(Out::Data(..))) {
            self.pace.waited.store(true, Ordering::Release);
        }
        msg
    }

    /// The worker's next message if it comes within [`SPIN`].
    fn spin(&self) -> Option<Out> {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                match self.from_worker.try_recv() {
                    Ok(m) => return Some(m),
                    Err(TryRecvError::Disconnected) => return None,
                    Err(TryRecvError::Empty) => std::hint::spin_loop(),
                }
            }
            if start.elapsed() >= SPIN {
                return None;
            }
        }
    }

    /// A buffer for the worker to inflate into again (sent with others, [`GIVE_BACK`]): one
    /// that had grown is replaced by one of the usual size, so memory stays what it was.
    pub(crate) fn give_back(&mut self, buf: Box<[u8]>) {
        let buf = if buf.len() == OUT_CHUNK { buf } else { vec![0; OUT_CHUNK].into_boxed_slice() };
        self.spare.push(buf);
        // A worker that keeps its buffer until asked has the next one to fill at once: else
        // the reader, asking, would wait for its copy.
        if self.pace.keep || self.spare.len() >= GIVE_BACK {
            self.flush_spare();
        }
    }

    /// A queue of entries read ahead, spent: the worker fills it again (dropped when it has
    /// enough of them).
    pub(crate) fn give_back_made(&mut self, mut made: VecDeque<Made>) {
        if made.capacity() > 0 {
            made.clear();
            let _ = self.spent.try_send(made);
        }
    }

    /// Tells the worker to read no more entries ahead: they go unused.
    pub(crate) fn stop_ahead(&mut self) {
        if let Some(w) = self.wanted.take() {
            w.store(false, Ordering::Relaxed);
        }
    }

    /// Sends the worker every spent buffer held back.
    fn flush_spare(&mut self) {
        if let Some(free) = &self.free {
            for buf in self.spare.drain(..) {
                // Never blocks: the channel holds every buffer in circulation.
                let _ = free.send(buf);
            }
        }
    }
}

impl Drop for Threaded<'_> {
    fn drop(&mut self) {
        // Closing its channels ends the worker within one buffer's work.
        self.to_worker = None;
        self.free = None;
        if let Some(h) = self.handle.take() {
            while self.from_worker.try_recv().is_ok() {}
            let _ = h.join();
        }
    }
}

/// A reader of the compressed bytes read ahead (`head`), then an input error if there was one.
struct Head {
    head: io::Cursor<Vec<u8>>,
    fault: Option<io::Error>,
}

impl Read for Head {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(out)?;
        match (n, self.fault.take()) {
            (0, Some(e)) => Err(e),
            (_, fault) => {
                self.fault = fault;
                Ok(n)
            }
        }
    }
}

impl BufRead for Head {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.head.position() as usize == self.head.get_ref().len() {
            if let Some(e) = self.fault.take() {
                return Err(e);
            }
        }
        self.head.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.head.consume(amt)
    }
}

/// Where a `Tracked` reader's bytes come from.
pub(crate) enum Source<'a> {
    /// A reader, its bytes copied into the tracking reader's buffer.
    Read(Box<dyn Read + Send + 'a>),
    /// The inflate worker, whose buffers the tracking reader takes whole.
    Swap(Box<Threaded<'a>>),
}

/// The inflated bytes of the gzip stream `input` (its magic bytes already seen): on a worker
/// thread when the stream is larger than [`SMALL`], else here.
pub(crate) fn outer_layer<'a>(mut input: Box<dyn BufRead + Send + 'a>, ahead: Option<MakeScan>) -> Source<'a> {
    // Read ahead to tell a small stream from a large one.
    let (head, fault, ended) = read_head(&mut input, SMALL);
    if ended || fault.is_some() {
        return small_gzip(head, fault);
    }
    // The thread first, so that the bytes read ahead are still here should it not start.
    let Some(worker) = Worker::spawn() else {
        // No thread to be had: inflated here, the bytes read ahead then the rest.
        let rest = io::Cursor::new(head).chain(input);
        return Source::Read(Box::new(Members::checked(rest)));
    };
    let (to_worker, rx) = sync_channel::<In>(IN_BUFS);
    let feed = Feed { rx, back: worker.back.clone(), cur: head, pos: 0, ended: false };
    let mut t = worker.start(Src::Gzip(Box::new(Members::unchecked(feed))), Some((input, to_worker)), ahead);
    for _ in 1..IN_BUFS {
        t.feed(Vec::with_capacity(IN_CHUNK));
    }
    Source::Swap(Box::new(t))
}

/// A gzip stream read whole within its first bytes (`head`, then `fault` if its input failed):
/// inflated here, no thread for it.
fn small_gzip(head: Vec<u8>, fault: Option<io::Error>) -> Source<'static> {
    Source::Read(Box::new(Members::checked(Head { head: io::Cursor::new(head), fault })))
}

/// The bytes of an input that is not gzip and that the reader owns
/// ([`Input::owned`](crate::read::Input::owned)), read on a worker thread when they go past one
/// buffer ([`OUT_CHUNK`]), else here. The worker reads into the same circulating buffers as the inflating one, which the
/// tracking reader takes whole: the copy out of the page cache (or the pipe), about a sixth of
/// a plain file's read on this thread, is done on the other one, overlapped with parsing. A
/// smaller input would not repay the thread.
pub(crate) fn read_ahead(mut input: Box<dyn BufRead + Send>, ahead: Option<MakeScan>) -> Source<'static> {
    let (head, fault, ended) = read_head(&mut input, OUT_CHUNK);
    if ended || fault.is_some() {
        return Source::Read(Box::new(Head { head: io::Cursor::new(head), fault }));
    }
    let src: Box<dyn Read + Send> = Box::new(io::Cursor::new(head).chain(input));
    match Worker::spawn() {
        // The copy is a tenth of the parse: the worker keeps each buffer until asked ([`Busy`]).
        Some(worker) => Source::Swap(Box::new(worker.start(Src::Plain(src), None, ahead))),
        None => Source::Read(src),
    }
}

/// Up to `n` bytes of `input`: the bytes, the fault that stopped them if one did, and whether
/// the input ended within them.
fn read_head(input: &mut (dyn BufRead + Send + '_), n: usize) -> (Vec<u8>, Option<io::Error>, bool) {
    let mut head = Vec::with_capacity(n);
    while head.len() < n {
        match input.fill_buf() {
            Ok([]) => return (head, None, true),
            Ok(b) => {
                let k = b.len().min(n - head.len());
                head.extend_from_slice(&b[..k]);
                input.consume(k);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (head, Some(e), false),
        }
    }
    (head, None, false)
}

/// What the worker is started with: the bytes it reads (inflated or as they are), the buffers
/// it fills, and where it sends them.
type Start = (Src, Receiver<Box<[u8]>>, SyncSender<Out>, Arc<Pace>, Option<AheadWork>);

/// A worker thread started, waiting for its [`Start`].
struct Worker {
    start: SyncSender<Start>,
    back: SyncSender<Out>,
    from_worker: Receiver<Out>,
    handle: JoinHandle<()>,
    placement: Placement,
    /// The thread that spawned it, whose read it is planned for.
    owner: ThreadId,
}

/// A worker started ahead of its read ([`start_worker_early`]), for the next threaded read on
/// the thread that started it.
static EARLY: Mutex<Option<Worker>> = Mutex::new(None);

/// Starts the worker of this thread's next threaded read now. A command that will read one file
/// (the CLI's `read`) calls it before it parses its command line: the thread's start (its
/// stacks, its placement), about 0.24 ms between spawn and work on an AMD EPYC VM
/// (bench/read/RESULTS.md), then overlaps that parse and the file's opening instead of
/// delaying the first inflated buffer. Nothing is pinned until a read takes it; unused, the
/// thread waits for one until the process ends.
pub fn start_worker_early() {
    if let (Some(w), Ok(mut early)) = (Worker::spawn_unpinned(), EARLY.lock()) {
        *early = Some(w);
    }
}

impl Worker {
    /// The thread, or `None` when none can be had: the one started early on this thread if
    /// there is one, else a new one; the reader pinned.
    fn spawn() -> Option<Worker> {
        let here = std::thread::current().id();
        let early = EARLY.lock().ok().and_then(|mut e| e.take_if(|w| w.owner == here));
        let mut worker = early.or_else(Worker::spawn_unpinned)?;
        worker.placement.pin_reader();
        Some(worker)
    }

    /// A new thread, placed but for the reader ([`Placement::pin_reader`]).
    fn spawn_unpinned() -> Option<Worker> {
        let (start, started) = sync_channel::<Start>(1);
        let placement = Placement::plan();
        let place_worker = placement.worker();
        let handle = std::thread::Builder::new()
            .name("mapwright-gunzip".into())
            .spawn(move || {
                place_worker();
                if let Ok((src, free, back, pace, ahead)) = started.recv() {
                    work(src, free, back, pace, ahead);
                }
            })
            .ok()?;
        // The reader's own buffer joins the circulation at its first swap: OUT_BUFS + 1 in
        // all, each either in `free`, with the worker, in `back` or the reader's.
        let (back, from_worker) = sync_channel::<Out>(IN_BUFS + OUT_BUFS + 2);
        Some(Worker { start, back, from_worker, handle, placement, owner: std::thread::current().id() })
    }

    /// Sets the worker to fill buffers from `src`; `feed`, the input this thread reads and
    /// sends it (compressed bytes), when `src` reads from a [`Feed`]. A worker that copies a
    /// plain input keeps its buffer until asked ([`Pace::keep`]).
    fn start<'a>(
        self,
        src: Src,
        feed: Option<(Box<dyn BufRead + Send + 'a>, SyncSender<In>)>,
        ahead: Option<MakeScan>,
    ) -> Threaded<'a> {
        let keep = matches!(src, Src::Plain(_));
        let (free, free_rx) = sync_channel::<Box<[u8]>>(OUT_BUFS + 1);
        for _ in 0..OUT_BUFS {
            // Zeroed once: the worker fills them as they are, each time.
            let _ = free.send(vec![0; OUT_CHUNK].into_boxed_slice());
        }
        let pace = Arc::new(Pace { keep, ..Pace::default() });
        // Spent queues of made entries kept for the worker to fill again; more are dropped
        // (each holds up to `MAX_MADE` entries' room).
        let (spent, spent_rx) = sync_channel::<VecDeque<Made>>(2);
        let wanted = ahead.map(|_| Arc::new(AtomicBool::new(true)));
        let ahead =
            ahead.zip(wanted.clone()).map(|(m, wanted)| AheadWork { scan: m.make(), wanted, spent: spent_rx, dry: 0 });
        let _ = self.start.send((src, free_rx, self.back, pace.clone(), ahead));
        let (input, to_worker) = feed.unzip();
        Threaded {
            input,
            to_worker,
            free: Some(free),
            from_worker: self.from_worker,
            spare: Vec::with_capacity(OUT_BUFS + 1),
            finished: false,
            fault: None,
            handle: Some(self.handle),
            pace,
            wanted,
            spent,
            placement: self.placement,
            check: (!keep).then(MemberCheck::default),
            produced: 0,
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
