//! The loop after approval, end to end with the real binary and the fake GitHub: the fix agent
//! writes a guarded patch, the git agent pushes one commit, the CI monitor reads the verdict.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::image::image_available;
use common::world::*;
use common::*;

/// The fake's CI for `lint`: fails with ruff's real log while `app/main.py` still imports `os`.
fn scripted_ci(w: &World) {
    let log = corpus("logs/actions/ruff_unused_import.log");
    w.fake.set_ci_script(REPO, CHECK, move |files| {
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

async fn propose_and_approve(w: &World, approver: &str) -> String {
    propose_and_approve_log(w, approver, &corpus("logs/actions/ruff_unused_import.log")).await
}

async fn propose_and_approve_log(w: &World, approver: &str, log: &[u8]) -> String {
    let check = fail_check(w, &w.head, log);
    deliver_check(w, check).await;
    let body = wait_comment(w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    say(w, approver, &format!("/approve {}", dds.id)).await;
    dds.id
}

/// Waits for the fix's outcome and checks it was refused, naming each of `why`, with the
/// branch untouched.
async fn refused_and_nothing_pushed(w: &World, why: &[&str]) {
    let body = wait_comment(w, |b| {
        status_line(b).contains("refused") || status_line(b).contains("executed")
    })
    .await;
    assert!(status_line(&body).contains("refused"), "{body}");
    for needle in why {
        assert!(body.contains(needle), "{needle:?} missing from {body}");
    }
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing pushed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_fix_is_one_commit_and_the_check_then_passes() {
    let w = world(&[]).await;
    scripted_ci(&w);

    // A reader cannot approve; nothing is pushed.
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    let c = say(&w, "reader", "/approve").await;
    wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str())
    );

    // A writer approves: exactly one commit, on top of the proposal's commit.
    say(&w, "maintainer", &format!("/approve {}", dds.id)).await;
    let executed = wait_comment(&w, |b| status_line(b).contains("executed")).await;
    assert!(executed.contains("passed"), "{executed}");

    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    assert_eq!(
        commit.parents,
        vec![w.head.clone()],
        "one commit whose parent is the proposal's commit"
    );
    assert!(commit.message.contains(&dds.id), "{}", commit.message);
    assert!(
        commit
            .message
            .contains("LINTING error in app/main.py line 1"),
        "{}",
        commit.message
    );
    // Only the reported file changed, and only the unused imports went.
    let before = w.fake.commit(REPO, &w.head).unwrap();
    for (path, content) in &commit.files {
        if path != "app/main.py" {
            assert_eq!(
                before.files.get(path),
                Some(content),
                "{path} must not change"
            );
        }
    }
    let fixed = String::from_utf8(w.fake.file_at(REPO, &new_head, "app/main.py").unwrap()).unwrap();
    let original = src("app/main.py");
    assert!(!fixed.contains("import os"), "{fixed}");
    assert!(!fixed.contains("List"), "{fixed}");
    let removed: Vec<&str> = original
        .lines()
        .filter(|l| !fixed.lines().any(|f| f == *l))
        .collect();
    assert!(
        removed.iter().all(|l| l.contains("import")),
        "only import lines changed: {removed:?}"
    );

    // The DDS reads executed in the registry.
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let stored = store.registry().unwrap().get_fix(&dds.id).unwrap().unwrap();
    assert_eq!(stored.status, ci_medic::proposal::DdsStatus::Executed);
    assert_eq!(stored.history.len(), 2, "proposed → approved → executed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_still_fails_leads_to_a_second_proposal_referencing_the_first() {
    let w = world(&[]).await;
    // CI keeps failing whatever the content.
    let log = corpus("logs/actions/ruff_unused_import.log");
    w.fake
        .set_ci_script(REPO, CHECK, move |_| ("failure".to_string(), log.clone()));
    let first = propose_and_approve(&w, "maintainer").await;
    let body = wait_comment(&w, |b| {
        b.contains("DDS-FIX-") && !b.contains(&first) || b.contains("superseded")
    })
    .await;
    let blocks = json_blocks(&body);
    let second: ci_medic::proposal::CodeFixDds = serde_json::from_value(blocks[1].clone()).unwrap();
    assert_ne!(second.id, first);
    assert_eq!(
        second.source_dds.0, first,
        "the failed code_fix is the next proposal's source"
    );
    assert!(status_line(&body).contains("proposed"), "{body}");
    assert_eq!(
        app_comments(&w)
            .iter()
            .filter(|b| b.starts_with("<!-- ci-medic:check="))
            .count(),
        1
    );
    // What was tried is recorded, so the next attempt does not repeat it.
    let pushed = w.fake.file_at(REPO, "feature", "app/main.py").unwrap();
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let run = ci_medic::store::runs::RunStore::open(&store)
        .unwrap()
        .get(REPO, 7, CHECK)
        .unwrap()
        .unwrap();
    let prev = run
        .previous_attempt
        .expect("the failed attempt is recorded");
    assert_eq!(prev.fixer.as_deref(), Some("unused-import"));
    assert_eq!(
        prev.patched_content.as_deref().map(str::as_bytes),
        Some(pushed.as_slice())
    );
    assert!(prev.failure.contains("still failed"), "{prev:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_breaking_the_guard_is_refused_with_the_rule_named() {
    // The repository demands more confidence than any built-in fixer claims.
    let w = world(&[(
        ".github/ci-medic.yml",
        "fix:\n  confidence_threshold: 1.0\n",
    )])
    .await;
    scripted_ci(&w);
    propose_and_approve(&w, "maintainer").await;
    let body = wait_comment(&w, |b| status_line(b).contains("refused")).await;
    assert!(body.contains("confidence"), "{body}");
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing pushed"
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_between_approval_and_push_still_gives_one_commit() {
    let w = world(&[]).await;
    scripted_ci(&w);
    // Ref updates fail until the process is killed.
    w.fake
        .fail_next("PATCH", "/repos/octo-org/shop/git/refs", 500, &[], 10_000);
    propose_and_approve(&w, "maintainer").await;
    wait_comment(&w, |b| status_line(b).contains("approved")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str())
    );
    let w = kill_and_restart(w);
    let executed = wait_comment(&w, |b| status_line(b).contains("executed")).await;
    assert!(executed.contains("pushed"), "{executed}");
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    assert_eq!(
        w.fake.commit(REPO, &new_head).unwrap().parents,
        vec![w.head.clone()],
        "exactly one commit"
    );
    assert!(w.server.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_run_again_after_a_crash_never_decides_another_proposal() {
    let w = world(&[]).await;
    // Two failing checks, two open proposals on the pull request; `lint2`'s is the newest.
    let log = corpus("logs/actions/ruff_unused_import.log");
    let lint = fail_check(&w, &w.head, &log);
    deliver_check(&w, lint).await;
    let first = wait_comment(&w, |b| {
        b.contains("ci-medic:check=lint ") && b.contains("DDS-FIX-")
    })
    .await;
    let lint2 = fail_check_named(&w, &w.head, "lint2", &log);
    deliver_check(&w, lint2).await;
    let second = wait_comment(&w, |b| {
        b.contains("ci-medic:check=lint2 ") && b.contains("DDS-FIX-")
    })
    .await;
    let id_of = |body: &str| -> String {
        serde_json::from_value::<ci_medic::proposal::CodeFixDds>(json_blocks(body)[1].clone())
            .unwrap()
            .id
    };
    let (older, newer) = (id_of(&first), id_of(&second));
    assert_ne!(older, newer);

    // A bare `/approve` takes the newest proposal; the push then fails until the process dies,
    // so the comment's job is still unfinished.
    w.fake
        .fail_next("PATCH", "/repos/octo-org/shop/git/refs", 500, &[], 10_000);
    let approve = say(&w, "maintainer", "/approve").await;
    wait_comment(&w, |b| {
        b.contains("ci-medic:check=lint2 ") && status_line(b).contains("approved")
    })
    .await;
    // After the restart the comment's job runs again: it must carry on with the proposal it
    // approved, not approve the other one that is still open.
    let dir = w.server.data_dir.clone();
    let w = kill_and_restart(w);
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={approve} "))).await;
    assert!(reply.contains(&newer), "{reply}");
    assert!(!reply.contains(&older), "{reply}");
    wait_comment(&w, |b| {
        b.contains("ci-medic:check=lint2 ") && status_line(b).contains("pushed")
    })
    .await;
    assert!(w.server.terminate().success());

    let store = open_store(&dir).await;
    let registry = store.registry().unwrap();
    let untouched = registry.get_fix(&older).unwrap().unwrap();
    assert_eq!(untouched.status, ci_medic::proposal::DdsStatus::Proposed);
    assert!(untouched.history.is_empty(), "{:?}", untouched.history);
    let approved = registry.get_fix(&newer).unwrap().unwrap();
    let approvals = approved
        .history
        .iter()
        .filter(|t| t.to == ci_medic::proposal::DdsStatus::Approved)
        .count();
    assert_eq!(approvals, 1, "{:?}", approved.history);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_leaves_a_pushed_fix_alone() {
    let w = world(&[]).await;
    // No CI script: the pushed commit's check never reports, so the fix stays pushed.
    propose_and_approve(&w, "maintainer").await;
    wait_comment(&w, |b| status_line(b).contains("pushed")).await;
    let c = say(&w, "maintainer", "/retry").await;
    let reply = wait_comment(&w, |b| b.contains(&format!("reply-to={c} "))).await;
    assert!(reply.contains("in progress"), "{reply}");
    let main = wait_comment(&w, |b| b.starts_with("<!-- ci-medic:check=")).await;
    assert!(status_line(&main).contains("pushed"), "{main}");
    assert!(w.server.terminate().success());
}

/// A world whose `app.py` misses a colon, and the fake's CI for `lint`: Python's real error
/// log until `app.py` defines `greet` properly.
async fn missing_colon_world(config: &str) -> World {
    let broken = String::from_utf8(corpus("src/python/py_missing_colon/app.py")).unwrap();
    let w = world_with(&[(".github/ci-medic.yml", config)], &[("app.py", &broken)]).await;
    missing_colon_ci(&w);
    w
}

fn missing_colon_ci(w: &World) {
    let log = log_of_missing_colon();
    w.fake.set_ci_script(REPO, CHECK, move |files| {
        let app = files
            .get("app.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if app.contains("def greet(name):") {
            ("success".to_string(), b"ok\n".to_vec())
        } else {
            ("failure".to_string(), log.clone())
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_verify_docker_the_patch_is_built_in_the_sandbox_before_it_is_pushed() {
    if !image_available("ci-medic-test/python").await {
        return;
    }
    let w = missing_colon_world(VERIFY_PY_COMPILE).await;
    let body = propose_missing_colon(&w).await;
    assert!(body.contains("SYNTAX error in app.py line 1"), "{body}");
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        status_line(b).contains("executed") || status_line(b).contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    assert_eq!(
        w.server.log_lines_with("sandbox build verified").len(),
        1,
        "the patch was built before the push"
    );
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let fixed = String::from_utf8(w.fake.file_at(REPO, &new_head, "app.py").unwrap()).unwrap();
    assert!(fixed.starts_with("def greet(name):\n"), "{fixed}");
    assert!(w.server.terminate().success());
}

/// The sandbox build is a job of its own, outside the pull request's queue and lock: while it
/// runs (a build made to take 12 s), a command on the same pull request is answered, and the
/// fix is pushed only once the build has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pull_requests_other_events_do_not_wait_for_the_sandbox_build() {
    if !image_available("ci-medic-test/python").await {
        return;
    }
    let w = missing_colon_world(
        "verify: docker\nexecutor:\n  image: ci-medic-test/python\n  command: sleep 12 && python3 -m py_compile app.py\n  timeout_seconds: 60\n",
    )
    .await;
    propose_missing_colon(&w).await;
    say(&w, "maintainer", "/approve").await;
    let queued = w
        .fake
        .wait_for(Duration::from_secs(30), |_| {
            (!w.server.log_lines_with("sandbox build queued").is_empty()).then_some(())
        })
        .await;
    assert!(queued.is_some(), "the sandbox build was never queued");

    let c = say(&w, "maintainer", "/help").await;
    wait_comment(&w, |b| b.contains(&format!("reply-to={c}"))).await;
    assert!(
        w.server.log_lines_with("sandbox build verified").is_empty(),
        "the reply waited for the sandbox build"
    );
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing is pushed before the build passed"
    );

    let done = wait_comment(&w, |b| {
        status_line(b).contains("executed") || status_line(b).contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    assert!(
        done.contains("built in the sandbox without the errors it targets"),
        "{done}"
    );
    assert_eq!(w.server.log_lines_with("sandbox build verified").len(), 1);
    assert!(w.server.terminate().success());
}

/// GitHub may finish the check on a pushed fix before the job that pushed it has recorded the
/// push (seen in CI: the fake's CI answered within a millisecond, while the sandbox job, which
/// is outside the pull request's queue, was still recording). Here the push is carried out and
/// its answer lost, so the check's delivery is handled while the run still says "approved";
/// the verdict must still be taken, not left to the next reconciliation minutes later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_finishes_before_the_push_is_recorded_still_gets_its_verdict() {
    if !image_available("ci-medic-test/python").await {
        return;
    }
    let w = missing_colon_world(VERIFY_PY_COMPILE).await;
    w.fake
        .lose_answer_next("PATCH", "/repos/octo-org/shop/git/refs", 1);
    propose_missing_colon(&w).await;
    say(&w, "maintainer", "/approve").await;
    let done = wait_comment(&w, |b| {
        status_line(b).contains("executed") || status_line(b).contains("failed")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    // The check's delivery really came first: accepted before the push was recorded (the
    // first was the failure that led to the proposal).
    let lines = w.server.stderr.lock().unwrap().clone();
    let accepted: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("delivery accepted") && l.contains("\"check_run\""))
        .map(|(i, _)| i)
        .collect();
    let pushed = lines
        .iter()
        .position(|l| l.contains("fix commit pushed"))
        .expect("the push is logged");
    assert!(
        accepted.len() >= 2 && accepted[1] < pushed,
        "the check did not finish before the push was recorded:\n{}",
        lines.join("\n")
    );
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    assert_eq!(
        w.fake.commit(REPO, &new_head).unwrap().parents,
        vec![w.head.clone()],
        "exactly one commit"
    );
    assert!(w.server.terminate().success());
}

/// The sandbox build `py_compile`s the file the fix changes.
const VERIFY_PY_COMPILE: &str = "verify: docker\nexecutor:\n  image: ci-medic-test/python\n  command: python3 -m py_compile app.py\n  timeout_seconds: 60\n";

/// The check fails with the missing-colon log on the pull request's head; returns the proposal
/// comment.
async fn propose_missing_colon(w: &World) -> String {
    let check = fail_check(w, &w.head, &log_of_missing_colon());
    deliver_check(w, check).await;
    wait_comment(w, |b| b.contains("DDS-FIX-")).await
}

fn log_of_missing_colon() -> Vec<u8> {
    corpus("logs/actions/python_missing_colon.log")
}

/// A prepared fix the sandbox build still fails on is refused through the machine, and
/// nothing is pushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_the_sandbox_build_still_fails_on_is_refused_and_not_pushed() {
    if !image_available("ci-medic-test/python").await {
        return;
    }
    // The build compiles a second file the fix does not touch, with the same error at the
    // same place: the targeted error is still there after the patch.
    let config = "verify: docker\nexecutor:\n  image: ci-medic-test/python\n  command: cp broken_copy.txt app.py && python3 -m py_compile app.py\n  timeout_seconds: 60\n";
    let broken = String::from_utf8(corpus("src/python/py_missing_colon/app.py")).unwrap();
    let w = world_with(
        &[(".github/ci-medic.yml", config)],
        &[("app.py", &broken), ("broken_copy.txt", &broken)],
    )
    .await;
    propose_missing_colon(&w).await;
    say(&w, "maintainer", "/approve").await;
    refused_and_nothing_pushed(&w, &["sandbox_build", "still shows 1 targeted error"]).await;
    let body = app_comments(&w)
        .into_iter()
        .find(|b| b.contains("DDS-FIX-"))
        .unwrap();
    assert_eq!(json_blocks(&body)[1]["status"], "failed", "{body}");
    assert_eq!(w.server.log_lines_with("sandbox build verified").len(), 1);
    assert!(w.server.terminate().success());
}

fn entry<'a>(path: &'a str, mode: &'a str, content: &'a [u8]) -> FileEntry<'a> {
    FileEntry {
        path,
        mode,
        content,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executable_keeps_its_mode_through_the_fix() {
    let main = src("app/main.py");
    let w = world_full(
        &[],
        &[entry("app/main.py", "100755", main.as_bytes())],
        vec![],
    )
    .await;
    scripted_ci(&w);
    propose_and_approve(&w, "maintainer").await;
    let done = wait_comment(&w, |b| {
        status_line(b).contains("executed") || status_line(b).contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    assert_eq!(
        w.fake.mode_at(REPO, &new_head, "app/main.py").as_deref(),
        Some("100755")
    );
    assert!(w.server.terminate().success());
}

/// GitHub's contents API answers for a link's target; writing that back would replace the
/// link with a patched copy of its target.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlinked_file_is_declined_and_the_link_stays() {
    let main = src("app/main.py");
    let w = world_full(
        &[],
        &[
            entry("lib/main.py", "100644", main.as_bytes()),
            entry("app/main.py", "120000", b"../lib/main.py"),
        ],
        vec![],
    )
    .await;
    scripted_ci(&w);
    propose_and_approve(&w, "maintainer").await;
    refused_and_nothing_pushed(&w, &["unsupported_file", "symbolic link"]).await;
    assert!(w.server.terminate().success());
}

/// A Latin-1 file: decoding it lossily and pushing the fix would turn `caf\xe9` on line 2 into
/// `caf\xef\xbf\xbd`. It is declined with the reason, and nothing is pushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_utf8_is_declined_never_rewritten() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fix_loop");
    let latin1 = std::fs::read(dir.join("latin1/app/legacy.py")).unwrap();
    assert!(std::str::from_utf8(&latin1).is_err());
    let w = world_full(&[], &[entry("app/legacy.py", "100644", &latin1)], vec![]).await;
    let log = std::fs::read(dir.join("flake8_latin1.log")).unwrap();
    propose_and_approve_log(&w, "maintainer", &log).await;
    refused_and_nothing_pushed(&w, &["unsupported_file", "Latin"]).await;
    assert_eq!(
        w.fake.file_at(REPO, "feature", "app/legacy.py").unwrap(),
        latin1
    );
    assert!(w.server.terminate().success());
}

/// An OpenAI-compatible chat-completions endpoint standing in for a model: it answers every
/// request by deleting the reported line from the file it was sent, with `confidence`, and
/// keeps each prompt.
async fn fake_llm(confidence: f64) -> (String, Arc<Mutex<Vec<String>>>) {
    let prompts: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = prompts.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
            let seen = seen.clone();
            async move {
                let prompt = body["messages"][1]["content"].as_str().unwrap().to_string();
                seen.lock().unwrap().push(prompt.clone());
                let line: usize = prompt
                    .split("- line: ")
                    .nth(1)
                    .and_then(|r| r.split('\n').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap();
                let start = prompt.find("<<<UNTRUSTED FILE CONTENT\n").unwrap() + 26;
                let file = &prompt[start..start + prompt[start..].find("\n>>>").unwrap()];
                let patched: String = file
                    .split_inclusive('\n')
                    .enumerate()
                    .filter(|(i, _)| i + 1 != line)
                    .map(|(_, l)| l)
                    .collect();
                let answer = serde_json::json!({
                    "patched_content": patched,
                    "fix_reason": "Deleted the reported line.",
                    "confidence_score": confidence,
                });
                axum::Json(serde_json::json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer.to_string()}}],
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), prompts)
}

fn llm_env(url: &str) -> Vec<(String, String)> {
    [
        ("LLM_API_URL", url),
        ("LLM_API_KEY", "sk-test"),
        ("LLM_MODEL", "m"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The built-in fixer's patch is refused by the guard (this repository wants more confidence
/// than it claims); that refuses one candidate, not the proposal: the LLM gets its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixer_patch_the_guard_refuses_gives_the_llm_its_turn() {
    let (url, prompts) = fake_llm(0.99).await;
    let main = src("app/main.py");
    let w = world_full(
        &[(
            ".github/ci-medic.yml",
            "fix:\n  confidence_threshold: 0.96\n",
        )],
        &[entry("app/main.py", "100644", main.as_bytes())],
        llm_env(&url),
    )
    .await;
    scripted_ci(&w);
    propose_and_approve(&w, "maintainer").await;
    let done = wait_comment(&w, |b| {
        status_line(b).contains("executed") || status_line(b).contains("refused")
    })
    .await;
    assert!(status_line(&done).contains("executed"), "{done}");
    assert_eq!(
        prompts.lock().unwrap().len(),
        2,
        "one turn per reported error"
    );
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let commit = w.fake.commit(REPO, &new_head).unwrap();
    assert!(commit.message.contains("(llm)"), "{}", commit.message);
    let fixed = String::from_utf8(w.fake.file_at(REPO, &new_head, "app/main.py").unwrap()).unwrap();
    assert_eq!(
        fixed,
        main.replace("import os\n", "")
            .replace("from typing import List\n", "")
    );
    assert!(w.server.terminate().success());
}

/// The `status` of the code_fix DDS block on a comment.
fn dds_status(body: &str) -> String {
    let blocks = json_blocks(body);
    let dds = blocks
        .iter()
        .find(|b| b["type"] == "code_fix")
        .unwrap_or_else(|| panic!("no DDS block in {body}"));
    dds["status"].as_str().unwrap().to_string()
}

/// The published DDS follows the specification's transitions: `proposed`, then `approved` as
/// soon as the `/approve` is accepted (while the fix is written and pushed), then `executed`
/// once the check passes on the pushed commit; the registry says the same. The `/approve` is
/// answered before the fix job runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_published_dds_reads_approved_then_executed() {
    let w = world(&[]).await;
    scripted_ci(&w);
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    let proposed = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    assert_eq!(dds_status(&proposed), "proposed");
    let id = json_blocks(&proposed)[1]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // The push is held up, so the comment can be read between the approval and the push.
    w.fake
        .fail_next("PATCH", "/repos/octo-org/shop/git/refs", 500, &[], 10_000);
    let c = say(&w, "maintainer", &format!("/approve {id}")).await;
    let approved = wait_comment(&w, |b| status_line(b).contains("approved")).await;
    assert_eq!(dds_status(&approved), "approved", "{approved}");
    // The approval is answered at once: 👍 and the reply come before any push.
    wait_comment(&w, |b| b.contains(&format!("reply-to={c} "))).await;
    let reactions: Vec<String> = w.fake.reactions(c).into_iter().map(|r| r.content).collect();
    assert_eq!(reactions, vec!["+1".to_string()]);
    assert_eq!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "nothing pushed yet"
    );
    w.fake.clear_faults();

    let executed = wait_comment(&w, |b| status_line(b).contains("executed")).await;
    assert_eq!(dds_status(&executed), "executed", "{executed}");
    assert_ne!(
        w.fake.branch_head(REPO, "feature").as_deref(),
        Some(w.head.as_str()),
        "the fix was pushed"
    );
    let dir = w.server.data_dir.clone();
    assert!(w.server.terminate().success());
    let store = open_store(&dir).await;
    let stored = store.registry().unwrap().get_fix(&id).unwrap().unwrap();
    assert_eq!(stored.status, ci_medic::proposal::DdsStatus::Executed);
}

/// A refused patch fails the proposal on the comment's DDS block too, not only in its prose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_patch_publishes_a_failed_dds() {
    let w = world(&[(
        ".github/ci-medic.yml",
        "fix:\n  confidence_threshold: 1.0\n",
    )])
    .await;
    scripted_ci(&w);
    propose_and_approve(&w, "maintainer").await;
    let body = wait_comment(&w, |b| status_line(b).contains("refused")).await;
    assert_eq!(dds_status(&body), "failed", "{body}");
    assert!(w.server.terminate().success());
}

/// A pushed fix whose check never reports: once `VERDICT_TIMEOUT_MINUTES` have passed, the CI
/// monitor's reconcile pass (here the one at start-up) says no verdict came, and the code_fix
/// is `failed`. Waits out the shortest wait the setting allows, one minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_fix_whose_check_never_reports_times_out() {
    let env = vec![("VERDICT_TIMEOUT_MINUTES".to_string(), "1".to_string())];
    let w = world_on(free_port(), env.clone()).await;
    // No CI script: the fake runs nothing on the pushed commit.
    propose_and_approve(&w, "maintainer").await;
    wait_comment(&w, |b| b.contains("**pushed**")).await;
    let pushed = std::time::Instant::now();

    tokio::time::sleep(Duration::from_secs(61).saturating_sub(pushed.elapsed())).await;
    let w = kill_and_restart_with(w, env);
    let body = wait_comment(&w, |b| status_line(b).contains("within 1 minute")).await;
    assert!(
        status_line(&body).contains("no result for the check"),
        "{body}"
    );
    let dds = &json_blocks(&body)[1];
    assert_eq!(dds["status"], "failed", "{body}");
}
