//! Java / Kotlin: Maven compiler errors (`[ERROR] /path/File.java:[line,col] msg`), Kotlin
//! (`e: file:///…:line:col msg`, `e: /…: (line, col): msg`), javac's `File.java:N: error:` (via
//! `generic`), and JUnit failures from Surefire (`<<< FAILURE!` headers), Gradle
//! (`Class > test() FAILED`) and Ant (the JUnit task's `Testcase: testX(Class):\tFAILED`,
//! junitlauncher's legacy-plain `Testcase: Class` / `Test: testX() took … FAILED`) with their
//! stack frames.
//!
//! JUnit frames name a class and a bare file name; the path is rebuilt from the package with the
//! Maven/Gradle source-root convention (`src/test/java/…`), and reported with a lower confidence.
//! It must never report `[WARNING]` lines, `w:` lines or build summaries (`BUILD FAILURE`).

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const BLOCK_BUDGET: u32 = 300;

static KT: crate::Needle = crate::needle!(".kt");

static MAVEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[ERROR\] (.+?):\[(\d+),(\d+)\] (.+)$").unwrap());
static KOTLIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?e: (?:file://)?(.+?\.kts?):(\d+):(\d+):? (.+)$").unwrap()
});
static KOTLIN_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?(?:e: )?(.+?\.kts?): \((\d+), (\d+)\):? (.+)$").unwrap()
});
/// Surefire 3 (`Class.method -- Time elapsed`) and, with JUnit 5, the releases before it (3.0.0-M6,
/// 2.22: `Class.method  Time elapsed`).
static SUREFIRE3: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?([\w.$]+)\.([\w$]+)(?:\(.*?\))? +(?:-- )?Time elapsed: .*<<< (FAILURE|ERROR)!$")
        .unwrap()
});
/// TestNG's results under Surefire 2 read `test on test(pkg.Class)(pkg.Class)` (the method, then
/// the instance's name and its class).
static SUREFIRE2: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\[ERROR\] )?(?:[\w$]+ on )?([\w$]+(?:\[[^\]]*\])?)\(([\w.$]+)\)(?:\([\w.$]+\))? +Time elapsed: .*<<< (FAILURE|ERROR)!$",
    )
    .unwrap()
});
/// JUnit 5 under Surefire names only the method; the class is on the `Tests run: … - in X` line
/// before it.
static SUREFIRE_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?([\w$]+)(?:\(\))? +Time elapsed: .*<<< (FAILURE|ERROR)!$").unwrap()
});
/// A Maven plugin's `[ERROR] /path/File.java:348: msg` (animal-sniffer, javadoc).
static MAVEN_PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[ERROR\] (\S+?\.(?:java|kt)):(\d+): (?:error: )?(.+)$").unwrap()
});
static GRADLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([\w.$]+) > (.+?) FAILED$").unwrap());
static STACK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:at )?(?:[\w.@-]+/+)?([\w.$]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)$",
    )
    .unwrap()
});
static JUNIT4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+\) ([\w$\[\]\- ]+?)\(([\w.$]+)\)$").unwrap());
static JUNIT5_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^JUnit [\w ]+:([\w.$]+):([\w$]+)\(.*\)$").unwrap());
static JUNIT5_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^MethodSource \[className = '([\w.$]+)', methodName = '([\w$]+)'").unwrap()
});
/// Gradle's plain console prints a task's name with no newline, so the first line of the
/// task's output is glued to it: `:compileJava/home/…/A.java:3: error: …`,
/// `:app:compileKotline: /home/…/App.kt: (1, 8): …`. Group 1 is the task path, group 2 the
/// tool's line.
static GRADLE_GLUED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?::[\w-]+)*:compile\w*?(?:Java(?:WithJavac)?|Kotlin|Groovy|Scala))(\S.*)$")
        .unwrap()
});
/// javac's own `path:line: error: msg`, as glued to a Gradle task name (the unglued form goes
/// through `generic`).
static JAVAC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?\.(?:java|kts?)):(\d+)(?::(\d+))?: error: (.+)$").unwrap());
static GRADLE_SHORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+([\w.$]+(?:Error|Exception|Failure)\w*) at ([\w$]+\.(?:java|kt)):(\d+)$")
        .unwrap()
});

/// Classifies a javac / kotlinc compiler message.
pub(crate) fn compiler_type(msg: &str) -> BugType {
    let m = msg.trim();
    // maven-compiler-plugin 2.x/3.0 repeats javac's own severity inside its row: `[ERROR]
    // /…/A.java:[19,34] error: package x does not exist`.
    let m = m.strip_prefix("error: ").unwrap_or(m);
    if (m.starts_with("package ") && m.ends_with("does not exist"))
        || m.starts_with("cannot access ")
        || m.contains("Unresolved reference") && m.contains("import")
    {
        BugType::Import
    } else if (m.ends_with(" expected") && (m.starts_with('\'') || m.starts_with('<')))
        || m.starts_with("illegal start of")
        || m.starts_with("reached end of file while parsing")
        || m.starts_with("unclosed ")
        || m.starts_with("class, interface, enum, or record expected")
        || m.starts_with("not a statement")
        || m.starts_with("Expecting ")
        || m.starts_with("Syntax error")
        // javac's parser on a block left unbalanced: `'catch' without 'try'`, `'try' without
        // 'catch', 'finally' or resource declarations`, `'else' without 'if'`.
        || (m.starts_with('\'') && m.contains("' without '"))
        || m.starts_with("orphaned ")
        || m.starts_with("illegal character")
        || m.starts_with("illegal escape character")
        || m.starts_with("malformed floating-point literal")
        || m.starts_with("invalid method declaration")
    {
        BugType::Syntax
    } else if is_doclint(m) {
        BugType::Linting
    } else {
        BugType::TypeError
    }
}

/// javadoc's (and javac `-Xdoclint`'s) complaints about a comment: the code compiles, the
/// documentation does not.
fn is_doclint(m: &str) -> bool {
    const DOCLINT: [&str; 9] = [
        "bad use of '",
        "malformed HTML",
        "unknown tag: ",
        "self-closing element not allowed",
        "unexpected end tag: ",
        "element not closed: ",
        "bad HTML entity",
        "no summary or caption for table",
        "unexpected content",
    ];
    DOCLINT.iter().any(|d| m.starts_with(d))
}

#[derive(Debug)]
struct TestBlock {
    /// Fully qualified test class, when known.
    class: String,
    /// The test's name as the runner printed it.
    test: String,
    message: Option<String>,
    seq: u64,
    budget: u32,
    /// The first frame of a test-side helper of another class (`TestUtils.assertProblems`):
    /// reported only when the stack never reaches the failing test's own class.
    helper: Option<(String, u64)>,
    /// The frame just read was an assertion library's (`org.junit.Assert.assertArrayEquals`):
    /// the repository frame that called it is an assertion helper, whatever its file's name.
    after_assert: bool,
    /// The class of such an assertion helper (mp4parser's `BoxComparator`): its recursive
    /// frames under the first are the helper's too.
    helper_class: Option<String>,
}

/// Assertion libraries: a repository frame directly under one of them compares values for a
/// test (a helper such as `BoxComparator.check`), it is not the code under test.
fn is_assertion_class(class: &str) -> bool {
    const ASSERT: [&str; 8] = [
        "org.junit.Assert",
        "org.junit.internal.ComparisonCriteria",
        "org.junit.jupiter.api.Assert",
        "junit.framework.Assert",
        "org.testng.Assert",
        "org.assertj.",
        "org.hamcrest.",
        "com.google.common.truth.",
    ];
    ASSERT.iter().any(|p| class.starts_with(p))
}

/// A compiler diagnostic waiting for its continuation lines (`symbol:`, `location:`, the source
/// line that shows an `import`).
#[derive(Debug)]
struct PendingDiag {
    path: String,
    line: u64,
    col: Option<u64>,
    msg: String,
    ty: BugType,
    tool: &'static str,
    seq: u64,
    budget: u32,
    /// The compiler echoes the source line (command-line javac/kotlinc, not Maven).
    echo: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Jvm {
    block: Option<TestBlock>,
    diag: Option<PendingDiag>,
    /// The test class of the latest Surefire `Tests run: … - in <class>` line.
    suite: Option<String>,
    /// Directory of the module whose tests run (from Surefire's `Surefire report directory:` or
    /// Gradle's `> Task :module:test`), prefixed to paths rebuilt from frames.
    module: Option<String>,
    /// Reports whose paths were rebuilt from class names while no module was known (Surefire
    /// 2 names its module only afterwards, in `Please refer to <module>/target/surefire-reports`).
    unplaced: Vec<crate::sink::Key>,
    /// A Gradle task line was seen: reports rebuilt without a module after one are the root
    /// project's, not waiting for a module.
    gradle_task_seen: bool,
    /// Gradle's failure report: `* Where:` seen (`Armed`), then the build script's line.
    gradle_where: GradleWhere,
    /// Repository directories of `.java` files compilers named (warnings included): a frame's
    /// package directory under one of them is where its source is, whatever the layout (Ant
    /// projects keep tests in `test/`, not Maven's `src/test/java/`).
    java_dirs: Vec<String>,
    /// The class of Ant junitlauncher's legacy-plain report being read (`Testcase: pkg.FooTest`).
    ant_testcase: Option<String>,
    /// The running Gradle task is one of ktlint-gradle's (`> Task :app:ktlintMainSourceSetCheck`),
    /// whose console report prints `/abs/File.kt:3:1 message` rows.
    ktlint_task: bool,
}

/// ktlint-gradle's console report (`ConsoleReportWorkAction`): `$absolutePath:$line:$col $detail`,
/// ` (cannot be auto-corrected)` and, verbose, ` ($ruleId)` after it.
static KTLINT_GRADLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^((?:/|[A-Za-z]:[\\/])\S+\.kts?):(\d+):(\d+) (\S.*)$").unwrap());

/// Gradle's `* Where:` section of a failed build, read as it streams by.
#[derive(Debug, Default)]
enum GradleWhere {
    #[default]
    None,
    Armed,
    /// The script's path and line, and the sequence number of the line naming them.
    At(String, u64, u64),
    /// `* What went wrong:` follows; its next line says what.
    What(String, u64, u64),
    /// What went wrong, waiting for Gradle's `> cause` lines under it (`A problem occurred
    /// evaluating root project 'x'.` / `> Could not find property 'Compile' on root project`):
    /// the cause is what a maintainer needs to read.
    Cause(String, u64, u64, String),
}

/// `Build file '/…/app/build.gradle' line: 20` (also a `Script`, a `Settings file` and an
/// `Initialization script`, Groovy or Kotlin DSL).
static GRADLE_WHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Build file|Settings file|Script|Initialization script) '(.+\.gradle(?:\.kts)?)' line: (\d+)$")
        .unwrap()
});

/// Bound on [`Jvm::unplaced`].
const MAX_UNPLACED: usize = 64;

/// Bound on the remembered `.java` directories.
const MAX_JAVA_DIRS: usize = 64;

/// Whether the source root above a package is a test one: a `test` directory (`src/test/java/`,
/// `src/integrationTest/java/`, `tests/`), not any name holding `test` (grpc-java's
/// `interop-testing/src/main/java/`).
fn is_test_root(root: &str) -> bool {
    root.split('/')
        .any(|seg| seg == "tests" || seg.starts_with("test") || seg.ends_with("Test"))
}

/// Gradle's `buildSrc` is a directory of the root build: while its own task runs
/// (`> Task :buildSrc:compileKotlin`), an absolute path from an unknown checkout
/// (`file:///D:/DevareaLocal/GIT/twilio-verify-android/buildSrc/src/main/kotlin/…`) is
/// repo-relative from `buildSrc/` on.
fn build_src_path<'t>(path: &'t str, module: Option<&str>, sink: &Sink) -> Option<&'t str> {
    if module != Some("buildSrc") || sink.repo_path(path).is_some() {
        return None;
    }
    let at = path.find("/buildSrc/")?;
    Some(&path[at + 1..])
}

/// The module directory of a repository path inside it (`compiler/src/main/resources` →
/// `compiler`, `src/main/java` → the root: `Some(None)`); `None` when the path shows none.
fn module_of(p: &str) -> Option<Option<String>> {
    ["/src/main/", "/src/test/", "/target/"]
        .iter()
        .filter_map(|m| {
            if p.starts_with(&m[1..]) {
                Some(0)
            } else {
                p.find(m)
            }
        })
        .min()
        .map(|i| Some(p[..i].to_string()).filter(|m| !m.is_empty()))
}

fn gradle_where_emit(path: &str, line: u64, seq: u64, what: &str, sink: &mut Sink) {
    let ty = if what.starts_with("Could not compile ") {
        BugType::Syntax
    } else {
        BugType::Logic
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, what).conf(0.7).tool("gradle"),
    );
}

/// `pkg.Class.method`: a package, a class (capitalised) and a method (not), nothing else.
fn qualified_method(name: &str) -> Option<(&str, &str)> {
    let (class, method) = name.rsplit_once('.')?;
    let simple = class.rsplit('.').next()?;
    let ident = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    };
    let ok = class.contains('.')
        && class.split('.').all(ident)
        && ident(method)
        && simple.as_bytes()[0].is_ascii_uppercase()
        && method.as_bytes()[0].is_ascii_lowercase();
    ok.then_some((class, method))
}

/// The first `n` segments of a class's package.
fn package_head(class: &str, n: usize) -> String {
    let pkg = class.rsplit_once('.').map_or("", |(p, _)| p);
    pkg.split('.').take(n).collect::<Vec<_>>().join(".")
}

/// Packages that are never the project's own code.
fn is_library_class(class: &str) -> bool {
    const LIBS: [&str; 21] = [
        // Spock and the Groovy runtime under it: `Specification.noExceptionThrown` is where a
        // Spock assertion fires, never the project's code.
        "spock.",
        "org.spockframework.",
        "groovy.",
        "org.codehaus.groovy.",
        "org.testng.",
        "java.",
        "javax.",
        "jdk.",
        "sun.",
        "com.sun.",
        "org.junit.",
        "junit.",
        "org.opentest4j.",
        "org.apache.maven.",
        "org.gradle.",
        "kotlin.",
        "kotlinx.",
        "org.assertj.",
        "org.hamcrest.",
        "org.mockito.",
        "org.springframework.",
    ];
    LIBS.iter().any(|p| class.starts_with(p))
}

/// Rebuilds a repo path for `file` in the package of `class`.
fn source_path(class: &str, file: &str, is_test: bool) -> String {
    let pkg = class.rsplit_once('.').map_or("", |(p, _)| p);
    let lang = if file.ends_with(".kt") {
        "kotlin"
    } else {
        "java"
    };
    let root = if is_test { "test" } else { "main" };
    let dir = pkg.replace('.', "/");
    if dir.is_empty() {
        format!("src/{root}/{lang}/{file}")
    } else {
        format!("src/{root}/{lang}/{dir}/{file}")
    }
}

impl Jvm {
    /// Registers a compiler diagnostic (javac, kotlinc, Maven); it is emitted once its
    /// continuation lines have been seen.
    #[allow(clippy::too_many_arguments)]
    pub fn compiler(
        &mut self,
        path: &str,
        line: u64,
        col: Option<u64>,
        msg: &str,
        tool: &'static str,
        echo: bool,
        seq: u64,
        sink: &mut Sink,
    ) {
        self.finish_diag(sink);
        self.diag = Some(PendingDiag {
            path: path.to_string(),
            line,
            col,
            msg: crate::sink::truncate_chars(msg, 400).to_string(),
            ty: compiler_type(msg),
            tool,
            seq,
            budget: 8,
            echo,
        });
    }

    fn finish_diag(&mut self, sink: &mut Sink) {
        if let Some(d) = self.diag.take() {
            sink.emit(
                d.seq,
                Finding::new(&d.path, d.line, d.ty, &d.msg)
                    .col(d.col)
                    .conf(0.95)
                    .tool(d.tool),
            );
        }
    }

    /// Continuation lines of a pending compiler diagnostic. Returns true when consumed.
    fn diag_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        let Some(d) = &mut self.diag else {
            return false;
        };
        let t = t.strip_prefix("[ERROR]").map_or(t, str::trim);
        if d.budget == 0 || t.is_empty() {
            self.finish_diag(sink);
            return false;
        }
        d.budget -= 1;
        if t.starts_with("symbol:") || t.starts_with("location:") {
            d.msg.push('\n');
            d.msg.push_str(crate::sink::truncate_chars(t, 200));
            return true;
        }
        if t.starts_with("import ") {
            let m = d.msg.to_ascii_lowercase();
            if m.contains("unresolved reference") || m.contains("cannot find symbol") {
                d.ty = BugType::Import;
            }
            return true;
        }
        // javac/kotlinc echo the source line, then a caret line (Maven does not).
        if d.echo && (t.starts_with('^') || d.budget == 7) {
            return true;
        }
        self.finish_diag(sink);
        false
    }

    fn frame(&mut self, t: &str, sink: &mut Sink) -> bool {
        if self.block.is_none() {
            return false;
        }
        let Some(c) = STACK.captures(t) else {
            return false;
        };
        let class = &c[1];
        let after_assert = match &mut self.block {
            Some(b) => std::mem::replace(&mut b.after_assert, is_assertion_class(class)),
            None => return false,
        };
        let Some(b) = &self.block else {
            return false;
        };
        // The first two segments of the package (`org.example` of `org.example.x.Y`).
        let top = |s: &str| {
            let pkg = s.rsplit_once('.').map_or("", |(p, _)| p);
            pkg.split('.').take(2).collect::<Vec<_>>().join(".")
        };
        // A project may live in a package that is a library's elsewhere (JNA is `com.sun.jna`):
        // then only the test class's own three-segment package is ours.
        let ours = if is_library_class(class) {
            b.class.contains('.') && package_head(class, 3) == package_head(&b.class, 3)
        } else {
            !b.class.contains('.') || top(class) == top(&b.class)
        };
        if ours {
            let outer = class.split('$').next().unwrap_or(class);
            let test_class = b.class.split('$').next().unwrap_or("");
            let own_class =
                outer == test_class || (!test_class.contains('.') && outer.ends_with(test_class));
            let is_test = own_class || c[3].contains("Test");
            let learned = self.learned_path(outer, &c[3], is_test);
            let unplaced = learned.is_none() && self.module.is_none();
            let path =
                learned.unwrap_or_else(|| self.in_module(source_path(outer, &c[3], is_test)));
            let line = super::num(&c[4]).unwrap_or(0);
            if !own_class
                && test_class.contains('.')
                && (after_assert || b.helper_class.as_deref() == Some(outer))
            {
                if let Some(b) = &mut self.block
                    && b.helper.is_none()
                {
                    b.helper = Some((path, line));
                    b.helper_class = Some(outer.to_string());
                }
                return true;
            }
            // A test-side helper of another class (javaparser's `TestUtils.assertProblems`,
            // called by every validator test) is where the assertion sits, not the failing test:
            // the test's own frame below it is. Code under test (no `Test` in its file) stays
            // the innermost repository frame.
            if !own_class && test_class.contains('.') && c[3].contains("Test") {
                if let Some(b) = &mut self.block
                    && b.helper.is_none()
                {
                    b.helper = Some((path, line));
                }
                return true;
            }
            let msg = b.message.clone().unwrap_or_else(|| "test failed".into());
            let test = b.test.clone();
            let seq = b.seq;
            let emitted = sink.emit(
                seq,
                Finding::new(&path, line, BugType::Logic, &msg)
                    .test(Some(&test))
                    .conf(0.6)
                    .tool("junit"),
            );
            if emitted && unplaced {
                self.unplaced_report(sink);
            }
            self.block = None;
        }
        true
    }

    fn start(&mut self, class: &str, test: String, seq: u64, sink: &mut Sink) {
        self.end_block(sink);
        self.block = Some(TestBlock {
            class: class.to_string(),
            test,
            message: None,
            seq,
            budget: BLOCK_BUDGET,
            helper: None,
            after_assert: false,
            helper_class: None,
        });
    }

    /// A compiler named a `.java` file of the repository (`repo` is repo-relative).
    pub fn learn_java_path(&mut self, repo: &str) {
        let Some((dir, _)) = repo.rsplit_once('/') else {
            return;
        };
        if self.java_dirs.len() < MAX_JAVA_DIRS && !self.java_dirs.iter().any(|d| d == dir) {
            self.java_dirs.push(dir.to_string());
        }
    }

    /// The file of `class` in a directory a compiler named: the one ending in the class's
    /// package directory, a test root (`test` in its path) for a test class.
    fn learned_path(&self, class: &str, file: &str, is_test: bool) -> Option<String> {
        let pkg = class.rsplit_once('.')?.0.replace('.', "/");
        let mut found = self.java_dirs.iter().filter(|d| {
            d.strip_suffix(pkg.as_str())
                .is_some_and(|root| root.is_empty() || root.ends_with('/'))
        });
        let Some(first) = found.next() else {
            return self.root_of_package(&pkg, file, is_test);
        };
        if let Some(pick) = std::iter::once(first)
            .chain(found)
            .find(|d| is_test_root(&d[..d.len() - pkg.len()]) == is_test)
        {
            return Some(format!("{pick}/{file}"));
        }
        // Only the other source set of the module was named (grpc-java's javadoc warned about
        // `interop-testing/src/main/java/…`; the failing test is in `src/test/java/…`): the
        // module's root is known, the source set follows Maven's and Gradle's layout.
        let (main, test) = ("/src/main/", "/src/test/");
        let (from, to) = if is_test { (main, test) } else { (test, main) };
        let other = format!("/{first}")
            .replacen(from, to, 1)
            .trim_start_matches('/')
            .to_string();
        Some(format!("{other}/{file}"))
    }

    /// The file of a class in a package no compiler named, under the source root of another
    /// package of the project that one did: a directory holding the class's first three package
    /// segments (`src/org/openstreetmap/josm/gui/mappaint/mapcss/parsergen` for
    /// `org.openstreetmap.josm.gui.help.HelpContentReader`: JOSM's Ant layout keeps its sources in
    /// `src/`), of the same kind, test or main.
    fn root_of_package(&self, pkg: &str, file: &str, is_test: bool) -> Option<String> {
        let head: Vec<&str> = pkg.splitn(4, '/').take(3).collect();
        if head.len() < 3 {
            return None;
        }
        let head = head.join("/");
        self.java_dirs.iter().find_map(|d| {
            let at = d.match_indices(head.as_str()).map(|(i, _)| i).find(|&i| {
                (i == 0 || d.as_bytes()[i - 1] == b'/')
                    && matches!(d.as_bytes().get(i + head.len()), None | Some(b'/'))
            })?;
            let root = &d[..at];
            (is_test_root(root) == is_test).then(|| format!("{root}{pkg}/{file}"))
        })
    }

    /// Closes the open JUnit block; a stack that never reached the test's own class is reported
    /// at its helper frame.
    fn end_block(&mut self, sink: &mut Sink) {
        let Some(b) = self.block.take() else { return };
        if let Some((path, line)) = b.helper {
            let msg = b.message.as_deref().unwrap_or("test failed");
            sink.emit(
                b.seq,
                Finding::new(&path, line, BugType::Logic, msg)
                    .test(Some(&b.test))
                    .conf(0.5)
                    .tool("junit"),
            );
        }
    }

    fn unplaced_report(&mut self, sink: &Sink) {
        if self.unplaced.len() < MAX_UNPLACED
            && let Some(key) = sink.last_key()
        {
            self.unplaced.push(key);
        }
    }

    fn set_module(&mut self, module: Option<String>) {
        self.module = module.filter(|m| !m.is_empty());
        self.unplaced.clear();
    }

    /// Prefixes the module directory to a path rebuilt from a class name.
    fn in_module(&self, path: String) -> String {
        match &self.module {
            Some(m) => format!("{m}/{path}"),
            None => path,
        }
    }

    /// Lines that name the module whose tests follow. Returns true when consumed.
    fn module_line(&mut self, t: &str, sink: &mut Sink) -> bool {
        if let Some(dir) = t
            .strip_prefix("[INFO] ")
            .unwrap_or(t)
            .strip_prefix("Surefire report directory: ")
        {
            let dir = dir.trim().trim_end_matches("/target/surefire-reports");
            self.set_module(sink.repo_path(dir));
            return true;
        }
        // Surefire 2's failure names the module after its tests ran: `[ERROR] Please refer to
        // /…/repo/core/target/surefire-reports for the individual test results.`
        if let Some(rest) = t.strip_prefix("[ERROR] Please refer to ")
            && let Some((dir, _)) = rest.split_once("/target/surefire-reports")
        {
            if self.module.is_none()
                && let Some(m) = sink.repo_path(dir).filter(|m| !m.is_empty())
            {
                sink.prefix_paths(&self.unplaced, &m);
            }
            self.unplaced.clear();
            return true;
        }
        // A Maven module's build begins (`[INFO] Building core 1.0-SNAPSHOT`, with `[2/5]` since
        // Maven 3.6); its directory is learned from the paths it prints.
        if let Some(rest) = t.strip_prefix("[INFO] Building ")
            && !rest.contains(':')
            && rest.split_ascii_whitespace().count() >= 2
        {
            self.set_module(None);
            return true;
        }
        // A module's own paths: `[INFO] skip non existing resourceDirectory /…/repo/compiler/src/main/resources`,
        // `[INFO] Add Source directory: /…/src/main/scala`, `[INFO] Building jar: /…/target/x.jar`.
        if let Some(rest) = t.strip_prefix("[INFO] ")
            && (rest.contains("/src/") || rest.contains("/target/"))
            && !rest.starts_with("Compiling ")
        {
            if let Some(m) = rest
                .split_ascii_whitespace()
                .find(|w| w.starts_with('/'))
                .and_then(|w| sink.repo_path(w))
                .and_then(|p| module_of(&p))
            {
                self.set_module(m);
            }
            return false;
        }
        // `[INFO] Compiling 2 source files to /…/repo/dirty-flag/target/test-classes`
        if let Some(rest) = t.strip_prefix("[INFO] Compiling ") {
            if let Some((_, out)) = rest.rsplit_once(" to ")
                && let Some((dir, _)) = out.trim().rsplit_once("/target/")
                && (dir.starts_with('/') || dir.as_bytes().get(1) == Some(&b':'))
            {
                self.set_module(sink.repo_path(dir));
            }
            return true;
        }
        // `> Task :app:core:test FAILED`, and before Gradle 4's rich console `:app:core:test`
        // (`:jodd-mail:compileJava UP-TO-DATE`): the project path is the task path's parents.
        let task = t.strip_prefix("> Task :").or_else(|| {
            t.strip_prefix(':').filter(|task| {
                let (path, outcome) = task.split_once(' ').unwrap_or((task, ""));
                path.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_'))
                    && outcome.bytes().all(|b| b.is_ascii_uppercase() || b == b'-')
            })
        });
        if let Some(task) = task {
            let (task, outcome) = task.split_once(' ').unwrap_or((task, ""));
            let split = task.rsplit_once(':');
            let project = split
                .map(|(project, _)| project.replace(':', "/"))
                .filter(|p| p.bytes().all(|b| b != b'.'));
            // A paste that begins after the task's start: its verdict, `:lint:test FAILED`,
            // names the module of the failures printed above it.
            if outcome == "FAILED"
                && !self.gradle_task_seen
                && self.module.is_none()
                && let Some(m) = project.as_deref().filter(|p| !p.is_empty())
            {
                sink.prefix_paths(&self.unplaced, m);
            }
            self.gradle_task_seen = true;
            self.ktlint_task = split.is_some_and(|(_, name)| name.starts_with("ktlint"));
            self.set_module(project);
            return false;
        }
        false
    }

    /// True when `line` cannot change this matcher's state or be claimed by it: no compiler
    /// diagnostic or JUnit block is open and the line has none of the shapes that start one
    /// (`[ERROR] `, `e: `, `path:N`, `… <<< FAILURE!`, `N) …)`, `JUnit …)`, `… FAILED`, a Gradle
    /// task name glued to its output, `:compileJava/…`, `> Task :…`, `Surefire report directory`,
    /// `Tests run: … - in <class>`). Must stay
    /// in step with [`Jvm::line`].
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        let starts = l.colon_digit
            || matches!(l.first, b'[' | b'e' | b'J' | b':' | b'>' | b'S' | b'T')
            || matches!(l.last, b'!' | b'D')
            || (l.first.is_ascii_digit() && l.last == b')');
        self.diag.is_none()
            && self.block.is_none()
            && !starts
            && l.first != b'*'
            && matches!(self.gradle_where, GradleWhere::None)
    }

    /// Gradle's failure report names the build script's line the build failed at:
    /// `* Where:`, `Build file '/…/app/build.gradle' line: 20`, `* What went wrong:`, then what
    /// (`A problem occurred evaluating project ':app'.`: the script threw, `LOGIC`; `Could not
    /// compile build file …`: `SYNTAX`). Returns true when the line was consumed.
    fn gradle_where(&mut self, l: &Line<'_>, t: &str, sink: &mut Sink) -> bool {
        if l.first == b'*' && t == "* Where:" {
            self.gradle_where = GradleWhere::Armed;
            return true;
        }
        match std::mem::take(&mut self.gradle_where) {
            GradleWhere::None => false,
            GradleWhere::Armed => {
                if let Some(c) = GRADLE_WHERE.captures(t)
                    && let Some(n) = super::num(&c[2])
                {
                    self.gradle_where = GradleWhere::At(c[1].to_string(), n, l.no);
                    return true;
                }
                false
            }
            GradleWhere::At(path, n, seq) => {
                if t.is_empty() {
                    self.gradle_where = GradleWhere::At(path, n, seq);
                } else if t == "* What went wrong:" {
                    self.gradle_where = GradleWhere::What(path, n, seq);
                } else {
                    gradle_where_emit(&path, n, seq, "build failed", sink);
                    return false;
                }
                true
            }
            GradleWhere::What(path, n, seq) => {
                if t.is_empty() {
                    self.gradle_where = GradleWhere::What(path, n, seq);
                    return true;
                }
                self.gradle_where =
                    GradleWhere::Cause(path, n, seq, crate::sink::truncate_chars(t, 300).into());
                true
            }
            GradleWhere::Cause(path, n, seq, mut what) => {
                if let Some(cause) = t.strip_prefix("> ")
                    && what.len() < 1000
                {
                    what.push('\n');
                    what.push_str(crate::sink::truncate_chars(cause, 300));
                    self.gradle_where = GradleWhere::Cause(path, n, seq, what);
                    return true;
                }
                gradle_where_emit(&path, n, seq, &what, sink);
                false
            }
        }
    }

    /// [`Jvm::line`] within a CI step. A Maven step run with `--fail-never` (a dependency
    /// warm-up such as `mvn dependency:go-offline test --fail-never`) cannot fail on its compiler
    /// errors, so its `[ERROR] File.java:[l,c]` lines are not the job's failure.
    pub fn line_in(&mut self, l: &Line<'_>, ctx: &crate::Ctx, sink: &mut Sink) -> bool {
        if l.first == b'['
            && ctx.step.contains("--fail-never")
            && l.trimmed().starts_with("[ERROR] ")
            && MAVEN.is_match(l.trimmed())
        {
            return true;
        }
        self.line(l, sink)
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if self.diag_line(t, sink) {
            return true;
        }
        if self.ktlint_task
            && l.colon_digit
            && let Some(c) = KTLINT_GRADLE.captures(t)
        {
            sink.emit(
                l.no,
                Finding::new(
                    &c[1],
                    super::num(&c[2]).unwrap_or(0),
                    BugType::Linting,
                    &c[4],
                )
                .col(super::num(&c[3]))
                .conf(0.9)
                .tool("ktlint"),
            );
            return true;
        }
        if (l.first == b'*' || !matches!(self.gradle_where, GradleWhere::None))
            && self.gradle_where(l, t, sink)
        {
            return true;
        }
        if let Some(b) = &mut self.block {
            if b.budget == 0 {
                self.end_block(sink);
            } else {
                b.budget -= 1;
                if let Some(c) = JUNIT5_SOURCE.captures(t) {
                    b.class = c[1].to_string();
                    b.test = format!("{}.{}", &c[1], &c[2]);
                    return true;
                }
                if t.ends_with(')')
                    && l.colon_digit
                    && (crate::contains(t, ".java:") || crate::contains(t, ".kt:"))
                    && self.frame(t, sink)
                {
                    return true;
                }
                let Some(b) = &mut self.block else {
                    return true;
                };
                if let Some(c) = GRADLE_SHORT.captures(l.text) {
                    if b.class.contains('.') {
                        let path = source_path(&b.class, &c[2], true);
                        let path = match &self.module {
                            Some(m) => format!("{m}/{path}"),
                            None => path,
                        };
                        let msg = b.message.clone().unwrap_or_else(|| c[1].to_string());
                        let unplaced = self.module.is_none() && !self.gradle_task_seen;
                        let emitted = sink.emit(
                            b.seq,
                            Finding::new(
                                &path,
                                super::num(&c[3]).unwrap_or(0),
                                BugType::Logic,
                                &msg,
                            )
                            .test(Some(&b.test))
                            .conf(0.5)
                            .tool("junit"),
                        );
                        if emitted && unplaced {
                            self.unplaced_report(sink);
                        }
                    }
                    self.block = None;
                    return true;
                }
                if b.message.is_none() && !t.is_empty() && !t.starts_with("MethodSource") {
                    let m = t.strip_prefix("=> ").unwrap_or(t);
                    b.message = Some(crate::sink::truncate_chars(m, 500).to_string());
                    return true;
                }
            }
        }
        let first = t.as_bytes().first().copied().unwrap_or(b' ');
        if matches!(first, b'[' | b'>' | b'S' | b':') && self.module_line(t, sink) {
            return true;
        }
        if first == b':'
            && let Some(c) = GRADLE_GLUED.captures(t)
        {
            return self.glued(&c[2], l, sink);
        }
        if matches!(first, b'[' | b'T') && t.contains(" - in ") {
            // `[ERROR] Tests run: 8, Failures: 1, … <<< FAILURE! - in sorald.miner.WarningMinerTest`
            if let Some((_, class)) = t.rsplit_once(" - in ") {
                let class = class.trim();
                if !class.is_empty()
                    && class
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$'))
                {
                    self.suite = Some(class.to_string());
                }
            }
        }
        // maven-compiler-plugin's `[WARNING] /…/src/loci/plugins/in/A.java: Some input files use
        // … deprecated API.` (no line) still shows where the module keeps its sources, which
        // need not be `src/main/java` (bioformats' `components/x/src/loci/…`).
        if first == b'['
            && let Some(rest) = t
                .strip_prefix("[WARNING] ")
                .or_else(|| t.strip_prefix("[ERROR] "))
            && let Some(i) = rest.find(".java:")
            && !rest[..i].contains(' ')
            && let Some(repo) = sink.repo_path(&rest[..i + 5])
            && !repo.contains("src/main/")
            && !repo.contains("src/test/")
        {
            self.learn_java_path(&repo);
        }
        if first == b'[' && t.starts_with("[ERROR] ") {
            if let Some(c) = MAVEN_PLAIN
                .captures(t)
                .filter(|c| !c[3].starts_with("warning"))
            {
                let line = super::num(&c[2]).unwrap_or(0);
                self.compiler(&c[1], line, None, &c[3], "maven", false, l.no, sink);
                return true;
            }
            if let Some(c) = MAVEN.captures(t) {
                let tool = if c[1].ends_with(".kt") {
                    "kotlinc"
                } else {
                    "javac"
                };
                let line = super::num(&c[2]).unwrap_or(0);
                self.compiler(
                    &c[1],
                    line,
                    super::num(&c[3]),
                    &c[4],
                    tool,
                    false,
                    l.no,
                    sink,
                );
                return true;
            }
        }
        if (l.colon_digit || t.starts_with("e: ") || t.starts_with("[ERROR] "))
            && crate::has(&KT, t)
            && let Some(c) = KOTLIN.captures(t).or_else(|| KOTLIN_OLD.captures(t))
        {
            let line = super::num(&c[2]).unwrap_or(0);
            // Only bare `path.kt: (l, c): …` lines may be followed by a source echo;
            // `e: …` lines (Gradle, Maven) come one after another with none.
            let echo = !t.starts_with('[') && !t.starts_with("e: ");
            let path = build_src_path(&c[1], self.module.as_deref(), sink);
            self.compiler(
                path.unwrap_or(&c[1]),
                line,
                super::num(&c[3]),
                &c[4],
                "kotlinc",
                echo,
                l.no,
                sink,
            );
            return true;
        }
        // Ant's JUnit task: `Testcase: testX(com.x.FooTest):\tFAILED` (or `Caused an ERROR`).
        if let Some(rest) = t.strip_prefix("Testcase: ")
            && (t.ends_with("FAILED") || t.ends_with("Caused an ERROR"))
            && let Some((name, _)) = rest.split_once("):")
            && let Some((method, class)) = name.split_once('(')
        {
            let test = format!("{method}({class})");
            self.start(class, test, l.no, sink);
            return true;
        }
        // Ant's junitlauncher, legacy-plain reports (printed by a later step, `… | xargs cat`):
        // `Testcase: pkg.FooTest`, then `Test: testX() took 15 sec(s) FAILED: msg` per method.
        if first == b'T'
            && let Some(class) = t.strip_prefix("Testcase: ")
            && class.contains('.')
            && class
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$'))
        {
            self.ant_testcase = Some(class.to_string());
            return true;
        }
        if first == b'T'
            && let Some(rest) = t.strip_prefix("Test: ")
            && let Some(class) = self.ant_testcase.clone()
            && let Some((name, verdict)) = rest.split_once(" took ")
            && [" FAILED", " ABORTED"].iter().any(|v| {
                verdict.find(v).is_some_and(|i| {
                    matches!(verdict.as_bytes().get(i + v.len()), None | Some(b':'))
                })
            })
        {
            let method = name.split('(').next().unwrap_or(name);
            let simple = class.rsplit('.').next().unwrap_or(&class);
            let test = format!("{simple}.{method}");
            self.start(&class, test, l.no, sink);
            return true;
        }
        if t.ends_with("<<< FAILURE!") || t.ends_with("<<< ERROR!") {
            if let Some(c) = SUREFIRE3.captures(t) {
                let test = format!("{}.{}", &c[1], &c[2]);
                self.start(&c[1], test, l.no, sink);
                return true;
            }
            if let Some(c) = SUREFIRE2.captures(t) {
                let test = format!("{}({})", &c[1], &c[2]);
                self.start(&c[2], test, l.no, sink);
                return true;
            }
            if let Some(c) = SUREFIRE_METHOD.captures(t)
                && let Some(class) = self.suite.clone()
            {
                let test = format!("{class}.{}", &c[1]);
                self.start(&class, test, l.no, sink);
                return true;
            }
        }
        if first.is_ascii_digit()
            && t.ends_with(')')
            && let Some(c) = JUNIT4.captures(t)
        {
            let test = format!("{}({})", &c[1], &c[2]);
            self.start(&c[2], test, l.no, sink);
            return true;
        }
        if t.starts_with("JUnit ")
            && t.ends_with(')')
            && let Some(c) = JUNIT5_HEADER.captures(t)
        {
            // Refined by the `MethodSource [className = …]` line that follows.
            let test = format!("{}.{}", &c[1], &c[2]);
            self.start(&c[1], test, l.no, sink);
            return true;
        }
        if t.ends_with(" FAILED")
            && t.contains(" > ")
            && let Some(c) = GRADLE.captures(t)
        {
            // TestNG under Gradle nests the suite and the test before the method: `TestNG >
            // MethodInterceptor > test.x.MultipleInterceptorsTest.testOrder FAILED`.
            if let Some((_, last)) = c[2].rsplit_once(" > ")
                && let Some((class, _)) = qualified_method(last)
            {
                self.start(class, last.to_string(), l.no, sink);
                return true;
            }
            let test = format!("{}.{}", &c[1], c[2].trim_end_matches("()"));
            self.start(&c[1], test, l.no, sink);
            return true;
        }
        // A project's own test logging (picard's Gradle build, TestNG's listeners):
        // `picard.sam.x.CollectSamErrorMetricsTest.samMetricsProvider FAILED`.
        if let Some(name) = t.strip_suffix(" FAILED")
            && let Some((class, _)) = qualified_method(name)
        {
            self.start(class, name.to_string(), l.no, sink);
            return true;
        }
        false
    }

    /// The output of a Gradle compile task that was glued to the task's name: parsed as the
    /// line it would have been (a Kotlin `e:` line, or javac's `path:N: error:`, which
    /// `generic` parses when it stands alone).
    fn glued(&mut self, rest: &str, l: &Line<'_>, sink: &mut Sink) -> bool {
        let inner = Line::new(rest, l.no, l.marker);
        if self.line(&inner, sink) {
            return true;
        }
        if let Some(c) = JAVAC.captures(rest) {
            let tool = if c[1].ends_with(".java") {
                "javac"
            } else {
                "kotlinc"
            };
            let line = super::num(&c[2]).unwrap_or(0);
            let col = c.get(3).and_then(|m| super::num(m.as_str()));
            self.compiler(&c[1], line, col, &c[4], tool, true, l.no, sink);
            return true;
        }
        false
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.finish_diag(sink);
        self.end_block(sink);
        match std::mem::take(&mut self.gradle_where) {
            GradleWhere::At(path, n, seq) | GradleWhere::What(path, n, seq) => {
                gradle_where_emit(&path, n, seq, "build failed", sink);
            }
            GradleWhere::Cause(path, n, seq, what) => gradle_where_emit(&path, n, seq, &what, sink),
            GradleWhere::None | GradleWhere::Armed => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{compiler_type, module_of};
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn a_module_is_the_directory_above_its_maven_layout() {
        let named = |m: &str| Some(Some(m.to_string()));
        assert_eq!(module_of("compiler/src/main/resources"), named("compiler"));
        assert_eq!(module_of("a/b/target/x.jar"), named("a/b"));
        assert_eq!(module_of("src/main/java"), Some(None));
        assert_eq!(module_of("target/classes"), Some(None));
        assert_eq!(module_of("docs/index.md"), None);
    }

    #[test]
    fn ant_junit_failures_placed_through_the_compilers_directories() {
        // java-native-access/jna (BugSwarm, Actions): Ant's JUnit task, tests in `test/`, a
        // project package under `com.sun.`; javac's warnings name the test directory.
        let javac = "    [javac] /home/runner/work/jna/jna/test/com/sun/jna/GCWaits.java:37: warning: [removal] runFinalization() in System has been deprecated and marked for removal\n";
        let junit = "    [junit] Testcase: testInvokeCallback(com.sun.jna.DirectCallbacksTest):\tFAILED\n    [junit] Existing native function wrapper should be reused expected same\n    [junit] junit.framework.AssertionFailedError: Existing native function wrapper should be reused\n    [junit] \tat com.sun.jna.CallbacksTest.testInvokeCallback(CallbacksTest.java:969)\n    [junit] \tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:104)\n    [junit] \n";
        let r = parse_str(&format!("{javac}{junit}"), &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("test/com/sun/jna/CallbacksTest.java", 969)
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("testInvokeCallback(com.sun.jna.DirectCallbacksTest)")
        );
        // Without a compiler's path, the Maven convention.
        let r = parse_str(junit, &ParseOptions::default());
        assert_eq!(
            r[0].file_path,
            "src/test/java/com/sun/jna/CallbacksTest.java"
        );
        // A JDK frame in `com.sun.` is still not the project's.
        let proxy = junit.replace(
            "com.sun.jna.CallbacksTest.testInvokeCallback(CallbacksTest.java:969)",
            "com.sun.proxy.Proxy12.invoke(Proxy12.java:5)",
        );
        assert_eq!(parse_str(&proxy, &ParseOptions::default()), []);
    }

    #[test]
    fn ant_junitlauncher_legacy_plain_reports_under_a_source_root_another_package_showed() {
        // JOSM (former fresh10): javac warned about a generated parser in `src/org/…`; the
        // JUnit report names `org.openstreetmap.josm.gui.help`, a package no compiler named.
        let log = "    [javac] /home/runner/work/josm/josm/src/org/openstreetmap/josm/gui/mappaint/mapcss/parsergen/TokenMgrError.java:110: warning: [cast] redundant cast to int\nTestcase: org.openstreetmap.josm.gui.help.HelpContentReaderTest\nTest: testFetchHelpTopicContentNominal() took 15 sec(s) FAILED: java.net.SocketTimeoutException: connect timed out\norg.openstreetmap.josm.gui.help.HelpContentReaderException: java.net.SocketTimeoutException: connect timed out\n\tat org.openstreetmap.josm.gui.help.HelpContentReader.fetchHelpTopicContent(HelpContentReader.java:55)\n\tat org.openstreetmap.josm.gui.help.HelpContentReaderTest.testFetchHelpTopicContentNominal(HelpContentReaderTest.java:39)\nCaused by: java.net.SocketTimeoutException: connect timed out\n\tat org.openstreetmap.josm.gui.help.HelpContentReader.fetchHelpTopicContent(HelpContentReader.java:48)\n\t... 1 more\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "src/org/openstreetmap/josm/gui/help/HelpContentReader.java",
                55
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("HelpContentReaderTest.testFetchHelpTopicContentNominal")
        );
        // A test passed: `Test: testFetchHelpTopicContentNull() took 708 milli sec(s)`.
        let passed = log.replace(
            "took 15 sec(s) FAILED: java.net.SocketTimeoutException: connect timed out",
            "took 708 milli sec(s)",
        );
        assert_eq!(parse_str(&passed, &ParseOptions::default()), []);
    }

    #[test]
    fn maven_compiler_and_surefire() {
        let log = "[ERROR] /home/runner/work/R/R/src/main/java/com/example/App.java:[5,9] cannot find symbol\n[ERROR]   symbol:   variable x\n[ERROR] /home/runner/work/R/R/src/main/java/com/example/B.java:[1,20] package org.foo does not exist\n[ERROR] com.example.AppTest.testAdd -- Time elapsed: 0.01 s <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <4> but was: <3>\n\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n\tat com.example.AppTest.testAdd(AppTest.java:12)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(r[1].error_type, BugType::Import);
        assert_eq!(r[2].file_path, "src/test/java/com/example/AppTest.java");
        assert_eq!(r[2].line_number, 12);
        assert_eq!(
            r[2].test_name.as_deref(),
            Some("com.example.AppTest.testAdd")
        );
    }

    #[test]
    fn javadoc_errors_are_linting() {
        assert_eq!(super::compiler_type("bad use of '>'"), BugType::Linting);
        assert_eq!(super::compiler_type("malformed HTML"), BugType::Linting);
        assert_eq!(
            super::compiler_type("cannot find symbol"),
            BugType::TypeError
        );
        // Ant's `[javadoc]` prefix goes, javadoc's echo and caret lines stay unreported.
        let log = " [javadoc] /home/runner/work/R/R/src/A.java:25: error: bad use of '>'\n [javadoc]  * <li> a<;>b\n [javadoc]                  ^\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].error_type),
            ("src/A.java", BugType::Linting)
        );
    }

    #[test]
    fn gradle_glued_task_output() {
        // Gradle 4's plain console: the task name, then the compiler's first line, no newline.
        let log = ":compileJava/home/runner/work/R/R/src/main/java/com/example/Client.java:3: error: package org.apache.commons.lang3 does not exist\nimport org.apache.commons.lang3.StringUtils;\n                               ^\n/home/runner/work/R/R/src/main/java/com/example/Order.java:6: error: incompatible types: String cannot be converted to int\n        return raw;\n               ^\n2 errors\n FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':compileJava'.\n> Compilation failed; see the compiler error output for details.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "src/main/java/com/example/Client.java");
        assert_eq!(r[0].line_number, 3);
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(r[1].file_path, "src/main/java/com/example/Order.java");
        assert_eq!(r[1].error_type, BugType::TypeError);

        let log = ":app:compileKotline: /home/runner/work/R/R/app/src/main/kotlin/App.kt: (4, 25): Type mismatch: inferred type is Int but String was expected\ne: /home/runner/work/R/R/app/src/main/kotlin/App.kt: (5, 26): Unresolved reference: missing\n FAILED\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "app/src/main/kotlin/App.kt");
        assert_eq!((r[0].line_number, r[0].column), (4, Some(25)));
        assert_eq!(r[1].line_number, 5);

        // Other tasks' glued output (`:testWARNING: …`) is not a diagnostic.
        let log =
            ":testWARNING: A terminally deprecated method in java.lang.System has been called\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn newer_gradle_shapes() {
        // Gradle >= 5 prints task names on their own line, and JUnit 5 names with `()`.
        let log = "> Task :compileJava FAILED\n/home/runner/work/R/R/src/main/java/com/example/Order.java:6: error: incompatible types: String cannot be converted to int\n        return raw;\n               ^\n1 error\n\ncom.example.CalculatorTest > addsNumbers() FAILED\n    org.opentest4j.AssertionFailedError at CalculatorTest.java:10\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "src/main/java/com/example/Order.java");
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(
            r[1].file_path,
            "src/test/java/com/example/CalculatorTest.java"
        );
        assert_eq!(r[1].line_number, 10);
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("com.example.CalculatorTest.addsNumbers")
        );
    }

    #[test]
    fn consecutive_kotlin_e_lines() {
        // `e:` lines have no source echo: the second must not be taken for one.
        let log = "e: file:///home/runner/work/R/R/src/main/kotlin/App.kt:4:25 Type mismatch\ne: file:///home/runner/work/R/R/src/main/kotlin/App.kt:5:26 Unresolved reference: missing\ne: /home/runner/work/R/R/src/main/kotlin/B.kt: (2, 1): Expecting a top level declaration\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[1].line_number, 5);
        assert_eq!(r[2].file_path, "src/main/kotlin/B.kt");
        assert_eq!(r[2].error_type, BugType::Syntax);
    }

    #[test]
    fn maven_fail_never_step() {
        // google/auto (labri-progress/cidiff data, google_auto_693): a warm-up step run with
        // `--fail-never` prints annotation-processing errors that fail nothing.
        let log = "##[group]Run mvn -B dependency:go-offline test clean -U --quiet --fail-never -DskipTests=true -f build-pom.xml\n##[endgroup]\n[ERROR] COMPILATION ERROR : \n[ERROR] /home/runner/work/auto/auto/service/processor/src/main/java/com/google/auto/service/processor/AutoServiceProcessor.java:[25,31] cannot find symbol\n  symbol:   class AutoService\n##[group]Run mvn -B verify -U --fail-at-end -Dsource.skip=true -Dmaven.javadoc.skip=true -f build-pom.xml\n[ERROR] /home/runner/work/auto/auto/value/src/it/functional/src/test/java/com/google/auto/value/CompileWithEclipseTest.java:[42,46] cannot access org.eclipse.jdt.internal.compiler.tool.EclipseCompiler\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 42);
        assert_eq!(r[0].error_type, BugType::Import);
    }

    #[test]
    fn surefire_2_junit5_qualified_names_and_test_helper_frames() {
        // fastjson2: Surefire 3.0.0-M6 with JUnit 5 prints `Class.method  Time elapsed` (no `--`), in
        // the `core` module its compiler named.
        let log = "[INFO] Compiling 402 source files to /home/runner/work/fastjson2/fastjson2/core/target/classes\n[ERROR] com.alibaba.fastjson2.JSONReaderStrTest.test_UUID  Time elapsed: 0.006 s  <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <true> but was: <false>\n\tat org.junit.jupiter.api.Assertions.assertTrue(Assertions.java:179)\n\tat com.alibaba.fastjson2.JSONReaderStrTest.test_UUID(JSONReaderStrTest.java:62)\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number, r.test_name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [(
                "core/src/test/java/com/alibaba/fastjson2/JSONReaderStrTest.java",
                62,
                Some("com.alibaba.fastjson2.JSONReaderStrTest.test_UUID")
            )]
        );
        // javaparser: a shared test helper asserts; the failing test's own frame is below it
        // (a nested test class's frame names its outer class's file). Two tests sharing the
        // helper are two failures.
        let helper = "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n\tat com.github.javaparser.utils.TestUtils.assertCollections(TestUtils.java:229)\n\tat com.github.javaparser.utils.TestUtils.assertProblems(TestUtils.java:233)\n";
        let log = format!(
            "[ERROR] com.github.javaparser.ast.validator.Java1_3ValidatorTest.noAssert -- Time elapsed: 0.012 s <<< FAILURE!\norg.opentest4j.AssertionFailedError:\n{helper}\tat com.github.javaparser.ast.validator.Java1_3ValidatorTest.noAssert(Java1_3ValidatorTest.java:41)\n[ERROR] com.github.javaparser.ast.validator.Java15ValidatorTest$Record$RecordDeclarationForbidden.recordDeclaration -- Time elapsed: 0.002 s <<< FAILURE!\norg.opentest4j.AssertionFailedError:\n{helper}\tat com.github.javaparser.ast.validator.Java15ValidatorTest$Record$RecordDeclarationForbidden.recordDeclaration(Java15ValidatorTest.java:72)\n"
        );
        let r = parse_str(&log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "src/test/java/com/github/javaparser/ast/validator/Java1_3ValidatorTest.java",
                    41
                ),
                (
                    "src/test/java/com/github/javaparser/ast/validator/Java15ValidatorTest.java",
                    72
                )
            ]
        );
        // A stack that never reaches the test's class (cut, or a failure in a base class's
        // set-up) is reported at the helper; code under test stays the innermost frame.
        let log = format!(
            "[ERROR] com.github.javaparser.ast.XTest.a -- Time elapsed: 0.1 s <<< FAILURE!\norg.opentest4j.AssertionFailedError:\n{helper}"
        );
        let r = parse_str(&log, &ParseOptions::default());
        assert_eq!(
            r[0].file_path,
            "src/test/java/com/github/javaparser/utils/TestUtils.java"
        );
        let log = "[ERROR] com.github.javaparser.ast.XTest.a -- Time elapsed: 0.1 s <<< ERROR!\njava.lang.IllegalStateException: x\n\tat com.github.javaparser.ast.Node.walk(Node.java:12)\n\tat com.github.javaparser.ast.XTest.a(XTest.java:5)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/main/java/com/github/javaparser/ast/Node.java", 12)
        );
    }

    #[test]
    fn surefire_junit5_without_prefix_in_a_module() {
        // iluwatar/java-design-patterns (LogChunks 544453998): Surefire 2.19, Maven on Travis.
        let log = "[INFO] Compiling 2 source files to /home/travis/build/iluwatar/java-design-patterns/dirty-flag/target/test-classes\nRunning org.dirty.flag.DirtyFlagTest\nTests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.088 sec <<< FAILURE! - in org.dirty.flag.DirtyFlagTest\ntestIsDirty()  Time elapsed: 0.058 sec  <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <false> but was: <true>\n\tat org.dirty.flag.DirtyFlagTest.testIsDirty(DirtyFlagTest.java:45)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "dirty-flag/src/test/java/org/dirty/flag/DirtyFlagTest.java"
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("org.dirty.flag.DirtyFlagTest.testIsDirty")
        );
    }

    #[test]
    fn a_gradle_verdict_after_a_pasted_failure_names_its_module() {
        // athkalia/Just-Another-Android-App#55: the paste begins after `:lint:test` started,
        // so only its verdict says the module; a root `:test FAILED` adds no directory.
        let log = "...\ncom.example.lint.detectors.AndroidLogDetectorTest > test_detector_triggering FAILED\n    junit.framework.AssertionFailedError at AndroidLogDetectorTest.java:43\n\n4 tests completed, 2 failed\n:lint:test FAILED\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "lint/src/test/java/com/example/lint/detectors/AndroidLogDetectorTest.java"
        );
        let root = log.replace(":lint:test FAILED", ":test FAILED");
        let r = parse_str(&root, &ParseOptions::default());
        assert_eq!(
            r[0].file_path,
            "src/test/java/com/example/lint/detectors/AndroidLogDetectorTest.java"
        );
    }

    #[test]
    fn gradle_3s_plain_task_lines_name_the_module() {
        // jodd's Travis job (Gradle 3): task names without `> Task`, then the failure summary.
        let log = ":jodd-mail:compileJava UP-TO-DATE\n:jodd-mail:test\n\tat test testParseEML(jodd.mail.EmailUtilTest)\n\njodd.mail.EmailUtilTest > testParseEML FAILED\n    java.lang.AssertionError at EmailUtilTest.java:66\n\n17 tests completed, 1 failed\n:jodd-mail:test FAILED\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "jodd-mail/src/test/java/jodd/mail/EmailUtilTest.java"
        );
        // A root project's task names no module; a task glued to its output is no task line.
        let root = log.replace(":jodd-mail:test\n", ":test\n");
        let r = parse_str(&root, &ParseOptions::default());
        assert_eq!(r[0].file_path, "src/test/java/jodd/mail/EmailUtilTest.java");
        // (Without its verdict: a `:jodd-mail:test FAILED` after the failure names the module.)
        let glued = log
            .replace(":jodd-mail:compileJava UP-TO-DATE\n", "")
            .replace(":jodd-mail:test FAILED\n", "")
            .replace(
                ":jodd-mail:test\n",
                ":jodd-mail:javadocwarning: [options] x\n",
            );
        let r = parse_str(&glued, &ParseOptions::default());
        assert_eq!(r[0].file_path, "src/test/java/jodd/mail/EmailUtilTest.java");
    }

    #[test]
    fn a_maven_module_is_learned_from_its_own_paths_and_forgotten_at_the_next() {
        // mustache.java's Travis job: the second reactor run compiles nothing, so no
        // `Compiling … to` line names `compiler`; its resource directory does.
        let indy = "[INFO] Compiling 5 source files to /home/travis/build/spullara/mustache.java/indy/target/test-classes\n";
        let compiler = "[INFO] Building compiler 0.8.14-SNAPSHOT\n[INFO] skip non existing resourceDirectory /home/travis/build/spullara/mustache.java/compiler/src/main/resources\n";
        let failure = "Running com.github.mustachejava.inverter.InverterTest\nTests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.045 sec <<< FAILURE! - in com.github.mustachejava.inverter.InverterTest\ntestSimple(com.github.mustachejava.inverter.InverterTest)  Time elapsed: 0.012 sec  <<< FAILURE!\njava.lang.AssertionError: expected:<1> but was:<2>\n\tat com.github.mustachejava.inverter.InverterTest.testSimple(InverterTest.java:40)\n\n";
        let r = parse_str(
            &format!("{indy}{compiler}{failure}"),
            &ParseOptions::default(),
        );
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "compiler/src/test/java/com/github/mustachejava/inverter/InverterTest.java"
        );
        // A module that prints no path of its own is not taken for the one before it.
        let r = parse_str(
            &format!("{indy}[INFO] Building compiler 0.8.14-SNAPSHOT\n{failure}"),
            &ParseOptions::default(),
        );
        assert_eq!(
            r[0].file_path,
            "src/test/java/com/github/mustachejava/inverter/InverterTest.java"
        );
    }

    #[test]
    fn surefire_2_names_the_module_after_its_tests() {
        // YCSB's Travis job (`mvn test -q`, Surefire 2.12 with TestNG): the module is named only
        // in Maven's error after the run.
        let log = "Running TestSuite\nTests run: 40, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 1.897 sec <<< FAILURE!\ntestJSONArrayMeasurementsExporter(com.yahoo.ycsb.measurements.exporter.TestMeasurementsExporter)  Time elapsed: 0.386 sec  <<< FAILURE!\njava.lang.NullPointerException\n\tat com.yahoo.ycsb.measurements.exporter.TestMeasurementsExporter.testJSONArrayMeasurementsExporter(TestMeasurementsExporter.java:56)\n\n\nResults :\n\nFailed tests:   testJSONArrayMeasurementsExporter(com.yahoo.ycsb.measurements.exporter.TestMeasurementsExporter)\n\nTests run: 40, Failures: 1, Errors: 0, Skipped: 0\n\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.12.4:test (default-test) on project core: There are test failures.\n[ERROR] \n[ERROR] Please refer to /home/travis/build/brianfrankcooper/YCSB/core/target/surefire-reports for the individual test results.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "core/src/test/java/com/yahoo/ycsb/measurements/exporter/TestMeasurementsExporter.java"
        );
        // A root module's report directory moves nothing.
        let root = log.replace("YCSB/core/target", "YCSB/target");
        let r = parse_str(&root, &ParseOptions::default());
        assert_eq!(
            r[0].file_path,
            "src/test/java/com/yahoo/ycsb/measurements/exporter/TestMeasurementsExporter.java"
        );
    }

    #[test]
    fn testng_under_surefire_2_names_the_method_on_its_instance() {
        // swagger-maven-plugin's Travis job (Surefire 2.12.4, TestNG).
        let log = "testGeneratedDoc on testGeneratedDoc(com.github.kongchen.smp.integration.SwaggerMavenPluginTest)(com.github.kongchen.smp.integration.SwaggerMavenPluginTest)  Time elapsed: 3.556 sec  <<< FAILURE!\njava.lang.AssertionError: 372 expected:<<th>body</th>> but was:<<th>status</th>>\n\tat org.testng.Assert.fail(Assert.java:89)\n\tat org.testng.Assert.assertEquals(Assert.java:171)\n\tat com.github.kongchen.smp.integration.SwaggerMavenPluginTest.testGeneratedDoc(SwaggerMavenPluginTest.java:63)\n\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "src/test/java/com/github/kongchen/smp/integration/SwaggerMavenPluginTest.java",
                63
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("testGeneratedDoc(com.github.kongchen.smp.integration.SwaggerMavenPluginTest)")
        );
    }

    #[test]
    fn gradles_where_section_names_the_build_scripts_line() {
        // hacker-news-android's Travis job (Gradle 2): the app's build script throws.
        let log = "FAILURE: Build failed with an exception.\n\n* Where:\nBuild file '/home/travis/build/dinosaurwithakatana/hacker-news-android/app/build.gradle' line: 20\n\n* What went wrong:\nA problem occurred evaluating project ':app'.\n> Neither path nor baseDir may be null or empty string. path='null' basedir='/home/travis/build/dinosaurwithakatana/hacker-news-android/app'\n\n* Try:\nRun with --stacktrace option to get the stack trace.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("app/build.gradle", 20, BugType::Logic)
        );
        // The `> ` cause under what went wrong is part of the message (mifosx, Gradle 1).
        assert_eq!(
            r[0].message,
            "A problem occurred evaluating project ':app'.\nNeither path nor baseDir may be null or empty string. path='null' basedir='/home/travis/build/dinosaurwithakatana/hacker-news-android/app'"
        );
        let cut = "* Where:\nBuild file '/home/travis/build/o/r/build.gradle' line: 10\n\n* What went wrong:\nA problem occurred evaluating root project 'r'.\n> Could not find method mavenRepo() for arguments [{name=x}] on repository container.";
        let r = parse_str(cut, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].message.ends_with("on repository container."), "{r:?}");
        // A Kotlin DSL script that does not compile; a script outside the checkout (an init
        // script in the Gradle home) is not the repository's.
        let kts = "* Where:\nBuild file '/home/runner/work/R/R/lib/build.gradle.kts' line: 7\n\n* What went wrong:\nCould not compile build file '/home/runner/work/R/R/lib/build.gradle.kts'.\n";
        let r = parse_str(kts, &ParseOptions::default());
        assert_eq!(
            r.iter()
                .map(|r| (r.file_path.as_str(), r.line_number, r.error_type))
                .collect::<Vec<_>>(),
            [("lib/build.gradle.kts", 7, BugType::Syntax)]
        );
        let init = "* Where:\nInitialization script '/home/runner/.gradle/init.d/x.gradle' line: 3\n\n* What went wrong:\nA problem occurred.\n";
        assert_eq!(parse_str(init, &ParseOptions::default()), vec![]);
    }

    #[test]
    fn maven_warnings_without_a_line_show_a_modules_source_root() {
        // openmicroscopy/bioformats (Travis): the plugins module keeps its sources in `src/`,
        // which only javac's deprecation notes name; TestNG's NPE frame is placed there.
        let log = "[WARNING] /home/travis/build/o/bioformats/components/bio-formats-plugins/src/loci/plugins/in/DisplayHandler.java: Some input files use or override a deprecated API.\n[INFO] Surefire report directory: /home/travis/build/o/bioformats/components/bio-formats-plugins/target/surefire-reports\ntestDatasetGroupFiles(loci.plugins.in.ImporterTest)  Time elapsed: 0.1 sec  <<< FAILURE!\njava.lang.NullPointerException: null\n\tat loci.plugins.in.ImagePlusReader.constructSliceLabel(ImagePlusReader.java:596)\n\tat loci.plugins.in.ImporterTest.testDatasetGroupFiles(ImporterTest.java:20)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "components/bio-formats-plugins/src/loci/plugins/in/ImagePlusReader.java",
                596
            )
        );
    }

    #[test]
    fn an_assertion_helpers_frames_give_way_to_the_tests() {
        // mp4parser (Travis, Surefire 2): `BoxComparator.check` calls `assertArrayEquals`, then
        // recurses; the test's own line is the one to show, though the helper is not in a
        // `*Test` file.
        let log = "freeze(org.mp4parser.muxer.tracks.H264TrackImplTest)  Time elapsed: 0.096 sec  <<< FAILURE!\nBox at SampleToChunkBox[entryCount=1] differs from reference\n\tat org.junit.internal.ComparisonCriteria.arrayEquals(ComparisonCriteria.java:55)\n\tat org.junit.Assert.assertArrayEquals(Assert.java:341)\n\tat org.mp4parser.support.BoxComparator.checkBox(BoxComparator.java:59)\n\tat org.mp4parser.support.BoxComparator.check(BoxComparator.java:40)\n\tat org.mp4parser.support.BoxComparator.check(BoxComparator.java:64)\n\tat org.mp4parser.muxer.tracks.H264TrackImplTest.freeze(H264TrackImplTest.java:52)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "src/test/java/org/mp4parser/muxer/tracks/H264TrackImplTest.java",
                52
            )
        );
        // Code under test that throws by itself stays the innermost repository frame.
        let npe = log.replace(
            "\tat org.junit.internal.ComparisonCriteria.arrayEquals(ComparisonCriteria.java:55)\n\tat org.junit.Assert.assertArrayEquals(Assert.java:341)\n",
            "",
        );
        let r = parse_str(&npe, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("src/main/java/org/mp4parser/support/BoxComparator.java", 59)
        );
    }

    #[test]
    fn a_spock_assertion_frame_is_the_frameworks_not_the_projects() {
        // graphql-java's Actions job 16166237459: `noExceptionThrown()` fails in Spock, the
        // exception it caught is the `Caused by:` below.
        let log = "> Task :test\n\nEditOperationAnalyzerAppliedDirectivesTest > reproduce the null mapping case FAILED\n    Expected no exception to be thrown, but got 'java.lang.NullPointerException'\n        at app//spock.lang.Specification.noExceptionThrown(Specification.java:118)\n        at graphql.schema.diffing.ana.EditOperationAnalyzerAppliedDirectivesTest.reproduce the null mapping case(EditOperationAnalyzerAppliedDirectivesTest.groovy:1209)\n\n        Caused by:\n        java.lang.NullPointerException\n            at graphql.schema.diffing.EditorialCostForMapping.baseEditorialCostForMapping(EditorialCostForMapping.java:50)\n            at graphql.schema.diffing.DiffImpl$OptimalEdit.getListOfEditOperations(DiffImpl.java:102)\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            vec![(
                "src/main/java/graphql/schema/diffing/EditorialCostForMapping.java",
                50
            )]
        );
    }

    #[test]
    fn a_test_class_in_a_module_whose_main_sources_were_named_is_under_src_test() {
        // grpc-java's Actions job 2398880548: javadoc named the module's main sources, the
        // failing test is a test class of the same package.
        let log = "/home/runner/work/grpc-java/grpc-java/interop-testing/src/main/java/io/grpc/testing/integration/RpcBehaviorLoadBalancerProvider.java:50: warning - Tag @link: reference not found: RoundRobinLoadBalancer\n\nio.grpc.testing.integration.NettyFlowControlTest > largeBdp FAILED\n    java.lang.AssertionError: Window was 687720 expecting 314570\n        at org.junit.Assert.fail(Assert.java:89)\n        at io.grpc.testing.integration.NettyFlowControlTest.doTest(NettyFlowControlTest.java:152)\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            vec![(
                "interop-testing/src/test/java/io/grpc/testing/integration/NettyFlowControlTest.java",
                152
            )]
        );
    }

    #[test]
    fn maven_compiler_plugin_rows_repeating_javacs_error_word() {
        // twitter/hbc's Travis job (BugSwarm): maven-compiler-plugin 2.x prints `error: ` inside
        // its `[ERROR]` row; a missing package is still an import.
        let log = "[INFO] Compiling 11 source files to /home/travis/build/twitter/hbc/hbc-twitter4j-v3/target/classes\n[INFO] -------------------------------------------------------------\n[ERROR] COMPILATION ERROR : \n[INFO] -------------------------------------------------------------\n[ERROR] /home/travis/build/twitter/hbc/hbc-twitter4j-v3/src/main/java/com/twitter/hbc/twitter4j/v3/parser/JSONObjectParser.java:[19,34] error: package twitter4j.internal.org.json does not exist\n[ERROR] /home/travis/build/twitter/hbc/hbc-twitter4j-v3/src/main/java/com/twitter/hbc/twitter4j/v3/parser/JSONObjectParser.java:[98,11] error: cannot find symbol\n[ERROR] symbol:   variable JSONObjectType\n[ERROR] location: class JSONObjectParser\n[ERROR] /home/travis/build/twitter/hbc/hbc-twitter4j-v3/src/main/java/com/twitter/hbc/twitter4j/v3/parser/JSONObjectParser.java:[98,62] error: package JSONObjectType does not exist\n";
        let r = parse_str(log, &ParseOptions::default());
        let rows: Vec<_> = r.iter().map(|b| (b.line_number, b.error_type)).collect();
        assert_eq!(
            rows,
            [
                (19, BugType::Import),
                (98, BugType::TypeError),
                (98, BugType::Import)
            ],
            "{r:?}"
        );
        assert_eq!(
            compiler_type("error: package twitter4j.internal.org.json does not exist"),
            BugType::Import
        );
    }

    #[test]
    fn surefire_2_names_junit_4_parameterized_runs() {
        // ibissource/iaf's Travis job (BugSwarm): JUnit 4's `Parameterized` runner names each run
        // `method[index]` (pgjdbc's `run[5: batchTest(mode=…)]` holds parentheses too).
        let log = "[ERROR] doTest[0](nl.nn.adapterframework.jdbc.transformer.ToCsv)  Time elapsed: 0.005 s  <<< ERROR!\njava.lang.NullPointerException: No parent for filter\n\tat nl.nn.adapterframework.jdbc.transformer.ToCsv.doTest(ToCsv.java:51)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "src/test/java/nl/nn/adapterframework/jdbc/transformer/ToCsv.java",
                51
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("doTest[0](nl.nn.adapterframework.jdbc.transformer.ToCsv)")
        );
        let c = super::SUREFIRE2
            .captures(
                "run[5: batchTest(mode=FAIL_VIA_SELECT, position=FIRST_ROW, autoCommit=YES, batchType=SIMPLE, generateKeys=YES, binary=FORCE)](org.postgresql.test.jdbc2.BatchFailureTest)  Time elapsed: 0.027 sec  <<< ERROR!")
            .expect("a parameterized run");
        assert_eq!(&c[2], "org.postgresql.test.jdbc2.BatchFailureTest");
    }

    #[test]
    fn gradle_names_testng_suite_and_test_before_the_method() {
        // cbeust/testng's own Travis job (BugSwarm), Gradle 2's console.
        let log = ":testClasses\n:test\n\nTestNG > MethodInterceptor > test.methodinterceptors.multipleinterceptors.MultipleInterceptorsTest.testMultipleInterceptorsWithPreserveOrder FAILED\n    java.lang.IndexOutOfBoundsException at MultipleInterceptorsTest.java:37\n\n1143 tests completed, 1 failed\n:test FAILED\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "src/test/java/test/methodinterceptors/multipleinterceptors/MultipleInterceptorsTest.java",
                37
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some(
                "test.methodinterceptors.multipleinterceptors.MultipleInterceptorsTest.testMultipleInterceptorsWithPreserveOrder"
            )
        );
    }

    #[test]
    fn javac_unbalanced_block_errors_are_syntax() {
        // kairosdb's Travis job 156977713 (Tablesaw runs javac): a brace removed.
        for m in [
            "'catch' without 'try'",
            "'try' without 'catch', 'finally' or resource declarations",
            "'else' without 'if'",
            "orphaned case",
            "illegal character: '#'",
            "invalid method declaration; return type required",
        ] {
            assert_eq!(compiler_type(m), BugType::Syntax, "{m}");
        }
        assert_eq!(compiler_type("cannot find symbol"), BugType::TypeError);
    }

    #[test]
    fn ktlint_gradle_console_rows_in_a_ktlint_task() {
        // JLLeitschuh/ktlint-gradle#659 (fresh13), the project under a runner's checkout.
        let log = "> Task :app:ktlintTestSourceSetFormat FAILED\n/home/runner/work/R/R/app/src/test/java/com/androidsample/helloall/ExampleUnitTest.kt:3:1 Wildcard import (cannot be auto-corrected)\n\n> Task :app:ktlintAndroidTestSourceSetFormat FAILED\n/home/runner/work/R/R/app/src/androidTest/java/com/androidsample/helloall/ExampleInstrumentedTest.kt:5:1 Wildcard import (cannot be auto-corrected)\n\nFAILURE: Build completed with 2 failures.\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            (
                "app/src/test/java/com/androidsample/helloall/ExampleUnitTest.kt",
                3
            )
        );
        assert_eq!(r[0].error_type, BugType::Linting);
        // The same row outside a ktlint task is nobody's diagnostic; a home directory is no
        // checkout.
        let log = "> Task :app:compileKotlin\n/home/runner/work/R/R/app/src/A.kt:3:1 Wildcard import (cannot be auto-corrected)\n> Task :app:ktlintCheck FAILED\n/Users/L040639/Documents/helloall/app/src/test/java/com/androidsample/helloall/ExampleUnitTest.kt:3:1 Wildcard import (cannot be auto-corrected)\n";
        assert!(parse_str(log, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn gradle_test_logging_with_qualified_names() {
        // broadinstitute/picard's Actions job 14294971046 (`> Task :barclayTest`).
        let log = "> Task :barclayTest\n\npicard.sam.SamErrorMetric.CollectSamErrorMetricsTest.samMetricsProvider FAILED\n    java.lang.NullPointerException: Cannot invoke \"htsjdk.samtools.util.PeekableIterator.close()\" because \"this.vcfIterator\" is null\n        at picard.sam.SamErrorMetric.CollectSamErrorMetrics.closeVcfDataSource(CollectSamErrorMetrics.java:366)\n        at picard.sam.SamErrorMetric.CollectSamErrorMetricsTest.samMetricsProvider(CollectSamErrorMetricsTest.java:79)\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect();
        assert_eq!(
            got,
            vec![(
                "src/main/java/picard/sam/SamErrorMetric/CollectSamErrorMetrics.java",
                366
            )]
        );
        assert_eq!(super::qualified_method(":app:test"), None);
        assert_eq!(super::qualified_method("BUILD"), None);
    }

    #[test]
    fn kotlin_errors_in_build_src_from_an_unknown_checkout() {
        // twilio/twilio-verify-android#226: a local Windows checkout; only `buildSrc`'s own task
        // places such a path (elsewhere it stays outside the repository).
        let log = "> Task :buildSrc:compileKotlin FAILED\ne: file:///D:/DevareaLocal/GIT/twilio-verify-android/buildSrc/src/main/kotlin/plugins/ktlint.gradle.kts:30:5 Unresolved reference: main\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "buildSrc/src/main/kotlin/plugins/ktlint.gradle.kts",
                30,
                BugType::TypeError
            )
        );
        let other = log.replace(":buildSrc:compileKotlin", ":app:compileKotlin");
        assert!(parse_str(&other, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn kotlin_errors() {
        let log = "e: file:///home/runner/work/R/R/app/src/main/kotlin/App.kt:5:9 Unresolved reference: foo\nw: file:///home/runner/work/R/R/app/src/main/kotlin/App.kt:7:9 Variable 'x' is never used\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "app/src/main/kotlin/App.kt");
        assert_eq!(r[0].column, Some(9));
    }
}
