//! The map of a sitemap's previous read (24 bytes a URL: key hash, content hash; in reading order) and
//! what this read makes of it: which URLs to stage, which are gone, the set to save. Split from
//! `ingest.rs`, which owns the SQL of the write path.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{StagedRow, content_hash};
use crate::UrlRecord;
use crate::sql::clean;

/// Where a URL of the previous read stands in this read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Not listed yet.
    No,
    /// Listed, as the previous read listed it: not staged.
    Same,
    /// Listed and staged, as row `seq`.
    Staged,
}

/// A URL of the previous read, in the order its merge stored it.
#[derive(Debug, Clone, Copy)]
struct Prev {
    key: u128,
    /// What the previous read said of it (a hash).
    prev_content: u64,
    /// What this read said of it last.
    content: u64,
    /// Its staged row, when `seen` is `Staged`.
    seq: i64,
    /// Where this read listed it last (for the order of the next stored set).
    at: u32,
    seen: Seen,
}

/// A URL this read listed that the previous one did not: always staged.
#[derive(Debug, Clone, Copy)]
struct Fresh {
    key: u128,
    content: u64,
    /// Its staged row (the last entry of the URL).
    seq: i64,
    /// Where this read listed it last.
    at: u32,
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
///
/// The previous set is kept in the order its merge stored it, which is the order its read
/// listed the URLs, and a read is matched against it in that order: a refetch that lists the
/// same URLs in the same order (the common case: a sitemap changes little from one read to the
/// next) compares each URL with the next entry and never probes a hash table, whose random
/// accesses into a few megabytes were most of the cost of a read that changed nothing. The
/// first URL out of that order builds the index of the previous set (`index`), once.
#[derive(Clone, Default)]
pub(crate) struct Known {
    prev: Vec<Prev>,
    /// The entry of `prev` the next URL is expected to be.
    cursor: usize,
    /// `prev`'s keys to their entries, built at the first URL out of the stored order.
    pub(super) index: Option<HashMap<u128, u32, BuildHasherDefault<KeyHasher>>>,
    /// URLs new to the sitemap, in reading order, and their keys to their entries.
    fresh: Vec<Fresh>,
    fresh_index: HashMap<u128, u32, BuildHasherDefault<KeyHasher>>,
    /// Staged rows that a later entry of the same URL replaced (the last entry counts).
    pub(crate) superseded: Vec<i64>,
    next_seq: i64,
    /// URLs read so far (duplicates included): the position of the next one.
    read: u32,
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
            .field("previous", &self.prev.len())
            .field("fresh", &self.fresh.len())
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
    fn prev_entry(key: u128, content: u64) -> Prev {
        Prev { key, prev_content: content, content, seq: 0, at: u32::MAX, seen: Seen::No }
    }

    /// The map of a stored set; `None` when the bytes are not one (then it is rebuilt).
    pub(crate) fn from_set(body: &[u8]) -> Option<Known> {
        if body.len() % ENTRY != 0 {
            return None;
        }
        let mut known = Known { cached: true, ..Known::default() };
        known.prev.reserve_exact(body.len() / ENTRY);
        for entry in body.chunks_exact(ENTRY) {
            let key = u128::from_le_bytes(entry[..16].try_into().ok()?);
            let content = u64::from_le_bytes(entry[16..].try_into().ok()?);
            known.prev.push(Self::prev_entry(key, content));
        }
        Some(known)
    }

    /// The map rebuilt from the sitemap's links: (loc_hash, lastmod, changefreq, priority,
    /// removed) of each URL row.
    pub(crate) fn from_rows(rows: Vec<LiveRow>) -> Known {
        let mut known = Known::default();
        known.prev.reserve_exact(rows.len());
        for (hash, lastmod, changefreq, priority, removed) in rows {
            let Ok(key) = <[u8; 16]>::try_from(hash.as_slice()) else { continue };
            let mut content = content_hash(lastmod.as_deref(), changefreq.as_deref(), priority);
            if removed {
                content = REMOVED;
            }
            known.prev.push(Self::prev_entry(u128::from_le_bytes(key), content));
        }
        known
    }

    /// The entry of the previous set with this key: the expected next one, else looked up.
    fn find_prev(&mut self, key: u128) -> Option<usize> {
        if self.prev.get(self.cursor).is_some_and(|p| p.key == key) {
            return Some(self.cursor);
        }
        if self.prev.is_empty() {
            return None;
        }
        let prev = &self.prev;
        let index = self.index.get_or_insert_with(|| {
            let mut index = HashMap::with_capacity_and_hasher(prev.len(), Default::default());
            for (i, p) in prev.iter().enumerate() {
                index.insert(p.key, i as u32);
            }
            index
        });
        index.get(&key).map(|&i| i as usize)
    }

    /// Looks a batch up in the map: the rows to stage, in reading order. An unchanged URL is
    /// not staged; a URL listed again after it was staged is staged again and its earlier row
    /// superseded.
    pub(crate) fn classify<'a>(&mut self, urls: &'a [UrlRecord]) -> Vec<StagedRow<'a>> {
        let mut rows = Vec::new();
        for u in urls {
            let loc = clean(&u.loc);
            let hash = loc_key(&loc);
            let key = u128::from_le_bytes(hash);
            let lastmod = u.lastmod.as_deref().map(clean);
            let changefreq = u.changefreq.as_deref().map(clean);
            let priority = u.priority.filter(|p| p.is_finite());
            let content = content_hash(lastmod.as_deref(), changefreq.as_deref(), priority);
            let seq = self.next_seq;
            let at = self.read;
            self.read = self.read.saturating_add(1);
            let kind = match self.find_prev(key) {
                Some(i) => {
                    self.cursor = i + 1;
                    let slot = &mut self.prev[i];
                    slot.at = at;
                    if slot.seen == Seen::Staged {
                        self.superseded.push(slot.seq);
                    } else if slot.prev_content == content {
                        slot.seen = Seen::Same;
                        slot.content = content;
                        continue;
                    }
                    slot.seen = Seen::Staged;
                    slot.seq = seq;
                    slot.content = content;
                    1
                }
                None => {
                    match self.fresh_index.get(&key) {
                        Some(&j) => {
                            let slot = &mut self.fresh[j as usize];
                            self.superseded.push(slot.seq);
                            *slot = Fresh { key, content, seq, at };
                        }
                        None => {
                            self.fresh_index.insert(key, self.fresh.len() as u32);
                            self.fresh.push(Fresh { key, content, seq, at });
                        }
                    }
                    0
                }
            };
            self.next_seq += 1;
            rows.push(StagedRow { seq, kind, loc, loc_hash: hash, lastmod, changefreq, priority });
        }
        rows
    }

    /// What the merge does: after a complete read (`sweep`) the previous read's URLs not seen
    /// are removed, else they stay. The set to store lists the URLs in this read's order (those
    /// kept from the previous read without being listed, after a partial read, at the end), so
    /// that the next read of the same list matches it entry by entry.
    pub(crate) fn plan(&self, sweep: bool) -> Plan {
        let mut plan = Plan {
            new: self.fresh.len() as i64,
            changed_rows: 0,
            changed: 0,
            staged: self.fresh.len() as i64,
            distinct: self.fresh.len() as i64,
            gone: Vec::new(),
            set: (0, Vec::new()),
        };
        // (position in this read, key, content) of every URL of the next set.
        let mut order: Vec<(u32, u128, u64)> = Vec::with_capacity(self.prev.len() + self.fresh.len());
        let mut sorted = true;
        for slot in &self.prev {
            let content = match slot.seen {
                Seen::No if sweep => {
                    plan.gone.push(slot.key.to_le_bytes());
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
                    plan.changed_rows += 1;
                    plan.changed += i64::from(slot.content != slot.prev_content);
                    slot.content
                }
            };
            sorted &= order.last().is_none_or(|last| last.0 <= slot.at);
            order.push((slot.at, slot.key, content));
        }
        for slot in &self.fresh {
            sorted &= order.last().is_none_or(|last| last.0 <= slot.at);
            order.push((slot.at, slot.key, slot.content));
        }
        if !sorted {
            order.sort_by_key(|entry| entry.0);
        }
        plan.set.0 = order.len() as i64;
        plan.set.1.reserve_exact(order.len() * ENTRY);
        for (_, key, content) in order {
            plan.set.1.extend_from_slice(&key.to_le_bytes());
            plan.set.1.extend_from_slice(&content.to_le_bytes());
        }
        plan
    }

    /// The previous read's set, as stored.
    pub(crate) fn previous_set(&self) -> (i64, Vec<u8>) {
        let mut body = Vec::with_capacity(self.prev.len() * ENTRY);
        for slot in &self.prev {
            body.extend_from_slice(&slot.key.to_le_bytes());
            body.extend_from_slice(&slot.prev_content.to_le_bytes());
        }
        (self.prev.len() as i64, body)
    }
}

/// The store's URL key (`loc_hash`: the first 16 bytes of SHA-256) without an allocation.
fn loc_key(loc: &str) -> [u8; 16] {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(loc.as_bytes());
    let mut key = [0_u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}
