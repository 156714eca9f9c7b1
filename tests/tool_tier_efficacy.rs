//! The tool tier's efficacy on the corpus's real formatter failures, counted and printed per
//! tool. Each case is a real CI log from `fixtures/corpus/real/**` and the real repository files
//! it names (`fixtures/tool_tier/*/`, provenance in its README). Every report the parser draws
//! from the log goes through the tool tier as the fix agent runs it (fixer image, sandbox, the
//! guard with the formatter's policy), and the outcome is judged by re-running the tool's own
//! check on the patched file in the sandbox:
//!
//! - `repaired`: a patch the guard accepts, and the check passes on it;
//! - `still failing`: a patch the guard accepts, but the check still fails;
//! - `refused`: the guard refused the tool's patch;
//! - `no patch`: the tool failed or changed nothing although the check fails;
//! - `already formatted`: the check passes on the file as it is (the repository fixed it since,
//!   or the image's version agrees with it), so there was nothing to repair;
//! - `not in tree`: the log names a file the repository no longer has.
//!
//! `cargo test --test tool_tier_efficacy -- --nocapture` shows the table. It needs a Docker
//! engine and the fixer images (`.ci/fixer-images.sh`): without them it says it was skipped,
//! and under `CI=true` it fails instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ci_medic::executor::{
    DockerExecutor, ExecutionRequest, Executor, NetworkAccess, SandboxSettings,
};
use ci_medic::fix_agent::tool_tier::{ToolDecline, ToolTier};
use ci_medic::fix_agent::{FixInput, GuardPolicy, check_patch, tool_policy};
use ci_medic_core::tool_tier::{Ecosystem, FixTool};

/// (log under `fixtures/corpus/real`, tree under `fixtures/tool_tier`).
const CASES: &[(&str, &str)] = &[
    ("python/fmt-issues/pydoe3_black_check.log", "pydoe3"),
    ("python/fmt-issues/ibis_bigquery_isort_actions.log", "ibis"),
    ("python/fmt-issues/mopidy_ruff_format_tox.log", "mopidy"),
    (
        "javascript/fmt-issues/telescope_prettier_check.log",
        "telescope",
    ),
    ("rust/fmt-issues/rustfmt3136_travis_at_line.log", "ctest"),
    ("c-cpp/fmt-issues/nnhal_clang_format_werror.log", "nnhal"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Repaired,
    StillFailing,
    Refused,
    NoPatch,
    AlreadyFormatted,
    NotInTree,
}

const OUTCOMES: [(Outcome, &str); 6] = [
    (Outcome::Repaired, "repaired"),
    (Outcome::StillFailing, "still failing"),
    (Outcome::Refused, "refused"),
    (Outcome::NoPatch, "no patch"),
    (Outcome::AlreadyFormatted, "already formatted"),
    (Outcome::NotInTree, "not in tree"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A scratch copy of a fixture tree (the tool tier writes the file into its tree).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn policy(path: &str, line: u32) -> GuardPolicy {
    GuardPolicy {
        allowed_paths: vec![path.to_string()],
        protected_paths: vec![],
        do_not_touch: vec![],
        max_files_changed: 3,
        no_new_dependencies: true,
        allowed_dependencies: vec![],
        confidence_threshold: 0.7,
        reported_lines: vec![(path.to_string(), line)],
        whole_file_formatting: vec![],
    }
}

async fn engine_with_images() -> Option<DockerExecutor> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let docker = DockerExecutor::connect(SandboxSettings::default())
        .await
        .ok();
    let mut missing = Vec::new();
    if let Some(d) = &docker {
        for e in Ecosystem::ALL {
            if d.client().inspect_image(e.default_image()).await.is_err() {
                missing.push(e.default_image());
            }
        }
    }
    if docker.is_none() || !missing.is_empty() {
        let why = if docker.is_none() {
            "no Docker engine".to_string()
        } else {
            format!("missing images {missing:?}")
        };
        assert!(
            !ci,
            "CI=true but {why} (run .ci/docker-setup.sh and .ci/fixer-images.sh)"
        );
        eprintln!("skipping: {why} (run .ci/fixer-images.sh)");
        return None;
    }
    docker
}

/// Whether the tool's own check passes on `file` in `tree`, run in the tool's image.
async fn check_passes(docker: &DockerExecutor, tree: &Path, tool: &FixTool, file: &str) -> bool {
    let result = docker
        .execute(ExecutionRequest {
            workspace_path: tree.to_path_buf(),
            project_type: None,
            resolved_build_command: tool.check_command(&[file.to_string()]),
            timeout_seconds: 120,
            image: tool.ecosystem().default_image().to_string(),
            network: NetworkAccess::Disabled,
        })
        .await
        .expect("the check runs");
    result.succeeded()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_tier_repairs_the_corpus_formatter_failures_it_has_files_for() {
    let Some(docker) = engine_with_images().await else {
        return;
    };
    let tier = ToolTier::new(docker.clone());
    let scratch = tempfile::tempdir().unwrap();
    let mut table: BTreeMap<String, BTreeMap<Outcome, u32>> = BTreeMap::new();
    let mut lines = Vec::new();
    for (n, (log, tree)) in CASES.iter().enumerate() {
        let text = std::fs::read_to_string(root().join("corpus/real").join(log)).unwrap();
        let reports = ci_medic_parser::parse_str(&text, &ci_medic_parser::ParseOptions::default());
        let fixture = root().join("tool_tier").join(tree);
        assert!(!reports.is_empty(), "{log}: the parser finds the failure");
        for (k, report) in reports.into_iter().enumerate() {
            let ws = scratch.path().join(format!("{n}-{k}"));
            copy_tree(&fixture, &ws);
            let path = report.file_path.clone();
            let Ok(before) = std::fs::read_to_string(ws.join(&path)) else {
                let tool = report.tool.clone().unwrap_or_default();
                *table
                    .entry(tool)
                    .or_default()
                    .entry(Outcome::NotInTree)
                    .or_default() += 1;
                lines.push(format!("{tree}: {path}: not in tree"));
                continue;
            };
            let input = FixInput::new(report.clone(), before);
            let tool = ToolTier::tool_for(&ws, &input)
                .unwrap_or_else(|| panic!("{log}: {path}: the tool tier has a tool for it"));
            let name = tool.name().to_string();
            let (outcome, detail) = if check_passes(&docker, &ws, &tool, &path).await {
                (Outcome::AlreadyFormatted, String::new())
            } else {
                match tier.fix(&ws, &input).await {
                    Err(ToolDecline::NoPatch(why)) => (Outcome::NoPatch, why.to_string()),
                    Err(other) => panic!("{log}: {path}: {other}"),
                    Ok(fix) => {
                        let p =
                            tool_policy(&policy(&path, report.line_number), &input, &fix.output);
                        match check_patch(&p, &fix.output.to_candidate(&input)) {
                            Err(v) => (Outcome::Refused, v[0].to_string()),
                            Ok(()) => {
                                std::fs::write(ws.join(&path), &fix.output.patched_content)
                                    .unwrap();
                                if check_passes(&docker, &ws, &tool, &path).await {
                                    (Outcome::Repaired, fix.output.fix_reason)
                                } else {
                                    (Outcome::StillFailing, fix.output.fix_reason)
                                }
                            }
                        }
                    }
                }
            };
            let label = OUTCOMES.iter().find(|(o, _)| *o == outcome).unwrap().1;
            let detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
            lines.push(format!("{tree}: {path} [{name}]: {label} {detail}"));
            *table.entry(name).or_default().entry(outcome).or_default() += 1;
        }
    }
    println!("tool tier efficacy on the corpus's real formatter failures:");
    for l in &lines {
        println!("  {l}");
    }
    println!(
        "{:<14}{}",
        "tool",
        OUTCOMES
            .iter()
            .map(|(_, l)| format!("{l:>19}"))
            .collect::<String>()
    );
    let mut totals = BTreeMap::new();
    for (tool, counts) in &table {
        let row: String = OUTCOMES
            .iter()
            .map(|(o, _)| {
                let c = counts.get(o).copied().unwrap_or(0);
                *totals.entry(*o).or_insert(0) += c;
                format!("{c:>19}")
            })
            .collect();
        println!("{tool:<14}{row}");
    }
    let failing: u32 = totals
        .iter()
        .filter(|(o, _)| !matches!(o, Outcome::AlreadyFormatted | Outcome::NotInTree))
        .map(|(_, c)| c)
        .sum();
    let repaired = totals.get(&Outcome::Repaired).copied().unwrap_or(0);
    println!("repaired {repaired} of {failing} reports whose check fails on the tree");
    // The pyDOE3 pair is the known-failing, repairable case; the counts above are the figure.
    assert!(
        table["black"].get(&Outcome::Repaired).copied().unwrap_or(0) >= 2,
        "{table:?}"
    );
    assert_eq!(
        totals.get(&Outcome::StillFailing).copied().unwrap_or(0),
        0,
        "a patch the guard accepted must pass the tool's own check: {lines:#?}"
    );
}
