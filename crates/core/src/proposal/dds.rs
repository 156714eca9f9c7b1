//! DDS v2 records: the failed `code_change` a failed check is recorded as, and the `code_fix`
//! derived from it by the rules of `code-fix-dds-v2.md` (constraint inheritance, narrowed paths,
//! sanitised error context).
//!
//! Pure: times and ids are arguments (the per-day counters live in the service's registry), so
//! the same inputs always give the same records. Builders never produce a record that fails
//! [`super::validate_code_fix`]; that is tested.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use ci_medic_parser::BugReport;
use serde::{Deserialize, Serialize};

use super::paths::{PathError, PathPatterns, check_relative_path, path_in_scope};
use crate::fix_check::ALWAYS_PROTECTED;
use crate::formatter::format_report_line;
use crate::ids::{DdsId, FixDdsId, IdError};
use crate::repo_config::ConstraintsConfig;

/// The hard limit on `max_files_changed` for a code_fix.
pub const CODE_FIX_MAX_FILES: u32 = 3;
/// Validation rule 9: the longest error message, in characters.
pub const ERROR_MESSAGE_MAX_CHARS: usize = 500;
/// The `tool` of every DDS ci-medic creates (a code_fix inherits its source's).
pub const TOOL: &str = "ci-medic";
/// At most this many reports are listed one per line in a code_fix's instructions; the rest are
/// summarised (all of them stay in the Fix Packet).
pub const MAX_LISTED_REPORTS: usize = 20;

/// A DDS status. Serialised in lower case as the specification spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DdsStatus {
    Proposed,
    Approved,
    Rejected,
    Executed,
    Failed,
}

impl DdsStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DdsStatus::Proposed => "proposed",
            DdsStatus::Approved => "approved",
            DdsStatus::Rejected => "rejected",
            DdsStatus::Executed => "executed",
            DdsStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for DdsStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The DDS type discriminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DdsType {
    CodeChange,
    CodeFix,
}

impl DdsType {
    pub fn as_str(self) -> &'static str {
        match self {
            DdsType::CodeChange => "code_change",
            DdsType::CodeFix => "code_fix",
        }
    }
}

/// The `constraints` object of a DDS v2 (both types share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdsConstraints {
    pub max_files_changed: u32,
    pub no_new_dependencies: bool,
    pub no_refactor: bool,
}

/// Formats the id of a failed code_change record: `DDS-YYYYMMDD-CODE-NNN`, `seq` in 1..=999.
pub fn failed_dds_id(day: NaiveDate, seq: u16) -> Result<DdsId, IdError> {
    if seq == 0 || seq > 999 {
        return Err(IdError {
            kind: "code_change DDS sequence number",
            expected: "1 to 999",
            value: seq.to_string(),
        });
    }
    Ok(DdsId(format!("DDS-{}-CODE-{seq:03}", day.format("%Y%m%d"))))
}

/// True when `s` is exactly `DDS-` + 8 digits + `-CODE-` + 3 digits.
pub fn is_failed_dds_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 21
        && s.starts_with("DDS-")
        && b[4..12].iter().all(u8::is_ascii_digit)
        && &s[12..18] == "-CODE-"
        && b[18..21].iter().all(u8::is_ascii_digit)
}

/// ISO-8601 / RFC 3339 in UTC with microseconds, as the specification's example
/// (`2026-02-02T15:30:45.123456Z`).
pub fn iso8601(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Parses an ISO-8601 timestamp as the specification writes them: RFC 3339 with an offset, or
/// the example's form without one (`2026-02-02T15:30:45.123456`, read as UTC).
pub fn parse_iso8601(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|n| n.and_utc())
}

/// The failed DDS a failed check is recorded as: a `code_change` whose status is `failed`.
/// Fields are the specification's code_change example plus `failed_at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedDds {
    /// `DDS-YYYYMMDD-CODE-NNN` ([`failed_dds_id`]).
    pub id: DdsId,
    pub version: u32,
    #[serde(rename = "type")]
    pub dds_type: DdsType,
    /// `owner/repo`.
    pub project: String,
    pub goal: String,
    pub instructions: Vec<String>,
    /// The files the pull request changes: the scope a fix may not leave.
    pub allowed_paths: Vec<String>,
    pub tool: String,
    pub constraints: DdsConstraints,
    pub status: DdsStatus,
    /// When the check failed (ISO-8601, UTC).
    pub failed_at: DateTime<Utc>,
}

/// The failed check, as the service knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCheck {
    /// `owner/repo`.
    pub project: String,
    pub check_name: String,
    pub head_sha: String,
    /// Pull request number, when the check ran on one.
    pub pr_number: Option<u64>,
    /// The files the pull request changes.
    pub changed_files: Vec<String>,
    pub failed_at: DateTime<Utc>,
}

/// Errors building DDS records from bad input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    #[error("`{0}` is not a failed code_change id (expected DDS-YYYYMMDD-CODE-NNN)")]
    BadFailedId(String),
    #[error("project must be `owner/repo`, got `{0}`")]
    BadProject(String),
    #[error("check name is empty")]
    EmptyCheckName,
    #[error("changed file rejected: {0}")]
    BadChangedFile(PathError),
    #[error("source DDS {id} has status `{status}`; only a failed DDS can be fixed")]
    SourceNotFailed { id: DdsId, status: DdsStatus },
    #[error("no bug reports: there is no error to fix")]
    NoReports,
}

/// Records a failed check as its failed `code_change` DDS. Duplicated changed files are kept
/// once, in first-seen order; an absolute or `..` path is refused rather than silently widened.
pub fn build_failed_dds(
    id: DdsId,
    check: &FailedCheck,
    constraints: &ConstraintsConfig,
) -> Result<FailedDds, BuildError> {
    if !is_failed_dds_id(id.as_str()) {
        return Err(BuildError::BadFailedId(id.0));
    }
    let valid_project = check
        .project
        .split_once('/')
        .is_some_and(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'));
    if !valid_project {
        return Err(BuildError::BadProject(check.project.clone()));
    }
    if check.check_name.trim().is_empty() {
        return Err(BuildError::EmptyCheckName);
    }
    let mut allowed_paths: Vec<String> = Vec::new();
    for f in &check.changed_files {
        check_relative_path(f).map_err(BuildError::BadChangedFile)?;
        if !allowed_paths.contains(f) {
            allowed_paths.push(f.clone());
        }
    }
    let sha = super::packet::short_sha(&check.head_sha);
    let mut instructions = vec![match check.pr_number {
        Some(n) => format!("Changes of pull request #{n} at commit {sha}"),
        None => format!("Changes at commit {sha}"),
    }];
    instructions.push(format!("Check `{}` must pass", check.check_name));
    Ok(FailedDds {
        id,
        version: 2,
        dds_type: DdsType::CodeChange,
        project: check.project.clone(),
        goal: format!(
            "Pass check `{}` at commit {}",
            check.check_name, check.head_sha
        ),
        instructions,
        allowed_paths,
        tool: TOOL.to_string(),
        constraints: DdsConstraints {
            max_files_changed: constraints.max_files_changed,
            no_new_dependencies: constraints.no_new_deps,
            no_refactor: false,
        },
        status: DdsStatus::Failed,
        failed_at: check.failed_at,
    })
}

/// A code_fix DDS v2: exactly the specification's JSON shape, field names and order.
///
/// Loosely typed where validation must be able to report a bad value rather than refuse to
/// read it (`id` is a plain string checked by rule 1, `failed_at` a string checked by rule 8),
/// so a downstream agent can deserialise a published block and call
/// [`super::validate_code_fix`] to get every violation at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeFixDds {
    pub id: String,
    pub version: u32,
    #[serde(rename = "type")]
    pub dds_type: DdsType,
    pub project: String,
    pub goal: String,
    pub instructions: Vec<String>,
    pub allowed_paths: Vec<String>,
    pub tool: String,
    pub constraints: DdsConstraints,
    pub status: DdsStatus,
    pub source_dds: DdsId,
    pub error_context: ErrorContext,
}

impl CodeFixDds {
    /// The id as a checked newtype.
    pub fn fix_id(&self) -> Result<FixDdsId, IdError> {
        FixDdsId::parse(&self.id)
    }
}

/// `error_context` of a code_fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorContext {
    pub original_dds: String,
    pub error_message: String,
    /// ISO-8601.
    pub failed_at: String,
}

/// What a code_fix needs to know about the DDS it fixes: a failed code_change, or a code_fix
/// that itself failed (the CI monitor proposes a new fix after a failed one).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceDds {
    pub id: DdsId,
    pub dds_type: DdsType,
    pub status: DdsStatus,
    pub project: String,
    pub tool: String,
    pub allowed_paths: Vec<String>,
    pub constraints: DdsConstraints,
    /// When it failed; `None` while it has not.
    pub failed_at: Option<DateTime<Utc>>,
}

impl FailedDds {
    /// This record as the source of a code_fix.
    pub fn as_source(&self) -> SourceDds {
        SourceDds {
            id: self.id.clone(),
            dds_type: self.dds_type,
            status: self.status,
            project: self.project.clone(),
            tool: self.tool.clone(),
            allowed_paths: self.allowed_paths.clone(),
            constraints: self.constraints,
            failed_at: (self.status == DdsStatus::Failed).then_some(self.failed_at),
        }
    }
}

/// Validation rule 9's sanitiser, as the specification writes it: keep the first 500
/// characters (cut on a character boundary, never inside a multi-byte character), then drop NUL
/// and turn every CR into LF.
pub fn sanitize_error_message(message: &str) -> String {
    let cut = match message.char_indices().nth(ERROR_MESSAGE_MAX_CHARS) {
        Some((i, _)) => &message[..i],
        None => message,
    };
    cut.chars()
        .filter(|&c| c != '\0')
        .map(|c| if c == '\r' { '\n' } else { c })
        .collect()
}

/// The first error as the tool would print it: `file:line[:column]: [rule ]message`.
pub fn error_text(r: &BugReport) -> String {
    let mut s = format!("{}:{}", r.file_path, r.line_number);
    if let Some(c) = r.column {
        s.push_str(&format!(":{c}"));
    }
    s.push_str(": ");
    if let Some(rule) = r.rule.as_deref().filter(|x| !x.is_empty())
        && !r.message.starts_with(rule)
    {
        s.push_str(rule);
        s.push(' ');
    }
    s.push_str(&r.message);
    s
}

/// A derived code_fix plus what the proposal must tell people about files it may not touch.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedFix {
    pub dds: CodeFixDds,
    /// Reported files outside the source DDS's scope: kept in the Fix Packet, not allowed for
    /// the fix.
    pub out_of_scope: Vec<String>,
    /// Reported files inside the scope but protected (always: the workflows and
    /// `.github/ci-medic.yml`; or by the configuration's `protected_paths` or `do_not_touch`),
    /// with the pattern that protects each.
    pub protected: Vec<(String, String)>,
}

/// Derives the code_fix for a failed source DDS from the bug reports of its failure, by the
/// specification's rules:
/// - `allowed_paths`: only reported files inside the source's scope (component-wise) and not
///   protected (by the configuration, or always: the workflows and `.github/ci-medic.yml`), in
///   report order, each once;
/// - `max_files_changed = min(source, 3)`, `no_new_dependencies` and `no_refactor` true;
/// - `project` and `tool` inherited, `goal` names the source id, `status` proposed;
/// - `error_context`: the sanitised first error and the source's failure time.
pub fn derive_code_fix(
    id: &FixDdsId,
    source: &SourceDds,
    reports: &[BugReport],
    constraints: &ConstraintsConfig,
) -> Result<DerivedFix, BuildError> {
    let failed_at = match (source.status, source.failed_at) {
        (DdsStatus::Failed, Some(t)) => t,
        _ => {
            return Err(BuildError::SourceNotFailed {
                id: source.id.clone(),
                status: source.status,
            });
        }
    };
    let first = reports.first().ok_or(BuildError::NoReports)?;
    // The always-protected paths first: a repository's own `protected_paths` replaces the
    // default list, and must not open the workflows or ci-medic's configuration to a fix.
    let always: Vec<String> = ALWAYS_PROTECTED
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    let protection = PathPatterns::new(
        always
            .iter()
            .chain(&constraints.protected_paths)
            .chain(&constraints.do_not_touch),
    );

    let mut allowed_paths: Vec<String> = Vec::new();
    let mut out_of_scope: Vec<String> = Vec::new();
    let mut protected: Vec<(String, String)> = Vec::new();
    for r in reports {
        let f = &r.file_path;
        let seen = allowed_paths.contains(f)
            || out_of_scope.contains(f)
            || protected.iter().any(|(p, _)| p == f);
        if seen {
            continue;
        }
        if !path_in_scope(f, &source.allowed_paths) {
            out_of_scope.push(f.clone());
        } else if let Some(pat) = protection.matching(f) {
            protected.push((f.clone(), pat.to_string()));
        } else {
            allowed_paths.push(f.clone());
        }
    }

    let mut instructions: Vec<String> = reports
        .iter()
        .filter(|r| allowed_paths.contains(&r.file_path))
        .take(MAX_LISTED_REPORTS)
        .map(format_report_line)
        .collect();
    let in_scope_count = reports
        .iter()
        .filter(|r| allowed_paths.contains(&r.file_path))
        .count();
    if in_scope_count > MAX_LISTED_REPORTS {
        instructions.push(format!(
            "…and {} more errors in the same files, listed in the Fix Packet",
            in_scope_count - MAX_LISTED_REPORTS
        ));
    }
    for f in &out_of_scope {
        instructions.push(format!(
            "Do not edit {f}: it is reported but outside the scope of {}",
            source.id
        ));
    }
    for (f, pat) in &protected {
        instructions.push(format!("Do not edit {f}: it is protected (`{pat}`)"));
    }
    if allowed_paths.is_empty() {
        instructions.push(
            "No reported file may be edited by this fix; a maintainer has to fix it by hand"
                .to_string(),
        );
    } else {
        instructions.push(
            "Change only what these errors require: no new dependencies, no refactoring"
                .to_string(),
        );
        instructions
            .push("Verify the fix resolves the errors without breaking existing tests".to_string());
    }

    let mut goal = format!(
        "Fix execution failure in {}: {} in {}",
        source.id,
        first.error_type.as_str(),
        first.file_path
    );
    if reports.len() > 1 {
        goal.push_str(&format!(" and {} more", reports.len() - 1));
    }

    let dds = CodeFixDds {
        id: id.as_str().to_string(),
        version: 2,
        dds_type: DdsType::CodeFix,
        project: source.project.clone(),
        goal,
        instructions,
        allowed_paths,
        tool: source.tool.clone(),
        constraints: DdsConstraints {
            max_files_changed: source.constraints.max_files_changed.min(CODE_FIX_MAX_FILES),
            no_new_dependencies: true,
            no_refactor: true,
        },
        status: DdsStatus::Proposed,
        source_dds: source.id.clone(),
        error_context: ErrorContext {
            original_dds: source.id.to_string(),
            error_message: sanitize_error_message(&error_text(first)),
            failed_at: iso8601(failed_at),
        },
    };
    Ok(DerivedFix {
        dds,
        out_of_scope,
        protected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn failed_ids() {
        let day = NaiveDate::from_ymd_opt(2026, 2, 2).unwrap();
        let id = failed_dds_id(day, 1).unwrap();
        assert_eq!(id.as_str(), "DDS-20260202-CODE-001");
        assert!(is_failed_dds_id(id.as_str()));
        assert!(failed_dds_id(day, 0).is_err());
        assert!(failed_dds_id(day, 1000).is_err());
        for bad in [
            "DDS-20260202-CODE-01",
            "DDS-FIX-20260202-001",
            "DDS-2026020X-CODE-001",
            "DDS-20260202-code-001",
        ] {
            assert!(!is_failed_dds_id(bad), "{bad}");
        }
    }

    #[test]
    fn sanitiser_examples() {
        assert_eq!(sanitize_error_message("a\r\nb\0c\rd"), "a\n\nbc\nd");
        let long = "é".repeat(600);
        let s = sanitize_error_message(&long);
        assert_eq!(s.chars().count(), 500);
        assert_eq!(s.len(), 1000);
        assert_eq!(sanitize_error_message(""), "");
    }

    #[test]
    fn iso_round_trip() {
        let t = parse_iso8601("2026-02-02T15:30:45.123456").unwrap();
        assert_eq!(iso8601(t), "2026-02-02T15:30:45.123456Z");
        assert_eq!(
            parse_iso8601("2026-02-02T17:30:45+02:00")
                .map(iso8601)
                .as_deref(),
            Some("2026-02-02T15:30:45.000000Z")
        );
        assert!(parse_iso8601("yesterday").is_none());
    }

    proptest! {
        #[test]
        fn sanitiser_properties(s in "(?s).{0,700}", extra in prop::collection::vec(prop::sample::select(vec!['\0', '\r', '\n', 'é', '漢', '🦀', 'a']), 0..700)) {
            let input: String = s.chars().chain(extra).collect();
            let out = sanitize_error_message(&input);
            prop_assert!(out.chars().count() <= ERROR_MESSAGE_MAX_CHARS);
            prop_assert!(!out.contains('\0'));
            prop_assert!(!out.contains('\r'));
            // what is kept is the input's first 500 characters, minus NUL, CR as LF
            let expected: String = input.chars().take(ERROR_MESSAGE_MAX_CHARS)
                .filter(|&c| c != '\0').map(|c| if c == '\r' { '\n' } else { c }).collect();
            prop_assert_eq!(&out, &expected);
            // idempotent
            prop_assert_eq!(sanitize_error_message(&out), out);
        }
    }
}
