//! Path normalisation: turns whatever path a tool printed into a repo-relative, forward-slash
//! path, or refuses it.
//!
//! It strips the GitHub runner checkout prefixes (`/home/runner/work/R/R/`, `/__w/R/R/`,
//! `D:\a\R\R\`, `/Users/runner/work/R/R/`, `/github/workspace/`), the configured workspace, `file://`
//! and `./`, and resolves `.`/`..` lexically. It must never return an absolute path, a path with a
//! `..` component, or anything that is not plausibly a file name; it never touches the file system.

/// Maximum length of an emitted path; longer strings are not paths a tool printed.
const MAX_PATH: usize = 512;

/// Normalises `raw` into a repo-relative path, or `None` when it lies outside the repository.
pub fn normalize_path(raw: &str, workspace: Option<&str>) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > MAX_PATH {
        return None;
    }
    let mut p: String = raw.replace('\\', "/");
    if let Some(rest) = p.strip_prefix("file://") {
        p = rest.to_string();
        // `file:///C:/a/...` keeps a slash before the drive letter.
        if p.len() > 3 && p.as_bytes()[0] == b'/' && p.as_bytes()[2] == b':' {
            p.remove(0);
        }
    }
    if let Some(ws) = workspace {
        let ws = ws.replace('\\', "/");
        let ws = ws.trim_end_matches('/');
        if !ws.is_empty() {
            if let Some(rest) = p.strip_prefix(ws) {
                if let Some(rest) = rest.strip_prefix('/') {
                    p = rest.to_string();
                }
            }
        }
    }
    if let Some(rest) = strip_runner_prefix(&p) {
        p = rest.to_string();
    }
    // Still absolute (or a drive path, or home-relative): outside the repository.
    let b = p.as_bytes();
    if b.first() == Some(&b'/')
        || b.first() == Some(&b'~')
        || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic())
    {
        return None;
    }
    if p.bytes().any(|c| {
        c < 0x20
            || matches!(
                c,
                b'<' | b'>' | b'|' | b'*' | b'?' | b'"' | b'\'' | b'`' | 0x7f
            )
    }) || p.contains("://")
        || p.contains('\u{fffd}')
    {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return None;
    }
    let out = parts.join("/");
    // A file name needs at least one character that is not punctuation.
    if !out.bytes().any(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some(out)
}

/// Strips the runner's checkout directory: `<root>/<repo>/<repo>/`. A first segment starting
/// with `_` (`_temp`, `_actions`, `_tool`) is runner scratch space, not the repository.
fn strip_runner_prefix(p: &str) -> Option<&str> {
    // Actions runners and Travis (`/home/travis/build/O/R/`, macOS `/Users/travis/build/O/R/`).
    // Not GitLab's `/builds/<namespace>/<project>/`: a namespace may have any number of
    // segments, so two would be a guess.
    const ROOTS: [&str; 5] = [
        "/home/runner/work/",
        "/Users/runner/work/",
        "/__w/",
        "/home/travis/build/",
        "/Users/travis/build/",
    ];
    for root in ROOTS {
        if let Some(rest) = p.strip_prefix(root) {
            return strip_two_segments(rest);
        }
    }
    if let Some(rest) = p.strip_prefix("/github/workspace/") {
        return Some(rest);
    }
    // Windows runners: `D:/a/R/R/` (after backslash conversion), any drive letter.
    let b = p.as_bytes();
    if b.len() > 5 && b[0].is_ascii_alphabetic() && &b[1..5] == b":/a/" {
        return strip_two_segments(&p[5..]);
    }
    None
}

fn strip_two_segments(rest: &str) -> Option<&str> {
    let (owner, rest) = rest.split_once('/')?;
    // `_temp`, `_actions`: runner scratch space; `.m2`, `.cache`: tool caches under the root.
    if owner.is_empty() || owner.starts_with(['_', '.']) {
        return None;
    }
    let (_repo, rest) = rest.split_once('/')?;
    Some(rest)
}

/// True for paths inside the repository that are not the project's own code (dependencies and
/// virtualenvs vendored in the checkout). Stack-frame selection skips them.
pub fn is_vendored(path: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "node_modules/",
        "site-packages/",
        "dist-packages/",
        ".venv/",
        "venv/",
        ".tox/",
        ".cargo/registry/",
        ".pnpm/",
    ];
    MARKERS
        .iter()
        .any(|m| path.starts_with(m) || path.contains(&format!("/{m}")))
}

/// Cheap test that `s` ends like a source file name (`name.ext`, ext alphanumeric, 1–10 chars).
pub fn has_extension(s: &str) -> bool {
    let name = s.rsplit('/').next().unwrap_or(s);
    match name.rfind('.') {
        Some(dot) if dot > 0 && dot + 1 < name.len() => {
            let ext = &name[dot + 1..];
            ext.len() <= 10 && ext.bytes().all(|c| c.is_ascii_alphanumeric())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_runner_prefixes() {
        assert_eq!(
            normalize_path("/home/runner/work/R/R/src/a.py", None).as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            normalize_path("/__w/R/R/src/a.py", None).as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            normalize_path(r"D:\a\R\R\src\a.py", None).as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            normalize_path("file:///home/runner/work/R/R/app/App.kt", None).as_deref(),
            Some("app/App.kt")
        );
        assert_eq!(
            normalize_path("/srv/app/x.py", Some("/srv/app/")).as_deref(),
            Some("x.py")
        );
        assert_eq!(
            normalize_path("/home/travis/build/jwilm/alacritty/font/src/lib.rs", None).as_deref(),
            Some("font/src/lib.rs")
        );
        assert_eq!(
            normalize_path("./src/./a.go", None).as_deref(),
            Some("src/a.go")
        );
    }

    #[test]
    fn refuses_paths_outside_the_repo() {
        assert_eq!(normalize_path("/etc/passwd", None), None);
        assert_eq!(normalize_path("../x.py", None), None);
        assert_eq!(normalize_path("a/../../x.py", None), None);
        assert_eq!(normalize_path("/home/runner/work/_temp/x.sh", None), None);
        assert_eq!(normalize_path("<frozen importlib._bootstrap>", None), None);
        assert_eq!(normalize_path("C:/Users/x.py", None), None);
        assert_eq!(normalize_path("~/x.py", None), None);
        assert_eq!(
            normalize_path("/home/travis/build/.m2/repository/a/b/c.jar", None),
            None
        );
        assert_eq!(normalize_path("a/../b.py", None).as_deref(), Some("b.py"));
    }

    #[test]
    fn vendored_and_extension() {
        assert!(is_vendored("node_modules/jest/x.js"));
        assert!(is_vendored("client/node_modules/x.js"));
        assert!(!is_vendored("src/x.js"));
        assert!(has_extension("src/a.test.ts"));
        assert!(!has_extension("src/Makefile"));
    }
}
