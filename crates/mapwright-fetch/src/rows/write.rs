//! [`ParquetRows`]: rows written as Parquet while they come, one row group at a time, so memory
//! stays flat whatever the number of rows (a batch of [`BATCH_ROWS`](super::BATCH_ROWS) rows
//! and the row group being encoded, at most [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`]).

use super::{Columns, RowBuilder};
use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::Compression;
use ::parquet::errors::ParquetError;
use ::parquet::file::properties::WriterProperties;
use arrow_schema::ArrowError;
use mapwright_core::{Entry, UrlEntry};
use std::io::Write;

/// Rows per row group: a reader can skip or read one in parallel, and the writer holds one
/// encoded in memory.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Encoded bytes per row group at most, whatever its rows (rows with many images).
pub const ROW_GROUP_BYTES: usize = 64 * 1024 * 1024;

/// Why rows could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// A batch could not be built (a bug of the schema: every row fits it).
    #[error("cannot build the rows: {0}")]
    Arrow(#[from] ArrowError),
    /// The Parquet writer failed, most often the output (disk full).
    #[error("cannot write Parquet: {0}")]
    Parquet(#[from] ParquetError),
    /// The output failed when flushed at the end.
    #[error("cannot write Parquet: {0}")]
    Io(#[from] std::io::Error),
}

/// A Parquet file of rows (the columns of [`super::schema`]), written row group by row group;
/// [`ParquetRows::finish`] writes the footer. A writer dropped unfinished leaves no valid
/// file (Parquet's metadata is at its end).
pub struct ParquetRows<W: Write + Send> {
    writer: ArrowWriter<W>,
    rows: RowBuilder,
    written: u64,
}

impl<W: Write + Send> ParquetRows<W> {
    /// Starts a file of rows with these columns on `out`: Snappy pages, statistics per page.
    pub fn new(out: W, columns: Columns) -> Result<Self, RowsError> {
        let rows = RowBuilder::new(columns);
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            .set_created_by(format!("mapwright {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(out, rows.schema(), Some(props))?;
        Ok(ParquetRows { writer, rows, written: 0 })
    }

    /// A discovered URL (see [`RowBuilder::push_url`]).
    pub fn push_url(&mut self, u: &UrlEntry, sitemap: &str, site: &str) -> Result<(), RowsError> {
        self.rows.push_url(u, sitemap, site);
        self.cut_if_full()
    }

    /// An entry of `read` (see [`RowBuilder::push_entry`]).
    pub fn push_entry(&mut self, e: &Entry) -> Result<(), RowsError> {
        self.rows.push_entry(e);
        self.cut_if_full()
    }

    /// Rows written so far (pushed, including those not yet cut into a batch).
    pub fn rows(&self) -> u64 {
        self.written + self.rows.len() as u64
    }

    fn cut_if_full(&mut self) -> Result<(), RowsError> {
        if self.rows.is_full() { self.cut() } else { Ok(()) }
    }

    fn cut(&mut self) -> Result<(), RowsError> {
        let batch = self.rows.finish()?;
        self.written += batch.num_rows() as u64;
        self.writer.write(&batch)?;
        Ok(())
    }

    /// Writes the rows held, the last row group and the footer; gives the output back, flushed.
    pub fn finish(mut self) -> Result<W, RowsError> {
        if !self.rows.is_empty() {
            self.cut()?;
        }
        let mut out = self.writer.into_inner()?;
        out.flush()?;
        Ok(out)
    }
}
