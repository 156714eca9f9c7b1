//! The Reviewdog Diagnostic Format as one JSON document (`rdjson`), for
//! `reviewdog -f=rdjson`: a `DiagnosticResult` whose source is ci-medic and whose diagnostics
//! are the reports.
//!
//! The shape is reviewdog's `proto/rdf/jsonschema/DiagnosticResult.json` (kept in
//! `crates/core/schema/` with its provenance; a test validates against it). Severities follow the
//! workflow commands' levels ([`super::github::level`]): `ERROR`, `WARNING`, and `INFO` for a
//! location the parser was unsure of. Lines and columns are 1-based, as the tools printed them.
//!
//! Pure: builds a JSON value; never writes it.

use ci_medic_parser::BugReport;
use serde_json::{Value, json};

use super::github::{Level, level, title};

/// The reviewdog severity of a report.
pub fn severity(report: &BugReport) -> &'static str {
    match level(report) {
        Level::Error => "ERROR",
        Level::Warning => "WARNING",
        Level::Notice => "INFO",
    }
}

/// One `reviewdog.rdf.Diagnostic`.
pub fn diagnostic(report: &BugReport) -> Value {
    let mut start = json!({ "line": report.line_number.max(1) });
    if let Some(col) = report.column {
        start["column"] = json!(col.max(1));
    }
    let mut message = if report.message.trim().is_empty() {
        report.error_type.as_str().to_string()
    } else {
        report.message.clone()
    };
    if let Some(test) = &report.test_name {
        message.push_str("\nFailing test: ");
        message.push_str(test);
    }
    message.push_str("\n\n");
    message.push_str(&title(report));
    let mut d = json!({
        "message": message,
        "location": { "path": report.file_path, "range": { "start": start } },
        "severity": severity(report),
    });
    if let Some(tool) = &report.tool {
        d["source"] = json!({ "name": tool });
    }
    if let Some(rule) = &report.rule {
        d["code"] = json!({ "value": rule });
    }
    d
}

/// The whole `reviewdog.rdf.DiagnosticResult`.
pub fn to_rdjson(reports: &[BugReport]) -> Value {
    json!({
        "source": { "name": "ci-medic", "url": "https://github.com/ci-medic/ci-medic" },
        "diagnostics": reports.iter().map(diagnostic).collect::<Vec<_>>(),
    })
}
