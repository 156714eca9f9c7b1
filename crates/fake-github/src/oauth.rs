//! Sign-in with GitHub for an App's users, as GitHub serves it: the web flow
//! (`GET /login/oauth/authorize`, `POST /login/oauth/access_token`) and the user-token reads
//! `GET /user`, `GET /user/installations` and `GET /user/installations/{id}/repositories`.
//!
//! Shapes follow GitHub's REST docs ("Authorizing OAuth apps", "List app installations
//! accessible to the user access token", "List repositories accessible to the user access
//! token"): the token answer is `{access_token, expires_in, refresh_token,
//! refresh_token_expires_in, token_type, scope}`, refusals are `200` with `{error,
//! error_description, error_uri}`. A user can access an installation's repository when the
//! fake records a permission for them on it other than `none` (`FakeGitHub::set_permission`).
//!
//! The "browser" is modelled by one signed-in login ([`FakeGitHub::sign_in_browser`]); with
//! none, the authorize page is GitHub's sign-in form and no code is issued. It never reaches
//! the network.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::FakeGitHub;
use crate::server::{Resp, error};
use crate::state::{Permission, State};

/// The OAuth side of the fake's state.
#[derive(Default)]
pub struct OAuthState {
    /// client id → (client secret, callback URL).
    clients: HashMap<String, (String, String)>,
    /// Who is signed in on the fake's web pages.
    browser_user: Option<String>,
    /// code → (login, client id, redirect URI); single use.
    codes: HashMap<String, (String, String, String)>,
    /// user access token → login.
    user_tokens: HashMap<String, String>,
}

const TOKEN_ERRORS: &str = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";

impl FakeGitHub {
    /// Registers the App's OAuth client (the manifest conversion hands out the same kind of
    /// pair) and its callback URL; `redirect_uri`s must start with it, as on GitHub.
    pub fn set_oauth_client(&self, client_id: &str, client_secret: &str, callback_url: &str) {
        self.st().oauth.clients.insert(
            client_id.to_string(),
            (client_secret.to_string(), callback_url.to_string()),
        );
    }

    /// Signs `login` in on the fake's web pages (`None` signs out): the authorize page then
    /// redirects back with a code at once, as for a user who authorized the App before.
    pub fn sign_in_browser(&self, login: Option<&str>) {
        self.st().oauth.browser_user = login.map(str::to_string);
    }
}

fn html(status: u16, body: &str) -> Resp {
    let mut r = Resp::json(status, Value::Null);
    r.body = body.as_bytes().to_vec();
    r.content_type = "text/html; charset=utf-8";
    r
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `GET /login/oauth/authorize`.
pub fn authorize(st: &mut State, query: &BTreeMap<String, String>) -> Resp {
    let client_id = query.get("client_id").map(String::as_str).unwrap_or("");
    let Some((_, callback)) = st.oauth.clients.get(client_id).cloned() else {
        return html(
            404,
            "<h1>404</h1><p>This is not the web page you are looking for.</p>",
        );
    };
    let redirect = query
        .get("redirect_uri")
        .cloned()
        .unwrap_or_else(|| callback.clone());
    if !redirect.starts_with(&callback) {
        return html(
            400,
            "<h1>Be careful!</h1><p>The redirect_uri is not associated with this application.</p>",
        );
    }
    let Some(login) = st.oauth.browser_user.clone() else {
        return html(
            200,
            "<h1>Sign in to GitHub</h1><form action=\"/session\" method=\"post\"><input name=\"login\"><input name=\"password\" type=\"password\"></form>",
        );
    };
    let code = st.fresh_token("");
    let code = code[..20].to_string();
    st.oauth.codes.insert(
        code.clone(),
        (login, client_id.to_string(), redirect.clone()),
    );
    let sep = if redirect.contains('?') { '&' } else { '?' };
    let mut to = format!("{redirect}{sep}code={code}");
    if let Some(state) = query.get("state") {
        to.push_str(&format!("&state={}", enc(state)));
    }
    Resp::redirect(to)
}

fn params(body: &[u8], query: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = query.clone();
    if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(body) {
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                out.insert(k, s.to_string());
            }
        }
    } else {
        let text = String::from_utf8_lossy(body);
        for kv in text.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let dec = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            out.insert(dec(k), dec(v));
        }
    }
    out
}

/// `POST /login/oauth/access_token`.
pub fn access_token(st: &mut State, body: &[u8], query: &BTreeMap<String, String>) -> Resp {
    let p = params(body, query);
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or("");
    let refuse = |e: &str, d: &str, anchor: &str| {
        Resp::json(
            200,
            json!({"error": e, "error_description": d, "error_uri": format!("{TOKEN_ERRORS}#{anchor}")}),
        )
    };
    match st.oauth.clients.get(get("client_id")) {
        Some((secret, _)) if secret == get("client_secret") => {}
        _ => {
            return refuse(
                "incorrect_client_credentials",
                "The client_id and/or client_secret passed are incorrect.",
                "incorrect-client-credentials",
            );
        }
    }
    let Some((login, client, redirect)) = st.oauth.codes.remove(get("code")) else {
        return refuse(
            "bad_verification_code",
            "The code passed is incorrect or expired.",
            "bad-verification-code",
        );
    };
    if client != get("client_id") {
        return refuse(
            "bad_verification_code",
            "The code passed is incorrect or expired.",
            "bad-verification-code",
        );
    }
    if !get("redirect_uri").is_empty() && get("redirect_uri") != redirect {
        return refuse(
            "redirect_uri_mismatch",
            "The redirect_uri MUST match the registered callback URL for this application.",
            "redirect-uri-mismatch",
        );
    }
    let token = st.fresh_token("ghu_");
    st.oauth.user_tokens.insert(token.clone(), login);
    Resp::json(
        200,
        json!({
            "access_token": token,
            "expires_in": 28800,
            "refresh_token": st.fresh_token("ghr_"),
            "refresh_token_expires_in": 15_811_200,
            "token_type": "bearer",
            "scope": "",
        }),
    )
}

fn user_of(st: &State, token: Option<&str>) -> Result<String, Resp> {
    token
        .and_then(|t| st.oauth.user_tokens.get(t).cloned())
        .ok_or_else(|| error(401, "Bad credentials"))
}

/// Installation id → (account, repositories the user can access), sorted.
fn accessible(st: &State, login: &str) -> BTreeMap<u64, (String, Vec<String>)> {
    let mut out: BTreeMap<u64, (String, Vec<String>)> = BTreeMap::new();
    for (full, r) in &st.repos {
        if r.permissions
            .get(login)
            .is_some_and(|p| *p != Permission::None)
        {
            out.entry(r.installation_id)
                .or_insert_with(|| (r.owner.clone(), Vec::new()))
                .1
                .push(full.clone());
        }
    }
    out
}

fn page_of<T: Clone>(items: &[T], query: &BTreeMap<String, String>) -> Vec<T> {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    items
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect()
}

/// `GET /user`.
pub fn user(st: &State, token: Option<&str>) -> Resp {
    match user_of(st, token) {
        Ok(login) => Resp::json(200, crate::json::user(&st.urls, &login)),
        Err(r) => r,
    }
}

/// `GET /user/installations`.
pub fn installations(st: &State, token: Option<&str>, query: &BTreeMap<String, String>) -> Resp {
    let login = match user_of(st, token) {
        Ok(l) => l,
        Err(r) => return r,
    };
    let all: Vec<Value> = accessible(st, &login)
        .into_iter()
        .map(|(id, (account, _))| st.installation_json(id, &account))
        .collect();
    Resp::json(
        200,
        json!({"total_count": all.len(), "installations": page_of(&all, query)}),
    )
}

/// `GET /user/installations/{installation_id}/repositories`.
pub fn installation_repositories(
    st: &State,
    token: Option<&str>,
    installation: &str,
    query: &BTreeMap<String, String>,
) -> Resp {
    let login = match user_of(st, token) {
        Ok(l) => l,
        Err(r) => return r,
    };
    let Some((_, repos)) = installation
        .parse::<u64>()
        .ok()
        .and_then(|id| accessible(st, &login).remove(&id))
    else {
        return error(404, "Not Found");
    };
    let all: Vec<Value> = repos.iter().map(|r| st.repo_json(r)).collect();
    Resp::json(
        200,
        json!({
            "total_count": all.len(),
            "repository_selection": "all",
            "repositories": page_of(&all, query),
        }),
    )
}
