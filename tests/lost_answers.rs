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
