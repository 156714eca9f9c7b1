//! Go: `go test` failures (`--- FAIL: TestX` with the `file_test.go:N:` lines of that test,
//! verbose and quiet modes, subtests), panics (the innermost goroutine frame inside the
//! repository), and the context `go build` / `go vet` errors are printed in (`# pkg` vs
//! `# [pkg]`), used when `generic` dispatches a `.go` diagnostic.
//!
//! It must never report the output of a passing test (verbose `t.Log` lines are buffered until
//! the test's verdict) nor a frame in GOROOT or the module cache.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const MAX_PENDING: usize = 64;
const PANIC_BUDGET: u32 = 400;

static TEST_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+([\w./-]+\.go):(\d+): (.*)$").unwrap());
static RACE_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$").unwrap());
static PANIC_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\t(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$").unwrap());

#[derive(Debug)]
struct Pending {
    test: String,
    path: String,
    line: u64,
    msg: String,
    seq: u64,
    /// Read from a testify `Error Trace:` block, not a `file_test.go:N: msg` line.
    testify: bool,
}

#[derive(Debug)]
struct GoPanic {
    msg: String,
    test: Option<String>,
    seq: u64,
    budget: u32,
    /// A race detector report: frames are indented with spaces, and the test may be named by
    /// the function line above the first frame in the repository.
    race: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Go {
    /// Test named by the latest `=== RUN/CONT/NAME`.
    running: Option<String>,
    /// Test named by the latest `--- FAIL:` (its output follows in quiet mode).
    failed: Option<String>,
    pending: Vec<Pending>,
    /// Failures of the current package, held until its `FAIL\t<import path>` verdict says
    /// which directory their package-relative file names are in.
    ready: Vec<Pending>,
    /// A testify `Error Trace:` location waiting for its `Error:` line.
    trace: Option<(Pending, u8)>,
    /// A testify finding whose `Error:` ended with a colon (`Received unexpected error:`): the
    /// next line is the error itself.
    error_tail: Option<Pending>,
    panic: Option<GoPanic>,
    /// Inside `# [pkg]` output of `go vet`.
    pub vet: bool,
    /// The package of gotestsum's current `=== FAIL: <pkg> <Test>` summary entry (relative to
    /// the module root, or an import path).
    summary_pkg: Option<String>,
    /// Lines left of quicktest's `stack:` section after a test's failure line.
    qt_stack: u8,
    /// The directory of the Gradle project whose task runs (`> Task :playground:backend:test`):
    /// a Go module built by Gradle lives there, whatever its import path's host.
    gradle_dir: Option<String>,
}

/// What Go's `testing` package prints under its own file name about a test it ends.
fn is_testing_verdict(msg: &str) -> bool {
    msg.starts_with("race detected during execution of test")
        || msg.starts_with("test executed panic(nil) or runtime.Goexit")
}

/// Lines of a quicktest `stack:` section read for a test-file frame.
const QT_STACK: u8 = 24;

/// `path.go:12 +0x76`: a goroutine stack frame (trimmed), path and line. The `+0x` offset is only
/// ever printed in a Go stack trace, never by a compiler or a test's own output.
fn goroutine_frame(t: &str) -> Option<(&str, &str)> {
    let sp = memchr::memrchr(b' ', t.as_bytes())?;
    let off = t[sp + 1..].strip_prefix("+0x")?;
    if off.is_empty() || !off.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let (path, line) = t[..sp].rsplit_once(':')?;
    (path.ends_with(".go")
        && !path.contains(' ')
        && !line.is_empty()
        && line.bytes().all(|c| c.is_ascii_digit()))
    .then_some((path, line))
}

/// The first whitespace-separated word of `rest` (the test name of a verdict line).
fn test_name_of(rest: &str) -> &str {
    // ASCII fast path; `char::is_whitespace` on ASCII is exactly these six bytes. Non-ASCII
    // text goes to `split_whitespace`, which knows the Unicode spaces.
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r');
    let b = rest.as_bytes();
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    match b[start..].iter().position(|c| ws(c) || !c.is_ascii()) {
        Some(n) if b[start + n].is_ascii() => &rest[start..start + n],
        None => &rest[start..],
        _ => rest.split_whitespace().next().unwrap_or(""),
    }
}

/// [`TEST_LINE`]'s three groups (path, line, message), without the regex engine (a capture
/// search cost thousands of instructions a line). On ASCII the answer is exact; when a
/// non-ASCII character could change it (Unicode whitespace, word characters or digits), the
/// regex decides.
fn test_line(text: &str) -> Option<(&str, &str, &str)> {
    match test_line_ascii(text) {
        Ok(found) => found,
        Err(Unsure) => TEST_LINE.captures(text).map(|c| {
            let g = |i| c.get(i).map_or("", |m| m.as_str());
            (g(1), g(2), g(3))
        }),
    }
}

/// A non-ASCII character where [`test_line_ascii`] would have to know Unicode classes.
#[derive(Debug, PartialEq)]
struct Unsure;

#[allow(clippy::type_complexity)]
fn test_line_ascii(text: &str) -> Result<Option<(&str, &str, &str)>, Unsure> {
    // `\s` on ASCII.
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r');
    // `[\w./-]` on ASCII.
    let path_byte = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-');
    let b = text.as_bytes();
    let run = |from: usize, f: &dyn Fn(&u8) -> bool| {
        let end = from + b[from..].iter().take_while(|c| f(c)).count();
        match b.get(end) {
            Some(c) if !c.is_ascii() => Err(Unsure),
            _ => Ok(end),
        }
    };
    // `^\s+`, then the path: the whole run of path bytes after it (neither `:` nor a space can
    // be part of it), which must end in `.go` and be followed by `:`.
    let i = run(0, &ws)?;
    let j = run(i, &path_byte)?;
    let path = &text[i..j];
    if i == 0 || b.get(j) != Some(&b':') || path.len() < 4 || !path.ends_with(".go") {
        return Ok(None);
    }
    // `:(\d+): (.*)$`
    let k = run(j + 1, &|c: &u8| c.is_ascii_digit())?;
    let Some(msg) = text[k..].strip_prefix(": ") else {
        return Ok(None);
    };
    if k == j + 1 {
        return Ok(None);
    }
    if msg.contains('\n') {
        // `.` stops at a newline (lines never have one).
        return Err(Unsure);
    }
    Ok(Some((path, &text[j + 1..k], msg)))
}

impl Go {
    /// True when `line` cannot change this matcher's state or be claimed by it: no panic is
    /// open, the line starts none of `=== `, `--- `, `panic: `, `# `, `FAIL`, `ok `, `PASS`, and
    /// is not an indented `file.go:N:` test line. Must stay in step with [`Go::line`].
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.panic.is_none()
            && self.trace.is_none()
            && self.error_tail.is_none()
            && self.qt_stack == 0
            && !(l.last == b':' && l.indent() > 0 && l.trimmed() == "stack:")
            && !matches!(
                l.first,
                b'=' | b'-' | b'p' | b'#' | b'F' | b'o' | b'P' | b'W' | b'>'
            )
            && !(l.indent() > 0 && l.colon_digit)
            && !(l.colon_digit
                && l.indent() == 0
                && l.last.is_ascii_hexdigit()
                && goroutine_frame(l.trimmed()).is_some())
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if let Some(mut p) = self.error_tail.take() {
            let label = ["Test:", "Messages:", "Error Trace:", "Error:"]
                .iter()
                .any(|x| t.starts_with(x));
            let tail = l.indent() > 0 && !t.is_empty() && !label;
            if tail {
                p.msg.push(' ');
                p.msg.push_str(crate::sink::truncate_chars(t, 400));
            }
            self.test_finding(p, sink);
            if tail {
                return true;
            }
        }
        if l.first == b'>' {
            if let Some(task) = t.strip_prefix("> Task :") {
                let task = task.split(' ').next().unwrap_or("");
                self.gradle_dir = task
                    .rsplit_once(':')
                    .map(|(project, _)| project.replace(':', "/"))
                    .filter(|p| !p.is_empty() && !p.contains(".."));
            }
            return false;
        }
        if self.qt_stack > 0 && self.quicktest_frame(l, t, sink) {
            return true;
        }
        if t == "stack:" && l.indent() > 0 && (!self.ready.is_empty() || !self.pending.is_empty()) {
            self.qt_stack = QT_STACK;
            return true;
        }
        // A goroutine frame whose tab a log's framing replaced (a Jenkins timestamper's prefix),
        // or in a trace whose `panic:` header the log does not hold: the innermost frame in the
        // repository is the site, as in a panic.
        if l.colon_digit
            && l.indent() == 0
            && l.last.is_ascii_hexdigit()
            && !self.panic.as_ref().is_some_and(|p| p.race)
            && let Some((path, line)) = goroutine_frame(t)
        {
            if self.panic.is_none() {
                let test = self.failed.clone().or_else(|| self.running.clone());
                self.panic = Some(GoPanic {
                    msg: "goroutine stack trace".to_string(),
                    test,
                    seq: l.no,
                    budget: PANIC_BUDGET,
                    race: false,
                });
            }
            self.panic_at(path, line, "go test", sink);
            return true;
        }
        if let Some(p) = &mut self.panic {
            if p.budget == 0 {
                self.panic = None;
            } else {
                p.budget -= 1;
                if p.race && !l.text.starts_with('\t') {
                    return self.race_line(l, sink);
                }
                if l.text.starts_with('\t') {
                    if let Some(c) = PANIC_FRAME.captures(l.text) {
                        self.panic_at(&c[1], &c[2], "go test", sink);
                    }
                    return true;
                }
                // A trace pasted into an issue or a Markdown page, its tabs turned into spaces:
                // only a frame with its `+0x` offset is taken, never a test's indented output.
                if l.indent() > 0
                    && l.last.is_ascii_hexdigit()
                    && let Some((path, line)) = goroutine_frame(t)
                {
                    self.panic_at(path, line, "go test", sink);
                    return true;
                }
                if t.starts_with("FAIL") || t.starts_with("exit status") || t.starts_with("ok ") {
                    self.panic = None;
                }
            }
        }
        if let Some(rest) = t.strip_prefix("=== ") {
            // gotestsum's summary: `=== FAIL: <pkg> <Test> (0.10s)`, then the test's output
            // (file names relative to the package); `=== SKIP: …` entries hold the skip
            // messages, which are not failures.
            let summary = rest.strip_prefix("FAIL: ").map(|r| (r, true));
            if let Some((entry, failed)) =
                summary.or_else(|| rest.strip_prefix("SKIP: ").map(|r| (r, false)))
            {
                self.summary_entry(entry, failed, sink);
                return true;
            }
            for verb in ["RUN", "CONT", "NAME", "PAUSE"] {
                if let Some(name) = rest.strip_prefix(verb) {
                    let name = name.trim();
                    if verb != "PAUSE" {
                        // Reuses the previous name's allocation: one per test otherwise.
                        match &mut self.running {
                            Some(r) => {
                                r.clear();
                                r.push_str(name);
                            }
                            None => self.running = Some(name.to_string()),
                        }
                    }
                    self.failed = None;
                    return true;
                }
            }
        }
        if let Some(rest) = t.strip_prefix("--- FAIL: ") {
            let name = test_name_of(rest).to_string();
            // Verbose mode: the test's lines came before its verdict. Its subtests' lines wait
            // for their own verdicts, printed below it: a subtest that passed printed logs.
            // Where the test or a subtest failed through testify, the test's plain
            // `file_test.go:N: msg` lines are its `t.Log`s (ddev's retry logic logs each
            // attempt), as testify prints every failure it raises in an `Error Trace:` block.
            let sub = format!("{name}/");
            let testify = self
                .pending
                .iter()
                .any(|p| p.testify && (p.test == name || p.test.starts_with(&sub)));
            let mut i = 0;
            while i < self.pending.len() {
                let p = &self.pending[i];
                if p.test == name {
                    let p = self.pending.remove(i);
                    if p.testify || !testify {
                        self.ready(p, sink);
                    }
                } else {
                    i += 1;
                }
            }
            self.failed = Some(name);
            return true;
        }
        if let Some(rest) = t
            .strip_prefix("--- PASS: ")
            .or_else(|| t.strip_prefix("--- SKIP: "))
        {
            let name = test_name_of(rest);
            self.pending
                .retain(|p| p.test != name && !p.test.starts_with(&format!("{name}/")));
            self.failed = None;
            return true;
        }
        if let Some(msg) = t.strip_prefix("panic: ") {
            let test = self.failed.clone().or_else(|| self.running.clone());
            self.panic = Some(GoPanic {
                msg: format!("panic: {}", msg.trim_end_matches(" [recovered]")),
                test,
                seq: l.no,
                budget: PANIC_BUDGET,
                race: false,
            });
            return true;
        }
        if t == "WARNING: DATA RACE" {
            let test = self.failed.clone().or_else(|| self.running.clone());
            self.panic = Some(GoPanic {
                msg: t.to_string(),
                test,
                seq: l.no,
                budget: PANIC_BUDGET,
                race: true,
            });
            return true;
        }
        if t.starts_with("# ") {
            self.vet = t.starts_with("# [");
            return true;
        }
        if let Some((_, budget)) = &mut self.trace {
            if let Some(msg) = t.strip_prefix("Error:") {
                let (mut p, _) = self.trace.take().expect("checked");
                p.msg = crate::sink::truncate_chars(msg.trim(), 500).to_string();
                if p.msg.ends_with(':') {
                    self.error_tail = Some(p);
                } else {
                    self.test_finding(p, sink);
                }
                return true;
            }
            if *budget == 0 {
                let (p, _) = self.trace.take().expect("checked");
                self.test_finding(p, sink);
            } else {
                *budget -= 1;
            }
        }
        if l.indent() > 0 && l.colon_digit && crate::contains(t, ".go:") {
            if let Some(rest) = t.strip_prefix("Error Trace:") {
                // testify: the first frame is the assertion's caller in the test file, the
                // line printed before the block may be `<autogenerated>` or the library's.
                return self.error_trace(rest.trim(), l.no, sink);
            }
            if let Some((path, line, msg)) = test_line(l.text) {
                if path == "testing.go" && is_testing_verdict(msg) {
                    // The testing package's own line (`testing.go:1398: race detected during
                    // execution of test`): the race report above it holds the site.
                    return true;
                }
                let line = super::num(line).unwrap_or(0);
                let Some(test) = self.failed.as_ref().or(self.running.as_ref()) else {
                    return false;
                };
                let p = Pending {
                    test: test.clone(),
                    path: path.to_string(),
                    line,
                    msg: crate::sink::truncate_chars(msg, 500).to_string(),
                    seq: l.no,
                    testify: false,
                };
                self.test_finding(p, sink);
                return true;
            }
        }
        if let Some(rest) = t.strip_prefix("FAIL\t") {
            // `FAIL\t<import path>\t0.01s` or `FAIL\t<import path> [build failed]`.
            let pkg = rest.split(['\t', ' ']).next().unwrap_or("");
            match self
                .gradle_dir
                .as_deref()
                .and_then(|d| under_project(pkg, d))
            {
                Some(dir) => self.emit_ready(&dir, sink),
                None => self.emit_ready(package_dir(pkg), sink),
            }
        } else if t.starts_with("ok  \t") {
            self.emit_ready("", sink);
        } else if let Some(rest) = t.strip_prefix("FAIL ")
            && let Some(dir) = gotestsum_package(rest)
        {
            let dir = if dir.split('/').next().is_some_and(|s| s.contains('.')) {
                package_dir(dir)
            } else {
                dir
            };
            self.emit_ready(dir, sink);
            return true;
        }
        if t == "FAIL" || t.starts_with("FAIL\t") || t.starts_with("ok  \t") || t == "PASS" {
            self.failed = None;
            self.running = None;
            self.pending.clear();
            return true;
        }
        false
    }

    /// Reports the pending panic (or race) at a stack frame, when the frame is the repository's
    /// own code: not a dependency, and not `_testmain.go`, the test binary's generated main in
    /// a temp dir. Other frames leave the panic pending for the next one.
    fn panic_at(&mut self, path: &str, line: &str, tool: &'static str, sink: &mut Sink) {
        if path.ends_with("_testmain.go") || !sink.is_own_frame(path) {
            return;
        }
        if let Some(p) = self.panic.take() {
            sink.emit(
                p.seq,
                Finding::new(path, super::num(line).unwrap_or(0), BugType::Logic, &p.msg)
                    .test(p.test.as_deref())
                    .conf(0.85)
                    .tool(tool),
            );
        }
    }

    /// A line of a race detector report: `Write at 0x… by goroutine 7:` (kept in the message),
    /// `  pkg.TestX()` (a function), `      /path/x_test.go:56 +0x572` (its frame).
    fn race_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let Some(p) = &mut self.panic else {
            return false;
        };
        let t = l.trimmed();
        if l.indent() == 0 {
            if t.starts_with("FAIL") || t.starts_with("ok ") || t.starts_with("==========") {
                self.panic = None;
                return false;
            }
            if p.msg.len() < 200 && (t.contains(" at 0x") || t.starts_with("Previous ")) {
                p.msg.push_str(": ");
                p.msg.push_str(crate::sink::truncate_chars(t, 100));
            }
            return true;
        }
        if let Some(c) = RACE_FRAME.captures(l.text) {
            self.panic_at(&c[1], &c[2], "go test -race", sink);
        } else if p.test.is_none() {
            // `github.com/o/r/pkg.TestX.func1()`: the test the racing goroutine belongs to.
            if let Some(i) = t.find(".Test") {
                let name = &t[i + 1..];
                let end = name.find(['.', '(']).unwrap_or(name.len());
                p.test = Some(name[..end].to_string());
            }
        }
        true
    }

    /// A test's failure line: held until its test's verdict (verbose mode) or its package's.
    /// A frame of quicktest's `stack:` section (`/…/hugolib/sitemap_test.go:149`, innermost
    /// first, each followed by its source line): the failure line `go test` printed is where the
    /// helper (`integrationtest_builder.go:127`) called `Assert`; the first frame in a test file
    /// of the repository is the test's own line, which replaces it.
    fn quicktest_frame(&mut self, l: &Line<'_>, t: &str, sink: &Sink) -> bool {
        self.qt_stack -= 1;
        if !l.colon_digit || t.contains(' ') {
            return false;
        }
        let Some((path, n)) = t.rsplit_once(':') else {
            return false;
        };
        let Some(n) = super::num(n) else {
            return false;
        };
        if !path.ends_with("_test.go") || !sink.is_own_frame(path) {
            return true;
        }
        self.qt_stack = 0;
        let ready_seq = self.ready.last().map_or(0, |p| p.seq);
        let pending_seq = self.pending.last().map_or(0, |p| p.seq);
        let last = if ready_seq >= pending_seq {
            self.ready.last_mut()
        } else {
            self.pending.last_mut()
        };
        if let Some(p) = last {
            p.path = path.to_string();
            p.line = n;
        }
        true
    }

    fn test_finding(&mut self, p: Pending, sink: &mut Sink) {
        if self.failed.as_deref() == Some(p.test.as_str()) {
            self.ready(p, sink);
        } else if self.pending.len() < MAX_PENDING {
            self.pending.push(p);
        }
    }

    fn error_trace(&mut self, rest: &str, seq: u64, sink: &mut Sink) -> bool {
        let frame = rest.split_whitespace().next().unwrap_or("");
        let Some((path, line)) = frame.rsplit_once(':') else {
            return false;
        };
        let (Some(line), true) = (super::num(line), path.ends_with(".go")) else {
            return false;
        };
        let Some(test) = self.failed.clone().or_else(|| self.running.clone()) else {
            return false;
        };
        if let Some((p, _)) = self.trace.take() {
            self.test_finding(p, sink);
        }
        let p = Pending {
            test,
            path: path.to_string(),
            line,
            msg: "Error Trace".to_string(),
            seq,
            testify: true,
        };
        self.trace = Some((p, 8));
        true
    }

    fn ready(&mut self, p: Pending, sink: &mut Sink) {
        if self.ready.len() >= MAX_PENDING {
            self.emit_ready("", sink);
        }
        self.ready.push(p);
    }

    /// Emits the held failures; `dir` is their package's directory in the repository.
    fn emit_ready(&mut self, dir: &str, sink: &mut Sink) {
        if let Some((p, _)) = self.trace.take() {
            self.test_finding(p, sink);
        }
        for p in self.ready.drain(..) {
            // `go test` prints a bare file name, relative to the package directory.
            let joined;
            let path = if dir.is_empty() || p.path.contains('/') {
                p.path.as_str()
            } else {
                joined = format!("{dir}/{}", p.path);
                joined.as_str()
            };
            sink.emit(
                p.seq,
                Finding::new(path, p.line, BugType::Logic, &p.msg)
                    .test(Some(&p.test))
                    .conf(0.8)
                    .tool("go test"),
            );
        }
    }

    /// A gotestsum summary entry: the failures held for the previous entry are emitted in its
    /// package, and this entry's output belongs to its test (or to none, for a skip).
    fn summary_entry(&mut self, entry: &str, failed: bool, sink: &mut Sink) {
        let dir = self.summary_pkg.take().unwrap_or_default();
        self.emit_ready(&dir, sink);
        let (pkg, rest) = entry.split_once(' ').unwrap_or((entry, ""));
        let dir = if pkg.split('/').next().is_some_and(|s| s.contains('.')) {
            package_dir(pkg)
        } else {
            pkg
        };
        self.summary_pkg = Some(dir.to_string());
        self.running = None;
        let name = test_name_of(rest);
        // `=== FAIL: <pkg>  (0.00s)`: the package itself failed (its main, a build); the
        // `FAIL\t<import path>` verdict that follows says so.
        self.failed =
            (failed && !name.is_empty() && !name.starts_with('(')).then(|| name.to_string());
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        let dir = self.summary_pkg.take().unwrap_or_default();
        self.emit_ready(&dir, sink);
        *self = Go::default();
    }
}

/// gotestsum's `testname` format names each verdict `FAIL <pkg>.<Test> (0.00s)` and each
/// package `FAIL <pkg>`, with the package relative to the module root. Returns that package.
fn gotestsum_package(rest: &str) -> Option<&str> {
    let (token, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    if !(tail.is_empty() || tail.starts_with('(')) || token.contains(['>', ':', '[']) {
        return None;
    }
    // The test name may hold `/` and `.` (subtests), the package part is before `.Test…`.
    let named = [".Test", ".Example", ".Benchmark", ".Fuzz"]
        .iter()
        .filter_map(|p| token.find(p))
        .min();
    match named {
        Some(i) => Some(&token[..i]),
        None => {
            let last = token.rsplit('/').next().unwrap_or(token);
            (!last.contains('.')).then_some(token)
        }
    }
}

/// The directory of package `pkg` when its import path runs through the Gradle project directory
/// `dir` (`beam.apache.org/playground/backend/internal/x` under `playground/backend`): the
/// project's directory is the module's, so the package is `dir` and the rest of the path.
fn under_project(pkg: &str, dir: &str) -> Option<String> {
    let at = pkg.find(&format!("/{dir}"))?;
    let rest = &pkg[at + 1 + dir.len()..];
    if rest.is_empty() {
        return Some(dir.to_string());
    }
    rest.strip_prefix('/').map(|r| format!("{dir}/{r}"))
}

/// The directory of package `pkg` (an import path) inside its module's repository, guessed from
/// the hosting convention: `github.com/owner/repo[/vN]/sub/pkg` is `sub/pkg`; for other hosts the
/// module is the first two segments (`go.uber.org/zap`, `k8s.io/kubernetes`), and a path without
/// a dot in its first segment is a module named by one word (`demo/internal/x`).
fn package_dir(pkg: &str) -> &str {
    let segs: Vec<&str> = pkg.split('/').collect();
    let host = segs.first().copied().unwrap_or("");
    let mut root = if !host.contains('.') {
        1
    } else if matches!(
        host,
        "github.com" | "gitlab.com" | "bitbucket.org" | "codeberg.org" | "gitee.com" | "golang.org"
    ) {
        3
    } else {
        2
    };
    let major =
        |s: &str| s.len() > 1 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit());
    if segs.get(root).is_some_and(|s| major(s)) {
        root += 1;
    }
    if segs.len() <= root {
        return "";
    }
    let skip: usize = segs[..root].iter().map(|s| s.len() + 1).sum();
    pkg.get(skip..).unwrap_or("")
}

/// Messages only `go vet`'s analyzers print (printf, copylocks, unreachable, composites…): a
/// vet report is recognisable even without its `# [pkg]` header.
fn is_vet_message(msg: &str) -> bool {
    const VET: [&str; 17] = [
        " format %",
        // `possible formatting directive` (≤ 1.19), `possible Printf formatting directive` (≥ 1.20).
        "formatting directive",
        // Go ≥ 1.24: `non-constant format string in call to fmt.Printf`.
        "non-constant format string",
        "arg list ends with redundant newline",
        // printf's `missing argument for Fatalf("%#v"): format reads arg 2, have only 1 args`
        // (the compiler's own wording is `not enough arguments in call to`).
        "format reads arg",
        "unreachable code",
        "composite literal uses unkeyed fields",
        "self-assignment of",
        "passes lock by value",
        "copies lock value",
        "lock by value",
        "result of ",
        "the cancel function",
        "misuse of unbuffered os.Signal channel",
        "struct field tag",
        "possible misuse of",
        "suspect or:",
    ];
    VET.iter().any(|v| msg.contains(v))
}

/// `k8s.io/api@v0.23.4: Get "https://proxy.golang.org/…": read: connection reset`: the module
/// holding an import could not be downloaded (reported at the import line).
fn is_module_fetch_failure(msg: &str) -> bool {
    let first = msg.split(' ').next().unwrap_or("");
    first.ends_with(':') && first.contains("@v") && first.contains('/')
}

/// Classifies a `file.go:line:col: msg` diagnostic.
#[allow(clippy::too_many_arguments)]
pub(crate) fn colon(
    path: &str,
    line: u64,
    col: Option<u64>,
    msg: &str,
    vet: bool,
    lint_step: bool,
    seq: u64,
    sink: &mut Sink,
) -> bool {
    let msg = msg.trim();
    // `log.Fatal` with `Lshortfile` (a CI driver such as go-ethereum's `build/ci.go`) reporting
    // that a command it ran failed: the command's own output holds the error.
    if msg.starts_with("exit status ") {
        return true;
    }
    // golangci-lint ends its messages with `(linter)`.
    let linter = msg
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once(" ("))
        .filter(|(_, name)| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        .map(|(_, name)| name);
    // staticcheck ends its messages with its check's code: `(SA4006)`, `(S1011)`, `(ST1003)`.
    let check = msg
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once(" ("))
        .map(|(_, code)| code)
        .filter(|code| {
            let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
            (1..=2).contains(&letters)
                && code.len() - letters == 4
                && code[letters..].bytes().all(|b| b.is_ascii_digit())
        });
    let (ty, tool, rule) = if msg.contains("syntax error") {
        (BugType::Syntax, "go build", None)
    } else if msg.contains("is not in std")
        || msg.contains("no required module provides package")
        || msg.contains("missing go.sum entry for module providing package")
        || msg.contains("cannot find package")
        || msg.contains("could not import")
        || msg.contains("package ") && msg.contains(" is not in GOROOT")
        || is_module_fetch_failure(msg)
    {
        (BugType::Import, "go build", None)
    } else if let Some(name @ ("compile" | "typecheck")) = linter {
        // staticcheck's and golangci-lint's own report that the package does not compile.
        (BugType::TypeError, "go build", Some(name))
    } else if let Some(name) = linter {
        (BugType::Linting, "golangci-lint", Some(name))
    } else if let Some(code) = check {
        (BugType::Linting, "staticcheck", Some(code))
    } else if vet || is_vet_message(msg) {
        (BugType::Linting, "go vet", None)
    } else if lint_step {
        // A linter that tags nothing (`exhaustive`, `golint`) run by a step named after it.
        (BugType::Linting, "go lint", None)
    } else {
        (BugType::TypeError, "go build", None)
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, msg)
            .col(col)
            .conf(0.95)
            .tool(tool)
            .rule(rule),
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn a_go_module_built_by_a_gradle_project() {
        // apache/beam's playground: `go test ./...` run by Gradle's `:playground:backend:test`,
        // the module `beam.apache.org/playground/backend` in `playground/backend`.
        let log = "> Task :playground:backend:test\nok  \tbeam.apache.org/playground/backend/cmd/server\t10.046s\n--- FAIL: Test_prepareStep (0.00s)\n    --- FAIL: Test_prepareStep/Error_during_expired_context_of_the_example (0.00s)\n        code_processing_test.go:988: prepareStep: got status = STATUS_COMPILING, want STATUS_RUN_TIMEOUT\nFAIL\nFAIL\tbeam.apache.org/playground/backend/internal/code_processing\t8.323s\n";
        let r = crate::parse_str(log, &crate::ParseOptions::default());
        assert_eq!(
            (r[0].file_path.as_str(), r[0].test_name.as_deref()),
            (
                "playground/backend/internal/code_processing/code_processing_test.go",
                Some("Test_prepareStep/Error_during_expired_context_of_the_example")
            )
        );
        assert_eq!(super::under_project("x.org/backend2/a", "backend"), None);
        assert_eq!(
            super::under_project("x.org/playground/backend", "playground/backend").as_deref(),
            Some("playground/backend")
        );
    }

    #[test]
    fn goroutine_frames_without_their_tab_in_a_jenkins_gopath() {
        // elastic/beats#22541: a Jenkins timestamper replaced each frame's tab, the workspace is
        // the GOPATH and the agent's HOME (gvm's Go is in it).
        let log = "[2020-11-11T14:33:13.939Z] /var/lib/jenkins/workspace/Beats_PR-1/.gvm/versions/go1.14.7.linux.amd64/src/testing/testing.go:654 +0x11a\n\n[2020-11-11T14:33:13.939Z] /var/lib/jenkins/workspace/Beats_PR-1/src/github.com/elastic/beats/filebeat/x/run_test.go:12 +0x76\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("filebeat/x/run_test.go", 12, BugType::Logic)
        );
    }

    #[test]
    fn a_pasted_panic_whose_frames_are_indented_with_spaces() {
        // maxcnunes/gaper#9: the tabs of the trace became six spaces; GOROOT's frame is passed
        // over, the GOPATH checkout's is the site.
        let log = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0xa0 pc=0x4d0ca6]\n\ngoroutine 154 [running]:\nos/exec.(*Cmd).Wait(0x0, 0x5bc683, 0xc42000a060)\n      /usr/local/go/src/os/exec/exec.go:453 +0x26\ngithub.com/maxcnunes/gaper.(*runner).runBin.func1(0xc4200b2000)\n      /go/src/github.com/maxcnunes/gaper/runner.go:159 +0x2f\ncreated by github.com/maxcnunes/gaper.(*runner).runBin\n      /go/src/github.com/maxcnunes/gaper/runner.go:158 +0x25d\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("runner.go", 159, BugType::Logic)
        );
    }

    #[test]
    fn test_line_agrees_with_the_regex() {
        let mut cases = vec![
            "    calc_test.go:8: Add(1, 2) = 3; want 4",
            "\tcalc_test.go:8: x",
            "  a/b-c_d.e/x.go:12: ",
            "  x.go:1:",
            "  .go:1: x",
            "  a.go:1: x\rb",
            "calc_test.go:8: no indent",
            "    calc_test.go:8:3: col",
            "    calc_test.go:: x",
            "    calc_test.go:8 x",
            "    calc_test.gox:8: x",
            "    c:alc_test.go:8: x",
            "    calc test.go:8: x",
            "    calc_test.go:8: é ünïcode message",
            "\u{a0}   calc_test.go:8: nbsp",
            "    calc\u{e9}_test.go:8: accented path",
            "    calc_test.go:\u{661}: arabic digit",
            "    calc_test.go:8\u{661}: arabic digit",
            "    ",
            "",
        ];
        let long = format!("  {}.go:1: x", "a".repeat(300));
        cases.push(&long);
        for text in cases {
            let regex = super::TEST_LINE.captures(text).map(|c| {
                (
                    c.get(1).unwrap().as_str(),
                    c.get(2).unwrap().as_str(),
                    c.get(3).unwrap().as_str(),
                )
            });
            assert_eq!(super::test_line(text), regex, "{text:?}");
        }
        assert_eq!(
            super::test_line_ascii("  calc\u{e9}.go:1: x"),
            Err(super::Unsure)
        );
    }

    proptest::proptest! {
        #[test]
        fn test_line_agrees_with_the_regex_on_near_misses(
            text in "[ \t\u{a0}]{0,2}[a-z_./:é0-9 -]{0,8}(\\.go)?:?[0-9\u{661}]{0,2}:? ?.{0,3}"
        ) {
            let regex = super::TEST_LINE
                .captures(&text)
                .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str(), c.get(3).unwrap().as_str()));
            proptest::prop_assert_eq!(super::test_line(&text), regex);
        }
    }

    #[test]
    fn test_name_of_agrees_with_split_whitespace() {
        for rest in [
            "TestA (0.00s)",
            "  TestA\t(0.00s)",
            "TestA",
            "",
            "   ",
            "\u{a0}TestA (0.00s)",
            "Test\u{e9} (0.00s)",
            "TestA\u{2003}(0.00s)",
            "TestA\x0b(0.00s)",
        ] {
            assert_eq!(
                super::test_name_of(rest),
                rest.split_whitespace().next().unwrap_or(""),
                "{rest:?}"
            );
        }
    }

    #[test]
    fn go_test_quiet_and_verbose() {
        let log = "--- FAIL: TestAdd (0.00s)\n    calc_test.go:8: Add(1, 2) = 3; want 4\nFAIL\nFAIL\texample.com/m\t0.002s\n=== RUN   TestSub\n    calc_test.go:14: just a log\n--- PASS: TestSub (0.00s)\n=== RUN   TestMul\n    calc_test.go:20: Mul(2, 2) = 5; want 4\n--- FAIL: TestMul (0.00s)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].test_name.as_deref(), Some("TestAdd"));
        assert_eq!(
            (r[1].line_number, r[1].test_name.as_deref()),
            (20, Some("TestMul"))
        );
    }

    #[test]
    fn go_panic_frame_and_build_errors() {
        let log = "--- FAIL: TestDiv (0.00s)\npanic: runtime error: integer divide by zero [recovered]\n\tpanic: runtime error: integer divide by zero\n\ngoroutine 7 [running]:\ntesting.tRunner.func1.2({0x1, 0x2})\n\t/opt/hostedtoolcache/go/1.22.0/x64/src/testing/testing.go:1631 +0x24a\nexample.com/m.Div(...)\n\t/home/runner/work/R/R/calc.go:4\nexample.com/m.TestDiv(0xc0)\n\t/home/runner/work/R/R/calc_test.go:12 +0x18\nFAIL\texample.com/m\t0.01s\n# example.com/m\n./main.go:5:2: undefined: foo\n./main.go:6:1: syntax error: unexpected }\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[0].file_path.as_str(), r[0].line_number), ("calc.go", 4));
        assert_eq!(r[0].test_name.as_deref(), Some("TestDiv"));
        assert_eq!(r[1].error_type, BugType::TypeError);
        assert_eq!(r[2].error_type, BugType::Syntax);
    }

    #[test]
    fn package_relative_paths_and_testify() {
        // Real Travis lines: ethereum/go-ethereum (LogChunks 566009484) and getlantern/lantern
        // (519285064, testify's `Error Trace:` after `<autogenerated>:31:`, `\r` overwrites).
        let log = "--- FAIL: TestBoundedForkedSync64Fast (0.18s)\n    downloader_test.go:679: failed to synchronise blocks: retrieved hash chain is invalid\nFAIL\nFAIL\tgithub.com/ethereum/go-ethereum/eth/downloader\t94.804s\nutil.go:45: exit status 1\n--- FAIL: TestParallelPreferChained (2.62s)\n\t<autogenerated>:31: \r                        \r\tError Trace:\tproxied_test.go:126\r\n\t\t\r\t\t\tproxied_test.go:78\r\n\t\t\r\tError:\t\tShould be true\r\n\t\t\r\tMessages:\tUnexpected response \r\nFAIL\nFAIL\tgithub.com/getlantern/flashlight/v2/client\t7.1s\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "eth/downloader/downloader_test.go",
                    679,
                    "failed to synchronise blocks: retrieved hash chain is invalid"
                ),
                ("client/proxied_test.go", 126, "Should be true"),
            ],
            "{r:?}"
        );
        assert_eq!(
            super::gotestsum_package("testjson/internal/withfails.TestFailed (0.00s)"),
            Some("testjson/internal/withfails")
        );
        assert_eq!(super::gotestsum_package("src/a.test.js"), None);
        assert_eq!(
            super::gotestsum_package("testjson/internal/withfails.TestNestedWithFailure/c (0.00s)"),
            Some("testjson/internal/withfails")
        );
        assert_eq!(super::package_dir("example.com/demo"), "");
        assert_eq!(super::package_dir("demo/internal/x"), "internal/x");
        assert_eq!(super::package_dir("go.uber.org/zap/zapcore"), "zapcore");
    }

    #[test]
    fn lint_step_and_compile_tags() {
        // hashicorp/terraform Quick Checks (labri-progress/cidiff data, runs 201 and 114).
        let log = "##[group]Run make fmtcheck generate staticcheck exhaustive protobuf\n##[error]/home/runner/work/terraform/terraform/internal/command/views/json/change.go:85:2: missing cases in switch of type plans.ResourceInstanceChangeActionReason: ResourceInstanceReplaceByTriggers\n##[error]internal/command/cliconfig/credentials_test.go:89:4: undeclared name: os (compile)\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r.iter().map(|b| (b.line_number, b.error_type)).collect();
        assert_eq!(
            got,
            [(85, BugType::Linting), (89, BugType::TypeError)],
            "{r:?}"
        );
        assert_eq!(r[0].file_path, "internal/command/views/json/change.go");
    }

    #[test]
    fn module_download_failure_is_import() {
        // hashicorp/terraform "Build Terraform CLI Packages" (labri-progress/cidiff data, run 452):
        // the repo's import line is reported, the module cache's `../../../go/pkg/mod/…` is not.
        let log = "##[error]../../../go/pkg/mod/k8s.io/client-go@v0.23.4/kubernetes/scheme/register.go:22:2: k8s.io/api@v0.23.4: Get \"https://proxy.golang.org/k8s.io/api/@v/v0.23.4.zip\": read tcp 10.1.0.82:52774->74.125.124.141:443: read: connection reset by peer\n##[error]internal/backend/remote-state/kubernetes/client.go:24:2: k8s.io/api@v0.23.4: Get \"https://proxy.golang.org/k8s.io/api/@v/v0.23.4.zip\": read tcp 10.1.0.82:52774->74.125.124.141:443: read: connection reset by peer\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(
            r[0].file_path,
            "internal/backend/remote-state/kubernetes/client.go"
        );
    }

    #[test]
    fn gotestsum_summary_entries_name_test_and_package() {
        let log = "=== Skipped\n=== SKIP: internal/good TestSkipped (0.00s)\n    good_test.go:27: the skip message\n\n\
                   === Failed\n=== FAIL: outlet/kafka TestWorkers (0.10s)\n{\"level\":\"info\",\"caller\":\"outlet/kafka/root.go:96\"}\n\
                   \x20   /home/runner/work/R/R/outlet/kafka/functional_test.go:196: Metrics (-got, +want):\n\n\
                   === FAIL: internal/withfails TestFailed (0.00s)\n    fails_test.go:34: this failed\n\n\
                   === FAIL: internal/badmain  (0.00s)\nsometimes main can exit 2\n\nDONE 59 tests, 5 skipped, 3 failures in 0.157s\n";
        let r: Vec<_> = parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.test_name))
            .collect();
        assert_eq!(
            r,
            vec![
                (
                    "outlet/kafka/functional_test.go".into(),
                    196,
                    Some("TestWorkers".into())
                ),
                (
                    "internal/withfails/fails_test.go".into(),
                    34,
                    Some("TestFailed".into())
                ),
            ]
        );
    }

    #[test]
    fn quicktest_stack_names_the_tests_line() {
        // hugo's integration test helper (LogSage), shortened.
        let log = "--- FAIL: TestSitemapShouldNotUseListXML (0.03s)\n    integrationtest_builder.go:127: \n        error:\n          got non-nil error\n        stack:\n          /home/runner/work/hugo/hugo/hugolib/integrationtest_builder.go:473\n            s.Assert(err, qt.IsNil)\n          /home/runner/work/hugo/hugo/hugolib/integrationtest_builder.go:127\n            return NewIntegrationTestBuilder(cfg).Build()\n          /home/runner/work/hugo/hugo/hugolib/sitemap_test.go:149\n            b := Test(t, files)\n        \nFAIL\ngithub.com/gohugoio/hugo/hugolib\t0.5s\nFAIL\tgithub.com/gohugoio/hugo/hugolib\t12.1s\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("hugolib/sitemap_test.go", 149)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("TestSitemapShouldNotUseListXML")
        );
    }

    #[test]
    fn verbose_subtests_wait_for_their_own_verdicts_and_testify_tests_log() {
        // ddev/ddev's `go test -v` (LLM4Build's container reproduction): the parent's verdict
        // comes first, then each subtest's; three passed subtests and the parent logged every
        // retry with `t.Logf`, two failed through testify.
        let log = "=== RUN   TestDownloadFileRetryLogic\n=== RUN   TestDownloadFileRetryLogic/server_errors_then_success_with_retries\n=== NAME  TestDownloadFileRetryLogic\n    network_test.go:78: simulating server error (attempt 1)\n    network_test.go:78: simulating server error (attempt 2)\n    network_test.go:82: responding 200 OK (attempt 3)\n=== RUN   TestDownloadFileRetryLogic/server_errors_exhaust_all_retries\n    network_test.go:108: simulating server error (attempt 1)\n    network_test.go:108: simulating server error (attempt 2)\n    network_test.go:108: simulating server error (attempt 3)\n    network_test.go:122:\n        \tError Trace:\t/app/pkg/util/network_test.go:122\n        \tError:      \t\"\" does not contain \"Retrying download of http://127.0.0.1:46323/testfile.txt try #1\"\n        \tTest:       \tTestDownloadFileRetryLogic/server_errors_exhaust_all_retries\n        \tMessages:   \texpected log output for first retry, but got:\n=== RUN   TestDownloadFileRetryLogic/shasum_server_errors_then_success_with_retries\n    network_test.go:140: simulating shasum server error (attempt 1)\n    network_test.go:140: simulating shasum server error (attempt 2)\n    network_test.go:144: serving shasum file\n    network_test.go:135: serving main file\n=== RUN   TestDownloadFileRetryLogic/context_deadline_exceeded_during_client.Get\n    network_test.go:166: handling request (attempt 1)\n    network_test.go:171: connection dropped from client\n    network_test.go:166: handling request (attempt 2)\n    network_test.go:171: connection dropped from client\n=== RUN   TestDownloadFileRetryLogic/context_deadline_exceeded_during_file_copy\n    network_test.go:194: serving slow file copy (attempt 1)\n    network_test.go:194: serving slow file copy (attempt 2)\n    network_test.go:209: client disconnected during slow transfer\n    network_test.go:194: serving slow file copy (attempt 3)\n    network_test.go:209: client disconnected during slow transfer\n    network_test.go:228:\n        \tError Trace:\t/app/pkg/util/network_test.go:228\n        \tError:      \t\"\" does not contain \"with timeout 1s\"\n        \tTest:       \tTestDownloadFileRetryLogic/context_deadline_exceeded_during_file_copy\n        \tMessages:   \texpected log output for initial attempt with 1s timeout (2^0), but got:\n    network_test.go:209: client disconnected during slow transfer\n--- FAIL: TestDownloadFileRetryLogic (14.04s)\n    --- PASS: TestDownloadFileRetryLogic/server_errors_then_success_with_retries (1.50s)\n    --- FAIL: TestDownloadFileRetryLogic/server_errors_exhaust_all_retries (1.50s)\n    --- PASS: TestDownloadFileRetryLogic/shasum_server_errors_then_success_with_retries (1.51s)\n    --- PASS: TestDownloadFileRetryLogic/context_deadline_exceeded_during_client.Get (2.50s)\n    --- FAIL: TestDownloadFileRetryLogic/context_deadline_exceeded_during_file_copy (7.03s)\nFAIL\nFAIL\tgithub.com/ddev/ddev/pkg/util\t14.083s\n";
        let r = parse_str(log, &ParseOptions::default());
        let rows: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.test_name.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "pkg/util/network_test.go",
                    122,
                    Some("TestDownloadFileRetryLogic/server_errors_exhaust_all_retries")
                ),
                (
                    "pkg/util/network_test.go",
                    228,
                    Some("TestDownloadFileRetryLogic/context_deadline_exceeded_during_file_copy")
                ),
            ],
            "{r:?}"
        );
    }

    #[test]
    fn testify_unexpected_error_joins_the_error() {
        // rook/rook's integration suite without a kubeconfig (LLM4Build's reproduction).
        let log = "=== RUN   TestCephSmokeSuite\n2025-10-09 17:09:19.032045 I | installer: test environment variable (default) \"TEST_STORAGE_CLASS\"=\"\"\n2025-10-09 17:09:19.032207 I | installer: test environment variable (default) \"TEST_STORAGE_CLASS\"=\"\"\n    ceph_base_deploy_test.go:95:\n        \tError Trace:\t/app/tests/integration/ceph_base_deploy_test.go:95\n        \t            \t\t\t\t/app/tests/integration/ceph_smoke_test.go:101\n        \t            \t\t\t\t/root/go/pkg/mod/github.com/stretchr/testify@v1.11.1/suite/suite.go:211\n        \t            \t\t\t\t/app/tests/integration/ceph_smoke_test.go:68\n        \tError:      \tReceived unexpected error:\n        \t            \tfailed to get kube client. invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\n        \tTest:       \tTestCephSmokeSuite\n--- FAIL: TestCephSmokeSuite (0.00s)\nFAIL\nFAIL\tgithub.com/rook/rook/tests/integration\t0.056s\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "tests/integration/ceph_base_deploy_test.go");
        assert_eq!(r[0].line_number, 95);
        assert!(
            r[0].message
                .starts_with("Received unexpected error: failed to get kube client."),
            "{}",
            r[0].message
        );
    }

    #[test]
    fn the_testing_packages_own_race_line_is_not_the_tests() {
        // slack-go/slack's `go test -race` (LLM4Build's reproduction): the race report above
        // holds the site; `testing.go:1398` is GOROOT's.
        let log = "=== RUN   TestRTMPing\n    testing.go:1398: race detected during execution of test\n--- FAIL: TestRTMPing (30.04s)\nFAIL\nFAIL\tgithub.com/slack-go/slack/slacktest\t51.195s\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn race_detector() {
        // apache/incubator-horaedb-meta#110 (an Actions job).
        let log = "==================\nWARNING: DATA RACE\nWrite at 0x00c00033f4d0 by goroutine 115:\n  github.com/CeresDB/ceresmeta/server/member.TestWatchLeaderSingle()\n      /home/runner/work/ceresmeta/ceresmeta/server/member/watch_leader_test.go:56 +0x572\n  testing.tRunner()\n      /opt/hostedtoolcache/go/1.19.3/x64/src/testing/testing.go:1446 +0x216\n\nPrevious read at 0x00c00033f4d0 by goroutine 169:\n      /home/runner/work/ceresmeta/ceresmeta/server/member/watch_leader_test.go:48 +0x44\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("server/member/watch_leader_test.go", 56)
        );
        assert_eq!(r[0].test_name.as_deref(), Some("TestWatchLeaderSingle"));
    }

    #[test]
    fn staticcheck_codes() {
        // reviewdog/errorformat fmts/testdata/staticcheck.in (real staticcheck output).
        let log = "test.go:9:9: empty branch (SA9003)\ntest.go:15:2: should replace loop with y = append(y, x...) (S1011)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r.iter().all(|b| b.error_type == BugType::Linting));
        assert_eq!(r[1].rule.as_deref(), Some("S1011"));
    }

    #[test]
    fn go_1_2x_wording() {
        // Real Go 1.23 lines (fixtures/corpus/logs/go123/), without the `# [pkg]` vet header
        // that would otherwise mark them: vet's newer wording must still read as vet.
        let log = "./main.go:8:2: fmt.Println call has possible Printf formatting directive %s\n\
                   ./main.go:9:13: non-constant format string in call to fmt.Printf\n\
                   main.go:6:2: missing go.sum entry for module providing package github.com/google/uuid (imported by example.com/demo); to add:\n\
                   \tgo get example.com/demo\n\
                   # example.com/demo\n\
                   ./main.go:7:2: declared and not used: name\n\
                   ./main.go:5:2: \"os\" imported and not used\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r.iter().map(|b| (b.line_number, b.error_type)).collect();
        assert_eq!(
            got,
            [
                (8, BugType::Linting),
                (9, BugType::Linting),
                (6, BugType::Import),
                (7, BugType::TypeError),
                (5, BugType::TypeError),
            ],
            "{r:?}"
        );
    }

    #[test]
    fn older_vet_printf_wording() {
        // Real `go vet` output kept in jenkinsci/analysis-model, no `# [pkg]` header.
        let log = "ui_colored_test.go:46: missing argument for Fatalf(\"%#v\"): format reads arg 2, have only 1 args\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Linting);
    }
}
