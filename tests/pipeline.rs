//! End to end: the real binary against the fake GitHub, with webhook payloads in GitHub's shape
//! and a log captured from a real tool run (`fixtures/corpus`).
//!
//! A failed check ends in exactly one comment whose two JSON blocks validate against their
//! specifications, and in annotations; redeliveries, retries and a second failing push still
//! leave one comment; 5xx and rate-limit answers are survived; approvals are permission-checked.

mod common;

use std::time::Duration;

use common::*;
use fake_github::FakeGitHub;
use serde_json::Value;

use common::world::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_check_ends_in_one_comment_with_valid_proposal_and_annotations() {
    let w = world(&[]).await;
    let log = corpus("logs/actions/ruff_unused_import.log");
    let check_id = fail_check(&w, &w.head, &log);
    // GitHub has a bad moment: the first comment POST gets a 502, a read gets a secondary
    // rate limit. Both are survived.
    w.fake.fail_next(
        "POST",
        "/repos/octo-org/shop/issues/7/comments",
        502,
        &[],
        1,
    );
    w.fake.fail_next(
        "GET",
        "/repos/octo-org/shop/pulls/7/files",
        403,
        &[("retry-after", "1"), ("x-ratelimit-remaining", "4000")],
        1,
    );
    let delivery = deliver_check(&w, check_id).await;

    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert!(body.starts_with("<!-- ci-medic:check="), "{body}");
    assert!(
        body.contains("LINTING error in app/main.py line 1"),
        "{body}"
    );
    assert!(body.contains("/approve DDS-FIX-"), "{body}");

    let blocks = json_blocks(&body);
    assert_eq!(blocks.len(), 2, "{body}");
    // The Fix Packet validates against the frozen schema.
    let schema: Value = serde_json::from_str(ci_medic::proposal::FIX_PACKET_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&blocks[0])
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(blocks[0]["violations"].as_array().unwrap().len(), 2);
    // The code_fix DDS has the spec's shape and limits.
    let dds: ci_medic::proposal::CodeFixDds = serde_json::from_value(blocks[1].clone()).unwrap();
    assert!(ci_medic::ids::is_fix_dds_id(&dds.id), "{}", dds.id);
    assert_eq!(dds.status, ci_medic::proposal::DdsStatus::Proposed);
    assert_eq!(dds.allowed_paths, vec!["app/main.py".to_string()]);
    assert!(dds.constraints.max_files_changed <= 3);
    assert!(dds.constraints.no_new_dependencies && dds.constraints.no_refactor);

    // Annotations on the head commit, one per report, in a ci-medic check run.
    let runs = w.fake.check_runs(REPO, &w.head);
    let ours: Vec<_> = runs.iter().filter(|r| r.name == "ci-medic").collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(w.fake.annotations(ours[0].id).len(), 2);

    // A redelivery, and the same event under a new delivery id (a retried job), change nothing.
    w.fake.redeliver(&delivery).await.unwrap();
    deliver_check(&w, check_id).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(app_comments(&w).len(), 1);
    assert_eq!(
        w.fake
            .check_runs(REPO, &w.head)
            .iter()
            .filter(|r| r.name == "ci-medic")
            .count(),
        1
    );

    // A second failing push: the same comment is updated with a new proposal.
    let head2 = w
        .fake
        .commit_files(
            REPO,
            "feature",
            Some(&w.head),
            &[("app/extra.py", "import sys\n")],
            "more",
        )
        .unwrap();
    let check2 = fail_check(&w, &head2, &log);
    deliver_check(&w, check2).await;
    let body2 = wait_comment(&w, |b| b.contains(&head2[..7]) && b.contains("superseded")).await;
    let dds2: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body2)[1].clone()).unwrap();
    assert_ne!(dds2.id, dds.id);
    assert_eq!(app_comments(&w).len(), 1, "still one comment");

    // After shutdown, the stored proposal passes all ten validation rules against its source.
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let registry = store.registry().unwrap();
    let stored = registry.get_fix(&dds2.id).unwrap().unwrap();
    let source = registry
        .get_source(&stored.dds.source_dds)
        .unwrap()
        .unwrap();
    ci_medic::proposal::validate_code_fix(&stored.dds, Some(&source), Some(&stored.dds.id))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_is_permission_checked_and_bound_to_its_commit() {
    let w = world(&[]).await;
    let check_id = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check_id).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();

    // ci-medic's own comment quotes `/approve`: delivering it triggers nothing.
    let own = w
        .fake
        .comments(REPO, 7)
        .into_iter()
        .find(|c| c.via_app)
        .unwrap();
    let payload = w.fake.issue_comment_created_payload(own.id).unwrap();
    w.fake.deliver("issue_comment", &payload).await.unwrap();

    // A reader's /approve is refused with a reply; nothing changes.
    let c = say(&w, "reader", &format!("/approve {}", dds.id)).await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains("write"), "{reply}");
    let reacted = w
        .fake
        .wait_for(Duration::from_secs(10), |f| {
            (!f.reactions(c).is_empty()).then_some(())
        })
        .await;
    assert!(reacted.is_some(), "the refused command gets a reaction");
    let main = wait_comment(&w, |b| b.starts_with("<!-- ci-medic:check=")).await;
    assert!(main.contains("**proposed**"), "{main}");
    assert!(!main.contains("**approved**"), "{main}");

    // A writer's /approve (no id: the newest open proposal) is accepted.
    let c = say(&w, "maintainer", "Looks right.\n/approve").await;
    let main = wait_comment(&w, |b| {
        b.starts_with("<!-- ci-medic:check=")
            && b.contains("**approved**")
            && b.contains("maintainer")
    })
    .await;
    assert!(main.contains(&dds.id));
    let reacted = w
        .fake
        .wait_for(Duration::from_secs(10), |f| {
            (!f.reactions(c).is_empty()).then_some(())
        })
        .await;
    assert!(reacted.is_some(), "the accepted command gets a reaction");

    // Approving or rejecting it again is refused: it is no longer proposed.
    let c = say(
        &w,
        "maintainer",
        &format!("/reject {} changed my mind", dds.id),
    )
    .await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains(&dds.id), "{reply}");
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_approval_after_a_new_push_is_refused() {
    let w = world(&[]).await;
    let check_id = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check_id).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    // The branch moves before anyone approves.
    w.fake
        .commit_files(
            REPO,
            "feature",
            Some(&w.head),
            &[("NOTES.md", "wip\n")],
            "wip",
        )
        .unwrap();
    let c = say(&w, "maintainer", &format!("/approve {}", dds.id)).await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(
        reply.contains("was made for commit") && reply.contains("will not be applied"),
        "{reply}"
    );
    let main = wait_comment(&w, |b| b.starts_with("<!-- ci-medic:check=")).await;
    assert!(!main.contains("**approved**"), "{main}");
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_in_the_middle_of_a_50_mb_log_is_found() {
    let w = world(&[]).await;
    // Real passing and warnings-only runs as the bulk of the log, timestamped as Actions
    // prints them; none of them holds an error.
    let mut filler = Vec::new();
    for rel in [
        "logs/mvn/test_pass.log",
        "logs/gradle/test_pass.log",
        "logs/cargo/test_pass.log",
        "logs/vitest/pass.log",
        "logs/jest/pass.log",
        "logs/clang/warnings_only.log",
        "logs/eslint/warnings_only.log",
    ] {
        for line in corpus(rel).split(|&b| b == b'\n') {
            filler.extend_from_slice(b"2026-11-20T10:15:02.1236524Z ");
            filler.extend_from_slice(line);
            filler.push(b'\n');
        }
    }
    let half = 25 << 20;
    let mut log = Vec::with_capacity(2 * half + (1 << 20));
    while log.len() < half {
        log.extend_from_slice(&filler);
    }
    // ruff's real output, in the middle: far from both ends that are kept for the excerpt.
    let ruff = corpus("logs/actions/ruff_unused_import.log");
    log.extend_from_slice(ruff.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&ruff));
    while log.len() < 2 * half {
        log.extend_from_slice(&filler);
    }
    let check_id = fail_check(&w, &w.head, &log);
    deliver_check(&w, check_id).await;

    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert!(
        body.contains("LINTING error in app/main.py line 1"),
        "{body}"
    );
    assert!(
        body.contains("LINTING error in app/main.py line 3"),
        "{body}"
    );
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    assert_eq!(dds.allowed_paths, vec!["app/main.py".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_annotation_arrives_once_when_a_later_batch_fails() {
    let registry =
        String::from_utf8(corpus("src/python/ruff_many_unused/app/registry.py")).unwrap();
    let w = world_with(&[], &[("app/registry.py", &registry)]).await;
    // 60 findings: 50 go with the check run's creation, 10 with an update, which fails once
    // (a 502 on a call that appends is not repeated by the client; the job is).
    w.fake
        .fail_next("PATCH", "/repos/octo-org/shop/check-runs/", 502, &[], 1);
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_many_unused.log"));
    deliver_check(&w, check).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let ours = w
        .fake
        .wait_for(Duration::from_secs(30), |f| {
            f.check_runs(REPO, &w.head)
                .into_iter()
                .find(|r| r.name == "ci-medic" && f.annotations(r.id).len() >= 60)
        })
        .await
        .expect("all annotations on the ci-medic check run");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut lines: Vec<u64> = w
        .fake
        .annotations(ours.id)
        .iter()
        .map(|a| a["start_line"].as_u64().unwrap())
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        (2..=61).collect::<Vec<u64>>(),
        "each import line once"
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_logs_are_reported_on_the_comment() {
    let w = world(&[]).await;
    let id = fail_check(&w, &w.head, b"irrelevant");
    w.fake.expire_job_log(id);
    deliver_check(&w, id).await;
    let body = wait_comment(&w, |b| b.contains("expired")).await;
    assert!(!body.contains("DDS-FIX-"), "{body}");
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_repository_config_is_reported_and_defaults_are_used() {
    let w = world(&[(
        ".github/ci-medic.yml",
        "enabled: true\nfix:\n  confidence_threshol: 0.5\n",
    )])
    .await;
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    // The proposal is still made (defaults), and the comment says what is wrong and where.
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert!(body.contains("unknown field"), "{body}");
    assert!(
        body.contains("3:3") || body.contains("line 3"),
        "the position is given: {body}"
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_proposal_cannot_be_approved() {
    let w = world(&[]).await;
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    say(
        &w,
        "maintainer",
        &format!("/reject {} not the right fix", dds.id),
    )
    .await;
    wait_comment(&w, |b| {
        b.starts_with("<!-- ci-medic:check=") && b.contains("**rejected**")
    })
    .await;
    let c = say(&w, "maintainer", &format!("/approve {}", dds.id)).await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(reply.contains(&dds.id), "{reply}");
    let main = wait_comment(&w, |b| b.starts_with("<!-- ci-medic:check=")).await;
    assert!(
        main.contains("**rejected**") && !main.contains("**approved**"),
        "{main}"
    );
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing pushed"
    );
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let stored = store.registry().unwrap().get_fix(&dds.id).unwrap().unwrap();
    assert_eq!(stored.status, ci_medic::proposal::DdsStatus::Rejected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_proposal_stays_rejected_when_its_check_fails_again() {
    let w = world(&[]).await;
    let log = corpus("logs/actions/ruff_unused_import.log");
    let check = fail_check(&w, &w.head, &log);
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    say(&w, "maintainer", &format!("/reject {}", dds.id)).await;
    wait_comment(&w, |b| {
        b.starts_with("<!-- ci-medic:check=") && b.contains("**rejected**")
    })
    .await;
    // Someone re-runs the failed job on the same commit: same failure, a new check run.
    let rerun = fail_check(&w, &w.head, &log);
    deliver_check(&w, rerun).await;
    let main = wait_comment(&w, |b| {
        b.starts_with("<!-- ci-medic:check=")
            && (b.contains("failed again") || b.contains("**proposed**"))
    })
    .await;
    assert!(
        main.contains("**rejected**") && !main.contains("**proposed**"),
        "{main}"
    );
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let registry = store.registry().unwrap();
    assert_eq!(
        registry.get_fix(&dds.id).unwrap().unwrap().status,
        ci_medic::proposal::DdsStatus::Rejected
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_can_be_approved_after_its_pull_request_is_closed_and_reopened() {
    let w = world(&[]).await;
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    for (action, state_change) in [
        (
            "closed",
            FakeGitHub::close_pull_request as fn(&FakeGitHub, &str, u64),
        ),
        ("reopened", FakeGitHub::reopen_pull_request),
    ] {
        state_change(&w.fake, REPO, 7);
        let payload = w.fake.pull_request_state_payload(REPO, 7, action).unwrap();
        w.fake.deliver("pull_request", &payload).await.unwrap();
    }
    // The comment still invites `/approve`; after the reopen it must work.
    let c = say(&w, "maintainer", "/approve").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c} "))).await;
    assert!(reply.contains("approved by"), "{reply}");
    assert!(reply.contains(&dds.id), "{reply}");
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_marker_typed_by_someone_does_not_silence_the_reply() {
    let w = world(&[]).await;
    let c = w.fake.add_comment(REPO, 7, "maintainer", "/help");
    w.fake.add_comment(
        REPO,
        7,
        "mallory",
        &format!("<!-- ci-medic:reply-to={c} -->"),
    );
    let payload = w.fake.issue_comment_created_payload(c).unwrap();
    w.fake.deliver("issue_comment", &payload).await.unwrap();
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c} "))).await;
    assert!(reply.contains("/approve"), "{reply}");
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_analyses_the_latest_failure_again() {
    let w = world(&[]).await;
    // The first analysis cannot read the log (GitHub answers 404 for a moment).
    let id = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    w.fake.fail_next(
        "GET",
        &format!("/repos/octo-org/shop/actions/jobs/{id}/logs"),
        404,
        &[],
        1,
    );
    deliver_check(&w, id).await;
    wait_comment(&w, |b| b.contains("not found")).await;
    // A reader may not ask for it; a maintainer may.
    let c = say(&w, "reader", "/retry").await;
    wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(!app_comments(&w).iter().any(|b| b.contains("DDS-FIX-")));
    say(&w, "maintainer", "/retry").await;
    let body = wait_comment(&w, |b| {
        b.starts_with("<!-- ci-medic:check=") && b.contains("DDS-FIX-")
    })
    .await;
    assert!(
        body.contains("LINTING error in app/main.py line 1"),
        "{body}"
    );
    assert_eq!(
        app_comments(&w)
            .iter()
            .filter(|b| b.starts_with("<!-- ci-medic:check="))
            .count(),
        1
    );
    assert!(w.server.terminate().success());
}
