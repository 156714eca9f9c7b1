//! One suite for the store interface (`store::backend::Backend`), run against both backends:
//! sled in a temporary `DATA_DIR`, and PostgreSQL in a fresh database of the test cluster
//! (`.ci/postgres-setup.sh`). Each case is a generic function; `both!` instantiates it twice.
//! On PostgreSQL, "two replicas" are two stores with pools of their own on one database; on
//! sled they are two handles on the one process's store.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use ci_medic::store::backend::{Attempt, Backend};
use ci_medic::store::pg::PgStore;
use ci_medic::store::registry::IdKind;
use ci_medic::store::{Accepted, DeliveryRecord, JobKind, JobState, NewJob, Requeue, Store};

/// Two replicas' handles on one state, and what keeps it alive.
struct Fixture {
    a: Arc<dyn Backend>,
    b: Arc<dyn Backend>,
    _dir: Option<tempfile::TempDir>,
}

async fn sled_fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    Fixture {
        a: Arc::new(store.clone()),
        b: Arc::new(store),
        _dir: Some(dir),
    }
}

async fn pg_fixture(test: &str) -> Option<Fixture> {
    let url = common::fresh_database(test).await?;
    let a = PgStore::connect(&url, 8).await.unwrap();
    assert_eq!(
        a.migrate().await.unwrap(),
        vec![1],
        "a fresh database migrates"
    );
    let b = PgStore::connect(&url, 8).await.unwrap();
    assert!(
        b.migrate().await.unwrap().is_empty(),
        "migrating twice is a no-op"
    );
    Some(Fixture {
        a: Arc::new(a),
        b: Arc::new(b),
        _dir: None,
    })
}

macro_rules! both {
    ($($case:ident),* $(,)?) => {
        mod sled {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(super::sled_fixture().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if let Some(f) = super::pg_fixture(stringify!($case)).await {
                        super::$case(f).await;
                    }
                }
            )*
        }
    };
}

both!(
    a_delivery_id_is_accepted_once_across_replicas,
    a_pull_requests_jobs_run_one_at_a_time_in_order,
    a_failed_run_waits_for_its_backoff_and_a_wait_is_not_an_attempt,
    parked_jobs_stay_until_an_operator_requeues_them,
    dds_numbers_are_never_handed_out_twice,
    old_delivery_ids_are_pruned_but_not_while_their_job_lives,
);

fn delivery(id: &str) -> DeliveryRecord {
    DeliveryRecord {
        id: id.into(),
        event: "check_run".into(),
        action: Some("completed".into()),
        received_at: Utc::now(),
        queued: true,
    }
}

const LEASE: Duration = Duration::from_secs(30);

async fn accept(b: &dyn Backend, id: &str, key: &str) -> u64 {
    match b
        .accept(&delivery(id), b"{\"n\":1}", Some(NewJob::delivery(key)))
        .await
        .unwrap()
    {
        Accepted::New { job_id: Some(j) } => j,
        other => panic!("{id}: {other:?}"),
    }
}

async fn a_delivery_id_is_accepted_once_across_replicas(f: Fixture) {
    // Racing redeliveries of one id to both replicas: exactly one job.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..16 {
        let b = if i % 2 == 0 { f.a.clone() } else { f.b.clone() };
        set.spawn(async move {
            b.accept(
                &delivery("d1"),
                b"{\"n\":1}",
                Some(NewJob::delivery("o/r#1")),
            )
            .await
            .unwrap()
        });
    }
    let mut new = 0;
    while let Some(r) = set.join_next().await {
        if let Accepted::New { job_id: Some(_) } = r.unwrap() {
            new += 1;
        }
    }
    assert_eq!(new, 1);
    assert_eq!(f.b.jobs().await.unwrap().len(), 1);
    assert_eq!(f.b.payload("d1").await.unwrap().unwrap(), b"{\"n\":1}");
    // An ignored delivery is remembered for de-duplication without a job or payload.
    assert_eq!(
        f.a.accept(&delivery("ignored"), b"{}", None).await.unwrap(),
        Accepted::New { job_id: None }
    );
    assert_eq!(
        f.b.accept(&delivery("ignored"), b"{}", None).await.unwrap(),
        Accepted::Duplicate
    );
    assert_eq!(f.a.payload("ignored").await.unwrap(), None);
    // The job's kind survives the round trip.
    let kind = JobKind::WriteFix {
        repo: "o/r".into(),
        pr: 7,
        check: "lint".into(),
    };
    f.a.accept(
        &delivery("fix-1"),
        b"",
        Some(NewJob {
            key: "o/r#7".into(),
            kind: kind.clone(),
        }),
    )
    .await
    .unwrap();
    let jobs = f.b.jobs().await.unwrap();
    assert_eq!(jobs.last().unwrap().kind, kind);
}

async fn a_pull_requests_jobs_run_one_at_a_time_in_order(f: Fixture) {
    let a1 = accept(&*f.a, "a1", "o/r#1").await;
    let a2 = accept(&*f.b, "a2", "o/r#1").await;
    let b1 = accept(&*f.a, "b1", "o/r#2").await;
    let first = f.a.claim("replica-a/0", LEASE).await.unwrap().unwrap();
    assert_eq!(
        (first.id, first.state, first.attempts),
        (a1, JobState::Running, 1)
    );
    // The other replica cannot take a2 while a1 runs; it takes the other pull request's job.
    let second = f.b.claim("replica-b/0", LEASE).await.unwrap().unwrap();
    assert_eq!(second.id, b1);
    assert!(f.b.claim("replica-b/1", LEASE).await.unwrap().is_none());
    assert!(f.a.heartbeat(a1, "replica-a/0", LEASE).await.unwrap());
    assert!(f.a.finish(a1, "replica-a/0").await.unwrap());
    let third = f.b.claim("replica-b/1", LEASE).await.unwrap().unwrap();
    assert_eq!(third.id, a2);
    assert!(f.b.finish(a2, "replica-b/1").await.unwrap());
    assert!(f.b.finish(b1, "replica-b/0").await.unwrap());
    assert!(f.a.jobs().await.unwrap().is_empty());
    assert!(f.a.claim("replica-a/0", LEASE).await.unwrap().is_none());
}

async fn a_failed_run_waits_for_its_backoff_and_a_wait_is_not_an_attempt(f: Fixture) {
    let j = accept(&*f.a, "j", "o/r#3").await;
    let later = accept(&*f.a, "later", "o/r#3").await;
    let run = f.a.claim("w", LEASE).await.unwrap().unwrap();
    assert_eq!(run.attempts, 1);
    assert!(
        f.a.retry_later(
            j,
            "w",
            Duration::from_millis(300),
            "GitHub said 502",
            Attempt::Spent
        )
        .await
        .unwrap()
    );
    // Neither the job in its backoff nor the next one of its pull request is runnable.
    assert!(f.b.claim("w2", LEASE).await.unwrap().is_none());
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = f.b.claim("w2", LEASE).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (j, 2));
    assert_eq!(again.last_error.as_deref(), Some("GitHub said 502"));
    assert!(
        f.b.retry_later(j, "w2", Duration::ZERO, "rate limited", Attempt::Refunded)
            .await
            .unwrap()
    );
    let third = f.a.claim("w", LEASE).await.unwrap().unwrap();
    assert_eq!(
        (third.id, third.attempts),
        (j, 2),
        "a wait spent no attempt"
    );
    assert!(f.a.finish(j, "w").await.unwrap());
    assert_eq!(f.a.claim("w", LEASE).await.unwrap().unwrap().id, later);
}

async fn parked_jobs_stay_until_an_operator_requeues_them(f: Fixture) {
    let p = accept(&*f.a, "p", "o/r#4").await;
    let q = accept(&*f.a, "q", "o/r#5").await;
    f.a.claim("w", LEASE).await.unwrap().unwrap();
    assert!(f.a.park(p, "w", "cannot ever work").await.unwrap());
    // The operator's command, from another process while serve runs.
    assert_eq!(
        f.b.requeue_parked(q).await.unwrap(),
        Requeue::NotParked(JobState::Queued)
    );
    assert_eq!(f.b.requeue_parked(999_999).await.unwrap(), Requeue::Missing);
    let parked = f.b.jobs().await.unwrap();
    let parked = parked.iter().find(|j| j.id == p).unwrap();
    assert_eq!(parked.state, JobState::Parked);
    assert_eq!(parked.last_error.as_deref(), Some("cannot ever work"));
    // A parked job is never claimed; the other one is.
    assert_eq!(f.a.claim("w", LEASE).await.unwrap().unwrap().id, q);
    assert!(f.a.claim("w", LEASE).await.unwrap().is_none());
    assert_eq!(f.b.requeue_parked(p).await.unwrap(), Requeue::Requeued);
    let back = f.a.claim("w", LEASE).await.unwrap().unwrap();
    assert_eq!((back.id, back.attempts), (p, 1), "attempts were reset");
}

async fn dds_numbers_are_never_handed_out_twice(f: Fixture) {
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..40 {
        let b = if i % 2 == 0 { f.a.clone() } else { f.b.clone() };
        set.spawn(async move { b.next_seq(IdKind::CodeFix, day).await.unwrap() });
    }
    let mut seen = HashSet::new();
    while let Some(n) = set.join_next().await {
        assert!(seen.insert(n.unwrap()), "a number was handed out twice");
    }
    assert_eq!(seen, (1..=40).collect());
    // Kinds and days count apart.
    assert_eq!(
        f.b.next_seq(IdKind::FailedCodeChange, day).await.unwrap(),
        1
    );
    let next_day = day.succ_opt().unwrap();
    assert_eq!(f.a.next_seq(IdKind::CodeFix, next_day).await.unwrap(), 1);
    for _ in 41..=999 {
        f.a.next_seq(IdKind::CodeFix, day).await.unwrap();
    }
    let err = f.b.next_seq(IdKind::CodeFix, day).await.unwrap_err();
    assert!(err.to_string().contains("no code_fix id left"), "{err}");
}

async fn old_delivery_ids_are_pruned_but_not_while_their_job_lives(f: Fixture) {
    let mut old = delivery("old");
    old.received_at = Utc::now() - chrono::Duration::days(30);
    f.a.accept(&old, b"{}", None).await.unwrap();
    let mut old_live = delivery("old-live");
    old_live.received_at = old.received_at;
    f.a.accept(&old_live, b"{}", Some(NewJob::delivery("k")))
        .await
        .unwrap();
    f.a.accept(&delivery("new"), b"{}", None).await.unwrap();
    let cutoff = Utc::now() - chrono::Duration::days(7);
    assert_eq!(f.b.prune_deliveries(cutoff).await.unwrap(), 1);
    // A pruned id is new again; the others are still duplicates.
    assert!(matches!(
        f.a.accept(&old, b"{}", None).await.unwrap(),
        Accepted::New { .. }
    ));
    assert_eq!(
        f.a.accept(&delivery("new"), b"{}", None).await.unwrap(),
        Accepted::Duplicate
    );
    assert_eq!(
        f.a.accept(&old_live, b"{}", None).await.unwrap(),
        Accepted::Duplicate
    );
}

// PostgreSQL alone: what only several processes can show.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_job_whose_replica_died_runs_again_elsewhere() {
    let Some(f) = pg_fixture("lease_expiry").await else {
        return;
    };
    let j = accept(&*f.a, "j", "o/r#1").await;
    let lease = Duration::from_millis(400);
    f.a.claim("dead-replica/0", lease).await.unwrap().unwrap();
    // The heartbeat keeps it while the replica lives.
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(f.a.heartbeat(j, "dead-replica/0", lease).await.unwrap());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(f.b.claim("live/0", lease).await.unwrap().is_none());
    // Then the replica dies: no more heartbeats.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = f.b.claim("live/0", LEASE).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (j, 2));
    // The dead replica's late answer changes nothing.
    assert!(!f.a.finish(j, "dead-replica/0").await.unwrap());
    assert!(!f.a.heartbeat(j, "dead-replica/0", lease).await.unwrap());
    assert!(f.b.finish(j, "live/0").await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_singleton_runs_on_one_replica_until_its_lease_lapses() {
    let Some(f) = pg_fixture("singleton").await else {
        return;
    };
    let ttl = Duration::from_millis(400);
    assert!(f.a.try_lease("reconcile", "a", ttl).await.unwrap());
    assert!(!f.b.try_lease("reconcile", "b", ttl).await.unwrap());
    assert!(
        f.a.try_lease("reconcile", "a", ttl).await.unwrap(),
        "renewed"
    );
    assert!(
        f.b.try_lease("prune", "b", ttl).await.unwrap(),
        "another name"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(f.b.try_lease("reconcile", "b", ttl).await.unwrap());
    assert!(!f.a.try_lease("reconcile", "a", ttl).await.unwrap());
}

#[tokio::test]
async fn postgres_unreachable_names_database_url_and_hides_the_password() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://ci:s3cret-password@127.0.0.1:{port}/ci");
    let err = PgStore::connect(&url, 1).await.err().expect("no server");
    let msg = err.to_string();
    assert!(msg.contains("DATABASE_URL"), "{msg}");
    assert!(!msg.contains("s3cret-password"), "{msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
}

/// A `DATA_DIR` written before the numbers came from the backend: `serve` then counted in the
/// registry's own per-day counters. The sled backend continues them, never restarting at 1.
#[tokio::test]
async fn sled_numbers_continue_the_registrys_existing_counters() {
    let dir = tempfile::tempdir().unwrap();
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let reg = store.registry().unwrap();
        for want in 1..=3 {
            assert_eq!(reg.next_seq(IdKind::CodeFix, day).unwrap(), want);
        }
        assert_eq!(reg.next_seq(IdKind::FailedCodeChange, day).unwrap(), 1);
        Backend::close(&store).await.unwrap();
    }
    let store = common::open_store(dir.path()).await;
    let b: Arc<dyn Backend> = Arc::new(store.clone());
    assert_eq!(b.next_seq(IdKind::CodeFix, day).await.unwrap(), 4);
    assert_eq!(b.next_seq(IdKind::FailedCodeChange, day).await.unwrap(), 2);
    // And the registry, given the backend, publishes ids after the old ones.
    let reg = store.registry().unwrap();
    let failed = reg
        .record_failure(&failed_check("acme/calc", 3, day), &Default::default(), &*b)
        .await
        .unwrap();
    assert_eq!(failed.id.as_str(), "DDS-20260202-CODE-003");
}

fn failed_check(project: &str, pr: u64, day: NaiveDate) -> ci_medic_core::proposal::FailedCheck {
    ci_medic_core::proposal::FailedCheck {
        project: project.into(),
        check_name: "lint".into(),
        head_sha: format!("{pr:040x}"),
        pr_number: Some(pr),
        changed_files: vec!["app/main.py".into()],
        failed_at: day.and_hms_opt(12, 0, 0).unwrap().and_utc(),
    }
}

/// Two replicas, each with its own `DATA_DIR` (its own sled registry) and one PostgreSQL
/// database, record failures and propose fixes for different pull requests at once: every
/// published DDS id is distinct, because the numbers come from the database, not from either
/// replica's own counters (which would both start at 001).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_registries_never_publish_the_same_dds_id() {
    let Some(f) = pg_fixture("two_replicas_registries_never_publish").await else {
        return;
    };
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let regs: Vec<_> = dirs
        .iter()
        .map(|d| Store::open(d.path()).unwrap().registry().unwrap())
        .collect();
    let mut set = tokio::task::JoinSet::new();
    for pr in 0..60u64 {
        let replica = (pr % 2) as usize;
        let reg = regs[replica].clone();
        let ids = if replica == 0 {
            f.a.clone()
        } else {
            f.b.clone()
        };
        set.spawn(async move {
            let cfg = Default::default();
            let failed = reg
                .record_failure(&failed_check("acme/calc", pr, day), &cfg, &*ids)
                .await
                .unwrap();
            let report = ci_medic_parser::BugReport {
                file_path: "app/main.py".into(),
                line_number: 1,
                error_type: ci_medic_parser::BugType::Linting,
                message: "`os` imported but unused".into(),
                test_name: None,
                confidence_score: 0.95,
                column: Some(8),
                tool: Some("ruff".into()),
                rule: Some("F401".into()),
            };
            let at = day.and_hms_opt(12, 5, 0).unwrap().and_utc();
            let fix = reg
                .propose_fix(&failed.id, &[report], &cfg, at, &*ids)
                .await
                .unwrap();
            (failed.id.as_str().to_string(), fix.dds.id)
        });
    }
    let mut seen = HashSet::new();
    while let Some(r) = set.join_next().await {
        let (failed, fix) = r.unwrap();
        assert!(seen.insert(failed.clone()), "{failed} published twice");
        assert!(seen.insert(fix.clone()), "{fix} published twice");
    }
    assert_eq!(seen.len(), 120);
    // Dense: the database's counters, not one replica's, numbered them 001..=060.
    for n in 1..=60 {
        assert!(seen.contains(&format!("DDS-20260202-CODE-{n:03}")));
        assert!(seen.contains(&format!("DDS-FIX-20260202-{n:03}")));
    }
    // Neither replica's own counters were used.
    for reg in &regs {
        assert_eq!(reg.next_seq(IdKind::CodeFix, day).unwrap(), 1);
    }
}
