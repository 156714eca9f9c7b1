//! Crashes and shutdowns under load, with the real binary: nothing acknowledged is lost and
//! nothing is done twice.
//!
//! - Kill storm: clients send signed deliveries without pause — real payloads from
//!   `shared/github/webhooks` (pull requests, comments, installations) and failed checks of the
//!   fake GitHub's pull request — and resend a delivery with the same id until it gets a 2xx,
//!   as GitHub's redelivery would, while the server is SIGKILLed and started again, over and
//!   over. In the end every acknowledged delivery's job has run to its end, none is parked,
//!   and every failed check has exactly one proposal comment.
//! - SIGTERM under load: with a queue of failed checks still waiting, SIGTERM stops the
//!   workers taking jobs, lets the running one finish, flushes and exits 0 well within the
//!   grace; after a restart every acknowledged check gets its one comment.
//!
//! Each test prints its figures (deliveries acknowledged, processed, restarts).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::world::*;
use common::*;

fn start(dir: &std::path::Path, fake: &fake_github::FakeGitHub, port: u16) -> Server {
    Server::start(ServerOptions {
        data_dir: dir,
        workers: 2,
        github_api_url: &fake.base_url(),
        extra_env: vec![
            ("PORT".into(), port.to_string()),
            ("REDELIVERY_INTERVAL_SECONDS".into(), "0".into()),
        ],
    })
}

/// One delivery to make: event, id, signed body, and whether ci-medic queues a job for it (the
/// comment of the shared payloads is on an issue, not a pull request: acknowledged, ignored).
#[derive(Clone)]
struct Outgoing {
    event: &'static str,
    id: String,
    body: Vec<u8>,
    queued: bool,
}

/// Sends `d` until it is acknowledged (2xx), like GitHub redelivering it; `false` if the
/// deadline passed first.
async fn send_until_acknowledged(
    client: &reqwest::Client,
    url: &str,
    d: &Outgoing,
    deadline: Instant,
) -> bool {
    while Instant::now() < deadline {
        let sent = client
            .post(url)
            .header("content-type", "application/json")
            .header("x-github-event", d.event)
            .header("x-github-delivery", &d.id)
            .header("x-hub-signature-256", sign(&d.body))
            .body(d.body.clone())
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => return true,
            Ok(r) => assert!(
                r.status().is_server_error(),
                "{} answered {}",
                d.id,
                r.status()
            ),
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The real payloads the storm sends over and over, each under a new delivery id.
fn real_payloads() -> Option<Vec<(&'static str, Vec<u8>)>> {
    Some(vec![
        (
            "pull_request",
            payload("pull_request/synchronize.payload.json")?,
        ),
        ("pull_request", payload("pull_request/closed.payload.json")?),
        (
            "issue_comment",
            payload("issue_comment/created.with-installation.payload.json")?,
        ),
        (
            "installation_repositories",
            payload("installation_repositories/added.payload.json")?,
        ),
    ])
}

/// Delivery ids whose job ran to its end, over every server's log, with how many times.
fn finished(logs: &[Arc<Mutex<Vec<String>>>]) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for log in logs {
        for line in log.lock().unwrap().iter() {
            if !line.contains("\"job finished\"") {
                continue;
            }
            let v: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) => continue,
            };
            let delivery = v["span"]["delivery"]
                .as_str()
                .or_else(|| {
                    v["spans"]
                        .as_array()?
                        .iter()
                        .find_map(|s| s["delivery"].as_str())
                })
                .map(str::to_string);
            if let Some(d) = delivery {
                *out.entry(d).or_default() += 1;
            }
        }
    }
    out
}

/// Real payloads sent per failed check.
const PER_CHECK: usize = 60;
/// SIGKILLs at least, whether the clients are done or not.
const MIN_KILLS: u64 = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_delivery_is_processed_once_through_a_kill_storm() {
    let Some(real) = real_payloads() else { return };
    let port = free_port();
    let w = world_on(
        port,
        vec![("REDELIVERY_INTERVAL_SECONDS".into(), "0".into())],
    )
    .await;
    let log = corpus("logs/actions/ruff_unused_import.log");
    let checks: Vec<String> = (0..12).map(|i| format!("check{i}")).collect();
    let mut outgoing = Vec::new();
    for (i, name) in checks.iter().enumerate() {
        let id = fail_check_named(&w, &w.head, name, &log);
        let body = serde_json::to_vec(&w.fake.check_run_completed_payload(id).unwrap()).unwrap();
        // Spread among the rest, so failures arrive throughout the storm.
        for j in 0..PER_CHECK {
            let (event, body) = &real[(i * PER_CHECK + j) % real.len()];
            outgoing.push(Outgoing {
                event,
                id: format!("00000000-0000-4000-8000-{:012}", i * PER_CHECK + j),
                body: body.clone(),
                queued: *event != "issue_comment",
            });
        }
        outgoing.push(Outgoing {
            event: "check_run",
            id: format!("00000000-0000-4000-9000-{i:012}"),
            body,
            queued: true,
        });
    }
    let total = outgoing.len();
    let queued: HashSet<String> = outgoing
        .iter()
        .filter(|d| d.queued)
        .map(|d| d.id.clone())
        .collect();

    let url = w.server.url("/api/github/webhooks");
    let dir = w.server.data_dir.clone();
    let World {
        fake,
        server,
        _dir,
        base,
        head,
    } = w;
    let logs = Arc::new(Mutex::new(vec![server.stderr.clone()]));
    let work = Arc::new(Mutex::new(outgoing));
    let acknowledged = Arc::new(Mutex::new(HashSet::new()));
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let (work, acknowledged, url) = (work.clone(), acknowledged.clone(), url.clone());
        clients.spawn(async move {
            let client = reqwest::Client::new();
            loop {
                let Some(d) = work.lock().unwrap().pop() else {
                    return;
                };
                if send_until_acknowledged(&client, &url, &d, deadline).await {
                    acknowledged.lock().unwrap().insert(d.id.clone());
                }
            }
        });
    }

    // The storm: SIGKILL at a random-ish moment, start again at once, while clients send.
    let mut server = server;
    let mut restarts = 0;
    let storm_started = Instant::now();
    // At least MIN_KILLS crashes, the later ones while the queue drains (jobs running).
    while (acknowledged.lock().unwrap().len() < total || restarts < MIN_KILLS) && restarts < 60 {
        tokio::time::sleep(Duration::from_millis(250 + (restarts % 5) * 90)).await;
        server.kill();
        restarts += 1;
        server = start(&dir, &fake, port);
        logs.lock().unwrap().push(server.stderr.clone());
    }
    while clients.join_next().await.is_some() {}
    let acked = acknowledged.lock().unwrap().clone();
    assert_eq!(acked.len(), total, "every delivery got a 2xx in the end");

    // One last crash after the last acknowledgement, then the queue drains.
    server.kill();
    restarts += 1;
    let server = start(&dir, &fake, port);
    logs.lock().unwrap().push(server.stderr.clone());
    let all_logs = logs.lock().unwrap().clone();
    let drain_deadline = Instant::now() + Duration::from_secs(45);
    let done = loop {
        let done = finished(&all_logs);
        if queued.iter().all(|id| done.contains_key(id)) || Instant::now() > drain_deadline {
            break done;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let missing: Vec<&String> = queued.iter().filter(|id| !done.contains_key(*id)).collect();
    assert!(
        missing.is_empty(),
        "acknowledged but never processed: {missing:?}"
    );
    let w = World {
        fake,
        server,
        _dir,
        base,
        head,
    };
    let comments = one_comment_each(&w, &checks).await;
    assert_eq!(comments.len(), checks.len());
    let ours = w
        .fake
        .check_runs(REPO, &w.head)
        .into_iter()
        .filter(|r| r.name == "ci-medic")
        .count();
    assert_eq!(
        ours,
        checks.len(),
        "one ci-medic check run per failed check"
    );

    let reruns: usize = done.values().map(|n| n - 1).sum();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let left = store.jobs().unwrap();
    assert!(left.is_empty(), "jobs left (parked or queued): {left:?}");
    for id in &acked {
        let record = store.delivery(id).unwrap();
        let record = record.unwrap_or_else(|| panic!("{id} was acknowledged and is not recorded"));
        assert_eq!(
            record.queued,
            queued.contains(id),
            "{id}: queued as its event says"
        );
        assert_eq!(
            done.contains_key(id),
            record.queued,
            "{id}: processed iff queued"
        );
    }
    println!(
        "kill storm: {total} deliveries acknowledged ({} queued), {} processed ({reruns} jobs run again after a kill), \
         {restarts} SIGKILLs in {:.1} s, {} comments",
        queued.len(),
        done.len(),
        storm_started.elapsed().as_secs_f64(),
        checks.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_stops_taking_jobs_finishes_flushes_and_loses_nothing() {
    let port = free_port();
    let w = world_on(
        port,
        vec![("REDELIVERY_INTERVAL_SECONDS".into(), "0".into())],
    )
    .await;
    let log = corpus("logs/actions/ruff_unused_import.log");
    // One pull request: its jobs run one at a time, so a queue builds up behind them.
    let checks: Vec<String> = (0..24).map(|i| format!("load{i}")).collect();
    let mut outgoing = Vec::new();
    for (i, name) in checks.iter().enumerate() {
        let id = fail_check_named(&w, &w.head, name, &log);
        outgoing.push(Outgoing {
            event: "check_run",
            id: format!("00000000-0000-4000-a000-{i:012}"),
            body: serde_json::to_vec(&w.fake.check_run_completed_payload(id).unwrap()).unwrap(),
            queued: true,
        });
    }
    let url = w.server.url("/api/github/webhooks");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    for d in &outgoing {
        assert!(send_until_acknowledged(&client, &url, d, deadline).await);
    }
    // Work is under way: the first comment is there, most checks still wait.
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;

    let dir = w.server.data_dir.clone();
    let World {
        fake,
        server,
        _dir,
        base,
        head,
    } = w;
    let first_log = server.stderr.clone();
    let signalled = Instant::now();
    let status = server.terminate();
    let took = signalled.elapsed();
    assert!(status.success(), "exit status {status:?}");
    // SHUTDOWN_GRACE_SECONDS is 5 in the harness: it did not wait for the queue.
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    let lines = first_log.lock().unwrap().clone();
    let signal_at = lines
        .iter()
        .position(|l| l.contains("shutdown requested"))
        .expect("the shutdown is logged");
    assert!(lines.iter().any(|l| l.contains("store flushed; bye")));
    let after: usize = lines[signal_at..]
        .iter()
        .filter(|l| l.contains("\"job finished\""))
        .count();
    assert!(
        after <= 2,
        "{after} jobs finished after the signal: only running ones may"
    );
    let before = comments_now(&fake);
    assert!(
        before < checks.len(),
        "the queue was not drained before exiting ({before} of {})",
        checks.len()
    );

    let server = start(&dir, &fake, port);
    let w = World {
        fake,
        server,
        _dir,
        base,
        head,
    };
    let comments = one_comment_each(&w, &checks).await;
    println!(
        "SIGTERM under load: {} deliveries acknowledged, {before} processed before the signal, \
         exit 0 after {:.2} s with {after} job(s) finishing after it, all {} processed after restart",
        checks.len(),
        took.as_secs_f64(),
        comments.len()
    );
    assert!(w.server.terminate().success());
}

/// Waits for the proposal comment of every check, waits a little for any second one, and
/// checks there is exactly one each; returns every comment of the app.
async fn one_comment_each(w: &World, checks: &[String]) -> Vec<String> {
    for name in checks {
        wait_comment(w, |b| {
            b.starts_with(&marker(name)) && b.contains("DDS-FIX-")
        })
        .await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let comments = app_comments(w);
    for name in checks {
        let n = comments
            .iter()
            .filter(|b| b.starts_with(&marker(name)))
            .count();
        assert_eq!(n, 1, "comments for {name}");
    }
    comments
}

fn comments_now(fake: &fake_github::FakeGitHub) -> usize {
    fake.comments(REPO, 7).iter().filter(|c| c.via_app).count()
}
