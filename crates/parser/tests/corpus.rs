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
