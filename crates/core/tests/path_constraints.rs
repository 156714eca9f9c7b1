//! What a proposal allows and what the guard enforces come from one path matcher
//! (`proposal::PathPattern`): for any reported file and any configured entries, the derived
//! code_fix lists the file exactly when the guard lets a patch touch it.

use chrono::{NaiveDate, TimeZone, Utc};
use ci_medic_core::fix_check::{
    Candidate, FileChange, GuardPolicy, GuardViolation, check_patch, path_matches,
};
use ci_medic_core::ids::FixDdsId;
use ci_medic_core::proposal::*;
use ci_medic_core::repo_config::ConstraintsConfig;
use ci_medic_parser::{BugReport, BugType};
use proptest::prelude::*;

fn report(file: &str) -> BugReport {
    BugReport {
        file_path: file.into(),
        line_number: 1,
        error_type: BugType::Linting,
        message: "trailing whitespace".into(),
        test_name: None,
        confidence_score: 0.95,
        column: None,
        tool: None,
        rule: None,
    }
}

/// The code_fix derived for one reported `file` of a pull request changing `changed`.
fn proposed_paths(changed: &[String], file: &str, constraints: &ConstraintsConfig) -> Vec<String> {
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let source = build_failed_dds(
        failed_dds_id(day, 1).unwrap(),
        &FailedCheck {
            project: "acme/calc".into(),
            check_name: "lint".into(),
            head_sha: "abcdef0123456789abcdef0123456789abcdef01".into(),
            pr_number: Some(7),
            changed_files: changed.to_vec(),
            failed_at: Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 45).unwrap(),
        },
        constraints,
    )
    .unwrap();
    derive_code_fix(
        &FixDdsId::new(day, 1).unwrap(),
        &source.as_source(),
        &[report(file)],
        constraints,
    )
    .map(|d| d.dds.allowed_paths)
    .unwrap_or_default()
}

/// Whether the guard lets a one-line change to `file` through, path rules only.
fn guard_allows(allowed: &[String], file: &str, constraints: &ConstraintsConfig) -> bool {
    let policy = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: allowed.to_vec(),
        protected_paths: constraints.protected_paths.clone(),
        do_not_touch: constraints.do_not_touch.clone(),
        max_files_changed: 3,
        no_new_dependencies: true,
        allowed_dependencies: vec![],
        confidence_threshold: 0.0,
        reported_lines: vec![(file.to_string(), 1)],
    };
    let candidate = Candidate {
        changes: vec![FileChange {
            path: file.into(),
            before: Some("x = 1 \n".into()),
            after: "x = 1\n".into(),
        }],
        confidence: 1.0,
    };
    match check_patch(&policy, &candidate) {
        Ok(()) => true,
        Err(v) => !v.iter().any(|v| {
            matches!(
                v,
                GuardViolation::NotAllowed { .. } | GuardViolation::Protected { .. }
            )
        }),
    }
}

#[test]
fn a_star_never_crosses_a_slash_for_the_proposal_or_the_guard() {
    // Before the one matcher, the proposal's protection read `src/*.py` with `*` crossing `/`
    // and the guard did not, so the two disagreed on `src/x/y.py`.
    let constraints = ConstraintsConfig {
        protected_paths: vec!["src/*.py".into()],
        ..ConstraintsConfig::default()
    };
    let changed = vec!["src/x/y.py".to_string(), "src/y.py".to_string()];
    let deep = proposed_paths(&changed, "src/x/y.py", &constraints);
    assert_eq!(deep, vec!["src/x/y.py".to_string()]);
    assert!(guard_allows(&deep, "src/x/y.py", &constraints));
    let shallow = proposed_paths(&changed, "src/y.py", &constraints);
    assert!(shallow.is_empty(), "src/y.py is protected: {shallow:?}");
    assert!(!guard_allows(
        &["src/y.py".into()],
        "src/y.py",
        &constraints
    ));
}

#[test]
fn a_malformed_protection_keeps_the_proposal_and_the_guard_off_every_file() {
    // Before, the proposal read `src/[a` as a literal path (protecting nothing else) while the
    // guard protected everything: the proposal offered a fix the guard would refuse.
    let constraints = ConstraintsConfig {
        protected_paths: vec!["src/[a".into()],
        ..ConstraintsConfig::default()
    };
    let changed = vec!["src/a.py".to_string()];
    assert!(proposed_paths(&changed, "src/a.py", &constraints).is_empty());
    assert!(!guard_allows(&changed, "src/a.py", &constraints));
}

#[test]
fn globs_in_a_scope_mean_the_same_on_both_sides() {
    for (entry, path, want) in [
        ("src/*.py", "src/x.py", true),
        ("src/*.py", "src/x/y.py", false),
        ("src/**/*.py", "src/x/y.py", true),
        ("src/**", "src/x/y.py", true),
        ("vendor*", "vendor/x.go", true),
        ("src/", "src/x.py", true),
        ("src/", "src", false),
        ("src/a", "src/ab/x.py", false),
        ("./src/a", "src/a/x.py", true),
        ("src/[a", "src/a.py", false),
        ("", "x", false),
    ] {
        assert_eq!(path_matches(entry, path), want, "guard: {entry} ~ {path}");
        assert_eq!(
            path_in_scope(path, &[entry.to_string()]),
            want,
            "proposal: {entry} ~ {path}"
        );
    }
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("src".to_string()),
        Just("x".to_string()),
        Just("a.py".to_string()),
        Just("b.rs".to_string()),
    ]
}

fn file() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 1..4).prop_map(|s| s.join("/"))
}

fn entry() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        4 => segment(),
        2 => Just("*".to_string()),
        1 => Just("**".to_string()),
        1 => Just("*.py".to_string()),
        1 => Just("[a".to_string()),
        1 => Just("{a,b}.py".to_string()),
    ];
    (
        prop::collection::vec(part, 1..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(parts, dot, slash)| {
            format!(
                "{}{}{}",
                if dot { "./" } else { "" },
                parts.join("/"),
                if slash { "/" } else { "" }
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The proposal never allows what the guard refuses, and the guard never lets through a
    /// file the proposal left out.
    #[test]
    fn the_proposal_allows_exactly_what_the_guard_lets_through(
        reported in file(),
        others in prop::collection::vec(file(), 0..3),
        protected in prop::collection::vec(entry(), 0..3),
        do_not_touch in prop::collection::vec(entry(), 0..2),
    ) {
        let constraints = ConstraintsConfig {
            protected_paths: protected,
            do_not_touch,
            ..ConstraintsConfig::default()
        };
        let mut changed = others;
        changed.push(reported.clone());
        let proposed = proposed_paths(&changed, &reported, &constraints);
        let in_proposal = proposed.contains(&reported);
        // The guard is given the pull request's files when the proposal offers none, so a
        // refusal is the protection's, not an empty allow-list's.
        let allow = if proposed.is_empty() { changed.clone() } else { proposed.clone() };
        prop_assert_eq!(
            in_proposal,
            guard_allows(&allow, &reported, &constraints),
            "{} proposed {:?} with {:?}",
            reported,
            proposed,
            constraints.protected_paths
        );
    }

    /// An allow-list entry means the same to the proposal's scope check and to the guard.
    #[test]
    fn scope_and_guard_agree_on_every_entry(e in entry(), path in file()) {
        prop_assert_eq!(path_in_scope(&path, std::slice::from_ref(&e)), path_matches(&e, &path));
    }
}
