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
//!
//! Each file keeps the mode it has in the parent commit's tree (an executable stays
//! executable), read with [`tree_entry`] (or [`entry_in`] a [`whole_tree`]). It never writes
//! through a symbolic link, over a submodule or over a directory: such a path is
//! [`GitAgentError::NotARegularFile`] and nothing is created.
//!
//! `push` is the fix job's step over the shared context: where the commit goes (`push_plan`)
//! and the push of the prepared commit, recorded through the proposal machine.

pub(crate) mod push;

use crate::github::{
    CreateCommit, FileMode, GitHubApi, GitHubError, GitTreeItem, InstallationId, RepoRef,
    TreeEntry, TreeEntryContent,
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
    /// The path is not a regular file in the parent commit: ci-medic does not rewrite links,
    /// submodules or directories.
    #[error(
        "`{path}` is {what} in the commit the fix builds on; ci-medic only rewrites regular files, so nothing was pushed"
    )]
    NotARegularFile { path: String, what: String },
    #[error(transparent)]
    GitHub(#[from] GitHubError),
}

/// What a path is in a tree, as far as writing a fix into it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKind {
    /// Not in the tree (nor anything in its way).
    Absent,
    /// A regular file (`100644`) or an executable (`100755`).
    File(FileMode),
    /// Anything else, said in words: a symbolic link, a submodule, a directory, or a path that
    /// goes through a link or a file.
    Other(String),
}

impl PathKind {
    fn of(item: &GitTreeItem) -> PathKind {
        match (item.mode.as_str(), item.kind.as_str()) {
            ("100644", "blob") => PathKind::File(FileMode::Regular),
            ("100755", "blob") => PathKind::File(FileMode::Executable),
            ("120000", _) => PathKind::Other("a symbolic link".into()),
            ("160000", _) | (_, "commit") => PathKind::Other("a submodule".into()),
            (_, "tree") => PathKind::Other("a directory".into()),
            (mode, kind) => PathKind::Other(format!("a {kind} of mode {mode}")),
        }
    }
}

/// What `path` is in the tree `root_tree`, walking its directories one level at a time
/// (`GET /git/trees/{sha}`), so a path through a symbolic link is not mistaken for a file.
pub async fn tree_entry(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    root_tree: &str,
    path: &str,
) -> Result<PathKind, GitHubError> {
    let mut tree = root_tree.to_string();
    let mut parts = path.split('/').peekable();
    while let Some(name) = parts.next() {
        let listing = gh.get_git_tree(inst, repo, &tree).await?;
        let Some(item) = listing.tree.into_iter().find(|i| i.path == name) else {
            return Ok(PathKind::Absent);
        };
        if parts.peek().is_none() {
            return Ok(PathKind::of(&item));
        }
        if item.kind != "tree" {
            return Ok(PathKind::Other(format!(
                "reached through `{name}`, which is {}",
                match PathKind::of(&item) {
                    PathKind::Other(what) => what,
                    _ => "a file".to_string(),
                }
            )));
        }
        tree = item.sha;
    }
    Ok(PathKind::Absent)
}

/// Every entry under `root_tree`, read in one recursive request; `None` when GitHub cut the
/// listing short (then [`tree_entry`] walks the levels a path goes through).
pub async fn whole_tree(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    root_tree: &str,
) -> Result<Option<Vec<GitTreeItem>>, GitHubError> {
    let listing = gh.get_git_tree_recursive(inst, repo, root_tree).await?;
    Ok((!listing.truncated).then_some(listing.tree))
}

/// What `path` is in a whole-tree listing ([`whole_tree`]), with [`tree_entry`]'s answers: a
/// path under a link, a submodule or a file is not taken for a file (a recursive listing never
/// goes through them, so only its first such ancestor is listed).
pub fn entry_in(listing: &[GitTreeItem], path: &str) -> PathKind {
    let find = |p: &str| listing.iter().find(|i| i.path == p);
    let mut ancestor = String::new();
    let parts: Vec<&str> = path.split('/').collect();
    for (i, name) in parts.iter().enumerate() {
        if !ancestor.is_empty() {
            ancestor.push('/');
        }
        ancestor.push_str(name);
        let Some(item) = find(&ancestor) else {
            return PathKind::Absent;
        };
        if i + 1 == parts.len() {
            return PathKind::of(item);
        }
        if item.kind != "tree" {
            return PathKind::Other(format!(
                "reached through `{name}`, which is {}",
                match PathKind::of(item) {
                    PathKind::Other(what) => what,
                    _ => "a file".to_string(),
                }
            ));
        }
    }
    PathKind::Absent
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

/// What the caller already read of the parent commit's tree: its sha and the mode of each
/// regular file it will change. A commit's tree is the same in every repository holding the
/// commit, so what was read from a fork holds for the base repository too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownTree {
    pub tree_sha: String,
    pub modes: Vec<(String, FileMode)>,
}

impl KnownTree {
    fn mode(&self, path: &str) -> Option<FileMode> {
        self.modes.iter().find(|(p, _)| p == path).map(|(_, m)| *m)
    }
}

/// The git agent over a GitHub client.
pub struct GitAgent<'a> {
    pub gh: &'a dyn GitHubApi,
    pub inst: InstallationId,
}

impl GitAgent<'_> {
    /// Creates the blobs, the tree and the commit (objects only; no ref changes). Returns the
    /// new commit's sha. Safe to repeat: objects are content-addressed. `known` spares reading
    /// the parent's tree again when the caller has read every changed path's mode in it.
    pub async fn prepare(
        &self,
        target: &PushTarget,
        parent: &str,
        files: &[(String, String)],
        message: &str,
        known: Option<&KnownTree>,
    ) -> Result<String, GitAgentError> {
        let repo = &target.repo;
        let known_modes: Option<Vec<FileMode>> =
            known.and_then(|k| files.iter().map(|(p, _)| k.mode(p)).collect());
        if let (Some(k), Some(modes)) = (known, known_modes) {
            return self
                .write_objects(repo, &k.tree_sha, parent, files, modes, message)
                .await;
        }
        let base = self.gh.get_git_commit(self.inst, repo, parent).await?;
        // Every path is checked before any object is created.
        let mut modes = Vec::with_capacity(files.len());
        for (path, _) in files {
            let mode = match tree_entry(self.gh, self.inst, repo, &base.tree.sha, path).await? {
                PathKind::File(mode) => mode,
                // A new file; the guard decides whether a patch may create one.
                PathKind::Absent => FileMode::Regular,
                PathKind::Other(what) => {
                    return Err(GitAgentError::NotARegularFile {
                        path: path.clone(),
                        what,
                    });
                }
            };
            modes.push(mode);
        }
        self.write_objects(repo, &base.tree.sha, parent, files, modes, message)
            .await
    }

    /// The tree over `base_tree` (with the files' new text) and the commit on `parent`.
    async fn write_objects(
        &self,
        repo: &RepoRef,
        base_tree: &str,
        parent: &str,
        files: &[(String, String)],
        modes: Vec<FileMode>,
        message: &str,
    ) -> Result<String, GitAgentError> {
        // The files' text goes inside the tree request (GitHub writes the blobs itself): one
        // request for the tree instead of one more per file. Patched files are UTF-8 text.
        let entries: Vec<TreeEntry> = files
            .iter()
            .zip(modes)
            .map(|((path, content), mode)| TreeEntry {
                path: path.clone(),
                mode,
                content: TreeEntryContent::Inline(content.clone()),
            })
            .collect();
        let tree = self
            .gh
            .create_tree(self.inst, repo, base_tree, &entries)
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

    /// Moves the branch to `commit` (whose parent is `parent`), fast-forward only. Done already
    /// when the branch is at `commit`; `Stale` when it moved on from `parent` (a new branch:
    /// when it exists at another commit).
    pub async fn publish(
        &self,
        target: &PushTarget,
        parent: &str,
        commit: &str,
    ) -> Result<(), GitAgentError> {
        let repo = &target.repo;
        let git_ref = format!("heads/{}", target.branch);
        if target.new_branch {
            // Created without reading first: GitHub refuses an existing ref with 422
            // ("Reference already exists"), and only then is it read, to tell a retry whose
            // creation landed from a branch someone else made.
            return match self
                .gh
                .create_ref(self.inst, repo, &format!("refs/{git_ref}"), commit)
                .await
            {
                Ok(_) => Ok(()),
                Err(refused @ GitHubError::Unprocessable { .. }) => {
                    match self.gh.get_git_ref(self.inst, repo, &git_ref).await {
                        Ok(r) if r.object.sha == commit => Ok(()),
                        Ok(r) => Err(GitAgentError::Stale {
                            branch: target.branch.clone(),
                            expected: commit.into(),
                            actual: r.object.sha,
                        }),
                        // Refused for another reason than an existing ref: that reason.
                        Err(GitHubError::NotFound) => Err(refused.into()),
                        Err(e) => Err(e.into()),
                    }
                }
                Err(e) => Err(e.into()),
            };
        }
        // No read of the ref first: the update is fast-forward only (`force: false`), which
        // GitHub checks atomically and refuses with 422 "Update is not a fast forward" when the
        // branch moved on from the commit the fix builds on: nothing is overwritten. A branch
        // already at `commit` (a retry after the push landed) is a fast-forward of itself.
        // Only a refusal costs a read, to tell "already pushed" from "moved". A branch reset to
        // an ancestor of `parent` meanwhile is a fast-forward to `commit` too (nothing on it is
        // lost; the commits the reset dropped come back with the fix): a read first would
        // only have narrowed that window, never closed it, as GitHub's API has no
        // compare-and-swap on a ref.
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
