//! Shared helpers for the fake's integration tests: an unsigned-but-well-formed App JWT, an HTTP
//! client that never follows redirects, and a seeded fake.
#![allow(dead_code)]

use base64::Engine;
use fake_github::{FakeGitHub, NewPullRequest, Permission};

pub fn jwt(app_id: u64) -> String {
    let e = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let now = chrono::Utc::now().timestamp();
    format!(
        "{}.{}.{}",
        e(serde_json::json!({"alg": "RS256", "typ": "JWT"})),
        e(serde_json::json!({"iat": now - 60, "exp": now + 540, "iss": app_id.to_string()})),
        "c2lnbmF0dXJl"
    )
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub const REPO: &str = "octo/widget";

/// A repo with a `feature` branch one commit ahead of `main` and PR #7 from `alice`.
pub async fn seeded() -> (FakeGitHub, String) {
    let fake = FakeGitHub::start().await.unwrap();
    fake.add_repo(
        "octo",
        "widget",
        "main",
        &[("README.md", "hello\n"), ("src/lib.rs", "pub fn a() {}\n")],
    );
    fake.commit_files(
        REPO,
        "feature",
        Some("main"),
        &[
            ("src/lib.rs", "pub fn a() { broken }\n"),
            ("src/new.rs", "x\n"),
        ],
        "feature work",
    )
    .unwrap();
    fake.open_pull_request(NewPullRequest {
        repo: REPO,
        number: 7,
        head_branch: "feature",
        head_repo: REPO,
        base: "main",
        author_login: "alice",
        title: "Add feature",
        maintainer_can_modify: true,
    })
    .unwrap();
    fake.set_permission(REPO, "maint", Permission::Maintain)
        .unwrap();
    let token = fake.issue_installation_token(1);
    (fake, token)
}
