//! The App's credentials on PostgreSQL, as the real binary uses them: the first replica started
//! with them in its `DATA_DIR` and a `CREDENTIALS_KEY` stores them sealed in the database; a
//! second replica with an empty `DATA_DIR` and no credentials in its environment starts from
//! them (its webhook secret verifies deliveries); a wrong key, or none, stops `serve` at start
//! with one clear line that shows no key.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ci_medic::setup::StoredApp;
use ci_medic::store::pg::PgStore;
use ci_medic::store::pg_shared_state::PgShared;
use ci_medic::store::sealing::{CredentialsKey, Keys};
use ci_medic::store::shared_state::SharedState;
use secrecy::SecretString;

fn serve(dir: &std::path::Path, url: &str, key: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", url)
        .env("DATA_DIR", dir)
        .env("HOST", "127.0.0.1")
        .env("PORT", "0")
        .env("WORKERS", "0")
        .env("REDELIVERY_INTERVAL_SECONDS", "0")
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .env("RUST_LOG", "info");
    if let Some(k) = key {
        cmd.env("CREDENTIALS_KEY", k);
    }
    cmd
}

/// Starts `serve` and waits for its address; panics with its stderr if it does not start.
fn start(mut cmd: Command) -> (Child, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("listening on ") {
                let _ = tx.send(addr.to_string());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(addr) => (child, format!("http://{addr}")),
        Err(_) => {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "serve did not start: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

fn app() -> StoredApp {
    StoredApp {
        app_id: 4242,
        private_key_pem: SecretString::from(
            include_str!("../fixtures/keys/test-app.pem").to_string(),
        ),
        webhook_secret: SecretString::from(common::SECRET.to_string()),
        slug: "ci-medic-test".into(),
        html_url: "https://github.com/apps/ci-medic-test".into(),
        client_id: None,
        client_secret: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_the_sealed_credentials_and_a_wrong_key_stops_serve() {
    let Some(body) = common::payload("check_run/completed.payload.json") else {
        return;
    };
    let Some(url) = common::fresh_database("credentials_serve").await else {
        return;
    };
    let key = "3c".repeat(32);
    // Replica one: the setup flow's files in its DATA_DIR.
    let first_dir = tempfile::tempdir().unwrap();
    ci_medic::setup::store_app(first_dir.path(), &app()).unwrap();
    let (mut first, _) = start(serve(first_dir.path(), &url, Some(&key)));
    let _ = first.kill();
    let _ = first.wait();

    let db = PgStore::connect(&url, 2).await.unwrap();
    let keys = Keys::new(CredentialsKey::parse(&key, "CREDENTIALS_KEY").unwrap());
    let stored = PgShared::new(db.clone(), Some(keys))
        .load_app()
        .await
        .unwrap()
        .expect("the first replica stored the App");
    assert_eq!(stored.app_id, 4242);

    // Replica two: nothing but the database and the key.
    let second_dir = tempfile::tempdir().unwrap();
    let (mut second, base) = start(serve(second_dir.path(), &url, Some(&key)));
    let status = |signature: String| {
        let (base, body) = (base.clone(), body.clone());
        async move {
            reqwest::Client::new()
                .post(format!("{base}/api/github/webhooks"))
                .header("content-type", "application/json")
                .header("x-github-event", "check_run")
                .header("x-github-delivery", format!("d-{}", signature.len()))
                .header("x-hub-signature-256", signature)
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    // Signed with the stored webhook secret: accepted; with another: refused.
    assert_eq!(status(common::sign(&body)).await, 202);
    assert_eq!(status("sha256=00".into()).await, 401);
    let _ = second.kill();
    let _ = second.wait();
    assert!(
        !second_dir.path().join("github-app").exists(),
        "the second replica wrote no credential files"
    );

    // A wrong key: one line, naming the setting, showing no key.
    let wrong = "77".repeat(32);
    let out = serve(second_dir.path(), &url, Some(&wrong))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("CREDENTIALS_KEY") && err.contains("sealed with another key"),
        "{err}"
    );
    assert!(!err.contains(&wrong) && !err.contains(&key), "{err}");
    // No key at all.
    let out = serve(second_dir.path(), &url, None).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CREDENTIALS_KEY is not set"), "{err}");
    // A malformed key.
    let out = serve(second_dir.path(), &url, Some("not-a-key"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("CREDENTIALS_KEY: must be 32 random bytes"),
        "{err}"
    );
}
