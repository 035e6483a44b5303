//! The validator against the team's shared specs: the catalogue of RULES.md, and xmllint as an
//! oracle for the schema-level rules.

mod catalogue;
mod oracle;
mod shared;
