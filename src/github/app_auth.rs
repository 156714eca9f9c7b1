//! GitHub App authentication: the RS256 App JWT and the per-installation token cache.
//!
//! The JWT (`iss` = App id, `iat` 60 s in the past for clock drift, `exp` 9 minutes ahead — GitHub
//! allows at most 10) is exchanged for an installation token with
//! `POST /app/installations/{id}/access_tokens`. Tokens are cached per installation and re-minted
//! 5 minutes before `expires_at`; concurrent callers for one installation wait for a single mint.
//!
//! Must never: log or format a key, JWT or token (all are `SecretString`, whose `Debug` redacts),
//! read the wall clock directly (the [`Clock`] is injected so tests are deterministic).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::InstallationId;
use super::error::{GitHubError, Result};
use super::http::{Auth, Transport};

/// Where "now" comes from.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to (tests, simulations).
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Mutex::new(start))
    }

    pub fn set(&self, to: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }

    pub fn advance(&self, by: chrono::Duration) {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The App's identity: its id and RSA private key (PEM, PKCS#1 or PKCS#8).
#[derive(Clone)]
pub struct AppCredentials {
    pub app_id: u64,
    key: EncodingKey,
}

impl fmt::Debug for AppCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppCredentials")
            .field("app_id", &self.app_id)
            .field("private_key", &"[REDACTED]")
            .finish()
    }
}

/// The JWT claims GitHub reads.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AppJwtClaims {
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
}

impl AppCredentials {
    /// Parses the key once, so a bad key fails at startup rather than on the first webhook.
    pub fn new(app_id: u64, private_key_pem: &SecretString) -> Result<Self> {
        let key = EncodingKey::from_rsa_pem(private_key_pem.expose_secret().as_bytes())
            .map_err(|e| GitHubError::Auth(format!("App private key is not an RSA PEM: {e}")))?;
        Ok(Self { app_id, key })
    }

    /// The App JWT valid from `now - 60 s` to `now + 9 min`.
    pub fn app_jwt(&self, now: DateTime<Utc>) -> Result<SecretString> {
        let claims = AppJwtClaims {
            iat: now.timestamp() - 60,
            exp: now.timestamp() + 9 * 60,
            iss: self.app_id.to_string(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.key)
            .map(SecretString::from)
            .map_err(|e| GitHubError::Auth(format!("signing the App JWT: {e}")))
    }
}

/// Gives the client a token for an installation.
#[async_trait]
pub trait TokenProvider: Send + Sync + fmt::Debug {
    async fn installation_token(&self, installation: InstallationId) -> Result<SecretString>;
    /// Drops a cached token GitHub rejected (401), so the next call mints a fresh one.
    async fn invalidate(&self, installation: InstallationId);
}

/// One fixed token for every installation (a personal access token for local runs, tests).
#[derive(Debug, Clone)]
pub struct StaticToken(pub SecretString);

#[async_trait]
impl TokenProvider for StaticToken {
    async fn installation_token(&self, _: InstallationId) -> Result<SecretString> {
        Ok(self.0.clone())
    }

    async fn invalidate(&self, _: InstallationId) {}
}

#[derive(Clone)]
struct CachedToken {
    token: SecretString,
    expires_at: DateTime<Utc>,
}

type Slot = Arc<tokio::sync::Mutex<Option<CachedToken>>>;

/// Installation tokens minted from [`AppCredentials`], cached and renewed before expiry.
pub struct InstallationTokens {
    credentials: AppCredentials,
    http: Arc<Transport>,
    clock: Arc<dyn Clock>,
    refresh_margin: Duration,
    // std Mutex: held only to find the slot, never across an await. The per-installation
    // tokio Mutex is held across the mint, which is what makes it single-flight.
    slots: Mutex<HashMap<u64, Slot>>,
}

impl fmt::Debug for InstallationTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstallationTokens")
            .field("credentials", &self.credentials)
            .field("refresh_margin", &self.refresh_margin)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    #[serde(deserialize_with = "super::models::secret")]
    token: SecretString,
    expires_at: DateTime<Utc>,
}

impl InstallationTokens {
    /// Renew this long before `expires_at`.
    pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

    pub(crate) fn new(
        credentials: AppCredentials,
        http: Arc<Transport>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            credentials,
            http,
            clock,
            refresh_margin: Self::DEFAULT_REFRESH_MARGIN,
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn slot(&self, installation: InstallationId) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(installation.0).or_default().clone()
    }

    /// A token valid for at least the refresh margin, minting one if needed.
    pub async fn token(&self, installation: InstallationId) -> Result<SecretString> {
        let slot = self.slot(installation);
        let mut cached = slot.lock().await;
        let margin = chrono::Duration::from_std(self.refresh_margin).unwrap_or_default();
        if let Some(c) = cached
            .as_ref()
            .filter(|c| self.clock.now() + margin < c.expires_at)
        {
            return Ok(c.token.clone());
        }
        let fresh = self.mint(installation).await?;
        let token = fresh.token.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    async fn mint(&self, installation: InstallationId) -> Result<CachedToken> {
        let jwt = self.credentials.app_jwt(self.clock.now())?;
        let url = self.http.url(&[
            "app",
            "installations",
            &installation.0.to_string(),
            "access_tokens",
        ])?;
        // Minting twice is harmless (both tokens are valid), so this POST may be retried.
        let mut call = self.http.json_call(Method::POST, url, None);
        call.idempotent = true;
        let answer: TokenResponse = self.http.json(&call, Auth::Bearer(&jwt)).await?;
        tracing::debug!(
            installation = installation.0,
            expires_at = %answer.expires_at,
            "minted installation token"
        );
        Ok(CachedToken {
            token: answer.token,
            expires_at: answer.expires_at,
        })
    }
}

#[async_trait]
impl TokenProvider for InstallationTokens {
    async fn installation_token(&self, installation: InstallationId) -> Result<SecretString> {
        self.token(installation).await
    }

    async fn invalidate(&self, installation: InstallationId) {
        *self.slot(installation).lock().await = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    const KEY: &str = include_str!("../../fixtures/keys/test-app.pem");
    const PUB: &str = include_str!("../../fixtures/keys/test-app.pub.pem");

    #[test]
    fn jwt_is_rs256_with_backdated_iat_and_short_exp() {
        let creds = AppCredentials::new(4242, &SecretString::from(KEY)).unwrap();
        let now = Utc::now();
        let jwt = creds.app_jwt(now).unwrap();
        let mut v = Validation::new(Algorithm::RS256);
        v.set_required_spec_claims(&["exp", "iat", "iss"]);
        v.set_issuer(&["4242"]);
        let data = jsonwebtoken::decode::<AppJwtClaims>(
            jwt.expose_secret(),
            &DecodingKey::from_rsa_pem(PUB.as_bytes()).unwrap(),
            &v,
        )
        .unwrap();
        assert_eq!(data.header.alg, Algorithm::RS256);
        assert_eq!(data.claims.iat, now.timestamp() - 60);
        assert_eq!(data.claims.exp, now.timestamp() + 540);
        assert!(data.claims.exp - now.timestamp() <= 600);
        assert_eq!(data.claims.iss, "4242");
    }

    #[test]
    fn bad_key_fails_early_and_debug_redacts() {
        assert!(matches!(
            AppCredentials::new(1, &SecretString::from("not a key")),
            Err(GitHubError::Auth(_))
        ));
        let creds = AppCredentials::new(7, &SecretString::from(KEY)).unwrap();
        let shown = format!("{creds:?}");
        assert!(shown.contains("REDACTED") && !shown.contains("PRIVATE"));
    }
}
