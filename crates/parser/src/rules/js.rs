//! TypeScript / JavaScript and the web toolchain around them: tsc (`file(line,col): error TS…`
//! and `file:line:col - error TS…`), TSLint, ESLint (stylish, compact, unix, and lint scripts'
//! `path:line message (rule)`), stylelint, Sass / PostCSS / CoffeeScript compile errors, Jest `●`
//! and Vitest `FAIL … >` blocks (paths relative to the root its `RUN` banner names), mocha's `N
//! failing` (or a paste starting at its first `  1) title:` entry, an error line under
//! it) and Jasmine's `Failures:` numbered lists (with the full test title),
//! karma-mocha-reporter's `FAILED TESTS:` summary, tape's TAP `not ok` + `at:`, `bun test`'s
//! failures (its relative file headers place its absolute frames), and Node errors
//! (`SyntaxError` after a `file:line` header, uncaught exceptions and `Cannot find module` with an in-repo stack frame),
//! and webpack's `ERROR in <module>` blocks, whose position and message its loaders print on the
//! next lines (awesome-typescript-loader, ts-loader, `Module parse failed`, `Module not found`).
//! tsc run by `wails build`'s `• Compiling frontend:` step prints paths relative to `frontend/`.
//!
//! It must never report an ESLint or stylelint `warning` row, a frame inside `node_modules` or
//! Node's internals (`node:…`, and the bare `internal/…`, `events.js` of Node < 16), a frame in
//! a build's output (`dist/`, tsc's `out/`: the source's line is not the frame's), a Jest
//! `● Console` block, or a frame without a real position (an `eval`'d innermost frame, a
//! CoffeeScript `x.coffee:1:1` placeholder) — the harness frame further out is not the failure.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const BLOCK_BUDGET: u32 = 2000;
/// Lines a mocha/Jasmine failure list may go without an entry before it is given up.
const NUMBERED_IDLE: u32 = 200;
const NODE_BUDGET: u32 = 60;

static ERROR_TS: crate::Needle = crate::needle!("error TS");
static ERROR: crate::Needle = crate::needle!("Error");
static EXCEPTION: crate::Needle = crate::needle!("Exception");
static COMMA_COL: crate::Needle = crate::needle!(", col ");
static COLON_ERROR: crate::Needle = crate::needle!(": error: ");
static TITLE_SEP: crate::Needle = crate::needle!(" › ");

static TSC_PAREN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Error: )?(\S[^()]*?)\((\d+),(\d+)\): error (TS\d+): (.*)$").unwrap()
});
static TSC_COLON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Error: )?(\S[^:]*?):(\d+):(\d+) - error (TS\d+): (.*)$").unwrap()
});
static ESLINT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?\s*$").unwrap()
});
static ESLINT_COMPACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?): line (\d+), col (\d+), (Error|Warning) - (.+?)(?: \(([\w@/-]+)\))?$")
        .unwrap()
});
static ESLINT_UNIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?):(\d+):(\d+): (.+?) \[(Error|Warning)(?:/(\S+))?\]$").unwrap()
});
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*(?:at |❯ )(?:.*? \(|[^\s(]+ )?(?:file://)?([^\s()]+?):(\d+):(\d+)\)?"?$"#)
        .unwrap()
});
static JS_EXC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Uncaught )?((?:[A-Z]\w*?)?(?:Error|Exception))(?: \[(\w+)\])?: (.+)$").unwrap()
});
static BABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^SyntaxError: (\S+?): (.*) \((\d+):(\d+)\)$").unwrap());
static CODE_ANY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+ ?)?\|").unwrap());
static CODE_FRAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*> ?(\d+) \|").unwrap());
/// stylelint's `string` formatter rows under a file header: `  4:1  ✖  message  rule` (the
/// message may wrap onto indented continuation lines) and the older `429:1\tmessage (rule)`.
static STYLELINT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(\d+):(\d+)\s+(✖|⚠)\s+(.+?)(?:\s{2,}([a-z][\w/-]*))?\s*$").unwrap()
});
/// eslint-watch's default `simple-detail` formatter: rows `  ✖  5:1  message  rule` (errors) and
/// `  !  6:1  message  rule` (warnings) under a `path (errors/warnings)` header.
static ESW_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(✖|!|⚠)\s+(\d+):(\d+)\s+(.+?)(?:\s{2,}([@a-z][\w@/-]*))?\s*$").unwrap()
});
static STYLELINT_OLD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+):(\d+)\t(.+?)(?: \(([a-z][\w/-]*)\))?$").unwrap());
/// `path.js:635 message (rule)`: the `standard`/prettier-eslint summary some projects' lint
/// scripts print (Atom's `script/lint`).
static LINE_RULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+\.(?:js|jsx|ts|tsx|mjs|cjs|coffee)):(\d+) (.+) \(([\w@-]+(?:/[\w@-]+)*)\)$")
        .unwrap()
});
/// CoffeeScript's compiler: `test/x.coffee:8:25: error: unexpected identifier`.
static COFFEE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+\.(?:coffee|litcoffee)):(\d+):(\d+): error: (.+)$").unwrap()
});
/// Ruby Sass / node-sass: `Error: Invalid CSS after …` then `on line 86 of sass/x.sass`.
static SASS_LOC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^on line (\d+) of (\S+\.(?:sass|scss|css|less))$").unwrap());

/// TSLint's prose formatters: `ERROR: path:l:c rule message` and `ERROR: path[l, c]: message`.
static TSLINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ERROR: (?:\((\S+)\) )?(\S+?)(?::(\d+):(\d+) (\S+) |\[(\d+), (\d+)\]: )(.+)$")
        .unwrap()
});

/// Node core modules as frames name them before `node:` prefixes (Node < 16): bare file names
/// and `internal/…`. A relative frame path with one of these names is Node's, not the repo's.
const NODE_CORE: [&str; 24] = [
    "events.js",
    "domain.js",
    "net.js",
    "timers.js",
    "module.js",
    "fs.js",
    "vm.js",
    "util.js",
    "assert.js",
    "stream.js",
    "tty.js",
    "zlib.js",
    "http.js",
    "https.js",
    "readline.js",
    "buffer.js",
    "child_process.js",
    "bootstrap_node.js",
    "_stream_readable.js",
    "_stream_writable.js",
    "_stream_duplex.js",
    "_stream_transform.js",
    "async_hooks.js",
    "cluster.js",
];

/// Wording of an error a script raises because a child process it ran failed.
const CHILD_EXIT: [&str; 3] = ["exited with code", "Command failed", "exit code"];

/// A frame of the repository's own code: neither Node's (`node:internal`, `internal/…`) nor a
/// dependency's, nor a bundle built into `dist/` (a project that tests its build, as lozad does,
/// throws in `dist/lozad.js:7:898`, minified: the line to edit is in the sources, and the test's
/// own frame below is the one to show). Tested in that order, the cheap byte tests first.
fn own_frame(path: &str, sink: &Sink) -> bool {
    !is_node_internal(path)
        && sink
            .repo_path(path)
            .is_some_and(|p| !crate::path::is_vendored(&p) && !in_dist(&p))
}

/// A frame's column past which the line is a bundler's or minifier's output, not a line anyone
/// wrote (pixi.js tests its rollup build: `packages/core/lib/core.js:2010:1189`; lozad its
/// minified `dist/lozad.js:8:4430`).
const MINIFIED_COLUMN: u64 = 300;

/// Bound on [`Js::bundles`].
const MAX_BUNDLES: usize = 16;

/// True for a path inside a build's output directory (the repository's or a workspace
/// package's): a bundle's `dist/`, or `out/`, where TypeScript projects following VS Code's
/// layout compile their tests (`mocha out/test` fails in `out/test/server.test.js:345`, whose
/// source is `test/server.test.ts`, a line the frame does not give).
fn in_dist(path: &str) -> bool {
    path.rsplit('/')
        .skip(1)
        .any(|dir| dir == "dist" || dir == "out")
}

/// True when a stack frame's path is Node's own code rather than a file of the repository.
fn is_node_internal(path: &str) -> bool {
    path.starts_with("node:")
        || path.starts_with("internal/")
        || (!path.contains('/') && NODE_CORE.contains(&path))
}

/// The file a frame names. Source-mapped frames can glue the output directory to the
/// source's absolute URL (`out/vs/a/file:/home/…/src/vs/a/x.ts`); the source is what failed.
fn frame_path(path: &str) -> &str {
    match path.find("file:/") {
        Some(i) if i > 0 => &path[i + 5..],
        _ => path,
    }
}

/// Which numbered failure list is open: mocha's `N failing` or Jasmine's `Failures:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Numbered {
    Mocha,
    Jasmine,
}

/// `  1) suite title:` (mocha) or `1) full name` (Jasmine). Some macOS Travis captures prefix
/// every line with a literal `nl`, which is dropped.
fn numbered_header(t: &str) -> Option<&str> {
    let t = t.strip_prefix("nl").map_or(t, str::trim_start);
    let n = ascii_digits(t);
    if n == 0 || n > 5 {
        return None;
    }
    t[n..]
        .strip_prefix(')')
        .filter(|r| r.is_empty() || r.starts_with(' '))
        .map(str::trim)
}

/// The error line mocha prints under a failure's title: `Uncaught AssertionError: …`,
/// `AssertionError: …`, `TypeError: …` (an error class's name, then `: `).
fn is_mocha_error_line(t: &str) -> bool {
    let t = t.strip_prefix("Uncaught ").unwrap_or(t);
    let name = t.split_once(": ").map_or(t, |(n, _)| n);
    name.len() < t.len()
        && name.ends_with("Error")
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
}

/// Playwright's failure header (list, line and dot reporters): `1) [project] › file:l:c › describe
/// › test ───…`, the project optional; the box rule after it may be cut mid-character. Returns
/// the test's name: its titles after the location, as Jest's `describe › it`.
fn playwright_header(t: &str) -> Option<String> {
    let n = ascii_digits(t);
    if n == 0 || n > 5 {
        return None;
    }
    let rest = t[n..].strip_prefix(") ")?;
    let rest =
        rest.trim_end_matches(|c: char| c == '\u{2500}' || c == '\u{fffd}' || c.is_whitespace());
    let mut parts = rest.split(" \u{203a} ");
    let mut loc = parts.next()?;
    if loc.starts_with('[') && loc.ends_with(']') {
        loc = parts.next()?;
    }
    let (file, pos) = loc.split_once(':')?;
    if !JS_EXTS.contains(&super::ext(file))
        || pos.is_empty()
        || !pos.bytes().all(|c| c.is_ascii_digit() || c == b':')
    {
        return None;
    }
    let name = parts.collect::<Vec<_>>().join(" \u{203a} ");
    (!name.is_empty()).then_some(name)
}

/// Tools that print paths relative to the directory an npm script ran in.
const REBASED_TOOLS: &[&str] = &[
    "tsc", "eslint", "jest", "vitest", "mocha", "jasmine", "tape", "webpack",
];

/// Lines after webpack's `ERROR in …` within which its loader prints the message.
const WEBPACK_BUDGET: u8 = 4;

/// A line and, when printed, a column.
type Pos = (u64, Option<u64>);

/// A webpack `ERROR in <module>` header waiting for the loader's message line.
#[derive(Debug)]
struct WebpackErr {
    path: String,
    pos: Option<Pos>,
    budget: u8,
}

/// The module and position of a webpack error header, after `ERROR in `: awesome-typescript-
/// loader's `[at-loader] ./a.ts:29:24`, ts-loader's `a.ts(215,23)`, webpack's own `./a.js 2:0` and
/// `./a.js 3:0-25`, or a bare module `./a.ts`.
fn webpack_header(rest: &str) -> Option<(&str, Option<Pos>)> {
    let rest = rest.strip_prefix("[at-loader] ").unwrap_or(rest).trim_end();
    if rest.is_empty() || rest.starts_with('[') {
        return None;
    }
    if let Some((path, pos)) = rest.rsplit_once(' ') {
        // `./a.js 2:0` or `./a.js 3:0-25`: line and column of the module.
        let (line, col) = pos.split_once(':')?;
        let col = col.split('-').next().unwrap_or(col);
        return Some((path, Some((super::num(line)?, super::num(col)))));
    }
    if let Some(r) = rest.strip_suffix(')')
        && let Some(i) = r.rfind('(')
    {
        let (line, col) = r[i + 1..].split_once(',')?;
        return Some((&r[..i], Some((super::num(line)?, super::num(col)))));
    }
    let mut end = rest.len();
    let mut nums = Vec::new();
    while nums.len() < 2
        && let Some(colon) = rest[..end].rfind(':')
        && let Some(n) = super::num(&rest[colon + 1..end])
    {
        nums.push(n);
        end = colon;
    }
    match nums.as_slice() {
        [col, line] => Some((&rest[..end], Some((*line, Some(*col))))),
        [line] => Some((&rest[..end], Some((*line, None)))),
        _ => Some((rest, None)),
    }
}

const JS_EXTS: [&str; 20] = [
    "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte", "astro", "json", "md",
    "coffee", "css", "scss", "sass", "less", "imba",
    // Ember-era `x.js.es6` sources, linted with `eslint --ext .es6`.
    "es6",
];

/// Leading ASCII digits of `s`, as a byte count.
fn ascii_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// [`TSC_PAREN`]'s captures without the regex engine (whose capture search costs ~200
/// instructions a byte), for the plain ASCII shape `[Error: ]file(l,c): error TSn: msg`.
/// Returns `None` for anything it is not sure of, so the caller falls back to the regexes: when
/// it returns `Some`, the regex would have matched with the same five groups (the file runs to
/// the first paren because `[^()]` cannot cross one, and the optional `Error: ` is tried first).
fn tsc_paren_fast(t: &str) -> Option<[&str; 5]> {
    let start = if t.starts_with("Error: ") { 7 } else { 0 };
    let b = t.as_bytes();
    let first = *b.get(start)?;
    if !first.is_ascii_graphic() || first == b'(' || first == b')' {
        return None;
    }
    let p = start + memchr::memchr2(b'(', b')', &b[start..])?;
    if b[p] != b'(' {
        return None;
    }
    let rest = &t[p + 1..];
    let n = ascii_digits(rest);
    let (line, rest) = rest.split_at(n);
    let rest = rest.strip_prefix(',')?;
    let n2 = ascii_digits(rest);
    let (col, rest) = rest.split_at(n2);
    let rest = rest.strip_prefix("): error ")?;
    let n3 = ascii_digits(rest.strip_prefix("TS")?);
    let (code, rest) = rest.split_at(2 + n3);
    let msg = rest.strip_prefix(": ")?;
    if n == 0 || n2 == 0 || n3 == 0 {
        return None;
    }
    Some([&t[start..p], line, col, code, msg])
}

/// [`ESLINT_ROW`]'s captures without the regex engine, for ASCII lines: `  L:C  level  message
/// [ rule]`. `None` when unsure (the caller then runs the regex). The regex's lazy message
/// ends at the first place where the rest is either `\s{2,}word\s*` or blank: that is the start
/// of the whitespace run before the last word when the run is 2+ long, else the trimmed end.
#[allow(clippy::type_complexity)]
fn eslint_row_fast(s: &str) -> Option<(&str, &str, &str, &str, Option<&str>)> {
    if !s.is_ascii() || s.contains('\n') {
        return None;
    }
    // `\s` on ASCII.
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r');
    let b = s.as_bytes();
    let run =
        |from: usize, f: &dyn Fn(&u8) -> bool| from + b[from..].iter().take_while(|c| f(c)).count();
    let i = run(0, &ws);
    let j = run(i, &|c: &u8| c.is_ascii_digit());
    if i == 0 || j == i || b.get(j) != Some(&b':') {
        return None;
    }
    let k = run(j + 1, &|c: &u8| c.is_ascii_digit());
    let m = run(k, &ws);
    if k == j + 1 || m == k {
        return None;
    }
    let level = if s[m..].starts_with("error") {
        "error"
    } else if s[m..].starts_with("warning") {
        "warning"
    } else {
        return None;
    };
    let after = m + level.len();
    let msg_start = run(after, &ws);
    let end = b.iter().rposition(|c| !ws(c))? + 1;
    if msg_start == after || msg_start >= end {
        return None;
    }
    let (msg_end, rule) = match b[msg_start..end].iter().rposition(ws) {
        Some(q) => {
            let q = msg_start + q;
            let run_start = msg_start + b[msg_start..q].iter().rposition(|c| !ws(c))? + 1;
            if q + 1 - run_start >= 2 {
                (run_start, Some(&s[q + 1..end]))
            } else {
                (end, None)
            }
        }
        None => (end, None),
    };
    Some((&s[i..j], &s[j + 1..k], level, &s[msg_start..msg_end], rule))
}

/// A row of Next.js's own ESLint formatter (`next lint`, and `next build`'s lint step) under its
/// `./app/x.ts` file line: `58:14  Error: message.  rule` (or `Warning:`), not indented.
/// Returns line, column, whether it is an error, the message and the rule.
fn next_lint_row(t: &str) -> Option<(u64, u64, bool, &str, Option<&str>)> {
    let (line, rest) = t.split_at(ascii_digits(t));
    let rest = rest.strip_prefix(':')?;
    let (col, rest) = rest.split_at(ascii_digits(rest));
    let rest = rest.strip_prefix("  ")?.trim_start();
    let (error, rest) = if let Some(r) = rest.strip_prefix("Error: ") {
        (true, r)
    } else {
        (false, rest.strip_prefix("Warning: ")?)
    };
    let (line, col) = (super::num(line)?, super::num(col)?);
    let rest = rest.trim_end();
    let (msg, rule) = match rest.rsplit_once("  ") {
        Some((m, r)) if !r.trim().is_empty() && !r.trim().contains(' ') => {
            (m.trim(), Some(r.trim()))
        }
        _ => (rest, None),
    };
    Some((line, col, error, msg, rule))
}

/// TypeScript diagnostic codes that mean an unresolved module or import.
fn ts_type(code: &str) -> BugType {
    match code {
        "TS2307" | "TS2305" | "TS2306" | "TS2792" | "TS7016" | "TS2614" | "TS1192" => {
            BugType::Import
        }
        c if c.len() == 6 && c.as_bytes()[2] == b'1' => BugType::Syntax,
        _ => BugType::TypeError,
    }
}

fn message_type(msg: &str, default: BugType) -> BugType {
    if msg.contains("Cannot find module")
        || msg.contains("Could not resolve \"")
        || msg.contains("Cannot find package")
        || msg.contains("ERR_MODULE_NOT_FOUND")
        || msg.contains("Failed to resolve import")
        || msg.contains("Failed to load url")
        || msg.contains("Could not locate module")
    {
        BugType::Import
    } else if msg.starts_with("SyntaxError")
        || msg.contains("Jest encountered an unexpected token")
        || msg.contains("Unexpected token")
        || msg.contains("parser error: ")
    {
        BugType::Syntax
    } else if msg.starts_with("TypeCheckError") {
        // Vitest's typecheck mode reports tsc's diagnostics as failed tests.
        BugType::TypeError
    } else {
        default
    }
}

#[derive(Debug)]
struct TestBlock {
    test: Option<String>,
    file: Option<String>,
    message: Option<String>,
    message_lines: u32,
    code_line: Option<u64>,
    /// The last numbered line of a code frame without a `>` marker (`6 |  frame.`), which a
    /// caret line under it (`  |        ^`) designates.
    last_code_no: Option<u64>,
    seq: u64,
    budget: u32,
    done: bool,
    tool: &'static str,
    /// Mocha prints a test's title over several lines; open until the line ending in `:`.
    title_open: bool,
    /// A frame inside a dependency (not the test runner's own) came before any repository
    /// frame: the error was raised while loading or running that dependency.
    dep_frame: bool,
    /// `Require stack:` was the last line: its first entry is the module whose `require` failed.
    require_stack: bool,
}

impl TestBlock {
    /// A block opened by a runner's failure header: nothing read under it yet.
    fn new(tool: &'static str, test: Option<String>, file: Option<String>, seq: u64) -> Self {
        TestBlock {
            test,
            file,
            message: None,
            message_lines: 0,
            code_line: None,
            last_code_no: None,
            seq,
            budget: BLOCK_BUDGET,
            done: false,
            tool,
            title_open: false,
            dep_frame: false,
            require_stack: false,
        }
    }
}

#[derive(Debug)]
struct NodeErr {
    message: String,
    ty: BugType,
    seq: u64,
    budget: u32,
    /// No `at` frame seen yet.
    first_frame: bool,
    /// An esbuild `✘ [ERROR]` block: its location line (`    path:l:c:`) comes first.
    esbuild: bool,
}

/// A frame that names a file but not a real position: CoffeeScript code run without source
/// maps reports every frame at `x.coffee:1:1`.
fn is_placeholder_frame(path: &str, line: &str, col: &str) -> bool {
    line == "1" && col == "1" && super::ext(path) == "coffee"
}

/// karma-mocha-reporter's summary of failures: suites and tests by indentation (`✖` before a
/// test's title), the browser, the message, then the browser's stack (Firefox's
/// `fn@path:line:col`, V8's `at fn (path:line:col)`).
#[derive(Debug, Default)]
struct KarmaFailed {
    /// Suite titles above the current line, with their indentation.
    suites: Vec<(usize, String)>,
    test: Option<KarmaTest>,
    budget: u32,
}

/// The failed test being read in a karma-mocha-reporter summary.
#[derive(Debug)]
struct KarmaTest {
    /// Indentation of its `✖` line: its message and stack are indented as much.
    indent: usize,
    /// Suite titles and its own, joined by spaces.
    name: String,
    msg: Option<String>,
    seq: u64,
    /// Its site in the repository was reported (the innermost own frame wins).
    reported: bool,
}

/// Lines of a karma-mocha-reporter failure summary read at most.
const KARMA_BUDGET: u32 = 20_000;

impl KarmaFailed {
    /// False when the line is not the section's (a line at column 0 ends it).
    fn line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if t.is_empty() {
            return true;
        }
        let indent = l.indent();
        if indent == 0 || self.budget >= KARMA_BUDGET {
            return false;
        }
        self.budget += 1;
        if let Some(title) = t.strip_prefix("✖ ") {
            self.suites.retain(|(i, _)| *i < indent);
            let mut name = String::new();
            for (_, s) in &self.suites {
                name.push_str(s);
                name.push(' ');
            }
            name.push_str(title);
            self.test = Some(KarmaTest {
                indent,
                name,
                msg: None,
                seq: l.no,
                reported: false,
            });
            return true;
        }
        // The message and the stack are indented as the test's title; a suite's title is less.
        if let Some(test) = &mut self.test
            && indent >= test.indent
        {
            if let Some((path, line)) = karma_frame(t) {
                if !test.reported && sink.is_own_frame(path) {
                    test.reported = true;
                    let msg = test.msg.as_deref().unwrap_or("test failed");
                    sink.emit(
                        test.seq,
                        Finding::new(path, line, BugType::Logic, msg)
                            .test(Some(&test.name))
                            .conf(0.7)
                            .tool("karma"),
                    );
                }
            } else if test.msg.is_none() && !is_browser(t) {
                test.msg = Some(crate::sink::truncate_chars(t, 400).to_string());
            }
            return true;
        }
        self.test = None;
        self.suites.retain(|(i, _)| *i < indent);
        self.suites.push((indent, t.to_string()));
        true
    }
}

/// The browser line under a test's title: `Firefox 72.0.0 (Linux 0.0.0)`.
fn is_browser(t: &str) -> bool {
    const BROWSERS: [&str; 7] = [
        "Chrome",
        "HeadlessChrome",
        "Firefox",
        "Safari",
        "PhantomJS",
        "Electron",
        "Edge",
    ];
    t.ends_with(')') && BROWSERS.iter().any(|b| t.starts_with(b))
}

/// A browser's stack frame in a Karma report: Firefox's `fn@test/x.js:381:33` (`@path` for an
/// anonymous function) or V8's `at fn (test/x.js:381:33)`.
fn karma_frame(t: &str) -> Option<(&str, u64)> {
    let loc = if let Some(rest) = t.strip_prefix("at ") {
        rest.strip_suffix(')')?.rsplit_once(" (")?.1
    } else {
        t.rsplit_once('@')?.1
    };
    let (rest, _col) = loc.rsplit_once(':')?;
    let (path, line) = rest.rsplit_once(':')?;
    if path.is_empty() || path.contains(' ') {
        return None;
    }
    Some((path, super::num(line)?))
}

/// `bun test` (after its `bun test v1.0.3 (b651b16f)` banner): each file's results under its
/// path relative to where it ran (`lib/file.test.ts:`), a failure as a code frame, `error:
/// expect(received).toBe(expected)` and `at /abs/lib/file.test.ts:13:2`, then the test's verdict
/// line (`✗ title [1.48ms]`, `(fail) title [1.48ms]` since 1.1).
#[derive(Debug, Default)]
struct BunTest {
    /// The file header above, relative to the directory bun ran in.
    file: Option<String>,
    /// The open failure: its line, message and chosen location.
    err: Option<(u64, String, Option<BunLoc>)>,
}

/// A repo-relative file and line.
type BunLoc = (String, u64);

/// A `bun test` frame: `at /abs/x.test.ts:13:2` or `at fn (/abs/x.test.ts:13:2)`.
fn bun_frame(t: &str) -> Option<(&str, u64)> {
    let rest = t.strip_prefix("at ")?;
    let loc = match rest.strip_suffix(')') {
        Some(r) => r.rsplit_once(" (")?.1,
        None => rest,
    };
    let (rest, _col) = loc.rsplit_once(':')?;
    let (path, line) = rest.rsplit_once(':')?;
    (!path.is_empty() && !path.contains(' ')).then_some((path, super::num(line)?))
}

impl BunTest {
    /// Returns true when the line was the runner's own.
    fn line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.indent() == 0
            && let Some(file) = t.strip_suffix(':')
            && !file.contains([' ', ':'])
            && JS_EXTS.contains(&super::ext(file))
        {
            self.file = Some(file.to_string());
            self.err = None;
            return true;
        }
        if l.indent() == 0
            && let Some(msg) = t.strip_prefix("error: ")
        {
            self.err = Some((l.no, msg.to_string(), None));
            return true;
        }
        if let Some((_, _, loc)) = &mut self.err
            && loc.is_none()
            && let Some((path, line)) = bun_frame(t)
        {
            // bun prints frames absolute; the header names the same file relative to where it
            // ran, which places it in the repository whatever the directory was.
            let rel = match &self.file {
                Some(f)
                    if path
                        .strip_suffix(f.as_str())
                        .is_some_and(|p| p.ends_with('/')) =>
                {
                    Some(f.clone())
                }
                _ => sink.repo_path(path),
            };
            if let Some(rel) = rel.filter(|r| !crate::path::is_vendored(r)) {
                *loc = Some((rel, line));
            }
            return true;
        }
        let verdict = t
            .strip_prefix("\u{2717} ")
            .or_else(|| t.strip_prefix("(fail) "));
        if let Some(title) = verdict {
            let title = match title.rsplit_once(" [") {
                Some((name, time)) if time.ends_with("ms]") || time.ends_with("s]") => name,
                _ => title,
            };
            if let Some((seq, msg, Some((path, line)))) = self.err.take() {
                sink.emit(
                    seq,
                    Finding::new(&path, line, BugType::Logic, &msg)
                        .test(Some(title))
                        .conf(0.85)
                        .tool("bun"),
                );
            }
            return true;
        }
        if t.starts_with("\u{2713} ") || t.starts_with("(pass) ") {
            self.err = None;
            return true;
        }
        false
    }
}

#[derive(Debug, Default)]
pub(crate) struct Js {
    /// karma-mocha-reporter's `FAILED TESTS:` section, being read.
    karma: Option<Box<KarmaFailed>>,
    /// `bun test`'s output, once its banner was seen.
    bun: Option<Box<BunTest>>,
    /// Files a frame showed to be minified bundles (a column no hand-written line reaches):
    /// their other frames, whatever their column, are the bundle's too.
    bundles: Vec<String>,
    /// npm before 5 could not parse a `package.json`: `npm ERR! Failed to parse json` armed it
    /// (`Some(None)`), then the parser's `… at L:C` (line, message, sequence number); `npm ERR!
    /// File: <path>` names the file.
    npm_json: Option<Option<(u64, String, u64)>>,
    eslint_file: Option<String>,
    /// A blank line came inside the ESLint file block: the next line decides whether it ended.
    eslint_blank: bool,
    jest_file: Option<String>,
    /// Inside `wails build`'s `• Compiling frontend:` step, which runs the frontend's build script
    /// in the project's frontend directory (`frontend`, Wails' `frontend:dir` default): tsc's
    /// relative paths are relative to it.
    wails_frontend: bool,
    /// Vitest's root (`RUN  v3.1.1 /app/packages/vuetify/src`), repo-relative: its `FAIL` headers
    /// and `❯` frames are relative to it, not to where the job ran.
    vitest_root: Option<String>,
    /// The last Jest suite header was `PASS`: its `●` blocks (`Console`, `Cannot log after tests
    /// are done`) are no failures.
    jest_pass: bool,
    /// Inside a Jest `● Console` section: the errors there were printed by the code
    /// (`console.error(err)`), caught, not thrown.
    jest_console: bool,
    block: Option<TestBlock>,
    /// `/path/file.js:3` printed by Node above a `SyntaxError`.
    node_loc: Option<(String, u64, u32)>,
    node_err: Option<NodeErr>,
    numbered: Option<Numbered>,
    /// Lines since the numbered list last had an open entry.
    numbered_idle: u32,
    /// A mocha entry header (`  1) title:`) seen outside any list, with its line: a paste cut
    /// below `N failing` starts there; the next line tells whether it is one.
    mocha_cut: Option<(String, u64)>,
    /// TAP (tape): `TAP version` seen, the current `# test` name, and a `not ok` waiting for
    /// its `at:` line.
    tap: bool,
    tap_test: Option<String>,
    tap_failed: Option<(String, u64)>,
    webpack: Option<WebpackErr>,
    /// Reports of bare Node stack traces in this CI step since mocha last summed up a run
    /// (step, key): if mocha's `N passing (…)` follows, a test logged them (a logger printing a
    /// caught error) and mocha lists its real failures under `N failing` itself.
    bare_traces: Vec<(u32, (String, u32, BugType))>,
    /// A standard-engine linter's banner (`standard: Use JavaScript Standard Style (url)`) was
    /// printed: its command name, whose own lines (`standard: Run \`standard --fix\`…`) and
    /// indented `path:l:c: message` rows follow.
    standard: Option<String>,
}

/// The banner `standard` and the other standard-engine linters (semistandard, ts-standard,
/// happiness) print before their findings: `<cmd>: Use <Style name> (<homepage>)`, and before
/// standard 8 `Error: Use JavaScript Standard Style`.
fn standard_banner(t: &str) -> Option<&str> {
    if let Some(name) = t.strip_prefix("Error: Use ")
        && name.ends_with(" Style")
        && name.len() < 60
    {
        return Some("Error");
    }
    let (cmd, rest) = t.split_once(": Use ")?;
    let ok = !cmd.is_empty()
        && cmd.len() <= 40
        && cmd.bytes().all(|c| c.is_ascii_lowercase() || c == b'-')
        && rest.ends_with(')')
        && rest.contains(" (http");
    ok.then_some(cmd)
}

/// A standard-engine row: `  path:line:col: message`, with ` (rule)` in `--verbose` mode.
fn standard_row(t: &str) -> Option<(&str, u64, u64, &str, Option<&str>)> {
    let (loc, msg) = t.split_once(": ")?;
    let (path, line, col) = split_lc(loc)?;
    let msg = msg.trim_end();
    let (msg, rule) = match msg.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
        Some((m, r))
            if !r.is_empty()
                && r.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"@/-_".contains(&c)) =>
        {
            (m, Some(r))
        }
        _ => (msg, None),
    };
    Some((path, line, col, msg, rule))
}

/// `path:line:col` (no spaces in the path).
fn split_lc(loc: &str) -> Option<(&str, u64, u64)> {
    let (rest, col) = loc.rsplit_once(':')?;
    let (path, line) = rest.rsplit_once(':')?;
    if path.is_empty() || path.contains(' ') {
        return None;
    }
    Some((path, super::num(line)?, super::num(col)?))
}

/// Jest prints a suite's header relative to the directory it ran in, and the suite's frames
/// relative to the suite's project `rootDir` (kiwicom/orbit: `FAIL docs/src/x/__tests__/a.tsx`,
/// `at Object.<anonymous> (src/x/__tests__/a.tsx:34:20)`): when a relative frame does not start
/// with the header's first directory but a later directory of the header is the frame's first,
/// the header's directories before it are the project's.
fn jest_project_dir<'a>(suite: &'a str, frame: &str) -> Option<&'a str> {
    let (first, _) = frame.split_once('/')?;
    if first.is_empty() || first.starts_with('.') || first.contains(':') {
        return None;
    }
    let suite = suite.trim_start_matches("./");
    let starts_at = |i: usize| {
        suite[i..].starts_with(first) && suite.as_bytes().get(i + first.len()) == Some(&b'/')
    };
    if starts_at(0) {
        return None;
    }
    suite
        .match_indices('/')
        .find(|(i, _)| starts_at(i + 1))
        .map(|(i, _)| &suite[..i])
}

/// eslint-watch's `simple-detail` file header, `C:\\…\\src\\index.js (1/1)`: the file, counted
/// errors and warnings.
fn esw_header(t: &str) -> Option<&str> {
    // Byte by byte from the end: it runs on every unindented line that ends with `)`.
    let inner = t.strip_suffix(')')?;
    if !inner.as_bytes().last()?.is_ascii_digit() {
        return None;
    }
    let open = memchr::memrchr(b'(', inner.as_bytes())?;
    let file = inner[..open].strip_suffix(' ')?;
    let counts = &inner[open + 1..];
    let (e, w) = counts.split_once('/')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(e)
        && digits(w)
        && !file.contains(' ')
        && file.len() < 512
        && JS_EXTS.contains(&super::ext(file)))
    .then_some(file)
}

/// Vitest's banner, ` RUN  v3.1.1 /app/packages/vuetify/src`: the root it runs in (the project's
/// or a workspace package's directory), absolute.
fn vitest_banner(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("RUN  v")?;
    let (version, root) = rest.split_once(' ')?;
    let root = root.trim();
    (version.starts_with(|c: char| c.is_ascii_digit())
        && root.starts_with('/')
        && !root.contains(' '))
    .then_some(root)
}

/// A path Vitest printed relative to its root, joined to it (`None`: the root is the
/// repository's, unknown, or the path is already absolute or under it).
fn under_root(root: Option<&str>, path: &str) -> Option<String> {
    let root = root?;
    let path = path.trim_start_matches("./");
    let relative = !path.starts_with('/') && !path.contains("://") && !path.starts_with("..");
    let already = path.starts_with(root) && path.as_bytes().get(root.len()) == Some(&b'/');
    (relative && !already).then(|| format!("{root}/{path}"))
}

/// A frame in `node_modules` that is not a test runner's own machinery.
fn is_dependency_frame(path: &str) -> bool {
    let Some(at) = memchr::memmem::find(path.as_bytes(), b"node_modules/") else {
        return false;
    };
    let pkg = &path[at + 13..];
    !(pkg.starts_with("jest-") || pkg.starts_with("@jest/") || pkg.starts_with("babel-jest"))
}

/// Bound on the bare-trace reports remembered for mocha's summary.
const BARE_TRACES: usize = 256;

/// Mocha's summary line: `58 passing (444ms)`.
fn is_mocha_passing(t: &str) -> bool {
    let d = ascii_digits(t);
    d > 0 && t[d..].starts_with(" passing (")
}

impl Js {
    /// True when `line` cannot change this matcher's state or be claimed by it: no test block,
    /// Node error or ESLint file block is open, and the line has none of the shapes that start
    /// or report something (`npm … path`, `FAIL `, `● `, a bare path, `error TS`, `Error`/
    /// `Exception` after a capital, ESLint compact/unix rows). Must stay in step with
    /// [`Js::line`].
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        if self.npm_json.is_some()
            || (l.first == b'b' && l.trimmed().starts_with("bun test v"))
            || (l.first == b'n' && l.last == b'n' && l.trimmed() == "npm ERR! Failed to parse json")
        {
            return false;
        }
        if self.standard.is_some()
            || self.wails_frontend
            || self.block.is_some()
            || self.node_loc.is_some()
            || self.node_err.is_some()
            || self.eslint_file.is_some()
            || self.numbered.is_some()
            || self.tap
            || self.webpack.is_some()
            || self.mocha_cut.is_some()
            || (!self.bare_traces.is_empty() && l.first.is_ascii_digit() && l.last == b')')
            || (l.last == b':' && l.first.is_ascii_digit() && l.indent() == 2)
        {
            return false;
        }
        let t = l.trimmed();
        if t.is_empty() {
            return true;
        }
        // Mocha's `N failing` opens its numbered failure list; TSLint's `ERROR: ` rows;
        // standard-engine's banner.
        if (l.first == b'"' && t[1..].trim_start().starts_with("FAIL "))
            || (l.first.is_ascii_lowercase()
                && t.ends_with(')')
                && l.colon
                && standard_banner(t).is_some())
            || (l.first == b'E' && t.starts_with("Error: Use "))
            || (l.last == b'g' && l.first.is_ascii_digit())
            || (l.first == b'E' && (t.starts_with("ERROR: ") || t.starts_with("ERROR in ")))
            || (l.first == b'[' && t.starts_with("[tsl] ERROR in "))
            || (l.first == b'T' && t.starts_with("TAP version"))
            || (l.first == b'R' && t.starts_with("RUN  v"))
        {
            return false;
        }
        // 0xE2 starts `●`.
        if matches!(l.first, b'F' | 0xE2)
            || (l.first == b'P' && t.starts_with("PASS "))
            || (l.first == b'n'
                && (t.starts_with("npm error path ")
                    || (t.starts_with("npm ERR! ")
                        && (t.starts_with("npm ERR! path ") || t.contains(": `cd ")))))
        {
            return false;
        }
        if l.indent() == 0 && memchr::memchr(b' ', t.as_bytes()).is_none() {
            return false;
        }
        if l.last == b')' && l.indent() == 0 && esw_header(t).is_some() {
            return false;
        }
        if !l.colon {
            return true;
        }
        if l.first.is_ascii_digit() && l.colon_digit && crate::has(&TITLE_SEP, t) {
            return false;
        }
        // The same preconditions as `line` (tsc, Node exceptions, ESLint compact/unix rows),
        // cheapest first: byte searches before substring searches.
        let b = t.as_bytes();
        if l.colon_digit && (l.last == b']' || (l.last == b')' && l.indent() == 0)) {
            return false;
        }
        if l.colon_digit && l.first.is_ascii_alphanumeric() && crate::has(&COLON_ERROR, t) {
            return false;
        }
        if (l.colon_digit || memchr::memchr(b'(', b).is_some()) && crate::has(&ERROR_TS, t) {
            return false;
        }
        if (l.first.is_ascii_uppercase() || l.first == b'"')
            && (crate::has(&ERROR, t) || crate::has(&EXCEPTION, t))
        {
            return false;
        }
        !(l.indent() == 0 && memchr::memchr(b',', b).is_some() && crate::has(&COMMA_COL, t))
    }

    /// A line of an open karma-mocha-reporter `FAILED TESTS:` section, read before every other
    /// matcher: the section owns its indented lines (suite titles, messages and frames other
    /// matchers would read as their own). A line that is not the section's closes it and is
    /// left to the matchers in their order, this one's [`Js::line`] included.
    #[inline]
    pub fn karma_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let Some(k) = &mut self.karma else {
            return false;
        };
        if k.line(l, l.trimmed(), sink) {
            return true;
        }
        self.karma = None;
        false
    }

    /// A line of `bun test`'s output once its banner was seen, read before every other matcher:
    /// its `error: …` lines are no rustc headers, its frames no Node crash's.
    #[inline]
    pub fn bun_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let Some(b) = &mut self.bun else {
            return false;
        };
        let t = l.trimmed();
        // `Ran 1 tests across 1 files. [28.00ms]`: the run is over.
        if l.first == b'R' && t.starts_with("Ran ") && t.contains(" tests across ") {
            self.bun = None;
            return true;
        }
        b.line(l, t, sink)
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if l.first == b'b' && t.starts_with("bun test v") {
            self.bun = Some(Box::default());
            return true;
        }
        if l.first == b'F' && t == "FAILED TESTS:" {
            self.karma = Some(Box::default());
            return true;
        }
        // Wails' step lines (`  • Compiling frontend: `), its step's end (`Done.`) and its
        // failure (`  ERROR   exit status 2`), all at the margin of its own output.
        if (l.first == 0xE2 || self.wails_frontend) && l.indent() <= 2 {
            if let Some(step) = t.strip_prefix("\u{2022} ") {
                self.wails_frontend = step.trim_end() == "Compiling frontend:";
                return self.wails_frontend;
            }
            if self.wails_frontend && (t == "Done." || t.starts_with("ERROR ")) {
                self.wails_frontend = false;
            }
        }
        if t.is_empty() {
            // A blank line ends an ESLint file block, unless the log is double-spaced (a blank
            // line after every line: a Jenkins console copied from the browser), which only the
            // next line can tell: a stylish row then still belongs to the block.
            self.eslint_blank = self.eslint_file.is_some();
            return false;
        }
        if let Some(cmd) = &self.standard {
            if l.indent() > 0 {
                // standardrb prints the same banner and rows for Ruby: RuboCop's matcher reads them.
                if let Some((path, line, col, msg, rule)) = standard_row(t)
                    && JS_EXTS.contains(&super::ext(path))
                {
                    let ty = if msg.starts_with("Parsing error") {
                        BugType::Syntax
                    } else {
                        BugType::Linting
                    };
                    sink.emit(
                        l.no,
                        Finding::new(path, line, ty, msg)
                            .col(Some(col))
                            .conf(0.95)
                            .tool("standard")
                            .rule(rule),
                    );
                    return true;
                }
            } else if !t
                .strip_prefix(cmd.as_str())
                .is_some_and(|r| r.starts_with(": "))
            {
                self.standard = None;
            }
        }
        if ((l.first.is_ascii_lowercase() && t.ends_with(')')) || l.first == b'E')
            && let Some(cmd) = standard_banner(t)
        {
            self.standard = Some(cmd.to_string());
            return true;
        }
        if !self.bare_traces.is_empty() && l.first.is_ascii_digit() && is_mocha_passing(t) {
            let step = sink.step();
            let keys: Vec<_> = std::mem::take(&mut self.bare_traces)
                .into_iter()
                .filter(|(s, _)| *s == step)
                .map(|(_, k)| k)
                .collect();
            sink.retract(&keys);
        }
        if std::mem::take(&mut self.eslint_blank)
            && !(l.indent() > 0
                && (eslint_row_fast(l.text).is_some() || ESLINT_ROW.is_match(l.text)))
        {
            self.eslint_file = None;
        }
        if (self.npm_json.is_some() || l.first == b'n') && self.npm_json_line(l.no, t, sink) {
            return true;
        }
        // npm names the directory a failed script ran in; JS tools printed paths relative to it.
        if let Some(dir) = t
            .strip_prefix("npm error path ")
            .or_else(|| t.strip_prefix("npm ERR! path "))
        {
            sink.rebase_step(dir.trim(), REBASED_TOOLS);
            return true;
        }
        // `npm ERR! pkg@1.0 test:x: `cd ./sub && npm test``: the script ran in `sub`.
        if let Some(rest) = t.strip_prefix("npm ERR! ")
            && let Some((_, cmd)) = rest.split_once(": `cd ")
            && let Some((dir, _)) = cmd.split_once(" && ")
        {
            sink.rebase_step(dir.trim(), REBASED_TOOLS);
            return true;
        }
        if (self.webpack.is_some() || matches!(l.first, b'E' | b'['))
            && self.webpack_line(l.no, t, sink)
        {
            return true;
        }
        if self.tap_line(l, t, sink) {
            return true;
        }
        // Both tsc formats carry `: error TS` (`f(1,2): error` or `f:1:2 - error`).
        if (l.colon_digit || (l.colon && memchr::memchr(b'(', t.as_bytes()).is_some()))
            && crate::has(&ERROR_TS, t)
            && self.tsc(l.no, t, sink)
        {
            return true;
        }
        // RSpec prints the same `Failures:` / `  1) name` list as Jasmine: a Jasmine list is read
        // but its lines are left to the other matchers too.
        if self.numbered_line(l, t, sink) || self.test_block(l, t, sink) {
            return self.numbered != Some(Numbered::Jasmine);
        }
        if l.first == b'E' && l.colon && t.starts_with("ERROR: ") && self.tslint(l.no, t, sink) {
            return true;
        }
        if self.node(l, t, sink) {
            return true;
        }
        self.eslint(l, t, sink)
    }

    /// webpack's `ERROR in <module>` (also behind ts-loader's `[tsl] `), then the loader's own
    /// line: `TS2339: …` (awesome-typescript-loader, ts-loader), `(48,19): error TS2339: …`
    /// (ts-loader 0.x, position on that line), `Module parse failed: …` or `Module not found: …`
    /// (webpack, position on the header). A header with no message line after it reports nothing:
    /// webpack repeats a module's header around other tools' lines.
    fn webpack_line(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        let header = t
            .strip_prefix("ERROR in ")
            .or_else(|| t.strip_prefix("[tsl] ERROR in "));
        if let Some(rest) = header {
            self.webpack = webpack_header(rest).map(|(path, pos)| WebpackErr {
                path: path.to_string(),
                pos,
                budget: WEBPACK_BUDGET,
            });
            return self.webpack.is_some();
        }
        let Some(w) = &mut self.webpack else {
            return false;
        };
        w.budget = w.budget.saturating_sub(1);
        if w.budget == 0 {
            self.webpack = None;
            return false;
        }
        let (msg, pos, ty, code, tool) = if let Some(rest) = t.strip_prefix('(')
            && let Some((pos, msg)) = rest.split_once("): error ")
            && let Some((line, col)) = pos.split_once(',')
            && let Some(line) = super::num(line)
        {
            let code = msg.split(':').next().unwrap_or("");
            let msg = msg.get(code.len() + 1..).unwrap_or(msg).trim();
            (
                msg,
                Some((line, super::num(col))),
                ts_type(code),
                Some(code),
                "tsc",
            )
        } else if t.starts_with("TS")
            && let Some((code, msg)) = t.split_once(": ")
            && code.len() >= 6
            && code[2..].bytes().all(|c| c.is_ascii_digit())
        {
            (msg, w.pos, ts_type(code), Some(code), "tsc")
        } else if let Some(msg) = t.strip_prefix("Module parse failed: ") {
            (msg, w.pos, BugType::Syntax, None, "webpack")
        } else if t.starts_with("Module not found: ") {
            (t, w.pos, BugType::Import, None, "webpack")
        } else {
            return false;
        };
        let path = w.path.clone();
        self.webpack = None;
        if let Some((line, col)) = pos {
            sink.emit(
                seq,
                Finding::new(&path, line, ty, msg)
                    .col(col)
                    .conf(0.9)
                    .tool(tool)
                    .rule(code),
            );
        }
        true
    }

    fn tsc(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        let caps;
        let [file, line, col, code, msg] = match tsc_paren_fast(t) {
            Some(parts) => parts,
            None => {
                caps = TSC_PAREN.captures(t).or_else(|| TSC_COLON.captures(t));
                let Some(c) = &caps else {
                    return false;
                };
                let g = |i| c.get(i).map_or("", |m| m.as_str());
                [g(1), g(2), g(3), g(4), g(5)]
            }
        };
        let (Some(line), Some(col)) = (super::num(line), super::num(col)) else {
            return false;
        };
        let placed;
        let relative =
            !file.starts_with(['/', '\\', '~', '.']) && file.as_bytes().get(1) != Some(&b':');
        let file = if self.wails_frontend && relative {
            placed = format!("frontend/{file}");
            placed.as_str()
        } else {
            file
        };
        sink.emit(
            seq,
            Finding::new(file, line, ts_type(code), msg)
                .col(Some(col))
                .conf(0.95)
                .tool("tsc")
                .rule(Some(code)),
        );
        true
    }

    fn eslint(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.colon_digit
            && t.contains(": error: ")
            && let Some(c) = COFFEE.captures(t)
        {
            sink.emit(
                l.no,
                Finding::new(
                    &c[1],
                    super::num(&c[2]).unwrap_or(0),
                    BugType::Syntax,
                    &c[4],
                )
                .col(super::num(&c[3]))
                .conf(0.95)
                .tool("coffee"),
            );
            return true;
        }
        if l.indent() > 0 {
            if let Some(file) = &self.eslint_file {
                let caps;
                let row = match eslint_row_fast(l.text) {
                    Some(row) => Some(row),
                    None => {
                        caps = ESLINT_ROW.captures(l.text);
                        caps.as_ref().map(|c| {
                            let g = |i| c.get(i).map_or("", |m| m.as_str());
                            (g(1), g(2), g(3), g(4), c.get(5).map(|m| m.as_str()))
                        })
                    }
                };
                if row.is_none()
                    && let Some(c) = ESW_ROW.captures(l.text)
                {
                    if &c[1] == "✖" {
                        let file = file.clone();
                        sink.emit(
                            l.no,
                            Finding::new(
                                &file,
                                super::num(&c[2]).unwrap_or(0),
                                BugType::Linting,
                                &c[4],
                            )
                            .col(super::num(&c[3]))
                            .conf(0.95)
                            .tool("eslint")
                            .rule(c.get(5).map(|m| m.as_str())),
                        );
                    }
                    return true;
                }
                if row.is_none()
                    && l.text.contains('✖')
                    && let Some(c) = STYLELINT_ROW.captures(l.text)
                {
                    if &c[3] == "✖" {
                        let file = file.clone();
                        sink.emit(
                            l.no,
                            Finding::new(
                                &file,
                                super::num(&c[1]).unwrap_or(0),
                                BugType::Linting,
                                &c[4],
                            )
                            .col(super::num(&c[2]))
                            .conf(0.95)
                            .tool("stylelint")
                            .rule(c.get(5).map(|m| m.as_str())),
                        );
                    }
                    return true;
                }
                if let Some((line, col, level, msg, rule)) = row {
                    if level == "error" {
                        let (line, col) = (super::num(line), super::num(col));
                        // Every rule's message names its rule; ESLint's own parser errors name
                        // none (and before ESLint 1.x had no `Parsing error:` prefix either).
                        let ty = if msg.starts_with("Parsing error") || rule.is_none() {
                            BugType::Syntax
                        } else {
                            BugType::Linting
                        };
                        let file = file.clone();
                        sink.emit(
                            l.no,
                            Finding::new(&file, line.unwrap_or(0), ty, msg)
                                .col(col)
                                .conf(0.95)
                                .tool("eslint")
                                .rule(rule),
                        );
                    }
                    return true;
                }
            }
            return false;
        }
        // A bare path line starts an ESLint stylish file block.
        if !t.contains(' ') && JS_EXTS.contains(&super::ext(t)) && t.len() < 512 {
            self.eslint_file = Some(t.to_string());
            return false;
        }
        if l.last == b')'
            && let Some(file) = esw_header(t)
        {
            self.eslint_file = Some(file.to_string());
            return false;
        }
        if l.first.is_ascii_digit()
            && let Some(file) = &self.eslint_file
            && let Some((line, col, error, msg, rule)) = next_lint_row(t)
        {
            if error {
                let ty = if msg.starts_with("Parsing error") || rule.is_none() {
                    BugType::Syntax
                } else {
                    BugType::Linting
                };
                let file = file.clone();
                sink.emit(
                    l.no,
                    Finding::new(&file, line, ty, msg)
                        .col(Some(col))
                        .conf(0.95)
                        .tool("eslint")
                        .rule(rule),
                );
            }
            return true;
        }
        if let Some(file) = &self.eslint_file
            && l.first.is_ascii_digit()
            && t.contains('\t')
            && let Some(c) = STYLELINT_OLD.captures(t)
        {
            let file = file.clone();
            sink.emit(
                l.no,
                Finding::new(
                    &file,
                    super::num(&c[1]).unwrap_or(0),
                    BugType::Linting,
                    &c[3],
                )
                .col(super::num(&c[2]))
                .conf(0.95)
                .tool("stylelint")
                .rule(c.get(4).map(|m| m.as_str())),
            );
            return true;
        }
        if l.colon_digit
            && l.last == b')'
            && let Some(c) = LINE_RULE.captures(t)
        {
            sink.emit(
                l.no,
                Finding::new(
                    &c[1],
                    super::num(&c[2]).unwrap_or(0),
                    BugType::Linting,
                    &c[3],
                )
                .conf(0.9)
                .tool("eslint")
                .rule(Some(&c[4])),
            );
            return true;
        }
        if l.colon
            && crate::has(&COMMA_COL, t)
            && let Some(c) = ESLINT_COMPACT.captures(t)
        {
            if &c[4] == "Error" {
                let msg = &c[5];
                let ty = if msg.starts_with("Parsing error") {
                    BugType::Syntax
                } else {
                    BugType::Linting
                };
                sink.emit(
                    l.no,
                    Finding::new(&c[1], super::num(&c[2]).unwrap_or(0), ty, msg)
                        .col(super::num(&c[3]))
                        .conf(0.95)
                        .tool("eslint")
                        .rule(c.get(6).map(|m| m.as_str())),
                );
            }
            return true;
        }
        if l.colon_digit
            && t.ends_with(']')
            && (t.contains(" [Error") || t.contains(" [Warning"))
            && let Some(c) = ESLINT_UNIX.captures(t)
        {
            if &c[5] == "Error" {
                let msg = c[4].trim_end_matches('.');
                let ty = if msg.starts_with("Parsing error") {
                    BugType::Syntax
                } else {
                    BugType::Linting
                };
                sink.emit(
                    l.no,
                    Finding::new(&c[1], super::num(&c[2]).unwrap_or(0), ty, &c[4])
                        .col(super::num(&c[3]))
                        .conf(0.95)
                        .tool("eslint")
                        .rule(c.get(6).map(|m| m.as_str())),
                );
            }
            return true;
        }
        false
    }

    /// Mocha (`N failing`, then `  1) suite title:`) and Jasmine (`Failures:`, then `1) name`)
    /// failure lists: each numbered entry becomes a test block whose first in-repo frame is
    /// reported with the test's full title.
    fn numbered_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.first.is_ascii_digit() && &t[ascii_digits(t)..] == " failing" {
            self.finish_block(sink);
            self.numbered = Some(Numbered::Mocha);
            self.numbered_idle = 0;
            return true;
        }
        if t == "Failures:" {
            self.finish_block(sink);
            self.numbered = Some(Numbered::Jasmine);
            self.numbered_idle = 0;
            return true;
        }
        if let Some((title, seq)) = self.mocha_cut.take()
            && self.numbered.is_none()
            && l.indent() == 5
            && is_mocha_error_line(t)
        {
            self.numbered = Some(Numbered::Mocha);
            self.numbered_idle = 0;
            self.block = Some(TestBlock::new("mocha", Some(title), None, seq));
        }
        let Some(mode) = self.numbered else {
            // Mocha's entry header at its own indentation, its title complete (`:`): only the
            // error line mocha prints under it (five spaces in) opens the list.
            if l.first.is_ascii_digit()
                && l.indent() == 2
                && self.block.is_none()
                && let Some(title) = numbered_header(t)
                && let Some(title) = title.strip_suffix(':')
                && !title.trim_end().is_empty()
            {
                self.mocha_cut = Some((title.trim_end().to_string(), l.no));
            }
            return false;
        };
        // A list whose entries never come (a summary line that only looked like mocha's) is
        // given up, so the rest of the log is not read as its body.
        if self.block.is_none() {
            self.numbered_idle += 1;
            if self.numbered_idle > NUMBERED_IDLE {
                self.numbered = None;
                return false;
            }
        } else {
            self.numbered_idle = 0;
        }
        if let Some(title) = numbered_header(t) {
            self.finish_block(sink);
            let (title, open) = match title.strip_suffix(':') {
                Some(done) => (done.trim_end(), false),
                None => (title, mode == Numbered::Mocha),
            };
            self.block = Some(TestBlock {
                title_open: open,
                ..TestBlock::new(
                    if mode == Numbered::Mocha {
                        "mocha"
                    } else {
                        "jasmine"
                    },
                    (!title.is_empty()).then(|| title.to_string()),
                    None,
                    l.no,
                )
            });
            return true;
        }
        let Some(b) = &mut self.block else {
            return false;
        };
        if b.tool != "mocha" && b.tool != "jasmine" {
            return false;
        }
        if b.title_open {
            let part = t.strip_prefix("nl").map_or(t, str::trim_start);
            let (part, open) = match part.strip_suffix(':') {
                Some(p) => (p.trim_end(), false),
                None => (part, true),
            };
            b.title_open = open;
            if !part.is_empty() {
                let name = b.test.get_or_insert_with(String::new);
                if name.len() < 1000 {
                    if !name.is_empty() {
                        name.push(' ');
                    }
                    name.push_str(part);
                }
            }
            return true;
        }
        // After its frame, a block ends at the first unindented line that is not an entry.
        if b.done && l.indent() == 0 {
            self.finish_block(sink);
            self.numbered = None;
            return false;
        }
        false
    }

    /// tape's TAP output: `# test name`, `not ok N assertion`, then `  at: Test.<anonymous>
    /// (path:l:c)` naming the failing assertion.
    fn tap_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if t.starts_with("TAP version") {
            self.tap = true;
            return true;
        }
        if !self.tap {
            return false;
        }
        if let Some(name) = t.strip_prefix("# ") {
            self.tap_test = Some(crate::sink::truncate_chars(name, 300).to_string());
            return true;
        }
        if let Some(rest) = t.strip_prefix("not ok ") {
            let msg = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim();
            self.tap_failed = Some((crate::sink::truncate_chars(msg, 300).to_string(), l.no));
            return true;
        }
        if t.starts_with("ok ") {
            self.tap_failed = None;
            return true;
        }
        if let Some(at) = t.strip_prefix("at: ") {
            if let Some((msg, seq)) = self.tap_failed.take() {
                let at = at.trim_end_matches(')');
                let loc = at.rsplit(['(', ' ']).next().unwrap_or(at);
                let mut parts = loc.rsplitn(3, ':');
                let (col, line, path) = (parts.next(), parts.next(), parts.next());
                if let (Some(path), Some(line)) = (path, line.and_then(super::num))
                    && own_frame(path, sink)
                {
                    sink.emit(
                        seq,
                        Finding::new(path, line, BugType::Logic, &msg)
                            .col(col.and_then(super::num))
                            .test(self.tap_test.as_deref())
                            .conf(0.9)
                            .tool("tape"),
                    );
                }
            }
            return true;
        }
        false
    }

    /// TSLint's prose output (`ERROR: path:l:c rule message`).
    fn tslint(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        let Some(c) = TSLINT.captures(t) else {
            return false;
        };
        let g = |i| c.get(i).map(|m| m.as_str());
        let (line, col) = match (g(3), g(4)) {
            (Some(l), Some(c)) => (l, c),
            _ => (g(6).unwrap_or(""), g(7).unwrap_or("")),
        };
        let (Some(line), Some(col)) = (super::num(line), super::num(col)) else {
            return false;
        };
        let rule = g(5).or(g(1));
        sink.emit(
            seq,
            Finding::new(&c[2], line, BugType::Linting, &c[8])
                .col(Some(col))
                .conf(0.95)
                .tool("tslint")
                .rule(rule),
        );
        true
    }

    fn finish_block(&mut self, sink: &mut Sink) {
        let Some(b) = self.block.take() else {
            return;
        };
        if b.done {
            return;
        }
        // No usable frame: fall back to the code frame's `> N |` line in the failing file.
        if let (Some(file), Some(line)) = (&b.file, b.code_line) {
            let rooted = (b.tool == "vitest")
                .then(|| under_root(self.vitest_root.as_deref(), file))
                .flatten();
            let file = rooted.as_deref().unwrap_or(file);
            let msg = b.message.as_deref().unwrap_or("test failed");
            sink.emit(
                b.seq,
                Finding::new(file, line, message_type(msg, BugType::Logic), msg)
                    .test(b.test.as_deref())
                    .conf(0.8)
                    .tool(b.tool),
            );
        }
    }

    fn test_block(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.first == b'R'
            && let Some(root) = vitest_banner(t)
        {
            self.vitest_root = sink.repo_path(root).filter(|r| !r.is_empty());
            return true;
        }
        // Jest: `FAIL src/a.test.js`; Vitest: `FAIL  src/a.test.ts > suite > test`. Output kept
        // in a quoted string (snapshot files, quoted log records) opens with `"`.
        if let Some(rest) = t.strip_prefix("FAIL ").or_else(|| {
            t.strip_prefix("\"")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix("FAIL "))
        }) {
            let rest = rest.trim();
            if let Some((file, name)) = rest.split_once(" > ") {
                // Vitest lists every test that failed with the same error above it: the
                // block is named after the first.
                if let Some(b) = &self.block
                    && b.tool == "vitest"
                    && !b.done
                    && b.message.is_none()
                    && b.test.is_some()
                {
                    return true;
                }
                self.finish_block(sink);
                let name = name.split(" [").next().unwrap_or(name).trim();
                // A workspace project's label comes first: `|unit| composables/x.spec.ts`.
                let file = file
                    .strip_prefix('|')
                    .and_then(|r| r.split_once("| "))
                    .map_or(file, |(_, f)| f.trim_start());
                self.block = Some(TestBlock::new(
                    "vitest",
                    Some(name.to_string()),
                    Some(file.to_string()),
                    l.no,
                ));
                return true;
            }
            let file = rest.split_whitespace().next().unwrap_or(rest);
            if JS_EXTS.contains(&super::ext(file)) {
                self.finish_block(sink);
                if rest.contains(" [ ") {
                    // Vitest suite-level failure: `FAIL  src/a.test.ts [ src/a.test.ts ]`.
                    self.block = Some(TestBlock::new("vitest", None, Some(file.to_string()), l.no));
                } else {
                    self.jest_file = Some(file.to_string());
                    self.jest_pass = false;
                    self.jest_console = false;
                }
                return true;
            }
        }
        // A Jest failure whose received value quotes a Playwright run (lexical's integration
        // tests run `playwright test` in a fixture and compare its result) prints Playwright's
        // headers inside its message, before its own frames: they are the value, not a block.
        let quoted = self
            .block
            .as_ref()
            .is_some_and(|b| b.tool == "jest" && !b.done && b.message.is_some());
        if l.first.is_ascii_digit()
            && l.colon_digit
            && !quoted
            && let Some(name) = playwright_header(t)
        {
            self.finish_block(sink);
            // The file is relative to Playwright's test directory, which the log does not name:
            // only the block's absolute frames place the failure.
            self.block = Some(TestBlock::new("playwright", Some(name), None, l.no));
            return true;
        }
        if l.first == b'P'
            && let Some(rest) = t.strip_prefix("PASS ")
            && rest
                .split_ascii_whitespace()
                .any(|w| JS_EXTS.contains(&super::ext(w)))
        {
            self.finish_block(sink);
            self.jest_file = None;
            self.jest_pass = true;
            self.jest_console = false;
            return true;
        }
        if let Some(name) = t.strip_prefix("● ") {
            self.finish_block(sink);
            let name = name.trim();
            self.jest_console = name == "Console";
            // Jest's warning about a log line after the suite ended is printed as a `●` block
            // in passing suites too; a passing suite's blocks are no failures.
            if self.jest_console
                || self.jest_pass
                || name.starts_with("Cannot log after tests are done")
            {
                return true;
            }
            let test = (name != "Test suite failed to run").then(|| name.to_string());
            self.block = Some(TestBlock::new("jest", test, self.jest_file.clone(), l.no));
            return true;
        }
        let Some(b) = &mut self.block else {
            return false;
        };
        if b.budget == 0
            || t.starts_with("Test Suites:")
            || t.starts_with("PASS ")
            || t.starts_with("Test Files ")
            || t.starts_with("⎯⎯")
        {
            self.finish_block(sink);
            return false;
        }
        b.budget -= 1;
        if b.done {
            return !t.contains("error TS");
        }
        if t.starts_with("at ") || t.starts_with("❯ ") {
            if let Some(c) = FRAME.captures(t) {
                let mut path = frame_path(&c[1]);
                let joined;
                if b.tool == "jest"
                    && let Some(dir) = b.file.as_deref().and_then(|f| jest_project_dir(f, path))
                {
                    joined = format!("{dir}/{path}");
                    path = &joined;
                } else if b.tool == "vitest"
                    && let Some(p) = under_root(self.vitest_root.as_deref(), path)
                {
                    joined = p;
                    path = &joined;
                }
                let col = super::num(&c[3]);
                let bundle = if col.is_some_and(|c| c > MINIFIED_COLUMN) {
                    if self.bundles.len() < MAX_BUNDLES && !self.bundles.iter().any(|f| f == path) {
                        self.bundles.push(path.to_string());
                    }
                    true
                } else {
                    self.bundles.iter().any(|f| f == path)
                };
                if !bundle && own_frame(path, sink) {
                    let msg = b.message.as_deref().unwrap_or("test failed");
                    let mut ty = message_type(msg, BugType::Logic);
                    // Jest could not parse a dependency (an ESM package left untransformed):
                    // the repository's frame is the import that loads it.
                    if b.dep_frame
                        && ty == BugType::Syntax
                        && msg.contains("Jest encountered an unexpected token")
                    {
                        ty = BugType::Import;
                    }
                    sink.emit(
                        b.seq,
                        Finding::new(path, super::num(&c[2]).unwrap_or(0), ty, msg)
                            .col(col)
                            .test(b.test.as_deref())
                            .conf(0.9)
                            .tool(b.tool),
                    );
                    b.done = true;
                } else if is_dependency_frame(path) {
                    b.dep_frame = true;
                }
            }
            return true;
        }
        if let Some(c) = BABEL.captures(t) {
            sink.emit(
                b.seq,
                Finding::new(
                    &c[1],
                    super::num(&c[3]).unwrap_or(0),
                    BugType::Syntax,
                    &c[2],
                )
                .col(super::num(&c[4]))
                .test(b.test.as_deref())
                .conf(0.9)
                .tool(b.tool),
            );
            b.done = true;
            return true;
        }
        if t.contains("error TS") {
            return false;
        }
        // Jest's `Cannot find module 'x' from 'generator.js'` names the requiring module by its
        // base name, and the code frame under it is that module's, not the test file's: the
        // require stack's first entry (absolute: `/app/lib/generator.js`) is its path, where the
        // frames may be relative to another directory (`../../lib/generator.js`).
        if b.require_stack {
            b.require_stack = false;
            let entry = t.strip_prefix("- ").unwrap_or(t);
            if JS_EXTS.contains(&super::ext(entry)) && own_frame(entry, sink) {
                b.file = Some(entry.to_string());
            }
            return true;
        }
        if t == "Require stack:" {
            b.require_stack = b.code_line.is_none();
            return true;
        }
        if let Some(c) = CODE_FRAME.captures(t) {
            if b.code_line.is_none() {
                b.code_line = super::num(&c[1]);
            }
            return true;
        }
        if CODE_ANY.is_match(t) {
            let digits = ascii_digits(t);
            if digits > 0 {
                b.last_code_no = super::num(&t[..digits]);
            } else if b.code_line.is_none() && t[1..].trim_start().starts_with('^') {
                b.code_line = b.last_code_no;
            }
            return true;
        }
        // Jest names the dependency it could not parse (`Details:` then its path in
        // `node_modules`) before the code frame of the import that loads it.
        if !b.dep_frame && b.tool == "jest" && is_dependency_frame(t) {
            b.dep_frame = true;
        }
        // The message is the block's text up to the code frame or stack (expected/received
        // lines included), bounded.
        let t = t.strip_prefix("nl ").map_or(t, str::trim_start);
        if t.is_empty() || t == "nl" {
            return true;
        }
        match &mut b.message {
            None => b.message = Some(crate::sink::truncate_chars(t, 500).to_string()),
            Some(m) if b.code_line.is_none() && m.len() < 400 && b.message_lines < 12 => {
                b.message_lines += 1;
                m.push('\n');
                m.push_str(crate::sink::truncate_chars(t, 200));
            }
            Some(_) => {}
        }
        true
    }

    fn node(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if let Some((_, _, budget)) = &mut self.node_loc {
            if *budget == 0 {
                self.node_loc = None;
            } else {
                *budget -= 1;
            }
        }
        // A Jest console block (`console.log` then the message and the call site) names where
        // something was printed, not where an earlier error came from.
        if self.jest_console {
            return false;
        }
        let unquoted = t.strip_prefix('"').map_or(t, str::trim_start);
        if self.node_err.is_some() && unquoted.starts_with("console.") && !unquoted.contains(' ') {
            self.node_err = None;
            return false;
        }
        if let Some(e) = &mut self.node_err {
            if e.budget == 0 {
                self.node_err = None;
            } else {
                e.budget -= 1;
                // esbuild's location line under its `✘ [ERROR]`: the source position, when it
                // is the repository's; esbuild's own `main.js` (an API misuse) is followed by
                // the caller's stack.
                if e.esbuild
                    && l.colon_digit
                    && let Some(loc) = t.strip_suffix(':')
                    && let Some((path, line, col)) = split_lc(loc)
                {
                    if own_frame(frame_path(path), sink) {
                        let e = self.node_err.take().expect("checked");
                        sink.emit(
                            e.seq,
                            Finding::new(frame_path(path), line, e.ty, &e.message)
                                .col(Some(col))
                                .conf(0.9)
                                .tool("esbuild"),
                        );
                    }
                    return true;
                }
                if t.starts_with("on line ")
                    && let Some(c) = SASS_LOC.captures(t)
                {
                    let e = self.node_err.take().expect("checked");
                    let msg = e.message.trim_start_matches("Error: ");
                    let ty = if msg.starts_with("Undefined ") {
                        BugType::TypeError
                    } else {
                        BugType::Syntax
                    };
                    sink.emit(
                        e.seq,
                        Finding::new(&c[2], super::num(&c[1]).unwrap_or(0), ty, msg)
                            .conf(0.9)
                            .tool("sass"),
                    );
                    return true;
                }
                // Vitest prints its frames as `❯ fn path:l:c` (collection and unhandled errors).
                if t.starts_with("at ") || t.starts_with("❯ ") {
                    let first = std::mem::replace(&mut e.first_frame, false);
                    let caps = FRAME.captures(t);
                    // Code run through `eval` (its innermost frame is `<anonymous>`) or without
                    // source maps has no position in the repository: the first repo frame
                    // further out is a harness, not the failure.
                    let placeholder = caps
                        .as_ref()
                        .is_some_and(|c| is_placeholder_frame(&c[1], &c[2], &c[3]));
                    if placeholder || (first && caps.is_none()) {
                        self.node_err = None;
                        return true;
                    }
                    if let Some(c) = caps {
                        let vitest = t.starts_with("❯ ");
                        let rooted = vitest
                            .then(|| under_root(self.vitest_root.as_deref(), frame_path(&c[1])))
                            .flatten();
                        let path = rooted.as_deref().unwrap_or_else(|| frame_path(&c[1]));
                        if own_frame(path, sink) {
                            let e = self.node_err.take().expect("checked");
                            let before = sink.len();
                            sink.emit(
                                e.seq,
                                Finding::new(
                                    path,
                                    super::num(&c[2]).unwrap_or(0),
                                    e.ty,
                                    &e.message,
                                )
                                .col(super::num(&c[3]))
                                .conf(0.85)
                                // Vitest's `❯` frames are its own rendering, relative to the
                                // project root; Node's internals never come out that way.
                                .tool(if vitest {
                                    "vitest"
                                } else {
                                    "node"
                                }),
                            );
                            if !vitest
                                && sink.len() > before
                                && self.bare_traces.len() < BARE_TRACES
                                && let Some(k) = sink.last_key()
                            {
                                self.bare_traces.push((sink.step(), k));
                            }
                        }
                    }
                    return true;
                }
            }
        }
        // `/home/runner/work/R/R/src/index.js:3` on its own line (Node's syntax error header).
        if l.indent() <= 2
            && l.colon_digit
            && !t.contains(' ')
            && let Some((path, line)) = t.rsplit_once(':')
            && JS_EXTS.contains(&super::ext(path))
            && let Some(n) = super::num(line)
        {
            self.node_loc = Some((path.to_string(), n, 8));
            return true;
        }
        if let Some(msg) = t.strip_prefix("✘ [ERROR] ") {
            self.node_err = Some(NodeErr {
                message: msg.to_string(),
                ty: message_type(msg, BugType::Logic),
                seq: l.no,
                budget: NODE_BUDGET,
                first_frame: false,
                esbuild: true,
            });
            return true;
        }
        // `Error: …`, `TypeError: …`, `Uncaught …`: an uppercase first letter and a colon. A
        // quoted block (snapshot files, quoted log records) opens with `"`.
        let t = t.strip_prefix('"').unwrap_or(t);
        if !l.colon
            || !t.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
            || !(crate::has(&ERROR, t) || crate::has(&EXCEPTION, t))
        {
            return false;
        }
        if let Some(c) = JS_EXC.captures(t) {
            let name = &c[1];
            // PostCSS names the stylesheet position in the message itself.
            if name == "CssSyntaxError" {
                let msg = &c[3];
                let mut it = msg.splitn(2, ": ");
                if let (Some(loc), Some(text)) = (it.next(), it.next()) {
                    let mut parts = loc.rsplitn(3, ':');
                    if let (Some(col), Some(line), Some(path)) =
                        (parts.next(), parts.next(), parts.next())
                        && let Some(line) = super::num(line)
                    {
                        sink.emit(
                            l.no,
                            Finding::new(path, line, BugType::Syntax, text)
                                .col(super::num(col))
                                .conf(0.9)
                                .tool("postcss"),
                        );
                        return true;
                    }
                }
            }
            if name == "SyntaxError"
                && let Some((path, line, _)) = self.node_loc.take()
            {
                sink.emit(
                    l.no,
                    Finding::new(&path, line, BugType::Syntax, t)
                        .conf(0.85)
                        .tool("node"),
                );
                return true;
            }
            // A build script reporting that a child process failed (gulp's `Error: Process
            // exited with code: 5`, `Error: Command failed: …`): the child's own output above
            // holds the failure; the script's frame is only where it noticed.
            if CHILD_EXIT.iter().any(|w| crate::contains(&c[3], w)) {
                self.node_err = None;
                return false;
            }
            let ty = if name == "SyntaxError" {
                BugType::Syntax
            } else {
                message_type(t, BugType::Logic)
            };
            self.node_err = Some(NodeErr {
                message: t.to_string(),
                ty,
                seq: l.no,
                budget: NODE_BUDGET,
                first_frame: true,
                esbuild: false,
            });
            // Not claimed: the same line may be a Python exception line or another tool's.
            return false;
        }
        false
    }

    /// npm 3 and 4 on a malformed `package.json` (`EJSONPARSE`): `Failed to parse json`, the
    /// JSON parser's `Trailing comma in object at 22:3`, the source line and caret, then
    /// `File: /…/package.json`. Later npm prints a character position, no line.
    fn npm_json_line(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        let Some(rest) = t.strip_prefix("npm ERR! ") else {
            self.npm_json = None;
            return false;
        };
        let rest = rest.trim();
        if rest == "Failed to parse json" {
            self.npm_json = Some(None);
            return true;
        }
        match &mut self.npm_json {
            None => false,
            Some(at @ None) => {
                if let Some((msg, pos)) = rest.rsplit_once(" at ")
                    && let Some((line, col)) = pos.split_once(':')
                    && let (Some(line), Some(_)) = (super::num(line), super::num(col))
                {
                    *at = Some((line, msg.to_string(), seq));
                }
                true
            }
            Some(Some((line, msg, at))) => {
                if let Some(path) = rest.strip_prefix("File: ") {
                    sink.emit(
                        *at,
                        Finding::new(path.trim(), *line, BugType::Syntax, msg)
                            .conf(0.8)
                            .tool("npm"),
                    );
                    self.npm_json = None;
                }
                true
            }
        }
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.karma = None;
        self.bun = None;
        self.npm_json = None;
        self.finish_block(sink);
        self.eslint_file = None;
        self.eslint_blank = false;
        self.jest_file = None;
        self.jest_pass = false;
        self.jest_console = false;
        self.node_loc = None;
        self.node_err = None;
        self.bare_traces.clear();
        self.numbered = None;
        self.tap = false;
        self.tap_test = None;
        self.tap_failed = None;
        self.webpack = None;
        self.wails_frontend = false;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn bun_test_failure_at_the_headers_file() {
        // A user's `bun test --watch`, pasted in oven-sh/bun#5559 (former fresh11).
        let log = "bun test v1.0.3 (b651b16f)\n\nlib/file.test.ts:\nrun!!\n/Users/nikiv/src/data data dir\nundefined\n12 |   console.log(res)\n13 |   expect(2 + 2).toBe(5);\n      ^\nerror: expect(received).toBe(expected)\n\nExpected: 5\nReceived: 4\n\n      at /Users/nikiv/src/ts/lib/file.test.ts:13:2\n\u{2717} save array of JSON in ~/src/data [1.48ms]\n\n 0 pass\n 1 fail\n 1 expect() calls\nRan 1 tests across 1 files. [28.00ms]\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("lib/file.test.ts", 13, BugType::Logic)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("save array of JSON in ~/src/data")
        );
        // Bun 1.1's verdict line.
        let newer = log.replace("\u{2717} ", "(fail) ");
        assert_eq!(parse_str(&newer, &ParseOptions::default()).len(), 1);
        // Without the banner, `error:` is no bun failure and the home path no checkout.
        let bare = &log[log.find("lib/").unwrap()..];
        assert!(parse_str(bare, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn karma_mocha_reporter_failed_tests_with_firefox_frames() {
        // maptalks/maptalks.js' Travis job (BugSwarm), colours kept: Firefox names the test's
        // frame `@test/…:381:33`; failures whose message names only `node_modules/expect.js`
        // have no site in the repository.
        let log = "\x1b[4m\x1b[1mFAILED TESTS:\x1b[22m\x1b[24m\n  Geometry.Altitude\n    draw altitude\n\x1b[31m      \x1b[31m✖\x1b[31m draw altitude of marker without altitude prop\x1b[39m\n        \x1b[3m\x1b[33mFirefox 72.0.0 (Linux 0.0.0)\x1b[39m\x1b[23m\n\x1b[31m      Error: expected layer to be painted in center with offset (0,0), expect color [0,0,255] but actual color is [0,0,0] (node_modules/expect.js/index.js:96)\x1b[39m\n\x1b[31m\x1b[39m\n  Geometry.LineString\n    outline\n\x1b[31m      \x1b[31m✖\x1b[31m display outline\x1b[39m\n        \x1b[3m\x1b[33mFirefox 72.0.0 (Linux 0.0.0)\x1b[39m\x1b[23m\n\x1b[31m      expected layer to be painted in center with offset (0,10), expect color [0,255,0] but actual color is [0,0,0]\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      Assertion.prototype.assert@node_modules/expect.js/index.js:96:13\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      expect.Assertion.prototype.painted@node_modules/expect-maptalks/index.js:201:14\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      bind/<@node_modules/expect.js/index.js:499:17\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      @test/geometry/LineStringSpec.js:381:33\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      \x1b[39m\n\x1b[31m\x1b[39m\n  Geometry.Marker\n    set marker's Symbol\n\x1b[31m      \x1b[31m✖\x1b[31m change symbol in event listener\x1b[39m\n        \x1b[3m\x1b[33mFirefox 72.0.0 (Linux 0.0.0)\x1b[39m\x1b[23m\n\x1b[31m      Error: expected layer to be painted in center with offset (0,0), expect color [0,255,0] but actual color is [0,0,0] (node_modules/expect.js/index.js:96)\x1b[39m\n\x1b[31m\x1b[39m\n    marker rotation\n\x1b[31m      \x1b[31m✖\x1b[31m rotate text marker outline\x1b[39m\n        \x1b[3m\x1b[33mFirefox 72.0.0 (Linux 0.0.0)\x1b[39m\x1b[23m\n\x1b[31m      expected layer to be painted in center with offset (50,-10), expect color [0,255,0] but actual color is [0,0,0]\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      Assertion.prototype.assert@node_modules/expect.js/index.js:96:13\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      expect.Assertion.prototype.painted@node_modules/expect-maptalks/index.js:201:14\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      bind/<@node_modules/expect.js/index.js:499:17\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      @test/geometry/MarkerSpec.js:760:33\x1b[39m\n\x1b[31m\x1b[39m\x1b[31m      \x1b[39m\n\x1b[31m\x1b[39m\n  Geometry.Polygon\n";
        let r = parse_str(log, &ParseOptions::default());
        let rows: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.test_name.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "test/geometry/LineStringSpec.js",
                    381,
                    Some("Geometry.LineString outline display outline")
                ),
                (
                    "test/geometry/MarkerSpec.js",
                    760,
                    Some("Geometry.Marker marker rotation rotate text marker outline")
                ),
            ],
            "{r:?}"
        );
        assert!(r[0].message.starts_with("expected layer to be painted"));
    }

    #[test]
    fn npm_3s_package_json_parse_error_names_its_line() {
        // Dazzle's Travis job (npm 3.8.3): a trailing comma in `package.json`.
        let log = "npm ERR! file /home/travis/build/Raathigesh/Dazzle/package.json\nnpm ERR! code EJSONPARSE\n\nnpm ERR! Failed to parse json\nnpm ERR! Trailing comma in object at 22:3\nnpm ERR!   },\nnpm ERR!   ^\nnpm ERR! File: /home/travis/build/Raathigesh/Dazzle/package.json\nnpm ERR! Failed to parse package.json data.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("package.json", 22, BugType::Syntax)
        );
        // npm 6 gives a character position only: nothing to point at.
        let npm6 = "npm ERR! file /home/travis/build/o/r/package.json\nnpm ERR! code EJSONPARSE\nnpm ERR! JSON.parse Failed to parse json\nnpm ERR! JSON.parse Unexpected token } in JSON at position 567 while parsing near '...'\n";
        assert_eq!(parse_str(npm6, &ParseOptions::default()), vec![]);
    }

    #[test]
    fn eslint_row_fast_path_agrees_with_the_regex() {
        let fixed = [
            "  3:7  error  'x' is assigned a value but never used  no-unused-vars",
            "  3:7  warning  Unexpected console statement  no-console",
            "  3:7  error  Parsing error: Unexpected token",
            "  3:7  error  a b  c  d",
            "  3:7  error  a b c d ",
            "  3:7  error  msg\t\trule\t",
            "  3:7  error  ",
            "  3:7  error",
            "  3:7 error x",
            "3:7  error x",
            "  3:7  errors x",
            "  3:x  error x",
        ];
        // Random tails over a small alphabet exercise the lazy/optional interplay.
        let mut seed = 0x2545_f491_u64;
        let mut lines: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        for _ in 0..5000 {
            let mut t = String::from(" 12:3 \terror ");
            let len = (seed % 12) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                t.push([' ', ' ', '\t', 'a', 'b', '-', '\u{0b}'][(seed % 7) as usize]);
            }
            seed = seed.wrapping_add(0x9e37_79b9);
            lines.push(t);
        }
        let mut fast_hits = 0;
        for t in &lines {
            let slow = super::ESLINT_ROW.captures(t).map(|c| {
                let g = |i| c.get(i).map_or("", |m| m.as_str());
                (g(1), g(2), g(3), g(4), c.get(5).map(|m| m.as_str()))
            });
            if let Some(fast) = super::eslint_row_fast(t) {
                fast_hits += 1;
                assert_eq!(Some(fast), slow, "{t:?}");
            }
        }
        assert!(fast_hits > 1000, "{fast_hits}");
        assert!(super::eslint_row_fast(fixed[0]).is_some());
    }

    #[test]
    fn tsc_fast_path_agrees_with_the_regex() {
        let lines = [
            "src/a.ts(3,7): error TS2322: Type 'string' is not assignable.",
            "Error: src/a.ts(3,7): error TS2322: x",
            "Error: (x(3,7): error TS2322: x",
            "a b(1,2): error TS1005: ';' expected.",
            "src/a.ts(3,7): error TS2322:",
            "src/a.ts(3,7): error TS2322: ",
            "src/a.ts(3,): error TS2322: x",
            "src/a.ts(3,7): error TSx: x",
            "src/a.ts)(3,7): error TS1: x",
            " src/a.ts(3,7): error TS1: x",
            "src/é.ts(3,7): error TS1: x",
        ];
        for t in lines {
            let slow = super::TSC_PAREN.captures(t).map(|c| {
                let g = |i| c.get(i).map_or("", |m| m.as_str());
                [g(1), g(2), g(3), g(4), g(5)]
            });
            if let Some(fast) = super::tsc_paren_fast(t) {
                assert_eq!(Some(fast), slow, "{t}");
            }
        }
        assert!(super::tsc_paren_fast(lines[0]).is_some());
        assert!(super::tsc_paren_fast(lines[1]).is_some());
        assert!(super::tsc_paren_fast(lines[3]).is_some());
    }

    #[test]
    fn tsc_both_formats() {
        let log = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\nError: src/b.ts:1:20 - error TS2307: Cannot find module './x' or its corresponding type declarations.\nsrc/c.ts:2:1 - error TS1005: ';' expected.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(r[1].error_type, BugType::Import);
        assert_eq!(r[2].error_type, BugType::Syntax);
    }

    #[test]
    fn eslint_rows_without_a_rule_are_parser_errors() {
        let log =
            "test.js\n  2:2  error  Unexpected token }\n  3:1  error  Missing semicolon  semi\n";
        let r: Vec<_> = parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.line_number, r.error_type))
            .collect();
        assert_eq!(r, vec![(2, BugType::Syntax), (3, BugType::Linting)]);
    }

    #[test]
    fn webpack_loader_errors_under_their_module_header() {
        let log = "ERROR in [at-loader] ./src/stores/HookStore.ts:29:24 \n    TS2339: Property 'response' does not exist on type 'Error'.\n\n\
                   ERROR in ./src/app/main.ts\n(48,19): error TS2339: Property 'filter' does not exist on type '{}'.\n\n\
                   ERROR in ./t.js 2:0\nModule parse failed: Unexpected token (2:0)\nYou may need an appropriate loader to handle this file type.\n\
                   ERROR in ./src/index.js 3:0-25\nModule not found: Error: Can't resolve './missing' in '/app/src'\n\
                   [tsl] ERROR in /home/runner/work/R/R/src/a.tsx(215,23)\n      TS2307: Cannot find module 'x'.\n\
                   ERROR in Path must be a string. Received undefined\n\
                   ERROR in ./src/b.ts\n./src/b.ts 226:48-51\n";
        let r: Vec<_> = parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type))
            .collect();
        assert_eq!(
            r,
            vec![
                ("src/stores/HookStore.ts".into(), 29, BugType::TypeError),
                ("src/app/main.ts".into(), 48, BugType::TypeError),
                ("t.js".into(), 2, BugType::Syntax),
                ("src/index.js".into(), 3, BugType::Import),
                ("src/a.tsx".into(), 215, BugType::Import),
            ]
        );
    }

    #[test]
    fn npm_workspace_directory_prefixes_relative_paths() {
        let log = "##[group]Run npm test\n##[endgroup]\nError: src/app/a.spec.ts:72:53 - error TS2345: bad\nnpm error path /home/runner/work/R/R/client\n##[error]Process completed with exit code 1.\n##[group]Run other\nsrc/b.ts(1,1): error TS2322: x\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r[0].file_path, "client/src/app/a.spec.ts");
        assert_eq!(r[1].file_path, "src/b.ts");
    }

    #[test]
    fn next_lint_rows_and_double_spaced_stylish() {
        // vercel/next-learn#893 (`next lint`) and a build's warnings-only lint step.
        let log = "> next lint\n\n\n./app/lib/actions.ts\n58:14  Error: 'error' is defined but never used.  @typescript-eslint/no-unused-vars\n93:14  Error: 'error' is defined but never used.  @typescript-eslint/no-unused-vars\n\n./app/ui/a.tsx\n17:26  Warning: 'variable' is defined but never used.  no-unused-vars\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("app/lib/actions.ts", 93)
        );
        assert_eq!(
            r[0].rule.as_deref(),
            Some("@typescript-eslint/no-unused-vars")
        );
        // A Jenkins console copied from the browser: a blank line after every line.
        let log = "/var/jenkins_home/workspace/job_PR-4/src/a.spec.js\n\n  9:7  error  'x' is assigned a value but never used  no-unused-vars\n\n  12:1  error  'y' is assigned a value but never used  no-unused-vars\n\n✖ 2 problems (2 errors, 0 warnings)\n\n  3:1  error  not a row of the file above  no-undef\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("src/a.spec.js", 12)
        );
        // A row an Actions problem matcher marked, copied from the web page.
        let log = "/home/runner/work/F/F/src/components/Carousel.jsx\nError:   16:12  error  'goToPrevious' is defined but never used  no-unused-vars\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "src/components/Carousel.jsx");
    }

    #[test]
    fn eslint_stylish_skips_warnings() {
        let log = "\n/home/runner/work/R/R/src/a.js\n  1:7   error    'x' is assigned a value but never used  no-unused-vars\n  3:1   warning  Unexpected console statement            no-console\n  5:10  error    Parsing error: Unexpected token )\n\n✖ 3 problems (2 errors, 1 warning)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "src/a.js");
        assert_eq!(r[0].rule.as_deref(), Some("no-unused-vars"));
        assert_eq!(r[1].error_type, BugType::Syntax);
    }

    #[test]
    fn jest_parse_failure_in_a_dependency_is_the_import_that_loads_it() {
        // grafana's Jest suites (LogSage), shortened: an ESM package left untransformed.
        let log = "FAIL public/app/ShareLink.test.tsx\n  ● Test suite failed to run\n\n    Jest encountered an unexpected token\n\n    Details:\n\n    /home/runner/work/grafana/grafana/node_modules/pbf/index.js:15\n    export default class Pbf {\n    ^^^^^^\n\n    SyntaxError: Unexpected token 'export'\n\n    > 2 | import { WKT } from 'ol/format';\n        | ^\n\n      at Runtime.createScriptFromCode (node_modules/jest-runtime/build/index.js:1505:14)\n      at Object.<anonymous> (node_modules/ol/format/MVT.js:6:1)\n      at Object.<anonymous> (packages/grafana-ui/src/TableCellNG.tsx:2:1)\n\nTest Suites: 1 failed, 1 total\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "packages/grafana-ui/src/TableCellNG.tsx");
        assert_eq!(r[0].error_type, BugType::Import);
        // The repository's own file Jest could not parse (no dependency frame, and `Details:`
        // names the file itself) stays a syntax error.
        let own = log
            .replace(
                "      at Object.<anonymous> (node_modules/ol/format/MVT.js:6:1)\n",
                "",
            )
            .replace(
                "grafana/node_modules/pbf/index.js:15",
                "grafana/packages/grafana-ui/src/TableCellNG.tsx:2",
            );
        let r = parse_str(&own, &ParseOptions::default());
        assert_eq!(r[0].error_type, BugType::Syntax, "{r:?}");
    }

    #[test]
    fn esbuild_errors_at_their_source_or_the_callers_frame() {
        // alpine's build script misusing esbuild's API (LogSage), and esbuild's own message
        // for a source file.
        let log = "> node ./scripts/build.js\n\n\u{2718} [ERROR] Invalid option in build() call: \"watch\"\n\n    /home/runner/work/alpine/alpine/node_modules/esbuild/lib/main.js:254:12:\n      254 \u{2502}       throw new Error(`Invalid option ${where}: ${quote(key)}`);\n          \u{2575}             ^\n\n    at checkForInvalidFlags (/home/runner/work/alpine/alpine/node_modules/esbuild/lib/main.js:254:13)\n    at new Promise (<anonymous>)\n    at build (/home/runner/work/alpine/alpine/scripts/build.js:91:31)\n\n\u{2718} [ERROR] Could not resolve \"lodash\"\n\n    src/index.ts:1:7:\n      1 \u{2502} import x from \"lodash\"\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("scripts/build.js", 91)
        );
        assert_eq!(r[0].error_type, BugType::Logic);
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("src/index.ts", 1)
        );
        assert_eq!(r[1].error_type, BugType::Import);
    }

    #[test]
    fn jest_failure_uses_first_repo_frame() {
        let log = "FAIL src/sum.test.js\n  ● sum › adds numbers\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 4\n    Received: 3\n\n    > 4 |   expect(sum(1, 2)).toBe(4);\n\n      at Object.toBe (node_modules/x.js:1:1)\n      at Object.toBe (src/sum.test.js:4:21)\n\nTest Suites: 1 failed, 1 total\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "src/sum.test.js");
        assert_eq!(r[0].line_number, 4);
        assert_eq!(r[0].test_name.as_deref(), Some("sum › adds numbers"));
        assert_eq!(r[0].error_type, BugType::Logic);
    }

    #[test]
    fn playwright_failures_are_named_after_their_titles() {
        use super::playwright_header;
        let log = "  1) [Smoke] › smoke/insomnia-tab.test.ts:14:7 › multiple-tab feature test › add tab & close tab ───\n\n    Error: expect(locator).toBeVisible()\n\n    > 18 |     expect(tab).toBeVisible();\n         |                 ^\n\n        at /home/runner/work/insomnia/insomnia/packages/insomnia-smoke-test/tests/smoke/insomnia-tab.test.ts:18:17\n\n  1 failed\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1);
        assert_eq!(
            (
                r[0].file_path.as_str(),
                r[0].line_number,
                r[0].test_name.as_deref()
            ),
            (
                "packages/insomnia-smoke-test/tests/smoke/insomnia-tab.test.ts",
                18,
                Some("multiple-tab feature test › add tab & close tab")
            )
        );
        // Without a project, the rule cut mid-character; a temporary project under Playwright's
        // output directory is not the repository's.
        assert_eq!(
            playwright_header("1) a.test.ts:8:11 › fail ──\u{fffd}").as_deref(),
            Some("fail")
        );
        let log = "  1) [chromium] › a.test.ts:8:11 › fail ──\n\n    Error: expect(received).toBe(expected)\n\n        at /home/runner/work/playwright/playwright/test-results/x-playwright-test/a.test.ts:11:28\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // Mocha's entries and other numbered lines are not Playwright's.
        assert_eq!(playwright_header("1) suite title:"), None);
        assert_eq!(playwright_header("1) [x] › notes.txt:3 › y"), None);
    }

    #[test]
    fn jest_missing_module_is_in_the_requiring_module() {
        // asyncapi's generator under docker compose (`/app`), the test run from `test/…`.
        let log = "FAIL ./test-project.test.js\n  \u{25cf} Test suite failed to run\n\n    Cannot find module 'fs.extra' from 'generator.js'\n\n    Require stack:\n      /app/lib/generator.js\n      test-project.test.js\n\n      2 | const fs = require('fs');\n    > 3 | const xfs = require('fs.extra');\n        |             ^\n\n      at Resolver.resolveModule (node_modules/jest-resolve/build/index.js:299:11)\n      at Object.<anonymous> (../../lib/generator.js:3:13)\n\nTest Suites: 1 failed, 1 total\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(got, [("lib/generator.js", 3, BugType::Import)]);
        // The test file itself requiring a missing module: its own code frame.
        let log = "FAIL src/a.test.js\n  \u{25cf} Test suite failed to run\n\n    Cannot find module './b' from 'src/a.test.js'\n\n    Require stack:\n      src/a.test.js\n\n    > 1 | const b = require('./b');\n        | ^\n\n      at Resolver.resolveModule (node_modules/jest-resolve/build/index.js:299:11)\n\nTest Suites: 1 failed, 1 total\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/a.test.js", 1)
        );
    }

    #[test]
    fn node_syntax_error_and_missing_module() {
        let log = "/home/runner/work/R/R/src/index.js:3\n  const x = ;\n            ^\n\nSyntaxError: Unexpected token ';'\n    at wrapSafe (node:internal/modules/cjs/loader:1378:20)\nError: Cannot find module 'lodash'\nRequire stack:\n- /home/runner/work/R/R/src/app.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n    at Object.<anonymous> (/home/runner/work/R/R/src/app.js:1:1)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Syntax);
        assert_eq!(r[0].file_path, "src/index.js");
        assert_eq!(r[1].error_type, BugType::Import);
        assert_eq!(r[1].file_path, "src/app.js");
    }

    #[test]
    fn traces_a_passing_mocha_run_logged_are_taken_back_by_its_summary() {
        // Ghost's logger prints a caught error with its stack while mocha's dot reporter runs;
        // the run's real failure is the one under `N failing`.
        let log = "..[2025-04-15 04:32:57] ERROR Fail to fetch tier\n\nError: Fail to fetch tier\n    at Context.<anonymous> (/home/runner/work/G/G/ghost/members-api/test/router.test.js:232:52)\n    at callFn (/home/runner/work/G/G/node_modules/mocha/lib/runnable.js:364:21)\n\n  58 passing (444ms)\n  1 failing\n\n  1) Helpers\n       should load:\n     AssertionError: expected 1 to equal 0\n      at Context.<anonymous> (test/unit/helpers.test.js:33:57)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "test/unit/helpers.test.js");
        // Without mocha's summary the trace is an uncaught error: it stays.
        let crash = "Error: Fail to fetch tier\n    at main (/home/runner/work/G/G/scripts/build.js:9:5)\n\nNode.js v20.1.0\n";
        let r = parse_str(crash, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "scripts/build.js");
    }

    // The lines below are copied from real Travis logs of the corpus (fixtures/corpus/real/
    // javascript/pyjs-travis-*), shortened where a test needs only a few of them.

    #[test]
    fn wails_builds_its_frontend_in_the_frontend_directory() {
        // xssnick/TON-Torrent (fresh12): `wails build` runs `tsc && vite build` in `frontend/`.
        let log = "# Building target: linux/amd64\n\n  \u{2022} Generating bindings: \nDone.\n  \u{2022} Installing frontend dependencies: \nDone.\n  \u{2022} Compiling frontend: \n    \n    > frontend@0.0.0 build\n    > tsc && vite build\n    \n    src/components/ModalAddTorrent.tsx(63,9): error TS2322: Type 'Timer' is not assignable to type 'number'.\n  ERROR   exit status 2\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("frontend/src/components/ModalAddTorrent.tsx", 63)
        );
        // Outside that step (another step, or after its `Done.`), tsc's paths are left as printed.
        for before in [
            "  \u{2022} Generating bindings: \n",
            "  \u{2022} Compiling frontend: \nDone.\n",
        ] {
            let r = parse_str(
                &format!(
                    "{before}src/components/ModalAddTorrent.tsx(63,9): error TS2322: Type 'Timer' is not assignable to type 'number'.\n"
                ),
                &ParseOptions::default(),
            );
            assert_eq!(
                r[0].file_path, "src/components/ModalAddTorrent.tsx",
                "{before}"
            );
        }
    }

    #[test]
    fn tests_compiled_into_out_are_no_frame_to_point_at() {
        // rcjsuen/dockerfile-language-server (fresh12): `mocha out/test` runs tsc's output; the
        // line to change is in `test/server.test.ts`, which the trace does not name.
        let log = "  1 failing\n\n  1) Dockerfile LSP Tests issue #218:\n      Uncaught AssertionError [ERR_ASSERTION]: 0 == 1\n      + expected - actual\n\n      -0\n      +1\n      \n      at ChildProcess.listener218 (out/test/server.test.js:345:28)\n      at emit (internal/child_process.js:772:12)\n      at _combinedTickCallback (internal/process/next_tick.js:141:11)\n      at process._tickCallback (internal/process/next_tick.js:180:9)\n\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn a_bundle_built_into_dist_is_no_frame_to_point_at() {
        // lozad's Travis job: mocha tests the minified build.
        let log = "  3 failing\n\n  1) lozad\n       picture inside viewport with different class\n         should load the picture:\n     TypeError: element.append is not a function\n      at load (dist/lozad.js:7:898)\n      at Object.observe (dist/lozad.js:8:4430)\n      at Context.it (test/index.js:302:16)\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("test/index.js", 302)
        );
        assert!(super::in_dist("packages/core/dist/index.js"));
        assert!(!super::in_dist("src/dist.js"));
        assert!(!super::in_dist("dist"));
        assert!(super::in_dist("out/test/server.test.js"));
        assert!(super::in_dist(
            "extensions/vscode-api-tests/out/singlefolder-tests/window.test.js"
        ));
        assert!(!super::in_dist("src/out.js"));
        assert!(!super::in_dist("test/outline.test.js"));
    }

    #[test]
    fn frames_of_a_minified_bundle_give_way_to_the_tests() {
        // pixi.js (Travis): mocha runs against each package's rollup build in `lib/`; the
        // first frame's column shows the file is a bundle, so its later frames (short columns)
        // are passed over too and the test's line is reported.
        let log = "  1 failing\n\n  1) PIXI.systems.MaskSystem\n       should apply scissor:\n     TypeError: Failed to execute 'deleteRenderbuffer'\n      at FramebufferSystem.disposeFramebuffer (/home/travis/build/pixijs/pixi.js/packages/core/lib/core.js:2010:1189)\n      at Runner.emit (/home/travis/build/pixijs/pixi.js/packages/runner/lib/runner.js:57:578)\n      at BaseRenderTexture.destroy (/home/travis/build/pixijs/pixi.js/packages/core/lib/core.js:528:30)\n      at Context.<anonymous> (/home/travis/build/pixijs/pixi.js/packages/core/test/MaskSystem.js:134:12)\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("packages/core/test/MaskSystem.js", 134)
        );
        // A hand-written source line keeps its frame.
        let src = log.replace("core.js:2010:1189", "core.js:2010:11");
        let r = parse_str(&src, &ParseOptions::default());
        assert_eq!(r[0].file_path, "packages/core/lib/core.js");
    }

    #[test]
    fn mocha_multi_line_titles_name_the_test() {
        let log = "  65843 passing (11m)\n  5 failing\n\n  1) \n       \n         unittests:: Reuse program structure:: General\n           fails if change affects tripleslash references:\n     AssertionError: expected 1 to equal 2\n      at Context.<anonymous> (src/testRunner/unittests/reuseProgramStructure.ts:259:20)\n      at processImmediate (internal/timers.js:439:21)\n\n  2) \n       \n         unittests:: Reuse program structure:: General\n           fails if change affects imports:\n     AssertionError: expected 1 to equal 2\n      at Context.<anonymous> (src/testRunner/unittests/reuseProgramStructure.ts:279:20)\n      at processImmediate (internal/timers.js:439:21)\n\n\n\n[00:04:30] 'runTestsParallel' errored after 11 min\n[00:04:30] Error: Process exited with code: 5\n    at ChildProcess.<anonymous> (/home/travis/build/microsoft/TypeScript/scripts/build/utils.js:52:24)\n    at ChildProcess.emit (events.js:203:13)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].line_number, 259);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some(
                "unittests:: Reuse program structure:: General fails if change affects tripleslash references"
            )
        );
        assert_eq!(r[1].line_number, 279);
        assert_eq!(r[0].tool.as_deref(), Some("mocha"));
    }

    #[test]
    fn a_mocha_list_pasted_below_its_failing_count_still_names_the_test() {
        // dotcloud/hipache's Travis paste (fresh14) starts at the entry, `N failing` cut off.
        let log = "  1) Logger #legit logging legit data:\n     Uncaught AssertionError: expected undefined to deeply equal '::1 - - [16/Feb/2014:00:43:10 +0000] \"GET / HTTP/1.1\" 200 3236 \"\" \"curl/7.30.0\" \"mywebsite\" 0.011 0.009\\n'\n      at /home/travis/build/dotcloud/hipache/test/unit/logger.js:114:37\n      at fs.js:207:20\n      at OpenReq.Req.done (/home/travis/build/dotcloud/hipache/node_modules/mocha/node_modules/glob/node_modules/graceful-fs/graceful-fs.js:143:5)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "test/unit/logger.js");
        assert_eq!(r[0].line_number, 114);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Logger #legit logging legit data")
        );
        // The header alone, or a numbered step with no error under it, opens nothing.
        assert!(!super::is_mocha_error_line("package.json did not match"));
        assert!(super::is_mocha_error_line(
            "AssertionError: expected 1 to equal 2"
        ));
        let steps = "  1) Install the dependencies:\n     npm ci\n      at /home/travis/build/dotcloud/hipache/test/unit/logger.js:114:37\n";
        let r = parse_str(steps, &ParseOptions::default());
        assert!(r.iter().all(|r| r.test_name.is_none()), "{r:?}");
    }

    #[test]
    fn mocha_source_mapped_frames_and_nl_prefixed_lines() {
        let log = "  24 failing\n\n  1) commands namespace tests editorCommand with extra args:\n     Error: Failed to show text document file:///home/travis/build/Microsoft/vscode/extensions/vscode-api-tests/testWorkspace/far.js, should show in editor #undefined\n      at out/vs/workbench/api/node/file:/home/travis/build/Microsoft/vscode/src/vs/workbench/api/node/extHostTextEditors.ts:86:11\n      at Object.notifySuccess [as _notify] (out/vs/base/common/winjs.base.js:1185:59)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "src/vs/workbench/api/node/extHostTextEditors.ts"
        );
        assert_eq!(r[0].line_number, 86);
        let log = "\u{1b}[31m  1 failing\u{1b}[0m\nnl\nnl\u{1b}[0m  1) window namespace tests issue #25801 - default column when opening a file:\nnl\nnl      \u{1b}[31mAssertionError: wanted fileName:/var/folders/bb/T/dkwnjrjb/viewColumn:1 but got fileName:/var/folders/bb/T/goslwd/viewColumn:2.\n\n      at Object.<anonymous> (extensions/vscode-api-tests/src/singlefolder-tests/window.test.ts:137:10)\n\n      at step (extensions/vscode-api-tests/out/singlefolder-tests/window.test.js:36:23)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 137);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("window namespace tests issue #25801 - default column when opening a file")
        );
        assert!(
            r[0].message.starts_with("AssertionError"),
            "{}",
            r[0].message
        );
    }

    #[test]
    fn node_core_frames_without_prefix_are_not_the_repository() {
        assert!(super::is_node_internal("internal/process/next_tick.js"));
        assert!(super::is_node_internal("events.js"));
        assert!(!super::is_node_internal("test/events.js"));
        assert!(!super::is_node_internal("index.js"));
        let log = "  1 failing\n\n  1) Check challenges\n       Check challenges (english)\n             Solution 1:\n     TypeError: Cannot read property 'message' of undefined\n      at process._tickCallback (internal/process/next_tick.js:68:7)\n      at /home/travis/build/freeCodeCamp/freeCodeCamp/curriculum/test/test-challenges.js:320:15\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "curriculum/test/test-challenges.js");
    }

    #[test]
    fn bare_project_module_frames_are_the_repository() {
        // cyberagiinc/DevDocs#30: `next build` loads the config relative to the project root;
        // Node's own bare frames (`module.js:325`) stay out.
        let log = "0.874 ReferenceError: config is not defined\n0.874     at <unknown> (next.config.mjs:1:1)\n\nTypeError: x is not a function\n    at Object.<anonymous> (module.js:325:32)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("next.config.mjs", 1, BugType::Logic)
        );
    }

    #[test]
    fn npm_script_cd_rebases_relative_frames() {
        let log = "  1 failing\n\n  1) Check challenges\n             Solution 1:\n     Error: the string \"<code>rangeOfNumbers(1, 5)</code>\"\n      at Runner.Mocha.Runner.fail (test/test-challenges.js:65:24)\n      at process._tickCallback (internal/process/next_tick.js:68:7)\n\nnpm ERR! @freecodecamp/freecodecamp@0.0.1 test:curriculum: `cd ./curriculum && npm test && cd ../`\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "curriculum/test/test-challenges.js");
        assert_eq!(r[0].line_number, 65);
    }

    #[test]
    fn jasmine_failures_list() {
        let log = "Failures:\n1) NgPackagesInstaller installLocalDependencies() when there is no local package marker should overwrite package.json with modified config\n  Message:\n    Expected spy writeFileSync to have been called with [ '/home/travis/build/angular/angular/aio/root/dir/package.json' ].\n  Stack:\n    Error: Expected spy writeFileSync to have been called.\n        at UserContext.it (/home/travis/build/angular/angular/aio/tools/ng-packages-installer/index.spec.js:216:34)\n\n25 specs, 3 failures\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "aio/tools/ng-packages-installer/index.spec.js"
        );
        assert_eq!(r[0].line_number, 216);
        assert!(
            r[0].test_name
                .as_deref()
                .unwrap()
                .ends_with("with modified config")
        );
    }

    #[test]
    fn tape_names_the_assertion_by_its_test() {
        let log = "TAP version 13\n# passes a good component\nok 5 no parsing errors\nnot ok 6 no errors\n  ---\n    operator: notOk\n    expected: false\n    actual:   1\n    at: Test.<anonymous> (/home/travis/build/airbnb/javascript/packages/eslint-config-airbnb/test/test-react-order.js:57:7)\n    stack: |-\n      Error: no errors\n          at Test.assert [as _assert] (/home/travis/build/airbnb/javascript/packages/eslint-config-airbnb/node_modules/tape/lib/test.js:225:54)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 57);
        assert_eq!(r[0].test_name.as_deref(), Some("passes a good component"));
        assert_eq!(r[0].message, "no errors");
    }

    #[test]
    fn tslint_prose() {
        let log = "/home/travis/build/microsoft/TypeScript/src/compiler/checker.ts\nERROR: /home/travis/build/microsoft/TypeScript/src/compiler/checker.ts:20269:48 boolean-trivia Tag argument with parameter name\n[16:21:57] 'lintOne' errored after 36 s\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "src/compiler/checker.ts");
        assert_eq!(r[0].rule.as_deref(), Some("boolean-trivia"));
        assert_eq!(r[0].error_type, BugType::Linting);
    }

    #[test]
    fn stylelint_both_formats_and_wrapped_messages() {
        let log = "> stylelint *.css\n\n\nnormalize.css\n   4:1  \u{2716}  Expected no more than 1 empty       max-empty-lines                 \n           line(s)                                                             \n 506:1  \u{2716}  Unexpected missing end-of-source    no-missing-end-of-source-newline\n           newline\n\nnpm ERR! Test failed.  See above for more details.\n\nnormalize.css\n429:1\tUnexpected missing newline at end of file (no-missing-eof-newline)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(
            (r[0].line_number, r[0].rule.as_deref()),
            (4, Some("max-empty-lines"))
        );
        assert_eq!(r[1].line_number, 506);
        assert_eq!(r[2].rule.as_deref(), Some("no-missing-eof-newline"));
    }

    #[test]
    fn stylesheet_compilers() {
        let log = "Error: Undefined variable: \"$dropdown-divider-background-color-dark\".\n        on line 98 of sass/components/dropdown.sass\n        from line 5 of sass/components/_all.sass\n  Use --trace for backtrace.\nCssSyntaxError: /home/travis/build/necolas/normalize.css/normalize.css:11:3: Unknown word\n    at Input.error (/home/travis/build/necolas/normalize.css/node_modules/postcss/lib/input.js:61:22)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "sass/components/dropdown.sass");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("normalize.css", 11)
        );
        assert_eq!(r[1].error_type, BugType::Syntax);
    }

    #[test]
    fn coffeescript_compile_errors_and_placeholder_frames() {
        let log = "\u{1b}[0;31m  test/numbers_bigint.coffee:8:25: error: unexpected identifier\r\n  eq 'bigint', typeof 42n\n                        ^\n  AST as expected for NullLiteral node \n  AssertionError: Property type: expected e to equal NullLiteral\n    at exports.eq (/home/travis/build/jashkenas/coffeescript/test/support/helpers.coffee:1:1)\n    at global.test (/home/travis/build/jashkenas/coffeescript/Cakefile:538:21)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "test/numbers_bigint.coffee");
        assert_eq!(r[0].error_type, BugType::Syntax);
    }

    #[test]
    fn standard_engine_rows_under_its_banner() {
        // LogChunks git-it-electron (Travis): standard 8 without rule names, a parse error, and
        // standard 14's `--fix` hint with `--verbose` rule names; the banner's own lines keep the
        // block open, the next unindented line ends it.
        let log = "standard: Use JavaScript Standard Style (https://github.com/feross/standard) \r\n  /home/travis/build/jlord/git-it-electron/lib/build-challenges.js:178:40: A space is required after ','.\r\n  /home/travis/build/jlord/git-it-electron/lib/locale.js:17:4: Parsing error: Unexpected string\r\nnpm ERR! Test failed.  See above for more details.\n  lib/after.js:1:1: not a row any more\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(
            got,
            [
                ("lib/build-challenges.js", 178, BugType::Linting),
                ("lib/locale.js", 17, BugType::Syntax)
            ]
        );
        let log = "ts-standard: Use TypeScript Standard Style (https://github.com/standard/ts-standard)\nts-standard: Run `ts-standard --fix` to automatically fix some problems.\n  /app/src/index.ts:3:7: 'x' is assigned a value but never used. (@typescript-eslint/no-unused-vars)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "src/index.ts");
        assert_eq!(
            r[0].rule.as_deref(),
            Some("@typescript-eslint/no-unused-vars")
        );
        // standard's README (standard/standard): the banner before standard 8.
        let log = "$ standard\nError: Use JavaScript Standard Style\n  lib/torrent.js:950:11: Expected '===' and instead saw '=='.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/torrent.js", 950)
        );
        // standardrb's rows are RuboCop's (its matcher names the cop).
        let log = "standard: Use Ruby Standard Style (https://github.com/testdouble/standard)\n  app/models/order.rb:45:5: Style/TrailingCommaInHashLiteral: Put a comma after the last item of a multiline hash.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].rule.as_deref(),
            Some("Style/TrailingCommaInHashLiteral")
        );
    }

    #[test]
    fn lint_script_path_line_rule() {
        let log = "src/grammar-registry.js:1 Strings must use singlequote. (quotes)\nsrc/grammar-registry.js:636 Insert `;` (prettier/prettier)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[1].rule.as_deref(), Some("prettier/prettier"));
        assert_eq!(r[1].line_number, 636);
    }

    // Vitest's and Jest's own output as their test suites keep it (quoted snapshot strings).
    #[test]
    fn vitest_typecheck_and_shared_errors() {
        let log = "\" FAIL  fail.test-d.ts:9 > nested suite > nested 2 > failing test 2\nTypeCheckError: This expression is not callable. Type 'ExpectVoid<number>' has no call signatures.\n ❯ fail.test-d.ts:10:23\n      8|   describe('nested 2', () => {\n     10|       expectTypeOf(1).toBeVoid()\n       |                       ^\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("nested suite > nested 2 > failing test 2")
        );
        let log = " FAIL  basic.test.ts > test-b 1\n FAIL  basic.test.ts > test-b 2\nAssertionError: expected 1 to be +0 // Object.is equality\n ❯ basic.test.ts:10:13\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].test_name.as_deref(), Some("test-b 1"));
    }

    #[test]
    fn jest_frame_closing_a_quoted_block() {
        let log = "\"FAIL __tests__/assertionCount.test.js\n  ● .hasAssertions() › throws when there are not assertions\n\n    expect.hasAssertions()\n\n    > 26 |   expect.hasAssertions();\n         |          ^\n\n      at Object.hasAssertions (__tests__/assertionCount.test.js:26:10)\"\n`;\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 26);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some(".hasAssertions() › throws when there are not assertions")
        );
    }

    // `vitest list` collection errors (vitest-dev/vitest test/e2e/test/__snapshots__/list.test.ts.snap).
    #[test]
    fn eslint_watch_simple_detail_rows() {
        // coryhouse/javascript-development-environment#2 (fresh13), the file under a runner's
        // checkout: the `✖` error is reported, the `!` warning is not.
        let log = "D:\\a\\R\\R\\src\\index.js (1/1)\n  \u{2716}  5:1  Unexpected 'debugger' statement  no-debugger\n  !  6:1  Unexpected console statement     no-console\n\n\u{2716} 1 error ! 1 warning (11:27:15 PM)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/index.js", 5)
        );
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[0].rule.as_deref(), Some("no-debugger"));
        // A warning-only file.
        let log = "/home/runner/work/R/R/src/a.js (0/1)\n  !  6:1  Unexpected console statement     no-console\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn vitest_paths_are_relative_to_the_root_its_banner_names() {
        // vuetify's `vitest --project unit` (former fresh10) runs in `packages/vuetify/src`.
        let log = "> vuetify@3.9.5 test /app/packages/vuetify\n> vitest --project unit\n\n\n RUN  v3.1.1 /app/packages/vuetify/src\n FAIL  |unit| composables/date/__tests__/date.spec.ts > VuetifyDateAdapter > should correctly calculate weeks between years\nAssertionError: expected 52 to be 1 // Object.is equality\n\n- Expected\n+ Received\n\n- 1\n+ 52\n\n ❯ composables/date/__tests__/date.spec.ts:32:53\n     30|\n     31|     expect(adapter.getWeek(new Date('2024-12-28'))).toBe(52)\n     32|     expect(adapter.getWeek(new Date('2024-12-29'))).toBe(1)\n       |                                                     ^\n     33|     expect(adapter.getWeek(new Date('2024-12-30'))).toBe(1)\n     34|     expect(adapter.getWeek(new Date('2024-12-31'))).toBe(1)\n\n⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/4]⎯\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "packages/vuetify/src/composables/date/__tests__/date.spec.ts",
                32
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("VuetifyDateAdapter > should correctly calculate weeks between years")
        );
    }

    #[test]
    fn playwright_headers_quoted_in_a_jest_value_open_no_block() {
        // lexical's integration test (former fresh10) compares a fixture's `playwright test` run
        // with `toBe(null)`; Jest prints the run's output as the received value.
        let log = "FAIL integration scripts/__tests__/integration/prepare-release.test.js (295.963 s)\n  ● scripts/__tests__/integration/fixtures/lexical-esm-sveltekit-vanilla-js › tests pass\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: null\n    Received: {\"code\": 1, \"stderr\": \"\", \"stdout\": \"\n    > lexical-sveltekit-vanilla-js@0.35.0 test\n    > playwright test··\n    Running 2 tests using 1 worker·\n      ✘  1 tests/test.ts:11:1 › index page has expected h1 and lexical state (11ms)\n      ✘  2 tests/test.ts:21:1 › lexical editor has an accessible numeric version (11ms)··\n      1) tests/test.ts:11:1 › index page has expected h1 and lexical state ─────────────────────────────·\n        Error: browserType.launch:·\n        ║ Host system is missing dependencies to run browsers. ║\n      2) tests/test.ts:21:1 › lexical editor has an accessible numeric version ─────────────────────────·\n        Error: browserType.launch:·\n        ║ Host system is missing dependencies to run browsers. ║\n      51 |         ['code', 'stdout', 'stderr'].map((prop) => [prop, err[prop]]),\n      52 |       ),\n    > 53 |     ).toBe(null);\n         |       ^\n      54 |     throw err;\n      55 |   });\n      56 | }\n\n      at toBe (scripts/__tests__/integration/utils.js:53:7)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("scripts/__tests__/integration/utils.js", 53)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some(
                "scripts/__tests__/integration/fixtures/lexical-esm-sveltekit-vanilla-js \u{203a} tests pass"
            )
        );
    }

    #[test]
    fn vitest_errors_outside_fail_blocks() {
        let log = "\"Error: describe error\n ❯ describe-error.test.ts:4:9\n      2|\n      4|   throw new Error('describe error')\n       |         ^\n\nError: top level error\n ❯ top-level-error.test.ts:1:7\n      1| throw new Error('top level error')\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("describe-error.test.ts", 4)
        );
        assert_eq!(r[1].message, "Error: top level error");
    }

    // Jest's console blocks (jestjs/jest e2e/__tests__/__snapshots__/jest.config.ts.test.ts.snap).
    #[test]
    fn jest_frames_relative_to_a_projects_root_dir_join_the_suites_directory() {
        // kiwicom/orbit's Actions job 357124468: the `docs` project's frames are relative to
        // `docs/`, its suite headers to the repository; a dependency Jest could not parse is
        // named under `Details:`.
        let log = "FAIL docs/src/components/ComponentStructure/__tests__/index.test.tsx (125.901 s)\n  \u{25cf} ComponentStructure \u{203a} should have expected DOM\n\n    TypeError: expect(...).toHaveAttribute is not a function\n\n    > 34 |     expect(tabWeb).toHaveAttribute(\"tabindex\", \"0\");\n         |                    ^\n\n      at Object.<anonymous> (src/components/ComponentStructure/__tests__/index.test.tsx:34:20)\n\nFAIL docs/src/__tests__/mdx-components.test.tsx\n  \u{25cf} Test suite failed to run\n\n    Jest encountered an unexpected token\n\n    Details:\n\n    /home/runner/work/orbit/orbit/docs/node_modules/uuid/dist/esm-browser/index.js:1\n    ({\"Object.<anonymous>\":function(module,exports,require,__dirname,__filename,jest){export { default as v1 } from './v1.js';\n\n    SyntaxError: Unexpected token 'export'\n\n    > 2 | import { v4 as uuidv4 } from \"uuid\";\n        | ^\n\n      at Runtime.createScriptFromCode (../node_modules/jest-runtime/build/index.js:1796:14)\n      at Object.<anonymous> (src/services/table-of-contents.tsx:2:1)\n\nTest Suites: 2 failed, 2 total\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "docs/src/components/ComponentStructure/__tests__/index.test.tsx",
                    34,
                    BugType::Logic
                ),
                (
                    "docs/src/services/table-of-contents.tsx",
                    2,
                    BugType::Import
                ),
            ]
        );
        assert_eq!(
            super::jest_project_dir("packages/a/src/x.test.js", "packages/a/src/x.js"),
            None
        );
        assert_eq!(super::jest_project_dir("test/x.test.js", "lib/x.js"), None);
        assert_eq!(
            super::jest_project_dir("./web/app/x.test.js", "app/y.js"),
            Some("web")
        );
    }

    #[test]
    fn a_passing_jest_suites_console_and_late_log_blocks_are_no_failures() {
        // kiwicom/orbit's Actions job 357124468: a caught error logged with `console.error`,
        // and a log line after the suite ended, in a suite that passed.
        let log = "PASS docs/services/__tests__/componentStatuses.test.ts\n  \u{25cf} Console\n\n    console.error\n      TypeError: Cannot read properties of undefined (reading 'then')\n          at fetchConfigs (/home/runner/work/orbit/orbit/docs/services/componentStatuses.ts:17:53)\n          at Object.<anonymous> (/home/runner/work/orbit/orbit/docs/services/__tests__/componentStatuses.test.ts:3:1)\n\n      at getData (services/componentStatuses.ts:47:13)\n\n  \u{25cf}  Cannot log after tests are done. Did you forget to wait for something async in your test?\n    Attempted to log \"Component status was updated\".\n\n    > 62 |       .then(() => console.info(\"Component status was updated\"))\n         |                           ^\n\n      at console.info (../node_modules/@jest/console/build/BufferedConsole.js:183:10)\n      at services/componentStatuses.ts:62:27\n\nTest Suites: 1 passed, 1 total\n";
        let r = parse_str(log, &ParseOptions::default());
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn a_console_block_is_not_the_site_of_an_earlier_error() {
        let log = "Error: Jest: Failed to parse the TypeScript config file <<REPLACED>>\n    both with the native node TypeScript support and configured TypeScript loaders.\n\n  console.log\n<<REPLACED>>/jest-config-ts/some/nested/directory\n\n      at Object.<anonymous> (__tests__/a-giraffe.js:3:27)\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }
}
