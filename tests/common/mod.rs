//! Shared helpers for integration tests: the real `ci-medic` binary on a free loopback port,
//! signed deliveries, and real payloads read from `../shared/github/webhooks`.
#![allow(dead_code)]

pub mod image;
pub mod pg;
pub mod test_db;
pub mod world;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SECRET: &str = "integration-test-secret";

/// `shared/` beside the repository (CI puts it there), or `CI_MEDIC_SHARED_DIR`.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("CI_MEDIC_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// A real webhook payload from `shared/github/webhooks/<rel>`. In CI a missing file fails the
/// test; elsewhere the test is skipped with a message (returns None).
pub fn payload(rel: &str) -> Option<Vec<u8>> {
    let path = shared_dir().join("github/webhooks").join(rel);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!(
                    "CI=true but the shared payload {} is missing: {e}",
                    path.display()
                );
            }
            eprintln!(
                "skipping: shared payload {} not available ({e})",
                path.display()
            );
            None
        }
    }
}

pub fn sign(body: &[u8]) -> String {
    ci_medic::intake::sign(SECRET.as_bytes(), body)
}

/// A running `ci-medic serve`.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub data_dir: PathBuf,
    pub stderr: Arc<Mutex<Vec<String>>>,
}

pub struct ServerOptions<'a> {
    pub data_dir: &'a Path,
    pub workers: usize,
    pub github_api_url: &'a str,
    pub extra_env: Vec<(String, String)>,
}

impl Server {
    /// A replica of one installation: `serve` on the PostgreSQL database `database_url` (which
    /// other replicas share), with `workers` workers and the `extra` settings of its test.
    pub fn replica(
        dir: &Path,
        github_api_url: &str,
        database_url: &str,
        workers: usize,
        extra: &[(&str, &str)],
    ) -> Server {
        let mut extra_env = vec![("DATABASE_URL".to_string(), database_url.to_string())];
        extra_env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Server::start(ServerOptions {
            data_dir: dir,
            workers,
            github_api_url,
            extra_env,
        })
    }

    pub fn start(opts: ServerOptions<'_>) -> Server {
        let key = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pem");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
        cmd.arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("APP_ID", "4242")
            .env("PRIVATE_KEY_PATH", &key)
            .env("WEBHOOK_SECRET", SECRET)
            .env("GITHUB_API_URL", opts.github_api_url)
            .env("HOST", "127.0.0.1")
            .env("PORT", "0")
            .env("DATA_DIR", opts.data_dir)
            .env("WORKERS", opts.workers.to_string())
            .env("SHUTDOWN_GRACE_SECONDS", "5")
            // Paced as in production, shorter: every end-to-end test goes through the pacer.
            .env("GITHUB_WRITE_INTERVAL_MS", "50")
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &opts.extra_env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("ci-medic binary starts");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let _ = tx.send(addr.to_string());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "server did not start; stderr:\n{}",
                    stderr.lock().unwrap().join("\n")
                );
            }
        };
        Server {
            child,
            base: format!("http://{addr}"),
            data_dir: opts.data_dir.to_path_buf(),
            stderr,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends a signed delivery; returns the status code.
    pub async fn deliver(&self, event: &str, delivery: &str, body: &[u8]) -> u16 {
        self.deliver_with(event, delivery, body, Some(&sign(body)))
            .await
    }

    pub async fn deliver_with(
        &self,
        event: &str,
        delivery: &str,
        body: &[u8],
        signature: Option<&str>,
    ) -> u16 {
        let client = reqwest::Client::new();
        let mut req = client
            .post(self.url("/api/github/webhooks"))
            .header("content-type", "application/json")
            .header("x-github-event", event)
            .header("x-github-delivery", delivery)
            .header("user-agent", "GitHub-Hookshot/test")
            .body(body.to_vec());
        if let Some(sig) = signature {
            req = req.header("x-hub-signature-256", sig);
        }
        req.send()
            .await
            .expect("request reaches the server")
            .status()
            .as_u16()
    }

    /// Log lines (JSON) mentioning `needle`.
    pub fn log_lines_with(&self, needle: &str) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .cloned()
            .collect()
    }

    /// Waits until `f(lines)` holds, or panics with the log.
    pub async fn wait_for_log(&self, what: &str, f: impl Fn(&[String]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if f(&self.stderr.lock().unwrap()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "timed out waiting for {what}; log:\n{}",
            self.stderr.lock().unwrap().join("\n")
        );
    }

    /// SIGTERM and wait for a clean exit.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        unsafe_free_sigterm(self.child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("server did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the process dies at once, nothing is flushed by it.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn unsafe_free_sigterm(pid: u32) {
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Opens the store a stopped server left behind (sled releases its lock shortly after exit).
pub async fn open_store(dir: &Path) -> ci_medic::store::Store {
    for _ in 0..200 {
        if let Ok(s) = ci_medic::store::Store::open(dir) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("store in {} could not be opened", dir.display());
}

/// A fresh, empty PostgreSQL database for one test, on the cluster `.ci/postgres-setup.sh`
/// started (its URL in `CI_MEDIC_TEST_DATABASE_URL`), dropped when the returned guard is (see
/// [`test_db`]). With `CI` set a missing URL fails the test; elsewhere the test says it was
/// skipped and `None` is returned.
pub async fn fresh_database(test: &str) -> Option<test_db::TestDatabase> {
    let Some(base) = std::env::var("CI_MEDIC_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false") {
            panic!(
                "CI is set but CI_MEDIC_TEST_DATABASE_URL is not: run `.ci/postgres-setup.sh` (as `.ci/run` does) for the PostgreSQL tests"
            );
        }
        eprintln!(
            "skipping {test} on PostgreSQL: CI_MEDIC_TEST_DATABASE_URL is not set (export CI_MEDIC_TEST_DATABASE_URL=\"$(bash .ci/postgres-setup.sh)\")"
        );
        return None;
    };
    Some(test_db::create(&base, test).await)
}
