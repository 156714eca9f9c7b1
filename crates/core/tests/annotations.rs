//! Check-run annotations carry text from logs to GitHub: whatever bytes a log held, what is
//! sent is plain text with no control characters (but `\n` and `\t`), no terminal escapes and
//! no secrets, within GitHub's limits.

use ci_medic_core::comment::annotation;
use ci_medic_core::{BugReport, BugType};
use proptest::prelude::*;

fn report(message: &str, rule: Option<&str>, test: Option<&str>) -> BugReport {
    BugReport {
        file_path: "src/app.py".into(),
        line_number: 3,
        error_type: BugType::Logic,
        message: message.into(),
        test_name: test.map(Into::into),
        confidence_score: 0.9,
        column: Some(5),
        tool: Some("pytest".into()),
        rule: rule.map(Into::into),
    }
}

fn clean(s: &str) -> bool {
    !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
}

#[test]
fn nul_escapes_and_carriage_returns_from_a_log_never_reach_github() {
    // Before, the PR comment stripped these but the annotation sent them as they were.
    let a = annotation(&report(
        "assert b\"\\x00\" == x\u{0}\u{7}\r\n\u{1b}[31mE   AssertionError\u{1b}[0m\rdone",
        Some("E\u{0}1"),
        Some("tests/test_a.py::test_\u{0}nul"),
    ));
    assert!(clean(&a.message), "{:?}", a.message);
    assert!(clean(&a.title) && !a.title.contains('\n'), "{:?}", a.title);
    assert!(a.message.contains("E   AssertionError"), "{:?}", a.message);
    assert!(!a.message.contains("[31m"), "{:?}", a.message);
    assert!(
        a.message
            .contains("Failing test: tests/test_a.py::test_nul"),
        "{:?}",
        a.message
    );
}

#[test]
fn secrets_in_a_message_are_redacted() {
    let a = annotation(&report(
        "token=ghp_0123456789abcdefghijABCDEFGHIJ012345 refused",
        None,
        None,
    ));
    assert!(!a.message.contains("ghp_0123"), "{:?}", a.message);
}

proptest! {
    #[test]
    fn any_text_becomes_plain_text(
        message in "(?s).{0,300}",
        rule in proptest::option::of("(?s).{0,20}"),
        test in proptest::option::of("(?s).{0,40}"),
    ) {
        let a = annotation(&report(&message, rule.as_deref(), test.as_deref()));
        prop_assert!(clean(&a.message), "{:?}", a.message);
        prop_assert!(clean(&a.title) && !a.title.contains('\n'), "{:?}", a.title);
        prop_assert!(a.title.chars().count() < 255);
    }
}
