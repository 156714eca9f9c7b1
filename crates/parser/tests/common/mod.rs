//! Shared by the corpus and job-log tests: loads `.expected.json` files and compares the
//! projection of the parser's reports against them, producing a readable diff.

use std::path::{Path, PathBuf};

use ci_medic_parser::{BugReport, ParseOptions, parse_reader};
use serde::Deserialize;

/// One expected report: the contract fields a human can check, plus optional rule and message
/// substring.
#[derive(Debug, Deserialize, PartialEq)]
pub struct Expected {
    pub file_path: String,
    pub line_number: u32,
    pub error_type: String,
    pub test_name: Option<String>,
    #[serde(default)]
    pub rule: Option<String>,
    #[serde(default)]
    pub message_contains: Option<String>,
}

fn matches(e: &Expected, r: &BugReport) -> bool {
    e.file_path == r.file_path
        && e.line_number == r.line_number
        && e.error_type == r.error_type.as_str()
        && e.test_name == r.test_name
        && e.rule
            .as_ref()
            .is_none_or(|rule| r.rule.as_ref() == Some(rule))
        && e.message_contains
            .as_ref()
            .is_none_or(|m| r.message.contains(m.as_str()))
}

fn show_report(r: &BugReport) -> String {
    format!(
        "{}:{} {} test={:?} rule={:?} msg={:?}",
        r.file_path, r.line_number, r.error_type, r.test_name, r.rule, r.message
    )
}

fn show_expected(e: &Expected) -> String {
    format!(
        "{}:{} {} test={:?} rule={:?} msg~{:?}",
        e.file_path, e.line_number, e.error_type, e.test_name, e.rule, e.message_contains
    )
}

/// Parses `log`, reads `expected`, and checks the report contract (repo-relative paths, lines
/// >= 1, confidence in 0–1) on every report.
fn parse_checked(log: &Path, expected: &Path) -> Result<(Vec<BugReport>, Vec<Expected>), String> {
    let file = std::fs::File::open(log).map_err(|e| format!("cannot open log: {e}"))?;
    let reports =
        parse_reader(file, &ParseOptions::default()).map_err(|e| format!("read error: {e}"))?;
    let text = std::fs::read_to_string(expected)
        .map_err(|e| format!("cannot read {}: {e}", expected.display()))?;
    let exp: Vec<Expected> = serde_json::from_str(&text)
        .map_err(|e| format!("bad expectation {}: {e}", expected.display()))?;
    for r in &reports {
        let p = &r.file_path;
        if p.starts_with('/') || p.contains('\\') || p.split('/').any(|s| s == ".." || s.is_empty())
        {
            return Err(format!("path is not repo-relative: {p}"));
        }
        if r.line_number == 0 || !(0.0..=1.0).contains(&r.confidence_score) {
            return Err(format!("contract violated: {}", show_report(r)));
        }
    }
    Ok((reports, exp))
}

/// Parses `log` and compares with `expected`; returns a diff when they differ.
// Not used by the problem-matcher baseline; each test binary compiles this module on its own.
#[allow(dead_code)]
pub fn check(log: &Path, expected: &Path) -> Result<(), String> {
    let (reports, exp) = parse_checked(log, expected).map_err(|e| format!("    ! {e}\n"))?;
    let ok = exp.len() == reports.len() && exp.iter().zip(&reports).all(|(e, r)| matches(e, r));
    if ok {
        return Ok(());
    }
    let mut diff = String::new();
    for i in 0..exp.len().max(reports.len()) {
        match (exp.get(i), reports.get(i)) {
            (Some(e), Some(r)) if matches(e, r) => {
                diff.push_str(&format!("    = {}\n", show_report(r)));
            }
            (e, r) => {
                if let Some(e) = e {
                    diff.push_str(&format!("    - {}\n", show_expected(e)));
                }
                if let Some(r) = r {
                    diff.push_str(&format!("    + {}\n", show_report(r)));
                }
            }
        }
    }
    Err(diff)
}

/// Every file under `dir` whose name satisfies `pick`, sorted.
pub fn walk(dir: &Path, pick: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if pick(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The read-only `shared/` directory beside the repository (real job logs, GitHub's problem
/// matchers); `CI_MEDIC_SHARED_DIR` overrides it.
// Not used by the corpus test; each test binary compiles this module on its own.
#[allow(dead_code)]
pub fn shared_dir() -> PathBuf {
    std::env::var_os("CI_MEDIC_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// True when running in CI, where missing data is a failure rather than a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// How one log's reports compare with its expectations, by location: a report is right when
/// an expected entry has its `(file_path, line_number)`.
// Used by the corpus test only; each test binary compiles this module on its own.
#[allow(dead_code)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Score {
    /// Expected entries.
    pub expected: usize,
    /// Reports the parser made.
    pub reported: usize,
    /// Expected entries found (each report counts for one entry at most).
    pub found: usize,
    /// Of those, found with the expected type.
    pub typed: usize,
    /// Expected entries that name a test.
    pub tests: usize,
    /// Of those, found with the same test name.
    pub tests_named: usize,
}

#[allow(dead_code)]
impl Score {
    pub fn add(&mut self, o: &Score) {
        self.expected += o.expected;
        self.reported += o.reported;
        self.found += o.found;
        self.typed += o.typed;
        self.tests += o.tests;
        self.tests_named += o.tests_named;
    }
    fn ratio(a: usize, b: usize) -> f64 {
        if b == 0 { 1.0 } else { a as f64 / b as f64 }
    }
    pub fn recall(&self) -> f64 {
        Self::ratio(self.found, self.expected)
    }
    pub fn precision(&self) -> f64 {
        Self::ratio(self.found, self.reported)
    }
    pub fn type_accuracy(&self) -> f64 {
        Self::ratio(self.typed, self.found)
    }
    pub fn test_name_recall(&self) -> f64 {
        Self::ratio(self.tests_named, self.tests)
    }
}

/// Parses `log`, checks the contract on every report, and scores it against `expected`;
/// returns the score and the lines of a diff (empty when every entry matches exactly).
#[allow(dead_code)]
pub fn score(log: &Path, expected: &Path) -> Result<(Score, Vec<String>), String> {
    let (reports, exp) = parse_checked(log, expected)?;
    let mut s = Score {
        expected: exp.len(),
        reported: reports.len(),
        ..Score::default()
    };
    let mut used = vec![false; reports.len()];
    let mut diff = Vec::new();
    for e in &exp {
        if e.test_name.is_some() {
            s.tests += 1;
        }
        let at = |r: &BugReport| r.file_path == e.file_path && r.line_number == e.line_number;
        // Prefer a report of the expected type when two share a location.
        let pick = (0..reports.len())
            .find(|&i| {
                !used[i] && at(&reports[i]) && reports[i].error_type.as_str() == e.error_type
            })
            .or_else(|| (0..reports.len()).find(|&i| !used[i] && at(&reports[i])));
        match pick {
            Some(i) => {
                used[i] = true;
                let r = &reports[i];
                s.found += 1;
                if r.error_type.as_str() == e.error_type {
                    s.typed += 1;
                }
                if e.test_name.is_some() && e.test_name == r.test_name {
                    s.tests_named += 1;
                }
                if !matches(e, r) {
                    diff.push(format!(
                        "    ~ {}\n      {}",
                        show_expected(e),
                        show_report(r)
                    ));
                }
            }
            None => diff.push(format!("    - {}", show_expected(e))),
        }
    }
    for (r, _) in reports.iter().zip(&used).filter(|(_, u)| !**u) {
        diff.push(format!("    + {}", show_report(r)));
    }
    Ok((s, diff))
}
