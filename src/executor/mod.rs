//! The Executor of `execution-contract.md`: reproduce a build in a Docker sandbox and observe it.
//!
//! Given a workspace on the host and a resolved build command, it runs the command in a
//! throw-away container and reports the exit code, the combined log (stdout and stderr in the
//! order they were written), an excerpt for display, the wall-clock time and the environment
//! (image and id, engine version, tool versions).
//!
//! Boundary, from the contract: the executor **only observes**. It never edits the workspace
//! (the tree is copied *into* the container, never mounted), never fixes, never commits, and
//! never interprets the log: that is the parser's job.
//!
//! Pieces:
//! - [`detect`]: project type from marker files, default image and command, precedence with
//!   `.github/ci-medic.yml`'s `executor:` section.
//! - [`docker`]: the [`DockerExecutor`] over bollard: sandboxing, limits, time-out, cleanup in
//!   every case, reaping containers a dead ci-medic left behind.
//! - [`output`]: the bounded log capture and the excerpt.
//! - [`workspace`]: safe tarball extraction and patch application on the host.
//! - [`verify`]: whether a verified build still shows the errors a patch targeted.
//! - [`cli`]: `ci-medic exec`.
//! - `verify_job`: the pipeline's sandbox job for `verify: docker`, over the shared context:
//!   builds the prepared fix commit without the pull request's lock, and hands the verdict to
//!   the proposal machine.

pub mod cli;
pub mod detect;
pub mod docker;
pub mod output;
pub mod verify;
pub(crate) mod verify_job;
pub mod workspace;

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use cli::{ExecArgs, run_exec_command};
pub use detect::{BuildPlan, PlanOverrides, ProjectType, detect_project_type, resolve_plan};
pub use docker::{DockerExecutor, SandboxSettings};
pub use verify::{errors_introduced, targeted_errors_remaining};
pub use workspace::{WorkspaceError, apply_files, extract_tarball_safely};

/// Whether the sandbox may reach any network. Off unless asked for: a build verifying a patch
/// must not be able to exfiltrate the repository or fetch code nobody reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    /// `network_mode: none`: only a loopback interface.
    #[default]
    Disabled,
    /// Docker's default bridge network (opt-in, for builds that must fetch dependencies).
    Enabled,
}

/// The contract's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionRequest {
    /// The workspace on the host. It is copied into the container, never modified.
    pub workspace_path: PathBuf,
    /// Detected or overridden project type; recorded in the metadata and used to pick which
    /// tool versions to record.
    pub project_type: Option<ProjectType>,
    /// Shell command(s), run with `/bin/sh -c` from the workspace root.
    pub resolved_build_command: String,
    /// Wall-clock limit before the container is killed.
    pub timeout_seconds: u64,
    /// The image to run the build in.
    pub image: String,
    #[serde(default)]
    pub network: NetworkAccess,
}

/// Default of the contract's `timeout_seconds`.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 300;

impl ExecutionRequest {
    /// A request from a resolved [`BuildPlan`].
    pub fn from_plan(workspace_path: PathBuf, plan: BuildPlan, network: NetworkAccess) -> Self {
        ExecutionRequest {
            workspace_path,
            project_type: plan.project_type,
            resolved_build_command: plan.command,
            timeout_seconds: plan.timeout_seconds,
            image: plan.image,
            network,
        }
    }
}

/// What the sandbox was, recorded beside every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentMetadata {
    /// The image as requested (`python:3.11-slim`).
    pub image: String,
    /// Its content id (`sha256:…`), so a result can be tied to exact bits.
    pub image_id: String,
    /// The engine's version (`20.10.24+dfsg1`) and API version.
    pub docker_version: String,
    pub docker_api_version: String,
    pub project_type: Option<ProjectType>,
    /// Tool name → first line of its version output, for the tools found in the image.
    pub tools: BTreeMap<String, String>,
    pub network: NetworkAccess,
    /// The user the build ran as (`uid:gid`).
    pub user: String,
    pub memory_limit_bytes: i64,
    pub cpu_limit: f64,
    pub pids_limit: i64,
}

/// The contract's output, plus what the contract's fields cannot say on their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionResult {
    /// The build's exit code as the engine reports it (0 = success). After a time-out kill it is
    /// the killed process's status (137 for SIGKILL); check `timed_out`.
    pub exit_code: i64,
    /// stdout and stderr combined in the order written; start and end kept when over the cap.
    pub build_log: String,
    /// The first and last lines of `build_log`, for display.
    pub log_excerpt: String,
    /// Wall clock from container start to exit (includes the tool-version probes, which take
    /// milliseconds for most images).
    pub execution_time_seconds: f64,
    pub environment_metadata: EnvironmentMetadata,
    /// The build hit `timeout_seconds` and was killed.
    pub timed_out: bool,
    /// `build_log` lost its middle to the output cap (a marker line says how much).
    pub truncated: bool,
    /// The kernel killed the build for exceeding the memory limit.
    pub oom_killed: bool,
    /// Everything the build printed, kept or not.
    pub log_total_bytes: u64,
}

impl ExecutionResult {
    /// The build ran to completion and succeeded.
    pub fn succeeded(&self) -> bool {
        self.exit_code == 0 && !self.timed_out && !self.oom_killed
    }
}

#[derive(Debug, Error)]
pub enum ExecutorError {
    #[error("no Docker engine reachable ({0}); start dockerd or set DOCKER_HOST")]
    EngineUnavailable(String),
    #[error(
        "image `{image}` is not available locally and could not be pulled: {reason}; \
         build or load it, or set `executor.image` in .github/ci-medic.yml"
    )]
    ImageUnavailable { image: String, reason: String },
    #[error(
        "cannot choose a {what} for `{}`: no known project marker (Cargo.toml, package.json, \
         pyproject.toml, go.mod, pom.xml, build.gradle…); set it explicitly",
        workspace.display()
    )]
    Unresolved {
        what: &'static str,
        workspace: PathBuf,
    },
    #[error("invalid execution request: {0}")]
    InvalidRequest(String),
    #[error("Docker engine error while trying to {action}: {source}")]
    Docker {
        action: &'static str,
        #[source]
        source: bollard::errors::Error,
    },
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

/// Runs builds. The trait lets the fix loop be tested with a recorded executor and lets other
/// sandboxes (a remote runner) be plugged in.
#[async_trait]
pub trait Executor: Send + Sync {
    /// Runs the request's command against a copy of its workspace and reports what happened.
    /// A build that fails or times out is an `Ok` result; `Err` means the build could not be
    /// run at all (no engine, no image, unreadable workspace).
    async fn execute(&self, req: ExecutionRequest) -> Result<ExecutionResult, ExecutorError>;
}
