//! The store: ci-medic's only persistent state, a sled database in `DATA_DIR`.
//!
//! This module is the only one that imports sled. It exposes domain operations (accept a
//! delivery, claim and finish jobs), not trees and bytes, so the rest of the service cannot
//! leave a half-written record behind.
//!
//! Accepted deliveries are written ahead to the [`spool`] (append-only segment files holding
//! each delivery's metadata and payload); sled holds the small records (deliveries, jobs) that
//! the rest of the service reads, the payload's location among them.
//!
//! Durability: [`Store::durable`] waits until every delivery accepted before the call is on
//! disk, which needs only the spool's sync. Concurrent callers share one sync (group commit),
//! so persisting every webhook before answering costs one fsync per batch of requests, not one
//! per request. Sled is flushed in the background, and a checkpoint records how far into the
//! spool its contents are durable; after a crash, [`Store::open`] replays the deliveries past
//! the checkpoint that sled lost. A sled record whose payload did not survive was never
//! acknowledged (that waits for the spool): open drops it, and GitHub's redelivery is accepted.
//! Other writes (job states, the registry) are durable within [`CHECKPOINT_EVERY`].
//!
//! It must never hold a payload or secret in a log line, and never block the async runtime on a
//! flush: flushes run on a thread of their own.

pub mod backend;
pub mod installations;
pub mod pg;
pub mod pg_proposals;
pub mod pg_shared_state;
pub mod proposals;
pub mod registry;
pub mod runs;
pub mod sealing;
pub mod shared_state;
pub mod spool;
pub mod triage;
pub mod web_state;

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

/// Errors from the store. The message never contains payload bytes.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sled(#[from] sled::Error),
    #[error("stored record `{key}` is unreadable: {source}")]
    Corrupt {
        key: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("the store's flusher has stopped")]
    FlusherGone,
    #[error("flushing to disk failed: {0}")]
    Flush(String),
    #[error(transparent)]
    Spool(#[from] spool::SpoolError),
    /// No `#[source]`: the message carries sqlx's, once (sqlx's own chain repeats it).
    #[error("PostgreSQL (DATABASE_URL): {0}")]
    Postgres(sqlx::Error),
    #[error("PostgreSQL migrations (DATABASE_URL): {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A fix run was written by someone else (another replica, another job) since it was read
    /// at version `read`: nothing was written; read it again.
    #[error(
        "fix run `{key}` changed since it was read (version {read}, now {found}); read it again"
    )]
    RunChanged { key: String, read: u64, found: u64 },
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        StoreError::Postgres(e)
    }
}

/// What the intake knows about a delivery when it accepts it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeliveryRecord {
    /// `X-GitHub-Delivery`.
    pub id: String,
    /// `X-GitHub-Event`.
    pub event: String,
    pub action: Option<String>,
    pub received_at: DateTime<Utc>,
    /// Whether a job was queued for it (false for acknowledged-and-ignored deliveries).
    pub queued: bool,
}

/// Where a job is in its life. Finished jobs are deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a worker (possibly not before `not_before`).
    Queued,
    /// A worker has it. Found in this state at start-up, it was interrupted and is run again.
    Running,
    /// Failed too often; kept with its error for an operator, never run again automatically.
    Parked,
}

/// What [`Store::requeue_parked`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    Requeued,
    /// No such job (finished jobs are deleted).
    Missing,
    /// The job is not parked: it is queued or running already.
    NotParked(JobState),
}

/// What a job does. Records written before jobs had kinds have none: they are deliveries
/// (the old CI reconciliation, stored as a delivery of the `ci_medic_reconcile` event, is
/// still understood by the handler).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobKind {
    /// Process one accepted webhook delivery; its payload is in the spool.
    #[default]
    Delivery,
    /// Write the approved fix of a check's run on a pull request, and push it.
    WriteFix {
        repo: String,
        pr: u64,
        check: String,
    },
    /// Build the approved fix's prepared commit `commit` in the Docker sandbox
    /// (`verify: docker`). Queued under its own key: the build holds no pull request's lock
    /// and keeps none of its other jobs waiting.
    VerifyFix {
        repo: String,
        pr: u64,
        check: String,
        commit: String,
    },
    /// CI monitor: move on a run no webhook moved (resume an approved fix after a restart,
    /// poll CI for a pushed one whose result was missed).
    Reconcile {
        repo: String,
        pr: u64,
        check: String,
    },
}

impl JobKind {
    /// The name the job is logged and counted under (a delivery's is its event's).
    pub fn event_name(&self) -> Option<&'static str> {
        match self {
            JobKind::Delivery => None,
            JobKind::WriteFix { .. } => Some("ci_medic_write_fix"),
            JobKind::VerifyFix { .. } => Some("ci_medic_verify_fix"),
            JobKind::Reconcile { .. } => Some("ci_medic_reconcile"),
        }
    }
}

/// A unit of work: process one accepted delivery, or one of the service's own jobs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: u64,
    pub delivery_id: String,
    pub event: String,
    #[serde(default)]
    pub kind: JobKind,
    pub action: Option<String>,
    /// Serialisation key: jobs with the same key run one at a time, in id order
    /// (one pull request, one installation…).
    pub key: String,
    pub state: JobState,
    pub attempts: u32,
    pub enqueued_at: DateTime<Utc>,
    pub not_before: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

/// A delivery record as stored: what the intake knew, plus where its payload is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredDelivery {
    #[serde(flatten)]
    record: DeliveryRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    payload: Option<spool::PayloadRef>,
}

/// What the spool keeps of a delivery beside its payload: enough to rebuild its sled records.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SpoolMeta {
    delivery: DeliveryRecord,
    /// The job's serialisation key, when a job was queued.
    job_key: Option<String>,
    /// The job's kind (absent in records written before kinds: a delivery).
    #[serde(default)]
    job_kind: JobKind,
}

/// Outcome of [`Store::accept_delivery`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    /// New delivery; the job id when one was queued.
    New { job_id: Option<u64> },
    /// The delivery id was seen before (a redelivery); nothing was written.
    Duplicate,
}

/// A queued job to create together with its delivery.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub key: String,
    pub kind: JobKind,
}

impl NewJob {
    /// The job of a webhook delivery, serialised on `key`.
    pub fn delivery(key: impl Into<String>) -> NewJob {
        NewJob {
            key: key.into(),
            kind: JobKind::Delivery,
        }
    }
}

/// Handle to the database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: sled::Db,
    spool: spool::Spool,
    deliveries: sled::Tree,
    /// Payloads written by versions before the spool; read, pruned, never written.
    legacy_payloads: sled::Tree,
    jobs: sled::Tree,
    /// Held across "append to the spool, then insert into sled", so a checkpoint position
    /// taken under it has every record before it already in sled.
    accept_lock: Mutex<()>,
    /// Jobs this process runs (id → key), held while a worker picks and marks its next job
    /// ([`backend::Backend::claim`]): one process owns sled, so this is every running job.
    running: Mutex<std::collections::HashMap<u64, String>>,
    flush_tx: mpsc::UnboundedSender<oneshot::Sender<Result<(), String>>>,
}

/// How often sled is flushed and the spool checkpoint advanced.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
const CHECKPOINT_KEY: &[u8] = b"spool_checkpoint";

const DELIVERIES: &str = "deliveries";
const PAYLOADS: &str = "payloads";
const JOBS: &str = "jobs";

impl Store {
    /// Opens (or creates) the database in `dir` and starts the group-commit flusher thread
    /// (which ends when the last handle is dropped).
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Sled(sled::Error::Io(e)))?;
        let db = sled::Config::new()
            .path(dir.join("db"))
            .flush_every_ms(Some(500))
            .open()?;
        let spool = spool::Spool::open(&dir.join("spool"))?;
        let deliveries = db.open_tree(DELIVERIES)?;
        let legacy_payloads = db.open_tree(PAYLOADS)?;
        let jobs = db.open_tree(JOBS)?;
        let (flush_tx, flush_rx) = mpsc::unbounded_channel();
        {
            let spool = spool.clone();
            std::thread::Builder::new()
                .name("ci-medic-flush".into())
                .spawn(move || run_flusher(spool, flush_rx))
                .map_err(|e| StoreError::Sled(sled::Error::Io(e)))?;
        }
        let store = Store {
            inner: Arc::new(Inner {
                db,
                spool,
                deliveries,
                legacy_payloads,
                jobs,
                accept_lock: Mutex::new(()),
                running: Mutex::default(),
                flush_tx,
            }),
        };
        store.drop_unacknowledged()?;
        store.drop_orphan_jobs()?;
        store.replay()?;
        store.checkpoint()?;
        let weak = Arc::downgrade(&store.inner);
        std::thread::Builder::new()
            .name("ci-medic-checkpoint".into())
            .spawn(move || run_checkpointer(weak))
            .map_err(|e| StoreError::Sled(sled::Error::Io(e)))?;
        Ok(store)
    }

    /// A job without its delivery record is what a crash between the two inserts of
    /// [`Store::insert_accepted`] leaves. Its delivery, if acknowledged, is in the spool past
    /// the checkpoint, and the replay re-creates both; otherwise it was never acknowledged.
    fn drop_orphan_jobs(&self) -> Result<(), StoreError> {
        for job in self.jobs()? {
            if !self
                .inner
                .deliveries
                .contains_key(job.delivery_id.as_bytes())?
            {
                tracing::warn!(
                    delivery = %job.delivery_id,
                    job_id = job.id,
                    "removing a job whose delivery record was lost in a crash (the spool replay restores it if it was acknowledged)"
                );
                self.inner.jobs.remove(job.id.to_be_bytes())?;
            }
        }
        Ok(())
    }

    /// Re-creates the sled records of deliveries past the checkpoint that sled lost in a crash
    /// (they were acknowledged once their spool record was durable).
    fn replay(&self) -> Result<(), StoreError> {
        let from = self.checkpoint_position()?;
        let mut lost = Vec::new();
        let mut unreadable = 0;
        self.inner.spool.scan_from(from, |at, record| {
            match serde_json::from_slice::<SpoolMeta>(&record.meta) {
                Ok(meta) => lost.push((at, meta)),
                Err(_) => unreadable += 1,
            }
        })?;
        if unreadable > 0 {
            tracing::error!(
                records = unreadable,
                "spool records with unreadable metadata were skipped"
            );
        }
        let mut restored = 0;
        for (at, meta) in lost {
            if self
                .inner
                .deliveries
                .contains_key(meta.delivery.id.as_bytes())?
            {
                continue;
            }
            let kind = meta.job_kind;
            let job = meta.job_key.map(|key| NewJob { key, kind });
            if let Accepted::New { .. } = self.insert_accepted(&meta.delivery, at, job)? {
                restored += 1;
            }
        }
        if restored > 0 {
            tracing::warn!(
                restored,
                "restored deliveries that were acknowledged but not yet in the database when the process stopped"
            );
        }
        Ok(())
    }

    fn checkpoint_position(&self) -> Result<spool::SpoolPos, StoreError> {
        match self.inner.db.get(CHECKPOINT_KEY)? {
            Some(v) => decode(CHECKPOINT_KEY, &v),
            None => Ok(spool::SpoolPos {
                segment: 0,
                offset: 0,
            }),
        }
    }

    /// Makes sled durable up to the spool's current end and records that position.
    fn checkpoint(&self) -> Result<(), StoreError> {
        let pos = {
            let _held = self.inner.accept_lock.lock().expect("accept lock poisoned");
            self.inner.spool.position()
        };
        self.inner.db.flush()?;
        // Durable with the next flush; until then the previous checkpoint (earlier) holds.
        self.inner.db.insert(
            CHECKPOINT_KEY,
            serde_json::to_vec(&pos).expect("position serialises"),
        )?;
        Ok(())
    }

    /// Jobs whose payload did not survive a crash belong to deliveries that were never
    /// acknowledged (acknowledgement waits for the spool's sync). Forget them, delivery id
    /// included, so GitHub's redelivery is accepted instead of refused as a duplicate.
    fn drop_unacknowledged(&self) -> Result<(), StoreError> {
        for job in self.jobs()? {
            if let Err(StoreError::Spool(spool::SpoolError::Corrupt { .. })) =
                self.payload(&job.delivery_id)
            {
                tracing::warn!(
                    delivery = %job.delivery_id,
                    job_id = job.id,
                    "dropping a delivery whose payload was cut short by a crash before it was acknowledged"
                );
                self.inner.jobs.remove(job.id.to_be_bytes())?;
                self.inner.deliveries.remove(job.delivery_id.as_bytes())?;
            }
        }
        self.inner.db.flush()?;
        Ok(())
    }

    /// The raw database, for the sub-stores of other stages (registry, fix runs) that open
    /// their own trees. Only `store::*` modules may call this.
    pub(crate) fn db(&self) -> &sled::Db {
        &self.inner.db
    }

    /// The DDS registry stored in this database.
    pub fn registry(&self) -> Result<registry::Registry, registry::RegistryError> {
        registry::Registry::open(&self.inner.db)
    }

    /// The record of installations and their repositories.
    pub fn installations(&self) -> Result<installations::Installations, StoreError> {
        installations::Installations::open(self)
    }

    /// Waits until every delivery accepted before this call is durable on disk.
    pub async fn durable(&self) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .flush_tx
            .send(tx)
            .map_err(|_| StoreError::FlusherGone)?;
        rx.await
            .map_err(|_| StoreError::FlusherGone)?
            .map_err(StoreError::Flush)
    }

    /// Flushes everything synchronously (shutdown).
    pub fn flush_blocking(&self) -> Result<(), StoreError> {
        self.inner.spool.sync()?;
        self.checkpoint()?;
        self.inner.db.flush()?;
        Ok(())
    }

    /// Records a delivery and (optionally) its job, unless the delivery id is already known:
    /// first in the spool (metadata, and the payload when a job is queued), then its records in
    /// sled (`insert_accepted` says why not in a sled transaction). The check for a
    /// known id and both writes happen under one lock, so racing redeliveries queue one job.
    /// Not yet durable: call [`Store::durable`] before answering.
    pub fn accept_delivery(
        &self,
        delivery: &DeliveryRecord,
        payload: &[u8],
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError> {
        let meta = SpoolMeta {
            delivery: delivery.clone(),
            job_key: job.as_ref().map(|j| j.key.clone()),
            job_kind: job.as_ref().map(|j| j.kind.clone()).unwrap_or_default(),
        };
        let meta = serde_json::to_vec(&meta).expect("spool metadata serialises");
        // Only a job reads the payload; an ignored delivery is kept for de-duplication only.
        let payload = if job.is_some() { payload } else { b"" };
        let _held = self.inner.accept_lock.lock().expect("accept lock poisoned");
        if self.inner.deliveries.contains_key(delivery.id.as_bytes())? {
            return Ok(Accepted::Duplicate);
        }
        let at = self.inner.spool.append(&meta, payload)?;
        self.insert_accepted(delivery, at, job)
    }

    /// The sled half of accepting a delivery (also used by the replay). The caller has made
    /// sure the delivery id is new.
    fn insert_accepted(
        &self,
        delivery: &DeliveryRecord,
        at: spool::PayloadRef,
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError> {
        let key = delivery.id.as_bytes();
        let job_id = match job {
            Some(_) => Some(self.inner.db.generate_id()?),
            None => None,
        };
        let stored = StoredDelivery {
            record: delivery.clone(),
            payload: job.is_some().then_some(at),
        };
        let delivery_json = serde_json::to_vec(&stored).expect("delivery serialises");
        let job_json = job.map(|j| {
            let rec = JobRecord {
                id: job_id.expect("id allocated"),
                delivery_id: delivery.id.clone(),
                event: delivery.event.clone(),
                kind: j.kind,
                action: delivery.action.clone(),
                key: j.key,
                state: JobState::Queued,
                attempts: 0,
                enqueued_at: delivery.received_at,
                not_before: None,
                last_error: None,
            };
            serde_json::to_vec(&rec).expect("job serialises")
        });
        // No sled transaction: each one writes and syncs sled's log buffer twice (perf: two
        // `sync_file_range` per delivery). The spool is the atomic record; sled recovers a
        // prefix of its writes, so the job goes first and a delivery record never survives a
        // crash without its job. A job whose delivery record did not is removed at open and
        // re-created by the replay.
        if let (Some(id), Some(job)) = (job_id, &job_json) {
            self.inner.jobs.insert(id.to_be_bytes(), job.as_slice())?;
        }
        self.inner.deliveries.insert(key, delivery_json)?;
        Ok(Accepted::New { job_id })
    }

    pub fn delivery(&self, id: &str) -> Result<Option<DeliveryRecord>, StoreError> {
        Ok(get_json::<StoredDelivery>(&self.inner.deliveries, id.as_bytes())?.map(|d| d.record))
    }

    /// When the newest webhook delivery was received (the service's own jobs, recorded as
    /// deliveries of `ci_medic_*` events, do not count). Reads every record: call it once, at
    /// start-up, not per delivery.
    pub fn newest_webhook_received_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let mut newest: Option<DateTime<Utc>> = None;
        for item in self.inner.deliveries.iter() {
            let (k, v) = item?;
            let d: StoredDelivery = decode(&k, &v)?;
            if d.record.event.starts_with("ci_medic_") {
                continue;
            }
            newest = newest.max(Some(d.record.received_at));
        }
        Ok(newest)
    }

    /// The payload of a delivery that queued a job; `None` once pruned (or never stored).
    pub fn payload(&self, delivery_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = delivery_id.as_bytes();
        match get_json::<StoredDelivery>(&self.inner.deliveries, key)? {
            Some(StoredDelivery {
                payload: Some(at), ..
            }) => Ok(self.inner.spool.read(at)?.map(|r| r.payload)),
            _ => Ok(self.inner.legacy_payloads.get(key)?.map(|v| v.to_vec())),
        }
    }

    pub fn job(&self, id: u64) -> Result<Option<JobRecord>, StoreError> {
        get_json(&self.inner.jobs, &id.to_be_bytes())
    }

    /// All jobs, in id order.
    pub fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let mut out = Vec::new();
        for item in self.inner.jobs.iter() {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// At start-up: jobs left `Running` by a dead process go back to `Queued`.
    pub fn requeue_interrupted(&self) -> Result<usize, StoreError> {
        let mut n = 0;
        for mut job in self.jobs()? {
            if job.state == JobState::Running {
                job.state = JobState::Queued;
                // The cut-off run never reported: it was no attempt (`Backend::claim`).
                job.attempts = job.attempts.saturating_sub(1);
                self.put_job(&job)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// Puts a parked job back in the queue with its attempts reset, for an operator who has
    /// fixed the cause (`ci-medic jobs retry`). Its last error stays until it runs again. The
    /// queue picks it up at the next start.
    pub fn requeue_parked(&self, id: u64) -> Result<Requeue, StoreError> {
        let Some(mut job) = self.job(id)? else {
            return Ok(Requeue::Missing);
        };
        if job.state != JobState::Parked {
            return Ok(Requeue::NotParked(job.state));
        }
        job.state = JobState::Queued;
        job.attempts = 0;
        job.not_before = None;
        self.put_job(&job)?;
        Ok(Requeue::Requeued)
    }

    pub fn put_job(&self, job: &JobRecord) -> Result<(), StoreError> {
        let v = serde_json::to_vec(job).expect("job serialises");
        self.inner.jobs.insert(job.id.to_be_bytes(), v)?;
        Ok(())
    }

    /// A job finished: it is removed. Its delivery record stays (for de-duplication) until
    /// [`Store::prune_deliveries`] drops it.
    pub fn finish_job(&self, id: u64) -> Result<(), StoreError> {
        self.inner.jobs.remove(id.to_be_bytes())?;
        Ok(())
    }

    /// Drops delivery records and payloads received before `cutoff` whose job is gone, then
    /// the spool segments no remaining delivery points to. GitHub redelivers only recent
    /// deliveries, so old ids are no longer needed for dedupe.
    /// Every delivery id still remembered, with what the intake knew (`ci-medic migrate
    /// --from-sled` carries the de-duplication over).
    pub fn deliveries(&self) -> Result<Vec<DeliveryRecord>, StoreError> {
        self.inner
            .deliveries
            .iter()
            .map(|item| {
                let (k, v) = item?;
                Ok(decode::<StoredDelivery>(&k, &v)?.record)
            })
            .collect()
    }

    pub fn prune_deliveries(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let live: std::collections::HashSet<String> =
            self.jobs()?.into_iter().map(|j| j.delivery_id).collect();
        let mut referenced = std::collections::BTreeSet::new();
        let mut n = 0;
        for item in self.inner.deliveries.iter() {
            let (k, v) = item?;
            let d: StoredDelivery = decode(&k, &v)?;
            if d.record.received_at < cutoff && !live.contains(&d.record.id) {
                self.inner.deliveries.remove(&k)?;
                self.inner.legacy_payloads.remove(&k)?;
                n += 1;
            } else if let Some(at) = d.payload {
                referenced.insert(at.segment);
            }
        }
        // The replay reads from the checkpoint on: those segments stay whatever they hold.
        let keep_from = self.checkpoint_position()?.segment;
        let segments = self.inner.spool.retain(&referenced, keep_from)?;
        if segments > 0 {
            tracing::info!(
                segments,
                "deleted payload spool segments no delivery refers to"
            );
        }
        Ok(n)
    }

    /// A cheap read proving the database answers.
    pub fn is_healthy(&self) -> bool {
        self.inner.jobs.first().is_ok()
    }

    /// Readiness: the database answers and `DATA_DIR` takes a new block now. A full disk
    /// made every delivery fail with 503 while readiness stayed green; a probe that allocates
    /// (a fresh file, one 4 KiB block, synced, removed) fails exactly when a spool append
    /// would, and passes again as soon as space returns. Blocking: call it off the runtime.
    pub fn can_write(&self) -> bool {
        use std::io::Write;
        if !self.is_healthy() {
            return false;
        }
        let probe = self.inner.spool.dir().join(".write-probe");
        let wrote = std::fs::File::create(&probe)
            .and_then(|mut f| {
                f.write_all(&[0u8; 4096])?;
                f.sync_data()
            })
            .is_ok();
        let _ = std::fs::remove_file(&probe);
        wrote
    }
}

pub(crate) fn get_json<T: serde::de::DeserializeOwned>(
    tree: &sled::Tree,
    key: &[u8],
) -> Result<Option<T>, StoreError> {
    match tree.get(key)? {
        Some(v) => Ok(Some(decode(key, &v)?)),
        None => Ok(None),
    }
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    key: &[u8],
    v: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(v).map_err(|source| StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        source,
    })
}

/// Group commit: each round takes every waiter queued so far, syncs the spool once, and
/// answers them all. Appends made before a waiter queued itself are covered by any round that
/// starts after.
///
/// It runs on a thread of its own, not on the runtime: a round is a blocking sync, and a
/// dedicated thread costs fewer wake-ups per round than handing it to a blocking pool.
fn run_flusher(
    spool: spool::Spool,
    mut rx: mpsc::UnboundedReceiver<oneshot::Sender<Result<(), String>>>,
) {
    let mut batch = Vec::new();
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        let res = spool.sync().map_err(|e| e.to_string());
        for w in batch.drain(..) {
            let _ = w.send(res.clone());
        }
    }
}

/// Every [`CHECKPOINT_EVERY`], flushes sled and advances the spool checkpoint, so a restart
/// replays only the last moments. Ends when the store is dropped.
fn run_checkpointer(inner: Weak<Inner>) {
    loop {
        std::thread::sleep(CHECKPOINT_EVERY);
        let Some(inner) = inner.upgrade() else { return };
        if let Err(e) = (Store { inner }).checkpoint() {
            tracing::error!(error = %e, "store checkpoint failed; will retry");
        }
    }
}

/// How long delivery ids are kept for de-duplication (GitHub redelivers for a few days).
/// Reply marks are kept as long: a retried or redelivered command job can only come while its
/// delivery id is remembered.
pub const DELIVERY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// How long a finished fix run (its proposal executed, failed, rejected or closed) is kept
/// after its last change. The proposal registry keeps the DDS records for good. Past this, a
/// check that fails again on that pull request starts a new run, with a new comment: the old
/// one is no longer known to be ci-medic's to edit.
pub const RUN_RETENTION: Duration = Duration::from_secs(30 * 24 * 3600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_record_written_before_job_kinds_is_a_delivery() {
        let old = serde_json::json!({
            "id": 3, "delivery_id": "internal-o.r-7-lint-1", "event": "ci_medic_reconcile",
            "action": null, "key": "o/r#7", "state": "queued", "attempts": 0,
            "enqueued_at": "2026-02-02T15:30:00Z", "not_before": null, "last_error": null,
        });
        let job: JobRecord = serde_json::from_value(old).unwrap();
        assert_eq!(job.kind, JobKind::Delivery);
        assert_eq!(job.event, "ci_medic_reconcile");
        let meta: SpoolMeta = serde_json::from_value(serde_json::json!({
            "delivery": delivery("d1"), "job_key": "o/r#7",
        }))
        .unwrap();
        assert_eq!(meta.job_kind, JobKind::Delivery);
    }

    fn delivery(id: &str) -> DeliveryRecord {
        DeliveryRecord {
            id: id.into(),
            event: "check_run".into(),
            action: Some("completed".into()),
            received_at: Utc::now(),
            queued: true,
        }
    }

    #[tokio::test]
    async fn accept_is_idempotent_per_delivery_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = store
            .accept_delivery(&delivery("d1"), b"{}", Some(NewJob::delivery("k")))
            .unwrap();
        assert!(matches!(a, Accepted::New { job_id: Some(_) }));
        let b = store
            .accept_delivery(&delivery("d1"), b"{}", Some(NewJob::delivery("k")))
            .unwrap();
        assert_eq!(b, Accepted::Duplicate);
        store.durable().await.unwrap();
        assert_eq!(store.jobs().unwrap().len(), 1);
        assert_eq!(store.payload("d1").unwrap().unwrap(), b"{}");
    }

    #[tokio::test]
    async fn a_job_is_claimed_only_with_its_delivery_record_written() {
        // CI once parked a fresh delivery as "payload missing": a worker woken by the job
        // before claimed the new one between `insert_accepted`'s two sled writes (the job, then
        // its delivery record, under the accept lock). That moment is rebuilt here.
        use crate::store::backend::Backend;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .accept_delivery(&delivery("d1"), b"{}", Some(NewJob::delivery("o/r#1")))
            .unwrap();
        let accepting = store.inner.accept_lock.lock().unwrap();
        let record = store.inner.deliveries.remove("d1").unwrap().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = {
            let (store, rt) = (store.clone(), tokio::runtime::Handle::current());
            std::thread::spawn(move || {
                let job = rt
                    .block_on(store.claim("w", Duration::from_secs(60)))
                    .unwrap();
                let job = job.expect("the job is runnable");
                tx.send(store.payload(&job.delivery_id).unwrap()).unwrap();
            })
        };
        let early = rx.recv_timeout(Duration::from_millis(300));
        assert!(early.is_err(), "claimed mid-accept, payload {early:?}");
        store.inner.deliveries.insert("d1", record).unwrap();
        drop(accepting);
        assert_eq!(rx.recv().unwrap().as_deref(), Some(&b"{}"[..]));
        worker.join().unwrap();
    }

    #[tokio::test]
    async fn only_parked_jobs_are_requeued_by_an_operator() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let job = |id| NewJob::delivery(format!("o/r#{id}"));
        let Accepted::New { job_id: Some(a) } = store
            .accept_delivery(&delivery("a"), b"{}", Some(job(1)))
            .unwrap()
        else {
            panic!("new delivery")
        };
        let Accepted::New { job_id: Some(b) } = store
            .accept_delivery(&delivery("b"), b"{}", Some(job(2)))
            .unwrap()
        else {
            panic!("new delivery")
        };
        let mut parked = store.job(a).unwrap().unwrap();
        parked.state = JobState::Parked;
        parked.attempts = 6;
        parked.not_before = Some(Utc::now());
        parked.last_error = Some("GitHub said 500".into());
        store.put_job(&parked).unwrap();

        assert_eq!(store.requeue_parked(a).unwrap(), Requeue::Requeued);
        let again = store.job(a).unwrap().unwrap();
        assert_eq!(again.state, JobState::Queued);
        assert_eq!((again.attempts, again.not_before), (0, None));
        assert_eq!(again.last_error.as_deref(), Some("GitHub said 500"));
        assert_eq!(
            store.requeue_parked(a).unwrap(),
            Requeue::NotParked(JobState::Queued)
        );
        assert_eq!(
            store.requeue_parked(b).unwrap(),
            Requeue::NotParked(JobState::Queued)
        );
        assert_eq!(store.requeue_parked(999).unwrap(), Requeue::Missing);
    }

    #[tokio::test]
    async fn running_jobs_are_requeued_after_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .accept_delivery(&delivery("d1"), b"{}", Some(NewJob::delivery("k")))
                .unwrap();
            let mut job = store.jobs().unwrap().remove(0);
            job.state = JobState::Running;
            store.put_job(&job).unwrap();
            store.durable().await.unwrap();
        }
        let store = reopen(dir.path()).await;
        assert_eq!(store.requeue_interrupted().unwrap(), 1);
        assert_eq!(store.jobs().unwrap()[0].state, JobState::Queued);
    }

    async fn reopen(dir: &Path) -> Store {
        // sled releases its file lock asynchronously after the last handle drops.
        loop {
            match Store::open(dir) {
                Ok(s) => break s,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    #[tokio::test]
    async fn a_delivery_whose_payload_was_torn_by_a_crash_is_forgotten_so_redelivery_works() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let job = Some(NewJob::delivery("k"));
            store
                .accept_delivery(&delivery("kept"), b"{\"kept\":1}", job.clone())
                .unwrap();
            store
                .accept_delivery(&delivery("torn"), b"{\"torn\":true}", job)
                .unwrap();
            store.durable().await.unwrap();
        }
        // The crash: sled's records made it to disk, the second payload's append did not.
        let seg = dir.path().join("spool").join(format!("{:016}.spool", 1));
        let len = std::fs::metadata(&seg).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
        f.set_len(len - 4).unwrap();
        drop(f);

        let store = reopen(dir.path()).await;
        assert_eq!(store.payload("kept").unwrap().unwrap(), b"{\"kept\":1}");
        assert!(store.delivery("torn").unwrap().is_none());
        let jobs = store.jobs().unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].delivery_id, "kept");
        let again = store
            .accept_delivery(
                &delivery("torn"),
                b"{\"torn\":true}",
                Some(NewJob::delivery("k")),
            )
            .unwrap();
        assert!(matches!(again, Accepted::New { job_id: Some(_) }));
        assert_eq!(store.payload("torn").unwrap().unwrap(), b"{\"torn\":true}");
    }

    #[tokio::test]
    async fn acknowledged_deliveries_that_sled_lost_are_replayed_from_the_spool() {
        // Sled lost both records, or (a crash between the two inserts) only the delivery's.
        for jobs_lost_too in [true, false] {
            replay_case(jobs_lost_too).await;
        }
    }

    async fn replay_case(jobs_lost_too: bool) {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let before = store.inner.spool.position();
            store
                .accept_delivery(
                    &delivery("job"),
                    b"{\"n\":1}",
                    Some(NewJob::delivery("pr-1")),
                )
                .unwrap();
            store
                .accept_delivery(&delivery("ignored"), b"{\"n\":2}", None)
                .unwrap();
            store.durable().await.unwrap();
            // What a crash before sled's flush leaves: the spool has the deliveries, sled and
            // its checkpoint do not.
            store.inner.deliveries.clear().unwrap();
            if jobs_lost_too {
                store.inner.jobs.clear().unwrap();
            }
            store
                .inner
                .db
                .insert(CHECKPOINT_KEY, serde_json::to_vec(&before).unwrap())
                .unwrap();
            store.inner.db.flush().unwrap();
        }
        let store = reopen(dir.path()).await;
        let jobs = store.jobs().unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].delivery_id, "job");
        assert_eq!(jobs[0].key, "pr-1");
        assert_eq!(store.payload("job").unwrap().unwrap(), b"{\"n\":1}");
        assert!(store.delivery("ignored").unwrap().is_some());
        // Replayed deliveries still de-duplicate redeliveries.
        let again = store
            .accept_delivery(&delivery("job"), b"{}", Some(NewJob::delivery("pr-1")))
            .unwrap();
        assert_eq!(again, Accepted::Duplicate);
    }

    #[tokio::test]
    async fn pruned_deliveries_are_not_resurrected_by_the_replay() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let mut old = delivery("old");
            old.received_at = Utc::now() - chrono::Duration::days(30);
            store.accept_delivery(&old, b"{}", None).unwrap();
            store.durable().await.unwrap();
            store.flush_blocking().unwrap();
            assert_eq!(
                store
                    .prune_deliveries(Utc::now() - chrono::Duration::days(7))
                    .unwrap(),
                1
            );
            store.flush_blocking().unwrap();
        }
        let store = reopen(dir.path()).await;
        assert!(store.delivery("old").unwrap().is_none());
    }

    #[tokio::test]
    async fn the_newest_webhook_delivery_leaves_the_services_own_jobs_out() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.newest_webhook_received_at().unwrap(), None);
        let mut older = delivery("older");
        older.received_at = Utc::now() - chrono::Duration::hours(2);
        let mut newer = delivery("newer");
        newer.received_at = Utc::now() - chrono::Duration::hours(1);
        let mut own = delivery("internal-reconcile");
        own.event = "ci_medic_reconcile".into();
        own.received_at = Utc::now();
        for d in [&newer, &own, &older] {
            store.accept_delivery(d, b"{}", None).unwrap();
        }
        assert_eq!(
            store.newest_webhook_received_at().unwrap(),
            Some(newer.received_at)
        );
    }

    #[tokio::test]
    async fn concurrent_durable_calls_all_return() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut set = tokio::task::JoinSet::new();
        for i in 0..64 {
            let s = store.clone();
            set.spawn(async move {
                s.accept_delivery(&delivery(&format!("d{i}")), b"{}", None)
                    .unwrap();
                s.durable().await.unwrap();
            });
        }
        while let Some(r) = set.join_next().await {
            r.unwrap();
        }
        assert!(store.delivery("d63").unwrap().is_some());
    }

    #[tokio::test]
    async fn prune_keeps_deliveries_with_live_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut old = delivery("old");
        old.received_at = Utc::now() - chrono::Duration::days(30);
        store.accept_delivery(&old, b"{}", None).unwrap();
        let mut old_live = delivery("old-live");
        old_live.received_at = old.received_at;
        store
            .accept_delivery(&old_live, b"{}", Some(NewJob::delivery("k")))
            .unwrap();
        store
            .accept_delivery(&delivery("new"), b"{}", None)
            .unwrap();
        let n = store
            .prune_deliveries(Utc::now() - chrono::Duration::days(7))
            .unwrap();
        assert_eq!(n, 1);
        assert!(store.delivery("old").unwrap().is_none());
        assert!(store.delivery("old-live").unwrap().is_some());
        assert!(store.delivery("new").unwrap().is_some());
    }
}
