//! Bug reports in the formats other tools read: GitHub workflow commands ([`github`]) and the
//! Reviewdog Diagnostic Format ([`rdjson`]). SARIF lives in the parser crate
//! (`ci_medic_parser::sarif`).
//!
//! Pure: each function turns reports into a string or a JSON value; nothing here writes.

pub mod github;
pub mod rdjson;
