//! A scenario shared by the end-to-end tests: a repository on the fake GitHub whose pull
//! request #7 adds a Python module with two unused imports, a failing `lint` check whose log is
//! ruff's real output wrapped as an Actions job log, and the real binary serving webhooks.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use super::*;
pub use fake_github::FileEntry;
use fake_github::{CheckOutput, FakeGitHub, NewPullRequest, Permission};
use serde_json::Value;

pub const REPO: &str = "octo-org/shop";
pub const CHECK: &str = "lint";

pub fn corpus(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/corpus")
            .join(rel),
    )
    .unwrap()
}

/// A file of the tool tier's real test projects (`fixtures/tool_tier/`, provenance in its
/// README).
pub fn tool_tier_fixture(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/tool_tier")
            .join(rel),
    )
    .unwrap()
}

/// The tree a fake CI job sees: each of `files` as the fix pushed it, else as seeded.
pub fn tree_as_pushed(
    files: &[(String, String)],
    pushed: &std::collections::BTreeMap<String, Vec<u8>>,
) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(p, t)| {
            let text = pushed
                .get(p)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_else(|| t.clone());
            (p.clone(), text)
        })
        .collect()
}

pub fn src(rel: &str) -> String {
    String::from_utf8(corpus(&format!("src/python/ruff_unused_import/{rel}"))).unwrap()
}

pub struct World {
    pub fake: FakeGitHub,
    pub server: Server,
    pub _dir: tempfile::TempDir,
    pub base: String,
    pub head: String,
}

/// A repository whose pull request #7 adds a Python module with two unused imports, and a
/// failed `lint` check whose log is ruff's real output wrapped as an Actions job log.
pub async fn world(main_files: &[(&str, &str)]) -> World {
    let main = src("app/main.py");
    let pyproject = src("pyproject.toml");
    world_with(
        main_files,
        &[("app/main.py", &main), ("pyproject.toml", &pyproject)],
    )
    .await
}

/// [`world`] with other files committed on the pull request's branch.
pub async fn world_with(main_files: &[(&str, &str)], feature_files: &[(&str, &str)]) -> World {
    let entries: Vec<FileEntry<'_>> = feature_files
        .iter()
        .map(|(path, content)| FileEntry {
            path,
            mode: "100644",
            content: content.as_bytes(),
        })
        .collect();
    world_full(main_files, &entries, vec![]).await
}

/// [`world_with`] with any mode and bytes on the pull request's branch (executables, links,
/// files that are not UTF-8), and extra environment for the server (`LLM_*`).
pub async fn world_full(
    main_files: &[(&str, &str)],
    feature_files: &[FileEntry<'_>],
    extra_env: Vec<(String, String)>,
) -> World {
    let (fake, base, head) = seeded_fake(main_files, feature_files).await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(ServerOptions {
        data_dir: dir.path(),
        workers: 2,
        github_api_url: &fake.base_url(),
        extra_env,
    });
    fake.set_webhook(&server.url("/api/github/webhooks"), SECRET);
    World {
        fake,
        server,
        _dir: dir,
        base,
        head,
    }
}

/// The fake GitHub as every world starts: the App with the test key, `octo-org/shop` with
/// `main_files` on `main`, and pull request #7 from `feature` (`feature_files`) that a
/// maintainer may approve and a reader may not. Returns the fake, the base and the head sha.
pub async fn seeded_fake(
    main_files: &[(&str, &str)],
    feature_files: &[FileEntry<'_>],
) -> (FakeGitHub, String, String) {
    let fake = FakeGitHub::start().await.unwrap();
    let (base, head) = seed(&fake, main_files, feature_files);
    (fake, base, head)
}

/// [`seeded_fake`] on a fake started elsewhere (another address); returns the base and head.
pub fn seed(
    fake: &FakeGitHub,
    main_files: &[(&str, &str)],
    feature_files: &[FileEntry<'_>],
) -> (String, String) {
    fake.set_app(4242, "ci-medic");
    let pubkey =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pub.pem"))
            .unwrap();
    fake.set_app_public_key(&pubkey).unwrap();
    let mut files = vec![("README.md", "# shop\n"), ("app/__init__.py", "")];
    files.extend_from_slice(main_files);
    let base = fake.add_repo("octo-org", "shop", "main", &files);
    let head = fake
        .commit_entries(
            REPO,
            "feature",
            Some(&base),
            feature_files,
            "Add main module",
        )
        .unwrap();
    fake.open_pull_request(NewPullRequest {
        repo: REPO,
        number: 7,
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
    fake.set_permission(REPO, "reader", Permission::Read)
        .unwrap();
    (base, head)
}

/// Kills the server (SIGKILL: no shutdown, nothing flushed), clears the faults injected into
/// the fake, and starts a new server on the same data directory, as after a crash.
pub fn kill_and_restart(w: World) -> World {
    kill_and_restart_with(w, vec![])
}

/// [`kill_and_restart`] with extra environment for the new server (a setting to change).
pub fn kill_and_restart_with(w: World, extra_env: Vec<(String, String)>) -> World {
    let World {
        fake,
        server,
        _dir,
        base,
        head,
    } = w;
    let dir = server.data_dir.clone();
    server.kill();
    fake.clear_faults();
    let server = Server::start(ServerOptions {
        data_dir: &dir,
        workers: 2,
        github_api_url: &fake.base_url(),
        extra_env,
    });
    fake.set_webhook(&server.url("/api/github/webhooks"), SECRET);
    World {
        fake,
        server,
        _dir,
        base,
        head,
    }
}

pub fn fail_check(w: &World, sha: &str, log: &[u8]) -> u64 {
    fail_check_named(w, sha, CHECK, log)
}

/// [`fail_check`] for a check of another name (a pull request with several failing checks).
pub fn fail_check_named(w: &World, sha: &str, name: &str, log: &[u8]) -> u64 {
    let id = w.fake.add_check_run(
        REPO,
        sha,
        name,
        "github-actions",
        "failure",
        CheckOutput::default(),
    );
    w.fake.set_job_log(REPO, id, log);
    id
}

pub async fn deliver_check(w: &World, id: u64) -> String {
    let payload = w.fake.check_run_completed_payload(id).unwrap();
    let d = w.fake.deliver("check_run", &payload).await.unwrap();
    assert!(
        d.status == 202 || d.status == 200,
        "delivery answered {}",
        d.status
    );
    d.id
}

/// The JSON blocks of a rendered comment, in order.
pub fn json_blocks(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("```json\n") {
        let after = &rest[start + 8..];
        let end = after.find("\n```").expect("closed block");
        out.push(serde_json::from_str(&after[..end]).expect("each JSON block parses on its own"));
        rest = &after[end..];
    }
    out
}

pub async fn wait_comment(w: &World, pred: impl Fn(&str) -> bool) -> String {
    let found = w
        .fake
        .wait_for(Duration::from_secs(30), |f| {
            f.comments(REPO, 7)
                .into_iter()
                .find(|c| c.via_app && pred(&c.body))
                .map(|c| c.body)
        })
        .await;
    match found {
        Some(b) => b,
        None => panic!(
            "comment not found; comments: {:#?}\nlog:\n{}",
            w.fake
                .comments(REPO, 7)
                .iter()
                .map(|c| c.body.chars().take(300).collect::<String>())
                .collect::<Vec<_>>(),
            w.server.stderr.lock().unwrap().join("\n")
        ),
    }
}

pub fn app_comments(w: &World) -> Vec<String> {
    w.fake
        .comments(REPO, 7)
        .into_iter()
        .filter(|c| c.via_app)
        .map(|c| c.body)
        .collect()
}

/// A person comments on pull request #7 and GitHub delivers the `issue_comment` webhook.
pub async fn say(w: &World, user: &str, body: &str) -> u64 {
    let c = w.fake.add_comment(REPO, 7, user, body);
    let payload = w.fake.issue_comment_created_payload(c).unwrap();
    w.fake.deliver("issue_comment", &payload).await.unwrap();
    c
}

/// A free loopback port, so a restarted server keeps its webhook URL, as in production.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first line of the proposal comment of `check` (a name with nothing to escape).
pub fn marker(check: &str) -> String {
    format!("<!-- ci-medic:check={check} -->")
}

/// [`world`] served on `port`, with extra environment for the server.
pub async fn world_on(port: u16, mut extra_env: Vec<(String, String)>) -> World {
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
    extra_env.push(("PORT".into(), port.to_string()));
    world_full(&[], &feature, extra_env).await
}

/// The `**Status:**` line of a ci-medic comment (empty when it has none).
pub fn status_line(body: &str) -> String {
    body.lines()
        .find(|l| l.starts_with("**Status:**"))
        .unwrap_or_default()
        .to_string()
}

/// Every replica's log, one after the other, for a failing assertion's message.
pub fn logs(servers: &[&Server]) -> String {
    servers
        .iter()
        .map(|s| s.stderr.lock().unwrap().join("\n"))
        .collect::<Vec<_>>()
        .join("\n---- next replica ----\n")
}
