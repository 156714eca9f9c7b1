//! Repository path checks for DDS scopes: shape (no `..`, no absolute paths) and the
//! component-wise subset rule of validation rule 6.
//!
//! The specification's sample code uses `path.startswith(p)`, which would let `src/a` cover
//! `src/ab/x`; ci-medic compares whole path components instead, so a scope can only narrow.
//! Pure string work: never touches the file system.

use globset::{Glob, GlobMatcher};

/// Why a path is not an acceptable repository-relative path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path `{0}` is absolute; DDS paths are relative to the repository root")]
    Absolute(String),
    #[error("path `{0}` contains `..`; path traversal is not allowed")]
    Traversal(String),
    #[error("path `{0}` contains a backslash; use forward slashes")]
    Backslash(String),
    #[error("path `{0}` contains a NUL or control character")]
    Control(String),
    #[error("path `{0}` has an empty or `.` component; write it in normal form")]
    NotNormal(String),
}

/// Checks that `path` is a normal repository-relative path: forward slashes, no leading `/`,
/// no drive letter, no `..`, `.` or empty components (one trailing `/` marks a directory).
pub fn check_relative_path(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    let owned = || path.to_string();
    if path.starts_with('/') || has_drive_letter(path) {
        return Err(PathError::Absolute(owned()));
    }
    if path.chars().any(char::is_control) {
        return Err(PathError::Control(owned()));
    }
    if path.contains('\\') {
        return Err(PathError::Backslash(owned()));
    }
    let body = path.strip_suffix('/').unwrap_or(path);
    let mut traversal = false;
    let mut not_normal = body.is_empty();
    for c in body.split('/') {
        match c {
            ".." => traversal = true,
            "" | "." => not_normal = true,
            _ => {}
        }
    }
    if traversal {
        return Err(PathError::Traversal(owned()));
    }
    if not_normal {
        return Err(PathError::NotNormal(owned()));
    }
    Ok(())
}

fn has_drive_letter(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || b[2] == b'/' || b[2] == b'\\')
}

fn components(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|c| !c.is_empty())
}

/// True when `path` is `scope` itself or lies under it, comparing whole components:
/// `src/a` contains `src/a` and `src/a/x.py` but not `src/ab/x.py`. Both must be valid
/// relative paths ([`check_relative_path`]); an invalid one is contained in nothing.
pub fn path_within(path: &str, scope: &str) -> bool {
    if check_relative_path(path).is_err() || check_relative_path(scope).is_err() {
        return false;
    }
    let mut p = components(path);
    for s in components(scope) {
        if p.next() != Some(s) {
            return false;
        }
    }
    true
}

/// True when `path` is within at least one of `scopes`.
pub fn path_in_scope(path: &str, scopes: &[String]) -> bool {
    scopes.iter().any(|s| path_within(path, s))
}

/// Matches paths against protected-path patterns from the repository configuration:
/// an entry ending in `/` is a directory (everything under it), an entry with glob
/// metacharacters is a glob, anything else is a file or a directory given without its slash.
#[derive(Debug, Clone)]
pub struct PathPatterns {
    entries: Vec<(String, Option<GlobMatcher>)>,
}

impl PathPatterns {
    /// Builds the matcher. A glob that does not compile is treated as a literal path, so a typo
    /// in the configuration protects that literal path rather than nothing.
    pub fn new<'a>(patterns: impl IntoIterator<Item = &'a String>) -> Self {
        let entries = patterns
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| {
                let glob = if p.contains(['*', '?', '[', '{']) {
                    Glob::new(p).ok().map(|g| g.compile_matcher())
                } else {
                    None
                };
                (p.clone(), glob)
            })
            .collect();
        PathPatterns { entries }
    }

    /// The first pattern that matches `path`, if any.
    pub fn matching(&self, path: &str) -> Option<&str> {
        self.entries.iter().find_map(|(pat, glob)| {
            let hit = match glob {
                Some(g) => g.is_match(path),
                None => path == pat || path_within(path, pat),
            };
            hit.then_some(pat.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn whole_components_only() {
        assert!(path_within("src/a", "src/a"));
        assert!(path_within("src/a/x.py", "src/a"));
        assert!(path_within("src/a/x.py", "src/a/"));
        assert!(path_within("src/a/x.py", "src/"));
        assert!(!path_within("src/ab/x", "src/a"));
        assert!(!path_within("src/ab", "src/a"));
        assert!(!path_within("src", "src/a"));
        assert!(!path_within("lib/a", "src/"));
    }

    #[test]
    fn rejects_traversal_and_absolute_paths() {
        for (p, want) in [
            ("../etc/passwd", "..".to_string()),
            ("src/../../x", "..".to_string()),
            ("/etc/passwd", "absolute".to_string()),
            ("C:/x", "absolute".to_string()),
            ("src\\x", "backslash".to_string()),
            ("src//x", "normal form".to_string()),
            ("./src/x", "normal form".to_string()),
            ("src/x\0", "NUL".to_string()),
        ] {
            let err = check_relative_path(p).unwrap_err().to_string();
            assert!(err.contains(&want), "{p}: {err}");
        }
        // traversal never sneaks in through a valid-looking scope
        assert!(!path_within("src/../secret", "src/"));
        assert!(!path_within("/src/x", "src/"));
        assert!(check_relative_path("src/").is_ok());
        assert!(check_relative_path("a..b/c").is_ok());
        // a colon in a file name is not a drive letter
        assert!(check_relative_path("c:notes.txt").is_ok());
        assert!(check_relative_path("C:").is_err());
    }

    #[test]
    fn protected_patterns() {
        let pats = [
            ".github/workflows/".to_string(),
            ".github/ci-medic.yml".to_string(),
            "**/*.lock".to_string(),
            "vendor".to_string(),
        ];
        let m = PathPatterns::new(&pats);
        assert_eq!(
            m.matching(".github/workflows/ci.yml"),
            Some(".github/workflows/")
        );
        assert_eq!(
            m.matching(".github/ci-medic.yml"),
            Some(".github/ci-medic.yml")
        );
        assert_eq!(m.matching("Cargo.lock"), Some("**/*.lock"));
        assert_eq!(m.matching("vendor/x.go"), Some("vendor"));
        assert_eq!(m.matching("vendored/x.go"), None);
        assert_eq!(m.matching("src/main.rs"), None);
    }

    fn segment() -> impl Strategy<Value = String> {
        "[a-z]{1,3}"
    }

    proptest! {
        #[test]
        fn within_matches_component_prefix(
            scope in prop::collection::vec(segment(), 1..4),
            path in prop::collection::vec(segment(), 1..5),
        ) {
            let expected = path.len() >= scope.len() && path[..scope.len()] == scope[..];
            prop_assert_eq!(path_within(&path.join("/"), &scope.join("/")), expected);
            prop_assert_eq!(path_within(&path.join("/"), &format!("{}/", scope.join("/"))), expected);
        }

        #[test]
        fn a_path_with_dotdot_is_never_within(
            pre in prop::collection::vec(segment(), 0..3),
            post in prop::collection::vec(segment(), 0..3),
            scope in prop::collection::vec(segment(), 1..3),
        ) {
            let mut parts = pre.clone();
            parts.push("..".to_string());
            parts.extend(post);
            let p = parts.join("/");
            prop_assert!(!path_within(&p, &scope.join("/")));
            prop_assert!(check_relative_path(&p).is_err());
        }
    }
}
