//! The rows a PostgreSQL stage holds on the client until its merge: in memory up to
//! [`STAGE_MEMORY`] rows, then appended to an unnamed temporary file (`tempfile::tempfile()`:
//! it has no name, so it vanishes with the process, even on `kill -9`). The memory of a stage is
//! so bounded whatever the sitemap's size, and nothing is written to the database before the
//! merge, which copies the rows straight into `urls` (see `ingest.rs`).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::sync::Arc;

use super::StagedRow;

/// Rows a stage keeps in memory before it spills them to its file (about 1 MB).
pub(crate) const STAGE_MEMORY: usize = 4_000;

/// The file of a stage's spilled rows, in reading order, and how many it holds.
#[derive(Clone)]
pub(crate) struct Spill {
    file: Arc<File>,
    pub(crate) rows: i64,
}

impl Spill {
    /// Appends rows to the file (made at the first spill).
    pub(crate) fn append(spill: &mut Option<Spill>, rows: &[StagedRow<'_>]) -> std::io::Result<()> {
        if spill.is_none() {
            *spill = Some(Spill { file: Arc::new(tempfile::tempfile()?), rows: 0 });
        }
        let Some(spill) = spill else { return Ok(()) };
        let mut file: &File = &spill.file;
        file.seek(SeekFrom::End(0))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        for row in rows {
            encode(&mut out, row)?;
        }
        out.flush()?;
        spill.rows += rows.len() as i64;
        Ok(())
    }
}

/// The held rows in reading order: the spilled ones, then those in memory.
pub(crate) struct HeldRows<'a> {
    file: Option<(BufReader<&'a File>, i64)>,
    memory: std::slice::Iter<'a, StagedRow<'static>>,
}

impl<'a> HeldRows<'a> {
    /// Reads from the start of the file, then `memory`.
    pub(crate) fn new(spill: Option<&'a Spill>, memory: &'a [StagedRow<'static>]) -> std::io::Result<HeldRows<'a>> {
        let file = match spill {
            Some(spill) => {
                let mut file: &File = &spill.file;
                file.seek(SeekFrom::Start(0))?;
                Some((BufReader::with_capacity(1 << 16, file), spill.rows))
            }
            None => None,
        };
        Ok(HeldRows { file, memory: memory.iter() })
    }

    /// The next row, or `None` after the last.
    pub(crate) fn next_row(&mut self) -> std::io::Result<Option<StagedRow<'static>>> {
        if let Some((reader, left)) = &mut self.file {
            if *left > 0 {
                *left -= 1;
                return decode(reader).map(Some);
            }
        }
        Ok(self.memory.next().cloned())
    }
}

/// Copies the stage's new URLs (kind 0, not superseded: `new` of them) into `urls` with ids
/// taken from its sequence, in reading order, and links them to the sitemap, in the merge's
/// transaction; returns their ids. A URL the site already has fails the copy (see
/// [`is_unique_violation`]); the caller rolls it back to its savepoint.
pub(crate) async fn copy_fresh(
    conn: &mut sqlx::PgConnection,
    stage: &crate::UrlStage,
    superseded: &std::collections::HashSet<i64>,
    site_id: i64,
    sitemap_id: i64,
    now: i64,
    new: i64,
) -> crate::Result<Vec<i64>> {
    // The sequence named once: `pg_get_serial_sequence` per row took 0.43 s for 50,000 ids.
    let sequence: String =
        sqlx::query_scalar("SELECT pg_get_serial_sequence('urls', 'id')").fetch_one(&mut *conn).await?;
    let mut ids: Vec<i64> = sqlx::query_scalar("SELECT nextval($1::regclass) FROM generate_series(1, $2)")
        .bind(sequence)
        .bind(new)
        .fetch_all(&mut *conn)
        .await?;
    ids.sort_unstable();
    let mut rows = HeldRows::new(stage.known.spill.as_ref(), &stage.known.pending).map_err(crate::Error::Spill)?;
    let mut used = 0;
    {
        let mut copy = conn
            .copy_in_raw(
                "COPY urls (id, site_id, loc, loc_hash, lastmod, changefreq, priority, first_seen_at, last_seen_at, \
                 changed_at) FROM STDIN",
            )
            .await?;
        let mut text = String::with_capacity(1 << 18);
        let mut failed = None;
        loop {
            let row = match rows.next_row() {
                Ok(row) => row,
                Err(e) => {
                    failed = Some(crate::Error::Spill(e));
                    break;
                }
            };
            let last = row.is_none();
            if let Some(row) = row.filter(|r| r.kind == 0 && !superseded.contains(&r.seq)) {
                let Some(&id) = ids.get(used) else {
                    failed = Some(crate::Error::StageLost { sitemap_id, stage_id: stage.id });
                    break;
                };
                used += 1;
                super::copy_url_line(&mut text, id, site_id, now, &row);
            }
            if text.len() >= 1 << 18 || (last && !text.is_empty()) {
                if let Err(e) = copy.send(std::mem::take(&mut text).into_bytes()).await {
                    failed = Some(e.into());
                    break;
                }
            }
            if last {
                break;
            }
        }
        // A copy left open breaks its connection: aborted on failure.
        if let Some(e) = failed {
            let _ = copy.abort("staging failed").await;
            return Err(e);
        }
        copy.finish().await?;
    }
    ids.truncate(used);
    let mut copy = conn.copy_in_raw("COPY sitemap_urls (sitemap_id, url_id, last_seen_at) FROM STDIN").await?;
    for chunk in ids.chunks(10_000) {
        let mut text = String::with_capacity(chunk.len() * 32);
        for id in chunk {
            use std::fmt::Write as _;
            let _ = writeln!(text, "{sitemap_id}\t{id}\t{now}");
        }
        if let Err(e) = copy.send(text.into_bytes()).await {
            let _ = copy.abort("linking failed").await;
            return Err(e.into());
        }
    }
    copy.finish().await?;
    Ok(ids)
}

/// The error of a copy that met a URL the site already has (`urls`' unique key).
pub(crate) fn is_unique_violation(e: &crate::Error) -> bool {
    match e {
        crate::Error::Database(sqlx::Error::Database(db)) => db.code().as_deref() == Some("23505"),
        _ => false,
    }
}

/// A row as bytes: seq, kind, key, priority (a flag and the value), then loc, lastmod and
/// changefreq, each its length (`u32::MAX` for none) and its bytes.
fn encode(out: &mut impl Write, row: &StagedRow<'_>) -> std::io::Result<()> {
    out.write_all(&row.seq.to_le_bytes())?;
    out.write_all(&row.kind.to_le_bytes())?;
    out.write_all(&row.loc_hash)?;
    match row.priority {
        Some(p) => {
            out.write_all(&[1])?;
            out.write_all(&p.to_le_bytes())?;
        }
        None => out.write_all(&[0; 9])?,
    }
    for text in [Some(row.loc.as_ref()), row.lastmod.as_deref(), row.changefreq.as_deref()] {
        match text {
            Some(t) => {
                out.write_all(&(t.len() as u32).to_le_bytes())?;
                out.write_all(t.as_bytes())?;
            }
            None => out.write_all(&u32::MAX.to_le_bytes())?,
        }
    }
    Ok(())
}

fn decode(input: &mut impl BufRead) -> std::io::Result<StagedRow<'static>> {
    let mut head = [0_u8; 8 + 2 + 16 + 9];
    input.read_exact(&mut head)?;
    let seq = i64::from_le_bytes(head[..8].try_into().unwrap_or_default());
    let kind = i16::from_le_bytes(head[8..10].try_into().unwrap_or_default());
    let loc_hash: [u8; 16] = head[10..26].try_into().unwrap_or_default();
    let priority = (head[26] == 1).then(|| f64::from_le_bytes(head[27..35].try_into().unwrap_or_default()));
    let mut texts: [Option<String>; 3] = [None, None, None];
    for text in &mut texts {
        let mut len = [0_u8; 4];
        input.read_exact(&mut len)?;
        let len = u32::from_le_bytes(len);
        if len != u32::MAX {
            let mut bytes = vec![0_u8; len as usize];
            input.read_exact(&mut bytes)?;
            *text =
                Some(String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?);
        }
    }
    let [loc, lastmod, changefreq] = texts;
    Ok(StagedRow {
        seq,
        kind,
        loc: Cow::Owned(loc.unwrap_or_default()),
        loc_hash,
        lastmod: lastmod.map(Cow::Owned),
        changefreq: changefreq.map(Cow::Owned),
        priority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64, lastmod: Option<&str>, priority: Option<f64>) -> StagedRow<'static> {
        StagedRow {
            seq,
            kind: (seq % 2) as i16,
            loc: Cow::Owned(format!("https://example.com/{seq}\t\u{e9}")),
            loc_hash: [seq as u8; 16],
            lastmod: lastmod.map(|t| Cow::Owned(t.to_owned())),
            changefreq: None,
            priority,
        }
    }

    fn same(a: &StagedRow<'_>, b: &StagedRow<'_>) -> bool {
        (a.seq, a.kind, &a.loc, a.loc_hash, &a.lastmod, &a.changefreq, a.priority.map(f64::to_bits))
            == (b.seq, b.kind, &b.loc, b.loc_hash, &b.lastmod, &b.changefreq, b.priority.map(f64::to_bits))
    }

    #[test]
    fn spilled_rows_come_back_in_reading_order_before_the_memory_ones() {
        let rows: Vec<_> =
            (0..10).map(|i| row(i, (i % 3 == 0).then_some("2024-01-01"), (i % 2 == 0).then_some(0.5))).collect();
        let mut spill = None;
        Spill::append(&mut spill, &rows[..4]).unwrap();
        Spill::append(&mut spill, &rows[4..7]).unwrap();
        assert_eq!(spill.as_ref().map(|s| s.rows), Some(7));
        // Read twice: a merge reads its rows in two passes.
        for _ in 0..2 {
            let mut held = HeldRows::new(spill.as_ref(), &rows[7..]).unwrap();
            let mut back = Vec::new();
            while let Some(r) = held.next_row().unwrap() {
                back.push(r);
            }
            assert_eq!(back.len(), rows.len());
            assert!(back.iter().zip(&rows).all(|(a, b)| same(a, b)));
        }
    }

    #[test]
    fn memory_alone_needs_no_file() {
        let rows = vec![row(1, None, None)];
        let mut held = HeldRows::new(None, &rows).unwrap();
        assert!(held.next_row().unwrap().is_some_and(|r| same(&r, &rows[0])));
        assert!(held.next_row().unwrap().is_none());
    }
}
