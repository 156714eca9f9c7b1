//! `ci-medic migrate --from-sled DIR`, as the real binary: a stopped sled `DATA_DIR`'s
//! pending jobs (queued and parked, with their payloads, in order), the delivery ids it
//! remembers and its per-day DDS counters reach PostgreSQL; finished jobs do not; a second
//! run copies nothing twice; a directory without a database or one `serve` still holds is a
//! clear error.

mod common;

use std::process::Command;
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use ci_medic::store::backend::Backend;
use ci_medic::store::pg::PgStore;
use ci_medic::store::registry::IdKind;
use ci_medic::store::{Accepted, DeliveryRecord, JobState, NewJob, Store};

fn delivery(id: &str) -> DeliveryRecord {
    DeliveryRecord {
        id: id.into(),
        event: "check_run".into(),
        action: Some("completed".into()),
        received_at: Utc::now(),
        queued: true,
    }
}

fn migrate(url: &str, dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .args(["migrate", "--from-sled"])
        .arg(dir)
        .env_clear()
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "off")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_jobs_payloads_and_counters_move_from_sled_to_postgresql() {
    let Some(url) = common::fresh_database("migrate_from_sled").await else {
        return;
    };
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let lease = Duration::from_secs(60);
        for (id, key) in [
            ("done", "pr-1"),
            ("parked", "pr-2"),
            ("q1", "pr-3"),
            ("q2", "pr-3"),
        ] {
            let got = store
                .accept(
                    &delivery(id),
                    format!("{{\"d\":\"{id}\"}}").as_bytes(),
                    Some(NewJob::delivery(key)),
                )
                .await
                .unwrap();
            assert!(matches!(got, Accepted::New { job_id: Some(_) }));
        }
        // Acknowledged and ignored: no job, but a redelivery must stay a duplicate.
        let mut ignored = delivery("ignored");
        ignored.queued = false;
        store.accept(&ignored, b"", None).await.unwrap();
        let done = store.claim("w", lease).await.unwrap().unwrap();
        assert!(store.finish(done.id, "w").await.unwrap());
        let parked = store.claim("w", lease).await.unwrap().unwrap();
        assert_eq!(parked.delivery_id, "parked");
        assert!(store.park(parked.id, "w", "gave up").await.unwrap());
        let reg = store.registry().unwrap();
        for _ in 0..5 {
            reg.next_seq(IdKind::CodeFix, day).unwrap();
        }
        reg.next_seq(IdKind::FailedCodeChange, day).unwrap();
        Backend::close(&store).await.unwrap();
    }

    // The database already numbered two failed code_changes that day: the larger wins.
    let db = PgStore::connect(&url, 2).await.unwrap();
    db.migrate().await.unwrap();
    db.next_seq(IdKind::FailedCodeChange, day).await.unwrap();
    db.next_seq(IdKind::FailedCodeChange, day).await.unwrap();

    let out = migrate(&url, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "2 queued and 1 parked jobs, 2 other delivery ids, 2 DDS counters; 0 jobs were already"
        ),
        "{stdout}"
    );

    let jobs = db.jobs().await.unwrap();
    let got: Vec<(&str, &str, JobState, u32)> = jobs
        .iter()
        .map(|j| (j.delivery_id.as_str(), j.key.as_str(), j.state, j.attempts))
        .collect();
    assert_eq!(
        got,
        [
            ("parked", "pr-2", JobState::Parked, 1),
            ("q1", "pr-3", JobState::Queued, 0),
            ("q2", "pr-3", JobState::Queued, 0),
        ]
    );
    assert_eq!(jobs[0].last_error.as_deref(), Some("gave up"));
    assert_eq!(
        db.payload("q2").await.unwrap().as_deref(),
        Some(&b"{\"d\":\"q2\"}"[..])
    );
    // A migrated delivery redelivered by GitHub is a duplicate, also the processed and the
    // ignored ones (their ids only: no job, no payload).
    for id in ["q1", "done", "ignored"] {
        assert_eq!(
            db.accept(&delivery(id), b"{}", Some(NewJob::delivery("pr-3")))
                .await
                .unwrap(),
            Accepted::Duplicate,
            "{id}"
        );
    }
    assert_eq!(db.jobs().await.unwrap().len(), 3);
    // Numbers continue after sled's and never go back below the database's.
    assert_eq!(db.next_seq(IdKind::CodeFix, day).await.unwrap(), 6);
    assert_eq!(db.next_seq(IdKind::FailedCodeChange, day).await.unwrap(), 3);
    // Queue order is kept: the first job of pr-3 is claimed first.
    assert_eq!(
        db.claim("r", Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap()
            .delivery_id,
        "q1"
    );

    // Again: nothing is copied twice.
    let out = migrate(&url, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("0 queued and 0 parked jobs, 0 other delivery ids"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 jobs were already in the database"),
        "{stdout}"
    );
    assert_eq!(db.jobs().await.unwrap().len(), 3);

    // Bad input: no database in the directory, and one still open by a process.
    let empty = tempfile::tempdir().unwrap();
    let out = migrate(&url, empty.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--from-sled") && err.contains("no ci-medic database"),
        "{err}"
    );
    let held = Store::open(dir.path()).unwrap();
    let out = migrate(&url, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("stop `serve` on it first"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    drop(held);
}

/// The proposal registry and the fix runs move too: a proposal published and approved on sled
/// (its transition and push time), and its run waiting for CI's verdict on the pushed fix,
/// are found on PostgreSQL by every replica, and move on there. A second run copies nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_transitions_and_runs_move_from_sled_to_postgresql() {
    use ci_medic::store::proposals::Proposals;
    use ci_medic::store::runs::{FixRun, Phase, RunState, RunStore};
    use ci_medic_core::proposal::machine::Stage;
    use ci_medic_core::proposal::{DdsStatus, FailedCheck};

    let Some(url) = common::fresh_database("migrate_proposals_from_sled").await else {
        return;
    };
    let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
    let at = day.and_hms_opt(12, 0, 0).unwrap().and_utc();
    let check = FailedCheck {
        project: "acme/calc".into(),
        check_name: "lint".into(),
        head_sha: "a".repeat(40),
        pr_number: Some(3),
        changed_files: vec!["app/main.py".into()],
        failed_at: at,
    };
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
    let dir = tempfile::tempdir().unwrap();
    let (failed, fix) = {
        let store = Store::open(dir.path()).unwrap();
        let reg = store.registry().unwrap();
        let cfg = Default::default();
        let failed = reg.record_failure(&check, &cfg, &store).await.unwrap();
        let fix = reg
            .propose_fix(&failed.id, std::slice::from_ref(&report), &cfg, at, &store)
            .await
            .unwrap();
        reg.transition(
            &fix.dds.id,
            DdsStatus::Proposed,
            DdsStatus::Approved,
            "alice",
            at,
            "/approve",
        )
        .unwrap();
        reg.record_push(&fix.dds.id, at).unwrap();
        let mut state = RunState::new("lint", 3, &check.head_sha);
        state.stage = Stage::Pushed {
            commit_sha: "f".repeat(40),
            files: vec!["app/main.py".into()],
        };
        let mut run = FixRun {
            repo: "acme/calc".into(),
            pr_number: 3,
            check_name: "lint".into(),
            installation_id: 9,
            comment_id: Some(41),
            comment_url: None,
            check_run_id: None,
            check_run_sha: None,
            state,
            reports: vec![report],
            pending_commit: None,
            push_target: None,
            read_from: None,
            pushed_at: Some(at),
            previous_attempt: None,
            updated_at: at,
            creations: None,
            unpublished: false,
            version: 0,
        };
        let runs = RunStore::open(&store).unwrap();
        runs.put(&mut run).unwrap();
        runs.put(&mut run).unwrap();
        Backend::close(&store).await.unwrap();
        (failed, fix)
    };

    let db = PgStore::connect(&url, 2).await.unwrap();
    db.migrate().await.unwrap();
    let out = migrate(&url, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "1 failed code_change records, 1 code_fix proposals (with their transitions), 1 fix runs"
        ),
        "{stdout}"
    );

    let state = db.fix_state().unwrap();
    assert_eq!(
        state
            .registry
            .failed_for_check("acme/calc", "lint", &check.head_sha)
            .await
            .unwrap(),
        Some(failed.clone())
    );
    let moved = state.registry.get_fix(&fix.dds.id).await.unwrap().unwrap();
    assert_eq!(moved.status, DdsStatus::Approved);
    assert_eq!(moved.history.len(), 1);
    assert_eq!(moved.history[0].actor, "alice");
    assert_eq!(moved.pushed_at, Some(at));
    assert_eq!(
        state.registry.fix_for_source(&failed.id).await.unwrap(),
        Some(moved.clone())
    );
    // The run, found by its pushed commit (CI's verdict), at the version sled had written.
    let run = state
        .runs
        .by_pushed_commit("acme/calc", &"f".repeat(40))
        .await
        .unwrap()
        .expect("the run is found by its fix commit");
    assert_eq!((run.comment_id, run.version), (Some(41), 2));
    assert!(matches!(run.phase(), Phase::Pushed { .. }));
    assert_eq!(state.runs.active().await.unwrap().len(), 1);
    // Rule 10 holds across the move: the source already has its fix.
    assert!(
        state
            .registry
            .propose_fix(&failed.id, &[], &Default::default(), at, &db)
            .await
            .is_err()
    );
    // The verdict moves it on PostgreSQL.
    state
        .registry
        .transition(
            &fix.dds.id,
            DdsStatus::Approved,
            DdsStatus::Executed,
            "ci-medic",
            at,
            "check passed",
        )
        .await
        .unwrap();

    // Again: nothing is copied twice, and what moved on in the database stays as it is.
    let out = migrate(&url, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "0 failed code_change records, 0 code_fix proposals (with their transitions), 0 fix runs"
        ),
        "{stdout}"
    );
    assert_eq!(
        state
            .registry
            .get_fix(&fix.dds.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        DdsStatus::Executed
    );
}

// ----- the shared state beside the queue ------------------------------------------------------

fn migrate_with_key(url: &str, dir: &std::path::Path, key: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
    cmd.args(["migrate", "--from-sled"])
        .arg(dir)
        .env_clear()
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "off");
    if let Some(k) = key {
        cmd.env("CREDENTIALS_KEY", k);
    }
    cmd.output().unwrap()
}

/// Triage history, re-run counters, installations, reply marks and the App's credentials (sealed with
/// `CREDENTIALS_KEY`) reach PostgreSQL; a second run copies nothing twice; without a key the
/// credentials stay behind and the command says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_history_installations_and_credentials_move_from_sled_to_postgresql() {
    use ci_medic::store::pg_shared_state::PgShared;
    use ci_medic::store::sealing::{CredentialsKey, Keys};
    use ci_medic::store::shared_state::{SharedState, SledShared};
    use secrecy::{ExposeSecret, SecretString};

    let Some(url) = common::fresh_database("migrate_shared_from_sled").await else {
        return;
    };
    let pem = include_str!("../fixtures/keys/test-app.pem");
    let dir = tempfile::tempdir().unwrap();
    let tests = vec!["tests/test_a.py::test_flaky".to_string()];
    {
        let store = Store::open(dir.path()).unwrap();
        let s = SledShared::open(&store)
            .unwrap()
            .with_credentials(dir.path());
        s.record_failures("o/r", "test", "pr1", false, &tests)
            .await
            .unwrap();
        s.record_default_branch_pass("o/r", "test", "m1")
            .await
            .unwrap();
        s.record_failures("o/r", "test", "m2", true, &tests)
            .await
            .unwrap();
        assert!(
            s.take_rerun("o/r", "pr1", "test", 2, Utc::now())
                .await
                .unwrap()
        );
        s.apply_installation(7, Some("octo"), false, &["octo/a".to_string()], &[])
            .await
            .unwrap();
        s.mark_reply_asked("octo/a", 4242).await.unwrap();
        s.store_app(&ci_medic::setup::StoredApp {
            app_id: 99,
            private_key_pem: SecretString::from(pem.to_string()),
            webhook_secret: SecretString::from("migrated-hook-secret".to_string()),
            slug: "medic".into(),
            html_url: "https://github.com/apps/medic".into(),
            client_id: None,
            client_secret: None,
        })
        .await
        .unwrap();
        Backend::close(&store).await.unwrap();
    }

    // Without a key: everything but the credentials, and a line saying so.
    let out = migrate_with_key(&url, dir.path(), None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "3 test outcomes, 1 re-run counters, 1 installations, 1 reply marks; App credentials not copied"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("not copied: set CREDENTIALS_KEY"),
        "{stderr}"
    );
    let key_hex = "5a".repeat(32);
    let out = migrate_with_key(&url, dir.path(), Some(&key_hex));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "0 test outcomes, 0 re-run counters, 0 installations, 0 reply marks; App credentials copied"
        ),
        "{stdout}"
    );
    // Again: nothing twice.
    let out = migrate_with_key(&url, dir.path(), Some(&key_hex));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "0 test outcomes, 0 re-run counters, 0 installations, 0 reply marks; App credentials not copied"
        ),
        "{stdout}"
    );

    let db = PgStore::connect(&url, 2).await.unwrap();
    let key = Keys::new(CredentialsKey::parse(&key_hex, "CREDENTIALS_KEY").unwrap());
    let pg = PgShared::new(db, Some(key));
    let h = pg.histories("o/r", &tests).await.unwrap();
    assert_eq!(
        h.iter()
            .map(|o| (o.head_sha.as_str(), o.on_default_branch, o.passed))
            .collect::<Vec<_>>(),
        vec![
            ("pr1", false, false),
            ("m1", true, true),
            ("m2", true, false)
        ]
    );
    // The budget already spent on sled is spent on PostgreSQL too.
    assert_eq!(pg.reruns("o/r", "pr1", "test").await.unwrap(), 1);
    assert!(
        pg.take_rerun("o/r", "pr1", "test", 2, Utc::now())
            .await
            .unwrap()
    );
    assert!(
        !pg.take_rerun("o/r", "pr1", "test", 2, Utc::now())
            .await
            .unwrap()
    );
    let inst = pg.installation(7).await.unwrap().unwrap();
    assert!(inst.repositories.contains("octo/a"));
    // A reply asked for on sled is known on PostgreSQL: a retried job looks for it first.
    assert!(pg.reply_asked("octo/a", 4242).await.unwrap());
    assert!(!pg.reply_asked("octo/a", 4243).await.unwrap());
    let app = pg.load_app().await.unwrap().unwrap();
    assert_eq!(app.app_id, 99);
    assert_eq!(app.private_key_pem.expose_secret(), pem);
    assert_eq!(app.webhook_secret.expose_secret(), "migrated-hook-secret");
}
