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
use ci_medic::status::auth::Role;
use ci_medic::store::backend::{Attempt, Backend};
use ci_medic::store::pg::PgStore;
use ci_medic::store::proposals::Proposals;
use ci_medic::store::registry::IdKind;
use ci_medic::store::web_state::{OnceKind, StoredSession, TokenDigest};
use ci_medic::store::{
    Accepted, DeliveryRecord, JobKind, JobRecord, JobState, NewJob, Requeue, Store,
};

/// Two replicas' handles on one state, and what keeps it alive.
struct Fixture {
    a: Arc<dyn Backend>,
    b: Arc<dyn Backend>,
    _dir: Option<tempfile::TempDir>,
    /// PostgreSQL: the test's database, dropped after the handles.
    _db: Option<common::test_db::TestDatabase>,
}

async fn sled_fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    Fixture {
        a: Arc::new(store.clone()),
        b: Arc::new(store),
        _dir: Some(dir),
        _db: None,
    }
}

async fn pg_fixture(test: &str) -> Option<Fixture> {
    let url = common::fresh_database(test).await?;
    let a = PgStore::connect(&url, 8).await.unwrap();
    let applied = a.migrate().await.unwrap();
    assert!(
        applied.first() == Some(&1) && applied.windows(2).all(|w| w[0] < w[1]),
        "a fresh database migrates every version in order: {applied:?}"
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
        _db: Some(url),
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
    assert_eq!(
        (again.id, again.attempts),
        (j, 1),
        "the dead replica's run never reported: it was no attempt"
    );
    // The dead replica's late answer changes nothing.
    assert!(!f.a.finish(j, "dead-replica/0").await.unwrap());
    assert!(!f.a.heartbeat(j, "dead-replica/0", lease).await.unwrap());
    assert!(f.b.finish(j, "live/0").await.unwrap());
}

/// A replica shutting down gracefully gives back its singleton leases and its running jobs'
/// leases: another replica takes them at once, long before they would lapse, the job with its
/// attempts kept. Another replica's (whose name merely starts the same) are left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_graceful_shutdown_gives_its_leases_back_at_once() {
    let Some(f) = pg_fixture("release_all").await else {
        return;
    };
    let long = Duration::from_secs(3600);
    let j = accept(&*f.a, "j", "o/r#1").await;
    let k = accept(&*f.a, "k", "o/r#2").await;
    f.a.claim("leaving/0", long).await.unwrap().unwrap();
    f.a.claim("leaving2/0", long).await.unwrap().unwrap();
    assert!(f.a.try_lease("reconcile", "leaving", long).await.unwrap());
    assert!(f.a.try_lease("prune", "leaving2", long).await.unwrap());
    assert!(!f.b.try_lease("reconcile", "staying", long).await.unwrap());
    assert!(f.b.claim("staying/0", long).await.unwrap().is_none());

    let released = f.a.release_all("leaving").await.unwrap();
    assert_eq!((released.leases, released.jobs), (1, 1));
    assert!(f.b.try_lease("reconcile", "staying", long).await.unwrap());
    let again = f.b.claim("staying/0", long).await.unwrap().unwrap();
    assert_eq!(
        (again.id, again.attempts),
        (j, 1),
        "taken over at once, its cut-off run no attempt"
    );
    // `leaving2` is another replica: its lease and its job stay its own.
    assert!(!f.b.try_lease("prune", "staying", long).await.unwrap());
    assert!(f.b.claim("staying/1", long).await.unwrap().is_none());
    assert!(!f.a.finish(j, "leaving/0").await.unwrap());
    assert!(f.a.finish(k, "leaving2/0").await.unwrap());
    // Nothing held: nothing given back, no error.
    assert_eq!(
        f.a.release_all("leaving").await.unwrap(),
        Default::default()
    );
}

/// Replicas killed one after another while each runs the same job: none of the cut-off runs
/// is an attempt, so a job that never failed cannot reach a long back-off or be parked; a
/// failure it reports still counts. Before, each claim counted, and six kills parked the job
/// at its first real failure (a `RunChanged` after a concurrent write, say).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_runs_cut_off_by_dying_replicas_are_no_attempts() {
    let Some(f) = pg_fixture("cut_off_runs").await else {
        return;
    };
    let j = accept(&*f.a, "j", "o/r#1").await;
    let lease = Duration::from_millis(200);
    for i in 0..6 {
        let r = if i % 2 == 0 { &f.a } else { &f.b };
        let job = r.claim(&format!("dying-{i}/0"), lease).await.unwrap();
        let job = job.unwrap_or_else(|| panic!("cut-off run {i}: the job is not runnable again"));
        assert_eq!(
            (job.id, job.attempts),
            (j, 1),
            "cut-off run {i} was counted"
        );
        // The replica dies: no heartbeat, no outcome.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    a_failure_counts(&*f.a, j, "dying/0", lease).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let job = f.b.claim("live/1", LEASE).await.unwrap().unwrap();
    assert_eq!(job.attempts, 2, "the run cut off after it does not");
}

/// Sled's "replica" is the process: one killed while running a job leaves it `Running`, and
/// the next start queues it again without counting the cut-off run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sled_runs_cut_off_by_restarts_are_no_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let j = {
        let store = Store::open(dir.path()).unwrap();
        accept(&store, "j", "o/r#1").await
    };
    for i in 0..6 {
        let store = reopen(dir.path()).await;
        Backend::requeue_interrupted(&store).await.unwrap();
        let job = store.claim("p/0", LEASE).await.unwrap().unwrap();
        assert_eq!(
            (job.id, job.attempts),
            (j, 1),
            "cut-off run {i} was counted"
        );
        store.close().await.unwrap();
    }
    let store = reopen(dir.path()).await;
    Backend::requeue_interrupted(&store).await.unwrap();
    a_failure_counts(&store, j, "p/0", LEASE).await;
    store.close().await.unwrap();
    drop(store);
    let store = reopen(dir.path()).await;
    Backend::requeue_interrupted(&store).await.unwrap();
    let job = store.claim("p/0", LEASE).await.unwrap().unwrap();
    assert_eq!(job.attempts, 2, "the run cut off after it does not");
}

/// Opens a sled `DATA_DIR` whose previous handle was just dropped (sled lets go of its file
/// lock asynchronously).
async fn reopen(dir: &std::path::Path) -> Store {
    for _ in 0..500 {
        if let Ok(s) = Store::open(dir) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("cannot reopen {}", dir.display());
}

/// `j`, runnable now with no attempt spent, fails once for real on `r`: that counts. Then it
/// is claimed again by `owner` under `lease`, and its second run's attempt returned.
async fn a_failure_counts(r: &dyn Backend, j: u64, owner: &str, lease: Duration) -> JobRecord {
    let job = r.claim("live/0", LEASE).await.unwrap().unwrap();
    assert_eq!((job.id, job.attempts), (j, 1));
    let spent = Attempt::Spent;
    let failed = r.retry_later(j, "live/0", Duration::ZERO, "run changed", spent);
    assert!(failed.await.unwrap());
    let job = r.claim(owner, lease).await.unwrap().unwrap();
    assert_eq!(job.attempts, 2, "the reported failure counts");
    job
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

/// A singleton pass (the reconcile pass, the sweep) whose holder dies is run by another
/// replica within the lease and a renewal, however long the pass's interval: before, the
/// lease lasted twice the interval, so a replica killed a second after taking a lapsed lease
/// kept the CI monitor's reconcile pass from running anywhere for four minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_dead_holders_singleton_runs_elsewhere_within_its_lease() {
    use ci_medic::singleton::{Singleton, Timing};
    use std::sync::atomic::{AtomicU32, Ordering};
    let Some(f) = pg_fixture("singleton_takeover").await else {
        return;
    };
    let timing = Timing {
        lease: Duration::from_millis(600),
        renew: Duration::from_millis(150),
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let start = |state: Arc<dyn Backend>, owner: &str, passes: Arc<AtomicU32>| {
        let s = Singleton {
            state,
            name: "reconcile",
            owner: owner.into(),
            every: Duration::from_secs(3600),
            timing,
        };
        tokio::spawn(s.run(stop.clone(), move || {
            let passes = passes.clone();
            async move {
                passes.fetch_add(1, Ordering::SeqCst);
            }
        }))
    };
    let (a_passes, b_passes) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let a = start(f.a.clone(), "a", a_passes.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        a_passes.load(Ordering::SeqCst),
        1,
        "the first holder runs at once"
    );
    let b = start(f.b.clone(), "b", b_passes.clone());
    // A renews its lease well past it: B never runs the pass beside it.
    tokio::time::sleep(timing.lease * 3).await;
    assert_eq!(b_passes.load(Ordering::SeqCst), 0, "one replica at a time");
    assert_eq!(a_passes.load(Ordering::SeqCst), 1, "once per interval");
    // A dies as a SIGKILLed process does: no release, no more renewals.
    a.abort();
    let died = std::time::Instant::now();
    while b_passes.load(Ordering::SeqCst) == 0 {
        assert!(
            died.elapsed() < timing.lease + timing.renew * 3,
            "the dead holder's pass did not move within its lease"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "singleton taken over {} ms after its holder died (lease {} ms, renewal every {} ms)",
        died.elapsed().as_millis(),
        timing.lease.as_millis(),
        timing.renew.as_millis()
    );
    stop.cancel();
    b.await.unwrap();
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
        .record_failure(&failed_check("acme/calc", 3, day), &Default::default(), &b)
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
                .record_failure(&failed_check("acme/calc", pr, day), &cfg, &ids)
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
                .propose_fix(&failed.id, &[report], &cfg, at, &ids)
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

/// The proposal registry and the fix runs ([`ci_medic::store::proposals`]), on both backends:
/// what replica A writes, replica B reads and moves, and two replicas racing on one record
/// never both win.
mod fix_state {
    use super::*;
    use ci_medic::store::StoreError;
    use ci_medic::store::proposals::FixState;
    use ci_medic::store::registry::RegistryError;
    use ci_medic::store::runs::{FixRun, Phase, RunState};
    use ci_medic_core::proposal::machine::Stage;
    use ci_medic_core::proposal::{DdsStatus, Rule, TransitionError, derive_code_fix};

    both!(
        a_failed_check_is_recorded_once_across_replicas,
        a_source_gets_one_code_fix_across_replicas,
        a_decision_has_one_winner_across_replicas_and_a_push_time_is_kept_once,
        a_fix_run_is_never_overwritten_by_a_stale_copy,
        fix_runs_are_found_by_pull_request_pushed_commit_and_rerun,
        finished_runs_are_pruned_after_their_retention_and_only_they,
    );

    /// The sweep forgets a run finished before its cutoff, with its pushed-commit entry, and
    /// keeps runs still waiting (for a maintainer, for CI) however old, and finished ones
    /// changed since the cutoff. Before, neither backend ever deleted a run.
    async fn finished_runs_are_pruned_after_their_retention_and_only_they(f: Fixture) {
        let (a, b) = states(&f);
        let days = chrono::Duration::days;
        let mut old_done = run(1, "lint");
        old_done.state.stage = Stage::Pushed {
            commit_sha: "f1x".into(),
            files: vec!["app/main.py".into()],
        };
        a.runs.put(&mut old_done).await.unwrap();
        old_done.state.stage = Stage::Executed {
            commit_sha: "f1x".into(),
            run_url: None,
        };
        a.runs.put(&mut old_done).await.unwrap();
        let mut old_waiting = run(2, "lint");
        old_waiting.state.stage = Stage::Proposed;
        let mut old_pushed = run(3, "lint");
        old_pushed.state.stage = Stage::Pushed {
            commit_sha: "f2x".into(),
            files: vec!["app/main.py".into()],
        };
        let mut recent_done = run(4, "lint");
        recent_done.state.stage = Stage::Executed {
            commit_sha: "f3x".into(),
            run_url: None,
        };
        recent_done.updated_at = at() + days(40);
        for r in [&mut old_waiting, &mut old_pushed, &mut recent_done] {
            a.runs.put(r).await.unwrap();
        }
        assert_eq!(old_done.phase(), Phase::Finished);
        let cutoff = at() + days(30);
        assert_eq!(b.runs.prune_finished(cutoff).await.unwrap(), 1);
        assert!(a.runs.get("acme/calc", 1, "lint").await.unwrap().is_none());
        assert!(
            a.runs
                .by_pushed_commit("acme/calc", "f1x")
                .await
                .unwrap()
                .is_none(),
            "its pushed-commit entry goes with it"
        );
        for pr in [2, 3, 4] {
            assert!(
                a.runs.get("acme/calc", pr, "lint").await.unwrap().is_some(),
                "#{pr}"
            );
        }
        assert!(
            a.runs
                .by_pushed_commit("acme/calc", "f2x")
                .await
                .unwrap()
                .is_some()
        );
        assert_eq!(b.runs.prune_finished(cutoff).await.unwrap(), 0);
    }

    fn states(f: &Fixture) -> (FixState, FixState) {
        (f.a.fix_state().unwrap(), f.b.fix_state().unwrap())
    }

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 2, 2).unwrap()
    }

    fn report(file: &str) -> ci_medic_parser::BugReport {
        ci_medic_parser::BugReport {
            file_path: file.into(),
            line_number: 1,
            error_type: ci_medic_parser::BugType::Linting,
            message: "`os` imported but unused".into(),
            test_name: None,
            confidence_score: 0.95,
            column: Some(8),
            tool: Some("ruff".into()),
            rule: Some("F401".into()),
        }
    }

    fn at() -> chrono::DateTime<Utc> {
        day().and_hms_opt(12, 5, 0).unwrap().and_utc()
    }

    async fn a_failed_check_is_recorded_once_across_replicas(f: Fixture) {
        let (a, b) = states(&f);
        let cfg = Default::default();
        // Both replicas record the same failed check at once: one record, one id.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..8 {
            let (reg, ids) = if i % 2 == 0 {
                (a.registry.clone(), f.a.clone())
            } else {
                (b.registry.clone(), f.b.clone())
            };
            set.spawn(async move {
                reg.record_failure(
                    &failed_check("acme/calc", 7, day()),
                    &Default::default(),
                    &ids,
                )
                .await
                .unwrap()
            });
        }
        let mut ids = HashSet::new();
        while let Some(r) = set.join_next().await {
            ids.insert(r.unwrap().id.as_str().to_string());
        }
        assert_eq!(ids.len(), 1, "{ids:?}");
        let id = ids.into_iter().next().unwrap();
        // The other replica reads it, by check and by id.
        let by_check = b
            .registry
            .failed_for_check("acme/calc", "lint", &format!("{:040x}", 7))
            .await
            .unwrap()
            .expect("recorded");
        assert_eq!(by_check.id.as_str(), id);
        assert_eq!(
            a.registry.get_failed(&by_check.id).await.unwrap(),
            Some(by_check.clone())
        );
        assert!(
            b.registry
                .failed_for_check("acme/calc", "lint", "other")
                .await
                .unwrap()
                .is_none()
        );
        // Another commit is another failure; the list is in id order.
        let second = b
            .registry
            .record_failure(&failed_check("acme/calc", 8, day()), &cfg, &f.b)
            .await
            .unwrap();
        assert_ne!(second.id, by_check.id);
        let listed: Vec<_> = a
            .registry
            .list_failed()
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        let mut sorted = vec![by_check.id.clone(), second.id.clone()];
        sorted.sort_by(|x, y| x.as_str().cmp(y.as_str()));
        assert_eq!(listed, sorted);
        // A record stored under a taken id (another check) is refused, not overwritten.
        let mut clash = failed_check("acme/calc", 9, day());
        clash.check_name = "test".into();
        let e = a
            .registry
            .store_failure(&clash, second.clone())
            .await
            .unwrap_err();
        assert!(matches!(e, RegistryError::DuplicateFailed(_)), "{e}");
        assert_eq!(a.registry.list_failed().await.unwrap().len(), 2);
    }

    async fn a_source_gets_one_code_fix_across_replicas(f: Fixture) {
        let (a, b) = states(&f);
        let cfg = Default::default();
        let failed = a
            .registry
            .record_failure(&failed_check("acme/calc", 3, day()), &cfg, &f.a)
            .await
            .unwrap();
        // Derived apart, inserted at once from both replicas: rule 10 lets one through.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..6 {
            let (reg, ids) = if i % 2 == 0 {
                (a.registry.clone(), f.a.clone())
            } else {
                (b.registry.clone(), f.b.clone())
            };
            let source = failed.as_source();
            set.spawn(async move {
                let id = ci_medic::store::registry::next_fix_id(&ids, day())
                    .await
                    .unwrap();
                let derived =
                    derive_code_fix(&id, &source, &[report("app/main.py")], &Default::default())
                        .unwrap();
                reg.insert_code_fix(derived, at()).await
            });
        }
        let mut wins = Vec::new();
        while let Some(r) = set.join_next().await {
            match r.unwrap() {
                Ok(p) => wins.push(p),
                Err(RegistryError::Invalid(v)) => assert_eq!(v.rules(), [Rule::NoDuplicates]),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(wins.len(), 1);
        let fix = wins.pop().unwrap();
        assert_eq!(fix.status, DdsStatus::Proposed);
        // Every replica sees it, by id and by source; proposing again is refused before an
        // id is spent.
        assert_eq!(
            b.registry.get_fix(&fix.dds.id).await.unwrap(),
            Some(fix.clone())
        );
        assert_eq!(
            b.registry.fix_for_source(&failed.id).await.unwrap(),
            Some(fix.clone())
        );
        assert_eq!(b.registry.list_fixes().await.unwrap(), vec![fix.clone()]);
        let e = b
            .registry
            .propose_fix(&failed.id, &[report("app/main.py")], &cfg, at(), &f.b)
            .await
            .unwrap_err();
        assert!(matches!(&e, RegistryError::Invalid(v) if v.rules() == [Rule::NoDuplicates]));
        // A code_fix is the source of the next one, found on the other replica.
        let source = a
            .registry
            .get_source(&ci_medic_core::ids::DdsId(fix.dds.id.clone()))
            .await
            .unwrap()
            .expect("a code_fix is a source");
        assert_eq!(source.id.as_str(), fix.dds.id);
        let e = a
            .registry
            .propose_fix(
                &ci_medic_core::ids::DdsId("DDS-20260202-CODE-099".into()),
                &[report("app/main.py")],
                &cfg,
                at(),
                &f.a,
            )
            .await
            .unwrap_err();
        assert!(matches!(e, RegistryError::UnknownSource(_)), "{e}");
    }

    async fn a_decision_has_one_winner_across_replicas_and_a_push_time_is_kept_once(f: Fixture) {
        let (a, b) = states(&f);
        let cfg = Default::default();
        let failed = a
            .registry
            .record_failure(&failed_check("acme/calc", 4, day()), &cfg, &f.a)
            .await
            .unwrap();
        let fix = a
            .registry
            .propose_fix(&failed.id, &[report("app/main.py")], &cfg, at(), &f.a)
            .await
            .unwrap();
        let mut set = tokio::task::JoinSet::new();
        for i in 0..8 {
            let reg = if i % 2 == 0 {
                a.registry.clone()
            } else {
                b.registry.clone()
            };
            let to = if i % 3 == 0 {
                DdsStatus::Rejected
            } else {
                DdsStatus::Approved
            };
            let id = fix.dds.id.clone();
            set.spawn(async move {
                reg.transition(
                    &id,
                    DdsStatus::Proposed,
                    to,
                    &format!("user{i}"),
                    at(),
                    "/decide",
                )
                .await
            });
        }
        let mut wins = 0;
        while let Some(r) = set.join_next().await {
            match r.unwrap() {
                Ok(_) => wins += 1,
                Err(RegistryError::Transition {
                    source: TransitionError::Stale { .. },
                    ..
                }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(wins, 1);
        let stored = b.registry.get_fix(&fix.dds.id).await.unwrap().unwrap();
        assert_eq!(stored.history.len(), 1);
        assert_ne!(stored.status, DdsStatus::Proposed);
        // A forbidden move is refused and changes nothing.
        assert!(
            b.registry
                .transition(
                    &fix.dds.id,
                    stored.status,
                    DdsStatus::Proposed,
                    "x",
                    at(),
                    "r"
                )
                .await
                .is_err()
        );
        assert!(matches!(
            a.registry
                .transition(
                    "DDS-FIX-20260202-900",
                    DdsStatus::Proposed,
                    DdsStatus::Approved,
                    "x",
                    at(),
                    "r"
                )
                .await,
            Err(RegistryError::UnknownFix(_))
        ));
        // The first push time is kept, whichever replica records it later.
        let first = at() + chrono::Duration::minutes(5);
        a.registry.record_push(&fix.dds.id, first).await.unwrap();
        b.registry
            .record_push(&fix.dds.id, first + chrono::Duration::hours(1))
            .await
            .unwrap();
        let stored = a.registry.get_fix(&fix.dds.id).await.unwrap().unwrap();
        assert_eq!(stored.pushed_at, Some(first));
        assert_eq!(stored.history.len(), 1, "a push time is not a transition");
        assert!(matches!(
            b.registry.record_push("DDS-FIX-20260202-901", first).await,
            Err(RegistryError::UnknownFix(_))
        ));
    }

    fn run(pr: u64, check: &str) -> FixRun {
        FixRun {
            repo: "acme/calc".into(),
            pr_number: pr,
            check_name: check.into(),
            installation_id: 1,
            comment_id: None,
            comment_url: None,
            check_run_id: None,
            check_run_sha: None,
            state: RunState::new(check, pr, "aaa"),
            reports: vec![],
            pending_commit: None,
            push_target: None,
            read_from: None,
            pushed_at: None,
            previous_attempt: None,
            updated_at: at(),
            creations: Some(Default::default()),
            unpublished: false,
            version: 0,
        }
    }

    async fn a_fix_run_is_never_overwritten_by_a_stale_copy(f: Fixture) {
        let (a, b) = states(&f);
        // Two replicas create the same run at once: one is stored, the other told.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..6u64 {
            let runs = if i % 2 == 0 {
                a.runs.clone()
            } else {
                b.runs.clone()
            };
            set.spawn(async move {
                let mut r = run(5, "lint");
                r.comment_id = Some(i);
                runs.put(&mut r).await.map(|()| r)
            });
        }
        let mut created = Vec::new();
        while let Some(r) = set.join_next().await {
            match r.unwrap() {
                Ok(r) => created.push(r),
                Err(StoreError::RunChanged {
                    read: 0, found: 1, ..
                }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(created.len(), 1);
        let winner = created.pop().unwrap();
        assert_eq!(winner.version, 1);
        // Both replicas read it; A (a reconcile pass) writes first; B's copy is stale.
        let mut on_a = a.runs.get("acme/calc", 5, "lint").await.unwrap().unwrap();
        let mut on_b = b.runs.get("acme/calc", 5, "lint").await.unwrap().unwrap();
        assert_eq!(on_a.comment_id, winner.comment_id);
        assert_eq!((on_a.version, on_b.version), (1, 1));
        on_a.comment_url = Some("from A".into());
        a.runs.put(&mut on_a).await.unwrap();
        assert_eq!(on_a.version, 2);
        on_b.comment_url = Some("from B".into());
        let e = b.runs.put(&mut on_b).await.unwrap_err();
        assert!(
            matches!(
                e,
                StoreError::RunChanged {
                    read: 1,
                    found: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("acme/calc#5"), "{e}");
        assert_eq!(on_b.version, 1, "a refused write leaves the copy as read");
        let stored = b.runs.get("acme/calc", 5, "lint").await.unwrap().unwrap();
        assert_eq!(stored.comment_url.as_deref(), Some("from A"));
        // Read again, B's change goes through over A's.
        let mut again = stored;
        again.check_run_id = Some(77);
        b.runs.put(&mut again).await.unwrap();
        let stored = a.runs.get("acme/calc", 5, "lint").await.unwrap().unwrap();
        assert_eq!(
            (
                stored.comment_url.as_deref(),
                stored.check_run_id,
                stored.version
            ),
            (Some("from A"), Some(77), 3)
        );
        // Many writers racing from one read: exactly one of them wins each version.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..8u64 {
            let runs = if i % 2 == 0 {
                a.runs.clone()
            } else {
                b.runs.clone()
            };
            let mut copy = stored.clone();
            set.spawn(async move {
                copy.installation_id = 100 + i;
                runs.put(&mut copy).await.is_ok()
            });
        }
        let mut wins = 0;
        while let Some(r) = set.join_next().await {
            wins += usize::from(r.unwrap());
        }
        assert_eq!(wins, 1);
        assert_eq!(
            a.runs
                .get("acme/calc", 5, "lint")
                .await
                .unwrap()
                .unwrap()
                .version,
            4
        );
    }

    async fn fix_runs_are_found_by_pull_request_pushed_commit_and_rerun(f: Fixture) {
        let (a, b) = states(&f);
        let mut lint = run(6, "lint");
        let mut test = run(6, "test");
        let mut other_pr = run(16, "lint");
        let mut other_repo = run(6, "lint");
        other_repo.repo = "acme/calc-docs".into();
        for r in [&mut lint, &mut test, &mut other_pr, &mut other_repo] {
            a.runs.put(r).await.unwrap();
        }
        let checks = |runs: Vec<FixRun>| -> Vec<(String, u64, String)> {
            runs.into_iter()
                .map(|r| (r.repo, r.pr_number, r.check_name))
                .collect()
        };
        assert_eq!(
            checks(b.runs.for_pull_request("acme/calc", 6).await.unwrap()),
            [
                ("acme/calc".into(), 6, "lint".into()),
                ("acme/calc".into(), 6, "test".into())
            ]
        );
        let mut repo = checks(b.runs.for_repo("acme/calc").await.unwrap());
        repo.sort();
        assert_eq!(repo.len(), 3, "{repo:?}");
        assert!(repo.iter().all(|(r, _, _)| r == "acme/calc"));
        assert_eq!(b.runs.all().await.unwrap().len(), 4);
        assert!(b.runs.active().await.unwrap().is_empty());

        // Approved, then pushed: active, and found by its commit on the other replica.
        lint.state.stage = Stage::Approved {
            by: "alice".into(),
            at: "now".into(),
        };
        a.runs.put(&mut lint).await.unwrap();
        assert_eq!(checks(b.runs.active().await.unwrap()).len(), 1);
        // The commit stored to be pushed is found by its sha before the push is recorded:
        // GitHub may finish its check first, on any replica.
        lint.pending_commit = Some("f1x".into());
        a.runs.put(&mut lint).await.unwrap();
        let pending = b
            .runs
            .by_pushed_commit("acme/calc", "f1x")
            .await
            .unwrap()
            .expect("found by the commit it is about to push");
        assert_eq!(pending.pending_commit.as_deref(), Some("f1x"));
        lint.pending_commit = None;
        lint.state.stage = Stage::Pushed {
            commit_sha: "f1x".into(),
            files: vec!["app/main.py".into()],
        };
        a.runs.put(&mut lint).await.unwrap();
        let found = b
            .runs
            .by_pushed_commit("acme/calc", "f1x")
            .await
            .unwrap()
            .expect("found by its fix commit");
        assert_eq!((found.pr_number, found.check_name.as_str()), (6, "lint"));
        assert_eq!(found.version, lint.version);
        assert!(
            b.runs
                .by_pushed_commit("acme/calc-docs", "f1x")
                .await
                .unwrap()
                .is_none()
        );
        // Finished, it is no longer active, but its fix commit still leads to it (a late
        // verdict is recognised as ci-medic's).
        lint.state.stage = Stage::Executed {
            commit_sha: "f1x".into(),
            run_url: None,
        };
        a.runs.put(&mut lint).await.unwrap();
        assert!(b.runs.active().await.unwrap().is_empty());
        assert_eq!(
            b.runs
                .by_pushed_commit("acme/calc", "f1x")
                .await
                .unwrap()
                .map(|r| r.phase()),
            Some(Phase::Finished)
        );

        // A re-run awaited on `aaa`: found by commit and check, only while it is awaited.
        test.state.stage = Stage::RerunRequested {
            by: None,
            at: "now".into(),
            requested_at: Some(at()),
        };
        a.runs.put(&mut test).await.unwrap();
        assert!(
            b.runs
                .by_rerun("acme/calc", "aaa", "test")
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            b.runs
                .by_rerun("acme/calc", "aaa", "lint")
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            b.runs
                .by_rerun("acme/calc", "bbb", "test")
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(checks(b.runs.active().await.unwrap()).len(), 1);
        test.state.stage = Stage::RerunPassed { run_url: None };
        a.runs.put(&mut test).await.unwrap();
        assert!(
            b.runs
                .by_rerun("acme/calc", "aaa", "test")
                .await
                .unwrap()
                .is_none()
        );
        assert!(b.runs.get("acme/calc", 6, "nope").await.unwrap().is_none());
    }
}

// ----- the shared state beside the queue (`store::shared_state::SharedState`) -----------------

use ci_medic::setup::StoredApp;
use ci_medic::store::pg_shared_state::PgShared;
use ci_medic::store::sealing::{CredentialsKey, Keys};
use ci_medic::store::shared_state::{CredentialsError, FirstApp, SharedState, SledShared};
use secrecy::{ExposeSecret, SecretString};

/// Two replicas' handles on one shared state.
struct Shared {
    a: Arc<dyn SharedState>,
    b: Arc<dyn SharedState>,
    /// PostgreSQL only: the database, to look at what the tables hold (dropped with this).
    url: Option<common::test_db::TestDatabase>,
    _dir: Option<tempfile::TempDir>,
}

fn test_key(byte: u8) -> Keys {
    Keys::new(CredentialsKey::from_bytes([byte; 32]))
}

async fn sled_shared() -> Shared {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let s = SledShared::open(&store)
        .unwrap()
        .with_credentials(dir.path());
    Shared {
        a: Arc::new(s.clone()),
        b: Arc::new(s),
        url: None,
        _dir: Some(dir),
    }
}

async fn pg_shared(test: &str) -> Option<Shared> {
    let url = common::fresh_database(test).await?;
    let a = PgStore::connect(&url, 8).await.unwrap();
    a.migrate().await.unwrap();
    let b = PgStore::connect(&url, 8).await.unwrap();
    Some(Shared {
        a: Arc::new(PgShared::new(a, Some(test_key(7)))),
        b: Arc::new(PgShared::new(b, Some(test_key(7)))),
        url: Some(url),
        _dir: None,
    })
}

macro_rules! both_shared {
    ($($case:ident),* $(,)?) => {
        mod sled_shared {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(super::sled_shared().await).await;
                }
            )*
        }
        mod postgres_shared {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if let Some(f) = super::pg_shared(stringify!($case)).await {
                        super::$case(f).await;
                    }
                }
            )*
        }
    };
}

both_shared!(
    a_failure_then_a_pass_on_one_commit_is_a_mixed_history_on_either_replica,
    default_branch_passes_around_a_failure_are_recorded_for_the_checks_tests,
    the_last_automatic_rerun_goes_to_exactly_one_replica,
    installation_changes_from_two_replicas_all_land,
    the_app_credentials_round_trip,
    of_two_apps_stored_at_once_the_first_stays,
    the_redelivery_mark_only_moves_forward,
    a_failed_check_records_at_most_its_bound_of_tests_once,
    a_reply_asked_for_on_one_replica_is_known_on_the_other,
    reply_marks_are_pruned_after_their_retention,
    a_one_time_token_is_taken_once_on_any_replica_until_it_expires,
    one_time_tokens_are_bounded_per_kind_oldest_first,
    a_session_made_on_one_replica_is_read_on_the_other_until_it_expires_or_ends,
    sessions_are_bounded_soonest_to_expire_first,
);

/// The setup flow's `state` (and the status page sign-in's) handed out by one replica, taken
/// by whichever the browser comes back to: once, and not after its expiry.
async fn a_one_time_token_is_taken_once_on_any_replica_until_it_expires(f: Shared) {
    let now = Utc::now();
    let hour = chrono::Duration::hours(1);
    let t = TokenDigest::of("0123456789abcdef0123456789abcdef");
    f.a.put_once(OnceKind::Setup, &t, now, now + hour, 64)
        .await
        .unwrap();
    // Another kind does not take it.
    assert!(!f.b.take_once(OnceKind::SignIn, &t, now).await.unwrap());
    // Both replicas at once: one gets it.
    let (x, y) = tokio::join!(
        f.a.take_once(OnceKind::Setup, &t, now),
        f.b.take_once(OnceKind::Setup, &t, now)
    );
    assert_eq!(
        [x.unwrap(), y.unwrap()].iter().filter(|t| **t).count(),
        1,
        "one taker"
    );
    assert!(!f.a.take_once(OnceKind::Setup, &t, now).await.unwrap());
    // Expired by the time it comes back: refused, and gone.
    let late = TokenDigest::of("late");
    f.a.put_once(OnceKind::Setup, &late, now, now + hour, 64)
        .await
        .unwrap();
    assert!(
        !f.b.take_once(OnceKind::Setup, &late, now + hour)
            .await
            .unwrap()
    );
    f.a.put_once(OnceKind::SignIn, &late, now, now + hour, 64)
        .await
        .unwrap();
    assert!(
        f.b.take_once(
            OnceKind::SignIn,
            &late,
            now + hour - chrono::Duration::seconds(1)
        )
        .await
        .unwrap()
    );
}

/// The pages that hand tokens out are open to anyone: each kind keeps at most its bound, the
/// oldest going first, and expired ones make room.
async fn one_time_tokens_are_bounded_per_kind_oldest_first(f: Shared) {
    let t0 = Utc::now();
    let hour = chrono::Duration::hours(1);
    let sec = chrono::Duration::seconds(1);
    let tok = |i: usize| TokenDigest::of(&format!("token-{i}"));
    for i in 0..4 {
        let at = t0 + sec * i as i32;
        f.a.put_once(OnceKind::Setup, &tok(i), at, at + hour, 3)
            .await
            .unwrap();
    }
    // A sign-in state does not push setup states out.
    f.b.put_once(OnceKind::SignIn, &tok(9), t0, t0 + hour, 1)
        .await
        .unwrap();
    let now = t0 + sec * 10;
    assert!(
        !f.b.take_once(OnceKind::Setup, &tok(0), now).await.unwrap(),
        "the oldest went"
    );
    for i in 1..4 {
        assert!(
            f.b.take_once(OnceKind::Setup, &tok(i), now).await.unwrap(),
            "{i}"
        );
    }
    assert!(f.a.take_once(OnceKind::SignIn, &tok(9), now).await.unwrap());
}

fn operator_session(expires: chrono::DateTime<Utc>) -> StoredSession {
    StoredSession {
        role: Role::Operator,
        csrf: "c5rf".into(),
        expires,
    }
}

/// A status page sign-in on one replica is honoured by the other, until it expires (12 hours
/// after it was made, not extended by use) or is signed out on either.
async fn a_session_made_on_one_replica_is_read_on_the_other_until_it_expires_or_ends(f: Shared) {
    let now = Utc::now();
    let ttl = chrono::Duration::hours(12);
    let user = StoredSession {
        role: Role::User {
            login: "mona".into(),
            repos: ["octo/a".to_string(), "octo/b".to_string()]
                .into_iter()
                .collect(),
        },
        csrf: "csrf-token".into(),
        expires: now + ttl,
    };
    let id = TokenDigest::of("session-id-1");
    f.a.put_session(&id, &user, now, 100).await.unwrap();
    let got = f.b.session(&id, now).await.unwrap().unwrap();
    assert_eq!(got.role, user.role);
    assert_eq!(got.csrf, user.csrf);
    assert_eq!(
        got.expires.timestamp_micros(),
        user.expires.timestamp_micros()
    );
    assert!(
        f.b.session(&TokenDigest::of("session-id-2"), now)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        f.b.session(&id, now + ttl).await.unwrap().is_none(),
        "expired"
    );
    f.b.end_session(&id).await.unwrap();
    assert!(f.a.session(&id, now).await.unwrap().is_none(), "signed out");
    // Ending one that is not there is no error.
    f.a.end_session(&id).await.unwrap();
}

async fn sessions_are_bounded_soonest_to_expire_first(f: Shared) {
    let now = Utc::now();
    let hour = chrono::Duration::hours(1);
    let id = |i: usize| TokenDigest::of(&format!("session-{i}"));
    // Made in the order 0, 1, 2 with expiries 2 h, 1 h, 3 h; the bound is 2.
    for (i, h) in [(0, 2), (1, 1), (2, 3)] {
        f.a.put_session(&id(i), &operator_session(now + hour * h), now, 2)
            .await
            .unwrap();
    }
    assert!(
        f.b.session(&id(1), now).await.unwrap().is_none(),
        "soonest went"
    );
    assert!(f.b.session(&id(0), now).await.unwrap().is_some());
    assert!(f.b.session(&id(2), now).await.unwrap().is_some());
    // Expired ones make room: at 2 h 30 only session 2 lives, so a new one pushes nothing out.
    let later = now + hour * 2 + hour / 2;
    f.b.put_session(&id(3), &operator_session(later + hour), later, 2)
        .await
        .unwrap();
    assert!(f.a.session(&id(2), later).await.unwrap().is_some());
    assert!(f.a.session(&id(3), later).await.unwrap().is_some());
}

/// The sweep forgets reply marks asked for before its cutoff, on either replica, and keeps
/// the others. Before, neither backend ever deleted one.
async fn reply_marks_are_pruned_after_their_retention(f: Shared) {
    f.a.mark_reply_asked("o/r", 17).await.unwrap();
    f.a.mark_reply_asked("o/r", 18).await.unwrap();
    let asked = Utc::now();
    let hour = chrono::Duration::hours(1);
    assert_eq!(f.b.prune_reply_marks(asked - hour).await.unwrap(), 0);
    assert!(
        f.b.reply_asked("o/r", 17).await.unwrap(),
        "a recent mark stays"
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let later = Utc::now();
    f.a.mark_reply_asked("o/r", 19).await.unwrap();
    assert_eq!(f.b.prune_reply_marks(later).await.unwrap(), 2);
    assert!(!f.a.reply_asked("o/r", 17).await.unwrap());
    assert!(!f.a.reply_asked("o/r", 18).await.unwrap());
    assert!(
        f.a.reply_asked("o/r", 19).await.unwrap(),
        "asked after the cutoff"
    );
    assert_eq!(f.a.prune_reply_marks(later).await.unwrap(), 0);
}

/// The mark is what keeps a retried command job from replying twice: the retry may run on
/// the other replica.
async fn a_reply_asked_for_on_one_replica_is_known_on_the_other(f: Shared) {
    assert!(!f.b.reply_asked("o/r", 17).await.unwrap());
    f.a.mark_reply_asked("o/r", 17).await.unwrap();
    // Marked again by a retry: still one mark, no error.
    f.a.mark_reply_asked("o/r", 17).await.unwrap();
    assert!(f.b.reply_asked("o/r", 17).await.unwrap());
    assert!(!f.b.reply_asked("o/r", 18).await.unwrap());
    assert!(!f.b.reply_asked("o/other", 17).await.unwrap());
}

fn tests_named(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

async fn a_failure_then_a_pass_on_one_commit_is_a_mixed_history_on_either_replica(f: Shared) {
    let tests = tests_named(&[
        "tests/test_api.py::test_login",
        "tests/test_api.py::test_me",
    ]);
    assert_eq!(
        f.a.record_failures("o/r", "test", "abc", false, &tests)
            .await
            .unwrap(),
        2
    );
    // The same failure redelivered to the other replica is not a second outcome.
    assert_eq!(
        f.b.record_failures("o/r", "test", "abc", false, &tests)
            .await
            .unwrap(),
        0
    );
    // Another check passing on the commit says nothing about these tests.
    assert_eq!(
        f.b.record_check_passed("o/r", "lint", "abc").await.unwrap(),
        0
    );
    assert_eq!(
        f.b.record_check_passed("o/r", "test", "abc").await.unwrap(),
        2
    );
    assert_eq!(
        f.a.record_check_passed("o/r", "test", "abc").await.unwrap(),
        0
    );
    let h = f.a.histories("o/r", &tests[..1]).await.unwrap();
    assert_eq!(
        h.iter()
            .map(|o| (o.passed, o.head_sha.as_str()))
            .collect::<Vec<_>>(),
        vec![(false, "abc"), (true, "abc")]
    );
    assert!(h.iter().all(|o| o.test == tests[0] && !o.on_default_branch));
    // Per test, in the order asked.
    let both =
        f.b.histories("o/r", &[tests[1].clone(), tests[0].clone()])
            .await
            .unwrap();
    assert_eq!(both.len(), 4);
    assert_eq!(both[0].test, tests[1]);
    assert_eq!(both[3].test, tests[0]);
    // Another repository's test of the same name is another test.
    assert!(f.a.histories("o/other", &tests).await.unwrap().is_empty());
}

async fn a_failed_check_records_at_most_its_bound_of_tests_once(f: Shared) {
    use ci_medic::store::triage::MAX_TESTS_PER_CHECK;
    // A suite failing wholesale, one test named twice.
    let mut many: Vec<String> = (0..MAX_TESTS_PER_CHECK + 50)
        .map(|i| format!("t{i:03}"))
        .collect();
    many.insert(1, "t000".into());
    let n =
        f.a.record_failures("o/r", "test", "abc", false, &many)
            .await
            .unwrap();
    assert_eq!(n, MAX_TESTS_PER_CHECK - 1, "the bound, each test once");
    let h = f.b.histories("o/r", &many[..3]).await.unwrap();
    assert_eq!(
        h.iter().map(|o| o.test.as_str()).collect::<Vec<_>>(),
        vec!["t000", "t001"],
        "per test as asked, each once"
    );
    assert!(
        f.b.histories("o/r", &[format!("t{:03}", MAX_TESTS_PER_CHECK + 10)])
            .await
            .unwrap()
            .is_empty(),
        "beyond the bound: not recorded"
    );
}

async fn default_branch_passes_around_a_failure_are_recorded_for_the_checks_tests(f: Shared) {
    let flaky = tests_named(&["tests/test_net.py::test_timeout"]);
    // Known from a pull request's failure first.
    f.a.record_failures("o/r", "test", "pr1", false, &flaky)
        .await
        .unwrap();
    // main: passes at m1, fails at m2, passes at m3 (events spread over both replicas).
    assert_eq!(
        f.a.record_default_branch_pass("o/r", "test", "m1")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        f.b.record_default_branch_pass("o/r", "test", "m1")
            .await
            .unwrap(),
        0,
        "a redelivered success is not a second pass"
    );
    assert_eq!(
        f.b.record_failures("o/r", "test", "m2", true, &flaky)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        f.a.record_default_branch_pass("o/r", "test", "m3")
            .await
            .unwrap(),
        1
    );
    // Another check's success names none of this check's tests.
    assert_eq!(
        f.a.record_default_branch_pass("o/r", "lint", "m4")
            .await
            .unwrap(),
        0
    );
    let h = f.b.histories("o/r", &flaky).await.unwrap();
    let main: Vec<(bool, &str)> = h
        .iter()
        .filter(|o| o.on_default_branch)
        .map(|o| (o.passed, o.head_sha.as_str()))
        .collect();
    assert_eq!(main, vec![(true, "m1"), (false, "m2"), (true, "m3")]);
    // The triage calls it flaky from this history, naming the commits.
    let report = ci_medic_parser::BugReport {
        file_path: "tests/test_net.py".into(),
        line_number: 12,
        error_type: ci_medic_parser::BugType::Logic,
        message: "AssertionError".into(),
        test_name: Some(flaky[0].clone()),
        confidence_score: 0.9,
        column: None,
        tool: Some("pytest".into()),
        rule: None,
    };
    let facts = ci_medic_triage::CheckFacts {
        head_sha: Some("pr2".into()),
        ..Default::default()
    };
    let t = ci_medic_triage::triage(b"", &[report], &facts, &h);
    let named = t
        .flaky
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("; ");
    assert!(
        named.contains("test_timeout") && named.contains("m2"),
        "{named}"
    );
}

async fn the_last_automatic_rerun_goes_to_exactly_one_replica(f: Shared) {
    let now = Utc::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..24 {
        let s = if i % 2 == 0 { f.a.clone() } else { f.b.clone() };
        set.spawn(async move { s.take_rerun("o/r", "abc", "test", 3, now).await.unwrap() });
    }
    let mut taken = 0;
    while let Some(r) = set.join_next().await {
        taken += usize::from(r.unwrap());
    }
    assert_eq!(taken, 3, "exactly max re-runs, whoever asked");
    assert_eq!(f.b.reruns("o/r", "abc", "test").await.unwrap(), 3);
    // Per commit and check.
    assert!(f.a.take_rerun("o/r", "abc", "lint", 1, now).await.unwrap());
    assert!(f.b.take_rerun("o/r", "def", "test", 1, now).await.unwrap());
    assert!(!f.a.take_rerun("o/r", "abc", "build", 0, now).await.unwrap());
    assert_eq!(f.a.reruns("o/r", "zzz", "test").await.unwrap(), 0);
}

async fn installation_changes_from_two_replicas_all_land(f: Shared) {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..16 {
        let s = if i % 2 == 0 { f.a.clone() } else { f.b.clone() };
        set.spawn(async move {
            s.apply_installation(7, Some("octo"), false, &[format!("octo/r{i:02}")], &[])
                .await
                .unwrap()
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    let rec = f.b.installation(7).await.unwrap().unwrap();
    assert_eq!(rec.account.as_deref(), Some("octo"));
    assert_eq!(rec.repositories.len(), 16, "no change lost to a race");
    let rec =
        f.a.apply_installation(
            7,
            None,
            false,
            &tests_named(&["octo/new"]),
            &tests_named(&["octo/r00"]),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.account.as_deref(), Some("octo"), "kept when not said");
    assert!(rec.repositories.contains("octo/new") && !rec.repositories.contains("octo/r00"));
    f.b.apply_installation(9, None, false, &[], &[])
        .await
        .unwrap();
    assert_eq!(
        f.a.installations()
            .await
            .unwrap()
            .iter()
            .map(|i| i.id)
            .collect::<Vec<_>>(),
        vec![7, 9]
    );
    assert!(
        f.b.apply_installation(7, None, true, &[], &[])
            .await
            .unwrap()
            .is_none()
    );
    assert!(f.a.installation(7).await.unwrap().is_none());
}

const TEST_PEM: &str = include_str!("../fixtures/keys/test-app.pem");

fn test_app() -> StoredApp {
    StoredApp {
        app_id: 4242,
        private_key_pem: SecretString::from(TEST_PEM.to_string()),
        webhook_secret: SecretString::from("hook-s3cret-value".to_string()),
        slug: "ci-medic-test".into(),
        html_url: "https://github.com/apps/ci-medic-test".into(),
        client_id: Some("Iv1.0123456789abcdef".into()),
        client_secret: Some(SecretString::from("oauth-s3cret-value".to_string())),
    }
}

async fn the_app_credentials_round_trip(f: Shared) {
    assert!(f.a.load_app().await.unwrap().is_none());
    f.a.store_app(&test_app()).await.unwrap();
    let back = f.b.load_app().await.unwrap().unwrap();
    assert_eq!(back.app_id, 4242);
    assert_eq!(back.private_key_pem.expose_secret(), TEST_PEM);
    assert_eq!(back.webhook_secret.expose_secret(), "hook-s3cret-value");
    assert_eq!(
        back.client_secret.as_ref().map(|s| s.expose_secret()),
        Some("oauth-s3cret-value")
    );
    assert_eq!(back.client_id.as_deref(), Some("Iv1.0123456789abcdef"));
    assert_eq!(back.slug, "ci-medic-test");
}

/// Two setup flows finishing at once, on two replicas: the App is stored insert-once, the
/// first stays and the second is told which App is there; a later one changes nothing. A key
/// rotation (`store_app`) still replaces it.
async fn of_two_apps_stored_at_once_the_first_stays(f: Shared) {
    let first = test_app();
    let second = StoredApp {
        app_id: 4343,
        webhook_secret: SecretString::from("second-hook-s3cret".to_string()),
        slug: "ci-medic-second".into(),
        html_url: "https://github.com/apps/ci-medic-second".into(),
        ..test_app()
    };
    let (x, y) = tokio::join!(f.a.store_first_app(&first), f.b.store_first_app(&second));
    let (winner, secret) = match (x.unwrap(), y.unwrap()) {
        (FirstApp::Stored, FirstApp::AlreadySetUp(s)) => {
            assert_eq!(s.app_id, 4242, "the second is told the first");
            (4242, "hook-s3cret-value")
        }
        (FirstApp::AlreadySetUp(s), FirstApp::Stored) => {
            assert_eq!(s.app_id, 4343, "the first is told the second");
            (4343, "second-hook-s3cret")
        }
        other => panic!("exactly one App is stored: {other:?}"),
    };
    for side in [&f.a, &f.b] {
        let stored = side.load_app().await.unwrap().unwrap();
        assert_eq!(stored.app_id, winner);
        assert_eq!(
            stored.webhook_secret.expose_secret(),
            secret,
            "not a mix of both"
        );
    }
    let third = StoredApp {
        app_id: 4444,
        ..test_app()
    };
    match f.b.store_first_app(&third).await.unwrap() {
        FirstApp::AlreadySetUp(s) => assert_eq!(s.app_id, winner),
        FirstApp::Stored => panic!("a later App replaced the stored one"),
    }
    f.a.store_app(&third).await.unwrap();
    assert_eq!(f.b.load_app().await.unwrap().unwrap().app_id, 4444);
}

async fn the_redelivery_mark_only_moves_forward(f: Shared) {
    assert!(f.a.redelivery_mark().await.unwrap().is_none());
    let t1 = Utc::now() - chrono::Duration::minutes(5);
    let t0 = t1 - chrono::Duration::minutes(5);
    f.a.set_redelivery_mark(t1).await.unwrap();
    // A slower replica's older pass does not move it back.
    f.b.set_redelivery_mark(t0).await.unwrap();
    let got = f.b.redelivery_mark().await.unwrap().unwrap();
    assert_eq!(got.timestamp_micros(), t1.timestamp_micros());
}

/// What the table holds is sealed: none of the secrets in clear, and only the right key opens it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stored_credentials_are_sealed_and_a_wrong_key_is_a_clear_error() {
    let Some(f) = pg_shared("credentials_sealed").await else {
        return;
    };
    f.a.store_app(&test_app()).await.unwrap();
    let url = f.url.as_ref().unwrap().to_string();
    let raw = {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        // Every column of the table, as text (bytea shown as hex) and as raw bytes.
        let text: String = sqlx::query_scalar("SELECT row_to_json(c)::text FROM app_credentials c")
            .fetch_one(&mut c)
            .await
            .unwrap();
        let bytes: Vec<Vec<u8>> = sqlx::query_scalar(
            "SELECT unnest(ARRAY[private_key_pem, webhook_secret, client_secret]) FROM app_credentials",
        )
        .fetch_all(&mut c)
        .await
        .unwrap();
        (text, bytes)
    };
    let mut haystacks: Vec<Vec<u8>> = raw.1.clone();
    haystacks.push(raw.0.clone().into_bytes());
    for secret in [
        TEST_PEM.as_bytes(),
        b"PRIVATE KEY".as_slice(),
        // A line of the key's base64 body.
        TEST_PEM.lines().nth(1).unwrap().as_bytes(),
        b"hook-s3cret-value",
        b"oauth-s3cret-value",
    ] {
        for (i, h) in haystacks.iter().enumerate() {
            assert!(
                !h.windows(secret.len()).any(|w| w == secret),
                "stored value {i} holds a secret in clear"
            );
            // Nor as hex, which is how PostgreSQL prints bytea.
            let hexed = hex::encode(secret);
            assert!(!String::from_utf8_lossy(h).contains(&hexed));
        }
    }
    let pg = PgStore::connect(&url, 2).await.unwrap();
    // A wrong key: a clear error naming the setting and key ids, never a key.
    let wrong = PgShared::new(pg.clone(), Some(test_key(8)));
    let e = wrong.load_app().await.unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("CREDENTIALS_KEY") && msg.contains("another key"),
        "{msg}"
    );
    assert!(!msg.contains(&hex::encode([8u8; 32])), "{msg}");
    // No key at all: said as such.
    let none = PgShared::new(pg.clone(), None);
    assert!(matches!(
        none.load_app().await,
        Err(CredentialsError::NoKey)
    ));
    // A rotation: the previous key opens them and they are sealed again with the new one.
    let rotating = PgShared::new(
        pg.clone(),
        Some(Keys {
            current: CredentialsKey::from_bytes([9; 32]),
            previous: Some(CredentialsKey::from_bytes([7; 32])),
        }),
    );
    let app = rotating.load_app().await.unwrap().unwrap();
    assert_eq!(app.webhook_secret.expose_secret(), "hook-s3cret-value");
    let new_only = PgShared::new(pg.clone(), Some(test_key(9)));
    assert_eq!(
        new_only
            .load_app()
            .await
            .unwrap()
            .unwrap()
            .private_key_pem
            .expose_secret(),
        TEST_PEM
    );
    assert!(
        PgShared::new(pg, Some(test_key(7)))
            .load_app()
            .await
            .is_err(),
        "the old key no longer opens them"
    );
}

/// The outcomes table is bounded, oldest first, as sled's trees are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outcomes_are_bounded_oldest_first() {
    let Some(url) = common::fresh_database("outcomes_bounded").await else {
        return;
    };
    let pg = PgStore::connect(&url, 2).await.unwrap();
    pg.migrate().await.unwrap();
    let s = PgShared::new(pg, None).with_max_outcomes(10);
    for i in 0..6 {
        s.record_failures(
            "o/r",
            "test",
            &format!("s{i}"),
            false,
            &tests_named(&["t0", "t1"]),
        )
        .await
        .unwrap();
    }
    let h = s
        .histories("o/r", &tests_named(&["t0", "t1"]))
        .await
        .unwrap();
    assert_eq!(h.len(), 10);
    assert!(
        h.iter().all(|o| o.head_sha != "s0"),
        "the oldest went first"
    );
}

/// The tests' own databases: a name says when it was made, so a later run can sweep it once
/// it is a leftover, and fits PostgreSQL's 63 bytes (a longer one would be cut, its random
/// part first).
#[test]
fn names_carry_their_creation_time_and_fit_postgresql() {
    let name = common::test_db::database_name(
        "A_very_long_test_name_that_goes_on_and_on::with-odd/chars",
        1_764_000_000,
        [0xab; 6],
    );
    assert!(name.len() <= 63, "{name}");
    assert!(
        name.starts_with("t_1764000000_a_very_long_test_name"),
        "{name}"
    );
    assert!(name.ends_with("_abababababab"), "{name}");
    assert_eq!(common::test_db::created_at(&name), Some(1_764_000_000));
    // Names made before: no time in them.
    assert_eq!(
        common::test_db::created_at("t_replica_storm_fd49978295fc"),
        None
    );
    assert_eq!(common::test_db::created_at("t_2024_x_ab"), None);
    assert_eq!(common::test_db::created_at("ci_medic_test"), None);
}
