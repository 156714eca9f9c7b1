//! PostgreSQL backend (`DATABASE_URL=postgres://…`): the state of several `serve` replicas
//! behind one webhook URL.
//!
//! Every guarantee the sled store gives one process holds here across replicas, through the
//! database rather than through locks in memory:
//! - a delivery id is a primary key, inserted with its job in one transaction committed
//!   before [`Backend::accept`] returns, so a redelivery to another replica is a duplicate;
//! - a worker claims a job with `SELECT … FOR UPDATE SKIP LOCKED` and holds it under a lease
//!   it renews; a job whose replica died is runnable again when its lease runs out;
//! - only the first live job of a key (one pull request) is ever runnable, which serialises a
//!   pull request's jobs across replicas without a lock held through the run;
//! - a DDS number is one `INSERT … ON CONFLICT DO UPDATE … RETURNING`, which PostgreSQL runs
//!   under the counter row's lock: two replicas at the same moment get two numbers.
//!
//! Times are the database's (`now()`), never a replica's clock. Queries are built at run
//! time (`sqlx::query`), so building needs no database. The schema is in `migrations/`,
//! embedded in the binary and applied by [`PgStore::migrate`].
//!
//! It must never log a payload, and never hold a transaction open across a job's run.

use std::borrow::Cow;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};

use super::backend::{Attempt, Backend, JobCounts, Released};
use super::registry::{IdKind, MAX_PER_DAY, RegistryError};
use super::{Accepted, DeliveryRecord, JobKind, JobRecord, JobState, NewJob, Requeue, StoreError};

/// The versioned schema, in order. A released file is never edited (sqlx checks each applied
/// migration's checksum); a change is a new file here.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "queue", include_str!("../../migrations/0001_queue.sql")),
    (
        2,
        "proposals",
        include_str!("../../migrations/0002_proposals.sql"),
    ),
    (
        3,
        "shared state",
        include_str!("../../migrations/0003_shared_state.sql"),
    ),
    (
        4,
        "reply intents",
        include_str!("../../migrations/0004_reply_intents.sql"),
    ),
    (
        5,
        "web state",
        include_str!("../../migrations/0005_web_state.sql"),
    ),
];

/// The migrations compiled into the binary, so a replica needs no files beside it.
#[derive(Debug)]
struct Embedded;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> futures::future::BoxFuture<
        's,
        Result<Vec<Migration>, Box<dyn std::error::Error + Send + Sync>>,
    > {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|(version, description, sql)| {
                    Migration::new(
                        *version,
                        Cow::Borrowed(*description),
                        MigrationType::Simple,
                        Cow::Borrowed(*sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// The PostgreSQL store. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
}

/// How long an operation waits for a connection before it fails. Short: a delivery that
/// cannot be stored must be answered 503 while GitHub still waits, not after its timeout.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// What [`PgStore::import_sled`] copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SledImport {
    /// Jobs copied as queued (a job sled had left running was interrupted: queued too).
    pub queued: usize,
    pub parked: usize,
    /// Jobs whose delivery id the database already knew (an earlier import): left alone.
    pub skipped: usize,
    /// Per-day DDS counters the database now continues from.
    pub counters: usize,
    /// Delivery ids without a pending job (processed or ignored) now remembered by the
    /// database, so their redelivery stays a duplicate.
    pub deliveries: usize,
    /// Failed records, code_fix proposals and fix runs copied.
    pub fix_state: super::pg_proposals::FixStateImport,
}

impl PgStore {
    /// `ci-medic migrate --from-sled`: copies a stopped sled `DATA_DIR`'s pending jobs, with
    /// their deliveries and payloads, in their order, the other delivery ids it remembers
    /// (de-duplication), and its per-day DDS counters (the
    /// database keeps the larger number, so no id used on sled is handed out again). One
    /// transaction: a failure copies nothing. Running it again copies nothing twice.
    pub async fn import_sled(&self, store: &super::Store) -> Result<SledImport, StoreError> {
        let mut out = SledImport::default();
        let mut tx = self.pool.begin().await?;
        for job in store.jobs()? {
            let delivery = store.delivery(&job.delivery_id)?.unwrap_or(DeliveryRecord {
                id: job.delivery_id.clone(),
                event: job.event.clone(),
                action: job.action.clone(),
                received_at: job.enqueued_at,
                queued: true,
            });
            let payload = store.payload(&job.delivery_id)?;
            let inserted = sqlx::query(
                "INSERT INTO deliveries (id, event, action, received_at, queued, payload) \
                 VALUES ($1, $2, $3, $4, true, $5) ON CONFLICT (id) DO NOTHING",
            )
            .bind(&delivery.id)
            .bind(&delivery.event)
            .bind(&delivery.action)
            .bind(delivery.received_at)
            .bind(payload)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 0 {
                out.skipped += 1;
                continue;
            }
            let state = match job.state {
                JobState::Parked => JobState::Parked,
                JobState::Queued | JobState::Running => JobState::Queued,
            };
            let kind = serde_json::to_string(&job.kind).expect("job kinds serialise");
            sqlx::query(
                "INSERT INTO jobs (delivery_id, event, kind, action, key, state, attempts, \
                 enqueued_at, not_before, last_error) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(&job.delivery_id)
            .bind(&job.event)
            .bind(kind)
            .bind(&job.action)
            .bind(&job.key)
            .bind(state_name(state))
            .bind(i32::try_from(job.attempts).unwrap_or(i32::MAX))
            .bind(job.enqueued_at)
            .bind(job.not_before)
            .bind(&job.last_error)
            .execute(&mut *tx)
            .await?;
            match state {
                JobState::Parked => out.parked += 1,
                _ => out.queued += 1,
            }
        }
        for delivery in store.deliveries()? {
            out.deliveries += sqlx::query(
                "INSERT INTO deliveries (id, event, action, received_at, queued) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
            )
            .bind(&delivery.id)
            .bind(&delivery.event)
            .bind(&delivery.action)
            .bind(delivery.received_at)
            .bind(delivery.queued)
            .execute(&mut *tx)
            .await?
            .rows_affected() as usize;
        }
        let counters = store
            .registry()
            .and_then(|r| r.counters())
            .map_err(|e| StoreError::Flush(e.to_string()))?;
        for (kind, day, seq) in counters {
            sqlx::query(
                "INSERT INTO dds_counters (kind, day, seq) VALUES ($1, $2, $3) \
                 ON CONFLICT (kind, day) DO UPDATE \
                 SET seq = GREATEST(dds_counters.seq, EXCLUDED.seq)",
            )
            .bind(kind.prefix())
            .bind(day)
            .bind(i32::try_from(seq).unwrap_or(i32::MAX))
            .execute(&mut *tx)
            .await?;
            out.counters += 1;
        }
        out.fix_state = super::pg_proposals::import_fix_state(&mut tx, store).await?;
        tx.commit().await?;
        Ok(out)
    }

    /// Connects (without applying migrations). The error names `DATABASE_URL` and never
    /// repeats the URL, which may hold a password.
    pub async fn connect(url: &str, max_connections: u32) -> Result<PgStore, StoreError> {
        use sqlx::ConnectOptions;
        let options: PgConnectOptions = url.parse()?;
        // One connection first: the pool would report only that it timed out, not why
        // (refused, authentication, no such database).
        let first = tokio::time::timeout(ACQUIRE_TIMEOUT, options.connect())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)??;
        drop(first);
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // A connection broken while the server was away is found and replaced before use.
            .test_before_acquire(true)
            .connect_lazy_with(options);
        Ok(PgStore { pool })
    }

    /// The pool, for the operations kept in sibling files (`pg_proposals.rs`,
    /// `pg_shared_state.rs`).
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Applies the migrations not yet applied. Safe from several replicas at once: sqlx holds
    /// an advisory lock while it migrates.
    pub async fn migrate(&self) -> Result<Vec<i64>, StoreError> {
        let migrator = Migrator::new(Embedded).await?;
        let before: std::collections::HashSet<i64> = applied(&self.pool).await?;
        migrator.run(&self.pool).await?;
        Ok(MIGRATIONS
            .iter()
            .map(|(v, _, _)| *v)
            .filter(|v| !before.contains(v))
            .collect())
    }
}

async fn applied(pool: &PgPool) -> Result<std::collections::HashSet<i64>, StoreError> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await?;
    if !exists {
        return Ok(Default::default());
    }
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(pool)
            .await?;
    Ok(versions.into_iter().collect())
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Parked => "parked",
    }
}

fn corrupt(key: String, source: serde_json::Error) -> StoreError {
    StoreError::Corrupt { key, source }
}

const JOB_COLUMNS: &str = "id, delivery_id, event, kind, action, key, state, attempts, \
                           enqueued_at, not_before, last_error";

fn job_from_row(row: &PgRow) -> Result<JobRecord, StoreError> {
    let id: i64 = row.try_get("id")?;
    let kind: String = row.try_get("kind")?;
    let kind: JobKind =
        serde_json::from_str(&kind).map_err(|e| corrupt(format!("jobs/{id}/kind"), e))?;
    let state: String = row.try_get("state")?;
    let state = [JobState::Queued, JobState::Running, JobState::Parked]
        .into_iter()
        .find(|s| state_name(*s) == state)
        .ok_or_else(|| StoreError::Corrupt {
            key: format!("jobs/{id}/state"),
            source: serde::de::Error::custom(format!("unknown job state `{state}`")),
        })?;
    let attempts: i32 = row.try_get("attempts")?;
    Ok(JobRecord {
        id: id as u64,
        delivery_id: row.try_get("delivery_id")?,
        event: row.try_get("event")?,
        kind,
        action: row.try_get("action")?,
        key: row.try_get("key")?,
        state,
        attempts: attempts.max(0) as u32,
        enqueued_at: row.try_get("enqueued_at")?,
        not_before: row.try_get("not_before")?,
        last_error: row.try_get("last_error")?,
    })
}

/// Ids are BIGSERIAL: positive and far below `i64::MAX`; anything else matches no row.
fn db_id(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(-1)
}

#[async_trait]
impl Backend for PgStore {
    fn name(&self) -> &'static str {
        "postgresql"
    }

    async fn accept(
        &self,
        delivery: &DeliveryRecord,
        payload: &[u8],
        job: Option<NewJob>,
    ) -> Result<Accepted, StoreError> {
        let mut tx = self.pool.begin().await?;
        // A concurrent insert of the same id waits for the first transaction, then conflicts:
        // exactly one replica queues the job.
        let inserted = sqlx::query(
            "INSERT INTO deliveries (id, event, action, received_at, queued, payload) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&delivery.id)
        .bind(&delivery.event)
        .bind(&delivery.action)
        .bind(delivery.received_at)
        .bind(delivery.queued)
        .bind(job.is_some().then_some(payload))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            tx.rollback().await?;
            return Ok(Accepted::Duplicate);
        }
        let job_id = match job {
            None => None,
            Some(job) => {
                let kind = serde_json::to_string(&job.kind).expect("job kinds serialise");
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO jobs (delivery_id, event, kind, action, key, state, enqueued_at) \
                     VALUES ($1, $2, $3, $4, $5, 'queued', $6) RETURNING id",
                )
                .bind(&delivery.id)
                .bind(&delivery.event)
                .bind(kind)
                .bind(&delivery.action)
                .bind(&job.key)
                .bind(delivery.received_at)
                .fetch_one(&mut *tx)
                .await?;
                Some(id as u64)
            }
        };
        tx.commit().await?;
        Ok(Accepted::New { job_id })
    }

    async fn has_delivery(&self, id: &str) -> Result<bool, StoreError> {
        let found: Option<i32> = sqlx::query_scalar("SELECT 1 FROM deliveries WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(found.is_some())
    }

    async fn newest_webhook_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        // Internal jobs are recorded as deliveries too, under `ci_medic_*` event names.
        Ok(sqlx::query_scalar(
            "SELECT max(received_at) FROM deliveries WHERE event NOT LIKE 'ci\\_medic\\_%'",
        )
        .fetch_one(&self.pool)
        .await?)
    }

    async fn payload(&self, delivery_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row: Option<Option<Vec<u8>>> =
            sqlx::query_scalar("SELECT payload FROM deliveries WHERE id = $1")
                .bind(delivery_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.flatten())
    }

    async fn claim(&self, owner: &str, lease: Duration) -> Result<Option<JobRecord>, StoreError> {
        // Runnable: queued and due, or running under a lease that ran out. Only the first live
        // job of a key qualifies, and none while another job of the key holds a live lease (a
        // parked job queued again by an operator behind a newer running one).
        // A job taken over from a lapsed lease keeps its attempts: the run its dead replica
        // started never reported, so it was no attempt (see `Backend::claim`), and this run
        // takes its place. Counting it would let a few kills park a job that never failed.
        let sql = format!(
            "UPDATE jobs SET state = 'running', \
                    attempts = CASE WHEN jobs.state = 'running' THEN jobs.attempts \
                                    ELSE jobs.attempts + 1 END, \
                    lease_owner = $1, lease_until = now() + make_interval(secs => $2) \
             WHERE id = ( \
                SELECT j.id FROM jobs j \
                WHERE ((j.state = 'queued' AND (j.not_before IS NULL OR j.not_before <= now())) \
                       OR (j.state = 'running' AND j.lease_until < now())) \
                  AND NOT EXISTS (SELECT 1 FROM jobs e \
                                  WHERE e.key = j.key AND e.state <> 'parked' AND e.id < j.id) \
                  AND NOT EXISTS (SELECT 1 FROM jobs r \
                                  WHERE r.key = j.key AND r.state = 'running' AND r.id <> j.id \
                                    AND r.lease_until >= now()) \
                ORDER BY j.id \
                FOR UPDATE SKIP LOCKED \
                LIMIT 1) \
             RETURNING {JOB_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(owner)
            .bind(lease.as_secs_f64())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(job_from_row).transpose()
    }

    async fn heartbeat(&self, id: u64, owner: &str, lease: Duration) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "UPDATE jobs SET lease_until = now() + make_interval(secs => $3) \
             WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        )
        .bind(db_id(id))
        .bind(owner)
        .bind(lease.as_secs_f64())
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    async fn finish(&self, id: u64, owner: &str) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "DELETE FROM jobs WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        )
        .bind(db_id(id))
        .bind(owner)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    async fn retry_later(
        &self,
        id: u64,
        owner: &str,
        after: Duration,
        error: &str,
        attempt: Attempt,
    ) -> Result<bool, StoreError> {
        let refund: i32 = match attempt {
            Attempt::Spent => 0,
            Attempt::Refunded => 1,
        };
        let n = sqlx::query(
            "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, \
                    not_before = now() + make_interval(secs => $3), last_error = $4, \
                    attempts = GREATEST(attempts - $5, 0) \
             WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        )
        .bind(db_id(id))
        .bind(owner)
        .bind(after.as_secs_f64())
        .bind(error)
        .bind(refund)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    async fn park(&self, id: u64, owner: &str, error: &str) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "UPDATE jobs SET state = 'parked', lease_owner = NULL, lease_until = NULL, \
                    last_error = $3 \
             WHERE id = $1 AND lease_owner = $2 AND state = 'running'",
        )
        .bind(db_id(id))
        .bind(owner)
        .bind(error)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let rows = sqlx::query(&format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(job_from_row).collect()
    }

    async fn requeue_parked(&self, id: u64) -> Result<Requeue, StoreError> {
        let n = sqlx::query(
            "UPDATE jobs SET state = 'queued', attempts = 0, not_before = NULL \
             WHERE id = $1 AND state = 'parked'",
        )
        .bind(db_id(id))
        .execute(&self.pool)
        .await?
        .rows_affected();
        if n == 1 {
            return Ok(Requeue::Requeued);
        }
        let state: Option<String> = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
            .bind(db_id(id))
            .fetch_optional(&self.pool)
            .await?;
        Ok(match state.as_deref() {
            None => Requeue::Missing,
            Some("running") => Requeue::NotParked(JobState::Running),
            Some(_) => Requeue::NotParked(JobState::Queued),
        })
    }

    async fn next_seq(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
        let seq: Option<i32> = sqlx::query_scalar(
            "INSERT INTO dds_counters (kind, day, seq) VALUES ($1, $2, 1) \
             ON CONFLICT (kind, day) DO UPDATE SET seq = dds_counters.seq + 1 \
             WHERE dds_counters.seq < $3 \
             RETURNING seq",
        )
        .bind(kind.prefix())
        .bind(day)
        .bind(MAX_PER_DAY as i32)
        .fetch_optional(&self.pool)
        .await?;
        match seq {
            Some(n) => Ok(u16::try_from(n).map_err(|_| RegistryError::Corrupt {
                key: format!("dds_counters/{}/{day}", kind.prefix()),
                reason: format!("counter {n} is out of range"),
            })?),
            None => Err(RegistryError::DayExhausted { kind, day }),
        }
    }

    async fn try_lease(&self, name: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        let got: Option<String> = sqlx::query_scalar(
            "INSERT INTO leases (name, owner, until) \
             VALUES ($1, $2, now() + make_interval(secs => $3)) \
             ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until \
             WHERE leases.owner = EXCLUDED.owner OR leases.until < now() \
             RETURNING owner",
        )
        .bind(name)
        .bind(owner)
        .bind(ttl.as_secs_f64())
        .fetch_optional(&self.pool)
        .await?;
        Ok(got.is_some())
    }

    async fn release_all(&self, replica: &str) -> Result<Released, StoreError> {
        let mut tx = self.pool.begin().await?;
        let leases = sqlx::query("DELETE FROM leases WHERE owner = $1")
            .bind(replica)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        // Lapsed, not queued: a claim takes it over at once and keeps its attempts, as it does
        // a dead replica's job. Before `now()`, which is this transaction's start: any later
        // claim sees it lapsed.
        let jobs = sqlx::query(
            "UPDATE jobs SET lease_until = now() - interval '1 millisecond' \
             WHERE state = 'running' AND starts_with(lease_owner, $1 || '/')",
        )
        .bind(replica)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(Released { leases, jobs })
    }

    async fn prune_deliveries(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let n = sqlx::query(
            "DELETE FROM deliveries d WHERE d.received_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.delivery_id = d.id)",
        )
        .bind(cutoff)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n as usize)
    }

    async fn healthy(&self) -> bool {
        sqlx::query_scalar::<_, i32>("SELECT 1")
            .fetch_one(&self.pool)
            .await
            .is_ok()
    }

    async fn ready(&self) -> Result<(), String> {
        // A write, not only a read: a server in recovery or read-only answers SELECT 1.
        sqlx::query("SELECT pg_current_wal_lsn()")
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(|e| format!("PostgreSQL (DATABASE_URL): {e}"))
    }

    async fn requeue_interrupted(&self) -> Result<usize, StoreError> {
        Ok(0)
    }

    async fn counts(&self) -> Result<JobCounts, StoreError> {
        let row = sqlx::query(
            "SELECT count(*) FILTER (WHERE state <> 'parked') AS live, \
                    count(*) FILTER (WHERE state = 'parked') AS parked FROM jobs",
        )
        .fetch_one(&self.pool)
        .await?;
        let live: i64 = row.try_get("live")?;
        let parked: i64 = row.try_get("parked")?;
        Ok(JobCounts {
            live: live.max(0) as u64,
            parked: parked.max(0) as u64,
        })
    }

    fn fix_state(&self) -> Result<super::proposals::FixState, StoreError> {
        Ok(super::proposals::FixState::pg(self))
    }

    async fn close(&self) -> Result<(), StoreError> {
        // Every write was committed when it returned: nothing to flush.
        self.pool.close().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_states_have_the_names_the_schema_checks() {
        let schema = MIGRATIONS[0].2;
        for s in [JobState::Queued, JobState::Running, JobState::Parked] {
            assert!(schema.contains(&format!("'{}'", state_name(s))));
        }
    }
}
