//! Two `serve` replicas on one PostgreSQL database, a browser's requests spread across them as
//! a load balancer would: the setup flow started on one replica and finished (GitHub's
//! manifest redirect with `code` and `state`) on the other creates the App, and both move on
//! to serving with it; a status page sign-in made on one (the token form, and GitHub's OAuth
//! flow started on one and called back on the other) is honoured by the other, survives a
//! restart of the replica, and a sign-out on one ends it on both. Before the state moved to
//! the store, every cross-replica step here was refused. On sled (one replica), the same
//! process goes from setup mode to serving, and a sign-in survives its restart.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use fake_github::FakeGitHub;
use serde_json::json;

const KEY: &str = include_str!("../fixtures/keys/test-app.pem");
const PUBLIC: &str = "http://medic.test";
const TOKEN: &str = "an-operator-token-long-enough";

struct Replica {
    child: Child,
    /// Each `listening on ADDR` line, in order (setup mode's, then the service's).
    addrs: Receiver<String>,
}

impl Replica {
    /// `url`: PostgreSQL; `None`: sled in `dir`.
    fn start(dir: &std::path::Path, url: Option<&str>, fake: &FakeGitHub) -> Replica {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
        cmd.arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(url) = url {
            cmd.env("DATABASE_URL", url)
                .env("CREDENTIALS_KEY", "5e".repeat(32));
        }
        let mut child = cmd
            .env("DATA_DIR", dir)
            .env("HOST", "127.0.0.1")
            .env("PORT", "0")
            .env("WORKERS", "0")
            .env("REDELIVERY_INTERVAL_SECONDS", "0")
            .env("GITHUB_API_URL", fake.base_url())
            .env("GITHUB_WEB_URL", fake.web_url())
            .env("PUBLIC_URL", PUBLIC)
            .env("STATUS_TOKEN", TOKEN)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, addrs) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let _ = tx.send(format!("http://{addr}"));
                }
            }
        });
        Replica { child, addrs }
    }

    /// The next address it announces.
    fn listening(&self) -> String {
        self.addrs
            .recv_timeout(Duration::from_secs(60))
            .expect("the replica announces where it listens")
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `name=value` of the `Set-Cookie` named `name`.
fn set_cookie(r: &reqwest::Response, name: &str) -> String {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|c| c.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("a {name} cookie"))
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

async fn page(base: &str, path: &str, cookie: &str) -> (u16, String) {
    let r = http()
        .get(format!("{base}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The setup flow as a browser goes through it: the page on `page_base`, GitHub's redirect
/// back (with `code` and `state`) to `callback_base`. `oauth`: the App has OAuth credentials.
async fn create_app(fake: &FakeGitHub, page_base: &str, callback_base: &str, oauth: bool) {
    let form = http()
        .get(format!("{page_base}/setup"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let at = form.find("state=").expect("the form carries a state") + 6;
    let state: String = form[at..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    let mut app = json!({"id": 4242, "slug": "medic", "html_url": "https://github.com/apps/medic",
                         "pem": KEY, "webhook_secret": "hook-secret"});
    if oauth {
        app["client_id"] = json!("Iv1.medic");
        app["client_secret"] = json!("oauth-secret");
    }
    fake.register_manifest_code("code-1", app);
    let done = http()
        .get(format!(
            "{callback_base}/setup/callback?code=code-1&state={state}"
        ))
        .send()
        .await
        .unwrap();
    let status = done.status().as_u16();
    assert_eq!(status, 200, "{}", done.text().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_and_sign_ins_started_on_one_replica_finish_on_the_other() {
    let Some(url) = common::fresh_database("web_state_replicas").await else {
        return;
    };
    let fake = FakeGitHub::start().await.unwrap();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Replica::start(dir_a.path(), Some(&url), &fake);
    let b = Replica::start(dir_b.path(), Some(&url), &fake);
    let (setup_a, setup_b) = (a.listening(), b.listening());

    // The setup page on A; GitHub sends the browser back to B.
    create_app(&fake, &setup_a, &setup_b, true).await;
    // Both replicas move on to serving the App, A because B stored it.
    let (base_a, mut base_b) = (a.listening(), b.listening());
    for base in [&base_a, &base_b] {
        let r = http().get(format!("{base}/readyz")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{base}");
    }

    // The token form on A; the page on B.
    let r = http()
        .post(format!("{base_a}/status/login"))
        .form(&[("token", TOKEN)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let operator = set_cookie(&r, "ci_medic_session");
    let (status, body) = page(&base_b, "/status/jobs", &operator).await;
    assert_eq!(status, 200, "{body}");

    // GitHub's sign-in: started on B, called back on A.
    fake.set_oauth_client(
        "Iv1.medic",
        "oauth-secret",
        &format!("{PUBLIC}/status/oauth/callback"),
    );
    fake.sign_in_browser(Some("mona"));
    let r = http()
        .get(format!("{base_b}/status/oauth/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let state_cookie = set_cookie(&r, "ci_medic_oauth");
    let to = r.headers()["location"].to_str().unwrap().to_string();
    let r = http().get(&to).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 302);
    let back = r.headers()["location"].to_str().unwrap().to_string();
    let path = back.strip_prefix(PUBLIC).unwrap().to_string();
    let r = http()
        .get(format!("{base_a}{path}"))
        .header("cookie", &state_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303, "{}", r.text().await.unwrap());
    let mona = set_cookie(&r, "ci_medic_session");
    let (status, body) = page(&base_b, "/", &mona).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("signed in as mona"), "{body}");

    // B restarts: both sign-ins still hold there.
    b.stop();
    let b = Replica::start(dir_b.path(), Some(&url), &fake);
    base_b = b.listening();
    assert_eq!(page(&base_b, "/status/jobs", &operator).await.0, 200);
    assert!(
        page(&base_b, "/", &mona)
            .await
            .1
            .contains("signed in as mona")
    );

    // Signing out on B ends the session on A too.
    let (_, body) = page(&base_b, "/", &operator).await;
    let at = body.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    let csrf = body[at..at + 32].to_string();
    let r = http()
        .post(format!("{base_b}/status/logout"))
        .header("cookie", &operator)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(page(&base_a, "/status/jobs", &operator).await.0, 401);
    assert_eq!(page(&base_a, "/", &mona).await.0, 200);
}

/// Sled: setup mode hands `DATA_DIR` over to the service in the same process, and a sign-in
/// survives a restart (before, sessions were in memory: a restart signed everyone out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sled_setup_then_a_sign_in_that_survives_a_restart() {
    let fake = FakeGitHub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let one = Replica::start(dir.path(), None, &fake);
    let setup = one.listening();
    create_app(&fake, &setup, &setup, false).await;
    let base = one.listening();
    let r = http()
        .post(format!("{base}/status/login"))
        .form(&[("token", TOKEN)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let operator = set_cookie(&r, "ci_medic_session");
    assert_eq!(page(&base, "/status/jobs", &operator).await.0, 200);
    one.stop();
    // sled lets go of its lock shortly after the process ends.
    let mut again = None;
    for _ in 0..50 {
        let r = Replica::start(dir.path(), None, &fake);
        match r.addrs.recv_timeout(Duration::from_secs(20)) {
            Ok(base) => {
                again = Some((r, base));
                break;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    let (_again, base) = again.expect("the replica starts again on its DATA_DIR");
    assert_eq!(page(&base, "/status/jobs", &operator).await.0, 200);
}

/// GitHub's redirect back from two setup flows, each started on its own replica and
/// finishing at the same moment: both conversions are held by the fake until both callbacks
/// have passed the "no App stored yet" check, then answered together. The App is stored
/// insert-once: one callback says the App is created, the other that this ci-medic is
/// already set up with that App; both replicas serve with it (its webhook secret is the one
/// both check). Before, both stored an App and the last one won.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_setup_flows_finishing_at_once_on_two_replicas_store_one_app() {
    let Some(ping) = common::payload("ping/with-app_id.payload.json") else {
        return;
    };
    let Some(url) = common::fresh_database("web_state_two_setups").await else {
        return;
    };
    let fake = FakeGitHub::start().await.unwrap();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Replica::start(dir_a.path(), Some(&url), &fake);
    let b = Replica::start(dir_b.path(), Some(&url), &fake);
    let (setup_a, setup_b) = (a.listening(), b.listening());
    let state_of = async |base: &str| {
        let form = http()
            .get(format!("{base}/setup"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let at = form.find("state=").expect("the form carries a state") + 6;
        form[at..]
            .chars()
            .take_while(|c| c.is_ascii_hexdigit())
            .collect::<String>()
    };
    let (state_a, state_b) = (state_of(&setup_a).await, state_of(&setup_b).await);
    for (code, id, slug, secret) in [
        ("code-a", 4242, "medic-a", "hook-secret-a"),
        ("code-b", 4343, "medic-b", "hook-secret-b"),
    ] {
        fake.register_manifest_code(
            code,
            json!({"id": id, "slug": slug, "html_url": format!("https://github.com/apps/{slug}"),
                   "pem": KEY, "webhook_secret": secret}),
        );
    }
    let held = [
        fake.hold_answer_next("POST", "/app-manifests/code-a/conversions"),
        fake.hold_answer_next("POST", "/app-manifests/code-b/conversions"),
    ];
    let finish = |base: String, code: &'static str, state: String| {
        tokio::spawn(async move {
            let r = http()
                .get(format!("{base}/setup/callback?code={code}&state={state}"))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        })
    };
    let on_a = finish(setup_a.clone(), "code-a", state_a);
    let on_b = finish(setup_b.clone(), "code-b", state_b);
    let t = std::time::Instant::now();
    while !held.iter().all(|h| h.caught()) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "both callbacks reach GitHub"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for h in &held {
        h.release();
    }
    let (on_a, on_b) = (on_a.await.unwrap(), on_b.await.unwrap());
    let (winner, loser_secret, second) = match (on_a.0, on_b.0) {
        (200, 409) => (("medic-a", "hook-secret-a"), "hook-secret-b", on_b.1),
        (409, 200) => (("medic-b", "hook-secret-b"), "hook-secret-a", on_a.1),
        other => panic!(
            "one App stored, one told: {other:?}\nA: {}\nB: {}",
            on_a.1, on_b.1
        ),
    };
    assert!(
        second.contains(&format!(
            "This ci-medic is already set up with App <a href=\"https://github.com/apps/{0}\">{0}</a>",
            winner.0
        )),
        "{second}"
    );
    assert!(second.contains("was not stored"), "{second}");

    // Both replicas serve with the stored App: its webhook secret is the one they check.
    let (base_a, base_b) = (a.listening(), b.listening());
    for (i, base) in [&base_a, &base_b].into_iter().enumerate() {
        for (j, (secret, expected)) in [(winner.1, 202), (loser_secret, 401)]
            .into_iter()
            .enumerate()
        {
            let r = http()
                .post(format!("{base}/api/github/webhooks"))
                .header("content-type", "application/json")
                .header("x-github-event", "ping")
                .header(
                    "x-github-delivery",
                    format!("2d1e4f00-0000-4000-8000-00000000000{}", 2 * i + j),
                )
                .header(
                    "x-hub-signature-256",
                    ci_medic::intake::sign(secret.as_bytes(), &ping),
                )
                .body(ping.clone())
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            assert!(
                status == expected || (expected == 202 && status == 200),
                "{base} with the secret {secret}: {status}"
            );
        }
    }
}
