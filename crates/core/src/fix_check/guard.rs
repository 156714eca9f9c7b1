//! The patch guard: one pure function every candidate patch passes before anything is pushed.
//!
//! It checks the proposal's constraints and the fix agent's contract (never the workflows or
//! `.github/ci-medic.yml`, whatever the configuration lists; minimal diff within the reported lines ±3, comments kept, no new dependencies, no weakened tests, confidence gate) and
//! returns *every* rule the patch breaks, so the PR comment can say exactly why it was refused.
//! It never edits a patch to make it pass, and never trusts the fixer's own claims about it.
//!
//! Comment rule, decided: every **full-line comment** of the before file must still be present
//! (as a multiset of trimmed lines) after the patch. Trailing comments on code lines are not
//! checked by the guard, because a fixer may legitimately delete a whole code line (an unused
//! import) and with it the note on that line; the built-in fixers keep trailing comments on every
//! line they edit rather than delete.

use super::deps::{
    Imported, external_imports, imports_on_line, is_dependency_manifest, is_import_statement,
};
use super::diff::touched;
use super::text::{Lang, is_comment_line, lang_of, split_comment, split_lines};
use crate::proposal::paths::PathPattern;
use crate::repo_config::CONFIG_PATH;
use regex::Regex;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

/// How far (in lines) from a reported line a change may reach.
pub const LINE_WINDOW: u32 = 3;

/// Directory a patch may never touch, whatever the configuration says.
pub const WORKFLOWS_DIR: &str = ".github/workflows/";

/// Paths no patch may touch whatever the configuration says: a repository's own
/// `protected_paths` *replaces* the default list, so these cannot live only there. A fix that
/// could edit the workflows or ci-medic's own configuration could widen its own permissions.
pub const ALWAYS_PROTECTED: [(&str, ProtectedBy); 2] = [
    (WORKFLOWS_DIR, ProtectedBy::Workflows),
    (CONFIG_PATH, ProtectedBy::Config),
];

/// The constraints one patch is checked against (built from the code_fix DDS and repo config).
#[derive(Debug, Clone, PartialEq)]
pub struct GuardPolicy {
    /// Files (exact), directories (`dir/`, or a plain prefix by whole components) or globs.
    pub allowed_paths: Vec<String>,
    pub protected_paths: Vec<String>,
    pub do_not_touch: Vec<String>,
    pub max_files_changed: u32,
    pub no_new_dependencies: bool,
    /// Top-level module / crate / package names a patch may newly import.
    pub allowed_dependencies: Vec<String>,
    pub confidence_threshold: f64,
    /// `(repo-relative path, 1-based line)` of every reported error.
    pub reported_lines: Vec<(String, u32)>,
    /// Files a formatter check reported as a whole (it named the file, not lines): the
    /// formatter's own change may touch any line of them, every other rule still applies. Only
    /// the tool tier sets it, for the candidate of the formatter that check runs.
    pub whole_file_formatting: Vec<String>,
    /// The lines a formatter's own check showed changing in a file (its diff hunks, in the
    /// file before the patch): the formatter's change may touch these and nothing else. The
    /// reported lines those hunks account for are taken out of `reported_lines`, so no ±3
    /// window stands beside them. Only the tool tier sets it, for a check that prints hunks.
    pub formatter_hunks: Vec<(String, LineSpan)>,
}

/// Lines `first..=last` of a file (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    pub first: u32,
    pub last: u32,
}

impl LineSpan {
    pub fn contains(self, line: u32) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

/// One file of a candidate patch. `before == None` means the patch creates the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<String>,
    pub after: String,
}

/// A candidate patch: every file it changes and the fixer's confidence in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub changes: Vec<FileChange>,
    pub confidence: f64,
}

/// Why the protected-path rule fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectedBy {
    ProtectedPaths,
    DoNotTouch,
    /// `.github/workflows/`, protected always.
    Workflows,
    /// `.github/ci-medic.yml`, protected always.
    Config,
}

/// One broken rule. [`GuardViolation::rule`] is a short stable name for machines, `Display` a
/// sentence for maintainers.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardViolation {
    /// The path is absolute, empty, or climbs out with `..`.
    PathEscape {
        path: String,
    },
    NotAllowed {
        path: String,
    },
    Protected {
        path: String,
        entry: String,
        by: ProtectedBy,
    },
    TooManyFiles {
        changed: u32,
        max: u32,
    },
    /// A change outside every reported line ±3 (`line` is 1-based in the before file; 0 for a
    /// new file).
    OutsideLineWindow {
        path: String,
        line: u32,
    },
    /// A change to a file whose formatter hunks are known, on a line outside them and more than
    /// 3 lines from every other reported error.
    OutsideFormatterHunks {
        path: String,
        line: u32,
    },
    DependencyManifest {
        path: String,
    },
    NewDependency {
        path: String,
        module: String,
    },
    DeletedAssertion {
        path: String,
        before: usize,
        after: usize,
    },
    AddedSkip {
        path: String,
        line: u32,
        text: String,
    },
    ContinueOnError {
        path: String,
        line: u32,
    },
    CommentRemoved {
        path: String,
        comment: String,
    },
    LowConfidence {
        confidence: f64,
        threshold: f64,
    },
}

impl GuardViolation {
    pub fn rule(&self) -> &'static str {
        match self {
            GuardViolation::PathEscape { .. } => "path_escape",
            GuardViolation::NotAllowed { .. } => "allowed_paths",
            GuardViolation::Protected { .. } => "protected_path",
            GuardViolation::TooManyFiles { .. } => "max_files_changed",
            GuardViolation::OutsideLineWindow { .. } => "line_window",
            GuardViolation::OutsideFormatterHunks { .. } => "formatter_hunks",
            GuardViolation::DependencyManifest { .. } => "dependency_manifest",
            GuardViolation::NewDependency { .. } => "new_dependency",
            GuardViolation::DeletedAssertion { .. } => "deleted_assertion",
            GuardViolation::AddedSkip { .. } => "added_skip",
            GuardViolation::ContinueOnError { .. } => "continue_on_error",
            GuardViolation::CommentRemoved { .. } => "comment_removed",
            GuardViolation::LowConfidence { .. } => "confidence",
        }
    }
}

impl fmt::Display for GuardViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardViolation::PathEscape { path } => write!(
                f,
                "`{path}` is not a plain repository-relative path (absolute, empty or using `..`)"
            ),
            GuardViolation::NotAllowed { path } => {
                write!(f, "`{path}` is outside the proposal's allowed paths")
            }
            GuardViolation::Protected { path, entry, by } => {
                let what = match by {
                    ProtectedBy::ProtectedPaths => "protected_paths",
                    ProtectedBy::DoNotTouch => "do_not_touch",
                    ProtectedBy::Workflows => "always-protected workflows",
                    ProtectedBy::Config => "always-protected ci-medic configuration",
                };
                write!(f, "`{path}` is protected (`{entry}` in {what})")
            }
            GuardViolation::TooManyFiles { changed, max } => write!(
                f,
                "the patch changes {changed} files; at most {max} are allowed"
            ),
            GuardViolation::OutsideLineWindow { path, line: 0 } => write!(
                f,
                "the patch creates `{path}`, which no reported error points at"
            ),
            GuardViolation::OutsideLineWindow { path, line } => write!(
                f,
                "`{path}` line {line} changes but is more than {LINE_WINDOW} lines from every reported error"
            ),
            GuardViolation::OutsideFormatterHunks { path, line } => write!(
                f,
                "`{path}` line {line} changes but is outside the hunks the formatter's own check reported (and more than {LINE_WINDOW} lines from every other reported error)"
            ),
            GuardViolation::DependencyManifest { path } => write!(
                f,
                "`{path}` is a dependency manifest or lockfile; a fix may not change dependencies"
            ),
            GuardViolation::NewDependency { path, module } => write!(
                f,
                "`{path}` newly imports `{module}`, a dependency the file did not use and that is not allowed"
            ),
            GuardViolation::DeletedAssertion {
                path,
                before,
                after,
            } => write!(
                f,
                "`{path}` loses assertions ({before} before the patch, {after} after)"
            ),
            GuardViolation::AddedSkip { path, line, text } => {
                write!(f, "`{path}` line {line} skips or narrows tests: `{text}`")
            }
            GuardViolation::ContinueOnError { path, line } => write!(
                f,
                "`{path}` line {line} lets a CI step fail silently (`continue-on-error`/`allow_failure`)"
            ),
            GuardViolation::CommentRemoved { path, comment } => {
                write!(f, "`{path}` loses the comment `{comment}`")
            }
            GuardViolation::LowConfidence {
                confidence,
                threshold,
            } => write!(
                f,
                "confidence {confidence:.2} is below the threshold {threshold:.2}"
            ),
        }
    }
}

/// Checks `candidate` against `policy`; `Err` lists every broken rule (at least one).
pub fn check_patch(policy: &GuardPolicy, candidate: &Candidate) -> Result<(), Vec<GuardViolation>> {
    let mut v = Vec::new();
    let c = candidate.confidence;
    if !(c.is_finite() && (0.0..=1.0).contains(&c) && c >= policy.confidence_threshold) {
        v.push(GuardViolation::LowConfidence {
            confidence: c,
            threshold: policy.confidence_threshold,
        });
    }
    let changed: Vec<&FileChange> = candidate
        .changes
        .iter()
        .filter(|ch| ch.before.as_deref() != Some(ch.after.as_str()))
        .collect();
    // The same path twice counts once, but both entries are checked.
    let distinct: std::collections::BTreeSet<&str> =
        changed.iter().map(|ch| ch.path.as_str()).collect();
    if distinct.len() as u64 > policy.max_files_changed as u64 {
        v.push(GuardViolation::TooManyFiles {
            changed: distinct.len() as u32,
            max: policy.max_files_changed,
        });
    }
    for ch in changed {
        check_file(policy, ch, &mut v);
    }
    if v.is_empty() { Ok(()) } else { Err(v) }
}

fn check_file(policy: &GuardPolicy, ch: &FileChange, v: &mut Vec<GuardViolation>) {
    let path = match normalize(&ch.path) {
        Some(p) => p,
        None => {
            v.push(GuardViolation::PathEscape {
                path: ch.path.clone(),
            });
            return;
        }
    };
    if !policy.allowed_paths.iter().any(|e| path_matches(e, &path)) {
        v.push(GuardViolation::NotAllowed { path: path.clone() });
    }
    let protected = ALWAYS_PROTECTED
        .into_iter()
        .chain(
            policy
                .protected_paths
                .iter()
                .map(|e| (e.as_str(), ProtectedBy::ProtectedPaths)),
        )
        .chain(
            policy
                .do_not_touch
                .iter()
                .map(|e| (e.as_str(), ProtectedBy::DoNotTouch)),
        )
        .find(|(e, _)| protects(e, &path));
    if let Some((entry, by)) = protected {
        v.push(GuardViolation::Protected {
            path: path.clone(),
            entry: entry.to_string(),
            by,
        });
    }
    if is_dependency_manifest(&path) {
        v.push(GuardViolation::DependencyManifest { path: path.clone() });
    }

    let lang = lang_of(&path);
    let before = ch.before.as_deref().unwrap_or("");
    let t = touched(before, &ch.after);
    let reported: Vec<u32> = policy
        .reported_lines
        .iter()
        .filter(|(p, _)| normalize(p).as_deref() == Some(path.as_str()))
        .map(|&(_, l)| l)
        .collect();
    let whole_file = policy
        .whole_file_formatting
        .iter()
        .any(|p| normalize(p).as_deref() == Some(path.as_str()));
    if ch.before.is_none() {
        v.push(GuardViolation::OutsideLineWindow {
            path: path.clone(),
            line: 0,
        });
    } else if !whole_file {
        let hunks: Vec<LineSpan> = policy
            .formatter_hunks
            .iter()
            .filter(|(p, _)| normalize(p).as_deref() == Some(path.as_str()))
            .map(|&(_, s)| s)
            .collect();
        let near = |l: u32| {
            reported.iter().any(|&r| l.abs_diff(r) <= LINE_WINDOW)
                || hunks.iter().any(|s| s.contains(l))
        };
        // An insertion at gap k sits between lines k and k+1: fine when either neighbour is near.
        let first_far = t.deleted.iter().copied().find(|&l| !near(l)).or_else(|| {
            t.inserted_at
                .iter()
                .copied()
                .find(|&k| !near(k) && !near(k + 1))
                .map(|k| k.max(1))
        });
        if let Some(line) = first_far {
            v.push(if hunks.is_empty() {
                GuardViolation::OutsideLineWindow {
                    path: path.clone(),
                    line,
                }
            } else {
                GuardViolation::OutsideFormatterHunks {
                    path: path.clone(),
                    line,
                }
            });
        }
    }

    let after_lines = split_lines(&ch.after);
    let added: Vec<(u32, &str)> = t
        .added
        .iter()
        .filter_map(|&n| {
            after_lines
                .get(n as usize - 1)
                .map(|l| (n, l.text.as_str()))
        })
        .collect();

    if policy.no_new_dependencies {
        let had = external_imports(before, lang);
        let mut reported_modules = std::collections::BTreeSet::new();
        for &(_, line) in &added {
            if is_comment_line(line, lang) {
                continue;
            }
            for imp in imports_on_line(line, lang) {
                if let Imported::External(m) = imp {
                    let allowed = had.contains(&m)
                        || policy
                            .allowed_dependencies
                            .iter()
                            .any(|a| a == &m || a.eq_ignore_ascii_case(&m.replace('_', "-")));
                    if !allowed && reported_modules.insert(m.clone()) {
                        v.push(GuardViolation::NewDependency {
                            path: path.clone(),
                            module: m,
                        });
                    }
                }
            }
        }
    }

    let (a_before, a_after) = (
        count_assertions(before, lang),
        count_assertions(&ch.after, lang),
    );
    if a_after < a_before {
        v.push(GuardViolation::DeletedAssertion {
            path: path.clone(),
            before: a_before,
            after: a_after,
        });
    }

    // Skips and continue-on-error: compare counts per pattern, and point at the added line.
    for (re, is_skip) in [(&*SKIP, true), (&*CONTINUE_ON_ERROR, false)] {
        if count_matches(re, &ch.after, lang) > count_matches(re, before, lang) {
            let at = added
                .iter()
                .find(|(_, l)| re.is_match(code_of(l, lang)))
                .map(|&(n, l)| (n, l.trim().to_string()))
                .unwrap_or((0, String::new()));
            v.push(if is_skip {
                GuardViolation::AddedSkip {
                    path: path.clone(),
                    line: at.0,
                    text: at.1,
                }
            } else {
                GuardViolation::ContinueOnError {
                    path: path.clone(),
                    line: at.0,
                }
            });
        }
    }

    let mut comments: BTreeMap<&str, i64> = BTreeMap::new();
    for l in before.lines().filter(|l| is_comment_line(l, lang)) {
        *comments.entry(l.trim()).or_default() += 1;
    }
    for l in ch.after.lines().filter(|l| is_comment_line(l, lang)) {
        if let Some(n) = comments.get_mut(l.trim()) {
            *n -= 1;
        }
    }
    if let Some((c, _)) = comments.into_iter().find(|&(_, n)| n > 0) {
        v.push(GuardViolation::CommentRemoved {
            path: path.clone(),
            comment: c.to_string(),
        });
    }
}

/// `ch.path` as a clean repo-relative path, or `None` when it escapes or is absolute.
fn normalize(path: &str) -> Option<String> {
    let p = path.strip_prefix("./").unwrap_or(path);
    let bad = p.is_empty()
        || p.starts_with('/')
        || p.contains('\\')
        || p.contains('\0')
        || p.as_bytes().get(1) == Some(&b':')
        || p.split('/').any(|c| c == ".." || c == "." || c.is_empty());
    if bad { None } else { Some(p.to_string()) }
}

/// Whether an allow-list entry covers `path`: [`PathPattern::allows`], the matcher the
/// proposal uses too.
pub fn path_matches(entry: &str, path: &str) -> bool {
    PathPattern::new(entry).allows(path)
}

/// Whether a protection entry covers `path`: [`PathPattern::protects`] (a malformed glob
/// protects everything, so a typo in a protection never opens it).
fn protects(entry: &str, path: &str) -> bool {
    PathPattern::new(entry).protects(path)
}

fn code_of(line: &str, lang: Lang) -> &str {
    if is_comment_line(line, lang) {
        ""
    } else {
        split_comment(line, lang).0
    }
}

fn count_matches(re: &Regex, content: &str, lang: Lang) -> usize {
    content
        .lines()
        .map(|l| re.find_iter(code_of(l, lang)).count())
        .sum()
}

static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\bassert\b|\bassert_\w*!|\bdebug_assert\w*!|\bself\.assert\w+\(|\bassert\w*\(",
        r"|\bexpect\(|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\(",
        r"|\b(?:require|assert)\.\w+\(|\bshould\.|\.should\b|\bXCTAssert\w*\(",
    ))
    .expect("static regex")
});

/// Assertions in `content`, import lines left out: removing an unused
/// `"github.com/stretchr/testify/assert"` or `const assert = require('assert');` deletes a
/// name, not a check, and must not read as a weakened test.
fn count_assertions(content: &str, lang: Lang) -> usize {
    content
        .lines()
        .filter(|l| !is_import_statement(l, lang))
        .map(|l| ASSERTION.find_iter(code_of(l, lang)).count())
        .sum()
}

static SKIP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail)\(|@unittest\.skip",
        r"|\bunittest\.skip\w*\(|\bself\.skipTest\(|#\[ignore\b",
        r"|\b(?:it|test|describe|context|suite)\.(?:skip|only|todo)\b",
        r"|\b(?:xit|xtest|xdescribe|xcontext|fit|fdescribe|ftest)\s*\(",
        r"|\bt\.(?:Skip|SkipNow|Skipf)\(|@Disabled\b|@Ignore\b|\[Ignore\]|\bskip\s*=\s*[Tt]rue",
    ))
    .expect("static regex")
});

static CONTINUE_ON_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"continue-on-error|\ballow_failure\s*:\s*true").expect("static regex")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_matching_by_whole_components() {
        assert!(path_matches("src/a", "src/a"));
        assert!(path_matches("src/a", "src/a/x.py"));
        assert!(!path_matches("src/a", "src/ab"));
        assert!(!path_matches("src/a", "src/ab/x.py"));
        assert!(path_matches("src/", "src/x.py"));
        assert!(!path_matches("src/", "src"));
        assert!(path_matches("./src/", "src/x.py"));
        assert!(path_matches("src/*.py", "src/x.py"));
        assert!(!path_matches("src/*.py", "src/deep/x.py"));
        assert!(path_matches("src/**/*.py", "src/deep/x.py"));
        assert!(path_matches("**/*.lock", "a/b/c.lock"));
        assert!(path_matches("vendor*", "vendor/x.go"));
        assert!(!path_matches("", "x"));
        assert!(!path_matches("/", "x"));
    }

    #[test]
    fn a_malformed_protection_glob_protects_everything() {
        assert!(!path_matches("src/[a", "src/a.py"));
        assert!(protects("src/[a", "src/a.py"));
    }

    #[test]
    fn normalization_refuses_escapes() {
        for p in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "C:/x",
            "a\\b",
            "./",
        ] {
            assert_eq!(normalize(p), None, "{p}");
        }
        assert_eq!(normalize("./a/b"), Some("a/b".to_string()));
    }

    #[test]
    fn assertion_and_skip_patterns() {
        for l in [
            "assert x == 1",
            "self.assertEqual(a, b)",
            "assert_eq!(a, b);",
            "expect(a).toBe(1);",
            "t.Fatalf(\"x\")",
            "require.NoError(t, err)",
        ] {
            assert!(ASSERTION.is_match(l), "{l}");
        }
        for l in [
            "@pytest.mark.skip(reason='x')",
            "pytest.skip('flaky')",
            "#[ignore]",
            "it.skip('a', () => {})",
            "test.skip('a')",
            "describe.skip('x')",
            "xit('a', fn)",
            "t.Skip(\"later\")",
            "it.only('a')",
        ] {
            assert!(SKIP.is_match(l), "{l}");
        }
        assert!(!SKIP.is_match("exit(1)"));
        assert!(!SKIP.is_match("fit_model(x)"));
        assert!(CONTINUE_ON_ERROR.is_match("    continue-on-error: true"));
    }
}
