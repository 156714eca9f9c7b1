//! The executor's job: the sandbox build of an approved fix (`verify: docker`).
//!
//! The write-fix job prepares the fix commit (objects only, nothing pushed) and queues a
//! [`JobKind::VerifyFix`] for it under a key of its own. That job builds the proposal's commit
//! with the prepared commit's files in the Docker sandbox while holding no pull request's lock,
//! so other events for the pull request go on meanwhile. Then, under the lock, it reads the run
//! again, and its verdict goes through the proposal machine: [`Event::SandboxPassed`] lets the
//! fix loop push that very commit, [`Event::PatchRefused`] (rule `sandbox_build`) ends it.
//!
//! It never pushes a commit other than the one it built, and never decides for a run that
//! moved on while it built (another approval, a refusal, a closed pull request).

use chrono::Utc;
use tracing::info;

use ci_medic_core::formatter::format_report_line;
use ci_medic_core::proposal::machine::Event;
use ci_medic_core::repo_config::RepoConfig;

use crate::fix_agent::write::{Refusal, advance_approved, refuse, reported_files};
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, Replay, apply, gh_err, job_id, store_err};
use crate::store::JobKind;
use crate::store::runs::{FixRun, Phase};

/// Whether `run` waits for the sandbox's verdict on its prepared commit `commit`.
fn awaits_sandbox(run: &FixRun, commit: &str) -> bool {
    matches!(run.phase(), Phase::Approved { .. })
        && run.pending_commit.as_deref() == Some(commit)
        && run.state.sandbox_passed.as_deref() != Some(commit)
}

/// Queues the sandbox build of the run's prepared commit, once per commit; builds it here
/// when no queue is attached (a handler used on its own).
pub(crate) async fn queue_verify(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: FixRun,
    commit: &str,
    config: &RepoConfig,
) -> Result<(), JobError> {
    let Some(queue) = ctx.queue() else {
        let outcome = build_in_sandbox(ctx, inst, repo, &run, commit, config).await?;
        return sandbox_verdict(ctx, inst, repo, run, commit, config, outcome).await;
    };
    let job = crate::jobs::InternalJob {
        // Not the pull request's key: its other jobs do not wait for the build.
        key: format!("{}#{}/sandbox", run.repo, run.pr_number),
        id: format!("verify-{}-{commit}", job_id(&run)),
        kind: JobKind::VerifyFix {
            repo: run.repo.clone(),
            pr: run.pr_number,
            check: run.check_name.clone(),
            commit: commit.to_string(),
        },
    };
    info!(check = %run.check_name, commit = %commit, "sandbox build queued");
    crate::jobs::enqueue(queue, job).await.map_err(store_err)?;
    Ok(())
}

/// The sandbox job: builds the prepared commit without the pull request's lock, then
/// takes it to apply the verdict to the run as it is by then.
pub(crate) async fn verify_fix(
    ctx: &Context,
    repo: &str,
    pr: u64,
    check: &str,
    commit: &str,
) -> Result<(), JobError> {
    let Some(run) = ctx.runs.get(repo, pr, check).await.map_err(store_err)? else {
        return Ok(());
    };
    if !awaits_sandbox(&run, commit) {
        info!(check = %run.check_name, commit = %commit, "no prepared fix waits for this build");
        return Ok(());
    }
    let Some(repo_ref) = RepoRef::parse(&run.repo) else {
        return Ok(());
    };
    let inst = InstallationId(run.installation_id);
    let (config, _) = ctx.repo_config(inst, &repo_ref).await?;
    let outcome = build_in_sandbox(ctx, inst, &repo_ref, &run, commit, &config).await?;
    let _held = ctx.pr_locks.lock(repo, pr).await;
    // Read again under the lock: the run may have moved on while it built.
    let Some(run) = ctx.runs.get(repo, pr, check).await.map_err(store_err)? else {
        return Ok(());
    };
    if !awaits_sandbox(&run, commit) {
        info!(check = %run.check_name, commit = %commit, "the run moved on during the sandbox build");
        return Ok(());
    }
    sandbox_verdict(ctx, inst, &repo_ref, run, commit, &config, outcome).await
}

/// Applies the sandbox's verdict on `commit` through the machine; a pass goes on to the
/// push. The caller holds the pull request's lock.
async fn sandbox_verdict(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    commit: &str,
    config: &RepoConfig,
    outcome: Option<Refusal>,
) -> Result<(), JobError> {
    let Some(fix_id) = run.fix_id() else {
        return Ok(());
    };
    if let Some(refusal) = outcome {
        // The prepared commit is never pushed; the next approval writes another.
        run.pending_commit = None;
        return refuse(ctx, inst, repo, run, &fix_id, refusal).await;
    }
    let event = Event::SandboxPassed {
        commit_sha: commit.to_string(),
    };
    if let Err(e) = apply(ctx, inst, repo, &mut run, event, Replay::First).await? {
        info!(check = %run.check_name, error = %e, "sandbox verdict not applied");
        return Ok(());
    }
    // Boxed: the push path may come back here when no queue is attached.
    Box::pin(advance_approved(ctx, inst, repo, run, config)).await
}

/// Builds the proposal's commit with the prepared commit's files in the sandbox.
/// `Some(refusal)` when the build still shows an error the patch targeted, or cannot run.
async fn build_in_sandbox(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &FixRun,
    commit: &str,
    config: &RepoConfig,
) -> Result<Option<Refusal>, JobError> {
    use crate::executor::{
        ExecutionRequest, NetworkAccess, PlanOverrides, apply_files, resolve_plan,
        targeted_errors_remaining,
    };
    let refusal = |detail: String| {
        Ok(Some(Refusal {
            rule: "sandbox_build".into(),
            detail,
        }))
    };
    let Some(executor) = ctx.executor.clone() else {
        return refusal(
            "`verify: docker` is set but this ci-medic has no Docker engine; nothing was pushed"
                .into(),
        );
    };
    let read_from = &run
        .read_from
        .as_deref()
        .and_then(RepoRef::parse)
        .unwrap_or_else(|| repo.clone());
    // The files as the prepared commit has them, from the repository it was written to:
    // the build checks exactly what would be pushed.
    let written_to = run.push_target.as_ref().map_or(read_from, |t| &t.repo);
    let mut files: Vec<(String, String)> = Vec::new();
    for path in reported_files(run) {
        let Some(file) = ctx
            .github
            .get_file_content(inst, written_to, &path, commit)
            .await
            .map_err(|e| gh_err("reading the prepared fix", e))?
        else {
            continue;
        };
        // A link is never written by the fix (the guard leaves it), so it is left as is.
        if file.path != path {
            continue;
        }
        let text = String::from_utf8(file.content).map_err(|source| JobError::NotUtf8 {
            path: path.clone(),
            source,
        })?;
        files.push((path, text));
    }
    let (_cleanup, root) =
        fetch_tree(ctx, inst, read_from, run.proposed_for_sha(), "verify").await?;
    apply_files(&root, &files).map_err(|source| JobError::Unpack {
        what: "applying the patch",
        source,
    })?;
    let plan = match resolve_plan(&root, &config.executor, &PlanOverrides::default()) {
        Ok(p) => p,
        Err(e) => return refusal(format!("no build to verify with: {e}")),
    };
    let result = match executor
        .execute(ExecutionRequest::from_plan(
            root,
            plan,
            NetworkAccess::Disabled,
        ))
        .await
    {
        Ok(r) => r,
        Err(e) => return refusal(format!("the sandbox build could not run: {e}")),
    };
    let after = ci_medic_parser::parse_str(
        &result.build_log,
        &ci_medic_parser::ParseOptions::with_workspace("/workspace"),
    );
    let remaining = targeted_errors_remaining(&run.reports, &after);
    info!(
        exit_code = result.exit_code,
        remaining = remaining.len(),
        seconds = result.execution_time_seconds,
        "sandbox build verified"
    );
    if result.timed_out {
        return refusal("the sandbox build timed out".into());
    }
    if remaining.is_empty() {
        ctx.metrics.stage("verify", "passed");
        Ok(None)
    } else {
        ctx.metrics.stage("verify", "failed");
        refusal(format!(
            "the patched build still shows {} targeted error(s): {}",
            remaining.len(),
            remaining
                .iter()
                .map(format_report_line)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    }
}

/// The repository's tree at `sha`, extracted safely into a scratch directory that is
/// removed when the returned guard drops; the second value is the tree's root. The sandbox
/// build and the fix agent's tool tier both work on it.
pub(crate) async fn fetch_tree(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    sha: &str,
    purpose: &str,
) -> Result<(RemoveOnDrop, std::path::PathBuf), JobError> {
    let dir = std::env::temp_dir().join(format!(
        "ci-medic-{purpose}-{}-{}",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).map_err(JobError::Workspace)?;
    let cleanup = RemoveOnDrop(dir.clone());
    let tarball = dir.join("source.tar.gz");
    ctx.github
        .download_tarball(inst, repo, sha, &tarball, 512 << 20)
        .await
        .map_err(|e| gh_err("downloading the repository tarball", e))?;
    let file = std::fs::File::open(&tarball).map_err(JobError::Workspace)?;
    let root =
        crate::executor::extract_tarball_safely(std::io::BufReader::new(file), &dir.join("ws"))
            .map_err(|source| JobError::Unpack {
                what: "unsafe or broken tarball",
                source,
            })?;
    Ok((cleanup, root))
}

/// Removes a scratch directory however the work on it ends.
pub(crate) struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
