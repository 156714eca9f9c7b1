//! How many GitHub API requests one handled failure costs: failed check → proposal →
//! `/approve` → push → verdict, counted by the fake GitHub (which records every request the
//! real binary sends) and printed per phase. Fails above the budget, so a change that adds
//! requests to the loop is seen.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::world::*;
use fake_github::CheckOutput;

/// The most GitHub API requests the whole loop may send (304s apart). 49 in the first count,
/// 24 requests before this budget (23 to the API and the log download): the pull request is
/// not read when the check run's event names it with this head, the repository is not read to
/// learn its default branch, the check run is not read back, the tree is read once,
/// recursively, by the commit's sha, the fix's text goes inside the tree request, a comment,
/// check run or reply never asked for is created without listing first, and failure triage
/// reads the Actions job. Then three fewer: the branch ref is not read before the push (the
/// fast-forward-only update refuses a branch that moved, and only a refusal reads it), and the
/// annotations check run is not written at the push and at the verdict, because by then its
/// commit is no longer the pull request's head and GitHub does not show it there (the
/// approval, while it still is, is written).
const BUDGET: usize = 20;

/// Downloads from the log host GitHub redirects a job's logs to (`GET /_logs/…` on the fake):
/// not the API, and not counted against its rate limit, but counted here too so that a second
/// download shows.
const LOG_DOWNLOADS: usize = 1;

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
        // A 304 answers a conditional request and costs no rate limit: shown apart.
        let not_modified = if r.status == 304 { " → 304" } else { "" };
        *out.entry(format!("{} {}{not_modified}", r.method, path.join("/")))
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

    // The approval is on the check run too, while its commit is the pull request's head.
    let ours = w
        .fake
        .check_runs(REPO, &w.head)
        .into_iter()
        .find(|r| r.name == "ci-medic")
        .expect("ci-medic's check run");
    let summary = ours.summary.unwrap_or_default();
    assert!(summary.contains("**Status:** approved"), "{summary}");

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

    let (mut total, mut total_304, mut total_logs) = (0, 0, 0);
    for (phase, calls) in &phases {
        let count = |pick: &dyn Fn(&str) -> bool| -> usize {
            calls.iter().filter(|(c, _)| pick(c)).map(|(_, n)| n).sum()
        };
        let free = count(&|c| c.ends_with("→ 304"));
        let logs = count(&|c| c.starts_with("GET /_logs/"));
        let n: usize = calls.values().sum::<usize>() - free - logs;
        total += n;
        total_304 += free;
        total_logs += logs;
        println!(
            "{phase}: {n} API requests, {free} answered 304 Not Modified, {logs} log downloads"
        );
        for (call, count) in calls {
            println!("  {count:>3}  {call}");
        }
    }
    println!(
        "whole loop: {total} API requests counted against the rate limit (budget {BUDGET}), \
         {total_304} conditional requests answered 304, {total_logs} log downloads \
         ({} requests in all)",
        total + total_304 + total_logs
    );
    assert!(
        total <= BUDGET,
        "the loop sent {total} GitHub API requests, over its budget of {BUDGET}"
    );
    assert!(
        total_logs <= LOG_DOWNLOADS,
        "the loop downloaded the logs {total_logs} times, more than {LOG_DOWNLOADS}"
    );
    assert!(w.server.terminate().success());
}
