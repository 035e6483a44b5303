//! Following an index to its children (`--follow`) through a [`Resolver`] that the caller
//! supplies, so the core stays free of I/O: the binary maps URLs onto local files, the fetch
//! crate will fetch them.

use super::{FileReport, Report, Validator};
use crate::loc::Loc;
use crate::model::Format;
use crate::read::{Input, Pager};
use crate::rule::{Finding, Position, Rule};
use std::collections::HashSet;
use std::io;
use std::sync::Arc;

/// A child sitemap listed by an index, with where its `<loc>` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Child {
    /// The child's URL.
    pub loc: Loc,
    /// Where the index lists it.
    pub position: Position,
}

/// What a [`Resolver`] made of a child's URL.
pub enum Opened<'a> {
    /// The child's bytes, and the name to report its findings under (a path or the URL).
    Source {
        /// Name in reports.
        name: String,
        /// The child's bytes (compressed or not: the reader detects it); a resolver that hands
        /// them over ([`Input::owned`]) lets the reader read them on a thread of its own.
        input: Input<'a>,
        /// Where the child's next pages come from, should it be an OAI-PMH answer: its own
        /// repository's (the fetch crate's), never the index's. `None` for a local file: a
        /// list of records cut after its first page is then reported as such.
        pager: Option<Arc<dyn Pager>>,
    },
    /// This resolver cannot reach the child (a remote URL while only local files are known, a
    /// URL outside the folder that maps onto the disk): why, for a note.
    Unreachable(String),
}

/// Opens the children of an index. The binary implements it for local files through `--url`;
/// the fetch crate implements it over HTTP.
pub trait Resolver {
    /// Opens the child at `url`. An `Err` is an I/O failure (a listed local file that is
    /// missing or unreadable): the run could not do its job.
    fn open(&mut self, url: &Loc) -> io::Result<Opened<'_>>;
}

/// Validates one file and, when it is an index and a resolver is given, each child it lists
/// once (one level: a child that is an index is reported as `index-nested` and not followed
/// further, which also ends cycles such as an index that lists itself).
///
/// Returns the inputs that could not be read, each with its I/O error; everything else is in
/// `report`.
pub fn validate_tree<'a>(
    validator: &Validator,
    name: &str,
    input: impl Into<Input<'a>>,
    resolver: Option<&mut dyn Resolver>,
    report: &mut Report,
) -> Vec<(String, io::Error)> {
    let mut failed = Vec::new();
    let mut top = validator.validate(name, input);
    let index = if top.format == Some(Format::SitemapIndex) { std::mem::take(&mut top.children) } else { Vec::new() };
    absorb(top, report, &mut failed);
    let Some(resolver) = resolver else { return failed };
    let mut done = HashSet::new();
    for child in index {
        if !done.insert(child.loc.as_str().to_string()) {
            continue;
        }
        let opened = match resolver.open(&child.loc) {
            Ok(o) => o,
            Err(e) => {
                failed.push((child.loc.to_string(), e));
                continue;
            }
        };
        let (child_name, input, pager) = match opened {
            Opened::Source { name, input, pager } => (name, input, pager),
            Opened::Unreachable(why) => {
                report.note(name, format!("child {} not validated: {why}", child.loc));
                continue;
            }
        };
        // The child is judged at its own URL, with the index's voucher (PROTOCOL.md section 5:
        // a sitemap reached through a vouched index is vouched for the same way).
        let mut config = validator.config.clone();
        config.sitemap_url = Some(child.loc.clone());
        config.scope_override = None;
        // Its own pages, not the index's: the index's pager asks the index's URL.
        config.pager = pager;
        let v = Validator { config, now: validator.now };
        let fr = v.validate(child_name, input);
        if fr.format == Some(Format::SitemapIndex) {
            report.push(
                name,
                Finding::new(
                    Rule::IndexNested,
                    Some(child.position),
                    format!(
                        "{} is itself a sitemap index: engines such as Google do not follow an index listed in an index; list its children here instead",
                        child.loc
                    ),
                )
                .with_loc(child.loc.as_str()),
            );
        }
        absorb(fr, report, &mut failed);
    }
    failed
}

fn absorb(mut fr: FileReport, report: &mut Report, failed: &mut Vec<(String, io::Error)>) {
    report.add(&fr);
    if let Some(e) = fr.io_error.take() {
        failed.push((fr.file.clone(), e));
    }
}
