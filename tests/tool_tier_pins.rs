//! The versions a project pins, as the tool tier honours them with real installs from PyPI and
//! npm into cached fixer images: ranges (a PEP 440 specifier, Poetry's caret, an npm tilde
//! range with no lockfile), the exact pins of isort, ruff and ESLint, and the bound on the cache
//! of pinned-version images (`FIXER_PINNED_IMAGES`).
//!
//! Each case runs the project's tool through `ToolTier::fix` on real files (`fixtures/tool_tier/`,
//! provenance in its README), on a report the parser made of the real job's output (or of a
//! real CI log from the corpus), then checks the version the reason names against the installed
//! tool's own `--version`, and runs that tool's own check on the result.
//!
//! Needs a Docker engine, the fixer images (`.ci/fixer-images.sh`) and PyPI and npm reachable
//! from containers; without the engine or images it says it was skipped, and with `CI=true` it
//! fails instead.

use std::path::Path;
use std::process::Command;

mod common;

use common::image::image_available;
use common::world::tool_tier_fixture;

use ci_medic::executor::{DockerExecutor, SandboxSettings};
use ci_medic::fix_agent::FixInput;
use ci_medic::fix_agent::tool_tier::{ToolFix, ToolTier};
use ci_medic_parser::{BugReport, ParseOptions, parse_str};

const PY: &str = "ci-medic-fixer/python";
const NODE: &str = "ci-medic-fixer/node";
const BUSYBOX: &str = "ci-medic-test/busybox";
/// Where the jobs run: an Actions checkout path, which the parser strips.
const CHECKOUT: &str = "/home/runner/work/shop/shop";

/// A tree of fixture files (`dir/file` → `file`) and the project's own files.
fn tree(dir: &str, fixtures: &[&str], own: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let p = root.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    for f in fixtures {
        write(f, &tool_tier_fixture(&format!("{dir}/{f}")));
    }
    for (f, text) in own {
        write(f, text);
    }
    root
}

/// Runs `command` with `/bin/sh -c` in `image` on `root` mounted at the checkout path, with no
/// network; exit code and output (stdout and stderr).
fn sh(image: &str, root: &Path, command: &str) -> (i32, String) {
    let out = Command::new("docker")
        .args(["run", "--rm", "--network", "none", "-v"])
        .arg(format!("{}:{CHECKOUT}", root.display()))
        .args(["-w", CHECKOUT, image, "sh", "-c", command])
        .output()
        .expect("docker CLI");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// The parser's report on `file` from `log`.
fn report(log: &str, file: &str) -> BugReport {
    let opts = ParseOptions {
        workspace: Some(CHECKOUT.into()),
    };
    parse_str(log, &opts)
        .into_iter()
        .find(|r| r.file_path == file)
        .unwrap_or_else(|| panic!("no report on {file} in:\n{log}"))
}

/// The report of the job `job` run by the default image on `root`, which must fail.
fn job_report(image: &str, root: &Path, job: &str, file: &str) -> BugReport {
    let (code, log) = sh(image, root, job);
    assert_ne!(code, 0, "the job `{job}` must fail:\n{log}");
    report(&log, file)
}

fn remove_image(name: &str) {
    let _ = Command::new("docker").args(["rmi", name]).output();
}

fn image_id(name: &str) -> Option<String> {
    let out = Command::new("docker")
        .args(["image", "inspect", "-f", "{{.Id}}", name])
        .output()
        .expect("docker CLI");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

async fn tier() -> ToolTier {
    ToolTier::new(
        DockerExecutor::connect(SandboxSettings::default())
            .await
            .unwrap(),
    )
}

async fn fix(tier: &ToolTier, root: &Path, report: BugReport) -> ToolFix {
    let text = std::fs::read_to_string(root.join(&report.file_path)).unwrap();
    tier.fix(root, &FixInput::new(report, text))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The fix written into `root`, then `check` run there by the image the fix ran in: the
/// installed tool's own `--version` and check.
fn own_check(fix: &ToolFix, root: &Path, file: &str, check: &str) {
    std::fs::write(root.join(file), &fix.output.patched_content).unwrap();
    let (code, out) = sh(&fix.image, root, check);
    assert_eq!(code, 0, "`{check}` in {}:\n{out}", fix.image);
}

/// black pinned as ranges: a PEP 440 range the image's 23.1.0 is outside installs the newest
/// black in it (23.12.1, read back from pip's install, not assumed), cached under that version;
/// another range that holds the cached version reuses it; Poetry's `^23.1` holds the image's
/// black, which is used and said so; a direct URL is not a range, and the reason says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn black_ranges_use_the_image_when_it_satisfies_them_and_install_the_newest_otherwise() {
    if !image_available(PY).await {
        return;
    }
    let pinned = "ci-medic-fixer/python:pin-black-23.12.1";
    remove_image(pinned);
    let file = "pyDOE3/doe_gsd.py";
    let log = String::from_utf8(
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/corpus/real/python/fmt-issues/pydoe3_black_check.log"),
        )
        .unwrap(),
    )
    .unwrap();
    let tier = tier().await;
    let with = |own: &[(&str, &str)]| tree("pydoe3", &[file], own);

    let root = with(&[("requirements-dev.txt", "black~=23.12.0\n")]);
    let first = fix(&tier, root.path(), report(&log, file)).await;
    assert_eq!(
        first.output.fix_reason,
        format!(
            "Reformatted `{file}` with black 23.12.1 (requirements-dev.txt pins `~=23.12.0`; the newest version satisfying it was installed from PyPI into a cached fixer image)"
        )
    );
    assert_eq!(first.image, pinned);
    own_check(
        &first,
        root.path(),
        file,
        &format!("black --version | grep -q '^black, 23.12.1 ' && black --check -q {file}"),
    );
    let made = image_id(pinned).expect("cached");

    // Another range holding 23.12.1: the cached image, no second install.
    let root = with(&[("requirements-dev.txt", "black >=23.10, <24\n")]);
    let again = fix(&tier, root.path(), report(&log, file)).await;
    assert_eq!(again.image, pinned);
    assert!(
        again.output.fix_reason.ends_with(
            "with black 23.12.1 (requirements-dev.txt pins `>=23.10, <24`, which this version satisfies; installed from PyPI earlier, from a cached fixer image)"
        ),
        "{}",
        again.output.fix_reason
    );
    assert_eq!(image_id(pinned), Some(made));
    assert_eq!(again.output.patched_content, first.output.patched_content);

    // Poetry's caret holds the image's black 23.1.0.
    let poetry = "[tool.poetry.group.dev.dependencies]\nblack = \"^23.1\"\n";
    let root = with(&[("pyproject.toml", poetry)]);
    let image = fix(&tier, root.path(), report(&log, file)).await;
    assert_eq!(image.image, PY);
    assert!(
        image.output.fix_reason.ends_with(
            "with black 23.1.0 (pyproject.toml pins `^23.1`, which the fixer image's version satisfies)"
        ),
        "{}",
        image.output.fix_reason
    );

    // A direct reference is no version range: the image's black, and why.
    let root = with(&[(
        "requirements-dev.txt",
        "black @ git+https://github.com/psf/black\n",
    )]);
    let url = fix(&tier, root.path(), report(&log, file)).await;
    assert_eq!(url.image, PY);
    assert!(
        url.output.fix_reason.ends_with(
            "with black 23.1.0 (the configured default: requirements-dev.txt pins `@ git+https://github.com/psf/black`, a form ci-medic does not read: `@ git+https://github.com/psf/black` is not a version)"
        ),
        "{}",
        url.output.fix_reason
    );
}

/// prettier pinned as `~3.0` in `package.json` with no lockfile: the image's 3.3.3 is outside
/// it, so npm installs the newest 3.0.x; the reason names the version npm installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_npm_range_without_a_lockfile_installs_the_newest_version_in_it() {
    if !image_available(NODE).await {
        return;
    }
    let pinned = "ci-medic-fixer/node:pin-prettier-3.0.3";
    // Cold: no cached prettier that `~3.0` holds (an exact pin's 3.0.0 would be used).
    remove_image(pinned);
    remove_image("ci-medic-fixer/node:pin-prettier-3.0.0");
    let file = "src/api/status/src/server.js";
    let package = r#"{"devDependencies": {"prettier": "~3.0"}}"#;
    let root = tree(
        "telescope-restyled",
        &[file, ".prettierrc", ".prettierignore"],
        &[("package.json", package)],
    );
    let log = String::from_utf8(
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/corpus/real/javascript/fmt-issues/telescope_prettier_check.log"),
        )
        .unwrap(),
    )
    .unwrap();
    let fixed = fix(&tier().await, root.path(), report(&log, file)).await;
    assert_eq!(
        fixed.output.fix_reason,
        format!(
            "Reformatted `{file}` with prettier 3.0.3 (package.json pins `~3.0`; the newest version satisfying it was installed from npm into a cached fixer image)"
        )
    );
    assert_eq!(fixed.image, pinned);
    own_check(
        &fixed,
        root.path(),
        file,
        &format!("test \"$(prettier --version)\" = 3.0.3 && prettier --check {file}"),
    );
}

/// isort pinned exactly (5.12.0; the image has 5.6.4) sorts ibis-bigquery's imports; its own
/// `--check-only` passes on the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_isort_is_installed_and_used() {
    if !image_available(PY).await {
        return;
    }
    let pinned = "ci-medic-fixer/python:pin-isort-5.12.0";
    remove_image(pinned);
    let file = "ibis_bigquery/__init__.py";
    let root = tree(
        "ibis",
        &[file, "setup.cfg"],
        &[("requirements-lint.txt", "isort==5.12.0\n")],
    );
    let report = job_report(PY, root.path(), &format!("isort --check-only {file}"), file);
    let fixed = fix(&tier().await, root.path(), report).await;
    assert_eq!(
        fixed.output.fix_reason,
        format!(
            "Sorted the imports of `{file}` with isort 5.12.0 (pinned in requirements-lint.txt; installed from PyPI into a cached fixer image)"
        )
    );
    assert_eq!(fixed.image, pinned);
    own_check(
        &fixed,
        root.path(),
        file,
        &format!("isort --version-number | grep -qx 5.12.0 && isort --check-only {file}"),
    );
}

/// ruff pinned exactly (0.5.0; the image has 0.6.9) applies UP032 to ibis-bigquery's client
/// with the project's `ruff.toml`; its own check of the rule passes on the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_ruff_is_installed_and_used() {
    if !image_available(PY).await {
        return;
    }
    let pinned = "ci-medic-fixer/python:pin-ruff-0.5.0";
    remove_image(pinned);
    let file = "ibis_bigquery/client.py";
    let root = tree(
        "ibis",
        &[file],
        &[
            ("ruff.toml", "[lint]\nselect = [\"UP032\"]\n"),
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n[project.optional-dependencies]\nlint = [\"ruff==0.5.0\"]\n",
            ),
        ],
    );
    let report = job_report(
        PY,
        root.path(),
        &format!("ruff check --no-cache {file}"),
        file,
    );
    assert_eq!(report.rule.as_deref(), Some("UP032"));
    let fixed = fix(&tier().await, root.path(), report).await;
    assert_eq!(
        fixed.output.fix_reason,
        format!(
            "Applied the fix for UP032 to `{file}` with ruff 0.5.0 (pinned in pyproject.toml; installed from PyPI into a cached fixer image)"
        )
    );
    assert_eq!(fixed.image, pinned);
    own_check(
        &fixed,
        root.path(),
        file,
        &format!("test \"$(ruff --version)\" = 'ruff 0.5.0' && ruff check --no-cache {file}"),
    );
}

/// ESLint pinned by the lockfile (9.0.0; the image has 9.13.0) applies `curly` to telescope's
/// server with the project's flat config; the driver's check, by that ESLint, passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_eslint_is_installed_and_used() {
    if !image_available(NODE).await {
        return;
    }
    let pinned = "ci-medic-fixer/node:pin-eslint-9.0.0";
    remove_image(pinned);
    let file = "src/api/status/src/server.js";
    let lock =
        r#"{"lockfileVersion": 3, "packages": {"node_modules/eslint": {"version": "9.0.0"}}}"#;
    let root = tree(
        "telescope",
        &[file],
        &[
            (
                "eslint.config.mjs",
                "export default [{ rules: { curly: \"error\" } }];\n",
            ),
            ("package-lock.json", lock),
        ],
    );
    let report = job_report(NODE, root.path(), "eslint src", file);
    assert_eq!(report.rule.as_deref(), Some("curly"));
    let fixed = fix(&tier().await, root.path(), report).await;
    assert_eq!(
        fixed.output.fix_reason,
        format!(
            "Applied ESLint's fix for curly to `{file}` with eslint 9.0.0 (pinned in package-lock.json; installed from npm into a cached fixer image)"
        )
    );
    assert_eq!(fixed.image, pinned);
    let driver = ci_medic_core::tool_tier::ESLINT_SCRIPT.replace('\'', r"'\''");
    own_check(
        &fixed,
        root.path(),
        file,
        &format!(
            "test \"$(eslint --version)\" = v9.0.0 && node -e '{driver}' -- check curly {file}"
        ),
    );
}

/// Makes a labelled pinned-version image `repo:tag` from busybox (a second apart, so each is
/// made later than the last), and its id.
fn labelled_image(name: &str) -> String {
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = Command::new("docker")
        .args(["create", BUSYBOX, "true"])
        .output()
        .expect("docker CLI");
    let container = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = Command::new("docker")
        .args([
            "commit",
            "--change",
            &format!(
                "LABEL {}=ci-medic-test",
                ci_medic::fix_agent::pins::PIN_BASE_LABEL
            ),
            &container,
            name,
        ])
        .output()
        .expect("docker CLI");
    assert!(out.status.success(), "{out:?}");
    let _ = Command::new("docker").args(["rm", &container]).output();
    image_id(name).unwrap()
}

/// The cache bound: the oldest pinned-version images of a repository are removed first, down
/// to the limit; the one in use (just made) and one a container uses are never removed; another
/// repository's are not counted nor touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_removes_the_oldest_first_and_never_the_image_in_use() {
    if !image_available(BUSYBOX).await {
        return;
    }
    let repo = "ci-medic-test/evict";
    let elsewhere = "ci-medic-test/evict-elsewhere:pin-x-0.0.1";
    let names: Vec<String> = (0..4).map(|i| format!("{repo}:pin-x-1.{i}.0")).collect();
    for n in names.iter().map(String::as_str).chain([elsewhere]) {
        remove_image(n);
    }
    let other = labelled_image(elsewhere);
    let ids: Vec<String> = names.iter().map(|n| labelled_image(n)).collect();
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let present = |n: &str| image_id(n).is_some();

    // Limit 3: only the oldest of the four goes.
    ci_medic::fix_agent::pins::evict(&docker, repo, &ids[3], 3).await;
    assert!(!present(&names[0]), "the oldest is removed first");
    assert!(names[1..].iter().all(|n| present(n)));
    assert_eq!(image_id(elsewhere), Some(other.clone()));

    // Limit 1 with the older 1.1.0 in use (just made) and 1.2.0 used by a container: the one
    // in use fills the limit, the container's is kept by the engine, the newest goes.
    let out = Command::new("docker")
        .args(["create", &names[2], "true"])
        .output()
        .unwrap();
    let container = String::from_utf8_lossy(&out.stdout).trim().to_string();
    ci_medic::fix_agent::pins::evict(&docker, repo, &ids[1], 1).await;
    let kept = (present(&names[1]), present(&names[2]), present(&names[3]));
    let _ = Command::new("docker").args(["rm", &container]).output();
    assert_eq!(kept, (true, true, false));
    assert!(present(elsewhere), "another repository's are not touched");
    for n in names.iter().map(String::as_str).chain([elsewhere]) {
        remove_image(n);
    }
}

/// A Go toolchain pinned in `go.mod` that the image does not have (only Debian's Go 1.19
/// exists here): gofmt 1.19.8 runs, and the reason names the pinned toolchain beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolchain_pin_that_differs_is_named_beside_the_version_used() {
    const GO: &str = "ci-medic-fixer/go";
    if !image_available(GO).await {
        return;
    }
    let file = "eth/config.go";
    let root = tree(
        "goethereum",
        &[file],
        &[(
            "go.mod",
            "module example.com/eth\n\ngo 1.21\n\ntoolchain go1.21.4\n",
        )],
    );
    let log = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/corpus/real/go/fmt-logchunks/goethereum_gometalinter_gofmt.log"),
    )
    .unwrap();
    let fixed = fix(&tier().await, root.path(), report(&log, file)).await;
    assert!(
        fixed.output.fix_reason.ends_with(
            "with gofmt 1.19.8 (the configured default: go.mod pins Go `1.21.4`, a toolchain the tool tier cannot install; it used Go 1.19.8)"
        ),
        "{}",
        fixed.output.fix_reason
    );
    assert_eq!(fixed.image, GO);
}
