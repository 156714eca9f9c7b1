//! Formatter checks that fail a step: `cargo fmt --check` / `rustfmt --check` diffs, `ruff format
//! --check`, black `--check`, prettier `--check`, `gofmt -l` / `goimports -l` listings (and the
//! gometalinter / golangci-lint `gofmt` findings), `clang-format --dry-run -Werror`, and `isort
//! --check-only`. Each becomes a `LINTING` report with `tool` set to the formatter and `rule`
//! `format`, so the fix agent knows which formatter to run on which file.
//!
//! The line is the one the tool names (rustfmt's hunk: its first changed line, not the first
//! context line; clang-format's diagnostic). Tools that name only a file are reported at line 1
//! with a lower confidence.
//!
//! Unified diffs a check prints when it fails (`git diff --exit-code` in a step that runs it,
//! pre-commit's `All changes made by hooks:` under `--show-diff-on-failure`, a nix formatter
//! check's build log behind `> `) give one report per hunk, at its first changed line of the
//! committed (`a/`) file; black's `reformatted x` lines of a step that failed give line 1 of
//! each file no such diff shows.
//!
//! It must never report a file from a summary line (`2 files would be reformatted`, `[warn] Code
//! style issues found…`), a prettier `[warn]` line that no prettier summary confirms (sbt and
//! others print `[warn]` too), a bare `.go` line outside a `gofmt -l`/`goimports -l` step that
//! failed, or a clang-format `warning:` (no `-Werror`: the step did not fail on it).

use crate::sink::{Finding, Sink};
use crate::{BugType, Ctx, Line, Marker};

/// Confidence of a formatter report that names only a file (reported at line 1).
const FILE_ONLY: f64 = 0.5;
/// Most buffered file names kept while waiting for a summary or an exit code.
const MAX_PENDING: usize = 200;
/// Context lines a rustfmt hunk may show before its first change.
const MAX_CONTEXT: u64 = 20;
/// Lines without a path after which a `Checking formatting...` block is considered over.
const MAX_PRETTIER_GAP: u32 = 200;

#[derive(Debug, Default)]
pub(crate) struct Format {
    /// rustfmt `Diff in path:N:` seen; counting context lines until the first change.
    hunk: Option<Hunk>,
    /// prettier: inside a `Checking formatting...` block (bare paths count, prettier 1.x).
    prettier_block: bool,
    prettier_gap: u32,
    /// prettier file names waiting for the `Code style issues found` summary: (log line, path,
    /// printed with `[warn] `).
    prettier: Vec<(u64, String, bool)>,
    /// The current step runs `gofmt -l` / `goimports -l`; its `.go` lines wait for the exit code.
    gofmt_step: Option<&'static str>,
    gofmt: Vec<(u64, String)>,
    /// ruff's full format: `unformatted: File would be reformatted` waits for its ` --> path`.
    ruff_header: u8,
    /// ruff's grouped format: the `path.py:` line its indented `L:C code: msg` lines follow.
    grouped_file: Option<String>,
    diff: GitDiff,
}

/// Most hunks and `reformatted` files kept per step while waiting for the step to fail.
const MAX_DIFF_PENDING: usize = 200;

/// Unified diffs of a failed check (see the module docs), and black's `reformatted` lines.
#[derive(Debug, Default)]
struct GitDiff {
    /// Where a diff is a check's verdict in this step: which tool printed it.
    armed: Option<&'static str>,
    /// The step failed (its `##[error]`, or a header that is printed only on failure).
    confirmed: bool,
    /// Lines carry nix's build-log prefix (`       > `).
    nix: bool,
    /// The indentation of the `diff --git` line: output re-indented as a whole (a harness, a
    /// snapshot) keeps the diff's shape under it.
    base: usize,
    /// The `a/` file of the current `diff --git`.
    file: Option<String>,
    /// Inside a hunk: the committed file's line the next line is at, and whether the hunk's
    /// first change was seen.
    hunk: Option<(u64, bool)>,
    /// Hunks waiting for the step to fail: (log line, path, line, tool).
    pending: Vec<(u64, String, u64, &'static str)>,
    /// Files a diff of this step showed.
    shown: Vec<String>,
    /// black's `reformatted x` (log line, path), reported at the step's end when it failed and
    /// no diff showed the file.
    reformatted: Vec<(u64, String)>,
    /// Armed by Travis' command echo (`$ cmd`): only Travis' own verdict on that command
    /// (`The command "cmd" exited with 1.`) confirms its diff.
    travis: bool,
}

impl GitDiff {
    fn active(&self) -> bool {
        self.armed.is_some() || !self.reformatted.is_empty()
    }

    /// The diff line of `l` (nix's `> ` prefix taken off), `None` when `l` cannot be one.
    fn body<'a>(&self, l: &Line<'a>) -> Option<&'a str> {
        if self.nix {
            let t = l.text.trim_start();
            if t == ">" {
                return Some("");
            }
            return t.strip_prefix("> ");
        }
        Some(l.text.get(self.base..).unwrap_or(""))
    }

    fn confirm(&mut self, sink: &mut Sink) {
        self.confirmed = true;
        for (seq, path, line, tool) in self.pending.drain(..) {
            emit_diff(seq, &path, line, tool, sink);
        }
    }

    /// Returns true when the line was part of a diff.
    fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if l.marker == Marker::Error && !self.travis {
            self.confirm(sink);
            return false;
        }
        // Travis runs each command of a job's script in turn and says how each ended: a
        // `diff --git` a command printed is its check's verdict when the command then failed
        // (spacemacs' documentation formatter: `PLEASE APPLY CHANGES BELOW:` and the diff).
        if l.first == b'$' && t.starts_with("$ ") && (self.armed.is_none() || self.travis) {
            self.pending.clear();
            self.confirmed = false;
            self.end_diff();
            self.armed = Some("git diff");
            self.travis = true;
            return false;
        }
        if self.travis
            && l.last == b'.'
            && let Some(failed) = super::travis_command_failed(t)
        {
            if failed {
                self.confirm(sink);
            }
            self.pending.clear();
            self.armed = None;
            self.travis = false;
            self.confirmed = false;
            self.end_diff();
            return false;
        }
        if t == "All changes made by hooks:" {
            self.armed = Some("pre-commit");
            self.travis = false;
            self.nix = false;
            self.confirm(sink);
            return true;
        }
        if let Some(rest) = t.strip_prefix("error: builder for '")
            && let Some((drv, _)) = rest.split_once('\'')
            && let Some(name) = drv.rsplit('/').next()
            && (name.contains("fmt") || name.contains("format"))
        {
            self.armed = Some("treefmt");
            self.travis = false;
            self.nix = true;
            self.confirm(sink);
            return true;
        }
        if let Some(path) = t.strip_prefix("reformatted ")
            && is_path(path)
            && self.reformatted.len() < MAX_DIFF_PENDING
        {
            self.reformatted.push((l.no, path.to_string()));
            return true;
        }
        let Some(tool) = self.armed else {
            return false;
        };
        if !self.nix && t.starts_with("diff --git a/") {
            self.base = l.indent();
        }
        let Some(b) = self.body(l) else {
            self.end_diff();
            return false;
        };
        if l.indent() < self.base && !t.is_empty() {
            self.end_diff();
            return false;
        }
        if let Some(rest) = b.strip_prefix("diff --git a/") {
            let path = rest.split(" b/").next().unwrap_or(rest);
            self.file = Some(path.to_string());
            if self.shown.len() < MAX_DIFF_PENDING {
                self.shown.push(path.to_string());
            }
            self.hunk = None;
            return true;
        }
        let Some(file) = &self.file else {
            return false;
        };
        if let Some(rest) = b.strip_prefix("@@ -") {
            let start = rest.split([',', ' ']).next().and_then(super::num);
            self.hunk = start.map(|n| (n, false));
            return true;
        }
        let Some((at, changed)) = &mut self.hunk else {
            // The header lines between `diff --git` and the first hunk.
            let header = [
                "index ",
                "--- ",
                "+++ ",
                "new file",
                "deleted file",
                "old mode",
            ]
            .iter()
            .any(|p| b.starts_with(p))
                || b.starts_with("new mode")
                || b.starts_with("similarity")
                || b.starts_with("rename ");
            if !header {
                self.end_diff();
            }
            return header;
        };
        match b.as_bytes().first() {
            None | Some(b' ') => {
                if !*changed {
                    *at += 1;
                }
            }
            Some(b'-' | b'+') => {
                if !*changed {
                    *changed = true;
                    let (seq, path, line) = (l.no, file.clone(), (*at).max(1));
                    if self.confirmed {
                        emit_diff(seq, &path, line, tool, sink);
                    } else if self.pending.len() < MAX_DIFF_PENDING {
                        self.pending.push((seq, path, line, tool));
                    }
                }
            }
            Some(b'\\') => {}
            _ => {
                self.end_diff();
                return false;
            }
        }
        true
    }

    fn end_diff(&mut self) {
        self.file = None;
        self.hunk = None;
    }

    /// The step ends: what it confirmed is reported, the rest forgotten.
    fn end_step(&mut self, sink: &mut Sink) {
        if self.confirmed {
            for (seq, path) in std::mem::take(&mut self.reformatted) {
                if !self.shown.contains(&path) {
                    file_only(seq, &path, "black", "reformatted", sink);
                }
            }
        }
        *self = GitDiff::default();
    }

    /// A new step that runs `git diff` itself: its diff is the check.
    fn start_step(&mut self, cmd: &str) {
        if crate::contains(cmd, "git diff") {
            self.armed = Some("git diff");
        }
    }
}

fn emit_diff(seq: u64, path: &str, line: u64, tool: &'static str, sink: &mut Sink) {
    sink.emit(
        seq,
        Finding::new(
            path,
            line,
            BugType::Linting,
            "the check's diff changes this line",
        )
        .conf(0.8)
        .tool(tool)
        .rule(Some("format")),
    );
}

#[derive(Debug)]
struct Hunk {
    seq: u64,
    path: String,
    line: u64,
    context: u64,
}

impl Format {
    /// True when `line` cannot change this matcher's state or be claimed by it.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.hunk.is_none()
            && !self.diff.active()
            && (l.marker != Marker::Error || self.diff.pending.is_empty())
            && !(l.first == b'r' && l.trimmed().starts_with("reformatted "))
            && !self.prettier_block
            && self.gofmt_step.is_none()
            && self.ruff_header == 0
            && l.marker != Marker::Group
            && !matches!(
                l.first,
                b'D' | b'W' | b'u' | b'w' | b'e' | b'[' | b'A' | b'E' | b'$' | b'>' | b'R'
            )
            // Of the `C` lines (cargo's `Compiling …` are many) only prettier's are read.
            && !(l.first == b'C'
                && (l.trimmed().starts_with("Code style issues found")
                    || l.trimmed() == "Checking formatting..."))
            && !(l.colon_digit && matches!(l.last, b']' | b')'))
            && !(l.colon_digit && l.last.is_ascii_digit() && ends_with_exit_status(l.trimmed()))
            && !(l.last == b':' && l.indent() == 0)
            && !(l.last == b'd' && l.colon_digit)
    }

    /// A new step: buffered candidates of the previous one were never confirmed.
    fn reset(&mut self, ctx: &Ctx) {
        self.prettier.clear();
        self.prettier_block = false;
        self.gofmt.clear();
        self.gofmt_step = gofmt_command(&ctx.step);
        self.ruff_header = 0;
        self.diff.start_step(&ctx.step);
    }

    /// Returns true when the line was claimed.
    pub fn line(&mut self, l: &Line<'_>, ctx: &Ctx, sink: &mut Sink) -> bool {
        if l.marker == Marker::Group {
            self.flush(sink);
            self.reset(ctx);
            return false;
        }
        if self.diff.line(l, sink) {
            return true;
        }
        if let Some(h) = &mut self.hunk {
            let b = l.text.as_bytes();
            match b.first() {
                // Blank context lines often lose their single space in captured logs.
                None | Some(b' ') if h.context < MAX_CONTEXT => {
                    h.context += 1;
                    return true;
                }
                Some(b'-' | b'+') => {
                    let at = h.line + h.context;
                    emit_hunk(self.hunk.take(), at, sink);
                    return true;
                }
                _ => self.close_hunk(sink),
            }
        }
        if self.ruff_header > 0 {
            self.ruff_header -= 1;
            if let Some(loc) = l.trimmed().strip_prefix("--> ") {
                self.ruff_header = 0;
                if let Some((path, line, col)) = split_location(loc) {
                    sink.emit(
                        l.no,
                        Finding::new(path, line, BugType::Linting, "File would be reformatted")
                            .col(col)
                            .conf(0.9)
                            .tool("ruff")
                            .rule(Some("format")),
                    );
                }
                return true;
            }
        }
        let t = l.trimmed();
        if l.last == b':' && l.indent() == 0 {
            self.grouped_file = t
                .strip_suffix(':')
                .filter(|p| p.ends_with(".py") || p.ends_with(".pyi") || p.ends_with(".ipynb"))
                .filter(|p| is_path(p))
                .map(str::to_string);
        }
        if l.last == b'd' && l.colon_digit && t.ends_with("File would be reformatted") {
            return self.ruff_unformatted(l, t, sink);
        }
        match l.first {
            b'D' => {
                if let Some(rest) = t.strip_prefix("Diff in ") {
                    return self.diff_header(l.no, rest);
                }
            }
            b'W' => {
                if let Some(path) = t.strip_prefix("Would reformat: ") {
                    file_only(l.no, path, "ruff", "Would reformat", sink);
                    return true;
                }
            }
            b'u' if t == "unformatted: File would be reformatted" => {
                self.ruff_header = 2;
                return true;
            }
            b'w' => {
                if let Some(path) = t.strip_prefix("would reformat ")
                    && is_path(path)
                {
                    file_only(l.no, path, "black", "would reformat", sink);
                    return true;
                }
            }
            b'e' => {
                if let Some(rest) = t.strip_prefix("error: cannot format ") {
                    return black_cannot_parse(l.no, rest, sink);
                }
            }
            b'E' => {
                if let Some(rest) = t.strip_prefix("ERROR: ") {
                    // isort 5 adds "and/or formatted"; isort 4 did not.
                    let path = rest
                        .strip_suffix(" Imports are incorrectly sorted and/or formatted.")
                        .or_else(|| rest.strip_suffix(" Imports are incorrectly sorted."));
                    if let Some(path) = path {
                        file_only(
                            l.no,
                            path,
                            "isort",
                            "Imports are incorrectly sorted and/or formatted",
                            sink,
                        );
                        return true;
                    }
                }
            }
            b'$' | b'>' | b'R' => {
                // Travis, yarn (`$ cmd`), npm (`> cmd`) and Actions logs copied from the web page
                // (`Run cmd`) echo the command: a new command, a new listing.
                if let Some(cmd) = t
                    .strip_prefix("$ ")
                    .or_else(|| t.strip_prefix("> "))
                    .or_else(|| t.strip_prefix("Run "))
                {
                    self.gofmt.clear();
                    self.gofmt_step = gofmt_command(cmd);
                }
            }
            _ => {}
        }
        if (self.prettier_block || matches!(l.first, b'[' | b'C' | b'A'))
            && self.prettier_line(l, t, sink)
        {
            return true;
        }
        if l.colon_digit && l.last == b']' && crate::contains(t, "clang-formatted") {
            return clang_format(l.no, t, sink);
        }
        if l.colon_digit && l.last == b')' && go_linter_format(l.no, t, sink) {
            return true;
        }
        if l.colon_digit
            && l.last.is_ascii_digit()
            && ends_with_exit_status(t)
            && is_go_exit_status(t)
        {
            return true;
        }
        if self.gofmt_step.is_some() {
            return self.gofmt_line(l.no, t, sink);
        }
        false
    }

    /// ruff `format --check` in its other output formats: concise `x.py:1:1: unformatted: File
    /// would be reformatted`, pylint `x.py:1: [unformatted] File would be reformatted`, grouped
    /// `  1:1 unformatted: File would be reformatted` under `x.py:`.
    fn ruff_unformatted(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        let loc = t
            .strip_suffix(": unformatted: File would be reformatted")
            .or_else(|| t.strip_suffix(": [unformatted] File would be reformatted"))
            .or_else(|| t.strip_suffix(" unformatted: File would be reformatted"));
        let Some(loc) = loc else {
            return false;
        };
        let (path, line, col) = match (l.indent() > 0, &self.grouped_file) {
            (true, Some(file)) => {
                let (n, c) = loc.split_once(':').unwrap_or((loc, ""));
                match super::num(n) {
                    Some(n) => (file.clone(), n, super::num(c)),
                    None => return false,
                }
            }
            _ => match split_location(loc) {
                Some((p, n, c)) => (p.to_string(), n, c),
                None => return false,
            },
        };
        sink.emit(
            l.no,
            Finding::new(&path, line, BugType::Linting, "File would be reformatted")
                .col(col)
                .conf(0.9)
                .tool("ruff")
                .rule(Some("format")),
        );
        true
    }

    /// `Diff in path:N:` (rustfmt ≥ 1.4.x) or `Diff in path at line N:` (older).
    fn diff_header(&mut self, seq: u64, rest: &str) -> bool {
        let Some(rest) = rest.strip_suffix(':') else {
            return false;
        };
        let (path, n) = match rest.rsplit_once(" at line ") {
            Some(pair) => pair,
            None => match rest.rsplit_once(':') {
                Some(pair) => pair,
                None => return false,
            },
        };
        let (Some(line), true) = (super::num(n), is_rust(path)) else {
            return false;
        };
        // `\\?\D:\a\R\R\src\x.rs`: Windows verbatim paths as rustfmt prints them.
        let path = path.strip_prefix(r"\\?\").unwrap_or(path);
        self.hunk = Some(Hunk {
            seq,
            path: path.to_string(),
            line,
            context: 0,
        });
        true
    }

    /// prettier `--check`: `[warn] path` lines (prettier ≥ 2), or bare paths inside a
    /// `Checking formatting...` block (prettier 1.x), confirmed by the summary.
    fn prettier_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        let body = t.strip_prefix("[warn] ");
        let text = body.unwrap_or(t);
        if text.starts_with("Code style issues found") {
            // prettier ≥ 2 prefixes every file with `[warn] `; a bare name beside them is a
            // progress line a terminal would have erased (prettier/prettier#16146).
            let warned = self.prettier.iter().any(|c| c.2);
            for (seq, path, warn) in self.prettier.drain(..) {
                if warn || !warned {
                    file_only(seq, &path, "prettier", "Code style issues found", sink);
                }
            }
            self.prettier_block = false;
            return true;
        }
        if t == "Checking formatting..." {
            self.prettier_block = true;
            self.prettier_gap = 0;
            self.prettier.clear();
            return true;
        }
        if t.starts_with("All matched files use Prettier") {
            self.prettier_block = false;
            self.prettier.clear();
            return true;
        }
        if let Some(rest) = t.strip_prefix("[error] ") {
            return prettier_error(l.no, rest, sink);
        }
        let candidate = match body {
            Some(p) => Some(p),
            None if self.prettier_block && l.indent() == 0 => Some(t),
            None => None,
        };
        if let Some(p) = candidate.filter(|p| is_path(p)) {
            if self.prettier.len() < MAX_PENDING {
                self.prettier.push((l.no, p.to_string(), body.is_some()));
            }
            self.prettier_gap = 0;
            return true;
        }
        if self.prettier_block {
            self.prettier_gap += 1;
            if self.prettier_gap > MAX_PRETTIER_GAP {
                self.prettier_block = false;
                self.prettier.clear();
            }
        }
        false
    }

    /// A `.go` file listed by `gofmt -l`, kept until the step's exit code says it failed.
    fn gofmt_line(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        if let Some(code) = exit_code(t) {
            let tool = self.gofmt_step.unwrap_or("gofmt");
            if code != 0 {
                for (seq, path) in self.gofmt.drain(..) {
                    file_only(seq, &path, tool, "file is not formatted", sink);
                }
            }
            self.gofmt.clear();
            self.gofmt_step = None;
            return false;
        }
        let wanted = match self.gofmt_step {
            Some("prettier") => !t.starts_with('[') && !t.starts_with("npm "),
            Some("terraform") => matches!(super::ext(t), "tf" | "tfvars" | "hcl"),
            _ => t.ends_with(".go"),
        };
        if wanted && is_path(t) && !t.contains(':') {
            if self.gofmt.len() < MAX_PENDING {
                self.gofmt.push((seq, t.to_string()));
            }
            return true;
        }
        false
    }

    /// The step (or the log) ends: an open rustfmt hunk closes, and what the step's failure
    /// confirmed of its diffs is reported.
    pub fn flush(&mut self, sink: &mut Sink) {
        self.close_hunk(sink);
        self.diff.end_step(sink);
    }

    /// Closes an open rustfmt hunk (the log moved on before any change line).
    fn close_hunk(&mut self, sink: &mut Sink) {
        if let Some(h) = self.hunk.take() {
            let at = h.line;
            emit_hunk(Some(h), at, sink);
        }
    }
}

fn emit_hunk(h: Option<Hunk>, at: u64, sink: &mut Sink) {
    if let Some(h) = h {
        sink.emit(
            h.seq,
            Finding::new(
                &h.path,
                at,
                BugType::Linting,
                "rustfmt: code is not formatted",
            )
            .conf(0.9)
            .tool("rustfmt")
            .rule(Some("format")),
        );
    }
}

fn file_only(seq: u64, path: &str, tool: &'static str, msg: &str, sink: &mut Sink) {
    sink.emit(
        seq,
        Finding::new(path.trim(), 1, BugType::Linting, msg)
            .conf(FILE_ONLY)
            .tool(tool)
            .rule(Some("format")),
    );
}

/// A single path token with a file extension (no spaces: summaries and prose are not paths).
fn is_path(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 512
        && !s.bytes().any(|b| b.is_ascii_whitespace())
        && crate::path::has_extension(s)
}

fn is_rust(path: &str) -> bool {
    path.ends_with(".rs")
}

/// `path:line[:col]` of ruff's ` --> ` locations.
fn split_location(loc: &str) -> Option<(&str, u64, Option<u64>)> {
    let (head, last) = loc.rsplit_once(':')?;
    let last = super::num(last)?;
    match head.rsplit_once(':') {
        Some((path, line)) if super::num(line).is_some() => {
            Some((path, super::num(line)?, Some(last)))
        }
        _ => Some((head, last, None)),
    }
}

/// The command of a step runs a formatter in listing mode (`gofmt -l`, `gofmt -s -l`,
/// `goimports -l`, `prettier --list-different`, `terraform fmt -check`): the tool's name, for
/// the report.
fn gofmt_command(cmd: &str) -> Option<&'static str> {
    if crate::contains(cmd, "terraform fmt") {
        // `terraform fmt -check` lists the files it would rewrite and exits 3.
        return crate::contains(cmd, "-check").then_some("terraform");
    }
    if crate::contains(cmd, "prettier") {
        let listing = cmd
            .split_ascii_whitespace()
            .any(|w| w == "--list-different" || w == "-l");
        let writes = cmd
            .split_ascii_whitespace()
            .any(|w| w == "--write" || w == "-w");
        return (listing && !writes).then_some("prettier");
    }
    let tool = if crate::contains(cmd, "goimports") {
        "goimports"
    } else if crate::contains(cmd, "gofmt") {
        "gofmt"
    } else {
        return None;
    };
    let listing = cmd
        .split_ascii_whitespace()
        .any(|w| w == "-l" || (w.starts_with('-') && !w.starts_with("--") && w.contains('l')));
    listing.then_some(tool)
}

/// The exit code of a step or command: Actions' `Process completed with exit code N.`,
/// Travis' `The command "…" exited with N.`, yarn's `error Command failed with exit code N.` and
/// npm's `npm ERR! Exit status N`.
fn exit_code(t: &str) -> Option<u64> {
    if let Some(n) = t
        .strip_prefix("error Command failed with exit code ")
        .or_else(|| t.strip_prefix("npm ERR! Exit status "))
    {
        return super::num(n.trim_end_matches('.'));
    }
    if let Some(i) = t.find("Process completed with exit code ") {
        let rest = &t[i + "Process completed with exit code ".len()..];
        return super::num(rest.trim_end_matches('.'));
    }
    if t.starts_with("The command \"") {
        let (_, n) = t.rsplit_once("\" exited with ")?;
        return super::num(n.trim_end_matches('.'));
    }
    None
}

/// black: `error: cannot format path: Cannot parse: 5:1: message`.
fn black_cannot_parse(seq: u64, rest: &str, sink: &mut Sink) -> bool {
    let Some((path, msg)) = rest.split_once(": Cannot parse") else {
        return false;
    };
    let msg = msg.trim_start_matches([':', ' ']);
    let mut parts = msg.splitn(3, ':');
    let (Some(line), col) = (
        parts.next().and_then(|n| super::num(n.trim())),
        parts.next().and_then(|n| super::num(n.trim())),
    ) else {
        return false;
    };
    let text = parts.next().map_or(msg, str::trim);
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Syntax, text)
            .col(col)
            .conf(0.9)
            .tool("black"),
    );
    true
}

/// prettier `[error] path: SyntaxError: message (L:C)`.
fn prettier_error(seq: u64, rest: &str, sink: &mut Sink) -> bool {
    let Some((path, msg)) = rest.split_once(": ") else {
        return false;
    };
    if !is_path(path) || !msg.contains("Error") {
        return false;
    }
    let Some((text, pos)) = msg
        .trim_end()
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once(" ("))
    else {
        return false;
    };
    let Some((line, col)) = pos.split_once(':') else {
        return false;
    };
    let (Some(line), col) = (super::num(line), super::num(col)) else {
        return false;
    };
    let ty = if text.starts_with("SyntaxError") {
        BugType::Syntax
    } else {
        BugType::TypeError
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, text)
            .col(col)
            .conf(0.9)
            .tool("prettier"),
    );
    true
}

/// `file:l:c: error: code should be clang-formatted [-Wclang-format-violations]`; the warning
/// form (no `-Werror`) is claimed and not reported.
fn clang_format(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let Some((loc, sev)) = [": error: ", ": warning: "]
        .iter()
        .find_map(|s| t.split_once(s).map(|(loc, _)| (loc, *s == ": error: ")))
    else {
        return false;
    };
    let mut it = loc.rsplitn(3, ':');
    let (Some(c), Some(l), Some(path)) = (it.next(), it.next(), it.next()) else {
        return false;
    };
    let (Some(line), col) = (super::num(l), super::num(c)) else {
        return false;
    };
    if sev {
        sink.emit(
            seq,
            Finding::new(
                path,
                line,
                BugType::Linting,
                "code should be clang-formatted",
            )
            .col(col)
            .conf(0.9)
            .tool("clang-format")
            .rule(Some("format")),
        );
    }
    true
}

/// The line ends with `: exit status N` (tested from the end, without a search).
fn ends_with_exit_status(t: &str) -> bool {
    t.trim_end_matches(|c: char| c.is_ascii_digit())
        .ends_with(": exit status ")
}

/// `build/ci.go`-style drivers log a failed linter run as `util.go:45: exit status 1` (Go's
/// `log.Fatal` with the caller's location): the driver's line, never the error. Claimed so the
/// `go build` matcher does not take it for a compiler error.
fn is_go_exit_status(t: &str) -> bool {
    match t.split_once(".go:") {
        Some((path, rest)) => {
            !path.contains(' ')
                && rest
                    .split_once(": exit status ")
                    .is_some_and(|(n, code)| super::num(n).is_some() && super::num(code).is_some())
        }
        None => false,
    }
}

/// gometalinter `x.go:1::warning: file is not gofmted with -s (gofmt)` and golangci-lint
/// `x.go:12: File is not `gofmt`-ed with `-s` (gofmt)`: both fail their step.
fn go_linter_format(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let tool = if t.ends_with("(gofmt)") {
        "gofmt"
    } else if t.ends_with("(goimports)") {
        "goimports"
    } else if t.ends_with("(gofumpt)") {
        "gofumpt"
    } else {
        return false;
    };
    let Some((path, rest)) = t.split_once(".go:") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(line) = super::num(&rest[..digits]) else {
        return false;
    };
    let msg = rest[digits..].trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    let msg = msg.strip_prefix("warning:").unwrap_or(msg).trim();
    let lower = msg.to_ascii_lowercase();
    if !lower.starts_with("file is not") {
        return false;
    }
    let path = format!("{path}.go");
    sink.emit(
        seq,
        Finding::new(&path, line, BugType::Linting, msg)
            .conf(0.9)
            .tool(tool)
            .rule(Some("format")),
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    fn parse(log: &str) -> Vec<(String, u32, BugType, Option<String>)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type, r.tool))
            .collect()
    }

    #[test]
    fn a_travis_command_that_failed_after_printing_a_diff() {
        // LogChunks spacemacs (Travis): the docs formatter's script prints the diff to apply.
        let diff = "$ .travisci/test.sh\n======================================================================\nPLEASE APPLY CHANGES BELOW:\n======================================================================\n\u{1b}[1mdiff --git a/layers/+lang/ruby/README.org b/layers/+lang/ruby/README.org\u{1b}[m\n\u{1b}[1mindex 18d226b..c6dbc80 100644\u{1b}[m\n\u{1b}[1m--- a/layers/+lang/ruby/README.org\u{1b}[m\n\u{1b}[1m+++ b/layers/+lang/ruby/README.org\u{1b}[m\n\u{1b}[36m@@ -106,25 +106,25 @@\u{1b}[m \u{1b}[mdirectory local variables.\u{1b}[m\n * Key bindings\u{1b}[m\n ** Ruby (enh-ruby-mode, robe, inf-ruby, ruby-tools)\u{1b}[m\n \u{1b}[m\n\u{1b}[31m-| Key binding | Description |\u{1b}[m\n\u{1b}[32m+| Key binding | Description                |\u{1b}[m\n\n";
        let failed = "\u{1b}[31;1mThe command \".travisci/test.sh\" exited with 2.\u{1b}[0m\n";
        let r = parse_str(&format!("{diff}{failed}"), &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(got, [("layers/+lang/ruby/README.org", 109)]);
        // The same output of a command that passed is information.
        let passed = "The command \".travisci/test.sh\" exited with 0.\n";
        assert_eq!(
            parse_str(&format!("{diff}{passed}"), &ParseOptions::default()),
            []
        );
        // yarn echoes its scripts as `$ cmd` in Actions steps too: there only Travis' verdict
        // confirms, never the step's `##[error]`.
        let actions = "##[group]Run yarn lint\n##[endgroup]\n";
        let error = "##[error]Process completed with exit code 1.\n";
        assert_eq!(
            parse_str(&format!("{actions}{diff}{error}"), &ParseOptions::default()),
            []
        );
    }

    #[test]
    fn a_failed_checks_diff_names_each_hunks_first_changed_line() {
        // pre-commit --show-diff-on-failure (cpython, LogSage), a nix formatter check (fabric),
        // and black's `reformatted` lines of a failed hook with and without a diff of the file.
        let log = "##[group]Run pre-commit run --all-files\nreformatted Lib/a.py\nreformatted Lib/b.py\nAll changes made by hooks:\ndiff --git a/Lib/http/server.py b/Lib/http/server.py\nindex d0a7777..28f431a 100644\n--- a/Lib/http/server.py\n+++ b/Lib/http/server.py\n@@ -1423,4 +1423,4 @@ def finish_request(self, request, client_address):\n \n \n if __name__ == '__main__':\n-    _main()\n\\ No newline at end of file\n+    _main()\ndiff --git a/Lib/a.py b/Lib/a.py\n--- a/Lib/a.py\n+++ b/Lib/a.py\n@@ -7,2 +7,3 @@\n x = 1\n+\n y = 2\n##[error]Process completed with exit code 1.\n##[group]Run nix flake check\nerror: builder for '/nix/store/vxiv73-treefmt-check.drv' failed with exit code 1;\n       last 25 log lines:\n       > diff --git a/restapi/serve.go b/restapi/serve.go\n       > --- a/restapi/serve.go\n       > +++ b/restapi/serve.go\n       > @@ -13,7 +13,7 @@ func Serve(registry *core.PluginRegistry) {\n       >     r.Use(gin.Recovery())\n       >  \n       >         if apiKey != \"\" {\n       > -         r.Use(ApiKeyMiddleware(apiKey))\n       > +           r.Use(ApiKeyMiddleware(apiKey))\n       For full logs, run:\n";
        let r = parse(log);
        let got: Vec<_> = r.iter().map(|(p, l, _, _)| (p.as_str(), *l)).collect();
        assert_eq!(
            got,
            [
                ("Lib/b.py", 1),
                ("Lib/http/server.py", 1426),
                ("Lib/a.py", 8),
                ("restapi/serve.go", 16)
            ]
        );
        // The same diff in a step that did not fail, or printed by a tool that is no check,
        // is nothing.
        let ok = "##[group]Run git diff --exit-code\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n-a\n+b\n##[group]Run echo done\ndiff --git a/y.py b/y.py\n@@ -1,1 +1,1 @@\n-a\n+b\n##[error]Process completed with exit code 1.\n";
        assert!(parse(ok).is_empty(), "{:?}", parse(ok));
    }

    #[test]
    fn rustfmt_first_changed_line() {
        // rust-lang/rustfmt#3136 (Travis) and an Actions run pasted in os-checker/os-checker#4.
        let log = "Diff in /home/runner/work/ctest/ctest/src/lib.rs at line 721:\n             should_test: false,\n             sess: &sess,\n             features: None,\n-        }\n-        .fold_crate(krate);\n+        }.fold_crate(krate);\n \nDiff in /home/runner/work/o/o/tests/a.rs:1:\n-fn main()\n-\n+fn main() {}\nDiff in /home/runner/work/o/o/src/main.rs:1:\n fn main() {\n-println!(\"Hello, world!\");\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("src/lib.rs", 724));
        assert_eq!((r[1].0.as_str(), r[1].1), ("tests/a.rs", 1));
        assert_eq!((r[2].0.as_str(), r[2].1), ("src/main.rs", 2));
        assert_eq!(r[0].3.as_deref(), Some("rustfmt"));
    }

    #[test]
    fn python_formatters() {
        // mopidy/mopidy#2201 (tox), relf/pyDOE3#6 (black), reviewdog/errorformat's isort.in.
        // isort 4 wording, from PyCQA/isort#298.
        let old = "ERROR: /home/runner/work/t/t/treeherder/webapp/api/urls.py Imports are incorrectly sorted.\n";
        assert_eq!(parse(old)[0].0, "treeherder/webapp/api/urls.py");
        let log = "ruff-format: commands[0]> ruff format --check .\nWould reformat: src/mopidy/audio/scan.py\n1 file would be reformatted, 137 files already formatted\nwould reformat /home/runner/work/pyDOE3/pyDOE3/pyDOE3/doe_gsd.py\n2 files would be reformatted, 11 files would be left unchanged.\nERROR: /home/runner/work/a/a/models/test.py Imports are incorrectly sorted and/or formatted.\nerror: cannot format src/main.py: Cannot parse: 5:1: invalid syntax\n";
        let r = parse(log);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0].0, "src/mopidy/audio/scan.py");
        assert_eq!(r[1].0, "pyDOE3/doe_gsd.py");
        assert_eq!(r[1].3.as_deref(), Some("black"));
        assert_eq!(r[2].0, "models/test.py");
        assert_eq!((r[3].1, r[3].2), (5, BugType::Syntax));
    }

    #[test]
    fn ruff_full_format() {
        // astral-sh/ruff's cli__format__output_format_{full,concise,pylint,grouped} snapshots.
        let other = "input.py:1:1: unformatted: File would be reformatted\nb.py:1: [unformatted] File would be reformatted\nc.py:\n  1:1 unformatted: File would be reformatted\n";
        let r = parse(other);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[2].0.as_str(), r[2].1), ("c.py", 1));
        let log = "unformatted: File would be reformatted\n --> bar.py:1:7\n  |\n  - bar =     \"needs formatting\"\n1 + bar = \"needs formatting\"\n  |\n\n2 files would be reformatted\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("bar.py", 1));
    }

    #[test]
    fn prettier_needs_its_summary() {
        // Seneca-CDOT/telescope#2465, and sbt's `[warn]` lines from LogChunks (twitter/finagle).
        let log = "Checking formatting...\n[warn] src/api/status/src/server.js\n[warn] Code style issues found in the above file(s). Forgot to run Prettier?\n[warn] Choosing local for com.twitter#scrooge-sbt-plugin;19.8.0-SNAPSHOT\n[warn] build.sbt\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].0, "src/api/status/src/server.js");
        let old = "Checking formatting...\n[18:30:37] Using gulpfile ~/build/f/f/curriculum/gulpfile.js\nclient/src/components/layouts/prism-night.css\nCode style issues found in the above file(s). Forgot to run Prettier?\n";
        assert_eq!(
            parse(old)[0].0,
            "client/src/components/layouts/prism-night.css"
        );
        assert!(
            parse("Checking formatting...\nAll matched files use Prettier code style!\n")
                .is_empty()
        );
    }

    #[test]
    fn gofmt_listing_only_when_the_step_fails() {
        let failed = "##[group]Run test -z $(gofmt -l .)\n##[endgroup]\nmain.go\npkg/x/y.go\n##[error]Process completed with exit code 1.\n";
        let r = parse(failed);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[1].0.as_str(), r[1].1), ("pkg/x/y.go", 1));
        let ok = "##[group]Run gofmt -l .\n##[endgroup]\nmain.go\n##[group]Run go build\n";
        assert!(parse(ok).is_empty());
        // peterbe/minimalcss#38 (yarn), prettier/prettier#6321 (npm).
        let yarn = "$ prettier --list-different \"src/*.js\" \"bin/*.js\"\nsrc/run.js\nsrc/utils.js\nerror Command failed with exit code 1.\n";
        assert_eq!(parse(yarn).len(), 2);
        let npm = "> prettier --config ./.prettierrc --list-different \"src/*.ts\"\n\nsrc/serviceWorker.ts\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! Exit status 1\n";
        assert_eq!(parse(npm)[0].0, "src/serviceWorker.ts");
        // Azure-Samples/terraform-github-actions#20, copied from the Actions web page.
        let tf = "                Run terraform fmt -check -recursive\n                /home/runner/work/_temp/072c7c7a/terraform-bin fmt -check -recursive\n                AzureVDI.auto.tfvars\n                modules/openai-test/main.tf\n                Error: Terraform exited with code 3.\n                Error: Process completed with exit code 1.\n";
        let r = parse(tf);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[1].0.as_str(), r[1].3.as_deref()),
            ("modules/openai-test/main.tf", Some("terraform"))
        );
        let other = "##[group]Run ls\n##[endgroup]\nmain.go\n##[error]Process completed with exit code 1.\n";
        assert!(parse(other).is_empty());
    }

    #[test]
    fn go_linters_and_clang_format() {
        // ethereum/go-ethereum Travis log (LogChunks), intel/nn-hal#147, llvm/llvm-project#61048.
        let log = "eth/config.go:1::warning: file is not gofmted with -s (gofmt)\neth/config.go:1::warning: file is not goimported (goimports)\nutil.go:45: exit status 1\n./ngraph_creator/operations/src/HardSwish.cpp:24:23: error: code should be clang-formatted [-Wclang-format-violations]\ntest.cpp:3:18: warning: code should be clang-formatted [-Wclang-format-violations]\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("eth/config.go", 1));
        assert_eq!(
            (r[1].0.as_str(), r[1].1, r[1].3.as_deref()),
            (
                "ngraph_creator/operations/src/HardSwish.cpp",
                24,
                Some("clang-format")
            )
        );
    }
}
