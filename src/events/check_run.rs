//! Handler: a check run completed. A check of ci-medic's own is ignored; one on the default
//! branch records test outcomes (`default_branch`); on a pull request, the CI monitor first
//! takes it as the verdict of a re-run or of a pushed fix it waits for, and otherwise a failed
//! check of the pull request's head is analysed (`analysis`), under that pull request's lock.
//!
//! It never analyses a commit that is not the head of an open pull request, nor a check the
//! repository's configuration excludes.

use tracing::info;

use ci_medic_core::repo_config::CONFIG_PATH;

use super::CheckRunCompleted;
use super::analysis::analyse;
use super::default_branch::default_branch_check;
use crate::ci_monitor::verdict::{pushed_fix_checked, rerun_finished};
use crate::github::{GitHubError, InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, gh_err, store_err};

pub(crate) async fn check_run_completed(
    ctx: &Context,
    cr: CheckRunCompleted,
) -> Result<(), JobError> {
    if cr.app_id == Some(ctx.app_id) || cr.name == crate::comment::CHECK_RUN_NAME {
        info!(check = %cr.name, "our own check run; ignored");
        return Ok(());
    }
    if cr.on_default_branch() {
        return default_branch_check(ctx, &cr).await;
    }
    let project = cr.repo.full_name();
    // CI monitor: the check finished again on a commit whose failed jobs were re-run.
    if rerun_finished(ctx, &cr).await? {
        return Ok(());
    }
    if cr.conclusion.as_deref() == Some("success") {
        // The tests that failed in this check on this commit passed now.
        let passed = ctx
            .shared
            .record_check_passed(&project, &cr.name, &cr.head_sha)
            .await
            .map_err(store_err)?;
        if passed > 0 {
            info!(check = %cr.name, tests = passed, "test passes recorded");
        }
    }
    // CI monitor: the check finished on a commit ci-medic pushed.
    if pushed_fix_checked(ctx, &cr).await? {
        return Ok(());
    }
    let failed = matches!(cr.conclusion.as_deref(), Some("failure" | "timed_out"));
    if !failed {
        info!(check = %cr.name, conclusion = ?cr.conclusion, "check did not fail; nothing to analyse");
        return Ok(());
    }
    let Some(inst) = cr.installation_id.map(InstallationId) else {
        return Err(JobError::NoInstallation);
    };
    let repo = cr.repo.clone();

    let Some(pr_number) = open_pull_request_for(ctx, inst, &repo, &cr).await? else {
        info!(check = %cr.name, sha = %cr.head_sha, "the commit is not the head of an open pull request; ignored");
        return Ok(());
    };
    let _held = ctx.pr_locks.lock(&project, pr_number).await;
    let (config, config_error) = ctx.repo_config(inst, &repo).await?;
    if !config.enabled {
        info!(repo = %cr.repo, "ci-medic is disabled for this repository by {CONFIG_PATH}");
        return Ok(());
    }
    if !config.check_selected(&cr.name) {
        info!(check = %cr.name, "check excluded by {CONFIG_PATH}");
        return Ok(());
    }
    analyse(ctx, inst, &repo, pr_number, &cr, &config, config_error).await
}

/// The number of the open pull request whose head is the check's commit.
async fn open_pull_request_for(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    cr: &CheckRunCompleted,
) -> Result<Option<u64>, JobError> {
    // GitHub lists in the check run the open pull requests whose head sha or branch is the
    // check's, each with its head sha: one whose head is this commit needs no read.
    if let Some((n, _)) = cr
        .pull_request_heads
        .iter()
        .find(|(n, sha)| *sha == cr.head_sha && cr.pull_requests.contains(n))
    {
        return Ok(Some(*n));
    }
    let gh = &ctx.github;
    let mut numbers = cr.pull_requests.clone();
    if numbers.is_empty() {
        // Pull requests from forks are not listed on the check run; ask by commit.
        let prs = gh
            .list_pull_requests_for_commit(inst, repo, &cr.head_sha)
            .await
            .map_err(|e| gh_err("listing pull requests for the commit", e))?;
        numbers = prs.into_iter().map(|p| p.number).collect();
    }
    for n in numbers {
        let pr = match gh.get_pull_request(inst, repo, n).await {
            Ok(pr) => pr,
            // One listed number that is not (or no longer) a pull request here must not
            // hide the others.
            Err(GitHubError::NotFound) => continue,
            Err(e) => return Err(gh_err("reading the pull request", e)),
        };
        if pr.state == "open" && pr.head.sha == cr.head_sha {
            return Ok(Some(pr.number));
        }
    }
    Ok(None)
}
