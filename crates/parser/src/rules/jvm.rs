//! Java / Kotlin: Maven compiler errors (`[ERROR] /path/File.java:[line,col] msg`), Kotlin
//! (`e: file:///…:line:col msg`, `e: /…: (line, col): msg`), javac's `File.java:N: error:` (via
//! `generic`), and JUnit failures from Surefire (`<<< FAILURE!` headers) and Gradle
//! (`Class > test() FAILED`) with their stack frames.
//!
//! JUnit frames name a class and a bare file name; the path is rebuilt from the package with the
//! Maven/Gradle source-root convention (`src/test/java/…`), and reported with a lower confidence.
//! It must never report `[WARNING]` lines, `w:` lines or build summaries (`BUILD FAILURE`).

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const BLOCK_BUDGET: u32 = 300;

static MAVEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[ERROR\] (.+?):\[(\d+),(\d+)\] (.+)$").unwrap());
static KOTLIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?e: (?:file://)?(.+?\.kts?):(\d+):(\d+):? (.+)$").unwrap()
});
static KOTLIN_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?(?:e: )?(.+?\.kts?): \((\d+), (\d+)\):? (.+)$").unwrap()
});
static SUREFIRE3: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?([\w.$]+)\.([\w$]+)(?:\(.*?\))? +-- Time elapsed: .*<<< (FAILURE|ERROR)!$")
        .unwrap()
});
static SUREFIRE2: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?([\w$]+)\(([\w.$]+)\) +Time elapsed: .*<<< (FAILURE|ERROR)!$")
        .unwrap()
});
static GRADLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([\w.$]+) > (.+?) FAILED$").unwrap());
static STACK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*at (?:[\w.-]+//)?([\w.$]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)$",
    )
    .unwrap()
});
static GRADLE_SHORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+([\w.$]+(?:Error|Exception|Failure)\w*) at ([\w$]+\.(?:java|kt)):(\d+)$")
        .unwrap()
});

/// Classifies a javac / kotlinc compiler message.
pub(crate) fn compiler_type(msg: &str) -> BugType {
    let m = msg.trim();
    if (m.starts_with("package ") && m.ends_with("does not exist"))
        || m.starts_with("cannot access ")
        || m.contains("Unresolved reference") && m.contains("import")
    {
        BugType::Import
    } else if m.ends_with(" expected")
        || m.starts_with("illegal start of")
        || m.starts_with("reached end of file while parsing")
        || m.starts_with("unclosed ")
        || m.starts_with("class, interface, enum, or record expected")
        || m.starts_with("not a statement")
        || m.starts_with("Expecting ")
        || m.starts_with("Syntax error")
    {
        BugType::Syntax
    } else {
        BugType::TypeError
    }
}

#[derive(Debug)]
struct TestBlock {
    class: String,
    test: String,
    message: Option<String>,
    seq: u64,
    budget: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Jvm {
    block: Option<TestBlock>,
}

/// Packages that are never the project's own code.
fn is_library_class(class: &str) -> bool {
    const LIBS: [&str; 16] = [
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
    // Nested classes (`Outer$Inner`) live in the outer class's package.
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
    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if let Some(b) = &mut self.block {
            if b.budget == 0 {
                self.block = None;
            } else {
                b.budget -= 1;
                if t.starts_with("at ") {
                    if let Some(c) = STACK.captures(t) {
                        let class = &c[1];
                        let top = |s: &str| s.split('.').take(2).collect::<Vec<_>>().join(".");
                        let ours = !is_library_class(class)
                            && (top(class) == top(&b.class) || !b.class.contains('.'));
                        if ours {
                            let outer = class.split('$').next().unwrap_or(class);
                            let is_test = outer == b.class.split('$').next().unwrap_or("")
                                || c[3].contains("Test");
                            let path = source_path(outer, &c[3], is_test);
                            let msg = b.message.clone().unwrap_or_else(|| "test failed".into());
                            let test = format!("{}.{}", b.class, b.test);
                            sink.emit(
                                b.seq,
                                Finding::new(
                                    &path,
                                    super::num(&c[4]).unwrap_or(0),
                                    BugType::Logic,
                                    &msg,
                                )
                                .test(Some(&test))
                                .conf(0.6)
                                .tool("junit"),
                            );
                            self.block = None;
                        }
                    }
                    return true;
                }
                if let Some(c) = GRADLE_SHORT.captures(l.text) {
                    if b.class.contains('.') {
                        let path = source_path(&b.class, &c[2], true);
                        let test = format!("{}.{}", b.class, b.test);
                        let msg = b.message.clone().unwrap_or_else(|| c[1].to_string());
                        sink.emit(
                            b.seq,
                            Finding::new(
                                &path,
                                super::num(&c[3]).unwrap_or(0),
                                BugType::Logic,
                                &msg,
                            )
                            .test(Some(&test))
                            .conf(0.5)
                            .tool("junit"),
                        );
                    }
                    self.block = None;
                    return true;
                }
                if b.message.is_none() && !t.is_empty() {
                    b.message = Some(crate::sink::truncate_chars(t, 500).to_string());
                    return true;
                }
            }
        }
        let first = t.as_bytes().first().copied().unwrap_or(b' ');
        if first == b'[' && t.starts_with("[ERROR] ") {
            if let Some(c) = MAVEN.captures(t) {
                let msg = &c[4];
                let tool = if c[1].ends_with(".kt") {
                    "kotlinc"
                } else {
                    "javac"
                };
                sink.emit(
                    l.no,
                    Finding::new(
                        &c[1],
                        super::num(&c[2]).unwrap_or(0),
                        compiler_type(msg),
                        msg,
                    )
                    .col(super::num(&c[3]))
                    .conf(0.95)
                    .tool(tool),
                );
                return true;
            }
        }
        if t.contains(".kt") {
            if let Some(c) = KOTLIN.captures(t).or_else(|| KOTLIN_OLD.captures(t)) {
                let msg = &c[4];
                sink.emit(
                    l.no,
                    Finding::new(
                        &c[1],
                        super::num(&c[2]).unwrap_or(0),
                        compiler_type(msg),
                        msg,
                    )
                    .col(super::num(&c[3]))
                    .conf(0.95)
                    .tool("kotlinc"),
                );
                return true;
            }
        }
        if t.ends_with("<<< FAILURE!") || t.ends_with("<<< ERROR!") {
            if let Some(c) = SUREFIRE3.captures(t) {
                self.block = Some(TestBlock {
                    class: c[1].to_string(),
                    test: c[2].to_string(),
                    message: None,
                    seq: l.no,
                    budget: BLOCK_BUDGET,
                });
                return true;
            }
            if let Some(c) = SUREFIRE2.captures(t) {
                self.block = Some(TestBlock {
                    class: c[2].to_string(),
                    test: c[1].to_string(),
                    message: None,
                    seq: l.no,
                    budget: BLOCK_BUDGET,
                });
                return true;
            }
        }
        if t.ends_with(" FAILED") && t.contains(" > ") {
            if let Some(c) = GRADLE.captures(t) {
                self.block = Some(TestBlock {
                    class: c[1].to_string(),
                    test: c[2].to_string(),
                    message: None,
                    seq: l.no,
                    budget: BLOCK_BUDGET,
                });
                return true;
            }
        }
        false
    }

    pub fn flush(&mut self, _sink: &mut Sink) {
        self.block = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

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
    fn kotlin_errors() {
        let log = "e: file:///home/runner/work/R/R/app/src/main/kotlin/App.kt:5:9 Unresolved reference: foo\nw: file:///home/runner/work/R/R/app/src/main/kotlin/App.kt:7:9 Variable 'x' is never used\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "app/src/main/kotlin/App.kt");
        assert_eq!(r[0].column, Some(9));
    }
}
