//! The job queue's workers on PostgreSQL with two replicas (two queues, each with its own pool
//! and workers, on one database): every job runs once, a pull request's jobs never run at the
//! same time and keep their order across replicas, and a job claimed by a replica that died
//! (claimed, never renewed) is run by the live one once its lease ends.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::Utc;
use ci_medic::jobs::{JobError, JobHandler, JobInput, Queue, RetryPolicy, Workers};
use ci_medic::metrics::Metrics;
use ci_medic::store::backend::Backend;
use ci_medic::store::pg::PgStore;
use ci_medic::store::{DeliveryRecord, NewJob};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Recorder {
    running: Mutex<HashSet<String>>,
    overlaps: Mutex<Vec<String>>,
    done: Mutex<Vec<(String, u64)>>,
}

#[async_trait]
impl JobHandler for Recorder {
    async fn handle(&self, input: JobInput) -> Result<(), JobError> {
        let key = input.job.key.clone();
        if !self.running.lock().unwrap().insert(key.clone()) {
            self.overlaps.lock().unwrap().push(key.clone());
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
        self.running.lock().unwrap().remove(&key);
        self.done.lock().unwrap().push((key, input.job.id));
        Ok(())
    }
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
    }
}

async fn accept(b: &dyn Backend, id: &str, key: &str) -> u64 {
    let d = DeliveryRecord {
        id: id.into(),
        event: "check_run".into(),
        action: Some("completed".into()),
        received_at: Utc::now(),
        queued: true,
    };
    match b
        .accept(&d, b"{}", Some(NewJob::delivery(key)))
        .await
        .unwrap()
    {
        ci_medic::store::Accepted::New { job_id: Some(j) } => j,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_run_every_job_once_in_order_per_pull_request() {
    let Some(url) = common::fresh_database("queue_replicas").await else {
        return;
    };
    let a = PgStore::connect(&url, 6).await.unwrap();
    a.migrate().await.unwrap();
    let b = PgStore::connect(&url, 6).await.unwrap();
    let (a, b): (Arc<dyn Backend>, Arc<dyn Backend>) = (Arc::new(a), Arc::new(b));

    // A replica that claimed a job and died: no heartbeat, no answer.
    let orphan = accept(&*a, "orphan", "o/r#0").await;
    let lease = Duration::from_secs(1);
    assert_eq!(a.claim("dead/0", lease).await.unwrap().unwrap().id, orphan);

    let mut expected: HashMap<String, Vec<u64>> = HashMap::new();
    for i in 0..30 {
        let key = format!("o/r#{}", i % 5 + 1);
        let via = if i % 2 == 0 { &a } else { &b };
        let id = accept(&**via, &format!("d{i}"), &key).await;
        expected.entry(key).or_default().push(id);
    }

    let rec = Arc::new(Recorder::default());
    let stop = CancellationToken::new();
    let mut pools = Vec::new();
    for backend in [a.clone(), b.clone()] {
        let q = Queue::load(backend, Metrics::new(), policy())
            .await
            .unwrap()
            .with_lease(lease);
        pools.push(Workers::start(2, q, rec.clone(), stop.clone()));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !a.jobs().await.unwrap().is_empty() {
        assert!(Instant::now() < deadline, "jobs left: {:?}", a.jobs().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.cancel();
    for p in pools {
        p.drain(Duration::from_secs(5)).await;
    }

    assert!(
        rec.overlaps.lock().unwrap().is_empty(),
        "a pull request ran twice at once"
    );
    let done = rec.done.lock().unwrap().clone();
    assert_eq!(
        done.len(),
        31,
        "every job once, the orphan included: {done:?}"
    );
    for (key, ids) in expected {
        let ran: Vec<u64> = done
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, id)| *id)
            .collect();
        assert_eq!(ran, ids, "order of {key}");
    }
    assert!(done.iter().any(|(_, id)| *id == orphan));
}
