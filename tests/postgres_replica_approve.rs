//! Two `ci-medic serve` replicas, as the real binary, each with its own `DATA_DIR`, on one
//! PostgreSQL database (`DATABASE_URL`) behind one webhook URL: the failed check is delivered
//! to replica A, which analyses it and publishes the proposal; the maintainer's `/approve` is
//! delivered to replica B, which must find A's proposal and run, write the fix and push it
//! once, then report CI's verdict on it; a second `/approve`, delivered to A with both
//! replicas up, pushes nothing again. With the registry and the runs in each replica's own
//! sled, B knew no proposal and pushed nothing (and A would have pushed a second fix).
//!
//! The two deliveries the test sends are GitHub's real example payloads
//! (`shared/github/webhooks/`, octokit/webhooks), re-pointed at the fake's repository, pull
//! request, check run and comment: only the fields that name them are replaced.

mod common;

use std::time::Duration;

use common::world::*;
use common::*;
use fake_github::{FakeGitHub, FileEntry, NewPullRequest, Permission};
use serde_json::Value;

const PR: u64 = 7;

/// Replaces in `real` each field at a JSON pointer of `paths` with the fake's value there.
fn repoint(mut real: Value, fake: &Value, paths: &[&str]) -> Vec<u8> {
    for path in paths {
        let value = fake
            .pointer(path)
            .unwrap_or_else(|| panic!("the fake's payload has no {path}"))
            .clone();
        let (parent, key) = path.rsplit_once('/').unwrap();
        let target = if parent.is_empty() {
            &mut real
        } else {
            real.pointer_mut(parent)
                .unwrap_or_else(|| panic!("the real payload has no {parent}"))
        };
        target[key] = value;
    }
    serde_json::to_vec(&real).unwrap()
}

/// The fake's CI for `lint`: fails with ruff's real log while `app/main.py` imports `os`.
fn scripted_ci(fake: &FakeGitHub) {
    let log = corpus("logs/actions/ruff_unused_import.log");
    fake.set_ci_script(REPO, CHECK, move |files| {
        let main = files
            .get("app/main.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if main.contains("import os") {
            ("failure".to_string(), log.clone())
        } else {
            ("success".to_string(), b"All checks passed!\n".to_vec())
        }
    });
}

/// The scenario's repository: pull requests #7, #8, … (`prs` of them) each add, on branch
/// `feature-N`, a module with two unused imports; each one's `lint` check failed with ruff's
/// real log. Returns the fake and, per pull request, its number, head and failed check run.
async fn repository(prs: u64) -> (FakeGitHub, Vec<(u64, String, u64)>) {
    let fake = FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let pubkey = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pub.pem"),
    )
    .unwrap();
    fake.set_app_public_key(&pubkey).unwrap();
    let base = fake.add_repo(
        "octo-org",
        "shop",
        "main",
        &[("README.md", "# shop\n"), ("app/__init__.py", "")],
    );
    fake.set_permission(REPO, "maintainer", Permission::Write)
        .unwrap();
    let (main, pyproject) = (src("app/main.py"), src("pyproject.toml"));
    let mut out = Vec::new();
    for pr in PR..PR + prs {
        let branch = format!("feature-{pr}");
        let head = fake
            .commit_entries(
                REPO,
                &branch,
                Some(&base),
                &[
                    FileEntry {
                        path: "app/main.py",
                        mode: "100644",
                        content: main.as_bytes(),
                    },
                    FileEntry {
                        path: "pyproject.toml",
                        mode: "100644",
                        content: pyproject.as_bytes(),
                    },
                ],
                &format!("Add main module ({pr})"),
            )
            .unwrap();
        fake.open_pull_request(NewPullRequest {
            repo: REPO,
            number: pr,
            head_branch: &branch,
            head_repo: REPO,
            base: "main",
            author_login: "contributor",
            title: "Add main module",
            maintainer_can_modify: true,
        })
        .unwrap();
        let check = fail_check_on(&fake, &head);
        out.push((pr, head, check));
    }
    (fake, out)
}

fn fail_check_on(fake: &FakeGitHub, head: &str) -> u64 {
    let id = fake.add_check_run(
        REPO,
        head,
        CHECK,
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, id, &corpus("logs/actions/ruff_unused_import.log"));
    id
}

fn replica(dir: &std::path::Path, fake: &FakeGitHub, url: &str) -> Server {
    let extra = [("REDELIVERY_INTERVAL_SECONDS", "0")];
    Server::replica(dir, &fake.base_url(), url, 2, &extra)
}

/// The app's proposal comment on #7 once `pred` holds for it.
async fn proposal_comment(
    fake: &FakeGitHub,
    servers: &[&Server],
    pred: impl Fn(&str) -> bool,
) -> String {
    let marker = marker(CHECK);
    let found = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, PR)
                .into_iter()
                .find(|c| c.via_app && c.body.starts_with(&marker) && pred(&c.body))
                .map(|c| c.body)
        })
        .await;
    found.unwrap_or_else(|| {
        panic!(
            "no such proposal comment; comments: {:#?}\nlogs:\n{}",
            fake.comments(REPO, PR)
                .iter()
                .map(|c| c.body.chars().take(400).collect::<String>())
                .collect::<Vec<_>>(),
            logs(servers)
        )
    })
}

/// What names the check run, its commit and pull request in a `check_run` payload.
const CHECK_FIELDS: [&str; 13] = [
    "/check_run/id",
    "/check_run/name",
    "/check_run/head_sha",
    "/check_run/status",
    "/check_run/conclusion",
    "/check_run/details_url",
    "/check_run/html_url",
    "/check_run/url",
    "/check_run/app",
    "/check_run/pull_requests",
    "/check_run/check_suite",
    "/repository",
    "/installation",
];

/// What names the pull request, the comment and its author in an `issue_comment` payload.
const COMMENT_FIELDS: [&str; 12] = [
    "/issue/number",
    "/issue/pull_request",
    "/issue/html_url",
    "/issue/url",
    "/comment/id",
    "/comment/body",
    "/comment/user",
    "/comment/html_url",
    "/comment/created_at",
    "/comment/author_association",
    "/repository",
    "/installation",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_analysed_by_one_replica_is_approved_through_another() {
    let (Some(real_check), Some(real_comment)) = (
        payload("check_run/completed.1.payload.json"),
        payload("issue_comment/created.with-installation.payload.json"),
    ) else {
        return;
    };
    let Some(url) = fresh_database("replica_approve").await else {
        return;
    };
    let (fake, prs) = repository(1).await;
    let (_, head, check) = prs[0].clone();
    scripted_ci(&fake);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // The queue is shared: a delivery accepted by one replica may run on any. So that the
    // failure surely runs on A and the approval on B, each is delivered while the other
    // replica is stopped; then both run together for a second approval.
    let a = replica(dirs[0].path(), &fake, &url);
    // The failure, to A.
    let generated = fake.check_run_completed_payload(check).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_check).unwrap(),
        &generated,
        &CHECK_FIELDS,
    );
    assert_eq!(a.deliver("check_run", "failure-1", &body).await, 202);
    let proposed = proposal_comment(&fake, &[&a], |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&proposed)[1].clone()).unwrap();
    assert!(status_line(&proposed).contains("proposed"), "{proposed}");
    assert!(!a.log_lines_with("failure-1").is_empty(), "A analysed it");
    assert_eq!(a.terminate().code(), Some(0));

    // B, which never saw the failure, gets the approval and GitHub's deliveries.
    let b = replica(dirs[1].path(), &fake, &url);
    fake.set_webhook(&b.url("/api/github/webhooks"), SECRET);

    // The maintainer's `/approve`, to B.
    let comment = fake.add_comment(REPO, PR, "maintainer", &format!("/approve {}", dds.id));
    let generated = fake.issue_comment_created_payload(comment).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_comment).unwrap(),
        &generated,
        &COMMENT_FIELDS,
    );
    assert_eq!(b.deliver("issue_comment", "approve-1", &body).await, 202);

    // B pushes the fix, once; CI passes on it and B reports the verdict.
    let executed = proposal_comment(&fake, &[&b], |b| status_line(b).contains("executed")).await;
    assert!(executed.contains("passed"), "{executed}");
    assert!(executed.contains(&dds.id), "{executed}");
    let new_head = fake.branch_head(REPO, "feature-7").unwrap();
    assert_ne!(new_head, head);
    let commit = fake.commit(REPO, &new_head).unwrap();
    assert_eq!(
        commit.parents,
        vec![head.clone()],
        "exactly one commit, on the proposal's commit"
    );
    assert!(commit.message.contains(&dds.id), "{}", commit.message);
    assert!(
        !b.log_lines_with("approve-1").is_empty(),
        "B handled the approval:\n{}",
        logs(&[&b])
    );

    // Both replicas up: a second `/approve`, to A, whose own sled never saw the approval. It
    // reads the shared state, whichever replica runs it: nothing is pushed again.
    let a = replica(dirs[0].path(), &fake, &url);
    let again = fake.add_comment(REPO, PR, "maintainer", &format!("/approve {}", dds.id));
    let generated = fake.issue_comment_created_payload(again).unwrap();
    let body = repoint(
        serde_json::from_slice(&real_comment).unwrap(),
        &generated,
        &COMMENT_FIELDS,
    );
    assert_eq!(a.deliver("issue_comment", "approve-2", &body).await, 202);
    let reply = fake
        .wait_for(Duration::from_secs(60), |f| {
            f.comments(REPO, PR)
                .into_iter()
                .find(|c| c.via_app && c.body.contains(&format!("reply-to={again}")))
                .map(|c| c.body)
        })
        .await
        .unwrap_or_else(|| panic!("no reply to the second approval\n{}", logs(&[&a, &b])));
    assert!(reply.contains(&dds.id), "{reply}");

    // The shared registry holds the whole story; one proposal comment, one check run.
    let db = ci_medic::store::pg::PgStore::connect(&url, 1)
        .await
        .unwrap();
    use ci_medic::store::backend::Backend;
    let state = db.fix_state().unwrap();
    let stored = state.registry.get_fix(&dds.id).await.unwrap().unwrap();
    assert_eq!(stored.status, ci_medic::proposal::DdsStatus::Executed);
    assert_eq!(stored.history.len(), 2, "proposed → approved → executed");
    assert_eq!(stored.history[0].actor, "maintainer");
    assert!(stored.pushed_at.is_some());
    let proposals = fake
        .comments(REPO, PR)
        .into_iter()
        .filter(|c| c.via_app && c.body.starts_with(&marker(CHECK)))
        .count();
    assert_eq!(proposals, 1, "one proposal comment, edited in place");
    // Nothing more is pushed afterwards (a second writer would have pushed by now).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.branch_head(REPO, "feature-7"), Some(new_head));
    assert_eq!(a.terminate().code(), Some(0));
    assert_eq!(b.terminate().code(), Some(0));
}

/// Pull requests in the storm.
const STORM_PRS: u64 = 20;

/// A load balancer in front of the replicas, as a deployment has one (`deploy/`'s Caddy): each
/// request goes to the next replica in turn, and to the one after when a replica cannot be
/// reached or answers 5xx (a replica killed, or starting), as a proxy retrying on another
/// upstream does. The fake GitHub delivers CI's results through it, so any replica may be
/// killed. When every replica fails it answers 502, and GitHub's delivery fails as it would.
/// Returns its base URL.
async fn load_balancer(urls: std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>) -> String {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, StatusCode, Uri};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = std::sync::Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::new();
    let forward = move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let (urls, next, client) = (urls.clone(), next.clone(), client.clone());
        async move {
            let first = next.fetch_add(1, Ordering::SeqCst);
            // Three rounds over the replicas, a moment apart: a killed one is restarted soon.
            for attempt in 0..9 {
                let upstream = {
                    let urls = urls.lock().unwrap();
                    urls[(first + attempt) % urls.len()].clone()
                };
                if let Some(base) = upstream {
                    let mut req = client.post(format!("{base}{uri}")).body(body.clone());
                    for (name, value) in &headers {
                        if name != "host" && name != "content-length" {
                            req = req.header(name.as_str(), value.as_bytes());
                        }
                    }
                    if let Ok(r) = req.timeout(Duration::from_secs(10)).send().await
                        && !r.status().is_server_error()
                    {
                        let status = StatusCode::from_u16(r.status().as_u16()).unwrap();
                        return (status, r.bytes().await.unwrap_or_default());
                    }
                }
                if attempt % 3 == 2 {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
            }
            (StatusCode::BAD_GATEWAY, Bytes::new())
        }
    };
    let app = axum::Router::new().fallback(axum::routing::post(forward));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// Sends a signed delivery to the first replica of `urls` from `start` on that answers 2xx,
/// as GitHub's redelivery would after a refused connection (behind a proxy, to another
/// replica). Returns how many replicas it found down or refusing first.
async fn deliver_somewhere(
    urls: &std::sync::Mutex<Vec<Option<String>>>,
    start: usize,
    event: &str,
    id: &str,
    body: &[u8],
) -> u32 {
    let client = reqwest::Client::new();
    let mut refused = 0;
    for attempt in 0..600 {
        let url = {
            let urls = urls.lock().unwrap();
            urls[(start + attempt) % urls.len()].clone()
        };
        if let Some(url) = url {
            let sent = client
                .post(format!("{url}/api/github/webhooks"))
                .header("content-type", "application/json")
                .header("x-github-event", event)
                .header("x-github-delivery", id)
                .header("x-hub-signature-256", sign(body))
                .body(body.to_vec())
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            match sent.map(|r| r.status().as_u16()) {
                Ok(200 | 202) => return refused,
                _ => refused += 1,
            }
        } else {
            refused += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no replica accepted {id}");
}

/// The issue's storm: three replicas on one database behind a load balancer, 20 pull requests'
/// failures and then their approvals spread across them while replicas are SIGKILLed at
/// random, any of the three, and restarted. Every failure gets
/// exactly one proposal comment and one `ci-medic` check run, every approval exactly one
/// commit and its verdict, and no DDS id is used twice. Prints its figures.
///
/// In the fresh-clone CI runs where the machine was loaded, one approved fix once stalled
/// here: each SIGKILL cut a run off, every cut-off claim counted as an attempt, and a job
/// that failed once for real after that was parked or sent into a back-off of minutes; the
/// run it should have moved then waited for the reconcile pass, whose lease a restarted
/// replica could take and die with, leaving it for 240 s. Cut-off runs are no attempts now,
/// and a dead holder's singleton moves within 40 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_under_sigkill_give_one_proposal_and_one_commit_per_pull_request() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};

    let (Some(real_check), Some(real_comment)) = (
        payload("check_run/completed.1.payload.json"),
        payload("issue_comment/created.with-installation.payload.json"),
    ) else {
        return;
    };
    let Some(url) = fresh_database("replica_storm").await else {
        return;
    };
    let started = std::time::Instant::now();
    let (fake, prs) = repository(STORM_PRS).await;
    scripted_ci(&fake);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.path().to_path_buf()).collect();
    let start = {
        let (api, url) = (fake.base_url(), url.to_string());
        move |dir: &std::path::Path| {
            let extra = [
                // A CI delivery the fake could not make (every replica busy or refusing under
                // the storm) is asked for again, as in production; GitHub itself never
                // retries. Short, so the storm does not wait for the default 5 minutes.
                ("REDELIVERY_INTERVAL_SECONDS", "2"),
                // A killed replica's jobs run elsewhere soon.
                ("JOB_LEASE_SECONDS", "3"),
            ];
            Server::replica(dir, &api, &url, 2, &extra)
        }
    };
    let servers: Arc<Mutex<Vec<Option<Server>>>> =
        Arc::new(Mutex::new(paths.iter().map(|p| Some(start(p))).collect()));
    let urls: Arc<Mutex<Vec<Option<String>>>> = Arc::new(Mutex::new(
        servers
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.as_ref().map(|s| s.base.clone()))
            .collect(),
    ));
    // GitHub's deliveries (CI's results, redeliveries) reach the replicas through the
    // load balancer.
    let balancer = load_balancer(urls.clone()).await;
    fake.set_webhook(&format!("{balancer}/api/github/webhooks"), SECRET);
    let logs_of_all = |servers: &Mutex<Vec<Option<Server>>>| {
        servers
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .map(|s| s.stderr.lock().unwrap().join("\n"))
            .collect::<Vec<_>>()
            .join("\n---- next replica ----\n")
    };

    // The killer: every 0.5–1.5 s, one replica of the three dies at once and is started
    // again. The killed processes' logs are kept, to tell what a stalled pull request's jobs
    // did.
    let stop = Arc::new(AtomicBool::new(false));
    let kills = Arc::new(AtomicU32::new(0));
    type Log = Arc<Mutex<Vec<String>>>;
    let dead_logs: Arc<Mutex<Vec<Log>>> = Arc::new(Mutex::new(Vec::new()));
    let killer = {
        let (servers, urls, stop, kills, paths, dead_logs) = (
            servers.clone(),
            urls.clone(),
            stop.clone(),
            kills.clone(),
            paths.clone(),
            dead_logs.clone(),
        );
        let start = start.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let mut r = [0u8; 2];
                getrandom::fill(&mut r).unwrap();
                std::thread::sleep(Duration::from_millis(500 + u64::from(r[0]) * 4));
                let victim = usize::from(r[1] % 3);
                urls.lock().unwrap()[victim] = None;
                let taken = servers.lock().unwrap()[victim].take();
                if let Some(s) = taken {
                    dead_logs.lock().unwrap().push(s.stderr.clone());
                    s.kill();
                    kills.fetch_add(1, Ordering::SeqCst);
                }
                let s = start(&paths[victim]);
                urls.lock().unwrap()[victim] = Some(s.base.clone());
                servers.lock().unwrap()[victim] = Some(s);
            }
        })
    };

    // Every failure, each to a replica in turn (the next one if it is down).
    let mut refused = 0;
    for (i, (pr, _, check)) in prs.iter().enumerate() {
        let generated = fake.check_run_completed_payload(*check).unwrap();
        let body = repoint(
            serde_json::from_slice(&real_check).unwrap(),
            &generated,
            &CHECK_FIELDS,
        );
        refused += deliver_somewhere(&urls, i, "check_run", &format!("failure-{pr}"), &body).await;
        // Spread over the storm, so deliveries meet replicas dying and starting.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let marker = marker(CHECK);
    let proposal_of = |f: &FakeGitHub, pr: u64| -> Option<String> {
        f.comments(REPO, pr)
            .into_iter()
            .find(|c| c.via_app && c.body.starts_with(&marker))
            .and_then(|c| {
                let blocks = json_blocks(&c.body);
                Some(blocks.get(1)?["id"].as_str()?.to_string())
            })
    };
    let ids = fake
        .wait_for(Duration::from_secs(240), |f| {
            prs.iter()
                .map(|(pr, _, _)| proposal_of(f, *pr))
                .collect::<Option<Vec<String>>>()
        })
        .await
        .unwrap_or_else(|| panic!("not every failure was proposed\n{}", logs_of_all(&servers)));
    let proposed_in = started.elapsed();

    // Every approval, spread the same way.
    for (i, ((pr, _, _), id)) in prs.iter().zip(&ids).enumerate() {
        let c = fake.add_comment(REPO, *pr, "maintainer", &format!("/approve {id}"));
        let generated = fake.issue_comment_created_payload(c).unwrap();
        let body = repoint(
            serde_json::from_slice(&real_comment).unwrap(),
            &generated,
            &COMMENT_FIELDS,
        );
        refused += deliver_somewhere(
            &urls,
            i + 1,
            "issue_comment",
            &format!("approve-{pr}"),
            &body,
        )
        .await;
    }
    // A verdict whose webhook was missed (refused, or handled before the push was recorded)
    // comes from the CI monitor's reconcile pass: every RECONCILE_INTERVAL (120 s) on the
    // replica holding its lease, which a killed holder keeps for at most a lease and a
    // renewal. The wait covers that worst case; the figures below say how long it took.
    let timing = ci_medic::singleton::DEFAULT_TIMING;
    let reconcile_bound = ci_medic::server::RECONCILE_INTERVAL
        + timing.lease
        + timing.renew
        + Duration::from_secs(60);
    let done = fake
        .wait_for(reconcile_bound, |f| {
            prs.iter()
                .all(|(pr, _, _)| {
                    f.comments(REPO, *pr).into_iter().any(|c| {
                        c.via_app
                            && c.body.starts_with(&marker)
                            && status_line(&c.body).contains("executed")
                    })
                })
                .then_some(())
        })
        .await;
    stop.store(true, Ordering::SeqCst);
    killer.join().unwrap();
    if done.is_none() {
        let missing: Vec<u64> = prs
            .iter()
            .filter(|(pr, _, _)| {
                !fake
                    .comments(REPO, *pr)
                    .into_iter()
                    .any(|c| c.via_app && status_line(&c.body).contains("executed"))
            })
            .map(|(pr, _, _)| *pr)
            .collect();
        let failed: Vec<String> = fake
            .hook_attempts()
            .iter()
            .filter(|a| !(200..300).contains(&a.status_code))
            .map(|a| {
                format!(
                    "{} {} {} redelivery={}",
                    a.guid, a.event, a.status, a.redelivery
                )
            })
            .collect();
        // Every replica's log, live and killed, kept whole for reading after the test; the
        // lines about a stalled pull request are printed in time order.
        let all: Vec<Log> = servers
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .map(|s| s.stderr.clone())
            .chain(dead_logs.lock().unwrap().iter().cloned())
            .collect();
        let mut lines: Vec<String> = all
            .iter()
            .flat_map(|l| l.lock().unwrap().clone())
            .filter(|l| {
                missing
                    .iter()
                    .any(|pr| l.contains(&format!("shop#{pr}\"")) || l.contains(&format!("-{pr}-")))
            })
            .collect();
        lines.sort();
        let kept = tempfile::Builder::new()
            .prefix("replica-storm-logs-")
            .tempdir()
            .unwrap()
            .keep();
        for (i, log) in all.iter().enumerate() {
            let text = log.lock().unwrap().join("\n");
            std::fs::write(kept.join(format!("replica-{i}.log")), text).unwrap();
        }
        eprintln!("every replica's log: {}", kept.display());
        let statuses: Vec<String> = missing
            .iter()
            .flat_map(|pr| fake.comments(REPO, *pr))
            .filter(|c| c.via_app && c.body.starts_with(&marker))
            .map(|c| status_line(&c.body))
            .collect();
        panic!(
            "no verdict on {missing:?}; their comments: {statuses:?}\nCI deliveries not answered 2xx: {failed:?}\ntheir log lines, all replicas:\n{}",
            lines.join("\n")
        );
    }
    let total = started.elapsed();

    // Exactly once, per pull request, whatever was killed when.
    let mut seen = std::collections::HashSet::new();
    for ((pr, head, _), id) in prs.iter().zip(&ids) {
        let proposals: Vec<_> = fake
            .comments(REPO, *pr)
            .into_iter()
            .filter(|c| c.via_app && c.body.starts_with(&marker))
            .collect();
        assert_eq!(proposals.len(), 1, "#{pr}: one proposal comment");
        let ours = fake
            .check_runs(REPO, head)
            .into_iter()
            .filter(|c| c.name == ci_medic::comment::CHECK_RUN_NAME)
            .count();
        assert_eq!(ours, 1, "#{pr}: one ci-medic check run");
        let new_head = fake.branch_head(REPO, &format!("feature-{pr}")).unwrap();
        let commit = fake.commit(REPO, &new_head).unwrap();
        assert_eq!(
            commit.parents,
            vec![head.clone()],
            "#{pr}: exactly one commit"
        );
        assert!(commit.message.contains(id.as_str()), "#{pr}");
        assert!(seen.insert(id.clone()), "{id} used twice");
    }
    let db = ci_medic::store::pg::PgStore::connect(&url, 1)
        .await
        .unwrap();
    use ci_medic::store::backend::Backend;
    let state = db.fix_state().unwrap();
    let fixes = state.registry.list_fixes().await.unwrap();
    let failed = state.registry.list_failed().await.unwrap();
    assert_eq!(fixes.len(), STORM_PRS as usize, "one code_fix per failure");
    assert_eq!(
        failed.len(),
        STORM_PRS as usize,
        "one failed record per check"
    );
    let distinct: std::collections::HashSet<_> = fixes
        .iter()
        .map(|f| f.dds.id.clone())
        .chain(failed.iter().map(|f| f.id.as_str().to_string()))
        .collect();
    assert_eq!(
        distinct.len(),
        2 * STORM_PRS as usize,
        "no DDS id used twice"
    );
    assert!(
        fixes
            .iter()
            .all(|f| f.status == ci_medic::proposal::DdsStatus::Executed)
    );
    let hook = fake.hook_attempts();
    let ci_failed = hook
        .iter()
        .filter(|a| !a.redelivery && !(200..300).contains(&a.status_code))
        .count();
    let redelivered = hook.iter().filter(|a| a.redelivery).count();
    println!(
        "replica storm: {STORM_PRS} pull requests on 3 replicas, {} SIGKILLs, {refused} times a delivery found its replica down and went to another, {ci_failed} CI deliveries not answered 2xx and {redelivered} redeliveries; all proposed after {:.1} s, all verdicts after {:.1} s; {STORM_PRS} proposal comments, {STORM_PRS} commits, {} distinct DDS ids",
        kills.load(Ordering::SeqCst),
        proposed_in.as_secs_f64(),
        total.as_secs_f64(),
        distinct.len()
    );
    for s in servers.lock().unwrap().iter_mut() {
        if let Some(s) = s.take() {
            s.kill();
        }
    }
}
