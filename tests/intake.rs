//! Webhook intake, driven through the real binary with real GitHub payloads.

mod common;

use common::*;

fn opts(dir: &std::path::Path, workers: usize) -> ServerOptions<'_> {
    // Nothing listens on port 9: any GitHub call would fail, and these events need none.
    ServerOptions {
        data_dir: dir,
        workers,
        github_api_url: "http://127.0.0.1:9",
        extra_env: vec![],
    }
}

#[tokio::test]
async fn valid_deliveries_are_accepted_and_bad_signatures_change_nothing() {
    let Some(check_run) = payload("check_run/completed.payload.json") else {
        return;
    };
    let Some(ping) = payload("ping/payload.json") else {
        return;
    };
    let Some(starred) = payload("push/payload.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), 1));

    assert_eq!(server.deliver("ping", "ping-1", &ping).await, 200);
    assert_eq!(server.deliver("check_run", "cr-1", &check_run).await, 202);
    // Unknown or unused events are acknowledged and ignored.
    assert_eq!(server.deliver("push", "push-1", &starred).await, 200);

    // Wrong secret, missing header, malformed header: 401, nothing stored.
    let wrong = ci_medic::intake::sign(b"not-the-secret", &check_run);
    assert_eq!(
        server
            .deliver_with("check_run", "bad-1", &check_run, Some(&wrong))
            .await,
        401
    );
    assert_eq!(
        server
            .deliver_with("check_run", "bad-2", &check_run, None)
            .await,
        401
    );
    assert_eq!(
        server
            .deliver_with("check_run", "bad-3", &check_run, Some("sha256=nothex"))
            .await,
        401
    );
    // A valid signature over a tampered body is refused too.
    let mut tampered = check_run.clone();
    tampered.extend_from_slice(b" ");
    assert_eq!(
        server
            .deliver_with("check_run", "bad-4", &tampered, Some(&sign(&check_run)))
            .await,
        401
    );

    // Correctly signed but not JSON: 400.
    assert_eq!(
        server
            .deliver("check_run", "bad-json", b"{\"action\": ")
            .await,
        400
    );

    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("outcome=\"bad_signature\"} 4"),
        "{metrics}"
    );
    assert!(
        metrics.contains("event=\"check_run\",outcome=\"accepted\"} 1"),
        "{metrics}"
    );
    assert_eq!(
        reqwest::get(server.url("/healthz")).await.unwrap().status(),
        200
    );
    assert_eq!(
        reqwest::get(server.url("/readyz")).await.unwrap().status(),
        200
    );

    server
        .wait_for_log("the check_run job to finish", |l| {
            l.iter()
                .any(|x| x.contains("cr-1") && x.contains("job finished"))
        })
        .await;
    assert!(server.terminate().success());

    let store = open_store(dir.path()).await;
    assert!(store.delivery("cr-1").unwrap().is_some());
    assert!(store.delivery("ping-1").unwrap().is_some());
    for bad in ["bad-1", "bad-2", "bad-3", "bad-4", "bad-json"] {
        assert!(
            store.delivery(bad).unwrap().is_none(),
            "{bad} must not be stored"
        );
    }
    assert!(
        store.jobs().unwrap().is_empty(),
        "the accepted job ran and was removed"
    );
}

#[tokio::test]
async fn a_redelivery_is_acknowledged_and_processed_once() {
    let Some(body) = payload("check_run/completed.payload.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), 2));
    assert_eq!(server.deliver("check_run", "dup-1", &body).await, 202);
    assert_eq!(server.deliver("check_run", "dup-1", &body).await, 200);
    // Concurrent redeliveries race for the same id: exactly one wins.
    let mut handles = Vec::new();
    for _ in 0..8 {
        let url = server.url("/api/github/webhooks");
        let body = body.clone();
        handles.push(tokio::spawn(async move {
            reqwest::Client::new()
                .post(url)
                .header("x-github-event", "check_run")
                .header("x-github-delivery", "dup-2")
                .header("x-hub-signature-256", sign(&body))
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }));
    }
    let mut codes = Vec::new();
    for h in handles {
        codes.push(h.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 202).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 7, "{codes:?}");

    server
        .wait_for_log("both jobs", |l| {
            l.iter().filter(|x| x.contains("job finished")).count() >= 2
        })
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let finished = |id: &str| {
        server
            .log_lines_with("job finished")
            .iter()
            .filter(|l| l.contains(id))
            .count()
    };
    assert_eq!(finished("dup-1"), 1);
    assert_eq!(finished("dup-2"), 1);
    assert!(server.terminate().success());
}

#[tokio::test]
async fn a_delivery_accepted_before_sigkill_is_processed_after_restart() {
    let Some(body) = payload("check_run/completed.payload.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // No workers: the deliveries are accepted and made durable, but not processed. Killed
    // within a second of the answers, the database has most likely not been flushed yet: they
    // come back from the spool's replay.
    let server = Server::start(opts(dir.path(), 0));
    for i in 0..20 {
        let id = format!("crash-{i}");
        assert_eq!(server.deliver("check_run", &id, &body).await, 202);
    }
    server.kill();

    let server = Server::start(opts(dir.path(), 1));
    server
        .wait_for_log("every job accepted before the crash to run", |l| {
            (0..20).all(|i| {
                let id = format!("\"delivery\":\"crash-{i}\"");
                l.iter()
                    .any(|x| x.contains(&id) && x.contains("job finished"))
            })
        })
        .await;
    // And a redelivery of it now is still recognised.
    assert_eq!(server.deliver("check_run", "crash-1", &body).await, 200);
    assert!(server.terminate().success());
}

#[tokio::test]
async fn oversized_and_headerless_requests_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), 0));
    let client = reqwest::Client::new();
    // 26 MiB, streamed without a Content-Length: refused once the cap is passed.
    let chunk = vec![b' '; 1024 * 1024];
    let stream =
        futures::stream::iter((0..26).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
    let resp = client
        .post(server.url("/api/github/webhooks"))
        .header("x-github-event", "check_run")
        .header("x-github-delivery", "big-1")
        .header("x-hub-signature-256", "sha256=00")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await;
    match resp {
        Ok(r) => assert_eq!(r.status(), 413),
        // The server may close the connection while the client is still sending.
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }
    // With a Content-Length over the cap: 413 before reading anything.
    let big = vec![b'x'; 25 * 1024 * 1024 + 1];
    let r = client
        .post(server.url("/api/github/webhooks"))
        .header("x-github-event", "check_run")
        .header("x-github-delivery", "big-2")
        .body(big)
        .send()
        .await;
    if let Ok(r) = r {
        assert_eq!(r.status(), 413);
    }
    // Signed, but no delivery id.
    let body = b"{}".to_vec();
    let r = client
        .post(server.url("/api/github/webhooks"))
        .header("x-github-event", "check_run")
        .header("x-hub-signature-256", sign(&body))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(server.terminate().success());
    let store = open_store(dir.path()).await;
    assert!(store.delivery("big-1").unwrap().is_none());
}

#[tokio::test]
async fn a_signed_payload_missing_what_its_job_needs_is_refused_naming_the_field() {
    let Some(check_run) = payload("check_run/completed.payload.json") else {
        return;
    };
    let full: serde_json::Value = serde_json::from_slice(&check_run).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), 0));
    let client = reqwest::Client::new();
    // Before, each of these was answered 202 and its job parked for ever.
    for (pointer, field) in [
        ("/check_run/id", "`id`"),
        ("/check_run/name", "`name`"),
        ("/check_run/head_sha", "`head_sha`"),
        ("/repository", "repository.full_name"),
    ] {
        let mut v = full.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        v.pointer_mut(if parent.is_empty() { "" } else { parent })
            .and_then(|p| p.as_object_mut())
            .unwrap()
            .remove(key);
        let body = serde_json::to_vec(&v).unwrap();
        let delivery = format!("lacks{}", pointer.replace('/', "-"));
        let r = client
            .post(server.url("/api/github/webhooks"))
            .header("x-github-event", "check_run")
            .header("x-github-delivery", &delivery)
            .header("x-hub-signature-256", sign(&body))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{pointer}");
        let text = r.text().await.unwrap();
        assert!(text.contains(field), "{pointer}: {text}");
    }
    assert!(server.terminate().success());
    let store = open_store(dir.path()).await;
    assert!(store.jobs().unwrap().is_empty(), "nothing was queued");
    assert!(store.delivery("lacks-check_run-id").unwrap().is_none());
}

#[test]
fn a_missing_setting_stops_startup_with_one_line_naming_it() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .arg("serve")
        .env_clear()
        .env("APP_ID", "12")
        .env(
            "PRIVATE_KEY",
            "-----BEGIN RSA PRIVATE KEY-----\nsecret-material\n-----END RSA PRIVATE KEY-----",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("PRIVATE_KEY"), "{err}");
    assert!(
        !err.contains("secret-material"),
        "secrets never appear in errors: {err}"
    );

    let key = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pem");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .arg("serve")
        .env_clear()
        .env("APP_ID", "12")
        .env("PRIVATE_KEY_PATH", key)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("WEBHOOK_SECRET"), "{err}");
}
