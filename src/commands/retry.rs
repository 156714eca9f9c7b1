//! Handler: `/retry`. Analyses again the latest failure of each of the pull request's checks,
//! as it stands on the pull request's head now.
//!
//! It never re-analyses a run whose approved fix is being written or checked by CI (that would
//! put the proposal back to `proposed` under it).

use ci_medic_core::comment as text;
use ci_medic_core::repo_config::RepoConfig;

use super::comment::Outcome;
use crate::commands::{AuthorRule, admit};
use crate::events::analysis::analyse;
use crate::events::{CheckRunCompleted, PrCommentCreated};
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, gh_err, store_err};
use crate::store::runs::Phase;

/// `/retry`: analyse the latest failure of each of this pull request's checks again.
pub(super) async fn retry(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
) -> Result<Outcome, JobError> {
    let gh = ctx.github.as_ref();
    // The pull request's author may ask for a new reading of their own failure.
    let pr = match admit(ctx, inst, repo, c, config, "retry", AuthorRule::Exempt).await? {
        Ok(pr) => pr,
        Err(refused) => return Ok(refused),
    };
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
