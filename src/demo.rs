//! `ci-medic demo`: ci-medic at work without creating a GitHub App.
//!
//! Starts the fake GitHub in-process with a small repository whose pull request adds a Python
//! module, and whose `lint` check failed with ruff's real output (captured from a real run, see
//! `fixtures/corpus`). Then runs the real service against it — intake, parser, proposal,
//! comment, approval, fix agent, git agent, CI monitor — and prints what a maintainer sees on
//! the pull request at each step.
//!
//! The demo's App key is the repository's throwaway test key; it never talks to github.com.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use fake_github::{CheckOutput, FakeGitHub, NewPullRequest, Permission};
use secrecy::SecretString;

use crate::github::{AppCredentials, GitHubClientConfig, RestClient};
use crate::jobs::RetryPolicy;
use crate::metrics::Metrics;
use crate::orchestrator::{Context, Orchestrator};
use crate::server::{ServeOptions, serve};
use crate::store::Store;

const APP_ID: u64 = 4242;
const SECRET: &str = "demo-webhook-secret";
const REPO: &str = "octo-demo/shop";
const KEY: &str = include_str!("../fixtures/keys/test-app.pem");
const PUBLIC_KEY: &str = include_str!("../fixtures/keys/test-app.pub.pem");
const MAIN_PY: &str = include_str!("../fixtures/corpus/src/python/ruff_unused_import/app/main.py");
const RUFF_LOG: &[u8] = include_bytes!("../fixtures/corpus/logs/actions/ruff_unused_import.log");

fn section(title: &str) {
    println!("\n{}\n{title}\n{}", "=".repeat(78), "=".repeat(78));
}

/// Runs the demo and prints it.
pub async fn run() -> anyhow::Result<()> {
    let data_dir = std::env::temp_dir().join(format!("ci-medic-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data_dir);
    let result = scenario(&data_dir).await;
    let _ = std::fs::remove_dir_all(&data_dir);
    result
}

async fn scenario(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let fake = FakeGitHub::start()
        .await
        .context("starting the fake GitHub")?;
    fake.set_app(APP_ID, "ci-medic");
    fake.set_app_public_key(PUBLIC_KEY.as_bytes())
        .context("loading the demo key")?;
    let base = fake.add_repo(
        "octo-demo",
        "shop",
        "main",
        &[("README.md", "# shop\n"), ("app/__init__.py", "")],
    );
    let head = fake
        .commit_files(
            REPO,
            "add-main",
            Some(&base),
            &[("app/main.py", MAIN_PY)],
            "Add the main module",
        )
        .context("committing the sample change")?;
    fake.open_pull_request(NewPullRequest {
        repo: REPO,
        number: 1,
        head_branch: "add-main",
        head_repo: REPO,
        base: "main",
        author_login: "contributor",
        title: "Add the main module",
        maintainer_can_modify: true,
    })
    .context("opening the pull request")?;
    fake.set_permission(REPO, "maintainer", Permission::Write)
        .context("permissions")?;
    fake.set_permission(REPO, "visitor", Permission::Read)
        .context("permissions")?;
    // The repository's CI: ruff fails while an unused import is left.
    fake.set_ci_script(REPO, "lint", |files| {
        let main = files
            .get("app/main.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if main.contains("import os") || main.contains("List") {
            ("failure".to_string(), RUFF_LOG.to_vec())
        } else {
            ("success".to_string(), b"All checks passed!\n".to_vec())
        }
    });

    // The real service, on loopback, against the fake.
    let store = Store::open(data_dir).context("opening the demo database")?;
    let metrics = Metrics::new();
    // Writes are paced as in production, a little faster so the demo reads well.
    let mut client_config = GitHubClientConfig::new(fake.base_url());
    client_config.write_interval = Duration::from_millis(200);
    let github = RestClient::for_app(
        client_config,
        AppCredentials::new(APP_ID, &SecretString::from(KEY.to_string()))?,
    )?
    .with_metrics(metrics.clone());
    let state: Arc<dyn crate::store::backend::Backend> = Arc::new(store.clone());
    let ctx = Context::new(
        Arc::new(github),
        store.clone(),
        state.clone(),
        metrics.clone(),
        APP_ID,
    )?;
    let addr: SocketAddr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let service = tokio::spawn(serve(
        ServeOptions {
            addr,
            store: store.clone(),
            state,
            metrics,
            secrets: vec![SecretString::from(SECRET.to_string())],
            workers: 2,
            retry: RetryPolicy::default(),
            shutdown_grace: Duration::from_secs(5),
            http: Default::default(),
            extra_routes: axum::Router::new(),
            announce: false,
            redelivery: None,
            status: Default::default(),
            addr_file: None,
            job_lease: None,
            reconcile_interval: None,
        },
        Arc::new(Orchestrator::new(Arc::new(ctx))),
        async move {
            let _ = stop_rx.await;
        },
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    fake.set_webhook(&format!("http://{addr}/api/github/webhooks"), SECRET);

    section("1. Pull request #1 in octo-demo/shop: the `lint` check fails");
    println!("app/main.py as committed on `add-main` ({}):\n", &head[..7]);
    for (i, l) in MAIN_PY.lines().enumerate() {
        println!("  {:>3} | {l}", i + 1);
    }
    let check = fake.add_check_run(
        REPO,
        &head,
        "lint",
        "github-actions",
        "failure",
        CheckOutput::default(),
    );
    fake.set_job_log(REPO, check, RUFF_LOG);
    println!(
        "\nThe job log (ruff's real output, as the Actions logs API serves it), its error lines:"
    );
    for l in String::from_utf8_lossy(RUFF_LOG)
        .lines()
        .filter(|l| l.contains("F401") || l.contains("##[error]"))
    {
        println!("  {l}");
    }
    let payload = fake
        .check_run_completed_payload(check)
        .context("check_run payload")?;
    let d = fake.deliver("check_run", &payload).await?;
    println!(
        "\nGitHub delivers `check_run` completed ({}) → ci-medic answers HTTP {}",
        d.id, d.status
    );

    let comment = wait(&fake, |f| bot_comment(f, "DDS-FIX-"))
        .await
        .context("no proposal comment appeared")?;
    section("2. ci-medic's comment on the pull request");
    println!("{comment}");
    let runs = fake.check_runs(REPO, &head);
    if let Some(run) = runs.iter().find(|r| r.name == "ci-medic") {
        println!(
            "\nCheck run `ci-medic` on {} carries these annotations:",
            &head[..7]
        );
        for a in fake.annotations(run.id) {
            println!(
                "  {}:{} [{}] {}",
                a["path"].as_str().unwrap_or(""),
                a["start_line"],
                a["title"].as_str().unwrap_or(""),
                a["message"].as_str().unwrap_or("")
            );
        }
    }
    let dds_id = comment
        .split("/approve ")
        .nth(1)
        .and_then(|s| s.get(..20))
        .map(str::to_string)
        .context("the comment names no proposal")?;

    section("3. A visitor with read access types `/approve`");
    let c = fake.add_comment(REPO, 1, "visitor", "/approve");
    fake.deliver(
        "issue_comment",
        &fake.issue_comment_created_payload(c).context("payload")?,
    )
    .await?;
    let reply = wait(&fake, |f| bot_comment(f, &format!("reply-to={c}")))
        .await
        .context("no reply")?;
    println!("ci-medic replies:\n{}", strip_marker(&reply));

    section(&format!(
        "4. The maintainer (write access) types `/approve {dds_id}`"
    ));
    let c = fake.add_comment(REPO, 1, "maintainer", &format!("/approve {dds_id}"));
    fake.deliver(
        "issue_comment",
        &fake.issue_comment_created_payload(c).context("payload")?,
    )
    .await?;
    let done = wait(&fake, |f| {
        bot_comment(f, "**executed**").or_else(|| bot_comment(f, "**patch refused**"))
    })
    .await
    .context("the fix did not complete")?;
    let new_head = fake.branch_head(REPO, "add-main").context("branch")?;
    if new_head == head {
        bail!("no commit was pushed:\n{done}");
    }
    let commit = fake.commit(REPO, &new_head).context("commit")?;
    println!(
        "ci-medic pushed one commit, {} (parent {}):\n",
        &new_head[..7],
        &head[..7]
    );
    for l in commit.message.lines() {
        println!("  {l}");
    }
    let after = fake
        .file_at(REPO, &new_head, "app/main.py")
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    println!(
        "\n{}",
        ci_medic_core::fix_check::unified_diff("app/main.py", Some(MAIN_PY), &after)
    );

    section("5. CI runs `lint` on the pushed commit; ci-medic reports the verdict");
    let status = done
        .lines()
        .find(|l| l.starts_with("**Status:**"))
        .unwrap_or("");
    println!("{status}\n");
    if let Some(h) = done.find("History") {
        println!(
            "{}",
            done[h..].lines().take(12).collect::<Vec<_>>().join("\n")
        );
    }
    println!(
        "\nThat is the whole loop. Run `ci-medic serve` with your App's settings to do it for real."
    );

    let _ = stop_tx.send(());
    let _ = service.await;
    Ok(())
}

fn bot_comment(f: &FakeGitHub, needle: &str) -> Option<String> {
    f.comments(REPO, 1)
        .into_iter()
        .find(|c| c.via_app && c.body.contains(needle))
        .map(|c| c.body)
}

fn strip_marker(body: &str) -> String {
    body.lines()
        .filter(|l| !l.starts_with("<!--"))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn wait(fake: &FakeGitHub, probe: impl Fn(&FakeGitHub) -> Option<String>) -> Option<String> {
    fake.wait_for(Duration::from_secs(30), probe).await
}
