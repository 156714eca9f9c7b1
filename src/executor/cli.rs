//! `ci-medic exec`: run the executor by hand on a workspace and print the contract's output.
//!
//! Resolution is the same as in the fix loop: flags > the workspace's `.github/ci-medic.yml`
//! `executor:` section > the detected project type's defaults. It never edits the workspace.

use std::path::PathBuf;

use anyhow::Context;
use ci_medic_core::repo_config::{CONFIG_PATH, RepoConfig};

use super::detect::{PlanOverrides, ProjectType, resolve_plan};
use super::docker::{DockerExecutor, SandboxSettings};
use super::{ExecutionRequest, ExecutionResult, Executor, NetworkAccess};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// The contract's output as one JSON object.
    #[default]
    Json,
    /// The build log, then a short summary.
    Text,
}

/// Arguments of `ci-medic exec`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecArgs {
    /// The workspace to build (copied into the sandbox, never modified).
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// Build command (`sh -c`), instead of the configured or detected one.
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// Image to build in, instead of the configured or detected one.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Seconds before the build is killed (default: the repository's setting, else 300).
    #[arg(long, value_name = "S")]
    pub timeout: Option<u64>,
    /// Project type, instead of detecting it from marker files.
    #[arg(long, value_enum)]
    pub project_type: Option<ProjectType>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Give the sandbox Docker's bridge network (off by default).
    #[arg(long)]
    pub network: bool,
    /// Most bytes of build output kept (start and end halves).
    #[arg(long, value_name = "BYTES")]
    pub max_log_bytes: Option<usize>,
}

/// Runs `ci-medic exec`. Returns the process exit status: 0 when the build succeeded, 124 when
/// it timed out, otherwise the build's own status (1 when it does not fit 1–255).
pub async fn run_exec_command(args: ExecArgs) -> anyhow::Result<i32> {
    let workspace = std::fs::canonicalize(&args.workspace)
        .with_context(|| format!("workspace `{}`", args.workspace.display()))?;
    let repo_config = load_repo_config(&workspace)?;
    let plan = resolve_plan(
        &workspace,
        &repo_config.executor,
        &PlanOverrides {
            project_type: args.project_type,
            image: args.image.clone(),
            command: args.command.clone(),
            timeout_seconds: args.timeout,
        },
    )?;
    let mut settings = SandboxSettings::default();
    if let Some(cap) = args.max_log_bytes {
        settings.max_log_bytes = cap;
    }
    let executor = DockerExecutor::connect(settings).await?;
    let reaped = executor.reap_stale().await?;
    if !reaped.is_empty() {
        eprintln!(
            "ci-medic: removed {} container(s) left by an earlier run",
            reaped.len()
        );
    }
    let network = if args.network {
        NetworkAccess::Enabled
    } else {
        NetworkAccess::Disabled
    };
    let result = executor
        .execute(ExecutionRequest::from_plan(workspace, plan, network))
        .await?;
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&result)?),
        OutputFormat::Text => print!("{}", render_text(&result)),
    }
    Ok(exit_status(&result))
}

/// The workspace's `.github/ci-medic.yml`, or the defaults when it has none. A file that does
/// not parse is an error here (by hand, the user wants to know), unlike in the service.
fn load_repo_config(workspace: &std::path::Path) -> anyhow::Result<RepoConfig> {
    let path = workspace.join(CONFIG_PATH);
    match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Ok(RepoConfig::default()),
        Ok(text) => {
            RepoConfig::parse(&text).map_err(|e| anyhow::anyhow!("invalid {}: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RepoConfig::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The process status `ci-medic exec` exits with for a result.
pub fn exit_status(result: &ExecutionResult) -> i32 {
    if result.succeeded() {
        0
    } else if result.timed_out {
        124
    } else {
        i32::try_from(result.exit_code)
            .ok()
            .filter(|c| (1..=255).contains(c))
            .unwrap_or(1)
    }
}

/// The log followed by a summary, for `--format text`.
pub fn render_text(r: &ExecutionResult) -> String {
    let m = &r.environment_metadata;
    let mut out = r.build_log.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let status = if r.timed_out {
        "timed out (killed)".to_owned()
    } else if r.oom_killed {
        "killed: out of memory".to_owned()
    } else {
        format!("exit code {}", r.exit_code)
    };
    out.push_str(&format!(
        "---\nci-medic exec: {status} after {:.2}s\nimage: {} ({})\nengine: Docker {} (API {})\n",
        r.execution_time_seconds, m.image, m.image_id, m.docker_version, m.docker_api_version
    ));
    if !m.tools.is_empty() {
        let tools: Vec<String> = m.tools.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        out.push_str(&format!("tools: {}\n", tools.join("; ")));
    }
    if r.truncated {
        out.push_str(&format!(
            "log truncated: {} bytes printed, start and end kept\n",
            r.log_total_bytes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::EnvironmentMetadata;

    fn result(exit_code: i64, timed_out: bool) -> ExecutionResult {
        ExecutionResult {
            exit_code,
            build_log: "hello".into(),
            log_excerpt: "hello\n".into(),
            execution_time_seconds: 1.5,
            environment_metadata: EnvironmentMetadata {
                image: "img".into(),
                image_id: "sha256:x".into(),
                docker_version: "20.10".into(),
                docker_api_version: "1.41".into(),
                project_type: None,
                tools: [("busybox".to_owned(), "BusyBox v1.35.0".to_owned())].into(),
                network: NetworkAccess::Disabled,
                user: "65534:65534".into(),
                memory_limit_bytes: 1,
                cpu_limit: 1.0,
                pids_limit: 1,
            },
            timed_out,
            truncated: false,
            oom_killed: false,
            log_total_bytes: 5,
        }
    }

    #[test]
    fn exit_statuses() {
        assert_eq!(exit_status(&result(0, false)), 0);
        assert_eq!(exit_status(&result(2, false)), 2);
        assert_eq!(exit_status(&result(137, true)), 124);
        assert_eq!(exit_status(&result(-1, false)), 1);
        assert_eq!(exit_status(&result(300, false)), 1);
    }

    #[test]
    fn text_has_log_then_summary() {
        let t = render_text(&result(2, false));
        assert!(
            t.starts_with("hello\n---\nci-medic exec: exit code 2 after 1.50s\n"),
            "{t}"
        );
        assert!(t.contains("tools: busybox: BusyBox v1.35.0"));
    }

    #[test]
    fn json_uses_the_contract_names() {
        let v = serde_json::to_value(result(0, false)).unwrap();
        for k in [
            "exit_code",
            "build_log",
            "log_excerpt",
            "execution_time_seconds",
            "environment_metadata",
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
    }

    #[test]
    fn repo_config_is_read_from_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_repo_config(dir.path()).unwrap(), RepoConfig::default());
        std::fs::create_dir_all(dir.path().join(".github")).unwrap();
        std::fs::write(
            dir.path().join(CONFIG_PATH),
            "executor:\n  image: local/img\n  timeout_seconds: 9\n",
        )
        .unwrap();
        let cfg = load_repo_config(dir.path()).unwrap();
        assert_eq!(cfg.executor.image.as_deref(), Some("local/img"));
        assert_eq!(cfg.executor.timeout_seconds, 9);
        std::fs::write(dir.path().join(CONFIG_PATH), "executor:\n  imagee: x\n").unwrap();
        assert!(load_repo_config(dir.path()).is_err());
    }
}
