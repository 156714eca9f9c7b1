//! The git agent's part of the fix job: pushes the prepared fix commit to the branch the
//! approval chose, and records the push through the proposal machine (`Pushed`, or
//! `PushStale` when the branch moved).
//!
//! It pushes only a commit already stored in the run (so a restart never pushes twice: the
//! git agent treats a branch already at that commit as done), never force-pushes, and never
//! writes or checks the patch.

use chrono::Utc;
use tracing::{info, warn};

use ci_medic_core::proposal::machine::Event;

use super::{GitAgent, GitAgentError, PushTarget, target_for};
use crate::github::{InstallationId, PullRequest, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, gh_err, moved};
use crate::store::runs::FixRun;

/// Pushes `commit` (prepared on the proposal's commit, changing `files`) to `target`; the
/// run's state follows through the machine.
pub(crate) async fn push_fix(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    target: &PushTarget,
    commit: String,
    files: Vec<String>,
) -> Result<(), JobError> {
    let Some(fix_id) = run.fix_id() else {
        return Ok(());
    };
    let parent = run.proposed_for_sha().to_string();
    let agent = GitAgent {
        gh: ctx.github.as_ref(),
        inst,
    };
    match agent.publish(target, &parent, &commit).await {
        Ok(()) => {}
        Err(GitAgentError::Stale { actual, .. }) => {
            ctx.metrics.stage("push", "stale");
            run.pending_commit = None;
            let event = Event::PushStale {
                branch: target.branch.clone(),
                head_sha: actual,
            };
            return moved(ctx, inst, repo, &mut run, event).await;
        }
        Err(GitAgentError::GitHub(e)) => return Err(gh_err("pushing the fix commit", e)),
        // Only `prepare` checks paths; a stored commit has passed it already.
        Err(e @ GitAgentError::NotARegularFile { .. }) => {
            return Err(JobError::GitAgent {
                what: "pushing the fix commit",
                source: e,
            });
        }
    }
    ctx.metrics.stage("push", "pushed");
    info!(fix = %fix_id, commit = %commit, branch = %target.branch, "fix commit pushed");
    run.pending_commit = None;
    let pushed_at = Utc::now();
    run.pushed_at = Some(pushed_at);
    // For the status page's approve-to-push time; the push itself has happened, so a
    // failure to note it is logged, not retried.
    if let Err(e) = ctx.registry.record_push(&fix_id, pushed_at).await {
        warn!(fix = %fix_id, error = %e, "could not record the push time");
    }
    let destination = if target.new_branch {
        format!(
            "to the new branch `{}` (the fork does not allow maintainer edits)",
            target.branch
        )
    } else {
        format!("to `{}`", target.branch)
    };
    let event = Event::Pushed {
        commit_sha: commit,
        files,
        destination,
    };
    moved(ctx, inst, repo, &mut run, event).await
}

/// Where the fix for the pull request goes, and the repository its commit and files are read
/// from (the head repository: a fork's files are there).
pub(crate) fn push_plan(repo: &RepoRef, pr: &PullRequest, fix_id: &str) -> (PushTarget, RepoRef) {
    let head_repo = pr
        .head
        .repo
        .as_ref()
        .and_then(|r| RepoRef::parse(&r.full_name));
    let target = target_for(
        repo,
        head_repo.as_ref(),
        &pr.head.git_ref,
        pr.maintainer_can_modify.unwrap_or(false),
        fix_id,
    );
    (target, head_repo.unwrap_or_else(|| repo.clone()))
}
