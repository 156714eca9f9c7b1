//! HTTP-level tests of the real GitHub client (`RestClient`) and `log_source::fetch_log`
//! against small axum servers on loopback that answer with GitHub's recorded / documented bodies
//! (`/work/shared/github`). Each test asserts what went over the wire: method, path (with the
//! `/api/v3` base prefix), headers, auth on the API host and none on redirect hosts.
//!
//! When the shared fixtures are missing the tests skip, except under `CI=true`, where they fail.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Request};
use axum::response::Response;
use chrono::{TimeZone, Utc};
use ci_medic::comment::{
    CommentView, ProposalStatusView, marker, publish_check_run, render_comment, upsert_comment,
};
use ci_medic::github::{
    AnnotationLevel, AppCredentials, CheckRunOutputRequest, Clock, CreateCheckRun, CreateCommit,
    FileMode, GitHubApi, GitHubClientConfig, GitHubError, InstallationId, ManualClock,
    NewAnnotation, ReactionContent, RepoRef, RestClient, RetryPolicy, StaticToken, TreeEntry,
    TreeEntryContent, UpdateCheckRun,
};
use ci_medic::log_source::{LogError, LogLimits, LogSource, fetch_log};
use ci_medic::repo_config::Permission;
use ci_medic_parser::{BugReport, BugType};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

const INST: InstallationId = InstallationId(42);
const TOKEN: &str = "ghs_test_token_0001";

// ---------------------------------------------------------------------------------------------
// fixtures

fn shared() -> Option<PathBuf> {
    let dir = PathBuf::from("/work/shared/github");
    if dir.join("openapi-subset.json").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("/work/shared/github is missing; the GitHub client tests need it in CI");
    }
    eprintln!("skipping: /work/shared/github is missing");
    None
}

macro_rules! require_shared {
    () => {
        match shared() {
            Some(dir) => dir,
            None => return,
        }
    };
}

/// GitHub's own example body `components.examples.<name>.value` from the OpenAPI subset.
fn example(dir: &std::path::Path, name: &str) -> Value {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("openapi-subset.json")).unwrap()).unwrap();
    doc["components"]["examples"][name]["value"].clone()
}

/// The response body of exchange `index` of a PyGithub ReplayData file (11 lines each, the
/// body on the 10th).
fn pygithub_body(dir: &std::path::Path, file: &str, index: usize) -> Value {
    let text =
        std::fs::read_to_string(dir.join("recorded/pygithub-replaydata").join(file)).unwrap();
    serde_json::from_str(text.lines().nth(index * 11 + 9).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// a scripted server

#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    /// Path and query.
    uri: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

type Handler = dyn Fn(&Seen, usize) -> Response + Send + Sync;

#[derive(Clone)]
struct Server {
    seen: Arc<Mutex<Vec<Seen>>>,
    /// `http://127.0.0.1:port`
    origin: String,
}

impl Server {
    fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
    fn api(&self) -> String {
        format!("{}/api/v3", self.origin)
    }
}

async fn serve(handler: impl Fn(&Seen, usize) -> Response + Send + Sync + 'static) -> Server {
    #[derive(Clone)]
    struct St {
        seen: Arc<Mutex<Vec<Seen>>>,
        handler: Arc<Handler>,
    }
    async fn fallback(State(st): State<St>, req: Request<Body>) -> Response {
        let (parts, body) = req.into_parts();
        let body = axum::body::to_bytes(body, 64 << 20).await.unwrap();
        let seen = Seen {
            method: parts.method,
            uri: parts.uri.path_and_query().unwrap().to_string(),
            headers: parts.headers,
            body,
        };
        let n = {
            let mut all = st.seen.lock().unwrap();
            all.push(seen.clone());
            all.len() - 1
        };
        let mut resp = (st.handler)(&seen, n);
        // A handler asks for a late answer through this header (an async sleep, so the
        // single-threaded test runtime keeps running the client meanwhile).
        if let Some(ms) = resp.headers_mut().remove("x-test-delay-ms") {
            let ms: u64 = ms.to_str().unwrap().parse().unwrap();
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        resp
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let st = St {
        seen: seen.clone(),
        handler: Arc::new(handler),
    };
    let app = axum::Router::new().fallback(fallback).with_state(st);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server {
        seen,
        origin: format!("http://{addr}"),
    }
}

fn respond(status: u16, body: &Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json; charset=utf-8")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn respond_with(status: u16, headers: &[(&str, &str)], body: &Value) -> Response {
    let mut b = Response::builder()
        .status(status)
        .header("content-type", "application/json; charset=utf-8");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

fn fast_config(api: String) -> GitHubClientConfig {
    let mut c = GitHubClientConfig::new(api);
    c.request_timeout = Duration::from_secs(5);
    // The pacing test sets its own; the others test one call at a time.
    c.write_interval = Duration::ZERO;
    c.retry = RetryPolicy {
        max_retries: 3,
        max_total_wait: Duration::from_secs(5),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        rate_limit_min_wait: Duration::from_millis(150),
    };
    c
}

fn client(server: &Server) -> RestClient {
    RestClient::with_token_provider(
        fast_config(server.api()),
        Arc::new(StaticToken(SecretString::from(TOKEN))),
    )
    .unwrap()
}

fn repo() -> RepoRef {
    RepoRef::new("octocat", "Hello-World")
}

fn assert_api_headers(seen: &Seen) {
    assert_eq!(
        seen.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert_eq!(seen.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(seen.header("x-github-api-version"), Some("2022-11-28"));
    assert_eq!(seen.header("user-agent"), Some("ci-medic"));
}

// ---------------------------------------------------------------------------------------------
// plain JSON operations

#[tokio::test]
async fn get_pull_request_goes_under_the_base_path_with_standard_headers() {
    let dir = require_shared!();
    let pr = example(&dir, "pull-request");
    let server = serve(move |_, _| respond(200, &pr)).await;
    let got = client(&server)
        .get_pull_request(INST, &repo(), 1347)
        .await
        .unwrap();
    assert_eq!(got.number, 1347);
    assert_eq!(got.head.git_ref, "new-topic");
    assert_eq!(got.base.repo.as_ref().unwrap().default_branch, "master");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, Method::GET);
    assert_eq!(reqs[0].uri, "/api/v3/repos/octocat/Hello-World/pulls/1347");
    assert_api_headers(&reqs[0]);
}

#[tokio::test]
async fn list_prs_for_head_sends_owner_colon_branch() {
    let dir = require_shared!();
    let items = example(&dir, "pull-request-simple-items");
    let server = serve(move |_, _| respond(200, &items)).await;
    let prs = client(&server)
        .list_pull_requests_for_head(INST, &repo(), "forker", "fix/thing")
        .await
        .unwrap();
    assert_eq!(prs.len(), 1);
    assert_eq!(
        server.requests()[0].uri,
        "/api/v3/repos/octocat/Hello-World/pulls?head=forker%3Afix%2Fthing&state=open&per_page=100"
    );
}

#[tokio::test]
async fn collaborator_permission_is_read_raw_from_recorded_answers() {
    let dir = require_shared!();
    let admin = example(
        &dir,
        "repository-collaborator-permission-response-if-user-has-admin-permissions",
    );
    let recorded = pygithub_body(&dir, "Repository.testCollaboratorPermission.txt", 0);
    let server = serve(move |seen, _| {
        if seen.uri.contains("/collaborators/octocat/") {
            respond(200, &admin)
        } else {
            respond(200, &recorded)
        }
    })
    .await;
    let c = client(&server);
    let p = c
        .get_collaborator_permission(INST, &repo(), "octocat")
        .await
        .unwrap();
    assert_eq!(
        (p.permission.as_str(), p.level()),
        ("admin", Permission::Admin)
    );
    let p = c
        .get_collaborator_permission(INST, &repo(), "jacquev6")
        .await
        .unwrap();
    assert_eq!(p.permission, "admin");
    assert_eq!(p.role_name, None);
    assert_eq!(
        server.requests()[1].uri,
        "/api/v3/repos/octocat/Hello-World/collaborators/jacquev6/permission"
    );
}

#[tokio::test]
async fn file_content_is_decoded_and_404_is_none() {
    let dir = require_shared!();
    // A real answer (PyGithub's README read, same shape as the contents API), base64 wrapped
    // at 60 columns with real newlines.
    let file = pygithub_body(&dir, "ContentFile.setUp.txt", 1);
    let server = serve(move |seen, _| {
        if seen.uri.contains("README.md") {
            respond(200, &file)
        } else {
            respond(404, &json!({"message": "Not Found"}))
        }
    })
    .await;
    let c = client(&server);
    let got = c
        .get_file_content(INST, &repo(), "README.md", "feature/x")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.path, "README.md");
    assert_eq!(got.sha, "0d9df5bfb7d4b93443c130bc8f4eea5dd3f01205");
    assert_eq!(got.size, 2524);
    assert_eq!(got.content.len(), 2524);
    assert!(got.content.starts_with(b"# PyGitHub\n\n[![PyPI]"));
    assert_eq!(
        server.requests()[0].uri,
        "/api/v3/repos/octocat/Hello-World/contents/README.md?ref=feature%2Fx"
    );
    assert_eq!(
        c.get_file_content(INST, &repo(), "src/missing.rs", "main")
            .await
            .unwrap(),
        None
    );
    // A 404 is an answer, not a transient failure: asked once.
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn git_data_calls_send_the_documented_bodies() {
    let dir = require_shared!();
    let (git_ref, commit, tree, blob) = (
        example(&dir, "git-ref"),
        example(&dir, "git-commit"),
        example(&dir, "git-tree"),
        example(&dir, "short-blob"),
    );
    let server = serve(move |seen, _| {
        let p = seen.uri.as_str();
        match (seen.method.as_str(), p) {
            ("GET", _) if p.contains("/git/ref/") => respond(200, &git_ref),
            ("GET", _) if p.contains("/git/commits/") => respond(200, &commit),
            ("POST", _) if p.ends_with("/git/blobs") => respond(201, &blob),
            ("POST", _) if p.ends_with("/git/trees") => respond(201, &tree),
            ("POST", _) if p.ends_with("/git/commits") => respond(201, &commit),
            ("POST", _) if p.ends_with("/git/refs") => respond(201, &git_ref),
            ("PATCH", _) => respond(
                422,
                &json!({"message": "Update is not a fast forward",
                        "documentation_url": "https://docs.github.com/rest/git/refs#update-a-reference"}),
            ),
            _ => respond(404, &json!({"message": "Not Found"})),
        }
    })
    .await;
    let c = client(&server);
    let r = c
        .get_git_ref(INST, &repo(), "heads/featureA")
        .await
        .unwrap();
    assert_eq!(r.object.sha, "aa218f56b14c9653891f9e74264a383fa43fefbd");
    let cm = c
        .get_git_commit(INST, &repo(), "7638417db6d59f3c431d3e1f261cc637155684cd")
        .await
        .unwrap();
    assert_eq!(cm.tree.sha, "827efc6d56897b048c772eb4087f854f46256132");
    assert_eq!(cm.parents.len(), 1);
    c.create_blob(INST, &repo(), b"fn main() {}\n")
        .await
        .unwrap();
    let entries = [
        TreeEntry {
            path: "src/main.rs".into(),
            mode: FileMode::Regular,
            content: TreeEntryContent::BlobSha("3a0f86fb8db8eea7ccbb9a95f325ddbedfb25e15".into()),
        },
        TreeEntry {
            path: "old.rs".into(),
            mode: FileMode::Regular,
            content: TreeEntryContent::Delete,
        },
    ];
    let t = c
        .create_tree(INST, &repo(), &cm.tree.sha, &entries)
        .await
        .unwrap();
    assert_eq!(t.sha, "cd8274d15fa3ae2ab983129fb037999f264ba9a7");
    c.create_commit(
        INST,
        &repo(),
        &CreateCommit {
            message: "ci-medic: fix".into(),
            tree: t.sha.clone(),
            parents: vec![cm.sha.clone()],
            author: None,
            committer: None,
        },
    )
    .await
    .unwrap();
    let err = c
        .update_ref(INST, &repo(), "refs/heads/featureA", "abc")
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::NotFastForward { .. }), "{err:?}");
    c.create_ref(INST, &repo(), "refs/heads/ci-medic/fix-1", "abc")
        .await
        .unwrap();

    let reqs = server.requests();
    assert_eq!(
        reqs[0].uri,
        "/api/v3/repos/octocat/Hello-World/git/ref/heads/featureA"
    );
    assert_eq!(
        reqs[2].json(),
        json!({"content": "Zm4gbWFpbigpIHt9Cg==", "encoding": "base64"})
    );
    assert_eq!(
        reqs[3].json(),
        json!({"base_tree": "827efc6d56897b048c772eb4087f854f46256132", "tree": [
            {"path": "src/main.rs", "mode": "100644", "type": "blob",
             "sha": "3a0f86fb8db8eea7ccbb9a95f325ddbedfb25e15"},
            {"path": "old.rs", "mode": "100644", "type": "blob", "sha": null}]})
    );
    assert_eq!(
        reqs[4].json(),
        json!({"message": "ci-medic: fix", "tree": t.sha, "parents": [cm.sha]})
    );
    // The fast-forward refusal is final: one PATCH, never forced.
    let patches: Vec<_> = reqs.iter().filter(|r| r.method == Method::PATCH).collect();
    assert_eq!(patches.len(), 1);
    assert_eq!(
        patches[0].uri,
        "/api/v3/repos/octocat/Hello-World/git/refs/heads/featureA"
    );
    assert_eq!(patches[0].json(), json!({"sha": "abc", "force": false}));
    assert_eq!(
        reqs.last().unwrap().json(),
        json!({"ref": "refs/heads/ci-medic/fix-1", "sha": "abc"})
    );
}

#[tokio::test]
async fn comments_reactions_and_check_runs_use_the_right_methods() {
    let dir = require_shared!();
    let (comment, reaction, run) = (
        example(&dir, "issue-comment"),
        example(&dir, "reaction"),
        example(&dir, "check-run"),
    );
    let server = serve(move |seen, n| match seen.method.as_str() {
        "POST" if seen.uri.ends_with("/reactions") => {
            respond(if n == 2 { 201 } else { 200 }, &reaction)
        }
        "POST" if seen.uri.ends_with("/check-runs") => respond(201, &run),
        "PATCH" if seen.uri.contains("/check-runs/") => respond(200, &run),
        "POST" => respond(201, &comment),
        "PATCH" => respond(200, &comment),
        _ => respond(404, &json!({})),
    })
    .await;
    let c = client(&server);
    let created = c
        .create_issue_comment(INST, &repo(), 1347, "<!-- ci-medic -->\nhello")
        .await
        .unwrap();
    assert_eq!(created.id, 1);
    c.update_issue_comment(INST, &repo(), 1, "edited")
        .await
        .unwrap();
    let r1 = c
        .create_issue_comment_reaction(INST, &repo(), 1, ReactionContent::PlusOne)
        .await
        .unwrap();
    let r2 = c
        .create_issue_comment_reaction(INST, &repo(), 1, ReactionContent::PlusOne)
        .await
        .unwrap();
    assert!(r1.created && !r2.created);
    let ann = |line| NewAnnotation {
        path: "src/lib.rs".into(),
        start_line: line,
        end_line: line,
        start_column: None,
        end_column: None,
        annotation_level: AnnotationLevel::Failure,
        message: "unused import".into(),
        title: None,
        raw_details: None,
    };
    let output = |n: u64| CheckRunOutputRequest {
        title: "ci-medic".into(),
        summary: "2 bugs".into(),
        text: None,
        annotations: (1..=n).map(ann).collect(),
    };
    let run = c
        .create_check_run(
            INST,
            &repo(),
            &CreateCheckRun {
                name: "ci-medic".into(),
                head_sha: "ce587453ced02b1526dfb4cb910479d431683101".into(),
                status: None,
                conclusion: None,
                external_id: Some("fix-1".into()),
                details_url: None,
                started_at: None,
                completed_at: None,
                output: Some(output(1)),
            },
        )
        .await
        .unwrap();
    assert_eq!(run.id, 4);
    let update = |n| UpdateCheckRun {
        output: Some(output(n)),
        ..Default::default()
    };
    c.update_check_run(INST, &repo(), 4, &update(50))
        .await
        .unwrap();
    let err = c
        .update_check_run(INST, &repo(), 4, &update(51))
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::InvalidRequest(_)));

    let reqs = server.requests();
    let summary: Vec<_> = reqs
        .iter()
        .map(|r| (r.method.as_str(), r.uri.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "POST",
                "/api/v3/repos/octocat/Hello-World/issues/1347/comments"
            ),
            (
                "PATCH",
                "/api/v3/repos/octocat/Hello-World/issues/comments/1"
            ),
            (
                "POST",
                "/api/v3/repos/octocat/Hello-World/issues/comments/1/reactions"
            ),
            (
                "POST",
                "/api/v3/repos/octocat/Hello-World/issues/comments/1/reactions"
            ),
            ("POST", "/api/v3/repos/octocat/Hello-World/check-runs"),
            ("PATCH", "/api/v3/repos/octocat/Hello-World/check-runs/4"),
        ]
    );
    assert_eq!(reqs[0].json(), json!({"body": "<!-- ci-medic -->\nhello"}));
    assert_eq!(reqs[2].json(), json!({"content": "+1"}));
    assert_eq!(reqs[4].json()["external_id"], "fix-1");
    assert_eq!(
        reqs[5].json()["output"]["annotations"]
            .as_array()
            .unwrap()
            .len(),
        50
    );
}

// ---------------------------------------------------------------------------------------------
// pagination

#[tokio::test]
async fn link_pagination_follows_absolute_urls_on_a_non_github_host_with_auth() {
    let dir = require_shared!();
    let items = example(&dir, "issue-comment-items");
    let origin = Arc::new(Mutex::new(String::new()));
    let o = origin.clone();
    let server = serve(move |seen, _| {
        let mut page = items.clone();
        if seen.uri.contains("page=2") {
            page[0]["id"] = json!(2);
            return respond(200, &page);
        }
        // Like GitHub, the next link switches to the `/repositories/{id}` form.
        let next = format!(
            "<{}/api/v3/repositories/1296269/issues/1347/comments?per_page=100&page=2>; rel=\"next\", <{0}/api/v3/repositories/1296269/issues/1347/comments?per_page=100&page=2>; rel=\"last\"",
            o.lock().unwrap()
        );
        respond_with(200, &[("link", &next)], &page)
    })
    .await;
    *origin.lock().unwrap() = server.origin.clone();
    let comments = client(&server)
        .list_issue_comments(INST, &repo(), 1347)
        .await
        .unwrap();
    assert_eq!(comments.iter().map(|c| c.id).collect::<Vec<_>>(), [1, 2]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].uri,
        "/api/v3/repos/octocat/Hello-World/issues/1347/comments?per_page=100"
    );
    assert_eq!(
        reqs[1].uri,
        "/api/v3/repositories/1296269/issues/1347/comments?per_page=100&page=2"
    );
    assert_api_headers(&reqs[1]);
}

#[tokio::test]
async fn check_runs_for_ref_pages_through_the_check_runs_field() {
    let dir = require_shared!();
    let page = example(&dir, "check-run-paginated");
    let origin = Arc::new(Mutex::new(String::new()));
    let o = origin.clone();
    let server = serve(move |seen, _| {
        if seen.uri.contains("page=2") {
            let mut p = page.clone();
            p["check_runs"][0]["id"] = json!(5);
            respond(200, &p)
        } else {
            let next = format!(
                "<{}/api/v3/repos/octocat/Hello-World/commits/abc/check-runs?check_name=test&per_page=100&page=2>; rel=\"next\"",
                o.lock().unwrap()
            );
            respond_with(200, &[("link", &next)], &page)
        }
    })
    .await;
    *origin.lock().unwrap() = server.origin.clone();
    let runs = client(&server)
        .list_check_runs_for_ref(INST, &repo(), "abc", Some("test"))
        .await
        .unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(
        server.requests()[0].uri,
        "/api/v3/repos/octocat/Hello-World/commits/abc/check-runs?check_name=test&per_page=100"
    );
}

#[tokio::test]
async fn pagination_never_carries_the_token_to_another_host() {
    let dir = require_shared!();
    let items = example(&dir, "issue-comment-items");
    let elsewhere = serve(|_, _| respond(200, &json!([]))).await;
    let other = elsewhere.origin.replace("127.0.0.1", "localhost");
    let server = serve(move |_, _| {
        let next = format!("<{other}/api/v3/evil?page=2>; rel=\"next\"");
        respond_with(200, &[("link", &next)], &items)
    })
    .await;
    let err = client(&server)
        .list_issue_comments(INST, &repo(), 1)
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::Decode(_)), "{err:?}");
    assert_eq!(elsewhere.count(), 0);
}

// ---------------------------------------------------------------------------------------------
// retries and rate limits

#[tokio::test]
async fn retries_a_502_then_succeeds() {
    let dir = require_shared!();
    let repo_json = example(&dir, "pull-request")["base"]["repo"].clone();
    let server = serve(move |_, n| {
        if n == 0 {
            respond(502, &json!({"message": "Server Error"}))
        } else {
            respond(200, &repo_json)
        }
    })
    .await;
    let r = client(&server).get_repository(INST, &repo()).await.unwrap();
    assert_eq!(r.default_branch, "master");
    assert_eq!(server.count(), 2);
    assert_eq!(
        server.requests()[1].uri,
        "/api/v3/repos/octocat/Hello-World"
    );
}

#[tokio::test]
async fn secondary_rate_limit_403_with_retry_after_waits_then_succeeds() {
    let dir = require_shared!();
    let run = example(&dir, "check-run");
    let server = serve(move |_, n| {
        if n == 0 {
            respond_with(
                403,
                &[("retry-after", "1")],
                &json!({"message": "You have exceeded a secondary rate limit."}),
            )
        } else {
            respond(200, &run)
        }
    })
    .await;
    let start = Instant::now();
    client(&server)
        .get_check_run(INST, &repo(), 4)
        .await
        .unwrap();
    assert_eq!(server.count(), 2);
    // Retry-After was honoured rather than the 10 ms backoff.
    assert!(start.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn a_429_without_retry_after_waits_the_rate_limit_minimum_and_retries() {
    let dir = require_shared!();
    let run = example(&dir, "check-run");
    let server = serve(move |_, n| {
        if n < 2 {
            respond(429, &json!({"message": "Too Many Requests"}))
        } else {
            respond(200, &run)
        }
    })
    .await;
    let start = Instant::now();
    client(&server)
        .get_check_run(INST, &repo(), 4)
        .await
        .unwrap();
    assert_eq!(server.count(), 3);
    // Twice the 150 ms minimum of `fast_config`, not the 10 + 20 ms backoff.
    assert!(start.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_secondary_rate_limit_403_without_headers_is_waited_out() {
    let dir = require_shared!();
    let run = example(&dir, "check-run");
    // Real secondary-limit answers often carry neither `Retry-After` nor
    // `x-ratelimit-remaining: 0`, only the message (octokit/plugin-throttling.js#566).
    for message in [
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID C7F3:2B5C:1E2A4B8:1F1C9D3:6650A1B2.",
        "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.",
    ] {
        let run = run.clone();
        let server = serve(move |_, n| {
            if n == 0 {
                respond_with(
                    403,
                    &[("x-ratelimit-remaining", "4321")],
                    &json!({"message": message,
                            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}),
                )
            } else {
                respond(200, &run)
            }
        })
        .await;
        let start = Instant::now();
        client(&server)
            .get_check_run(INST, &repo(), 4)
            .await
            .unwrap();
        assert_eq!(server.count(), 2, "{message}");
        assert!(start.elapsed() >= Duration::from_millis(150), "{message}");
    }
}

#[tokio::test]
async fn a_permission_403_is_forbidden_at_once_and_a_limit_beyond_the_budget_is_transient() {
    let server = serve(|seen, _| {
        let message = if seen.uri.contains("/check-runs/") {
            "Resource not accessible by integration"
        } else {
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        };
        respond(403, &json!({"message": message}))
    })
    .await;
    let c = client(&server);
    let err = c.get_check_run(INST, &repo(), 4).await.unwrap_err();
    assert!(
        matches!(&err, GitHubError::Forbidden { message } if message == "Resource not accessible by integration"),
        "{err:?}"
    );
    assert_eq!(server.count(), 1);

    // A minimum wait longer than the call's whole budget: given back at once, as a rate
    // limit (transient: the job is retried later), never as a permanent `Forbidden`.
    let mut cfg = fast_config(server.api());
    cfg.retry.rate_limit_min_wait = Duration::from_secs(60);
    let c = RestClient::with_token_provider(cfg, Arc::new(StaticToken(TOKEN.into()))).unwrap();
    let err = c.get_repository(INST, &repo()).await.unwrap_err();
    // It says how long to wait, so the job queue can wait it out.
    assert!(
        matches!(err, GitHubError::RateLimited { retry_after: Some(w) } if w >= Duration::from_secs(60)),
        "{err:?}"
    );
    assert!(err.is_transient());
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn primary_rate_limit_beyond_the_budget_fails_at_once() {
    let reset = (Utc::now().timestamp() + 3600).to_string();
    let server = serve(move |_, _| {
        respond_with(
            403,
            &[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &reset),
            ],
            &json!({"message": "API rate limit exceeded"}),
        )
    })
    .await;
    let err = client(&server)
        .get_check_run(INST, &repo(), 4)
        .await
        .unwrap_err();
    match err {
        GitHubError::RateLimited {
            retry_after: Some(wait),
        } => assert!(wait > Duration::from_secs(3500)),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn persistent_5xx_gives_up_after_max_retries() {
    let server = serve(|_, _| respond(503, &json!({"message": "unavailable"}))).await;
    let err = client(&server)
        .get_check_run(INST, &repo(), 4)
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitHubError::Server { status: 503 }),
        "{err:?}"
    );
    assert_eq!(server.count(), 4, "1 attempt + max_retries 3");
}

#[tokio::test]
async fn total_wait_bounds_the_retries_even_with_many_allowed() {
    let server = serve(|_, _| respond(500, &json!({}))).await;
    let mut cfg = fast_config(server.api());
    cfg.retry = RetryPolicy {
        max_retries: 1000,
        max_total_wait: Duration::from_millis(200),
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(50),
        rate_limit_min_wait: Duration::from_millis(50),
    };
    let c = RestClient::with_token_provider(cfg, Arc::new(StaticToken(TOKEN.into()))).unwrap();
    assert!(c.get_check_run(INST, &repo(), 4).await.is_err());
    // Each jittered wait is 25–50 ms, so 200 ms of waiting allow 4 to 8 retries, never the
    // thousand the count alone would.
    let n = server.count();
    assert!(
        (5..=9).contains(&n),
        "{n} requests for 200 ms of 25–50 ms waits"
    );
}

#[tokio::test]
async fn a_post_that_timed_out_or_got_a_5xx_is_returned_not_retried() {
    let dir = require_shared!();
    let comment = example(&dir, "issue-comment");
    let server = serve(move |seen, _| {
        if seen.uri.ends_with("/issues/1/comments") {
            // Answer late: the request has landed, the client cannot know.
            respond_with(201, &[("x-test-delay-ms", "600")], &comment)
        } else {
            // A 5xx proves nothing either: GitHub may have stored the comment before failing
            // (probot/probot#921: one createComment posted four times by retries).
            respond(502, &json!({"message": "Server Error"}))
        }
    })
    .await;
    let mut cfg = fast_config(server.api());
    cfg.request_timeout = Duration::from_millis(200);
    let c = RestClient::with_token_provider(cfg, Arc::new(StaticToken(TOKEN.into()))).unwrap();
    let err = c
        .create_issue_comment(INST, &repo(), 1, "body")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            GitHubError::Transport {
                may_have_landed: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.count(), 1);
    let err = c
        .create_issue_comment(INST, &repo(), 2, "body")
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitHubError::Server { status: 502 }),
        "{err:?}"
    );
    // Transient, so the job layer retries the whole job, which looks for the comment first.
    assert!(err.is_transient());
    assert_eq!(server.count(), 2, "the 502 may have landed: not retried");
}

#[tokio::test]
async fn only_calls_safe_to_repeat_are_retried_after_a_5xx() {
    let server = serve(|_, _| respond(500, &json!({"message": "Server Error"}))).await;
    let c = client(&server);
    let ann = NewAnnotation {
        path: "src/lib.rs".into(),
        start_line: 3,
        end_line: 3,
        start_column: None,
        end_column: None,
        annotation_level: AnnotationLevel::Failure,
        message: "unused import".into(),
        title: None,
        raw_details: None,
    };
    let output = |annotations: Vec<NewAnnotation>| CheckRunOutputRequest {
        title: "ci-medic".into(),
        summary: "1 bug".into(),
        text: None,
        annotations,
    };
    let sha = "ce587453ced02b1526dfb4cb910479d431683101";
    let mut attempts = Vec::new();
    let mut record = |label: &str, err: GitHubError, server: &Server| {
        assert!(
            matches!(err, GitHubError::Server { status: 500 }) && err.is_transient(),
            "{label}: {err:?}"
        );
        let before: usize = attempts.iter().map(|(_, n)| n).sum();
        attempts.push((label.to_owned(), server.count() - before));
    };

    let e = c
        .create_issue_comment(INST, &repo(), 1, "<!-- ci-medic:check=lint -->")
        .await
        .unwrap_err();
    record("create comment", e, &server);
    let create = CreateCheckRun {
        name: "ci-medic".into(),
        head_sha: sha.into(),
        status: None,
        conclusion: None,
        external_id: Some("fix-1".into()),
        details_url: None,
        started_at: None,
        completed_at: None,
        output: Some(output(vec![ann.clone()])),
    };
    let e = c
        .create_check_run(INST, &repo(), &create)
        .await
        .unwrap_err();
    record("create check run", e, &server);
    let e = c
        .create_ref(INST, &repo(), "refs/heads/ci-medic/fix-1", sha)
        .await
        .unwrap_err();
    record("create ref", e, &server);
    // GitHub appends annotations on every update: a repeat would duplicate them.
    let with_annotations = UpdateCheckRun {
        output: Some(output(vec![ann])),
        ..Default::default()
    };
    let e = c
        .update_check_run(INST, &repo(), 4, &with_annotations)
        .await
        .unwrap_err();
    record("update check run with annotations", e, &server);
    let without = UpdateCheckRun {
        output: Some(output(Vec::new())),
        ..Default::default()
    };
    let e = c
        .update_check_run(INST, &repo(), 4, &without)
        .await
        .unwrap_err();
    record("update check run without annotations", e, &server);
    let e = c
        .update_issue_comment(INST, &repo(), 1, "edited")
        .await
        .unwrap_err();
    record("update comment", e, &server);
    let e = c.create_blob(INST, &repo(), b"x").await.unwrap_err();
    record("create blob", e, &server);

    let got: Vec<(&str, usize)> = attempts.iter().map(|(l, n)| (l.as_str(), *n)).collect();
    assert_eq!(
        got,
        [
            ("create comment", 1),
            ("create check run", 1),
            ("create ref", 1),
            ("update check run with annotations", 1),
            // Absolute values and content-addressed objects: 1 attempt + max_retries 3.
            ("update check run without annotations", 4),
            ("update comment", 4),
            ("create blob", 4),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// redirects (renamed and transferred repositories)

/// Exchange `index` of octokit/fixtures' `rename-repository` scenario, recorded against
/// api.github.com: 1 = `GET` old name → 301, 2 = `GET /repositories/1000` → 200,
/// 3 = `PATCH` old name → 307, 4 = `PATCH /repositories/1000` → 200.
fn rename_exchange(dir: &std::path::Path, index: usize) -> Value {
    let path = dir.join("recorded/octokit-fixtures/rename-repository/normalized-fixture.json");
    let all: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    all[index].clone()
}

/// A recorded redirect answer, its `Location` moved from api.github.com to `api`.
fn replay_redirect(exchange: &Value, api: &str) -> Response {
    let location = exchange["headers"]["location"]
        .as_str()
        .unwrap()
        .replace("https://api.github.com", api);
    respond_with(
        exchange["status"].as_u64().unwrap() as u16,
        &[("location", &location)],
        &exchange["response"],
    )
}

#[tokio::test]
async fn a_renamed_repository_is_followed_on_the_api_origin_with_the_token() {
    let dir = require_shared!();
    let (moved, renamed, moved_patch) = (
        rename_exchange(&dir, 1),
        rename_exchange(&dir, 2),
        rename_exchange(&dir, 3),
    );
    assert_eq!(
        (moved["status"].as_u64(), moved_patch["status"].as_u64()),
        (Some(301), Some(307))
    );
    let comment = example(&dir, "issue-comment");
    let api = Arc::new(Mutex::new(String::new()));
    let a = api.clone();
    let server = serve(move |seen, _| {
        let api = a.lock().unwrap().clone();
        match (seen.method.as_str(), seen.uri.as_str()) {
            ("GET", "/api/v3/repos/octocat/Hello-World") => replay_redirect(&moved, &api),
            ("GET", "/api/v3/repositories/1000") => respond(200, &renamed["response"]),
            // GitHub answers writes to the old name with 307: same method, same body.
            (_, "/api/v3/repos/octocat/Hello-World/issues/comments/1")
            | (_, "/api/v3/repos/octocat/Hello-World/issues/1/comments") => {
                let mut r = replay_redirect(&moved_patch, &api);
                let to = r.headers()["location"].to_str().unwrap().to_owned();
                let rest = seen
                    .uri
                    .trim_start_matches("/api/v3/repos/octocat/Hello-World");
                r.headers_mut()
                    .insert("location", format!("{to}{rest}").parse().unwrap());
                r
            }
            ("PATCH", "/api/v3/repositories/1000/issues/comments/1") => respond(200, &comment),
            ("POST", "/api/v3/repositories/1000/issues/1/comments") => respond(201, &comment),
            _ => respond(404, &json!({"message": "Not Found"})),
        }
    })
    .await;
    *api.lock().unwrap() = server.api();
    let c = client(&server);
    let r = c.get_repository(INST, &repo()).await.unwrap();
    assert_eq!(r.full_name, "octokit-fixture-org/rename-repository-newname");
    c.update_issue_comment(INST, &repo(), 1, "edited")
        .await
        .unwrap();
    c.create_issue_comment(INST, &repo(), 1, "new")
        .await
        .unwrap();

    let reqs = server.requests();
    let summary: Vec<_> = reqs
        .iter()
        .map(|r| (r.method.as_str(), r.uri.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("GET", "/api/v3/repos/octocat/Hello-World"),
            ("GET", "/api/v3/repositories/1000"),
            (
                "PATCH",
                "/api/v3/repos/octocat/Hello-World/issues/comments/1"
            ),
            ("PATCH", "/api/v3/repositories/1000/issues/comments/1"),
            (
                "POST",
                "/api/v3/repos/octocat/Hello-World/issues/1/comments"
            ),
            ("POST", "/api/v3/repositories/1000/issues/1/comments"),
        ]
    );
    for r in &reqs {
        assert_api_headers(r);
    }
    assert_eq!(reqs[3].json(), json!({"body": "edited"}));
    assert_eq!(reqs[5].json(), json!({"body": "new"}));
}

#[tokio::test]
async fn redirects_off_the_api_origin_in_loops_or_301s_to_writes_are_not_followed() {
    let elsewhere = serve(|_, _| respond(200, &json!({}))).await;
    let other = elsewhere.origin.replace("127.0.0.1", "localhost");
    let api = Arc::new(Mutex::new(String::new()));
    let a = api.clone();
    let server = serve(move |seen, _| {
        let api = a.lock().unwrap().clone();
        let to = if seen.uri.ends_with("/pulls/1") {
            // Another origin: the token must not go there.
            format!("{other}/api/v3/repositories/1000/pulls/1")
        } else {
            // Around in circles on the API origin (and a 301 for a PATCH below).
            format!("{api}{}", seen.uri.trim_start_matches("/api/v3"))
        };
        respond_with(
            301,
            &[("location", &to)],
            &json!({"message": "Moved Permanently"}),
        )
    })
    .await;
    *api.lock().unwrap() = server.api();
    let c = client(&server);

    let err = c.get_pull_request(INST, &repo(), 1).await.unwrap_err();
    assert!(
        matches!(err, GitHubError::UnexpectedStatus { status: 301, .. }),
        "{err:?}"
    );
    assert_eq!(elsewhere.count(), 0, "nothing sent to another origin");
    assert_eq!(server.count(), 1);

    let err = c.get_repository(INST, &repo()).await.unwrap_err();
    assert!(
        matches!(err, GitHubError::UnexpectedStatus { status: 301, .. }),
        "{err:?}"
    );
    assert_eq!(
        server.count(),
        1 + 1 + 5,
        "the first answer and 5 redirects"
    );

    // A 301 does not say "send the same write again": only 307 and 308 do.
    let before = server.count();
    let err = c
        .update_issue_comment(INST, &repo(), 1, "edited")
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitHubError::UnexpectedStatus { status: 301, .. }),
        "{err:?}"
    );
    assert_eq!(server.count() - before, 1);
}

#[tokio::test]
async fn logs_of_a_renamed_repository_follow_the_301_with_the_token_then_the_302_without() {
    let log = b"2025-04-16T14:48:29.1234567Z error: boom\n".to_vec();
    let body = log.clone();
    let blob = serve(move |_, _| {
        Response::builder()
            .status(200)
            .header("content-type", "text/plain")
            .body(Body::from(body.clone()))
            .unwrap()
    })
    .await;
    let signed = format!(
        "{}/serviceHosts/d560/signedlogcontent/5?urlSignature=abc",
        blob.origin.replace("127.0.0.1", "localhost")
    );
    let api = Arc::new(Mutex::new(String::new()));
    let a = api.clone();
    let server =
        serve(
            move |seen, _| match seen.uri.strip_prefix("/api/v3/repos/octocat/Hello-World") {
                Some(rest) => {
                    let to = format!("{}/repositories/1000{rest}", a.lock().unwrap());
                    respond_with(
                        301,
                        &[("location", &to)],
                        &json!({"message": "Moved Permanently"}),
                    )
                }
                None => Response::builder()
                    .status(302)
                    .header("content-length", "0")
                    .header("location", &signed)
                    .body(Body::empty())
                    .unwrap(),
            },
        )
        .await;
    *api.lock().unwrap() = server.api();
    let fetched = fetch_log(
        &client(&server),
        INST,
        &repo(),
        LogSource::ActionsJob { job_id: 5 },
        LogLimits::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(fetched.bytes, log);
    let reqs = server.requests();
    assert_eq!(
        reqs.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        [
            "/api/v3/repos/octocat/Hello-World/actions/jobs/5/logs",
            "/api/v3/repositories/1000/actions/jobs/5/logs",
        ]
    );
    // The moved API URL is still the API: the token goes along; the log host gets none.
    assert_api_headers(&reqs[1]);
    assert_eq!(blob.count(), 1);
    assert_eq!(blob.requests()[0].header("authorization"), None);
}

// ---------------------------------------------------------------------------------------------
// App authentication

const TEST_KEY: &str = include_str!("../fixtures/keys/test-app.pem");
const TEST_PUB: &str = include_str!("../fixtures/keys/test-app.pub.pem");

#[tokio::test]
async fn installation_tokens_are_minted_with_a_valid_jwt_cached_and_renewed_before_expiry() {
    let dir = require_shared!();
    let repo_json = example(&dir, "pull-request")["base"]["repo"].clone();
    let start = Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap();
    let clock = Arc::new(ManualClock::new(start));
    let mints = Arc::new(AtomicUsize::new(0));
    let (c2, m2) = (clock.clone(), mints.clone());
    let server = serve(move |seen, _| {
        if seen.uri.starts_with("/api/v3/app/installations/") {
            assert_eq!(seen.method, Method::POST);
            let jwt = seen
                .header("authorization")
                .unwrap()
                .strip_prefix("Bearer ")
                .unwrap();
            let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
            v.validate_exp = false; // the test clock is not the wall clock
            v.set_issuer(&["777"]);
            let claims = jsonwebtoken::decode::<Value>(
                jwt,
                &jsonwebtoken::DecodingKey::from_rsa_pem(TEST_PUB.as_bytes()).unwrap(),
                &v,
            )
            .expect("JWT signed with the App key")
            .claims;
            let now = Clock::now(&*c2).timestamp();
            assert_eq!(claims["iat"], now - 60);
            assert_eq!(claims["exp"], now + 540);
            let n = m2.fetch_add(1, Ordering::SeqCst) + 1;
            let inst = seen.uri.split('/').nth(5).unwrap().to_owned();
            let expires = (Clock::now(&*c2) + chrono::Duration::hours(1)).to_rfc3339();
            return respond(
                201,
                &json!({"token": format!("ghs_{inst}_{n}"), "expires_at": expires,
                        "permissions": {"checks": "write"}, "repository_selection": "all"}),
            );
        }
        respond(200, &repo_json)
    })
    .await;
    let creds = AppCredentials::new(777, &SecretString::from(TEST_KEY)).unwrap();
    let c =
        RestClient::for_app_with_clock(fast_config(server.api()), creds, clock.clone()).unwrap();

    let auth_of_last = |s: &Server| {
        s.requests()
            .last()
            .unwrap()
            .header("authorization")
            .unwrap()
            .to_owned()
    };
    c.get_repository(INST, &repo()).await.unwrap();
    c.get_repository(INST, &repo()).await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 1);
    assert_eq!(auth_of_last(&server), "Bearer ghs_42_1");

    // 54 minutes in: 6 minutes left, outside the 5-minute margin — still cached.
    clock.advance(chrono::Duration::minutes(54));
    c.get_repository(INST, &repo()).await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 1);
    // 56 minutes in: inside the margin — renewed.
    clock.advance(chrono::Duration::minutes(2));
    c.get_repository(INST, &repo()).await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 2);
    assert_eq!(auth_of_last(&server), "Bearer ghs_42_2");

    // Another installation has its own token; concurrent first calls mint once.
    let r = repo();
    let calls = (0..8).map(|_| c.get_repository(InstallationId(9), &r));
    for r in futures::future::join_all(calls).await {
        r.unwrap();
    }
    assert_eq!(mints.load(Ordering::SeqCst), 3);
    assert_eq!(auth_of_last(&server), "Bearer ghs_9_3");
}

#[tokio::test]
async fn a_rejected_token_is_dropped_and_reminted_once() {
    let dir = require_shared!();
    let repo_json = example(&dir, "pull-request")["base"]["repo"].clone();
    let mints = Arc::new(AtomicUsize::new(0));
    let m2 = mints.clone();
    let server = serve(move |seen, _| {
        if seen.uri.contains("/access_tokens") {
            let n = m2.fetch_add(1, Ordering::SeqCst) + 1;
            return respond(
                201,
                &json!({"token": format!("ghs_{n}"), "expires_at": "2999-01-01T00:00:00Z"}),
            );
        }
        if seen.header("authorization") == Some("Bearer ghs_1") {
            return respond(401, &json!({"message": "Bad credentials"}));
        }
        respond(200, &repo_json)
    })
    .await;
    let creds = AppCredentials::new(777, &SecretString::from(TEST_KEY)).unwrap();
    let c = RestClient::for_app(fast_config(server.api()), creds).unwrap();
    c.get_repository(INST, &repo()).await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn manifest_conversion_is_unauthenticated_and_keeps_secrets_secret() {
    let server = serve(|_, _| {
        respond(
            201,
            &json!({"id": 1, "slug": "ci-medic-test", "node_id": "x", "name": "ci-medic test",
                    "html_url": "https://github.com/apps/ci-medic-test",
                    "owner": {"login": "octocat", "id": 1, "type": "User"},
                    "client_id": "Iv1.8a61f9b3a7aba766", "client_secret": "1726be1638095a19edd134c77bde3aa2ece1e5d8",
                    "webhook_secret": "e340154128314309424b7c8e90325147d99fdafa",
                    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAuEPzOUE+kiEH1WLiMeBytTEF856j0hOVcSUSUkZxKvqczkWM\n-----END RSA PRIVATE KEY-----\n"}),
        )
    })
    .await;
    let conv = client(&server)
        .convert_app_manifest("a180b1a3d263c81bc6441d7b990bae27d4c10679")
        .await
        .unwrap();
    assert_eq!(conv.id, 1);
    assert!(conv.pem.expose_secret().starts_with("-----BEGIN RSA"));
    let shown = format!("{conv:?}");
    assert!(
        !shown.contains("1726be16") && !shown.contains("MIIE"),
        "{shown}"
    );
    let req = &server.requests()[0];
    assert_eq!(req.method, Method::POST);
    assert_eq!(
        req.uri,
        "/api/v3/app-manifests/a180b1a3d263c81bc6441d7b990bae27d4c10679/conversions"
    );
    assert_eq!(req.header("authorization"), None);
}

// ---------------------------------------------------------------------------------------------
// logs and downloads

/// An API server whose logs/tarball endpoints 302 to `blob`, plus the blob host.
async fn redirecting_pair(blob_status: u16, blob_body: Vec<u8>) -> (Server, Server) {
    let blob_body = Arc::new(blob_body);
    let blob = serve(move |_, _| {
        // Chunked, without Content-Length, so the client's streaming cap is what stops it.
        let chunks: Vec<Result<Bytes, std::io::Error>> = blob_body
            .chunks(8192)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        Response::builder()
            .status(blob_status)
            .header("content-type", "text/plain")
            .body(Body::from_stream(futures::stream::iter(chunks)))
            .unwrap()
    })
    .await;
    let target = format!(
        "{}/serviceHosts/d560/_apis/pipelines/1/runs/5/signedlogcontent/5?urlExpires=2023-03-15T17%3A02%3A58.1305046Z&urlSigningMethod=HMACV1&urlSignature=abc",
        blob.origin.replace("127.0.0.1", "localhost")
    );
    let api = serve(move |_, _| {
        // The recorded 302: empty body, an irrelevant text/html content type.
        Response::builder()
            .status(302)
            .header("content-type", "text/html;charset=utf-8")
            .header("content-length", "0")
            .header("location", &target)
            .body(Body::empty())
            .unwrap()
    })
    .await;
    (api, blob)
}

#[tokio::test]
async fn actions_logs_follow_the_302_without_authorization() {
    let dir = require_shared!();
    let log =
        std::fs::read(dir.join("job-logs/pdfdown/napi-build-wasm32-wasip1-threads.log")).unwrap();
    let (api, blob) = redirecting_pair(200, log.clone()).await;
    let fetched = fetch_log(
        &client(&api),
        INST,
        &repo(),
        LogSource::ActionsJob {
            job_id: 11421878319,
        },
        LogLimits::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(fetched.bytes, log);
    assert!(!fetched.truncated() && !fetched.binary);
    let first = &api.requests()[0];
    assert_eq!(
        first.uri,
        "/api/v3/repos/octocat/Hello-World/actions/jobs/11421878319/logs"
    );
    assert_api_headers(first);
    let hop = &blob.requests()[0];
    assert!(hop.uri.starts_with("/serviceHosts/d560/") && hop.uri.contains("urlSignature=abc"));
    assert_eq!(
        hop.header("authorization"),
        None,
        "no token to the log host"
    );
}

#[tokio::test]
async fn expired_and_missing_logs_are_typed_and_not_retried() {
    for (status, want_expired) in [(410u16, true), (404, false)] {
        let server = serve(move |_, _| respond(status, &json!({"message": "gone"}))).await;
        let err = fetch_log(
            &client(&server),
            INST,
            &repo(),
            LogSource::ActionsJob { job_id: 1 },
            LogLimits::default(),
            None,
        )
        .await
        .unwrap_err();
        if want_expired {
            assert!(matches!(err, LogError::Expired), "{err:?}");
        } else {
            assert!(matches!(err, LogError::NotFound), "{err:?}");
        }
        assert_eq!(server.count(), 1);
    }
    // The signed URL itself can be gone too.
    let (api, blob) = redirecting_pair(410, b"expired".to_vec()).await;
    let err = fetch_log(
        &client(&api),
        INST,
        &repo(),
        LogSource::ActionsJob { job_id: 1 },
        LogLimits::default(),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LogError::Expired), "{err:?}");
    assert_eq!(blob.count(), 1);
}

#[tokio::test]
async fn big_logs_are_capped_to_head_and_tail_and_huge_ones_refused() {
    let log: Vec<u8> = (0..200_000)
        .flat_map(|i| format!("2025-04-16T14:48:29.1234567Z line {i:06}\n").into_bytes())
        .collect();
    let (api, _blob) = redirecting_pair(200, log.clone()).await;
    let limits = LogLimits {
        cap_bytes: 64 << 10,
        head_bytes: 16 << 10,
        max_download_bytes: 64 << 20,
    };
    let c = client(&api);
    // The tee gets every byte, in order, while only the capped excerpt is kept.
    let (tee, mut teed) = tokio::sync::mpsc::channel::<bytes::Bytes>(4);
    let collect = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(chunk) = teed.recv().await {
            all.extend_from_slice(&chunk);
        }
        all
    });
    let f = fetch_log(
        &c,
        INST,
        &repo(),
        LogSource::ActionsJob { job_id: 1 },
        limits,
        Some(&tee),
    )
    .await
    .unwrap();
    drop(tee);
    assert!(
        collect.await.unwrap() == log,
        "the tee lost or reordered bytes"
    );
    assert!(f.truncated());
    assert_eq!(f.total_bytes, log.len() as u64);
    assert!(f.bytes.len() <= (64 << 10) + 128);
    let text = String::from_utf8(f.bytes).unwrap();
    assert!(text.starts_with("2025-04-16T14:48:29.1234567Z line 000000\n"));
    assert!(text.ends_with("line 199999\n"));
    assert!(text.contains("bytes of this"));

    let small_ceiling = LogLimits {
        max_download_bytes: 1 << 20,
        ..limits
    };
    let err = fetch_log(
        &c,
        INST,
        &repo(),
        LogSource::ActionsJob { job_id: 1 },
        small_ceiling,
        None,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, LogError::TooLarge { limit } if limit == 1 << 20),
        "{err:?}"
    );
}

#[tokio::test]
async fn other_ci_logs_come_from_check_run_output_and_annotations() {
    let dir = require_shared!();
    let run = example(&dir, "check-run");
    let anns = example(&dir, "check-annotation-items");
    let server = serve(move |seen, _| {
        if seen.uri.contains("/annotations") {
            respond(200, &anns)
        } else {
            respond(200, &run)
        }
    })
    .await;
    let c = client(&server);
    let run = c.get_check_run(INST, &repo(), 4).await.unwrap();
    let source = LogSource::detect(&run);
    assert_eq!(source, LogSource::CheckRunOutput { check_run_id: 4 });
    let f = fetch_log(&c, INST, &repo(), source, LogLimits::default(), None)
        .await
        .unwrap();
    let text = String::from_utf8(f.bytes).unwrap();
    assert!(
        text.starts_with("Mighty Readme report\nThere are 0 failures"),
        "{text}"
    );
    assert!(
        text.contains(
            "README.md:2:5: warning: Check your spelling for 'banaas'. [Spell Checker]\n    Do you mean 'bananas' or 'banana'?\n"
        ),
        "{text}"
    );
    assert_eq!(
        server.requests()[2].uri,
        "/api/v3/repos/octocat/Hello-World/check-runs/4/annotations?per_page=100"
    );
}

#[tokio::test]
async fn tarball_is_saved_via_unauthenticated_redirect_and_capped() {
    let body: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let (api, blob) = redirecting_pair(200, body.clone()).await;
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("src.tar.gz");
    let c = client(&api);
    let n = c
        .download_tarball(INST, &repo(), "abc123", &dest, 1 << 20)
        .await
        .unwrap();
    assert_eq!(n, body.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), body);
    assert_eq!(
        api.requests()[0].uri,
        "/api/v3/repos/octocat/Hello-World/tarball/abc123"
    );
    assert_eq!(blob.requests()[0].header("authorization"), None);

    let partial = tmp.path().join("partial.tar.gz");
    let err = c
        .download_tarball(INST, &repo(), "abc123", &partial, 100_000)
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitHubError::TooLarge { limit: 100_000 }),
        "{err:?}"
    );
    assert!(!partial.exists(), "a partial archive is removed");
}

#[tokio::test]
async fn pr_files_and_prs_for_a_commit_are_paginated_lists() {
    let dir = require_shared!();
    let prs = example(&dir, "pull-request-simple-items");
    let origin = Arc::new(Mutex::new(String::new()));
    let o = origin.clone();
    let server = serve(move |seen, _| {
        if seen.uri.contains("/commits/") {
            return respond(200, &prs);
        }
        // Field names as GitHub's `diff-entry` schema spells them.
        let file = |name: &str| {
            json!({"sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": name,
                   "status": "modified", "additions": 103, "deletions": 21, "changes": 124,
                   "blob_url": "https://github.com/octocat/Hello-World/blob/6dcb09b/file1.txt",
                   "raw_url": "https://github.com/octocat/Hello-World/raw/6dcb09b/file1.txt",
                   "contents_url": "https://api.github.com/repos/octocat/Hello-World/contents/file1.txt?ref=6dcb09b",
                   "patch": "@@ -132,7 +132,7 @@ module Test @@ -1000,7 +1000,7 @@ module Test"})
        };
        if seen.uri.contains("page=2") {
            respond(200, &json!([file("src/b.rs")]))
        } else {
            let next = format!(
                "<{}/api/v3/repositories/1296269/pulls/1347/files?per_page=100&page=2>; rel=\"next\"",
                o.lock().unwrap()
            );
            respond_with(200, &[("link", &next)], &json!([file("src/a.rs")]))
        }
    })
    .await;
    *origin.lock().unwrap() = server.origin.clone();
    let c = client(&server);
    let files = c
        .list_pull_request_files(INST, &repo(), 1347)
        .await
        .unwrap();
    assert_eq!(
        files
            .iter()
            .map(|f| f.filename.as_str())
            .collect::<Vec<_>>(),
        ["src/a.rs", "src/b.rs"]
    );
    let prs = c
        .list_pull_requests_for_commit(INST, &repo(), "6dcb09b5b57875f334f61aebed695e2e4193db5e")
        .await
        .unwrap();
    assert_eq!(prs[0].number, 1347);
    let uris: Vec<_> = server.requests().into_iter().map(|r| r.uri).collect();
    assert_eq!(
        uris,
        [
            "/api/v3/repos/octocat/Hello-World/pulls/1347/files?per_page=100",
            "/api/v3/repositories/1296269/pulls/1347/files?per_page=100&page=2",
            "/api/v3/repos/octocat/Hello-World/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e/pulls?per_page=100",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// publishing (src/comment.rs) against the stateful fake GitHub

const FAKE_REPO: &str = "octo-org/shop";

/// The fake with `octo-org/shop`, pull request #7 from `feature`, and a client holding an
/// installation token for it. Returns the PR head sha too.
async fn fake_with_pull_request() -> (fake_github::FakeGitHub, RestClient, String) {
    let fake = fake_github::FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let base = fake.add_repo("octo-org", "shop", "main", &[("app/main.py", "x = 1\n")]);
    let head = fake
        .commit_files(
            FAKE_REPO,
            "feature",
            Some(&base),
            &[("app/main.py", "import os\nx = 1\n")],
            "Use os",
        )
        .unwrap();
    fake.open_pull_request(fake_github::NewPullRequest {
        repo: FAKE_REPO,
        number: 7,
        head_branch: "feature",
        head_repo: FAKE_REPO,
        base: "main",
        author_login: "contributor",
        title: "Use os",
        maintainer_can_modify: true,
    })
    .unwrap();
    let token = fake.issue_installation_token(1);
    let c = RestClient::with_token_provider(
        fast_config(fake.base_url()),
        Arc::new(StaticToken(SecretString::from(token))),
    )
    .unwrap();
    (fake, c, head)
}

fn fake_repo() -> RepoRef {
    RepoRef::parse(FAKE_REPO).unwrap()
}

fn proposal_view(check: &str, head: &str) -> CommentView {
    CommentView {
        check_name: check.into(),
        head_sha: head.into(),
        pr_number: 7,
        dds_id: "DDS-FIX-20260101-001".into(),
        status: ProposalStatusView::Proposed,
        report_lines: vec!["app/main.py:1:8 LINTING F401 `os` imported but unused (ruff)".into()],
        reports_left_out: 0,
        fix_packet_json: Value::Null,
        dds_json: Value::Null,
        out_of_scope_files: vec![],
        history: vec![],
        log_excerpt: None,
        triage: None,
    }
}

fn unused_import() -> BugReport {
    BugReport {
        file_path: "app/main.py".into(),
        line_number: 1,
        error_type: BugType::Linting,
        message: "`os` imported but unused".into(),
        test_name: None,
        confidence_score: 0.95,
        column: Some(8),
        tool: Some("ruff".into()),
        rule: Some("F401".into()),
    }
}

#[tokio::test]
async fn a_check_run_whose_create_answer_was_lost_is_found_among_older_runs() {
    let (fake, c, head) = fake_with_pull_request().await;
    let reports = [unused_import()];
    // Two failing checks on one commit: two ci-medic runs, told apart by external id.
    let mut ids = Vec::new();
    for check in ["lint", "typecheck"] {
        let id = publish_check_run(
            &c,
            INST,
            &fake_repo(),
            &head,
            &format!("{FAKE_REPO}#7:{check}"),
            None,
            &proposal_view(check, &head),
            &reports,
            None,
        )
        .await
        .unwrap();
        ids.push(id);
    }
    // The retried job for `lint` never stored its run id: it must find the older run, which
    // GitHub's default `filter=latest` hides behind the newer run of the same name.
    let again = publish_check_run(
        &c,
        INST,
        &fake_repo(),
        &head,
        &format!("{FAKE_REPO}#7:lint"),
        None,
        &proposal_view("lint", &head),
        &reports,
        None,
    )
    .await
    .unwrap();
    assert_eq!(again, ids[0]);
    let ours: Vec<_> = fake
        .check_runs(FAKE_REPO, &head)
        .into_iter()
        .filter(|r| r.name == "ci-medic")
        .collect();
    assert_eq!(ours.len(), 2, "no duplicate run");
    // Found again means refreshed without re-sending the annotations (GitHub appends them).
    assert_eq!(fake.annotations(ids[0]).len(), 1);

    // The latest-only listing, for callers that want the current verdict, is unchanged.
    let latest = c
        .list_check_runs_for_ref(INST, &fake_repo(), &head, Some("ci-medic"))
        .await
        .unwrap();
    assert_eq!(latest.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[1]]);
}

#[tokio::test]
async fn the_comment_found_by_marker_is_never_another_apps() {
    let (fake, c, head) = fake_with_pull_request().await;
    let marked = |text: &str| format!("{}\n{text}", marker("lint"));
    // The same marker from a workflow and from a second install of ci-medic (staging).
    let workflow = fake.add_app_comment(FAKE_REPO, 7, 15368, "github-actions", &marked("wf"));
    let staging = fake.add_app_comment(FAKE_REPO, 7, 4243, "ci-medic-staging", &marked("stg"));
    let body = render_comment(&proposal_view("lint", &head));
    let first = upsert_comment(&c, INST, &fake_repo(), 7, "lint", 4242, None, &body)
        .await
        .unwrap();
    assert!(first.id != workflow && first.id != staging);
    assert_eq!(
        first.performed_via_github_app.as_ref().and_then(|a| a.id),
        Some(4242)
    );
    // A retried job that lost the id finds its own comment again, and only that one.
    let edited = body.replace("DDS-FIX-20260101-001", "DDS-FIX-20260101-002");
    let again = upsert_comment(&c, INST, &fake_repo(), 7, "lint", 4242, None, &edited)
        .await
        .unwrap();
    assert_eq!(again.id, first.id);
    let comments = fake.comments(FAKE_REPO, 7);
    assert_eq!(comments.len(), 3);
    let text = |id: u64| comments.iter().find(|x| x.id == id).unwrap().body.clone();
    assert_eq!(text(workflow), marked("wf"));
    assert_eq!(text(staging), marked("stg"));
    assert_eq!(text(first.id), edited);
}

#[tokio::test]
async fn writes_of_one_installation_go_one_at_a_time_a_set_interval_apart() {
    let dir = require_shared!();
    let comment = example(&dir, "issue-comment");
    // Each answer takes 100 ms and says how much of the rate limit is left.
    let arrivals: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let log = arrivals.clone();
    let server = serve(move |seen, n| {
        log.lock()
            .unwrap()
            .push((Instant::now(), seen.method.to_string()));
        let left = (4999 - n).to_string();
        let body = if seen.method == Method::GET {
            json!([])
        } else {
            comment.clone()
        };
        respond_with(
            if seen.method == Method::POST {
                201
            } else {
                200
            },
            &[("x-test-delay-ms", "100"), ("x-ratelimit-remaining", &left)],
            &body,
        )
    })
    .await;
    let mut config = fast_config(server.api());
    config.write_interval = Duration::from_millis(300);
    let metrics = ci_medic::metrics::Metrics::new();
    let c =
        RestClient::with_token_provider(config, Arc::new(StaticToken(SecretString::from(TOKEN))))
            .unwrap()
            .with_metrics(metrics.clone());
    // Four writes of one installation at once, and a read beside them.
    let started = Instant::now();
    let writes = (0..4).map(|i| {
        let c = c.clone();
        async move {
            c.create_issue_comment(INST, &repo(), 1347, &format!("<!-- ci-medic -->\n{i}"))
                .await
                .unwrap()
        }
    });
    let r = repo();
    let read = c.list_issue_comments(INST, &r, 1347);
    let (_, read) = tokio::join!(futures::future::join_all(writes), read);
    read.unwrap();
    let seen = arrivals.lock().unwrap().clone();
    let posts: Vec<Instant> = seen
        .iter()
        .filter(|(_, m)| m == "POST")
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(posts.len(), 4);
    for pair in posts.windows(2) {
        // The previous answer took 100 ms, then 300 ms of spacing: never concurrent.
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(390), "writes {gap:?} apart");
    }
    // The read did not wait for the writes.
    let get = seen.iter().find(|(_, m)| m == "GET").unwrap().0;
    assert!(
        get - started < Duration::from_millis(300),
        "{:?}",
        get - started
    );
    eprintln!(
        "4 paced writes took {:?}; gaps {:?}",
        started.elapsed(),
        posts.windows(2).map(|p| p[1] - p[0]).collect::<Vec<_>>()
    );
    // Another installation does not wait for this one's turn.
    let other = Instant::now();
    c.create_issue_comment(InstallationId(7), &repo(), 1, "<!-- ci-medic -->\nx")
        .await
        .unwrap();
    assert!(other.elapsed() < Duration::from_millis(300));
    let text = metrics.render();
    assert!(
        text.contains("ci_medic_github_rate_limit_remaining{installation=\"42\"}"),
        "{text}"
    );
    assert!(
        text.contains("ci_medic_github_rate_limit_remaining{installation=\"7\"} 4994"),
        "{text}"
    );
}
