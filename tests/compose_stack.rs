//! `deploy/docker-compose.yml` brought up for real with Debian's `docker-compose`: PostgreSQL,
//! three ci-medic replicas and Caddy on one port, as an operator starts it. Docker Hub cannot
//! be reached here, so `tests/compose/standins.yml` (added with `-f`) names local stand-ins
//! for its two images, built from Debian's `postgresql` and `caddy` packages on the base
//! `.ci/docker-setup.sh` makes; ci-medic's image is the Dockerfile's `prebuilt` target around
//! this build's binary (shared with `tests/docker_image.rs`). The fake GitHub listens on the
//! Docker bridge's gateway, where the containers reach it.
//!
//! Through Caddy's one port: the setup flow the compose file's comments describe (the page on
//! one replica, GitHub's redirect back on whichever Caddy picks; the App is stored sealed in
//! PostgreSQL and every replica moves on to serving it), then GitHub's signed delivery of a
//! failed check, and the proposal comment on the pull request; its redelivery is a duplicate
//! on any replica. Then `docker-compose down -v`. Without a Docker engine, `docker-compose`
//! or the base image the test says why and skips, except under `CI=true`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::image::*;
use common::world::*;
use common::*;
use fake_github::{FakeGitHub, Options};

const KEY: &str = include_str!("../fixtures/keys/test-app.pem");
const STANDINS: [(&str, &str); 2] = [
    ("ci-medic-standin/postgres:bookworm", "postgres.Dockerfile"),
    ("ci-medic-standin/caddy:bookworm", "caddy.Dockerfile"),
];
const SERVICES: [&str; 3] = ["ci-medic-1", "ci-medic-2", "ci-medic-3"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The stack of one test run; `docker-compose down -v` when dropped, whatever happened.
struct Stack {
    project: String,
    env: Vec<(String, String)>,
    down: bool,
}

impl Stack {
    fn compose(&self, args: &[&str]) -> Output {
        let mut c = Command::new("docker-compose");
        c.args(["-p", &self.project])
            .arg("-f")
            .arg(root().join("deploy/docker-compose.yml"))
            .arg("-f")
            .arg(root().join("tests/compose/standins.yml"))
            .args(args)
            // The deploy file's variables come from the environment, not deploy/.env.
            .env_remove("POSTGRES_PASSWORD")
            .env_remove("PUBLIC_URL");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.output().expect("docker-compose runs")
    }

    fn compose_ok(&self, args: &[&str]) -> String {
        let out = self.compose(args);
        assert!(
            out.status.success(),
            "docker-compose {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn logs(&self) -> String {
        let out = self.compose(&["logs", "--no-color"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn down(&mut self) -> f64 {
        let t = Instant::now();
        self.compose_ok(&["down", "-v", "--remove-orphans"]);
        self.down = true;
        t.elapsed().as_secs_f64()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if !self.down {
            let _ = self.compose(&["down", "-v", "--remove-orphans"]);
        }
    }
}

/// `docker-compose` and the base image, or `None` (skip) outside CI.
fn prerequisites() -> Option<String> {
    let base = base_image()?;
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let compose = Command::new("docker-compose")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !compose {
        assert!(
            !ci,
            "CI=true but docker-compose is missing: run .ci/compose-setup.sh"
        );
        eprintln!("skipped: docker-compose is not installed (bash .ci/compose-setup.sh)");
        return None;
    }
    Some(base)
}

/// Builds the stand-ins (cached by the engine after the first run); returns the seconds.
fn build_standins(base: &str) -> f64 {
    let t = Instant::now();
    let dir = root().join("tests/compose");
    for (tag, dockerfile) in STANDINS {
        let out = Command::new("docker")
            .env("DOCKER_BUILDKIT", "0")
            .args(["build", "-q", "-t", tag, "-f"])
            .arg(dir.join(dockerfile))
            .arg("--build-arg")
            .arg(format!("BASE={base}"))
            .arg(&dir)
            .output()
            .expect("docker build runs");
        assert!(
            out.status.success(),
            "building the stand-in {tag} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    t.elapsed().as_secs_f64()
}

/// The default bridge's gateway: the host's address as containers on any bridge reach it.
/// A freshly started dockerd (20.10 on a clean machine) lists the bridge's subnet without its
/// gateway; the gateway is then the subnet's first address, as Docker assigns it by default.
fn bridge_gateway() -> std::net::Ipv4Addr {
    let config = docker_ok(&[
        "network",
        "inspect",
        "bridge",
        "--format",
        "{{json (index .IPAM.Config 0)}}",
    ]);
    let config: serde_json::Value =
        serde_json::from_str(&config).expect("docker prints the bridge's IPAM config as JSON");
    gateway_of(&config)
        .unwrap_or_else(|| panic!("the bridge network has no IPv4 gateway: {config}"))
}

/// The gateway an IPAM config names, else its subnet's first address.
fn gateway_of(config: &serde_json::Value) -> Option<std::net::Ipv4Addr> {
    if let Some(gateway) = config["Gateway"].as_str().filter(|g| !g.is_empty()) {
        return gateway.parse().ok();
    }
    let (net, bits) = config["Subnet"].as_str()?.split_once('/')?;
    let (net, bits): (std::net::Ipv4Addr, u32) = (net.parse().ok()?, bits.parse().ok()?);
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    Some((u32::from(net) & mask).checked_add(1)?.into())
}

#[test]
fn a_bridge_listed_without_its_gateway_has_its_subnets_first_address() {
    let listed = serde_json::json!({"Subnet": "172.17.0.0/16", "Gateway": "172.17.0.1"});
    let fresh = serde_json::json!({"Subnet": "172.17.0.0/16"});
    let custom = serde_json::json!({"Subnet": "10.9.0.0/24", "Gateway": "10.9.0.254"});
    assert_eq!(gateway_of(&listed), Some([172, 17, 0, 1].into()));
    assert_eq!(gateway_of(&fresh), Some([172, 17, 0, 1].into()));
    assert_eq!(gateway_of(&custom), Some([10, 9, 0, 254].into()));
    assert_eq!(
        gateway_of(&serde_json::json!({"Subnet": "fd00::/64"})),
        None
    );
}

/// Waits until `f` holds, up to `within`, or panics with the stack's logs.
async fn until(stack: &Stack, what: &str, within: Duration, mut f: impl AsyncFnMut() -> bool) {
    let t = Instant::now();
    while !f().await {
        assert!(
            t.elapsed() < within,
            "{what}: not within {within:?}; logs:\n{}",
            stack.logs()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compose_stack_runs_and_answers_github_through_its_one_port() {
    let Some(base) = prerequisites() else {
        return;
    };
    let started = Instant::now();
    let standins = build_standins(&base);
    let image = build_prebuilt(&base);

    let fake = FakeGitHub::start_with(Options {
        bind: Some(bridge_gateway().into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let (main, pyproject) = (src("app/main.py"), src("pyproject.toml"));
    let (_base, head) = seed(
        &fake,
        &[],
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
    );

    let secrets = tempfile::tempdir().unwrap();
    let key_path: PathBuf = secrets.path().join("credentials.key");
    std::fs::write(&key_path, format!("{}\n", "7c".repeat(32))).unwrap();
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}");
    let mut stack = Stack {
        project: format!("cimedicstack{}", std::process::id()),
        env: vec![
            ("POSTGRES_PASSWORD".into(), "compose-test-password".into()),
            ("PUBLIC_URL".into(), public.clone()),
            ("LISTEN_PORT".into(), port.to_string()),
            ("CI_MEDIC_IMAGE".into(), TAG.into()),
            ("FAKE_GITHUB_URL".into(), fake.base_url()),
            (
                "CREDENTIALS_KEY_PATH".into(),
                key_path.display().to_string(),
            ),
        ],
        down: false,
    };
    let up = Instant::now();
    stack.compose_ok(&["up", "-d", "--no-build"]);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();

    // Setup mode behind Caddy: the page from one replica, GitHub's redirect back to any.
    let mut form = String::new();
    until(
        &stack,
        "the setup page through Caddy",
        Duration::from_secs(90),
        async || match http.get(format!("{public}/setup")).send().await {
            Ok(r) if r.status() == 200 => {
                form = r.text().await.unwrap_or_default();
                true
            }
            _ => false,
        },
    )
    .await;
    let setup_secs = up.elapsed().as_secs_f64();
    let at = form.find("state=").expect("the form carries a state") + 6;
    let state: String = form[at..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    fake.register_manifest_code(
        "compose-code",
        serde_json::json!({"id": 4242, "slug": "ci-medic", "html_url": "https://github.com/apps/ci-medic",
                           "pem": KEY, "webhook_secret": SECRET}),
    );
    let done = http
        .get(format!(
            "{public}/setup/callback?code=compose-code&state={state}"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200, "{}", done.text().await.unwrap());

    // Every replica moves on to serving the App stored in PostgreSQL: each says where its
    // service listens after its setup mode did.
    until(
        &stack,
        "every replica serving",
        Duration::from_secs(60),
        async || {
            let logs = stack.logs();
            SERVICES.iter().all(|s| {
                logs.lines()
                    .filter(|l| l.contains(&format!("{s}_1")) && l.contains("listening on"))
                    .count()
                    >= 2
            })
        },
    )
    .await;
    // Caddy puts them back in the webhooks' rotation at its next health check (every 5 s).
    until(
        &stack,
        "Caddy routing to a ready replica",
        Duration::from_secs(30),
        async || {
            http.get(format!("{public}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200)
        },
    )
    .await;
    let serving_secs = up.elapsed().as_secs_f64();

    // GitHub's signed delivery of the failed check, to Caddy's one port.
    fake.set_webhook(&format!("{public}/api/github/webhooks"), SECRET);
    let check = fake.add_check_run(
        REPO,
        &head,
        CHECK,
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, check, &corpus("logs/actions/ruff_unused_import.log"));
    let payload = fake.check_run_completed_payload(check).unwrap();
    let delivered = fake.deliver("check_run", &payload).await.unwrap();
    assert_eq!(delivered.status, 202, "logs:\n{}", stack.logs());
    let mut proposal = None;
    until(
        &stack,
        "the proposal comment",
        Duration::from_secs(90),
        async || {
            proposal = fake
                .comments(REPO, 7)
                .into_iter()
                .find(|c| c.via_app && c.body.contains("DDS-FIX-"));
            proposal.is_some()
        },
    )
    .await;
    let proposed_secs = up.elapsed().as_secs_f64();
    // GitHub's redelivery goes to the next replica in Caddy's turn: still a duplicate.
    for _ in 0..2 {
        let again = fake.redeliver(&delivered.id).await.unwrap();
        assert!(
            again.status == 200 || again.status == 202,
            "{}",
            again.status
        );
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let comments = fake
        .comments(REPO, 7)
        .into_iter()
        .filter(|c| c.via_app && c.body.starts_with(&marker(CHECK)))
        .count();
    assert_eq!(comments, 1, "one proposal comment");

    let down = stack.down();
    println!(
        "compose stack: stand-in images {standins:.1} s, ci-medic image {image:.1} s; from `up` \
         the setup page answered through Caddy after {setup_secs:.1} s, all three replicas \
         served after {serving_secs:.1} s, the proposal comment came after {proposed_secs:.1} \
         s; `down -v` took {down:.1} s; {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
}
