//! CI-side linters: hadolint (tty `Dockerfile:12 DL3008 warning: …`, its pre-2.0 form without a
//! severity, and `--format gnu`), yamllint's standard format and `--format github`, actionlint
//! (`.github/workflows/ci.yml:12:5: msg [rule]`), `terraform validate` and tflint (`Error: …` then
//! `on main.tf line 12`), tflint's compact format, shellcheck's checkstyle XML, and PyYAML's marked
//! errors (`  in "x.yml", line 25, column 2` under the problem; docker-compose v1, pre-commit's
//! `check-yaml`, any Python tool that loads YAML). (yamllint's
//! parsable format and shellcheck's gcc and tty formats are in `generic.rs`.)
//!
//! Severities reported, by what fails the step by default: hadolint `error` and `warning`
//! (not `info`/`style`), yamllint `error`, actionlint all, terraform `Error` (not `Warning`),
//! tflint `Error` and `Warning`, shellcheck `error` (as in `generic.rs`).
//!
//! hashicorp/terraform-github-actions (v0.x) runs terraform in its `tf_actions_working_dir` and
//! names it (`validate: info: validating Terraform configuration in infrastructure`): terraform's
//! `on kubernetes.tf line 118` is relative to it.
//!
//! It must never report a terraform `Warning`, a location found more than a few lines after its
//! `Error:` header, or a `path:line` whose rule is not one of actionlint's.

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// Lines after a terraform/tflint `Error:` header in which its `on file line N` may appear.
const TF_WINDOW: u8 = 8;

#[derive(Debug, Default)]
pub(crate) struct Infra {
    /// yamllint's standard format: the file whose findings follow, indented.
    yaml_file: Option<String>,
    /// terraform / tflint: the open `Error:` (or tflint `Warning:`) header.
    tf: Option<TfHeader>,
    /// shellcheck checkstyle: the current `<file name='…'>`.
    checkstyle_file: Option<String>,
    /// PyYAML: the last mark, which a problem and its own mark may still follow.
    yaml_mark: Option<YamlMark>,
    /// The file an echoed hadolint command fed on its standard input (`hadolint - < Dockerfile`,
    /// `docker run --rm -i hadolint/hadolint < Dockerfile`), which it names `-` or `/dev/stdin`.
    hadolint_stdin: Option<String>,
    /// The working directory terraform-github-actions named (repo-relative, not `.`).
    tf_dir: Option<String>,
}

/// A short lowercase word then `: info: ` or `: error: ` (the idle check for [`tf_action_dir`],
/// which stops at the first byte that is not a lowercase letter instead of searching the line:
/// it runs on every lowercase line with a colon, where a `memchr` call cost more than the scan).
#[inline]
fn tf_action_shape(t: &str) -> bool {
    let b = t.as_bytes();
    // The subcommands are short words: `init`, `validate`, `plan`, `apply`, `output`.
    let Some(&c) = b
        .get(2..10)
        .and_then(|w| w.iter().find(|c| !c.is_ascii_lowercase()))
    else {
        return false;
    };
    c == b':' && {
        let at = memchr::memchr(b':', &b[..10]).unwrap_or(0);
        let rest = &b[at..];
        at > 0 && (rest.starts_with(b": info: ") || rest.starts_with(b": error: "))
    }
}

/// `validate: info: validating Terraform configuration in infrastructure` (and the `error:
/// failed to …` line; `init`, `plan`, `apply`… alike): the action's working directory,
/// relative to the checkout.
fn tf_action_dir(t: &str) -> Option<&str> {
    let (sub, rest) = t.split_once(": ")?;
    if sub.is_empty() || !sub.bytes().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let rest = rest
        .strip_prefix("info: ")
        .or_else(|| rest.strip_prefix("error: "))?;
    let (_, dir) = rest.rsplit_once(" Terraform configuration in ")?;
    Some(dir.trim())
}

static HADOLINT: crate::Needle = crate::needle!("hadolint");

/// The file redirected into an echoed hadolint command (`$ …`, `+ …` of `set -x`, an Actions
/// `Run …` header): the word after `<`, or after `cat` before a pipe.
fn hadolint_stdin(t: &str) -> Option<&str> {
    let cmd = t
        .strip_prefix("$ ")
        .or_else(|| t.strip_prefix("+ "))
        .or_else(|| t.strip_prefix("Run "))?;
    if !crate::has(&HADOLINT, cmd) {
        return None;
    }
    let file = match cmd.split_once(" < ") {
        Some((_, rest)) => rest.split_whitespace().next()?,
        None => {
            let (before, _) = cmd.split_once(" | ")?;
            before.strip_prefix("cat ")?.trim()
        }
    };
    (!file.is_empty() && !file.contains(['$', '`', '(', '&', ';'])).then_some(file)
}

/// PyYAML prints a context and its mark, then the problem and its mark (`while parsing a block
/// mapping` / `  in "x.yml", line 1, column 1` / `did not find expected key` / `  in "x.yml",
/// line 25, column 2`), or only a problem and one mark: the problem's mark is the location.
#[derive(Debug)]
struct YamlMark {
    file: String,
    line: u64,
    seq: u64,
    /// Lines since the mark, and the one right after it (the problem, when a mark follows).
    since: u8,
    problem: Option<String>,
}

/// `in "x.yml", line 25, column 2` (trimmed): the file and line of a PyYAML mark, for YAML files
/// only (`<unicode string>`, `<stdin>` name none).
fn yaml_mark(t: &str) -> Option<(&str, u64)> {
    let rest = t.strip_prefix("in \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (line, col) = rest.split_once(", column ")?;
    if !is_yaml(file) || col.is_empty() || !col.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((file, super::num(line)?))
}

#[derive(Debug)]
struct TfHeader {
    seq: u64,
    summary: String,
    rule: Option<String>,
    ty: BugType,
    left: u8,
}

/// actionlint's rule names, as printed in its trailing `[rule]`.
const ACTIONLINT_RULES: [&str; 27] = [
    "action",
    "credentials",
    "deprecated-commands",
    "env-var",
    "events",
    "expression",
    "glob",
    "id",
    "if-cond",
    "job-needs",
    "matrix",
    "permissions",
    "pyflakes",
    "runner-label",
    "shell-name",
    "shellcheck",
    "syntax-check",
    "workflow-call",
    "yaml-syntax",
    "dependabot",
    "constant",
    "cron",
    "action-metadata",
    "reusable-workflow",
    "step-id",
    "job-id",
    "timeout-minutes",
];

impl Infra {
    /// True when `line` cannot change this matcher's state or be claimed by it.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.yaml_file.is_none()
            && self.tf.is_none()
            && self.checkstyle_file.is_none()
            && self.yaml_mark.is_none()
            && !(l.first == b'i' && l.indent() > 0 && l.last.is_ascii_digit())
            && !(matches!(l.first, b'$' | b'+' | b'R') && crate::has(&HADOLINT, l.trimmed()))
            && !matches!(l.first, b'E' | b'W' | 0xE2 | b'<' | b':' | b'h')
            && l.last != b'l'
            && !(l.colon_digit && matches!(l.last, b']' | b')' | b':'))
            && !(l.colon_digit && l.first != b' ' && hadolint_shape(l.trimmed()))
            && !(l.colon && md_first_colon(l.trimmed()))
            && !(l.colon && l.first.is_ascii_lowercase() && tf_action_shape(l.trimmed()))
    }

    /// Returns true when the line was claimed.
    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if (self.yaml_mark.is_some() || l.first == b'i') && self.pyyaml(l, t, sink) {
            return true;
        }
        if matches!(l.first, b'$' | b'+' | b'R')
            && let Some(file) = hadolint_stdin(t)
        {
            self.hadolint_stdin = Some(file.to_string());
            return false;
        }
        if l.colon
            && l.first.is_ascii_lowercase()
            && let Some(dir) = tf_action_dir(t)
        {
            // `.` (the default) is the root; anything else must be a plain relative directory.
            self.tf_dir = crate::path::normalize_dir(dir, None).filter(|d| !d.is_empty());
            return true;
        }
        if self.tf.is_some() && self.terraform_location(t, sink) {
            return true;
        }
        if self.yaml_file.is_some() && l.indent() > 0 {
            if self.yamllint_finding(l.no, t, sink) {
                return true;
            }
        } else if l.indent() == 0 && !l.is_blank() {
            self.yaml_file = None;
        }
        if (self.checkstyle_file.is_some() || l.first == b'<') && self.checkstyle(l.no, t, sink) {
            return true;
        }
        if l.indent() == 0 && l.last == b'l' && is_yaml(t) && !t.contains(' ') {
            self.yaml_file = Some(t.to_string());
            return true;
        }
        if let Some(rest) = t.strip_prefix("Error: ")
            && workflow_template_error(l.no, rest, sink)
        {
            return true;
        }
        if matches!(l.first, b'E' | b'W' | 0xE2) && self.terraform_header(l.no, t) {
            return true;
        }
        if l.first == b':' {
            return yamllint_github(l.no, t, sink);
        }
        // markdownlint-cli 0.x writes `README.md: 750: MD034/…`: no digit right after the colon.
        if l.colon && md_first_colon(t) && markdown_lint(l.no, t, sink) {
            return true;
        }
        if !l.colon_digit {
            return false;
        }
        if hadolint(l.no, t, self.hadolint_stdin.as_deref(), sink) {
            return true;
        }
        if l.last == b']' {
            return actionlint(l.no, t, sink);
        }
        if l.last == b')' {
            return tflint_compact(l.no, t, sink);
        }
        false
    }

    /// PyYAML's marks: returns true for a mark line.
    fn pyyaml(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        let mark = if l.indent() > 0 { yaml_mark(t) } else { None };
        let Some((file, line)) = mark else {
            if let Some(m) = &mut self.yaml_mark {
                m.since += 1;
                if m.since == 1 && !t.is_empty() {
                    m.problem = Some(crate::sink::truncate_chars(t, 300).to_string());
                } else {
                    self.flush(sink);
                }
            }
            return false;
        };
        match &mut self.yaml_mark {
            // The problem's mark, one line after the context's.
            Some(m) if m.since == 1 && m.file == file => {
                m.line = line;
                self.flush(sink);
            }
            _ => {
                self.flush(sink);
                self.yaml_mark = Some(YamlMark {
                    file: file.to_string(),
                    line,
                    seq: l.no,
                    since: 0,
                    problem: None,
                });
            }
        }
        true
    }

    /// A new CI step: another action or command, which may run elsewhere.
    pub fn step_boundary(&mut self, sink: &mut Sink) {
        self.flush(sink);
        self.tf_dir = None;
    }

    /// Reports the pending PyYAML mark.
    pub fn flush(&mut self, sink: &mut Sink) {
        let Some(m) = self.yaml_mark.take() else {
            return;
        };
        // A lone mark's problem was printed above it; the line after it is something else.
        let msg = match (&m.problem, m.since) {
            (Some(p), 1) => p.as_str(),
            _ => "YAML syntax error",
        };
        sink.emit(
            m.seq,
            Finding::new(&m.file, m.line, BugType::Syntax, msg)
                .conf(0.85)
                .tool("yaml"),
        );
    }

    /// `Error: summary` (terraform, optionally inside its `│ ` box) or tflint's `Warning: … (rule)`.
    fn terraform_header(&mut self, seq: u64, t: &str) -> bool {
        let t = t.strip_prefix('│').map(str::trim_start).unwrap_or(t);
        let (warning, summary) = if let Some(s) = t.strip_prefix("Error: ") {
            (false, s)
        } else if let Some(s) = t.strip_prefix("Warning: ") {
            (true, s)
        } else {
            return false;
        };
        let rule = tflint_rule(summary);
        if warning && rule.is_none() {
            // terraform warnings do not fail `terraform validate`.
            return false;
        }
        let ty = match rule {
            Some(_) => BugType::Linting,
            None => terraform_type(summary),
        };
        self.tf = Some(TfHeader {
            seq,
            summary: summary.to_string(),
            rule: rule.map(str::to_string),
            ty,
            left: TF_WINDOW,
        });
        false
    }

    /// `on main.tf line 12, in resource …:` after a header.
    fn terraform_location(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(h) = &mut self.tf else {
            return false;
        };
        let t = t.strip_prefix('│').map(str::trim_start).unwrap_or(t);
        if let Some(rest) = t.strip_prefix("on ")
            && let Some((path, tail)) = rest.split_once(" line ")
        {
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            if let Some(line) = super::num(&tail[..digits]) {
                let Some(h) = self.tf.take() else {
                    return false;
                };
                // Modules `terraform init` downloaded: a dependency, not the repository's.
                if path.starts_with(".terraform/") || path.contains("/.terraform/") {
                    return true;
                }
                let tool = if h.rule.is_some() {
                    "tflint"
                } else {
                    "terraform"
                };
                let joined;
                let path = match &self.tf_dir {
                    Some(dir) if h.rule.is_none() => {
                        joined = format!("{dir}/{path}");
                        joined.as_str()
                    }
                    _ => path,
                };
                sink.emit(
                    h.seq,
                    Finding::new(path, line, h.ty, &h.summary)
                        .conf(0.9)
                        .tool(tool)
                        .rule(h.rule.as_deref()),
                );
                return true;
            }
        }
        h.left = h.left.saturating_sub(1);
        if h.left == 0 || t.starts_with("Error: ") || t.starts_with("Warning: ") {
            self.tf = None;
        }
        false
    }

    /// `  3:1       error    trailing spaces  (trailing-spaces)` under a file name.
    fn yamllint_finding(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        let Some(file) = &self.yaml_file else {
            return false;
        };
        // `--format github` as the Actions web page shows it: `Error: 6:1 [rule] message` under
        // the `::group::` file name.
        if let Some(rest) = t.strip_prefix("Error: ") {
            let Some((pos, tail)) = rest.split_once(" [") else {
                return false;
            };
            let Some((rule, msg)) = tail.split_once("] ") else {
                return false;
            };
            let (l, c) = pos.split_once(':').unwrap_or((pos, ""));
            let Some(line) = super::num(l) else {
                return false;
            };
            let ty = if rule == "syntax" {
                BugType::Syntax
            } else {
                BugType::Linting
            };
            sink.emit(
                seq,
                Finding::new(file, line, ty, msg)
                    .col(super::num(c))
                    .conf(0.9)
                    .tool("yamllint")
                    .rule(Some(rule)),
            );
            return true;
        }
        let mut words = t.split_ascii_whitespace();
        let (Some(pos), Some(level)) = (words.next(), words.next()) else {
            return false;
        };
        let Some((l, c)) = pos.split_once(':') else {
            return false;
        };
        let (Some(line), col) = (super::num(l), super::num(c)) else {
            return false;
        };
        if level != "error" && level != "warning" {
            return false;
        }
        if level == "error" {
            let msg = t[t.find(level).map_or(0, |i| i + level.len())..].trim();
            let (msg, rule) = split_paren_rule(msg);
            let ty = if rule == Some("syntax") || msg.starts_with("syntax error") {
                BugType::Syntax
            } else {
                BugType::Linting
            };
            sink.emit(
                seq,
                Finding::new(file, line, ty, msg)
                    .col(col)
                    .conf(0.9)
                    .tool("yamllint")
                    .rule(rule),
            );
        }
        true
    }

    /// shellcheck `-f checkstyle`: `<file name='x.sh' >` then `<error line='3' … severity='error'
    /// message='…' source='ShellCheck.SC2086'/>`.
    fn checkstyle(&mut self, seq: u64, t: &str, sink: &mut Sink) -> bool {
        if t.starts_with("<file ") {
            self.checkstyle_file = attr(t, "name").map(str::to_string);
            return true;
        }
        if t.starts_with("</file") {
            self.checkstyle_file = None;
            return true;
        }
        let Some(file) = &self.checkstyle_file else {
            return false;
        };
        if !t.starts_with("<error ") {
            return false;
        }
        let source = attr(t, "source").unwrap_or("");
        let Some(code) = source.strip_prefix("ShellCheck.") else {
            return false;
        };
        if attr(t, "severity") == Some("error")
            && let Some(line) = attr(t, "line").and_then(super::num)
        {
            let col = attr(t, "column").and_then(super::num);
            let msg = attr(t, "message").unwrap_or("");
            sink.emit(
                seq,
                Finding::new(file, line, BugType::Linting, msg)
                    .col(col)
                    .conf(0.9)
                    .tool("shellcheck")
                    .rule(Some(code)),
            );
        }
        true
    }
}

fn is_yaml(path: &str) -> bool {
    let e = super::ext(path);
    e.eq_ignore_ascii_case("yml") || e.eq_ignore_ascii_case("yaml")
}

/// `msg  (rule)` → (`msg`, `rule`).
fn split_paren_rule(msg: &str) -> (&str, Option<&str>) {
    match msg.strip_suffix(')').and_then(|m| m.rsplit_once(" (")) {
        Some((m, r)) if !r.is_empty() && !r.contains(' ') => (m.trim_end(), Some(r)),
        _ => (msg, None),
    }
}

/// tflint ends its messages with `(rule_name)`: lower-case words joined by `_`.
fn tflint_rule(summary: &str) -> Option<&str> {
    let (_, r) = split_paren_rule(summary.trim_end());
    r.filter(|r| {
        r.contains('_')
            && r.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// terraform's diagnostic summaries: parse errors, missing modules, the rest.
fn terraform_type(summary: &str) -> BugType {
    const SYNTAX: [&str; 9] = [
        "Argument or block definition required",
        "Invalid block definition",
        "Unclosed configuration block",
        "Invalid character",
        "Invalid expression",
        "Unterminated template string",
        "Missing newline after argument",
        "Invalid multi-line string",
        "Missing item separator",
    ];
    const IMPORT: [&str; 3] = [
        "Module not installed",
        "Unreadable module directory",
        "Module source has changed",
    ];
    if SYNTAX.iter().any(|s| summary.starts_with(s)) {
        BugType::Syntax
    } else if IMPORT.iter().any(|s| summary.starts_with(s)) {
        BugType::Import
    } else {
        BugType::TypeError
    }
}

/// A hadolint rule code (`DL3008`, `SC2086`) right after the first `path:N ` of the line (one
/// memchr, then a few byte tests).
fn hadolint_shape(t: &str) -> bool {
    let Some(sp) = memchr::memchr(b' ', t.as_bytes()) else {
        return false;
    };
    let head = t[..sp].trim_end_matches(':');
    let rest = &t[sp + 1..];
    head.as_bytes().last().is_some_and(u8::is_ascii_digit)
        && (rest.starts_with("DL") || rest.starts_with("SC"))
}

/// hadolint tty `Dockerfile:12 DL3008 warning: msg` (`Dockerfile:12 DL3008 msg` before 2.0) and
/// gnu `hadolint:Dockerfile:12: DL3008 warning: msg`.
fn hadolint(seq: u64, t: &str, stdin: Option<&str>, sink: &mut Sink) -> bool {
    let t = t.strip_prefix("hadolint:").unwrap_or(t);
    let Some((loc, rest)) = t.split_once(' ') else {
        return false;
    };
    let loc = loc.strip_suffix(':').unwrap_or(loc);
    let Some((path, line)) = loc.rsplit_once(':') else {
        return false;
    };
    let Some(line) = super::num(line) else {
        return false;
    };
    let Some((code, msg)) = rest.split_once(' ') else {
        return false;
    };
    let b = code.as_bytes();
    if b.len() != 6 || !(code.starts_with("DL") || code.starts_with("SC")) {
        return false;
    }
    if !b[2..].iter().all(u8::is_ascii_digit) || path.is_empty() {
        return false;
    }
    // Standard input: the file is the one the echoed command redirected, else unknown.
    let path = if path == "-" || path == "/dev/stdin" {
        match stdin {
            Some(file) => file,
            None => return true,
        }
    } else {
        path
    };
    let (severity, msg) = match msg.split_once(": ") {
        Some((s @ ("error" | "warning" | "info" | "style"), m)) => (Some(s), m),
        _ => (None, msg),
    };
    if matches!(severity, None | Some("error" | "warning")) {
        sink.emit(
            seq,
            Finding::new(path, line, BugType::Linting, msg)
                .conf(0.9)
                .tool("hadolint")
                .rule(Some(code)),
        );
    }
    true
}

/// The line's first `:` ends a `.md` path (one memchr: markdown linters print the path first).
fn md_first_colon(t: &str) -> bool {
    memchr::memchr(b':', t.as_bytes()).is_some_and(|i| t[..i].ends_with(".md"))
}

/// markdownlint `README.md: 750: MD034/no-bare-urls Bare URL used` (markdownlint-cli 0.x),
/// `README.md:3:1 MD022/blanks-around-headings …` (later versions and markdownlint-cli2), and
/// tldr-lint `pages/common/x.md:3: TLDR004 Command descriptions should end in a period`.
fn markdown_lint(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let Some((path, rest)) = t.split_once(".md:") else {
        return false;
    };
    if path.is_empty() || path.contains(' ') {
        return false;
    }
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(line) = super::num(&rest[..digits]) else {
        return false;
    };
    let mut tail = &rest[digits..];
    let mut col = None;
    if let Some(c) = tail.strip_prefix(':') {
        let n = c.bytes().take_while(u8::is_ascii_digit).count();
        col = super::num(&c[..n]);
        tail = &c[n..];
    }
    let tail = tail.trim_start_matches(':').trim_start();
    let tail = tail.strip_prefix("error ").unwrap_or(tail);
    let Some((code, msg)) = tail.split_once(' ') else {
        return false;
    };
    let (tool, digits) = if let Some(d) = code.strip_prefix("MD") {
        ("markdownlint", d.split('/').next().unwrap_or(""))
    } else if let Some(d) = code.strip_prefix("TLDR") {
        ("tldr-lint", d)
    } else {
        return false;
    };
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let file = format!("{path}.md");
    sink.emit(
        seq,
        Finding::new(&file, line, BugType::Linting, msg)
            .col(col)
            .conf(0.9)
            .tool(tool)
            .rule(Some(code)),
    );
    true
}

/// actionlint `path.yml:L:C: message [rule]`.
fn actionlint(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let Some((msg, rule)) = t.strip_suffix(']').and_then(|m| m.rsplit_once(" [")) else {
        return false;
    };
    if !ACTIONLINT_RULES.contains(&rule) {
        return false;
    }
    let mut it = msg.splitn(4, ':');
    let (Some(path), Some(l), Some(c), Some(text)) = (it.next(), it.next(), it.next(), it.next())
    else {
        return false;
    };
    if !is_yaml(path) {
        return false;
    }
    let (Some(line), col) = (super::num(l), super::num(c)) else {
        return false;
    };
    let text = text.trim();
    let ty = if text.starts_with("could not parse as YAML") {
        BugType::Syntax
    } else {
        BugType::Linting
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, text)
            .col(col)
            .conf(0.9)
            .tool("actionlint")
            .rule(Some(rule)),
    );
    true
}

/// GitHub Actions refusing a workflow file: `Error: .github/workflows/x.yml (Line: 12, Col: 19):
/// Unexpected value ''` (its summary line `Error: The template is not valid. …` repeats them).
fn workflow_template_error(seq: u64, rest: &str, sink: &mut Sink) -> bool {
    let Some((path, tail)) = rest.split_once(" (Line: ") else {
        return false;
    };
    if !is_yaml(path) || path.contains(' ') {
        return false;
    }
    let Some((pos, msg)) = tail.split_once("): ") else {
        return false;
    };
    let (l, c) = pos.split_once(", Col: ").unwrap_or((pos, ""));
    let Some(line) = super::num(l) else {
        return false;
    };
    sink.emit(
        seq,
        Finding::new(path, line, BugType::TypeError, msg)
            .col(super::num(c))
            .conf(0.9)
            .tool("actions"),
    );
    true
}

/// tflint `--format compact`: `main.tf:1:1: Warning - message (rule)`.
fn tflint_compact(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let Some((loc, rest)) = t.split_once(": ") else {
        return false;
    };
    // tflint fails on warnings as well as errors by default.
    let Some(msg) = rest
        .strip_prefix("Error - ")
        .or_else(|| rest.strip_prefix("Warning - "))
    else {
        return rest.starts_with("Notice - ");
    };
    let mut it = loc.rsplitn(3, ':');
    let (Some(c), Some(l), Some(path)) = (it.next(), it.next(), it.next()) else {
        return false;
    };
    if !matches!(super::ext(path), "tf" | "hcl" | "json") {
        return false;
    }
    let (Some(line), col) = (super::num(l), super::num(c)) else {
        return false;
    };
    let (text, rule) = split_paren_rule(msg);
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, text)
            .col(col)
            .conf(0.9)
            .tool("tflint")
            .rule(rule),
    );
    true
}

/// yamllint `--format github`: `::error file=x.yml,line=3,col=1::3:1 [rule] message`.
fn yamllint_github(seq: u64, t: &str, sink: &mut Sink) -> bool {
    let Some(rest) = t.strip_prefix("::error file=") else {
        return false;
    };
    let Some((params, msg)) = rest.split_once("::") else {
        return false;
    };
    let file = params.split(',').next().unwrap_or("");
    if !is_yaml(file) {
        return false;
    }
    let Some((_, after)) = msg.split_once(" [") else {
        return false;
    };
    let Some((rule, text)) = after.split_once("] ") else {
        return false;
    };
    let mut line = None;
    let mut col = None;
    for kv in params.split(',') {
        match kv.split_once('=') {
            Some(("line", v)) => line = super::num(v),
            Some(("col", v)) => col = super::num(v),
            _ => {}
        }
    }
    let Some(line) = line else {
        return false;
    };
    let ty = if rule == "syntax" {
        BugType::Syntax
    } else {
        BugType::Linting
    };
    sink.emit(
        seq,
        Finding::new(file, line, ty, text)
            .col(col)
            .conf(0.9)
            .tool("yamllint")
            .rule(Some(rule)),
    );
    true
}

/// The value of `name='…'` or `name="…"` in an XML tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = tag[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before_ok = at == 0 || tag.as_bytes()[at - 1] == b' ';
        let rest = &tag[from..];
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        if !before_ok {
            continue;
        }
        let q = rest.chars().next()?;
        if q != '\'' && q != '"' {
            return None;
        }
        let body = &rest[1..];
        return body.find(q).map(|end| &body[..end]);
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn terraform_github_actions_working_directory() {
        // ESIPFed/qhub's terraform-github-actions run, quoted in nebari-dev/nebari#498.
        let log = "Successfully unzipped Terraform v0.13.5\nvalidate: info: validating Terraform configuration in infrastructure\nvalidate: error: failed to validate Terraform configuration in infrastructure\n\nError: Unsupported argument\n\n  on kubernetes.tf line 118, in module \"qhub\":\n 118:   dask-gateway-overrides = [\n\nAn argument named \"dask-gateway-overrides\" is not expected here.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("infrastructure/kubernetes.tf", 118, BugType::TypeError)
        );
        // The action's default directory is the checkout's root.
        let root = log.replace("in infrastructure", "in .");
        let r = parse_str(&root, &ParseOptions::default());
        assert_eq!(r[0].file_path, "kubernetes.tf");
        // Only the action's own lines name it, not a script's echo.
        assert_eq!(
            super::tf_action_dir("Validating Terraform configuration in infra"),
            None
        );
    }

    #[test]
    fn the_idle_check_passes_every_subcommand_line_of_the_action() {
        // The quiet check scans at most ten bytes: every subcommand the action runs fits.
        for sub in [
            "fmt",
            "init",
            "plan",
            "apply",
            "output",
            "import",
            "taint",
            "untaint",
            "destroy",
            "validate",
            "refresh",
            "providers",
            "workspace",
        ] {
            for line in [
                format!("{sub}: info: validating Terraform configuration in infrastructure"),
                format!(
                    "{sub}: error: failed to validate Terraform configuration in infrastructure"
                ),
            ] {
                assert!(super::tf_action_dir(&line).is_some(), "{line}");
                assert!(super::tf_action_shape(&line), "{line}");
            }
        }
        assert!(!super::tf_action_shape("warning: unused variable: `x`"));
        assert!(!super::tf_action_shape("validate: warning: something"));
    }

    #[test]
    fn pyyaml_marks_and_hadolint_on_stdin() {
        // pre-commit's check-yaml: the problem's mark, not the context's.
        let log = "Check Yaml...............................................................Failed\nWhile parsing a block mapping\n  in \"docs/config.yml\", line 1, column 1\ndid not find expected key\n  in \"docs/config.yml\", line 25, column 2\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("docs/config.yml", 25)
        );
        assert_eq!(r[0].error_type, BugType::Syntax);
        assert_eq!(r[0].message, "did not find expected key");
        // docker-compose v1 with a single mark; a mark in a string names no file.
        let log = "ERROR: yaml.scanner.ScannerError: mapping values are not allowed here\n  in \"./docker-compose.yml\", line 4, column 22\n\n  in \"<unicode string>\", line 3, column 1\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("docker-compose.yml", 4)
        );
        // hadolint reading its standard input names the file `-` or `/dev/stdin`: the echoed
        // command's redirection says which; without one, nothing.
        let log = "$ docker run --rm -i hadolint/hadolint < docker/Dockerfile\n/dev/stdin:8 DL3008 Pin versions in apt get install.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("docker/Dockerfile", 8)
        );
        assert!(
            parse_str(
                "-:8 DL3008 warning: Pin versions\n",
                &ParseOptions::default()
            )
            .is_empty()
        );
    }

    fn parse(log: &str) -> Vec<(String, u32, BugType, Option<String>)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type, r.rule))
            .collect()
    }

    #[test]
    fn hadolint_formats() {
        // hadolint's own formatter tests (TTY, Gnu) and its README.
        let log = "Dockerfile:3 DL3008 warning: Pin versions in apt get install. Instead of `apt-get install <package>` use `apt-get install <package>=<version>`\nDockerfile:5 SC2086 info: Double quote to prevent globbing and word splitting.\nhadolint:docker/Dockerfile:7: DL3020 error: Use COPY instead of ADD for files and folders\nDockerfile:9 DL3006 Always tag the version of an image explicitly\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("Dockerfile", 3));
        assert_eq!(r[0].3.as_deref(), Some("DL3008"));
        assert_eq!((r[1].0.as_str(), r[1].1), ("docker/Dockerfile", 7));
        assert_eq!(r[2].1, 9);
    }

    #[test]
    fn yamllint_standard_and_github() {
        // camaraproject/DeviceLocation#166: `--format github` copied from the Actions page.
        let web = "code/API_definitions/geofencing.yaml\n  Error: 6:1 [trailing-spaces] trailing spaces\n  Error: 11:152 [trailing-spaces] trailing spaces\n";
        assert_eq!(parse(web).len(), 2);
        let log = "config/app.yml\n  1:1       warning  missing document start \"---\"  (document-start)\n  3:81      error    line too long (122 > 80 characters)  (line-length)\n  7:1       error    syntax error: expected <block end>, but found '-' (syntax)\n\n::error file=ci.yaml,line=4,col=3::4:3 [indentation] wrong indentation: expected 4 but found 2\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("config/app.yml", 3));
        assert_eq!(r[1].2, BugType::Syntax);
        assert_eq!((r[2].0.as_str(), r[2].1), ("ci.yaml", 4));
        assert_eq!(r[2].3.as_deref(), Some("indentation"));
    }

    #[test]
    fn actionlint_lines() {
        // rhysd/actionlint scripts/generate-actionlint-matcher/test/no_escape.txt.
        let log = "./testdata/err/one_error.yaml:6:41: \"github.event.head_commit.message\" is potentially untrusted. avoid using it directly in inline scripts. [expression]\n  |\n6 |       - run: echo \"Checking commit '${{ github.event.head_commit.message }}'\"\nsrc/a.yaml:3:1: not a rule [made-up]\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].0.as_str(), r[0].1),
            ("testdata/err/one_error.yaml", 6)
        );
        assert_eq!(r[0].3.as_deref(), Some("expression"));
    }

    #[test]
    fn terraform_and_tflint() {
        let log = "╷\n│ Error: Unsupported argument\n│ \n│   on main.tf line 12, in resource \"aws_instance\" \"web\":\n│   12:   foo = \"bar\"\n│ \n│ An argument named \"foo\" is not expected here.\n╵\n╷\n│ Warning: Deprecated attribute\n│ \n│   on vars.tf line 3, in variable \"x\":\n╵\n2 issue(s) found:\n\nError: \"t1.2xlarge\" is an invalid value as instance_type (aws_instance_invalid_type)\n\n  on template.tf line 2:\n   2:   instance_type = \"t1.2xlarge\" # invalid type!\n\nmodules/x/main.tf:1:1: Warning - variable \"foo\" is declared but not used (terraform_unused_declarations)\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(
            (r[0].0.as_str(), r[0].1, r[0].2),
            ("main.tf", 12, BugType::TypeError)
        );
        assert_eq!(
            (r[1].0.as_str(), r[1].1, r[1].2),
            ("template.tf", 2, BugType::Linting)
        );
        assert_eq!(r[1].3.as_deref(), Some("aws_instance_invalid_type"));
        assert_eq!(r[2].0, "modules/x/main.tf");
    }

    #[test]
    fn workflow_template_errors() {
        // Azure/missionlz#103.
        let log = "Error: .github/workflows/validate-terraform.yml (Line: 12, Col: 19): Unexpected value ''\nError: The template is not valid. .github/workflows/validate-terraform.yml (Line: 12, Col: 19): Unexpected value ''\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].0.as_str(), r[0].1, r[0].2),
            (
                ".github/workflows/validate-terraform.yml",
                12,
                BugType::TypeError
            )
        );
    }

    #[test]
    fn markdown_linters() {
        // LogChunks Travis logs: airbnb/javascript (markdownlint-cli 0.x), tldr-pages/tldr.
        let log = "react/README.md: 750: MD034/no-bare-urls Bare URL used [Context: \"https://reactjs.org/blog/2017/...\"]\npages/common/mat2.md:3: TLDR004 Command descriptions should end in a period\nREADME.md:3:1 MD022/blanks-around-headings Headings should be surrounded by blank lines\nnotes.md:3: a sentence\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("react/README.md", 750));
        assert_eq!(r[1].3.as_deref(), Some("TLDR004"));
        assert_eq!((r[2].0.as_str(), r[2].1), ("README.md", 3));
    }

    #[test]
    fn shellcheck_checkstyle() {
        let log = "<?xml version='1.0' encoding='UTF-8'?>\n<checkstyle version='4.5'>\n<file name='scripts/build.sh' >\n<error line='3' column='8' severity='error' message='Couldn&apos;t parse this test expression.' source='ShellCheck.SC1073' />\n<error line='5' column='6' severity='info' message='Double quote to prevent globbing and word splitting.' source='ShellCheck.SC2086' />\n</file>\n</checkstyle>\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].0.as_str(), r[0].1), ("scripts/build.sh", 3));
    }
}
