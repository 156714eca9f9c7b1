//! Deterministic CI log parser (the Parser of `execution-contract.md`).
//!
//! Turns a raw build or job log into [`BugReport`]s: repo-relative file, line, one of six
//! [`BugType`]s, the tool's own message, the failing test and a confidence.
//!
//! Boundary rules, from the contract:
//! - **Deterministic**: the same log always yields the same reports, in the same order.
//! - **No LLM**, no network, no file system: regex and heuristics over the bytes it is given.
//! - It never emits a path outside the repository, and never panics, hangs or grows its memory
//!   with the size of the log.

use serde::{Deserialize, Serialize};

/// The six bug types of the contract. Serialised exactly as the contract spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BugType {
    /// A linter rule violation (ruff, flake8, pylint, ESLint, clippy, `go vet`…).
    Linting,
    /// The source does not parse.
    Syntax,
    /// A failed assertion or failing test.
    Logic,
    /// Other compiler and type-checker errors.
    TypeError,
    /// Unresolved imports, missing modules, packages, headers and crates.
    Import,
    /// Python `IndentationError` / `TabError`.
    Indentation,
}

impl BugType {
    /// Every bug type, in the contract's order.
    pub const ALL: [BugType; 6] = [
        BugType::Linting,
        BugType::Syntax,
        BugType::Logic,
        BugType::TypeError,
        BugType::Import,
        BugType::Indentation,
    ];

    /// The contract's spelling (`LINTING`, `TYPE_ERROR`…).
    pub fn as_str(self) -> &'static str {
        match self {
            BugType::Linting => "LINTING",
            BugType::Syntax => "SYNTAX",
            BugType::Logic => "LOGIC",
            BugType::TypeError => "TYPE_ERROR",
            BugType::Import => "IMPORT",
            BugType::Indentation => "INDENTATION",
        }
    }
}

impl std::fmt::Display for BugType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for BugType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BugType::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown bug type `{s}`"))
    }
}

/// One error location found in a log.
///
/// The first six fields are the Parser contract's output, with its names. The rest are extras
/// people want beside them; they are optional and skipped when unknown, so a consumer of the
/// contract's fields is never broken by them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BugReport {
    /// Repo-relative path, forward slashes, never `..` or absolute.
    pub file_path: String,
    /// Line number, >= 1.
    pub line_number: u32,
    pub error_type: BugType,
    /// The tool's own words.
    pub message: String,
    /// The failing test, when there is one.
    pub test_name: Option<String>,
    /// How sure the parser is of this extraction, 0–1.
    pub confidence_score: f64,
    /// Column, >= 1, when the tool printed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The tool that printed it (`ruff`, `rustc`, `tsc`, `pytest`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's rule or error code (`F401`, `E0432`, `TS2307`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}
