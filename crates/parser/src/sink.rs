//! The report sink: the single place where matchers hand over a finding.
//!
//! It normalises the path (refusing any that leaves the repository), enforces the contract's
//! invariants (line >= 1, confidence in 0–1, bounded message length), deduplicates by
//! (file, line, type) keeping the first appearance, caps the number of reports, and orders them
//! by the log line where each error first appeared. It must never hold more than
//! [`MAX_REPORTS`] reports, whatever the log.

use std::collections::HashMap;

use crate::path::{Dir, is_generated, is_toolchain, is_vendored, normalize_path};
use crate::{BugReport, BugType};

/// Hard cap on distinct reports kept from one log.
pub const MAX_REPORTS: usize = 1000;
/// Messages are cut to this many characters.
pub const MAX_MESSAGE: usize = 500;

/// A finding as a matcher sees it, before path normalisation.
#[derive(Debug, Clone)]
pub struct Finding<'a> {
    pub path: &'a str,
    pub line: u64,
    pub column: Option<u64>,
    pub error_type: BugType,
    pub message: &'a str,
    pub test_name: Option<&'a str>,
    pub confidence: f64,
    pub tool: Option<&'static str>,
    pub rule: Option<&'a str>,
}

impl<'a> Finding<'a> {
    pub fn new(path: &'a str, line: u64, error_type: BugType, message: &'a str) -> Self {
        Finding {
            path,
            line,
            column: None,
            error_type,
            message,
            test_name: None,
            confidence: 0.9,
            tool: None,
            rule: None,
        }
    }
    pub fn col(mut self, c: Option<u64>) -> Self {
        self.column = c;
        self
    }
    pub fn test(mut self, t: Option<&'a str>) -> Self {
        self.test_name = t;
        self
    }
    pub fn conf(mut self, c: f64) -> Self {
        self.confidence = c;
        self
    }
    pub fn tool(mut self, t: &'static str) -> Self {
        self.tool = Some(t);
        self
    }
    pub fn tool_opt(mut self, t: Option<&'static str>) -> Self {
        self.tool = t;
        self
    }
    pub fn rule(mut self, r: Option<&'a str>) -> Self {
        self.rule = r;
        self
    }
}

/// What makes a report distinct: its file, line and type.
pub(crate) type Key = (String, u32, BugType);

#[derive(Debug, Default)]
pub struct Sink {
    workspace: Option<String>,
    /// (line of first appearance, report)
    reports: Vec<(u64, BugReport)>,
    /// Per report: the CI step it was found in, and whether the tool printed a relative path.
    origin: Vec<(u32, bool)>,
    seen: HashMap<(String, u32, BugType), usize>,
    /// Reports first seen with no test whose test name a later duplicate gave (`true`), or
    /// took back because a second test reached the same line (`false`).
    named_later: HashMap<(String, u32, BugType), bool>,
    step: u32,
    /// Where the tools run (`make` directories, a `pnpm -r` package): relative paths are
    /// relative to it.
    cwd: Option<Dir>,
    /// A repository root guessed from the build's own directories (see `WorkDirs`), for
    /// absolute paths under it.
    root: Option<String>,
    /// Reports before this index belong to `go test` packages already summed up.
    package_mark: usize,
    /// The repository's own Python packages, learned from the paths of reports (`src/mypkg/a.py`
    /// → `mypkg` lives at `src/mypkg`): a frame in `site-packages/mypkg/…` is the repository's
    /// own code installed into a virtualenv, and maps back. At most [`MAX_OWN_PACKAGES`].
    own_packages: Vec<(String, String)>,
    /// Findings of new locations refused because [`MAX_REPORTS`] were already kept.
    left_out: u64,
    /// The workspace directory the repository was checked out into (`actions/checkout`'s
    /// `path:`): a workspace-relative path through it is repo-relative without it.
    checkout_dir: Option<String>,
    /// Directories of the checkout the job cloned other repositories into (`git clone
    /// https://github.com/o/client ./client` in a step; samoa's Travis job clones
    /// `incubator-s4` and builds it): their files are not the repository's. At most
    /// [`MAX_FOREIGN`].
    foreign: Vec<String>,
}

/// Bound on the remembered directories of other repositories.
const MAX_FOREIGN: usize = 8;

/// Bound on the learned package directories.
const MAX_OWN_PACKAGES: usize = 32;

/// Directory names that are never an installed package's name in practice, however often a
/// report names them.
const NOT_PACKAGES: [&str; 8] = [
    "tests", "test", "src", "lib", "docs", "examples", "scripts", "testing",
];

/// `…/site-packages/<pkg>/<rest>` (or `dist-packages`): the package name and the rest. An egg
/// (`site-packages/numpy-1.24.0-py3.8-linux-x86_64.egg/numpy/…`, `setup.py install`) holds the
/// package one directory down.
fn installed_package(raw: &str) -> Option<(&str, &str)> {
    let at = memchr::memmem::find(raw.as_bytes(), b"-packages/")?;
    let before = &raw[..at];
    if !(before.ends_with("/site") || before.ends_with("/dist")) {
        return None;
    }
    let (pkg, rest) = raw[at + 10..].split_once('/')?;
    if pkg.ends_with(".egg") {
        return rest.split_once('/');
    }
    Some((pkg, rest))
}

/// A distribution's repository and its import package share a name but for case and `-`/`_`
/// (`VisTrails` / `vistrails`, `python-dateutil` is not `dateutil`).
fn same_package(repo: &str, pkg: &str) -> bool {
    repo.len() == pkg.len()
        && repo
            .bytes()
            .zip(pkg.bytes())
            .all(|(a, b)| a.eq_ignore_ascii_case(&b) || (a == b'-' && b == b'_'))
}

/// True when the relative path `raw` starts with the directory `dir` (repo-relative).
fn under_dir(raw: &str, dir: &str) -> bool {
    let raw = raw.trim();
    let raw = raw.strip_prefix("./").unwrap_or(raw);
    raw.len() > dir.len()
        && raw.as_bytes()[dir.len()] == b'/'
        && raw[..dir.len()].replace('\\', "/") == dir
}

/// True when a printed path is relative to the tool's working directory.
fn is_relative(raw: &str) -> bool {
    let b = raw.trim_start().as_bytes();
    !(b.first().is_some_and(|c| matches!(c, b'/' | b'\\' | b'~'))
        || b.starts_with(b"file:")
        || b.get(1) == Some(&b':'))
}

/// The wording the socket layers print when nothing listens on the port: POSIX `strerror`
/// (Python's `[Errno 111] Connection refused`, Java's `ConnectException: Connection refused`,
/// Ruby's `Errno::ECONNREFUSED`), Go's `dial tcp 127.0.0.1:5432: connect: connection refused` and
/// Node's `connect ECONNREFUSED 127.0.0.1:5432`.
fn is_connection_refused(message: &str) -> bool {
    crate::contains(message, "Connection refused")
        || crate::contains(message, "connect: connection refused")
        || crate::contains(message, "connect ECONNREFUSED")
}

/// Cuts `s` to at most `max` characters, on a char boundary.
pub fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl Sink {
    pub fn new(workspace: Option<String>) -> Self {
        Sink {
            workspace,
            ..Sink::default()
        }
    }

    /// Normalises a path the way emitted reports are normalised (for matchers that must decide
    /// whether a frame is inside the repository).
    ///
    /// Refuses generated files and compiler probes (`conftest.c`, `CMakeFiles/…`,
    /// `_testmain.go`), a toolchain's own sources (`src/libcore/…`) and dependencies vendored in the checkout (`node_modules/`,
    /// `site-packages/`…): they are never the repository's code.
    pub fn repo_path(&self, raw: &str) -> Option<String> {
        self.place(raw).map(|(p, _)| p)
    }

    /// [`repo_path`](Sink::repo_path), and whether the working directory was applied.
    fn place(&self, raw: &str) -> Option<(String, bool)> {
        let ws = self.workspace.as_deref();
        if memchr::memmem::find(raw.as_bytes(), b"-packages").is_some() {
            let unix = raw.trim().replace('\\', "/");
            if let Some((pkg, rest)) = installed_package(&unix) {
                let dir = match self.own_packages.iter().find(|(name, _)| name == pkg) {
                    Some((_, dir)) => dir.as_str(),
                    // A virtualenv inside the checkout holding the package named after the
                    // repository (VisTrails' `venv/…/site-packages/vistrails/`): its own.
                    None if crate::path::checkout_repo(&unix)
                        .is_some_and(|r| same_package(r, pkg)) =>
                    {
                        pkg
                    }
                    None => return None,
                };
                let p = normalize_path(&format!("{dir}/{rest}"), None)?;
                return (!is_generated(&p)).then_some((p, true));
            }
        }
        let (p, joined) = match &self.cwd {
            // A path already through the directory was printed from the repository root
            // (pytest's rootdir-relative ids once re-rooted, a tool run from the root).
            Some(Dir::Repo(dir)) if !dir.is_empty() && is_relative(raw) && !under_dir(raw, dir) => {
                (normalize_path(&format!("{dir}/{}", raw.trim()), ws)?, true)
            }
            Some(Dir::Outside) if is_relative(raw) => return None,
            Some(Dir::Build(depth)) if is_relative(raw) => {
                let unix = raw.trim().replace('\\', "/");
                let mut rest = unix.as_str();
                let mut up = 0;
                while let Some(r) = rest.strip_prefix("../") {
                    rest = r;
                    up += 1;
                }
                // Fewer `../` than the build directory is deep: a build output; more: above
                // the repository.
                if up != usize::from(*depth) {
                    return None;
                }
                (normalize_path(rest, ws)?, true)
            }
            _ => match normalize_path(raw, ws) {
                Some(p) => (p, false),
                None => {
                    let root = self.root.as_deref()?;
                    let rest = raw.trim().strip_prefix(root)?.strip_prefix('/')?;
                    (normalize_path(rest, None)?, true)
                }
            },
        };
        let p = match &self.checkout_dir {
            Some(d) => match p.strip_prefix(d.as_str()).and_then(|r| r.strip_prefix('/')) {
                Some(rest) if !rest.is_empty() => rest.to_string(),
                _ => p,
            },
            None => p,
        };
        if is_generated(&p) || is_vendored(&p) || is_toolchain(&p) || self.is_foreign(&p) {
            return None;
        }
        Some((p, joined))
    }

    /// Sets the directory relative paths are relative to (`None`: the repository root, or
    /// unknown).
    pub fn set_cwd(&mut self, cwd: Option<Dir>) {
        self.cwd = cwd;
    }

    /// The repository was checked out into `dir` (repo-relative form of a workspace
    /// subdirectory).
    pub fn set_checkout_dir(&mut self, dir: &str) {
        self.checkout_dir = Some(dir.to_string());
    }

    /// The job cloned another repository into `dir` (repo-relative).
    pub fn add_foreign_dir(&mut self, dir: &str) {
        if self.foreign.len() < MAX_FOREIGN && !self.foreign.iter().any(|d| d == dir) {
            self.foreign.push(dir.to_string());
        }
    }

    /// True for a repo-relative path inside a directory another repository was cloned into.
    fn is_foreign(&self, p: &str) -> bool {
        self.foreign.iter().any(|d| under_dir(p, d))
    }

    /// Sets the guessed repository root (an absolute directory).
    pub fn set_root(&mut self, root: Option<&str>) {
        if self.root.as_deref() != root {
            self.root = root.map(str::to_string);
        }
    }

    /// The log itself named the checkout (Jenkins' `Building in workspace /var/lib/jenkins/…`):
    /// use it unless the caller gave one.
    pub fn learn_workspace(&mut self, ws: &str) {
        let ws = ws.trim();
        let b = ws.as_bytes();
        let absolute = b.first() == Some(&b'/') || (b.len() > 2 && b[1] == b':');
        if self.workspace.is_none() && absolute && ws.len() > 1 {
            self.workspace = Some(ws.to_string());
        }
    }

    /// Records a finding seen at log line `seq`. Returns true when the finding's path is inside
    /// the repository (whether or not it was a duplicate), so callers can tell a refused path.
    pub fn emit(&mut self, seq: u64, f: Finding<'_>) -> bool {
        // Node prints the repository's modules with absolute paths (or `file://` URLs); a
        // bare relative frame (`module.js:325`, `internal/module.js:12`, Node <= 14) is Node's
        // own library. Node's library is all `.js`: a bare `next.config.mjs` or `vite.config.ts`
        // is a project file a framework printed relative to the project root.
        if f.tool == Some("node") && is_relative(f.path) {
            let raw = f.path.trim();
            let module = matches!(
                raw.rsplit_once('.').map(|(_, ext)| ext),
                Some("mjs" | "cjs" | "mts" | "cts" | "ts" | "tsx" | "jsx")
            );
            if (!raw.contains('/') && !module) || raw.starts_with("internal/") {
                return false;
            }
        }
        // A test that could not reach a service (`Connection refused`: a database, a server the
        // job did not start) failed on the environment; no line of the repository is the one to
        // change, whatever frame the trace passed through (restheart's MongoDB timeout,
        // web2py's `urlopen error [Errno 111]`). The path is still the repository's. A link
        // checker's unreachable URL (awesome_bot, `LINTING`) is a row of the repository's file.
        if f.error_type == BugType::Logic && is_connection_refused(f.message) {
            return self.place(f.path).is_some();
        }
        let Some((path, placed)) = self.place(f.path) else {
            return false;
        };
        if f.line == 0 {
            return false;
        }
        let line = u32::try_from(f.line).unwrap_or(u32::MAX);
        let key = (path, line, f.error_type);
        if let Some(&i) = self.seen.get(&key) {
            // The same error printed again under a test's header (web2py's server start fails
            // at `validators.py:2850`, then `test_CRYPT` fails there too): the test names it.
            // A location several tests reach (sahi's eight failures through one import line) is
            // named after none of them.
            if let Some(t) = f.test_name.map(str::trim).filter(|t| !t.is_empty())
                && let Some((_, r)) = self.reports.get_mut(i)
            {
                let t = truncate_chars(t, MAX_MESSAGE);
                match self.named_later.get(&key) {
                    None if r.test_name.is_none() && self.named_later.len() < MAX_REPORTS => {
                        r.test_name = Some(t.to_string());
                        self.named_later.insert(key, true);
                    }
                    Some(true) if r.test_name.as_deref() != Some(t) => {
                        r.test_name = None;
                        self.named_later.insert(key, false);
                    }
                    _ => {}
                }
            }
            return true;
        }
        if self.reports.len() >= MAX_REPORTS {
            self.left_out = self.left_out.saturating_add(1);
            return true;
        }
        let message = truncate_chars(f.message.trim(), MAX_MESSAGE).to_string();
        let report = BugReport {
            file_path: key.0.clone(),
            line_number: line,
            error_type: f.error_type,
            message,
            test_name: f
                .test_name
                .map(|t| truncate_chars(t.trim(), MAX_MESSAGE).to_string())
                .filter(|t| !t.is_empty()),
            confidence_score: f.confidence.clamp(0.0, 1.0),
            column: f
                .column
                .filter(|c| *c >= 1)
                .map(|c| u32::try_from(c).unwrap_or(u32::MAX)),
            tool: f.tool.map(str::to_string),
            rule: f
                .rule
                .map(|r| truncate_chars(r.trim(), 100).to_string())
                .filter(|r| !r.is_empty()),
        };
        self.seen.insert(key, self.reports.len());
        self.reports.push((seq, report));
        let relative = !placed && is_relative(f.path);
        self.origin.push((self.step, relative));
        self.learn_packages();
        true
    }

    /// Learns the package directories of the report just added (see `own_packages`), from
    /// Python files only.
    fn learn_packages(&mut self) {
        let Some((_, r)) = self.reports.last() else {
            return;
        };
        if !r.file_path.ends_with(".py") {
            return;
        }
        let path = r.file_path.clone();
        let mut dir_end = 0;
        for seg in path
            .split('/')
            .collect::<Vec<_>>()
            .iter()
            .rev()
            .skip(1)
            .rev()
        {
            let dir = &path[..dir_end + seg.len()];
            dir_end += seg.len() + 1;
            let identifier = seg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                && !seg.as_bytes()[0].is_ascii_digit();
            if !identifier || NOT_PACKAGES.contains(seg) {
                continue;
            }
            if self.own_packages.len() >= MAX_OWN_PACKAGES
                || self.own_packages.iter().any(|(n, _)| n == seg)
            {
                continue;
            }
            self.own_packages.push((seg.to_string(), dir.to_string()));
        }
    }

    /// The build said where one of the repository's Python packages lives (setuptools copying
    /// `numpy/lib/x.py` into `build/…/numpy/lib`): `name` at the repo directory `dir`.
    pub fn learn_package(&mut self, name: &str, dir: &str) {
        if self.own_packages.len() < MAX_OWN_PACKAGES
            && !self.own_packages.iter().any(|(n, _)| n == name)
        {
            self.own_packages.push((name.to_string(), dir.to_string()));
        }
    }

    /// True when a stack frame's path is the repository's own code: inside the repository once
    /// checkout prefixes are gone, and not a vendored or installed dependency. The stack-trace
    /// matchers (Python, JS, Go) keep the innermost such frame.
    pub fn is_own_frame(&self, raw: &str) -> bool {
        self.repo_path(raw).is_some_and(|p| !is_vendored(&p))
    }

    /// The CI runner's own verdict says the job succeeded: whatever error lines came before
    /// were tolerated by the job (`|| true`, `continue-on-error`, fixture projects compiled on
    /// purpose, a retried step), so nothing found so far is a failure to point at.
    pub fn job_succeeded(&mut self) {
        self.reports.clear();
        self.origin.clear();
        self.seen.clear();
        self.package_mark = 0;
        self.left_out = 0;
    }

    /// The current CI step's number (see [`Sink::next_step`]).
    pub fn step(&self) -> u32 {
        self.step
    }

    /// The key (path, line, type) of the report added last, if any.
    pub fn last_key(&self) -> Option<(String, u32, BugType)> {
        self.reports
            .last()
            .map(|(_, r)| (r.file_path.clone(), r.line_number, r.error_type))
    }

    /// Takes back reports found earlier that later output showed were not failures (a stack
    /// trace a passing test logged, once its runner summed up the run). Keys no longer present
    /// are ignored.
    pub fn retract(&mut self, keys: &[(String, u32, BugType)]) {
        let mut gone: Vec<usize> = keys
            .iter()
            .filter_map(|k| self.seen.get(k).copied())
            .collect();
        if gone.is_empty() {
            return;
        }
        gone.sort_unstable();
        gone.dedup();
        for &i in gone.iter().rev() {
            self.reports.remove(i);
            self.origin.remove(i);
        }
        self.package_mark -= gone.iter().filter(|&&i| i < self.package_mark).count();
        self.seen.clear();
        for (i, (_, r)) in self.reports.iter().enumerate() {
            self.seen
                .insert((r.file_path.clone(), r.line_number, r.error_type), i);
        }
    }

    /// The sink's steps from `first` on made one CI step that passed: their reports were
    /// tolerated by it and are taken back.
    pub fn steps_passed(&mut self, first: u32) {
        // Reports are kept in the order they were found and the step only counts up, so the
        // reports of steps `first..` are a suffix: found from the end, not by scanning every
        // report at every Actions step (that scan was a few per cent of a long log's time).
        let in_range = |step: u32| step.wrapping_sub(first) <= self.step.wrapping_sub(first);
        let start = self
            .origin
            .iter()
            .rposition(|&(step, _)| !in_range(step))
            .map_or(0, |i| i + 1);
        if start == self.reports.len() {
            return;
        }
        let keys = self.keys_since(start);
        self.retract(&keys);
    }

    /// The keys (path, line, type) of the reports added since there were `n`.
    pub fn keys_since(&self, n: usize) -> Vec<Key> {
        self.reports
            .get(n..)
            .unwrap_or_default()
            .iter()
            .map(|(_, r)| (r.file_path.clone(), r.line_number, r.error_type))
            .collect()
    }

    /// Takes back the reports found after the first `start` (a command that passed tolerated
    /// them).
    pub fn drop_from(&mut self, start: usize) {
        let keys = self.keys_since(start);
        self.retract(&keys);
    }

    /// A new CI step starts.
    pub fn next_step(&mut self) {
        self.step = self.step.wrapping_add(1);
    }

    /// The current step's tools ran in `dir` (an absolute path, e.g. from `npm error path`):
    /// the relative paths they printed are relative to it, so prefix its repo-relative form.
    pub fn rebase_step(&mut self, dir: &str, tools: &[&str]) {
        let Some(prefix) = self.repo_path(dir) else {
            return;
        };
        for (i, (_, r)) in self.reports.iter_mut().enumerate() {
            let (step, relative) = self.origin[i];
            if step != self.step || !relative {
                continue;
            }
            if !r.tool.as_deref().is_some_and(|t| tools.contains(&t)) {
                continue;
            }
            if r.file_path.starts_with(&format!("{prefix}/")) {
                continue;
            }
            let new_path = format!("{prefix}/{}", r.file_path);
            let old_key = (r.file_path.clone(), r.line_number, r.error_type);
            let new_key = (new_path.clone(), r.line_number, r.error_type);
            if self.seen.contains_key(&new_key) {
                continue;
            }
            self.seen.remove(&old_key);
            self.seen.insert(new_key, i);
            r.file_path = new_path;
            self.origin[i].1 = false;
        }
    }

    /// Reports placed before their directory was known (a Maven module named only after its
    /// tests ran): `dir/` goes in front of each of `keys`' paths.
    pub fn prefix_paths(&mut self, keys: &[Key], dir: &str) {
        for key in keys {
            let Some(&i) = self.seen.get(key) else {
                continue;
            };
            let new_key = (format!("{dir}/{}", key.0), key.1, key.2);
            if self.seen.contains_key(&new_key) {
                continue;
            }
            self.seen.remove(key);
            self.reports[i].1.file_path.clone_from(&new_key.0);
            self.seen.insert(new_key, i);
        }
    }

    /// `go test` summed up a package (`FAIL\t<import path>`, `ok  \t<import path>`): the
    /// bare file names it printed since the previous package (`peer_test.go:235`) are in the
    /// package's directory, `dir` (repo-relative), when it is known.
    pub fn go_package_done(&mut self, dir: Option<&str>) {
        let start = self.package_mark;
        self.package_mark = self.reports.len();
        let Some(dir) = dir.filter(|d| !d.is_empty()) else {
            return;
        };
        for i in start..self.reports.len() {
            let r = &mut self.reports[i].1;
            if r.tool.as_deref() != Some("go test")
                || r.file_path.contains('/')
                || !self.origin[i].1
            {
                continue;
            }
            let new_path = format!("{dir}/{}", r.file_path);
            let old_key = (r.file_path.clone(), r.line_number, r.error_type);
            let new_key = (new_path.clone(), r.line_number, r.error_type);
            if self.seen.contains_key(&new_key) {
                continue;
            }
            self.seen.remove(&old_key);
            self.seen.insert(new_key, i);
            r.file_path = new_path;
            self.origin[i].1 = false;
        }
    }

    /// Mutable access to reports already emitted (for late information such as a test id in a
    /// summary).
    pub fn reports_mut(&mut self) -> impl Iterator<Item = &mut BugReport> {
        self.reports.iter_mut().map(|(_, r)| r)
    }

    pub fn len(&self) -> usize {
        self.reports.len()
    }

    /// Findings of further locations the cap left out (a location found twice counts twice).
    pub fn left_out(&self) -> u64 {
        self.left_out
    }

    /// Reports in order of first appearance in the log (stable for equal lines).
    pub fn into_reports(mut self) -> Vec<BugReport> {
        self.reports.sort_by_key(|(seq, _)| *seq);
        self.reports.into_iter().map(|(_, r)| r).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{ParseOptions, parse_str};

    #[test]
    fn a_test_that_cannot_reach_its_service_points_at_no_line() {
        // web2py (Travis): the web tests' server never started, every request is refused.
        let py = "======================================================================\nERROR: testSoap (gluon.tests.test_web.TestWeb)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/home/travis/build/web2py/web2py/gluon/contrib/pysimplesoap/transport.py\", line 135, in request\n    f = self.request_opener(req, timeout=self.timeout)\nURLError: <urlopen error [Errno 111] Connection refused>\n\n";
        assert_eq!(parse_str(py, &ParseOptions::default()), vec![]);
        // restheart (Travis): MongoDB is not running.
        let java = "testGridFS(org.restheart.handlers.RequestDispacherHandlerTest)  Time elapsed: 10.1 sec  <<< ERROR!\ncom.mongodb.MongoTimeoutException: Timed out after 10000 ms while waiting to connect. Client view of cluster state is {type=Unknown, servers=[{address=127.0.0.1:27017, type=Unknown, state=Connecting, exception={com.mongodb.MongoException$Network: Exception opening the socket}, caused by {java.net.ConnectException: Connection refused}}]\n\tat com.mongodb.connection.BaseCluster.getDescription(BaseCluster.java:128)\n\tat org.restheart.handlers.RequestDispacherHandlerTest.testGridFS(RequestDispacherHandlerTest.java:70)\n";
        assert_eq!(parse_str(java, &ParseOptions::default()), vec![]);
        // Go's net package (a test dialing a database the job did not start).
        let go = "--- FAIL: TestStore (0.01s)\n    store_test.go:21: dial tcp 127.0.0.1:5432: connect: connection refused\nFAIL\nFAIL\tgithub.com/o/r/store\t0.02s\n";
        assert_eq!(parse_str(go, &ParseOptions::default()), vec![]);
        // The same trace failing on the code's own error stays.
        let own = py.replace(
            "URLError: <urlopen error [Errno 111] Connection refused>",
            "KeyError: 'timeout'",
        );
        assert_eq!(parse_str(&own, &ParseOptions::default()).len(), 1);
    }

    #[test]
    fn a_virtualenv_in_the_checkout_holds_the_repositorys_package() {
        // VisTrails (Travis): `pip install .` into `venv/` inside the checkout; the tests run
        // from the installed `vistrails` package.
        let log = "======================================================================\nERROR: test_list (vistrails.core.scripting.export.TestExport)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/home/travis/build/VisTrails/VisTrails/venv/local/lib/python2.7/site-packages/vistrails/core/scripting/export.py\", line 564, in test_list\n    \"\"\")\n  File \"/home/travis/build/VisTrails/VisTrails/venv/local/lib/python2.7/site-packages/vistrails/core/modules/module_registry.py\", line 757, in get_descriptor_by_name\n    raise MissingPackageVersion(identifier, package_version)\nMissingPackageVersion: Missing version 2.1.1 of package org.vistrails.vistrails.basic\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("vistrails/core/modules/module_registry.py", 757)
        );
        // Another package in the same virtualenv is a dependency.
        let dep = log.replace(
            "site-packages/vistrails/core/modules",
            "site-packages/numpy/core/modules",
        );
        let r = parse_str(&dep, &ParseOptions::default());
        assert_eq!(
            r[0].file_path, "vistrails/core/scripting/export.py",
            "{r:?}"
        );
        assert!(super::same_package("python-foo", "python_foo"));
        assert!(!super::same_package("python-dateutil", "dateutil"));
    }

    #[test]
    fn a_line_first_printed_outside_a_test_is_named_by_the_one_test_that_reaches_it() {
        // web2py (Travis): the server's start-up traceback, then unittest's block for test_CRYPT.
        let bare = "Traceback (most recent call last):\n  File \"/home/travis/build/web2py/web2py/gluon/main.py\", line 593, in save_password\n    cpassword = CRYPT()(password)[0]\n  File \"/home/travis/build/web2py/web2py/gluon/validators.py\", line 2850, in __call__\n    v = v and str(v)[:self.max_length]\nUnboundLocalError: local variable 'v' referenced before assignment\n";
        let test = |name: &str| {
            format!(
                "======================================================================\nERROR: {name} (gluon.tests.test_validators.TestValidators)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"gluon/tests/test_validators.py\", line 47, in {name}\n    rtn = str(CRYPT(digest_alg='md5',salt=True)('test')[0])\n  File \"gluon/validators.py\", line 2850, in __call__\n    v = v and str(v)[:self.max_length]\nUnboundLocalError: local variable 'v' referenced before assignment\n\n"
            )
        };
        let one = format!("{bare}{}", test("test_CRYPT"));
        let r = parse_str(&one, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("gluon.tests.test_validators.TestValidators.test_CRYPT")
        );
        // Two tests through the same line (sahi's shared import): named after neither.
        let two = format!("{one}{}", test("test_IS_HASH"));
        let r = parse_str(&two, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].test_name, None);
    }
}
