//! A tiny content-addressed git object store: blobs, hierarchical trees and commits whose ids are
//! the real git SHA-1 of `"{kind} {len}\0" + body`, so shas computed by a real `git` agree.
//!
//! It never touches the disk and never does I/O; the whole store lives in memory.

use std::collections::{BTreeMap, HashMap};

use sha1::{Digest, Sha1};

/// File mode of a regular file, as git writes it in a tree.
pub const MODE_FILE: &str = "100644";
/// File mode of a sub-tree.
pub const MODE_TREE: &str = "040000";
/// File mode of an executable file.
pub const MODE_EXECUTABLE: &str = "100755";
/// File mode of a symbolic link (the blob holds the target path).
pub const MODE_SYMLINK: &str = "120000";
/// File mode of a submodule (a gitlink: the entry's sha is a commit of another repository).
pub const MODE_SUBMODULE: &str = "160000";

/// The object type git gives an entry of this mode: a gitlink names a commit, not a blob.
pub fn kind_of_mode(mode: &str) -> &'static str {
    match mode {
        MODE_SUBMODULE => "commit",
        MODE_TREE => "tree",
        _ => "blob",
    }
}

/// One entry of a stored tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeEntry {
    pub mode: String,
    /// `blob` or `tree`.
    pub kind: &'static str,
    pub sha: String,
}

/// A commit as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author_name: String,
    pub author_email: String,
    /// RFC 3339, UTC.
    pub date: String,
}

/// A flat view of a tree: repo-relative path → (mode, blob sha).
pub type FlatTree = BTreeMap<String, (String, String)>;

#[derive(Clone, Debug, Default)]
pub struct ObjectStore {
    blobs: HashMap<String, Vec<u8>>,
    trees: HashMap<String, BTreeMap<String, TreeEntry>>,
    commits: HashMap<String, Commit>,
}

fn object_id(kind: &str, body: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("{kind} {}\0", body.len()).as_bytes());
    h.update(body);
    hex::encode(h.finalize())
}

/// Git orders tree entries by name, comparing a sub-tree's name as if it ended with `/`.
fn git_sort_key(name: &str, entry: &TreeEntry) -> Vec<u8> {
    let mut k = name.as_bytes().to_vec();
    if entry.kind == "tree" {
        k.push(b'/');
    }
    k
}

impl ObjectStore {
    pub fn put_blob(&mut self, content: &[u8]) -> String {
        let id = object_id("blob", content);
        self.blobs
            .entry(id.clone())
            .or_insert_with(|| content.to_vec());
        id
    }

    pub fn blob(&self, sha: &str) -> Option<&[u8]> {
        self.blobs.get(sha).map(Vec::as_slice)
    }

    pub fn tree(&self, sha: &str) -> Option<&BTreeMap<String, TreeEntry>> {
        self.trees.get(sha)
    }

    pub fn commit(&self, sha: &str) -> Option<&Commit> {
        self.commits.get(sha)
    }

    pub fn has_object(&self, sha: &str) -> bool {
        self.blobs.contains_key(sha)
            || self.trees.contains_key(sha)
            || self.commits.contains_key(sha)
    }

    fn put_tree_entries(&mut self, entries: BTreeMap<String, TreeEntry>) -> String {
        let mut sorted: Vec<(&String, &TreeEntry)> = entries.iter().collect();
        sorted.sort_by_key(|(n, e)| git_sort_key(n, e));
        let mut body = Vec::new();
        for (name, e) in sorted {
            // git writes tree modes without the leading zero.
            let mode = e.mode.trim_start_matches('0');
            body.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            body.extend_from_slice(&hex::decode(&e.sha).unwrap_or_else(|_| vec![0; 20]));
        }
        let id = object_id("tree", &body);
        self.trees.entry(id.clone()).or_insert(entries);
        id
    }

    /// Builds (and stores) the hierarchical tree for a flat path map; returns the root tree sha.
    pub fn put_flat_tree(&mut self, flat: &FlatTree) -> String {
        let mut here: BTreeMap<String, TreeEntry> = BTreeMap::new();
        let mut sub: BTreeMap<String, FlatTree> = BTreeMap::new();
        for (path, (mode, sha)) in flat {
            match path.split_once('/') {
                Some((dir, rest)) => {
                    sub.entry(dir.to_string())
                        .or_default()
                        .insert(rest.to_string(), (mode.clone(), sha.clone()));
                }
                None => {
                    here.insert(
                        path.clone(),
                        TreeEntry {
                            mode: mode.clone(),
                            kind: kind_of_mode(mode),
                            sha: sha.clone(),
                        },
                    );
                }
            }
        }
        for (dir, files) in sub {
            let sha = self.put_flat_tree(&files);
            here.insert(
                dir,
                TreeEntry {
                    mode: MODE_TREE.into(),
                    kind: "tree",
                    sha,
                },
            );
        }
        self.put_tree_entries(here)
    }

    /// Every file under a tree, with its full path. `None` when the tree is unknown.
    pub fn flatten_tree(&self, tree_sha: &str) -> Option<FlatTree> {
        let mut out = FlatTree::new();
        self.flatten_into(tree_sha, "", &mut out)?;
        Some(out)
    }

    fn flatten_into(&self, tree_sha: &str, prefix: &str, out: &mut FlatTree) -> Option<()> {
        let tree = self.trees.get(tree_sha)?;
        for (name, e) in tree {
            let path = format!("{prefix}{name}");
            if e.kind == "tree" {
                self.flatten_into(&e.sha, &format!("{path}/"), out)?;
            } else {
                out.insert(path, (e.mode.clone(), e.sha.clone()));
            }
        }
        Some(())
    }

    /// All entries (trees and blobs) under a tree, recursively, as GitHub's `recursive=1` lists them.
    pub fn walk_tree(&self, tree_sha: &str) -> Vec<(String, TreeEntry)> {
        let mut out = Vec::new();
        self.walk_into(tree_sha, "", &mut out);
        out
    }

    fn walk_into(&self, tree_sha: &str, prefix: &str, out: &mut Vec<(String, TreeEntry)>) {
        if let Some(tree) = self.trees.get(tree_sha) {
            for (name, e) in tree {
                let path = format!("{prefix}{name}");
                out.push((path.clone(), e.clone()));
                if e.kind == "tree" {
                    self.walk_into(&e.sha, &format!("{path}/"), out);
                }
            }
        }
    }

    pub fn put_commit(&mut self, c: Commit) -> String {
        let ts = chrono::DateTime::parse_from_rfc3339(&c.date)
            .map(|d| d.timestamp())
            .unwrap_or(0);
        let mut body = format!("tree {}\n", c.tree);
        for p in &c.parents {
            body.push_str(&format!("parent {p}\n"));
        }
        let who = format!("{} <{}> {ts} +0000", c.author_name, c.author_email);
        body.push_str(&format!("author {who}\ncommitter {who}\n\n{}", c.message));
        let id = object_id("commit", body.as_bytes());
        self.commits.entry(id.clone()).or_insert(c);
        id
    }

    /// The full file map (path → content) of a commit.
    pub fn files_at(&self, commit_sha: &str) -> Option<BTreeMap<String, Vec<u8>>> {
        let c = self.commits.get(commit_sha)?;
        let flat = self.flatten_tree(&c.tree)?;
        Some(
            flat.into_iter()
                .map(|(p, (_, sha))| {
                    let body = self.blobs.get(&sha).cloned().unwrap_or_default();
                    (p, body)
                })
                .collect(),
        )
    }

    /// True when `ancestor` is `descendant` or reachable through its parents.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> bool {
        let mut stack = vec![descendant.to_string()];
        let mut seen = std::collections::HashSet::new();
        while let Some(s) = stack.pop() {
            if s == ancestor {
                return true;
            }
            if !seen.insert(s.clone()) {
                continue;
            }
            if let Some(c) = self.commits.get(&s) {
                stack.extend(c.parents.iter().cloned());
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_sha_matches_git() {
        let mut s = ObjectStore::default();
        // `printf 'hello world\n' | git hash-object --stdin`
        assert_eq!(
            s.put_blob(b"hello world\n"),
            "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
        );
        // The empty blob and the empty tree are well-known ids.
        assert_eq!(s.put_blob(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            s.put_flat_tree(&FlatTree::new()),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }

    #[test]
    fn tree_sha_matches_git_for_nested_paths() {
        let mut s = ObjectStore::default();
        let a = s.put_blob(b"a\n");
        let mut flat = FlatTree::new();
        flat.insert("a.txt".into(), (MODE_FILE.into(), a.clone()));
        flat.insert("dir/b.txt".into(), (MODE_FILE.into(), a.clone()));
        let root = s.put_flat_tree(&flat);
        // Computed with: git init; echo a > a.txt; mkdir dir; echo a > dir/b.txt; git add .; git write-tree
        assert_eq!(root, "41878236511bdf530af122f8b3a483be5b26f907");
        assert_eq!(s.flatten_tree(&root).unwrap(), flat);
        // `dir.txt` sorts before the tree `dir` because git compares a tree's name as `dir/`.
        flat.insert("dir.txt".into(), (MODE_FILE.into(), a));
        assert_eq!(
            s.put_flat_tree(&flat),
            "d8af85300c96fa562a2e90abd2031f2f1a7b07a5"
        );
    }

    #[test]
    fn ancestry() {
        let mut s = ObjectStore::default();
        let t = s.put_flat_tree(&FlatTree::new());
        let mk = |parents: Vec<String>, msg: &str| Commit {
            tree: t.clone(),
            parents,
            message: msg.into(),
            author_name: "a".into(),
            author_email: "a@x".into(),
            date: "2024-01-01T00:00:00Z".into(),
        };
        let c1 = s.put_commit(mk(vec![], "1"));
        let c2 = s.put_commit(mk(vec![c1.clone()], "2"));
        let c3 = s.put_commit(mk(vec![c1.clone()], "3"));
        assert!(s.is_ancestor(&c1, &c2));
        assert!(!s.is_ancestor(&c2, &c3));
        assert!(s.is_ancestor(&c2, &c2));
    }
}
