//! The server's layers (the crate's ARCHITECTURE.md, "The layers"), held by reading `src/` as text: top
//! to bottom `lib.rs`; the faces (`api/`, `console/`, `ping.rs`, `indexnow.rs`); `service/`;
//! `jobs/`; the base (every other module). An import may point down or within its own face or
//! job, never up, never from one face to another, and a job never reaches another job's module
//! (what jobs share is `jobs/mod.rs`). The crate root's items (`AppState`, `AppError`, `now`)
//! are the context every layer is handed, so a path to one of them is allowed anywhere.
//!
//! An import is a `crate::` or `super::` path in the code (comments and the unit tests' module
//! aside), `use` trees included (`use crate::{a, b::c}`). The same paths, resolved to files,
//! must form no circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where a module stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Layer {
    /// `lib.rs`.
    Top,
    /// A face, by its first path segment (`api`, `console`, `ping`, `indexnow`).
    Face(String),
    /// `service/`.
    Service,
    /// `jobs/mod.rs`: the supervisor and what jobs share.
    Jobs,
    /// One job, by its module under `jobs/`.
    Job(String),
    /// Everything else.
    Base,
}

const FACES: [&str; 4] = ["api", "console", "ping", "indexnow"];

fn layer_of(module: &[String]) -> Layer {
    match module.first().map(String::as_str) {
        None => Layer::Top,
        Some(face) if FACES.contains(&face) => Layer::Face(face.to_owned()),
        Some("service") => Layer::Service,
        Some("jobs") => match module.get(1) {
            Some(job) => Layer::Job(job.clone()),
            None => Layer::Jobs,
        },
        Some(_) => Layer::Base,
    }
}

/// Why an import from `from` to `to` breaks the layers, or `None`.
fn wrong_way(from: &Layer, to: &Layer) -> Option<&'static str> {
    use Layer::*;
    match (from, to) {
        (Top, _) => None,
        (_, Top) => Some("nothing imports lib.rs's modules from below"),
        (Face(a), Face(b)) if a != b => Some("a face imports another face"),
        (Face(_), Jobs | Job(_)) => Some("a face imports a job (go through service)"),
        (Service, Face(_)) => Some("service imports a face"),
        (Jobs | Job(_), Face(_)) => Some("a job imports a face"),
        (Jobs | Job(_), Service) => Some("a job imports service"),
        (Job(a), Job(b)) if a != b => Some("a job imports another job's internals"),
        (Base, Face(_) | Service | Jobs | Job(_)) => Some("the base imports a layer above it"),
        _ => None,
    }
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file relative to `src/`: `jobs/reads/mod.rs` is `[jobs, reads]`,
/// `lib.rs` is `[]`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        file => parts.push(file.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// The code of a file without comments and without its unit tests' module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| match l.find(" // ") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a use tree names: `a::{b, c::{d}}` gives `a::b` and `a::c::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_owned()] };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start, mut items) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items.into_iter().filter(|i| !i.trim().is_empty()).flat_map(|i| expand(&format!("{prefix}{}", i.trim()))).collect()
}

/// The `crate::` and `super::` paths of some code, each as written from its start (`crate` or
/// the first `super`), use trees expanded.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for key in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(key).map(|i| i + from) {
            from = at + key.len();
            let before = code[..at].chars().next_back();
            // `mapwright_store::...` or `super::super::` (taken from its first `super`).
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let (mut end, mut depth) = (at, 0);
            for (i, c) in code[at..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth > 0 => depth -= 1,
                    c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => break,
                    _ => {}
                }
                end = at + i + c.len_utf8();
            }
            found.extend(expand(&code[at..end]));
        }
    }
    found
}

/// The module a path leads to from `module` (the longest prefix that is a module of `known`),
/// or `None` for a path to an item of the crate root.
fn target(module: &[String], path: &str, known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut at: Vec<String> = Vec::new();
    let mut rest = segments.as_slice();
    match rest.first() {
        Some(&"crate") => rest = &rest[1..],
        Some(&"super") => {
            at = module.to_vec();
            while let Some((&"super", tail)) = rest.split_first() {
                at.pop();
                rest = tail;
            }
        }
        _ => return None,
    }
    for segment in rest {
        let mut next = at.clone();
        next.push((*segment).to_owned());
        if !known.contains(&next) {
            break;
        }
        at = next;
    }
    (!at.is_empty()).then_some(at)
}

struct Source {
    file: String,
    module: Vec<String>,
    paths: Vec<String>,
}

fn read_sources() -> (Vec<Source>, BTreeSet<Vec<String>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let sources: Vec<Source> = files
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(&src).unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            Source { file: relative.display().to_string(), module: module_of(relative), paths: paths(&code(&text)) }
        })
        .collect();
    let known = sources.iter().map(|s| s.module.clone()).collect();
    (sources, known)
}

#[test]
fn every_import_points_down_the_layers() {
    let (sources, known) = read_sources();
    assert!(sources.len() > 40, "the sources were not found");
    let mut wrong = Vec::new();
    for source in &sources {
        let from = layer_of(&source.module);
        for path in &source.paths {
            let Some(to) = target(&source.module, path, &known) else { continue };
            if let Some(why) = wrong_way(&from, &layer_of(&to)) {
                wrong.push(format!("{}: {path} ({why})", source.file));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn no_module_imports_itself_through_others() {
    let (sources, known) = read_sources();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for source in &sources {
        let out = edges.entry(source.module.clone()).or_default();
        for path in &source.paths {
            if let Some(to) = target(&source.module, path, &known).filter(|to| *to != source.module) {
                out.insert(to);
            }
        }
    }
    // A depth-first search that reports the first circle it walks into.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(stack[at..].iter().chain([node]).map(|m| m.join("::")).collect());
        }
        if !done.insert(node.clone()) {
            return None;
        }
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, stack, done) {
                return Some(circle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        if let Some(circle) = visit(node, &edges, &mut Vec::new(), &mut done) {
            panic!("an import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_reader_of_imports_sees_use_trees_and_relative_paths() {
    assert_eq!(
        paths("use crate::{AppError, jobs::{reads, recheck::verify_now}};\nlet x = super::super::format::utc(1);"),
        ["crate::AppError", "crate::jobs::reads", "crate::jobs::recheck::verify_now", "super::super::format::utc"]
    );
    let known: BTreeSet<Vec<String>> =
        [vec!["jobs".to_owned()], vec!["jobs".to_owned(), "reads".to_owned()]].into_iter().collect();
    let module = vec!["jobs".to_owned(), "reads".to_owned(), "fetch".to_owned()];
    assert_eq!(target(&module, "super::super::stopping", &known), Some(vec!["jobs".to_owned()]));
    assert_eq!(target(&module, "crate::AppState", &known), None);
    assert_eq!(
        wrong_way(&layer_of(&["api".to_owned()]), &layer_of(&["console".to_owned()])),
        Some("a face imports another face")
    );
    assert_eq!(wrong_way(&Layer::Job("webhooks".into()), &Layer::Jobs), None);
    assert!(wrong_way(&Layer::Job("webhooks".into()), &Layer::Job("reads".into())).is_some());
    assert!(wrong_way(&Layer::Base, &Layer::Service).is_some());
    assert!(code("use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}").contains("crate::a"));
    assert!(!code("use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}").contains("crate::c"));
}
