//! The executor against a real Docker engine, with the local images `.ci/docker-setup.sh` builds
//! (`ci-medic-test/busybox`, `ci-medic-test/python`; no registry involved).
//!
//! Without an engine these tests print why and skip, except under `CI=true`, where a missing
//! engine is a failure. Every test checks that no container of its executor is left behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ci_medic::executor::docker::{
    DockerExecutor, LABEL_HOST, LABEL_INSTANCE, LABEL_MANAGED, LABEL_PID, LABEL_START,
    SandboxSettings,
};
use ci_medic::executor::{
    ExecutionRequest, Executor, ExecutorError, NetworkAccess, ProjectType, apply_files,
    extract_tarball_safely, targeted_errors_remaining,
};
use ci_medic_parser::{BugReport, BugType};

const BUSYBOX: &str = "ci-medic-test/busybox";
const PYTHON: &str = "ci-medic-test/python";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/executor")
        .join(name)
}

/// An executor on the local engine, or `None` (skip) when there is none outside CI.
async fn executor_with(settings: SandboxSettings) -> Option<DockerExecutor> {
    match DockerExecutor::connect(settings).await {
        Ok(ex) => {
            for image in [BUSYBOX, PYTHON] {
                if ex.client().inspect_image(image).await.is_err() {
                    let msg = format!("image {image} missing: run .ci/docker-setup.sh");
                    if std::env::var("CI").as_deref() == Ok("true") {
                        panic!("{msg}");
                    }
                    eprintln!("skipping: {msg}");
                    return None;
                }
            }
            Some(ex)
        }
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true but no Docker engine: {e}");
            }
            eprintln!("skipping: no Docker engine ({e})");
            None
        }
    }
}

async fn executor() -> Option<DockerExecutor> {
    executor_with(SandboxSettings::default()).await
}

fn request(workspace: &Path, image: &str, command: &str, timeout: u64) -> ExecutionRequest {
    ExecutionRequest {
        workspace_path: workspace.to_path_buf(),
        project_type: None,
        resolved_build_command: command.to_owned(),
        timeout_seconds: timeout,
        image: image.to_owned(),
        network: NetworkAccess::Disabled,
    }
}

async fn assert_no_containers_left(ex: &DockerExecutor) {
    // Removal is synchronous on the normal paths; allow a moment for the cancellation path's
    // spawned removal.
    for _ in 0..50 {
        if ex.own_containers().await.unwrap().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("containers left behind: {:?}", ex.own_containers().await);
}

/// A private copy of a fixture, so a test can prove the executor never modifies the workspace.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn tree_listing(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn passing_build_reports_success_metadata_and_leaves_the_workspace_alone() {
    let Some(ex) = executor().await else { return };
    let ws = copy_fixture("python-pass");
    let before = tree_listing(ws.path());
    let mut req = request(ws.path(), PYTHON, "", 120);
    req.project_type = Some(ProjectType::Python);
    req.resolved_build_command = ProjectType::Python.default_command(ws.path());
    let res = ex.execute(req).await.unwrap();
    assert_eq!(res.exit_code, 0, "{}", res.build_log);
    assert!(res.succeeded());
    assert!(!res.timed_out && !res.truncated && !res.oom_killed);
    // unittest's own summary, from the real interpreter.
    assert!(res.build_log.contains("Ran 2 tests"), "{}", res.build_log);
    assert!(res.build_log.contains("OK"), "{}", res.build_log);
    assert_eq!(res.log_excerpt, res.build_log);
    let m = &res.environment_metadata;
    assert_eq!(m.image, PYTHON);
    assert!(m.image_id.starts_with("sha256:"), "{}", m.image_id);
    assert!(!m.docker_version.is_empty());
    assert_eq!(
        m.tools.get("python3").map(String::as_str),
        Some("Python 3.11.2")
    );
    assert!(m.tools["busybox"].starts_with("BusyBox"), "{:?}", m.tools);
    assert!(res.execution_time_seconds > 0.0);
    // compileall wrote __pycache__ inside the container only.
    assert_eq!(tree_listing(ws.path()), before);
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn failing_build_keeps_the_real_tool_output_in_order() {
    let Some(ex) = executor().await else { return };
    let ws = copy_fixture("python-fail");
    let res = ex
        .execute(request(
            ws.path(),
            PYTHON,
            "echo start; python3 -m unittest -v test_calc; python3 -m py_compile broken.py",
            120,
        ))
        .await
        .unwrap();
    assert_eq!(res.exit_code, 1, "{}", res.build_log);
    assert!(!res.succeeded());
    let log = &res.build_log;
    // unittest writes to stderr, "start" to stdout: merged in the order written.
    let start = log.find("start").unwrap();
    let fail = log.find("FAIL: test_add").expect(log);
    let syntax = log.find("SyntaxError").expect(log);
    assert!(start < fail && fail < syntax, "{log}");
    assert!(log.contains("AssertionError: 5 != 4"), "{log}");
    assert!(log.contains("File \"broken.py\", line 2"), "{log}");
    assert!(
        log.contains("File \"/workspace/test_calc.py\", line 8"),
        "{log}"
    );
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn timeout_kills_the_container_and_says_so() {
    let Some(ex) = executor().await else { return };
    let ws = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let res = ex
        .execute(request(
            ws.path(),
            BUSYBOX,
            "echo before; sleep 60; echo after",
            2,
        ))
        .await
        .unwrap();
    assert!(res.timed_out);
    assert!(!res.succeeded());
    assert_ne!(res.exit_code, 0);
    assert!(res.build_log.contains("before"));
    assert!(!res.build_log.contains("after"));
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(res.execution_time_seconds >= 2.0 && res.execution_time_seconds < 30.0);
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn output_over_the_cap_keeps_start_and_end() {
    let cap = 1 << 20;
    let Some(ex) = executor_with(SandboxSettings {
        max_log_bytes: cap,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    // ~50 MB: 500k numbered lines of 100 bytes.
    let cmd = "echo FIRST-LINE; seq 1 500000 | while read i; do printf '%099d\\n' \"$i\"; done; echo LAST-LINE";
    let res = ex
        .execute(request(ws.path(), BUSYBOX, cmd, 280))
        .await
        .unwrap();
    assert_eq!(res.exit_code, 0);
    assert!(res.truncated);
    assert!(res.log_total_bytes > 50_000_000, "{}", res.log_total_bytes);
    assert!(res.build_log.len() <= cap + 100, "{}", res.build_log.len());
    assert!(res.build_log.starts_with("FIRST-LINE\n"));
    assert!(
        res.build_log
            .ends_with(&format!("{:099}\nLAST-LINE\n", 500000))
    );
    let marker = res
        .build_log
        .lines()
        .find(|l| l.starts_with("[ci-medic:") && l.ends_with("bytes of output omitted]"))
        .expect("omission marker");
    assert!(marker.contains(' '));
    assert!(res.log_excerpt.contains("lines omitted") || res.log_excerpt.lines().count() <= 80);
    assert_no_containers_left(&ex).await;
}

/// The bridge gateway: the host's address as containers on Docker's default network see it.
async fn bridge_gateway(ex: &DockerExecutor) -> String {
    let net = ex
        .client()
        .inspect_network(
            "bridge",
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
        .unwrap();
    let config = net.ipam.and_then(|i| i.config).unwrap_or_default();
    if let Some(gw) = config.iter().find_map(|c| c.gateway.clone()) {
        return gw;
    }
    // Older engines leave the gateway out: it is the subnet's first address.
    let subnet = config
        .iter()
        .find_map(|c| c.subnet.clone())
        .expect("bridge network has a subnet");
    let base: std::net::Ipv4Addr = subnet.split('/').next().unwrap().parse().unwrap();
    std::net::Ipv4Addr::from(u32::from(base) + 1).to_string()
}

/// Runs `nc` from the sandbox to a listener on the host (never anything external) and returns
/// the log and whether the listener saw a connection.
async fn try_reach_host(ex: &DockerExecutor, network: NetworkAccess) -> (String, bool) {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let gw = bridge_gateway(ex).await;
    let accepted = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_secs(20), listener.accept())
            .await
            .is_ok_and(|r| r.is_ok())
    });
    let ws = tempfile::tempdir().unwrap();
    let cmd = format!(
        "if echo ping | nc -w 3 {gw} {port}; then echo connect: ok; else echo connect: failed; fi"
    );
    let mut req = request(ws.path(), BUSYBOX, &cmd, 60);
    req.network = network;
    let res = ex.execute(req).await.unwrap();
    assert_eq!(res.environment_metadata.network, network);
    let saw = if res.build_log.contains("connect: ok") {
        accepted.await.unwrap()
    } else {
        accepted.abort();
        false
    };
    (res.build_log, saw)
}

#[tokio::test]
async fn the_sandbox_cannot_reach_the_network_unless_opted_in() {
    let Some(ex) = executor().await else { return };
    let (log, seen) = try_reach_host(&ex, NetworkAccess::Disabled).await;
    assert!(log.contains("connect: failed"), "{log}");
    assert!(!seen);
    // The control: the same connection works when the network is opted in, so the failure
    // above is the sandbox's doing, not a dead listener.
    let (log, seen) = try_reach_host(&ex, NetworkAccess::Enabled).await;
    assert!(log.contains("connect: ok"), "{log}");
    assert!(seen);
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn the_sandbox_has_only_loopback_and_no_privileges() {
    let Some(ex) = executor().await else { return };
    let ws = tempfile::tempdir().unwrap();
    let cmd = r#"
        echo "interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
        echo "uid: $(id -u) gid: $(id -g)"
        grep CapEff /proc/self/status
        echo "env: $(env | cut -d= -f1 | sort | tr '\n' ' ')"
        touch /bin/evil 2>/dev/null && echo rootfs: writable || echo rootfs: protected
        touch /workspace/mine && echo workspace: writable
    "#;
    let res = ex
        .execute(request(ws.path(), BUSYBOX, cmd, 60))
        .await
        .unwrap();
    let log = &res.build_log;
    assert!(log.contains("interfaces: lo \n"), "{log}");
    assert!(log.contains("uid: 65534 gid: 65534"), "{log}");
    assert!(log.contains("CapEff:\t0000000000000000"), "{log}");
    assert!(log.contains("rootfs: protected"), "{log}");
    assert!(log.contains("workspace: writable"), "{log}");
    // No host variable leaks in: only what the image and the executor set.
    let env_line = log.lines().find(|l| l.starts_with("env:")).unwrap();
    for var in env_line.trim_start_matches("env:").split_whitespace() {
        assert!(
            ["CI", "HOME", "HOSTNAME", "PATH", "PWD", "SHLVL"].contains(&var),
            "unexpected variable {var} in {env_line}"
        );
    }
    assert!(!ws.path().join("mine").exists());
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn dropping_the_future_removes_the_container() {
    let Some(ex) = executor().await else { return };
    let ws = tempfile::tempdir().unwrap();
    let fut = ex.execute(request(ws.path(), BUSYBOX, "sleep 120", 300));
    // Let it get as far as a running container, then abandon it.
    let _ = tokio::time::timeout(Duration::from_secs(3), fut).await;
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn reap_stale_removes_containers_of_a_dead_owner_only() {
    let Some(ex) = executor().await else { return };
    let Some(other) = executor().await else {
        return;
    };
    // A container labelled as if a ci-medic process that no longer exists had created it.
    let docker = ex.client();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_owned();
    let dead_labels = std::collections::HashMap::from([
        (LABEL_MANAGED.to_owned(), "true".to_owned()),
        (
            LABEL_INSTANCE.to_owned(),
            format!("{}-dead", other.instance_id()),
        ),
        (LABEL_HOST.to_owned(), host.clone()),
        (LABEL_PID.to_owned(), std::process::id().to_string()),
        // Our pid, but a start time that is not ours: the pid was reused.
        (LABEL_START.to_owned(), "1".to_owned()),
    ]);
    let mut live_labels = dead_labels.clone();
    live_labels.insert(LABEL_INSTANCE.to_owned(), other.instance_id().to_owned());
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let start = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_owned();
    live_labels.insert(LABEL_START.to_owned(), start);
    let mk = |labels| bollard::models::ContainerCreateBody {
        image: Some(BUSYBOX.to_owned()),
        cmd: Some(vec!["true".to_owned()]),
        labels: Some(labels),
        ..Default::default()
    };
    let dead = docker
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            mk(dead_labels),
        )
        .await
        .unwrap()
        .id;
    let live = docker
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            mk(live_labels),
        )
        .await
        .unwrap()
        .id;
    let reaped = ex.reap_stale().await.unwrap();
    let live_still_there = docker.inspect_container(&live, None).await.is_ok();
    let dead_gone = docker.inspect_container(&dead, None).await.is_err();
    let _ = docker
        .remove_container(
            &live,
            Some(
                bollard::query_parameters::RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .build(),
            ),
        )
        .await;
    let _ = docker
        .remove_container(
            &dead,
            Some(
                bollard::query_parameters::RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .build(),
            ),
        )
        .await;
    assert!(reaped.contains(&dead), "{reaped:?}");
    assert!(!reaped.contains(&live), "{reaped:?}");
    assert!(dead_gone && live_still_there);
    assert_no_containers_left(&ex).await;
}

#[tokio::test]
async fn a_missing_image_is_a_clear_error_naming_it() {
    let Some(ex) = executor().await else { return };
    let ws = tempfile::tempdir().unwrap();
    let err = ex
        .execute(request(
            ws.path(),
            "ci-medic-test/does-not-exist:1",
            "true",
            10,
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecutorError::ImageUnavailable { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("ci-medic-test/does-not-exist:1"),
        "{err}"
    );
    assert_no_containers_left(&ex).await;
}

/// The parser, as the fix loop runs it on an executor log (paths inside the container's
/// `/workspace` are made repo-relative).
fn python_reports(log: &str) -> Vec<BugReport> {
    ci_medic_parser::parse_str(
        log,
        &ci_medic_parser::ParseOptions::with_workspace("/workspace"),
    )
}

/// A targeted error found in the failing build, a patch, and the verified build before push:
/// the fix loop's `verify: docker` step, end to end on a workspace unpacked from a tarball.
#[tokio::test]
async fn a_patch_is_verified_before_push() {
    let Some(ex) = executor().await else { return };
    // The workspace comes from a GitHub-layout tarball, as the fix loop gets it.
    let tarball = {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        b.append_dir_all("octo-calc-0123abc", fixture("python-fail"))
            .unwrap();
        b.into_inner().unwrap().finish().unwrap()
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = extract_tarball_safely(&tarball[..], &tmp.path().join("ws")).unwrap();
    let cmd = "python3 -m py_compile broken.py && python3 -m unittest test_calc";

    let before = ex.execute(request(&root, PYTHON, cmd, 120)).await.unwrap();
    assert_ne!(before.exit_code, 0);
    assert!(
        before.build_log.contains("File \"broken.py\", line 2"),
        "{}",
        before.build_log
    );
    let targeted = python_reports(&before.build_log);
    assert_eq!(targeted.len(), 1, "{targeted:?}");
    assert_eq!(
        (targeted[0].file_path.as_str(), targeted[0].line_number),
        ("broken.py", 2)
    );

    // A patch that does not fix it: still there, so not pushed.
    let wrong = std::fs::read_to_string(root.join("broken.py"))
        .unwrap()
        .replace("name +", "name + (");
    apply_files(&root, &[("broken.py", wrong.as_str())]).unwrap();
    let after_wrong = ex.execute(request(&root, PYTHON, cmd, 120)).await.unwrap();
    let still = python_reports(&after_wrong.build_log);
    assert_eq!(targeted_errors_remaining(&targeted, &still), targeted);

    // The real fix: the syntax error is gone; the failing test is a different, untargeted error.
    let fixed = std::fs::read_to_string(fixture("python-fail/broken.py.fixed")).unwrap();
    apply_files(&root, &[("broken.py", fixed.as_str())]).unwrap();
    let after = ex.execute(request(&root, PYTHON, cmd, 120)).await.unwrap();
    assert!(
        !after.build_log.contains("SyntaxError"),
        "{}",
        after.build_log
    );
    assert!(
        after.build_log.contains("FAIL: test_add"),
        "{}",
        after.build_log
    );
    let after_reports = python_reports(&after.build_log);
    assert_eq!(after_reports.len(), 1, "{after_reports:?}");
    assert_eq!(after_reports[0].error_type, BugType::Logic);
    assert!(targeted_errors_remaining(&targeted, &after_reports).is_empty());
    assert_no_containers_left(&ex).await;
}
