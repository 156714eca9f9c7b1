//! Per-repository configuration: `.github/ci-medic.yml` on the default branch.
//!
//! Parsed strictly (unknown keys are errors) so a typo never silently weakens a constraint.
//! An invalid file never stops ci-medic: the caller reports the error where the maintainer will
//! see it and carries on with [`RepoConfig::default`], whose values are the safe ones.
//!
//! This module only parses and validates text it is handed; fetching and caching the file are
//! I/O and live in the service. It must never read files, panic on bad input, or accept a value
//! it cannot honour.
//!
//! Every key is listed in [`KEYS`] with its default and a description; the README table is
//! [`markdown_table`], and [`EXAMPLE_YAML`] is a commented file spelling out every default.

use serde::{Deserialize, Serialize};

use crate::tool_tier::Ecosystem;

/// Where the file lives in a repository.
pub const CONFIG_PATH: &str = ".github/ci-medic.yml";

/// The whole file. Every field has a default, so an empty file is valid.
///
/// A section written with nothing under it (`checks:` whose keys are all commented out) is the
/// section's defaults, not an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    /// Whether ci-medic acts on this repository at all.
    pub enabled: bool,
    #[serde(deserialize_with = "null_as_default")]
    pub checks: ChecksConfig,
    #[serde(deserialize_with = "null_as_default")]
    pub approvers: ApproversConfig,
    #[serde(deserialize_with = "null_as_default")]
    pub constraints: ConstraintsConfig,
    #[serde(deserialize_with = "null_as_default")]
    pub fix: FixConfig,
    /// Verify a patch by building it before pushing (`none` or `docker`).
    pub verify: VerifyMode,
    #[serde(deserialize_with = "null_as_default")]
    pub executor: ExecutorConfig,
    #[serde(deserialize_with = "null_as_default")]
    pub triage: TriageConfig,
    #[serde(deserialize_with = "null_as_default")]
    pub fixers: FixersConfig,
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
            triage: TriageConfig::default(),
            fixers: FixersConfig::default(),
        }
    }
}

/// What ci-medic does with a failure that is not the code's fault (infrastructure, flaky).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TriageConfig {
    /// Re-run the failed GitHub Actions jobs of an infrastructure or flaky failure without
    /// waiting for a maintainer's `/rerun`.
    pub auto_rerun: bool,
    /// Automatic re-runs per commit and check; a maintainer's `/rerun` is not counted.
    pub max_reruns: u32,
}

impl Default for TriageConfig {
    fn default() -> Self {
        TriageConfig {
            auto_rerun: false,
            max_reruns: 1,
        }
    }
}

/// The most automatic re-runs per commit a repository may ask for: each one is a full job on
/// the repository's CI minutes, and GitHub stops a workflow run after 50 attempts.
pub const MAX_RERUNS_LIMIT: u32 = 5;

/// Which failing checks ci-medic analyses, by check-run name (globs: `*`, `?`, `[…]`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChecksConfig {
    /// Names to analyse; empty means every check.
    #[serde(deserialize_with = "null_as_default")]
    pub include: Vec<String>,
    /// Names never analysed, even when included.
    #[serde(deserialize_with = "null_as_default")]
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
    #[serde(deserialize_with = "null_as_default")]
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
    /// Paths (files, or directories ending in `/`, or globs) a fix must never edit. Replaces the
    /// default list; the guard and the proposal protect `.github/workflows/` and [`CONFIG_PATH`]
    /// whatever it says (`fix_check::ALWAYS_PROTECTED`).
    #[serde(deserialize_with = "null_as_default")]
    pub protected_paths: Vec<String>,
    /// Further paths a fix must leave alone.
    #[serde(deserialize_with = "null_as_default")]
    pub do_not_touch: Vec<String>,
    /// Most files one fix may change (a code_fix is capped at 3 whatever this says).
    pub max_files_changed: u32,
    /// Forbid new dependencies.
    pub no_new_deps: bool,
    /// Dependencies a fix may import even when `no_new_deps` is set.
    #[serde(deserialize_with = "null_as_default")]
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

/// The fix agent's tool tier: where the project's own formatters and linters run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixersConfig {
    #[serde(deserialize_with = "null_as_default")]
    pub images: FixerImages,
}

/// The image each ecosystem's tools run in. The defaults are the images `.ci/fixer-images.sh`
/// (and `deploy/fixer-images.sh`) build; an override must carry the same tools on its `PATH`,
/// and its `ci-medic.tools` label says which versions it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixerImages {
    pub python: String,
    pub go: String,
    pub rust: String,
    pub clang: String,
    pub node: String,
}

impl Default for FixerImages {
    fn default() -> Self {
        FixerImages {
            python: Ecosystem::Python.default_image().into(),
            go: Ecosystem::Go.default_image().into(),
            rust: Ecosystem::Rust.default_image().into(),
            clang: Ecosystem::Clang.default_image().into(),
            node: Ecosystem::Node.default_image().into(),
        }
    }
}

impl FixerImages {
    /// The image `eco`'s tools run in.
    pub fn get(&self, eco: Ecosystem) -> &str {
        match eco {
            Ecosystem::Python => &self.python,
            Ecosystem::Go => &self.go,
            Ecosystem::Rust => &self.rust,
            Ecosystem::Clang => &self.clang,
            Ecosystem::Node => &self.node,
        }
    }
}

/// `key:` with nothing after it reads as the default, like an absent key.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// What is wrong with a `.github/ci-medic.yml`, and where.
///
/// Displayed as `.github/ci-medic.yml:4:3: message (key `checks.foo`)`, the form editors and
/// people both read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// What is wrong, without the position.
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// Dotted key path (`constraints.protected_paths[2]`), when the error belongs to a key.
    pub key_path: Option<String>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(CONFIG_PATH)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)?;
        if let Some(key) = &self.key_path {
            write!(f, " (key `{key}`)")?;
        }
        Ok(())
    }
}

impl RepoConfig {
    /// Parses and validates the file's text. Empty text, or only comments, gives the defaults.
    pub fn parse(yaml: &str) -> Result<RepoConfig, ConfigError> {
        // An empty document is not a mapping, so it cannot be handed to the struct directly.
        let value: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(yaml).map_err(|e| yaml_error(&e, None))?;
        if value.is_null() {
            return Ok(RepoConfig::default());
        }
        let deserializer = serde_yaml_ng::Deserializer::from_str(yaml);
        let config: RepoConfig = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let path = e.path().to_string();
            let path = (path != ".").then_some(path);
            yaml_error(e.inner(), path)
        })?;
        match config.validate().into_iter().next() {
            Some(problem) => Err(problem.locate(yaml)),
            None => Ok(config),
        }
    }

    /// [`RepoConfig::parse`], falling back to the safe defaults: the error is returned for the
    /// caller to show, never a reason to stop.
    pub fn parse_or_default(yaml: &str) -> (RepoConfig, Option<ConfigError>) {
        match RepoConfig::parse(yaml) {
            Ok(config) => (config, None),
            Err(e) => (RepoConfig::default(), Some(e)),
        }
    }

    /// Whether ci-medic analyses a failed check of this name: `checks.include` empty or
    /// matching, and `checks.exclude` not matching (exclude wins).
    pub fn check_selected(&self, check_name: &str) -> bool {
        // Check-run names are not paths: `*` crosses the ` / ` GitHub puts between a workflow
        // and a job name (`CI / test (ubuntu)`), unlike in the path matcher.
        let matches = |pattern: &String| match globset::Glob::new(pattern) {
            Ok(glob) => glob.compile_matcher().is_match(check_name),
            // Unreachable after validation; a literal comparison is the least surprising reading.
            Err(_) => pattern == check_name,
        };
        (self.checks.include.is_empty() || self.checks.include.iter().any(matches))
            && !self.checks.exclude.iter().any(matches)
    }

    /// Every semantic problem, in file order of keys. Empty when the config can be honoured.
    fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut check = |ok: bool, path: Vec<Seg>, message: String| {
            if !ok {
                problems.push(Problem { path, message });
            }
        };
        for (key, globs) in [
            ("include", &self.checks.include),
            ("exclude", &self.checks.exclude),
        ] {
            for (i, glob) in globs.iter().enumerate() {
                let path = vec![Seg::Key("checks"), Seg::Key(key), Seg::Index(i)];
                check(
                    !glob.trim().is_empty(),
                    path.clone(),
                    "empty check name".into(),
                );
                if let Err(e) = globset::Glob::new(glob) {
                    check(
                        false,
                        path,
                        format!("`{glob}` is not a valid glob: {}", e.kind()),
                    );
                }
            }
        }
        check(
            self.approvers.min_permission >= Permission::Triage,
            vec![Seg::Key("approvers"), Seg::Key("min_permission")],
            format!(
                "`{}` would let anyone who can read the repository approve a push; use `triage`, `write`, `maintain` or `admin`",
                self.approvers.min_permission.as_str()
            ),
        );
        for (i, user) in self.approvers.users.iter().enumerate() {
            let path = vec![Seg::Key("approvers"), Seg::Key("users"), Seg::Index(i)];
            let message = if let Some(login) = user.strip_prefix('@') {
                format!("write the login without `@`: `{login}`")
            } else {
                format!("`{user}` is not a GitHub login")
            };
            check(is_login(user), path, message);
        }
        for (key, paths) in [
            ("protected_paths", &self.constraints.protected_paths),
            ("do_not_touch", &self.constraints.do_not_touch),
        ] {
            for (i, p) in paths.iter().enumerate() {
                let path = vec![Seg::Key("constraints"), Seg::Key(key), Seg::Index(i)];
                if let Some(why) = bad_repo_path(p) {
                    check(false, path, why);
                } else if let Err(e) = crate::proposal::compile_glob(p) {
                    check(
                        false,
                        path,
                        format!("`{p}` is not a valid glob: {}", e.kind()),
                    );
                }
            }
        }
        check(
            self.constraints.max_files_changed >= 1,
            vec![Seg::Key("constraints"), Seg::Key("max_files_changed")],
            "must be at least 1".into(),
        );
        for (i, dep) in self.constraints.allowed_dependencies.iter().enumerate() {
            check(
                !dep.is_empty() && !dep.chars().any(char::is_whitespace),
                vec![
                    Seg::Key("constraints"),
                    Seg::Key("allowed_dependencies"),
                    Seg::Index(i),
                ],
                format!("`{dep}` is not a dependency name (no spaces, not empty)"),
            );
        }
        let threshold = self.fix.confidence_threshold;
        check(
            (0.0..=1.0).contains(&threshold),
            vec![Seg::Key("fix"), Seg::Key("confidence_threshold")],
            format!("must be between 0 and 1, got {threshold}"),
        );
        check(
            (1..=10).contains(&self.fix.max_attempts),
            vec![Seg::Key("fix"), Seg::Key("max_attempts")],
            format!("must be between 1 and 10, got {}", self.fix.max_attempts),
        );
        if let Some(image) = &self.executor.image {
            check(
                !image.is_empty() && !image.chars().any(char::is_whitespace),
                vec![Seg::Key("executor"), Seg::Key("image")],
                format!("`{image}` is not an image reference (no spaces, not empty)"),
            );
        }
        if let Some(command) = &self.executor.command {
            check(
                !command.trim().is_empty(),
                vec![Seg::Key("executor"), Seg::Key("command")],
                "must not be empty; leave it out to detect it from the project".into(),
            );
        }
        for eco in Ecosystem::ALL {
            let image = self.fixers.images.get(eco);
            check(
                !image.is_empty() && !image.chars().any(char::is_whitespace),
                vec![
                    Seg::Key("fixers"),
                    Seg::Key("images"),
                    Seg::Key(eco.as_str()),
                ],
                format!("`{image}` is not an image reference (no spaces, not empty)"),
            );
        }
        check(
            self.triage.max_reruns <= MAX_RERUNS_LIMIT,
            vec![Seg::Key("triage"), Seg::Key("max_reruns")],
            format!(
                "must be between 0 and {MAX_RERUNS_LIMIT}, got {}",
                self.triage.max_reruns
            ),
        );
        check(
            (1..=3600).contains(&self.executor.timeout_seconds),
            vec![Seg::Key("executor"), Seg::Key("timeout_seconds")],
            format!(
                "must be between 1 and 3600, got {}",
                self.executor.timeout_seconds
            ),
        );
        problems
    }
}

/// A GitHub login: letters, digits and single hyphens, at most 39 characters; apps end in `[bot]`.
fn is_login(user: &str) -> bool {
    let name = user.strip_suffix("[bot]").unwrap_or(user);
    !name.is_empty()
        && name.len() <= 39
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !name.starts_with('-')
}

/// Why a configured path cannot name something inside the repository, if it cannot.
fn bad_repo_path(p: &str) -> Option<String> {
    if p.trim().is_empty() {
        return Some("empty path".into());
    }
    let b = p.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if p.starts_with('/') || p.starts_with('\\') || p.starts_with('~') || drive {
        return Some(format!("`{p}` must be relative to the repository root"));
    }
    if p.split(['/', '\\']).any(|seg| seg == "..") {
        return Some(format!("`{p}` must not contain `..`"));
    }
    None
}

fn yaml_error(e: &serde_yaml_ng::Error, key_path: Option<String>) -> ConfigError {
    let location = e.location();
    let mut message = e.to_string();
    if let Some(loc) = &location {
        let suffix = format!(" at line {} column {}", loc.line(), loc.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    // serde_yaml_ng prefixes the enclosing path (`checks: unknown field…`); the path is kept
    // separately, so drop the prefix when it is a prefix of the path.
    if let Some(path) = &key_path
        && let Some((prefix, rest)) = message.split_once(": ")
        && path.starts_with(prefix)
    {
        message = rest.to_string();
    }
    ConfigError {
        message,
        line: location.as_ref().map(|l| l.line()),
        column: location.as_ref().map(|l| l.column()),
        key_path,
    }
}

#[derive(Debug, Clone, Copy)]
enum Seg {
    Key(&'static str),
    Index(usize),
}

/// A semantic problem found after deserialising, positioned later against the text.
struct Problem {
    path: Vec<Seg>,
    message: String,
}

impl Problem {
    fn locate(self, yaml: &str) -> ConfigError {
        let mut key_path = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(k) if key_path.is_empty() => key_path.push_str(k),
                Seg::Key(k) => {
                    key_path.push('.');
                    key_path.push_str(k);
                }
                Seg::Index(i) => key_path.push_str(&format!("[{i}]")),
            }
        }
        let position = locate(yaml, &self.path);
        ConfigError {
            message: self.message,
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            key_path: Some(key_path),
        }
    }
}

/// Finds the 1-based (line, column) of a key path in block-style YAML, the style people write.
/// Flow style (`include: [a, b]`) positions at the nearest enclosing key found. The value was
/// already parsed, so this only needs to be right for well-formed files.
fn locate(yaml: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut found: Option<(usize, usize)> = None;
    let mut from = 0usize;
    let mut parent_indent: Option<usize> = None;
    for seg in path {
        let mut child_indent: Option<usize> = None;
        let mut hit = None;
        let mut item = 0usize;
        for (n, line) in lines.iter().enumerate().skip(from) {
            let content = line.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let indent = line.len() - content.len();
            let is_item = content == "-" || content.starts_with("- ");
            // A sequence may sit at its key's own indentation.
            let inside = match parent_indent {
                None => true,
                Some(p) => indent > p || (matches!(seg, Seg::Index(_)) && indent == p && is_item),
            };
            if !inside {
                break;
            }
            let level = *child_indent.get_or_insert(indent);
            if indent != level {
                continue;
            }
            match seg {
                Seg::Key(k) => {
                    let key = content
                        .split_once(':')
                        .map(|(key, _)| key.trim().trim_matches(['"', '\'']));
                    if key == Some(*k) {
                        hit = Some((n, indent));
                        break;
                    }
                }
                Seg::Index(i) => {
                    if is_item {
                        if item == *i {
                            hit = Some((n, indent + 2));
                            break;
                        }
                        item += 1;
                    }
                }
            }
        }
        let Some((n, indent)) = hit else {
            break;
        };
        found = Some((n + 1, indent + 1));
        from = n + 1;
        parent_indent = Some(indent);
    }
    found
}

/// A permission name that is not one of GitHub's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a permission (expected none, read, triage, write, maintain or admin)")]
pub struct UnknownPermission(pub String);

impl Permission {
    /// Every level, lowest first.
    pub const ALL: [Permission; 6] = [
        Permission::None,
        Permission::Read,
        Permission::Triage,
        Permission::Write,
        Permission::Maintain,
        Permission::Admin,
    ];

    /// Reads a permission as the collaborator-permission API spells it (`permission` or
    /// `role_name`), case-insensitively.
    pub fn parse(s: &str) -> Result<Permission, UnknownPermission> {
        Permission::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownPermission(s.to_string()))
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Permission::None => "none",
            Permission::Read => "read",
            Permission::Triage => "triage",
            Permission::Write => "write",
            Permission::Maintain => "maintain",
            Permission::Admin => "admin",
        }
    }

    /// Whether someone holding `self` is allowed what needs `min`.
    pub fn meets(self, min: Permission) -> bool {
        self >= min
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One documented key of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    /// Dotted path (`fix.max_attempts`).
    pub key: &'static str,
    /// The default, as written in YAML (`unset` for an absent optional value).
    pub default: &'static str,
    /// What it does, one line.
    pub description: &'static str,
}

/// Every key of `.github/ci-medic.yml`, in file order. Tests hold it equal to the struct's
/// defaults and complete, and the README table is generated from it.
pub const KEYS: &[ConfigKey] = &[
    ConfigKey {
        key: "enabled",
        default: "true",
        description: "Whether ci-medic acts on this repository at all.",
    },
    ConfigKey {
        key: "checks.include",
        default: "[]",
        description: "Check-run names to analyse (globs: `*`, `?`, `[…]`); empty means every check.",
    },
    ConfigKey {
        key: "checks.exclude",
        default: "[]",
        description: "Check-run names never analysed (globs); exclude wins over include.",
    },
    ConfigKey {
        key: "approvers.min_permission",
        default: "write",
        description: "Lowest repository permission allowed to `/approve` and `/reject`: `triage`, `write`, `maintain` or `admin`.",
    },
    ConfigKey {
        key: "approvers.users",
        default: "[]",
        description: "When non-empty, only these logins may approve (they still need `min_permission`).",
    },
    ConfigKey {
        key: "approvers.allow_author",
        default: "true",
        description: "Whether the pull request's author may approve fixes on their own pull request.",
    },
    ConfigKey {
        key: "constraints.protected_paths",
        default: "[.github/workflows/, .github/ci-medic.yml]",
        description: "Paths a fix must never edit: files, directories ending in `/`, or globs, relative to the repository root. A list replaces the default, but `.github/workflows/` and `.github/ci-medic.yml` stay protected whatever it says.",
    },
    ConfigKey {
        key: "constraints.do_not_touch",
        default: "[]",
        description: "Further paths a fix must leave alone (same forms as `protected_paths`).",
    },
    ConfigKey {
        key: "constraints.max_files_changed",
        default: "3",
        description: "Most files one fix may change (at least 1; a code_fix is capped at 3 whatever this says).",
    },
    ConfigKey {
        key: "constraints.no_new_deps",
        default: "true",
        description: "Forbid fixes that add dependencies.",
    },
    ConfigKey {
        key: "constraints.allowed_dependencies",
        default: "[]",
        description: "Dependencies a fix may add even when `no_new_deps` is set.",
    },
    ConfigKey {
        key: "constraints.paradigm",
        default: "unset",
        description: "Preferred style for fixes: `oop` or `functional`; unset means follow the surrounding code.",
    },
    ConfigKey {
        key: "fix.confidence_threshold",
        default: "0.7",
        description: "Patches whose confidence is below this (0 to 1) are refused before commit.",
    },
    ConfigKey {
        key: "fix.max_attempts",
        default: "3",
        description: "Fix attempts on one check (1 to 10) before ci-medic stops and says so.",
    },
    ConfigKey {
        key: "verify",
        default: "none",
        description: "`none`: push the guarded patch; `docker`: build it in the sandbox first and push only when the targeted errors are gone.",
    },
    ConfigKey {
        key: "executor.image",
        default: "unset",
        description: "Image for `verify: docker`; detected from the project type when unset.",
    },
    ConfigKey {
        key: "executor.command",
        default: "unset",
        description: "Build command for `verify: docker`; detected from the project type when unset.",
    },
    ConfigKey {
        key: "executor.timeout_seconds",
        default: "300",
        description: "Sandbox time limit in seconds (1 to 3600).",
    },
    ConfigKey {
        key: "triage.auto_rerun",
        default: "false",
        description: "Re-run the failed GitHub Actions jobs of an `infrastructure` or `flaky` failure on its own, without waiting for a maintainer's `/rerun`. Never for `code` or `configuration` failures.",
    },
    ConfigKey {
        key: "triage.max_reruns",
        default: "1",
        description: "Automatic re-runs per commit and check (0 to 5); a maintainer's `/rerun` is not counted.",
    },
    ConfigKey {
        key: "fixers.images.python",
        default: "ci-medic-fixer/python",
        description: "Image the tool tier runs black, isort and ruff in (built by `deploy/fixer-images.sh`: black 23.1, isort 5.6, ruff 0.6.9).",
    },
    ConfigKey {
        key: "fixers.images.go",
        default: "ci-medic-fixer/go",
        description: "Image the tool tier runs gofmt and goimports in (Go 1.19, golang.org/x/tools 0.5.0).",
    },
    ConfigKey {
        key: "fixers.images.rust",
        default: "ci-medic-fixer/rust",
        description: "Image the tool tier runs rustfmt in (rustfmt 1.5.1 of Rust 1.63).",
    },
    ConfigKey {
        key: "fixers.images.clang",
        default: "ci-medic-fixer/clang",
        description: "Image the tool tier runs clang-format in (clang-format 14).",
    },
    ConfigKey {
        key: "fixers.images.node",
        default: "ci-medic-fixer/node",
        description: "Image the tool tier runs prettier and ESLint in (prettier 3.3.3, ESLint 9.13.0). An override must carry the same tools on its `PATH` and a `ci-medic.tools` label listing their versions.",
    },
];

/// The README's table of keys, generated from [`KEYS`].
pub fn markdown_table() -> String {
    let mut out = String::from("| Key | Default | Description |\n|---|---|---|\n");
    for key in KEYS {
        let default = if key.default == "unset" {
            "*unset*".to_string()
        } else {
            format!("`{}`", key.default)
        };
        out.push_str(&format!(
            "| `{}` | {default} | {} |\n",
            key.key,
            key.description.replace('|', "\\|")
        ));
    }
    out
}

/// A complete `.github/ci-medic.yml` with every key at its default, commented. Parses to
/// [`RepoConfig::default`] (tested), so it can be copied as a starting point.
pub const EXAMPLE_YAML: &str = r#"# .github/ci-medic.yml — every key, at its default.
# Unknown keys are errors: ci-medic reports them on the pull request and uses the defaults.

# Set to false to silence ci-medic on this repository.
enabled: true

# Which failing checks to analyse, by check-run name. Globs: *, ?, [abc].
checks:
  include: []          # empty: every check
  exclude: []          # e.g. ["deploy*", "codecov/*"]; exclude wins

# Who may /approve and /reject a proposal.
approvers:
  min_permission: write   # triage, write, maintain or admin
  users: []               # when set, only these logins (still needing min_permission)
  allow_author: true      # the pull request's author may approve on their own PR

# Limits every fix must respect.
constraints:
  protected_paths:        # never edited; files, directories ending in /, or globs
    - .github/workflows/
    - .github/ci-medic.yml
  do_not_touch: []        # more paths to leave alone
  max_files_changed: 3    # at least 1
  no_new_deps: true       # refuse fixes that add dependencies…
  allowed_dependencies: [] # …except these
  paradigm: null          # oop or functional; null follows the surrounding code

# How the fix agent behaves.
fix:
  confidence_threshold: 0.7 # 0 to 1; patches below it are refused
  max_attempts: 3           # 1 to 10 attempts per check

# none: push the guarded patch; docker: build it in the sandbox first.
verify: none

# The sandbox used with verify: docker.
executor:
  image: null             # detected from the project when null
  command: null           # detected from the project when null
  timeout_seconds: 300    # 1 to 3600

# Failures that are not the code's fault (infrastructure, flaky).
triage:
  auto_rerun: false       # re-run failed Actions jobs without waiting for /rerun
  max_reruns: 1           # 0 to 5 automatic re-runs per commit and check

# The images the fix agent's tool tier runs the project's own formatters and linters in, per
# ecosystem. Each must carry the tools on its PATH and a `ci-medic.tools` label listing their
# versions; the defaults are built by deploy/fixer-images.sh.
fixers:
  images:
    python: ci-medic-fixer/python   # black, isort, ruff
    go: ci-medic-fixer/go           # gofmt, goimports
    rust: ci-medic-fixer/rust       # rustfmt
    clang: ci-medic-fixer/clang     # clang-format
    node: ci-medic-fixer/node       # prettier, eslint
"#;
