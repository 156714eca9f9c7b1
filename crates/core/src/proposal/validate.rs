//! The ten validation rules of `code-fix-dds-v2.md`, plus the inheritance rules of its field
//! table (project, tool and goal), as one pure function that returns every violation.
//!
//! Lookups (does the source exist, is there already a fix for it) are the caller's: it passes
//! their answers in, so this stays pure and the registry can run it inside its transaction.

use serde::Serialize;

use super::dds::{
    CODE_FIX_MAX_FILES, CodeFixDds, DdsStatus, DdsType, ERROR_MESSAGE_MAX_CHARS, SourceDds,
    parse_iso8601,
};
use super::paths::{check_relative_path, path_in_scope};
use crate::ids::is_fix_dds_id;

/// The rule a violation breaks. Numbers 1–10 are the specification's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    IdFormat,
    Version,
    Type,
    Status,
    SourceDds,
    AllowedPaths,
    Constraints,
    ErrorContext,
    ErrorMessage,
    NoDuplicates,
    /// The field table's "inherited from failed DDS" / "must reference original DDS ID".
    Inheritance,
}

impl Rule {
    /// The specification's rule number; `None` for the field-table rules.
    pub fn number(self) -> Option<u8> {
        Some(match self {
            Rule::IdFormat => 1,
            Rule::Version => 2,
            Rule::Type => 3,
            Rule::Status => 4,
            Rule::SourceDds => 5,
            Rule::AllowedPaths => 6,
            Rule::Constraints => 7,
            Rule::ErrorContext => 8,
            Rule::ErrorMessage => 9,
            Rule::NoDuplicates => 10,
            Rule::Inheritance => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Rule::IdFormat => "ID format",
            Rule::Version => "version",
            Rule::Type => "type",
            Rule::Status => "status",
            Rule::SourceDds => "source DDS",
            Rule::AllowedPaths => "allowed paths",
            Rule::Constraints => "constraints",
            Rule::ErrorContext => "error context",
            Rule::ErrorMessage => "error message",
            Rule::NoDuplicates => "no duplicates",
            Rule::Inheritance => "inheritance",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.number() {
            Some(n) => write!(f, "rule {n} ({})", self.name()),
            None => write!(f, "field rule ({})", self.name()),
        }
    }
}

/// One broken rule, with a message a maintainer can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{rule}: {message}")]
pub struct ValidationError {
    pub rule: Rule,
    pub message: String,
}

/// Every violation of one code_fix, in rule order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("code_fix {id} is invalid: {}", .errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct ValidationErrors {
    pub id: String,
    pub errors: Vec<ValidationError>,
}

impl ValidationErrors {
    pub fn rules(&self) -> Vec<Rule> {
        self.errors.iter().map(|e| e.rule).collect()
    }
}

/// Checks a code_fix against rules 1–10 and the inheritance rules.
///
/// - `source`: the DDS `fix.source_dds` names, as the registry holds it, or `None` if there is
///   none (rule 5).
/// - `existing_fix_for_source`: the id of a code_fix already recorded for the same source, if
///   any (rule 10). The fix's own id is ignored, so re-validating a stored fix is idempotent.
pub fn validate_code_fix(
    fix: &CodeFixDds,
    source: Option<&SourceDds>,
    existing_fix_for_source: Option<&str>,
) -> Result<(), ValidationErrors> {
    let mut errs: Vec<ValidationError> = Vec::new();
    let mut err = |rule: Rule, message: String| errs.push(ValidationError { rule, message });

    // 1
    if !is_fix_dds_id(&fix.id) {
        err(
            Rule::IdFormat,
            format!(
                "id `{}` must match DDS-FIX-YYYYMMDD-NNN (8 digits, 3 digits)",
                fix.id
            ),
        );
    }
    // 2
    if fix.version != 2 {
        err(
            Rule::Version,
            format!(
                "version is {}; a code_fix DDS must be version 2",
                fix.version
            ),
        );
    }
    // 3
    if fix.dds_type != DdsType::CodeFix {
        err(
            Rule::Type,
            format!("type is `{}`; it must be `code_fix`", fix.dds_type.as_str()),
        );
    }
    // 4
    if fix.status != DdsStatus::Proposed {
        err(
            Rule::Status,
            format!(
                "status is `{}`; a code_fix is always created `proposed` and only a person approves it",
                fix.status
            ),
        );
    }
    // 5
    match source {
        None => err(
            Rule::SourceDds,
            format!(
                "source_dds `{}` does not name a DDS ci-medic knows; record the failed DDS first",
                fix.source_dds
            ),
        ),
        Some(s) if s.id != fix.source_dds => err(
            Rule::SourceDds,
            format!(
                "source_dds is `{}` but the DDS looked up is `{}`",
                fix.source_dds, s.id
            ),
        ),
        Some(s) if s.status != DdsStatus::Failed => err(
            Rule::SourceDds,
            format!(
                "source DDS `{}` has status `{}`; only a DDS with status `failed` can be fixed",
                s.id, s.status
            ),
        ),
        Some(_) => {}
    }
    // 6
    for p in &fix.allowed_paths {
        if let Err(e) = check_relative_path(p) {
            err(Rule::AllowedPaths, format!("allowed path rejected: {e}"));
        } else if let Some(s) = source
            && !path_in_scope(p, &s.allowed_paths)
        {
            err(
                Rule::AllowedPaths,
                format!(
                    "path `{p}` is not in the scope of {} ({}); a code_fix may only narrow it",
                    s.id,
                    if s.allowed_paths.is_empty() {
                        "which allows no paths".to_string()
                    } else {
                        s.allowed_paths.join(", ")
                    }
                ),
            );
        }
    }
    // 7
    let c = &fix.constraints;
    let limit = source
        .map(|s| s.constraints.max_files_changed.min(CODE_FIX_MAX_FILES))
        .unwrap_or(CODE_FIX_MAX_FILES);
    if c.max_files_changed > limit {
        err(
            Rule::Constraints,
            format!(
                "max_files_changed is {}; it must be at most {limit} (min of the source's limit and {CODE_FIX_MAX_FILES})",
                c.max_files_changed
            ),
        );
    }
    if !c.no_new_dependencies {
        err(
            Rule::Constraints,
            "no_new_dependencies must be true for a code_fix".to_string(),
        );
    }
    if !c.no_refactor {
        err(
            Rule::Constraints,
            "no_refactor must be true for a code_fix".to_string(),
        );
    }
    // 8
    let ec = &fix.error_context;
    for (name, value) in [
        ("original_dds", &ec.original_dds),
        ("error_message", &ec.error_message),
        ("failed_at", &ec.failed_at),
    ] {
        if value.trim().is_empty() {
            err(
                Rule::ErrorContext,
                format!("error_context.{name} is empty; all three fields are required"),
            );
        }
    }
    if !ec.original_dds.trim().is_empty() && ec.original_dds != fix.source_dds.as_str() {
        err(
            Rule::ErrorContext,
            format!(
                "error_context.original_dds is `{}` but source_dds is `{}`; they must match",
                ec.original_dds, fix.source_dds
            ),
        );
    }
    if !ec.failed_at.trim().is_empty() && parse_iso8601(&ec.failed_at).is_none() {
        err(
            Rule::ErrorContext,
            format!(
                "error_context.failed_at `{}` is not an ISO-8601 timestamp",
                ec.failed_at
            ),
        );
    }
    // 9
    let chars = ec.error_message.chars().count();
    if chars > ERROR_MESSAGE_MAX_CHARS {
        err(
            Rule::ErrorMessage,
            format!(
                "error_context.error_message has {chars} characters; the limit is {ERROR_MESSAGE_MAX_CHARS}"
            ),
        );
    }
    if ec.error_message.contains(['\0', '\r']) {
        err(
            Rule::ErrorMessage,
            "error_context.error_message is not sanitised (it contains NUL or CR)".to_string(),
        );
    }
    // 10
    if let Some(existing) = existing_fix_for_source
        && existing != fix.id
    {
        err(
            Rule::NoDuplicates,
            format!(
                "{existing} already fixes {}; ci-medic never proposes a second code_fix for the same source (a rejected one included)",
                fix.source_dds
            ),
        );
    }
    // field table
    if let Some(s) = source {
        if fix.project != s.project {
            err(
                Rule::Inheritance,
                format!(
                    "project is `{}` but the source's is `{}`; it must be inherited",
                    fix.project, s.project
                ),
            );
        }
        if fix.tool != s.tool {
            err(
                Rule::Inheritance,
                format!(
                    "tool is `{}` but the source's is `{}`; it must be inherited",
                    fix.tool, s.tool
                ),
            );
        }
    }
    if !fix.goal.contains(fix.source_dds.as_str()) {
        err(
            Rule::Inheritance,
            format!(
                "goal must reference the original DDS id `{}`",
                fix.source_dds
            ),
        );
    }

    if errs.is_empty() {
        Ok(())
    } else {
        Err(ValidationErrors {
            id: fix.id.clone(),
            errors: errs,
        })
    }
}
