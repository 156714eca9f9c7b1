//! How many GitHub API requests one handled failure costs: failed check → proposal →
//! `/approve` → push → verdict, counted by the fake GitHub (which records every request the
//! real binary sends) and printed per phase. Fails above the budget, so a change that adds
//! requests to the loop is seen.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::world::*;
use fake_github::CheckOutput;

/// The most requests the whole loop may send: what it costs today (42 before the repository
/// configuration was cached for a minute, the fix agent read the tree in one recursive request,
/// the fix commit reused that tree and the fix job took where to push from the approval), so
/// any added request fails this test; then one more for failure triage, which reads the Actions
/// job's steps and run attempt). The target is 20 (conditional requests would get closer).
const BUDGET: usize = 32;

/// Waits until the binary has sent no request for half a second: its jobs are done.
async fn quiet(w: &World) {
    let mut last = w.fake.request_log().len();
    let mut still = 0;
    while still < 5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = w.fake.request_log().len();
        if n == last {
            still += 1;
        } else {
            (last, still) = (n, 0);
        }
    }
}

/// The requests since the last call, as `METHOD path` with ids and shas replaced, counted.
fn take(w: &World) -> BTreeMap<String, usize> {
    let log = w.fake.request_log();
    w.fake.clear_request_log();
    let mut out = BTreeMap::new();
    for r in log {
        let path: Vec<String> = r
            .path
            .split('?')
            .next()
            .unwrap_or_default()
            .split('/')
            .map(|seg| {
                let hexish = seg.len() >= 7 && seg.chars().all(|c| c.is_ascii_hexdigit());
                if hexish || (!seg.is_empty() && seg.chars().all(|c| c.is_ascii_digit())) {
                    ":id".to_string()
                } else {
                    seg.to_string()
                }
            })
            .collect();
        *out.entry(format!("{} {}", r.method, path.join("/")))
            .or_default() += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handled_failure_stays_within_its_github_api_budget() {
    let w = world(&[]).await;
    quiet(&w).await;
    take(&w);
    let mut phases: Vec<(&str, BTreeMap<String, usize>)> = Vec::new();

    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    quiet(&w).await;
    phases.push(("failed check → proposal", take(&w)));

    say(&w, "maintainer", "/approve").await;
    wait_comment(&w, |b| b.contains("**pushed**")).await;
    quiet(&w).await;
    phases.push(("/approve → push", take(&w)));

    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    assert_ne!(new_head, w.head, "the fix was pushed");
    let passed = w.fake.add_check_run(
        REPO,
        &new_head,
        CHECK,
        "github-actions",
        "success",
        CheckOutput::default(),
    );
    deliver_check(&w, passed).await;
    wait_comment(&w, |b| b.contains("**executed**")).await;
    quiet(&w).await;
    phases.push(("verdict", take(&w)));

    let mut total = 0;
    for (phase, calls) in &phases {
        let n: usize = calls.values().sum();
        total += n;
        println!("{phase}: {n} requests");
        for (call, count) in calls {
            println!("  {count:>3}  {call}");
        }
    }
    println!("whole loop: {total} requests (budget {BUDGET})");
    assert!(
        total <= BUDGET,
        "the loop sent {total} GitHub API requests, over its budget of {BUDGET}"
    );
    assert!(w.server.terminate().success());
}
