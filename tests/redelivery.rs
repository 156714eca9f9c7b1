//! Webhooks GitHub never sends again: the real binary, stopped while GitHub (the fake) tries to
//! deliver failed checks, asks for them again from the App's delivery log when it starts, and
//! every missed failure gets its proposal comment exactly once; a delivery that succeeded is
//! never asked for again, nor is one already redelivered, pass after pass.

mod common;

use std::time::Duration;

use common::world::*;
use common::*;

fn app_comment_for(w: &World, check: &str) -> usize {
    app_comments(w)
        .iter()
        .filter(|b| b.starts_with(&marker(check)))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_missed_while_down_are_redelivered_at_start_and_processed_once() {
    let port = free_port();
    let interval = |seconds: &str| {
        vec![(
            "REDELIVERY_INTERVAL_SECONDS".to_string(),
            seconds.to_string(),
        )]
    };
    let w = world_on(port, interval("300")).await;
    let log = corpus("logs/actions/ruff_unused_import.log");

    // While ci-medic is up, one failure is delivered and answered.
    let served = fail_check_named(&w, &w.head, "lint", &log);
    let served_guid = deliver_check(&w, served).await;
    wait_comment(&w, |b| {
        b.starts_with(&marker("lint")) && b.contains("DDS-FIX-")
    })
    .await;

    // ci-medic stops (a deploy); GitHub keeps delivering and fails to connect.
    let dir = w.server.data_dir.clone();
    let World {
        fake,
        server,
        _dir,
        base,
        head,
    } = w;
    assert!(server.terminate().success());
    let missed_checks = ["typecheck", "style", "docs"];
    let mut missed = Vec::new();
    for name in missed_checks {
        let id = fake.add_check_run(
            REPO,
            &head,
            name,
            "github-actions",
            "failure",
            Default::default(),
        );
        fake.set_job_log(REPO, id, &log);
        let payload = fake.check_run_completed_payload(id).unwrap();
        assert!(
            fake.deliver("check_run", &payload).await.is_err(),
            "nothing listens while ci-medic is down"
        );
        missed.push(fake.deliveries().last().unwrap().0.clone());
    }
    let attempts = fake.hook_attempts();
    for guid in &missed {
        let a: Vec<_> = attempts.iter().filter(|a| &a.guid == guid).collect();
        assert_eq!(a.len(), 1);
        assert_eq!(
            (a[0].status_code, a[0].status.as_str(), a[0].redelivery),
            (502, "failed to connect to host", false)
        );
    }

    // It starts again on the same data and port, and reads the log every second from now on.
    let server = Server::start(ServerOptions {
        data_dir: &dir,
        workers: 2,
        github_api_url: &fake.base_url(),
        extra_env: [interval("1"), vec![("PORT".to_string(), port.to_string())]].concat(),
    });
    let w = World {
        fake,
        server,
        _dir,
        base,
        head,
    };
    for name in missed_checks {
        wait_comment(&w, |b| {
            b.starts_with(&marker(name)) && b.contains("DDS-FIX-")
        })
        .await;
    }
    // Several more passes read the log, now holding the successful redeliveries.
    tokio::time::sleep(Duration::from_millis(3500)).await;

    for name in ["lint"].iter().chain(missed_checks.iter()) {
        assert_eq!(app_comment_for(&w, name), 1, "one comment for {name}");
    }
    assert_eq!(app_comments(&w).len(), 4);
    let attempts = w.fake.hook_attempts();
    for guid in &missed {
        let again: Vec<_> = attempts
            .iter()
            .filter(|a| &a.guid == guid && a.redelivery)
            .collect();
        assert_eq!(again.len(), 1, "{guid} was asked for once, over every pass");
        assert_eq!(again[0].status_code, 202);
    }
    assert!(
        !attempts
            .iter()
            .any(|a| a.guid == served_guid && a.redelivery),
        "a delivery that succeeded is not asked for again"
    );
    let asked: Vec<_> = w
        .fake
        .request_log()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/app/hook/deliveries/"))
        .collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(asked.iter().all(|r| r.status == 202 && r.had_auth));

    let metrics = reqwest::get(w.server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("ci_medic_redeliveries_requested_total 3"),
        "{metrics}"
    );
    assert!(metrics.contains("ci_medic_redeliveries_failed_total 0"));
    let passes = w
        .fake
        .request_log()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/app/hook/deliveries"))
        .count();
    println!(
        "missed deliveries: {}, redelivery requests: {}, log reads: {passes}",
        missed.len(),
        asked.len()
    );
    assert!(w.server.terminate().success());
}

/// One pass against a log longer than a page: the client follows GitHub's cursor, asks for at
/// most the pass's bound, oldest first, and leaves the rest for the next pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_reads_every_page_and_asks_for_at_most_its_bound() {
    use ci_medic::github::{AppCredentials, GitHubClientConfig, RestClient};
    use secrecy::SecretString;

    let fake = fake_github::FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    fake.set_app_public_key(&std::fs::read(root.join("fixtures/keys/test-app.pub.pem")).unwrap())
        .unwrap();
    // Nothing listens there: every delivery fails to connect.
    fake.set_webhook(
        &format!("http://127.0.0.1:{}/api/github/webhooks", free_port()),
        SECRET,
    );
    let Some(event) = payload("check_run/completed.payload.json") else {
        return;
    };
    let event: serde_json::Value = serde_json::from_slice(&event).unwrap();
    let total = 150;
    for _ in 0..total {
        assert!(fake.deliver("check_run", &event).await.is_err());
    }

    let key = std::fs::read_to_string(root.join("fixtures/keys/test-app.pem")).unwrap();
    let mut config = GitHubClientConfig::new(fake.base_url());
    config.write_interval = Duration::ZERO;
    let github = RestClient::for_app(
        config,
        AppCredentials::new(4242, &SecretString::from(key)).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = ci_medic::store::Store::open(dir.path()).unwrap();
    let metrics = ci_medic::metrics::Metrics::new();
    let redelivery = ci_medic::redelivery::Redelivery {
        github,
        shared: std::sync::Arc::new(
            ci_medic::store::shared_state::SledShared::open(&store).unwrap(),
        ),
        state: std::sync::Arc::new(store),
        metrics: metrics.clone(),
        interval: Duration::from_secs(300),
    };
    let report = redelivery
        .pass(chrono::Utc::now(), None, None)
        .await
        .unwrap();
    assert_eq!(report.pages, 2, "{report:?}");
    assert_eq!(report.attempts_read, total);
    assert!(report.complete);
    let bound = ci_medic::redelivery::LIMITS.max_per_pass;
    assert_eq!((report.requested, report.deferred), (bound, total - bound));
    assert_eq!(metrics.redeliveries_requested.get(), bound as u64);

    // The oldest events were asked for, each once, naming one of its own attempts.
    let attempts = fake.hook_attempts();
    let first: Vec<&fake_github::HookAttempt> = attempts.iter().filter(|a| !a.redelivery).collect();
    let asked: Vec<u64> = fake
        .request_log()
        .iter()
        .filter(|r| r.method == "POST")
        .filter_map(|r| {
            r.path
                .strip_prefix("/app/hook/deliveries/")?
                .strip_suffix("/attempts")?
                .parse()
                .ok()
        })
        .collect();
    let expected: Vec<u64> = first.iter().take(bound).map(|a| a.id).collect();
    assert_eq!(asked, expected);
    let pages: Vec<String> = fake
        .request_log()
        .iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(pages.len(), 2);
    assert!(pages[1].contains("cursor="), "{pages:?}");
    println!(
        "log: {total} failed attempts over {} pages; asked for {}, deferred {}",
        report.pages, report.requested, report.deferred
    );
}

/// Two replicas on one PostgreSQL database: one reads the delivery log at a time (the
/// `redelivery` singleton lease), and where the last complete pass started is shared, so the
/// next pass, on either replica, starts from it. When the holder dies, the other replica runs
/// the pass within the lease and a renewal, not after twice the pass's interval (the lease
/// before it moved to `singleton`: 10 minutes by default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_one_redelivery_pass_and_its_mark() {
    use ci_medic::github::{AppCredentials, GitHubClientConfig, RestClient};
    use ci_medic::store::pg::PgStore;
    use ci_medic::store::pg_shared_state::PgShared;
    use secrecy::SecretString;
    use std::sync::Arc;

    let Some(event) = payload("check_run/completed.payload.json") else {
        return;
    };
    let Some(url) = fresh_database("redelivery_shared").await else {
        return;
    };
    let fake = fake_github::FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    fake.set_app_public_key(&std::fs::read(root.join("fixtures/keys/test-app.pub.pem")).unwrap())
        .unwrap();
    fake.set_webhook(
        &format!("http://127.0.0.1:{}/api/github/webhooks", free_port()),
        SECRET,
    );
    let event: serde_json::Value = serde_json::from_slice(&event).unwrap();
    for _ in 0..5 {
        assert!(fake.deliver("check_run", &event).await.is_err());
    }
    let key = std::fs::read_to_string(root.join("fixtures/keys/test-app.pem")).unwrap();
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let mut config = GitHubClientConfig::new(fake.base_url());
        config.write_interval = Duration::ZERO;
        let github = RestClient::for_app(
            config,
            AppCredentials::new(4242, &SecretString::from(key.clone())).unwrap(),
        )
        .unwrap();
        let db = PgStore::connect(&url, 2).await.unwrap();
        db.migrate().await.unwrap();
        replicas.push(ci_medic::redelivery::Redelivery {
            github,
            state: Arc::new(db.clone()),
            shared: Arc::new(PgShared::new(db, None)),
            metrics: ci_medic::metrics::Metrics::new(),
            interval: Duration::from_secs(3600),
        });
    }
    let timing = ci_medic::singleton::Timing {
        lease: Duration::from_millis(600),
        renew: Duration::from_millis(150),
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let mut replicas = replicas.into_iter();
    let (a, b) = (replicas.next().unwrap(), replicas.next().unwrap());
    let (a_shared, b_shared) = (a.shared.clone(), b.shared.clone());
    let started = chrono::Utc::now();
    let a = tokio::spawn(a.run("a".into(), timing, None, stop.clone()));
    // A takes the lease and reads the log at once: five asked for, the mark moved.
    let asked = || {
        fake.request_log()
            .iter()
            .filter(|r| r.method == "POST" && r.path.starts_with("/app/hook/deliveries/"))
            .count()
    };
    let t = std::time::Instant::now();
    while b_shared.redelivery_mark().await.unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(20), "the first pass ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(asked(), 5);
    let first_mark = b_shared.redelivery_mark().await.unwrap().unwrap();
    assert!(first_mark >= started);
    let log_reads = || {
        fake.request_log()
            .iter()
            .filter(|r| r.method == "GET" && r.path.starts_with("/app/hook/deliveries"))
            .count()
    };
    let reads = log_reads();
    let b = tokio::spawn(b.run("b".into(), timing, None, stop.clone()));
    // A renews its lease well past it: B never reads the log beside it.
    tokio::time::sleep(timing.lease * 3).await;
    assert_eq!(log_reads(), reads, "one replica reads the log at a time");
    // A dies as a SIGKILLed process does: no release, no more renewals.
    a.abort();
    let died = std::time::Instant::now();
    while log_reads() == reads {
        assert!(
            died.elapsed() < timing.lease + timing.renew * 3,
            "the dead holder's redelivery pass did not move within its lease"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!(
        "redelivery pass taken over {} ms after its holder died (lease {} ms, renewal every {} ms)",
        died.elapsed().as_millis(),
        timing.lease.as_millis(),
        timing.renew.as_millis()
    );
    // B's pass starts from A's mark and, complete, moves it.
    let t = std::time::Instant::now();
    while a_shared.redelivery_mark().await.unwrap().unwrap() == first_mark {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "B's pass moved the mark"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    b.await.unwrap();
}
