//! Documentation builds that fail on warnings: Sphinx under `-W` (`docs/x.rst:12: WARNING: msg`,
//! and the spelling builder's `WARNING: ref/x.txt:1166: : Spell check: word: …`) and sphinx-lint
//! (`Misc/x.rst:1: No newline at end of file. (missing-final-newline)`), and Markdown checkers'
//! `README.md:2186:Line longer than 80 characters.` (gomali), and awesome_bot's failed links
//! (`  1. [L696]  url message` under `Issues :-(`, in the file of its `> Checking links in x`),
//! and jazzy's `undocumented.json` entries (`"file"`, `"line"`, `"warning": "undocumented"`) of a
//! step that failed.
//! Each becomes a `LINTING` report at the documentation file's line.
//!
//! Sphinx prints the same warnings in builds that pass, so a warning is reported only once its
//! CI step failed (the step's `##[error]`, Travis' `The command "…" exited with 1.`, or Sphinx's
//! own `Warning, treated as error:`); the
//! candidates of a step that ended without failing are dropped. It must never report a file
//! without a documentation extension (autodoc's `x.py:docstring of f:3` names no line of the
//! file), nor a docutils `ERROR:` row, which the generic `path:line: error` rule already reads.

use crate::sink::{Finding, Sink};
use crate::{BugType, Line, Marker};

/// Candidates kept per step while waiting for it to fail.
const MAX_PENDING: usize = 200;

/// Extensions of documentation sources Sphinx and sphinx-lint read.
const DOC_EXTS: [&str; 5] = ["rst", "txt", "md", "inc", "rest"];

#[derive(Debug, Default)]
pub(crate) struct Docs {
    /// (log line, path, line, message, tool) waiting for the step to fail.
    pending: Vec<(u64, String, u64, String, &'static str)>,
    /// The step failed on its warnings: later ones are reported at once.
    confirmed: bool,
    /// awesome_bot's file (`> Checking links in README.org`), and whether its `Issues :-(`
    /// list, printed only when the check fails, has begun.
    links: Option<(String, bool)>,
    /// Files a script of the job said it wrote (`Writing check-unique.txt`): a link list
    /// generated from the repository's README, whose line numbers are no line of the repository.
    written: Vec<String>,
    /// Inside jazzy's `undocumented.json` (`"warnings": [`): the current object's `"file"` and
    /// `"line"`.
    jazzy: Option<(Option<String>, Option<u64>)>,
}

/// A JSON member line `"key": value,` of a pretty-printed object: the key and the raw value.
fn json_member(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix('"')?;
    let (key, value) = rest.split_once("\": ")?;
    Some((key, value.trim_end_matches(',')))
}

/// An awesome_bot row: `  1. [L696]  https://… message`: the line.
fn awesome_bot_row(t: &str) -> Option<(u64, &str)> {
    let d = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = t[d..].strip_prefix(". [L")?;
    let (line, msg) = rest.split_once(']')?;
    Some((super::num(line)?, msg.trim()))
}

/// Bound on the files remembered as written by the job.
const MAX_WRITTEN: usize = 16;

/// `Writing check-unique.txt` / `Wrote links.md`: a script's own note that it wrote one file
/// (a single relative path, nothing after it).
fn written_file(t: &str) -> Option<&str> {
    let f = t
        .strip_prefix("Writing ")
        .or_else(|| t.strip_prefix("Wrote "))?;
    let ok = !f.is_empty() && !f.contains([' ', '\t']) && !f.starts_with('/') && f.contains('.');
    ok.then_some(f)
}

/// `path:line: rest` with a documentation extension.
fn location(t: &str) -> Option<(&str, u64, &str)> {
    let (path, rest) = t.split_once(':')?;
    let (line, rest) = rest.split_once(": ")?;
    let line = super::num(line)?;
    if path.is_empty() || path.contains(' ') || !DOC_EXTS.contains(&super::ext(path)) {
        return None;
    }
    Some((path, line, rest))
}

/// `README.md:2186:Line longer than 80 characters.`: a Markdown checker's `path:line:Message`
/// with no space after the colon (gomali), a Markdown file only.
fn tight_location(t: &str) -> Option<(&str, u64, &str)> {
    let (path, rest) = t.split_once(':')?;
    let (line, msg) = rest.split_once(':')?;
    let ok = matches!(super::ext(path), "md" | "markdown")
        && !path.contains(' ')
        && msg.as_bytes().first().is_some_and(u8::is_ascii_uppercase);
    ok.then_some((path, super::num(line)?, msg))
}

/// sphinx-lint's check name closing a message: `(missing-final-newline)`.
fn lint_check(rest: &str) -> Option<&str> {
    let inner = rest.strip_suffix(')')?;
    let (_, check) = inner.rsplit_once(" (")?;
    let b = check.as_bytes();
    (b.len() > 2
        && b.contains(&b'-')
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-'))
    .then_some(check)
}

impl Docs {
    /// True when `line` cannot change this matcher's state or be claimed by it.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        if self.links.is_some()
            || (l.first == b'>' && l.trimmed().starts_with("> Checking links in "))
            || (l.first == b'"' && (self.jazzy.is_some() || l.trimmed() == "\"warnings\": ["))
        {
            return false;
        }
        if l.marker == Marker::Group {
            return self.pending.is_empty() && !self.confirmed;
        }
        if l.marker == Marker::Error {
            return self.pending.is_empty();
        }
        if l.first == b'W' || (l.last == b'.' && !self.pending.is_empty()) {
            return false;
        }
        // Only a path with a documentation extension before the first colon can be read.
        let t = l.trimmed();
        !l.colon_digit
            || memchr::memchr(b':', t.as_bytes())
                .is_none_or(|i| !DOC_EXTS.contains(&super::ext(&t[..i])))
    }

    /// A step or command ended: its candidates and open lists go, the files the job wrote stay
    /// (the script that writes them runs in an earlier step than the check).
    fn reset(&mut self) {
        let written = std::mem::take(&mut self.written);
        *self = Docs {
            written,
            ..Docs::default()
        };
    }

    /// Returns true when the line was claimed.
    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        if l.marker == Marker::Group {
            self.reset();
            return false;
        }
        if l.marker == Marker::Error {
            self.confirm(sink);
            return false;
        }
        let t = l.trimmed();
        if l.first == b'W'
            && self.written.len() < MAX_WRITTEN
            && let Some(f) = written_file(t)
        {
            self.written.push(f.to_string());
            return false;
        }
        if let Some(file) = t.strip_prefix("> Checking links in ") {
            let file = file.trim();
            self.links =
                (!self.written.iter().any(|w| w == file)).then(|| (file.to_string(), false));
            return true;
        }
        if let Some((file, issues)) = &mut self.links {
            if t == "Issues :-(" {
                *issues = true;
                return true;
            }
            if t.starts_with("Wrote results to ") {
                self.links = None;
                return false;
            }
            if *issues && let Some((line, msg)) = awesome_bot_row(t) {
                let file = file.clone();
                sink.emit(
                    l.no,
                    Finding::new(&file, line, BugType::Linting, msg)
                        .conf(0.8)
                        .tool("awesome_bot"),
                );
                return true;
            }
        }
        if l.first == b'"' {
            if t == "\"warnings\": [" {
                self.jazzy = Some((None, None));
                return true;
            }
            if let Some((file, line)) = &mut self.jazzy {
                match json_member(t) {
                    Some(("file", v)) => *file = Some(v.trim_matches('"').to_string()),
                    Some(("line", v)) => *line = super::num(v),
                    Some(("warning", "\"undocumented\"")) => {
                        if let (Some(path), Some(n)) = (file.take(), line.take())
                            && self.pending.len() < MAX_PENDING
                        {
                            let msg = "undocumented declaration";
                            if self.confirmed {
                                emit(l.no, &path, n, msg, "jazzy", sink);
                            } else {
                                self.pending.push((l.no, path, n, msg.to_string(), "jazzy"));
                            }
                        }
                    }
                    Some(("source_directory", _)) => self.jazzy = None,
                    _ => {}
                }
                return true;
            }
        }
        if t.starts_with("Warning, treated as error") {
            self.confirm(sink);
            return false;
        }
        // Travis' verdict on the command that printed them.
        if l.last == b'.'
            && let Some(failed) = super::travis_command_failed(t)
        {
            if failed {
                self.confirm(sink);
            }
            self.reset();
            return false;
        }
        if !l.colon_digit {
            return false;
        }
        let (path, line, msg, tool) = if let Some(rest) = t.strip_prefix("WARNING: ") {
            let Some((path, line, msg)) = location(rest) else {
                return false;
            };
            (path, line, msg.trim_start_matches([':', ' ']), "sphinx")
        } else if let Some((path, line, rest)) = location(t) {
            if let Some(msg) = rest.strip_prefix("WARNING: ") {
                (path, line, msg, "sphinx")
            } else if lint_check(rest).is_some() {
                (path, line, rest, "sphinx-lint")
            } else {
                return false;
            }
        } else if let Some((path, line, msg)) = tight_location(t) {
            (path, line, msg, "markdown-check")
        } else {
            return false;
        };
        if self.confirmed {
            emit(l.no, path, line, msg, tool, sink);
        } else if self.pending.len() < MAX_PENDING {
            self.pending
                .push((l.no, path.to_string(), line, msg.to_string(), tool));
        }
        true
    }

    fn confirm(&mut self, sink: &mut Sink) {
        self.confirmed = true;
        for (seq, path, line, msg, tool) in self.pending.drain(..) {
            emit(seq, &path, line, &msg, tool, sink);
        }
    }
}

fn emit(seq: u64, path: &str, line: u64, msg: &str, tool: &'static str, sink: &mut Sink) {
    let rule = if tool == "sphinx-lint" {
        lint_check(msg)
    } else {
        None
    };
    sink.emit(
        seq,
        Finding::new(path, line, BugType::Linting, msg)
            .conf(0.8)
            .tool(tool)
            .rule(rule),
    );
}

#[cfg(test)]
mod tests {
    use super::written_file;
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn doc_warnings_of_a_step_that_failed() {
        // django's spelling build (`cd docs`, `sphinx-build -W`) and cpython's sphinx-lint
        // hook (LogSage), shortened; then a build whose warnings did not fail it.
        let log = "##[group]Run cd docs\nWARNING: ref/models/querysets.txt:1166: : Spell check: behaviour: triggering the on-demand loading behaviour of the model instances.\nWARNING: Found 1 misspelled words\n##[error]Process completed with exit code 1.\n##[group]Run pre-commit run --all-files\nMisc/NEWS.d/next/Library/2025-04-15-12-47-09.gh-issue-131178.Td8j5x.rst:1: No newline at end of file. (missing-final-newline)\n##[error]Process completed with exit code 1.\n##[group]Run make html\n/home/runner/work/R/R/docs/index.rst:12: WARNING: undefined label: 'foo'\nbuild succeeded, 1 warning.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "docs/ref/models/querysets.txt");
        assert_eq!(r[0].line_number, 1166);
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[1].line_number, 1);
        assert_eq!(r[1].rule.as_deref(), Some("missing-final-newline"));
    }

    #[test]
    fn awesome_bot_on_a_list_the_job_wrote_names_no_line_of_the_repository() {
        // dkhamsing/open-source-ios-apps (LogChunks 555180400): a script writes the link lists
        // from the README's JSON, then awesome_bot checks them.
        let log = "Writing check-unique.txt\n$ awesome_bot check-unique.txt --allow-ssl -a 302\n> Checking links in check-unique.txt\nLinks to check: 1707\n\nIssues :-(\n> Links \n  1. [L0153] 404 http://a5.mzstatic.com/us/r30/screen696x696.jpeg  \n\nWrote results to ab-results-check-unique.txt.json\n> Checking links in README.md\nIssues :-(\n  1. [L12] 404 http://example.com/x \n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("README.md", 12)
        );
        assert_eq!(
            written_file("Writing check-info.txt"),
            Some("check-info.txt")
        );
        assert_eq!(written_file("Wrote results to ab-results-x.json"), None);
    }

    #[test]
    fn awesome_bot_issues_not_its_white_list() {
        // LogChunks awesome-emacs (Travis).
        let log = "> Checking links in README.org\nLinks to check: 1049\n> White listed:\n  2. [L399]  http://ternjs.net/doc/manual.html#emacs] bad URI(is not URI?): http://ternjs.net/doc/manual.html#emacs] \n\nIssues :-(\n> Links \n  1. [L696]  https://jblevins.org/projects/markdown-mode/ Failed to open TCP connection to jblevins.org:443 (Connection refused - connect(2) for \"jblevins.org\" port 443) \n> Dupes \n  None ✓\n\nWrote results to ab-results-README.org.json\n  3. [L12]  after the run\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("README.org", 696)
        );
    }

    #[test]
    fn jazzy_undocumented_declarations_of_a_failed_check() {
        // LogChunks realm-cocoa (Travis): `./build.sh verify-docs` prints jazzy's JSON and fails.
        let json = "$ ./build.sh verify-docs\nUndocumented Realm swift declarations:\n{\n  \"warnings\": [\n    {\n      \"file\": \"/Users/travis/build/realm/realm-cocoa/RealmSwift/Error.swift\",\n      \"line\": 37,\n      \"symbol\": \"Realm.Error.Code\",\n      \"symbol_kind\": \"source.lang.swift.decl.typealias\",\n      \"warning\": \"undocumented\"\n    }\n  ],\n  \"source_directory\": \"/Users/travis/build/realm/realm-cocoa\"\n}";
        let failed = "The command \"./build.sh verify-docs\" exited with 1.\n";
        let r = parse_str(&format!("{json}{failed}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("RealmSwift/Error.swift", 37)
        );
        let passed = "\nThe command \"./build.sh verify-docs\" exited with 0.\n";
        assert_eq!(
            parse_str(&format!("{json}{passed}"), &ParseOptions::default()),
            []
        );
    }

    #[test]
    fn a_markdown_checkers_rows_of_a_travis_command_that_failed() {
        // LogChunks vim-galore (Travis): `gomali *.md`.
        let rows = "$ gomali *.md\nREADME.md:2186:Line longer than 80 characters.\n\n";
        let failed = "\u{1b}[31;1mThe command \"gomali *.md\" exited with 1.\u{1b}[0m\n";
        let r = parse_str(&format!("{rows}{failed}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("README.md", 2186)
        );
        let passed = "The command \"gomali *.md\" exited with 0.\n";
        assert_eq!(
            parse_str(&format!("{rows}{passed}"), &ParseOptions::default()),
            []
        );
    }
}
