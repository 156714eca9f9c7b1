//! Conformance: exercises every operation of `/work/shared/github/openapi-subset.json` against the
//! fake and validates each JSON response against that operation's documented response schema
//! (OpenAPI 3.0 `nullable` converted to JSON-Schema type unions), so the fake cannot drift from
//! GitHub. Fails when the subset is missing and `CI=true`; otherwise skips with a message.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{REPO, client, jwt, seeded};
use serde_json::{Value, json};

fn subset_path() -> PathBuf {
    std::env::var_os("GITHUB_OPENAPI_SUBSET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/shared/github/openapi-subset.json"))
}

fn load_subset() -> Option<Value> {
    match std::fs::read(subset_path()) {
        Ok(b) => Some(serde_json::from_slice(&b).expect("subset is JSON")),
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{} is required in CI: {e}", subset_path().display());
            }
            eprintln!(
                "SKIP: {} not readable ({e}); schema conformance not checked",
                subset_path().display()
            );
            None
        }
    }
}

/// OpenAPI 3.0 → JSON Schema 2020-12: `nullable: true` becomes a type union (or an `anyOf` with
/// null when there is no `type`), and enums gain `null`.
fn convert(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(convert).collect()),
        Value::Object(o) => {
            let mut out = serde_json::Map::new();
            for (k, x) in o {
                if k == "example" || k == "examples" || k == "discriminator" || k.starts_with("x-")
                {
                    continue;
                }
                out.insert(
                    k.clone(),
                    if k == "properties" {
                        props(x)
                    } else {
                        convert(x)
                    },
                );
            }
            if out.remove("nullable") == Some(Value::Bool(true)) {
                if let Some(Value::Array(e)) = out.get_mut("enum") {
                    e.push(Value::Null);
                }
                match out.get("type").cloned() {
                    Some(Value::String(t)) => {
                        out.insert("type".into(), json!([t, "null"]));
                    }
                    _ => return json!({"anyOf": [Value::Object(out), {"type": "null"}]}),
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// `properties` maps names to schemas; names like `example` are fields here, not keywords.
fn props(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), convert(x))).collect()),
        other => other.clone(),
    }
}

struct Checker {
    doc: Value,
    components: Value,
    covered: BTreeSet<(String, String)>,
    failures: Vec<String>,
}

impl Checker {
    fn response_schema(&self, method: &str, template: &str, status: u16) -> Option<Value> {
        let op = &self.doc["paths"][template][method.to_ascii_lowercase()];
        assert!(
            op.is_object(),
            "no operation {method} {template} in the subset"
        );
        let mut r = op["responses"][status.to_string()].clone();
        if let Some(reference) = r.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap();
            r = self.doc["components"]["responses"][name].clone();
        }
        r.get("content")
            .and_then(|c| c.get("application/json"))
            .map(|c| c["schema"].clone())
    }

    /// Records coverage and validates `body` (when the operation documents a JSON body for `status`).
    fn check(&mut self, method: &str, template: &str, status: u16, body: &[u8]) {
        self.covered
            .insert((method.to_string(), template.to_string()));
        let op = &self.doc["paths"][template][method.to_ascii_lowercase()];
        if !op["responses"]
            .get(status.to_string())
            .is_some_and(Value::is_object)
        {
            self.failures.push(format!(
                "{method} {template}: status {status} is not documented"
            ));
            return;
        }
        let Some(schema) = self.response_schema(method, template, status) else {
            return;
        };
        let mut root = convert(&schema);
        if !root.is_object() {
            root = json!({"allOf": [root]});
        }
        root["components"] = self.components.clone();
        let validator = jsonschema::validator_for(&root).expect("schema compiles");
        let instance: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                self.failures
                    .push(format!("{method} {template}: body is not JSON: {e}"));
                return;
            }
        };
        for err in validator.iter_errors(&instance) {
            self.failures.push(format!(
                "{method} {template} ({status}): {err} at {}",
                err.instance_path
            ));
        }
    }
}

#[tokio::test]
async fn every_operation_matches_the_openapi_subset() {
    let Some(doc) = load_subset() else { return };
    let components = json!({"schemas": convert(&doc["components"]["schemas"])});
    let mut ck = Checker {
        doc,
        components,
        covered: BTreeSet::new(),
        failures: vec![],
    };
    let (fake, token) = seeded().await;
    let http = client();
    let api = fake.base_url();
    let head = fake.branch_head(REPO, "feature").unwrap();
    let auth = format!("token {token}");

    macro_rules! call {
        ($m:expr, $tpl:expr, $path:expr, $body:expr, $auth:expr) => {{
            let mut rb = http.request(
                reqwest::Method::from_bytes($m.as_bytes()).unwrap(),
                format!("{api}{}", $path),
            );
            rb = rb.header("authorization", $auth);
            let b: Option<Value> = $body;
            if let Some(b) = b {
                rb = rb.json(&b);
            }
            let resp = rb.send().await.unwrap();
            let status = resp.status().as_u16();
            let bytes = resp.bytes().await.unwrap();
            ck.check($m, $tpl, status, &bytes);
            let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            (status, v)
        }};
    }

    let bearer = format!("Bearer {}", jwt(fake.app_id()));
    let (s, v) = call!(
        "POST",
        "/app/installations/{installation_id}/access_tokens",
        "/app/installations/1/access_tokens",
        None,
        &bearer
    );
    assert_eq!(s, 201, "{v}");
    call!(
        "GET",
        "/repos/{owner}/{repo}/installation",
        format!("/repos/{REPO}/installation"),
        None,
        &bearer
    );
    let (s, _) = call!(
        "GET",
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        format!("/repos/{REPO}/pulls/7"),
        None,
        &auth
    );
    assert_eq!(s, 200);
    call!(
        "GET",
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        format!("/repos/{REPO}/pulls/99"),
        None,
        &auth
    );
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/pulls",
        format!("/repos/{REPO}/pulls?head=octo:feature&state=open"),
        None,
        &auth
    );
    assert_eq!(v.as_array().unwrap().len(), 1);

    // Check runs.
    let ann = |i: u64| json!({"path": "src/lib.rs", "start_line": i, "end_line": i, "start_column": 1, "end_column": 3, "annotation_level": "failure", "message": "boom", "title": "E1"});
    let (s, cr) = call!(
        "POST",
        "/repos/{owner}/{repo}/check-runs",
        format!("/repos/{REPO}/check-runs"),
        Some(
            json!({"name": "ci-medic", "head_sha": head, "status": "in_progress", "output": {"title": "t", "summary": "s", "annotations": [ann(1)]}})
        ),
        &auth
    );
    assert_eq!(s, 201, "{cr}");
    let id = cr["id"].as_u64().unwrap();
    call!(
        "GET",
        "/repos/{owner}/{repo}/check-runs/{check_run_id}",
        format!("/repos/{REPO}/check-runs/{id}"),
        None,
        &auth
    );
    let (s, _) = call!(
        "PATCH",
        "/repos/{owner}/{repo}/check-runs/{check_run_id}",
        format!("/repos/{REPO}/check-runs/{id}"),
        Some(
            json!({"conclusion": "failure", "output": {"title": "t", "summary": "s", "annotations": [ann(2), {"path": "a", "start_line": 1, "end_line": 2, "annotation_level": "notice", "message": "m"}]}})
        ),
        &auth
    );
    assert_eq!(s, 200);
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",
        format!("/repos/{REPO}/check-runs/{id}/annotations"),
        None,
        &auth
    );
    assert_eq!(v.as_array().unwrap().len(), 3);
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/commits/{ref}/check-runs",
        format!("/repos/{REPO}/commits/{head}/check-runs?check_name=ci-medic"),
        None,
        &auth
    );
    assert_eq!(v["total_count"], 1);

    // Actions jobs and logs.
    let job = fake.add_check_run(
        REPO,
        &head,
        "test",
        "github-actions",
        "failure",
        Default::default(),
    );
    fake.set_job_log(REPO, job, b"2024-01-01T00:00:00.0000000Z ##[error]boom\n");
    call!(
        "GET",
        "/repos/{owner}/{repo}/actions/jobs/{job_id}",
        format!("/repos/{REPO}/actions/jobs/{job}"),
        None,
        &auth
    );
    let run = job + fake_github::state::RUN_ID_OFFSET;
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
        format!("/repos/{REPO}/actions/runs/{run}/jobs"),
        None,
        &auth
    );
    assert_eq!(v["jobs"][0]["id"], job);
    let (s, _) = call!(
        "GET",
        "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
        format!("/repos/{REPO}/actions/jobs/{job}/logs"),
        None,
        &auth
    );
    assert_eq!(s, 302);

    // A workflow run's jobs with steps, and a re-run's queued job (the re-run endpoints are not
    // in the subset; their answers are checked in tests/actions.rs).
    let wf = fake
        .add_workflow_run(
            REPO,
            &head,
            "CI",
            &[fake_github::NewJob {
                name: "test (22.x)",
                conclusion: "failure",
                steps: &[("Set up job", "success"), ("Run tests", "failure")],
                log: b"",
            }],
        )
        .unwrap();
    let wf_job = wf.job_ids[0];
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/actions/jobs/{job_id}",
        format!("/repos/{REPO}/actions/jobs/{wf_job}"),
        None,
        &auth
    );
    assert_eq!(v["steps"][1]["conclusion"], "failure", "{v}");
    let rerun = http
        .post(format!("{api}/repos/{REPO}/actions/jobs/{wf_job}/rerun"))
        .header("authorization", &auth)
        .send()
        .await
        .unwrap();
    assert_eq!(rerun.status().as_u16(), 201);
    let (_, v) = call!(
        "GET",
        "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
        format!("/repos/{REPO}/actions/runs/{}/jobs?filter=all", wf.run_id),
        None,
        &auth
    );
    assert_eq!(v["total_count"], 2, "{v}");
    assert_eq!(v["jobs"][1]["status"], "queued", "{v}");

    // Comments and reactions.
    let (s, c) = call!(
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        format!("/repos/{REPO}/issues/7/comments"),
        Some(json!({"body": "hi"})),
        &auth
    );
    assert_eq!(s, 201);
    let cid = c["id"].as_u64().unwrap();
    let (s, _) = call!(
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        format!("/repos/{REPO}/issues/7/comments"),
        Some(json!({"body": "x".repeat(65_537)})),
        &auth
    );
    assert_eq!(s, 422);
    call!(
        "GET",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        format!("/repos/{REPO}/issues/7/comments"),
        None,
        &auth
    );
    call!(
        "GET",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        format!("/repos/{REPO}/issues/comments/{cid}"),
        None,
        &auth
    );
    call!(
        "PATCH",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        format!("/repos/{REPO}/issues/comments/{cid}"),
        Some(json!({"body": "edited"})),
        &auth
    );
    let (s, _) = call!(
        "POST",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        format!("/repos/{REPO}/issues/comments/{cid}/reactions"),
        Some(json!({"content": "eyes"})),
        &auth
    );
    assert_eq!(s, 201);
    let (s, _) = call!(
        "POST",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        format!("/repos/{REPO}/issues/comments/{cid}/reactions"),
        Some(json!({"content": "eyes"})),
        &auth
    );
    assert_eq!(s, 200);
    call!(
        "GET",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        format!("/repos/{REPO}/issues/comments/{cid}/reactions"),
        None,
        &auth
    );
    call!(
        "GET",
        "/repos/{owner}/{repo}/collaborators/{username}/permission",
        format!("/repos/{REPO}/collaborators/maint/permission"),
        None,
        &auth
    );
    call!(
        "GET",
        "/repos/{owner}/{repo}/collaborators/{username}/permission",
        format!("/repos/{REPO}/collaborators/nobody/permission"),
        None,
        &auth
    );

    // Contents and git data.
    call!(
        "GET",
        "/repos/{owner}/{repo}/contents/{path}",
        format!("/repos/{REPO}/contents/src/lib.rs?ref=feature"),
        None,
        &auth
    );
    call!(
        "GET",
        "/repos/{owner}/{repo}/contents/{path}",
        format!("/repos/{REPO}/contents/src?ref=feature"),
        None,
        &auth
    );
    call!(
        "GET",
        "/repos/{owner}/{repo}/contents/{path}",
        format!("/repos/{REPO}/contents/missing.txt"),
        None,
        &auth
    );
    let (s, blob) = call!(
        "POST",
        "/repos/{owner}/{repo}/git/blobs",
        format!("/repos/{REPO}/git/blobs"),
        Some(json!({"content": "fixed\n", "encoding": "utf-8"})),
        &auth
    );
    assert_eq!(s, 201);
    let blob_sha = blob["sha"].as_str().unwrap().to_string();
    call!(
        "GET",
        "/repos/{owner}/{repo}/git/blobs/{file_sha}",
        format!("/repos/{REPO}/git/blobs/{blob_sha}"),
        None,
        &auth
    );
    let (_, r) = call!(
        "GET",
        "/repos/{owner}/{repo}/git/ref/{ref}",
        format!("/repos/{REPO}/git/ref/heads/feature"),
        None,
        &auth
    );
    let (_, base_commit) = call!(
        "GET",
        "/repos/{owner}/{repo}/git/commits/{commit_sha}",
        format!(
            "/repos/{REPO}/git/commits/{}",
            r["object"]["sha"].as_str().unwrap()
        ),
        None,
        &auth
    );
    let base_tree = base_commit["tree"]["sha"].as_str().unwrap().to_string();
    call!(
        "GET",
        "/repos/{owner}/{repo}/git/trees/{tree_sha}",
        format!("/repos/{REPO}/git/trees/{base_tree}?recursive=1"),
        None,
        &auth
    );
    let (s, tree) = call!(
        "POST",
        "/repos/{owner}/{repo}/git/trees",
        format!("/repos/{REPO}/git/trees"),
        Some(
            json!({"base_tree": base_tree, "tree": [{"path": "src/lib.rs", "mode": "100644", "type": "blob", "sha": blob_sha}]})
        ),
        &auth
    );
    assert_eq!(s, 201);
    let (s, commit) = call!(
        "POST",
        "/repos/{owner}/{repo}/git/commits",
        format!("/repos/{REPO}/git/commits"),
        Some(json!({"message": "fix", "tree": tree["sha"], "parents": [head]})),
        &auth
    );
    assert_eq!(s, 201);
    let (s, _) = call!(
        "PATCH",
        "/repos/{owner}/{repo}/git/refs/{ref}",
        format!("/repos/{REPO}/git/refs/heads/feature"),
        Some(json!({"sha": commit["sha"], "force": false})),
        &auth
    );
    assert_eq!(s, 200);
    let main = fake.branch_head(REPO, "main").unwrap();
    let (s, _) = call!(
        "PATCH",
        "/repos/{owner}/{repo}/git/refs/{ref}",
        format!("/repos/{REPO}/git/refs/heads/feature"),
        Some(json!({"sha": main, "force": false})),
        &auth
    );
    assert_eq!(s, 422);
    let (s, _) = call!(
        "POST",
        "/repos/{owner}/{repo}/git/refs",
        format!("/repos/{REPO}/git/refs"),
        Some(json!({"ref": "refs/heads/other", "sha": main})),
        &auth
    );
    assert_eq!(s, 201);

    call!(
        "DELETE",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        format!("/repos/{REPO}/issues/comments/{cid}"),
        None,
        &auth
    );

    let all: BTreeSet<(String, String)> = ck.doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .filter(|m| *m != "parameters")
                .map(move |m| (m.to_ascii_uppercase(), p.clone()))
        })
        .collect();
    let missing: Vec<_> = all.difference(&ck.covered).collect();
    assert!(missing.is_empty(), "operations not exercised: {missing:?}");
    assert!(
        ck.failures.is_empty(),
        "schema violations:\n{}",
        ck.failures.join("\n")
    );
}

/// The checker itself must catch drift: a check run missing `id` and with a wrong-typed,
/// non-nullable field, and a null where the schema forbids it, are all reported.
#[test]
fn checker_reports_drift() {
    let Some(doc) = load_subset() else { return };
    let components = json!({"schemas": convert(&doc["components"]["schemas"])});
    let mut ck = Checker {
        doc,
        components,
        covered: BTreeSet::new(),
        failures: vec![],
    };
    ck.check("GET", "/repos/{owner}/{repo}/git/ref/{ref}", 200, br#"{"ref":"refs/heads/x","node_id":"n","url":"http://x/y","object":{"type":"commit","sha":"abc","url":"http://x"}}"#);
    assert!(
        ck.failures.iter().any(|f| f.contains("abc")),
        "short sha must violate minLength: {:?}",
        ck.failures
    );
    ck.failures.clear();
    ck.check("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 200, br#"{"node_id":"n","html_url":"h","issue_url":"i","user":null,"url":"u","created_at":"c","updated_at":"u"}"#);
    assert!(
        ck.failures.iter().any(|f| f.contains("\"id\"")),
        "missing id must be reported: {:?}",
        ck.failures
    );
    ck.failures.clear();
    // `user` is nullable-simple-user: null is fine, a string is not.
    ck.check("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 200, br#"{"id":1,"node_id":"n","html_url":"h","issue_url":"i","user":"bob","url":"u","created_at":"c","updated_at":"u"}"#);
    assert!(!ck.failures.is_empty());
    ck.failures.clear();
    ck.check("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 200, br#"{"id":1,"node_id":"n","html_url":"h","issue_url":"i","user":null,"url":"u","created_at":"c","updated_at":"u"}"#);
    assert!(ck.failures.is_empty(), "{:?}", ck.failures);
}
