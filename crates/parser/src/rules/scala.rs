//! Scala: scalac / zinc diagnostics as sbt prints them (`[error] /path/X.scala:12:5: msg`, sbt
//! 0.13's `[error] /path/X.scala:12: msg`, Maven's and Gradle's `[ERROR] X.scala:12: error: msg`,
//! bare `X.scala:12: error: msg`), Scala 3 headers (`-- [E007] Type Mismatch Error:
//! src/x.scala:12:5 ---`), warnings made fatal (`-Xfatal-warnings` / `-Werror`), ScalaTest
//! failures (`- name *** FAILED ***` + `msg (XSpec.scala:12)`) and MUnit failures (`==> X
//! pkg.Suite.name  0.01s munit.FailException: /path/XSuite.scala:12 msg`); javac errors sbt prints
//! the same way in mixed projects.
//!
//! ScalaTest names only the file, not its directory: the path is rebuilt from the suite's fully
//! qualified name in sbt's `Failed tests:` summary and the sbt project of `(proj / Test / test)`
//! (`proj/src/test/scala/pkg/X.scala`); a failure whose suite never appears there is dropped.
//! It must never report a `[warn]` line unless the build said warnings are fatal, nor sbt's
//! summaries (`Compilation failed`, `one error found`, `Total time`), nor stack frames, nor sources
//! sbt generated under `target/`.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

static SCALA: crate::Needle = crate::needle!(".scala:");
static JAVA: crate::Needle = crate::needle!(".java:");
/// Twirl templates (Play): `app/views/x.scala.html`, `.scala.txt`, `.scala.xml`, `.scala.js`.
static TWIRL: crate::Needle = crate::needle!(".scala.");
static WARNINGS: crate::Needle = crate::needle!("arnings ");

/// `path.scala:line[:col]: [error: ]msg` after any `[error]`/`[ERROR]`/`[ant:scalac]` prefix.
static DIAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:[A-Za-z]:[\\/])?[^\s:\[]+?\.(?:scala\.(?:html|txt|xml|js)|scala|sc|sbt|java)):(\d+)(?::(\d+))?:\s*(.*)$")
        .unwrap()
});
/// Scala 3: `-- [E007] Type Mismatch Error: path:12:5 ------` or `-- Error: path:3:4 ---`.
static DOTTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^-- (?:\[(E\d+)\] )?([\w ]*?)(Error|Warning): (.+?\.(?:scala|sc)):(\d+):(\d+)(?: -+)?$",
    )
    .unwrap()
});
/// ScalaTest: `- test name *** FAILED ***` (any indentation, nested `-` allowed).
static ST_FAILED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^- (.+?) \*\*\* FAILED \*\*\*(?: \(.*\))?$").unwrap());
/// The position ScalaTest appends to a failure message: `(FooSpec.scala:12)`.
static ST_POS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(([\w$]+\.scala):(\d+)\)$").unwrap());
/// sbt's failing test task: `(proj / Test / test)`, `(Test / test)`, `(proj/test:test)`.
static SBT_TASK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\((?:([\w.-]+)\s*/\s*)?(?:Test\s*/\s*test(?:Only|Quick)?|(?:[\w-]+:)?test(?:Only|Quick)?|\w+:test(?:Only|Quick)?)\) ")
        .unwrap()
});
/// MUnit: `==> X pkg.Suite.test name  0.012s munit.ComparisonFailException: /p/X.scala:12 msg`.
static MUNIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^==> X (.+?)\s+\d+\.\d+s [\w.$]+: (.+?\.scala):(\d+)\s*(.*)$").unwrap()
});

/// Bound on buffered fatal-warning candidates and unresolved ScalaTest failures.
const MAX_PENDING: usize = 64;

/// A compiler error waiting for the echoed source line that tells an `import` apart.
#[derive(Debug)]
struct Diag {
    path: String,
    line: u64,
    col: Option<u64>,
    msg: String,
    ty: BugType,
    seq: u64,
    /// Lines left in which the echo may appear.
    budget: u8,
}

/// A ScalaTest failure known by file name only, until the summary names its suite and project.
#[derive(Debug)]
struct StFailure {
    suite: String,
    test: String,
    file: String,
    line: u64,
    msg: String,
    seq: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Scala {
    diag: Option<Diag>,
    /// `[warn]` diagnostics, reported only if the build then says warnings are fatal.
    warnings: Vec<(String, u64, Option<u64>, String, u64)>,
    /// The ScalaTest suite being printed (`SuiteName:` line).
    suite: String,
    /// A `*** FAILED ***` test whose message (and position) follows.
    st_open: Option<(String, u64, u8)>,
    failures: Vec<StFailure>,
    /// Fully qualified suites listed under sbt's `Failed tests:`.
    failed_suites: Vec<String>,
    in_failed_tests: bool,
}

/// Strips sbt / Maven / Gradle log-level prefixes; returns the rest and whether the level was
/// an error (`None` when there was no prefix).
fn strip_level(t: &str) -> (&str, Option<bool>) {
    const PREFIXES: [(&str, bool); 8] = [
        ("[error]", true),
        ("[ERROR]", true),
        ("[warn]", false),
        ("[WARNING]", false),
        ("[WARN]", false),
        ("[info]", false),
        ("[INFO]", false),
        ("[ant:scalac]", true),
    ];
    for (p, err) in PREFIXES {
        if let Some(rest) = t.strip_prefix(p) {
            return (rest.strip_prefix(' ').unwrap_or(rest), Some(err));
        }
    }
    (t, None)
}

/// Classifies a scalac message. Fatal warnings are LINTING; the `import` echo may still turn
/// a not-found error into IMPORT.
pub(crate) fn classify(msg: &str) -> BugType {
    let m = msg.trim_start_matches("error: ").trim();
    let lower = m.to_ascii_lowercase();
    const SYNTAX: [&str; 9] = [
        " expected but ",
        "illegal start of",
        "unclosed ",
        "invalid literal number",
        "expected class or object definition",
        "identifier expected",
        "unterminated ",
        "malformed ",
        "' expected",
    ];
    if SYNTAX.iter().any(|s| lower.contains(s)) || lower.starts_with("expected ") {
        return BugType::Syntax;
    }
    const LINT: [&str; 9] = [
        "is deprecated",
        "unused import",
        "is never used",
        "never used",
        "a pure expression does nothing",
        "match may not be exhaustive",
        "unused value",
        "unused parameter",
        "unreachable code",
    ];
    if LINT.iter().any(|s| lower.contains(s)) {
        return BugType::Linting;
    }
    BugType::TypeError
}

/// sbt writes generated sources (Twirl templates, BuildInfo, protobuf) under `target/`.
fn is_generated(path: &str) -> bool {
    let p = path.replace('\\', "/");
    p.starts_with("target/") || p.contains("/target/") || p.contains("/src_managed/")
}

fn is_not_found(msg: &str) -> bool {
    msg.contains("is not a member of") || msg.starts_with("not found:")
}

impl Scala {
    /// True when the line cannot concern this matcher: nothing open, and none of the shapes
    /// that start something (`.scala:` locations, `[`-prefixed sbt lines, Scala 3 `-- `
    /// headers, ScalaTest `- … ***`, MUnit `==> X`).
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        !(self.diag.is_some()
            || self.st_open.is_some()
            || self.in_failed_tests
            || l.colon_digit
            || l.first == b'['
            // `-- [E007] …` (Scala 3), `- name *** FAILED ***` (ScalaTest), `==> X` (MUnit).
            || (l.first == b'-' && matches!(l.trimmed().as_bytes().get(1), Some(b'-' | b' ')))
            || (l.first == b'=' && l.trimmed().starts_with("==>"))
            || (l.last == b':' && self.failures.len() < MAX_PENDING))
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let (t, level) = strip_level(l.trimmed());
        let t = t.trim_end();
        if let Some(d) = &mut self.diag {
            // sbt echoes the source line right after the message, then a caret line.
            if t.starts_with("import ") && is_not_found(&d.msg) {
                d.ty = BugType::Import;
            }
            // Scala 3 frames the echo: `12 |import a.b`.
            if let Some((_, code)) = t.split_once(" |")
                && code.trim_start().starts_with("import ")
                && d.ty == BugType::TypeError
            {
                d.ty = BugType::Import;
            }
            d.budget = d.budget.saturating_sub(1);
            if d.budget == 0 || t.starts_with("import ") {
                self.finish_diag(sink);
            }
        }
        if let Some((_, _, budget)) = &mut self.st_open {
            *budget = budget.saturating_sub(1);
            if *budget == 0 {
                self.st_open = None;
            }
        }
        let first = t.as_bytes().first().copied().unwrap_or(0);
        // sbt compiles a project's Java sources too and prints javac's errors the same way.
        let java = level.is_some() && l.colon_digit && crate::has(&JAVA, t);
        // The Twirl compiler reports a template's errors at its own lines, through sbt.
        let twirl = level.is_some() && l.colon_digit && crate::has(&TWIRL, t);
        if l.colon_digit && (java || twirl || crate::has(&SCALA, t)) {
            if first == b'-'
                && t.starts_with("-- ")
                && let Some(c) = DOTTY.captures(t)
            {
                let is_error = &c[3] == "Error";
                let title = format!("{}{}", &c[2], &c[3]);
                let code = c.get(1).map(|m| m.as_str());
                let ty = if c[2].contains("Syntax") {
                    BugType::Syntax
                } else {
                    BugType::TypeError
                };
                let line = super::num(&c[5]).unwrap_or(0);
                let col = super::num(&c[6]);
                if is_error {
                    self.start_diag(&c[4], line, col, &title, ty, l.no, code, sink);
                } else {
                    self.buffer_warning(&c[4], line, col, &title, l.no);
                }
                return true;
            }
            if let Some(c) = DIAG.captures(t) {
                let line = super::num(&c[2]).unwrap_or(0);
                let col = c.get(3).and_then(|m| super::num(m.as_str()));
                let rest = c[4].trim();
                let (is_error, msg) = if let Some(m) = rest.strip_prefix("error:") {
                    (true, m.trim())
                } else if let Some(m) = rest.strip_prefix("warning:") {
                    (false, m.trim())
                } else {
                    // sbt's level prefix decides; a bare line without `error:` is not scalac's.
                    match level {
                        Some(e) => (e, rest),
                        None => return false,
                    }
                };
                if is_error && level != Some(false) {
                    let ty = if c[1].ends_with(".java") {
                        super::jvm::compiler_type(msg)
                    } else {
                        classify(msg)
                    };
                    self.start_diag(&c[1], line, col, msg, ty, l.no, None, sink);
                } else {
                    self.buffer_warning(&c[1], line, col, msg, l.no);
                }
                return true;
            }
            if first == b'='
                && let Some(c) = MUNIT.captures(t)
            {
                let line = super::num(&c[3]).unwrap_or(0);
                let msg = if c[4].is_empty() {
                    "test failed"
                } else {
                    &c[4]
                };
                sink.emit(
                    l.no,
                    Finding::new(&c[2], line, BugType::Logic, msg)
                        .test(Some(&c[1]))
                        .conf(0.9)
                        .tool("munit"),
                );
                return true;
            }
        }
        // sbt's `[error] No warnings can be incurred under -Werror.`, scalac's `N warnings found
        // and -Werror specified`: only level-prefixed lines or bare scalac lines say so.
        if !self.warnings.is_empty()
            && crate::has(&WARNINGS, t)
            && (crate::contains(t, "No warnings can be incurred under")
                || crate::contains(t, "warnings found and -Werror specified")
                || crate::contains(t, "warnings found and -Xfatal-warnings"))
        {
            for (path, line, col, msg, seq) in std::mem::take(&mut self.warnings) {
                sink.emit(
                    seq,
                    Finding::new(&path, line, BugType::Linting, &msg)
                        .col(col)
                        .conf(0.9)
                        .tool("scalac"),
                );
            }
            return true;
        }
        self.scalatest(t, level, l.no, sink)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_diag(
        &mut self,
        path: &str,
        line: u64,
        col: Option<u64>,
        msg: &str,
        ty: BugType,
        seq: u64,
        code: Option<&str>,
        sink: &mut Sink,
    ) {
        self.finish_diag(sink);
        if is_generated(path) {
            return;
        }
        let msg = match code {
            Some(c) => format!("[{c}] {msg}"),
            None => msg.to_string(),
        };
        self.diag = Some(Diag {
            path: path.to_string(),
            line,
            col,
            msg: crate::sink::truncate_chars(&msg, 400).to_string(),
            ty,
            seq,
            budget: 3,
        });
    }

    fn finish_diag(&mut self, sink: &mut Sink) {
        if let Some(d) = self.diag.take() {
            sink.emit(
                d.seq,
                Finding::new(&d.path, d.line, d.ty, &d.msg)
                    .col(d.col)
                    .conf(0.95)
                    .tool(if d.path.ends_with(".java") {
                        "javac"
                    } else {
                        "scalac"
                    }),
            );
        }
    }

    fn buffer_warning(&mut self, path: &str, line: u64, col: Option<u64>, msg: &str, seq: u64) {
        if self.warnings.len() < MAX_PENDING {
            let msg = crate::sink::truncate_chars(msg, 300).to_string();
            self.warnings.push((path.to_string(), line, col, msg, seq));
        }
    }

    /// ScalaTest's reporter lines and sbt's test summary.
    fn scalatest(&mut self, t: &str, level: Option<bool>, seq: u64, sink: &mut Sink) -> bool {
        if self.in_failed_tests {
            // `[error] \tcom.example.FooSpec` lines follow `Failed tests:`.
            let name = t.trim();
            if level == Some(true)
                && !name.is_empty()
                && !name.contains(' ')
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._$".contains(&b))
            {
                if self.failed_suites.len() < MAX_PENDING {
                    self.failed_suites.push(name.to_string());
                }
                return true;
            }
            self.in_failed_tests = false;
        }
        if level == Some(true) {
            if t == "Failed tests:" || t == "Error during tests:" {
                self.in_failed_tests = true;
                return true;
            }
            if t.starts_with('(')
                && let Some(c) = SBT_TASK.captures(t)
            {
                let project = c.get(1).map(|m| m.as_str().to_string());
                self.resolve(project.as_deref(), sink);
                return true;
            }
        }
        if let Some(suite) = t.strip_suffix(':')
            && !suite.is_empty()
            && suite
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        {
            self.suite = suite.to_string();
            return false;
        }
        let tt = t.trim_start();
        if (tt.starts_with("- ") && tt.ends_with("***") || tt.ends_with("***)"))
            && let Some(c) = ST_FAILED.captures(tt)
        {
            self.st_open = Some((c[1].to_string(), seq, 6));
            return true;
        }
        if let Some((test, tseq, _)) = &self.st_open {
            // A stack frame (`at a.B.c(Promise.scala:656)`) is not ScalaTest's position.
            if tt.ends_with(')')
                && !tt.starts_with("at ")
                && let Some(c) = ST_POS.captures(tt)
            {
                if self.failures.len() < MAX_PENDING {
                    let msg = tt[..c.get(0).map_or(tt.len(), |m| m.start())].trim();
                    self.failures.push(StFailure {
                        suite: self.suite.clone(),
                        test: test.clone(),
                        file: c[1].to_string(),
                        line: super::num(&c[2]).unwrap_or(0),
                        msg: crate::sink::truncate_chars(msg, 300).to_string(),
                        seq: *tseq,
                    });
                }
                self.st_open = None;
                return true;
            }
        }
        false
    }

    /// sbt named the failing project: place the failures whose suite it listed.
    fn resolve(&mut self, project: Option<&str>, sink: &mut Sink) {
        let suites = std::mem::take(&mut self.failed_suites);
        for f in std::mem::take(&mut self.failures) {
            let Some(fqn) = suites
                .iter()
                .find(|s| s.rsplit('.').next() == Some(f.suite.as_str()))
            else {
                continue;
            };
            let pkg = fqn
                .rsplit_once('.')
                .map_or("", |(p, _)| p)
                .replace('.', "/");
            let mut path = String::new();
            if let Some(p) = project {
                path.push_str(p);
                path.push('/');
            }
            path.push_str("src/test/scala/");
            if !pkg.is_empty() {
                path.push_str(&pkg);
                path.push('/');
            }
            path.push_str(&f.file);
            let msg = if f.msg.is_empty() {
                "test failed"
            } else {
                &f.msg
            };
            sink.emit(
                f.seq,
                Finding::new(&path, f.line, BugType::Logic, msg)
                    .test(Some(&f.test))
                    .conf(0.6)
                    .tool("scalatest"),
            );
        }
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.finish_diag(sink);
        *self = Scala::default();
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn sbt_compile_errors_and_import_echo() {
        // akka/akka Travis job 560939223 (sbt 1.x, colour stripped).
        let log = "[error] /home/travis/build/akka/akka/akka-remote-tests/src/multi-jvm/scala/akka/remote/artery/TestMessage.scala:10:8: object internalByteString is not a member of package akka.protobufv3\n[error] import akka.protobufv3.internalByteString\n[error]        ^\n[error] /home/travis/build/akka/akka/akka-remote-tests/src/multi-jvm/scala/akka/remote/artery/TestMessage.scala:43:21: not found: value ByteString\n[error]         .setPayload(ByteString.copyFrom(msg.payload))\n[error]                     ^\n[error] two errors found\n[error] (akka-remote-tests / MultiJvm / compileIncremental) Compilation failed\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "akka-remote-tests/src/multi-jvm/scala/akka/remote/artery/TestMessage.scala"
        );
        assert_eq!((r[0].line_number, r[0].column), (10, Some(8)));
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(r[1].line_number, 43);
        assert_eq!(r[1].error_type, BugType::TypeError);
    }

    #[test]
    fn sbt013_syntax_and_fatal_warnings() {
        // scala/scala Travis job 567119813 (sbt 0.13: no column).
        let log = "[error] /home/travis/build/scala/scala/src/reflect/scala/reflect/internal/ReificationSupport.scala:614: ')' expected but 'else' found.\n[error]         if (sumSize(unlifted.flatten, 0) == sumSize(lst.flatten, 0) Some(unlifted) else None\n[error]                                                                                    ^\n[error] one error found\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "src/reflect/scala/reflect/internal/ReificationSupport.scala"
        );
        assert_eq!(r[0].error_type, BugType::Syntax);
        // akka/akka Travis job 566318733: `-Xfatal-warnings` prints the warnings as errors.
        let log = "[error] /home/travis/build/akka/akka/akka-distributed-data/src/main/scala/akka/cluster/ddata/Vote.scala:93:15: Unused import\n[error]   import Vote.Zero\n[error]               ^\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Linting);
        // javac's warnings through sbt (akka/akka Travis job 563433903) are not reports either.
        let log = "[warn] /home/travis/build/akka/akka/akka-actor/src/main/scala/akka/util/Unsafe.java:18:1: sun.misc.Unsafe is internal proprietary API and may be removed in a future release\n[warn]     public static final sun.misc.Unsafe instance;\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // Warnings alone are not reports (jenkinsci/analysis-model's sbtScalac.txt).
        let log = "[warn] /home/user/.jenkins/jobs/job/workspace/path/SomeFile.scala:111: method stop in class Thread is deprecated: see corresponding Javadoc for more information.\n[warn]     Thread.currentThread.stop()\n[warn] /home/user/.jenkins/jobs/job/workspace/Main.scala:4:18: implicit numeric widening\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn scalatest_failure_placed_by_sbt_summary() {
        // twitter/finagle Travis job 572992106.
        let log = "[info] ConcurrencyEndToEndTest:\n[info] - Requests exceeding limit should increase dropped_request count *** FAILED ***\n[info]   11 did not equal 10 (ConcurrencyEndToEndTest.scala:72)\n[info] - Should not increase dropped_request count when number of requests is less than limit *** FAILED ***\n[info]   9.0 was not greater than or equal to 10 (ConcurrencyEndToEndTest.scala:87)\n[info] *** 2 TESTS FAILED ***\n[error] Failed: Total 16, Failed 2, Errors 0, Passed 14\n[error] Failed tests:\n[error] \tcom.twitter.finagle.exp.ConcurrencyEndToEndTest\n[error] (finagle-exp / Test / test) sbt.TestsFailedException: Tests unsuccessful\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "finagle-exp/src/test/scala/com/twitter/finagle/exp/ConcurrencyEndToEndTest.scala"
        );
        assert_eq!(r[0].line_number, 72);
        assert_eq!(r[0].error_type, BugType::Logic);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Requests exceeding limit should increase dropped_request count")
        );
        assert_eq!(r[1].line_number, 87);
    }

    #[test]
    fn twirl_template_errors_at_the_templates_line() {
        // hbz/nwbib's Travis job 81961806 (Play 2.3, sbt 0.13).
        let log = "[info] Compiling 23 Scala sources and 6 Java sources to /home/travis/build/hbz/nwbib/target/scala-2.11/classes...\n[error] /home/travis/build/hbz/nwbib/app/views/tags/schema_org.scala.html:37: ')' expected but string literal found.\n[error] \t@property(\"actor\" \"actor\"),\n[error] \t                  ^\n[error] /home/travis/build/hbz/nwbib/app/views/tags/schema_org.scala.html:78: ')' expected but '}' found.\n[error] two errors found\n[error] (compile:compileIncremental) Compilation failed\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
            .collect();
        assert_eq!(
            got,
            vec![
                ("app/views/tags/schema_org.scala.html", 37, BugType::Syntax),
                ("app/views/tags/schema_org.scala.html", 78, BugType::Syntax),
            ]
        );
    }

    #[test]
    fn scala3_and_munit() {
        // playframework/twirl#461: a Scala 3 error in a template sbt generated under target/.
        let log = "-- [E006] Not Found Error: /home/mkurz/work/github-play-repos/twirl/compiler/target/test/twirl-parser/generated-templates/html/error.template.scala:19:63 \n19 |Seq[Any](format.raw/*2.1*/(\"\"\"<h1>Hello \"\"\"),_display_(/*2.12*/world),format.raw/*2.17*/(\"\"\"</h1>\n   |                                                               ^^^^^\n   |                                                        Not found: world\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
        // scalameta/munit#1119 (a Windows run, paths relative to the build).
        let log = "==> X magnolia1.tests.OtherTests.not attempt to derive instances for refined types 0.033s munit.FailException: test\\src\\test\\scala\\magnolia1\\tests\\OtherTests.scala:38 assertion failed\n37:      ) contains \"No given instance of type magnolia1.examples.Show[String, Long & magnolia1.tests.OtherTests.Character.Tag] was found.\"\n38:    )\n39:  }\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "test/src/test/scala/magnolia1/tests/OtherTests.scala"
        );
        assert_eq!((r[0].line_number, r[0].error_type), (38, BugType::Logic));
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("magnolia1.tests.OtherTests.not attempt to derive instances for refined types")
        );
        // scalameta/munit#152: a local checkout outside any runner path is never reported.
        let log = "==> X org.scalajs.testsuite.javalib.util.PropertiesSuite.string leading  0.001s munit.FailException: /Users/eric/workspace/portable-scala-java-test/testSuite/shared/src/test/scala/org/scalajs/testsuite/javalib/util/PropertiesSuite.scala:162 values are not equal even if they have the same `toString()`: bb as,dn\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }
}
