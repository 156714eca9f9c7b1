//! Functional tests of the fake over real HTTP: auth, pagination with absolute `Link` URLs,
//! fast-forward refusal, tree/commit building, the no-auth log redirect, tarballs, faults,
//! GHES base paths, webhooks and scripted CI.

mod common;

use std::io::Read;
use std::sync::{Arc, Mutex};

use common::{REPO, client, jwt, seeded};
use fake_github::{CheckOutput, FakeGitHub, Options};
use serde_json::{Value, json};

async fn get(url: &str, token: &str) -> reqwest::Response {
    client()
        .get(url)
        .header("authorization", format!("token {token}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn auth_is_checked() {
    let (fake, token) = seeded().await;
    let url = format!("{}/repos/{REPO}/pulls/7", fake.base_url());
    let r = client().get(&url).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["message"], "Bad credentials");
    assert!(v["documentation_url"].is_string());
    assert_eq!(
        client()
            .get(&url)
            .header("authorization", "token ghs_made_up")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        client()
            .get(&url)
            .header("authorization", format!("Bearer {token}"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // A JWT is not accepted on repo endpoints, and a token is not accepted on /app.
    let jwt = jwt(fake.app_id());
    assert_eq!(
        client()
            .get(&url)
            .bearer_auth(&jwt)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let mint = format!("{}/app/installations/1/access_tokens", fake.base_url());
    assert_eq!(
        client()
            .post(&mint)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let r = client().post(&mint).bearer_auth(&jwt).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.unwrap();
    let minted = v["token"].as_str().unwrap();
    assert!(minted.starts_with("ghs_"));
    assert_eq!(get(&url, minted).await.status(), 200);
    // Tokens expire after an hour.
    fake.advance_clock(chrono::Duration::minutes(61));
    assert_eq!(get(&url, minted).await.status(), 401);
    // Every response carries rate-limit headers.
    assert!(
        get(&url, minted)
            .await
            .headers()
            .contains_key("x-ratelimit-remaining")
    );
    assert!(
        fake.request_log()
            .iter()
            .any(|r| r.path == format!("/repos/{REPO}/pulls/7") && !r.had_auth && r.status == 401)
    );
}

#[tokio::test]
async fn pagination_uses_absolute_link_urls() {
    let (fake, token) = seeded().await;
    for i in 0..5 {
        fake.add_comment(REPO, 7, "bob", &format!("c{i}"));
    }
    let url = format!(
        "{}/repos/{REPO}/issues/7/comments?per_page=2",
        fake.base_url()
    );
    let r = get(&url, &token).await;
    let link = r.headers()["link"].to_str().unwrap().to_string();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(
        link.contains(&format!(
            "<{}/repos/{REPO}/issues/7/comments?per_page=2&page=2>; rel=\"next\"",
            fake.base_url()
        )),
        "{link}"
    );
    assert!(link.contains("page=3>; rel=\"last\""), "{link}");
    // Follow `next` until there is none.
    let mut bodies = vec![];
    let mut next = Some(url);
    while let Some(u) = next.take() {
        let r = get(&u, &token).await;
        next = r.headers().get("link").and_then(|l| {
            l.to_str()
                .unwrap()
                .split(", ")
                .find(|p| p.ends_with("rel=\"next\""))
                .map(|p| p[1..p.find('>').unwrap()].to_string())
        });
        let v: Value = r.json().await.unwrap();
        bodies.extend(
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c["body"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(bodies, ["c0", "c1", "c2", "c3", "c4"]);
}

#[tokio::test]
async fn pull_files_are_derived_from_the_diff() {
    let (fake, token) = seeded().await;
    let v: Value = get(
        &format!("{}/repos/{REPO}/pulls/7/files", fake.base_url()),
        &token,
    )
    .await
    .json()
    .await
    .unwrap();
    let files: Vec<(&str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["filename"].as_str().unwrap(),
                f["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(files, [("src/lib.rs", "modified"), ("src/new.rs", "added")]);
    let pr: Value = get(&format!("{}/repos/{REPO}/pulls/7", fake.base_url()), &token)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(pr["changed_files"], 2);
    assert_eq!(
        pr["head"]["sha"],
        fake.branch_head(REPO, "feature").unwrap()
    );
    assert_eq!(pr["maintainer_can_modify"], true);
    let by_sha: Value = get(
        &format!(
            "{}/repos/{REPO}/commits/{}/pulls",
            fake.base_url(),
            pr["head"]["sha"].as_str().unwrap()
        ),
        &token,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(by_sha[0]["number"], 7);
    let main = fake.branch_head(REPO, "main").unwrap();
    let on_main: Value = get(
        &format!("{}/repos/{REPO}/commits/{main}/pulls", fake.base_url()),
        &token,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(on_main, json!([]));
}

#[tokio::test]
async fn git_data_builds_commits_and_refuses_non_fast_forward() {
    let (fake, token) = seeded().await;
    let api = format!("{}/repos/{REPO}", fake.base_url());
    let http = client();
    let post = |path: &str, body: Value| {
        http.post(format!("{api}{path}"))
            .header("authorization", format!("token {token}"))
            .json(&body)
            .send()
    };
    let head = fake.branch_head(REPO, "feature").unwrap();
    let commit = fake.commit(REPO, &head).unwrap();
    let base_tree: Value = get(&format!("{api}/git/commits/{head}"), &token)
        .await
        .json()
        .await
        .unwrap();
    let blob: Value = post(
        "/git/blobs",
        json!({"content": base64_of("bin\0ary"), "encoding": "base64"}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let tree: Value = post(
        "/git/trees",
        json!({"base_tree": base_tree["tree"]["sha"], "tree": [
            {"path": "src/lib.rs", "mode": "100644", "type": "blob", "content": "pub fn a() {}\n"},
            {"path": "src/new.rs", "mode": "100644", "type": "blob", "sha": null},
            {"path": "data/b.bin", "mode": "100644", "type": "blob", "sha": blob["sha"]}
        ]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let c: Value = post(
        "/git/commits",
        json!({"message": "ci-medic: fix", "tree": tree["sha"], "parents": [head]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let new_sha = c["sha"].as_str().unwrap().to_string();
    let r = http
        .patch(format!("{api}/git/refs/heads/feature"))
        .header("authorization", format!("token {token}"))
        .json(&json!({"sha": new_sha, "force": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(fake.branch_head(REPO, "feature").unwrap(), new_sha);
    let view = fake.commit(REPO, &new_sha).unwrap();
    assert_eq!(view.parents, std::slice::from_ref(&head));
    assert_eq!(view.message, "ci-medic: fix");
    assert_eq!(view.files["src/lib.rs"], b"pub fn a() {}\n");
    assert_eq!(view.files["data/b.bin"], b"bin\0ary");
    assert!(!view.files.contains_key("src/new.rs"));
    assert_eq!(view.files["README.md"], commit.files["README.md"]);
    assert_eq!(
        fake.file_at(REPO, "feature", "src/lib.rs").unwrap(),
        b"pub fn a() {}\n"
    );

    // Moving back to the old head is not a fast forward.
    let r = http
        .patch(format!("{api}/git/refs/heads/feature"))
        .header("authorization", format!("token {token}"))
        .json(&json!({"sha": head, "force": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["message"], "Update is not a fast forward");
    assert_eq!(fake.branch_head(REPO, "feature").unwrap(), new_sha);
    let r = http
        .patch(format!("{api}/git/refs/heads/feature"))
        .header("authorization", format!("token {token}"))
        .json(&json!({"sha": head, "force": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Contents: base64 wrapped at 60 chars, sha = git blob id.
    let v: Value = get(&format!("{api}/contents/README.md?ref=main"), &token)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["sha"], "ce013625030ba8dba906f756967f9e9ca394464a"); // `echo hello | git hash-object --stdin`
    assert_eq!(v["content"], "aGVsbG8K\n");
    assert_eq!(
        get(&format!("{api}/contents/nope.md"), &token)
            .await
            .status(),
        404
    );
}

fn base64_of(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn job_log_redirect_requires_dropping_auth() {
    let (fake, token) = seeded().await;
    let head = fake.branch_head(REPO, "feature").unwrap();
    let job = fake.add_check_run(
        REPO,
        &head,
        "test",
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, job, b"line 1\nline 2\n");
    let r = get(
        &format!("{}/repos/{REPO}/actions/jobs/{job}/logs", fake.base_url()),
        &token,
    )
    .await;
    assert_eq!(r.status(), 302);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert!(loc.starts_with(&fake.web_url()));
    // Forwarding the GitHub token to the log host fails…
    assert_eq!(get(&loc, &token).await.status(), 400);
    // …without it, the log is served.
    let r = client().get(&loc).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"line 1\nline 2\n");
    fake.expire_job_log(job);
    assert_eq!(
        get(
            &format!("{}/repos/{REPO}/actions/jobs/{job}/logs", fake.base_url()),
            &token
        )
        .await
        .status(),
        410
    );
    assert_eq!(
        get(
            &format!("{}/repos/{REPO}/actions/jobs/999/logs", fake.base_url()),
            &token
        )
        .await
        .status(),
        404
    );
}

#[tokio::test]
async fn tarball_has_github_layout() {
    let (fake, token) = seeded().await;
    let r = get(
        &format!("{}/repos/{REPO}/tarball/feature", fake.base_url()),
        &token,
    )
    .await;
    assert_eq!(r.status(), 302);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let bytes = client()
        .get(&loc)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_ref()));
    let short = &fake.branch_head(REPO, "feature").unwrap()[..7];
    let mut names = vec![];
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let mut s = String::new();
        e.read_to_string(&mut s).unwrap();
        names.push(name);
    }
    assert!(
        names
            .iter()
            .all(|n| n.starts_with(&format!("octo-widget-{short}/"))),
        "{names:?}"
    );
    assert!(names.contains(&format!("octo-widget-{short}/src/new.rs")));
}

#[tokio::test]
async fn faults_are_injected_then_cleared() {
    let (fake, token) = seeded().await;
    let url = format!("{}/repos/{REPO}/pulls/7", fake.base_url());
    fake.fail_next(
        "GET",
        "/repos/octo/widget/pulls",
        403,
        &[("retry-after", "2")],
        1,
    );
    fake.fail_next("*", "/repos/", 502, &[], 2);
    let r = get(&url, &token).await;
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["retry-after"], "2");
    let v: Value = r.json().await.unwrap();
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("secondary rate limit")
    );
    assert_eq!(get(&url, &token).await.status(), 502);
    assert_eq!(get(&url, &token).await.status(), 502);
    assert_eq!(get(&url, &token).await.status(), 200);
}

/// A held answer: the request is carried out at once (the comment exists), its answer comes
/// only when the test releases it.
#[tokio::test]
async fn a_held_answer_comes_after_its_effect_and_only_once_released() {
    let (fake, token) = seeded().await;
    let held = fake.hold_answer_next("POST", "/repos/octo/widget/issues/7/comments");
    let url = format!("{}/repos/{REPO}/issues/7/comments", fake.base_url());
    let post = tokio::spawn(async move {
        client()
            .post(url)
            .header("authorization", format!("token {token}"))
            .json(&json!({"body": "held"}))
            .send()
            .await
            .unwrap()
            .status()
    });
    let made = fake
        .wait_for(std::time::Duration::from_secs(10), |f| {
            f.comments(REPO, 7).into_iter().find(|c| c.body == "held")
        })
        .await;
    assert!(
        made.is_some(),
        "the request is carried out before its answer"
    );
    assert!(held.caught());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!post.is_finished(), "the answer is held");
    held.release();
    assert_eq!(post.await.unwrap(), 201);
}

#[tokio::test]
async fn check_run_limits() {
    let (fake, token) = seeded().await;
    let head = fake.branch_head(REPO, "feature").unwrap();
    let anns: Vec<Value> = (1..=51).map(|i| json!({"path": "a", "start_line": i, "end_line": i, "annotation_level": "warning", "message": "m"})).collect();
    let r = client()
        .post(format!("{}/repos/{REPO}/check-runs", fake.base_url()))
        .header("authorization", format!("token {token}"))
        .json(&json!({"name": "x", "head_sha": head, "output": {"title": "t", "summary": "s", "annotations": anns}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert!(fake.check_runs(REPO, &head).is_empty());
}

#[tokio::test]
async fn check_runs_for_ref_filter_latest_by_default_and_all_on_request() {
    let (fake, token) = seeded().await;
    let head = fake.branch_head(REPO, "feature").unwrap();
    let add = |name: &str, app: &str| {
        fake.add_check_run(REPO, &head, name, app, "failure", CheckOutput::default())
    };
    let old_lint = add("lint", "github-actions");
    let new_lint = add("lint", "github-actions");
    let build = add("build", "github-actions");
    // The same name from another App is its own latest run.
    let ours = add("lint", "ci-medic");
    let ids = |query: &'static str| {
        let url = format!(
            "{}/repos/{REPO}/commits/{head}/check-runs{query}",
            fake.base_url()
        );
        let token = token.clone();
        async move {
            let v: Value = get(&url, &token).await.json().await.unwrap();
            let mut ids: Vec<u64> = v["check_runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_u64().unwrap())
                .collect();
            ids.sort_unstable();
            assert_eq!(v["total_count"].as_u64(), Some(ids.len() as u64), "{query}");
            ids
        }
    };
    assert_eq!(ids("").await, [new_lint, build, ours]);
    assert_eq!(ids("?filter=latest").await, [new_lint, build, ours]);
    assert_eq!(ids("?filter=all").await, [old_lint, new_lint, build, ours]);
    assert_eq!(ids("?check_name=lint").await, [new_lint, ours]);
    assert_eq!(
        ids("?check_name=lint&filter=all").await,
        [old_lint, new_lint, ours]
    );
}

#[tokio::test]
async fn comments_name_the_app_they_were_made_through() {
    let (fake, token) = seeded().await;
    fake.set_app(4242, "ci-medic");
    let url = format!("{}/repos/{REPO}/issues/7/comments", fake.base_url());
    let r = client()
        .post(&url)
        .header("authorization", format!("token {token}"))
        .json(&json!({"body": "ours"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    fake.add_comment(REPO, 7, "alice", "a person");
    fake.add_app_comment(REPO, 7, 15368, "github-actions", "a workflow");
    fake.add_app_comment(REPO, 7, 4243, "ci-medic-staging", "a second install");
    let v: Value = get(&url, &token).await.json().await.unwrap();
    let seen: Vec<(String, String, Value, Value)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let app = &c["performed_via_github_app"];
            (
                c["body"].as_str().unwrap().to_owned(),
                c["user"]["login"].as_str().unwrap().to_owned(),
                app["id"].clone(),
                app["slug"].clone(),
            )
        })
        .collect();
    let row = |b: &str, u: &str, id: Value, slug: Value| (b.to_owned(), u.to_owned(), id, slug);
    assert_eq!(
        seen,
        [
            row("ours", "ci-medic[bot]", json!(4242), json!("ci-medic")),
            row("a person", "alice", Value::Null, Value::Null),
            row(
                "a workflow",
                "github-actions[bot]",
                json!(15368),
                json!("github-actions")
            ),
            row(
                "a second install",
                "ci-medic-staging[bot]",
                json!(4243),
                json!("ci-medic-staging")
            ),
        ]
    );
    assert_eq!(v[2]["user"]["type"], "Bot");
    assert_eq!(v[2]["performed_via_github_app"]["owner"]["login"], "github");
}

#[tokio::test]
async fn ghes_base_path() {
    let fake = FakeGitHub::start_with(Options {
        base_path: "/api/v3".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    fake.add_repo("o", "r", "main", &[("a", "b")]);
    let token = fake.issue_installation_token(1);
    assert!(fake.base_url().ends_with("/api/v3"));
    let v: Value = get(&format!("{}/repos/o/r", fake.base_url()), &token)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["default_branch"], "main");
    assert!(v["url"].as_str().unwrap().contains("/api/v3/repos/o/r"));
    assert_eq!(
        get(&format!("{}/repos/o/r", fake.web_url()), &token)
            .await
            .status(),
        404
    );
}

#[tokio::test]
async fn manifest_codes_are_single_use() {
    let fake = FakeGitHub::start().await.unwrap();
    fake.register_manifest_code(
        "abc",
        json!({"id": 99, "slug": "my-app", "pem": "PEM", "webhook_secret": "s"}),
    );
    let url = format!("{}/app-manifests/abc/conversions", fake.base_url());
    let r = client().post(&url).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (v["id"].as_u64(), v["slug"].as_str(), v["pem"].as_str()),
        (Some(99), Some("my-app"), Some("PEM"))
    );
    assert!(v["client_secret"].is_string() && v["html_url"].is_string() && v["owner"].is_object());
    assert_eq!(client().post(&url).send().await.unwrap().status(), 404);
}

/// A tiny webhook receiver recording (headers, body) of each delivery.
async fn receiver() -> (
    String,
    Arc<Mutex<Vec<(axum::http::HeaderMap, bytes::Bytes)>>>,
) {
    let got: Arc<Mutex<Vec<(axum::http::HeaderMap, bytes::Bytes)>>> = Arc::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |h: axum::http::HeaderMap, b: bytes::Bytes| {
            let g = g.clone();
            async move {
                g.lock().unwrap().push((h, b));
                axum::http::StatusCode::ACCEPTED
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (url, got)
}

#[tokio::test]
async fn webhooks_are_signed_and_redeliverable() {
    let (fake, _) = seeded().await;
    let (url, got) = receiver().await;
    fake.set_webhook(&url, "It's a Secret to Everybody");
    let cid = fake.add_comment(REPO, 7, "maint", "/approve");
    let payload = fake.issue_comment_created_payload(cid).unwrap();
    assert!(payload["issue"]["pull_request"].is_object());
    assert_eq!(payload["comment"]["body"], "/approve");
    let d = fake.deliver("issue_comment", &payload).await.unwrap();
    assert_eq!(d.status, 202);
    let d2 = fake.redeliver(&d.id).await.unwrap();
    assert_eq!(d2.id, d.id);
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 2);
    let (h, body) = &got[0];
    assert_eq!(h["x-github-event"], "issue_comment");
    assert_eq!(h["x-github-delivery"].to_str().unwrap(), d.id);
    assert_eq!(d.id.len(), 36);
    assert!(
        h["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("GitHub-Hookshot/")
    );
    assert_eq!(
        h["x-hub-signature-256"].to_str().unwrap(),
        fake_github::webhook::signature_256("It's a Secret to Everybody", body)
    );
    assert_eq!(got[1].1, *body);
    assert_eq!(got[1].0["x-github-delivery"], h["x-github-delivery"]);
}

#[tokio::test]
async fn scripted_ci_runs_on_api_push_and_delivers_check_run() {
    let (fake, token) = seeded().await;
    let (url, got) = receiver().await;
    fake.set_webhook(&url, "s3cret");
    fake.set_ci_script(REPO, "test", |files| {
        if String::from_utf8_lossy(&files["src/lib.rs"]).contains("broken") {
            ("failure".into(), b"error: broken\n".to_vec())
        } else {
            ("success".into(), b"ok\n".to_vec())
        }
    });
    let head = fake.branch_head(REPO, "feature").unwrap();
    // Push a fix through the git data API.
    let http = client();
    let api = format!("{}/repos/{REPO}", fake.base_url());
    let auth = format!("token {token}");
    let tree: Value = http
        .post(format!("{api}/git/trees"))
        .header("authorization", &auth)
        .json(&json!({"base_tree": "0".repeat(40), "tree": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        tree.get("sha").is_none(),
        "empty base_tree is invalid: {tree}"
    );
    let commit_json: Value = http
        .get(format!("{api}/git/commits/{head}"))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tree: Value = http
        .post(format!("{api}/git/trees"))
        .header("authorization", &auth)
        .json(&json!({"base_tree": commit_json["tree"]["sha"], "tree": [{"path": "src/lib.rs", "mode": "100644", "type": "blob", "content": "pub fn a() {}\n"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let c: Value = http
        .post(format!("{api}/git/commits"))
        .header("authorization", &auth)
        .json(&json!({"message": "fix", "tree": tree["sha"], "parents": [head]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sha = c["sha"].as_str().unwrap().to_string();
    let r = http
        .patch(format!("{api}/git/refs/heads/feature"))
        .header("authorization", &auth)
        .json(&json!({"sha": sha}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let runs = fake.check_runs(REPO, &sha);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].conclusion.as_deref(), Some("success"));
    assert_eq!(runs[0].app_slug, "github-actions");
    // The job log of that run is served.
    let r = get(&format!("{api}/actions/jobs/{}/logs", runs[0].id), &token).await;
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        client()
            .get(&loc)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "ok\n"
    );
    // The check_run webhook arrives.
    let arrived = fake
        .wait_for(std::time::Duration::from_secs(5), |_| {
            (!got.lock().unwrap().is_empty()).then_some(())
        })
        .await;
    assert!(arrived.is_some(), "no check_run delivery");
    assert_eq!(fake.deliveries()[0].1, "check_run");
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    let v: Value = serde_json::from_slice(&got[0].1).unwrap();
    assert_eq!(got[0].0["x-github-event"], "check_run");
    assert_eq!(v["action"], "completed");
    assert_eq!(v["check_run"]["head_sha"], sha);
    assert_eq!(v["check_run"]["pull_requests"][0]["number"], 7);
    assert_eq!(
        got[0].0["x-hub-signature-256"].to_str().unwrap(),
        fake_github::webhook::signature_256("s3cret", &got[0].1)
    );
}

#[tokio::test]
async fn jwt_signature_is_verified_when_a_key_is_set() {
    let (fake, _) = seeded().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    fake.set_app_public_key(&std::fs::read(dir.join("test-app-key.pub.pem")).unwrap())
        .unwrap();
    let mint = format!("{}/app/installations/1/access_tokens", fake.base_url());
    // The unsigned test JWT is now refused…
    let r = client()
        .post(&mint)
        .bearer_auth(jwt(fake.app_id()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // …and a properly signed one accepted.
    let now = chrono::Utc::now().timestamp();
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(
        &std::fs::read(dir.join("test-app-key.pem")).unwrap(),
    )
    .unwrap();
    let claims = json!({"iat": now - 60, "exp": now + 540, "iss": fake.app_id().to_string()});
    let signed = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &claims,
        &key,
    )
    .unwrap();
    assert_eq!(
        client()
            .post(&mint)
            .bearer_auth(&signed)
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
    // An expired, correctly signed JWT gets GitHub's message.
    let claims = json!({"iat": now - 700, "exp": now - 100, "iss": fake.app_id().to_string()});
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &claims,
        &key,
    )
    .unwrap();
    let v: Value = client()
        .post(&mint)
        .bearer_auth(&expired)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("'Expiration time' claim ('exp')"),
        "{v}"
    );
}

/// Links and submodules as GitHub's contents API shows them: a link to a regular file answers
/// with that file (its own `path`), any other link as `type: symlink`, a submodule as
/// `type: submodule`; the tree keeps every mode.
#[tokio::test]
async fn contents_follow_links_to_files_like_github() {
    let (fake, token) = seeded().await;
    let entry = |path, mode, content: &'static str| fake_github::FileEntry {
        path,
        mode,
        content: content.as_bytes(),
    };
    let head = fake
        .commit_entries(
            REPO,
            "links",
            Some("main"),
            &[
                entry("bin/run", "100755", "#!/bin/sh\n"),
                entry("bin/lib.rs", "120000", "../src/lib.rs"),
                entry("bin/gone", "120000", "../nowhere"),
                entry(
                    "vendor/dep",
                    "160000",
                    "0123456789abcdef0123456789abcdef01234567",
                ),
            ],
            "links",
        )
        .unwrap();
    let api = format!("{}/repos/{REPO}", fake.base_url());
    let at = |p: &str| format!("{api}/contents/{p}?ref={head}");
    let v: Value = get(&at("bin/lib.rs"), &token).await.json().await.unwrap();
    assert_eq!(
        (v["type"].as_str(), v["path"].as_str()),
        (Some("file"), Some("src/lib.rs"))
    );
    assert_eq!(v["content"], base64_of("pub fn a() {}\n") + "\n");
    let v: Value = get(&at("bin/gone"), &token).await.json().await.unwrap();
    assert_eq!(
        (v["type"].as_str(), v["target"].as_str()),
        (Some("symlink"), Some("../nowhere"))
    );
    let v: Value = get(&at("vendor/dep"), &token).await.json().await.unwrap();
    assert_eq!(v["type"], "submodule");
    assert_eq!(
        fake.mode_at(REPO, &head, "bin/run").as_deref(),
        Some("100755")
    );
    let v: Value = get(&format!("{api}/git/trees/{head}?recursive=1"), &token)
        .await
        .json()
        .await
        .unwrap();
    let modes: Vec<(String, String, String)> = v["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["mode"].as_str().unwrap().to_string(),
                e["type"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(p, _, _)| p.starts_with("bin/") || p.starts_with("vendor/"))
        .collect();
    let want = [
        ("bin/gone", "120000", "blob"),
        ("bin/lib.rs", "120000", "blob"),
        ("bin/run", "100755", "blob"),
        ("vendor/dep", "160000", "commit"),
    ];
    assert_eq!(
        modes,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
}
