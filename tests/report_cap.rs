//! The parser keeps at most 1,000 error locations: when a log holds more, the proposal comment
//! (and the check run) say that more errors were found than shown, from the count kept in the
//! proposal's state.
//!
//! No single real log in the corpus reaches the cap, so the job log here is every log of
//! `fixtures/corpus/logs` and `fixtures/corpus/real` under 64 KiB that expects an error,
//! concatenated in path order:
//! each is the real output of a tool or a public CI run (provenance beside each file), none is
//! edited, and together they report errors at more than 1,000 locations.

mod common;

use std::path::{Path, PathBuf};

use common::world::*;

fn corpus_logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            corpus_logs(&path, out);
        } else if path.extension().is_some_and(|e| e == "log")
            && std::fs::metadata(&path).unwrap().len() < 64 * 1024
            && expects_errors(&path)
        {
            out.push(path);
        }
    }
}

/// Whether the log's expectation lists an error. Logs that expect nothing are left out: a
/// successful job's closing line (`Finished: SUCCESS`, `Job succeeded`) rightly drops what the
/// parser found before it in the same log, which in a concatenation is every earlier log.
fn expects_errors(log: &Path) -> bool {
    let expected = log.with_extension("expected.json");
    std::fs::read_to_string(expected)
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
        .is_some_and(|v| !v.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_with_more_errors_than_the_cap_says_so_on_the_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus");
    let mut paths = Vec::new();
    corpus_logs(&root.join("logs"), &mut paths);
    corpus_logs(&root.join("real"), &mut paths);
    paths.sort();
    let mut log = Vec::new();
    for p in &paths {
        log.extend(std::fs::read(p).unwrap());
        if !log.ends_with(b"\n") {
            log.push(b'\n');
        }
    }
    let parsed = ci_medic::parser::parse_reader_parsed(&log[..], &Default::default()).unwrap();
    assert_eq!(parsed.reports.len(), ci_medic::parser::MAX_REPORTS);
    assert!(parsed.left_out > 0, "the concatenation must pass the cap");
    println!(
        "{} real logs, {} bytes: {} reports kept, {} findings left out",
        paths.len(),
        log.len(),
        parsed.reports.len(),
        parsed.left_out
    );

    let w = world(&[]).await;
    let check_id = fail_check(&w, &w.head, &log);
    deliver_check(&w, check_id).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let note = format!(
        "**More errors were found than shown:** the log reports errors at more than 1000 \
         locations; ci-medic kept the first 1000 and left {} further finding(s) out.",
        parsed.left_out
    );
    assert!(body.contains(&note), "{}", &body[..body.len().min(3000)]);
    assert!(body.contains("**1000 errors** found"));

    // The check run is written after the comment, with the same note in its summary.
    let summary = w
        .fake
        .wait_for(std::time::Duration::from_secs(30), |f| {
            f.check_runs(REPO, &w.head)
                .into_iter()
                .find(|r| r.name == "ci-medic")
                .and_then(|r| r.summary)
        })
        .await
        .expect("a ci-medic check run with a summary");
    assert!(summary.contains(&note), "{summary}");
    assert!(w.server.terminate().success());
}
