//! Who is looking at the status page: an operator (`STATUS_TOKEN`, as a bearer header or a
//! session made by the sign-in form) or a GitHub user signed in through the App's OAuth
//! credentials, who sees only the repositories GitHub says they can access.
//!
//! Sessions and sign-in states live in the store (sled, or PostgreSQL shared by the replicas),
//! so a sign-in made on one replica is honoured by every other and survives a restart. The
//! cookie holds a random 256-bit id, never the token; the store keeps only the id's SHA-256.
//! A session lasts [`SESSION_TTL`] from sign-in (use does not extend it); a GitHub sign-in
//! must come back within [`OAUTH_STATE_TTL`]. Every comparison of a secret is constant-time.
//! It must never log a token, a session id or a CSRF token.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

use chrono::Utc;

use crate::store::StoreError;
use crate::store::shared_state::SharedState;
use crate::store::web_state::{OnceKind, StoredSession, TokenDigest};

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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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

/// The sessions and sign-in states (in the store, so every replica honours them) and this
/// process's key for comparing secrets.
#[derive(Clone)]
pub struct Sessions {
    key: Arc<[u8; 32]>,
    store: Arc<dyn SharedState>,
}

/// 16 random bytes from the OS, hex-encoded.
pub fn random_hex() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the OS random source answers");
    hex::encode(b)
}

/// A session id: 32 random bytes from the OS, hex-encoded. Guessing one is hopeless, so the
/// cookie needs no signature; the store keeps only its digest.
fn session_id() -> String {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).expect("the OS random source answers");
    hex::encode(b)
}

/// A store duration from a `std` one (all of ours are hours, far inside chrono's range).
fn ttl(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

impl Sessions {
    pub fn new(store: Arc<dyn SharedState>) -> Sessions {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source answers");
        Sessions {
            key: Arc::new(key),
            store,
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

    /// Starts a session, stored before it returns, and returns the cookie value (the id).
    pub async fn create(&self, role: Role) -> Result<String, StoreError> {
        let id = session_id();
        let now = Utc::now();
        let session = StoredSession {
            role,
            csrf: random_hex(),
            expires: now + ttl(SESSION_TTL),
        };
        self.store
            .put_session(&TokenDigest::of(&id), &session, now, MAX_SESSIONS)
            .await?;
        Ok(id)
    }

    /// The session a cookie value names, when it exists on any replica and has not expired.
    pub async fn lookup(&self, cookie: &str) -> Result<Option<Viewer>, StoreError> {
        // Not an id this code makes: no need to ask the store.
        if cookie.len() != 64 || !cookie.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let s = self
            .store
            .session(&TokenDigest::of(cookie), Utc::now())
            .await?;
        Ok(s.map(|s| Viewer {
            role: s.role,
            csrf: Some(s.csrf),
        }))
    }

    /// Ends the session a cookie names.
    pub async fn remove(&self, cookie: &str) -> Result<(), StoreError> {
        self.store.end_session(&TokenDigest::of(cookie)).await
    }

    /// A fresh OAuth `state`, single-use, valid [`OAUTH_STATE_TTL`], stored before it returns.
    pub async fn new_oauth_state(&self) -> Result<String, StoreError> {
        let state = random_hex();
        let now = Utc::now();
        self.store
            .put_once(
                OnceKind::SignIn,
                &TokenDigest::of(&state),
                now,
                now + ttl(OAUTH_STATE_TTL),
                MAX_SESSIONS,
            )
            .await?;
        Ok(state)
    }

    /// Whether `state` came back to the browser that started it (`cookie`), and is fresh.
    /// Consumed either way.
    pub async fn take_oauth_state(
        &self,
        state: &str,
        cookie: Option<&str>,
    ) -> Result<bool, StoreError> {
        let fresh = self
            .store
            .take_once(OnceKind::SignIn, &TokenDigest::of(state), Utc::now())
            .await?;
        Ok(fresh && cookie.is_some_and(|c| self.secrets_equal(c.as_bytes(), state.as_bytes())))
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

/// An operator's bearer request: `Some(answer)` when the request carries an `Authorization`
/// header (the viewer when it is `Bearer STATUS_TOKEN`, `None` for any other), `None` when it
/// carries none.
pub fn bearer(
    sessions: &Sessions,
    token: Option<&SecretString>,
    headers: &HeaderMap,
) -> Option<Option<Viewer>> {
    let auth = headers
        .get(axum::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default())?;
    let Some(given) = auth
        .strip_prefix("Bearer ")
        .or_else(|| auth.strip_prefix("bearer "))
    else {
        return Some(None);
    };
    let Some(token) = token else {
        return Some(None);
    };
    Some(
        sessions
            .secrets_equal(given.trim().as_bytes(), token.expose_secret().as_bytes())
            .then_some(Viewer {
                role: Role::Operator,
                csrf: None,
            }),
    )
}

/// Who sent this request: a valid `Authorization: Bearer STATUS_TOKEN` first, then the
/// session cookie, whichever replica made it. `None` for everyone else (a wrong token
/// included); an error when the store cannot say.
pub async fn viewer(
    sessions: &Sessions,
    token: Option<&SecretString>,
    headers: &HeaderMap,
) -> Result<Option<Viewer>, StoreError> {
    if let Some(answer) = bearer(sessions, token, headers) {
        return Ok(answer);
    }
    match cookie(headers, SESSION_COOKIE) {
        Some(c) => sessions.lookup(c).await,
        None => Ok(None),
    }
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

    /// Two replicas' session tables on one sled store (the PostgreSQL side of the store
    /// operations is in `tests/store_backends.rs`).
    fn two_replicas() -> (Sessions, Sessions, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(dir.path()).unwrap();
        let shared: Arc<dyn SharedState> =
            Arc::new(crate::store::shared_state::SledShared::open(&store).unwrap());
        (Sessions::new(shared.clone()), Sessions::new(shared), dir)
    }

    #[tokio::test]
    async fn a_session_made_by_one_replica_is_honoured_by_another_until_signed_out() {
        let (a, b, _dir) = two_replicas();
        let c = a.create(Role::Operator).await.unwrap();
        let v = b.lookup(&c).await.unwrap().unwrap();
        assert!(v.role.is_operator());
        assert_eq!(v.csrf, a.lookup(&c).await.unwrap().unwrap().csrf);
        // Another id, or something that is not an id: no session.
        assert!(b.lookup(&super::session_id()).await.unwrap().is_none());
        assert!(b.lookup(&c[..32]).await.unwrap().is_none());
        assert!(b.lookup(&format!("{c}.x")).await.unwrap().is_none());
        b.remove(&c).await.unwrap();
        assert!(a.lookup(&c).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn bearer_tokens_must_match_exactly() {
        let (s, _, _dir) = two_replicas();
        let token = SecretString::from("a-long-operator-token".to_string());
        let ok = headers(&[("authorization", "Bearer a-long-operator-token")]);
        let v = viewer(&s, Some(&token), &ok).await.unwrap().unwrap();
        assert!(v.role.is_operator());
        for bad in [
            "Bearer a-long-operator-toke",
            "Bearer a-long-operator-tokenX",
            "Bearer ",
            "Basic a-long-operator-token",
        ] {
            let h = headers(&[("authorization", bad)]);
            assert!(
                viewer(&s, Some(&token), &h).await.unwrap().is_none(),
                "{bad}"
            );
        }
        // No token configured: no bearer is ever accepted.
        assert!(viewer(&s, None, &ok).await.unwrap().is_none());
        // A wrong bearer does not fall back to the cookie.
        let c = s.create(Role::Operator).await.unwrap();
        let h = headers(&[
            ("authorization", "Bearer wrong"),
            ("cookie", &format!("{SESSION_COOKIE}={c}")),
        ]);
        assert!(viewer(&s, Some(&token), &h).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn csrf_is_needed_for_sessions_only() {
        let (s, _, _dir) = two_replicas();
        let c = s.create(Role::Operator).await.unwrap();
        let v = viewer(
            &s,
            None,
            &headers(&[("cookie", &format!("a=b; {SESSION_COOKIE}={c}"))]),
        )
        .await
        .unwrap()
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

    #[tokio::test]
    async fn oauth_states_are_single_use_bound_to_the_browser_and_taken_anywhere() {
        let (a, b, _dir) = two_replicas();
        let st = a.new_oauth_state().await.unwrap();
        assert!(!b.take_oauth_state(&st, Some("other")).await.unwrap());
        // Consumed by the failed attempt.
        assert!(!b.take_oauth_state(&st, Some(&st)).await.unwrap());
        let st = a.new_oauth_state().await.unwrap();
        assert!(b.take_oauth_state(&st, Some(&st)).await.unwrap());
        assert!(!a.take_oauth_state(&st, Some(&st)).await.unwrap());
        let st = a.new_oauth_state().await.unwrap();
        assert!(!b.take_oauth_state(&st, None).await.unwrap());
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
