//! Properties every built-in fixer keeps on arbitrary input: it never panics, and whatever it
//! proposes stays within the reported line ±3, keeps every comment line, adds no dependency and
//! no skip — i.e. it always passes the guard it will face.

use ci_medic_core::fix_check::{
    Candidate, FileChange, FixInput, GuardPolicy, check_patch, fix_deterministic,
};
use ci_medic_core::{BugReport, BugType};
use proptest::prelude::*;

const LINES: &[&str] = &[
    "import os",
    "import os, sys",
    "from x import a, b",
    "from x import (",
    "    a,",
    "    b,",
    ")",
    "def f()",
    "def f():",
    "if x:",
    "    return 1",
    "        y = 2",
    "   z = 3",
    "\tq = 1",
    "x = '''",
    "'''",
    "",
    "    ",
    "# a comment",
    "    # indented comment",
    "use std::{fmt, io};",
    "use std::fmt;",
    "#[cfg(test)]",
    "import { a, b } from \"x\";",
    "import a from 'x'",
    "const { a, b } = require(\"x\");",
    "import (",
    "\t\"os\"",
    "\tfmt \"fmt\"",
    "    let x = 1",
    "    let y = 2; // c",
    "}",
    "x = 1   ",
];

/// (file, rule, message) triples a real tool could print together.
const REPORTS: &[(&str, Option<&str>, &str)] = &[
    ("a.py", Some("F401"), "`os` imported but unused"),
    ("a.py", Some("F401"), "`x.a` imported but unused"),
    ("a.py", Some("F401"), "'sys' imported but unused"),
    ("a.py", Some("F401"), "'x.b' imported but unused"),
    ("a.py", None, "expected ':'"),
    ("a.py", None, "unexpected indent"),
    (
        "a.py",
        None,
        "unindent does not match any outer indentation level",
    ),
    (
        "a.py",
        None,
        "expected an indented block after 'if' statement on line 2",
    ),
    (
        "a.py",
        None,
        "expected an indented block after function definition on line 1",
    ),
    ("a.py", Some("W291"), "Trailing whitespace"),
    ("a.py", Some("W293"), "blank line contains whitespace"),
    ("a.py", Some("W292"), "No newline at end of file"),
    ("a.rs", Some("unused_imports"), "unused import: `fmt`"),
    (
        "a.rs",
        Some("unused_imports"),
        "unused imports: `fmt` and `io`",
    ),
    ("a.rs", Some("unused_imports"), "unused import: `std::fmt`"),
    ("a.rs", None, "expected `;`, found keyword `let`"),
    ("a.rs", None, "expected `;`, found `}`"),
    ("a.go", None, "\"os\" imported and not used"),
    ("a.go", None, "imported and not used: \"fmt\""),
    ("a.go", None, "\"fmt\" imported but not used as fmt"),
    (
        "a.ts",
        Some("@typescript-eslint/no-unused-vars"),
        "'a' is defined but never used",
    ),
    (
        "a.ts",
        Some("TS6133"),
        "'b' is declared but its value is never read.",
    ),
    (
        "a.js",
        Some("no-unused-vars"),
        "'b' is assigned a value but never used",
    ),
    ("a.js", Some("semi"), "Missing semicolon."),
    (
        "a.js",
        Some("no-trailing-spaces"),
        "Trailing spaces not allowed.",
    ),
    (
        "a.js",
        Some("eol-last"),
        "Newline required at end of file but not found.",
    ),
];

fn content() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(0..LINES.len(), 1..14),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(idx, crlf, final_nl)| {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut s = idx.iter().map(|&i| LINES[i]).collect::<Vec<_>>().join(eol);
            if final_nl {
                s.push_str(eol);
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8000))]

    #[test]
    fn every_fix_passes_the_guard(
        content in content(),
        pick in any::<prop::sample::Index>(),
        which in 0..REPORTS.len(),
    ) {
        let (file, rule, msg) = REPORTS[which];
        // Mostly a line of the file, sometimes one past its end.
        let line = pick.index(content.lines().count() + 1) as u32 + 1;
        let report = BugReport {
            file_path: file.into(),
            line_number: line,
            error_type: BugType::Linting,
            message: msg.into(),
            test_name: None,
            confidence_score: 0.9,
            column: None,
            tool: None,
            rule: rule.map(str::to_string),
        };
        let input = FixInput::new(report, content.clone());
        if let Some(out) = fix_deterministic(&input) {
            prop_assert_ne!(&out.patched_content, &content);
            let policy = GuardPolicy {
 whole_file_formatting: Vec::new(), formatter_hunks: Vec::new(),
                allowed_paths: vec![file.into()],
                protected_paths: vec![],
                do_not_touch: vec![],
                max_files_changed: 1,
                no_new_dependencies: true,
                allowed_dependencies: vec![],
                confidence_threshold: 0.7,
                reported_lines: vec![(file.into(), line)],
            };
            let cand = Candidate {
                changes: vec![FileChange {
                    path: file.into(),
                    before: Some(content.clone()),
                    after: out.patched_content.clone(),
                }],
                confidence: out.confidence_score,
            };
            let r = check_patch(&policy, &cand);
            prop_assert!(r.is_ok(), "{} on {:?} line {}: {:?}\n{}", out.fixer, content, line, r, out.patched_content);
            // Line endings other than the edited lines' are untouched: no CRLF/LF mix introduced.
            if content.contains("\r\n") {
                prop_assert_eq!(out.patched_content.matches('\n').count(), out.patched_content.matches("\r\n").count());
            }
        }
    }
}
