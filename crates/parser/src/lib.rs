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
//! normalised (`normalize`: BOM, Actions timestamp, ANSI escapes, `\r` overwrites, lossy UTF-8;
//! `##[error]` prefixes are removed, `##[warning]`/`##[notice]`/`##[debug]`/`##[command]` lines are
//! dropped, `##[group]Run <cmd>` records the step being run). Then one matcher per toolchain
//! (`rules/python.rs`, `rust.rs`, `js.rs`, `go.rs`, `jvm.rs`, `c.rs`, `generic.rs`) looks at it.
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
//! | Failed assertion, failing test (pytest, unittest, `cargo test` panic, Jest/Vitest, `go test`, JUnit), uncaught runtime exception with a frame in the repo | `LOGIC` |
//! | Parse errors: Python `SyntaxError`, rustc `expected …`/unclosed delimiter, `TS1xxx`, ESLint `Parsing error`, Node/Babel `SyntaxError`, gcc/clang `expected …`, javac `';' expected`, go `syntax error`, ruff `invalid-syntax`, flake8 `E999 SyntaxError` | `SYNTAX` |
//! | Python `IndentationError` / `TabError` (also via flake8 `E999`, ruff indentation parse errors) | `INDENTATION` |
//! | `ModuleNotFoundError`/`ImportError`, rustc `E0432`/`E0433` (crate or module)/`E0463`/`E0583`, `TS2307`/`TS2305`/`TS2792`/`TS7016`, mypy `import-not-found`/`import-untyped`, Node `Cannot find module`, go missing packages (also `missing go.sum entry`, a module that failed to download `mod@v1.2: Get …`), javac `package … does not exist`/`cannot access`, missing C/C++ headers | `IMPORT` |
//! | Other compiler and type-checker errors (rustc, tsc, mypy, javac, kotlinc, gcc/clang, `go build`) | `TYPE_ERROR` |
//! | Linter rule violations: flake8, ruff, pylint, ESLint, clippy (lint named by `-D` or `#[deny]`), `go vet`, golangci-lint (`(linter)`; `(compile)`/`(typecheck)` are `TYPE_ERROR`), staticcheck (`(SA4006)`), an untagged finding of a step running a Go linter, warnings denied by `-D warnings` / `-Werror` | `LINTING` |
//! | JS toolchains: mocha / Jasmine / tape failures → `LOGIC`; TSLint, stylelint, `path:line message (rule)` lint scripts → `LINTING`; Sass, PostCSS `CssSyntaxError`, CoffeeScript compile errors → `SYNTAX` (Sass `Undefined variable` → `TYPE_ERROR`) | as listed |
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
//! | 0.4 | The generic `path:line[:col]: error…` fallback |
//!
//! # Paths
//!
//! Runner checkout prefixes (`/home/runner/work/R/R/`, `/__w/R/R/`, `D:\a\R\R\`,
//! `/Users/runner/work/R/R/`, `/github/workspace/`, Travis `/home/travis/build/O/R/`),
//! [`ParseOptions::workspace`] and, failing that, the Jenkins workspace the log names
//! (`Building in workspace /var/lib/jenkins/workspace/job`) are stripped;
//! a path that is still absolute or escapes with `..` is never emitted.

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
}

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
    fn feed_text_line(&mut self, raw: &str) {
        if raw.len() > MAX_LINE {
            // The cut may split a character: the lossy path decides.
            return self.feed_line(raw.as_bytes());
        }
        let mut scratch = std::mem::take(&mut self.text_scratch);
        match normalize::normalize_str(raw, &mut scratch) {
            Some(text) => {
                self.line_no += 1;
                self.process(text);
            }
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
        self.line_no += 1;
        let mut scratch = std::mem::take(&mut self.scratch);
        {
            let text = normalize::normalize_line(raw, &mut scratch);
            self.process(&text);
        }
        self.scratch = scratch;
    }

    fn process(&mut self, text: &str) {
        let mut marker = Marker::None;
        let mut text = text;
        if let Some(rest) = text.strip_prefix("##[") {
            let Some((kind, body)) = rest.split_once(']') else {
                return;
            };
            match kind {
                "error" => {
                    marker = Marker::Error;
                    text = body;
                }
                "group" => {
                    marker = Marker::Group;
                    text = body;
                    self.ctx.step.clear();
                    if let Some(cmd) = body.strip_prefix("Run ") {
                        let cmd = sink::truncate_chars(cmd, 200);
                        self.ctx.step.push_str(&cmd.to_ascii_lowercase());
                    }
                    self.rules.step_boundary(&mut self.sink);
                }
                "endgroup" => return,
                // Warnings, notices, debug output and echoed commands are never errors.
                _ => return,
            }
        } else if text.starts_with("[command]") {
            return;
        }
        let line = Line::new(text, self.line_no, marker);
        self.rules.line(&line, &self.ctx, &mut self.sink);
    }

    /// Number of distinct reports found so far.
    pub fn report_count(&self) -> usize {
        self.sink.len()
    }

    /// Ends the log: flushes a trailing partial line and any open block.
    pub fn finish(mut self) -> Vec<BugReport> {
        if !self.partial.is_empty() {
            let whole = std::mem::take(&mut self.partial);
            self.feed_line(&whole);
        }
        self.rules.step_boundary(&mut self.sink);
        self.sink.into_reports()
    }
}

/// Parses a log from a reader, streaming, in bounded memory.
pub fn parse_reader<R: std::io::Read>(
    mut reader: R,
    opts: &ParseOptions,
) -> std::io::Result<Vec<BugReport>> {
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
    Ok(parser.finish())
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
