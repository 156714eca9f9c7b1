//! Path normalisation: turns whatever path a tool printed into a repo-relative, forward-slash
//! path, or refuses it.
//!
//! It strips CI checkout prefixes (GitHub's `/home/runner/work/R/R/`, `/__w/R/R/`, `D:\a\R\R\`,
//! `/github/workspace/`; GitLab's `/builds/g/p/`; Travis, Jenkins, CircleCI, Azure, Drone,
//! Buildkite and the usual container checkouts such as `/checkout/`, `/app/`, `/src/`: see
//! [`CHECKOUT_ROOTS`]), the configured workspace, `file://` and `./`, and resolves `.`/`..`
//! lexically. It must never return an absolute path, a path with a
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
        if !ws.is_empty()
            && let Some(rest) = p.strip_prefix(ws)
            && let Some(rest) = rest.strip_prefix('/')
        {
            p = rest.to_string();
        }
    }
    if let Some(rest) = strip_rebar3_build(&p) {
        p = rest.to_string();
    } else if let Some(rest) = strip_runner_prefix(&p) {
        p = strip_gopath(rest).unwrap_or(rest).to_string();
    } else if let Some(rest) = strip_zip_download(&p) {
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

/// Strips a CI system's checkout directory. Each entry is a fixed root followed by the number
/// of path segments (owner, repository, job…) that still belong to the checkout, not to the
/// repository, and, where the layout is certain, which of them is the repository's name
/// ([`checkout_repo`]). A first segment starting with `_` (`_temp`, `_actions`, `_tool`) is
/// runner scratch space, not the repository.
const CHECKOUT_ROOTS: [(&str, usize, Option<usize>); 26] = [
    // GitHub-hosted runners (Linux, macOS, container jobs), Azure Pipelines' hosted agents.
    ("/home/runner/work/", 2, Some(0)),
    ("/Users/runner/work/", 2, Some(0)),
    ("/__w/", 2, Some(0)),
    ("/home/vsts/work/", 2, None),
    ("/github/workspace/", 0, None),
    // Travis CI, and its GOPATH checkout `gopath/src/github.com/o/r/`.
    ("/home/travis/gopath/src/", 3, None),
    ("/home/travis/build/", 2, Some(1)),
    ("/Users/travis/build/", 2, Some(1)),
    // GitLab CI (`/builds/<group>/<project>/`; the runner-token form is handled apart).
    ("/builds/", 2, None),
    // Jenkins agents: `…/workspace/<job>/`.
    ("/var/lib/jenkins/workspace/", 1, None),
    ("/var/jenkins_home/workspace/", 1, None),
    ("/home/jenkins/agent/workspace/", 1, None),
    ("/home/jenkins/workspace/", 1, None),
    // CircleCI, Drone, Bitbucket, Cirrus, Buildkite, TeamCity, AppVeyor.
    ("/home/circleci/project/", 0, None),
    // CircleCI's `working_directory` set to another directory of the home (its 2.0 templates'
    // `~/repo`); the Go image's GOPATH, `~/go/`, is refused below.
    ("/home/circleci/", 1, None),
    ("/root/project/", 0, None),
    ("/drone/src/", 0, None),
    ("/opt/atlassian/pipelines/agent/build/", 0, None),
    ("/tmp/cirrus-ci-build/", 0, None),
    ("/var/lib/buildkite-agent/builds/", 3, None),
    ("/opt/buildagent/work/", 1, None),
    // The usual container checkouts: rust-lang's `/checkout/`, Docker images' `WORKDIR`s,
    // GOPATH images, Cloud Build / Tekton's `/workspace/`.
    ("/checkout/", 0, None),
    ("/usr/src/app/", 0, None),
    ("/go/src/", 3, None),
    ("/workspace/", 0, None),
    ("/app/", 0, None),
];

/// The repository's name in a CI checkout path (`/home/travis/build/<owner>/<repo>/…`,
/// `/home/runner/work/<repo>/<repo>/…`): for the roots of [`CHECKOUT_ROOTS`] that name it, when
/// the path goes on below the checkout.
pub(crate) fn checkout_repo(p: &str) -> Option<&str> {
    let (root, segments, repo) = CHECKOUT_ROOTS.iter().find(|(r, ..)| p.starts_with(r))?;
    let mut segs = p[root.len()..].split('/');
    let name = segs.clone().nth((*repo)?)?;
    segs.nth(*segments)?;
    Some(name).filter(|r| !r.is_empty())
}

/// Strips the runner's checkout directory (see [`CHECKOUT_ROOTS`]).
fn strip_runner_prefix(p: &str) -> Option<&str> {
    let b = p.as_bytes();
    if b.first() == Some(&b'/') {
        for (root, segments, _) in CHECKOUT_ROOTS {
            if let Some(rest) = p.strip_prefix(root) {
                if root == "/builds/" {
                    return strip_gitlab(rest);
                }
                if root == "/home/circleci/" && rest.starts_with("go/") {
                    return None;
                }
                return strip_segments(rest, segments);
            }
        }
        if let Some(rest) = p.strip_prefix("/src/") {
            return Some(rest);
        }
        // Self-hosted GitHub runners and Azure agents: `<anywhere>/_work/<R>/<R>/` and
        // `<anywhere>/_work/<n>/s/`.
        if let Some(at) = p.find("/_work/") {
            return strip_segments(&p[at + 7..], 2);
        }
        return strip_jenkins(p);
    }
    // Windows: `D:/a/R/R/` (GitHub) and `D:/a/1/s/` (Azure) after backslash conversion, any
    // drive letter; AppVeyor's `C:/projects/<repo>/`; Jenkins' `C:/…/workspace/<job>/`.
    if b.len() > 3 && b[0].is_ascii_alphabetic() && &b[1..3] == b":/" {
        let rest = &p[3..];
        if let Some(rest) = rest.strip_prefix("a/") {
            return strip_segments(rest, 2);
        }
        if let Some(rest) = rest.strip_prefix("projects/") {
            return strip_segments(rest, 1);
        }
        if let Some(at) = rest.find("/_work/") {
            return strip_segments(&rest[at + 7..], 2);
        }
        return strip_jenkins(rest);
    }
    None
}

/// A repository downloaded as GitHub's "Download ZIP" archive unpacks into `<repo>-<branch>/`
/// (`-master`, `-main`, `-develop`: the usual default branches), wherever the user put it (`C:/Users/u/Downloads/app-master/`,
/// `/root/examples-master/`): that directory is the checkout. Only for an absolute path no CI
/// root matched, and never below a directory of dependencies or caches (a dependency fetched as
/// an archive unpacks the same way).
fn strip_zip_download(p: &str) -> Option<&str> {
    let b = p.as_bytes();
    let absolute = b.first() == Some(&b'/') || (b.len() > 3 && &b[1..3] == b":/");
    if !absolute {
        return None;
    }
    let mut at = 0;
    for seg in p.split('/') {
        let end = at + seg.len();
        let name = ["-master", "-main", "-develop"]
            .iter()
            .find_map(|b| seg.strip_suffix(b));
        if name.is_some_and(|n| !n.is_empty()) && end < p.len() {
            let above = &p[..at];
            const CACHES: [&str; 10] = [
                "node_modules",
                "packages",
                "vendor",
                ".cargo",
                "/pkg/mod/",
                ".m2",
                ".gradle",
                "PackageCache",
                ".cache",
                "/tmp/",
            ];
            if CACHES.iter().any(|c| above.contains(c)) {
                return None;
            }
            // Windows' "Extract All" puts the archive's own folder inside one of the same name.
            let rest = &p[end + 1..];
            return Some(
                rest.strip_prefix(seg)
                    .and_then(|r| r.strip_prefix('/'))
                    .unwrap_or(rest),
            );
        }
        at = end + 1;
    }
    None
}

/// rebar3 builds every application under `<root>/_build/<profile>/lib/<app>/`, the project's own
/// top-level application as links to its sources (`/Users/evan/scrc/ghash/_build/test/lib/ghash/
/// src/gset.erl` is `src/gset.erl` of the checkout `ghash`): when `<app>` is the name of the
/// directory holding `_build`, the rest is repo-relative, wherever that directory is. Another
/// name there is a dependency (or an umbrella's app, whose `apps/<app>/` the path cannot tell).
fn strip_rebar3_build(p: &str) -> Option<&str> {
    let at = memchr::memmem::find(p.as_bytes(), b"/_build/")?;
    let root = p[..at].rsplit('/').next()?;
    let mut rest = p[at + 8..].splitn(4, '/');
    let (_profile, lib, app, tail) = (rest.next()?, rest.next()?, rest.next()?, rest.next()?);
    (!root.is_empty() && lib == "lib" && app == root).then_some(tail)
}

/// A CI workspace used as a GOPATH (Jenkins' `$WORKSPACE/src/github.com/elastic/beats/`, a
/// workflow checking out into `go/src/github.com/o/r/`): the repository is at
/// `src/<code host>/<owner>/<repo>/` below the checkout.
fn strip_gopath(rest: &str) -> Option<&str> {
    let src = rest
        .strip_prefix("src/")
        .or_else(|| rest.strip_prefix("go/src/"))
        .or_else(|| rest.strip_prefix("gopath/src/"))?;
    const HOSTS: [&str; 3] = ["github.com/", "gitlab.com/", "bitbucket.org/"];
    let repo = HOSTS.iter().find_map(|h| src.strip_prefix(h))?;
    strip_segments(repo, 2)
}

/// Jenkins (and Hudson) workspaces wherever the Jenkins home is: the old layout
/// `<home>/jobs/<job>/workspace/` (folders nest as `jobs/<a>/jobs/<b>/workspace/`) is the checkout
/// itself, and `<home>/workspace/<job>/` when a directory above it is named after Jenkins or
/// Hudson (`/var/lib/jenkins`, `~/.jenkins`, `C:/Program Files (x86)/Jenkins`, `D:/Jenkins_x`,
/// `/srv/hudson`). A bare `…/workspace/` elsewhere says nothing about where a checkout starts.
fn strip_jenkins(p: &str) -> Option<&str> {
    // The first `workspace` that qualifies: the repository may have one of its own below it.
    for (at, _) in p.match_indices("/workspace/") {
        let (above, rest) = (&p[..at], &p[at + 11..]);
        let mut segs = above.rsplit('/');
        let job = segs.next().unwrap_or_default();
        if !job.is_empty() && segs.next() == Some("jobs") {
            return Some(rest);
        }
        let named = above.split('/').any(|seg| {
            let seg = seg.trim_start_matches('.').to_ascii_lowercase();
            seg.starts_with("jenkins") || seg.starts_with("hudson")
        });
        if named {
            return strip_segments(rest, 1);
        }
    }
    None
}

/// GitLab: `/builds/<group>/<project>/`, or with the docker executor's runner token and
/// concurrency index `/builds/<token>/<n>/<group>/<project>/`.
fn strip_gitlab(rest: &str) -> Option<&str> {
    let mut it = rest.splitn(3, '/');
    let (first, second) = (it.next()?, it.next()?);
    let tokenish = (8..=9).contains(&first.len())
        && first
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        && !second.is_empty()
        && second.bytes().all(|c| c.is_ascii_digit());
    if tokenish {
        return strip_segments(it.next()?, 2);
    }
    strip_segments(rest, 2)
}

fn strip_segments(mut rest: &str, n: usize) -> Option<&str> {
    for _ in 0..n {
        let (seg, tail) = rest.split_once('/')?;
        // `_temp`, `_actions`: runner scratch space; `.m2`, `.cache`: tool caches under the root.
        if seg.is_empty() || seg.starts_with(['_', '.']) {
            return None;
        }
        rest = tail;
    }
    Some(rest)
}

/// True for files no maintainer wants pointed at even when they sit in the checkout: build
/// systems' compiler probes (autoconf's `conftest.c`, CMake's try-compile directories), generated
/// test mains (`_testmain.go`) and build scratch directories.
pub fn is_generated(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some(ext) = name.strip_prefix("conftest.") {
        // `conftest.py` is pytest's, and the repository's own.
        return ext != "py";
    }
    if name == "_testmain.go" {
        return true;
    }
    // Playwright's output directory (traces, screenshots, and the temporary projects its own
    // test suite writes and runs there).
    if path.starts_with("test-results/") || path.contains("/test-results/") {
        return true;
    }
    // Maven's build directory: sources its plugins generate or copy with properties filled in
    // (`target/generated-sources/`, templating-maven-plugin's `target/filtered-sources/`); a
    // compiler error there belongs to the template in `src/`, which the log does not name.
    if path
        .split('/')
        .zip(path.split('/').skip(1))
        .any(|(dir, sub)| {
            dir == "target" && (sub.starts_with("generated-") || sub.starts_with("filtered-"))
        })
    {
        return true;
    }
    // Build directories of rebar3, mix, dune and Sphinx: dependencies and outputs.
    if path.starts_with("_build/") {
        return true;
    }
    // CMake's try-compile scratch (`CMakeFiles/CMakeScratch/`, `CMakeFiles/CMakeTmp/`) and
    // everything else it generates under `CMakeFiles/`.
    if path.starts_with("CMakeFiles/") || path.contains("/CMakeFiles/") {
        return true;
    }
    // Meson's own private directory: its compiler probes (`meson-private/tmpzts8g7aa/testfile.c`)
    // and sanity checks, which fail by design while it configures.
    if path.starts_with("meson-private/") || path.contains("/meson-private/") {
        return true;
    }
    // Meson's per-target private directories hold what it generates (valac's C, configured
    // sources): `src/gala.p/` since 0.55, `lib/gconnect-0.1@sha/` (`@exe`, `@sta`) before.
    path.split('/').rev().skip(1).any(|dir| {
        dir.len() > 2
            && (dir.ends_with(".p")
                || dir.ends_with("@sha")
                || dir.ends_with("@exe")
                || dir.ends_with("@sta"))
    })
}

/// True for a toolchain's own sources printed relative to the toolchain's tree: rustc before
/// 1.47 printed its standard library as `src/libcore/result.rs` (later `/rustc/<hash>/library/…`,
/// absolute and refused anyway). No repository but rust-lang/rust has them.
pub fn is_toolchain(path: &str) -> bool {
    const RUST: [&str; 5] = [
        "src/libcore/",
        "src/libstd/",
        "src/liballoc/",
        "src/libtest/",
        "src/libpanic_unwind/",
    ];
    // Version managers and tool caches in a home directory, which a Jenkins agent whose `HOME` is
    // the job's workspace puts inside it (`.gvm/versions/go1.14.7.linux.amd64/src/testing/…`).
    const HOMES: [&str; 12] = [
        ".gvm/", ".goenv/", ".rustup/", ".pyenv/", ".rbenv/", ".rvm/", ".nvm/", ".sdkman/", ".m2/",
        ".gradle/", ".cache/", ".npm/",
    ];
    RUST.iter().any(|r| path.starts_with(r)) || HOMES.iter().any(|h| path.starts_with(h))
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
    // Unity's package manager unpacks every package a project uses into
    // `Library/PackageCache/<name>@<hash>/` (the project's own packages live in `Packages/`); a
    // console paste may glue a progress line's last letter to it, hence no boundary check.
    path.contains("Library/PackageCache/")
        || MARKERS
            .iter()
            .any(|m| path.starts_with(m) || after_slash(path, m))
}

/// True when `dir` occurs in `path` right after a `/` (`path.contains("/" + dir)` without
/// building that string: this runs for every finding, several times).
fn after_slash(path: &str, dir: &str) -> bool {
    let b = path.as_bytes();
    let mut from = 1;
    while let Some(i) = b
        .get(from..)
        .and_then(|rest| memchr::memmem::find(rest, dir.as_bytes()))
    {
        let at = from + i;
        if b[at - 1] == b'/' {
            return true;
        }
        from = at + 1;
    }
    false
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

/// Normalises a directory (absolute or relative to the repository root) into its
/// repo-relative form, `""` for the root itself.
pub fn normalize_dir(raw: &str, workspace: Option<&str>) -> Option<String> {
    let raw = raw.trim().trim_end_matches(['/', '\\']);
    // A file name is appended so the checkout prefixes (which end in `/`) and the
    // "not empty" rule of `normalize_path` apply, then taken off again.
    let p = normalize_path(&format!("{raw}/x"), workspace)?;
    Some(match p.strip_suffix("/x") {
        Some(dir) => dir.to_string(),
        None => String::new(),
    })
}

/// The repo-relative directory of a Go import path on a code host whose repositories are
/// `host/owner/repo` (`github.com/ethereum/go-ethereum/whisper/whisperv6` → `whisper/whisperv6`;
/// a major-version suffix `v2` after the repository is not a directory). `None` for other hosts
/// (vanity import paths say nothing about the layout) and `Some("")` for the root package.
pub fn go_package_dir(import_path: &str) -> Option<&str> {
    const HOSTS: [&str; 3] = ["github.com/", "gitlab.com/", "bitbucket.org/"];
    let rest = HOSTS.iter().find_map(|h| import_path.strip_prefix(h))?;
    let rest = strip_segments(rest, 2).or_else(|| {
        // `github.com/o/r` itself.
        (rest.bytes().filter(|&c| c == b'/').count() == 1).then_some("")
    })?;
    let rest = match rest.split_once('/') {
        Some((v, tail))
            if v.len() > 1 && v.starts_with('v') && v[1..].bytes().all(|c| c.is_ascii_digit()) =>
        {
            tail
        }
        None if rest.len() > 1
            && rest.starts_with('v')
            && rest[1..].bytes().all(|c| c.is_ascii_digit()) =>
        {
            ""
        }
        _ => rest,
    };
    let ok = rest
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'/' | b'-' | b'_' | b'.'));
    (ok && !rest.contains("..")).then_some(rest)
}

/// Where a directory a build tool entered lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dir {
    /// Inside the repository, at this repo-relative path (`""` = the root).
    Repo(String),
    /// A system or scratch directory (`/usr/…`, `/tmp/…`): nothing in it is the repository's.
    Outside,
    /// Somewhere the parser cannot place: relative paths are left as printed.
    Unknown,
    /// An out-of-tree build directory this many levels below the repository root (meson's
    /// `builddir/`): `../` that many times leads back to the root; a path that stays inside
    /// is a build output.
    Build(u8),
}

/// Deepest nesting of `make` directories remembered; deeper ones are only counted.
const MAX_DIRS: usize = 32;

/// The working directory of the current build step, from `make[N]: Entering directory '…'` /
/// `Leaving directory` and `ninja: Entering directory `…'`, so the relative paths a compiler
/// prints there (`../../src/x.c`, `x.c`) resolve to repo-relative ones. Bounded: at most
/// [`MAX_DIRS`] levels of at most `MAX_PATH` bytes each.
///
/// When no checkout prefix places an absolute directory, the first one entered (if it is not a
/// system or scratch directory) is taken as the repository root, as recursive makes start
/// there; the directories under it are placed relative to it.
#[derive(Debug, Default)]
pub struct WorkDirs {
    stack: Vec<Dir>,
    /// Levels entered beyond `MAX_DIRS`.
    deeper: usize,
    /// The guessed root (absolute, without trailing `/`), when no checkout prefix applied.
    root: Option<String>,
    /// Depth of the build directory a meson compile command showed (see
    /// [`WorkDirs::compile_command`]), used while no directory was entered.
    build_depth: Option<u8>,
}

impl WorkDirs {
    /// Looks at one line; returns true when it was an Entering/Leaving line (the current
    /// directory may have changed).
    pub fn line(&mut self, text: &str, workspace: Option<&str>) -> bool {
        let t = text.as_bytes();
        if t.len() < 20
            || !(t.starts_with(b"make")
                || t.starts_with(b"gmake")
                || t.starts_with(b"ninja:")
                || t.starts_with(b"mingw32-make"))
        {
            return false;
        }
        let Some(at) = memchr::memmem::find(t, b": Entering directory ")
            .map(|i| (i, true))
            .or_else(|| memchr::memmem::find(t, b": Leaving directory ").map(|i| (i, false)))
        else {
            return false;
        };
        let (colon, entering) = at;
        let tool = &text[..colon];
        let is_make = tool.ends_with("make") || (tool.ends_with(']') && tool.contains("make["));
        if !(is_make || tool == "ninja") || tool.len() > 40 {
            return false;
        }
        if !entering {
            if self.deeper > 0 {
                self.deeper -= 1;
            } else {
                self.stack.pop();
            }
            return true;
        }
        let rest = &text[colon..];
        let rest = rest.split_once("directory ").map_or("", |(_, r)| r);
        let dir = rest
            .trim()
            .trim_start_matches(['\'', '`', '"'])
            .trim_end_matches(['\'', '`', '"']);
        if self.stack.len() >= MAX_DIRS {
            self.deeper += 1;
            return true;
        }
        let place = self.place(dir, workspace);
        self.stack.push(place);
        true
    }

    fn place(&mut self, dir: &str, workspace: Option<&str>) -> Dir {
        if dir.is_empty() || dir.len() > MAX_PATH {
            return Dir::Unknown;
        }
        let unix = dir.replace('\\', "/");
        let absolute = unix.starts_with('/') || unix.as_bytes().get(1) == Some(&b':');
        if !absolute {
            // ninja's `Entering directory `build'`: relative to where the step runs.
            return match self.current() {
                Dir::Repo(base) => {
                    let joined = if base.is_empty() {
                        unix
                    } else {
                        format!("{base}/{unix}")
                    };
                    normalize_dir(&joined, None).map_or(Dir::Outside, Dir::Repo)
                }
                Dir::Outside => Dir::Outside,
                Dir::Build(_) => Dir::Unknown,
                Dir::Unknown if self.stack.is_empty() => {
                    normalize_dir(&unix, None).map_or(Dir::Outside, Dir::Repo)
                }
                Dir::Unknown => Dir::Unknown,
            };
        }
        if let Some(rel) = normalize_dir(&unix, workspace) {
            return Dir::Repo(rel);
        }
        if is_system_dir(&unix) {
            return Dir::Outside;
        }
        let unix = unix.trim_end_matches('/');
        match &self.root {
            None => {
                self.root = Some(unix.to_string());
                Dir::Repo(String::new())
            }
            Some(root) if root == unix => Dir::Repo(String::new()),
            Some(root) => match unix
                .strip_prefix(root.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                Some(rel) => normalize_dir(rel, None).map_or(Dir::Unknown, Dir::Repo),
                None => Dir::Unknown,
            },
        }
    }

    /// The directory the current step's tools run in.
    pub fn current(&self) -> Dir {
        if self.deeper > 0 {
            return Dir::Unknown;
        }
        match (self.stack.last(), self.build_depth) {
            (Some(d), _) => d.clone(),
            (None, Some(depth)) => Dir::Build(depth),
            (None, None) => Dir::Unknown,
        }
    }

    /// Looks at a compiler command ninja echoed for a failed meson target (`FAILED: …` then
    /// `cc … -I. -I.. … -c ../src/x.c`): meson passes the build root as `-I.` and the source
    /// root, relative to it, right after (`-I..`, `-I../..`). Returns true when that placed
    /// the build directory, while no `Entering directory` did.
    pub fn compile_command(&mut self, text: &str) -> bool {
        if text.len() < 80 || !self.stack.is_empty() {
            return false;
        }
        let Some(at) = memchr::memmem::find(text.as_bytes(), b" -I. -I..") else {
            return false;
        };
        let up = text[at + 7..].split(' ').next().unwrap_or("");
        let depth = up.split('/').filter(|s| !s.is_empty()).count();
        if up.split('/').any(|s| !s.is_empty() && s != "..") || depth == 0 || depth > 8 {
            return false;
        }
        let depth = u8::try_from(depth).unwrap_or(u8::MAX);
        let changed = self.build_depth != Some(depth);
        self.build_depth = Some(depth);
        changed
    }

    /// The guessed repository root, for absolute paths under it.
    pub fn root(&self) -> Option<&str> {
        self.root.as_deref()
    }

    /// A new CI step: its tools start again where the step starts.
    pub fn reset(&mut self) {
        self.stack.clear();
        self.deeper = 0;
        self.build_depth = None;
    }
}

/// Directories that are never a checkout: system, tool-cache and scratch locations, and
/// dependency builds (PECL's `pear-build-…`, Cargo's registry).
fn is_system_dir(dir: &str) -> bool {
    const ROOTS: [&str; 9] = [
        "/usr/",
        "/tmp/",
        "/opt/",
        "/var/tmp/",
        "/etc/",
        "/proc/",
        "/lib/",
        "/private/",
        "/nix/",
    ];
    ROOTS.iter().any(|r| dir.starts_with(r))
        || dir.contains("/.")
        || dir.contains("pear-build")
        || dir.contains("node_modules")
        || dir.contains("site-packages")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_names_its_repository_where_its_layout_is_certain() {
        let travis = "/home/travis/build/VisTrails/VisTrails/vistrails/core/x.py";
        assert_eq!(checkout_repo(travis), Some("VisTrails"));
        let actions = "/home/runner/work/h/h/.venv/lib/python3.11/site-packages/h/x.py";
        assert_eq!(checkout_repo(actions), Some("h"));
        // macOS runners and container jobs lay the checkout out as Linux runners do.
        let macos = "/Users/runner/work/h/h/venv/lib/python3.12/site-packages/h/x.py";
        assert_eq!(checkout_repo(macos), Some("h"));
        assert_eq!(
            checkout_repo("/__w/h/h/.venv/lib/site-packages/h/x.py"),
            Some("h")
        );
        // The checkout itself, not a path below it; a root whose segments name no repository.
        assert_eq!(checkout_repo("/home/travis/build/o/r"), None);
        assert_eq!(checkout_repo("/home/vsts/work/1/s/x.py"), None);
        assert_eq!(checkout_repo("/usr/lib/python3/x.py"), None);
    }

    #[test]
    fn meson_private_dirs_are_generated_and_compile_commands_place_the_build_dir() {
        assert!(is_generated("src/gala.p/WindowManager.c"));
        assert!(is_generated("lib/gconnect-0.1@sha/gconnect-config.c"));
        // mpv's container build: a second meson configuration's probes fail in `build/`.
        assert!(is_generated("build/meson-private/tmpzts8g7aa/testfile.c"));
        assert!(is_generated("meson-private/tmpl1anmut4/testfile.c"));
        assert!(!is_generated("src/meson-privateer/a.c"));
        assert!(!is_generated("src/app.py"));
        assert!(!is_generated("a.p"));
        // jcabi-aspects' Travis job: javac's error in the copy templating-maven-plugin made.
        assert!(is_generated(
            "target/filtered-sources/java/com/jcabi/aspects/apt/EmptyProcessor.java"
        ));
        assert!(is_generated(
            "core/target/generated-sources/annotations/x/A_.java"
        ));
        assert!(!is_generated("src/main/java/target/filtered/A.java"));
        let mut d = WorkDirs::default();
        // mesonbuild/meson#9553: the compile command of the failed target.
        let cmd = "/usr/local/bin/gcc -Iplugins/fishlim/tests/fishlim_tests.p -I../plugins/fishlim -I. -I.. -Isrc/common -c ../plugins/fishlim/utils.c";
        assert!(d.compile_command(cmd));
        assert_eq!(d.current(), Dir::Build(1));
        assert!(!d.compile_command(cmd), "unchanged");
        assert!(d.compile_command(&cmd.replace("-I. -I..", "-I. -I../..")));
        assert_eq!(d.current(), Dir::Build(2));
        d.reset();
        assert_eq!(d.current(), Dir::Unknown);
        assert!(!d.compile_command(&cmd.replace("-I. -I..", "-I. -I../include")));
        assert_eq!(d.current(), Dir::Unknown);
    }

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
            normalize_path("/home/travis/build/gnzlbg/ctest/src/lib.rs", None).as_deref(),
            Some("src/lib.rs")
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
            normalize_path("/home/travis/build/akka/akka/akka-actor/A.scala", None).as_deref(),
            Some("akka-actor/A.scala")
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
        assert_eq!(
            normalize_path(
                "C:\\users\\H S\\Downloads\\icsmanager-master\\IcsManagerLibrary\\Enable_ICS.cs",
                None
            )
            .as_deref(),
            Some("IcsManagerLibrary/Enable_ICS.cs")
        );
        assert_eq!(
            normalize_path("C:/Users/w/Downloads/App-master/App-master/A.cs", None).as_deref(),
            Some("A.cs")
        );
        assert_eq!(
            normalize_path("/root/examples-master/web/src/main/java/A.java", None).as_deref(),
            Some("web/src/main/java/A.java")
        );
        for outside in [
            "/home/u/project/src/a.c",
            "/home/u/.cache/pip/dep-master/x.py",
            "/home/u/app/node_modules/dep-main/index.js",
            "/home/u/app-master",
        ] {
            assert_eq!(normalize_path(outside, None), None, "{outside}");
        }
        assert!(is_vendored(
            "Library/PackageCache/com.playeveryware.eos@024a48d770/Editor/Utility/BuildUtility.cs"
        ));
        assert!(!is_vendored("Packages/com.example.tool/Runtime/Tool.cs"));
        assert!(has_extension("src/a.test.ts"));
        assert!(!has_extension("src/Makefile"));
    }

    #[test]
    fn ci_checkout_roots() {
        let n = |p: &str| normalize_path(p, None);
        // Travis (LogChunks: akka, SwiftyJSON, go-ethereum), Jenkins at Inria (cidiff: jPerturb),
        // Jenkins agents (analysis-model), GitLab, Azure, CircleCI and container checkouts.
        assert_eq!(
            n("/home/travis/build/akka/akka/akka-remote-tests/src/multi-jvm/scala/akka/remote/artery/TestMessage.scala").as_deref(),
            Some("akka-remote-tests/src/multi-jvm/scala/akka/remote/artery/TestMessage.scala")
        );
        assert_eq!(
            n("/Users/travis/build/SwiftyJSON/SwiftyJSON/Source/SwiftyJSON.swift").as_deref(),
            Some("Source/SwiftyJSON.swift")
        );
        assert_eq!(
            n("/home/travis/gopath/src/github.com/ethereum/go-ethereum/build/ci.go").as_deref(),
            Some("build/ci.go")
        );
        assert_eq!(
            n("/builds/workspace/jperturb/jPerturb/src/main/java/processor/PerturbationProcessor.java").as_deref(),
            Some("jPerturb/src/main/java/processor/PerturbationProcessor.java")
        );
        assert_eq!(
            n("/var/lib/jenkins/workspace/daos-stack-org_daos_PR-13-centos7/src/a.c").as_deref(),
            Some("src/a.c")
        );
        assert_eq!(
            n("/home/jenkins/workspace/Plugins_ldap-plugin_PR-48/src/main/java/A.java").as_deref(),
            Some("src/main/java/A.java")
        );
        assert_eq!(
            n(r"C:\Jenkins\workspace\VIGO - Compile\m\src\A.java").as_deref(),
            Some("m/src/A.java")
        );
        // Jenkins homes anywhere: the old `jobs/<job>/workspace/` layout (nested folders too)
        // and `<home>/workspace/<job>/` under a directory named after Jenkins or Hudson.
        assert_eq!(
            n("/home/user/.jenkins/jobs/job/workspace/another/path/SomeFile.scala").as_deref(),
            Some("another/path/SomeFile.scala")
        );
        assert_eq!(
            n(r"C:\Program Files (x86)\Jenkins\jobs\MyJob\workspace\MyProject\t\R.cpp").as_deref(),
            Some("MyProject/t/R.cpp")
        );
        assert_eq!(
            n("/var/lib/jenkins/jobs/Dev/jobs/Doc check/workspace/java/src/A.java").as_deref(),
            Some("java/src/A.java")
        );
        assert_eq!(
            n("/srv/hudson/workspace/Ebitool Trunk/build/A.java").as_deref(),
            Some("build/A.java")
        );
        assert_eq!(
            n(r"D:\Jenkins_SIMU\workspace\SIM145_trunk\CODE\a.c").as_deref(),
            Some("CODE/a.c")
        );
        // Not Jenkins: a `workspace` directory alone does not mark a checkout.
        assert_eq!(n("/media/ssd/multi/workspace/Product/src/A.java"), None);
        assert_eq!(n("/home/me/jobs/workspace/src/a.c"), None);
        assert_eq!(
            n("/opt/hudson/workspace/job/src/workspace/a.c").as_deref(),
            Some("src/workspace/a.c")
        );
        assert_eq!(
            n("/builds/group/project/src/a.py").as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            n("/builds/AbCd1234/0/group/project/src/a.py").as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            n("/home/vsts/work/1/s/src/a.ts").as_deref(),
            Some("src/a.ts")
        );
        assert_eq!(n(r"D:\a\1\s\src\App.cs").as_deref(), Some("src/App.cs"));
        assert_eq!(n("/agent/_work/1/s/src/a.ts").as_deref(), Some("src/a.ts"));
        assert_eq!(
            n(r"C:\projects\nancy\src\A.cs").as_deref(),
            Some("src/A.cs")
        );
        assert_eq!(
            n("/home/circleci/project/lib/a.rb").as_deref(),
            Some("lib/a.rb")
        );
        // postlight/ci-failed-test-reporter's CircleCI job (`working_directory` of its own).
        assert_eq!(
            n("/home/circleci/ci-test-failure-reporter/src/index.test.js").as_deref(),
            Some("src/index.test.js")
        );
        assert_eq!(n("/home/circleci/go/pkg/mod/github.com/x/y/a.go"), None);
        assert_eq!(n("/home/circleci/.npm/_npx/a/index.js"), None);
        assert_eq!(n("/drone/src/cmd/main.go").as_deref(), Some("cmd/main.go"));
        assert_eq!(
            n("/checkout/src/librustc/lib.rs").as_deref(),
            Some("src/librustc/lib.rs")
        );
        assert_eq!(n("/app/src/index.ts").as_deref(), Some("src/index.ts"));
        assert_eq!(n("/src/main.c").as_deref(), Some("main.c"));
        assert_eq!(n("/workspace/pkg/a.go").as_deref(), Some("pkg/a.go"));
        assert_eq!(
            n("/go/src/github.com/o/r/pkg/a.go").as_deref(),
            Some("pkg/a.go")
        );
        assert_eq!(
            n("file:///github/workspace/src/a.kt").as_deref(),
            Some("src/a.kt")
        );
        // Scratch next to the checkout stays outside.
        assert_eq!(n("/home/travis/build/_temp/x.sh"), None);
        assert_eq!(
            n(
                "/home/travis/.rvm/gems/ruby-1.9.3-p551/gems/albacore-1.0.0.rc.2/lib/albacore/support/failure.rb"
            ),
            None
        );
    }

    #[test]
    fn generated_and_toolchain_files() {
        for p in [
            "conftest.c",
            "build/conftest.cpp",
            "build/CMakeFiles/CMakeScratch/TryCompile-abc/src.c",
            "CMakeFiles/CMakeTmp/CheckSymbolExists.c",
            "pkg/_testmain.go",
            "test-results/playwright-should-work-playwright-test/a.test.ts",
        ] {
            assert!(is_generated(p), "{p}");
        }
        assert!(!is_generated("tests/conftest.py"));
        assert!(!is_generated("src/cmake/a.c"));
        // LogChunks ripgrep: a dependency's build script panicked in rustc's own libcore.
        assert!(is_toolchain("src/libcore/result.rs"));
        assert!(!is_toolchain("src/lib.rs"));
    }

    #[test]
    fn make_directories() {
        let mut d = WorkDirs::default();
        // LogChunks vis: Travis checkout, old make's backquote.
        assert!(d.line(
            "make[1]: Entering directory `/home/travis/build/martanne/vis'",
            None
        ));
        assert_eq!(d.current(), Dir::Repo(String::new()));
        assert!(d.line(
            "make[2]: Entering directory `/home/travis/build/martanne/vis/dependency/build/libtermkey-0.20'",
            None
        ));
        assert_eq!(
            d.current(),
            Dir::Repo("dependency/build/libtermkey-0.20".into())
        );
        assert!(d.line(
            "make[2]: Leaving directory `/home/travis/build/martanne/vis/dependency/build/libtermkey-0.20'",
            None
        ));
        assert_eq!(d.current(), Dir::Repo(String::new()));
        // An unknown root: the first directory entered is taken as the checkout.
        let mut d = WorkDirs::default();
        d.line(
            "make[1]: Entering directory '/path/to/workspace/lib/build'",
            None,
        );
        d.line(
            "make[2]: Entering directory '/path/to/workspace/lib/build/third-party'",
            None,
        );
        assert_eq!(d.current(), Dir::Repo("third-party".into()));
        assert_eq!(d.root(), Some("/path/to/workspace/lib/build"));
        d.line(
            "make[3]: Entering directory '/usr/src/linux-headers-5.4.0'",
            None,
        );
        assert_eq!(d.current(), Dir::Outside);
        // ninja from meson/cmake: relative to where the step runs.
        let mut d = WorkDirs::default();
        assert!(d.line("ninja: Entering directory `build'", None));
        assert_eq!(d.current(), Dir::Repo("build".into()));
        assert!(!d.line("make: *** [all] Error 2", None));
        assert!(!d.line("Entering directory is mentioned here", None));
    }

    #[test]
    fn go_import_paths() {
        // LogChunks go-ethereum and awesome-go: `FAIL\t<import path>` lines.
        assert_eq!(
            go_package_dir("github.com/ethereum/go-ethereum/whisper/whisperv6"),
            Some("whisper/whisperv6")
        );
        assert_eq!(go_package_dir("github.com/avelino/awesome-go"), Some(""));
        assert_eq!(go_package_dir("github.com/o/r/v2/pkg"), Some("pkg"));
        assert_eq!(go_package_dir("github.com/o/r/v2"), Some(""));
        assert_eq!(go_package_dir("example.com/demo"), None);
        assert_eq!(go_package_dir("golang.org/x/tools/go"), None);
    }
}
