//! Two `ci-medic serve` replicas, as the real binary, on one PostgreSQL database
//! (`DATABASE_URL`), each with its own `DATA_DIR`, analyse failed checks of different pull
//! requests on the same day: every DDS id they publish is distinct, because the numbers come
//! from the database, not from a replica's own registry (whose counters would both start at
//! 001). First each replica alone analyses one pull request (so both surely number one),
//! then both run at once over more pull requests.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::world::*;
use common::*;
use fake_github::{FakeGitHub, NewPullRequest};

const FIRST_PR: u64 = 7;
const PRS: u64 = 6;

/// A repository with `PRS` pull requests from #7, each adding the module with two unused
/// imports on its own branch, and each with a failed `lint` check whose log is ruff's.
async fn repository() -> (FakeGitHub, Vec<u64>) {
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
    let main = src("app/main.py");
    let pyproject = src("pyproject.toml");
    let feature = [
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
    ];
    let log = corpus("logs/actions/ruff_unused_import.log");
    let mut checks = Vec::new();
    for pr in FIRST_PR..FIRST_PR + PRS {
        let branch = format!("feature-{pr}");
        let head = fake
            .commit_entries(
                REPO,
                &branch,
                Some(&base),
                &feature,
                &format!("Add main module ({pr})"),
            )
            .unwrap();
        fake.open_pull_request(NewPullRequest {
            repo: REPO,
            number: pr,
            head_branch: &branch,
            head_repo: REPO,
            base: "main",
            author_login: "contributor",
            title: "Add main module",
            maintainer_can_modify: true,
        })
        .unwrap();
        let id = fake.add_check_run(
            REPO,
            &head,
            CHECK,
            "github-actions",
            "failure",
            Default::default(),
        );
        fake.set_job_log(REPO, id, &log);
        checks.push(id);
    }
    (fake, checks)
}

fn replica(dir: &std::path::Path, fake: &FakeGitHub, url: &str) -> Server {
    Server::replica(dir, &fake.base_url(), url, 2, &[])
}

async fn deliver(server: &Server, fake: &FakeGitHub, check: u64) {
    let payload = fake.check_run_completed_payload(check).unwrap();
    let body = serde_json::to_vec(&payload).unwrap();
    let status = server
        .deliver("check_run", &format!("check-{check}"), &body)
        .await;
    assert_eq!(status, 202, "delivery of check run {check}");
}

/// The (failed code_change, code_fix) ids of pull request `pr`'s proposal comment.
async fn proposal_ids(fake: &FakeGitHub, pr: u64, servers: &[&Server]) -> (String, String) {
    let found = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, pr).into_iter().find_map(|c| {
                let blocks = json_blocks(&c.body);
                let dds = blocks.get(1)?;
                Some((
                    dds["source_dds"].as_str()?.to_string(),
                    dds["id"].as_str()?.to_string(),
                ))
            })
        })
        .await;
    found.unwrap_or_else(|| {
        let logs: Vec<String> = servers
            .iter()
            .map(|s| s.stderr.lock().unwrap().join("\n"))
            .collect();
        panic!("no proposal on #{pr}; logs:\n{}", logs.join("\n----\n"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_database_never_publish_the_same_dds_id() {
    let Some(url) = fresh_database("two_replicas_dds_ids").await else {
        return;
    };
    let (fake, checks) = repository().await;
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut ids = Vec::new();

    // Each replica alone numbers one failure: with their own counters both would say 001.
    let a = replica(dirs[0].path(), &fake, &url);
    deliver(&a, &fake, checks[0]).await;
    ids.push(proposal_ids(&fake, FIRST_PR, &[&a]).await);
    assert_eq!(a.terminate().code(), Some(0));
    let b = replica(dirs[1].path(), &fake, &url);
    deliver(&b, &fake, checks[1]).await;
    ids.push(proposal_ids(&fake, FIRST_PR + 1, &[&b]).await);

    // Then both at once, the deliveries spread across them.
    let a = replica(dirs[0].path(), &fake, &url);
    for (i, check) in checks.iter().enumerate().skip(2) {
        let server = if i % 2 == 0 { &a } else { &b };
        deliver(server, &fake, *check).await;
    }
    for pr in FIRST_PR + 2..FIRST_PR + PRS {
        ids.push(proposal_ids(&fake, pr, &[&a, &b]).await);
    }

    let day = chrono::Utc::now().format("%Y%m%d").to_string();
    let mut seen = HashSet::new();
    for (failed, fix) in &ids {
        assert!(failed.starts_with(&format!("DDS-{day}-CODE-")), "{failed}");
        assert!(fix.starts_with(&format!("DDS-FIX-{day}-")), "{fix}");
        assert!(
            seen.insert(failed.clone()),
            "{failed} published twice: {ids:?}"
        );
        assert!(seen.insert(fix.clone()), "{fix} published twice: {ids:?}");
    }
    assert_eq!(seen.len(), 2 * PRS as usize);
    assert_eq!(a.terminate().code(), Some(0));
    assert_eq!(b.terminate().code(), Some(0));
}
