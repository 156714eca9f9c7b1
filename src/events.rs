//! Events: GitHub webhook payloads turned into owned domain values, and one handler per kind.
//!
//! Two parsing steps, both pure:
//! - [`route`], at the intake: a minimal parse that decides whether a delivery is handled and
//!   which serialisation key its job gets (one pull request, one installation). It also proves
//!   the body is well-formed JSON.
//! - [`Event::parse`], in the worker: the fields the pipeline uses, as owned structs. Pipeline
//!   code never touches raw payload JSON.
//!
//! The handlers, one function per event kind over the shared
//! [`Context`](crate::orchestrator::Context), are the submodules: `check_run` (a completed
//! check: the CI monitor's verdicts first, then `analysis` of a failure, or `default_branch`
//! outcomes), `pull_request` (closed, reopened) and `installation`. A comment's commands are
//! handled by [`crate::commands`].
//!
//! The parsing never performs I/O and never trusts a payload field for authorisation: who may
//! approve is looked up from GitHub by the commands stage, not read from `author_association`.

use serde::Deserialize;

pub use crate::github::RepoRef;

pub(crate) mod analysis;
pub(crate) mod check_run;
pub(crate) mod default_branch;
pub(crate) mod installation;
pub(crate) mod pull_request;

/// What the intake does with a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `ping`: answered, nothing queued.
    Ping,
    /// Queue a job with this serialisation key.
    Handle { key: String },
    /// Acknowledged and ignored (unknown event or action, our own or another bot's comment…).
    Ignore { reason: &'static str },
}

#[derive(Deserialize)]
struct Minimal {
    action: Option<String>,
    repository: Option<MinRepo>,
    installation: Option<MinInstallation>,
    check_run: Option<MinCheckRun>,
    issue: Option<MinIssue>,
    comment: Option<MinComment>,
    pull_request: Option<MinNumber>,
}
#[derive(Deserialize)]
struct MinRepo {
    full_name: String,
    id: Option<u64>,
}
#[derive(Deserialize)]
struct MinInstallation {
    id: u64,
}
#[derive(Deserialize)]
struct MinCheckRun {
    head_sha: String,
    #[serde(default)]
    pull_requests: Vec<PrLink>,
}
/// An entry of `check_run.pull_requests`: on public repositories GitHub also lists pull
/// requests of *other* repositories whose head is this commit (a fork's own pull requests),
/// so an entry counts only when its base repository is the delivery's.
#[derive(Deserialize)]
struct PrLink {
    number: u64,
    base: Option<PrLinkBase>,
    #[serde(default)]
    head: Option<PrLinkHead>,
}
#[derive(Deserialize)]
struct PrLinkHead {
    sha: Option<String>,
}
#[derive(Deserialize)]
struct PrLinkBase {
    repo: Option<PrLinkRepo>,
}
#[derive(Deserialize)]
struct PrLinkRepo {
    id: Option<u64>,
}

/// The numbers of the pull requests in `links` that belong to repository `repo_id` (all of
/// them when either side does not say).
fn own_pull_requests(links: &[PrLink], repo_id: Option<u64>) -> impl Iterator<Item = u64> + '_ {
    links
        .iter()
        .filter(move |l| {
            let base = l
                .base
                .as_ref()
                .and_then(|b| b.repo.as_ref())
                .and_then(|r| r.id);
            match (base, repo_id) {
                (Some(base), Some(repo)) => base == repo,
                _ => true,
            }
        })
        .map(|l| l.number)
}
#[derive(Deserialize)]
struct MinNumber {
    number: u64,
}
#[derive(Deserialize)]
struct MinIssue {
    number: u64,
    pull_request: Option<serde::de::IgnoredAny>,
}
#[derive(Deserialize)]
struct MinComment {
    user: Option<MinUser>,
}
#[derive(Deserialize)]
struct MinUser {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// The `action` of a payload, if it parses and has one.
pub fn action_of(payload: &[u8]) -> Option<String> {
    serde_json::from_slice::<Minimal>(payload)
        .ok()
        .and_then(|m| m.action)
}

/// Decides what to do with a verified delivery. An `Err` means the body is not valid JSON (or
/// not a JSON object), which the intake answers with 400.
pub fn route(event: &str, payload: &[u8]) -> Result<(Route, Option<String>), serde_json::Error> {
    let m: Minimal = serde_json::from_slice(payload)?;
    let action = m.action.clone();
    let repo = m
        .repository
        .as_ref()
        .map(|r| r.full_name.as_str())
        .unwrap_or("-");
    let repo_id = m.repository.as_ref().and_then(|r| r.id);
    let route = match (event, action.as_deref()) {
        ("ping", _) => Route::Ping,
        ("check_run", Some("completed")) => match &m.check_run {
            Some(cr) => Route::Handle {
                key: match own_pull_requests(&cr.pull_requests, repo_id).next() {
                    Some(pr) => format!("{repo}#{pr}"),
                    // Not linked to a pull request (yet): serialise per commit, so the CI
                    // monitor still sees runs on commits it pushed.
                    None => format!("{repo}@{}", cr.head_sha),
                },
            },
            None => Route::Ignore {
                reason: "check_run without check_run object",
            },
        },
        ("issue_comment", Some("created")) => match (&m.issue, &m.comment) {
            (Some(issue), Some(c)) if issue.pull_request.is_some() => {
                let is_bot = c.user.as_ref().and_then(|u| u.kind.as_deref()) == Some("Bot");
                if is_bot {
                    Route::Ignore {
                        reason: "comment by a bot",
                    }
                } else {
                    Route::Handle {
                        key: format!("{repo}#{}", issue.number),
                    }
                }
            }
            (Some(_), _) => Route::Ignore {
                reason: "comment on an issue, not a pull request",
            },
            _ => Route::Ignore {
                reason: "issue_comment without issue",
            },
        },
        ("issue_comment", _) => Route::Ignore {
            reason: "only new comments carry commands",
        },
        ("pull_request", Some("synchronize" | "closed" | "reopened")) => match &m.pull_request {
            Some(pr) => Route::Handle {
                key: format!("{repo}#{}", pr.number),
            },
            None => Route::Ignore {
                reason: "pull_request without pull_request object",
            },
        },
        ("installation" | "installation_repositories", Some(_)) => match &m.installation {
            Some(i) => Route::Handle {
                key: format!("installation:{}", i.id),
            },
            None => Route::Ignore {
                reason: "installation event without installation",
            },
        },
        _ => Route::Ignore {
            reason: "event or action not used by ci-medic",
        },
    };
    Ok((route, action))
}

// ---------------------------------------------------------------------------------------------
// Domain events
// ---------------------------------------------------------------------------------------------

/// A check run finished.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRunCompleted {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub check_run_id: u64,
    pub name: String,
    pub head_sha: String,
    pub conclusion: Option<String>,
    /// Slug of the App that owns the check run (`github-actions` for Actions jobs).
    pub app_slug: Option<String>,
    pub app_id: Option<u64>,
    pub html_url: Option<String>,
    pub details_url: Option<String>,
    pub completed_at: Option<String>,
    /// This repository's pull requests GitHub links the run to (a fork's pull request is not
    /// among them: GitHub leaves it out; other repositories' ones are dropped here).
    pub pull_requests: Vec<u64>,
    /// The head sha each linked pull request had when GitHub sent the event (GitHub links an
    /// open pull request by its head sha or its head branch, so a head may have moved on).
    pub pull_request_heads: Vec<(u64, String)>,
    /// The branch the check's suite ran for (`check_suite.head_branch`), when the event says.
    pub head_branch: Option<String>,
    /// The repository's default branch (`repository.default_branch`), when the event says.
    pub default_branch: Option<String>,
}

impl CheckRunCompleted {
    /// The same event built from the API's view of a check run, for work that finds a run by
    /// asking GitHub rather than by webhook (CI polling, `/retry`).
    pub fn from_api(
        repo: RepoRef,
        installation_id: u64,
        run: &crate::github::CheckRun,
        pr_number: u64,
    ) -> Self {
        CheckRunCompleted {
            repo,
            installation_id: Some(installation_id),
            check_run_id: run.id,
            name: run.name.clone(),
            head_sha: run.head_sha.clone(),
            // The webhook's spelling (`failure`, `timed_out`…), which is the API enum's serde form.
            conclusion: run
                .conclusion
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            app_slug: run.app.as_ref().and_then(|a| a.slug.clone()),
            app_id: run.app.as_ref().and_then(|a| a.id),
            html_url: run.html_url.clone(),
            details_url: run.details_url.clone(),
            completed_at: run.completed_at.clone(),
            pull_requests: vec![pr_number],
            // The API's view names no heads: the pull request is read.
            pull_request_heads: Vec::new(),
            // Found through a pull request: not a default-branch check.
            head_branch: None,
            default_branch: None,
        }
    }

    /// The check ran for a push to the repository's default branch (not for a pull request's
    /// head, which GitHub would have linked).
    pub fn on_default_branch(&self) -> bool {
        self.pull_requests.is_empty()
            && self.head_branch.is_some()
            && self.head_branch == self.default_branch
    }
}

/// A new comment on a pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct PrCommentCreated {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub pr_number: u64,
    pub comment_id: u64,
    pub body: String,
    pub author: String,
    pub author_is_bot: bool,
    pub html_url: String,
    pub created_at: Option<String>,
}

/// A pull request changed (new head, closed, reopened).
#[derive(Debug, Clone, PartialEq)]
pub struct PullRequestChanged {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    pub action: String,
    pub number: u64,
    pub head_sha: String,
    pub state: String,
}

/// The App was installed, uninstalled, or its repositories changed.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallationChanged {
    pub installation_id: u64,
    pub action: String,
    pub account: Option<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Every event the pipeline handles.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    CheckRunCompleted(CheckRunCompleted),
    PrCommentCreated(PrCommentCreated),
    PullRequestChanged(PullRequestChanged),
    InstallationChanged(InstallationChanged),
}

/// Why a stored payload could not become an [`Event`].
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("payload is not valid JSON for `{event}`: {source}")]
    Malformed {
        event: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("`{event}`/{action} is not handled")]
    Unhandled { event: String, action: String },
    #[error("payload has no valid `repository.full_name`")]
    NoRepository,
}

#[derive(Deserialize)]
struct P {
    action: Option<String>,
    repository: Option<PRepo>,
    installation: Option<MinInstallation>,
    check_run: Option<PCheckRun>,
    issue: Option<PIssue>,
    comment: Option<PComment>,
    pull_request: Option<PPull>,
    #[serde(default)]
    repositories_added: Vec<PRepo>,
    #[serde(default)]
    repositories_removed: Vec<PRepo>,
    #[serde(default)]
    repositories: Vec<PRepo>,
}
#[derive(Deserialize)]
struct PRepo {
    full_name: String,
    id: Option<u64>,
    /// Only in the event's `repository` (not in the lists of installation events).
    #[serde(default)]
    default_branch: Option<String>,
}
#[derive(Deserialize)]
struct PCheckRun {
    id: u64,
    name: String,
    head_sha: String,
    conclusion: Option<String>,
    app: Option<PApp>,
    html_url: Option<String>,
    details_url: Option<String>,
    completed_at: Option<String>,
    #[serde(default)]
    pull_requests: Vec<PrLink>,
    check_suite: Option<PCheckSuite>,
}
#[derive(Deserialize)]
struct PCheckSuite {
    /// `null` for a check on a tag or a detached commit.
    head_branch: Option<String>,
}
#[derive(Deserialize)]
struct PApp {
    id: Option<u64>,
    slug: Option<String>,
}
#[derive(Deserialize)]
struct PIssue {
    number: u64,
    pull_request: Option<serde::de::IgnoredAny>,
}
#[derive(Deserialize)]
struct PComment {
    id: u64,
    body: Option<String>,
    user: PUser,
    html_url: String,
    created_at: Option<String>,
}
#[derive(Deserialize)]
struct PUser {
    login: String,
    #[serde(rename = "type")]
    kind: Option<String>,
}
#[derive(Deserialize)]
struct PPull {
    number: u64,
    state: String,
    head: PHead,
}
#[derive(Deserialize)]
struct PHead {
    sha: String,
}
#[derive(Deserialize)]
struct PInstallationFull {
    installation: PInstallationAccount,
}
#[derive(Deserialize)]
struct PInstallationAccount {
    id: u64,
    account: Option<PAccount>,
}
#[derive(Deserialize)]
struct PAccount {
    login: String,
}

impl Event {
    /// Builds the domain event for a stored delivery.
    pub fn parse(event: &str, payload: &[u8]) -> Result<Event, EventError> {
        let malformed = |source| EventError::Malformed {
            event: event.to_string(),
            source,
        };
        let p: P = serde_json::from_slice(payload).map_err(malformed)?;
        let action = p.action.clone().unwrap_or_default();
        let unhandled = || EventError::Unhandled {
            event: event.to_string(),
            action: action.clone(),
        };
        let repo = || {
            p.repository
                .as_ref()
                .and_then(|r| RepoRef::parse(&r.full_name))
                .ok_or(EventError::NoRepository)
        };
        let installation_id = p.installation.as_ref().map(|i| i.id);
        match event {
            "check_run" if action == "completed" => {
                let cr = p.check_run.as_ref().ok_or_else(unhandled)?;
                Ok(Event::CheckRunCompleted(CheckRunCompleted {
                    repo: repo()?,
                    installation_id,
                    check_run_id: cr.id,
                    name: cr.name.clone(),
                    head_sha: cr.head_sha.clone(),
                    conclusion: cr.conclusion.clone(),
                    app_slug: cr.app.as_ref().and_then(|a| a.slug.clone()),
                    app_id: cr.app.as_ref().and_then(|a| a.id),
                    html_url: cr.html_url.clone(),
                    details_url: cr.details_url.clone(),
                    completed_at: cr.completed_at.clone(),
                    pull_requests: own_pull_requests(
                        &cr.pull_requests,
                        p.repository.as_ref().and_then(|r| r.id),
                    )
                    .collect(),
                    pull_request_heads: cr
                        .pull_requests
                        .iter()
                        .filter_map(|l| {
                            let sha = l.head.as_ref()?.sha.clone()?;
                            Some((l.number, sha))
                        })
                        .collect(),
                    head_branch: cr.check_suite.as_ref().and_then(|s| s.head_branch.clone()),
                    default_branch: p.repository.as_ref().and_then(|r| r.default_branch.clone()),
                }))
            }
            "issue_comment" if action == "created" => {
                let issue = p.issue.as_ref().ok_or_else(unhandled)?;
                if issue.pull_request.is_none() {
                    return Err(unhandled());
                }
                let c = p.comment.as_ref().ok_or_else(unhandled)?;
                Ok(Event::PrCommentCreated(PrCommentCreated {
                    repo: repo()?,
                    installation_id,
                    pr_number: issue.number,
                    comment_id: c.id,
                    body: c.body.clone().unwrap_or_default(),
                    author: c.user.login.clone(),
                    author_is_bot: c.user.kind.as_deref() == Some("Bot"),
                    html_url: c.html_url.clone(),
                    created_at: c.created_at.clone(),
                }))
            }
            "pull_request" => {
                let pr = p.pull_request.as_ref().ok_or_else(unhandled)?;
                Ok(Event::PullRequestChanged(PullRequestChanged {
                    repo: repo()?,
                    installation_id,
                    action: action.clone(),
                    number: pr.number,
                    head_sha: pr.head.sha.clone(),
                    state: pr.state.clone(),
                }))
            }
            "installation" | "installation_repositories" => {
                let full: PInstallationFull = serde_json::from_slice(payload).map_err(malformed)?;
                let names = |v: &[PRepo]| v.iter().map(|r| r.full_name.clone()).collect::<Vec<_>>();
                let (added, removed) = match (event, action.as_str()) {
                    ("installation", "created") => (names(&p.repositories), vec![]),
                    ("installation", "deleted") => (vec![], names(&p.repositories)),
                    _ => (names(&p.repositories_added), names(&p.repositories_removed)),
                };
                Ok(Event::InstallationChanged(InstallationChanged {
                    installation_id: full.installation.id,
                    action: action.clone(),
                    account: full.installation.account.map(|a| a.login),
                    added,
                    removed,
                }))
            }
            _ => Err(unhandled()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let cr = br#"{"action":"completed","repository":{"full_name":"o/r"},"check_run":{"head_sha":"abc","pull_requests":[{"number":7}]}}"#;
        assert_eq!(
            route("check_run", cr).unwrap().0,
            Route::Handle {
                key: "o/r#7".into()
            }
        );
        let cr = br#"{"action":"completed","repository":{"full_name":"o/r"},"check_run":{"head_sha":"abc","pull_requests":[]}}"#;
        assert_eq!(
            route("check_run", cr).unwrap().0,
            Route::Handle {
                key: "o/r@abc".into()
            }
        );
        assert!(matches!(
            route("check_run", br#"{"action":"created"}"#).unwrap().0,
            Route::Ignore { .. }
        ));
        assert_eq!(route("ping", br#"{"zen":"x"}"#).unwrap().0, Route::Ping);
        let bot = br#"{"action":"created","repository":{"full_name":"o/r"},"issue":{"number":3,"pull_request":{}},"comment":{"user":{"type":"Bot"}}}"#;
        assert!(matches!(
            route("issue_comment", bot).unwrap().0,
            Route::Ignore { .. }
        ));
        let human = br#"{"action":"created","repository":{"full_name":"o/r"},"issue":{"number":3,"pull_request":{}},"comment":{"user":{"type":"User"}}}"#;
        assert_eq!(
            route("issue_comment", human).unwrap().0,
            Route::Handle {
                key: "o/r#3".into()
            }
        );
        assert!(route("check_run", b"{not json").is_err());
        assert!(route("check_run", b"[1,2]").is_err());
        assert!(matches!(
            route("star", b"{}").unwrap().0,
            Route::Ignore { .. }
        ));
    }

    #[test]
    fn the_linked_pull_requests_heads_are_kept() {
        // `check_run.pull_requests` as in GitHub's example `check_run.completed` delivery
        // (`shared/github/webhooks/check_run/completed.payload.json`).
        let cr = br#"{"action":"completed","repository":{"full_name":"Codertocat/Hello-World","id":186853002},
            "check_run":{"id":128620228,"name":"Octocoders-linter","head_sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821","conclusion":"success",
              "pull_requests":[{"url":"https://api.github.com/repos/Codertocat/Hello-World/pulls/2","id":279147437,"number":2,"head":{"ref":"changes","sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821","repo":{"id":186853002,"url":"https://api.github.com/repos/Codertocat/Hello-World","name":"Hello-World"}},"base":{"ref":"master","sha":"f95f852bd8fca8fcc58a9a2d6c842781e32a215e","repo":{"id":186853002,"url":"https://api.github.com/repos/Codertocat/Hello-World","name":"Hello-World"}}}]}}"#;
        let Event::CheckRunCompleted(e) = Event::parse("check_run", cr).unwrap() else {
            panic!("check run event");
        };
        assert_eq!(e.pull_requests, vec![2]);
        assert_eq!(
            e.pull_request_heads,
            vec![(2, "ec26c3e57ca3a959ca5aad62de7213c562f8c821".to_string())]
        );
    }

    #[test]
    fn pull_requests_of_other_repositories_are_not_ours() {
        // As GitHub sends it for a public repository: #3 is a pull request of a fork whose
        // head is this commit, #7 is this repository's own.
        let cr = br#"{"action":"completed","repository":{"full_name":"o/r","id":10},
            "installation":{"id":1},
            "check_run":{"id":5,"name":"lint","head_sha":"abc","conclusion":"failure",
              "pull_requests":[
                {"number":3,"base":{"ref":"main","sha":"x","repo":{"id":99,"name":"r","url":"https://api.github.com/repos/fork/r"}}},
                {"number":7,"base":{"ref":"main","sha":"y","repo":{"id":10,"name":"r","url":"https://api.github.com/repos/o/r"}}}]}}"#;
        assert_eq!(
            route("check_run", cr).unwrap().0,
            Route::Handle {
                key: "o/r#7".into()
            }
        );
        let Event::CheckRunCompleted(e) = Event::parse("check_run", cr).unwrap() else {
            panic!("check run event");
        };
        assert_eq!(e.pull_requests, vec![7]);
        // Only another repository's pull request: none of ours; serialised by commit.
        let foreign = br#"{"action":"completed","repository":{"full_name":"o/r","id":10},
            "check_run":{"id":5,"name":"lint","head_sha":"abc",
              "pull_requests":[{"number":3,"base":{"repo":{"id":99}}}]}}"#;
        assert_eq!(
            route("check_run", foreign).unwrap().0,
            Route::Handle {
                key: "o/r@abc".into()
            }
        );
    }

    #[test]
    fn repo_ref() {
        assert_eq!(RepoRef::parse("a/b").unwrap().full_name(), "a/b");
        for bad in ["a", "a/", "/b", "a/b/c", "../x"] {
            assert!(RepoRef::parse(bad).is_none(), "{bad}");
        }
    }
}
