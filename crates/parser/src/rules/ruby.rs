//! Ruby: `ruby -c` / interpreter syntax errors (`x.rb:12: syntax error…`), RuboCop offenses in
//! its clang/emacs/progress formats (`path:12:5: C: Style/Cop: msg`) and its `simple` format
//! (`== path ==` then `C: 12:  5: …`), RSpec failure blocks (`  1) desc` … `# ./lib/x.rb:5:in
//! 'm'`) and its `rspec ./spec/x_spec.rb:12 # desc` summary, minitest `Failure:` / `Error:`
//! blocks (`Klass#test_x [test/x_test.rb:12]:`, old `test_x(Klass) [...]`), and uncaught
//! exceptions (`x.rb:5:in 'm': msg (NameError)`; a `SyntaxError` raised by `require` at the
//! file its message names, not at the `require`), and cucumber's `(::) failed steps (::)` list
//! (each failure's message, ` (ExceptionClass)`, then its backtrace down to the `.feature` step:
//! the first step definition of the repository, else the step's line in the feature file).
//!
//! RuboCop fails the step for every offense at its default `--fail-level` except `I:` (info) and
//! offenses it corrected itself (`[Corrected]`); those two are never reported. It must never
//! report a frame in an installed gem (`vendor/bundle/`, `/gems/`), a minitest `Skipped:` block,
//! the rerun hints (`bin/rails test x.rb:12`), or an RSpec summary line for an example whose
//! failure block was already reported.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// Lines a failure block may span before it is dropped.
const BLOCK_BUDGET: u32 = 200;
/// Test names remembered for the RSpec summary.
const MAX_NAMES: usize = 256;

static RUBOCOP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\S+?):(\d+):(\d+): ([CWEFRI]): (\[(?:Correctable|Corrected|Todo)\] )?(?:([A-Z]\w*(?:/\w+)+): )?(.+)$",
    )
    .unwrap()
});
static RUBOCOP_SIMPLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([CWEFRI]):\s*(\d+):\s*(\d+): (\[(?:Correctable|Corrected|Todo)\] )?(?:([A-Z]\w*(?:/\w+)+): )?(.+)$",
    )
    .unwrap()
});
/// standardrb: `  path:12:5: Style/Cop: msg` (RuboCop without the severity letter).
static STANDARD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?):(\d+):(\d+): ([A-Z]\w*(?:/[A-Z]\w*)+): (.+)$").unwrap());
/// `path:12: message` from the interpreter (`ruby -c`, `ruby -w`, load errors).
static INTERP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?\.(?:rb|rake|gemspec|ru)):(\d+): (.+)$").unwrap());
/// A backtrace frame: `path:12:in 'm'`, `# ./path:12:in …`, `from path:12:in …`, `path:12`.
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:# |from )?(\S+?):(\d+)(?::in [`'](.*)'?)?$").unwrap());
/// An uncaught exception: `path:12:in 'm': message (Class)`.
static UNCAUGHT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?\.(?:rb|rake|ru)):(\d+):in [`'][^']*': (.+) \(([A-Z][\w:]*)\)$").unwrap()
});
/// minitest: `Klass#test_x [path:12]:` or `test_x(Klass) [path:12]:`.
static MT_LOCATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?) +\[(\S+?):(\d+)\]:?$").unwrap());
static RSPEC_RERUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^rspec (\S+?):(\d+) # (.+)$").unwrap());
static EXC_CLASS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Z]\w*(?:::[A-Z]\w*)*):(?: (.*))?$").unwrap());

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Kind {
    /// minitest `Failure:`: the next line names the test and the location.
    MtFailure,
    /// minitest `Error:`: the test, the exception, then its backtrace.
    MtError,
    /// RSpec `  1) desc` or `An error occurred while loading …`.
    Rspec,
    /// An uncaught exception whose first frame was outside the repository.
    Uncaught,
    /// The rest of a `SyntaxError` message raised by `require` (Ruby 2 prints the code, the
    /// caret and any further `file:N: syntax error` of the same file before the `from` frames).
    SyntaxRest,
}

#[derive(Debug)]
struct Block {
    kind: Kind,
    test: Option<String>,
    message: String,
    ty: BugType,
    /// Lines seen after the header.
    lines: u32,
    /// RSpec: `Failure/Error:` (or an error outside examples) confirmed the block.
    confirmed: bool,
    /// A backtrace frame has been seen (later non-frame lines end the backtrace).
    framed: bool,
    /// minitest `Failure:`: the location, reported with the next line as its message.
    located: Option<(String, String)>,
    /// RSpec: the exception class line after `Failure/Error:` came without its message, which
    /// the next line holds.
    detail: bool,
    seq: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Ruby {
    block: Option<Block>,
    /// RuboCop `simple` format: the file of the `== path ==` header above.
    simple_file: Option<String>,
    /// Tests reported from failure blocks (the RSpec summary repeats them).
    reported: Vec<String>,
    /// Inside RSpec's `Pending:` list, whose `Failure/Error:` blocks are expected failures.
    pending: bool,
    /// Inside cucumber's `(::) failed steps (::)` list.
    cucumber: Option<Cuke>,
}

/// Lines cucumber's failed-steps list may span before it is given up.
const CUKE_BUDGET: u32 = 5000;

/// One failure of cucumber's failed-steps list: its message (first line), whether its exception
/// class ended the message, and whether a frame was reported.
#[derive(Debug, Default)]
struct Cuke {
    message: Option<String>,
    backtrace: bool,
    reported: bool,
    lines: u32,
}

/// A message line ending with the exception's class: ` (RSpec::Expectations::ExpectationNotMetError)`
/// alone, or after the message's last words.
fn ends_with_exception_class(t: &str) -> bool {
    let Some(inner) = t.strip_suffix(')') else {
        return false;
    };
    let class = inner.rsplit_once('(').map_or("", |(_, c)| c);
    class.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && class
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b':' || c == b'_')
}

/// Installed gems and the interpreter's own files: never the project's code.
fn is_dependency(path: &str) -> bool {
    crate::path::is_vendored(path)
        || [
            "vendor/bundle/",
            "/gems/",
            ".bundle/",
            "/rubygems/",
            "<internal:",
        ]
        .iter()
        .any(|m| path.starts_with(m) || path.contains(m))
        || path.starts_with("gems/")
}

/// The bug type an exception class stands for.
fn exception_type(class: &str) -> BugType {
    match class.rsplit("::").next().unwrap_or(class) {
        "SyntaxError" => BugType::Syntax,
        "LoadError" => BugType::Import,
        _ => BugType::Logic,
    }
}

/// Finds `: X: ` with X a RuboCop severity letter (the cheap test before the regex).
fn has_severity(t: &str) -> bool {
    let b = t.as_bytes();
    memchr::memmem::find_iter(b, ": ").any(|i| {
        b.get(i + 3) == Some(&b':')
            && b.get(i + 4) == Some(&b' ')
            && matches!(b.get(i + 2), Some(b'C' | b'W' | b'E' | b'F' | b'R' | b'I'))
    })
}

/// The rest of a numbered line: `12) rest` (1 to 5 digits).
pub(crate) fn numbered(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    let n = b.iter().take(6).take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 5 || b.get(n) != Some(&b')') || b.get(n + 1) != Some(&b' ') {
        return None;
    }
    t.get(n + 2..)
}

/// The `path` of a line that starts with `path:N` (no blank in the path, not all digits).
pub(crate) fn lead_path(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    let i = memchr::memchr(b':', b)?;
    let head = &b[..i];
    if i == 0
        || !b.get(i + 1).is_some_and(u8::is_ascii_digit)
        || head.iter().all(u8::is_ascii_digit)
        || memchr::memchr2(b' ', b'\t', head).is_some()
    {
        return None;
    }
    t.get(..i)
}

/// Finds `: Dept/Cop: ` (the cheap test before standardrb's regex).
fn has_cop(t: &str) -> bool {
    let b = t.as_bytes();
    memchr::memmem::find_iter(b, ": ").any(|i| {
        let rest = &b[i + 2..];
        rest.first().is_some_and(u8::is_ascii_uppercase)
            && rest
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'/' || **c == b'_')
                .any(|c| *c == b'/')
    })
}

impl Ruby {
    /// True when the line cannot matter: no block is open, and it has no `path:N` and none of
    /// the first bytes that start one (`Failure:`, `Error:`, `1) …`, `rspec …`, `An error…`,
    /// `== path ==`).
    #[inline]
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.block.is_none()
            && self.simple_file.is_none()
            && self.cucumber.is_none()
            && l.first != b'('
            && !l.colon_digit
            && !matches!(l.first, b'F' | b'E' | b'A' | b'0'..=b'9')
            && !(l.first == b'P' && self.pending_start(l))
            && !(l.first == b'=' && l.last == b'=')
    }

    /// `Pending:` at the margin (RSpec's list of pending examples).
    fn pending_start(&self, l: &Line<'_>) -> bool {
        l.indent() == 0 && l.trimmed().starts_with("Pending:")
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if l.first == b'(' && t == "(::) failed steps (::)" {
            self.cucumber = Some(Cuke::default());
            return true;
        }
        if self.cucumber.is_some() {
            return self.cucumber_line(t, l.no, sink);
        }
        if self.pending && l.first == b'F' && t.starts_with("Finished in ") {
            self.pending = false;
        }
        if self.block.is_some() && self.block_line(l, sink) {
            return true;
        }
        // Headers of blocks.
        match l.first {
            b'F' | b'E' | b'0'..=b'9' => {
                let numbered = numbered(t);
                let word = numbered.unwrap_or(t);
                if word == "Failure:" || word == "Error:" {
                    self.start(
                        if word == "Failure:" {
                            Kind::MtFailure
                        } else {
                            Kind::MtError
                        },
                        None,
                        l.no,
                    );
                    return true;
                }
                if t == "Failures:" {
                    self.pending = false;
                }
                // RSpec indents its numbered failures; PHPUnit and JUnit do not.
                if l.indent() >= 2
                    && !self.pending
                    && let Some(desc) = numbered
                {
                    self.start(Kind::Rspec, Some(desc.to_string()), l.no);
                    return false;
                }
            }
            b'A' if t.starts_with("An error occurred while loading ") => {
                self.start(Kind::Rspec, None, l.no);
                if let Some(b) = &mut self.block {
                    b.confirmed = true;
                    b.message = t.to_string();
                }
                return true;
            }
            b'=' => {
                // A path, not a sentence: Elixir's `== Compilation error in file x.ex ==`
                // has the same frame.
                if let Some(p) = t
                    .strip_prefix("== ")
                    .and_then(|r| r.strip_suffix(" =="))
                    .filter(|p| !p.contains(char::is_whitespace))
                {
                    self.simple_file = Some(p.to_string());
                    return true;
                }
            }
            b'r' if t.starts_with("rspec ") => return self.rspec_rerun(t, l.no, sink),
            b'P' if t.starts_with("Pending:") => {
                self.pending = true;
                return true;
            }
            _ => {}
        }
        if self.simple_file.is_some() {
            if let Some(c) = RUBOCOP_SIMPLE.captures(t) {
                let path = self.simple_file.clone().unwrap_or_default();
                offense(
                    &path,
                    &c[2],
                    &c[3],
                    &c[1],
                    c.get(4),
                    c.get(5),
                    &c[6],
                    l.no,
                    sink,
                );
                return true;
            }
            if t.is_empty() || t.contains(" inspected") {
                self.simple_file = None;
            }
        }
        if !l.colon_digit {
            return false;
        }
        self.colon(t, l.no, sink)
    }

    /// A line of cucumber's failed-steps list; everything up to `Failing Scenarios:` is its own
    /// (the message may quote another program's backtrace, which is not the failure's).
    fn cucumber_line(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        let Some(c) = &mut self.cucumber else {
            return false;
        };
        c.lines += 1;
        if c.lines > CUKE_BUDGET || t == "Failing Scenarios:" || t.ends_with(" scenarios)") {
            self.cucumber = None;
            return false;
        }
        if t.is_empty() {
            return true;
        }
        if c.message.is_none() {
            c.message = Some(crate::sink::truncate_chars(t, 300).to_string());
        }
        if !c.backtrace {
            c.backtrace = ends_with_exception_class(t);
            return true;
        }
        let Some(path) = lead_path(t) else {
            return true;
        };
        let line = t[path.len() + 1..]
            .split(':')
            .next()
            .and_then(super::num)
            .unwrap_or(0);
        let feature = path.ends_with(".feature");
        if !c.reported && (feature || (!is_dependency(path) && sink.is_own_frame(path))) {
            let msg = c.message.clone().unwrap_or_default();
            c.reported = sink.emit(
                seq,
                Finding::new(path, line, BugType::Logic, &msg)
                    .conf(0.85)
                    .tool("cucumber"),
            );
        }
        if feature {
            // The step's line ends this failure's backtrace; the next failure follows.
            *c = Cuke {
                lines: c.lines,
                ..Cuke::default()
            };
        }
        true
    }

    fn colon(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        // Every shape below starts with `path:N`; most `:N` lines (times, counters) do not.
        let Some(path) = lead_path(t) else {
            return false;
        };
        if has_severity(t)
            && let Some(c) = RUBOCOP.captures(t)
        {
            offense(
                &c[1],
                &c[2],
                &c[3],
                &c[4],
                c.get(5),
                c.get(6),
                &c[7],
                seq,
                sink,
            );
            return true;
        }
        if has_cop(t)
            && let Some(c) = STANDARD.captures(t)
        {
            offense(&c[1], &c[2], &c[3], "C", None, c.get(4), &c[5], seq, sink);
            return true;
        }
        if !matches!(super::ext(path), "rb" | "rake" | "gemspec" | "ru") {
            return false;
        }
        if let Some(c) = UNCAUGHT.captures(t) {
            let ty = exception_type(&c[4]);
            // `test_helper.rb:5:in 'require': lib/x.rb:16: syntax error, … (SyntaxError)`: the
            // frame is the loader's, the message names the file that does not parse.
            if ty == BugType::Syntax
                && let Some(m) = INTERP.captures(&c[3])
                && self.frame_emit(&m[1], &m[2], ty, &m[3], None, seq, sink)
            {
                self.block = Some(Block {
                    kind: Kind::SyntaxRest,
                    test: None,
                    // The file, whose further syntax errors the message may list.
                    message: m[1].to_string(),
                    ty,
                    lines: 0,
                    confirmed: true,
                    framed: false,
                    located: None,
                    detail: false,
                    seq,
                });
                return true;
            }
            let msg = format!("{} ({})", &c[3], &c[4]);
            if self.frame_emit(&c[1], &c[2], ty, &msg, None, seq, sink) {
                return true;
            }
            // The exception came from a gem: the first `from` frame in the repo places it.
            self.block = Some(Block {
                kind: Kind::Uncaught,
                test: None,
                message: msg,
                ty,
                lines: 0,
                confirmed: true,
                framed: true,
                located: None,
                detail: false,
                seq,
            });
            return true;
        }
        if let Some(c) = INTERP.captures(t) {
            let msg = &c[3];
            if msg.starts_with("syntax error") || msg.starts_with("syntax errors found") {
                let n = super::num(&c[2]).unwrap_or(0);
                sink.emit(
                    seq,
                    Finding::new(&c[1], n, BugType::Syntax, msg)
                        .conf(0.95)
                        .tool("ruby"),
                );
                return true;
            }
        }
        false
    }

    /// `rspec ./spec/x_spec.rb:12 # desc`: the example's definition, reported only when no
    /// failure block named it (the block's location is the better one).
    fn rspec_rerun(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        let Some(c) = RSPEC_RERUN.captures(t) else {
            return false;
        };
        let desc = c[3].trim();
        let key = crate::sink::truncate_chars(desc, crate::MAX_MESSAGE);
        if self.reported.iter().any(|r| r == key) {
            return true;
        }
        let n = super::num(&c[2]).unwrap_or(0);
        if !is_dependency(&c[1]) {
            sink.emit(
                seq,
                Finding::new(&c[1], n, BugType::Logic, desc)
                    .test(Some(desc))
                    .conf(0.8)
                    .tool("rspec"),
            );
        }
        true
    }

    fn start(&mut self, kind: Kind, test: Option<String>, seq: u64) {
        self.block = Some(Block {
            kind,
            test,
            message: String::new(),
            ty: BugType::Logic,
            lines: 0,
            confirmed: kind != Kind::Rspec,
            framed: false,
            located: None,
            detail: false,
            seq,
        });
    }

    /// Emits at `path:line` when it is the project's own code. Returns true when emitted.
    #[allow(clippy::too_many_arguments)]
    fn frame_emit(
        &mut self,
        path: &str,
        line: &str,
        ty: BugType,
        msg: &str,
        test: Option<&str>,
        seq: u64,
        sink: &mut Sink,
    ) -> bool {
        let Some(rel) = sink.repo_path(path) else {
            return false;
        };
        if is_dependency(&rel) || !crate::path::has_extension(&rel) {
            return false;
        }
        let n = super::num(line).unwrap_or(0);
        let tool = match self.block.as_ref().map(|b| b.kind) {
            Some(Kind::Rspec) => "rspec",
            Some(Kind::MtFailure | Kind::MtError) => "minitest",
            _ => "ruby",
        };
        let emitted = sink.emit(
            seq,
            Finding::new(&rel, n, ty, msg)
                .test(test)
                .conf(0.85)
                .tool(tool),
        );
        if emitted && let Some(t) = test {
            // Names are compared as the sink keeps them (cut), so memory stays bounded.
            if self.reported.len() < MAX_NAMES {
                let name = crate::sink::truncate_chars(t.trim(), crate::MAX_MESSAGE);
                self.reported.push(name.to_string());
            }
        }
        emitted
    }

    /// A line inside an open block. Returns true when the block consumed it.
    fn block_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        let Some(b) = &mut self.block else {
            return false;
        };
        b.lines += 1;
        if b.lines > BLOCK_BUDGET {
            self.block = None;
            return false;
        }
        match b.kind {
            Kind::MtFailure => {
                // `Klass#test [path:12]:`, then the assertion's message on the next line.
                if let Some((path, line)) = b.located.take() {
                    let msg = if t.is_empty() {
                        b.message.clone()
                    } else {
                        t.to_string()
                    };
                    let (test, seq) = (b.test.clone(), b.seq);
                    self.block = None;
                    self.frame_emit(
                        &path,
                        &line,
                        BugType::Logic,
                        &msg,
                        test.as_deref(),
                        seq,
                        sink,
                    );
                    return true;
                }
                if t.is_empty() {
                    return true;
                }
                if let Some(c) = MT_LOCATED.captures(t) {
                    b.test = Some(c[1].to_string());
                    b.located = Some((c[2].to_string(), c[3].to_string()));
                    b.message = t.to_string();
                    return true;
                }
                self.block = None;
                false
            }
            Kind::MtError => {
                if b.test.is_none() {
                    match t.strip_suffix(':') {
                        Some(name) if !name.is_empty() => {
                            b.test = Some(name.to_string());
                            return true;
                        }
                        _ => {
                            self.block = None;
                            return false;
                        }
                    }
                }
                if b.message.is_empty() {
                    if let Some(c) = EXC_CLASS.captures(t) {
                        b.ty = exception_type(&c[1]);
                    }
                    b.message = crate::sink::truncate_chars(t, 400).to_string();
                    return true;
                }
                self.frames(t, sink)
            }
            Kind::SyntaxRest => {
                // Later errors of the file are the parser's cascade of the first (`unexpected
                // keyword_end, expecting end-of-input`); the `from` frames are the loader's.
                let file = b.message.as_str();
                let rest = t.starts_with("from ")
                    || (l.colon_digit
                        && t.starts_with(file)
                        && t[file.len()..].starts_with(':')
                        && t.contains(": syntax error"));
                if rest || (!t.is_empty() && b.lines <= 8 && !l.colon_digit) {
                    return true;
                }
                self.block = None;
                false
            }
            Kind::Uncaught => {
                if l.colon_digit && t.starts_with("from ") {
                    return self.frames(t, sink);
                }
                self.block = None;
                false
            }
            Kind::Rspec => {
                if !b.confirmed {
                    if t.starts_with("Failure/Error:") || t.starts_with("Got ") {
                        b.confirmed = true;
                        b.message = crate::sink::truncate_chars(t, 400).to_string();
                        return true;
                    }
                    if b.lines > 3 {
                        self.block = None;
                        return false;
                    }
                    return t.is_empty();
                }
                if let Some(c) = EXC_CLASS.captures(t) {
                    let ty = exception_type(&c[1]);
                    if ty != BugType::Logic {
                        b.ty = ty;
                    }
                    // An error, not a failed expectation: `Failure/Error:` quoted the code, the
                    // exception's message says what went wrong.
                    if ty == BugType::Logic
                        && b.message.starts_with("Failure/Error:")
                        && !b.message.contains(" — ")
                    {
                        match c.get(2).filter(|m| !m.as_str().is_empty()) {
                            Some(m) => {
                                b.message = format!("{} — {}: {}", b.message, &c[1], m.as_str());
                            }
                            None => {
                                b.message = format!("{} — {}:", b.message, &c[1]);
                                b.detail = true;
                            }
                        }
                    }
                    return true;
                }
                if b.detail && !t.is_empty() && !t.starts_with("# ") {
                    b.detail = false;
                    b.message.push(' ');
                    b.message.push_str(crate::sink::truncate_chars(t, 300));
                    return true;
                }
                if t.starts_with("# ") && l.colon_digit {
                    return self.frames(t, sink);
                }
                // A file that does not parse: the interpreter's message names the location
                // (the frames are the loader's).
                let seq = b.seq;
                if l.colon_digit && b.ty == BugType::Syntax && self.colon(t, seq, sink) {
                    self.block = None;
                    return true;
                }
                // The next example, or the end of the failures section.
                if (l.indent() >= 2 && l.first.is_ascii_digit() && t.contains(") "))
                    || t.starts_with("Finished in ")
                    || t == "Failed examples:"
                {
                    self.block = None;
                    return false;
                }
                true
            }
        }
    }

    /// A backtrace line: the first frame in the repository places the block's report.
    fn frames(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(c) = FRAME.captures(t) else {
            let Some(b) = &self.block else {
                return false;
            };
            // minitest's message may span lines; its backtrace ends at a blank line (then
            // `bin/rails test …`).
            if t.is_empty() || (b.kind == Kind::MtError && b.framed) {
                self.block = None;
                return t.is_empty();
            }
            return true;
        };
        let Some(b) = &mut self.block else {
            return false;
        };
        b.framed = true;
        let (ty, msg, test, seq) = (b.ty, b.message.clone(), b.test.clone(), b.seq);
        if self.frame_emit(&c[1], &c[2], ty, &msg, test.as_deref(), seq, sink) {
            self.block = None;
        }
        true
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.cucumber = None;
        if let Some(mut b) = self.block.take()
            && let Some((path, line)) = b.located.take()
        {
            let test = b.test.take();
            self.frame_emit(
                &path,
                &line,
                BugType::Logic,
                &b.message,
                test.as_deref(),
                b.seq,
                sink,
            );
        }
        self.simple_file = None;
        self.pending = false;
    }
}

/// One RuboCop offense.
#[allow(clippy::too_many_arguments)]
fn offense(
    path: &str,
    line: &str,
    col: &str,
    sev: &str,
    tag: Option<regex::Match<'_>>,
    cop: Option<regex::Match<'_>>,
    msg: &str,
    seq: u64,
    sink: &mut Sink,
) {
    // Info offenses do not fail the run, and corrected ones are fixed already.
    if sev == "I" || tag.is_some_and(|m| m.as_str().starts_with("[Corrected]")) {
        return;
    }
    let cop = cop.map(|m| m.as_str());
    let ty = if cop == Some("Lint/Syntax") {
        BugType::Syntax
    } else {
        BugType::Linting
    };
    sink.emit(
        seq,
        Finding::new(path, super::num(line).unwrap_or(0), ty, msg)
            .col(super::num(col))
            .conf(0.95)
            .tool("rubocop")
            .rule(cop),
    );
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    fn parse(log: &str) -> Vec<crate::BugReport> {
        parse_str(log, &ParseOptions::default())
    }

    #[test]
    fn rubocop_severities() {
        // jenkinsci/analysis-model rubocop.log
        let log = "config.ru:1:1: C: Style/FrozenStringLiteralComment: Missing magic comment # frozen_string_literal: true.\n# This file is used by Rack-based servers to start the application.\n^\nspec/rails_helper.rb:6:7: E: Style/StringLiterals: Prefer single-quoted strings when you don't need string interpolation or special symbols.\nlib/tasks/generate_version.rake:21:24: C: [Correctable] Layout/SpaceBeforeBlockBraces: Space missing to the left of {.\nlib/tasks/generate_version.rake:3:5: C: [Corrected] Layout/SpaceBeforeBlockBraces: Space missing to the left of {.\nlib/x.rb:2:1: I: Style/Info: only info\nlib/y.rb:4:9: F: Lint/Syntax: unexpected token kEND\n";
        let r = parse(log);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0].file_path, "config.ru");
        assert_eq!(
            r[0].rule.as_deref(),
            Some("Style/FrozenStringLiteralComment")
        );
        assert_eq!(r[2].line_number, 21);
        assert_eq!(r[3].error_type, BugType::Syntax);
        assert!(r[..3].iter().all(|x| x.error_type == BugType::Linting));
    }

    #[test]
    fn standardrb() {
        // reviewdog/errorformat fmts/testdata/standardrb.in
        let log = "standard: Use Ruby Standard Style (https://github.com/testdouble/standard)\nstandard: Run `standardrb --fix` to automatically fix some problems.\n  app/models/order.rb:45:5: Style/TrailingCommaInHashLiteral: Put a comma after the last item of a multiline hash.\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("app/models/order.rb", 45)
        );
        assert_eq!(
            r[0].rule.as_deref(),
            Some("Style/TrailingCommaInHashLiteral")
        );
    }

    #[test]
    fn rubocop_simple_format() {
        let log = "== lib/a.rb ==\nC:  3:  5: Style/Foo: msg\nW: 10:  1: [Correctable] Lint/UselessAssignment: Useless assignment to variable - x.\n\n1 file inspected, 2 offenses detected\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("lib/a.rb", 10)
        );
    }

    #[test]
    fn minitest_failure_error_and_skip() {
        // jekyll and rails Travis logs (LogChunks)
        let log = "Skipped:\nTestCommandsServe#test_: using LiveReload should apply the max and min delay options.  [/home/travis/build/jekyll/jekyll/test/test_commands_serve.rb:47]:\nRefinements are not fully supported in JRuby\n\nFailure:\nTestKramdown#test_: kramdown when a custom highlighter is chosen should use the chosen highlighter if it's available.  [/home/travis/build/jekyll/jekyll/test/test_kramdown.rb:106]\nMinitest::Assertion: Expected true to not be truthy.\n\nError:\nClientTest#test_unsubscribe_client:\nRuntimeError: 1 messages unprocessed\n    /home/travis/build/rails/rails/vendor/bundle/ruby/2.6.0/gems/x-1.0/lib/x.rb:3:in `y'\n    /home/travis/build/rails/rails/actioncable/test/client_test.rb:170:in `close'\n    /home/travis/build/rails/rails/actioncable/test/client_test.rb:276:in `block in test_unsubscribe_client'\n\nbin/rails test /home/travis/build/rails/rails/actioncable/test/client_test.rb:270\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "test/test_kramdown.rb");
        assert_eq!(r[0].line_number, 106);
        assert!(
            r[0].test_name
                .as_deref()
                .unwrap()
                .starts_with("TestKramdown#test_: kramdown")
        );
        assert_eq!(r[1].file_path, "actioncable/test/client_test.rb");
        assert_eq!(r[1].line_number, 170);
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("ClientTest#test_unsubscribe_client")
        );
    }

    #[test]
    fn cucumber_failed_steps() {
        // cucumber-ruby's own CI: the repository's step definition; shoulda's: aruba's steps are
        // filtered out, so the feature's step line; the quoted app's backtrace is not the site.
        let log = "(::) failed steps (::)\n\nexpected: [\"a\", \"b\"]\n     got: [\"a\"]\n\n(compared using ==)\n (RSpec::Expectations::ExpectationNotMetError)\n./features/lib/step_definitions/wire_steps.rb:21:in `/^the wire server$/'\nfeatures/docs/invoke.feature:209:in `And the wire server'\n\nExit status was 1 but expected it to be 0. Output:\n\tfrom /home/travis/build/t/shoulda/tmp/aruba/app/config/boot.rb:6:in `<top (required)>'\n (RSpec::Expectations::ExpectationNotMetError)\nfeatures/rails_integration.feature:57:in `When I run it'\n\nFailing Scenarios:\ncucumber features/docs/invoke.feature:182 # Scenario: x\n";
        let r = parse(log);
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            [
                ("features/lib/step_definitions/wire_steps.rb", 21),
                ("features/rails_integration.feature", 57)
            ]
        );
        assert!(r[0].message.starts_with("expected:"), "{r:?}");
    }

    #[test]
    fn rspec_error_message_follows_its_class() {
        let log = "  1) Wraith captures\n     Failure/Error: When(:size) { ImageSize.path(img).size }\n     Errno::ENOENT:\n       No such file or directory - shots/test1.png\n     # ./spec/wraith_spec.rb:39:in `block (3 levels)'\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(
            r[0].message.contains("Errno::ENOENT: No such file"),
            "{r:?}"
        );
    }

    #[test]
    fn rspec_block_and_summary() {
        let log = "Failures:\n\n  1) DistributedMutex executions should not allow critical sections to overlap\n     Failure/Error: yield\n\n     LocalJumpError:\n       no block given (yield)\n     # ./lib/distributed_mutex.rb:33:in `synchronize'\n     # ./spec/components/distributed_mutex_spec.rb:46:in `block (4 levels) in <main>'\n\nFinished in 1.2 seconds\n1 example, 1 failure\n\nFailed examples:\n\nrspec ./spec/components/distributed_mutex_spec.rb:30 # DistributedMutex executions should not allow critical sections to overlap\nrspec ./spec/models/user_spec.rb:12 # User is valid\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/distributed_mutex.rb", 33)
        );
        assert_eq!(r[1].file_path, "spec/models/user_spec.rb");
        assert_eq!(r[1].test_name.as_deref(), Some("User is valid"));
    }

    #[test]
    fn rspec_load_error_with_syntax_error() {
        // discourse Travis log (LogChunks)
        let log = "An error occurred while loading ./spec/requests/users_controller_spec.rb.\nFailure/Error: return load_without_bootsnap(resolved, wrap)\n\nSyntaxError:\n  /home/travis/build/discourse/discourse/spec/requests/users_controller_spec.rb:3520: syntax error, unexpected end-of-input, expecting end\n# /home/travis/build/discourse/discourse/vendor/bundle/ruby/2.6.0/gems/bootsnap-1.4.4/lib/bootsnap/load_path_cache/core_ext/kernel_require.rb:54:in `load'\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "spec/requests/users_controller_spec.rb");
        assert_eq!((r[0].line_number, r[0].error_type), (3520, BugType::Syntax));
    }

    #[test]
    fn rspec_pending_examples_are_not_failures() {
        // bundler/bundler Travis log (LogChunks, misc/regression-tests/4682.log)
        let log = "Pending: (Failures listed here are expected and do not affect your suite's status)\n\n  1) bundle update with --source option should not update gems not included in the source that happen to have the same name\n     # Allowed to fail to preserve backwards-compatibility\n     Failure/Error: expect(the_bundle).not_to include_gems \"activesupport 3.0\"\n       expected the bundle not to include gems \"activesupport 3.0\" but:\n     # ./spec/commands/update_spec.rb:141:in `block (3 levels) in <top (required)>'\n\nFinished in 15 minutes 57 seconds (files took 1.32 seconds to load)\n2053 examples, 0 failures, 8 pending\n\nFailures:\n\n  1) real world edgecases resolves dependencies correctly\n     Failure/Error: expect(lockfile).to include(\"rails (3.2.22.2)\")\n       # $? => 0\n     # ./spec/realworld/edgecases_spec.rb:52:in `block (2 levels) in <top (required)>'\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("spec/realworld/edgecases_spec.rb", 52)
        );
    }

    #[test]
    fn syntax_and_uncaught() {
        let log = "app/models/user.rb:12: syntax error, unexpected end-of-input, expecting end\nlib/x.rb:3: warning: assigned but unused variable - y\n/home/runner/work/R/R/lib/y.rb:5:in 'foo': undefined method 'bar' for nil (NoMethodError)\n\tfrom /home/runner/work/R/R/bin/run:3:in '<main>'\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Syntax);
        assert_eq!((r[1].file_path.as_str(), r[1].line_number), ("lib/y.rb", 5));
        assert_eq!(r[1].error_type, BugType::Logic);
    }

    #[test]
    fn syntax_error_raised_by_require_names_its_file_in_the_message() {
        // redis-store/redis-activesupport via TravisBuddy (fresh12): the `require` frame is the
        // loader's; the second error at line 339 is the cascade of the first.
        let log = "/home/travis/build/redis-store/redis-activesupport/test/test_helper.rb:5:in `require': /home/travis/build/redis-store/redis-activesupport/lib/active_support/cache/redis_store.rb:16: syntax error, unexpected ',' (SyntaxError)\n      DEFAULT_ERROR_HANDLER = -> (method:, returning:, exception:) do\n                                          ^\n/home/travis/build/redis-store/redis-activesupport/lib/active_support/cache/redis_store.rb:339: syntax error, unexpected keyword_end, expecting end-of-input\n\tfrom /home/travis/build/redis-store/redis-activesupport/test/test_helper.rb:5:in `<top (required)>'\n\tfrom /home/travis/build/redis-store/redis-activesupport/test/active_support/cache/redis_store_test.rb:1:in `require'\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "lib/active_support/cache/redis_store.rb",
                16,
                BugType::Syntax
            )
        );
        assert_eq!(r[0].message, "syntax error, unexpected ','");
        // Another file's error after the message is not swallowed.
        let more = format!("{log}\nlib/other.rb:3: syntax error, unexpected end-of-input\n");
        assert_eq!(parse(&more).len(), 2);
    }
}
