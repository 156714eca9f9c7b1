//! The HTTP side of the fake: one axum fallback handler that authenticates, applies injected
//! faults, routes by path segments (so `contents/{path}` and `git/ref/{ref}` may contain slashes and
//! an optional GHES base path works), answers from the model in `state.rs`, records every request,
//! and adds GitHub's rate-limit headers.
//!
//! It must never hold the state lock across an `.await`, and never follows redirects itself.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};

use crate::git::{self, Commit, FlatTree};
use crate::json as j;
use crate::state::{CheckRun, IssueComment, Push, Reaction, RequestRecord, State};

const DOCS: &str = "https://docs.github.com/rest";
/// Largest comment body GitHub accepts, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;
/// Most annotations one create/update request may carry.
pub const MAX_ANNOTATIONS_PER_REQUEST: usize = 50;

pub struct Shared {
    pub state: Mutex<State>,
    pub base_path: String,
    pub http: reqwest::Client,
}

/// A response being built while the lock is held.
pub struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) content_type: &'static str,
}

impl Resp {
    pub(crate) fn json(status: u16, v: Value) -> Self {
        Resp {
            status,
            headers: vec![],
            body: serde_json::to_vec(&v).unwrap_or_default(),
            content_type: "application/json; charset=utf-8",
        }
    }
    fn empty(status: u16) -> Self {
        Resp {
            status,
            headers: vec![],
            body: vec![],
            content_type: "text/html;charset=utf-8",
        }
    }
    pub(crate) fn redirect(location: String) -> Self {
        let mut r = Resp::empty(302);
        r.headers.push(("location".into(), location));
        r
    }
    pub(crate) fn header(mut self, k: &str, v: String) -> Self {
        self.headers.push((k.into(), v));
        self
    }
}

pub fn error(status: u16, message: &str) -> Resp {
    Resp::json(
        status,
        json!({"message": message, "documentation_url": DOCS, "status": status.to_string()}),
    )
}

/// A re-run's answer: `201 Created` with its body, or GitHub's error.
fn actions_answer(r: Result<Value, crate::actions::Refusal>) -> Resp {
    match r {
        Ok(v) => Resp::json(201, v),
        Err((status, message)) => error(status, message),
    }
}

fn not_found() -> Resp {
    error(404, "Not Found")
}

fn bad_credentials() -> Resp {
    error(401, "Bad credentials")
}

fn validation(
    message: &str,
    resource: &str,
    field: &str,
    code: &str,
    detail: Option<&str>,
) -> Resp {
    let mut e = json!({"resource": resource, "field": field, "code": code});
    if let Some(d) = detail {
        e["message"] = json!(d);
    }
    Resp::json(
        422,
        json!({"message": message, "errors": [e], "documentation_url": DOCS, "status": "422"}),
    )
}

fn unprocessable(message: &str) -> Resp {
    error(422, message)
}

use crate::oauth;

enum Auth {
    None,
    /// Claims and the raw token.
    Jwt(Value, String),
    Token(String),
    Malformed,
}

fn parse_auth(h: Option<&HeaderValue>) -> Auth {
    let Some(v) = h.and_then(|v| v.to_str().ok()) else {
        return Auth::None;
    };
    let cred = v
        .strip_prefix("token ")
        .or_else(|| v.strip_prefix("Bearer "))
        .or_else(|| v.strip_prefix("bearer "))
        .map(str::trim);
    let Some(cred) = cred else {
        return Auth::Malformed;
    };
    let parts: Vec<&str> = cred.split('.').collect();
    if parts.len() == 3 {
        let dec = |s: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s.trim_end_matches('='))
                .ok()
        };
        let header: Option<Value> = dec(parts[0]).and_then(|b| serde_json::from_slice(&b).ok());
        let claims: Option<Value> = dec(parts[1]).and_then(|b| serde_json::from_slice(&b).ok());
        if let (Some(_), Some(c)) = (header, claims) {
            return Auth::Jwt(c, cred.to_string());
        }
    }
    Auth::Token(cred.to_string())
}

/// Decodes `%XX` escapes; anything that is not one (a lone `%`, `%zz`, `%a` before a
/// multi-byte character) stays as it is, and bytes that are not UTF-8 become U+FFFD.
fn pct_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn parse_query(q: Option<&str>) -> BTreeMap<String, String> {
    q.unwrap_or_default()
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (
                pct_decode(&k.replace('+', " ")),
                pct_decode(&v.replace('+', " ")),
            )
        })
        .collect()
}

fn qs_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub async fn handle(AxState(sh): AxState<Arc<Shared>>, req: Request) -> Response {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let headers = req.headers().clone();
    let body = axum::body::to_bytes(req.into_body(), 200 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let auth_header = headers.get(header::AUTHORIZATION);
    let had_auth = auth_header.is_some();
    let raw_path = uri.path().to_string();

    let mut held = None;
    let (resp, pushes, rate) = {
        let mut st = match sh.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let rel = if raw_path.starts_with("/_")
            || raw_path.starts_with("/login/oauth/")
            || sh.base_path.is_empty()
        {
            raw_path.clone()
        } else {
            match raw_path.strip_prefix(&sh.base_path) {
                Some(r) if r.is_empty() || r.starts_with('/') => r.to_string(),
                _ => String::new(),
            }
        };
        let rel_with_query = match uri.query() {
            Some(q) => format!("{rel}?{q}"),
            None => rel.clone(),
        };
        let mut pushes = Vec::new();
        let resp = if rel.is_empty() {
            not_found()
        } else if let Some(fault) = take_fault(&mut st, method.as_str(), &rel, false) {
            fault
        } else {
            let segs: Vec<String> = rel.trim_matches('/').split('/').map(pct_decode).collect();
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            let query = parse_query(uri.query());
            let ctx = Ctx {
                method: &method,
                segs: &segs,
                query: &query,
                body: &body,
                auth: parse_auth(auth_header),
                had_auth,
                rel: &rel,
            };
            let handled = route(&mut st, &ctx, &mut pushes);
            held = crate::hold::take(&mut st, method.as_str(), &rel);
            take_fault(&mut st, method.as_str(), &rel, true).unwrap_or(handled)
        };
        let mut resp = resp;
        let mut not_modified = false;
        if method == Method::GET && resp.status == 200 {
            let tag = crate::conditional::etag(&resp.body);
            not_modified = headers
                .get(header::IF_NONE_MATCH)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| crate::conditional::matches(v, &tag));
            if not_modified {
                resp.status = 304;
                resp.body.clear();
            }
            resp.headers.push(("etag".into(), tag));
        }
        if !not_modified {
            st.rate_used += 1;
        }
        st.requests.push(RequestRecord {
            method: method.to_string(),
            path: rel_with_query,
            had_auth,
            status: resp.status,
        });
        let rate = (st.rate_used, st.now().timestamp() + 3600);
        (resp, pushes, rate)
    };
    for p in pushes {
        crate::ci::on_push(&sh, p);
    }
    crate::hook_deliveries::dispatch(&sh);
    if let Some(gate) = held {
        gate.wait().await;
    }
    into_response(resp, rate)
}

fn into_response(r: Resp, (used, reset): (u64, i64)) -> Response {
    let mut b = Response::builder()
        .status(StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    let mut names: Vec<String> = Vec::new();
    for (k, v) in &r.headers {
        b = b.header(k.as_str(), v.as_str());
        names.push(k.to_ascii_lowercase());
    }
    let defaults = [
        ("x-ratelimit-limit", "5000".to_string()),
        (
            "x-ratelimit-remaining",
            5000u64.saturating_sub(used).to_string(),
        ),
        ("x-ratelimit-used", used.to_string()),
        ("x-ratelimit-reset", reset.to_string()),
        ("x-ratelimit-resource", "core".to_string()),
        ("x-github-api-version-selected", "2022-11-28".to_string()),
        ("x-github-media-type", "github.v3; format=json".to_string()),
    ];
    for (k, v) in defaults {
        if !names.iter().any(|n| n == k) {
            b = b.header(k, v);
        }
    }
    if !r.body.is_empty() || r.status == 302 {
        b = b.header(header::CONTENT_TYPE, r.content_type);
    }
    b.body(Body::from(r.body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn take_fault(st: &mut State, method: &str, rel: &str, after_handling: bool) -> Option<Resp> {
    let idx = st.faults.iter().position(|f| {
        f.remaining > 0
            && f.after_handling == after_handling
            && (f.method == "*" || f.method.eq_ignore_ascii_case(method))
            && rel.starts_with(&f.path_prefix)
    })?;
    let f = &mut st.faults[idx];
    f.remaining -= 1;
    let f = f.clone();
    if f.remaining == 0 {
        st.faults.remove(idx);
    }
    let message = match f.status {
        403 | 429
            if f.headers
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("x-ratelimit-remaining") && v == "0") =>
        {
            "API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, please include the request ID."
        }
        403 | 429 => {
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID."
        }
        502 => "Server Error",
        503 => "Service Unavailable",
        500..=599 => "Server Error",
        _ => "Injected fault",
    };
    let mut r = error(f.status, message);
    r.headers = f.headers;
    Some(r)
}

struct Ctx<'a> {
    method: &'a Method,
    segs: &'a [&'a str],
    query: &'a BTreeMap<String, String>,
    body: &'a [u8],
    auth: Auth,
    had_auth: bool,
    rel: &'a str,
}

impl Ctx<'_> {
    fn json_body(&self) -> Result<Value, Resp> {
        if self.body.is_empty() {
            return Ok(json!({}));
        }
        serde_json::from_slice(self.body).map_err(|_| error(400, "Problems parsing JSON"))
    }
}

fn route(st: &mut State, cx: &Ctx<'_>, pushes: &mut Vec<Push>) -> Resp {
    let m = cx.method.as_str();
    match cx.segs {
        ["_logs", token] => return serve_log(st, cx, token),
        ["_codeload", token] => return serve_tarball(st, cx, token),
        ["app-manifests", code, "conversions"] if m == "POST" => {
            return manifest_conversion(st, code);
        }
        ["login", "oauth", "authorize"] if m == "GET" => return oauth::authorize(st, cx.query),
        ["login", "oauth", "access_token"] if m == "POST" => {
            return oauth::access_token(st, cx.body, cx.query);
        }
        ["user"] if m == "GET" => return oauth::user(st, user_token(&cx.auth)),
        ["user", "installations"] if m == "GET" => {
            return oauth::installations(st, user_token(&cx.auth), cx.query);
        }
        ["user", "installations", id, "repositories"] if m == "GET" => {
            return oauth::installation_repositories(st, user_token(&cx.auth), id, cx.query);
        }
        ["_raw", _owner, _name, sha] => {
            return match st.store.blob(sha) {
                Some(b) => Resp {
                    status: 200,
                    headers: vec![],
                    body: b.to_vec(),
                    content_type: "text/plain; charset=utf-8",
                },
                None => not_found(),
            };
        }
        _ => {}
    }
    match cx.segs {
        ["app", "installations", id, "access_tokens"] if m == "POST" => {
            if let Err(r) = check_jwt(st, &cx.auth) {
                return r;
            }
            let Ok(id) = id.parse::<u64>() else {
                return not_found();
            };
            if !st.repos.values().any(|r| r.installation_id == id) {
                return not_found();
            }
            let token = st.fresh_token("ghs_");
            let expires = st.now() + chrono::Duration::hours(1);
            st.tokens.insert(
                token.clone(),
                crate::state::Token {
                    installation_id: id,
                    expires_at: expires,
                },
            );
            Resp::json(
                201,
                json!({
                    "token": token,
                    "expires_at": expires.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    "permissions": {"checks": "write", "contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "actions": "write"},
                    "repository_selection": "all",
                }),
            )
        }
        ["app", "hook", "deliveries"] if m == "GET" => match check_jwt(st, &cx.auth) {
            Ok(()) => crate::hook_deliveries::list(st, cx.query),
            Err(r) => r,
        },
        ["app", "hook", "deliveries", id, "attempts"] if m == "POST" => {
            match check_jwt(st, &cx.auth) {
                Ok(()) => crate::hook_deliveries::redeliver(st, id),
                Err(r) => r,
            }
        }
        ["repos", o, r, "installation"] if m == "GET" => {
            if let Err(e) = check_jwt(st, &cx.auth) {
                return e;
            }
            match st.repos.get(&format!("{o}/{r}")) {
                Some(repo) => {
                    let (id, owner) = (repo.installation_id, repo.owner.clone());
                    Resp::json(200, st.installation_json(id, &owner))
                }
                None => not_found(),
            }
        }
        ["repos", o, r, rest @ ..] => {
            let full = format!("{o}/{r}");
            let Some(repo) = st.repos.get(&full) else {
                return if matches!(cx.auth, Auth::Token(_)) && token_ok(st, &cx.auth).is_none() {
                    bad_credentials()
                } else {
                    not_found()
                };
            };
            let inst = repo.installation_id;
            match token_ok(st, &cx.auth) {
                Some(i) if i == inst => {}
                Some(_) => return not_found(),
                None => return bad_credentials(),
            }
            repo_route(st, cx, &full, rest, pushes)
        }
        _ => not_found(),
    }
}

fn user_token(auth: &Auth) -> Option<&str> {
    match auth {
        Auth::Token(t) => Some(t),
        _ => None,
    }
}

/// The installation id the request's token belongs to, if it is a live token the fake issued.
fn token_ok(st: &State, auth: &Auth) -> Option<u64> {
    match auth {
        Auth::Token(t) => st
            .tokens
            .get(t)
            .filter(|t| t.expires_at > st.now())
            .map(|t| t.installation_id),
        _ => None,
    }
}

fn check_jwt(st: &State, auth: &Auth) -> Result<(), Resp> {
    let Auth::Jwt(claims, raw) = auth else {
        return Err(error(401, "A JSON web token could not be decoded"));
    };
    if let Some(key) = &st.app_public_key {
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        // Time claims are checked below with GitHub's own messages.
        v.validate_exp = false;
        v.required_spec_claims.clear();
        if jsonwebtoken::decode::<Value>(raw, key, &v).is_err() {
            return Err(error(401, "A JSON web token could not be decoded"));
        }
    }
    let now = st.now().timestamp();
    let num = |k: &str| claims.get(k).and_then(Value::as_i64);
    let (Some(iat), Some(exp)) = (num("iat"), num("exp")) else {
        return Err(error(401, "A JSON web token could not be decoded"));
    };
    if exp <= now {
        return Err(error(
            401,
            "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        ));
    }
    if exp - iat > 600 + 60 {
        return Err(error(
            401,
            "'Expiration time' claim ('exp') is too far in the future",
        ));
    }
    if iat > now + 60 {
        return Err(error(
            401,
            "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
        ));
    }
    let iss = match claims.get("iss") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if iss != st.app_id.to_string() && iss != format!("Iv1.{:016x}", st.app_id) {
        return Err(error(401, "Integration not found"));
    }
    Ok(())
}

fn paginate(st: &State, cx: &Ctx<'_>, items: Vec<Value>) -> (Vec<Value>, Option<String>) {
    let per_page = cx
        .query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = cx
        .query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let last = items.len().div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    if last == 1 {
        return (slice, None);
    }
    let path = cx.rel.split('?').next().unwrap_or_default();
    let mk = |p: usize| {
        let mut q: Vec<String> = cx
            .query
            .iter()
            .filter(|(k, _)| k.as_str() != "page" && k.as_str() != "per_page")
            .map(|(k, v)| format!("{}={}", qs_encode(k), qs_encode(v)))
            .collect();
        q.push(format!("per_page={per_page}"));
        q.push(format!("page={p}"));
        format!("<{}{}?{}>", st.urls.api, path, q.join("&"))
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", mk(page - 1)));
    }
    if page < last {
        links.push(format!("{}; rel=\"next\"", mk(page + 1)));
        links.push(format!("{}; rel=\"last\"", mk(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", mk(1)));
    }
    (slice, Some(links.join(", ")))
}

fn paged(st: &State, cx: &Ctx<'_>, items: Vec<Value>) -> Resp {
    let (page, link) = paginate(st, cx, items);
    let r = Resp::json(200, Value::Array(page));
    match link {
        Some(l) => r.header("link", l),
        None => r,
    }
}

fn repo_route(
    st: &mut State,
    cx: &Ctx<'_>,
    repo: &str,
    rest: &[&str],
    pushes: &mut Vec<Push>,
) -> Resp {
    let m = cx.method.as_str();
    match (m, rest) {
        ("GET", []) => Resp::json(200, st.repo_json(repo)),
        ("GET", ["pulls", n]) => match n
            .parse::<u64>()
            .ok()
            .and_then(|n| st.pulls.get(&(repo.to_string(), n)))
        {
            Some(p) => Resp::json(200, st.pull_json(p, true)),
            None => not_found(),
        },
        ("GET", ["pulls", n, "files"]) => match n
            .parse::<u64>()
            .ok()
            .and_then(|n| st.pulls.get(&(repo.to_string(), n)))
        {
            Some(p) => {
                let files = st.pull_files(p);
                paged(st, cx, files)
            }
            None => not_found(),
        },
        ("GET", ["pulls"]) => {
            let state = cx.query.get("state").map(String::as_str).unwrap_or("open");
            if !["open", "closed", "all"].contains(&state) {
                return validation("Validation Failed", "PullRequest", "state", "invalid", None);
            }
            let head = cx.query.get("head");
            let base = cx.query.get("base");
            let items: Vec<Value> = st
                .pulls
                .values()
                .filter(|p| p.repo == repo && (state == "all" || p.state == state))
                .filter(|p| match head {
                    Some(h) => {
                        let (owner, branch) = h
                            .split_once(':')
                            .unwrap_or((repo.split('/').next().unwrap_or_default(), h));
                        p.head_ref == branch && p.head_repo.split('/').next() == Some(owner)
                    }
                    None => true,
                })
                .filter(|p| base.is_none_or(|b| &p.base_ref == b))
                .rev()
                .map(|p| st.pull_json(p, false))
                .collect();
            paged(st, cx, items)
        }
        ("GET", ["commits", sha, "pulls"]) => {
            // PRs whose head history contains the commit and whose base does not (three-dot range).
            let items: Vec<Value> = st
                .pulls
                .values()
                .filter(|p| p.repo == repo || p.head_repo == repo)
                .filter(|p| {
                    let (head, base) = st.pull_shas(p);
                    st.store.is_ancestor(sha, &head) && !st.store.is_ancestor(sha, &base)
                })
                .map(|p| st.pull_json(p, false))
                .collect();
            paged(st, cx, items)
        }
        ("POST", ["check-runs"]) => create_check_run(st, cx, repo),
        ("GET", ["check-runs", id]) => match id
            .parse::<u64>()
            .ok()
            .and_then(|id| st.check_runs.get(&id))
            .filter(|c| c.repo == repo)
        {
            Some(c) => Resp::json(200, st.check_run_json(c)),
            None => not_found(),
        },
        ("PATCH", ["check-runs", id]) => update_check_run(st, cx, repo, id),
        ("GET", ["check-runs", id, "annotations"]) => {
            match id
                .parse::<u64>()
                .ok()
                .and_then(|id| st.check_runs.get(&id))
                .filter(|c| c.repo == repo)
            {
                Some(c) => {
                    let a = c.annotations.clone();
                    paged(st, cx, a)
                }
                None => not_found(),
            }
        }
        ("GET", ["commits", rev, "check-runs"]) => {
            let Some(sha) = st.resolve(repo, rev) else {
                return unprocessable(&format!("No commit found for SHA: {rev}"));
            };
            let name = cx.query.get("check_name");
            let status = cx.query.get("status");
            let all = cx.query.get("filter").is_some_and(|f| f == "all");
            let mut runs: Vec<&CheckRun> = st
                .check_runs
                .values()
                .filter(|c| c.repo == repo && c.head_sha == sha)
                .filter(|c| name.is_none_or(|n| &c.name == n))
                .filter(|c| status.is_none_or(|s| &c.status == s))
                .collect();
            runs.sort_by_key(|c| std::cmp::Reverse(c.id));
            if !all {
                let mut seen = std::collections::HashSet::new();
                runs.retain(|c| seen.insert((c.name.clone(), c.app_slug.clone())));
            }
            let total = runs.len();
            let items: Vec<Value> = runs.into_iter().map(|c| st.check_run_json(c)).collect();
            let (page, link) = paginate(st, cx, items);
            let r = Resp::json(200, json!({"total_count": total, "check_runs": page}));
            match link {
                Some(l) => r.header("link", l),
                None => r,
            }
        }
        ("GET", ["actions", "jobs", id]) => {
            match id
                .parse()
                .ok()
                .and_then(|id| crate::actions::job_json(st, repo, id))
            {
                Some(v) => Resp::json(200, v),
                None => not_found(),
            }
        }
        ("POST", ["actions", "jobs", id, "rerun"]) => match (id.parse(), cx.json_body()) {
            (Ok(id), Ok(b)) => actions_answer(crate::actions::rerun_job(st, repo, id, &b)),
            (_, Err(r)) => r,
            (Err(_), _) => not_found(),
        },
        ("POST", ["actions", "runs", run, "rerun-failed-jobs"]) => {
            match (run.parse(), cx.json_body()) {
                (Ok(run), Ok(b)) => {
                    actions_answer(crate::actions::rerun_failed_jobs(st, repo, run, &b))
                }
                (_, Err(r)) => r,
                (Err(_), _) => not_found(),
            }
        }
        ("GET", ["actions", "runs", run, "attempts", n, "jobs"]) => {
            let jobs = run
                .parse()
                .ok()
                .zip(n.parse().ok())
                .and_then(|(run, n)| crate::actions::attempt_jobs(st, repo, run, n));
            let Some(jobs) = jobs else {
                return not_found();
            };
            let (page, link) = paginate(st, cx, jobs.clone());
            let r = Resp::json(200, json!({"total_count": jobs.len(), "jobs": page}));
            match link {
                Some(l) => r.header("link", l),
                None => r,
            }
        }
        ("GET", ["actions", "runs", run, "jobs"]) => {
            let filter = cx.query.get("filter").map(String::as_str);
            let Some(jobs) = run
                .parse()
                .ok()
                .and_then(|run| crate::actions::run_jobs(st, repo, run, filter))
            else {
                return not_found();
            };
            let (page, link) = paginate(st, cx, jobs.clone());
            let r = Resp::json(200, json!({"total_count": jobs.len(), "jobs": page}));
            match link {
                Some(l) => r.header("link", l),
                None => r,
            }
        }
        ("GET", ["actions", "jobs", id, "logs"]) => {
            let Some(id) = id.parse::<u64>().ok() else {
                return not_found();
            };
            match st.job_logs.get(&id).filter(|l| l.repo == repo) {
                None => not_found(),
                Some(l) if l.expired => error(410, "Gone"),
                Some(_) => {
                    let token = st.fresh_token("");
                    st.log_links.insert(token.clone(), id);
                    let expires = st.now().timestamp() + 60;
                    Resp::redirect(format!(
                        "{}/_logs/{token}?urlExpires={expires}",
                        st.urls.web
                    ))
                }
            }
        }
        ("GET", ["issues", n, "comments"]) => {
            let Some(n) = n.parse::<u64>().ok() else {
                return not_found();
            };
            if !st.pulls.contains_key(&(repo.to_string(), n)) {
                return not_found();
            }
            let items: Vec<Value> = st
                .comments
                .values()
                .filter(|c| c.repo == repo && c.issue_number == n)
                .map(|c| st.comment_json(c))
                .collect();
            paged(st, cx, items)
        }
        ("POST", ["issues", n, "comments"]) => {
            let Some(n) = n.parse::<u64>().ok() else {
                return not_found();
            };
            if !st.pulls.contains_key(&(repo.to_string(), n)) {
                return not_found();
            }
            let body = match cx.json_body() {
                Ok(b) => b,
                Err(r) => return r,
            };
            let Some(text) = body.get("body").and_then(Value::as_str) else {
                return validation(
                    "Invalid request.\n\n\"body\" wasn't supplied.",
                    "IssueComment",
                    "body",
                    "missing_field",
                    None,
                );
            };
            if let Err(r) = check_comment_len(text) {
                return r;
            }
            let id = st.next_id();
            let now = st.now_str();
            let user = st.user_bot();
            let c = IssueComment {
                id,
                repo: repo.into(),
                issue_number: n,
                user,
                body: text.into(),
                created_at: now.clone(),
                updated_at: now,
                via_app: true,
                via_other_app: None,
            };
            let v = st.comment_json(&c);
            st.comments.insert(id, c);
            Resp::json(201, v).header(
                "location",
                format!("{}/repos/{repo}/issues/comments/{id}", st.urls.api),
            )
        }
        (_, ["issues", "comments", id]) => {
            let Some(id) = id
                .parse::<u64>()
                .ok()
                .filter(|id| st.comments.get(id).is_some_and(|c| c.repo == repo))
            else {
                return not_found();
            };
            match m {
                "GET" => Resp::json(200, st.comment_json(&st.comments[&id])),
                "PATCH" | "POST" => {
                    let body = match cx.json_body() {
                        Ok(b) => b,
                        Err(r) => return r,
                    };
                    let Some(text) = body.get("body").and_then(Value::as_str) else {
                        return validation(
                            "Invalid request.\n\n\"body\" wasn't supplied.",
                            "IssueComment",
                            "body",
                            "missing_field",
                            None,
                        );
                    };
                    if let Err(r) = check_comment_len(text) {
                        return r;
                    }
                    let now = st.now_str();
                    if let Some(c) = st.comments.get_mut(&id) {
                        c.body = text.into();
                        c.updated_at = now;
                    }
                    Resp::json(200, st.comment_json(&st.comments[&id]))
                }
                "DELETE" => {
                    st.comments.remove(&id);
                    st.reactions.retain(|r| r.comment_id != id);
                    Resp::empty(204)
                }
                _ => not_found(),
            }
        }
        (_, ["issues", "comments", id, "reactions"]) => {
            let Some(id) = id
                .parse::<u64>()
                .ok()
                .filter(|id| st.comments.get(id).is_some_and(|c| c.repo == repo))
            else {
                return not_found();
            };
            match m {
                "GET" => {
                    let content = cx.query.get("content");
                    let items: Vec<Value> = st
                        .reactions
                        .iter()
                        .filter(|r| r.comment_id == id && content.is_none_or(|c| &r.content == c))
                        .map(|r| st.reaction_json(r))
                        .collect();
                    paged(st, cx, items)
                }
                "POST" => {
                    let body = match cx.json_body() {
                        Ok(b) => b,
                        Err(r) => return r,
                    };
                    let content = body
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    if ![
                        "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
                    ]
                    .contains(&content.as_str())
                    {
                        return validation(
                            "Validation Failed",
                            "Reaction",
                            "content",
                            "invalid",
                            None,
                        );
                    }
                    let user = st.user_bot();
                    if let Some(r) = st
                        .reactions
                        .iter()
                        .find(|r| r.comment_id == id && r.user == user && r.content == content)
                    {
                        return Resp::json(200, st.reaction_json(r));
                    }
                    let r = Reaction {
                        id: st.next_id(),
                        comment_id: id,
                        user,
                        content,
                        created_at: st.now_str(),
                    };
                    let v = st.reaction_json(&r);
                    st.reactions.push(r);
                    Resp::json(201, v)
                }
                _ => not_found(),
            }
        }
        ("GET", ["collaborators", user, "permission"]) => {
            let owner = repo.split('/').next().unwrap_or_default();
            let perm = if *user == owner {
                crate::state::Permission::Admin
            } else {
                st.repos[repo]
                    .permissions
                    .get(*user)
                    .copied()
                    .unwrap_or(crate::state::Permission::None)
            };
            let (permission, role) = perm.fields();
            let mut u = j::user(&st.urls, user);
            u["role_name"] = json!(role);
            u["permissions"] = json!({
                "admin": permission == "admin", "maintain": role == "maintain" || role == "admin",
                "push": permission == "admin" || permission == "write", "triage": role != "read" && role != "none",
                "pull": permission != "none"
            });
            Resp::json(
                200,
                json!({"permission": permission, "role_name": role, "user": u}),
            )
        }
        ("GET", ["contents", path @ ..]) => get_contents(st, cx, repo, &path.join("/")),
        ("GET", ["tarball", rev @ ..]) => {
            let rev = if rev.is_empty() {
                st.repos[repo].default_branch.clone()
            } else {
                rev.join("/")
            };
            match st.resolve(repo, &rev) {
                Some(sha) => {
                    let token = st.fresh_token("");
                    st.tarball_links
                        .insert(token.clone(), (repo.to_string(), sha));
                    Resp::redirect(format!("{}/_codeload/{token}", st.urls.web))
                }
                None => not_found(),
            }
        }
        (_, ["git", rest @ ..]) => git_route(st, cx, repo, rest, pushes),
        _ => not_found(),
    }
}

fn check_comment_len(text: &str) -> Result<(), Resp> {
    if text.chars().count() > MAX_COMMENT_CHARS {
        return Err(validation(
            "Validation Failed",
            "IssueComment",
            "data",
            "unprocessable",
            Some("Body is too long (maximum is 65536 characters)"),
        ));
    }
    Ok(())
}

fn get_contents(st: &State, cx: &Ctx<'_>, repo: &str, path: &str) -> Resp {
    let rev = cx
        .query
        .get("ref")
        .cloned()
        .unwrap_or_else(|| st.repos[repo].default_branch.clone());
    let Some(sha) = st.resolve(repo, &rev) else {
        return error(404, &format!("No commit found for the ref {rev}"));
    };
    let Some(commit) = st.store.commit(&sha) else {
        return not_found();
    };
    let Some(flat) = st.store.flatten_tree(&commit.tree) else {
        return not_found();
    };
    let a = format!("{}/repos/{repo}", st.urls.api);
    let path = path.trim_matches('/');
    let entry = |name: &str, path: &str, kind: &str, sha: &str, size: usize| {
        let self_url = format!("{a}/contents/{path}?ref={}", qs_encode(&rev));
        let git_url = format!(
            "{a}/git/{}/{sha}",
            if kind == "dir" { "trees" } else { "blobs" }
        );
        let html_url = format!(
            "{}/{repo}/{}/{rev}/{path}",
            st.urls.web,
            if kind == "dir" { "tree" } else { "blob" }
        );
        let download = if kind == "file" {
            json!(format!("{}/_raw/{repo}/{sha}", st.urls.web))
        } else {
            Value::Null
        };
        json!({
            "type": kind, "size": size, "name": name, "path": path, "sha": sha, "url": self_url,
            "git_url": git_url, "html_url": html_url, "download_url": download,
            "_links": {"self": self_url, "git": git_url, "html": html_url},
        })
    };
    if let Some((mode, sha)) = flat.get(path) {
        let name = path.rsplit('/').next().unwrap_or(path);
        if mode == git::MODE_SUBMODULE {
            let mut v = entry(name, path, "submodule", sha, 0);
            v["submodule_git_url"] = json!(format!("{}/{name}.git", st.urls.web));
            return Resp::json(200, v);
        }
        if mode == git::MODE_SYMLINK {
            // Like GitHub: a link to a regular file in the repository answers with that file
            // (its own `path` and `name`); any other link is described as a symlink.
            let target =
                String::from_utf8_lossy(st.store.blob(sha).unwrap_or_default()).into_owned();
            let resolved = resolve_link(path, &target);
            let to_file = resolved.as_deref().and_then(|t| {
                flat.get(t)
                    .filter(|(m, _)| m == git::MODE_FILE || m == git::MODE_EXECUTABLE)
                    .map(|(_, b)| (t.to_string(), b.clone()))
            });
            let Some((tpath, tblob)) = to_file else {
                let mut v = entry(name, path, "symlink", sha, target.len());
                v["target"] = json!(target);
                return Resp::json(200, v);
            };
            let content = st.store.blob(&tblob).unwrap_or_default();
            let tname = tpath.rsplit('/').next().unwrap_or(&tpath);
            let mut v = entry(tname, &tpath, "file", &tblob, content.len());
            v["content"] = json!(j::base64_wrapped(content));
            v["encoding"] = json!("base64");
            return Resp::json(200, v);
        }
        let content = st.store.blob(sha).unwrap_or_default();
        let mut v = entry(name, path, "file", sha, content.len());
        v["content"] = json!(j::base64_wrapped(content));
        v["encoding"] = json!("base64");
        return Resp::json(200, v);
    }
    // A directory: list its direct children.
    let tree_sha = if path.is_empty() {
        Some(commit.tree.clone())
    } else {
        st.store
            .walk_tree(&commit.tree)
            .into_iter()
            .find(|(p, e)| p == path && e.kind == "tree")
            .map(|(_, e)| e.sha)
    };
    let Some(tree_sha) = tree_sha else {
        return not_found();
    };
    let Some(tree) = st.store.tree(&tree_sha) else {
        return not_found();
    };
    let items: Vec<Value> = tree
        .iter()
        .map(|(name, e)| {
            let p = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}/{name}")
            };
            let (kind, size) = if e.kind == "tree" {
                ("dir", 0)
            } else {
                ("file", st.store.blob(&e.sha).map(<[u8]>::len).unwrap_or(0))
            };
            entry(name, &p, kind, &e.sha, size)
        })
        .collect();
    Resp::json(200, Value::Array(items))
}

fn str_field(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn apply_output(c: &mut CheckRun, out: &Value, repo_web: &str) -> Result<(), Resp> {
    for k in ["summary", "text"] {
        if out
            .get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| s.chars().count() > 65_535)
        {
            return Err(validation(
                "Invalid request.\n\nOnly 65535 characters are allowed; too many characters were provided.",
                "CheckRun",
                k,
                "invalid",
                None,
            ));
        }
    }
    let anns = out
        .get("annotations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if anns.len() > MAX_ANNOTATIONS_PER_REQUEST {
        return Err(validation(
            "Invalid request.\n\nFor 'properties/annotations', array is too long (maximum is 50).",
            "CheckRun",
            "annotations",
            "invalid",
            None,
        ));
    }
    let mut stored = Vec::new();
    for a in &anns {
        let path = str_field(a, "path");
        let level = str_field(a, "annotation_level");
        let message = str_field(a, "message");
        let (Some(path), Some(level), Some(message)) = (path, level, message) else {
            return Err(validation(
                "Invalid request.\n\n\"path\", \"start_line\", \"end_line\", \"annotation_level\" and \"message\" are required.",
                "CheckRun",
                "annotations",
                "missing_field",
                None,
            ));
        };
        let (Some(start), Some(end)) = (
            a.get("start_line").and_then(Value::as_u64),
            a.get("end_line").and_then(Value::as_u64),
        ) else {
            return Err(validation(
                "Invalid request.\n\n\"start_line\" and \"end_line\" are required.",
                "CheckRun",
                "annotations",
                "missing_field",
                None,
            ));
        };
        if !["notice", "warning", "failure"].contains(&level.as_str()) {
            return Err(validation(
                "Invalid request.\n\nannotation_level must be one of notice, warning, failure.",
                "CheckRun",
                "annotation_level",
                "invalid",
                None,
            ));
        }
        if str_field(a, "title").is_some_and(|t| t.chars().count() > 255) {
            return Err(validation(
                "Invalid request.\n\ntitle is too long (maximum is 255).",
                "CheckRun",
                "title",
                "invalid",
                None,
            ));
        }
        let cols = |k: &str| {
            if start == end {
                a.get(k)
                    .and_then(Value::as_u64)
                    .map_or(Value::Null, |v| json!(v))
            } else {
                Value::Null
            }
        };
        stored.push(json!({
            "path": path,
            "blob_href": format!("{repo_web}/blob/{}/{path}", c.head_sha),
            "start_line": start,
            "end_line": end,
            "start_column": cols("start_column"),
            "end_column": cols("end_column"),
            "annotation_level": level,
            "title": a.get("title").cloned().unwrap_or(Value::Null),
            "message": message,
            "raw_details": a.get("raw_details").cloned().unwrap_or(Value::Null),
        }));
    }
    if let Some(t) = str_field(out, "title") {
        c.title = Some(t);
    }
    if let Some(t) = str_field(out, "summary") {
        c.summary = Some(t);
    }
    if let Some(t) = str_field(out, "text") {
        c.text = Some(t);
    }
    c.annotations.extend(stored);
    Ok(())
}

fn apply_status(st: &State, c: &mut CheckRun, body: &Value) -> Result<(), Resp> {
    if let Some(s) = str_field(body, "status") {
        if ![
            "queued",
            "in_progress",
            "completed",
            "waiting",
            "requested",
            "pending",
        ]
        .contains(&s.as_str())
        {
            return Err(validation(
                "Validation Failed",
                "CheckRun",
                "status",
                "invalid",
                None,
            ));
        }
        c.status = s;
    }
    if let Some(conc) = str_field(body, "conclusion") {
        if ![
            "action_required",
            "cancelled",
            "failure",
            "neutral",
            "success",
            "skipped",
            "stale",
            "timed_out",
        ]
        .contains(&conc.as_str())
        {
            return Err(validation(
                "Validation Failed",
                "CheckRun",
                "conclusion",
                "invalid",
                None,
            ));
        }
        // Giving a conclusion forces the run to completed, as GitHub does.
        c.conclusion = Some(conc);
        c.status = "completed".into();
    }
    if c.status == "completed" && c.conclusion.is_none() {
        return Err(validation(
            "Invalid request.\n\nNo subschema in \"anyOf\" matched.\n\"conclusion\" wasn't supplied.",
            "CheckRun",
            "conclusion",
            "missing_field",
            None,
        ));
    }
    if let Some(t) = str_field(body, "started_at") {
        c.started_at = t;
    }
    if let Some(t) = str_field(body, "completed_at") {
        c.completed_at = Some(t);
    } else if c.status == "completed" && c.completed_at.is_none() {
        c.completed_at = Some(st.now_str());
    }
    for (k, slot) in [("details_url", &mut c.details_url)] {
        if let Some(v) = str_field(body, k) {
            *slot = Some(v);
        }
    }
    if let Some(v) = str_field(body, "external_id") {
        c.external_id = v;
    }
    if let Some(v) = str_field(body, "name") {
        c.name = v;
    }
    Ok(())
}

fn create_check_run(st: &mut State, cx: &Ctx<'_>, repo: &str) -> Resp {
    let body = match cx.json_body() {
        Ok(b) => b,
        Err(r) => return r,
    };
    let (Some(name), Some(head_sha)) = (str_field(&body, "name"), str_field(&body, "head_sha"))
    else {
        return validation(
            "Invalid request.\n\n\"name\" and \"head_sha\" are required.",
            "CheckRun",
            "name",
            "missing_field",
            None,
        );
    };
    if st.store.commit(&head_sha).is_none() {
        return unprocessable(&format!("No commit found for SHA: {head_sha}"));
    }
    let id = st.next_id();
    let mut c = CheckRun {
        id,
        repo: repo.into(),
        head_sha,
        name,
        app_id: st.app_id,
        app_slug: st.app_slug.clone(),
        status: "queued".into(),
        conclusion: None,
        started_at: st.now_str(),
        completed_at: None,
        external_id: String::new(),
        details_url: None,
        title: None,
        summary: None,
        text: None,
        annotations: vec![],
        check_suite_id: id + 5_000_000,
    };
    if let Err(r) = apply_status(st, &mut c, &body) {
        return r;
    }
    if let Some(out) = body.get("output")
        && let Err(r) = apply_output(&mut c, out, &format!("{}/{repo}", st.urls.web))
    {
        return r;
    }
    let v = st.check_run_json(&c);
    st.check_runs.insert(id, c);
    Resp::json(201, v)
}

fn update_check_run(st: &mut State, cx: &Ctx<'_>, repo: &str, id: &str) -> Resp {
    let Some(mut c) = id
        .parse::<u64>()
        .ok()
        .and_then(|id| st.check_runs.get(&id))
        .filter(|c| c.repo == repo)
        .cloned()
    else {
        return not_found();
    };
    let body = match cx.json_body() {
        Ok(b) => b,
        Err(r) => return r,
    };
    if let Err(r) = apply_status(st, &mut c, &body) {
        return r;
    }
    if let Some(out) = body.get("output")
        && let Err(r) = apply_output(&mut c, out, &format!("{}/{repo}", st.urls.web))
    {
        return r;
    }
    let v = st.check_run_json(&c);
    st.check_runs.insert(c.id, c);
    Resp::json(200, v)
}

/// The repository path a symbolic link at `link` pointing to `target` names, or `None` when it
/// leaves the repository or is absolute.
fn resolve_link(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

fn git_route(
    st: &mut State,
    cx: &Ctx<'_>,
    repo: &str,
    rest: &[&str],
    pushes: &mut Vec<Push>,
) -> Resp {
    let m = cx.method.as_str();
    let a = format!("{}/repos/{repo}", st.urls.api);
    match (m, rest) {
        ("GET", ["ref", r @ ..]) if !r.is_empty() => {
            match st.git_ref_json(repo, &format!("refs/{}", r.join("/"))) {
                Some(v) => Resp::json(200, v),
                None => not_found(),
            }
        }
        ("POST", ["refs"]) => {
            let body = match cx.json_body() {
                Ok(b) => b,
                Err(r) => return r,
            };
            let (Some(r), Some(sha)) = (str_field(&body, "ref"), str_field(&body, "sha")) else {
                return unprocessable("Invalid request.\n\n\"ref\", \"sha\" weren't supplied.");
            };
            if !r.starts_with("refs/") || r.matches('/').count() < 2 {
                return unprocessable(
                    "Reference name must start with 'refs/' and have at least two slashes.",
                );
            }
            if st.store.commit(&sha).is_none() {
                return unprocessable("Object does not exist");
            }
            if st.repos[repo].refs.contains_key(&r) {
                return unprocessable("Reference already exists");
            }
            st.set_ref(repo, &r, &sha);
            if let Some(b) = r.strip_prefix("refs/heads/") {
                pushes.push(Push {
                    repo: repo.into(),
                    branch: b.into(),
                    sha: sha.clone(),
                });
            }
            let v = st.git_ref_json(repo, &r).unwrap_or_default();
            Resp::json(201, v).header("location", format!("{a}/git/{r}"))
        }
        ("PATCH", ["refs", r @ ..]) if !r.is_empty() => {
            let full = format!("refs/{}", r.join("/"));
            let Some(cur) = st.repos[repo].refs.get(&full).cloned() else {
                return unprocessable("Reference does not exist");
            };
            let body = match cx.json_body() {
                Ok(b) => b,
                Err(r) => return r,
            };
            let Some(sha) = str_field(&body, "sha") else {
                return unprocessable("Invalid request.\n\n\"sha\" wasn't supplied.");
            };
            if st.store.commit(&sha).is_none() {
                return unprocessable("Object does not exist");
            }
            let force = body.get("force").and_then(Value::as_bool).unwrap_or(false);
            if !force && !st.store.is_ancestor(&cur, &sha) {
                return unprocessable("Update is not a fast forward");
            }
            st.set_ref(repo, &full, &sha);
            // GitHub sends no push for an update that leaves the branch where it was.
            if let Some(b) = full.strip_prefix("refs/heads/").filter(|_| cur != sha) {
                pushes.push(Push {
                    repo: repo.into(),
                    branch: b.into(),
                    sha: sha.clone(),
                });
            }
            Resp::json(200, st.git_ref_json(repo, &full).unwrap_or_default())
        }
        ("GET", ["commits", sha]) => match st.git_commit_json(repo, sha) {
            Some(v) => Resp::json(200, v),
            None => not_found(),
        },
        ("POST", ["commits"]) => {
            let body = match cx.json_body() {
                Ok(b) => b,
                Err(r) => return r,
            };
            let (Some(message), Some(tree)) =
                (str_field(&body, "message"), str_field(&body, "tree"))
            else {
                return unprocessable(
                    "Invalid request.\n\n\"message\", \"tree\" weren't supplied.",
                );
            };
            if st.store.tree(&tree).is_none() {
                return unprocessable("Tree SHA does not exist");
            }
            let parents: Vec<String> = body
                .get("parents")
                .and_then(Value::as_array)
                .map(|p| {
                    p.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if parents.iter().any(|p| st.store.commit(p).is_none()) {
                return unprocessable("Parent SHA does not exist or is not a commit object");
            }
            let author = body.get("author").cloned().unwrap_or(Value::Null);
            let bot = st.user_bot();
            let c = Commit {
                tree,
                parents,
                message,
                author_name: str_field(&author, "name").unwrap_or(bot.clone()),
                author_email: str_field(&author, "email")
                    .unwrap_or(format!("{}+{bot}@users.noreply.github.com", st.app_id)),
                date: str_field(&author, "date").unwrap_or_else(|| st.now_str()),
            };
            let sha = st.store.put_commit(c);
            Resp::json(201, st.git_commit_json(repo, &sha).unwrap_or_default())
                .header("location", format!("{a}/git/commits/{sha}"))
        }
        ("GET", ["trees", sha]) => {
            let recursive = cx
                .query
                .get("recursive")
                .is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
            let sha = st
                .resolve(repo, sha)
                .and_then(|c| st.store.commit(&c).map(|c| c.tree.clone()))
                .unwrap_or_else(|| sha.to_string());
            match st.git_tree_json(repo, &sha, recursive) {
                Some(v) => Resp::json(200, v),
                None => not_found(),
            }
        }
        ("POST", ["trees"]) => create_tree(st, cx, repo),
        ("GET", ["blobs", sha]) => match st.store.blob(sha) {
            Some(b) => Resp::json(
                200,
                json!({
                    "sha": sha, "node_id": j::node_id("Blob", j::stable_id(sha)), "size": b.len(),
                    "url": format!("{a}/git/blobs/{sha}"), "content": j::base64_wrapped(b), "encoding": "base64",
                }),
            ),
            None => not_found(),
        },
        ("POST", ["blobs"]) => {
            let body = match cx.json_body() {
                Ok(b) => b,
                Err(r) => return r,
            };
            let Some(content) = str_field(&body, "content") else {
                return unprocessable("Invalid request.\n\n\"content\" wasn't supplied.");
            };
            let bytes = match body
                .get("encoding")
                .and_then(Value::as_str)
                .unwrap_or("utf-8")
            {
                "utf-8" | "utf8" => content.into_bytes(),
                "base64" => {
                    let clean: String = content.chars().filter(|c| !c.is_whitespace()).collect();
                    match base64::engine::general_purpose::STANDARD.decode(clean) {
                        Ok(b) => b,
                        Err(_) => {
                            return unprocessable(
                                "Invalid request.\n\ncontent is not valid Base64",
                            );
                        }
                    }
                }
                other => {
                    return unprocessable(&format!(
                        "encoding must be one of utf-8, base64; got {other}"
                    ));
                }
            };
            let sha = st.store.put_blob(&bytes);
            Resp::json(
                201,
                json!({"url": format!("{a}/git/blobs/{sha}"), "sha": sha}),
            )
            .header("location", format!("{a}/git/blobs/{sha}"))
        }
        _ => not_found(),
    }
}

fn create_tree(st: &mut State, cx: &Ctx<'_>, repo: &str) -> Resp {
    let body = match cx.json_body() {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(entries) = body.get("tree").and_then(Value::as_array).cloned() else {
        return unprocessable("Invalid request.\n\n\"tree\" wasn't supplied.");
    };
    let mut flat: FlatTree = match str_field(&body, "base_tree") {
        Some(b) => match st.store.flatten_tree(&b) {
            Some(f) => f,
            None => return unprocessable("Invalid tree info"),
        },
        None => FlatTree::new(),
    };
    for e in &entries {
        let Some(path) = str_field(e, "path").map(|p| p.trim_matches('/').to_string()) else {
            return unprocessable("Invalid tree info");
        };
        let mode = str_field(e, "mode").unwrap_or_else(|| git::MODE_FILE.into());
        if !["100644", "100755", "040000", "160000", "120000"].contains(&mode.as_str()) {
            return unprocessable(&format!("Invalid tree info: mode {mode}"));
        }
        let kind = str_field(e, "type").unwrap_or_else(|| "blob".into());
        let under = format!("{path}/");
        if let Some(content) = str_field(e, "content") {
            let sha = st.store.put_blob(content.as_bytes());
            flat.insert(path, (mode, sha));
            continue;
        }
        match e.get("sha") {
            Some(Value::Null) => {
                // `sha: null` deletes the path (a file, or everything under a directory).
                flat.remove(&path);
                flat.retain(|p, _| !p.starts_with(&under));
            }
            Some(Value::String(sha)) if kind == "tree" => {
                let Some(sub) = st.store.flatten_tree(sha) else {
                    return unprocessable("Invalid tree info");
                };
                flat.retain(|p, _| !p.starts_with(&under));
                for (p, v) in sub {
                    flat.insert(format!("{under}{p}"), v);
                }
            }
            Some(Value::String(sha)) => {
                if st.store.blob(sha).is_none() {
                    return unprocessable("Invalid tree info: blob not found");
                }
                flat.insert(path, (mode, sha.clone()));
            }
            _ => return unprocessable("Must supply either tree.sha or tree.content"),
        }
    }
    let sha = st.store.put_flat_tree(&flat);
    let v = st.git_tree_json(repo, &sha, false).unwrap_or_default();
    Resp::json(201, v)
}

fn serve_log(st: &mut State, cx: &Ctx<'_>, token: &str) -> Resp {
    if cx.had_auth {
        // The signed log host rejects a forwarded GitHub token; the client must drop it.
        return Resp {
            status: 400,
            headers: vec![],
            body: b"<Error><Code>InvalidAuthenticationInfo</Code><Message>Authentication information is not given in the correct format.</Message></Error>".to_vec(),
            content_type: "application/xml",
        };
    }
    let Some(job) = st.log_links.get(token).copied() else {
        return Resp {
            status: 404,
            headers: vec![],
            body: b"<Error><Code>BlobNotFound</Code></Error>".to_vec(),
            content_type: "application/xml",
        };
    };
    if let Some(exp) = cx
        .query
        .get("urlExpires")
        .and_then(|v| v.parse::<i64>().ok())
        && exp < st.now().timestamp()
    {
        return Resp { status: 403, headers: vec![], body: b"<Error><Code>AuthenticationFailed</Code><Message>Signed expiry time has expired</Message></Error>".to_vec(), content_type: "application/xml" };
    }
    match st.job_logs.get(&job) {
        Some(l) if !l.expired => Resp {
            status: 200,
            headers: vec![],
            body: l.bytes.clone(),
            content_type: "text/plain",
        },
        Some(_) => error(410, "Gone"),
        None => not_found(),
    }
}

fn serve_tarball(st: &mut State, cx: &Ctx<'_>, token: &str) -> Resp {
    if cx.had_auth {
        return error(400, "codeload does not accept Authorization");
    }
    let Some((repo, sha)) = st.tarball_links.get(token).cloned() else {
        return not_found();
    };
    let Some(files) = st.store.files_at(&sha) else {
        return not_found();
    };
    let prefix = format!("{}-{}", repo.replace('/', "-"), &sha[..7]);
    match crate::tarball::build(&prefix, &files) {
        Ok(bytes) => Resp {
            status: 200,
            headers: vec![(
                "content-disposition".into(),
                format!("attachment; filename={prefix}.tar.gz"),
            )],
            body: bytes,
            content_type: "application/x-gzip",
        },
        Err(e) => error(500, &format!("tarball: {e}")),
    }
}

fn manifest_conversion(st: &mut State, code: &str) -> Resp {
    // Codes are single-use, as on GitHub.
    let Some(app) = st.manifest_codes.remove(code) else {
        return not_found();
    };
    let mut v = j::app(&st.urls, st.app_id, &st.app_slug, &st.app_owner);
    if let (Some(o), Some(extra)) = (v.as_object_mut(), app.as_object()) {
        for (k, x) in extra {
            o.insert(k.clone(), x.clone());
        }
        for (k, d) in [
            ("webhook_secret", json!(null)),
            ("pem", json!("")),
            ("client_secret", json!("fake-client-secret")),
        ] {
            o.entry(k).or_insert(d);
        }
    }
    Resp::json(201, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(pct_decode("a%2Fb%20c"), "a/b c");
        assert_eq!(pct_decode("100%"), "100%");
        // A request path or query is attacker-controlled; none of these may panic.
        assert_eq!(pct_decode("%aé"), "%aé");
        assert_eq!(pct_decode("é%"), "é%");
        assert_eq!(pct_decode("%zz%2"), "%zz%2");
        assert_eq!(pct_decode("%C3%A9"), "é");
        assert_eq!(pct_decode("%FF"), "\u{FFFD}");
    }

    #[test]
    fn auth_parsing() {
        assert!(
            matches!(parse_auth(Some(&HeaderValue::from_static("token ghs_abc"))), Auth::Token(t) if t == "ghs_abc")
        );
        assert!(matches!(
            parse_auth(Some(&HeaderValue::from_static("Basic xyz"))),
            Auth::Malformed
        ));
        assert!(matches!(parse_auth(None), Auth::None));
    }

    #[test]
    fn query_parsing() {
        let q = parse_query(Some("head=octo%3Afeat&per_page=2"));
        assert_eq!(q["head"], "octo:feat");
    }
}
