//! R: testthat's failure headers, as `R CMD check` and `test_check()` print them in every
//! testthat release: `1. Failure (at test-ts.R#29): name` (0.x/1.x), `── 1. Failure: name
//! (@test-bootstrap.r#138)  ───` (2.x) and `── Failure ('test-foo.R:12:3'): name ──` (3.x; `--`
//! rules on a terminal without Unicode), with `Error` for a test that raised. Each is a `LOGIC`
//! report at the test file's line, named after the test; testthat runs from `tests/testthat/`,
//! so its paths are placed there. Warnings and skips list locations too and are never reported.
//!
//! It must never report a file that is not an R source, nor a header without a line (testthat
//! 3's `Error ('test-x.R'): …` for an error outside any `test_that` block names none).

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

/// The header's `Failure`/`Error` word, after the box-drawing rule and the counter.
fn header_body(t: &str) -> Option<(&str, &str)> {
    let t = t.trim_start_matches(['─', '-', ' ']);
    let d = t.bytes().take_while(u8::is_ascii_digit).count();
    let t = if d > 0 { t[d..].strip_prefix(". ")? } else { t };
    ["Failure", "Error"]
        .into_iter()
        .find_map(|w| t.strip_prefix(w).map(|rest| (w, rest)))
}

/// `file#line` (0.x–2.x) or `file:line:col` (3.x).
fn file_line(loc: &str) -> Option<(&str, u64)> {
    let (file, line) = match loc.split_once('#') {
        Some(fl) => fl,
        None => {
            let (file, rest) = loc.split_once(':')?;
            (file, rest.split(':').next()?)
        }
    };
    let ok = matches!(super::ext(file), "R" | "r") && !file.contains(' ');
    ok.then_some((file, super::num(line)?))
}

/// A testthat header: (word, file, line, test name).
fn header(t: &str) -> Option<(&str, &str, u64, &str)> {
    let (word, rest) = header_body(t)?;
    let (loc, name) = if let Some(r) = rest.strip_prefix(" (at ") {
        r.split_once("): ")?
    } else if let Some(r) = rest.strip_prefix(": ") {
        // `name (@file#line)`, then the box rule.
        let r = r.trim_end_matches(['─', '-', ' ']);
        let (name, loc) = r.rsplit_once(" (@")?;
        (loc.strip_suffix(')')?, name)
    } else if let Some(r) = rest.strip_prefix(" (") {
        r.split_once("): ")?
    } else {
        return None;
    };
    let (file, line) = file_line(loc.trim_matches('\''))?;
    let name = name.trim_end_matches(['─', '-', ' ']);
    Some((word, file, line, name))
}

/// True when the line cannot be a testthat header: it does not start with one's words.
pub(crate) fn quiet(l: &Line<'_>) -> bool {
    !matches!(l.first, b'1'..=b'9' | b'F' | b'E' | b'-' | 0xE2)
        || l.last == b':'
        || header_body(l.trimmed()).is_none()
}

/// Returns true when the line was claimed.
pub(crate) fn line(l: &Line<'_>, sink: &mut Sink) -> bool {
    let Some((word, file, line, name)) = header(l.trimmed()) else {
        return false;
    };
    let path = if file.starts_with("tests/") {
        file.to_string()
    } else {
        format!("tests/testthat/{file}")
    };
    let message = if word == "Error" {
        "testthat: the test raised an error"
    } else {
        "testthat: expectation failed"
    };
    sink.emit(
        l.no,
        Finding::new(&path, line, BugType::Logic, message)
            .test(Some(name).filter(|n| !n.is_empty()))
            .conf(0.9)
            .tool("testthat"),
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    fn got(log: &str) -> Vec<(String, u32, BugType, Option<String>)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type, r.test_name))
            .collect()
    }

    #[test]
    fn testthat_headers_of_each_release() {
        // LogChunks AnomalyDetection (testthat 0.x inside R CMD check), shiny (2.x), and 3.x.
        let log = "  1. Failure (at test-ts.R#29): average the count for each unique timestamp if the timestamps are not unique \n\
                   ── 1. Failure: Choices are correctly assigned names (@test-bootstrap.r#138)  ───\n\
                   1. Failure: Choices are correctly assigned names (@test-bootstrap.r#138) \n\
                   ── Error ('test-parse.R:12:3'): parses dates ──────────────────────\n\
                   -- Failure ('reporters/tests.R:17:8'): Failure:2a ------------------------------\n\
                   -- Warning ('reporters/tests.R:47:5'): warnings get backtraces -----------------\n\
                   ── Error ('test-setup.R'): (code run outside of `test_that()`) ──\n\
                   1. Failure (at notes.txt#3): not R\n";
        assert_eq!(
            got(log),
            [
                (
                    "tests/testthat/test-ts.R".to_string(),
                    29,
                    BugType::Logic,
                    Some("average the count for each unique timestamp if the timestamps are not unique".to_string())
                ),
                (
                    "tests/testthat/test-bootstrap.r".to_string(),
                    138,
                    BugType::Logic,
                    Some("Choices are correctly assigned names".to_string())
                ),
                (
                    "tests/testthat/test-parse.R".to_string(),
                    12,
                    BugType::Logic,
                    Some("parses dates".to_string())
                ),
                (
                    "tests/testthat/reporters/tests.R".to_string(),
                    17,
                    BugType::Logic,
                    Some("Failure:2a".to_string())
                ),
            ]
        );
    }
}
