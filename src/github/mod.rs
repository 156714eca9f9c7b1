//! GitHub access for ci-medic: the narrow [`GitHubApi`] trait listing only the operations the
//! pipeline uses, its real implementation [`RestClient`], and GitHub App authentication
//! ([`app_auth`]).
//!
//! Everything else in the crate talks to GitHub through `&dyn GitHubApi`, so scenario tests can
//! swap in the stateful fake GitHub. Every call is keyed by the installation it runs as and the
//! repository it touches. The base URL always comes from configuration (`GITHUB_API_URL`), so
//! github.com, GitHub Enterprise Server (`https://ghe.example.com/api/v3`) and a loopback test
//! server all work.
//!
//! Must never: log or return tokens, keys or JWTs; force-push (`update_ref` always sends
//! `force: false`); send the `Authorization` header anywhere but the API's own origin.

pub mod app_auth;
pub mod app_hook;
pub mod client;
pub mod error;
mod etag;
mod http;
pub mod models;

use std::fmt;
use std::path::Path;
use std::pin::Pin;

use async_trait::async_trait;
use bytes::Bytes;
use futures::Stream;
use serde::{Deserialize, Serialize};

pub use app_auth::{
    AppCredentials, Clock, InstallationTokens, ManualClock, StaticToken, SystemClock, TokenProvider,
};
pub use client::RestClient;
pub use error::{GitHubError, Result};
pub use http::{API_VERSION, GitHubClientConfig, RetryPolicy, USER_AGENT};
pub use models::*;

/// A GitHub App installation id (from the webhook's `installation.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstallationId(pub u64);

impl fmt::Display for InstallationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A repository by `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RepoRef {
    pub owner: String,
    pub name: String,
}

impl RepoRef {
    pub fn new(owner: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            owner: owner.into(),
            name: name.into(),
        }
    }

    /// Parses `owner/name` (a `full_name`). Refuses empty parts and extra slashes.
    pub fn parse(full_name: &str) -> Option<Self> {
        let (owner, name) = full_name.split_once('/')?;
        let ok = |s: &str| !s.is_empty() && !s.contains('/') && s != "." && s != "..";
        (ok(owner) && ok(name)).then(|| Self::new(owner, name))
    }

    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// The bytes of a download, in order; an `Err` item ends it (transport failure, or
/// [`GitHubError::TooLarge`] once the byte limit passed to the call is exceeded).
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes>> + Send>>;

/// The GitHub operations ci-medic uses, and nothing more.
#[async_trait]
pub trait GitHubApi: Send + Sync {
    /// `GET /repos/{o}/{r}/pulls/{number}`.
    async fn get_pull_request(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        number: u64,
    ) -> Result<PullRequest>;

    /// `GET /repos/{o}/{r}/commits/{sha}/pulls`: PRs whose head is this commit (empty for a
    /// fork PR's head commit — use [`Self::list_pull_requests_for_head`] then).
    async fn list_pull_requests_for_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        sha: &str,
    ) -> Result<Vec<PullRequest>>;

    /// `GET /repos/{o}/{r}/pulls?head={owner:branch}&state=open`.
    async fn list_pull_requests_for_head(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        head_owner: &str,
        head_branch: &str,
    ) -> Result<Vec<PullRequest>>;

    /// `GET /repos/{o}/{r}/pulls/{number}/files`, every page.
    async fn list_pull_request_files(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        number: u64,
    ) -> Result<Vec<PullRequestFile>>;

    /// `GET /repos/{o}/{r}/check-runs/{id}`.
    async fn get_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
    ) -> Result<CheckRun>;

    /// `GET /repos/{o}/{r}/commits/{ref}/check-runs[?check_name=]`, every page, with GitHub's
    /// default `filter=latest`: only the newest run of each name — the current verdict. Older
    /// runs of the same name are left out; to find a run by `external_id` use
    /// [`Self::list_all_check_runs_for_ref`].
    async fn list_check_runs_for_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        check_name: Option<&str>,
    ) -> Result<Vec<CheckRun>>;

    /// The same list with `filter=all`: every run on the commit, older runs of the same name
    /// included (a commit with two failing checks has two `ci-medic` runs).
    async fn list_all_check_runs_for_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        check_name: Option<&str>,
    ) -> Result<Vec<CheckRun>>;

    /// `POST /repos/{o}/{r}/check-runs`. Not retried after a possibly-landed failure
    /// (`Transport { may_have_landed: true }` or a 5xx): look it up by `external_id` first.
    async fn create_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        request: &CreateCheckRun,
    ) -> Result<CheckRun>;

    /// `PATCH /repos/{o}/{r}/check-runs/{id}`; at most 50 annotations per call (more →
    /// `InvalidRequest`, nothing sent). With annotations it is not retried after a
    /// possibly-landed failure (GitHub appends them).
    async fn update_check_run(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
        request: &UpdateCheckRun,
    ) -> Result<CheckRun>;

    /// `GET /repos/{o}/{r}/check-runs/{id}/annotations`, every page.
    async fn list_check_run_annotations(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        check_run_id: u64,
    ) -> Result<Vec<CheckAnnotation>>;

    /// `GET /repos/{o}/{r}/actions/jobs/{job_id}/logs`, following the 302 to the signed log URL
    /// without `Authorization`. The stream fails with `TooLarge` past `max_bytes`.
    /// 404 → `NotFound`, 410 (expired) → `Gone`.
    async fn download_job_logs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        job_id: u64,
        max_bytes: u64,
    ) -> Result<ByteStream>;

    /// `GET /repos/{o}/{r}/actions/jobs/{job_id}`: the job's run, attempt and steps.
    async fn get_workflow_job(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        job_id: u64,
    ) -> Result<WorkflowJob>;

    /// `GET /repos/{o}/{r}/actions/runs/{run_id}/jobs?filter=all`, every page: the jobs of
    /// every attempt of the run, older attempts included.
    async fn list_workflow_run_jobs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        run_id: u64,
    ) -> Result<Vec<WorkflowJob>>;

    /// `POST /repos/{o}/{r}/actions/runs/{run_id}/rerun-failed-jobs` (201): a new attempt of
    /// the run's failed jobs and their dependents. Not retried after a possibly-landed
    /// failure: a second request while the first attempt runs is refused (403).
    async fn rerun_failed_jobs(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        run_id: u64,
    ) -> Result<()>;

    /// `GET /repos/{o}/{r}/issues/{number}/comments`, every page.
    async fn list_issue_comments(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        issue_number: u64,
    ) -> Result<Vec<IssueComment>>;

    /// `POST /repos/{o}/{r}/issues/{number}/comments`. Not retried after a possibly-landed
    /// failure (transport or 5xx): find the comment by its marker before posting again.
    async fn create_issue_comment(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        issue_number: u64,
        body: &str,
    ) -> Result<IssueComment>;

    /// `PATCH /repos/{o}/{r}/issues/comments/{id}`.
    async fn update_issue_comment(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        comment_id: u64,
        body: &str,
    ) -> Result<IssueComment>;

    /// `POST /repos/{o}/{r}/issues/comments/{id}/reactions` (idempotent on GitHub's side:
    /// 200 when it already existed).
    async fn create_issue_comment_reaction(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        comment_id: u64,
        content: ReactionContent,
    ) -> Result<ReactionOutcome>;

    /// `GET /repos/{o}/{r}/collaborators/{username}/permission`, read as raw JSON.
    async fn get_collaborator_permission(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        username: &str,
    ) -> Result<CollaboratorPermission>;

    /// `GET /repos/{o}/{r}/contents/{path}?ref=`: the file decoded; `None` when absent (404).
    /// Files over 1 MB (served without content) are read through the blob API. An empty
    /// `git_ref` sends no `ref`: GitHub then reads the default branch, with no need to read
    /// the repository first to learn its name.
    async fn get_file_content(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>>;

    /// `GET /repos/{o}/{r}/git/ref/{ref}`, `git_ref` like `heads/main`.
    async fn get_git_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
    ) -> Result<GitRef>;

    /// `GET /repos/{o}/{r}/git/commits/{sha}` (tree and parents).
    async fn get_git_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        sha: &str,
    ) -> Result<GitCommit>;

    /// `GET /repos/{o}/{r}/git/trees/{tree_sha}`, one level (not recursive): each entry's
    /// name, mode and type, for keeping a file's mode and spotting links and submodules.
    async fn get_git_tree(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        tree_sha: &str,
    ) -> Result<GitTreeListing>;

    /// `GET /repos/{o}/{r}/git/trees/{tree_sha}?recursive=1`: every entry under the tree in
    /// one request, each `path` relative to it; `truncated` when GitHub cut it short.
    async fn get_git_tree_recursive(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        tree_sha: &str,
    ) -> Result<GitTreeListing>;

    /// `POST /repos/{o}/{r}/git/blobs` (base64). Content-addressed, so safe to retry.
    async fn create_blob(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        content: &[u8],
    ) -> Result<ShaOnly>;

    /// `POST /repos/{o}/{r}/git/trees` on top of `base_tree`. Content-addressed.
    async fn create_tree(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        base_tree: &str,
        entries: &[TreeEntry],
    ) -> Result<GitTree>;

    /// `POST /repos/{o}/{r}/git/commits`. An unreferenced duplicate commit is harmless.
    async fn create_commit(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        request: &CreateCommit,
    ) -> Result<GitCommit>;

    /// `PATCH /repos/{o}/{r}/git/refs/{ref}` with `force: false` — always. A moved branch gives
    /// `NotFastForward`.
    async fn update_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        sha: &str,
    ) -> Result<GitRef>;

    /// `POST /repos/{o}/{r}/git/refs`, `git_ref` fully qualified (`refs/heads/x`). An existing
    /// ref gives `Unprocessable` ("Reference already exists"). Not retried after a
    /// possibly-landed failure (transport or 5xx): read the ref before creating it again.
    async fn create_ref(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        sha: &str,
    ) -> Result<GitRef>;

    /// `GET /repos/{o}/{r}`.
    async fn get_repository(&self, inst: InstallationId, repo: &RepoRef) -> Result<Repository>;

    /// `GET /repos/{o}/{r}/tarball/{ref}` (302 to codeload, followed without auth) saved to
    /// `dest`. Returns the byte count; past `max_bytes` → `TooLarge` and `dest` is removed.
    async fn download_tarball(
        &self,
        inst: InstallationId,
        repo: &RepoRef,
        git_ref: &str,
        dest: &Path,
        max_bytes: u64,
    ) -> Result<u64>;

    /// `POST /app-manifests/{code}/conversions`, unauthenticated (setup flow). Codes are
    /// single-use, so a possibly-landed failure is returned, not retried.
    async fn convert_app_manifest(&self, code: &str) -> Result<AppManifestConversion>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ref_parses_full_names_only() {
        assert_eq!(
            RepoRef::parse("octo/hello-world"),
            Some(RepoRef::new("octo", "hello-world"))
        );
        for bad in ["", "octo", "/x", "x/", "a/b/c", "../x"] {
            assert_eq!(RepoRef::parse(bad), None, "{bad}");
        }
        assert_eq!(RepoRef::new("a", "b").to_string(), "a/b");
    }
}
