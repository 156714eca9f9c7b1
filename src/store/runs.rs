//! Fix runs: what ci-medic knows about one check on one pull request, across its proposals,
//! approvals, pushes and verdicts.
//!
//! One record per (repository, pull request, check name): the comment ci-medic edits in place,
//! its check run, the current proposal and every step so far. Each step is written here before
//! the next begins, so a restarted process picks up where the last one stopped and never
//! comments or pushes twice.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{StoreError, decode, get_json};
pub use ci_medic_core::proposal::machine::{Phase, RunState};

/// The record: the proposal's state (the pure state machine's, from which the comment is
/// rendered) and what the service needs beside it to act on GitHub.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "legacy::RunRecord")]
pub struct FixRun {
    /// `owner/repo`.
    pub repo: String,
    pub pr_number: u64,
    pub check_name: String,
    pub installation_id: u64,
    /// ci-medic's comment on the pull request, once created.
    pub comment_id: Option<u64>,
    pub comment_url: Option<String>,
    /// ci-medic's annotations check run, and the commit it is on.
    pub check_run_id: Option<u64>,
    pub check_run_sha: Option<String>,
    /// Where the current proposal stands, with its history; the one source of the phase, the
    /// DDS status and everything the comment shows.
    pub state: RunState,
    /// The bug reports of the current proposal, for the fix agent.
    #[serde(default)]
    pub reports: Vec<ci_medic_parser::BugReport>,
    /// The fix commit created but not yet on the branch (stored before the ref moves, so a
    /// restart publishes this same commit instead of writing another).
    #[serde(default)]
    pub pending_commit: Option<String>,
    #[serde(default)]
    pub push_target: Option<crate::git_agent::PushTarget>,
    /// `owner/repo` the proposal's commit and files are read from (the pull request's head
    /// repository), recorded with the approval so the fix job need not read the pull request.
    #[serde(default)]
    pub read_from: Option<String>,
    #[serde(default)]
    pub pushed_at: Option<DateTime<Utc>>,
    /// What the last pushed fix did, for the fix agent's next attempt.
    #[serde(default)]
    pub previous_attempt: Option<ci_medic_core::fix_check::PreviousAttempt>,
    pub updated_at: DateTime<Utc>,
    /// The comment and check-run creations this run asked GitHub for, stored (and flushed)
    /// before each request. A creation whose answer was lost may have landed; only then is
    /// GitHub searched for it (by marker, by external id) before creating, so a run that never
    /// asked creates at once, without listing. Records older than this field say nothing
    /// about their creations (`None`): every creation of theirs searches first.
    #[serde(default)]
    pub creations: Option<Creations>,
    /// The state was stored but the comment (and annotations) may not show it yet: set with
    /// each state change, cleared once GitHub shows it. A job that stopped in between (killed,
    /// or a GitHub call failed) left it set, and whichever job or pass reads the run next
    /// publishes it; without it, the retry found the state already moved and did nothing, and
    /// the comment lagged behind the state for good.
    #[serde(default)]
    pub unpublished: bool,
    /// How many times the record was written; 0 for a run never stored. A write names the
    /// version it read ([`super::proposals::Runs::put`]), so two replicas moving one run at
    /// once cannot overwrite each other: the second is refused and reads it again.
    #[serde(default)]
    pub version: u64,
}

/// What [`FixRun::creations`] records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Creations {
    /// A comment was asked for.
    #[serde(default)]
    pub comment: bool,
    /// The external ids of the check runs asked for.
    #[serde(default)]
    pub check_runs: Vec<String>,
}

impl FixRun {
    /// Whether the run's comment may exist on GitHub without its id being stored here.
    pub fn comment_may_exist(&self) -> bool {
        self.creations.as_ref().is_none_or(|c| c.comment)
    }

    /// Whether a check run with this external id may exist without its id being stored here.
    pub fn check_run_may_exist(&self, external_id: &str) -> bool {
        self.creations
            .as_ref()
            .is_none_or(|c| c.check_runs.iter().any(|x| x == external_id))
    }

    pub fn key(repo: &str, pr_number: u64, check_name: &str) -> String {
        format!("{repo}#{pr_number}\u{0}{check_name}")
    }

    /// Where the loop is (derived from the state).
    pub fn phase(&self) -> Phase {
        self.state.phase()
    }

    /// The current code_fix DDS id, when there is one.
    pub fn fix_id(&self) -> Option<String> {
        self.state.fix_id().map(str::to_string)
    }

    /// The commit the current proposal was made for.
    pub fn proposed_for_sha(&self) -> &str {
        &self.state.head_sha
    }
}

mod legacy {
    //! Run records written before the state machine (a rendered `view` and a `phase` stored
    //! side by side) are read into a [`RunState`]: nothing in flight is lost on an upgrade.

    use chrono::{DateTime, Utc};
    use serde::Deserialize;

    use super::{FixRun, Phase, RunState};
    use ci_medic_core::comment::{CommentView, ProposalStatusView as V};
    use ci_medic_core::proposal::machine::{Proposal, Stage};
    use ci_medic_core::proposal::{CodeFixDds, DdsStatus, FixPacket};

    /// Both shapes: `state` for current records; the other optional fields for old ones.
    #[derive(Deserialize)]
    pub(super) struct RunRecord {
        repo: String,
        pr_number: u64,
        check_name: String,
        installation_id: u64,
        comment_id: Option<u64>,
        comment_url: Option<String>,
        check_run_id: Option<u64>,
        check_run_sha: Option<String>,
        #[serde(default)]
        state: Option<RunState>,
        #[serde(default)]
        proposed_for_sha: Option<String>,
        #[serde(default)]
        phase: Option<Phase>,
        #[serde(default)]
        attempts: u32,
        #[serde(default)]
        view: Option<CommentView>,
        #[serde(default)]
        reports: Vec<ci_medic_parser::BugReport>,
        #[serde(default)]
        pending_commit: Option<String>,
        #[serde(default)]
        push_target: Option<crate::git_agent::PushTarget>,
        #[serde(default)]
        read_from: Option<String>,
        #[serde(default)]
        pushed_at: Option<DateTime<Utc>>,
        #[serde(default)]
        previous_attempt: Option<ci_medic_core::fix_check::PreviousAttempt>,
        updated_at: DateTime<Utc>,
        #[serde(default)]
        creations: Option<super::Creations>,
        #[serde(default)]
        unpublished: bool,
        #[serde(default)]
        version: u64,
    }

    impl From<RunRecord> for FixRun {
        fn from(r: RunRecord) -> FixRun {
            let state = match r.state {
                Some(s) => s,
                None => migrate(
                    &r.check_name,
                    r.pr_number,
                    r.proposed_for_sha.as_deref().unwrap_or_default(),
                    r.phase.unwrap_or(Phase::Idle),
                    r.attempts,
                    r.view,
                ),
            };
            FixRun {
                repo: r.repo,
                pr_number: r.pr_number,
                check_name: r.check_name,
                installation_id: r.installation_id,
                comment_id: r.comment_id,
                comment_url: r.comment_url,
                check_run_id: r.check_run_id,
                check_run_sha: r.check_run_sha,
                state,
                reports: r.reports,
                pending_commit: r.pending_commit,
                push_target: r.push_target,
                read_from: r.read_from,
                pushed_at: r.pushed_at,
                previous_attempt: r.previous_attempt,
                updated_at: r.updated_at,
                creations: r.creations,
                unpublished: r.unpublished,
                version: r.version,
            }
        }
    }

    /// The state an old record stood for: the stage from its prose status, the proposal from
    /// its JSON blocks, closed when its phase had ended while its prose had not.
    pub(super) fn migrate(
        check: &str,
        pr: u64,
        head_sha: &str,
        phase: Phase,
        attempts: u32,
        view: Option<CommentView>,
    ) -> RunState {
        let mut state = RunState::new(check, pr, head_sha);
        state.attempts = attempts;
        let Some(view) = view else {
            return state;
        };
        state.history = view.history;
        state.log_excerpt = view.log_excerpt;
        state.stage = match view.status {
            V::Proposed => Stage::Proposed,
            V::Approved { by, at } => Stage::Approved { by, at },
            V::Fixing { approved_by } => Stage::Approved {
                by: approved_by,
                at: String::new(),
            },
            V::Rejected { by, at, reason } => Stage::Rejected { by, at, reason },
            V::Refused { rule, detail } => Stage::Refused { rule, detail },
            V::Pushed { commit_sha, files } => Stage::Pushed { commit_sha, files },
            V::Verifying { commit_sha, .. } => Stage::Pushed {
                commit_sha,
                files: Vec::new(),
            },
            V::Executed {
                commit_sha,
                run_url,
            } => Stage::Executed {
                commit_sha,
                run_url,
            },
            V::Failed {
                commit_sha,
                run_url,
                ..
            } => Stage::CheckFailed {
                commit_sha,
                run_url,
            },
            V::MaxAttemptsReached {
                attempts,
                max_attempts,
            } => Stage::Stopped {
                attempts,
                max_attempts,
            },
            V::NoVerdict {
                commit_sha,
                minutes,
                hours,
            } => Stage::NoVerdict {
                commit_sha,
                minutes,
                hours,
            },
            V::Stale { head_sha } => Stage::PushStale { head_sha },
            V::AnalysisFailed { reason } => Stage::NothingFound { reason },
            V::LogsUnavailable { reason } => Stage::LogsUnavailable { reason },
            // Written only by versions with the state machine: never in an old record.
            V::NotCode
            | V::RerunRequested { .. }
            | V::RerunPassed { .. }
            | V::RerunFailed { .. }
            | V::RerunCancelled { .. }
            | V::RerunNoVerdict { .. } => Stage::NothingFound {
                reason: "this failure was recorded in a shape ci-medic cannot read again; `/retry` analyses it anew".into(),
            },
        };
        let dds = serde_json::from_value::<CodeFixDds>(view.dds_json).ok();
        let packet = serde_json::from_value::<FixPacket>(view.fix_packet_json).ok();
        state.proposal = match (state.stage.dds_status(), dds, packet) {
            (None, _, _) => None,
            (Some(_), Some(dds), Some(fix_packet)) => Some(Proposal {
                dds: CodeFixDds {
                    status: DdsStatus::Proposed,
                    ..dds
                },
                fix_packet,
                report_lines: view.report_lines,
                reports_left_out: view.reports_left_out,
                out_of_scope: view.out_of_scope_files,
            }),
            (Some(_), _, _) => {
                state.stage = Stage::NothingFound {
                    reason: "this proposal was recorded by an earlier version of ci-medic and cannot be read again; `/retry` analyses the failure anew".into(),
                };
                None
            }
        };
        // A run the old loop had ended (pull request closed, CI timeout) stays ended.
        state.closed = phase == Phase::Finished && state.phase() != Phase::Finished;
        state
    }
}

/// The `runs` tree, plus indexes from pushed commits and from re-run commits to runs (for the
/// CI monitor).
#[derive(Clone)]
pub struct RunStore {
    runs: sled::Tree,
    pushed: sled::Tree,
    /// `repo @ sha \0 check` → run key, for checks whose failed jobs are being re-run.
    rerun: sled::Tree,
}

impl RunStore {
    pub fn open(store: &super::Store) -> Result<RunStore, StoreError> {
        Ok(RunStore {
            runs: store.db().open_tree("runs")?,
            pushed: store.db().open_tree("runs_by_pushed_commit")?,
            rerun: store.db().open_tree("runs_by_rerun_commit")?,
        })
    }

    pub fn get(&self, repo: &str, pr: u64, check: &str) -> Result<Option<FixRun>, StoreError> {
        get_json(&self.runs, FixRun::key(repo, pr, check).as_bytes())
    }

    /// Writes the record and flushes it before returning: the caller's next step may be a
    /// GitHub call that must not be repeated after a crash. Compare-and-swap on the version the
    /// run was read at ([`super::proposals::Runs::put`]).
    pub fn put(&self, run: &mut FixRun) -> Result<(), StoreError> {
        let key = FixRun::key(&run.repo, run.pr_number, &run.check_name);
        let old = self.runs.get(key.as_bytes())?;
        let found = match &old {
            None => 0,
            Some(bytes) => decode::<FixRun>(key.as_bytes(), bytes)?.version,
        };
        if found != run.version {
            return Err(StoreError::RunChanged {
                key: key.replace('\u{0}', " "),
                read: run.version,
                found,
            });
        }
        let mut next = run.clone();
        next.version = found + 1;
        let bytes = serde_json::to_vec(&next).expect("run serialises");
        if self
            .runs
            .compare_and_swap(key.as_bytes(), old, Some(bytes))?
            .is_err()
        {
            // Written between the read and the swap: report the version now stored.
            let now: Option<FixRun> = get_json(&self.runs, key.as_bytes())?;
            return Err(StoreError::RunChanged {
                key: key.replace('\u{0}', " "),
                read: run.version,
                found: now.map_or(0, |r| r.version),
            });
        }
        run.version = next.version;
        // The commit about to be pushed is indexed before the push: GitHub may deliver its
        // check before the push is recorded, and the CI monitor must find the run then.
        for commit_sha in indexed_commits(run) {
            self.pushed.insert(
                format!("{}@{commit_sha}", run.repo).as_bytes(),
                key.as_bytes(),
            )?;
        }
        let rerun_key = format!("{}@{}\u{0}{}", run.repo, run.state.head_sha, run.check_name);
        if let Phase::RerunRequested { .. } = run.phase() {
            self.rerun.insert(rerun_key.as_bytes(), key.as_bytes())?;
        } else {
            // Only a re-run under way is looked up, so the index stays as small as they are few
            // (an entry of an older commit is dropped by `by_rerun` when it is read).
            self.rerun.remove(rerun_key.as_bytes())?;
        }
        self.runs.flush()?;
        Ok(())
    }

    /// Every pushed fix commit with its run: `(repo, sha, pull request, check)`, for
    /// `ci-medic migrate --from-sled`.
    pub fn pushed_commits(&self) -> Result<Vec<(String, String, u64, String)>, StoreError> {
        let mut out = Vec::new();
        for item in self.pushed.iter() {
            let (k, v) = item?;
            let key = String::from_utf8_lossy(&k).into_owned();
            let Some((_, sha)) = key.split_once('@') else {
                continue;
            };
            if let Some(run) = get_json::<FixRun>(&self.runs, &v)? {
                out.push((run.repo, sha.to_string(), run.pr_number, run.check_name));
            }
        }
        Ok(out)
    }

    /// The run whose fix commit is `sha`, if ci-medic pushed it or is pushing it.
    pub fn by_pushed_commit(&self, repo: &str, sha: &str) -> Result<Option<FixRun>, StoreError> {
        match self.pushed.get(format!("{repo}@{sha}").as_bytes())? {
            Some(key) => get_json(&self.runs, &key),
            None => Ok(None),
        }
    }

    /// The run whose failed `check` is being re-run on `sha`, if one is.
    pub fn by_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
    ) -> Result<Option<FixRun>, StoreError> {
        let index_key = format!("{repo}@{sha}\u{0}{check}");
        let Some(key) = self.rerun.get(index_key.as_bytes())? else {
            return Ok(None);
        };
        let run: Option<FixRun> = get_json(&self.runs, &key)?;
        let current = run.filter(|r| {
            r.phase()
                == Phase::RerunRequested {
                    commit_sha: sha.to_string(),
                }
        });
        if current.is_none() {
            // The run moved to another commit since: the entry is stale.
            self.rerun.remove(index_key.as_bytes())?;
        }
        Ok(current)
    }

    /// Every run of a pull request (all its checks).
    pub fn for_pull_request(&self, repo: &str, pr: u64) -> Result<Vec<FixRun>, StoreError> {
        let prefix = format!("{repo}#{pr}\u{0}");
        let mut out = Vec::new();
        for item in self.runs.scan_prefix(prefix.as_bytes()) {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// Runs that still need the loop to move them (approved, waiting for CI on a fix, or for
    /// a re-run's result), or GitHub to show their state ([`FixRun::unpublished`]).
    pub fn active(&self) -> Result<Vec<FixRun>, StoreError> {
        let mut out = Vec::new();
        for item in self.runs.iter() {
            let (k, v) = item?;
            let run: FixRun = decode(&k, &v)?;
            if run.unpublished
                || matches!(
                    run.phase(),
                    Phase::Approved { .. } | Phase::Pushed { .. } | Phase::RerunRequested { .. }
                )
            {
                out.push(run);
            }
        }
        Ok(out)
    }

    /// Every run, in key order (the status page).
    pub fn all(&self) -> Result<Vec<FixRun>, StoreError> {
        let mut out = Vec::new();
        for item in self.runs.iter() {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// [`super::proposals::Runs::prune_finished`]: each finished run removed only if it is
    /// still the record read (compare-and-swap), then the pushed-commit entries naming it.
    pub fn prune_finished(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let mut gone: std::collections::HashSet<Vec<u8>> = Default::default();
        for item in self.runs.iter() {
            let (k, v) = item?;
            let run: FixRun = decode(&k, &v)?;
            if run.phase() != Phase::Finished || run.updated_at >= cutoff {
                continue;
            }
            if self
                .runs
                .compare_and_swap(&k, Some(&v), None::<&[u8]>)?
                .is_ok()
            {
                gone.insert(k.to_vec());
            }
        }
        if gone.is_empty() {
            return Ok(0);
        }
        for item in self.pushed.iter() {
            let (k, v) = item?;
            if gone.contains(v.as_ref()) {
                self.pushed.remove(&k)?;
            }
        }
        self.runs.flush()?;
        Ok(gone.len())
    }

    /// Every run of a repository (uninstall clean-up).
    pub fn for_repo(&self, repo: &str) -> Result<Vec<FixRun>, StoreError> {
        let prefix = format!("{repo}#");
        let mut out = Vec::new();
        for item in self.runs.scan_prefix(prefix.as_bytes()) {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }
}

/// The fix commits the run's pushed-commit index entry is kept for: the one it pushed, and
/// the one it stored to push next (the same index on both backends).
pub(crate) fn indexed_commits(run: &FixRun) -> impl Iterator<Item = String> {
    let pushed = match run.phase() {
        Phase::Pushed { commit_sha } => Some(commit_sha),
        _ => None,
    };
    pushed.into_iter().chain(run.pending_commit.clone())
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone, Utc};
    use ci_medic_core::comment::{CommentView, HistoryEntry, ProposalStatusView};
    use ci_medic_core::ids::FixDdsId;
    use ci_medic_core::proposal::machine::Stage;
    use ci_medic_core::proposal::{
        CheckRef, DdsStatus, FailedCheck, build_failed_dds, build_fix_packet, derive_code_fix,
        failed_dds_id,
    };
    use ci_medic_core::repo_config::ConstraintsConfig;
    use ci_medic_parser::{BugReport, BugType};
    use serde_json::json;

    use super::{FixRun, Phase};

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

    /// A run record as the version before the state machine wrote it: a rendered view and a
    /// phase side by side.
    fn old_record(status: ProposalStatusView, phase: Phase) -> serde_json::Value {
        let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
        let at = Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 0).unwrap();
        let c = ConstraintsConfig::default();
        let failed = build_failed_dds(
            failed_dds_id(day, 1).unwrap(),
            &FailedCheck {
                project: "o/r".into(),
                check_name: "lint".into(),
                head_sha: "abc".into(),
                pr_number: Some(7),
                changed_files: vec!["app/main.py".into()],
                failed_at: at,
            },
            &c,
        )
        .unwrap();
        let fix = derive_code_fix(
            &FixDdsId::new(day, 1).unwrap(),
            &failed.as_source(),
            &[report()],
            &c,
        )
        .unwrap();
        let packet = build_fix_packet(
            &CheckRef {
                check_name: "lint".into(),
                head_sha: "abc".into(),
            },
            &[report()],
            &c,
        );
        let view = CommentView {
            check_name: "lint".into(),
            head_sha: "abc".into(),
            pr_number: 7,
            dds_id: fix.dds.id.clone(),
            status,
            report_lines: vec!["LINTING error in app/main.py line 1".into()],
            reports_left_out: 0,
            fix_packet_json: serde_json::to_value(&packet).unwrap(),
            dds_json: serde_json::to_value(&fix.dds).unwrap(),
            out_of_scope_files: vec![],
            history: vec![HistoryEntry {
                at: "2026-02-02 15:30 UTC".into(),
                text: "proposed".into(),
            }],
            log_excerpt: None,
            triage: None,
        };
        json!({
            "repo": "o/r", "pr_number": 7, "check_name": "lint", "installation_id": 1,
            "comment_id": 5, "comment_url": null, "check_run_id": null, "check_run_sha": null,
            "proposed_for_sha": "abc", "fix_id": fix.dds.id, "phase": phase, "attempts": 1,
            "view": view, "reports": [report()], "updated_at": at,
        })
    }

    #[test]
    fn a_record_written_before_the_state_machine_is_read_into_its_state() {
        let pushed = old_record(
            ProposalStatusView::Pushed {
                commit_sha: "def".into(),
                files: vec!["app/main.py".into()],
            },
            Phase::Pushed {
                commit_sha: "def".into(),
            },
        );
        let run: FixRun = serde_json::from_value(pushed).unwrap();
        assert_eq!(
            run.phase(),
            Phase::Pushed {
                commit_sha: "def".into()
            }
        );
        assert_eq!(run.state.dds_status(), Some(DdsStatus::Approved));
        assert_eq!(run.fix_id().as_deref(), Some("DDS-FIX-20260202-001"));
        assert_eq!((run.proposed_for_sha(), run.state.attempts), ("abc", 1));
        assert_eq!(run.state.history.len(), 1);
        assert_eq!(run.state.view().dds_json["status"], "approved");

        // A proposal the old loop ended when the pull request closed stays ended.
        let closed = old_record(ProposalStatusView::Proposed, Phase::Finished);
        let run: FixRun = serde_json::from_value(closed).unwrap();
        assert_eq!(run.state.stage, Stage::Proposed);
        assert_eq!(run.phase(), Phase::Finished);

        // And a current record reads back as it was written.
        let again: FixRun = serde_json::from_value(serde_json::to_value(&run).unwrap()).unwrap();
        assert_eq!(again.state, run.state);
    }

    /// The re-run index finds a run only while its re-run is under way on that commit.
    #[test]
    fn the_rerun_index_follows_the_run() {
        use ci_medic_core::proposal::machine::{Event, NotCode, RunState, step};
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(dir.path()).unwrap();
        let runs = super::RunStore::open(&store).unwrap();
        let at = Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 0).unwrap();
        let not_code = |sha: &str, id: u64| Event::NotCode {
            head_sha: sha.into(),
            not_code: Box::new(NotCode {
                kind: ci_medic_triage::FailureKind::Infrastructure,
                evidence: vec![],
                flaky: vec![],
                rules: vec!["check.cancelled".into()],
                check_run_id: id,
                actions_run_id: Some(9),
            }),
            config_error: None,
        };
        let mut state = RunState::new("test", 7, "aaa");
        state = step(&state, not_code("aaa", 1), at).unwrap().0;
        let rerun = Event::RerunRequested {
            by: None,
            comment_url: None,
            pr_head_sha: "aaa".into(),
        };
        state = step(&state, rerun, at).unwrap().0;
        let mut run = FixRun {
            repo: "o/r".into(),
            pr_number: 7,
            check_name: "test".into(),
            installation_id: 1,
            comment_id: None,
            comment_url: None,
            check_run_id: None,
            check_run_sha: None,
            state,
            reports: vec![],
            pending_commit: None,
            push_target: None,
            read_from: None,
            pushed_at: None,
            previous_attempt: None,
            creations: None,
            unpublished: false,
            updated_at: at,
            version: 0,
        };
        runs.put(&mut run).unwrap();
        assert!(runs.by_rerun("o/r", "aaa", "test").unwrap().is_some());
        assert!(runs.by_rerun("o/r", "aaa", "lint").unwrap().is_none());
        assert!(runs.by_rerun("o/r", "bbb", "test").unwrap().is_none());
        // A new failure on another commit: the old commit's entry no longer leads anywhere.
        run.state = step(&run.state, not_code("bbb", 2), at).unwrap().0;
        runs.put(&mut run).unwrap();
        assert!(runs.by_rerun("o/r", "aaa", "test").unwrap().is_none());
        assert!(runs.rerun.is_empty(), "the stale entry is dropped");
    }
}
