//! `ci-medic jobs`, the operator's view of the queue, run as the real binary on a real store.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use chrono::Utc;
use ci_medic::store::{Accepted, DeliveryRecord, JobState, NewJob, Store};
use common::open_store;

fn jobs(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .arg("jobs")
        .args(args)
        .env("DATA_DIR", dir)
        .env_remove("DATABASE_URL")
        .env_remove("RUST_LOG")
        .output()
        .expect("ci-medic runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A store holding one parked job (after six failures) and one queued job; returns their ids.
fn store_with_jobs(dir: &Path) -> (u64, u64) {
    let store = Store::open(dir).unwrap();
    let mut ids = Vec::new();
    for (delivery, pr) in [("d-parked", 7), ("d-queued", 8)] {
        let record = DeliveryRecord {
            id: delivery.into(),
            event: "check_run".into(),
            action: Some("completed".into()),
            received_at: Utc::now(),
            queued: true,
        };
        let job = NewJob::delivery(format!("octo-org/shop#{pr}"));
        match store.accept_delivery(&record, b"{}", Some(job)).unwrap() {
            Accepted::New { job_id: Some(id) } => ids.push(id),
            other => panic!("{other:?}"),
        }
    }
    let mut parked = store.job(ids[0]).unwrap().unwrap();
    parked.state = JobState::Parked;
    parked.attempts = 6;
    parked.last_error = Some("reading the pull request: GitHub answered 502".into());
    store.put_job(&parked).unwrap();
    store.flush_blocking().unwrap();
    (ids[0], ids[1])
}

#[tokio::test]
async fn parked_jobs_are_listed_with_their_error_and_put_back_by_an_operator() {
    let dir = tempfile::tempdir().unwrap();
    let (parked, queued) = store_with_jobs(dir.path());

    let out = jobs(dir.path(), &["list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let parked_line = listed
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{parked} ")))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(parked_line.contains("parked"), "{listed}");
    assert!(parked_line.contains("attempts 6"), "{listed}");
    assert!(parked_line.contains("check_run.completed"), "{listed}");
    assert!(parked_line.contains("octo-org/shop#7"), "{listed}");
    assert!(
        listed.contains("last error: reading the pull request: GitHub answered 502"),
        "{listed}"
    );
    assert!(listed.contains("queued"), "{listed}");

    // A queued job is not parked: refused, and nothing changes.
    let out = jobs(dir.path(), &["retry", &queued.to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("queued, not parked"));

    let out = jobs(dir.path(), &["retry", "--parked"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("job {parked}: queued again")));

    let store = open_store(dir.path()).await;
    let job = store.job(parked).unwrap().unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Queued, 0));
}

#[tokio::test]
async fn a_database_in_use_or_missing_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    store_with_jobs(dir.path());
    // This process holds the database, as a running `serve` would.
    let held = open_store(dir.path()).await;
    let out = jobs(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("stop `ci-medic serve` first"), "{err}");
    drop(held);

    let empty = tempfile::tempdir().unwrap();
    let missing = empty.path().join("nothing-here");
    let out = jobs(&missing, &["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no ci-medic database"));
    assert!(!missing.exists(), "an empty database must not be created");
}

fn jobs_with(dir: &Path, token: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
    cmd.arg("jobs")
        .args(args)
        .env("DATA_DIR", dir)
        .env_remove("RUST_LOG")
        .env_remove("STATUS_TOKEN");
    if let Some(t) = token {
        cmd.env("STATUS_TOKEN", t);
    }
    cmd.output().expect("ci-medic runs")
}

/// With `serve` running the database is its alone: `jobs` goes through its admin API, with
/// the operator token, and a re-queued job reaches the running queue at once.
#[tokio::test]
async fn while_serve_runs_jobs_goes_through_its_authenticated_admin_api() {
    const TOKEN: &str = "operator-token-for-jobs-cli";
    let dir = tempfile::tempdir().unwrap();
    let (parked, queued) = store_with_jobs(dir.path());
    let server = common::Server::start(common::ServerOptions {
        data_dir: dir.path(),
        // No worker: the queue is kept as it is, so what `jobs` sees is what it did.
        workers: 0,
        github_api_url: "http://127.0.0.1:9",
        extra_env: vec![("STATUS_TOKEN".into(), TOKEN.into())],
    });
    assert!(dir.path().join("serve.addr").exists());

    // No token: a clear error naming what to set, nothing changed.
    let out = jobs_with(dir.path(), None, &["list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("in use by a running `ci-medic serve`"),
        "{err}"
    );
    assert!(err.contains("set STATUS_TOKEN"), "{err}");

    // A wrong token: refused by the server.
    let out = jobs_with(dir.path(), Some("not-the-operator-token"), &["list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("401"), "{}", text(&out.stderr));

    let out = jobs_with(dir.path(), Some(TOKEN), &["list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let line = listed
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{parked} ")))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("parked") && line.contains("attempts 6"),
        "{listed}"
    );
    assert!(listed.contains("last error: reading the pull request: GitHub answered 502"));

    let out = jobs_with(dir.path(), Some(TOKEN), &["retry", &queued.to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("queued, not parked"));

    let out = jobs_with(dir.path(), Some(TOKEN), &["retry", "--parked"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("job {parked}: queued again")));
    let out = jobs_with(dir.path(), Some(TOKEN), &["list"]);
    let listed = text(&out.stdout);
    let line = listed
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{parked} ")))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("queued") && line.contains("attempts 0"),
        "{listed}"
    );
    // The running queue has it: readiness counts both jobs as waiting.
    let ready = reqwest::get(server.url("/readyz"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(ready.contains("queue_depth: 2"), "{ready}");

    server.terminate();
    assert!(
        !dir.path().join("serve.addr").exists(),
        "removed at shutdown"
    );
}

fn ci_medic(args: &[&str], database_url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("DATA_DIR", "/nonexistent/ci-medic-must-not-read-this")
        .env_remove("RUST_LOG")
        .output()
        .expect("ci-medic runs")
}

/// On PostgreSQL the operator's commands talk to the database while replicas hold it: here a
/// store with a pool of its own (a replica) has a job claimed while `jobs` lists and retries.
#[tokio::test]
async fn on_postgresql_jobs_work_while_serve_holds_the_database() {
    use ci_medic::store::backend::Backend;
    use ci_medic::store::pg::PgStore;
    let Some(url) = common::fresh_database("jobs_cli").await else {
        return;
    };
    let out = ci_medic(&["migrate"], &url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("applied migration 1"));
    let out = ci_medic(&["migrate"], &url);
    assert!(
        text(&out.stdout).contains("up to date"),
        "{}",
        text(&out.stdout)
    );

    let replica = PgStore::connect(&url, 2).await.unwrap();
    for (delivery, pr) in [("d-parked", 7), ("d-running", 8)] {
        let record = DeliveryRecord {
            id: delivery.into(),
            event: "check_run".into(),
            action: Some("completed".into()),
            received_at: Utc::now(),
            queued: true,
        };
        let job = NewJob::delivery(format!("octo-org/shop#{pr}"));
        replica.accept(&record, b"{}", Some(job)).await.unwrap();
    }
    let lease = std::time::Duration::from_secs(60);
    let first = replica.claim("replica-1/0", lease).await.unwrap().unwrap();
    assert!(
        replica
            .park(first.id, "replica-1/0", "GitHub answered 502")
            .await
            .unwrap()
    );
    let running = replica.claim("replica-1/0", lease).await.unwrap().unwrap();

    let out = ci_medic(&["jobs", "list"], &url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    assert!(
        listed.contains("last error: GitHub answered 502"),
        "{listed}"
    );
    assert!(listed.contains("running"), "{listed}");

    let out = ci_medic(&["jobs", "retry", &running.id.to_string()], &url);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("running, not parked"));
    let out = ci_medic(&["jobs", "retry", "--parked"], &url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("job {}: queued again", first.id)));
    // The replica takes it back at once, attempts reset: no restart.
    assert!(replica.finish(running.id, "replica-1/0").await.unwrap());
    let again = replica.claim("replica-1/1", lease).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (first.id, 1));
}

#[test]
fn migrate_without_a_reachable_database_is_one_line_naming_database_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = ci_medic(
        &["migrate"],
        &format!("postgres://ci:hunter2@127.0.0.1:{port}/ci"),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("DATABASE_URL"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
