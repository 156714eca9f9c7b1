//! [`RestClient`]: the real [`GitHubApi`] over GitHub's REST API.
//!
//! # Why reqwest for every call, and not octocrab
//! octocrab is the chosen stack, and it was tried first (see `shared/github/octocrab-notes.md`).
//! Each call ci-medic makes hits at least one of its gaps, so every call goes through one
//! reqwest path (`http.rs`) that gives all of them the same auth, retry and error rules:
//!
//! | calls | what octocrab gets wrong for us |
//! |---|---|
//! | every list (PR files, comments, check runs, annotations) | follows absolute `Link` URLs without the token on non-github.com hosts (GHES, test servers) → 401 |
//! | every call | its retry policy ignores 403 secondary rate limits with `Retry-After`, and has no total-wait bound |
//! | create comment / check run / ref, annotations | we must not repeat them after a timeout or a 5xx: they may have landed |
//! | collaborator permission | its typed enum fails on the real `permission` values |
//! | update comment | sends POST instead of PATCH |
//! | job logs, tarball | we stream with a byte cap and need typed 404/410 from the redirect host |
//!
//! Must never: send the token to a non-API origin (the downloads follow their redirect to the
//! log or codeload host unauthenticated), force a ref update, or send more than 50 annotations
//! in one request.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use futures::StreamExt as _;
use reqwest::header::{CONTENT_LENGTH, LOCATION};
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::io::AsyncWriteExt as _;

use super::app_auth::{AppCredentials, Clock, InstallationTokens, SystemClock, TokenProvider};
use super::error::{GitHubError, Result};
use super::http::{Auth, Call, GitHubClientConfig, Transport, decode_json, without_url};
use super::models::*;
use super::{ByteStream, GitHubApi, InstallationId, RepoRef};

/// GitHub's per-request annotation limit.
pub const MAX_ANNOTATIONS_PER_REQUEST: usize = 50;
/// GitHub's limit on `output.summary` and `output.text`, in characters.
pub const MAX_OUTPUT_CHARS: usize = 65_535;
/// GitHub's limit on a comment body, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;

/// The real GitHub client. Cheap to clone; clones share the connection pool and token cache.
#[derive(Debug, Clone)]
pub struct RestClient {
    pub(super) http: Arc<Transport>,
    tokens: Arc<dyn TokenProvider>,
    pub(super) pacer: Arc<WritePacer>,
    /// The App's own identity, for the calls made as the App (its webhook delivery log);
    /// `None` for a client given tokens only.
    pub(super) app: Option<(AppCredentials, Arc<dyn Clock>)>,
    /// `x-ratelimit-remaining` per installation, when the client reports to metrics.
    rate_remaining: Option<RateGauge>,
}

/// The metrics the client reports to (a newtype: `Metrics` has no `Debug`).
#[derive(Clone)]
struct RateGauge(crate::metrics::Metrics);

impl std::fmt::Debug for RateGauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RateGauge")
    }
}

/// Serialises one installation's writes and spaces them `interval` apart. GitHub asks for no
/// concurrent content-creating requests and about a second between them; reads are not paced.
#[derive(Debug)]
pub(super) struct WritePacer {
    interval: std::time::Duration,
    /// Per installation: when its last write finished.
    last: std::sync::Mutex<
        std::collections::HashMap<
            InstallationId,
            Arc<tokio::sync::Mutex<Option<tokio::time::Instant>>>,
        >,
    >,
}

impl WritePacer {
    fn new(interval: std::time::Duration) -> Self {
        WritePacer {
            interval,
            last: Default::default(),
        }
    }

    /// Waits for this installation's turn; the guard is the turn, held until the write ends.
    pub(super) async fn turn(
        &self,
        inst: InstallationId,
    ) -> tokio::sync::OwnedMutexGuard<Option<tokio::time::Instant>> {
        let slot = self
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(inst)
            .or_default()
            .clone();
        let guard = slot.lock_owned().await;
        if let Some(at) = *guard {
            tokio::time::sleep_until(at + self.interval).await;
        }
        guard
    }
}

impl RestClient {
    /// A client authenticating as a GitHub App (`app_id` + private key), minting and caching
    /// installation tokens against `config.api_url`.
    pub fn for_app(config: GitHubClientConfig, credentials: AppCredentials) -> Result<Self> {
        Self::for_app_with_clock(config, credentials, Arc::new(SystemClock))
    }

    /// [`Self::for_app`] with an injected clock (tests drive token expiry with it).
    pub fn for_app_with_clock(
        config: GitHubClientConfig,
        credentials: AppCredentials,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        let pacer = Arc::new(WritePacer::new(config.write_interval));
        let http = Arc::new(Transport::new(config)?);
        let tokens = Arc::new(InstallationTokens::new(
            credentials.clone(),
            http.clone(),
            clock.clone(),
        ));
        Ok(Self {
            http,
            tokens,
            pacer,
            app: Some((credentials, clock)),
            rate_remaining: None,
        })
    }

    /// A client taking its tokens from `tokens` (e.g. [`super::StaticToken`]).
    pub fn with_token_provider(
        config: GitHubClientConfig,
        tokens: Arc<dyn TokenProvider>,
    ) -> Result<Self> {
        Ok(Self {
            pacer: Arc::new(WritePacer::new(config.write_interval)),
            http: Arc::new(Transport::new(config)?),
            tokens,
            app: None,
            rate_remaining: None,
        })
    }

    /// Reports each installation's remaining rate limit (`x-ratelimit-remaining` of its last
    /// answer) as `ci_medic_github_rate_limit_remaining{installation}`.
    pub fn with_metrics(mut self, metrics: crate::metrics::Metrics) -> Self {
        self.rate_remaining = Some(RateGauge(metrics));
        self
    }

    fn repo_url(&self, repo: &RepoRef, rest: &[&str]) -> Result<Url> {
        let mut parts = vec!["repos", repo.owner.as_str(), repo.name.as_str()];
        parts.extend_from_slice(rest);
        self.http.url(&parts)
    }

    /// Runs `call` as the installation; on 401 the cached token is dropped and the call made
    /// once more with a fresh one (tokens can be revoked before `expires_at`).
    /// Writes wait for the installation's turn ([`WritePacer`]).
    async fn send(&self, inst: InstallationId, call: &Call<'_>) -> Result<reqwest::Response> {
        let mut turn = if matches!(call.method, Method::GET | Method::HEAD) {
            None
        } else {
            Some(self.pacer.turn(inst).await)
        };
        let token = self.tokens.installation_token(inst).await?;
        let result = match self.http.execute(call, Auth::Bearer(&token)).await {
            Err(GitHubError::Unauthorized { .. }) => {
                self.tokens.invalidate(inst).await;
                let token = self.tokens.installation_token(inst).await?;
                self.http.execute(call, Auth::Bearer(&token)).await
            }
            other => other,
        };
        if let Some(turn) = turn.as_mut() {
            **turn = Some(tokio::time::Instant::now());
        }
        if let (Some(metrics), Ok(resp)) = (&self.rate_remaining, &result)
            && let Some(left) = resp
                .headers()
                .get("x-ratelimit-remaining")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<i64>().ok())
        {
            metrics.0.github_rate_limit_remaining(inst.0, left);
        }
        result
    }

    /// A conditional `GET` (`etag`): a repeated read of an unchanged object costs GitHub a
    /// 304, which does not count against the rate limit.
    async fn get<T: DeserializeOwned>(&self, inst: InstallationId, url: Url) -> Result<T> {
        let fetched = self
            .http
            .etags
            .get(&url, |tag| {
                let mut call = self.http.json_call(Method::GET, url.clone(), None);
                call.if_none_match = tag;
                async move { self.send(inst, &call).await }
            })
            .await?;
        serde_json::from_slice(&fetched.body).map_err(|e| GitHubError::Decode(e.to_string()))
    }

    async fn write<T: DeserializeOwned>(
        &self,
        inst: InstallationId,
        method: Method,
        url: Url,
        body: &serde_json::Value,
        idempotent: bool,
    ) -> Result<T> {
        let mut call = self.http.json_call(method, url, Some(body));
        call.idempotent = idempotent;
        decode_json(self.send(inst, &call).await?).await
    }

    async fn paginate<T: DeserializeOwned>(
        &self,
        inst: InstallationId,
        mut url: Url,
        field: Option<&str>,
    ) -> Result<Vec<T>> {
        url.query_pairs_mut().append_pair("per_page", "100");
        let token = self.tokens.installation_token(inst).await?;
        match self
            .http
            .paginate(url.clone(), field, Auth::Bearer(&token))
            .await
        {
            Err(GitHubError::Unauthorized { .. }) => {
                self.tokens.invalidate(inst).await;
                let token = self.tokens.installation_token(inst).await?;
                self.http.paginate(url, field, Auth::Bearer(&token)).await
            }
            other => other,
        }
    }

    /// GETs `url` as the installation and, when GitHub answers with a redirect the transport
    /// did not follow itself (the 302 to a pre-signed log / codeload URL; a 301 of a renamed
    /// repository was already followed, with the token, on the API origin), GETs the
    /// `Location` without any `Authorization`: the token must not leave the API host. Returns
    /// the response of the final hop, checked for size.
    async fn download(
        &self,
        inst: InstallationId,
        url: Url,
        max_bytes: u64,
    ) -> Result<reqwest::Response> {
        let mut call = self.http.json_call(Method::GET, url, None);
        call.timeout = self.http.config.download_timeout;
        let first = self.send(inst, &call).await?;
        let resp = if first.status().is_redirection() {
            let location = first
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| GitHubError::Decode("redirect without Location".into()))?;
            let target = first
                .url()
                .join(location)
                .map_err(|e| GitHubError::Decode(format!("bad redirect Location: {e}")))?;
            let hop = Call {
                method: Method::GET,
                url: target,
                body: None,
                idempotent: true,
                timeout: self.http.config.download_timeout,
                if_none_match: None,
            };
            let resp = self.http.execute(&hop, Auth::None).await?;
            if resp.status().is_redirection() {
                return Err(GitHubError::UnexpectedStatus {
                    status: resp.status().as_u16(),
                    message: "more than one redirect".into(),
                });
            }
            resp
        } else {
            first
        };
        let declared = resp
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > max_bytes) {
            return Err(GitHubError::TooLarge { limit: max_bytes });
        }
        Ok(resp)
    }

    /// `GET /commits/{ref}/check-runs`; `all` sends `filter=all`, otherwise GitHub's default
    /// (`latest`) applies.
    async fn check_runs_for_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        check_name: Option<&str>,
        all: bool,
    ) -> Result<Vec<CheckRun>> {
        let mut url = self.repo_url(repo, &["commits", git_ref, "check-runs"])?;
        if let Some(name) = check_name {
            url.query_pairs_mut().append_pair("check_name", name);
        }
        if all {
            url.query_pairs_mut().append_pair("filter", "all");
        }
        self.paginate(inst, url, Some("check_runs")).await
    }
}

/// Wraps a response body into a [`ByteStream`] that fails once more than `max_bytes` arrive.
fn capped_stream(resp: reqwest::Response, max_bytes: u64) -> ByteStream {
    let mut seen = 0u64;
    let mut over = false;
    resp.bytes_stream()
        .map(move |chunk| {
            let chunk = chunk.map_err(|e| GitHubError::Transport {
                message: without_url(&e),
                may_have_landed: false,
            })?;
            seen += chunk.len() as u64;
            if seen > max_bytes {
                over = true;
            }
            if over {
                return Err(GitHubError::TooLarge { limit: max_bytes });
            }
            Ok(chunk)
        })
        // Stop after the first error so a consumer never sees bytes past the limit.
        .scan(false, |done, item| {
            if *done {
                return futures::future::ready(None);
            }
            *done = item.is_err();
            futures::future::ready(Some(item))
        })
        .boxed()
}

fn check_output(output: Option<&CheckRunOutputRequest>) -> Result<()> {
    let Some(output) = output else {
        return Ok(());
    };
    if output.annotations.len() > MAX_ANNOTATIONS_PER_REQUEST {
        return Err(GitHubError::InvalidRequest(format!(
            "{} annotations in one request; GitHub takes at most {MAX_ANNOTATIONS_PER_REQUEST}",
            output.annotations.len()
        )));
    }
    let too_long = |s: &str| s.chars().count() > MAX_OUTPUT_CHARS;
    if too_long(&output.summary) || output.text.as_deref().is_some_and(too_long) {
        return Err(GitHubError::InvalidRequest(format!(
            "check run summary/text over {MAX_OUTPUT_CHARS} characters"
        )));
    }
    Ok(())
}

fn check_comment(body: &str) -> Result<()> {
    if body.chars().count() > MAX_COMMENT_CHARS {
        return Err(GitHubError::InvalidRequest(format!(
            "comment body over {MAX_COMMENT_CHARS} characters"
        )));
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| GitHubError::InvalidRequest(e.to_string()))
}

/// The contents API's answer for a path (only files are accepted).
#[derive(Deserialize)]
struct ContentEntry {
    #[serde(rename = "type")]
    kind: String,
    path: String,
    sha: String,
    size: u64,
    #[serde(default)]
    encoding: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Blob {
    content: String,
    encoding: String,
}

fn decode_base64(text: &str) -> Result<Vec<u8>> {
    // GitHub wraps base64 at 60 columns.
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| GitHubError::Decode(format!("bad base64 content: {e}")))
}

#[async_trait]
impl GitHubApi for RestClient {
    async fn get_pull_request(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        number: u64,
    ) -> Result<PullRequest> {
        let url = self.repo_url(repo, &["pulls", &number.to_string()])?;
        self.get(inst, url).await
    }

    async fn list_pull_requests_for_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        sha: &str,
    ) -> Result<Vec<PullRequest>> {
        let url = self.repo_url(repo, &["commits", sha, "pulls"])?;
        self.paginate(inst, url, None).await
    }

    async fn list_pull_requests_for_head(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        head_owner: &str,
        head_branch: &str,
    ) -> Result<Vec<PullRequest>> {
        let mut url = self.repo_url(repo, &["pulls"])?;
        url.query_pairs_mut()
            .append_pair("head", &format!("{head_owner}:{head_branch}"))
            .append_pair("state", "open");
        self.paginate(inst, url, None).await
    }

    async fn list_pull_request_files(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        number: u64,
    ) -> Result<Vec<PullRequestFile>> {
        let url = self.repo_url(repo, &["pulls", &number.to_string(), "files"])?;
        self.paginate(inst, url, None).await
    }

    async fn get_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
    ) -> Result<CheckRun> {
        let url = self.repo_url(repo, &["check-runs", &check_run_id.to_string()])?;
        self.get(inst, url).await
    }

    async fn list_check_runs_for_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        check_name: Option<&str>,
    ) -> Result<Vec<CheckRun>> {
        self.check_runs_for_ref(inst, repo, git_ref, check_name, false)
            .await
    }

    async fn list_all_check_runs_for_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        check_name: Option<&str>,
    ) -> Result<Vec<CheckRun>> {
        self.check_runs_for_ref(inst, repo, git_ref, check_name, true)
            .await
    }

    async fn create_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        request: &CreateCheckRun,
    ) -> Result<CheckRun> {
        check_output(request.output.as_ref())?;
        let url = self.repo_url(repo, &["check-runs"])?;
        self.write(inst, Method::POST, url, &to_json(request)?, false)
            .await
    }

    async fn update_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
        request: &UpdateCheckRun,
    ) -> Result<CheckRun> {
        check_output(request.output.as_ref())?;
        let url = self.repo_url(repo, &["check-runs", &check_run_id.to_string()])?;
        // Not idempotent when it carries annotations: GitHub appends them on every update.
        let idempotent = request
            .output
            .as_ref()
            .is_none_or(|o| o.annotations.is_empty());
        self.write(inst, Method::PATCH, url, &to_json(request)?, idempotent)
            .await
    }

    async fn list_check_run_annotations(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
    ) -> Result<Vec<CheckAnnotation>> {
        let url = self.repo_url(
            repo,
            &["check-runs", &check_run_id.to_string(), "annotations"],
        )?;
        self.paginate(inst, url, None).await
    }

    async fn download_job_logs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        job_id: u64,
        max_bytes: u64,
    ) -> Result<ByteStream> {
        let url = self.repo_url(repo, &["actions", "jobs", &job_id.to_string(), "logs"])?;
        let resp = self.download(inst, url, max_bytes).await?;
        Ok(capped_stream(resp, max_bytes))
    }

    async fn get_workflow_job(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        job_id: u64,
    ) -> Result<WorkflowJob> {
        let url = self.repo_url(repo, &["actions", "jobs", &job_id.to_string()])?;
        self.get(inst, url).await
    }

    async fn list_workflow_run_jobs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        run_id: u64,
    ) -> Result<Vec<WorkflowJob>> {
        let mut url = self.repo_url(repo, &["actions", "runs", &run_id.to_string(), "jobs"])?;
        url.query_pairs_mut().append_pair("filter", "all");
        self.paginate(inst, url, Some("jobs")).await
    }

    async fn rerun_failed_jobs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        run_id: u64,
    ) -> Result<()> {
        let url = self.repo_url(
            repo,
            &["actions", "runs", &run_id.to_string(), "rerun-failed-jobs"],
        )?;
        let _: serde_json::Value = self
            .write(inst, Method::POST, url, &json!({}), false)
            .await?;
        Ok(())
    }

    async fn list_issue_comments(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        issue_number: u64,
    ) -> Result<Vec<IssueComment>> {
        let url = self.repo_url(repo, &["issues", &issue_number.to_string(), "comments"])?;
        self.paginate(inst, url, None).await
    }

    async fn create_issue_comment(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        issue_number: u64,
        body: &str,
    ) -> Result<IssueComment> {
        check_comment(body)?;
        let url = self.repo_url(repo, &["issues", &issue_number.to_string(), "comments"])?;
        self.write(inst, Method::POST, url, &json!({ "body": body }), false)
            .await
    }

    async fn update_issue_comment(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        comment_id: u64,
        body: &str,
    ) -> Result<IssueComment> {
        check_comment(body)?;
        let url = self.repo_url(repo, &["issues", "comments", &comment_id.to_string()])?;
        self.write(inst, Method::PATCH, url, &json!({ "body": body }), true)
            .await
    }

    async fn create_issue_comment_reaction(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        comment_id: u64,
        content: ReactionContent,
    ) -> Result<ReactionOutcome> {
        let url = self.repo_url(
            repo,
            &["issues", "comments", &comment_id.to_string(), "reactions"],
        )?;
        let body = json!({ "content": content });
        let mut call = self.http.json_call(Method::POST, url, Some(&body));
        // GitHub dedupes reactions per user and content (200 "already exists").
        call.idempotent = true;
        let resp = self.send(inst, &call).await?;
        let created = resp.status() == StatusCode::CREATED;
        Ok(ReactionOutcome {
            reaction: decode_json(resp).await?,
            created,
        })
    }

    async fn get_collaborator_permission(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        username: &str,
    ) -> Result<CollaboratorPermission> {
        let url = self.repo_url(repo, &["collaborators", username, "permission"])?;
        self.get(inst, url).await
    }

    async fn get_file_content(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>> {
        let mut url = self.repo_url(repo, &["contents", path])?;
        if !git_ref.is_empty() {
            url.query_pairs_mut().append_pair("ref", git_ref);
        }
        let value: serde_json::Value = match self.get(inst, url).await {
            Ok(v) => v,
            Err(GitHubError::NotFound) => return Ok(None),
            Err(e) => return Err(e),
        };
        if value.is_array() {
            return Err(GitHubError::InvalidRequest(format!(
                "{path} is a directory, not a file"
            )));
        }
        let entry: ContentEntry =
            serde_json::from_value(value).map_err(|e| GitHubError::Decode(e.to_string()))?;
        if entry.kind != "file" {
            return Err(GitHubError::InvalidRequest(format!(
                "{path} is a {}, not a file",
                entry.kind
            )));
        }
        let content = match (entry.encoding.as_deref(), entry.content.as_deref()) {
            (Some("base64"), Some(text)) => decode_base64(text)?,
            // Files between 1 and 100 MB come with `encoding: none`: read the blob instead.
            _ => {
                let url = self.repo_url(repo, &["git", "blobs", &entry.sha])?;
                let blob: Blob = self.get(inst, url).await?;
                if blob.encoding != "base64" {
                    return Err(GitHubError::Decode(format!(
                        "blob encoding {:?}",
                        blob.encoding
                    )));
                }
                decode_base64(&blob.content)?
            }
        };
        Ok(Some(FileContent {
            path: entry.path,
            sha: entry.sha,
            size: entry.size,
            content,
        }))
    }

    async fn get_git_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
    ) -> Result<GitRef> {
        let git_ref = git_ref.strip_prefix("refs/").unwrap_or(git_ref);
        let url = self.repo_url(repo, &["git", "ref", git_ref])?;
        self.get(inst, url).await
    }

    async fn get_git_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        sha: &str,
    ) -> Result<GitCommit> {
        let url = self.repo_url(repo, &["git", "commits", sha])?;
        self.get(inst, url).await
    }

    async fn get_git_tree(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        tree_sha: &str,
    ) -> Result<GitTreeListing> {
        let url = self.repo_url(repo, &["git", "trees", tree_sha])?;
        self.get(inst, url).await
    }

    async fn get_git_tree_recursive(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        tree_sha: &str,
    ) -> Result<GitTreeListing> {
        let mut url = self.repo_url(repo, &["git", "trees", tree_sha])?;
        url.query_pairs_mut().append_pair("recursive", "1");
        self.get(inst, url).await
    }

    async fn create_blob(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        content: &[u8],
    ) -> Result<ShaOnly> {
        let url = self.repo_url(repo, &["git", "blobs"])?;
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode(content),
            "encoding": "base64",
        });
        // Git objects are content-addressed: creating one twice yields the same sha.
        self.write(inst, Method::POST, url, &body, true).await
    }

    async fn create_tree(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        base_tree: &str,
        entries: &[TreeEntry],
    ) -> Result<GitTree> {
        let url = self.repo_url(repo, &["git", "trees"])?;
        let body = json!({ "base_tree": base_tree, "tree": to_json(&entries)? });
        self.write(inst, Method::POST, url, &body, true).await
    }

    async fn create_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        request: &CreateCommit,
    ) -> Result<GitCommit> {
        let url = self.repo_url(repo, &["git", "commits"])?;
        // A duplicate commit nobody references is garbage, not a second push.
        self.write(inst, Method::POST, url, &to_json(request)?, true)
            .await
    }

    async fn update_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        sha: &str,
    ) -> Result<GitRef> {
        let git_ref = git_ref.strip_prefix("refs/").unwrap_or(git_ref);
        let url = self.repo_url(repo, &["git", "refs", git_ref])?;
        let body = json!({ "sha": sha, "force": false });
        self.write(inst, Method::PATCH, url, &body, true).await
    }

    async fn create_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        sha: &str,
    ) -> Result<GitRef> {
        if !git_ref.starts_with("refs/") {
            return Err(GitHubError::InvalidRequest(format!(
                "create_ref needs a fully qualified ref, got {git_ref:?}"
            )));
        }
        let url = self.repo_url(repo, &["git", "refs"])?;
        let body = json!({ "ref": git_ref, "sha": sha });
        // Not retried after a possibly-landed failure: a retry that finds its own ref would
        // answer 422 "Reference already exists" and hide the success. The caller re-reads it.
        self.write(inst, Method::POST, url, &body, false).await
    }

    async fn get_repository(&self, inst: InstallationId, repo: &RepoRef) -> Result<Repository> {
        let url = self.repo_url(repo, &[])?;
        self.get(inst, url).await
    }

    async fn download_tarball(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        dest: &Path,
        max_bytes: u64,
    ) -> Result<u64> {
        let url = self.repo_url(repo, &["tarball", git_ref])?;
        let resp = self.download(inst, url, max_bytes).await?;
        let mut stream = capped_stream(resp, max_bytes);
        let write = async {
            let mut file = tokio::fs::File::create(dest).await?;
            let mut written = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                file.write_all(&chunk).await?;
                written += chunk.len() as u64;
            }
            file.flush().await?;
            file.sync_all().await?;
            Ok::<u64, GitHubError>(written)
        };
        match write.await {
            Ok(n) => Ok(n),
            Err(e) => {
                // A partial archive must not be mistaken for a complete one.
                let _ = tokio::fs::remove_file(dest).await;
                Err(e)
            }
        }
    }

    async fn convert_app_manifest(&self, code: &str) -> Result<AppManifestConversion> {
        let url = self.http.url(&["app-manifests", code, "conversions"])?;
        let call = self.http.json_call(Method::POST, url, None);
        self.http.json(&call, Auth::None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(n: usize, summary_len: usize) -> CheckRunOutputRequest {
        CheckRunOutputRequest {
            title: "t".into(),
            summary: "x".repeat(summary_len),
            text: None,
            annotations: (0..n)
                .map(|i| NewAnnotation {
                    path: "a.rs".into(),
                    start_line: i as u64 + 1,
                    end_line: i as u64 + 1,
                    start_column: None,
                    end_column: None,
                    annotation_level: AnnotationLevel::Failure,
                    message: "m".into(),
                    title: None,
                    raw_details: None,
                })
                .collect(),
        }
    }

    #[test]
    fn output_limits_are_enforced_before_sending() {
        assert!(check_output(Some(&output(50, 65_535))).is_ok());
        assert!(matches!(
            check_output(Some(&output(51, 1))),
            Err(GitHubError::InvalidRequest(_))
        ));
        assert!(check_output(Some(&output(0, 65_536))).is_err());
        assert!(check_comment(&"é".repeat(65_536)).is_ok());
        assert!(check_comment(&"é".repeat(65_537)).is_err());
    }

    #[test]
    fn base64_with_line_breaks_decodes() {
        assert_eq!(decode_base64("aGVs\nbG8=\n").unwrap(), b"hello");
        assert!(decode_base64("!!").is_err());
    }
}
