//! The CI monitor's reconcile pass: moves on every run whose next step did not come by webhook.
//!
//! Each active run gets a typed reconcile job; the job writes an approved fix that was never
//! written, polls the check runs of a pushed fix or a re-run whose result did not reach us, and
//! gives up on one that has waited too long. It never decides for a person and never pushes
//! anything but an approved fix (through the fix loop).

use chrono::Utc;
use tracing::warn;

use ci_medic_core::proposal::machine::Event;

use super::verdict::{rerun_verdict, verdict};
use crate::events::CheckRunCompleted;
use crate::fix_agent::write::advance_approved;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, catch_up, gh_err, job_id, moved, store_err};
use crate::store::JobKind;
use crate::store::runs::Phase;

/// Event name of the reconcile jobs the version before typed jobs queued as deliveries, with a
/// [`ReconcilePayload`]; still understood, so an upgrade leaves none behind.
pub(crate) const RECONCILE_EVENT: &str = "ci_medic_reconcile";

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct ReconcilePayload {
    pub repo: String,
    pub pr: u64,
    pub check: String,
}

/// Jobs for every run the loop must still move.
pub(crate) async fn reconcile_jobs(ctx: &Context) -> Vec<crate::jobs::InternalJob> {
    let runs = match ctx.runs.active().await {
        Ok(r) => r,
        Err(e) => {
            warn!(error = %e, "cannot list active runs");
            return Vec::new();
        }
    };
    runs.into_iter()
        .map(|r| crate::jobs::InternalJob {
            key: format!("{}#{}", r.repo, r.pr_number),
            id: job_id(&r),
            kind: JobKind::Reconcile {
                repo: r.repo,
                pr: r.pr_number,
                check: r.check_name,
            },
        })
        .collect()
}

/// A reconcile job queued by the version before typed jobs.
pub(crate) async fn reconcile_legacy(ctx: &Context, payload: &[u8]) -> Result<(), JobError> {
    let p: ReconcilePayload =
        serde_json::from_slice(payload).map_err(|source| JobError::BadPayload {
            what: "reconcile",
            source,
        })?;
    reconcile_run(ctx, &p.repo, p.pr, &p.check).await
}

/// CI monitor: moves one run on. An approved fix is written and pushed. A pushed fix and a
/// re-run ci-medic asked for wait alike for a result: one that finished without its webhook
/// reaching us is found by polling the check's runs on the watched commit, and when none
/// has come within the wait's setting (`VERDICT_TIMEOUT_MINUTES` for a pushed fix,
/// `RERUN_TIMEOUT_MINUTES` for a re-run) the comment says so.
pub(crate) async fn reconcile_run(
    ctx: &Context,
    repo: &str,
    pr: u64,
    check: &str,
) -> Result<(), JobError> {
    let _held = ctx.pr_locks.lock(repo, pr).await;
    let Some(run) = ctx.runs.get(repo, pr, check).await.map_err(store_err)? else {
        return Ok(());
    };
    let Some(repo) = RepoRef::parse(&run.repo) else {
        return Ok(());
    };
    let inst = InstallationId(run.installation_id);
    let mut run = run;
    catch_up(ctx, inst, &repo, &mut run).await?;
    let (config, _) = ctx.repo_config(inst, &repo).await?;
    let (commit_sha, rerun) = match run.phase() {
        Phase::Approved { .. } => {
            return advance_approved(ctx, inst, &repo, run, &config).await;
        }
        Phase::Pushed { commit_sha } => (commit_sha, false),
        Phase::RerunRequested { commit_sha } => (commit_sha, true),
        _ => return Ok(()),
    };
    let runs = ctx
        .github
        .list_check_runs_for_ref(inst, &repo, &commit_sha, Some(&run.check_name))
        .await
        .map_err(|e| gh_err("polling check runs", e))?;
    // A re-run's result is any completed run of the check but the failed one itself.
    let failed = rerun
        .then(|| run.state.not_code.as_ref().map(|n| n.check_run_id))
        .flatten();
    let done = runs
        .iter()
        .filter(|c| Some(c.id) != failed)
        .filter(|c| {
            crate::ci_monitor::completed_run(std::slice::from_ref(*c), &run.check_name, &commit_sha)
                .is_some()
        })
        .max_by_key(|c| c.id)
        .cloned();
    if let Some(c) = done {
        let cr = CheckRunCompleted::from_api(repo.clone(), inst.0, &c, run.pr_number);
        return match rerun {
            true => rerun_verdict(ctx, inst, &repo, run, &cr, &config).await,
            false => verdict(ctx, inst, &repo, run, &cr, &config).await,
        };
    }
    // No result came: the same rule for both waits, each with its own setting.
    let now = Utc::now();
    let (overdue, event) = if rerun {
        let minutes = ctx.rerun_timeout_minutes;
        (
            run.state.rerun_overdue(now, minutes),
            Event::RerunNoVerdict { minutes },
        )
    } else {
        let minutes = ctx.verdict_timeout_minutes;
        let waited = chrono::Duration::minutes(i64::from(minutes));
        (
            run.pushed_at.is_some_and(|t| now - t >= waited),
            Event::NoVerdict {
                commit_sha,
                minutes,
            },
        )
    };
    if overdue {
        let mut run = run;
        moved(ctx, inst, &repo, &mut run, event).await?;
        ctx.metrics
            .stage(if rerun { "rerun" } else { "verdict" }, "no_verdict");
    }
    Ok(())
}
