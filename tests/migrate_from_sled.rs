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
