//! Maintainer commands on a pull request: `/approve`, `/reject`, `/retry`, `/rerun`, `/help`.
//!
//! `/rerun` is permission-checked exactly like `/approve`, and re-runs the failed GitHub
//! Actions jobs of failures ci-medic found not to be the code's; the CI monitor reports the new
//! attempt's result on the same comment.
//!
//! A proposal is only ever approved by a human with the configured permission, for the commit
//! it was made for, while it is still `proposed` (spec: "never auto-approved"). Every accepted
//! command gets a reaction and moves the proposal through the registry's compare-and-swap
//! transition, so two racing decisions cannot both win. A refused command gets a reaction and
//! one reply saying why, and changes nothing. At most one reply is posted per comment.

use tracing::{info, warn};

use chrono::Utc;
use ci_medic_core::commands::{Command, CommandError, help_text, parse_commands, usage_reply};
use ci_medic_core::comment as text;
use ci_medic_core::proposal::DdsStatus;
use ci_medic_core::proposal::machine::{Effect, Event, MachineError, Stage, decided_in, step};
use ci_medic_core::repo_config::RepoConfig;

use super::fix_loop::{push_plan, queue_fix};
use super::{Context, Replay, apply, gh_err, publish, store_err};
use crate::commands::{Refusal, authorize};
use crate::events::analysis::analyse;
use crate::events::{CheckRunCompleted, PrCommentCreated};
use crate::github::{GitHubError, InstallationId, ReactionContent, RepoRef};
use crate::jobs::JobError;
use crate::store::runs::{FixRun, Phase};

/// What one command did.
enum Outcome {
    Accepted(Option<String>),
    Refused(String),
}

pub(super) async fn comment_created(ctx: &Context, c: PrCommentCreated) -> Result<(), JobError> {
    if c.author_is_bot {
        return Ok(());
    }
    let parsed = parse_commands(&c.body);
    if parsed.is_empty() {
        return Ok(());
    }
    let Some(inst) = c.installation_id.map(InstallationId) else {
        return Err(JobError::Permanent("delivery has no installation".into()));
    };
    let repo = c.repo.clone();
    let gh = ctx.github.as_ref();

    let mut replies = Vec::new();
    let mut refused = false;
    let mut accepted = false;
    let errors: Vec<CommandError> = parsed
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect();
    if !errors.is_empty() {
        replies.push(usage_reply(&errors));
        refused = true;
    }
    let commands: Vec<Command> = parsed.into_iter().filter_map(Result::ok).collect();
    if !commands.is_empty() {
        let (config, _) = ctx.repo_config(inst, &repo).await?;
        for cmd in commands {
            let outcome = match cmd {
                Command::Help => Outcome::Accepted(Some(help_text())),
                Command::Approve { id } => {
                    decide(
                        ctx,
                        inst,
                        &repo,
                        &c,
                        &config,
                        id.map(|i| i.to_string()),
                        None,
                    )
                    .await?
                }
                Command::Reject { id, reason } => {
                    decide(
                        ctx,
                        inst,
                        &repo,
                        &c,
                        &config,
                        id.map(|i| i.to_string()),
                        Some(reason),
                    )
                    .await?
                }
                Command::Retry => retry(ctx, inst, &repo, &c, &config).await?,
                Command::Rerun => rerun(ctx, inst, &repo, &c, &config).await?,
            };
            match outcome {
                Outcome::Accepted(reply) => {
                    accepted = true;
                    replies.extend(reply);
                }
                Outcome::Refused(reply) => {
                    refused = true;
                    replies.push(reply);
                }
            }
        }
    }

    let reaction = if refused && !accepted {
        ReactionContent::Confused
    } else {
        ReactionContent::PlusOne
    };
    gh.create_issue_comment_reaction(inst, &repo, c.comment_id, reaction)
        .await
        .map_err(|e| gh_err("reacting to the comment", e))?;
    if !replies.is_empty() {
        // One reply per comment. A retried job must not post it twice: the reply carries
        // a marker naming the comment, and when a reply was asked for before (its answer
        // may have been lost) an existing one with the marker is reused. A reply never
        // asked for is recorded, then posted without listing the comments.
        let marker = format!("<!-- ci-medic:reply-to={} -->", c.comment_id);
        let project = repo.full_name();
        let asked = ctx
            .shared
            .reply_asked(&project, c.comment_id)
            .await
            .map_err(store_err)?;
        let exists = asked && {
            let existing = gh
                .list_issue_comments(inst, &repo, c.pr_number)
                .await
                .map_err(|e| gh_err("listing comments", e))?;
            // Only our own comment counts: anyone can type the marker.
            existing.iter().any(|x| {
                crate::comment::is_ours(x, ctx.app_id)
                    && x.body.as_deref().is_some_and(|b| b.contains(&marker))
            })
        };
        if !exists {
            if !asked {
                ctx.shared
                    .mark_reply_asked(&project, c.comment_id)
                    .await
                    .map_err(store_err)?;
            }
            let body = format!("{marker}\n{}", replies.join("\n\n---\n\n"));
            gh.create_issue_comment(inst, &repo, c.pr_number, &body)
                .await
                .map_err(|e| gh_err("replying to the comment", e))?;
        }
    }
    Ok(())
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
    let gh = ctx.github.as_ref();
    let project = repo.full_name();
    let pr = gh
        .get_pull_request(inst, repo, c.pr_number)
        .await
        .map_err(|e| gh_err("reading the pull request", e))?;

    match authorize(
        gh,
        inst,
        repo,
        &config.approvers,
        &c.author,
        pr.user.as_ref().map(|u| u.login.as_str()),
    )
    .await
    .map_err(|e| gh_err("reading the commenter's permission", e))?
    {
        Ok(()) => {}
        Err(r) => {
            ctx.metrics.stage("approval", "refused_permission");
            info!(user = %c.author, refusal = ?r, "command refused");
            return Ok(Outcome::Refused(refusal_reply(&c.author, r)));
        }
    }

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

/// `/rerun`: re-runs the failed Actions jobs of every failure on this pull request that is
/// not the code's and waits for a person (the machine says which may be re-run).
async fn rerun(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
) -> Result<Outcome, JobError> {
    let gh = ctx.github.as_ref();
    let pr = gh
        .get_pull_request(inst, repo, c.pr_number)
        .await
        .map_err(|e| gh_err("reading the pull request", e))?;
    // The same rule as `/approve`: a re-run spends the repository's CI.
    if let Err(r) = authorize(
        gh,
        inst,
        repo,
        &config.approvers,
        &c.author,
        pr.user.as_ref().map(|u| u.login.as_str()),
    )
    .await
    .map_err(|e| gh_err("reading the commenter's permission", e))?
    {
        ctx.metrics.stage("rerun", "refused_permission");
        info!(user = %c.author, refusal = ?r, "/rerun refused");
        return Ok(Outcome::Refused(refusal_reply(&c.author, r)));
    }
    let runs: Vec<FixRun> = ctx
        .runs
        .for_pull_request(&repo.full_name(), c.pr_number)
        .await
        .map_err(store_err)?
        .into_iter()
        .filter(|r| r.state.not_code.is_some())
        .collect();
    if runs.is_empty() {
        return Ok(Outcome::Refused(text::nothing_to_rerun_reply()));
    }
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for mut run in runs {
        let event = Event::RerunRequested {
            by: Some(c.author.clone()),
            comment_url: Some(c.html_url.clone()),
            pr_head_sha: pr.head.sha.clone(),
        };
        // Asked of the machine before GitHub: a refused re-run must not reach the API.
        if let Err(e) = step(&run.state, event.clone(), Utc::now()) {
            refused.push(text::rerun_refused_reply(&e.to_string()));
            continue;
        }
        let Some(run_id) = run.state.not_code.as_ref().and_then(|n| n.actions_run_id) else {
            continue;
        };
        match gh.rerun_failed_jobs(inst, repo, run_id).await {
            Ok(()) => {}
            Err(GitHubError::Forbidden { message }) => {
                refused.push(text::rerun_refused_reply(&format!(
                    "GitHub refused to re-run `{}`: {message}",
                    run.check_name
                )));
                continue;
            }
            Err(e) => return Err(gh_err("re-running the failed jobs", e)),
        }
        ctx.metrics.rerun_requested("command");
        info!(check = %run.check_name, run_id, user = %c.author, "failed jobs re-run");
        if let Err(e) = apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
            warn!(check = %run.check_name, error = %e, "re-run not recorded");
        }
        accepted.push(text::rerun_reply(&run.check_name));
    }
    if accepted.is_empty() {
        return Ok(Outcome::Refused(refused.join("\n")));
    }
    accepted.extend(refused);
    Ok(Outcome::Accepted(Some(accepted.join("\n"))))
}

/// `/retry`: analyse the latest failure of each of this pull request's checks again.
async fn retry(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
) -> Result<Outcome, JobError> {
    let gh = ctx.github.as_ref();
    let pr = gh
        .get_pull_request(inst, repo, c.pr_number)
        .await
        .map_err(|e| gh_err("reading the pull request", e))?;
    if let Err(r) = authorize(gh, inst, repo, &config.approvers, &c.author, None)
        .await
        .map_err(|e| gh_err("reading the commenter's permission", e))?
    {
        return Ok(Outcome::Refused(refusal_reply(&c.author, r)));
    }
    let runs = ctx
        .runs
        .for_pull_request(&repo.full_name(), c.pr_number)
        .await
        .map_err(store_err)?;
    let mut replies = Vec::new();
    for run in runs {
        if matches!(run.phase(), Phase::Approved { .. } | Phase::Pushed { .. }) {
            // Re-analysing would put the proposal back to `proposed` under a fix that is
            // being written or checked by CI.
            let fix = run.fix_id().unwrap_or_default();
            replies.push(text::retry_busy_reply(&run.check_name, &fix));
            continue;
        }
        // The check as it stands on the pull request's head now, not the failure the run
        // last saw (which may be on an older commit).
        let checks = gh
            .list_check_runs_for_ref(inst, repo, &pr.head.sha, Some(&run.check_name))
            .await
            .map_err(|e| gh_err("listing the check runs", e))?;
        let latest = crate::ci_monitor::completed_run(&checks, &run.check_name, &pr.head.sha)
            .map(|check| CheckRunCompleted::from_api(c.repo.clone(), inst.0, check, c.pr_number));
        let Some(cr) = latest.filter(|cr| {
            crate::ci_monitor::classify(cr.conclusion.as_deref())
                == crate::ci_monitor::Verdict::Failed
        }) else {
            replies.push(text::retry_not_failing_reply(&run.check_name, &pr.head.sha));
            continue;
        };
        analyse(ctx, inst, repo, pr.number, &cr, config, None).await?;
        replies.push(text::retry_reply(&cr.name));
    }
    if replies.is_empty() {
        return Ok(Outcome::Refused(text::nothing_to_retry_reply()));
    }
    Ok(Outcome::Accepted(Some(replies.join("\n"))))
}

/// The reply to a command from someone who may not give it.
fn refusal_reply(author: &str, r: Refusal) -> String {
    match r {
        Refusal::Permission { has, needs } => text::not_permitted_reply(author, has, needs),
        Refusal::NotListed => text::not_an_approver_reply(author),
        Refusal::Author => text::author_not_allowed_reply(),
    }
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
