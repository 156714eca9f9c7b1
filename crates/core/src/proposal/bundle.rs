//! What `ci-medic analyze --format dds` prints for a log: the failed source DDS and the
//! code_fix derived from it, built without a registry.
//!
//! Offline there is no per-day counter, so both records take number 001 of the failure's UTC
//! day. They are previews, never registered: the service allocates real numbers through its
//! registry. Pure: the failure time comes from `--failed-at`, never from the clock.

use ci_medic_parser::BugReport;
use serde::Serialize;

use super::dds::{
    BuildError, CodeFixDds, FailedCheck, FailedDds, build_failed_dds, derive_code_fix,
    failed_dds_id,
};
use crate::ids::FixDdsId;
use crate::repo_config::ConstraintsConfig;

/// The failed source DDS and its code_fix, as one JSON document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DdsBundle {
    pub source_dds: FailedDds,
    pub code_fix: CodeFixDds,
    /// Reported files outside the failed scope (`--paths`): in the Fix Packet, not allowed.
    pub out_of_scope: Vec<String>,
    /// Reported files inside the scope that the configuration protects, with the pattern.
    pub protected: Vec<ProtectedPath>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProtectedPath {
    pub path: String,
    pub pattern: String,
}

/// Builds the preview for `analyze --format dds`: `check.changed_files` is the failed scope
/// (`--paths`), `check.project` is `--project`, `check.failed_at` is `--failed-at`.
pub fn standalone_dds(
    check: &FailedCheck,
    reports: &[BugReport],
    constraints: &ConstraintsConfig,
) -> Result<DdsBundle, BuildError> {
    let day = check.failed_at.date_naive();
    let failed_id = failed_dds_id(day, 1).expect("1 is a valid sequence number");
    let fix_id = FixDdsId::new(day, 1).expect("1 is a valid sequence number");
    let source = build_failed_dds(failed_id, check, constraints)?;
    let derived = derive_code_fix(&fix_id, &source.as_source(), reports, constraints)?;
    Ok(DdsBundle {
        source_dds: source,
        code_fix: derived.dds,
        out_of_scope: derived.out_of_scope,
        protected: derived
            .protected
            .into_iter()
            .map(|(path, pattern)| ProtectedPath { path, pattern })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proposal::validate_code_fix;
    use chrono::{TimeZone, Utc};
    use ci_medic_parser::BugType;

    #[test]
    fn preview_validates_and_names_the_scope() {
        let check = FailedCheck {
            project: "acme/app".into(),
            check_name: "lint".into(),
            head_sha: "deadbeef".into(),
            pr_number: None,
            changed_files: vec!["src/utils.py".into()],
            failed_at: Utc.with_ymd_and_hms(2026, 3, 4, 5, 6, 7).unwrap(),
        };
        let reports = [
            BugReport {
                file_path: "src/utils.py".into(),
                line_number: 15,
                error_type: BugType::Linting,
                message: "`os` imported but unused".into(),
                test_name: None,
                confidence_score: 0.9,
                column: Some(8),
                tool: Some("ruff".into()),
                rule: Some("F401".into()),
            },
            BugReport {
                file_path: "src/other.py".into(),
                line_number: 2,
                error_type: BugType::Syntax,
                message: "invalid syntax".into(),
                test_name: None,
                confidence_score: 0.9,
                column: None,
                tool: None,
                rule: None,
            },
        ];
        let b = standalone_dds(&check, &reports, &ConstraintsConfig::default()).unwrap();
        assert_eq!(b.source_dds.id.as_str(), "DDS-20260304-CODE-001");
        assert_eq!(b.code_fix.id, "DDS-FIX-20260304-001");
        assert_eq!(b.code_fix.allowed_paths, ["src/utils.py"]);
        assert_eq!(b.out_of_scope, ["src/other.py"]);
        validate_code_fix(&b.code_fix, Some(&b.source_dds.as_source()), None).unwrap();
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(
            v["code_fix"]["error_context"]["failed_at"],
            "2026-03-04T05:06:07.000000Z"
        );
        assert_eq!(
            v["code_fix"]["error_context"]["error_message"],
            "src/utils.py:15:8: F401 `os` imported but unused"
        );
    }
}
