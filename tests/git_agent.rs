//! The git agent against the fake GitHub: one commit on the proposal's commit, fast-forward
//! only; a moved branch means nothing is pushed.

use ci_medic::git_agent::{GitAgent, GitAgentError, target_for};
use ci_medic::github::{
    GitHubApi, GitHubClientConfig, InstallationId, RepoRef, RestClient, StaticToken,
};
use fake_github::{FakeGitHub, FileEntry};
use secrecy::SecretString;

async fn client(fake: &FakeGitHub) -> RestClient {
    let token = fake.issue_installation_token(1);
    let mut config = GitHubClientConfig::new(fake.base_url());
    // Pacing is tested in github_client.rs; here it would only slow the git calls down.
    config.write_interval = std::time::Duration::ZERO;
    RestClient::with_token_provider(
        config,
        std::sync::Arc::new(StaticToken(SecretString::from(token))),
    )
    .unwrap()
}

#[tokio::test]
async fn pushes_one_fast_forward_commit_and_repeating_it_is_a_no_op() {
    let fake = FakeGitHub::start().await.unwrap();
    let base = fake.add_repo(
        "o",
        "r",
        "main",
        &[("a.py", "import os\nx = 1\n"), ("b.py", "y = 2\n")],
    );
    let head = fake
        .commit_files(
            "o/r",
            "feature",
            Some(&base),
            &[("a.py", "import os\nx = 2\n")],
            "change",
        )
        .unwrap();
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&repo, Some(&repo), "feature", true, "DDS-FIX-20260101-001");
    let files = vec![("a.py".to_string(), "x = 2\n".to_string())];
    let commit = agent
        .prepare(&target, &head, &files, "ci-medic: fix", None)
        .await
        .unwrap();
    agent.publish(&target, &head, &commit).await.unwrap();
    // After a restart the same publish is a no-op, not a second push.
    agent.publish(&target, &head, &commit).await.unwrap();
    assert_eq!(fake.branch_head("o/r", "feature").unwrap(), commit);
    let c = fake.commit("o/r", &commit).unwrap();
    assert_eq!(c.parents, vec![head.clone()]);
    assert_eq!(c.files.get("a.py").unwrap(), b"x = 2\n");
    assert_eq!(
        c.files.get("b.py").unwrap(),
        b"y = 2\n",
        "untouched files keep their content"
    );
}

#[tokio::test]
async fn a_branch_that_moved_is_stale_and_nothing_is_pushed() {
    let fake = FakeGitHub::start().await.unwrap();
    let base = fake.add_repo("o", "r", "main", &[("a.py", "import os\n")]);
    let proposed_for = fake
        .commit_files(
            "o/r",
            "feature",
            Some(&base),
            &[("a.py", "import os\nx = 1\n")],
            "one",
        )
        .unwrap();
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&repo, Some(&repo), "feature", true, "DDS-FIX-20260101-001");
    let commit = agent
        .prepare(
            &target,
            &proposed_for,
            &[("a.py".into(), "x = 1\n".into())],
            "fix",
            None,
        )
        .await
        .unwrap();
    // Someone pushes before ci-medic does.
    let moved = fake
        .commit_files(
            "o/r",
            "feature",
            Some(&proposed_for),
            &[("b.py", "z\n")],
            "two",
        )
        .unwrap();
    let err = agent
        .publish(&target, &proposed_for, &commit)
        .await
        .unwrap_err();
    assert!(matches!(err, GitAgentError::Stale { .. }), "{err}");
    assert_eq!(
        fake.branch_head("o/r", "feature").unwrap(),
        moved,
        "the branch was not touched"
    );
}

#[tokio::test]
async fn a_fork_without_maintainer_edits_gets_a_branch_in_the_base_repository() {
    let fake = FakeGitHub::start().await.unwrap();
    let head = fake.add_repo("o", "r", "main", &[("a.py", "import os\n")]);
    let gh = client(&fake).await;
    let base = RepoRef::new("o", "r");
    let fork = RepoRef::new("contributor", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&base, Some(&fork), "patch-1", false, "DDS-FIX-20260101-002");
    assert_eq!(target.repo, base);
    let commit = agent
        .prepare(&target, &head, &[("a.py".into(), "\n".into())], "fix", None)
        .await
        .unwrap();
    agent.publish(&target, &head, &commit).await.unwrap();
    assert_eq!(
        fake.branch_head("o/r", "ci-medic/DDS-FIX-20260101-002")
            .unwrap(),
        commit
    );
}

/// The fallback branch is created in one request; a repeat (a restart after the creation
/// landed) is a no-op, and a branch of that name someone else made is left alone.
#[tokio::test]
async fn the_fallback_branch_is_one_request_and_never_taken_over() {
    let fake = FakeGitHub::start().await.unwrap();
    let head = fake.add_repo("o", "r", "main", &[("a.py", "import os\n")]);
    let gh = client(&fake).await;
    let base = RepoRef::new("o", "r");
    let fork = RepoRef::new("contributor", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&base, Some(&fork), "patch-1", false, "DDS-FIX-20260101-003");
    let commit = agent
        .prepare(&target, &head, &[("a.py".into(), "\n".into())], "fix", None)
        .await
        .unwrap();
    fake.clear_request_log();
    agent.publish(&target, &head, &commit).await.unwrap();
    let methods: Vec<String> = fake
        .request_log()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.status))
        .collect();
    assert_eq!(methods, vec!["POST 201".to_string()]);
    agent.publish(&target, &head, &commit).await.unwrap();
    let branch = "ci-medic/DDS-FIX-20260101-003";
    assert_eq!(fake.branch_head("o/r", branch).unwrap(), commit);

    let other = fake
        .commit_files("o/r", branch, Some(&head), &[("b.py", "x\n")], "someone")
        .unwrap();
    let err = agent.publish(&target, &head, &commit).await.unwrap_err();
    assert!(matches!(err, GitAgentError::Stale { .. }), "{err}");
    assert_eq!(fake.branch_head("o/r", branch).unwrap(), other);
}

/// A repository on `feature` with an executable, a symbolic link to a file, a link to a
/// directory and a submodule; returns the head commit.
fn repo_with_modes(fake: &FakeGitHub) -> String {
    let base = fake.add_repo("o", "r", "main", &[("README.md", "# r\n")]);
    let entry = |path, mode, content: &'static str| FileEntry {
        path,
        mode,
        content: content.as_bytes(),
    };
    fake.commit_entries(
        "o/r",
        "feature",
        Some(&base),
        &[
            entry(
                "scripts/tool.py",
                "100755",
                "#!/usr/bin/env python3\nimport os\nprint(1)\n",
            ),
            entry("bin/tool", "120000", "../scripts/tool.py"),
            entry("lib", "120000", "scripts"),
            entry(
                "vendor/dep",
                "160000",
                "0123456789abcdef0123456789abcdef01234567",
            ),
        ],
        "modes",
    )
    .unwrap()
}

#[tokio::test]
async fn the_tree_api_gives_modes_as_github_does() {
    let fake = FakeGitHub::start().await.unwrap();
    let head = repo_with_modes(&fake);
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let commit = gh
        .get_git_commit(InstallationId(1), &repo, &head)
        .await
        .unwrap();
    let root = gh
        .get_git_tree(InstallationId(1), &repo, &commit.tree.sha)
        .await
        .unwrap();
    let seen: Vec<(&str, &str, &str)> = root
        .tree
        .iter()
        .map(|i| (i.path.as_str(), i.mode.as_str(), i.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("README.md", "100644", "blob"),
            ("bin", "040000", "tree"),
            ("lib", "120000", "blob"),
            ("scripts", "040000", "tree"),
            ("vendor", "040000", "tree"),
        ]
    );
    let vendor = &root.tree[4].sha;
    let sub = gh
        .get_git_tree(InstallationId(1), &repo, vendor)
        .await
        .unwrap();
    assert_eq!(
        (sub.tree[0].mode.as_str(), sub.tree[0].kind.as_str()),
        ("160000", "commit")
    );
    // One recursive read gives the same answers as walking the levels.
    let whole = ci_medic::git_agent::whole_tree(&gh, InstallationId(1), &repo, &commit.tree.sha)
        .await
        .unwrap()
        .expect("not truncated");
    for path in [
        "README.md",
        "README.md/x",
        "scripts",
        "scripts/tool.py",
        "bin/tool",
        "lib",
        "lib/tool.py",
        "vendor/dep",
        "vendor/dep/setup.py",
        "missing.py",
        "bin/missing",
    ] {
        let walked =
            ci_medic::git_agent::tree_entry(&gh, InstallationId(1), &repo, &commit.tree.sha, path)
                .await
                .unwrap();
        assert_eq!(
            ci_medic::git_agent::entry_in(&whole, path),
            walked,
            "{path}"
        );
    }
}

#[tokio::test]
async fn an_executable_keeps_its_mode() {
    let fake = FakeGitHub::start().await.unwrap();
    let head = repo_with_modes(&fake);
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&repo, Some(&repo), "feature", true, "DDS-FIX-20260101-001");
    let files = vec![(
        "scripts/tool.py".to_string(),
        "#!/usr/bin/env python3\nprint(1)\n".to_string(),
    )];
    let commit = agent
        .prepare(&target, &head, &files, "fix", None)
        .await
        .unwrap();
    agent.publish(&target, &head, &commit).await.unwrap();
    assert_eq!(
        fake.mode_at("o/r", &commit, "scripts/tool.py").as_deref(),
        Some("100755")
    );
    assert_eq!(
        fake.mode_at("o/r", &commit, "bin/tool").as_deref(),
        Some("120000"),
        "the link beside it is untouched"
    );
}

#[tokio::test]
async fn links_submodules_and_directories_are_never_written() {
    let fake = FakeGitHub::start().await.unwrap();
    let head = repo_with_modes(&fake);
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&repo, Some(&repo), "feature", true, "DDS-FIX-20260101-001");
    for (path, what) in [
        ("bin/tool", "symbolic link"),
        ("vendor/dep", "submodule"),
        ("lib/tool.py", "reached through `lib`"),
        ("scripts", "directory"),
    ] {
        fake.clear_request_log();
        let files = vec![(path.to_string(), "print(1)\n".to_string())];
        let err = agent
            .prepare(&target, &head, &files, "fix", None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, GitAgentError::NotARegularFile { path: p, .. } if p == path),
            "{path}: {err}"
        );
        assert!(err.to_string().contains(what), "{path}: {err}");
        assert!(
            fake.request_log().iter().all(|r| r.method == "GET"),
            "{path}: nothing was created"
        );
    }
    assert_eq!(fake.branch_head("o/r", "feature").unwrap(), head);
}

/// The push is one request when the branch is where the fix expects it: the fast-forward-only
/// update is the check. A branch that moved on, or was rewritten, answers 422 and is read once
/// to say where it is; it is never overwritten.
#[tokio::test]
async fn the_push_is_one_request_and_a_moved_or_rewritten_branch_is_left_alone() {
    let fake = FakeGitHub::start().await.unwrap();
    let base = fake.add_repo("o", "r", "main", &[("a.py", "import os\n")]);
    let proposed_for = fake
        .commit_files("o/r", "feature", Some(&base), &[("a.py", "x\n")], "one")
        .unwrap();
    let gh = client(&fake).await;
    let repo = RepoRef::new("o", "r");
    let agent = GitAgent {
        gh: &gh as &dyn GitHubApi,
        inst: InstallationId(1),
    };
    let target = target_for(&repo, Some(&repo), "feature", true, "DDS-FIX-20260101-001");
    let files = [("a.py".to_string(), "y\n".to_string())];
    let commit = agent
        .prepare(&target, &proposed_for, &files, "fix", None)
        .await
        .unwrap();
    let calls = |fake: &FakeGitHub| -> Vec<String> {
        let log = fake.request_log();
        fake.clear_request_log();
        log.into_iter()
            .map(|r| format!("{} {} {}", r.method, r.path, r.status))
            .collect()
    };
    calls(&fake);
    agent
        .publish(&target, &proposed_for, &commit)
        .await
        .unwrap();
    assert_eq!(
        calls(&fake),
        vec!["PATCH /repos/o/r/git/refs/heads/feature 200".to_string()]
    );
    assert_eq!(fake.branch_head("o/r", "feature").unwrap(), commit);

    // The next fix, made for the commit just pushed; someone pushes on top before ci-medic.
    let second = agent
        .prepare(&target, &commit, &files, "fix again", None)
        .await
        .unwrap();
    let moved = fake
        .commit_files("o/r", "feature", Some(&commit), &[("b.py", "z\n")], "two")
        .unwrap();
    calls(&fake);
    let err = agent.publish(&target, &commit, &second).await.unwrap_err();
    match err {
        GitAgentError::Stale { actual, .. } => assert_eq!(actual, moved),
        other => panic!("{other}"),
    }
    assert_eq!(
        calls(&fake),
        vec![
            "PATCH /repos/o/r/git/refs/heads/feature 422".to_string(),
            "GET /repos/o/r/git/ref/heads/feature 200".to_string(),
        ]
    );
    assert_eq!(fake.branch_head("o/r", "feature").unwrap(), moved);

    // Rewritten instead (a force-push of another history): refused the same way.
    let rewritten = fake
        .commit_files("o/r", "feature", Some(&base), &[("c.py", "w\n")], "other")
        .unwrap();
    let err = agent.publish(&target, &commit, &second).await.unwrap_err();
    assert!(matches!(err, GitAgentError::Stale { .. }), "{err}");
    assert_eq!(fake.branch_head("o/r", "feature").unwrap(), rewritten);
}
