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
use ci_medic::store::proposals::Proposals;
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
    assert!(
        a.migrate().await.unwrap().starts_with(&[1, 2]),
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
    );

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
