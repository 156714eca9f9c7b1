//! Runs the triage over real logs: the non-code failures of `fixtures/triage/real/` (expected
//! kind in `<case>.expected.json`) and the parser's corpus of code failures
//! (`fixtures/corpus/real/**` logs that expect reports, and `fixtures/corpus/logs/**`), which
//! must all come out `code`. Prints precision and recall per kind; fails below 0.95 precision
//! for `infrastructure`, on any code log called something else, on a case whose evidence lacks
//! an expected substring, and on a log without a `SOURCES.md` row.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ci_medic_parser::{ParseOptions, parse_bytes};
use ci_medic_triage::{CheckFacts, FailureKind, Triage, triage};
use serde::Deserialize;

#[derive(Deserialize)]
struct Expected {
    kind: FailureKind,
    #[serde(default)]
    evidence_contains: Vec<String>,
    #[serde(default)]
    facts: CheckFacts,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "log") {
            out.push(p);
        }
    }
}

fn logs(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    walk(dir, &mut v);
    v.sort();
    v
}

fn classify(log: &Path, facts: &CheckFacts) -> Result<Triage, String> {
    let bytes = std::fs::read(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let reports = parse_bytes(&bytes, &ParseOptions::default());
    Ok(triage(&bytes, &reports, facts, &[]))
}

/// The case names of a set's `SOURCES.md` table.
fn source_rows(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join("SOURCES.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows = Vec::new();
    let mut header = false;
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if !header {
            if cells.len() < 4 || cells[..4] != ["case", "kind", "source", "licence"] {
                return Err(format!(
                    "{}: columns must be case|kind|source|licence",
                    path.display()
                ));
            }
            header = true;
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
        rows.push(cells[0].to_string());
    }
    Ok(rows)
}

/// `(expected, predicted)` counts.
#[derive(Default)]
struct Confusion(BTreeMap<(FailureKind, FailureKind), usize>);

impl Confusion {
    fn add(&mut self, expected: FailureKind, got: FailureKind) {
        *self.0.entry((expected, got)).or_default() += 1;
    }
    fn count(&self, f: impl Fn(FailureKind, FailureKind) -> bool) -> usize {
        self.0
            .iter()
            .filter(|((e, g), _)| f(*e, *g))
            .map(|(_, n)| n)
            .sum()
    }
    /// Precision, recall, expected, predicted for one kind.
    fn scores(&self, k: FailureKind) -> (f64, f64, usize, usize) {
        let tp = self.count(|e, g| e == k && g == k);
        let expected = self.count(|e, _| e == k);
        let predicted = self.count(|_, g| g == k);
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        (
            ratio(tp, predicted),
            ratio(tp, expected),
            expected,
            predicted,
        )
    }
}

#[test]
fn triage_corpus_precision_and_recall() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut problems = Vec::new();
    let mut confusion = Confusion::default();
    let mut sets: BTreeMap<PathBuf, Result<Vec<String>, String>> = BTreeMap::new();

    let real = root.join("triage/real");
    let cases = logs(&real);
    for log in &cases {
        let rel = log.strip_prefix(&real).unwrap_or(log).display().to_string();
        let dir = log.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = log
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match sets.entry(dir.clone()).or_insert_with(|| source_rows(&dir)) {
            Err(e) => problems.push(e.clone()),
            Ok(rows) if !rows.contains(&stem) => problems.push(format!("{rel}: no SOURCES.md row")),
            Ok(_) => {}
        }
        let exp_path = log.with_extension("expected.json");
        let expected: Expected = match std::fs::read_to_string(&exp_path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(e) => e,
            Err(e) => {
                problems.push(format!("{}: {e}", exp_path.display()));
                continue;
            }
        };
        let t = match classify(log, &expected.facts) {
            Ok(t) => t,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        confusion.add(expected.kind, t.kind);
        if t.kind != expected.kind {
            eprintln!(
                "MISS {rel}: expected {}, got {} (rules {:?}, {} report(s))",
                expected.kind, t.kind, t.rules, t.code_reports
            );
            continue;
        }
        for s in &expected.evidence_contains {
            if !t.evidence.iter().any(|e| e.text.contains(s.as_str())) {
                problems.push(format!(
                    "{rel}: no evidence line contains {s:?}; evidence: {:?}",
                    t.evidence.iter().map(|e| &e.text).collect::<Vec<_>>()
                ));
            }
        }
    }

    // The parser's corpus: code failures, which must stay code.
    let corpus = root.join("corpus");
    let mut code_logs = 0;
    let mut code_wrong = 0;
    for log in logs(&corpus.join("real"))
        .into_iter()
        .chain(logs(&corpus.join("logs")))
    {
        let in_real = log.starts_with(corpus.join("real"));
        if in_real {
            let expects_reports = std::fs::read_to_string(log.with_extension("expected.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
                .is_some_and(|v| !v.is_empty());
            if !expects_reports {
                continue;
            }
        }
        code_logs += 1;
        match classify(&log, &CheckFacts::default()) {
            Err(e) => problems.push(e),
            Ok(t) => {
                confusion.add(FailureKind::Code, t.kind);
                if t.kind != FailureKind::Code {
                    code_wrong += 1;
                    problems.push(format!(
                        "code log {} came out {} (rules {:?}, evidence {:?})",
                        log.strip_prefix(&corpus).unwrap_or(&log).display(),
                        t.kind,
                        t.rules,
                        t.evidence.iter().map(|e| &e.text).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }

    eprintln!(
        "\ntriage corpus: {} non-code logs in {} sets, {code_logs} code logs of the parser's corpus ({code_wrong} not code)\n",
        cases.len(),
        sets.len()
    );
    eprintln!("| kind | expected | predicted | precision | recall |");
    eprintln!("|---|---:|---:|---:|---:|");
    for k in FailureKind::ALL {
        let (p, r, e, n) = confusion.scores(k);
        eprintln!("| {k} | {e} | {n} | {p:.3} | {r:.3} |");
    }
    for p in &problems {
        eprintln!("PROBLEM {p}");
    }
    let (infra_precision, ..) = confusion.scores(FailureKind::Infrastructure);
    assert!(
        cases.len() >= 60,
        "the triage corpus has {} logs, fewer than 60",
        cases.len()
    );
    assert!(
        infra_precision >= 0.95,
        "infrastructure precision {infra_precision:.3} is below 0.95"
    );
    assert!(problems.is_empty(), "{} problem(s)", problems.len());
}
