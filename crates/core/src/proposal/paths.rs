//! Repository path checks for DDS scopes: shape (no `..`, no absolute paths) and the
//! component-wise subset rule of validation rule 6.
//!
//! The specification's sample code uses `path.startswith(p)`, which would let `src/a` cover
//! `src/ab/x`; ci-medic compares whole path components instead, so a scope can only narrow.
//! Pure string work: never touches the file system.

use globset::GlobMatcher;

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

/// True when `path` lies within at least one of `scopes`, by the semantics of
/// [`PathPattern`] (scopes may be files, directories or globs). `path` may be a file, a
/// directory ending in `/` (then everything under it must be covered) or a glob, which is
/// within only an identical scope entry: one glob's language is never compared with another's.
pub fn path_in_scope(path: &str, scopes: &[String]) -> bool {
    if check_relative_path(path).is_err() {
        return false;
    }
    let plain = |s: &String| s.strip_prefix("./").unwrap_or(s).to_string();
    if is_glob(path) {
        return scopes.iter().any(|s| plain(s) == path);
    }
    match path.strip_suffix('/') {
        Some(dir) => scopes.iter().any(|s| PathPattern::new(s).covers_dir(dir)),
        None => scopes.iter().any(|s| PathPattern::new(s).allows(path)),
    }
}

/// Whether an entry is a glob rather than a plain path.
fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '[', '{'])
}

/// Compiles a glob with the one semantics ci-medic uses everywhere: `*`, `?` and `[…]` never
/// cross `/`, `**` does, `{a,b}` is alternation.
pub fn compile_glob(glob: &str) -> Result<globset::GlobMatcher, globset::Error> {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
}

#[derive(Debug, Clone)]
enum PatternKind {
    /// `dir/`: everything under `dir`, never `dir` itself (a file of that name).
    Dir(String),
    /// A plain entry: that file, or that directory and everything under it.
    Exact(String),
    /// A glob; one naming a directory covers everything under it.
    Glob(GlobMatcher),
    /// A glob that does not compile.
    Malformed,
    /// An empty entry (or `./`, `/`): matches nothing.
    Nothing,
}

/// One configured path entry (`allowed_paths`, `protected_paths`, `do_not_touch`), compiled
/// once. The one matcher of every path constraint, so what a proposal allows and what the
/// guard enforces cannot differ. The semantics, gitignore-like:
///
/// | entry | matches |
/// |---|---|
/// | `src/` | everything under `src`, on whole components |
/// | `src/a` | the file `src/a`, or the directory `src/a` and everything under it (`src/ab` is not under it) |
/// | `src/*.py` | `src/x.py`, not `src/x/y.py`: `*`, `?` and `[…]` never cross `/` |
/// | `src/**/*.py` | `src/x.py` and `src/x/y.py`: `**` does |
/// | `vendor*` | `vendor/x.go`: a glob that matches a directory covers what is under it |
/// | a malformed glob (`src/[a`) | nothing where it allows, everything where it protects: a typo never opens a protection |
///
/// A leading `./` is ignored. The paths matched are repository-relative; an invalid one
/// (absolute, `..`, backslash) is allowed by nothing and protected by everything.
#[derive(Debug, Clone)]
pub struct PathPattern {
    entry: String,
    kind: PatternKind,
}

impl PathPattern {
    pub fn new(entry: &str) -> Self {
        let e = entry.strip_prefix("./").unwrap_or(entry);
        let kind = if is_glob(e) {
            match compile_glob(e.trim_end_matches('/')) {
                Ok(m) => PatternKind::Glob(m),
                Err(_) => PatternKind::Malformed,
            }
        } else {
            let dir = e.trim_end_matches('/');
            if dir.is_empty() {
                PatternKind::Nothing
            } else if e.ends_with('/') {
                PatternKind::Dir(dir.to_string())
            } else {
                PatternKind::Exact(dir.to_string())
            }
        };
        PathPattern {
            entry: entry.to_string(),
            kind,
        }
    }

    /// The entry as configured.
    pub fn as_str(&self) -> &str {
        &self.entry
    }

    /// `None` for a malformed glob or an invalid path: the caller decides what that means.
    fn hit(&self, path: &str) -> Option<bool> {
        let path = path.strip_prefix("./").unwrap_or(path);
        if check_relative_path(path).is_err() {
            return None;
        }
        let path = path.trim_end_matches('/');
        let under = |dir: &str| {
            path.strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        };
        Some(match &self.kind {
            PatternKind::Dir(dir) => under(dir),
            PatternKind::Exact(p) => path == p || under(p),
            PatternKind::Glob(m) => {
                m.is_match(path) || path.match_indices('/').any(|(i, _)| m.is_match(&path[..i]))
            }
            PatternKind::Malformed => return None,
            PatternKind::Nothing => false,
        })
    }

    /// Whether the entry covers the directory `dir` and everything under it.
    fn covers_dir(&self, dir: &str) -> bool {
        let under = |d: &str| {
            dir.strip_prefix(d)
                .is_some_and(|rest| rest.starts_with('/'))
        };
        match &self.kind {
            PatternKind::Dir(d) | PatternKind::Exact(d) => dir == d || under(d),
            PatternKind::Glob(m) => {
                m.is_match(dir) || dir.match_indices('/').any(|(i, _)| m.is_match(&dir[..i]))
            }
            PatternKind::Malformed | PatternKind::Nothing => false,
        }
    }

    /// Whether the entry, in an allow-list, lets a change touch `path`.
    pub fn allows(&self, path: &str) -> bool {
        self.hit(path).unwrap_or(false)
    }

    /// Whether the entry, in a protection list, keeps a change off `path`.
    pub fn protects(&self, path: &str) -> bool {
        self.hit(path).unwrap_or(true)
    }
}

/// A list of [`PathPattern`]s, compiled once.
#[derive(Debug, Clone)]
pub struct PathPatterns {
    entries: Vec<PathPattern>,
}

impl PathPatterns {
    pub fn new<'a>(patterns: impl IntoIterator<Item = &'a String>) -> Self {
        PathPatterns {
            entries: patterns.into_iter().map(|p| PathPattern::new(p)).collect(),
        }
    }

    /// The first entry that protects `path`, if any (see [`PathPattern::protects`]).
    pub fn matching(&self, path: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|p| p.protects(path))
            .map(PathPattern::as_str)
    }

    /// The first entry that allows `path`, if any (see [`PathPattern::allows`]).
    pub fn allowing(&self, path: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|p| p.allows(path))
            .map(PathPattern::as_str)
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
