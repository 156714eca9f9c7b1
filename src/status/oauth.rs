//! Sign-in with GitHub for the status page: the OAuth web flow with the App's own client id
//! and secret, then the user's installations of this App and their repositories, read with the
//! user's token (`GET /user/installations`, `GET /user/installations/{id}/repositories`), which
//! GitHub limits to what the user can access.
//!
//! The user's token is used for these reads and dropped: it is never stored, logged or put in
//! a cookie. Errors name the step, never a token or the client secret.

use std::collections::BTreeSet;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// The App's OAuth credentials (created by the manifest flow, or given by hand).
#[derive(Clone)]
pub struct OAuthApp {
    pub client_id: String,
    pub client_secret: SecretString,
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("GitHub refused the sign-in code: {0}")]
    Refused(String),
    #[error("cannot reach GitHub ({step}): {detail}")]
    Unreachable { step: &'static str, detail: String },
    #[error("GitHub answered {status} to {step}")]
    Status { step: &'static str, status: u16 },
    #[error("GitHub's answer to {step} is not the expected JSON: {detail}")]
    Shape { step: &'static str, detail: String },
}

/// Where the browser goes to sign in.
pub fn authorize_url(web_url: &str, app: &OAuthApp, redirect_uri: &str, state: &str) -> String {
    // RFC 3986 unreserved characters stay as they are.
    const QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    let enc = |s: &str| -> String { percent_encoding::utf8_percent_encode(s, QUERY).to_string() };
    format!(
        "{web_url}/login/oauth/authorize?client_id={}&redirect_uri={}&state={}&allow_signup=false",
        enc(&app.client_id),
        enc(redirect_uri),
        enc(state)
    )
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

#[derive(Deserialize)]
struct InstallationsPage {
    installations: Vec<InstallationItem>,
}

#[derive(Deserialize)]
struct InstallationItem {
    id: u64,
}

#[derive(Deserialize)]
struct RepositoriesPage {
    repositories: Vec<RepositoryItem>,
}

#[derive(Deserialize)]
struct RepositoryItem {
    full_name: String,
}

#[derive(Deserialize)]
struct UserItem {
    login: String,
}

/// Pages read per list at most (100 items each): 1,000 installations or repositories.
const MAX_PAGES: u32 = 10;

/// The signed-in user: their login and every repository of this App's installations they can
/// access.
pub struct SignedIn {
    pub login: String,
    pub repos: BTreeSet<String>,
}

/// Exchanges `code` for a user token and reads what the user can see.
pub async fn sign_in(
    http: &reqwest::Client,
    web_url: &str,
    api_url: &str,
    app: &OAuthApp,
    code: &str,
    redirect_uri: &str,
) -> Result<SignedIn, OAuthError> {
    let step = "the token exchange";
    let resp = http
        .post(format!("{web_url}/login/oauth/access_token"))
        .header("accept", "application/json")
        .form(&[
            ("client_id", app.client_id.as_str()),
            ("client_secret", app.client_secret.expose_secret()),
            ("code", code),
            ("redirect_uri", redirect_uri),
        ])
        .send()
        .await
        .map_err(|e| OAuthError::Unreachable {
            step,
            detail: e.without_url().to_string(),
        })?;
    if !resp.status().is_success() {
        return Err(OAuthError::Status {
            step,
            status: resp.status().as_u16(),
        });
    }
    let answer: TokenAnswer = resp.json().await.map_err(|e| OAuthError::Shape {
        step,
        detail: e.without_url().to_string(),
    })?;
    let token = match (answer.access_token, answer.error) {
        (Some(t), None) if !t.is_empty() => SecretString::from(t),
        (_, Some(e)) => {
            return Err(OAuthError::Refused(match answer.error_description {
                Some(d) => format!("{e}: {d}"),
                None => e,
            }));
        }
        _ => return Err(OAuthError::Refused("no access token in the answer".into())),
    };

    let get = |path: String, step: &'static str| {
        let req = http
            .get(format!("{api_url}{path}"))
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28")
            .bearer_auth(token.expose_secret());
        async move {
            let resp = req.send().await.map_err(|e| OAuthError::Unreachable {
                step,
                detail: e.without_url().to_string(),
            })?;
            if !resp.status().is_success() {
                return Err(OAuthError::Status {
                    step,
                    status: resp.status().as_u16(),
                });
            }
            resp.bytes().await.map_err(|e| OAuthError::Unreachable {
                step,
                detail: e.without_url().to_string(),
            })
        }
    };
    let parse = |step: &'static str| {
        move |e: serde_json::Error| OAuthError::Shape {
            step,
            detail: e.to_string(),
        }
    };

    let user: UserItem = serde_json::from_slice(&get("/user".into(), "GET /user").await?)
        .map_err(parse("GET /user"))?;

    let mut installations = Vec::new();
    for page in 1..=MAX_PAGES {
        let step = "GET /user/installations";
        let body = get(
            format!("/user/installations?per_page=100&page={page}"),
            step,
        )
        .await?;
        let p: InstallationsPage = serde_json::from_slice(&body).map_err(parse(step))?;
        let n = p.installations.len();
        installations.extend(p.installations.into_iter().map(|i| i.id));
        if n < 100 {
            break;
        }
    }
    let mut repos = BTreeSet::new();
    for id in installations {
        for page in 1..=MAX_PAGES {
            let step = "GET /user/installations/{id}/repositories";
            let body = get(
                format!("/user/installations/{id}/repositories?per_page=100&page={page}"),
                step,
            )
            .await?;
            let p: RepositoriesPage = serde_json::from_slice(&body).map_err(parse(step))?;
            let n = p.repositories.len();
            repos.extend(p.repositories.into_iter().map(|r| r.full_name));
            if n < 100 {
                break;
            }
        }
    }
    Ok(SignedIn {
        login: user.login,
        repos,
    })
}
