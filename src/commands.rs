//! Stage: maintainer commands read from pull request comments, and who may give them.
//!
//! Parsing is pure (`ci_medic_core::commands`, re-exported here). This module adds the one
//! lookup that decides authority: the commenter's permission on the repository, asked of
//! GitHub (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`) — never inferred
//! from the payload's `author_association`, which a fork contributor's comment also carries.
//!
//! The handlers, one function per command over the shared
//! [`Context`](crate::orchestrator::Context), are the submodules: `comment` (a comment's
//! commands, its reaction and its one reply; `/help`), `approval` (`/approve`, `/reject`),
//! `retry` and `rerun`.

pub use ci_medic_core::commands::*;

mod approval;
pub(crate) mod comment;
mod rerun;
mod retry;

use tracing::info;

use ci_medic_core::comment as text;
use ci_medic_core::repo_config::{ApproversConfig, Permission, RepoConfig};

use crate::events::PrCommentCreated;
use crate::github::{GitHubApi, GitHubError, InstallationId, PullRequest, RepoRef};
use crate::jobs::JobError;
use crate::orchestrator::{Context, gh_err};
use comment::Outcome;

/// Why a commenter may not decide on a proposal (each maps to a `*_reply` builder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Permission below `approvers.min_permission`.
    Permission { has: Permission, needs: Permission },
    /// Not in `approvers.users`.
    NotListed,
    /// The pull request's author, and `approvers.allow_author` is false.
    Author,
}

/// Decides whether `login` may approve or reject on this pull request. Pure.
pub fn decide(
    approvers: &ApproversConfig,
    login: &str,
    permission: Permission,
    pr_author: Option<&str>,
) -> Result<(), Refusal> {
    if !permission.meets(approvers.min_permission) {
        return Err(Refusal::Permission {
            has: permission,
            needs: approvers.min_permission,
        });
    }
    if !approvers.users.is_empty()
        && !approvers
            .users
            .iter()
            .any(|u| u.eq_ignore_ascii_case(login))
    {
        return Err(Refusal::NotListed);
    }
    if !approvers.allow_author && pr_author.is_some_and(|a| a.eq_ignore_ascii_case(login)) {
        return Err(Refusal::Author);
    }
    Ok(())
}

/// Looks up the commenter's permission and applies [`decide`].
pub async fn authorize(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    approvers: &ApproversConfig,
    login: &str,
    pr_author: Option<&str>,
) -> Result<Result<(), Refusal>, GitHubError> {
    let permission = match gh.get_collaborator_permission(inst, repo, login).await {
        Ok(p) => p.level(),
        // Not a collaborator at all.
        Err(GitHubError::NotFound) => Permission::None,
        Err(e) => return Err(e),
    };
    Ok(decide(approvers, login, permission, pr_author))
}

/// Whether `approvers.allow_author` applies to a command: to those that decide a proposal or
/// spend the repository's CI, not to `/retry`, which only reads again what CI already said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthorRule {
    Applies,
    Exempt,
}

/// The one door every command that acts goes through: reads the pull request and checks the
/// commenter may give `command` on it. `Ok(Err(outcome))` is a refusal, already counted and
/// logged, whose reply is the handler's answer.
async fn admit(
    ctx: &Context,
    inst: InstallationId,
    repo: &RepoRef,
    c: &PrCommentCreated,
    config: &RepoConfig,
    command: &'static str,
    author_rule: AuthorRule,
) -> Result<Result<PullRequest, Outcome>, JobError> {
    let gh = ctx.github.as_ref();
    let pr = gh
        .get_pull_request(inst, repo, c.pr_number)
        .await
        .map_err(|e| gh_err("reading the pull request", e))?;
    let pr_author = match author_rule {
        AuthorRule::Applies => pr.user.as_ref().map(|u| u.login.as_str()),
        AuthorRule::Exempt => None,
    };
    match authorize(gh, inst, repo, &config.approvers, &c.author, pr_author)
        .await
        .map_err(|e| gh_err("reading the commenter's permission", e))?
    {
        Ok(()) => Ok(Ok(pr)),
        Err(r) => {
            ctx.metrics.stage(command, "refused_permission");
            info!(user = %c.author, refusal = ?r, command, "command refused");
            Ok(Err(Outcome::Refused(refusal_reply(&c.author, r))))
        }
    }
}

/// The reply to a command from someone who may not give it.
fn refusal_reply(author: &str, r: Refusal) -> String {
    match r {
        Refusal::Permission { has, needs } => text::not_permitted_reply(author, has, needs),
        Refusal::NotListed => text::not_an_approver_reply(author),
        Refusal::Author => text::author_not_allowed_reply(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_allowlist_and_author_rules() {
        let mut a = ApproversConfig::default();
        assert_eq!(decide(&a, "w", Permission::Write, None), Ok(()));
        assert_eq!(decide(&a, "m", Permission::Maintain, None), Ok(()));
        assert_eq!(decide(&a, "ad", Permission::Admin, None), Ok(()));
        assert_eq!(
            decide(&a, "r", Permission::Read, None),
            Err(Refusal::Permission {
                has: Permission::Read,
                needs: Permission::Write
            })
        );
        assert!(decide(&a, "t", Permission::Triage, None).is_err());
        assert!(decide(&a, "n", Permission::None, None).is_err());
        a.users = vec!["Alice".into()];
        assert_eq!(decide(&a, "alice", Permission::Write, None), Ok(()));
        assert_eq!(
            decide(&a, "bob", Permission::Admin, None),
            Err(Refusal::NotListed)
        );
        a.users.clear();
        a.allow_author = false;
        assert_eq!(
            decide(&a, "bob", Permission::Admin, Some("Bob")),
            Err(Refusal::Author)
        );
        assert_eq!(decide(&a, "bob", Permission::Admin, Some("carol")), Ok(()));
    }
}
