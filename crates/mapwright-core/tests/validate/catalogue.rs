//! The rule names and severities of shared/RULES.md are those of the code, in order; rules the
//! project added since (RULES.md allows it) follow them and are listed in docs/RULES.md.

use mapwright_core::{Rule, Severity};

/// `(name, severity)` of every row of the catalogue table of a markdown file.
fn catalogue_of(path: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            (cols[1].trim_matches('`').to_string(), cols[2].to_string())
        })
        .collect()
}

fn catalogue() -> Vec<(String, String)> {
    catalogue_of(&super::shared::dir().join("RULES.md"))
}

#[test]
fn rule_names_are_exactly_those_of_rules_md() {
    let doc = catalogue();
    assert!(doc.len() >= 30, "the table of RULES.md was not found: {doc:?}");
    let code: Vec<(String, String)> =
        Rule::ALL.iter().map(|r| (r.as_str().to_string(), r.severity().as_str().to_string())).collect();
    assert_eq!(code[..doc.len().min(code.len())], doc[..], "names, severities and order must match RULES.md");
    for (name, _) in &doc {
        assert!(Rule::from_name(name).is_some(), "{name}");
    }
    assert!(Rule::ALL.iter().all(|r| [Severity::Error, Severity::Warning, Severity::Info].contains(&r.severity())));
}

#[test]
fn the_project_docs_list_the_same_rules() {
    let ours = catalogue_of(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/RULES.md"));
    let code: Vec<(String, String)> =
        Rule::ALL.iter().map(|r| (r.as_str().to_string(), r.severity().as_str().to_string())).collect();
    assert_eq!(ours, code, "docs/RULES.md must list every rule of the code, in order");
}
