//! Renders one migration file, which holds both dialects, into the SQL of one backend.
//!
//! Shared by `build.rs` (through `#[path]`, so it uses nothing but `std`) and this crate's
//! tests. The format, described in `migrations/README.md`:
//!
//! - a line `-- @sqlite` or `-- @postgres` opens a block of lines for that backend alone
//!   (another backend's marker inside a block closes it and opens the other's); `-- @end`
//!   closes it;
//! - a line starting `--!` is a note for readers of the file, dropped from both renderings,
//!   so a note can stand in an applied migration without changing its checksum;
//! - every other line, line ending included, goes to both backends as it is.
//!
//! A backend whose rendering is empty has no migration of that number. Rendering is strict
//! (a marker misspelt, a block left open), because a mistake here changes what a database
//! runs.

use std::fmt;

/// The database a rendering is for; `name` is its marker's word and its list's word in
/// `migrations/applied.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Backend {
    /// Both backends, in the order their tables are generated.
    pub(crate) const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

    /// The word of its block marker (`-- @sqlite`) and of `applied.txt`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// Why a migration file cannot be rendered: its 1-based line and what is wrong there.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RenderError {
    /// The line of the fault (the last line plus one for a block left open).
    pub(crate) line: usize,
    /// What is wrong.
    pub(crate) message: &'static str,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The SQL `backend` runs for the migration file `source`: its shared lines and its own
/// blocks, byte for byte, without markers and notes.
pub(crate) fn render(source: &str, backend: Backend) -> Result<String, RenderError> {
    let mut out = String::with_capacity(source.len());
    let mut block: Option<Backend> = None;
    let mut number = 0;
    for line in source.split_inclusive('\n') {
        number += 1;
        // A marker or note is read without its line ending, `\r\n` as well as `\n`.
        let text = line.strip_suffix('\n').unwrap_or(line);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let fault = |message| Err(RenderError { line: number, message });
        if text.starts_with("--!") {
            continue;
        }
        if let Some(word) = text.strip_prefix("-- @") {
            match (word, block) {
                ("end", None) => return fault("`-- @end` outside a block"),
                ("end", Some(_)) => block = None,
                (word, open) => {
                    let Some(next) = Backend::ALL.into_iter().find(|b| b.name() == word) else {
                        return fault("not a marker: `-- @sqlite`, `-- @postgres` and `-- @end` are");
                    };
                    if open == Some(next) {
                        return fault("this backend's block is already open");
                    }
                    block = Some(next);
                }
            }
            continue;
        }
        if block.is_none_or(|only| only == backend) {
            out.push_str(line);
        }
    }
    if block.is_some() {
        return Err(RenderError { line: number + 1, message: "a block is left open: end it with `-- @end`" });
    }
    if !out.is_empty() && out.trim().is_empty() {
        return Err(RenderError { line: number, message: "this backend's SQL is blank but not empty" });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders `source` for both backends: `(sqlite, postgres)`.
    fn check(source: &str, sqlite: &str, postgres: &str) {
        assert_eq!(render(source, Backend::Sqlite).as_deref(), Ok(sqlite), "sqlite of {source:?}");
        assert_eq!(render(source, Backend::Postgres).as_deref(), Ok(postgres), "postgres of {source:?}");
    }

    fn fails(source: &str, line: usize) {
        for backend in Backend::ALL {
            assert_eq!(render(source, backend).map_err(|e| e.line), Err(line), "{source:?}");
        }
    }

    #[test]
    fn shared_lines_blocks_and_notes() {
        check("A;\n", "A;\n", "A;\n");
        check("A;", "A;", "A;");
        check("", "", "");
        check("--! why\nA;\n", "A;\n", "A;\n");
        check(
            "A (\n-- @sqlite\n  x INTEGER\n-- @postgres\n  x BIGINT\n-- @end\n);\n",
            "A (\n  x INTEGER\n);\n",
            "A (\n  x BIGINT\n);\n",
        );
        check("-- @postgres\nB;\n-- @sqlite\nC;\n-- @end\n", "C;\n", "B;\n");
        check("-- @postgres\n--! only here\nB;\n-- @end\n", "", "B;\n");
        check("--! note\n-- @sqlite\n-- no-transaction\nC;\n-- @end\n", "-- no-transaction\nC;\n", "");
        // Line endings and blank space pass through untouched.
        check("A;\r\n\n  \n-- @sqlite\r\nC;\r\n-- @end\r\n", "A;\r\n\n  \nC;\r\n", "A;\r\n\n  \n");
        check("-- a comment\n--  @sqlite\n", "-- a comment\n--  @sqlite\n", "-- a comment\n--  @sqlite\n");
    }

    #[test]
    fn mistakes_are_refused_with_their_line() {
        fails("A;\n-- @end\n", 2);
        fails("-- @sqlite\nA;\n", 3);
        fails("-- @postgress\nA;\n-- @end\n", 1);
        fails("-- @sqlite \nA;\n-- @end\n", 1);
        fails("-- @sqlite\nA;\n-- @sqlite\nB;\n-- @end\n", 3);
        assert_eq!(render("\n-- @postgres\nB;\n-- @end\n", Backend::Sqlite).map_err(|e| e.line), Err(4));
    }
}
