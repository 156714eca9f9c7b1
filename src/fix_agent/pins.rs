//! The install step of a version a project pins: when the fixer image has another version of
//! a PyPI or npm tool (black, isort, ruff, prettier, eslint) than the project pins exactly,
//! that version is installed once into a container of the image, with a network, and the
//! container is committed as a cached image tagged by tool and version
//! (`ci-medic-fixer/python:pin-black-24.1.1`). The fix then runs from that image with no
//! network, as every tool run does.
//!
//! The cache is bounded: at most [`MAX_PINNED_IMAGES`] such images are kept on the engine; when
//! a new one is made, the oldest made beyond that are removed (first made, first removed: the
//! engine does not say when an image was last used). An image made from an older build of the
//! default image is rebuilt.
//!
//! What it must never do: put anything of the repository into the install container (it holds
//! only the image and the install command, built from an exact version), give the tool run
//! itself a network, or leave its container behind.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig, HostConfigLogConfig};
use bollard::query_parameters::{
    CommitContainerOptions, ListImagesOptionsBuilder, LogsOptionsBuilder, RemoveImageOptionsBuilder,
};
use futures::StreamExt;

use ci_medic_core::tool_tier::{FixTool, image_repository};

use super::tool_tier::TOOLS_LABEL;
use crate::executor::docker::{ContainerGuard, kill, until_stopped};

/// How many pinned-version images the engine keeps.
pub const MAX_PINNED_IMAGES: usize = 8;
/// The label naming the default image (by id) a pinned-version image was made from.
pub const PIN_BASE_LABEL: &str = "ci-medic.pin-base";
/// Wall-clock limit of one install: a download and an unpack.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);
/// The install container's limits: pip and npm need more than a formatter, still bounded.
const INSTALL_MEMORY: i64 = 1 << 30;
const INSTALL_PIDS: i64 = 512;

/// The image holding `version` of `tool`, made from `base` (whose id is `base_id` and whose
/// `ci-medic.tools` label is `base_tools`) when it is not cached yet. `Err` says why it could not
/// be installed, for the fix reason.
pub async fn pinned_image(
    docker: &Docker,
    base: &str,
    base_id: &str,
    base_tools: &str,
    tool: &FixTool,
    version: &str,
) -> Result<String, String> {
    let (Some(command), Some(tag)) = (tool.install_command(version), tool.pin_tag(version)) else {
        return Err(format!(
            "`{version}` is not an exact version of a PyPI or npm tool"
        ));
    };
    let repo = image_repository(base).to_string();
    let name = format!("{repo}:{tag}");
    if let Ok(info) = docker.inspect_image(&name).await {
        let made_from = info
            .config
            .and_then(|c| c.labels)
            .and_then(|l| l.get(PIN_BASE_LABEL).cloned());
        if made_from.as_deref() == Some(base_id) {
            return Ok(name);
        }
    }
    tracing::info!(image = %name, base, "installing a pinned tool version into a cached image");
    let id = create(docker, base, &command).await?;
    let container = ContainerGuard::new(docker, &id);
    let outcome = install(docker, &id).await;
    if let Err(why) = outcome {
        discard(container).await;
        return Err(why);
    }
    let mut tools: BTreeMap<String, String> =
        ci_medic_core::tool_tier::parse_tools_label(base_tools);
    tools.insert(tool.name().to_string(), version.to_string());
    let label = tools
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let committed = docker
        .commit_container(
            CommitContainerOptions {
                container: Some(id.clone()),
                repo: Some(repo),
                tag: Some(tag),
                comment: Some(format!("{} {version}, installed by ci-medic", tool.name())),
                pause: false,
                ..Default::default()
            },
            ContainerConfig {
                cmd: Some(vec!["/bin/sh".into()]),
                labels: Some(HashMap::from([
                    (TOOLS_LABEL.to_string(), label),
                    (PIN_BASE_LABEL.to_string(), base_id.to_string()),
                ])),
                ..Default::default()
            },
        )
        .await;
    discard(container).await;
    let committed = committed.map_err(|e| format!("committing the install failed: {e}"))?;
    evict(docker, &committed.id).await;
    Ok(name)
}

/// The install container: the default image, root (the tool's files are root's), a network,
/// `/tmp` on a tmpfs (pip's and npm's caches are not kept), no capabilities, bounded.
async fn create(docker: &Docker, base: &str, command: &str) -> Result<String, String> {
    let host_config = HostConfig {
        network_mode: Some("bridge".into()),
        memory: Some(INSTALL_MEMORY),
        memory_swap: Some(INSTALL_MEMORY),
        nano_cpus: Some(1_000_000_000),
        pids_limit: Some(INSTALL_PIDS),
        cap_drop: Some(vec!["ALL".into()]),
        security_opt: Some(vec!["no-new-privileges".into()]),
        tmpfs: Some(HashMap::from([(
            "/tmp".into(),
            "rw,nosuid,nodev,size=512m,mode=1777".into(),
        )])),
        log_config: Some(HostConfigLogConfig {
            typ: Some("json-file".into()),
            config: Some(HashMap::from([
                ("max-size".into(), "1m".into()),
                ("max-file".into(), "1".into()),
            ])),
        }),
        privileged: Some(false),
        ..Default::default()
    };
    let body = ContainerCreateBody {
        image: Some(base.to_string()),
        entrypoint: Some(vec!["/bin/sh".into(), "-c".into()]),
        cmd: Some(vec![command.to_string()]),
        env: Some(vec!["HOME=/tmp".into()]),
        user: Some("0:0".into()),
        working_dir: Some("/".into()),
        tty: Some(false),
        host_config: Some(host_config),
        ..Default::default()
    };
    docker
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            body,
        )
        .await
        .map(|c| c.id)
        .map_err(|e| format!("the install container could not be made: {e}"))
}

/// Runs the install container to its end; `Err` with the end of its output when it fails.
async fn install(docker: &Docker, id: &str) -> Result<(), String> {
    docker
        .start_container(id, None)
        .await
        .map_err(|e| format!("the install container could not start: {e}"))?;
    let waited = tokio::time::timeout(INSTALL_TIMEOUT, until_stopped(docker, id)).await;
    if waited.is_err() {
        kill(docker, id).await;
        return Err(format!(
            "the install step timed out after {} s",
            INSTALL_TIMEOUT.as_secs()
        ));
    }
    let code = docker
        .inspect_container(id, None)
        .await
        .ok()
        .and_then(|c| c.state)
        .and_then(|s| s.exit_code)
        .unwrap_or(-1);
    if code == 0 {
        return Ok(());
    }
    let mut logs = docker.logs(
        id,
        Some(
            LogsOptionsBuilder::default()
                .stdout(true)
                .stderr(true)
                .tail("5")
                .build(),
        ),
    );
    let mut out = Vec::new();
    while let Some(Ok(frame)) = logs.next().await {
        out.extend_from_slice(frame.as_ref());
    }
    let text = String::from_utf8_lossy(&out);
    let excerpt: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(300)
        .collect();
    Err(format!("the install step exited {code}: {excerpt}"))
}

/// Keeps the newest [`MAX_PINNED_IMAGES`] pinned-version images; never removes `keep` (just
/// made) nor an image a container still uses (the engine refuses, and it stays until next time).
async fn evict(docker: &Docker, keep: &str) {
    let listed = docker
        .list_images(Some(
            ListImagesOptionsBuilder::default()
                .filters(&HashMap::from([("label", vec![PIN_BASE_LABEL])]))
                .build(),
        ))
        .await;
    let Ok(mut images) = listed else {
        return;
    };
    images.sort_by_key(|i| std::cmp::Reverse(i.created));
    for old in images.iter().skip(MAX_PINNED_IMAGES) {
        if old.id == keep {
            continue;
        }
        // By tag, so an image also tagged otherwise keeps its other names.
        for tag in &old.repo_tags {
            let removed = docker
                .remove_image(
                    tag,
                    Some(RemoveImageOptionsBuilder::default().build()),
                    None,
                )
                .await;
            match removed {
                Ok(_) => tracing::info!(image = %tag, "evicted a pinned-version image"),
                Err(e) => tracing::info!(image = %tag, error = %e, "pinned-version image kept"),
            }
        }
    }
}

/// Removes the install container; one that cannot be removed is logged, not a failed fix.
async fn discard(container: ContainerGuard) {
    if let Err(e) = container.remove().await {
        tracing::warn!(error = %e, "could not remove the install container");
    }
}
