//! A replica stopped with SIGTERM gives its leases back: two `serve` replicas on one
//! PostgreSQL database, the first holding the redelivery pass's singleton lease (30 s, renewed
//! every 10 s); once it exits, the second runs the pass well before that lease would have
//! lapsed. Before, the lease stayed with the dead replica until it lapsed: 20 to 40 s.

mod common;

use std::time::{Duration, Instant};

use common::*;

fn replica(dir: &std::path::Path, url: &str, api: &str) -> Server {
    // One pass at the takeover, none from the interval during the test.
    Server::replica(dir, api, url, 0, &[("REDELIVERY_INTERVAL_SECONDS", "3600")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stopped_with_sigterm_hands_its_singleton_over_at_once() {
    let Some(url) = fresh_database("shutdown_releases").await else {
        return;
    };
    let fake = fake_github::FakeGitHub::start().await.unwrap();
    fake.set_app(4242, "ci-medic");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    fake.set_app_public_key(&std::fs::read(root.join("fixtures/keys/test-app.pub.pem")).unwrap())
        .unwrap();
    let api = fake.base_url();
    let log_reads = || {
        fake.request_log()
            .iter()
            .filter(|r| r.method == "GET" && r.path.starts_with("/app/hook/deliveries"))
            .count()
    };
    let wait_for = |what: &str, f: &dyn Fn() -> bool| {
        let t = Instant::now();
        while !f() {
            assert!(t.elapsed() < Duration::from_secs(60), "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };

    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = replica(dir_a.path(), &url, &api);
    wait_for("the first replica reads the delivery log", &|| {
        log_reads() >= 1
    });
    let b = replica(dir_b.path(), &url, &api);
    // B asks for the lease as it starts, and is refused: A holds it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let reads = log_reads();
    assert_eq!(reads, 1, "one replica reads the log at a time");

    let stopping = Instant::now();
    let status = a.terminate();
    assert!(status.success(), "{status:?}");
    let stopped = stopping.elapsed();
    let after_term = || stopping.elapsed();
    wait_for("the second replica takes the pass over", &|| {
        log_reads() > reads
    });
    let taken = after_term();
    println!(
        "redelivery pass taken over {} ms after SIGTERM (the holder exited after {} ms; the \
         lease would have lapsed 20 to 30 s after SIGTERM; the others retry every 10 s)",
        taken.as_millis(),
        stopped.as_millis()
    );
    // The lease was renewed at most 10 s before SIGTERM and lasts 30 s: it would have lapsed
    // 20 s after SIGTERM at the earliest.
    assert!(
        taken < Duration::from_secs(20),
        "taken over {} ms after SIGTERM: the lease was not given back",
        taken.as_millis()
    );
    drop(b);
}
