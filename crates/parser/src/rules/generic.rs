//! The `path:line[:col]: …` family, parsed once and dispatched by file extension to the
//! toolchain that prints it (Python linters and mypy, `go build`/`go vet`, gcc/clang, javac,
//! rustc's short format), GitHub `::error file=…` workflow commands, and the generic fallback
//! `path:line[:col]: error…` with a low confidence.
//!
//! It must never report a `warning:`/`note:` line, a line without `error` in the fallback, or a
//! path without a file extension (which rules out `make: ***`, URLs and timestamps).

use std::sync::LazyLock;

use regex::Regex;

use super::go::Go;
use super::jvm::Jvm;
use crate::sink::{Finding, Sink};
use crate::{BugType, Ctx, Line, Marker};

static COLON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:[A-Za-z]:[\\/])?[^\s:]+?):(\d+)(?::(\d+))?(?::\s*|\s+)(.*)$").unwrap()
});
/// False when [`COLON`] cannot match `t`, tested on bytes: the regex (with captures) on every
/// `path:line` line was the costliest step on real logs. The path is everything up to the first
/// `:` after an optional drive (`[^\s:]` holds no `:`; without the drive, a drive's letter would
/// need a digit after its colon), so it must be non-empty, hold no ASCII whitespace, and its
/// colon be followed by a digit (any non-ASCII character is left to the regex's Unicode `\d`).
fn colon_may_match(t: &str) -> bool {
    let b = t.as_bytes();
    let drive =
        b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/');
    let body = if drive { &b[3..] } else { b };
    let Some(colon) = memchr::memchr(b':', body) else {
        return false;
    };
    colon > 0
        && !body[..colon].iter().any(u8::is_ascii_whitespace)
        && body
            .get(colon + 1)
            .is_some_and(|&c| !c.is_ascii() || c.is_ascii_digit())
}

static RUST_SHORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^error(?:\[(E\d{4})\])?: (.+)$").unwrap());
static TITLE_RULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([\w.-]+)(?: \(([\w/-]+)\))?").unwrap());

static SH_LINE: crate::Needle = crate::needle!("sh: line ");
static COMMA_COLUMN: crate::Needle = crate::needle!(", column ");

/// expat's messages (Python's `xml.etree`, `xml.dom`, and every tool built on them).
const EXPAT: [&str; 8] = [
    "mismatched tag",
    "not well-formed",
    "unclosed token",
    "junk after document element",
    "no element found",
    "undefined entity",
    "duplicate attribute",
    "unbound prefix",
];

/// Checkstyle's plain format, as Gradle's Ant task (`[ant:checkstyle] [ERROR] /…/X.java:2: Line
/// does not match expected header line … [SpringHeader]`) and the command line print it. `[WARN]`
/// rows do not fail the build.
fn checkstyle(t: &str, seq: u64, sink: &mut Sink) -> bool {
    let rest = t.strip_prefix("[ant:checkstyle] ").unwrap_or(t);
    let Some(rest) = rest.strip_prefix("[ERROR] ") else {
        return false;
    };
    let Some((body, check)) = rest.strip_suffix(']').and_then(|r| r.rsplit_once(" [")) else {
        return false;
    };
    if !check.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        || !check.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return false;
    }
    let Some(row) = checkstyle_row(body) else {
        return false;
    };
    sink.emit(
        seq,
        Finding::new(row.path, row.line, BugType::Linting, row.msg)
            .col(row.col)
            .conf(0.9)
            .tool("checkstyle")
            .rule(Some(check)),
    );
    true
}

/// A Checkstyle row's location and message, both formats alike.
struct CheckstyleRow<'a> {
    path: &'a str,
    line: u64,
    col: Option<u64>,
    msg: &'a str,
}

/// `/…/X.java:26:8: msg`, for a file of the kinds Checkstyle reads.
fn checkstyle_row(body: &str) -> Option<CheckstyleRow<'_>> {
    let c = COLON.captures(body)?;
    let path = c.get(1)?.as_str();
    if !matches!(
        super::ext(path),
        "java" | "kt" | "groovy" | "scala" | "xml" | "properties"
    ) {
        return None;
    }
    Some(CheckstyleRow {
        path,
        line: super::num(&c[2])?,
        col: c.get(3).and_then(|m| super::num(m.as_str())),
        msg: c.get(4)?.as_str().trim(),
    })
}

/// Checkstyle before 6 through Gradle's Ant task: `[ant:checkstyle] /…/X.java:26:8: Unused
/// import - java.util.Map.`, errors without a severity or a check name, warnings as `…:8:
/// warning: msg`. Gradle's plain console glues the first row to the task's name
/// (`:core:checkstyleMain[ant:checkstyle] /…`).
fn checkstyle_ant(t: &str, seq: u64, sink: &mut Sink) -> bool {
    const ANT: &str = "[ant:checkstyle] ";
    let rest = if let Some(rest) = t.strip_prefix(ANT) {
        rest
    } else if t.starts_with(':')
        && let Some(i) = t.find(ANT)
        && t[..i].contains(":checkstyle")
    {
        &t[i + ANT.len()..]
    } else {
        return false;
    };
    // The severity-tagged format of later releases is `checkstyle`'s.
    if rest.starts_with('[') {
        return false;
    }
    let Some(row) = checkstyle_row(rest) else {
        return false;
    };
    if row.msg.starts_with("warning:") || row.msg.starts_with("info:") {
        return true;
    }
    sink.emit(
        seq,
        Finding::new(row.path, row.line, BugType::Linting, row.msg)
            .col(row.col)
            .conf(0.9)
            .tool("checkstyle"),
    );
    true
}

/// The program name glibc prints before a failed assertion, when it is a compiler's driver
/// or frontend (a BuildKit prefix, `#10 11.48 swift`, may come before it).
fn is_compiler_program(program: &str) -> bool {
    const COMPILERS: [&str; 9] = [
        "swift",
        "swift-frontend",
        "swiftc",
        "clang",
        "clang++",
        "cc1",
        "cc1plus",
        "rustc",
        "lld",
    ];
    let name = program.rsplit([' ', '/']).next().unwrap_or(program);
    COMPILERS.contains(&name)
}

/// glibc's `assert()` failing in the repository's C code: `python: Python/qsbr.c:164: _Bool
/// _Py_qsbr_poll(…): Assertion `expr' failed.` (the program name first).
fn glibc_assert(t: &str, seq: u64, sink: &mut Sink) -> bool {
    let Some(at) = t.find(": Assertion `") else {
        return false;
    };
    let head = &t[..at];
    let Some((program, loc)) = head.split_once(": ") else {
        return false;
    };
    // A compiler's own assertion (`swift: /home/buildnode/jenkins/workspace/oss-swift-5.3-…/
    // swift/lib/AST/ASTScopeCreation.cpp:1276: …`): a crash of the toolchain, at the path of
    // the machine that built it, never the repository being compiled.
    if is_compiler_program(program) && loc.starts_with('/') {
        return true;
    }
    let mut parts = loc.splitn(3, ':');
    let (Some(path), Some(line)) = (parts.next(), parts.next().and_then(super::num)) else {
        return false;
    };
    if path.contains(' ') || !crate::path::has_extension(path) {
        return false;
    }
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Logic, &t[at + 2..])
            .conf(0.85)
            .tool("assert"),
    );
    true
}

/// A tool naming the XML file it could not read, with expat's position at the end: godot's
/// `ERROR: doc/classes/X.xml: Parse error while reading the file: mismatched tag: line 2524,
/// column 3`.
fn expat_error(t: &str, seq: u64, sink: &mut Sink) {
    let Some((before, pos)) = t.rsplit_once(": line ") else {
        return;
    };
    let Some((line, col)) = pos.split_once(", column ") else {
        return;
    };
    let (Some(line), Some(col)) = (super::num(line), super::num(col)) else {
        return;
    };
    if !EXPAT
        .iter()
        .any(|m| before.ends_with(m) || before.contains(&format!("{m}:")))
    {
        return;
    }
    let Some(path) = before
        .split(": ")
        .find(|seg| !seg.contains(' ') && crate::path::has_extension(seg) && seg.contains('.'))
    else {
        return;
    };
    let msg = before.rsplit(": ").next().unwrap_or(before);
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Syntax, msg)
            .col(Some(col))
            .conf(0.8)
            .tool("expat"),
    );
}

/// bash's own runtime errors in a script of the repository: `./scripts/ci.sh: line 117: cd:
/// ./scripts/travis: No such file or directory`. Only the messages that are the script's bug
/// (a bad `cd`, a syntax error, an unset variable, a malformed test); a missing command, a full
/// disk or a denied permission are the machine's, and `bash: line N` / `eval: line N` name no
/// file. Paths outside the repository (the runner's own scripts) are refused by the sink.
fn shell_runtime(t: &str, seq: u64, sink: &mut Sink) {
    let Some((path, rest)) = t.split_once(": line ") else {
        return;
    };
    if !(path.ends_with(".sh") || path.ends_with(".bash")) || path.contains(' ') {
        return;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (Some(line), Some(msg)) = (
        super::num(&rest[..digits]),
        rest[digits..].strip_prefix(": "),
    ) else {
        return;
    };
    let ty = if msg.starts_with("syntax error") {
        BugType::Syntax
    } else if (msg.starts_with("cd: ") && msg.ends_with(": No such file or directory"))
        || msg.ends_with(": unbound variable")
        || msg.ends_with(": bad substitution")
        || msg.ends_with(": integer expression expected")
        || msg.ends_with(": unary operator expected")
        || msg.ends_with(": binary operator expected")
        || msg.ends_with(": too many arguments")
    {
        BugType::Logic
    } else {
        return;
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, msg).conf(0.8).tool("bash"),
    );
}

/// Classifies a message from an unknown tool by its words.
fn keyword_type(msg: &str) -> BugType {
    let m = msg.to_ascii_lowercase();
    if m.contains("syntax") || m.contains("parse error") || m.contains("unexpected token") {
        BugType::Syntax
    } else if m.contains("cannot find module")
        || m.contains("no module named")
        || m.contains("unresolved import")
        || m.contains("no such file or directory")
    {
        BugType::Import
    } else {
        BugType::TypeError
    }
}

/// `^-- SC2086 (info): msg`; shellcheck before 0.7 printed no severity (`^-- SC2086: msg`).
static SHELLCHECK_TTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\^[-^]*\^?\s+(SC\d+)(?: \((error|warning|info|style)\))?: (.+)$").unwrap()
});

/// Location announced by shellcheck's default (tty) format: `In path line N:`.
#[derive(Debug, Default)]
pub(crate) struct Shellcheck {
    at: Option<(String, u64)>,
}

impl Shellcheck {
    /// True when `line` cannot change this matcher's state or be claimed by it: no `In path
    /// line N:` location is open and the line does not start one.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.at.is_none() && l.first != b'I'
    }

    /// Returns true when the line belongs to shellcheck's tty output.
    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if let Some(rest) = t.strip_prefix("In ")
            && let Some((path, n)) = rest.strip_suffix(':').and_then(|r| r.rsplit_once(" line "))
            && let Some(n) = super::num(n)
        {
            self.at = Some((path.to_string(), n));
            return true;
        }
        let Some((path, line)) = &self.at else {
            return false;
        };
        if t.starts_with('^')
            && let Some(c) = SHELLCHECK_TTY.captures(t)
        {
            // Without a severity (shellcheck < 0.7) only the runner can tell: a line a problem
            // matcher marked as an error (`##[error]`, `Error: ` when copied from the page).
            let error = match c.get(2) {
                Some(sev) => sev.as_str() == "error",
                None => l.marker == crate::Marker::Error,
            };
            if error {
                sink.emit(
                    l.no,
                    Finding::new(path, *line, BugType::Linting, &c[3])
                        .conf(0.9)
                        .tool("shellcheck")
                        .rule(Some(&c[1])),
                );
            }
            return true;
        }
        if t.starts_with("For more information") {
            self.at = None;
        }
        false
    }
}

pub(crate) fn line(l: &Line<'_>, ctx: &Ctx, go: &Go, jvm: &mut Jvm, sink: &mut Sink) {
    let t = l.trimmed();
    if let Some(rest) = t.strip_prefix("::error ") {
        workflow_error(l.no, rest, sink);
        return;
    }
    if l.first == b'F' && l.marker == Marker::Error && file_comma_line(t, l.no, sink) {
        return;
    }
    if !l.colon_digit {
        match l.first {
            b'B' => jenkins_workspace(t, sink),
            b'"' => {
                super::c::iar(t, l.no, sink);
            }
            b'(' if l.last.is_ascii_digit() => psych_error(t, l.no, sink),
            _ if l.colon && crate::has(&SH_LINE, t) => shell_runtime(t, l.no, sink),
            _ if l.colon && l.last.is_ascii_digit() && crate::has(&COMMA_COLUMN, t) => {
                expat_error(t, l.no, sink);
            }
            _ => {}
        }
        return;
    }
    if l.last == b'.' && t.ends_with("' failed.") && glibc_assert(t, l.no, sink) {
        return;
    }
    if l.first == b'[' && l.last == b']' && checkstyle(t, l.no, sink) {
        return;
    }
    if matches!(l.first, b'[' | b':') && checkstyle_ant(t, l.no, sink) {
        return;
    }
    let t = t.strip_prefix("vet: ").unwrap_or(t);
    let t = after_spaced_jenkins_workspace(t);
    let Some(c) = colon_may_match(t)
        .then(|| COLON.captures(t))
        .flatten()
        .or_else(|| {
            // Nix builders prefix every line of a derivation's build with `name> `.
            let (name, rest) = t.split_once("> ")?;
            let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+');
            (!name.is_empty() && name.len() <= 100 && name.bytes().all(word))
                .then(|| rest.trim_start())
                .filter(|rest| colon_may_match(rest))
                .and_then(|rest| COLON.captures(rest))
        })
    else {
        return;
    };
    let path = &c[1];
    let ext = super::ext(path).to_ascii_lowercase();
    if ext.is_empty() || !crate::path::has_extension(path) {
        return;
    }
    let (Some(line), col) = (
        super::num(&c[2]),
        c.get(3).and_then(|m| super::num(m.as_str())),
    ) else {
        return;
    };
    let rest = c[4].trim();
    if col.is_none() && codespell(path, line, rest, l.no, sink) {
        return;
    }
    if col.is_none() && whitespace_check(path, line, rest, l.no, sink) {
        return;
    }
    if ext == "py" && numpydoc(path, line, rest, l.no, sink) {
        return;
    }
    // ruff (and nbQA-style tools) on a notebook that is not valid JSON.
    if ext == "ipynb" && rest.starts_with("Expected a Jupyter Notebook") {
        sink.emit(
            l.no,
            Finding::new(path, line, BugType::Syntax, rest)
                .col(col)
                .conf(0.9)
                .tool("ruff"),
        );
        return;
    }
    let handled = match ext.as_str() {
        "py" | "pyi" => super::python::colon(path, line, col, rest, &ctx.step, l.no, sink),
        "go" if l.indent() == 0 => {
            if rest.starts_with("warning:") || rest.starts_with("note:") {
                true
            } else {
                const LINTERS: [&str; 6] = [
                    "staticcheck",
                    "golangci-lint",
                    "exhaustive",
                    "golint",
                    "revive",
                    "errcheck",
                ];
                let lint_step = LINTERS.iter().any(|n| ctx.step.contains(n));
                super::go::colon(
                    path,
                    line,
                    col,
                    rest,
                    go.vet || ctx.step.contains("go vet"),
                    lint_step,
                    l.no,
                    sink,
                )
            }
        }
        "java" | "kt" | "kts" => {
            if ext == "java"
                && let Some(repo) = sink.repo_path(path)
            {
                jvm.learn_java_path(&repo);
            }
            // javac never prints a column: `X.java:24:8: error: Unused import - …` is Checkstyle's
            // plain format (maven-checkstyle-plugin's console output), a lint.
            if ext == "java"
                && col.is_some()
                && let Some(msg) = rest.strip_prefix("error: ")
            {
                lint_error(l.no, path, line, col, msg, "checkstyle", sink);
            } else if let Some(msg) = rest.strip_prefix("error: ") {
                let tool = if ext == "java" { "javac" } else { "kotlinc" };
                jvm.compiler(path, line, col, msg, tool, true, l.no, sink);
            }
            true
        }
        "sh" | "bash" | "zsh" | "ksh" => {
            if let Some(msg) = rest.strip_prefix("error: ") {
                lint_error(l.no, path, line, col, msg, "shellcheck", sink);
            }
            true
        }
        "rs" => {
            if let Some(c) = RUST_SHORT.captures(rest) {
                let code = c.get(1).map(|m| m.as_str());
                sink.emit(
                    l.no,
                    Finding::new(
                        path,
                        line,
                        super::rust::rustc_type(code, &c[2], false),
                        &c[2],
                    )
                    .col(col)
                    .conf(0.9)
                    .tool("rustc")
                    .rule(code),
                );
            }
            true
        }
        e if super::c::EXTS.contains(&e) => super::c::colon(path, line, col, rest, l.no, sink),
        _ => false,
    };
    if handled {
        return;
    }
    // yamllint (parsable): `file:l:c: [error] message (rule)`; warnings are not errors.
    if let Some(msg) = rest.strip_prefix("[error] ") {
        let (msg, rule) = match msg.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
            Some((m, r)) if !r.contains(' ') => (m, Some(r)),
            _ => (msg, None),
        };
        let ty = if rule == Some("syntax") || msg.starts_with("syntax error") {
            BugType::Syntax
        } else {
            BugType::Linting
        };
        sink.emit(
            l.no,
            Finding::new(path, line, ty, msg)
                .col(col)
                .conf(0.9)
                .tool("yamllint")
                .rule(rule),
        );
        return;
    }
    if rest.starts_with("[warning]") {
        return;
    }
    // libxml2 (xmllint): `file:line: parser error : message`.
    if let Some(msg) = rest.strip_prefix("parser error : ") {
        sink.emit(
            l.no,
            Finding::new(path, line, BugType::Syntax, msg)
                .col(col)
                .conf(0.9)
                .tool("xmllint"),
        );
        return;
    }
    // Fallback: `path:line[:col]: error…` from any tool.
    let lower = rest.get(..5).map(str::to_ascii_lowercase);
    if lower.as_deref() == Some("error") || rest.starts_with("fatal error") {
        let msg = rest
            .trim_start_matches(|ch: char| ch.is_ascii_alphabetic() || ch == ' ')
            .trim_start_matches([':', '-', ' ']);
        let msg = if msg.is_empty() { rest } else { msg };
        sink.emit(
            l.no,
            Finding::new(path, line, keyword_type(msg), msg)
                .col(col)
                .conf(0.4),
        );
    }
}

/// codespell (also behind its problem matcher's `##[error]`): `./src/x.cpp:149: unexpect ==>
/// unexpected`, for a file of any kind. The step fails on it.
fn codespell(path: &str, line: u64, rest: &str, seq: u64, sink: &mut Sink) -> bool {
    // The misspelt word is one token: look for the arrow right after it, not along the line.
    let Some(end) = memchr::memchr(b' ', rest.as_bytes()) else {
        return false;
    };
    let (word, fix) = (&rest[..end], &rest[end..]);
    let Some(fix) = fix.strip_prefix(" ==> ") else {
        return false;
    };
    if word.is_empty() || word.contains(' ') || fix.trim().is_empty() {
        return false;
    }
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, rest)
            .conf(0.9)
            .tool("codespell"),
    );
    true
}

/// Julia's `contrib/check-whitespace.jl` (copied by many Julia packages): `path:N -- trailing
/// whitespace`, one of its fixed messages, for a file of any kind. It exits 1 on any.
fn whitespace_check(path: &str, line: u64, rest: &str, seq: u64, sink: &mut Sink) -> bool {
    const MESSAGES: [&str; 5] = [
        "trailing whitespace",
        "tab",
        "no trailing newline",
        "non-breaking space",
        "trailing blank lines",
    ];
    let Some(msg) = rest.strip_prefix("-- ").filter(|m| MESSAGES.contains(m)) else {
        return false;
    };
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, msg)
            .conf(0.8)
            .tool("check-whitespace"),
    );
    true
}

/// numpydoc's docstring validation as pandas' and scipy's scripts print it:
/// `pandas/core/x.py:3806:PR09:pandas.core.X.f:Parameter "**kwargs" description should finish
/// with "."` (the code's two letters name the numpydoc check family).
fn numpydoc(path: &str, line: u64, rest: &str, seq: u64, sink: &mut Sink) -> bool {
    let b = rest.as_bytes();
    let family = [b"GL", b"SS", b"ES", b"PR", b"RT", b"YD", b"SA", b"EX"];
    if b.len() < 6
        || !family.iter().any(|f| b.starts_with(*f))
        || !b[2].is_ascii_digit()
        || !b[3].is_ascii_digit()
        || b[4] != b':'
    {
        return false;
    }
    let msg = rest[5..].split_once(':').map_or(&rest[5..], |(_, m)| m);
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, msg)
            .conf(0.85)
            .tool("numpydoc")
            .rule(Some(&rest[..4])),
    );
    true
}

/// Jenkins names the checkout before the build: `Building in workspace /var/lib/jenkins/workspace/job`
/// or `Building remotely on agent (labels) in workspace /builds/workspace/job`. Tools then print
/// absolute paths under it, which are repo paths once it is stripped.
fn jenkins_workspace(t: &str, sink: &mut Sink) {
    if !t.starts_with("Building ") {
        return;
    }
    if let Some((_, ws)) = t.rsplit_once(" in workspace ")
        && !ws.contains(' ')
    {
        sink.learn_workspace(ws);
    }
}

/// Jenkins job and folder names may hold spaces (`/var/lib/jenkins/jobs/Dev/jobs/JavaDoc
/// check/workspace/java/src/A.java:25: error: …`), which no `path:line` pattern can tell from the
/// end of a path. Everything after a Jenkins home's `jobs/<job>/workspace/` is the checkout, so
/// the line is read from there, repo-relative. Other lines are returned as they are.
fn after_spaced_jenkins_workspace(t: &str) -> &str {
    if !t.starts_with('/') {
        return t;
    }
    let Some(ws) = memchr::memmem::find(t.as_bytes(), b"/workspace/") else {
        return t;
    };
    let home = &t[..ws];
    if home.contains(' ') && home.contains("/jobs/") && !home.contains(':') {
        &t[ws + "/workspace/".len()..]
    } else {
        t
    }
}

/// A linter's `path:line:col: error: message [Rule]` row (shellcheck's gcc format, Checkstyle's
/// plain format): `LINTING`, the bracketed suffix as the rule.
fn lint_error(
    seq: u64,
    path: &str,
    line: u64,
    col: Option<u64>,
    msg: &str,
    tool: &'static str,
    sink: &mut Sink,
) {
    let (msg, rule) = split_rule_suffix(msg);
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, msg)
            .col(col)
            .conf(0.95)
            .tool(tool)
            .rule(rule),
    );
}

/// Splits a trailing ` [CODE]` (shellcheck's `[SC2045]`) off a message.
fn split_rule_suffix(msg: &str) -> (&str, Option<&str>) {
    match msg.strip_suffix(']').and_then(|m| m.rsplit_once(" [")) {
        Some((m, r)) if !r.is_empty() && !r.contains(' ') => (m, Some(r)),
        _ => (msg, None),
    }
}

/// Ruby's YAML parser (Psych) on a file: `(./x/y.md): did not find expected ',' or ']' while
/// parsing a flow sequence at line 5 column 7` (a YAML front matter, a config). `(<unknown>)`
/// names a string, not a file.
fn psych_error(t: &str, seq: u64, sink: &mut Sink) {
    let Some((file, rest)) = t.strip_prefix('(').and_then(|r| r.split_once("): ")) else {
        return;
    };
    let Some((msg, at)) = rest.rsplit_once(" at line ") else {
        return;
    };
    let Some((line, col)) = at.split_once(" column ") else {
        return;
    };
    if file.starts_with('<') || file.contains(' ') {
        return;
    }
    if let Some(line) = super::num(line) {
        sink.emit(
            seq,
            Finding::new(file, line, BugType::Syntax, msg)
                .col(super::num(col))
                .conf(0.9)
                .tool("psych"),
        );
    }
}

/// An error annotation whose message names its place in words, as markdown-checker's
/// (`john0isaac/action-check-markdown`) does: `::error file=X,line=N::File X, line N, Link URL
/// is broken.`, which the runner prints as `##[error]File X, line N, Link … is broken.` (the
/// `file=` property is not in the log). Only on the runner's error mark: a tool's own `File x,
/// line N` text is a traceback or a warning as often as not.
fn file_comma_line(t: &str, seq: u64, sink: &mut Sink) -> bool {
    let Some(rest) = t.strip_prefix("File ") else {
        return false;
    };
    let Some((path, rest)) = rest.split_once(", line ") else {
        return false;
    };
    let (num, msg) = rest.split_once(", ").unwrap_or((rest, ""));
    let Some(line) = super::num(num) else {
        return false;
    };
    // Python's `File "x.py", line 3` quotes its path; a path has no spaces here.
    if path.is_empty() || path.contains([' ', '"', '\'']) || !crate::path::has_extension(path) {
        return false;
    }
    let msg = msg.trim_end_matches('.');
    sink.emit(
        seq,
        Finding::new(
            path,
            line,
            BugType::Linting,
            if msg.is_empty() { t } else { msg },
        )
        .conf(0.8)
        .tool("markdown-checker"),
    );
    true
}

/// `::error file=F,line=L,col=C,title=T::message` (workflow command printed as plain text).
fn workflow_error(seq: u64, rest: &str, sink: &mut Sink) {
    let Some((params, msg)) = rest.split_once("::") else {
        return;
    };
    let (mut file, mut line, mut col, mut title) = (None, None, None, None);
    for kv in params.split(',') {
        match kv.split_once('=') {
            Some(("file", v)) => file = Some(v.trim()),
            Some(("line", v)) => line = super::num(v.trim()),
            Some(("col", v)) => col = super::num(v.trim()),
            Some(("title", v)) => title = Some(v.trim()),
            _ => {}
        }
    }
    let (Some(file), Some(line)) = (file, line) else {
        return;
    };
    let rule = title
        .and_then(|t| TITLE_RULE.captures(t))
        .and_then(|c| c.get(2).map(|m| m.as_str()));
    let ty = if rule.is_some() {
        BugType::Linting
    } else {
        keyword_type(msg)
    };
    sink.emit(
        seq,
        Finding::new(file, line, ty, msg)
            .col(col)
            .conf(0.7)
            .rule(rule),
    );
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn a_compilers_own_assertion_is_not_the_repositorys() {
        // GraphQLSwift/Graphiti#57: swift 5.3 crashed compiling the package under BuildKit.
        let log = "#10 11.48 swift: /home/buildnode/jenkins/workspace/oss-swift-5.3-package-linux-ubuntu-18_04/swift/lib/AST/ASTScopeCreation.cpp:1276: swift::ast_scope::AnnotatedInsertionPoint swift::ast_scope::PatternEntryDeclScope::expandAScopeThatCreatesANewInsertionPoint(swift::ast_scope::ScopeCreator &): Assertion `x' failed.\npython: Python/qsbr.c:164: _Bool _Py_qsbr_poll(struct _qsbr_thread_state *, uint64_t): Assertion `q' failed.\n";
        let r = crate::parse_str(log, &crate::ParseOptions::default());
        let got: Vec<_> = r.iter().map(|b| b.file_path.as_str()).collect();
        assert_eq!(got, ["Python/qsbr.c"]);
    }

    #[test]
    fn the_byte_prefilter_never_refuses_a_line_the_colon_regex_matches() {
        let lines = [
            "src/a.c:3:5: error: x",
            "src/a.c:3: x",
            "src/a.c:3:5 x",
            "src/a.c:34",
            "C:\\a\\b.cs:7: warning",
            "c:/w/x.py:1:1: E501",
            "a:\\b:3: x",
            "dir with space/a.c:3: x",
            "a.c:x:3: y",
            "a.c:\u{0663}: arabic-indic digit",
            "\u{a0}a.c:3: nbsp",
            ":3: no path",
            "no colon at all",
            "a.c:",
            "a.c:3x",
        ];
        for l in lines {
            let regex = super::COLON.is_match(l);
            let bytes = super::colon_may_match(l);
            assert!(
                !regex || bytes,
                "prefilter refuses {l:?}, which the regex matches"
            );
        }
        // It does refuse lines the regex cannot match.
        assert!(!super::colon_may_match("Compiling foo v1.0: done"));
        assert!(!super::colon_may_match("a.c:x"));
        assert!(!super::colon_may_match("C:/dir with space/a.c:3: x"));
    }

    #[test]
    fn shellcheck_without_severity_needs_the_runners_error_mark() {
        // ludeeus/action-shellcheck copied from the Actions page: its problem matcher marked the
        // finding of an old shellcheck, which prints no severity.
        let log = "In ./.github/bin/publish-release line 3:\nVERSION=$(echo $REF | cut -d \"/\" -f3)\nError:                ^--^ SC2086: Double quote to prevent globbing and word splitting.\n\nIn ./bin/x.sh line 5:\ngh release create $VERSION\n                  ^------^ SC2086: Double quote to prevent globbing and word splitting.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (".github/bin/publish-release", 3)
        );
        assert_eq!(r[0].rule.as_deref(), Some("SC2086"));
    }

    #[test]
    fn fallback_and_workflow_commands() {
        let log = "config/app.yml:3:1: error: bad indentation of a mapping entry\nMakefile:3: recipe for target 'all' failed\nmake: *** [Makefile:3: all] Error 1\n::error title=Ruff (F401),file=/home/runner/work/R/R/a.py,line=1,col=8::a.py:1:8: F401 `os` imported but unused\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].confidence_score, 0.4);
        assert_eq!(r[1].error_type, BugType::Linting);
        assert_eq!(r[1].rule.as_deref(), Some("F401"));
        assert_eq!(r[1].file_path, "a.py");
    }

    #[test]
    fn psych_yaml_errors_name_the_file() {
        // LogChunks learnxinyminutes (Travis): the YAML front matter check's Rakefile task.
        let log = "(./tr-tr/clojure-tr.html.markdown): did not find expected ',' or ']' while parsing a flow sequence at line 5 column 7\n(<unknown>): mapping values are not allowed in this context at line 1 column 4\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("tr-tr/clojure-tr.html.markdown", 5, BugType::Syntax)
        );
    }

    #[test]
    fn checkstyle_plain_rows_with_a_column_are_lints() {
        // raphw/byte-buddy (BugSwarm, Actions): maven-checkstyle-plugin's console output; javac's
        // own `X.java:24: error:` has no column and stays a compiler error.
        let log = "/home/runner/work/byte-buddy/byte-buddy/byte-buddy-dep/src/main/java/net/bytebuddy/matcher/HasSuperTypeMatcher.java:24:8: error: Unused import - java.util.LinkedList.
/home/runner/work/R/R/src/main/java/a/B.java:7:1: error: Missing a Javadoc comment. [JavadocType]
/home/runner/work/R/R/src/main/java/a/C.java:12: error: cannot find symbol
";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.line_number, r.error_type, r.rule.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (24, BugType::Linting, None),
                (7, BugType::Linting, Some("JavadocType")),
                (12, BugType::TypeError, None)
            ]
        );
    }

    #[test]
    fn julia_whitespace_check() {
        let log = "2025-04-14T14:51:26.1Z doc/src/manual/multi-threading.md:304 -- trailing whitespace\n\
                   2025-04-14T14:51:26.1Z src/flisp/a.c:12 -- tab\n\
                   2025-04-14T14:51:26.1Z base/x.jl:3 -- sure\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("doc/src/manual/multi-threading.md", 304, BugType::Linting),
                ("src/flisp/a.c", 12, BugType::Linting)
            ]
        );
    }

    #[test]
    fn place_in_words_on_the_runners_error_mark() {
        let log = "2025-04-11T12:33:27.2206188Z ##[error]File README.md, line 9, Link http://makeapullrequest.com?WT.mc_id=academic-105485-koreyst is broken.\n\
                   2025-04-11T12:33:27.2305405Z ##[error]File 09-building-image-applications/python/aoai-assignment.ipynb, line 55, Link https://towardsdatascience.com/x is broken.\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("README.md", 9, BugType::Linting),
                (
                    "09-building-image-applications/python/aoai-assignment.ipynb",
                    55,
                    BugType::Linting
                )
            ]
        );
        assert!(r[0].message.starts_with("Link http://makeapullrequest.com"));
        // Without the runner's mark (the tool's console format, a warning annotation) or with a
        // traceback's quoted path, nothing.
        for log in [
            "File README.md, line 9, Link http://x is broken.\n",
            "##[warning]File README.md, line 9, Link http://x is missing tracking id.\n",
            "##[error]File \"src/a.py\", line 3, in f\n",
            "##[error]File README, line 9, Link http://x is broken.\n",
        ] {
            assert!(parse_str(log, &ParseOptions::default()).is_empty(), "{log}");
        }
    }

    #[test]
    fn checkstyle_5_rows_through_gradles_ant_task() {
        // griffon's Travis job (Gradle 2, Checkstyle 5.6): the first row glued to the task name.
        let log = ":griffon-core-compile:checkstyleMain[ant:checkstyle] /home/travis/build/griffon/griffon/subprojects/griffon-core-compile/src/main/java/org/codehaus/griffon/compile/core/processor/artifact/ArtifactProviderProcessor.java:26:8: Unused import - java.util.Map.\n[ant:checkstyle] /home/travis/build/griffon/griffon/subprojects/griffon-core-compile/src/main/java/org/codehaus/griffon/compile/core/processor/artifact/ArtifactProviderProcessor.java:33:8: Unused import - java.util.Set.\n[ant:checkstyle] /home/travis/build/griffon/griffon/src/main/java/a/B.java:7:1: warning: Missing a Javadoc comment.\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r.iter().map(|r| (r.line_number, r.error_type)).collect();
        assert_eq!(
            got,
            [(26, BugType::Linting), (33, BugType::Linting)],
            "{r:?}"
        );
        assert_eq!(
            r[0].file_path,
            "subprojects/griffon-core-compile/src/main/java/org/codehaus/griffon/compile/core/processor/artifact/ArtifactProviderProcessor.java"
        );
    }

    #[test]
    fn checkstyle_errors_not_warnings() {
        // spring-boot's Gradle build (LogSage) and RxJava's warnings (LogChunks).
        let log = "[ant:checkstyle] [ERROR] /home/runner/work/spring-boot/spring-boot/spring-boot-project/x/src/main/java/org/x/Phase.java:2: Line does not match expected header line of '^\\Q * Copyright \\E20\\d\\d(-20\\d\\d)?\\Q the original author or authors.\\E$'. [SpringHeader]\n[ant:checkstyle] [WARN] /home/travis/build/ReactiveX/RxJava/src/main/java/io/reactivex/Flowable.java:92: Line has trailing spaces. [RegexpSinglelineJava]\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "spring-boot-project/x/src/main/java/org/x/Phase.java"
        );
        assert_eq!(r[0].rule.as_deref(), Some("SpringHeader"));
        assert_eq!(r[0].error_type, BugType::Linting);
    }

    #[test]
    fn a_failed_c_assert() {
        // CPython's TSAN job (LogSage).
        let log = "python: Python/qsbr.c:164: _Bool _Py_qsbr_poll(struct _qsbr_thread_state *, uint64_t): Assertion `((_PyThreadStateImpl *)_PyThreadState_GET())->qsbr == qsbr' failed.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "Python/qsbr.c");
        assert_eq!(r[0].line_number, 164);
        assert_eq!(r[0].error_type, BugType::Logic);
    }

    #[test]
    fn a_tool_naming_the_xml_file_expat_could_not_read() {
        // godot's make_rst (LogSage), then the traceback of the script that parsed the same
        // file: the file is reported, the script's line is not.
        let log = "ERROR: doc/classes/DisplayServer.xml: Parse error while reading the file: mismatched tag: line 2524, column 3\nTraceback (most recent call last):\n  File \"/home/runner/work/godot/godot/doc/tools/doc_status.py\", line 379, in <module>\n    tree = ET.parse(file)\nxml.etree.ElementTree.ParseError: mismatched tag: line 2524, column 3\nERROR: the build took 3 minutes: line 12, column 4\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "doc/classes/DisplayServer.xml");
        assert_eq!(r[0].line_number, 2524);
        assert_eq!(r[0].error_type, BugType::Syntax);
    }

    #[test]
    fn codespell_and_numpydoc_validation() {
        // gpt4all's codespell job and pandas' docstring validation (LogSage), shortened.
        let log = "##[error]./gpt4all-chat/src/store_base.cpp:149: unexpect ==> unexpected\n##[error]/home/runner/work/pandas/pandas/pandas/core/groupby/groupby.py:3806:PR09:pandas.core.groupby.DataFrameGroupBy.expanding:Parameter \"**kwargs\" description should finish with \".\"\nsrc/a.py:12: note ==> not a word\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].file_path, "gpt4all-chat/src/store_base.cpp");
        assert_eq!(r[0].tool.as_deref(), Some("codespell"));
        assert_eq!(r[1].file_path, "pandas/core/groupby/groupby.py");
        assert_eq!(r[1].rule.as_deref(), Some("PR09"));
        let nb = "ch05/01_main-chapter-code/exercise-solutions.ipynb:1:1: Expected a Jupyter Notebook, which must be internally stored as JSON, but this file isn't valid JSON: expected `,` or `]` at line 272 column 5\n";
        let rn = parse_str(nb, &ParseOptions::default());
        assert_eq!(rn.len(), 1, "{rn:?}");
        assert_eq!(rn[0].error_type, BugType::Syntax);
        assert_eq!(r[1].error_type, BugType::Linting);
    }

    #[test]
    fn jenkins_workspace_and_nix_prefix() {
        // Real lines: a Jenkins Maven job (labri-progress/cidiff data) and a nix build of
        // faster-fifo (alex-petrenko/faster-fifo#47).
        let log = "Building remotely on sos-builder01-ubuntu16 (lin) in workspace /builds/workspace/casper\n[ERROR] /builds/workspace/casper/src/main/java/sacha/utils/SachaDocumentationGenerator.java:[3,13] cannot access spoon.Launcher\nfaster-fifo> cpp_faster_fifo/cpp_lib/faster_fifo.cpp:14:9: error: \u{2018}fprintf\u{2019} was not declared in this scope\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "src/main/java/sacha/utils/SachaDocumentationGenerator.java"
        );
        assert_eq!(r[1].file_path, "cpp_faster_fifo/cpp_lib/faster_fifo.cpp");
    }

    #[test]
    fn javac() {
        let log = "src/main/java/App.java:5: error: cannot find symbol\n    symbol:   variable x\nsrc/main/java/App.java:9: error: ';' expected\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(r[1].error_type, BugType::Syntax);
    }

    #[test]
    fn jenkins_job_names_with_spaces() {
        // Real lines (jenkinsci/analysis-model, JENKINS-32298), after Ant's `[javadoc]` prefix.
        let log = " [javadoc] /var/lib/jenkins/jobs/Development/jobs/JavaDoc check/workspace/java/src/jmri/jmrit/withrottle/MultiThrottle.java:25: error: bad use of '>'\n/home/me/my dir/src/a.c:3:1: error: expected ';'\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.error_type))
            .collect();
        assert_eq!(
            got,
            [(
                "java/src/jmri/jmrit/withrottle/MultiThrottle.java",
                25,
                BugType::Linting
            )]
        );
    }

    #[test]
    fn bash_runtime_errors_of_repository_scripts() {
        // Real lines: caffe's Travis log, Travis' own job script, a missing tool.
        let log = "./scripts/travis/install-deps.sh: line 117: cd: ./scripts/travis: No such file or directory\n/Users/travis/.travis/job_stages: line 166: shell_session_update: command not found\n/home/travis/build/o/r/ci/run.sh: line 9: x: unbound variable\nci/build.sh: line 97: bc: command not found\nbash: line 3: x: unbound variable\n";
        let r = crate::parse_str(log, &crate::ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("scripts/travis/install-deps.sh", 117, BugType::Logic),
                ("ci/run.sh", 9, BugType::Logic),
            ]
        );
    }
}
