//! Actions workflow runs over HTTP: a job's run, attempt and steps, the jobs of every attempt,
//! both re-run endpoints with GitHub's answers (201 `{}`, 403 while a run is not completed or
//! has nothing failed, 404 for another repository's run), and a re-run job finished by the test
//! with its `check_run` webhook.

mod common;

use common::{REPO, client, seeded};
use fake_github::{NewJob, RerunKind};
use serde_json::{Value, json};

async fn get(api: &str, token: &str, path: &str) -> (u16, Value) {
    let r = client()
        .get(format!("{api}{path}"))
        .header("authorization", format!("token {token}"))
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    (s, r.json().await.unwrap_or(Value::Null))
}

async fn post(api: &str, token: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut rb = client()
        .post(format!("{api}{path}"))
        .header("authorization", format!("token {token}"));
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let r = rb.send().await.unwrap();
    let s = r.status().as_u16();
    (s, r.json().await.unwrap_or(Value::Null))
}

const STEPS: &[(&str, &str)] = &[
    ("Set up job", "success"),
    ("Install dependencies", "failure"),
    ("Run tests", "skipped"),
];

#[tokio::test]
async fn jobs_carry_their_run_attempt_and_steps() {
    let (fake, token) = seeded().await;
    let api = fake.base_url();
    let head = fake.branch_head(REPO, "feature").unwrap();
    let run = fake
        .add_workflow_run(
            REPO,
            &head,
            "CI",
            &[
                NewJob {
                    name: "lint",
                    conclusion: "success",
                    steps: &[("Set up job", "success")],
                    log: b"ok\n",
                },
                NewJob {
                    name: "test",
                    conclusion: "failure",
                    steps: STEPS,
                    log: b"boom\n",
                },
            ],
        )
        .unwrap();
    let test = run.job_ids[1];
    let (s, job) = get(&api, &token, &format!("/repos/{REPO}/actions/jobs/{test}")).await;
    assert_eq!(s, 200);
    assert_eq!(job["run_id"], run.run_id);
    assert_eq!(job["run_attempt"], 1);
    assert_eq!(job["name"], "test");
    assert_eq!(job["head_sha"], head.as_str());
    assert_eq!(job["conclusion"], "failure");
    assert_eq!(job["workflow_name"], "CI");
    let steps: Vec<(String, String, u64)> = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["status"], "completed");
            (
                s["name"].as_str().unwrap().to_string(),
                s["conclusion"].as_str().unwrap().to_string(),
                s["number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            ("Set up job".into(), "success".into(), 1),
            ("Install dependencies".into(), "failure".into(), 2),
            ("Run tests".into(), "skipped".into(), 3),
        ]
    );
    // The job is the check run of the same id.
    assert_eq!(fake.check_run(test).unwrap().name, "test");
    let (_, jobs) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/runs/{}/jobs", run.run_id),
    )
    .await;
    assert_eq!(jobs["total_count"], 2);

    // Another repository's token cannot see it.
    let other = fake.add_repo("octo", "other", "main", &[("a", "b")]);
    assert!(!other.is_empty());
    let (s, _) = get(
        &api,
        &token,
        &format!("/repos/octo/other/actions/runs/{}/jobs", run.run_id),
    )
    .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn rerunning_failed_jobs_makes_a_new_attempt_of_queued_jobs() {
    let (fake, token) = seeded().await;
    let api = fake.base_url();
    let head = fake.branch_head(REPO, "feature").unwrap();
    let run = fake
        .add_workflow_run(
            REPO,
            &head,
            "CI",
            &[
                NewJob {
                    name: "lint",
                    conclusion: "success",
                    steps: &[],
                    log: b"",
                },
                NewJob {
                    name: "test",
                    conclusion: "failure",
                    steps: STEPS,
                    log: b"",
                },
            ],
        )
        .unwrap();
    let (s, body) = post(
        &api,
        &token,
        &format!(
            "/repos/{REPO}/actions/runs/{}/rerun-failed-jobs",
            run.run_id
        ),
        Some(json!({"enable_debug_logging": false})),
    )
    .await;
    assert_eq!((s, body), (201, json!({})));
    let requests = fake.rerun_requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(
        (r.kind, r.run_id, r.attempt, r.new_job_ids.len()),
        (RerunKind::FailedJobs, run.run_id, 2, 1)
    );
    let new_job = r.new_job_ids[0];
    let (_, job) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/jobs/{new_job}"),
    )
    .await;
    assert_eq!(job["name"], "test");
    assert_eq!(job["run_attempt"], 2);
    assert_eq!(job["status"], "queued");
    assert_eq!(job["conclusion"], Value::Null);
    assert_eq!(job["steps"], json!([]));
    assert_eq!(job["runner_name"], Value::Null);

    // While it runs, the run cannot be re-run again.
    let (s, err) = post(
        &api,
        &token,
        &format!(
            "/repos/{REPO}/actions/runs/{}/rerun-failed-jobs",
            run.run_id
        ),
        None,
    )
    .await;
    assert_eq!(s, 403, "{err}");
    assert!(err["message"].as_str().unwrap().contains("not completed"));

    // Every attempt's jobs, oldest first; the latest attempt alone by default.
    let path = |q: &str| format!("/repos/{REPO}/actions/runs/{}/jobs{q}", run.run_id);
    let (_, all) = get(&api, &token, &path("?filter=all")).await;
    let attempts: Vec<u64> = all["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["run_attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, vec![1, 1, 2]);
    let (_, latest) = get(&api, &token, &path("")).await;
    assert_eq!(latest["total_count"], 1);
    let (_, first) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/runs/{}/attempts/1/jobs", run.run_id),
    )
    .await;
    assert_eq!(first["total_count"], 2);
    let (s, _) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/runs/{}/attempts/3/jobs", run.run_id),
    )
    .await;
    assert_eq!(s, 404);

    // The test finishes the new job; the API shows it completed with its steps.
    let done = fake
        .finish_job(new_job, "success", &[("Set up job", "success")], b"ok\n")
        .await
        .unwrap();
    assert!(done.is_none(), "no webhook is set");
    let (_, job) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/jobs/{new_job}"),
    )
    .await;
    assert_eq!(job["status"], "completed");
    assert_eq!(job["conclusion"], "success");
    assert_eq!(job["steps"][0]["name"], "Set up job");

    // Nothing failed in the latest attempt: nothing to re-run.
    let (s, _) = post(
        &api,
        &token,
        &format!(
            "/repos/{REPO}/actions/runs/{}/rerun-failed-jobs",
            run.run_id
        ),
        None,
    )
    .await;
    assert_eq!(s, 403);
    assert_eq!(fake.rerun_requests().len(), 1);
}

#[tokio::test]
async fn one_job_rerun_and_check_runs_added_without_a_run() {
    let (fake, token) = seeded().await;
    let api = fake.base_url();
    let head = fake.branch_head(REPO, "feature").unwrap();
    // The older model: a check run by github-actions is a one-job run.
    let job = fake.add_check_run(
        REPO,
        &head,
        "build",
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, job, b"boom\n");
    let (s, _) = post(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/jobs/{job}/rerun"),
        None,
    )
    .await;
    assert_eq!(s, 201);
    let r = &fake.rerun_requests()[0];
    assert_eq!(
        (r.kind, r.job_id, r.attempt),
        (RerunKind::Job, Some(job), 2)
    );
    assert_eq!(r.run_id, fake.run_id_of_job(job));
    let (_, all) = get(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/runs/{}/jobs?filter=all", r.run_id),
    )
    .await;
    assert_eq!(all["total_count"], 2);

    // Not a job of this repository, not a job at all, or another app's check run.
    let other_app = fake.add_check_run(
        REPO,
        &head,
        "ext",
        "circleci-checks",
        "failure",
        Default::default(),
    );
    for id in [other_app, 99] {
        let (s, _) = post(
            &api,
            &token,
            &format!("/repos/{REPO}/actions/jobs/{id}/rerun"),
            None,
        )
        .await;
        assert_eq!(s, 404, "job {id}");
    }
    // An expired log means the run is past retention and cannot be re-run.
    let old = fake.add_check_run(
        REPO,
        &head,
        "old",
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, old, b"x\n");
    fake.expire_job_log(old);
    let (s, _) = post(
        &api,
        &token,
        &format!("/repos/{REPO}/actions/jobs/{old}/rerun"),
        None,
    )
    .await;
    assert_eq!(s, 403);
}

#[tokio::test]
async fn a_finished_rerun_is_delivered_as_a_check_run_webhook() {
    use axum::routing::post as route_post;
    let (fake, token) = seeded().await;
    let api = fake.base_url();
    let head = fake.branch_head(REPO, "feature").unwrap();
    // A receiver standing in for the App.
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        route_post(move |body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                sink.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap());
                axum::http::StatusCode::ACCEPTED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    fake.set_webhook(&format!("http://{addr}/hook"), "s3cret");

    let run = fake
        .add_workflow_run(
            REPO,
            &head,
            "CI",
            &[NewJob {
                name: "test",
                conclusion: "failure",
                steps: STEPS,
                log: b"",
            }],
        )
        .unwrap();
    let (s, _) = post(
        &api,
        &token,
        &format!(
            "/repos/{REPO}/actions/runs/{}/rerun-failed-jobs",
            run.run_id
        ),
        None,
    )
    .await;
    assert_eq!(s, 201);
    let new_job = fake.rerun_requests()[0].new_job_ids[0];
    let d = fake
        .finish_job(new_job, "success", &[], b"passed\n")
        .await
        .unwrap()
        .expect("delivered");
    assert_eq!(d.status, 202);
    let payloads = got.lock().unwrap().clone();
    assert_eq!(payloads.len(), 1);
    let p = &payloads[0];
    assert_eq!(p["action"], "completed");
    assert_eq!(p["check_run"]["id"], new_job);
    assert_eq!(p["check_run"]["name"], "test");
    assert_eq!(p["check_run"]["head_sha"], head.as_str());
    assert_eq!(p["check_run"]["conclusion"], "success");
    assert_eq!(p["check_run"]["app"]["slug"], "github-actions");
    assert_eq!(p["check_run"]["pull_requests"][0]["number"], 7);
}
