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
use ci_medic_core::comment::CommentView;

/// Where the loop is for the current proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// No proposal (analysis found nothing, or logs unavailable).
    Idle,
    /// Waiting for a maintainer.
    Proposed,
    /// Approved; the fix agent must run (or is running).
    Approved { by: String },
    /// One commit is on the branch; waiting for CI on it.
    Pushed { commit_sha: String },
    /// Nothing more will happen for this proposal.
    Finished,
}

/// The record.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The commit the current proposal was made for.
    pub proposed_for_sha: String,
    /// The current code_fix DDS id, when there is one.
    pub fix_id: Option<String>,
    pub phase: Phase,
    /// Fix commits pushed for this check so far.
    pub attempts: u32,
    /// What the comment shows now; re-rendered on every change.
    pub view: CommentView,
    /// The bug reports of the current proposal, for the fix agent.
    #[serde(default)]
    pub reports: Vec<ci_medic_parser::BugReport>,
    /// The fix commit created but not yet on the branch (stored before the ref moves, so a
    /// restart publishes this same commit instead of writing another).
    #[serde(default)]
    pub pending_commit: Option<String>,
    #[serde(default)]
    pub push_target: Option<crate::git_agent::PushTarget>,
    #[serde(default)]
    pub pushed_at: Option<DateTime<Utc>>,
    /// What the last pushed fix did, for the fix agent's next attempt.
    #[serde(default)]
    pub previous_attempt: Option<ci_medic_core::fix_check::PreviousAttempt>,
    pub updated_at: DateTime<Utc>,
}

impl FixRun {
    pub fn key(repo: &str, pr_number: u64, check_name: &str) -> String {
        format!("{repo}#{pr_number}\u{0}{check_name}")
    }
}

/// The `runs` tree, plus an index from pushed commits to runs (for the CI monitor).
#[derive(Clone)]
pub struct RunStore {
    runs: sled::Tree,
    pushed: sled::Tree,
}

impl RunStore {
    pub fn open(store: &super::Store) -> Result<RunStore, StoreError> {
        Ok(RunStore {
            runs: store.db().open_tree("runs")?,
            pushed: store.db().open_tree("runs_by_pushed_commit")?,
        })
    }

    pub fn get(&self, repo: &str, pr: u64, check: &str) -> Result<Option<FixRun>, StoreError> {
        get_json(&self.runs, FixRun::key(repo, pr, check).as_bytes())
    }

    /// Writes the record and flushes it before returning: the caller's next step may be a
    /// GitHub call that must not be repeated after a crash.
    pub fn put(&self, run: &FixRun) -> Result<(), StoreError> {
        let key = FixRun::key(&run.repo, run.pr_number, &run.check_name);
        self.runs.insert(
            key.as_bytes(),
            serde_json::to_vec(run).expect("run serialises"),
        )?;
        if let Phase::Pushed { commit_sha } = &run.phase {
            self.pushed.insert(
                format!("{}@{commit_sha}", run.repo).as_bytes(),
                key.as_bytes(),
            )?;
        }
        self.runs.flush()?;
        Ok(())
    }

    /// The run whose fix commit is `sha`, if ci-medic pushed it.
    pub fn by_pushed_commit(&self, repo: &str, sha: &str) -> Result<Option<FixRun>, StoreError> {
        match self.pushed.get(format!("{repo}@{sha}").as_bytes())? {
            Some(key) => get_json(&self.runs, &key),
            None => Ok(None),
        }
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

    /// Runs that still need the loop to move them (approved, or waiting for CI).
    pub fn active(&self) -> Result<Vec<FixRun>, StoreError> {
        let mut out = Vec::new();
        for item in self.runs.iter() {
            let (k, v) = item?;
            let run: FixRun = decode(&k, &v)?;
            if matches!(run.phase, Phase::Approved { .. } | Phase::Pushed { .. }) {
                out.push(run);
            }
        }
        Ok(out)
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
