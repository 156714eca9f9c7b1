//! Failures that are not the code's, end to end with the real binary and the fake GitHub: an
//! infrastructure failure gets its kind and `/rerun` instead of a proposal, a maintainer's
//! `/rerun` re-runs the failed jobs and the new attempt's verdict lands on the same comment, a
//! reader's `/rerun` is refused, a failure whose job passed in another attempt is flaky, and
//! `triage.auto_rerun` re-runs once per commit, not twice; a re-run that is cancelled or never
//! reports ends the wait and offers `/rerun` again.
//!
//! Logs are real: a GitHub Actions job killed by a JavaScript heap OOM
//! (`fixtures/triage/real/infrastructure/date-night-app2`, provenance in its `SOURCES.md`) and
//! pytest's own output (`fixtures/corpus/logs/actions/pytest_assert_color.log`).

mod common;

use std::time::Duration;

use common::world::*;
use common::*;
use fake_github::NewJob;

fn oom_log() -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "fixtures/triage/real/infrastructure/date-night-app2/ng-test-heap-oom-14503853960.log",
    ))
    .unwrap()
}

/// The steps of the failed job, as its `job-metadata.json` gives them in the source.
const STEPS: &[(&str, &str)] = &[
    ("Set up job", "success"),
    ("Run actions/checkout@v4", "success"),
    ("Install dependencies", "success"),
    ("Run unit tests", "failure"),
];

/// A workflow run on the pull request's head whose `lint` job failed with `log`, delivered.
async fn failed_job(w: &World, log: &[u8]) -> (u64, u64) {
    let run = w
        .fake
        .add_workflow_run(
            REPO,
            &w.head,
            "CI",
            &[NewJob {
                name: CHECK,
                conclusion: "failure",
                steps: STEPS,
                log,
            }],
        )
        .unwrap();
    deliver_check(w, run.job_ids[0]).await;
    (run.run_id, run.job_ids[0])
}

async fn wait_reruns(w: &World, n: usize) -> Vec<fake_github::RerunRequest> {
    let got = w
        .fake
        .wait_for(Duration::from_secs(30), |f| {
            let r = f.rerun_requests();
            (r.len() >= n).then_some(r)
        })
        .await;
    got.unwrap_or_else(|| {
        panic!(
            "no re-run requested; log:\n{}",
            w.server.stderr.lock().unwrap().join("\n")
        )
    })
}

async fn metrics(w: &World) -> String {
    reqwest::get(w.server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infrastructure_failure_is_re_run_on_command_and_its_verdict_shown() {
    let w = world(&[]).await;
    let (run_id, job) = failed_job(&w, &oom_log()).await;

    let body = wait_comment(&w, |b| b.contains("**Kind:**")).await;
    assert!(body.contains("**Kind:** `infrastructure`"), "{body}");
    assert!(body.contains("JavaScript heap out of memory"), "{body}");
    assert!(body.contains("`/rerun`"), "{body}");
    assert!(status_line(&body).contains("not the code"), "{body}");
    // No proposal, no DDS, no annotations check run.
    assert!(!body.contains("DDS-FIX-"), "{body}");
    assert!(json_blocks(&body).is_empty(), "{body}");
    assert!(
        w.fake
            .check_runs(REPO, &w.head)
            .iter()
            .all(|c| c.name != "ci-medic"),
        "no annotations for a failure that is not the code's"
    );

    // A reader may not re-run.
    let c = say(&w, "reader", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains("`read` permission"), "{reply}");
    assert!(w.fake.rerun_requests().is_empty());

    // A maintainer does: the run's failed jobs are re-run.
    let c = say(&w, "maintainer", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(
        reply.contains("Re-running the failed GitHub Actions jobs"),
        "{reply}"
    );
    let reruns = wait_reruns(&w, 1).await;
    assert_eq!(reruns[0].run_id, run_id);
    assert_eq!(reruns[0].kind, fake_github::RerunKind::FailedJobs);
    let requested = wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;
    assert!(requested.contains("maintainer"), "{requested}");

    // A redelivery of the original failure changes nothing.
    deliver_check(&w, job).await;
    // The new attempt passes: the verdict is on the same comment.
    let new_job = reruns[0].new_job_ids[0];
    w.fake
        .finish_job(new_job, "success", STEPS, b"")
        .await
        .unwrap()
        .expect("delivered");
    let done = wait_comment(&w, |b| status_line(b).contains("re-run passed")).await;
    assert!(done.contains("passed on"), "{done}");
    assert_eq!(
        app_comments(&w)
            .iter()
            .filter(|b| b.starts_with("<!-- ci-medic:check="))
            .count(),
        1,
        "one comment per check"
    );
    assert_eq!(w.fake.rerun_requests().len(), 1);

    let m = metrics(&w).await;
    assert!(
        m.contains("ci_medic_failures_total{kind=\"infrastructure\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("ci_medic_reruns_requested_total{trigger=\"command\"} 1"),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_passed_in_another_attempt_is_flaky() {
    let w = world(&[]).await;
    let pytest = corpus("logs/actions/pytest_assert_color.log");
    // Attempt 1 passed; attempt 2 (someone re-ran it) failed with a real test failure.
    let run = w
        .fake
        .add_workflow_run(
            REPO,
            &w.head,
            "CI",
            &[NewJob {
                name: CHECK,
                conclusion: "success",
                steps: &[("Set up job", "success"), ("Run unit tests", "success")],
                log: b"",
            }],
        )
        .unwrap();
    let second = w
        .fake
        .add_run_attempt(
            run.run_id,
            &[NewJob {
                name: CHECK,
                conclusion: "failure",
                steps: &[("Set up job", "success"), ("Run unit tests", "failure")],
                log: &pytest,
            }],
        )
        .unwrap();
    deliver_check(&w, second[0]).await;
    let body = wait_comment(&w, |b| b.contains("**Kind:**")).await;
    assert!(body.contains("**Kind:** `flaky`"), "{body}");
    assert!(body.contains("attempt 1"), "{body}");
    assert!(body.contains("`/rerun`"), "{body}");
    assert!(!body.contains("DDS-FIX-"), "{body}");

    // The failing test was recorded: re-run and passing, it has both outcomes on this commit.
    say(&w, "maintainer", "/rerun").await;
    let reruns = wait_reruns(&w, 1).await;
    w.fake
        .finish_job(reruns[0].new_job_ids[0], "success", &[], b"")
        .await
        .unwrap();
    wait_comment(&w, |b| status_line(b).contains("re-run passed")).await;
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let history = ci_medic::store::triage::TriageStore::open(&store)
        .unwrap()
        .history(REPO, "tests/test_calc.py::test_add")
        .unwrap();
    assert_eq!(
        history.iter().map(|o| o.passed).collect::<Vec<_>>(),
        vec![false, true],
        "{history:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_rerun_re_runs_once_per_commit() {
    let w = world(&[(".github/ci-medic.yml", "triage:\n  auto_rerun: true\n")]).await;
    let log = oom_log();
    failed_job(&w, &log).await;
    let reruns = wait_reruns(&w, 1).await;
    let requested = wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;
    assert!(requested.contains("automatically"), "{requested}");

    // The re-run fails the same way: analysed again, and not re-run a second time.
    w.fake
        .finish_job(reruns[0].new_job_ids[0], "failure", STEPS, &log)
        .await
        .unwrap();
    let body = wait_comment(&w, |b| {
        b.contains("failed again on") && status_line(b).contains("not the code")
    })
    .await;
    assert!(body.contains("**Kind:** `infrastructure`"), "{body}");
    w.server
        .wait_for_log("the bound on automatic re-runs", |lines| {
            lines
                .iter()
                .any(|l| l.contains("automatic re-runs for this commit are used up"))
        })
        .await;
    assert_eq!(
        w.fake.rerun_requests().len(),
        1,
        "one automatic re-run per commit"
    );
    let m = metrics(&w).await;
    assert!(
        m.contains("ci_medic_reruns_requested_total{trigger=\"auto\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("ci_medic_failures_total{kind=\"infrastructure\"} 2"),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_from_another_ci_is_triaged_but_not_offered_a_rerun() {
    let w = world(&[]).await;
    // Another CI's check run whose output holds the same real job log.
    let log = String::from_utf8_lossy(&oom_log()).into_owned();
    let id = w.fake.add_check_run(
        REPO,
        &w.head,
        "ci/circleci: build",
        "circleci-checks",
        "failure",
        fake_github::CheckOutput {
            title: Some("Build failed".into()),
            summary: Some("The build job failed.".into()),
            text: Some(log),
        },
    );
    deliver_check(&w, id).await;
    let body = wait_comment(&w, |b| b.contains("**Kind:**")).await;
    assert!(body.contains("**Kind:** `infrastructure`"), "{body}");
    assert!(body.contains("not a GitHub Actions job"), "{body}");
    assert!(!body.contains("`/rerun` re-runs"), "{body}");
    let c = say(&w, "maintainer", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains("not a GitHub Actions job"), "{reply}");
    assert!(w.fake.rerun_requests().is_empty());
}

/// The re-run's result reaches ci-medic by polling when its webhook does not (here: the
/// process was down when it was sent); the start-up reconcile finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_rerun_webhook_is_made_up_for_by_polling() {
    let w = world(&[]).await;
    failed_job(&w, &oom_log()).await;
    wait_comment(&w, |b| b.contains("**Kind:**")).await;
    say(&w, "maintainer", "/rerun").await;
    let reruns = wait_reruns(&w, 1).await;
    wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;

    let dir = w.server.data_dir.clone();
    let w = {
        let World {
            fake,
            server,
            _dir,
            base,
            head,
        } = w;
        server.kill();
        // Delivered to nobody: the server is down.
        let sent = fake
            .finish_job(reruns[0].new_job_ids[0], "success", STEPS, b"")
            .await;
        assert!(sent.is_err(), "{sent:?}");
        let server = common::Server::start(common::ServerOptions {
            data_dir: &dir,
            workers: 2,
            github_api_url: &fake.base_url(),
            extra_env: vec![],
        });
        fake.set_webhook(&server.url("/api/github/webhooks"), common::SECRET);
        World {
            fake,
            server,
            _dir,
            base,
            head,
        }
    };
    let done = wait_comment(&w, |b| status_line(b).contains("re-run passed")).await;
    assert!(done.contains("passed on"), "{done}");
    assert_eq!(w.fake.rerun_requests().len(), 1);
}

/// An automatic re-run that is cancelled is no verdict: the comment says so and offers
/// `/rerun`; it stays counted against `triage.max_reruns` (no second automatic re-run), and a
/// maintainer's `/rerun` is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_rerun_is_reported_and_rerun_offered_again() {
    let w = world(&[(".github/ci-medic.yml", "triage:\n  auto_rerun: true\n")]).await;
    failed_job(&w, &oom_log()).await;
    let reruns = wait_reruns(&w, 1).await;
    wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;

    w.fake
        .finish_job(reruns[0].new_job_ids[0], "cancelled", STEPS, b"")
        .await
        .unwrap()
        .expect("delivered");
    let body = wait_comment(&w, |b| status_line(b).contains("re-run cancelled")).await;
    assert!(status_line(&body).contains("`cancelled`"), "{body}");
    assert!(body.contains("`/rerun` re-runs"), "{body}");
    assert!(!body.contains("DDS-FIX-"), "{body}");
    assert_eq!(
        w.fake.rerun_requests().len(),
        1,
        "a cancelled automatic re-run is not followed by another"
    );

    let c = say(&w, "maintainer", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(
        reply.contains("Re-running the failed GitHub Actions jobs"),
        "{reply}"
    );
    let reruns = wait_reruns(&w, 2).await;
    let requested = wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;
    assert!(requested.contains("maintainer"), "{requested}");
    w.fake
        .finish_job(reruns[1].new_job_ids[0], "success", STEPS, b"")
        .await
        .unwrap();
    wait_comment(&w, |b| status_line(b).contains("re-run passed")).await;
}

/// A re-run that never reports: once `RERUN_TIMEOUT_MINUTES` have passed, the CI monitor's
/// reconcile pass (here the one at start-up) says no verdict arrived and offers `/rerun`.
/// Waits out the shortest timeout the setting allows, one minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_that_never_reports_times_out() {
    let w = world(&[]).await;
    failed_job(&w, &oom_log()).await;
    wait_comment(&w, |b| b.contains("**Kind:**")).await;
    say(&w, "maintainer", "/rerun").await;
    let stuck = wait_reruns(&w, 1).await[0].new_job_ids[0];
    wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;
    let requested = std::time::Instant::now();

    // Not before the minute is up (the pure machine's test covers the boundary).
    let restart = |w: World| {
        let World {
            fake,
            server,
            _dir,
            base,
            head,
        } = w;
        let dir = server.data_dir.clone();
        server.kill();
        let server = common::Server::start(common::ServerOptions {
            data_dir: &dir,
            workers: 2,
            github_api_url: &fake.base_url(),
            extra_env: vec![("RERUN_TIMEOUT_MINUTES".into(), "1".into())],
        });
        fake.set_webhook(&server.url("/api/github/webhooks"), common::SECRET);
        World {
            fake,
            server,
            _dir,
            base,
            head,
        }
    };
    tokio::time::sleep(Duration::from_secs(61).saturating_sub(requested.elapsed())).await;
    let w = restart(w);
    let body = wait_comment(&w, |b| status_line(b).contains("re-run without verdict")).await;
    assert!(status_line(&body).contains("within 1 minute"), "{body}");
    assert!(body.contains("`/rerun` re-runs"), "{body}");
    // GitHub refuses to re-run a run still in progress, and ci-medic passes its word on.
    let c = say(&w, "maintainer", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains("not completed"), "{reply}");
    assert_eq!(w.fake.rerun_requests().len(), 1);
    // Once the stuck job is cancelled, `/rerun` is accepted.
    w.fake
        .finish_job(stuck, "cancelled", STEPS, b"")
        .await
        .unwrap();
    let c = say(&w, "maintainer", "/rerun").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(
        reply.contains("Re-running the failed GitHub Actions jobs"),
        "{reply}"
    );
    wait_reruns(&w, 2).await;
    wait_comment(&w, |b| status_line(b).contains("re-run requested")).await;
}
