//! Rust: rustc/cargo/clippy diagnostics (`error[E…]: msg` then ` --> file:line:col`, with the
//! lint notes that follow), `cargo test` panics (`thread '…' panicked at file:line:col`, old and
//! new formats), and ruff's full format, which shares the ` --> ` location shape.
//!
//! It must never report a `warning:` block (only warnings denied by `-D warnings`, which rustc
//! prints as `error:`), a `note:`/`help:` span, or a span outside the repository (dependencies
//! in `~/.cargo/registry`, the standard library).

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// Lines a diagnostic block may span (long code frames included).
const BLOCK_BUDGET: u32 = 400;

static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(error|warning)(?:\[([A-Za-z0-9_:-]+)\])?: (.+)$").unwrap());
static RUFF_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:([A-Z]{1,5}\d{1,4})(?: \[\*\])? |(invalid-syntax|SyntaxError): )(.+)$")
        .unwrap()
});
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (.+?):(\d+):(\d+)\s*$").unwrap());
static LINT_D: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`-D ([\w:-]+)`|#!?\[(?:deny|forbid)\(([\w:]+)\)\]").unwrap());
static CLIPPY_URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"rust-clippy/[^#\s]*#([a-z0-9_]+)").unwrap());
static PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^thread '(.*?)'(?: \(\d+\))? panicked at (.+?):(\d+):(\d+):?$").unwrap()
});
/// compiletest (rust-lang/rust's UI tests, `compiletest_rs`): a test file's `//~ ERROR`
/// annotations did not match what the compiler said, `path.rs:18: unexpected error: '…'` or
/// `path.rs:5: expected error not found: …`, printed as an `error:` with no ` --> ` span.
static COMPILETEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?\.rs):(\d+): (?:unexpected \w+|expected \w+ not found): ").unwrap()
});
static PANIC_OLD: LazyLock<Regex> = LazyLock::new(|| {
    // Before Rust 1.22 the column was not printed.
    Regex::new(r"^thread '(.*?)'(?: \(\d+\))? panicked at '(.*)', (.+?):(\d+)(?::(\d+))?$").unwrap()
});

/// The old format's message may span lines (`assert_eq!` printed `left:`/`right:` on lines of
/// their own before Rust 1.73): the header opens the quote, a later line closes it with the
/// location, `  right: `2`', src/x.rs:190:9`.
static PANIC_OLD_OPEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '(.*?)'(?: \(\d+\))? panicked at '(.*)$").unwrap());
static PANIC_OLD_CLOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"', (\S+?\.rs):(\d+)(?::(\d+))?$").unwrap());

/// Lines an old-format panic message may span before its closing location.
const OLD_PANIC_LINES: u8 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rustc,
    Ruff,
}

#[derive(Debug)]
struct Diag {
    kind: Kind,
    code: Option<String>,
    msg: String,
    loc: Option<(String, u64, u64)>,
    lint: Option<String>,
    clippy: bool,
    seq: u64,
    budget: u32,
    /// Lines since the header: a ruff header must be followed by its arrow at once.
    since: u32,
    /// Blank lines skipped while waiting for the ` --> ` location.
    blanks: u8,
}

#[derive(Debug)]
struct Panic {
    thread: String,
    path: String,
    line: u64,
    col: Option<u64>,
    seq: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Rust {
    diag: Option<Diag>,
    /// Inside a `warning:` block: its spans must not bind to anything.
    in_warning: bool,
    panic: Option<Panic>,
    /// An old-format panic whose quoted message goes on below: thread, message's first line,
    /// header's log line, lines left to find the closing `', file:line:col`.
    open_panic: Option<(String, String, u64, u8)>,
    /// `---- tests::name stdout ----`
    current_test: Option<String>,
    /// Lints learned from earlier blocks, by message kind: rustc prints the `-D warnings` note
    /// only on the first occurrence of each lint.
    lints: Vec<(String, String, bool)>,
}

/// Paths rustc prints for the standard library: old toolchains print them relative
/// (`src/libcore/result.rs`, `libcore/result.rs`), newer ones under `/rustc/<hash>/library/`.
/// They look repo-relative but never are.
fn is_rust_std(path: &str) -> bool {
    let p = path.trim_start_matches("./");
    let p = p.strip_prefix("src/").unwrap_or(p);
    const LIBS: [&str; 9] = [
        "libcore/",
        "libstd/",
        "liballoc/",
        "libtest/",
        "libpanic_unwind/",
        "library/core/",
        "library/std/",
        "library/alloc/",
        "library/test/",
    ];
    LIBS.iter().any(|l| p.starts_with(l))
}

/// The part of a rustc message that names the kind of diagnostic (`unused import`).
fn message_kind(msg: &str) -> &str {
    let end = msg.find([':', '`']).unwrap_or(msg.len());
    msg[..end].trim()
}

/// rustc error codes that mean an unresolved import, module or crate.
pub(crate) fn rustc_type(code: Option<&str>, msg: &str, lint: bool) -> BugType {
    if lint {
        return BugType::Linting;
    }
    match code {
        Some("E0432" | "E0463" | "E0583") => BugType::Import,
        Some("E0433") if msg.contains("crate or module") || msg.contains("unresolved import") => {
            BugType::Import
        }
        Some(_) => BugType::TypeError,
        None => {
            const SYNTAX: [&str; 12] = [
                "expected ",
                "unexpected ",
                "mismatched closing delimiter",
                "unclosed delimiter",
                "this file contains an unclosed delimiter",
                "unterminated ",
                "unknown start of token",
                "incorrect close delimiter",
                "unmatched ",
                "missing `",
                "found `",
                "prefix `",
            ];
            if msg.starts_with("unresolved import") {
                BugType::Import
            } else if SYNTAX.iter().any(|s| msg.starts_with(s)) {
                BugType::Syntax
            } else {
                BugType::TypeError
            }
        }
    }
}

/// Cheap test before the ruff header regex: `ABC123 ` / `invalid-syntax: ` / `SyntaxError: `.
fn looks_like_ruff_header(t: &str) -> bool {
    let b = t.as_bytes();
    let letters = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    (1..=5).contains(&letters) && b.get(letters).is_some_and(u8::is_ascii_digit)
        || t.starts_with("invalid-syntax: ")
        || t.starts_with("SyntaxError: ")
}

/// A line that belongs to a diagnostic's body: code frame, spans, notes. Anything else (a blank
/// line, another tool's output) ends the block.
fn is_frame_line(l: &Line<'_>) -> bool {
    let t = l.text;
    if l.is_blank() {
        return false;
    }
    if l.indent() > 0 {
        return true;
    }
    let b = t.as_bytes()[0];
    b.is_ascii_digit()
        || b == b'|'
        || b == b'='
        || t.starts_with("...")
        || t.starts_with("help:")
        || t.starts_with("note:")
        || t.starts_with("-->")
        // compiletest (rustc's and clippy's UI tests) prints line numbers as `LL`.
        || t.starts_with("LL ")
}

impl Rust {
    fn finish(&mut self, sink: &mut Sink) {
        let Some(mut d) = self.diag.take() else {
            return;
        };
        if d.loc.is_none() {
            return;
        }
        if d.kind == Kind::Rustc && d.code.is_none() {
            let kind = message_kind(&d.msg).to_string();
            match &d.lint {
                Some(lint) if !lint.is_empty() => {
                    if self.lints.len() < 256 && !self.lints.iter().any(|(k, _, _)| *k == kind) {
                        self.lints.push((kind, lint.clone(), d.clippy));
                    }
                }
                _ => {
                    if let Some((_, lint, clippy)) = self.lints.iter().find(|(k, _, _)| *k == kind)
                    {
                        d.lint = Some(lint.clone());
                        d.clippy = *clippy;
                    }
                }
            }
        }
        let Some((path, line, col)) = &d.loc else {
            return;
        };
        if is_rust_std(path) {
            return;
        }
        let (ty, tool, rule) = match d.kind {
            Kind::Ruff => {
                let ty = if d.code.is_some() {
                    BugType::Linting
                } else {
                    super::python::syntax_or_indent(&d.msg)
                };
                (
                    ty,
                    "ruff",
                    d.code.clone().or(Some("invalid-syntax".to_string())),
                )
            }
            Kind::Rustc => {
                let ty = rustc_type(d.code.as_deref(), &d.msg, d.lint.is_some());
                let tool = if d.clippy { "clippy" } else { "rustc" };
                (
                    ty,
                    tool,
                    d.code.clone().or(d.lint.clone().filter(|l| !l.is_empty())),
                )
            }
        };
        // Inside a test's `---- name stdout ----` output a compiler error is that test's: a
        // doctest that does not compile (rustdoc prints rustc's diagnostic there).
        sink.emit(
            d.seq,
            Finding::new(path, *line, ty, &d.msg)
                .col(Some(*col))
                .test(self.current_test.as_deref())
                .conf(0.95)
                .tool(tool)
                .rule(rule.as_deref()),
        );
    }

    fn finish_panic(&mut self, msg: &str, sink: &mut Sink) {
        let Some(p) = self.panic.take() else {
            return;
        };
        if is_rust_std(&p.path) {
            return;
        }
        let test = match p.thread.as_str() {
            "main" | "<unnamed>" | "" => self.current_test.as_deref(),
            t => Some(t),
        };
        sink.emit(
            p.seq,
            Finding::new(&p.path, p.line, BugType::Logic, msg)
                .col(p.col)
                .test(test)
                .conf(0.9)
                .tool("cargo test"),
        );
    }

    /// True when `line` cannot change this matcher's state or be claimed by it: no diagnostic,
    /// warning or panic is open and the line does not start like a header (`error`, `warning`,
    /// a ruff code, `thread '`, `---- `). Must stay in step with [`Rust::line`].
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        let first = l.text.as_bytes().first().copied().unwrap_or(b' ');
        self.panic.is_none()
            && self.open_panic.is_none()
            && self.diag.is_none()
            && !self.in_warning
            && !matches!(first, b'e' | b'w' | b'i' | b'A'..=b'Z')
            // Idle, `line` reads only these `t` and `-` lines (pytest's `tests/…::x PASSED` and
            // go's `--- PASS:` lines are many).
            && !(l.first == b't'
                && (l.trimmed().starts_with("thread '") || l.text.starts_with("test result: ")))
            && !(first == b'-' && l.text.starts_with("---- "))
            && !(first == b'f' && self.current_test.is_some())
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.text;
        if let Some(p) = &self.panic {
            // New format: the message is the line after `panicked at …:`.
            let _ = p;
            let msg = l.trimmed().to_string();
            self.finish_panic(&msg, sink);
            return true;
        }
        if let Some((thread, msg, seq, left)) = self.open_panic.take() {
            if let Some(c) = PANIC_OLD_CLOSE.captures(t)
                && let Some(line) = super::num(&c[2])
            {
                self.panic = Some(Panic {
                    thread,
                    path: c[1].to_string(),
                    line,
                    col: c.get(3).and_then(|m| super::num(m.as_str())),
                    seq,
                });
                self.finish_panic(&msg, sink);
                return true;
            }
            if left > 1 && !l.is_blank() {
                self.open_panic = Some((thread, msg, seq, left - 1));
                return true;
            }
        }
        let first = t.as_bytes().first().copied().unwrap_or(b' ');
        if ((first == b'e' && t.starts_with("error"))
            || (first == b'w' && t.starts_with("warning")))
            && let Some(c) = HEADER.captures(t)
        {
            self.finish(sink);
            if &c[1] == "warning" {
                self.in_warning = true;
                return true;
            }
            self.in_warning = false;
            if c.get(2).is_none()
                && crate::contains(&c[3], ".rs:")
                && let Some(m) = COMPILETEST.captures(&c[3])
                && let Some(line) = super::num(&m[2])
            {
                sink.emit(
                    l.no,
                    Finding::new(&m[1], line, BugType::Logic, &c[3])
                        .test(self.current_test.as_deref())
                        .conf(0.85)
                        .tool("compiletest"),
                );
                return true;
            }
            self.diag = Some(Diag {
                kind: Kind::Rustc,
                code: c.get(2).map(|m| m.as_str().to_string()),
                msg: c[3].to_string(),
                loc: None,
                lint: None,
                clippy: false,
                seq: l.no,
                budget: BLOCK_BUDGET,
                since: 0,
                blanks: 0,
            });
            return true;
        }
        if (first.is_ascii_uppercase() || first == b'i')
            && looks_like_ruff_header(t)
            && let Some(c) = RUFF_HEADER.captures(t)
        {
            self.finish(sink);
            self.in_warning = false;
            self.diag = Some(Diag {
                kind: Kind::Ruff,
                code: c.get(1).map(|m| m.as_str().to_string()),
                msg: c[3].to_string(),
                loc: None,
                lint: None,
                clippy: false,
                seq: l.no,
                budget: BLOCK_BUDGET,
                since: 0,
                blanks: 0,
            });
            // Not claimed: if no arrow follows, another matcher may want this line.
            return false;
        }
        // Harnesses (nextest, CI wrappers, pasted logs) may indent the panic line.
        let tt = l.trimmed();
        if l.first == b't' && tt.starts_with("thread '") {
            let t = tt;
            if let Some(c) = PANIC_OLD.captures(t) {
                self.finish(sink);
                if let Some(line) = super::num(&c[4]) {
                    self.panic = Some(Panic {
                        thread: c[1].to_string(),
                        path: c[3].to_string(),
                        line,
                        col: c.get(5).and_then(|m| super::num(m.as_str())),
                        seq: l.no,
                    });
                    let msg = c[2].to_string();
                    self.finish_panic(&msg, sink);
                }
                return true;
            }
            if !t.contains("', ")
                && let Some(c) = PANIC_OLD_OPEN.captures(t)
            {
                self.finish(sink);
                self.open_panic = Some((c[1].to_string(), c[2].to_string(), l.no, OLD_PANIC_LINES));
                return true;
            }
            if let Some(c) = PANIC_NEW.captures(t) {
                self.finish(sink);
                if let (Some(line), Some(col)) = (super::num(&c[3]), super::num(&c[4])) {
                    self.panic = Some(Panic {
                        thread: c[1].to_string(),
                        path: c[2].to_string(),
                        line,
                        col: Some(col),
                        seq: l.no,
                    });
                }
                return true;
            }
        }
        // `strip_*` rather than slicing by the two lengths: in `---- stdout ----` (a real log's
        // separator) the prefix and the suffix overlap, and slicing panicked.
        if first == b'-'
            && let Some(name) = t
                .strip_prefix("---- ")
                .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            self.current_test = Some(name.to_string());
            return true;
        }
        // The list of failed tests, and the verdict, follow the last test's output.
        if (first == b'f' && t == "failures:") || (first == b't' && t.starts_with("test result: "))
        {
            self.current_test = None;
        }
        if self.in_warning {
            if is_frame_line(l) {
                return true;
            }
            self.in_warning = false;
        }
        let Some(d) = &mut self.diag else {
            return false;
        };
        // Some log captures double every line (`text\r\n\r\n`, seen on Travis macOS): a
        // blank line between a rustc header and its location does not end the block.
        if l.is_blank() && d.kind == Kind::Rustc && d.loc.is_none() && d.blanks < 2 {
            d.blanks += 1;
            return true;
        }
        d.since += 1;
        if d.budget == 0 || !is_frame_line(l) {
            self.finish(sink);
            return false;
        }
        d.budget -= 1;
        if d.kind == Kind::Ruff && d.since > 1 && d.loc.is_none() {
            self.diag = None;
            return false;
        }
        let tt = l.trimmed();
        if tt.starts_with("-->") {
            if d.loc.is_none()
                && let Some(c) = ARROW.captures(t)
                && let (Some(line), Some(col)) = (super::num(&c[2]), super::num(&c[3]))
            {
                d.loc = Some((c[1].to_string(), line, col));
            }
            return true;
        }
        // The lint comes from a note, or (after `note: the lint level is defined here`) from
        // the `#[deny(…)]` attribute shown in the code frame.
        if d.kind == Kind::Rustc
            && (tt.starts_with('=')
                || tt.starts_with("note")
                || crate::contains(tt, "deny(")
                || crate::contains(tt, "forbid("))
        {
            if let Some(c) = LINT_D.captures(tt) {
                let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
                if name != "warnings" {
                    d.clippy |= name.starts_with("clippy::");
                    d.lint.get_or_insert_with(|| name.replace('-', "_"));
                } else {
                    d.lint.get_or_insert_with(String::new);
                }
            }
            if let Some(c) = CLIPPY_URL.captures(tt) {
                d.clippy = true;
                d.lint = Some(format!("clippy::{}", &c[1]));
            }
        }
        // `For more information…`, `error: could not compile` and code-frame lines: the block
        // keeps going until a blank line.
        true
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.finish(sink);
        self.panic = None;
        self.open_panic = None;
        self.in_warning = false;
        self.current_test = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn a_bare_stdout_separator_is_no_test_header_and_does_not_panic() {
        // emissary-ingress/emissary's pytest harness prints this separator before a command's
        // output (its Actions job 2505733928, kept in BugSwarm's test data); `---- ` and
        // ` stdout ----` overlap in it.
        let log = "---- stdout ----\nerror[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:3:5\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].test_name, None);
    }

    #[test]
    fn a_doctest_that_does_not_compile_names_the_doctest() {
        let log = "---- src/m.rs - m::f (line 8) stdout ----\nerror[E0432]: unresolved import `crate::x`\n --> src/m.rs:9:12\n  |\n9 | use crate::x;\n  |     ^ no `x` in the root\n\nfailures:\n    src/m.rs - m::f (line 8)\n\nerror[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:3:5\n  |\n";
        let r: Vec<_> = parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.test_name))
            .collect();
        assert_eq!(
            r,
            vec![
                ("src/m.rs".into(), Some("src/m.rs - m::f (line 8)".into())),
                ("src/lib.rs".into(), None),
            ]
        );
    }

    #[test]
    fn compiletest_annotation_mismatches() {
        // rust-lang/rust#46116 (Travis, `[00:38:49] ` stamps) and the `expected … not found`
        // shape compiletest prints for a missing diagnostic.
        let log = "[00:38:49] ---- [ui] ui/fmt/send-sync.rs stdout ----\n[00:38:49] \t\n[00:38:49] error: /checkout/src/test/ui/fmt/send-sync.rs:18: unexpected error: '18:5: 18:9: the trait bound is not satisfied [E0277]'\n[00:38:49] \n\nerror: tests/ui/x.rs:5: expected error not found: mismatched types\nerror: test failed, to rerun pass `--test compile-test`\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("src/test/ui/fmt/send-sync.rs", 18, BugType::Logic),
                ("tests/ui/x.rs", 5, BugType::Logic)
            ]
        );
        assert_eq!(r[0].test_name.as_deref(), Some("[ui] ui/fmt/send-sync.rs"));
    }

    #[test]
    fn rustc_error_with_location() {
        let log = "error[E0432]: unresolved import `foo`\n --> src/main.rs:1:5\n  |\n1 | use foo;\n  |     ^^^ no external crate `foo`\n\nerror[E0308]: mismatched types\n  --> src/lib.rs:10:9\n   |\n\nerror: aborting due to 2 previous errors\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(r[0].rule.as_deref(), Some("E0432"));
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("src/lib.rs", 10)
        );
        assert_eq!(r[1].error_type, BugType::TypeError);
    }

    #[test]
    fn denied_warnings_and_plain_warnings() {
        let log = "warning: unused variable: `y`\n --> src/a.rs:2:9\n  |\n\nerror: unused import: `std::fs`\n --> src/main.rs:1:5\n  |\n1 | use std::fs;\n  |     ^^^^^^^\n  |\n  = note: `-D unused-imports` implied by `-D warnings`\n  = help: to override `-D warnings` add `#[allow(unused_imports)]`\n\nerror: the loop variable `i` is only used to index `v`\n --> src/lib.rs:4:14\n  |\n  = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#needless_range_loop\n  = note: `-D clippy::needless-range-loop` implied by `-D warnings`\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[0].rule.as_deref(), Some("unused_imports"));
        assert_eq!(r[1].tool.as_deref(), Some("clippy"));
        assert_eq!(r[1].rule.as_deref(), Some("clippy::needless_range_loop"));
    }

    #[test]
    fn panics_new_and_old() {
        let log = "---- tests::adds stdout ----\nthread 'tests::adds' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: 3\nthread 'main' panicked at 'boom', src/main.rs:3:5\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].test_name.as_deref(), Some("tests::adds"));
        assert_eq!(r[0].message, "assertion `left == right` failed");
        assert_eq!(r[1].message, "boom");
        assert_eq!(r[1].test_name.as_deref(), Some("tests::adds"));
    }

    #[test]
    fn std_panics_and_doubled_lines() {
        // Real Travis lines (LogChunks: BurntSushi/ripgrep 524430085, redox-os/redox 357884038,
        // jwilm/alacritty 564267025 with every line doubled).
        let log = "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }', src/libcore/result.rs:999:5\nthread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Custom { kind: NotFound }', libcore/result.rs:945:5\nerror[E0463]: can't find crate for `fontconfig`\r\n\r\n  --> font/src/lib.rs:28:1\r\n\r\n   |\r\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("font/src/lib.rs", 28)
        );
        assert_eq!(r[0].error_type, BugType::Import);
    }

    #[test]
    fn ui_test_line_numbers() {
        // rust-lang/rust-clippy tests/ui/crashes/ice-360.stderr: the lint note comes after
        // `LL |` code-frame lines.
        let log = "error: this loop never actually loops\n  --> tests/ui/crashes/ice-360.rs:5:5\n   |\nLL | /     loop {\n...  |\nLL | |     }\n   | |_____^\n   |\n   = note: `#[deny(clippy::never_loop)]` on by default\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[0].rule.as_deref(), Some("clippy::never_loop"));
    }

    #[test]
    fn lint_level_from_attribute() {
        // rust-lang/rust-clippy tests/ui/bytecount.stderr.
        let log = "error: you appear to be counting bytes the naive way\n  --> tests/ui/bytecount.rs:10:13\n   |\nLL |     let _ = x.iter().filter(|&&a| a == 0).count();\n   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ help: consider using the bytecount crate: `bytecount::count(x, 0)`\n   |\nnote: the lint level is defined here\n  --> tests/ui/bytecount.rs:5:8\n   |\nLL | #[deny(clippy::naive_bytecount)]\n   |        ^^^^^^^^^^^^^^^^^^^^^^^\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 10);
        assert_eq!(r[0].rule.as_deref(), Some("clippy::naive_bytecount"));
    }

    #[test]
    fn old_and_indented_panics() {
        // llogiq/flame#25 (Rust 1.18, no column, pasted with a tab) and cargo-generate#1671
        // (Rust >= 1.91 thread id).
        let log = "\tthread 'threads' panicked at 'assertion failed: `(left == right)` (left: `5`, right: `6`)', tests/tests.rs:111\nthread 'user_parsed_input::tests::git_flag' (8866) panicked at src/user_parsed_input.rs:653:43:\nassertion `left == right` failed\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.column))
            .collect();
        assert_eq!(
            got,
            [
                ("tests/tests.rs", 111, None),
                ("src/user_parsed_input.rs", 653, Some(43))
            ],
            "{r:?}"
        );
        assert_eq!(r[0].test_name.as_deref(), Some("threads"));
    }

    #[test]
    fn an_old_panic_message_spanning_lines() {
        // stegos/stegos#717: `assert_eq!` before Rust 1.73 printed `left:`/`right:` inside the
        // quoted message, so the location closes the third line.
        let log = "thread 'kad::addresses::tests::not_connected_expire' panicked at 'assertion failed: `(left == right)`\n  left: `0`,\n right: `2`', network/src/kad/addresses.rs:190:9\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("network/src/kad/addresses.rs", 190, BugType::Logic)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("kad::addresses::tests::not_connected_expire")
        );
    }

    #[test]
    fn ruff_full_format() {
        let log = "F401 [*] `os` imported but unused\n --> app/main.py:1:8\n  |\n1 | import os\n  |        ^^\n  |\nhelp: Remove unused import: `os`\n\ninvalid-syntax: Expected an expression\n --> app/b.py:3:5\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].rule.as_deref(), Some("F401"));
        assert_eq!(r[0].file_path, "app/main.py");
        assert_eq!(r[1].error_type, BugType::Syntax);
    }
}
