//! Dart and Flutter: `dart analyze` (`  error - lib/x.dart:12:5 - msg - code`, and Dart 2.12–2.18's
//! `error • lib/x.dart:12:5 • msg • code`), `flutter analyze` (`  error • msg • lib/x.dart:12:5 •
//! code`), the machine format (`ERROR|TYPE|CODE|path|l|c|len|msg`),
//! the front end of `dart compile` / `flutter build` / test loading (`lib/x.dart:12:5: Error:
//! msg`), and `dart test` / `flutter test` failures (`00:02 +0 -1: name [E]`, then frames such as
//! `test/x_test.dart 12:5  main.<fn>` or `#4 main.<fn> (file:///…/test/x_test.dart:27:5)`), and
//! Flutter's `══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞══` reports, which come before them.
//!
//! Only `error` severities are reports: `warning`, `info` and `hint` are not, whatever
//! `--fatal-infos` makes of them (the corpus convention). A test failure is placed at its innermost
//! frame that is a file of the repository; `package:` and `dart:` frames are never reported, since
//! a package name does not say whether it is the repository's own.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

static DART: crate::Needle = crate::needle!(".dart");

/// `error - lib/x.dart:12:5 - message - code`.
static ANALYZE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(error|warning|info|hint) - (\S+?\.dart):(\d+):(\d+) - (.+?)(?: - ([a-z0-9_]+))?$",
    )
    .unwrap()
});
/// `error • message • lib/x.dart:12:5 • code` (`-` for `•` on Windows consoles before Flutter
/// 1.20, whose padding may leave spaces before a separator).
static FLUTTER_ANALYZE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(error|warning|info|hint) [•-] (.+?)\s+[•-] (\S+?\.dart):(\d+):(\d+)\s+[•-]\s+([a-z0-9_]+)$",
    )
    .unwrap()
});
/// Continuation lines `flutter analyze` may wrap one diagnostic onto (it wraps at the
/// terminal's width, up to the location and the code on lines of their own).
const WRAP_LINES: u8 = 4;
/// `dart analyze` of Dart 2.12–2.18: `error • lib/x.dart:12:5 • message • code`, the message
/// often wrapped onto the next lines (the code then follows alone).
static ANALYZE_BULLET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(error|warning|info|hint) • ([^\s•]+\.dart):(\d+):(\d+) • (.+?)(?: • ([a-z0-9_]+))?$",
    )
    .unwrap()
});
/// The front end: `lib/x.dart:12:5: Error: message`.
static CFE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:[A-Za-z]:[\\/])?[^\s:]+\.dart):(\d+):(\d+): Error: (.+)$").unwrap()
});
/// `00:02 +3 ~1 -1: name [E]` (the test runner's compact/expanded reporter).
static TEST_ERR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+:\d+ \+\d+(?: ~\d+)?(?: -\d+)?: (.+?) \[E\]$").unwrap());
static PROGRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+:\d+ \+\d+(?: ~\d+)?(?: -\d+)?: ").unwrap());
/// Terse frame (package:stack_trace): `test/x_test.dart 12:5  main.<fn>`.
static TERSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+\.dart) (\d+)(?::(\d+))?\s").unwrap());
/// VM frame: `#4  main.<fn> (file:///…/x_test.dart:27:5)`; also the "caught by" line
/// `file:///…/x_test.dart line 27`.
static VM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\(|^)((?:file://)?[^\s()]+\.dart)(?::(\d+)(?::(\d+))?\)| line (\d+)$)").unwrap()
});

#[derive(Debug)]
struct TestBlock {
    test: String,
    msg: Option<String>,
    seq: u64,
    budget: u32,
}

/// Flutter's `══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞══` report, printed before the
/// runner's `[E]` line: the message, the stack, `The test description was:` and the name.
#[derive(Debug, Default)]
struct FlutterBlock {
    msg: Option<String>,
    frame: Option<(String, u64)>,
    test: Option<String>,
    want_test: bool,
    seq: u64,
    budget: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Dart {
    block: Option<TestBlock>,
    flutter: Option<FlutterBlock>,
    /// An analyzer diagnostic wrapped onto the next lines: the text so far, its line and how
    /// many more lines it may take.
    wrapped: Option<(String, u64, u8)>,
}

/// `error • …` / `error - …`: the start of an analyzer diagnostic.
fn analyzer_start(t: &str) -> bool {
    ["error ", "warning ", "info ", "hint "].iter().any(|sev| {
        t.strip_prefix(sev)
            .is_some_and(|r| r.starts_with("• ") || r.starts_with("- "))
    })
}

/// A repository frame of a Dart stack (`#4 f (file:///…/x_test.dart:27:5)`, `x_test.dart 27:5
/// f`, `file:///…/x_test.dart line 27`): path and line, or `None` for SDK and package frames.
fn repo_frame(t: &str, sink: &Sink) -> Option<(String, u64)> {
    let (path, line) = TERSE
        .captures(t)
        .map(|c| (c[1].to_string(), c.get(2)))
        .or_else(|| {
            VM.captures(t)
                .map(|c| (c[1].to_string(), c.get(2).or_else(|| c.get(4))))
        })?;
    if path.starts_with("package:") || path.starts_with("dart:") {
        return None;
    }
    sink.repo_path(&path)?;
    Some((path, super::num(line?.as_str())?))
}

/// Classifies an analyzer diagnostic by its code.
fn analyzer_type(code: Option<&str>, msg: &str) -> BugType {
    let c = code.unwrap_or("").to_ascii_lowercase();
    if matches!(
        c.as_str(),
        "uri_does_not_exist" | "uri_has_not_been_generated" | "import_of_non_library"
    ) || c.starts_with("depend_on_referenced_packages")
    {
        return BugType::Import;
    }
    if c.starts_with("expected_")
        || c.starts_with("unexpected_")
        || c.starts_with("unterminated_")
        || matches!(
            c.as_str(),
            "missing_identifier"
                | "missing_function_body"
                | "missing_statement"
                | "missing_const_final_var_or_type"
                | "missing_function_parameters"
                | "missing_class_body"
                | "directive_after_declaration"
        )
    {
        return BugType::Syntax;
    }
    cfe_type(msg)
}

/// Classifies a front-end error by its words.
fn cfe_type(msg: &str) -> BugType {
    if msg.starts_with("Expected ")
        || msg.starts_with("Unexpected token")
        || msg.starts_with("Can't find '")
        || msg.contains("string literal")
    {
        BugType::Syntax
    } else if msg.starts_with("Error when reading")
        || msg.starts_with("Not found: '")
        || msg.starts_with("Couldn't resolve the package")
        || msg.starts_with("Target of URI doesn't exist")
    {
        BugType::Import
    } else {
        BugType::TypeError
    }
}

impl Dart {
    /// True when the line cannot concern this matcher: no test block is open, and it is neither
    /// a `.dart` location, an analyzer line, a test-runner progress line nor a machine-format row.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        !(self.block.is_some()
            || self.flutter.is_some()
            || self.wrapped.is_some()
            || l.first == 0xE2
            || l.colon_digit
            || matches!(l.first, b'e' | b'E')
            || (l.first.is_ascii_digit() && l.last == b']'))
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if self.flutter.is_some() && self.flutter_line(t, sink) {
            return true;
        }
        if l.first == 0xE2 && t.starts_with("══╡ EXCEPTION CAUGHT BY ") {
            self.flutter = Some(FlutterBlock {
                seq: l.no,
                budget: 400,
                ..FlutterBlock::default()
            });
            return true;
        }
        if self.block.is_some() && self.block_line(t, sink) {
            return true;
        }
        if let Some((text, seq, left)) = &mut self.wrapped {
            if t.is_empty() || analyzer_start(t) || *left == 0 {
                self.wrapped = None;
            } else {
                text.push(' ');
                text.push_str(t);
                *left -= 1;
                let (text, seq) = (text.clone(), *seq);
                if self.analyzer_line(&text, seq, sink) {
                    self.wrapped = None;
                    return true;
                }
                // Left to the other matchers: it may be no continuation at all.
                return false;
            }
        }
        if l.first.is_ascii_digit()
            && l.last == b']'
            && let Some(c) = TEST_ERR.captures(t)
        {
            // A file that failed to load: its compile errors are the reports.
            if c[1].starts_with("loading ") {
                return true;
            }
            self.block = Some(TestBlock {
                test: crate::sink::truncate_chars(&c[1], 300).to_string(),
                msg: None,
                seq: l.no,
                budget: 300,
            });
            return true;
        }
        if matches!(l.first, b'e' | b'w' | b'i' | b'h') && analyzer_start(t) {
            if self.analyzer_line(t, l.no, sink) {
                return true;
            }
            // Not whole: `flutter analyze` wrapped it at the terminal's width (or it is another
            // tool's `error - …`, which the other matchers still see).
            self.wrapped = Some((t.to_string(), l.no, WRAP_LINES));
            return false;
        }
        if !crate::has(&DART, t) {
            return false;
        }
        match l.first {
            b'E' if t.starts_with("ERROR|") => {
                let f: Vec<&str> = t.splitn(8, '|').collect();
                if f.len() == 8 {
                    self.analyzer(f[3], f[4], f[5], f[7], Some(f[2]), l.no, sink);
                }
                return true;
            }
            _ => {}
        }
        if l.colon_digit
            && let Some(c) = CFE.captures(t)
        {
            let line = super::num(&c[2]).unwrap_or(0);
            sink.emit(
                l.no,
                Finding::new(&c[1], line, cfe_type(&c[4]), &c[4])
                    .col(super::num(&c[3]))
                    .conf(0.95)
                    .tool("dart"),
            );
            return true;
        }
        false
    }

    /// One whole analyzer diagnostic in any of its formats; false when `t` is none (yet).
    fn analyzer_line(&self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        if !crate::has(&DART, t) {
            return false;
        }
        if let Some(c) = ANALYZE.captures(t) {
            if &c[1] == "error" {
                let code = c.get(6).map(|m| m.as_str());
                self.analyzer(&c[2], &c[3], &c[4], &c[5], code, seq, sink);
            }
            return true;
        }
        if let Some(c) = ANALYZE_BULLET.captures(t) {
            if &c[1] == "error" {
                let code = c.get(6).map(|m| m.as_str());
                let msg = c[5].trim_end_matches(" •").trim();
                self.analyzer(&c[2], &c[3], &c[4], msg, code, seq, sink);
            }
            return true;
        }
        if let Some(c) = FLUTTER_ANALYZE.captures(t) {
            if &c[1] == "error" {
                self.analyzer(&c[3], &c[4], &c[5], &c[2], Some(&c[6]), seq, sink);
            }
            return true;
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn analyzer(
        &self,
        path: &str,
        line: &str,
        col: &str,
        msg: &str,
        code: Option<&str>,
        seq: u64,
        sink: &mut Sink,
    ) {
        let rule = code.map(str::to_ascii_lowercase);
        sink.emit(
            seq,
            Finding::new(
                path,
                super::num(line).unwrap_or(0),
                analyzer_type(code, msg),
                msg,
            )
            .col(super::num(col))
            .conf(0.95)
            .tool("dart analyze")
            .rule(rule.as_deref()),
        );
    }

    /// Lines of a failing test: the message, then frames; the first frame in the repository
    /// is the report.
    fn block_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(b) = &mut self.block else {
            return false;
        };
        b.budget = b.budget.saturating_sub(1);
        if b.budget == 0 || PROGRESS.is_match(t) {
            self.block = None;
            return false;
        }
        if t.is_empty() || !crate::has(&DART, t) {
            if b.msg.is_none() && !t.is_empty() && !t.starts_with("══") {
                b.msg = Some(crate::sink::truncate_chars(t, 300).to_string());
            }
            return true;
        }
        if let Some((path, line)) = repo_frame(t, sink) {
            let msg = b.msg.clone().unwrap_or_else(|| "test failed".into());
            let (test, seq) = (b.test.clone(), b.seq);
            if sink.emit(
                seq,
                Finding::new(&path, line, BugType::Logic, &msg)
                    .test(Some(&test))
                    .conf(0.9)
                    .tool("dart test"),
            ) {
                self.block = None;
            }
        }
        true
    }

    fn flutter_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(b) = &mut self.flutter else {
            return false;
        };
        b.budget = b.budget.saturating_sub(1);
        // The closing rule (`════…`), a runner line, or a line budget ends the report.
        let closing = t.len() > 30 && t.chars().all(|c| c == '═');
        if closing || b.budget == 0 || PROGRESS.is_match(t) {
            self.finish_flutter(sink);
            return closing;
        }
        if t.is_empty() {
            return true;
        }
        if b.want_test {
            b.test = Some(crate::sink::truncate_chars(t, 300).to_string());
            b.want_test = false;
        } else if t.starts_with("The test description was:") {
            b.want_test = true;
        } else if b.frame.is_none() && crate::has(&DART, t) {
            b.frame = repo_frame(t, sink);
        } else if b.msg.is_none() && !t.starts_with("The following ") {
            b.msg = Some(crate::sink::truncate_chars(t, 300).to_string());
        }
        true
    }

    fn finish_flutter(&mut self, sink: &mut Sink) {
        let Some(b) = self.flutter.take() else {
            return;
        };
        if let Some((path, line)) = &b.frame {
            let msg = b.msg.as_deref().unwrap_or("test failed");
            sink.emit(
                b.seq,
                Finding::new(path, *line, BugType::Logic, msg)
                    .test(b.test.as_deref())
                    .conf(0.9)
                    .tool("flutter test"),
            );
        }
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.finish_flutter(sink);
        self.block = None;
        self.wrapped = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn flutter_analyze_wrapped_at_the_terminal_width() {
        // flutter/flutter#103895 and #36581: the location and the code wrap onto the next lines.
        let log = "Analyzing bug_test...\n\n  error • Target of URI doesn't exist: 'package:flutter/material.dart' •\n         lib/main.dart:1:8 • uri_does_not_exist\n  error • The function 'runApp' isn't defined • lib/main.dart:4:3 •\n         undefined_function\n   info • The method doesn't override an inherited method • lib/main.dart:12:10\n          • override_on_non_overriding_member\n  error • Undefined class 'Widget' • lib/main.dart:12:3 • undefined_class\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r.iter().map(|r| (r.line_number, r.error_type)).collect();
        assert_eq!(
            got,
            [
                (1, BugType::Import),
                (4, BugType::TypeError),
                (12, BugType::TypeError)
            ]
        );
        // Windows consoles before Flutter 1.20: `-` separators, backslashes, padding.
        let log = "  error - Expected an identifier - lib\\constant.dart:4:36 -       \n         missing_identifier\n  error - Target of URI doesn't exist:\n         'package:app/fab.dart' - lib\\empty.dart:5:8 \n         - uri_does_not_exist\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(got, [("lib/constant.dart", 4), ("lib/empty.dart", 5)]);
    }

    #[test]
    fn analyzer_formats() {
        // The same shapes as the machine format of jenkinsci/analysis-model's dart.log, whose
        // rows are INFO (not reports); a dart-lang/sdk#24158 row is a WARNING.
        let log = "INFO|HINT|UNNECESSARY_IMPORT|C:\\\\Users\\\\david\\\\StudioProjects\\\\bat\\\\lib\\\\step_test.dart|1|8|32|The import of 'package:flutter/cupertino.dart' is unnecessary because all of the used elements are also provided by the import of 'package:flutter/material.dart'.\nWARNING|STATIC_WARNING|UNDEFINED_IDENTIFIER|/mnt/data/b/build/slave/analyzer_experimental-linux-release-dev/build/sdk/pkg/compiler/lib/src/apiimpl.dart|392|21|21|Undefined name 'NO_LOCATION_SPANNABLE'\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn site_www_outputs() {
        // dart-lang/site-www: examples/analysis/analyzer-results-stable.txt (one error).
        let log = "Analyzing analysis...\n\n  error - lib/strict_modes.dart:15:7 - The argument type 'dynamic' can't be assigned to the parameter type 'List<String>'. - argument_type_not_assignable\nwarning - lib/strict_modes.dart:22:17 - The type argument(s) of 'Map' can't be inferred. Use explicit type argument(s) for 'Map'. - inference_failure_on_collection_literal\n   info - lib/lint.dart:9:19 - Unnecessary empty statement. Try removing the empty statement or restructuring the code. - empty_statements\n\n5 issues found.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/strict_modes.dart", 15)
        );
        assert_eq!(r[0].rule.as_deref(), Some("argument_type_not_assignable"));
        // src/content/resources/dart-3-migration.md: the bullet format, wrapped.
        let log = "$ dart analyze .\nAnalyzing ....                         0.6s\n\n  error • lib/pkg1.dart:1:1 • The language version must be >=2.12.0. \n  Try removing the language version override and migrating the code.\n  • illegal_language_version_override\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/pkg1.dart", 1)
        );
        // src/content/tools/non-promotion-reasons.md: the front end's error and its context.
        let log = "example.dart:10:9: Error: The argument type 'String?' can't be assigned to the parameter type 'String'.\n    log(extraInfo);\n        ^\nexample.dart:8:5: Context: Variable 'extraInfo' could not be promoted due to an 'await' or 'yield'.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].line_number, r[0].error_type),
            (10, BugType::TypeError)
        );
    }

    #[test]
    fn flutter_exception_reports() {
        // NearHuscarl/flutter_login#77: a framework assertion, no frame of the app's own.
        let log = "Loading default login and making sure all fields are found:\n\n══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞════════════════════════════════════════════════════\nThe following assertion was thrown running a test:\nExpected  to match RegExp: pattern=^(.+) (\\d+):(\\d+)\\s+(.+)$ flags=.\n'package:flutter/src/foundation/stack_frame.dart':\nFailed assertion: line 115 pos 12: 'match != null'\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // The report of fzyzcjy/flutter_convenient_test#31 (its `[NL]`s as newlines), with the
        // checkout moved from the reporter's machine to a runner's, so that it is the repo's.
        let log = "══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞════════════════════════════════════════════════════\nThe following TestFailure was thrown running a test:\nExpected: <0>\n  Actual: <1>\nthis expect should deliberately fail\n\nWhen the exception was thrown, this was the stack:\n#4      main.<anonymous closure>.<anonymous closure>.<anonymous closure> (file:///home/runner/work/R/R/packages/convenient_test/example/integration_test/main_test.dart:23:9)\n#7      testWidgets.<anonymous closure>.<anonymous closure> (package:flutter_test/src/widget_tester.dart:170:15)\n<asynchronous suspension>\n\nThe test description was:\n  deliberately failing test\n════════════════════════════════════════════════════════════════════════════════════════════════════\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "packages/convenient_test/example/integration_test/main_test.dart"
        );
        assert_eq!((r[0].line_number, r[0].error_type), (23, BugType::Logic));
        assert_eq!(r[0].test_name.as_deref(), Some("deliberately failing test"));
        assert_eq!(r[0].message, "Expected: <0>");
    }

    #[test]
    fn test_runner_failures() {
        // dart-lang/test#1734's failure line, with frames in package:stack_trace's terse format
        // (`path line:col  member`; no real log of them was at hand, so they are written here).
        let log = "08:28 +54 ~9 -1: test/integration.shard/command_output_test.dart: flutter run --machine uses AppRunLogger [E] \n  Expected: true\n    Actual: <false>\n  package:test_api                          expect\n  test/integration.shard/command_output_test.dart 62:5  main.<fn>\n08:29 +54 ~9 -1: Some tests failed.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "test/integration.shard/command_output_test.dart"
        );
        assert_eq!((r[0].line_number, r[0].error_type), (62, BugType::Logic));
        assert_eq!(
            r[0].test_name.as_deref(),
            Some(
                "test/integration.shard/command_output_test.dart: flutter run --machine uses AppRunLogger"
            )
        );
        // A VM frame in a local checkout (fzyzcjy/flutter_convenient_test#31) is never reported.
        let log = "08:28 +54 ~9 -1: test/integration.shard/command_output_test.dart: flutter run --machine uses AppRunLogger [E] \n#4      main.<anonymous closure>.<anonymous closure>.<anonymous closure> (file:///Users/tom/QAPMain/TomLib/flutter_convenient_test/packages/convenient_test/example/integration_test/main_test.dart:23:9)\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }
}
