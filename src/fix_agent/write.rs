//! The fix agent's job: writes the approved fix. The fix agent (built-in fixers, the tool
//! tier, the LLM) writes a candidate per report, each guarded on its own, then the whole patch
//! is guarded; the git agent prepares the commit (objects only), which is stored in the run
//! before anything else happens. With `verify: docker` the executor's job builds it in the
//! sandbox first (`crate::executor::verify_job`); then the git agent pushes it
//! (`crate::git_agent::push`), and the CI monitor (`crate::ci_monitor`) takes over.
//!
//! Each step is stored in the run before the next begins: the prepared commit before the ref
//! moves, the pushed commit before the comment says so. A run found `Approved` at start-up (or
//! by the CI monitor's periodic reconcile) is moved on from where it stopped. It never pushes a
//! patch the guard refused, and never writes a fix for a run that is no longer approved.

use tracing::{info, warn};

use ci_medic_core::fix_check::{
    Candidate, FileChange, FixInput, GuardPolicy, PreviousAttempt, check_patch, fix_deterministic,
    source_text,
};
use ci_medic_core::formatter::format_report_line;
use ci_medic_core::proposal::machine::Event;
use ci_medic_core::repo_config::{RepoConfig, VerifyMode};

use super::Proposal;
use crate::executor::verify_job::{RemoveOnDrop, fetch_tree, queue_verify};
use crate::git_agent::push::{push_fix, push_plan};
use crate::git_agent::{GitAgent, GitAgentError, KnownTree, PathKind, entry_in, tree_entry};
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, catch_up, gh_err, job_id, moved, store_err};
use crate::store::JobKind;
use crate::store::runs::{FixRun, Phase};

/// Why the loop stopped before pushing.
pub(crate) struct Refusal {
    pub(crate) rule: String,
    pub(crate) detail: String,
}

/// A guarded patch ready for the git agent.
struct WrittenPatch {
    changes: Vec<FileChange>,
    /// The proposal commit's tree and the modes of the files read from it.
    tree: KnownTree,
    /// Every fix's reason, and what was left alone and why: the commit message's body.
    reason: String,
    /// The fixers whose patches went in, in order, each once.
    fixers: Vec<String>,
}

impl WrittenPatch {
    /// What the next attempt must not repeat if CI still fails on this patch: its fixers, and
    /// its content when it changed one file (the only case a next patch can be compared with).
    fn attempt(&self) -> PreviousAttempt {
        PreviousAttempt {
            fixer: (!self.fixers.is_empty()).then(|| self.fixers.join(", ")),
            fix_reason: self.reason.clone(),
            failure: String::new(),
            patched_content: match self.changes.as_slice() {
                [one] => Some(one.after.clone()),
                _ => None,
            },
        }
    }
}

/// Moves an approved run to a pushed commit (or to a refusal on the comment).
pub(crate) async fn advance_approved(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    config: &RepoConfig,
) -> Result<(), JobError> {
    let gh = ctx.github.as_ref();
    let Some(fix_id) = run.fix_id() else {
        return Ok(());
    };
    // Where to push and where to read from, as the approval recorded them; read from the
    // pull request for a run approved before they were recorded.
    let recorded = run.read_from.as_deref().and_then(RepoRef::parse);
    let (target, read_from) = match (run.push_target.clone(), recorded) {
        (Some(target), Some(read_from)) => (target, read_from),
        (known, _) => {
            let pr = gh
                .get_pull_request(inst, repo, run.pr_number)
                .await
                .map_err(|e| gh_err("reading the pull request", e))?;
            let (target, read_from) = push_plan(repo, &pr, &fix_id);
            (known.unwrap_or(target), read_from)
        }
    };
    let parent = run.proposed_for_sha().to_string();
    let agent = GitAgent { gh, inst };

    let (commit, files) = match run.pending_commit.clone() {
        Some(c) => (c, reported_files(&run)),
        None => match write_patch(ctx, inst, &read_from, &run, &fix_id, config).await? {
            Err(refusal) => return refuse(ctx, inst, repo, run, &fix_id, refusal).await,
            Ok(patch) => {
                let files: Vec<(String, String)> = patch
                    .changes
                    .iter()
                    .map(|c| (c.path.clone(), c.after.clone()))
                    .collect();
                let message = commit_message(&run, &fix_id, &patch.reason);
                let commit = match agent
                    .prepare(&target, &parent, &files, &message, Some(&patch.tree))
                    .await
                {
                    Ok(c) => c,
                    Err(GitAgentError::GitHub(e)) => {
                        return Err(gh_err("writing the fix commit", e));
                    }
                    Err(e @ GitAgentError::NotARegularFile { .. }) => {
                        let refusal = Refusal {
                            rule: "file_mode".into(),
                            detail: e.to_string(),
                        };
                        return refuse(ctx, inst, repo, run, &fix_id, refusal).await;
                    }
                    Err(e) => {
                        return Err(JobError::GitAgent {
                            what: "writing the fix commit",
                            source: e,
                        });
                    }
                };
                run.pending_commit = Some(commit.clone());
                run.push_target = Some(target.clone());
                run.previous_attempt = Some(patch.attempt());
                ctx.runs.put(&mut run).await.map_err(store_err)?;
                (commit, files.into_iter().map(|(p, _)| p).collect())
            }
        },
    };

    if config.verify == VerifyMode::Docker
        && run.state.sandbox_passed.as_deref() != Some(commit.as_str())
    {
        // Built in the sandbox by a job of its own, which holds no lock while it builds;
        // its verdict comes back through the machine and pushes this very commit.
        return queue_verify(ctx, inst, repo, run, &commit, config).await;
    }
    push_fix(ctx, inst, repo, run, &target, commit, files).await
}

/// Runs the fix agent on every allowed report, each candidate guarded on its own (a refused
/// one is skipped and the next fixer, or the LLM, gets its turn), then guards the whole
/// patch. Files that are not regular UTF-8 files are left alone with the reason.
async fn write_patch(
    ctx: &Context,
    inst: InstallationId,
    read_from: &RepoRef,
    run: &FixRun,
    fix_id: &str,
    config: &RepoConfig,
) -> Result<Result<WrittenPatch, Refusal>, JobError> {
    let gh = ctx.github.as_ref();
    // The tool tier runs in the images the default branch's `fixers.images` names.
    let fix_agent = ctx.fix_agent.for_repo(&config.fixers);
    let stored = ctx
        .registry
        .get_fix(fix_id)
        .await
        .map_err(store_err)?
        .ok_or_else(|| JobError::MissingProposal {
            fix_id: fix_id.to_string(),
        })?;
    let allowed = &stored.dds.allowed_paths;
    let mut by_file: Vec<(String, Vec<ci_medic_parser::BugReport>)> = Vec::new();
    for r in run
        .reports
        .iter()
        .filter(|r| allowed.contains(&r.file_path))
    {
        match by_file.iter_mut().find(|(p, _)| *p == r.file_path) {
            Some((_, v)) => v.push(r.clone()),
            None => by_file.push((r.file_path.clone(), vec![r.clone()])),
        }
    }
    if by_file.is_empty() {
        return Ok(Err(Refusal {
            rule: "allowed_paths".into(),
            detail: "no reported error is in a file this proposal may change".into(),
        }));
    }
    let policy = GuardPolicy {
        whole_file_formatting: Vec::new(),
        formatter_hunks: Vec::new(),
        allowed_paths: stored.dds.allowed_paths.clone(),
        protected_paths: config.constraints.protected_paths.clone(),
        do_not_touch: config.constraints.do_not_touch.clone(),
        max_files_changed: stored.dds.constraints.max_files_changed,
        no_new_dependencies: stored.dds.constraints.no_new_dependencies,
        allowed_dependencies: config.constraints.allowed_dependencies.clone(),
        confidence_threshold: config.fix.confidence_threshold,
        reported_lines: run
            .reports
            .iter()
            .map(|r| (r.file_path.clone(), r.line_number))
            .collect(),
    };
    let mut changes = Vec::new();
    let mut reasons = Vec::new();
    let mut confidence: f64 = 1.0;
    // The fixers whose patches went in, in order, each once.
    let mut fixers: Vec<String> = Vec::new();
    // The first candidate the guard refused: what the comment names when nothing is left.
    let mut rejected: Option<Refusal> = None;
    // Files left alone, each with why: a maintainer reads these on the comment.
    let mut declined: Vec<String> = Vec::new();
    let mut modes = Vec::new();
    // The whole tree in one request, rather than one per directory of every path. GitHub
    // resolves a commit sha given as the tree (any tree-ish, as `git` does) and answers
    // with the tree's own sha: no request to read the commit first.
    let whole = gh
        .get_git_tree_recursive(inst, read_from, run.proposed_for_sha())
        .await
        .map_err(|e| gh_err("reading the tree of the files to fix", e))?;
    let tree = whole.sha;
    let listing = (!whole.truncated).then_some(whole.tree);
    // The tool tier runs the project's own tools on the tree at the proposal's commit:
    // fetched once, and only when a report reaches the tool tier (no built-in fixer had an
    // acceptable patch for a report a tool repairs), so other fixes cost no download.
    let mut tool_notes = crate::fix_agent::ToolNotes::default();
    let mut scratch: Option<(RemoveOnDrop, std::path::PathBuf)> = None;
    let mut fetch_failed = false;
    // The guard of the whole patch: widened for each file a formatter reformatted as the
    // check asked, exactly as each candidate's was.
    let mut final_policy = policy.clone();
    // (file, tool) pairs the tool tier has already run: its other reports on the file are
    // the same run's.
    let mut tool_done: Vec<(String, ci_medic_core::tool_tier::FixTool)> = Vec::new();
    for (path, mut reports) in by_file {
        // Links, submodules and directories first, from the tree: the contents API would
        // answer for a link's target, and the fix would replace the link with a copy.
        let kind = match &listing {
            Some(entries) => entry_in(entries, &path),
            None => tree_entry(gh, inst, read_from, &tree, &path)
                .await
                .map_err(|e| gh_err("reading the tree of the file to fix", e))?,
        };
        match kind {
            PathKind::Absent => continue,
            PathKind::Other(what) => {
                declined.push(format!(
                    "`{path}` is {what}; ci-medic only rewrites regular files"
                ));
                continue;
            }
            PathKind::File(mode) => modes.push((path.clone(), mode)),
        }
        let Some(file) = gh
            .get_file_content(inst, read_from, &path, run.proposed_for_sha())
            .await
            .map_err(|e| gh_err("reading the file to fix", e))?
        else {
            continue;
        };
        if file.path != path {
            declined.push(format!(
                "`{path}` is a symbolic link (GitHub answered with `{}`); ci-medic only rewrites regular files",
                file.path
            ));
            continue;
        }
        // Pushed back as the UTF-8 bytes of the patched text: anything else would come back
        // with every byte it could not decode replaced, far outside the edit.
        let before = match source_text(&file.content) {
            Ok(text) => text.to_string(),
            Err(not_text) => {
                declined.push(format!(
                    "`{path}` is {not_text}; ci-medic only rewrites UTF-8 text"
                ));
                continue;
            }
        };
        let mut current = before.clone();
        // Bottom-up, so earlier fixes do not shift the lines of later ones.
        reports.sort_by_key(|r| std::cmp::Reverse(r.line_number));
        for report in reports {
            let mut input = FixInput::new(report.clone(), current.clone());
            input.previous_attempt = run
                .previous_attempt
                .clone()
                .filter(|p| !p.failure.is_empty());
            // Each report's candidate is guarded on its own, so a refused built-in patch
            // gives the LLM its turn and refuses that candidate, not the whole proposal.
            let wants_tool = ctx.fix_agent.has_tools()
                && ci_medic_core::tool_tier::FixTool::for_report(&report, None).is_some()
                && fix_deterministic(&input)
                    .is_none_or(|o| check_patch(&policy, &o.to_candidate(&input)).is_err());
            if wants_tool && scratch.is_none() && !fetch_failed {
                match fetch_tree(ctx, inst, read_from, run.proposed_for_sha(), "tools").await {
                    Ok(s) => scratch = Some(s),
                    Err(e) => {
                        warn!(error = %e, "no tree for the tool tier; it is skipped");
                        tool_notes
                            .declined
                            .push(format!("the tool tier could not fetch the tree: {e}"));
                        fetch_failed = true;
                    }
                }
            }
            let workspace = scratch
                .as_ref()
                .filter(|_| wants_tool)
                .map(|(_, root)| root.as_path());
            let tool = workspace
                .and_then(|root| crate::fix_agent::tool_tier::ToolTier::tool_for(root, &input));
            if let Some(t) = &tool
                && tool_done.contains(&(path.clone(), t.clone()))
            {
                continue;
            }
            match fix_agent
                .propose_checked_in(&input, &policy, workspace, &mut tool_notes)
                .await
            {
                Proposal::Accepted(out) => {
                    if out.fixer.starts_with(crate::fix_agent::TOOL_FIXER_PREFIX)
                        && let Some(t) = tool
                    {
                        // The formatter's change is allowed in the whole patch exactly as it
                        // was in its own candidate.
                        if let Some((_, scope)) =
                            tool_notes.scopes.iter().rev().find(|(p, _)| *p == path)
                        {
                            final_policy = ci_medic_core::tool_tier::scoped_policy(
                                &final_policy,
                                &path,
                                scope,
                            );
                        }
                        tool_done.push((path.clone(), t));
                    }
                    confidence = confidence.min(out.confidence_score);
                    reasons.push(format!("{} ({})", out.fix_reason, out.fixer));
                    if !fixers.contains(&out.fixer) {
                        fixers.push(out.fixer.clone());
                    }
                    current = out.patched_content;
                }
                Proposal::Rejected { output, violations } => {
                    let what = format_report_line(&report);
                    reasons.push(format!(
                        "not fixed: {what} (the {} patch broke `{}`)",
                        output.fixer,
                        violations[0].rule()
                    ));
                    rejected.get_or_insert_with(|| Refusal {
                        rule: violations[0].rule().to_string(),
                        detail: format!(
                            "{what}: the {} patch was refused: {}",
                            output.fixer,
                            violations
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; ")
                        ),
                    });
                }
                Proposal::NoFix => {}
            }
        }
        if current != before {
            changes.push(FileChange {
                path,
                before: Some(before),
                after: current,
            });
        }
    }
    if changes.is_empty()
        && let Some(mut refusal) = rejected
    {
        for d in &declined {
            refusal.detail.push_str(&format!("; {d}"));
        }
        return Ok(Err(refusal));
    }
    if changes.is_empty() && !declined.is_empty() {
        return Ok(Err(Refusal {
            rule: "unsupported_file".into(),
            detail: declined.join("; "),
        }));
    }
    reasons.extend(declined.iter().map(|d| format!("left alone: {d}")));
    reasons.extend(
        tool_notes
            .declined
            .iter()
            .map(|n| format!("tool tier: {n}")),
    );
    if changes.is_empty() {
        let mut detail = "no built-in fixer was sure of a fix for these errors, and no LLM is configured (or it declined)".to_string();
        for n in &tool_notes.declined {
            detail.push_str(&format!("; tool tier: {n}"));
        }
        return Ok(Err(Refusal {
            rule: "no_fix".into(),
            detail,
        }));
    }
    let candidate = Candidate {
        changes,
        confidence,
    };
    if let Err(violations) = check_patch(&final_policy, &candidate) {
        let first = &violations[0];
        return Ok(Err(Refusal {
            rule: first.rule().to_string(),
            detail: violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        }));
    }
    Ok(Ok(WrittenPatch {
        changes: candidate.changes,
        tree: KnownTree {
            tree_sha: tree,
            modes,
        },
        reason: reasons.join("; "),
        fixers,
    }))
}

/// A patch that cannot be pushed: the proposal fails, and the comment names the rule.
pub(crate) async fn refuse(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    mut run: FixRun,
    fix_id: &str,
    refusal: Refusal,
) -> Result<(), JobError> {
    ctx.metrics.stage("fix", "refused");
    warn!(fix = %fix_id, rule = %refusal.rule, detail = %refusal.detail, "patch refused");
    let event = Event::PatchRefused {
        rule: refusal.rule,
        detail: refusal.detail,
    };
    moved(ctx, inst, repo, &mut run, event).await
}

/// The files of the current proposal's reports that it may change: what a commit prepared
/// by an earlier attempt of the job changes.
pub(crate) fn reported_files(run: &FixRun) -> Vec<String> {
    let allowed = run
        .state
        .proposal
        .as_ref()
        .map(|p| p.dds.allowed_paths.clone())
        .unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for r in &run.reports {
        if allowed.contains(&r.file_path) && !files.contains(&r.file_path) {
            files.push(r.file_path.clone());
        }
    }
    files
}

fn commit_message(run: &FixRun, fix_id: &str, reason: &str) -> String {
    let lines: Vec<String> = run
        .reports
        .iter()
        .take(20)
        .map(format_report_line)
        .collect();
    format!(
        "ci-medic: fix `{}` ({fix_id})\n\n{}\n\n{reason}\n\nDDS: {fix_id}\nApproved in pull request #{}",
        run.check_name,
        lines.join("\n"),
        run.pr_number
    )
}

/// Queues the job that writes and pushes the run's approved fix, once per proposal; runs
/// it here when no queue is attached (a handler used on its own).
pub(crate) async fn queue_fix(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: FixRun,
    config: &RepoConfig,
) -> Result<(), JobError> {
    let Some(queue) = ctx.queue() else {
        return advance_approved(ctx, inst, repo, run, config).await;
    };
    let job = crate::jobs::InternalJob {
        key: format!("{}#{}", run.repo, run.pr_number),
        id: format!("fix-{}-{}", job_id(&run), run.fix_id().unwrap_or_default()),
        kind: JobKind::WriteFix {
            repo: run.repo.clone(),
            pr: run.pr_number,
            check: run.check_name.clone(),
        },
    };
    crate::jobs::enqueue(queue, job).await.map_err(store_err)?;
    Ok(())
}

/// The fix job: writes and pushes the run's approved fix, if it is still approved.
pub(crate) async fn write_fix(
    ctx: &Context,
    repo: &str,
    pr: u64,
    check: &str,
) -> Result<(), JobError> {
    let _held = ctx.pr_locks.lock(repo, pr).await;
    let Some(run) = ctx.runs.get(repo, pr, check).await.map_err(store_err)? else {
        return Ok(());
    };
    let Some(repo) = RepoRef::parse(&run.repo) else {
        return Ok(());
    };
    let inst = InstallationId(run.installation_id);
    if !matches!(run.phase(), Phase::Approved { .. }) {
        info!(check = %run.check_name, phase = ?run.phase(), "no approved fix to write");
        // This job's earlier run may have pushed and stopped before the comment said so.
        let mut run = run;
        return catch_up(ctx, inst, &repo, &mut run).await;
    }
    let (config, _) = ctx.repo_config(inst, &repo).await?;
    advance_approved(ctx, inst, &repo, run, &config).await
}
