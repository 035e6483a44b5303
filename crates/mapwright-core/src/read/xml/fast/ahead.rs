//! Reading entries ahead (`read/ahead.rs`), the XML side: the one function the parser and the
//! worker both read the usual `<url>` with ([`usual_at`]), the worker's scan of a buffer just
//! filled ([`scan_ahead`]: from the first `</url>` on, where the parser stands after the entry
//! the buffer's start cut), and the parser's taking of an entry so made ([`State::made`]).

use super::{Clean, Scanned, State, template, usual};
use crate::date::Lastmod;
use crate::loc::{LastOrigin, Loc};
use crate::read::ahead::{Busy, MAX_MADE, Made, MakeScan, Scan};
use std::collections::VecDeque;

/// Entries read ahead between two looks at whether the reader is still busy (an atomic load:
/// a fraction of a percent of four entries' scan). Four, not sixteen: a reader that asks for
/// the buffer waits less (s50k.xml read in 7.30-7.35 against 7.38-7.43 ms, 41 alternating
/// rounds).
const LOOK: usize = 4;

/// How a read with these `loc` and value byte limits makes its [`scan`].
pub(crate) fn scan_ahead(max_loc: usize, max_value: usize) -> MakeScan {
    MakeScan { make: scan, max_loc, max_value }
}

/// The reader's scan for the usual entry, run after each `</url>` in the bytes it is given:
/// entry after entry while they are usual, and after an entry that is not (the parser reads
/// it itself), again from the next `</url>`; up to [`MAX_MADE`] entries, and while the reader
/// is busy (looked at every [`LOOK`] entries). It keeps its own state (the last entry's layout,
/// the last origin) from buffer to buffer, as the parser does.
fn scan(max_loc: usize, max_value: usize) -> Scan {
    let limits = (max_loc, max_value);
    let mut s = Box::<Scanned>::default();
    let mut last = LastOrigin::default();
    let end_tag = memchr::memmem::Finder::new(b"</url>");
    Box::new(move |b: &[u8], out: &mut VecDeque<Made>, busy: Busy<'_>| {
        let mut from = 0;
        while let Some(i) = end_tag.find(&b[from..]) {
            let mut at = from + i + b"</url>".len();
            while let Some(loc) = usual_at(&b[at..], &mut s, &mut last, limits) {
                if s.end == 0 || out.len() == MAX_MADE || (out.len() % LOOK == 0 && !busy.now()) {
                    return;
                }
                let u = &s.usual;
                out.push_back(Made {
                    at: at as u64,
                    url: s.url,
                    end: s.end,
                    loc_tag: s.loc_at.0,
                    loc_lines: s.loc_lines,
                    lines: s.lines,
                    loc,
                    lastmod: u.lastmod,
                    changefreq: u.changefreq,
                    priority: u.priority,
                });
                at += s.end;
            }
            from = at;
        }
    })
}

/// The usual entry (see [`usual`]) at the start of `b`, read by the template or the usual scan
/// into `s`, and its `loc`: the reader's function ([`State::fast_usual`]) and the worker's
/// (`ahead.rs`), which must give the same entry for the same bytes.
#[inline(always)]
pub(super) fn usual_at(b: &[u8], s: &mut Scanned, last: &mut LastOrigin, limits: (usize, usize)) -> Option<Loc> {
    if !(template::scan_template(b, s, last, limits) || usual::scan_usual(b, s, last, limits)) {
        return None;
    }
    Loc::from_xml(&b[s.loc_at.1..], &s.loc)
}

impl State {
    /// An entry the worker read ahead, as [`State::fast_usual`] gives it: the scan's spans that
    /// [`State::take_clean`] uses set as the parser's own scan would have set them.
    pub(super) fn made(&mut self, m: crate::read::ahead::Made) -> (Loc, Clean) {
        self.fast_backoff = 0;
        let s = &mut self.scanned;
        (s.url, s.end, s.loc_lines, s.lines) = (m.url, m.end, m.loc_lines, m.lines);
        let c = Clean {
            loc_tag: m.loc_tag,
            lastmod: m.lastmod.map(Lastmod::W3c),
            changefreq: m.changefreq,
            priority: m.priority,
            lines_exact: true,
        };
        (m.loc, c)
    }
}
