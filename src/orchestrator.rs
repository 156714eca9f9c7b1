//! The wiring: the shared [`Context`] every handler takes, and the [`Orchestrator`] that
//! dispatches each job to its handler with one `match`.
//!
//! The handlers are free functions over `&Context`, in their stages: one per event kind in
//! [`crate::events`] (`check_run`, `pull_request`, `installation`, with the failure's
//! `analysis` and the `default_branch` outcomes), one per command in [`crate::commands`]
//! (`approval`: `/approve`, `/reject`; `retry`, `rerun`, and `/help` in `comment`), and one
//! per typed job: writing the fix in [`crate::fix_agent`] (`write`), its sandbox build in
//! [`crate::executor`] (`verify_job`), the push in [`crate::git_agent`] (`push`), and the CI
//! monitor's verdicts and reconcile pass in [`crate::ci_monitor`]. A proposal's state moves
//! only through the pure state machine `ci_medic_core::proposal::machine`, whose effects
//! [`apply`] carries out (registry transition, stored run, comment rendered from the state).
//!
//! Every handler is idempotent, because a job interrupted by a crash runs again: records are
//! looked up before they are created (failed DDS per check and commit, one code_fix per
//! source, one comment per pull request and check, one check run per proposal), and each step
//! is stored before the next begins. This module holds no handler logic of its own; stages
//! talk to each other only through the context and typed values (execution contract: "No
//! layer bypasses the Orchestrator").

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::Mutex;
use tracing::{info, warn};

use ci_medic_core::repo_config::{CONFIG_PATH, ConfigError, RepoConfig};

mod apply;

pub(crate) use apply::{Replay, apply, catch_up, moved, publish};

use crate::ci_monitor::reconcile::{reconcile_jobs, reconcile_legacy, reconcile_run};
use crate::commands::comment::comment_created;
use crate::events::check_run::check_run_completed;
use crate::events::installation::installation_changed;
use crate::events::pull_request::pull_request_changed;
use crate::executor::verify_job::verify_fix;
use crate::fix_agent::write::write_fix;

use crate::events::{Event as Delivery, EventError};
use crate::github::{GitHubApi, GitHubError, InstallationId, RepoRef};
use crate::jobs::{JobError, JobHandler, JobInput};
use crate::log_source::LogLimits;
use crate::metrics::Metrics;
use crate::store::proposals::{Proposals, Runs};
use crate::store::runs::FixRun;
use crate::store::{JobKind, Store, StoreError};

/// A repository's configuration as last read: when, from which blob (`None`: no file), and
/// what it parsed to.
struct CachedConfig {
    read_at: std::time::Instant,
    sha: Option<String>,
    config: RepoConfig,
    error: Option<ConfigError>,
}

/// How long a repository's configuration is used without reading it again: the events of one
/// failure's loop (proposal, approval, fix, verdict) come within it, so they read it once, and
/// an edit on the default branch applies within a minute.
const CONFIG_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// Everything the pipeline needs, behind traits where the outside world is involved.
pub struct Context {
    pub github: Arc<dyn GitHubApi>,
    pub store: Store,
    /// Failed records and code_fix proposals: on PostgreSQL every replica's.
    pub registry: Arc<dyn Proposals>,
    /// The queue's backend, where DDS numbers come from: on PostgreSQL shared by every
    /// replica, so two of them never publish the same id; on sled the registry's counters.
    pub ids: Arc<dyn crate::store::backend::Backend>,
    /// Fix runs: on PostgreSQL every replica's, written by compare-and-swap.
    pub runs: Arc<dyn Runs>,
    /// Per-test outcomes and automatic re-run counters (failure triage), and installations:
    /// on PostgreSQL shared by every replica. Sled's by default; `serve` sets PostgreSQL's.
    pub shared: Arc<dyn crate::store::shared_state::SharedState>,
    pub metrics: Metrics,
    /// Our own App id: check runs it owns are ours and never analysed.
    pub app_id: u64,
    pub log_limits: LogLimits,
    /// Writes patches: built-in fixers, then the LLM when configured.
    pub fix_agent: crate::fix_agent::FixAgent,
    /// The Docker sandbox for `verify: docker`; `None` when no engine is reachable.
    pub executor: Option<Arc<dyn crate::executor::Executor>>,
    /// How long the CI monitor waits for a re-run's result before it says none came
    /// (`RERUN_TIMEOUT_MINUTES`).
    pub rerun_timeout_minutes: u32,
    /// How long the CI monitor waits for the check's result on a pushed fix
    /// (`VERDICT_TIMEOUT_MINUTES`).
    pub verdict_timeout_minutes: u32,
    /// Parsed `.github/ci-medic.yml` per repository, re-read after [`CONFIG_TTL`].
    config_cache: Mutex<HashMap<String, CachedConfig>>,
    pub(crate) pr_locks: PrLocks,
    /// The durable queue, once the server attached it: follow-up jobs (writing a fix) go there.
    queue: std::sync::OnceLock<Arc<crate::jobs::Queue>>,
}

/// One lock per pull request. The queue runs jobs with the same key one at a time, but a
/// fork's check run is queued by commit (GitHub does not name the pull request in it), so it
/// could run beside that pull request's comment and reconcile jobs, and each would write the
/// run record over the other's. Every handler takes this lock once it knows the pull request,
/// and only at its entry point (the lock is not re-entrant).
#[derive(Default)]
pub(crate) struct PrLocks(std::sync::Mutex<HashMap<String, Arc<Mutex<()>>>>);

impl PrLocks {
    pub(crate) async fn lock(&self, repo: &str, pr: u64) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut map = self.0.lock().expect("pr locks poisoned");
            // Forget the locks nobody holds or waits for, so the map stays as small as the
            // work in flight.
            map.retain(|_, l| Arc::strong_count(l) > 1);
            map.entry(format!("{repo}#{pr}")).or_default().clone()
        };
        lock.lock_owned().await
    }
}

impl Context {
    /// `state` is the backend the queue uses (`ServeOptions::state`): the DDS numbers are
    /// taken there.
    pub fn new(
        github: Arc<dyn GitHubApi>,
        store: Store,
        state: Arc<dyn crate::store::backend::Backend>,
        metrics: Metrics,
        app_id: u64,
    ) -> Result<Context, StoreError> {
        let fix_state = state.fix_state()?;
        let shared = Arc::new(crate::store::shared_state::SledShared::open(&store)?);
        Ok(Context {
            github,
            store,
            registry: fix_state.registry,
            ids: state,
            runs: fix_state.runs,
            shared,
            metrics,
            app_id,
            log_limits: LogLimits::default(),
            fix_agent: crate::fix_agent::FixAgent::new(None),
            executor: None,
            rerun_timeout_minutes: crate::config::DEFAULT_RERUN_TIMEOUT_MINUTES,
            verdict_timeout_minutes: crate::config::DEFAULT_VERDICT_TIMEOUT_MINUTES,
            config_cache: Mutex::new(HashMap::new()),
            pr_locks: PrLocks::default(),
            queue: std::sync::OnceLock::new(),
        })
    }

    /// The durable queue follow-up jobs go to; `None` while no server attached one (a handler
    /// used on its own then does the follow-up work in place).
    pub(crate) fn queue(&self) -> Option<&Arc<crate::jobs::Queue>> {
        self.queue.get()
    }

    /// The repository's configuration from its default branch; safe defaults (and the error)
    /// when the file is invalid.
    pub(crate) async fn repo_config(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
    ) -> Result<(RepoConfig, Option<ConfigError>), JobError> {
        let key = repo.full_name();
        if let Some(c) = self.config_cache.lock().await.get(&key)
            && c.read_at.elapsed() < CONFIG_TTL
        {
            return Ok((c.config.clone(), c.error.clone()));
        }
        let gh = &self.github;
        // No `ref`: the default branch, without a request to learn its name.
        let file = gh
            .get_file_content(inst, repo, CONFIG_PATH, "")
            .await
            .map_err(|e| gh_err("reading the repository configuration", e))?;
        let mut cache = self.config_cache.lock().await;
        let unchanged = |sha: &str| {
            cache
                .get(&key)
                .filter(|c| c.sha.as_deref() == Some(sha))
                .map(|c| (c.config.clone(), c.error.clone()))
        };
        let (sha, config, error) = match file {
            None => (None, RepoConfig::default(), None),
            // Unchanged since it was parsed: parsed again it would say the same.
            Some(file) => match unchanged(&file.sha) {
                Some((config, error)) => (Some(file.sha), config, error),
                None => {
                    let text = String::from_utf8_lossy(&file.content);
                    let (cfg, err) = RepoConfig::parse_or_default(&text);
                    if let Some(e) = &err {
                        warn!(repo = %key, error = %e, "invalid repository configuration; using defaults");
                    }
                    (Some(file.sha), cfg, err)
                }
            },
        };
        cache.insert(
            key,
            CachedConfig {
                read_at: std::time::Instant::now(),
                sha,
                config: config.clone(),
                error: error.clone(),
            },
        );
        Ok((config, error))
    }
}

/// The pipeline's entry point for queued deliveries.
pub struct Orchestrator {
    pub(crate) ctx: Arc<Context>,
}

impl Orchestrator {
    pub fn new(ctx: Arc<Context>) -> Orchestrator {
        Orchestrator { ctx }
    }
}

/// A failed GitHub call, with what was being done; the queue retries or parks it by GitHub's
/// answer ([`JobError::is_permanent`], [`JobError::wait`]).
pub(crate) fn gh_err(what: &'static str, source: GitHubError) -> JobError {
    JobError::GitHub { what, source }
}

/// A failed read or write of the database or the DDS registry; retried.
pub(crate) fn store_err(e: impl Into<JobError>) -> JobError {
    e.into()
}

/// A run's part of its jobs' ids: repository, pull request and check, in characters any id
/// may hold.
pub(crate) fn job_id(run: &FixRun) -> String {
    format!(
        "{}-{}-{}",
        run.repo.replace('/', "."),
        run.pr_number,
        run.check_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    )
}

#[async_trait]
impl JobHandler for Orchestrator {
    async fn handle(&self, input: JobInput) -> Result<(), JobError> {
        let ctx = &*self.ctx;
        match &input.job.kind {
            JobKind::WriteFix { repo, pr, check } => return write_fix(ctx, repo, *pr, check).await,
            JobKind::VerifyFix {
                repo,
                pr,
                check,
                commit,
            } => return verify_fix(ctx, repo, *pr, check, commit).await,
            JobKind::Reconcile { repo, pr, check } => {
                return reconcile_run(ctx, repo, *pr, check).await;
            }
            JobKind::Delivery if input.job.event == crate::ci_monitor::RECONCILE_EVENT => {
                return reconcile_legacy(ctx, &input.payload).await;
            }
            JobKind::Delivery => {}
        }
        let event = match Delivery::parse(&input.job.event, &input.payload) {
            Ok(e) => e,
            Err(EventError::Unhandled { event, action }) => {
                info!(%event, %action, "nothing to do for this event");
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        match event {
            // Takes the pull request's lock itself, once it knows which one.
            Delivery::CheckRunCompleted(cr) => check_run_completed(ctx, cr).await,
            Delivery::PrCommentCreated(c) => {
                let _held = ctx.pr_locks.lock(&c.repo.full_name(), c.pr_number).await;
                comment_created(ctx, c).await
            }
            Delivery::PullRequestChanged(p) => {
                let _held = ctx.pr_locks.lock(&p.repo.full_name(), p.number).await;
                pull_request_changed(ctx, p).await
            }
            Delivery::InstallationChanged(i) => installation_changed(ctx, i).await,
        }
    }

    fn attach(&self, queue: Arc<crate::jobs::Queue>) {
        // Set once per process; a second attach (a second server on the same handler) keeps
        // the first queue, which is the one its jobs were loaded into.
        let _ = self.ctx.queue.set(queue);
    }

    async fn reconcile(&self) -> Vec<crate::jobs::InternalJob> {
        reconcile_jobs(&self.ctx).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::PrLocks;

    #[tokio::test]
    async fn one_pull_request_at_a_time_and_idle_locks_are_forgotten() {
        let locks = PrLocks::default();
        let held = locks.lock("o/r", 7).await;
        let soon = Duration::from_secs(5);
        // Another pull request is not held up.
        let other = tokio::time::timeout(soon, locks.lock("o/r", 8)).await;
        assert!(other.is_ok());
        drop(other);
        // The same one waits until the holder is done.
        let waiting = tokio::time::timeout(Duration::from_millis(100), locks.lock("o/r", 7)).await;
        assert!(
            waiting.is_err(),
            "a second holder of the same pull request's lock"
        );
        drop(held);
        let again = tokio::time::timeout(soon, locks.lock("o/r", 7)).await;
        assert!(again.is_ok());
        drop(again);
        // Nobody holds #7 or #8 any more: taking #9 forgets them.
        let _nine = locks.lock("o/r", 9).await;
        let keys: Vec<String> = locks.0.lock().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec!["o/r#9".to_string()]);
    }

    /// The queue retries or parks a handler's failure by the error's kind and its typed
    /// source, never by its text; and the source stays reachable for whoever logs it.
    #[tokio::test]
    async fn job_errors_are_retried_or_parked_by_their_kind() {
        use std::error::Error as _;

        use crate::executor::WorkspaceError;
        use crate::git_agent::GitAgentError;
        use crate::github::GitHubError;
        use crate::jobs::JobError;

        let agent = |source| JobError::GitAgent {
            what: "pushing the fix commit",
            source,
        };
        // A branch that moved is worth another try; a path that is no regular file is not.
        let stale = agent(GitAgentError::Stale {
            branch: "feature".into(),
            expected: "a".into(),
            actual: "b".into(),
        });
        assert!(!stale.is_permanent());
        let link = agent(GitAgentError::NotARegularFile {
            path: "src/link".into(),
            what: "a symbolic link".into(),
        });
        assert!(link.is_permanent());
        // GitHub's answer inside the git agent's error is judged as GitHub's.
        assert!(agent(GitAgentError::GitHub(GitHubError::NotFound)).is_permanent());
        let limited = agent(GitAgentError::GitHub(GitHubError::RateLimited {
            retry_after: Some(Duration::from_secs(7)),
        }));
        assert!(!limited.is_permanent());
        assert_eq!(limited.wait(), Some(Duration::from_secs(7)));

        // A scratch directory that cannot be written is retried, with the I/O error kept.
        let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left");
        let workspace = JobError::Workspace(io);
        assert!(!workspace.is_permanent());
        let kept = workspace
            .source()
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        assert_eq!(kept, Some(std::io::ErrorKind::StorageFull));

        // An archive that cannot be laid out safely, a prepared file that is not text, a
        // payload that is not JSON, a missing record: the same every time, so parked.
        let unsafe_entry = JobError::Unpack {
            what: "unsafe or broken tarball",
            source: WorkspaceError::UnsafePath {
                path: "../etc/passwd".into(),
                reason: "leaves the workspace",
            },
        };
        assert!(unsafe_entry.is_permanent());
        let binary = JobError::NotUtf8 {
            path: "a.bin".into(),
            source: String::from_utf8(vec![0xff, 0xfe]).unwrap_err(),
        };
        assert!(binary.is_permanent());
        assert!(
            binary
                .source()
                .is_some_and(|s| s.is::<std::string::FromUtf8Error>())
        );
        let payload = JobError::BadPayload {
            what: "reconcile",
            source: serde_json::from_slice::<serde_json::Value>(b"{").unwrap_err(),
        };
        assert!(payload.is_permanent());
        assert!(JobError::NoInstallation.is_permanent());
        assert!(JobError::MissingProposal { fix_id: "x".into() }.is_permanent());

        // A helper task that panicked is parked at once (the same log panics the parser every
        // time), its message kept for the operator; the join error says it panicked. A
        // cancelled one (a shutdown) is retried.
        let join = tokio::spawn(async { panic!("begin > end (5 > 4)") })
            .await
            .unwrap_err();
        let task = JobError::Task {
            what: "parser task",
            source: join,
        };
        assert!(task.is_permanent());
        assert!(task.to_string().contains("begin > end"), "{task}");
        assert_eq!(task.wait(), None);
        let panicked = task
            .source()
            .and_then(|s| s.downcast_ref::<tokio::task::JoinError>())
            .is_some_and(tokio::task::JoinError::is_panic);
        assert!(panicked);
        let handle = tokio::spawn(std::future::pending::<()>());
        handle.abort();
        let cancelled = JobError::Task {
            what: "parser task",
            source: handle.await.unwrap_err(),
        };
        assert!(!cancelled.is_permanent());
    }
}
