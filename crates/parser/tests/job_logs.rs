//! Runs the parser over the real GitHub Actions job logs in `shared/github/job-logs/` (read in
//! place, never copied) and compares with `fixtures/job-logs-expected/<same path>.expected.json`.
//! The `shared` directory is the one beside the repository (override: `CI_MEDIC_SHARED_DIR`); in
//! CI (`CI=true`) its absence is a failure, elsewhere the test skips with a message.

mod common;

use std::path::PathBuf;

#[test]
fn real_job_logs_match_expectations() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = common::shared_dir().join("github/job-logs");
    if !dir.is_dir() {
        assert!(!common::in_ci(), "{} is missing", dir.display());
        eprintln!(
            "skipping: {} is missing (set CI_MEDIC_SHARED_DIR)",
            dir.display()
        );
        return;
    }
    let expected_root = manifest.join("../../fixtures/job-logs-expected");
    let logs = common::walk(&dir, &|p| {
        p.extension().is_some_and(|e| e == "log" || e == "txt")
    });
    assert!(!logs.is_empty());
    let mut failures = 0;
    for log in &logs {
        let rel = log.strip_prefix(&dir).expect("under dir");
        let expected = expected_root.join(format!("{}.expected.json", rel.display()));
        if let Err(diff) = common::check(log, &expected) {
            failures += 1;
            eprintln!("FAIL {}\n{diff}", rel.display());
        }
    }
    eprintln!("job logs: {} of {} pass", logs.len() - failures, logs.len());
    assert_eq!(failures, 0, "{failures} job logs differ");
}
