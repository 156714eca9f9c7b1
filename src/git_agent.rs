//! Stage: the git agent — pushes one fix commit to the pull request's branch.
//!
//! Through the Git Data API only: blobs, a tree on the proposal commit's tree, a commit whose
//! parent is the commit the proposal was made for, then a fast-forward-only update of the
//! branch ref. It never force-pushes: a branch that moved means the proposal is stale, and
//! nothing is pushed. When the branch lives in a fork that does not allow maintainer edits,
//! the commit goes to a `ci-medic/<DDS id>` branch in the base repository instead.
//!
//! Idempotent across crashes: the caller stores the commit sha returned by
//! [`GitAgent::prepare`] before calling [`GitAgent::publish`], and `publish` treats a branch
//! already at that commit as done, so a restart never pushes twice. It never decides what to
//! change (the fix agent does) and never checks the patch (the guard does).

use crate::github::{
    CreateCommit, FileMode, GitHubApi, GitHubError, InstallationId, RepoRef, TreeEntry,
    TreeEntryContent,
};

/// Where the commit goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PushTarget {
    /// Repository that holds the branch.
    pub repo: RepoRef,
    /// Branch name (without `refs/heads/`).
    pub branch: String,
    /// True for the fallback branch created in the base repository.
    pub new_branch: bool,
}

/// Errors of the git agent. `Stale` is the expected, user-facing outcome of a moved branch.
#[derive(Debug, thiserror::Error)]
pub enum GitAgentError {
    #[error(
        "the branch `{branch}` moved to {actual} since the proposal was made for {expected}; nothing was pushed"
    )]
    Stale {
        branch: String,
        expected: String,
        actual: String,
    },
    #[error(transparent)]
    GitHub(#[from] GitHubError),
}

/// Chooses where to push: the head branch, or the fallback branch for a fork that does not
/// allow maintainer edits.
pub fn target_for(
    base_repo: &RepoRef,
    head_repo: Option<&RepoRef>,
    head_branch: &str,
    maintainer_can_modify: bool,
    fix_id: &str,
) -> PushTarget {
    match head_repo {
        Some(head) if head != base_repo && !maintainer_can_modify => PushTarget {
            repo: base_repo.clone(),
            branch: format!("ci-medic/{fix_id}"),
            new_branch: true,
        },
        Some(head) => PushTarget {
            repo: head.clone(),
            branch: head_branch.to_string(),
            new_branch: false,
        },
        None => PushTarget {
            repo: base_repo.clone(),
            branch: head_branch.to_string(),
            new_branch: false,
        },
    }
}

/// The git agent over a GitHub client.
pub struct GitAgent<'a> {
    pub gh: &'a dyn GitHubApi,
    pub inst: InstallationId,
}

impl GitAgent<'_> {
    /// Creates the blobs, the tree and the commit (objects only; no ref changes). Returns the
    /// new commit's sha. Safe to repeat: objects are content-addressed.
    pub async fn prepare(
        &self,
        target: &PushTarget,
        parent: &str,
        files: &[(String, String)],
        message: &str,
    ) -> Result<String, GitAgentError> {
        let repo = &target.repo;
        let base = self.gh.get_git_commit(self.inst, repo, parent).await?;
        let mut entries = Vec::new();
        for (path, content) in files {
            let blob = self
                .gh
                .create_blob(self.inst, repo, content.as_bytes())
                .await?;
            entries.push(TreeEntry {
                path: path.clone(),
                mode: FileMode::Regular,
                content: TreeEntryContent::BlobSha(blob.sha),
            });
        }
        let tree = self
            .gh
            .create_tree(self.inst, repo, &base.tree.sha, &entries)
            .await?;
        let commit = self
            .gh
            .create_commit(
                self.inst,
                repo,
                &CreateCommit {
                    message: message.to_string(),
                    tree: tree.sha,
                    parents: vec![parent.to_string()],
                    author: None,
                    committer: None,
                },
            )
            .await?;
        Ok(commit.sha)
    }

    /// Moves the branch from `parent` to `commit`, fast-forward only. Done already when the
    /// branch is at `commit`; `Stale` when it is anywhere else but `parent`.
    pub async fn publish(
        &self,
        target: &PushTarget,
        parent: &str,
        commit: &str,
    ) -> Result<(), GitAgentError> {
        let repo = &target.repo;
        let git_ref = format!("heads/{}", target.branch);
        if target.new_branch {
            return match self.gh.get_git_ref(self.inst, repo, &git_ref).await {
                Ok(r) if r.object.sha == commit => Ok(()),
                Ok(r) => Err(GitAgentError::Stale {
                    branch: target.branch.clone(),
                    expected: commit.into(),
                    actual: r.object.sha,
                }),
                Err(GitHubError::NotFound) => {
                    self.gh
                        .create_ref(self.inst, repo, &format!("refs/{git_ref}"), commit)
                        .await?;
                    Ok(())
                }
                Err(e) => Err(e.into()),
            };
        }
        let current = self.gh.get_git_ref(self.inst, repo, &git_ref).await?;
        if current.object.sha == commit {
            return Ok(());
        }
        if current.object.sha != parent {
            return Err(GitAgentError::Stale {
                branch: target.branch.clone(),
                expected: parent.into(),
                actual: current.object.sha,
            });
        }
        match self.gh.update_ref(self.inst, repo, &git_ref, commit).await {
            Ok(_) => Ok(()),
            Err(GitHubError::NotFastForward { .. }) => {
                let now = self.gh.get_git_ref(self.inst, repo, &git_ref).await?;
                if now.object.sha == commit {
                    Ok(())
                } else {
                    Err(GitAgentError::Stale {
                        branch: target.branch.clone(),
                        expected: parent.into(),
                        actual: now.object.sha,
                    })
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_without_maintainer_edits_gets_a_branch_in_the_base_repo() {
        let base = RepoRef::new("o", "r");
        let fork = RepoRef::new("f", "r");
        let t = target_for(&base, Some(&fork), "feature", false, "DDS-FIX-20260101-001");
        assert_eq!(
            t,
            PushTarget {
                repo: base.clone(),
                branch: "ci-medic/DDS-FIX-20260101-001".into(),
                new_branch: true
            }
        );
        let t = target_for(&base, Some(&fork), "feature", true, "DDS-FIX-20260101-001");
        assert_eq!(
            t,
            PushTarget {
                repo: fork.clone(),
                branch: "feature".into(),
                new_branch: false
            }
        );
        let t = target_for(&base, Some(&base), "feature", false, "x");
        assert_eq!(t.repo, base);
        assert!(!t.new_branch);
    }
}
