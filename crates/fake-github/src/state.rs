//! The in-memory model behind the fake: repositories with refs over a shared git object store,
//! pull requests, issue comments and reactions, check runs and annotations, job logs, tokens,
//! collaborator permissions, the request log and injected faults.
//!
//! Everything here is synchronous and lock-free by itself; `lib.rs` wraps it in one mutex that is
//! never held across an `.await`. Nothing here performs network I/O.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::git::{self, Commit, FlatTree, ObjectStore};
use crate::json::{self, RepoInfo, Urls};

/// Fake Actions run ids are the job id plus this offset (one job per run).
pub const RUN_ID_OFFSET: u64 = 7_000_000;

/// Legacy collaborator permission as GitHub's `permission` field reports it, plus the role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    Admin,
    Maintain,
    Write,
    Triage,
    Read,
    None,
}

impl Permission {
    /// (`permission`, `role_name`): maintain→write and triage→read in the legacy field.
    pub fn fields(self) -> (&'static str, &'static str) {
        match self {
            Permission::Admin => ("admin", "admin"),
            Permission::Maintain => ("write", "maintain"),
            Permission::Write => ("write", "write"),
            Permission::Triage => ("read", "triage"),
            Permission::Read => ("read", "read"),
            Permission::None => ("none", "none"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Repo {
    pub id: u64,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub fork: bool,
    pub installation_id: u64,
    pub created_at: String,
    pub pushed_at: String,
    /// Full ref name (`refs/heads/main`) → commit sha.
    pub refs: BTreeMap<String, String>,
    pub permissions: HashMap<String, Permission>,
}

impl Repo {
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

#[derive(Clone, Debug)]
pub struct Pull {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub head_repo: String,
    pub head_ref: String,
    pub base_ref: String,
    pub author: String,
    pub title: String,
    pub body: Option<String>,
    pub maintainer_can_modify: bool,
    pub state: String,
    pub created_at: String,
}

#[derive(Clone, Debug)]
pub struct IssueComment {
    pub id: u64,
    pub repo: String,
    pub issue_number: u64,
    pub user: String,
    pub body: String,
    pub created_at: String,
    pub updated_at: String,
    /// Set when the comment was made by the App through the API.
    pub via_app: bool,
    /// Set when another App made it (a second install of ci-medic, `github-actions`):
    /// `(app id, slug)`. Its author is that App's bot, `{slug}[bot]`.
    pub via_other_app: Option<(u64, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reaction {
    pub id: u64,
    pub comment_id: u64,
    pub user: String,
    pub content: String,
    pub created_at: String,
}

#[derive(Clone, Debug)]
pub struct CheckRun {
    pub id: u64,
    pub repo: String,
    pub head_sha: String,
    pub name: String,
    pub app_id: u64,
    pub app_slug: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: String,
    pub completed_at: Option<String>,
    pub external_id: String,
    pub details_url: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
    pub check_suite_id: u64,
}

#[derive(Clone, Debug)]
pub struct JobLog {
    pub repo: String,
    pub bytes: Vec<u8>,
    pub expired: bool,
}

/// One request as the fake saw it, for assertions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    /// Path relative to the API base (any `/api/v3` prefix removed), query included.
    pub path: String,
    pub had_auth: bool,
    pub status: u16,
}

/// A fault to inject into the next `remaining` matching requests.
#[derive(Clone, Debug)]
pub struct Fault {
    pub method: String,
    pub path_prefix: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub remaining: u32,
    /// The request is carried out first and only its answer replaced: GitHub stored the
    /// comment (or check run…) but the caller never learnt it.
    pub after_handling: bool,
}

/// Signature of the scripted CI: given the files at the pushed commit, returns the conclusion
/// (`success`, `failure`, …) and the job log.
pub type CiScript = Arc<dyn Fn(&BTreeMap<String, Vec<u8>>) -> (String, Vec<u8>) + Send + Sync>;

#[derive(Clone, Debug)]
pub struct Token {
    pub installation_id: u64,
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

#[derive(Clone, Debug)]
pub struct StoredDelivery {
    pub event: String,
    pub body: Vec<u8>,
}

/// A push the fake observed through the API; the CI simulation reacts to it.
#[derive(Clone, Debug)]
pub struct Push {
    pub repo: String,
    pub branch: String,
    pub sha: String,
}

pub struct State {
    pub urls: Urls,
    pub app_id: u64,
    pub app_slug: String,
    pub app_owner: String,
    /// When set, App JWTs must carry a valid RS256 signature for this key.
    pub app_public_key: Option<jsonwebtoken::DecodingKey>,
    next_id: u64,
    pub store: ObjectStore,
    pub repos: BTreeMap<String, Repo>,
    pub pulls: BTreeMap<(String, u64), Pull>,
    pub comments: BTreeMap<u64, IssueComment>,
    pub reactions: Vec<Reaction>,
    pub check_runs: BTreeMap<u64, CheckRun>,
    pub job_logs: HashMap<u64, JobLog>,
    /// Single-use-ish signed log URLs: token → job id.
    pub log_links: HashMap<String, u64>,
    /// Tarball links: token → (repo, commit sha).
    pub tarball_links: HashMap<String, (String, String)>,
    pub tokens: HashMap<String, Token>,
    pub manifest_codes: HashMap<String, Value>,
    pub requests: Vec<RequestRecord>,
    pub faults: Vec<Fault>,
    /// Requests whose answers are held until the test releases them.
    pub holds: Vec<crate::hold::Hold>,
    pub webhook: Option<(String, String)>,
    pub deliveries: HashMap<String, StoredDelivery>,
    pub delivery_order: Vec<String>,
    /// Every delivery attempt, as the App's delivery log lists it.
    pub hook_log: crate::hook_deliveries::HookLog,
    pub ci_scripts: Vec<(String, String, CiScript)>,
    /// Workflow runs, their attempts and jobs' steps, and the re-runs requested.
    pub actions: crate::actions::Actions,
    pub rate_used: u64,
    /// Wall clock used for timestamps; tests may move it.
    pub clock_offset: chrono::Duration,
    /// Sign-in with GitHub: OAuth clients, codes and user tokens.
    pub oauth: crate::oauth::OAuthState,
}

pub type Files<'a> = &'a [(&'a str, &'a str)];

impl State {
    pub fn new(urls: Urls) -> Self {
        State {
            urls,
            app_id: 424242,
            app_slug: "ci-medic".into(),
            app_owner: "ci-medic".into(),
            app_public_key: None,
            next_id: 1_000_000,
            store: ObjectStore::default(),
            repos: BTreeMap::new(),
            pulls: BTreeMap::new(),
            comments: BTreeMap::new(),
            reactions: Vec::new(),
            check_runs: BTreeMap::new(),
            job_logs: HashMap::new(),
            log_links: HashMap::new(),
            tarball_links: HashMap::new(),
            tokens: HashMap::new(),
            manifest_codes: HashMap::new(),
            requests: Vec::new(),
            faults: Vec::new(),
            holds: Vec::new(),
            webhook: None,
            deliveries: HashMap::new(),
            delivery_order: Vec::new(),
            hook_log: Default::default(),
            ci_scripts: Vec::new(),
            actions: crate::actions::Actions::default(),
            rate_used: 0,
            clock_offset: chrono::Duration::zero(),
            oauth: Default::default(),
        }
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::Utc::now() + self.clock_offset
    }

    pub fn now_str(&self) -> String {
        self.now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A fresh opaque token; unique by counter, unguessable enough for a loopback fake.
    pub fn fresh_token(&mut self, prefix: &str) -> String {
        use sha2::Digest;
        let n = self.next_id();
        let seed = format!(
            "{n}-{}-{:?}",
            self.now().timestamp_nanos_opt().unwrap_or(0),
            std::thread::current().id()
        );
        let h = hex::encode(sha2::Sha256::digest(seed.as_bytes()));
        format!("{prefix}{}", &h[..36])
    }

    pub fn user_bot(&self) -> String {
        format!("{}[bot]", self.app_slug)
    }

    // ----- repositories and git -------------------------------------------------------------

    pub fn add_repo(
        &mut self,
        owner: &str,
        name: &str,
        default_branch: &str,
        files: Files<'_>,
        fork: bool,
    ) -> String {
        let full = format!("{owner}/{name}");
        let now = self.now_str();
        let id = self.next_id();
        let repo = Repo {
            id,
            owner: owner.into(),
            name: name.into(),
            default_branch: default_branch.into(),
            fork,
            installation_id: 1,
            created_at: now.clone(),
            pushed_at: now,
            refs: BTreeMap::new(),
            permissions: HashMap::new(),
        };
        self.repos.insert(full.clone(), repo);
        let sha = self.make_commit(&[], files, &[], "Initial commit");
        self.set_ref(&full, &format!("refs/heads/{default_branch}"), &sha);
        sha
    }

    /// Builds a commit on top of `parent` (its files, plus `files`, minus `deletes`).
    pub fn make_commit(
        &mut self,
        parents: &[String],
        files: Files<'_>,
        deletes: &[&str],
        message: &str,
    ) -> String {
        let entries: Vec<crate::FileEntry<'_>> = files
            .iter()
            .map(|(path, content)| crate::FileEntry {
                path,
                mode: git::MODE_FILE,
                content: content.as_bytes(),
            })
            .collect();
        self.commit_over_parent(parents, &entries, deletes, message)
    }

    /// Like [`Self::make_commit`], with each entry's mode and raw bytes: executables, symbolic
    /// links (the bytes are the target), submodules (the bytes are the commit sha, stored as
    /// the gitlink itself, not as a blob) and files that are not UTF-8.
    pub fn make_commit_entries(
        &mut self,
        parents: &[String],
        entries: &[crate::FileEntry<'_>],
        message: &str,
    ) -> String {
        self.commit_over_parent(parents, entries, &[], message)
    }

    /// The first parent's tree, with `entries` written and `deletes` removed, as a new commit.
    fn commit_over_parent(
        &mut self,
        parents: &[String],
        entries: &[crate::FileEntry<'_>],
        deletes: &[&str],
        message: &str,
    ) -> String {
        let mut flat: FlatTree = match parents.first().and_then(|p| self.store.commit(p)) {
            Some(c) => self.store.flatten_tree(&c.tree.clone()).unwrap_or_default(),
            None => FlatTree::new(),
        };
        for e in entries {
            let sha = if e.mode == git::MODE_SUBMODULE {
                String::from_utf8_lossy(e.content).into_owned()
            } else {
                self.store.put_blob(e.content)
            };
            flat.insert(e.path.to_string(), (e.mode.to_string(), sha));
        }
        for d in deletes {
            flat.remove(*d);
        }
        let tree = self.store.put_flat_tree(&flat);
        let date = self.now_str();
        self.store.put_commit(Commit {
            tree,
            parents: parents.to_vec(),
            message: message.into(),
            author_name: "Fake Author".into(),
            author_email: "author@example.com".into(),
            date,
        })
    }

    pub fn set_ref(&mut self, repo: &str, full_ref: &str, sha: &str) {
        let now = self.now_str();
        if let Some(r) = self.repos.get_mut(repo) {
            r.refs.insert(full_ref.to_string(), sha.to_string());
            r.pushed_at = now;
        }
    }

    pub fn branch_head(&self, repo: &str, branch: &str) -> Option<String> {
        self.repos
            .get(repo)?
            .refs
            .get(&format!("refs/heads/{branch}"))
            .cloned()
    }

    /// Resolves a branch name, full ref, tag or commit sha to a commit sha.
    pub fn resolve(&self, repo: &str, rev: &str) -> Option<String> {
        let r = self.repos.get(repo)?;
        if let Some(s) = r.refs.get(rev) {
            return Some(s.clone());
        }
        for prefix in ["refs/heads/", "refs/tags/", "refs/"] {
            if let Some(s) = r.refs.get(&format!("{prefix}{rev}")) {
                return Some(s.clone());
            }
        }
        if rev.len() == 40 && self.store.commit(rev).is_some() {
            return Some(rev.to_string());
        }
        None
    }

    pub fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        let mut ancestors_of_a = HashSet::new();
        let mut stack = vec![a.to_string()];
        while let Some(s) = stack.pop() {
            if ancestors_of_a.insert(s.clone())
                && let Some(c) = self.store.commit(&s)
            {
                stack.extend(c.parents.iter().cloned());
            }
        }
        let mut queue = std::collections::VecDeque::from([b.to_string()]);
        let mut seen = HashSet::new();
        while let Some(s) = queue.pop_front() {
            if ancestors_of_a.contains(&s) {
                return Some(s);
            }
            if seen.insert(s.clone())
                && let Some(c) = self.store.commit(&s)
            {
                queue.extend(c.parents.iter().cloned());
            }
        }
        None
    }

    // ----- pull requests ------------------------------------------------------------------------

    pub fn pull_shas(&self, p: &Pull) -> (String, String) {
        let head = self
            .branch_head(&p.head_repo, &p.head_ref)
            .unwrap_or_default();
        let base = self.branch_head(&p.repo, &p.base_ref).unwrap_or_default();
        (head, base)
    }

    /// Files changed between the merge base and the PR head, GitHub's three-dot diff, as
    /// `(filename, status, additions, deletions, patch)`.
    pub fn pull_files(&self, p: &Pull) -> Vec<Value> {
        let (head, base) = self.pull_shas(p);
        let mb = self.merge_base(&base, &head).unwrap_or(base);
        let old = self.store.files_at(&mb).unwrap_or_default();
        let new = self.store.files_at(&head).unwrap_or_default();
        let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
        names.sort();
        names.dedup();
        let mut out = Vec::new();
        for name in names {
            let (o, n) = (old.get(name), new.get(name));
            if o == n {
                continue;
            }
            let (status, adds, dels) = match (o, n) {
                (None, Some(n)) => ("added", lines(n), 0),
                (Some(o), None) => ("removed", 0, lines(o)),
                (Some(o), Some(n)) => {
                    let (a, d) = line_diff_counts(o, n);
                    ("modified", a, d)
                }
                (None, None) => continue,
            };
            let blob_sha = n
                .map(|b| git_blob_id(b))
                .unwrap_or_else(|| git_blob_id(o.map(Vec::as_slice).unwrap_or_default()));
            let a = format!("{}/repos/{}", self.urls.api, p.head_repo);
            out.push(json!({
                "sha": blob_sha,
                "filename": name,
                "status": status,
                "additions": adds,
                "deletions": dels,
                "changes": adds + dels,
                "blob_url": format!("{}/{}/blob/{head}/{name}", self.urls.web, p.head_repo),
                "raw_url": format!("{}/{}/raw/{head}/{name}", self.urls.web, p.head_repo),
                "contents_url": format!("{a}/contents/{name}?ref={head}"),
                "patch": unified_patch(o.map(Vec::as_slice), n.map(Vec::as_slice)),
            }));
        }
        out
    }

    pub fn repo_json(&self, full: &str) -> Value {
        match self.repos.get(full) {
            Some(r) => json::repository(
                &self.urls,
                &RepoInfo {
                    id: r.id,
                    owner: &r.owner,
                    name: &r.name,
                    default_branch: &r.default_branch,
                    fork: r.fork,
                    created_at: &r.created_at,
                    pushed_at: &r.pushed_at,
                },
            ),
            None => Value::Null,
        }
    }

    fn branch_json(&self, repo: &str, branch: &str, sha: &str) -> Value {
        let owner = repo.split('/').next().unwrap_or_default();
        json!({
            "label": format!("{owner}:{branch}"),
            "ref": branch,
            "sha": sha,
            "user": json::user(&self.urls, owner),
            "repo": self.repo_json(repo),
        })
    }

    /// `pull-request` (full) when `full` is true, else `pull-request-simple`.
    pub fn pull_json(&self, p: &Pull, full: bool) -> Value {
        let (head, base) = self.pull_shas(p);
        let a = format!("{}/repos/{}", self.urls.api, p.repo);
        let html = format!("{}/{}/pull/{}", self.urls.web, p.repo, p.number);
        let n = p.number;
        let mut v = json!({
            "url": format!("{a}/pulls/{n}"),
            "id": p.id,
            "node_id": json::node_id("PullRequest", p.id),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "issue_url": format!("{a}/issues/{n}"),
            "commits_url": format!("{a}/pulls/{n}/commits"),
            "review_comments_url": format!("{a}/pulls/{n}/comments"),
            "review_comment_url": format!("{a}/pulls/comments{{/number}}"),
            "comments_url": format!("{a}/issues/{n}/comments"),
            "statuses_url": format!("{a}/statuses/{head}"),
            "number": n,
            "state": p.state,
            "locked": false,
            "title": p.title,
            "user": json::user(&self.urls, &p.author),
            "body": p.body,
            "labels": [],
            "milestone": null,
            "active_lock_reason": null,
            "created_at": p.created_at,
            "updated_at": p.created_at,
            "closed_at": null,
            "merged_at": null,
            "merge_commit_sha": null,
            "assignee": null,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self.branch_json(&p.head_repo, &p.head_ref, &head),
            "base": self.branch_json(&p.repo, &p.base_ref, &base),
            "_links": {
                "self": json::link(format!("{a}/pulls/{n}")),
                "html": json::link(html.clone()),
                "issue": json::link(format!("{a}/issues/{n}")),
                "comments": json::link(format!("{a}/issues/{n}/comments")),
                "review_comments": json::link(format!("{a}/pulls/{n}/comments")),
                "review_comment": json::link(format!("{a}/pulls/comments{{/number}}")),
                "commits": json::link(format!("{a}/pulls/{n}/commits")),
                "statuses": json::link(format!("{a}/statuses/{head}")),
            },
            "author_association": self.author_association(&p.repo, &p.author),
            "auto_merge": null,
            "draft": false,
        });
        if full {
            let files = self.pull_files(p);
            let sum = |k: &str| {
                files
                    .iter()
                    .map(|f| f[k].as_u64().unwrap_or(0))
                    .sum::<u64>()
            };
            let commits = self.count_commits(&base, &head);
            let o = v.as_object_mut().expect("object");
            o.insert("merged".into(), json!(false));
            o.insert("mergeable".into(), json!(true));
            o.insert("rebaseable".into(), json!(true));
            o.insert("mergeable_state".into(), json!("clean"));
            o.insert("merged_by".into(), Value::Null);
            o.insert(
                "comments".into(),
                json!(
                    self.comments
                        .values()
                        .filter(|c| c.repo == p.repo && c.issue_number == n)
                        .count()
                ),
            );
            o.insert("review_comments".into(), json!(0));
            o.insert(
                "maintainer_can_modify".into(),
                json!(p.maintainer_can_modify),
            );
            o.insert("commits".into(), json!(commits));
            o.insert("additions".into(), json!(sum("additions")));
            o.insert("deletions".into(), json!(sum("deletions")));
            o.insert("changed_files".into(), json!(files.len()));
        }
        v
    }

    fn count_commits(&self, base: &str, head: &str) -> usize {
        let mb = self.merge_base(base, head);
        let mut n = 0;
        let mut stack = vec![head.to_string()];
        let mut seen = HashSet::new();
        while let Some(s) = stack.pop() {
            if Some(&s) == mb.as_ref() || !seen.insert(s.clone()) {
                continue;
            }
            if let Some(c) = self.store.commit(&s) {
                n += 1;
                stack.extend(c.parents.iter().cloned());
            }
        }
        n
    }

    pub fn author_association(&self, repo: &str, user: &str) -> &'static str {
        let r = match self.repos.get(repo) {
            Some(r) => r,
            None => return "NONE",
        };
        if r.owner == user {
            return "OWNER";
        }
        match r.permissions.get(user) {
            Some(Permission::None) | None => {
                if self
                    .pulls
                    .values()
                    .any(|p| p.repo == repo && p.author == user)
                {
                    "CONTRIBUTOR"
                } else {
                    "NONE"
                }
            }
            Some(_) => "COLLABORATOR",
        }
    }

    // ----- comments ---------------------------------------------------------------------------

    pub fn comment_json(&self, c: &IssueComment) -> Value {
        let a = format!("{}/repos/{}", self.urls.api, c.repo);
        let kind = if self.pulls.contains_key(&(c.repo.clone(), c.issue_number)) {
            "pull"
        } else {
            "issues"
        };
        let contents: Vec<String> = self
            .reactions
            .iter()
            .filter(|r| r.comment_id == c.id)
            .map(|r| r.content.clone())
            .collect();
        json!({
            "id": c.id,
            "node_id": json::node_id("IssueComment", c.id),
            "url": format!("{a}/issues/comments/{}", c.id),
            "html_url": format!("{}/{}/{kind}/{}#issuecomment-{}", self.urls.web, c.repo, c.issue_number, c.id),
            "body": c.body,
            "user": json::user(&self.urls, &c.user),
            "created_at": c.created_at,
            "updated_at": c.updated_at,
            "issue_url": format!("{a}/issues/{}", c.issue_number),
            "author_association": self.author_association(&c.repo, &c.user),
            "performed_via_github_app": match (&c.via_other_app, c.via_app) {
                (Some((id, slug)), _) => json::app(&self.urls, *id, slug, if slug == "github-actions" { "github" } else { slug }),
                (None, true) => json::app(&self.urls, self.app_id, &self.app_slug, &self.app_owner),
                (None, false) => Value::Null,
            },
            "reactions": json::reaction_rollup(&format!("{a}/issues/comments/{}/reactions", c.id), &contents),
        })
    }

    pub fn reaction_json(&self, r: &Reaction) -> Value {
        json!({
            "id": r.id,
            "node_id": json::node_id("Reaction", r.id),
            "user": json::user(&self.urls, &r.user),
            "content": r.content,
            "created_at": r.created_at,
        })
    }

    // ----- check runs ---------------------------------------------------------------------------

    pub fn check_run_json(&self, c: &CheckRun) -> Value {
        let a = format!("{}/repos/{}", self.urls.api, c.repo);
        let pulls: Vec<Value> = self
            .pulls
            .values()
            .filter(|p| p.repo == c.repo && p.head_repo == c.repo && p.state == "open")
            .filter(|p| self.pull_shas(p).0 == c.head_sha)
            .map(|p| self.pull_minimal(p))
            .collect();
        json!({
            "id": c.id,
            "node_id": json::node_id("CheckRun", c.id),
            "head_sha": c.head_sha,
            "external_id": c.external_id,
            "url": format!("{a}/check-runs/{}", c.id),
            "html_url": format!("{}/{}/runs/{}", self.urls.web, c.repo, c.id),
            "details_url": c.details_url.clone().unwrap_or_else(|| format!("{}/{}/runs/{}", self.urls.web, c.repo, c.id)),
            "status": c.status,
            "conclusion": c.conclusion,
            "started_at": c.started_at,
            "completed_at": c.completed_at,
            "output": {
                "title": c.title,
                "summary": c.summary,
                "text": c.text,
                "annotations_count": c.annotations.len(),
                "annotations_url": format!("{a}/check-runs/{}/annotations", c.id),
            },
            "name": c.name,
            "check_suite": {"id": c.check_suite_id},
            "app": json::app(&self.urls, c.app_id, &c.app_slug, if c.app_slug == "github-actions" { "github" } else { &self.app_owner }),
            "pull_requests": pulls,
        })
    }

    /// `pull-request-minimal`, as check runs and check_run webhooks embed it.
    pub fn pull_minimal(&self, p: &Pull) -> Value {
        let (head, base) = self.pull_shas(p);
        let mini_repo = |full: &str| {
            let id = self.repos.get(full).map(|r| r.id).unwrap_or(0);
            json!({"id": id, "url": format!("{}/repos/{full}", self.urls.api), "name": full.split('/').nth(1).unwrap_or_default()})
        };
        json!({
            "url": format!("{}/repos/{}/pulls/{}", self.urls.api, p.repo, p.number),
            "id": p.id,
            "number": p.number,
            "head": {"ref": p.head_ref, "sha": head, "repo": mini_repo(&p.head_repo)},
            "base": {"ref": p.base_ref, "sha": base, "repo": mini_repo(&p.repo)},
        })
    }

    pub fn job_json(&self, repo: &str, job_id: u64) -> Option<Value> {
        let cr = self.check_runs.get(&job_id).filter(|c| c.repo == repo);
        if cr.is_none() && self.job_logs.get(&job_id).is_none_or(|l| l.repo != repo) {
            return None;
        }
        let a = format!("{}/repos/{repo}", self.urls.api);
        let run_id = job_id + RUN_ID_OFFSET;
        let (head_sha, name, status, conclusion, started, completed) = match cr {
            Some(c) => (
                c.head_sha.clone(),
                c.name.clone(),
                c.status.clone(),
                c.conclusion.clone(),
                c.started_at.clone(),
                c.completed_at.clone(),
            ),
            None => {
                let r = self.repos.get(repo)?;
                let sha = self
                    .branch_head(repo, &r.default_branch)
                    .unwrap_or_default();
                let now = self.now_str();
                (
                    sha,
                    "build".into(),
                    "completed".into(),
                    Some("failure".into()),
                    now.clone(),
                    Some(now),
                )
            }
        };
        let head_branch = self.repos.get(repo).and_then(|r| {
            r.refs
                .iter()
                .find(|(_, s)| **s == head_sha)
                .map(|(n, _)| n.trim_start_matches("refs/heads/").to_string())
        });
        Some(json!({
            "id": job_id,
            "run_id": run_id,
            "run_url": format!("{a}/actions/runs/{run_id}"),
            "run_attempt": 1,
            "node_id": json::node_id("WorkflowJob", job_id),
            "head_sha": head_sha,
            "url": format!("{a}/actions/jobs/{job_id}"),
            "html_url": format!("{}/{repo}/actions/runs/{run_id}/job/{job_id}", self.urls.web),
            "status": status,
            "conclusion": conclusion,
            "created_at": started,
            "started_at": started,
            "completed_at": completed,
            "name": name,
            "steps": [],
            "check_run_url": format!("{a}/check-runs/{job_id}"),
            "labels": ["ubuntu-latest"],
            "runner_id": 1,
            "runner_name": "GitHub Actions 1",
            "runner_group_id": 2,
            "runner_group_name": "GitHub Actions",
            "workflow_name": "CI",
            "head_branch": head_branch,
        }))
    }

    // ----- git JSON ---------------------------------------------------------------------------

    pub fn git_commit_json(&self, repo: &str, sha: &str) -> Option<Value> {
        let c = self.store.commit(sha)?;
        let a = format!("{}/repos/{repo}", self.urls.api);
        let who = json!({"name": c.author_name, "email": c.author_email, "date": c.date});
        Some(json!({
            "sha": sha,
            "node_id": json::node_id("Commit", json::stable_id(sha)),
            "url": format!("{a}/git/commits/{sha}"),
            "html_url": format!("{}/{repo}/commit/{sha}", self.urls.web),
            "author": who,
            "committer": who,
            "tree": {"sha": c.tree, "url": format!("{a}/git/trees/{}", c.tree)},
            "message": c.message,
            "parents": c.parents.iter().map(|p| json!({
                "sha": p, "url": format!("{a}/git/commits/{p}"), "html_url": format!("{}/{repo}/commit/{p}", self.urls.web)
            })).collect::<Vec<_>>(),
            "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null},
        }))
    }

    pub fn git_tree_json(&self, repo: &str, sha: &str, recursive: bool) -> Option<Value> {
        let tree = self.store.tree(sha)?;
        let a = format!("{}/repos/{repo}", self.urls.api);
        let entries: Vec<(String, git::TreeEntry)> = if recursive {
            self.store.walk_tree(sha)
        } else {
            tree.iter().map(|(n, e)| (n.clone(), e.clone())).collect()
        };
        let items: Vec<Value> = entries
            .into_iter()
            .map(|(path, e)| {
                let mut v = json!({"path": path, "mode": e.mode, "type": e.kind, "sha": e.sha});
                if e.kind == "blob" {
                    v["size"] = json!(self.store.blob(&e.sha).map(<[u8]>::len).unwrap_or(0));
                    v["url"] = json!(format!("{a}/git/blobs/{}", e.sha));
                } else if e.kind == "tree" {
                    v["url"] = json!(format!("{a}/git/trees/{}", e.sha));
                }
                // A submodule's commit lives in another repository: GitHub gives it no url.
                v
            })
            .collect();
        Some(
            json!({"sha": sha, "url": format!("{a}/git/trees/{sha}"), "tree": items, "truncated": false}),
        )
    }

    pub fn git_ref_json(&self, repo: &str, full_ref: &str) -> Option<Value> {
        let sha = self.repos.get(repo)?.refs.get(full_ref)?;
        let a = format!("{}/repos/{repo}", self.urls.api);
        Some(json!({
            "ref": full_ref,
            "node_id": json::node_id("Ref", json::stable_id(full_ref)),
            "url": format!("{a}/git/{full_ref}"),
            "object": {"type": "commit", "sha": sha, "url": format!("{a}/git/commits/{sha}")},
        }))
    }

    pub fn installation_json(&self, installation_id: u64, account: &str) -> Value {
        let a = &self.urls.api;
        json!({
            "id": installation_id,
            "account": json::user(&self.urls, account),
            "repository_selection": "all",
            "access_tokens_url": format!("{a}/app/installations/{installation_id}/access_tokens"),
            "repositories_url": format!("{a}/installation/repositories"),
            "html_url": format!("{}/settings/installations/{installation_id}", self.urls.web),
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "client_id": format!("Iv1.{:016x}", self.app_id),
            "target_id": json::stable_id(account),
            "target_type": "User",
            "permissions": {"checks": "write", "contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "actions": "write"},
            "events": ["check_run", "issue_comment", "pull_request"],
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "single_file_name": null,
            "has_multiple_single_files": false,
            "single_file_paths": [],
            "suspended_by": null,
            "suspended_at": null,
        })
    }
}

fn git_blob_id(b: &[u8]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", b.len()).as_bytes());
    h.update(b);
    hex::encode(h.finalize())
}

fn lines(b: &[u8]) -> usize {
    String::from_utf8_lossy(b).lines().count()
}

/// Added/removed line counts by a longest-common-subsequence diff (files here are small).
fn line_diff_counts(old: &[u8], new: &[u8]) -> (usize, usize) {
    let o = String::from_utf8_lossy(old);
    let n = String::from_utf8_lossy(new);
    let a: Vec<&str> = o.lines().collect();
    let b: Vec<&str> = n.lines().collect();
    let common = lcs_len(&a, &b);
    (b.len() - common, a.len() - common)
}

fn lcs_len(a: &[&str], b: &[&str]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    for x in a {
        let mut cur = vec![0usize; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A whole-file unified hunk: enough for readers that display or count the patch.
fn unified_patch(old: Option<&[u8]>, new: Option<&[u8]>) -> String {
    let o = old.map(String::from_utf8_lossy).unwrap_or_default();
    let n = new.map(String::from_utf8_lossy).unwrap_or_default();
    let ol: Vec<&str> = o.lines().collect();
    let nl: Vec<&str> = n.lines().collect();
    let mut s = format!(
        "@@ -{},{} +{},{} @@",
        usize::from(!ol.is_empty()),
        ol.len(),
        usize::from(!nl.is_empty()),
        nl.len()
    );
    for l in &ol {
        s.push_str(&format!("\n-{l}"));
    }
    for l in &nl {
        s.push_str(&format!("\n+{l}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_counts() {
        assert_eq!(line_diff_counts(b"a\nb\nc\n", b"a\nx\nc\nd\n"), (2, 1));
        assert_eq!(line_diff_counts(b"", b"a\n"), (1, 0));
    }

    #[test]
    fn permission_legacy_fields() {
        assert_eq!(Permission::Maintain.fields(), ("write", "maintain"));
        assert_eq!(Permission::Triage.fields(), ("read", "triage"));
    }
}
