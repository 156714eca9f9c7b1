//! Conditional requests end to end: the client sends `If-None-Match` with the `ETag` it saw
//! when it reads a URL again, the fake GitHub answers `304 Not Modified` with no body (and
//! without counting it against the rate limit, as GitHub does), and the client answers with
//! the body it kept; a changed resource is read whole again.

use std::sync::Arc;
use std::time::Duration;

use ci_medic::github::{
    GitHubApi, GitHubClientConfig, InstallationId, RepoRef, RestClient, RetryPolicy, StaticToken,
};
use fake_github::{FakeGitHub, NewPullRequest};
use secrecy::SecretString;

const REPO: &str = "octo-org/shop";

async fn setup() -> (FakeGitHub, RestClient) {
    let fake = FakeGitHub::start().await.unwrap();
    let base = fake.add_repo("octo-org", "shop", "main", &[("README.md", "# shop\n")]);
    fake.commit_files(REPO, "feature", Some(&base), &[("a.py", "x = 1\n")], "wip")
        .unwrap();
    fake.open_pull_request(NewPullRequest {
        repo: REPO,
        number: 7,
        head_branch: "feature",
        head_repo: REPO,
        base: "main",
        author_login: "contributor",
        title: "Add a",
        maintainer_can_modify: true,
    })
    .unwrap();
    let mut cfg = GitHubClientConfig::new(fake.base_url());
    cfg.request_timeout = Duration::from_secs(5);
    cfg.retry = RetryPolicy {
        max_retries: 1,
        max_total_wait: Duration::from_secs(1),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(10),
        rate_limit_min_wait: Duration::from_millis(10),
    };
    let token = fake.issue_installation_token(1);
    let c = RestClient::with_token_provider(cfg, Arc::new(StaticToken(SecretString::from(token))))
        .unwrap();
    (fake, c)
}

fn statuses(fake: &FakeGitHub, path: &str) -> Vec<u16> {
    fake.request_log()
        .into_iter()
        .filter(|r| r.path.split('?').next() == Some(path))
        .map(|r| r.status)
        .collect()
}

#[tokio::test]
async fn a_repeated_read_is_answered_304_and_the_kept_body_used() {
    let (fake, c) = setup().await;
    let repo = RepoRef::parse(REPO).unwrap();
    let inst = InstallationId(1);

    let first = c.get_pull_request(inst, &repo, 7).await.unwrap();
    let again = c.get_pull_request(inst, &repo, 7).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(statuses(&fake, "/repos/octo-org/shop/pulls/7"), [200, 304]);

    // Lists too, page by page.
    let files = c.list_pull_request_files(inst, &repo, 7).await.unwrap();
    let files_again = c.list_pull_request_files(inst, &repo, 7).await.unwrap();
    assert_eq!(files, files_again);
    assert_eq!(files.len(), 1);
    assert_eq!(
        statuses(&fake, "/repos/octo-org/shop/pulls/7/files"),
        [200, 304]
    );

    // A change is seen: a new comment makes the list differ, so it is read whole.
    let before = c.list_issue_comments(inst, &repo, 7).await.unwrap();
    fake.add_comment(REPO, 7, "maintainer", "/approve");
    let after = c.list_issue_comments(inst, &repo, 7).await.unwrap();
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(
        statuses(&fake, "/repos/octo-org/shop/issues/7/comments"),
        [200, 200]
    );
}

#[tokio::test]
async fn the_fake_answers_as_github_does() {
    let (fake, _c) = setup().await;
    let token = fake.issue_installation_token(1);
    let http = reqwest::Client::new();
    let url = format!("{}/repos/{REPO}/pulls/7", fake.base_url());
    let get = |etag: Option<String>| {
        let mut r = http
            .get(&url)
            .bearer_auth(&token)
            .header("user-agent", "test");
        if let Some(e) = etag {
            r = r.header("if-none-match", e);
        }
        r.send()
    };
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let full = get(None).await.unwrap();
    assert_eq!(full.status(), 200);
    let etag = header(&full, "etag").expect("an ETag on a 200");
    let used = header(&full, "x-ratelimit-used").unwrap();

    let cached = get(Some(etag.clone())).await.unwrap();
    assert_eq!(cached.status(), 304);
    assert_eq!(header(&cached, "etag").as_deref(), Some(etag.as_str()));
    // Not counted against the rate limit.
    assert_eq!(
        header(&cached, "x-ratelimit-used").as_deref(),
        Some(used.as_str())
    );
    assert!(
        cached.bytes().await.unwrap().is_empty(),
        "a 304 has no body"
    );

    // Weak comparison, lists of tags; another tag gets the whole body.
    let strong = etag.trim_start_matches("W/").to_string();
    assert_eq!(get(Some(strong)).await.unwrap().status(), 304);
    assert_eq!(
        get(Some(format!("\"other\", {etag}")))
            .await
            .unwrap()
            .status(),
        304
    );
    let other = get(Some("\"other\"".into())).await.unwrap();
    assert_eq!(other.status(), 200);
    let used_after = header(&other, "x-ratelimit-used").unwrap();
    assert!(used_after.parse::<u64>().unwrap() > used.parse::<u64>().unwrap());
}
