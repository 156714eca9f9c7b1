//! The status page and admin API on a real sled store: who may see what (nothing configured,
//! no credentials, a wrong token, the token form's session, CSRF, a GitHub user who sees only
//! their repositories through the fake GitHub's OAuth flow), re-queueing, and the render time
//! and size of the overview with 10,000 proposals (printed, never asserted).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, Duration, TimeZone, Utc};
use ci_medic::jobs::{Queue, RetryPolicy};
use ci_medic::metrics::Metrics;
use ci_medic::proposal::machine::{Proposal, RunState, Stage};
use ci_medic::proposal::{CheckRef, DdsStatus, FailedCheck, build_fix_packet};
use ci_medic::repo_config::ConstraintsConfig;
use ci_medic::status::{OAuthApp, StatusConfig};
use ci_medic::store::proposals::Proposals;
use ci_medic::store::runs::{FixRun, RunStore};
use ci_medic::store::{Accepted, DeliveryRecord, JobState, NewJob, Store};
use ci_medic_parser::{BugReport, BugType};
use secrecy::SecretString;
use tower::ServiceExt;

const TOKEN: &str = "operator-token-0123456789";
const SHOP: &str = "octo-org/shop";
const SECRET_REPO: &str = "octo-org/secret-plans";
const WEB: &str = "https://github.example";

fn report(file: &str) -> BugReport {
    BugReport {
        file_path: file.into(),
        line_number: 1,
        error_type: BugType::Linting,
        message: "`os` imported but unused".into(),
        test_name: None,
        confidence_score: 0.95,
        column: Some(8),
        tool: Some("ruff".into()),
        rule: Some("F401".into()),
    }
}

/// Records a failed check and its proposal in `repo`, `minutes` after `failed_at`, and the
/// run linking it to pull request `pr`. Returns the proposal's id.
async fn propose(
    store: &Store,
    repo: &str,
    pr: u64,
    sha: &str,
    failed_at: DateTime<Utc>,
    minutes: i64,
    with_run: bool,
) -> String {
    let reg = store.registry().unwrap();
    let cfg = ConstraintsConfig::default();
    let check = FailedCheck {
        project: repo.into(),
        check_name: "lint".into(),
        head_sha: sha.into(),
        pr_number: Some(pr),
        changed_files: vec!["app/main.py".into()],
        failed_at,
    };
    let failed = reg.record_failure(&check, &cfg, store).await.unwrap();
    let reports = vec![report("app/main.py")];
    let p = reg
        .propose_fix(
            &failed.id,
            &reports,
            &cfg,
            failed_at + Duration::minutes(minutes),
            store,
        )
        .await
        .unwrap();
    if with_run {
        let mut state = RunState::new("lint", pr, sha);
        state.stage = Stage::Proposed;
        state.proposal = Some(Proposal {
            dds: p.dds.clone(),
            fix_packet: build_fix_packet(
                &CheckRef {
                    check_name: "lint".into(),
                    head_sha: sha.into(),
                },
                &reports,
                &cfg,
            ),
            report_lines: vec![],
            out_of_scope: vec![],
            reports_left_out: 0,
        });
        RunStore::open(store)
            .unwrap()
            .put(&mut FixRun {
                repo: repo.into(),
                pr_number: pr,
                check_name: "lint".into(),
                installation_id: 7,
                comment_id: None,
                comment_url: None,
                check_run_id: None,
                check_run_sha: None,
                state,
                reports,
                pending_commit: None,
                push_target: None,
                read_from: None,
                pushed_at: None,
                previous_attempt: None,
                creations: None,
                unpublished: false,
                updated_at: Utc::now(),
                version: 0,
            })
            .unwrap();
    }
    p.dds.id
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    queue: Arc<Queue>,
    parked: u64,
    shop_fix: String,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let now = Utc::now();
    let shop_fix = propose(&store, SHOP, 7, "a1", now - Duration::hours(3), 2, true).await;
    // Approved, pushed and executed: the fix rate and both medians have something to say.
    let reg = store.registry().unwrap();
    reg.transition(
        &shop_fix,
        DdsStatus::Proposed,
        DdsStatus::Approved,
        "maintainer",
        now - Duration::hours(2),
        "/approve",
    )
    .unwrap();
    reg.record_push(&shop_fix, now - Duration::hours(2) + Duration::minutes(4))
        .unwrap();
    reg.transition(
        &shop_fix,
        DdsStatus::Approved,
        DdsStatus::Executed,
        "ci-medic",
        now - Duration::hours(1),
        "check passed",
    )
    .unwrap();
    propose(&store, SHOP, 8, "b2", now - Duration::hours(2), 1, true).await;
    propose(
        &store,
        SECRET_REPO,
        3,
        "c3",
        now - Duration::hours(1),
        1,
        true,
    )
    .await;
    store
        .installations()
        .unwrap()
        .apply(
            7,
            Some("octo-org"),
            false,
            &[SHOP.to_string(), SECRET_REPO.to_string()],
            &[],
        )
        .unwrap();
    let record = DeliveryRecord {
        id: "d-parked".into(),
        event: "check_run".into(),
        action: Some("completed".into()),
        received_at: now,
        queued: true,
    };
    let Accepted::New {
        job_id: Some(parked),
    } = store
        .accept_delivery(
            &record,
            b"{}",
            Some(NewJob::delivery(format!("{SECRET_REPO}#3"))),
        )
        .unwrap()
    else {
        panic!("new delivery")
    };
    let mut job = store.job(parked).unwrap().unwrap();
    job.state = JobState::Parked;
    job.attempts = 6;
    job.last_error = Some("reading the pull request: GitHub answered <502>".into());
    store.put_job(&job).unwrap();
    let queue = Queue::load(
        std::sync::Arc::new(store.clone()),
        Metrics::new(),
        RetryPolicy::default(),
    )
    .await
    .unwrap();
    Setup {
        _dir: dir,
        store,
        queue,
        parked,
        shop_fix,
    }
}

fn config(token: bool, oauth: Option<(&str, &str)>) -> StatusConfig {
    StatusConfig {
        token: token.then(|| SecretString::from(TOKEN.to_string())),
        oauth: oauth.map(|(web, _)| {
            let _ = web;
            OAuthApp {
                client_id: "Iv1.status".into(),
                client_secret: SecretString::from("oauth-secret".to_string()),
            }
        }),
        github_api_url: oauth.map(|(_, api)| api.to_string()).unwrap_or_default(),
        github_web_url: oauth
            .map(|(web, _)| web.to_string())
            .unwrap_or_else(|| WEB.to_string()),
        public_url: None,
        shared: None,
    }
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

async fn call(app: &axum::Router, req: Request<Body>) -> Answer {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn get(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::get(path).header(header::HOST, "status.test");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::empty()).unwrap()
}

fn post_form(path: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut b = Request::post(path)
        .header(header::HOST, "status.test")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

fn no_repository_named(a: &Answer) {
    for name in [SHOP, SECRET_REPO, "octo-org"] {
        assert!(!a.body.contains(name), "{name} shown: {}", a.body);
    }
}

fn session_cookie(a: &Answer) -> String {
    let set = a
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("ci_medic_session="))
        .expect("a session cookie");
    set.split(';').next().unwrap().to_string()
}

fn csrf_of(body: &str) -> String {
    let at = body.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    body[at..at + 32].to_string()
}

#[tokio::test]
async fn with_nothing_configured_the_page_says_it_is_disabled_and_names_no_repository() {
    let s = setup().await;
    let app = ci_medic::status::router(StatusConfig::default(), s.store.clone(), s.queue.clone())
        .unwrap();
    for path in ["/", "/status/proposals", "/status/jobs", "/status/login"] {
        let a = call(&app, get(path, &[])).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}");
        assert!(a.body.contains("status page is disabled"), "{path}");
        assert!(a.body.contains("STATUS_TOKEN"), "says how to enable it");
        no_repository_named(&a);
    }
    let a = call(
        &app,
        get(
            "/admin/jobs",
            &[("authorization", &format!("Bearer {TOKEN}"))],
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.body.contains("STATUS_TOKEN"));
}

#[tokio::test]
async fn refusals_without_credentials_with_a_wrong_token_and_without_csrf() {
    let s = setup().await;
    let app =
        ci_medic::status::router(config(true, None), s.store.clone(), s.queue.clone()).unwrap();

    // No credentials, a wrong bearer, a forged cookie: the sign-in page, no repository.
    for headers in [
        vec![],
        vec![("authorization", "Bearer operator-token-012345678")],
        vec![("authorization", "Bearer operator-token-0123456789x")],
        vec![("cookie", "ci_medic_session=0123.abcd")],
    ] {
        for path in ["/", "/status/proposals", "/status/jobs"] {
            let a = call(&app, get(path, &headers)).await;
            assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{path} {headers:?}");
            assert!(a.body.contains("token-form"));
            no_repository_named(&a);
        }
    }
    let a = call(&app, get("/admin/jobs", &[])).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let a = call(
        &app,
        get("/admin/jobs", &[("authorization", "Bearer nope")]),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(!a.body.contains(SECRET_REPO));

    // The form with a wrong token: refused, no cookie.
    let a = call(
        &app,
        post_form("/status/login", &[], "token=wrong-token-0123456789"),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(a.headers.get(header::SET_COOKIE).is_none());

    // The right token: a secure, HTTP-only, same-site session cookie that is not the token.
    let a = call(
        &app,
        post_form("/status/login", &[], &format!("token={TOKEN}")),
    )
    .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    let set = a.headers.get(header::SET_COOKIE).unwrap().to_str().unwrap();
    for attr in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(attr), "{attr} missing from {set}");
    }
    assert!(!set.contains(TOKEN));
    let cookie = session_cookie(&a);
    let a = call(&app, get("/", &[("cookie", &cookie)])).await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.body.contains(SECRET_REPO), "an operator sees everything");
    let csrf = csrf_of(&a.body);

    // Re-queue: without the CSRF token, with a wrong one — refused, the job stays parked.
    let path = format!("/status/jobs/{}/requeue", s.parked);
    for body in [
        String::new(),
        "csrf=".to_string(),
        format!("csrf={}", "0".repeat(32)),
    ] {
        let a = call(&app, post_form(&path, &[("cookie", &cookie)], &body)).await;
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{body:?}");
        assert_eq!(
            s.store.job(s.parked).unwrap().unwrap().state,
            JobState::Parked
        );
    }
    // Without any session: the sign-in page.
    let a = call(&app, post_form(&path, &[], &format!("csrf={csrf}"))).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        s.store.job(s.parked).unwrap().unwrap().state,
        JobState::Parked
    );

    // With it: queued again, and handed to the running queue.
    let before = s.queue.depth();
    let a = call(
        &app,
        post_form(&path, &[("cookie", &cookie)], &format!("csrf={csrf}")),
    )
    .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let job = s.store.job(s.parked).unwrap().unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Queued, 0));
    assert_eq!(s.queue.depth(), before + 1);
    // Again: not parked any more.
    let a = call(
        &app,
        post_form(&path, &[("cookie", &cookie)], &format!("csrf={csrf}")),
    )
    .await;
    assert_eq!(a.status, StatusCode::CONFLICT);
    assert!(a.body.contains("not parked"));

    // Signing out ends the session.
    let a = call(
        &app,
        post_form(
            "/status/logout",
            &[("cookie", &cookie)],
            &format!("csrf={csrf}"),
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    let a = call(&app, get("/", &[("cookie", &cookie)])).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_operator_sees_proposals_pull_requests_figures_the_chart_and_the_queue() {
    let s = setup().await;
    let app =
        ci_medic::status::router(config(true, None), s.store.clone(), s.queue.clone()).unwrap();
    let bearer = format!("Bearer {TOKEN}");
    let a = call(&app, get("/", &[("authorization", &bearer)])).await;
    assert_eq!(a.status, StatusCode::OK);
    let csp = a.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'"),
        "no script may run: {csp}"
    );
    assert!(!a.body.contains("<script"));
    let b = &a.body;
    assert!(
        b.contains("<svg") && b.contains("id=\"chart\""),
        "chart: {b}"
    );
    assert!(
        b.contains(&format!("href=\"{WEB}/{SHOP}/pull/8\"")),
        "PR link: {b}"
    );
    assert!(
        b.contains(&format!("data-id=\"{}\"", s.shop_fix)),
        "verdict row"
    );
    // One executed of one approved; 2 min failure → proposal (median of 2 and 1 min: 1m 30s);
    // 4 min from /approve to the push.
    assert!(b.contains("100% (1/1)"), "{b}");
    assert!(b.contains("1m 30s"), "{b}");
    assert!(b.contains("4m 00s"), "{b}");
    // The parked job with its (escaped) last error and a re-queue button.
    assert!(b.contains("GitHub answered &lt;502&gt;"), "escaped error");
    assert!(b.contains("class=\"requeue\""));
    assert!(b.contains("1 parked"));

    let a = call(
        &app,
        get(
            "/status/proposals?state=proposed",
            &[("authorization", &bearer)],
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.body.matches("class=\"proposal-row\"").count(), 2);
    let a = call(
        &app,
        get(
            "/status/proposals?state=bogus",
            &[("authorization", &bearer)],
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);

    // The admin API: JSON, bearer only.
    let a = call(&app, get("/admin/jobs", &[("authorization", &bearer)])).await;
    assert_eq!(a.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(v["jobs"][0]["state"], "parked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_github_user_sees_only_the_repositories_they_can_access() {
    let s = setup().await;
    let fake = fake_github::FakeGitHub::start().await.unwrap();
    fake.add_repo("octo-org", "shop", "main", &[("README.md", "# shop\n")]);
    fake.add_repo(
        "octo-org",
        "secret-plans",
        "main",
        &[("README.md", "# no\n")],
    );
    fake.set_permission(SHOP, "mona", fake_github::Permission::Read)
        .unwrap();
    fake.set_permission(SECRET_REPO, "mona", fake_github::Permission::None)
        .unwrap();
    fake.set_oauth_client(
        "Iv1.status",
        "oauth-secret",
        "http://status.test/status/oauth/callback",
    );
    let (web, api) = (fake.web_url(), fake.base_url());
    let app = ci_medic::status::router(
        config(false, Some((&web, &api))),
        s.store.clone(),
        s.queue.clone(),
    )
    .unwrap();

    let a = call(&app, get("/", &[])).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(a.body.contains("Sign in with GitHub"));
    no_repository_named(&a);

    // The OAuth web flow, the browser's steps done by hand.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let sign_in = |who: Option<&'static str>| {
        let (app, http, fake) = (app.clone(), http.clone(), &fake);
        async move {
            fake.sign_in_browser(who);
            let a = call(&app, get("/status/oauth/start", &[])).await;
            assert_eq!(a.status, StatusCode::SEE_OTHER);
            let to = a.headers[header::LOCATION].to_str().unwrap().to_string();
            assert!(
                to.starts_with(&format!(
                    "{}/login/oauth/authorize?client_id=Iv1.status",
                    fake.web_url()
                )),
                "{to}"
            );
            let state_cookie = a.headers[header::SET_COOKIE].to_str().unwrap();
            let state_cookie = state_cookie.split(';').next().unwrap().to_string();
            let r = http.get(&to).send().await.unwrap();
            (r, state_cookie, app)
        }
    };

    // Not signed in on GitHub: GitHub shows its sign-in form, no code comes back.
    let (r, _, _) = sign_in(None).await;
    assert_eq!(r.status(), 200);

    let (r, state_cookie, app) = sign_in(Some("mona")).await;
    assert_eq!(r.status(), 302);
    let back = r.headers()["location"].to_str().unwrap().to_string();
    let path = back.strip_prefix("http://status.test").unwrap().to_string();

    // The callback without the browser's state cookie (another browser): refused.
    let a = call(&app, get(&path, &[])).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    // The state was consumed: a second try with the cookie is refused too.
    let a = call(&app, get(&path, &[("cookie", &state_cookie)])).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);

    let (r, state_cookie, app) = sign_in(Some("mona")).await;
    let back = r.headers()["location"].to_str().unwrap().to_string();
    let path = back.strip_prefix("http://status.test").unwrap().to_string();
    let a = call(&app, get(&path, &[("cookie", &state_cookie)])).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let cookie = session_cookie(&a);

    let a = call(&app, get("/", &[("cookie", &cookie)])).await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.body.contains("signed in as mona"));
    assert!(a.body.contains(SHOP));
    assert!(
        !a.body.contains(SECRET_REPO),
        "a repository mona cannot access is named: {}",
        a.body
    );
    // Nor its job (its key names it), nor the queue at all.
    assert!(!a.body.contains("class=\"requeue\""));
    let a = call(&app, get("/status/proposals", &[("cookie", &cookie)])).await;
    assert_eq!(a.body.matches("class=\"proposal-row\"").count(), 2);
    assert!(!a.body.contains(SECRET_REPO));
    let a = call(&app, get("/status/jobs", &[("cookie", &cookie)])).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert!(!a.body.contains(SECRET_REPO));
    // A user may not re-queue, CSRF token or not.
    let csrf = csrf_of(&call(&app, get("/", &[("cookie", &cookie)])).await.body);
    let a = call(
        &app,
        post_form(
            &format!("/status/jobs/{}/requeue", s.parked),
            &[("cookie", &cookie)],
            &format!("csrf={csrf}"),
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert_eq!(
        s.store.job(s.parked).unwrap().unwrap().state,
        JobState::Parked
    );
    // What the fake was asked: the user-token endpoints, with the real shapes.
    let asked: Vec<String> = fake.request_log().into_iter().map(|r| r.path).collect();
    assert!(
        asked.iter().any(|p| p.starts_with("/user/installations?")),
        "{asked:?}"
    );
    assert!(
        asked.iter().any(|p| p.contains("/repositories?")),
        "{asked:?}"
    );
}

/// Not a timed assertion: prints how long the overview takes and how big it is with 10,000
/// proposals (and 10,000 failed checks) in the store, and checks it is paginated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_proposals_render_time_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let filled = Instant::now();
    let start = Utc.with_ymd_and_hms(2026, 1, 1, 8, 0, 0).unwrap();
    let n: u32 = 10_000;
    for i in 0..n {
        // 500 a day keeps every day under the 999 ids a day allows.
        let failed_at = start + Duration::minutes(i64::from(i) * 24 * 60 / 500);
        propose(
            &store,
            &format!("octo-org/repo-{}", i % 20),
            u64::from(i),
            &format!("{i:040x}"),
            failed_at,
            2,
            false,
        )
        .await;
    }
    let fill = filled.elapsed();
    let queue = Queue::load(
        std::sync::Arc::new(store.clone()),
        Metrics::new(),
        RetryPolicy::default(),
    )
    .await
    .unwrap();
    let app = ci_medic::status::router(config(true, None), store.clone(), queue).unwrap();
    let bearer = format!("Bearer {TOKEN}");
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let a = call(&app, get("/", &[("authorization", &bearer)])).await;
        times.push(t.elapsed());
        assert_eq!(a.status, StatusCode::OK);
        assert!(
            a.body.contains(&format!("all {n}")),
            "the open list links to the rest"
        );
        size = a.body.len();
    }
    let t = Instant::now();
    let a = call(
        &app,
        get("/status/proposals?page=200", &[("authorization", &bearer)]),
    )
    .await;
    let page_time = t.elapsed();
    assert!(a.body.contains("Page 200 of 200"));
    assert_eq!(a.body.matches("class=\"proposal-row\"").count(), 50);
    println!(
        "status page with {n} proposals: overview {:?} (runs: {times:?}), {size} bytes; proposals page 200: {page_time:?}, {} bytes; store filled in {fill:?}",
        times.iter().min().unwrap(),
        a.body.len()
    );
}
