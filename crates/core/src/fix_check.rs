//! The fix agent's pure half: the fix contract's input and output, the built-in deterministic
//! fixers, and the patch guard every candidate passes before anything is pushed.
//!
//! - [`FixInput`] / [`FixOutput`] are the Fix Agent contract of `execution-contract.md`
//!   (bug report, file snippet ±3, error message, previous attempt → full patched file, reason,
//!   confidence), plus the whole file the fixers need to produce a full patched file.
//! - [`fix_deterministic`] tries the [`builtin_fixers`]: each recognises one kind of error from
//!   the report's rule, tool and message, edits only the reported line (or the few lines a
//!   Python block needs), and **declines** (returns `None`) whenever the text is not exactly what
//!   it expects. They never guess.
//! - [`check_patch`] is the guard; [`unified_diff`] renders a patch for the comment.
//! - [`source_text`] decides whether a file's bytes are text a fixer may rewrite (UTF-8 only),
//!   and [`match_line_endings`] gives a model's answer the file's own line endings back.
//!
//! Nothing here performs I/O, reads a clock or draws random numbers.

mod deps;
mod diff;
mod fixers;
mod guard;
mod text;

pub use deps::is_dependency_manifest;
pub use diff::unified_diff;
pub use fixers::{
    FinalNewline, MissingColon, MissingSemicolon, PythonIndentation, TrailingWhitespace,
    UnusedImport,
};
pub use guard::{
    ALWAYS_PROTECTED, Candidate, FileChange, GuardPolicy, GuardViolation, LINE_WINDOW, LineSpan,
    ProtectedBy, WORKFLOWS_DIR, check_patch, path_matches,
};

use ci_medic_parser::BugReport;
use serde::{Deserialize, Serialize};

/// What went wrong with the previous attempt on the same error, when there was one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviousAttempt {
    /// The fixer that produced it (`unused-import`, `llm`…), or the fixers, joined by `, `,
    /// when a patch combined several; a deterministic fixer named here is not asked again.
    pub fixer: Option<String>,
    pub fix_reason: String,
    /// Why it failed: the guard's rule, or the CI verdict and the error it still showed.
    pub failure: String,
    /// The content it proposed, so the same patch is not proposed twice.
    pub patched_content: Option<String>,
}

/// The Fix Agent contract's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixInput {
    pub report: BugReport,
    /// The whole file at the proposal's commit.
    pub file_content: String,
    /// The contract's `file_snippet`: lines ±3 around the error, see [`snippet_around`].
    pub snippet: String,
    pub error_message: String,
    pub previous_attempt: Option<PreviousAttempt>,
}

impl FixInput {
    /// Builds the input from a report and the file, taking the snippet and message from them.
    pub fn new(report: BugReport, file_content: String) -> Self {
        let snippet = snippet_around(&file_content, report.line_number, LINE_WINDOW);
        let error_message = report.message.clone();
        FixInput {
            report,
            file_content,
            snippet,
            error_message,
            previous_attempt: None,
        }
    }
}

/// The Fix Agent contract's output, plus which fixer produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixOutput {
    /// The full patched file.
    pub patched_content: String,
    pub fix_reason: String,
    /// In [0, 1].
    pub confidence_score: f64,
    pub fixer: String,
}

impl FixOutput {
    /// The guard's view of this output: one file changed, `input`'s file before, this after.
    pub fn to_candidate(&self, input: &FixInput) -> Candidate {
        Candidate {
            changes: vec![FileChange {
                path: input.report.file_path.clone(),
                before: Some(input.file_content.clone()),
                after: self.patched_content.clone(),
            }],
            confidence: self.confidence_score,
        }
    }
}

/// Lines `line - radius ..= line + radius` (1-based, clamped to the file), each prefixed with its
/// number and `|`, the reported line marked with `>`; the layout the LLM prompt and the comment
/// show. Empty when the file is empty or `line` is past its end.
pub fn snippet_around(content: &str, line: u32, radius: u32) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let n = lines.len() as u32;
    if n == 0 || line == 0 || line > n {
        return String::new();
    }
    let (lo, hi) = (line.saturating_sub(radius).max(1), (line + radius).min(n));
    let width = hi.to_string().len();
    let mut out = String::new();
    for k in lo..=hi {
        let text = lines[k as usize - 1].trim_end_matches('\r');
        let mark = if k == line { '>' } else { ' ' };
        out.push_str(&format!("{mark} {k:>width$} | {text}\n"));
    }
    out
}

/// `patched` with `original`'s dominant line ending on every line and `original`'s final-newline
/// state (present or absent).
///
/// For patches written by a model: it sees the file through a prompt, answers with `\n`
/// whatever the file uses, and adds or drops the final newline at will, so its answer for a CRLF
/// file differs on every line and the guard refuses it. The deterministic fixers never need
/// this (they keep every line's own ending); a file mixing CRLF and LF lines gets its dominant
/// ending throughout, which the guard then sees as changed lines if they are far from the error.
pub fn match_line_endings(original: &str, patched: &str) -> String {
    let eol = text::dominant_eol(original);
    let body = patched.replace("\r\n", "\n");
    let body = body.trim_end_matches('\n');
    if body.is_empty() {
        return String::new();
    }
    let mut out = if eol == "\n" {
        body.to_string()
    } else {
        body.replace('\n', eol)
    };
    // As many line endings at the end as the original had: its final newline, and any blank
    // lines after the last line, are not the model's to change.
    let trailing = original.replace("\r\n", "\n").len()
        - original.replace("\r\n", "\n").trim_end_matches('\n').len();
    for _ in 0..trailing {
        out.push_str(eol);
    }
    out
}

/// Why a file's bytes are not text a fixer may rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotText {
    #[error("UTF-16 text")]
    Utf16,
    #[error("binary (it contains NUL bytes)")]
    Binary,
    #[error("not valid UTF-8 (Latin-1 or another legacy encoding)")]
    NotUtf8,
}

/// The file as text the fixers may edit, or why it is not.
///
/// Only UTF-8 is: a fix is pushed as the UTF-8 bytes of the patched text, so any other
/// encoding decoded lossily would come back with every byte it could not read replaced by
/// U+FFFD — outside the edit too, where the guard (comparing text with text) cannot see it.
/// UTF-16 is recognised by its byte-order mark, and NUL bytes mean binary (or BOM-less UTF-16,
/// which is valid UTF-8 with a NUL after every ASCII character).
pub fn source_text(bytes: &[u8]) -> Result<&str, NotText> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(NotText::Utf16);
    }
    if bytes.contains(&0) {
        return Err(NotText::Binary);
    }
    std::str::from_utf8(bytes).map_err(|_| NotText::NotUtf8)
}

/// A fixer that needs no network: recognises one kind of error and either fixes it exactly or
/// declines.
pub trait DeterministicFixer: Send + Sync {
    /// Short stable name, recorded on the output and in previous attempts.
    fn name(&self) -> &'static str;
    /// The fix, or `None` when the error is not this fixer's or the text is not as expected.
    fn try_fix(&self, input: &FixInput) -> Option<FixOutput>;
}

/// Every built-in fixer, most specific first.
pub fn builtin_fixers() -> Vec<Box<dyn DeterministicFixer>> {
    vec![
        Box::new(UnusedImport),
        Box::new(MissingColon),
        Box::new(PythonIndentation),
        Box::new(MissingSemicolon),
        Box::new(TrailingWhitespace),
        Box::new(FinalNewline),
    ]
}

/// The first built-in fixer's answer that changes the file and is not a repeat of the previous
/// failed attempt.
pub fn fix_deterministic(input: &FixInput) -> Option<FixOutput> {
    let prev = input.previous_attempt.as_ref();
    let failed = |name: &str| {
        prev.and_then(|p| p.fixer.as_deref())
            .is_some_and(|list| list.split(", ").any(|f| f == name))
    };
    builtin_fixers()
        .iter()
        .filter(|f| !failed(f.name()))
        .filter_map(|f| f.try_fix(input))
        .find(|out| {
            out.patched_content != input.file_content
                && prev.and_then(|p| p.patched_content.as_deref())
                    != Some(out.patched_content.as_str())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ci_medic_parser::BugType;

    #[test]
    fn snippet_is_clamped_and_marked() {
        let c = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            snippet_around(c, 2, 3),
            "  1 | a\n> 2 | b\n  3 | c\n  4 | d\n  5 | e\n"
        );
        let s = snippet_around(c, 10, 3);
        assert!(
            s.starts_with("   7 | g\n") && s.contains("> 10 | j\n") && s.ends_with("  11 | k\n")
        );
        assert_eq!(snippet_around(c, 99, 3), "");
        assert_eq!(snippet_around("x\r\ny\r\n", 1, 0), "> 1 | x\n");
    }

    #[test]
    fn only_utf8_text_is_source_text() {
        assert_eq!(source_text(b"import os\n"), Ok("import os\n"));
        // A UTF-8 byte-order mark is still UTF-8, kept as it is.
        assert_eq!(source_text(b"\xEF\xBB\xBFx\n"), Ok("\u{feff}x\n"));
        let latin1 = b"# -*- coding: latin-1 -*-\nname = \"caf\xe9\"\nimport os\n";
        assert_eq!(source_text(latin1), Err(NotText::NotUtf8));
        assert_eq!(source_text(b"\xFF\xFEi\0m\0"), Err(NotText::Utf16));
        assert_eq!(source_text(b"i\0m\0p\0"), Err(NotText::Binary));
        assert_eq!(source_text(b"\x7fELF\x02\x01\x01\0"), Err(NotText::Binary));
    }

    #[test]
    fn line_endings_and_the_final_newline_follow_the_original() {
        let crlf = "a\r\nb\r\n";
        assert_eq!(match_line_endings(crlf, "a\nc"), "a\r\nc\r\n");
        assert_eq!(match_line_endings(crlf, "a\r\nc\r\n"), "a\r\nc\r\n");
        assert_eq!(match_line_endings("a\nb", "a\nc\n"), "a\nc");
        assert_eq!(match_line_endings("a\nb\n", "a\r\nc"), "a\nc\n");
        // Blank lines at the end are as many as the original had.
        assert_eq!(match_line_endings("a\nb\n", "a\nc\n\n"), "a\nc\n");
        assert_eq!(
            match_line_endings("a\r\nb\r\n\r\n", "a\nc"),
            "a\r\nc\r\n\r\n"
        );
        assert_eq!(match_line_endings("a\n", ""), "");
    }

    #[test]
    fn a_failed_fixer_is_not_asked_again() {
        let report = BugReport {
            file_path: "a.py".into(),
            line_number: 1,
            error_type: BugType::Linting,
            message: "`os` imported but unused".into(),
            test_name: None,
            confidence_score: 0.9,
            column: Some(8),
            tool: Some("ruff".into()),
            rule: Some("F401".into()),
        };
        let mut input = FixInput::new(report, "import os\nimport sys\nprint(sys)\n".into());
        let first = fix_deterministic(&input).expect("fixes");
        assert_eq!(first.fixer, "unused-import");
        input.previous_attempt = Some(PreviousAttempt {
            fixer: Some(first.fixer.clone()),
            fix_reason: first.fix_reason.clone(),
            failure: "CI still failed".into(),
            patched_content: Some(first.patched_content.clone()),
        });
        assert_eq!(fix_deterministic(&input), None);
        // A patch that combined several fixers names each of them.
        input.previous_attempt = Some(PreviousAttempt {
            fixer: Some("final-newline, unused-import".into()),
            fix_reason: String::new(),
            failure: "CI still failed".into(),
            patched_content: None,
        });
        assert_eq!(fix_deterministic(&input), None);
    }
}
