//! The status page (`/`, `/status/…`) and the operators' admin API (`/admin/…`), served by
//! `serve` beside the webhook.
//!
//! Off unless configured: with neither `STATUS_TOKEN` nor the App's OAuth credentials, `/`
//! says the page is disabled and how to enable it, and nothing else answers. Operators sign in
//! with the token (bearer header, or the form that sets a session cookie); GitHub users sign
//! in through OAuth and see only the repositories GitHub says they can access. Re-queueing a
//! parked job is a POST with the session's CSRF token, by an operator.
//!
//! Handlers are thin: [`data`] reads and filters the store, `ci_medic_core::status` computes
//! the figures and draws the chart, templates in `templates/status/` render the HTML (no
//! JavaScript anywhere). They must never show a repository name to a viewer who cannot see the
//! repository, and never run pipeline work.

pub mod auth;
pub mod data;
pub mod oauth;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use ci_medic_core::proposal::DdsStatus;
use ci_medic_core::status as figures;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::json;

use self::auth::{Role, Sessions, Viewer};
use self::data::ProposalRow;
pub use self::oauth::OAuthApp;
use crate::jobs::Queue;
use crate::store::{JobRecord, Requeue, Store};

/// Who may see the status page, and where GitHub is.
#[derive(Clone, Default)]
pub struct StatusConfig {
    /// `STATUS_TOKEN`: operators.
    pub token: Option<SecretString>,
    /// `GITHUB_CLIENT_ID` / `GITHUB_CLIENT_SECRET`: sign-in with GitHub.
    pub oauth: Option<OAuthApp>,
    pub github_api_url: String,
    /// GitHub's web origin: pull request links and the OAuth pages.
    pub github_web_url: String,
    /// Where browsers reach this server (the OAuth callback URL); from `Host` when unset.
    pub public_url: Option<String>,
    /// Where installations are recorded when not in the sled store (PostgreSQL, shared by the
    /// replicas); `None`: the sled store's.
    pub shared: Option<Arc<dyn crate::store::shared_state::SharedState>>,
}

impl StatusConfig {
    pub fn enabled(&self) -> bool {
        self.token.is_some() || self.oauth.is_some()
    }
}

/// The file in `DATA_DIR` where `serve` writes the address it listens on, for `ci-medic jobs`.
pub const ADDR_FILE: &str = "serve.addr";

/// Rows per page.
pub const PER_PAGE: usize = 50;
/// Rows of each list on the overview.
const OVERVIEW_ROWS: usize = 20;
/// Days the chart covers.
const CHART_DAYS: u32 = 30;

#[derive(Clone)]
struct St {
    cfg: Arc<StatusConfig>,
    store: Store,
    queue: Arc<Queue>,
    sessions: Sessions,
    templates: Arc<minijinja::Environment<'static>>,
    http: reqwest::Client,
}

/// `&`, `<`, `>`, `"` and `'` escaped: enough inside elements and quoted attributes. minijinja's
/// own HTML escaping also turns `/` into `&#x2f;`, which made every `owner/repo` on the page
/// unreadable to anyone reading the source or searching it.
fn escape_html(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn templates() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_formatter(|out, state, value| {
        if state.auto_escape() == minijinja::AutoEscape::Html && !value.is_safe() {
            if value.is_none() || value.is_undefined() {
                return Ok(());
            }
            if let Some(s) = value.as_str() {
                let mut e = String::with_capacity(s.len());
                escape_html(s, &mut e);
                return std::fmt::Write::write_str(out, &e).map_err(|_| {
                    minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "writing the page")
                });
            }
        }
        minijinja::escape_formatter(out, state, value)
    });
    // Names ending in .html are autoescaped: record text (log lines, errors, logins) is
    // always escaped.
    for (name, text) in [
        (
            "base.html",
            include_str!("../../templates/status/base.html"),
        ),
        (
            "disabled.html",
            include_str!("../../templates/status/disabled.html"),
        ),
        (
            "login.html",
            include_str!("../../templates/status/login.html"),
        ),
        (
            "macros.html",
            include_str!("../../templates/status/macros.html"),
        ),
        (
            "overview.html",
            include_str!("../../templates/status/overview.html"),
        ),
        (
            "proposals.html",
            include_str!("../../templates/status/proposals.html"),
        ),
        (
            "jobs.html",
            include_str!("../../templates/status/jobs.html"),
        ),
        (
            "message.html",
            include_str!("../../templates/status/message.html"),
        ),
    ] {
        env.add_template(name, text)
            .expect("the built-in templates parse (tests render each)");
    }
    env
}

/// The status page's and admin API's routes. Sessions are kept in `cfg.shared` (every
/// replica's), else in the sled store's trees.
pub fn router(
    cfg: StatusConfig,
    store: Store,
    queue: Arc<Queue>,
) -> Result<Router, crate::store::StoreError> {
    let shared: Arc<dyn crate::store::shared_state::SharedState> = match &cfg.shared {
        Some(s) => s.clone(),
        None => Arc::new(crate::store::shared_state::SledShared::open(&store)?),
    };
    let st = St {
        cfg: Arc::new(cfg),
        store,
        queue,
        sessions: Sessions::new(shared),
        templates: Arc::new(templates()),
        http: reqwest::Client::builder()
            .user_agent(concat!("ci-medic/", env!("CARGO_PKG_VERSION")))
            .timeout(std::time::Duration::from_secs(15))
            .build()
            .expect("HTTP client builds"),
    };
    Ok(Router::new()
        .route("/", get(overview))
        .route("/status/proposals", get(proposals))
        .route("/status/jobs", get(jobs_page))
        .route("/status/jobs/{id}/requeue", post(requeue_form))
        .route("/status/login", get(login_page).post(login))
        .route("/status/logout", post(logout))
        .route("/status/oauth/start", get(oauth_start))
        .route("/status/oauth/callback", get(oauth_callback))
        .route("/admin/jobs", get(admin_jobs))
        .route("/admin/jobs/retry", post(admin_retry))
        .with_state(st))
}

/// The pages run no script at all, so the policy forbids every script: an injection that got
/// past the escaping would still not run. No referrer either: the OAuth callback's URL holds
/// a one-time code.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn render(st: &St, name: &str, status: StatusCode, ctx: minijinja::Value) -> Response {
    match st.templates.get_template(name).and_then(|t| t.render(ctx)) {
        Ok(body) => html(status, body),
        Err(e) => {
            tracing::error!(template = name, error = %e, "status page template failed");
            html(
                StatusCode::INTERNAL_SERVER_ERROR,
                "<p>The page could not be rendered; see the server's log.</p>".into(),
            )
        }
    }
}

#[derive(Serialize)]
struct ViewerCtx {
    operator: bool,
    login: Option<String>,
}

fn viewer_ctx(v: &Viewer) -> ViewerCtx {
    match &v.role {
        Role::Operator => ViewerCtx {
            operator: true,
            login: None,
        },
        Role::User { login, .. } => ViewerCtx {
            operator: false,
            login: Some(login.clone()),
        },
    }
}

/// The viewer, or the page to show instead: "disabled" when nothing is configured, the sign-in
/// page (401) otherwise. Neither names a repository.
#[allow(clippy::result_large_err)]
async fn require_viewer(st: &St, headers: &HeaderMap) -> Result<Viewer, Response> {
    if !st.cfg.enabled() {
        return Err(disabled(st));
    }
    match auth::viewer(&st.sessions, st.cfg.token.as_ref(), headers).await {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(login_response(st, StatusCode::UNAUTHORIZED, None)),
        Err(e) => Err(sessions_unavailable(st, &e)),
    }
}

/// The store that keeps the sessions did not answer: said, never taken for "signed out".
fn sessions_unavailable(st: &St, e: &crate::store::StoreError) -> Response {
    tracing::error!(error = %e, "status page cannot read or write its sessions");
    login_response(
        st,
        StatusCode::SERVICE_UNAVAILABLE,
        Some("The store that keeps the sign-ins does not answer; try again shortly."),
    )
}

/// What every page answers while no access is configured: how to enable it, nothing else.
fn disabled(st: &St) -> Response {
    render(
        st,
        "disabled.html",
        StatusCode::NOT_FOUND,
        minijinja::context! {},
    )
}

fn login_response(st: &St, status: StatusCode, message: Option<&str>) -> Response {
    render(
        st,
        "login.html",
        status,
        minijinja::context! {
            oauth => st.cfg.oauth.is_some(),
            token => st.cfg.token.is_some(),
            message => message,
        },
    )
}

fn message(st: &St, v: Option<&Viewer>, status: StatusCode, heading: &str, msg: &str) -> Response {
    render(
        st,
        "message.html",
        status,
        minijinja::context! {
            viewer => v.map(viewer_ctx),
            csrf => v.and_then(|v| v.csrf.clone()),
            heading => heading,
            message => msg,
        },
    )
}

async fn load(st: &St, v: &Viewer) -> Result<data::Snapshot, Response> {
    let (store, role) = (st.store.clone(), v.role.clone());
    // The queue, the registry, the runs and the installations may live in PostgreSQL.
    let proposals = match st.queue.backend().fix_state() {
        Ok(state) => data::Proposals::read(&state).await,
        Err(e) => Err(e.into()),
    };
    let proposals = match proposals {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(error = %e, "status page cannot read the proposals");
            return Err(message(
                st,
                Some(v),
                StatusCode::SERVICE_UNAVAILABLE,
                "Store unavailable",
                "The database could not be read; see the server's log.",
            ));
        }
    };
    let jobs = if role.is_operator() {
        match st.queue.backend().jobs().await {
            Ok(j) => j,
            Err(e) => {
                tracing::error!(error = %e, "status page cannot read the job queue");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let installations = match &st.cfg.shared {
        None => None,
        Some(shared) => match shared.installations().await {
            Ok(i) => Some(i),
            Err(e) => {
                tracing::error!(error = %e, "status page cannot read the installations");
                Some(Vec::new())
            }
        },
    };
    match tokio::task::spawn_blocking(move || {
        data::snapshot(&store, &role, jobs, proposals, installations)
    })
    .await
    {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "status page cannot read the store");
            Err(message(
                st,
                Some(v),
                StatusCode::SERVICE_UNAVAILABLE,
                "Store unavailable",
                "The database could not be read; see the server's log.",
            ))
        }
        Err(_) => Err(message(
            st,
            Some(v),
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error",
            "Reading the store failed.",
        )),
    }
}

#[derive(Serialize)]
struct Row<'a> {
    id: &'a str,
    repo: &'a str,
    pr: Option<u64>,
    check: Option<&'a str>,
    status: &'static str,
    proposed_at: String,
}

fn stamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn rows<'a>(rs: impl IntoIterator<Item = &'a ProposalRow>) -> Vec<Row<'a>> {
    rs.into_iter()
        .map(|r| Row {
            id: &r.facts.id,
            repo: &r.facts.repo,
            pr: r.pr,
            check: r.check.as_deref(),
            status: r.facts.status.as_str(),
            proposed_at: stamp(r.facts.proposed_at),
        })
        .collect()
}

#[derive(Serialize)]
struct JobRow<'a> {
    id: u64,
    state: &'static str,
    attempts: u32,
    event: String,
    key: &'a str,
    since: String,
    last_error: Option<&'a str>,
}

fn job_rows<'a>(jobs: impl IntoIterator<Item = &'a JobRecord>) -> Vec<JobRow<'a>> {
    jobs.into_iter()
        .map(|j| JobRow {
            id: j.id,
            state: data::state_name(j.state),
            attempts: j.attempts,
            event: match &j.action {
                Some(a) => format!("{}.{a}", j.event),
                None => j.event.clone(),
            },
            key: &j.key,
            since: stamp(j.enqueued_at),
            last_error: j.last_error.as_deref(),
        })
        .collect()
}

/// Parked first (they need someone), then running, then queued; oldest first within each.
fn sorted_jobs(jobs: &[JobRecord]) -> Vec<&JobRecord> {
    let rank = |j: &JobRecord| match j.state {
        crate::store::JobState::Parked => 0,
        crate::store::JobState::Running => 1,
        crate::store::JobState::Queued => 2,
    };
    let mut v: Vec<&JobRecord> = jobs.iter().collect();
    v.sort_by_key(|j| (rank(j), j.id));
    v
}

#[derive(Deserialize)]
struct Notice {
    done: Option<String>,
}

async fn overview(State(st): State<St>, headers: HeaderMap, q: Query<Notice>) -> Response {
    let v = match require_viewer(&st, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let snap = match load(&st, &v).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let page = build_overview(&st, &v, &snap, q.done.as_deref());
    render(&st, "overview.html", StatusCode::OK, page)
}

fn build_overview(
    st: &St,
    v: &Viewer,
    snap: &data::Snapshot,
    done: Option<&str>,
) -> minijinja::Value {
    let facts: Vec<figures::ProposalFacts> =
        snap.proposals.iter().map(|p| p.facts.clone()).collect();
    let series = figures::daily_series(&snap.failures, &facts, Utc::now().date_naive(), CHART_DAYS);
    let stats: Vec<_> = figures::repo_stats(&facts)
        .into_iter()
        .map(|r| {
            json!({
                "repo": r.repo,
                "proposals": r.proposals,
                "fix_rate": match r.fix_rate {
                    Some(f) => format!("{:.0}% ({}/{})", f * 100.0, r.executed, r.approved),
                    None => "no approval yet".into(),
                },
                "to_proposal": r.median_failure_to_proposal.map(figures::human_duration).unwrap_or_else(|| "–".into()),
                "to_push": r.median_approve_to_push.map(figures::human_duration).unwrap_or_else(|| "–".into()),
            })
        })
        .collect();
    // Repositories known without a proposal yet are listed too.
    let mut stats = stats;
    for repo in &snap.repos {
        if !stats.iter().any(|s| s["repo"] == repo.as_str()) {
            stats.push(json!({"repo": repo, "proposals": 0, "fix_rate": "no approval yet", "to_proposal": "–", "to_push": "–"}));
        }
    }
    stats.sort_by(|a, b| a["repo"].as_str().cmp(&b["repo"].as_str()));
    let open: Vec<_> = [DdsStatus::Proposed, DdsStatus::Approved]
        .into_iter()
        .map(|s| {
            let all = data::with_status(&snap.proposals, Some(s));
            json!({
                "state": s.as_str(),
                "total": all.len(),
                "rows": rows(all.into_iter().take(OVERVIEW_ROWS)),
            })
        })
        .collect();
    let jobs = sorted_jobs(&snap.jobs);
    let notice = match done {
        Some("requeued") => Some("The job is queued again."),
        _ => None,
    };
    minijinja::context! {
        viewer => viewer_ctx(v),
        csrf => v.csrf.clone(),
        web => st.cfg.github_web_url.clone(),
        days => CHART_DAYS,
        chart => figures::svg_chart(&series),
        stats => stats,
        installations => snap.installations.clone(),
        open => open,
        verdicts => rows(data::recent_verdicts(&snap.proposals, OVERVIEW_ROWS)),
        job_counts => data::job_counts(&snap.jobs),
        jobs => job_rows(jobs.iter().take(OVERVIEW_ROWS).copied()),
        more_jobs => jobs.len() > OVERVIEW_ROWS,
        notice => notice,
    }
}

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
    page: Option<usize>,
}

async fn proposals(State(st): State<St>, headers: HeaderMap, q: Query<ListQuery>) -> Response {
    let v = match require_viewer(&st, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let state = match q.state.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match serde_json::from_value::<DdsStatus>(json!(s)) {
            Ok(s) => Some(s),
            Err(_) => {
                return message(
                    &st,
                    Some(&v),
                    StatusCode::BAD_REQUEST,
                    "Unknown state",
                    "state must be one of proposed, approved, executed, failed, rejected.",
                );
            }
        },
    };
    let snap = match load(&st, &v).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let all = data::with_status(&snap.proposals, state);
    let (page, info) = figures::paginate(&all, q.page.unwrap_or(1), PER_PAGE);
    let base = match state {
        Some(s) => format!("/status/proposals?state={}&", s.as_str()),
        None => "/status/proposals?".to_string(),
    };
    render(
        &st,
        "proposals.html",
        StatusCode::OK,
        minijinja::context! {
            viewer => viewer_ctx(&v),
            csrf => v.csrf.clone(),
            web => st.cfg.github_web_url.clone(),
            state => state.map(DdsStatus::as_str),
            states => ["proposed", "approved", "executed", "failed", "rejected"],
            rows => rows(page.iter().copied()),
            info => info,
            base => base,
        },
    )
}

fn operator_only(st: &St, v: &Viewer) -> Option<Response> {
    (!v.role.is_operator()).then(|| {
        message(
            st,
            Some(v),
            StatusCode::FORBIDDEN,
            "Operators only",
            "The job queue is shown to operators (STATUS_TOKEN) only.",
        )
    })
}

async fn jobs_page(State(st): State<St>, headers: HeaderMap, q: Query<ListQuery>) -> Response {
    let v = match require_viewer(&st, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if let Some(r) = operator_only(&st, &v) {
        return r;
    }
    let jobs = match st.queue.backend().jobs().await {
        Ok(j) => j,
        _ => {
            return message(
                &st,
                Some(&v),
                StatusCode::SERVICE_UNAVAILABLE,
                "Store unavailable",
                "The job queue could not be read; see the server's log.",
            );
        }
    };
    let sorted = sorted_jobs(&jobs);
    let (page, info) = figures::paginate(&sorted, q.page.unwrap_or(1), PER_PAGE);
    render(
        &st,
        "jobs.html",
        StatusCode::OK,
        minijinja::context! {
            viewer => viewer_ctx(&v),
            csrf => v.csrf.clone(),
            jobs => job_rows(page.iter().copied()),
            info => info,
        },
    )
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: Option<String>,
}

/// What re-queueing one job did, for people and for the admin API.
fn requeue_outcome(r: &Requeue) -> (&'static str, String) {
    match r {
        Requeue::Requeued => ("requeued", "queued again".into()),
        Requeue::Missing => ("missing", "no such job (finished jobs are deleted)".into()),
        Requeue::NotParked(s) => (
            "not_parked",
            format!("{}, not parked; left as it is", data::state_name(*s)),
        ),
    }
}

async fn requeue(st: &St, id: u64) -> Result<Requeue, crate::store::StoreError> {
    st.queue.requeue_parked(id).await
}

async fn requeue_form(
    State(st): State<St>,
    headers: HeaderMap,
    Path(id): Path<u64>,
    Form(form): Form<CsrfForm>,
) -> Response {
    let v = match require_viewer(&st, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if let Some(r) = operator_only(&st, &v) {
        return r;
    }
    if !auth::csrf_ok(&st.sessions, &v, form.csrf.as_deref()) {
        return message(
            &st,
            Some(&v),
            StatusCode::FORBIDDEN,
            "Refused",
            "The form's CSRF token is missing or wrong; reload the page and try again.",
        );
    }
    match requeue(&st, id).await {
        Ok(Requeue::Requeued) => {
            tracing::info!(job_id = id, "parked job queued again from the status page");
            (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/?done=requeued")],
            )
                .into_response()
        }
        Ok(other) => message(
            &st,
            Some(&v),
            StatusCode::CONFLICT,
            "Not re-queued",
            &format!("job {id}: {}", requeue_outcome(&other).1),
        ),
        Err(e) => {
            tracing::error!(error = %e, "re-queue failed");
            message(
                &st,
                Some(&v),
                StatusCode::SERVICE_UNAVAILABLE,
                "Not re-queued",
                "The store could not be written; see the server's log.",
            )
        }
    }
}

async fn login_page(State(st): State<St>, headers: HeaderMap) -> Response {
    if !st.cfg.enabled() {
        return require_viewer(&st, &headers)
            .await
            .err()
            .unwrap_or_else(|| html(StatusCode::NOT_FOUND, String::new()));
    }
    login_response(&st, StatusCode::OK, None)
}

#[derive(Deserialize)]
struct LoginForm {
    token: Option<String>,
}

async fn login(State(st): State<St>, Form(form): Form<LoginForm>) -> Response {
    if !st.cfg.enabled() {
        return disabled(&st);
    }
    let Some(token) = st.cfg.token.as_ref() else {
        return login_response(
            &st,
            StatusCode::FORBIDDEN,
            Some("Token sign-in is not configured (STATUS_TOKEN)."),
        );
    };
    let given = form.token.unwrap_or_default();
    use secrecy::ExposeSecret;
    if given.is_empty()
        || !st
            .sessions
            .secrets_equal(given.trim().as_bytes(), token.expose_secret().as_bytes())
    {
        tracing::warn!("status page sign-in with a wrong token refused");
        return login_response(&st, StatusCode::UNAUTHORIZED, Some("Wrong token."));
    }
    let cookie = match st.sessions.create(Role::Operator).await {
        Ok(c) => c,
        Err(e) => return sessions_unavailable(&st, &e),
    };
    (
        StatusCode::SEE_OTHER,
        [
            (
                header::SET_COOKIE,
                auth::set_cookie(auth::SESSION_COOKIE, &cookie, auth::SESSION_TTL),
            ),
            (header::LOCATION, "/".to_string()),
        ],
    )
        .into_response()
}

async fn logout(State(st): State<St>, headers: HeaderMap, Form(form): Form<CsrfForm>) -> Response {
    if let Ok(Some(v)) = auth::viewer(&st.sessions, st.cfg.token.as_ref(), &headers).await
        && auth::csrf_ok(&st.sessions, &v, form.csrf.as_deref())
        && let Some(c) = auth::cookie(&headers, auth::SESSION_COOKIE)
        && let Err(e) = st.sessions.remove(c).await
    {
        // The cookie is cleared below all the same; the session lapses at its expiry.
        return sessions_unavailable(&st, &e);
    }
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, auth::clear_cookie(auth::SESSION_COOKIE)),
            (header::LOCATION, "/status/login".to_string()),
        ],
    )
        .into_response()
}

fn callback_url(st: &St, headers: &HeaderMap) -> Option<String> {
    let base = match &st.cfg.public_url {
        Some(u) => u.clone(),
        None => crate::setup::url_from_headers(headers)?,
    };
    Some(format!("{base}/status/oauth/callback"))
}

async fn oauth_start(State(st): State<St>, headers: HeaderMap) -> Response {
    if !st.cfg.enabled() {
        return disabled(&st);
    }
    let Some(app) = st.cfg.oauth.as_ref() else {
        return login_response(
            &st,
            StatusCode::NOT_FOUND,
            Some("Sign-in with GitHub is not configured (GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET)."),
        );
    };
    let Some(redirect) = callback_url(&st, &headers) else {
        return login_response(
            &st,
            StatusCode::BAD_REQUEST,
            Some("Cannot tell this server's address: set PUBLIC_URL."),
        );
    };
    let state = match st.sessions.new_oauth_state().await {
        Ok(s) => s,
        Err(e) => return sessions_unavailable(&st, &e),
    };
    let to = oauth::authorize_url(&st.cfg.github_web_url, app, &redirect, &state);
    (
        StatusCode::SEE_OTHER,
        [
            (
                header::SET_COOKIE,
                auth::set_cookie(auth::OAUTH_COOKIE, &state, auth::OAUTH_STATE_TTL),
            ),
            (header::LOCATION, to),
        ],
    )
        .into_response()
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

async fn oauth_callback(
    State(st): State<St>,
    headers: HeaderMap,
    Query(q): Query<CallbackQuery>,
) -> Response {
    if !st.cfg.enabled() {
        return disabled(&st);
    }
    let Some(app) = st.cfg.oauth.clone() else {
        return login_response(
            &st,
            StatusCode::NOT_FOUND,
            Some("Sign-in with GitHub is not configured."),
        );
    };
    let fresh = match q.state.as_deref() {
        None => false,
        Some(s) => match st
            .sessions
            .take_oauth_state(s, auth::cookie(&headers, auth::OAUTH_COOKIE))
            .await
        {
            Ok(fresh) => fresh,
            Err(e) => return sessions_unavailable(&st, &e),
        },
    };
    if !fresh {
        return login_response(
            &st,
            StatusCode::BAD_REQUEST,
            Some("This sign-in was not started here, or it expired. Start again."),
        );
    }
    if let Some(e) = q.error.as_deref() {
        let msg = format!("GitHub did not sign you in ({e}).");
        return login_response(&st, StatusCode::UNAUTHORIZED, Some(&msg));
    }
    let Some(code) = q.code.filter(|c| {
        !c.is_empty()
            && c.len() <= 128
            && c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }) else {
        return login_response(
            &st,
            StatusCode::BAD_REQUEST,
            Some("GitHub returned no valid code."),
        );
    };
    let Some(redirect) = callback_url(&st, &headers) else {
        return login_response(
            &st,
            StatusCode::BAD_REQUEST,
            Some("Cannot tell this server's address: set PUBLIC_URL."),
        );
    };
    match oauth::sign_in(
        &st.http,
        &st.cfg.github_web_url,
        &st.cfg.github_api_url,
        &app,
        &code,
        &redirect,
    )
    .await
    {
        Ok(who) => {
            tracing::info!(login = %who.login, repositories = who.repos.len(), "signed in to the status page with GitHub");
            let cookie = match st
                .sessions
                .create(Role::User {
                    login: who.login,
                    repos: who.repos,
                })
                .await
            {
                Ok(c) => c,
                Err(e) => return sessions_unavailable(&st, &e),
            };
            let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
            let h = resp.headers_mut();
            for c in [
                auth::set_cookie(auth::SESSION_COOKIE, &cookie, auth::SESSION_TTL),
                auth::clear_cookie(auth::OAUTH_COOKIE),
            ] {
                if let Ok(v) = c.parse() {
                    h.append(header::SET_COOKIE, v);
                }
            }
            resp
        }
        Err(e) => {
            tracing::warn!(error = %e, "sign-in with GitHub failed");
            login_response(&st, StatusCode::BAD_GATEWAY, Some(&e.to_string()))
        }
    }
}

// ----- the admin API (JSON, operators only) --------------------------------------------------

fn api_error(status: StatusCode, msg: &str) -> Response {
    (status, axum::Json(json!({ "message": msg }))).into_response()
}

/// An operator presenting `STATUS_TOKEN` as a bearer header; sessions are for browsers.
#[allow(clippy::result_large_err)]
fn admin(st: &St, headers: &HeaderMap) -> Result<(), Response> {
    if st.cfg.token.is_none() {
        return Err(api_error(
            StatusCode::NOT_FOUND,
            "the admin API is disabled: start `ci-medic serve` with STATUS_TOKEN set",
        ));
    }
    if !headers.contains_key(header::AUTHORIZATION) {
        return Err(api_error(
            StatusCode::UNAUTHORIZED,
            "send the operator token as `Authorization: Bearer STATUS_TOKEN`",
        ));
    }
    match auth::bearer(&st.sessions, st.cfg.token.as_ref(), headers) {
        Some(Some(v)) if v.role.is_operator() && v.csrf.is_none() => Ok(()),
        _ => Err(api_error(StatusCode::UNAUTHORIZED, "wrong token")),
    }
}

async fn admin_jobs(State(st): State<St>, headers: HeaderMap) -> Response {
    if let Err(r) = admin(&st, &headers) {
        return r;
    }
    match st.queue.backend().jobs().await {
        Ok(jobs) => axum::Json(json!({ "jobs": jobs })).into_response(),
        _ => api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the job queue could not be read",
        ),
    }
}

/// `POST /admin/jobs/retry`: `{"ids": [..]}` or `{"parked": true}`.
#[derive(Deserialize)]
pub struct RetryRequest {
    #[serde(default)]
    pub ids: Vec<u64>,
    #[serde(default)]
    pub parked: bool,
}

async fn admin_retry(
    State(st): State<St>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(r) = admin(&st, &headers) {
        return r;
    }
    let req: RetryRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return api_error(
                StatusCode::BAD_REQUEST,
                &format!("expected {{\"ids\": [..]}} or {{\"parked\": true}}: {e}"),
            );
        }
    };
    let ids = if req.parked {
        match st.queue.backend().jobs().await {
            Ok(jobs) => jobs
                .into_iter()
                .filter(|j| j.state == crate::store::JobState::Parked)
                .map(|j| j.id)
                .collect(),
            _ => {
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the job queue could not be read",
                );
            }
        }
    } else {
        req.ids
    };
    let mut results = Vec::new();
    for id in ids {
        match requeue(&st, id).await {
            Ok(r) => {
                let (outcome, message) = requeue_outcome(&r);
                results.push(json!({"id": id, "outcome": outcome, "message": message}));
            }
            Err(e) => {
                tracing::error!(error = %e, "re-queue failed");
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the store could not be written",
                );
            }
        }
    }
    axum::Json(json!({ "results": results })).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn record_text_is_escaped_and_none_is_empty() {
        let env = super::templates();
        let t = env
            .template_from_named_str("t.html", "<p title=\"{{ a }}\">{{ a }}|{{ b }}|{{ c }}</p>")
            .unwrap();
        let out = t
            .render(
                minijinja::context! { a => "o/r <script>\"x\" & 'y'", b => None::<String>, c => 3 },
            )
            .unwrap();
        assert_eq!(
            out,
            "<p title=\"o/r &lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;\">o/r &lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;||3</p>"
        );
    }

    #[test]
    fn every_template_parses() {
        let env = super::templates();
        for name in [
            "base.html",
            "disabled.html",
            "login.html",
            "overview.html",
            "proposals.html",
            "jobs.html",
            "message.html",
        ] {
            assert!(env.get_template(name).is_ok(), "{name}");
        }
    }
}
