//! `cargo clippy --fix` on a crate with dependencies, end to end: the project's clippy job
//! fails → proposal → `/approve` → the tool tier fetches the crate's dependencies into a
//! cached image (with a network, nothing of the repository run), clippy fixes the lint offline
//! → the pushed commit's re-run job passes. In a test binary of its own: it builds the
//! dependencies several times, and beside the other tool tier tests on a small machine their
//! 30-second waits for the fake CI ran out.
//!
//! Needs a Docker engine, `ci-medic-fixer/rust` (`.ci/fixer-images.sh`) and crates.io
//! reachable from containers; without the engine or image it says it was skipped, and with
//! `CI=true` it fails instead.

mod common;

use std::path::Path;
use std::process::Command;

use common::image::image_available;
use common::world::*;

/// Every file of the fixture tree `bitset/`, repo-relative, with its text.
fn bitset_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tool_tier/bitset");
    let mut out: Vec<(String, String)> = [
        "Cargo.toml",
        "Cargo.lock",
        "src/lib.rs",
        "benches/bench.rs",
        "LICENSE-APACHE",
        "LICENSE-MIT",
    ]
    .iter()
    .map(|f| {
        (
            f.to_string(),
            std::fs::read_to_string(root.join(f)).unwrap(),
        )
    })
    .collect();
    out.sort();
    out
}

/// Runs a cargo `command` (the machine's toolchain in the Rust image) on a copy of `files` at an
/// Actions checkout path, WITH a network, as a project's CI job does (it fetches the crate's
/// dependencies); `cache` holds its `CARGO_HOME` and target directory between runs, so only the
/// first run downloads and builds the dependencies. Exit code and output.
fn cargo_job(cache: &Path, files: &[(String, String)], command: &str) -> (i32, String) {
    const CHECKOUT: &str = "/home/runner/work/shop/shop";
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = Command::new("docker")
        .args(["run", "--rm", "-v"])
        .arg(format!("{}:{CHECKOUT}", dir.path().display()))
        .arg("-v")
        .arg(format!("{}:/cache", cache.display()))
        .args([
            "-e",
            "CARGO_HOME=/cache/home",
            "-e",
            "CARGO_TARGET_DIR=/cache/target",
            "-e",
            "CARGO_HTTP_CAINFO=/etc/ssl/certs/ca-certificates.crt",
            "-w",
            CHECKOUT,
            "ci-medic-fixer/rust",
            "sh",
            "-c",
        ])
        .arg(format!("PATH=/opt/rust/bin:$PATH {command}"))
        .output()
        .expect("docker CLI");
    let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), log)
}

/// `cargo clippy --fix` on a crate with dependencies (bit-set 0.8.0: bit-vec, and rand and
/// serde_json for its tests, whose build scripts need a C linker): the project's clippy job, run
/// with `-D clippy::all`, fails on `manual_is_multiple_of`; the tool tier fetches the locked
/// dependencies once into a cached image (with a network, the repository's `.cargo` left out:
/// a dead proxy configured there does not stop it), then clippy fixes exactly that lint offline
/// (not rustc's own `mismatched_lifetime_syntaxes` suggestion elsewhere in the file); the fix
/// is pushed and the re-run job passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clippy_fixes_a_crate_whose_dependencies_are_fetched_first() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};

    const RUST_IMAGE: &str = "ci-medic-fixer/rust";
    if !image_available(RUST_IMAGE).await {
        return;
    }
    // Cold: no cached dependency image (only this test makes them).
    let out = Command::new("docker")
        .args(["images", "--format", "{{.Repository}}:{{.Tag}}", RUST_IMAGE])
        .output()
        .unwrap();
    for tag in String::from_utf8_lossy(&out.stdout).lines() {
        if tag.contains(":pin-cargo-deps-") {
            let _ = Command::new("docker").args(["rmi", tag]).output();
        }
    }
    let files = bitset_files();
    let job = "cargo clippy --quiet --workspace --tests --examples -- -D clippy::all";
    let cache = tempfile::tempdir().unwrap();
    let (code, log) = cargo_job(cache.path(), &files, job);
    assert_ne!(code, 0, "the real clippy job fails on bit-set:\n{log}");
    assert!(log.contains("manual_is_multiple_of"), "{log}");

    // The fetch step alone, on the tree with a `.cargo/config.toml` whose proxy is dead: it is
    // not read (cargo would fail to reach crates.io through it).
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let with_config = tempfile::tempdir().unwrap();
    for (path, text) in files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .chain([(".cargo/config.toml", "[http]\nproxy = \"127.0.0.1:9\"\n")])
    {
        let p = with_config.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let base = docker.client().inspect_image(RUST_IMAGE).await.unwrap();
    let started = std::time::Instant::now();
    let image = ci_medic::fix_agent::pins::cargo_deps_image(
        docker.client(),
        RUST_IMAGE,
        base.id.as_deref().unwrap(),
        "",
        with_config.path(),
        "00000000000000000000",
        8,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "cargo fetch into a cached image: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let _ = Command::new("docker").args(["rmi", &image]).output();

    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let w = world_with(&[], &borrowed).await;
    let (all, cache_dir) = (files.clone(), cache.path().to_path_buf());
    w.fake.set_ci_script(REPO, CHECK, move |pushed| {
        let now = tree_as_pushed(&all, pushed);
        let (code, log) = cargo_job(&cache_dir, &now, job);
        let conclusion = if code == 0 { "success" } else { "failure" };
        (conclusion.into(), log.into_bytes())
    });
    let check = fail_check(&w, &w.head, log.as_bytes());
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert!(body.contains("src/lib.rs"), "{body}");
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        let s = status_line(b);
        (s.contains("executed") && b.contains("passed")) || s.contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    assert!(
        commit.message.contains(
            "Applied clippy's fix for clippy::manual_is_multiple_of to `src/lib.rs` with clippy 1."
        ),
        "{}",
        commit.message
    );
    let pushed = String::from_utf8(w.fake.file_at(REPO, &new_head, "src/lib.rs").unwrap()).unwrap();
    let original = &files.iter().find(|(p, _)| p == "src/lib.rs").unwrap().1;
    let diff: Vec<(usize, &str, &str)> = original
        .lines()
        .zip(pushed.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a, b))
        .collect();
    assert_eq!(
        diff,
        [(
            81,
            "    if bits % B::bits() == 0 {",
            "    if bits.is_multiple_of(B::bits()) {"
        )]
    );
    let deps = Command::new("docker")
        .args(["images", "--format", "{{.Tag}}", RUST_IMAGE])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&deps.stdout).contains("pin-cargo-deps-"),
        "the dependencies are cached in an image of their own"
    );
    assert!(w.server.terminate().success());
}
