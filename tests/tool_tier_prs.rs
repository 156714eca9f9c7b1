//! The tool tier's efficacy on single-problem pull requests, end to end: for each case a pull
//! request on the fake GitHub whose CI job (a real formatter check or one autofixable lint rule,
//! run by the real tool in its fixer image) fails on one problem → the job's log → proposal →
//! `/approve` → the tool tier's commit → the job re-run by the fake's CI on the pushed tree.
//! Each case is judged by that re-run and by a soundness check of the pushed files (they still
//! parse), and printed as `fixed`, `not fixed` or `broke something`, with the time from
//! `/approve` to the pushed commit (every image is warm: built and used before). Then the first
//! fixed case of each image runs twice more in a fresh copy of its image (exported and
//! imported under another name, no layer shared, named by `fixers.images`): its first use is
//! the cold figure, its second a warm one.
//!
//! The pull requests are real files (`fixtures/tool_tier/*`, provenance in its README, or files
//! shipped in the fixer images' own Debian and npm packages), made into a failing pull request,
//! when the real file does not already fail the job, by a real tool (`breaks`: rustfmt with
//! another option, a file copied in from a package). The logs are the real jobs' output, run at
//! test time in the fixer image at an Actions-like checkout path, or a real CI log from the
//! corpus when one names the files. Nothing is typed but the projects' tool configuration
//! (`config`), which is what a project writes.
//!
//! `cargo test --test tool_tier_prs -- --nocapture` prints the table. Needs a Docker engine and
//! the fixer images (`.ci/fixer-images.sh`): without them it says it was skipped, and with
//! `CI=true` it fails instead.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ci_medic_core::tool_tier::ESLINT_SCRIPT;
use common::world::*;

/// Where the job runs in its container: the checkout path of an Actions job, so the tools print
/// the paths they print there.
const CHECKOUT: &str = "/home/runner/work/shop/shop";

enum Log {
    /// The job's own output on the pull request's tree.
    Job,
    /// A real CI log from `fixtures/corpus/real/` that names the pull request's files.
    Corpus(&'static str),
}

struct Case {
    name: &'static str,
    image: &'static str,
    /// Real files under `fixtures/tool_tier/` (the base branch).
    tree: &'static str,
    /// Only these fixture files are taken (empty: all of them).
    only: &'static [&'static str],
    /// The project's tool configuration for the job, as the project writes it.
    config: &'static [(&'static str, &'static str)],
    /// A real tool run on the base that makes the pull request's change, or none when the real
    /// files already fail the job.
    breaks: Option<&'static str>,
    /// The CI job: a `/bin/sh -c` command run from the checkout that fails on the problem.
    job: &'static str,
    /// Whether the pushed files still parse (what "broke something" looks for beside the job).
    sound: &'static str,
    log: Log,
    /// What the case comes to, and why when it is not `fixed`: the test holds each to it.
    expect: (Verdict, &'static str),
}

const FIXED: (Verdict, &str) = (Verdict::Fixed, "");

const PY: &str = "ci-medic-fixer/python";
const GO: &str = "ci-medic-fixer/go";
const RUST: &str = "ci-medic-fixer/rust";
const NODE: &str = "ci-medic-fixer/node";

/// The JS/TS soundness check: ESLint parses the file with the project's configuration (the
/// driver's `check` mode exits 2 on a file that does not parse; no rule is named).
const JS_PARSES: &str = "node -e \"$ESLINT_SCRIPT\" -- check none";

const CASES: &[Case] = &[
    Case {
        name: "black: pyDOE3 formatted by a newer black",
        image: PY,
        tree: "pydoe3",
        only: &[],
        config: &[],
        breaks: None,
        job: "black --check pyDOE3",
        sound: "python3 -m py_compile pyDOE3/doe_gsd.py pyDOE3/doe_box_behnken.py",
        log: Log::Corpus("real/python/fmt-issues/pydoe3_black_check.log"),
        expect: FIXED,
    },
    Case {
        name: "isort: ibis-bigquery's package imports",
        image: PY,
        tree: "ibis",
        only: &[],
        config: &[],
        breaks: None,
        job: "isort --check-only ibis_bigquery/__init__.py",
        sound: "python3 -m py_compile ibis_bigquery/__init__.py",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "ruff format: ibis-bigquery's package",
        image: PY,
        tree: "ibis",
        only: &[],
        config: &[],
        breaks: None,
        job: "ruff format --no-cache --check ibis_bigquery/__init__.py",
        sound: "python3 -m py_compile ibis_bigquery/__init__.py",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "ruff UP032 (f-string): ibis-bigquery",
        image: PY,
        tree: "ibis",
        only: &[],
        config: &[("ruff.toml", "[lint]\nselect = [\"UP032\"]\n")],
        breaks: None,
        job: "ruff check --no-cache ibis_bigquery/client.py",
        sound: "python3 -m py_compile ibis_bigquery/client.py",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "ruff I001 (import order): pyDOE3",
        image: PY,
        tree: "pydoe3",
        only: &[],
        config: &[("ruff.toml", "[lint]\nselect = [\"I001\"]\n")],
        breaks: None,
        job: "ruff check --no-cache pyDOE3",
        sound: "python3 -m compileall -q pyDOE3",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "ruff C408 (dict() call): pyDOE3",
        image: PY,
        tree: "pydoe3",
        only: &[],
        config: &[("ruff.toml", "[lint]\nselect = [\"C408\"]\n")],
        breaks: None,
        job: "ruff check --no-cache pyDOE3",
        sound: "python3 -m compileall -q pyDOE3",
        log: Log::Job,
        // ruff 0.6.9 marks C408's fix unsafe: `--fix` leaves it, and so does the tier.
        expect: (Verdict::NotFixed, "no_fix"),
    },
    Case {
        name: "rustfmt: ctest with one-line fns",
        image: RUST,
        tree: "ctest",
        only: &["Cargo.toml", "src/lib.rs"],
        config: &[],
        breaks: Some("rustfmt --edition 2018 --config fn_single_line=true src/lib.rs"),
        job: "rustfmt --edition 2018 --check src/lib.rs",
        sound: "rustfmt --edition 2018 --emit stdout src/lib.rs >/dev/null",
        log: Log::Job,
        // Hunks whose later changes are more than 3 lines below their first: the parser
        // reports a hunk's first changed line, and rustfmt's own check in the sandbox gives
        // the hunk's extent.
        expect: FIXED,
    },
    Case {
        name: "rustfmt: ctest with empty items on two lines",
        image: RUST,
        tree: "ctest",
        only: &["Cargo.toml", "src/lib.rs"],
        config: &[],
        breaks: Some("rustfmt --edition 2018 --config empty_item_single_line=false src/lib.rs"),
        job: "rustfmt --edition 2018 --check src/lib.rs",
        sound: "rustfmt --edition 2018 --emit stdout src/lib.rs >/dev/null",
        log: Log::Job,
        // Hunks whose later changes are more than 3 lines below their first: the parser
        // reports a hunk's first changed line, and rustfmt's own check in the sandbox gives
        // the hunk's extent.
        expect: FIXED,
    },
    Case {
        name: "rustfmt: ctest's build script at 120 columns",
        image: RUST,
        tree: "ctest",
        only: &["Cargo.toml", "testcrate/build.rs"],
        config: &[],
        breaks: Some("rustfmt --edition 2018 --config max_width=120 testcrate/build.rs"),
        job: "rustfmt --edition 2018 --check testcrate/build.rs",
        sound: "rustfmt --edition 2018 --emit stdout testcrate/build.rs >/dev/null",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "clippy assign_op_pattern: fnv",
        image: RUST,
        tree: "fnv",
        only: &[],
        config: &[],
        breaks: None,
        job: "PATH=/opt/rust/bin:$PATH CARGO_TARGET_DIR=/tmp/t cargo clippy --offline --quiet --all-targets -- -D clippy::all",
        sound: "PATH=/opt/rust/bin:$PATH CARGO_TARGET_DIR=/tmp/t cargo check --offline --quiet --all-targets",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "gofmt -s: gofmt's tabs test input (gometalinter log)",
        image: GO,
        tree: "goethereum",
        only: &[],
        config: &[],
        breaks: None,
        job: "out=$(gofmt -s -l eth) && test -z \"$out\"",
        sound: "gofmt -e eth/config.go >/dev/null",
        log: Log::Corpus("real/go/fmt-logchunks/goethereum_gometalinter_gofmt.log"),
        expect: FIXED,
    },
    Case {
        name: "goimports: gofmt's tabs test input (gometalinter log)",
        image: GO,
        tree: "goethereum",
        only: &[],
        config: &[],
        breaks: None,
        job: "out=$(goimports -l eth) && test -z \"$out\"",
        sound: "gofmt -e eth/config.go >/dev/null",
        log: Log::Corpus("real/go/fmt-logchunks/goethereum_gometalinter_goimports.log"),
        expect: FIXED,
    },
    Case {
        name: "gofmt -s: gofmt's ranges test input (gometalinter log)",
        image: GO,
        tree: "goethereum",
        only: &["COPYRIGHT-golang"],
        config: &[],
        breaks: Some(
            "mkdir -p eth && cp /usr/lib/go-1.19/src/cmd/gofmt/testdata/ranges.input eth/config.go",
        ),
        job: "out=$(gofmt -s -l eth) && test -z \"$out\"",
        sound: "gofmt -e eth/config.go >/dev/null",
        log: Log::Corpus("real/go/fmt-logchunks/goethereum_gometalinter_gofmt.log"),
        expect: FIXED,
    },
    Case {
        name: "goimports: gofmt's import test input (gometalinter log)",
        image: GO,
        tree: "goethereum",
        only: &["COPYRIGHT-golang"],
        config: &[],
        breaks: Some(
            "mkdir -p eth && cp /usr/lib/go-1.19/src/cmd/gofmt/testdata/import.input eth/config.go",
        ),
        job: "out=$(goimports -l eth) && test -z \"$out\"",
        sound: "gofmt -e eth/config.go >/dev/null",
        log: Log::Corpus("real/go/fmt-logchunks/goethereum_gometalinter_goimports.log"),
        // goimports merges the duplicate imports, and one of them carries a comment: the
        // guard keeps comments, so it refuses the change.
        expect: (Verdict::NotFixed, "comment_removed"),
    },
    Case {
        name: "prettier: telescope's server restyled",
        image: NODE,
        tree: "telescope-restyled",
        only: &[],
        config: &[],
        breaks: None,
        job: "prettier --check src/api/status/src/server.js",
        sound: "node --check src/api/status/src/server.js",
        log: Log::Corpus("real/javascript/fmt-issues/telescope_prettier_check.log"),
        expect: FIXED,
    },
    Case {
        name: "prettier: a TypeScript declaration file added",
        image: NODE,
        tree: "telescope",
        only: &[".prettierrc", "LICENSE"],
        config: &[],
        breaks: Some(
            "mkdir -p src/types && cp /opt/fixers/node_modules/p-limit/index.d.ts src/types/p-limit.d.ts",
        ),
        job: "prettier --check src/types",
        // prettier parses TypeScript itself, and fails on a file that does not parse.
        sound: "prettier --no-config src/types/p-limit.d.ts >/dev/null",
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "eslint curly: telescope's server",
        image: NODE,
        tree: "telescope",
        only: &["src/api/status/src/server.js", "LICENSE"],
        config: &[(
            "eslint.config.mjs",
            "export default [{ rules: { curly: \"error\" } }];\n",
        )],
        breaks: None,
        job: "eslint src",
        sound: JS_PARSES,
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "eslint prefer-template: word-wrap added",
        image: NODE,
        tree: "telescope",
        only: &["LICENSE"],
        config: &[(
            "eslint.config.mjs",
            "export default [{ rules: { \"prefer-template\": \"error\" } }];\n",
        )],
        breaks: Some("mkdir -p src && cp /opt/fixers/node_modules/word-wrap/index.js src/wrap.js"),
        job: "eslint src",
        sound: JS_PARSES,
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "eslint no-var: is-glob added",
        image: NODE,
        tree: "telescope",
        only: &["LICENSE"],
        config: &[(
            "eslint.config.mjs",
            "export default [{ rules: { \"no-var\": \"error\" } }];\n",
        )],
        breaks: Some("mkdir -p src && cp /opt/fixers/node_modules/is-glob/index.js src/is-glob.js"),
        job: "eslint src",
        sound: JS_PARSES,
        log: Log::Job,
        expect: FIXED,
    },
    Case {
        name: "eslint arrow-parens: p-limit added",
        image: NODE,
        tree: "telescope",
        only: &["LICENSE"],
        config: &[(
            "eslint.config.mjs",
            "export default [{ rules: { \"arrow-parens\": \"error\" } }];\n",
        )],
        breaks: Some("mkdir -p src && cp /opt/fixers/node_modules/p-limit/index.js src/p-limit.js"),
        job: "eslint src",
        sound: JS_PARSES,
        log: Log::Job,
        expect: FIXED,
    },
];

/// Every file under `dir`, relative to `root`, with its bytes.
fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(root, &path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.insert(rel, bytes);
        }
    }
}

/// Every file of a fixture tree (or only `only`), repo-relative.
fn tree_files(dir: &str, only: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/tool_tier")
        .join(dir);
    let mut out = BTreeMap::new();
    walk(&root, &root, &mut out);
    if !only.is_empty() {
        out.retain(|p, _| only.contains(&p.as_str()));
    }
    out
}

/// Runs `command` with `/bin/sh -c` in `image` (no network) on a copy of `files` at
/// [`CHECKOUT`]: its exit code, its output (stdout then stderr) and every file afterwards.
fn run_on(
    image: &str,
    files: &BTreeMap<String, Vec<u8>>,
    command: &str,
) -> (i32, Vec<u8>, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let out = Command::new("docker")
        .args(["run", "--rm", "--network", "none", "-e"])
        .arg(format!("ESLINT_SCRIPT={ESLINT_SCRIPT}"))
        .arg("-v")
        .arg(format!("{}:{CHECKOUT}", dir.path().display()))
        .args(["-w", CHECKOUT, image, "sh", "-c", command])
        .output()
        .expect("docker CLI");
    let mut log = out.stdout;
    log.extend_from_slice(&out.stderr);
    let mut after = BTreeMap::new();
    walk(dir.path(), dir.path(), &mut after);
    (out.status.code().unwrap_or(-1), log, after)
}

/// A fresh copy of `image` named `name`: its files exported from a container and imported as
/// a new image, with its environment and labels, so no layer is shared with the original and
/// the engine meets it for the first time.
fn fresh_copy(image: &str, name: &str) {
    let inspect = |format: &str| {
        let out = Command::new("docker")
            .args(["image", "inspect", "-f", format, image])
            .output()
            .expect("docker CLI");
        assert!(out.status.success(), "{image}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let env: Vec<String> = serde_json::from_str(&inspect("{{json .Config.Env}}")).unwrap();
    let labels: BTreeMap<String, String> =
        serde_json::from_str(&inspect("{{json .Config.Labels}}")).unwrap();
    let created = Command::new("docker")
        .args(["create", image])
        .output()
        .expect("docker CLI");
    assert!(created.status.success(), "{created:?}");
    let id = String::from_utf8(created.stdout)
        .unwrap()
        .trim()
        .to_string();
    let mut import = Command::new("docker");
    import.arg("import");
    for e in &env {
        import.arg("-c").arg(format!("ENV {e}"));
    }
    for (k, v) in &labels {
        import
            .arg("-c")
            .arg(format!("LABEL {k}={}", serde_json::to_string(v).unwrap()));
    }
    let mut import = import
        .args(["-c", "CMD [\"/bin/sh\"]", "-", name])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("docker CLI");
    let mut export = Command::new("docker")
        .args(["export", &id])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("docker CLI");
    std::io::copy(
        export.stdout.as_mut().unwrap(),
        import.stdin.as_mut().unwrap(),
    )
    .unwrap();
    drop(import.stdin.take());
    assert!(export.wait().unwrap().success());
    assert!(import.wait().unwrap().success(), "importing {name}");
    let _ = Command::new("docker").args(["rm", &id]).output();
}

async fn images_available() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let ok = match bollard::Docker::connect_with_defaults() {
        Ok(d) => {
            let mut ok = d.ping().await.is_ok();
            for image in [PY, GO, RUST, NODE] {
                ok = ok && d.inspect_image(image).await.is_ok();
            }
            ok
        }
        Err(_) => false,
    };
    if !ok {
        assert!(
            !ci,
            "CI=true but no Docker engine with the fixer images (run .ci/docker-setup.sh and .ci/fixer-images.sh)"
        );
        eprintln!("skipping: no Docker engine with the fixer images (run .ci/fixer-images.sh)");
    }
    ok
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Fixed,
    NotFixed,
    BrokeSomething,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Fixed => "fixed",
            Verdict::NotFixed => "not fixed",
            Verdict::BrokeSomething => "broke something",
        }
    }
}

/// One pull request end to end; its verdict, what it rests on, and the time from `/approve` to
/// the pushed commit when there was one.
async fn run_case(case: &Case, main_files: &[(&str, &str)]) -> (Verdict, String, Option<Duration>) {
    let mut base = tree_files(case.tree, case.only);
    for (path, text) in case.config {
        base.insert(path.to_string(), text.as_bytes().to_vec());
    }
    let head = match case.breaks {
        None => base.clone(),
        Some(cmd) => {
            let (code, out, after) = run_on(case.image, &base, cmd);
            assert_eq!(
                code,
                0,
                "{}: `{cmd}`: {}",
                case.name,
                String::from_utf8_lossy(&out)
            );
            after
        }
    };
    let (code, job_log, _) = run_on(case.image, &head, case.job);
    assert_ne!(
        code,
        0,
        "{}: the job must fail on the pull request: {}",
        case.name,
        String::from_utf8_lossy(&job_log)
    );
    let log = match case.log {
        Log::Job => job_log,
        Log::Corpus(rel) => corpus(rel),
    };
    let texts: Vec<(String, String)> = head
        .iter()
        .map(|(p, b)| (p.clone(), String::from_utf8(b.clone()).unwrap()))
        .collect();
    let borrowed: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let w = world_with(main_files, &borrowed).await;
    let (image, job, all) = (case.image.to_string(), case.job.to_string(), head.clone());
    w.fake.set_ci_script(REPO, CHECK, move |pushed| {
        let mut now = all.clone();
        for (p, b) in pushed {
            now.insert(p.clone(), b.clone());
        }
        let (code, log, _) = run_on(&image, &now, &job);
        let conclusion = if code == 0 { "success" } else { "failure" };
        (conclusion.into(), log)
    });
    let check = fail_check(&w, &w.head, &log);
    deliver_check(&w, check).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let approved = Instant::now();
    say(&w, "maintainer", "/approve").await;
    let old_head = w.head.clone();
    // Poll both: the push (its time is the figure) and the comment's final status.
    let deadline = Instant::now() + Duration::from_secs(240);
    let (mut pushed, mut to_push, mut settled) = (None, None, None);
    while settled.is_none() && Instant::now() < deadline {
        if pushed.is_none()
            && let Some(h) = w
                .fake
                .branch_head(REPO, "feature")
                .filter(|h| *h != old_head)
        {
            pushed = Some(h);
            to_push = Some(approved.elapsed());
        }
        settled = w
            .fake
            .comments(REPO, 7)
            .into_iter()
            .filter(|c| c.via_app)
            .map(|c| status_line(&c.body))
            .find(|s| {
                [
                    "executed",
                    "failed",
                    "patch refused",
                    "stopped",
                    "no verdict",
                ]
                .iter()
                .any(|k| s.contains(&format!("**{k}**")))
            });
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if pushed.is_none() {
        pushed = w
            .fake
            .branch_head(REPO, "feature")
            .filter(|h| *h != old_head);
    }
    let settled = settled.unwrap_or_else(|| "no final status".into());
    let status = settled.split(" — ").skip(1).collect::<Vec<_>>().join(" — ");
    let Some(new_head) = pushed else {
        assert!(w.server.terminate().success());
        return (Verdict::NotFixed, format!("nothing pushed: {status}"), None);
    };
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    let before = w.fake.commit(REPO, &old_head).unwrap().files;
    let mut tree = head.clone();
    let mut changed = Vec::new();
    for (p, b) in &commit.files {
        if before.get(p) != Some(b) {
            changed.push(p.clone());
        }
        tree.insert(p.clone(), b.clone());
    }
    let (job_code, _, _) = run_on(case.image, &tree, case.job);
    let (sound_code, sound_out, _) = run_on(case.image, &tree, case.sound);
    let reason = commit
        .message
        .lines()
        .find(|l| l.contains(" with "))
        .unwrap_or("")
        .trim()
        .to_string();
    assert!(w.server.terminate().success());
    let outside: Vec<&String> = changed
        .iter()
        .filter(|p| !String::from_utf8_lossy(&log).contains(p.as_str()))
        .collect();
    let verdict = if sound_code != 0 {
        (
            Verdict::BrokeSomething,
            format!(
                "no longer parses: {}",
                String::from_utf8_lossy(&sound_out).trim()
            ),
        )
    } else if !outside.is_empty() {
        (
            Verdict::BrokeSomething,
            format!("changed files the job did not name: {outside:?}"),
        )
    } else if job_code == 0 {
        (
            Verdict::Fixed,
            format!("{} ({})", reason, changed.join(", ")),
        )
    } else {
        (
            Verdict::NotFixed,
            format!("the job still fails after: {reason}"),
        )
    };
    (verdict.0, verdict.1, to_push)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_problem_pull_requests_are_fixed_by_the_projects_own_tools() {
    if !images_available().await {
        return;
    }
    let mut rows = Vec::new();
    let mut times = Vec::new();
    for case in CASES {
        let (verdict, detail, took) = run_case(case, &[]).await;
        times.extend(took);
        let took = took.map_or("-".to_string(), |d| format!("{:.1} s", d.as_secs_f64()));
        println!(
            "{:<16} {:>7}  {}: {}",
            verdict.label(),
            took,
            case.name,
            detail
        );
        rows.push((case.name, verdict, detail, case.expect));
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.1 == v).count();
    times.sort();
    if let (Some(min), Some(max)) = (times.first(), times.last()) {
        println!(
            "/approve to pushed commit (warm images, {} pushes): min {:.1} s, median {:.1} s, max {:.1} s",
            times.len(),
            min.as_secs_f64(),
            times[times.len() / 2].as_secs_f64(),
            max.as_secs_f64()
        );
    }
    // Cold and warm: the first case of each image again, in a fresh copy of its image
    // (`fixers.images` names it), used for the first time, then a second time.
    for (eco, image) in [("python", PY), ("rust", RUST), ("go", GO), ("node", NODE)] {
        let Some(case) = CASES
            .iter()
            .find(|c| c.image == image && c.expect.0 == Verdict::Fixed)
        else {
            continue;
        };
        let copy = format!("ci-medic-cold/{eco}:{}", std::process::id());
        fresh_copy(image, &copy);
        let config = format!("fixers:\n  images:\n    {eco}: {copy}\n");
        let main = [(".github/ci-medic.yml", config.as_str())];
        let (cold_verdict, cold_detail, cold) = run_case(case, &main).await;
        let (warm_verdict, _, warm) = run_case(case, &main).await;
        let _ = Command::new("docker").args(["rmi", &copy]).output();
        assert_eq!(cold_verdict, Verdict::Fixed, "{}: {cold_detail}", case.name);
        assert_eq!(warm_verdict, Verdict::Fixed, "{}", case.name);
        let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        println!(
            "/approve to pushed commit, {eco} ({}): cold image {:.1} s, then warm {:.1} s",
            case.name,
            secs(cold),
            secs(warm)
        );
    }
    println!(
        "{} single-problem pull requests: {} fixed, {} not fixed, {} broke something",
        rows.len(),
        count(Verdict::Fixed),
        count(Verdict::NotFixed),
        count(Verdict::BrokeSomething)
    );
    assert_eq!(count(Verdict::BrokeSomething), 0, "{rows:#?}");
    // Each case comes to what it is known to come to, for the reason known.
    for (name, verdict, detail, (want, why)) in &rows {
        assert_eq!(verdict, want, "{name}: {detail}");
        assert!(detail.contains(why), "{name}: {detail}");
    }
}
