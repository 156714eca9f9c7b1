//! The fix agent's tool tier end to end: a real formatter-check log from the corpus on a pull
//! request holding the real files it names → proposal → `/approve` → the project's own tool runs
//! in the sandbox (a locally built fixer image, `.ci/fixer-images.sh`) → one pushed commit whose
//! files are what the real tool produces → the re-run job (the real tool's `--check`, run by the
//! fake's CI) passes.
//!
//! Needs a Docker engine and the fixer images; without them the test says it was skipped,
//! and with `CI=true` it fails instead.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::image::image_available;
use common::world::*;

const PYTHON_IMAGE: &str = "ci-medic-fixer/python";

/// Runs `argv` in `image` (no network) with `input` on stdin; exit code and stdout. The
/// reference the tool tier's result is compared with: the same tool, called another way.
fn run_in_image(image: &str, argv: &[&str], input: &str) -> (i32, String) {
    let mut child = Command::new("docker")
        .args(["run", "--rm", "-i", "--network", "none", image])
        .args(argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("docker CLI");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_check_failure_is_repaired_by_black_itself() {
    if !image_available(PYTHON_IMAGE).await {
        return;
    }
    let files = ["pyDOE3/doe_box_behnken.py", "pyDOE3/doe_gsd.py"];
    let originals: Vec<String> = files
        .iter()
        .map(|f| tool_tier_fixture(&format!("pydoe3/{f}")))
        .collect();
    // The real tool fails its check on these real files, as in the logged run.
    for (f, text) in files.iter().zip(&originals) {
        let (code, _) = run_in_image(PYTHON_IMAGE, &["black", "--check", "-q", "-"], text);
        assert_eq!(code, 1, "black 23.1 --check must fail on {f}");
    }
    let pyproject = tool_tier_fixture("pydoe3/pyproject.toml");
    let w = world_with(
        &[],
        &[
            (files[0], &originals[0]),
            (files[1], &originals[1]),
            ("pyproject.toml", &pyproject),
        ],
    )
    .await;
    let log = corpus("real/python/fmt-issues/pydoe3_black_check.log");
    // The re-run job is the real `black --check` on the pushed files.
    let rerun_log = log.clone();
    w.fake.set_ci_script(REPO, CHECK, move |tree| {
        let all_formatted = files.iter().all(|f| {
            let text = tree
                .get(*f)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            run_in_image(PYTHON_IMAGE, &["black", "--check", "-q", "-"], &text).0 == 0
        });
        if all_formatted {
            ("success".into(), b"All done!\n".to_vec())
        } else {
            ("failure".into(), rerun_log.clone())
        }
    });
    let check = fail_check(&w, &w.head, &log);
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert!(
        body.contains("LINTING error in pyDOE3/doe_gsd.py line 1"),
        "{body}"
    );
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        let s = status_line(b);
        (s.contains("executed") && b.contains("passed")) || s.contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");

    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    assert_eq!(commit.parents, vec![w.head.clone()]);
    // The reason names the tool and the version that made the change.
    assert!(
        commit.message.contains("black 23.1.0"),
        "{}",
        commit.message
    );
    for (f, original) in files.iter().zip(&originals) {
        let pushed = String::from_utf8(w.fake.file_at(REPO, &new_head, f).unwrap()).unwrap();
        let (code, expected) = run_in_image(PYTHON_IMAGE, &["black", "-q", "-"], original);
        assert_eq!(code, 0);
        assert_ne!(&pushed, original, "{f} changed");
        assert_eq!(pushed, expected, "{f} is what black itself produces");
    }
    let before = w.fake.commit(REPO, &w.head).unwrap();
    for (path, content) in &commit.files {
        if !files.contains(&path.as_str()) {
            assert_eq!(before.files.get(path), Some(content), "{path} unchanged");
        }
    }
    assert!(w.server.terminate().success());
}

/// The fix loop runs the tool tier in the image the default branch's `fixers.images` names:
/// here one that does not exist, so black never runs, nothing is pushed, and the comment says
/// which image was missing (with the default image, this pull request is repaired above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fix_loop_runs_the_tool_tier_in_the_configured_image() {
    if !image_available(PYTHON_IMAGE).await {
        return;
    }
    let file = "pyDOE3/doe_gsd.py";
    let original = tool_tier_fixture(&format!("pydoe3/{file}"));
    let pyproject = tool_tier_fixture("pydoe3/pyproject.toml");
    let config = "fixers:\n  images:\n    python: ci-medic-test/no-such-fixer:1\n";
    let w = world_with(
        &[(".github/ci-medic.yml", config)],
        &[(file, &original), ("pyproject.toml", &pyproject)],
    )
    .await;
    let log = corpus("real/python/fmt-issues/pydoe3_black_check.log");
    let check = fail_check(&w, &w.head, &log);
    deliver_check(&w, check).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        let s = status_line(b);
        s.contains("refused") || s.contains("executed")
    })
    .await;
    assert!(status_line(&done).contains("refused"), "{done}");
    // The comment escapes Markdown (`ci\-medic\-test`); the reason names the missing image.
    assert!(
        done.replace('\\', "")
            .contains("ci-medic-test/no-such-fixer:1"),
        "{done}"
    );
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing is pushed"
    );
    assert!(w.server.terminate().success());
}

/// Every file of a fixture tree, repo-relative, with its text.
fn tree_files(dir: &str) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/tool_tier")
        .join(dir);
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

/// Runs `command` with `/bin/sh -c` in `image` on a copy of `files` (no network); its exit
/// code and the files afterwards. How the test runs the real tool outside ci-medic.
fn run_on_tree(
    image: &str,
    files: &[(String, String)],
    command: &str,
) -> (i32, std::collections::BTreeMap<String, String>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let status = Command::new("docker")
        .args(["run", "--rm", "--network", "none", "-v"])
        .arg(format!("{}:/w", dir.path().display()))
        .args(["-w", "/w", image, "sh", "-c", command])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("docker CLI");
    let after = files
        .iter()
        .map(|(p, _)| {
            (
                p.clone(),
                std::fs::read_to_string(dir.path().join(p)).unwrap_or_default(),
            )
        })
        .collect();
    (status.code().unwrap_or(-1), after)
}

/// The whole loop for one real log on one fixture tree: the check fails on the tree, the
/// proposal is approved, the pushed `file` is what `fix` (the real tool, run outside ci-medic)
/// makes of it, the fake CI's re-run (`check`, the real tool) passes, and the commit message
/// names `version`.
async fn repaired_end_to_end(
    image: &str,
    log: &str,
    tree: &str,
    file: &str,
    fix: &str,
    check: &str,
    version: &str,
) {
    let files = tree_files(tree);
    let (code, _) = run_on_tree(image, &files, check);
    assert_ne!(code, 0, "the real check must fail on {tree}");
    let (code, fixed) = run_on_tree(image, &files, fix);
    assert_eq!(code, 0, "the real tool formats {tree}");
    let expected = fixed[file].clone();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let w = world_with(&[], &borrowed).await;
    let log = corpus(log);
    let rerun_log = log.clone();
    let (image_owned, check_owned, all) = (image.to_string(), check.to_string(), files.clone());
    w.fake.set_ci_script(REPO, CHECK, move |pushed| {
        let now = tree_as_pushed(&all, pushed);
        if run_on_tree(&image_owned, &now, &check_owned).0 == 0 {
            ("success".into(), b"ok\n".to_vec())
        } else {
            ("failure".into(), rerun_log.clone())
        }
    });
    let check_run = fail_check(&w, &w.head, &log);
    deliver_check(&w, check_run).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        let s = status_line(b);
        (s.contains("executed") && b.contains("passed")) || s.contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    assert!(commit.message.contains(version), "{}", commit.message);
    let pushed = String::from_utf8(w.fake.file_at(REPO, &new_head, file).unwrap()).unwrap();
    assert_eq!(pushed, expected, "{file} is what the real tool produces");
    let before = w.fake.commit(REPO, &w.head).unwrap();
    for (path, content) in &commit.files {
        if path != file {
            assert_eq!(before.files.get(path), Some(content), "{path} unchanged");
        }
    }
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gofmt_finding_is_repaired_by_gofmt_itself() {
    if !image_available("ci-medic-fixer/go").await {
        return;
    }
    repaired_end_to_end(
        "ci-medic-fixer/go",
        "real/go/fmt-logchunks/goethereum_gometalinter_gofmt.log",
        "goethereum",
        "eth/config.go",
        "gofmt -s -w eth/config.go",
        r#"out=$(gofmt -s -l eth/config.go) && test -z "$out""#,
        "gofmt 1.19.8",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prettier_check_failure_is_repaired_with_the_projects_prettierrc() {
    if !image_available("ci-medic-fixer/node").await {
        return;
    }
    repaired_end_to_end(
        "ci-medic-fixer/node",
        "real/javascript/fmt-issues/telescope_prettier_check.log",
        "telescope-restyled",
        "src/api/status/src/server.js",
        "prettier --write src/api/status/src/server.js",
        "prettier --check src/api/status/src/server.js",
        "prettier 3.3.3",
    )
    .await;
}

/// `fixers.images` in `.github/ci-medic.yml` picks the image a tool runs in: an override that the
/// engine does not have is named in the reason the tier gives, where the default would have run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repositorys_fixer_images_are_the_ones_run() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};
    use ci_medic::fix_agent::tool_tier::ToolTier;
    use ci_medic::fix_agent::{FixAgent, FixInput, Proposal, ToolNotes};
    use ci_medic_core::repo_config::RepoConfig;

    if !image_available(PYTHON_IMAGE).await {
        return;
    }
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let file = "pyDOE3/doe_gsd.py";
    let text = tool_tier_fixture(&format!("pydoe3/{file}"));
    std::fs::create_dir_all(root.path().join("pyDOE3")).unwrap();
    std::fs::write(root.path().join(file), &text).unwrap();
    let log = corpus("real/python/fmt-issues/pydoe3_black_check.log");
    let report = ci_medic_parser::parse_str(
        &String::from_utf8(log).unwrap(),
        &ci_medic_parser::ParseOptions::default(),
    )
    .into_iter()
    .find(|r| r.file_path == file)
    .expect("black's report on the file");
    assert_eq!(report.line_number, 1, "black names the file, line 1");
    let policy = one_file_policy(file, std::slice::from_ref(&report));
    let agent = FixAgent::new(None).with_tools(ToolTier::new(docker));
    let input = FixInput::new(report, text);

    let config =
        RepoConfig::parse("fixers:\n  images:\n    python: ci-medic-test/no-such-fixer\n").unwrap();
    let mut notes = ToolNotes::default();
    let out = agent
        .for_repo(&config.fixers)
        .propose_checked_in(&input, &policy, Some(root.path()), &mut notes)
        .await;
    assert!(matches!(out, Proposal::NoFix), "{out:?}");
    assert!(
        notes
            .declined
            .iter()
            .any(|n| n.contains("`ci-medic-test/no-such-fixer` has no black")),
        "{notes:?}"
    );

    // The defaults are the images `.ci/fixer-images.sh` builds: black runs and repairs the file.
    let mut notes = ToolNotes::default();
    let out = agent
        .for_repo(&RepoConfig::default().fixers)
        .propose_checked_in(&input, &policy, Some(root.path()), &mut notes)
        .await;
    match out {
        Proposal::Accepted(fix) => assert!(fix.fix_reason.contains("black 23.1.0"), "{fix:?}"),
        other => panic!("{other:?} {notes:?}"),
    }
}

/// A formatter may change only what its own check reported: rustfmt's check in the sandbox
/// gives each reported hunk its extent (so a hunk whose changes run past the first changed
/// line ±3 is repaired), and a change in a hunk the CI log did not report is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rustfmt_may_change_the_reported_hunks_and_nothing_else() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};
    use ci_medic::fix_agent::tool_tier::ToolTier;
    use ci_medic::fix_agent::{FixAgent, FixInput, Proposal, ToolNotes};

    const RUST_IMAGE: &str = "ci-medic-fixer/rust";
    if !image_available(RUST_IMAGE).await {
        return;
    }
    // ctest's real files; rustfmt with another option makes the pull request's change.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src")).unwrap();
    std::fs::write(
        root.path().join("Cargo.toml"),
        tool_tier_fixture("ctest/Cargo.toml"),
    )
    .unwrap();
    std::fs::write(
        root.path().join("src/lib.rs"),
        tool_tier_fixture("ctest/src/lib.rs"),
    )
    .unwrap();
    let in_image = |command: &str| {
        Command::new("docker")
            .args(["run", "--rm", "--network", "none", "-v"])
            .arg(format!(
                "{}:/home/runner/work/ctest/ctest",
                root.path().display()
            ))
            .args([
                "-w",
                "/home/runner/work/ctest/ctest",
                RUST_IMAGE,
                "sh",
                "-c",
                command,
            ])
            .output()
            .expect("docker CLI")
    };
    let broke = in_image("rustfmt --edition 2018 --config fn_single_line=true src/lib.rs");
    assert!(broke.status.success(), "{broke:?}");
    // The job's own log: rustfmt's check, three hunks, each with changes more than 3 lines
    // below its first.
    let job = in_image("rustfmt --edition 2018 --check src/lib.rs");
    assert!(!job.status.success());
    let reports = ci_medic_parser::parse_str(
        &String::from_utf8(job.stdout).unwrap(),
        &ci_medic_parser::ParseOptions::default(),
    );
    assert_eq!(reports.len(), 3, "{reports:#?}");
    let text = std::fs::read_to_string(root.path().join("src/lib.rs")).unwrap();
    let policy = |reported: &[ci_medic_parser::BugReport]| one_file_policy("src/lib.rs", reported);
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let agent = FixAgent::new(None).with_tools(ToolTier::new(docker));
    let input = FixInput::new(reports[0].clone(), text.clone());

    // Every hunk reported: rustfmt's whole change is what the check asked for.
    let mut notes = ToolNotes::default();
    let out = agent
        .propose_checked_in(&input, &policy(&reports), Some(root.path()), &mut notes)
        .await;
    let fixed = match out {
        Proposal::Accepted(fix) => fix,
        other => panic!("{other:?} {notes:?}"),
    };
    assert!(fixed.fix_reason.contains("rustfmt 1.5.1"), "{fixed:?}");
    assert_eq!(notes.scopes.len(), 1);

    // Only the first hunk reported (as when CI's rustfmt saw less than the sandbox's): the
    // change rustfmt makes to the other two is outside the hunks reported, and refused.
    std::fs::write(root.path().join("src/lib.rs"), &text).unwrap();
    let mut notes = ToolNotes::default();
    let out = agent
        .propose_checked_in(
            &input,
            &policy(&reports[..1]),
            Some(root.path()),
            &mut notes,
        )
        .await;
    match out {
        Proposal::Rejected { output, violations } => {
            assert_eq!(output.patched_content, fixed.patched_content);
            assert_eq!(violations[0].rule(), "formatter_hunks", "{violations:?}");
            assert!(
                violations[0]
                    .to_string()
                    .contains(&format!("line {}", reports[1].line_number)),
                "{violations:?}"
            );
        }
        other => panic!("{other:?} {notes:?}"),
    }
}

/// Output of `docker image inspect -f {{.Created}}`, or `None` when there is no such image.
fn image_created(image: &str) -> Option<String> {
    let out = Command::new("docker")
        .args(["image", "inspect", "-f", "{{.Created}}", image])
        .output()
        .expect("docker CLI");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A project that pins black gets that black: installed once (with a network, from PyPI) into a
/// cached image tagged by tool and version, reused the next time, and named in the reason. The
/// versions differ observably on pyDOE3: black 24.1.1 leaves `doe_box_behnken.py` as it is,
/// where the image's black 23.1 rewrites it. A pin that cannot be installed falls back to the
/// image's version, and the reason says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_black_is_installed_once_into_a_cached_image_and_run() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};
    use ci_medic::fix_agent::FixInput;
    use ci_medic::fix_agent::tool_tier::{ToolDecline, ToolTier};
    use std::time::Instant;

    if !image_available(PYTHON_IMAGE).await {
        return;
    }
    let pinned = "ci-medic-fixer/python:pin-black-24.1.1";
    // Cold: no cached image of this pin (an earlier run's is removed; nothing else uses it).
    let _ = Command::new("docker").args(["rmi", pinned]).output();
    let files = ["pyDOE3/doe_box_behnken.py", "pyDOE3/doe_gsd.py"];
    let log = String::from_utf8(corpus("real/python/fmt-issues/pydoe3_black_check.log")).unwrap();
    let reports = ci_medic_parser::parse_str(&log, &ci_medic_parser::ParseOptions::default());
    let tree = |requirements: Option<&str>| {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pyDOE3")).unwrap();
        for f in files {
            std::fs::write(
                root.path().join(f),
                tool_tier_fixture(&format!("pydoe3/{f}")),
            )
            .unwrap();
        }
        if let Some(r) = requirements {
            std::fs::write(root.path().join("requirements-dev.txt"), r).unwrap();
        }
        root
    };
    let input = |file: &str| {
        let report = reports
            .iter()
            .find(|r| r.file_path == file)
            .expect("black's report on the file")
            .clone();
        FixInput::new(report, tool_tier_fixture(&format!("pydoe3/{file}")))
    };
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let tier = ToolTier::new(docker);

    // The reference: black 24.1.1 from PyPI, run another way (a throw-away container with a
    // network, the file on stdin).
    let mut child = Command::new("docker")
        .args(["run", "--rm", "-i", PYTHON_IMAGE, "sh", "-c"])
        .arg(
            "PIP_CERT=/etc/ssl/certs/ca-certificates.crt HOME=/tmp python3 /opt/pip/pip.whl/pip \
             install -q --disable-pip-version-check --root-user-action=ignore --target /tmp/b black==24.1.1 >/dev/null && \
             PYTHONPATH=/tmp/b python3 -m black -q -",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("docker CLI");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(tool_tier_fixture("pydoe3/pyDOE3/doe_gsd.py").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "black 24.1.1 from PyPI");
    let reference = String::from_utf8(out.stdout).unwrap();

    let root = tree(Some("# formatting\nblack==24.1.1\n"));
    let started = Instant::now();
    let fix = tier
        .fix(root.path(), &input(files[1]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cold = started.elapsed();
    assert_eq!(
        fix.output.fix_reason,
        "Reformatted `pyDOE3/doe_gsd.py` with black 24.1.1 (pinned in requirements-dev.txt; installed from PyPI into a cached fixer image)"
    );
    assert_eq!(fix.image, pinned);
    assert_eq!(fix.output.patched_content, reference);
    let created = image_created(pinned).expect("the pinned image is cached");

    // Second use: the cached image, not a new install; black 24.1.1 finds nothing to change
    // in the other file.
    let root = tree(Some("black==24.1.1\n"));
    let started = Instant::now();
    let unchanged = tier.fix(root.path(), &input(files[0])).await;
    let warm = started.elapsed();
    assert!(
        matches!(unchanged, Err(ToolDecline::NoPatch(ref why)) if why.to_string().contains("black changed nothing")),
        "{unchanged:?}"
    );
    assert_eq!(image_created(pinned), Some(created), "reused, not rebuilt");
    // Without the pin, the image's black 23.1 rewrites that file.
    let root = tree(None);
    let default = tier.fix(root.path(), &input(files[0])).await.unwrap();
    assert!(
        default
            .output
            .fix_reason
            .ends_with("with black 23.1.0 (the configured default; the project pins none)"),
        "{}",
        default.output.fix_reason
    );
    assert_eq!(default.image, PYTHON_IMAGE);

    // A version PyPI does not have: the image's black, and the reason says why.
    let root = tree(Some("black==0.0.1\n"));
    let fallback = tier.fix(root.path(), &input(files[1])).await.unwrap();
    let reason = &fallback.output.fix_reason;
    assert!(
        reason.contains(
            "with black 23.1.0 (the configured default: requirements-dev.txt pins `==0.0.1`, which could not be installed: the install step exited 1:"
        ),
        "{reason}"
    );
    assert!(reason.contains("black==0.0.1"), "{reason}");
    assert_eq!(fallback.image, PYTHON_IMAGE);
    println!(
        "pinned black 24.1.1: first use (install and commit) {:.1} s, second use (cached) {:.1} s",
        cold.as_secs_f64(),
        warm.as_secs_f64()
    );
}

/// A prettier the lockfile pins is installed from npm into its own cached image and run there:
/// the reason names it, and its own `--check` passes on the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prettier_the_lockfile_pins_is_installed_from_npm_and_run() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};
    use ci_medic::fix_agent::FixInput;
    use ci_medic::fix_agent::tool_tier::ToolTier;

    const NODE_IMAGE: &str = "ci-medic-fixer/node";
    if !image_available(NODE_IMAGE).await {
        return;
    }
    let file = "src/api/status/src/server.js";
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src/api/status/src")).unwrap();
    for f in [file, ".prettierrc", ".prettierignore"] {
        std::fs::write(
            root.path().join(f),
            tool_tier_fixture(&format!("telescope-restyled/{f}")),
        )
        .unwrap();
    }
    // What `npm install prettier@3.0.0` writes into a project's lockfile.
    std::fs::write(
        root.path().join("package-lock.json"),
        r#"{"lockfileVersion": 3, "packages": {"node_modules/prettier": {"version": "3.0.0"}}}"#,
    )
    .unwrap();
    let log = String::from_utf8(corpus(
        "real/javascript/fmt-issues/telescope_prettier_check.log",
    ))
    .unwrap();
    let report = ci_medic_parser::parse_str(&log, &ci_medic_parser::ParseOptions::default())
        .into_iter()
        .find(|r| r.file_path == file)
        .expect("prettier's report on the file");
    let input = FixInput::new(
        report,
        tool_tier_fixture(&format!("telescope-restyled/{file}")),
    );
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let fix = ToolTier::new(docker)
        .fix(root.path(), &input)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fix.output.fix_reason,
        format!(
            "Reformatted `{file}` with prettier 3.0.0 (pinned in package-lock.json; installed from npm into a cached fixer image)"
        )
    );
    assert_eq!(fix.image, "ci-medic-fixer/node:pin-prettier-3.0.0");
    std::fs::write(root.path().join(file), &fix.output.patched_content).unwrap();
    let files: Vec<(String, String)> = [file, ".prettierrc", ".prettierignore"]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                std::fs::read_to_string(root.path().join(f)).unwrap(),
            )
        })
        .collect();
    let (code, _) = run_on_tree(
        &fix.image,
        &files,
        &format!("test \"$(prettier --version)\" = 3.0.0 && prettier --check {file}"),
    );
    assert_eq!(code, 0, "prettier 3.0.0's own check passes on its fix");
}

/// clang-format's check names lines, not their extent: the formatter may change the hunks of
/// its own change that hold a reported line, and a change in a hunk no report points at is
/// refused under `formatter_hunks`. zpipe.c (zlib's example, public domain) formatted with the
/// project's style, then changed by clang-format with Allman braces, as the pull request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clang_format_may_change_the_hunks_holding_a_reported_line_and_nothing_else() {
    use ci_medic::executor::{DockerExecutor, SandboxSettings};
    use ci_medic::fix_agent::tool_tier::ToolTier;
    use ci_medic::fix_agent::{FixAgent, FixInput, Proposal, ToolNotes};
    use ci_medic_core::tool_tier::FormatScope;

    const CLANG_IMAGE: &str = "ci-medic-fixer/clang";
    if !image_available(CLANG_IMAGE).await {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(".clang-format"), "BasedOnStyle: Google\n").unwrap();
    std::fs::write(
        root.path().join("zpipe.c"),
        tool_tier_fixture("zpipe/zpipe.c"),
    )
    .unwrap();
    let in_image = |command: &str| {
        Command::new("docker")
            .args(["run", "--rm", "--network", "none", "-v"])
            .arg(format!("{}:/home/runner/work/z/z", root.path().display()))
            .args([
                "-w",
                "/home/runner/work/z/z",
                CLANG_IMAGE,
                "sh",
                "-c",
                command,
            ])
            .output()
            .expect("docker CLI")
    };
    let made = in_image(
        "clang-format -i --style=file zpipe.c && \
         clang-format -i --style='{BasedOnStyle: Google, BreakBeforeBraces: Allman}' zpipe.c",
    );
    assert!(made.status.success(), "{made:?}");
    let job = in_image("clang-format --dry-run -Werror --style=file zpipe.c");
    assert!(!job.status.success());
    let reports = ci_medic_parser::parse_str(
        &String::from_utf8(job.stderr).unwrap(),
        &ci_medic_parser::ParseOptions::default(),
    );
    assert!(reports.len() > 2, "{reports:#?}");
    let text = std::fs::read_to_string(root.path().join("zpipe.c")).unwrap();
    let policy = |reported: &[ci_medic_parser::BugReport]| one_file_policy("zpipe.c", reported);
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .unwrap();
    let agent = FixAgent::new(None).with_tools(ToolTier::new(docker));
    let input = FixInput::new(reports[0].clone(), text.clone());

    // Every line reported: clang-format's whole change is what the check asked for, as hunks.
    let mut notes = ToolNotes::default();
    let out = agent
        .propose_checked_in(&input, &policy(&reports), Some(root.path()), &mut notes)
        .await;
    let fixed = match out {
        Proposal::Accepted(fix) => fix,
        other => panic!("{other:?} {notes:?}"),
    };
    assert!(fixed.fix_reason.contains("clang-format 14"), "{fixed:?}");
    let hunks = match &notes.scopes[..] {
        [(path, FormatScope::Hunks(h))] if path == "zpipe.c" => h.clone(),
        other => panic!("{other:?}"),
    };
    assert!(hunks.len() > 1, "{hunks:?}");
    std::fs::write(root.path().join("zpipe.c"), &fixed.patched_content).unwrap();
    let back = in_image("clang-format --dry-run -Werror --style=file zpipe.c");
    assert!(back.status.success(), "its own check passes on the fix");

    // Only the reports in the first hunk: the change clang-format makes to the others is
    // outside every hunk reported, and refused.
    std::fs::write(root.path().join("zpipe.c"), &text).unwrap();
    let first: Vec<_> = reports
        .iter()
        .filter(|r| hunks[0].shown.contains(r.line_number))
        .cloned()
        .collect();
    let later = reports
        .iter()
        .find(|r| !hunks[0].shown.contains(r.line_number))
        .unwrap();
    let mut notes = ToolNotes::default();
    let out = agent
        .propose_checked_in(&input, &policy(&first), Some(root.path()), &mut notes)
        .await;
    match out {
        Proposal::Rejected { output, violations } => {
            assert_eq!(output.patched_content, fixed.patched_content);
            assert_eq!(violations[0].rule(), "formatter_hunks", "{violations:?}");
            assert!(
                violations[0]
                    .to_string()
                    .contains(&format!("line {}", later.line_number)),
                "{violations:?}"
            );
        }
        other => panic!("{other:?} {notes:?}"),
    }
}

/// The guard's policy for a fix of one formatter's check on `path`: only the reported lines.
fn one_file_policy(
    path: &str,
    reported: &[ci_medic_parser::BugReport],
) -> ci_medic::fix_agent::GuardPolicy {
    ci_medic::fix_agent::GuardPolicy {
        allowed_paths: vec![path.into()],
        protected_paths: vec![],
        do_not_touch: vec![],
        max_files_changed: 3,
        no_new_dependencies: true,
        allowed_dependencies: vec![],
        confidence_threshold: 0.7,
        reported_lines: reported
            .iter()
            .map(|r| (r.file_path.clone(), r.line_number))
            .collect(),
        whole_file_formatting: vec![],
        formatter_hunks: Vec::new(),
    }
}
