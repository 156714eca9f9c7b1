//! Sign-in with GitHub on the fake, over real HTTP: the web flow's redirects and refusals with
//! GitHub's shapes, the user-token endpoints limited to what the user can access, and the GHES
//! layout (web pages at the root, the API under `/api/v3`).

mod common;

use common::client;
use fake_github::{FakeGitHub, Options, Permission};
use serde_json::Value;

const CALLBACK: &str = "https://medic.example/status/oauth/callback";

async fn code_for(fake: &FakeGitHub, login: &str) -> String {
    fake.sign_in_browser(Some(login));
    let r = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id=Iv1.app&redirect_uri={CALLBACK}&state=s1",
            fake.web_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap().to_string();
    assert!(to.starts_with(&format!("{CALLBACK}?code=")), "{to}");
    assert!(to.ends_with("&state=s1"), "{to}");
    to.split("code=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_string()
}

async fn exchange(fake: &FakeGitHub, secret: &str, code: &str) -> Value {
    let r = client()
        .post(format!("{}/login/oauth/access_token", fake.web_url()))
        .header("accept", "application/json")
        .form(&[
            ("client_id", "Iv1.app"),
            ("client_secret", secret),
            ("code", code),
            ("redirect_uri", CALLBACK),
        ])
        .send()
        .await
        .unwrap();
    // GitHub answers refusals with 200 too, the error in the body.
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

#[tokio::test]
async fn the_web_flow_and_the_user_token_endpoints_in_the_ghes_layout() {
    let fake = FakeGitHub::start_with(Options {
        base_path: "/api/v3".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    fake.add_repo("octo", "open", "main", &[("README.md", "x\n")]);
    fake.add_repo("octo", "closed", "main", &[("README.md", "y\n")]);
    fake.set_permission("octo/open", "mona", Permission::Triage)
        .unwrap();
    fake.set_oauth_client("Iv1.app", "app-secret", CALLBACK);

    // Nobody signed in: GitHub's sign-in page, no code.
    let r = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id=Iv1.app&state=s",
            fake.web_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // An unknown client or a foreign redirect_uri: refused.
    let r = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id=Iv1.nope",
            fake.web_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    fake.sign_in_browser(Some("mona"));
    let r = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id=Iv1.app&redirect_uri=https://evil.example/cb",
            fake.web_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // Wrong secret, unknown code, a code used twice.
    let code = code_for(&fake, "mona").await;
    let v = exchange(&fake, "wrong", &code).await;
    assert_eq!(v["error"], "incorrect_client_credentials");
    assert!(
        v["error_uri"]
            .as_str()
            .unwrap()
            .starts_with("https://docs.github.com/")
    );
    let v = exchange(&fake, "app-secret", "nonsense").await;
    assert_eq!(v["error"], "bad_verification_code");
    let v = exchange(&fake, "app-secret", &code).await;
    assert_eq!(v["token_type"], "bearer");
    let token = v["access_token"].as_str().unwrap().to_string();
    assert!(token.starts_with("ghu_"));
    assert!(v["expires_in"].is_number() && v["refresh_token"].is_string());
    let v = exchange(&fake, "app-secret", &code).await;
    assert_eq!(v["error"], "bad_verification_code", "codes are single-use");

    let api = fake.base_url();
    assert!(api.ends_with("/api/v3"));
    let get = |path: String, token: Option<String>| {
        let url = format!("{api}{path}");
        async move {
            let mut rq = client().get(url);
            if let Some(t) = token {
                rq = rq.bearer_auth(t);
            }
            let r = rq.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (s, v) = get("/user/installations".into(), None).await;
    assert_eq!((s, v["message"].as_str()), (401, Some("Bad credentials")));

    let (s, me) = get("/user".into(), Some(token.clone())).await;
    assert_eq!((s, me["login"].as_str()), (200, Some("mona")));
    let (s, v) = get(
        "/user/installations?per_page=100".into(),
        Some(token.clone()),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["total_count"], 1);
    let inst = &v["installations"][0];
    assert_eq!(inst["account"]["login"], "octo");
    let id = inst["id"].as_u64().unwrap();
    let (s, v) = get(
        format!("/user/installations/{id}/repositories"),
        Some(token.clone()),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["total_count"], 1, "only the repository mona can access");
    assert_eq!(v["repositories"][0]["full_name"], "octo/open");
    assert_eq!(v["repository_selection"], "all");
    let (s, _) = get(
        "/user/installations/999999/repositories".into(),
        Some(token),
    )
    .await;
    assert_eq!(s, 404);
}
