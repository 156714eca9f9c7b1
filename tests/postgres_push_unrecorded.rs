//! A check that finishes on a fix commit before the replica that pushed it has recorded the
//! push, delivered to another replica: two `ci-medic serve` processes on one PostgreSQL
//! database, the fake GitHub, `verify: docker` (the sandbox job pushes outside the pull
//! request's queue, so the check's delivery may run meanwhile on any replica).
//!
//! Replica A's sandbox job pushes; the fake carries the push out (its CI runs on the new
//! commit) and holds the answer. The check's success is delivered to replica B, which finds
//! the commit in the pushed-commit index while the run still says "approved", and must answer
//! `PushUnrecorded` (retried) rather than drop the check. Then:
//! - the answer is released, A records the push, and B's retry takes the verdict;
//! - or A is SIGKILLed while it waits: what is true is tested and printed (another replica
//!   takes the reconcile pass over, pushes the same commit again, a no-op, and records it; the
//!   verdict follows).
//!
//! Without the `PushUnrecorded` branch in `ci_monitor/verdict.rs`, B's first attempt ends the
//! check's job with nothing done and the first test fails: no verdict comes within a minute.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::image::image_available;
use common::world::*;
use common::*;
use fake_github::{FakeGitHub, HeldAnswer};

const VERIFY_PY_COMPILE: &str = "verify: docker\nexecutor:\n  image: ci-medic-test/python\n  command: python3 -m py_compile app.py\n  timeout_seconds: 60\n";
const PUSH: &str = "/repos/octo-org/shop/git/refs/heads/feature";
const NOT_RECORDED: &str = "whose push is not recorded yet";

fn replica(dir: &Path, fake: &FakeGitHub, url: &str, port: u16, workers: usize) -> Server {
    let port = port.to_string();
    let extra = [
        ("PORT", port.as_str()),
        // The test redelivers by hand, to the replica it chooses.
        ("REDELIVERY_INTERVAL_SECONDS", "0"),
        ("JOB_LEASE_SECONDS", "6"),
        // The verdict after a SIGKILL comes from a reconcile pass: soon, not in 2 minutes.
        ("RECONCILE_INTERVAL_SECONDS", "10"),
    ];
    Server::replica(dir, &fake.base_url(), url, workers, &extra)
}

async fn comment_where(
    fake: &FakeGitHub,
    servers: &[&Server],
    within: Duration,
    pred: impl Fn(&str) -> bool,
) -> String {
    fake.wait_for(within, |f| {
        f.comments(REPO, 7)
            .into_iter()
            .find(|c| c.via_app && pred(&c.body))
            .map(|c| c.body)
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "no such comment within {within:?}; comments: {:#?}\nlogs:\n{}",
            fake.comments(REPO, 7)
                .iter()
                .map(|c| c.body.chars().take(300).collect::<String>())
                .collect::<Vec<_>>(),
            logs(servers)
        )
    })
}

/// What both tests share: A has proposed the fix, the maintainer approved it, A's sandbox
/// job pushed it and waits for the push's held answer, and the fake's CI delivery of the
/// check's success was redelivered to B, whose first run of it has ended.
struct Race {
    fake: FakeGitHub,
    a: Server,
    b: Server,
    held: HeldAnswer,
    head: String,
    pushed: String,
    _dirs: [tempfile::TempDir; 2],
    _db: test_db::TestDatabase,
}

async fn race(test: &str) -> Option<Race> {
    let db = fresh_database(test).await?;
    if !image_available("ci-medic-test/python").await {
        return None;
    }
    let broken = String::from_utf8(corpus("src/python/py_missing_colon/app.py")).unwrap();
    let (fake, _base, head) = seeded_fake(
        &[(".github/ci-medic.yml", VERIFY_PY_COMPILE)],
        &[FileEntry {
            path: "app.py",
            mode: "100644",
            content: broken.as_bytes(),
        }],
    )
    .await;
    let log = corpus("logs/actions/python_missing_colon.log");
    fake.set_ci_script(REPO, CHECK, move |files| {
        let app = files
            .get("app.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if app.contains("def greet(name):") {
            ("success".to_string(), b"ok\n".to_vec())
        } else {
            ("failure".to_string(), log.clone())
        }
    });
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let (port_a, port_b) = (free_port(), free_port());
    // A has one worker, which the sandbox job holds while it waits for the push's answer, so
    // A cannot claim the check's job B accepts. With a second, idle worker A polls the queue
    // too and may take it first (seen once, on a loaded machine): its run then waits on A's
    // pull-request lock, which the sandbox job holds, and B never runs it.
    let a = replica(dirs[0].path(), &fake, &db, port_a, 1);
    fake.set_webhook(&a.url("/api/github/webhooks"), SECRET);

    // The failure and the approval go to A, while B is not running: both run on A.
    let failed = fake.add_check_run(
        REPO,
        &head,
        CHECK,
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(
        REPO,
        failed,
        &corpus("logs/actions/python_missing_colon.log"),
    );
    let payload = fake.check_run_completed_payload(failed).unwrap();
    assert_eq!(
        fake.deliver("check_run", &payload).await.unwrap().status,
        202
    );
    comment_where(&fake, &[&a], Duration::from_secs(60), |b| {
        b.contains("DDS-FIX-")
    })
    .await;
    let held = fake.hold_answer_next("PATCH", PUSH);
    let approve = fake.add_comment(REPO, 7, "maintainer", "/approve");
    let payload = fake.issue_comment_created_payload(approve).unwrap();
    assert_eq!(
        fake.deliver("issue_comment", &payload)
            .await
            .unwrap()
            .status,
        202
    );
    // From now on GitHub's deliveries go to B's address; B is not up yet, so the check's
    // delivery, made at the push, fails there as a refused connection.
    let b_hook = format!("http://127.0.0.1:{port_b}/api/github/webhooks");
    fake.set_webhook(&b_hook, SECRET);

    let t = Instant::now();
    while !held.caught() {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "A never pushed:\n{}",
            logs(&[&a])
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pushed = fake.branch_head(REPO, "feature").unwrap();
    assert_ne!(pushed, head, "the push was carried out");
    let delivery = fake
        .wait_for(Duration::from_secs(10), |f| {
            f.deliveries().into_iter().rev().find(|(id, event)| {
                event == "check_run"
                    && f.delivery_body(id)
                        .is_some_and(|b| b["check_run"]["head_sha"] == pushed.as_str())
            })
        })
        .await
        .expect("the fake's CI ran on the pushed commit")
        .0;

    // B comes up (A holds the reconcile pass, so B does not resume the run itself) and gets
    // the check's success as GitHub's redelivery.
    let b = replica(dirs[1].path(), &fake, &db, port_b, 2);
    assert_eq!(fake.redeliver(&delivery).await.unwrap().status, 202);
    // B's first run of the check's job ends, one way or the other, while A waits.
    let t = Instant::now();
    while !b
        .log_lines_with(&delivery)
        .iter()
        .any(|l| l.contains("job finished") || l.contains("will retry") || l.contains("job ended"))
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "B did not run the check's job:\n{}",
            logs(&[&a, &b])
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The order the test is about: B's delivery was handled before A recorded the push.
    assert!(
        a.log_lines_with("fix commit pushed").is_empty(),
        "A recorded the push before B's delivery ran"
    );
    Some(Race {
        fake,
        a,
        b,
        held,
        head,
        pushed,
        _dirs: dirs,
        _db: db,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_delivered_to_another_replica_before_the_push_is_recorded_gets_its_verdict() {
    let Some(r) = race("push_unrecorded").await else {
        return;
    };
    let released = Instant::now();
    r.held.release();
    let done = comment_where(&r.fake, &[&r.a, &r.b], Duration::from_secs(60), |b| {
        status_line(b).contains("executed") || status_line(b).contains("failed")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    assert!(done.contains("passed"), "{done}");
    println!(
        "verdict on the comment {} ms after A's push answer was released",
        released.elapsed().as_millis()
    );
    assert_eq!(r.a.log_lines_with("fix commit pushed").len(), 1);
    assert!(
        !r.b.log_lines_with(NOT_RECORDED).is_empty(),
        "B found the push unrecorded and retried the check"
    );
    assert_eq!(
        r.fake.commit(REPO, &r.pushed).unwrap().parents,
        vec![r.head.clone()],
        "exactly one commit"
    );
    assert_eq!(r.fake.branch_head(REPO, "feature"), Some(r.pushed.clone()));
    assert!(r.a.terminate().success());
    assert!(r.b.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pusher_killed_between_push_and_record_still_leads_to_the_verdict() {
    let Some(r) = race("push_unrecorded_kill").await else {
        return;
    };
    let killed = Instant::now();
    r.a.kill();
    r.held.release();
    // B takes the reconcile pass once A's lease on it lapses (at most 40 s), resumes the
    // approved run, pushes the same commit (a no-op on a branch already there) and records it;
    // then the verdict comes from B's retried check job or, once its retries ran out (it ends,
    // handed to the reconcile pass, and is not parked), from the next
    // reconcile pass polling the check runs.
    let done = comment_where(&r.fake, &[&r.b], Duration::from_secs(240), |b| {
        status_line(b).contains("executed") || status_line(b).contains("failed")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    assert!(done.contains("passed"), "{done}");
    let handed_over = r.b.log_lines_with("takes it over").len();
    println!(
        "verdict on the comment {} s after A was SIGKILLed between push and record \
         (B's check job handed to the reconcile pass: {}; B logged `{NOT_RECORDED}` {} times)",
        killed.elapsed().as_secs(),
        handed_over > 0,
        r.b.log_lines_with(NOT_RECORDED).len()
    );
    assert_eq!(
        r.b.log_lines_with("fix commit pushed").len(),
        1,
        "B recorded the push A made:\n{}",
        logs(&[&r.b])
    );
    assert_eq!(
        r.fake.commit(REPO, &r.pushed).unwrap().parents,
        vec![r.head.clone()],
        "exactly one commit"
    );
    assert_eq!(r.fake.branch_head(REPO, "feature"), Some(r.pushed.clone()));
    assert!(
        r.b.log_lines_with("job parked").is_empty(),
        "nothing is left for an operator:\n{}",
        logs(&[&r.b])
    );
    assert!(r.b.terminate().success());
}
