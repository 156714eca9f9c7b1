//! [`DockerExecutor`]: runs a build in a locked-down, throw-away Docker container via bollard.
//!
//! The sandbox, and why:
//! - The workspace is **copied into** the container (a tar upload to `/workspace`, owned by the
//!   build user) rather than bind-mounted, so the build can write its outputs where it expects
//!   and the host tree is never modified, whatever the build does. This also works against a
//!   remote engine (`DOCKER_HOST=tcp://…`). The cost is the copy; the container's writable layer
//!   therefore cannot be read-only, but the image's own files belong to root and stay unwritable.
//! - No network (`network_mode: none`) unless the request opts in; memory (no swap), CPU and
//!   process-count limits; an unprivileged user (`65534:65534` by default); all capabilities
//!   dropped; `no-new-privileges`; a size-limited tmpfs on `/tmp`; no host environment at all,
//!   only `HOME`. Nothing of the host is mounted.
//! - stdout and stderr are merged inside the container (`exec 2>&1`), so the log keeps the order
//!   things were written in; the output is read from an attach taken before start (the engine's
//!   own log copy is capped at 1 MB) and kept within a cap ([`crate::capped_log::CappedLog`]).
//! - Every container is removed in every case: after success, failure and time-out by an explicit
//!   forced removal; when the future is dropped mid-run by a guard that spawns that removal; and
//!   when ci-medic itself died, by [`DockerExecutor::reap_stale`] at the next start, which finds
//!   containers by their `ci-medic.managed` label and checks whether their owner process is gone.
//!
//! It never interprets the log and never writes to the host.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig, HostConfigLogConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    DownloadFromContainerOptionsBuilder, KillContainerOptionsBuilder, ListContainersOptionsBuilder,
    RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use bytes::Bytes;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::detect::COMMON_TOOL_PROBES;
use super::output::{build_excerpt, omission_marker};
use super::workspace::write_workspace_tar;
use super::{
    EnvironmentMetadata, ExecutionRequest, ExecutionResult, Executor, ExecutorError, NetworkAccess,
};
use crate::capped_log::CappedLog;

/// Label every ci-medic container carries; what [`DockerExecutor::reap_stale`] looks for.
pub const LABEL_MANAGED: &str = "ci-medic.managed";
/// The executor instance that created the container.
pub const LABEL_INSTANCE: &str = "ci-medic.instance";
/// Host name, pid and process start time of the owning ci-medic process.
pub const LABEL_HOST: &str = "ci-medic.owner-host";
pub const LABEL_PID: &str = "ci-medic.owner-pid";
pub const LABEL_START: &str = "ci-medic.owner-start";

/// Where the workspace lives inside the container.
pub const CONTAINER_WORKSPACE: &str = "/workspace";
/// Private directory for the executor's own files (tool versions), beside the workspace so the
/// build's `git status` never sees them.
const CONTAINER_META_DIR: &str = ".ci-medic";

/// Limits and knobs of the sandbox. The defaults suit a CI build on a small machine.
#[derive(Debug, Clone)]
pub struct SandboxSettings {
    pub memory_bytes: i64,
    /// CPUs, in billionths (`1_000_000_000` = one CPU).
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// `uid:gid` the build runs as; the uploaded workspace belongs to it.
    pub uid: u32,
    pub gid: u32,
    /// Size of the `/tmp` tmpfs (also `HOME`), as Docker spells it (`512m`).
    pub tmpfs_size: String,
    /// Most bytes of output kept (start and end halves); the rest is counted, not stored.
    pub max_log_bytes: usize,
    /// Lines at the start and end of the excerpt.
    pub excerpt_head_lines: usize,
    pub excerpt_tail_lines: usize,
    /// A labelled container older than this is reaped even when its owner cannot be checked
    /// (another host sharing the engine). Longer than any sane build time-out.
    pub stale_after: Duration,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            memory_bytes: 2 << 30,
            nano_cpus: 2_000_000_000,
            pids_limit: 512,
            uid: 65534,
            gid: 65534,
            tmpfs_size: "512m".to_owned(),
            max_log_bytes: 8 << 20,
            excerpt_head_lines: 20,
            excerpt_tail_lines: 60,
            stale_after: Duration::from_secs(6 * 3600),
        }
    }
}

/// The owning process, as recorded on each container's labels.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    host: String,
    pid: u32,
    /// Process start time in clock ticks since boot (`/proc/<pid>/stat` field 22): a pid reused
    /// by another process has a different one.
    start: String,
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn process_start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_owned)
}

impl Owner {
    fn current() -> Owner {
        let pid = std::process::id();
        Owner {
            host: this_host(),
            pid,
            start: process_start_time(pid).unwrap_or_default(),
        }
    }

    /// Whether the recorded owner is certainly gone: same host, and no process with that pid
    /// and start time. `None` when it cannot be told (another host, or no `/proc`).
    fn is_gone(&self, here: &str) -> Option<bool> {
        if self.host.is_empty() || self.host != here || self.start.is_empty() {
            return None;
        }
        if !Path::new("/proc/self/stat").exists() {
            return None;
        }
        Some(process_start_time(self.pid).as_deref() != Some(self.start.as_str()))
    }
}

/// The executor over a Docker engine.
#[derive(Debug, Clone)]
pub struct DockerExecutor {
    docker: Docker,
    settings: SandboxSettings,
    instance: String,
    owner: Owner,
}

static CONTAINER_SEQ: AtomicU64 = AtomicU64::new(0);
static INSTANCE_SEQ: AtomicU64 = AtomicU64::new(0);

fn new_instance_id(owner: &Owner) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let seq = INSTANCE_SEQ.fetch_add(1, Ordering::Relaxed);
    let digest = Sha256::digest(format!(
        "{}|{}|{}|{nanos}|{seq}",
        owner.host, owner.pid, owner.start
    ));
    hex::encode(&digest[..6])
}

/// Returns once the container is no longer running (the engine's wait stream ends).
pub(crate) async fn until_stopped(docker: &Docker, id: &str) {
    let mut wait = docker.wait_container(
        id,
        Some(
            WaitContainerOptionsBuilder::default()
                .condition("not-running")
                .build(),
        ),
    );
    while wait.next().await.is_some() {}
}

/// SIGKILLs the container; one that already stopped is no error worth reporting.
pub(crate) async fn kill(docker: &Docker, id: &str) {
    let _ = docker
        .kill_container(
            id,
            Some(
                KillContainerOptionsBuilder::default()
                    .signal("KILL")
                    .build(),
            ),
        )
        .await;
}

fn docker_err(action: &'static str) -> impl FnOnce(bollard::errors::Error) -> ExecutorError {
    move |source| ExecutorError::Docker { action, source }
}

fn is_not_found(err: &bollard::errors::Error) -> bool {
    matches!(
        err,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

impl DockerExecutor {
    /// Connects to the engine named by `DOCKER_HOST` (default: the local unix socket),
    /// negotiates the API version and checks it answers.
    pub async fn connect(settings: SandboxSettings) -> Result<Self, ExecutorError> {
        let docker = Docker::connect_with_defaults()
            .map_err(|e| ExecutorError::EngineUnavailable(e.to_string()))?;
        Self::with_client(docker, settings).await
    }

    /// Uses an already configured client (negotiates the API version and pings it).
    pub async fn with_client(
        docker: Docker,
        settings: SandboxSettings,
    ) -> Result<Self, ExecutorError> {
        let docker = docker
            .negotiate_version()
            .await
            .map_err(|e| ExecutorError::EngineUnavailable(e.to_string()))?;
        docker
            .ping()
            .await
            .map_err(|e| ExecutorError::EngineUnavailable(e.to_string()))?;
        let owner = Owner::current();
        Ok(DockerExecutor {
            instance: new_instance_id(&owner),
            docker,
            settings,
            owner,
        })
    }

    /// This executor's id, on the `ci-medic.instance` label of every container it creates.
    pub fn instance_id(&self) -> &str {
        &self.instance
    }

    pub fn client(&self) -> &Docker {
        &self.docker
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    /// Ids of the containers this executor instance currently has (running or not).
    pub async fn own_containers(&self) -> Result<Vec<String>, ExecutorError> {
        let filters = HashMap::from([(
            "label".to_owned(),
            vec![format!("{LABEL_INSTANCE}={}", self.instance)],
        )]);
        let list = self
            .docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(docker_err("list containers"))?;
        Ok(list.into_iter().filter_map(|c| c.id).collect())
    }

    /// Removes containers left behind by ci-medic processes that are gone: those on this host
    /// whose owner pid (with its start time) no longer runs, and any labelled container older
    /// than [`SandboxSettings::stale_after`]. Never touches this instance's containers or those
    /// of a live ci-medic. Call once at start-up. Returns the ids removed.
    pub async fn reap_stale(&self) -> Result<Vec<String>, ExecutorError> {
        let filters = HashMap::from([("label".to_owned(), vec![format!("{LABEL_MANAGED}=true")])]);
        let list = self
            .docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(docker_err("list containers"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        let mut reaped = Vec::new();
        for c in list {
            let (Some(id), Some(labels)) = (c.id, c.labels) else {
                continue;
            };
            if labels.get(LABEL_INSTANCE).map(String::as_str) == Some(self.instance.as_str()) {
                continue;
            }
            let owner = Owner {
                host: labels.get(LABEL_HOST).cloned().unwrap_or_default(),
                pid: labels
                    .get(LABEL_PID)
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0),
                start: labels.get(LABEL_START).cloned().unwrap_or_default(),
            };
            let too_old = c
                .created
                .is_some_and(|t| now - t > self.settings.stale_after.as_secs() as i64);
            if owner.is_gone(&self.owner.host) == Some(true) || too_old {
                match remove_forced(&self.docker, &id).await {
                    Ok(()) => {
                        tracing::info!(container = %id, "reaped a container left by a ci-medic that is gone");
                        reaped.push(id);
                    }
                    Err(e) => tracing::warn!(container = %id, error = %e, "could not reap"),
                }
            }
        }
        Ok(reaped)
    }

    async fn ensure_image(&self, image: &str) -> Result<String, ExecutorError> {
        match self.docker.inspect_image(image).await {
            Ok(info) => return Ok(info.id.unwrap_or_default()),
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(docker_err("inspect the image")(e)),
        }
        tracing::info!(image, "image absent locally, pulling it");
        let mut pull = self.docker.create_image(
            Some(
                CreateImageOptionsBuilder::default()
                    .from_image(image)
                    .build(),
            ),
            None,
            None,
        );
        while let Some(step) = pull.next().await {
            step.map_err(|e| ExecutorError::ImageUnavailable {
                image: image.to_owned(),
                reason: e.to_string(),
            })?;
        }
        let info = self.docker.inspect_image(image).await.map_err(|e| {
            ExecutorError::ImageUnavailable {
                image: image.to_owned(),
                reason: e.to_string(),
            }
        })?;
        Ok(info.id.unwrap_or_default())
    }

    fn labels(&self) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_MANAGED.to_owned(), "true".to_owned()),
            (LABEL_INSTANCE.to_owned(), self.instance.clone()),
            (LABEL_HOST.to_owned(), self.owner.host.clone()),
            (LABEL_PID.to_owned(), self.owner.pid.to_string()),
            (LABEL_START.to_owned(), self.owner.start.clone()),
        ])
    }

    fn container_body(&self, req: &ExecutionRequest) -> ContainerCreateBody {
        let s = &self.settings;
        let host_config = HostConfig {
            network_mode: Some(
                match req.network {
                    NetworkAccess::Disabled => "none",
                    NetworkAccess::Enabled => "bridge",
                }
                .to_owned(),
            ),
            memory: Some(s.memory_bytes),
            memory_swap: Some(s.memory_bytes),
            nano_cpus: Some(s.nano_cpus),
            pids_limit: Some(s.pids_limit),
            cap_drop: Some(vec!["ALL".to_owned()]),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_owned(),
                format!("rw,nosuid,nodev,size={},mode=1777", s.tmpfs_size),
            )])),
            // The output is read from the attach stream. The engine's own copy is capped small:
            // the `none` driver is missing from some engine builds (Debian's 20.10 looks for a
            // plugin by that name and blocks the container), json-file exists everywhere.
            log_config: Some(HostConfigLogConfig {
                typ: Some("json-file".to_owned()),
                config: Some(HashMap::from([
                    ("max-size".to_owned(), "1m".to_owned()),
                    ("max-file".to_owned(), "1".to_owned()),
                ])),
            }),
            auto_remove: Some(false),
            privileged: Some(false),
            ..Default::default()
        };
        ContainerCreateBody {
            image: Some(req.image.clone()),
            entrypoint: Some(vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                launcher_script(req),
                "ci-medic".to_owned(),
            ]),
            cmd: Some(vec![req.resolved_build_command.clone()]),
            // Only what the build needs; nothing from the host. The image's own ENV still applies.
            env: Some(vec!["HOME=/tmp".to_owned(), "CI=true".to_owned()]),
            user: Some(format!("{}:{}", s.uid, s.gid)),
            working_dir: Some(CONTAINER_WORKSPACE.to_owned()),
            labels: Some(self.labels()),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            attach_stdin: Some(false),
            open_stdin: Some(false),
            tty: Some(false),
            network_disabled: Some(req.network == NetworkAccess::Disabled),
            host_config: Some(host_config),
            ..Default::default()
        }
    }

    async fn upload_tree(&self, id: &str, req: &ExecutionRequest) -> Result<(), ExecutorError> {
        let name = CONTAINER_WORKSPACE.trim_start_matches('/');
        let (uid, gid) = (self.settings.uid, self.settings.gid);
        upload_directory(&self.docker, id, &req.workspace_path, name, uid, gid, true).await
    }

    async fn read_tools(&self, id: &str) -> BTreeMap<String, String> {
        let mut stream = self.docker.download_from_container(
            id,
            Some(
                DownloadFromContainerOptionsBuilder::default()
                    .path(&format!("/{CONTAINER_META_DIR}/tools"))
                    .build(),
            ),
        );
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(c) if bytes.len() + c.len() <= 1 << 20 => bytes.extend_from_slice(&c),
                _ => return BTreeMap::new(),
            }
        }
        let mut text = String::new();
        let mut ar = tar::Archive::new(&bytes[..]);
        if let Ok(mut entries) = ar.entries()
            && let Some(Ok(mut e)) = entries.next()
        {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        parse_tools(&text)
    }

    /// One regular file of the stopped container, or `None`.
    async fn read_file(&self, id: &str, path: &str) -> Option<Vec<u8>> {
        let mut stream = self.docker.download_from_container(
            id,
            Some(
                DownloadFromContainerOptionsBuilder::default()
                    .path(path)
                    .build(),
            ),
        );
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let c = chunk.ok()?;
            // The tar adds headers and padding around the file: a little over the cap.
            if bytes.len() + c.len() > MAX_COLLECTED_BYTES + (64 << 10) {
                return None;
            }
            bytes.extend_from_slice(&c);
        }
        let mut ar = tar::Archive::new(&bytes[..]);
        let mut entry = ar.entries().ok()?.next()?.ok()?;
        if entry.header().entry_type() != tar::EntryType::Regular
            || entry.header().size().ok()? > MAX_COLLECTED_BYTES as u64
        {
            return None;
        }
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut out).ok()?;
        Some(out)
    }

    async fn run(
        &self,
        req: &ExecutionRequest,
        guard: &ContainerGuard,
        collect: &[String],
    ) -> Result<RunOutcome, ExecutorError> {
        let id = guard.id.as_str();
        self.upload_tree(id, req).await?;
        let attach = self
            .docker
            .attach_container(
                id,
                Some(
                    AttachContainerOptionsBuilder::default()
                        .stream(true)
                        // Attached before start, the stream sees everything from the first
                        // byte; history from the log driver (capped) is not wanted.
                        .logs(false)
                        .stdout(true)
                        .stderr(true)
                        .build(),
                ),
            )
            .await
            .map_err(docker_err("attach to the container"))?;
        let mut output = attach.output;
        let mut log = CappedLog::new(self.settings.max_log_bytes);

        self.docker
            .start_container(id, None)
            .await
            .map_err(docker_err("start the container"))?;
        let started = Instant::now();

        let limit = Duration::from_secs(req.timeout_seconds);
        let finished = tokio::time::timeout(limit, async {
            while let Some(frame) = output.next().await {
                match frame {
                    Ok(LogOutput::StdOut { message } | LogOutput::StdErr { message })
                    | Ok(LogOutput::Console { message }) => log.push(&message),
                    Ok(LogOutput::StdIn { .. }) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "output stream broke; waiting for exit");
                        break;
                    }
                }
            }
            until_stopped(&self.docker, id).await;
        })
        .await;
        let timed_out = finished.is_err();
        if timed_out {
            kill(&self.docker, id).await;
            // Take what was printed up to the kill, without waiting on a stream that may hang.
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while let Some(Ok(frame)) = output.next().await {
                    if !matches!(frame, LogOutput::StdIn { .. }) {
                        log.push(frame.as_ref());
                    }
                }
            })
            .await;
            let _ = tokio::time::timeout(Duration::from_secs(10), until_stopped(&self.docker, id))
                .await;
        }
        let elapsed = started.elapsed();
        let state = self
            .docker
            .inspect_container(id, None)
            .await
            .map_err(docker_err("inspect the finished container"))?
            .state
            .unwrap_or_default();
        let tools = self.read_tools(id).await;
        let mut collected = BTreeMap::new();
        for path in collect {
            collected.insert(path.clone(), self.read_file(id, path).await);
        }
        Ok(RunOutcome {
            collected,
            exit_code: state.exit_code.unwrap_or(-1),
            oom_killed: state.oom_killed.unwrap_or(false),
            timed_out,
            elapsed,
            log,
            tools,
        })
    }
}

struct RunOutcome {
    /// Container path → its bytes, for the paths asked for (`None`: absent, not a regular
    /// file, or over [`MAX_COLLECTED_BYTES`]).
    collected: BTreeMap<String, Option<Vec<u8>>>,
    exit_code: i64,
    oom_killed: bool,
    timed_out: bool,
    elapsed: Duration,
    log: CappedLog,
    tools: BTreeMap<String, String>,
}

/// The script the container runs as `sh -c SCRIPT ci-medic BUILD_COMMAND`: record tool versions
/// into the private directory (never into the log), merge stderr into stdout so the log keeps
/// the written order, then replace itself with the build command (the container's working
/// directory is the workspace root).
/// The build command travels as `$1`, never spliced into the script, so no quoting can break it.
fn launcher_script(req: &ExecutionRequest) -> String {
    let mut probes: Vec<(&str, &str)> = COMMON_TOOL_PROBES.to_vec();
    if let Some(t) = req.project_type {
        probes.extend_from_slice(t.tool_probes());
    }
    let mut script = String::from("{\n");
    for (name, cmd) in probes {
        let bin = cmd.split_whitespace().next().unwrap_or(name);
        script.push_str(&format!(
            "if command -v {bin} >/dev/null 2>&1; then printf '%s\\t%s\\n' '{name}' \"$({cmd} 2>&1 | head -n 1)\"; fi\n"
        ));
    }
    script.push_str(&format!(
        "}} >/{CONTAINER_META_DIR}/tools 2>/dev/null </dev/null\n\
         exec 2>&1\n\
         exec /bin/sh -c \"$1\"\n"
    ));
    script
}

fn is_broken_pipe(e: &super::WorkspaceError) -> bool {
    matches!(e, super::WorkspaceError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

fn parse_tools(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        .collect()
}

/// The executor's private directory, owned by the build user, as one raw tar header block put
/// before the workspace's entries in the same stream (a `tar::Builder` would end the archive).
fn write_meta_dir<W: std::io::Write>(
    uid: u64,
    gid: u64,
    mut out: W,
) -> Result<W, super::WorkspaceError> {
    let io_err = |source| super::WorkspaceError::Io {
        path: CONTAINER_META_DIR.into(),
        source,
    };
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_path(format!("{CONTAINER_META_DIR}/"))
        .map_err(io_err)?;
    h.set_mode(0o700);
    h.set_uid(uid);
    h.set_gid(gid);
    h.set_size(0);
    h.set_cksum();
    out.write_all(h.as_bytes()).map_err(io_err)?;
    Ok(out)
}

/// Sends written bytes to the async side in chunks; blocks (on its own thread) when the upload
/// is slower than the packing.
struct ChannelWriter {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tx
            .blocking_send(Ok(Bytes::copy_from_slice(buf)))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "upload ended"))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Copies the directory `root` into the container `id` (created, not started) as `/name`,
/// owned by `uid:gid`, with the executor's metadata directory first when `with_meta`. Packing is
/// blocking file I/O: it runs on its own thread and streams through a bounded channel, so
/// memory stays at a few chunks whatever the tree's size.
pub(crate) async fn upload_directory(
    docker: &Docker,
    id: &str,
    root: &std::path::Path,
    name: &str,
    uid: u32,
    gid: u32,
    with_meta: bool,
) -> Result<(), ExecutorError> {
    let (uid, gid) = (u64::from(uid), u64::from(gid));
    let (root, name) = (root.to_path_buf(), name.to_string());
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(8);
    let packer = tokio::task::spawn_blocking(move || {
        let writer = ChannelWriter { tx: tx.clone() };
        let res = if with_meta {
            write_meta_dir(uid, gid, writer)
        } else {
            Ok(writer)
        }
        .and_then(|w| write_workspace_tar(&root, &name, uid, gid, w));
        match res {
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = tx.blocking_send(Err(std::io::Error::other(e.to_string())));
                Err(e)
            }
        }
    });
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let upload = docker
        .upload_to_container(
            id,
            Some(UploadToContainerOptionsBuilder::default().path("/").build()),
            bollard::body_try_stream(body),
        )
        .await;
    let packed = packer
        .await
        .map_err(|e| ExecutorError::InvalidRequest(format!("packing the workspace: {e}")))?;
    match (packed, upload) {
        // The packer's own failure (an unreadable file) is the cause; a broken pipe only
        // means the engine stopped reading, so its error is the one to report.
        (Err(e), _) if !is_broken_pipe(&e) => Err(e.into()),
        (_, Err(e)) => Err(docker_err("copy the workspace into the container")(e)),
        (Err(e), Ok(())) => Err(e.into()),
        (Ok(()), Ok(())) => Ok(()),
    }
}

async fn remove_forced(docker: &Docker, id: &str) -> Result<(), bollard::errors::Error> {
    match docker
        .remove_container(
            id,
            Some(
                RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .v(true)
                    .build(),
            ),
        )
        .await
    {
        Err(e) if is_not_found(&e) => Ok(()),
        other => other,
    }
}

/// Removes its container when dropped unless [`ContainerGuard::remove`] already did: that is
/// what cleans up when the caller drops the `execute` future (or a pinned-tool install)
/// mid-build.
pub(crate) struct ContainerGuard {
    docker: Docker,
    id: String,
    armed: bool,
}

impl ContainerGuard {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn new(docker: &Docker, id: &str) -> Self {
        ContainerGuard {
            docker: docker.clone(),
            id: id.to_string(),
            armed: true,
        }
    }

    pub(crate) async fn remove(mut self) -> Result<(), ExecutorError> {
        self.armed = false;
        remove_forced(&self.docker, &self.id)
            .await
            .map_err(docker_err("remove the container"))
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (docker, id) = (self.docker.clone(), std::mem::take(&mut self.id));
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if let Err(e) = remove_forced(&docker, &id).await {
                        tracing::warn!(container = %id, error = %e, "could not remove an abandoned container; a managed one is reaped at the next start");
                    }
                });
            }
            Err(_) => {
                tracing::warn!(container = %id, "no runtime to remove an abandoned container; a managed one is reaped at the next start");
            }
        }
    }
}

/// Largest file [`DockerExecutor::execute_and_collect`] reads back.
pub const MAX_COLLECTED_BYTES: usize = 16 << 20;

#[async_trait]
impl Executor for DockerExecutor {
    async fn execute(&self, req: ExecutionRequest) -> Result<ExecutionResult, ExecutorError> {
        self.execute_and_collect(req, &[]).await.map(|(r, _)| r)
    }
}

impl DockerExecutor {
    /// [`Executor::execute`], then reads the files at `collect` (absolute container paths,
    /// such as `/workspace/src/a.py`) out of the stopped container before it is removed: how
    /// the fix agent's tool tier sees what a tool did to its copy of the tree. The host tree
    /// is still never touched.
    pub async fn execute_and_collect(
        &self,
        req: ExecutionRequest,
        collect: &[String],
    ) -> Result<(ExecutionResult, BTreeMap<String, Option<Vec<u8>>>), ExecutorError> {
        if !req.workspace_path.is_dir() {
            return Err(ExecutorError::InvalidRequest(format!(
                "workspace `{}` is not a directory",
                req.workspace_path.display()
            )));
        }
        if req.resolved_build_command.trim().is_empty() {
            return Err(ExecutorError::InvalidRequest(
                "the build command is empty".to_owned(),
            ));
        }
        if req.timeout_seconds == 0 {
            return Err(ExecutorError::InvalidRequest(
                "timeout_seconds must be at least 1".to_owned(),
            ));
        }
        let image_id = self.ensure_image(&req.image).await?;
        let version = self
            .docker
            .version()
            .await
            .map_err(docker_err("read the engine version"))?;

        let seq = CONTAINER_SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("ci-medic-{}-{seq}", self.instance);
        let created = self
            .docker
            .create_container(
                Some(CreateContainerOptionsBuilder::default().name(&name).build()),
                self.container_body(&req),
            )
            .await
            .map_err(docker_err("create the container"))?;
        let guard = ContainerGuard {
            docker: self.docker.clone(),
            id: created.id,
            armed: true,
        };

        let outcome = self.run(&req, &guard, collect).await;
        let removed = guard.remove().await;
        let outcome = outcome?;
        removed?;

        let captured = outcome.log.finish(|omitted, _| omission_marker(omitted));
        let build_log = String::from_utf8_lossy(&captured.bytes).into_owned();
        let s = &self.settings;
        let result = ExecutionResult {
            exit_code: outcome.exit_code,
            log_excerpt: build_excerpt(&build_log, s.excerpt_head_lines, s.excerpt_tail_lines),
            build_log,
            execution_time_seconds: outcome.elapsed.as_secs_f64(),
            environment_metadata: EnvironmentMetadata {
                image: req.image.clone(),
                image_id,
                docker_version: version.version.unwrap_or_default(),
                docker_api_version: version.api_version.unwrap_or_default(),
                project_type: req.project_type,
                tools: outcome.tools,
                network: req.network,
                user: format!("{}:{}", s.uid, s.gid),
                memory_limit_bytes: s.memory_bytes,
                cpu_limit: s.nano_cpus as f64 / 1e9,
                pids_limit: s.pids_limit,
            },
            timed_out: outcome.timed_out,
            truncated: captured.truncated(),
            oom_killed: outcome.oom_killed,
            log_total_bytes: captured.total_bytes,
        };
        Ok((result, outcome.collected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_file_parsing_ignores_empty_versions() {
        let t = parse_tools("busybox\tBusyBox v1.35.0\npython3\tPython 3.11.2\nnpm\t\ngarbage\n");
        assert_eq!(t.len(), 2);
        assert_eq!(t["python3"], "Python 3.11.2");
    }

    #[test]
    fn the_build_command_is_never_spliced_into_the_script() {
        let req = ExecutionRequest {
            workspace_path: "/w".into(),
            project_type: Some(super::super::ProjectType::Python),
            resolved_build_command: "echo '$(rm -rf /)' \"; exit 3".to_owned(),
            timeout_seconds: 1,
            image: "i".to_owned(),
            network: NetworkAccess::Disabled,
        };
        let script = launcher_script(&req);
        assert!(!script.contains("rm -rf"));
        assert!(script.contains("python3 --version"));
        assert!(script.ends_with("exec /bin/sh -c \"$1\"\n"));
    }

    #[test]
    fn own_process_is_alive_and_a_made_up_one_is_gone() {
        let me = Owner::current();
        let here = this_host();
        if me.start.is_empty() {
            return; // No /proc on this platform: liveness cannot be told, which is_gone says.
        }
        assert_eq!(me.is_gone(&here), Some(false));
        let ghost = Owner {
            start: "1".to_owned(),
            ..me.clone()
        };
        assert_eq!(ghost.is_gone(&here), Some(true));
        let elsewhere = Owner {
            host: format!("{here}-other"),
            ..me
        };
        assert_eq!(elsewhere.is_gone(&here), None);
    }
}
