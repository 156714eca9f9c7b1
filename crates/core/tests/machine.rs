//! The proposal state machine: for every sequence of events the published DDS status, the
//! comment's prose and the registry agree; illegal events are refused with a typed error; a
//! decided proposal never changes its decision; and one snapshot of the comment per stage.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use ci_medic_core::comment::render_comment;
use ci_medic_core::formatter::format_report_line;
use ci_medic_core::ids::FixDdsId;
use ci_medic_core::proposal::machine::prose_dds_status;
use ci_medic_core::proposal::{
    CheckRef, DdsStatus, DerivedFix, Effect, Event, FailedCheck, MachineError, NotCode, Phase,
    Proposal, RunState, Stage, StoredProposal, build_failed_dds, build_fix_packet, derive_code_fix,
    failed_dds_id, step,
};
use ci_medic_core::repo_config::ConstraintsConfig;
use ci_medic_core::{BugReport, BugType};
use proptest::prelude::*;

const CHECK: &str = "lint";
const SHAS: [&str; 2] = [
    "1111111111111111111111111111111111111111",
    "2222222222222222222222222222222222222222",
];
const COMMITS: [&str; 2] = [
    "c0ffee0000000000000000000000000000000000",
    "c0ffee1111111111111111111111111111111111",
];

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 0).unwrap()
}

fn report() -> BugReport {
    BugReport {
        file_path: "app/main.py".into(),
        line_number: 1,
        error_type: BugType::Linting,
        message: "`os` imported but unused".into(),
        test_name: None,
        confidence_score: 0.95,
        column: Some(8),
        tool: Some("ruff".into()),
        rule: Some("F401".into()),
    }
}

/// A real code_fix, derived by the specification's rules from a failed check on `sha`.
fn derived(seq: u16, sha: &str) -> DerivedFix {
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let constraints = ConstraintsConfig::default();
    let failed = build_failed_dds(
        failed_dds_id(day, seq).unwrap(),
        &FailedCheck {
            project: "octo-org/shop".into(),
            check_name: CHECK.into(),
            head_sha: sha.into(),
            pr_number: Some(7),
            changed_files: vec!["app/main.py".into()],
            failed_at: t0(),
        },
        &constraints,
    )
    .unwrap();
    derive_code_fix(
        &FixDdsId::new(day, seq).unwrap(),
        &failed.as_source(),
        &[report()],
        &constraints,
    )
    .unwrap()
}

fn proposal_of(d: &DerivedFix, sha: &str) -> Proposal {
    Proposal {
        dds: d.dds.clone(),
        fix_packet: build_fix_packet(
            &CheckRef {
                check_name: CHECK.into(),
                head_sha: sha.into(),
            },
            &[report()],
            &ConstraintsConfig::default(),
        ),
        report_lines: vec![format_report_line(&report())],
        reports_left_out: 0,
        out_of_scope: d.out_of_scope.clone(),
    }
}

/// Every fenced `json` block of a comment.
fn json_blocks(body: &str) -> Vec<serde_json::Value> {
    let mut blocks = Vec::new();
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        if ticks >= 3 && &line[ticks..] == "json" {
            let fence = "`".repeat(ticks);
            let content: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with(&fence))
                .collect();
            blocks.push(serde_json::from_str(&content.join("\n")).unwrap());
        }
    }
    blocks
}

/// The `status` of the DDS block on the rendered comment, if it shows one.
fn published_status(state: &RunState) -> Option<String> {
    let body = render_comment(&state.view());
    json_blocks(&body)
        .iter()
        .find(|b| b.get("type").and_then(|t| t.as_str()) == Some("code_fix"))
        .map(|b| b["status"].as_str().unwrap().to_string())
}

/// What a driver of the machine does with the effects: the registry, simulated with the same
/// `StoredProposal::apply` the service's registry runs.
#[derive(Default)]
struct Registry(BTreeMap<String, StoredProposal>);

impl Registry {
    fn apply(&mut self, effects: &[Effect], at: DateTime<Utc>) {
        for e in effects {
            if let Effect::Record(r) = e {
                let stored = self.0.get(&r.fix_id).expect("recorded proposal exists");
                let next = stored
                    .apply(r.from, r.to, &r.actor, at, &r.reason)
                    .unwrap_or_else(|e| panic!("the machine emitted an illegal transition: {e}"));
                self.0.insert(r.fix_id.clone(), next);
            }
        }
    }
}

/// Abstract steps, made concrete against the simulated registry as the service would.
#[derive(Debug, Clone)]
enum Op {
    Logs(usize),
    Nothing(usize),
    Propose {
        seq: u16,
        sha: usize,
    },
    Approve(usize),
    Reject(usize, bool),
    Refuse,
    Stale,
    Push(usize),
    Pass(usize),
    Fail(usize, u32),
    Timeout(usize),
    Close,
    Reopen(usize),
    Uninstall,
    /// A failure that is not the code's on `sha`, as check run `job`, an Actions job or not.
    NotCode {
        sha: usize,
        job: u64,
        actions: bool,
    },
    /// `/rerun` (or the automatic re-run when `by` is false) against the head `sha`.
    Rerun {
        sha: usize,
        by: bool,
    },
    /// The check finished again, as check run `job`.
    RerunDone {
        job: u64,
        passed: bool,
    },
    /// The re-run's check run `job` concluded without a verdict (`CONCLUSIONS[c]`).
    RerunCancelled {
        job: u64,
        c: usize,
    },
    /// The CI monitor's timeout of `minutes` for a re-run's result.
    RerunTimeout(u32),
}

const CONCLUSIONS: [&str; 3] = ["cancelled", "skipped", "stale"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0..2usize).prop_map(Op::Logs),
        1 => (0..2usize).prop_map(Op::Nothing),
        3 => (1u16..4, 0..2usize).prop_map(|(seq, sha)| Op::Propose { seq, sha }),
        3 => (0..2usize).prop_map(Op::Approve),
        1 => (0..2usize, any::<bool>()).prop_map(|(s, r)| Op::Reject(s, r)),
        1 => Just(Op::Refuse),
        1 => Just(Op::Stale),
        3 => (0..2usize).prop_map(Op::Push),
        2 => (0..2usize).prop_map(Op::Pass),
        2 => (0..2usize, 1u32..4).prop_map(|(c, m)| Op::Fail(c, m)),
        1 => (0..2usize).prop_map(Op::Timeout),
        1 => Just(Op::Close),
        1 => (0..2usize).prop_map(Op::Reopen),
        1 => Just(Op::Uninstall),
        2 => (0..2usize, 1u64..3, any::<bool>()).prop_map(|(sha, job, actions)| Op::NotCode { sha, job, actions }),
        2 => (0..2usize, any::<bool>()).prop_map(|(sha, by)| Op::Rerun { sha, by }),
        2 => (1u64..4, any::<bool>()).prop_map(|(job, passed)| Op::RerunDone { job, passed }),
        1 => (1u64..4, 0..3usize).prop_map(|(job, c)| Op::RerunCancelled { job, c }),
        1 => (0u32..4).prop_map(Op::RerunTimeout),
    ]
}

fn event(op: &Op, reg: &mut Registry) -> Event {
    match op.clone() {
        Op::Logs(s) => Event::LogsUnavailable {
            head_sha: SHAS[s].into(),
            reason: "the run's logs expired (HTTP 410)".into(),
        },
        Op::Nothing(s) => Event::NothingFound {
            head_sha: SHAS[s].into(),
            excerpt: "Error: Process completed with exit code 1.".into(),
        },
        Op::Propose { seq, sha } => {
            let d = derived(seq, SHAS[sha]);
            let id = d.dds.id.clone();
            let stored = reg
                .0
                .entry(id.clone())
                .or_insert_with(|| StoredProposal::new(d.clone(), t0()));
            // As the service does: a decided proposal is never proposed again.
            if stored.status != DdsStatus::Proposed {
                return Event::AlreadyDecided {
                    head_sha: SHAS[sha].into(),
                    fix_id: id,
                    status: stored.status,
                };
            }
            Event::Proposed {
                head_sha: SHAS[sha].into(),
                proposal: Box::new(proposal_of(&d, SHAS[sha])),
                config_error: None,
            }
        }
        Op::Approve(s) => Event::Approved {
            by: "maintainer".into(),
            comment_url: "https://github.com/octo-org/shop/pull/7#issuecomment-1".into(),
            pr_head_sha: SHAS[s].into(),
        },
        Op::Reject(s, why) => Event::Rejected {
            by: "maintainer".into(),
            comment_url: "https://github.com/octo-org/shop/pull/7#issuecomment-2".into(),
            reason: why.then(|| "wrong file".into()),
            pr_head_sha: SHAS[s].into(),
        },
        Op::Refuse => Event::PatchRefused {
            rule: "confidence".into(),
            detail: "0.95 is below 1.0".into(),
        },
        Op::Stale => Event::PushStale {
            branch: "feature".into(),
            head_sha: SHAS[1].into(),
        },
        Op::Push(c) => Event::Pushed {
            commit_sha: COMMITS[c].into(),
            files: vec!["app/main.py".into()],
            destination: "to `feature`".into(),
        },
        Op::Pass(c) => Event::CheckPassed {
            commit_sha: COMMITS[c].into(),
            run_url: None,
        },
        Op::Fail(c, max_attempts) => Event::CheckFailed {
            commit_sha: COMMITS[c].into(),
            run_url: None,
            max_attempts,
        },
        Op::Timeout(c) => Event::NoVerdict {
            commit_sha: COMMITS[c].into(),
            minutes: 360,
        },
        Op::Close => Event::Closed,
        Op::Reopen(s) => Event::Reopened {
            head_sha: SHAS[s].into(),
        },
        Op::Uninstall => Event::Uninstalled,
        Op::NotCode { sha, job, actions } => Event::NotCode {
            head_sha: SHAS[sha].into(),
            not_code: Box::new(infrastructure(job, actions)),
            config_error: None,
        },
        Op::Rerun { sha, by } => Event::RerunRequested {
            by: by.then(|| "maintainer".into()),
            comment_url: by
                .then(|| "https://github.com/octo-org/shop/pull/7#issuecomment-3".into()),
            pr_head_sha: SHAS[sha].into(),
        },
        Op::RerunDone { job, passed } => Event::RerunFinished {
            check_run_id: job,
            passed,
            run_url: Some(format!(
                "https://github.com/octo-org/shop/actions/runs/9/job/{job}"
            )),
        },
        Op::RerunCancelled { job, c } => Event::RerunCancelled {
            check_run_id: job,
            conclusion: CONCLUSIONS[c].into(),
            run_url: Some(format!(
                "https://github.com/octo-org/shop/actions/runs/9/job/{job}"
            )),
        },
        Op::RerunTimeout(minutes) => Event::RerunNoVerdict { minutes },
    }
}

/// An infrastructure failure of check run `job`, with a real npm network error as evidence
/// (the line as `ci_medic_triage` returns it from a job log).
fn infrastructure(job: u64, actions: bool) -> NotCode {
    let log = b"2024-05-01T10:00:00.0000000Z npm ERR! code ECONNRESET\n";
    let t = ci_medic_triage::triage(log, &[], &ci_medic_triage::CheckFacts::default(), &[]);
    assert_eq!(t.kind, ci_medic_triage::FailureKind::Infrastructure);
    NotCode {
        kind: t.kind,
        evidence: t.evidence,
        flaky: t.flaky,
        rules: t.rules,
        check_run_id: job,
        actions_run_id: actions.then_some(7_000_000 + job),
    }
}

/// The statuses every reader sees agree: the stage, the registry, the prose, the DDS block.
fn assert_agree(state: &RunState, reg: &Registry) {
    let status = state.dds_status();
    assert_eq!(state.proposal.is_some(), status.is_some(), "{state:?}");
    assert_eq!(prose_dds_status(&state.status_view()), status, "{state:?}");
    assert_eq!(
        published_status(state),
        status.map(|s| s.as_str().to_string()),
        "{state:?}"
    );
    if let Some(id) = state.fix_id() {
        assert_eq!(Some(reg.0[id].status), status, "registry vs {state:?}");
    }
    let phase = state.phase();
    match &state.stage {
        Stage::Approved { .. } if !state.closed => {
            assert!(matches!(phase, Phase::Approved { .. }))
        }
        Stage::Pushed { commit_sha, .. } if !state.closed => assert_eq!(
            phase,
            Phase::Pushed {
                commit_sha: commit_sha.clone()
            }
        ),
        Stage::Proposed if !state.closed => assert_eq!(phase, Phase::Proposed),
        Stage::RerunRequested { .. } if !state.closed => assert_eq!(
            phase,
            Phase::RerunRequested {
                commit_sha: state.head_sha.clone()
            }
        ),
        _ => assert!(matches!(phase, Phase::Idle | Phase::Finished), "{phase:?}"),
    }
    // A failure that is not the code's shows its kind and never a proposal or a DDS.
    let not_code = matches!(
        state.stage,
        Stage::NotCode
            | Stage::RerunRequested { .. }
            | Stage::RerunPassed { .. }
            | Stage::RerunFailed { .. }
            | Stage::RerunCancelled { .. }
            | Stage::RerunNoVerdict { .. }
    );
    assert_eq!(state.not_code.is_some(), not_code, "{state:?}");
    if not_code {
        let body = render_comment(&state.view());
        assert!(body.contains("**Kind:** `infrastructure`"), "{body}");
        assert!(!body.contains("/approve"), "{body}");
        assert!(!body.contains("code_fix DDS"), "{body}");
        // A re-run that ended without a verdict offers `/rerun` again (for an Actions job).
        let ended_without_verdict = matches!(
            state.stage,
            Stage::RerunCancelled { .. } | Stage::RerunNoVerdict { .. }
        );
        let actions = state
            .not_code
            .as_ref()
            .is_some_and(|n| n.actions_run_id.is_some());
        if ended_without_verdict {
            assert_eq!(body.contains("`/rerun` re-runs"), actions, "{body}");
            assert_eq!(state.phase() == Phase::Idle, !state.closed, "{state:?}");
        }
    }
}

/// A proposal is decided at most once, and a rejection is final.
fn assert_decided_once(reg: &Registry) {
    for (id, p) in &reg.0 {
        let decisions: Vec<DdsStatus> = p
            .history
            .iter()
            .map(|t| t.to)
            .filter(|s| matches!(s, DdsStatus::Approved | DdsStatus::Rejected))
            .collect();
        assert!(decisions.len() <= 1, "{id} decided twice: {:?}", p.history);
        match decisions.first() {
            Some(DdsStatus::Rejected) => assert_eq!(p.status, DdsStatus::Rejected),
            Some(_) => assert!(
                matches!(
                    p.status,
                    DdsStatus::Approved | DdsStatus::Executed | DdsStatus::Failed
                ),
                "{id}: {:?}",
                p.status
            ),
            None => assert_eq!(p.status, DdsStatus::Proposed),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_sequence_keeps_dds_prose_and_registry_in_agreement(ops in proptest::collection::vec(op(), 1..40)) {
        let mut reg = Registry::default();
        let mut state = RunState::new(CHECK, 7, SHAS[0]);
        let mut at = t0();
        for op in &ops {
            at += Duration::minutes(1);
            let ev = event(op, &mut reg);
            let before = state.clone();
            let decided_before: Option<(String, DdsStatus)> = state
                .fix_id()
                .zip(state.dds_status())
                .map(|(id, s)| (id.to_string(), s));
            match step(&state, ev.clone(), at) {
                Ok((next, effects)) => {
                    reg.apply(&effects, at);
                    // Decisions are only made by a person, from `proposed`, when it is open.
                    if matches!(ev, Event::Approved { .. } | Event::Rejected { .. }) {
                        prop_assert_eq!(&before.stage, &Stage::Proposed);
                        prop_assert!(!before.closed);
                    }
                    // A re-run ends without a verdict only while one is under way, from a
                    // check run other than the failed one, and only once its time is up.
                    if matches!(ev, Event::RerunCancelled { .. } | Event::RerunNoVerdict { .. }) {
                        let rerunning = matches!(before.stage, Stage::RerunRequested { .. });
                        prop_assert!(rerunning);
                        prop_assert_eq!(&effects, &vec![Effect::Publish]);
                    }
                    if let Event::RerunCancelled { check_run_id, .. } = &ev {
                        prop_assert_ne!(before.not_code.as_ref().map(|n| n.check_run_id), Some(*check_run_id));
                    }
                    if let Event::RerunNoVerdict { minutes } = &ev {
                        prop_assert!(before.rerun_overdue(at, *minutes));
                    }
                    // A fix is written only after an approval.
                    if effects.contains(&Effect::WriteFix) {
                        let approved = matches!(next.stage, Stage::Approved { .. });
                        prop_assert!(approved);
                    }
                    state = next;
                }
                Err(e) => {
                    // Refused: typed, with a message, and nothing recorded.
                    prop_assert!(!e.to_string().is_empty());
                    if let Event::Approved { pr_head_sha, .. } = &ev {
                        let open = before.stage == Stage::Proposed && !before.closed;
                        prop_assert!(!open || before.head_sha != *pr_head_sha, "{e}");
                    }
                }
            }
            assert_agree(&state, &reg);
            assert_decided_once(&reg);
            // The same proposal keeps its decision while it is shown.
            if let Some((id, was)) = decided_before
                && state.fix_id() == Some(id.as_str()) && was != DdsStatus::Proposed {
                    prop_assert_ne!(state.dds_status(), Some(DdsStatus::Proposed));
                    if was == DdsStatus::Rejected {
                        prop_assert_eq!(state.dds_status(), Some(DdsStatus::Rejected));
                    }
                }
        }
    }
}

struct Run {
    state: RunState,
    reg: Registry,
    at: DateTime<Utc>,
}

impl Run {
    fn proposed() -> Run {
        let mut run = Run {
            state: RunState::new(CHECK, 7, SHAS[0]),
            reg: Registry::default(),
            at: t0(),
        };
        let ev = event(&Op::Propose { seq: 1, sha: 0 }, &mut run.reg);
        run.go(ev);
        run
    }

    fn go(&mut self, ev: Event) -> Vec<Effect> {
        self.at += Duration::minutes(1);
        let (next, effects) = step(&self.state, ev, self.at).expect("a legal event");
        self.reg.apply(&effects, self.at);
        self.state = next;
        assert_agree(&self.state, &self.reg);
        effects
    }

    fn try_go(&mut self, op: Op) -> Result<(), MachineError> {
        let ev = event(&op, &mut self.reg);
        step(&self.state, ev, self.at).map(|_| ())
    }

    fn op(&mut self, op: Op) -> Vec<Effect> {
        let ev = event(&op, &mut self.reg);
        self.go(ev)
    }

    fn snapshot(&self, name: &str, status: &str) {
        assert_eq!(published_status(&self.state).as_deref(), Some(status));
        insta::assert_snapshot!(name, render_comment(&self.state.view()));
    }
}

#[test]
fn the_published_dds_follows_each_transition() {
    let mut run = Run::proposed();
    run.snapshot("machine_proposed", "proposed");

    let effects = run.op(Op::Approve(0));
    assert!(matches!(&effects[0], Effect::Record(r) if r.to == DdsStatus::Approved));
    assert_eq!(&effects[1..], &[Effect::Publish, Effect::WriteFix]);
    run.snapshot("machine_approved", "approved");

    run.op(Op::Push(0));
    assert_eq!(run.state.attempts, 1);
    run.snapshot("machine_pushed", "approved");

    run.op(Op::Pass(0));
    run.snapshot("machine_executed", "executed");
    assert_eq!(run.state.phase(), Phase::Finished);
}

/// The sandbox's pass is an event like any other: only an approved fix takes it, it publishes
/// nothing of its own (the push follows at once), and it names the commit that may be pushed.
#[test]
fn a_sandbox_pass_is_taken_only_while_approved() {
    let passed = || Event::SandboxPassed {
        commit_sha: COMMITS[0].into(),
    };
    let run = Run::proposed();
    assert!(matches!(
        step(&run.state, passed(), run.at),
        Err(MachineError::NotApproved { .. })
    ));
    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    let effects = run.go(passed());
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(run.state.sandbox_passed.as_deref(), Some(COMMITS[0]));
    assert_eq!(run.state.dds_status(), Some(DdsStatus::Approved));
    run.op(Op::Push(0));
    let body = render_comment(&run.state.view());
    assert!(
        body.contains("built in the sandbox without the errors it targets"),
        "{body}"
    );
    assert!(matches!(
        step(&run.state, passed(), run.at),
        Err(MachineError::NotApproved { .. })
    ));
}

/// The wait for a pushed fix's verdict is a setting in minutes; a run recorded when it was six
/// fixed hours (`hours`) still reads as six hours, and a new one is written in minutes only.
#[test]
fn a_no_verdict_stage_recorded_in_hours_still_reads_in_hours() {
    let old: Stage = serde_json::from_value(serde_json::json!({
        "stage": "no_verdict", "commit_sha": COMMITS[0], "hours": 6
    }))
    .unwrap();
    let mut run = Run::proposed();
    run.state.stage = old;
    let body = render_comment(&run.state.view());
    assert!(body.contains("within 6 hours"), "{body}");

    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(0));
    run.go(Event::NoVerdict {
        commit_sha: COMMITS[0].into(),
        minutes: 1,
    });
    let body = render_comment(&run.state.view());
    assert!(body.contains("within 1 minute;"), "{body}");
    let stored = serde_json::to_value(&run.state.stage).unwrap();
    assert_eq!(stored["minutes"], 1);
    assert!(stored.get("hours").is_none(), "{stored}");
}

#[test]
fn rejected_refused_stale_stopped_and_no_verdict() {
    let mut run = Run::proposed();
    run.op(Op::Reject(0, true));
    run.snapshot("machine_rejected", "rejected");

    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Refuse);
    run.snapshot("machine_refused", "failed");

    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Stale);
    run.snapshot("machine_push_stale", "failed");

    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(0));
    run.op(Op::Fail(0, 1));
    run.snapshot("machine_stopped", "failed");

    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(0));
    run.op(Op::Timeout(0));
    run.snapshot("machine_no_verdict", "failed");
}

#[test]
fn a_failed_fix_with_attempts_left_leads_to_the_next_proposal() {
    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(0));
    let effects = run.op(Op::Fail(0, 3));
    let first = run.state.fix_id().unwrap().to_string();
    assert_eq!(
        effects.last(),
        Some(&Effect::ProposeNext {
            source: first.clone()
        })
    );
    assert_eq!(run.state.phase(), Phase::Idle);
    assert_eq!(published_status(&run.state).as_deref(), Some("failed"));
    run.op(Op::Propose { seq: 2, sha: 0 });
    assert_ne!(run.state.fix_id(), Some(first.as_str()));
    assert_eq!(run.reg.0[&first].status, DdsStatus::Failed);
    run.snapshot("machine_next_proposal", "proposed");
}

#[test]
fn analysis_without_a_proposal() {
    let mut run = Run::proposed();
    run.op(Op::Logs(1));
    assert_eq!(published_status(&run.state), None);
    insta::assert_snapshot!(
        "machine_logs_unavailable",
        render_comment(&run.state.view())
    );
    run.op(Op::Nothing(1));
    insta::assert_snapshot!("machine_nothing_found", render_comment(&run.state.view()));
}

#[test]
fn a_new_failure_fails_the_fix_in_flight_instead_of_leaving_it_approved() {
    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(0));
    let first = run.state.fix_id().unwrap().to_string();
    let effects = run.op(Op::Propose { seq: 2, sha: 1 });
    assert!(
        matches!(&effects[0], Effect::Record(r) if r.fix_id == first && r.to == DdsStatus::Failed)
    );
    assert_eq!(run.reg.0[&first].status, DdsStatus::Failed);
    assert!(run.state.history.last().unwrap().text.contains("proposed"));
}

#[test]
fn illegal_events_are_refused_with_a_typed_error() {
    let mut run = Run::proposed();
    assert!(matches!(
        run.try_go(Op::Approve(1)),
        Err(MachineError::StaleHead { .. })
    ));
    assert!(matches!(
        run.try_go(Op::Push(0)),
        Err(MachineError::NotApproved { .. })
    ));
    assert!(matches!(
        run.try_go(Op::Pass(0)),
        Err(MachineError::NotWaiting { .. })
    ));
    run.op(Op::Close);
    assert!(matches!(
        run.try_go(Op::Approve(0)),
        Err(MachineError::Closed { .. })
    ));
    run.op(Op::Reopen(0));
    run.op(Op::Reject(0, false));
    for op in [Op::Approve(0), Op::Reject(0, true)] {
        assert_eq!(
            run.try_go(op),
            Err(MachineError::NotOpen {
                id: run.state.fix_id().unwrap().to_string(),
                stage: "rejected"
            })
        );
    }
    // The same proposal is never proposed again once decided.
    let again = Event::Proposed {
        head_sha: SHAS[0].into(),
        proposal: Box::new(proposal_of(&derived(1, SHAS[0]), SHAS[0])),
        config_error: None,
    };
    assert!(matches!(
        step(&run.state, again, run.at),
        Err(MachineError::Redecided { .. })
    ));
    let mut fresh = RunState::new(CHECK, 7, SHAS[0]);
    fresh.stage = Stage::Proposed;
    assert!(matches!(
        step(
            &fresh,
            event(&Op::Approve(0), &mut Registry::default()),
            t0()
        ),
        Err(MachineError::NoProposal { .. })
    ));
}

#[test]
fn a_failure_that_is_not_the_code_is_re_run_and_its_verdict_shown() {
    let mut run = Run {
        state: RunState::new(CHECK, 7, SHAS[0]),
        reg: Registry::default(),
        at: t0(),
    };
    run.op(Op::NotCode {
        sha: 0,
        job: 1,
        actions: true,
    });
    assert_eq!(run.state.phase(), Phase::Idle);
    assert_eq!(published_status(&run.state), None);
    let body = render_comment(&run.state.view());
    assert!(body.contains("`/rerun`"), "{body}");
    assert!(body.contains("npm ERR! code ECONNRESET"), "{body}");
    insta::assert_snapshot!("machine_not_code", body);

    // Not the code: nothing to approve.
    assert!(matches!(
        run.try_go(Op::Approve(0)),
        Err(MachineError::NoProposal { .. })
    ));
    // A re-run against a head that moved on is refused.
    assert!(matches!(
        run.try_go(Op::Rerun { sha: 1, by: true }),
        Err(MachineError::RerunRefused { .. })
    ));
    // No verdict before a re-run was asked for.
    assert!(matches!(
        run.try_go(Op::RerunDone {
            job: 2,
            passed: true
        }),
        Err(MachineError::NotRerunning { .. })
    ));
    let effects = run.op(Op::Rerun { sha: 0, by: true });
    assert_eq!(effects, vec![Effect::Publish]);
    assert_eq!(
        run.state.phase(),
        Phase::RerunRequested {
            commit_sha: SHAS[0].into()
        }
    );
    insta::assert_snapshot!("machine_rerun_requested", render_comment(&run.state.view()));
    // Twice is refused; the failed run itself is never the verdict.
    assert!(matches!(
        run.try_go(Op::Rerun { sha: 0, by: false }),
        Err(MachineError::RerunRefused { .. })
    ));
    assert!(matches!(
        run.try_go(Op::RerunDone {
            job: 1,
            passed: true
        }),
        Err(MachineError::NotRerunning { .. })
    ));
    // A redelivery of the original failure leaves the re-run where it is.
    run.op(Op::NotCode {
        sha: 0,
        job: 1,
        actions: true,
    });
    assert!(matches!(run.state.stage, Stage::RerunRequested { .. }));
    run.op(Op::RerunDone {
        job: 2,
        passed: true,
    });
    assert_eq!(run.state.phase(), Phase::Finished);
    let body = render_comment(&run.state.view());
    assert!(body.contains("re-run passed"), "{body}");
    insta::assert_snapshot!("machine_rerun_passed", body);

    // A check that is not an Actions job: no `/rerun` offered, and refused.
    let mut other = Run {
        state: RunState::new(CHECK, 7, SHAS[0]),
        reg: Registry::default(),
        at: t0(),
    };
    other.op(Op::NotCode {
        sha: 0,
        job: 1,
        actions: false,
    });
    let body = render_comment(&other.state.view());
    assert!(!body.contains("`/rerun`"), "{body}");
    assert!(body.contains("not a GitHub Actions job"), "{body}");
    assert!(matches!(
        other.try_go(Op::Rerun { sha: 0, by: true }),
        Err(MachineError::RerunRefused { .. })
    ));
    // A re-run that fails again: the new failure is analysed next, and may be the code's.
    let mut again = Run {
        state: RunState::new(CHECK, 7, SHAS[0]),
        reg: Registry::default(),
        at: t0(),
    };
    again.op(Op::NotCode {
        sha: 0,
        job: 1,
        actions: true,
    });
    again.op(Op::Rerun { sha: 0, by: false });
    again.op(Op::RerunDone {
        job: 2,
        passed: false,
    });
    assert_eq!(again.state.phase(), Phase::Idle);
    again.op(Op::Propose { seq: 1, sha: 0 });
    assert_eq!(again.state.not_code, None);
    assert_eq!(published_status(&again.state).as_deref(), Some("proposed"));
}

/// A re-run that was cancelled (or skipped, or superseded) is no verdict: the comment says so,
/// and `/rerun` is offered and accepted again.
#[test]
fn a_cancelled_rerun_offers_rerun_again() {
    let mut run = Run {
        state: RunState::new(CHECK, 7, SHAS[0]),
        reg: Registry::default(),
        at: t0(),
    };
    run.op(Op::NotCode {
        sha: 0,
        job: 1,
        actions: true,
    });
    // Nothing under way: nothing to cancel.
    assert!(matches!(
        run.try_go(Op::RerunCancelled { job: 2, c: 0 }),
        Err(MachineError::NotRerunning { .. })
    ));
    run.op(Op::Rerun { sha: 0, by: false });
    // The failed run itself is never the re-run's end.
    assert!(matches!(
        run.try_go(Op::RerunCancelled { job: 1, c: 0 }),
        Err(MachineError::NotRerunning { .. })
    ));
    run.op(Op::RerunCancelled { job: 2, c: 0 });
    assert_eq!(run.state.phase(), Phase::Idle);
    assert_eq!(published_status(&run.state), None);
    let body = render_comment(&run.state.view());
    assert!(body.contains("re-run cancelled"), "{body}");
    assert!(body.contains("`/rerun` re-runs"), "{body}");
    insta::assert_snapshot!("machine_rerun_cancelled", body);
    // Its late verdict is not waited for any more.
    assert!(matches!(
        run.try_go(Op::RerunDone {
            job: 2,
            passed: true
        }),
        Err(MachineError::NotRerunning { .. })
    ));
    // `/rerun` again, and this time it passes.
    run.op(Op::Rerun { sha: 0, by: true });
    run.op(Op::RerunDone {
        job: 3,
        passed: true,
    });
    assert_eq!(run.state.phase(), Phase::Finished);
    assert!(render_comment(&run.state.view()).contains("re-run passed"));
}

/// The CI monitor's timeout for a re-run that never reports, with the clock injected.
#[test]
fn a_rerun_without_result_times_out_and_offers_rerun_again() {
    let requested = t0();
    let mut state = RunState::new(CHECK, 7, SHAS[0]);
    for ev in [
        Event::NotCode {
            head_sha: SHAS[0].into(),
            not_code: Box::new(infrastructure(1, true)),
            config_error: None,
        },
        Event::RerunRequested {
            by: None,
            comment_url: None,
            pr_head_sha: SHAS[0].into(),
        },
    ] {
        state = step(&state, ev, requested).unwrap().0;
    }
    assert_eq!(state.rerun_requested_at(), Some(requested));
    let timeout = Event::RerunNoVerdict { minutes: 360 };
    // One second short of six hours: not yet, and the state is untouched.
    let early = requested + Duration::hours(6) - Duration::seconds(1);
    assert!(!state.rerun_overdue(early, 360));
    assert!(matches!(
        step(&state, timeout.clone(), early),
        Err(MachineError::RerunNotDue { minutes: 360, .. })
    ));
    let due = requested + Duration::hours(6);
    assert!(state.rerun_overdue(due, 360));
    let (next, effects) = step(&state, timeout.clone(), due).unwrap();
    assert_eq!(effects, vec![Effect::Publish]);
    assert_eq!(next.stage, Stage::RerunNoVerdict { minutes: 360 });
    assert_eq!(next.phase(), Phase::Idle);
    assert_eq!(next.rerun_requested_at(), None);
    let body = render_comment(&next.view());
    assert!(body.contains("within 6 hours"), "{body}");
    assert!(body.contains("`/rerun` re-runs"), "{body}");
    insta::assert_snapshot!("machine_rerun_no_verdict", body);
    // Once is enough; and `/rerun` is accepted again.
    assert!(matches!(
        step(&next, timeout, due + Duration::hours(1)),
        Err(MachineError::NotRerunning { .. })
    ));
    let again = Event::RerunRequested {
        by: Some("maintainer".into()),
        comment_url: None,
        pr_head_sha: SHAS[0].into(),
    };
    let (again, _) = step(&next, again, due + Duration::hours(1)).unwrap();
    assert_eq!(
        again.rerun_requested_at(),
        Some(due + Duration::hours(1)),
        "the timeout counts from the new request"
    );

    // A record written before the precise time was kept: the shown time is read.
    let mut old = state.clone();
    let Stage::RerunRequested { requested_at, .. } = &mut old.stage else {
        unreachable!()
    };
    *requested_at = None;
    let json = serde_json::to_value(&old).unwrap();
    let back: RunState = serde_json::from_value(json).unwrap();
    assert_eq!(back.rerun_requested_at(), Some(requested));
}

#[test]
fn the_state_round_trips_through_json() {
    let mut run = Run::proposed();
    run.op(Op::Approve(0));
    run.op(Op::Push(1));
    let text = serde_json::to_string(&run.state).unwrap();
    let back: RunState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, run.state);
}
