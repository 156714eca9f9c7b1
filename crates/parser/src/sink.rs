//! The report sink: the single place where matchers hand over a finding.
//!
//! It normalises the path (refusing any that leaves the repository), enforces the contract's
//! invariants (line >= 1, confidence in 0–1, bounded message length), deduplicates by
//! (file, line, type) keeping the first appearance, caps the number of reports, and orders them
//! by the log line where each error first appeared. It must never hold more than
//! [`MAX_REPORTS`] reports, whatever the log.

use std::collections::HashMap;

use crate::path::normalize_path;
use crate::{BugReport, BugType};

/// Hard cap on distinct reports kept from one log.
pub const MAX_REPORTS: usize = 1000;
/// Messages are cut to this many characters.
pub const MAX_MESSAGE: usize = 500;

/// A finding as a matcher sees it, before path normalisation.
#[derive(Debug, Clone)]
pub struct Finding<'a> {
    pub path: &'a str,
    pub line: u64,
    pub column: Option<u64>,
    pub error_type: BugType,
    pub message: &'a str,
    pub test_name: Option<&'a str>,
    pub confidence: f64,
    pub tool: Option<&'static str>,
    pub rule: Option<&'a str>,
}

impl<'a> Finding<'a> {
    pub fn new(path: &'a str, line: u64, error_type: BugType, message: &'a str) -> Self {
        Finding {
            path,
            line,
            column: None,
            error_type,
            message,
            test_name: None,
            confidence: 0.9,
            tool: None,
            rule: None,
        }
    }
    pub fn col(mut self, c: Option<u64>) -> Self {
        self.column = c;
        self
    }
    pub fn test(mut self, t: Option<&'a str>) -> Self {
        self.test_name = t;
        self
    }
    pub fn conf(mut self, c: f64) -> Self {
        self.confidence = c;
        self
    }
    pub fn tool(mut self, t: &'static str) -> Self {
        self.tool = Some(t);
        self
    }
    pub fn tool_opt(mut self, t: Option<&'static str>) -> Self {
        self.tool = t;
        self
    }
    pub fn rule(mut self, r: Option<&'a str>) -> Self {
        self.rule = r;
        self
    }
}

#[derive(Debug, Default)]
pub struct Sink {
    workspace: Option<String>,
    /// (line of first appearance, report)
    reports: Vec<(u64, BugReport)>,
    /// Per report: the CI step it was found in, and whether the tool printed a relative path.
    origin: Vec<(u32, bool)>,
    seen: HashMap<(String, u32, BugType), usize>,
    step: u32,
}

/// Cuts `s` to at most `max` characters, on a char boundary.
pub fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl Sink {
    pub fn new(workspace: Option<String>) -> Self {
        Sink {
            workspace,
            ..Sink::default()
        }
    }

    /// Normalises a path the way emitted reports are normalised (for matchers that must decide
    /// whether a frame is inside the repository).
    pub fn repo_path(&self, raw: &str) -> Option<String> {
        normalize_path(raw, self.workspace.as_deref())
    }

    /// The log itself named the checkout (Jenkins' `Building in workspace /var/lib/jenkins/…`):
    /// use it unless the caller gave one.
    pub fn learn_workspace(&mut self, ws: &str) {
        let ws = ws.trim();
        let b = ws.as_bytes();
        let absolute = b.first() == Some(&b'/') || (b.len() > 2 && b[1] == b':');
        if self.workspace.is_none() && absolute && ws.len() > 1 {
            self.workspace = Some(ws.to_string());
        }
    }

    /// Records a finding seen at log line `seq`. Returns true when the finding's path is inside
    /// the repository (whether or not it was a duplicate), so callers can tell a refused path.
    pub fn emit(&mut self, seq: u64, f: Finding<'_>) -> bool {
        let Some(path) = self.repo_path(f.path) else {
            return false;
        };
        if f.line == 0 {
            return false;
        }
        let line = u32::try_from(f.line).unwrap_or(u32::MAX);
        let key = (path, line, f.error_type);
        if self.seen.contains_key(&key) || self.reports.len() >= MAX_REPORTS {
            return true;
        }
        let message = truncate_chars(f.message.trim(), MAX_MESSAGE).to_string();
        let report = BugReport {
            file_path: key.0.clone(),
            line_number: line,
            error_type: f.error_type,
            message,
            test_name: f
                .test_name
                .map(|t| truncate_chars(t.trim(), MAX_MESSAGE).to_string())
                .filter(|t| !t.is_empty()),
            confidence_score: f.confidence.clamp(0.0, 1.0),
            column: f
                .column
                .filter(|c| *c >= 1)
                .map(|c| u32::try_from(c).unwrap_or(u32::MAX)),
            tool: f.tool.map(str::to_string),
            rule: f
                .rule
                .map(|r| truncate_chars(r.trim(), 100).to_string())
                .filter(|r| !r.is_empty()),
        };
        self.seen.insert(key, self.reports.len());
        self.reports.push((seq, report));
        let raw = f.path.trim_start();
        let relative = !(raw.starts_with('/')
            || raw.starts_with("file:")
            || raw.as_bytes().get(1) == Some(&b':'));
        self.origin.push((self.step, relative));
        true
    }

    /// A new CI step starts.
    pub fn next_step(&mut self) {
        self.step = self.step.wrapping_add(1);
    }

    /// The current step's tools ran in `dir` (an absolute path, e.g. from `npm error path`):
    /// the relative paths they printed are relative to it, so prefix its repo-relative form.
    pub fn rebase_step(&mut self, dir: &str, tools: &[&str]) {
        let Some(prefix) = self.repo_path(dir) else {
            return;
        };
        for (i, (_, r)) in self.reports.iter_mut().enumerate() {
            let (step, relative) = self.origin[i];
            if step != self.step || !relative {
                continue;
            }
            if !r.tool.as_deref().is_some_and(|t| tools.contains(&t)) {
                continue;
            }
            if r.file_path.starts_with(&format!("{prefix}/")) {
                continue;
            }
            let new_path = format!("{prefix}/{}", r.file_path);
            let old_key = (r.file_path.clone(), r.line_number, r.error_type);
            let new_key = (new_path.clone(), r.line_number, r.error_type);
            if self.seen.contains_key(&new_key) {
                continue;
            }
            self.seen.remove(&old_key);
            self.seen.insert(new_key, i);
            r.file_path = new_path;
            self.origin[i].1 = false;
        }
    }

    /// Mutable access to reports already emitted (for late information such as a test id in a
    /// summary).
    pub fn reports_mut(&mut self) -> impl Iterator<Item = &mut BugReport> {
        self.reports.iter_mut().map(|(_, r)| r)
    }

    pub fn len(&self) -> usize {
        self.reports.len()
    }

    /// Reports in order of first appearance in the log (stable for equal lines).
    pub fn into_reports(mut self) -> Vec<BugReport> {
        self.reports.sort_by_key(|(seq, _)| *seq);
        self.reports.into_iter().map(|(_, r)| r).collect()
    }
}
