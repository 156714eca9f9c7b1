//! Handler: a failed check → logs → bug reports → failed DDS → code_fix proposal, applied to the
//! check's run as one state-machine event (logs unavailable, nothing found, already decided, or
//! proposed), which publishes the comment and the annotations.
//!
//! Idempotent: the failed DDS is recorded once per check and commit, the code_fix once per
//! source, and a redelivery of the same failure proposes the same proposal again. It never
//! changes a run's state except through [`Orchestrator::apply`].

use chrono::{DateTime, Utc};
use tracing::{info, warn};

use ci_medic_core::formatter::format_report_line;
use ci_medic_core::ids::DdsId;
use ci_medic_core::proposal::machine::{Event, Proposal, RunState};
use ci_medic_core::proposal::{CheckRef, DdsStatus, FailedCheck, build_fix_packet};
use ci_medic_core::repo_config::{ConfigError, RepoConfig};
use ci_medic_parser::{BugReport, ParseOptions};

use super::apply::Replay;
use super::{Orchestrator, gh_err, store_err};
use crate::events::CheckRunCompleted;
use crate::github::{InstallationId, RepoRef};
use crate::jobs::JobError;
use crate::log_source::{LogError, LogSource, fetch_log};
use crate::store::registry::RegistryError;
use crate::store::runs::FixRun;

impl Orchestrator {
    /// Logs → bug reports → failed DDS → code_fix proposal → comment + annotations.
    pub(super) async fn analyse(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        pr_number: u64,
        cr: &CheckRunCompleted,
        config: &RepoConfig,
        config_error: Option<ConfigError>,
    ) -> Result<(), JobError> {
        self.analyse_with_source(inst, repo, pr_number, cr, config, config_error, None)
            .await
    }

    /// [`Self::analyse`], with the source DDS given when the failure follows a pushed fix (the
    /// failed code_fix is then the next proposal's source, so its scope can only narrow).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn analyse_with_source(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        pr_number: u64,
        cr: &CheckRunCompleted,
        config: &RepoConfig,
        config_error: Option<ConfigError>,
        source: Option<DdsId>,
    ) -> Result<(), JobError> {
        let ctx = &self.ctx;
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
            },
        };

        // Logs: where they are follows from the run's App, which the event names.
        let log_source = LogSource::of(cr.app_slug.as_deref(), cr.check_run_id);
        // The parser reads the log as it downloads, to its end, however long it is; only an
        // excerpt of it is kept in memory.
        let (tee, parsing) = crate::parser::spawn_streaming(ParseOptions::default());
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
                return self.analysed(inst, repo, &mut run, event).await;
            }
            Err(LogError::Api(e)) => return Err(gh_err("downloading the logs", e)),
        };

        let parsed = parsing
            .await
            .map_err(|e| JobError::Retry(format!("parser task: {e}")))?;
        let reports: Vec<BugReport> = parsed.reports;
        info!(check = %cr.name, reports = reports.len(), left_out = parsed.left_out, log_bytes = log.total_bytes, "log parsed");

        if reports.is_empty() {
            ctx.metrics.stage("analysis", "no_errors_found");
            let event = Event::NothingFound {
                head_sha: cr.head_sha.clone(),
                excerpt: tail_excerpt(&log.bytes),
            };
            return self.analysed(inst, repo, &mut run, event).await;
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
                    )
                    .map_err(|e| refused("recording the failed check", e))?
                    .id
            }
        };
        let proposal = match ctx.registry.fix_for_source(&source_id).map_err(store_err)? {
            Some(p) => p,
            None => ctx
                .registry
                .propose_fix(&source_id, &reports, &config.constraints, now)
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
            return self.analysed(inst, repo, &mut run, event).await;
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
        self.analysed(inst, repo, &mut run, event).await
    }

    /// Applies an analysis' outcome; the machine refuses only what contradicts the registry.
    async fn analysed(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        run: &mut FixRun,
        event: Event,
    ) -> Result<(), JobError> {
        if let Err(e) = self.apply(inst, repo, run, event, Replay::First).await? {
            warn!(check = %run.check_name, error = %e, "analysis not applied");
        }
        Ok(())
    }
}

/// A registry write that failed: retried when the storage failed, parked when the registry
/// refused the record (the same input is refused every time).
fn refused(what: &'static str, e: RegistryError) -> JobError {
    match e {
        RegistryError::Storage(_) => JobError::Registry(e),
        source => JobError::Refused { what, source },
    }
}

/// The last lines of a log, for a comment that found nothing to locate.
fn tail_excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(8 * 1024)..]);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
