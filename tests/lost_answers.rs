//! A creation whose answer was lost is not made twice. GitHub stored the comment, check run or
//! reply, then answered 502 (the fake's `lose_answer_next`); the job is retried, and because the
//! run recorded that it asked (`FixRun::creations`, the reply intents) it looks for what it
//! asked for before creating, and finds it. Without the record it would create a second one;
//! with a record but no lost answer it creates at once, without listing (`api_budget`).

mod common;

use std::time::Duration;

use common::world::*;

async fn proposed(w: &World) {
    let check = fail_check(w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(w, check).await;
    wait_comment(w, |b| b.contains("DDS-FIX-")).await;
}

/// Waits until the binary has sent no request for half a second.
async fn quiet(w: &World) {
    let mut last = w.fake.request_log().len();
    let mut still = 0;
    while still < 5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = w.fake.request_log().len();
        if n == last {
            still += 1;
        } else {
            (last, still) = (n, 0);
        }
    }
}

/// Waits (for the retried job) until `method path` has been requested.
async fn requested(w: &World, method: &str, path: &str) {
    let seen = w
        .fake
        .wait_for(Duration::from_secs(30), |f| {
            f.request_log()
                .into_iter()
                .any(|r| r.method == method && r.path.split('?').next() == Some(path))
                .then_some(())
        })
        .await;
    assert!(
        seen.is_some(),
        "no {method} {path}: {:#?}",
        w.fake.request_log()
    );
}

fn requests(w: &World, method: &str, path: &str) -> Vec<u16> {
    w.fake
        .request_log()
        .into_iter()
        .filter(|r| r.method == method && r.path.split('?').next() == Some(path))
        .map(|r| r.status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_whose_answer_was_lost_is_found_not_posted_again() {
    let w = world(&[]).await;
    w.fake
        .lose_answer_next("POST", "/repos/octo-org/shop/issues/7/comments", 1);
    proposed(&w).await;
    // The retried job looks for the comment it asked for.
    requested(&w, "GET", "/repos/octo-org/shop/issues/7/comments").await;
    quiet(&w).await;
    let ours: Vec<String> = app_comments(&w)
        .into_iter()
        .filter(|b| b.contains("DDS-FIX-"))
        .collect();
    assert_eq!(ours.len(), 1, "{ours:#?}");
    // Posted once (answer lost), then found by listing, not posted again.
    assert_eq!(
        requests(&w, "POST", "/repos/octo-org/shop/issues/7/comments"),
        [502]
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_run_whose_answer_was_lost_is_found_not_created_again() {
    let w = world(&[]).await;
    w.fake
        .lose_answer_next("POST", "/repos/octo-org/shop/check-runs", 1);
    proposed(&w).await;
    requested(
        &w,
        "GET",
        &format!("/repos/octo-org/shop/commits/{}/check-runs", w.head),
    )
    .await;
    quiet(&w).await;
    let ours: Vec<_> = w
        .fake
        .check_runs(REPO, &w.head)
        .into_iter()
        .filter(|r| r.name == "ci-medic")
        .collect();
    assert_eq!(ours.len(), 1, "one annotations check run");
    assert_eq!(
        requests(&w, "POST", "/repos/octo-org/shop/check-runs"),
        [502]
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_whose_answer_was_lost_is_found_not_posted_again() {
    let w = world(&[]).await;
    proposed(&w).await;
    quiet(&w).await;
    // Someone without write access: the refusal is a reply.
    w.fake
        .lose_answer_next("POST", "/repos/octo-org/shop/issues/7/comments", 1);
    let c = say(&w, "reader", "/approve").await;
    wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    requested(&w, "GET", "/repos/octo-org/shop/issues/7/comments").await;
    quiet(&w).await;
    let replies: Vec<String> = app_comments(&w)
        .into_iter()
        .filter(|b| b.contains(&format!("reply-to={c}")))
        .collect();
    assert_eq!(replies.len(), 1, "{replies:#?}");
    assert!(w.server.terminate().success());
}

/// A step stored but not shown: the pushed fix's check passes, the job stores the verdict
/// and then cannot edit the comment (GitHub answers 502 for longer than the client retries).
/// The job is retried, finds the run already executed, and must still show it: before, it
/// took the verdict as already handled and the comment said "pushed; waiting for CI" for good
/// (as in the replica storm, where the job was killed at that moment instead).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_whose_comment_edit_failed_is_shown_when_the_job_runs_again() {
    let w = world(&[]).await;
    proposed(&w).await;
    let body = app_comments(&w)
        .into_iter()
        .find(|b| b.contains("DDS-FIX-"))
        .unwrap();
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    say(&w, "maintainer", &format!("/approve {}", dds.id)).await;
    wait_comment(&w, |b| b.contains("**pushed**")).await;
    quiet(&w).await;
    // The edit fails on the first run of the verdict job: its call and the client's 5
    // retries.
    w.fake.fail_next(
        "PATCH",
        "/repos/octo-org/shop/issues/comments/",
        502,
        &[],
        6,
    );
    let pushed = w.fake.branch_head(REPO, "feature").unwrap();
    let check = w.fake.add_check_run(
        REPO,
        &pushed,
        CHECK,
        "github-actions",
        "success",
        Default::default(),
    );
    deliver_check(&w, check).await;
    // The client's back-off takes some 15 s before the job fails and runs again.
    let executed = w
        .fake
        .wait_for(Duration::from_secs(90), |f| {
            f.comments(REPO, 7)
                .into_iter()
                .find(|c| c.via_app && c.body.contains("**executed**"))
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "the comment never showed the verdict: {:#?}",
                app_comments(&w)
            )
        });
    assert!(executed.body.contains("passed"), "{}", executed.body);
    let failed = w
        .fake
        .request_log()
        .into_iter()
        .filter(|r| {
            r.method == "PATCH" && r.path.starts_with("/repos/octo-org/shop/issues/comments/")
        })
        .filter(|r| r.status == 502)
        .count();
    assert_eq!(failed, 6, "the edit failed on the job's first run");
    assert!(w.server.terminate().success());
}
