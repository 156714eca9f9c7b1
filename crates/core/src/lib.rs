//! ci-medic's pure domain: everything between the parser's bug reports and the I/O at the edges.
//!
//! Nothing in this crate performs I/O: no network, no file system, no clock (times are passed in),
//! no randomness. Same input, same output, so every piece is unit-tested, property-tested and
//! benchmarked on plain values.
//!
//! | module | stage |
//! |---|---|
//! | [`ids`] | newtypes for DDS identifiers |
//! | [`repo_config`] | `.github/ci-medic.yml`, parsed strictly, with safe defaults |
//! | [`formatter`] | the one place report lines for people are formatted |
//! | [`proposal`] | Fix Packet v2 and code_fix DDS v2: builders, validation, the proposal state machine |
//! | [`comment`] | the PR comment and check-run annotations, with redaction |
//! | [`commands`] | slash commands read from PR comments |
//! | [`fix_check`] | the fix agent's deterministic fixers and the patch guard |
//! | [`tool_tier`] | which project tool repairs a report, at which version, and whether its change is a patch |
//! | [`redelivery`] | which missed webhook deliveries to ask GitHub to send again |
//! | [`status`] | the status page's figures: fix rates, medians, per-day series, the SVG chart |
//! | [`output`] | reports as GitHub workflow commands and reviewdog's rdjson |
//! | [`progress`] | the progress line `analyze` shows on a terminal |

pub mod commands;
pub mod comment;
pub mod fix_check;
pub mod formatter;
pub mod ids;
pub mod output;
pub mod progress;
pub mod proposal;
pub mod redelivery;
pub mod repo_config;
pub mod status;
pub mod tool_tier;
pub mod version_range;

pub use ci_medic_parser::{BugReport, BugType};
