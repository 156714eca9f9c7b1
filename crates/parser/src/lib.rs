//! Deterministic CI log parser (the Parser of `execution-contract.md`).
//!
//! Turns a raw build or job log into [`BugReport`]s: repo-relative file, line, one of six
//! [`BugType`]s, the tool's own message, the failing test and a confidence.
//!
//! Boundary rules, from the contract:
//! - **Deterministic**: the same log always yields the same reports, in the same order.
//! - **No LLM**, no network, no file system: regex and heuristics over the bytes it is given.
//! - It never emits a path outside the repository, and never panics, hangs or grows its memory
//!   with the size of the log.
//!
//! # Usage
//!
//! ```
//! use ci_medic_parser::{ParseOptions, Parser, parse_str, sarif};
//!
//! let log = "2025-04-16T01:48:17.7662819Z src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n";
//! let reports = parse_str(log, &ParseOptions::default());
//! assert_eq!(reports[0].file_path, "src/a.ts");
//! assert_eq!(reports[0].rule.as_deref(), Some("TS2322"));
//!
//! // Streaming, e.g. from an HTTP body: feed chunks as they arrive.
//! let mut p = Parser::new(&ParseOptions::with_workspace("/home/runner/work/R/R"));
//! p.feed(b"/home/runner/work/R/R/app.py:1:8: F40");
//! p.feed(b"1 [*] `os` imported but unused\n");
//! let reports = p.finish();
//! assert_eq!(reports[0].file_path, "app.py");
//! let _sarif = sarif::to_sarif(&reports);
//! ```
//!
//! # How it works
//!
//! The log is read line by line ([`Parser::feed`] accepts arbitrary chunks). Each line is
//! normalised (`normalize`: BOM, Actions timestamp (also behind `gh run view --log`'s job and step
//! columns), ANSI escapes, `\r` overwrites, lossy UTF-8;
//! `##[error]` prefixes are removed, `##[warning]`/`##[notice]`/`##[debug]`/`##[command]` lines are
//! dropped, `##[group]Run <cmd>` records the step being run), then stripped of what other CI
//! systems and wrappers add: escapes a capture turned into text (`^[[31m`, `\x1b[31m`), Jenkins
//! Timestamper stamps, bracketed clocks (`[00:38:49] `) and `parallel` branch names, `[Pipeline]` lines, GitLab section markers and
//! stream tags, Azure `##[section]`/`##vso[`, Buildkite `_bk;t=` stamps and `~~~` headers, Travis
//! folds, BuildKit `#N 1.234 ` and step-summary `1.234 ` stamps, docker compose `svc-1  | ` prefixes, monorepo runners' `pkg:task: `
//! prefixes, Ant's `[javac] ` task prefixes. A runner's success verdict (`Finished: SUCCESS`, `Done. Your build exited
//! with 0.`, `Job succeeded`, and an Actions job reaching `Cleaning up orphan processes` with no
//! `##[error]` line before it) drops what was found before it: the job tolerated it. So does an
//! Actions step that reaches the next `##[group]Run` without an `##[error]`, and a Travis command
//! its runner says `exited with 0.`, for what they printed. `make`/`ninja` `Entering directory` lines, meson's `-I. -I..` compile commands, a `pnpm -r` package prefix, Surefire's report
//! directory and `go test`'s `FAIL\t<import path>` tell where relative paths are relative to.
//! Then one matcher per toolchain
//! (`rules/python.rs`, `rust.rs`, `js.rs`, `go.rs`, `jvm.rs`, `c.rs`, `scala.rs`, `beam.rs`,
//! `dart.rs`, `ruby.rs`, `php.rs`, `dotnet.rs`, `swift.rs`, `haskell.rs`, `r.rs`, `perl.rs`, `format.rs`, `infra.rs`, `generic.rs`)
//! looks at it.
//! Multi-line constructs (Python tracebacks, pytest failure sections, rustc diagnostics with
//! their ` --> ` location and lint notes, Jest/Vitest failure blocks, `go test` output and panics,
//! JUnit stack traces) are small state machines with bounded buffers. Most lines of a real log
//! match nothing, so every matcher starts with cheap byte tests before any regex.
//!
//! Limits: a line is cut at [`MAX_LINE`] bytes, at most [`MAX_REPORTS`] reports are kept,
//! messages are cut at [`MAX_MESSAGE`] characters, and every multi-line block has a line
//! budget; memory is therefore bounded whatever the size of the log.
//!
//! # Classification table
//!
//! | Evidence | Type |
//! |---|---|
//! | Failed assertion, failing test (pytest, unittest, `cargo test` panic, compiletest annotation mismatch, Jest/Vitest, `go test`, JUnit, GoogleTest `Failure`/MSVC `error:` in a `[ RUN ]` block, Boost.Test `error: in "suite/test"`), uncaught runtime exception with a frame in the repo, bash runtime errors of a repository script (`x.sh: line 9: cd: …`, `unbound variable`; `syntax error` is `SYNTAX`) | `LOGIC` |
//! | Parse errors: Python `SyntaxError` (and template engines' `TemplateSyntaxError`), rustc `expected …`/unclosed delimiter, `TS1xxx`, ESLint `Parsing error` (and any ESLint error naming no rule), webpack `Module parse failed`, Node/Babel `SyntaxError`, gcc/clang `expected …`, javac `';' expected`, go `syntax error`, ruff `invalid-syntax`, flake8 `E999 SyntaxError` | `SYNTAX` |
//! | Python `IndentationError` / `TabError` (also via flake8 `E999`, ruff indentation parse errors) | `INDENTATION` |
//! | `ModuleNotFoundError`/`ImportError`, rustc `E0432`/`E0433` (crate or module)/`E0463`/`E0583`, `TS2307`/`TS2305`/`TS2792`/`TS7016`, mypy `import-not-found`/`import-untyped`, Node `Cannot find module`, webpack `Module not found`, go missing packages (also `missing go.sum entry`, a module that failed to download `mod@v1.2: Get …`), javac `package … does not exist`/`cannot access`, missing C/C++ headers | `IMPORT` |
//! | Other compiler and type-checker errors (rustc, tsc, mypy, javac, kotlinc, gcc/clang, IAR `Error[Pe…]`, `go build`) | `TYPE_ERROR` |
//! | Linter rule violations: flake8, ruff, pylint, ESLint, clippy (lint named by `-D` or `#[deny]`), `go vet`, javadoc / `-Xdoclint` comment errors (`bad use of '>'`, `malformed HTML`), golangci-lint (`(linter)`; `(compile)`/`(typecheck)` are `TYPE_ERROR`), staticcheck (`(SA4006)`), an untagged finding of a step running a Go linter, warnings denied by `-D warnings` / `-Werror` | `LINTING` |
//! | JS toolchains: mocha / Jasmine / tape failures → `LOGIC`; `next lint` rows (`12:5  Error: msg  rule`) as ESLint; TSLint, stylelint, `path:line message (rule)` lint scripts → `LINTING`; Sass, PostCSS `CssSyntaxError`, CoffeeScript compile errors → `SYNTAX` (Sass `Undefined variable` → `TYPE_ERROR`) | as listed |
//! | Scala (`rules/scala.rs`): scalac/sbt/Scala 3 errors `TYPE_ERROR`, `… expected but … found`/Scala 3 `Syntax Error` `SYNTAX`, `is not a member of package` on an `import` line `IMPORT`, warnings made fatal (`-Xfatal-warnings`, `-Werror`, deprecations and unused code printed as errors) `LINTING`; ScalaTest/MUnit failures `LOGIC` | as stated |
//! | Elixir / Erlang (`rules/beam.rs`): `CompileError`, Elixir ≥ 1.15 `error:`, erlc errors `TYPE_ERROR`; `SyntaxError`/`TokenMissingError`/`MismatchedDelimiterError`, erlc `syntax error` `SYNTAX`; `module … is not loaded and could not be found`, erlc `can't find include` `IMPORT`; `--warnings-as-errors` / `warnings_as_errors` warnings, Credo `LINTING`; ExUnit, EUnit, Common Test failures, `mix run` script exceptions `LOGIC` | as stated |
//! | Dart / Flutter (`rules/dart.rs`): `dart analyze` / `flutter analyze` / machine-format `error`s and front-end `Error:`s `TYPE_ERROR`, parser codes (`expected_token`…) and `Expected …` `SYNTAX`, `uri_does_not_exist` / `Error when reading` / `Not found: 'package:…'` `IMPORT`; `dart test`/`flutter test` failures `LOGIC` | as stated |
//! | Formatter checks (`rules/format.rs`, `tool` = the formatter, `rule` = `format`): rustfmt `Diff in` (the hunk's first changed line), `ruff format --check`, black, prettier `--check`, `gofmt -l`/`goimports -l`, `prettier --list-different` and `terraform fmt -check` listings in a failed step, `clang-format -Werror`, `isort --check-only` | `LINTING` |
//! | CI-side linters (`rules/infra.rs`): hadolint `error`/`warning` (on stdin: the file the echoed command redirected), yamllint `error`, PyYAML marked errors (the problem's mark) `SYNTAX`, actionlint, markdownlint, tldr-lint, tflint `Error`/`Warning`, shellcheck checkstyle `error`; terraform `Error:` (not in `.terraform/modules`) and Actions workflow-file errors are `TYPE_ERROR` (`SYNTAX` for parse errors, `IMPORT` for missing modules) | `LINTING` |
//! | Ruby: RuboCop/standardrb offenses (not `I:`, not `[Corrected]`) `LINTING`, `Lint/Syntax` and `ruby -c` syntax errors `SYNTAX`; RSpec, minitest, cucumber failed steps (the repository's step definition, else the feature's step) and uncaught exceptions `LOGIC` (`SyntaxError`/`LoadError` while loading: `SYNTAX`/`IMPORT`) | by evidence |
//! | PHP: `Parse error` `SYNTAX`, `Fatal error` class/interface not found `IMPORT`, other fatal errors, PHPStan and Psalm `TYPE_ERROR` (their syntax errors `SYNTAX`); PHPUnit failures and uncaught exceptions `LOGIC` | by evidence |
//! | .NET: `CS0234`/`CS0246`/`CS0012` `IMPORT`, `… expected`/`Syntax error` `SYNTAX`, other `CS`/`FS`/`BC` errors `TYPE_ERROR`, compiler warnings made errors and analyzers (`CA`, `IDE`, `SA`, `dotnet format`) `LINTING`; xUnit/NUnit/MSTest/Pester failures `LOGIC` | by evidence |
//! | Swift: `no such module` `IMPORT`, `expected …` and other parse errors `SYNTAX`, other swiftc errors `TYPE_ERROR`, SwiftLint errors `LINTING`; XCTest failures (also xcpretty's summary) `LOGIC` | by evidence |
//! | Haskell (`rules/haskell.rs`): GHC `error:`s `TYPE_ERROR` (`Could not find module` `IMPORT`, `parse error` `SYNTAX`); warnings GHC made errors (`-Werror=…`, GHC 7's `Failing due to -Werror.`) `LINTING`, other warnings never | as stated |
//! | R (`rules/r.rs`): testthat `Failure`/`Error` headers of every release (`(at test-x.R#29)`, `(@test-x.R#29)`, `(test-x.R:29:3)`), at `tests/testthat/<file>` | `LOGIC` |
//! | Perl (`rules/perl.rs`): perlcritic violations (`msg at line N, column M.  … (Severity: S)`, with `file: ` when given several files, else the one file its echoed command names) | `LINTING` |
//! | Checks of Travis CI jobs (issue 15, former fresh5): a `diff --git` a command printed before Travis' `The command "…" exited with N` (N ≠ 0), Markdown checkers' `x.md:N:Message` and jazzy's `undocumented.json` entries of such a command, awesome_bot's `Issues :-(` rows (`[L696]`) `LINTING`; Ruby Psych `(x.md): … at line N column M` `SYNTAX` | as stated |
//! | Checks of real CI jobs (issue 15, former fresh3): a failed check's unified diff (pre-commit `--show-diff-on-failure`, a `git diff` step, a nix formatter check), black's `reformatted x` in a failed step, Sphinx `-W` warnings and sphinx-lint (`rules/docs.rs`, once the step failed), codespell `x:N: word ==> fix`, numpydoc validation codes, Checkstyle `[ERROR]` rows, clang-tidy checks (`[bugprone-…]`) `LINTING`; glibc `Assertion … failed.` and esbuild `✘ [ERROR]` at the caller's frame `LOGIC`; expat errors naming an XML file `SYNTAX`; Jest failing to parse a dependency: the repository's import of it `IMPORT` | as stated |
//! | Checks of real CI jobs (issue 15, former fresh4): markdown-checker's `##[error]File x, line N, …` annotations, Julia's `check-whitespace.jl` `path:N -- trailing whitespace` `LINTING`; Playwright failures (named `describe › test`), a gtest's fatal-signal stack (first repository frame past the handler) `LOGIC`; errors of an Actions step that ended without `##[error]`, or of an nps/concurrently task that exited 0, are tolerated and never reported | as stated |
//! | Travis-era Gradle and Maven (issue 15, former fresh6): Gradle's `* Where: Build file '…' line: N` `LOGIC` (`SYNTAX` when it `Could not compile`); Checkstyle 5 rows through `[ant:checkstyle]` without a severity `LINTING`; TestNG's `m on m(Class)(Class)` under Surefire 2 `LOGIC` | as stated |
//!
//! Warnings, notes, `help:` lines and build-tool summaries (`make: ***`, `BUILD FAILURE`,
//! `Process completed with exit code 1`) are never reports of their own.
//!
//! # Confidence scheme
//!
//! | Score | When |
//! |---|---|
//! | 0.95 | A compiler, type checker or linter printed the location and (usually) a rule code |
//! | 0.9 | A test runner printed the failing location (pytest location line, `panicked at`, `file_test.go:N`, Jest/Vitest frame) |
//! | 0.85 | The innermost in-repo frame of a traceback or stack trace |
//! | 0.8 | The location is exact but the path is as printed relative to a sub-directory (e.g. `go test` prints paths relative to the package) |
//! | 0.6 | The path was reconstructed (JUnit frames give a class and a file name, the source root is the Maven convention) |
//! | 0.5 | A formatter named only the file (`Would reformat: x.py`, `[warn] x.ts`, `gofmt -l`, isort): reported at line 1 |
//! | 0.4 | The generic `path:line[:col]: error…` fallback |
//!
//! # Paths
//!
//! CI checkout prefixes (GitHub, GitLab `/builds/g/p/`, Travis, Jenkins `…/workspace/<job>/`,
//! CircleCI, Azure `/home/vsts/work/1/s/` and `D:\a\1\s\`, Drone, Buildkite, and container
//! checkouts such as `/checkout/`, `/app/`, `/src/`), [`ParseOptions::workspace`] and, failing
//! that, the Jenkins workspace the log names (`Building in workspace /var/lib/jenkins/workspace/job`)
//! are stripped, and so is the folder GitHub's "Download ZIP" unpacks into (`…/<repo>-master/`,
//! `-main/`, `-develop/`);
//! a path that is still absolute or escapes with `..` is never emitted, nor are generated files and
//! compiler probes (`conftest.c`, `CMakeFiles/`, `_testmain.go`), vendored dependencies (also
//! Unity's `Library/PackageCache/`) and toolchain sources. The repository's own package installed in a virtualenv's `site-packages`
//! maps back to the checkout once a report has placed that package there.

mod normalize;
mod path;
pub mod rules;
pub mod sarif;
mod sink;

pub use sink::{MAX_MESSAGE, MAX_REPORTS};

use serde::{Deserialize, Serialize};

/// The six bug types of the contract. Serialised exactly as the contract spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BugType {
    /// A linter rule violation (ruff, flake8, pylint, ESLint, clippy, `go vet`…).
    Linting,
    /// The source does not parse.
    Syntax,
    /// A failed assertion or failing test.
    Logic,
    /// Other compiler and type-checker errors.
    TypeError,
    /// Unresolved imports, missing modules, packages, headers and crates.
    Import,
    /// Python `IndentationError` / `TabError`.
    Indentation,
}

impl BugType {
    /// Every bug type, in the contract's order.
    pub const ALL: [BugType; 6] = [
        BugType::Linting,
        BugType::Syntax,
        BugType::Logic,
        BugType::TypeError,
        BugType::Import,
        BugType::Indentation,
    ];

    /// The contract's spelling (`LINTING`, `TYPE_ERROR`…).
    pub fn as_str(self) -> &'static str {
        match self {
            BugType::Linting => "LINTING",
            BugType::Syntax => "SYNTAX",
            BugType::Logic => "LOGIC",
            BugType::TypeError => "TYPE_ERROR",
            BugType::Import => "IMPORT",
            BugType::Indentation => "INDENTATION",
        }
    }
}

impl std::fmt::Display for BugType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for BugType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BugType::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown bug type `{s}`"))
    }
}

/// One error location found in a log.
///
/// The first six fields are the Parser contract's output, with its names. The rest are extras
/// people want beside them; they are optional and skipped when unknown, so a consumer of the
/// contract's fields is never broken by them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BugReport {
    /// Repo-relative path, forward slashes, never `..` or absolute.
    pub file_path: String,
    /// Line number, >= 1.
    pub line_number: u32,
    pub error_type: BugType,
    /// The tool's own words.
    pub message: String,
    /// The failing test, when there is one.
    pub test_name: Option<String>,
    /// How sure the parser is of this extraction, 0–1.
    pub confidence_score: f64,
    /// Column, >= 1, when the tool printed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The tool that printed it (`ruff`, `rustc`, `tsc`, `pytest`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool's rule or error code (`F401`, `E0432`, `TS2307`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// Longest line considered, in bytes; the rest of a longer line is ignored.
pub const MAX_LINE: usize = 16 * 1024;

/// Lines at a log's start within which a `gh run view --log` form is recognised.
const GH_COLUMNS_WITHIN: u64 = 64;

/// Options for one parse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Absolute path of the checkout the log was produced in (e.g. `/home/runner/work/R/R` or
    /// an executor's `/workspace`); stripped from paths. Runner prefixes are stripped without it.
    pub workspace: Option<String>,
}

impl ParseOptions {
    pub fn with_workspace(workspace: impl Into<String>) -> Self {
        ParseOptions {
            workspace: Some(workspace.into()),
        }
    }
}

/// How GitHub Actions marked a line (`##[error]` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    None,
    Error,
    Group,
}

/// One normalised line as the matchers see it, with the cheap facts every matcher tests
/// computed once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// The text, without timestamp, ANSI escapes or `##[error]` prefix.
    pub text: &'a str,
    /// 1-based line number in the log (used to order reports by first appearance).
    pub no: u64,
    #[allow(dead_code)]
    pub marker: Marker,
    trimmed: &'a str,
    indent: usize,
    /// The line contains `:`.
    pub colon: bool,
    /// The line contains `:` followed by a digit (every `path:line` location).
    pub colon_digit: bool,
    /// First and last bytes of the trimmed text (0 when blank): the matchers' idle checks
    /// (`quiet`) dispatch on them.
    pub first: u8,
    pub last: u8,
}

impl<'a> Line<'a> {
    pub fn new(text: &'a str, no: u64, marker: Marker) -> Self {
        // ASCII whitespace only: tools indent with spaces and tabs, and this is on the hot path.
        let start = text.trim_ascii_start();
        let trimmed = start.trim_ascii_end();
        let b = text.as_bytes();
        let mut colon = false;
        let mut colon_digit = false;
        for i in memchr::memchr_iter(b':', b) {
            colon = true;
            if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                colon_digit = true;
                break;
            }
        }
        let tb = trimmed.as_bytes();
        Line {
            text,
            no,
            marker,
            trimmed,
            indent: text.len() - start.len(),
            colon,
            colon_digit,
            first: tb.first().copied().unwrap_or(0),
            last: tb.last().copied().unwrap_or(0),
        }
    }
    pub fn trimmed(&self) -> &'a str {
        self.trimmed
    }
    pub fn is_blank(&self) -> bool {
        self.trimmed.is_empty()
    }
    pub fn indent(&self) -> usize {
        self.indent
    }
}

/// Substring test with memchr's SIMD searcher (faster than `str::contains` on short lines).
pub(crate) fn contains(haystack: &str, needle: &str) -> bool {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes()).is_some()
}

/// A substring searcher built once, for needles tested on many lines.
pub(crate) type Needle = std::sync::LazyLock<memchr::memmem::Finder<'static>>;

/// `static X: Needle = needle!("text");`
macro_rules! needle {
    ($s:literal) => {
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new($s))
    };
}
pub(crate) use needle;

/// True when `needle` occurs in `haystack`.
pub(crate) fn has(needle: &Needle, haystack: &str) -> bool {
    needle.find(haystack.as_bytes()).is_some()
}

/// What the parser knows about where it is in the log.
#[derive(Debug, Default)]
pub(crate) struct Ctx {
    /// The command of the current `##[group]Run …` step (first line, capped), lower-cased.
    pub step: String,
    /// The last command a runner or shell echoed (`##[group]Run cmd`, Travis' `$ cmd`, a `set
    /// -x` trace `+ cmd`), as printed, capped: tools that name no file when given one (perlcritic)
    /// ran on the file it names.
    pub command: String,
}

/// `cd docs`, `cd packages/x; hatch test`, `cd web && npm test`: the repo-relative directory an
/// Actions step's script changes into on its first line, when it names one plainly (no
/// variable, no `..`, not absolute).
fn step_cd(cmd: &str) -> Option<String> {
    let rest = cmd.strip_prefix("cd ")?;
    let dir = rest.split([';', '&', '|']).next()?.trim();
    let dir = dir.trim_matches(['"', '\'']).trim_start_matches("./");
    if dir.is_empty()
        || dir.contains([' ', '$', '~', '`', '*'])
        || dir.starts_with('/')
        || dir.starts_with('-')
        || dir.split('/').any(|seg| seg == "..")
    {
        return None;
    }
    path::normalize_dir(dir, None).filter(|d| !d.is_empty() && d != ".")
}

/// `git clone [options] <url> [dir]`: the directory the clone goes to (the URL's last
/// segment without `.git` when none is given), when it is a plain relative one.
fn clone_dest(cmd: &str) -> Option<String> {
    let rest = cmd.strip_prefix("git clone ")?;
    let rest = rest.split(['&', ';', '|', '>']).next()?;
    let mut words = rest.split_ascii_whitespace();
    let mut positional = Vec::with_capacity(2);
    while let Some(w) = words.next() {
        if w.starts_with('-') {
            // Options that take their value as the next word.
            if matches!(
                w,
                "--depth"
                    | "-b"
                    | "--branch"
                    | "-o"
                    | "--origin"
                    | "-j"
                    | "--jobs"
                    | "--reference"
                    | "-c"
                    | "--config"
                    | "--filter"
                    | "--shallow-since"
                    | "-u"
            ) {
                words.next();
            }
            continue;
        }
        positional.push(w);
    }
    let dir = match positional.as_slice() {
        [url] => {
            let last = url.trim_end_matches('/').rsplit(['/', ':']).next()?;
            last.strip_suffix(".git").unwrap_or(last)
        }
        [_, dir] => dir,
        _ => return None,
    };
    let dir = dir.trim_matches(['"', '\'']);
    if dir.is_empty() || dir.starts_with(['/', '~', '-']) || dir.contains(['$', '`', '*']) {
        return None;
    }
    if dir.split('/').any(|seg| seg == "..") {
        return None;
    }
    path::normalize_dir(dir, None).filter(|d| !d.is_empty() && d != ".")
}

/// Spellings of "the directory the command runs in" a job passes as a bind mount's source.
const MOUNT_CWD: [&str; 9] = [
    "$PWD",
    "${PWD}",
    "$(pwd)",
    "`pwd`",
    ".",
    "$TRAVIS_BUILD_DIR",
    "${TRAVIS_BUILD_DIR}",
    "$GITHUB_WORKSPACE",
    "${GITHUB_WORKSPACE}",
];

/// `docker run -v $PWD:/root/src/openface img …` (also `--volume`, `--volume=`, `-v=`,
/// `--mount type=bind,source=$(pwd),target=/app`, the source quoted or not): the absolute
/// directory inside the container that is the directory the command ran in. Tools run in the
/// container print the repository's files under it. `None` for any other mount (a named
/// volume, a subdirectory, the docker socket) or command.
fn docker_mount(cmd: &str) -> Option<&str> {
    if !contains(cmd, "docker") || !contains(cmd, " run ") {
        return None;
    }
    let mut words = cmd.split_ascii_whitespace();
    while let Some(w) = words.next() {
        let spec = match w {
            "-v" | "--volume" | "--mount" => words.next()?,
            _ => match w
                .strip_prefix("--volume=")
                .or_else(|| w.strip_prefix("-v="))
                .or_else(|| w.strip_prefix("--mount="))
            {
                Some(spec) => spec,
                None => continue,
            },
        };
        let spec = spec.trim_matches(['"', '\'']);
        let (src, dst) = if spec.starts_with("type=bind,") {
            let field = |keys: &[&str]| {
                spec.split(',').find_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    keys.contains(&k).then_some(v)
                })
            };
            (
                field(&["source", "src"])?,
                field(&["target", "destination", "dst"])?,
            )
        } else {
            let (src, rest) = spec.split_once(':')?;
            (src, rest.split(':').next()?)
        };
        let src = src.trim_matches(['"', '\'']);
        let dst = dst.trim_matches(['"', '\'']).trim_end_matches('/');
        if MOUNT_CWD.contains(&src) && dst.len() > 1 && dst.starts_with('/') {
            return Some(dst);
        }
    }
    None
}

/// Streaming parser: feed it bytes in any chunking, then [`finish`](Parser::finish).
///
/// Memory is bounded: the partial line carried between chunks is capped at [`MAX_LINE`], the
/// matchers' buffers are capped, and at most [`MAX_REPORTS`] reports are kept.
#[derive(Debug)]
pub struct Parser {
    partial: Vec<u8>,
    /// True while the rest of an over-long line is being skipped.
    skipping: bool,
    scratch: Vec<u8>,
    /// The same for lines known to be UTF-8.
    text_scratch: String,
    line_no: u64,
    ctx: Ctx,
    sink: sink::Sink,
    rules: rules::Rules,
    /// Lines whose visible escape text (`^[[31m`) was removed.
    visible_scratch: String,
    workspace: Option<String>,
    dirs: path::WorkDirs,
    /// The `pnpm -r` package directory of the previous line, when it had one.
    package_dir: Option<String>,
    /// Inside the summary BuildKit prints after a failed step (` > [stage 2/3] RUN …:` up to
    /// `------`), whose lines start with the seconds since the step started.
    docker_summary: bool,
    /// The log is in `gh run view --log` form (job and step columns before each line).
    gh_columns: bool,
    /// A GitHub Actions `##[error]` line was seen: a step failed (or a tool annotated an error).
    actions_error: bool,
    /// The `with:` inputs of the current `actions/checkout` step: `repository:` given, and
    /// `path:` (see [`Parser::checkout_input`]).
    checkout_with: (bool, Option<String>),
    /// `actions/checkout` steps already ended.
    checkouts: u32,
    /// The directory the current `##[group]Run cd <dir>` step changed into (repo-relative).
    step_dir: Option<String>,
    /// The sink's step number at the current Actions `##[group]Run …` step header (groups a
    /// tool opens inside the step count as later sink steps of the same Actions step), and
    /// whether an `##[error]` was seen since (or before: the job had failed already): see
    /// [`Parser::actions_step_ends`].
    run_step: Option<(u32, bool)>,
    /// A `##[group]Run …` group not yet known to be the runner's step header (the sink's step
    /// number at it, and whether a line was printed inside it): see [`Parser::step_header_line`].
    pending_run: Option<(u32, bool)>,
    /// The reports found under each concurrent task's prefix (`pkg: [task]`, see
    /// [`normalize::Prefix::task`]), until the task says how it exited: at most
    /// [`MAX_TASKS`] tasks of [`MAX_TASK_REPORTS`] reports each, the oldest task forgotten first.
    task_reports: Vec<(String, Vec<sink::Key>)>,
    /// A shell command built a source distribution (`stack sdist`, `cabal sdist`, `setup.py
    /// sdist`): a later `tar -x … -C <dir> --strip-components=1` unpacks the repository's own
    /// sources into `<dir>`.
    sdist: bool,
    /// The number of reports when Travis last echoed a command (`$ cmd`): Travis' verdict on
    /// it (`The command "cmd" exited with 0.`) says what came after was tolerated.
    travis_cmd: Option<usize>,
    /// Travis' clone of the repository (`$ git clone … https://…/o/r.git o/r`, then `$ cd o/r`):
    /// the clone's directory, and the repo-relative directory later `$ cd <dir>` commands moved
    /// to (Travis runs a job's commands in one shell, so a `cd` holds for the rest of the job).
    travis_clone: Option<(String, Option<Vec<String>>)>,
}

/// Bounds on [`Parser::task_reports`].
const MAX_TASKS: usize = 32;
const MAX_TASK_REPORTS: usize = 64;

impl Parser {
    pub fn new(opts: &ParseOptions) -> Self {
        Parser {
            partial: Vec::new(),
            skipping: false,
            scratch: Vec::new(),
            text_scratch: String::new(),
            line_no: 0,
            ctx: Ctx::default(),
            sink: sink::Sink::new(opts.workspace.clone()),
            rules: rules::Rules::default(),
            visible_scratch: String::new(),
            workspace: opts.workspace.clone(),
            dirs: path::WorkDirs::default(),
            package_dir: None,
            docker_summary: false,
            gh_columns: false,
            actions_error: false,
            checkout_with: (false, None),
            checkouts: 0,
            step_dir: None,
            run_step: None,
            pending_run: None,
            sdist: false,
            travis_clone: None,
            travis_cmd: None,
            task_reports: Vec::new(),
        }
    }

    /// Feeds a chunk of the log; lines may span chunks.
    pub fn feed(&mut self, mut chunk: &[u8]) {
        // A line carried over from the previous chunk ends at this chunk's first newline.
        if !self.partial.is_empty() || self.skipping {
            let Some(nl) = memchr::memchr(b'\n', chunk) else {
                self.push_partial(chunk);
                return;
            };
            self.push_partial(&chunk[..nl]);
            let mut whole = std::mem::take(&mut self.partial);
            self.skipping = false;
            self.feed_line(&whole);
            whole.clear();
            self.partial = whole;
            chunk = &chunk[nl + 1..];
        }
        // The chunk's complete lines, then the start of a line the next chunk ends.
        let (lines, tail) = match memchr::memrchr(b'\n', chunk) {
            Some(nl) => chunk.split_at(nl + 1),
            None => (&[][..], chunk),
        };
        self.feed_lines(lines);
        if !tail.is_empty() {
            self.push_partial(tail);
        }
    }

    /// Feeds complete lines, each ended by `\n`. UTF-8 is validated once for the whole run of
    /// lines (per-line validation was a tenth of the parser's time); a line with invalid UTF-8
    /// goes through the lossy path of [`feed_line`](Parser::feed_line).
    fn feed_lines(&mut self, mut lines: &[u8]) {
        while !lines.is_empty() {
            let valid = match std::str::from_utf8(lines) {
                Ok(text) => {
                    self.feed_text_lines(text);
                    return;
                }
                Err(e) => e.valid_up_to(),
            };
            // The lines before the one with the invalid bytes are valid (validated again, only
            // in this rare case, to get them as text without `unsafe`).
            let good = memchr::memrchr(b'\n', &lines[..valid]).map_or(0, |nl| nl + 1);
            match std::str::from_utf8(&lines[..good]) {
                Ok(text) => self.feed_text_lines(text),
                Err(_) => self.feed_byte_lines(&lines[..good]),
            }
            let bad = &lines[good..];
            let nl = memchr::memchr(b'\n', bad).unwrap_or(bad.len() - 1);
            self.feed_line(&bad[..nl]);
            lines = &bad[nl + 1..];
        }
    }

    /// Lines of valid UTF-8, each ended by `\n`.
    fn feed_text_lines(&mut self, mut text: &str) {
        while let Some(nl) = memchr::memchr(b'\n', text.as_bytes()) {
            // `\n` is ASCII: both cuts are on character boundaries.
            let (line, rest) = (&text[..nl], &text[nl + 1..]);
            text = rest;
            self.feed_text_line(line);
        }
    }

    /// Lines each ended by `\n`, through the lossy path.
    fn feed_byte_lines(&mut self, mut bytes: &[u8]) {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            self.feed_line(&bytes[..nl]);
            bytes = &bytes[nl + 1..];
        }
    }

    /// [`feed_line`](Parser::feed_line) for a line known to be valid UTF-8.
    /// Cuts the `gh run view --log` columns: looked for on the first lines only (such a log is in
    /// that form from its start), then on every line.
    fn gh_columns(&mut self, raw: &[u8]) -> usize {
        if !self.gh_columns && self.line_no >= GH_COLUMNS_WITHIN {
            return 0;
        }
        let n = normalize::gh_run_view_columns(raw);
        self.gh_columns |= n > 0;
        n
    }

    fn feed_text_line(&mut self, raw: &str) {
        if raw.len() > MAX_LINE {
            // The cut may split a character: the lossy path decides.
            return self.feed_line(raw.as_bytes());
        }
        // The columns end at a tab: a character boundary.
        let text = &raw[self.gh_columns(raw.as_bytes())..];
        let mut scratch = std::mem::take(&mut self.text_scratch);
        match normalize::normalize_str(text, &mut scratch) {
            Some(text) => {
                self.line_no += 1;
                self.process(text);
            }
            // The lossy path cuts the columns itself, as it does for a line fed in pieces.
            None => self.feed_line(raw.as_bytes()),
        }
        self.text_scratch = scratch;
    }

    fn push_partial(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        let room = MAX_LINE.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.partial.extend_from_slice(&bytes[..room]);
            self.skipping = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    /// Feeds one complete line (without its `\n`). Longer lines than [`MAX_LINE`] are cut.
    pub fn feed_line(&mut self, raw: &[u8]) {
        let raw = &raw[..raw.len().min(MAX_LINE)];
        let raw = &raw[self.gh_columns(raw)..];
        self.line_no += 1;
        let mut scratch = std::mem::take(&mut self.scratch);
        {
            let text = normalize::normalize_line(raw, &mut scratch);
            self.process(&text);
        }
        self.scratch = scratch;
    }

    fn process(&mut self, text: &str) {
        let mut visible = std::mem::take(&mut self.visible_scratch);
        let text = if normalize::strip_visible_escapes(text, &mut visible) {
            visible.as_str()
        } else {
            text
        };
        self.process_text(text);
        self.visible_scratch = visible;
    }

    /// A new CI step (an Actions group, an Azure section): blocks close and the build's
    /// directories are forgotten.
    fn step_boundary(&mut self) {
        self.rules.step_boundary(&mut self.sink);
        self.dirs.reset();
        self.package_dir = None;
        self.step_dir = None;
        self.sink.set_cwd(None);
    }

    /// The runner said the job, and the current `Run` step, failed (`##[error]`, `Error: `).
    fn saw_actions_error(&mut self) {
        self.actions_error = true;
        if let Some(step) = &mut self.run_step {
            step.1 = true;
        }
    }

    /// The Actions step begun by the last `##[group]Run …` header ends where the next one begins.
    /// A step that fails always prints an `##[error]` before that (`Process completed with exit
    /// code N.`, an action's own message), so a step without one passed: whatever errors its
    /// tools printed were tolerated by the step's script (a `lintme` that ignores `black
    /// --check`'s status, `|| true`, a linter in report-only mode) and are no failure of the job.
    /// The last step of a log is left alone (the log may be cut there).
    fn actions_step_ends(&mut self) {
        if let Some((first, false)) = self.run_step.take() {
            self.sink.steps_passed(first);
        }
    }

    /// A line inside a pending `##[group]Run …` group (`None` for its `##[endgroup]`). The
    /// runner prints a step's header as a group holding the step's inputs: a script step's
    /// script then its `shell: …` line (and `env:`), an action's `with:` or `env:`, or nothing.
    /// A script's own `::group::Run tests` holds the script's output instead, and must not end
    /// the step it runs in; it is told apart by those lines, so the step ends only once one is
    /// seen.
    fn step_header_line(&mut self, text: Option<&str>) {
        let Some((first, printed)) = self.pending_run else {
            return;
        };
        let header = match text {
            Some(t) => t.starts_with("shell: ") || t == "with:" || t == "env:",
            None => !printed,
        };
        if header {
            self.pending_run = None;
            self.actions_step_ends();
            // Once the job has failed the runner runs only `if: failure()` and `always()` steps:
            // they print what failed (JOSM's `grep -L … test/report/*.txt | xargs cat` of the
            // JUnit reports), they tolerate nothing.
            self.run_step = Some((first, self.actions_error));
        } else if text.is_none() {
            self.pending_run = None;
        } else {
            self.pending_run = Some((first, true));
        }
    }

    /// An `actions/checkout` step's input line (`  path: sub/dir`, `  repository: o/r`).
    fn checkout_input(&mut self, text: &str) {
        let t = text.trim_start();
        if t.starts_with("repository: ") {
            self.checkout_with.0 = true;
        } else if let Some(dir) = t.strip_prefix("path: ") {
            self.checkout_with.1 = Some(dir.trim().to_string());
        }
    }

    /// A command a shell echoed (`+ cmd`, Travis' `$ cmd`). A build that checks its source
    /// distribution unpacks it inside the checkout and compiles there (purescript's Travis job:
    /// `stack sdist --tar-dir sdist-test`, `tar -xzf sdist-test/p-0.13.2.tar.gz -C sdist-test
    /// --strip-components=1`): that directory is a copy of the repository's root, so the
    /// compiler's paths through it are the repository's files.
    fn shell_command(&mut self, text: &str) {
        let cmd = text.trim_start_matches(['+', '$', ' ']);
        if text.starts_with("$ ") || text.starts_with("+ ") {
            self.ctx.command.clear();
            self.ctx.command.push_str(sink::truncate_chars(cmd, 200));
        }
        self.docker_mount(cmd);
        if text.starts_with("$ ") {
            self.rules.command_echoed();
            self.travis_cmd = Some(self.sink.len());
            if cmd.starts_with("git clone ") || cmd.starts_with("cd ") {
                self.travis_cd(cmd);
            }
        }
        if !self.sdist {
            self.sdist = cmd.len() < 512 && contains(cmd, "sdist");
            return;
        }
        if !(cmd.starts_with("tar ") && contains(cmd, "--strip-components=1")) {
            return;
        }
        let mut words = cmd.split_ascii_whitespace();
        let mut dir = None;
        while let Some(w) = words.next() {
            if w == "-C" || w == "--directory" {
                dir = words.next();
            } else if let Some(d) = w.strip_prefix("--directory=") {
                dir = Some(d);
            }
        }
        let Some(dir) = dir.filter(|d| !d.starts_with(['/', '~', '$']) && !d.contains("..")) else {
            return;
        };
        if let Some(d) = path::normalize_dir(dir, None).filter(|d| !d.is_empty() && d != ".") {
            self.sink.set_checkout_dir(&d);
        }
    }

    /// A container run with the job's directory mounted: when that directory is the
    /// repository's root (no `cd` into a subdirectory was followed), the mount point is the
    /// checkout the container's tools print paths under (`/root/src/openface/tests/x.py`).
    fn docker_mount(&mut self, cmd: &str) {
        if self.step_dir.is_none()
            && let Some(dst) = docker_mount(cmd)
        {
            self.sink.learn_workspace(dst);
        }
    }

    /// Travis' `$ git clone … <dir>` and `$ cd <dir>` echoes: where the job's later commands run,
    /// relative to the repository (f90nml's job runs `cd test`, then `coverage run …
    /// test_f90nml.py`, whose traceback names `test_f90nml.py`). Only plain relative directories
    /// are followed; any other `cd` (`~`, `$VAR`, absolute, out of the clone) makes the directory
    /// unknown until the clone is entered again.
    fn travis_cd(&mut self, cmd: &str) {
        if let Some(rest) = cmd.strip_prefix("git clone ") {
            // Inside the repository's clone, a `git clone` brings another project (samoa's
            // job clones `incubator-s4` and runs its Gradle build): not the repository's files.
            if let Some((_, Some(segs))) = &self.travis_clone {
                if let Some(dir) = clone_dest(cmd) {
                    let dir = if segs.is_empty() {
                        dir
                    } else {
                        format!("{}/{dir}", segs.join("/"))
                    };
                    self.sink.add_foreign_dir(&dir);
                }
                return;
            }
            if let Some(dest) = rest.split_ascii_whitespace().last()
                && !dest.contains("://")
                && !dest.starts_with('-')
            {
                self.travis_clone = Some((dest.trim_end_matches('/').to_string(), None));
            }
            return;
        }
        let Some((clone, at)) = &mut self.travis_clone else {
            return;
        };
        let dir = cmd["cd ".len()..].trim().trim_end_matches('/');
        if clone.is_empty() {
            let mut segs = dir.split('/');
            let owner_repo = segs.clone().count() == 2
                && segs.all(|seg| {
                    !seg.is_empty()
                        && seg != ".."
                        && seg
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
                });
            if !owner_repo {
                self.travis_clone = None;
                return;
            }
            *clone = dir.to_string();
        }
        if dir == clone.as_str() || dir == "$TRAVIS_BUILD_DIR" || dir == "${TRAVIS_BUILD_DIR}" {
            *at = Some(Vec::new());
        } else if let Some(segs) = at {
            let plain = !dir.is_empty()
                && dir.split('/').all(|seg| {
                    !seg.is_empty()
                        && seg
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
                });
            if !plain {
                *at = None;
            } else {
                for seg in dir.split('/') {
                    match seg {
                        "." => {}
                        ".." => {
                            if segs.pop().is_none() {
                                *at = None;
                                break;
                            }
                        }
                        s => segs.push(s.to_string()),
                    }
                }
            }
        }
        let dir = match &self.travis_clone {
            Some((_, Some(segs))) if !segs.is_empty() => Some(segs.join("/")),
            _ => None,
        };
        if dir != self.step_dir {
            self.step_dir = dir;
            self.update_cwd();
        }
    }

    /// The `actions/checkout` step whose inputs were read ends. With a `path:` input the
    /// repository sits in that directory of the workspace, and tools run from the workspace
    /// print paths through it (golangci-lint's `--path-prefix`). The job's own repository is
    /// the checkout that names no other `repository:`, else the job's first checkout (later
    /// ones bring tools or configuration).
    fn end_checkout(&mut self) {
        let (named, dir) = std::mem::take(&mut self.checkout_with);
        let Some(dir) = dir else { return };
        let first = self.checkouts == 0;
        self.checkouts = self.checkouts.saturating_add(1);
        if named && !first {
            return;
        }
        if let Some(d) = path::normalize_dir(&dir, None).filter(|d| !d.is_empty() && d != ".") {
            self.sink.set_checkout_dir(&d);
        }
    }

    fn process_text(&mut self, text: &str) {
        let (mut text, mut prefix) = normalize::strip_prefixes(text);
        if text.starts_with("  ") && self.ctx.step.starts_with("actions/checkout@") {
            self.checkout_input(text);
        }
        if prefix.package_dir != self.package_dir.as_deref() {
            self.package_dir = prefix.package_dir.map(str::to_string);
            self.update_cwd();
        }
        if self.pending_run.is_some() && !text.starts_with("##[") {
            self.step_header_line(Some(text));
        }
        let mut marker = Marker::None;
        match text.as_bytes().first() {
            Some(b'#') => {
                if let Some(rest) = text.strip_prefix("##[") {
                    let Some((kind, body)) = rest.split_once(']') else {
                        return;
                    };
                    match kind {
                        "error" => {
                            marker = Marker::Error;
                            self.saw_actions_error();
                            // A problem matcher's annotation keeps the wrapper prefixes of the
                            // line it matched (lerna's `pkg: [task] ` before a tsc error).
                            let (body, inner) = normalize::strip_prefixes(body);
                            text = body;
                            if inner.task.is_some() {
                                prefix.task = inner.task;
                            }
                        }
                        "group" | "section" => {
                            marker = Marker::Group;
                            text = body;
                            self.end_checkout();
                            self.ctx.step.clear();
                            self.ctx.command.clear();
                            let run = body.strip_prefix("Run ");
                            if let Some(cmd) = run {
                                let cmd = sink::truncate_chars(cmd, 200);
                                self.ctx.step.push_str(&cmd.to_ascii_lowercase());
                                self.ctx.command.push_str(cmd);
                            }
                            self.step_boundary();
                            self.pending_run = None;
                            if let Some(cmd) = run {
                                self.pending_run = Some((self.sink.step(), false));
                                self.step_dir = step_cd(cmd);
                                self.update_cwd();
                                self.docker_mount(cmd);
                                // The job's own repository comes from `actions/checkout`: a
                                // step that clones one brings another project's code.
                                if let Some(dir) = clone_dest(cmd) {
                                    self.sink.add_foreign_dir(&dir);
                                }
                            }
                        }
                        "endgroup" => {
                            self.step_header_line(None);
                            return;
                        }
                        // Warnings, notices, debug output and echoed commands are never
                        // errors.
                        _ => return,
                    }
                } else if let Some(rest) = text.strip_prefix("##vso[") {
                    // Azure logging commands: an issue's message is the tool's own words; the
                    // other commands set variables and are no output at all.
                    let Some((cmd, body)) = rest.split_once(']') else {
                        return;
                    };
                    if !(cmd.starts_with("task.logissue") && contains(cmd, "type=error")) {
                        return;
                    }
                    marker = Marker::Error;
                    text = body;
                }
            }
            Some(b'[') if text.starts_with("[command]") || text.starts_with("[Pipeline] ") => {
                return;
            }
            Some(b's') => {
                // GitLab's `section_start:<time>:<name>[options]` before the header it
                // folds (the `\r\e[0K` between them is gone when the log was pasted).
                if let Some(rest) = text
                    .strip_prefix("section_start:")
                    .or_else(|| text.strip_prefix("section_end:"))
                {
                    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
                    let rest = rest.strip_prefix(':').unwrap_or(rest);
                    let name_end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "_-.[]=,".contains(c)))
                        .unwrap_or(rest.len());
                    text = &rest[name_end..];
                }
            }
            Some(b't') if text.starts_with("travis_fold:") || text.starts_with("travis_time:") => {
                return;
            }
            // Travis' logs that echo no clone (2015, and BugSwarm's reproductions) go from the
            // system information (`Build language: java`) straight to `$ cd owner/repo`.
            Some(b'B') if self.travis_clone.is_none() && text.starts_with("Build language: ") => {
                self.travis_clone = Some((String::new(), None));
            }
            // Buildkite's collapsed group headers.
            Some(b'~') if text.starts_with("~~~ ") => return,
            // The runner's last line of an Actions job: a job with a failed step printed
            // `##[error]Process completed with exit code N.` (or an action's own `##[error]`)
            // before it, so without one the job passed and tolerated what it printed.
            // The same verdict as a log copied from the web page shows it (`##[error]` rendered
            // as `Error: `).
            // A log copied from the Actions web page renders `##[error]` as `Error: `; a line a
            // problem matcher marked keeps its own indentation after it (`Error:   16:12  error
            // …`, `Error:      ^--^ SC2086: …`), which no tool's own `Error: msg` has.
            Some(b'E') if text.starts_with("Error:  ") || text.starts_with("Error: \t") => {
                marker = Marker::Error;
                self.saw_actions_error();
                text = &text[7..];
            }
            Some(b'E')
                if text.starts_with("Error: Process completed with exit code")
                    || (text.starts_with("Error: The process '")
                        && contains(text, "failed with exit code")) =>
            {
                self.saw_actions_error();
            }
            Some(b'C') if !self.actions_error && text == "Cleaning up orphan processes" => {
                self.step_boundary();
                self.sink.job_succeeded();
                return;
            }
            Some(b'F' | b'D' | b'J') if is_success_verdict(text) => {
                self.step_boundary();
                self.sink.job_succeeded();
                return;
            }
            Some(b'F' | b'o') => self.go_package_line(text),
            // The line goes on to the matchers too: some keep state per make directory
            // (erlc's `warnings being treated as errors` ends with it).
            Some(b'm' | b'g' | b'n') if self.dirs.line(text, self.workspace.as_deref()) => {
                self.sink.set_root(self.dirs.root());
                self.update_cwd();
            }
            Some(b'/' | b'c' | b'g' | b'x' | b'a') if self.dirs.compile_command(text) => {
                self.update_cwd();
            }
            // A shell's `set -x` trace and Travis' command echo.
            Some(b'+' | b'$') => self.shell_command(text),
            // Travis' verdict on the command it echoed last: one that exited 0 passed, so what
            // its tools printed was tolerated (`flake8 --exit-zero`, `|| true`), as for an
            // Actions step without `##[error]`. The line goes on to the matchers (a check's
            // candidates wait for it).
            Some(b'T')
                if text.starts_with("The command \"")
                    && rules::travis_command_failed(text) == Some(false) =>
            {
                if let Some(start) = self.travis_cmd.take() {
                    self.sink.drop_from(start);
                }
            }
            Some(b' ') if text.starts_with(" > [") && text.ends_with(':') => {
                self.docker_summary = true;
            }
            Some(b'-') if text == "------" => self.docker_summary = false,
            Some(b'0'..=b'9') if self.docker_summary => {
                if let Some((secs, rest)) = text.split_once(' ')
                    && secs.contains('.')
                    && secs.bytes().all(|c| c.is_ascii_digit() || c == b'.')
                {
                    text = rest;
                }
            }
            _ => {}
        }
        let line = Line::new(text, self.line_no, marker);
        let before = self.sink.len();
        self.rules.line(&line, &self.ctx, &mut self.sink);
        if let Some(task) = prefix.task {
            self.task_line(task, text, before);
        }
    }

    /// A line under a concurrent task's prefix: remembers the reports it produced, and when the
    /// task reports its exit (concurrently's and nps's `<command> exited with code N`), forgets
    /// them, taking them back first if the task exited 0 (a `tsc … || echo "Ignoring TypeScript
    /// Errors"` in victory's build: the errors were tolerated).
    fn task_line(&mut self, task: &str, text: &str, before: usize) {
        let at = self.task_reports.iter().position(|(t, _)| t == task);
        if let Some(code) = text
            .rsplit_once(" exited with code ")
            .map(|(_, c)| c.trim())
        {
            if let Some(i) = at {
                let (_, keys) = self.task_reports.remove(i);
                if code == "0" {
                    self.sink.retract(&keys);
                }
            }
            return;
        }
        let new = self.sink.keys_since(before);
        if new.is_empty() {
            return;
        }
        let i = match at {
            Some(i) => i,
            None => {
                if self.task_reports.len() == MAX_TASKS {
                    self.task_reports.remove(0);
                }
                self.task_reports.push((task.to_string(), Vec::new()));
                self.task_reports.len() - 1
            }
        };
        let keys = &mut self.task_reports[i].1;
        for k in new {
            if keys.len() < MAX_TASK_REPORTS {
                keys.push(k);
            }
        }
    }

    /// `FAIL\t<import path>\t1.2s`, `FAIL\t<import path> [build failed]`, `ok  \t<import path>`:
    /// `go test` finished a package.
    fn go_package_line(&mut self, text: &str) {
        let rest = text
            .strip_prefix("FAIL\t")
            .or_else(|| text.strip_prefix("ok  \t"));
        let Some(rest) = rest else { return };
        let import_path = rest.split(['\t', ' ']).next().unwrap_or("");
        self.sink.go_package_done(path::go_package_dir(import_path));
    }

    /// Tells the sink where relative paths are relative to: the `pnpm -r` package of the line,
    /// else the directory `make` or `ninja` entered.
    fn update_cwd(&mut self) {
        // The Maven module of JUnit frames is the JVM matcher's own business (it follows
        // Surefire's report directory and Gradle's tasks).
        let cwd = match &self.package_dir {
            Some(dir) => path::normalize_dir(dir, None).map(path::Dir::Repo),
            None => match self.dirs.current() {
                path::Dir::Unknown => self.step_dir.clone().map(path::Dir::Repo),
                d => Some(d),
            },
        };
        self.sink.set_cwd(cwd);
    }

    /// Number of distinct reports found so far.
    pub fn report_count(&self) -> usize {
        self.sink.len()
    }

    /// [`finish`](Parser::finish), and how many findings of further locations the
    /// [`MAX_REPORTS`] cap left out: a reader must be told that more errors were found than
    /// shown.
    pub fn finish_parsed(mut self) -> Parsed {
        if !self.partial.is_empty() {
            let whole = std::mem::take(&mut self.partial);
            self.feed_line(&whole);
        }
        self.step_boundary();
        let left_out = self.sink.left_out();
        Parsed {
            reports: self.sink.into_reports(),
            left_out,
        }
    }

    /// Ends the log: flushes a trailing partial line and any open block.
    pub fn finish(self) -> Vec<BugReport> {
        self.finish_parsed().reports
    }
}

/// The last line CI runners print for a job that passed: Jenkins (`Finished: SUCCESS`),
/// Travis CI (`Done. Your build exited with 0.`) and GitLab CI (`Job succeeded`). Never a
/// tool's own success line (Maven's `BUILD SUCCESS` ends one module of a job that may fail
/// later), and never Jenkins' `UNSTABLE`, which is failed tests.
fn is_success_verdict(text: &str) -> bool {
    matches!(
        text.trim_end(),
        "Finished: SUCCESS" | "Done. Your build exited with 0." | "Job succeeded"
    )
}

/// What a whole parse found.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// At most [`MAX_REPORTS`], in order of first appearance.
    pub reports: Vec<BugReport>,
    /// Findings of further locations left out by the cap (0 when everything is in `reports`).
    pub left_out: u64,
}

/// [`parse_reader`], also saying how many findings the report cap left out.
pub fn parse_reader_parsed<R: std::io::Read>(
    mut reader: R,
    opts: &ParseOptions,
) -> std::io::Result<Parsed> {
    let mut parser = Parser::new(opts);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => parser.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(parser.finish_parsed())
}

/// Parses a log from a reader, streaming, in bounded memory.
pub fn parse_reader<R: std::io::Read>(
    reader: R,
    opts: &ParseOptions,
) -> std::io::Result<Vec<BugReport>> {
    parse_reader_parsed(reader, opts).map(|p| p.reports)
}

/// Parses a log held in memory.
pub fn parse_bytes(log: &[u8], opts: &ParseOptions) -> Vec<BugReport> {
    let mut parser = Parser::new(opts);
    parser.feed(log);
    parser.finish()
}

/// Parses a log held in a string.
pub fn parse_str(log: &str, opts: &ParseOptions) -> Vec<BugReport> {
    parse_bytes(log.as_bytes(), opts)
}

#[cfg(test)]
mod wrapper_tests {
    use super::*;

    fn parse(log: &str) -> Vec<(String, u32)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number))
            .collect()
    }

    #[test]
    fn a_job_its_runner_calls_successful_yields_nothing() {
        // Errors of a step the job tolerated (a setup script compiling fixture projects), then
        // each runner's own verdict.
        let errors = "[ERROR] /builds/workspace/astor/examples/lang_55/src/java/org/apache/commons/lang/enum/Enum.java:[17,33] as of release 5, 'enum' is a keyword, and may not be used as an identifier\n\
                      src/app.py:3:1: F401 `os` imported but unused\n";
        for verdict in [
            "Finished: SUCCESS",
            "\x1b[32;1mDone. Your build exited with 0.\x1b[0m",
            "Job succeeded",
        ] {
            assert_eq!(parse(&format!("{errors}{verdict}\n")), vec![], "{verdict}");
        }
        // Failed and unstable jobs keep their reports; so do lines after the verdict.
        for verdict in [
            "Finished: FAILURE",
            "Finished: UNSTABLE",
            "Done. Your build exited with 1.",
            "Job failed: exit code 1",
            "[INFO] BUILD SUCCESS",
        ] {
            assert_eq!(parse(&format!("{errors}{verdict}\n")).len(), 2, "{verdict}");
        }
        assert_eq!(parse(&format!("Finished: SUCCESS\n{errors}")).len(), 2);
    }

    #[test]
    fn gh_run_view_columns_are_cut_from_the_start_of_a_log_on() {
        let log = "lint\tRun eslint\t\u{feff}2025-09-24T05:29:59.8735278Z /home/runner/work/R/R/src/a.tsx\n\
                   lint\tRun eslint\t2025-09-24T05:29:59.8737924Z ##[error]  49:21  error  Unexpected any  @typescript-eslint/no-explicit-any\n";
        assert_eq!(parse(log), vec![("src/a.tsx".to_string(), 49)]);
        // The same form after 64 lines of something else is not looked for.
        let late = format!("{}{log}", "x\n".repeat(64));
        assert_eq!(parse(&late), vec![]);
    }

    #[test]
    fn an_actions_job_that_ends_without_an_error_annotation_passed() {
        // A test runner's console output (a stack trace logged by a passing test), then the
        // runner's clean-up at the end of the job.
        let logged = "2025-10-15T22:04:28.8766382Z       Error: simulated\n\
                      2025-10-15T22:04:28.8766382Z         at Object.f (/home/runner/work/R/R/test/a.js:29:44)\n\
                      2025-10-15T22:04:28.8766382Z src/app.py:3:1: F401 `os` imported but unused\n";
        let end = "2025-10-15T22:04:45.3060316Z Cleaning up orphan processes\n";
        assert_eq!(parse(&format!("{logged}{end}")), vec![]);
        let failed = "2025-10-15T22:04:44.1Z ##[error]Process completed with exit code 1.\n";
        assert!(!parse(&format!("{logged}{failed}{end}")).is_empty());
        // A log cut before the job's end keeps what it found.
        assert!(!parse(logged).is_empty());
        // Copied from the web page, the failed step's annotation reads `Error: `.
        let copied = "Error: Process completed with exit code 1.\n";
        assert!(!parse(&format!("{logged}{copied}{end}")).is_empty());
    }

    #[test]
    fn an_actions_step_that_ends_without_an_error_annotation_tolerated_its_errors() {
        // mindmeld's `./lintme` ignores the status of `black --check` and flake8; the job then
        // fails in its test step.
        let lint = "2022-04-13T21:23:11.8Z ##[group]Run ./lintme\n\
                    2022-04-13T21:23:11.8Z ##[endgroup]\n\
                    2022-04-13T21:23:12.4Z would reformat mindmeld/app.py\n\
                    2022-04-13T21:23:29.5Z Oh no! \u{1f4a5} \u{1f494} \u{1f4a5}\n\
                    2022-04-13T21:23:29.5Z 94 files would be reformatted, 86 files would be left unchanged.\n\
                    2022-04-13T21:23:34.8Z mindmeld/constants.py:31:1: E302 expected 2 blank lines, found 1\n\
                    2022-04-13T21:23:34.9Z ##[group]Nested group a tool opened\n\
                    2022-04-13T21:23:34.9Z src/app.py:3:1: F401 `os` imported but unused\n";
        let next = "2022-04-13T21:24:44.6Z ##[group]Run pytest\n\
                    2022-04-13T21:24:44.6Z ##[endgroup]\n\
                    2022-04-13T21:24:50.1Z tests/test_a.py:7:1: F821 undefined name 'x'\n\
                    2022-04-13T21:46:50.9Z ##[error]Process completed with exit code 1.\n";
        assert_eq!(
            parse(&format!("{lint}{next}")),
            vec![("tests/test_a.py".to_string(), 7)]
        );
        // The same step failing keeps its findings, the nested group's too.
        let failed = "2022-04-13T21:23:35.0Z ##[error]Process completed with exit code 1.\n";
        assert_eq!(parse(&format!("{lint}{failed}{next}")).len(), 4);
        // The last step of a (possibly cut) log is not judged.
        assert_eq!(parse(lint).len(), 3);
    }

    #[test]
    fn a_scripts_own_run_group_does_not_end_the_step_it_runs_in() {
        // opencv's test step runs a Python script that prints `::group::Run opencv_test_core`
        // around each test binary: the runner shows it as `##[group]Run …` too, but without the
        // `shell:` line (or `with:`/`env:`) its real step headers hold.
        let step = "2025-11-16T11:08:36.1Z ##[group]Run python run_all.py\n\
                    2025-11-16T11:08:36.1Z python run_all.py\n\
                    2025-11-16T11:08:36.1Z shell: /usr/bin/bash -e {0}\n\
                    2025-11-16T11:08:36.1Z env:\n\
                    2025-11-16T11:08:36.1Z   PYTHONPATH: build/python_loader\n\
                    2025-11-16T11:08:36.1Z ##[endgroup]\n\
                    2025-11-16T11:08:36.2Z src/a.py:3:1: F401 `os` imported but unused\n";
        let script_group = "2025-11-16T11:08:36.7Z ##[group]Run opencv_test_core\n\
                            2025-11-16T11:08:36.7Z Env: {}\n\
                            2025-11-16T11:08:37.0Z tests/test_b.py:7:1: F821 undefined name 'x'\n\
                            2025-11-16T11:12:29.7Z ##[endgroup]\n";
        let failed = "2025-11-16T11:12:30.1Z ##[error]Process completed with exit code 1.\n";
        let next = "2025-11-16T11:12:30.2Z ##[group]Run echo done\n\
                    2025-11-16T11:12:30.2Z echo done\n\
                    2025-11-16T11:12:30.2Z shell: /usr/bin/bash -e {0}\n\
                    2025-11-16T11:12:30.2Z ##[endgroup]\n\
                    2025-11-16T11:12:30.3Z done\n";
        assert_eq!(
            parse(&format!("{step}{script_group}{failed}{next}")),
            vec![
                ("src/a.py".to_string(), 3),
                ("tests/test_b.py".to_string(), 7)
            ]
        );
        // The same step passing: its header's `shell:` line makes `Run echo done` the next step,
        // so the findings the step tolerated are taken back.
        assert_eq!(parse(&format!("{step}{script_group}{next}")), vec![]);
    }

    #[test]
    fn a_repository_the_travis_job_clones_is_not_the_repositorys() {
        // yahoo/samoa's Travis job clones apache/incubator-s4 and runs its Gradle build, whose
        // script fails: nothing of samoa's to point at.
        let clone = "$ git clone --depth=50 --branch=master https://github.com/yahoo/samoa.git yahoo/samoa\n$ cd yahoo/samoa\n";
        let other = "$ git clone https://github.com/apache/incubator-s4.git\nCloning into 'incubator-s4'...\n$ cd incubator-s4\n";
        let fail = "FAILURE: Build failed with an exception.\n\n* Where:\nBuild file '/home/travis/build/yahoo/samoa/incubator-s4/build.gradle' line: 159\n\n* What went wrong:\nA problem occurred evaluating root project 's4'.\n> Could not find property 'manifest' on project ':s4-base'.\n\n";
        assert_eq!(parse(&format!("{clone}{other}{fail}")), vec![]);
        // Travis' logs of 2015 print no clone: the system information, then `$ cd owner/repo`.
        let old = "travis_fold:start:system_info\nBuild language: java\ntravis_fold:end:system_info\r\x1b[0K\n$ cd yahoo/samoa\n";
        assert_eq!(parse(&format!("{old}{other}{fail}")), vec![]);
        // The same failure in the repository's own build script is reported.
        let own = fail.replace("samoa/incubator-s4/", "samoa/");
        assert_eq!(
            parse(&format!("{clone}{other}{own}")),
            vec![("build.gradle".to_string(), 159)]
        );
        assert_eq!(
            super::clone_dest("git clone https://github.com/o/r.git --depth 1 --branch v2")
                .as_deref(),
            Some("r")
        );
    }

    #[test]
    fn a_repository_a_step_clones_is_not_the_jobs() {
        // inventree/InvenTree's Actions job 2506527647 clones its Python client and runs the
        // client's tests against the server; their failures are the client's.
        let log = "2022-06-16T03:33:17.2633160Z ##[group]Run git clone --depth 1 https://github.com/inventree/inventree-python ./inventree-python\n2022-06-16T03:33:17.2689923Z shell: /usr/bin/bash -e {0}\n2022-06-16T03:33:17.2689923Z ##[endgroup]\n2022-06-16T03:33:36.9035865Z ##[group]Run cd inventree-python\n2022-06-16T03:33:36.9035865Z shell: /usr/bin/bash -e {0}\n2022-06-16T03:33:36.9035865Z ##[endgroup]\n2022-06-16T03:33:38.2252612Z Traceback (most recent call last):\n2022-06-16T03:33:38.2252612Z   File \"/home/runner/work/InvenTree/InvenTree/inventree-python/test/test_api.py\", line 28, in test_failed_logins\n2022-06-16T03:33:38.2252612Z     a = api.InvenTreeAPI(SERVER)\n2022-06-16T03:33:38.2252612Z ValueError: bad server\n2022-06-16T03:33:38.2252612Z ##[error]Process completed with exit code 1.\n";
        assert_eq!(parse(log), vec![]);
        assert_eq!(
            clone_dest("git clone --depth 1 https://github.com/o/client.git").as_deref(),
            Some("client")
        );
        assert_eq!(
            clone_dest("git clone -b v2 git@github.com:o/r.git vendor/r && cd vendor/r").as_deref(),
            Some("vendor/r")
        );
        assert_eq!(clone_dest("git clone https://github.com/o/r /tmp/r"), None);
    }

    #[test]
    fn a_docker_mount_of_the_jobs_directory_is_the_checkout() {
        // cmusatyalab/openface's Travis job (LogChunks 196472359): nose runs in the container.
        let log = "$ git clone --depth=50 https://github.com/cmusatyalab/openface.git cmusatyalab/openface\n$ cd cmusatyalab/openface\n$ docker run -v $PWD:/root/src/openface bamos/openface \\\nFAIL: tests.t.test_a\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/usr/lib/python2.7/dist-packages/nose/case.py\", line 197, in runTest\n    self.test(*self.arg)\n  File \"/root/src/openface/tests/t.py\", line 50, in test_a\n    assert p.returncode == 0\nAssertionError: \n";
        assert_eq!(parse(log), vec![("tests/t.py".to_string(), 50)]);
        for cmd in [
            "docker run --rm -v \"$(pwd)\":/app:ro img pytest",
            "docker run --volume=${PWD}:/app img",
            "docker run --mount type=bind,source=$PWD,target=/app img",
            "sudo docker run -it -v `pwd`:/app/ img",
        ] {
            assert_eq!(docker_mount(cmd), Some("/app"), "{cmd}");
        }
        for cmd in [
            "docker run -v /var/run/docker.sock:/var/run/docker.sock img",
            "docker run -v $PWD/data:/data img",
            "docker run -v cache:/root/.cache img",
            "docker run -v $PWD:/ img",
            "echo -v $PWD:/app",
        ] {
            assert_eq!(docker_mount(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn a_travis_cd_moves_the_jobs_later_commands() {
        // f90nml's Travis job: `cd test`, then a unittest run names `test_f90nml.py`.
        let clone = "$ git clone --depth=50 --branch=master https://github.com/marshallward/f90nml.git marshallward/f90nml\n$ cd marshallward/f90nml\n";
        let cd = "$ cd test\n";
        let run = "$ coverage run --source f90nml test_f90nml.py\nE\n======================================================================\nERROR: test_multiline_index (__main__.Test)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"test_f90nml.py\", line 386, in test_multiline_index\n    test_nml = f90nml.read('multiline_index.nml')\nFileNotFoundError: [Errno 2] No such file or directory: 'multiline_index.nml'\n\n----------------------------------------------------------------------\nRan 1 test in 0.1s\n";
        assert_eq!(
            parse(&format!("{clone}{cd}{run}")),
            vec![("test/test_f90nml.py".to_string(), 386)]
        );
        // Back to the clone, and up out of `test`; a `cd` the parser cannot follow leaves the
        // directory unknown (the repository root is assumed, as before).
        for back in [
            "$ cd marshallward/f90nml\n",
            "$ cd ..\n",
            "$ cd $TRAVIS_BUILD_DIR\n",
        ] {
            assert_eq!(
                parse(&format!("{clone}{cd}{back}{run}")),
                vec![("test_f90nml.py".to_string(), 386)],
                "{back}"
            );
        }
        assert_eq!(
            parse(&format!("{clone}{cd}$ cd ~/elsewhere\n{run}")),
            vec![("test_f90nml.py".to_string(), 386)]
        );
        // Without Travis' clone echo a `$ cd` is someone's shell session: not followed.
        assert_eq!(
            parse(&format!("{cd}{run}")),
            vec![("test_f90nml.py".to_string(), 386)]
        );
    }

    #[test]
    fn a_concurrent_task_that_exits_0_tolerated_its_errors() {
        // victory's build: lerna `--stream` runs nps tasks concurrently, each `tsc … || echo
        // "Ignoring TypeScript Errors"`; tsc's problem matcher marks the error lines.
        let tsc = "2022-06-22T18:46:54.1Z ##[error]victory-bar: [types.create-lib] src/v37/a.stories.tsx(4,26): error TS2307: Cannot find module 'x' or its corresponding type declarations\n\
                   2022-06-22T18:46:54.1Z victory-bar: [types.create-lib] Ignoring TypeScript Errors\n";
        let other = "2022-06-22T18:46:54.2Z victory-box: [types.create-lib] src/b.ts(1,1): error TS2304: Cannot find name 'y'.\n";
        let ok = "2022-06-22T18:46:54.3Z victory-bar: [types.create-lib] nps types.create-lib exited with code 0\n";
        let failed = "2022-06-22T18:46:54.3Z victory-bar: [types.create-lib] nps types.create-lib exited with code 2\n";
        assert_eq!(
            parse(&format!("{tsc}{other}{ok}")),
            vec![("src/b.ts".to_string(), 1)]
        );
        assert_eq!(parse(&format!("{tsc}{other}{failed}")).len(), 2);
        // A later exit of the same task does not take back what a failed run found.
        assert_eq!(parse(&format!("{tsc}{failed}{ok}")).len(), 1);
    }

    #[test]
    fn make_directories_place_relative_paths() {
        let log = "make[1]: Entering directory '/home/runner/work/R/R/build'\n\
                   ../src/x.c:3:5: error: 'y' undeclared (first use in this function)\n\
                   make[1]: Leaving directory '/home/runner/work/R/R/build'\n\
                   make[1]: Entering directory '/usr/src/linux-headers-5.4.0'\n\
                   x.c:9:1: error: expected ';' before '}' token\n";
        assert_eq!(parse(log), vec![("src/x.c".to_string(), 3)]);
        // meson: ninja names the build directory, the compiler prints `../`.
        let log = "ninja: Entering directory `build'\n\
                   ../lib/a.c:7:2: error: unknown type name 'foo'\n";
        assert_eq!(parse(log), vec![("lib/a.c".to_string(), 7)]);
    }

    #[test]
    fn generated_files_and_node_core_frames_are_never_reported() {
        let log = "conftest.c:12:3: error: unknown type name 'not_a_type'\n\
                   CMakeFiles/CMakeScratch/TryCompile-x/src.c:1:1: error: expected identifier\n";
        assert!(parse(log).is_empty());
        // LogChunks electron: Node 4 prints its own modules without a directory.
        let log = "Error: Cannot find module 'fast-deep-equal'\n    at Function.Module._resolveFilename (module.js:325:15)\n    at Function.Module._load (module.js:276:25)\n";
        assert!(parse(log).is_empty());
    }

    #[test]
    fn wrapped_lines_reach_the_matchers() {
        let log = "[2021-03-04T10:11:12.123Z] [Build on CentOS 7] src/a.c:3:5: error: 'y' undeclared\n\
                   [Pipeline] sh\n\
                   #12 3.456 src/b.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\
                   web-1  | \\x1b[31msrc/c.py:4:1: F401 'os' imported but unused\\x1b[0m\n";
        assert_eq!(
            parse(log),
            vec![
                ("src/a.c".to_string(), 3),
                ("src/b.ts".to_string(), 3),
                ("src/c.py".to_string(), 4)
            ]
        );
        // pnpm -r: the package directory is where the tool ran.
        let log = "packages/core build: src/x.ts(2,1): error TS2304: Cannot find name 'y'.\n";
        assert_eq!(parse(log), vec![("packages/core/src/x.ts".to_string(), 2)]);
        // Azure: an issue command carries the tool's message.
        let log = "##[section]Starting: Build\n##vso[task.setvariable variable=x]1\n##vso[task.logissue type=error]src/a.ts(1,1): error TS1005: ';' expected.\n";
        assert_eq!(parse(log), vec![("src/a.ts".to_string(), 1)]);
    }

    #[test]
    fn maven_module_of_surefire_reports() {
        // LogChunks retrofit: the report directory names the module the JUnit frames belong to.
        let log = "[INFO] Surefire report directory: /home/travis/build/square/retrofit/retrofit/target/surefire-reports\n\
                   Tests run: 68, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 2.453 sec <<< FAILURE!\n\
                   baseUrlInvalidThrows(retrofit2.RetrofitTest)  Time elapsed: 0.005 sec  <<< FAILURE!\n\
                   java.lang.AssertionError: \n\
                   \tat retrofit2.RetrofitTest.baseUrlInvalidThrows(RetrofitTest.java:697)\n\n";
        assert_eq!(
            parse(log),
            vec![(
                "retrofit/src/test/java/retrofit2/RetrofitTest.java".to_string(),
                697
            )]
        );
    }

    #[test]
    fn go_test_paths_join_their_package() {
        // LogChunks go-ethereum: `go test ./...` names the package after its failures.
        let log = "--- FAIL: TestSimulation (10.06s)\n    peer_test.go:235: failed to start the first server.\nFAIL\nFAIL\tgithub.com/ethereum/go-ethereum/whisper/whisperv6\t26.474s\n";
        assert_eq!(
            parse(log),
            vec![("whisper/whisperv6/peer_test.go".to_string(), 235)]
        );
    }

    #[test]
    fn the_repositorys_own_package_in_site_packages_maps_back() {
        // flake8 names the package's directory in the checkout; the traceback then runs the
        // copy tox installed.
        let log = "mypkg/core.py:3:1: F401 'os' imported but unused\n\
                   Traceback (most recent call last):\n  \
                   File \"/home/runner/work/R/R/tests/test_core.py\", line 5, in test_it\n    \
                   core.run()\n  \
                   File \"/home/runner/work/R/R/.tox/py39/lib/python3.9/site-packages/mypkg/core.py\", line 10, in run\n    \
                   raise ValueError(\"x\")\n\
                   ValueError: x\n";
        assert_eq!(
            parse(log),
            vec![
                ("mypkg/core.py".to_string(), 3),
                ("mypkg/core.py".to_string(), 10)
            ]
        );
        // Without that evidence the installed copy is a dependency like any other.
        let log = "Traceback (most recent call last):\n  \
                   File \"/home/runner/work/R/R/tests/test_core.py\", line 5, in test_it\n    \
                   core.run()\n  \
                   File \"/home/runner/work/R/R/.tox/py39/lib/python3.9/site-packages/mypkg/core.py\", line 10, in run\n    \
                   raise ValueError(\"x\")\n\
                   ValueError: x\n";
        assert_eq!(parse(log), vec![("tests/test_core.py".to_string(), 5)]);
    }
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn a_step_that_cds_first_roots_its_relative_paths() {
        let log = "##[group]Run cd web; ruff check .\nsrc/m.py:1:8: F401 [*] `os` imported but unused\nweb/src/n.py:1:8: F401 [*] `os` imported but unused\n##[error]Process completed with exit code 1.\n##[group]Run cd \"$DIR\" && ruff check .\nsrc/o.py:1:8: F401 [*] `os` imported but unused\n";
        let r = parse_str(log, &ParseOptions::default());
        let paths: Vec<_> = r.iter().map(|r| r.file_path.as_str()).collect();
        assert_eq!(paths, ["web/src/m.py", "web/src/n.py", "src/o.py"]);
        assert_eq!(
            step_cd("cd packages/markitdown; hatch test").as_deref(),
            Some("packages/markitdown")
        );
        assert_eq!(step_cd("cd ../other && make"), None);
    }

    #[test]
    fn a_checkout_path_input_is_the_repository_root() {
        // bubbletea's Windows lint job (LogSage): the repository is checked out into
        // `charmbracelet/bubbletea`, a second checkout brings shared configuration, and
        // golangci-lint runs with `--path-prefix=charmbracelet/bubbletea`.
        let log = "2025-04-14T09:20:04.9440092Z ##[group]Run actions/checkout@v4\n2025-04-14T09:20:04.9440092Z with:\n2025-04-14T09:20:04.9440092Z   path: charmbracelet/bubbletea\n2025-04-14T09:20:04.9440092Z   repository: charmbracelet/bubbletea\n2025-04-14T09:20:04.9440092Z ##[endgroup]\n2025-04-14T09:20:04.9440092Z ##[group]Run actions/checkout@v4\n2025-04-14T09:20:04.9440092Z with:\n2025-04-14T09:20:04.9440092Z   repository: charmbracelet/meta\n2025-04-14T09:20:04.9440092Z   path: charmbracelet/meta\n2025-04-14T09:20:04.9440092Z ##[endgroup]\n2025-04-14T09:20:39.8585544Z ##[group]Run golangci/golangci-lint-action@v7\n2025-04-14T09:21:13.6745112Z ##[error]charmbracelet\\bubbletea\\tty_windows.go:59:12: G302: Expect file permissions to be 0600 or less (gosec)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "tty_windows.go");
    }

    #[test]
    fn an_unpacked_source_distribution_is_the_repository() {
        // LogChunks purescript (Travis): the job builds its sdist, unpacks it into `sdist-test`
        // and compiles there.
        let build = "+stack --no-terminal --jobs=2 sdist --tar-dir sdist-test\n\
                     +tar -xzf sdist-test/purescript-0.13.2.tar.gz -C sdist-test --strip-components=1\n";
        let error = "/home/travis/build/purescript/purescript/sdist-test/src/Language/PureScript/Environment.hs:528:3: error:\n    • Couldn't match type ‘Bool -> TypeClassData’ with ‘TypeClassData’\n";
        let r = parse_str(&format!("{build}{error}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "src/Language/PureScript/Environment.hs");
        // Without the sdist, an unpacked archive is someone else's sources.
        let other =
            "+tar -xzf sdist-test/purescript-0.13.2.tar.gz -C sdist-test --strip-components=1\n";
        let r = parse_str(&format!("{other}{error}"), &ParseOptions::default());
        assert_eq!(
            r[0].file_path,
            "sdist-test/src/Language/PureScript/Environment.hs"
        );
    }

    #[test]
    fn a_step_run_after_the_job_failed_prints_what_failed() {
        // JOSM (former fresh10): an `if: failure()` step cats the JUnit reports and passes.
        let log = "2022-06-15T15:26:46.6494756Z ##[error]Process completed with exit code 1.\n2022-06-15T15:26:46.6534815Z ##[group]Run grep -L ', Failures: 0, Skipped: ' test/report/*.txt | xargs cat\n2022-06-15T15:26:46.6535270Z \u{1b}[36;1mgrep -L ', Failures: 0, Skipped: ' test/report/*.txt | xargs cat\u{1b}[0m\n2022-06-15T15:26:46.6594387Z shell: /usr/bin/bash --noprofile --norc -e -o pipefail {0}\n2022-06-15T15:26:46.6595744Z   JAVA_HOME: /opt/hostedtoolcache/Java_Zulu_jdk/8.0.332-9/x64\n2022-06-15T15:26:46.6596020Z ##[endgroup]\n2022-06-15T15:26:46.6976592Z Testcase: org.openstreetmap.josm.gui.help.HelpContentReaderTest\n2022-06-15T15:26:46.6977450Z Test: testFetchHelpTopicContentNominal() took 15 sec(s) FAILED: java.net.SocketTimeoutException: connect timed out\n2022-06-15T15:26:46.6978154Z org.openstreetmap.josm.gui.help.HelpContentReaderException: java.net.SocketTimeoutException: connect timed out\n2022-06-15T15:26:46.6978981Z \tat org.openstreetmap.josm.gui.help.HelpContentReader.fetchHelpTopicContent(HelpContentReader.java:55)\n2022-06-15T15:26:46.6980163Z \tat org.openstreetmap.josm.gui.help.HelpContentReaderTest.testFetchHelpTopicContentNominal(HelpContentReaderTest.java:39)\n2022-06-15T15:26:46.6980784Z Caused by: java.net.SocketTimeoutException: connect timed out\n2022-06-15T15:26:46.6986232Z \tat org.openstreetmap.josm.gui.help.HelpContentReader.fetchHelpTopicContent(HelpContentReader.java:48)\n2022-06-15T15:26:46.6986828Z \t... 1 more\n2022-06-15T15:26:46.7084935Z ##[group]Run actions/upload-artifact@v2\n2022-06-15T15:26:46.7085231Z with:\n2022-06-15T15:26:46.7085515Z   name: Ant reports for JOSM  on java 8 on ubuntu-latest\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 55);
        // The same step before any failure tolerated what it printed.
        let first = log.lines().next().unwrap_or_default();
        let before = log.replacen(&format!("{first}\n"), "", 1);
        assert_eq!(parse_str(&before, &ParseOptions::default()), []);
    }

    #[test]
    fn findings_of_a_travis_command_that_exited_0_were_tolerated() {
        let lint = "$ flake8 . --exit-zero\nsrc/a.py:3:1: F401 'os' imported but unused\n";
        let passed = "\u{1b}[32;1mThe command \"flake8 . --exit-zero\" exited with 0.\u{1b}[0m\n";
        let test = "$ pytest\nsrc/b.py:4:1: F821 undefined name 'x'\n";
        let failed = "\u{1b}[31;1mThe command \"pytest\" exited with 1.\u{1b}[0m\n";
        let r = parse_str(
            &format!("{lint}{passed}{test}{failed}"),
            &ParseOptions::default(),
        );
        let paths: Vec<_> = r.iter().map(|r| r.file_path.as_str()).collect();
        assert_eq!(paths, ["src/b.py"]);
        // Findings before the command are not its own.
        let r = parse_str(&format!("{test}{lint}{passed}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
    }

    #[test]
    fn findings_past_the_cap_are_counted_not_kept() {
        // The same real ruff line as in the crate docs, at 1,200 distinct locations.
        let log: String = (1..=1_200)
            .map(|i| format!("src/m{i}.py:1:8: F401 [*] `os` imported but unused\n"))
            .collect();
        let mut p = Parser::new(&ParseOptions::default());
        p.feed(log.as_bytes());
        // A location already kept is not counted again.
        p.feed(b"src/m1.py:1:8: F401 [*] `os` imported but unused\n");
        let parsed = p.finish_parsed();
        assert_eq!(parsed.reports.len(), MAX_REPORTS);
        assert_eq!(parsed.left_out, 200);
        let few = parse_reader_parsed(
            &b"src/a.py:1:8: F401 [*] `os` imported but unused\n"[..],
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!((few.reports.len(), few.left_out), (1, 0));
    }
}
