//! Python: tracebacks (innermost in-repo frame), bare `SyntaxError`/`IndentationError`/`TabError`
//! blocks, pytest failure and error sections (location lines, `E` lines, collection and fixture
//! errors, doctests that raised, the short test summary, node ids from `-v` and pytest-xdist
//! progress lines, output under a uniform indentation, absolute paths under the printed
//! `rootdir:`), unittest `FAIL:` headers, faulthandler's dump of a crashed interpreter (`Fatal
//! Python error: Segmentation fault`), and the linters and type checker: flake8, pylint (text
//! and parseable `[CODE(symbol), obj]`), pydocstyle, mypy, ruff (concise, grouped, pylint
//! format, and rule names in place of codes).
//!
//! It must never report a warning or `note:` line, a frame outside the repository, or a pytest
//! summary line without a line number of its own.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// Lines a traceback may span before it is abandoned.
const TRACEBACK_BUDGET: u32 = 2000;
/// Bound on [`Python::bare_keys`].
const MAX_BARE_KEYS: usize = 64;

/// Lines a bare `File "x", line N` may precede its exception line.
const BARE_BUDGET: u32 = 8;
/// Lines one pytest failure block may span.
const PYTEST_BLOCK_BUDGET: u32 = 20_000;

static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)(, in .*)?$"#).unwrap());
static EXC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$").unwrap());
static LOC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\S+\.pyi?):(\d+): (.*)$").unwrap());
/// A fixture error's location: `file /path/test_x.py, line 21` and a bare `/path/test_x.py:21`.
static FIXTURE_LOC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:file (\S+\.py), line (\d+)|(\S+\.py):(\d+):?)$").unwrap());
/// Node ids printed by `pytest -v` (`path::test FAILED [ 2%]`) and pytest-xdist
/// (`[gw0] [ 50%] FAILED path::test`).
static VERBOSE_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[gw\d+\] (?:\[\s*\d+%\] )?(?:FAILED|ERROR) (\S+::\S.*?)|(\S+::\S.*?) (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?)$").unwrap()
});
/// pylint's parseable format and ruff's `pylint` format: `[E0401(import-error), obj] msg`,
/// `[F401] msg`, `[unused-import] msg`.
static BRACKET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[([A-Za-z][\w-]*?)(?:\(([a-z][\w-]*)\))?(?:, [^\]]*)?\] (.+)$").unwrap()
});
/// A ruff rule name used in place of a code (preview output): `unused-import`.
static KEBAB: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)+):? (.+)$").unwrap());
/// ruff's grouped format rows under a `path.py:` header: `  1:8 F401 [*] msg`.
static GROUPED_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+):(\d+) ([A-Z]{1,5}\d{1,4}|[a-z][a-z0-9]*(?:-[a-z0-9]+)+):? (.+)$")
        .unwrap()
});
/// ruff's full format location under a header: ` --> input.py:1:8`.
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^--> (\S+\.pyi?):(\d+):(\d+)$").unwrap());

/// Exceptions of the standard library's data parsers: raised on a malformed input file.
const DATA_ERRORS: [&str; 6] = [
    "xml.etree.ElementTree.ParseError",
    "xml.parsers.expat.ExpatError",
    "xml.dom.expatbuilder.ExpatError",
    "json.decoder.JSONDecodeError",
    "tomllib.TOMLDecodeError",
    "plistlib.InvalidFileException",
];

/// pytest prints a location outside any checkout the parser knows as an absolute path under its
/// `rootdir:` (a container's `/app`, a docs build's project): relative to the rootdir it is the
/// project's own file.
///
/// A rootdir that is a directory inside the checkout (`cd packages/x; hatch test` prints
/// `rootdir: /home/runner/work/R/R/packages/x`) is where pytest ran: its relative paths are
/// relative to that directory, so they get its repo-relative prefix.
fn rooted(rootdir: Option<&str>, p: &str, sink: &Sink) -> String {
    if let Some(root) = rootdir
        && let Some(rest) = p.strip_prefix(root).and_then(|r| r.strip_prefix('/'))
        && sink.repo_path(p).is_none()
    {
        return rest.to_string();
    }
    if let Some(root) = rootdir
        && !p.starts_with(['/', '\\', '~', '.'])
        && p.as_bytes().get(1) != Some(&b':')
        && let Some(prefix) = sink.repo_path(root).filter(|d| !d.is_empty() && d != ".")
        && !p.starts_with(&format!("{prefix}/"))
    {
        return format!("{prefix}/{p}");
    }
    p.to_string()
}

/// True when `t` starts with a kebab-case word followed by `:` (`unused-import: …`), by bytes.
fn kebab_colon(t: &str) -> bool {
    let b = t.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_lowercase) {
        return false;
    }
    let end = b
        .iter()
        .position(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-'))
        .unwrap_or(b.len());
    end > 2 && b.get(end) == Some(&b':') && b[..end].contains(&b'-')
}

/// pydocstyle: `path.py:27 in public function `get_user`:` then `        D300: message`.
static PYDOCSTYLE_HEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+\.pyi?):(\d+) (?:at module level|in [^:]+):$").unwrap());
static PYDOCSTYLE_ROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(D\d{3}): (.+)$").unwrap());

static FAILED_WORD: crate::Needle = crate::needle!(" FAILED");
static ERROR_WORD: crate::Needle = crate::needle!(" ERROR");

/// Node ids remembered from verbose progress lines.
const MAX_VERBOSE_IDS: usize = 512;
static LINT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]{1,5}\d{1,4})(:?) (.*)$").unwrap());
static MYPY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^error: (.*?)(?:\s+\[([a-z][\w-]*)\])?$").unwrap());
/// A generated test's method name may hold its arguments (`test_x('./a.json', ...)
/// (pkg.Class)`, made by a decorator that sets `_testMethodName`): the test is named after the
/// method's identifier.
static UNITTEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:FAIL|ERROR): (?:(\S+)|([A-Za-z_]\w*)\(.*?\)) \(([^)\s]+)\)").unwrap()
});
/// nose's header for a test function (no class): `FAIL: test.rosdistro_verify_test.test_x`,
/// the dotted name ending in a name nose collects (its `testMatch`: `test` at a word start).
static NOSE_FUNCTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:FAIL|ERROR): ((?:\w+\.)+(?:\w*[_.-])?[Tt]est\w*)$").unwrap());

/// True when `name` (possibly dotted) names an exception class.
fn is_exception_name(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.ends_with("Error")
        || last.ends_with("Exception")
        || last.ends_with("Exit")
        || last.ends_with("Interrupt")
        || last.ends_with("Failure")
        || last == "StopIteration"
}

/// Classifies a Python exception by its class name (see the crate's classification table).
pub(crate) fn exception_type(name: &str) -> BugType {
    match name.rsplit('.').next().unwrap_or(name) {
        "ModuleNotFoundError" | "ImportError" => BugType::Import,
        // Template engines name their parse errors so (Jinja's and Django's
        // `TemplateSyntaxError`): the template's line is the error's.
        n if n.ends_with("SyntaxError") => BugType::Syntax,
        "IndentationError" | "TabError" => BugType::Indentation,
        _ => BugType::Logic,
    }
}

/// `Name: message` for a class whose name does not say exception: a CamelCase identifier
/// (dotted or not) and a message.
fn parse_custom_exception(s: &str) -> Option<(&str, &str)> {
    let (name, msg) = s.split_once(": ")?;
    let last = name.rsplit('.').next()?;
    let camel = last.as_bytes().first()?.is_ascii_uppercase()
        && last.bytes().any(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    (camel && !msg.trim().is_empty()).then_some((name, msg))
}

/// Parses `Name: message` when Name is an exception class.
fn parse_exception(s: &str) -> Option<(&str, &str)> {
    if !s.as_bytes().first()?.is_ascii_alphabetic() {
        return None;
    }
    let c = EXC.captures(s)?;
    let name = c.get(1)?.as_str();
    is_exception_name(name).then(|| (name, c.get(2).map_or("", |m| m.as_str())))
}

#[derive(Debug)]
struct Traceback {
    frame: Option<(String, u64)>,
    seq: u64,
    budget: u32,
    indent: usize,
    test: Option<String>,
    /// A further traceback of a unittest failure already reported: the exception chain's
    /// later links (`During handling of the above exception…`), not a failure of their own.
    chained: bool,
    /// Python printed `Exception ignored in: <…>` above it: an error in a `__del__`, a
    /// callback or at interpreter shutdown that Python itself discarded.
    ignored: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    #[default]
    None,
    Failures,
    Errors,
    Summary,
    /// `warnings summary`: each warning's `rel/x.py:N` header (relative to where pytest was
    /// invoked) is followed by the warning itself at the absolute `…/rel/x.py:N`.
    Warnings,
    Other,
}

#[derive(Debug, Default)]
struct PyBlock {
    test: Option<String>,
    seq: u64,
    loc: Option<(String, u64)>,
    exc: Option<String>,
    exc_msg: Option<String>,
    first_e: Option<String>,
    captured: bool,
    lines: u32,
    /// The frames after the innermost repository frame: 0 none yet, 1 only the import
    /// system's (`<frozen importlib._bootstrap>`), 2 others too, 3 a dependency's module body
    /// (see [`import_tail`]). With 1 or 3, whatever the exception, the repository's line was an
    /// import that failed.
    import_tail: u8,
    /// The block's first exception is a failed import and another was raised while handling
    /// it (`During handling of the above exception, another exception occurred:`): the guard
    /// of an optional dependency (pycorrector turns `No module named 'kenlm'` into its own
    /// `ImportError: … pip install kenlm`), so the import line is the failure. Any other
    /// first link is the handler's business: the handler's raise is what the code decided
    /// (bentoml raises `MissingDependencyException` for a Docker client error), as is `raise
    /// … from` (pymc quotes a child process's traceback as the cause).
    chained: bool,
}

/// A doctest's block header names it `[doctest] pkg.mod.func` (IPython's plugin: `[ipdoctest]`);
/// its node id, `pkg/mod.py::pkg.mod.func`, has the dotted name alone.
fn doctest_name(header: &str) -> &str {
    header
        .strip_prefix("[doctest] ")
        .or_else(|| header.strip_prefix("[ipdoctest] "))
        .unwrap_or(header)
}

/// A `FAILURES`/`ERRORS` section rule whose end a terminal overwrote (tmux's status text,
/// `16:31:21 [20/3280]`) with the first block's header run on after it on the same line
/// (nextstrain/cli's paste): the section, and the header (`___ name ___`).
fn fused_section(t: &str) -> Option<(Section, &str)> {
    let rest = t.strip_prefix("===")?.trim_start_matches('=');
    let (title, rest) = rest.split_once('=')?;
    let section = match title.trim() {
        "FAILURES" => Section::Failures,
        "ERRORS" => Section::Errors,
        _ => return None,
    };
    let header = &rest[rest.find('_')?..];
    let name = header.trim_matches('_');
    // `___ name ___`: a space on each side of the name, and something in it.
    (name.len() > 2 && name.starts_with(' ') && name.ends_with(' ') && !name.trim().is_empty())
        .then_some((section, header))
}

/// Follows [`PyBlock::import_tail`] over one frame. A dependency's frame `in <module>` is its
/// module body running because the repository's line imported it: the import failed there
/// (flax's `from clu import deterministic_data` raising `AttributeError: module
/// 'tensorflow_datasets' has no attribute 'version'` at `clu/deterministic_data.py:79`), also
/// when the body called on before raising (mccabe's `import hypothesmith`, whose module body
/// reached `typing.py:3831: in __getattr__`): once such a frame is seen (3), the frames after
/// it are that import's.
fn import_tail(state: u8, own: bool, path: &str, module: bool) -> u8 {
    if own {
        0
    } else if state == 3 || (module && state < 2) {
        3
    } else if path.starts_with("<frozen importlib") || module {
        if state == 0 { 1 } else { state }
    } else {
        2
    }
}

#[derive(Debug, Default)]
pub(crate) struct Python {
    /// Reports of tracebacks printed outside any test while a unittest run may be going on:
    /// taken back when its summary follows failure blocks that never reached them.
    bare_keys: Vec<crate::sink::Key>,
    /// pytest named the installed package whose tests it runs (`tests/x.py::t <- …/site-packages/
    /// nilearn/tests/x.py`): learned once.
    pyargs_seen: bool,
    tb: Option<Traceback>,
    section: Section,
    block: Option<PyBlock>,
    unittest_test: Option<String>,
    /// Inside a unittest `FAIL:`/`ERROR:` block (up to the next `=====` rule or `Ran N tests`),
    /// and whether its traceback was already read.
    unittest_block: bool,
    unittest_done: bool,
    /// `--tb=line` reports waiting for their test id from the short summary.
    line_mode: std::collections::VecDeque<(String, u64)>,
    /// Failed node ids from `-v` / xdist progress lines, to name failure blocks in full.
    verbose_ids: std::collections::VecDeque<String>,
    /// ruff `--output-format grouped`: the `path.py:` header of the rows that follow.
    grouped_file: Option<String>,
    /// ruff's full format with rule names (preview): `unused-import: msg`, waiting for its
    /// ` --> path:line:col` line.
    ruff_header: Option<(String, String, u64)>,
    /// Indentation of the pytest section rule that opened the current section.
    section_indent: usize,
    /// pytest's `rootdir: /path` header line.
    rootdir: Option<String>,
    /// In the warnings summary: the last `rel/x.py:N` header, and whether the directory pytest
    /// ran in was already learned from one.
    warn_rel: Option<String>,
    /// The previous line was `Exception ignored in: …`.
    exception_ignored: bool,
    warn_rebased: bool,
    /// A pydocstyle location line waiting for its `Dnnn: message` line.
    docstyle: Option<(String, u64, u64)>,
    /// faulthandler's dump after `Fatal Python error: Segmentation fault`, until the current
    /// thread's innermost repository frame.
    fatal: Option<FatalDump>,
}

#[derive(Debug)]
struct FatalDump {
    msg: String,
    /// The node id pytest `-v` printed before the crash on the same line.
    test: Option<String>,
    /// Past `Current thread 0x…`: the other threads' stacks were not where it crashed.
    current: bool,
    /// A frame of the test runner (`_pytest/`, `pluggy/`, `unittest/`) was passed: repository
    /// frames further out are the script that launched it (`runtests.py`), not the crash.
    runner: bool,
    seq: u64,
    budget: u32,
}

/// Lines of one faulthandler dump read at most (a Qt application's dozen threads included).
const FATAL_BUDGET: u32 = 1200;

/// `  File "/…/x.py", line 3375 in test_x`: a faulthandler frame (no comma before `in`, unlike
/// a traceback's), path and line.
fn faulthandler_frame(t: &str) -> Option<(&str, u64)> {
    let (path, rest) = t.strip_prefix("File \"")?.split_once("\", line ")?;
    let n = rest.split(' ').next()?;
    Some((path, super::num(n)?))
}

/// faulthandler's header for a crash on a fatal signal (`Fatal Python error: Segmentation
/// fault`, `… Aborted`), after pytest `-v`'s node id when the test was running.
const FATAL: &str = "Fatal Python error: ";

/// Where faulthandler's header starts in `t`, when `t` is one.
fn fatal_error_at(t: &str) -> Option<usize> {
    // faulthandler's fatal signals end the line: a suffix test spares the search on the many
    // other lines with a colon.
    const SIGNALS: [&str; 5] = [
        "Segmentation fault",
        "Aborted",
        "Floating point exception",
        "Bus error",
        "Illegal instruction",
    ];
    if !SIGNALS.iter().any(|s| t.ends_with(s)) {
        return None;
    }
    memchr::memmem::find(t.as_bytes(), FATAL.as_bytes())
}

/// A test as pytest's block header names it: `Class.test_x[param]`, `test_x`, no space before
/// the parameters.
fn is_test_id(t: &str) -> bool {
    let head = t.split('[').next().unwrap_or(t);
    !head.is_empty()
        && head
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        && (head.len() == t.len() || t.ends_with(']'))
}

/// The installed package a pytest verbose line's `<- path` runs tests from: `pytest --pyargs
/// nilearn` prints `tests/test_x.py::test_y <- ../home/travis/virtualenv/…/site-packages/
/// nilearn/tests/test_x.py PASSED`, so the package under test is the repository's own, installed.
fn pytest_installed_tests(from: &str) -> Option<&str> {
    let at = memchr::memmem::find(from.as_bytes(), b"-packages/")?;
    let (pkg, rest) = from[at + 10..].split_once('/')?;
    let identifier = !pkg.is_empty()
        && !pkg.as_bytes()[0].is_ascii_digit()
        && pkg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (identifier && rest.split_ascii_whitespace().next()?.ends_with(".py")).then_some(pkg)
}

/// setuptools' `copying <source> -> build/<dir>/<package path>` (build_py, bdist_egg): the
/// repository directory of an installed package, so that its frames in `site-packages` (or an
/// egg) map back (`copying src/foo/a.py -> build/lib/foo`: `foo` lives at `src/foo`).
fn setuptools_copy(rest: &str, sink: &mut Sink) {
    let Some((src, dst)) = rest.split_once(" -> ") else {
        return;
    };
    let Some(dst) = dst.trim().strip_prefix("build/") else {
        return;
    };
    // `build/lib/`, `build/lib.linux-x86_64-3.8/`, `build/bdist.linux-x86_64/egg/`.
    let Some((root, pkg_path)) = dst.split_once('/') else {
        return;
    };
    let pkg_path = if root.starts_with("bdist.") {
        pkg_path.strip_prefix("egg/").unwrap_or(pkg_path)
    } else if root == "lib" || root.starts_with("lib.") {
        pkg_path
    } else {
        return;
    };
    let pkg_path = pkg_path.trim_end_matches('/');
    let Some((src_dir, file)) = src.trim().rsplit_once('/') else {
        return;
    };
    let ours = |s: &str| {
        !s.is_empty()
            && !s.starts_with('/')
            && !s.contains("..")
            && s.split('/').all(|seg| {
                !seg.is_empty()
                    && seg
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
            })
    };
    if file.is_empty() || !ours(src_dir) || !ours(pkg_path) {
        return;
    }
    let Some(prefix) = src_dir.strip_suffix(pkg_path) else {
        return;
    };
    if !(prefix.is_empty() || prefix.ends_with('/')) {
        return;
    }
    let top = pkg_path.split('/').next().unwrap_or(pkg_path);
    sink.learn_package(top, &format!("{prefix}{top}"));
}

impl Python {
    /// A line of pytest's warnings summary. pytest prints node ids and failure locations
    /// relative to the directory it was invoked in, which may be below its `rootdir` (aws-cli
    /// runs it from `tests/`: `functional/x/test_a.py:313`); a warning header `unit/t.py:620`
    /// followed by `/…/aws-cli/tests/unit/t.py:620: DeprecationWarning` shows that directory,
    /// and the step's pytest reports move into it.
    fn warnings_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) {
        if self.warn_rebased {
            return;
        }
        if l.indent() == self.section_indent {
            let rel = l.colon_digit
                && !t.starts_with(['/', '.'])
                && t.rsplit_once(':').is_some_and(|(p, n)| {
                    p.ends_with(".py") && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                });
            self.warn_rel = rel.then(|| t.to_string());
            return;
        }
        let Some(rel) = &self.warn_rel else { return };
        if !t.starts_with('/') {
            return;
        }
        let Some(at) = memchr::memmem::find(t.as_bytes(), rel.as_bytes()) else {
            return;
        };
        if at < 2 || t.as_bytes()[at - 1] != b'/' || t.as_bytes().get(at + rel.len()) != Some(&b':')
        {
            return;
        }
        self.warn_rebased = true;
        let dir = &t[..at - 1];
        if sink
            .repo_path(dir)
            .is_some_and(|d| !d.is_empty() && d != ".")
        {
            sink.rebase_step(dir, &["pytest"]);
        }
    }

    /// True when `line` cannot change this matcher's state or be claimed by it: no traceback or
    /// pytest block is open and the line starts none of them (`===`, `Traceback`, `File "`,
    /// `FAIL: `, `ERROR: `). Must stay in step with [`Python::line`].
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.tb.is_none()
            && matches!(self.section, Section::None | Section::Other)
            && !matches!(l.first, b'=' | b'T' | b'F' | b'E')
            && !(l.first == b'R' && self.unittest_block)
            && !(l.colon
                && matches!(l.last, b']' | b'D' | b'R')
                && (crate::has(&FAILED_WORD, l.trimmed()) || crate::has(&ERROR_WORD, l.trimmed())))
            && !(l.first == b'[' && l.trimmed().starts_with("[gw"))
            && self.grouped_file.is_none()
            && self.ruff_header.is_none()
            && !(l.last == b':'
                && l.indent() == 0
                && (l.trimmed().ends_with(".py:") || l.trimmed().ends_with(".pyi:")))
            && !(l.first.is_ascii_lowercase()
                && l.colon
                && l.indent() == 0
                && kebab_colon(l.trimmed()))
            && !(l.first == b'r' && l.trimmed().starts_with("rootdir: "))
            && !(l.first == b'c' && l.trimmed().starts_with("copying "))
            && !(!self.pyargs_seen
                && l.colon
                && matches!(l.last, b'D' | b']')
                && crate::contains(l.trimmed(), " <- "))
            && self.docstyle.is_none()
            && !(l.last == b':' && l.colon_digit && l.indent() == 0)
            && self.fatal.is_none()
            && !(l.colon && l.last.is_ascii_alphabetic() && fatal_error_at(l.trimmed()).is_some())
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if self.fatal.is_some() && self.fatal_line(l, t, sink) {
            return true;
        }
        if l.colon
            && l.last.is_ascii_alphabetic()
            && let Some(at) = fatal_error_at(t)
        {
            let before = t[..at].trim();
            self.fatal = Some(FatalDump {
                msg: t[at..].to_string(),
                test: before.contains("::").then(|| before.to_string()),
                current: false,
                runner: false,
                seq: l.no,
                budget: FATAL_BUDGET,
            });
            return true;
        }
        if l.first == b'c'
            && let Some(rest) = t.strip_prefix("copying ")
        {
            setuptools_copy(rest, sink);
            return false;
        }
        if !self.pyargs_seen
            && l.colon
            && matches!(l.last, b'D' | b']')
            && let Some((_, from)) = t.split_once(" <- ")
            && let Some(pkg) = pytest_installed_tests(from)
        {
            self.pyargs_seen = true;
            sink.learn_package(pkg, pkg);
        }
        // pytest section rules (`==== FAILURES ====`).
        if (l.first == b'=' && t.bytes().all(|b| b == b'='))
            || (l.first == b'R' && t.starts_with("Ran ") && t.contains(" test"))
        {
            // unittest's summary after failure blocks: the tracebacks printed outside any
            // block while it ran were logged by the code or its harness, which went on
            // (VisTrails' runner: `ERROR: Could not import module: …` and the import's
            // traceback); unittest counts its failures in its blocks. One a test's block
            // reached too (web2py's server start-up, then `test_CRYPT`) has its name and stays.
            if l.first == b'R' && self.unittest_block && !self.bare_keys.is_empty() {
                let keys = std::mem::take(&mut self.bare_keys);
                let untested: Vec<_> = sink
                    .reports_mut()
                    .filter(|r| r.test_name.is_none())
                    .map(|r| (r.file_path.clone(), r.line_number, r.error_type))
                    .filter(|k| keys.contains(k))
                    .collect();
                sink.retract(&untested);
            }
            // unittest's rule before each failure block, and its summary after the last.
            self.unittest_test = None;
            self.unittest_block = false;
            self.unittest_done = false;
        }
        if l.first == b'='
            && t.ends_with("__")
            && let Some((section, header)) = fused_section(t)
        {
            self.finish_block(sink);
            self.section_indent = l.indent();
            self.section = section;
            self.warn_rel = None;
            self.warn_rebased = false;
            let h = Line::new(header, l.no, l.marker);
            return self.pytest_line(&h, header, sink);
        }
        if t.len() >= 7 && t.starts_with("===") && t.ends_with("===") {
            let title = t.trim_matches('=').trim().to_ascii_lowercase();
            self.finish_block(sink);
            // Output pasted into docs or re-indented by a harness keeps its shape under a
            // uniform indentation: the section rule's indentation is the block's column 0.
            self.section_indent = l.indent();
            self.section = match title.as_str() {
                "failures" => Section::Failures,
                "errors" => Section::Errors,
                "short test summary info" => Section::Summary,
                "warnings summary" => Section::Warnings,
                _ => Section::Other,
            };
            self.warn_rel = None;
            self.warn_rebased = false;
            return !title.is_empty();
        }
        match self.section {
            Section::Failures | Section::Errors => return self.pytest_line(l, t, sink),
            Section::Summary => {
                if self.summary_line(t, sink) {
                    return true;
                }
                // A failure's message spans lines (`assert a in b` then `+  where b = …`): its
                // continuation lines are indented, and more `FAILED` lines follow.
                if !t.is_empty() && l.indent() <= self.section_indent {
                    self.section = Section::None;
                }
            }
            Section::Warnings => {
                self.warnings_line(l, t, sink);
                return false;
            }
            Section::Other | Section::None => {}
        }
        if let Some(dir) = t.strip_prefix("rootdir: ") {
            let dir = dir.split(", ").next().unwrap_or(dir).trim_end_matches('/');
            self.rootdir =
                (dir.starts_with('/') && dir.len() > 1 && dir.len() < 512).then(|| dir.to_string());
            return true;
        }
        if self.ruff_line(l, t, sink) {
            return true;
        }
        if l.colon
            && (t.contains("FAILED") || t.contains("ERROR"))
            && let Some(c) = VERBOSE_FAILED.captures(t)
        {
            let id = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
            if self.verbose_ids.len() < MAX_VERBOSE_IDS
                && id.len() <= 512
                && !self.verbose_ids.iter().any(|x| x == id)
            {
                self.verbose_ids.push_back(id.to_string());
            }
            return true;
        }
        self.traceback_line(l, t, sink)
    }

    /// ruff's grouped rows and its full format headed by a rule name (preview).
    fn ruff_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if let Some(file) = &self.grouped_file {
            if l.indent() > 0
                && let Some(c) = GROUPED_ROW.captures(l.text)
            {
                let rule = &c[3];
                let msg = c[4].trim_start_matches("[*] ");
                let ty = if rule == "invalid-syntax" {
                    syntax_or_indent(msg)
                } else {
                    BugType::Linting
                };
                let file = file.clone();
                sink.emit(
                    l.no,
                    Finding::new(&file, super::num(&c[1]).unwrap_or(0), ty, msg)
                        .col(super::num(&c[2]))
                        .conf(0.95)
                        .tool("ruff")
                        .rule(Some(rule)),
                );
                return true;
            }
            self.grouped_file = None;
        }
        if let Some((rule, msg, seq)) = self.ruff_header.take()
            && let Some(c) = ARROW.captures(t)
        {
            sink.emit(
                seq,
                Finding::new(
                    &c[1],
                    super::num(&c[2]).unwrap_or(0),
                    BugType::Linting,
                    &msg,
                )
                .col(super::num(&c[3]))
                .conf(0.95)
                .tool("ruff")
                .rule(Some(&rule)),
            );
            return true;
        }
        if let Some((path, line, seq)) = self.docstyle.take()
            && let Some(c) = PYDOCSTYLE_ROW.captures(t)
        {
            sink.emit(
                seq,
                Finding::new(&path, line, BugType::Linting, &c[2])
                    .conf(0.95)
                    .tool("pydocstyle")
                    .rule(Some(&c[1])),
            );
            return true;
        }
        if l.indent() == 0
            && l.last == b':'
            && l.colon_digit
            && let Some(c) = PYDOCSTYLE_HEAD.captures(t)
            && let Some(n) = super::num(&c[2])
        {
            self.docstyle = Some((c[1].to_string(), n, l.no));
            return true;
        }
        if l.indent() == 0
            && l.last == b':'
            && !t.contains(' ')
            && (t.ends_with(".py:") || t.ends_with(".pyi:"))
        {
            self.grouped_file = Some(t.trim_end_matches(':').to_string());
            return true;
        }
        // `invalid-syntax:` headers are the Rust matcher's (it reads ruff's full format).
        if l.indent() == 0
            && kebab_colon(t)
            && !t.starts_with("invalid-syntax")
            && let Some(c) = KEBAB.captures(t)
        {
            let msg = c[2].trim_start_matches("[*] ");
            self.ruff_header = Some((c[1].to_string(), msg.to_string(), l.no));
        }
        false
    }

    fn traceback_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if let Some(tb) = &mut self.tb {
            if tb.budget == 0 {
                self.tb = None;
            } else {
                tb.budget -= 1;
            }
        }
        let ignored = std::mem::take(&mut self.exception_ignored);
        // Python prints an exception raised in an exit handler or a finaliser and goes on with
        // the exit status it had (`Error in atexit._run_exitfuncs:` and `Error in
        // sys.exitfunc:` in Python 2, `Exception ignored in …` since 3): the traceback after
        // it failed nothing (VisTrails' test runner cleaning up with module globals gone).
        if l.first == b'E'
            && (t.starts_with("Exception ignored in")
                || t.starts_with("Error in atexit._run_exitfuncs")
                || t.starts_with("Error in sys.exitfunc"))
        {
            self.exception_ignored = true;
            return true;
        }
        if t == "Traceback (most recent call last):" {
            self.tb = Some(Traceback {
                ignored,
                frame: None,
                seq: l.no,
                budget: TRACEBACK_BUDGET,
                indent: l.indent(),
                test: self.unittest_test.clone(),
                chained: self.unittest_done,
            });
            return true;
        }
        if t.starts_with("File \"")
            && let Some(c) = FRAME.captures(t)
        {
            let path = &c[1];
            let line = super::num(&c[2]).unwrap_or(0);
            let tb = self.tb.get_or_insert(Traceback {
                ignored: false,
                frame: None,
                seq: l.no,
                budget: BARE_BUDGET,
                indent: 0,
                test: None,
                chained: false,
            });
            if sink.is_own_frame(path) {
                tb.frame = Some((path.to_string(), line));
            }
            return true;
        }
        if let Some(rest) = t
            .strip_prefix("FAIL: ")
            .or_else(|| t.strip_prefix("ERROR: "))
            && let Some(c) = UNITTEST.captures(t)
        {
            let _ = rest;
            // `test_x (pkg.mod.Class)` before Python 3.11, `test_x (pkg.mod.Class.test_x)`
            // since. A module that failed to import is reported as a `_FailedTest` named after
            // the module: there is no test to name.
            let method = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
            let class = &c[3];
            let id = if class.starts_with("unittest.loader.") {
                None
            } else if class.ends_with(&format!(".{method}")) {
                Some(class.to_string())
            } else {
                Some(format!("{class}.{method}"))
            };
            self.unittest_test = id;
            self.unittest_block = true;
            self.unittest_done = false;
            return true;
        }
        if (t.starts_with("FAIL: ") || t.starts_with("ERROR: "))
            && let Some(c) = NOSE_FUNCTION.captures(t)
        {
            self.unittest_test = Some(c[1].to_string());
            return true;
        }
        let Some(tb) = &self.tb else {
            return false;
        };
        if l.indent() > tb.indent || t.is_empty() {
            return true;
        }
        // After `Traceback (most recent call last):` and its frames, the line at the traceback's
        // own indentation is the exception, whatever its class is called (VisTrails'
        // `MissingPackageVersion: Missing version 2.1.1 of package …`); a bare frame needs a
        // name that says exception.
        let exception = parse_exception(t).or_else(|| {
            (tb.budget > BARE_BUDGET && tb.frame.is_some())
                .then(|| parse_custom_exception(t))
                .flatten()
        });
        if let Some((name, _msg)) = exception {
            let tb = self.tb.take().expect("checked above");
            // Outside a test, a `CalledProcessError` is a build driver saying the command it ran
            // failed: its frames are the driver's `run`/`check_call` helper, and the failure is
            // in the child's own output above (an `apt-get`, a compiler, a test runner).
            let child_failed = tb.test.is_none() && name.ends_with("CalledProcessError");
            // Likewise a parser's error about the data a script read (`ParseError: mismatched
            // tag: line 2524, column 3`): the fault is in that XML/JSON/TOML file, not in the
            // script's line that parsed it.
            let bad_input = tb.test.is_none() && DATA_ERRORS.contains(&name);
            if let Some((path, line)) = tb
                .frame
                .as_ref()
                .filter(|_| !child_failed && !bad_input && !tb.chained && !tb.ignored)
            {
                let ty = exception_type(name);
                let before = sink.len();
                sink.emit(
                    tb.seq,
                    Finding::new(path, *line, ty, t)
                        .test(tb.test.as_deref())
                        .conf(0.85)
                        .tool("python")
                        .rule(Some(name.rsplit('.').next().unwrap_or(name))),
                );
                if tb.test.is_none()
                    && !self.unittest_block
                    && sink.len() > before
                    && self.bare_keys.len() < MAX_BARE_KEYS
                    && let Some(key) = sink.last_key()
                {
                    self.bare_keys.push(key);
                }
            }
            // The test's failure is read: a traceback before the block ends is a later link of
            // its exception chain.
            self.unittest_done = self.unittest_block;
            if !self.unittest_block {
                self.unittest_test = None;
            }
            return true;
        }
        // Python 3.11+ caret lines and source lines are indented; anything else at the
        // traceback's own indentation that is not an exception ends a bare block.
        if tb.budget <= BARE_BUDGET && tb.frame.is_none() {
            self.tb = None;
        }
        false
    }

    fn pytest_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        // `____ test_name ____` starts a failure or error block.
        // A name too long for the terminal's width is padded with a single `_` on one side or
        // both (`_ Class.test[aud-audience] __`: pytest centres it); the `_ _ _ _` line between
        // a traceback's frames is no header.
        let padded = (t.starts_with("__") && t.ends_with("__"))
            || ((t.starts_with("_ ") || t.starts_with("__"))
                && (t.ends_with(" _") || t.ends_with("__"))
                && t.bytes().any(|b| b != b'_' && b != b' '));
        // Wider than the terminal, the name has no `_` left: ` Class.test[exp-expiry] `, one
        // space each side of a name with none before its parameters.
        let bare = l.text.len() == t.len() + 2 + self.section_indent
            && l.text.ends_with(' ')
            && t.len() >= 60
            && is_test_id(t);
        if (t.len() >= 8 && padded) || bare {
            let name = t.trim_matches('_').trim();
            if !name.is_empty() {
                self.finish_block(sink);
                let test = if let Some(rest) = name
                    .strip_prefix("ERROR at setup of ")
                    .or_else(|| name.strip_prefix("ERROR at teardown of "))
                {
                    Some(rest.to_string())
                } else if name.starts_with("ERROR collecting ") {
                    None
                } else {
                    Some(name.to_string())
                };
                self.block = Some(PyBlock {
                    test,
                    seq: l.no,
                    ..PyBlock::default()
                });
                return true;
            }
        }
        let base = self.section_indent;
        // Column 0 of the section (see `section_indent`); lines indented less end nothing but
        // are read as they are.
        let text = if l.indent() >= base {
            &l.text[base..]
        } else {
            l.text
        };
        let indent = l.indent().saturating_sub(base);
        let root = self.rootdir.as_deref();
        let Some(block) = &mut self.block else {
            // `--tb=line`: bare location lines under FAILURES.
            if let Some(c) = LOC.captures(t)
                && let Some(line) = super::num(&c[2])
            {
                let emitted = sink.emit(
                    l.no,
                    Finding::new(&c[1], line, BugType::Logic, &c[3])
                        .conf(0.9)
                        .tool("pytest"),
                );
                if emitted
                    && self.line_mode.len() < 1000
                    && let Some(p) = sink.repo_path(&c[1])
                {
                    self.line_mode.push_back((p, line));
                }
            }
            return true;
        };
        block.lines += 1;
        if block.captured || block.chained || block.lines > PYTEST_BLOCK_BUDGET {
            return true;
        }
        if block.loc.is_some()
            && block
                .exc
                .as_deref()
                .is_some_and(|e| exception_type(e) == BugType::Import)
            && t == "During handling of the above exception, another exception occurred:"
        {
            block.chained = true;
            return true;
        }
        if t.starts_with("---") && (t.contains(" Captured ") || t.contains(" generated ")) {
            block.captured = true;
            return true;
        }
        if let Some(e) = text.strip_prefix('E')
            && (e.is_empty() || e.starts_with(' '))
        {
            let content = e.trim();
            if content.is_empty() {
                return true;
            }
            if block.first_e.is_none() {
                block.first_e = Some(content.to_string());
            }
            if let Some(c) = FRAME.captures(content) {
                let path = rooted(root, &c[1], sink);
                if let Some(n) = super::num(&c[2])
                    && sink.is_own_frame(&path)
                {
                    block.loc = Some((path, n));
                }
            } else if let Some((name, _)) = parse_exception(content) {
                block.exc = Some(name.to_string());
                block.exc_msg = Some(content.to_string());
            }
            return true;
        }
        // `<frozen importlib._bootstrap>:1007: in _find_and_load`: the import system's frames.
        if indent == 0 && t.starts_with("<frozen ") {
            block.import_tail = import_tail(block.import_tail, false, t, false);
            return true;
        }
        if indent == 0
            && l.colon_digit
            && let Some(c) = LOC.captures(t)
        {
            if let Some(n) = super::num(&c[2]) {
                let path = rooted(root, &c[1], sink);
                let own = sink.is_own_frame(&path);
                let rest = &c[3];
                // A doctest example that raised (`UNEXPECTED EXCEPTION: …`) is printed with the
                // exception's own traceback, then placed at the example's docstring line
                // (`sysinfo.py:109: UnexpectedException`); the traceback's innermost repository
                // frame is where it was raised. Without one (a `SyntaxError` in the example
                // itself), the example's line is the failure.
                let raised_below = rest == "UnexpectedException" && block.loc.is_some();
                block.import_tail =
                    import_tail(block.import_tail, own, &c[1], rest == "in <module>");
                if own && !raised_below {
                    block.loc = Some((path, n));
                }
                if !rest.starts_with("in ") && is_exception_name(rest.trim()) {
                    block.exc.get_or_insert_with(|| rest.trim().to_string());
                }
            }
            return true;
        }
        if block.loc.is_none()
            && t.ends_with(|c: char| c.is_ascii_digit() || c == ':')
            && let Some(c) = FIXTURE_LOC.captures(t)
        {
            let (p, n) = match (c.get(1), c.get(2)) {
                (Some(p), Some(n)) => (p.as_str(), n.as_str()),
                _ => (&c[3], &c[4]),
            };
            if let Some(n) = super::num(n) {
                let path = rooted(root, p, sink);
                if sink.is_own_frame(&path) {
                    block.loc = Some((path, n));
                }
            }
            return true;
        }
        // `--tb=native` tracebacks inside a block.
        if let Some(c) = FRAME.captures(t) {
            if let Some(n) = super::num(&c[2]) {
                let path = rooted(root, &c[1], sink);
                let own = sink.is_own_frame(&path);
                let module = c.get(3).is_some_and(|m| m.as_str() == ", in <module>");
                block.import_tail = import_tail(block.import_tail, own, &c[1], module);
                if own {
                    block.loc = Some((path, n));
                }
            }
        } else if indent == 0
            && let Some((name, _)) = parse_exception(t)
        {
            block.exc = Some(name.to_string());
            block.exc_msg = Some(t.to_string());
        }
        true
    }

    fn finish_block(&mut self, sink: &mut Sink) {
        let Some(b) = self.block.take() else {
            return;
        };
        let Some((path, line)) = &b.loc else {
            return;
        };
        let ty = if matches!(b.import_tail, 1 | 3) {
            BugType::Import
        } else {
            b.exc.as_deref().map_or(BugType::Logic, exception_type)
        };
        let full = b.test.as_deref().and_then(|short| {
            let short = doctest_name(short);
            self.verbose_ids.iter().find(|id| {
                id.split_once("::")
                    .is_some_and(|(_, name)| name.replace("::", ".") == short)
            })
        });
        let test = full.map(String::as_str).or(b.test.as_deref());
        let message = match ty {
            BugType::Logic => b.first_e.as_deref().or(b.exc_msg.as_deref()),
            _ => b.exc_msg.as_deref().or(b.first_e.as_deref()),
        }
        .or(b.exc.as_deref())
        .unwrap_or("test failed");
        sink.emit(
            b.seq,
            Finding::new(path, *line, ty, message)
                .test(test)
                .conf(0.9)
                .tool("pytest")
                .rule(b.exc.as_deref().filter(|_| ty != BugType::Logic)),
        );
    }

    /// `FAILED tests/test_x.py::TestC::test_y - msg`: upgrades the block's test name to the
    /// full node id.
    fn summary_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        // pytest 3 and older print `FAIL path::test` (`-rf`), and may print the summary before
        // the failures it names (with a coverage report).
        let Some(rest) = t
            .strip_prefix("FAILED ")
            .or_else(|| t.strip_prefix("FAIL "))
            .or_else(|| t.strip_prefix("ERROR "))
        else {
            return t.is_empty()
                || ["SKIPPED ", "XFAIL ", "XPASS ", "PASSED ", "XPASSED "]
                    .iter()
                    .any(|p| t.starts_with(p));
        };
        let nodeid = rest.split(" - ").next().unwrap_or(rest).trim();
        if let Some((_, name)) = nodeid.split_once("::") {
            let short = name.replace("::", ".");
            if let Some(r) = sink.reports_mut().find(|r| {
                r.tool.as_deref() == Some("pytest")
                    && r.test_name.as_deref().map(doctest_name) == Some(&short)
            }) {
                r.test_name = Some(nodeid.to_string());
            } else if let Some((path, line)) = self.line_mode.pop_front()
                && let Some(r) = sink.reports_mut().find(|r| {
                    r.file_path == path && r.line_number as u64 == line && r.test_name.is_none()
                })
            {
                r.test_name = Some(nodeid.to_string());
            } else if self.verbose_ids.len() < MAX_VERBOSE_IDS
                && nodeid.len() <= 512
                && !self.verbose_ids.iter().any(|x| x == nodeid)
            {
                self.verbose_ids.push_back(nodeid.to_string());
            }
        }
        true
    }

    /// A new command of a Travis job runs: the tracebacks it printed before were another
    /// process's, which no unittest summary of the next one speaks for.
    pub fn command_echoed(&mut self) {
        self.bare_keys.clear();
    }

    /// A line of a faulthandler dump: other threads' stacks are passed over, the current
    /// thread's frames (innermost first) are read up to the first in the repository. A line of
    /// no dump ends it.
    fn fatal_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        let Some(f) = &mut self.fatal else {
            return false;
        };
        if f.budget == 0 {
            self.fatal = None;
            return false;
        }
        f.budget -= 1;
        if let Some((path, line)) = faulthandler_frame(t) {
            if !f.current {
                return true;
            }
            if ["/_pytest/", "/pluggy/", "/unittest/"]
                .iter()
                .any(|d| path.contains(d))
            {
                f.runner = true;
                return true;
            }
            if f.runner {
                if sink.is_own_frame(path) {
                    self.fatal = None;
                }
                return true;
            }
            if sink.is_own_frame(path) {
                let f = self.fatal.take().expect("checked");
                sink.emit(
                    f.seq,
                    Finding::new(path, line, BugType::Logic, &f.msg)
                        .test(f.test.as_deref())
                        .conf(0.8)
                        .tool("python"),
                );
            }
            return true;
        }
        if t.starts_with("Current thread 0x") {
            f.current = true;
            return true;
        }
        if !f.current && (t.is_empty() || (t.starts_with("Thread 0x") && l.last == b':')) {
            return true;
        }
        self.fatal = None;
        false
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.bare_keys.clear();
        self.finish_block(sink);
        self.section = Section::None;
        self.tb = None;
        self.unittest_test = None;
        self.unittest_block = false;
        self.unittest_done = false;
        self.line_mode.clear();
        self.verbose_ids.clear();
        self.grouped_file = None;
        self.ruff_header = None;
        self.rootdir = None;
        self.docstyle = None;
    }
}

/// `path.py:line[:col]: …` lines: flake8, ruff (concise), pylint, mypy. Returns true when the
/// line was recognised (reported or deliberately ignored).
pub(crate) fn colon(
    path: &str,
    line: u64,
    col: Option<u64>,
    rest: &str,
    step: &str,
    seq: u64,
    sink: &mut Sink,
) -> bool {
    if rest.starts_with("note:") || rest.starts_with("warning:") {
        return true;
    }
    if let Some(c) = MYPY.captures(rest) {
        let code = c.get(2).map(|m| m.as_str());
        // mypy before 0.700 prints no error code: its import messages say what they are.
        let msg = &c[1];
        let import_msg = code.is_none()
            && (msg.starts_with("Cannot find module named")
                || msg.starts_with("Cannot find implementation or library stub")
                || msg.starts_with("No library stub file for module")
                || msg.starts_with("Library stubs not installed for"));
        let ty = match code {
            Some("import" | "import-not-found" | "import-untyped") => BugType::Import,
            Some("syntax") => BugType::Syntax,
            _ if import_msg => BugType::Import,
            _ => BugType::TypeError,
        };
        sink.emit(
            seq,
            Finding::new(path, line, ty, &c[1])
                .col(col)
                .conf(0.95)
                .tool("mypy")
                .rule(code),
        );
        return true;
    }
    if let Some(c) = LINT.captures(rest) {
        let code = &c[1];
        let pylint = !c[2].is_empty();
        let msg = c[3].trim_start_matches("[*] ");
        let tool = if pylint {
            Some("pylint")
        } else if step.contains("ruff") || c[3].starts_with("[*]") {
            Some("ruff")
        } else if step.contains("flake8") {
            Some("flake8")
        } else {
            None
        };
        let ty = match code {
            "E999" | "E0001" => syntax_or_indent(msg),
            // pylint's import-error / no-name-in-module: the import does not resolve.
            "E0401" | "E0611" if pylint => BugType::Import,
            _ => BugType::Linting,
        };
        // pylint columns are 0-based.
        let col = if pylint { col.map(|c| c + 1) } else { col };
        sink.emit(
            seq,
            Finding::new(path, line, ty, msg)
                .col(col)
                .conf(0.95)
                .tool_opt(tool)
                .rule(Some(code)),
        );
        return true;
    }
    if rest.starts_with('[')
        && let Some(c) = BRACKET.captures(rest)
    {
        let code = &c[1];
        let symbol = c.get(2).map(|m| m.as_str());
        let ty = match (code, symbol) {
            ("invalid-syntax", _) | ("E0001", _) | (_, Some("syntax-error")) => {
                syntax_or_indent(&c[3])
            }
            ("E0401", _) | (_, Some("import-error")) => BugType::Import,
            _ => BugType::Linting,
        };
        sink.emit(
            seq,
            Finding::new(path, line, ty, &c[3])
                .col(col)
                .conf(0.95)
                .tool_opt(step.contains("ruff").then_some("ruff"))
                .rule(Some(code)),
        );
        return true;
    }
    if !rest.starts_with("invalid-syntax")
        && kebab_colon(rest)
        && let Some(c) = KEBAB.captures(rest)
    {
        sink.emit(
            seq,
            Finding::new(
                path,
                line,
                BugType::Linting,
                c[2].trim_start_matches("[*] "),
            )
            .col(col)
            .conf(0.95)
            .tool("ruff")
            .rule(Some(&c[1])),
        );
        return true;
    }
    for prefix in ["SyntaxError: ", "invalid-syntax: "] {
        if let Some(msg) = rest.strip_prefix(prefix) {
            sink.emit(
                seq,
                Finding::new(path, line, syntax_or_indent(msg), msg)
                    .col(col)
                    .conf(0.95)
                    .tool("ruff")
                    .rule(Some("invalid-syntax")),
            );
            return true;
        }
    }
    false
}

/// A parse error whose message speaks of indentation is an indentation error.
pub(crate) fn syntax_or_indent(msg: &str) -> BugType {
    let m = msg.to_ascii_lowercase();
    if m.contains("indentationerror")
        || m.contains("taberror")
        || m.contains("indent")
        || m.contains("inconsistent use of tabs")
    {
        BugType::Indentation
    } else {
        BugType::Syntax
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn tracebacks_a_unittest_run_logged_outside_its_blocks_are_taken_back_by_its_summary() {
        // VisTrails (Travis): the runner logs an optional package's failed import and goes on;
        // unittest's own failures are in its ERROR/FAIL blocks.
        let logged = "ERROR: Could not import module: vistrails.packages.parallelflow.engine_manager\nTraceback (most recent call last):\n  File \"/home/travis/build/VisTrails/VisTrails/vistrails/packages/parallelflow/engine_manager.py\", line 45, in <module>\n    from IPython.parallel import Client\nImportError: cannot import name Client\n";
        let block = "..F..\n======================================================================\nFAIL: testIncorrectURL (vistrails.packages.URL.init.TestDownloadFile)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/home/travis/build/VisTrails/VisTrails/vistrails/packages/URL/init.py\", line 809, in testIncorrectURL\n    self.assertFalse(True)\nAssertionError: True is not false\n\n----------------------------------------------------------------------\n";
        let ran = "Ran 445 tests in 70.302s\n\nFAILED (failures=1)\n";
        let r = parse_str(&format!("{logged}{block}{ran}"), &ParseOptions::default());
        assert_eq!(
            r.iter()
                .map(|r| (r.file_path.as_str(), r.line_number))
                .collect::<Vec<_>>(),
            [("vistrails/packages/URL/init.py", 809)]
        );
        // Without unittest's summary the logged traceback is all there is: it stays; so it
        // does when another command of the Travis job printed it (an install that crashed).
        let r = parse_str(logged, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        let two = format!("{logged}$ python -m unittest discover\n{block}{ran}");
        assert_eq!(parse_str(&two, &ParseOptions::default()).len(), 2);
        // A logged traceback a test's block reaches too is the test's failure (web2py).
        let reached = block.replace(
            "  File \"/home/travis/build/VisTrails/VisTrails/vistrails/packages/URL/init.py\", line 809, in testIncorrectURL\n    self.assertFalse(True)\nAssertionError: True is not false\n",
            "  File \"/home/travis/build/VisTrails/VisTrails/vistrails/packages/parallelflow/engine_manager.py\", line 45, in <module>\n    from IPython.parallel import Client\nImportError: cannot import name Client\n",
        );
        let r = parse_str(&format!("{logged}{reached}{ran}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 45);
    }
    #[test]
    fn a_pytest_blocks_exception_chain_is_reported_at_its_first_link() {
        // pycorrector (Actions): `import kenlm` fails, the handler re-raises a friendlier
        // ImportError; the missing module's import line is the failure.
        let log = "==================================== ERRORS ====================================\n___________________ ERROR collecting tests/detector_test.py ____________________\nImportError while importing test module '/home/runner/work/pycorrector/pycorrector/tests/detector_test.py'.\nTraceback:\npycorrector/detector.py:72: in _initialize_detector\n    import kenlm\nE   ModuleNotFoundError: No module named 'kenlm'\n\nDuring handling of the above exception, another exception occurred:\ntests/detector_test.py:71: in <module>\n    print(i, d.detect(i))\npycorrector/detector.py:74: in _initialize_detector\n    raise ImportError('pycorrector dependencies are not fully installed')\nE   ImportError: pycorrector dependencies are not fully installed\n=========================== short test summary info ============================\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("pycorrector/detector.py", 72, BugType::Import)
        );
        assert!(r[0].message.contains("kenlm"), "{r:?}");
    }
    #[test]
    fn an_exit_handlers_traceback_fails_nothing() {
        // VisTrails (Travis, Python 2): the test runner's atexit cleanup raises after the run.
        let tb = "Traceback (most recent call last):\n  File \"/usr/lib/python2.7/atexit.py\", line 24, in _run_exitfuncs\n    func(*targs, **kargs)\n  File \"/home/travis/build/VisTrails/VisTrails/vistrails/tests/runtestsuite.py\", line 95, in clean\n    if self.isdir(os.path.join(self.test_temp_dir,f)):\nAttributeError: 'NoneType' object has no attribute 'path'\n";
        for head in [
            "Error in atexit._run_exitfuncs:\n",
            "Error in sys.exitfunc:\n",
            "Exception ignored in atexit callback: <function clean at 0x7f>\n",
        ] {
            assert_eq!(
                parse_str(&format!("{head}{tb}"), &ParseOptions::default()),
                vec![],
                "{head}"
            );
        }
        assert_eq!(parse_str(tb, &ParseOptions::default()).len(), 1);
    }
    #[test]
    fn pytest_pyargs_runs_the_installed_package_of_the_repository() {
        // nilearn (Travis): `pytest --pyargs nilearn` runs the tests installed in the
        // virtualenv; the failure's innermost frame is the package's own `surf_plotting.py`.
        let ids = "tests/test_cache_mixin.py::test_cache_shelving <- ../home/travis/virtualenv/python3.6.7/lib/python3.6/site-packages/nilearn/tests/test_cache_mixin.py \x1b[32mPASSED\x1b[0m\n";
        let fail = "=================================== FAILURES ===================================\n___________________________ test_plot_surf_contours ____________________________\n\n    def test_plot_surf_contours():\n>       plot_surf_contours(mesh, parcellation)\n\n/home/travis/virtualenv/python3.6.7/lib/python3.6/site-packages/nilearn/plotting/tests/test_surf_plotting.py:347: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n>           axes.collections[0]._facecolors3d[faces_outside] = color\nE           AttributeError: 'Poly3DCollection' object has no attribute '_facecolors3d'\n\n/home/travis/virtualenv/python3.6.7/lib/python3.6/site-packages/nilearn/plotting/surf_plotting.py:452: AttributeError\n";
        let r = parse_str(&format!("{ids}{fail}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("nilearn/plotting/surf_plotting.py", 452)
        );
        // Without pytest naming the installed package it runs, site-packages is a dependency.
        assert_eq!(parse_str(fail, &ParseOptions::default()), vec![]);
    }
    #[test]
    fn traceback_innermost_repo_frame() {
        let log = "Traceback (most recent call last):\n  File \"/home/runner/work/R/R/main.py\", line 3, in <module>\n    import helpers\n  File \"/home/runner/work/R/R/helpers.py\", line 1, in <module>\n    import requests\n  File \"/opt/hostedtoolcache/Python/3.12/lib/python3.12/x.py\", line 9, in y\n    pass\nModuleNotFoundError: No module named 'requests'\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "helpers.py");
        assert_eq!(r[0].line_number, 1);
        assert_eq!(r[0].error_type, BugType::Import);
    }

    #[test]
    fn a_driver_whose_child_command_failed_is_not_the_failure() {
        // Real (electron's Travis log): the 404 of `apt-get update` is the failure, not the
        // `raise e` of the script that ran it.
        let log = "Traceback (most recent call last):\n  File \"./script/cibuild\", line 129, in <module>\n    sys.exit(main())\n  File \"./script/cibuild\", line 63, in main\n    execute(['sudo', 'apt-get', 'update'])\n  File \"/home/travis/build/electron/electron/script/lib/util.py\", line 174, in execute\n    raise e\nsubprocess.CalledProcessError: Command '['sudo', 'apt-get', 'update']' returned non-zero exit status 100\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // Any other exception of the same driver is its own bug.
        let log = log.replace("subprocess.CalledProcessError", "KeyError");
        assert_eq!(parse_str(&log, &ParseOptions::default()).len(), 1);
    }

    #[test]
    fn a_template_engines_syntax_error_is_syntax_at_the_template() {
        // cookiecutter-django's Travis job (pytest 2.8): Jinja raises on a Django tag in a
        // template the project renders.
        let log = "=================================== FAILURES ===================================\n______________ TestCookiecutterSubstitution.test_celery_enabled _______________\n\ntests/test_cookiecutter_substitution.py:24: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n../../../virtualenv/python2.7.9/lib/python2.7/site-packages/jinja2/environment.py:754: in handle_exception\n    reraise(exc_type, exc_value, tb)\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n>   ???\nE   TemplateSyntaxError: Encountered unknown tag 'load'.\nE     File \"./{{cookiecutter.repo_name}}/templates/bootstrap3/field.html\", line 1\nE       {% load crispy_forms_field %}\n\n./{{cookiecutter.repo_name}}/templates/bootstrap3/field.html:1: TemplateSyntaxError\n==================== 1 failed, 167 passed in 108.46 seconds ====================\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "{{cookiecutter.repo_name}}/templates/bootstrap3/field.html",
                1,
                BugType::Syntax
            )
        );
        assert_eq!(
            super::exception_type("django.template.TemplateSyntaxError"),
            BugType::Syntax
        );
        assert_eq!(super::exception_type("SyntaxWarning"), BugType::Logic);
    }

    #[test]
    fn bare_syntax_and_indentation_errors() {
        let log = "  File \"/home/runner/work/R/R/app.py\", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax\n  File \"app2.py\", line 4\n    x = 1\nIndentationError: unexpected indent\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].error_type),
            ("app.py", BugType::Syntax)
        );
        assert_eq!(
            (r[1].file_path.as_str(), r[1].error_type),
            ("app2.py", BugType::Indentation)
        );
    }

    #[test]
    fn pytest_failure_with_summary() {
        let log = "=================================== FAILURES ===================================\n_________________________________ test_add _________________________________\n\n    def test_add():\n>       assert add(1, 2) == 4\nE       assert 3 == 4\nE        +  where 3 = add(1, 2)\n\ntests/test_calc.py:5: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_calc.py::test_add - assert 3 == 4\n============================== 1 failed in 0.03s ===============================\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "tests/test_calc.py");
        assert_eq!(r[0].line_number, 5);
        assert_eq!(r[0].error_type, BugType::Logic);
        assert_eq!(r[0].message, "assert 3 == 4");
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("tests/test_calc.py::test_add")
        );
    }

    #[test]
    fn pytest_3s_fail_summary_before_the_failures_names_the_node_id() {
        // readchar's Travis job, pytest 3.0.5 with `-rf` and pytest-cov: the summary comes
        // first and reads `FAIL`, not `FAILED`.
        let log = "=========================== short test summary info ============================\nFAIL tests/unit/test_readkey.py::ReadKeyTest::test_page_down\n\n=================================== FAILURES ===================================\n__________________________ ReadKeyTest.test_page_down __________________________\n\nself = <tests.unit.test_readkey.ReadKeyTest testMethod=test_page_down>\n\n    def test_page_down(self):\n>       self.assertEqual(b'\\x1b[6~', b'\\x1b[6')\nE       AssertionError: '\\x1b[6~' != '\\x1b[6'\n\ntests/unit/test_readkey.py:69: AssertionError\n===================== 1 failed, 12 passed in 0.11 seconds ======================\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("tests/unit/test_readkey.py::ReadKeyTest::test_page_down")
        );
        // After the failures, as pytest 3 prints it without a coverage report.
        let (summary, failures) = log.split_at(log.find("\n\n===").unwrap_or(0) + 1);
        let after = format!("{}{summary}", failures.trim_start_matches('\n'));
        let r = parse_str(&after, &ParseOptions::default());
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("tests/unit/test_readkey.py::ReadKeyTest::test_page_down")
        );
    }

    #[test]
    fn a_doctest_that_raised_is_reported_where_its_traceback_raised() {
        // IPython's pytest run in a container without `git` (former fresh10): the doctest's
        // `UNEXPECTED EXCEPTION` traceback reaches `sysinfo.py:60`; pytest then places the
        // failure at the docstring example's line 109. The second test reaches line 60 too.
        let log = "rootdir: /app\n=================================== FAILURES ===================================\n__________________ [ipdoctest] IPython.utils.sysinfo.sys_info __________________\n103 Return useful information about IPython and the system, as a string.\n109         In [2]: print(sys_info())\nUNEXPECTED EXCEPTION: FileNotFoundError(2, 'No such file or directory')\nTraceback (most recent call last):\n  File \"<doctest IPython.utils.sysinfo.sys_info[0]>\", line 1, in <module>\n  File \"/app/IPython/utils/sysinfo.py\", line 120, in sys_info\n    return pprint.pformat(get_sys_info())\n               ^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/app/IPython/utils/sysinfo.py\", line 60, in pkg_commit_hash\n    proc = subprocess.Popen('git rev-parse --short HEAD'.split(' '),\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/usr/lib/python3.11/subprocess.py\", line 1022, in __init__\n    self._execute_child(args, executable, preexec_fn, close_fds,\n  File \"/usr/lib/python3.11/subprocess.py\", line 1899, in _execute_child\n    raise child_exception_type(errno_num, err_msg, err_filename)\nFileNotFoundError: [Errno 2] No such file or directory: 'git'\n/app/IPython/utils/sysinfo.py:109: UnexpectedException\n_____________________________ test_json_getsysinfo _____________________________\n        \"\"\"\n>       json.dumps(sysinfo.get_sys_info())\n                   ^^^^^^^^^^^^^^^^^^^^^^\n\ntests/test_sysinfo.py:17:\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\nIPython/utils/sysinfo.py:60: in pkg_commit_hash\n    proc = subprocess.Popen('git rev-parse --short HEAD'.split(' '),\n=========================== short test summary info ============================\nFAILED IPython/utils/sysinfo.py::IPython.utils.sysinfo.sys_info\nFAILED tests/test_sysinfo.py::test_json_getsysinfo - FileNotFoundError: [Errno 2] No such file or directory: 'git'\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("IPython/utils/sysinfo.py", 60)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("IPython/utils/sysinfo.py::IPython.utils.sysinfo.sys_info")
        );
        // A doctest whose example itself does not compile (joblib's, former fresh7) has no
        // repository frame below it: the example's line stays.
        let log = "rootdir: /home/travis/build/joblib/joblib, inifile: setup.cfg\njoblib/shelf.py::joblib.shelf.shelve_mmap FAILED                         [  0%]\n=================================== FAILURES ===================================\n______________________ [doctest] joblib.shelf.shelve_mmap ______________________\n205         >>> array = np.random.random((10, 10)\nUNEXPECTED EXCEPTION: SyntaxError('unexpected EOF while parsing', ('<doctest joblib.shelf.shelve_mmap[10]>', 1, 34, 'array = np.random.random((10, 10)\\n'))\nTraceback (most recent call last):\n\n  File \"/home/travis/miniconda/envs/testenv/lib/python3.6/doctest.py\", line 1330, in __run\n    compileflags, 1), test.globs)\n\n  File \"<doctest joblib.shelf.shelve_mmap[10]>\", line 1\n\n    array = np.random.random((10, 10)\n\n                                    ^\n\nSyntaxError: unexpected EOF while parsing\n\n/home/travis/build/joblib/joblib/joblib/shelf.py:205: UnexpectedException\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("joblib/shelf.py", 205)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("joblib/shelf.py::joblib.shelf.shelve_mmap")
        );
    }

    #[test]
    fn a_dependency_failing_in_its_module_body_fails_the_repositorys_import() {
        // flax's collection errors (former fresh10): the installed `clu` raises while being
        // imported; every frame past the repository's import line runs a module body.
        let log = "rootdir: /app\n==================================== ERRORS ====================================\n_____________ ERROR collecting examples/wmt/input_pipeline_test.py _____________\nexamples/wmt/input_pipeline_test.py:23: in <module>\n    import input_pipeline\nexamples/wmt/input_pipeline.py:20: in <module>\n    from clu import deterministic_data\n.venv/lib/python3.11/site-packages/clu/deterministic_data.py:79: in <module>\n    tfds.version.__version__)\nE   AttributeError: module 'tensorflow_datasets' has no attribute 'version'\n=========================== short test summary info ============================\nERROR examples/wmt/input_pipeline_test.py - AttributeError: module 'tensorflo...\nERROR examples/wmt/train_test.py - AttributeError: module 'tensorflow_dataset...\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("examples/wmt/input_pipeline.py", 20, BugType::Import)
        );
        // A dependency's function called by the module body is no import failure.
        let called = log.replace(
            "deterministic_data.py:79: in <module>",
            "deterministic_data.py:79: in version",
        );
        let r = parse_str(&called, &ParseOptions::default());
        assert_eq!(r[0].error_type, BugType::Logic, "{r:?}");
    }

    #[test]
    fn a_section_rule_a_terminal_overwrote_with_the_header_run_on() {
        // nextstrain/cli's paste (former fresh11): tmux's status text over the rule's end.
        let log = "=============================================================== FAILURES =============================================16:31:21 [20/3280]___________________________________________ pytest_generated_doc[devel/generate-command-doc] ___________________________________________\n\nprog = 'devel/generate-command-doc'\n\n    def pytest_generated_doc(prog):\n>       assert result.returncode == 0, f\"{result.args!r} exited with errors\"\nE       AssertionError: [PosixPath('/Users/genehack/nextstrain/cli/devel/generate-command-doc'), '--check', '--diff'] exited with errors\nE       assert 1 == 0\n\ntests/doc.py:18: AssertionError\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("tests/doc.py", 18)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("pytest_generated_doc[devel/generate-command-doc]")
        );
        assert!(super::fused_section("==== warnings summary ====x___ a ___").is_none());
        assert!(super::fused_section("==== FAILURES ====________").is_none());
    }

    #[test]
    fn a_dependency_module_body_that_calls_on_before_raising_is_an_import_failure() {
        // mccabe's tests in Fedora's build (former fresh11): `import hypothesmith` runs the
        // installed hypothesis' module body, which touches `typing.ByteString`; the innermost
        // frame is typing's module `__getattr__`, past three module bodies.
        let log = "==================================== ERRORS ====================================\n_______________________ ERROR collecting test_mccabe.py ________________________\ntest_mccabe.py:11: in <module>\n    import hypothesmith\n/usr/lib/python3.14/site-packages/hypothesmith/__init__.py:3: in <module>\n    from hypothesmith.cst import from_node\n/usr/lib/python3.14/site-packages/hypothesmith/cst.py:20: in <module>\n    from hypothesis.strategies._internal.types import _global_type_lookup\n/usr/lib/python3.14/site-packages/hypothesis/strategies/_internal/types.py:708: in <module>\n    typing.ByteString: st.binary(),  # type: ignore\n/usr/lib64/python3.14/typing.py:3831: in __getattr__\n    raise AttributeError(f\"module {__name__!r} has no attribute {attr!r}\")\nE   AttributeError: module 'typing' has no attribute 'ByteString'\n=========================== short test summary info ============================\nERROR test_mccabe.py - AttributeError: module 'typing' has no attribute 'Byte...\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("test_mccabe.py", 11, BugType::Import)
        );
    }

    #[test]
    fn linters_and_mypy() {
        let log = "app.py:1:8: F401 [*] `os` imported but unused\nsrc/x.py:3:0: C0114: Missing module docstring (missing-module-docstring)\napp.py:5: error: Incompatible return value type (got \"str\", expected \"int\")  [return-value]\napp.py:5: note: see here\napp.py:2: error: Cannot find implementation or library stub for module named \"foo\"  [import-not-found]\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0].rule.as_deref(), Some("F401"));
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[1].column, Some(1));
        assert_eq!(r[2].error_type, BugType::TypeError);
        assert_eq!(r[3].error_type, BugType::Import);
    }

    // Lines from real Travis logs of the corpus (fixtures/corpus/real/python/pyjs-travis-*).

    #[test]
    fn verbose_node_ids_and_fixture_errors() {
        let log = "tests/rules/test_nixos_cmd_not_found.py::test_match[command0] FAILED     [ 72%]\r\n==================================== ERRORS ====================================\n____ ERROR at setup of test_get_new_command[command0-nix-env -iA nixos.vim] ____\nfile /home/travis/build/nvbn/thefuck/tests/rules/test_nixos_cmd_not_found.py, line 21\n  def test_get_new_command(mocker, command, new_command, packages):\nE       fixture 'packages' not found\n>       use 'pytest --fixtures [testpath]' for help on them.\n\n/home/travis/build/nvbn/thefuck/tests/rules/test_nixos_cmd_not_found.py:21\n=================================== FAILURES ===================================\n_____________________________ test_match[command0] _____________________________\n\n/home/travis/build/nvbn/thefuck/tests/rules/test_nixos_cmd_not_found.py:9: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n/opt/python/3.7.1/lib/python3.7/unittest/mock.py:1386: in start\nE           AttributeError: <module 'thefuck.rules.nixos_cmd_not_found'> does not have the attribute 'which'\n\n/opt/python/3.7.1/lib/python3.7/unittest/mock.py:1229: AttributeError\n=== 4 failed, 1609 passed, 16 skipped, 4 warnings, 2 error in 456.94 seconds ===\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].line_number, 21);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("test_get_new_command[command0-nix-env -iA nixos.vim]")
        );
        assert_eq!(r[1].line_number, 9);
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("tests/rules/test_nixos_cmd_not_found.py::test_match[command0]")
        );
    }

    #[test]
    fn xdist_progress_lines_give_node_ids() {
        let ids = [
            "[gw0] [ 20%] FAILED test_dist_tests_with_crash.py::test_fail0 ",
            "tests/shells/test_generic.py::TestGeneric::test_app_alias FAILED         [ 96%]",
        ];
        for line in ids {
            let c = super::VERBOSE_FAILED.captures(line.trim()).expect(line);
            assert!(c.get(1).or(c.get(2)).is_some());
        }
        assert!(
            super::VERBOSE_FAILED
                .captures("tests/x.py::test_y PASSED [ 1%]")
                .is_none()
        );
    }

    #[test]
    fn unittest_blocks_name_the_method_and_report_one_chained_failure() {
        // ytdl-org/youtube-dl (LogSage, Actions): a chained exception under one ERROR header;
        // the root cause's frame is the failure, the re-raise is its chain.
        let log = "======================================================================\n\
ERROR: test_bitwise_operators_typecast (test.test_jsinterp.TestJSInterpreter)\n\
----------------------------------------------------------------------\n\
Traceback (most recent call last):\n  \
File \"/home/runner/work/youtube-dl/youtube-dl/youtube_dl/jsinterp.py\", line 80, in wrapped\n    \
return op(zeroise(a), zeroise(b)) & 0xffffffff\n\
TypeError: unsupported operand type(s) for <<: 'float' and 'int'\n\
\n\
During handling of the above exception, another exception occurred:\n\
\n\
Traceback (most recent call last):\n  \
File \"/home/runner/work/youtube-dl/youtube-dl/test/test_jsinterp.py\", line 462, in test_bitwise_operators_typecast\n    \
self._test('function f(){return 0.0 << null}', 0)\n  \
File \"/home/runner/work/youtube-dl/youtube-dl/youtube_dl/jsinterp.py\", line 585, in _operator\n    \
raise self.Exception('Failed to evaluate')\n\
youtube_dl.jsinterp.Exception: Failed to evaluate 0.0 << None\n\
\n\
======================================================================\n\
FAIL: test_add (tests.test_calc.CalcTest.test_add)\n\
----------------------------------------------------------------------\n\
Traceback (most recent call last):\n  \
File \"/home/runner/work/R/R/tests/test_calc.py\", line 9, in test_add\n    \
self.assertEqual(1, 2)\n\
AssertionError: 1 != 2\n\
\n\
======================================================================\n\
ERROR: sahi.model (unittest.loader._FailedTest)\n\
----------------------------------------------------------------------\n\
ImportError: Failed to import test module: sahi.model\n\
Traceback (most recent call last):\n  \
File \"/home/runner/work/sahi/sahi/sahi/model.py\", line 13, in <module>\n    \
from sahi.utils.import_utils import is_torch_available\n\
ImportError: cannot import name 'is_torch_available'\n\
\n\
----------------------------------------------------------------------\n\
Ran 3 tests in 0.013s\n\
Traceback (most recent call last):\n  \
File \"/home/runner/work/R/R/run.py\", line 4, in <module>\n    \
main()\n\
RuntimeError: after the run\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "youtube_dl/jsinterp.py",
                    80,
                    Some("test.test_jsinterp.TestJSInterpreter.test_bitwise_operators_typecast")
                ),
                (
                    "tests/test_calc.py",
                    9,
                    Some("tests.test_calc.CalcTest.test_add")
                ),
                ("sahi/model.py", 13, None),
                ("run.py", 4, None),
            ]
        );
    }

    #[test]
    fn an_exception_raised_by_the_import_system_is_an_import_error() {
        // mckinsey/vizro (BugSwarm): collecting a conftest whose import fails inside importlib
        // with a KeyError; the same KeyError raised by a library frame stays a logic error.
        let head = "==================================== ERRORS ====================================\n______ ERROR collecting tests/unit/nodes ______\n../../.local/lib/python3.9/site-packages/_pytest/assertion/rewrite.py:178: in exec_module\n    exec(co, module.__dict__)\ntests/unit/nodes/conftest.py:6: in <module>\n    from vizro_ai.dashboard.plan import x\n<frozen importlib._bootstrap>:1007: in _find_and_load\n    ???\n<frozen importlib._bootstrap_external>:1235: in _get_parent_path\n    ???\n";
        let lib = "../../.local/lib/python3.9/site-packages/lib/core.py:12: in get\n    ???\n";
        let tail = "E   KeyError: 'vizro_ai'\n=========================== short test summary info ============================\n";
        let r = parse_str(&format!("{head}{tail}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("tests/unit/nodes/conftest.py", 6, BugType::Import)
        );
        let r = parse_str(&format!("{head}{lib}{tail}"), &ParseOptions::default());
        assert_eq!(r[0].error_type, BugType::Logic);
    }

    #[test]
    fn the_repositorys_own_egg_maps_back_through_setuptools_copies() {
        // numpy's `setup.py install` into a venv, then pytest on the installed egg.
        let egg = "../../builds/venv/lib/python3.8/site-packages/numpy-1.24.0.dev0+311.gdfe5f9177-py3.8-linux-x86_64.egg";
        let failure = format!(
            "=================================== FAILURES ===================================\n_____________________________ TestSetOps.test_isin _____________________________\n\n{egg}/numpy/lib/tests/test_arraysetops.py:216: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n>           raise ValueError(\nE           ValueError: Invalid kind: auto.\n\n{egg}/numpy/lib/arraysetops.py:629: ValueError\n=========================== short test summary info ============================\n"
        );
        let copy = "copying numpy/lib/arraysetops.pyi -> build/bdist.linux-x86_64/egg/numpy/lib/\n";
        let r = crate::parse_str(&format!("{copy}{failure}"), &crate::ParseOptions::default());
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("numpy/lib/arraysetops.py", 629)
        );
        // Without the build's word the installed copy is a dependency like any other.
        assert!(crate::parse_str(&failure, &crate::ParseOptions::default()).is_empty());
        // A src layout: the package lives under `src/`.
        let log = "copying src/foo/a.py -> build/lib/foo\nTraceback (most recent call last):\n  File \"/home/runner/work/R/R/.venv/lib/python3.12/site-packages/foo/b.py\", line 3, in f\n    g()\nZeroDivisionError: division by zero\n";
        let r = crate::parse_str(log, &crate::ParseOptions::default());
        assert_eq!(r[0].file_path, "src/foo/b.py");
        // A copy from outside the checkout, or into another build directory, teaches nothing.
        let mut sink = crate::sink::Sink::new(None);
        for line in [
            "/tmp/x/foo/a.py -> build/lib/foo",
            "../foo/a.py -> build/lib/foo",
            "docs/conf.py -> build/sphinx/foo",
            "src/foo/a.py -> build/lib/bar",
        ] {
            super::setuptools_copy(line, &mut sink);
        }
        assert!(!sink.is_own_frame("/x/site-packages/foo/a.py"));
        assert!(!sink.is_own_frame("/x/site-packages/bar/a.py"));
    }

    #[test]
    fn nose_names_a_test_function_by_its_dotted_path() {
        let log = "FAIL: test.rosdistro_verify_test.test_verify_files_identical\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/opt/hostedtoolcache/Python/3.8.12/x64/lib/python3.8/site-packages/nose/case.py\", line 198, in runTest\n    self.test(*self.arg)\n  File \"/home/runner/work/rosdistro/rosdistro/test/rosdistro_verify_test.py\", line 45, in test_verify_files_identical\n    assert verify_files_identical(index_url), fold.get_message()\nAssertionError: \n";
        let r = crate::parse_str(log, &crate::ParseOptions::default());
        assert_eq!(
            (
                r[0].file_path.as_str(),
                r[0].line_number,
                r[0].test_name.as_deref()
            ),
            (
                "test/rosdistro_verify_test.py",
                45,
                Some("test.rosdistro_verify_test.test_verify_files_identical")
            )
        );
        for t in [
            "ERROR: pip.exe",
            "FAIL: tests.helpers",
            "ERROR: Failure: ImportError (No module named x)",
        ] {
            assert!(!super::NOSE_FUNCTION.is_match(t), "{t}");
        }
        assert!(super::NOSE_FUNCTION.is_match("FAIL: tests.test_x.check_test"));
    }

    #[test]
    fn a_generated_unittest_method_name_with_its_arguments_is_named_by_its_identifier() {
        // package_control_channel's tests build one method per repository file and set its
        // `_testMethodName` to the call; unittest prints it before the class.
        let log = "======================================================================\nFAIL: test_repository_package_names('./repository/m.json', ...) (tests.test.DefaultRepositoryTests)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/home/travis/build/wbond/package_control_channel/tests/test.py\", line 100, in wrapper\n    return method(self, *params)\n  File \"/home/travis/build/wbond/package_control_channel/tests/test.py\", line 271, in _test_repository_package_names\n    \"Packages must be sorted alphabetically (by name)\")\nAssertionError: Lists differ: ['M3U Syntax'] != ['M68k Assembly']\n\n----------------------------------------------------------------------\nRan 160 tests in 0.481s\n\nFAILED (failures=1)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("tests/test.py", 271)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("tests.test.DefaultRepositoryTests.test_repository_package_names")
        );
        // A subtest's parameters follow the class, and are no part of the method.
        let sub = "FAIL: test_even (tests.test_n.NumbersTest) (i=1)\n";
        let c = super::UNITTEST
            .captures(sub)
            .map(|c| (c[1].to_string(), c[3].to_string()));
        assert_eq!(
            c,
            Some((
                "test_even".to_string(),
                "tests.test_n.NumbersTest".to_string()
            ))
        );
    }

    #[test]
    fn unittest_headers_need_a_test_id() {
        // TSLint's `ERROR: path:l:c` is not a unittest header.
        let log = "ERROR: /home/travis/build/microsoft/TypeScript/src/compiler/checker.ts:20269:48 boolean-trivia Tag argument with parameter name\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].tool.as_deref(), Some("tslint"));
        assert!(super::UNITTEST.is_match("FAIL: test_add (tests.test_calc.CalcTest)"));
    }

    // ruff's own CLI snapshots (astral-sh/ruff, crates/ruff/tests/cli/snapshots).
    #[test]
    fn ruff_grouped_pylint_and_rule_name_formats() {
        let log = "----- stdout -----\ninput.py:\n  1:8 F401 [*] `os` imported but unused\n  2:5 F821 Undefined name `y`\n  3:1 invalid-syntax: Cannot use `match` statement on Python 3.9 (syntax was added in Python 3.10)\n\nFound 3 errors.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].rule.as_deref(), Some("F401"));
        assert_eq!(r[0].message, "`os` imported but unused");
        assert_eq!(r[2].error_type, BugType::Syntax);
        let log = "input.py:1: [unused-import] `os` imported but unused\ninput.py:2: [F821] Undefined name `y`\nsrc/test/resources/python_src/pypackage/pymodule.py:33: [E0401(import-error), ] Unable to import 'deadbeef'\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].rule.as_deref(), Some("unused-import"));
        assert_eq!(r[2].error_type, BugType::Import);
        let log = "unused-import: [*] `os` imported but unused\n --> input.py:1:8\n  |\n1 | import os  # F401\n  |        ^^\n\nundefined-name: Undefined name `y`\n --> input.py:2:5\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[1].line_number, r[1].rule.as_deref()),
            (2, Some("undefined-name"))
        );
        // A fix summary is not a finding.
        let log = "Fixed 1 error:\n- input.py:\n    1 × F401 (unused-import)\n\nFound 1 error (1 fixed, 0 remaining).\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    // pytest's documentation (pytest-dev/pytest doc/en), output indented under rst directives.
    #[test]
    fn a_rootdir_inside_the_checkout_prefixes_relative_paths_and_long_summaries_go_on() {
        // markitdown's `cd packages/markitdown; hatch test` (LogSage, shortened).
        let log = "rootdir: /home/runner/work/markitdown/markitdown/packages/markitdown\n=================================== FAILURES ===================================\n____________________ test_output_to_stdout[test_vector6] _____________________\n\n    def test_output_to_stdout(shared_tmp_dir, test_vector) -> None:\n>       assert 0\nE       assert 0\n\ntests/test_cli_vectors.py:67: AssertionError\n_____________________ test_convert_local[test_vector9] ______________________\n\n>       assert 1 == 2\nE       AssertionError: assert 1 == 2\n\ntests/test_module_vectors.py:69: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_cli_vectors.py::test_output_to_stdout[test_vector6] - assert 'a' in 'b'\n +  where 'b' = f()\nFAILED tests/test_module_vectors.py::test_convert_local[test_vector9] - AssertionError: assert 1 == 2\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "packages/markitdown/tests/test_cli_vectors.py"
        );
        assert_eq!(
            r[1].file_path,
            "packages/markitdown/tests/test_module_vectors.py"
        );
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("tests/test_module_vectors.py::test_convert_local[test_vector9]")
        );
    }

    #[test]
    fn faulthandler_dump_at_the_current_threads_innermost_repository_frame() {
        // spyder-ide/spyder's Actions job (BugSwarm), timestamps cut: a Qt test segfaults; the
        // other threads' stacks come first. Its retry crashes in setup, where the only
        // repository frames are the launcher's (`runtests.py`), outside pytest's own.
        let log = "spyder/app/tests/test_mainwindow.py::test_varexp_rename Fatal Python error: Segmentation fault\n\nThread 0x00007f2c1b977700 (most recent call first):\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/threading.py\", line 300 in wait\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/threading.py\", line 552 in wait\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/jupyter_client/channels.py\", line 134 in _async_run\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/asyncio/tasks.py\", line 249 in __step\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/nest_asyncio.py\", line 195 in step\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/asyncio/events.py\", line 88 in _run\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/nest_asyncio.py\", line 119 in _run_once\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/nest_asyncio.py\", line 83 in run_until_complete\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/jupyter_client/channels.py\", line 112 in run\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/threading.py\", line 926 in _bootstrap_inner\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/threading.py\", line 890 in _bootstrap\n\nThread 0x00007f2c1e97a700 (most recent call first):\nCurrent thread 0x00007f2cf0a08740 (most recent call first):\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/qt_compat.py\", line 156 in exec\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/wait_signal.py\", line 51 in wait\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/qtbot.py\", line 435 in wait\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/qtbot.py\", line 528 in waitUntil\n  File \"/home/runner/work/spyder/spyder/spyder/app/tests/test_mainwindow.py\", line 3375 in test_varexp_rename\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/python.py\", line 183 in pytest_pyfunc_call\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("spyder/app/tests/test_mainwindow.py", 3375)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("spyder/app/tests/test_mainwindow.py::test_varexp_rename")
        );
        assert_eq!(r[0].message, "Fatal Python error: Segmentation fault");
        let setup = "spyder/app/tests/test_mainwindow.py::test_varexp_rename Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007fc2478fc740 (most recent call first):\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/plugin.py\", line 182 in _process_events\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pytestqt/plugin.py\", line 142 in pytest_runtest_setup\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_callers.py\", line 55 in _multicall\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_manager.py\", line 80 in _hookexec\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_hooks.py\", line 265 in __call__\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/runner.py\", line 255 in <lambda>\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/runner.py\", line 311 in from_call\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/runner.py\", line 255 in call_runtest_hook\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/flaky/flaky_pytest_plugin.py\", line 138 in call_and_report\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/runner.py\", line 120 in runtestprotocol\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/runner.py\", line 109 in pytest_runtest_protocol\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/flaky/flaky_pytest_plugin.py\", line 94 in pytest_runtest_protocol\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_callers.py\", line 39 in _multicall\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_manager.py\", line 80 in _hookexec\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_hooks.py\", line 265 in __call__\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/main.py\", line 348 in pytest_runtestloop\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_callers.py\", line 39 in _multicall\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_manager.py\", line 80 in _hookexec\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_hooks.py\", line 265 in __call__\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/main.py\", line 323 in _main\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/main.py\", line 269 in wrap_session\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/main.py\", line 316 in pytest_cmdline_main\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_callers.py\", line 39 in _multicall\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_manager.py\", line 80 in _hookexec\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/pluggy/_hooks.py\", line 265 in __call__\n  File \"/usr/share/miniconda3/envs/test/lib/python3.7/site-packages/_pytest/config/__init__.py\", line 163 in main\n  File \"runtests.py\", line 52 in run_pytest\n  File \"runtests.py\", line 69 in main\n  File \"runtests.py\", line 73 in <module>\nSegmentation fault (core dumped)\n";
        assert!(parse_str(setup, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn a_test_name_wider_than_the_terminal_has_no_underscores() {
        // hypothesis/h's tox run (BugSwarm): ` Class.test[exp-expiry] ` opens the next block.
        let log = "=================================== FAILURES ===================================\r\n__________ TestVerifiedJWTGrantToken.test_init_raises_for_invalid_aud __________\r\n\r\nself = <jwt_grant_token_test.TestVerifiedJWTGrantToken object at 0x7efee3f94dd0>\r\nclaims = {'aud': 'different-audience', 'exp': 1500887757, 'iss': 'test-issuer', 'nbf': 1500887457, ...}\r\n\r\n    def test_init_raises_for_invalid_aud(self, claims):\r\n        claims['aud'] = 'different-audience'\r\n        jwttok = jwt_token(claims)\r\n    \r\n        with pytest.raises(InvalidJWTGrantTokenClaimError) as exc:\r\n            VerifiedJWTGrantToken(jwttok, 'top-secret', 'test-audience')\r\n    \r\n>       assert exc.value.description == 'Invalid grant token audience (aud).'\r\nE       AssertionError: assert 'Invalid clai... grant token.' == 'Invalid grant...dience (aud).'\r\nE         - Invalid claim 'aud' (audience) in grant token.\r\nE         + Invalid grant token audience (aud).\r\n\r\ntests/h/oauth/jwt_grant_token_test.py:137: AssertionError\r\n TestVerifiedJWTGrantToken.test_init_raises_for_invalid_timestamp_types[exp-expiry] \r\n\r\nself = <jwt_grant_token_test.TestVerifiedJWTGrantToken object at 0x7efee4351b90>\r\nclaims = {'aud': 'test-audience', 'exp': 'wut', 'iss': 'test-issuer', 'nbf': 1500887457, ...}\r\nclaim = 'exp', description = 'expiry'\r\n\r\n    @pytest.mark.parametrize('claim,description', [\r\n        ['exp', 'expiry'],\r\n        ['nbf', 'start time'],\r\n    ])\r\n    def test_init_raises_for_invalid_timestamp_types(self, claims, claim, description):\r\n        claims[claim] = 'wut'\r\n        jwttok = jwt_token(claims)\r\n    \r\n        with pytest.raises(InvalidJWTGrantTokenClaimError) as exc:\r\n            VerifiedJWTGrantToken(jwttok, 'top-secret', 'test-audience')\r\n    \r\n>       assert exc.value.description == 'Invalid grant token {} ({}).'.format(description, claim)\r\nE       AssertionError: assert 'Invalid clai... grant token.' == 'Invalid grant...expiry (exp).'\r\nE         - Invalid claim 'exp' (expiry) in grant token.\r\nE         + Invalid grant token expiry (exp).\r\n\r\ntests/h/oauth/jwt_grant_token_test.py:150: AssertionError\r\n";
        let r = parse_str(log, &ParseOptions::default());
        let rows: Vec<_> = r
            .iter()
            .map(|b| (b.line_number, b.test_name.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    137,
                    Some("TestVerifiedJWTGrantToken.test_init_raises_for_invalid_aud")
                ),
                (
                    150,
                    Some(
                        "TestVerifiedJWTGrantToken.test_init_raises_for_invalid_timestamp_types[exp-expiry]"
                    )
                ),
            ],
            "{r:?}"
        );
        assert!(!super::is_test_id(
            "self = <jwt_grant_token_test.X object at 0x7efee4351b90>"
        ));
    }

    #[test]
    fn a_long_test_name_may_have_one_underscore_on_one_side_only() {
        // hypothesis/h's tox run (BugSwarm): pytest centres the parametrized name, leaving `_ `
        // before it and `__` after.
        let log = "=================================== FAILURES ===================================\r\n__________ TestJWTGrantToken.test_issuer_raises_for_missing_iss_claim __________\r\n\r\nself = <jwt_grant_token_test.TestJWTGrantToken object at 0x7efee3ad9b90>\r\n\r\n    def test_issuer_raises_for_missing_iss_claim(self):\r\n        jwttok = jwt_token({'foo': 'bar'})\r\n        grant_token = JWTGrantToken(jwttok)\r\n    \r\n        with pytest.raises(MissingJWTGrantTokenClaimError) as exc:\r\n            grant_token.issuer\r\n    \r\n>       assert exc.value.description == 'Missing grant token issuer (iss).'\r\nE       AssertionError: assert 'Missing clai... grant token.' == 'Missing grant...issuer (iss).'\r\nE         - Missing claim 'iss' (issuer) from grant token.\r\nE         + Missing grant token issuer (iss).\r\n\r\ntests/h/oauth/jwt_grant_token_test.py:51: AssertionError\r\n_ TestVerifiedJWTGrantToken.test_init_raises_for_missing_claims[aud-audience] __\r\n\r\nself = <jwt_grant_token_test.TestVerifiedJWTGrantToken object at 0x7efee267f490>\r\nclaims = {'exp': 1500887757, 'iss': 'test-issuer', 'nbf': 1500887457, 'sub': 'test-subject'}\r\nclaim = 'aud', description = 'audience'\r\n\r\n    @pytest.mark.parametrize('claim,description', [\r\n        ['aud', 'audience'],\r\n        ['exp', 'expiry'],\r\n        ['nbf', 'start time'],\r\n    ])\r\n    def test_init_raises_for_missing_claims(self, claims, claim, description):\r\n        del claims[claim]\r\n        jwttok = jwt_token(claims)\r\n    \r\n        with pytest.raises(InvalidGrantError) as exc:\r\n            VerifiedJWTGrantToken(jwttok, 'top-secret', 'test-audience')\r\n    \r\n>       assert exc.value.description == 'Missing grant token {} ({}).'.format(description, claim)\r\nE       AssertionError: assert 'Missing clai... grant token.' == 'Missing grant...dience (aud).'\r\nE         - Missing claim 'aud' (audience) from grant token.\r\nE         + Missing grant token audience (aud).\r\n\r\ntests/h/oauth/jwt_grant_token_test.py:128: AssertionError\r\n";
        let r = parse_str(log, &ParseOptions::default());
        let rows: Vec<_> = r
            .iter()
            .map(|b| (b.line_number, b.test_name.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    51,
                    Some("TestJWTGrantToken.test_issuer_raises_for_missing_iss_claim")
                ),
                (
                    128,
                    Some(
                        "TestVerifiedJWTGrantToken.test_init_raises_for_missing_claims[aud-audience]"
                    )
                ),
            ],
            "{r:?}"
        );
    }

    #[test]
    fn a_long_test_name_has_a_single_underscore_each_side() {
        // pandas' numba test (LogSage), shortened: the innermost repository frame of pytest's
        // short middle entries, not each entry.
        let log = "=================================== FAILURES ===================================\n_ TestEngine.test_numba_vs_cython_rolling_methods[False-True-True-arithmetic_numba_supported_operators3-1-data0] _\n\n>       result = getattr(roll, method)(\n\npandas/tests/window/test_numba.py:186: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \npandas/core/window/rolling.py:2286: in max\n    return super().max(\npandas/core/_numba/executor.py:236: in looper_wrapper\n    for i, na_pos in na_positions.items():\n<frozen _collections_abc>:894: in __iter__\n    ???\n../../../micromamba/envs/test/lib/python3.12/site-packages/numba/typed/typeddict.py:180: in __getitem__\n    return _getitem(self, key)\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n>   raise KeyError()\nE   KeyError\n\n../../../micromamba/envs/test/lib/python3.12/site-packages/numba/typed/dictobject.py:778: KeyError\n=========================== short test summary info ============================\nFAILED pandas/tests/window/test_numba.py::TestEngine::test_numba_vs_cython_rolling_methods[False-True-True-arithmetic_numba_supported_operators3-1-data0] - KeyError\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("pandas/core/_numba/executor.py", 236)
        );
        assert!(
            r[0].test_name
                .as_deref()
                .is_some_and(|t| t.starts_with("pandas/tests/window/test_numba.py::TestEngine::"))
        );
    }

    #[test]
    fn indented_output_rootdir_and_other_outcomes_in_the_summary() {
        let log = "    $ pytest\n    rootdir: /home/sweet/project\n    ==================================== ERRORS ====================================\n    _______________________ ERROR at setup of test_root ________________________\n    file /home/sweet/project/b/test_error.py, line 1\n      def test_root(db):  # no db here, will error out\n    E       fixture 'db' not found\n\n    /home/sweet/project/b/test_error.py:1\n    ================================= FAILURES =================================\n    _______________________________ test_fail __________________________________\n\n        def test_fail():\n    >       assert 0\n    E       assert 0\n\n    test_example.py:14: AssertionError\n    ========================= short test summary info ==========================\n    SKIPPED [1] test_example.py:22: skipping this test\n    XFAIL test_example.py::test_xfail - xfailing this test\n    FAILED test_example.py::test_fail - assert 0\n    ERROR b/test_error.py::test_root\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("b/test_error.py", 1)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("b/test_error.py::test_root")
        );
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("test_example.py::test_fail")
        );
    }

    // pydocstyle (reviewdog/errorformat fmts/testdata/pydocstyle.in).
    #[test]
    fn pytest_run_below_its_rootdir_is_placed_by_its_warnings() {
        // aws/aws-cli's Actions job 2424147467: `scripts/ci/run-tests` runs pytest from `tests/`.
        let log = "rootdir: /home/runner/work/aws-cli/aws-cli\n=================================== FAILURES ===================================\n_______________ TestCompletions.test_switch_to_multicolumn_mode ________________\n\n    def test_switch_to_multicolumn_mode(self, app_runner, prompter):\n>           assert app_runner.app.multi_column\nE           assert False\n\nfunctional/autoprompt/test_prompttoolkit.py:313: AssertionError\n=============================== warnings summary ===============================\n../../../../../../opt/hostedtoolcache/Python/3.8.12/x64/lib/python3.8/site-packages/jsonschema/compat.py:6\n  /opt/hostedtoolcache/Python/3.8.12/x64/lib/python3.8/site-packages/jsonschema/compat.py:6: DeprecationWarning: Using or importing the ABCs\n\nunit/test_clidriver.py:774\n  /home/runner/work/aws-cli/aws-cli/tests/unit/test_clidriver.py:774: DeprecationWarning: invalid escape sequence \\.\n\n-- Docs: https://docs.pytest.org/en/stable/warnings.html\n=========================== short test summary info ============================\nFAILED functional/autoprompt/test_prompttoolkit.py::TestCompletions::test_switch_to_multicolumn_mode\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            vec![("tests/functional/autoprompt/test_prompttoolkit.py", 313)]
        );
    }

    #[test]
    fn a_failure_logged_before_its_unittest_block_takes_the_tests_name() {
        // facebookresearch/d2go's Actions job 2511451902: detectron2's training loop logs the
        // exception, then unittest's `FAIL:` block repeats the same traceback.
        let tb = "Traceback (most recent call last):\n  File \"/home/runner/work/d2go/d2go/tests/runner/test_runner_default_runner.py\", line 45, in forward\n    ret = self.bn(ret)\n  File \"/usr/share/miniconda/envs/x/lib/python3.8/site-packages/torch/ao/quantization/utils.py\", line 292, in check_min_max_valid\n    assert min_val <= max_val\nAssertionError: min -2.6e-10 should be less than max -7.0e-07\n";
        let log = format!(
            "ERROR [06/16 20:13:41 d2.engine.train_loop]: Exception during training:\n{tb}FAIL\n\n======================================================================\nFAIL: test_qat (runner.test_runner_default_runner.TestDefaultRunner)\nCheck that the qat hook is used and updates stats\n----------------------------------------------------------------------\n{tb}\n----------------------------------------------------------------------\nRan 175 tests in 156.560s\n\nFAILED (failures=1)\n"
        );
        let r = parse_str(&log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("runner.test_runner_default_runner.TestDefaultRunner.test_qat")
        );
    }

    #[test]
    fn an_exception_python_ignored_is_no_failure() {
        // joblib's Travis job 334185447: a `__del__` at interpreter shutdown, after the run.
        let log = "============== 1 failed, 983 passed, 64 skipped in 11.54 seconds ===============\nException ignored in: <bound method JoblibShelf.__del__ of JoblibShelf(location=/tmp/joblib-shelf-2739)>\nTraceback (most recent call last):\n  File \"/home/travis/build/joblib/joblib/joblib/shelf.py\", line 78, in __del__\nTypeError: 'NoneType' object is not callable\nmake: *** [test] Error 1\n";
        assert_eq!(parse_str(log, &ParseOptions::default()), vec![]);
        let raised = log.replace("Exception ignored in: ", "Raised in: ");
        assert_eq!(parse_str(&raised, &ParseOptions::default()).len(), 1);
    }

    #[test]
    fn mypy_without_error_codes_names_its_import_errors() {
        // Abjad's Travis job 375673938 runs mypy 0.600.
        let log = "abjad/cli/__init__.py:5: error: Cannot find module named 'abjad.cli.DoctestScript'\nabjad/x.py:7: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r.iter().map(|r| (r.line_number, r.error_type)).collect();
        assert_eq!(got, vec![(5, BugType::Import), (7, BugType::TypeError)]);
    }

    #[test]
    fn pydocstyle_two_line_findings() {
        let log = "test.py:1 at module level:\n        D100: Missing docstring in public module\ntest.py:27 in public function `get_user`:\n        D300: Use \"\"\"triple double quotes\"\"\" (found '''-quotes)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[1].line_number, r[1].rule.as_deref()), (27, Some("D300")));
    }
}
