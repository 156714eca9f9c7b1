//! The tool tier's pure half: which of the project's own tools repairs a report, with which
//! command, in which image and at which version, and whether what the tool did may become a
//! patch.
//!
//! - [`FixTool::for_report`] maps a report's tool and rule (the parser's `rule: format` for a
//!   formatter check, a ruff rule code) to the tool whose fix is deterministic.
//! - [`FixTool::argv`] is the command run on exactly the reported files, never a glob.
//! - [`pinned_version`] reads the version the project pins from its manifests and lockfiles
//!   (`requirements*.txt`, `pyproject.toml`, `.pre-commit-config.yaml`, `package-lock.json`,
//!   `package.json`, `rust-toolchain(.toml)`, `go.mod`), and [`choose_version`] decides between
//!   it and what the image carries, saying so when the pin cannot be honoured.
//! - [`judge_run`] turns the files the tool changed into a patch, or the reason there is none.
//! - [`check_hunks`] reads the hunks a formatter's own check prints (rustfmt's `Diff in`), and
//!   [`scoped_policy`] lets the guard allow a formatter exactly the lines its check reported:
//!   the whole file for a check that named the file, the hunks for one that printed them.
//!
//! It never runs a tool, reads a file or talks to Docker: the fix agent's shell
//! (`src/fix_agent/tool_tier.rs`) does, and passes the texts in.

use std::collections::BTreeMap;

use ci_medic_parser::BugReport;
use serde::{Deserialize, Serialize};

use crate::fix_check::{FileChange, GuardPolicy, LineSpan};
use crate::version_range::{Dialect, Range, RangeError, Version};

/// The image family a tool runs in; each is built locally (`.ci/fixer-images.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Python,
    Go,
    Rust,
    Clang,
    Node,
}

impl Ecosystem {
    pub const ALL: [Ecosystem; 5] = [
        Ecosystem::Python,
        Ecosystem::Go,
        Ecosystem::Rust,
        Ecosystem::Clang,
        Ecosystem::Node,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Python => "python",
            Ecosystem::Go => "go",
            Ecosystem::Rust => "rust",
            Ecosystem::Clang => "clang",
            Ecosystem::Node => "node",
        }
    }

    /// The image `.ci/fixer-images.sh` builds for this family.
    pub fn default_image(self) -> &'static str {
        match self {
            Ecosystem::Python => "ci-medic-fixer/python",
            Ecosystem::Go => "ci-medic-fixer/go",
            Ecosystem::Rust => "ci-medic-fixer/rust",
            Ecosystem::Clang => "ci-medic-fixer/clang",
            Ecosystem::Node => "ci-medic-fixer/node",
        }
    }
}

/// A tool whose fix is deterministic for the reports it answers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FixTool {
    Black,
    Isort,
    RuffFormat,
    /// `ruff check --fix --select RULE`: only the reported rule.
    RuffCheck {
        rule: String,
    },
    /// `simplify`: the check ran `gofmt -s` (gometalinter says `not gofmted with -s`).
    Gofmt {
        simplify: bool,
    },
    Rustfmt {
        edition: Option<String>,
    },
    ClangFormat,
    Prettier,
    /// `goimports -w`: gofmt plus the import block goimports' check reported.
    Goimports,
    /// ESLint's fixes for the reported rule only, with the project's own configuration: the
    /// Node API's `fix` predicate ([`ESLINT_SCRIPT`]), since the CLI's `--fix` applies every
    /// rule's fixes and `--rule` only adds rules.
    Eslint {
        rule: String,
    },
    /// `cargo clippy --fix` with only the reported lint (`needless_return` of
    /// `clippy::needless_return`) enabled among clippy's, by the toolchain in the Rust image's
    /// `/opt/rust` ([`CLIPPY_SCRIPT`]).
    Clippy {
        lint: String,
    },
}

/// Extensions each tool is run on; a report on another file is not the tool's.
const PYTHON: &[&str] = &["py", "pyi"];
const CLANG: &[&str] = &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm"];
const ESLINT: &[&str] = &["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "vue"];
const PRETTIER: &[&str] = &[
    "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "json", "css", "scss", "less", "md",
    "yml", "yaml", "html", "vue", "graphql",
];

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// An ESLint rule id as ESLint prints it: a core rule (`prefer-const`) or a plugin's
/// (`@typescript-eslint/consistent-type-imports`, `react/jsx-key`).
fn is_eslint_rule(rule: &str) -> bool {
    !rule.is_empty()
        && rule.len() <= 100
        && rule.starts_with(|c: char| c.is_ascii_lowercase() || c == '@')
        && rule
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "@/-_".contains(c))
}

/// A clippy lint as the parser records it (`clippy::needless_return`) → its name.
fn clippy_lint(rule: &str) -> Option<&str> {
    rule.strip_prefix("clippy::").filter(|l| {
        !l.is_empty()
            && l.len() <= 60
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    })
}

/// A ruff rule code as ruff prints it (`F401`, `I001`, `UP035`, `PLR1711`).
fn is_ruff_code(rule: &str) -> bool {
    let letters = rule.chars().take_while(char::is_ascii_uppercase).count();
    (1..=4).contains(&letters)
        && rule.len() > letters
        && rule.len() <= 8
        && rule[letters..].chars().all(|c| c.is_ascii_digit())
}

impl FixTool {
    /// The tool that repairs `report` deterministically, or `None`. `edition` is the Rust
    /// edition the project declares (see [`rust_edition`]); rustfmt parses as 2015 without it.
    pub fn for_report(report: &BugReport, edition: Option<&str>) -> Option<FixTool> {
        let tool = report.tool.as_deref()?;
        let rule = report.rule.as_deref().unwrap_or("");
        let ext = extension(&report.file_path);
        let tool = match (tool, rule) {
            ("black", "format") if PYTHON.contains(&ext) => FixTool::Black,
            ("isort", "format") if PYTHON.contains(&ext) => FixTool::Isort,
            ("ruff", "format") if PYTHON.contains(&ext) => FixTool::RuffFormat,
            ("ruff", code) if is_ruff_code(code) && PYTHON.contains(&ext) => FixTool::RuffCheck {
                rule: code.to_string(),
            },
            ("gofmt", "format") if ext == "go" => FixTool::Gofmt {
                simplify: report.message.contains("with -s"),
            },
            ("rustfmt", "format") if ext == "rs" => FixTool::Rustfmt {
                edition: edition.map(str::to_string),
            },
            ("clang-format", "format") if CLANG.contains(&ext) => FixTool::ClangFormat,
            ("prettier", "format") if PRETTIER.contains(&ext) => FixTool::Prettier,
            ("goimports", "format") if ext == "go" => FixTool::Goimports,
            ("eslint", rule) if is_eslint_rule(rule) && ESLINT.contains(&ext) => FixTool::Eslint {
                rule: rule.to_string(),
            },
            ("clippy", rule) if ext == "rs" => FixTool::Clippy {
                lint: clippy_lint(rule)?.to_string(),
            },
            _ => return None,
        };
        Some(tool)
    }

    /// The name its version goes by in the image's `ci-medic.tools` label and in pins.
    pub fn name(&self) -> &'static str {
        match self {
            FixTool::Black => "black",
            FixTool::Isort => "isort",
            FixTool::RuffFormat | FixTool::RuffCheck { .. } => "ruff",
            FixTool::Gofmt { .. } => "gofmt",
            FixTool::Rustfmt { .. } => "rustfmt",
            FixTool::ClangFormat => "clang-format",
            FixTool::Prettier => "prettier",
            FixTool::Goimports => "goimports",
            FixTool::Eslint { .. } => "eslint",
            FixTool::Clippy { .. } => "clippy",
        }
    }

    pub fn ecosystem(&self) -> Ecosystem {
        match self {
            FixTool::Black | FixTool::Isort | FixTool::RuffFormat | FixTool::RuffCheck { .. } => {
                Ecosystem::Python
            }
            FixTool::Gofmt { .. } | FixTool::Goimports => Ecosystem::Go,
            FixTool::Rustfmt { .. } | FixTool::Clippy { .. } => Ecosystem::Rust,
            FixTool::ClangFormat => Ecosystem::Clang,
            FixTool::Prettier | FixTool::Eslint { .. } => Ecosystem::Node,
        }
    }

    /// Whether it reformats the whole file (a formatter), rather than repairing one rule's
    /// findings at their lines.
    pub fn is_formatter(&self) -> bool {
        !matches!(
            self,
            FixTool::RuffCheck { .. } | FixTool::Eslint { .. } | FixTool::Clippy { .. }
        )
    }

    /// Whether its own check ([`FixTool::check_command`]) prints the hunks it would change, with
    /// their lines ([`check_hunks`] reads them): rustfmt's `--check` does. clang-format's
    /// names lines without their extent (its change's own hunks, [`diff_hunks`], give it); the
    /// others name the file only (black, isort, `ruff format`, gofmt and goimports `-l`,
    /// prettier `--check`).
    pub fn check_prints_hunks(&self) -> bool {
        matches!(self, FixTool::Rustfmt { .. })
    }

    /// The command, run from the repository root on exactly `files` (repo-relative). Each tool
    /// finds its own configuration in the tree (`pyproject.toml`, `ruff.toml`, `.isort.cfg`,
    /// `rustfmt.toml`, `.clang-format`, `.prettierrc`…) as it does in the project's CI. `--`
    /// keeps a file named like an option from being read as one.
    pub fn argv(&self, files: &[String]) -> Vec<String> {
        let mut argv: Vec<String> = match self {
            FixTool::Black => vec!["black", "--quiet", "--"],
            FixTool::Isort => vec!["isort", "--quiet", "--"],
            // No cache: it would be a file written beside the reported ones.
            FixTool::RuffFormat => vec!["ruff", "format", "--no-cache", "--"],
            FixTool::RuffCheck { rule } => {
                let mut v: Vec<String> = ["ruff", "check", "--no-cache", "--fix", "--select"]
                    .map(String::from)
                    .to_vec();
                v.push(rule.clone());
                v.push("--".into());
                v.extend(files.iter().cloned());
                return v;
            }
            FixTool::Gofmt { simplify: false } => vec!["gofmt", "-w", "--"],
            FixTool::Gofmt { simplify: true } => vec!["gofmt", "-s", "-w", "--"],
            FixTool::Rustfmt { edition } => {
                let mut v = vec!["rustfmt".to_string()];
                if let Some(e) = edition {
                    v.push("--edition".into());
                    v.push(e.clone());
                }
                v.push("--".into());
                v.extend(files.iter().cloned());
                return v;
            }
            FixTool::ClangFormat => vec!["clang-format", "-i", "--style=file", "--"],
            FixTool::Prettier => vec!["prettier", "--write", "--log-level=warn", "--"],
            FixTool::Goimports => vec!["goimports", "-w", "--"],
            FixTool::Eslint { rule } => {
                let mut v: Vec<String> = ["node", "-e", ESLINT_SCRIPT, "--", "fix"]
                    .map(String::from)
                    .to_vec();
                v.push(rule.clone());
                v.extend(files.iter().cloned());
                return v;
            }
            // clippy works on the whole crate, never on one file: a fix it makes to another
            // file than the reported one is refused by the judge.
            FixTool::Clippy { lint } => {
                return ["sh", "-c", CLIPPY_SCRIPT, "clippy", "fix", lint.as_str()]
                    .map(String::from)
                    .to_vec();
            }
        }
        .into_iter()
        .map(String::from)
        .collect();
        argv.extend(files.iter().cloned());
        argv
    }

    /// The tool's own check on `files`, as a `/bin/sh -c` command that fails when the check
    /// fails: what a project's CI runs, and what judges whether a fix worked.
    pub fn check_command(&self, files: &[String]) -> String {
        let quoted = shell_words(files);
        let words = |argv: &[&str]| {
            let v: Vec<String> = argv.iter().map(|w| w.to_string()).collect();
            format!("{} -- {quoted}", shell_words(&v))
        };
        match self {
            FixTool::Black => words(&["black", "--check", "--quiet"]),
            FixTool::Isort => words(&["isort", "--check-only", "--quiet"]),
            FixTool::RuffFormat => words(&["ruff", "format", "--no-cache", "--check"]),
            FixTool::RuffCheck { rule } => {
                words(&["ruff", "check", "--no-cache", "--select", rule.as_str()])
            }
            // `gofmt -l` lists what it would change and exits 0 either way.
            FixTool::Gofmt { simplify } => format!(
                "out=$(gofmt {}-l -- {quoted}) && test -z \"$out\"",
                if *simplify { "-s " } else { "" }
            ),
            FixTool::Rustfmt { edition } => match edition {
                Some(e) => words(&["rustfmt", "--check", "--edition", e.as_str()]),
                None => words(&["rustfmt", "--check"]),
            },
            FixTool::ClangFormat => {
                words(&["clang-format", "--dry-run", "-Werror", "--style=file"])
            }
            FixTool::Prettier => words(&["prettier", "--check", "--log-level=warn"]),
            FixTool::Goimports => format!("out=$(goimports -l -- {quoted}) && test -z \"$out\""),
            FixTool::Eslint { rule } => {
                let argv: Vec<String> = ["node", "-e", ESLINT_SCRIPT, "--", "check", rule]
                    .map(String::from)
                    .to_vec();
                format!("{} {quoted}", shell_words(&argv))
            }
            FixTool::Clippy { lint } => shell_words(
                &["sh", "-c", CLIPPY_SCRIPT, "clippy", "check", lint.as_str()].map(String::from),
            ),
        }
    }

    /// What the fix reason says the tool did, before the file's name.
    pub fn action(&self) -> String {
        match self {
            FixTool::RuffCheck { rule } => format!("Applied the fix for {rule} to"),
            FixTool::Eslint { rule } => format!("Applied ESLint's fix for {rule} to"),
            FixTool::Clippy { lint } => format!("Applied clippy's fix for clippy::{lint} to"),
            FixTool::Isort | FixTool::Goimports => "Sorted the imports of".into(),
            _ => "Reformatted".into(),
        }
    }
}

/// The tier's ESLint driver, run as `node -e ESLINT_SCRIPT -- MODE RULE FILE…` from the
/// repository root in the sandbox. It uses ESLint's Node API with the project's own
/// configuration (found as the CLI finds it), and:
///
/// - `fix`: applies the fixes of RULE's messages only (the documented `fix` predicate), and
///   writes them;
/// - `check`: prints RULE's remaining errors as `file:line:col: message (rule)` and exits 1 when
///   there are any.
///
/// A file that does not parse, or a configuration ESLint cannot load, exits 2 with ESLint's own
/// words. `require("eslint")` finds the image's ESLint by Node's lookup up to `/node_modules`.
pub const ESLINT_SCRIPT: &str = r#"const [mode, rule, ...files] = process.argv.slice(1);
const { ESLint } = require("eslint");
(async () => {
  const fix = mode === "fix" ? (m) => m.ruleId === rule : false;
  const eslint = new ESLint({ fix });
  const results = await eslint.lintFiles(files);
  if (mode === "fix") await ESLint.outputFixes(results);
  let left = 0;
  for (const r of results) {
    for (const m of r.messages) {
      if (m.fatal) {
        console.error(`${r.filePath}:${m.line}:${m.column}: ${m.message}`);
        process.exitCode = 2;
      } else if (m.ruleId === rule && m.severity === 2) {
        left += 1;
        if (mode === "check") console.log(`${r.filePath}:${m.line}:${m.column}: ${m.message} (${rule})`);
      }
    }
  }
  if (mode === "check" && left > 0 && !process.exitCode) process.exitCode = 1;
})().catch((e) => {
  console.error(String(e && e.message ? e.message : e));
  process.exitCode = 2;
});
"#;

/// The tier's clippy driver, run as `sh -c CLIPPY_SCRIPT clippy MODE LINT` from the crate's
/// root in the sandbox, with the toolchain in `/opt/rust`, offline (the sandbox has no
/// network: the crate's dependencies come from the image's `/opt/cargo-home`, filled by
/// [`CARGO_FETCH_SCRIPT`] in a step of its own, or are not there and cargo says so), and the
/// build in `/tmp` so nothing is written into the tree but the fix:
///
/// - `fix`: `cargo clippy --fix` with every clippy lint allowed but LINT, and every rustc lint
///   that warns by default allowed too (by name, as this rustc lists them; `-A warnings` would
///   silence LINT as well): `cargo fix` applies every warning's suggestion, and a rustc lint's
///   fix elsewhere in the file is not what was reported. `--keep-going`: a target that does not
///   build on a stable toolchain (a `#![feature(test)]` bench) leaves the others' fixes. A
///   `Cargo.lock` cargo makes for a crate that had none is removed (it is not part of the fix);
/// - `check`: fails when LINT still fires.
pub const CLIPPY_SCRIPT: &str = r#"mode=$1 lint=$2
export PATH="/opt/rust/bin:$PATH" CARGO_TARGET_DIR=/tmp/ci-medic-target
[ -d /opt/cargo-home ] && export CARGO_HOME=/opt/cargo-home
had_lock=no; [ -e Cargo.lock ] && had_lock=yes
if [ "$mode" = fix ]; then
  quiet=$(rustc -W help | awk '/^Lint groups/ { exit } $2 == "warn" && $1 != "warnings" { printf " -A %s", $1 }')
  cargo clippy --fix --allow-no-vcs --offline --quiet --all-targets --keep-going -- -A clippy::all $quiet -W "clippy::$lint"
else
  cargo clippy --offline --quiet --all-targets --keep-going -- -A clippy::all -D "clippy::$lint"
fi
rc=$?
[ "$had_lock" = yes ] || rm -f Cargo.lock
exit $rc
"#;

/// The step that gives clippy a crate's dependencies: run as root with a network in a container
/// of the Rust image, on a copy of the tree at `/src`, it downloads them into
/// `/opt/cargo-home`, which the container is then committed with (a cached image per set of
/// dependencies, [`cargo_deps_tag`]); clippy then runs from that image with no network.
///
/// `cargo fetch` resolves and downloads; it compiles nothing, so no build script, proc-macro or
/// test of the repository (nor of a dependency) runs. What of the repository could still act is
/// cargo's configuration: a `.cargo/config.toml` can replace sources, set a proxy or a
/// credential provider (a program cargo runs) or a `rustc` wrapper. Every `.cargo` directory of
/// the copy is deleted before cargo starts, so cargo reads only the manifests and the lockfile
/// (the repository's configuration still applies in the clippy step, which has no network).
/// `--locked` when the tree has a `Cargo.lock`: exactly the versions it names. The copy is
/// deleted before the commit; the cache is made readable and writable for the sandbox's user
/// (cargo unpacks the crates there; each run's changes stay in its own container).
pub const CARGO_FETCH_SCRIPT: &str = r#"export PATH="/opt/rust/bin:$PATH" CARGO_HOME=/opt/cargo-home CARGO_HTTP_CAINFO=/etc/ssl/certs/ca-certificates.crt HOME=/tmp
cd /src || exit 2
find . -depth -type d -name .cargo -exec rm -rf {} \;
locked=; [ -e Cargo.lock ] && locked=--locked
cargo fetch $locked --quiet
rc=$?
cd / && rm -rf /src
[ $rc = 0 ] && chmod -R a+rwX /opt/cargo-home
exit $rc
"#;

/// Whether the crate whose `Cargo.toml` (at the root) and `Cargo.lock` are given needs
/// packages from a registry or git: a lockfile with a `source` line, or, without one, a
/// manifest with a dependency table or a workspace (whose members may have one). A crate
/// without dependencies (fnv) is linted with no fetch step.
pub fn cargo_needs_fetch(cargo_toml: &str, cargo_lock: Option<&str>) -> bool {
    if let Some(lock) = cargo_lock {
        return lock
            .lines()
            .any(|l| l.trim_start().starts_with("source = "));
    }
    cargo_toml.lines().any(|l| {
        let t = l.trim();
        t.starts_with('[')
            && (t.contains("dependencies") || t.trim_matches(['[', ']']).trim() == "workspace")
    })
}

/// The tag of the cached image holding the dependencies whose manifests and lockfile hash to
/// `key` (hex): `pin-cargo-deps-0123456789abcdef`, kept and evicted with the pinned tool
/// versions of the same image.
pub fn cargo_deps_tag(key: &str) -> Option<String> {
    let key: String = key.chars().take(16).collect();
    (key.len() == 16 && key.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("pin-cargo-deps-{}", key.to_ascii_lowercase()))
}

/// Whether a formatter check reported the file as a whole: the parser's `format` rule at line
/// 1 with no column, which is how it records `would reformat x.py`, prettier's `[warn] x.ts`,
/// a `gofmt -l` listing or isort's `ERROR: x.py Imports are incorrectly sorted`. The formatter's
/// whole change to such a file is what the check asked for. (A rustfmt hunk at line 1 reads the
/// same; the formatter fixing it is then allowed the whole file too.)
pub fn names_whole_file(report: &BugReport) -> bool {
    report.rule.as_deref() == Some("format") && report.line_number == 1 && report.column.is_none()
}

/// `argv` quoted for `/bin/sh -c`: every word in single quotes, so nothing in a file name is
/// read by the shell.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One hunk of a formatter check's diff, in the lines of the file before formatting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckHunk {
    /// Every line the hunk shows, its context included: a reported line inside it is this
    /// hunk's report.
    pub shown: LineSpan,
    /// From its first changed line to its last (an insertion counts as the line above it): what
    /// the formatter may change.
    pub changed: LineSpan,
}

/// The hunks rustfmt's `--check` prints for `path` (repo-relative; rustfmt prints it relative,
/// or under `root`, the directory it ran in), from its output: a
/// `Diff in FILE at line N:` (rustfmt 1.4–1.5) or `Diff in FILE:N:` (1.6 and later) header,
/// where N is the hunk's first shown line, then its lines, each marked ` ` (context), `-` (the
/// file's line) or `+` (rustfmt's). Hunks of other files (rustfmt also checks the modules a
/// file declares) are left out.
pub fn check_hunks(output: &str, root: &str, path: &str) -> Vec<CheckHunk> {
    let mut hunks = Vec::new();
    // The hunk being read: its first shown line, the next line of the file, and its changes.
    let mut open: Option<(u32, u32, Option<LineSpan>)> = None;
    let close = |open: Option<(u32, u32, Option<LineSpan>)>, hunks: &mut Vec<CheckHunk>| {
        if let Some((first, next, Some(changed))) = open {
            hunks.push(CheckHunk {
                shown: LineSpan {
                    first,
                    last: next.saturating_sub(1).max(first),
                },
                changed,
            });
        }
    };
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("Diff in ") {
            close(open.take(), &mut hunks);
            open = rustfmt_header(rest)
                .filter(|(file, _)| same_file(file, root, path))
                .map(|(_, n)| (n, n, None));
            continue;
        }
        let Some((_, next, changed)) = open.as_mut() else {
            continue;
        };
        let mut widen = |l: u32| {
            *changed = Some(match *changed {
                Some(s) => LineSpan {
                    first: s.first.min(l),
                    last: s.last.max(l),
                },
                None => LineSpan { first: l, last: l },
            });
        };
        match line.as_bytes().first() {
            Some(b' ') => *next += 1,
            Some(b'-') => {
                widen(*next);
                *next += 1;
            }
            Some(b'+') => widen(next.saturating_sub(1).max(1)),
            // An empty context line loses its space in some logs; anything else ends the hunk.
            None => *next += 1,
            Some(_) => close(open.take(), &mut hunks),
        }
    }
    close(open, &mut hunks);
    hunks
}

/// `FILE at line N:` or `FILE:N:` → (FILE, N).
fn rustfmt_header(rest: &str) -> Option<(&str, u32)> {
    let rest = rest.trim_end().strip_suffix(':')?;
    if let Some((file, n)) = rest.rsplit_once(" at line ") {
        return Some((file, n.parse().ok()?));
    }
    let (file, n) = rest.rsplit_once(':')?;
    Some((file, n.parse().ok()?))
}

/// Whether `printed` (under `root`, or relative) names the repo-relative `path`.
fn same_file(printed: &str, root: &str, path: &str) -> bool {
    let printed = printed.trim_start_matches("./");
    printed == path
        || printed
            .strip_prefix(root.trim_end_matches('/'))
            .and_then(|rest| rest.strip_prefix('/'))
            == Some(path)
}

/// What a formatter's change may touch, as its own check reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatScope {
    /// The check named the file: the whole file.
    WholeFile,
    /// The check printed these hunks, or named lines of these hunks of the formatter's own
    /// change ([`diff_hunks`]).
    Hunks(Vec<CheckHunk>),
    /// Not a formatter (a lint rule's fix): the guard's window around the reported lines.
    ReportedLines,
}

/// The hunks of a formatter's own change from `before` to `after`, as `diff -U3` groups them:
/// what a check that names lines without their extent (clang-format's
/// `file:line:col: error: code should be clang-formatted`) reported, once a reported line is
/// among a hunk's lines. In `before`'s lines; an insertion counts as the line above it.
pub fn diff_hunks(before: &str, after: &str) -> Vec<CheckHunk> {
    use similar::DiffOp;
    let a: Vec<&str> = before.split_inclusive('\n').collect();
    let b: Vec<&str> = after.split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b);
    let line = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    similar::group_diff_ops(ops, 3)
        .into_iter()
        .filter_map(|group| {
            let mut changed: Option<LineSpan> = None;
            for op in group
                .iter()
                .filter(|op| !matches!(op, DiffOp::Equal { .. }))
            {
                let r = op.old_range();
                let (first, last) = if r.is_empty() {
                    let l = line(r.start).max(1);
                    (l, l)
                } else {
                    (line(r.start) + 1, line(r.end))
                };
                changed = Some(match changed {
                    Some(s) => LineSpan {
                        first: s.first.min(first),
                        last: s.last.max(last),
                    },
                    None => LineSpan { first, last },
                });
            }
            let changed = changed?;
            let first = line(group.first()?.old_range().start) + 1;
            let last = line(group.last()?.old_range().end);
            Some(CheckHunk {
                shown: LineSpan {
                    first: first.min(changed.first),
                    last: last.max(changed.last),
                },
                changed,
            })
        })
        .collect()
}

/// `policy` for the formatter's change to `path`: with [`FormatScope::WholeFile`] the file
/// is `whole_file_formatting`; with [`FormatScope::Hunks`], each hunk that shows a reported
/// line of `path` is allowed its changed lines, and the reported lines it shows lose their ±3
/// window (the hunk is their extent); hunks no report points at are not allowed. Every other
/// rule stands.
pub fn scoped_policy(policy: &GuardPolicy, path: &str, scope: &FormatScope) -> GuardPolicy {
    let mut p = policy.clone();
    match scope {
        FormatScope::WholeFile => {
            if !p.whole_file_formatting.iter().any(|f| f == path) {
                p.whole_file_formatting.push(path.to_string());
            }
        }
        FormatScope::Hunks(hunks) => {
            let lines: Vec<u32> = p
                .reported_lines
                .iter()
                .filter(|(f, _)| f == path)
                .map(|&(_, l)| l)
                .collect();
            let reported: Vec<&CheckHunk> = hunks
                .iter()
                .filter(|h| lines.iter().any(|&l| h.shown.contains(l)))
                .collect();
            p.reported_lines
                .retain(|(f, l)| f != path || !reported.iter().any(|h| h.shown.contains(*l)));
            for h in reported {
                let entry = (path.to_string(), h.changed);
                if !p.formatter_hunks.contains(&entry) {
                    p.formatter_hunks.push(entry);
                }
            }
        }
        FormatScope::ReportedLines => {}
    }
    p
}

/// A version the project pins, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// As the file states it: `==23.1.0`, `>=23,<24`, `^3.3.0`, `3.3.3` (a lockfile's), `1.63`.
    pub spec: String,
    /// The file it came from (`requirements-dev.txt`).
    pub source: String,
    /// Whose range syntax `spec` is; `None` for a toolchain's channel or version
    /// (`rust-toolchain.toml`, `go.mod`), compared by [`satisfies`].
    pub dialect: Option<Dialect>,
}

impl Pin {
    /// The range `spec` states, or why it is not read.
    pub fn range(&self) -> Result<Range, RangeError> {
        match self.dialect {
            Some(d) => Range::parse(&self.spec, d),
            None => Err(RangeError {
                spec: self.spec.clone(),
                why: "a toolchain, not a package".into(),
            }),
        }
    }

    /// Whether it names one version (`==24.1.1`, a lockfile's `3.3.3`).
    pub fn is_exact(&self) -> bool {
        self.range().is_ok_and(|r| r.exact().is_some())
    }
}

/// The version `tool` is pinned to by the files given (repo-relative path → text), or `None`
/// when none pins it. For Python a requirement's specifier (`black==23.1.0`, `black>=23,<24`,
/// `black~=23.1`, in `requirements*.txt` or a `pyproject.toml` list), Poetry's constraint
/// (`black = "^23.1"` under a `[tool.poetry…dependencies]` table), or a pre-commit hook's `rev`;
/// for npm the lockfile's resolved version first, then `package.json`'s range; the Rust
/// toolchain for rustfmt; `go.mod`'s `toolchain`, then its `go` line, for gofmt.
pub fn pinned_version(tool: &FixTool, files: &BTreeMap<String, String>) -> Option<Pin> {
    let pin = |spec: String, source: &str| Pin {
        spec,
        source: source.to_string(),
        dialect: None,
    };
    let ranged = |spec: String, source: &str, dialect: Dialect| Pin {
        spec,
        source: source.to_string(),
        dialect: Some(dialect),
    };
    match tool.ecosystem() {
        Ecosystem::Python => {
            let name = tool.name();
            let mut paths: Vec<&String> = files
                .keys()
                .filter(|p| {
                    let base = p.rsplit('/').next().unwrap_or(p);
                    (base.starts_with("requirements") && base.ends_with(".txt"))
                        || base == "pyproject.toml"
                })
                .collect();
            paths.sort();
            for path in paths {
                let poetry = path.ends_with("pyproject.toml");
                if let Some((spec, dialect)) = python_requirement(&files[path], name, poetry) {
                    return Some(ranged(spec, path, dialect));
                }
            }
            let hook = match tool {
                FixTool::Black => "psf/black",
                FixTool::Isort => "pycqa/isort",
                _ => "astral-sh/ruff-pre-commit",
            };
            let text = files.get(".pre-commit-config.yaml")?;
            pre_commit_rev(text, hook)
                .map(|v| ranged(v, ".pre-commit-config.yaml", Dialect::Pep440))
        }
        Ecosystem::Node => {
            let name = tool.name();
            if let Some(v) = files
                .get("package-lock.json")
                .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
                .and_then(|j| {
                    j.pointer(&format!("/packages/node_modules~1{name}/version"))
                        .or_else(|| j.pointer(&format!("/dependencies/{name}/version")))
                        .and_then(|v| v.as_str().map(str::to_string))
                })
            {
                return Some(ranged(v, "package-lock.json", Dialect::Npm));
            }
            let json: serde_json::Value = serde_json::from_str(files.get("package.json")?).ok()?;
            ["devDependencies", "dependencies"]
                .iter()
                .find_map(|k| json.pointer(&format!("/{k}/{name}"))?.as_str())
                .map(|v| ranged(v.trim().to_string(), "package.json", Dialect::Npm))
        }
        Ecosystem::Rust => {
            if let Some(t) = files.get("rust-toolchain.toml") {
                return toml_string(t, "channel").map(|v| pin(v, "rust-toolchain.toml"));
            }
            let t = files.get("rust-toolchain")?;
            let line = t.lines().map(str::trim).find(|l| !l.is_empty())?;
            // The legacy file holds either the channel alone or the TOML form.
            toml_string(t, "channel")
                .or_else(|| (!line.contains('=')).then(|| line.to_string()))
                .map(|v| pin(v, "rust-toolchain"))
        }
        Ecosystem::Go if *tool == FixTool::Goimports => {
            // goimports is golang.org/x/tools's; a module that tracks it requires it.
            let t = files.get("go.mod")?;
            t.lines()
                .map(|l| l.trim().trim_start_matches("require").trim())
                .find_map(|l| l.strip_prefix("golang.org/x/tools "))
                .and_then(|v| v.split_whitespace().next())
                .map(|v| pin(v.trim_start_matches('v').to_string(), "go.mod"))
        }
        Ecosystem::Go => {
            let t = files.get("go.mod")?;
            let word = |key: &str| {
                t.lines()
                    .filter_map(|l| l.trim().strip_prefix(key))
                    .find_map(|rest| rest.split_whitespace().next().map(str::to_string))
            };
            word("toolchain ")
                .map(|v| v.trim_start_matches("go").to_string())
                .or_else(|| word("go "))
                .map(|v| pin(v, "go.mod"))
        }
        Ecosystem::Clang => None,
    }
}

/// The specifier `name` is required with in a requirements file or a `pyproject.toml`
/// (`black[jupyter] >= 23, < 24 ; python_version > "3.8"` → `>= 23, < 24`), or, with `poetry`,
/// Poetry's constraint under a `[tool.poetry…dependencies]` table (`black = "^23.1"`,
/// `black = { version = "^23.1" }`). A line naming the tool without a version is not a pin; a
/// longer name that starts with it (`blacken-docs`, `ruff-lsp`) is not the tool.
fn python_requirement(text: &str, name: &str, poetry: bool) -> Option<(String, Dialect)> {
    let mut table = String::new();
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or("").trim();
        if line.starts_with('[') && !line.starts_with("[\"") && !line.starts_with("['") {
            table = line.trim_matches(['[', ']']).to_string();
            continue;
        }
        // The line itself (a requirements line, a Poetry key), then each string on it (a TOML
        // list, on one line or one entry per line).
        let strings = line
            .split(['"', '\''])
            .skip(1)
            .step_by(2)
            .map(|s| (true, s));
        for (quoted, candidate) in std::iter::once((false, line)).chain(strings) {
            let Some(after) = candidate
                .get(..name.len())
                .filter(|head| head.eq_ignore_ascii_case(name))
                .map(|_| &candidate[name.len()..])
            else {
                continue;
            };
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
                continue;
            }
            let mut spec = after.trim_start();
            if let Some(stripped) = spec.strip_prefix('[') {
                spec = stripped.split_once(']').map_or("", |(_, r)| r).trim_start();
            }
            // Poetry: `name = "^23.1"` or `name = { version = "^23.1", … }`.
            if !quoted && spec.starts_with('=') && !spec.starts_with("==") {
                if !(poetry && table.starts_with("tool.poetry") && table.ends_with("dependencies"))
                {
                    continue;
                }
                let value = spec[1..].trim();
                let constraint = if value.starts_with('{') {
                    toml_string(&value.replace([',', '{', '}'], "\n"), "version")
                } else {
                    Some(value.trim_matches(['"', '\'']).to_string())
                };
                match constraint {
                    Some(c) if !c.trim().is_empty() => {
                        return Some((c.trim().into(), Dialect::Poetry));
                    }
                    _ => continue,
                }
            }
            // A requirement: up to its environment marker, a pip option, a line continuation.
            let end = spec
                .find([';', '\\'])
                .or_else(|| spec.find(" --"))
                .unwrap_or(spec.len());
            let spec = spec[..end].trim();
            if spec.is_empty() || spec.starts_with('#') {
                continue;
            }
            return Some((spec.to_string(), Dialect::Pep440));
        }
    }
    None
}

/// The `rev:` of the pre-commit repository whose URL ends with `hook` (`psf/black`).
fn pre_commit_rev(text: &str, hook: &str) -> Option<String> {
    let mut in_repo = false;
    for line in text.lines() {
        let t = line.trim().trim_start_matches("- ").trim();
        if let Some(url) = t.strip_prefix("repo:") {
            let url = url
                .trim()
                .trim_matches(['"', '\''])
                .trim_end_matches(".git");
            in_repo = url
                .to_ascii_lowercase()
                .ends_with(&hook.to_ascii_lowercase());
        } else if in_repo && let Some(rev) = t.strip_prefix("rev:") {
            let rev = rev.trim().trim_matches(['"', '\'']);
            return Some(rev.trim_start_matches('v').to_string());
        }
    }
    None
}

/// `key = "value"` anywhere in a small TOML file (what `rust-toolchain.toml` and `Cargo.toml`'s
/// `edition` need; a full TOML parser would be a new dependency for two keys).
fn toml_string(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| {
            v.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\''])
                .to_string()
        })
    })
}

/// The edition `Cargo.toml` declares for the package (or the workspace's packages).
pub fn rust_edition(cargo_toml: &str) -> Option<String> {
    toml_string(cargo_toml, "edition")
        .filter(|e| ["2015", "2018", "2021", "2024"].contains(&e.as_str()))
}

/// The files [`pinned_version`] and [`rust_edition`] read, relative to the repository root.
pub const VERSION_FILES: &[&str] = &[
    "requirements.txt",
    "requirements-dev.txt",
    "requirements_dev.txt",
    "requirements-lint.txt",
    "requirements/dev.txt",
    "requirements/lint.txt",
    "pyproject.toml",
    ".pre-commit-config.yaml",
    "package.json",
    "package-lock.json",
    "rust-toolchain.toml",
    "rust-toolchain",
    "go.mod",
    "Cargo.toml",
];

/// The versions an image's `ci-medic.tools` label lists (`black=23.1.0,isort=5.6.4`).
pub fn parse_tools_label(label: &str) -> BTreeMap<String, String> {
    label
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The version that will run, and whether it honours the project's pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum VersionChoice {
    /// The image's version satisfies the pin (is it, or lies in its range).
    Pinned { version: String, pin: Pin },
    /// Nothing pins the tool: the image's version.
    Default { version: String },
    /// The project pins another version than the image carries; the image's is used and the
    /// fix reason says so.
    PinUnavailable { version: String, pin: Pin },
    /// The project pins a toolchain (`rust-toolchain.toml`, `go.mod`) other than the image's
    /// (`language` `toolchain`): only the image's toolchain exists here, and it is used.
    ToolchainUnavailable {
        version: String,
        language: String,
        toolchain: String,
        pin: Pin,
    },
    /// The pin is in a form ci-medic does not read (`why`); the image's version is used.
    PinNotUnderstood {
        version: String,
        pin: Pin,
        why: String,
    },
    /// The pinned version, or the newest satisfying the pinned range when it was installed,
    /// is in a cached image of its own ([`FixTool::install_command`]), and ran. `fresh`: it was
    /// installed for this run (for a range, an image cached earlier may hold an older version
    /// the range also holds).
    Installed {
        version: String,
        pin: Pin,
        fresh: bool,
    },
    /// The pinned version could not be installed (`why`); the image's is used.
    InstallFailed {
        version: String,
        pin: Pin,
        why: String,
    },
}

impl VersionChoice {
    pub fn version(&self) -> &str {
        match self {
            VersionChoice::Pinned { version, .. }
            | VersionChoice::Default { version }
            | VersionChoice::PinUnavailable { version, .. }
            | VersionChoice::ToolchainUnavailable { version, .. }
            | VersionChoice::PinNotUnderstood { version, .. }
            | VersionChoice::Installed { version, .. }
            | VersionChoice::InstallFailed { version, .. } => version,
        }
    }

    /// The words the fix reason carries after the tool's name.
    pub fn describe(&self, tool: &str) -> String {
        match self {
            VersionChoice::Pinned { version, pin } if pin_names(pin, version) => {
                format!("{tool} {version} (pinned in {})", pin.source)
            }
            VersionChoice::Pinned { version, pin } => format!(
                "{tool} {version} ({} pins `{}`, which the fixer image's version satisfies)",
                pin.source, pin.spec
            ),
            VersionChoice::Default { version } => {
                format!("{tool} {version} (the configured default; the project pins none)")
            }
            VersionChoice::PinUnavailable { version, pin } => format!(
                "{tool} {version} (the configured default: {} pins `{}`, which no fixer image has)",
                pin.source, pin.spec
            ),
            VersionChoice::ToolchainUnavailable {
                version,
                language,
                toolchain,
                pin,
            } => format!(
                "{tool} {version}{} (the configured default: {} pins {language} `{}`, a toolchain the tool tier cannot install; it used {language} {toolchain})",
                if toolchain == version {
                    String::new()
                } else {
                    format!(" of {language} {toolchain}")
                },
                pin.source,
                pin.spec
            ),
            VersionChoice::PinNotUnderstood { version, pin, why } => format!(
                "{tool} {version} (the configured default: {} pins `{}`, a form ci-medic does not read: {why})",
                pin.source, pin.spec
            ),
            VersionChoice::Installed { version, pin, .. } if pin.is_exact() => format!(
                "{tool} {version} (pinned in {}; installed from {} into a cached fixer image)",
                pin.source,
                registry(pin)
            ),
            VersionChoice::Installed {
                version,
                pin,
                fresh: true,
            } => format!(
                "{tool} {version} ({} pins `{}`; the newest version satisfying it was installed from {} into a cached fixer image)",
                pin.source,
                pin.spec,
                registry(pin)
            ),
            VersionChoice::Installed { version, pin, .. } => format!(
                "{tool} {version} ({} pins `{}`, which this version satisfies; installed from {} earlier, from a cached fixer image)",
                pin.source,
                pin.spec,
                registry(pin)
            ),
            VersionChoice::InstallFailed { version, pin, why } => format!(
                "{tool} {version} (the configured default: {} pins `{}`, which could not be installed: {why})",
                pin.source, pin.spec
            ),
        }
    }
}

/// Whether `pin` names `version` exactly (`==24.1.1`, a lockfile's `3.3.3`, a toolchain's
/// `1.63` for 1.63.0).
fn pin_names(pin: &Pin, version: &str) -> bool {
    match pin.dialect {
        None => satisfies(version, &pin.spec),
        Some(_) => pin
            .range()
            .ok()
            .and_then(|r| r.exact())
            .is_some_and(|e| Version::parse(&e) == Version::parse(version)),
    }
}

fn registry(pin: &Pin) -> &'static str {
    if pin.dialect == Some(Dialect::Npm) {
        "npm"
    } else {
        "PyPI"
    }
}

/// Where the install step's package managers find the CAs to trust: the bundle
/// `.ci/fixer-images.sh` puts into the Python and Node images (the host's).
pub const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The line the install step prints last: the version it installed, read back from the
/// package's own metadata (pip's or npm's choice within a range is known only then).
pub const INSTALLED_MARKER: &str = "ci-medic-installed=";

impl FixTool {
    /// The command that installs the version `pin` asks for (exact, or the newest in its
    /// range, as pip or npm resolve it) of the tool over the image's own, run as root with a
    /// network in a container of the tool's default image (nothing of the repository is in
    /// it), then prints [`INSTALLED_MARKER`] and the version installed: pip from its wheel
    /// (`/opt/pip/pip.whl`) into `/usr/local`, which Python and `PATH` search before Debian's
    /// packages; npm into the image's `/opt/fixers`, where `prettier`, `eslint` and the ESLint
    /// driver find their packages. The range is written from what [`Range`] understood, never
    /// copied from the file. `None` for the tools that come with a toolchain (rustfmt, gofmt,
    /// goimports, clang-format) and for a range the installer cannot state.
    pub fn install_command(&self, pin: &Pin) -> Option<String> {
        let range = pin.range().ok()?;
        let name = self.name();
        match (self.ecosystem(), pin.dialect?) {
            (Ecosystem::Python, Dialect::Pep440 | Dialect::Poetry) => Some(format!(
                "PIP_CERT={CA_BUNDLE} python3 /opt/pip/pip.whl/pip install --quiet --no-cache-dir \
                 --disable-pip-version-check --root-user-action=ignore --break-system-packages \
                 --prefix /usr {} && python3 -c {}",
                shell_words(&[format!("{name}{}", range.for_pip()?)]),
                shell_words(&[format!(
                    "import importlib.metadata as m; print('{INSTALLED_MARKER}' + m.version('{name}'))"
                )])
            )),
            (Ecosystem::Node, Dialect::Npm) => {
                let wanted = range.exact().map_or_else(|| range.for_npm(), Some)?;
                Some(format!(
                    "cd /opt/fixers && NODE_EXTRA_CA_CERTS={CA_BUNDLE} node \
                     node_modules/npm/bin/npm-cli.js install --silent --no-audit --no-fund \
                     --omit=dev --cache /tmp/npm {} && node -p {}",
                    shell_words(&[format!("{name}@{wanted}")]),
                    shell_words(&[format!(
                        "'{INSTALLED_MARKER}' + require('/opt/fixers/node_modules/{name}/package.json').version"
                    )])
                ))
            }
            _ => None,
        }
    }

    /// The tag of the cached image holding `version` of this tool, in the repository of the
    /// image it was installed into: `pin-black-24.1.1`. `None` for a version a tag cannot
    /// hold.
    pub fn pin_tag(&self, version: &str) -> Option<String> {
        tag_version(version).map(|v| format!("pin-{}-{v}", self.name()))
    }

    /// Among the cached images' `tags` (`repo:pin-black-23.12.1`), the newest version of this
    /// tool in `repo` that `range` holds, with its tag: a range is installed once, then its
    /// cached version is used.
    pub fn newest_cached(
        &self,
        tags: &[String],
        repo: &str,
        range: &Range,
    ) -> Option<(String, String)> {
        let prefix = format!("{repo}:pin-{}-", self.name());
        tags.iter()
            .filter_map(|t| {
                let v = t.strip_prefix(&prefix)?;
                let parsed = Version::parse(v)?;
                range
                    .contains(v)
                    .then(|| (parsed, t.clone(), v.to_string()))
            })
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, tag, v)| (tag, v))
    }
}

/// `version` when a Docker tag can carry it: a number first, then letters, digits, `.` and
/// `-` (`24.1.1`, `1.0.0rc1`, `3.0.0-beta.1`).
fn tag_version(version: &str) -> Option<&str> {
    let v = version.trim();
    (v.len() <= 64
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'))
    .then_some(v)
}

/// The version the install step printed after [`INSTALLED_MARKER`] (its last such line), when
/// it is one a tag can carry.
pub fn installed_version(output: &str) -> Option<String> {
    output
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(INSTALLED_MARKER))
        .and_then(tag_version)
        .map(str::to_string)
}

/// The repository part of an image reference (`registry:5000/a/b:tag` → `registry:5000/a/b`),
/// where a pinned version's image is tagged.
pub fn image_repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    }
}

/// Numeric parts of a version (`v1.63.0-stable` → `[1, 63, 0]`), stopping at the first part
/// that is not a number.
fn numbers(v: &str) -> Vec<u64> {
    v.trim()
        .trim_start_matches(['v', 'V', '=', ' '])
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// Whether `available` satisfies a toolchain's `spec`: an exact version (all the parts it
/// names), and the npm-like `^`, `~`, `>=` forms a few files use. A channel name (`stable`) or
/// anything unparsed is not satisfied by a numbered version. Package ranges are
/// [`Range`]'s.
pub fn satisfies(available: &str, spec: &str) -> bool {
    let have = numbers(available);
    let s = spec.trim();
    let (op, rest) = if let Some(r) = s.strip_prefix(">=") {
        (">=", r)
    } else if let Some(r) = s.strip_prefix('^') {
        ("^", r)
    } else if let Some(r) = s.strip_prefix('~') {
        ("~", r)
    } else {
        ("=", s)
    };
    let want = numbers(rest);
    if want.is_empty() || have.is_empty() {
        return false;
    }
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let not_older = (0..want.len().max(have.len())).find_map(|i| {
        let (h, w) = (at(&have, i), at(&want, i));
        (h != w).then_some(h > w)
    }) != Some(false);
    match op {
        ">=" => not_older,
        "^" => at(&have, 0) == at(&want, 0) && not_older,
        "~" => at(&have, 0) == at(&want, 0) && at(&have, 1) == at(&want, 1) && not_older,
        _ => want.iter().enumerate().all(|(i, w)| at(&have, i) == *w),
    }
}

/// Decides the version from the image's and the project's pin. For rustfmt the pin is a Rust
/// toolchain and is compared with the image's `rust` entry; for the others, with the tool's.
/// A package's pin is read as a range ([`Range`]): the image's version is used when the range
/// holds it.
pub fn choose_version(
    tool: &FixTool,
    pin: Option<Pin>,
    image_tools: &BTreeMap<String, String>,
) -> Option<VersionChoice> {
    let version = image_tools.get(tool.name())?.clone();
    let compared = match tool {
        FixTool::Rustfmt { .. } => image_tools.get("rust").cloned().unwrap_or_default(),
        _ => version.clone(),
    };
    let Some(pin) = pin else {
        return Some(VersionChoice::Default { version });
    };
    let held = match pin.dialect {
        None => satisfies(&compared, &pin.spec),
        Some(_) => match pin.range() {
            Ok(range) => range.contains(&compared),
            Err(e) => {
                return Some(VersionChoice::PinNotUnderstood {
                    version,
                    pin,
                    why: e.why,
                });
            }
        },
    };
    let language = match tool {
        FixTool::Rustfmt { .. } | FixTool::Clippy { .. } => Some("Rust"),
        FixTool::Gofmt { .. } => Some("Go"),
        _ => None,
    };
    Some(match (held, language) {
        (true, _) => VersionChoice::Pinned { version, pin },
        (false, Some(language)) if pin.dialect.is_none() => VersionChoice::ToolchainUnavailable {
            version,
            language: language.to_string(),
            toolchain: compared,
            pin,
        },
        (false, _) => VersionChoice::PinUnavailable { version, pin },
    })
}

/// Why a tool run gives no patch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoPatch {
    #[error("{tool} changed nothing in {files}")]
    Unchanged { tool: String, files: String },
    #[error("{tool} also changed files that were not reported ({others}); its change is not used")]
    ChangedOthers { tool: String, others: String },
    #[error("{tool} failed (exit code {exit_code}) without changing the file: {excerpt}")]
    Failed {
        tool: String,
        exit_code: i64,
        excerpt: String,
    },
    #[error("{tool} left `{path}` as something that is not UTF-8 text")]
    NotText { tool: String, path: String },
}

/// The files the tool changed as a patch: `reported` maps each reported file to its text
/// before the run, `after` holds the texts read back, `changed` every file the sandbox saw
/// modified. Any change outside the reported files, or none at all, is [`NoPatch`].
pub fn judge_run(
    tool: &FixTool,
    reported: &BTreeMap<String, String>,
    after: &BTreeMap<String, Option<String>>,
    changed: &[String],
    exit_code: i64,
    log_excerpt: &str,
) -> Result<Vec<FileChange>, NoPatch> {
    let name = tool.name().to_string();
    let mut others: Vec<&str> = changed
        .iter()
        .map(|p| p.trim_start_matches("./"))
        .filter(|p| !reported.contains_key(*p))
        .collect();
    others.sort_unstable();
    others.dedup();
    if !others.is_empty() {
        return Err(NoPatch::ChangedOthers {
            tool: name,
            others: others.join(", "),
        });
    }
    let mut changes = Vec::new();
    for (path, before) in reported {
        match after.get(path) {
            Some(Some(text)) if text != before => changes.push(FileChange {
                path: path.clone(),
                before: Some(before.clone()),
                after: text.clone(),
            }),
            Some(Some(_)) => {}
            _ => {
                return Err(NoPatch::NotText {
                    tool: name,
                    path: path.clone(),
                });
            }
        }
    }
    if changes.is_empty() {
        let files = reported
            .keys()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if exit_code != 0 {
            let mut excerpt: String = log_excerpt.trim().chars().take(300).collect();
            if excerpt.is_empty() {
                excerpt = "no output".into();
            }
            return Err(NoPatch::Failed {
                tool: name,
                exit_code,
                excerpt,
            });
        }
        return Err(NoPatch::Unchanged { tool: name, files });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ci_medic_parser::BugType;

    fn report(path: &str, tool: &str, rule: &str) -> BugReport {
        BugReport {
            file_path: path.into(),
            line_number: 1,
            error_type: BugType::Linting,
            message: "would reformat".into(),
            test_name: None,
            confidence_score: 0.5,
            column: None,
            tool: Some(tool.into()),
            rule: Some(rule.into()),
        }
    }

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reports_map_to_their_tools_and_only_on_their_files() {
        let t = |p, tool, rule| FixTool::for_report(&report(p, tool, rule), Some("2021"));
        assert_eq!(t("a/b.py", "black", "format"), Some(FixTool::Black));
        assert_eq!(t("a/b.py", "isort", "format"), Some(FixTool::Isort));
        assert_eq!(t("a/b.py", "ruff", "format"), Some(FixTool::RuffFormat));
        assert_eq!(
            t("a/b.py", "ruff", "F401"),
            Some(FixTool::RuffCheck {
                rule: "F401".into()
            })
        );
        assert_eq!(
            t("x.go", "gofmt", "format"),
            Some(FixTool::Gofmt { simplify: false })
        );
        let mut s = report("x.go", "gofmt", "format");
        s.message = "file is not gofmted with -s".into();
        assert_eq!(
            FixTool::for_report(&s, None),
            Some(FixTool::Gofmt { simplify: true })
        );
        assert_eq!(
            t("src/x.rs", "rustfmt", "format"),
            Some(FixTool::Rustfmt {
                edition: Some("2021".into())
            })
        );
        assert_eq!(
            t("a.cpp", "clang-format", "format"),
            Some(FixTool::ClangFormat)
        );
        assert_eq!(t("s/x.ts", "prettier", "format"), Some(FixTool::Prettier));
        // Not the tool's file, not a fixable rule, no tool at all.
        assert_eq!(t("README.md", "black", "format"), None);
        assert_eq!(t("x.go", "goimports", "format"), Some(FixTool::Goimports));
        assert_eq!(t("x.py", "goimports", "format"), None);
        assert_eq!(
            t(
                "src/a.ts",
                "eslint",
                "@typescript-eslint/consistent-type-imports"
            ),
            Some(FixTool::Eslint {
                rule: "@typescript-eslint/consistent-type-imports".into()
            })
        );
        assert_eq!(
            t("src/a.mjs", "eslint", "prefer-const"),
            Some(FixTool::Eslint {
                rule: "prefer-const".into()
            })
        );
        // Not a rule id (a parse error has none; a message is not one), not ESLint's file.
        assert_eq!(t("src/a.js", "eslint", ""), None);
        assert_eq!(t("src/a.js", "eslint", "Parsing error: x"), None);
        assert_eq!(t("src/a.css", "eslint", "prefer-const"), None);
        assert_eq!(t("a.py", "ruff", "invalid-syntax"), None);
        assert_eq!(
            t("src/lib.rs", "clippy", "clippy::assign_op_pattern"),
            Some(FixTool::Clippy {
                lint: "assign_op_pattern".into()
            })
        );
        assert_eq!(t("src/lib.rs", "clippy", "unused_parens"), None);
        assert_eq!(t("src/lib.rs", "clippy", "clippy::x; rm -rf /"), None);
        assert_eq!(t("build.py", "clippy", "clippy::needless_return"), None);
        assert_eq!(t("a.py", "pytest", "format"), None);
        let mut r = report("a.py", "black", "format");
        r.tool = None;
        assert_eq!(FixTool::for_report(&r, None), None);
    }

    #[test]
    fn commands_name_exactly_the_files_and_only_the_rule() {
        let f = vec!["src/a b.py".to_string(), "-rf".to_string()];
        assert_eq!(
            FixTool::RuffCheck {
                rule: "I001".into()
            }
            .argv(&f),
            [
                "ruff",
                "check",
                "--no-cache",
                "--fix",
                "--select",
                "I001",
                "--",
                "src/a b.py",
                "-rf"
            ]
        );
        assert_eq!(
            FixTool::Rustfmt { edition: None }.argv(&f[..1]),
            ["rustfmt", "--", "src/a b.py"]
        );
        assert_eq!(
            FixTool::Gofmt { simplify: false }.check_command(&["a.go".into()]),
            r#"out=$(gofmt -l -- 'a.go') && test -z "$out""#
        );
        assert_eq!(
            FixTool::RuffCheck {
                rule: "F401".into()
            }
            .check_command(&["a.py".into()]),
            "'ruff' 'check' '--no-cache' '--select' 'F401' -- 'a.py'"
        );
        // ESLint: the driver, the mode, the one rule, then only the files.
        let e = FixTool::Eslint {
            rule: "prefer-const".into(),
        };
        let argv = e.argv(&f[..1]);
        assert_eq!(argv[..3], ["node", "-e", ESLINT_SCRIPT]);
        assert_eq!(argv[3..], ["--", "fix", "prefer-const", "src/a b.py"]);
        assert!(
            e.check_command(&["a.js".into()])
                .ends_with("'--' 'check' 'prefer-const' 'a.js'")
        );
        assert!(!e.is_formatter());
        assert_eq!(
            FixTool::Goimports.argv(&f[..1]),
            ["goimports", "-w", "--", "src/a b.py"]
        );
        // clippy: the crate, the one lint; never a file name on its command line.
        let c = FixTool::Clippy {
            lint: "assign_op_pattern".into(),
        };
        assert_eq!(
            c.argv(&f),
            [
                "sh",
                "-c",
                CLIPPY_SCRIPT,
                "clippy",
                "fix",
                "assign_op_pattern"
            ]
        );
        assert!(
            c.check_command(&f)
                .ends_with("'clippy' 'check' 'assign_op_pattern'")
        );
        assert!(CLIPPY_SCRIPT.contains(r#"-A clippy::all $quiet -W "clippy::$lint""#));
        assert!(!c.is_formatter());
        assert_eq!(
            shell_words(&["echo".into(), "it's $(x)".into()]),
            r"'echo' 'it'\''s $(x)'"
        );
    }

    fn spec_of(tool: &FixTool, f: &BTreeMap<String, String>) -> Option<(String, String)> {
        pinned_version(tool, f).map(|p| (p.spec, p.source))
    }

    #[test]
    fn python_pins_are_specifiers_from_requirements_pyproject_poetry_or_pre_commit() {
        let f = files(&[
            ("requirements.txt", "flask>=2\nblacken-docs==1.16.0\n"),
            (
                "requirements-dev.txt",
                "# lint\nBlack[jupyter] == 24.1.1  # formatter\nisort\nruff>=0.1,<0.2 ; python_version >= \"3.8\" \\\n",
            ),
        ]);
        let p = pinned_version(&FixTool::Black, &f).expect("pinned");
        assert_eq!(
            (p.spec.as_str(), p.source.as_str(), p.dialect),
            ("== 24.1.1", "requirements-dev.txt", Some(Dialect::Pep440))
        );
        assert!(p.is_exact());
        // Named without a version: no pin.
        assert_eq!(pinned_version(&FixTool::Isort, &f), None);
        assert_eq!(spec_of(&FixTool::RuffFormat, &f).unwrap().0, ">=0.1,<0.2");
        let py = files(&[(
            "pyproject.toml",
            "[project.optional-dependencies]\ndev = [\n  \"ruff-lsp\",\n  \"ruff~=0.6.9\",\n  'black[d]>=23,<24',\n]\n[tool.black]\nline-length = 100\n",
        )]);
        assert_eq!(spec_of(&FixTool::RuffFormat, &py).unwrap().0, "~=0.6.9");
        let inline = files(&[(
            "pyproject.toml",
            "[project.optional-dependencies]\nlint = [\"flake8\", \"ruff==0.5.0\", 'isort>=5']\n",
        )]);
        assert_eq!(spec_of(&FixTool::RuffFormat, &inline).unwrap().0, "==0.5.0");
        assert_eq!(spec_of(&FixTool::Isort, &inline).unwrap().0, ">=5");
        assert_eq!(spec_of(&FixTool::Black, &py).unwrap().0, ">=23,<24");
        let poetry = files(&[(
            "pyproject.toml",
            "[tool.poetry.dependencies]\npython = \"^3.9\"\n\n[tool.poetry.group.dev.dependencies]\nblack = \"^23.1\"\nisort = { version = \"~5.12\", extras = [\"colors\"] }\n\n[tool.isort]\nprofile = \"black\"\n",
        )]);
        let p = pinned_version(&FixTool::Black, &poetry).unwrap();
        assert_eq!(
            (p.spec.as_str(), p.dialect),
            ("^23.1", Some(Dialect::Poetry))
        );
        assert_eq!(spec_of(&FixTool::Isort, &poetry).unwrap().0, "~5.12");
        // A key named like the tool outside a dependency table is not a pin.
        let settings = files(&[("pyproject.toml", "[tool.something]\nblack = \"23.1\"\n")]);
        assert_eq!(pinned_version(&FixTool::Black, &settings), None);
        let pc = files(&[(
            ".pre-commit-config.yaml",
            "repos:\n-   repo: https://github.com/psf/black\n    rev: 23.1.0\n    hooks:\n    -   id: black\n-   repo: https://github.com/PyCQA/isort\n    rev: \"5.12.0\"\n",
        )]);
        assert_eq!(spec_of(&FixTool::Black, &pc).unwrap().0, "23.1.0");
        assert!(pinned_version(&FixTool::Isort, &pc).unwrap().is_exact());
        assert_eq!(pinned_version(&FixTool::RuffFormat, &pc), None);
    }

    #[test]
    fn npm_pins_prefer_the_lockfile() {
        let pkg = r#"{"devDependencies": {"prettier": "^3.0.0"}}"#;
        let lock = r#"{"packages": {"node_modules/prettier": {"version": "3.3.3"}}}"#;
        let both = files(&[("package.json", pkg), ("package-lock.json", lock)]);
        let p = pinned_version(&FixTool::Prettier, &both).unwrap();
        assert_eq!(
            (p.spec.as_str(), p.source.as_str(), p.dialect),
            ("3.3.3", "package-lock.json", Some(Dialect::Npm))
        );
        let only = files(&[("package.json", pkg)]);
        assert_eq!(
            pinned_version(&FixTool::Prettier, &only).unwrap().spec,
            "^3.0.0"
        );
        assert_eq!(
            pinned_version(&FixTool::Prettier, &files(&[("package.json", "{")])),
            None
        );
    }

    #[test]
    fn rust_and_go_pins_are_toolchains() {
        let rs = FixTool::Rustfmt { edition: None };
        let t = files(&[(
            "rust-toolchain.toml",
            "[toolchain]\nchannel = \"1.63.0\"\ncomponents = [\"rustfmt\"]\n",
        )]);
        assert_eq!(pinned_version(&rs, &t).unwrap().spec, "1.63.0");
        assert_eq!(
            pinned_version(&rs, &files(&[("rust-toolchain", "nightly-2024-01-01\n")]))
                .unwrap()
                .spec,
            "nightly-2024-01-01"
        );
        let go = files(&[("go.mod", "module x\n\ngo 1.21\n\ntoolchain go1.21.4\n")]);
        assert_eq!(
            pinned_version(&FixTool::Gofmt { simplify: false }, &go)
                .unwrap()
                .spec,
            "1.21.4"
        );
        // goimports is golang.org/x/tools's, not the toolchain's.
        assert_eq!(pinned_version(&FixTool::Goimports, &go), None);
        let tools = files(&[(
            "go.mod",
            "module x\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/tools v0.5.0 // indirect\n)\n",
        )]);
        assert_eq!(
            pinned_version(&FixTool::Goimports, &tools).unwrap().spec,
            "0.5.0"
        );
        let go = files(&[("go.mod", "module x\ngo 1.19\n")]);
        assert_eq!(
            pinned_version(&FixTool::Gofmt { simplify: false }, &go)
                .unwrap()
                .spec,
            "1.19"
        );
        assert_eq!(
            rust_edition("[package]\nname = \"x\"\nedition = \"2021\"\n").as_deref(),
            Some("2021")
        );
        assert_eq!(rust_edition("[package]\nedition.workspace = true\n"), None);
    }

    #[test]
    fn versions_satisfy_specs() {
        assert!(satisfies("23.1.0", "23.1.0"));
        assert!(satisfies("1.19.8", "1.19"));
        assert!(!satisfies("1.19.8", "1.21.4"));
        assert!(satisfies("3.3.3", "^3.0.0"));
        assert!(!satisfies("2.8.8", "^3.0.0"));
        assert!(!satisfies("3.3.3", "~3.4.0"));
        assert!(satisfies("1.63.0", "1.63"));
        assert!(!satisfies("1.63.0", "stable"));
        assert!(satisfies("5.6.4", ">=5"));
    }

    fn pin(spec: &str, source: &str, dialect: Option<Dialect>) -> Pin {
        Pin {
            spec: spec.into(),
            source: source.into(),
            dialect,
        }
    }

    #[test]
    fn the_choice_says_when_a_pin_cannot_be_honoured() {
        let image = parse_tools_label("black=23.1.0,isort=5.6.4,ruff=0.6.9,prettier=3.3.3");
        let req = |s: &str| pin(s, "requirements-dev.txt", Some(Dialect::Pep440));
        let c = choose_version(&FixTool::Black, Some(req("==24.1.1")), &image).unwrap();
        assert_eq!(
            c.describe("black"),
            "black 23.1.0 (the configured default: requirements-dev.txt pins `==24.1.1`, which no fixer image has)"
        );
        let c = choose_version(&FixTool::Black, Some(req("==23.1.0")), &image).unwrap();
        assert!(matches!(c, VersionChoice::Pinned { .. }));
        assert_eq!(
            c.describe("black"),
            "black 23.1.0 (pinned in requirements-dev.txt)"
        );
        // A range the image's version lies in: used, and said so.
        let c = choose_version(&FixTool::Black, Some(req(">=23,<24")), &image).unwrap();
        assert_eq!(
            c.describe("black"),
            "black 23.1.0 (requirements-dev.txt pins `>=23,<24`, which the fixer image's version satisfies)"
        );
        let poetry = pin("^23.1", "pyproject.toml", Some(Dialect::Poetry));
        assert!(matches!(
            choose_version(&FixTool::Black, Some(poetry), &image),
            Some(VersionChoice::Pinned { .. })
        ));
        let c = choose_version(&FixTool::Black, Some(req("~=23.12")), &image).unwrap();
        assert!(matches!(c, VersionChoice::PinUnavailable { .. }), "{c:?}");
        let npm = |s: &str| pin(s, "package.json", Some(Dialect::Npm));
        assert!(matches!(
            choose_version(&FixTool::Prettier, Some(npm("^3.0.0")), &image),
            Some(VersionChoice::Pinned { .. })
        ));
        assert!(matches!(
            choose_version(&FixTool::Prettier, Some(npm("~3.0")), &image),
            Some(VersionChoice::PinUnavailable { .. })
        ));
        // A form not read: the default, and the reason says which form and why.
        let c = choose_version(&FixTool::Prettier, Some(npm("latest")), &image).unwrap();
        assert_eq!(
            c.describe("prettier"),
            "prettier 3.3.3 (the configured default: package.json pins `latest`, a form ci-medic does not read: `latest` is not a version)"
        );
        assert_eq!(
            choose_version(&FixTool::Isort, None, &image),
            Some(VersionChoice::Default {
                version: "5.6.4".into()
            })
        );
        assert_eq!(
            choose_version(&FixTool::Gofmt { simplify: true }, None, &image),
            None
        );
        let rust = parse_tools_label("rustfmt=1.5.1,rust=1.63.0");
        let c = choose_version(
            &FixTool::Rustfmt { edition: None },
            Some(pin("1.63", "rust-toolchain", None)),
            &rust,
        )
        .unwrap();
        assert_eq!(c.version(), "1.5.1");
        assert!(matches!(c, VersionChoice::Pinned { .. }));
        // A toolchain pin other than the image's: both versions named.
        let toolchain = |s: &str| pin(s, "rust-toolchain.toml", None);
        let c = choose_version(
            &FixTool::Rustfmt { edition: None },
            Some(toolchain("1.70.0")),
            &rust,
        )
        .unwrap();
        assert_eq!(
            c.describe("rustfmt"),
            "rustfmt 1.5.1 of Rust 1.63.0 (the configured default: rust-toolchain.toml pins Rust `1.70.0`, a toolchain the tool tier cannot install; it used Rust 1.63.0)"
        );
        let clippy = parse_tools_label("rustfmt=1.5.1,rust=1.63.0,clippy=1.95.0");
        let c = choose_version(
            &FixTool::Clippy { lint: "x".into() },
            Some(toolchain("nightly-2024-01-01")),
            &clippy,
        )
        .unwrap();
        assert_eq!(
            c.describe("clippy"),
            "clippy 1.95.0 (the configured default: rust-toolchain.toml pins Rust `nightly-2024-01-01`, a toolchain the tool tier cannot install; it used Rust 1.95.0)"
        );
        let go = parse_tools_label("gofmt=1.19.8,goimports=0.5.0");
        let c = choose_version(
            &FixTool::Gofmt { simplify: false },
            Some(pin("1.21.4", "go.mod", None)),
            &go,
        )
        .unwrap();
        assert_eq!(
            c.describe("gofmt"),
            "gofmt 1.19.8 (the configured default: go.mod pins Go `1.21.4`, a toolchain the tool tier cannot install; it used Go 1.19.8)"
        );
        // goimports' pin is golang.org/x/tools', not a toolchain.
        assert!(matches!(
            choose_version(&FixTool::Goimports, Some(pin("0.6.0", "go.mod", None)), &go),
            Some(VersionChoice::PinUnavailable { .. })
        ));
    }

    /// A real rustfmt `--check` log (ctest's Travis run, `fixtures/corpus/real/rust/`).
    const CTEST: &str = "/home/travis/build/gnzlbg/ctest";
    const CTEST_RUSTFMT: &str = include_str!(
        "../../../fixtures/corpus/real/rust/fmt-issues/rustfmt3136_travis_at_line.log"
    );

    #[test]
    fn rustfmt_hunks_are_read_with_their_extent_for_the_reported_file_only() {
        let lib = check_hunks(CTEST_RUSTFMT, CTEST, "src/lib.rs");
        let span = |first, last| LineSpan { first, last };
        assert_eq!(
            lib,
            [
                CheckHunk {
                    shown: span(721, 728),
                    changed: span(724, 725),
                },
                CheckHunk {
                    shown: span(1816, 1823),
                    changed: span(1819, 1820),
                },
            ]
        );
        let build = check_hunks(CTEST_RUSTFMT, CTEST, "testcrate/build.rs");
        assert_eq!(build.len(), 1);
        assert_eq!(build[0].changed, span(27, 28));
        assert!(check_hunks(CTEST_RUSTFMT, CTEST, "lib.rs").is_empty());
        // rustfmt 1.6's header, an insertion (the line above it counts), and a hunk whose
        // changes are apart: its extent runs from the first to the last.
        let new = "Diff in /w/src/a.rs:10:\n a\n-b\n+c\n d\n e\n f\n g\n+h\n i\nDiff in /w/src/a.rs:30:\n x\n+y\n";
        assert_eq!(
            check_hunks(new, "/w", "src/a.rs"),
            [
                CheckHunk {
                    shown: span(10, 16),
                    changed: span(11, 15),
                },
                CheckHunk {
                    shown: span(30, 30),
                    changed: span(30, 30),
                },
            ]
        );
    }

    #[test]
    fn a_formatters_own_change_is_cut_into_diff_s_hunks() {
        let before: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        // Line 5 changed, lines 7–8 removed (one hunk: 3 lines of context join them), a line
        // inserted after 20, and the last line changed (nine equal lines apart: two hunks).
        let after = before
            .replace("l5\n", "L5\n")
            .replace("l7\nl8\n", "")
            .replace("l20\n", "l20\nnew\n")
            .replace("l30\n", "l30");
        let span = |first, last| LineSpan { first, last };
        assert_eq!(
            diff_hunks(&before, &after),
            [
                CheckHunk {
                    shown: span(2, 11),
                    changed: span(5, 8),
                },
                CheckHunk {
                    shown: span(18, 23),
                    changed: span(20, 20),
                },
                CheckHunk {
                    shown: span(27, 30),
                    changed: span(30, 30),
                },
            ]
        );
        assert_eq!(diff_hunks(&before, &before), []);
        let one = diff_hunks("a\n", "b\n");
        assert_eq!(one[0].changed, span(1, 1));
        assert_eq!(one[0].shown, span(1, 1));
        // An insertion at the very top counts as line 1.
        assert_eq!(diff_hunks("a\n", "x\na\n")[0].changed, span(1, 1));
    }

    #[test]
    fn a_formatter_scope_allows_the_reported_hunks_and_nothing_else() {
        let policy = GuardPolicy {
            allowed_paths: vec!["src/lib.rs".into()],
            protected_paths: vec![],
            do_not_touch: vec![],
            max_files_changed: 3,
            no_new_dependencies: true,
            allowed_dependencies: vec![],
            confidence_threshold: 0.7,
            // The parser's report of the first hunk (its first changed line), and another
            // error elsewhere in the file.
            reported_lines: vec![("src/lib.rs".into(), 724), ("src/lib.rs".into(), 3000)],
            whole_file_formatting: vec![],
            formatter_hunks: vec![],
        };
        let hunks = check_hunks(CTEST_RUSTFMT, CTEST, "src/lib.rs");
        let p = scoped_policy(&policy, "src/lib.rs", &FormatScope::Hunks(hunks.clone()));
        // Only the reported hunk: the one at 1816 was not in the CI log's report.
        assert_eq!(
            p.formatter_hunks,
            [(
                "src/lib.rs".to_string(),
                LineSpan {
                    first: 724,
                    last: 725
                }
            )]
        );
        assert_eq!(p.reported_lines, [("src/lib.rs".to_string(), 3000)]);
        // Applied twice, the same.
        assert_eq!(
            scoped_policy(&p, "src/lib.rs", &FormatScope::Hunks(hunks)),
            p
        );
        let whole = scoped_policy(&policy, "src/lib.rs", &FormatScope::WholeFile);
        assert_eq!(whole.whole_file_formatting, ["src/lib.rs"]);
        assert_eq!(
            scoped_policy(&policy, "src/lib.rs", &FormatScope::ReportedLines),
            policy
        );
    }

    #[test]
    fn pins_of_pypi_and_npm_tools_are_installed_from_what_was_understood() {
        let req = |s: &str| pin(s, "requirements-dev.txt", Some(Dialect::Pep440));
        let black = FixTool::Black.install_command(&req("==24.1.1")).unwrap();
        assert!(
            black.contains("--prefix /usr 'black==24.1.1' && python3 -c "),
            "{black}"
        );
        assert!(black.starts_with(
            "PIP_CERT=/etc/ssl/certs/ca-certificates.crt python3 /opt/pip/pip.whl/pip install"
        ));
        assert!(black.ends_with("m.version('\\''black'\\''))'"), "{black}");
        let ruff = FixTool::RuffCheck {
            rule: "F401".into(),
        };
        assert!(
            ruff.install_command(&req(" >= 0.5 , <0.6"))
                .unwrap()
                .contains("'ruff>=0.5,<0.6'")
        );
        // Poetry's caret, in pip's words.
        let poetry = pin("^23.1", "pyproject.toml", Some(Dialect::Poetry));
        assert!(
            FixTool::Black
                .install_command(&poetry)
                .unwrap()
                .contains("'black>=23.1,<24'")
        );
        let npm = |s: &str| pin(s, "package.json", Some(Dialect::Npm));
        let prettier = FixTool::Prettier.install_command(&npm("3.0.0")).unwrap();
        assert!(prettier.starts_with("cd /opt/fixers && "), "{prettier}");
        assert!(
            prettier.contains(" 'prettier@3.0.0' && node -p "),
            "{prettier}"
        );
        assert!(
            prettier.ends_with("prettier/package.json'\\'').version'"),
            "{prettier}"
        );
        assert!(
            FixTool::Prettier
                .install_command(&npm("~3.0"))
                .unwrap()
                .contains("'prettier@>=3.0.0 <3.1.0-0'")
        );
        // What is not understood, or not the installer's, is never installed.
        for not in [
            npm("latest"),
            npm("3.0.0; rm -rf /"),
            req("^3"),
            req("$(id)"),
        ] {
            assert_eq!(FixTool::Prettier.install_command(&not), None, "{not:?}");
            assert_eq!(FixTool::Black.install_command(&not), None, "{not:?}");
        }
        assert_eq!(FixTool::Black.install_command(&npm("3.0.0")), None);
        assert_eq!(
            FixTool::Black.install_command(&pin(
                "^22 || ^23",
                "pyproject.toml",
                Some(Dialect::Poetry)
            )),
            None
        );
        assert_eq!(
            FixTool::Rustfmt { edition: None }.install_command(&pin(
                "1.63.0",
                "rust-toolchain",
                None
            )),
            None
        );
        assert_eq!(FixTool::Goimports.install_command(&npm("0.5.0")), None);
        assert_eq!(
            FixTool::Black.pin_tag("24.1.1").as_deref(),
            Some("pin-black-24.1.1")
        );
        assert_eq!(
            FixTool::Eslint { rule: "x".into() }
                .pin_tag("9.0.0-rc.0")
                .as_deref(),
            Some("pin-eslint-9.0.0-rc.0")
        );
        assert_eq!(FixTool::Black.pin_tag("24.1.1+local"), None);
        assert_eq!(
            installed_version("npm notice\nci-medic-installed=3.0.3\n").as_deref(),
            Some("3.0.3")
        );
        assert_eq!(installed_version("ci-medic-installed=$(x)\n"), None);
        assert_eq!(installed_version("done\n"), None);
        // The newest cached version the range holds, of this tool in this repository.
        let tags: Vec<String> = [
            "ci-medic-fixer/python:pin-black-23.12.1",
            "ci-medic-fixer/python:pin-black-23.3.0",
            "ci-medic-fixer/python:pin-black-24.1.1",
            "ci-medic-fixer/python:pin-isort-23.99.0",
            "other/python:pin-black-23.99.0",
        ]
        .map(String::from)
        .to_vec();
        let range = Range::parse(">=23,<24", Dialect::Pep440).unwrap();
        assert_eq!(
            FixTool::Black.newest_cached(&tags, "ci-medic-fixer/python", &range),
            Some((tags[0].clone(), "23.12.1".into()))
        );
        let none = Range::parse(">=25", Dialect::Pep440).unwrap();
        assert_eq!(
            FixTool::Black.newest_cached(&tags, "ci-medic-fixer/python", &none),
            None
        );
        assert_eq!(
            image_repository("ci-medic-fixer/python"),
            "ci-medic-fixer/python"
        );
        assert_eq!(
            image_repository("ci-medic-fixer/python:latest"),
            "ci-medic-fixer/python"
        );
        assert_eq!(image_repository("registry:5000/a/b"), "registry:5000/a/b");
        assert_eq!(
            image_repository("registry:5000/a/b:1.2"),
            "registry:5000/a/b"
        );
        assert_eq!(
            VersionChoice::Installed {
                version: "24.1.1".into(),
                pin: req("==24.1.1"),
                fresh: false,
            }
            .describe("black"),
            "black 24.1.1 (pinned in requirements-dev.txt; installed from PyPI into a cached fixer image)"
        );
        assert_eq!(
            VersionChoice::Installed {
                version: "3.0.3".into(),
                pin: npm("~3.0"),
                fresh: true,
            }
            .describe("prettier"),
            "prettier 3.0.3 (package.json pins `~3.0`; the newest version satisfying it was installed from npm into a cached fixer image)"
        );
        assert_eq!(
            VersionChoice::Installed {
                version: "3.0.0".into(),
                pin: npm("~3.0"),
                fresh: false,
            }
            .describe("prettier"),
            "prettier 3.0.0 (package.json pins `~3.0`, which this version satisfies; installed from npm earlier, from a cached fixer image)"
        );
        assert_eq!(
            VersionChoice::InstallFailed {
                version: "23.1.0".into(),
                pin: req("==0.0.1"),
                why: "pip exited 1".into()
            }
            .describe("black"),
            "black 23.1.0 (the configured default: requirements-dev.txt pins `==0.0.1`, which could not be installed: pip exited 1)"
        );
    }

    #[test]
    fn a_crate_is_fetched_only_when_it_has_dependencies() {
        let fnv = "[package]\nname = \"fnv\"\n\n[lib]\npath = \"lib.rs\"\n\n[features]\nstd = []\n";
        assert!(!cargo_needs_fetch(fnv, None));
        let bitset =
            "[package]\nname = \"bit-set\"\n\n[dependencies.bit-vec]\nversion = \"0.8.0\"\n";
        assert!(cargo_needs_fetch(bitset, None));
        assert!(cargo_needs_fetch(
            "[dev-dependencies]\nrand = \"0.8\"\n",
            None
        ));
        assert!(cargo_needs_fetch("[workspace]\nmembers = [\"a\"]\n", None));
        // The lockfile decides: only path packages, or a registry's.
        let local = "[[package]]\nname = \"a\"\nversion = \"0.1.0\"\n";
        assert!(!cargo_needs_fetch(bitset, Some(local)));
        let remote = "[[package]]\nname = \"bit-vec\"\nversion = \"0.8.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
        assert!(cargo_needs_fetch(fnv, Some(remote)));
        assert_eq!(
            cargo_deps_tag("0123456789ABCDEF0123").as_deref(),
            Some("pin-cargo-deps-0123456789abcdef")
        );
        assert_eq!(cargo_deps_tag("0123"), None);
        assert_eq!(cargo_deps_tag("0123456789abcdeg"), None);
        // Nothing of the repository's cargo configuration is read while the network is there.
        assert!(CARGO_FETCH_SCRIPT.contains("-name .cargo -exec rm -rf {}"));
        let fetch = CARGO_FETCH_SCRIPT.find("cargo fetch").unwrap();
        assert!(CARGO_FETCH_SCRIPT.find("rm -rf {}").unwrap() < fetch);
    }

    #[test]
    fn a_run_is_a_patch_only_when_it_changed_the_reported_files_and_nothing_else() {
        let reported = files(&[("a.py", "x=1\n")]);
        let after = |t: &str| BTreeMap::from([("a.py".to_string(), Some(t.to_string()))]);
        let ok = judge_run(
            &FixTool::Black,
            &reported,
            &after("x = 1\n"),
            &["./a.py".into()],
            0,
            "",
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].after, "x = 1\n");
        assert_eq!(
            judge_run(
                &FixTool::Black,
                &reported,
                &after("x = 1\n"),
                &["./a.py".into(), "./b.py".into()],
                0,
                ""
            ),
            Err(NoPatch::ChangedOthers {
                tool: "black".into(),
                others: "b.py".into()
            })
        );
        assert!(matches!(
            judge_run(&FixTool::Black, &reported, &after("x=1\n"), &[], 0, ""),
            Err(NoPatch::Unchanged { .. })
        ));
        assert!(matches!(
            judge_run(
                &FixTool::Black,
                &reported,
                &after("x=1\n"),
                &[],
                123,
                "error: cannot format a.py"
            ),
            Err(NoPatch::Failed { exit_code: 123, .. })
        ));
        let gone = BTreeMap::from([("a.py".to_string(), None)]);
        assert!(matches!(
            judge_run(&FixTool::Black, &reported, &gone, &[], 0, ""),
            Err(NoPatch::NotText { .. })
        ));
    }
}
