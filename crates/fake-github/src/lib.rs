//! A stateful fake of the GitHub REST API subset ci-medic uses, served on `127.0.0.1` for
//! integration tests and `ci-medic demo`.
//!
//! `FakeGitHub::start()` binds an ephemeral loopback port and serves, with the real API's JSON
//! shapes (checked against GitHub's OpenAPI in `tests/schema.rs`): installation tokens, repos,
//! pulls (+ files, `?head=`), check runs + annotations, Actions runs with attempts, jobs with
//! steps and re-runs ([`actions`]), job logs (302 to a no-auth log host that rejects an
//! `Authorization` header), issue comments + reactions, collaborator permission, contents, git
//! data (refs with fast-forward checks, commits, trees, blobs over a real SHA-1 object store),
//! tarballs, App-manifest conversions, the App's webhook delivery log (every delivery attempt
//! with its status, listed and redelivered on request), and sign-in with GitHub (the OAuth web
//! flow and the user-token installation lists, `oauth.rs`). Every successful `GET` carries an
//! `ETag`, and a matching `If-None-Match` gets `304 Not Modified` with no body, not counted
//! against the rate limit (`conditional.rs`). Tests drive and inspect it through the Rust
//! control API below (not over HTTP), inject faults (before a request is handled, or after it,
//! to lose the answer of a creation that landed), send signed webhooks, and script CI.
//!
//! It must never reach the network beyond loopback and the webhook URL a test gives it, and never
//! hold its state lock across an `.await`.
//!
//! Auth model: `/app/...` and `GET /repos/{o}/{r}/installation` need a JWT-shaped bearer whose
//! `iss` is [`FakeGitHub::app_id`] and whose `exp` is in the future and at most ~10 minutes after
//! `iat` (the RS256 signature is verified only after [`FakeGitHub::set_app_public_key`]); every other `/repos/...` endpoint needs an installation
//! token this fake issued (1 hour lifetime) for the repo's installation, else 401 `Bad credentials`.
//! Collaborator permission for a user with no access is `permission: "none"` (the fake models
//! public repos without the implicit read grant).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use fake_github::{FakeGitHub, NewPullRequest, Permission};
//! let fake = FakeGitHub::start().await.unwrap();
//! fake.add_repo("octo", "widget", "main", &[("src/lib.rs", "pub fn a() {}\n")]);
//! let head = fake
//!     .commit_files("octo/widget", "feature", Some("main"), &[("src/lib.rs", "pub fn a() { oops }\n")], "wip")
//!     .unwrap();
//! fake.open_pull_request(NewPullRequest {
//!     repo: "octo/widget", number: 1, head_branch: "feature", head_repo: "octo/widget",
//!     base: "main", author_login: "alice", title: "Feature", maintainer_can_modify: true,
//! }).unwrap();
//! fake.set_permission("octo/widget", "maint", Permission::Write).unwrap();
//! let job = fake.add_check_run("octo/widget", &head, "test", "github-actions", "failure", Default::default());
//! fake.set_job_log("octo/widget", job, b"error: oops\n");
//! let payload = fake.check_run_completed_payload(job).unwrap();
//! assert_eq!(payload["check_run"]["pull_requests"][0]["number"], 1);
//! // Point ci-medic at fake.base_url(), then: fake.set_webhook(url, secret); fake.deliver("check_run", &payload).await
//! # }
//! ```
//!
//! Not modelled: issues that are not pull requests, merges, branch protection, check suites as
//! resources, automatic `pull_request`/`issue_comment` deliveries for API-made changes (only the
//! scripted CI delivers `check_run` by itself), token narrowing by `repositories`, content over 1 MB.

#![recursion_limit = "512"]

pub mod actions;
mod ci;
mod conditional;
pub mod git;
mod hold;
mod hook_deliveries;
pub mod json;
mod oauth;
mod server;
pub mod state;
mod tarball;
pub mod webhook;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

pub use actions::{NewJob, NewRun, RerunKind, RerunRequest};
pub use hold::HeldAnswer;
pub use hook_deliveries::HookAttempt;
pub use server::{MAX_ANNOTATIONS_PER_REQUEST, MAX_COMMENT_CHARS};
pub use state::{CheckRun, Fault, IssueComment, Permission, Reaction, RequestRecord};

use server::Shared;
use state::{JobLog, Pull, State, StoredDelivery};

#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    #[error("could not bind the fake GitHub: {0}")]
    Bind(#[from] std::io::Error),
    #[error("unknown repository {0}")]
    UnknownRepo(String),
    #[error("unknown commit or ref {0}")]
    UnknownRev(String),
    #[error("invalid RSA public key: {0}")]
    Key(#[from] jsonwebtoken::errors::Error),
    #[error("no webhook configured; call set_webhook first")]
    NoWebhook,
    #[error("unknown delivery {0}")]
    UnknownDelivery(String),
    #[error("webhook delivery failed: {0}")]
    Delivery(#[from] reqwest::Error),
}

/// Start options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A GHES-style API prefix such as `/api/v3`; empty for github.com layout.
    pub base_path: String,
    /// The address to listen on (port chosen by the system) and to put in the URLs it
    /// answers with; loopback when unset. A Docker bridge's gateway lets containers reach it.
    pub bind: Option<std::net::IpAddr>,
}

/// A pull request to open with [`FakeGitHub::open_pull_request`].
#[derive(Clone, Debug)]
pub struct NewPullRequest<'a> {
    /// Base repository, `owner/name`.
    pub repo: &'a str,
    pub number: u64,
    pub head_branch: &'a str,
    /// Repository holding the head branch: the same as `repo`, or a fork added with `add_repo`.
    pub head_repo: &'a str,
    pub base: &'a str,
    pub author_login: &'a str,
    pub title: &'a str,
    pub maintainer_can_modify: bool,
}

/// Check-run output given to [`FakeGitHub::add_check_run`].
#[derive(Clone, Debug, Default)]
pub struct CheckOutput {
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
}

/// A commit as the inspection API shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitView {
    pub sha: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author_name: String,
    pub author_email: String,
    /// Every file of the commit: path → content.
    pub files: BTreeMap<String, Vec<u8>>,
}

/// One file of [`FakeGitHub::commit_entries`]: any mode git knows, any bytes.
#[derive(Clone, Copy, Debug)]
pub struct FileEntry<'a> {
    pub path: &'a str,
    /// `100644`, `100755`, `120000` (the content is the link's target) or `160000` (the content
    /// is the submodule's commit sha).
    pub mode: &'a str,
    pub content: &'a [u8],
}

/// The result of one webhook delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    /// The app's HTTP status for this attempt.
    pub status: u16,
}

pub struct FakeGitHub {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeGitHub {
    /// Binds `127.0.0.1:0` and serves the github.com layout.
    pub async fn start() -> Result<FakeGitHub, FakeError> {
        Self::start_with(Options::default()).await
    }

    pub async fn start_with(opts: Options) -> Result<FakeGitHub, FakeError> {
        let ip = opts.bind.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
        let listener = tokio::net::TcpListener::bind((ip, 0)).await?;
        let addr = listener.local_addr()?;
        let base_path = opts.base_path.trim_end_matches('/').to_string();
        let web = format!("http://{addr}");
        let urls = json::Urls {
            api: format!("{web}{base_path}"),
            web,
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(FakeError::Delivery)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(urls)),
            base_path,
            http,
        });
        let app = axum::Router::new()
            .fallback(server::handle)
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "fake GitHub server stopped");
            }
        });
        Ok(FakeGitHub {
            shared,
            addr,
            server,
        })
    }

    fn st(&self) -> MutexGuard<'_, State> {
        match self.shared.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The REST base URL (with any base path), e.g. `http://127.0.0.1:41234/api/v3`.
    pub fn base_url(&self) -> String {
        self.st().urls.api.clone()
    }

    /// The "web" origin used for `html_url`s, log and tarball hosts.
    pub fn web_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn app_id(&self) -> u64 {
        self.st().app_id
    }

    pub fn app_slug(&self) -> String {
        self.st().app_slug.clone()
    }

    /// Changes the App identity (JWT `iss` accepted, bot login `{slug}[bot]`).
    pub fn set_app(&self, app_id: u64, slug: &str) {
        let mut st = self.st();
        st.app_id = app_id;
        st.app_slug = slug.to_string();
    }

    /// Makes App JWTs require a valid RS256 signature by the key matching this public PEM.
    pub fn set_app_public_key(&self, public_pem: &[u8]) -> Result<(), FakeError> {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(public_pem)?;
        self.st().app_public_key = Some(key);
        Ok(())
    }

    /// Issues an installation token directly (as if minted via the JWT flow).
    pub fn issue_installation_token(&self, installation_id: u64) -> String {
        let mut st = self.st();
        let token = st.fresh_token("ghs_");
        let expires_at = st.now() + chrono::Duration::hours(1);
        st.tokens.insert(
            token.clone(),
            state::Token {
                installation_id,
                expires_at,
            },
        );
        token
    }

    /// Moves the fake's clock (token expiry, JWT checks, signed log URLs).
    pub fn advance_clock(&self, by: chrono::Duration) {
        let mut st = self.st();
        st.clock_offset += by;
    }

    // ----- builders ---------------------------------------------------------------------------

    /// Creates `owner/name` with one initial commit holding `files` on `default_branch`, installed
    /// under installation id 1. Returns the commit sha.
    pub fn add_repo(
        &self,
        owner: &str,
        name: &str,
        default_branch: &str,
        files: &[(&str, &str)],
    ) -> String {
        self.st()
            .add_repo(owner, name, default_branch, files, false)
    }

    /// Creates `fork_owner/{name}` as a fork of `upstream` (same branches and history).
    pub fn add_fork(&self, upstream: &str, fork_owner: &str) -> Result<String, FakeError> {
        let mut st = self.st();
        let up = st
            .repos
            .get(upstream)
            .cloned()
            .ok_or_else(|| FakeError::UnknownRepo(upstream.into()))?;
        let full = format!("{fork_owner}/{}", up.name);
        let id = st.next_id();
        let mut r = up;
        r.id = id;
        r.owner = fork_owner.to_string();
        r.fork = true;
        r.permissions.clear();
        st.repos.insert(full.clone(), r);
        Ok(full)
    }

    pub fn set_installation_id(&self, repo: &str, installation_id: u64) -> Result<(), FakeError> {
        let mut st = self.st();
        let r = st
            .repos
            .get_mut(repo)
            .ok_or_else(|| FakeError::UnknownRepo(repo.into()))?;
        r.installation_id = installation_id;
        Ok(())
    }

    /// Commits `files` on top of `parent` (default: the branch head) and moves `branch` to it
    /// (creating the branch if needed). Not a push through the API: it triggers no CI script.
    pub fn commit_files(
        &self,
        repo: &str,
        branch: &str,
        parent: Option<&str>,
        files: &[(&str, &str)],
        message: &str,
    ) -> Result<String, FakeError> {
        self.commit_changes(repo, branch, parent, files, &[], message)
    }

    /// Like [`Self::commit_files`], also deleting `deletes`.
    pub fn commit_changes(
        &self,
        repo: &str,
        branch: &str,
        parent: Option<&str>,
        files: &[(&str, &str)],
        deletes: &[&str],
        message: &str,
    ) -> Result<String, FakeError> {
        self.commit_on(repo, branch, parent, |st, parents| {
            st.make_commit(parents, files, deletes, message)
        })
    }

    /// Like [`Self::commit_files`] with a mode and raw bytes per file (executables, symbolic
    /// links, submodules, files that are not UTF-8).
    pub fn commit_entries(
        &self,
        repo: &str,
        branch: &str,
        parent: Option<&str>,
        entries: &[FileEntry<'_>],
        message: &str,
    ) -> Result<String, FakeError> {
        self.commit_on(repo, branch, parent, |st, parents| {
            st.make_commit_entries(parents, entries, message)
        })
    }

    /// Makes a commit with `make(state, parents)` on `parent` (default: the branch's head) and
    /// moves `branch` to it.
    fn commit_on(
        &self,
        repo: &str,
        branch: &str,
        parent: Option<&str>,
        make: impl FnOnce(&mut State, &[String]) -> String,
    ) -> Result<String, FakeError> {
        let mut st = self.st();
        if !st.repos.contains_key(repo) {
            return Err(FakeError::UnknownRepo(repo.into()));
        }
        let parent = match parent {
            Some(p) => Some(
                st.resolve(repo, p)
                    .ok_or_else(|| FakeError::UnknownRev(p.into()))?,
            ),
            None => st.branch_head(repo, branch),
        };
        let parents: Vec<String> = parent.into_iter().collect();
        let sha = make(&mut st, &parents);
        st.set_ref(repo, &format!("refs/heads/{branch}"), &sha);
        Ok(sha)
    }

    /// Opens a PR; its changed files, additions and commits are derived from the merge base of
    /// `base` and the head branch, like GitHub's three-dot diff. Returns the PR's id.
    pub fn open_pull_request(&self, pr: NewPullRequest<'_>) -> Result<u64, FakeError> {
        let mut st = self.st();
        for r in [pr.repo, pr.head_repo] {
            if !st.repos.contains_key(r) {
                return Err(FakeError::UnknownRepo(r.into()));
            }
        }
        if st.branch_head(pr.head_repo, pr.head_branch).is_none() {
            return Err(FakeError::UnknownRev(pr.head_branch.into()));
        }
        if st.branch_head(pr.repo, pr.base).is_none() {
            return Err(FakeError::UnknownRev(pr.base.into()));
        }
        let id = st.next_id();
        let created_at = st.now_str();
        st.pulls.insert(
            (pr.repo.to_string(), pr.number),
            Pull {
                id,
                repo: pr.repo.into(),
                number: pr.number,
                head_repo: pr.head_repo.into(),
                head_ref: pr.head_branch.into(),
                base_ref: pr.base.into(),
                author: pr.author_login.into(),
                title: pr.title.into(),
                body: None,
                maintainer_can_modify: pr.maintainer_can_modify,
                state: "open".into(),
                created_at,
            },
        );
        Ok(id)
    }

    pub fn close_pull_request(&self, repo: &str, number: u64) {
        if let Some(p) = self.st().pulls.get_mut(&(repo.to_string(), number)) {
            p.state = "closed".into();
        }
    }

    pub fn reopen_pull_request(&self, repo: &str, number: u64) {
        if let Some(p) = self.st().pulls.get_mut(&(repo.to_string(), number)) {
            p.state = "open".into();
        }
    }

    pub fn set_permission(
        &self,
        repo: &str,
        user: &str,
        permission: Permission,
    ) -> Result<(), FakeError> {
        let mut st = self.st();
        let r = st
            .repos
            .get_mut(repo)
            .ok_or_else(|| FakeError::UnknownRepo(repo.into()))?;
        r.permissions.insert(user.to_string(), permission);
        Ok(())
    }

    /// Adds a completed check run (e.g. a failed CI job by `github-actions`). Returns its id,
    /// which is also the Actions job id for [`Self::set_job_log`].
    pub fn add_check_run(
        &self,
        repo: &str,
        head_sha: &str,
        name: &str,
        app_slug: &str,
        conclusion: &str,
        output: CheckOutput,
    ) -> u64 {
        let mut st = self.st();
        let id = st.next_id();
        let now = st.now_str();
        let app_id = if app_slug == "github-actions" {
            15368
        } else if app_slug == st.app_slug {
            st.app_id
        } else {
            // Another CI's App (CircleCI, Buildkite…), with an id of its own.
            json::stable_id(app_slug)
        };
        st.check_runs.insert(
            id,
            CheckRun {
                id,
                repo: repo.into(),
                head_sha: head_sha.into(),
                name: name.into(),
                app_id,
                app_slug: app_slug.into(),
                status: "completed".into(),
                conclusion: Some(conclusion.into()),
                started_at: now.clone(),
                completed_at: Some(now),
                external_id: String::new(),
                details_url: None,
                title: output.title,
                summary: output.summary,
                text: output.text,
                annotations: vec![],
                check_suite_id: id + 5_000_000,
            },
        );
        id
    }

    pub fn set_job_log(&self, repo: &str, job_id: u64, bytes: &[u8]) {
        self.st().job_logs.insert(
            job_id,
            JobLog {
                repo: repo.into(),
                bytes: bytes.to_vec(),
                expired: false,
            },
        );
    }

    /// Marks a job's log as past retention: the API then answers 410.
    pub fn expire_job_log(&self, job_id: u64) {
        if let Some(l) = self.st().job_logs.get_mut(&job_id) {
            l.expired = true;
        }
    }

    /// Registers a one-time manifest `code`; `app_json` fields (e.g. `pem`, `webhook_secret`, `id`)
    /// override the defaults of the conversion response.
    pub fn register_manifest_code(&self, code: &str, app_json: Value) {
        self.st().manifest_codes.insert(code.into(), app_json);
    }

    /// A comment written by a person (e.g. a maintainer's `/approve`). Returns its id; deliver it
    /// with [`Self::issue_comment_created_payload`] + [`Self::deliver`].
    pub fn add_comment(&self, repo: &str, number: u64, user: &str, body: &str) -> u64 {
        self.insert_comment(repo, number, user.into(), None, body)
    }

    /// A comment posted through another GitHub App (`app_id`, `app_slug`): written by
    /// `{app_slug}[bot]` with `performed_via_github_app` naming that App, as GitHub shows a
    /// `github-actions[bot]` comment (app 15368) or one by a second install of ci-medic.
    pub fn add_app_comment(
        &self,
        repo: &str,
        number: u64,
        app_id: u64,
        app_slug: &str,
        body: &str,
    ) -> u64 {
        let user = format!("{app_slug}[bot]");
        self.insert_comment(repo, number, user, Some((app_id, app_slug.into())), body)
    }

    fn insert_comment(
        &self,
        repo: &str,
        number: u64,
        user: String,
        via_other_app: Option<(u64, String)>,
        body: &str,
    ) -> u64 {
        let mut st = self.st();
        let id = st.next_id();
        let now = st.now_str();
        st.comments.insert(
            id,
            IssueComment {
                id,
                repo: repo.into(),
                issue_number: number,
                user,
                body: body.into(),
                created_at: now.clone(),
                updated_at: now,
                via_app: false,
                via_other_app,
            },
        );
        id
    }

    // ----- inspection -------------------------------------------------------------------------

    pub fn comments(&self, repo: &str, number: u64) -> Vec<IssueComment> {
        self.st()
            .comments
            .values()
            .filter(|c| c.repo == repo && c.issue_number == number)
            .cloned()
            .collect()
    }

    pub fn check_runs(&self, repo: &str, sha: &str) -> Vec<CheckRun> {
        self.st()
            .check_runs
            .values()
            .filter(|c| c.repo == repo && c.head_sha == sha)
            .cloned()
            .collect()
    }

    pub fn check_run(&self, id: u64) -> Option<CheckRun> {
        self.st().check_runs.get(&id).cloned()
    }

    /// Stored annotations of a check run, in GitHub's `check-annotation` JSON shape.
    pub fn annotations(&self, check_run_id: u64) -> Vec<Value> {
        self.st()
            .check_runs
            .get(&check_run_id)
            .map(|c| c.annotations.clone())
            .unwrap_or_default()
    }

    pub fn reactions(&self, comment_id: u64) -> Vec<Reaction> {
        self.st()
            .reactions
            .iter()
            .filter(|r| r.comment_id == comment_id)
            .cloned()
            .collect()
    }

    pub fn branch_head(&self, repo: &str, branch: &str) -> Option<String> {
        self.st().branch_head(repo, branch)
    }

    pub fn commit(&self, _repo: &str, sha: &str) -> Option<CommitView> {
        let st = self.st();
        let c = st.store.commit(sha)?.clone();
        Some(CommitView {
            sha: sha.into(),
            parents: c.parents,
            message: c.message,
            author_name: c.author_name,
            author_email: c.author_email,
            files: st.store.files_at(sha)?,
        })
    }

    pub fn file_at(&self, repo: &str, rev: &str, path: &str) -> Option<Vec<u8>> {
        let st = self.st();
        let sha = st.resolve(repo, rev)?;
        st.store.files_at(&sha)?.remove(path)
    }

    /// The tree mode (`100644`, `100755`, `120000`, `160000`) of `path` at `rev`.
    pub fn mode_at(&self, repo: &str, rev: &str, path: &str) -> Option<String> {
        let st = self.st();
        let sha = st.resolve(repo, rev)?;
        let tree = st.store.commit(&sha)?.tree.clone();
        st.store
            .flatten_tree(&tree)?
            .remove(path)
            .map(|(mode, _)| mode)
    }

    pub fn request_log(&self) -> Vec<RequestRecord> {
        self.st().requests.clone()
    }

    pub fn clear_request_log(&self) {
        self.st().requests.clear();
    }

    /// Polls `probe` every 10 ms until it returns `Some`, or `timeout` passes (for tests waiting
    /// on the app's asynchronous work, e.g. a comment appearing).
    pub async fn wait_for<T>(
        &self,
        timeout: std::time::Duration,
        probe: impl Fn(&FakeGitHub) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(v) = probe(self) {
                return Some(v);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    // ----- faults -----------------------------------------------------------------------------

    /// The next `count` requests whose method matches (`"*"` for any) and whose path (relative to
    /// the API base) starts with `path_prefix` get `status` with GitHub's error body and `headers`
    /// (e.g. `("retry-after","1")`, or `("x-ratelimit-remaining","0")` for a primary limit).
    pub fn fail_next(
        &self,
        method: &str,
        path_prefix: &str,
        status: u16,
        headers: &[(&str, &str)],
        count: u32,
    ) {
        self.st().faults.push(Fault {
            method: method.into(),
            path_prefix: path_prefix.into(),
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            remaining: count,
            after_handling: false,
        });
    }

    /// The next `count` matching requests are carried out, then answered with a 502: what a
    /// client sees when GitHub stored a comment or check run and failed before saying so.
    pub fn lose_answer_next(&self, method: &str, path_prefix: &str, count: u32) {
        self.st().faults.push(Fault {
            method: method.into(),
            path_prefix: path_prefix.into(),
            status: 502,
            headers: Vec::new(),
            remaining: count,
            after_handling: true,
        });
    }

    /// The next request matching `method` (`"*"` for any) and `path_prefix` is carried out at
    /// once, its effects included (a push runs the scripted CI and its webhook), but its answer
    /// is held until [`HeldAnswer::release`] (or the handle is dropped): the window between
    /// GitHub doing the work and the client learning it.
    pub fn hold_answer_next(&self, method: &str, path_prefix: &str) -> HeldAnswer {
        hold::add(&mut self.st(), method, path_prefix)
    }

    /// Drops every pending injected fault.
    pub fn clear_faults(&self) {
        self.st().faults.clear();
    }

    // ----- webhooks ---------------------------------------------------------------------------

    pub fn set_webhook(&self, url: &str, secret: &str) {
        self.st().webhook = Some((url.into(), secret.into()));
    }

    /// Signs and POSTs `payload` as event `event` to the webhook URL; returns the delivery id and
    /// the app's status.
    pub async fn deliver(&self, event: &str, payload: &Value) -> Result<Delivery, FakeError> {
        let (id, body) = {
            let mut st = self.st();
            if st.webhook.is_none() {
                return Err(FakeError::NoWebhook);
            }
            let body = serde_json::to_vec(payload).unwrap_or_default();
            let id = webhook::delivery_id(&mut st);
            st.deliveries.insert(
                id.clone(),
                StoredDelivery {
                    event: event.into(),
                    body: body.clone(),
                },
            );
            st.delivery_order.push(id.clone());
            (id, body)
        };
        self.send(&id, event, &body).await
    }

    /// Sends a stored delivery again with the same id, event and body.
    pub async fn redeliver(&self, delivery_id: &str) -> Result<Delivery, FakeError> {
        let d = self
            .st()
            .deliveries
            .get(delivery_id)
            .cloned()
            .ok_or_else(|| FakeError::UnknownDelivery(delivery_id.into()))?;
        self.send(delivery_id, &d.event, &d.body).await
    }

    async fn send(&self, id: &str, event: &str, body: &[u8]) -> Result<Delivery, FakeError> {
        // Recorded in the App's delivery log whatever the outcome, as GitHub does.
        let status = hook_deliveries::send_logged(&self.shared, id, event, body, false).await?;
        Ok(Delivery {
            id: id.into(),
            status,
        })
    }

    /// Delivery ids in the order they were made (API-triggered CI deliveries included), with events.
    pub fn deliveries(&self) -> Vec<(String, String)> {
        let st = self.st();
        st.delivery_order
            .iter()
            .map(|id| (id.clone(), st.deliveries[id].event.clone()))
            .collect()
    }

    /// The body of a stored delivery.
    pub fn delivery_body(&self, id: &str) -> Option<Value> {
        self.st()
            .deliveries
            .get(id)
            .and_then(|d| serde_json::from_slice(&d.body).ok())
    }

    pub fn check_run_completed_payload(&self, check_run_id: u64) -> Option<Value> {
        webhook::check_run_completed(&self.st(), check_run_id)
    }

    pub fn issue_comment_created_payload(&self, comment_id: u64) -> Option<Value> {
        webhook::issue_comment_created(&self.st(), comment_id)
    }

    /// `pull_request` `closed` or `reopened`, for the pull request as it is now.
    pub fn pull_request_state_payload(
        &self,
        repo: &str,
        number: u64,
        action: &str,
    ) -> Option<Value> {
        webhook::pull_request_state(&self.st(), repo, number, action)
    }

    pub fn pull_request_synchronize_payload(
        &self,
        repo: &str,
        number: u64,
        before: &str,
    ) -> Option<Value> {
        webhook::pull_request_synchronize(&self.st(), repo, number, before)
    }

    // ----- CI ---------------------------------------------------------------------------------

    /// Whenever a branch of `repo` is updated through the API (create or update ref), runs
    /// `script(files_at_new_head)` → `(conclusion, log)`, records a completed `github-actions`
    /// check run named `check_name` on the new head (job id = check run id, log stored), and, with
    /// a webhook set, delivers `check_run` `completed`. The script must not call the fake.
    pub fn set_ci_script<F>(&self, repo: &str, check_name: &str, script: F)
    where
        F: Fn(&BTreeMap<String, Vec<u8>>) -> (String, Vec<u8>) + Send + Sync + 'static,
    {
        self.st()
            .ci_scripts
            .push((repo.into(), check_name.into(), Arc::new(script)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ci-medic demo` shares the fake across tasks and spawns deliveries: keep it Send + Sync
    /// and its async methods' futures Send.
    #[test]
    fn fake_and_futures_are_send() {
        fn send_sync<T: Send + Sync>(_: &T) {}
        fn send<T: Send>(_: T) {}
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let fake = FakeGitHub::start().await.unwrap();
            send_sync(&fake);
            let v = Value::Null;
            send(fake.deliver("ping", &v));
            send(fake.redeliver("x"));
            send(fake.wait_for(std::time::Duration::ZERO, |_| Some(())));
        });
    }
}
