//! Jobs: the durable queue of accepted deliveries and the workers that process them.
//!
//! - Jobs live in the store's backend (sled, or PostgreSQL shared by several replicas; see
//!   [`crate::store::backend`]), which picks the next runnable job when a worker claims one,
//!   so a crash loses nothing and no replica keeps scheduling state of its own. A claimed job
//!   is its worker's under a lease renewed while it runs; a job whose process died runs
//!   again (at the next start on sled, when its lease ends on PostgreSQL): every handler must
//!   be idempotent.
//! - Jobs with the same key (one pull request) run one at a time and in the order they were
//!   accepted, across replicas; jobs with different keys run in parallel.
//! - A failing job is retried with exponential backoff, then parked with its error: logged at
//!   `error`, counted in metrics, kept in the store, never silently dropped. Only a job whose
//!   error names who takes its work over ([`JobError::taken_over_by`]) ends instead, saying so.
//! - A panicking handler is caught (it runs in its own task) and treated as a failure.
//!
//! This module never interprets payloads: the [`JobHandler`] (the orchestrator) does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::Utc;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, error, info, warn};

use crate::github::GitHubError;
use crate::metrics::{JobLabels, Metrics};
use crate::store::backend::{Attempt, Backend};
use crate::store::registry::RegistryError;
use crate::store::{JobKind, JobRecord, StoreError};

/// How a job run failed. Whether it is tried again, parked at once or queued again for a
/// given moment follows from the error ([`JobError::is_permanent`], [`JobError::wait`]).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A GitHub call failed: what was being done, and GitHub's answer. Retried, unless GitHub
    /// said it never will work (not found, gone, not allowed) or named when to come back.
    #[error("{what}: {source}")]
    GitHub {
        what: &'static str,
        #[source]
        source: GitHubError,
    },
    /// The database failed; retried.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The DDS registry could not be read or written; retried.
    #[error("DDS registry: {0}")]
    Registry(#[from] RegistryError),
    /// The DDS registry refused a record for good (a rule of the specification, bad input).
    #[error("{what}: {source}")]
    Refused {
        what: &'static str,
        #[source]
        source: RegistryError,
    },
    /// The delivery's payload cannot be read as its event: it never will be.
    #[error("{0}")]
    BadDelivery(#[from] crate::events::EventError),
    /// The delivery names no installation (not a GitHub App webhook): it never will; parked.
    #[error("delivery has no installation; is this a GitHub App webhook?")]
    NoInstallation,
    /// An internal job's payload cannot be read (the reconcile job of an older version): it
    /// never will be; parked.
    #[error("bad {what} payload: {source}")]
    BadPayload {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// The run names a proposal the DDS registry does not hold: a broken record does not mend
    /// by waiting; parked.
    #[error("{fix_id} is missing from the registry")]
    MissingProposal { fix_id: String },
    /// The git agent refused for a reason of its own: a moved branch is tried again, a path
    /// that is no regular file is parked, GitHub's answer is judged as GitHub's.
    #[error("{what}: {source}")]
    GitAgent {
        what: &'static str,
        #[source]
        source: crate::git_agent::GitAgentError,
    },
    /// The scratch directory the tree is unpacked in could not be written or read; retried.
    #[error("workspace: {0}")]
    Workspace(#[source] std::io::Error),
    /// The repository's tree or the patch cannot be laid out safely in the workspace (an
    /// unsafe archive entry, a path outside the tree): the same every time; parked.
    #[error("{what}: {source}")]
    Unpack {
        what: &'static str,
        #[source]
        source: crate::executor::WorkspaceError,
    },
    /// A file of the prepared fix commit is not UTF-8 text: the commit does not change; parked.
    #[error("the prepared `{path}` is not UTF-8: {source}")]
    NotUtf8 {
        path: String,
        #[source]
        source: std::string::FromUtf8Error,
    },
    /// A task the handler started (the streaming parser) panicked or was cancelled. A panic is a
    /// bug that the same log hits every time: parked at once, its message kept for the operator.
    /// A cancelled task (a shutdown) is retried.
    #[error("{what}: {source}")]
    Task {
        what: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },
    /// A check finished on a fix commit whose push is not recorded yet (the push job is
    /// between the push and its record, or died there and runs again): retried, so the
    /// verdict is taken once the push is recorded.
    #[error("the check finished on {commit}, whose push is not recorded yet")]
    PushUnrecorded { commit: String },
    /// Worth another try later, for a reason with no error type of its own (a handler
    /// outside the pipeline, a panicking handler).
    #[error("{0}")]
    Retry(String),
    /// Will fail the same way every time, for a reason with no error type of its own: parked.
    #[error("{0}")]
    Permanent(String),
    /// Told to come back later (GitHub's rate limit names the moment): queued again for then,
    /// without spending an attempt, since waiting is not failing.
    #[error("{message}")]
    Wait { message: String, after: Duration },
}

impl JobError {
    /// Will fail the same way every time: parked at once. Decided by the error's kind and
    /// its source's, never by its text.
    pub fn is_permanent(&self) -> bool {
        use crate::git_agent::GitAgentError;
        match self {
            JobError::Permanent(_)
            | JobError::Refused { .. }
            | JobError::BadDelivery(_)
            | JobError::NoInstallation
            | JobError::BadPayload { .. }
            | JobError::MissingProposal { .. }
            | JobError::Unpack { .. }
            | JobError::NotUtf8 { .. } => true,
            JobError::GitHub { source, .. }
            | JobError::GitAgent {
                source: GitAgentError::GitHub(source),
                ..
            } => github_never_works(source),
            JobError::GitAgent {
                source: GitAgentError::NotARegularFile { .. },
                ..
            } => true,
            JobError::Task { source, .. } => source.is_panic(),
            JobError::GitAgent {
                source: GitAgentError::Stale { .. },
                ..
            }
            | JobError::Store(_)
            | JobError::Registry(_)
            | JobError::Workspace(_)
            | JobError::Retry(_)
            | JobError::PushUnrecorded { .. }
            | JobError::Wait { .. } => false,
        }
    }

    /// Who takes this job's work over once its retries run out, so it ends rather than being
    /// parked: a parked job asks an operator to act, and here nothing is left for one to do.
    pub fn taken_over_by(&self) -> Option<&'static str> {
        match self {
            // Every pushed fix's run is reconciled until its verdict: once the push is
            // recorded (by the pushing job, or by a reconcile job that resumes it when that
            // job died), a reconcile pass polls the check's runs on the commit and takes the
            // verdict this job was waiting to take.
            JobError::PushUnrecorded { .. } => Some("the reconcile pass"),
            _ => None,
        }
    }

    /// How long to wait before the next run, when the failure said so (GitHub's rate limit
    /// names the moment): the job is queued again for then without spending an attempt.
    pub fn wait(&self) -> Option<Duration> {
        match self {
            JobError::Wait { after, .. } => Some(*after),
            JobError::GitHub { source, .. }
            | JobError::GitAgent {
                source: crate::git_agent::GitAgentError::GitHub(source),
                ..
            } => match source {
                GitHubError::RateLimited {
                    retry_after: Some(after),
                } => Some(*after),
                _ => None,
            },
            _ => None,
        }
    }
}

/// GitHub's answers that mean the call never will work: not found, gone, not allowed.
fn github_never_works(e: &GitHubError) -> bool {
    matches!(
        e,
        GitHubError::NotFound
            | GitHubError::Gone
            | GitHubError::Unauthorized { .. }
            | GitHubError::Forbidden { .. }
    )
}

/// Longest wait a [`JobError::Wait`] is honoured for (GitHub's primary limit resets hourly).
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// What a worker hands to the handler.
#[derive(Debug, Clone)]
pub struct JobInput {
    pub job: JobRecord,
    /// The delivery's payload as received (verified JSON).
    pub payload: Vec<u8>,
}

/// Work the service creates for itself (not from a webhook): writing an approved fix, resuming
/// a fix loop after a restart, polling CI when a webhook was missed. It goes through the same
/// queue, so it is serialised with the webhooks of the same pull request.
#[derive(Debug, Clone)]
pub struct InternalJob {
    /// Serialisation key (the pull request's).
    pub key: String,
    /// What it does; never [`JobKind::Delivery`].
    pub kind: JobKind,
    /// Identity: a job whose id was queued before is not queued again (until that record is
    /// pruned), so the caller chooses how often the same work may be queued.
    pub id: String,
}

/// Queues one of the service's own jobs, durably, and makes it visible to the workers.
/// `Ok(false)` when a job with that id was queued before (by any replica).
pub async fn enqueue(queue: &Queue, job: InternalJob) -> Result<bool, StoreError> {
    let record = crate::store::DeliveryRecord {
        id: job.id,
        event: job.kind.event_name().unwrap_or("delivery").to_string(),
        action: None,
        received_at: Utc::now(),
        queued: true,
    };
    let new = crate::store::NewJob {
        key: job.key.clone(),
        kind: job.kind,
    };
    match queue.backend.accept(&record, b"", Some(new)).await? {
        crate::store::Accepted::New { job_id: Some(_) } => {
            queue.job_added();
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Processes one job. Implemented by the orchestrator; must be idempotent.
#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    async fn handle(&self, input: JobInput) -> Result<(), JobError>;

    /// Called once the queue is loaded, so the handler can queue follow-up jobs itself.
    fn attach(&self, _queue: Arc<Queue>) {}

    /// Called at start-up and periodically: jobs to queue for work in flight.
    async fn reconcile(&self) -> Vec<InternalJob> {
        Vec::new()
    }
}

/// Retry policy.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Runs before a job is parked (the first run included).
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// Delay before run number `attempts + 1`: between half and all of base · 2^(attempts−1),
    /// capped ([`crate::backoff::Backoff`]).
    pub fn backoff(&self, attempts: u32) -> Duration {
        crate::backoff::Backoff::new(self.base_delay, self.max_delay)
            .delay(attempts.saturating_sub(1))
    }
}

/// How long a claimed job is a worker's without a heartbeat. A replica that dies loses its
/// jobs to the others this long after its last heartbeat.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// How often an idle worker looks for jobs it was not told about: queued by another replica,
/// or whose back-off has ended.
const POLL: Duration = Duration::from_millis(200);

/// The queue: the backend, where jobs live and are claimed, and this process's wake-ups.
pub struct Queue {
    backend: Arc<dyn Backend>,
    metrics: Metrics,
    notify: Notify,
    policy: RetryPolicy,
    /// This process among the replicas: a random id taken at start, so a restarted replica
    /// never mistakes its predecessor's leases for its own.
    replica: String,
    lease: Duration,
    depth: std::sync::atomic::AtomicU64,
}

impl Queue {
    /// Opens the queue on `backend`, re-queueing jobs a dead process left running (sled; on
    /// PostgreSQL their leases run out instead).
    pub async fn load(
        backend: Arc<dyn Backend>,
        metrics: Metrics,
        policy: RetryPolicy,
    ) -> Result<Arc<Queue>, StoreError> {
        let requeued = backend.requeue_interrupted().await?;
        if requeued > 0 {
            warn!(
                requeued,
                "re-running jobs interrupted by the previous process"
            );
        }
        let mut id = [0u8; 6];
        getrandom::fill(&mut id)
            .map_err(|e| StoreError::Flush(format!("random replica id: {e}")))?;
        let queue = Arc::new(Queue {
            backend,
            metrics,
            notify: Notify::new(),
            policy,
            replica: hex::encode(id),
            lease: DEFAULT_LEASE,
            depth: Default::default(),
        });
        queue.refresh_counts().await?;
        Ok(queue)
    }

    /// A shorter or longer lease than [`DEFAULT_LEASE`] (tests of a dying replica).
    pub fn with_lease(mut self: Arc<Self>, lease: Duration) -> Arc<Self> {
        if let Some(q) = Arc::get_mut(&mut self) {
            q.lease = lease;
        }
        self
    }

    /// This process's id among the replicas.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// The backend the queue's jobs live in.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Reads the queue's size from the backend into the metrics.
    pub async fn refresh_counts(&self) -> Result<(), StoreError> {
        let c = self.backend.counts().await?;
        self.depth
            .store(c.live, std::sync::atomic::Ordering::Relaxed);
        self.metrics.queue_depth.set(c.live as i64);
        self.metrics.jobs_parked.set(c.parked as i64);
        Ok(())
    }

    /// Wakes a worker for a job this process has just made durable (workers claim jobs from
    /// the backend, so which job it was does not matter here).
    pub fn job_added(&self) {
        self.depth
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.metrics.queue_depth.inc();
        self.notify.notify_one();
    }

    /// Puts a parked job back in the queue, attempts reset, and wakes a worker at once (the
    /// operator's re-queue while `serve` runs).
    pub async fn requeue_parked(&self, id: u64) -> Result<crate::store::Requeue, StoreError> {
        let outcome = self.backend.requeue_parked(id).await?;
        if outcome == crate::store::Requeue::Requeued {
            self.metrics.jobs_parked.dec();
            self.job_added();
        }
        Ok(outcome)
    }

    /// Jobs queued or running, as last counted.
    pub fn depth(&self) -> usize {
        self.depth.load(std::sync::atomic::Ordering::Relaxed) as usize
    }

    /// Waits for the next runnable job and claims it for `owner`, or returns `None` once
    /// `shutdown` is cancelled.
    async fn next(&self, owner: &str, shutdown: &CancellationToken) -> Option<JobRecord> {
        loop {
            // Checked before taking a job, not only while idle: under load a job is always
            // ready, and a worker that kept taking them would spend the whole shutdown grace.
            if shutdown.is_cancelled() {
                return None;
            }
            let notified = self.notify.notified();
            match self.backend.claim(owner, self.lease).await {
                Ok(Some(job)) => return Some(job),
                Ok(None) => {}
                Err(e) => warn!(error = %e, "cannot claim a job; trying again"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return None,
                _ = notified => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Another job of this key, or one another worker skipped, may now be runnable.
    fn wake(&self) {
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    /// Runs one claimed job to its end (done, retried later, or parked), renewing its lease
    /// while it runs.
    async fn run_one(&self, owner: &str, mut job: JobRecord, handler: Arc<dyn JobHandler>) {
        let id = job.id;
        let span = tracing::info_span!("job", delivery = %job.delivery_id, job_id = id, event = %job.event, key = %job.key);
        async {
            let payload = match self.backend.payload(&job.delivery_id).await {
                Ok(Some(p)) => p,
                Ok(None) => {
                    self.park(owner, &mut job, "payload missing from the store".into()).await;
                    return;
                }
                Err(e) => {
                    error!(error = %e, "cannot read payload; will retry");
                    self.requeue(owner, &mut job, POLL, e.to_string(), Attempt::Refunded).await;
                    return;
                }
            };
            let labels = JobLabels { event: crate::metrics::event_label(&job.event) };
            self.metrics.jobs_running.inc();
            let started = Instant::now();
            let input = JobInput { job: job.clone(), payload };
            let h = handler.clone();
            let run = tokio::spawn(async move { h.handle(input).await }.in_current_span());
            let result = self.heartbeat_until(owner, id, run).await;
            self.metrics.jobs_running.dec();
            self.metrics.job_duration.get_or_create(&labels).observe(started.elapsed().as_secs_f64());
            let outcome = match result {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(e),
                Err(join) if join.is_panic() => Err(JobError::Retry(format!("handler panicked: {}", panic_message(join)))),
                Err(_) => Err(JobError::Retry("handler task was cancelled".into())),
            };
            match outcome {
                Ok(()) => {
                    self.remove(owner, id).await;
                    info!(attempts = job.attempts, elapsed_ms = started.elapsed().as_millis() as u64, "job finished");
                }
                Err(err) if err.wait().is_some() => {
                    let after = err.wait().unwrap_or_default().min(MAX_WAIT);
                    let message = err.to_string();
                    warn!(retry_in_s = after.as_secs_f64(), reason = %message, "job told to wait; queued again");
                    self.requeue(owner, &mut job, after, message, Attempt::Refunded).await;
                }
                Err(err) => {
                    self.metrics.job_failures.get_or_create(&labels).inc();
                    let permanent = err.is_permanent();
                    let msg = err.to_string();
                    let spent = job.attempts >= self.policy.max_attempts;
                    if let (false, true, Some(who)) = (permanent, spent, err.taken_over_by()) {
                        self.end_taken_over(owner, &job, who, &msg).await;
                    } else if permanent || spent {
                        self.park(owner, &mut job, msg).await;
                    } else {
                        let delay = self.policy.backoff(job.attempts);
                        warn!(attempts = job.attempts, retry_in_s = delay.as_secs_f64(), error = %msg, "job failed; will retry");
                        self.requeue(owner, &mut job, delay, msg, Attempt::Spent).await;
                    }
                }
            }
        }
        .instrument(span)
        .await;
        self.wake();
    }

    /// Waits for the handler, renewing the job's lease every third of it.
    async fn heartbeat_until(
        &self,
        owner: &str,
        id: u64,
        mut run: tokio::task::JoinHandle<Result<(), JobError>>,
    ) -> Result<Result<(), JobError>, tokio::task::JoinError> {
        let mut tick = tokio::time::interval(self.lease / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                r = &mut run => return r,
                _ = tick.tick() => match self.backend.heartbeat(id, owner, self.lease).await {
                    Ok(true) => {}
                    Ok(false) => warn!("lost the job's lease; another worker may run it too"),
                    Err(e) => warn!(error = %e, "cannot renew the job's lease"),
                },
            }
        }
    }

    fn depth_dec(&self) {
        let _ = self.depth.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |d| Some(d.saturating_sub(1)),
        );
        self.metrics.queue_depth.set(self.depth() as i64);
    }

    /// Puts `job` back in the queue to run again `after` from now, with `why` as its last error.
    async fn requeue(
        &self,
        owner: &str,
        job: &mut JobRecord,
        after: Duration,
        why: String,
        attempt: Attempt,
    ) {
        if let Err(e) = self
            .backend
            .retry_later(job.id, owner, after, &why, attempt)
            .await
        {
            error!(error = %e, "cannot record the job's next run; it runs again when its lease ends");
        }
        job.last_error = Some(why);
    }

    /// Ends a job whose retries ran out while another part of the service takes its work over.
    async fn end_taken_over(&self, owner: &str, job: &JobRecord, who: &str, msg: &str) {
        self.remove(owner, job.id).await;
        info!(attempts = job.attempts, error = %msg, "job ended after its retries; {who} takes it over");
    }

    /// Removes a job that ended from the queue.
    async fn remove(&self, owner: &str, id: u64) {
        match self.backend.finish(id, owner).await {
            Ok(true) => {}
            Ok(false) => {
                warn!("the job's lease had passed to another worker; it may run again there")
            }
            Err(e) => {
                error!(error = %e, "cannot remove finished job; it runs again when its lease ends")
            }
        }
        self.depth_dec();
    }

    async fn park(&self, owner: &str, job: &mut JobRecord, msg: String) {
        error!(attempts = job.attempts, error = %msg, "job parked after repeated failure; it runs again only when an operator queues it (`ci-medic jobs retry`)");
        match self.backend.park(job.id, owner, &msg).await {
            Ok(_) => {
                self.metrics.jobs_parked.inc();
                self.depth_dec();
            }
            Err(e) => error!(error = %e, "cannot record parked job"),
        }
        job.last_error = Some(msg);
    }
}

fn panic_message(join: tokio::task::JoinError) -> String {
    let payload = join.into_panic();
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic".into()
    }
}

/// The running worker pool.
pub struct Workers {
    set: JoinSet<()>,
    alive: Arc<std::sync::atomic::AtomicUsize>,
}

impl Workers {
    /// Starts `n` workers taking jobs off `queue` until `shutdown` is cancelled.
    pub fn start(
        n: usize,
        queue: Arc<Queue>,
        handler: Arc<dyn JobHandler>,
        shutdown: CancellationToken,
    ) -> Workers {
        let alive = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for worker in 0..n {
            let queue = queue.clone();
            let handler = handler.clone();
            let shutdown = shutdown.clone();
            let alive = alive.clone();
            alive.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let owner = format!("{}/{worker}", queue.replica);
            set.spawn(async move {
                while let Some(job) = queue.next(&owner, &shutdown).await {
                    queue.run_one(&owner, job, handler.clone()).await;
                }
                alive.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                tracing::debug!(worker, "worker stopped");
            });
        }
        Workers { set, alive }
    }

    /// Workers still taking jobs.
    pub fn alive(&self) -> Arc<std::sync::atomic::AtomicUsize> {
        self.alive.clone()
    }

    /// Waits for the workers to finish their current job, up to `grace`. Jobs still running
    /// then are abandoned as `Running`: re-run at the next start (sled) or when their lease
    /// ends (PostgreSQL).
    pub async fn drain(mut self, grace: Duration) {
        let all = async { while self.set.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, all).await.is_err() {
            warn!(
                grace_s = grace.as_secs(),
                "jobs still running at the shutdown deadline; they will run again after restart"
            );
            self.set.abort_all();
            // Gone before the caller gives their leases back: an aborted job does not write
            // after another replica took it over.
            while self.set.join_next().await.is_some() {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DeliveryRecord, JobState, NewJob, Store};
    use std::collections::HashSet;
    use std::sync::Mutex;

    struct Recorder {
        log: Mutex<Vec<(String, u64)>>,
        fail_first: Mutex<HashSet<String>>,
        delay: Duration,
    }

    #[async_trait]
    impl JobHandler for Recorder {
        async fn handle(&self, input: JobInput) -> Result<(), JobError> {
            let d = input.job.delivery_id.clone();
            if d.starts_with("panic") {
                panic!("boom in {d}");
            }
            if d.starts_with("perm") {
                return Err(JobError::Permanent("cannot ever work".into()));
            }
            if self.fail_first.lock().unwrap().remove(&d) {
                return Err(JobError::Retry("transient".into()));
            }
            tokio::time::sleep(self.delay).await;
            self.log
                .lock()
                .unwrap()
                .push((input.job.key.clone(), input.job.id));
            Ok(())
        }
    }

    fn accept(store: &Store, q: &Queue, id: &str, key: &str) -> u64 {
        let d = DeliveryRecord {
            id: id.into(),
            event: "check_run".into(),
            action: None,
            received_at: Utc::now(),
            queued: true,
        };
        match store
            .accept_delivery(&d, b"{}", Some(NewJob::delivery(key)))
            .unwrap()
        {
            crate::store::Accepted::New { job_id: Some(j) } => {
                q.job_added();
                j
            }
            other => panic!("{other:?}"),
        }
    }

    /// Answers `Wait` to its first `waits` runs, then succeeds.
    struct Limited {
        calls: std::sync::atomic::AtomicU32,
        waits: u32,
    }

    #[async_trait]
    impl JobHandler for Limited {
        async fn handle(&self, _: JobInput) -> Result<(), JobError> {
            use std::sync::atomic::Ordering::SeqCst;
            if self.calls.fetch_add(1, SeqCst) < self.waits {
                return Err(JobError::Wait {
                    message: "GitHub rate limit".into(),
                    after: Duration::from_millis(20),
                });
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_job_told_to_wait_is_never_parked_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let metrics = Metrics::new();
        let q = Queue::load(Arc::new(store.clone()), metrics.clone(), policy())
            .await
            .unwrap();
        // More waits than the policy's attempts.
        let limited = Arc::new(Limited {
            calls: Default::default(),
            waits: policy().max_attempts + 2,
        });
        accept(&store, &q, "limited-1", "k1");
        let shutdown = CancellationToken::new();
        let workers = Workers::start(1, q.clone(), limited.clone(), shutdown.clone());
        wait_until(|| store.jobs().unwrap().is_empty()).await;
        assert_eq!(
            limited.calls.load(std::sync::atomic::Ordering::SeqCst),
            policy().max_attempts + 3
        );
        assert_eq!(metrics.jobs_parked.get(), 0);
        shutdown.cancel();
        workers.drain(Duration::from_secs(5)).await;
    }

    /// Answers `PushUnrecorded` to every run.
    struct NeverRecorded(std::sync::atomic::AtomicU32);

    #[async_trait]
    impl JobHandler for NeverRecorded {
        async fn handle(&self, _: JobInput) -> Result<(), JobError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(JobError::PushUnrecorded {
                commit: "c0ffee".into(),
            })
        }
    }

    #[tokio::test]
    async fn a_job_another_stage_takes_over_ends_after_its_retries_and_is_not_parked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let metrics = Metrics::new();
        let q = Queue::load(Arc::new(store.clone()), metrics.clone(), policy())
            .await
            .unwrap();
        let handler = Arc::new(NeverRecorded(Default::default()));
        accept(&store, &q, "check-on-unrecorded-push", "k1");
        let shutdown = CancellationToken::new();
        let workers = Workers::start(1, q.clone(), handler.clone(), shutdown.clone());
        wait_until(|| store.jobs().unwrap().is_empty()).await;
        assert_eq!(
            handler.0.load(std::sync::atomic::Ordering::SeqCst),
            policy().max_attempts,
            "retried like any failure first"
        );
        assert_eq!(metrics.jobs_parked.get(), 0);
        assert_eq!(q.depth(), 0);
        shutdown.cancel();
        workers.drain(Duration::from_secs(5)).await;
    }

    #[test]
    fn a_failure_says_itself_whether_to_retry_park_or_wait() {
        let gh = |source| JobError::GitHub {
            what: "reading the pull request",
            source,
        };
        assert!(gh(GitHubError::NotFound).is_permanent());
        assert!(
            gh(GitHubError::Forbidden {
                message: "no".into()
            })
            .is_permanent()
        );
        let server = gh(GitHubError::Server { status: 502 });
        assert!(!server.is_permanent() && server.wait().is_none());
        assert_eq!(
            server.to_string(),
            format!(
                "reading the pull request: {}",
                GitHubError::Server { status: 502 }
            )
        );
        let limited = gh(GitHubError::RateLimited {
            retry_after: Some(Duration::from_secs(30)),
        });
        assert_eq!(limited.wait(), Some(Duration::from_secs(30)));
        assert!(!limited.is_permanent());
        assert!(
            gh(GitHubError::RateLimited { retry_after: None })
                .wait()
                .is_none()
        );
        // The GitHub error stays reachable as the source, typed.
        let source = std::error::Error::source(&server).unwrap();
        assert!(source.downcast_ref::<GitHubError>().is_some());
    }

    /// Hands each job's kind to the test.
    struct Kinds(Mutex<Vec<JobKind>>);

    #[async_trait]
    impl JobHandler for Kinds {
        async fn handle(&self, input: JobInput) -> Result<(), JobError> {
            self.0.lock().unwrap().push(input.job.kind);
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_services_own_jobs_are_typed_queued_once_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let q = Queue::load(Arc::new(store.clone()), Metrics::new(), policy())
            .await
            .unwrap();
        let kind = JobKind::WriteFix {
            repo: "o/r".into(),
            pr: 7,
            check: "lint".into(),
        };
        let job = InternalJob {
            key: "o/r#7".into(),
            kind: kind.clone(),
            id: "fix-o.r-7-lint-DDS-FIX-20260202-001".into(),
        };
        assert!(enqueue(&q, job.clone()).await.unwrap());
        assert!(
            !enqueue(&q, job).await.unwrap(),
            "the same id is queued once"
        );
        let stored = store.jobs().unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(
            (stored[0].kind.clone(), stored[0].event.as_str()),
            (kind.clone(), "ci_medic_write_fix")
        );
        let kinds = Arc::new(Kinds(Mutex::default()));
        let shutdown = CancellationToken::new();
        let workers = Workers::start(1, q.clone(), kinds.clone(), shutdown.clone());
        wait_until(|| store.jobs().unwrap().is_empty()).await;
        assert_eq!(*kinds.0.lock().unwrap(), vec![kind]);
        shutdown.cancel();
        workers.drain(Duration::from_secs(5)).await;
    }

    #[tokio::test]
    async fn a_worker_takes_no_new_job_once_shutdown_is_signalled() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let q = Queue::load(Arc::new(store.clone()), Metrics::new(), policy())
            .await
            .unwrap();
        let shutdown = CancellationToken::new();
        shutdown.cancel();
        // Jobs are ready (different keys, nothing running), and yet none is taken.
        for i in 0..3 {
            accept(&store, &q, &format!("late-{i}"), &format!("k{i}"));
        }
        assert!(q.next("w", &shutdown).await.is_none());
        let recorder = Arc::new(Recorder {
            log: Mutex::new(Vec::new()),
            fail_first: Mutex::new(HashSet::new()),
            delay: Duration::ZERO,
        });
        let workers = Workers::start(2, q.clone(), recorder.clone(), shutdown.clone());
        workers.drain(Duration::from_secs(5)).await;
        assert!(recorder.log.lock().unwrap().is_empty());
        assert_eq!(
            store.jobs().unwrap().len(),
            3,
            "they wait for the next start"
        );
    }

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        }
    }

    async fn wait_until(mut f: impl FnMut() -> bool) {
        for _ in 0..500 {
            if f() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("condition not reached");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn same_key_in_order_other_keys_in_parallel_and_retries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let q = Queue::load(Arc::new(store.clone()), Metrics::new(), policy())
            .await
            .unwrap();
        let rec = Arc::new(Recorder {
            log: Mutex::new(vec![]),
            fail_first: Mutex::new(["a1".to_string()].into()),
            delay: Duration::from_millis(20),
        });
        let ids_a: Vec<u64> = (1..=3)
            .map(|i| accept(&store, &q, &format!("a{i}"), "repo#1"))
            .collect();
        let ids_b: Vec<u64> = (1..=3)
            .map(|i| accept(&store, &q, &format!("b{i}"), "repo#2"))
            .collect();
        let shutdown = CancellationToken::new();
        let workers = Workers::start(3, q.clone(), rec.clone(), shutdown.clone());
        wait_until(|| rec.log.lock().unwrap().len() == 6).await;
        let log = rec.log.lock().unwrap().clone();
        let order_a: Vec<u64> = log
            .iter()
            .filter(|(k, _)| k == "repo#1")
            .map(|(_, i)| *i)
            .collect();
        let order_b: Vec<u64> = log
            .iter()
            .filter(|(k, _)| k == "repo#2")
            .map(|(_, i)| *i)
            .collect();
        assert_eq!(
            order_a, ids_a,
            "a1 failed once and was retried before a2 ran"
        );
        assert_eq!(order_b, ids_b);
        // b jobs did not wait for a1's backoff.
        assert!(log.iter().position(|(k, _)| k == "repo#2").unwrap() < 2);
        shutdown.cancel();
        workers.drain(Duration::from_secs(5)).await;
        assert!(store.jobs().unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failing_and_panicking_jobs_are_parked_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let metrics = Metrics::new();
        let q = Queue::load(Arc::new(store.clone()), metrics.clone(), policy())
            .await
            .unwrap();
        let rec = Arc::new(Recorder {
            log: Mutex::new(vec![]),
            fail_first: Mutex::new(HashSet::new()),
            delay: Duration::ZERO,
        });
        accept(&store, &q, "panic-1", "k1");
        accept(&store, &q, "perm-1", "k2");
        accept(&store, &q, "ok-1", "k1");
        let shutdown = CancellationToken::new();
        let workers = Workers::start(2, q.clone(), rec.clone(), shutdown.clone());
        wait_until(|| {
            let jobs = store.jobs().unwrap();
            jobs.len() == 2 && jobs.iter().all(|j| j.state == JobState::Parked)
        })
        .await;
        wait_until(|| rec.log.lock().unwrap().len() == 1).await;
        let jobs = store.jobs().unwrap();
        let panicked = jobs.iter().find(|j| j.delivery_id == "panic-1").unwrap();
        assert_eq!(panicked.attempts, 3);
        assert!(panicked.last_error.as_deref().unwrap().contains("boom"));
        let perm = jobs.iter().find(|j| j.delivery_id == "perm-1").unwrap();
        assert_eq!(perm.attempts, 1);
        assert_eq!(metrics.jobs_parked.get(), 2);
        shutdown.cancel();
        workers.drain(Duration::from_secs(5)).await;
    }

    #[test]
    fn backoff_grows_and_caps() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(60),
        };
        for (attempts, most) in [(1, 2), (2, 4), (3, 8), (30, 60)] {
            let most = Duration::from_secs(most);
            let d = p.backoff(attempts);
            assert!(d <= most && d >= most / 2, "attempt {attempts}: {d:?}");
        }
    }
}
