//! Who is looking at the status page: an operator (`STATUS_TOKEN`, as a bearer header or a
//! session made by the sign-in form) or a GitHub user signed in through the App's OAuth
//! credentials, who sees only the repositories GitHub says they can access.
//!
//! Sessions live in memory, keyed by a random id; the cookie holds that id and its HMAC under a
//! per-process key, never the token. Every comparison of a secret is constant-time. It must
//! never log a token, a session id or a CSRF token, and never trust a cookie whose signature
//! does not verify.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "ci_medic_session";
/// The cookie binding an OAuth `state` to the browser that started the sign-in.
pub const OAUTH_COOKIE: &str = "ci_medic_oauth";
/// How long a session lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// How long an OAuth sign-in may take.
pub const OAUTH_STATE_TTL: Duration = Duration::from_secs(600);
/// Sessions held at once; the oldest are dropped beyond it, so sign-ins cannot fill memory.
pub const MAX_SESSIONS: usize = 10_000;

/// What a viewer may see and do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// `STATUS_TOKEN`: every repository, the job queue, re-queueing.
    Operator,
    /// A GitHub user: the repositories of this App's installations they can access, nothing
    /// else; no actions.
    User {
        login: String,
        repos: BTreeSet<String>,
    },
}

impl Role {
    pub fn can_see(&self, repo: &str) -> bool {
        match self {
            Role::Operator => true,
            Role::User { repos, .. } => repos.contains(repo),
        }
    }

    pub fn is_operator(&self) -> bool {
        matches!(self, Role::Operator)
    }
}

/// A signed-in viewer. `csrf` is `None` for bearer requests, which carry no cookie for another
/// site to ride on.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub role: Role,
    pub csrf: Option<String>,
}

struct Session {
    role: Role,
    csrf: String,
    expires: Instant,
}

/// The in-memory session table and the process's signing key.
#[derive(Clone)]
pub struct Sessions {
    key: Arc<[u8; 32]>,
    table: Arc<Mutex<HashMap<String, Session>>>,
    oauth_states: Arc<Mutex<HashMap<String, Instant>>>,
}

/// 32 random bytes from the OS, hex-encoded.
pub fn random_hex() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the OS random source answers");
    hex::encode(b)
}

impl Sessions {
    pub fn new() -> Sessions {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source answers");
        Sessions {
            key: Arc::new(key),
            table: Arc::new(Mutex::new(HashMap::new())),
            oauth_states: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn mac(&self, purpose: &str, data: &[u8]) -> Hmac<Sha256> {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key[..]).expect("any key length");
        m.update(purpose.as_bytes());
        m.update(b"\0");
        m.update(data);
        m
    }

    /// Constant-time equality of two secrets of any length: both are MACed under the process
    /// key and the MACs compared with `verify_slice`.
    pub fn secrets_equal(&self, a: &[u8], b: &[u8]) -> bool {
        let expected = self.mac("compare", b).finalize().into_bytes();
        self.mac("compare", a).verify_slice(&expected).is_ok()
    }

    /// Starts a session and returns the cookie value (`id.signature`).
    pub fn create(&self, role: Role) -> String {
        let id = random_hex();
        let sig = hex::encode(self.mac("session", id.as_bytes()).finalize().into_bytes());
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        t.retain(|_, s| s.expires > now);
        while t.len() >= MAX_SESSIONS {
            let Some(oldest) = t
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            t.remove(&oldest);
        }
        t.insert(
            id.clone(),
            Session {
                role,
                csrf: random_hex(),
                expires: now + SESSION_TTL,
            },
        );
        format!("{id}.{sig}")
    }

    /// The session a cookie value names, when its signature verifies and it has not expired.
    pub fn lookup(&self, cookie: &str) -> Option<Viewer> {
        let (id, sig) = cookie.split_once('.')?;
        let sig = hex::decode(sig).ok()?;
        self.mac("session", id.as_bytes()).verify_slice(&sig).ok()?;
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let s = t.get(id).filter(|s| s.expires > Instant::now())?;
        Some(Viewer {
            role: s.role.clone(),
            csrf: Some(s.csrf.clone()),
        })
    }

    /// Ends the session a cookie names.
    pub fn remove(&self, cookie: &str) {
        if let Some((id, _)) = cookie.split_once('.') {
            let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
            t.remove(id);
        }
    }

    /// A fresh OAuth `state`, single-use, valid [`OAUTH_STATE_TTL`].
    pub fn new_oauth_state(&self) -> String {
        let state = random_hex();
        let mut m = self.oauth_states.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        m.retain(|_, at| now.duration_since(*at) < OAUTH_STATE_TTL);
        if m.len() < MAX_SESSIONS {
            m.insert(state.clone(), now);
        }
        state
    }

    /// Whether `state` came back to the browser that started it (`cookie`), and is fresh.
    /// Consumed either way.
    pub fn take_oauth_state(&self, state: &str, cookie: Option<&str>) -> bool {
        let mut m = self.oauth_states.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = m
            .remove(state)
            .is_some_and(|at| at.elapsed() < OAUTH_STATE_TTL);
        fresh && cookie.is_some_and(|c| self.secrets_equal(c.as_bytes(), state.as_bytes()))
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new()
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// `Set-Cookie` for a session: never readable by scripts, sent only over HTTPS (browsers treat
/// `localhost` as secure too), not on cross-site subrequests.
pub fn set_cookie(name: &str, value: &str, max_age: Duration) -> String {
    format!(
        "{name}={value}; Path=/; Max-Age={}; Secure; HttpOnly; SameSite=Lax",
        max_age.as_secs()
    )
}

/// `Set-Cookie` that deletes `name`.
pub fn clear_cookie(name: &str) -> String {
    format!("{name}=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax")
}

/// Who sent this request: a valid `Authorization: Bearer STATUS_TOKEN` first, then the
/// session cookie. `None` for everyone else (a wrong token included).
pub fn viewer(
    sessions: &Sessions,
    token: Option<&SecretString>,
    headers: &HeaderMap,
) -> Option<Viewer> {
    if let Some(auth) = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        let given = auth
            .strip_prefix("Bearer ")
            .or_else(|| auth.strip_prefix("bearer "))?;
        let token = token?;
        return sessions
            .secrets_equal(given.trim().as_bytes(), token.expose_secret().as_bytes())
            .then_some(Viewer {
                role: Role::Operator,
                csrf: None,
            });
    }
    cookie(headers, SESSION_COOKIE).and_then(|c| sessions.lookup(c))
}

/// Whether a state-changing request may go ahead: bearer requests (no cookie a third-party
/// page could make the browser send) always, session requests only with their CSRF token.
pub fn csrf_ok(sessions: &Sessions, viewer: &Viewer, given: Option<&str>) -> bool {
    match (&viewer.csrf, given) {
        (None, _) => true,
        (Some(want), Some(got)) => sessions.secrets_equal(got.as_bytes(), want.as_bytes()),
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn a_session_cookie_is_signed_and_a_forged_one_is_refused() {
        let s = Sessions::new();
        let c = s.create(Role::Operator);
        let v = s.lookup(&c).unwrap();
        assert!(v.role.is_operator());
        let (id, sig) = c.split_once('.').unwrap();
        // Another id with the same signature, or the id with another signature: refused.
        assert!(s.lookup(&format!("{}.{sig}", random_hex())).is_none());
        assert!(s.lookup(&format!("{id}.{}", "0".repeat(64))).is_none());
        assert!(s.lookup(id).is_none());
        // A cookie from another process (another key) is refused too.
        assert!(Sessions::new().lookup(&c).is_none());
        s.remove(&c);
        assert!(s.lookup(&c).is_none());
    }

    #[test]
    fn bearer_tokens_must_match_exactly() {
        let s = Sessions::new();
        let token = SecretString::from("a-long-operator-token".to_string());
        let ok = headers(&[("authorization", "Bearer a-long-operator-token")]);
        assert!(viewer(&s, Some(&token), &ok).unwrap().role.is_operator());
        for bad in [
            "Bearer a-long-operator-toke",
            "Bearer a-long-operator-tokenX",
            "Bearer ",
            "Basic a-long-operator-token",
        ] {
            let h = headers(&[("authorization", bad)]);
            assert!(viewer(&s, Some(&token), &h).is_none(), "{bad}");
        }
        // No token configured: no bearer is ever accepted.
        assert!(viewer(&s, None, &ok).is_none());
        // A wrong bearer does not fall back to the cookie.
        let c = s.create(Role::Operator);
        let h = headers(&[
            ("authorization", "Bearer wrong"),
            ("cookie", &format!("{SESSION_COOKIE}={c}")),
        ]);
        assert!(viewer(&s, Some(&token), &h).is_none());
    }

    #[test]
    fn csrf_is_needed_for_sessions_only() {
        let s = Sessions::new();
        let c = s.create(Role::Operator);
        let v = viewer(
            &s,
            None,
            &headers(&[("cookie", &format!("a=b; {SESSION_COOKIE}={c}"))]),
        )
        .unwrap();
        let token = v.csrf.clone().unwrap();
        assert!(csrf_ok(&s, &v, Some(&token)));
        assert!(!csrf_ok(&s, &v, None));
        assert!(!csrf_ok(&s, &v, Some("0123")));
        let bearer = Viewer {
            role: Role::Operator,
            csrf: None,
        };
        assert!(csrf_ok(&s, &bearer, None));
    }

    #[test]
    fn oauth_states_are_single_use_and_bound_to_the_browser() {
        let s = Sessions::new();
        let st = s.new_oauth_state();
        assert!(!s.take_oauth_state(&st, Some("other")));
        // Consumed by the failed attempt.
        assert!(!s.take_oauth_state(&st, Some(&st)));
        let st = s.new_oauth_state();
        assert!(s.take_oauth_state(&st, Some(&st)));
        assert!(!s.take_oauth_state(&st, Some(&st)));
        let st = s.new_oauth_state();
        assert!(!s.take_oauth_state(&st, None));
    }

    #[test]
    fn users_see_only_their_repositories() {
        let r = Role::User {
            login: "mona".into(),
            repos: ["octo/a".to_string()].into_iter().collect(),
        };
        assert!(r.can_see("octo/a"));
        assert!(!r.can_see("octo/b"));
        assert!(!r.is_operator());
        assert!(Role::Operator.can_see("anything/else"));
    }
}
