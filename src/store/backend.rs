//! One interface over the two places state can live: the embedded sled store (the default,
//! one process) and PostgreSQL (`DATABASE_URL`, any number of replicas).
//!
//! The interface is made of domain operations, as [`super::Store`]'s are: accept a delivery
//! (durable when it returns), claim the next runnable job under a lease, finish, retry or park
//! it, take a DDS number, hold a named lease. Each operation is atomic on both backends; none
//! hands out bytes or rows for the caller to interpret. Adding a piece of state means adding
//! an operation here and implementing it twice, with its test in the shared suite
//! (`tests/store_backends.rs`) so both backends answer it the same way.
//!
//! It must never decide anything about a job's outcome (the worker does) nor log payloads.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};

use super::registry::{IdKind, RegistryError};
use super::{Accepted, DeliveryRecord, JobRecord, JobState, NewJob, Requeue, Store, StoreError};

/// How a claimed job goes back to the queue after a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The run counts against the retry budget (it failed).
    Spent,
    /// It does not: the job was told to wait (a rate limit), which is not failing.
    Refunded,
}

/// State shared by every replica. Cheap to clone behind an `Arc`.
/// What [`Backend::release_all`] gave back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Released {
    /// Named (singleton) leases.
    pub leases: u64,
    /// Running jobs.
    pub jobs: u64,
}

#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// `sled` or `postgresql`, for logs and `/readyz`.
    fn name(&self) -> &'static str;

    /// Records a delivery and its job unless its id is known, durably before it returns: a
    /// 2xx may follow. A redelivery, to this process or another replica, is a duplicate.
    async fn accept(
        &self,
        delivery: &DeliveryRecord,
        payload: &[u8],
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError>;

    /// The payload of a delivery that queued a job.
    async fn payload(&self, delivery_id: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Takes the oldest runnable job: due, the first live job of its key, its key not running
    /// anywhere. It is marked running for `owner` until `lease` from now, and the run counted
    /// in its attempts. A job whose lease ran out (its replica died) is runnable again, at
    /// once and without a new attempt: a run cut off by its process's death never reported a
    /// failure, and it hands its attempt to the run that replaces it (sled does the same in
    /// [`Backend::requeue_interrupted`]). So attempts count runs that ended or are running,
    /// and only a reported failure moves a job towards its back-off and parking, however many
    /// replicas die under it.
    async fn claim(&self, owner: &str, lease: Duration) -> Result<Option<JobRecord>, StoreError>;

    /// Extends the lease of a running job; `false` when `owner` no longer holds it.
    async fn heartbeat(&self, id: u64, owner: &str, lease: Duration) -> Result<bool, StoreError>;

    /// The job succeeded: it is removed (its delivery id stays, for de-duplication).
    /// `false` when `owner` no longer held it.
    async fn finish(&self, id: u64, owner: &str) -> Result<bool, StoreError>;

    /// The run failed or was told to wait: queued again, not before `after` from now.
    async fn retry_later(
        &self,
        id: u64,
        owner: &str,
        after: Duration,
        error: &str,
        attempt: Attempt,
    ) -> Result<bool, StoreError>;

    /// The job failed for good: kept with its error, run again only by an operator.
    async fn park(&self, id: u64, owner: &str, error: &str) -> Result<bool, StoreError>;

    /// Every job, in id order (`ci-medic jobs list`).
    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError>;

    /// `ci-medic jobs retry`: a parked job queued again, attempts reset.
    async fn requeue_parked(&self, id: u64) -> Result<Requeue, StoreError>;

    /// The next per-day DDS number of `kind`: never the same twice, whoever asks at once.
    async fn next_seq(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError>;

    /// Takes or renews the named lease for `owner` until `ttl` from now; `false` while
    /// another owner holds it. Singletons (the CI monitor's reconciliation, sweeps) run only
    /// on the replica holding theirs.
    async fn try_lease(&self, name: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError>;

    /// A graceful shutdown gives back what `replica` holds: its named leases (owner
    /// `replica`) and the leases of its jobs still running (owner `replica/…`, a worker's), so
    /// another replica takes them at once instead of after they lapse. A job given back is
    /// taken over as one whose lease lapsed: its attempts kept (see [`Backend::claim`]). On
    /// sled there is one process and nothing to give back: its next start requeues the jobs.
    async fn release_all(&self, replica: &str) -> Result<Released, StoreError>;

    /// Forgets delivery ids received before `cutoff` whose job is gone.
    async fn prune_deliveries(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError>;

    /// The database answers now.
    async fn healthy(&self) -> bool;

    /// Readiness for `/readyz`: the database answers and takes writes. `Err` says why not.
    async fn ready(&self) -> Result<(), String>;

    /// When a worker pool starts: jobs left running by a dead process are queued again, their
    /// cut-off run not counted as an attempt (see [`Backend::claim`]). Sled does it here; on
    /// PostgreSQL a job is runnable again when its lease runs out, and running jobs of other
    /// replicas are left alone.
    async fn requeue_interrupted(&self) -> Result<usize, StoreError>;

    /// Jobs waiting or running, and jobs parked (metrics, `/readyz`).
    async fn counts(&self) -> Result<JobCounts, StoreError>;

    /// The proposal registry and the fix runs kept beside this state.
    fn fix_state(&self) -> Result<super::proposals::FixState, StoreError>;

    /// Makes everything durable and lets go of the database (shutdown).
    async fn close(&self) -> Result<(), StoreError>;

    /// Whether a delivery with this id (`X-GitHub-Delivery`) was accepted and is still
    /// remembered (the redelivery pass never asks for one held).
    async fn has_delivery(&self, id: &str) -> Result<bool, StoreError>;

    /// When the newest webhook delivery from GitHub (not an internal job) was received: what
    /// came after it while the service was down may have been missed.
    async fn newest_webhook_at(&self) -> Result<Option<DateTime<Utc>>, StoreError>;
}

/// What [`Backend::counts`] reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobCounts {
    /// Queued or running.
    pub live: u64,
    pub parked: u64,
}

impl Store {
    /// Whether this process runs job `id`; with `forget`, it no longer does.
    fn release(&self, id: u64, forget: bool) -> bool {
        let mut running = self
            .inner
            .running
            .lock()
            .expect("running jobs lock poisoned");
        if forget {
            running.remove(&id).is_some()
        } else {
            running.contains_key(&id)
        }
    }
}

/// Sled: one process holds the database, so "running" needs no lease (a job found running at
/// start-up was interrupted, and [`Store::requeue_interrupted`] queues it again), `owner`
/// is not checked, and every named lease is this process's.
#[async_trait]
impl Backend for Store {
    fn name(&self) -> &'static str {
        "sled"
    }

    async fn has_delivery(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.delivery(id)?.is_some())
    }

    async fn newest_webhook_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        self.newest_webhook_received_at()
    }

    async fn accept(
        &self,
        delivery: &DeliveryRecord,
        payload: &[u8],
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError> {
        let accepted = self.accept_delivery(delivery, payload, job)?;
        self.durable().await?;
        Ok(accepted)
    }

    async fn payload(&self, delivery_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Store::payload(self, delivery_id)
    }

    async fn claim(&self, _owner: &str, _lease: Duration) -> Result<Option<JobRecord>, StoreError> {
        // `accept_delivery` writes a job before its delivery record (crash order), under this
        // lock: a worker that saw the job without it would find no payload and park a good
        // delivery. Holding it here makes every job this scan sees fully accepted.
        let _accepting = self.inner.accept_lock.lock().expect("accept lock poisoned");
        let mut running = self
            .inner
            .running
            .lock()
            .expect("running jobs lock poisoned");
        let now = Utc::now();
        let mut blocked: std::collections::HashSet<String> = running.values().cloned().collect();
        // In id order, decoding only up to the first runnable job: with a backlog, the
        // oldest job is usually it.
        for item in self.inner.jobs.iter() {
            let (k, v) = item?;
            let mut job: JobRecord = super::decode(&k, &v)?;
            if job.state != JobState::Queued || blocked.contains(&job.key) {
                continue;
            }
            // The first live job of a key holds the key, due or not: order is kept.
            blocked.insert(job.key.clone());
            if job.not_before.is_some_and(|nb| nb > now) {
                continue;
            }
            job.state = JobState::Running;
            job.attempts += 1;
            self.put_job(&job)?;
            running.insert(job.id, job.key.clone());
            return Ok(Some(job));
        }
        Ok(None)
    }

    async fn heartbeat(&self, id: u64, _owner: &str, _lease: Duration) -> Result<bool, StoreError> {
        Ok(self.release(id, false))
    }

    async fn finish(&self, id: u64, _owner: &str) -> Result<bool, StoreError> {
        if !self.release(id, true) {
            return Ok(false);
        }
        self.finish_job(id)?;
        Ok(true)
    }

    async fn retry_later(
        &self,
        id: u64,
        _owner: &str,
        after: Duration,
        error: &str,
        attempt: Attempt,
    ) -> Result<bool, StoreError> {
        let Some(mut job) = self.job(id)?.filter(|j| j.state == JobState::Running) else {
            return Ok(false);
        };
        job.state = JobState::Queued;
        job.not_before = Some(Utc::now() + chrono::Duration::from_std(after).unwrap_or_default());
        job.last_error = Some(error.to_string());
        if attempt == Attempt::Refunded {
            job.attempts = job.attempts.saturating_sub(1);
        }
        self.put_job(&job)?;
        self.release(id, true);
        Ok(true)
    }

    async fn park(&self, id: u64, _owner: &str, error: &str) -> Result<bool, StoreError> {
        let Some(mut job) = self.job(id)?.filter(|j| j.state == JobState::Running) else {
            return Ok(false);
        };
        job.state = JobState::Parked;
        job.last_error = Some(error.to_string());
        self.put_job(&job)?;
        self.release(id, true);
        Ok(true)
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        Store::jobs(self)
    }

    async fn requeue_parked(&self, id: u64) -> Result<Requeue, StoreError> {
        Store::requeue_parked(self, id)
    }

    async fn next_seq(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
        self.registry()?.next_seq(kind, day)
    }

    async fn try_lease(
        &self,
        _name: &str,
        _owner: &str,
        _ttl: Duration,
    ) -> Result<bool, StoreError> {
        Ok(true)
    }

    async fn release_all(&self, _replica: &str) -> Result<Released, StoreError> {
        Ok(Released::default())
    }

    async fn prune_deliveries(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        Store::prune_deliveries(self, cutoff)
    }

    async fn healthy(&self) -> bool {
        self.is_healthy()
    }

    async fn ready(&self) -> Result<(), String> {
        let store = self.clone();
        match tokio::task::spawn_blocking(move || store.can_write()).await {
            Ok(true) => Ok(()),
            _ => Err("cannot write to DATA_DIR".into()),
        }
    }

    async fn requeue_interrupted(&self) -> Result<usize, StoreError> {
        Store::requeue_interrupted(self)
    }

    async fn counts(&self) -> Result<JobCounts, StoreError> {
        let mut c = JobCounts::default();
        for job in Store::jobs(self)? {
            match job.state {
                JobState::Parked => c.parked += 1,
                _ => c.live += 1,
            }
        }
        Ok(c)
    }

    fn fix_state(&self) -> Result<super::proposals::FixState, StoreError> {
        super::proposals::FixState::sled(self)
    }

    async fn close(&self) -> Result<(), StoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.flush_blocking())
            .await
            .map_err(|_| StoreError::FlusherGone)?
    }
}
