//! Per-repository configuration: `.github/ci-medic.yml` on the default branch.
//!
//! Parsed strictly (unknown keys are errors) so a typo never silently weakens a constraint.
//! An invalid file never stops ci-medic: the caller reports the error where the maintainer will
//! see it and carries on with [`RepoConfig::default`], whose values are the safe ones.
//!
//! This module only parses and validates text it is handed; fetching and caching the file are
//! I/O and live in the service.

use serde::{Deserialize, Serialize};

/// Where the file lives in a repository.
pub const CONFIG_PATH: &str = ".github/ci-medic.yml";

/// The whole file. Every field has a default, so an empty file is valid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    /// Whether ci-medic acts on this repository at all.
    pub enabled: bool,
    pub checks: ChecksConfig,
    pub approvers: ApproversConfig,
    pub constraints: ConstraintsConfig,
    pub fix: FixConfig,
    /// Verify a patch by building it before pushing (`none` or `docker`).
    pub verify: VerifyMode,
    pub executor: ExecutorConfig,
}

impl Default for RepoConfig {
    fn default() -> Self {
        RepoConfig {
            enabled: true,
            checks: ChecksConfig::default(),
            approvers: ApproversConfig::default(),
            constraints: ConstraintsConfig::default(),
            fix: FixConfig::default(),
            verify: VerifyMode::None,
            executor: ExecutorConfig::default(),
        }
    }
}

/// Which failing checks ci-medic analyses, by check-run name (globs: `*`, `?`, `[…]`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChecksConfig {
    /// Names to analyse; empty means every check.
    pub include: Vec<String>,
    /// Names never analysed, even when included.
    pub exclude: Vec<String>,
}

/// A collaborator permission level, lowest first, as the permission API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

/// Who may `/approve` and `/reject`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApproversConfig {
    /// The lowest permission on the repository that may approve.
    pub min_permission: Permission,
    /// When non-empty, only these logins may approve (they still need `min_permission`).
    pub users: Vec<String>,
    /// Whether the pull request's author may approve fixes on their own pull request.
    pub allow_author: bool,
}

impl Default for ApproversConfig {
    fn default() -> Self {
        ApproversConfig {
            min_permission: Permission::Write,
            users: Vec::new(),
            allow_author: true,
        }
    }
}

/// Constraints that feed the Fix Packet and bound every patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConstraintsConfig {
    /// Paths (files, or directories ending in `/`, or globs) a fix must never edit.
    pub protected_paths: Vec<String>,
    /// Further paths a fix must leave alone.
    pub do_not_touch: Vec<String>,
    /// Most files one fix may change (a code_fix is capped at 3 whatever this says).
    pub max_files_changed: u32,
    /// Forbid new dependencies.
    pub no_new_deps: bool,
    /// Dependencies a fix may import even when `no_new_deps` is set.
    pub allowed_dependencies: Vec<String>,
    /// Preferred style for fixes.
    pub paradigm: Option<Paradigm>,
}

impl Default for ConstraintsConfig {
    fn default() -> Self {
        ConstraintsConfig {
            protected_paths: vec![".github/workflows/".to_string(), CONFIG_PATH.to_string()],
            do_not_touch: Vec::new(),
            max_files_changed: 3,
            no_new_deps: true,
            allowed_dependencies: Vec::new(),
            paradigm: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Paradigm {
    Oop,
    Functional,
}

/// How the fix agent behaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixConfig {
    /// Patches whose confidence is below this are refused before commit.
    pub confidence_threshold: f64,
    /// Fix attempts on one check before ci-medic stops and says so.
    pub max_attempts: u32,
}

impl Default for FixConfig {
    fn default() -> Self {
        FixConfig {
            confidence_threshold: 0.7,
            max_attempts: 3,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Push the guarded patch without building it.
    #[default]
    None,
    /// Build it in the Docker sandbox first; push only when the targeted errors are gone.
    Docker,
}

/// The sandbox used with `verify: docker` (and by `ci-medic exec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutorConfig {
    /// Image to run; detected from the project type when unset.
    pub image: Option<String>,
    /// Build command; detected from the project type when unset.
    pub command: Option<String>,
    pub timeout_seconds: u64,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            image: None,
            command: None,
            timeout_seconds: 300,
        }
    }
}
