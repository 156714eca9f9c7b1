//! Handler: the App was installed, changed or uninstalled. Records where ci-medic is
//! installed, and forgets the pending work of repositories it no longer is.
//!
//! It never reads a repository: the payload lists what changed.

use tracing::{info, warn};

use ci_medic_core::proposal::machine::Event;

use super::InstallationChanged;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, store_err};

pub(crate) async fn installation_changed(
    ctx: &Context,
    i: InstallationChanged,
) -> Result<(), JobError> {
    // Recorded so ci-medic knows where it is installed; a deleted installation also
    // forgets the repositories recorded earlier that this payload does not list.
    let installations = &ctx.shared;
    let deleted = i.action == "deleted";
    let mut removed = i.removed.clone();
    if deleted
        && let Some(prev) = installations
            .installation(i.installation_id)
            .await
            .map_err(store_err)?
    {
        removed.extend(
            prev.repositories
                .into_iter()
                .filter(|r| !i.removed.contains(r)),
        );
    }
    installations
        .apply_installation(
            i.installation_id,
            i.account.as_deref(),
            deleted,
            &i.added,
            &removed,
        )
        .await
        .map_err(store_err)?;
    // Uninstalled repositories: their pending work is forgotten.
    for name in &removed {
        let Some(repo) = RepoRef::parse(name) else {
            continue;
        };
        for mut run in ctx.runs.for_repo(name).await.map_err(store_err)? {
            let inst = InstallationId(run.installation_id);
            if let Err(e) = apply(
                ctx,
                inst,
                &repo,
                &mut run,
                Event::Uninstalled,
                Replay::First,
            )
            .await?
            {
                warn!(check = %run.check_name, error = %e, "uninstall not applied");
            }
        }
    }
    info!(installation = i.installation_id, action = %i.action, added = i.added.len(), removed = removed.len(), "installation changed");
    Ok(())
}
