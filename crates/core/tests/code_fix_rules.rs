//! The failed source DDS, the derived code_fix and the ten validation rules of
//! `code-fix-dds-v2.md`, from the outside of the crate.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use ci_medic_core::ids::{DdsId, FixDdsId};
use ci_medic_core::proposal::*;
use ci_medic_core::repo_config::ConstraintsConfig;
use ci_medic_parser::{BugReport, BugType};
use proptest::prelude::*;

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 45).unwrap() + chrono::Duration::microseconds(123_456)
}

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 2, 2).unwrap()
}

fn report(t: BugType, file: &str, line: u32, msg: &str) -> BugReport {
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

fn failed(files: &[&str], max: u32) -> FailedDds {
    let cfg = ConstraintsConfig {
        max_files_changed: max,
        ..ConstraintsConfig::default()
    };
    build_failed_dds(
        failed_dds_id(day(), 1).unwrap(),
        &FailedCheck {
            project: "acme/calc".into(),
            check_name: "test".into(),
            head_sha: "abcdef0123456789abcdef0123456789abcdef01".into(),
            pr_number: Some(7),
            changed_files: files.iter().map(|s| s.to_string()).collect(),
            failed_at: at(),
        },
        &cfg,
    )
    .unwrap()
}

fn fix_id(n: u16) -> FixDdsId {
    FixDdsId::new(day(), n).unwrap()
}

fn derived(source: &FailedDds, reports: &[BugReport]) -> DerivedFix {
    derive_code_fix(
        &fix_id(1),
        &source.as_source(),
        reports,
        &ConstraintsConfig::default(),
    )
    .unwrap()
}

fn rules_of(fix: &CodeFixDds, source: Option<&SourceDds>, existing: Option<&str>) -> Vec<Rule> {
    match validate_code_fix(fix, source, existing) {
        Ok(()) => vec![],
        Err(e) => {
            for v in &e.errors {
                assert!(!v.message.is_empty());
            }
            e.rules()
        }
    }
}

#[test]
fn failed_dds_records_the_check() {
    let f = failed(
        &[
            "src/calculator.py",
            "tests/test_calculator.py",
            "src/calculator.py",
        ],
        5,
    );
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(v["id"], "DDS-20260202-CODE-001");
    assert_eq!(v["type"], "code_change");
    assert_eq!(v["status"], "failed");
    assert_eq!(v["project"], "acme/calc");
    assert_eq!(v["version"], 2);
    assert_eq!(v["tool"], "ci-medic");
    assert_eq!(
        v["allowed_paths"],
        serde_json::json!(["src/calculator.py", "tests/test_calculator.py"])
    );
    assert!(f.goal.contains("`test`") && f.goal.contains("abcdef0123456789"));
    assert_eq!(v["constraints"]["max_files_changed"], 5);
    assert_eq!(v["failed_at"], "2026-02-02T15:30:45.123456Z");
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert!(keys.contains(&"failed_at".to_string()));
}

#[test]
fn failed_dds_refuses_bad_input() {
    let base = FailedCheck {
        project: "acme/calc".into(),
        check_name: "test".into(),
        head_sha: "abc".into(),
        pr_number: None,
        changed_files: vec![],
        failed_at: at(),
    };
    let cfg = ConstraintsConfig::default();
    let id = || failed_dds_id(day(), 2).unwrap();
    assert!(matches!(
        build_failed_dds(DdsId("DDS-1".into()), &base, &cfg),
        Err(BuildError::BadFailedId(_))
    ));
    for project in ["acme", "/calc", "acme/", "a/b/c"] {
        let c = FailedCheck {
            project: project.into(),
            ..base.clone()
        };
        assert!(
            matches!(
                build_failed_dds(id(), &c, &cfg),
                Err(BuildError::BadProject(_))
            ),
            "{project}"
        );
    }
    let c = FailedCheck {
        changed_files: vec!["../x".into()],
        ..base.clone()
    };
    let e = build_failed_dds(id(), &c, &cfg).unwrap_err();
    assert!(e.to_string().contains(".."), "{e}");
    let c = FailedCheck {
        check_name: " ".into(),
        ..base
    };
    assert_eq!(
        build_failed_dds(id(), &c, &cfg),
        Err(BuildError::EmptyCheckName)
    );
}

#[test]
fn derived_code_fix_matches_the_specification() {
    let source = failed(
        &["src/calculator.py", "tests/test_calculator.py", "README.md"],
        5,
    );
    let reports = [
        report(
            BugType::TypeError,
            "src/calculator.py",
            42,
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        ),
        report(
            BugType::Logic,
            "tests/test_calculator.py",
            10,
            "assert 3 == '12'",
        ),
        report(BugType::Import, "lib/other.py", 1, "No module named 'x'"),
        report(BugType::TypeError, "src/calculator.py", 50, "again"),
    ];
    let d = derived(&source, &reports);
    let v = serde_json::to_value(&d.dds).unwrap();
    // exactly the spec's shape, in the spec's order
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    let text = serde_json::to_string(&d.dds).unwrap();
    let order: Vec<usize> = [
        "\"id\"",
        "\"version\"",
        "\"type\"",
        "\"project\"",
        "\"goal\"",
        "\"instructions\"",
        "\"allowed_paths\"",
        "\"tool\"",
        "\"constraints\"",
        "\"status\"",
        "\"source_dds\"",
        "\"error_context\"",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert_eq!(keys.len(), 12);
    assert_eq!(v["id"], "DDS-FIX-20260202-001");
    assert_eq!(v["type"], "code_fix");
    assert_eq!(v["status"], "proposed");
    assert_eq!(v["project"], "acme/calc");
    assert_eq!(v["tool"], "ci-medic");
    assert_eq!(v["source_dds"], "DDS-20260202-CODE-001");
    assert_eq!(
        v["allowed_paths"],
        serde_json::json!(["src/calculator.py", "tests/test_calculator.py"])
    );
    assert_eq!(
        v["constraints"],
        serde_json::json!({"max_files_changed": 3, "no_new_dependencies": true, "no_refactor": true})
    );
    assert_eq!(v["error_context"]["original_dds"], "DDS-20260202-CODE-001");
    assert_eq!(
        v["error_context"]["failed_at"],
        "2026-02-02T15:30:45.123456Z"
    );
    assert_eq!(
        v["error_context"]["error_message"],
        "src/calculator.py:42: TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    );
    assert!(d.dds.goal.starts_with(
        "Fix execution failure in DDS-20260202-CODE-001: TYPE_ERROR in src/calculator.py"
    ));
    // the out-of-scope file is said so, and not allowed
    assert_eq!(d.out_of_scope, ["lib/other.py"]);
    assert!(
        d.dds
            .instructions
            .iter()
            .any(|i| i.contains("Do not edit lib/other.py")
                && i.contains("outside the scope of DDS-20260202-CODE-001"))
    );
    assert!(d.dds.instructions.contains(
        &"TYPE_ERROR error in src/calculator.py line 42 → Fix: make the types agree at that line".to_string()
    ));
    validate_code_fix(&d.dds, Some(&source.as_source()), None).unwrap();
}

#[test]
fn max_files_is_min_of_source_and_three() {
    for (src, want) in [(1, 1), (2, 2), (3, 3), (5, 3), (100, 3)] {
        let s = failed(&["a.py"], src);
        let d = derived(&s, &[report(BugType::Syntax, "a.py", 1, "bad")]);
        assert_eq!(d.dds.constraints.max_files_changed, want);
    }
}

#[test]
fn protected_files_are_not_allowed_and_the_proposal_says_so() {
    let s = failed(&[".github/workflows/ci.yml", "src/a.py"], 5);
    let d = derived(
        &s,
        &[
            report(BugType::Syntax, ".github/workflows/ci.yml", 3, "bad yaml"),
            report(BugType::Syntax, "src/a.py", 3, "bad"),
        ],
    );
    assert_eq!(d.dds.allowed_paths, ["src/a.py"]);
    assert_eq!(
        d.protected,
        [(
            ".github/workflows/ci.yml".to_string(),
            ".github/workflows/".to_string()
        )]
    );
    assert!(d.dds.instructions.iter().any(|i| i.contains("protected")));
}

/// A repository that lists its own `protected_paths` replaces the default list; the workflows
/// directory and ci-medic's own configuration stay protected anyway.
#[test]
fn workflows_and_the_config_file_stay_protected_under_a_custom_list() {
    let s = failed(
        &[
            ".github/ci-medic.yml",
            ".github/workflows/ci.yml",
            "src/a.py",
        ],
        5,
    );
    let cfg = ConstraintsConfig {
        protected_paths: vec!["vendor/".into()],
        ..ConstraintsConfig::default()
    };
    let d = derive_code_fix(
        &fix_id(1),
        &s.as_source(),
        &[
            report(BugType::Syntax, ".github/ci-medic.yml", 2, "bad yaml"),
            report(BugType::Syntax, ".github/workflows/ci.yml", 3, "bad yaml"),
            report(BugType::Syntax, "src/a.py", 3, "bad"),
        ],
        &cfg,
    )
    .unwrap();
    assert_eq!(d.dds.allowed_paths, ["src/a.py"]);
    assert_eq!(
        d.protected,
        [
            (
                ".github/ci-medic.yml".to_string(),
                ".github/ci-medic.yml".to_string()
            ),
            (
                ".github/workflows/ci.yml".to_string(),
                ".github/workflows/".to_string()
            ),
        ]
    );
}

#[test]
fn deriving_from_a_source_that_has_not_failed_or_without_reports_is_an_error() {
    let s = failed(&["a.py"], 5);
    let mut src = s.as_source();
    src.status = DdsStatus::Approved;
    src.failed_at = None;
    let r = [report(BugType::Syntax, "a.py", 1, "x")];
    assert!(matches!(
        derive_code_fix(&fix_id(1), &src, &r, &ConstraintsConfig::default()),
        Err(BuildError::SourceNotFailed { .. })
    ));
    assert_eq!(
        derive_code_fix(
            &fix_id(1),
            &s.as_source(),
            &[],
            &ConstraintsConfig::default()
        ),
        Err(BuildError::NoReports)
    );
}

#[test]
fn a_failed_code_fix_can_be_the_source_of_the_next() {
    let s = failed(&["src/a.py", "src/b.py"], 5);
    let first = derived(&s, &[report(BugType::Syntax, "src/a.py", 1, "x")]);
    let stored = StoredProposal::new(first, at());
    let approved = stored
        .apply(
            DdsStatus::Proposed,
            DdsStatus::Approved,
            "alice",
            at(),
            "/approve",
        )
        .unwrap();
    let later = at() + chrono::Duration::minutes(5);
    let failed_fix = approved
        .apply(
            DdsStatus::Approved,
            DdsStatus::Failed,
            "ci-medic",
            later,
            "check `test` failed again",
        )
        .unwrap();
    let src = failed_fix.as_source();
    assert_eq!(src.status, DdsStatus::Failed);
    assert_eq!(src.failed_at, Some(later));
    let second = derive_code_fix(
        &fix_id(2),
        &src,
        &[
            report(BugType::Syntax, "src/a.py", 2, "y"),
            report(BugType::Syntax, "src/b.py", 2, "z"),
        ],
        &ConstraintsConfig::default(),
    )
    .unwrap();
    // the scope narrowed to the first fix's paths: b.py is no longer allowed
    assert_eq!(second.dds.allowed_paths, ["src/a.py"]);
    assert_eq!(second.out_of_scope, ["src/b.py"]);
    assert_eq!(second.dds.source_dds.as_str(), "DDS-FIX-20260202-001");
    validate_code_fix(&second.dds, Some(&src), None).unwrap();
    // the published block (as created) validates; the current one does not pass rule 4
    assert_eq!(
        rules_of(&failed_fix.current_dds(), Some(&s.as_source()), None),
        [Rule::Status]
    );
    validate_code_fix(
        &failed_fix.dds,
        Some(&s.as_source()),
        Some(&failed_fix.dds.id),
    )
    .unwrap();
}

// ---- the ten rules, one by one ----

fn valid() -> (CodeFixDds, SourceDds) {
    let s = failed(&["src/", "tests/"], 5);
    let d = derived(&s, &[report(BugType::Syntax, "src/a.py", 1, "x")]);
    (d.dds, s.as_source())
}

#[test]
fn rule_1_id_format() {
    let (mut f, s) = valid();
    for bad in [
        "DDS-FIX-2026020-001",
        "DDS-20260202-CODE-001",
        "dds-fix-20260202-001",
        "",
    ] {
        f.id = bad.into();
        assert_eq!(rules_of(&f, Some(&s), None), [Rule::IdFormat], "{bad}");
    }
}

#[test]
fn rule_2_version() {
    let (mut f, s) = valid();
    f.version = 1;
    assert_eq!(rules_of(&f, Some(&s), None), [Rule::Version]);
}

#[test]
fn rule_3_type() {
    let (mut f, s) = valid();
    f.dds_type = DdsType::CodeChange;
    assert_eq!(rules_of(&f, Some(&s), None), [Rule::Type]);
}

#[test]
fn rule_4_status() {
    let (mut f, s) = valid();
    for st in [
        DdsStatus::Approved,
        DdsStatus::Rejected,
        DdsStatus::Executed,
        DdsStatus::Failed,
    ] {
        f.status = st;
        assert_eq!(rules_of(&f, Some(&s), None), [Rule::Status]);
    }
}

#[test]
fn rule_5_source() {
    let (f, mut s) = valid();
    let missing = validate_code_fix(&f, None, None).unwrap_err();
    assert_eq!(missing.rules(), [Rule::SourceDds]);
    assert!(
        missing.to_string().contains("does not name a DDS"),
        "{missing}"
    );
    s.status = DdsStatus::Approved;
    let e = validate_code_fix(&f, Some(&s), None).unwrap_err();
    assert_eq!(e.rules(), [Rule::SourceDds]);
    assert!(e.errors[0].message.contains("`approved`"));
    let (f, mut s) = valid();
    s.id = DdsId("DDS-20260202-CODE-009".into());
    assert!(rules_of(&f, Some(&s), None).contains(&Rule::SourceDds));
}

#[test]
fn rule_6_paths() {
    let (mut f, s) = valid();
    for (p, ok) in [
        ("src/a.py", true),
        ("tests/x/y.py", true),
        ("src/", true),
        ("srcx/a.py", false),
        ("lib/a.py", false),
        ("src/../etc/passwd", false),
        ("/src/a.py", false),
        ("../src/a.py", false),
    ] {
        f.allowed_paths = vec![p.into()];
        let got = rules_of(&f, Some(&s), None);
        if ok {
            assert!(got.is_empty(), "{p}: {got:?}");
        } else {
            assert_eq!(got, [Rule::AllowedPaths], "{p}");
        }
    }
    // a file scope does not cover a sibling sharing its prefix
    let narrow = failed(&["src/a"], 5).as_source();
    let mut f2 = f.clone();
    f2.allowed_paths = vec!["src/ab/x".into()];
    let e = validate_code_fix(&f2, Some(&narrow), None).unwrap_err();
    assert!(
        e.errors[0].message.contains("src/ab/x") && e.errors[0].message.contains("src/a"),
        "{e}"
    );
}

#[test]
fn rule_7_constraints() {
    let (f, s) = valid();
    let mut g = f.clone();
    g.constraints.max_files_changed = 4;
    assert_eq!(rules_of(&g, Some(&s), None), [Rule::Constraints]);
    let mut g = f.clone();
    g.constraints.no_new_dependencies = false;
    g.constraints.no_refactor = false;
    assert_eq!(
        rules_of(&g, Some(&s), None),
        [Rule::Constraints, Rule::Constraints]
    );
    // stricter than the source is fine; looser is not
    let tight = failed(&["src/"], 2).as_source();
    let mut g = f.clone();
    g.constraints.max_files_changed = 3;
    assert_eq!(rules_of(&g, Some(&tight), None), [Rule::Constraints]);
    g.constraints.max_files_changed = 1;
    assert!(rules_of(&g, Some(&tight), None).is_empty());
}

#[test]
fn rule_8_error_context() {
    let (f, s) = valid();
    let mut g = f.clone();
    g.error_context.original_dds = String::new();
    g.error_context.error_message = " ".into();
    g.error_context.failed_at = String::new();
    assert_eq!(rules_of(&g, Some(&s), None), [Rule::ErrorContext; 3]);
    let mut g = f.clone();
    g.error_context.original_dds = "DDS-20260202-CODE-002".into();
    assert_eq!(rules_of(&g, Some(&s), None), [Rule::ErrorContext]);
    let mut g = f.clone();
    g.error_context.failed_at = "2nd of February".into();
    assert_eq!(rules_of(&g, Some(&s), None), [Rule::ErrorContext]);
    let mut g = f.clone();
    g.error_context.failed_at = "2026-02-02T15:30:45.123456".into();
    assert!(rules_of(&g, Some(&s), None).is_empty());
}

#[test]
fn rule_9_error_message() {
    let (f, s) = valid();
    let mut g = f.clone();
    g.error_context.error_message = "x".repeat(500);
    assert!(rules_of(&g, Some(&s), None).is_empty());
    g.error_context.error_message = "é".repeat(501);
    let e = validate_code_fix(&g, Some(&s), None).unwrap_err();
    assert_eq!(e.rules(), [Rule::ErrorMessage]);
    assert!(e.errors[0].message.contains("501"));
    g.error_context.error_message = "a\r\nb".into();
    assert_eq!(rules_of(&g, Some(&s), None), [Rule::ErrorMessage]);
}

#[test]
fn rule_10_no_duplicates() {
    let (f, s) = valid();
    let e = validate_code_fix(&f, Some(&s), Some("DDS-FIX-20260202-007")).unwrap_err();
    assert_eq!(e.rules(), [Rule::NoDuplicates]);
    assert!(e.to_string().contains("DDS-FIX-20260202-007"));
    // re-validating the stored fix itself is not a duplicate
    assert!(rules_of(&f, Some(&s), Some(&f.id)).is_empty());
}

#[test]
fn inheritance_rules_and_every_violation_at_once() {
    let (mut f, s) = valid();
    f.project = "other/repo".into();
    f.tool = "aider".into();
    f.goal = "fix stuff".into();
    f.version = 3;
    f.id = "nope".into();
    let e = validate_code_fix(&f, Some(&s), Some("DDS-FIX-20260202-002")).unwrap_err();
    assert_eq!(
        e.rules(),
        [
            Rule::IdFormat,
            Rule::Version,
            Rule::NoDuplicates,
            Rule::Inheritance,
            Rule::Inheritance,
            Rule::Inheritance
        ]
    );
    let text = e.to_string();
    assert!(
        text.contains("rule 1 (ID format)") && text.contains("rule 10 (no duplicates)"),
        "{text}"
    );
}

#[test]
fn the_specifications_example_validates() {
    let example = r#"{
      "id": "DDS-FIX-20260202-001", "version": 2, "type": "code_fix", "project": "ai_system",
      "goal": "Fix execution failure in DDS-20260202-CODE-001: TypeError in calculator.py",
      "instructions": ["Analyze error: TypeError at src/calculator.py line 42"],
      "allowed_paths": ["src/calculator.py", "tests/test_calculator.py"],
      "tool": "aider",
      "constraints": {"max_files_changed": 2, "no_new_dependencies": true, "no_refactor": true},
      "status": "proposed", "source_dds": "DDS-20260202-CODE-001",
      "error_context": {"original_dds": "DDS-20260202-CODE-001",
        "error_message": "TypeError: unsupported operand type(s) for +: 'int' and 'str'\n  File \"src/calculator.py\", line 42, in calculate",
        "failed_at": "2026-02-02T15:30:45.123456"}
    }"#;
    let fix: CodeFixDds = serde_json::from_str(example).unwrap();
    let source = SourceDds {
        id: DdsId("DDS-20260202-CODE-001".into()),
        dds_type: DdsType::CodeChange,
        status: DdsStatus::Failed,
        project: "ai_system".into(),
        tool: "aider".into(),
        allowed_paths: vec!["src/".into(), "tests/".into()],
        constraints: DdsConstraints {
            max_files_changed: 5,
            no_new_dependencies: true,
            no_refactor: false,
        },
        failed_at: Some(at()),
    };
    validate_code_fix(&fix, Some(&source), None).unwrap();
    let back: serde_json::Value = serde_json::to_value(&fix).unwrap();
    assert_eq!(
        back,
        serde_json::from_str::<serde_json::Value>(example).unwrap()
    );
}

// ---- properties ----

fn seg() -> impl Strategy<Value = String> {
    "[a-c]{1,2}"
}

fn rel_path() -> impl Strategy<Value = String> {
    prop::collection::vec(seg(), 1..4).prop_map(|v| v.join("/"))
}

proptest! {
    #[test]
    fn derived_fixes_always_validate_and_only_narrow(
        scope in prop::collection::vec(rel_path(), 0..5),
        files in prop::collection::vec((rel_path(), prop::sample::select(BugType::ALL.to_vec()), "(?s).{0,800}"), 1..12),
        max in 0u32..10,
    ) {
        let scope_refs: Vec<&str> = scope.iter().map(String::as_str).collect();
        let s = failed(&scope_refs, max);
        let reports: Vec<BugReport> = files.iter().enumerate()
            .map(|(i, (f, t, m))| report(*t, f, i as u32 + 1, m)).collect();
        let d = derive_code_fix(&fix_id(1), &s.as_source(), &reports, &ConstraintsConfig::default()).unwrap();
        validate_code_fix(&d.dds, Some(&s.as_source()), None).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for p in &d.dds.allowed_paths {
            prop_assert!(path_in_scope(p, &s.allowed_paths));
        }
        // every reported file is either allowed or reported as out of scope (no protection here)
        for r in &reports {
            prop_assert!(d.dds.allowed_paths.contains(&r.file_path) != d.out_of_scope.contains(&r.file_path));
            prop_assert_eq!(d.out_of_scope.contains(&r.file_path), !path_in_scope(&r.file_path, &s.allowed_paths));
        }
        prop_assert_eq!(d.dds.constraints.max_files_changed, max.min(3));
        prop_assert!(d.dds.error_context.error_message.chars().count() <= 500);
    }
}

/// One way to break a valid code_fix, and the rule that must then (alone) be reported.
#[derive(Debug, Clone)]
enum Breakage {
    Id(String),
    Version(u32),
    Status(DdsStatus),
    SourceStatus(DdsStatus),
    PathOutside(String),
    PathTraversal(String),
    MaxFiles(u32),
    NoNewDeps,
    NoRefactor,
    EmptyContext(u8),
    LongMessage(usize),
    Duplicate(u16),
}

fn breakage() -> impl Strategy<Value = Breakage> {
    prop_oneof![
        "[A-Z0-9-]{0,24}"
            .prop_filter("must be malformed", |s| !ci_medic_core::ids::is_fix_dds_id(
                s
            ))
            .prop_map(Breakage::Id),
        (0u32..100)
            .prop_filter("not 2", |v| *v != 2)
            .prop_map(Breakage::Version),
        prop::sample::select(vec![
            DdsStatus::Approved,
            DdsStatus::Rejected,
            DdsStatus::Executed,
            DdsStatus::Failed
        ])
        .prop_map(Breakage::Status),
        prop::sample::select(vec![
            DdsStatus::Proposed,
            DdsStatus::Approved,
            DdsStatus::Rejected,
            DdsStatus::Executed
        ])
        .prop_map(Breakage::SourceStatus),
        "(lib|srcx|src2|doc)/[a-z]{1,5}\\.py".prop_map(Breakage::PathOutside),
        "src/([a-z]{1,3}/)?\\.\\./[a-z]{1,5}".prop_map(Breakage::PathTraversal),
        (4u32..1000).prop_map(Breakage::MaxFiles),
        Just(Breakage::NoNewDeps),
        Just(Breakage::NoRefactor),
        (0u8..3).prop_map(Breakage::EmptyContext),
        (501usize..2000).prop_map(Breakage::LongMessage),
        (2u16..999).prop_map(Breakage::Duplicate),
    ]
}

proptest! {
    #[test]
    fn each_breakage_is_reported_under_its_rule(b in breakage()) {
        let (mut f, mut s) = valid();
        let mut existing: Option<String> = None;
        let rule = match b {
            Breakage::Id(id) => { f.id = id; Rule::IdFormat }
            Breakage::Version(v) => { f.version = v; Rule::Version }
            Breakage::Status(st) => { f.status = st; Rule::Status }
            Breakage::SourceStatus(st) => { s.status = st; Rule::SourceDds }
            Breakage::PathOutside(p) | Breakage::PathTraversal(p) => { f.allowed_paths.push(p); Rule::AllowedPaths }
            Breakage::MaxFiles(m) => { f.constraints.max_files_changed = m; Rule::Constraints }
            Breakage::NoNewDeps => { f.constraints.no_new_dependencies = false; Rule::Constraints }
            Breakage::NoRefactor => { f.constraints.no_refactor = false; Rule::Constraints }
            Breakage::EmptyContext(which) => {
                match which {
                    0 => f.error_context.original_dds.clear(),
                    1 => f.error_context.error_message.clear(),
                    _ => f.error_context.failed_at.clear(),
                }
                Rule::ErrorContext
            }
            Breakage::LongMessage(n) => { f.error_context.error_message = "x".repeat(n); Rule::ErrorMessage }
            Breakage::Duplicate(n) => { existing = Some(fix_id(n).to_string()); Rule::NoDuplicates }
        };
        let e = validate_code_fix(&f, Some(&s), existing.as_deref()).unwrap_err();
        prop_assert_eq!(e.rules(), vec![rule]);
        prop_assert!(!e.errors[0].message.is_empty());
    }
}
