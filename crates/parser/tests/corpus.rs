//! Runs the parser over the corpus of real-tool logs (`fixtures/corpus/logs/<tool>/<case>.log`)
//! and compares each with `<case>.expected.json`: same reports, same order; `rule` and
//! `message_contains` are checked only when present. Override the directory with
//! `CI_MEDIC_CORPUS_DIR`.

mod common;

use std::path::PathBuf;

#[test]
fn corpus_matches_expectations() {
    let dir = std::env::var_os("CI_MEDIC_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus/logs")
        });
    if !dir.is_dir() {
        assert!(
            !common::in_ci(),
            "corpus directory {} is missing",
            dir.display()
        );
        eprintln!("skipping: corpus directory {} is missing", dir.display());
        return;
    }
    let logs = common::walk(&dir, &|p| p.extension().is_some_and(|e| e == "log"));
    assert!(!logs.is_empty(), "no .log files under {}", dir.display());
    let mut failures = 0;
    for log in &logs {
        let expected = log.with_extension("expected.json");
        let rel = log.strip_prefix(&dir).unwrap_or(log).display().to_string();
        match common::check(log, &expected) {
            Ok(()) => {}
            Err(diff) => {
                failures += 1;
                eprintln!("FAIL {rel}\n{diff}");
            }
        }
    }
    eprintln!(
        "corpus: {} of {} logs pass",
        logs.len() - failures,
        logs.len()
    );
    assert_eq!(
        failures,
        0,
        "{failures} of {} corpus logs differ",
        logs.len()
    );
}

/// A row of a `SOURCES.md` table: where a real log came from.
struct Source {
    kind: String,
}

/// Reads the `| case | kind | source | licence |` table of a `SOURCES.md`.
fn sources(dir: &std::path::Path) -> Result<std::collections::BTreeMap<String, Source>, String> {
    let path = dir.join("SOURCES.md");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (every set of real logs needs one)", path.display()))?;
    let mut rows = std::collections::BTreeMap::new();
    let mut header_seen = false;
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if !header_seen {
            if cells.len() < 4 || cells[..4] != ["case", "kind", "source", "licence"] {
                return Err(format!(
                    "{}: the table's columns must be | case | kind | source | licence |",
                    path.display()
                ));
            }
            header_seen = true;
            continue;
        }
        if cells
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        {
            continue;
        }
        if cells.len() < 4 || cells.iter().take(4).any(|c| c.is_empty()) {
            return Err(format!("{}: incomplete row `{line}`", path.display()));
        }
        let case = cells[0].trim_matches('`').to_string();
        let kind = cells[1].trim_matches('`').to_string();
        if kind != "ci-log" && kind != "tool-output" {
            return Err(format!(
                "{}: kind of `{case}` is `{kind}`, not ci-log or tool-output",
                path.display()
            ));
        }
        rows.insert(case, Source { kind });
    }
    Ok(rows)
}

/// The real-world corpus (`fixtures/corpus/real/<ecosystem>/<set>/`): logs copied from public CI
/// runs, issue threads and tools' own test suites, with hand-checked expectations and their
/// provenance in `SOURCES.md`. Prints recall, precision, type accuracy and test-name recall per
/// ecosystem and overall, and fails below 0.95 recall or precision overall; a report on a log
/// that has no error is a failure on its own.
#[test]
fn real_corpus_recall_and_precision() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus");
    let real = root.join("real");
    let mut problems = Vec::new();
    let mut per_eco: std::collections::BTreeMap<String, (common::Score, usize, usize, usize)> =
        Default::default();
    let mut all = common::Score::default();
    let (mut ci_logs, mut tool_outputs, mut clean) = (0, 0, 0);
    let logs = if real.is_dir() {
        common::walk(&real, &|p| p.extension().is_some_and(|e| e == "log"))
    } else {
        Vec::new()
    };
    let mut source_tables = std::collections::BTreeMap::new();
    for log in &logs {
        let rel = log.strip_prefix(&real).unwrap_or(log);
        let eco = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = log.parent().expect("a log is in a directory").to_path_buf();
        let table = source_tables
            .entry(dir.clone())
            .or_insert_with(|| sources(&dir));
        let stem = log
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match table {
            Err(e) => problems.push(format!("{}: {e}", rel.display())),
            Ok(rows) => match rows.get(&stem) {
                None => problems.push(format!("{}: no row in SOURCES.md", rel.display())),
                Some(s) if s.kind == "ci-log" => ci_logs += 1,
                Some(_) => tool_outputs += 1,
            },
        }
        let entry = per_eco.entry(eco).or_default();
        entry.1 += 1;
        match common::score(log, &log.with_extension("expected.json")) {
            Err(e) => problems.push(format!("{}: {e}", rel.display())),
            Ok((s, diff)) => {
                if s.expected == 0 {
                    clean += 1;
                    entry.3 += 1;
                    if s.reported > 0 {
                        problems.push(format!(
                            "{}: a log with no error gave {} report(s)\n{}",
                            rel.display(),
                            s.reported,
                            diff.join("\n")
                        ));
                    }
                }
                if !diff.is_empty() {
                    entry.2 += 1;
                    eprintln!("DIFF {}\n{}", rel.display(), diff.join("\n"));
                }
                entry.0.add(&s);
                all.add(&s);
            }
        }
    }
    eprintln!(
        "\nreal corpus: {} logs ({ci_logs} CI job logs, {tool_outputs} tool outputs; {clean} with no error)\n",
        logs.len()
    );
    eprintln!(
        "| ecosystem | logs | clean | not exact | expected | reported | recall | precision | type accuracy | test-name recall |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, s: &common::Score, n: usize, inexact: usize, clean: usize| {
        eprintln!(
            "| {name} | {n} | {clean} | {inexact} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            s.expected,
            s.reported,
            s.recall(),
            s.precision(),
            s.type_accuracy(),
            s.test_name_recall()
        );
    };
    for (eco, (s, n, inexact, clean)) in &per_eco {
        row(eco, s, *n, *inexact, *clean);
    }
    let inexact: usize = per_eco.values().map(|v| v.2).sum();
    row("**real, all**", &all, logs.len(), inexact, clean);
    // The self-made corpus (`logs/`), which must match exactly (the test above), in the same
    // terms, and the whole corpus.
    let own = common::walk(&root.join("logs"), &|p| {
        p.extension().is_some_and(|e| e == "log")
    });
    let mut own_score = common::Score::default();
    let mut own_clean = 0;
    for log in &own {
        if let Ok((s, _)) = common::score(log, &log.with_extension("expected.json")) {
            own_clean += usize::from(s.expected == 0);
            own_score.add(&s);
        }
    }
    row("self-made", &own_score, own.len(), 0, own_clean);
    let mut whole = all;
    whole.add(&own_score);
    row(
        "**whole corpus**",
        &whole,
        logs.len() + own.len(),
        inexact,
        clean + own_clean,
    );
    for p in &problems {
        eprintln!("PROBLEM {p}");
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) in the real corpus",
        problems.len()
    );
    assert!(
        all.recall() >= 0.95 && all.precision() >= 0.95,
        "real corpus below 0.95: recall {:.3}, precision {:.3}",
        all.recall(),
        all.precision()
    );
}

/// Per ecosystem: the score, the number of logs, how many differ from their expectation, and
/// how many expect nothing.
type EcoScores = std::collections::BTreeMap<String, (common::Score, usize, usize, usize)>;

/// Which half of the held-out corpus a case belongs to: `dev` when the 64-bit FNV-1a hash of its
/// name is even, `test` when odd. Fixed by the name alone, so nobody picks which logs to tune on.
fn heldout_half(case: &str) -> &'static str {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in case.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    if h.is_multiple_of(2) { "dev" } else { "test" }
}

/// Scores one half of the held-out corpus: per ecosystem `(score, logs, not exact, clean)`, the
/// total, the number of logs, and the problems (missing provenance, a case in the wrong half).
/// `show` prints each log's differences; it is off for the test half, whose misses are never
/// looked at to tune the parser.
fn heldout_half_scores(
    dir: &std::path::Path,
    half: &str,
    show: bool,
    seen: &std::collections::BTreeMap<String, String>,
    problems: &mut Vec<String>,
) -> (
    EcoScores,
    common::Score,
    usize,
    (common::Score, usize, usize, usize),
) {
    let mut per_eco = EcoScores::default();
    let mut all = common::Score::default();
    // Without the cases of SEEN.md: (score, logs, not exact, clean), as per ecosystem.
    let mut fresh = (common::Score::default(), 0, 0, 0);
    let logs = common::walk(dir, &|p| p.extension().is_some_and(|e| e == "log"));
    let mut tables = std::collections::BTreeMap::new();
    for log in &logs {
        let rel = log.strip_prefix(dir).unwrap_or(log);
        let eco = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = log.parent().expect("a log is in a directory").to_path_buf();
        let stem = log
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if heldout_half(&stem) != half {
            problems.push(format!(
                "{half}/{}: the case's name hashes to the {} half",
                rel.display(),
                heldout_half(&stem)
            ));
        }
        match tables
            .entry(parent.clone())
            .or_insert_with(|| sources(&parent))
        {
            Err(e) => problems.push(format!("{half}/{}: {e}", rel.display())),
            Ok(rows) if !rows.contains_key(&stem) => {
                problems.push(format!("{half}/{}: no row in SOURCES.md", rel.display()));
            }
            Ok(_) => {}
        }
        let entry = per_eco.entry(eco).or_default();
        entry.1 += 1;
        match common::score(log, &log.with_extension("expected.json")) {
            Err(e) => problems.push(format!("{half}/{}: {e}", rel.display())),
            Ok((s, diff)) => {
                entry.3 += usize::from(s.expected == 0);
                if !diff.is_empty() {
                    entry.2 += 1;
                    if show {
                        eprintln!("DIFF {half}/{}\n{}", rel.display(), diff.join("\n"));
                    }
                }
                entry.0.add(&s);
                all.add(&s);
                match seen.get(&stem) {
                    Some(h) if h != half => problems.push(format!(
                        "{half}/{}: SEEN.md puts it in the {h} half",
                        rel.display()
                    )),
                    Some(_) => {}
                    None => {
                        fresh.0.add(&s);
                        fresh.1 += 1;
                        fresh.2 += usize::from(!diff.is_empty());
                        fresh.3 += usize::from(s.expected == 0);
                    }
                }
            }
        }
    }
    (per_eco, all, logs.len(), fresh)
}

/// `SEEN.md`: held-out cases whose failure a log of the real corpus already repeats, by case
/// name, with their half.
fn heldout_seen(
    root: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let path = root.join("SEEN.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut seen = std::collections::BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 2 || cells[0] == "case" || cells[0].chars().all(|c| c == '-' || c == ':') {
            continue;
        }
        seen.insert(cells[0].to_string(), cells[1].to_string());
    }
    Ok(seen)
}

/// The held-out corpus (`fixtures/corpus/heldout/{dev,test}/<ecosystem>/held-<set>/`): real logs
/// whose expectations were committed before the parser ran on them. Prints the dev half per
/// ecosystem and both halves as rows; the test half is the honest figure and has no gate, the dev
/// half (where misses are fixed) is held to the same 0.95 as the real corpus.
#[test]
fn heldout_corpus_dev_and_test() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus/heldout");
    let mut problems = Vec::new();
    let seen = heldout_seen(&root).unwrap_or_else(|e| {
        problems.push(e);
        Default::default()
    });
    let (dev_eco, dev, dev_n, dev_fresh) =
        heldout_half_scores(&root.join("dev"), "dev", true, &seen, &mut problems);
    let (test_eco, test, test_n, test_fresh) =
        heldout_half_scores(&root.join("test"), "test", true, &seen, &mut problems);
    let listed = dev_n + test_n - dev_fresh.1 - test_fresh.1;
    if listed != seen.len() {
        problems.push(format!(
            "SEEN.md lists {} case(s), {listed} of them found in the held-out corpus",
            seen.len()
        ));
    }
    let row = |name: &str, s: &common::Score, n: usize, inexact: usize, clean: usize| {
        eprintln!(
            "| {name} | {n} | {clean} | {inexact} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            s.expected,
            s.reported,
            s.recall(),
            s.precision(),
            s.type_accuracy(),
            s.test_name_recall()
        );
    };
    let sums = |m: &EcoScores| (m.values().map(|v| v.2).sum(), m.values().map(|v| v.3).sum());
    eprintln!("\nheld-out corpus ({dev_n} dev logs, {test_n} test logs)\n");
    eprintln!(
        "| held-out | logs | clean | not exact | expected | reported | recall | precision | type accuracy | test-name recall |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (eco, (s, n, inexact, clean)) in &dev_eco {
        row(&format!("dev: {eco}"), s, *n, *inexact, *clean);
    }
    let (dev_inexact, dev_clean) = sums(&dev_eco);
    row("**held-out dev**", &dev, dev_n, dev_inexact, dev_clean);
    row(
        "held-out dev, without SEEN.md",
        &dev_fresh.0,
        dev_fresh.1,
        dev_fresh.2,
        dev_fresh.3,
    );
    let (test_inexact, test_clean) = sums(&test_eco);
    row(
        "**former held-out test** (examined for precision: no longer held out, not gated)",
        &test,
        test_n,
        test_inexact,
        test_clean,
    );
    row(
        "former held-out test, without SEEN.md (examined: no longer held out)",
        &test_fresh.0,
        test_fresh.1,
        test_fresh.2,
        test_fresh.3,
    );
    for p in &problems {
        eprintln!("PROBLEM {p}");
    }
    assert!(
        dev_n > 0 && test_n > 0,
        "held-out corpus missing under {}",
        root.display()
    );
    assert!(
        problems.is_empty(),
        "{} problem(s) in the held-out corpus",
        problems.len()
    );
}

/// The first fresh held-out set (`fixtures/corpus/heldout/fresh/<ecosystem>/fresh-<set>/`): real
/// logs from sources no other `SOURCES.md` named, committed with their expectations before the
/// parser ran on them. Its misses were then examined and fixed as families (issue 15, recall
/// work), so it is no longer held out: it prints its per-log differences like the dev half and
/// one row, not gated.
#[test]
fn heldout_fresh_set() {
    fresh_set(
        "fresh",
        "**former fresh** (examined for recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh2/`: built like `fresh/`, from other sources, once `fresh/` was tuned on. Its
/// misses were then examined and fixed as families (issue 15, second recall work), so it is no
/// longer held out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh2_set() {
    fresh_set(
        "fresh2",
        "**former fresh2** (examined for recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh3/`: built once `fresh2/` was taken for tuning, from failed and successful
/// GitHub Actions jobs of projects no other set names. Its misses and false reports were then
/// examined and fixed as families (issue 15, precision and recall work), so it is no longer held
/// out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh3_set() {
    fresh_set(
        "fresh3",
        "**former fresh3** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh4/`: built while `fresh2/` and `fresh3/` were being tuned on, from CI job logs
/// of projects no other set names (LogSage, LLM4Build, BugSwarm's analyzer test data). Measured
/// once held out (recall 0.425, precision 0.219 on main's `0055c96`), then its misses and false
/// reports were examined and fixed as families (issue 15, precision and recall work), so it is no
/// longer held out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh4_set() {
    fresh_set(
        "fresh4",
        "**former fresh4** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh5/`: built while `fresh4/` was being tuned on, from CI job logs of projects no
/// other set names, a third of them Travis CI (LogChunks) rather than GitHub Actions, the rest
/// from LogSage, BugSwarm's analyzer test data and LLM4Build. Measured once held out (recall
/// 0.487, precision 0.380), then its misses and false reports were examined and fixed as families
/// (issue 15, precision and recall work on the former fresh5 set), so it is no longer held out:
/// it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh5_set() {
    fresh_set(
        "fresh5",
        "**former fresh5** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh6/`: built while `fresh4/` and `fresh5/` were being tuned on, from CI job logs
/// of projects no other set names, most of them Travis CI job logs BugSwarm keeps as test data
/// that no set had cited. Measured once held out (recall 0.714, precision 0.816), then its misses
/// and false reports were examined and fixed as families (issue 15, precision and recall work on
/// the former fresh6 set), so it is no longer held out: it prints its per-log differences and one
/// row, not gated.
#[test]
fn heldout_fresh6_set() {
    fresh_set(
        "fresh6",
        "**former fresh6** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh7/`: built while `fresh6/` was being tuned on, from Travis CI and GitHub Actions
/// job logs of projects no other set names (owners a-l; BugSwarm's test data and LogChunks).
/// Measured held out on two parsers (recall 0.797, precision 0.622 before this session's rounds;
/// 0.844 and 0.643 after the `fresh6/` round), then its misses and false reports were examined
/// and fixed as families (issue 15, precision and recall work on the former fresh7 set), so it is
/// no longer held out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh7_set() {
    fresh_set(
        "fresh7",
        "**former fresh7** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh8/`: built while `fresh6/` was being tuned on, from CI job logs of projects no
/// other set names whose owner starts with m-z (BugSwarm's Travis CI and Actions test data,
/// LogChunks, PyTables' Actions logs kept by LogEmbedding). Measured held out on two parsers
/// (recall 0.800, precision 0.840 before the fresh6 round; 0.882 and 0.893 after it), then its
/// misses and false reports were examined and fixed as families (issue 15, precision and recall
/// work on the former fresh8 set), so it is no longer held out: it prints its per-log differences
/// and one row, not gated.
#[test]
fn heldout_fresh8_set() {
    fresh_set(
        "fresh8",
        "**former fresh8** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh9/`: built while `fresh7/` and `fresh8/` were being tuned on, from logs of
/// projects no other set names (BugSwarm's Travis CI and Actions test data, LLM4Build's Actions
/// job logs and its container reproductions: Go, .NET, C/C++ among them). Measured held out once
/// on the session's final parser (recall 0.799, precision 0.863), then its misses and false
/// reports were examined and fixed as families (issue 15, precision and recall work on the former
/// fresh9 set), so it is no longer held out: it prints its per-log differences and one row, not
/// gated.
#[test]
fn heldout_fresh9_set() {
    fresh_set(
        "fresh9",
        "**former fresh9** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh10/`: logs of projects no other set names (BugSwarm's Travis CI and Actions
/// test data, LLM4Build's Actions job logs and its container reproductions: Rust, Go, C/C++,
/// .NET, vitest and Jest among them). Measured held out once on the session's final parser
/// (recall 0.800, precision 0.800), then its misses and false reports were examined and fixed as
/// families (issue 15, precision and recall work on the former fresh10 set), so it is no longer
/// held out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh10_set() {
    fresh_set(
        "fresh10",
        "**former fresh10** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh11/`: pasted CI and tool output from GitHub issue and pull-request threads of
/// 41 projects no other set names (yamllint, actionlint, terraform, phpcs, minitest, bun, Gradle
/// and Kotlin, sbt, Go, Rust, .NET and linker output among them). Measured held out once on the
/// session's parser (recall 0.655, precision 0.864), then its misses and false reports were
/// examined and fixed as families (issue 15, precision and recall work on the former fresh11
/// set), so it is no longer held out: it prints its per-log differences and one row, not gated.
#[test]
fn heldout_fresh11_set() {
    fresh_set(
        "fresh11",
        "**former fresh11** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh12/`: pasted CI and tool output from GitHub issue and pull-request threads of
/// 34 projects no other set names (AppVeyor and GitLab CI job logs, MSVC, Bazel, GHC, ExUnit,
/// Swift 6, tsc, Maven and mocha among them). Measured held out once (recall 0.294, precision
/// 0.625, where GitHub's problem matchers would find 23 of its 34 locations), then its misses
/// and false reports were examined and fixed as families (issue 15, precision and recall work on
/// the former fresh12 set), so it is no longer held out: it prints its per-log differences and
/// one row, not gated.
#[test]
fn heldout_fresh12_set() {
    fresh_set(
        "fresh12",
        "**former fresh12** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh13/`: pasted CI and tool output from GitHub issue and pull-request threads of
/// 37 projects no other set names (Actions, Travis and Jenkins job logs, Erlang Common Test,
/// Objective-C, R, ktlint, flake8, shellcheck, testify and rustc among them). Measured held out
/// once (recall 0.767, precision 1.000), then its misses were examined and fixed as families
/// (issue 15, recall work on the former fresh13 set), so it is no longer held out: it prints its
/// per-log differences and one row, not gated.
#[test]
fn heldout_fresh13_set() {
    fresh_set(
        "fresh13",
        "**former fresh13** (examined for recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// `heldout/fresh14/`: pasted CI and tool output from GitHub issue and pull-request threads of
/// 38 projects no other set names, and one GitHub Actions log a project archives in its own
/// repository (tsc, javac, kotlinc, GHC, mypy, clang, Jest, mocha, vitest and minitest among
/// them). Measured held out once (recall 0.429, precision 0.714), then its misses and false
/// reports were examined and fixed as families (issue 15, precision and recall work on the former
/// fresh14 set), so it is no longer held out: it prints its per-log differences and one row, not
/// gated.
#[test]
fn heldout_fresh14_set() {
    fresh_set(
        "fresh14",
        "**former fresh14** (examined for precision and recall: no longer held out, not gated)",
        Differences::Shown,
    );
}

/// Whether a fresh set's per-log differences are printed: only for a set already tuned on.
/// `Hidden` keeps a held-out set honest: its totals are printed, never which log differs.
#[derive(PartialEq)]
enum Differences {
    Shown,
    #[expect(dead_code, reason = "the next held-out set uses it")]
    Hidden,
}

fn fresh_set(set: &str, label: &str, differences: Differences) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus/heldout");
    let root = root.join(set);
    let logs = common::walk(&root, &|p| p.extension().is_some_and(|e| e == "log"));
    let mut problems = Vec::new();
    let mut tables = std::collections::BTreeMap::new();
    let mut all = common::Score::default();
    let (mut ci_logs, mut clean, mut inexact) = (0, 0, 0);
    for log in &logs {
        let rel = log.strip_prefix(&root).unwrap_or(log).display().to_string();
        let parent = log.parent().expect("a log is in a directory").to_path_buf();
        let stem = log.file_stem().map(|s| s.to_string_lossy().into_owned());
        let stem = stem.unwrap_or_default();
        match tables
            .entry(parent.clone())
            .or_insert_with(|| sources(&parent))
        {
            Err(e) => problems.push(format!("{set}/{rel}: {e}")),
            Ok(rows) => match rows.get(&stem) {
                None => problems.push(format!("{set}/{rel}: no row in SOURCES.md")),
                Some(src) => ci_logs += usize::from(src.kind == "ci-log"),
            },
        }
        match common::score(log, &log.with_extension("expected.json")) {
            Err(e) => problems.push(format!("{set}/{rel}: {e}")),
            Ok((s, diff)) => {
                clean += usize::from(s.expected == 0);
                inexact += usize::from(!diff.is_empty());
                if differences == Differences::Shown && !diff.is_empty() {
                    eprintln!("DIFF {set}/{rel}\n{}", diff.join("\n"));
                }
                all.add(&s);
            }
        }
    }
    eprintln!(
        "\n{set} held-out set ({} logs, {ci_logs} CI job logs)\n",
        logs.len()
    );
    eprintln!(
        "| held-out | logs | clean | not exact | expected | reported | recall | precision | type accuracy | test-name recall |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    eprintln!(
        "| {label} | {} | {clean} | {inexact} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
        logs.len(),
        all.expected,
        all.reported,
        all.recall(),
        all.precision(),
        all.type_accuracy(),
        all.test_name_recall()
    );
    for p in &problems {
        eprintln!("PROBLEM {p}");
    }
    assert!(
        !logs.is_empty(),
        "{set} held-out set missing under {}",
        root.display()
    );
    assert!(
        problems.is_empty(),
        "{} problem(s) in the {set} held-out set",
        problems.len()
    );
}
