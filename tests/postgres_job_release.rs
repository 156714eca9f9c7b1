//! A replica stopped with SIGTERM in the middle of a job gives the job's lease back: two
//! `ci-medic serve` processes on one PostgreSQL database, the fake GitHub. Replica A's fix job
//! pushes the approved fix and waits for the push's answer, which the fake holds; A is sent
//! SIGTERM, its drain cuts the job off after `SHUTDOWN_GRACE_SECONDS` and marks the job's lease
//! lapsed; replica B runs the job again at once, well before the 60 s lease would have lapsed,
//! pushes the same stored commit (a no-op on a branch already there) and records it. The fix
//! is one commit; CI's success, delivered to B, gives the verdict.
//!
//! Without the release (`Backend::release_all` marking the replica's running jobs lapsed),
//! B waits for the lease to run out, 40 to 60 s after SIGTERM, and the test fails.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::world::*;
use common::*;
use fake_github::FakeGitHub;

const LEASE_SECONDS: u64 = 60;

fn replica(dir: &Path, fake: &FakeGitHub, url: &str, port: u16) -> Server {
    let (port, lease) = (port.to_string(), LEASE_SECONDS.to_string());
    let extra = [
        ("PORT", port.as_str()),
        ("REDELIVERY_INTERVAL_SECONDS", "0"),
        ("JOB_LEASE_SECONDS", lease.as_str()),
    ];
    Server::replica(dir, &fake.base_url(), url, 2, &extra)
}

async fn comment_where(
    fake: &FakeGitHub,
    servers: &[&Server],
    pred: impl Fn(&str) -> bool,
) -> String {
    fake.wait_for(Duration::from_secs(60), |f| {
        f.comments(REPO, 7)
            .into_iter()
            .find(|c| c.via_app && pred(&c.body))
            .map(|c| c.body)
    })
    .await
    .unwrap_or_else(|| panic!("no such comment\nlogs:\n{}", logs(servers)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_cut_off_by_sigterm_runs_again_on_another_replica_at_once() {
    let Some(db) = fresh_database("job_release").await else {
        return;
    };
    let (main, pyproject) = (src("app/main.py"), src("pyproject.toml"));
    let (fake, _base, head) = seeded_fake(
        &[],
        &[
            FileEntry {
                path: "app/main.py",
                mode: "100644",
                content: main.as_bytes(),
            },
            FileEntry {
                path: "pyproject.toml",
                mode: "100644",
                content: pyproject.as_bytes(),
            },
        ],
    )
    .await;
    let log = corpus("logs/actions/ruff_unused_import.log");
    let failing = log.clone();
    fake.set_ci_script(REPO, CHECK, move |files| {
        let main = files
            .get("app/main.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if main.contains("import os") {
            ("failure".to_string(), failing.clone())
        } else {
            ("success".to_string(), b"All checks passed!\n".to_vec())
        }
    });
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let (port_a, port_b) = (free_port(), free_port());
    let a = replica(dirs[0].path(), &fake, &db, port_a);
    fake.set_webhook(&a.url("/api/github/webhooks"), SECRET);

    // The failure and the approval go to A while B is not running: the fix job is A's.
    let failed = fake.add_check_run(
        REPO,
        &head,
        CHECK,
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, failed, &log);
    let payload = fake.check_run_completed_payload(failed).unwrap();
    assert_eq!(
        fake.deliver("check_run", &payload).await.unwrap().status,
        202
    );
    comment_where(&fake, &[&a], |b| b.contains("DDS-FIX-")).await;
    let held = fake.hold_answer_next("PATCH", "/repos/octo-org/shop/git/refs/heads/feature");
    let approve = fake.add_comment(REPO, 7, "maintainer", "/approve");
    let payload = fake.issue_comment_created_payload(approve).unwrap();
    assert_eq!(
        fake.deliver("issue_comment", &payload)
            .await
            .unwrap()
            .status,
        202
    );
    // CI's delivery of the fix's check goes to B's address, where nothing listens yet.
    fake.set_webhook(
        &format!("http://127.0.0.1:{port_b}/api/github/webhooks"),
        SECRET,
    );
    let t = Instant::now();
    while !held.caught() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "A never pushed:\n{}",
            logs(&[&a])
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pushed = fake.branch_head(REPO, "feature").unwrap();
    assert_ne!(pushed, head);

    let b = replica(dirs[1].path(), &fake, &db, port_b);
    // B is up and idle: the job is A's while A lives.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(b.log_lines_with("fix commit pushed").is_empty());

    let a_log = a.stderr.clone();
    let stopping = Instant::now();
    let stopped = tokio::task::spawn_blocking(move || {
        let status = a.terminate();
        (status, stopping.elapsed())
    });
    let t = Instant::now();
    while b.log_lines_with("fix commit pushed").is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(LEASE_SECONDS + 30),
            "B never ran the fix job:\n{}",
            logs(&[&b])
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let taken = stopping.elapsed();
    let (status, exited) = stopped.await.unwrap();
    assert!(status.success(), "{status:?}");
    println!(
        "the fix job ran again on B and recorded the push {} ms after A's SIGTERM (A exited \
         after {} ms, its drain grace 5 s; the {LEASE_SECONDS} s lease, renewed every {} s, would \
         have lapsed {} to {LEASE_SECONDS} s after SIGTERM)",
        taken.as_millis(),
        exited.as_millis(),
        LEASE_SECONDS / 3,
        LEASE_SECONDS - LEASE_SECONDS / 3,
    );
    assert!(
        taken < Duration::from_secs(LEASE_SECONDS - LEASE_SECONDS / 3),
        "taken {} ms after SIGTERM: the job's lease was not given back",
        taken.as_millis()
    );
    drop(held);

    // CI's success on the fix, redelivered to B, gives the verdict.
    let delivery = fake
        .deliveries()
        .into_iter()
        .rev()
        .find(|(id, event)| {
            event == "check_run"
                && fake
                    .delivery_body(id)
                    .is_some_and(|b| b["check_run"]["head_sha"] == pushed.as_str())
        })
        .expect("the fake's CI ran on the pushed commit")
        .0;
    assert_eq!(fake.redeliver(&delivery).await.unwrap().status, 202);
    let done = comment_where(&fake, &[&b], |body| {
        status_line(body).contains("executed") || status_line(body).contains("failed")
    })
    .await;
    assert!(done.contains("passed"), "{done}");
    let pushes = b.log_lines_with("fix commit pushed");
    assert_eq!(pushes.len(), 1);
    assert!(
        pushes[0].contains("\"event\":\"ci_medic_write_fix\""),
        "the same fix job ran again on B (not the reconcile pass): {}",
        pushes[0]
    );
    assert!(
        !a_log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("fix commit pushed")),
        "the job cut off on A did not run to completion there"
    );
    assert_eq!(
        fake.commit(REPO, &pushed).unwrap().parents,
        vec![head.clone()],
        "exactly one commit"
    );
    assert_eq!(fake.branch_head(REPO, "feature"), Some(pushed));
    assert!(b.terminate().success());
}
