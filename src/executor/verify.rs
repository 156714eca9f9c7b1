//! Deciding whether a verified build still shows the errors a patch targeted.
//!
//! Pure comparison of two parser outputs (before the patch, after it); it never runs a build and
//! never reads a file. The fix loop pushes a patch verified with `verify: docker` only when
//! [`targeted_errors_remaining`] is empty.

use ci_medic_parser::BugReport;

/// How far, in lines, an error may move and still be "the same error". A minimal patch touches
/// the reported line ±3 (the Fix Agent contract), so the lines around it shift by at most that
/// much when the patch adds or removes lines.
pub const LINE_TOLERANCE: u32 = 3;

/// Whether `after` is plausibly the same error as `before`: same file and bug type, and either
/// within [`LINE_TOLERANCE`] lines of it or carrying the identical message (an error that moved
/// further because lines were added above it, say an import, still has the same words).
pub fn same_error(before: &BugReport, after: &BugReport) -> bool {
    before.file_path == after.file_path
        && before.error_type == after.error_type
        && (before.line_number.abs_diff(after.line_number) <= LINE_TOLERANCE
            || before.message == after.message)
}

/// The targeted errors (`before`, what the patch meant to fix) that the verified build still
/// reports (`after`), in `before`'s order. Empty means the patch did what it was for.
///
/// Matching is by file + bug type + line proximity (see [`same_error`]); a message change alone
/// (e.g. a different type mismatch on the same line) still counts as remaining, since the line
/// still fails the same way.
pub fn targeted_errors_remaining(before: &[BugReport], after: &[BugReport]) -> Vec<BugReport> {
    before
        .iter()
        .filter(|b| after.iter().any(|a| same_error(b, a)))
        .cloned()
        .collect()
}

/// Errors in `after` with no counterpart in `before`: what the patch (or the verify build's
/// environment) introduced. Reported beside the remaining ones; whether they block a push is
/// the fix loop's policy.
pub fn errors_introduced(before: &[BugReport], after: &[BugReport]) -> Vec<BugReport> {
    after
        .iter()
        .filter(|a| !before.iter().any(|b| same_error(b, a)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ci_medic_parser::BugType;

    fn bug(file: &str, line: u32, t: BugType, msg: &str) -> BugReport {
        BugReport {
            file_path: file.into(),
            line_number: line,
            error_type: t,
            message: msg.into(),
            test_name: None,
            confidence_score: 0.9,
            column: None,
            tool: None,
            rule: None,
        }
    }

    #[test]
    fn fixed_errors_are_gone() {
        let before = [bug("a.py", 10, BugType::Syntax, "invalid syntax")];
        assert!(targeted_errors_remaining(&before, &[]).is_empty());
        // An unrelated error elsewhere is not a targeted one.
        let after = [bug("b.py", 10, BugType::Syntax, "invalid syntax")];
        assert!(targeted_errors_remaining(&before, &after).is_empty());
        assert_eq!(errors_introduced(&before, &after), after.to_vec());
    }

    #[test]
    fn the_same_error_nearby_remains() {
        let before = [bug("a.py", 10, BugType::Syntax, "invalid syntax")];
        for line in [7, 10, 13] {
            let after = [bug("a.py", line, BugType::Syntax, "other words")];
            assert_eq!(targeted_errors_remaining(&before, &after), before.to_vec());
        }
        for line in [6, 14] {
            let after = [bug("a.py", line, BugType::Syntax, "other words")];
            assert!(
                targeted_errors_remaining(&before, &after).is_empty(),
                "{line}"
            );
        }
    }

    #[test]
    fn identical_message_remains_even_when_moved_far() {
        let before = [bug("a.py", 10, BugType::Import, "No module named 'x'")];
        let after = [bug("a.py", 40, BugType::Import, "No module named 'x'")];
        assert_eq!(targeted_errors_remaining(&before, &after).len(), 1);
    }

    #[test]
    fn a_different_type_on_the_same_line_is_a_different_error() {
        let before = [bug("a.py", 10, BugType::Syntax, "invalid syntax")];
        let after = [bug("a.py", 10, BugType::Logic, "assert 1 == 2")];
        assert!(targeted_errors_remaining(&before, &after).is_empty());
        assert_eq!(errors_introduced(&before, &after).len(), 1);
    }

    #[test]
    fn order_of_before_is_kept() {
        let before = [
            bug("b.py", 1, BugType::Syntax, "x"),
            bug("a.py", 1, BugType::Syntax, "y"),
        ];
        let after = [before[1].clone(), before[0].clone()];
        assert_eq!(targeted_errors_remaining(&before, &after), before.to_vec());
    }
}
