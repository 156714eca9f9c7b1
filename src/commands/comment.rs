//! Handler: a comment on a pull request. Parses its commands, runs each command's handler
//! (`/approve` and `/reject` in `approval`, `/retry`, `/rerun`, `/help`), then reacts once and
//! posts at most one reply for the whole comment.
//!
//! A refused command gets a reaction and one reply saying why, and changes nothing. It never
//! answers a bot's comment, and never posts a second reply to the same comment, also when the
//! job runs again after a crash.

use ci_medic_core::commands::{Command, CommandError, help_text, parse_commands, usage_reply};

use super::approval::{approve, reject};
use super::rerun::rerun;
use super::retry::retry;
use crate::events::PrCommentCreated;
use crate::github::{InstallationId, ReactionContent};
use crate::jobs::JobError;
use crate::orchestrator::{Context, gh_err, store_err};

/// What one command did.
pub(super) enum Outcome {
    Accepted(Option<String>),
    Refused(String),
}

pub(crate) async fn comment_created(ctx: &Context, c: PrCommentCreated) -> Result<(), JobError> {
    if c.author_is_bot {
        return Ok(());
    }
    let parsed = parse_commands(&c.body);
    if parsed.is_empty() {
        return Ok(());
    }
    let Some(inst) = c.installation_id.map(InstallationId) else {
        return Err(JobError::NoInstallation);
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
                Command::Help => help(),
                Command::Approve { id } => approve(ctx, inst, &repo, &c, &config, id).await?,
                Command::Reject { id, reason } => {
                    reject(ctx, inst, &repo, &c, &config, id, reason).await?
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

/// `/help`: the commands and what they do; changes nothing.
fn help() -> Outcome {
    Outcome::Accepted(Some(help_text()))
}
