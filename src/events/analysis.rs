//! Handler: a failed check → logs → bug reports → triage → failed DDS → code_fix proposal,
//! applied to the check's run as one state-machine event (logs unavailable, nothing found, not
//! the code, already decided, or proposed), which publishes the comment and the annotations.
//!
//! The triage (`ci_medic_triage`) sees the whole log as it streams, the check run's conclusion,
//! and for a GitHub Actions job its steps and how the same job ended in the run's other
//! attempts; plus the recorded outcomes of the failing tests. A failure that is not the code's
//! gets no failed DDS and no code_fix, only its kind, evidence and what to do; with
//! `triage.auto_rerun` an infrastructure or flaky one is re-run, at most `triage.max_reruns`
//! times per commit and check.
//!
//! Idempotent: the failed DDS is recorded once per check and commit, the code_fix once per
//! source, and a redelivery of the same failure proposes the same proposal again. It never
//! changes a run's state except through [`apply`].

use chrono::{DateTime, Utc};
use tracing::{info, warn};

use ci_medic_core::formatter::format_report_line;
use ci_medic_core::ids::DdsId;
use ci_medic_core::proposal::machine::{Event, NotCode, Proposal, RunState, Stage};
use ci_medic_core::proposal::{CheckRef, DdsStatus, FailedCheck, build_fix_packet};
use ci_medic_core::repo_config::{ConfigError, RepoConfig};
use ci_medic_parser::{BugReport, ParseOptions};
use ci_medic_triage::{AttemptOutcome, CheckFacts, Conclusion, FailureKind, StepFacts};

use crate::events::CheckRunCompleted;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::log_source::{LogError, LogSource, fetch_log};
use crate::orchestrator::{Context, Replay, apply, gh_err, store_err};
use crate::store::registry::RegistryError;
use crate::store::runs::FixRun;

/// Logs → bug reports → failed DDS → code_fix proposal → comment + annotations.
pub(crate) async fn analyse(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    pr_number: u64,
    cr: &CheckRunCompleted,
    config: &RepoConfig,
    config_error: Option<ConfigError>,
) -> Result<(), JobError> {
    analyse_with_source(ctx, inst, repo, pr_number, cr, config, config_error, None).await
}

/// [`Self::analyse`], with the source DDS given when the failure follows a pushed fix (the
/// failed code_fix is then the next proposal's source, so its scope can only narrow).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn analyse_with_source(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    pr_number: u64,
    cr: &CheckRunCompleted,
    config: &RepoConfig,
    config_error: Option<ConfigError>,
    source: Option<DdsId>,
) -> Result<(), JobError> {
    let gh = ctx.github.as_ref();
    let project = repo.full_name();
    let now = Utc::now();
    let failed_at = cr
        .completed_at
        .as_deref()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or(now);

    let mut run = match ctx
        .runs
        .get(&project, pr_number, &cr.name)
        .await
        .map_err(store_err)?
    {
        Some(r) => r,
        None => FixRun {
            repo: project.clone(),
            pr_number,
            check_name: cr.name.clone(),
            installation_id: inst.0,
            comment_id: None,
            comment_url: None,
            check_run_id: None,
            check_run_sha: None,
            state: RunState::new(&cr.name, pr_number, &cr.head_sha),
            reports: Vec::new(),
            pending_commit: None,
            push_target: None,
            read_from: None,
            pushed_at: None,
            previous_attempt: None,
            updated_at: now,
            // A new run has asked for nothing yet.
            creations: Some(Default::default()),
            unpublished: false,
            version: 0,
        },
    };

    // Logs: where they are follows from the run's App, which the event names.
    let log_source = LogSource::of(cr.app_slug.as_deref(), cr.check_run_id);
    // The parser reads the log as it downloads, to its end, however long it is; only an
    // excerpt of it is kept in memory.
    let (tee, parsing) = crate::parser::spawn_streaming_triaged(ParseOptions::default());
    let fetched = fetch_log(gh, inst, repo, log_source, ctx.log_limits, Some(&tee)).await;
    drop(tee);
    let log = match fetched {
        Ok(log) => log,
        Err(e @ (LogError::Expired | LogError::NotFound | LogError::TooLarge { .. })) => {
            ctx.metrics.stage("analysis", "logs_unavailable");
            let event = Event::LogsUnavailable {
                head_sha: cr.head_sha.clone(),
                reason: e.to_string(),
            };
            return analysed(ctx, inst, repo, &mut run, event).await;
        }
        Err(LogError::Api(e)) => return Err(gh_err("downloading the logs", e)),
    };

    let (parsed, triager) = parsing.await.map_err(|source| JobError::Task {
        what: "parser task",
        source,
    })?;
    let reports: Vec<BugReport> = parsed.reports;
    info!(check = %cr.name, reports = reports.len(), left_out = parsed.left_out, log_bytes = log.total_bytes, "log parsed");

    // Triage: is this the code's fault at all?
    let (facts, actions_run_id) = check_facts(ctx, inst, repo, cr, log_source).await?;
    let failed_tests = ci_medic_triage::failed_tests(&reports);
    let history = ctx
        .shared
        .histories(&project, &failed_tests)
        .await
        .map_err(store_err)?;
    let triage = triager.finish(&reports, &facts, &history);
    ctx.shared
        .record_failures(&project, &cr.name, &cr.head_sha, false, &failed_tests)
        .await
        .map_err(store_err)?;
    info!(check = %cr.name, kind = %triage.kind, rules = ?triage.rules, "failure triaged");
    if triage.kind != FailureKind::Code {
        ctx.metrics.failure(triage.kind.as_str());
        ctx.metrics.stage("analysis", "not_code");
        let rerun_advised = triage.rerun_advised();
        let event = Event::NotCode {
            head_sha: cr.head_sha.clone(),
            not_code: Box::new(NotCode {
                kind: triage.kind,
                evidence: triage.evidence,
                flaky: triage.flaky,
                rules: triage.rules,
                check_run_id: cr.check_run_id,
                actions_run_id,
            }),
            config_error: config_error.map(|e| e.to_string()),
        };
        analysed(ctx, inst, repo, &mut run, event).await?;
        if rerun_advised && config.triage.auto_rerun {
            auto_rerun(ctx, inst, repo, &cr.head_sha, run, config).await?;
        }
        return Ok(());
    }
    ctx.metrics.failure(FailureKind::Code.as_str());

    if reports.is_empty() {
        ctx.metrics.stage("analysis", "no_errors_found");
        let event = Event::NothingFound {
            head_sha: cr.head_sha.clone(),
            excerpt: tail_excerpt(&log.bytes),
        };
        return analysed(ctx, inst, repo, &mut run, event).await;
    }

    let source_id = match source {
        Some(id) => id,
        None => {
            // The failed DDS: the pull request's changed files are its scope.
            let files = gh
                .list_pull_request_files(inst, repo, pr_number)
                .await
                .map_err(|e| gh_err("listing the pull request's files", e))?;
            let changed_files: Vec<String> = files.into_iter().map(|f| f.filename).collect();
            ctx.registry
                .record_failure(
                    &FailedCheck {
                        project: project.clone(),
                        check_name: cr.name.clone(),
                        head_sha: cr.head_sha.clone(),
                        pr_number: Some(pr_number),
                        changed_files,
                        failed_at,
                    },
                    &config.constraints,
                    &ctx.ids,
                )
                .await
                .map_err(|e| refused("recording the failed check", e))?
                .id
        }
    };
    let proposal = match ctx
        .registry
        .fix_for_source(&source_id)
        .await
        .map_err(store_err)?
    {
        Some(p) => p,
        None => ctx
            .registry
            .propose_fix(&source_id, &reports, &config.constraints, now, &ctx.ids)
            .await
            .map_err(|e| refused("proposing the fix", e))?,
    };
    if proposal.status != DdsStatus::Proposed {
        // The same failure (check and commit) as a proposal already decided: a rejected
        // one is never proposed again (spec: rejection handling), an approved one is being
        // worked on. Say so on the comment and leave the decision where it is.
        let event = Event::AlreadyDecided {
            head_sha: cr.head_sha.clone(),
            fix_id: proposal.dds.id.clone(),
            status: proposal.status,
        };
        return analysed(ctx, inst, repo, &mut run, event).await;
    }
    let packet = build_fix_packet(
        &CheckRef {
            check_name: cr.name.clone(),
            head_sha: cr.head_sha.clone(),
        },
        &reports,
        &config.constraints,
    );
    if run.state.fix_id() != Some(proposal.dds.id.as_str()) {
        ctx.metrics.stage("analysis", "proposed");
        // A new proposal gets its own check run.
        run.check_run_id = None;
    }
    let mut out_of_scope = proposal.out_of_scope.clone();
    out_of_scope.extend(
        proposal
            .protected
            .iter()
            .map(|(p, why)| format!("{p} (protected by `{why}`)")),
    );
    run.reports = reports.clone();
    let event = Event::Proposed {
        head_sha: cr.head_sha.clone(),
        proposal: Box::new(Proposal {
            dds: proposal.dds,
            fix_packet: packet,
            report_lines: reports.iter().map(format_report_line).collect(),
            reports_left_out: parsed.left_out,
            out_of_scope,
        }),
        config_error: config_error.map(|e| e.to_string()),
    };
    analysed(ctx, inst, repo, &mut run, event).await
}

/// What GitHub says about the failed check, for the triage: its conclusion, and for an
/// Actions job its steps, its run attempt and the same job's outcome in the run's other
/// attempts. Also the job's workflow run, which `/rerun` re-runs (`None`: not an Actions
/// job, or GitHub would not say). Facts GitHub cannot give (a 404: the job was deleted,
/// or the App cannot see Actions) are left out: the triage then decides on the log alone.
pub(super) async fn check_facts(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    check_run: &CheckRunCompleted,
    source: LogSource,
) -> Result<(CheckFacts, Option<u64>), JobError> {
    let gh = ctx.github.as_ref();
    let mut facts = CheckFacts {
        check_name: Some(check_run.name.clone()),
        head_sha: Some(check_run.head_sha.clone()),
        conclusion: check_run.conclusion.as_deref().map(Conclusion::parse),
        ..CheckFacts::default()
    };
    let LogSource::ActionsJob { job_id } = source else {
        return Ok((facts, None));
    };
    let job = match gh.get_workflow_job(inst, repo, job_id).await {
        Ok(job) => job,
        Err(crate::github::GitHubError::NotFound) => return Ok((facts, None)),
        Err(e) => return Err(gh_err("reading the Actions job", e)),
    };
    facts.run_attempt = job.run_attempt;
    facts.steps = job
        .steps
        .iter()
        .map(|s| StepFacts {
            name: s.name.clone(),
            number: s.number,
            conclusion: s.conclusion.as_deref().map(Conclusion::parse),
        })
        .collect();
    // A first attempt has no other attempt to compare with (a job's name is unique in an
    // attempt), so the run's jobs are only listed for a re-run one: one request saved on
    // most failures.
    let jobs = if job.run_attempt.unwrap_or(1) <= 1 {
        Vec::new()
    } else {
        match gh.list_workflow_run_jobs(inst, repo, job.run_id).await {
            Ok(jobs) => jobs,
            Err(crate::github::GitHubError::NotFound) => Vec::new(),
            Err(e) => return Err(gh_err("listing the run's jobs", e)),
        }
    };
    // The same job in the run's other attempts: a job of another name passing says
    // nothing about this one.
    facts.other_attempts = jobs
        .into_iter()
        .filter(|j| j.id != job.id && j.name == job.name && j.status == "completed")
        .map(|j| AttemptOutcome {
            name: j.name,
            run_attempt: j.run_attempt,
            job_id: Some(j.id),
            head_sha: Some(j.head_sha),
            conclusion: j.conclusion.as_deref().map(Conclusion::parse),
        })
        .collect();
    Ok((facts, Some(job.run_id)))
}

/// `triage.auto_rerun`: re-runs the failed jobs of the run's infrastructure or flaky
/// failure, once the per-commit counter allows it. The counter is taken (and flushed)
/// before the request, so a crash can cost a re-run but never exceed the bound.
async fn auto_rerun(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    pr_head_sha: &str,
    mut run: FixRun,
    config: &RepoConfig,
) -> Result<(), JobError> {
    if run.state.stage != Stage::NotCode {
        return Ok(());
    }
    let Some(run_id) = run.state.not_code.as_ref().and_then(|n| n.actions_run_id) else {
        return Ok(());
    };
    let event = Event::RerunRequested {
        by: None,
        comment_url: None,
        pr_head_sha: pr_head_sha.to_string(),
    };
    // The machine would refuse it (another head, closed): nothing is spent then.
    if let Err(e) = ci_medic_core::proposal::machine::step(&run.state, event.clone(), Utc::now()) {
        info!(check = %run.check_name, error = %e, "no automatic re-run");
        return Ok(());
    }
    let taken = ctx
        .shared
        .take_rerun(
            &run.repo,
            &run.state.head_sha,
            &run.check_name,
            config.triage.max_reruns,
            Utc::now(),
        )
        .await
        .map_err(store_err)?;
    if !taken {
        info!(check = %run.check_name, max = config.triage.max_reruns, "automatic re-runs for this commit are used up");
        return Ok(());
    }
    match ctx.github.rerun_failed_jobs(inst, repo, run_id).await {
        Ok(()) => {}
        Err(crate::github::GitHubError::Forbidden { message }) => {
            warn!(check = %run.check_name, %message, "GitHub refused the automatic re-run");
            return Ok(());
        }
        Err(e) => return Err(gh_err("re-running the failed jobs", e)),
    }
    ctx.metrics.rerun_requested("auto");
    info!(check = %run.check_name, run_id, "failed jobs re-run automatically");
    analysed(ctx, inst, repo, &mut run, event).await
}

/// Applies an analysis' outcome; the machine refuses only what contradicts the registry.
async fn analysed(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    run: &mut FixRun,
    event: Event,
) -> Result<(), JobError> {
    if let Err(e) = apply(ctx, inst, repo, run, event, Replay::First).await? {
        warn!(check = %run.check_name, error = %e, "analysis not applied");
    }
    Ok(())
}

/// A registry write that failed: retried when the storage failed, parked when the registry
/// refused the record (the same input is refused every time).
fn refused(what: &'static str, e: RegistryError) -> JobError {
    match e {
        // The database failing (sled, or PostgreSQL handing out the id) is retried.
        RegistryError::Storage(_) | RegistryError::Postgres(_) => JobError::Registry(e),
        source => JobError::Refused { what, source },
    }
}

/// The last lines of a log, for a comment that found nothing to locate.
fn tail_excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(8 * 1024)..]);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
