//! GoogleTest (C/C++ unit tests): an assertion failure inside a `[ RUN      ] Suite.Test` block,
//! as gtest prints it with gcc/clang (`path:line: Failure`, the message on the next line) and with
//! MSVC (`path(line): error: Expected: …`), named after the running test. CTest's
//! `--output-on-failure` / `-V` prefix (`12: `) in front of every line is accepted.
//!
//! It must never report outside a RUN block (MSVC's own `file(line): error C2065` is the
//! compiler's, and the compiler matchers own it), gtest's summaries (`[  FAILED  ] Suite.Test`,
//! `1 FAILED TEST`), a failure without a line (`unknown file: Failure` from a thrown exception),
//! nor a path outside the repository (the sink refuses those).

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

static BOOST: crate::Needle = crate::needle!(" in \"");

/// Boost.Test: `path(line): [fatal ]error[:] in "test": message` → (path, line, test, message).
fn boost_check(t: &str) -> Option<(&str, u64, &str, &str)> {
    let (loc, rest) = t.split_once("): ")?;
    let rest = rest
        .strip_prefix("error: in \"")
        .or_else(|| rest.strip_prefix("fatal error: in \""))
        .or_else(|| rest.strip_prefix("error in \""))
        .or_else(|| rest.strip_prefix("fatal error in \""))?;
    let (test, msg) = rest.split_once("\": ")?;
    let (path, n) = loc.rsplit_once('(')?;
    let n = super::num(n)?;
    (!path.is_empty() && !test.is_empty() && test.len() <= MAX_NAME).then_some((path, n, test, msg))
}

/// Test names and messages longer than this are not gtest's; the block is dropped.
const MAX_NAME: usize = 512;

/// A `path:line: Failure` waiting for its message on the next line.
#[derive(Debug)]
struct Pending {
    path: String,
    line: u64,
    seq: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Gtest {
    /// The test of the open `[ RUN      ]` block.
    test: Option<String>,
    pending: Option<Pending>,
    /// Inside a fatal-signal stack trace of the running test (folly's and glog's failure signal
    /// handlers): its message, the lines left to read, and whether the current frame is the
    /// signal handler's own.
    crash: Option<Crash>,
}

#[derive(Debug)]
struct Crash {
    msg: String,
    seq: u64,
    budget: u16,
    handler_frame: bool,
}

/// Lines of a signal handler's stack trace read for the crash site.
const CRASH_BUDGET: u16 = 400;

/// The handler's own frames (folly's `symbolizer::signalHandler`, glog's `FailureSignalHandler`),
/// printed innermost, before the frame that faulted: never the crash site.
fn is_handler_symbol(sym: &str) -> bool {
    sym.contains("ignalHandler") || sym.contains("symbolizer")
}

/// Strips CTest's `N: ` prefix (test number) from a line of test output.
fn ctest_body(t: &str) -> &str {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=5).contains(&digits) && t[digits..].starts_with(": ") {
        &t[digits + 2..]
    } else {
        t
    }
}

impl Gtest {
    #[inline]
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        // Idle: only `[ RUN      ]`, with or without CTest's number in front, opens a block;
        // a Boost.Test check names its test itself.
        self.test.is_none()
            && l.first != b'['
            && !l.first.is_ascii_digit()
            && !(l.colon && l.last != b':' && crate::has(&BOOST, l.text))
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = ctest_body(l.trimmed());
        if let Some(name) = t.strip_prefix("[ RUN      ] ") {
            self.close(sink);
            // A value- or type-parameterized test names its parameter after the test:
            // `Suite.Test/12, where GetParam() = (…)`, `Suite/0.Test, where TypeParam = int`.
            let name = name.split(", where ").next().unwrap_or(name).trim();
            self.test = (!name.is_empty() && name.len() <= MAX_NAME && !name.contains(' '))
                .then(|| name.to_string());
            return false;
        }
        if crate::has(&BOOST, t)
            && let Some((path, n, test, msg)) = boost_check(t)
        {
            let p = Pending {
                path: path.to_string(),
                line: n,
                seq: l.no,
            };
            emit(sink, &p, msg, test, "boost.test");
            return true;
        }
        let Some(test) = self.test.clone() else {
            return false;
        };
        if self.crash.is_some() {
            return self.crash_line(t, &test, sink);
        }
        // folly: `*** Signal 11 (SIGSEGV) (0x…) received by PID … stack trace: ***`; glog:
        // `*** SIGSEGV (@0x0) received by PID … ; stack trace: ***`.
        if t.starts_with("*** ") && t.ends_with("stack trace: ***") {
            let msg = t.trim_start_matches("*** ");
            let msg = msg.split(" received by").next().unwrap_or(msg);
            self.crash = Some(Crash {
                msg: msg.to_string(),
                seq: l.no,
                budget: CRASH_BUDGET,
                handler_frame: false,
            });
            return true;
        }
        if t.starts_with("[       OK ]")
            || t.starts_with("[  FAILED  ]")
            || t.starts_with("[  SKIPPED ]")
        {
            self.close(sink);
            return false;
        }
        if let Some(p) = self.pending.take() {
            let msg = if t.is_empty() || t.len() > MAX_NAME {
                "Failure"
            } else {
                t
            };
            emit(sink, &p, msg, &test, "gtest");
            return true;
        }
        if !l.colon_digit && !crate::contains(t, "): error: ") {
            return false;
        }
        // gcc/clang: `path:line: Failure`.
        if let Some(loc) = t.strip_suffix(": Failure")
            && let Some((path, n)) = loc.rsplit_once(':')
            && let Some(n) = super::num(n)
        {
            self.pending = Some(Pending {
                path: path.to_string(),
                line: n,
                seq: l.no,
            });
            return true;
        }
        // MSVC: `path(line): error: message`.
        if let Some((loc, msg)) = t.split_once("): error: ")
            && let Some((path, n)) = loc.rsplit_once('(')
            && let Some(n) = super::num(n)
            && !path.is_empty()
        {
            let p = Pending {
                path: path.to_string(),
                line: n,
                seq: l.no,
            };
            emit(sink, &p, msg, &test, "gtest");
            return true;
        }
        false
    }

    /// Ends the open block (a new step, or the test's verdict line).
    /// A line of a fatal signal's stack trace: `@ <address> <symbol>` frames, each followed by
    /// the symbolizer's `path:line` (and `-> path` for inlined code). The first repository frame
    /// that is not the signal handler's is the crash site.
    fn crash_line(&mut self, t: &str, test: &str, sink: &mut Sink) -> bool {
        let Some(c) = &mut self.crash else {
            return false;
        };
        c.budget = c.budget.saturating_sub(1);
        if c.budget == 0 || t.is_empty() || t.starts_with('[') {
            self.crash = None;
            return false;
        }
        if let Some(frame) = t.strip_prefix("@ ") {
            let sym = frame.trim_start().split_once(' ').map_or("", |(_, s)| s);
            c.handler_frame = is_handler_symbol(sym);
            return true;
        }
        if c.handler_frame || t.starts_with("-> ") {
            return true;
        }
        if let Some((path, n)) = t.rsplit_once(':')
            && let Some(n) = super::num(n)
            && path.starts_with('/')
            && sink.is_own_frame(path)
        {
            let p = Pending {
                path: path.to_string(),
                line: n,
                seq: c.seq,
            };
            let msg = c.msg.clone();
            self.crash = None;
            emit(sink, &p, &msg, test, "gtest");
        }
        true
    }

    fn close(&mut self, sink: &mut Sink) {
        if let (Some(p), Some(test)) = (self.pending.take(), self.test.take()) {
            emit(sink, &p, "Failure", &test, "gtest");
        }
        self.test = None;
        self.crash = None;
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        self.close(sink);
    }
}

fn emit(sink: &mut Sink, p: &Pending, msg: &str, test: &str, tool: &'static str) {
    sink.emit(
        p.seq,
        Finding::new(&p.path, p.line, BugType::Logic, msg)
            .test(Some(test))
            .conf(0.9)
            .tool(tool),
    );
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn a_fatal_signal_is_at_its_first_repository_frame_past_the_handler() {
        // folly's tests under CTest: the symbolizer prints each frame's source under it.
        let log = "[ RUN      ] AsyncSocketIntegrationTest.PingPongNotifyMmsg\n*** Aborted at 1763137469 (Unix time, try 'date -d @1763137469') ***\n*** Signal 11 (SIGSEGV) (0x56034c3852c9) received by PID 16859 (pthread TID 0x7fbe10cadfc0) (linux TID 16859) (code: address not mapped to object), stack trace: ***\n    @ 000000000014ee22 _ZN5folly10symbolizer12_GLOBAL__N_113signalHandlerEiP9siginfo_tPv\n                       /home/runner/work/folly/folly/folly/debugging/symbolizer/SignalHandler.cpp:526\n    @ 000000000004251f (unknown)\n    @ 000000000005e7a1 _ZN5folly6detail8function5call_IZNS_20AsyncUDPServerSocket12onReadClosedEvEUlvE_Lb1ELb0EvJEEET2_DpT3_RNS1_4DataE\n                       /home/runner/work/folly/folly/folly/io/async/AsyncUDPServerSocket.h:342\n                       -> /home/runner/work/folly/folly/folly/io/async/test/AsyncUDPSocketTest.cpp\n    @ 00000000000a3c9f _ZN26AsyncSocketIntegrationTestD2Ev\n                       /usr/include/c++/11/bits/stl_construct.h:88\n\n          Start 1639: io_async_async_udp_socket_test.x\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (
                r[0].file_path.as_str(),
                r[0].line_number,
                r[0].test_name.as_deref()
            ),
            (
                "folly/io/async/AsyncUDPServerSocket.h",
                342,
                Some("AsyncSocketIntegrationTest.PingPongNotifyMmsg")
            )
        );
        assert!(r[0].message.starts_with("Signal 11 (SIGSEGV)"));
        // Outside a RUN block, or with only the handler's and system frames, nothing.
        let bare = log.split_once('\n').map(|(_, rest)| rest).unwrap_or(log);
        assert!(parse_str(bare, &ParseOptions::default()).is_empty());
    }

    #[test]
    fn parameterized_tests_are_named_without_their_parameter() {
        // opencv's videoio test under MSVC.
        let log = "[ RUN      ] videoio_encapsulate.write/12, where GetParam() = (\"video/sample_sorenson.avi\", \"mp4\", 12, 13, false, true)\n[ WARN:0@30.055] global cap_msmf.cpp:936 CvCapture_MSMF::initStream Failed to set mediaType\nC:\\a\\R\\R\\modules\\videoio\\test\\test_ffmpeg.cpp(379): error: Value of: capActualRaw.isOpened()\n  Actual: false\nExpected: true\n[  FAILED  ] videoio_encapsulate.write/12, where GetParam() = (\"video/sample_sorenson.avi\", \"mp4\", 12, 13, false, true) (163 ms)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(
            (
                r[0].file_path.as_str(),
                r[0].line_number,
                r[0].test_name.as_deref()
            ),
            (
                "modules/videoio/test/test_ffmpeg.cpp",
                379,
                Some("videoio_encapsulate.write/12")
            )
        );
    }

    #[test]
    fn linux_failure_named_after_the_running_test() {
        let log = "[==========] Running 2 tests from 1 test suite.\n[ RUN      ] MathTest.Adds\n/home/runner/work/calc/calc/tests/math_test.cc:12: Failure\nExpected equality of these values:\n  add(1, 2)\n    Which is: 4\n  3\n[  FAILED  ] MathTest.Adds (0 ms)\n[ RUN      ] MathTest.Subtracts\n[       OK ] MathTest.Subtracts (0 ms)\n[  FAILED  ] 1 test, listed below:\n[  FAILED  ] MathTest.Adds\n\n 1 FAILED TEST\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "tests/math_test.cc");
        assert_eq!(r[0].line_number, 12);
        assert_eq!(r[0].error_type, BugType::Logic);
        assert_eq!(r[0].test_name.as_deref(), Some("MathTest.Adds"));
        assert_eq!(r[0].message, "Expected equality of these values:");
    }

    #[test]
    fn msvc_failure_and_ctest_prefix() {
        let log = "[ RUN      ] allCases/RefTest.Roi/29\nD:\\a\\proj\\proj\\testing\\Roi.cpp(168): error: Expected: (x) <= (max), actual: 150.781 vs 150\n[  FAILED  ] allCases/RefTest.Roi/29, where GetParam() = (19, 1) (11760 ms)\n3: [ RUN      ] Parse.Empty\n3: /builds/g/p/test/parse_test.cpp:40: Failure\n3: Value of: parse(\"\").ok()\n3: [  FAILED  ] Parse.Empty (1 ms)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "testing/Roi.cpp");
        assert_eq!(r[0].line_number, 168);
        assert_eq!(r[0].test_name.as_deref(), Some("allCases/RefTest.Roi/29"));
        assert_eq!(r[1].file_path, "test/parse_test.cpp");
        assert_eq!(r[1].line_number, 40);
        assert_eq!(r[1].test_name.as_deref(), Some("Parse.Empty"));
        assert_eq!(r[1].message, "Value of: parse(\"\").ok()");
    }

    #[test]
    fn boost_test_checks_name_their_test() {
        let log = "Running 48 test cases...\n/home/runner/work/o/o/tests/pdf.cpp(178): error: in \"Statistical\": absolute value of (a) - (b){0.0018} exceeds 0.0016\n\
                   test/T.cpp(37): fatal error: in \"Suite/TestFFT1\": check mag[i] == 1.0 has failed [0 != 1]\n\
                   src/old.cpp(5): error in \"legacy\": check x == 1 failed\n\
                   src/main.cpp(9): error: in this scope \"x\": nothing\n";
        let r: Vec<_> = parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.test_name))
            .collect();
        assert_eq!(
            r,
            vec![
                ("tests/pdf.cpp".into(), 178, Some("Statistical".into())),
                ("test/T.cpp".into(), 37, Some("Suite/TestFFT1".into())),
                ("src/old.cpp".into(), 5, Some("legacy".into())),
            ]
        );
    }

    #[test]
    fn nothing_outside_a_run_block() {
        // MSVC's compiler errors and a bare `Failure` line with no test running are not gtest's;
        // an exception (`unknown file`) names no line.
        let log = "src\\main.cpp(97): error: something\n/src/x.cc:3: Failure\n[ RUN      ] A.B\nunknown file: Failure\nC++ exception with description \"boom\" thrown in the test body.\n[  FAILED  ] A.B (0 ms)\n";
        let r = parse_str(log, &ParseOptions::default());
        assert!(
            r.iter().all(|r| r.tool.as_deref() != Some("gtest")),
            "{r:?}"
        );
        assert!(r.iter().all(|r| r.file_path != "x.cc"), "{r:?}");
    }
}
