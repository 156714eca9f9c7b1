//! Elixir and Erlang (the BEAM): `mix compile` / `elixirc` (`** (CompileError) lib/x.ex:12: …`,
//! Elixir ≥ 1.15's `error: …` boxes ending in `└─ lib/x.ex:12:5`), warnings made fatal by
//! `--warnings-as-errors` (both warning formats), exceptions raised while a module compiles (the
//! frame in that file), uncaught exceptions of `mix run` scripts (innermost frame), ExUnit
//! failures (`1) test name (Mod.Test)`, then `test/x_test.exs:12` and a stacktrace), Credo
//! (`┃ [W] ↗ msg`, then `┃       lib/x.ex:12:5 #(Mod.fun)`; oneline and flycheck formats), erlc /
//! rebar3 (`src/x.erl:12[:5]: msg`, with `warnings_as_errors`), EUnit (`…*failed*`, then
//! `(test/x_tests.erl, line 12)` or `{file,"x.erl"},{line,12}`) and Common Test
//! (`x_SUITE:case failed on line 12`, rebar3's `%%% x_SUITE ==> case: FAILED` … `line: 12`;
//! suites are placed in `test/`, or OTP's `lib/<app>/test/`).
//!
//! Paths printed relative to the directory a tool ran in are rebased when the log says which:
//! `make[N]: Entering directory '/…/lib/compiler/src'` (OTP's bare `beam_ssa.erl:127`) and
//! Elixir's own Makefile banner `==> mix (ex_unit)` (tests of `lib/mix/`).
//! It must never report a warning unless the build said warnings are fatal, a frame of a
//! dependency or of OTP/Elixir (`(elixir 1.10.0) lib/enum.ex:1755`, `(lists.erl, line 170)`),
//! nor summaries (`** (Mix) …`, `Compilation failed`, `N tests, M failures`).

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

static WAE: crate::Needle = crate::needle!("warnings-as-errors");
static FAILED_ON_LINE: crate::Needle = crate::needle!(" failed on line ");

const EXTS: [&str; 7] = ["ex", "exs", "eex", "heex", "erl", "hrl", "escript"];
const MAX_PENDING: usize = 100;
const BLOCK_BUDGET: u32 = 300;

/// `** (Kind) [(for doctest at) ][… on ]path:line[:col][:] msg`.
static RAISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\*\* \(([\w.]+)\) (?:\(for doctest at\) )?(?:[\w ]*? (?:found )?on )?([^\s:]+\.(?:exs?|eex|heex|erl|hrl)):(\d+)(?::(\d+))?:?\s*(.*)$")
        .unwrap()
});
/// `** (Kind) msg` without a location (a runtime error; its frames follow).
static RAISE_BARE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\*\* \(([\w.]+)\) (.*)$").unwrap());
/// A stack frame: `    (app 1.2.3) lib/x.ex:12: Mod.fun/1` or `    test/x_test.exs:14: (test)`.
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\([\w ._-]+\) )?([^\s:()]+\.(?:exs?|erl)):(\d+):? ?(.*)$").unwrap()
});
/// A location line under a warning or error: `└─ lib/x.ex:3:5: M.f/0`, `  lib/x.ex:12: M.f/0`.
static LOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:└─ )?([^\s:]+\.(?:exs?|eex|heex)):(\d+)(?::(\d+))?(?::.*)?$").unwrap()
});
static EXUNIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+\) ((?:test|doctest|property|feature) .+ \([\w.]+\))$").unwrap()
});
static ERLC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([^\s:]+\.(?:erl|hrl|escript|xrl|yrl)):(\d+)(?::(\d+))?: (.*)$").unwrap()
});
static EUNIT_POS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(([^(),\s]+\.erl), line (\d+)\)").unwrap());
static FILE_TERM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\{file,"([^"]+\.erl)"\},\s*\{line,(\d+)\}"#).unwrap());
static CT_FAILED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\w+_SUITE):(\w+) failed on line (\d+)$").unwrap());
static OLD_WARNING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^\s:]+\.(?:exs?|eex|heex)):(\d+): warning: (.+)$").unwrap());
static CREDO_LOC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^\s:]+\.(?:exs?|eex|heex)):(\d+)(?::(\d+))? #\(").unwrap());
static CREDO_ONELINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[[CRFWD]\] \S+ ([^\s:]+\.(?:exs?|eex|heex)):(\d+)(?::(\d+))? (.+)$").unwrap()
});
static CREDO_FLYCHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([^\s:]+\.(?:exs?)):(\d+)(?::(\d+))?: ([CRFWD]): (.+)$").unwrap()
});

/// A message waiting for its location line.
#[derive(Debug)]
struct Pending {
    msg: String,
    error: bool,
    seq: u64,
    budget: u8,
}

#[derive(Debug)]
struct ExUnitBlock {
    test: String,
    loc: Option<(String, u64)>,
    frame: Option<(String, u64)>,
    msg: Option<String>,
    in_stack: bool,
    seq: u64,
    budget: u32,
}

#[derive(Debug)]
struct RuntimeBlock {
    msg: String,
    seq: u64,
    budget: u8,
}

#[derive(Debug)]
struct EunitBlock {
    test: String,
    seq: u64,
    budget: u8,
}

type Warning = (String, u64, Option<u64>, String, u64);

#[derive(Debug, Default)]
pub(crate) struct Beam {
    /// `lib/<app>/` while Elixir's Makefile runs that app's tests.
    prefix: Option<String>,
    /// erlc said `warnings being treated as errors`.
    werror: bool,
    /// `lib/<app>/test` from OTP's `Testing tests.<app>_test.…` lines.
    ct_dir: Option<String>,
    warnings: Vec<Warning>,
    pending: Option<Pending>,
    exunit: Option<ExUnitBlock>,
    runtime: Option<RuntimeBlock>,
    eunit: Option<EunitBlock>,
    credo: Option<(String, u64)>,
    /// The file of the last `== Compilation error in file … ==` banner.
    compiling: Option<String>,
    /// A `%%% x_SUITE ==> case: FAILED` (cth_readable) waiting for its `line: N`.
    ct_readable: Option<(String, String, u64, u8)>,
    /// Index of the report a `x_SUITE:case failed on line N` just added: Common Test prints
    /// the failure's term on the next line (`Reason: {assertEqual,[…]}`), which says more
    /// than the bare location.
    ct_reason: Option<usize>,
}

/// `path` under `prefix`, unless it is absolute.
fn place(prefix: Option<&str>, path: &str) -> String {
    match prefix {
        Some(p) if !path.starts_with('/') && !path.contains(":\\") => format!("{p}{path}"),
        _ => path.to_string(),
    }
}

fn ext_ok(path: &str) -> bool {
    EXTS.contains(&super::ext(path))
}

/// Classifies an Elixir compile-time exception.
fn elixir_type(kind: &str, msg: &str) -> BugType {
    const SYNTAX: [&str; 5] = [
        "syntax error",
        "unexpected token",
        "missing terminator",
        "unexpected reserved word",
        "invalid syntax",
    ];
    match kind {
        "SyntaxError" | "TokenMissingError" | "MismatchedDelimiterError" => BugType::Syntax,
        _ if SYNTAX.iter().any(|s| msg.starts_with(s)) => BugType::Syntax,
        _ if msg.contains("is not loaded and could not be found")
            || msg.contains("could not load module") =>
        {
            BugType::Import
        }
        _ => BugType::TypeError,
    }
}

/// `--verbose` appends the check: `message [Credo.Check.Warning.IoInspect]`.
fn credo_rule(msg: &str) -> (&str, Option<&str>) {
    match msg.strip_suffix(']').and_then(|m| m.rsplit_once(" [")) {
        Some((m, r)) if r.starts_with("Credo.Check.") => (m, Some(r)),
        _ => (msg, None),
    }
}

/// Classifies an erlc error.
fn erlc_type(msg: &str) -> BugType {
    let m = msg.trim();
    if m.starts_with("syntax error")
        || m.starts_with("unterminated ")
        || m.starts_with("premature end")
        || m.starts_with("illegal ")
    {
        BugType::Syntax
    } else if m.starts_with("can't find include") {
        BugType::Import
    } else {
        BugType::TypeError
    }
}

impl Beam {
    /// True when the line cannot concern this matcher: nothing open and none of the first bytes
    /// or marks that start something.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.pending.is_none()
            && self.ct_reason.is_none()
            && self.exunit.is_none()
            && self.runtime.is_none()
            && self.eunit.is_none()
            && self.credo.is_none()
            && self.ct_readable.is_none()
            && !l.colon_digit
            && l.last != b'*'
            && !matches!(
                l.first,
                b'*' | b'e' | b'w' | b'm' | b'c' | b'C' | b'G' | b'T' | b'%' | 0xE2
            )
            // `==> app`, `== Compilation error in file …`, not `=== RUN`.
            && !(l.first == b'=' && matches!(l.trimmed().as_bytes().get(2), Some(b'>' | b' ')))
            // `1) test …(Mod)` (ExUnit), `1> Testing tests.…` (OTP's runner).
            && !(l.first.is_ascii_digit()
                && (l.last == b')' || l.trimmed().as_bytes().get(1) == Some(&b'>')))
            // `x_SUITE:case failed on line N`, `line: N` (cth_readable).
            && !(l.first.is_ascii_lowercase() && l.last.is_ascii_digit())
    }

    /// Rebases a path the tool printed relative to the directory it ran in.
    fn place(&self, path: &str) -> String {
        place(self.prefix.as_deref(), path)
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if let Some(i) = self.ct_reason.take()
            && let Some(reason) = t.strip_prefix("Reason: ").map(str::trim)
            && !reason.is_empty()
        {
            if let Some(r) = sink.reports_mut().nth(i) {
                r.message =
                    crate::sink::truncate_chars(reason, crate::sink::MAX_MESSAGE).to_string();
            }
            return true;
        }
        if self.exunit.is_some() && self.exunit_line(l, sink) {
            return true;
        }
        if self.runtime.is_some() && self.runtime_line(t, sink) {
            return true;
        }
        if self.eunit.is_some() && self.eunit_line(t, sink) {
            return true;
        }
        if let Some(p) = &mut self.pending {
            p.budget = p.budget.saturating_sub(1);
            if l.colon_digit {
                let loc = t.trim_start_matches(['│', ' ']);
                if let Some(c) = LOC.captures(loc) {
                    let p = self.pending.take().unwrap_or_else(|| unreachable!());
                    let path = self.place(&c[1]);
                    let line = super::num(&c[2]).unwrap_or(0);
                    let col = c.get(3).and_then(|m| super::num(m.as_str()));
                    if p.error {
                        let ty = elixir_type("CompileError", &p.msg);
                        sink.emit(
                            p.seq,
                            Finding::new(&path, line, ty, &p.msg)
                                .col(col)
                                .conf(0.95)
                                .tool("elixir"),
                        );
                    } else if self.warnings.len() < MAX_PENDING {
                        self.warnings.push((path, line, col, p.msg, p.seq));
                    }
                    return true;
                }
            }
            if self.pending.as_ref().is_some_and(|p| p.budget == 0) {
                self.pending = None;
            }
        }
        if let Some((msg, seq)) = &self.credo {
            if let Some(rest) = t.strip_prefix('┃') {
                let rest = rest.trim();
                if let Some(c) = CREDO_LOC.captures(rest) {
                    let line = super::num(&c[2]).unwrap_or(0);
                    let col = c.get(3).and_then(|m| super::num(m.as_str()));
                    let (msg, rule) = credo_rule(msg);
                    sink.emit(
                        *seq,
                        Finding::new(&c[1], line, BugType::Linting, msg)
                            .col(col)
                            .conf(0.9)
                            .tool("credo")
                            .rule(rule),
                    );
                    self.credo = None;
                    return true;
                }
                if !rest.starts_with('[') {
                    return true;
                }
            } else {
                self.credo = None;
            }
        }
        // `Compilation failed due to warnings while using the --warnings-as-errors option`
        // (mix), or the same after `** (CompileError) ` (elixirc).
        if matches!(l.first, b'C' | b'*')
            && crate::has(&WAE, t)
            && (crate::contains(t, "failed") || crate::contains(t, "option"))
        {
            for (path, line, col, msg, seq) in std::mem::take(&mut self.warnings) {
                sink.emit(
                    seq,
                    Finding::new(&path, line, BugType::Linting, &msg)
                        .col(col)
                        .conf(0.9)
                        .tool("elixir"),
                );
            }
            return true;
        }
        let first = l.first;
        match first {
            b'*' if t.starts_with("** (") => return self.raise(t, l.no, sink),
            b'e' | b'w' => {
                let (error, msg) = if let Some(m) = t.strip_prefix("error: ") {
                    (true, m)
                } else if let Some(m) = t.strip_prefix("warning: ") {
                    (false, m)
                } else {
                    return false;
                };
                // Elixir >= 1.15 indents its diagnostics (`    warning: …`, `    error: …`).
                if l.indent() <= 8 {
                    self.pending = Some(Pending {
                        msg: crate::sink::truncate_chars(msg, 400).to_string(),
                        error,
                        seq: l.no,
                        budget: 14,
                    });
                }
                return false;
            }
            b'=' if t.starts_with("==> ") => {
                // `==> app (ex_unit)`: Elixir's Makefile, tests of `lib/<app>`; any other banner
                // (a dependency, an umbrella child) ends both that and the pending warnings.
                let rest = &t[4..];
                self.prefix = rest
                    .strip_suffix(" (ex_unit)")
                    .filter(|a| a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                    .map(|a| format!("lib/{a}/"));
                self.warnings.clear();
                return true;
            }
            b'=' if t.starts_with("== Compilation error ") => {
                // `== Compilation error in file lib/x.ex ==`: an exception raised while the
                // module body ran is placed at that file's frame.
                self.compiling = t
                    .trim_end_matches(" ==")
                    .rsplit_once(" file ")
                    .map(|(_, f)| f.to_string());
                return true;
            }
            b'G' if t.starts_with("Generated ") && t.ends_with(" app") => {
                self.warnings.clear();
                return false;
            }
            b'm' if t.starts_with("make[") => {
                self.make_dir(t);
                return false;
            }
            b'c' if t.starts_with("compile: warnings being treated as errors") => {
                self.werror = true;
                return true;
            }
            b'T' | b'0'..=b'9' if crate::contains(t, "Testing tests.") => {
                // OTP's test runner, behind an `erl` prompt: `1> Testing tests.kernel_test.…`.
                let at = t.find("Testing tests.").unwrap_or(0) + "Testing tests.".len();
                if let Some(app) = t[at..]
                    .split('.')
                    .next()
                    .and_then(|a| a.strip_suffix("_test"))
                {
                    self.ct_dir = Some(format!("lib/{app}/test"));
                }
                return false;
            }
            0xE2 if t.starts_with('┃') => {
                let rest = t.trim_start_matches('┃').trim();
                // `[W] ↗ message`: category letter, priority arrow, message.
                if rest.len() > 4 && rest.starts_with('[') && rest.as_bytes()[2] == b']' {
                    let msg = rest[3..].trim_start();
                    let msg = msg
                        .split_once(' ')
                        .filter(|(arrow, _)| !arrow.is_ascii())
                        .map_or(msg, |(_, m)| m);
                    self.credo = Some((crate::sink::truncate_chars(msg, 300).to_string(), l.no));
                    return true;
                }
                return false;
            }
            _ => {}
        }
        if first.is_ascii_digit()
            && t.ends_with(')')
            && let Some(c) = EXUNIT.captures(t)
        {
            self.finish_exunit(sink);
            self.exunit = Some(ExUnitBlock {
                test: c[1].to_string(),
                loc: None,
                frame: None,
                msg: None,
                in_stack: false,
                seq: l.no,
                budget: BLOCK_BUDGET,
            });
            return true;
        }
        if l.last == b'*' && t.ends_with("*failed*") {
            let name = t.trim_end_matches("*failed*").trim_end_matches('.').trim();
            // Verbose EUnit prints `gset: basic_props_test`; the function is `gset:basic_props_test/0`,
            // as its stack and rebar3's failure list name it.
            let word = |w: &str| {
                !w.is_empty() && w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            };
            let test = match name.split_once(": ") {
                Some((m, f)) if word(m) && word(f) && f.ends_with("_test") => format!("{m}:{f}/0"),
                _ => crate::sink::truncate_chars(name, 200).to_string(),
            };
            self.eunit = Some(EunitBlock {
                test,
                seq: l.no,
                budget: 40,
            });
            return true;
        }
        if first.is_ascii_lowercase()
            && t.ends_with(char::is_numeric)
            && crate::has(&FAILED_ON_LINE, t)
            && let Some(c) = CT_FAILED.captures(t)
        {
            let dir = self.ct_dir.as_deref().unwrap_or("test");
            let path = format!("{dir}/{}.erl", &c[1]);
            let test = format!("{}:{}", &c[1], &c[2]);
            let before = sink.len();
            sink.emit(
                l.no,
                Finding::new(
                    &path,
                    super::num(&c[3]).unwrap_or(0),
                    BugType::Logic,
                    "test case failed",
                )
                .test(Some(&test))
                .conf(0.5)
                .tool("common_test"),
            );
            self.ct_reason = (sink.len() > before).then_some(before);
            return true;
        }
        if first == b'%'
            && t.starts_with("%%% ")
            && t.ends_with(": FAILED")
            && let Some((suite, case)) = t[4..]
                .trim_end_matches(": FAILED")
                .split_once(" ==> ")
                .filter(|(s, _)| s.ends_with("_SUITE"))
        {
            self.ct_readable = Some((suite.to_string(), case.to_string(), l.no, 12));
            return true;
        }
        if let Some((suite, case, seq, budget)) = &mut self.ct_readable {
            *budget = budget.saturating_sub(1);
            if let Some(n) = t.strip_prefix("line: ").and_then(super::num) {
                let path = format!("{}/{suite}.erl", self.ct_dir.as_deref().unwrap_or("test"));
                let test = format!("{suite}:{case}");
                sink.emit(
                    *seq,
                    Finding::new(&path, n, BugType::Logic, "test case failed")
                        .test(Some(&test))
                        .conf(0.5)
                        .tool("common_test"),
                );
                self.ct_readable = None;
                return true;
            }
            if *budget == 0 {
                self.ct_readable = None;
            }
        }
        if !l.colon_digit {
            return false;
        }
        // erlc, old Elixir warnings and Credo's flycheck format all start `path.ext:N`: one
        // look at the extension before the first `:` spares the regexes on other lines.
        let head = t.split(':').next().unwrap_or("");
        if !matches!(
            super::ext(head),
            "ex" | "exs" | "eex" | "heex" | "erl" | "hrl" | "escript" | "xrl" | "yrl"
        ) {
            return false;
        }
        if let Some(c) = OLD_WARNING.captures(t) {
            // Elixir < 1.10: `lib/x.ex:5: warning: msg`, fatal only under --warnings-as-errors.
            if self.warnings.len() < MAX_PENDING {
                let path = self.place(&c[1]);
                let line = super::num(&c[2]).unwrap_or(0);
                let msg = crate::sink::truncate_chars(&c[3], 300).to_string();
                self.warnings.push((path, line, None, msg, l.no));
            }
            return true;
        }
        if let Some(c) = ERLC.captures(t) {
            let msg = &c[4];
            let path = &c[1];
            let line = super::num(&c[2]).unwrap_or(0);
            let col = c.get(3).and_then(|m| super::num(m.as_str()));
            let warning = msg.starts_with("Warning:") || msg.starts_with("warning:");
            let ty = if self.werror {
                BugType::Linting
            } else if warning {
                return true;
            } else {
                erlc_type(msg)
            };
            // A bare name under `make[N]: Entering directory` is rebased by the sink, which
            // follows make's directories for every tool.
            sink.emit(
                l.no,
                Finding::new(path, line, ty, msg)
                    .col(col)
                    .conf(0.95)
                    .tool("erlc"),
            );
            return true;
        }
        if first == b'[' {
            // Credo's oneline format: `[W] ↗ lib/x.ex:12:5 message`.
            if let Some(c) = CREDO_ONELINE.captures(t) {
                let line = super::num(&c[2]).unwrap_or(0);
                let col = c.get(3).and_then(|m| super::num(m.as_str()));
                let (msg, rule) = credo_rule(&c[4]);
                sink.emit(
                    l.no,
                    Finding::new(&c[1], line, BugType::Linting, msg)
                        .col(col)
                        .conf(0.9)
                        .tool("credo")
                        .rule(rule),
                );
                return true;
            }
        }
        if let Some(c) = CREDO_FLYCHECK.captures(t) {
            let line = super::num(&c[2]).unwrap_or(0);
            let col = c.get(3).and_then(|m| super::num(m.as_str()));
            sink.emit(
                l.no,
                Finding::new(&c[1], line, BugType::Linting, &c[5])
                    .col(col)
                    .conf(0.9)
                    .tool("credo"),
            );
            return true;
        }
        false
    }

    fn make_dir(&mut self, t: &str) {
        let Some((_, rest)) = t.split_once("]: ") else {
            return;
        };
        // erlc's `warnings being treated as errors` ends with the directory it was said in.
        if rest.starts_with("Leaving directory ") {
            self.werror = false;
        }
    }

    /// `** (Kind) …`: a compile error with its location, or a runtime error whose frames follow.
    fn raise(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        if let Some(c) = RAISE.captures(t) {
            let kind = &c[1];
            if !matches!(
                kind,
                "CompileError"
                    | "SyntaxError"
                    | "TokenMissingError"
                    | "MismatchedDelimiterError"
                    | "Kernel.TypespecError"
            ) {
                return false;
            }
            let path = self.place(&c[2]);
            let line = super::num(&c[3]).unwrap_or(0);
            let col = c.get(4).and_then(|m| super::num(m.as_str()));
            let msg = if c[5].is_empty() { kind } else { &c[5] };
            sink.emit(
                seq,
                Finding::new(&path, line, elixir_type(kind, msg), msg)
                    .col(col)
                    .conf(0.95)
                    .tool("elixir"),
            );
            return true;
        }
        if let Some(c) = RAISE_BARE.captures(t) {
            let kind = &c[1];
            // `** (Mix) …` and compile summaries carry no location of their own.
            if kind == "Mix" || kind == "CompileError" || kind == "EXIT" {
                return true;
            }
            let msg = format!("({kind}) {}", &c[2]);
            self.runtime = Some(RuntimeBlock {
                msg: crate::sink::truncate_chars(&msg, 400).to_string(),
                seq,
                budget: 30,
            });
            return true;
        }
        false
    }

    /// Frames under an uncaught exception: the first one in the repository is the location.
    fn runtime_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(b) = &mut self.runtime else {
            return false;
        };
        b.budget = b.budget.saturating_sub(1);
        match FRAME.captures(t) {
            Some(c) if b.budget > 0 => {
                // Only scripts (`mix run check.exs`) or the file being compiled: a `lib/…`
                // frame of a Mix task may be a dependency's, printed without its app name.
                let compiling = self.compiling.as_deref() == Some(&c[2]);
                if c.get(1).is_none() && (super::ext(&c[2]) == "exs" || compiling) {
                    let ty = if compiling {
                        BugType::TypeError
                    } else {
                        BugType::Logic
                    };
                    let path = place(self.prefix.as_deref(), &c[2]);
                    let (msg, seq) = (b.msg.clone(), b.seq);
                    if sink.emit(
                        seq,
                        Finding::new(&path, super::num(&c[3]).unwrap_or(0), ty, &msg)
                            .conf(0.85)
                            .tool("elixir"),
                    ) {
                        self.runtime = None;
                    }
                }
                true
            }
            // The call that raised, printed before the frames: `Exredis.Api.__using__([])`.
            None if b.budget > 0
                && t.ends_with(')')
                && t.starts_with(|ch: char| ch.is_ascii_uppercase() || ch == ':') =>
            {
                true
            }
            _ => {
                self.runtime = None;
                false
            }
        }
    }

    fn exunit_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        let Some(b) = &mut self.exunit else {
            return false;
        };
        b.budget = b.budget.saturating_sub(1);
        let ends = b.budget == 0
            || (l.indent() == 0 && !t.is_empty())
            || (l.first.is_ascii_digit() && EXUNIT.is_match(t));
        if ends {
            self.finish_exunit(sink);
            return false;
        }
        if t.is_empty() {
            return true;
        }
        if b.loc.is_none()
            && let Some((p, n)) = t.rsplit_once(':')
            && let (true, Some(n)) = (ext_ok(p) && !p.contains(' '), super::num(n))
        {
            b.loc = Some((p.to_string(), n));
            return true;
        }
        if t == "stacktrace:" {
            b.in_stack = true;
            return true;
        }
        if b.in_stack {
            if b.frame.is_none()
                && let Some(c) = FRAME.captures(t)
            {
                // Test helpers and support modules are where the test was, not why.
                let helper = c[2].contains("support/") || c[2].contains("helper");
                if c.get(1).is_none() && ext_ok(&c[2]) && !c[2].starts_with('/') && !helper {
                    b.frame = Some((c[2].to_string(), super::num(&c[3]).unwrap_or(0)));
                }
            }
        } else if b.msg.is_none() {
            b.msg = Some(crate::sink::truncate_chars(t, 400).to_string());
        }
        true
    }

    fn finish_exunit(&mut self, sink: &mut Sink) {
        let Some(b) = self.exunit.take() else {
            return;
        };
        let Some((path, line)) = b.frame.or(b.loc) else {
            return;
        };
        let path = self.place(&path);
        let msg = b.msg.as_deref().unwrap_or("test failed");
        sink.emit(
            b.seq,
            Finding::new(&path, line, BugType::Logic, msg)
                .test(Some(&b.test))
                .conf(0.9)
                .tool("exunit"),
        );
    }

    fn eunit_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(b) = &mut self.eunit else {
            return false;
        };
        b.budget = b.budget.saturating_sub(1);
        // The failure's report ends at its output, a blank line, the run's `=====` summary or
        // rebar3's `===>` lines (whose crash terms name rebar3's own files).
        if b.budget == 0
            || t.is_empty()
            || t.starts_with("output:<<")
            || t.starts_with("===")
            || t.ends_with("*failed*")
        {
            self.eunit = None;
            return false;
        }
        let hit = EUNIT_POS
            .captures_iter(t)
            .chain(FILE_TERM.captures_iter(t))
            .find(|c| c[1].contains('/'))
            .map(|c| (c[1].to_string(), super::num(&c[2]).unwrap_or(0)));
        if let Some((path, line)) = hit {
            let (test, seq) = (b.test.clone(), b.seq);
            if sink.emit(
                seq,
                Finding::new(&path, line, BugType::Logic, t)
                    .test(Some(&test))
                    .conf(0.85)
                    .tool("eunit"),
            ) {
                self.eunit = None;
            }
        }
        true
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.finish_exunit(sink);
        *self = Beam::default();
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn exunit_failure_in_elixir_makefile_layout() {
        // elixir-lang/elixir Travis job 570287145 (colour stripped).
        let log = "==> ex_unit (ex_unit)\n\n  1) test assert received when different message (ExUnit.AssertionsTest)\n     test/ex_unit/assertions_test.exs:396\n     ** (MatchError) no match of right hand side value: {:hello, [{:message, :not_expected, :at_all}]}\n     code: [{:message, :not_expected, :at_all}] = error.mailbox\n     stacktrace:\n       test/ex_unit/assertions_test.exs:408: (test)\n\nFinished in 5.9 seconds\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "lib/ex_unit/test/ex_unit/assertions_test.exs"
        );
        assert_eq!(r[0].line_number, 408);
        assert_eq!(r[0].error_type, BugType::Logic);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("test assert received when different message (ExUnit.AssertionsTest)")
        );
    }

    #[test]
    fn exunit_without_repo_frame_uses_test_line() {
        // phoenixframework/phoenix Travis job 566184515: only dependency frames.
        let log = "  1) test adapters starts on configured port and serves requests and stops for dev (Phoenix.Integration.EndpointTest)\n     test/phoenix/integration/endpoint_test.exs:153\n     ** (ExUnit.TimeoutError) test timed out after 60000ms. You can change the timeout:\n     stacktrace:\n       (inets) httpc.erl:1016: :httpc.handle_answer/3\n\n17 doctests, 655 tests, 1 failure, 3 excluded\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "test/phoenix/integration/endpoint_test.exs");
        assert_eq!(r[0].line_number, 153);
    }

    #[test]
    fn compile_errors_and_runtime_frames() {
        // elixir-lang/elixir Travis job 572202401; h4cc/awesome-elixir Travis job 504854205.
        let log = "** (CompileError) (for doctest at) lib/list.ex:102: undefined function i/1\n    (elixir 1.10.0-dev) src/elixir_locals.erl:108: :elixir_locals.\"-ensure_no_undefined_local/3-lc$^0/1-0-\"/2\n** (throw) \"Words not in order \\\"exos\\\" and \\\"ex_lttb\\\"\"\n    check.exs:9: Awesome.Order.check_string_list_in_order/1\n    check.exs:130: anonymous fn/2 in Awesome.test_file/1\n    (elixir) lib/enum.ex:1755: Enum.\"-reduce/3-lists^foldl/2-0-\"/3\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/list.ex", 102)
        );
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("check.exs", 9)
        );
        assert_eq!(r[1].error_type, BugType::Logic);
    }

    #[test]
    fn erlc_with_make_directory_and_werror() {
        // erlang/otp Travis job 552509993; rabbitmq/rabbitmq-server Travis job 571748388.
        let log = "make[3]: Entering directory `/home/travis/build/erlang/otp/lib/compiler/src'\ncompile: warnings being treated as errors\nbeam_ssa.erl:127: import lists:umerge/1 is unused\nmake[3]: *** [../ebin/beam_ssa.beam] Error 1\nmake[3]: Leaving directory `/home/travis/build/erlang/otp/lib/compiler/src'\nsrc/rabbit_vhost.erl:91: field description undefined in record vhost\nsrc/rebar_ct.erl:291: Warning: crypto:rand_uniform/2 is deprecated\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "lib/compiler/src/beam_ssa.erl");
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[1].file_path, "src/rabbit_vhost.erl");
        assert_eq!(r[1].error_type, BugType::TypeError);
    }

    #[test]
    fn common_test_failure() {
        // rabbitmq/rabbitmq-server Travis job 571552147; a helper module is not a suite.
        let log = "confirms_rejects_SUITE:mixed_dead_alive_queues_reject failed on line 195\nReason: expecting_nack_got_ack\nrabbit_ct_broker_helpers:rpc failed on line 1348\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "test/confirms_rejects_SUITE.erl");
        assert_eq!(r[0].line_number, 195);
        assert_eq!(r[0].message, "expecting_nack_got_ack");
        // rabbitmq/credentials-obfuscation#24 (fresh13): `ct_run` in an Erlang shell; the
        // reason is the failure's message, a later `Reason:` line belongs to no report.
        let log = "(ct@localhost)1> \n- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\ncredentials_obfuscation_SUITE:use_cookie_as_secret failed on line 123\nReason: {assertEqual,[{module,...},{...}|...]}\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 123);
        assert_eq!(r[0].message, "{assertEqual,[{module,...},{...}|...]}");
        let log = "x_SUITE:a failed on line 5\n\nReason: later\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r[0].message, "test case failed");
    }

    #[test]
    fn old_style_warnings_as_errors() {
        // elixir-lang/elixir#3237 (the PR's sample output): without, then with the flag.
        let log = "$ mix compile\nlib/foo.ex:5: warning: this clause cannot match because a previous clause at line 4 always matches\nCompiled lib/foo.ex\nGenerated foo app\n$ mix compile --warnings-as-errors\nlib/foo.ex:5: warning: this clause cannot match because a previous clause at line 4 always matches\nCompiled lib/foo.ex\nCompilation failed due to warnings while using the --warnings-as-errors option\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/foo.ex", 5)
        );
        assert_eq!(r[0].error_type, BugType::Linting);
        // elixir-lang/elixir#11648: the same flag in an umbrella, but the build passed.
        let log = "$ mix compile --warnings-as-errors\n==> common\nCompiling 1 file (.ex)\nwarning: Sim.hello/0 is undefined (module Sim is not available or is yet to be defined)\n  lib/common.ex:17: Common.hello/0\n\nGenerated common app\n==> sim\nCompiling 1 file (.ex)\nGenerated sim app\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn exception_while_compiling_a_module() {
        // inaka/ikbot#12 (Elixir 1.0): the frame in the file being compiled is the location.
        let log = "== Compilation error on file lib/ikbot/scripts/pivotal.ex ==\n** (UndefinedFunctionError) undefined function: Exredis.Api.__using__/1\n    Exredis.Api.__using__([])\n    lib/ikbot/scripts/pivotal.ex:2: (module)\n    (stdlib) erl_eval.erl:669: :erl_eval.do_apply/6\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "lib/ikbot/scripts/pivotal.ex");
        assert_eq!((r[0].line_number, r[0].error_type), (2, BugType::TypeError));
        // elixir-lang/elixir#9933: an internal compiler crash names no line.
        let log = "== Compilation error in file lib/test.ex ==\n** (CompileError) lib/test.ex: internal error in beam_dead;\ncrash reason: {case_clause,{'EXIT',{undefined_label,14}}}\n\n  in function  compile:'-select_passes/2-anonymous-2-'/3 (compile.erl, line 585)\n  in call from elixir_erl_compiler:compile/4 (src/elixir_erl_compiler.erl, line 52)\n    (stdlib) lists.erl:1338: :lists.foreach/2\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn cth_readable_and_eunit() {
        // ferd/cth_readable#5: rebar3's Common Test output.
        let log = "%%% topic_SUITE ==> creation: FAILED\n%%% topic_SUITE ==> \nFailure/Error: ?assert(filelib : is_dir ( TopicPartitionDir ))\n  expected: true\n       got: false\n      line: 27\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("test/topic_SUITE.erl", 27)
        );
        assert_eq!(r[0].test_name.as_deref(), Some("topic_SUITE:creation"));
        // erlang/rebar3#328: the frame is in the project's own application under its
        // `_build/test/lib/ghash/` (the checkout is `ghash/`); the crash term rebar3 prints after
        // the run names rebar3's own sources, not the project's.
        let log = "===> Files to compile first: []\ngset: basic_props_test...*failed*\nin function code:load/1\n  called as load(\"../test/\")\nin call from gset:basic_props_test/0 (/Users/evan/scrc/ghash/_build/test/lib/ghash/src/gset.erl, line 186)\nin call from gset:basic_props_test/0\n**error:undef\n\n\n=======================================================\n  Failed: 1.  Skipped: 0.  Passed: 1.\n===> Uncaught error in rebar_core. Run with DEBUG=1 to see stacktrace\n===> Uncaught error: {'EXIT',\n                                {{badmatch,\n                                     {error,{rebar_prv_eunit,unknown_error}}},\n                                 [{rebar_prv_eunit,do,1,\n                                      [{file,\"src/rebar_prv_eunit.erl\"},\n                                       {line,47}]},\n                                  {rebar_core,do,2,\n                                      [{file,\"src/rebar_core.erl\"},\n                                       {line,122}]},\n                                  {rebar3,main,1,\n                                      [{file,\"src/rebar3.erl\"},{line,46}]},\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/gset.erl", 186)
        );
        assert_eq!(r[0].test_name.as_deref(), Some("gset:basic_props_test/0"));
        // A dependency's copy under `_build/` is not the project's.
        let log = log.replace("_build/test/lib/ghash/", "_build/test/lib/edown/");
        assert!(parse_str(&log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn elixir_115_diagnostics() {
        // The Mix and OTP guide of elixir-lang/elixir (supervisor-and-application.md): a warning
        // in the boxed format of Elixir >= 1.15, not fatal.
        let log = "Compiling 1 file (.ex)\n    warning: function start/2 required by behaviour Application is not implemented (in module KV)\n    │\n  1 │ defmodule KV do\n    │ ~~~~~~~~~~~~~~~\n    │\n    └─ lib/kv.ex:1: KV (module)\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // The same with --warnings-as-errors' failure line after it is a LINTING report.
        let log = format!(
            "{log}Compilation failed due to warnings while using the --warnings-as-errors option\n"
        );
        let r = parse_str(&log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/kv.ex", 1)
        );
        assert_eq!(r[0].error_type, BugType::Linting);
    }

    #[test]
    fn doctest_failure() {
        // The Mix and OTP guide of elixir-lang/elixir (docs-tests-and-with.md).
        let log = "  1) doctest KV.Command.parse/1 (1) (KV.CommandTest)\n     test/kv/command_test.exs:3\n     Doctest failed\n     doctest:\n       iex> KV.Command.parse(\"CREATE shopping\\r\\n\")\n       {:ok, {:create, \"shopping\"}}\n     code: KV.Command.parse \"CREATE shopping\\r\\n\" === {:ok, {:create, \"shopping\"}}\n     left:  :not_implemented\n     right: {:ok, {:create, \"shopping\"}}\n     stacktrace:\n       lib/kv/command.ex:7: KV.Command (module)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/kv/command.ex", 7)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("doctest KV.Command.parse/1 (1) (KV.CommandTest)")
        );
        // The getting-started guide: iex's errors name no file.
        let log = "** (CompileError) iex:1: undefined variable \"unknown\"\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn credo() {
        // rrrene/credo's guides (basic_usage.md, suggest_command.md): output as printed.
        let log = "┃  Refactoring opportunities\n┃\n┃ [F] ↗ Avoid negated conditions in if-else blocks.\n┃       lib/foo/bar.ex:306 #(Foo.Bar.deprecated_def_explanations)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/foo/bar.ex", 306)
        );
        assert_eq!(r[0].error_type, BugType::Linting);
        let log = "┃\n┃ [W] ↗ There should be no calls to IO.inspect/1. [Credo.Check.Warning.IoInspect]\n┃       lib/foo/bar.ex:121:6 #(Foo.Bar.run)\n┃\n┃       |> IO.inspect(label: \"Arguments given\")\n┃          ^^^^^^^^^^\n┃\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].line_number, r[0].column), (121, Some(6)));
        assert_eq!(r[0].rule.as_deref(), Some("Credo.Check.Warning.IoInspect"));
        assert_eq!(r[0].message, "There should be no calls to IO.inspect/1.");
    }

    #[test]
    fn warnings_only_count_when_fatal() {
        // h4cc/awesome-elixir Travis job 504854205: a dependency's warning, then the script's.
        let log = "Compiling 25 files (.ex)\r\n\x1b[33mwarning: \x1b[0mimplementation not provided for predefined defp hard_line_breaks/2\r\n  lib/earmark/inline.ex:248\r\n\r\nGenerated earmark app\r\n==> awesome_elixir\r\nGenerated awesome_elixir app\r\n\x1b[33mwarning: \x1b[0mvariable \"t\" is unused\r\n  check.exs:55\r\n\r\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }
}
