//! The fix agent's tool tier: repairs a formatter or autofixable-lint report by running the
//! project's own tool on exactly the reported file, in the Docker sandbox, and taking the
//! tool's change as the patch.
//!
//! The tree is the pull request's at the proposal's commit (the caller extracts it), with the
//! fixes already made to the file written in. It is copied into a throw-away container from a
//! locally built fixer image (`.ci/fixer-images.sh`), with the executor's sandbox: no network,
//! no credentials, no host mount, an unprivileged user, CPU, memory, process, time and output
//! limits. A tool configuration that executes code (an `eslint.config.js`, a `conftest`) runs
//! only in there. The tool finds its own configuration in the tree, as in the project's CI.
//! After the run, the reported file is read back and every file the tool modified is listed
//! (`find -newer` against a marker made just before the tool starts); a change to any other file,
//! or none, gives no patch, with the reason.
//!
//! clippy cannot be pointed at one file: `cargo clippy --fix` runs on the crate with only the
//! reported lint enabled, and a change to any other file is refused like any tool's. A crate
//! with dependencies gets them first from a cached image made by `cargo fetch` with a network,
//! which runs nothing of the repository (`super::pins::cargo_deps_image`); clippy itself, build
//! scripts included, runs with no network.
//!
//! A version the project pins, exactly or as a range, of a PyPI or npm tool the image has in
//! another version (outside the range), is installed first into a cached image of its own
//! (`super::pins`), the one step with a network; the tool then runs from that image like any
//! other. For a formatter whose check prints hunks (rustfmt), the check runs first in the same
//! container, and its hunks are what the guard lets the formatter change; for one whose check
//! names lines only (clang-format), the hunks of the formatter's own change that hold a
//! reported line are.
//!
//! What it must never do: run anything on the host, give the container a network, write to the
//! host tree outside the caller's scratch copy, or pass on a change the pure judge
//! ([`ci_medic_core::tool_tier::judge_run`]) refused. The guard then judges the patch like any
//! other.

use std::collections::BTreeMap;
use std::path::Path;

use ci_medic_core::fix_check::{FixInput, FixOutput, source_text};
use ci_medic_core::repo_config::FixerImages;
use ci_medic_core::tool_tier::{
    Ecosystem, FixTool, FormatScope, NoPatch, VERSION_FILES, VersionChoice, cargo_needs_fetch,
    check_hunks, choose_version, diff_hunks, judge_run, names_whole_file, parse_tools_label,
    pinned_version, rust_edition, shell_words,
};

use super::pins::{DEFAULT_PINNED_IMAGES, cargo_deps_image, pinned_image};
use crate::executor::docker::CONTAINER_WORKSPACE;
use crate::executor::{DockerExecutor, ExecutionRequest, NetworkAccess, apply_files};

/// The label `.ci/fixer-images.sh` puts on each fixer image: the tools and their versions.
pub const TOOLS_LABEL: &str = "ci-medic.tools";
/// Most bytes read of a file that may pin a version.
const MAX_VERSION_FILE: u64 = 1 << 20;
/// Wall-clock limit of one tool run: formatters take well under a second per file.
const TOOL_TIMEOUT_SECONDS: u64 = 120;
/// How sure a patch made by the project's own tool is: the tool is the judge of its own rule.
const TOOL_CONFIDENCE: f64 = 0.95;

/// Why the tool tier gave no patch for a report.
#[derive(Debug, thiserror::Error)]
pub enum ToolDecline {
    /// No tool of the tier repairs this report; not worth mentioning on the comment.
    #[error("no tool of the tool tier repairs this report")]
    NotMine,
    #[error("fixer image `{image}` has no {tool} (`.ci/fixer-images.sh` builds it): {why}")]
    NoImage {
        image: String,
        tool: String,
        why: String,
    },
    #[error("the {tool} run could not start: {why}")]
    Sandbox { tool: String, why: String },
    #[error(transparent)]
    NoPatch(#[from] NoPatch),
}

/// A patch the tool made, which tool and version made it, and what of the file its own check
/// let it change (the guard's [`ci_medic_core::tool_tier::scoped_policy`]).
#[derive(Debug, Clone)]
pub struct ToolFix {
    pub output: FixOutput,
    pub tool: FixTool,
    pub version: VersionChoice,
    pub scope: FormatScope,
    /// The image it ran in: the configured one, or the cached image of a pinned version.
    pub image: String,
}

/// The tool tier: a Docker engine and the image of each ecosystem.
#[derive(Debug, Clone)]
pub struct ToolTier {
    docker: DockerExecutor,
    images: BTreeMap<Ecosystem, String>,
    /// How many pinned-version images to keep per image repository (`FIXER_PINNED_IMAGES`).
    pinned_images: usize,
}

impl ToolTier {
    /// With the default image of every ecosystem ([`Ecosystem::default_image`]).
    pub fn new(docker: DockerExecutor) -> Self {
        let images = Ecosystem::ALL
            .into_iter()
            .map(|e| (e, e.default_image().to_string()))
            .collect();
        ToolTier {
            docker,
            images,
            pinned_images: DEFAULT_PINNED_IMAGES,
        }
    }

    /// Keeps at most `n` pinned-version images per image repository (see `super::pins`).
    pub fn with_pinned_images(mut self, n: usize) -> Self {
        self.pinned_images = n;
        self
    }

    /// Uses `image` for the ecosystem's tools instead of the default.
    pub fn with_image(mut self, eco: Ecosystem, image: impl Into<String>) -> Self {
        self.images.insert(eco, image.into());
        self
    }

    /// Uses the repository's `fixers.images` (`.github/ci-medic.yml`), whose defaults are
    /// [`Ecosystem::default_image`].
    pub fn with_images(mut self, images: &FixerImages) -> Self {
        for eco in Ecosystem::ALL {
            self.images.insert(eco, images.get(eco).to_string());
        }
        self
    }

    /// The image `eco`'s tools run in.
    pub fn image(&self, eco: Ecosystem) -> &str {
        self.images
            .get(&eco)
            .map_or_else(|| eco.default_image(), String::as_str)
    }

    /// The tool this tier would run for `input`'s report in `root`, if any.
    pub fn tool_for(root: &Path, input: &FixInput) -> Option<FixTool> {
        let edition = read_small(&root.join("Cargo.toml")).and_then(|t| rust_edition(&t));
        FixTool::for_report(&input.report, edition.as_deref())
    }

    /// Runs the report's tool on its file in a copy of `root` (the tree at the proposal's
    /// commit; `input.file_content` is written into it first, as earlier fixes left the file).
    pub async fn fix(&self, root: &Path, input: &FixInput) -> Result<ToolFix, ToolDecline> {
        let tool = Self::tool_for(root, input).ok_or(ToolDecline::NotMine)?;
        let name = tool.name().to_string();
        let image = self.image(tool.ecosystem()).to_string();
        let (label, base_id) = match self.docker.client().inspect_image(&image).await {
            Ok(info) => (
                info.config
                    .and_then(|c| c.labels)
                    .and_then(|l| l.get(TOOLS_LABEL).cloned())
                    .unwrap_or_default(),
                info.id.unwrap_or_default(),
            ),
            Err(e) => {
                return Err(ToolDecline::NoImage {
                    image,
                    tool: name,
                    why: e.to_string(),
                });
            }
        };
        let pin = pinned_version(&tool, &version_files(root));
        let Some(mut version) = choose_version(&tool, pin, &parse_tools_label(&label)) else {
            return Err(ToolDecline::NoImage {
                image,
                tool: name,
                why: format!("its `{TOOLS_LABEL}` label lists `{label}`"),
            });
        };
        let mut image = image;
        if let VersionChoice::PinUnavailable {
            pin,
            version: default,
        } = &version
            && tool.install_command(pin).is_some()
        {
            // A pin of a PyPI or npm tool: installed once into a cached image.
            let client = self.docker.client();
            let keep = self.pinned_images;
            version = match pinned_image(client, &image, &base_id, &label, &tool, pin, keep).await {
                Ok((pinned, installed, fresh)) => {
                    image = pinned;
                    VersionChoice::Installed {
                        version: installed,
                        pin: pin.clone(),
                        fresh,
                    }
                }
                Err(why) => VersionChoice::InstallFailed {
                    version: default.clone(),
                    pin: pin.clone(),
                    why,
                },
            };
        }
        if let VersionChoice::PinUnavailable { pin, .. }
        | VersionChoice::ToolchainUnavailable { pin, .. }
        | VersionChoice::PinNotUnderstood { pin, .. }
        | VersionChoice::InstallFailed { pin, .. } = &version
        {
            tracing::info!(tool = %name, pinned = %pin.spec, source = %pin.source, used = %version.version(), "pinned version not available; using the default");
        }

        if matches!(tool, FixTool::Clippy { .. }) {
            let manifest = read_small(&root.join("Cargo.toml")).unwrap_or_default();
            let lock = read_small(&root.join("Cargo.lock"));
            if cargo_needs_fetch(&manifest, lock.as_deref()) {
                let key = cargo_deps_key(root);
                let client = self.docker.client();
                let keep = self.pinned_images;
                image = cargo_deps_image(client, &image, &base_id, &label, root, &key, keep)
                    .await
                    .map_err(|why| ToolDecline::Sandbox {
                        tool: name.clone(),
                        why: format!("the crate's dependencies could not be fetched: {why}"),
                    })?;
            }
        }

        let path = input.report.file_path.clone();
        apply_files(root, &[(path.clone(), input.file_content.clone())]).map_err(|e| {
            ToolDecline::Sandbox {
                tool: name.clone(),
                why: e.to_string(),
            }
        })?;
        let meta = "/.ci-medic";
        let files = std::slice::from_ref(&path);
        // A formatter whose check prints hunks, on a report that named a line: its own check
        // runs first, in the same sandbox and on the same file, and its hunks are what the
        // fix may change.
        let wants_hunks = tool.check_prints_hunks() && !names_whole_file(&input.report);
        let check = if wants_hunks {
            format!("{} > {meta}/check 2>&1; ", tool.check_command(files))
        } else {
            String::new()
        };
        // The marker is made a second before the tool starts: busybox `find -newer` compares
        // whole seconds. The tool's own exit code is the container's.
        let command = format!(
            "{check}touch {meta}/start && sleep 1 && {tool_cmd}; rc=$?; \
             find . -type f -newer {meta}/start > {meta}/changed; exit $rc",
            tool_cmd = shell_words(&tool.argv(files))
        );
        let in_container = format!("{CONTAINER_WORKSPACE}/{path}");
        let changed_list = format!("{meta}/changed");
        let check_out = format!("{meta}/check");
        let mut wanted = vec![in_container.clone(), changed_list.clone()];
        if wants_hunks {
            wanted.push(check_out.clone());
        }
        let req = ExecutionRequest {
            workspace_path: root.to_path_buf(),
            project_type: None,
            resolved_build_command: command,
            timeout_seconds: TOOL_TIMEOUT_SECONDS,
            image: image.clone(),
            network: NetworkAccess::Disabled,
        };
        let (result, collected) = self
            .docker
            .execute_and_collect(req, &wanted)
            .await
            .map_err(|e| ToolDecline::Sandbox {
                tool: name.clone(),
                why: e.to_string(),
            })?;
        if result.timed_out || result.oom_killed {
            return Err(ToolDecline::Sandbox {
                tool: name,
                why: format!(
                    "it {} in the sandbox",
                    if result.timed_out {
                        "timed out"
                    } else {
                        "ran out of memory"
                    }
                ),
            });
        }
        let Some(Some(list)) = collected.get(&changed_list) else {
            return Err(ToolDecline::Sandbox {
                tool: name,
                why: "the sandbox did not say which files changed".into(),
            });
        };
        let changed: Vec<String> = String::from_utf8_lossy(list)
            .lines()
            .map(|l| l.trim_start_matches("./").to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let after_text = collected
            .get(&in_container)
            .cloned()
            .flatten()
            .and_then(|b| source_text(&b).ok().map(str::to_string));
        let reported = BTreeMap::from([(path.clone(), input.file_content.clone())]);
        let after = BTreeMap::from([(path.clone(), after_text)]);
        let mut changes = judge_run(
            &tool,
            &reported,
            &after,
            &changed,
            result.exit_code,
            &result.log_excerpt,
        )?;
        let change = changes.remove(0);
        let scope = if !tool.is_formatter() {
            FormatScope::ReportedLines
        } else if names_whole_file(&input.report) {
            FormatScope::WholeFile
        } else if wants_hunks {
            let printed = collected
                .get(&check_out)
                .cloned()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            FormatScope::Hunks(check_hunks(&printed, CONTAINER_WORKSPACE, &path))
        } else {
            // A check that named lines without their extent (clang-format's): the hunks of
            // the formatter's own change that hold a reported line.
            FormatScope::Hunks(diff_hunks(&input.file_content, &change.after))
        };
        let fix_reason = format!(
            "{} `{path}` with {}",
            tool.action(),
            version.describe(&name)
        );
        Ok(ToolFix {
            output: FixOutput {
                patched_content: change.after,
                fix_reason,
                confidence_score: TOOL_CONFIDENCE,
                fixer: format!("{}{name}", super::TOOL_FIXER_PREFIX),
            },
            tool,
            version,
            scope,
            image,
        })
    }
}

/// A regular file of at most [`MAX_VERSION_FILE`] bytes as text; never follows a link (the
/// tree is the pull request's).
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_VERSION_FILE {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// The SHA-256 (hex) of what decides a crate's dependencies: `Cargo.lock`, and every
/// `Cargo.toml` of the tree (a workspace's members at any depth), by path. A member's manifest
/// matters when there is no lockfile: `cargo fetch` then resolves from the manifests.
fn cargo_deps_key(root: &Path) -> String {
    use sha2::{Digest, Sha256};
    /// Directory entries looked at, at most: a tree is the pull request's, and a hostile one
    /// could be deep or wide; past the budget the key is what was seen (a stale key only
    /// costs clippy its offline build, never a wrong fix).
    const BUDGET: usize = 50_000;
    fn manifests(dir: &Path, rel: &str, seen: &mut usize, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            *seen += 1;
            if *seen > BUDGET {
                return;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // `file_type` does not follow links, so a link cannot lead the walk out of the tree
            // or round in a loop.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && !name.starts_with('.') && name != "target" && name != "node_modules" {
                manifests(&entry.path(), &path, seen, out);
            } else if name == "Cargo.toml" || (name == "Cargo.lock" && rel.is_empty()) {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    manifests(root, "", &mut 0, &mut files);
    files.sort();
    let mut hash = Sha256::new();
    for f in files {
        hash.update(f.as_bytes());
        hash.update([0]);
        hash.update(read_small(&root.join(&f)).unwrap_or_default().as_bytes());
        hash.update([0]);
    }
    hex::encode(hash.finalize())
}

/// The files at the root that may pin a tool's version.
fn version_files(root: &Path) -> BTreeMap<String, String> {
    VERSION_FILES
        .iter()
        .filter_map(|f| read_small(&root.join(f)).map(|t| (f.to_string(), t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::cargo_deps_key;

    #[test]
    fn the_dependency_key_follows_every_manifest_and_ignores_build_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/a/b/c/d\"]\n",
        );
        write("crates/a/b/c/d/Cargo.toml", "[package]\nname = \"d\"\n");
        let first = cargo_deps_key(root);
        // A member four directories down adds a dependency: without a lockfile, cargo fetch
        // resolves it, so the cached dependencies must not be reused.
        write(
            "crates/a/b/c/d/Cargo.toml",
            "[package]\nname = \"d\"\n[dependencies]\nfnv = \"1\"\n",
        );
        let second = cargo_deps_key(root);
        assert_ne!(first, second);
        write(
            "target/debug/build/x/Cargo.toml",
            "[package]\nname = \"x\"\n",
        );
        write("node_modules/y/Cargo.toml", "[package]\nname = \"y\"\n");
        assert_eq!(cargo_deps_key(root), second);
    }
}
