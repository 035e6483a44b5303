//! The map of a sitemap's previous read (24 bytes a URL: key hash, content hash, row id) and
//! what this read makes of it: which URLs to stage, which are gone, the set to save. Split from
//! `ingest.rs`, which owns the SQL of the write path.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{StagedRow, content_hash};
use crate::UrlRecord;
use crate::sql::{clean, loc_hash};

/// Where a URL of the map stands in this read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Not listed yet (a URL of the previous read only).
    No,
    /// Listed, as the previous read listed it: not staged.
    Same,
    /// Listed and staged, as row `seq`.
    Staged,
}

/// A URL of the map: the previous read's, or one this read listed.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// What the previous read said of it (a hash), when `prev`.
    prev_content: u64,
    /// What this read said of it last.
    content: u64,
    /// Its staged row, when `seen` is `Staged`.
    seq: i64,
    /// The previous read listed it.
    prev: bool,
    seen: Seen,
}

/// A hasher for keys that are already uniform hashes (the first bytes of a SHA-256).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

/// The sitemap's previous URL set and what the read under way said so far (see the module's
/// documentation): the stage's memory, at most the previous read's URLs plus this read's, each
/// bounded by the protocol's 50,000.
#[derive(Clone, Default)]
pub(crate) struct Known {
    slots: HashMap<u128, Slot, BuildHasherDefault<KeyHasher>>,
    /// Staged rows that a later entry of the same URL replaced (the last entry counts).
    pub(crate) superseded: Vec<i64>,
    next_seq: i64,
    /// The previous set came from `sitemap_url_sets` (else from the live tables: the merge
    /// writes it).
    pub(crate) cached: bool,
    /// Rows classified and not written yet (SQLite: fewer than [`STAGE_CHUNK`](super::STAGE_CHUNK);
    /// PostgreSQL: fewer than [`STAGE_MEMORY`](super::held::STAGE_MEMORY), the rest spilled).
    pub(crate) pending: Vec<StagedRow<'static>>,
    /// PostgreSQL: the rows held past [`STAGE_MEMORY`](super::held::STAGE_MEMORY), in a file.
    pub(crate) spill: Option<super::held::Spill>,
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Known")
            .field("urls", &self.slots.len())
            .field("staged", &self.next_seq)
            .field("superseded", &self.superseded.len())
            .field("cached", &self.cached)
            .finish()
    }
}

/// A URL of the sitemap's live links, to rebuild its set: loc_hash, lastmod, changefreq,
/// priority, removed.
pub(crate) type LiveRow = (Vec<u8>, Option<String>, Option<String>, Option<f64>, bool);

/// Bytes of an entry of a stored set: the key, then the content hash (little-endian).
const ENTRY: usize = 24;

/// Set on the content hash of a URL rebuilt from a removed row: it never equals what a read
/// says, so the URL is staged and comes back from removal.
const REMOVED: u64 = 1 << 63 | 1;

/// What a merge does, from the map: counts, the removed URLs' keys, the next stored set.
pub(crate) struct Plan {
    /// Staged rows of URLs new to the sitemap (after superseded ones).
    pub(crate) new: i64,
    /// Staged rows of URLs it listed before.
    pub(crate) changed_rows: i64,
    /// Of those, the URLs whose content hash differs from the previous read's.
    pub(crate) changed: i64,
    /// Staged rows in all.
    pub(crate) staged: i64,
    /// Distinct URLs of this read.
    pub(crate) distinct: i64,
    /// Keys of the URLs the previous read listed and this one did not (after a complete read).
    pub(crate) gone: Vec<[u8; 16]>,
    /// The set to store: entries and bytes.
    pub(crate) set: (i64, Vec<u8>),
}

impl Known {
    /// The map of a stored set; `None` when the bytes are not one (then it is rebuilt).
    pub(crate) fn from_set(body: &[u8]) -> Option<Known> {
        if body.len() % ENTRY != 0 {
            return None;
        }
        let mut known = Known { cached: true, ..Known::default() };
        known.slots.reserve(body.len() / ENTRY);
        for entry in body.chunks_exact(ENTRY) {
            let key = u128::from_le_bytes(entry[..16].try_into().ok()?);
            let content = u64::from_le_bytes(entry[16..].try_into().ok()?);
            known.slots.insert(key, Slot { prev_content: content, content, seq: 0, prev: true, seen: Seen::No });
        }
        Some(known)
    }

    /// The map rebuilt from the sitemap's links: (loc_hash, lastmod, changefreq, priority,
    /// removed) of each URL row.
    pub(crate) fn from_rows(rows: Vec<LiveRow>) -> Known {
        let mut known = Known::default();
        known.slots.reserve(rows.len());
        for (hash, lastmod, changefreq, priority, removed) in rows {
            let Ok(key) = <[u8; 16]>::try_from(hash.as_slice()) else { continue };
            let mut content = content_hash(lastmod.as_deref(), changefreq.as_deref(), priority);
            if removed {
                content = REMOVED;
            }
            known.slots.insert(
                u128::from_le_bytes(key),
                Slot { prev_content: content, content, seq: 0, prev: true, seen: Seen::No },
            );
        }
        known
    }

    /// Looks a batch up in the map: the rows to stage, in reading order. An unchanged URL is
    /// not staged; a URL listed again after it was staged is staged again and its earlier row
    /// superseded.
    pub(crate) fn classify<'a>(&mut self, urls: &'a [UrlRecord]) -> Vec<StagedRow<'a>> {
        let mut rows = Vec::new();
        for u in urls {
            let loc = clean(&u.loc);
            let hash: [u8; 16] = loc_hash(&loc).try_into().unwrap_or([0; 16]);
            let lastmod = u.lastmod.as_deref().map(clean);
            let changefreq = u.changefreq.as_deref().map(clean);
            let priority = u.priority.filter(|p| p.is_finite());
            let content = content_hash(lastmod.as_deref(), changefreq.as_deref(), priority);
            let seq = self.next_seq;
            let kind = match self.slots.get_mut(&u128::from_le_bytes(hash)) {
                Some(slot) => {
                    if slot.seen == Seen::Staged {
                        self.superseded.push(slot.seq);
                    } else if slot.prev && slot.prev_content == content {
                        slot.seen = Seen::Same;
                        slot.content = content;
                        continue;
                    }
                    slot.seen = Seen::Staged;
                    slot.seq = seq;
                    slot.content = content;
                    i16::from(slot.prev)
                }
                None => {
                    let slot = Slot { prev_content: 0, content, seq, prev: false, seen: Seen::Staged };
                    self.slots.insert(u128::from_le_bytes(hash), slot);
                    0
                }
            };
            self.next_seq += 1;
            rows.push(StagedRow { seq, kind, loc, loc_hash: hash, lastmod, changefreq, priority });
        }
        rows
    }

    /// What the merge does: after a complete read (`sweep`) the previous read's URLs not seen
    /// are removed, else they stay.
    pub(crate) fn plan(&self, sweep: bool) -> Plan {
        let mut plan = Plan {
            new: 0,
            changed_rows: 0,
            changed: 0,
            staged: 0,
            distinct: 0,
            gone: Vec::new(),
            set: (0, Vec::with_capacity(self.slots.len() * ENTRY)),
        };
        for (key, slot) in &self.slots {
            let content = match slot.seen {
                Seen::No if sweep => {
                    plan.gone.push(key.to_le_bytes());
                    continue;
                }
                Seen::No => slot.prev_content,
                Seen::Same => {
                    plan.distinct += 1;
                    slot.content
                }
                Seen::Staged => {
                    plan.distinct += 1;
                    plan.staged += 1;
                    if slot.prev {
                        plan.changed_rows += 1;
                        plan.changed += i64::from(slot.content != slot.prev_content);
                    } else {
                        plan.new += 1;
                    }
                    slot.content
                }
            };
            plan.set.0 += 1;
            plan.set.1.extend_from_slice(&key.to_le_bytes());
            plan.set.1.extend_from_slice(&content.to_le_bytes());
        }
        plan
    }

    /// The previous read's set, as stored.
    pub(crate) fn previous_set(&self) -> (i64, Vec<u8>) {
        let mut body = Vec::with_capacity(self.slots.len() * ENTRY);
        let mut entries = 0;
        for (key, slot) in self.slots.iter().filter(|(_, s)| s.prev) {
            entries += 1;
            body.extend_from_slice(&key.to_le_bytes());
            body.extend_from_slice(&slot.prev_content.to_le_bytes());
        }
        (entries, body)
    }
}
