//! Handler: a pull request was closed or reopened. Closing it ends its runs; reopening it
//! opens again the proposals the close ended before anyone decided them, as long as they were
//! made for the commit that is still its head. Other actions change nothing.
//!
//! It never decides a proposal: the change goes through the proposal machine, which refuses
//! what does not apply.

use tracing::{info, warn};

use ci_medic_core::proposal::machine::Event;

use super::PullRequestChanged;
use crate::github::InstallationId;
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, store_err};

pub(crate) async fn pull_request_changed(
    ctx: &Context,
    p: PullRequestChanged,
) -> Result<(), JobError> {
    // A new head makes open proposals stale; their approval is refused against the new
    // head (see the machine). Closing the pull request ends its runs; reopening it opens
    // again the proposals the close ended before anyone decided them, as long as they
    // were made for the commit that is still its head.
    let event = match p.action.as_str() {
        "closed" => Event::Closed,
        "reopened" => Event::Reopened {
            head_sha: p.head_sha.clone(),
        },
        _ => {
            info!(repo = %p.repo, pr = p.number, action = %p.action, "pull request changed");
            return Ok(());
        }
    };
    let runs = ctx
        .runs
        .for_pull_request(&p.repo.full_name(), p.number)
        .await
        .map_err(store_err)?;
    for mut run in runs {
        let inst = InstallationId(run.installation_id);
        if let Err(e) = apply(ctx, inst, &p.repo, &mut run, event.clone(), Replay::First).await? {
            warn!(check = %run.check_name, error = %e, "pull request change not applied");
        }
    }
    info!(repo = %p.repo, pr = p.number, action = %p.action, "pull request changed");
    Ok(())
}
