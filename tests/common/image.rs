//! The ci-medic image for tests that run it: the Dockerfile's `prebuilt` target around this
//! test build's binary, on the Debian base `.ci/docker-setup.sh` assembles (Docker Hub cannot
//! be reached from CI). Shared by `tests/docker_image.rs` and `tests/compose_stack.rs`: both
//! build the same tag from the same binary, so the second build is the first's cache.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The base `.ci/docker-setup.sh` builds with debootstrap; `CI_MEDIC_RUNTIME_IMAGE` names another.
pub const LOCAL_BASE: &str = "ci-medic-base/debian:bookworm-slim";
pub const TAG: &str = "ci-medic-test/app:ci";

pub fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .expect("docker client runs")
}

pub fn docker_ok(args: &[&str]) -> String {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The base image to build on, or `None` (skip) when there is no engine or base outside CI.
pub fn base_image() -> Option<String> {
    let base = std::env::var("CI_MEDIC_RUNTIME_IMAGE").unwrap_or_else(|_| LOCAL_BASE.into());
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let engine = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !engine {
        assert!(!ci, "CI=true but no Docker engine answers");
        eprintln!("skipped: no Docker engine (run .ci/docker-setup.sh)");
        return None;
    }
    if !docker(&["image", "inspect", &base]).status.success() {
        assert!(!ci, "CI=true but the base image {base} is missing");
        eprintln!("skipped: base image {base} missing (run .ci/docker-setup.sh)");
        return None;
    }
    Some(base)
}

/// Builds the `prebuilt` target around this test build's binary; returns the build's seconds.
pub fn build_prebuilt(base: &str) -> f64 {
    let ctx = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join("Dockerfile"), ctx.path().join("Dockerfile")).unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ci-medic"));
    // A hard link when the temporary directory shares the target's file system: the debug
    // binary is over 100 MB.
    if std::fs::hard_link(&bin, ctx.path().join("ci-medic")).is_err() {
        std::fs::copy(&bin, ctx.path().join("ci-medic")).unwrap();
    }
    // The previous build's image would stay behind, untagged, at every run (350 MB with a debug
    // binary); its parents stay as the build cache.
    let _ = docker(&["rmi", "--no-prune", TAG]);
    let revision = "0123456789abcdef0123456789abcdef01234567";
    let mut cmd = Command::new("docker");
    // The classic builder needs nothing but the engine; BuildKit needs the buildx plugin,
    // which Debian's docker.io does not ship.
    let buildx = docker(&["buildx", "version"]).status.success();
    cmd.env("DOCKER_BUILDKIT", if buildx { "1" } else { "0" });
    cmd.args(["build", "-q", "--target", "prebuilt", "-t", TAG])
        .arg("--build-arg")
        .arg(format!("RUNTIME_IMAGE={base}"))
        .arg("--build-arg")
        .arg(format!("REVISION={revision}"))
        .arg(ctx.path());
    let started = Instant::now();
    let out = cmd.output().expect("docker build runs");
    assert!(
        out.status.success(),
        "docker build failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed().as_secs_f64()
}

/// Whether the engine and `image` are there; under `CI=true` their absence fails the test.
pub async fn image_available(image: &str) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let ok = match bollard::Docker::connect_with_defaults() {
        Ok(d) => d.ping().await.is_ok() && d.inspect_image(image).await.is_ok(),
        Err(_) => false,
    };
    if !ok {
        assert!(
            !ci,
            "CI=true but no Docker engine with {image} (run .ci/docker-setup.sh and .ci/fixer-images.sh)"
        );
        eprintln!("skipping: no Docker engine with {image} (run .ci/fixer-images.sh)");
    }
    ok
}
