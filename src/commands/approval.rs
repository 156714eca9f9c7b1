//! Handlers: `/approve` and `/reject`.
//!
//! A proposal is only ever approved by a human with the configured permission, for the commit
//! it was made for, while it is still `proposed` (spec: "never auto-approved"). An accepted
//! decision moves the proposal through the registry's compare-and-swap transition, so two
//! racing decisions cannot both win; an approval then queues the fix job and returns, so the
//! reaction and the reply come before the fix is written. A job that runs again after a crash
//! carries on with the proposal this very comment decided, and never decides another.

use tracing::{info, warn};

use ci_medic_core::comment as text;
use ci_medic_core::ids::FixDdsId;
use ci_medic_core::proposal::DdsStatus;
use ci_medic_core::proposal::machine::{Effect, Event, MachineError, Stage, decided_in};
use ci_medic_core::repo_config::RepoConfig;

use super::comment::Outcome;
use crate::commands::{AuthorRule, admit};
use crate::events::PrCommentCreated;
use crate::fix_agent::write::queue_fix;
use crate::git_agent::push::push_plan;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, publish, store_err};
use crate::store::runs::{FixRun, Phase};

/// `/approve`, of the proposal named or the newest open one on the pull request.
pub(super) async fn approve(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
    id: Option<FixDdsId>,
) -> Result<Outcome, JobError> {
    decide(ctx, inst, repo, c, config, id.map(|i| i.to_string()), None).await
}

/// `/reject`, with the reason given (if any).
pub(super) async fn reject(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
    id: Option<FixDdsId>,
    reason: Option<String>,
) -> Result<Outcome, JobError> {
    let id = id.map(|i| i.to_string());
    decide(ctx, inst, repo, c, config, id, Some(reason)).await
}

/// `/approve` (reason `None`) or `/reject` (reason `Some`).
async fn decide(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
    id: Option<String>,
    reject_reason: Option<Option<String>>,
) -> Result<Outcome, JobError> {
    let project = repo.full_name();
    let pr = match admit(ctx, inst, repo, c, config, "approval", AuthorRule::Applies).await? {
        Ok(pr) => pr,
        Err(refused) => return Ok(refused),
    };

    let runs = ctx
        .runs
        .for_pull_request(&project, c.pr_number)
        .await
        .map_err(store_err)?;
    // The job is running again (after a crash or a failed GitHub call) and this very
    // comment already decided a proposal: carry on with that one. Choosing afresh would
    // skip it (it is no longer open) and could decide another in the maintainer's name.
    let wanted = match reject_reason {
        None => DdsStatus::Approved,
        Some(_) => DdsStatus::Rejected,
    };
    for run in &runs {
        let Some(fix_id) = run.fix_id() else {
            continue;
        };
        if id.as_deref().is_some_and(|named| named != fix_id) {
            continue;
        }
        let decided_here = ctx
            .registry
            .get_fix(&fix_id)
            .await
            .map_err(store_err)?
            .is_some_and(|stored| {
                stored
                    .history
                    .iter()
                    .any(|t| t.to == wanted && decided_in(&t.reason, &c.html_url))
            });
        if decided_here {
            info!(fix = %fix_id, "this comment already decided the proposal; carrying on");
            return carry_out(ctx, inst, repo, run.clone(), config, c, reject_reason).await;
        }
    }

    // Which proposal: the one named, or the newest open one on this pull request.
    let mut run = match &id {
        Some(id) => match runs
            .into_iter()
            .find(|r| r.fix_id().as_deref() == Some(id.as_str()))
        {
            Some(r) => r,
            None => return Ok(Outcome::Refused(text::unknown_proposal_reply(id))),
        },
        None => match runs
            .into_iter()
            .filter(|r| r.phase() == Phase::Proposed)
            .max_by_key(|r| r.updated_at)
        {
            Some(r) => r,
            None => return Ok(Outcome::Refused(text::no_open_proposal_reply())),
        },
    };
    let fix_id = run.fix_id().expect("a run found by proposal has one");
    if reject_reason.is_none() {
        // Kept with the approval, so the fix job does not read the pull request again.
        let (target, read_from) = push_plan(repo, &pr, &fix_id);
        run.push_target = Some(target);
        run.read_from = Some(read_from.full_name());
    }
    let event = decision(c, &pr.head.sha, reject_reason.clone());
    match apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
        Ok(follow_ups) => {
            decided(ctx, &run, &fix_id, c);
            follow_up(ctx, inst, repo, run, config, follow_ups).await?;
            Ok(Outcome::Accepted(Some(decided_reply(
                &fix_id,
                c,
                &reject_reason,
            ))))
        }
        Err(MachineError::StaleHead {
            proposed_for, head, ..
        }) => {
            ctx.metrics.stage("approval", "refused_stale");
            Ok(Outcome::Refused(text::stale_reply(
                &fix_id,
                &proposed_for,
                &head,
            )))
        }
        Err(e) => {
            info!(fix = %fix_id, error = %e, "decision refused");
            // The run as stored now: a decision that lost the race shows the winner's.
            let current = ctx
                .runs
                .get(&project, run.pr_number, &run.check_name)
                .await
                .map_err(store_err)?
                .unwrap_or(run);
            Ok(Outcome::Refused(text::already_decided_reply(
                &fix_id,
                &current.state.status_view(),
            )))
        }
    }
}

/// Carries on with a decision this comment already made in the registry (a previous
/// attempt of this job stopped after it): records it on the run unless that attempt did,
/// publishes, and moves an approved fix on. Every step is idempotent.
async fn carry_out(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    config: &RepoConfig,
    c: &PrCommentCreated,
    reject_reason: Option<Option<String>>,
) -> Result<Outcome, JobError> {
    let fix_id = run.fix_id().expect("a decided run has a proposal");
    let reply = decided_reply(&fix_id, c, &reject_reason);
    if run.state.stage == Stage::Proposed {
        // The registry holds the decision, the run does not yet: the head it was taken
        // against is the proposal's own (it was checked then).
        let head = run.state.head_sha.clone();
        let event = decision(c, &head, reject_reason);
        match apply(ctx, inst, repo, &mut run, event, Replay::Resumed).await? {
            Ok(follow_ups) => {
                decided(ctx, &run, &fix_id, c);
                follow_up(ctx, inst, repo, run, config, follow_ups).await?;
            }
            Err(e) => warn!(fix = %fix_id, error = %e, "decision not carried out"),
        }
        return Ok(Outcome::Accepted(Some(reply)));
    }
    publish(ctx, inst, repo, &mut run).await?;
    if matches!(run.phase(), Phase::Approved { .. }) {
        queue_fix(ctx, inst, repo, run, config).await?;
    }
    Ok(Outcome::Accepted(Some(reply)))
}

/// Does what a step left to its caller: queues the approved fix's job, which runs once
/// this comment's job (its reaction and reply) is done.
async fn follow_up(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: FixRun,
    config: &RepoConfig,
    follow_ups: Vec<Effect>,
) -> Result<(), JobError> {
    if follow_ups.contains(&Effect::WriteFix) {
        queue_fix(ctx, inst, repo, run, config).await?;
    }
    Ok(())
}

fn decided(ctx: &Context, run: &FixRun, fix_id: &str, c: &PrCommentCreated) {
    let what = match run.state.stage {
        Stage::Rejected { .. } => "rejected",
        _ => "approved",
    };
    ctx.metrics.stage("approval", what);
    info!(fix = %fix_id, user = %c.author, phase = ?run.phase(), "proposal decided");
}

/// The machine's event for `/approve` (`reject_reason` `None`) or `/reject`.
fn decision(
    c: &PrCommentCreated,
    pr_head_sha: &str,
    reject_reason: Option<Option<String>>,
) -> Event {
    match reject_reason {
        None => Event::Approved {
            by: c.author.clone(),
            comment_url: c.html_url.clone(),
            pr_head_sha: pr_head_sha.to_string(),
        },
        Some(reason) => Event::Rejected {
            by: c.author.clone(),
            comment_url: c.html_url.clone(),
            reason,
            pr_head_sha: pr_head_sha.to_string(),
        },
    }
}

fn decided_reply(
    fix_id: &str,
    c: &PrCommentCreated,
    reject_reason: &Option<Option<String>>,
) -> String {
    match reject_reason {
        None => text::approved_reply(fix_id, &c.author),
        Some(_) => text::rejected_reply(fix_id, &c.author),
    }
}
