//! The container image, built from the repository's own `Dockerfile` and run as an operator
//! would: its labels, user, volume and health check, then a failed check handled end to end by
//! the containerised `serve` against the fake GitHub, and a clean stop on `docker stop`.
//!
//! The image is the Dockerfile's `prebuilt` target around this test build's binary, on the
//! Debian base `.ci/docker-setup.sh` assembles from Debian packages (Docker Hub cannot be
//! reached from CI). The default `runtime` target, whose builder stage compiles the sources, is
//! built too, on a builder base assembled around the machine's Rust toolchain.
//! Without a Docker engine these tests print why and skip, except under `CI=true`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::image::*;
use common::world::*;
use common::*;

/// Builds the image once for the tests of this file (they run in parallel); returns the
/// build's seconds.
fn build_image(base: &str) -> f64 {
    static BUILT: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *BUILT.get_or_init(|| build_prebuilt(base))
}

/// The builder base `.ci/docker-setup.sh` assembles around the machine's Rust toolchain;
/// `CI_MEDIC_BUILDER_IMAGE` names another (`rust:1-slim-bookworm` where Docker Hub answers).
const LOCAL_BUILDER: &str = "ci-medic-base/rust:bookworm";
const SOURCE_TAG: &str = "ci-medic-test/app:source";

/// The builder image, or `None` (skip) when it is missing outside CI.
fn builder_image() -> Option<String> {
    let builder = std::env::var("CI_MEDIC_BUILDER_IMAGE").unwrap_or_else(|_| LOCAL_BUILDER.into());
    if !docker(&["image", "inspect", &builder]).status.success() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but the builder image {builder} is missing (run .ci/docker-setup.sh)"
        );
        eprintln!("skipped: builder image {builder} missing (run .ci/docker-setup.sh)");
        return None;
    }
    Some(builder)
}

/// A docker client that can build with BuildKit, which the builder stage's cache mounts need:
/// one with the buildx plugin, or an engine-era client (before 23.0, such as Debian 12's
/// docker.io) that drives the engine's own BuildKit without a plugin.
fn buildkit_client() -> Option<PathBuf> {
    if docker(&["buildx", "version"]).status.success() {
        return Some(PathBuf::from("docker"));
    }
    let debian = PathBuf::from("/usr/bin/docker");
    let major = Command::new(&debian)
        .args(["version", "--format", "{{.Client.Version}}"])
        .output()
        .ok()
        .and_then(|o| {
            let v = String::from_utf8_lossy(&o.stdout).to_string();
            v.split('.').next()?.trim().parse::<u32>().ok()
        });
    if matches!(major, Some(m) if m < 23) {
        return Some(debian);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but no docker client here builds with BuildKit (no buildx, no pre-23 client)"
    );
    eprintln!("skipped: no docker client here builds with BuildKit");
    None
}

/// The Dockerfile's default target as a user builds it: the builder stage compiles the
/// repository (the build context is the checkout, filtered by `.dockerignore`) with BuildKit
/// cache mounts, and the runtime stage gets only the binary. CI builds with the `image-check`
/// profile (release settings, no optimisation) to keep it to minutes; the steps are the same.
/// The binary it produced then runs the whole loop (`demo`) inside the image, with no network.
#[test]
fn the_dockerfile_builds_the_binary_from_source_and_the_loop_runs_in_it() {
    let Some(base) = base_image() else { return };
    let Some(builder) = builder_image() else {
        return;
    };
    let Some(client) = buildkit_client() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let _ = docker(&["rmi", "--no-prune", SOURCE_TAG]);
    let started = Instant::now();
    let out = Command::new(&client)
        .env("DOCKER_BUILDKIT", "1")
        .args(["build", "--progress", "plain", "-t", SOURCE_TAG])
        .arg("--build-arg")
        .arg(format!("BUILDER_IMAGE={builder}"))
        .arg("--build-arg")
        .arg(format!("RUNTIME_IMAGE={base}"))
        .args(["--build-arg", "CARGO_PROFILE=image-check"])
        .arg(root)
        .output()
        .expect("docker build runs");
    let secs = started.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "docker build from source failed after {secs:.0} s:\n{}",
        log.lines()
            .rev()
            .take(60)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The builder stage really compiled, or BuildKit reused the layer an earlier build on this
    // engine compiled from exactly these sources (a machine whose engine keeps its cache
    // between runs: the `COPY . .` layer's key is the checkout's content).
    let how = match builder_step(&log) {
        BuilderStep::Compiled => "compiled",
        BuilderStep::Cached => "reused from an earlier build of the same sources",
        BuilderStep::Missing => panic!("the builder stage did not compile ci-medic:\n{log}"),
    };
    println!("image built from source ({builder}, profile image-check) in {secs:.0} s: {how}");

    let version = docker_ok(&["run", "--rm", "--network", "none", SOURCE_TAG, "--version"]);
    assert_eq!(version, format!("ci-medic {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(inspect(SOURCE_TAG, "{{.Config.User}}"), "10001:10001");

    // `demo` is the whole loop (failure, proposal, approval, push, verdict) against the fake
    // GitHub on the container's loopback: the binary the builder made works, not just starts.
    let started = Instant::now();
    let demo = docker(&["run", "--rm", "--network", "none", SOURCE_TAG, "demo"]);
    let stdout = String::from_utf8_lossy(&demo.stdout);
    assert!(
        demo.status.success() && stdout.contains("**executed**"),
        "demo in the image failed: {}\n{stdout}{}",
        demo.status,
        String::from_utf8_lossy(&demo.stderr)
    );
    println!(
        "demo in the image: the loop ran to executed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The image (~150 MB) goes; its layers stay as the next build's cache.
    let _ = docker(&["rmi", "--no-prune", SOURCE_TAG]);
}

/// What BuildKit's plain progress says the builder stage's `cargo build` step did.
#[derive(Debug, PartialEq)]
enum BuilderStep {
    Compiled,
    Cached,
    Missing,
}

/// Reads the plain progress: the step is `#N [builder k/k] RUN … cargo build …`, followed either
/// by cargo's own lines (`#N 12.3    Compiling ci-medic v…`) or by `#N CACHED`.
fn builder_step(log: &str) -> BuilderStep {
    let Some(id) = log.lines().find_map(|line| {
        let (id, rest) = line.split_once(' ')?;
        (id.starts_with('#') && rest.starts_with("[builder ") && rest.contains("cargo build"))
            .then_some(id)
    }) else {
        return BuilderStep::Missing;
    };
    let step_lines = || {
        log.lines()
            .filter_map(|l| l.strip_prefix(id)?.strip_prefix(' '))
    };
    if step_lines().any(|l| l.contains("Compiling ci-medic ")) {
        BuilderStep::Compiled
    } else if step_lines().any(|l| l.trim() == "CACHED") {
        BuilderStep::Cached
    } else {
        BuilderStep::Missing
    }
}

#[test]
fn the_builder_step_is_read_from_buildkits_plain_progress() {
    // Lines as the engine's BuildKit (Docker 20.10, `--progress plain`) printed them here.
    let cached = "#10 [builder 3/4] COPY . .\n#10 CACHED\n\n#11 [builder 4/4] RUN --mount=type=cache,target=/usr/local/cargo/registry     --mount=type=cache,target=/build/target     cargo build --profile \"image-check\" --locked --bin ci-medic\n#11 CACHED\n";
    assert_eq!(builder_step(cached), BuilderStep::Cached);
    let compiled = cached.replace(
        "#11 CACHED",
        "#11 41.20    Compiling ci-medic v0.1.0 (/build)\n#11 DONE 98.1s",
    );
    assert_eq!(builder_step(&compiled), BuilderStep::Compiled);
    // A cached step elsewhere does not count for the builder's compile.
    let other = cached.replace("#11 CACHED", "#11 DONE 0.1s");
    assert_eq!(builder_step(&other), BuilderStep::Missing);
    assert_eq!(builder_step(""), BuilderStep::Missing);
}

/// Removes the container however the test ends.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.0]);
    }
}

fn inspect(target: &str, format: &str) -> String {
    docker_ok(&["inspect", "--format", format, target])
}

#[test]
fn the_image_says_what_it_is_and_runs_unprivileged() {
    let Some(base) = base_image() else { return };
    let secs = build_image(&base);
    println!("image built in {secs:.1} s");

    let label = |name: &str| {
        inspect(
            TAG,
            &format!("{{{{index .Config.Labels \"org.opencontainers.image.{name}\"}}}}"),
        )
    };
    assert_eq!(label("title"), "ci-medic");
    // The Dockerfile's default version is the crate's: a release that forgets one is caught.
    assert_eq!(label("version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(
        label("revision"),
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(label("licenses"), "MIT");
    assert_eq!(label("base.name"), base);
    assert!(!label("source").is_empty() && !label("description").is_empty());

    assert_eq!(inspect(TAG, "{{.Config.User}}"), "10001:10001");
    assert_eq!(
        inspect(TAG, "{{json .Config.Entrypoint}}"),
        r#"["/usr/local/bin/ci-medic"]"#
    );
    assert_eq!(inspect(TAG, "{{json .Config.Cmd}}"), r#"["serve"]"#);
    assert!(inspect(TAG, "{{json .Config.Volumes}}").contains("\"/data\""));
    assert!(inspect(TAG, "{{json .Config.ExposedPorts}}").contains("3000/tcp"));
    assert_eq!(inspect(TAG, "{{.Config.StopSignal}}"), "SIGTERM");
    let env = inspect(TAG, "{{json .Config.Env}}");
    for want in [
        "DATA_DIR=/data",
        "HOST=0.0.0.0",
        "PORT=3000",
        "LOG_FORMAT=json",
    ] {
        assert!(env.contains(want), "{want} missing from {env}");
    }

    // DATA_DIR belongs to the unprivileged user alone; CA certificates are there for TLS.
    let stat = docker_ok(&[
        "run",
        "--rm",
        "--network",
        "none",
        "--entrypoint",
        "stat",
        TAG,
        "-c",
        "%a %U",
        "/data",
    ]);
    assert_eq!(stat, "700 ci-medic");
    docker_ok(&[
        "run",
        "--rm",
        "--network",
        "none",
        "--entrypoint",
        "test",
        TAG,
        "-s",
        "/etc/ssl/certs/ca-certificates.crt",
    ]);
    let version = docker_ok(&["run", "--rm", "--network", "none", TAG, "--version"]);
    assert_eq!(version, format!("ci-medic {}", env!("CARGO_PKG_VERSION")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_containerised_service_proposes_a_fix_pushes_it_and_stops_cleanly() {
    let Some(base) = base_image() else { return };
    build_image(&base);

    let main = src("app/main.py");
    let pyproject = src("pyproject.toml");
    let feature = [
        FileEntry {
            path: "app/main.py",
            mode: "100644",
            content: main.as_bytes(),
        },
        FileEntry {
            path: "pyproject.toml",
            mode: "100644",
            content: pyproject.as_bytes(),
        },
    ];
    let (fake, _base, head) = seeded_fake(&[], &feature).await;
    let port = free_port();
    let key = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pem"),
    )
    .unwrap();

    // Host networking: the container reaches the fake on loopback and the fake reaches the
    // container's port, as a replica behind a proxy would be reached.
    let env = [
        "APP_ID=4242".to_string(),
        format!("PRIVATE_KEY={key}"),
        format!("WEBHOOK_SECRET={SECRET}"),
        format!("GITHUB_API_URL={}", fake.base_url()),
        "HOST=127.0.0.1".to_string(),
        format!("PORT={port}"),
        "WORKERS=2".to_string(),
        "GITHUB_WRITE_INTERVAL_MS=50".to_string(),
        "SHUTDOWN_GRACE_SECONDS=5".to_string(),
    ];
    let mut args: Vec<String> = ["run", "-d", "--network", "host"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for e in &env {
        args.push("-e".into());
        args.push(e.clone());
    }
    // The Dockerfile's own health check, run every second instead of every 30.
    args.extend([
        "--health-interval=1s".into(),
        "--health-start-period=0s".into(),
    ]);
    args.push(TAG.into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let container = Container(docker_ok(&argv));

    let started = Instant::now();
    loop {
        let health = inspect(&container.0, "{{.State.Health.Status}}");
        if health == "healthy" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not healthy after 60 s ({health}); logs:\n{}",
            logs(&container.0)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    println!("healthy after {:.1} s", started.elapsed().as_secs_f64());

    fake.set_webhook(
        &format!("http://127.0.0.1:{port}/api/github/webhooks"),
        SECRET,
    );
    let check = fake.add_check_run(
        REPO,
        &head,
        CHECK,
        "github-actions",
        "failure",
        fake_github::CheckOutput::default(),
    );
    fake.set_job_log(REPO, check, &corpus("logs/actions/ruff_unused_import.log"));
    let payload = fake.check_run_completed_payload(check).unwrap();
    let d = fake.deliver("check_run", &payload).await.unwrap();
    assert_eq!(d.status, 202, "logs:\n{}", logs(&container.0));

    let proposal = wait_for_comment(&fake, &container.0, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&proposal)[1].clone()).unwrap();
    let c = fake.add_comment(REPO, 7, "maintainer", &format!("/approve {}", dds.id));
    let payload = fake.issue_comment_created_payload(c).unwrap();
    fake.deliver("issue_comment", &payload).await.unwrap();

    let pushed = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.branch_head(REPO, "feature").filter(|h| *h != head)
        })
        .await;
    let pushed = pushed.unwrap_or_else(|| panic!("nothing pushed; logs:\n{}", logs(&container.0)));
    let fixed = fake.file_at(REPO, &pushed, "app/main.py").unwrap();
    assert!(!String::from_utf8_lossy(&fixed).contains("import os"));

    // `docker stop` sends the image's STOPSIGNAL and waits 10 s before SIGKILL.
    let stopping = Instant::now();
    docker_ok(&["stop", &container.0]);
    let stop_secs = stopping.elapsed().as_secs_f64();
    assert_eq!(inspect(&container.0, "{{.State.ExitCode}}"), "0");
    // 0, not 137: it stopped on SIGTERM, not by the SIGKILL at the end of the grace.
    println!("docker stop: exit 0 after {stop_secs:.2} s");
}

async fn wait_for_comment(
    fake: &fake_github::FakeGitHub,
    container: &str,
    pred: impl Fn(&str) -> bool,
) -> String {
    let found = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, 7)
                .into_iter()
                .find(|c| c.via_app && pred(&c.body))
                .map(|c| c.body)
        })
        .await;
    found.unwrap_or_else(|| panic!("no comment; logs:\n{}", logs(container)))
}

fn logs(container: &str) -> String {
    let out = docker(&["logs", container]);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
