//! Swift: swiftc / `swift build` / xcodebuild diagnostics (`x.swift:12:5: error: msg`, also as
//! xcpretty prints them: `❌  /path/x.swift:12:5: msg`), SwiftLint errors (`… error: Force Cast
//! Violation: … (force_cast)`), XCTest failures (`x.swift:12: error: -[Mod.Tests testY] :
//! XCTAssertEqual failed…` on macOS, `x.swift:12: error: Tests.testY : …` on Linux) and
//! xcpretty's failure summary (`Mod.Tests` / `  testY, message` / `  /path/x.swift:12`).
//!
//! It must never report `warning:`/`note:` lines, xcodebuild's summaries (`** BUILD FAILED **`,
//! `Failing tests:`), or errors without a source line (`error: Build input file cannot be
//! found`, `xcodebuild: error: …`).
//!
//! Swift Testing's own console lines (`✘ Test foo() recorded an issue at FooTests.swift:12:5: …`)
//! are not reported: they name the file only (`SourceLocation.description` is
//! `fileName:line:column`), so the directory in the repository is unknown.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// `path.swift:12[:5]: error: msg`.
static DIAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S.*?\.swift):(\d+)(?::(\d+))?: (error|warning|note|fatal error): (.*)$")
        .unwrap()
});
/// xcpretty: `❌  /path/x.swift:12:5: msg`.
static XCPRETTY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S.*?\.swift):(\d+):(\d+): (.*)$").unwrap());
/// `-[Mod.Tests testY] : msg` (macOS) or `Tests.testY : msg` (Linux).
static XCTEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:-\[([\w.]+) (\w+)\]|(\w+(?:\.\w+)*)\.(\w+)) : (.*)$").unwrap()
});
static LINT_RULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r" Violation: .*\(([a-z_]+)\)$").unwrap());

static CROSS: crate::Needle = crate::needle!("❌");

#[derive(Debug, Default)]
pub(crate) struct Swift {
    /// xcpretty summary: the test class header (`Mod.Tests`) and the `  testY, message` line.
    class: Option<String>,
    test: Option<(String, String, u64)>,
}

/// Classifies a swiftc error message.
fn classify(msg: &str) -> BugType {
    let m = msg.trim();
    if m.starts_with("no such module") || m.starts_with("could not find module") {
        return BugType::Import;
    }
    const SYNTAX: [&str; 8] = [
        "expected ",
        "consecutive statements",
        "consecutive declarations",
        "unterminated string literal",
        "extraneous ",
        "unexpected ",
        "invalid character",
        "unbalanced ",
    ];
    if SYNTAX.iter().any(|s| m.starts_with(s)) {
        BugType::Syntax
    } else {
        BugType::TypeError
    }
}

impl Swift {
    #[inline]
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        // xcpretty's summary: a class header at the margin, then indented test lines.
        let summary_test = self.class.is_some() && summary_test(l.text).is_some();
        let class_header =
            l.indent() == 0 && l.first.is_ascii_uppercase() && l.last.is_ascii_alphanumeric();
        !(l.colon_digit || summary_test || class_header)
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if !l.colon_digit {
            if let Some(body) = summary_test(l.text).filter(|_| self.class.is_some()) {
                if let Some((name, msg)) = body.split_once(", ")
                    && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.test = Some((name.to_string(), msg.to_string(), l.no));
                }
            } else if l.indent() == 0 && memchr::memchr(b' ', t.as_bytes()).is_none() {
                self.class = is_class_header(t).then(|| t.to_string());
                self.test = None;
            }
            return false;
        }
        // XCTest sources: Swift, and Objective-C for the summary's location line.
        if !crate::contains(t, ".swift:")
            && !crate::contains(t, ".m:")
            && !crate::contains(t, ".mm:")
        {
            return false;
        }
        // xcpretty: the glyph may follow other text the capture glued on.
        if let Some(i) = CROSS.find(&t.as_bytes()[..t.len().min(16)]) {
            let rest = t[i + "❌".len()..].trim_start();
            let Some(c) = XCPRETTY.captures(rest) else {
                return false;
            };
            let msg = &c[4];
            emit(
                sink,
                l.no,
                Finding::new(&c[1], super::num(&c[2]).unwrap_or(0), classify(msg), msg)
                    .col(super::num(&c[3]))
                    .conf(0.9)
                    .tool("swiftc"),
            );
            return true;
        }
        // xcpretty's summary location: the whole line is `/path/x.swift:12`.
        if l.indent() >= 2
            && !t.contains(' ')
            && let Some((path, n)) = t.rsplit_once(':')
            && (path.ends_with(".swift") || path.ends_with(".m") || path.ends_with(".mm"))
            && let (Some(n), Some((name, msg, seq))) = (super::num(n), self.test.take())
        {
            let class = self.class.as_deref().unwrap_or("");
            let test = format!("{class}.{name}");
            emit(
                sink,
                seq,
                Finding::new(path, n, BugType::Logic, &msg)
                    .test(Some(&test))
                    .conf(0.9)
                    .tool("xctest"),
            );
            return true;
        }
        let Some(c) = DIAG.captures(pod_lint(t)) else {
            return false;
        };
        if &c[4] != "error" && &c[4] != "fatal error" {
            return true;
        }
        let (path, line, msg) = (&c[1], super::num(&c[2]).unwrap_or(0), &c[5]);
        let col = c.get(3).and_then(|m| super::num(m.as_str()));
        if let Some(x) = XCTEST.captures(msg) {
            let test = match (x.get(1), x.get(2)) {
                (Some(class), Some(name)) => format!("{}.{}", class.as_str(), name.as_str()),
                _ => format!("{}.{}", &x[3], &x[4]),
            };
            emit(
                sink,
                l.no,
                Finding::new(path, line, BugType::Logic, &x[5])
                    .test(Some(&test))
                    .conf(0.9)
                    .tool("xctest"),
            );
            return true;
        }
        let (ty, rule, tool) = match LINT_RULE.captures(msg) {
            Some(r) => (BugType::Linting, r.get(1).map(|m| m.as_str()), "swiftlint"),
            None => (classify(msg), None, "swiftc"),
        };
        emit(
            sink,
            l.no,
            Finding::new(path, line, ty, msg)
                .col(col)
                .conf(0.95)
                .tool(tool)
                .rule(rule),
        );
        true
    }

    pub fn flush(&mut self, _sink: &mut Sink) {
        self.class = None;
        self.test = None;
    }
}

/// `pod lib lint` relays xcodebuild's diagnostics as `- ERROR | xcodebuild:  /path/x.swift:…`.
fn pod_lint(t: &str) -> &str {
    if !t.starts_with("- ") {
        return t;
    }
    match t.split_once("| xcodebuild:") {
        Some((_, rest)) => rest.trim_start(),
        None => t,
    }
}

/// Checked-out dependencies (Carthage, CocoaPods, SwiftPM, Xcode's package checkouts).
fn is_dependency(path: &str) -> bool {
    crate::path::is_vendored(path)
        || [
            "Carthage/Checkouts/",
            "Pods/",
            ".build/checkouts/",
            "SourcePackages/checkouts/",
        ]
        .iter()
        .any(|m| path.starts_with(m) || path.contains(&format!("/{m}")))
}

/// Emits a finding unless its file is a checked-out dependency.
fn emit(sink: &mut Sink, seq: u64, f: Finding<'_>) {
    if sink.repo_path(f.path).is_some_and(|p| !is_dependency(&p)) {
        sink.emit(seq, f);
    }
}

/// xcpretty's `  testY, message` line under a class header. Captures seen in the wild glue a
/// fragment of the previous line (`nl`) before the indentation; up to 3 such bytes are skipped.
fn summary_test(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let skip = b
        .iter()
        .take(4)
        .take_while(|c| !c.is_ascii_whitespace())
        .count();
    if skip > 3 {
        return None;
    }
    let rest = text.get(skip..)?.strip_prefix("  ")?;
    rest.starts_with("test").then_some(rest)
}

/// xcpretty's `Module_Tests.SomeTestCase` header: dotted identifiers, nothing else (an
/// Objective-C test class has no module: `InterprocessTest`).
fn is_class_header(t: &str) -> bool {
    t.len() < 200
        && t.split('.').all(|p| {
            p.bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        })
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    fn parse(log: &str) -> Vec<crate::BugReport> {
        parse_str(log, &ParseOptions::default())
    }

    #[test]
    fn xcpretty_summary_of_objective_c_tests() {
        // LogChunks realm-cocoa (Travis): the class has no module, the location is an `.m` file.
        let log = "InterprocessTest\n\n  testCompactOnLaunchFailSilently, \u{1b}[31m((sizeBefore) equal to (sizeAfter)) failed: (\"12288\") is not equal to (\"16384\")\u{1b}[0m\n\n  \u{1b}[36m/Users/travis/build/realm/realm-cocoa/Realm/Tests/InterprocessTests.m:139\u{1b}[0m\n\n  ```\nnl\nnl  testCompactOnLaunchFailSilently, ((0) equal to ([self runChildAndWait])) failed\n\n  /Users/travis/build/realm/realm-cocoa/Realm/Tests/InterprocessTests.m:122\n";
        let r = parse(log);
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
            .collect();
        let test = Some("InterprocessTest.testCompactOnLaunchFailSilently");
        assert_eq!(
            got,
            [
                ("Realm/Tests/InterprocessTests.m", 139, test),
                ("Realm/Tests/InterprocessTests.m", 122, test)
            ]
        );
    }

    #[test]
    fn compiler_and_xcpretty() {
        // Alamofire and SwiftyJSON Travis logs (LogChunks)
        let log = "nl\u{1b}[31m❌  \u{1b}[0m/Users/travis/build/Alamofire/Alamofire/Source/ParameterEncoding.swift:269:57: \u{1b}[31mthrown expression type 'AFError.ParameterEncoderFailureReason' does not conform to 'Error'\u{1b}[0m\n\u{1b}[31m❌  error: Build input file cannot be found: '/Users/travis/build/SwiftyJSON/SwiftyJSON/Source/Info-iOS.plist'\u{1b}[0m\n/home/runner/work/R/R/Sources/App/main.swift:3:8: error: no such module 'Foo'\n/home/runner/work/R/R/Sources/App/main.swift:9:5: warning: variable 'x' was never used\nSources/App/a.swift:4:1: error: expected '}' in class\nSources/App/b.swift:7:20: error: Force Cast Violation: Force casts should be avoided. (force_cast)\n";
        let r = parse(log);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0].file_path, "Source/ParameterEncoding.swift");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(r[1].error_type, BugType::Import);
        assert_eq!(r[2].error_type, BugType::Syntax);
        assert_eq!(r[3].error_type, BugType::Linting);
        assert_eq!(r[3].rule.as_deref(), Some("force_cast"));
    }

    #[test]
    fn pod_lib_lint_and_dependencies() {
        // ReactiveCocoa Travis logs (LogChunks)
        let log = "    - ERROR | xcodebuild:  /Users/travis/build/ReactiveCocoa/ReactiveCocoa/ReactiveCocoa/NSObject+Association.swift:134:2: error: use of unresolved identifier '_rac_objc_setAssociatedObject'\n    - ERROR | xcodebuild: Returned an unsuccessful exit code. You can use `--verbose` for more information.\n\u{26a0}\u{fe0f}  /Users/travis/build/ReactiveCocoa/ReactiveCocoa/Carthage/Checkouts/Nimble/Sources/Nimble/Expectation.swift:73:18: 'Matcher' is deprecated: Use Predicate instead\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "ReactiveCocoa/NSObject+Association.swift");
        assert_eq!(
            (r[0].line_number, r[0].error_type),
            (134, BugType::TypeError)
        );
        assert!(super::is_dependency(
            "Carthage/Checkouts/Nimble/Sources/Nimble/Expectation.swift"
        ));
    }

    #[test]
    fn xctest_failures() {
        let log = "/home/runner/work/R/R/Tests/AppTests/AppTests.swift:12: error: -[AppTests.AppTests testAdd] : XCTAssertEqual failed: (\"1\") is not equal to (\"2\")\nTest Case '-[AppTests.AppTests testAdd]' failed (0.002 seconds).\n/__w/R/R/Tests/AppTests/LinuxTests.swift:30: error: LinuxTests.testSub : XCTAssertTrue failed - \n\nAlamofire_iOS_Tests.SessionTestCase\n\n  testThatDataRequestWithInvalidURLStringThrowsResponseHandlerError, \u{1b}[31mXCTAssertTrue failed\u{1b}[0m\n\n  \u{1b}[36m/Users/travis/build/Alamofire/Alamofire/Tests/SessionTests.swift:550\u{1b}[0m\n\n  ```\nnl\nnl  testThatUploadFileRequestWithInvalidURLStringThrowsResponseHandlerError, XCTAssertTrue failed\n\n  /Users/travis/build/Alamofire/Alamofire/Tests/SessionTests.swift:638\n";
        let r = parse(log);
        assert_eq!(r.len(), 4, "{r:?}");
        assert!(
            r[3].test_name.as_deref().unwrap().ends_with(
                ".testThatUploadFileRequestWithInvalidURLStringThrowsResponseHandlerError"
            )
        );
        assert_eq!(r[0].test_name.as_deref(), Some("AppTests.AppTests.testAdd"));
        assert_eq!(r[1].test_name.as_deref(), Some("LinuxTests.testSub"));
        assert_eq!(r[2].file_path, "Tests/SessionTests.swift");
        assert_eq!(
            r[2].test_name.as_deref(),
            Some(
                "Alamofire_iOS_Tests.SessionTestCase.testThatDataRequestWithInvalidURLStringThrowsResponseHandlerError"
            )
        );
    }
}
