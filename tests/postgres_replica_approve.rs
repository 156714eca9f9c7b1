//! Two `ci-medic serve` replicas, as the real binary, each with its own `DATA_DIR`, on one
//! PostgreSQL database (`DATABASE_URL`) behind one webhook URL: the failed check is delivered
//! to replica A, which analyses it and publishes the proposal; the maintainer's `/approve` is
//! delivered to replica B, which must find A's proposal and run, write the fix and push it
//! once, then report CI's verdict on it; a second `/approve`, delivered to A with both
//! replicas up, pushes nothing again. With the registry and the runs in each replica's own
//! sled, B knew no proposal and pushed nothing (and A would have pushed a second fix).
//!
//! The two deliveries the test sends are GitHub's real example payloads
//! (`shared/github/webhooks/`, octokit/webhooks), re-pointed at the fake's repository, pull
//! request, check run and comment: only the fields that name them are replaced.

mod common;

use std::time::Duration;

use common::world::*;
use common::*;
use fake_github::{FakeGitHub, FileEntry, NewPullRequest, Permission};
use serde_json::Value;

const PR: u64 = 7;

/// Replaces in `real` each field at a JSON pointer of `paths` with the fake's value there.
fn repoint(mut real: Value, fake: &Value, paths: &[&str]) -> Vec<u8> {
    for path in paths {
        let value = fake
            .pointer(path)
            .unwrap_or_else(|| panic!("the fake's payload has no {path}"))
            .clone();
        let (parent, key) = path.rsplit_once('/').unwrap();
        let target = if parent.is_empty() {
            &mut real
        } else {
            real.pointer_mut(parent)
                .unwrap_or_else(|| panic!("the real payload has no {parent}"))
        };
        target[key] = value;
    }
    serde_json::to_vec(&real).unwrap()
}

/// The fake's CI for `lint`: fails with ruff's real log while `app/main.py` imports `os`.
fn scripted_ci(fake: &FakeGitHub) {
    let log = corpus("logs/actions/ruff_unused_import.log");
    fake.set_ci_script(REPO, CHECK, move |files| {
        let main = files
            .get("app/main.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if main.contains("import os") {
            ("failure".to_string(), log.clone())
        } else {
            ("success".to_string(), b"All checks passed!\n".to_vec())
        }
    });
}

/// The scenario's repository: pull request #7 adds a module with two unused imports; its
/// `lint` check failed with ruff's real log. Returns the fake, the head and the check run.
async fn repository() -> (FakeGitHub, String, u64) {
    let fake = FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let pubkey = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pub.pem"),
    )
    .unwrap();
    fake.set_app_public_key(&pubkey).unwrap();
    let base = fake.add_repo(
        "octo-org",
        "shop",
        "main",
        &[("README.md", "# shop\n"), ("app/__init__.py", "")],
    );
    let (main, pyproject) = (src("app/main.py"), src("pyproject.toml"));
    let head = fake
        .commit_entries(
            REPO,
            "feature",
            Some(&base),
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
            "Add main module",
        )
        .unwrap();
    fake.open_pull_request(NewPullRequest {
        repo: REPO,
        number: PR,
        head_branch: "feature",
        head_repo: REPO,
        base: "main",
        author_login: "contributor",
        title: "Add main module",
        maintainer_can_modify: true,
    })
    .unwrap();
    fake.set_permission(REPO, "maintainer", Permission::Write)
        .unwrap();
    let check = fail_check_on(&fake, &head);
    (fake, head, check)
}

fn fail_check_on(fake: &FakeGitHub, head: &str) -> u64 {
    let id = fake.add_check_run(
        REPO,
        head,
        CHECK,
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, id, &corpus("logs/actions/ruff_unused_import.log"));
    id
}

fn replica(dir: &std::path::Path, fake: &FakeGitHub, url: &str) -> Server {
    Server::start(ServerOptions {
        data_dir: dir,
        workers: 2,
        github_api_url: &fake.base_url(),
        extra_env: vec![
            ("DATABASE_URL".into(), url.into()),
            ("REDELIVERY_INTERVAL_SECONDS".into(), "0".into()),
        ],
    })
}

fn logs(servers: &[&Server]) -> String {
    servers
        .iter()
        .map(|s| s.stderr.lock().unwrap().join("\n"))
        .collect::<Vec<_>>()
        .join("\n---- next replica ----\n")
}

/// The app's proposal comment on #7 once `pred` holds for it.
async fn proposal_comment(
    fake: &FakeGitHub,
    servers: &[&Server],
    pred: impl Fn(&str) -> bool,
) -> String {
    let marker = marker(CHECK);
    let found = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, PR)
                .into_iter()
                .find(|c| c.via_app && c.body.starts_with(&marker) && pred(&c.body))
                .map(|c| c.body)
        })
        .await;
    found.unwrap_or_else(|| {
        panic!(
            "no such proposal comment; comments: {:#?}\nlogs:\n{}",
            fake.comments(REPO, PR)
                .iter()
                .map(|c| c.body.chars().take(400).collect::<String>())
                .collect::<Vec<_>>(),
            logs(servers)
        )
    })
}

/// What names the pull request, the comment and its author in an `issue_comment` payload.
const COMMENT_FIELDS: [&str; 12] = [
    "/issue/number",
    "/issue/pull_request",
    "/issue/html_url",
    "/issue/url",
    "/comment/id",
    "/comment/body",
    "/comment/user",
    "/comment/html_url",
    "/comment/created_at",
    "/comment/author_association",
    "/repository",
    "/installation",
];

fn status_line(body: &str) -> String {
    body.lines()
        .find(|l| l.starts_with("**Status:**"))
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_analysed_by_one_replica_is_approved_through_another() {
    let (Some(real_check), Some(real_comment)) = (
        payload("check_run/completed.1.payload.json"),
        payload("issue_comment/created.with-installation.payload.json"),
    ) else {
        return;
    };
    let Some(url) = fresh_database("replica_approve").await else {
        return;
    };
    let (fake, head, check) = repository().await;
    scripted_ci(&fake);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // The queue is shared: a delivery accepted by one replica may run on any. So that the
    // failure surely runs on A and the approval on B, each is delivered while the other
    // replica is stopped; then both run together for a second approval.
    let a = replica(dirs[0].path(), &fake, &url);
    // The failure, to A.
    let generated = fake.check_run_completed_payload(check).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_check).unwrap(),
        &generated,
        &[
            "/check_run/id",
            "/check_run/name",
            "/check_run/head_sha",
            "/check_run/status",
            "/check_run/conclusion",
            "/check_run/details_url",
            "/check_run/html_url",
            "/check_run/url",
            "/check_run/app",
            "/check_run/pull_requests",
            "/check_run/check_suite",
            "/repository",
            "/installation",
        ],
    );
    assert_eq!(a.deliver("check_run", "failure-1", &body).await, 202);
    let proposed = proposal_comment(&fake, &[&a], |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&proposed)[1].clone()).unwrap();
    assert!(status_line(&proposed).contains("proposed"), "{proposed}");
    assert!(!a.log_lines_with("failure-1").is_empty(), "A analysed it");
    assert_eq!(a.terminate().code(), Some(0));

    // B, which never saw the failure, gets the approval and GitHub's deliveries.
    let b = replica(dirs[1].path(), &fake, &url);
    fake.set_webhook(&b.url("/api/github/webhooks"), SECRET);

    // The maintainer's `/approve`, to B.
    let comment = fake.add_comment(REPO, PR, "maintainer", &format!("/approve {}", dds.id));
    let generated = fake.issue_comment_created_payload(comment).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_comment).unwrap(),
        &generated,
        &COMMENT_FIELDS,
    );
    assert_eq!(b.deliver("issue_comment", "approve-1", &body).await, 202);

    // B pushes the fix, once; CI passes on it and B reports the verdict.
    let executed = proposal_comment(&fake, &[&b], |b| status_line(b).contains("executed")).await;
    assert!(executed.contains("passed"), "{executed}");
    assert!(executed.contains(&dds.id), "{executed}");
    let new_head = fake.branch_head(REPO, "feature").unwrap();
    assert_ne!(new_head, head);
    let commit = fake.commit(REPO, &new_head).unwrap();
    assert_eq!(
        commit.parents,
        vec![head.clone()],
        "exactly one commit, on the proposal's commit"
    );
    assert!(commit.message.contains(&dds.id), "{}", commit.message);
    assert!(
        !b.log_lines_with("approve-1").is_empty(),
        "B handled the approval:\n{}",
        logs(&[&b])
    );

    // Both replicas up: a second `/approve`, to A, whose own sled never saw the approval. It
    // reads the shared state, whichever replica runs it: nothing is pushed again.
    let a = replica(dirs[0].path(), &fake, &url);
    let again = fake.add_comment(REPO, PR, "maintainer", &format!("/approve {}", dds.id));
    let generated = fake.issue_comment_created_payload(again).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_comment).unwrap(),
        &generated,
        &COMMENT_FIELDS,
    );
    assert_eq!(a.deliver("issue_comment", "approve-2", &body).await, 202);
    let reply = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, PR)
                .into_iter()
                .find(|c| c.via_app && c.body.contains(&format!("reply-to={again}")))
                .map(|c| c.body)
        })
        .await
        .unwrap_or_else(|| panic!("no reply to the second approval\n{}", logs(&[&a, &b])));
    assert!(reply.contains(&dds.id), "{reply}");

    // The shared registry holds the whole story; one proposal comment, one check run.
    let db = ci_medic::store::pg::PgStore::connect(&url, 1)
        .await
        .unwrap();
    use ci_medic::store::backend::Backend;
    let state = db.fix_state().unwrap();
    let stored = state.registry.get_fix(&dds.id).await.unwrap().unwrap();
    assert_eq!(stored.status, ci_medic::proposal::DdsStatus::Executed);
    assert_eq!(stored.history.len(), 2, "proposed → approved → executed");
    assert_eq!(stored.history[0].actor, "maintainer");
    assert!(stored.pushed_at.is_some());
    let proposals = fake
        .comments(REPO, PR)
        .into_iter()
        .filter(|c| c.via_app && c.body.starts_with(&marker(CHECK)))
        .count();
    assert_eq!(proposals, 1, "one proposal comment, edited in place");
    // Nothing more is pushed afterwards (a second writer would have pushed by now).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.branch_head(REPO, "feature"), Some(new_head));
    assert_eq!(a.terminate().code(), Some(0));
    assert_eq!(b.terminate().code(), Some(0));
}
