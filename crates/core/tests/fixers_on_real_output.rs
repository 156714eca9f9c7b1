//! Every case under `fixtures/fixers/`: a broken source file, the real output of the tool that
//! rejected it (`tool.log`, captured by `fixtures/fixers/generate.sh`), the report a person reads
//! off that log (`report.json`), and — when a fixer should act — the `expected` fixed file.
//! A case without `expected` is one every fixer must decline.

use ci_medic_core::BugReport;
use ci_medic_core::fix_check::{
    Candidate, FileChange, FixInput, GuardPolicy, builtin_fixers, check_patch, fix_deterministic,
};
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fixers");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures/fixers exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("report.json").is_file())
        .collect();
    v.sort();
    assert!(
        v.len() >= 25,
        "expected the whole fixture set, found {}",
        v.len()
    );
    v
}

fn load(case: &Path) -> (BugReport, String, String, Option<String>) {
    let report: BugReport =
        serde_json::from_str(&std::fs::read_to_string(case.join("report.json")).unwrap()).unwrap();
    let log = std::fs::read_to_string(case.join("tool.log")).unwrap();
    let source = std::fs::read_to_string(case.join(&report.file_path)).unwrap();
    let expected = std::fs::read_to_string(case.join("expected")).ok();
    (report, log, source, expected)
}

/// The hand-built report must be what the real log says: same file, line and words.
fn assert_report_matches_log(case: &Path, report: &BugReport, log: &str) {
    let name = case.display();
    assert!(log.contains(&report.message), "{name}: message not in log");
    assert!(log.contains(&report.file_path), "{name}: file not in log");
    let line = report.line_number.to_string();
    let located = [
        format!("{}:{}", report.file_path, line),
        format!("{}({},", report.file_path, line),
        format!("line {line}"),
        format!("\n  {line}:"),
    ];
    assert!(
        located.iter().any(|l| log.contains(l.as_str())),
        "{name}: line {line} not in log"
    );
    if let Some(rule) = &report.rule {
        if rule != "unused_imports" {
            assert!(
                log.contains(rule.as_str()),
                "{name}: rule {rule} not in log"
            );
        } else {
            assert!(log.contains("unused-imports"), "{name}: lint not in log");
        }
    }
}

#[test]
fn every_fixture_is_fixed_exactly_or_declined() {
    let mut fixed = 0;
    for case in cases() {
        let (report, log, source, expected) = load(&case);
        assert_report_matches_log(&case, &report, &log);
        let input = FixInput::new(report.clone(), source.clone());
        let out = fix_deterministic(&input);
        match (&expected, &out) {
            (Some(exp), Some(out)) => {
                assert_eq!(&out.patched_content, exp, "{}: wrong fix", case.display());
                assert!((0.0..=1.0).contains(&out.confidence_score));
                assert!(!out.fix_reason.is_empty());
                // What a fixer proposes must also pass the guard it will face.
                let policy = GuardPolicy {
                    whole_file_formatting: Vec::new(),
                    formatter_hunks: Vec::new(),
                    allowed_paths: vec![report.file_path.clone()],
                    protected_paths: vec![".github/workflows/".into()],
                    do_not_touch: vec![],
                    max_files_changed: 1,
                    no_new_dependencies: true,
                    allowed_dependencies: vec![],
                    confidence_threshold: 0.7,
                    reported_lines: vec![(report.file_path.clone(), report.line_number)],
                };
                let cand = Candidate {
                    changes: vec![FileChange {
                        path: report.file_path.clone(),
                        before: Some(source.clone()),
                        after: out.patched_content.clone(),
                    }],
                    confidence: out.confidence_score,
                };
                assert_eq!(check_patch(&policy, &cand), Ok(()), "{}", case.display());
                fixed += 1;
            }
            (None, None) => {}
            (Some(_), None) => panic!("{}: no fixer fixed it", case.display()),
            (None, Some(out)) => panic!(
                "{}: should decline, but {} proposed:\n{}",
                case.display(),
                out.fixer,
                out.patched_content
            ),
        }
    }
    assert!(fixed >= 20, "only {fixed} cases fixed");
}

/// Exactly one fixer claims each fixable case: the fixers don't overlap.
#[test]
fn fixers_do_not_overlap() {
    for case in cases() {
        let (report, _, source, expected) = load(&case);
        if expected.is_none() {
            continue;
        }
        let input = FixInput::new(report, source);
        let claims: Vec<&str> = builtin_fixers()
            .iter()
            .filter(|f| f.try_fix(&input).is_some())
            .map(|f| f.name())
            .collect();
        assert_eq!(claims.len(), 1, "{}: {claims:?}", case.display());
    }
}
