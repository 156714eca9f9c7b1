//! C / C++: gcc and clang `file:line:col: error:` / `fatal error:` diagnostics (dispatched here
//! by `generic` on the file extension), missing headers, and warnings promoted by `-Werror`.
//!
//! It must never report `warning:` or `note:` lines, nor `In file included from` context.

use crate::BugType;
use crate::sink::{Finding, Sink};

pub(crate) const EXTS: [&str; 12] = [
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm", "cu", "inl",
];

/// Classifies a gcc/clang error message.
/// clang-tidy's check families (the part of a check name before its first `-`).
const TIDY_FAMILIES: [&str; 21] = [
    "abseil",
    "altera",
    "android",
    "boost",
    "bugprone",
    "cert",
    "clang-analyzer",
    "concurrency",
    "cppcoreguidelines",
    "darwin",
    "fuchsia",
    "google",
    "hicpp",
    "linuxkernel",
    "llvm",
    "llvmlibc",
    "misc",
    "modernize",
    "performance",
    "portability",
    "readability",
];

/// The clang-tidy check a diagnostic ends with: `… [bugprone-narrowing-conversions]` or
/// `… [bugprone-narrowing-conversions,-warnings-as-errors]`.
fn clang_tidy_check(msg: &str) -> Option<&str> {
    let inner = msg.strip_suffix(']')?;
    let start = inner.rfind('[')?;
    let checks = &inner[start + 1..];
    let check = checks.split(',').next()?;
    let known = TIDY_FAMILIES.iter().any(|f| {
        check
            .strip_prefix(f)
            .is_some_and(|r| r.starts_with('-') && r.len() > 1)
    });
    (known
        && check
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'.' || b.is_ascii_digit()))
    .then_some(check)
}

pub(crate) fn classify(msg: &str, fatal: bool) -> (BugType, Option<&str>) {
    // `[-Werror=unused-variable]` (gcc) or `[-Werror,-Wunused-variable]` (clang).
    if let Some(start) = msg.rfind("[-W") {
        let flag = msg[start + 1..].trim_end_matches(']');
        if flag.starts_with("-Werror") {
            return (BugType::Linting, Some(flag));
        }
    }
    // clang-tidy names its check in brackets (`[bugprone-narrowing-conversions]`, and with
    // `-warnings-as-errors` `[bugprone-…,-warnings-as-errors]`): a lint, whatever its wording.
    if let Some(check) = clang_tidy_check(msg) {
        return (BugType::Linting, Some(check));
    }
    let m = msg.to_ascii_lowercase();
    if (fatal || m.contains(".h"))
        && (m.contains("no such file or directory") || m.contains("file not found"))
    {
        return (BugType::Import, None);
    }
    const SYNTAX: [&str; 9] = [
        "expected ",
        "stray ",
        "missing terminating",
        "extraneous closing brace",
        "unterminated ",
        "expected expression",
        "unexpected ",
        "extra tokens",
        "invalid preprocessing directive",
    ];
    if SYNTAX.iter().any(|s| m.starts_with(s)) {
        return (BugType::Syntax, None);
    }
    (BugType::TypeError, None)
}

/// `file.c:line:col: error: msg`. Returns true when the line was recognised.
pub(crate) fn colon(
    path: &str,
    line: u64,
    col: Option<u64>,
    rest: &str,
    seq: u64,
    sink: &mut Sink,
) -> bool {
    let (fatal, msg) = if let Some(m) = rest.strip_prefix("fatal error: ") {
        (true, m)
    } else if let Some(m) = rest.strip_prefix("error: ") {
        (false, m)
    } else {
        return rest.starts_with("warning:") || rest.starts_with("note:");
    };
    let (ty, rule) = classify(msg, fatal);
    sink.emit(
        seq,
        Finding::new(path, line, ty, msg)
            .col(col)
            .conf(0.95)
            .tool("cc")
            .rule(rule),
    );
    true
}

/// IAR Embedded Workbench: `"path",633  Error[Pe018]: expected a ")"` (also `Fatal error[…]`).
/// Its `Warning[…]` and `Remark[…]` lines are never reported. Returns true when it was an IAR
/// error line.
pub(crate) fn iar(t: &str, seq: u64, sink: &mut Sink) -> bool {
    let Some((path, rest)) = t.strip_prefix('"').and_then(|r| r.split_once("\",")) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(line) = super::num(&rest[..digits]) else {
        return false;
    };
    let rest = rest[digits..].trim_start();
    let (fatal, rest) = match rest.strip_prefix("Fatal error[") {
        Some(r) => (true, r),
        None => match rest.strip_prefix("Error[") {
            Some(r) => (false, r),
            None => return false,
        },
    };
    let Some((code, msg)) = rest.split_once("]: ") else {
        return false;
    };
    if !EXTS.contains(&super::ext(path).to_ascii_lowercase().as_str()) {
        return false;
    }
    let ty = if msg.starts_with("cannot open source file") {
        BugType::Import
    } else {
        classify(msg, fatal).0
    };
    sink.emit(
        seq,
        Finding::new(path, line, ty, msg)
            .conf(0.9)
            .tool("iar")
            .rule(Some(code)),
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    #[test]
    fn clang_tidy_checks_are_lints_whatever_their_wording() {
        // duckdb's clang-tidy job (LogSage).
        let log = "/home/runner/work/duckdb/duckdb/extension/parquet/parquet_reader.cpp:1229:23: error: narrowing conversion from 'idx_t' (aka 'unsigned long') to signed type 'row_t' (aka 'long') is implementation-defined [bugprone-narrowing-conversions,-warnings-as-errors]\nsrc/a.cpp:3:1: error: unknown type name 'foo' [clang-diagnostic-error]\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Linting);
        assert_eq!(r[0].rule.as_deref(), Some("bugprone-narrowing-conversions"));
        // A compiler error clang-tidy passes on is still the compiler's.
        assert_eq!(r[1].error_type, BugType::TypeError);
    }

    #[test]
    fn meson_build_dir_paths() {
        // mesonbuild/meson#9553 and elementary/gala#2042: sources climb out of the build
        // directory; what stays in it (valac's C in `gala.p/`) is generated.
        let log = "FAILED: plugins/fishlim/tests/fishlim_tests.p/.._utils.c.o \n/usr/local/bin/gcc -Iplugins/fishlim/tests/fishlim_tests.p -I. -I.. -Isrc/common -DHAVE_CONFIG_H -pthread -c ../plugins/fishlim/utils.c\n../plugins/fishlim/utils.c:124:16: error: implicit declaration of function 'strlen' [-Werror=implicit-function-declaration]\nsrc/gala.p/WindowManager.c:2610:9: error: implicit declaration of function 'atk_bridge_adaptor_init' [-Wimplicit-function-declaration]\nplugins/fishlim/x.c:3:1: error: expected ';'\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.error_type))
            .collect();
        assert_eq!(got, [("plugins/fishlim/utils.c", 124, BugType::Linting)]);
    }

    #[test]
    fn gcc_and_clang() {
        let log = "In file included from src/main.c:1:\nsrc/util.h:3:10: fatal error: missing.h: No such file or directory\nsrc/main.c:5:12: error: expected ';' before '}' token\nsrc/main.c:7:5: warning: unused variable 'y' [-Wunused-variable]\nsrc/a.cpp:3:7: error: unused variable 'x' [-Werror,-Wunused-variable]\nsrc/b.c:9:3: error: 'z' undeclared (first use in this function)\nmake: *** [Makefile:3: all] Error 1\n";
        let r = parse_str(log, &ParseOptions::default());
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0].error_type, BugType::Import);
        assert_eq!(r[1].error_type, BugType::Syntax);
        assert_eq!(r[2].error_type, BugType::Linting);
        assert_eq!(r[2].rule.as_deref(), Some("-Werror,-Wunused-variable"));
        assert_eq!(r[3].error_type, BugType::TypeError);
    }

    #[test]
    fn iar_errors_not_warnings() {
        // Real lines (jenkinsci/analysis-model, JENKINS-55750).
        let log = "\"external/specific/wiced/WICED/platform/MCU/RTOS_STM32F4xx/platform_dct_external.c\",412 Warning[Pe223]: function \"memcpy\" declared implicitly\n\"source/dal/InterMcu/InterMcuTransport.cpp\",633 Error[Pe018]: expected a \")\"\n\"src/main.c\",3  Fatal error[Pe1696]: cannot open source file \"missing.h\"\n";
        let r = parse_str(log, &ParseOptions::default());
        let got: Vec<_> = r
            .iter()
            .map(|b| (b.file_path.as_str(), b.line_number, b.error_type))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "source/dal/InterMcu/InterMcuTransport.cpp",
                    633,
                    BugType::Syntax
                ),
                ("src/main.c", 3, BugType::Import),
            ]
        );
    }
}
