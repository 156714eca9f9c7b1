//! Issue 18's default-branch evidence, end to end with the real binary and the fake GitHub's
//! real payload shapes (`check_run` `completed` with `check_suite.head_branch` and
//! `repository.default_branch`): checks on pushes to `main` record per-test outcomes — a
//! failed check's tests, read from its real pytest log, failing; a passing check, those tests
//! passing — and a pull request's failure of a test that failed on `main` between two passes
//! is called flaky, naming the test and the commits, with `/rerun` and no code fix.
//!
//! The log is pytest's own output (`fixtures/corpus/logs/actions/pytest_assert_color.log`).

mod common;

use common::world::*;
use fake_github::CheckOutput;

/// Pushes a commit to `main` and delivers its check with `conclusion` (a failure with the
/// pytest log); waits until the server recorded it. Returns the commit.
async fn push_and_check(w: &World, parent: &str, n: usize, conclusion: &str, log: &[u8]) -> String {
    let sha = w
        .fake
        .commit_entries(
            REPO,
            "main",
            Some(parent),
            &[FileEntry {
                path: "NOTES.md",
                mode: "100644",
                content: format!("push {n}\n").as_bytes(),
            }],
            &format!("Push {n}"),
        )
        .unwrap();
    let id = if conclusion == "failure" {
        fail_check(w, &sha, log)
    } else {
        w.fake.add_check_run(
            REPO,
            &sha,
            CHECK,
            "github-actions",
            conclusion,
            CheckOutput::default(),
        )
    };
    let payload = w.fake.check_run_completed_payload(id).unwrap();
    // The real shape: the suite's branch is the repository's default one, no pull request.
    assert_eq!(payload["check_run"]["check_suite"]["head_branch"], "main");
    assert_eq!(payload["repository"]["default_branch"], "main");
    assert_eq!(payload["check_run"]["pull_requests"], serde_json::json!([]));
    deliver_check(w, id).await;
    // In order: history order is what tells "failed between two passes".
    w.server
        .wait_for_log("default branch outcome recorded", |lines| {
            lines
                .iter()
                .filter(|l| l.contains("default branch: test") && l.contains(&sha))
                .count()
                == 1
        })
        .await;
    sha
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_failed_between_two_passes_on_main_is_flaky_on_a_pull_request() {
    let w = world(&[]).await;
    let pytest = corpus("logs/actions/pytest_assert_color.log");
    let m1 = push_and_check(&w, &w.base.clone(), 1, "failure", &pytest).await;
    let m2 = push_and_check(&w, &m1, 2, "success", b"").await;
    let m3 = push_and_check(&w, &m2, 3, "failure", &pytest).await;
    let m4 = push_and_check(&w, &m3, 4, "success", b"").await;
    // Nothing is said on the default branch.
    assert!(app_comments(&w).is_empty());
    let recorded = w.server.log_lines_with("default branch: test");
    assert!(
        recorded
            .iter()
            .any(|l| l.contains(&m2) && l.contains("passes recorded") && l.contains("\"tests\":1")),
        "{recorded:?}"
    );

    // The same test fails on the pull request: flaky, with the default branch as evidence.
    let id = fail_check(&w, &w.head, &pytest);
    deliver_check(&w, id).await;
    let body = wait_comment(&w, |b| b.contains("**Kind:**")).await;
    assert!(body.contains("**Kind:** `flaky`"), "{body}");
    // Markdown-escaped in the comment.
    let plain = body.replace('\\', "");
    assert!(
        plain.contains("`tests/test_calc.py::test_add` passed and failed on the default branch"),
        "{body}"
    );
    assert!(body.contains("default branch"), "{body}");
    for sha in [&m2, &m3, &m4] {
        assert!(body.contains(&sha[..7]), "{} not named: {body}", &sha[..7]);
    }
    assert!(!body.contains("DDS-FIX-"), "{body}");
}
