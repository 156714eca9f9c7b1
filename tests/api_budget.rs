//! How many GitHub API requests one handled failure costs: failed check → proposal →
//! `/approve` → push → verdict, counted by the fake GitHub (which records every request the
//! real binary sends) and printed per phase. Fails above the budget, so a change that adds
//! requests to the loop is seen.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::world::*;
use fake_github::CheckOutput;

/// The most requests the whole loop may send (304s apart): what it costs today, so any added
/// request fails this test. 31 before: the pull request is not read when the check run's
/// event names it with this head, the repository is no longer read to learn its default
/// branch (the contents API reads it when no `ref` is given), the check run is no longer read
/// back (the webhook names its App), the tree is read by the commit's sha (GitHub resolves
/// it) without reading the commit, the fix's text goes inside the tree request instead of a
/// blob request per file, and a comment, check run or reply never asked for is created without
/// listing the existing ones first (`FixRun::creations`, the reply intents; `lost_answers.rs`
/// shows a lost answer still found). Then one more for failure triage, which reads the Actions
/// job's steps and run attempt. The target is 20; what is left above it is listed in the issue
/// note. One of these requests (`GET /_logs/…`) goes to the log host GitHub redirects to, not
/// to the API.
const BUDGET: usize = 24;

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

    let (mut total, mut total_304) = (0, 0);
    for (phase, calls) in &phases {
        let free: usize = calls
            .iter()
            .filter(|(c, _)| c.ends_with("→ 304"))
            .map(|(_, n)| n)
            .sum();
        let n: usize = calls.values().sum::<usize>() - free;
        total += n;
        total_304 += free;
        println!("{phase}: {n} requests, {free} answered 304 Not Modified");
        for (call, count) in calls {
            println!("  {count:>3}  {call}");
        }
    }
    println!(
        "whole loop: {total} requests counted against the rate limit (budget {BUDGET}), \
         {total_304} conditional requests answered 304"
    );
    assert!(
        total <= BUDGET,
        "the loop sent {total} GitHub API requests, over its budget of {BUDGET}"
    );
    assert!(w.server.terminate().success());
}
