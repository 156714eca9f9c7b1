//! The install step of a version a project pins: when the fixer image's version of a PyPI or
//! npm tool (black, isort, ruff, prettier, eslint) is not the one the project pins, nor in the
//! range it pins, the pinned version (or the newest in the range, as pip or npm resolve it) is
//! installed once into a container of the image, with a network; the version actually
//! installed is read back from the package's metadata, and the container is committed as a
//! cached image tagged by tool and that version (`ci-medic-fixer/python:pin-black-24.1.1`). A
//! range is installed once: a cached image whose version the range holds is used after that.
//! The fix then runs from that image with no network, as every tool run does.
//!
//! The cache is bounded: at most `FIXER_PINNED_IMAGES` ([`DEFAULT_PINNED_IMAGES`]) such images
//! are kept per fixer image repository; when a new one is made, the oldest made beyond that are
//! removed (first made, first removed: the engine does not say when an image was last used),
//! never the one just made, nor one a container still uses. An image made from an older build
//! of the default image is rebuilt.
//!
//! The same cache holds a crate's dependencies for `cargo clippy --fix`
//! ([`cargo_deps_image`]): `cargo fetch` runs once per set of manifests and lockfile, with a
//! network, on a copy of the tree stripped of cargo's configuration
//! ([`ci_medic_core::tool_tier::CARGO_FETCH_SCRIPT`]: it compiles and runs nothing of the
//! repository), and the container is committed with the downloaded crates
//! (`ci-medic-fixer/rust:pin-cargo-deps-<hash>`); clippy then runs from it offline.
//!
//! What it must never do: put anything of the repository into a tool's install container (it
//! holds only the image and the install command, built from what the range parser
//! understood), run anything of the repository in the fetch container, give the tool run itself
//! a network, or leave a container behind.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig, HostConfigLogConfig};
use bollard::query_parameters::{
    CommitContainerOptions, ListImagesOptionsBuilder, LogsOptionsBuilder, RemoveImageOptionsBuilder,
};
use futures::StreamExt;

use ci_medic_core::tool_tier::{
    CARGO_FETCH_SCRIPT, FixTool, Pin, cargo_deps_tag, image_repository, installed_version,
};

use super::tool_tier::TOOLS_LABEL;
use crate::executor::docker::{ContainerGuard, kill, until_stopped, upload_directory};

/// How many pinned-version images are kept per fixer image repository unless
/// `FIXER_PINNED_IMAGES` says otherwise.
pub const DEFAULT_PINNED_IMAGES: usize = 8;
/// The environment variable that bounds the cache.
pub const PINNED_IMAGES_ENV: &str = "FIXER_PINNED_IMAGES";
/// The label naming the default image (by id) a pinned-version image was made from.
pub const PIN_BASE_LABEL: &str = "ci-medic.pin-base";
/// Wall-clock limit of one install: a download and an unpack.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);
/// The install container's limits: pip and npm need more than a formatter, still bounded.
const INSTALL_MEMORY: i64 = 1 << 30;
const INSTALL_PIDS: i64 = 512;

/// `FIXER_PINNED_IMAGES` read from `value` (the environment's): how many pinned-version images
/// to keep per fixer image repository, 0 to 1000 (0 keeps only the one in use).
pub fn pinned_images_limit(value: Option<&str>) -> Result<usize, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_PINNED_IMAGES),
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 1000)
            .ok_or_else(|| format!("{PINNED_IMAGES_ENV}: `{v}` is not a number from 0 to 1000")),
    }
}

/// The image holding the version `pin` asks for of `tool`, that version, and whether it was
/// installed now (not found in the cache), made from `base`
/// (whose id is `base_id` and whose `ci-medic.tools` label is `base_tools`) when it is not
/// cached yet; at most `keep` such images stay in `base`'s repository. `Err` says why it could
/// not be installed, for the fix reason.
pub async fn pinned_image(
    docker: &Docker,
    base: &str,
    base_id: &str,
    base_tools: &str,
    tool: &FixTool,
    pin: &Pin,
    keep: usize,
) -> Result<(String, String, bool), String> {
    let range = pin.range().map_err(|e| e.to_string())?;
    let Some(command) = tool.install_command(pin) else {
        return Err(format!(
            "`{}` cannot be installed from PyPI or npm for {}",
            pin.spec,
            tool.name()
        ));
    };
    let repo = image_repository(base).to_string();
    if let Some(exact) = range.exact() {
        let name = tool
            .pin_tag(&exact)
            .map(|tag| format!("{repo}:{tag}"))
            .ok_or_else(|| format!("`{exact}` cannot name an image"))?;
        if let Ok(info) = docker.inspect_image(&name).await {
            let made_from = info
                .config
                .and_then(|c| c.labels)
                .and_then(|l| l.get(PIN_BASE_LABEL).cloned());
            if made_from.as_deref() == Some(base_id) {
                return Ok((name, exact, false));
            }
        }
    } else if let Some((name, version)) =
        tool.newest_cached(&pinned_tags(docker, base_id).await, &repo, &range)
    {
        return Ok((name, version, false));
    }
    tracing::info!(base, tool = tool.name(), pin = %pin.spec, "installing a pinned tool version into a cached image");
    let id = create(docker, base, &command).await?;
    let container = ContainerGuard::new(docker, &id);
    let output = match install(docker, &id).await {
        Ok(output) => output,
        Err(why) => {
            discard(container).await;
            return Err(why);
        }
    };
    let Some(version) = installed_version(&output) else {
        discard(container).await;
        return Err(format!(
            "the install step did not say which version it installed: {}",
            excerpt(&output)
        ));
    };
    if !range.contains(&version) {
        discard(container).await;
        return Err(format!(
            "it installed {version}, which `{}` does not hold",
            pin.spec
        ));
    }
    let Some(tag) = tool.pin_tag(&version) else {
        discard(container).await;
        return Err(format!("`{version}` cannot name an image"));
    };
    let mut tools: BTreeMap<String, String> =
        ci_medic_core::tool_tier::parse_tools_label(base_tools);
    tools.insert(tool.name().to_string(), version.clone());
    let comment = format!("{} {version}, installed by ci-medic", tool.name());
    let name = commit(
        docker,
        container,
        (&repo, &tag),
        &comment,
        &tools,
        base_id,
        keep,
    )
    .await?;
    Ok((name, version, true))
}

/// Commits the stopped container as `repo:tag`, labelled with `tools` and the image it was made
/// from, removes the container, and keeps the cache within `keep` images.
async fn commit(
    docker: &Docker,
    container: ContainerGuard,
    (repo, tag): (&str, &str),
    comment: &str,
    tools: &BTreeMap<String, String>,
    base_id: &str,
    keep: usize,
) -> Result<String, String> {
    let label = tools
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let committed = docker
        .commit_container(
            CommitContainerOptions {
                container: Some(container.id().to_string()),
                repo: Some(repo.to_string()),
                tag: Some(tag.to_string()),
                comment: Some(comment.to_string()),
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
    let committed = committed.map_err(|e| format!("committing the image failed: {e}"))?;
    evict(docker, repo, &committed.id, keep).await;
    Ok(format!("{repo}:{tag}"))
}

/// The image holding the dependencies of the crate at `root` (the tree at the proposal's
/// commit), made from the Rust image `base` (id `base_id`, `ci-medic.tools` label `base_tools`)
/// by [`CARGO_FETCH_SCRIPT`] when no image for `key` (the hash of the tree's manifests and
/// lockfile) is cached; at most `keep` cached images stay in `base`'s repository. `Err` is
/// cargo's own words, for the fix reason.
pub async fn cargo_deps_image(
    docker: &Docker,
    base: &str,
    base_id: &str,
    base_tools: &str,
    root: &std::path::Path,
    key: &str,
    keep: usize,
) -> Result<String, String> {
    let tag = cargo_deps_tag(key).ok_or_else(|| format!("`{key}` is not a hash"))?;
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
    tracing::info!(image = %name, base, "fetching a crate's dependencies into a cached image");
    let id = create(docker, base, CARGO_FETCH_SCRIPT).await?;
    let container = ContainerGuard::new(docker, &id);
    // Root's, as cargo in the container runs; the copy is deleted before the commit.
    if let Err(e) = upload_directory(docker, &id, root, "src", 0, 0, false).await {
        discard(container).await;
        return Err(format!("the tree could not be copied in: {e}"));
    }
    if let Err(why) = install(docker, &id).await {
        discard(container).await;
        return Err(why.replacen("the install step", "cargo fetch", 1));
    }
    let tools = ci_medic_core::tool_tier::parse_tools_label(base_tools);
    let comment = "a crate's dependencies, fetched by ci-medic";
    commit(
        docker,
        container,
        (&repo, &tag),
        comment,
        &tools,
        base_id,
        keep,
    )
    .await
}

/// Every tag of a pinned-version image made from the image `base_id`.
async fn pinned_tags(docker: &Docker, base_id: &str) -> Vec<String> {
    let filter = format!("{PIN_BASE_LABEL}={base_id}");
    docker
        .list_images(Some(
            ListImagesOptionsBuilder::default()
                .filters(&HashMap::from([("label", vec![filter.as_str()])]))
                .build(),
        ))
        .await
        .map(|images| images.into_iter().flat_map(|i| i.repo_tags).collect())
        .unwrap_or_default()
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

/// Runs the install container to its end: the end of its output, or `Err` with it when it
/// fails.
async fn install(docker: &Docker, id: &str) -> Result<String, String> {
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
    let mut logs = docker.logs(
        id,
        Some(
            LogsOptionsBuilder::default()
                .stdout(true)
                .stderr(true)
                .tail("10")
                .build(),
        ),
    );
    let mut out = Vec::new();
    while let Some(Ok(frame)) = logs.next().await {
        out.extend_from_slice(frame.as_ref());
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    if code == 0 {
        return Ok(text);
    }
    Err(format!(
        "the install step exited {code}: {}",
        excerpt(&text)
    ))
}

/// The output on one line, at most 300 characters.
fn excerpt(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(300)
        .collect()
}

/// Keeps the newest `limit` pinned-version images of the image repository `repo` (those tagged
/// `repo:pin-…`); never removes `keep` (the one in use: just made) nor an image a container
/// still uses (the engine refuses, and it stays until next time). The images' tags in `repo`
/// are removed, so an image also tagged elsewhere keeps its other names.
pub async fn evict(docker: &Docker, repo: &str, keep: &str, limit: usize) {
    let prefix = format!("{repo}:pin-");
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
    images.retain(|i| i.repo_tags.iter().any(|t| t.starts_with(&prefix)));
    // Newest first; the one in use first of all, so it counts within the limit.
    images.sort_by_key(|i| (i.id != keep, std::cmp::Reverse(i.created)));
    for old in images.iter().skip(limit) {
        if old.id == keep {
            continue;
        }
        for tag in old.repo_tags.iter().filter(|t| t.starts_with(&prefix)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_bound_is_read_from_the_environment_with_a_clear_error() {
        assert_eq!(pinned_images_limit(None), Ok(DEFAULT_PINNED_IMAGES));
        assert_eq!(pinned_images_limit(Some(" ")), Ok(DEFAULT_PINNED_IMAGES));
        assert_eq!(pinned_images_limit(Some("0")), Ok(0));
        assert_eq!(pinned_images_limit(Some(" 20 ")), Ok(20));
        for bad in ["-1", "eight", "1001"] {
            let e = pinned_images_limit(Some(bad)).unwrap_err();
            assert!(e.starts_with("FIXER_PINNED_IMAGES: `"), "{e}");
        }
    }
}
