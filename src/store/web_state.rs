//! What the browser-facing flows keep between two requests, so that the second may reach any
//! replica: the one-time `state` tokens of the setup flow and of the status page's GitHub
//! sign-in, and the status page's sessions. The operations are on
//! [`super::shared_state::SharedState`]; this file holds their types and the sled side.
//!
//! The store never sees a token itself, only its SHA-256 ([`TokenDigest`]): what the database
//! holds cannot be replayed as a cookie or a callback. It must never log a token or a digest,
//! and decides nothing about who may see what (`status::auth` does).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::StoreError;
use crate::status::auth::Role;

/// What a one-time token is for; each kind has its own bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnceKind {
    /// `GET /setup` handed it out; `GET /setup/callback` takes it.
    Setup,
    /// `GET /status/oauth/start` handed it out; `GET /status/oauth/callback` takes it.
    SignIn,
}

impl OnceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OnceKind::Setup => "setup",
            OnceKind::SignIn => "sign_in",
        }
    }
}

/// The SHA-256 of a secret token: the only form in which a token reaches the store. Made only
/// by hashing, so a clear token cannot be stored by mistake.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    pub fn of(token: &str) -> TokenDigest {
        TokenDigest(Sha256::digest(token.as_bytes()).into())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenDigest([redacted])")
    }
}

/// A status page session as stored, under the digest of the id its cookie holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSession {
    pub role: Role,
    /// The token its forms must carry.
    pub csrf: String,
    /// Fixed when it was made: a session is not extended by use.
    pub expires: DateTime<Utc>,
}

/// A one-time token as sled keeps it.
#[derive(Serialize, Deserialize)]
struct OnceRecord {
    created: DateTime<Utc>,
    expires: DateTime<Utc>,
}

fn once_key(kind: OnceKind, token: &TokenDigest) -> Vec<u8> {
    let mut k = once_prefix(kind);
    k.extend_from_slice(token.as_bytes());
    k
}

fn once_prefix(kind: OnceKind) -> Vec<u8> {
    let mut k = kind.as_str().as_bytes().to_vec();
    k.push(b'/');
    k
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("a record of times and strings serialises")
}

/// Inserts `key → value` among the entries of `tree` under `prefix`, after removing those
/// `live` says are gone (expired, or not a record this code wrote) and, beyond `cap - 1`
/// live ones, those it ranks lowest. Durable before it returns.
fn bounded_insert(
    tree: &sled::Tree,
    prefix: &[u8],
    live: impl Fn(&[u8]) -> Option<DateTime<Utc>>,
    cap: usize,
    key: &[u8],
    value: Vec<u8>,
) -> Result<(), StoreError> {
    let mut kept: Vec<(DateTime<Utc>, sled::IVec)> = Vec::new();
    for kv in tree.scan_prefix(prefix) {
        let (k, v) = kv?;
        match live(&v) {
            Some(rank) => kept.push((rank, k)),
            None => {
                tree.remove(&k)?;
            }
        }
    }
    kept.sort();
    let excess = (kept.len() + 1).saturating_sub(cap.max(1));
    for (_, k) in kept.into_iter().take(excess) {
        tree.remove(k)?;
    }
    tree.insert(key, value)?;
    tree.flush()?;
    Ok(())
}

/// Keeps `token` until `expires`, with at most `cap` tokens of its kind (the oldest go first;
/// expired ones go now). Durable before it returns.
pub(super) fn sled_put_once(
    tree: &sled::Tree,
    kind: OnceKind,
    token: &TokenDigest,
    now: DateTime<Utc>,
    expires: DateTime<Utc>,
    cap: usize,
) -> Result<(), StoreError> {
    let live = |v: &[u8]| {
        serde_json::from_slice::<OnceRecord>(v)
            .ok()
            .filter(|r| r.expires > now)
            .map(|r| r.created)
    };
    let record = encode(&OnceRecord {
        created: now,
        expires,
    });
    bounded_insert(
        tree,
        &once_prefix(kind),
        live,
        cap,
        &once_key(kind, token),
        record,
    )
}

/// Removes `token`; whether it was there and had not expired at `now`.
pub(super) fn sled_take_once(
    tree: &sled::Tree,
    kind: OnceKind,
    token: &TokenDigest,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let Some(v) = tree.remove(once_key(kind, token))? else {
        return Ok(false);
    };
    tree.flush()?;
    Ok(serde_json::from_slice::<OnceRecord>(&v).is_ok_and(|r| r.expires > now))
}

/// Stores a session, with at most `cap` live ones (the soonest to expire go first; expired
/// ones go now). Durable before it returns.
pub(super) fn sled_put_session(
    tree: &sled::Tree,
    id: &TokenDigest,
    session: &StoredSession,
    now: DateTime<Utc>,
    cap: usize,
) -> Result<(), StoreError> {
    let live = |v: &[u8]| {
        serde_json::from_slice::<StoredSession>(v)
            .ok()
            .filter(|s| s.expires > now)
            .map(|s| s.expires)
    };
    bounded_insert(tree, b"", live, cap, id.as_bytes(), encode(session))
}

/// The session stored under `id`, unless it expired by `now`.
pub(super) fn sled_session(
    tree: &sled::Tree,
    id: &TokenDigest,
    now: DateTime<Utc>,
) -> Result<Option<StoredSession>, StoreError> {
    let Some(v) = tree.get(id.as_bytes())? else {
        return Ok(None);
    };
    let s: StoredSession = super::decode(b"status session", &v)?;
    Ok((s.expires > now).then_some(s))
}

pub(super) fn sled_end_session(tree: &sled::Tree, id: &TokenDigest) -> Result<(), StoreError> {
    tree.remove(id.as_bytes())?;
    tree.flush()?;
    Ok(())
}
