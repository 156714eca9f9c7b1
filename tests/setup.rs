//! The App manifest and the setup flow, driven against the fake GitHub: the `/setup` page, the
//! `/setup/callback` code exchange, the owner-only credential files, and the flow switching
//! itself off once an App is stored.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use ci_medic::setup::{self, SetupConfig, SetupOutcome};
use ci_medic::store::Store;
use ci_medic::store::shared_state::{SharedState, SledShared};
use fake_github::FakeGitHub;
use http_body_util::BodyExt;
use secrecy::ExposeSecret;
use serde_json::json;
use tower::ServiceExt;

const KEY: &str = include_str!("../fixtures/keys/test-app.pem");
const PUBLIC: &str = "https://medic.example.com";

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, String) {
    let resp = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

/// The `state` in the page's form action.
fn state_of(page: &str) -> String {
    let i = page.find("state=").expect("form action has a state") + "state=".len();
    page[i..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect()
}

/// The sled store in `dir` with its credential files, as `serve` opens it in setup mode.
fn sled_shared(dir: &std::path::Path) -> Arc<dyn SharedState> {
    let store = Store::open(dir).unwrap();
    Arc::new(SledShared::open(&store).unwrap().with_credentials(dir))
}

fn router(fake: &FakeGitHub, dir: &std::path::Path) -> axum::Router {
    setup::routes(
        sled_shared(dir),
        fake.base_url(),
        fake.web_url(),
        Some(PUBLIC.to_string()),
    )
}

#[test]
fn manifest_asks_for_exactly_what_ci_medic_uses() {
    let m = setup::manifest("https://medic.example.com/");
    assert_eq!(m["name"], "ci-medic");
    assert_eq!(m["url"], "https://medic.example.com");
    assert_eq!(
        m["hook_attributes"]["url"],
        "https://medic.example.com/api/github/webhooks"
    );
    assert_eq!(m["hook_attributes"]["active"], true);
    assert_eq!(
        m["redirect_url"],
        "https://medic.example.com/setup/callback"
    );
    assert_eq!(
        m["default_permissions"],
        json!({
            "checks": "write", "contents": "write", "pull_requests": "write",
            "issues": "write", "actions": "write", "metadata": "read"
        })
    );
    let mut events: Vec<&str> = m["default_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    events.sort();
    // installation / installation_repositories reach every App unasked; GitHub rejects a
    // manifest that lists them.
    assert_eq!(events, ["check_run", "issue_comment", "pull_request"]);
    assert_eq!(m["public"], false);
    let named = setup::manifest_named(PUBLIC, "medic-staging");
    assert_eq!(named["name"], "medic-staging");
}

#[tokio::test]
async fn setup_exchanges_the_code_and_stores_owner_only_credentials() {
    let fake = FakeGitHub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = router(&fake, dir.path());

    let (status, page) = get(&app, "/setup").await;
    assert_eq!(status, StatusCode::OK);
    let state = state_of(&page);
    assert_eq!(state.len(), 32);
    assert!(page.contains(&format!(
        "action=\"{}/settings/apps/new?state={state}\"",
        fake.web_url()
    )));
    // The manifest travels HTML-escaped in a hidden field.
    assert!(page.contains("name=\"manifest\""));
    assert!(
        page.contains("&quot;url&quot;:&quot;https://medic.example.com/api/github/webhooks&quot;")
    );

    // A callback not started from this page is refused and stores nothing.
    fake.register_manifest_code(
        "code-1",
        json!({"id": 4242, "slug": "my-medic", "html_url": format!("{}/apps/my-medic", fake.web_url()), "pem": KEY, "webhook_secret": "whsec-1"}),
    );
    let (status, body) = get(
        &app,
        "/setup/callback?code=code-1&state=0123456789abcdef0123456789abcdef",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = get(&app, "/setup/callback?code=code-1").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(setup::load_stored_app(dir.path()).unwrap().is_none());
    assert!(
        !fake
            .request_log()
            .iter()
            .any(|r| r.path.contains("app-manifests")),
        "no exchange without a valid state"
    );

    let (status, body) = get(&app, &format!("/setup/callback?code=code-1&state={state}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("/apps/my-medic/installations/new"), "{body}");
    assert!(!body.contains("whsec-1") && !body.contains("PRIVATE KEY"));
    let conv: Vec<_> = fake
        .request_log()
        .into_iter()
        .filter(|r| r.path.contains("app-manifests"))
        .collect();
    assert_eq!(conv.len(), 1);
    assert_eq!(conv[0].method, "POST");
    assert_eq!(conv[0].path, "/app-manifests/code-1/conversions");

    let stored = setup::load_stored_app(dir.path()).unwrap().unwrap();
    assert_eq!(stored.app_id, 4242);
    assert_eq!(stored.slug, "my-medic");
    assert_eq!(stored.webhook_secret.expose_secret(), "whsec-1");
    assert_eq!(stored.private_key_pem.expose_secret(), KEY);
    // The OAuth pair the conversion returns is kept, for the status page's GitHub sign-in.
    assert!(
        stored
            .client_id
            .as_deref()
            .is_some_and(|c| c.starts_with("Iv1."))
    );
    assert_eq!(
        stored.client_secret.as_ref().map(|s| s.expose_secret()),
        Some("fake-client-secret")
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let d = setup::stored_app_dir(dir.path());
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&d), 0o700);
        let mut files = 0;
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            assert_eq!(mode(&p), 0o600, "{}", p.display());
            files += 1;
        }
        assert_eq!(
            files, 4,
            "app.json, private-key.pem, webhook-secret, client-secret; no temporaries"
        );
    }

    // Once the App exists, the flow is off: no new page, no second exchange.
    let (status, body) = get(&app, "/setup").await;
    assert_eq!(status, StatusCode::GONE);
    assert!(body.contains("my-medic"));
    assert!(!body.contains("name=\"manifest\""));
    fake.register_manifest_code(
        "code-2",
        json!({"id": 1, "pem": KEY, "webhook_secret": "x"}),
    );
    let (status, _) = get(&app, &format!("/setup/callback?code=code-2&state={state}")).await;
    assert_eq!(status, StatusCode::GONE);
    // A fresh router over the same data dir (a restart) is off too.
    drop(app);
    let (status, _) = get(&router(&fake, dir.path()), "/setup").await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(
        setup::load_stored_app(dir.path()).unwrap().unwrap().app_id,
        4242
    );
}

#[tokio::test]
async fn failed_exchanges_store_nothing_and_states_are_single_use() {
    let fake = FakeGitHub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = router(&fake, dir.path());

    // Unknown (or already used) code.
    let (_, page) = get(&app, "/setup").await;
    let state = state_of(&page);
    let (status, body) = get(&app, &format!("/setup/callback?code=nope&state={state}")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(body.contains("unknown, already used or expired"), "{body}");
    // The same state cannot be replayed, even with a good code.
    fake.register_manifest_code("good", json!({"pem": KEY, "webhook_secret": "w"}));
    let (status, _) = get(&app, &format!("/setup/callback?code=good&state={state}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // An App without a webhook secret is refused: ci-medic never accepts unsigned webhooks.
    let (_, page) = get(&app, "/setup").await;
    fake.register_manifest_code("nosecret", json!({"pem": KEY}));
    let (status, body) = get(
        &app,
        &format!("/setup/callback?code=nosecret&state={}", state_of(&page)),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(body.contains("no webhook secret"), "{body}");

    // A key that is not an RSA PEM is refused.
    let (_, page) = get(&app, "/setup").await;
    fake.register_manifest_code(
        "badkey",
        json!({"pem": "-----BEGIN NONSENSE-----", "webhook_secret": "w"}),
    );
    let (status, _) = get(
        &app,
        &format!("/setup/callback?code=badkey&state={}", state_of(&page)),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);

    // A code with path characters never reaches GitHub.
    let (_, page) = get(&app, "/setup").await;
    fake.clear_request_log();
    let (status, _) = get(
        &app,
        &format!("/setup/callback?code=..%2Fx&state={}", state_of(&page)),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(fake.request_log().is_empty());

    assert!(setup::load_stored_app(dir.path()).unwrap().is_none());
    assert!(!setup::stored_app_dir(dir.path()).join("app.json").exists());
}

#[tokio::test]
async fn organisation_and_derived_public_url() {
    let fake = FakeGitHub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = setup::routes(
        sled_shared(dir.path()),
        fake.base_url(),
        "https://github.com".into(),
        None,
    );
    let resp = app
        .clone()
        .oneshot(
            Request::get("/setup?org=acme")
                .header("host", "medic.internal:8443")
                .header("x-forwarded-proto", "https")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let page = String::from_utf8(
        resp.into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    assert!(page.contains("https://github.com/organizations/acme/settings/apps/new?state="));
    assert!(page.contains("https://medic.internal:8443/api/github/webhooks"));
    assert!(page.contains("PUBLIC_URL is not set"));
    let (status, _) = get(&app, "/setup?org=acme%2F..").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// Setup mode as `serve` runs it: health answers, readiness says not yet, and the server hands
/// back the created App so the service can start with it in the same process.
#[tokio::test]
async fn setup_mode_serves_until_the_app_exists() {
    let fake = FakeGitHub::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config = SetupConfig {
        host: "127.0.0.1".parse().unwrap(),
        port,
        github_api_url: fake.base_url(),
        github_web_url: fake.web_url(),
        public_url: Some(PUBLIC.into()),
    };
    let server = tokio::spawn(setup::serve_setup(
        config,
        sled_shared(dir.path()),
        std::future::pending(),
    ));
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let mut up = false;
    for _ in 0..200 {
        if http.get(format!("{base}/healthz")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(up, "setup server did not start");
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status().as_u16(), 503);
    // Webhooks are not accepted in setup mode.
    let hook = http
        .post(format!("{base}/api/github/webhooks"))
        .send()
        .await
        .unwrap();
    assert_eq!(hook.status().as_u16(), 404);

    let page = http
        .get(format!("{base}/setup"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    fake.register_manifest_code(
        "c",
        json!({"id": 77, "slug": "medic", "pem": KEY, "webhook_secret": "ws"}),
    );
    let done = http
        .get(format!(
            "{base}/setup/callback?code=c&state={}",
            state_of(&page)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status().as_u16(), 200);
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(10), server)
        .await
        .expect("setup mode ends once the App exists")
        .unwrap()
        .unwrap();
    match outcome {
        SetupOutcome::Created(app) => assert_eq!(app.app_id, 77),
        SetupOutcome::Stopped => panic!("expected the created App"),
    }
}
