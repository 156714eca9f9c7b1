//! Handler: a check finished on the repository's default branch (a push to it, not a pull
//! request). Its per-test outcomes are recorded for the triage's flaky evidence: a failed
//! check's log is read and parsed, and the tests it names are recorded failing at that commit;
//! a passing check records a pass, at that commit, for every test recorded failing in it
//! before. A test that failed between two such passes is then called flaky when it fails on a
//! pull request, with the commits named (`ci_medic_triage`'s `MixedOnDefaultBranch`).
//!
//! It never comments, never creates a check run and never proposes anything: nobody asked for
//! a fix on the default branch. A log that cannot be read (expired, too large) records nothing.

use tracing::info;

use ci_medic_parser::ParseOptions;

use crate::events::CheckRunCompleted;
use crate::github::InstallationId;
use crate::jobs::JobError;
use crate::log_source::{LogError, LogSource, fetch_log};
use crate::orchestrator::{Context, gh_err, store_err};

pub(crate) async fn default_branch_check(
    ctx: &Context,
    cr: &CheckRunCompleted,
) -> Result<(), JobError> {
    let project = cr.repo.full_name();
    let failed = match cr.conclusion.as_deref() {
        Some("success") => false,
        Some("failure" | "timed_out") => true,
        // Cancelled, skipped, neutral: nothing ran to its end.
        _ => return Ok(()),
    };
    let Some(inst) = cr.installation_id.map(InstallationId) else {
        return Err(JobError::NoInstallation);
    };
    if !failed {
        let passed = ctx
            .shared
            .record_default_branch_pass(&project, &cr.name, &cr.head_sha)
            .await
            .map_err(store_err)?;
        info!(check = %cr.name, sha = %cr.head_sha, tests = passed, "default branch: test passes recorded");
        return Ok(());
    }
    let (config, _) = ctx.repo_config(inst, &cr.repo).await?;
    if !config.enabled || !config.check_selected(&cr.name) {
        return Ok(());
    }
    let source = LogSource::of(cr.app_slug.as_deref(), cr.check_run_id);
    let (tee, parsing) = crate::parser::spawn_streaming_triaged(ParseOptions::default());
    let fetched = fetch_log(
        ctx.github.as_ref(),
        inst,
        &cr.repo,
        source,
        ctx.log_limits,
        Some(&tee),
    )
    .await;
    drop(tee);
    match fetched {
        Ok(_) => {}
        Err(e @ (LogError::Expired | LogError::NotFound | LogError::TooLarge { .. })) => {
            info!(check = %cr.name, reason = %e, "default branch: no log to record tests from");
            return Ok(());
        }
        Err(LogError::Api(e)) => return Err(gh_err("downloading the logs", e)),
    }
    let (parsed, _) = parsing.await.map_err(|source| JobError::Task {
        what: "parser task",
        source,
    })?;
    let tests = ci_medic_triage::failed_tests(&parsed.reports);
    let recorded = ctx
        .shared
        .record_failures(&project, &cr.name, &cr.head_sha, true, &tests)
        .await
        .map_err(store_err)?;
    info!(check = %cr.name, sha = %cr.head_sha, tests = tests.len(), recorded, "default branch: test failures recorded");
    Ok(())
}
