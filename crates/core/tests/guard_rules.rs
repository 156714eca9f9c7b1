//! The patch guard, rule by rule: for each rule a patch it accepts and one it refuses, plus a
//! property that a change far from every reported line is always refused.

use ci_medic_core::fix_check::{
    Candidate, FileChange, GuardPolicy, GuardViolation, LineSpan, ProtectedBy, check_patch,
    unified_diff,
};
use proptest::prelude::*;

fn policy() -> GuardPolicy {
    GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: vec!["src/".into(), "tests/test_app.py".into(), "lib/*.rs".into()],
        protected_paths: vec!["src/generated/".into()],
        do_not_touch: vec!["src/legacy.py".into()],
        max_files_changed: 2,
        no_new_dependencies: true,
        allowed_dependencies: vec!["requests".into()],
        confidence_threshold: 0.7,
        reported_lines: vec![
            ("src/app.py".into(), 10),
            ("tests/test_app.py".into(), 5),
            ("lib/x.rs".into(), 3),
        ],
    }
}

/// A 20-line Python file; line `n` reads `x{n} = {n}`.
fn file() -> String {
    (1..=20).map(|n| format!("x{n} = {n}\n")).collect()
}

fn with_line(content: &str, n: usize, text: &str) -> String {
    content
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}\n", if i + 1 == n { text } else { l }))
        .collect()
}

fn change(path: &str, before: &str, after: &str) -> FileChange {
    FileChange {
        path: path.into(),
        before: Some(before.into()),
        after: after.into(),
    }
}

fn one(path: &str, before: &str, after: &str) -> Candidate {
    Candidate {
        changes: vec![change(path, before, after)],
        confidence: 0.9,
    }
}

fn rules(r: Result<(), Vec<GuardViolation>>) -> Vec<&'static str> {
    match r {
        Ok(()) => vec![],
        Err(v) => {
            // Every violation explains itself to a maintainer.
            for x in &v {
                assert!(x.to_string().len() > 10, "{x:?}");
            }
            v.iter().map(|x| x.rule()).collect()
        }
    }
}

#[test]
fn a_minimal_fix_on_the_reported_line_passes() {
    let f = file();
    assert_eq!(
        rules(check_patch(
            &policy(),
            &one("src/app.py", &f, &with_line(&f, 10, "x10 = 11"))
        )),
        Vec::<&str>::new()
    );
    // ±3 is inclusive on both sides.
    assert!(
        check_patch(
            &policy(),
            &one("src/app.py", &f, &with_line(&f, 7, "x7 = 0"))
        )
        .is_ok()
    );
    assert!(
        check_patch(
            &policy(),
            &one("src/app.py", &f, &with_line(&f, 13, "x13 = 0"))
        )
        .is_ok()
    );
    // An unchanged file does not count.
    let unchanged = change("src/other.py", &f, &f);
    let c = Candidate {
        changes: vec![
            unchanged,
            change("src/app.py", &f, &with_line(&f, 10, "y = 1")),
        ],
        confidence: 0.9,
    };
    assert!(check_patch(&policy(), &c).is_ok());
}

#[test]
fn line_window() {
    let f = file();
    for n in [6, 14, 1, 20] {
        let r = rules(check_patch(
            &policy(),
            &one("src/app.py", &f, &with_line(&f, n, "z = 0")),
        ));
        assert_eq!(r, vec!["line_window"], "line {n}");
    }
    // An insertion right after line 13 touches the gap 13|14: still near line 10.
    let ins = f.replacen("x13 = 13\n", "x13 = 13\nnew = 1\n", 1);
    assert!(check_patch(&policy(), &one("src/app.py", &f, &ins)).is_ok());
    let far_ins = f.replacen("x15 = 15\n", "x15 = 15\nnew = 1\n", 1);
    assert_eq!(
        rules(check_patch(&policy(), &one("src/app.py", &f, &far_ins))),
        vec!["line_window"]
    );
    // Reported lines of another file don't count.
    assert_eq!(
        rules(check_patch(
            &policy(),
            &one("src/other.py", &f, &with_line(&f, 10, "z = 0"))
        )),
        vec!["line_window"]
    );
    // A new file is never near a reported line.
    let new = Candidate {
        changes: vec![FileChange {
            path: "src/new.py".into(),
            before: None,
            after: "x = 1\n".into(),
        }],
        confidence: 0.9,
    };
    assert_eq!(rules(check_patch(&policy(), &new)), vec!["line_window"]);
    // Flipping every line ending is a change to every line.
    let crlf = f.replace('\n', "\r\n");
    assert_eq!(
        rules(check_patch(&policy(), &one("src/app.py", &f, &crlf))),
        vec!["line_window"]
    );
}

#[test]
fn allowed_and_protected_paths() {
    let f = file();
    let fix = |p: &str| {
        rules(check_patch(
            &GuardPolicy {
                whole_file_formatting: Vec::new(),
                formatter_hunks: Vec::new(),
                reported_lines: vec![(p.into(), 10)],
                ..policy()
            },
            &one(p, &f, &with_line(&f, 10, "y = 0")),
        ))
    };
    assert_eq!(fix("src/deep/a.py"), Vec::<&str>::new());
    assert_eq!(fix("lib/x.rs"), Vec::<&str>::new());
    assert_eq!(fix("lib/deep/x.rs"), vec!["allowed_paths"]);
    assert_eq!(fix("srcx/a.py"), vec!["allowed_paths"]);
    assert_eq!(fix("tests/test_app.py"), Vec::<&str>::new());
    assert_eq!(fix("tests/test_other.py"), vec!["allowed_paths"]);
    assert_eq!(fix("src/generated/a.py"), vec!["protected_path"]);
    assert_eq!(fix("src/legacy.py"), vec!["protected_path"]);
    // Workflows are protected even when allowed and not configured as protected.
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: vec![".github/".into()],
        protected_paths: vec![],
        reported_lines: vec![(".github/workflows/ci.yml".into(), 10)],
        ..policy()
    };
    let r = check_patch(
        &p,
        &one(".github/workflows/ci.yml", &f, &with_line(&f, 10, "y: 0")),
    )
    .unwrap_err();
    assert!(
        matches!(
            &r[0],
            GuardViolation::Protected {
                by: ProtectedBy::Workflows,
                ..
            }
        ),
        "{r:?}"
    );
    // So is ci-medic's own configuration, whatever `protected_paths` the repository lists.
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: vec![".github/".into()],
        protected_paths: vec!["vendor/".into()],
        reported_lines: vec![(".github/ci-medic.yml".into(), 10)],
        ..policy()
    };
    let r = check_patch(
        &p,
        &one(".github/ci-medic.yml", &f, &with_line(&f, 10, "y: 0")),
    )
    .unwrap_err();
    assert!(
        matches!(
            &r[0],
            GuardViolation::Protected {
                by: ProtectedBy::Config,
                ..
            }
        ),
        "{r:?}"
    );
    for bad in [
        "../src/app.py",
        "/src/app.py",
        "src/../../etc/passwd",
        "src//app.py",
        "",
    ] {
        assert_eq!(fix(bad), vec!["path_escape"], "{bad}");
    }
    // Nothing is allowed when the proposal allows nothing.
    let none = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: vec![],
        ..policy()
    };
    assert_eq!(
        rules(check_patch(
            &none,
            &one("src/app.py", &f, &with_line(&f, 10, "y = 0"))
        )),
        vec!["allowed_paths"]
    );
}

#[test]
fn max_files_changed() {
    let f = file();
    let edit = |p: &str| change(p, &f, &with_line(&f, 10, "y = 0"));
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![
            ("src/a.py".into(), 10),
            ("src/b.py".into(), 10),
            ("src/c.py".into(), 10),
        ],
        ..policy()
    };
    let two = Candidate {
        changes: vec![edit("src/a.py"), edit("src/b.py")],
        confidence: 0.9,
    };
    assert!(check_patch(&p, &two).is_ok());
    let three = Candidate {
        changes: vec![edit("src/a.py"), edit("src/b.py"), edit("src/c.py")],
        confidence: 0.9,
    };
    assert_eq!(rules(check_patch(&p, &three)), vec!["max_files_changed"]);
}

#[test]
fn dependency_manifests() {
    for m in [
        "src/Cargo.toml",
        "src/package.json",
        "src/requirements-dev.txt",
        "src/go.sum",
        "src/poetry.lock",
        "src/Pipfile",
        "src/build.gradle.kts",
        "src/Gemfile.lock",
        "src/pom.xml",
        "src/pnpm-lock.yaml",
    ] {
        let p = GuardPolicy {
            whole_file_formatting: Vec::new(),
            formatter_hunks: Vec::new(),
            reported_lines: vec![(m.into(), 1)],
            ..policy()
        };
        let r = rules(check_patch(&p, &one(m, "a = 1\n", "a = 2\n")));
        assert_eq!(r, vec!["dependency_manifest"], "{m}");
    }
}

#[test]
fn new_dependencies() {
    let before = "import os\nimport requests\nfrom mylib.a import x\n\n\ndef f():\n    return 1\n";
    let at = |line: &str| before.replacen("\n\n\ndef", &format!("\n{line}\n\ndef"), 1);
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/app.py".into(), 4)],
        ..policy()
    };
    let check = |line: &str| rules(check_patch(&p, &one("src/app.py", before, &at(line))));
    // Standard library, relative, already present, allowed: fine.
    for ok in [
        "import json",
        "from collections import OrderedDict",
        "from . import sibling",
        "from .models import M",
        "from mylib.b import y",
        "import requests.adapters",
        "import os.path as osp",
    ] {
        assert_eq!(check(ok), Vec::<&str>::new(), "{ok}");
    }
    for bad in [
        "import numpy as np",
        "from flask import Flask",
        "import json, yaml",
    ] {
        assert_eq!(check(bad), vec!["new_dependency"], "{bad}");
    }
    // Allowed when the policy does not forbid new dependencies.
    let open = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        no_new_dependencies: false,
        ..p.clone()
    };
    assert!(check_patch(&open, &one("src/app.py", before, &at("import numpy"))).is_ok());

    let rs = "use std::fmt;\nuse serde::Serialize;\n\nfn f() {}\n";
    let pr = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/lib.rs".into(), 2)],
        ..policy()
    };
    let rcheck = |line: &str| {
        rules(check_patch(
            &pr,
            &one(
                "src/lib.rs",
                rs,
                &rs.replacen("\n\n", &format!("\n{line}\n\n"), 1),
            ),
        ))
    };
    assert_eq!(rcheck("use std::io;"), Vec::<&str>::new());
    assert_eq!(rcheck("use crate::x;"), Vec::<&str>::new());
    assert_eq!(rcheck("use serde::Deserialize;"), Vec::<&str>::new());
    assert_eq!(rcheck("use tokio::fs;"), vec!["new_dependency"]);

    let go = "package main\n\nimport (\n\t\"fmt\"\n)\n";
    let pg = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/main.go".into(), 4)],
        ..policy()
    };
    let gcheck = |line: &str| {
        rules(check_patch(
            &pg,
            &one(
                "src/main.go",
                go,
                &go.replacen("\t\"fmt\"\n", &format!("\t\"fmt\"\n{line}\n"), 1),
            ),
        ))
    };
    assert_eq!(gcheck("\t\"os\""), Vec::<&str>::new());
    assert_eq!(
        gcheck("\t\"github.com/pkg/errors\""),
        vec!["new_dependency"]
    );

    let ts = "import { a } from \"./a\";\nimport _ from \"lodash\";\n\nexport const x = 1;\n";
    let pt = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/x.ts".into(), 2)],
        ..policy()
    };
    let tcheck = |line: &str| {
        rules(check_patch(
            &pt,
            &one(
                "src/x.ts",
                ts,
                &ts.replacen("\n\n", &format!("\n{line}\n\n"), 1),
            ),
        ))
    };
    assert_eq!(tcheck("import fs from \"node:fs\";"), Vec::<&str>::new());
    assert_eq!(tcheck("import { b } from \"../b\";"), Vec::<&str>::new());
    assert_eq!(tcheck("import fp from \"lodash/fp\";"), Vec::<&str>::new());
    assert_eq!(
        tcheck("import axios from \"axios\";"),
        vec!["new_dependency"]
    );
    assert_eq!(
        tcheck("const y = require(\"left-pad\");"),
        vec!["new_dependency"]
    );
}

/// Removing an unused import of an assertion library removes no assertion: import lines are
/// not counted, while the assertions that use the library still are.
#[test]
fn an_unused_assertion_import_is_not_an_assertion() {
    let go = "package x\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n\t\"github.com/stretchr/testify/require\"\n)\n\nfunc TestA(t *testing.T) {\n\trequire.True(t, true)\n}\n";
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/x_test.go".into(), 6)],
        ..policy()
    };
    let go_fixed = go.replace("\t\"github.com/stretchr/testify/assert\"\n", "");
    assert_eq!(
        rules(check_patch(&p, &one("src/x_test.go", go, &go_fixed))),
        Vec::<&str>::new()
    );
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/x_test.go".into(), 11)],
        ..policy()
    };
    assert_eq!(
        rules(check_patch(
            &p,
            &one(
                "src/x_test.go",
                go,
                &go.replace("\trequire.True(t, true)\n", "")
            )
        )),
        vec!["deleted_assertion"],
        "the assertion itself still counts"
    );

    let js = "const assert = require('assert');\nimport { strict as assert2 } from 'node:assert';\nconst x = 1;\nexpect(require('./y')).toBe(1);\n";
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/a.test.js".into(), 2)],
        ..policy()
    };
    for line in [
        "const assert = require('assert');\n",
        "import { strict as assert2 } from 'node:assert';\n",
    ] {
        assert_eq!(
            rules(check_patch(
                &p,
                &one("src/a.test.js", js, &js.replace(line, ""))
            )),
            Vec::<&str>::new(),
            "{line}"
        );
    }
    // A line that asserts on what it requires is an assertion, not an import.
    assert_eq!(
        rules(check_patch(
            &p,
            &one(
                "src/a.test.js",
                js,
                &js.replace("expect(require('./y')).toBe(1);\n", "")
            )
        )),
        vec!["deleted_assertion"]
    );
}

#[test]
fn deleted_assertions_added_skips_and_continue_on_error() {
    let t = "def test_a():\n    x = 1\n    assert x == 1\n    y = 2\n    assert y == 2\n";
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("tests/test_app.py".into(), 3)],
        ..policy()
    };
    let check = |after: &str| rules(check_patch(&p, &one("tests/test_app.py", t, after)));
    assert_eq!(
        check(&t.replace("    assert x == 1\n", "")),
        vec!["deleted_assertion"]
    );
    assert_eq!(
        check(&t.replace("    assert x == 1\n", "    # assert x == 1\n")),
        vec!["deleted_assertion"]
    );
    assert_eq!(
        check(&t.replace("    assert x == 1\n", "    pass  # assert x == 1\n")),
        vec!["deleted_assertion"]
    );
    // Changing what is asserted keeps the assertion.
    assert_eq!(check(&t.replace("x == 1", "x >= 1")), Vec::<&str>::new());
    assert_eq!(
        check(&t.replace("def test_a", "@pytest.mark.skip\ndef test_a")),
        vec!["added_skip"]
    );
    assert_eq!(
        check(&t.replace("    x = 1\n", "    pytest.skip('later')\n")),
        vec!["added_skip"]
    );

    let rs = "#[test]\nfn a() {\n    assert_eq!(1, 1);\n}\n";
    let pr = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/t.rs".into(), 2)],
        ..policy()
    };
    assert_eq!(
        rules(check_patch(
            &pr,
            &one(
                "src/t.rs",
                rs,
                &rs.replace("#[test]\n", "#[test]\n#[ignore]\n")
            )
        )),
        vec!["added_skip"]
    );
    assert_eq!(
        rules(check_patch(
            &pr,
            &one("src/t.rs", rs, &rs.replace("    assert_eq!(1, 1);\n", ""))
        )),
        vec!["deleted_assertion"]
    );

    let js = "describe('x', () => {\n  it('a', () => {\n    expect(1).toBe(1);\n  });\n});\n";
    let pj = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/x.test.js".into(), 2)],
        ..policy()
    };
    for after in [
        js.replace("it('a'", "it.skip('a'"),
        js.replace("it('a'", "xit('a'"),
        js.replace("describe('x'", "describe.skip('x'"),
        js.replace("it('a'", "test.skip('a'"),
    ] {
        assert_eq!(
            rules(check_patch(&pj, &one("src/x.test.js", js, &after))),
            vec!["added_skip"],
            "{after}"
        );
    }
    let go = "func TestA(t *testing.T) {\n\tx := 1\n\tif x != 1 {\n\t\tt.Fatal(x)\n\t}\n}\n";
    let pg = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/a_test.go".into(), 2)],
        ..policy()
    };
    assert_eq!(
        rules(check_patch(
            &pg,
            &one(
                "src/a_test.go",
                go,
                &go.replace("\tx := 1\n", "\tt.Skip(\"x\")\n\tx := 1\n")
            )
        )),
        vec!["added_skip"]
    );

    let wf = "jobs:\n  test:\n    steps:\n      - run: make test\n";
    let py = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: vec!["ci/".into()],
        reported_lines: vec![("ci/pipeline.yml".into(), 4)],
        ..policy()
    };
    let after = wf.replace(
        "      - run: make test\n",
        "      - run: make test\n        continue-on-error: true\n",
    );
    assert_eq!(
        rules(check_patch(&py, &one("ci/pipeline.yml", wf, &after))),
        vec!["continue_on_error"]
    );
}

#[test]
fn comments_and_confidence() {
    let f = "x = 1\n# keep me\ny = 2\nz = 3  # trailing\n";
    let p = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        reported_lines: vec![("src/app.py".into(), 2)],
        ..policy()
    };
    assert_eq!(
        rules(check_patch(
            &p,
            &one("src/app.py", f, &f.replace("# keep me\n", ""))
        )),
        vec!["comment_removed"]
    );
    // Moving a comment line within the window keeps it.
    assert!(
        check_patch(
            &p,
            &one(
                "src/app.py",
                f,
                "# keep me\nx = 1\ny = 2\nz = 3  # trailing\n"
            )
        )
        .is_ok()
    );
    // A trailing comment goes with its code line (documented decision).
    assert!(check_patch(&p, &one("src/app.py", f, "x = 1\n# keep me\ny = 2\n")).is_ok());

    for c in [0.69, -0.1, 1.5, f64::NAN] {
        let cand = Candidate {
            confidence: c,
            ..one("src/app.py", f, &f.replace("y = 2", "y = 3"))
        };
        assert_eq!(rules(check_patch(&p, &cand)), vec!["confidence"], "{c}");
    }
    let cand = Candidate {
        confidence: 0.7,
        ..one("src/app.py", f, &f.replace("y = 2", "y = 3"))
    };
    assert!(check_patch(&p, &cand).is_ok());
}

#[test]
fn every_broken_rule_is_reported_together() {
    let f = file();
    let c = Candidate {
        changes: vec![change(
            "src/generated/Cargo.lock",
            &f,
            &with_line(&f, 1, "import numpy"),
        )],
        confidence: 0.1,
    };
    let mut r = rules(check_patch(&policy(), &c));
    r.sort();
    assert_eq!(
        r,
        vec![
            "confidence",
            "dependency_manifest",
            "line_window",
            "protected_path"
        ]
    );
}

#[test]
fn unified_diff_is_what_the_comment_shows() {
    let f = file();
    let d = unified_diff("src/app.py", Some(&f), &with_line(&f, 10, "x10 = 11"));
    assert!(
        d.starts_with("--- a/src/app.py\n+++ b/src/app.py\n@@ -7,7 +7,7 @@\n"),
        "{d}"
    );
    assert!(d.contains("-x10 = 10\n+x10 = 11\n"));
}

proptest! {
    /// Whatever line is changed, a change more than 3 lines from every reported line is refused,
    /// and one within 3 lines is not refused for its position.
    #[test]
    fn far_changes_are_always_refused(reported in 1u32..=40, target in 1u32..=40, text in "[a-z ]{0,12}") {
        let before: String = (1..=40).map(|n| format!("line{n}\n")).collect();
        let after = with_line(&before, target as usize, &format!("changed {text}"));
        let p = GuardPolicy { reported_lines: vec![("src/app.py".into(), reported)], ..policy() };
        let r = rules(check_patch(&p, &one("src/app.py", &before, &after)));
        if target.abs_diff(reported) > 3 {
            prop_assert_eq!(r, vec!["line_window"]);
        } else {
            prop_assert!(r.is_empty(), "{:?}", r);
        }
    }

    /// Deleting any line far from the reported one is refused too.
    #[test]
    fn far_deletions_are_always_refused(reported in 1u32..=30, target in 1u32..=30) {
        let before: String = (1..=30).map(|n| format!("line{n}\n")).collect();
        let after: String = before.lines().enumerate().filter(|(i, _)| *i as u32 + 1 != target).map(|(_, l)| format!("{l}\n")).collect();
        let p = GuardPolicy { reported_lines: vec![("src/app.py".into(), reported)], ..policy() };
        let refused = check_patch(&p, &one("src/app.py", &before, &after)).is_err();
        prop_assert_eq!(refused, target.abs_diff(reported) > 3);
    }
}

#[test]
fn a_file_a_formatter_reported_as_a_whole_may_change_anywhere_and_no_other() {
    let before = file();
    let after = with_line(&with_line(&before, 1, "x1  =  1"), 20, "x20  =  20");
    let candidate = |path: &str| Candidate {
        changes: vec![change(path, &before, &after)],
        confidence: 0.9,
    };
    // Lines 1 and 20 are far from the report at line 10: refused by default.
    let refused = check_patch(&policy(), &candidate("src/app.py")).unwrap_err();
    assert!(matches!(
        refused[0],
        GuardViolation::OutsideLineWindow { line: 1, .. }
    ));
    let p = GuardPolicy {
        whole_file_formatting: vec!["src/app.py".into()],
        formatter_hunks: Vec::new(),
        ..policy()
    };
    assert_eq!(check_patch(&p, &candidate("src/app.py")), Ok(()));
    // Only the listed file; every other rule still applies to it.
    assert!(check_patch(&p, &candidate("src/other.py")).is_err());
    let protected = GuardPolicy {
        whole_file_formatting: vec!["src/legacy.py".into()],
        formatter_hunks: Vec::new(),
        ..policy()
    };
    assert!(matches!(
        check_patch(&protected, &candidate("src/legacy.py")).unwrap_err()[0],
        GuardViolation::Protected { .. }
    ));
}

#[test]
fn a_formatter_with_known_hunks_may_change_them_and_nothing_outside() {
    let before = file();
    // The formatter's hunk runs from line 10 (the reported line) to 16: beyond the ±3 window.
    let hunk = (
        "src/app.py".to_string(),
        LineSpan {
            first: 10,
            last: 16,
        },
    );
    let p = GuardPolicy {
        reported_lines: vec![],
        formatter_hunks: vec![hunk],
        ..policy()
    };
    let inside = with_line(&with_line(&before, 10, "x10  =  10"), 16, "x16  =  16");
    assert_eq!(
        check_patch(&p, &one("src/app.py", &before, &inside)),
        Ok(())
    );
    // Without the hunk, line 16 is outside the window of the report at 10.
    assert!(matches!(
        check_patch(&policy(), &one("src/app.py", &before, &inside)).unwrap_err()[0],
        GuardViolation::OutsideLineWindow { line: 16, .. }
    ));
    // One line past the hunk, even right beside it, is refused with its own rule.
    let past = with_line(&inside, 17, "x17  =  17");
    let refused = check_patch(&p, &one("src/app.py", &before, &past)).unwrap_err();
    assert_eq!(refused.len(), 1);
    assert!(matches!(
        refused[0],
        GuardViolation::OutsideFormatterHunks { line: 17, .. }
    ));
    assert_eq!(refused[0].rule(), "formatter_hunks");
}
