//! Unit tests of the decision (`decide`): precedence of code over everything in the log, the
//! check's facts, and the flaky signals, over test names taken from the real corpus.

use super::*;
use ci_medic_parser::{BugType, ParseOptions, parse_bytes};
use proptest::prelude::*;

fn report(test: Option<&str>) -> BugReport {
    BugReport {
        file_path: "server/member/watch_leader_test.go".into(),
        line_number: 56,
        error_type: BugType::Logic,
        message: "DATA RACE".into(),
        test_name: test.map(str::to_string),
        confidence_score: 0.9,
        column: None,
        tool: None,
        rule: None,
    }
}

const SHA: &str = "4f2a9c1e0b7d3a5f6e8c9d0a1b2c3d4e5f6a7b8c";

fn outcome(test: &str, sha: &str, main: bool, passed: bool) -> TestOutcome {
    TestOutcome {
        test: test.into(),
        head_sha: sha.into(),
        on_default_branch: main,
        passed,
    }
}

fn facts() -> CheckFacts {
    CheckFacts {
        check_name: Some("test (ubuntu-latest)".into()),
        head_sha: Some(SHA.into()),
        conclusion: Some(Conclusion::Failure),
        ..CheckFacts::default()
    }
}

#[test]
fn infrastructure_log_without_reports_is_infrastructure() {
    let log = b"Run npm ci\nnpm ERR! code ETIMEDOUT\nnpm ERR! errno ETIMEDOUT\nError: Process completed with exit code 1.\n";
    let t = triage(log, &[], &facts(), &[]);
    assert_eq!(t.kind, FailureKind::Infrastructure);
    assert_eq!(t.rules, ["infra.network"]);
    assert_eq!(t.evidence.len(), 2);
    assert_eq!(t.evidence[0].line, 2);
    assert!(t.rerun_advised());
}

#[test]
fn code_wins_over_infrastructure_evidence() {
    let log = b"npm ERR! code ETIMEDOUT\nNo space left on device\n";
    let t = triage(log, &[report(None)], &facts(), &[]);
    assert_eq!(t.kind, FailureKind::Code);
    assert!(t.evidence.is_empty());
    assert_eq!(t.code_reports, 1);
}

#[test]
fn later_kind_wins_between_infrastructure_and_configuration() {
    let t = triage(
        b"Error: connect ETIMEDOUT 1.2.3.4:443\nError: Resource not accessible by integration\n",
        &[],
        &facts(),
        &[],
    );
    assert_eq!(t.kind, FailureKind::Configuration);
    assert_eq!(t.evidence[0].rule, "config.permission");
    let t = triage(
        b"Error: Resource not accessible by integration\nThe runner has received a shutdown signal.\n",
        &[],
        &facts(),
        &[],
    );
    assert_eq!(t.kind, FailureKind::Infrastructure);
}

#[test]
fn conclusions_decide_when_there_is_no_report() {
    for (c, kind, rule) in [
        (
            Conclusion::Cancelled,
            FailureKind::Infrastructure,
            "check.cancelled",
        ),
        (
            Conclusion::TimedOut,
            FailureKind::Infrastructure,
            "check.timed_out",
        ),
        (
            Conclusion::StartupFailure,
            FailureKind::Configuration,
            "check.startup_failure",
        ),
    ] {
        let f = CheckFacts {
            conclusion: Some(c),
            ..facts()
        };
        let t = triage(b"Run make test\n", &[], &f, &[]);
        assert_eq!(
            (t.kind, t.rules.as_slice()),
            (kind, &[rule.to_string()][..])
        );
        // A report still wins.
        assert_eq!(
            triage(b"", &[report(None)], &f, &[]).kind,
            FailureKind::Code
        );
    }
}

#[test]
fn failed_setup_step_is_infrastructure_only_without_other_evidence() {
    let f = CheckFacts {
        steps: vec![
            StepFacts {
                name: "Set up job".into(),
                number: 1,
                conclusion: Some(Conclusion::Failure),
            },
            StepFacts {
                name: "Run tests".into(),
                number: 2,
                conclusion: Some(Conclusion::Skipped),
            },
        ],
        ..facts()
    };
    assert_eq!(f.failed_step().map(|s| s.number), Some(1));
    let t = triage(
        b"Download action repository 'actions/checkout@v4'\n",
        &[],
        &f,
        &[],
    );
    assert_eq!(
        (t.kind, t.rules.as_slice()),
        (
            FailureKind::Infrastructure,
            &["check.setup_step".to_string()][..]
        )
    );
    let t = triage(
        b"Error: Unable to resolve action `actions/checkout@v9`, unable to find version `v9`\n",
        &[],
        &f,
        &[],
    );
    assert_eq!(t.kind, FailureKind::Configuration);
}

#[test]
fn nothing_known_is_code_with_no_evidence() {
    let t = triage(
        b"Run ./build.sh\nError: Process completed with exit code 2.\n",
        &[],
        &facts(),
        &[],
    );
    assert_eq!(t.kind, FailureKind::Code);
    assert!(t.rules.is_empty() && t.evidence.is_empty() && t.flaky.is_empty());
}

#[test]
fn passing_attempt_on_same_commit_is_flaky_even_with_reports() {
    let mut f = facts();
    f.run_attempt = Some(1);
    f.other_attempts = vec![AttemptOutcome {
        name: "test (ubuntu-latest)".into(),
        run_attempt: Some(2),
        job_id: Some(29_679_449_421),
        head_sha: Some(SHA.into()),
        conclusion: Some(Conclusion::Success),
    }];
    let t = triage(b"", &[report(Some("TestWatchLeaderSingle"))], &f, &[]);
    assert_eq!(t.kind, FailureKind::Flaky);
    assert_eq!(
        t.flaky[0].to_string(),
        "the check passed on the same commit in attempt 2 (`test (ubuntu-latest)`)"
    );
    // Another commit's pass, or another attempt's failure, says nothing.
    f.other_attempts[0].head_sha = Some("0".repeat(40));
    assert_eq!(
        triage(b"", &[report(None)], &f, &[]).kind,
        FailureKind::Code
    );
    f.other_attempts[0].head_sha = Some(SHA.into());
    f.other_attempts[0].conclusion = Some(Conclusion::Failure);
    assert_eq!(
        triage(b"", &[report(None)], &f, &[]).kind,
        FailureKind::Code
    );
}

#[test]
fn history_makes_a_failing_test_flaky() {
    let test = "TestWatchLeaderSingle";
    let r = [report(Some(test))];
    // Passed on this commit before.
    let h = [outcome(test, SHA, false, true)];
    let t = triage(b"", &r, &facts(), &h);
    assert_eq!(t.kind, FailureKind::Flaky);
    assert_eq!(t.rules, ["flaky.history"]);
    assert!(matches!(
        t.flaky[0].signal,
        FlakySignal::PassedOnSameCommit { .. }
    ));
    // Passed and failed on one other commit.
    let h = [
        outcome(test, "aaaa", false, false),
        outcome(test, "aaaa", false, true),
    ];
    assert_eq!(triage(b"", &r, &facts(), &h).kind, FailureKind::Flaky);
    // On main: failed between two passes.
    let h = [
        outcome(test, "a1", true, true),
        outcome(test, "b2", true, false),
        outcome(test, "c3", true, true),
    ];
    let t = triage(b"", &r, &facts(), &h);
    assert_eq!(t.kind, FailureKind::Flaky);
    assert_eq!(
        t.flaky[0].to_string(),
        "`TestWatchLeaderSingle` passed and failed on the default branch (passed at a1, c3; failed at b2)"
    );
}

#[test]
fn history_that_is_not_flaky_leaves_code() {
    let test = "test_unsorted_indices";
    let r = [report(Some(test))];
    for h in [
        // Only failures.
        vec![
            outcome(test, "a1", true, false),
            outcome(test, "b2", true, false),
        ],
        // Broken then fixed on main: not flaky.
        vec![
            outcome(test, "a1", true, false),
            outcome(test, "b2", true, true),
        ],
        // Another test's history.
        vec![outcome("test_other", SHA, false, true)],
        // Passed on another commit only.
        vec![outcome(test, "a1", false, true)],
    ] {
        assert_eq!(
            triage(b"", &r, &facts(), &h).kind,
            FailureKind::Code,
            "{h:?}"
        );
    }
    // A flaky test beside a compile error: code, the flaky test still named.
    let r = [report(Some(test)), report(None)];
    let h = [outcome(test, SHA, false, true)];
    let t = triage(b"", &r, &facts(), &h);
    assert_eq!(t.kind, FailureKind::Code);
    assert_eq!(t.flaky.len(), 1);
}

#[test]
fn failed_tests_are_deduplicated_in_order() {
    let r = [
        report(Some("b")),
        report(None),
        report(Some("a")),
        report(Some("b")),
    ];
    assert_eq!(failed_tests(&r), ["b", "a"]);
}

#[test]
fn serialisation_is_stable() {
    assert_eq!(
        serde_json::to_string(&FailureKind::Infrastructure)
            .ok()
            .as_deref(),
        Some("\"infrastructure\"")
    );
    assert_eq!(
        "configuration".parse::<FailureKind>(),
        Ok(FailureKind::Configuration)
    );
    let f: CheckFacts = serde_json::from_str(
        r#"{"conclusion":"timed_out","steps":[{"name":"Set up job","number":1,"conclusion":"brand_new"}]}"#,
    )
    .expect("facts parse");
    assert_eq!(f.conclusion, Some(Conclusion::TimedOut));
    assert_eq!(f.steps[0].conclusion, Some(Conclusion::Unknown));
    let e = FlakyEvidence {
        test: Some("t".into()),
        signal: FlakySignal::PassedOnSameCommit {
            head_sha: SHA.into(),
        },
    };
    let v = serde_json::to_value(&e).expect("serialises");
    assert_eq!(v["signal"], "passed_on_same_commit");
    assert_eq!(v["test"], "t");
}

/// Lines of real logs from the parser's corpus that the parser turns into reports.
const CODE_LOGS: [&str; 3] = [
    "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
    "/home/runner/work/R/R/app.py:1:8: F401 [*] `os` imported but unused\n",
    "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n  |\n3 |     \"x\"\n  |     ^^^ expected `u32`, found `&str`\n",
];

proptest! {
    /// Adding a code report to any log never yields infrastructure or configuration.
    #[test]
    fn a_code_report_is_never_infrastructure_or_configuration(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("npm ERR! code ETIMEDOUT".to_string()),
                Just("No space left on device".to_string()),
                Just("Error: Resource not accessible by integration".to_string()),
                Just("The operation was canceled.".to_string()),
                Just("toomanyrequests: You have reached your pull rate limit.".to_string()),
                "[ -~]{0,80}",
            ],
            0..20,
        ),
        code in 0..CODE_LOGS.len(),
        at in 0usize..20,
        conclusion in prop_oneof![
            Just(None),
            Just(Some(Conclusion::Cancelled)),
            Just(Some(Conclusion::TimedOut)),
            Just(Some(Conclusion::StartupFailure)),
        ],
    ) {
        let mut log = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i == at.min(lines.len()) {
                log.push_str(CODE_LOGS[code]);
            }
            log.push_str(l);
            log.push('\n');
        }
        if at >= lines.len() {
            log.push_str(CODE_LOGS[code]);
        }
        let reports = parse_bytes(log.as_bytes(), &ParseOptions::default());
        prop_assert!(!reports.is_empty());
        let f = CheckFacts { conclusion, ..CheckFacts::default() };
        let t = triage(log.as_bytes(), &reports, &f, &[]);
        prop_assert_eq!(t.kind, FailureKind::Code);
    }

    /// Chunking never changes the triage.
    #[test]
    fn chunking_is_invisible(log in proptest::collection::vec(any::<u8>(), 0..400), size in 1usize..50) {
        let whole = triage(&log, &[], &CheckFacts::default(), &[]);
        let mut t = Triager::new();
        for c in log.chunks(size) {
            t.feed(c);
        }
        prop_assert_eq!(t.finish(&[], &CheckFacts::default(), &[]), whole);
    }
}

#[test]
fn unexpected_input_warning_is_weak_configuration_evidence() {
    // The line of LedgerHQ/speculos#176, as the runner printed it.
    let warning = b"  Warning: Unexpected input(s) 'file', valid inputs are ['entryPoint', 'args', 'username', 'password', 'registry', 'repository', 'tags']\nError: Process completed with exit code 1.\n";
    let t = triage(warning, &[], &facts(), &[]);
    assert_eq!(t.kind, FailureKind::Configuration);
    assert_eq!(t.rules, ["config.unexpected_input"]);
    assert_eq!(t.evidence[0].line, 1);
    // Anything stronger wins: a network error, or a report.
    let mut log = warning.to_vec();
    log.extend_from_slice(b"npm ERR! code ECONNRESET\n");
    assert_eq!(
        triage(&log, &[], &facts(), &[]).kind,
        FailureKind::Infrastructure
    );
    assert_eq!(
        triage(warning, &[report(None)], &facts(), &[]).kind,
        FailureKind::Code
    );
}

/// A real data race report (apache/incubator-horaedb-meta#110, in the parser's corpus) whose
/// test passed on the same commit in ci-medic's history: flaky, naming the test.
#[test]
fn real_race_report_with_a_pass_on_the_same_commit_is_flaky() {
    let log =
        include_bytes!("../../../fixtures/corpus/real/go/nat-issues/ceresmeta-110-data-race.log");
    let reports = parse_bytes(log, &ParseOptions::default());
    let tests = failed_tests(&reports);
    assert_eq!(tests, ["TestWatchLeaderSingle"]);
    let history = [
        outcome("TestWatchLeaderSingle", "0b1c2d3e", true, true),
        outcome("TestWatchLeaderSingle", SHA, false, true),
    ];
    let t = triage(log, &reports, &facts(), &history);
    assert_eq!(t.kind, FailureKind::Flaky);
    assert_eq!(t.flaky.len(), 1);
    assert_eq!(
        t.flaky[0].to_string(),
        "`TestWatchLeaderSingle` passed on this same commit 4f2a9c1 before"
    );
    // Without the history it is the code's fault, as before.
    assert_eq!(triage(log, &reports, &facts(), &[]).kind, FailureKind::Code);
}
