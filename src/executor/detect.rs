//! Project type detection and the build plan: which image, which command, which time limit.
//!
//! Detection only looks at which marker files exist at the workspace root (`Cargo.toml`,
//! `package.json`…); it never runs anything and never reads file contents beyond that. The plan
//! is resolved with a fixed precedence: explicit override (CLI or caller) > the repository's
//! `.github/ci-medic.yml` `executor:` section > the detected default.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use ci_medic_core::repo_config::ExecutorConfig;
use serde::{Deserialize, Serialize};

use super::ExecutorError;

/// The kinds of project the executor knows a default build for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProjectType {
    Rust,
    Node,
    Python,
    Go,
    Maven,
    Gradle,
}

impl ProjectType {
    pub const ALL: [ProjectType; 6] = [
        ProjectType::Rust,
        ProjectType::Node,
        ProjectType::Python,
        ProjectType::Go,
        ProjectType::Maven,
        ProjectType::Gradle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProjectType::Rust => "rust",
            ProjectType::Node => "node",
            ProjectType::Python => "python",
            ProjectType::Go => "go",
            ProjectType::Maven => "maven",
            ProjectType::Gradle => "gradle",
        }
    }

    /// The image used when neither the caller nor the repository names one.
    ///
    /// These are Docker Hub's official images; the executor pulls one only when it is absent
    /// locally, and a failed pull is reported naming the image.
    pub fn default_image(self) -> &'static str {
        match self {
            ProjectType::Rust => "rust:1-slim",
            ProjectType::Node => "node:20-slim",
            ProjectType::Python => "python:3.11-slim",
            ProjectType::Go => "golang:1",
            ProjectType::Maven => "maven:3-eclipse-temurin-17",
            ProjectType::Gradle => "gradle:8-jdk17",
        }
    }

    /// The build command used when neither the caller nor the repository names one.
    ///
    /// The sandbox has no network by default, so these only succeed for projects whose
    /// dependencies are vendored or absent; anything else needs `executor.command` or the
    /// network opt-in. They are `sh -c` scripts run from the workspace root.
    pub fn default_command(self, workspace: &Path) -> String {
        match self {
            ProjectType::Rust => "cargo test --workspace --all-targets".to_owned(),
            ProjectType::Node => {
                let install = if workspace.join("package-lock.json").is_file() {
                    "npm ci"
                } else {
                    "npm install"
                };
                format!("{install} && npm test")
            }
            ProjectType::Python => concat!(
                "python3 -m compileall -q . && ",
                "if python3 -c 'import pytest' 2>/dev/null; ",
                "then python3 -m pytest -q; else python3 -m unittest discover -v; fi"
            )
            .to_owned(),
            ProjectType::Go => "go vet ./... && go test ./...".to_owned(),
            ProjectType::Maven => "mvn -B verify".to_owned(),
            ProjectType::Gradle => {
                if workspace.join("gradlew").is_file() {
                    "sh ./gradlew build --no-daemon".to_owned()
                } else {
                    "gradle build --no-daemon".to_owned()
                }
            }
        }
    }

    /// Tools whose versions are worth recording for this kind of project, as
    /// `(name, command printing the version)`.
    pub fn tool_probes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            ProjectType::Rust => &[("cargo", "cargo --version"), ("rustc", "rustc --version")],
            ProjectType::Node => &[("node", "node --version"), ("npm", "npm --version")],
            ProjectType::Python => &[
                ("python3", "python3 --version"),
                ("pip", "python3 -m pip --version"),
            ],
            ProjectType::Go => &[("go", "go version")],
            ProjectType::Maven => &[("java", "java -version"), ("mvn", "mvn --version")],
            ProjectType::Gradle => &[("java", "java -version"), ("gradle", "gradle --version")],
        }
    }
}

impl fmt::Display for ProjectType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProjectType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProjectType::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown project type `{s}`"))
    }
}

/// Probes run whatever the project type: the shell the build runs in.
pub const COMMON_TOOL_PROBES: &[(&str, &str)] = &[("busybox", "busybox 2>&1 | head -n 1")];

/// Marker files at the workspace root, in priority order: the first present wins. A Rust crate
/// with a `package.json` for its docs is still a Rust project, hence Cargo first.
const MARKERS: &[(&str, ProjectType)] = &[
    ("Cargo.toml", ProjectType::Rust),
    ("go.mod", ProjectType::Go),
    ("pom.xml", ProjectType::Maven),
    ("build.gradle", ProjectType::Gradle),
    ("build.gradle.kts", ProjectType::Gradle),
    ("package.json", ProjectType::Node),
    ("pyproject.toml", ProjectType::Python),
    ("setup.cfg", ProjectType::Python),
    ("setup.py", ProjectType::Python),
    ("requirements.txt", ProjectType::Python),
];

/// Detects the project type from marker files at the root of `workspace`.
pub fn detect_project_type(workspace: &Path) -> Option<ProjectType> {
    MARKERS
        .iter()
        .find(|(file, _)| workspace.join(file).is_file())
        .map(|&(_, t)| t)
}

/// Explicit choices that beat both the repository's configuration and detection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOverrides {
    pub project_type: Option<ProjectType>,
    pub image: Option<String>,
    pub command: Option<String>,
    pub timeout_seconds: Option<u64>,
}

/// A fully resolved build: everything the executor needs besides the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildPlan {
    pub project_type: Option<ProjectType>,
    pub image: String,
    pub command: String,
    pub timeout_seconds: u64,
}

/// Resolves image, command and timeout: `overrides` > `config` (the repository's
/// `executor:` section) > defaults of the detected project type.
///
/// Fails when the workspace's type cannot be detected and nothing names an image or a command,
/// rather than guessing.
pub fn resolve_plan(
    workspace: &Path,
    config: &ExecutorConfig,
    overrides: &PlanOverrides,
) -> Result<BuildPlan, ExecutorError> {
    let project_type = overrides
        .project_type
        .or_else(|| detect_project_type(workspace));
    let image = overrides
        .image
        .clone()
        .or_else(|| config.image.clone())
        .or_else(|| project_type.map(|t| t.default_image().to_owned()))
        .ok_or_else(|| ExecutorError::Unresolved {
            what: "image",
            workspace: workspace.to_path_buf(),
        })?;
    let command = overrides
        .command
        .clone()
        .or_else(|| config.command.clone())
        .or_else(|| project_type.map(|t| t.default_command(workspace)))
        .ok_or_else(|| ExecutorError::Unresolved {
            what: "build command",
            workspace: workspace.to_path_buf(),
        })?;
    let timeout_seconds = overrides.timeout_seconds.unwrap_or(config.timeout_seconds);
    if timeout_seconds == 0 {
        return Err(ExecutorError::InvalidRequest(
            "timeout_seconds must be at least 1".to_owned(),
        ));
    }
    Ok(BuildPlan {
        project_type,
        image,
        command,
        timeout_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        dir
    }

    #[test]
    fn detects_each_marker() {
        let cases = [
            ("Cargo.toml", ProjectType::Rust),
            ("package.json", ProjectType::Node),
            ("pyproject.toml", ProjectType::Python),
            ("setup.cfg", ProjectType::Python),
            ("requirements.txt", ProjectType::Python),
            ("go.mod", ProjectType::Go),
            ("pom.xml", ProjectType::Maven),
            ("build.gradle", ProjectType::Gradle),
            ("build.gradle.kts", ProjectType::Gradle),
        ];
        for (file, want) in cases {
            assert_eq!(
                detect_project_type(ws(&[file]).path()),
                Some(want),
                "{file}"
            );
        }
    }

    #[test]
    fn nothing_detected_in_an_unmarked_tree() {
        assert_eq!(detect_project_type(ws(&["README.md"]).path()), None);
    }

    #[test]
    fn a_marker_directory_is_not_a_marker_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("Cargo.toml")).unwrap();
        assert_eq!(detect_project_type(dir.path()), None);
    }

    #[test]
    fn cargo_beats_package_json() {
        assert_eq!(
            detect_project_type(ws(&["package.json", "Cargo.toml"]).path()),
            Some(ProjectType::Rust)
        );
    }

    #[test]
    fn node_command_depends_on_the_lockfile() {
        assert_eq!(
            ProjectType::Node.default_command(ws(&["package.json"]).path()),
            "npm install && npm test"
        );
        assert_eq!(
            ProjectType::Node.default_command(ws(&["package.json", "package-lock.json"]).path()),
            "npm ci && npm test"
        );
    }

    #[test]
    fn precedence_is_override_then_config_then_detection() {
        let dir = ws(&["Cargo.toml"]);
        let none = PlanOverrides::default();
        let default_cfg = ExecutorConfig::default();
        let plan = resolve_plan(dir.path(), &default_cfg, &none).unwrap();
        assert_eq!(plan.project_type, Some(ProjectType::Rust));
        assert_eq!(plan.image, "rust:1-slim");
        assert_eq!(plan.command, "cargo test --workspace --all-targets");
        assert_eq!(plan.timeout_seconds, 300);

        let cfg = ExecutorConfig {
            image: Some("repo/img".into()),
            command: Some("make".into()),
            timeout_seconds: 60,
        };
        let plan = resolve_plan(dir.path(), &cfg, &none).unwrap();
        assert_eq!(
            (
                plan.image.as_str(),
                plan.command.as_str(),
                plan.timeout_seconds
            ),
            ("repo/img", "make", 60)
        );

        let over = PlanOverrides {
            project_type: Some(ProjectType::Go),
            image: Some("cli/img".into()),
            command: None,
            timeout_seconds: Some(5),
        };
        let plan = resolve_plan(dir.path(), &cfg, &over).unwrap();
        assert_eq!(plan.project_type, Some(ProjectType::Go));
        assert_eq!(
            (
                plan.image.as_str(),
                plan.command.as_str(),
                plan.timeout_seconds
            ),
            ("cli/img", "make", 5)
        );
    }

    #[test]
    fn undetectable_without_image_is_an_error_naming_what_is_missing() {
        let dir = ws(&[]);
        let err = resolve_plan(
            dir.path(),
            &ExecutorConfig::default(),
            &PlanOverrides {
                command: Some("true".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("image"), "{err}");
        let ok = resolve_plan(
            dir.path(),
            &ExecutorConfig::default(),
            &PlanOverrides {
                command: Some("true".into()),
                image: Some("x".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(ok.project_type, None);
    }

    #[test]
    fn zero_timeout_is_refused() {
        let dir = ws(&["go.mod"]);
        let over = PlanOverrides {
            timeout_seconds: Some(0),
            ..Default::default()
        };
        assert!(resolve_plan(dir.path(), &ExecutorConfig::default(), &over).is_err());
    }

    #[test]
    fn project_type_round_trips_through_its_name() {
        for t in ProjectType::ALL {
            assert_eq!(t.as_str().parse::<ProjectType>(), Ok(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
    }
}
