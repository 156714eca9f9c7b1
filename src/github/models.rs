//! Small owned serde structs for the parts of GitHub's REST answers and requests ci-medic uses.
//!
//! Field names are the real API's (checked against `openapi-subset.json` and recorded
//! responses). Only fields we read are declared; unknown fields are ignored so new API fields never
//! break us. Fields the API documents as nullable are `Option`. Nothing here does I/O; secrets are
//! held as `SecretString` so `Debug` never prints them.

use secrecy::SecretString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use ci_medic_core::repo_config::Permission;

/// An account (user, bot or organization) as embedded in other objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub login: String,
    pub id: u64,
    /// `User`, `Bot` or `Organization`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// A repository (`GET /repos/{o}/{r}`, and `head.repo`/`base.repo` of a pull request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repository {
    pub id: u64,
    pub name: String,
    /// `owner/name`.
    pub full_name: String,
    pub owner: User,
    #[serde(default)]
    pub private: bool,
    #[serde(default)]
    pub fork: bool,
    pub default_branch: String,
    #[serde(default)]
    pub archived: bool,
}

/// One side (`head` or `base`) of a pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestRef {
    /// `owner:branch`.
    #[serde(default)]
    pub label: Option<String>,
    /// The branch name (without `refs/heads/`).
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub sha: String,
    /// Null when the fork was deleted.
    #[serde(default)]
    pub repo: Option<Repository>,
}

/// A pull request (`GET /pulls/{n}`, and the simple form from the list endpoints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub id: u64,
    pub number: u64,
    /// `open` or `closed`.
    pub state: String,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    pub html_url: String,
    #[serde(default)]
    pub user: Option<User>,
    pub head: PullRequestRef,
    pub base: PullRequestRef,
    #[serde(default)]
    pub draft: Option<bool>,
    /// Only in the full form (`GET /pulls/{n}`).
    #[serde(default)]
    pub merged: Option<bool>,
    /// Only in the full form; whether maintainers (and so our App) may push to a fork's branch.
    #[serde(default)]
    pub maintainer_can_modify: Option<bool>,
}

impl PullRequest {
    /// True when head and base live in different repositories (a fork PR).
    pub fn is_from_fork(&self) -> bool {
        match (&self.head.repo, &self.base.repo) {
            (Some(h), Some(b)) => h.id != b.id,
            // A deleted fork: certainly not the base repository.
            (None, _) => true,
            (Some(_), None) => false,
        }
    }
}

/// One file of `GET /pulls/{n}/files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestFile {
    #[serde(default)]
    pub sha: Option<String>,
    /// Repo-relative path after the change.
    pub filename: String,
    /// `added`, `removed`, `modified`, `renamed`, `copied`, `changed`, `unchanged`.
    pub status: String,
    #[serde(default)]
    pub additions: u64,
    #[serde(default)]
    pub deletions: u64,
    #[serde(default)]
    pub changes: u64,
    /// Absent for binary files and very large diffs.
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub previous_filename: Option<String>,
}

/// A check run's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Queued,
    InProgress,
    Completed,
    Waiting,
    Requested,
    Pending,
    /// A value newer than this code; never sent.
    #[serde(other)]
    Unknown,
}

/// A check run's `conclusion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckConclusion {
    Success,
    Failure,
    Neutral,
    Cancelled,
    Skipped,
    TimedOut,
    ActionRequired,
    Stale,
    StartupFailure,
    /// A value newer than this code; never sent.
    #[serde(other)]
    Unknown,
}

impl CheckConclusion {
    /// Conclusions ci-medic treats as "the check failed".
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Failure | Self::TimedOut | Self::StartupFailure)
    }
}

/// A GitHub App as other objects embed it (`integration`): the owner of a check run, the App a
/// comment was made through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckApp {
    #[serde(default)]
    pub id: Option<u64>,
    /// `github-actions` for GitHub Actions jobs.
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

/// A check run's `output` as GitHub returns it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunOutput {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub annotations_count: u64,
}

/// `{ "id": .. }` — the check suite of a check run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdOnly {
    pub id: u64,
}

/// The minimal pull request embedded in a check run (`pull_requests[]`; empty for forks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunPullRequest {
    pub number: u64,
}

/// A check run (`GET /check-runs/{id}`, list-for-ref items, create/update answers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// For GitHub Actions this is also the job id.
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: CheckStatus,
    #[serde(default)]
    pub conclusion: Option<CheckConclusion>,
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub details_url: Option<String>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
    #[serde(default)]
    pub output: CheckRunOutput,
    #[serde(default)]
    pub app: Option<CheckApp>,
    #[serde(default)]
    pub check_suite: Option<IdOnly>,
    #[serde(default)]
    pub pull_requests: Vec<CheckRunPullRequest>,
}

/// `annotation_level` of a check annotation: the pure builders' own enum, which already
/// serialises as the API spells it.
pub use ci_medic_core::comment::AnnotationLevel;

/// An annotation as `GET /check-runs/{id}/annotations` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckAnnotation {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    #[serde(default)]
    pub start_column: Option<u64>,
    #[serde(default)]
    pub end_column: Option<u64>,
    #[serde(default)]
    pub annotation_level: Option<AnnotationLevel>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub raw_details: Option<String>,
}

/// An annotation to add through create/update check run. At most 50 per request (the client
/// refuses more); `start_column`/`end_column` only when `start_line == end_line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewAnnotation {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u64>,
    pub annotation_level: AnnotationLevel,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_details: Option<String>,
}

/// The `output` object sent with create/update check run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunOutputRequest {
    pub title: String,
    /// At most 65,535 characters.
    pub summary: String,
    /// At most 65,535 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// At most 50; appended to the run's existing annotations on update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<NewAnnotation>,
}

/// `POST /repos/{o}/{r}/check-runs` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateCheckRun {
    pub name: String,
    pub head_sha: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    /// Required when `status` is `completed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<CheckConclusion>,
    /// ci-medic's own record id, so a run can be found again after a lost answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckRunOutputRequest>,
}

/// `PATCH /repos/{o}/{r}/check-runs/{id}` body; `None` fields are left unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateCheckRun {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<CheckConclusion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckRunOutputRequest>,
}

/// An issue / pull-request conversation comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    pub html_url: String,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub author_association: Option<String>,
    /// The App the comment was made through (`nullable-integration`): ours for comments we
    /// post, `github-actions` for a workflow's, null for a person's.
    #[serde(default)]
    pub performed_via_github_app: Option<CheckApp>,
}

/// Reaction kinds GitHub accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReactionContent {
    #[serde(rename = "+1")]
    PlusOne,
    #[serde(rename = "-1")]
    MinusOne,
    #[serde(rename = "laugh")]
    Laugh,
    #[serde(rename = "confused")]
    Confused,
    #[serde(rename = "heart")]
    Heart,
    #[serde(rename = "hooray")]
    Hooray,
    #[serde(rename = "rocket")]
    Rocket,
    #[serde(rename = "eyes")]
    Eyes,
}

/// A reaction as GitHub returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    pub id: u64,
    pub content: ReactionContent,
    #[serde(default)]
    pub user: Option<User>,
}

/// The answer of "create reaction": GitHub says 201 when it created it, 200 when it existed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactionOutcome {
    pub reaction: Reaction,
    pub created: bool,
}

/// `GET /collaborators/{username}/permission`, read as raw strings (octocrab's enum is wrong).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollaboratorPermission {
    /// Legacy value: `admin`, `write`, `read` or `none` (maintain → write, triage → read).
    pub permission: String,
    /// The actual role: `admin`, `maintain`, `write`, `triage`, `read`, or a custom role name.
    #[serde(default)]
    pub role_name: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
}

impl CollaboratorPermission {
    /// The effective level: `role_name` when it is a built-in role, else the legacy
    /// `permission` (custom roles inherit from one of the legacy levels). Unknown → `None`.
    pub fn level(&self) -> Permission {
        fn parse(s: &str) -> Option<Permission> {
            Some(match s {
                "admin" => Permission::Admin,
                "maintain" => Permission::Maintain,
                "write" => Permission::Write,
                "triage" => Permission::Triage,
                "read" => Permission::Read,
                "none" => Permission::None,
                _ => return None,
            })
        }
        self.role_name
            .as_deref()
            .and_then(parse)
            .or_else(|| parse(&self.permission))
            .unwrap_or(Permission::None)
    }
}

/// A file read through the contents API, already base64-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    pub path: String,
    /// The blob sha (needed to build trees and to detect concurrent changes).
    pub sha: String,
    pub size: u64,
    pub content: Vec<u8>,
}

/// The object a git ref points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitObject {
    pub sha: String,
    /// `commit`, `tag`, ...
    #[serde(rename = "type")]
    pub kind: String,
}

/// A git reference (`refs/heads/main`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitRef {
    /// Fully qualified: `refs/heads/main`.
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub object: GitObject,
}

/// `{ "sha": .. }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShaOnly {
    pub sha: String,
}

/// Author or committer of a git commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitSignature {
    pub name: String,
    pub email: String,
    /// ISO 8601; GitHub fills it in when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

/// A git commit object (`GET/POST /git/commits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitCommit {
    pub sha: String,
    pub tree: ShaOnly,
    pub parents: Vec<ShaOnly>,
    pub message: String,
    #[serde(default)]
    pub author: Option<GitSignature>,
    #[serde(default)]
    pub committer: Option<GitSignature>,
}

/// `POST /git/commits` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateCommit {
    pub message: String,
    /// The tree sha.
    pub tree: String,
    pub parents: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<GitSignature>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub committer: Option<GitSignature>,
}

/// File mode of a tree entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileMode {
    #[serde(rename = "100644")]
    Regular,
    #[serde(rename = "100755")]
    Executable,
    #[serde(rename = "120000")]
    Symlink,
}

/// What a tree entry sets the path to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEntryContent {
    /// An existing blob (e.g. from `create_blob`).
    BlobSha(String),
    /// UTF-8 text GitHub turns into a blob.
    Inline(String),
    /// Remove the path (sent as `"sha": null`).
    Delete,
}

/// One entry of `POST /git/trees` (always a blob; ci-medic never writes submodules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: String,
    pub mode: FileMode,
    pub content: TreeEntryContent,
}

impl Serialize for TreeEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("path", &self.path)?;
        m.serialize_entry("mode", &self.mode)?;
        m.serialize_entry("type", "blob")?;
        match &self.content {
            TreeEntryContent::BlobSha(sha) => m.serialize_entry("sha", sha)?,
            TreeEntryContent::Inline(text) => m.serialize_entry("content", text)?,
            // GitHub spells "remove this path" as an explicit `"sha": null`.
            TreeEntryContent::Delete => m.serialize_entry("sha", &None::<String>)?,
        }
        m.end()
    }
}

/// A git tree as returned by `POST /git/trees`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTree {
    pub sha: String,
    #[serde(default)]
    pub truncated: bool,
}

/// A git tree as `GET /git/trees/{sha}` lists it (one level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTreeListing {
    pub sha: String,
    pub tree: Vec<GitTreeItem>,
    /// True when GitHub cut the listing short (over 100,000 entries or 7 MB).
    #[serde(default)]
    pub truncated: bool,
}

/// One entry of a [`GitTreeListing`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTreeItem {
    /// The entry's name (a plain name in a one-level listing).
    pub path: String,
    /// `100644`, `100755`, `120000` (symbolic link), `160000` (submodule) or `040000` (tree).
    pub mode: String,
    /// `blob`, `tree` or `commit` (a submodule).
    #[serde(rename = "type")]
    pub kind: String,
    pub sha: String,
}

/// The answer of `POST /app-manifests/{code}/conversions` (setup flow). Secrets stay secret.
#[derive(Debug, Clone, Deserialize)]
pub struct AppManifestConversion {
    pub id: u64,
    pub slug: String,
    pub name: String,
    pub html_url: String,
    #[serde(default)]
    pub owner: Option<User>,
    pub client_id: String,
    #[serde(deserialize_with = "secret")]
    pub client_secret: SecretString,
    #[serde(default, deserialize_with = "opt_secret")]
    pub webhook_secret: Option<SecretString>,
    /// The App's private key, PEM.
    #[serde(deserialize_with = "secret")]
    pub pem: SecretString,
}

pub(crate) fn secret<'de, D: Deserializer<'de>>(d: D) -> Result<SecretString, D::Error> {
    String::deserialize(d).map(SecretString::from)
}

fn opt_secret<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SecretString>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(SecretString::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_entry_spells_deletion_as_null_sha_and_inline_without_sha() {
        let entries = vec![
            TreeEntry {
                path: "a.rs".into(),
                mode: FileMode::Regular,
                content: TreeEntryContent::BlobSha("abc".into()),
            },
            TreeEntry {
                path: "b.rs".into(),
                mode: FileMode::Executable,
                content: TreeEntryContent::Inline("fn main() {}\n".into()),
            },
            TreeEntry {
                path: "c.rs".into(),
                mode: FileMode::Regular,
                content: TreeEntryContent::Delete,
            },
        ];
        let v = serde_json::to_value(&entries).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"path": "a.rs", "mode": "100644", "type": "blob", "sha": "abc"},
                {"path": "b.rs", "mode": "100755", "type": "blob", "content": "fn main() {}\n"},
                {"path": "c.rs", "mode": "100644", "type": "blob", "sha": null},
            ])
        );
    }

    #[test]
    fn permission_level_prefers_built_in_role_and_falls_back_to_legacy() {
        let p = |perm: &str, role: Option<&str>| CollaboratorPermission {
            permission: perm.into(),
            role_name: role.map(Into::into),
            user: None,
        };
        assert_eq!(p("write", Some("maintain")).level(), Permission::Maintain);
        assert_eq!(p("read", Some("triage")).level(), Permission::Triage);
        assert_eq!(
            p("write", Some("custom-releaser")).level(),
            Permission::Write
        );
        assert_eq!(p("weird", None).level(), Permission::None);
    }

    #[test]
    fn unknown_check_status_and_conclusion_do_not_break_decoding() {
        let v = serde_json::json!({
            "id": 1, "name": "n", "head_sha": "s", "status": "brand_new",
            "conclusion": "something_else"
        });
        let run: CheckRun = serde_json::from_value(v).unwrap();
        assert_eq!(run.status, CheckStatus::Unknown);
        assert_eq!(run.conclusion, Some(CheckConclusion::Unknown));
        assert!(run.pull_requests.is_empty());
    }
}

/// An Actions job (`GET /repos/{o}/{r}/actions/jobs/{id}`, and the items of a run's jobs
/// list): the run and attempt it belongs to, and its steps. Its id is its check run's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowJob {
    pub id: u64,
    pub run_id: u64,
    /// 1 for a run's first attempt; absent on GitHub Enterprise Server before 3.5.
    #[serde(default)]
    pub run_attempt: Option<u32>,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub steps: Vec<WorkflowStep>,
}

/// One of a job's `steps[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowStep {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub number: u32,
}
