//! Fix Packet v2 (`fix-packet-v2.md`, frozen): built from the bug reports of one failed check
//! plus the repository's constraints.
//!
//! Deterministic: the same reports and configuration give the same packet, byte for byte, so
//! violation ids (`<gate>-NNN`) are stable. Never reads the clock or anything else outside its
//! arguments. The JSON Schema of the specification is kept verbatim in
//! `crates/core/schema/fix-packet-v2.schema.json` and every packet is tested against it.

use ci_medic_parser::{BugReport, BugType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::formatter::{fix_description, report_title};
use crate::repo_config::{ConstraintsConfig, Paradigm};

/// The specification's JSON Schema text, verbatim.
pub const FIX_PACKET_SCHEMA: &str = include_str!("../../schema/fix-packet-v2.schema.json");

/// The packet goal when no check is named (the schema's default).
pub const DEFAULT_GOAL: &str = "Achieve PASS state for all quality gates";

/// Severity of a violation, as the schema spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// The documented mapping from bug type to severity:
///
/// | bug type | severity | why |
/// |---|---|---|
/// | `SYNTAX` | critical | the file does not parse, so nothing in it runs |
/// | `INDENTATION` | critical | a Python indentation error is a parse error too |
/// | `IMPORT` | high | the module fails to load, taking its dependants with it |
/// | `TYPE_ERROR` | high | the build or type check fails |
/// | `LOGIC` | high | a test shows wrong behaviour |
/// | `LINTING` | medium | the code runs; the check fails on a rule |
pub fn severity_of(bug: BugType) -> Severity {
    match bug {
        BugType::Syntax | BugType::Indentation => Severity::Critical,
        BugType::Import | BugType::TypeError | BugType::Logic => Severity::High,
        BugType::Linting => Severity::Medium,
    }
}

/// The gate of a bug type: its contract spelling in lower case (`syntax`, `type_error`…).
pub fn gate_of(bug: BugType) -> String {
    bug.as_str().to_ascii_lowercase()
}

/// What the packet is for: the check that failed and the commit it ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRef {
    /// The check run's name (`lint`, `test (3.12)`…).
    pub check_name: String,
    /// The commit the check ran on.
    pub head_sha: String,
}

impl CheckRef {
    /// The packet's goal, naming the check and the commit.
    pub fn goal(&self) -> String {
        if self.check_name.is_empty() {
            return DEFAULT_GOAL.to_string();
        }
        format!(
            "Achieve PASS state for check `{}` at commit {}",
            self.check_name,
            short_sha(&self.head_sha)
        )
    }
}

/// The first 12 characters of a commit id (all of it when shorter).
pub fn short_sha(sha: &str) -> &str {
    match sha.char_indices().nth(12) {
        Some((i, _)) => &sha[..i],
        None => sha,
    }
}

/// A Fix Packet v2. Field names and order are the schema's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixPacket {
    /// Always 2.
    pub version: u32,
    pub goal: String,
    pub violations: Vec<Violation>,
    pub constraints: PacketConstraints,
}

/// One bug report as a violation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// `<gate>-NNN`, numbered per gate in report order.
    pub id: String,
    pub gate: String,
    pub severity: Severity,
    pub title: String,
    /// The tool's message, then the tool, rule and failing test when known.
    pub details: String,
    pub files: Vec<String>,
    /// The formatter's fix description, the same text as in report lines.
    pub hint: String,
    pub instructions: Vec<String>,
    pub metrics: Metrics,
}

/// Where the error is: always the line, the column when the tool printed one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The parser's confidence in this extraction, 0–1.
    pub confidence: f64,
}

/// The packet's `constraints`, copied from the repository configuration (whose defaults are the
/// safe ones), with the always-protected paths (`fix_check::ALWAYS_PROTECTED`) listed first when
/// a repository's own `protected_paths` left them out: the guard protects them anyway, and an
/// agent reading the packet must not be told otherwise. `paradigm` is omitted when unset: the
/// schema allows only `oop` or `functional`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacketConstraints {
    pub protected_paths: Vec<String>,
    pub do_not_touch: Vec<String>,
    pub max_files_changed: u32,
    pub no_new_deps: bool,
    pub allowed_dependencies: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paradigm: Option<Paradigm>,
}

impl From<&ConstraintsConfig> for PacketConstraints {
    fn from(c: &ConstraintsConfig) -> Self {
        PacketConstraints {
            protected_paths: crate::fix_check::ALWAYS_PROTECTED
                .iter()
                .map(|(p, _)| p.to_string())
                .filter(|p| !c.protected_paths.contains(p))
                .chain(c.protected_paths.iter().cloned())
                .collect(),
            do_not_touch: c.do_not_touch.clone(),
            max_files_changed: c.max_files_changed,
            no_new_deps: c.no_new_deps,
            allowed_dependencies: c.allowed_dependencies.clone(),
            paradigm: c.paradigm,
        }
    }
}

/// Builds the Fix Packet for one failed check: one violation per bug report, in report order.
pub fn build_fix_packet(
    check: &CheckRef,
    reports: &[BugReport],
    constraints: &ConstraintsConfig,
) -> FixPacket {
    let mut per_gate: BTreeMap<BugType, u32> = BTreeMap::new();
    let violations = reports
        .iter()
        .map(|r| {
            let n = per_gate.entry(r.error_type).or_insert(0);
            *n += 1;
            build_violation(r, *n)
        })
        .collect();
    FixPacket {
        version: 2,
        goal: check.goal(),
        violations,
        constraints: constraints.into(),
    }
}

fn build_violation(r: &BugReport, n: u32) -> Violation {
    let gate = gate_of(r.error_type);
    Violation {
        id: format!("{gate}-{n:03}"),
        gate,
        severity: severity_of(r.error_type),
        title: report_title(r),
        details: details_of(r),
        files: vec![r.file_path.clone()],
        hint: fix_description(r),
        instructions: instructions_for(r),
        metrics: Metrics {
            line: r.line_number,
            column: r.column,
            confidence: r.confidence_score,
        },
    }
}

fn details_of(r: &BugReport) -> String {
    let mut d = r.message.clone();
    let source = match (r.tool.as_deref(), r.rule.as_deref()) {
        (Some(t), Some(rule)) => Some(format!("{t} {rule}")),
        (Some(t), None) => Some(t.to_string()),
        (None, Some(rule)) => Some(rule.to_string()),
        (None, None) => None,
    };
    if let Some(s) = source {
        d.push_str(&format!(" [{s}]"));
    }
    if let Some(t) = r.test_name.as_deref().filter(|t| !t.is_empty()) {
        d.push_str(&format!("\nFailing test: {t}"));
    }
    d
}

/// Conservative, error-specific steps for one report: locate, make the one change the error
/// calls for, and leave everything else alone.
pub fn instructions_for(r: &BugReport) -> Vec<String> {
    let location = match r.column {
        Some(c) => format!("{} line {} column {}", r.file_path, r.line_number, c),
        None => format!("{} line {}", r.file_path, r.line_number),
    };
    let mut steps = vec![format!("Open {location}")];
    let specific: &[&str] = match r.error_type {
        BugType::Linting => &[
            "Read the linter's message and rule; change only the flagged construct",
            "Do not disable the rule or add a suppression comment",
        ],
        BugType::Syntax => &[
            "Find the unbalanced or misplaced token the message points at (it may be on the line before)",
            "Correct it without changing what the code does",
        ],
        BugType::Indentation => &[
            "Re-indent the block with the file's existing indentation (spaces, same width)",
            "Do not move statements into or out of the block",
        ],
        BugType::Import => &[
            "Check the imported name against the modules that exist in the repository and its declared dependencies",
            "Correct the name or path; do not add a new dependency",
        ],
        BugType::TypeError => &[
            "Compare the types the message names with what the code passes",
            "Add the smallest conversion or annotation change that makes them agree",
        ],
        BugType::Logic => &[
            "Read the failing assertion and find the code under test that produces the wrong value",
            "Correct that code; change the test only if the message shows the test itself is wrong",
        ],
    };
    steps.push(format!("Fix: {}", fix_description(r)));
    steps.extend(specific.iter().map(|s| s.to_string()));
    steps.push("Change nothing else; re-run the check to confirm the error is gone".to_string());
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn report(t: BugType, file: &str, line: u32) -> BugReport {
        BugReport {
            file_path: file.to_string(),
            line_number: line,
            error_type: t,
            message: format!("{t} at {file}"),
            test_name: None,
            confidence_score: 0.8,
            column: None,
            tool: None,
            rule: None,
        }
    }

    #[test]
    fn ids_are_numbered_per_gate_in_order() {
        let reports = [
            report(BugType::Syntax, "a.py", 1),
            report(BugType::Linting, "b.py", 2),
            report(BugType::Syntax, "c.py", 3),
            report(BugType::TypeError, "d.ts", 4),
        ];
        let check = CheckRef {
            check_name: "lint".into(),
            head_sha: "0123456789abcdef0123".into(),
        };
        let p = build_fix_packet(&check, &reports, &ConstraintsConfig::default());
        let ids: Vec<_> = p.violations.iter().map(|v| v.id.as_str()).collect();
        assert_eq!(
            ids,
            ["syntax-001", "linting-001", "syntax-002", "type_error-001"]
        );
        assert_eq!(p.violations[3].gate, "type_error");
        assert_eq!(p.violations[0].severity, Severity::Critical);
        assert_eq!(p.version, 2);
        assert_eq!(
            p.goal,
            "Achieve PASS state for check `lint` at commit 0123456789ab"
        );
        assert_eq!(
            p,
            build_fix_packet(&check, &reports, &ConstraintsConfig::default())
        );
    }

    #[test]
    fn violation_carries_message_metrics_and_hint() {
        let mut r = report(BugType::Linting, "src/utils.py", 15);
        r.message = "`os` imported but unused".into();
        r.column = Some(8);
        r.tool = Some("ruff".into());
        r.rule = Some("F401".into());
        let p = build_fix_packet(
            &CheckRef {
                check_name: String::new(),
                head_sha: String::new(),
            },
            &[r],
            &ConstraintsConfig::default(),
        );
        let v = &p.violations[0];
        assert_eq!(p.goal, DEFAULT_GOAL);
        assert_eq!(v.details, "`os` imported but unused [ruff F401]");
        assert_eq!(v.hint, "remove the import statement");
        assert_eq!(v.title, "LINTING error in src/utils.py line 15");
        assert_eq!(v.files, ["src/utils.py"]);
        assert_eq!(v.metrics.line, 15);
        assert_eq!(v.metrics.column, Some(8));
        assert!(v.instructions[0].contains("column 8"));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["violations"][0]["metrics"]["column"], 8);
        assert!(json["constraints"].get("paradigm").is_none());
        assert_eq!(json["constraints"]["no_new_deps"], true);
    }

    #[test]
    fn constraints_come_from_configuration() {
        let cfg = ConstraintsConfig {
            protected_paths: vec!["package.json".into()],
            do_not_touch: vec!["legacy/".into()],
            max_files_changed: 7,
            no_new_deps: false,
            allowed_dependencies: vec!["lodash".into()],
            paradigm: Some(Paradigm::Functional),
        };
        let p = build_fix_packet(
            &CheckRef {
                check_name: "x".into(),
                head_sha: "y".into(),
            },
            &[],
            &cfg,
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["constraints"],
            serde_json::json!({
                "protected_paths": [".github/workflows/", ".github/ci-medic.yml", "package.json"],
                "do_not_touch": ["legacy/"],
                "max_files_changed": 7,
                "no_new_deps": false,
                "allowed_dependencies": ["lodash"],
                "paradigm": "functional"
            })
        );
    }

    #[test]
    fn severity_table() {
        assert_eq!(severity_of(BugType::Linting), Severity::Medium);
        assert_eq!(severity_of(BugType::Indentation), Severity::Critical);
        assert_eq!(severity_of(BugType::Import), Severity::High);
        assert_eq!(severity_of(BugType::Logic), Severity::High);
        assert_eq!(severity_of(BugType::TypeError), Severity::High);
    }
}
