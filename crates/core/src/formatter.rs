//! The one place report lines for people are formatted.
//!
//! `{BUG_TYPE} error in {file} line {line} → Fix: {description}`, for example
//! `LINTING error in src/utils.py line 15 → Fix: remove the import statement`.
//!
//! PR comments, the CLI, commit messages and the Fix Packet's `hint` all call these functions;
//! nothing else in ci-medic may format such a line itself, so they can never drift apart.
//! Pure: no I/O, no clock.

use ci_medic_parser::{BugReport, BugType};

/// `{BUG_TYPE} error in {file} line {line}`: the first half of a report line, also used as the
/// title of a Fix Packet violation.
pub fn report_title(report: &BugReport) -> String {
    format!(
        "{} error in {} line {}",
        report.error_type.as_str(),
        report.file_path,
        report.line_number
    )
}

/// `{BUG_TYPE} error in {file} line {line} → Fix: {description}`.
pub fn format_report_line(report: &BugReport) -> String {
    format!(
        "{} → Fix: {}",
        report_title(report),
        fix_description(report)
    )
}

/// A short, conservative description of the fix, chosen by the tool's rule when ci-medic knows
/// it and by the bug type otherwise. Lower case, no trailing full stop, so it reads well after
/// `Fix:`.
pub fn fix_description(report: &BugReport) -> String {
    if let Some(known) = known_rule_description(report) {
        return known.to_string();
    }
    let msg = report.message.to_ascii_lowercase();
    match report.error_type {
        BugType::Linting => match report.rule.as_deref() {
            Some(rule) if !rule.is_empty() => {
                format!("change that line so it satisfies rule {rule}")
            }
            _ => "change that line so it satisfies the linter's message".to_string(),
        },
        BugType::Syntax => "correct the syntax at that line".to_string(),
        BugType::Indentation => {
            if msg.contains("taberror") || msg.contains("tabs and spaces") {
                "indent that block with spaces only, consistently".to_string()
            } else {
                "fix the indentation of the block at that line".to_string()
            }
        }
        BugType::Import => {
            if msg.contains("no module named")
                || msg.contains("cannot find module")
                || msg.contains("modulenotfounderror")
            {
                "correct the module name or path (do not add a new dependency)".to_string()
            } else {
                "correct the import so it names something that exists".to_string()
            }
        }
        BugType::TypeError => "make the types agree at that line".to_string(),
        BugType::Logic => match report.test_name.as_deref() {
            Some(test) if !test.is_empty() => {
                format!("make test `{test}` pass by correcting the code it checks")
            }
            _ => "correct the logic so the failing assertion holds".to_string(),
        },
    }
}

/// Descriptions for rules whose fix is unambiguous. Matched on the rule code first and on the
/// tool's wording second, because not every tool prints a code.
fn known_rule_description(report: &BugReport) -> Option<&'static str> {
    let rule = report.rule.as_deref().unwrap_or("");
    let msg = report.message.to_ascii_lowercase();
    let by_rule = match rule {
        "F401" | "unused_imports" | "W0611" => Some("remove the import statement"),
        "F841" | "W0612" | "unused_variables" | "no-unused-vars" | "TS6133" => {
            Some("remove the unused variable")
        }
        "F811" => Some("remove the duplicate definition"),
        "F821" | "E0602" | "no-undef" => Some("define or import the missing name"),
        "E501" | "max-len" | "C0301" => Some("wrap the line to the maximum length"),
        "W291" | "W293" | "C0303" | "no-trailing-spaces" => Some("remove the trailing whitespace"),
        "W292" | "C0304" | "eol-last" => Some("end the file with a newline"),
        "E711" => Some("compare with `is None` instead of `== None`"),
        "E712" => Some("use the value itself instead of comparing to True or False"),
        "E401" => Some("put each import on its own line"),
        "I001" => Some("sort the imports"),
        "semi" => Some("add the missing semicolon"),
        "prefer-const" => Some("declare the variable with `const`"),
        "E0432" | "E0433" | "TS2307" => Some("correct the import path"),
        _ => None,
    };
    if by_rule.is_some() {
        return by_rule;
    }
    if msg.contains("imported but unused") || msg.contains("unused import") {
        Some("remove the import statement")
    } else if msg.contains("assigned to but never used") {
        Some("remove the unused variable")
    } else if msg.contains("trailing whitespace") {
        Some("remove the trailing whitespace")
    } else if msg.contains("line too long") {
        Some("wrap the line to the maximum length")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(t: BugType, file: &str, line: u32, msg: &str, rule: Option<&str>) -> BugReport {
        BugReport {
            file_path: file.to_string(),
            line_number: line,
            error_type: t,
            message: msg.to_string(),
            test_name: None,
            confidence_score: 0.9,
            column: None,
            tool: None,
            rule: rule.map(str::to_string),
        }
    }

    #[test]
    fn the_issue_example() {
        let r = report(
            BugType::Linting,
            "src/utils.py",
            15,
            "`os` imported but unused",
            Some("F401"),
        );
        assert_eq!(
            format_report_line(&r),
            "LINTING error in src/utils.py line 15 → Fix: remove the import statement"
        );
    }

    #[test]
    fn unused_import_is_recognised_without_a_rule_code() {
        let r = report(
            BugType::Linting,
            "a.py",
            1,
            "'sys' imported but unused",
            None,
        );
        assert_eq!(fix_description(&r), "remove the import statement");
    }

    #[test]
    fn ts6133_distinguishes_imports_from_variables() {
        let var = report(
            BugType::Linting,
            "a.ts",
            1,
            "'x' is declared but its value is never read.",
            Some("TS6133"),
        );
        assert_eq!(fix_description(&var), "remove the unused variable");
    }

    #[test]
    fn every_type_has_a_description_and_the_spelling_of_the_contract() {
        for t in BugType::ALL {
            let r = report(t, "src/x.rs", 3, "something odd", None);
            let line = format_report_line(&r);
            assert!(line.starts_with(&format!("{} error in src/x.rs line 3 → Fix: ", t.as_str())));
            assert!(!fix_description(&r).is_empty());
        }
    }

    #[test]
    fn logic_names_the_failing_test() {
        let mut r = report(BugType::Logic, "tests/t.py", 9, "assert 1 == 2", None);
        r.test_name = Some("tests/t.py::test_add".to_string());
        assert_eq!(
            fix_description(&r),
            "make test `tests/t.py::test_add` pass by correcting the code it checks"
        );
    }
}
