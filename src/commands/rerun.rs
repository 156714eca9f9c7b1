//! Handler: `/rerun`. Re-runs the failed GitHub Actions jobs of every failure on the pull
//! request that ci-medic found not to be the code's; the CI monitor reports the new attempt's
//! result on the same comment.
//!
//! Permission-checked exactly like `/approve` (a re-run spends the repository's CI), and asked
//! of the proposal machine before GitHub: a re-run the machine refuses never reaches the API.

use chrono::Utc;
use tracing::{info, warn};

use ci_medic_core::comment as text;
use ci_medic_core::proposal::machine::{Event, step};
use ci_medic_core::repo_config::RepoConfig;

use super::comment::Outcome;
use crate::commands::{AuthorRule, admit};
use crate::events::PrCommentCreated;
use crate::github::{GitHubError, InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, gh_err, store_err};
use crate::store::runs::FixRun;

/// `/rerun`: re-runs the failed Actions jobs of every failure on this pull request that is
/// not the code's and waits for a person (the machine says which may be re-run).
pub(super) async fn rerun(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
) -> Result<Outcome, JobError> {
    let gh = ctx.github.as_ref();
    // The same rule as `/approve`: a re-run spends the repository's CI.
    let pr = match admit(ctx, inst, repo, c, config, "rerun", AuthorRule::Applies).await? {
        Ok(pr) => pr,
        Err(refused) => return Ok(refused),
    };
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
