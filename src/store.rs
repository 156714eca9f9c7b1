//! The store: ci-medic's only persistent state, a sled database in `DATA_DIR`.
//!
//! This module is the only one that imports sled. It exposes domain operations (accept a
//! delivery, claim and finish jobs), not trees and bytes, so the rest of the service cannot
//! leave a half-written record behind.
//!
//! Payloads live in the [`spool`] (append-only segment files), not in sled: sled would make a
//! blob file of each one. Sled holds the small records (deliveries, jobs) that point to them.
//!
//! Durability: [`Store::durable`] waits until everything written before the call is on disk,
//! spool and sled both. Concurrent callers share one flush (group commit), so persisting every
//! webhook before answering costs one fsync per batch of requests, not one per request. A
//! delivery is acknowledged only after that, so a record whose payload did not survive a crash
//! was never acknowledged: [`Store::open`] drops it, and GitHub's redelivery is accepted as new.
//!
//! It must never hold a payload or secret in a log line, and never block the async runtime on a
//! flush: flushes run on sled's async path in a dedicated task.

pub mod installations;
pub mod registry;
pub mod runs;
pub mod spool;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
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

/// A unit of work: process one accepted delivery.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: u64,
    pub delivery_id: String,
    pub event: String,
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
    flush_tx: mpsc::UnboundedSender<oneshot::Sender<Result<(), String>>>,
}

const DELIVERIES: &str = "deliveries";
const PAYLOADS: &str = "payloads";
const JOBS: &str = "jobs";

impl Store {
    /// Opens (or creates) the database in `dir`. Must be called inside a tokio runtime: it
    /// starts the group-commit flusher task.
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
        tokio::spawn(run_flusher(db.clone(), spool.clone(), flush_rx));
        let store = Store {
            inner: Arc::new(Inner {
                db,
                spool,
                deliveries,
                legacy_payloads,
                jobs,
                flush_tx,
            }),
        };
        store.drop_unacknowledged()?;
        Ok(store)
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

    /// Waits until every write made before this call (sled and spool) is durable on disk.
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

    /// Flushes synchronously (shutdown).
    pub fn flush_blocking(&self) -> Result<(), StoreError> {
        self.inner.db.flush()?;
        Ok(())
    }

    /// Records a delivery and (optionally) its job in one transaction, unless the delivery id
    /// is already known; a queued job's payload goes to the spool first. Not yet durable: call
    /// [`Store::durable`] before answering.
    pub fn accept_delivery(
        &self,
        delivery: &DeliveryRecord,
        payload: &[u8],
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError> {
        let key = delivery.id.as_bytes();
        // Redeliveries are common; this read spares them a spool append. The transaction
        // below still decides races.
        if self.inner.deliveries.contains_key(key)? {
            return Ok(Accepted::Duplicate);
        }
        let (job_id, payload_ref) = match job {
            Some(_) => (
                Some(self.inner.db.generate_id()?),
                Some(self.inner.spool.append(payload)?),
            ),
            None => (None, None),
        };
        let stored = StoredDelivery {
            record: delivery.clone(),
            payload: payload_ref,
        };
        let delivery_json = serde_json::to_vec(&stored).expect("delivery serialises");
        let job_json = job.map(|j| {
            let rec = JobRecord {
                id: job_id.expect("id allocated"),
                delivery_id: delivery.id.clone(),
                event: delivery.event.clone(),
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
        let res = (&self.inner.deliveries, &self.inner.jobs).transaction(|(d, j)| {
            if d.get(key)?.is_some() {
                return Err(ConflictableTransactionError::Abort(()));
            }
            d.insert(key, delivery_json.as_slice())?;
            if let (Some(id), Some(job)) = (job_id, &job_json) {
                j.insert(&id.to_be_bytes(), job.as_slice())?;
            }
            Ok(())
        });
        match res {
            Ok(()) => Ok(Accepted::New { job_id }),
            Err(TransactionError::Abort(())) => Ok(Accepted::Duplicate),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    pub fn delivery(&self, id: &str) -> Result<Option<DeliveryRecord>, StoreError> {
        Ok(get_json::<StoredDelivery>(&self.inner.deliveries, id.as_bytes())?.map(|d| d.record))
    }

    /// The payload of a delivery that queued a job; `None` once pruned (or never stored).
    pub fn payload(&self, delivery_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = delivery_id.as_bytes();
        match get_json::<StoredDelivery>(&self.inner.deliveries, key)? {
            Some(StoredDelivery {
                payload: Some(at), ..
            }) => Ok(self.inner.spool.read(at)?),
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
                self.put_job(&job)?;
                n += 1;
            }
        }
        Ok(n)
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
        let segments = self.inner.spool.retain(&referenced)?;
        if segments > 0 {
            tracing::info!(
                segments,
                "deleted payload spool segments no delivery refers to"
            );
        }
        Ok(n)
    }

    /// A cheap read proving the database answers (readiness).
    pub fn is_healthy(&self) -> bool {
        self.inner.jobs.first().is_ok()
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

/// Group commit: each round takes every waiter queued so far, flushes once, answers them all.
/// Writes made before a waiter queued itself are covered by any flush that starts after.
/// The spool and sled are synced concurrently: acknowledgement waits for both, and a record
/// that outlives its payload in a crash is dropped at the next open.
async fn run_flusher(
    db: sled::Db,
    spool: spool::Spool,
    mut rx: mpsc::UnboundedReceiver<oneshot::Sender<Result<(), String>>>,
) {
    let mut batch = Vec::new();
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        let spool = spool.clone();
        let (spooled, flushed) = tokio::join!(
            tokio::task::spawn_blocking(move || spool.sync()),
            db.flush_async()
        );
        let res = match (spooled, flushed) {
            (Ok(Ok(())), Ok(_)) => Ok(()),
            (Ok(Err(e)), _) => Err(e.to_string()),
            (Err(e), _) => Err(format!("spool sync task failed: {e}")),
            (_, Err(e)) => Err(e.to_string()),
        };
        for w in batch.drain(..) {
            let _ = w.send(res.clone());
        }
    }
}

/// How long delivery ids are kept for de-duplication (GitHub redelivers for a few days).
pub const DELIVERY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

#[cfg(test)]
mod tests {
    use super::*;

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
            .accept_delivery(&delivery("d1"), b"{}", Some(NewJob { key: "k".into() }))
            .unwrap();
        assert!(matches!(a, Accepted::New { job_id: Some(_) }));
        let b = store
            .accept_delivery(&delivery("d1"), b"{}", Some(NewJob { key: "k".into() }))
            .unwrap();
        assert_eq!(b, Accepted::Duplicate);
        store.durable().await.unwrap();
        assert_eq!(store.jobs().unwrap().len(), 1);
        assert_eq!(store.payload("d1").unwrap().unwrap(), b"{}");
    }

    #[tokio::test]
    async fn running_jobs_are_requeued_after_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .accept_delivery(&delivery("d1"), b"{}", Some(NewJob { key: "k".into() }))
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
            let job = Some(NewJob { key: "k".into() });
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
                Some(NewJob { key: "k".into() }),
            )
            .unwrap();
        assert!(matches!(again, Accepted::New { job_id: Some(_) }));
        assert_eq!(store.payload("torn").unwrap().unwrap(), b"{\"torn\":true}");
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
            .accept_delivery(&old_live, b"{}", Some(NewJob { key: "k".into() }))
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
