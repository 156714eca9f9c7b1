//! Applying the proposal state machine's steps: the one place a run's state changes.
//!
//! Every handler turns what happened into a [`machine::Event`] and calls [`apply`]:
//! the pure `step` computes the next state and its effects, and this module carries the effects
//! out in order: the registry transition first (compare-and-swap, so a decision that lost a
//! race is refused before anything is stored), then the run is stored, then the comment and the
//! check run are rendered from the new state and published. What remains (writing the fix,
//! proposing the next one) is handed back to the caller.
//!
//! It must never change a run's state other than through `step`, and never render the comment
//! from anything but the stored state.

use chrono::Utc;
use tracing::warn;

use ci_medic_core::comment::render_comment;
use ci_medic_core::proposal::TransitionError;
use ci_medic_core::proposal::machine::{self, Effect, MachineError, SERVICE_ACTOR, Stage};

use super::{Context, gh_err, store_err};
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::store::registry::RegistryError;
use crate::store::runs::FixRun;

/// How a step's registry transition is taken when the registry already holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// A first attempt: a person's decision must win the compare-and-swap.
    First,
    /// This job made the registry transition before it stopped (a crash, a failed call):
    /// finding it already made is expected.
    Resumed,
}

/// Applies `event` to `run`: the machine's step, then its effects. `Ok(Err(_))` when the
/// machine (or the registry's compare-and-swap) refused it; nothing was changed then.
/// `Ok(Ok(follow_ups))` lists the effects left to the caller ([`Effect::WriteFix`],
/// [`Effect::ProposeNext`]).
pub(crate) async fn apply(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &mut FixRun,
    event: machine::Event,
    replay: Replay,
) -> Result<Result<Vec<Effect>, MachineError>, JobError> {
    let now = Utc::now();
    let (next, effects) = match machine::step(&run.state, event, now) {
        Ok(done) => done,
        Err(e) => return Ok(Err(e)),
    };
    let mut to_publish = false;
    let mut follow_ups = Vec::new();
    for effect in effects {
        match effect {
            Effect::Record(r) => {
                match ctx
                    .registry
                    .transition(&r.fix_id, r.from, r.to, &r.actor, now, &r.reason)
                    .await
                {
                    Ok(_) => {}
                    Err(RegistryError::Transition { source, .. }) => {
                        let already = matches!(
                            source,
                            TransitionError::Stale { actual, .. } if actual == r.to
                        );
                        if r.actor == SERVICE_ACTOR || (already && replay == Replay::Resumed) {
                            // The service's own moves are idempotent: an earlier attempt
                            // made it, or the registry moved on for a reason it recorded.
                            if !already {
                                warn!(fix = %r.fix_id, error = %source, "registry transition not made");
                            }
                        } else {
                            return Ok(Err(MachineError::Transition(source)));
                        }
                    }
                    Err(e) => return Err(store_err(e)),
                }
            }
            Effect::Publish => to_publish = true,
            other => follow_ups.push(other),
        }
    }
    run.state = next;
    if to_publish {
        publish(ctx, inst, repo, run).await?;
    } else {
        run.updated_at = now;
        ctx.runs.put(run).await.map_err(store_err)?;
    }
    Ok(Ok(follow_ups))
}

/// Stores the run, then edits (or creates) the comment and the annotations check run,
/// both rendered from the run's state, storing each id as soon as it is known.
pub(crate) async fn publish(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &mut FixRun,
) -> Result<(), JobError> {
    run.updated_at = Utc::now();
    // Stored as not yet shown, until GitHub shows it: a job stopped in between leaves the
    // mark for the next reader of the run to publish (`catch_up`).
    run.unpublished = true;
    ctx.runs.put(run).await.map_err(store_err)?;
    let view = run.state.view();
    let body = render_comment(&view);
    let comment = if run.comment_id.is_none() && !run.comment_may_exist() {
        // Never asked for: recorded first, then created without looking for it.
        if let Some(c) = run.creations.as_mut() {
            c.comment = true;
        }
        ctx.runs.put(run).await.map_err(store_err)?;
        ctx.github
            .create_issue_comment(inst, repo, run.pr_number, &body)
            .await
    } else {
        crate::comment::upsert_comment(
            ctx.github.as_ref(),
            inst,
            repo,
            run.pr_number,
            &run.check_name,
            ctx.app_id,
            run.comment_id,
            &body,
        )
        .await
    }
    .map_err(|e| gh_err("posting the comment", e))?;
    if run.comment_id != Some(comment.id) {
        run.comment_id = Some(comment.id);
        run.comment_url = Some(comment.html_url.clone());
        ctx.runs.put(run).await.map_err(store_err)?;
    }
    ctx.metrics.stage("comment", "published");

    // Annotations belong to a proposal: none when the analysis found nothing to propose.
    if run.state.proposal.is_some() && !run.reports.is_empty() && !head_moved_on(run) {
        let existing = if run.check_run_sha.as_deref() == Some(view.head_sha.as_str()) {
            run.check_run_id
        } else {
            None
        };
        let external_id = format!("{}#{}:{}", run.repo, run.pr_number, view.dds_id);
        let look_first = existing.is_some() || run.check_run_may_exist(&external_id);
        if !look_first {
            if let Some(c) = run.creations.as_mut() {
                c.check_runs.push(external_id.clone());
            }
            ctx.runs.put(run).await.map_err(store_err)?;
        }
        let id = crate::comment::publish_check_run_with(
            ctx.github.as_ref(),
            inst,
            repo,
            &view.head_sha,
            &external_id,
            existing,
            &view,
            &run.reports,
            run.comment_url.as_deref(),
            look_first,
        )
        .await
        .map_err(|e| gh_err("publishing annotations", e))?;
        run.check_run_id = Some(id);
        run.check_run_sha = Some(view.head_sha.clone());
        ctx.runs.put(run).await.map_err(store_err)?;
        ctx.metrics.stage("annotations", "published");
    }
    run.unpublished = false;
    ctx.runs.put(run).await.map_err(store_err)?;
    Ok(())
}

/// Publishes a run whose stored state GitHub may not show yet ([`FixRun::unpublished`]):
/// the job that moved it stopped before its comment was edited. Called by whoever reads
/// the run next under its pull request's lock (a retried job, the reconcile pass).
pub(crate) async fn catch_up(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &mut FixRun,
) -> Result<(), JobError> {
    if run.unpublished {
        warn!(check = %run.check_name, "the run's last step was stored but not shown; publishing it now");
        publish(ctx, inst, repo, run).await?;
    }
    Ok(())
}

/// Applies a step of the loop the service took itself; the machine refuses it only when
/// the run moved on meanwhile, which is logged.
pub(crate) async fn moved(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &mut FixRun,
    event: machine::Event,
) -> Result<(), JobError> {
    if let Err(e) = apply(ctx, inst, repo, run, event, Replay::First).await? {
        warn!(check = %run.check_name, error = %e, "step not applied");
    }
    Ok(())
}

/// Whether the fix commit went to the pull request's own branch, so that the commit the
/// annotations check run is on is no longer the pull request's head. GitHub shows a pull
/// request the checks of its head only, so the check run is left as the approval left it
/// (approved, with a link to the comment): the push and the verdict are on the comment, and
/// writing them to a check run the pull request no longer shows would cost a request each.
/// A fix pushed to a new branch (a fork without maintainer edits) leaves the head where it
/// was, and its check run follows every step.
fn head_moved_on(run: &FixRun) -> bool {
    let to_the_pr = run.push_target.as_ref().is_some_and(|t| !t.new_branch);
    to_the_pr
        && matches!(
            run.state.stage,
            Stage::Pushed { .. }
                | Stage::Executed { .. }
                | Stage::CheckFailed { .. }
                | Stage::Stopped { .. }
                | Stage::NoVerdict { .. }
        )
}
