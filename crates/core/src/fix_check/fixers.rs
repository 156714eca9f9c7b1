//! The built-in deterministic fixers. Each one recognises one kind of error from the report's
//! rule, tool and message, checks that the reported line looks exactly as that error implies, and
//! edits as little as possible — or declines.
//!
//! They must never guess: an import line they cannot parse, an indentation level that is not the
//! unique obvious one, a line that spans several physical lines… all give `None`. They keep the
//! file's line endings, indentation characters and trailing comments.

use super::text::{
    Lang, Line, code_and_tail, dominant_eol, indent_of, is_comment_line, join_lines, lang_of,
    remove_line, split_lines,
};
use super::{DeterministicFixer, FixInput, FixOutput, LINE_WINDOW};
use regex::Regex;
use std::sync::LazyLock;

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex")
}

fn rule_in(input: &FixInput, rules: &[&str]) -> bool {
    input
        .report
        .rule
        .as_deref()
        .is_some_and(|r| rules.iter().any(|x| r.eq_ignore_ascii_case(x)))
}

/// The report's message, falling back to the contract's `error_message`.
fn message(input: &FixInput) -> &str {
    if input.report.message.trim().is_empty() {
        &input.error_message
    } else {
        &input.report.message
    }
}

/// The file's lines and the 0-based index of the reported line, when it exists.
fn target(input: &FixInput) -> Option<(Vec<Line>, usize)> {
    let lines = split_lines(&input.file_content);
    let idx = (input.report.line_number as usize).checked_sub(1)?;
    (idx < lines.len()).then_some((lines, idx))
}

fn output(fixer: &dyn DeterministicFixer, lines: &[Line], reason: String, c: f64) -> FixOutput {
    FixOutput {
        patched_content: join_lines(lines),
        fix_reason: reason,
        confidence_score: c,
        fixer: fixer.name().to_string(),
    }
}

fn norm_ws(s: &str) -> String {
    s.split_whitespace().collect()
}

// ---------------------------------------------------------------------------------------------
// Unused imports
// ---------------------------------------------------------------------------------------------

/// Removes an import the tool says is unused: Python F401 (ruff, flake8), rustc `unused
/// import(s)`, Go `imported and not used` (old and new wordings), ESLint `no-unused-vars` and tsc
/// TS6133/TS6196 when the name is bound by an import. Removes only the unused names of a
/// multi-name import; declines on multi-line forms it cannot see whole, and on imports that must
/// stay although nothing uses their name: ruff's `; consider …` messages (ruff itself offers no
/// fix for those), anything in an `__init__.py` (the package's re-exports), and imports inside a
/// Python `try` statement or a JavaScript `try` block (they test whether a module is installed).
pub struct UnusedImport;

static PY_UNUSED: LazyLock<Regex> =
    LazyLock::new(|| re(r#"[`'"‘]([^`'"’]+)[`'"’] imported but unused"#));
static RS_UNUSED: LazyLock<Regex> = LazyLock::new(|| re(r"^unused imports?: (.+)$"));
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`]+)`"));
static GO_PATH: LazyLock<Regex> = LazyLock::new(|| re(r#""([^"]+)""#));
static GO_ALIAS: LazyLock<Regex> =
    LazyLock::new(|| re(r"imported as (\w+) and not used|not used as (\w+)"));
static JS_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"'([A-Za-z_$][\w$]*)' is (?:defined but never used|assigned a value but never used|declared but (?:its value is )?never (?:read|used))",
    )
});

impl DeterministicFixer for UnusedImport {
    fn name(&self) -> &'static str {
        "unused-import"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        let msg = message(input).trim();
        let (mut lines, idx) = target(input)?;
        let (what, conf) = match lang_of(&input.report.file_path) {
            Lang::Python => {
                if !(rule_in(input, &["F401"]) || msg.contains("imported but unused")) {
                    return None;
                }
                // Ruff adds `; consider …` exactly when it offers no fix itself: an import that
                // tests availability, or a re-export (astral-sh/ruff#3658).
                if msg.contains("; consider ") {
                    return None;
                }
                // flake8 says no more than "imported but unused", so look for those cases too.
                if is_python_init(&input.report.file_path) || python_in_try(&lines, idx) {
                    return None;
                }
                let full = PY_UNUSED.captures(msg)?.get(1)?.as_str();
                let (name, alias) = match full.split_once(" as ") {
                    Some((n, a)) => (n.trim(), Some(a.trim())),
                    None => (full.trim(), None),
                };
                python_unused(&mut lines, idx, name, alias)?;
                (format!("`{full}`"), 0.95)
            }
            Lang::Rust => {
                let list = RS_UNUSED.captures(msg)?.get(1)?.as_str();
                let names: Vec<&str> = BACKTICKED
                    .captures_iter(list)
                    .filter_map(|c| c.get(1).map(|m| m.as_str()))
                    .collect();
                if names.is_empty() {
                    return None;
                }
                rust_unused(&mut lines, idx, &names)?;
                (
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    0.95,
                )
            }
            Lang::Go => {
                if !(msg.contains("imported and not used") || msg.contains("imported but not used"))
                {
                    return None;
                }
                let path = GO_PATH.captures(msg)?.get(1)?.as_str();
                let alias = GO_ALIAS
                    .captures(msg)
                    .and_then(|c| c.get(1).or(c.get(2)))
                    .map(|m| m.as_str());
                go_unused(&mut lines, idx, path, alias)?;
                (format!("\"{path}\""), 0.95)
            }
            Lang::Js => {
                let by_rule = rule_in(
                    input,
                    &[
                        "no-unused-vars",
                        "@typescript-eslint/no-unused-vars",
                        "unused-imports/no-unused-imports",
                        "TS6133",
                        "TS6196",
                    ],
                );
                let name = JS_NAME.captures(msg)?.get(1)?.as_str();
                if !by_rule && !msg.contains(" but never used") && !msg.contains("never read") {
                    return None;
                }
                // `try { const x = require("m") } catch` tests whether `m` is installed.
                if js_in_try(&lines, idx) {
                    return None;
                }
                js_unused(&mut lines, idx, name)?;
                (format!("`{name}`"), 0.93)
            }
            _ => return None,
        };
        Some(output(
            self,
            &lines,
            format!(
                "Removed the unused import {what} on line {} reported by {}.",
                input.report.line_number,
                input.report.tool.as_deref().unwrap_or("the linter")
            ),
            conf,
        ))
    }
}

static PY_IMPORT_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"^(\s*)import\s+(.+)$"));
static PY_FROM_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\s*)from\s+(\.*[\w.]*)\s+import\s+(.+)$"));
static PY_ITEM: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([A-Za-z_][\w.]*)(?:\s+as\s+([A-Za-z_]\w*))?$"));
static PY_PAREN_ITEM_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*([A-Za-z_]\w*)(?:\s+as\s+([A-Za-z_]\w*))?\s*,?\s*$"));

fn py_join(module: &str, item: &str) -> String {
    if module.ends_with('.') {
        format!("{module}{item}")
    } else {
        format!("{module}.{item}")
    }
}

/// Parses `a, b as c` into `(name, alias)` pairs; `None` on anything else (`*`, parentheses…).
fn py_items(s: &str) -> Option<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    for (i, raw) in s.split(',').enumerate() {
        let t = raw.trim();
        if t.is_empty() {
            // Only a trailing comma inside parentheses may leave an empty item.
            if i > 0 && raw == s.rsplit(',').next().unwrap_or("") {
                continue;
            }
            return None;
        }
        let c = PY_ITEM.captures(t)?;
        out.push((c[1].to_string(), c.get(2).map(|m| m.as_str().to_string())));
    }
    (!out.is_empty()).then_some(out)
}

fn py_render_items(items: &[(String, Option<String>)]) -> String {
    items
        .iter()
        .map(|(n, a)| match a {
            Some(a) => format!("{n} as {a}"),
            None => n.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn python_unused(lines: &mut Vec<Line>, idx: usize, name: &str, alias: Option<&str>) -> Option<()> {
    let (code, tail) = code_and_tail(&lines[idx].text, Lang::Python);
    let (code, tail) = (code.to_string(), tail.to_string());
    if code.contains(';') || code.ends_with('\\') {
        return None;
    }
    let matches =
        |full: &str, a: &Option<String>| full == name && (alias.is_none() || a.as_deref() == alias);

    if let Some(c) = PY_FROM_LINE.captures(&code) {
        let (indent, module, rest) = (&c[1], &c[2], c[3].trim());
        let (inner, parens) = match rest.strip_prefix('(') {
            Some(r) => (r.strip_suffix(')')?, true),
            None => (rest, false),
        };
        let mut items = py_items(inner)?;
        let hit: Vec<usize> = (0..items.len())
            .filter(|&i| matches(&py_join(module, &items[i].0), &items[i].1))
            .collect();
        if hit.len() != 1 {
            return None;
        }
        items.remove(hit[0]);
        if items.is_empty() {
            return python_remove_statement(lines, idx);
        }
        let list = py_render_items(&items);
        let list = if parens { format!("({list})") } else { list };
        lines[idx].text = format!("{indent}from {module} import {list}{tail}");
        return Some(());
    }
    if let Some(c) = PY_IMPORT_LINE.captures(&code) {
        let indent = c[1].to_string();
        let mut items = py_items(c[2].trim())?;
        let hit: Vec<usize> = (0..items.len())
            .filter(|&i| matches(&items[i].0, &items[i].1))
            .collect();
        if hit.len() != 1 {
            return None;
        }
        items.remove(hit[0]);
        if items.is_empty() {
            return python_remove_statement(lines, idx);
        }
        lines[idx].text = format!("{indent}import {}{tail}", py_render_items(&items));
        return Some(());
    }
    // One name alone on its line inside `from m import (` … `)`.
    let c = PY_PAREN_ITEM_LINE.captures(&code)?;
    let item = (c[1].to_string(), c.get(2).map(|m| m.as_str().to_string()));
    let mut open = None;
    for k in (0..idx).rev() {
        let (code, _) = code_and_tail(&lines[k].text, Lang::Python);
        if code.trim().is_empty() || PY_PAREN_ITEM_LINE.is_match(code) {
            continue;
        }
        let h = PY_FROM_LINE.captures(code)?;
        (h[3].trim() == "(").then_some(())?;
        open = Some((k, h[2].to_string()));
        break;
    }
    let (open, module) = open?;
    if !matches(&py_join(&module, &item.0), &item.1) {
        return None;
    }
    let mut others = 0;
    let mut close = None;
    for (k, line) in lines.iter().enumerate().skip(open + 1) {
        let (code, _) = code_and_tail(&line.text, Lang::Python);
        if code.trim() == ")" {
            close = Some(k);
            break;
        }
        if code.trim().is_empty() {
            continue;
        }
        PY_PAREN_ITEM_LINE.is_match(code).then_some(())?;
        if k != idx {
            others += 1;
        }
    }
    close?;
    if others == 0 {
        return None;
    }
    remove_line(lines, idx);
    Some(())
}

/// `__init__.py` (or its stub): an import there is the package's public API, unused or not.
fn is_python_init(path: &str) -> bool {
    matches!(
        path.rsplit('/').next(),
        Some("__init__.py" | "__init__.pyi")
    )
}

/// Whether a Python line starts with `keyword` as a whole word.
fn py_keyword(code: &str, keyword: &str) -> bool {
    code.strip_prefix(keyword)
        .is_some_and(|rest| rest.starts_with([':', ' ', '\t', '*', '(']))
}

/// Whether line `idx` sits anywhere in a `try` statement (its body, a handler, its `else` or
/// `finally`), at any depth. Removing an import there changes which exceptions the block can
/// raise, and so what the program does (`HAS_NUMPY = True` after `import numpy`). Any handler
/// counts, not only `except ImportError`: `except Exception` and a bare `except` catch it too.
/// `true` when the file's structure cannot be read: never guess.
fn python_in_try(lines: &[Line], idx: usize) -> bool {
    let Some(scan) = scan_python(lines) else {
        return true;
    };
    let significant = |k: usize| {
        scan[k].logical_start
            && !lines[k].text.trim().is_empty()
            && !is_comment_line(&lines[k].text, Lang::Python)
    };
    let mut indent = indent_of(&lines[idx].text).len();
    for k in (0..idx).rev() {
        if indent == 0 {
            break;
        }
        if !significant(k) || indent_of(&lines[k].text).len() >= indent {
            continue;
        }
        // An enclosing block's header.
        indent = indent_of(&lines[k].text).len();
        let (code, _) = code_and_tail(&lines[k].text, Lang::Python);
        let head = code.trim_start();
        if ["try", "except", "finally"]
            .iter()
            .any(|kw| py_keyword(head, kw))
        {
            return true;
        }
        if py_keyword(head, "else") {
            // Whose `else`: the nearest earlier header at the same depth.
            let owner = (0..k)
                .rev()
                .filter(|&j| significant(j))
                .find(|&j| indent_of(&lines[j].text).len() <= indent);
            match owner {
                Some(j) if indent_of(&lines[j].text).len() == indent => {
                    let (c, _) = code_and_tail(&lines[j].text, Lang::Python);
                    if py_keyword(c.trim_start(), "except") || py_keyword(c.trim_start(), "try") {
                        return true;
                    }
                }
                _ => return true,
            }
        }
    }
    false
}

static JS_TRY_OPEN: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[^\w$.])try\s*$"));

/// Whether line `idx` of a JavaScript file sits inside a `try { … }` block, at any depth: the
/// braces of the lines above are counted (comments left out) and each still-open `{` is checked
/// for a `try` before it, on its line or the line before.
fn js_in_try(lines: &[Line], idx: usize) -> bool {
    let mut depth: usize = 0;
    for k in (0..idx).rev() {
        let (code, _) = code_and_tail(&lines[k].text, Lang::Js);
        for (i, c) in code.char_indices().rev() {
            match c {
                '}' => depth += 1,
                '{' if depth > 0 => depth -= 1,
                '{' => {
                    let before = code[..i].trim_end();
                    let before = if before.is_empty() && k > 0 {
                        code_and_tail(&lines[k - 1].text, Lang::Js).0
                    } else {
                        before
                    };
                    if JS_TRY_OPEN.is_match(before) {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// Removes a whole Python statement line, unless that would leave a block (`try:`, `if
/// TYPE_CHECKING:`…) without a body.
fn python_remove_statement(lines: &mut Vec<Line>, idx: usize) -> Option<()> {
    let significant =
        |l: &Line| !l.text.trim().is_empty() && !is_comment_line(&l.text, Lang::Python);
    let prev = lines[..idx].iter().rev().find(|l| significant(l));
    let next = lines[idx + 1..].iter().find(|l| significant(l));
    let own = indent_of(&lines[idx].text).len();
    if let Some(p) = prev {
        let (code, _) = code_and_tail(&p.text, Lang::Python);
        let next_indent = next.map(|n| indent_of(&n.text).len()).unwrap_or(0);
        if code.ends_with(':') && next_indent < own {
            return None;
        }
    }
    remove_line(lines, idx);
    Some(())
}

static RS_USE_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\s*)((?:pub(?:\([^)]*\))?\s+)?use\s+)(.+);$"));
static RS_GROUP: LazyLock<Regex> = LazyLock::new(|| re(r"^([\w:]*::)\{([^{}]*)\}$"));

fn rust_unused(lines: &mut Vec<Line>, idx: usize, names: &[&str]) -> Option<()> {
    let (code, tail) = code_and_tail(&lines[idx].text, Lang::Rust);
    let c = RS_USE_LINE.captures(code)?;
    let (indent, head, tree) = (c[1].to_string(), c[2].to_string(), c[3].trim().to_string());
    let tail = tail.to_string();
    let remove_whole = |lines: &mut Vec<Line>| {
        // An attribute right above would silently move onto the next item.
        if idx > 0 && lines[idx - 1].text.trim_start().starts_with("#[") {
            return None;
        }
        remove_line(lines, idx);
        Some(())
    };
    if !tree.contains('{') {
        return if names.len() == 1 && norm_ws(&tree) == norm_ws(names[0]) {
            remove_whole(lines)
        } else {
            None
        };
    }
    let g = RS_GROUP.captures(&tree)?;
    let prefix = g[1].to_string();
    let mut items: Vec<String> = g[2]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for name in names {
        let hit: Vec<usize> = (0..items.len())
            .filter(|&i| norm_ws(&items[i]) == norm_ws(name))
            .collect();
        if hit.len() != 1 {
            return None;
        }
        items.remove(hit[0]);
    }
    let new_tree = match items.as_slice() {
        [] => return remove_whole(lines),
        [one] if one != "self" && !one.contains('{') => format!("{prefix}{one}"),
        many => format!("{prefix}{{{}}}", many.join(", ")),
    };
    lines[idx].text = format!("{indent}{head}{new_tree};{tail}");
    Some(())
}

static GO_SINGLE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"^\s*import\s+(?:([A-Za-z_]\w*|\.)\s+)?"([^"]+)"$"#));
static GO_SPEC: LazyLock<Regex> =
    LazyLock::new(|| re(r#"^\s*(?:([A-Za-z_]\w*|\.)\s+)?"([^"]+)"$"#));

fn go_unused(lines: &mut Vec<Line>, idx: usize, path: &str, alias: Option<&str>) -> Option<()> {
    let (code, _) = code_and_tail(&lines[idx].text, Lang::Go);
    let ok = |c: regex::Captures<'_>| {
        c[2] == *path && (alias.is_none() || c.get(1).map(|m| m.as_str()) == alias)
    };
    if let Some(c) = GO_SINGLE.captures(code) {
        ok(c).then_some(())?;
    } else {
        let c = GO_SPEC.captures(code)?;
        ok(c).then_some(())?;
        // Must sit inside an `import (` block: only specs, blanks and comments in between.
        let mut inside = false;
        for k in (0..idx).rev() {
            let (code, _) = code_and_tail(&lines[k].text, Lang::Go);
            let t = code.trim();
            if t.is_empty() || GO_SPEC.is_match(t) {
                continue;
            }
            inside = t == "import (";
            break;
        }
        inside.then_some(())?;
    }
    remove_line(lines, idx);
    Some(())
}

static JS_IMPORT_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"^(\s*)import\s+(type\s+)?(.+?)\s+from\s+(['"][^'"]+['"])(\s*;)?$"#));

fn js_local(spec: &str) -> &str {
    let s = spec.trim();
    let s = s.strip_prefix("type ").map(str::trim).unwrap_or(s);
    match s.rsplit_once(" as ") {
        Some((_, local)) => local.trim(),
        None => s,
    }
}

static JS_REQUIRE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(\s*)(const|let|var)\s+(\{[^{}]*\}|[A-Za-z_$][\w$]*)\s*=\s*(require\(\s*['"][^'"]+['"]\s*\))(\s*;)?$"#,
    )
});

/// `const x = require("m")` and `const { a, b } = require("m")`: CommonJS imports.
fn js_unused_require(lines: &mut Vec<Line>, idx: usize, name: &str) -> Option<()> {
    let (code, tail) = code_and_tail(&lines[idx].text, Lang::Js);
    let c = JS_REQUIRE_LINE.captures(code)?;
    let (indent, kw, binding, call) = (&c[1], &c[2], &c[3], &c[4]);
    let semi = c.get(5).map_or("", |m| m.as_str());
    let Some(inner) = binding.strip_prefix('{') else {
        (binding == name).then_some(())?;
        remove_line(lines, idx);
        return Some(());
    };
    let inner = inner.strip_suffix('}')?;
    let mut props: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    // `{ a: b }` binds `b`; defaults (`=`) and rest (`...`) are left to people.
    let local = |p: &str| p.rsplit(':').next().unwrap_or(p).trim().to_string();
    if props
        .iter()
        .any(|p| p.contains('=') || p.starts_with("..."))
    {
        return None;
    }
    if props.iter().filter(|p| local(p) == name).count() != 1 {
        return None;
    }
    props.retain(|p| local(p) != name);
    if props.is_empty() {
        remove_line(lines, idx);
        return Some(());
    }
    let list = props.join(", ");
    let binding = if inner.starts_with(' ') {
        format!("{{ {list} }}")
    } else {
        format!("{{{list}}}")
    };
    lines[idx].text = format!("{indent}{kw} {binding} = {call}{semi}{tail}");
    Some(())
}

fn js_unused(lines: &mut Vec<Line>, idx: usize, name: &str) -> Option<()> {
    let (code, tail) = code_and_tail(&lines[idx].text, Lang::Js);
    if JS_REQUIRE_LINE.is_match(code) {
        return js_unused_require(lines, idx, name);
    }
    let c = JS_IMPORT_LINE.captures(code)?;
    let (indent, kw_type, clause, source) =
        (&c[1], c.get(2).map_or("", |m| m.as_str()), &c[3], &c[4]);
    let semi = c.get(5).map_or("", |m| m.as_str());
    let (head, named) = match clause.find('{') {
        Some(open) => {
            let inner = clause[open + 1..].strip_suffix('}')?;
            if inner.contains(['{', '}']) {
                return None;
            }
            let head = clause[..open].trim().trim_end_matches(',').trim();
            (head, Some(inner))
        }
        None => (clause.trim(), None),
    };
    let mut heads: Vec<&str> = head
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut specs: Vec<&str> = named
        .map(|n| {
            n.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let valid_ident = |s: &str| {
        let l = js_local(s);
        !l.is_empty()
            && l.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if !heads.iter().chain(&specs).all(|s| valid_ident(s)) {
        return None;
    }
    let hits = heads.iter().filter(|s| js_local(s) == name).count()
        + specs.iter().filter(|s| js_local(s) == name).count();
    if hits != 1 {
        return None;
    }
    heads.retain(|s| js_local(s) != name);
    specs.retain(|s| js_local(s) != name);
    if heads.is_empty() && specs.is_empty() {
        remove_line(lines, idx);
        return Some(());
    }
    let mut parts: Vec<String> = heads.iter().map(|s| s.to_string()).collect();
    if !specs.is_empty() {
        let spaced = named.is_some_and(|n| n.starts_with(' '));
        parts.push(if spaced {
            format!("{{ {} }}", specs.join(", "))
        } else {
            format!("{{{}}}", specs.join(", "))
        });
    }
    lines[idx].text = format!(
        "{indent}import {kw_type}{} from {source}{semi}{tail}",
        parts.join(", ")
    );
    Some(())
}

// ---------------------------------------------------------------------------------------------
// Python structure: a scanner good enough to know logical lines and strings
// ---------------------------------------------------------------------------------------------

/// Per physical line: does a logical line start here, and does the line end inside a string?
#[derive(Debug, Clone, Copy, Default)]
struct PyLine {
    logical_start: bool,
    ends_in_string: bool,
    /// Bracket depth is back to zero and no `\` continuation at the end of this line.
    completes: bool,
}

/// Scans Python source for brackets, strings (single, triple, with escapes), comments and
/// backslash continuations. `None` when brackets close more than they open: not a file to edit.
fn scan_python(lines: &[Line]) -> Option<Vec<PyLine>> {
    let mut out = Vec::with_capacity(lines.len());
    let mut depth: i32 = 0;
    let mut string: Option<(char, bool)> = None;
    let mut continued = false;
    for line in lines {
        let mut info = PyLine {
            logical_start: depth == 0 && string.is_none() && !continued,
            ..PyLine::default()
        };
        continued = false;
        let chars: Vec<char> = line.text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match string {
                Some((q, triple)) => {
                    if c == '\\' {
                        i += 1;
                    } else if c == q {
                        if !triple {
                            string = None;
                        } else if chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                            string = None;
                            i += 2;
                        }
                    }
                }
                None => match c {
                    '#' => break,
                    '\'' | '"' => {
                        let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                        string = Some((c, triple));
                        if triple {
                            i += 2;
                        }
                    }
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => {
                        depth -= 1;
                        if depth < 0 {
                            return None;
                        }
                    }
                    '\\' if i + 1 == chars.len() => continued = true,
                    _ => {}
                },
            }
            i += 1;
        }
        if let Some((_, triple)) = string {
            if triple || chars.last() == Some(&'\\') {
                info.ends_in_string = true;
            } else {
                // An unterminated one-line string: Python's error, not ours; don't cascade.
                string = None;
            }
        }
        info.completes = depth == 0 && string.is_none() && !continued;
        out.push(info);
    }
    Some(out)
}

/// The single indentation character the file uses, or `None` when it mixes tabs and spaces.
fn indent_char(lines: &[Line], scan: &[PyLine]) -> Option<char> {
    let (mut tabs, mut spaces) = (false, false);
    for (l, s) in lines.iter().zip(scan) {
        if !s.logical_start {
            continue;
        }
        let ind = indent_of(&l.text);
        tabs |= ind.contains('\t');
        spaces |= ind.contains(' ');
    }
    match (tabs, spaces) {
        (true, true) => None,
        (true, false) => Some('\t'),
        _ => Some(' '),
    }
}

/// The file's indentation step: the smallest positive indentation of a logical line.
fn indent_unit(lines: &[Line], scan: &[PyLine]) -> usize {
    lines
        .iter()
        .zip(scan)
        .filter(|(l, s)| s.logical_start && !l.text.trim().is_empty())
        .map(|(l, _)| indent_of(&l.text).len())
        .filter(|&w| w > 0)
        .min()
        .unwrap_or(4)
}

fn significant_py(line: &Line) -> bool {
    !line.text.trim().is_empty() && !is_comment_line(&line.text, Lang::Python)
}

/// Re-indents one line from its current width to `to` using `ch`; `None` when its leading blanks
/// are not all `ch` or it has fewer than it must lose.
fn reindent(line: &mut Line, delta: isize, ch: char) -> Option<()> {
    if line.text.trim().is_empty() {
        return Some(());
    }
    let ind = indent_of(&line.text);
    if ind.chars().any(|c| c != ch) {
        return None;
    }
    let w = ind.len() as isize + delta;
    if w < 0 {
        return None;
    }
    line.text = format!(
        "{}{}",
        ch.to_string().repeat(w as usize),
        line.text.trim_start()
    );
    Some(())
}

// ---------------------------------------------------------------------------------------------
// Python: missing colon
// ---------------------------------------------------------------------------------------------

/// Adds the `:` Python says is expected after a block header (`def`, `if`, `for`, `class`…),
/// before any trailing comment. Declines on headers spanning several lines.
pub struct MissingColon;

static PY_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*(?:async\s+)?(?:def|class|if|elif|else|for|while|try|except|finally|with|match|case)\b",
    )
});

/// A `:` outside brackets and strings (a walrus `:=` aside): the header already has its colon.
fn has_top_level_colon(code: &str) -> bool {
    let chars: Vec<char> = code.chars().collect();
    let (mut depth, mut quote) = (0i32, None::<char>);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(_) if c == '\\' => i += 1,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ':' if depth == 0 && chars.get(i + 1) != Some(&'=') => return true,
                _ => {}
            },
        }
        i += 1;
    }
    false
}

impl DeterministicFixer for MissingColon {
    fn name(&self) -> &'static str {
        "missing-colon"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        if lang_of(&input.report.file_path) != Lang::Python
            || !message(input).contains("expected ':'")
        {
            return None;
        }
        let (mut lines, idx) = target(input)?;
        let scan = scan_python(&lines)?;
        if !scan[idx].logical_start || !scan[idx].completes {
            return None;
        }
        let (code, tail) = code_and_tail(&lines[idx].text, Lang::Python);
        if !PY_HEADER.is_match(code) || code.contains(';') {
            return None;
        }
        let last = code.chars().last()?;
        if !(last.is_alphanumeric() || matches!(last, '_' | ')' | ']' | '}' | '"' | '\'')) {
            return None;
        }
        if has_top_level_colon(code) {
            return None;
        }
        // `if x and` is an unfinished expression, not a header missing its colon.
        let last_word = code
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        const OPERATORS: &[&str] = &[
            "and", "or", "not", "in", "is", "if", "else", "lambda", "await", "async", "for",
            "while", "with", "as", "from", "def", "class", "elif", "except",
        ];
        if OPERATORS.contains(&last_word) && code.trim() != last_word {
            return None;
        }
        lines[idx].text = format!("{code}:{tail}");
        Some(output(
            self,
            &lines,
            format!(
                "Added the missing `:` at the end of the block header on line {}.",
                input.report.line_number
            ),
            0.9,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Python: indentation
// ---------------------------------------------------------------------------------------------

/// Repairs the indentation Python rejects: `unexpected indent` (dedent the stray line to its
/// neighbour's level), `unindent does not match any outer indentation level` (snap to the one
/// enclosing level that is clearly meant) and `expected an indented block` (indent the body line
/// one step under its header). Declines on mixed tabs and spaces, on ties, and when the repair
/// would reach past the reported line +3.
pub struct PythonIndentation;

static INDENTED_BLOCK_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"on line (\d+)"));

impl DeterministicFixer for PythonIndentation {
    fn name(&self) -> &'static str {
        "python-indentation"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        if lang_of(&input.report.file_path) != Lang::Python {
            return None;
        }
        let msg = message(input);
        let (mut lines, idx) = target(input)?;
        let scan = scan_python(&lines)?;
        let ch = indent_char(&lines, &scan)?;
        if !scan[idx].logical_start || !significant_py(&lines[idx]) {
            return None;
        }
        let prev = (0..idx)
            .rev()
            .find(|&k| scan[k].logical_start && significant_py(&lines[k]));
        let width = |l: &Line| indent_of(&l.text).len();
        let limit = idx + LINE_WINDOW as usize;

        let reason = if msg.contains("unexpected indent") {
            let p = prev?;
            let (pcode, _) = code_and_tail(&lines[p].text, Lang::Python);
            if pcode.ends_with(':') || width(&lines[idx]) <= width(&lines[p]) {
                return None;
            }
            let delta = width(&lines[p]) as isize - width(&lines[idx]) as isize;
            let own = width(&lines[idx]);
            let mut k = idx;
            while k < lines.len() {
                let l = &lines[k];
                if k > idx && scan[k].logical_start && significant_py(l) && width(l) < own {
                    break;
                }
                if k > limit && !l.text.trim().is_empty() {
                    return None;
                }
                k += 1;
            }
            for line in &mut lines[idx..k] {
                reindent(line, delta, ch)?;
            }
            format!(
                "Removed the unexpected indentation of line {} to match the statement before it.",
                input.report.line_number
            )
        } else if msg.contains("unindent does not match any outer indentation level") {
            let w = width(&lines[idx]);
            let mut levels = Vec::new();
            let mut min = usize::MAX;
            for k in (0..idx).rev() {
                if scan[k].logical_start && significant_py(&lines[k]) && width(&lines[k]) < min {
                    min = width(&lines[k]);
                    levels.push(min);
                    if min == 0 {
                        break;
                    }
                }
            }
            if levels.contains(&w) {
                return None;
            }
            let best = levels.iter().map(|&l| l.abs_diff(w)).min()?;
            let nearest: Vec<usize> = levels
                .iter()
                .copied()
                .filter(|l| l.abs_diff(w) == best)
                .collect();
            let unit = indent_unit(&lines, &scan);
            if nearest.len() != 1 || best * 2 >= unit {
                return None;
            }
            let delta = nearest[0] as isize - w as isize;
            // The line and the statements after it written at the same wrong width.
            let mut k = idx + 1;
            while k < lines.len() {
                let l = &lines[k];
                if scan[k].logical_start && significant_py(l) && width(l) != w {
                    break;
                }
                k += 1;
            }
            let last_changed = (idx..k).rev().find(|&j| !lines[j].text.trim().is_empty())?;
            if last_changed > limit {
                return None;
            }
            for line in &mut lines[idx..k] {
                reindent(line, delta, ch)?;
            }
            format!(
                "Re-indented line {} to the enclosing indentation level it was meant to match.",
                input.report.line_number
            )
        } else if msg.contains("expected an indented block") {
            let header = match INDENTED_BLOCK_LINE.captures(msg) {
                Some(c) => c[1].parse::<usize>().ok()?.checked_sub(1)?,
                None => prev?,
            };
            if header >= idx || Some(header) != prev {
                return None;
            }
            let (hcode, _) = code_and_tail(&lines[header].text, Lang::Python);
            let (own_code, _) = code_and_tail(&lines[idx].text, Lang::Python);
            if !hcode.ends_with(':') || own_code.ends_with(':') {
                return None;
            }
            if width(&lines[idx]) > width(&lines[header]) {
                return None;
            }
            let unit = indent_unit(&lines, &scan);
            let delta = (width(&lines[header]) + unit) as isize - width(&lines[idx]) as isize;
            // The statement and its own continuation lines move together.
            let mut end = idx + 1;
            while end < lines.len() && !scan[end].logical_start {
                end += 1;
            }
            if end - 1 > limit {
                return None;
            }
            for line in &mut lines[idx..end] {
                reindent(line, delta, ch)?;
            }
            format!(
                "Indented line {} under the block header on line {}.",
                input.report.line_number,
                header + 1
            )
        } else {
            return None;
        };
        Some(output(self, &lines, reason, 0.8))
    }
}

// ---------------------------------------------------------------------------------------------
// Missing semicolon
// ---------------------------------------------------------------------------------------------

/// Adds the `;` rustc (`expected `;``) or ESLint (`semi`, `Missing semicolon`) asks for, at the
/// end of the line's code and before any comment. When the tool gave a column it must point
/// exactly there.
pub struct MissingSemicolon;

impl DeterministicFixer for MissingSemicolon {
    fn name(&self) -> &'static str {
        "missing-semicolon"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        let msg = message(input).trim();
        let lang = lang_of(&input.report.file_path);
        let applies = match lang {
            Lang::Rust => msg.starts_with("expected `;`"),
            Lang::Js => {
                (rule_in(input, &["semi", "@stylistic/semi"]) || input.report.rule.is_none())
                    && msg.contains("Missing semicolon")
            }
            _ => false,
        };
        if !applies {
            return None;
        }
        let (mut lines, idx) = target(input)?;
        let (code, tail) = code_and_tail(&lines[idx].text, lang);
        let last = code.chars().last()?;
        if matches!(
            last,
            ';' | '{'
                | '}'
                | ','
                | '('
                | '['
                | '+'
                | '-'
                | '*'
                | '/'
                | '='
                | '&'
                | '|'
                | '<'
                | '>'
                | '!'
                | '?'
                | ':'
                | '.'
                | '\\'
        ) {
            return None;
        }
        if let Some(col) = input.report.column
            && col as usize != code.chars().count() + 1
        {
            return None;
        }
        lines[idx].text = format!("{code};{tail}");
        Some(output(
            self,
            &lines,
            format!(
                "Added the missing `;` at the end of line {}.",
                input.report.line_number
            ),
            0.88,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Whitespace
// ---------------------------------------------------------------------------------------------

/// Strips trailing blanks from the reported line (W291, W293, ESLint `no-trailing-spaces`).
/// Declines when the line ends inside a Python multi-line string, where the blanks are data.
pub struct TrailingWhitespace;

impl DeterministicFixer for TrailingWhitespace {
    fn name(&self) -> &'static str {
        "trailing-whitespace"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        let msg = message(input).to_ascii_lowercase();
        if !(rule_in(
            input,
            &["W291", "W293", "no-trailing-spaces", "trailing_whitespace"],
        ) || msg.contains("trailing whitespace")
            || msg.contains("blank line contains whitespace"))
        {
            return None;
        }
        let (mut lines, idx) = target(input)?;
        match lang_of(&input.report.file_path) {
            Lang::Python => {
                let scan = scan_python(&lines)?;
                if scan[idx].ends_in_string {
                    return None;
                }
            }
            // Inside a template literal / raw string the blanks are data. An odd number of
            // backticks up to the end of the line means one is open (or the count is off
            // because of a quoted backtick: declining is fine either way).
            Lang::Js | Lang::Go => {
                let ticks: usize = lines[..=idx]
                    .iter()
                    .map(|l| l.text.matches('`').count())
                    .sum();
                if ticks % 2 == 1 {
                    return None;
                }
            }
            _ => {}
        }
        let trimmed = lines[idx].text.trim_end_matches([' ', '\t']).to_string();
        if trimmed.len() == lines[idx].text.len() {
            return None;
        }
        lines[idx].text = trimmed;
        Some(output(
            self,
            &lines,
            format!(
                "Removed trailing whitespace on line {}.",
                input.report.line_number
            ),
            0.97,
        ))
    }
}

/// Adds the missing final newline (W292, ESLint `eol-last`), in the file's own line-ending style.
pub struct FinalNewline;

impl DeterministicFixer for FinalNewline {
    fn name(&self) -> &'static str {
        "final-newline"
    }

    fn try_fix(&self, input: &FixInput) -> Option<FixOutput> {
        let msg = message(input).to_ascii_lowercase();
        if !(rule_in(input, &["W292", "eol-last", "@stylistic/eol-last"])
            || msg.contains("no newline at end of file")
            || msg.contains("newline required at end of file"))
        {
            return None;
        }
        let c = &input.file_content;
        if c.is_empty() || c.ends_with('\n') {
            return None;
        }
        let n = split_lines(c).len() as u32;
        if input.report.line_number != n {
            return None;
        }
        let mut patched = c.clone();
        patched.push_str(dominant_eol(c));
        Some(FixOutput {
            patched_content: patched,
            fix_reason: "Added the missing newline at the end of the file.".to_string(),
            confidence_score: 0.98,
            fixer: self.name().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ci_medic_parser::{BugReport, BugType};

    fn input(
        path: &str,
        line: u32,
        col: Option<u32>,
        rule: Option<&str>,
        msg: &str,
        content: &str,
    ) -> FixInput {
        FixInput::new(
            BugReport {
                file_path: path.into(),
                line_number: line,
                error_type: BugType::Linting,
                message: msg.into(),
                test_name: None,
                confidence_score: 0.9,
                column: col,
                tool: None,
                rule: rule.map(str::to_string),
            },
            content.into(),
        )
    }

    fn fix(f: &dyn DeterministicFixer, i: &FixInput) -> Option<String> {
        f.try_fix(i).map(|o| o.patched_content)
    }

    #[test]
    fn python_unused_import_variants() {
        let f = UnusedImport;
        let m = |name: &str| format!("`{name}` imported but unused");
        let i = input(
            "a.py",
            1,
            None,
            Some("F401"),
            &m("os"),
            "import os, sys  # both\nprint(sys)\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "import sys  # both\nprint(sys)\n");
        let i = input(
            "a.py",
            1,
            None,
            Some("F401"),
            &m("x.a"),
            "from x import (a, b)\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "from x import (b)\n");
        let i = input(
            "a.py",
            1,
            None,
            Some("F401"),
            &m(".a"),
            "from . import a, b\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "from . import b\n");
        // Declines: wrong line, star import, two statements, the name twice, emptying a block.
        for (line, content) in [
            (1, "import sys\n"),
            (1, "from os import *\n"),
            (1, "import os; import sys\n"),
            (1, "import os, os\n"),
            (2, "try:\n    import os\nexcept ImportError:\n    pass\n"),
            (1, "from os import (path,\n    sep)\n"),
        ] {
            let i = input(
                "a.py",
                line,
                None,
                Some("F401"),
                &m(if content.contains("path") {
                    "os.path"
                } else {
                    "os"
                }),
                content,
            );
            assert_eq!(fix(&f, &i), None, "{content:?}");
        }
        // The last item of a parenthesised block is not removed: that would leave `()`.
        let i = input(
            "a.py",
            2,
            None,
            Some("F401"),
            &m("x.a"),
            "from x import (\n    a,\n)\n",
        );
        assert_eq!(fix(&f, &i), None);
    }

    /// Imports whose removal changes behaviour although the linter calls them unused: ruff's
    /// `; consider …` messages (it offers no fix for them), re-exports in `__init__.py`, and
    /// imports that test for a module's availability inside a `try`.
    #[test]
    fn unused_imports_that_must_stay_are_declined() {
        let f = UnusedImport;
        let optional = "try:\n    import numpy\n    HAS_NUMPY = True\nexcept ImportError:\n    HAS_NUMPY = False\n";
        let plain = "`numpy` imported but unused";
        let ruff_try = "`numpy` imported but unused; consider using `importlib.util.find_spec` to test for availability";
        // flake8 says no more than "imported but unused": the `try` itself must be seen.
        for msg in [plain, ruff_try] {
            let i = input("a.py", 2, None, Some("F401"), msg, optional);
            assert_eq!(fix(&f, &i), None, "{msg}");
        }
        // The suffix alone is enough, wherever the import is.
        let i = input(
            "a.py",
            1,
            None,
            Some("F401"),
            ruff_try,
            "import numpy\nx = 1\n",
        );
        assert_eq!(fix(&f, &i), None);
        let i = input(
            "pkg/__init__.py",
            1,
            None,
            Some("F401"),
            "'.core.Client' imported but unused",
            "from .core import Client\nx = 1\n",
        );
        assert_eq!(fix(&f, &i), None, "a re-export");
        let msg = "`os` imported but unused";
        for (line, content) in [
            // Nested inside the try body, in a handler, in its else and finally.
            (
                3,
                "try:\n    if x:\n        import os\n        y = 1\nexcept ImportError:\n    pass\n",
            ),
            (
                4,
                "try:\n    pass\nexcept ImportError:\n    import os\n    y = 1\n",
            ),
            (
                6,
                "try:\n    pass\nexcept Exception:\n    pass\nelse:\n    import os\n    y = 1\n",
            ),
            (4, "try:\n    pass\nfinally:\n    import os\n    y = 1\n"),
        ] {
            let i = input("a.py", line, None, Some("F401"), msg, content);
            assert_eq!(fix(&f, &i), None, "{content:?}");
        }
        // A try that closed before, or an `if` block, is no reason to decline.
        let after_try = "try:\n    x = 1\nexcept ValueError:\n    pass\ndef f():\n    import os\n    import sys\n    return sys\n";
        let i = input("a.py", 6, None, Some("F401"), msg, after_try);
        assert_eq!(
            fix(&f, &i).unwrap(),
            after_try.replace("    import os\n", "")
        );
        let typing = "if TYPE_CHECKING:\n    import os\n    import sys\n";
        let i = input("a.py", 2, None, Some("F401"), msg, typing);
        assert_eq!(fix(&f, &i).unwrap(), "if TYPE_CHECKING:\n    import sys\n");
        let i = input(
            "pkg/core.py",
            1,
            None,
            Some("F401"),
            msg,
            "import os\nx = 1\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "x = 1\n");

        // JavaScript: a require inside a try block is an availability test too.
        let r = Some("no-unused-vars");
        let m = "'fsevents' is assigned a value but never used";
        for (line, src) in [
            (
                3,
                "let ok;\ntry {\n  const fsevents = require('fsevents');\n  ok = true;\n} catch {\n  ok = false;\n}\n",
            ),
            (
                3,
                "try\n{\n  const fsevents = require('fsevents');\n  ok = true;\n} catch (e) {}\n",
            ),
            (
                3,
                "try {\n  if (mac) {\n    const fsevents = require('fsevents');\n    ok = true;\n  }\n} catch (e) {}\n",
            ),
        ] {
            let i = input("a.cjs", line, None, r, m, src);
            assert_eq!(fix(&f, &i), None, "{src:?}");
        }
        let after = "try { a(); } catch (e) {}\nfunction g() {\n  const fsevents = require('fsevents');\n  return 1;\n}\n";
        let i = input("a.cjs", 3, None, r, m, after);
        assert_eq!(
            fix(&f, &i).unwrap(),
            after.replace("  const fsevents = require('fsevents');\n", "")
        );
    }

    #[test]
    fn rust_unused_import_variants() {
        let f = UnusedImport;
        let i = input(
            "a.rs",
            1,
            None,
            None,
            "unused import: `fmt`",
            "use std::{fmt, io::{self}};\n",
        );
        assert_eq!(fix(&f, &i), None, "nested trees are declined");
        let i = input(
            "a.rs",
            1,
            None,
            None,
            "unused imports: `a`, `b`, and `c`",
            "pub(crate) use m::{a, b, c, d}; // keep\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "pub(crate) use m::d; // keep\n");
        let i = input(
            "a.rs",
            2,
            None,
            None,
            "unused import: `std::fmt`",
            "#[cfg(test)]\nuse std::fmt;\nfn f() {}\n",
        );
        assert_eq!(
            fix(&f, &i),
            None,
            "the attribute would move to the next item"
        );
        let i = input(
            "a.rs",
            1,
            None,
            None,
            "unused import: `fmt`",
            "use std::{\n    fmt,\n};\n",
        );
        assert_eq!(fix(&f, &i), None);
        let i = input(
            "a.rs",
            1,
            None,
            None,
            "unused import: `self`",
            "use std::io::{self, Read};\n",
        );
        assert_eq!(fix(&f, &i).unwrap(), "use std::io::Read;\n");
    }

    #[test]
    fn go_and_js_unused_import_variants() {
        let f = UnusedImport;
        let g = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\" // files\n)\n";
        let i = input("m.go", 5, None, None, "\"os\" imported and not used", g);
        assert_eq!(
            fix(&f, &i).unwrap(),
            "package main\n\nimport (\n\t\"fmt\"\n)\n"
        );
        let i = input("m.go", 4, None, None, "\"os\" imported and not used", g);
        assert_eq!(fix(&f, &i), None, "the line names another package");
        let i = input(
            "m.go",
            1,
            None,
            None,
            "\"os\" imported and not used",
            "var x = \"os\"\n",
        );
        assert_eq!(fix(&f, &i), None, "a string outside an import block");

        let r = Some("@typescript-eslint/no-unused-vars");
        let m = "'b' is defined but never used";
        for (src, want) in [
            (
                "import a, { b, c as d } from 'x'\n",
                Some("import a, { c as d } from 'x'\n"),
            ),
            ("import {b} from \"x\";\n", Some("")),
            (
                "import type { A, b } from \"x\";\n",
                Some("import type { A } from \"x\";\n"),
            ),
            ("import * as b from \"x\";\n", Some("")),
            (
                "import b, * as ns from \"x\";\n",
                Some("import * as ns from \"x\";\n"),
            ),
            ("const b = 1;\n", None),
            ("const b = require(\"x\");\n", Some("")),
            (
                "const { a, b } = require('x')\n",
                Some("const { a } = require('x')\n"),
            ),
            (
                "const { a: b, c } = require('x');\n",
                Some("const { c } = require('x');\n"),
            ),
            ("const { b = 1, c } = require('x');\n", None),
            ("const b = require(name);\n", None),
            ("import {\n  b,\n} from \"x\";\n", None),
            ("import { a } from \"x\";\n", None),
        ] {
            let i = input("a.ts", 1, None, r, m, src);
            assert_eq!(fix(&f, &i).as_deref(), want, "{src:?}");
        }
    }

    #[test]
    fn colon_semicolon_and_whitespace_decline_when_unsure() {
        let m = MissingColon;
        let msg = "expected ':'";
        assert_eq!(
            fix(
                &m,
                &input("a.py", 1, None, None, msg, "while x < 3\n    x += 1\n")
            )
            .unwrap(),
            "while x < 3:\n    x += 1\n"
        );
        assert_eq!(
            fix(&m, &input("a.py", 1, None, None, msg, "else\n")).unwrap(),
            "else:\n"
        );
        for src in [
            "x = 1\n",
            "if x and\n",
            "if (a,\n    b)\n",
            "def f():\n",
            "if x: y\n",
        ] {
            assert_eq!(
                fix(&m, &input("a.py", 1, None, None, msg, src)),
                None,
                "{src:?}"
            );
        }
        assert_eq!(fix(&m, &input("a.rs", 1, None, None, msg, "if x\n")), None);

        let s = MissingSemicolon;
        let rs = "expected `;`, found `}`";
        assert_eq!(
            fix(&s, &input("a.rs", 1, None, None, rs, "    x += 1\n}\n")).unwrap(),
            "    x += 1;\n}\n"
        );
        assert_eq!(
            fix(&s, &input("a.rs", 1, Some(5), None, rs, "    x += 1\n}\n")),
            None,
            "column elsewhere"
        );
        assert_eq!(
            fix(&s, &input("a.rs", 1, None, None, rs, "    let x = a +\n")),
            None
        );
        assert_eq!(fix(&s, &input("a.py", 1, None, None, rs, "x = 1\n")), None);
        assert_eq!(
            fix(
                &s,
                &input(
                    "a.js",
                    1,
                    Some(6),
                    Some("semi"),
                    "Missing semicolon.",
                    "a = 1\r\n"
                )
            )
            .unwrap(),
            "a = 1;\r\n"
        );
        assert_eq!(
            fix(
                &s,
                &input(
                    "a.js",
                    1,
                    None,
                    Some("semi"),
                    "Extra semicolon.",
                    "a = 1;;\n"
                )
            ),
            None
        );

        let w = TrailingWhitespace;
        let doc = "def f():\n    \"\"\"Doc   \n    more\"\"\"\n";
        assert_eq!(
            fix(
                &w,
                &input("a.py", 2, None, Some("W291"), "trailing whitespace", doc)
            ),
            None,
            "inside a string"
        );
        let tpl = "const s = `a  \nb`;\n";
        let w_in = input(
            "a.js",
            1,
            None,
            Some("no-trailing-spaces"),
            "Trailing spaces not allowed.",
            tpl,
        );
        assert_eq!(fix(&w, &w_in), None, "inside a template literal");
        assert_eq!(
            fix(
                &w,
                &input(
                    "a.rs",
                    1,
                    None,
                    Some("W291"),
                    "trailing whitespace",
                    "x\t \r\ny\n"
                )
            )
            .unwrap(),
            "x\r\ny\n"
        );
        assert_eq!(
            fix(
                &w,
                &input("a.py", 1, None, Some("W291"), "trailing whitespace", "x\n")
            ),
            None
        );

        let n = FinalNewline;
        assert_eq!(
            fix(
                &n,
                &input(
                    "a.py",
                    1,
                    None,
                    Some("W292"),
                    "no newline at end of file",
                    "x\n"
                )
            ),
            None
        );
        assert_eq!(
            fix(
                &n,
                &input(
                    "a.py",
                    1,
                    None,
                    Some("W292"),
                    "no newline at end of file",
                    "x\ny"
                )
            ),
            None,
            "wrong line"
        );
    }

    #[test]
    fn indentation_declines_on_mixed_tabs_ties_and_far_reaches() {
        let f = PythonIndentation;
        let ue = "unexpected indent";
        let mixed = "def f():\n\tx = 1\n        y = 2\n";
        assert_eq!(fix(&f, &input("a.py", 3, None, None, ue, mixed)), None);
        // A stray block: the over-indented run is dedented together when it stays within +3.
        let run = "def f():\n    a = 1\n        b = 2\n        c = 3\n    return a\n";
        assert_eq!(
            fix(&f, &input("a.py", 3, None, None, ue, run)).unwrap(),
            "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n"
        );
        let long = "def f():\n    a = 1\n        b = 2\n        c = 3\n        d = 4\n        e = 5\n        g = 6\n    return a\n";
        assert_eq!(fix(&f, &input("a.py", 3, None, None, ue, long)), None);
        // After a header the indent is expected: not this error.
        assert_eq!(
            fix(&f, &input("a.py", 2, None, None, ue, "if x:\n    y = 1\n")),
            None
        );

        let un = "unindent does not match any outer indentation level";
        let tab_levels = "def f():\n  if x:\n    y = 1\n   z = 2\n";
        assert_eq!(
            fix(&f, &input("a.py", 4, None, None, un, tab_levels)),
            None,
            "2-space unit: 3 is a tie-ish guess"
        );
        let eib = "expected an indented block after 'if' statement on line 2";
        let header = "def f(x):\n    if x:\n    pass\n";
        assert_eq!(
            fix(&f, &input("a.py", 3, None, None, eib, header)).unwrap(),
            "def f(x):\n    if x:\n        pass\n"
        );
        let nested = "def f(x):\n    if x:\n    for y in x:\n        pass\n";
        assert_eq!(
            fix(
                &f,
                &input(
                    "a.py",
                    3,
                    None,
                    None,
                    "expected an indented block after 'if' statement on line 2",
                    nested
                )
            ),
            None,
            "the body line is itself a header"
        );
        let wrong = "def f(x):\n    if x:\n    pass\n";
        assert_eq!(
            fix(
                &f,
                &input(
                    "a.py",
                    3,
                    None,
                    None,
                    "expected an indented block after 'if' statement on line 1",
                    wrong
                )
            ),
            None,
            "header line mismatch"
        );
    }
}
