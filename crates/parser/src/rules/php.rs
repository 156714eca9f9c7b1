//! PHP: interpreter errors (`php -l`, `PHP Parse error:  … in x.php on line 12`, `PHP Fatal
//! error:  Uncaught … in /path/x.php:12`), PHPUnit failure blocks (`1) Tests\XTest::testY`, the
//! message, then `path/XTest.php:12` frames), PHPStan's table (` Line   src/x.php` then
//! `  12     message`) and raw (`src/x.php:12:message`) formats, and Psalm's console format
//! (`ERROR: InvalidReturnType - src/x.php:12:5 - message`), and PHP_CodeSniffer's full report
//! (`FILE: /path/x.php`, `FOUND 1 ERROR AFFECTING 1 LINE`, then ` 186 | ERROR | [x] message`
//! rows; `WARNING` rows are not reported). A Robo `Exec`/`ExecStack` task names the directory
//! it runs a tool in (`[ExecStack] Running …/vendor/bin/phpcs in /Users/dane/sites/blt-canary`):
//! the project's root, for the absolute paths the tool prints.
//!
//! It must never report a `PHP Warning`/`Notice`/`Deprecated`, a Psalm `INFO:`, a frame under
//! `vendor/`, or PHPUnit's summaries (`FAILURES!`, `Tests: 3, Assertions: 5, Failures: 1.`).

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const BLOCK_BUDGET: u32 = 300;

static PHPUNIT_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d{1,5}\) ([\w\\]+::\w+.*)$").unwrap());
/// A PHPUnit frame: the whole line is `path.php:12`.
static PHPUNIT_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S.*?\.(?:php|phpt|inc)):(\d+)$").unwrap());
static PSALM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ERROR: (\w+) - (\S+?):(\d+):(\d+) - (.+)$").unwrap());
/// Psalm's `--output-format=text`: `path:12:5:error - InvalidGlobal: message`.
static PSALM_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+?\.php):(\d+):(\d+):(error|warning|info) - (\w+): (.+)$").unwrap()
});
static PHP_ERROR: crate::Needle = crate::needle!("PHP Fatal error:");
static STAN_ROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+)(?::\d+)?\s{2,}(\S.*)$").unwrap());
static STAN_RAW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?\.php):(\d+):([^\d\s].*)$").unwrap());

#[derive(Debug)]
struct UnitBlock {
    test: String,
    message: String,
    ty: BugType,
    seq: u64,
    budget: u32,
    /// The report was emitted (later frames are callers).
    done: bool,
    /// The first frame in the repository, held while a test file's frame may follow.
    candidate: Option<(String, u64)>,
}

#[derive(Debug, Default)]
pub(crate) struct Php {
    unit: Option<UnitBlock>,
    /// PHPStan table: the file named by the header row above.
    stan_file: Option<String>,
    collision: Option<CollisionBlock>,
    /// PHP_CodeSniffer's full report: the file of the `FILE:` header above.
    sniff: Option<SniffFile>,
}

/// A PHP_CodeSniffer full-report section; rows count once its `FOUND …` line confirmed it.
#[derive(Debug)]
struct SniffFile {
    path: String,
    found: bool,
}

/// ` 186 | ERROR | [x] Line indented incorrectly…` (trimmed): the line, whether it is an error
/// (a `WARNING` row is not), and the message.
fn sniff_row(t: &str) -> Option<(u64, bool, &str)> {
    let mut cells = t.splitn(3, '|');
    let line = super::num(cells.next()?.trim())?;
    let level = cells.next()?.trim();
    let msg = cells.next()?.trim();
    let error = match level {
        "ERROR" => true,
        "WARNING" => false,
        _ => return None,
    };
    Some((
        line,
        error,
        msg.strip_prefix("[x] ")
            .or_else(|| msg.strip_prefix("[ ] "))
            .unwrap_or(msg),
    ))
}

/// `[ExecStack] Running /p/vendor/bin/phpcs in /p` (Robo's `Exec`/`ExecStack` tasks): the
/// absolute directory the command runs in.
fn robo_exec_dir(t: &str) -> Option<&str> {
    let rest = t
        .strip_prefix("[ExecStack] Running ")
        .or_else(|| t.strip_prefix("[Exec] Running "))?;
    let (_, dir) = rest.rsplit_once(" in ")?;
    (dir.starts_with('/') && !dir.contains(' ') && dir.len() > 1).then_some(dir)
}

/// A failure as Collision (Laravel's and Pest's test printer) shows it: `FAILED  Tests\X >
/// description`, the message and the request's stack, then `at tests/X.php:17` above a code
/// frame.
#[derive(Debug)]
struct CollisionBlock {
    class: String,
    /// The test method, from a `Class->method()` frame of the stack.
    method: Option<String>,
    message: Option<String>,
    seq: u64,
    budget: u32,
}

/// Lines a Collision failure may take before its `at` line.
const COLLISION_BUDGET: u32 = 400;

fn is_dependency(path: &str) -> bool {
    crate::path::is_vendored(path) || path.starts_with("vendor/") || path.contains("/vendor/")
}

/// A line of PHPUnit's progress characters (`.`, `E`, `F`, `S`…) that may end in an
/// interpreter error printed without a newline before it.
fn glued_after_progress(l: &Line<'_>) -> bool {
    l.colon
        && l.last.is_ascii_digit()
        && matches!(
            l.first,
            b'.' | b'E' | b'F' | b'S' | b'I' | b'R' | b'W' | b'N'
        )
}

/// Psalm's issue types: parse errors, everything else is a type-checker finding.
fn psalm_type(issue: &str) -> BugType {
    if issue == "ParseError" {
        BugType::Syntax
    } else {
        BugType::TypeError
    }
}

/// PHPUnit's naming convention for test classes.
fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.ends_with("test.php") || name.ends_with(".phpt")
}

/// The bug type of an interpreter error.
fn fatal_type(kind: &str, msg: &str) -> BugType {
    if kind == "Parse error" || msg.starts_with("syntax error") || msg.contains("ParseError") {
        return BugType::Syntax;
    }
    let m = msg.to_ascii_lowercase();
    if (m.contains("class ") || m.contains("interface ") || m.contains("trait "))
        && m.contains(" not found")
        || m.contains("failed opening required")
    {
        BugType::Import
    } else if m.starts_with("uncaught ") {
        BugType::Logic
    } else {
        BugType::TypeError
    }
}

/// `Tests\XTest::testY with data set "x" (…)`: the name without the data set's values.
fn test_name(raw: &str) -> &str {
    let raw = raw.trim();
    if let Some(i) = raw.find(" with data set ") {
        let rest = &raw[i + 15..];
        let end = if let Some(q) = rest.strip_prefix('"') {
            q.find('"').map(|e| e + 2)
        } else {
            rest.find(' ')
        };
        return &raw[..i + 15 + end.unwrap_or(rest.len())];
    }
    raw
}

impl Php {
    #[inline]
    /// Collision's failure blocks (see [`CollisionBlock`]).
    fn collision_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if let Some(rest) = t.strip_prefix("FAILED  ")
            && let Some((class, _)) = rest.split_once(" > ")
        {
            let class = class.trim();
            if !class.is_empty() && !class.contains(' ') {
                self.collision = Some(CollisionBlock {
                    class: class.to_string(),
                    method: None,
                    message: None,
                    seq: l.no,
                    budget: COLLISION_BUDGET,
                });
                return true;
            }
        }
        let Some(b) = &mut self.collision else {
            return false;
        };
        if b.budget == 0 || t.starts_with("Tests:") {
            self.collision = None;
            return false;
        }
        b.budget -= 1;
        if b.message.is_none() && !t.is_empty() {
            b.message = Some(crate::sink::truncate_chars(t, 300).to_string());
        }
        if b.method.is_none()
            && let Some(at) = t.find(&format!("{}->", b.class))
        {
            let rest = &t[at + b.class.len() + 2..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].starts_with('(') {
                b.method = Some(name);
            }
        }
        if let Some(loc) = t.strip_prefix("at ")
            && !loc.contains(' ')
            && let Some((path, line)) = loc.rsplit_once(':')
            && path.ends_with(".php")
            && let Some(line) = super::num(line)
        {
            let b = self.collision.take().expect("checked");
            if is_dependency(path) {
                return true;
            }
            let test = match &b.method {
                Some(m) => format!("{}::{m}", b.class),
                None => b.class.clone(),
            };
            sink.emit(
                b.seq,
                Finding::new(
                    path,
                    line,
                    BugType::Logic,
                    b.message.as_deref().unwrap_or("test failed"),
                )
                .test(Some(&test))
                .conf(0.9)
                .tool("phpunit"),
            );
            return true;
        }
        false
    }

    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.unit.is_none()
            && self.stan_file.is_none()
            && self.collision.is_none()
            && self.sniff.is_none()
            && !l.colon_digit
            && !matches!(l.first, b'P' | b'F' | b'L' | b'0'..=b'9')
            && !(l.first == b'[' && l.trimmed().starts_with("[Exec"))
            && !glued_after_progress(l)
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if self.stan_file.is_some() && self.stan_line(t, l.no, sink) {
            return true;
        }
        if l.first == b'['
            && let Some(dir) = robo_exec_dir(t)
        {
            sink.learn_workspace(dir);
            return false;
        }
        if (self.sniff.is_some() || l.first == b'F') && self.sniff_line(l, t, sink) {
            return true;
        }
        if (self.collision.is_some() || l.first == b'F') && self.collision_line(l, t, sink) {
            return true;
        }
        if l.first.is_ascii_digit()
            && l.indent() == 0
            && super::ruby::numbered(t).is_some_and(|r| crate::contains(r, "::"))
            && let Some(c) = PHPUNIT_HEADER.captures(t)
        {
            self.end_unit(sink);
            self.unit = Some(UnitBlock {
                test: test_name(&c[1]).to_string(),
                message: String::new(),
                ty: BugType::Logic,
                seq: l.no,
                budget: BLOCK_BUDGET,
                done: false,
                candidate: None,
            });
            return true;
        }
        if self.unit.is_some() && self.unit_line(l, sink) {
            return true;
        }
        if l.first == b'L' {
            // PHPStan's header row: `Line   src/x.php` (sometimes `(in context of …)` after).
            if let Some(rest) = t.strip_prefix("Line ") {
                let path = rest.split_whitespace().next().unwrap_or("");
                if path.ends_with(".php") || path.ends_with(".phpt") {
                    self.stan_file = Some(path.to_string());
                    return true;
                }
            }
        }
        if t.starts_with("PHP ") || t.starts_with("Parse error:") || t.starts_with("Fatal error:") {
            if let Some(done) = self.interpreter(t, l.no, sink) {
                return done;
            }
        } else if glued_after_progress(l) {
            // PHPUnit's progress dots have no newline: a fatal error is glued after them.
            if let Some(i) = PHP_ERROR.find(t.as_bytes())
                && let Some(done) = self.interpreter(&t[i..], l.no, sink)
            {
                return done;
            }
        }
        if !l.colon_digit {
            return false;
        }
        if l.first == b'E'
            && let Some(c) = PSALM.captures(t)
        {
            let ty = psalm_type(&c[1]);
            sink.emit(
                l.no,
                Finding::new(&c[2], super::num(&c[3]).unwrap_or(0), ty, &c[5])
                    .col(super::num(&c[4]))
                    .conf(0.95)
                    .tool("psalm")
                    .rule(Some(&c[1])),
            );
            return true;
        }
        if super::ruby::lead_path(t).is_some_and(|p| p.ends_with(".php")) {
            if let Some(c) = PSALM_TEXT.captures(t) {
                if &c[4] == "error" {
                    sink.emit(
                        l.no,
                        Finding::new(
                            &c[1],
                            super::num(&c[2]).unwrap_or(0),
                            psalm_type(&c[5]),
                            &c[6],
                        )
                        .col(super::num(&c[3]))
                        .conf(0.95)
                        .tool("psalm")
                        .rule(Some(&c[5])),
                    );
                }
                return true;
            }
            if let Some(c) = STAN_RAW.captures(t) {
                let msg = &c[3];
                let ty = if msg.starts_with("Syntax error") {
                    BugType::Syntax
                } else {
                    BugType::TypeError
                };
                sink.emit(
                    l.no,
                    Finding::new(&c[1], super::num(&c[2]).unwrap_or(0), ty, msg)
                        .conf(0.8)
                        .tool("phpstan"),
                );
                return true;
            }
        }
        false
    }

    /// `PHP Parse error:  msg in x.php on line 12`, `Fatal error: Uncaught … in /p/x.php:12`.
    /// `None` when the line is not one.
    fn interpreter(&mut self, t: &str, seq: u64, sink: &mut Sink) -> Option<bool> {
        let body = t.strip_prefix("PHP ").unwrap_or(t);
        let (kind, msg) = body.split_once(':')?;
        let kind = kind.trim();
        match kind {
            "Parse error" | "Fatal error" => {}
            "Warning" | "Notice" | "Deprecated" | "Strict Standards" => return Some(true),
            _ => return None,
        }
        let msg = msg.trim();
        let (text, path, line) = if let Some((head, n)) = msg.rsplit_once(" on line ") {
            let (text, path) = head.rsplit_once(" in ")?;
            (text, path, super::num(n.trim())?)
        } else {
            let (text, loc) = msg.rsplit_once(" in ")?;
            let (path, n) = loc.trim().rsplit_once(':')?;
            (text, path, super::num(n)?)
        };
        let ty = fatal_type(kind, text);
        if is_dependency(path) {
            return Some(true);
        }
        sink.emit(
            seq,
            Finding::new(path, line, ty, text).conf(0.9).tool("php"),
        );
        Some(true)
    }

    fn stan_line(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        if t.is_empty() || t.starts_with('[') {
            self.stan_file = None;
            return false;
        }
        if t.starts_with("--") {
            return true;
        }
        let Some(c) = STAN_ROW.captures(t) else {
            // Continuation of a wrapped message, or a `🪪 identifier` / `💡 tip` line.
            return true;
        };
        let Some(path) = self.stan_file.clone() else {
            return false;
        };
        let msg = &c[2];
        let ty = if msg.starts_with("Syntax error") {
            BugType::Syntax
        } else {
            BugType::TypeError
        };
        sink.emit(
            seq,
            Finding::new(&path, super::num(&c[1]).unwrap_or(0), ty, msg)
                .conf(0.95)
                .tool("phpstan"),
        );
        true
    }

    /// PHP_CodeSniffer's full report (see [`SniffFile`]).
    fn sniff_line(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.indent() == 0
            && let Some(path) = t.strip_prefix("FILE: ")
        {
            let path = path.trim();
            if !path.is_empty() && !path.contains(' ') {
                self.sniff = Some(SniffFile {
                    path: path.to_string(),
                    found: false,
                });
                return true;
            }
        }
        let Some(f) = &mut self.sniff else {
            return false;
        };
        if t.is_empty() || t.bytes().all(|c| c == b'-') || t.starts_with("PHPCBF CAN FIX") {
            return true;
        }
        if !f.found {
            // `FOUND 2 ERRORS AFFECTING 1 LINE`, `FOUND 0 ERRORS AND 1 WARNING AFFECTING 1 LINE`.
            let found = t.starts_with("FOUND ") && (t.ends_with(" LINE") || t.ends_with(" LINES"));
            if found {
                f.found = true;
            } else {
                self.sniff = None;
            }
            return found;
        }
        // A message wrapped onto the next row: `     |       |     4`.
        if t.starts_with('|') {
            return true;
        }
        if let Some((line, error, msg)) = sniff_row(t) {
            if error && !is_dependency(&f.path) {
                sink.emit(
                    l.no,
                    Finding::new(&f.path, line, BugType::Linting, msg)
                        .conf(0.9)
                        .tool("phpcs"),
                );
            }
            return true;
        }
        self.sniff = None;
        false
    }

    fn unit_line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        let Some(b) = &mut self.unit else {
            return false;
        };
        if b.budget == 0
            || t.starts_with("FAILURES!")
            || t.starts_with("ERRORS!")
            || t.starts_with("There w")
            || t.starts_with("Tests: ")
            || (t.is_empty() && b.candidate.is_some())
        {
            self.end_unit(sink);
            return false;
        }
        b.budget -= 1;
        if b.done {
            return l.colon_digit && PHPUNIT_FRAME.is_match(t) || t.is_empty();
        }
        // Frames start at the margin; an indented `path:12` is a diff's context line.
        if l.colon_digit
            && l.indent() == 0
            && !matches!(l.first, b'-' | b'+' | b'@')
            && let Some(c) = PHPUNIT_FRAME.captures(t)
        {
            let Some(rel) = sink.repo_path(&c[1]) else {
                return true;
            };
            if is_dependency(&rel) {
                return true;
            }
            let line = super::num(&c[2]).unwrap_or(0);
            // A failed assertion belongs in the test, not in the project's own assertion
            // helper (a trait or base class) the test called: wait for a `…Test.php` frame.
            let assertion = b.message.starts_with("Failed asserting");
            if assertion && !is_test_file(&rel) {
                if b.candidate.is_none() {
                    b.candidate = Some((rel, line));
                }
                return true;
            }
            b.candidate = Some((rel, line));
            self.end_unit(sink);
            if let Some(b) = &mut self.unit {
                b.done = true;
            }
            return true;
        }
        if b.message.is_empty() && !t.is_empty() {
            if t.starts_with("ParseError") {
                b.ty = BugType::Syntax;
            }
            b.message = crate::sink::truncate_chars(t, 400).to_string();
        }
        // The message and diff stay visible to the other matchers.
        false
    }

    /// Emits the block's chosen frame, if any; the block stays open (done) for its callers.
    fn end_unit(&mut self, sink: &mut Sink) {
        let Some(b) = &mut self.unit else {
            return;
        };
        if let Some((path, line)) = b.candidate.take() {
            let msg = if b.message.is_empty() {
                "test failed"
            } else {
                b.message.as_str()
            };
            sink.emit(
                b.seq,
                Finding::new(&path, line, b.ty, msg)
                    .test(Some(&b.test))
                    .conf(0.9)
                    .tool("phpunit"),
            );
        }
        if !b.done {
            self.unit = None;
        }
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.end_unit(sink);
        self.unit = None;
        self.stan_file = None;
        self.collision = None;
        self.sniff = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn collision_failures_at_the_tests_line() {
        // Laravel's feature test under Collision (LogSage), shortened.
        let log = "   FAIL  Tests\\Feature\\ExampleTest\n  \u{2a2f} the application returns a successful response   0.37s\n   FAILED  Tests\\Feature\\ExampleTest > the application returns a successful\u{2026}\n  Expected response status code [200] but received 500.\nFailed asserting that 500 is identical to 200.\n#66 /home/runner/work/laravel/laravel/tests/Feature/ExampleTest.php(15): Illuminate\\Foundation\\Testing\\TestCase->get()\n#67 /home/runner/work/laravel/laravel/vendor/phpunit/phpunit/src/Framework/TestCase.php(1656): Tests\\Feature\\ExampleTest->test_the_application_returns_a_successful_response()\n\n  at tests/Feature/ExampleTest.php:17\n     13\u{2595}     public function test_the_application_returns_a_successful_response(): void\n  \u{279c}  17\u{2595}         $response->assertStatus(200);\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("tests/Feature/ExampleTest.php", 17)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Tests\\Feature\\ExampleTest::test_the_application_returns_a_successful_response")
        );
    }
    fn parse(log: &str) -> Vec<crate::BugReport> {
        parse_str(log, &ParseOptions::default())
    }

    #[test]
    fn codesniffer_full_report_errors_not_warnings() {
        // zerolab/og's Travis run, pasted in its pull request (fresh11).
        let log = "> source:fix:php-standards\nFILE: /home/travis/build/zerolab/og/tests/src/Kernel/PermissionEventTest.php\n--------------------------------------------------------------------------------\nFOUND 1 ERROR AFFECTING 1 LINE\n--------------------------------------------------------------------------------\n 186 | ERROR | [x] Line indented incorrectly; expected at least 6 spaces, found\n     |       |     4\n--------------------------------------------------------------------------------\nPHPCBF CAN FIX THE 1 MARKED SNIFF VIOLATIONS AUTOMATICALLY\n--------------------------------------------------------------------------------\nFILE: /home/travis/build/zerolab/og/src/Access/GroupCheck.php\n----------------------------------------------------------------------\nFOUND 0 ERRORS AND 1 WARNING AFFECTING 1 LINE\n----------------------------------------------------------------------\n 11 | WARNING | [x] Unused use statement\n----------------------------------------------------------------------\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "tests/src/Kernel/PermissionEventTest.php",
                186,
                BugType::Linting
            )
        );
        assert!(r[0].message.starts_with("Line indented incorrectly"));
    }

    #[test]
    fn codesniffer_under_robo_exec_stack_at_its_directory() {
        // BLT's `tests:phpcs:sniff:all` on a developer's machine, pasted in acquia/blt.
        let log = "[ExecStack] /Users/dane/sites/blt-canary/vendor/bin/phpcs\n[ExecStack] Running /Users/dane/sites/blt-canary/vendor/bin/phpcs in /Users/dane/sites/blt-canary\n...E. 5 / 5 (100%)\n\n\n\nFILE: /Users/dane/sites/blt-canary/docroot/modules/custom/something/something.module\n------------------------------------------------------------------------------------\nFOUND 2 ERRORS AFFECTING 1 LINE\n------------------------------------------------------------------------------------\n 1 | ERROR | [x] The PHP open tag must be followed by exactly one blank line\n 1 | ERROR | [x] Missing file doc comment\n------------------------------------------------------------------------------------\n\nTime: 143ms; Memory: 8MB\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("docroot/modules/custom/something/something.module", 1)
        );
        // Without Robo's line the directory is unknown: a home directory is no checkout.
        let bare = &log[log.find("...E.").unwrap()..];
        assert!(parse(bare).is_empty());
    }

    #[test]
    fn a_file_line_without_a_found_line_opens_nothing() {
        let log = "FILE: notes.txt\n 12 | ERROR | not a report\n";
        assert!(parse(log).is_empty());
    }

    #[test]
    fn phpunit_blocks() {
        // bcit-ci/CodeIgniter Travis logs (LogChunks)
        let log = "There were 2 failures:\n\n1) Form_validation_test::test_rule_valid_date\nFailed asserting that false is true.\n\n/home/travis/build/bcit-ci/CodeIgniter/tests/codeigniter/libraries/Form_validation_test.php:318\n/home/travis/build/bcit-ci/CodeIgniter/tests/mocks/ci_testcase.php:351\n\n2) DB_test::test_db_valid\nRuntimeException: Undefined property: CI_DB_mysql_driver::$_is_unbuffered\n\n/home/travis/build/bcit-ci/CodeIgniter/vendor/x/y.php:3\n/home/travis/build/bcit-ci/CodeIgniter/tests/mocks/database/db.php:136\n/home/travis/build/bcit-ci/CodeIgniter/tests/codeigniter/database/DB_test.php:37\n\nFAILURES!\nTests: 10, Assertions: 20, Failures: 2.\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "tests/codeigniter/libraries/Form_validation_test.php"
        );
        assert_eq!(r[0].line_number, 318);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Form_validation_test::test_rule_valid_date")
        );
        assert_eq!(
            (r[1].file_path.as_str(), r[1].line_number),
            ("tests/mocks/database/db.php", 136)
        );
    }

    #[test]
    fn assertion_in_a_helper_points_at_the_test() {
        // symfony/symfony Travis log (LogChunks)
        let log = "1) Symfony\\Component\\VarDumper\\Tests\\CasterExceptionCasterTest::testDefaultSettings\nFailed asserting that format description matches text.\n--- Expected\n+++ Actual\n@@ @@\n\n/home/travis/build/symfony/symfony/src/Symfony/Component/VarDumper/Test/VarDumperTestTrait.php:41\n/home/travis/build/symfony/symfony/src/Symfony/Component/VarDumper/Tests/Caster/ExceptionCasterTest.php:59\n\n2) Symfony\\Component\\Process\\Tests\\ProcessTest::testRaw\nFailed asserting that false is true.\n\n/home/travis/build/symfony/symfony/src/Symfony/Component/Process/Tests/Helper.php:9\n\nFAILURES!\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(
            r[0].file_path
                .ends_with("Tests/Caster/ExceptionCasterTest.php")
        );
        assert_eq!(r[0].line_number, 59);
        assert!(r[1].file_path.ends_with("Tests/Helper.php"));
    }

    #[test]
    fn psalm_text_and_phpstan_raw_formats() {
        // reviewdog/errorformat fmts/testdata/psalm.in and phpstan.in
        let psalm = "/path/to/main.php:258:4:error - InvalidGlobal: Cannot use global scope heredler in global scope\n/path/to/main.php:84:21:error - UndefinedConstant: Const __ROOT__ is not defined\n";
        let r = parse_str(psalm, &ParseOptions::with_workspace("/path/to"));
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("main.php", 258)
        );
        assert_eq!(r[1].rule.as_deref(), Some("UndefinedConstant"));
        // Without the workspace the absolute paths are outside the repository.
        assert!(parse(psalm).is_empty());
        let stan = "/application/controllers/Account.php:63:Call to static method BaseModel::TransRollback() with incorrect case: TransRollBack\n";
        let r = parse_str(stan, &ParseOptions::with_workspace("/application"));
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("controllers/Account.php", 63)
        );
        assert_eq!(r[0].error_type, BugType::TypeError);
    }

    #[test]
    fn fatal_error_glued_to_progress_dots() {
        // symfony/symfony Travis log (LogChunks)
        let log = ".........S............................S..............S...PHP Fatal error:  Call to undefined method Symfony\\Component\\Debug\\Tests\\Exception\\FlattenExceptionTest::assertNan() in /home/travis/build/symfony/symfony/src/Symfony/Component/Debug/Tests/Exception/FlattenExceptionTest.php on line 259\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 259);
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert!(
            r[0].file_path
                .starts_with("src/Symfony/Component/Debug/Tests/")
        );
    }

    #[test]
    fn data_set_names() {
        assert_eq!(
            super::test_name("A\\BTest::testX with data set \"solver.test\" ('solver.test', 'x')"),
            "A\\BTest::testX with data set \"solver.test\""
        );
        assert_eq!(
            super::test_name("A::b with data set #0 ('https://x', '/p')"),
            "A::b with data set #0"
        );
    }

    #[test]
    fn interpreter_errors() {
        // composer Travis log (LogChunks) and php -l
        let log = "PHP Fatal error:  Class 'Composer\\Util\\Response' not found in /home/travis/build/composer/composer/src/Composer/Util/RemoteFilesystem.php on line 286\nPHP Warning:  include_once(): Failed opening 'x.php' in src/a.php on line 25\nPHP Parse error:  syntax error, unexpected '}' in src/b.php on line 7\nErrors parsing src/b.php\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(r[0].file_path, "src/Composer/Util/RemoteFilesystem.php");
        assert_eq!(r[1].error_type, BugType::Syntax);
    }

    #[test]
    fn phpstan_and_psalm() {
        // composer Travis log (LogChunks)
        let log = " ------ -------------------------------------------------------------- \n  Line   src/Composer/Installer.php                                    \n ------ -------------------------------------------------------------- \n  1174   Method Composer\\Installer::updatePackageUrl() invoked with 8  \n         parameters, 7 required.                                       \n ------ -------------------------------------------------------------- \n\n [ERROR] Found 1 error\n\nERROR: InvalidReturnType - src/x.php:12:5 - The declared return type 'int' for f is incorrect\nINFO: MissingReturnType - src/y.php:3:10 - Method has no return type\nsrc/z.php:9:Call to an undefined method Foo::bar().\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/Composer/Installer.php", 1174)
        );
        assert_eq!(r[1].rule.as_deref(), Some("InvalidReturnType"));
        assert_eq!(r[2].line_number, 9);
    }
}
