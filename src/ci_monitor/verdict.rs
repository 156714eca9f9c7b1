//! The CI monitor's verdicts: what a finished check run means for a pushed fix or a re-run.
//!
//! Turns the check run into the proposal machine's event and applies it; a failed fix with
//! attempts left leads to the next proposal. It never writes or pushes code, and never judges
//! a run other than the watched check on the commit ci-medic pushed or re-ran.

use tracing::{info, warn};

use ci_medic_core::ids::DdsId;
use ci_medic_core::proposal::machine::{Effect, Event};
use ci_medic_core::repo_config::RepoConfig;

use crate::events::CheckRunCompleted;
use crate::events::analysis::{analyse, analyse_with_source};
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, catch_up, gh_err, store_err};
use crate::store::runs::{FixRun, Phase};

/// The check finished again on a commit whose failed jobs were re-run: `true` when it was
/// the re-run ci-medic waits for, and its verdict has been taken.
pub(crate) async fn rerun_finished(
    ctx: &Context,
    cr: &CheckRunCompleted,
) -> Result<bool, JobError> {
    awaited_check_finished(ctx, cr, Awaited::Rerun).await
}

/// The check finished on a commit ci-medic pushed: `true` when it was the pushed fix's
/// check, and its verdict has been taken.
pub(crate) async fn pushed_fix_checked(
    ctx: &Context,
    cr: &CheckRunCompleted,
) -> Result<bool, JobError> {
    awaited_check_finished(ctx, cr, Awaited::PushedFix).await
}

/// Finds the run waiting for `cr` through its index, reads it again under its pull
/// request's lock (it may have moved on while this job waited), and takes the verdict when
/// it still waits for this check on this commit. An index entry left by an earlier step on
/// another commit is not it.
async fn awaited_check_finished(
    ctx: &Context,
    cr: &CheckRunCompleted,
    awaited: Awaited,
) -> Result<bool, JobError> {
    let project = cr.repo.full_name();
    let found = match awaited {
        Awaited::Rerun => ctx.runs.by_rerun(&project, &cr.head_sha, &cr.name).await,
        Awaited::PushedFix => ctx.runs.by_pushed_commit(&project, &cr.head_sha).await,
    }
    .map_err(store_err)?;
    let Some(found) = found else {
        return Ok(false);
    };
    let _held = ctx.pr_locks.lock(&project, found.pr_number).await;
    let run = ctx
        .runs
        .get(&project, found.pr_number, &found.check_name)
        .await
        .map_err(store_err)?
        .unwrap_or(found);
    let commit_sha = cr.head_sha.clone();
    let expected = match awaited {
        Awaited::Rerun => Phase::RerunRequested { commit_sha },
        Awaited::PushedFix => Phase::Pushed { commit_sha },
    };
    let inst = InstallationId(run.installation_id);
    let repo = cr.repo.clone();
    if matches!(awaited, Awaited::PushedFix)
        && run.phase() != expected
        && run.pending_commit.as_deref() == Some(cr.head_sha.as_str())
    {
        // GitHub ran the check on the fix commit before the job that pushed it recorded the
        // push (or that job died in between and will push again): come back once it has.
        return Err(JobError::PushUnrecorded {
            commit: cr.head_sha.clone(),
        });
    }
    if run.check_name != cr.name || run.phase() != expected {
        // This job's earlier run may have taken the verdict and stopped before the
        // comment showed it.
        let mut run = run;
        catch_up(ctx, inst, &repo, &mut run).await?;
        return Ok(false);
    }
    let (config, _) = ctx.repo_config(inst, &repo).await?;
    match awaited {
        Awaited::Rerun => rerun_verdict(ctx, inst, &repo, run, cr, &config).await?,
        Awaited::PushedFix => verdict(ctx, inst, &repo, run, cr, &config).await?,
    }
    Ok(true)
}

/// CI monitor: the check finished on a commit ci-medic pushed.
pub(crate) async fn verdict(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    cr: &CheckRunCompleted,
    config: &RepoConfig,
) -> Result<(), JobError> {
    let Phase::Pushed { commit_sha } = run.phase() else {
        return Ok(());
    };
    let event = match crate::ci_monitor::classify(cr.conclusion.as_deref()) {
        crate::ci_monitor::Verdict::Passed => {
            ctx.metrics.stage("verdict", "passed");
            Event::CheckPassed {
                commit_sha,
                run_url: cr.html_url.clone(),
            }
        }
        crate::ci_monitor::Verdict::Failed => {
            ctx.metrics.stage("verdict", "failed");
            if run.state.attempts < config.fix.max_attempts
                && let Some(prev) = run.previous_attempt.as_mut()
            {
                prev.failure = format!("`{}` still failed after the fix was pushed", cr.name);
            }
            Event::CheckFailed {
                commit_sha,
                run_url: cr.html_url.clone(),
                max_attempts: config.fix.max_attempts,
            }
        }
        crate::ci_monitor::Verdict::NoVerdict => {
            info!(conclusion = ?cr.conclusion, "check finished without a verdict on the fix; still waiting");
            return Ok(());
        }
    };
    let follow_ups = match apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
        Ok(f) => f,
        Err(e) => {
            warn!(check = %run.check_name, error = %e, "verdict not applied");
            return Ok(());
        }
    };
    for effect in follow_ups {
        if let Effect::ProposeNext { source } = effect {
            // The next proposal's source is the failed code_fix.
            let pr = ctx
                .github
                .get_pull_request(inst, repo, run.pr_number)
                .await
                .map_err(|e| gh_err("reading the pull request", e))?;
            analyse_with_source(
                ctx,
                inst,
                repo,
                pr.number,
                cr,
                config,
                None,
                Some(DdsId(source)),
            )
            .await?;
        }
    }
    Ok(())
}

/// CI monitor: the check finished again on the commit whose failed jobs were re-run. A
/// pass ends it; a failure is analysed like any other (it may be the code's this time).
pub(crate) async fn rerun_verdict(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    cr: &CheckRunCompleted,
    config: &RepoConfig,
) -> Result<(), JobError> {
    let passed = match crate::ci_monitor::classify(cr.conclusion.as_deref()) {
        crate::ci_monitor::Verdict::Passed => true,
        crate::ci_monitor::Verdict::Failed => false,
        crate::ci_monitor::Verdict::NoVerdict
            if crate::ci_monitor::rerun_cancelled(cr.conclusion.as_deref()) =>
        {
            let event = Event::RerunCancelled {
                check_run_id: cr.check_run_id,
                conclusion: cr.conclusion.clone().unwrap_or_default(),
                run_url: cr.html_url.clone(),
            };
            if let Err(e) = apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
                info!(check = %run.check_name, error = %e, "not the re-run's end");
                return Ok(());
            }
            // An automatic re-run stays counted against `triage.max_reruns`, and none
            // follows: a cancellation is someone's (or a concurrency group's) decision.
            ctx.metrics.stage("rerun", "cancelled");
            return Ok(());
        }
        crate::ci_monitor::Verdict::NoVerdict => {
            info!(conclusion = ?cr.conclusion, "the re-run finished without a verdict; still waiting");
            return Ok(());
        }
    };
    let event = Event::RerunFinished {
        check_run_id: cr.check_run_id,
        passed,
        run_url: cr.html_url.clone(),
    };
    if let Err(e) = apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
        // The failed run itself (a redelivery), or the run moved on.
        info!(check = %run.check_name, error = %e, "not the re-run's verdict");
        return Ok(());
    }
    ctx.metrics
        .stage("rerun", if passed { "passed" } else { "failed" });
    if passed {
        ctx.shared
            .record_check_passed(&run.repo, &run.check_name, &cr.head_sha)
            .await
            .map_err(store_err)?;
        return Ok(());
    }
    let pr = ctx
        .github
        .get_pull_request(inst, repo, run.pr_number)
        .await
        .map_err(|e| gh_err("reading the pull request", e))?;
    if pr.state != "open" || pr.head.sha != cr.head_sha {
        info!(check = %run.check_name, "the pull request moved on; the re-run's failure is not analysed");
        return Ok(());
    }
    analyse(ctx, inst, repo, pr.number, cr, config, None).await
}

/// Which finished check a run can be waiting for.
#[derive(Clone, Copy)]
enum Awaited {
    /// The re-run of the failed jobs, on the same commit.
    Rerun,
    /// CI on the fix commit ci-medic pushed.
    PushedFix,
}
