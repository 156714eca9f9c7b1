//! The life of one check's proposals on one pull request, as one pure state machine:
//! `(state, event, at) → Result<(state, effects), MachineError>`.
//!
//! [`RunState`] owns, together, everything that used to be updated by hand in several places:
//! the stage a proposal is at ([`Stage`]), from which the service's loop position ([`Phase`]),
//! the code_fix DDS status ([`RunState::dds_status`]) and the comment's prose status
//! ([`RunState::view`]) are all *derived*, never stored beside it; the history lines; and the
//! registry transitions, which [`step`] hands back as [`Effect::Record`] for the caller to
//! apply. The comment, its DDS and Fix Packet JSON blocks and the check run's summary are
//! rendered from the state every time ([`RunState::view`]), so the published DDS `status` can
//! never lag behind the prose or the registry.
//!
//! A failure that is not the code's ([`NotCode`]: infrastructure, flaky, configuration, as
//! `ci_medic_triage` classifies it) gets no proposal and no DDS: its stages say what it is,
//! whether its failed jobs are being re-run (`/rerun`, or `triage.auto_rerun`), and how the
//! re-run ended. A re-run's verdict comes from a later run of the same check on the same commit,
//! never from the failed run itself.
//!
//! Transitions follow `code-fix-dds-v2.md`: a proposal is `proposed` when made, `approved` after
//! a maintainer's `/approve` (while the fix is written, pushed and checked), then `executed`
//! (the check passed on the pushed commit) or `failed` (patch refused, push impossible, check
//! still failing, no verdict); `rejected` after `/reject`. A decided proposal never changes its
//! decision. Anything else is refused with a [`MachineError`] and leaves the state as it was.
//!
//! Pure: no I/O, no clock (the time is an argument), no randomness. It must never perform an
//! effect itself, and never emit a registry transition [`next_status`] refuses.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use ci_medic_triage::{Evidence, FailureKind, FlakyEvidence};

use super::dds::{CodeFixDds, DdsStatus};
use super::packet::FixPacket;
use super::state::{TransitionError, next_status};
use crate::comment::{CommentView, HistoryEntry, ProposalStatusView, TriageView};
use crate::repo_config::CONFIG_PATH;

/// Who the service's own transitions are recorded as.
pub const SERVICE_ACTOR: &str = "ci-medic";
/// How a decision's registry reason names the comment that made it (see [`decided_in`]).
const APPROVED_IN: &str = "approved in ";
const REJECTED_IN: &str = "rejected in ";

/// Whether a registry transition's `reason` was written by [`step`] for the decision made in
/// the comment at `comment_url`. Exact: a substring test would take `…#issuecomment-12` for
/// `…#issuecomment-123`.
pub fn decided_in(reason: &str, comment_url: &str) -> bool {
    [APPROVED_IN, REJECTED_IN].iter().any(|prefix| {
        reason
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix(comment_url))
            .is_some_and(|tail| tail.is_empty() || tail.starts_with(": "))
    })
}

/// Where the service's loop is for the current proposal; derived from the [`Stage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// No proposal waits for anything (analysis found nothing, or a next proposal is due).
    Idle,
    /// Waiting for a maintainer.
    Proposed,
    /// Approved; the fix agent must run (or is running).
    Approved { by: String },
    /// One commit is on the branch; waiting for CI on it.
    Pushed { commit_sha: String },
    /// The failed jobs of a failure that is not the code's are being re-run on `commit_sha`;
    /// waiting for the check's next result there.
    RerunRequested { commit_sha: String },
    /// Nothing more will happen for this proposal.
    Finished,
}

/// A failure that is not the code's, as the triage classified it: what the comment shows in
/// place of a proposal, and what `/rerun` needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotCode {
    pub kind: FailureKind,
    /// The log lines behind the kind (bounded by the triage; redacted when rendered).
    pub evidence: Vec<Evidence>,
    pub flaky: Vec<FlakyEvidence>,
    /// The rules that decided, by id.
    pub rules: Vec<String>,
    /// The failed check run (for an Actions job, also the job's id). A later run of the check
    /// on the same commit is a re-run's verdict; this one never is.
    pub check_run_id: u64,
    /// The Actions workflow run of the failed job; `None` when the check is not an Actions
    /// job, which ci-medic cannot re-run.
    pub actions_run_id: Option<u64>,
}

/// The proposal currently shown: the DDS as created (its `status` is always `proposed`; the
/// current one comes from the [`Stage`]) and what the comment shows with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    pub dds: CodeFixDds,
    pub fix_packet: FixPacket,
    /// One line per bug report, formatted by the formatter.
    pub report_lines: Vec<String>,
    /// Findings at further locations the parser's report cap left out of `report_lines`
    /// (0 when the log held no more): the comment says more errors were found than shown.
    #[serde(default)]
    pub reports_left_out: u64,
    /// Files with errors the fix may not change, each with why.
    pub out_of_scope: Vec<String>,
}

/// Where one check's current proposal stands. Every other status is derived from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    /// Nothing analysed yet.
    New,
    /// The failed check's logs could not be read.
    LogsUnavailable { reason: String },
    /// The logs were read; nothing in them could be located in a file.
    NothingFound { reason: String },
    /// Waiting for `/approve` or `/reject`.
    Proposed,
    /// Approved; the fix is being written and pushed.
    Approved { by: String, at: String },
    /// The fix commit is on the branch; CI has not reported on it yet.
    Pushed {
        commit_sha: String,
        files: Vec<String>,
    },
    /// The check passed on the pushed commit.
    Executed {
        commit_sha: String,
        run_url: Option<String>,
    },
    Rejected {
        by: String,
        at: String,
        reason: Option<String>,
    },
    /// The patch was refused before any commit.
    Refused { rule: String, detail: String },
    /// The branch moved before the fix could be pushed.
    PushStale { head_sha: String },
    /// The check still failed on the pushed commit; the next proposal is due.
    CheckFailed {
        commit_sha: String,
        run_url: Option<String>,
    },
    /// The check still failed and no attempt is left.
    Stopped { attempts: u32, max_attempts: u32 },
    /// CI never reported on the pushed commit within `minutes` (`VERDICT_TIMEOUT_MINUTES`).
    NoVerdict {
        commit_sha: String,
        #[serde(default)]
        minutes: u32,
        /// Runs recorded when the wait was six fixed hours hold it here instead of `minutes`;
        /// read, never written.
        #[serde(default, skip_serializing)]
        hours: u32,
    },
    /// The failure is not the code's ([`RunState::not_code`]); nothing is proposed.
    NotCode,
    /// Its failed jobs are being re-run; `by` is `None` for an automatic re-run. `at` is for
    /// people; `requested_at` is what the re-run's timeout counts from (`None` in records
    /// written before it was kept: `at` is read then).
    RerunRequested {
        by: Option<String>,
        at: String,
        #[serde(default)]
        requested_at: Option<DateTime<Utc>>,
    },
    /// The re-run passed.
    RerunPassed { run_url: Option<String> },
    /// The re-run failed too; its failure is analysed next.
    RerunFailed { run_url: Option<String> },
    /// The re-run ended without a verdict (`conclusion`: cancelled, skipped, stale): it says
    /// nothing about the failure, which may be re-run again.
    RerunCancelled {
        conclusion: String,
        run_url: Option<String>,
    },
    /// No result of the re-run arrived within `minutes`; ci-medic stopped waiting for it.
    RerunNoVerdict { minutes: u32 },
}

impl Stage {
    /// The code_fix status this stage means; `None` when there is no proposal.
    pub fn dds_status(&self) -> Option<DdsStatus> {
        Some(match self {
            Stage::New
            | Stage::LogsUnavailable { .. }
            | Stage::NothingFound { .. }
            | Stage::NotCode
            | Stage::RerunRequested { .. }
            | Stage::RerunPassed { .. }
            | Stage::RerunFailed { .. }
            | Stage::RerunCancelled { .. }
            | Stage::RerunNoVerdict { .. } => {
                return None;
            }
            Stage::Proposed => DdsStatus::Proposed,
            Stage::Approved { .. } | Stage::Pushed { .. } => DdsStatus::Approved,
            Stage::Executed { .. } => DdsStatus::Executed,
            Stage::Rejected { .. } => DdsStatus::Rejected,
            Stage::Refused { .. }
            | Stage::PushStale { .. }
            | Stage::CheckFailed { .. }
            | Stage::Stopped { .. }
            | Stage::NoVerdict { .. } => DdsStatus::Failed,
        })
    }

    /// A short name, for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Stage::New => "new",
            Stage::LogsUnavailable { .. } => "logs unavailable",
            Stage::NothingFound { .. } => "nothing found",
            Stage::Proposed => "proposed",
            Stage::Approved { .. } => "approved",
            Stage::Pushed { .. } => "pushed",
            Stage::Executed { .. } => "executed",
            Stage::Rejected { .. } => "rejected",
            Stage::Refused { .. } => "patch refused",
            Stage::PushStale { .. } => "stale",
            Stage::CheckFailed { .. } => "failed",
            Stage::Stopped { .. } => "stopped",
            Stage::NoVerdict { .. } => "no verdict",
            Stage::NotCode => "not the code",
            Stage::RerunRequested { .. } => "re-run requested",
            Stage::RerunPassed { .. } => "re-run passed",
            Stage::RerunFailed { .. } => "re-run failed",
            Stage::RerunCancelled { .. } => "re-run cancelled",
            Stage::RerunNoVerdict { .. } => "re-run without verdict",
        }
    }
}

/// One check's proposals on one pull request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub check_name: String,
    pub pr_number: u64,
    /// The commit the current analysis (and proposal) is for.
    pub head_sha: String,
    pub stage: Stage,
    /// Present exactly when the stage has a DDS status.
    pub proposal: Option<Proposal>,
    /// The pull request was closed (or ci-medic uninstalled): nothing moves until it reopens.
    #[serde(default)]
    pub closed: bool,
    /// Fix commits pushed for this check so far.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub history: Vec<HistoryEntry>,
    /// The end of the log, when nothing could be located in it.
    #[serde(default)]
    pub log_excerpt: Option<String>,
    /// Present exactly when the stage is about a failure that is not the code's.
    #[serde(default)]
    pub not_code: Option<NotCode>,
    /// The prepared fix commit that built in the sandbox (`verify: docker`) without the errors
    /// it targets: with `verify: docker` only that commit may be pushed.
    #[serde(default)]
    pub sandbox_passed: Option<String>,
}

/// Something that happened to a check's proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The check failed on `head_sha` and its logs could not be read.
    LogsUnavailable { head_sha: String, reason: String },
    /// The check failed on `head_sha`; nothing in its log could be located.
    NothingFound { head_sha: String, excerpt: String },
    /// The check failed on `head_sha` again, and that failure's proposal is already decided.
    AlreadyDecided {
        head_sha: String,
        fix_id: String,
        status: DdsStatus,
    },
    /// The check failed on `head_sha`; `proposal` (status `proposed`) answers it.
    Proposed {
        head_sha: String,
        proposal: Box<Proposal>,
        /// Why the repository configuration was ignored, when it was.
        config_error: Option<String>,
    },
    /// A permitted maintainer approved in the comment at `comment_url`, while the pull
    /// request's head was `pr_head_sha`.
    Approved {
        by: String,
        comment_url: String,
        pr_head_sha: String,
    },
    /// A permitted maintainer rejected.
    Rejected {
        by: String,
        comment_url: String,
        reason: Option<String>,
        pr_head_sha: String,
    },
    /// The fix agent's patch was refused before any commit.
    PatchRefused { rule: String, detail: String },
    /// `branch` moved to `head_sha` before the fix was pushed.
    PushStale { branch: String, head_sha: String },
    /// The approved fix's prepared commit `commit_sha` built in the sandbox without the errors
    /// it targets. (One that still shows them is [`Event::PatchRefused`].)
    SandboxPassed { commit_sha: String },
    /// The fix commit is on the branch; `destination` says where, for people.
    Pushed {
        commit_sha: String,
        files: Vec<String>,
        destination: String,
    },
    /// The check passed on the pushed commit.
    CheckPassed {
        commit_sha: String,
        run_url: Option<String>,
    },
    /// The check failed on the pushed commit.
    CheckFailed {
        commit_sha: String,
        run_url: Option<String>,
        max_attempts: u32,
    },
    /// No result for the pushed commit within `minutes`.
    NoVerdict { commit_sha: String, minutes: u32 },
    /// The check failed on `head_sha`, and not because of the code.
    NotCode {
        head_sha: String,
        not_code: Box<NotCode>,
        config_error: Option<String>,
    },
    /// The failed jobs of the failure shown are being re-run: by a permitted maintainer's
    /// `/rerun` (`by`, in the comment at `comment_url`) while the pull request's head was
    /// `pr_head_sha`, or automatically (`by` `None`).
    RerunRequested {
        by: Option<String>,
        comment_url: Option<String>,
        pr_head_sha: String,
    },
    /// The check finished again on the commit whose jobs were re-run, as check run
    /// `check_run_id`.
    RerunFinished {
        check_run_id: u64,
        passed: bool,
        run_url: Option<String>,
    },
    /// The re-run's check run `check_run_id` completed without a verdict: `conclusion` is
    /// `cancelled`, `skipped` or `stale`.
    RerunCancelled {
        check_run_id: u64,
        conclusion: String,
        run_url: Option<String>,
    },
    /// The CI monitor gives up on a re-run requested more than `minutes` ago (at the step's
    /// time) without a result.
    RerunNoVerdict { minutes: u32 },
    /// The pull request was closed.
    Closed,
    /// The pull request was reopened with `head_sha` as its head.
    Reopened { head_sha: String },
    /// ci-medic was uninstalled from the repository.
    Uninstalled,
}

/// A registry transition for the caller to make, compare-and-swap from `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub fix_id: String,
    pub from: DdsStatus,
    pub to: DdsStatus,
    pub actor: String,
    pub reason: String,
}

/// What the caller must do after a step, in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Move the proposal in the registry. It comes first: a refused compare-and-swap means
    /// another decision won, and the new state must then not be kept.
    Record(Record),
    /// Show the new state: the comment (prose, Fix Packet, DDS) and the check run.
    Publish,
    /// Write the approved fix and push it.
    WriteFix,
    /// Analyse the failure again, the failed code_fix `source` as the next proposal's source.
    ProposeNext { source: String },
}

/// Why an event is refused. The state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    #[error("there is no proposal for `{check}` to decide")]
    NoProposal { check: String },
    #[error("{id} is no longer open: it is {stage}")]
    NotOpen { id: String, stage: &'static str },
    #[error("{id} is waiting for a decision, but the pull request is closed")]
    Closed { id: String },
    #[error(
        "{id} was proposed for {proposed_for}, but the pull request's head is now {head}; a decision binds to the commit it was made for"
    )]
    StaleHead {
        id: String,
        proposed_for: String,
        head: String,
    },
    #[error("a new proposal must be `proposed`; {id} is `{status}`")]
    NotProposed { id: String, status: DdsStatus },
    #[error("{id} is `{status}`; it was decided already and is not proposed again")]
    Redecided { id: String, status: DdsStatus },
    #[error("`{event}` needs an approved fix being written; the proposal is {stage}")]
    NotApproved {
        event: &'static str,
        stage: &'static str,
    },
    #[error("no fix commit {commit} is waiting for CI; the proposal is {stage}")]
    NotWaiting { commit: String, stage: &'static str },
    #[error(
        "there is no failure of `{check}` to re-run: ci-medic re-runs only failures that are not the code's"
    )]
    NothingToRerun { check: String },
    #[error("`{check}` cannot be re-run: {why}")]
    RerunRefused { check: String, why: String },
    #[error("no re-run of `{check}` is waiting for its result; it is {stage}")]
    NotRerunning { check: String, stage: &'static str },
    #[error("the re-run of `{check}` was requested less than {minutes} minutes ago")]
    RerunNotDue { check: String, minutes: u32 },
    #[error(transparent)]
    Transition(#[from] TransitionError),
}

/// The code_fix status a comment's prose status stands for; `None` when no proposal is shown.
/// The comment's DDS block and the registry must say the same (tested over every sequence of
/// events).
pub fn prose_dds_status(view: &ProposalStatusView) -> Option<DdsStatus> {
    use ProposalStatusView as V;
    Some(match view {
        V::Proposed => DdsStatus::Proposed,
        V::Approved { .. } | V::Fixing { .. } | V::Pushed { .. } | V::Verifying { .. } => {
            DdsStatus::Approved
        }
        V::Rejected { .. } => DdsStatus::Rejected,
        V::Executed { .. } => DdsStatus::Executed,
        V::Refused { .. }
        | V::Failed { .. }
        | V::MaxAttemptsReached { .. }
        | V::Stale { .. }
        | V::NoVerdict { .. } => DdsStatus::Failed,
        V::AnalysisFailed { .. }
        | V::LogsUnavailable { .. }
        | V::NotCode
        | V::RerunRequested { .. }
        | V::RerunPassed { .. }
        | V::RerunFailed { .. }
        | V::RerunCancelled { .. }
        | V::RerunNoVerdict { .. } => return None,
    })
}

/// The time as the comment's history shows it.
pub fn stamp(at: DateTime<Utc>) -> String {
    at.format(STAMP).to_string()
}

const STAMP: &str = "%Y-%m-%d %H:%M UTC";

/// A commit id as the comment shows it (7 characters, like GitHub's UI).
fn short(sha: &str) -> &str {
    match sha.char_indices().nth(7) {
        Some((i, _)) => &sha[..i],
        None => sha,
    }
}

impl RunState {
    /// A check not analysed yet.
    pub fn new(check_name: &str, pr_number: u64, head_sha: &str) -> RunState {
        RunState {
            check_name: check_name.to_string(),
            pr_number,
            head_sha: head_sha.to_string(),
            stage: Stage::New,
            proposal: None,
            closed: false,
            attempts: 0,
            history: Vec::new(),
            log_excerpt: None,
            not_code: None,
            sandbox_passed: None,
        }
    }

    /// The loop's position.
    pub fn phase(&self) -> Phase {
        if self.closed {
            return Phase::Finished;
        }
        match &self.stage {
            Stage::New
            | Stage::LogsUnavailable { .. }
            | Stage::NothingFound { .. }
            | Stage::CheckFailed { .. }
            | Stage::NotCode
            | Stage::RerunFailed { .. }
            | Stage::RerunCancelled { .. }
            | Stage::RerunNoVerdict { .. } => Phase::Idle,
            Stage::RerunRequested { .. } => Phase::RerunRequested {
                commit_sha: self.head_sha.clone(),
            },
            Stage::Proposed => Phase::Proposed,
            Stage::Approved { by, .. } => Phase::Approved { by: by.clone() },
            Stage::Pushed { commit_sha, .. } => Phase::Pushed {
                commit_sha: commit_sha.clone(),
            },
            Stage::Executed { .. }
            | Stage::Rejected { .. }
            | Stage::Refused { .. }
            | Stage::PushStale { .. }
            | Stage::Stopped { .. }
            | Stage::NoVerdict { .. }
            | Stage::RerunPassed { .. } => Phase::Finished,
        }
    }

    /// The current proposal's status, as the registry holds it once the effects are applied.
    pub fn dds_status(&self) -> Option<DdsStatus> {
        self.stage.dds_status()
    }

    /// The current proposal's id.
    pub fn fix_id(&self) -> Option<&str> {
        self.proposal.as_ref().map(|p| p.dds.id.as_str())
    }

    /// The current DDS as published: the record as created, with the current status.
    pub fn current_dds(&self) -> Option<CodeFixDds> {
        let p = self.proposal.as_ref()?;
        Some(CodeFixDds {
            status: self.dds_status()?,
            ..p.dds.clone()
        })
    }

    /// The comment's prose status.
    pub fn status_view(&self) -> ProposalStatusView {
        match &self.stage {
            Stage::New => ProposalStatusView::AnalysisFailed {
                reason: "the failure has not been analysed yet".into(),
            },
            Stage::LogsUnavailable { reason } => ProposalStatusView::LogsUnavailable {
                reason: reason.clone(),
            },
            Stage::NothingFound { reason } => ProposalStatusView::AnalysisFailed {
                reason: reason.clone(),
            },
            Stage::Proposed => ProposalStatusView::Proposed,
            Stage::Approved { by, at } => ProposalStatusView::Approved {
                by: by.clone(),
                at: at.clone(),
            },
            Stage::Pushed {
                commit_sha, files, ..
            } => ProposalStatusView::Pushed {
                commit_sha: commit_sha.clone(),
                files: files.clone(),
            },
            Stage::Executed {
                commit_sha,
                run_url,
            } => ProposalStatusView::Executed {
                commit_sha: commit_sha.clone(),
                run_url: run_url.clone(),
            },
            Stage::Rejected { by, at, reason } => ProposalStatusView::Rejected {
                by: by.clone(),
                at: at.clone(),
                reason: reason.clone(),
            },
            Stage::Refused { rule, detail } => ProposalStatusView::Refused {
                rule: rule.clone(),
                detail: detail.clone(),
            },
            Stage::PushStale { head_sha } => ProposalStatusView::Stale {
                head_sha: head_sha.clone(),
            },
            Stage::CheckFailed {
                commit_sha,
                run_url,
            } => ProposalStatusView::Failed {
                commit_sha: commit_sha.clone(),
                run_url: run_url.clone(),
                next_dds_id: None,
            },
            Stage::Stopped {
                attempts,
                max_attempts,
                ..
            } => ProposalStatusView::MaxAttemptsReached {
                attempts: *attempts,
                max_attempts: *max_attempts,
            },
            Stage::NoVerdict {
                commit_sha,
                minutes,
                hours,
            } => ProposalStatusView::NoVerdict {
                commit_sha: commit_sha.clone(),
                minutes: if *minutes > 0 { *minutes } else { hours * 60 },
                hours: 0,
            },
            Stage::NotCode => ProposalStatusView::NotCode,
            Stage::RerunRequested { by, at, .. } => ProposalStatusView::RerunRequested {
                by: by.clone(),
                at: at.clone(),
            },
            Stage::RerunPassed { run_url } => ProposalStatusView::RerunPassed {
                run_url: run_url.clone(),
            },
            Stage::RerunFailed { run_url } => ProposalStatusView::RerunFailed {
                run_url: run_url.clone(),
            },
            Stage::RerunCancelled {
                conclusion,
                run_url,
            } => ProposalStatusView::RerunCancelled {
                conclusion: conclusion.clone(),
                run_url: run_url.clone(),
            },
            Stage::RerunNoVerdict { minutes } => {
                ProposalStatusView::RerunNoVerdict { minutes: *minutes }
            }
        }
    }

    /// What the comment and the check run show, derived from the state.
    pub fn view(&self) -> CommentView {
        let (dds_id, report_lines, fix_packet_json, dds_json, out_of_scope_files) =
            match (&self.proposal, self.current_dds()) {
                (Some(p), Some(dds)) => (
                    p.dds.id.clone(),
                    p.report_lines.clone(),
                    serde_json::to_value(&p.fix_packet).expect("a Fix Packet serialises"),
                    serde_json::to_value(&dds).expect("a DDS serialises"),
                    p.out_of_scope.clone(),
                ),
                _ => (
                    String::new(),
                    Vec::new(),
                    serde_json::Value::Null,
                    serde_json::Value::Null,
                    Vec::new(),
                ),
            };
        CommentView {
            check_name: self.check_name.clone(),
            head_sha: self.head_sha.clone(),
            pr_number: self.pr_number,
            dds_id,
            status: self.status_view(),
            report_lines,
            reports_left_out: self
                .proposal
                .as_ref()
                .filter(|_| self.current_dds().is_some())
                .map_or(0, |p| p.reports_left_out),
            fix_packet_json,
            dds_json,
            out_of_scope_files,
            history: self.history.clone(),
            log_excerpt: self.log_excerpt.clone(),
            triage: self.not_code.as_ref().map(|n| TriageView {
                kind: n.kind,
                evidence: n
                    .evidence
                    .iter()
                    .map(|e| (e.line, e.text.clone()))
                    .collect(),
                flaky: n.flaky.iter().map(ToString::to_string).collect(),
                rules: n.rules.clone(),
                actions_job: n.actions_run_id.is_some(),
            }),
        }
    }

    /// When the re-run under way was requested; `None` when none is.
    pub fn rerun_requested_at(&self) -> Option<DateTime<Utc>> {
        let Stage::RerunRequested {
            at, requested_at, ..
        } = &self.stage
        else {
            return None;
        };
        requested_at.or_else(|| {
            chrono::NaiveDateTime::parse_from_str(at, STAMP)
                .ok()
                .map(|t| t.and_utc())
        })
    }

    /// Whether the re-run under way was requested more than `minutes` before `at`, so the
    /// CI monitor stops waiting for it ([`Event::RerunNoVerdict`]).
    pub fn rerun_overdue(&self, at: DateTime<Utc>, minutes: u32) -> bool {
        self.rerun_requested_at()
            .is_some_and(|t| at - t >= chrono::Duration::minutes(i64::from(minutes)))
    }

    fn note(&mut self, at: DateTime<Utc>, text: String) {
        self.history.push(HistoryEntry {
            at: stamp(at),
            text,
        });
    }
}

/// The registry transition of the current proposal from its status to `to`, checked against
/// the specification's state machine.
fn record(
    state: &RunState,
    to: DdsStatus,
    actor: &str,
    reason: String,
) -> Result<Effect, MachineError> {
    let (Some(id), Some(from)) = (state.fix_id(), state.dds_status()) else {
        return Err(MachineError::NoProposal {
            check: state.check_name.clone(),
        });
    };
    next_status(from, to)?;
    Ok(Effect::Record(Record {
        fix_id: id.to_string(),
        from,
        to,
        actor: actor.to_string(),
        reason,
    }))
}

/// A re-run is under way and `check_run_id` is another run than the failed one: only then can a
/// finished check run be the re-run's result (the failed run's own redelivery never is).
fn awaits_rerun_result(state: &RunState, check_run_id: u64) -> bool {
    matches!(state.stage, Stage::RerunRequested { .. })
        && state
            .not_code
            .as_ref()
            .is_some_and(|n| n.check_run_id != check_run_id)
}

/// Applies one event. On error `state` is returned untouched by the caller (it is borrowed).
pub fn step(
    state: &RunState,
    event: Event,
    at: DateTime<Utc>,
) -> Result<(RunState, Vec<Effect>), MachineError> {
    let mut next = state.clone();
    let mut effects = Vec::new();
    let check = state.check_name.clone();
    match event {
        Event::LogsUnavailable { head_sha, reason } => {
            supersede(&mut next, &mut effects, None, &head_sha, at)?;
            next.note(
                at,
                format!(
                    "`{check}` failed on {}; its logs could not be read: {reason}",
                    short(&head_sha)
                ),
            );
            next.stage = Stage::LogsUnavailable { reason };
            next.proposal = None;
            next.not_code = None;
            next.log_excerpt = None;
            next.head_sha = head_sha;
            next.closed = false;
            effects.push(Effect::Publish);
        }
        Event::NothingFound { head_sha, excerpt } => {
            supersede(&mut next, &mut effects, None, &head_sha, at)?;
            next.note(
                at,
                format!(
                    "`{check}` failed on {}; no file and line could be located in its log",
                    short(&head_sha)
                ),
            );
            next.stage = Stage::NothingFound {
                reason: "ci-medic read the log but found no error it can locate in a file of this repository".into(),
            };
            next.proposal = None;
            next.not_code = None;
            next.log_excerpt = Some(excerpt);
            next.head_sha = head_sha;
            next.closed = false;
            effects.push(Effect::Publish);
        }
        Event::AlreadyDecided {
            head_sha,
            fix_id,
            status,
        } => {
            if status == DdsStatus::Proposed {
                return Err(MachineError::NotProposed { id: fix_id, status });
            }
            next.note(
                at,
                format!(
                    "`{check}` failed again on {}; {fix_id} is already {status}, so nothing new is proposed for this commit",
                    short(&head_sha)
                ),
            );
            effects.push(Effect::Publish);
        }
        Event::Proposed {
            head_sha,
            proposal,
            config_error,
        } => {
            let id = proposal.dds.id.clone();
            if proposal.dds.status != DdsStatus::Proposed {
                return Err(MachineError::NotProposed {
                    id,
                    status: proposal.dds.status,
                });
            }
            if state.fix_id() == Some(id.as_str()) {
                // The same proposal again (a redelivery, `/retry`): fresh data, same decision.
                match state.dds_status() {
                    Some(DdsStatus::Proposed) => {}
                    Some(status) => return Err(MachineError::Redecided { id, status }),
                    None => {}
                }
            } else {
                supersede(&mut next, &mut effects, Some(&id), &head_sha, at)?;
                next.note(
                    at,
                    format!(
                        "`{check}` failed on {} with {} error(s); proposed {id}",
                        short(&head_sha),
                        proposal.report_lines.len()
                    ),
                );
                if let Some(e) = config_error {
                    next.note(at, format!("{CONFIG_PATH} is invalid, defaults used: {e}"));
                }
            }
            next.stage = Stage::Proposed;
            next.proposal = Some(*proposal);
            next.not_code = None;
            next.log_excerpt = None;
            next.head_sha = head_sha;
            next.closed = false;
            effects.push(Effect::Publish);
        }
        Event::Approved {
            by,
            comment_url,
            pr_head_sha,
        } => {
            let id = open_for_decision(state, &pr_head_sha)?;
            effects.push(record(
                state,
                DdsStatus::Approved,
                &by,
                format!("{APPROVED_IN}{comment_url}"),
            )?);
            next.note(at, format!("{id} approved by @{by} ({comment_url})"));
            next.stage = Stage::Approved { by, at: stamp(at) };
            effects.push(Effect::Publish);
            effects.push(Effect::WriteFix);
        }
        Event::Rejected {
            by,
            comment_url,
            reason,
            pr_head_sha,
        } => {
            let id = open_for_decision(state, &pr_head_sha)?;
            let why = reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            effects.push(record(
                state,
                DdsStatus::Rejected,
                &by,
                format!("{REJECTED_IN}{comment_url}{why}"),
            )?);
            next.note(at, format!("{id} rejected by @{by}{why} ({comment_url})"));
            next.stage = Stage::Rejected {
                by,
                at: stamp(at),
                reason,
            };
            effects.push(Effect::Publish);
        }
        Event::PatchRefused { rule, detail } => {
            approved(state, "patch refused")?;
            effects.push(record(
                state,
                DdsStatus::Failed,
                SERVICE_ACTOR,
                format!("patch refused by rule `{rule}`: {detail}"),
            )?);
            next.note(
                at,
                format!("patch refused before any commit: rule `{rule}`"),
            );
            next.stage = Stage::Refused { rule, detail };
            effects.push(Effect::Publish);
        }
        Event::PushStale { branch, head_sha } => {
            let id = approved(state, "push stale")?;
            effects.push(record(
                state,
                DdsStatus::Failed,
                SERVICE_ACTOR,
                "the branch moved before the fix was pushed".into(),
            )?);
            next.note(
                at,
                format!(
                    "nothing pushed: `{branch}` moved to {} after {id} was proposed",
                    short(&head_sha)
                ),
            );
            next.stage = Stage::PushStale { head_sha };
            effects.push(Effect::Publish);
        }
        Event::SandboxPassed { commit_sha } => {
            approved(state, "sandbox passed")?;
            next.note(
                at,
                format!(
                    "the patch ({}) built in the sandbox without the errors it targets",
                    short(&commit_sha)
                ),
            );
            // Shown with the push that follows at once: a comment edit of its own would cost a
            // request and say nothing the push does not.
            next.sandbox_passed = Some(commit_sha);
        }
        Event::Pushed {
            commit_sha,
            files,
            destination,
        } => {
            approved(state, "pushed")?;
            next.note(
                at,
                format!(
                    "pushed {} {destination}; waiting for `{check}` on it",
                    short(&commit_sha)
                ),
            );
            next.attempts += 1;
            next.stage = Stage::Pushed { commit_sha, files };
            effects.push(Effect::Publish);
        }
        Event::CheckPassed {
            commit_sha,
            run_url,
        } => {
            let id = waiting_for(state, &commit_sha)?;
            effects.push(record(
                state,
                DdsStatus::Executed,
                SERVICE_ACTOR,
                format!("`{check}` passed on {commit_sha}"),
            )?);
            next.note(
                at,
                format!("`{check}` passed on {}: {id} executed", short(&commit_sha)),
            );
            next.stage = Stage::Executed {
                commit_sha,
                run_url,
            };
            effects.push(Effect::Publish);
        }
        Event::CheckFailed {
            commit_sha,
            run_url,
            max_attempts,
        } => {
            let id = waiting_for(state, &commit_sha)?;
            effects.push(record(
                state,
                DdsStatus::Failed,
                SERVICE_ACTOR,
                format!("`{check}` failed again on {commit_sha}"),
            )?);
            next.note(
                at,
                format!(
                    "`{check}` failed again on {}: {id} failed",
                    short(&commit_sha)
                ),
            );
            if state.attempts >= max_attempts {
                next.stage = Stage::Stopped {
                    attempts: state.attempts,
                    max_attempts,
                };
                effects.push(Effect::Publish);
            } else {
                next.stage = Stage::CheckFailed {
                    commit_sha,
                    run_url,
                };
                effects.push(Effect::ProposeNext { source: id });
            }
        }
        Event::NoVerdict {
            commit_sha,
            minutes,
        } => {
            waiting_for(state, &commit_sha)?;
            let within = crate::comment::minutes_text(minutes);
            effects.push(record(
                state,
                DdsStatus::Failed,
                SERVICE_ACTOR,
                format!("no CI result for the pushed fix within {within}"),
            )?);
            next.note(
                at,
                format!(
                    "no result for `{check}` on {} within {within}; ci-medic stopped watching",
                    short(&commit_sha)
                ),
            );
            next.stage = Stage::NoVerdict {
                commit_sha,
                minutes,
                hours: 0,
            };
            effects.push(Effect::Publish);
        }
        Event::NotCode {
            head_sha,
            not_code,
            config_error,
        } => {
            let same_failure = state.head_sha == head_sha
                && state
                    .not_code
                    .as_ref()
                    .is_some_and(|n| n.check_run_id == not_code.check_run_id);
            if same_failure {
                // The same failure again (a redelivery, `/retry`): fresh data, and a re-run
                // under way or done stays where it is.
                if state.stage == Stage::NotCode {
                    next.not_code = Some(*not_code);
                    effects.push(Effect::Publish);
                }
            } else {
                supersede(&mut next, &mut effects, None, &head_sha, at)?;
                next.note(
                    at,
                    format!(
                        "`{check}` failed on {}, not because of the code: {}",
                        short(&head_sha),
                        not_code.kind
                    ),
                );
                if let Some(e) = config_error {
                    next.note(at, format!("{CONFIG_PATH} is invalid, defaults used: {e}"));
                }
                next.stage = Stage::NotCode;
                next.proposal = None;
                next.not_code = Some(*not_code);
                next.log_excerpt = None;
                next.head_sha = head_sha;
                next.closed = false;
                effects.push(Effect::Publish);
            }
        }
        Event::RerunRequested {
            by,
            comment_url,
            pr_head_sha,
        } => {
            let refused = |why: String| MachineError::RerunRefused {
                check: check.clone(),
                why,
            };
            let Some(nc) = &state.not_code else {
                return Err(MachineError::NothingToRerun { check });
            };
            match &state.stage {
                Stage::NotCode
                | Stage::RerunFailed { .. }
                | Stage::RerunCancelled { .. }
                | Stage::RerunNoVerdict { .. } => {}
                Stage::RerunRequested { .. } => {
                    return Err(refused("a re-run is already under way".into()));
                }
                other => return Err(refused(format!("it is {}", other.name()))),
            }
            if nc.actions_run_id.is_none() {
                return Err(refused(
                    "it is not a GitHub Actions job; re-run it from its CI's own page".into(),
                ));
            }
            if state.closed {
                return Err(refused("the pull request is closed".into()));
            }
            if state.head_sha != pr_head_sha {
                return Err(refused(format!(
                    "it failed on {}, but the pull request's head is now {}",
                    short(&state.head_sha),
                    short(&pr_head_sha)
                )));
            }
            let what = match (&by, &comment_url) {
                (Some(login), Some(url)) => format!("by @{login} ({url})"),
                (Some(login), None) => format!("by @{login}"),
                (None, _) => "automatically (`triage.auto_rerun`)".to_string(),
            };
            next.note(
                at,
                format!(
                    "re-run of `{check}`'s failed jobs on {} requested {what}",
                    short(&state.head_sha)
                ),
            );
            next.stage = Stage::RerunRequested {
                by,
                at: stamp(at),
                requested_at: Some(at),
            };
            effects.push(Effect::Publish);
        }
        Event::RerunFinished {
            check_run_id,
            passed,
            run_url,
        } => {
            if !awaits_rerun_result(state, check_run_id) {
                return Err(MachineError::NotRerunning {
                    check,
                    stage: state.stage.name(),
                });
            }
            let sha = short(&state.head_sha).to_string();
            if passed {
                next.note(at, format!("`{check}` passed on {sha} when re-run"));
                next.stage = Stage::RerunPassed { run_url };
            } else {
                next.note(at, format!("`{check}` failed again on {sha} when re-run"));
                next.stage = Stage::RerunFailed { run_url };
            }
            effects.push(Effect::Publish);
        }
        Event::RerunCancelled {
            check_run_id,
            conclusion,
            run_url,
        } => {
            if !awaits_rerun_result(state, check_run_id) {
                return Err(MachineError::NotRerunning {
                    check,
                    stage: state.stage.name(),
                });
            }
            next.note(
                at,
                format!(
                    "the re-run of `{check}` on {} ended `{conclusion}`, without a verdict",
                    short(&state.head_sha)
                ),
            );
            next.stage = Stage::RerunCancelled {
                conclusion,
                run_url,
            };
            effects.push(Effect::Publish);
        }
        Event::RerunNoVerdict { minutes } => {
            if !matches!(state.stage, Stage::RerunRequested { .. }) {
                return Err(MachineError::NotRerunning {
                    check,
                    stage: state.stage.name(),
                });
            }
            if !state.rerun_overdue(at, minutes) {
                return Err(MachineError::RerunNotDue { check, minutes });
            }
            next.note(
                at,
                format!(
                    "no result of the re-run of `{check}` on {} within {}; ci-medic stopped waiting",
                    short(&state.head_sha),
                    crate::comment::minutes_text(minutes)
                ),
            );
            next.stage = Stage::RerunNoVerdict { minutes };
            effects.push(Effect::Publish);
        }
        Event::Closed | Event::Uninstalled => {
            next.closed = true;
        }
        Event::Reopened { head_sha } => {
            // Only a proposal the close ended before anyone decided it, made for the commit
            // that is still the head, is open again (its comment never stopped inviting
            // `/approve`); anything else stays where it is.
            if state.closed && state.stage == Stage::Proposed && state.head_sha == head_sha {
                next.closed = false;
            }
        }
    }
    debug_assert_eq!(next.proposal.is_some(), next.dds_status().is_some());
    debug_assert_eq!(
        next.not_code.is_some(),
        matches!(
            next.stage,
            Stage::NotCode
                | Stage::RerunRequested { .. }
                | Stage::RerunPassed { .. }
                | Stage::RerunFailed { .. }
                | Stage::RerunCancelled { .. }
                | Stage::RerunNoVerdict { .. }
        )
    );
    Ok((next, effects))
}

/// A new analysis replaces the current proposal (unless `new_id` is the same one). A fix being
/// written or waiting for CI is failed in the registry, so no proposal stays `approved` with
/// nothing left to move it.
fn supersede(
    next: &mut RunState,
    effects: &mut Vec<Effect>,
    new_id: Option<&str>,
    head_sha: &str,
    at: DateTime<Utc>,
) -> Result<(), MachineError> {
    let Some(old) = next.fix_id().map(str::to_string) else {
        return Ok(());
    };
    if new_id == Some(old.as_str()) {
        return Ok(());
    }
    let in_flight = matches!(next.stage, Stage::Approved { .. } | Stage::Pushed { .. });
    if in_flight {
        effects.push(record(
            next,
            DdsStatus::Failed,
            SERVICE_ACTOR,
            format!(
                "superseded: `{}` failed on {head_sha} before the fix's verdict",
                next.check_name
            ),
        )?);
    }
    if new_id.is_some() || in_flight {
        let text = format!(
            "{old} superseded: `{}` failed again on {}",
            next.check_name,
            short(head_sha)
        );
        next.note(at, text);
    }
    Ok(())
}

/// The proposal's id when `/approve` or `/reject` may decide it now.
fn open_for_decision(state: &RunState, pr_head_sha: &str) -> Result<String, MachineError> {
    let Some(id) = state.fix_id().map(str::to_string) else {
        return Err(MachineError::NoProposal {
            check: state.check_name.clone(),
        });
    };
    if state.stage != Stage::Proposed {
        return Err(MachineError::NotOpen {
            id,
            stage: state.stage.name(),
        });
    }
    if state.closed {
        return Err(MachineError::Closed { id });
    }
    if state.head_sha != pr_head_sha {
        return Err(MachineError::StaleHead {
            id,
            proposed_for: state.head_sha.clone(),
            head: pr_head_sha.to_string(),
        });
    }
    Ok(id)
}

/// The proposal's id when an approved fix is being written.
fn approved(state: &RunState, event: &'static str) -> Result<String, MachineError> {
    match (&state.stage, state.fix_id()) {
        (Stage::Approved { .. }, Some(id)) => Ok(id.to_string()),
        _ => Err(MachineError::NotApproved {
            event,
            stage: state.stage.name(),
        }),
    }
}

/// The proposal's id when its fix commit `commit` waits for CI.
fn waiting_for(state: &RunState, commit: &str) -> Result<String, MachineError> {
    match (&state.stage, state.fix_id()) {
        (Stage::Pushed { commit_sha, .. }, Some(id)) if commit_sha == commit => Ok(id.to_string()),
        _ => Err(MachineError::NotWaiting {
            commit: commit.to_string(),
            stage: state.stage.name(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::decided_in;

    #[test]
    fn a_decision_names_its_comment_exactly() {
        let url = "https://github.com/o/r/pull/7#issuecomment-12";
        assert!(decided_in(&format!("approved in {url}"), url));
        assert!(decided_in(&format!("rejected in {url}"), url));
        assert!(decided_in(&format!("rejected in {url}: wrong file"), url));
        assert!(!decided_in(&format!("approved in {url}3"), url));
        assert!(!decided_in(&format!("rejected in {url}3: x"), url));
        assert!(!decided_in(&format!("pushed after {url}"), url));
    }
}
