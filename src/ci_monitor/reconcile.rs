//! The CI monitor's reconcile pass: moves on every run whose next step did not come by webhook.
//!
//! Each active run gets a typed reconcile job; the job writes an approved fix that was never
//! written, polls the check runs of a pushed fix or a re-run whose result did not reach us, and
//! gives up on one that has waited too long. It never decides for a person and never pushes
//! anything but an approved fix (through the fix loop).

use chrono::Utc;
use tracing::warn;

use ci_medic_core::proposal::machine::Event;

use crate::events::CheckRunCompleted;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Orchestrator, gh_err, job_id, store_err};
use crate::store::JobKind;
use crate::store::runs::Phase;

/// Event name of the reconcile jobs the version before typed jobs queued as deliveries, with a
/// [`ReconcilePayload`]; still understood, so an upgrade leaves none behind.
pub(crate) const RECONCILE_EVENT: &str = "ci_medic_reconcile";

/// Stop watching CI for a pushed fix after this long without a result.
const CI_TIMEOUT: chrono::Duration = chrono::Duration::hours(6);

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct ReconcilePayload {
    pub repo: String,
    pub pr: u64,
    pub check: String,
}

impl Orchestrator {
    /// Jobs for every run the loop must still move.
    pub(crate) fn reconcile_jobs(&self) -> Vec<crate::jobs::InternalJob> {
        let runs = match self.ctx.runs.active() {
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
    pub(crate) async fn reconcile_legacy(&self, payload: &[u8]) -> Result<(), JobError> {
        let p: ReconcilePayload = serde_json::from_slice(payload)
            .map_err(|e| JobError::Permanent(format!("bad reconcile payload: {e}")))?;
        self.reconcile_run(&p.repo, p.pr, &p.check).await
    }

    /// CI monitor: moves one run on. An approved fix is written and pushed; a pushed fix or a
    /// re-run whose check finished without a webhook reaching us gets its verdict by polling;
    /// a re-run with no result after `RERUN_TIMEOUT_MINUTES` is given up on, `/rerun` offered.
    pub(crate) async fn reconcile_run(
        &self,
        repo: &str,
        pr: u64,
        check: &str,
    ) -> Result<(), JobError> {
        let ctx = &self.ctx;
        let _held = ctx.pr_locks.lock(repo, pr).await;
        let Some(run) = ctx.runs.get(repo, pr, check).map_err(store_err)? else {
            return Ok(());
        };
        let Some(repo) = RepoRef::parse(&run.repo) else {
            return Ok(());
        };
        let inst = InstallationId(run.installation_id);
        let (config, _) = self.repo_config(inst, &repo).await?;
        match run.phase() {
            Phase::Approved { .. } => self.advance_approved(inst, &repo, run, &config).await,
            Phase::Pushed { commit_sha } => {
                let runs = ctx
                    .github
                    .list_check_runs_for_ref(inst, &repo, &commit_sha, Some(&run.check_name))
                    .await
                    .map_err(|e| gh_err("polling check runs", e))?;
                let done =
                    crate::ci_monitor::completed_run(&runs, &run.check_name, &commit_sha).cloned();
                if let Some(c) = done {
                    let cr = CheckRunCompleted::from_api(repo.clone(), inst.0, &c, run.pr_number);
                    return self.verdict(inst, &repo, run, &cr, &config).await;
                }
                if run.pushed_at.is_some_and(|t| Utc::now() - t > CI_TIMEOUT) {
                    let mut run = run;
                    let event = Event::NoVerdict {
                        commit_sha,
                        hours: u32::try_from(CI_TIMEOUT.num_hours()).unwrap_or(u32::MAX),
                    };
                    return self.moved(inst, &repo, &mut run, event).await;
                }
                Ok(())
            }
            Phase::RerunRequested { commit_sha } => {
                // The re-run's result, when its webhook did not reach us.
                let runs = ctx
                    .github
                    .list_check_runs_for_ref(inst, &repo, &commit_sha, Some(&run.check_name))
                    .await
                    .map_err(|e| gh_err("polling check runs", e))?;
                let failed = run.state.not_code.as_ref().map(|n| n.check_run_id);
                let done = runs
                    .iter()
                    .filter(|c| Some(c.id) != failed)
                    .find(|c| {
                        crate::ci_monitor::completed_run(
                            std::slice::from_ref(*c),
                            &run.check_name,
                            &commit_sha,
                        )
                        .is_some()
                    })
                    .cloned();
                if let Some(c) = done {
                    let cr = CheckRunCompleted::from_api(repo.clone(), inst.0, &c, run.pr_number);
                    return self.rerun_verdict(inst, &repo, run, &cr, &config).await;
                }
                let minutes = ctx.rerun_timeout_minutes;
                if run.state.rerun_overdue(Utc::now(), minutes) {
                    let mut run = run;
                    let event = Event::RerunNoVerdict { minutes };
                    self.moved(inst, &repo, &mut run, event).await?;
                    ctx.metrics.stage("rerun", "no_verdict");
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
